"""What a person reads about one memory of this context besides the memory itself: what
happened to it (:func:`memory_history`, from the pure rows of
:mod:`swarmmem.core.maintenance.history`) and what its evidence says now
(:func:`memory_evidence`). Both read through the context's scopes: a memory or proposal of
another scope is not found."""

from __future__ import annotations

from swarmmem.core.maintenance import history
from swarmmem.core.maintenance.evidence import CitedNow, FilesStatus, StatusOf, evidence_freshness
from swarmmem.core.maintenance.management import ManagementService, concerns
from swarmmem.core.maintenance.scoped import ScopedView, history_of
from swarmmem.core.maintenance.sessions import session_timeline
from swarmmem.core.model.errors import NotFoundError
from swarmmem.core.model.records import MemoryProposal, MemoryRecord
from swarmmem.core.model.reports import EvidenceFreshness, MemoryHistoryReport
from swarmmem.ports.files import RunHistory, RunLog

USAGE_READ = 500
"""The most recall usage rows naming a memory its history reads (the newest)."""


def _proposals_about(scoped: ScopedView, memory_id: str) -> list[MemoryProposal]:
    """The proposals of this context that propose, target or relate ``memory_id``."""
    store_history = history_of(scoped)
    found = (
        store_history.proposals_mentioning(memory_id)
        if store_history is not None
        else scoped.list_proposals()
    )
    return [p for p in found if concerns(p, memory_id)]


def memory_history(
    memory_id: str,
    *,
    management: ManagementService,
    run_log: RunLog,
    limit: int = 50,
    sessions: int = 50,
) -> MemoryHistoryReport:
    """The chain of memories ``memory_id`` replaced and that replaced it, the proposals about
    it and their decisions, the recalls that returned it (the newest ``limit``) and its
    injections in the newest ``sessions`` run logs."""
    record = management.get(memory_id)
    scoped = ScopedView(management.store, management.allowed_scopes)

    def get(other: str) -> MemoryRecord | None:
        try:
            return management.get(other)
        except NotFoundError:
            return None

    store_history = history_of(scoped)
    if store_history is not None:  # the newest usage rows only (a popular memory)
        usage = store_history.recall_usage_mentioning(record.id, USAGE_READ)
    else:
        usage = scoped.list_recall_usage()
    recalls = history.recall_rows(usage, record.id)
    runs = run_log.runs()[:sessions] if isinstance(run_log, RunHistory) else []
    timelines = ((run, session_timeline(run, run_log.read(run)).events) for run in runs)
    injections = history.injection_rows(timelines, record.id)
    return MemoryHistoryReport(
        memory_id=record.id,
        limit=limit,
        chain=history.supersede_chain(record, get, management.state_of),
        decisions=history.decision_rows(_proposals_about(scoped, record.id)),
        recall_count=len(recalls),
        recalls_read=len(usage),
        recalls=recalls[:limit],
        injection_count=len(injections),
        injections=injections[:limit],
        sessions_read=len(runs),
    )


def memory_evidence(
    memory_id: str,
    *,
    management: ManagementService,
    status_of: StatusOf,
    files_status: FilesStatus,
    cited_now: CitedNow | None,
) -> EvidenceFreshness:
    """What the evidence of ``memory_id`` says now: its status as recall reads it, each
    evidence ref of the proposals about it (the refs a person gave when approving it, else
    its source) with the status of the file it names, and each fingerprinted file's status."""
    record = management.get(memory_id)
    scoped = ScopedView(management.store, management.allowed_scopes)
    refs = [ref for p in _proposals_about(scoped, record.id) for ref in p.evidence_refs]
    edited = record.metadata.get("evidenceRefs")
    if isinstance(edited, list):  # a person gave it other refs when approving it
        refs = [ref for ref in edited if isinstance(ref, str)]
    if not refs and record.source.locator:
        refs = [record.source.locator]
    return evidence_freshness(
        record, refs, status_of=status_of, files_status=files_status, cited_now=cited_now
    )

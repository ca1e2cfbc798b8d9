"""The :class:`Memory` facade: each call checks that memory is enabled and hands over to a use
case of :mod:`swarmmem.core` built by the composition root (:mod:`swarmmem.bootstrap`)."""

from __future__ import annotations

import builtins
import json
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import attrs

from swarmmem.bootstrap import Runtime, migration_target, postgres_rls
from swarmmem.core.config import MemoryConfig
from swarmmem.core.learning.rewards import VerdictResult
from swarmmem.core.maintenance import history as memory_history
from swarmmem.core.maintenance import sessions as session_logs
from swarmmem.core.maintenance.consolidate import consolidation_proposals
from swarmmem.core.maintenance.evidence import evidence_freshness, verification_proposals
from swarmmem.core.maintenance.management import MemoryQuery, concerns
from swarmmem.core.maintenance.reports import parse_limit
from swarmmem.core.maintenance.scoped import history_of
from swarmmem.core.model.errors import (
    ConfigError,
    ConflictError,
    MemoryDisabledError,
    NotFoundError,
    StorageError,
)
from swarmmem.core.model.records import (
    Anchor,
    AppliedChange,
    MemoryProposal,
    MemoryRecord,
    MemoryScope,
    RecallBundle,
)
from swarmmem.core.model.reports import (
    CompactionReport,
    ConsolidationResult,
    EmbeddingRebuild,
    EvidenceFreshness,
    EvidenceReport,
    ForgetResult,
    MemoryDetails,
    MemoryHistoryReport,
    PendingReport,
    ProposalDetails,
    RecallLogReport,
    Reflection,
    ReviewQueue,
    SessionList,
    SessionTimeline,
    StaleReport,
    UndoResult,
    ValueLogReport,
)
from swarmmem.core.recall.session import SessionHooks
from swarmmem.core.writes.importing import ImportResult
from swarmmem.hooks.instructions import PROPOSE_LINE
from swarmmem.ports.evidence import EvidenceStore
from swarmmem.ports.files import RunHistory
from swarmmem.ports.storage import AuditChain, StorageProvider
from swarmmem.project import git_root, linked_worktrees
from swarmmem.registry import store_traits
from swarmmem.results import DISABLED_MESSAGE

__all__ = ["DISABLED_MESSAGE", "ImportResult", "Memory"]

USAGE_READ = 500
"""The most recall usage rows naming a memory its history reads (the newest)."""
LEGACY_JSONL = ("memories.jsonl", "proposals.jsonl", "outcome-events.jsonl")
"""The reference JSONL files :meth:`Memory.status` looks for in the storage directory."""


class Memory:
    """Open it with :func:`swarmmem.open`; scopes come from the context, never the caller."""

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime
        self._reflected = False

    # ------------------------------------------------------------- the wiring
    root = property(lambda self: self._rt.root, doc="The project root.")
    config = property(lambda self: self._rt.config, doc="The resolved ``memory`` section.")
    context = property(lambda self: self._rt.context, doc="The session context.")
    clock = property(lambda self: self._rt.clock, doc="The clock.")
    storage_dir = property(lambda self: self._rt.storage_dir, doc="The memory directory.")
    runtime = property(lambda self: self._rt, doc="The composition root (adapters, settings).")

    enabled = property(lambda self: bool(self._rt.config["enabled"]), doc="Memory is on.")

    @property
    def settings(self) -> MemoryConfig:
        """The typed configuration tree (the same values as :attr:`config`)."""
        return self._rt.settings

    def require_enabled(self) -> None:
        """Raise :class:`MemoryDisabledError` unless memory is enabled."""
        if not self.enabled:
            raise MemoryDisabledError(DISABLED_MESSAGE)

    @property
    def store(self) -> StorageProvider:
        """The storage provider, opened on first use."""
        return self._rt.store

    @property
    def read_only(self) -> bool:
        """The store was opened for reading only (this process may not write it): reads work,
        every write fails saying so."""
        return bool(self._rt.store.read_only)

    @property
    def evidence(self) -> EvidenceStore:
        """The evidence cache: ``add(text, source)`` returns a ref proposals may cite."""
        return self._ready(startup=False).evidence

    def _ready(self, *, startup: bool = True) -> Runtime:
        """The runtime of an enabled memory (the first agent call regenerates lessons once)."""
        self.require_enabled()
        if startup and not self._reflected:
            self._reflected = True
            self._rt.reflection.refresh()
        return self._rt

    # ------------------------------------------------------------------ recall
    def recall(
        self,
        query: str,
        task: str | None = None,
        kinds: Sequence[str] | None = None,
        max_items: int | None = None,
        token_budget: int | None = None,
        mode: str = "manual",
        profile: str | None = None,
        *,
        scopes: Sequence[MemoryScope] | None = None,
        include_low_q: bool = False,
    ) -> RecallBundle:
        """Recall memories relevant to ``query`` within this context's scopes."""
        service = self._ready().recall
        request = service.build_request(
            query,
            task=task,
            kinds=kinds,
            max_items=max_items,
            token_budget=token_budget,
            mode=mode,
            profile=profile,
            scopes=scopes,
            include_low_q=include_low_q,
        )
        return service.run(request)

    def inject(
        self,
        *,
        agent_task: str | None = None,
        user_goal: str | None = None,
        messages: Sequence[str] = (),
        project: str | None = None,
        current_plan: str | None = None,
    ) -> RecallBundle | None:
        """The recall bundle to inject before an agent call, or ``None`` when skipped."""
        if not self.enabled:
            return None
        return self._ready().injection.inject(
            agent_task=agent_task,
            user_goal=user_goal,
            messages=messages,
            project=project,
            current_plan=current_plan,
        )

    def inject_blocks(
        self,
        *,
        agent_task: str | None = None,
        user_goal: str | None = None,
        messages: Sequence[str] = (),
        project: str | None = None,
        current_plan: str | None = None,
    ) -> list[str]:
        """The recall block of :meth:`inject`, then lessons when they fit the injection budget."""
        bundle = self.inject(
            agent_task=agent_task,
            user_goal=user_goal,
            messages=messages,
            project=project,
            current_plan=current_plan,
        )
        return self._rt.injection.blocks(bundle, messages) if self.enabled else []

    # ------------------------------------------------------------ agent hosts
    @property
    def session_hooks(self) -> SessionHooks:
        """The use cases behind an agent host's hooks in this context: the session brief, the
        prompt's injection and filing the agent's proposals (see
        :mod:`swarmmem.core.recall.session`)."""
        rt = self._ready(startup=False)
        # each service is built when a hook first needs it (a brief never loads the writes)
        return SessionHooks(
            injection=lambda: rt.injection,
            brief_settings=rt.settings.recall.session_brief,
            suppression_threshold=rt.settings.learning.suppression_threshold,
            records=lambda limit: self.list(limit=limit),
            refresh_lessons=lambda: rt.reflection.refresh(),
            lessons=lambda: rt.reflection.block(),
            ingest=lambda text: rt.writes.ingest_task_output(text),
            redact=rt.secrets.redact,
            now=rt.now,
            propose_line=PROPOSE_LINE,
        )

    def session_state(self, session_id: str) -> AbstractContextManager[dict[str, Any]]:
        """The hook state of an agent session (a dict, written back when the block ends
        without an error), held under the session's lock."""
        return self._rt.hook_state(session_id).update()

    def log_session(self, session_id: str, event: Mapping[str, Any]) -> None:
        """Append ``event`` to the session's run log (its ``error``, if any, redacted)."""
        line = dict(event)
        if "error" in line:
            line["error"] = self._rt.secrets.redact(line["error"])
        self._rt.run_log.append(session_id, line, self._rt.now())

    def prepare_writes(self) -> None:
        """Start loading what a write needs (the embedder, when embeddings are on)."""
        if self.enabled:
            self._rt.write_dense(warm=True)

    def warm_up(self) -> None:
        """Load what the first recall would: the embedding model when embeddings are on."""
        if self.enabled and self._rt.settings.embeddings.enabled:
            parts = self._rt.dense_parts()
            if parts is not None:
                parts.embedder.embed_batch(["warm up"])

    # ------------------------------------------------------------------ writes
    def propose(
        self,
        *,
        operation: str,
        rationale: str,
        kind: str | None = None,
        text: str | None = None,
        evidence_refs: Sequence[str] | None = None,
        target_memory_id: str | None = None,
        related_memory_ids: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        confidence: float | None = None,
    ) -> MemoryProposal:
        """Propose a memory change (pending until a curator decides)."""
        return self._ready().writes.propose(
            operation=operation,
            rationale=rationale,
            kind=kind,
            text=text,
            evidence_refs=evidence_refs,
            target_memory_id=target_memory_id,
            related_memory_ids=related_memory_ids,
            tags=tags,
            confidence=confidence,
        )

    def curate(
        self,
        proposal_id: str,
        decision: str,
        *,
        reason: str | None = None,
        patch: Mapping[str, Any] | None = None,
        text: str | None = None,
        kind: str | None = None,
        tags: Sequence[str] | None = None,
        evidence_refs: Sequence[str] | None = None,
        reviewer: str = "curator_agent",
    ) -> AppliedChange:
        """Apply a curator decision to a pending proposal (trusted path); ``text``, ``kind``
        and ``tags`` rephrase an ``add`` or ``update`` (validated as durable memory), and
        ``evidence_refs`` replace its evidence (checked as a proposal's are).
        ``reviewer`` says who decided: ``"user"`` for a person (the CLI's ``curate`` and
        ``review``, the web viewer), ``"curator_agent"`` (the default) for an agent."""
        return self._ready().writes.curate(
            proposal_id,
            decision,
            reason=reason,
            patch=patch,
            text=text,
            kind=kind,
            tags=tags,
            evidence_refs=evidence_refs,
            reviewer=reviewer,
        )

    def refile(self, original: MemoryProposal, rationale: str) -> MemoryProposal:
        """A pending copy of ``original`` (same operation, kind, text, tags, confidence,
        evidence, target and related memories, and proposer) with ``rationale``, left for a
        person (never decided by the curation policy); ``original`` then names the copy
        (``metadata.undoneBy``), so its decision is not undone twice."""
        record = original.proposed_record
        related = original.related_memory_ids
        writes = self._ready().writes
        copy = writes.propose(
            auto_decide=False,
            proposed_by=original.proposed_by,
            operation=original.operation,
            kind=record.kind if record is not None else None,
            text=record.text if record is not None else None,
            rationale=rationale[:2000],
            evidence_refs=builtins.list(original.evidence_refs),
            target_memory_id=original.target_memory_id,
            related_memory_ids=builtins.list(related) if related is not None else None,
            tags=builtins.list(record.tags) if record is not None and record.tags else None,
            confidence=record.confidence if record is not None else None,
        )
        current = writes.store.get_proposal(original.id) or original
        undone = {**current.metadata, "undoneBy": copy.id, "undoneAt": self._rt.now()}
        writes.store.update_proposal(attrs.evolve(current, metadata=undone))
        return copy

    def evidence_status(self, refs: Sequence[str]) -> str:
        """Whether evidence ``refs`` hold in the project now: ``verified`` or the problems
        (``unchecked`` when evidence checks are off, ``none`` without refs)."""
        if not refs:
            return "none"
        rt = self._ready(startup=False)
        if not rt.config["evidence"]["verify"]:
            return "unchecked"
        problems = rt.sources.check(builtins.list(refs))
        return "verified" if not problems else "; ".join(problems)

    def undo_decision(self, proposal_id: str, *, reason: str | None = None) -> UndoResult:
        """Undo the decision on ``proposal_id`` (audited): an ``add`` approval forgets the
        memory it wrote; then, for it or a rejection, a pending copy of the proposal is filed
        for a new decision, under its first proposer. Other decisions cannot be undone this way,
        nor a decision twice (a :class:`ConflictError` says so): forgetting their result would
        not restore what they changed."""
        prop = self._ready(startup=False).writes.store.get_proposal(proposal_id)
        scoped = self._rt.scoped_store.get_proposal(proposal_id)
        if prop is None or scoped is None:
            raise NotFoundError(f"proposal {proposal_id} was not found")
        summary = prop.metadata.get("curatorDecision")
        action = summary.get("action") if isinstance(summary, Mapping) else None
        if prop.status == "pending":
            raise ConflictError(f"proposal {proposal_id} is still pending: nothing to undo")
        refiled = prop.metadata.get("undoneBy")
        if isinstance(refiled, str):
            raise ConflictError(
                f"the {action or prop.status} decision on {proposal_id} was already undone: "
                f"the proposal was filed again as {refiled}; decide that one"
            )
        forgotten = None
        if prop.status == "applied" and action == "add":
            memory_id = summary.get("memoryId") if isinstance(summary, Mapping) else None
            if isinstance(memory_id, str) and self.get(memory_id).active:
                why = reason or f"undone: the add decision on {proposal_id}"
                self.forget(memory_id, reason=why)
                forgotten = memory_id
        elif prop.status != "rejected":
            raise ConflictError(
                f"the {action or prop.status} decision on {proposal_id} cannot be undone; only "
                "add approvals and rejections can"
            )
        copy = self.refile(
            prop, f"re-filed by undo of {action or prop.status} of {prop.id}: {prop.rationale}"
        )
        return UndoResult(
            proposal_id=proposal_id,
            forgotten_memory_id=forgotten,
            refiled_proposal_id=copy.id,
            refiled_status=copy.status,
        )

    def record_outcome(
        self,
        *,
        outcome: str,
        memory_id: str | None = None,
        question: str | None = None,
        correction: str | None = None,
        anchors: Sequence[Mapping[str, Any] | Anchor] | None = None,
        event_id: str | None = None,
    ) -> dict[str, Any]:
        """Report a memory (or question) useful, a dead end or corrected; lessons follow."""
        result = self._ready().writes.record_outcome(
            outcome=outcome,
            memory_id=memory_id,
            question=question,
            correction=correction,
            anchors=anchors,
            event_id=event_id,
        )
        return {**result, **self._rt.reflection.refresh().to_json()}

    def import_records(self, records: Iterable[Mapping[str, Any]]) -> ImportResult:
        """Trusted bulk write of reference-shaped records in one transaction (refusals listed)."""
        return self._ready(startup=False).writes.import_records(records)

    def rebuild_embedding_index(
        self, progress: Callable[[int, int], None] | None = None, batch_size: int = 256
    ) -> EmbeddingRebuild:
        """Re-embed every active durable memory (the model version advances if all made it),
        ``batch_size`` records per embedder call."""
        rt = self._ready(startup=False)
        rt.reset_dense()
        return rt.embeddings.rebuild(progress, batch_size)

    # ------------------------------------------------------------- management
    def list(
        self,
        kind: str | None = None,
        scope: str | None = None,
        tag: str | None = None,
        file: str | None = None,
        created_since: str | None = None,
        updated_since: str | None = None,
        state: str = "active",
        limit: int = 50,
        offset: int = 0,
    ) -> builtins.list[MemoryRecord]:
        """This context's memories in ``state``, filtered, newest update first (paged)."""
        q = MemoryQuery(kind, scope, tag, file, created_since, updated_since, state, limit, offset)
        return self._ready(startup=False).management.list(q)

    def get(self, memory_id: str) -> MemoryRecord:
        """One memory of this context in any state (NotFoundError for any other id)."""
        return self._ready(startup=False).management.get(memory_id)

    def state_of(self, record: MemoryRecord) -> str:
        """The state of ``record`` now: ``active``, ``suppressed``, ``superseded``,
        ``deleted`` or ``expired``."""
        return str(self._ready(startup=False).management.state_of(record))

    def freshness_of(self, record: MemoryRecord) -> str:
        """What the files ``record`` cites say now: ``fresh``, ``changed``, ``missing`` or
        ``unverified`` (no fingerprint), as recall items say it."""
        return self._ready(startup=False).evidence_status(record.metadata)

    def proposals(self, status: str | None = "pending") -> builtins.list[MemoryProposal]:
        """This context's proposals in ``status`` (every status for ``None``), oldest first:
        the scoped view :meth:`pending` reports from."""
        return builtins.list(self._ready(startup=False).scoped_store.list_proposals(status))

    def proposal(self, proposal_id: str) -> MemoryProposal:
        """One proposal of this context in any status (NotFoundError for any other id)."""
        found = self._ready(startup=False).scoped_store.get_proposal(proposal_id)
        if found is None:
            raise NotFoundError(f"proposal {proposal_id} was not found")
        return found

    def has_memories(self) -> bool:
        """True when the configured store already exists and holds records of this context
        (another repository's records in a shared store do not count); nothing is created."""
        if not self._rt.store_exists:
            return False
        return any(True for _ in self._rt.scoped_store.iter_all_records())

    def export_jsonl(self, parent: Path) -> dict[str, Any]:
        """Write this context's memories, proposals and outcomes to ``parent/export/*.jsonl``
        (atomic): the counts written, and ``unreadable`` (the rows that could not be read)."""
        # every provider keeps the ``load_report`` the storage port describes
        store: Any = self._ready(startup=False).scoped_store
        seen = len(store.load_report)
        counts = self._rt.export_rows(store, parent)
        unreadable = [row.get("id") or row.get("line") for row in store.load_report[seen:]]
        return {**counts, "unreadable": unreadable}

    def import_jsonl(
        self, source: Path, progress: Callable[[int, int], None] | None = None
    ) -> dict[str, Any]:
        """Import ``memories.jsonl``, ``proposals.jsonl`` and ``outcome-events.jsonl`` from
        ``source`` (last row wins per id); rows outside this context's writable scopes are
        refused and listed in the report."""
        return self._ready(startup=False).import_rows(source, progress=progress)

    def merge_worktree_stores(self) -> dict[str, Any]:
        """Merge the stores linked worktrees kept of their own before every worktree shared
        the main worktree's (``swarmmem migrate --worktrees``): each
        ``<worktree>/.swarm/memory/memory.db`` git's records lead to is imported as
        :meth:`import_jsonl` imports an export (this context's scopes only, secrets refused),
        then renamed ``memory.db.merged`` so it is never offered again; a store with refused
        rows is left in place and its report says why."""
        rt = self._ready(startup=False)
        top = rt.main_worktree or git_root(rt.root)
        if top is None:
            raise ConfigError(f"{rt.root} is not in a git repository: it has no worktrees")
        own = rt.sqlite_path.resolve() if store_traits(rt.provider).database_file else None
        merged: builtins.list[dict[str, Any]] = []
        for worktree in linked_worktrees(Path(top)):
            db = worktree / ".swarm" / "memory" / "memory.db"
            if db.is_symlink() or not db.is_file() or db.resolve() == own:
                continue
            store = rt.open_store("sqlite", path=db)
            try:
                with tempfile.TemporaryDirectory() as folder:
                    rt.export_rows(store, folder)
                    report = self.import_jsonl(Path(folder) / "export")
            finally:
                store.close()
            done = report["invalidCount"] == 0
            if done:
                for suffix in ("", "-wal", "-shm"):
                    old = db.with_name(db.name + suffix)
                    if old.exists() and not old.is_symlink():
                        old.rename(old.with_name(f"memory.db.merged{suffix}"))
            merged.append({"worktree": str(worktree), "store": str(db), "merged": done, **report})
        return {"main_worktree": str(top), "stores": merged}

    def rescope(self, from_repo_id: str, *, apply: bool, force: bool = False) -> dict[str, Any]:
        """Adopt the memories of the earlier repository identity ``from_repo_id`` into this
        repository (one audited transaction; a dry run unless ``apply``; see
        :meth:`~swarmmem.core.maintenance.rescope.RescopeService.rescope`)."""
        return self._ready(startup=False).rescoping.rescope(from_repo_id, apply=apply, force=force)

    def evidence_freshness(self, memory_id: str) -> EvidenceFreshness:
        """What the evidence of a memory of this context says now: its status as recall reads
        it, each evidence ref of the proposals that concern it (else its source) with the
        status of the file it names, and each fingerprinted file's status."""
        rt = self._ready(startup=False)
        record = rt.management.get(memory_id)
        history = history_of(rt.scoped_store)
        found = (
            history.proposals_mentioning(record.id)
            if history is not None
            else rt.scoped_store.list_proposals()
        )
        edited = record.metadata.get("evidenceRefs")
        refs = [ref for p in found if concerns(p, record.id) for ref in p.evidence_refs]
        if isinstance(edited, list):  # a person gave it other refs when approving it
            refs = [ref for ref in edited if isinstance(ref, str)]
        if not refs and record.source.locator:
            refs = [record.source.locator]
        return evidence_freshness(
            record,
            refs,
            status_of=rt.evidence_status,
            files_status=rt.sources.status,
            cited_now=rt.evidence_cited,
        )

    def inspect(self, memory_id: str) -> MemoryDetails | ProposalDetails:
        """A memory with provenance, outcomes, Q history, relations and its audit events; for
        a proposal id (``prop_...``), the proposal, its proposer and age and its events."""
        management = self._ready(startup=False).management
        if isinstance(memory_id, str) and memory_id.startswith("prop_"):
            return management.inspect_proposal(memory_id)
        return management.inspect(memory_id)

    def memory_history(
        self, memory_id: str, *, limit: int = 50, sessions: int = 50
    ) -> MemoryHistoryReport:
        """What happened to a memory of this context (see
        :mod:`swarmmem.core.maintenance.history`): the chain of memories it replaced and that
        replaced it, the proposals about it and their decisions, the recalls that returned it
        (the newest ``limit``) and its injections in the newest ``sessions`` run logs."""
        rt = self._ready(startup=False)
        management = rt.management
        record = management.get(memory_id)
        scoped = rt.scoped_store
        store_history = history_of(scoped)

        def get(other: str) -> MemoryRecord | None:
            try:
                return management.get(other)
            except NotFoundError:
                return None

        if store_history is not None:  # the newest usage rows only (a popular memory)
            proposals = store_history.proposals_mentioning(record.id)
            usage = store_history.recall_usage_mentioning(record.id, USAGE_READ)
        else:
            proposals, usage = scoped.list_proposals(), scoped.list_recall_usage()
        recalls = memory_history.recall_rows(usage, record.id)
        runs = rt.run_log.runs()[:sessions] if isinstance(rt.run_log, RunHistory) else []
        timelines = (
            (run, session_logs.session_timeline(run, rt.run_log.read(run)).events) for run in runs
        )
        injections = memory_history.injection_rows(timelines, record.id)
        return MemoryHistoryReport(
            memory_id=record.id,
            limit=limit,
            chain=memory_history.supersede_chain(record, get, management.state_of),
            decisions=memory_history.decision_rows(p for p in proposals if concerns(p, record.id)),
            recall_count=len(recalls),
            recalls_read=len(usage),
            recalls=recalls[:limit],
            injection_count=len(injections),
            injections=injections[:limit],
            sessions_read=len(runs),
        )

    def review_queue(self, limit: int = 100) -> ReviewQueue:
        """The pending proposals a person reviews, oldest first (at most ``limit``, each as
        :meth:`inspect` shows it but without audit events), and how many are pending."""
        return self._ready(startup=False).management.review_queue(limit)

    def forget(self, memory_id: str, *, reason: str, purge: bool = False) -> ForgetResult:
        """Tombstone a memory (audited); ``purge`` erases it and scrubs its text everywhere."""
        return self._ready(startup=False).management.forget(memory_id, reason=reason, purge=purge)

    # ------------------------------------------------ learning and maintenance
    def register_session(self, session_id: str) -> None:
        """Mark a live session (e.g. a dispatched council member) as a known verdict target."""
        self._rt.sessions.register(session_id)

    def record_verdict(
        self,
        verdict: str,
        *,
        swarm_id: str,
        task_or_phase: str,
        round_number: int,
        session_ids: Sequence[str] = (),
        synthesis: Mapping[str, Any] | None = None,
    ) -> VerdictResult:
        """Reward what this and known member sessions recalled (APPROVE/REJECT/CONCERNS)."""
        return self._ready(startup=False).verdicts.record(
            verdict,
            swarm_id=swarm_id,
            task_or_phase=task_or_phase,
            round_number=round_number,
            session_ids=session_ids,
            synthesis=synthesis,
        )

    def value_log(self, limit: int | str | None = None) -> ValueLogReport:
        """Per-memory Q-values, statuses and recent rewards."""
        return self._ready(startup=False).maintenance.value_log(limit)

    def pending(self, limit: int | str | None = None) -> PendingReport:
        """Pending proposals, rejected reasons and promotion candidates."""
        return self._ready(startup=False).maintenance.pending(limit)

    def recall_log(self, limit: int | str | None = None) -> RecallLogReport:
        """Recall usage by role and memory, most- and never-recalled memories."""
        return self._ready(startup=False).maintenance.recall_log(limit)

    def stale(self, limit: int | str | None = None) -> StaleReport:
        """Expired scratch, tombstones, superseded chains, dead-anchor, low-utility, low-Q, and
        memories whose cited files changed or are gone."""
        return self._ready(startup=False).maintenance.stale(limit)

    def sessions(self, limit: int | str | None = None) -> SessionList:
        """The sessions with a run log (``.swarm/runs/``), newest first, each with what it
        was briefed, injected, skipped and filed (see :mod:`swarmmem.core.maintenance.sessions`)."""
        rt = self._ready(startup=False)
        count = parse_limit(limit)
        runs = rt.run_log.runs() if isinstance(rt.run_log, RunHistory) else []
        summaries = [self.session(run).summary for run in runs[:count]]
        return session_logs.session_list(summaries, total=len(runs), limit=count)

    def session(self, session_id: str) -> SessionTimeline:
        """One session's run log as a timeline (NotFoundError for a session without a log)."""
        rt = self._ready(startup=False)
        runs = rt.run_log.runs() if isinstance(rt.run_log, RunHistory) else []
        if not isinstance(session_id, str) or session_id not in runs:
            raise NotFoundError(f"no run log of session {str(session_id)[:80]!r}")
        return session_logs.session_timeline(session_id, rt.run_log.read(session_id))

    def status(self) -> dict[str, Any]:
        """What ``swarmmem status`` prints: the enabled flag, the provider and its paths, the
        legacy JSONL files and the last migration report; with memory on, the counts of
        memories and pending proposals, embeddings coverage, unreadable rows and the
        repository identities in the store."""
        storage = self.storage_dir
        db = self._rt.sqlite_path
        legacy = {}
        for name in LEGACY_JSONL:
            path = storage / name
            legacy[name] = {
                "present": path.exists(),
                "bytes": path.stat().st_size if path.exists() else 0,
            }
        report_path = storage / "migration-report.json"
        migration: dict[str, Any] | None = None
        if report_path.exists():
            try:
                loaded = json.loads(report_path.read_text(encoding="utf-8"))
                migration = loaded if isinstance(loaded, dict) else None
            except (OSError, ValueError):
                migration = {"error": "migration-report.json is unreadable"}
        report: dict[str, Any] = {
            "enabled": self.enabled,
            "provider": self.config["provider"],
            "storage_dir": str(storage),
            "sqlite_path": str(db),
            "sqlite_exists": db.exists(),
            "automatic_destructive_cleanup": "disabled",
            "legacy_jsonl": legacy,
            "migration_report": str(report_path) if report_path.exists() else None,
            "migration": migration,
        }
        if self.enabled and self._rt.store_exists:
            report["memory_count"] = self.store.count()
            report["pending_proposals"] = len(self.store.list_proposals("pending"))
            report["embeddings"] = self._rt.embeddings.coverage()
            report["unreadable_rows"] = self.store.unreadable_rows()
            report["repository"] = self._rt.rescoping.identities()
        return report

    def verify_audit_chain(self) -> dict[str, Any]:
        """Walk the store's hash-chained audit log and its head (``swarmmem audit-verify``):
        ``provider`` and the store's verification (``verified``, ...), or ``supported:
        false`` for a provider without a chain. Nothing is written."""
        store, provider = self.store, self.store.name
        if not isinstance(store, AuditChain):
            return {
                "supported": False,
                "verified": None,
                "provider": provider,
                "message": f"the {provider} provider keeps no hash-chained audit log; "
                "only the sqlite and postgres providers support audit-verify",
            }
        return {"provider": provider, **store.verify_audit_chain()}

    def adopt_audit_key(self) -> dict[str, Any]:
        """Key the store's existing audit chain with the configured key from now on
        (``swarmmem audit-key adopt``): ``provider`` and the store's answer; a store without
        a chain raises :class:`StorageError`."""
        store, provider = self.store, self.store.name
        if not isinstance(store, AuditChain):
            raise StorageError(f"the {provider} provider keeps no hash-chained audit log")
        return {"provider": provider, **store.adopt_audit_key()}

    def migrate_to(
        self,
        provider: str,
        *,
        dsn: str | None = None,
        schema: str | None = None,
        path: str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, Any]:
        """Copy every memory, proposal, audit event (chain intact), outcome, recall usage,
        reward event and relation into an empty store of ``provider`` (``swarmmem
        migrate``), in one transaction: the copier's report with ``source`` (this store's
        provider) and ``location`` (where the copy went, as shown to the person)."""
        rt = self._ready(startup=False)
        target, shown = migration_target(rt, provider, dsn=dsn, schema=schema, path=path)
        try:
            report = rt.copy_rows(target, progress=progress)
        finally:
            target.close()
        return {**report, "source": rt.store.name, "location": shown}

    def postgres_rls(
        self, role: str, *, dsn: str | None = None, apply: bool = False, workspace: bool = False
    ) -> dict[str, Any]:
        """Row-level security giving database ``role`` this repository's scopes in a shared
        PostgreSQL schema (``swarmmem postgres-rls``): the statements, run when ``apply``."""
        return postgres_rls(
            self._ready(startup=False), role, dsn=dsn, apply=apply, workspace=workspace
        )

    def consolidate(self) -> ConsolidationResult:
        """File ``merge`` proposals for clusters of near-duplicate memories and ``supersede``
        proposals for pairs that state different values about the same file (see
        :mod:`swarmmem.core.maintenance.consolidate`); memory itself is never changed."""
        rt = self._ready(startup=False)
        busy: set[str] = set()
        for p in rt.scoped_store.list_proposals("pending"):
            busy.update(i for i in (p.target_memory_id, *(p.related_memory_ids or ())) if i)
        planned = consolidation_proposals(
            rt.scoped_store,
            scope_keys=[s.key for s in rt.allowed_scopes],
            now=rt.now(),
            busy=busy,
        )
        filed = []
        for args in planned:
            prop = rt.writes.propose(**args)
            filed.append(
                {
                    "proposal_id": prop.id,
                    "operation": prop.operation,
                    "status": prop.status,
                    "target_memory_id": prop.target_memory_id,
                    "related_memory_ids": builtins.list(prop.related_memory_ids or ()),
                    "rationale": prop.rationale,
                }
            )
        merges = sum(1 for p in filed if p["operation"] == "merge")
        return ConsolidationResult(
            merge_count=merges, supersede_count=len(filed) - merges, proposals=filed
        )

    def verify(self, *, propose: bool = False, limit: int | str | None = None) -> EvidenceReport:
        """The memories whose cited files changed or are gone; with ``propose``, an ``update``
        (changed) or ``delete`` (gone) proposal for each that no pending proposal targets yet
        (never a write to memory itself)."""
        rt = self._ready(startup=False)
        report = rt.maintenance.verify(limit)
        filed: builtins.list[dict[str, Any]] = []
        if propose:
            targets = {
                p.target_memory_id
                for p in rt.scoped_store.list_proposals("pending")
                if p.target_memory_id
            }
            records = builtins.list(rt.scoped_store.iter_all_records())
            for args in verification_proposals(
                records, rt.evidence_status, pending_targets=targets
            ):
                prop = rt.writes.propose(**args)
                filed.append(
                    {
                        "proposal_id": prop.id,
                        "operation": prop.operation,
                        "memory_id": args["target_memory_id"],
                        "status": prop.status,
                    }
                )
        return attrs.evolve(report, proposals=filed)

    def compact(self, confirm: bool = False) -> CompactionReport:
        """Remove tombstones, superseded and expired scratch (a dry run unless ``confirm``)."""
        return self._ready(startup=False).maintenance.compact(confirm)

    def reflect(self) -> Reflection:
        """Regenerate ``.swarm/reflections/lessons.{json,md}`` (only when reflection is on)."""
        return self._ready(startup=False).reflection.regenerate()

    def reflection_block(self) -> str:
        """The bounded reflection prompt block from ``lessons.json`` (empty when disabled)."""
        return self._rt.reflection.block() if self._rt.reflection_enabled else ""

    # -------------------------------------------------------------- lifecycle
    def close(self) -> None:
        """Release the store and the vector index. Idempotent."""
        self._rt.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

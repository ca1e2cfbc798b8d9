"""Maintenance as a use case: the reports (pending, value-log, recall-log, stale), evidence
verification, consolidation and compaction, over one store with the project's learning
settings. Verification and consolidation only file proposals (through ``propose``); memory
itself changes when a curator decides them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from swarmmem.core.learning.lessons import dead_anchor_ids
from swarmmem.core.learning.rewards import LearningConfig
from swarmmem.core.maintenance import reports
from swarmmem.core.maintenance.consolidate import consolidation_proposals
from swarmmem.core.maintenance.evidence import evidence_report, verification_proposals
from swarmmem.core.model import reports as results
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.records import MemoryProposal
from swarmmem.ports.files import LessonFiles
from swarmmem.ports.storage import StorageProvider
from swarmmem.ports.vectors import VectorIndex

Limit = int | str | None


@attrs.frozen(kw_only=True)
class MaintenanceService:
    """Reports priced by what they show and the explicit compaction of one store; ``vectors``
    gives the vector index compaction keeps in step (``None`` when embeddings are off),
    ``propose`` files a proposal (the write service's), ``scope_keys`` are the context's."""

    store: StorageProvider
    now: Callable[[], str]
    policy: LearningConfig
    lessons: LessonFiles
    vectors: Callable[[], VectorIndex | None]
    #: a memory's metadata -> the status of its cited files (``None``: not checked)
    evidence_status: Callable[[Mapping[str, Any]], str] | None = None
    #: a fingerprint -> what its symbol or lines say now, redacted (``None``: no diffs)
    evidence_cited: Callable[[Mapping[str, Any]], str | None] | None = None
    propose: Callable[..., MemoryProposal] | None = None
    scope_keys: tuple[str, ...] = ()

    def _pending_targets(self) -> set[str]:
        """The memories a pending proposal already targets or relates."""
        busy: set[str] = set()
        for p in self.store.list_proposals("pending"):
            busy.update(i for i in (p.target_memory_id, *(p.related_memory_ids or ())) if i)
        return busy

    def _file(self, args: Mapping[str, Any]) -> MemoryProposal:
        if self.propose is None:
            raise MemoryValidationError("this maintenance service cannot file proposals")
        return self.propose(**args)

    def value_log(self, limit: Limit = None) -> results.ValueLogReport:
        """Per-memory Q-values, statuses and recent rewards."""
        return reports.value_log_report(
            self.store, now=self.now(), limit=reports.parse_limit(limit), policy=self.policy
        )

    def pending(self, limit: Limit = None) -> results.PendingReport:
        """Pending proposals, rejected reasons and promotion candidates."""
        return reports.pending_report(
            self.store, now=self.now(), limit=reports.parse_limit(limit), policy=self.policy
        )

    def recall_log(self, limit: Limit = None) -> results.RecallLogReport:
        """Recall usage by role and memory, most- and never-recalled memories."""
        return reports.recall_log_report(
            self.store, now=self.now(), limit=reports.parse_limit(limit)
        )

    def stale(self, limit: Limit = None) -> results.StaleReport:
        """Expired scratch, tombstones, superseded chains, dead-anchor, low-utility, low-Q."""
        return reports.stale_report(
            self.store,
            now=self.now(),
            limit=reports.parse_limit(limit),
            policy=self.policy,
            dead_anchor_ids=dead_anchor_ids(self.lessons),
            evidence=self.verify(limit=limit) if self.evidence_status is not None else None,
        )

    def verify(self, *, propose: bool = False, limit: Limit = None) -> results.EvidenceReport:
        """The active memories whose cited files changed or are gone (see
        :func:`~swarmmem.core.maintenance.evidence.evidence_report`); with ``propose``, an
        ``update`` (changed) or ``delete`` (gone) proposal for each that no pending proposal
        targets yet."""
        if self.evidence_status is None:
            raise MemoryValidationError("evidence checks are off (evidence.freshness: false)")
        report = evidence_report(
            self.store.iter_all_records(),
            self.evidence_status,
            limit=reports.parse_limit(limit),
            cited_now=self.evidence_cited,
        )
        if not propose:
            return report
        pending = self.store.list_proposals("pending")
        targets = {p.target_memory_id for p in pending if p.target_memory_id}
        filed = []
        for args in verification_proposals(
            self.store.iter_all_records(), self.evidence_status, pending_targets=targets
        ):
            prop = self._file(args)
            filed.append(
                {
                    "proposal_id": prop.id,
                    "operation": prop.operation,
                    "memory_id": args["target_memory_id"],
                    "status": prop.status,
                }
            )
        return attrs.evolve(report, proposals=filed)

    def consolidate(self) -> results.ConsolidationResult:
        """File ``merge`` proposals for clusters of near-duplicate memories and ``supersede``
        proposals for pairs that state different values about the same file (see
        :mod:`swarmmem.core.maintenance.consolidate`), leaving out the memories a pending
        proposal concerns."""
        planned = consolidation_proposals(
            self.store, scope_keys=self.scope_keys, now=self.now(), busy=self._pending_targets()
        )
        filed = []
        for args in planned:
            prop = self._file(args)
            filed.append(
                {
                    "proposal_id": prop.id,
                    "operation": prop.operation,
                    "status": prop.status,
                    "target_memory_id": prop.target_memory_id,
                    "related_memory_ids": list(prop.related_memory_ids or ()),
                    "rationale": prop.rationale,
                }
            )
        merges = sum(1 for p in filed if p["operation"] == "merge")
        return results.ConsolidationResult(
            merge_count=merges, supersede_count=len(filed) - merges, proposals=filed
        )

    def compact(self, confirm: bool = False) -> results.CompactionReport:
        """Remove deleted tombstones, superseded records and expired scratch, and their
        vectors; a dry run unless ``confirm``."""
        report = reports.apply_compaction(self.store, now=self.now(), confirm=confirm)
        vectors = self.vectors() if confirm and report.removed else None
        if vectors is not None:  # vectors live beside the store: drop the removed ones too
            vectors.delete(
                [*report.deleted_tombstones, *report.superseded_records, *report.expired_scratch]
            )
        return report

"""Maintenance as a use case: the reports (pending, value-log, recall-log, stale) and
compaction, over one store with the project's learning settings."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from swarmmem.core.learning.lessons import dead_anchor_ids
from swarmmem.core.learning.rewards import LearningConfig
from swarmmem.core.maintenance import reports
from swarmmem.core.maintenance.evidence import evidence_report
from swarmmem.core.model import reports as results
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.ports.files import LessonFiles
from swarmmem.ports.storage import StorageProvider
from swarmmem.ports.vectors import VectorIndex

Limit = int | str | None


@attrs.frozen(kw_only=True)
class MaintenanceService:
    """Reports priced by what they show and the explicit compaction of one store; ``vectors``
    gives the vector index compaction keeps in step (``None`` when embeddings are off)."""

    store: StorageProvider
    now: Callable[[], str]
    policy: LearningConfig
    lessons: LessonFiles
    vectors: Callable[[], VectorIndex | None]
    #: a memory's metadata -> the status of its cited files (``None``: not checked)
    evidence_status: Callable[[Mapping[str, Any]], str] | None = None
    #: a fingerprint -> what its symbol or lines say now, redacted (``None``: no diffs)
    evidence_cited: Callable[[Mapping[str, Any]], str | None] | None = None

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
            evidence=self.verify(limit) if self.evidence_status is not None else None,
        )

    def verify(self, limit: Limit = None) -> results.EvidenceReport:
        """The active memories whose cited files changed or are gone (see
        :func:`~swarmmem.core.maintenance.evidence.evidence_report`)."""
        if self.evidence_status is None:
            raise MemoryValidationError("evidence checks are off (evidence.freshness: false)")
        return evidence_report(
            self.store.iter_all_records(),
            self.evidence_status,
            limit=reports.parse_limit(limit),
            cited_now=self.evidence_cited,
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

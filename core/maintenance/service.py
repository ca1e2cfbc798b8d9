"""Maintenance as a use case: the reports (pending, value-log, recall-log, stale) and
compaction, over one store with the project's learning settings."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from swarmmem.core.learning.lessons import dead_anchor_ids
from swarmmem.core.learning.rewards import LearningSettings
from swarmmem.core.maintenance import reports
from swarmmem.core.maintenance.evidence import evidence_report
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
    policy: LearningSettings
    lessons: LessonFiles
    vectors: Callable[[], VectorIndex | None]
    #: a memory's metadata -> the status of its cited files (``None``: not checked)
    evidence_status: Callable[[Mapping[str, Any]], str] | None = None

    def _report(
        self, build: Callable[..., dict[str, Any]], limit: Limit, **extra: Any
    ) -> dict[str, Any]:
        return build(self.store, now=self.now(), limit=reports.parse_limit(limit), **extra)

    def value_log(self, limit: Limit = None) -> dict[str, Any]:
        """Per-memory Q-values, statuses and recent rewards."""
        return self._report(reports.value_log_report, limit, policy=self.policy)

    def pending(self, limit: Limit = None) -> dict[str, Any]:
        """Pending proposals, rejected reasons and promotion candidates."""
        return self._report(reports.pending_report, limit, policy=self.policy)

    def recall_log(self, limit: Limit = None) -> dict[str, Any]:
        """Recall usage by role and memory, most- and never-recalled memories."""
        return self._report(reports.recall_log_report, limit)

    def stale(self, limit: Limit = None) -> dict[str, Any]:
        """Expired scratch, tombstones, superseded chains, dead-anchor, low-utility, low-Q."""
        dead = dead_anchor_ids(self.lessons)
        evidence = self.verify(limit) if self.evidence_status is not None else None
        return self._report(
            reports.stale_report,
            limit,
            policy=self.policy,
            dead_anchor_ids=dead,
            evidence=evidence,
        )

    def verify(self, limit: Limit = None) -> dict[str, Any]:
        """The active memories whose cited files changed or are gone (see
        :func:`~swarmmem.core.maintenance.evidence.evidence_report`)."""
        if self.evidence_status is None:
            raise MemoryValidationError("evidence checks are off (evidence.freshness: false)")
        return evidence_report(
            self.store.iter_all_records(), self.evidence_status, limit=reports.parse_limit(limit)
        )

    def compact(self, confirm: bool = False) -> dict[str, Any]:
        """Remove deleted tombstones, superseded records and expired scratch, and their
        vectors; a dry run unless ``confirm``."""
        report = reports.apply_compaction(self.store, now=self.now(), confirm=confirm)
        vectors = self.vectors() if confirm and report["removed"] else None
        if vectors is not None:  # vectors live beside the store: drop the removed ones too
            vectors.delete([i for name in reports.COMPACTION_CLASSES for i in report[name]])
        return report

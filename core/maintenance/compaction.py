"""Compaction as a use case: remove what :func:`.reports.compact_plan` lists, and its vectors."""

from __future__ import annotations

from typing import Any

from swarmmem.core.maintenance.reports import COMPACTION_CLASSES, apply_compaction
from swarmmem.ports.storage import StorageProvider
from swarmmem.ports.vectors import VectorIndex


def compact(
    store: StorageProvider, *, now: str, confirm: bool = False, vectors: VectorIndex | None = None
) -> dict[str, Any]:
    """A dry run unless ``confirm``; a confirmed run also drops the removed records' vectors
    from ``vectors`` (which live beside the store)."""
    report = apply_compaction(store, now=now, confirm=confirm)
    if confirm and report["removed"] and vectors is not None:
        vectors.delete([i for name in COMPACTION_CLASSES for i in report[name]])
    return report

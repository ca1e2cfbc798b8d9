"""The session-start brief: a project's most valuable current memories, before any question.

A coding agent starting a session has no query yet; the brief hands it the memories most
worth knowing up front, ranked by what outcomes taught (the learned value ``q``), then
confidence, then the newest update. Only durable kinds of memory (and API findings) are
briefed; a memory whose value fell below the suppression threshold never is.
"""

from __future__ import annotations

from collections.abc import Iterable

from swarmmem.core.model.records import (
    DURABLE_MEMORY_KINDS,
    NO_SIGNALS,
    MemoryRecord,
    RecallItem,
)

BRIEF_KINDS = DURABLE_MEMORY_KINDS | {"api_finding"}
"""The kinds of memory a brief (and a host's prompt recall) may carry."""


def brief_items(
    records: Iterable[MemoryRecord], *, max_items: int, suppression_threshold: float
) -> list[RecallItem]:
    """The ``max_items`` records worth briefing, best first, as recall items whose score is
    the learned value."""
    usable = [
        r for r in records if r.active and r.kind in BRIEF_KINDS and r.q >= suppression_threshold
    ]
    usable.sort(key=lambda r: (r.q, r.confidence, r.updated_at or r.created_at, r.id), reverse=True)
    return [
        RecallItem(record=r, score=r.q, reason="session brief", signals=NO_SIGNALS)
        for r in usable[:max_items]
    ]

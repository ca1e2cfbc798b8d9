"""The report rules written plainly over whole record lists: the oracle the SQL-backed reports
are checked against (the library reads them through indexed queries instead)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from swarmmem.core.learning.rewards import LearningConfig, is_promotion_candidate
from swarmmem.core.model.records import MemoryRecord


def promotion_candidates(
    records: Iterable[MemoryRecord],
    counts: Mapping[str, int],
    policy: LearningConfig | None = None,
) -> list[MemoryRecord]:
    """Promotion candidates, highest Q first (then id). Stability is never changed here."""
    found = [r for r in records if is_promotion_candidate(r, counts.get(r.id, 0), policy)]
    return sorted(found, key=lambda r: (-r.q, r.id))


def low_q_memories(
    records: Iterable[MemoryRecord], policy: LearningConfig | None = None
) -> list[MemoryRecord]:
    """Active memories whose Q fell below ``suppressionThreshold``, lowest first (then id)."""
    policy = policy or LearningConfig()
    found = [r for r in records if r.active and r.q < policy.suppression_threshold]
    return sorted(found, key=lambda r: (r.q, r.id))

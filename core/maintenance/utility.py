"""How useful a memory still is, for the stale report and compaction: the low-utility score
of a never-recalled memory and the expiry test on a parsed timestamp."""

from __future__ import annotations

import math

from swarmmem.core.model.ids import iso_to_ms
from swarmmem.core.model.records import MemoryRecord
from swarmmem.ports.storage import RecordKey, StorageProvider

LOW_UTILITY_THRESHOLD = 0.2
_DAY_MS = 86_400_000.0


def importance(record: MemoryRecord, now_ms: float) -> float:
    """The low-utility score of a never-recalled memory.

    ``0.15 * exp(-0.01 * ageDays) + 0.25 * confidence``, the age counted from the last update
    (creation when the update time does not parse).
    """
    then = iso_to_ms(record.updated_at) or iso_to_ms(record.created_at) or now_ms
    age_days = max(0.0, (now_ms - then) / _DAY_MS)
    return 0.15 * math.exp(-0.01 * age_days) + 0.25 * record.confidence


def is_low_utility(store: StorageProvider, key: RecordKey, now_ms: float) -> bool:
    """:func:`importance` below the threshold, from the key (the record is read only when its
    update time does not parse)."""
    if key.confidence is None or not iso_to_ms(key.updated_at):
        record = store.get(key.id)
        return record is not None and importance(record, now_ms) < LOW_UTILITY_THRESHOLD
    age_days = max(0.0, (now_ms - (iso_to_ms(key.updated_at) or now_ms)) / _DAY_MS)
    score = 0.15 * math.exp(-0.01 * age_days) + 0.25 * key.confidence
    return score < LOW_UTILITY_THRESHOLD


def expired_at(expires_at: str | None, now_ms: float) -> bool:
    """True when ``expires_at`` parses to a time at or before ``now_ms``."""
    expires = iso_to_ms(expires_at)
    return expires is not None and expires <= now_ms

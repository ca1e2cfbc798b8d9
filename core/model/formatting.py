"""Number formatting identical to JavaScript's ``Number.prototype.toFixed``."""

from __future__ import annotations

import functools
import math
from decimal import ROUND_HALF_UP, Decimal


@functools.lru_cache(maxsize=4096)
def to_fixed(value: float, digits: int) -> str:
    """Format like JS ``toFixed``: round half away from zero on the exact binary value.
    Memoised: a recall formats about 40 values for its items' reasons, most of them seen
    before (confidences, overlaps of few words); ``0.0`` and ``-0.0`` format alike."""
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    # Python's format rounds the exact binary value too, but half to even: it agrees
    # everywhere except on a value half-way between two results. Below 1e9 the product
    # is within 1e-7 of the exact one, so a value near half-way is left to Decimal.
    scaled = abs(value) * 10.0**digits
    if scaled < 1e9 and abs(scaled - math.floor(scaled) - 0.5) > 1e-6:
        text = f"{value:.{digits}f}"
    else:
        quantum = Decimal(1).scaleb(-digits)
        text = str(Decimal(value).quantize(quantum, rounding=ROUND_HALF_UP))
    if text.startswith("-") and not text.strip("-0."):
        text = text[1:]
    return text


def age_text(then: str | None, now: str) -> str:
    """How long ago ``then`` was, coarsely: ``just now``, ``12m``, ``5h``, ``3d`` (ISO times;
    ``unknown`` when either cannot be read)."""
    from swarmmem.core.model.ids import iso_to_ms

    start, end = iso_to_ms(then), iso_to_ms(now)
    if start is None or end is None:
        return "unknown"
    minutes = max(0, (end - start) // 60_000)
    if minutes < 1:
        return "just now"
    if minutes < 60:
        return f"{minutes}m"
    if minutes < 48 * 60:
        return f"{minutes // 60}h"
    return f"{minutes // (24 * 60)}d"

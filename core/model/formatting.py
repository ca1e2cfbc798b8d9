"""Number formatting identical to JavaScript's ``Number.prototype.toFixed``."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal


def to_fixed(value: float, digits: int) -> str:
    """Format like JS ``toFixed``: round half away from zero on the exact binary value."""
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    quantum = Decimal(1).scaleb(-digits)
    text = str(Decimal(value).quantize(quantum, rounding=ROUND_HALF_UP))
    if text.startswith("-") and Decimal(text) == 0:
        text = text[1:]
    return text

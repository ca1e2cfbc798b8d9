"""Jaccard token-overlap kernel, pure-Python twin of ``_jaccard_c``.

``jaccard(A, B) = |A ∩ B| / |A ∪ B|`` over lexical token sets (0 when both are empty), used
by learning propagation to find near-duplicate memories.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_TOKEN = re.compile(r"[a-z0-9_-]+")


def _tokens(text: str) -> frozenset[str]:
    return frozenset(_TOKEN.findall(text.lower())) if text else frozenset()


def jaccard_many(source: str, candidates: Sequence[str]) -> list[float]:
    """Jaccard similarity of ``source``'s tokens with each candidate's tokens."""
    a = _tokens(source)
    out: list[float] = []
    for text in candidates:
        b = _tokens(text)
        union = len(a | b)
        out.append(len(a & b) / union if union else 0.0)
    return out

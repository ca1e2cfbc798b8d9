"""Reciprocal rank fusion, pure-Python twin of ``_fusion_c``.

``score(id) = sum over channels c containing id of weight_c / (k + rank_c(id))`` with 1-based
ranks over best-first id lists; ``k`` must be >= 0. The first occurrence of an id in a channel
gives its rank.
Result order: score descending, then id ascending (code-point order), so ties are
deterministic. Channels are summed in the order given, so both twins produce identical floats.
"""

from __future__ import annotations

from collections.abc import Sequence


def rrf_fuse(
    rankings: Sequence[Sequence[str]], weights: Sequence[float], k: float
) -> tuple[list[str], list[float]]:
    """Fuse best-first id lists; return ``(ids, scores)`` best first."""
    if len(rankings) != len(weights):
        raise ValueError(f"rrf_fuse: got {len(rankings)} rankings but {len(weights)} weights")
    k = float(k)
    if not k >= 0:
        raise ValueError(f"rrf_fuse: k must be >= 0, got {k!r}")
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        seen: set[str] = set()
        rank = 0
        for doc in ranking:
            if doc in seen:
                continue
            seen.add(doc)
            rank += 1
            scores[doc] = scores.get(doc, 0.0) + weight / (k + rank)
    ordered = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return [doc for doc, _ in ordered], [score for _, score in ordered]

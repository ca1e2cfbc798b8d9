"""Reciprocal rank fusion, pure-Python twin of ``_fusion_c``.

``score(id) = sum over channels c containing id of weight_c / (k + rank_c(id))`` with 1-based
ranks over best-first id lists; ``k`` must be >= 0. The first occurrence of an id in a channel
gives its rank.
Result order: score descending, then id ascending (code-point order for strings), so ties are
deterministic. Channels are summed in the order given, so both twins produce identical floats.

Two entry points share that contract:

- :func:`rrf_fuse` fuses lists of string ids (what the recall path holds);
- :func:`rrf_fuse_ids` fuses integer ids in ``range(n_ids)`` (any sequence of ints, e.g. an
  ``array('q')``) and returns ``array('q')`` ids and ``array('d')`` scores. This is the
  kernel proper: the compiled twin runs it without a single Python object per id.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence


def _check(n_rankings: int, n_weights: int, k: float) -> float:
    if n_rankings != n_weights:
        raise ValueError(f"rrf_fuse: got {n_rankings} rankings but {n_weights} weights")
    k = float(k)
    if not k >= 0:
        raise ValueError(f"rrf_fuse: k must be >= 0, got {k!r}")
    return k


def rrf_fuse(
    rankings: Sequence[Sequence[str]], weights: Sequence[float], k: float
) -> tuple[list[str], list[float]]:
    """Fuse best-first id lists; return ``(ids, scores)`` best first."""
    k = _check(len(rankings), len(weights), k)
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


def rrf_fuse_ids(
    rankings: Sequence[Sequence[int]], weights: Sequence[float], k: float, n_ids: int
) -> tuple[array[int], array[float]]:
    """Fuse best-first lists of ids in ``range(n_ids)``; return ``(ids, scores)`` best first."""
    k = _check(len(rankings), len(weights), k)
    if n_ids < 0:
        raise ValueError(f"rrf_fuse_ids: n_ids must be >= 0, got {n_ids}")
    scores = [0.0] * n_ids
    last_channel = [-1] * n_ids
    for channel, (ranking, weight) in enumerate(zip(rankings, weights, strict=True)):
        weight = float(weight)
        rank = 0
        for doc in ranking:
            if not 0 <= doc < n_ids:
                raise ValueError(f"rrf_fuse_ids: id {doc} is outside range({n_ids})")
            if last_channel[doc] == channel:
                continue
            last_channel[doc] = channel
            rank += 1
            scores[doc] = scores[doc] + weight / (k + rank)
    # ids ascending, then a stable sort on the score: ties stay in id order
    ids = [doc for doc in range(n_ids) if last_channel[doc] >= 0]
    ids.sort(key=scores.__getitem__, reverse=True)
    return array("q", ids), array("d", [scores[doc] for doc in ids])

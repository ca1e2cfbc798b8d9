# cython: language_level=3
"""Reciprocal rank fusion, compiled twin of ``_fusion_py`` (same contract, same floats)."""


def rrf_fuse(rankings, weights, double k):
    """Fuse best-first id lists; return ``(ids, scores)`` best first."""
    cdef Py_ssize_t n_channels = len(rankings)
    if n_channels != len(weights):
        raise ValueError(
            f"rrf_fuse: got {n_channels} rankings but {len(weights)} weights"
        )
    if not k >= 0:
        raise ValueError(f"rrf_fuse: k must be >= 0, got {k!r}")
    cdef dict scores = {}
    cdef set seen
    cdef Py_ssize_t c, rank
    cdef double weight
    cdef object prev
    for c in range(n_channels):
        weight = weights[c]
        seen = set()
        rank = 0
        for doc in rankings[c]:
            if doc in seen:
                continue
            seen.add(doc)
            rank += 1
            prev = scores.get(doc)
            if prev is None:
                scores[doc] = 0.0 + weight / (k + rank)
            else:
                scores[doc] = <double>prev + weight / (k + rank)
    cdef list ordered = sorted(scores.items(), key=_order_key)
    return [item[0] for item in ordered], [item[1] for item in ordered]


def _order_key(item):
    return (-item[1], item[0])

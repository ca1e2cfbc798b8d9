"""BM25 kernel, pure-Python twin of ``_bm25_c``.

The stores without a full-text engine keep one feature row per record (see
:mod:`swarmmem.core.recall.features`): the record's distinct stemmed term ids, sorted, with
their counts and marks, in flat arrays (``terms``, ``tfs``, ``marks``) sliced by
``starts``/``ends``, its length in tokens, a scope id, a kind id, a ``live`` flag and a
version; and per term its postings, the ``(row, version, count)`` triples of the rows holding
it. :func:`bm25_top` filters the rows by scope and kind and computes FTS5's BM25 over the rows
that pass (their own document statistics) from the postings of the query's terms only, and
returns the best ones; :func:`having_all` finds the rows holding every term of a phrase (the
caller counts the phrase's occurrences there); :func:`term_marks` reads, for the rows
returned, which query terms their text holds;
:func:`postings` builds the postings of every term from the rows at once.

Scores are summed in query order with the same operations as ``core/recall/bm25.py``, so both
twins and that reference return identical floats.
"""

from __future__ import annotations

import bisect
import heapq
import math
from array import array
from collections.abc import Sequence


def _eligible(
    live: bytes | bytearray,
    scopes: array[int],
    allowed_scopes: bytes | bytearray,
    kinds: array[int],
    allowed_kinds: bytes | bytearray | None,
) -> list[int]:
    n_scopes = len(allowed_scopes)
    n_kinds = -1 if allowed_kinds is None else len(allowed_kinds)
    out = []
    for i in range(len(live)):
        if not live[i]:
            continue
        s = scopes[i]
        if s < 0 or s >= n_scopes or not allowed_scopes[s]:
            continue
        if allowed_kinds is not None:
            k = kinds[i]
            if k < 0 or k >= n_kinds or not allowed_kinds[k]:
                continue
        out.append(i)
    return out


def bm25_top(
    versions: array[int],
    lengths: array[int],
    live: bytes | bytearray,
    scopes: array[int],
    allowed_scopes: bytes | bytearray,
    kinds: array[int],
    allowed_kinds: bytes | bytearray | None,
    postings: Sequence[array[int] | None],
    phrases: Sequence[array[int]],
    k1: float,
    b: float,
    limit: int,
) -> tuple[list[int], list[float]]:
    """The rows with the ``limit`` best BM25 scores (every row tied with the last one too).

    Args:
        versions: the current version of each row; a posting of another version is stale.
        lengths: tokens per row (the document length).
        live: 1 for a row that may be returned (0: free slot, inactive, expired).
        scopes, allowed_scopes: a row passes when ``allowed_scopes[scopes[i]]`` is 1.
        kinds, allowed_kinds: likewise (``None``: every kind passes).
        postings: one entry per query term, in query order: the term's postings, flat
            ``(row, version, count)`` triples, or ``None`` for a phrase, whose per-row
            counts are the next array of ``phrases`` (one count per row).
        k1, b: BM25 parameters.
        limit: how many rows are wanted.

    Returns:
        Row indices and their scores (``-bm25()``: higher is better), unordered: every
        passing row matching a term when there are at most ``limit``, else every one scoring
        at least the ``limit``-th best score.
    """
    n_query = len(postings)
    if len(phrases) != sum(1 for listed in postings if listed is None):
        raise ValueError("bm25_top: one phrase column per phrase entry of the query")
    if len(versions) < len(live):
        raise ValueError("bm25_top: one version per row")
    if any(listed is not None and len(listed) % 3 for listed in postings):
        raise ValueError("bm25_top: postings hold (row, version, count) triples")
    rows = _eligible(live, scopes, allowed_scopes, kinds, allowed_kinds)
    n = len(rows)
    if n == 0 or n_query == 0:
        return [], []
    avgdl = (sum(lengths[i] for i in rows) / n) or 1.0
    searched = set(rows)
    freq: dict[int, list[int]] = {}  # matched row -> its count per query term
    hits = [0] * n_query
    next_phrase = 0
    for j, listed in enumerate(postings):
        if listed is None:
            column = phrases[next_phrase]
            next_phrase += 1
            found = [(i, column[i]) for i in rows if column[i]]
        else:
            found = [
                (listed[e], listed[e + 2])
                for e in range(0, len(listed), 3)
                if listed[e] in searched and listed[e + 1] == versions[listed[e]]
            ]
        for i, f in found:
            counts = freq.get(i)
            if counts is None:
                counts = freq[i] = [0] * n_query
            elif counts[j]:
                continue
            counts[j] = f
            hits[j] += 1
    idf = []
    for j in range(n_query):
        value = math.log((n - hits[j] + 0.5) / (hits[j] + 0.5))
        idf.append(value if value > 0.0 else 1e-6)
    out_rows: list[int] = []
    out_scores: list[float] = []
    for i, counts in freq.items():
        norm = k1 * (1 - b + b * lengths[i] / avgdl)
        score = 0.0
        for j in range(n_query):
            f = counts[j]
            if f:
                score += idf[j] * (f * (k1 + 1.0)) / (f + norm)
        out_rows.append(i)
        out_scores.append(score)
    if len(out_rows) <= limit:
        return out_rows, out_scores
    if limit <= 0:
        return [], []
    floor = heapq.nlargest(limit, out_scores)[-1]
    keep = [k for k, s in enumerate(out_scores) if s >= floor]
    return [out_rows[k] for k in keep], [out_scores[k] for k in keep]


def having_all(
    starts: array[int],
    ends: array[int],
    terms: array[int],
    live: bytes | bytearray,
    ids: Sequence[int],
) -> list[int]:
    """The live rows holding every term of ``ids``."""
    out = []
    for i in range(len(live)):
        if not live[i]:
            continue
        lo, hi = starts[i], ends[i]
        for t in ids:
            p = bisect.bisect_left(terms, t, lo, hi)
            if p >= hi or terms[p] != t:
                break
        else:
            out.append(i)
    return out


def term_marks(
    starts: array[int],
    ends: array[int],
    terms: array[int],
    marks: bytes | bytearray,
    rows: Sequence[int],
    query: Sequence[int],
) -> list[int]:
    """Per row of ``rows``, the query terms its text holds: bit ``j`` for the term id
    ``query[j]`` (``j < 64``; negative entries, phrases, are never marked). ``marks`` runs
    parallel to ``terms``: 1 when the term occurs in the row's text column."""
    position = {t: j for j, t in enumerate(query) if t >= 0 and j < 64}
    texts: list[int] = []
    for i in rows:
        text_bits = 0
        for p in range(starts[i], ends[i]):
            j = position.get(terms[p])
            if j is not None and marks[p]:
                text_bits |= 1 << j
        texts.append(text_bits)
    return texts


def postings(
    starts: array[int],
    ends: array[int],
    terms: array[int],
    tfs: array[int],
    versions: array[int],
    n_terms: int,
) -> list[array[int]]:
    """Per term id below ``n_terms``, the ``(row, version, count)`` triples of the rows
    holding it, rows in ascending order (the index :func:`bm25_top` reads)."""
    if len(ends) != len(starts) or len(versions) < len(starts):
        raise ValueError("postings: one start, end and version per row")
    out: list[list[int]] = [[] for _ in range(n_terms)]
    for i in range(len(starts)):
        if starts[i] < 0 or ends[i] > len(terms) or ends[i] > len(tfs):
            raise ValueError("postings: a row's terms lie outside the arrays")
        for p in range(starts[i], ends[i]):
            if not 0 <= terms[p] < n_terms:
                raise ValueError("postings: a term id is outside the vocabulary")
            out[terms[p]] += (i, versions[i], tfs[p])
    return [array("i", listed) for listed in out]

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

:func:`text_relevance` turns the BM25 scores of the candidates a recall found, and masks of
the query terms their texts hold, into the stemmed channel's text relevance.

Scores are summed in query order with the same operations as ``core/recall/bm25.py``, so both
twins and that reference return identical floats.
"""

from __future__ import annotations

import bisect
import heapq
import math
from array import array
from collections import Counter
from collections.abc import Sequence
from typing import Any


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
    ids: Sequence[str | None],
) -> tuple[list[int], list[float]]:
    """The rows with the ``limit`` best BM25 scores, best first.

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
        ids: each row's id; the id of a row that matches must be a ``str``.

    Returns:
        Row indices and their scores (``-bm25()``: higher is better), at most ``limit`` of
        them, best first: by score, highest first, ties by id, then in the order the rows
        were first matched (query term by query term, posting by posting).
    """
    n_query = len(postings)
    if len(phrases) != sum(1 for listed in postings if listed is None):
        raise ValueError("bm25_top: one phrase column per phrase entry of the query")
    if len(versions) < len(live):
        raise ValueError("bm25_top: one version per row")
    if any(listed is not None and len(listed) % 3 for listed in postings):
        raise ValueError("bm25_top: postings hold (row, version, count) triples")
    if len(ids) < len(live):
        raise ValueError("bm25_top: one id per row")
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
    if limit <= 0:
        return [], []
    if len(out_rows) > limit:  # keep the rows that reach the limit-th best score
        floor = heapq.nlargest(limit, out_scores)[-1]
        keep = [k for k, s in enumerate(out_scores) if s >= floor]
        out_rows = [out_rows[k] for k in keep]
        out_scores = [out_scores[k] for k in keep]
    names: list[str] = []
    for i in out_rows:
        name = ids[i]
        if not isinstance(name, str):
            raise TypeError("bm25_top: the id of a matched row must be a str")
        names.append(name)
    # best first, ties by id: by id, then (stable) by score
    order = sorted(range(len(out_rows)), key=names.__getitem__)
    order.sort(key=out_scores.__getitem__, reverse=True)
    del order[limit:]
    return [out_rows[k] for k in order], [out_scores[k] for k in order]


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


def text_relevance(
    candidates: Sequence[Sequence[Any]],
    text_at: int,
    scores: Sequence[float],
    marks: Sequence[int],
    n_terms: int,
    free: int,
    exponent: float,
    half_share: float,
) -> list[float]:
    """Per candidate, the stemmed channel's text relevance in ``[0, 1]``.

    Args:
        candidates: the candidate tuples (their text at position ``text_at``).
        scores: each one's ``-bm25()`` (higher is better).
        marks: each one's query terms its text holds, as a mask: bit ``j`` for term ``j``.
        n_terms: how many distinct terms the query has (those no mask names count too).
        free, exponent: the length scaling: a text longer than ``limit`` (the candidates'
            average length or ``free``, whichever is larger) has its coverage multiplied by
            ``(limit / length) ** exponent`` (0: no scaling).
        half_share: the candidate count at which BM25 has half of the factor.

    The relevance is ``sqrt(coverage) * (1 - s + s * score / best score)`` with
    ``s = n / (n + half_share)`` over the ``n`` candidates, and coverage the IDF-weighted
    share of the query's terms the text holds, the IDF the candidates' own:
    ``ln(1 + (n - df + 0.5) / (df + 0.5))``, ``df`` the candidates holding the term (at least
    1). (``swarmmem.core.recall.lexical`` spells out the same formulas over sets of terms.)
    """
    n = len(candidates)
    if len(scores) != n or len(marks) != n:
        raise ValueError("text_relevance: one score and one mask per candidate")
    if n_terms < 0:
        raise ValueError("text_relevance: n_terms must not be negative")
    if not n:
        return []
    if any(mark < 0 for mark in marks) or max(marks).bit_length() > n_terms:
        raise ValueError("text_relevance: a mask names a term beyond n_terms")
    groups = Counter(marks)  # candidates share few distinct masks
    held = [0] * n_terms
    for mark, size in groups.items():
        for j in range(mark.bit_length()):
            if mark >> j & 1:
                held[j] += size
    idf = [math.log(1.0 + (n - df + 0.5) / (df + 0.5)) for df in (max(1, d) for d in held)]
    total = math.fsum(idf)
    weights = {
        mark: math.fsum([idf[j] for j in range(mark.bit_length()) if mark >> j & 1]) / total
        if total
        else 0.0
        for mark in groups
    }
    best = max(scores) or 1.0
    lengths = [len(c[text_at]) for c in candidates]
    limit = max(free, math.fsum(lengths) / n)
    scaled = bool(exponent) and max(lengths) > limit
    share = n / (n + half_share)
    keep = 1.0 - share
    out = []
    for mark, score, length in zip(marks, scores, lengths, strict=True):
        cover = weights[mark]
        if scaled and length > limit:
            cover = cover * (limit / length) ** exponent
        if cover <= 0.0:
            out.append(0.0)
        else:
            out.append(math.sqrt(cover) * (keep + share * (score / best if best > 0 else 0.0)))
    return out

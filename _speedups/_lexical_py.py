"""Lexical overlap kernel, pure-Python twin of ``_lexical_c``.

Tokens are the maximal runs of ``[a-z0-9_-]`` in the lower-cased text (the reference
tokenizer: ASCII word characters and hyphens survive, everything else separates).

``score_lexical`` computes, for every candidate, the query-normalised overlaps
``|Q ∩ X| / |Q|`` of the query tokens ``Q`` with the text, tags, files, symbols and kind
fields, the task-term overlap of the task tokens with the union of all six fields, and the
weighted base score of the nine-factor scorer. Sums run in the reference order, so both
twins return identical floats. ``score_candidates`` scores the same way straight from the
scorer's candidate tuples (no column lists built first); ``scored_candidates`` goes on to the
ranking score of each: the text relevance in the text factor's place, the recency feature and
the Q-value boost.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any, NamedTuple

_TOKEN = re.compile(r"[a-z0-9_-]+")

# (text, tag, file, symbol, task-term, scope, kind, role, confidence)
WEIGHTS: tuple[float, ...] = (0.38, 0.16, 0.12, 0.08, 0.08, 0.12, 0.06, 0.05, 0.08)


class LexicalRow(NamedTuple):
    """One candidate's row: the six query-normalised overlaps and the weighted base score."""

    text: float
    tag: float
    file: float
    symbol: float
    kind_query: float
    task_term: float
    base: float


class Scored(NamedTuple):
    """A scored candidate: its tuple, its :class:`LexicalRow`, its base score, its score with
    the Q-value boost, its text relevance (when one was given) and its 1-based BM25 position
    (once a bonus by that position was added)."""

    fields: Any
    row: LexicalRow
    base: float
    score: float
    relevance: float | None = None
    fts_rank: int | None = None


#: builds a row from a plain tuple without a Python-level call (the kernel's hot loop)
_new_row = tuple.__new__


def tokenize(text: str) -> frozenset[str]:
    """The set of lexical tokens of ``text``."""
    return frozenset(_TOKEN.findall(text.lower())) if text else frozenset()


def _overlap(query: frozenset[str], field: frozenset[str]) -> float:
    if not query or not field:
        return 0.0
    return sum(1 for token in query if token in field) / len(query)


def score_lexical(
    query: str,
    task: str | None,
    task_as_query: bool,
    texts: Sequence[str],
    tags: Sequence[str],
    files: Sequence[str],
    symbols: Sequence[str],
    kinds: Sequence[str],
    refs: Sequence[str],
    scope_boost: Sequence[float],
    kind_boost: Sequence[float],
    role_boost: Sequence[float],
    confidence: Sequence[float],
) -> list[LexicalRow]:
    """Per candidate, a :class:`LexicalRow`: ``(text, tag, file, symbol, kind_query,
    task_term, base)``.

    Args:
        query: the recall query.
        task: the task description, or ``None``.
        task_as_query: use the task tokens as the query side (injection mode with a task).
        texts, tags, files, symbols, kinds, refs: one string per candidate (tags, files and
            symbols already joined with spaces; kinds with ``_`` replaced by spaces).
        scope_boost, kind_boost, role_boost, confidence: one number per candidate.
    """
    n = len(texts)
    columns = (tags, files, symbols, kinds, refs, scope_boost, kind_boost, role_boost, confidence)
    if any(len(col) != n for col in columns):
        raise ValueError("score_lexical: every candidate column must have the same length")
    task_tokens = tokenize(task) if task is not None else None
    q = task_tokens if (task_as_query and task_tokens is not None) else tokenize(query)
    w = WEIGHTS
    out: list[LexicalRow] = []
    for i in range(n):
        t_set = tokenize(texts[i])
        g_set = tokenize(tags[i])
        f_set = tokenize(files[i])
        s_set = tokenize(symbols[i])
        k_set = tokenize(kinds[i])
        text = _overlap(q, t_set)
        tag = _overlap(q, g_set)
        file = _overlap(q, f_set)
        symbol = _overlap(q, s_set)
        kind_q = _overlap(q, k_set)
        if task_tokens is not None:
            search = t_set | g_set | f_set | s_set | k_set | tokenize(refs[i])
            task_term = _overlap(task_tokens, search)
        else:
            task_term = 0.0
        base = (
            w[0] * text
            + w[1] * tag
            + w[2] * file
            + w[3] * symbol
            + w[4] * task_term
            + w[5] * scope_boost[i]
            + w[6] * kind_boost[i]
            + w[7] * role_boost[i]
            + w[8] * confidence[i]
        )
        out.append(_new_row(LexicalRow, (text, tag, file, symbol, kind_q, task_term, base)))
    return out


#: the candidate fields ``score_candidates`` reads, in the order of its ``fields`` positions
CANDIDATE_FIELDS = (
    "text",
    "tags",
    "files",
    "symbols",
    "kind_words",
    "ref",
    "specificity",
    "kind",
    "confidence",
)


def score_candidates(
    query: str,
    task: str | None,
    task_as_query: bool,
    candidates: Sequence[Sequence[Any]],
    fields: tuple[int, ...],
    kinds: Collection[str] | None,
    role_kinds: Collection[str] | None,
) -> list[LexicalRow]:
    """:func:`score_lexical` of candidate tuples: ``fields`` gives the position in each tuple
    of every name of :data:`CANDIDATE_FIELDS` (the specificity is the scope boost). The kind
    boost is 0.5 without ``kinds``, else 1 for a kind among them and 0; the role boost is 1
    for a kind among ``role_kinds``."""
    if len(fields) != len(CANDIDATE_FIELDS):
        raise ValueError("score_candidates: fields must give a position per CANDIDATE_FIELDS")
    text, tags, files, symbols, kind_words, ref, specificity, kind, confidence = fields
    return score_lexical(
        query,
        task,
        task_as_query,
        [c[text] for c in candidates],
        [c[tags] for c in candidates],
        [c[files] for c in candidates],
        [c[symbols] for c in candidates],
        [c[kind_words] for c in candidates],
        [c[ref] for c in candidates],
        [c[specificity] for c in candidates],
        [(0.5 if kinds is None else (1.0 if c[kind] in kinds else 0.0)) for c in candidates],
        [(1.0 if role_kinds is not None and c[kind] in role_kinds else 0.0) for c in candidates],
        [c[confidence] for c in candidates],
    )


#: the candidate fields ``scored_candidates`` reads: those of ``score_candidates``, then these
SCORED_FIELDS = (*CANDIDATE_FIELDS, "id", "q", "updated_ms")


def scored_candidates(
    query: str,
    task: str | None,
    task_as_query: bool,
    candidates: Sequence[Sequence[Any]],
    fields: tuple[int, ...],
    kinds: Collection[str] | None,
    role_kinds: Collection[str] | None,
    relevance: Mapping[str, float] | None,
    recency: tuple[float, float] | None,
    recency_weight: float,
    q_weight: float,
) -> list[Scored]:
    """Per candidate, its :class:`Scored`: the row of :func:`score_candidates` (``fields``
    gives the position of every name of :data:`SCORED_FIELDS`), and

    - without ``relevance``, the row's base score;
    - with it, ``base + (w_text * (relevance - text) - recency_weight * stale * relevance)``:
      the candidate's text relevance (0 when absent) in the text factor's place, less its
      staleness (``1 -`` the :func:`freshness` of its update time for ``recency = (now_ms,
      half_life_ms)``; 0 without ``recency``, a positive half-life or an update time) times
      that relevance: a memory just written loses nothing, an old one up to
      ``recency_weight`` of its relevance;

    and as its score that base plus ``(q - 0.5) * q_weight``; best first: by score, highest
    first, ties by id (a str), then in their order."""
    if len(fields) != len(SCORED_FIELDS):
        raise ValueError("scored_candidates: fields must give a position per SCORED_FIELDS")
    rows = score_candidates(query, task, task_as_query, candidates, fields[:-3], kinds, role_kinds)
    key_at, q_at, updated_at = fields[-3:]
    out: list[Scored] = []
    append = out.append
    if relevance is None:
        for c, row in zip(candidates, rows, strict=True):
            base = row.base
            append(_new_row(Scored, (c, row, base, base + (c[q_at] - 0.5) * q_weight, None, None)))
        return _best_first(out, key_at)
    w_text = WEIGHTS[0]
    now_ms, half_life = recency if recency is not None else (0.0, 0.0)
    relevant = relevance.get
    for c, row in zip(candidates, rows, strict=True):
        key = c[key_at]
        value = relevant(key, 0.0)
        updated = c[updated_at]
        stale = 0.0 if updated is None else staleness(updated, now_ms, half_life)
        base = row.base + (w_text * (value - row.text) - recency_weight * stale * value)
        score = base + (c[q_at] - 0.5) * q_weight
        append(_new_row(Scored, (c, row, base, score, value, None)))
    return _best_first(out, key_at)


def freshness(updated_ms: float, now_ms: float, half_life_ms: float) -> float:
    """How recent an update is, in ``[0, 1]``: ``0.5 ** (age / half_life_ms)`` of its age at
    ``now_ms`` (1 for an update at or after ``now_ms``; 0 without a positive half-life)."""
    if not half_life_ms > 0.0:
        return 0.0
    age = now_ms - updated_ms
    return 1.0 if age <= 0.0 else 0.5 ** (age / half_life_ms)


def staleness(updated_ms: float, now_ms: float, half_life_ms: float) -> float:
    """``1 - freshness`` of an update (0 without a positive half-life: nothing ages)."""
    return 1.0 - freshness(updated_ms, now_ms, half_life_ms) if half_life_ms > 0.0 else 0.0


def _best_first(scored: list[Scored], key_at: int) -> list[Scored]:
    """``scored`` by score, highest first, ties by id: by id, then stably by score."""
    if any(not isinstance(s.fields[key_at], str) for s in scored):
        raise TypeError("scored_candidates: candidate ids must be str")
    scored.sort(key=lambda s: s.fields[key_at])
    scored.sort(key=_SCORE, reverse=True)
    return scored


_SCORE = operator.itemgetter(3)


#: the candidate fields ``ranked_candidates`` reads: those of ``scored_candidates``, then the
#: ones its filters need
RANKED_FIELDS = (*SCORED_FIELDS, "expires_ms", "inactive", "scope_key")


class RankRules(NamedTuple):
    """The rules :func:`ranked_candidates` applies around the scores."""

    #: a candidate of another scope is dropped
    scope_keys: Collection[str]
    #: with ``check_expiry``, a candidate whose ``expires_ms`` is at most this is dropped
    now_ms: float
    check_expiry: bool
    #: with ``check_q``, a candidate whose Q-value is below ``threshold`` is held back
    check_q: bool
    threshold: float
    #: drop a scored candidate without relevance whose row matched no query word
    require_signal: bool
    #: drop a scored candidate whose base score is below this (``None``: keep every one)
    min_base: float | None
    #: the recency feature's half-life in milliseconds (age at ``now_ms``; 0: no recency)
    half_life_ms: float = 0.0


class Ranked(NamedTuple):
    """What :func:`ranked_candidates` returns."""

    #: the candidates that passed every rule, scored, best first
    kept: list[Scored]
    #: the low-Q candidates held back, in their order
    held: list[Any]
    #: how many candidates the filters dropped (expired, inactive, out of scope, wrong kind)
    dropped: int
    #: how many scored candidates ``require_signal`` dropped
    no_signal: int
    #: how many of the rest ``min_base`` dropped
    below: int
    #: the recency feature's ``(now_ms, half_life_ms)`` (``None`` without ``relevance`` or
    #: a positive half-life)
    recency: tuple[float, float] | None


def ranked_candidates(
    query: str,
    task: str | None,
    task_as_query: bool,
    candidates: Sequence[Sequence[Any]],
    fields: tuple[int, ...],
    kinds: Collection[str] | None,
    role_kinds: Collection[str] | None,
    relevance: Mapping[str, float] | None,
    recency_weight: float,
    q_weight: float,
    rules: RankRules,
) -> Ranked:
    """One ranking of a batch: the filters, then :func:`scored_candidates`, then the signal
    and base-score rules (``fields`` gives the position of every name of
    :data:`RANKED_FIELDS`).

    A candidate is dropped when it expired, is inactive, is out of ``rules.scope_keys`` or
    (``kinds`` given) of another kind; of the rest, a low-Q one is held back; the others are
    eligible. With ``relevance`` and a positive ``rules.half_life_ms``, each scored
    candidate's recency is the :func:`freshness` of its update time at ``rules.now_ms``. Of
    the scored eligible candidates, ``require_signal`` drops those with no
    relevance whose row matched no query word (text, tag, file, symbol or kind words), then
    ``min_base`` those whose base is below it."""
    if len(fields) != len(RANKED_FIELDS):
        raise ValueError("ranked_candidates: fields must give a position per RANKED_FIELDS")
    if len(rules) != len(RankRules._fields):
        raise ValueError("ranked_candidates: rules must hold every field of RankRules")
    if min(fields) < 0:
        raise ValueError("ranked_candidates: field positions must not be negative")
    eligible, held, dropped = _split_candidates(candidates, fields, kinds, rules)
    timed = relevance is not None and rules.half_life_ms > 0.0
    recency = (rules.now_ms, rules.half_life_ms) if timed else None
    scored = scored_candidates(
        query,
        task,
        task_as_query,
        eligible,
        fields[:12],
        kinds,
        role_kinds,
        relevance,
        recency,
        recency_weight,
        q_weight,
    )
    kept, no_signal, below = _apply_rules(scored, rules)
    return Ranked(kept, held, dropped, no_signal, below, recency)


# The stages of ``ranked_candidates`` around the scores.


def _split_candidates(
    candidates: Sequence[Sequence[Any]],
    fields: tuple[int, ...],
    kinds: Collection[str] | None,
    rules: RankRules,
) -> tuple[list[Any], list[Any], int]:
    """The eligible candidates, the low-Q ones held back and how many were dropped (expired,
    inactive, out of scope, of another kind), by ``rules``; ``fields`` as for
    :func:`ranked_candidates`."""
    scope_keys, now_ms, check_expiry, check_q, threshold = rules[:5]
    kind_at, q_at = fields[7], fields[10]
    expires_at, inactive_at, scope_at = fields[12:15]
    eligible: list[Any] = []
    held: list[Any] = []
    dropped = 0
    for c in candidates:
        expires = c[expires_at]
        if (
            (check_expiry and expires is not None and expires <= now_ms)
            or c[inactive_at]
            or c[scope_at] not in scope_keys
            or (kinds is not None and c[kind_at] not in kinds)
        ):
            dropped += 1
        elif check_q and c[q_at] < threshold:
            held.append(c)
        else:
            eligible.append(c)
    return eligible, held, dropped


def _apply_rules(scored: list[Scored], rules: RankRules) -> tuple[list[Scored], int, int]:
    """``scored`` less those the signal rule drops (no relevance, and no query word in the
    text, tags, files, symbols or kind words), then those whose base is below
    ``rules.min_base``; with the two counts."""
    no_signal = below = 0
    if rules.require_signal:
        signalled = [
            s
            for s in scored
            if s.relevance
            or max(s.row.text, s.row.tag, s.row.file, s.row.symbol, s.row.kind_query) > 0
        ]
        no_signal = len(scored) - len(signalled)
        scored = signalled
    if rules.min_base is not None:
        min_base = rules.min_base
        kept = [s for s in scored if s.base >= min_base]
        below = len(scored) - len(kept)
        scored = kept
    return scored, no_signal, below

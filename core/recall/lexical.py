"""The lexical stages of the recall pipeline (:mod:`.pipeline` composes them).

``reference``: provider candidates (scope/kind filter, FTS pre-selection over the newest
1,000) -> nine-factor scorer -> BM25-order bonus, exactly as the reference implementation.

Every other profile: stemmed BM25 pre-selection over every scoped record (:mod:`.bm25`) ->
the nine-factor scorer with a stemmed text relevance in place of its text-overlap factor
(:func:`text_factor`): ``sqrt(coverage) * (1 - s + s * bm25 / best bm25)``, where coverage
is the IDF-weighted share of the query's stemmed terms the memory's text holds
(:func:`weighted_coverage`), less for a text far longer than the others
(:func:`length_scaled`), and BM25's share ``s`` grows with the number of candidates. The
``bm25`` kernel's ``text_relevance`` computes them for a recall's candidates at once.
(BM25 alone is unreliable in the small scopes agents keep: with a handful of memories every
shared term's IDF is floored and a task word in a file path decides; coverage alone loses
BM25's length normalisation on long texts. Measured on public data and our own fixtures:
benchmarks/README.md.) A record without a matched term is never a candidate, so an
unrelated query returns nothing; the words of the record's kind ("test pattern", "project
fact") are no match and do not count in BM25 (:mod:`.bm25`).

Then, after any dense stages, the maxItems slice (exploration is additive) and related-item
expansion.
"""

from __future__ import annotations

import math
import operator
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import NamedTuple

import attrs

from swarmmem._speedups.bm25 import text_relevance
from swarmmem.core.model.candidates import CandidateRow
from swarmmem.core.model.ids import iso_to_ms
from swarmmem.core.model.records import MemoryRecord, RecallItem, RecallRequest, Relation
from swarmmem.core.recall import references
from swarmmem.core.recall.bm25 import (
    bm25_relevance,
    content_matches,
    match_terms,
    stemmed_query,
)
from swarmmem.core.recall.fts import FTS_BONUS, build_fts_query
from swarmmem.core.recall.rows import RecordLoader, derived, records_loader
from swarmmem.core.recall.scoring import LearningPolicy, Ranking, rank_records, rank_rows
from swarmmem.ports.storage import Candidates, StorageProvider

DEFAULT_CANDIDATE_CAP = 1000
#: the candidate count at which BM25 has half of the text factor (:func:`text_factor`; fitted
#: on public data with benchmarks/quality/calibrate.py)
BM25_HALF_SHARE_AT = 5.0
#: a text longer than this many characters, and longer than the candidates' average, has its
#: coverage scaled down (:func:`length_scaled`); memories of a few sentences never are
LENGTH_FREE_CHARS = 500
#: the exponent of that scaling (fitted on public data with benchmarks/quality/calibrate.py)
LENGTH_EXPONENT = 2.0
RELATED_RECALL_FANOUT = 2
#: how many times a recall scores again when a returned candidate's record cannot be read
#: (the store reports it and offers it no more)
UNREADABLE_RETRIES = 3


@attrs.frozen(kw_only=True)
class RecallResult:
    """Ranked items with the scorer's diagnostics counts."""

    items: tuple[RecallItem, ...]
    diagnostics: dict[str, int] = attrs.field(hash=False)
    lexical_order: tuple[str, ...] = ()
    #: the stemmed channel's text relevance in [0, 1] per scored id (empty for ``reference``)
    text_relevance: dict[str, float] = attrs.field(factory=dict, hash=False)
    candidate_count: int | None = None
    """How many items the scorer kept (``items`` may hold fewer: ``lexical_recall(keep=)``);
    ``None``: ``len(items)``."""
    #: the kept (not explored) candidates' fields, best first, even those ``items`` leaves out
    rows: tuple[CandidateRow, ...] = attrs.field(default=(), hash=False)
    #: the full records of ``rows`` (read only when asked)
    load: RecordLoader = attrs.field(default=records_loader(()), hash=False, eq=False)
    #: the scorer's ranking (items for any of its candidates; ``None`` for an empty result)
    ranking: Ranking | None = attrs.field(default=None, hash=False, eq=False)

    @property
    def kept_count(self) -> int:
        """How many items the scorer kept."""
        return len(self.items) if self.candidate_count is None else self.candidate_count


def preselect_limit(request: RecallRequest) -> int:
    """How many full-text hits (best BM25 first) a recall scores: ``max(100, 20 * maxItems)``;
    the same number bounds the dense kNN candidates."""
    return max(100, request.max_items * 20)


def recallable(record: MemoryRecord) -> bool:
    """False for outcome evidence: the record an outcome about a question (not a memory)
    leaves for reflection is never recalled, since no curator approved its text."""
    return "outcomeQuestion" not in record.metadata


def candidate_cap(request: RecallRequest) -> int:
    """The provider candidate limit (1000, or a lower quality-profile cap)."""
    if request.candidate_cap is None:
        return DEFAULT_CANDIDATE_CAP
    return min(DEFAULT_CANDIDATE_CAP, max(1, int(request.candidate_cap)))


def lexical_recall(
    store: StorageProvider,
    request: RecallRequest,
    *,
    now: str,
    policy: LearningPolicy | None = None,
    rng: Callable[[], float] | None = None,
    reference: bool = False,
    keep: int | None = None,
) -> RecallResult:
    """Run the lexical path and return items before the maxItems slice, best first.

    ``reference`` runs the reference implementation's path; otherwise the stemmed BM25
    channel selects and scores the candidates. ``keep`` builds items for only the first
    ``keep`` regular candidates (and the explored one); ``lexical_order`` and the counts
    still cover all of them.
    """
    now_ms = iso_to_ms(now)
    assert now_ms is not None, "now must be an ISO timestamp"
    ranking: Ranking | None
    ranking_of = _reference_ranking if reference else _stemmed_ranking
    for _ in range(UNREADABLE_RETRIES):
        ranking, text = ranking_of(_Pass(store, request, now, now_ms, policy, rng))
        if ranking is None:
            return RecallResult(items=(), diagnostics=_empty_diagnostics())
        result = _ranked_result(ranking, keep, text)
        if not ranking.unreadable:  # else the store reported them: score without them
            break
    return result


def candidate_rows(candidates: Candidates) -> tuple[list[CandidateRow], RecordLoader]:
    """The rows a provider gave (with its loader), or those of the records it gave."""
    if candidates.rows is not None and candidates.load is not None:
        return list(candidates.rows), candidates.load
    records = candidates.records
    return [derived(r) for r in records], records_loader(records)


class _Pass(NamedTuple):
    """What one scoring pass of :func:`lexical_recall` reads."""

    store: StorageProvider
    request: RecallRequest
    now: str
    now_ms: float
    policy: LearningPolicy | None
    rng: Callable[[], float] | None


def _reference_ranking(run: _Pass) -> tuple[Ranking | None, dict[str, float]]:
    store, request, now, now_ms, policy, rng = run
    candidates = store.select_candidates(
        scope_keys=[scope.key for scope in request.scopes],
        kinds=request.kinds,
        fts_query=build_fts_query(request.query, request.task, request.mode),
        preselect_limit=preselect_limit(request),
        # a manual recall whose words match nothing still scores the scope (the reference's
        # fallback); injection and curator recalls then return nothing
        scope_when_unmatched=request.mode == "manual",
        now=now,
        include_expired=request.include_expired,
        candidate_cap=candidate_cap(request),
        cap_before_preselect=True,
    )
    rows, load = candidate_rows(candidates)
    rows = [r for r in rows if r.recallable]
    ranking = rank_rows(request, rows, load, now_ms=now_ms, policy=policy, rng=rng)
    if candidates.fts_order is not None:
        ranking.add_fts_bonus(candidates.fts_order, FTS_BONUS)
    return ranking, {}


def _stemmed_ranking(run: _Pass) -> tuple[Ranking | None, dict[str, float]]:
    store, request, now, now_ms, policy, rng = run
    # a named file's extension ("py" of "console.py") is no query word
    query = references.without_extensions(request.query)
    match = stemmed_query(query, request.task, request.mode)
    if match is None:
        return None, {}
    candidates = store.select_candidates(
        scope_keys=[scope.key for scope in request.scopes],
        kinds=request.kinds,
        fts_query=match,
        preselect_limit=preselect_limit(request),
        scope_when_unmatched=False,
        now=now,
        include_expired=request.include_expired,
        candidate_cap=candidate_cap(request),
        cap_before_preselect=False,
        stemmed=True,
    )
    rows, load = candidate_rows(candidates)
    relevance: dict[str, float]
    if candidates.fts_scores is not None:
        relevance = candidates.fts_scores
    else:  # a store without full-text search: BM25 over the scope here
        scoped = [r for r in rows if r.recallable]
        every = bm25_relevance(scoped, match)
        best = sorted(every, key=lambda i: (-every[i], i))[: preselect_limit(request)]
        relevance = {i: every[i] for i in best}
    # a memory matching the query only through its kind's words is no candidate
    phrases = match_terms(match)
    terms = tuple(dict.fromkeys(t for phrase in phrases for t in phrase))
    marks: Sequence[int] | None = candidates.term_marks
    if marks is not None:  # the store's rows are those it scored, with their masks
        records = rows
    else:
        held = candidates.held_terms  # the store may know the terms as sets
        if held is None:
            matched = [r for r in rows if r.id in relevance and r.recallable]
            rows, held = content_matches(matched, phrases)
        records = [r for r in rows if r.id in relevance and r.recallable and r.id in held]
        marks = _masks([held[r.id] for r in records], terms)
    keys = [r.id for r in records]
    values = text_relevance(
        records,
        _TEXT_AT,
        [relevance[key] for key in keys],
        marks,
        len(terms),
        LENGTH_FREE_CHARS,
        LENGTH_EXPONENT,
        BM25_HALF_SHARE_AT,
    )
    text = dict(zip(keys, values, strict=True))
    ranking = rank_rows(
        request, records, load, now_ms=now_ms, policy=policy, rng=rng, text_relevance=text
    )
    return ranking, text


_SCORED_ID = operator.attrgetter("fields.id")
_SCORED_FIELDS = operator.attrgetter("fields")

#: where ``text_relevance`` finds a candidate's text
_TEXT_AT = CandidateRow._fields.index("text")


def _masks(sets: Sequence[frozenset[str]], terms: Sequence[str]) -> list[int]:
    """Each set of query ``terms`` as a mask (bit ``j``: ``terms[j]``), once per distinct set."""
    position = {t: j for j, t in enumerate(terms)}
    known: dict[frozenset[str], int] = {}
    out = []
    for have in sets:
        mask = known.get(have)
        if mask is None:
            mask = known[have] = sum(1 << position[t] for t in have if t in position)
        out.append(mask)
    return out


def _ranked_result(
    ranking: Ranking, keep: int | None, text_relevance: dict[str, float]
) -> RecallResult:
    """The result of ``ranking``: items for its first ``keep`` kept candidates (and the
    explored one), the order, count and records of all it kept."""
    return RecallResult(
        items=tuple(ranking.items(keep)),
        diagnostics=ranking.diagnostics,
        lexical_order=tuple(map(_SCORED_ID, ranking.kept)),
        candidate_count=len(ranking.kept) + (ranking.explored is not None),
        rows=tuple(map(_SCORED_FIELDS, ranking.kept)),
        load=ranking.load,
        text_relevance=text_relevance,
        ranking=ranking,
    )


def weighted_coverage(
    held: Mapping[str, frozenset[str]], terms: Collection[str]
) -> dict[str, float]:
    """Per candidate, the IDF-weighted share of the query's stemmed ``terms`` its text holds
    (``held``: candidate id -> the terms it holds). The IDF is the candidates' own,
    ``ln(1 + (n - df + 0.5) / (df + 0.5))`` over the ``n`` candidates, ``df`` of which hold
    the term (at least 1: a term no candidate holds weighs as much as the rarest held one),
    so a common word ("user", "work") counts for less than the rare one the question is
    about."""
    n = len(held)
    groups = Counter(held.values())  # candidates share few distinct sets of terms
    counts: Counter[str] = Counter()
    for have, size in groups.items():
        for t in have:
            counts[t] += size
    idf = {}
    for t in terms:
        df = max(1, counts[t])
        idf[t] = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
    total = math.fsum(idf.values())
    if not total:
        return dict.fromkeys(held, 0.0)
    # each set is weighed once (fsum: whatever order the set iterates in)
    weights = {have: math.fsum([idf[t] for t in have if t in idf]) / total for have in groups}
    return {key: weights[have] for key, have in held.items()}


def length_scaled(
    coverage: Mapping[str, float],
    lengths: Mapping[str, int],
    free: int = LENGTH_FREE_CHARS,
    exponent: float = LENGTH_EXPONENT,
) -> dict[str, float]:
    """The coverage of each candidate whose text is longer than ``limit`` (the candidates'
    average length or ``free`` characters, whichever is larger) times ``(limit / length) **
    exponent``; the others' unchanged.

    Coverage counts which question words a text holds, and a long text holds more of them by
    chance: in a store of long conversation turns, a reply that mentions half the question
    in passing outranked the short turn about it. BM25 normalises length within its share
    only. Concise memories (under ``free`` characters) are never scaled, so a memory that
    explains a little more than a shorter one keeps its place."""
    if not exponent or not lengths:
        return dict(coverage)
    limit = max(free, math.fsum(lengths.values()) / len(lengths))
    if max(lengths.values()) <= limit:  # the usual case for a store of concise memories
        return dict(coverage)
    return {
        key: value * (limit / lengths[key]) ** exponent if lengths[key] > limit else value
        for key, value in coverage.items()
    }


def text_factor(
    coverage: float,
    bm25: float,
    best: float,
    candidates: int,
    half_share: float = BM25_HALF_SHARE_AT,
) -> float:
    """The stemmed channel's text relevance in ``[0, 1]`` (the scorer's text factor):
    ``sqrt(coverage) * (1 - s + s * bm25 / best)``, BM25's share
    ``s = candidates / (candidates + half_share)``.

    BM25 brings term weights and length normalisation (a long text holding every query word
    by chance does not outrank a short one about the question), but its IDF is an estimate
    over the scope: over a handful of memories FTS5 floors it for any term in half of them,
    and a word in a file path or tag decides. So its share grows with the number of
    candidates (half at ``half_share`` of them), and the term-weighted coverage
    (:func:`weighted_coverage`) keeps a memory holding more of the question first in a
    small scope."""
    if coverage <= 0.0:
        return 0.0
    share = candidates / (candidates + half_share)
    ratio = bm25 / best if best > 0 else 0.0
    return math.sqrt(coverage) * (1.0 - share + share * ratio)


def text_factors(
    coverage: Mapping[str, float],
    bm25: Mapping[str, float],
    best: float,
    half_share: float = BM25_HALF_SHARE_AT,
) -> dict[str, float]:
    """:func:`text_factor` of every candidate of ``coverage`` (its BM25 in ``bm25``), the
    candidates being those of ``coverage``; the same floats, BM25's share computed once."""
    share = len(coverage) / (len(coverage) + half_share)
    keep = 1.0 - share
    out = {}
    for key, cover in coverage.items():
        if cover <= 0.0:
            out[key] = 0.0
        else:
            ratio = bm25[key] / best if best > 0 else 0.0
            out[key] = math.sqrt(cover) * (keep + share * ratio)
    return out


def _empty_diagnostics() -> dict[str, int]:
    keys = (
        "candidateCount",
        "preScoredFilteredCount",
        "scoredCount",
        "returnedCount",
        "noSignalCount",
        "belowThresholdCount",
        "suppressedLowQCount",
        "exploredCount",
    )
    return dict.fromkeys(keys, 0)


def slice_items(
    items: tuple[RecallItem, ...] | list[RecallItem], max_items: int
) -> list[RecallItem]:
    """The first ``max_items`` regular items, then any explored item (exploration is additive)."""
    normal = [it for it in items if not it.explored][:max_items]
    return normal + [it for it in items if it.explored]


def expand_related(
    store: StorageProvider,
    items: list[RecallItem],
    request: RecallRequest,
    *,
    now: str,
    policy: LearningPolicy | None = None,
) -> list[RecallItem]:
    """Fill unused slots with up to two merged memories per direct result (one hop)."""
    normal = [it for it in items if not it.explored]
    explored = [it for it in items if it.explored]
    if len(normal) >= request.max_items:
        return _dedupe(normal + explored)
    now_ms = iso_to_ms(now)
    assert now_ms is not None
    selected = {it.record.id for it in items}
    for source in list(normal):
        added = 0
        for related_id in store.related_ids(source.record.id)[:RELATED_RECALL_FANOUT]:
            if len(normal) >= request.max_items or added >= RELATED_RECALL_FANOUT:
                break
            if related_id in selected:
                continue
            record = store.get(related_id)
            if record is None or not recallable(record):
                continue
            scored = rank_records(
                request,
                [record],
                now_ms=now_ms,
                policy=policy,
                apply_min_score=False,
                require_signal=False,
            ).items()
            if not scored:
                continue
            item = scored[0]
            normal.append(
                attrs.evolve(
                    item,
                    reason=f"{item.reason}, relation=merged_with, related_from={source.record.id}",
                    relation=Relation(memory_id=source.record.id),
                    related_from=source.record.id,
                )
            )
            selected.add(related_id)
            added += 1
        if len(normal) >= request.max_items:
            break
    return _dedupe(normal + explored)


def _dedupe(items: list[RecallItem]) -> list[RecallItem]:
    seen: set[str] = set()
    out: list[RecallItem] = []
    for item in items:
        if item.record.id not in seen:
            seen.add(item.record.id)
            out.append(item)
    return out

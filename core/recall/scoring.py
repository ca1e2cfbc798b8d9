"""The nine-factor lexical scorer (policy around the ``lexical`` kernel).

For each candidate the scorer applies the pre-filters (expired, superseded, deleted, out of
scope, wrong kind), low-Q suppression, computes the weighted overlap score with the kernel,
adds the Q-value boost, keeps items whose *base* score reaches ``min_score`` and sorts by
score descending, then id ascending.
"""

from __future__ import annotations

import functools
import operator
import random
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import attrs

from swarmmem._speedups import lexical
from swarmmem._speedups.lexical import LexicalRow
from swarmmem.core.config import LearningSettings, RecallConfig
from swarmmem.core.model.candidates import CandidateRow
from swarmmem.core.model.formatting import to_fixed
from swarmmem.core.model.records import (
    MemoryRecord,
    RecallItem,
    RecallRequest,
    RecallSignals,
    q_value_of,
)
from swarmmem.core.model.roles import profile_for
from swarmmem.core.recall import references
from swarmmem.core.recall.rows import RecordLoader, derived, records_loader

#: weight of the recency feature (the non-reference paths), an age penalty: a memory loses
#: ``weight * (1 - 0.5 ** (age / half-life))`` of its text relevance (lexical, or fused with
#: dense evidence), by the age of its ``updatedAt`` (``recall.recencyHalfLifeDays``; nothing
#: when just written), so that of two memories matching the query equally the later one
#: (which supersedes the other in fact) ranks first, while recency cannot lift a weak match,
#: and a store of recent memories ranks as without it (chosen on the code-memory and public
#: sets; see benchmarks/README.md)
RECENCY_WEIGHT = 0.12
#: a day in milliseconds (the recency half-life is set in days)
DAY_MS = 86_400_000.0


def half_life_ms(request: RecallRequest) -> float:
    """The recency feature's half-life of ``request`` in milliseconds (its
    ``recency_half_life_days``, else the configuration tree's default)."""
    days = request.recency_half_life_days
    return (_RECENCY_HALF_LIFE_DAYS if days is None else days) * DAY_MS


_RECENCY_HALF_LIFE_DAYS = RecallConfig().recency_half_life_days

#: added to the score of a memory citing a file the query names (not the reference path): a
#: named file ranks the memories citing it first (a named symbol is a full symbol signal)
NAMED_REFERENCE_WEIGHT = 0.25


#: how learned Q-values affect recall: the ``learning`` node of the configuration tree (its
#: ``qBoostWeight``, ``suppressionThreshold`` and ``explorationRate``)
LearningPolicy = LearningSettings


#: a scored candidate: its fields, kernel row (with the named-reference rule applied), base
#: score, score with the Q-value boost, and the text relevance and BM25 position when known
Scored = lexical.Scored


@attrs.define
class Ranking:
    """The scorer's kept candidates (best first) and the explored one, before any
    :class:`RecallItem` is built: items (and the full records they hold) are built only for
    what a caller returns."""

    kept: list[Scored]
    explored: Scored | None
    diagnostics: dict[str, int]
    request: RecallRequest
    kinds: set[str] | None
    role_kinds: set[str] | None
    load: RecordLoader
    #: ids of candidates whose full record could not be read when it was wanted (the store
    #: reported them; a recall scores again without them)
    unreadable: set[str] = attrs.field(factory=set)
    #: the recency feature's ``(now_ms, half_life_ms)`` (``None``: it did not apply)
    recency: tuple[float, float] | None = None

    def add_fts_bonus(self, fts_order: Mapping[str, int], bonus: float) -> None:
        """Add ``((n - pos) / n) * bonus`` by BM25 position and re-sort (score desc, id asc)."""
        denom = max(len(fts_order), 1)
        kept = []
        for scored in self.kept:
            pos = fts_order.get(scored.fields.id)
            if pos is not None:
                score = scored.score + ((denom - pos) / denom) * bonus
                scored = scored._replace(score=score, fts_rank=pos + 1)
            kept.append(scored)
        best_first(kept)
        self.kept = kept

    def records(self, scored: Sequence[Scored]) -> dict[str, MemoryRecord]:
        """The full records of ``scored`` by id, read at once (unreadable ones noted)."""
        found = self.load([s.fields for s in scored])
        self.unreadable.update(s.fields.id for s in scored if s.fields.id not in found)
        return {s.fields.id: found[s.fields.id] for s in scored if s.fields.id in found}

    def kept_records(self) -> list[MemoryRecord]:
        """The full records of every kept candidate, best first."""
        found = self.records(self.kept)
        return [found[s.fields.id] for s in self.kept if s.fields.id in found]

    def items(
        self, limit: int | None = None, only: Collection[str] | None = None
    ) -> list[RecallItem]:
        """Items for the first ``limit`` kept candidates (all when None), then the explored
        one; with ``only``, for those of them whose id it holds."""
        kept = self.kept if limit is None else self.kept[:limit]
        explored = [] if self.explored is None else [self.explored]
        if only is not None:
            kept = [s for s in kept if s.fields.id in only]
            explored = [s for s in explored if s.fields.id in only]
        found = self.records([*kept, *explored])
        request, kinds, role_kinds = self.request, self.kinds, self.role_kinds
        recency = self.recency
        items = [
            _to_item(s, found[s.fields.id], request, kinds, role_kinds, recency)
            for s in kept
            if s.fields.id in found
        ]
        for s in explored:
            if s.fields.id in found:
                item = _to_item(s, found[s.fields.id], request, kinds, role_kinds, recency)
                items.append(attrs.evolve(item, explored=True))
        return items


def _reason(
    record: MemoryRecord,
    row: LexicalRow,
    role: bool,
    q: float,
    relevance: float | None,
    recent: float | None = None,
) -> str:
    """The item's reason: its non-zero signals, role, scope, confidence, Q-value and (when
    the recency feature applied) recency."""
    overlaps = (
        ("text_overlap", row.text),
        ("tag_overlap", row.tag),
        ("file_overlap", row.file),
        ("symbol_overlap", row.symbol),
    )
    parts = [f"{name}={to_fixed(v, 2)}" for name, v in overlaps if v > 0]
    if relevance is not None:
        parts.insert(0, f"relevance={to_fixed(relevance, 2)}")
    if row.task_term > 0:
        parts.append(f"task_terms={to_fixed(row.task_term, 2)}")
    if row.kind_query > 0:
        parts.append(f"kind_query={to_fixed(row.kind_query, 2)}")
    if role:
        parts.append("role_profile")
    parts.append(f"scope={record.scope.type}")
    parts.append(f"confidence={to_fixed(record.confidence, 2)}")
    if q != 0.5:
        parts.append(f"qvalue={to_fixed(q, 2)}")
    if recent is not None:
        parts.append(f"recency={to_fixed(recent, 2)}")
    return ", ".join(parts)


def best_first(scored: list[Scored]) -> None:
    """Sort ``scored`` by score, highest first, ties by id (by id, then stably by score:
    two sorts on one key each are quicker than one on a pair)."""
    scored.sort(key=_ID)
    scored.sort(key=_SCORE, reverse=True)


_ID = operator.attrgetter("fields.id")
_SCORE = operator.attrgetter("score")


def rank_records(
    request: RecallRequest, records: Sequence[MemoryRecord], **options: Any
) -> Ranking:
    """:func:`rank_rows` of records at hand (``options``: its keyword arguments)."""
    return rank_rows(request, [derived(r) for r in records], records_loader(records), **options)


def rank_rows(
    request: RecallRequest,
    records: Sequence[CandidateRow],
    load: RecordLoader,
    *,
    now_ms: float,
    policy: LearningPolicy | None = None,
    rng: Callable[[], float] | None = None,
    apply_min_score: bool = True,
    require_signal: bool | None = None,
    text_relevance: Mapping[str, float] | None = None,
) -> Ranking:
    """Score ``records`` for ``request``: the kept candidates (best first), the explored one
    and the counts.

    Args:
        request: the recall request (scopes already authorised).
        records: the candidates' fields (from the provider, or ``derived`` of records).
        load: their full records, read only for the items a caller builds (and, when the
            query names files or symbols, for the records' cited references).
        now_ms: the current time in epoch milliseconds (expiry checks).
        policy: Q-value boost, suppression and exploration settings.
        rng: random source for exploration (``random.random`` when omitted).
        apply_min_score: False for related-item expansion (minScore does not apply).
        require_signal: overrides ``request.require_query_signal``.
        text_relevance: per record id, a text relevance in ``[0, 1]`` (the stemmed BM25
            channel's, or that fused with dense evidence) that takes the text-overlap
            factor's place in the score; an old memory loses a share of it (recency).
    """
    policy = policy or LearningPolicy()
    kinds = set(request.kinds) if request.kinds else None
    role_kinds = set(profile_for(request.agent_role).kinds) if request.agent_role else None
    diag = _new_diagnostics(len(records))
    unreadable: set[str] = set()
    min_score = _min_score(request, apply_min_score)
    wants_signal = request.require_query_signal if require_signal is None else require_signal
    scorer = _BatchScorer(request, policy, kinds, role_kinds, text_relevance)
    rules = lexical.RankRules(
        scope_keys={scope.key for scope in request.scopes},
        now_ms=now_ms,
        check_expiry=not request.include_expired,
        check_q=not request.include_low_q,
        threshold=policy.suppression_threshold,
        require_signal=scorer.injection and wants_signal is not False,
        min_base=min_score,
        half_life_ms=half_life_ms(request),
    )
    batch = records if isinstance(records, list) else list(records)
    if scorer.names_references:  # the rule reads records: scored in Python
        ranked = _ranked_naming(scorer, batch, rules, load, unreadable)
    else:  # the whole batch in one kernel call
        ranked = scorer.ranked(batch, rules)
        scorer.recency = ranked.recency
    kept, suppressed = ranked.kept, ranked.held
    diag["preScoredFilteredCount"] = ranked.dropped
    diag["suppressedLowQCount"] = len(suppressed)
    diag["scoredCount"] = len(kept) + ranked.no_signal + ranked.below
    diag["noSignalCount"] = ranked.no_signal
    diag["belowThresholdCount"] = ranked.below

    explored = _explore(suppressed, scorer, policy, rng, min_score)
    diag["exploredCount"] = int(explored is not None)
    diag["returnedCount"] = len(kept) + (explored is not None)
    return Ranking(
        kept, explored, diag, request, kinds, role_kinds, load, unreadable, scorer.recency
    )


def _new_diagnostics(candidates: int) -> dict[str, int]:
    """The counts a ranking reports, all zero but the number of candidates."""
    return {
        "candidateCount": candidates,
        "preScoredFilteredCount": 0,
        "scoredCount": 0,
        "returnedCount": 0,
        "noSignalCount": 0,
        "belowThresholdCount": 0,
        "suppressedLowQCount": 0,
        "exploredCount": 0,
    }


def _min_score(request: RecallRequest, apply_min_score: bool) -> float:
    """The base score a candidate must reach: the request's ``min_score`` (0 when unset), or
    none at all for related-item expansion."""
    if not apply_min_score:
        return float("-inf")
    return request.min_score if request.min_score is not None else 0.0


def _explore(
    suppressed: Sequence[CandidateRow],
    scorer: _BatchScorer,
    policy: LearningPolicy,
    rng: Callable[[], float] | None,
    min_score: float,
) -> Scored | None:
    """With probability ``exploration_rate``, the best suppressed low-Q candidate that reaches
    ``min_score`` (by base score, then id), so a memory that lost its standing can earn it
    back."""
    if not suppressed or not policy.exploration_rate > 0:
        return None
    draw = (rng or random.random)()
    if not draw < policy.exploration_rate:
        return None
    candidates = [s for s in scorer.score(suppressed, recent=False) if s.base >= min_score]
    if not candidates:
        return None
    return min(candidates, key=lambda s: (-s.base, s.fields.id))


#: where the lexical kernel finds each of its fields in a candidate row
_KERNEL_FIELDS = tuple(CandidateRow._fields.index(name) for name in lexical.CANDIDATE_FIELDS)
_SCORED_FIELDS = tuple(CandidateRow._fields.index(name) for name in lexical.SCORED_FIELDS)
_RANKED_FIELDS = tuple(CandidateRow._fields.index(name) for name in lexical.RANKED_FIELDS)


class _BatchScorer:
    """Scores a batch of candidates with the lexical kernel: the row's base score plus the
    Q-value boost, and on the stemmed and fused paths (a ``text_relevance`` given) the
    relevance in the text factor's place, the recency feature and the named-reference rule."""

    def __init__(
        self,
        request: RecallRequest,
        policy: LearningPolicy,
        kinds: set[str] | None,
        role_kinds: set[str] | None,
        text_relevance: Mapping[str, float] | None,
    ) -> None:
        self.request = request
        self.kinds = kinds
        self.role_kinds = role_kinds
        self.q_weight = policy.q_boost_weight
        self.injection = request.mode == "injection"
        #: the kernel's first arguments: the query, the task and whether the task counts as
        #: query (an injection with a task)
        self.query_args = (request.query, request.task, self.injection and request.task is not None)
        self.text_relevance = text_relevance
        #: the eligible candidates' oldest update time and the span to the newest (set once
        #: they are known; only with a ``text_relevance``)
        self.recency: tuple[float, float] | None = None
        self.named: _NamedReferences | None = None
        #: the full records of the candidates, when the query names files or symbols
        self.cited: Mapping[str, MemoryRecord] = {}
        if text_relevance is not None:
            self.named = _named_references(request.query)

    @property
    def names_references(self) -> bool:
        """True when the query names files or symbols (or file extensions): the named-
        reference rule then scores each row in Python."""
        named = self.named
        return named is not None and (named.active or bool(named.extensions))

    def score(self, fields: Sequence[CandidateRow], *, recent: bool = True) -> list[Scored]:
        """The scored candidates of ``fields``, best first (``recent``: with the recency
        feature, which only the eligible candidates have)."""
        fields = fields if isinstance(fields, list) else list(fields)
        named = self.named
        recency = self.recency if recent else None
        if named is not None and self.names_references:
            return self._with_named(fields, self._rows(fields), named, recency)
        return lexical.scored_candidates(
            *self.query_args,
            fields,
            _SCORED_FIELDS,
            self.kinds,
            self.role_kinds,
            self.text_relevance,
            recency,
            RECENCY_WEIGHT,
            self.q_weight,
        )

    def ranked(self, fields: list[CandidateRow], rules: lexical.RankRules) -> lexical.Ranked:
        """The kernel's ranking of ``fields`` under ``rules`` (filters, scores, then the
        signal and base-score rules)."""
        return lexical.ranked_candidates(
            *self.query_args,
            fields,
            _RANKED_FIELDS,
            self.kinds,
            self.role_kinds,
            self.text_relevance,
            RECENCY_WEIGHT,
            self.q_weight,
            rules,
        )

    def _rows(self, fields: list[CandidateRow]) -> list[LexicalRow]:
        """The kernel's rows for ``fields`` (one column per factor)."""
        return lexical.score_candidates(
            *self.query_args,
            fields,
            _KERNEL_FIELDS,
            self.kinds,
            self.role_kinds,
        )

    def _with_named(
        self,
        fields: Sequence[CandidateRow],
        rows: Sequence[LexicalRow],
        named: _NamedReferences,
        recency: tuple[float, float] | None,
    ) -> list[Scored]:
        """``lexical.scored_candidates`` of ``fields`` with the named-reference rule applied
        to each row (the same floats for a row the rule leaves alone), best first."""
        text_relevance = self.text_relevance
        assert text_relevance is not None
        now_ms, half_life = recency if recency is not None else (0.0, 0.0)
        q_weight = self.q_weight
        w_text = lexical.WEIGHTS[0]
        cited = self.cited
        out: list[Scored] = []
        for f, row in zip(fields, rows, strict=True):
            key = f.id
            relevance = text_relevance.get(key, 0.0)
            updated = f.updated_ms
            stale = 0.0 if updated is None else lexical.staleness(updated, now_ms, half_life)
            fresh = -(RECENCY_WEIGHT * stale * relevance)
            signals, extra = named.signals(row, f, cited.get(key))
            base = row.base + (w_text * (relevance - row.text) + fresh + extra)
            out.append(Scored(f, signals, base, base + (f.q - 0.5) * q_weight, relevance))
        best_first(out)
        return out


class _NamedReferences:
    """The files and symbols a query names, and what they change in a candidate's row: a
    cited file the query names is a full file signal plus :data:`NAMED_REFERENCE_WEIGHT`, a
    cited symbol it names a full symbol signal; an extension shared with the cited files
    (``py``) is no file signal (:mod:`.references`)."""

    def __init__(self, query: str) -> None:
        self.files = references.query_files(query)
        self.symbols = references.query_symbols(query)
        tokens = lexical.tokenize(query)
        self.query_size = len(tokens)
        self.extensions = frozenset(t for t in tokens if t in references.SOURCE_EXTENSIONS)

    @property
    def active(self) -> bool:
        """True when the query names files or symbols (the records' citations are read)."""
        return bool(self.files or self.symbols)

    def signals(
        self, row: LexicalRow, fields: CandidateRow, record: MemoryRecord | None
    ) -> tuple[LexicalRow, float]:
        """The row with the named-reference rule applied to its signals (its base score
        unchanged), and the change of the base score (``record``, whose cited files and
        symbols are read, is given when the query names some)."""
        file = row_file = row.file
        symbol = row_symbol = row.symbol
        if self.extensions and file > 0:  # an extension alone says nothing
            shared = self.extensions & lexical.tokenize(fields.files)
            file = max(0.0, file - len(shared) / self.query_size)
        named = False
        if record is not None:
            if self.files and references.names_file(self.files, references.cited_files(record)):
                file, named = 1.0, True
            if self.symbols and references.names_symbol(
                self.symbols, references.cited_symbols(record)
            ):
                symbol = 1.0
        if file == row_file and symbol == row_symbol and not named:
            return row, 0.0
        w = lexical.WEIGHTS
        extra = w[2] * (file - row_file) + w[3] * (symbol - row_symbol)
        extra += NAMED_REFERENCE_WEIGHT if named else 0.0
        return row._replace(file=file, symbol=symbol), extra


@functools.lru_cache(maxsize=256)
def _named_references(query: str) -> _NamedReferences:
    """The :class:`_NamedReferences` of ``query`` (read only, so kept per query string)."""
    return _NamedReferences(query)


def _ranked_naming(
    scorer: _BatchScorer,
    records: list[CandidateRow],
    rules: lexical.RankRules,
    load: RecordLoader,
    unreadable: set[str],
) -> lexical.Ranked:
    """The ranking of a query that names files or symbols: the kernel filters the batch and
    gives each eligible candidate its row; the named-reference rule then scores the rows in
    Python (reading the eligible candidates' records when the query names a file or symbol;
    those it cannot read are added to ``unreadable``); the signal and base-score rules
    follow, as in the kernel."""
    assert scorer.text_relevance is not None and scorer.named is not None
    filtered = scorer.ranked(records, rules._replace(require_signal=False, min_base=None))
    scorer.recency = filtered.recency
    eligible = [s.fields for s in filtered.kept]
    if scorer.named.active:
        scorer.cited = load(eligible)
        unreadable.update(f.id for f in eligible if f.id not in scorer.cited)
    rows = [s.row for s in filtered.kept]
    scored = scorer._with_named(eligible, rows, scorer.named, scorer.recency)
    no_signal = below = 0
    if rules.require_signal:
        signalled = [s for s in scored if s.relevance or _has_query_signal(s.row)]
        no_signal = len(scored) - len(signalled)
        scored = signalled
    if rules.min_base is not None:
        kept = [s for s in scored if s.base >= rules.min_base]
        below = len(scored) - len(kept)
        scored = kept
    return lexical.Ranked(
        scored, filtered.held, filtered.dropped, no_signal, below, filtered.recency
    )


def _has_query_signal(row: LexicalRow) -> bool:
    """True when the query matched one of the candidate's fields (the task term aside)."""
    return max(row.text, row.tag, row.file, row.symbol, row.kind_query) > 0


def _to_item(
    scored: Scored,
    record: MemoryRecord,
    request: RecallRequest,
    kinds: set[str] | None,
    role_kinds: set[str] | None,
    recency: tuple[float, float] | None = None,
) -> RecallItem:
    """The recall item of a kept or explored candidate (``record``: its full record;
    ``recency``: the ranking's ``(now_ms, half_life_ms)`` when the feature applied)."""
    row = scored.row
    role = role_kinds is not None and record.kind in role_kinds
    updated = scored.fields.updated_ms
    recent = (
        None
        if recency is None or updated is None
        else lexical.freshness(updated, recency[0], recency[1])
    )
    reason = _reason(record, row, role, q_value_of(record.metadata), scored.relevance, recent)
    if scored.fts_rank is not None:
        reason = f"{reason}, fts_rank={scored.fts_rank}"
    return RecallItem(
        record=record,
        score=scored.score,
        base_score=scored.base,
        reason=reason,
        signals=RecallSignals(
            text_overlap=row.text,
            tag_overlap=row.tag,
            file_overlap=row.file,
            symbol_overlap=row.symbol,
            kind_match=kinds is not None and record.kind in kinds,
            scope_match=True,
        ),
    )

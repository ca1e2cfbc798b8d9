"""The nine-factor lexical scorer (policy around the ``lexical`` kernel).

For each candidate the scorer applies the pre-filters (expired, superseded, deleted, out of
scope, wrong kind), low-Q suppression, computes the weighted overlap score with the kernel,
adds the Q-value boost, keeps items whose *base* score reaches ``min_score`` and sorts by
score descending, then id ascending.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import attrs

from swarmmem._speedups import lexical
from swarmmem._speedups.lexical import LexicalRow
from swarmmem.core.config import LearningSettings
from swarmmem.core.model.formatting import to_fixed
from swarmmem.core.model.ids import iso_to_ms
from swarmmem.core.model.records import (
    MemoryRecord,
    RecallItem,
    RecallRequest,
    RecallSignals,
    q_value_of,
)
from swarmmem.core.model.roles import profile_for
from swarmmem.core.model.semantics import scope_key_of
from swarmmem.core.recall import references
from swarmmem.core.recall.references import FILE_KEYS, SYMBOL_KEYS, metadata_strings

SCOPE_SPECIFICITY: dict[str, float] = {
    "agent": 1.0,
    "run": 0.9,
    "repository": 0.8,
    "cohort": 0.8,
    "project": 0.65,
    "workspace": 0.45,
    "global_user": 0.3,
}
#: weight of the recency feature (the non-reference paths): ``weight * recency * lexical``,
#: recency 1 for the newest scored candidate, 0 for the oldest, linear in ``updatedAt`` in
#: between, times the candidate's lexical text relevance, so that of two memories matching
#: the query's words equally the later one (which supersedes the other in fact) ranks first,
#: while recency cannot lift a weak match or outvote a paraphrase found by embeddings alone
#: (fitted on public data with benchmarks/quality/calibrate.py)
RECENCY_WEIGHT = 0.16
#: added to the score of a memory citing a file the query names (not the reference path): a
#: named file ranks the memories citing it first (a named symbol is a full symbol signal)
NAMED_REFERENCE_WEIGHT = 0.25


#: how learned Q-values affect recall: the ``learning`` node of the configuration tree (its
#: ``qBoostWeight``, ``suppressionThreshold`` and ``explorationRate``)
LearningPolicy = LearningSettings


def symbol_field(record: MemoryRecord) -> str:
    """The symbol text of a record (metadata symbol keys)."""
    return " ".join(metadata_strings(record.metadata, SYMBOL_KEYS))


def is_expired(record: MemoryRecord, now_ms: float) -> bool:
    """True when the record has a parsable ``expiresAt`` at or before ``now_ms``."""
    expires = derived(record).expires_ms
    return expires is not None and expires <= now_ms


class Derived(NamedTuple):
    """What the scorer reads of a record besides its text, in the kernel's shape."""

    tags: str
    files: str
    symbols: str
    kind_words: str
    ref: str
    specificity: float
    scope_key: str
    updated_ms: float | None
    expires_ms: float | None
    q: float
    #: the seven full-text columns (text, tags, kind words, source path, source ref, symbols,
    #: metadata files), as the stores index them (:func:`~.bm25.record_fields`)
    columns: tuple[str, ...]


def derived(record: MemoryRecord) -> Derived:
    """The scorer's fields of ``record``, computed once per record object and kept with it
    (a store that holds its records, like the in-memory and JSONL ones, pays for them once)."""
    cached: Derived | None = record._derived
    if cached is None:
        tags = " ".join(record.tags)
        kind_words = record.kind.replace("_", " ")
        ref = record.source.ref or ""
        symbols = symbol_field(record)
        listed = metadata_strings(record.metadata, FILE_KEYS)
        path = record.source.file_path if isinstance(record.source.file_path, str) else None
        cached = Derived(
            tags=tags,
            files=" ".join(listed if path is None else [path, *listed]),
            symbols=symbols,
            kind_words=kind_words,
            ref=ref,
            specificity=SCOPE_SPECIFICITY.get(record.scope.type, 0.0),
            scope_key=scope_key_of(record.scope),
            updated_ms=iso_to_ms(record.updated_at),
            expires_ms=iso_to_ms(record.expires_at),
            q=q_value_of(record.metadata),
            columns=(record.text, tags, kind_words, path or "", ref, symbols, " ".join(listed)),
        )
        object.__setattr__(record, "_derived", cached)
    return cached


@attrs.define
class _Scored:
    """A scored candidate: its kernel row (with the named-reference rule applied), base score,
    score with the Q-value boost, and the text relevance and BM25 position when known."""

    record: MemoryRecord
    row: LexicalRow
    base: float
    score: float
    relevance: float | None = None
    fts_rank: int | None = None  # 1-based BM25 position once the bonus was added


@attrs.define
class Ranking:
    """The scorer's kept candidates (best first) and the explored one, before any
    :class:`RecallItem` is built: items are built only for what a caller returns."""

    kept: list[_Scored]
    explored: _Scored | None
    diagnostics: dict[str, int]
    request: RecallRequest
    kinds: set[str] | None
    role_kinds: set[str] | None

    def add_fts_bonus(self, fts_order: Mapping[str, int], bonus: float) -> None:
        """Add ``((n - pos) / n) * bonus`` by BM25 position and re-sort (score desc, id asc)."""
        denom = max(len(fts_order), 1)
        for scored in self.kept:
            pos = fts_order.get(scored.record.id)
            if pos is not None:
                scored.score = scored.score + ((denom - pos) / denom) * bonus
                scored.fts_rank = pos + 1
        self.kept.sort(key=lambda s: (-s.score, s.record.id))

    def items(self, limit: int | None = None) -> list[RecallItem]:
        """Items for the first ``limit`` kept candidates (all when None), then the explored
        one."""
        kept = self.kept if limit is None else self.kept[:limit]
        items = [_to_item(s, self.request, self.kinds, self.role_kinds) for s in kept]
        if self.explored is not None:
            item = _to_item(self.explored, self.request, self.kinds, self.role_kinds)
            items.append(attrs.evolve(item, explored=True))
        return items


def _reason(
    record: MemoryRecord, row: LexicalRow, role: bool, q: float, relevance: float | None
) -> str:
    """The item's reason: its non-zero signals, role, scope, confidence and Q-value."""
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
    return ", ".join(parts)


def rank_records(
    request: RecallRequest,
    records: Sequence[MemoryRecord],
    *,
    now_ms: float,
    policy: LearningPolicy | None = None,
    rng: Callable[[], float] | None = None,
    apply_min_score: bool = True,
    require_signal: bool | None = None,
    text_relevance: Mapping[str, float] | None = None,
    lexical_relevance: Mapping[str, float] | None = None,
) -> Ranking:
    """Score ``records`` for ``request``: the kept candidates (best first), the explored one
    and the counts.

    Args:
        request: the recall request (scopes already authorised).
        records: candidates from the provider.
        now_ms: the current time in epoch milliseconds (expiry checks).
        policy: Q-value boost, suppression and exploration settings.
        rng: random source for exploration (``random.random`` when omitted).
        apply_min_score: False for related-item expansion (minScore does not apply).
        require_signal: overrides ``request.require_query_signal``.
        text_relevance: per record id, a text relevance in ``[0, 1]`` (the stemmed BM25
            channel's) that takes the text-overlap factor's place in the score.
        lexical_relevance: the lexical part of ``text_relevance`` when that is fused with
            dense evidence (the recency feature scales with it); ``text_relevance`` itself
            when omitted.
    """
    policy = policy or LearningPolicy()
    kinds = set(request.kinds) if request.kinds else None
    role_kinds = set(profile_for(request.agent_role).kinds) if request.agent_role else None
    diag = _new_diagnostics(len(records))
    eligible, suppressed = _prefilter(request, records, now_ms, policy, kinds, diag)
    scorer = _BatchScorer(
        request, eligible, policy, kinds, role_kinds, text_relevance, lexical_relevance
    )
    min_score = _min_score(request, apply_min_score)

    scored_all = scorer.score(eligible)
    diag["scoredCount"] = len(scored_all)
    wants_signal = request.require_query_signal if require_signal is None else require_signal
    if scorer.injection and wants_signal is not False:
        signalled = [s for s in scored_all if s.relevance or _has_query_signal(s.row)]
        diag["noSignalCount"] = len(scored_all) - len(signalled)
        scored_all = signalled
    kept = [s for s in scored_all if s.base >= min_score]
    diag["belowThresholdCount"] = len(scored_all) - len(kept)
    kept.sort(key=lambda s: (-s.score, s.record.id))

    explored = _explore(suppressed, scorer, policy, rng, min_score)
    diag["exploredCount"] = int(explored is not None)
    diag["returnedCount"] = len(kept) + (explored is not None)
    return Ranking(kept, explored, diag, request, kinds, role_kinds)


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


def _prefilter(
    request: RecallRequest,
    records: Sequence[MemoryRecord],
    now_ms: float,
    policy: LearningPolicy,
    kinds: set[str] | None,
    diag: dict[str, int],
) -> tuple[list[MemoryRecord], list[MemoryRecord]]:
    """The candidates worth scoring and the low-Q ones held back for exploration; expired,
    superseded, deleted, out-of-scope and wrong-kind records are dropped (and counted)."""
    scope_keys = {scope.key for scope in request.scopes}
    check_expiry = not request.include_expired
    check_q = not request.include_low_q
    threshold = policy.suppression_threshold
    eligible: list[MemoryRecord] = []
    suppressed: list[MemoryRecord] = []
    for record in records:
        fields = derived(record)  # computed once per record object
        expires_ms = fields.expires_ms
        if (
            (check_expiry and expires_ms is not None and expires_ms <= now_ms)
            or record.superseded_by
            or record.deleted
            or fields.scope_key not in scope_keys
            or (kinds is not None and record.kind not in kinds)
        ):
            diag["preScoredFilteredCount"] += 1
            continue
        if check_q and fields.q < threshold:
            diag["suppressedLowQCount"] += 1
            suppressed.append(record)
            continue
        eligible.append(record)
    return eligible, suppressed


def _min_score(request: RecallRequest, apply_min_score: bool) -> float:
    """The base score a candidate must reach: the request's ``min_score`` (0 when unset), or
    none at all for related-item expansion."""
    if not apply_min_score:
        return float("-inf")
    return request.min_score if request.min_score is not None else 0.0


def _has_query_signal(row: LexicalRow) -> bool:
    """True when the query matched one of the candidate's fields (the task term aside)."""
    return max(row.text, row.tag, row.file, row.symbol, row.kind_query) > 0


def _explore(
    suppressed: Sequence[MemoryRecord],
    scorer: _BatchScorer,
    policy: LearningPolicy,
    rng: Callable[[], float] | None,
    min_score: float,
) -> _Scored | None:
    """With probability ``exploration_rate``, the best suppressed low-Q candidate that reaches
    ``min_score`` (by base score, then id), so a memory that lost its standing can earn it
    back."""
    if not suppressed or not policy.exploration_rate > 0:
        return None
    draw = (rng or random.random)()
    if not draw < policy.exploration_rate:
        return None
    candidates = [s for s in scorer.score(suppressed) if s.base >= min_score]
    if not candidates:
        return None
    return min(candidates, key=lambda s: (-s.base, s.record.id))


class _BatchScorer:
    """Scores a batch of candidates with the lexical kernel: the row's base score plus the
    Q-value boost, and on the reference path (a ``text_relevance`` given) the relevance in
    the text factor's place, the recency feature and the named-reference rule."""

    def __init__(
        self,
        request: RecallRequest,
        eligible: Sequence[MemoryRecord],
        policy: LearningPolicy,
        kinds: set[str] | None,
        role_kinds: set[str] | None,
        text_relevance: Mapping[str, float] | None,
        lexical_relevance: Mapping[str, float] | None,
    ) -> None:
        self.request = request
        self.kinds = kinds
        self.role_kinds = role_kinds
        self.q_weight = policy.q_boost_weight
        self.injection = request.mode == "injection"
        self.text_relevance = text_relevance
        #: the lexical share of the relevance (the recency feature scales with it)
        self.lexical_part = text_relevance if lexical_relevance is None else lexical_relevance
        self.recency: dict[str, float] = {}
        self.named: _NamedReferences | None = None
        if text_relevance is not None:
            self.recency = _recency([derived(r) for r in eligible], eligible)
            self.named = _NamedReferences(request.query)

    def score(self, batch: Sequence[MemoryRecord]) -> list[_Scored]:
        """The scored candidates of ``batch``, in its order."""
        fields = [derived(r) for r in batch]
        rows = self._rows(batch, fields)
        if self.text_relevance is None:
            return self._plain(batch, fields, rows)
        return self._with_relevance(batch, fields, rows, self.text_relevance)

    def _rows(self, batch: Sequence[MemoryRecord], fields: Sequence[Derived]) -> list[LexicalRow]:
        """The kernel's rows for ``batch`` (one column per factor)."""
        request, kinds, role_kinds = self.request, self.kinds, self.role_kinds
        return lexical.score_lexical(
            request.query,
            request.task,
            self.injection and request.task is not None,
            [r.text for r in batch],
            [f.tags for f in fields],
            [f.files for f in fields],
            [f.symbols for f in fields],
            [f.kind_words for f in fields],
            [f.ref for f in fields],
            [f.specificity for f in fields],
            [(0.5 if kinds is None else (1.0 if r.kind in kinds else 0.0)) for r in batch],
            [(1.0 if role_kinds is not None and r.kind in role_kinds else 0.0) for r in batch],
            [float(r.confidence) for r in batch],
        )

    def _plain(
        self, batch: Sequence[MemoryRecord], fields: Sequence[Derived], rows: Sequence[LexicalRow]
    ) -> list[_Scored]:
        """Rows scored as the kernel weighed them, plus the Q-value boost."""
        q_weight = self.q_weight
        out: list[_Scored] = []
        append = out.append
        for r, f, row in zip(batch, fields, rows, strict=True):
            base = row.base
            append(_Scored(r, row, base, base + (f.q - 0.5) * q_weight))
        return out

    def _with_relevance(
        self,
        batch: Sequence[MemoryRecord],
        fields: Sequence[Derived],
        rows: Sequence[LexicalRow],
        text_relevance: Mapping[str, float],
    ) -> list[_Scored]:
        """Rows scored with the text relevance in the text factor's place, the recency
        feature and the named-reference rule, plus the Q-value boost."""
        lexical_part = self.lexical_part
        assert lexical_part is not None
        named = self.named
        assert named is not None
        same = lexical_part is text_relevance
        recency = self.recency
        q_weight = self.q_weight
        w_text = lexical.WEIGHTS[0]
        out: list[_Scored] = []
        append = out.append
        for r, f, row in zip(batch, fields, rows, strict=True):
            key = r.id
            relevance = text_relevance.get(key, 0.0)
            lexical_share = relevance if same else lexical_part.get(key, 0.0)
            fresh = RECENCY_WEIGHT * recency.get(key, 0.0) * lexical_share
            signals, extra = named.signals(row, f, r)
            base = row.base + (w_text * (relevance - row.text) + fresh + extra)
            append(_Scored(r, signals, base, base + (f.q - 0.5) * q_weight, relevance))
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

    def signals(
        self, row: LexicalRow, fields: Derived, record: MemoryRecord
    ) -> tuple[LexicalRow, float]:
        """The row with the named-reference rule applied to its signals (its base score
        unchanged), and the change of the base score (the record's cited files and symbols
        are read only when the query names some)."""
        file = row_file = row.file
        symbol = row_symbol = row.symbol
        if self.extensions and file > 0:  # an extension alone says nothing
            shared = self.extensions & lexical.tokenize(fields.files)
            file = max(0.0, file - len(shared) / self.query_size)
        named = False
        if self.files and references.names_file(self.files, references.cited_files(record)):
            file, named = 1.0, True
        if self.symbols and references.names_symbol(self.symbols, references.cited_symbols(record)):
            symbol = 1.0
        if file == row_file and symbol == row_symbol and not named:
            return row, 0.0
        w = lexical.WEIGHTS
        extra = w[2] * (file - row_file) + w[3] * (symbol - row_symbol)
        extra += NAMED_REFERENCE_WEIGHT if named else 0.0
        return row._replace(file=file, symbol=symbol), extra


def _recency(fields: Sequence[Derived], records: Sequence[MemoryRecord]) -> dict[str, float]:
    """Per record, where its ``updatedAt`` falls between the oldest (0) and newest (1)."""
    known = [f.updated_ms for f in fields if f.updated_ms is not None]
    if len(known) < 2:
        return {}
    lo, hi = min(known), max(known)
    if lo == hi:
        return {}
    span = hi - lo
    return {
        r.id: (f.updated_ms - lo) / span
        for r, f in zip(records, fields, strict=True)
        if f.updated_ms is not None
    }


def _to_item(
    scored: _Scored,
    request: RecallRequest,
    kinds: set[str] | None,
    role_kinds: set[str] | None,
) -> RecallItem:
    """The recall item of a kept or explored candidate."""
    record = scored.record
    row = scored.row
    role = role_kinds is not None and record.kind in role_kinds
    reason = _reason(record, row, role, q_value_of(record.metadata), scored.relevance)
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

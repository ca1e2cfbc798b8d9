"""Fusion and rerank: the recall pipeline's stages after the dense kNN (:mod:`.hybrid`).
The lexical and dense evidence become one ranking (:func:`scored_fusion` for ``score`` and
``calibrated``, :func:`fused_items` for ``rrf`` and ``convex``); :func:`rerank` rescores its
top and :func:`rescue` may give a dense hit the last slot. :mod:`.pipeline` runs them, with
admission between fusion and rerank.

Every stage is a plain function. A reranker failure or a spent latency budget keeps the
fused order.

Fusion methods:

* ``score`` (the default): the scorer's text factor is where the two text channels meet,
  so the other eight factors (kind, scope, tags, files, symbols, role, confidence and the
  learned Q value) keep their weight as features. On the lexical side stands the stemmed
  channel's text relevance in ``[0, 1]``; on the dense side, a hit's cosine read against
  the query's own cosines over the store
  (:class:`~swarmmem.core.recall.hybrid.CosineProfile`). A hit becomes a candidate when its
  cosine reaches the relevance floor ``dense_floor`` and stands above the query's
  background (the mean of its 11th to 50th nearest hits). Its dense relevance
  (:func:`dense_relevance`) measures how far it stands above that background, relative to
  the nearest hit, and leans towards the plain cosine the stronger the query's lexical
  evidence. That strength (:func:`lexical_strength`) is 0 below ``weak_lexical_below`` and
  1 from ``strong_lexical_from`` on, read on the query's best lexical relevance; with it the
  lexical weight ``w`` goes from ``weak_lexical_weight`` to ``w_lex / (w_lex + w_dense)``.
  The text factor is ``w * lexical + (1 - w) * dense``, where a memory missing from a
  channel counts 0 there and a channel without any candidate does not vote. So when a
  question's words match its memory, the cosine merely breaks ties among the lexical
  candidates, and for a paraphrase the dense channel ranks. When the hits average more
  than :data:`DENSE_FREE_CHARS` characters, the dense weight shrinks (:func:`dense_trust`:
  the embedding of a long text averages many statements, and the model reads only its
  beginning). With the gate ``dense_gate``, a query of strong lexical evidence accepts
  dense evidence only if the nearest hit stands out from the next ones
  (:func:`~swarmmem.core.recall.hybrid.stands_out`), so noise in the cosine does not
  reorder good word matches. :func:`scored_evidence` combines all of this. The floors,
  weights and the length rule were fitted on public data and the code-memory dev sets
  (benchmarks/quality/).
* ``calibrated``: the text factor is the probability that a memory answers the question
  (:func:`~swarmmem.core.recall.hybrid.evidence`, the logistic model
  :data:`~swarmmem.core.recall.hybrid.FUSION_MODEL`), for every lexical candidate and
  every dense hit whose probability reaches ``dense_evidence`` (:func:`calibrated_fusion`).
* ``rrf`` (the design's): ``sum_c w_c / (k + rank_c)`` over the lexical, dense and
  metadata rankings, min-max normalised.
* ``convex``: ``w_lex * minmax(lexical score) + w_dense * minmax(cosine)`` over the union of
  candidates (missing channel = 0), min-max normalised; rewards agreement of both channels.

Rerank (optional) rescores the top :data:`RERANK_TOP_N` (20) with
``w * minmax(reranker) + (1 - w) * minmax(fused)`` (``rerank_weight`` w; 1 reproduces the
reference, which takes the reranker order alone).

An injection (a prompt hook's recall) ranks by a stricter rule: of the dense hits without
lexical support it takes only the nearest, with its cosine as its text relevance
(:func:`_injectable`); admission (:class:`~swarmmem.core.recall.admission.DenseRule`)
injects that hit only when its cosine reaches ``injection_dense_floor`` (0.35) and it stands
out from the next hits by ``injection_dense_gate`` (0.16). A paraphrase of one memory is
injected; a question near many memories, none of them clearly, is not.

Dense rescue (``dense_rescue``, a cosine floor; ``None`` turns it off): the best dense
candidate in which the lexical path found no query signal at all (no shared text, tag, file
or symbol term: the paraphrase case) takes the last slot when fusion and rerank ranked it
lower and its cosine reaches the floor; the top item is never displaced. Each channel then
contributes what only it can find. Injection mode never rescues.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import attrs

from swarmmem._speedups.fusion import rrf_fuse
from swarmmem.core.model.candidates import CandidateRow
from swarmmem.core.model.formatting import to_fixed
from swarmmem.core.model.ids import iso_to_ms
from swarmmem.core.model.records import NO_SIGNALS, MemoryRecord, RecallItem, RecallRequest
from swarmmem.core.recall.hybrid import (
    GATE_DEPTH,
    CosineProfile,
    DenseHits,
    DenseParts,
    HybridSettings,
    evidence,
    stands_out,
)
from swarmmem.core.recall.lexical import RecallResult
from swarmmem.core.recall.rows import RecordLoader, derived
from swarmmem.core.recall.scoring import LearningPolicy, Ranking, rank_rows

#: how many of the fused ranking's first items rerank rescores (:func:`rerank`)
RERANK_TOP_N = 20
#: when a query's dense hits are longer than this many characters on average, the dense
#: weight is scaled by ``(DENSE_FREE_CHARS / mean) ** DENSE_LENGTH_EXPONENT``
#: (:func:`dense_trust`)
DENSE_FREE_CHARS = 1000
DENSE_LENGTH_EXPONENT = 2.0


def metadata_order(items: Sequence[RecallItem], request: RecallRequest) -> list[str]:
    """Stable partition: scope+kind match, scope only, kind only, neither."""
    scope_keys = {scope.key for scope in request.scopes}
    kinds = set(request.kinds) if request.kinds else None
    buckets: list[list[str]] = [[], [], [], []]
    for item in items:
        scope_ok = item.record.scope.key in scope_keys
        kind_ok = kinds is None or item.record.kind in kinds
        buckets[0 if scope_ok and kind_ok else 1 if scope_ok else 2 if kind_ok else 3].append(
            item.record.id
        )
    return [i for bucket in buckets for i in bucket]


def minmax(values: dict[str, float]) -> dict[str, float]:
    if not values:
        return {}
    lo, hi = min(values.values()), max(values.values())
    span = hi - lo
    return {key: (1.0 if span == 0 else (v - lo) / span) for key, v in values.items()}


def score_fusion(
    text_relevance: Mapping[str, float],
    dense: Mapping[str, float],
    weight_lexical: float,
) -> dict[str, float]:
    """The ``score`` fusion's text relevance per memory (see the module text):
    ``w * lexical + (1 - w) * dense`` over the lexical relevance and the dense relevance
    (:func:`dense_relevance`) of the candidates; a channel without any candidate does not
    vote."""
    w = weight_lexical if text_relevance and dense else (1.0 if text_relevance else 0.0)
    return {
        key: w * text_relevance.get(key, 0.0) + (1.0 - w) * dense.get(key, 0.0)
        for key in {*text_relevance, *dense}
    }


def dense_relevance(
    cosines: Mapping[str, float], profile: CosineProfile | None, strength: float
) -> dict[str, float]:
    """The dense side of the ``score`` fusion per hit, in ``[0, 1]``: ``(1 - s) * relative +
    s * cosine`` for the query's lexical ``strength`` ``s`` (:func:`lexical_strength`), the
    relative part being how far the cosine stands above the query's background
    (:meth:`CosineProfile.relative`).

    A paraphrase's memory has a cosine of 0.2 to 0.4 where the next ones have 0.15 to 0.3:
    as a plain cosine it would hardly move the scorer's text factor, read against the
    query's background it is the best evidence there is."""
    out: dict[str, float] = {}
    for key, cosine in cosines.items():
        relative = profile.relative(cosine) if profile is not None else max(cosine, 0.0)
        out[key] = (1.0 - strength) * relative + strength * max(cosine, 0.0)
    return out


def dense_trust(lengths: Mapping[str, int]) -> float:
    """How far the dense channel's weight holds for hits of these ``lengths`` (characters):
    1, or ``(DENSE_FREE_CHARS / mean) ** DENSE_LENGTH_EXPONENT`` when their mean length
    exceeds :data:`DENSE_FREE_CHARS`. An embedding of a long text (a conversation session,
    an imported document) averages many statements and is cut to the model's first 256
    word pieces, so over such texts the lexical channel ranks (one factor for the query,
    so no text is preferred for being shorter)."""
    if not lengths:
        return 1.0
    mean = math.fsum(lengths.values()) / len(lengths)
    if mean <= DENSE_FREE_CHARS:
        return 1.0
    return float((DENSE_FREE_CHARS / mean) ** DENSE_LENGTH_EXPONENT)


def calibrated_fusion(
    text_relevance: Mapping[str, float],
    cosines: Mapping[str, float],
    profile: CosineProfile | None,
    threshold: float,
) -> dict[str, float]:
    """The ``calibrated`` fusion's text relevance per memory: :func:`evidence` for every
    lexical candidate and for every dense hit (``cosines``, nearest first) whose evidence
    reaches ``threshold`` (a dense hit below it is no candidate); without any dense hit, the
    lexical relevance alone."""
    if profile is None or not cosines:
        return dict(text_relevance)
    best = max(text_relevance.values(), default=0.0)
    lexical_rank = {
        key: rank
        for rank, key in enumerate(sorted(text_relevance, key=lambda k: (-text_relevance[k], k)))
    }
    dense_rank = {key: rank for rank, key in enumerate(cosines)}
    out = {
        key: evidence(
            profile, value, best, lexical_rank[key], cosines.get(key), dense_rank.get(key)
        )
        for key, value in text_relevance.items()
    }
    for key, cosine in cosines.items():
        if key not in out:
            p = evidence(profile, 0.0, best, None, cosine, dense_rank[key])
            if p >= threshold:
                out[key] = p
    return out


def scored_evidence(
    lexical: Mapping[str, float],
    dense: Sequence[tuple[MemoryRecord, float]],
    hit_cosines: Mapping[str, float],
    profile: CosineProfile | None,
    settings: HybridSettings,
) -> dict[str, float]:
    """The ``score`` fusion's text relevance per candidate (see the module text): the
    lexical relevance of the lexical candidates and the dense relevance of the usable
    ``dense`` hits, weighed by the query's lexical strength (:func:`lexical_strength`) and
    the dense channel's trust: its length rule (:func:`dense_trust`) and, with
    ``dense_gate``, for a query of strong lexical evidence, whether the nearest of every
    fetched hit (``hit_cosines``, nearest first) stands out (:func:`stands_out`; a strong
    query takes no dense evidence from hits that do not, a weak one is judged by the
    background rule alone). A dense hit absent from the result is no candidate."""
    strength = lexical_strength(settings, max(lexical.values(), default=0.0))
    trust = dense_trust({record.id: len(record.text) for record, _ in dense})
    gate = settings.dense_gate
    if gate is not None and strength > 0.0:  # a weak query's hits need not stand out
        nearest = list(itertools.islice(hit_cosines.values(), GATE_DEPTH))
        if not stands_out(nearest, gate):
            trust *= 1.0 - strength
    if trust <= 0.0 or not dense:
        return dict(lexical)
    # distrusted dense evidence is read as a plain cosine, at a stronger query's weight
    strength = 1.0 - (1.0 - strength) * trust
    cosines = {record.id: cosine for record, cosine in dense}
    relevance = dense_relevance(cosines, profile, strength)
    relative = profile is not None and profile.floor is not None
    weight = fusion_weight(settings, strength, trust, relative=relative)
    return score_fusion(lexical, relevance, weight)


def lexical_strength(settings: HybridSettings, lexical_best: float | None) -> float:
    """How strong a query's lexical evidence is, in ``[0, 1]``: 0 while its best lexical
    relevance ``lexical_best`` stays under ``weak_lexical_below`` (the words of the question
    match no memory well: a paraphrase, where the dense channel knows better), 1 from
    ``strong_lexical_from`` on, linear between; 1 when the rule is off or nothing was
    found lexically (``None``)."""
    weak = settings.weak_lexical_below
    if weak is None or lexical_best is None:
        return 1.0
    strong = settings.strong_lexical_from
    if strong is None or strong <= weak:
        return 0.0 if lexical_best < weak else 1.0
    return min(1.0, max(0.0, (lexical_best - weak) / (strong - weak)))


def fusion_weight(
    settings: HybridSettings, strength: float = 1.0, trust: float = 1.0, *, relative: bool = False
) -> float:
    """``w`` of the ``score`` fusion for a query's lexical ``strength``
    (:func:`lexical_strength`): from ``weak_lexical_weight`` (0; ``weak_lexical_weight_relative``
    when the dense side is ``relative`` to the query's background) to the lexical share of
    the lexical and dense weights (1), linear between; the dense part ``1 - w`` times the
    dense channel's ``trust`` (:func:`dense_trust`)."""
    total = settings.weight_lexical + settings.weight_dense
    w = settings.weight_lexical / total if total > 0 else 0.5
    if settings.weak_lexical_below is not None:
        weak = settings.weak_lexical_weight_relative if relative else settings.weak_lexical_weight
        w = weak + (w - weak) * strength
    return 1.0 - (1.0 - w) * trust


def fuse(
    lexical: Sequence[RecallItem],
    dense: Sequence[tuple[MemoryRecord, float]],
    request: RecallRequest,
    settings: HybridSettings,
) -> list[tuple[str, float]]:
    """``rrf`` or ``convex`` fused scores, min-max normalised, best first (ties by id);
    ``score`` fusion runs in the pipeline, through the scorer."""
    if settings.fusion == "convex":
        lex = minmax({it.record.id: it.score for it in lexical})
        den = minmax({rec.id: cos for rec, cos in dense})
        raw = {
            key: settings.weight_lexical * lex.get(key, 0.0)
            + settings.weight_dense * den.get(key, 0.0)
            for key in list(lex) + [k for k in den if k not in lex]
        }
    else:
        ids, scores = rrf_fuse(
            [
                [it.record.id for it in lexical],
                [rec.id for rec, _ in dense],
                metadata_order(lexical, request),
            ],
            [settings.weight_lexical, settings.weight_dense, settings.weight_metadata],
            settings.rrf_k,
        )
        raw = dict(zip(ids, scores, strict=True))
    normalized = minmax(raw)
    return sorted(normalized.items(), key=lambda kv: (-kv[1], kv[0]))


def scored_fusion(
    lexical_result: RecallResult,
    hits: DenseHits,
    request: RecallRequest,
    settings: HybridSettings,
    now: str,
    policy: LearningPolicy,
) -> Ranking:
    """``score`` and ``calibrated`` fusion: lexical and dense evidence become the scorer's
    text factor; the fused ranking (items are built for what a caller returns)."""
    dense, hit_cosines, profile = hits.candidates, hits.cosines, hits.profile
    text_relevance = lexical_result.text_relevance
    lexical = {row.id: text_relevance.get(row.id, 0.0) for row in lexical_result.rows}
    known = set(lexical)
    records: list[MemoryRecord] = []  # the dense-only candidates
    if settings.fusion == "calibrated":
        combined = calibrated_fusion(lexical, hit_cosines, profile, settings.dense_evidence)
        # a dense hit is a candidate when its calibrated evidence reaches the threshold
        records = [
            record for record, _ in dense if record.id in combined and record.id not in known
        ]
    else:
        combined = scored_evidence(lexical, dense, hit_cosines, profile, settings)
        if request.mode != "injection":
            records = [
                record for record, _ in dense if record.id not in known and record.id in combined
            ]
        elif (nearest := _injectable(dense, known, settings)) is not None:
            records.append(nearest[0])
            combined[nearest[0].id] = nearest[1]  # scored by its cosine
    now_ms = iso_to_ms(now)
    assert now_ms is not None
    return rank_rows(
        request,
        [*lexical_result.rows, *(derived(record) for record in records)],
        _with_records(lexical_result.load, records),
        now_ms=now_ms,
        policy=attrs.evolve(policy, exploration_rate=0.0),  # the lexical stage explored
        text_relevance=combined,
    )


def _with_records(load: RecordLoader, records: Sequence[MemoryRecord]) -> RecordLoader:
    """``load`` for the rows it knows, and ``records`` (at hand) for theirs."""
    at_hand = {record.id: record for record in records}

    def both(rows: Sequence[CandidateRow]) -> Mapping[str, MemoryRecord]:
        found = dict(load([row for row in rows if row.id not in at_hand]))
        found.update((row.id, at_hand[row.id]) for row in rows if row.id in at_hand)
        return found

    return both


def _injectable(
    dense: Sequence[tuple[MemoryRecord, float]],
    lexical: set[str],
    settings: HybridSettings,
) -> tuple[MemoryRecord, float] | None:
    """The one dense-only candidate an injection ranks: the nearest hit, when the words do
    not reach it and ``injection_dense_floor`` is set (admission's
    :class:`~swarmmem.core.recall.admission.DenseRule` decides whether it is injected)."""
    if settings.injection_dense_floor is None or not dense:
        return None
    record, cosine = dense[0]
    return None if record.id in lexical else (record, cosine)


def fused_items(
    regular: list[RecallItem],
    dense: Sequence[tuple[MemoryRecord, float]],
    request: RecallRequest,
    settings: HybridSettings,
) -> list[RecallItem]:
    """The fused ranking as items (dense-only hits get zero lexical signals)."""
    min_score = request.min_score or 0.0
    by_id = {it.record.id: it for it in regular}
    dense_records = {rec.id: rec for rec, _ in dense}
    items: list[RecallItem] = []
    for memory_id, score in fuse(regular, dense, request, settings):
        # Lexical items already passed min_score on their base score; min-max normalisation
        # would push the last of them to 0, so the floor applies to dense-only hits alone,
        # and injection (which requires a query signal) takes no dense-only hit at all.
        if memory_id not in by_id and (score < min_score or request.mode == "injection"):
            continue
        prefix = "rrf_fused" if settings.fusion == "rrf" else "fused"
        tag = f"{prefix}={to_fixed(score, 4)}"
        base = by_id.get(memory_id)
        if base is not None:
            items.append(attrs.evolve(base, score=score, reason=f"{base.reason}, {tag}"))
        else:
            record = dense_records[memory_id]
            items.append(RecallItem(record=record, score=score, reason=tag, signals=NO_SIGNALS))
    return items


def rerank(
    items: list[RecallItem],
    request: RecallRequest,
    parts: DenseParts,
    settings: HybridSettings,
    *,
    elapsed_ms: float,
) -> tuple[list[RecallItem], bool, int, str | None]:
    """Rescore the top items; returns (items, used, how many, degradation reason)."""
    if not settings.rerank:
        return items, False, 0, None
    if parts.reranker is None or not parts.reranker.available:
        return items, False, 0, "reranker unavailable"
    if elapsed_ms > settings.latency_budget_ms:
        return items, False, 0, "reranking skipped by latency budget"
    top = items[:RERANK_TOP_N]
    try:
        scores = [
            float(v) for v in parts.reranker.rerank(request.query, [it.record.text for it in top])
        ]
    except Exception:
        return items, False, 0, "reranker failed"
    if settings.rerank_weight < 1.0:
        fused_part = minmax({str(i): it.score for i, it in enumerate(top)})
        rerank_part = minmax({str(i): v for i, v in enumerate(scores)})
        w = settings.rerank_weight
        scores = [w * rerank_part[str(i)] + (1.0 - w) * fused_part[str(i)] for i in range(len(top))]
    order = sorted(range(len(top)), key=lambda i: (-scores[i], i))
    return [top[i] for i in order] + items[RERANK_TOP_N:], True, len(top), None


def rescue(
    items: list[RecallItem],
    dense: Sequence[tuple[MemoryRecord, float]],
    signalled: set[str],
    max_items: int,
    floor: float,
) -> list[RecallItem]:
    """Give the best dense candidate without any lexical query signal the last slot."""
    best = next((rec.id for rec, cos in dense if rec.id not in signalled and cos >= floor), None)
    if best is None:
        return items
    position = next((i for i, it in enumerate(items) if it.record.id == best), None)
    if max_items < 2 or position is None or position < max_items:
        return items
    target = max_items - 1  # never displaces the top item
    rescued = attrs.evolve(items[position], reason=f"{items[position].reason}, dense_rescue")
    rest = items[:position] + items[position + 1 :]
    return [*rest[:target], rescued, *rest[target:]]

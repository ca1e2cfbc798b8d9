"""The dense stages of the recall pipeline: query embedding, kNN, metadata order, fusion,
dense rescue (:mod:`.pipeline` runs them, with rerank, after the lexical stages).

Every stage is a plain function. Any dense failure returns the exact lexical result
(disabled-path guarantee); a reranker failure or a spent latency budget keeps the fused order.

Fusion methods:

* ``score`` (the default): the two text channels are fused into the text factor of the
  nine-factor scorer, so kind, scope, tags, files, symbols, role, confidence and the learned
  Q value keep their weight as features. The lexical side is the stemmed channel's text
  relevance in ``[0, 1]``. The dense side is a hit's cosine read against that query's own
  cosines over the store (:class:`CosineProfile`): a hit is a candidate when its cosine
  reaches the relevance floor ``dense_floor`` and stands above the query's background (the
  mean of its 11th to 50th nearest hits), and its dense relevance
  (:func:`dense_relevance`) is how far it stands above that background, relative to the
  nearest hit, blended towards the plain cosine as the query's lexical evidence gets strong.
  How strong that is (:func:`lexical_strength`) runs from 0 under ``weak_lexical_below`` to
  1 at ``strong_lexical_from`` of the query's best lexical relevance, and the lexical weight
  ``w`` moves with it from ``weak_lexical_weight`` to ``w_lex / (w_lex + w_dense)``. The
  text factor is ``w * lexical + (1 - w) * dense``, a missing channel counting 0 for that
  memory; a channel without any candidate does not vote. When the words of a question match
  its memory, the cosine only breaks ties among the lexical candidates; in a paraphrase
  the dense channel ranks. Over hits longer than :data:`DENSE_FREE_CHARS` on average the
  dense weight shrinks (:func:`dense_trust`: an embedding of a long text averages many
  statements, and the model reads only its beginning). With the gate ``dense_gate``, a
  query of strong lexical evidence takes dense evidence only when the nearest hit stands
  out from the next ones (:func:`stands_out`), so the cosine does not reorder good word
  matches by noise. :func:`scored_evidence` puts it together. The floors, weights and the
  length rule were fitted on public data and the code-memory dev sets (benchmarks/quality/).
* ``rrf`` (the design's): ``sum_c w_c / (k + rank_c)`` over the lexical, dense and
  metadata rankings, min-max normalised.
* ``convex``: ``w_lex * minmax(lexical score) + w_dense * minmax(cosine)`` over the union of
  candidates (missing channel = 0), min-max normalised; rewards agreement of both channels.

Rerank (optional) rescores the top 20 with ``w * minmax(reranker) + (1 - w) * minmax(fused)``
(``rerank_weight`` w; 1 reproduces the reference, which takes the reranker order alone).

Injection (a prompt hook's recall) keeps its stricter rule: no dense hit without lexical support
but the nearest, ranked with its cosine as its text relevance; admission
(:class:`~swarmmem.core.recall.admission.DenseRule`) injects it only when it reaches
``injection_dense_floor`` (0.35) and stands out from the next hits by ``injection_dense_gate``
(0.16). A paraphrase of one memory is injected; a question near many memories, none clearly,
is not.

Dense rescue (``dense_rescue`` = a cosine floor, off when ``None``): the best dense candidate
in which the lexical path found no query signal at all (no shared text, tag, file or symbol
term: the paraphrase case) takes the last slot when fusion and rerank ranked it lower and
its cosine reaches the floor; the top item is never displaced. Lexical and dense then each
contribute what only they can find. Injection mode never rescues.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

import attrs

from swarmmem._speedups.fusion import rrf_fuse
from swarmmem.core.config import InjectionSettings, RetrievalConfig
from swarmmem.core.model.errors import EmbeddingVersionMismatchError
from swarmmem.core.model.ids import iso_to_ms, normalize_text
from swarmmem.core.model.records import MemoryRecord, RecallItem, RecallRequest
from swarmmem.core.recall.embedding_cache import EmbeddingCache
from swarmmem.core.recall.lexical import recallable
from swarmmem.core.recall.rows import is_expired
from swarmmem.ports.embedder import Embedder, query_embedding
from swarmmem.ports.reranker import Reranker
from swarmmem.ports.storage import StorageProvider
from swarmmem.ports.vectors import ScopedVectorSearch, VectorIndex

if TYPE_CHECKING:
    import numpy as np

RERANK_TOP_N = 20


_RETRIEVAL = RetrievalConfig()
_INJECTION = InjectionSettings()


@attrs.frozen(kw_only=True)
class HybridSettings:
    """``memory.retrieval`` (and the dense keys of ``memory.recall.injection``) as the pipeline
    uses them; every default is the configuration tree's."""

    rrf_k: float = _RETRIEVAL.rrf_k
    weight_lexical: float = _RETRIEVAL.weight_lexical
    weight_dense: float = _RETRIEVAL.weight_dense
    weight_metadata: float = _RETRIEVAL.weight_metadata
    fusion: str = _RETRIEVAL.fusion
    dense_floor: float | None = _RETRIEVAL.dense_floor
    dense_gate: float | None = _RETRIEVAL.dense_gate
    dense_evidence: float = _RETRIEVAL.dense_evidence
    #: the ``score`` fusion's lexical weight is ``weak_lexical_weight`` for a query whose
    #: best lexical relevance stays under ``weak_lexical_below`` and the weights' share from
    #: ``strong_lexical_from`` on, linear between (``None``: one weight for every query)
    weak_lexical_below: float | None = _RETRIEVAL.weak_lexical_below
    strong_lexical_from: float | None = _RETRIEVAL.strong_lexical_from
    weak_lexical_weight: float = _RETRIEVAL.weak_lexical_weight
    #: ``weak_lexical_weight`` where the dense side is read against the query's background
    weak_lexical_weight_relative: float = _RETRIEVAL.weak_lexical_weight_relative
    #: injection mode: the nearest dense hit without lexical support is injected when its
    #: cosine reaches this floor and it stands out from the next hits by ``injection_dense_gate``
    #: (:func:`stands_out`); ``None``: injection takes no dense-only hit
    injection_dense_floor: float | None = _INJECTION.dense_floor
    injection_dense_gate: float = _INJECTION.dense_gate
    dense_rescue: float | None = _RETRIEVAL.dense_rescue
    rerank: bool = _RETRIEVAL.rerank.enabled
    rerank_weight: float = _RETRIEVAL.rerank.weight
    latency_budget_ms: float = _RETRIEVAL.latency_budget_ms

    @classmethod
    def from_config(
        cls, retrieval: RetrievalConfig, injection: InjectionSettings, *, rerank: bool
    ) -> HybridSettings:
        """The settings of the ``retrieval`` and ``recall.injection`` nodes; ``rerank``: the
        profile reranks (``hybrid+rerank``, or ``retrieval.rerank.enabled``)."""
        return cls(
            rrf_k=retrieval.rrf_k,
            weight_lexical=retrieval.weight_lexical,
            weight_dense=retrieval.weight_dense,
            weight_metadata=retrieval.weight_metadata,
            fusion=retrieval.fusion,
            dense_floor=retrieval.dense_floor,
            dense_gate=retrieval.dense_gate,
            dense_evidence=retrieval.dense_evidence,
            weak_lexical_below=retrieval.weak_lexical_below,
            strong_lexical_from=retrieval.strong_lexical_from,
            weak_lexical_weight=retrieval.weak_lexical_weight,
            weak_lexical_weight_relative=retrieval.weak_lexical_weight_relative,
            injection_dense_floor=injection.dense_floor,
            injection_dense_gate=injection.dense_gate,
            dense_rescue=retrieval.dense_rescue,
            rerank=rerank,
            rerank_weight=retrieval.rerank.weight,
            latency_budget_ms=retrieval.latency_budget_ms,
        )


@attrs.frozen(kw_only=True)
class DenseParts:
    """What the dense stages need; all optional parts already checked for availability."""

    embedder: Embedder
    index: VectorIndex
    cache: EmbeddingCache
    reranker: Reranker | None = None


class DenseHits(NamedTuple):
    """What the dense kNN stage found (:func:`dense_candidates`)."""

    #: the usable hits with their records, nearest first
    candidates: list[tuple[MemoryRecord, float]]
    #: every fetched hit's cosine, by memory id (hits under a floor included)
    cosines: dict[str, float]
    profile: CosineProfile | None


def query_vector(parts: DenseParts, query: str) -> tuple[np.ndarray, int]:
    """The cached (or freshly computed) query embedding and how many embeds ran (the
    embedder's query side when it has one, see :func:`~swarmmem.ports.embedder.query_embedding`)."""
    version = parts.embedder.model_version
    normalized = normalize_text(query).lower()
    cached = parts.cache.get(version, normalized)
    if cached is not None:
        return cached, 0
    vector = query_embedding(parts.embedder, normalized)
    parts.cache.set(version, normalized, vector)
    return vector, 1


def dense_candidates(
    store: StorageProvider,
    parts: DenseParts,
    request: RecallRequest,
    vector: np.ndarray,
    *,
    now: str,
    k: int,
    floor: float | None = None,
    gate: float | None = None,
    evidence_threshold: float | None = None,
    above_background: bool = False,
) -> DenseHits:
    """Nearest stored memories, filtered exactly like the lexical candidates, with every
    fetched hit's cosine and the query's :class:`CosineProfile` (from the nearest hits,
    before any floor); with a relevance ``floor``, only hits whose cosine reaches it (the
    others' records are not read); with a ``gate``, none when the nearest hit does not stand
    out from the next ones by that much (:func:`stands_out`); with an
    ``evidence_threshold``, only hits whose calibrated evidence as a dense-only candidate
    reaches it (:meth:`CosineProfile.evidence_floor`); with ``above_background``, only hits
    above the profile's background (the ``score`` fusion's rule, :attr:`CosineProfile.floor`).

    An index that offers ``search_scoped`` (see :mod:`swarmmem.ports.vectors`) filters by
    scope, kind, state and expiry itself; every hit is still checked here.
    """
    now_ms = iso_to_ms(now) or 0.0
    stored = parts.index.stored_model_version()
    if stored is not None and stored != parts.embedder.model_version:
        raise EmbeddingVersionMismatchError(
            f"stored embeddings were made with {stored!r} but the embedder is "
            f"{parts.embedder.model_version!r}; run rebuild_embedding_index()"
        )
    scope_keys = {scope.key for scope in request.scopes}
    kinds = set(request.kinds) if request.kinds else None
    out: list[tuple[MemoryRecord, float]] = []
    profile: CosineProfile | None = None
    index = parts.index
    scoped = isinstance(index, ScopedVectorSearch)
    fetch = k if scoped else max(k * 4, k + 16)
    while True:
        if isinstance(index, ScopedVectorSearch):  # filtered in its database; hits re-checked
            hits = index.search_scoped(
                vector,
                fetch,
                scope_keys=sorted(scope_keys),
                kinds=None if kinds is None else sorted(kinds),
                now=now,
                include_expired=request.include_expired,
            )
        else:
            hits = index.search(vector, fetch)
        complete = len(hits) < fetch  # the index has no further hit
        if profile is None:  # from the first, nearest hits
            profile = CosineProfile.of([cos for _, cos in hits])
            if profile is not None and evidence_threshold is not None:
                lowest = profile.evidence_floor(evidence_threshold, [cos for _, cos in hits])
                floor = lowest if floor is None else max(floor, lowest)
            if profile is not None and above_background and profile.floor is not None:
                floor = profile.floor if floor is None else max(floor, profile.floor)
        cosines = dict(hits)
        if gate is not None and not stands_out([cos for _, cos in hits], gate):
            return DenseHits([], cosines, profile)
        gate = None  # judged on the first, nearest hits
        if floor is not None:  # nearest first: a hit under the floor ends the useful ones
            kept = [hit for hit in hits if hit[1] >= floor]
            complete = complete or len(kept) < len(hits)
            hits = kept
        out = []
        start = 0
        while start < len(hits):  # records are read as far as the first k usable hits need
            chunk = hits[start : start + max(k - len(out), 16)]
            start += len(chunk)
            records = store.get_many([memory_id for memory_id, _ in chunk])
            for memory_id, cosine in chunk:
                record = records.get(memory_id)
                if (
                    record is None
                    or not record.active
                    or not recallable(record)
                    or record.scope.key not in scope_keys
                    or (kinds is not None and record.kind not in kinds)
                    or (not request.include_expired and is_expired(record, now_ms))
                ):
                    continue
                out.append((record, cosine))
                if len(out) >= k:
                    return DenseHits(out, cosines, profile)
        if complete:
            return DenseHits(out, cosines, profile)
        fetch *= 4


#: how many nearest hits the dense gate needs (the best one and the mean of the others)
GATE_DEPTH = 50
#: how many nearest hits describe a query's cosines over the store (:class:`CosineProfile`)
PROFILE_DEPTH = 50
#: how many hits the background rule needs (:attr:`CosineProfile.floor`)
BACKGROUND_HITS = 20
#: the calibrated fusion: intercept, then one coefficient per
#: :meth:`CosineProfile.features`, of a logistic model of "this memory answers the
#: question", fitted by benchmarks/quality/fit_fusion.py
FUSION_MODEL: tuple[float, ...] = (-1.736, 5.565, -1.617, 1.969, 0.539, 1.969, -0.248, 0.911)


@attrs.frozen
class CosineProfile:
    """How a query's cosines over the store are spread, from its nearest
    :data:`PROFILE_DEPTH` hits: a cosine is evidence by how far it stands above the
    background of that query, not by a fixed value."""

    best: float
    #: mean of the hits ranked 11th to 50th (of the lower half with fewer than 20 hits)
    background: float
    #: standard deviation of the nearest hits, at least 0.01
    spread: float
    #: the last of them: at least the cosine of any memory that is not among the hits
    last: float
    #: how many hits it was made of (at most :data:`PROFILE_DEPTH`)
    count: int = PROFILE_DEPTH

    @classmethod
    def of(cls, cosines: Sequence[float]) -> CosineProfile | None:
        """The profile of ``cosines`` (nearest first); ``None`` without any."""
        top = list(cosines[:PROFILE_DEPTH])
        if not top:
            return None
        tail = top[10:] if len(top) >= 20 else top[len(top) // 2 :]
        mean = math.fsum(top) / len(top)
        spread = math.sqrt(math.fsum((c - mean) ** 2 for c in top) / len(top))
        return cls(
            best=top[0],
            background=math.fsum(tail) / len(tail),
            spread=max(spread, 0.01),
            last=top[-1],
            count=len(top),
        )

    @property
    def floor(self) -> float | None:
        """The lowest cosine above the background, the ``score`` fusion's candidate rule;
        ``None`` (no rule) with fewer than :data:`BACKGROUND_HITS` hits, where the background
        is no estimate of what unrelated memories score."""
        if self.count < BACKGROUND_HITS:
            return None
        return math.nextafter(self.background, math.inf)

    def relative(self, cosine: float) -> float:
        """Where ``cosine`` falls between the background (0) and the best hit (1), clipped;
        the cosine itself (at least 0) with fewer than :data:`BACKGROUND_HITS` hits."""
        if self.count < BACKGROUND_HITS:
            return max(cosine, 0.0)
        span = self.best - self.background
        if span <= 0.0:
            return 1.0 if cosine >= self.best else 0.0
        return min(1.0, max(0.0, (cosine - self.background) / span))

    def evidence_floor(self, threshold: float, cosines: Sequence[float]) -> float:
        """The lowest of ``cosines`` (the hits, nearest first) whose :func:`evidence` as a
        dense-only candidate reaches ``threshold``; ``inf`` when none does (the evidence
        falls along the hits)."""
        lowest = math.inf
        for rank, cosine in enumerate(cosines):
            if evidence(self, 0.0, 0.0, None, cosine, rank) < threshold:
                break
            lowest = cosine
        return lowest

    def features(
        self,
        lexical: float,
        lexical_best: float,
        lexical_rank: int | None,
        cosine: float | None,
        dense_rank: int | None,
    ) -> tuple[float, ...]:
        """One candidate's fusion features: the lexical relevance, its share of the query's
        best, the cosine (``last`` when the memory is not among the hits), how many spreads
        it stands above the background, how far it falls below the best cosine, and the
        reciprocal ranks ``1 / (1 + rank)`` in the lexical and the dense channel (0 when
        absent from it)."""
        c = self.last if cosine is None else cosine
        share = lexical / lexical_best if lexical_best > 0 else 0.0
        return (
            lexical,
            share,
            c,
            (c - self.background) / self.spread,
            c - self.best,
            0.0 if lexical_rank is None else 1.0 / (1 + lexical_rank),
            0.0 if dense_rank is None else 1.0 / (1 + dense_rank),
        )


def stands_out(cosines: Sequence[float], gate: float) -> bool:
    """Whether the best of ``cosines`` (nearest first) exceeds the mean of the next
    ``GATE_DEPTH - 1`` by ``gate``. With fewer hits than ``GATE_DEPTH`` the mean is no estimate
    of the unrelated memories' cosines and the gate abstains (True).

    In a store of thousands of memories some memory is always near any question (on public
    fact stores an unrelated question's best cosine is 0.18 to 0.45), so the fixed floor lets
    filler through; there a related question's nearest memory stands out from the next ones,
    an unrelated question's does not."""
    if len(cosines) < GATE_DEPTH:
        return True
    rest = cosines[1:GATE_DEPTH]
    return cosines[0] - math.fsum(rest) / len(rest) >= gate


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


#: when a query's dense hits are longer than this many characters on average, the dense
#: weight is scaled by ``(DENSE_FREE_CHARS / mean) ** DENSE_LENGTH_EXPONENT``
#: (:func:`dense_trust`)
DENSE_FREE_CHARS = 1000
DENSE_LENGTH_EXPONENT = 2.0


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


def evidence(
    profile: CosineProfile,
    lexical: float,
    lexical_best: float,
    lexical_rank: int | None,
    cosine: float | None,
    dense_rank: int | None,
) -> float:
    """The calibrated fusion's probability that a memory answers the question
    (:data:`FUSION_MODEL` over :meth:`CosineProfile.features`)."""
    features = profile.features(lexical, lexical_best, lexical_rank, cosine, dense_rank)
    logit = FUSION_MODEL[0] + math.fsum(
        b * x for b, x in zip(FUSION_MODEL[1:], features, strict=True)
    )
    if logit < -30.0:
        return 0.0
    return 1.0 / (1.0 + math.exp(-logit))


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

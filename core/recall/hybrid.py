"""The dense channel of the recall pipeline: its settings (:class:`HybridSettings`), the
parts it needs (:class:`DenseParts`), the query embedding (:func:`query_vector`), the kNN
candidates, filtered exactly like the lexical ones (:func:`dense_candidates`), and how a
query's cosines spread over the store (:class:`CosineProfile`, the gate :func:`stands_out`).
:mod:`.fusion` fuses these hits with the lexical evidence and reranks; :mod:`.pipeline`
runs both after the lexical stages.

A cosine is evidence by how far it stands above the background of its query, not by a fixed
value: the background is the mean of the query's 11th to 50th nearest hits. Under the
``score`` fusion a hit is a candidate when its cosine reaches the relevance floor
``dense_floor`` and stands above that background; the gate (``dense_gate``, and
``injection_dense_gate`` for an injection) asks whether the nearest hit stands out from the
next ones. :data:`FUSION_MODEL`, a logistic model over :meth:`CosineProfile.features`, is
the ``calibrated`` fusion's :func:`evidence`; it lives here because it also decides which
hits are that fusion's candidates (``dense_evidence``, :meth:`CosineProfile.evidence_floor`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import attrs

from swarmmem.core.config import InjectionSettings, RetrievalConfig
from swarmmem.core.model.errors import EmbeddingVersionMismatchError
from swarmmem.core.model.ids import iso_to_ms, normalize_text
from swarmmem.core.model.records import MemoryRecord, RecallRequest
from swarmmem.core.recall.embedding_cache import EmbeddingCache
from swarmmem.core.recall.lexical import recallable
from swarmmem.core.recall.rows import is_expired
from swarmmem.ports.embedder import Embedder, query_embedding
from swarmmem.ports.reranker import Reranker
from swarmmem.ports.storage import StorageProvider
from swarmmem.ports.vectors import ScopedVectorSearch, VectorIndex

if TYPE_CHECKING:
    import numpy as np

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
            **{name: getattr(retrieval, name) for name in RETRIEVAL_KEYS},
            injection_dense_floor=injection.dense_floor,
            injection_dense_gate=injection.dense_gate,
            rerank=rerank,
            rerank_weight=retrieval.rerank.weight,
        )


_RETRIEVAL_KEYS = attrs.fields_dict(RetrievalConfig)
RETRIEVAL_KEYS = tuple(
    field.name
    for field in attrs.fields(HybridSettings)
    if field.name in _RETRIEVAL_KEYS and "node" not in _RETRIEVAL_KEYS[field.name].metadata
)
"""The settings that are the ``memory.retrieval`` value of the same name (not a section such
as ``rerank``: the profile decides it, and its weight is ``rerank_weight``)."""


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

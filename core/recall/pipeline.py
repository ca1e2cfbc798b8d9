"""The one recall pipeline every caller runs: library, CLI, MCP server, demo and evaluators.

request -> provider candidates -> lexical scorer (:mod:`.lexical`) -> [dense kNN
(:mod:`.hybrid`) -> fusion (:mod:`.fusion`)] -> admission (:mod:`.admission`; every profile
but ``reference``) -> [rerank under the latency gate -> dense rescue (:mod:`.fusion`)] ->
max-items slice -> related-item expansion. Items (and the full records they hold) are built
only for what admission admits; rerank reorders what was admitted and never admits. The
prompt block and the usage row are built afterwards by :mod:`.service`.

A profile is only a configuration of this pipeline (:class:`PipelineSettings`): ``lexical`` runs
the lexical stages alone; ``hybrid`` adds the dense stages; ``hybrid+rerank`` adds rerank.
When a dense part is missing or fails, the exact lexical result comes back with the reason
(the disabled-path guarantee).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from swarmmem.core.config import RecallConfig, RetrievalConfig
from swarmmem.core.model.formatting import to_fixed
from swarmmem.core.model.records import RecallItem, RecallRequest
from swarmmem.core.recall.admission import Candidate, DenseRule, QueryEvidence, Verdict, admit
from swarmmem.core.recall.fusion import RERANK_TOP_N, fused_items, rerank, rescue, scored_fusion
from swarmmem.core.recall.hybrid import (
    DenseHits,
    DenseParts,
    HybridSettings,
    dense_candidates,
    query_vector,
)
from swarmmem.core.recall.lexical import (
    UNREADABLE_RETRIES,
    RecallResult,
    expand_related,
    lexical_recall,
    preselect_limit,
    slice_items,
)
from swarmmem.core.recall.scoring import LearningPolicy, Scored
from swarmmem.ports.storage import StorageProvider

#: Every recall profile. ``reference`` is the reference implementation's lexical path, kept
#: exact for conformance (its candidates are the newest 1,000 scoped records, then full-text
#: pre-selection among them); ``lexical`` pre-selects among every scoped record; the dense
#: profiles add embeddings to ``lexical``.
PROFILES: tuple[str, ...] = ("reference", "lexical", "hybrid", "hybrid+rerank")
DENSE_PROFILES: tuple[str, ...] = ("hybrid", "hybrid+rerank")
#: how many of the ranked candidates admission judges (:mod:`.admission`)
ADMISSION_DEPTH = 20
_RECALL = RecallConfig()
_RETRIEVAL = RetrievalConfig()


@attrs.frozen(kw_only=True)
class AdmissionSettings:
    """How admission cuts (:func:`~swarmmem.core.recall.admission.admit`); its threshold is
    the request's ``min_relevance`` (``recall.minRelevance``, or
    ``recall.injection.minRelevance`` for an injection). Every default is the configuration
    tree's."""

    #: an injected memory's relevance is at least this share of the best candidate's
    injection_drop_off: float = _RECALL.injection.drop_off
    #: the same for a manual recall
    drop_off: float = _RECALL.drop_off
    #: a manual recall admits a memory on its cosine when it reaches ``retrieval.denseFloor``
    #: and stands this many spreads above the question's background
    dense_stands: float = _RETRIEVAL.dense_stands
    #: an injection admits the nearest dense hit the prompt's words reach too weakly when
    #: its cosine reaches this (``None``: never), if nothing else is admitted
    supported_cosine: float | None = _RECALL.injection.supported_cosine

    @classmethod
    def from_config(cls, recall: RecallConfig, retrieval: RetrievalConfig) -> AdmissionSettings:
        """The settings of the ``recall`` and ``retrieval`` nodes."""
        return cls(
            injection_drop_off=recall.injection.drop_off,
            drop_off=recall.drop_off,
            dense_stands=retrieval.dense_stands,
            supported_cosine=recall.injection.supported_cosine,
        )

    def rule(self, request: RecallRequest, hybrid: HybridSettings) -> tuple[float, DenseRule]:
        """The drop-off and the dense rule of ``request``'s mode."""
        if request.mode == "injection":
            rule = DenseRule(
                floor=hybrid.injection_dense_floor,
                gate=hybrid.injection_dense_gate,
                injection=True,
                supported=self.supported_cosine,
            )
            return self.injection_drop_off, rule
        rule = DenseRule(floor=hybrid.dense_floor, gate=self.dense_stands, injection=False)
        return self.drop_off, rule


@attrs.frozen(kw_only=True)
class PipelineSettings:
    """How the pipeline runs: the profile, its learning policy and, unless lexical, the
    dense-stage settings (rerank on for ``hybrid+rerank``)."""

    profile: str = "lexical"
    policy: LearningPolicy = attrs.field(factory=LearningPolicy)
    hybrid: HybridSettings = attrs.field(factory=HybridSettings)
    admission: AdmissionSettings = attrs.field(factory=AdmissionSettings)

    @property
    def dense(self) -> bool:
        """True when the profile runs the dense stages."""
        return self.profile in DENSE_PROFILES


@attrs.frozen(kw_only=True)
class RecallTrace:
    """What the pipeline did (evaluators and diagnostics read it)."""

    status: str  # complete | degraded
    degradation_reason: str | None = None
    used_embedding: bool = False
    used_reranker: bool = False
    lexical_candidate_count: int = 0
    dense_candidate_count: int = 0
    rerank_candidate_count: int = 0
    query_embedding_invocation_count: int = 0
    #: admission's verdict on each judged candidate, in ranked order (none for ``reference``)
    admission: tuple[Verdict, ...] = ()


def run_recall(
    store: StorageProvider,
    request: RecallRequest,
    *,
    now: str,
    config: PipelineSettings | None = None,
    parts: DenseParts | None = None,
    rng: Callable[[], float] | None = None,
    timer: Callable[[], float] = time.perf_counter,
) -> tuple[RecallResult, RecallTrace]:
    """Rank the memories of ``request``'s scopes, best first, expanded with related ones.

    ``config`` defaults to the lexical profile. With a dense profile, ``parts`` are the ready
    embedder, vector index, cache and optional reranker (``None``: unavailable, and the
    lexical result comes back marked degraded).

    A candidate whose full record cannot be read when its item is built is reported by the
    store and offered no more; the recall then runs again without it (at most
    :data:`~swarmmem.core.recall.lexical.UNREADABLE_RETRIES` times).
    """
    for _ in range(UNREADABLE_RETRIES):
        unreadable: set[str] = set()
        result, trace = _recall_once(
            store, request, now, config or PipelineSettings(), parts, rng, timer, unreadable
        )
        if not unreadable:
            break
    return result, trace


def _recall_once(
    store: StorageProvider,
    request: RecallRequest,
    now: str,
    config: PipelineSettings,
    parts: DenseParts | None,
    rng: Callable[[], float] | None,
    timer: Callable[[], float],
    unreadable: set[str],
) -> tuple[RecallResult, RecallTrace]:
    """One pass of :func:`run_recall`; the ids of candidates whose records could not be read
    go to ``unreadable``."""
    started = timer()
    settings = config.hybrid
    reference = config.profile == "reference"
    # items are built only for what is returned (with admission: what it admits, from the
    # ranking), unless a dense stage reads every lexical item (rank fusion, the dense
    # rescue); score fusion re-ranks the kept records
    every_item = config.dense and (settings.fusion != "score" or settings.dense_rescue is not None)
    lexical = lexical_recall(
        store,
        # admission, not the ranking score, decides what is returned (reference: the score)
        request if reference else attrs.evolve(request, min_score=0.0),
        now=now,
        policy=config.policy,
        rng=rng,
        reference=reference,
        keep=None if every_item else (request.max_items if reference else 0),
    )
    judge = None if reference else _Judge(request, config.admission, settings)
    finish = _Finisher(store, request, lexical, now, config.policy, judge, unreadable)
    if not config.dense:
        return finish.lexical_only(None)
    if parts is None:
        return finish.lexical_only("dense retrieval is unavailable")
    try:
        hits, embeds = _dense_hits(store, parts, request, settings, now)
    except Exception:  # any dense failure degrades to the exact lexical result
        return finish.lexical_only("dense retrieval failed")
    regular = [it for it in lexical.items if not it.explored]
    explored = [it for it in lexical.items if it.explored]
    cosines = {record.id: cosine for record, cosine in hits.candidates}
    verdicts: tuple[Verdict, ...] = ()
    if settings.fusion in ("score", "calibrated"):
        fused = scored_fusion(lexical, hits, request, settings, now, config.policy)
        shown = _shown(request, settings)
        if judge is None:
            items = _with_cosines(fused.items(shown), cosines)
        else:
            ids, verdicts = judge.ranked(
                fused.kept, fused.explored, judge.evidence(lexical, hits), shown
            )
            items = _with_cosines(fused.items(only=ids), cosines)
        unreadable.update(fused.unreadable)
    else:
        items = fused_items(regular, hits.candidates, request, settings)
        if judge is not None:
            items, verdicts = judge.items(items + explored, judge.evidence(lexical, hits))
            explored = []
    items, used_reranker, rerank_count, reason = rerank(
        items, request, parts, settings, elapsed_ms=(timer() - started) * 1000.0
    )
    if settings.dense_rescue is not None and request.mode != "injection":
        signalled = {it.record.id for it in regular if _has_signal(it)}
        items = rescue(items, hits.candidates, signalled, request.max_items, settings.dense_rescue)
    trace = RecallTrace(
        status="degraded" if reason else "complete",
        degradation_reason=reason,
        used_embedding=True,
        used_reranker=used_reranker,
        lexical_candidate_count=len(lexical.rows),
        dense_candidate_count=len(hits.candidates),
        rerank_candidate_count=rerank_count,
        query_embedding_invocation_count=embeds,
        admission=verdicts,
    )
    return finish(items + explored, trace)


@attrs.frozen
class _Judge:
    """Admission for one request (:func:`~swarmmem.core.recall.admission.admit`) over the
    first :data:`ADMISSION_DEPTH` ranked candidates."""

    request: RecallRequest
    settings: AdmissionSettings
    hybrid: HybridSettings

    def evidence(self, lexical: RecallResult, hits: DenseHits | None = None) -> QueryEvidence:
        """What admission reads of the question: its words, the lexical relevance and, with
        ``hits``, its cosines."""
        if hits is None:
            return QueryEvidence.of(self.request, lexical.text_relevance)
        return QueryEvidence.of(self.request, lexical.text_relevance, hits.cosines, hits.profile)

    def verdicts(
        self,
        candidates: Sequence[Candidate],
        evidence: QueryEvidence,
        rivals: Sequence[Candidate] = (),
    ) -> tuple[Verdict, ...]:
        """A verdict for each of ``candidates`` (``rivals``: the ranking's others)."""
        drop_off, dense = self.settings.rule(self.request, self.hybrid)
        return tuple(
            admit(
                candidates,
                evidence,
                threshold=self.request.min_relevance or 0.0,
                drop_off=drop_off,
                dense=dense,
                rivals=rivals,
            )
        )

    def ranked(
        self,
        kept: Sequence[Scored],
        explored: Scored | None,
        evidence: QueryEvidence,
        limit: int | None,
    ) -> tuple[set[str], tuple[Verdict, ...]]:
        """The ids of a ranking's candidates to build items for (the first ``limit`` admitted
        ones, all when ``None``, and the explored one when admitted) and every verdict."""
        judged = [*kept[:ADMISSION_DEPTH], *([] if explored is None else [explored])]
        rivals = [_candidate(s) for s in kept[ADMISSION_DEPTH:] if s is not explored]
        verdicts = self.verdicts([_candidate(s) for s in judged], evidence, rivals)
        admitted = [v.memory_id for v in verdicts if v.admitted]
        first = set(admitted[:limit])
        if explored is not None and explored.fields.id in admitted:
            first.add(explored.fields.id)
        return first, verdicts

    def items(
        self, items: Sequence[RecallItem], evidence: QueryEvidence
    ) -> tuple[list[RecallItem], tuple[Verdict, ...]]:
        """The admitted ones of the first :data:`ADMISSION_DEPTH` ``items``, and every
        verdict."""
        judged = list(items[:ADMISSION_DEPTH])
        rivals = [Candidate.of_item(it) for it in items[ADMISSION_DEPTH:]]
        verdicts = self.verdicts([Candidate.of_item(it) for it in judged], evidence, rivals)
        kept = [it for it, v in zip(judged, verdicts, strict=True) if v.admitted]
        return kept, verdicts


def _candidate(scored: Scored) -> Candidate:
    row = scored.row
    return Candidate(scored.fields.id, scored.fields.columns, row.file > 0 or row.symbol > 0)


def _shown(request: RecallRequest, settings: HybridSettings) -> int | None:
    """How much of a fused ranking rerank and the dense rescue read (the rest is never
    shown); ``None``: all of it."""
    if settings.dense_rescue is not None:
        return None
    return request.max_items + (RERANK_TOP_N if settings.rerank else 0)


def _with_cosines(items: list[RecallItem], cosines: Mapping[str, float]) -> list[RecallItem]:
    """``items``, the reason of those the dense channel found naming their cosine."""
    return [
        attrs.evolve(it, reason=f"{it.reason}, cosine={to_fixed(cosines[it.record.id], 2)}")
        if it.record.id in cosines
        else it
        for it in items
    ]


@attrs.frozen
class _Finisher:
    """The last step of every recall: the returned items cut to ``max_items`` and expanded
    with related memories, and the lexical stage's diagnostics updated for them."""

    store: StorageProvider
    request: RecallRequest
    lexical: RecallResult
    now: str
    policy: LearningPolicy
    judge: _Judge | None = None
    #: where the ids of candidates whose records could not be read go
    unreadable: set[str] = attrs.field(factory=set)

    def __call__(
        self, items: list[RecallItem], trace: RecallTrace
    ) -> tuple[RecallResult, RecallTrace]:
        """The result of ``items`` (best first) with ``trace``."""
        request, lexical = self.request, self.lexical
        items = expand_related(
            self.store,
            slice_items(items, request.max_items),
            request,
            now=self.now,
            policy=self.policy,
        )
        diagnostics: dict[str, Any] = dict(lexical.diagnostics)
        diagnostics["returnedCount"] = len(items)
        diagnostics["exploredCount"] = sum(1 for it in items if it.explored)
        if trace.admission:  # what admission judged and left out (below its threshold)
            diagnostics["notAdmittedCount"] = sum(1 for v in trace.admission if not v.admitted)
        if trace.used_embedding:
            diagnostics["fusionActive"] = True
        result = RecallResult(
            items=tuple(items), diagnostics=diagnostics, lexical_order=lexical.lexical_order
        )
        return result, trace

    def lexical_only(self, reason: str | None) -> tuple[RecallResult, RecallTrace]:
        """The lexical result alone, degraded for ``reason`` when one is given."""
        trace = RecallTrace(
            status="degraded" if reason else "complete",
            degradation_reason=reason,
            lexical_candidate_count=self.lexical.kept_count,
        )
        ranking = self.lexical.ranking
        if self.judge is None or ranking is None:
            return self(list(self.lexical.items), trace)
        evidence = self.judge.evidence(self.lexical)
        limit = self.request.max_items
        ids, verdicts = self.judge.ranked(ranking.kept, ranking.explored, evidence, limit)
        items = ranking.items(only=ids)
        self.unreadable.update(ranking.unreadable)
        return self(items, attrs.evolve(trace, admission=verdicts))


def _dense_hits(
    store: StorageProvider,
    parts: DenseParts,
    request: RecallRequest,
    settings: HybridSettings,
    now: str,
) -> tuple[DenseHits, int]:
    """The dense kNN hits of the request's embedded text (at or above the relevance floor)
    and how many embeds that took; injection embeds the task (the person's words), not the
    plan's labelled lines, as its lexical side reads the task's terms."""
    embedded = request.task if request.mode == "injection" and request.task else request.query
    vector, embeds = query_vector(parts, embedded)
    k = request.candidate_cap if request.candidate_cap else preselect_limit(request)
    calibrated = settings.fusion == "calibrated"
    hits = dense_candidates(
        store,
        parts,
        request,
        vector,
        now=now,
        k=k,
        floor=settings.dense_floor,
        # score fusion weighs the gate per query (scored_evidence); calibrated has its own rule
        gate=None if settings.fusion in ("score", "calibrated") else settings.dense_gate,
        evidence_threshold=settings.dense_evidence if calibrated else None,
        above_background=settings.fusion == "score",
    )
    return hits, embeds


def _has_signal(item: RecallItem) -> bool:
    s = item.signals
    return s.text_overlap > 0 or s.tag_overlap > 0 or s.file_overlap > 0 or s.symbol_overlap > 0

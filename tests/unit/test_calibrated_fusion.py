"""The calibrated fusion (``retrieval.fusion: calibrated``): the query's cosine profile, the
logistic evidence over per-query-normalised features and the dense evidence threshold."""

from __future__ import annotations

import math

import attrs
import pytest

from swarmmem.core.recall.fusion import calibrated_fusion
from swarmmem.core.recall.hybrid import FUSION_MODEL, PROFILE_DEPTH, CosineProfile, evidence


def test_profile_of_the_nearest_hits() -> None:
    cosines = [0.8] + [0.3] * 9 + [0.1] * 60
    profile = CosineProfile.of(cosines)
    assert profile is not None
    assert profile.best == 0.8
    assert profile.background == pytest.approx(0.1)  # ranks 11..50 only
    assert profile.last == 0.1  # the 50th
    top = cosines[:PROFILE_DEPTH]
    mean = sum(top) / len(top)
    assert profile.spread == pytest.approx(math.sqrt(sum((c - mean) ** 2 for c in top) / 50))
    assert CosineProfile.of([]) is None
    small = CosineProfile.of([0.5, 0.4, 0.2, 0.1])  # fewer than 20: the lower half
    assert small is not None and small.background == pytest.approx(0.15)
    assert CosineProfile.of([0.3, 0.3]).spread == 0.01  # type: ignore[union-attr]


def test_a_cosine_standing_out_of_its_query_is_more_evidence() -> None:
    """The same cosine is strong evidence over a low background, weak over a high one."""
    low = CosineProfile.of([0.45] + [0.05] * 60)
    high = CosineProfile.of([0.47, 0.46] + [0.44] * 60)
    assert low is not None and high is not None
    assert evidence(low, 0.0, 0.0, None, 0.45, 0) > evidence(high, 0.0, 0.0, None, 0.45, 3)


def test_evidence_is_the_logistic_model() -> None:
    profile = CosineProfile.of([0.6, 0.5, 0.4] + [0.2] * 50)
    assert profile is not None
    features = profile.features(0.7, 0.9, 1, 0.5, 1)
    logit = FUSION_MODEL[0] + sum(b * x for b, x in zip(FUSION_MODEL[1:], features, strict=True))
    assert evidence(profile, 0.7, 0.9, 1, 0.5, 1) == pytest.approx(1 / (1 + math.exp(-logit)))
    # absent from a channel: the cosine is the profile's last, the rank feature 0
    assert profile.features(0.0, 0.9, None, None, None)[2] == profile.last
    assert profile.features(0.0, 0.9, None, None, None)[5:] == (0.0, 0.0)


def test_evidence_floor_is_the_last_hit_reaching_the_threshold() -> None:
    cosines = [0.7, 0.6, 0.5] + [0.2 - i / 1000 for i in range(60)]
    profile = CosineProfile.of(cosines)
    assert profile is not None
    for threshold in (0.05, 0.2, 0.5, 0.9):
        floor = profile.evidence_floor(threshold, cosines)
        kept = [c for c in cosines if c >= floor]
        for rank, cosine in enumerate(kept):
            assert evidence(profile, 0.0, 0.0, None, cosine, rank) >= threshold
        if len(kept) < len(cosines):
            assert evidence(profile, 0.0, 0.0, None, cosines[len(kept)], len(kept)) < threshold
    assert profile.evidence_floor(0.999999, cosines) == math.inf


def test_calibrated_fusion_keeps_lexical_candidates_and_thresholds_dense_only_hits() -> None:
    cosines = {"a": 0.7, "b": 0.6} | {f"x{i}": 0.2 - i / 1000 for i in range(60)}
    profile = CosineProfile.of(list(cosines.values()))
    lexical = {"c": 0.9, "x59": 0.2}
    fused = calibrated_fusion(lexical, cosines, profile, threshold=0.2)
    assert set(lexical) <= set(fused)  # every lexical candidate stays
    dense_only = {k for k in fused if k not in lexical}
    assert "a" in dense_only
    assert all(fused[k] >= 0.2 for k in dense_only)
    assert not any(k.startswith("x") and k != "x59" for k in dense_only)  # background hits
    assert all(0.0 <= v <= 1.0 for v in fused.values())
    # without a dense hit the lexical relevance decides alone
    assert calibrated_fusion(lexical, {}, None, 0.2) == lexical


def test_a_weak_lexical_match_lends_the_dense_channel_the_weight() -> None:
    """``retrieval.weakLexicalBelow`` (0.5) and ``strongLexicalFrom`` (0.7): a query whose
    best lexical relevance stays under the first has lexical strength 0 and the ``score``
    fusion takes ``weights.lexicalWhenWeak`` as its lexical weight; from the second on,
    strength 1 and the weights' share; linear between (``None``: one weight for every
    query)."""
    from swarmmem.core.recall.fusion import (
        dense_relevance,
        fusion_weight,
        lexical_strength,
        score_fusion,
    )
    from swarmmem.core.recall.hybrid import HybridSettings

    off = HybridSettings(weight_lexical=0.85, weight_dense=0.15, weak_lexical_below=None)
    assert lexical_strength(off, 0.1) == 1.0
    assert fusion_weight(off, 0.0) == pytest.approx(0.85)
    on = HybridSettings(
        weight_lexical=0.85,
        weight_dense=0.15,
        weak_lexical_below=0.5,
        strong_lexical_from=0.7,
        weak_lexical_weight=0.2,
    )
    assert lexical_strength(on, 0.49) == 0.0
    assert lexical_strength(on, 0.6) == pytest.approx(0.5)
    assert lexical_strength(on, 0.7) == 1.0 and lexical_strength(on, 0.95) == 1.0
    assert lexical_strength(on, None) == 1.0
    step = HybridSettings(weak_lexical_below=0.5, strong_lexical_from=None)
    assert [lexical_strength(step, b) for b in (0.49, 0.5)] == [0.0, 1.0]
    assert fusion_weight(on, 0.0) == pytest.approx(0.2)
    assert fusion_weight(on, 0.5) == pytest.approx(0.525)
    assert fusion_weight(on, 1.0) == pytest.approx(0.85)
    # read against a background, a paraphrase's word matches weigh weak_lexical_weight_relative
    relative = attrs.evolve(on, weak_lexical_weight_relative=0.0)
    assert fusion_weight(relative, 0.0, relative=True) == 0.0
    assert fusion_weight(relative, 0.0) == pytest.approx(0.2)
    assert fusion_weight(relative, 0.5, relative=True) == pytest.approx(0.425)
    assert fusion_weight(relative, 1.0, relative=True) == pytest.approx(0.85)
    # a paraphrase (cosine 0.6) overtakes a weak word match (0.3) only with the weak weight
    lexical, cosines = {"word": 0.3}, {"paraphrase": 0.6, "word": 0.1}
    plain = dense_relevance(cosines, None, 1.0)
    strong = score_fusion(lexical, plain, fusion_weight(off, 1.0))
    weak = score_fusion(lexical, plain, fusion_weight(on, 0.0))
    assert strong["word"] > strong["paraphrase"]
    assert weak["paraphrase"] > weak["word"]


def test_dense_relevance_reads_a_cosine_against_the_query_background() -> None:
    """A weak query's dense relevance is where the cosine falls between the query's
    background and its nearest hit; a strong query's is the plain cosine."""
    from swarmmem.core.recall.fusion import dense_relevance
    from swarmmem.core.recall.hybrid import CosineProfile

    cosines = [0.40, 0.30] + [0.20] * 48
    profile = CosineProfile.of(cosines)
    assert profile is not None and profile.background == pytest.approx(0.20)
    assert profile.floor == pytest.approx(0.20) and profile.floor > 0.20
    assert profile.relative(0.40) == 1.0 and profile.relative(0.30) == pytest.approx(0.5)
    assert profile.relative(0.10) == 0.0 and profile.relative(0.90) == 1.0
    hits = {"best": 0.40, "next": 0.30}
    assert dense_relevance(hits, profile, 0.0) == pytest.approx({"best": 1.0, "next": 0.5})
    assert dense_relevance(hits, profile, 1.0) == pytest.approx(hits)
    half = dense_relevance({"next": 0.30}, profile, 0.5)
    assert half["next"] == pytest.approx(0.5 * 0.5 + 0.5 * 0.30)
    flat = CosineProfile.of([0.3] * 50)
    assert flat is not None and flat.relative(0.3) == 1.0 and flat.relative(0.29) == 0.0
    # under 20 hits the background is no estimate: no candidate rule, plain cosines
    few = CosineProfile.of([0.40, 0.30, 0.20])
    assert few is not None and few.floor is None and few.relative(0.30) == 0.30


def test_dense_trust_shrinks_the_dense_weight_over_long_texts() -> None:
    """Hits of at most ``DENSE_FREE_CHARS`` characters on average keep the dense weight;
    longer ones scale it by ``(DENSE_FREE_CHARS / mean) ** 2``, which hands the weight to
    the lexical side (``fusion_weight``)."""
    from swarmmem.core.recall.fusion import DENSE_FREE_CHARS, dense_trust, fusion_weight
    from swarmmem.core.recall.hybrid import HybridSettings

    assert dense_trust({}) == 1.0
    assert dense_trust({"a": DENSE_FREE_CHARS, "b": 10}) == 1.0
    assert dense_trust({"a": DENSE_FREE_CHARS, "b": 3 * DENSE_FREE_CHARS}) == pytest.approx(0.25)
    settings = HybridSettings(weight_lexical=0.85, weight_dense=0.15, weak_lexical_weight=0.2)
    assert fusion_weight(settings, 0.0, 0.25) == pytest.approx(1.0 - 0.8 * 0.25)
    assert fusion_weight(settings, 1.0, 0.0) == 1.0


def test_scored_evidence_asks_the_gate_only_of_strong_queries() -> None:
    """A query whose words match well takes no dense evidence when the nearest hit does not
    stand out; a paraphrase keeps the hits above its background, its best at full weight."""
    from factories import make_memory

    from swarmmem.core.recall.fusion import scored_evidence
    from swarmmem.core.recall.hybrid import CosineProfile, HybridSettings

    records = [make_memory(f"memory {i}") for i in range(50)]
    cosines = [0.30, 0.28] + [0.25] * 48  # nothing stands out by 0.15
    hits = {r.id: c for r, c in zip(records, cosines, strict=True)}
    profile = CosineProfile.of(cosines)
    settings = HybridSettings(dense_gate=0.15)
    dense = [(records[0], 0.30), (records[1], 0.28)]
    strong = {records[5].id: 0.9}
    assert scored_evidence(strong, dense, hits, profile, settings) == strong
    weak = {records[5].id: 0.3}
    fused = scored_evidence(weak, dense, hits, profile, settings)
    # against a background the weak word match weighs weights.lexicalWhenWeakRelative (0)
    assert fused[records[0].id] == pytest.approx(1.0)  # relative 1.0 at full weight
    assert fused[records[5].id] == 0.0
    assert fused[records[0].id] > fused[records[1].id] > fused[records[5].id]
    assert scored_evidence(weak, dense, hits, profile, HybridSettings(dense_gate=None)) == fused


def test_hybrid_settings_take_each_retrieval_key_of_their_name() -> None:
    """Every pipeline setting is read from the configuration: the ``memory.retrieval`` key of
    the same name, or one of the four named in ``from_config``."""
    from swarmmem.core.config import InjectionSettings, RetrievalConfig
    from swarmmem.core.recall.hybrid import RETRIEVAL_KEYS, HybridSettings

    retrieval = attrs.evolve(
        RetrievalConfig(),
        rrf_k=42,
        fusion="rrf",
        dense_floor=0.31,
        weak_lexical_below=None,
        latency_budget_ms=321,
    )
    injection = attrs.evolve(InjectionSettings(), dense_floor=0.44, dense_gate=0.07)
    settings = HybridSettings.from_config(retrieval, injection, rerank=True)
    named = {"injection_dense_floor", "injection_dense_gate", "rerank", "rerank_weight"}
    assert {f.name for f in attrs.fields(HybridSettings)} == set(RETRIEVAL_KEYS) | named
    for name in RETRIEVAL_KEYS:
        assert getattr(settings, name) == getattr(retrieval, name), name
    assert (settings.rrf_k, settings.fusion, settings.latency_budget_ms) == (42, "rrf", 321)
    assert (settings.injection_dense_floor, settings.injection_dense_gate) == (0.44, 0.07)
    assert settings.rerank and settings.rerank_weight == retrieval.rerank.weight

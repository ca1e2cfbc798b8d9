"""The calibrated fusion (``retrieval.fusion: calibrated``): the query's cosine profile, the
logistic evidence over per-query-normalised features and the dense evidence threshold."""

from __future__ import annotations

import math

import pytest

from swarmmem.core.recall.hybrid import (
    FUSION_MODEL,
    PROFILE_DEPTH,
    CosineProfile,
    calibrated_fusion,
    evidence,
)


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
    """``retrieval.weakLexicalBelow`` (0.5): when the query's best lexical relevance stays
    under it, the ``score`` fusion takes ``weights.lexicalWhenWeak`` as its lexical weight
    (``None``: one weight for every query)."""
    from swarmmem.core.recall.hybrid import HybridSettings, fusion_weight, score_fusion

    off = HybridSettings(weight_lexical=0.85, weight_dense=0.15, weak_lexical_below=None)
    assert fusion_weight(off, 0.1) == pytest.approx(0.85)
    on = HybridSettings(
        weight_lexical=0.85, weight_dense=0.15, weak_lexical_below=0.5, weak_lexical_weight=0.2
    )
    assert fusion_weight(on, 0.49) == 0.2
    assert fusion_weight(on, 0.5) == pytest.approx(0.85)
    assert fusion_weight(on, None) == pytest.approx(0.85)
    # a paraphrase (cosine 0.6) overtakes a weak word match (0.3) only with the weak weight
    lexical, cosines = {"word": 0.3}, {"paraphrase": 0.6, "word": 0.1}
    strong = score_fusion(lexical, cosines, fusion_weight(off, 0.3), None)
    weak = score_fusion(lexical, cosines, fusion_weight(on, 0.3), None)
    assert strong["word"] > strong["paraphrase"]
    assert weak["paraphrase"] > weak["word"]

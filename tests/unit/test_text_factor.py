"""The stemmed channel's text factor: IDF-weighted coverage, its length scaling and the BM25
share."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from swarmmem.core.recall.lexical import (
    BM25_HALF_SHARE_AT,
    LENGTH_FREE_CHARS,
    length_scaled,
    text_factor,
    text_factors,
    weighted_coverage,
)


def test_a_term_every_candidate_holds_counts_less_than_a_rare_one() -> None:
    held = {
        "allergy": frozenset({"user", "allergi"}),
        "coffee": frozenset({"user"}),
        "python": frozenset({"user"}),
        "java": frozenset({"user"}),
    }
    cover = weighted_coverage(held, {"user", "allergi", "fruit"})
    # plain coverage would give 2/3 and 1/3; "user" is in all four, "allergi" in one
    assert cover["allergy"] > 0.5
    assert cover["coffee"] == cover["python"] == cover["java"] < 0.05
    n, df = 4, {"user": 4, "allergi": 1, "fruit": 1}  # an unheld term weighs like df = 1
    idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
    assert cover["allergy"] == pytest.approx((idf["user"] + idf["allergi"]) / sum(idf.values()))


def test_coverage_of_nothing_and_of_everything() -> None:
    nothing, x, xy = frozenset(), frozenset({"x"}), frozenset({"x", "y"})
    assert weighted_coverage({"a": nothing, "b": x}, {"x"}) == {"a": 0.0, "b": 1.0}
    assert weighted_coverage({}, {"x"}) == {}
    assert weighted_coverage({"a": xy}, {"x", "y"}) == {"a": 1.0}


def test_bm25_share_grows_with_the_candidate_count() -> None:
    # the same two memories: one holds more of the question, the other has the better BM25
    def order(candidates: int) -> str:
        fuller = text_factor(0.8, 1.0, 4.0, candidates)
        stronger = text_factor(0.4, 4.0, 4.0, candidates)
        return "fuller" if fuller > stronger else "stronger"

    assert order(3) == "fuller"  # few candidates: BM25's IDF is floored, coverage leads
    assert order(200) == "stronger"  # many: BM25's term weights and length norm lead
    share = BM25_HALF_SHARE_AT / (2 * BM25_HALF_SHARE_AT)
    assert text_factor(1.0, 0.0, 1.0, int(BM25_HALF_SHARE_AT)) == pytest.approx(1 - share)


def test_text_factor_bounds() -> None:
    assert text_factor(0.0, 5.0, 5.0, 10) == 0.0  # no query term in the text
    assert text_factor(1.0, 5.0, 5.0, 10) == pytest.approx(1.0)
    assert 0.0 < text_factor(0.25, 0.0, 0.0, 10) < 0.5  # no BM25 at all: coverage alone
    for cover in (0.1, 0.5, 1.0):
        for bm25 in (0.0, 1.0, 3.0):
            assert 0.0 <= text_factor(cover, bm25, 3.0, 7) <= 1.0


def test_long_texts_lose_coverage_beyond_the_limit() -> None:
    cover = {"short": 0.5, "long": 1.0, "longer": 1.0}
    lengths = {"short": 100, "long": 1_000, "longer": 2_000}
    scaled = length_scaled(cover, lengths, free=500, exponent=2.0)
    limit = (100 + 1_000 + 2_000) / 3  # the average is above the free length here
    assert scaled["short"] == 0.5
    assert scaled["long"] == 1.0  # under the average
    assert scaled["longer"] == pytest.approx((limit / 2_000) ** 2)


def test_concise_memories_keep_their_coverage() -> None:
    # every text under the free length: a memory that explains a little more is not scaled
    cover = {"todo": 0.6, "explained": 0.9}
    lengths = {"todo": 80, "explained": LENGTH_FREE_CHARS}
    assert length_scaled(cover, lengths) == cover
    assert length_scaled(cover, {"todo": 80, "explained": 4_000}, exponent=0.0) == cover
    assert length_scaled({}, {}) == {}


@given(
    values=st.lists(
        st.tuples(
            st.floats(min_value=0.0, max_value=1.0), st.floats(min_value=0.0, max_value=50.0)
        ),
        max_size=12,
    ),
    best=st.floats(min_value=0.0, max_value=50.0),
)
def test_text_factors_are_the_text_factor_of_each_candidate(
    values: list[tuple[float, float]], best: float
) -> None:
    """The batch computes exactly what the formula gives each candidate."""
    cover = {f"m{i}": c for i, (c, _) in enumerate(values)}
    bm25 = {f"m{i}": b for i, (_, b) in enumerate(values)}
    expected = {key: text_factor(cover[key], bm25[key], best, len(values)) for key in cover}
    assert text_factors(cover, bm25, best) == expected

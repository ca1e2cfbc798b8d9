"""Per-session LRU cache of query embeddings."""

from __future__ import annotations

import numpy as np
import pytest
from factories import run_threads
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmmem.core.model.errors import ConfigError
from swarmmem.core.recall.embedding_cache import DEFAULT_CAPACITY, EmbeddingCache, normalize_query

MV = "Xenova/all-MiniLM-L6-v2:384"


def vec(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def test_default_capacity_is_256() -> None:
    """The default capacity matches embeddings.cacheSize (256)."""
    assert DEFAULT_CAPACITY == 256
    assert EmbeddingCache().capacity == 256


def test_miss_then_hit_returns_stored_values() -> None:
    """A stored vector is returned on the next lookup of the same key."""
    cache = EmbeddingCache(4)
    assert cache.get(MV, "how are tests run") is None
    cache.set(MV, "how are tests run", vec(0.6, 0.8))
    got = cache.get(MV, "how are tests run")
    assert got is not None
    np.testing.assert_array_equal(got, vec(0.6, 0.8))
    assert got.dtype == np.float32


def test_key_ignores_case_and_whitespace() -> None:
    """Queries differing only in case and whitespace share one entry."""
    cache = EmbeddingCache(4)
    cache.set(MV, "  How are\t\ttests   RUN\n", vec(1.0))
    assert cache.get(MV, "how are tests run") is not None
    assert len(cache) == 1
    cache.set(MV, "HOW ARE TESTS RUN", vec(2.0))
    assert len(cache) == 1
    got = cache.get(MV, "how  are tests run")
    assert got is not None and got[0] == 2.0


def test_normalize_query() -> None:
    """The cache form collapses whitespace, lower-cases and trims."""
    assert normalize_query("  Foo\n\tBAR  baz ") == "foo bar baz"
    assert normalize_query("") == ""


def test_model_version_is_part_of_the_key() -> None:
    """Vectors of different models never answer each other's lookups."""
    cache = EmbeddingCache(4)
    cache.set(MV, "q", vec(1.0))
    assert cache.get("hashing-ngram-v1:64", "q") is None
    cache.set("hashing-ngram-v1:64", "q", vec(2.0))
    first, second = cache.get(MV, "q"), cache.get("hashing-ngram-v1:64", "q")
    assert first is not None and second is not None
    assert (first[0], second[0]) == (1.0, 2.0)


def test_capacity_zero_never_stores() -> None:
    """A capacity of 0 stores nothing and always misses."""
    cache = EmbeddingCache(0)
    cache.set(MV, "q", vec(1.0))
    assert len(cache) == 0
    assert cache.get(MV, "q") is None
    assert cache.misses == 1


def test_least_recently_used_entry_is_evicted() -> None:
    """On overflow the entry touched longest ago goes; a hit refreshes an entry."""
    cache = EmbeddingCache(2)
    cache.set(MV, "a", vec(1.0))
    cache.set(MV, "b", vec(2.0))
    assert cache.get(MV, "a") is not None  # "a" is now the most recent
    cache.set(MV, "c", vec(3.0))
    assert (MV, "b") not in cache
    assert (MV, "a") in cache and (MV, "c") in cache
    assert len(cache) == 2


def test_overwriting_refreshes_recency() -> None:
    """Setting an existing key replaces its vector and makes it most recent."""
    cache = EmbeddingCache(2)
    cache.set(MV, "a", vec(1.0))
    cache.set(MV, "b", vec(2.0))
    cache.set(MV, "a", vec(9.0))
    cache.set(MV, "c", vec(3.0))
    got = cache.get(MV, "a")
    assert got is not None and got[0] == 9.0
    assert (MV, "b") not in cache


def test_stored_vector_is_a_read_only_copy() -> None:
    """Mutating the source after set, or the result of get, cannot corrupt the entry."""
    cache = EmbeddingCache(2)
    source = np.array([1.0, 2.0], dtype=np.float64)
    cache.set(MV, "q", source)
    source[0] = 42.0
    got = cache.get(MV, "q")
    assert got is not None
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, vec(1.0, 2.0))
    with pytest.raises(ValueError):
        got[0] = 7.0


def test_hit_and_miss_counters_and_clear() -> None:
    """get() outcomes are counted; clear() empties the cache and resets the counters."""
    cache = EmbeddingCache(2)
    cache.get(MV, "q")
    cache.set(MV, "q", vec(1.0))
    cache.get(MV, "Q")
    cache.get(MV, "q ")
    assert (cache.hits, cache.misses) == (2, 1)
    cache.clear()
    assert (len(cache), cache.hits, cache.misses) == (0, 0, 0)
    assert cache.get(MV, "q") is None


def test_contains_rejects_malformed_keys() -> None:
    """Membership tests with a non-pair key answer False instead of raising."""
    cache = EmbeddingCache(2)
    cache.set(MV, "q", vec(1.0))
    assert (MV, "Q") in cache
    assert "q" not in cache
    assert (MV, 3) not in cache
    assert (MV, "q", "x") not in cache


@pytest.mark.parametrize("bad", [-1, 1.5, True, "256", None])
def test_invalid_capacity_is_rejected(bad: object) -> None:
    """A capacity that is not a non-negative int raises ConfigError naming it."""
    with pytest.raises(ConfigError, match=repr(bad).replace(".", r"\.")):
        EmbeddingCache(bad)  # type: ignore[arg-type]


def test_concurrent_use_keeps_the_bound() -> None:
    """Threads hammering one cache never break it or exceed the capacity."""
    cache = EmbeddingCache(8)
    errors: list[BaseException] = []

    def worker(offset: int) -> None:
        try:
            for i in range(400):
                key = f"q{(i + offset) % 20}"
                if cache.get(MV, key) is None:
                    cache.set(MV, key, vec(float(i)))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    run_threads(worker, 4)
    assert errors == []
    assert len(cache) == 8
    assert cache.hits + cache.misses == 1600


@settings(max_examples=150, deadline=None)
@given(
    capacity=st.integers(min_value=0, max_value=4),
    ops=st.lists(
        st.tuples(st.sampled_from(["get", "set"]), st.sampled_from(["a", "B", " c", "d", "e"])),
        max_size=40,
    ),
)
def test_matches_a_reference_lru_model(capacity: int, ops: list[tuple[str, str]]) -> None:
    """Any sequence of get/set behaves like a list-based LRU of the normalised keys."""
    cache = EmbeddingCache(capacity)
    model: list[str] = []  # least recent first
    values: dict[str, float] = {}
    for step, (op, query) in enumerate(ops):
        key = normalize_query(query)
        if op == "set":
            cache.set(MV, query, vec(float(step)))
            if capacity:
                if key in model:
                    model.remove(key)
                model.append(key)
                values[key] = float(step)
                del model[: max(0, len(model) - capacity)]
        else:
            got = cache.get(MV, query)
            if key in model:
                assert got is not None and got[0] == values[key]
                model.remove(key)
                model.append(key)
            else:
                assert got is None
    assert len(cache) == len(model)

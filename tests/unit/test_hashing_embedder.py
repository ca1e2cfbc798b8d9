"""Deterministic hashed character n-gram embedder."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from swarmmem.adapters.models.hashing_embedder import HashingEmbedder, fnv1a_32
from swarmmem.ports.embedder import Embedder


@pytest.mark.parametrize(
    ("data", "expected"),
    [(b"", 0x811C9DC5), (b"a", 0xE40C292C), (b"foobar", 0xBF9CF968)],
)
def test_fnv1a_32_matches_published_vectors(data: bytes, expected: int) -> None:
    """The hash reproduces the published FNV-1a 32-bit test vectors."""
    assert fnv1a_32(data) == expected


def test_identity_and_protocol() -> None:
    """Default dimension 64, versioned label, always available, satisfies Embedder."""
    embedder = HashingEmbedder()
    assert embedder.dimension == 64
    assert embedder.model_version == "hashing-ngram-v1:64"
    assert embedder.available is True
    assert isinstance(embedder, Embedder)
    assert HashingEmbedder(dimension=7).model_version == "hashing-ngram-v1:7"


def test_single_bigram_is_one_hot() -> None:
    """A two-character text has one n-gram: a unit vector at its bucket."""
    vector = HashingEmbedder(64).embed("Ab")
    expected = np.zeros(64, dtype=np.float32)
    expected[fnv1a_32(b"ab") % 64] = 1.0
    np.testing.assert_array_equal(vector, expected)


def test_ngram_widths_and_weights() -> None:
    """Widths 2 and 3 weigh 1.0, width 4 weighs 0.5, then the vector is L2-normalised."""
    dim = 1024
    expected = np.zeros(dim)
    grams = {"ab": 1.0, "bc": 1.0, "cd": 1.0, "abc": 1.0, "bcd": 1.0, "abcd": 0.5}
    for gram, weight in grams.items():
        expected[fnv1a_32(gram.encode()) % dim] += weight
    expected /= np.linalg.norm(expected)
    np.testing.assert_allclose(HashingEmbedder(dim).embed("abcd"), expected, rtol=1e-6)


def test_non_ascii_grams_hash_their_utf8_bytes() -> None:
    """An n-gram is hashed as its UTF-8 encoding."""
    vector = HashingEmbedder(97).embed("é!")
    assert vector[fnv1a_32("é!".encode()) % 97] == pytest.approx(1.0)


def test_case_and_whitespace_do_not_matter() -> None:
    """Text is lower-cased, whitespace runs collapsed and ends trimmed first."""
    embedder = HashingEmbedder()
    np.testing.assert_array_equal(
        embedder.embed("  Run   the\tTESTS\n"), embedder.embed("run the tests")
    )


def test_vectors_are_unit_float32() -> None:
    """Every vector with an n-gram is float32, shape (dim,), L2 norm 1."""
    embedder = HashingEmbedder(32)
    for text in ["ab", "pytest runs the unit tests", "ünïcödé ✓ text", "x" * 500]:
        vector = embedder.embed(text)
        assert vector.shape == (32,) and vector.dtype == np.float32
        assert float(np.linalg.norm(vector)) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("text", ["", " ", "a", "  Z  "])
def test_text_without_ngrams_is_zero(text: str) -> None:
    """Texts shorter than two characters after normalisation map to the zero vector."""
    vector = HashingEmbedder().embed(text)
    assert vector.shape == (64,)
    assert not vector.any()


def test_similar_texts_are_closer_than_unrelated() -> None:
    """Shared spelling gives a higher cosine than unrelated text."""
    embedder = HashingEmbedder(256)
    a, b, c = embedder.embed_batch(
        ["run the unit tests with pytest", "unit tests run with pytest -q", "lunch at noon"]
    )
    assert float(a @ b) > float(a @ c) + 0.2


def test_batch_equals_single_and_keeps_order() -> None:
    """embed_batch rows equal embed() of each text, in input order."""
    embedder = HashingEmbedder()
    texts = ["zeta", "alpha beta", "", "gamma delta epsilon"]
    batch = embedder.embed_batch(texts)
    assert batch.shape == (4, 64) and batch.dtype == np.float32
    for row, text in zip(batch, texts, strict=True):
        np.testing.assert_array_equal(row, embedder.embed(text))
    assert embedder.embed_batch([]).shape == (0, 64)


def test_stable_across_processes() -> None:
    """Vectors do not depend on Python's per-process string hash seed."""
    code = (
        "from swarmmem.adapters.models.hashing_embedder import HashingEmbedder;"
        "print(HashingEmbedder(16).embed('memory recall test').tobytes().hex())"
    )
    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        outputs.add(done.stdout.strip())
    assert outputs == {HashingEmbedder(16).embed("memory recall test").tobytes().hex()}


@pytest.mark.parametrize("bad", [0, -3, 2.0, True, "64"])
def test_invalid_dimension_is_rejected(bad: object) -> None:
    """A dimension that is not a positive int raises ValueError naming it."""
    with pytest.raises(ValueError, match="dimension"):
        HashingEmbedder(bad)  # type: ignore[arg-type]


def test_non_str_input_is_rejected() -> None:
    """Non-str items raise TypeError, and a bare str is not taken for a batch."""
    embedder = HashingEmbedder()
    with pytest.raises(TypeError, match="bytes"):
        embedder.embed(b"abc")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="single str"):
        embedder.embed_batch("abc")
    with pytest.raises(TypeError, match="int"):
        embedder.embed_batch(["ok", 3])  # type: ignore[list-item]

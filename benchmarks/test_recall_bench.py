"""Recall latency: the full lexical recall next to the bare FTS5 query, on the same store.

Sizes come from ``SWARMMEM_BENCH_SIZES`` (default ``1000``; the tables in README.md used
``1000,10000,100000``). Each size builds one SQLite store with every memory in one scope.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import bulk, make_corpus

from swarmmem.adapters.storage.sqlite import SqliteStore
from swarmmem.adapters.storage.sqlite.support import sqlite_module
from swarmmem.core.model.ids import content_hash, memory_id_for_hash
from swarmmem.core.model.records import MemoryRecord, MemoryScope, MemorySource, RecallRequest
from swarmmem.core.recall import scoring
from swarmmem.core.recall.fts import build_fts_query
from swarmmem.core.recall.pipeline import run_recall

SIZES = [int(s) for s in os.environ.get("SWARMMEM_BENCH_SIZES", "1000").split(",") if s.strip()]
SCOPE = MemoryScope(type="repository", repo_id="bench")
STAMP = "2026-01-01T00:00:00.000Z"
NOW = "2026-06-01T00:00:00.000Z"
QUERY = "how do we run pytest fixtures for the sqlite migration tests"
TASK = "Fix the failing migration test in the sqlite adapter"


def _records(n: int) -> list[MemoryRecord]:
    out = []
    seen = set()
    for i, cand in enumerate(make_corpus(n, seed=7)):
        text = f"{cand.text} ({i})"
        digest = content_hash(SCOPE.as_dict(), cand.kind, text)
        if digest in seen:
            continue
        seen.add(digest)
        out.append(
            MemoryRecord(
                id=memory_id_for_hash(digest),
                scope=SCOPE,
                kind=cand.kind,
                text=text,
                tags=tuple(cand.tags),
                confidence=0.8,
                stability="durable",
                source=MemorySource(
                    type="file", file_path=cand.files[0] if cand.files else "README.md"
                ),
                created_at=STAMP,
                updated_at=STAMP,
                content_hash=digest,
                metadata={"files": cand.files, "symbols": cand.symbols},
            )
        )
    return out


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"{n}")
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """A SQLite store holding ``n`` memories in one scope."""
    path: Path = tmp_path_factory.mktemp(f"recall{request.param}") / "memory.db"
    db = SqliteStore(path)
    bulk(db, _records(request.param))
    yield db
    db.close()


REQUEST = RecallRequest(query=QUERY, task=TASK, scopes=(SCOPE,), max_items=8, min_score=0.05)


def _bare_bm25(benchmark, path: Path, table: str, match: str) -> list[Any]:
    """Time the bare BM25 candidate query ``match`` on the FTS5 ``table`` of the database at
    ``path`` (160 rows at most, as recall pre-selects); the rows."""
    conn = sqlite_module().connect(str(path))
    sql = (
        f"SELECT id, bm25({table}) FROM {table} WHERE {table} MATCH ? "
        f"ORDER BY bm25({table}) LIMIT 160"
    )
    rows = benchmark(lambda: conn.execute(sql, (match,)).fetchall())
    conn.close()
    return rows


@pytest.mark.benchmark(group="recall")
def test_bare_fts5_query(benchmark, store) -> None:
    """The bare FTS5 BM25 candidate query over the same index (the floor)."""
    match = build_fts_query(QUERY, TASK, "manual")
    assert _bare_bm25(benchmark, store.path, "memory_items_fts", match)


def test_bare_stemmed_fts5_query(benchmark, store) -> None:
    """The same over the stemmed index with the lexical profile's query (its floor)."""
    from swarmmem.core.recall.bm25 import stemmed_query

    match = stemmed_query(QUERY, TASK, "manual")
    assert _bare_bm25(benchmark, store.path, "memory_items_fts_porter", match)


@pytest.mark.benchmark(group="recall")
@pytest.mark.parametrize("impl", ["compiled", "py"])
def test_lexical_recall(benchmark, store, impl, monkeypatch) -> None:
    """Full lexical recall (candidates, nine-factor kernel, BM25 bonus, slice)."""
    if impl == "compiled" and os.environ.get("SWARMMEM_NO_EXTENSIONS") == "1":
        pytest.skip("compiled kernels disabled")
    module = importlib.import_module(
        f"swarmmem._speedups._lexical_{'c' if impl == 'compiled' else 'py'}"
    )
    monkeypatch.setattr(scoring, "lexical", module)
    result = benchmark(lambda: run_recall(store, REQUEST, now=NOW)[0])
    assert 0 < len(result.items) <= 8


@pytest.fixture(scope="module")
def dense_parts(store):
    """Vectors for every memory of ``store`` (hashing embedder, 384-d) and a warm query cache."""
    from swarmmem.adapters.models.hashing_embedder import HashingEmbedder
    from swarmmem.adapters.vectors.local import SqliteVecIndex
    from swarmmem.core.recall.embedding_cache import EmbeddingCache
    from swarmmem.core.recall.hybrid import DenseParts, query_vector
    from swarmmem.ports.storage import ListFilter

    embedder = HashingEmbedder(dimension=384)
    index = SqliteVecIndex(store.path, 384)
    index.seed_model_version(embedder.model_version)
    records = store.list(ListFilter(now=NOW))
    for start in range(0, len(records), 5000):
        batch = records[start : start + 5000]
        index.upsert([r.id for r in batch], embedder.embed_batch([r.text.lower() for r in batch]))
    parts = DenseParts(embedder=embedder, index=index, cache=EmbeddingCache(8))
    query_vector(parts, QUERY)  # the benchmark measures recall with a cached query embedding
    yield parts
    index.close()


@pytest.mark.benchmark(group="recall")
def test_hybrid_recall_cached_query(benchmark, store, dense_parts) -> None:
    """Hybrid recall (lexical + dense kNN + RRF) with the query embedding already cached."""
    from swarmmem.core.recall.hybrid import HybridSettings
    from swarmmem.core.recall.pipeline import PipelineSettings, run_recall

    settings = HybridSettings()
    result, trace = benchmark(
        lambda: run_recall(
            store,
            REQUEST,
            now=NOW,
            parts=dense_parts,
            config=PipelineSettings(profile="hybrid", hybrid=settings),
        )
    )
    assert trace.used_embedding and trace.query_embedding_invocation_count == 0
    assert result.items


JSONL_SIZE = int(os.environ.get("SWARMMEM_BENCH_JSONL_SIZE", "5000"))


@pytest.fixture(scope="module")
def jsonl_store(tmp_path_factory: pytest.TempPathFactory):
    """A JSONL store holding ``SWARMMEM_BENCH_JSONL_SIZE`` (5,000) memories in one scope,
    reopened from its files (so its feature table is built from the log) and warmed."""
    from swarmmem.adapters.storage.jsonl import JsonlStore

    directory = tmp_path_factory.mktemp("jsonl") / "store"
    writer = JsonlStore(directory)
    with writer.transaction():
        for record in _records(JSONL_SIZE):
            writer.upsert(record)
    writer.close()
    db = JsonlStore(directory)
    run_recall(db, REQUEST, now=NOW)
    yield db
    db.close()


@pytest.mark.benchmark(group="recall-jsonl")
@pytest.mark.parametrize("impl", ["compiled", "py"])
def test_jsonl_lexical_recall(benchmark, jsonl_store, impl, monkeypatch) -> None:
    """End-to-end lexical recall on the JSONL provider: the BM25 scan over the feature table
    and the nine-factor scorer, both with the compiled kernels or both with their twins
    (what ``SWARMMEM_NO_EXTENSIONS=1`` runs)."""
    from swarmmem.core.recall import features

    if impl == "compiled" and os.environ.get("SWARMMEM_NO_EXTENSIONS") == "1":
        pytest.skip("compiled kernels disabled")
    suffix = "c" if impl == "compiled" else "py"
    monkeypatch.setattr(
        scoring, "lexical", importlib.import_module(f"swarmmem._speedups._lexical_{suffix}")
    )
    monkeypatch.setattr(
        features, "kernel", importlib.import_module(f"swarmmem._speedups._bm25_{suffix}")
    )
    result = benchmark(lambda: run_recall(jsonl_store, REQUEST, now=NOW)[0])
    assert 0 < len(result.items) <= 8

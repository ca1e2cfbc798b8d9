"""Recall latency with selective queries: what a real question costs, next to its floor.

The broad query of ``test_recall_bench.py`` matches nearly every row of its synthetic store
(a 300-word vocabulary), so FTS5 itself dominates and the library's fixed cost per recall
hides. Here the store holds realistic text (first docstring sentences of this Python's
standard library, ``conftest.code_facts``, repeated with a copy number to reach the size, so
each word keeps its share of the store) and each query is four content words of one stored
fact, the rarest ones: every term matches a small share of the store, as in real questions.
Each benchmark round asks the next of 20 such queries.

Rows: the bare stemmed FTS5 query (the floor, ``memory_items_fts_porter``, the query the
lexical profile builds) and the full lexical recall (with the caches of earlier recalls, and
cold) on SQLite at ``SWARMMEM_BENCH_SIZES`` (default 1000), the same on PostgreSQL (its floor the
stemmed ``tsquery`` over its GIN index, ranked by ``ts_rank_cd``); on JSONL at 5,000, the pipeline
alone and the whole ``Memory.recall`` (bundle, redaction, usage row). Nothing here asserts a
time; the ratios are in benchmarks/README.md.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import bulk, code_facts, fact_record

from swarmmem.adapters.storage.sqlite import SqliteStore
from swarmmem.adapters.storage.sqlite.support import sqlite_module
from swarmmem.core.model.records import MemoryRecord, MemoryScope, RecallRequest
from swarmmem.core.recall.bm25 import STOP_WORDS, stemmed_query
from swarmmem.core.recall.pipeline import run_recall

SIZES = [int(s) for s in os.environ.get("SWARMMEM_BENCH_SIZES", "1000").split(",") if s.strip()]
SCOPE = MemoryScope(type="repository", repo_id="bench-selective")
STAMP = "2026-01-01T00:00:00.000Z"
NOW = "2026-06-01T00:00:00.000Z"
QUERIES = 20
_WORD = re.compile(r"[a-z]{5,}")


@functools.cache
def _base() -> list[tuple[str, str]]:
    """Every fact ``code_facts`` can give (text, file), collected once."""
    return code_facts(10**6)


def _texts(n: int) -> list[tuple[str, str]]:
    """``n`` facts: the base in order, then again with a copy number."""
    base = _base()
    out = []
    for i in range(n):
        text, path = base[i % len(base)]
        out.append((text if i < len(base) else f"{text} (copy {i // len(base)})", path))
    return out


def selective_queries(size: int, count: int = QUERIES) -> list[str]:
    """``count`` questions of four rare content words each, from facts spread over those a
    store of ``size`` holds (each word's share of such a store is its share of them)."""
    held = [text.lower() for text, _ in _base()[:size]]
    words = [set(_WORD.findall(text)) - STOP_WORDS for text in held]
    df = Counter(w for ws in words for w in ws)
    out: list[str] = []
    step = max(1, len(held) // (count * 10))
    for ws in words[::step]:
        common = 0.01 * len(held)  # a word in more than 1% of the facts is not rare
        rare = sorted((w for w in ws if 1 < df[w] <= common), key=lambda w: (df[w], w))[:4]
        if len(rare) == 4:
            out.append(" ".join(rare))
        if len(out) == count:
            break
    return out


def _records(n: int) -> list[MemoryRecord]:
    return [fact_record(text, path, SCOPE, STAMP) for text, path in _texts(n)]


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"{n}")
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    path: Path = tmp_path_factory.mktemp(f"selective{request.param}") / "memory.db"
    db = SqliteStore(path)
    bulk(db, _records(request.param))
    yield db
    db.close()


def _requests(size: int) -> itertools.cycle[RecallRequest]:
    return itertools.cycle(
        [
            RecallRequest(query=q, scopes=(SCOPE,), max_items=8, min_score=0.05)
            for q in selective_queries(size)
        ]
    )


def test_queries_are_selective(store: Any) -> None:
    """Each query term matches a small share of the store (and every query matches)."""
    conn = sqlite_module().connect(str(store.path))
    total = conn.execute("SELECT COUNT(*) FROM memory_items").fetchone()[0]
    shares = []
    queries = selective_queries(total)
    for query in queries:
        for term in query.split():
            hits = conn.execute(
                "SELECT COUNT(*) FROM memory_items_fts_porter WHERE memory_items_fts_porter "
                "MATCH ?",
                (f'"{term}"',),
            ).fetchone()[0]
            shares.append(hits / total)
    conn.close()
    assert len(queries) == QUERIES and len(shares) == 4 * QUERIES
    assert max(shares) < 0.1 and sum(shares) / len(shares) < 0.02 and min(shares) > 0


@pytest.mark.benchmark(group="recall-selective")
def test_bare_stemmed_fts5_selective(benchmark: Any, store: Any) -> None:
    """The floor: the lexical profile's stemmed FTS5 query, bare."""
    conn = sqlite_module().connect(str(store.path))
    sql = (
        "SELECT id, bm25(memory_items_fts_porter) FROM memory_items_fts_porter WHERE "
        "memory_items_fts_porter MATCH ? ORDER BY bm25(memory_items_fts_porter) LIMIT 160"
    )
    size = store.count()
    matches = itertools.cycle([stemmed_query(q, None, "manual") for q in selective_queries(size)])
    rows = benchmark(lambda: conn.execute(sql, (next(matches),)).fetchall())
    conn.close()
    assert rows


@pytest.mark.benchmark(group="recall-selective")
def test_lexical_recall_selective(benchmark: Any, store: Any) -> None:
    """The full lexical recall (the library's default kernels)."""
    requests = _requests(store.count())
    result = benchmark(lambda: run_recall(store, next(requests), now=NOW)[0])
    assert result.items


@pytest.mark.benchmark(group="recall-selective")
def test_lexical_recall_selective_cold(benchmark: Any, store: Any) -> None:
    """The same recall with nothing kept from earlier recalls (no parsed record, no stemmed
    document): what a hook's or a command's process pays, as every recall of a new question
    pays for its new candidates."""
    from swarmmem.core.recall import bm25

    requests = _requests(store.count())

    def cold() -> Any:
        bm25.document.cache_clear()
        store.records.clear()
        return run_recall(store, next(requests), now=NOW)[0]

    result = benchmark(cold)
    assert result.items


@pytest.fixture(scope="module")
def jsonl_store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from swarmmem.adapters.storage.jsonl import JsonlStore

    directory = tmp_path_factory.mktemp("jsonl-selective") / "store"
    writer = JsonlStore(directory)
    with writer.transaction():
        for record in _records(int(os.environ.get("SWARMMEM_BENCH_JSONL_SIZE", "5000"))):
            writer.upsert(record)
    writer.close()
    db = JsonlStore(directory)
    yield db
    db.close()


@pytest.mark.benchmark(group="recall-selective-jsonl")
def test_jsonl_lexical_recall_selective(benchmark: Any, jsonl_store: Any) -> None:
    requests = _requests(jsonl_store.count())
    result = benchmark(lambda: run_recall(jsonl_store, next(requests), now=NOW)[0])
    assert result.items


@pytest.fixture(scope="module")
def jsonl_project(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A project on the JSONL provider holding the same facts, opened as an agent would."""
    import swarmmem

    root = tmp_path_factory.mktemp("jsonl-project")
    config = {"enabled": True, "provider": "local-jsonl", "projectId": "bench-selective"}
    size = int(os.environ.get("SWARMMEM_BENCH_JSONL_SIZE", "5000"))
    with swarmmem.open(root, config=config) as mem:
        mem.import_records(
            {"kind": "project_fact", "text": text, "source": {"type": "file", "filePath": path}}
            for text, path in _texts(size)
        )
    mem = swarmmem.open(root, config=config, context={"session_id": "bench"})
    yield mem, size
    mem.close()


@pytest.mark.benchmark(group="recall-selective-jsonl")
def test_jsonl_memory_recall_selective(benchmark: Any, jsonl_project: Any) -> None:
    """The whole call an agent makes, ``Memory.recall``: the pipeline, the bundle with its
    prompt block and redaction, and the usage row."""
    mem, size = jsonl_project
    queries = itertools.cycle(selective_queries(size))
    bundle = benchmark(lambda: mem.recall(next(queries)))
    assert bundle.items


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"{n}")
def pg_store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The same facts in a PostgreSQL schema (skips without a server)."""
    from pg_support import require_dsn, schema_for

    from swarmmem.adapters.storage.postgres import PostgresStore

    dsn = require_dsn()
    schema = schema_for(tmp_path_factory.mktemp(f"pg-selective{request.param}"))
    db = PostgresStore(dsn, schema=schema, pool_size=2)
    db.upsert_many(_records(request.param))
    with db.db.connection() as conn:  # as autovacuum would soon: the planner sees the rows
        conn.execute("ANALYZE memory_items")
    yield db, dsn, schema
    db.close()


@pytest.mark.benchmark(group="recall-selective-postgres")
def test_postgres_bare_fulltext_selective(benchmark: Any, pg_store: Any) -> None:
    """PostgreSQL's floor: the lexical profile's stemmed query as a ``tsquery`` over the GIN
    index of ``fts_porter``, ranked by ``ts_rank_cd`` (the database's own rank), bare."""
    import psycopg

    from swarmmem.adapters.storage.postgres.text_search import match_phrases, tsquery_text

    store, dsn, schema = pg_store
    size = store.count()
    queries = [
        tsquery_text(match_phrases(match, stemmed=True))
        for match in (stemmed_query(q, None, "manual") for q in selective_queries(size))
    ]
    tsqueries = itertools.cycle(queries)
    sql = (
        f"SELECT id, ts_rank_cd(fts_porter, q) AS r FROM {schema}.memory_items, "
        "CAST(%s AS tsquery) q WHERE fts_porter @@ q ORDER BY r DESC LIMIT 160"
    )
    with psycopg.connect(dsn) as conn:
        rows = benchmark(lambda: conn.execute(sql, (next(tsqueries),)).fetchall())
    assert rows


@pytest.mark.benchmark(group="recall-selective-postgres")
def test_postgres_lexical_recall_selective(benchmark: Any, pg_store: Any) -> None:
    """The full lexical recall on PostgreSQL (the candidates' rows, BM25 as FTS5 ranks)."""
    store = pg_store[0]
    requests = _requests(store.count())
    result = benchmark(lambda: run_recall(store, next(requests), now=NOW)[0])
    assert result.items

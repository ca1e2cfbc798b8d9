"""SQLite vs PostgreSQL on the same data: recall latency, writes/s, concurrent recall throughput.

The PostgreSQL server comes from ``tests/pg_support.py`` (``SWARMMEM_PG_DSN`` or a throw-away
pgserver cluster); the benchmarks skip without one. Sizes via environment:

* ``SWARMMEM_PG_BENCH_SIZE`` records per store (default 2000),
* ``SWARMMEM_PG_BENCH_CLIENTS`` recall client processes (default 3),
* ``SWARMMEM_PG_BENCH_ROUNDS`` recalls per client (default 40).

``pytest benchmarks/test_postgres_bench.py`` measures (recall p50 is the ``Median`` column);
``--benchmark-disable`` runs every body once as a smoke test. Throughput numbers are in each
benchmark's ``extra_info`` and printed (``-s`` shows them).
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import SCOPE, bulk, record
from pg_support import require_dsn, schema_for, timed_client

from swarmmem.core.model.records import RecallRequest
from swarmmem.core.recall.pipeline import run_recall

SIZE = int(os.environ.get("SWARMMEM_PG_BENCH_SIZE", "2000"))
CLIENTS = int(os.environ.get("SWARMMEM_PG_BENCH_CLIENTS", "3"))
ROUNDS = int(os.environ.get("SWARMMEM_PG_BENCH_ROUNDS", "40"))
PROVIDERS = ["sqlite", "postgres"]
NOW = "2026-02-01T00:00:00.000Z"
QUERIES = [
    "how do we run pytest with the cache",
    "retry the deploy when the schema changes",
    "where does the parser keep its token index",
    "numpy vector speed",
]


@pytest.fixture(scope="module")
def places() -> Iterator[dict[str, Any]]:
    """The same SIZE records in a SQLite file and a PostgreSQL schema."""
    from swarmmem.adapters.storage.postgres import PostgresStore
    from swarmmem.adapters.storage.sqlite import SqliteStore

    dsn = require_dsn()
    records = [record(i) for i in range(SIZE)]
    with tempfile.TemporaryDirectory(prefix="swarmmem-pgbench-") as tmp:
        db = Path(tmp) / "memory.db"
        schema = schema_for(Path(tmp) / "pg")
        stores = {
            "sqlite": SqliteStore(db),
            "postgres": PostgresStore(dsn, schema=schema),
        }
        try:
            for store in stores.values():
                bulk(store, records)
            yield {
                "stores": stores,
                "location": {"sqlite": str(db), "postgres": dsn},
                "schema": {"sqlite": None, "postgres": schema},
            }
        finally:
            for store in stores.values():
                store.close()


@pytest.mark.parametrize("kind", PROVIDERS)
def test_recall_latency(benchmark: Any, places: dict[str, Any], kind: str) -> None:
    """One lexical recall (candidates, scoring, related expansion); p50 = the Median column."""
    store = places["stores"][kind]
    requests = itertools.cycle(
        [RecallRequest(query=q, scopes=(SCOPE,), max_items=8) for q in QUERIES]
    )
    result = benchmark(lambda: run_recall(store, next(requests), now=NOW)[0])
    assert result.items


@pytest.mark.parametrize("kind", PROVIDERS)
def test_single_write(benchmark: Any, places: dict[str, Any], kind: str) -> None:
    """One upsert in its own transaction (audit event, chain head, full-text row);
    writes/s = 1 / Mean."""
    store = places["stores"][kind]
    before = store.count()
    fresh = (record(i, f"new-{kind}") for i in itertools.count())
    benchmark(lambda: store.upsert(next(fresh)))
    assert store.count() > before


@pytest.mark.parametrize("kind", PROVIDERS)
def test_concurrent_recall_throughput(benchmark: Any, places: dict[str, Any], kind: str) -> None:
    """CLIENTS processes, ROUNDS recalls each, started together: recalls per second."""
    ctx = multiprocessing.get_context("spawn")
    location, schema = places["location"][kind], places["schema"][kind]

    def run() -> float:
        barrier = ctx.Barrier(CLIENTS + 1)
        results = ctx.Queue()
        workers = [
            ctx.Process(
                target=timed_client,
                args=(results, kind, location, schema, QUERIES, ROUNDS, barrier),
            )
            for _ in range(CLIENTS)
        ]
        for worker in workers:
            worker.start()
        try:
            barrier.wait(120)
            started = time.perf_counter()
            times = [results.get(timeout=300) for _ in workers]
            wall = max(time.perf_counter() - started, *times)
        finally:
            for worker in workers:
                worker.join(60)
        assert [w.exitcode for w in workers] == [0] * CLIENTS
        return CLIENTS * ROUNDS / wall

    throughput = benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info["recalls_per_second"] = throughput
    benchmark.extra_info["clients"] = CLIENTS
    print(f"\n{kind}: {CLIENTS} clients x {ROUNDS} recalls: {throughput:.1f} recalls/s")
    assert throughput > 0

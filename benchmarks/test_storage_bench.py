"""Storage benchmarks: bulk import in one transaction, single upserts and candidate selection.

Sizes: 10k records; set ``SWARMMEM_BENCH_LARGE=1`` to add 100k. Run with
``pytest benchmarks/test_storage_bench.py`` (``--benchmark-disable`` runs each body once).
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import SCOPE, bulk, record

from swarmmem.adapters.storage.jsonl import JsonlStore
from swarmmem.adapters.storage.memory import InMemoryStore
from swarmmem.adapters.storage.sqlite import SqliteStore
from swarmmem.core.model.records import MemoryRecord

SIZES = [10_000] + ([100_000] if os.environ.get("SWARMMEM_BENCH_LARGE") == "1" else [])
PROVIDERS = ["memory", "local-jsonl", "sqlite"]


def open_store(kind: str, directory: Path) -> Any:
    if kind == "memory":
        return InMemoryStore()
    if kind == "local-jsonl":
        return JsonlStore(directory / "jsonl")
    return SqliteStore(directory / "memory.db")


@pytest.fixture(scope="module")
def records_by_size() -> dict[int, list[MemoryRecord]]:
    return {size: [record(i) for i in range(size)] for size in SIZES}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("kind", PROVIDERS)
def test_bulk_import_one_transaction(
    benchmark: Any, kind: str, size: int, records_by_size: dict[int, list[MemoryRecord]]
) -> None:
    """Import ``size`` records into an empty store inside one transaction."""
    records = records_by_size[size]
    opened: list[tuple[Any, tempfile.TemporaryDirectory[str]]] = []

    def setup() -> tuple[tuple[Any, list[MemoryRecord]], dict[str, Any]]:
        tmp = tempfile.TemporaryDirectory(prefix="swarmmem-bench-")
        store = open_store(kind, Path(tmp.name))
        opened.append((store, tmp))
        return (store, records), {}

    try:
        benchmark.pedantic(bulk, setup=setup, rounds=3, iterations=1)
        store = opened[-1][0]
        assert store.count() == size
    finally:
        for store, tmp in opened:
            store.close()
            tmp.cleanup()


@pytest.fixture(scope="module", params=[(k, s) for k in PROVIDERS for s in SIZES], ids=str)
def filled(
    request: pytest.FixtureRequest, records_by_size: dict[int, list[MemoryRecord]]
) -> Iterator[Any]:
    """A store of each provider holding ``size`` records."""
    kind, size = request.param
    with tempfile.TemporaryDirectory(prefix="swarmmem-bench-") as tmp:
        store = open_store(kind, Path(tmp))
        bulk(store, records_by_size[size])
        yield store
        store.close()


def test_single_upsert(benchmark: Any, filled: Any) -> None:
    """One upsert (its own transaction, audit event and FTS rewrite) into a filled store."""
    before = filled.count()
    fresh = (record(i, "new") for i in itertools.count())
    benchmark(lambda: filled.upsert(next(fresh)))
    assert filled.count() > before


def test_select_candidates(benchmark: Any, filled: Any) -> None:
    """Candidate selection for one recall (capped at 1000; FTS5 pre-selection on SQLite)."""
    result = benchmark(
        filled.select_candidates,
        scope_keys=[SCOPE.key],
        kinds=None,
        fts_query='"pytest" OR "retry"',
        preselect_limit=160,
        scope_when_unmatched=True,
        now="2026-02-01T00:00:00.000Z",
        include_expired=False,
        candidate_cap=1000,
    )
    assert 0 < len(result.records) <= 1000

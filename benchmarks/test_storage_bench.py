"""Storage benchmarks: bulk import in one transaction, single upserts and candidate selection.

``test_import_records`` (the trusted bulk import: rows completed, secret-checked, validated,
written in batches) runs beside ``test_bare_executemany``, the floor: the same JSON rows
written with two plain ``executemany`` calls into a table and an FTS5 table, and
``test_bare_executemany_stemmed``, the same with the store's second (stemmed) FTS5 table.

Sizes: 10k records; set ``SWARMMEM_BENCH_LARGE=1`` to add 100k. Run with
``pytest benchmarks/test_storage_bench.py`` (``--benchmark-disable`` runs each body once).
"""

from __future__ import annotations

import datetime
import itertools
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import SCOPE, bulk, record

from swarmmem.adapters.detectors.regex_secrets import RegexSecretDetector
from swarmmem.adapters.storage.jsonl import JsonlStore
from swarmmem.adapters.storage.memory import InMemoryStore
from swarmmem.adapters.storage.sql.rows import fts_values
from swarmmem.adapters.storage.sqlite import SqliteStore
from swarmmem.adapters.storage.sqlite.support import sqlite_module
from swarmmem.core.model.codec import record_to_dict
from swarmmem.core.model.records import MemoryRecord
from swarmmem.core.writes.importing import import_records

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


#: the import rows of each size
RowsBySize = dict[int, list[dict[str, Any]]]


@pytest.fixture(scope="module")
def rows_by_size(records_by_size: dict[int, list[MemoryRecord]]) -> RowsBySize:
    """The records in their JSON (import) shape."""
    return {size: [record_to_dict(r) for r in records] for size, records in records_by_size.items()}


def _fresh(prefix: str, opened: list[Any]) -> Path:
    tmp = tempfile.TemporaryDirectory(prefix=prefix)
    opened.append(tmp)
    return Path(tmp.name)


_FTS_COLUMNS = (
    "id UNINDEXED, text, tags, kind, source_file_path, source_ref, metadata_symbols, metadata_files"
)


def _bare_write(benchmark: Any, rows: list[dict[str, Any]], *, stemmed: bool) -> None:
    """The JSON rows into a two-column table and an FTS5 table (``stemmed``: and a second,
    ``porter unicode61`` FTS5 table), one ``executemany`` per table in one transaction."""
    size = len(rows)
    opened: list[Any] = []
    tables = ["items_fts", *(["items_fts_porter"] if stemmed else [])]

    def setup() -> tuple[tuple[Any], dict[str, Any]]:
        conn = sqlite_module().connect(str(_fresh("swarmmem-bare-", opened) / "bare.db"))
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("CREATE TABLE items (id TEXT PRIMARY KEY, record_json TEXT NOT NULL)")
        conn.execute(f"CREATE VIRTUAL TABLE items_fts USING fts5({_FTS_COLUMNS})")
        if stemmed:
            conn.execute(
                f"CREATE VIRTUAL TABLE items_fts_porter USING fts5({_FTS_COLUMNS}, "
                "tokenize = 'porter unicode61')"
            )
        opened.append(conn)
        return (conn,), {}

    def write(conn: Any) -> None:
        with conn:
            conn.executemany(
                "INSERT INTO items (id, record_json) VALUES (?, ?)",
                [(row["id"], json.dumps(row, separators=(",", ":"))) for row in rows],
            )
            for table in tables:
                conn.executemany(
                    f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [(row["id"], *fts_values(row)) for row in rows],
                )

    try:
        benchmark.pedantic(write, setup=setup, rounds=3, iterations=1)
        conn = opened[-1]
        for table in tables:
            assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == size
    finally:
        for item in reversed(opened):
            (item.close if hasattr(item, "close") else item.cleanup)()


def _import_benchmark(test: Callable[..., None]) -> Callable[..., None]:
    """Put ``test`` in the import group, run once per size."""
    return pytest.mark.benchmark(group="import")(pytest.mark.parametrize("size", SIZES)(test))


@_import_benchmark
def test_bare_executemany(benchmark: Any, size: int, rows_by_size: RowsBySize) -> None:
    """The floor: the JSON rows into a two-column table and an FTS5 table, two executemany
    calls in one transaction (what any SQLite import pays)."""
    _bare_write(benchmark, rows_by_size[size], stemmed=False)


@_import_benchmark
def test_bare_executemany_stemmed(benchmark: Any, size: int, rows_by_size: RowsBySize) -> None:
    """The floor with the store's second full-text index: the same rows into a table and two
    FTS5 tables (``unicode61`` and ``porter unicode61``), three executemany calls."""
    _bare_write(benchmark, rows_by_size[size], stemmed=True)


@_import_benchmark
def test_import_records(benchmark: Any, size: int, rows_by_size: RowsBySize) -> None:
    """``import_records`` of the same rows into an empty SQLite store: completed, checked for
    secrets, validated, written in batches with their audit events."""
    rows = rows_by_size[size]
    opened: list[Any] = []
    secrets = RegexSecretDetector()

    def setup() -> tuple[tuple[Any], dict[str, Any]]:
        store = SqliteStore(_fresh("swarmmem-import-", opened) / "memory.db")
        opened.append(store)
        return (store,), {}

    def run(store: SqliteStore) -> None:
        result, _written = import_records(
            store,
            rows,
            now=datetime.datetime(2026, 2, 1, tzinfo=datetime.timezone.utc),
            repo_scope=SCOPE,
            secrets=secrets,
            reject_durable_secrets=True,
        )
        assert result.written == size and not result.refused

    try:
        benchmark.pedantic(run, setup=setup, rounds=3, iterations=1)
        store = opened[-1]
        assert store.count() == size and store.verify_audit_chain()["verified"]
    finally:
        for item in reversed(opened):
            (item.close if hasattr(item, "close") else item.cleanup)()

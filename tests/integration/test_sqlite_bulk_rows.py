"""A bulk import writes, on a real SQLite file, exactly the rows that one ``upsert`` per record
writes: every column of ``memory_items`` (types included, so a ``NULL`` stays a ``NULL``), both
full-text tables and the audit events, whose chain verifies."""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from factories import REPO_SCOPE, T0, at, make_memory

from swarmmem.adapters.detectors.regex_secrets import RegexSecretDetector
from swarmmem.adapters.storage.sql import records as sql_records
from swarmmem.adapters.storage.sqlite import BULK_CACHE_KIB, SqliteStore
from swarmmem.adapters.storage.sqlite.support import sqlite_module
from swarmmem.core.model.codec import record_to_dict
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.ids import to_iso
from swarmmem.core.model.records import MemoryRecord
from swarmmem.core.writes.importing import _Completer, complete_record, import_records
from swarmmem.ports.clock import FixedClock

NOW = dt.datetime(2026, 2, 1, tzinfo=dt.timezone.utc)
TABLES = ("memory_items_fts", "memory_items_fts_porter")


def varied_records() -> list[MemoryRecord]:
    """Records whose often-empty columns are set in some rows and not in others, so that a
    batch holds both, and a later batch where they are empty in every row."""
    out = []
    for i in range(7):
        record = make_memory(f"bulk fact {i} about pytest fixtures", tags=("testing", f"t{i}"))
        if i % 3 == 0:
            record = attrs.evolve(record, valid_from=at(i), supersedes_reason=f"reason {i}")
        if i == 4:
            record = attrs.evolve(record, superseded_by="mem_0123456789abcdef")
        if i == 5:  # the full-text columns of symbols and files
            metadata = {"symbol": "retry_loop", "files": ["src/a.py", 3], "touchedFiles": "b.py"}
            record = attrs.evolve(record, metadata=metadata)
        out.append(record)
    out.append(make_memory("scratch note about the retry loop", kind="scratch"))
    out.extend(make_memory(f"plain fact {i} about ruff") for i in range(5))
    return out


def direct_rows() -> list[dict[str, Any]]:
    """Rows in the shapes an import writes without building their records: derived fields,
    every optional key, escapes and non-ASCII text, numbers of both kinds, the columns
    taken from the JSON (deleted, Q value, agent role) and the provenance columns."""
    source = {"type": "file", "filePath": "src/retry.py"}
    return [
        {"kind": "project_fact", "text": 'quote " backslash \\ tab\t caf\u00e9 \U0001f600',
         "source": source, "confidence": 1, "tags": ("t\u00e9", 'q"')},
        {"kind": "project_fact", "text": "deleted fact with a learned value", "source": source,
         "metadata": {"deleted": True, "qValue": 0.9, "files": ["a.py"], "symbol": "f"}},
        {"kind": "scratch", "text": "scratch note without an expiry"},
        {"kind": "project_fact", "text": "every optional key", "source": source,
         "lastAccessedAt": at(3), "expiresAt": at(days=30), "qValue": 0.25,
         "supersededBy": "mem_0123456789abcdef", "cohortId": "c1", "producerSessionId": "s1",
         "producerAgentRole": "reviewer", "redactionPolicyVersion": 2, "schemaVersion": 1.5,
         "providerVersion": "p1", "sourceRevision": "abc", "sourceTaskId": "task-7",
         "embeddingModelVersion": "model-1", "validFrom": at(1), "supersedesReason": "newer"},
        {"kind": "project_fact", "text": "empty provenance strings", "source": source,
         "sourceTaskId": "", "embeddingModelVersion": "", "qValue": None},
    ]  # fmt: skip


@contextlib.contextmanager
def opened(path: Path) -> Iterator[SqliteStore]:
    store = SqliteStore(path, clock=FixedClock(NOW))
    try:
        yield store
    finally:
        store.close()


def snapshot(path: Path) -> dict[str, Any]:
    """Every stored value that an import writes (event ids and row versions, which are
    random, aside: a version is only checked to be set)."""
    conn = sqlite_module().connect(str(path))
    try:
        names = [row[1] for row in conn.execute("PRAGMA table_info(memory_items)")]
        assert (
            conn.execute("SELECT count(*) FROM memory_items WHERE row_version = 0").fetchone()[0]
            == 0
        )
        names.remove("row_version")
        picked = ", ".join(f"{name}, typeof({name})" for name in names)
        state: dict[str, Any] = {
            "items": conn.execute(
                f"SELECT rowid, {picked} FROM memory_items ORDER BY rowid"
            ).fetchall()
        }
        for table in TABLES:
            state[table] = conn.execute(f"SELECT rowid, * FROM {table} ORDER BY rowid").fetchall()
        state["events"] = conn.execute(
            "SELECT operation, target_id, reason, typeof(reason), timestamp, event_json, "
            "typeof(event_json) FROM memory_events ORDER BY rowid"
        ).fetchall()
        return state
    finally:
        conn.close()


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of 4 rows: the first ones mix set and empty columns, the last has none set."""
    monkeypatch.setattr(sql_records, "BATCH_SIZE", 4)


@pytest.mark.usefixtures("small_batches")
def test_upsert_many_writes_what_one_upsert_per_record_writes(tmp_path: Path) -> None:
    records = varied_records()
    with opened(tmp_path / "one.db") as store:
        for record in records:
            store.upsert(record)
    with opened(tmp_path / "bulk.db") as store:
        store.upsert_many(records)
        assert store.verify_audit_chain()["verified"] is True
    one, bulk = snapshot(tmp_path / "one.db"), snapshot(tmp_path / "bulk.db")
    assert bulk == one
    items = bulk["items"]
    upserts = [row for row in bulk["events"] if row[0] == "upsert"]
    assert len(items) == len(records)
    assert [row[1] for row in upserts] == [r.id for r in records]
    # the often-empty columns hold both values and NULLs (the comparison covers both)
    assert {(row[3], row[6]) for row in upserts} == {("null", "null")}
    kinds = {value for row in items for value in row[2::2]}
    assert {"null", "text", "integer", "real"} <= kinds
    symbols_and_files = {row[-2:] for row in bulk["memory_items_fts"]}
    assert ("retry_loop", "src/a.py b.py") in symbols_and_files and ("", "") in symbols_and_files


@pytest.mark.usefixtures("small_batches")
def test_import_records_writes_what_one_upsert_per_record_writes(tmp_path: Path) -> None:
    rows = [record_to_dict(r) for r in varied_records()]
    rows.append({"kind": "project_fact", "text": "completed row without an id", "tags": []})
    rows[1]["source"] = {"type": "file", "filePath": "src/app/main.py", "ref": "HEAD"}
    rows.extend(direct_rows())
    secrets = RegexSecretDetector()
    with opened(tmp_path / "one.db") as store:
        for raw in rows:
            store.upsert(
                complete_record(
                    raw,
                    now=NOW,
                    repo_scope=REPO_SCOPE,
                    secrets=secrets,
                    reject_durable_secrets=True,
                )
            )
    with opened(tmp_path / "bulk.db") as store:
        result, written = import_records(
            store,
            rows,
            now=NOW,
            repo_scope=REPO_SCOPE,
            secrets=secrets,
            reject_durable_secrets=True,
        )
        assert result.written == len(rows) and not result.refused
        assert store.verify_audit_chain()["verified"] is True
    assert written[-1].created_at == to_iso(NOW) and written[0].created_at == T0
    completer = _Completer(now=NOW, repo_scope=REPO_SCOPE, secrets=secrets, allowed_keys=None)
    assert all(completer.direct(raw) is not None for raw in direct_rows())
    assert snapshot(tmp_path / "bulk.db") == snapshot(tmp_path / "one.db")


def test_an_import_whose_row_cannot_be_written_as_json_writes_nothing(tmp_path: Path) -> None:
    """A metadata value that is not JSON passes the checks (as it always did) and fails the
    write: the whole import raises and leaves the store as it was."""
    rows = direct_rows()
    rows[1]["metadata"] = {"tags": {"a", "b"}}
    with opened(tmp_path / "memory.db") as store:
        with pytest.raises(TypeError):
            import_records(
                store,
                rows,
                now=NOW,
                repo_scope=REPO_SCOPE,
                secrets=RegexSecretDetector(),
                reject_durable_secrets=True,
            )
        assert store.count() == 0 and store.verify_audit_chain()["verified"] is True


def test_bulk_writes_run_with_a_larger_page_cache_and_restore_it(tmp_path: Path) -> None:
    """The page cache is raised while ``upsert_many`` runs and set back afterwards, also when
    the write fails; a connection whose cache is already larger keeps it."""
    with opened(tmp_path / "memory.db") as store:
        conn = store.db.conn
        default = conn.execute("PRAGMA cache_size").fetchone()[0]
        during: list[int] = []

        def progress(_done: int, _total: int) -> None:
            during.append(conn.execute("PRAGMA cache_size").fetchone()[0])

        store.upsert_many(varied_records(), progress=progress)
        assert during and set(during) == {-BULK_CACHE_KIB} != {default}
        assert conn.execute("PRAGMA cache_size").fetchone()[0] == default
        with pytest.raises(MemoryValidationError):
            store.upsert_many([make_memory("fine fact"), "not a record"])  # type: ignore[list-item]
        assert conn.execute("PRAGMA cache_size").fetchone()[0] == default
        conn.execute(f"PRAGMA cache_size = {-2 * BULK_CACHE_KIB}")
        during.clear()
        store.upsert_many([make_memory("one more fact")], progress=progress)
        assert during == [-2 * BULK_CACHE_KIB]

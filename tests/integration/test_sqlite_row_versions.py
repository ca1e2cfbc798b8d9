"""SQLite item rows carry a version (schema v19): what lets a warm recall skip the record JSON
of the candidates it has read before, and what tells it a row changed under it."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from factories import REPO_SCOPE, at, make_memory

from swarmmem.adapters.storage.sqlite import SqliteStore
from swarmmem.core.model.records import RecallRequest
from swarmmem.core.recall.pipeline import run_recall

NOW = at(days=1)
TEXTS = (
    "Billing retries failed payments three times before alerting",
    "Payments are refunded through the billing service queue",
    "The deploy script tags every release with the commit hash",
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    db = SqliteStore(tmp_path / "memory.db")
    for n, text in enumerate(TEXTS):
        db.upsert(make_memory(text, updated_at=at(n)))
    yield db
    db.close()


def versions(store: SqliteStore) -> dict[str, int]:
    return dict(store.db.conn.execute("SELECT id, row_version FROM memory_items").fetchall())


def recall(store: SqliteStore, query: str) -> list[Any]:
    request = RecallRequest(query=query, scopes=(REPO_SCOPE,), max_items=5)
    return list(run_recall(store, request, now=NOW)[0].items)


def test_every_write_gives_its_row_a_new_version(store: SqliteStore, tmp_path: Path) -> None:
    """The store's writes and any other writer's (a raw INSERT or UPDATE, as an earlier
    release or a hand edit would make) leave a nonzero version no row had before."""
    first = versions(store)
    assert len(first) == len(TEXTS) and 0 not in first.values()
    assert len(set(first.values())) == len(first)
    target = next(iter(first))
    store.upsert(store.get(target))  # the same record written again
    second = versions(store)
    assert second[target] != first[target]
    outside = sqlite3.connect(tmp_path / "memory.db")
    try:
        outside.execute("UPDATE memory_items SET deleted = deleted WHERE id = ?", (target,))
        outside.execute(
            "INSERT INTO memory_items (id, scope_key, kind, updated_at, record_json) "
            "SELECT 'copy', scope_key, kind, updated_at, record_json FROM memory_items "
            "WHERE id = ?",
            (target,),
        )
        outside.commit()
    finally:
        outside.close()
    third = versions(store)
    assert third[target] not in (first[target], second[target], 0)
    assert third["copy"] != 0


def test_a_warm_recall_reads_no_record_json_of_cached_candidates(store: SqliteStore) -> None:
    """The second recall of a question reads the hits' versions, not their rows."""
    first = [it.record.text for it in recall(store, "billing payments")]
    assert sorted(first[:2]) == sorted(TEXTS[:2])
    statements: list[str] = []
    store.db.conn.set_trace_callback(statements.append)
    try:
        again = recall(store, "billing payments")
    finally:
        store.db.conn.set_trace_callback(None)
    assert [it.record.text for it in again] == first
    assert statements and not [s for s in statements if "record_json" in s]
    # nor the columns its scope filter and term matching read: those are kept per version
    assert not [s for s in statements if "text_terms" in s or "scope_key" in s]


def test_a_warm_recall_filters_with_columns_another_writer_changed(
    store: SqliteStore, tmp_path: Path
) -> None:
    """The hits' scope, state and terms kept from an earlier recall are used only while the
    row's version is the one read: a memory another connection deleted, or moved to another
    scope, leaves the next recall of the same question."""
    before = {it.record.text: it.record.id for it in recall(store, "billing payments")}
    assert set(TEXTS[:2]) <= set(before)
    outside = sqlite3.connect(tmp_path / "memory.db")
    try:
        outside.execute("UPDATE memory_items SET deleted = 1 WHERE id = ?", (before[TEXTS[0]],))
        outside.execute(
            "UPDATE memory_items SET scope_key = 'repository:elsewhere' WHERE id = ?",
            (before[TEXTS[1]],),
        )
        outside.commit()
    finally:
        outside.close()
    assert not [it for it in recall(store, "billing payments") if it.record.text in TEXTS[:2]]


def test_the_terms_a_hit_holds_come_from_its_current_row(
    store: SqliteStore, tmp_path: Path
) -> None:
    """A hit's stored terms, kept from an earlier recall, are read again once another writer
    changed them (the version changed with them): the coverage follows the row."""
    recall(store, "billing payments")
    assert store.fts.hit_rows  # the hits' columns are kept
    memory_id = next(it.record.id for it in recall(store, "billing payments"))
    outside = sqlite3.connect(tmp_path / "memory.db")
    try:
        outside.execute("UPDATE memory_items SET text_terms = 'billing' WHERE id = ?", (memory_id,))
        outside.commit()
    finally:
        outside.close()
    recall(store, "billing payments")
    rowid = store.db.conn.execute(
        "SELECT rowid FROM memory_items WHERE id = ?", (memory_id,)
    ).fetchone()[0]
    assert store.fts.hit_rows[rowid][0][-1] == frozenset({"billing"})
    store.records.clear()  # what closing the store does: nothing is kept
    assert not store.fts.hit_rows


def test_a_warm_recall_sees_a_row_changed_by_another_writer(
    store: SqliteStore, tmp_path: Path
) -> None:
    """A row another connection rewrote (here its confidence, in the record JSON only) gets a
    new version from the trigger, so the recall that cached it reads it again."""
    before = recall(store, "billing payments")
    changed = before[0].record
    assert changed.confidence == pytest.approx(0.8)
    outside = sqlite3.connect(tmp_path / "memory.db")
    try:
        outside.execute(
            "UPDATE memory_items SET record_json = json_set(record_json, '$.confidence', 0.3) "
            "WHERE id = ?",
            (changed.id,),
        )
        outside.commit()
    finally:
        outside.close()
    after = {it.record.id: it.record for it in recall(store, "billing payments")}
    assert after[changed.id].confidence == pytest.approx(0.3)


def test_a_database_of_v18_gains_versions_on_open(store: SqliteStore, tmp_path: Path) -> None:
    """Rows written before v19 keep version 0 (a version like any other) and are recalled;
    the next write of one gives it a fresh version."""
    conn = store.db.conn
    for trigger in ("memory_items_row_version_insert", "memory_items_row_version_update"):
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("ALTER TABLE memory_items DROP COLUMN row_version")
    conn.execute("DELETE FROM schema_migrations WHERE version = 19")
    store.close()
    again = SqliteStore(tmp_path / "memory.db")
    try:
        assert set(versions(again).values()) == {0}
        found = recall(again, "billing payments")
        assert sorted(it.record.text for it in found[:2]) == sorted(TEXTS[:2])
        again.upsert(found[0].record)
        assert versions(again)[found[0].record.id] != 0
        assert [it.record.text for it in recall(again, "billing payments")][:2] == [
            it.record.text for it in found[:2]
        ]
    finally:
        again.close()

"""The SQLite provider on a real database file: schema, FTS, audit chain, migration, crashes."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from factories import REPO_SCOPE, T0, at, make_memory, make_proposal, select_candidates

from swarmmem.adapters.detectors.regex_secrets import RegexSecretDetector
from swarmmem.adapters.storage.export_import import import_jsonl
from swarmmem.adapters.storage.sqlite import MIGRATIONS, SqliteStore
from swarmmem.adapters.storage.sqlite.support import sqlite_module
from swarmmem.core.model.audit import GENESIS, event_row_hash
from swarmmem.core.model.codec import proposal_to_dict, record_from_dict, record_to_dict
from swarmmem.core.model.errors import CorruptStoreError, StorageError
from swarmmem.core.model.records import CuratorDecision
from swarmmem.core.writes.curator import apply_decision
from swarmmem.ports.storage import ListFilter

sqlite = sqlite_module()
NOW = at(days=1)
EXPECTED_MIGRATIONS = [
    (1, "create_memory_provider_tables"),
    (3, "create_memory_fts5_shadow_index"),
    (4, "create_meta_table"),
    (5, "create_recall_usage_timestamp_index"),
    (6, "create_embedding_config_table"),
    (7, "add_recall_learning_columns"),
    (8, "add_recall_reward_idempotency_key"),
    (9, "add_reward_events_and_recall_run_id"),
    (10, "add_recall_usage_unit_id"),
    (11, "create_memory_outcomes"),
    (12, "add_memory_provenance_columns"),
    (13, "add_memory_events_prev_hash"),
    (14, "create_memory_relations"),
    (15, "add_memory_report_columns"),
    (16, "create_stemmed_full_text_index"),
    (17, "separate_audit_chains_and_full_text_totals"),
    (18, "add_memory_text_terms"),
    (19, "add_memory_row_versions"),
]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """The database path of a test."""
    return tmp_path / "memory.db"


@pytest.fixture
def store(db: Path) -> Iterator[SqliteStore]:
    """A fresh SQLite store at ``db``."""
    opened = SqliteStore(db)
    yield opened
    opened.close()


@contextlib.contextmanager
def raw(db: Path) -> Iterator[Any]:
    """A plain connection to the database, committed on exit (for inspection and tampering)."""
    conn = sqlite.connect(str(db), isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


def columns(conn: Any, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def fts_row(conn: Any, memory_id: str) -> tuple[Any, ...]:
    rows = conn.execute(
        "SELECT text, tags, kind, source_file_path, source_ref, metadata_symbols, metadata_files "
        "FROM memory_items_fts WHERE id = ?",
        (memory_id,),
    ).fetchall()
    assert len(rows) == 1, rows
    return tuple(rows[0])


class TestSchema:
    def test_migrations_are_the_reference_ones(self, store: SqliteStore, db: Path) -> None:
        """schema_migrations holds v1 and v3..v14 with the reference names (v2 is reserved),
        then v15 (report columns), v16 (the stemmed full-text index) and v17 (PostgreSQL's
        per-role audit chains; nothing to change in SQLite), v18 (each text's stemmed terms)."""
        with raw(db) as conn:
            rows = conn.execute(
                "SELECT version, name FROM schema_migrations ORDER BY version"
            ).fetchall()
        assert [tuple(r) for r in rows] == EXPECTED_MIGRATIONS
        assert [(v, n) for v, n, _ in MIGRATIONS] == EXPECTED_MIGRATIONS

    def test_tables_and_columns(self, store: SqliteStore, db: Path) -> None:
        """Every reference table exists with its columns."""
        with raw(db) as conn:
            assert columns(conn, "memory_items") == [
                "id", "scope_key", "kind", "updated_at", "expires_at", "superseded_by", "deleted",
                "record_json", "source_task_id", "agent_role", "embedding_model_version",
                "valid_from", "supersedes_reason", "q_value", "confidence", "text_terms",
                "row_version",
            ]  # fmt: skip
            assert columns(conn, "memory_recall_usage") == [
                "id", "bundle_id", "timestamp", "usage_json", "q_value", "last_reward",
                "task_outcome", "council_verdict_json", "reward_key", "run_id", "unit_id",
            ]  # fmt: skip
            assert columns(conn, "memory_events")[-1] == "prev_hash"
            assert columns(conn, "memory_relations") == [
                "source_id",
                "target_id",
                "proposal_id",
                "created_at",
            ]
            assert columns(conn, "memory_items_fts") == [
                "id", "text", "tags", "kind", "source_file_path", "source_ref",
                "metadata_symbols", "metadata_files",
            ]  # fmt: skip
            assert columns(conn, "memory_outcomes") == [
                "id",
                "memory_id",
                "generation",
                "at",
                "event_json",
            ]
            assert set(columns(conn, "memory_reward_events")) >= {"verdict", "reward", "q_after"}
            assert columns(conn, "embedding_config") == ["key", "value"]
            meta = dict(conn.execute("SELECT key, value FROM _meta").fetchall())
        for key in (
            "scope_key_backfilled",
            "recall_run_id_backfilled",
            "provenance_columns_backfilled",
            "event_hash_chain_backfilled",
        ):
            assert meta[key] == "1"

    def test_pragmas(self, store: SqliteStore) -> None:
        """WAL, synchronous NORMAL, foreign keys on, busy timeout as configured."""
        conn = store.db.conn
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000

    @pytest.mark.parametrize(("given", "expected"), [(10**9, 60000), (-5, 0), (250.9, 250)])
    def test_busy_timeout_is_clamped(self, db: Path, given: float, expected: int) -> None:
        """busy_timeout is truncated and clamped to 0..60000."""
        with SqliteStore(db, busy_timeout_ms=given) as opened:
            assert opened.db.conn.execute("PRAGMA busy_timeout").fetchone()[0] == expected

    def test_reopen_runs_no_migration_twice(self, store: SqliteStore, db: Path) -> None:
        """A second open neither re-applies migrations nor logs migration events."""
        before = len(store.list_events())
        store.close()
        with SqliteStore(db) as again:
            assert len(again.list_events()) == before


class TestRowMapping:
    def test_record_json_strips_provenance_and_derived_fields(
        self, store: SqliteStore, db: Path
    ) -> None:
        """Provenance lives in columns; record_json has the strict reference shape without it."""
        record = make_memory(
            valid_from=T0,
            source_task_id="unit-1",
            supersedes_reason="why",
            producer_agent_role="coder",
            embedding_model_version="m:384",
        )
        store.upsert(record)
        with raw(db) as conn:
            row = conn.execute(
                "SELECT record_json, scope_key, source_task_id, agent_role, "
                "embedding_model_version, "
                "valid_from, supersedes_reason, deleted FROM memory_items"
            ).fetchone()
        data = json.loads(row[0])
        assert not {"sourceTaskId", "embeddingModelVersion", "validFrom", "supersedesReason"} & set(
            data
        )
        assert record_from_dict(data).id == record.id
        assert row[1] == REPO_SCOPE.key == '{"type":"repository","repoId":"swarmmem-tests"}'
        assert tuple(row[2:]) == ("unit-1", "coder", "m:384", T0, "why", 0)
        assert store.get(record.id) == record

    def test_defaults_for_absent_provenance(self, store: SqliteStore, db: Path) -> None:
        """Absent provenance is stored as '' / 'unknown' / NULL and read back as absent."""
        record = make_memory()
        store.upsert(record)
        with raw(db) as conn:
            row = conn.execute(
                "SELECT source_task_id, agent_role, embedding_model_version, valid_from "
                "FROM memory_items"
            ).fetchone()
        assert tuple(row) == ("", "unknown", "", None)
        assert store.get(record.id) == record


class TestFullText:
    def test_fts_rows_follow_every_write(self, store: SqliteStore, db: Path) -> None:
        """Inserts, rewrites and tombstones keep one FTS row per record with the 1.5 values."""
        record = make_memory(
            "Retry flaky uploads",
            kind="failure_pattern",
            tags=("flaky", "ci"),
            metadata={
                "symbol": "upload",
                "symbols": ["retry", 3],
                "files": ["src/up.py"],
                "file": "a.py",
            },
        )
        store.upsert(record)
        with raw(db) as conn:
            assert fts_row(conn, record.id) == (
                "Retry flaky uploads", "flaky ci", "failure pattern", "src/app/main.py", "",
                "upload retry", "a.py src/up.py",
            )  # fmt: skip
        store.upsert(attrs.evolve(record, tags=("network",)))
        store.delete(record.id, reason="fixed upstream", now=NOW)
        with raw(db) as conn:
            assert fts_row(conn, record.id)[1] == "network"
            counts = conn.execute(
                "SELECT (SELECT COUNT(*) FROM memory_items), "
                "(SELECT COUNT(*) FROM memory_items_fts)"
            ).fetchone()
        assert tuple(counts) == (1, 1)
        store.delete(record.id, reason="compact", now=NOW, hard=True)
        with raw(db) as conn:
            assert conn.execute("SELECT COUNT(*) FROM memory_items_fts").fetchone()[0] == 0

    @staticmethod
    def three_facts(store: SqliteStore) -> list[Any]:
        """Three memories written, the store closed."""
        records = [make_memory(f"pytest fact {i}") for i in range(3)]
        for record in records:
            store.upsert(record)
        store.close()
        return records

    @staticmethod
    def reopened_whole(db: Path, first: Any) -> None:
        """Opening the store indexes all three again, ``first`` with its text."""
        with SqliteStore(db), raw(db) as conn:
            assert conn.execute("SELECT COUNT(*) FROM memory_items_fts").fetchone()[0] == 3
            assert fts_row(conn, first.id)[0] == "pytest fact 0"

    def test_missing_fts_rows_are_rebuilt_on_open(self, store: SqliteStore, db: Path) -> None:
        """When FTS and memory_items counts disagree, opening rebuilds the index."""
        records = self.three_facts(store)
        with raw(db) as conn:
            conn.execute("DELETE FROM memory_items_fts WHERE id = ?", (records[0].id,))
        self.reopened_whole(db, records[0])

    def test_an_index_without_its_size_table_is_checked_too(
        self, store: SqliteStore, db: Path
    ) -> None:
        """Opening counts an index's rows in its ``_docsize`` table; an index made without
        one (``columnsize=0``) is counted itself, and a missing row is still found."""
        records = self.three_facts(store)
        with raw(db) as conn:
            for table in ("memory_items_fts", "memory_items_fts_porter"):
                sql = conn.execute(
                    "SELECT sql FROM sqlite_master WHERE name = ?", (table,)
                ).fetchone()[0]
                conn.execute(f"DROP TABLE {table}")
                conn.execute(sql[:-1] + ", columnsize=0)")  # the same table, no _docsize
                conn.execute(
                    f"INSERT INTO {table} (rowid, id, text) SELECT rowid, id, id FROM memory_items "
                    "WHERE id != ?",
                    (records[0].id,),
                )
            assert not conn.execute(
                "SELECT 1 FROM sqlite_master WHERE name = 'memory_items_fts_docsize'"
            ).fetchone()
        self.reopened_whole(db, records[0])

    def test_rows_written_without_our_rowids_are_realigned(
        self, store: SqliteStore, db: Path
    ) -> None:
        """FTS rows written the reference way (by id, without our rowid) are re-indexed."""
        a, b = make_memory("alpha pytest"), make_memory("beta pytest")
        store.upsert(a)
        store.upsert(b)
        store.close()
        with raw(db) as conn:
            conn.execute("DELETE FROM memory_items_fts WHERE id = ?", (a.id,))
            conn.execute(
                "INSERT INTO memory_items_fts (id, text, tags, kind, source_file_path, source_ref, "
                "metadata_symbols, metadata_files) "
                "VALUES (?, 'alpha pytest', '', '', '', '', '', '')",
                (a.id,),
            )
        with SqliteStore(db) as again:
            again.upsert(attrs.evolve(a, tags=("renamed",)))
            with raw(db) as conn:
                assert fts_row(conn, a.id)[1] == "renamed"
                assert fts_row(conn, b.id)[0] == "beta pytest"

    @pytest.mark.parametrize("top", [None, 2**63 - 1])
    def test_bulk_writes_index_each_row_under_its_own_rowid(
        self, store: SqliteStore, db: Path, top: int | None
    ) -> None:
        """``upsert_many`` of new rows after a hard delete of the newest row, and after a row
        holding the largest possible rowid (SQLite then picks rowids at random): both
        full-text indexes hold every record's own values under its rowid."""
        first = [make_memory(f"bulk pytest fact {i}") for i in range(4)]
        store.upsert_many(first)
        store.delete(first[-1].id, reason="compact", now=NOW, hard=True)
        if top is not None:
            with raw(db) as conn:
                conn.execute("UPDATE memory_items SET rowid = ? WHERE id = ?", (top, first[0].id))
                for table in ("memory_items_fts", "memory_items_fts_porter"):
                    conn.execute(f"UPDATE {table} SET rowid = ? WHERE id = ?", (top, first[0].id))
        more = [make_memory(f"bulk ruff fact {i}") for i in range(5)]
        written = store.upsert_many(more)
        assert [r.id for r in written] == [r.id for r in more]
        with raw(db) as conn:
            for table in ("memory_items_fts", "memory_items_fts_porter"):
                rows = conn.execute(
                    f"SELECT m.id, f.id, f.text FROM memory_items m "
                    f"LEFT JOIN {table} f ON f.rowid = m.rowid"
                ).fetchall()
                texts = {r.id: r.text for r in [*first[:-1], *more]}
                assert sorted(row[0] for row in rows) == sorted(texts)
                assert all(row[1] == row[0] and row[2] == texts[row[0]] for row in rows)
        assert len(self.candidates(store, '"ruff"').records) == 5

    def candidates(self, store: SqliteStore, query: str | None, mode: str = "manual") -> Any:
        return select_candidates(
            store, now=NOW, fts_query=query, scope_when_unmatched=mode == "manual"
        )

    def test_fts_preselects_and_orders(self, store: SqliteStore) -> None:
        """With matches, candidates are the scoped hits and fts_order is their BM25 position."""
        docs = [make_memory(f"note {i} about deployment") for i in range(10)]
        target = make_memory("pytest pytest fixtures and pytest markers")
        other = make_memory("pytest once")
        for record in [*docs, target, other]:
            store.upsert(record)
        result = self.candidates(store, '"pytest"')
        assert {r.id for r in result.records} == {target.id, other.id}
        assert result.fts_order == {target.id: 0, other.id: 1}

    def test_no_hit_falls_back_in_manual_mode_only(self, store: SqliteStore) -> None:
        """No FTS hit: manual mode scores every scoped record; other modes get nothing."""
        record = make_memory()
        store.upsert(record)
        manual = self.candidates(store, '"kubernetes"')
        assert [r.id for r in manual.records] == [record.id] and manual.fts_order is None
        for mode in ("injection", "curator", "evaluation"):
            assert self.candidates(store, '"kubernetes"', mode).records == ()

    def test_fts_error_disables_fts_for_the_store(self, store: SqliteStore) -> None:
        """A failing MATCH falls back to all scoped records and turns FTS off for good."""
        record = make_memory()
        store.upsert(record)
        broken = self.candidates(store, '"unterminated')
        assert [r.id for r in broken.records] == [record.id] and broken.fts_order is None
        assert store.text.disabled_reason is not None
        assert self.candidates(store, '"pytest"').fts_order is None


def tamper(db: Path, sql: str, *params: Any) -> None:
    with raw(db) as conn:
        conn.execute(sql, params)


class TestAuditChain:
    @pytest.fixture
    def chained(self, store: SqliteStore, db: Path) -> list[Any]:
        for i in range(4):
            store.upsert(make_memory(f"chained fact {i}"))
        store.close()
        with raw(db) as conn:
            return conn.execute("SELECT rowid, id FROM memory_events ORDER BY rowid").fetchall()

    def verify(self, db: Path) -> dict[str, Any]:
        with SqliteStore(db) as opened:
            return opened.verify_audit_chain()

    def test_intact_chain_verifies(self, store: SqliteStore, db: Path) -> None:
        """A fresh store's chain starts at GENESIS, links every row and matches the head."""
        store.append_event("compact", "store", reason="test")
        report = store.verify_audit_chain()
        assert report["verified"] is True and report["headMatch"] is True
        assert report["legacyRows"] == 0 and report["chainedRows"] == report["totalRows"]
        assert report["headStored"] == report["headExpected"]
        events = store.list_events()
        assert events[0].prev_hash == GENESIS
        last = events[-1]
        assert report["headExpected"] == event_row_hash(
            last.id, last.operation, last.target_id, last.reason, last.timestamp, last.event_json,
            last.prev_hash,
        )  # fmt: skip

    def test_edited_row_is_detected(self, chained: list[Any], db: Path) -> None:
        """Editing a middle row breaks the next row's link."""
        rowid, _ = chained[5]
        tamper(db, "UPDATE memory_events SET reason = 'forged' WHERE rowid = ?", rowid)
        report = self.verify(db)
        assert report["verified"] is False and report["headMatch"] is None
        assert report["divergence"]["rowId"] == chained[6][1]
        assert report["divergence"]["detail"].startswith("prev_hash mismatch: expected ")

    def test_deleted_row_is_detected(self, chained: list[Any], db: Path) -> None:
        """Deleting a middle row breaks the chain at its successor."""
        tamper(db, "DELETE FROM memory_events WHERE rowid = ?", chained[3][0])
        report = self.verify(db)
        assert report["verified"] is False and report["divergence"]["rowId"] == chained[4][1]

    def test_reordered_rows_are_detected(self, chained: list[Any], db: Path) -> None:
        """Moving a row to the end (delete + re-insert) is detected."""
        with raw(db) as conn:
            row = conn.execute(
                "SELECT * FROM memory_events WHERE rowid = ?", (chained[2][0],)
            ).fetchone()
            conn.execute("DELETE FROM memory_events WHERE rowid = ?", (chained[2][0],))
            conn.execute(f"INSERT INTO memory_events VALUES ({', '.join('?' * len(row))})", row)
        assert self.verify(db)["verified"] is False

    def test_truncated_tail_is_detected_by_the_head(self, chained: list[Any], db: Path) -> None:
        """Removing the last rows leaves a valid prefix whose hash differs from the stored head."""
        tamper(db, "DELETE FROM memory_events WHERE rowid >= ?", chained[-2][0])
        report = self.verify(db)
        assert report["verified"] is False and report["headMatch"] is False
        assert "divergence" not in report and report["headExpected"] != report["headStored"]

    def test_edited_last_row_is_detected_by_the_head(self, chained: list[Any], db: Path) -> None:
        """The last row has no successor; the head catches its edit."""
        tamper(db, "UPDATE memory_events SET target_id = 'x' WHERE rowid = ?", chained[-1][0])
        report = self.verify(db)
        assert report["verified"] is False and report["headMatch"] is False

    def test_anchor_must_be_genesis(self, chained: list[Any], db: Path) -> None:
        """A first chained row that does not start at GENESIS is a divergence."""
        tamper(db, "UPDATE memory_events SET prev_hash = 'x' WHERE rowid = ?", chained[0][0])
        report = self.verify(db)
        assert report["divergence"]["detail"] == (
            "chain anchor mismatch: first chained row has prev_hash x, expected GENESIS"
        )

    def test_legacy_rows_with_a_head_do_not_verify(self, chained: list[Any], db: Path) -> None:
        """Only unchained (NULL prev_hash) rows but a stored head: not verified."""
        tamper(db, "UPDATE memory_events SET prev_hash = NULL")
        report = self.verify(db)
        assert report["legacyRows"] == report["totalRows"] and report["chainedRows"] == 0
        assert report["verified"] is False and report["headMatch"] is False

    def test_concurrent_writers_keep_one_chain(self, db: Path) -> None:
        """Two connections appending alternately extend the same chain (head read in the txn)."""
        with SqliteStore(db) as a, SqliteStore(db) as b:
            for i in range(3):
                a.append_event("compact", f"a{i}")
                b.append_event("compact", f"b{i}")
            assert a.verify_audit_chain()["verified"] is True


def legacy_row(record: Any) -> str:
    return json.dumps(record_to_dict(record))


class TestLegacyMigration:
    def write_legacy(self, directory: Path) -> dict[str, Any]:
        good = make_memory("legacy fact one")
        newer = attrs.evolve(make_memory("legacy fact two"), confidence=0.4)
        proposal = make_proposal(record=good)
        (directory / "memories.jsonl").write_text(
            "\n".join(
                [
                    legacy_row(good),
                    legacy_row(make_memory("legacy fact two")),
                    "{broken json",
                    json.dumps({**record_to_dict(make_memory("third")), "kind": "nonsense"}),
                    legacy_row(newer),
                ]
            )
            + "\n"
        )
        (directory / "proposals.jsonl").write_text(json.dumps(proposal_to_dict(proposal)) + "\n")
        return {"good": good, "newer": newer, "proposal": proposal}

    def test_imports_once_with_backups_and_report(self, tmp_path: Path) -> None:
        """Valid rows become pending proposals (never memory without a curator), originals
        are backed up, invalid rows are reported, v2 is marked."""
        legacy = tmp_path / "legacy"
        legacy.mkdir()
        rows = self.write_legacy(legacy)
        original = (legacy / "memories.jsonl").read_bytes()
        with SqliteStore(
            tmp_path / "memory.db", legacy_dir=legacy, secrets=RegexSecretDetector()
        ) as store:
            assert store.count() == 0  # hostile: a planted file became active memory
            proposed = {
                p.proposed_record.id: p
                for p in store.list_proposals("pending")
                if p.proposed_record is not None and p.proposed_by.agent_role == "legacy-import"
            }
            assert proposed[rows["good"].id].proposed_record == rows["good"]
            assert proposed[rows["newer"].id].proposed_record.confidence == 0.4
            assert {p.operation for p in proposed.values()} == {"add"}
            assert store.get_proposal(rows["proposal"].id) == rows["proposal"]
            versions = [
                r[0] for r in store.db.conn.execute("SELECT version FROM schema_migrations")
            ]
            assert 2 in versions
        assert (legacy / "backups" / "memories.jsonl.pre-sqlite-migration").read_bytes() == original
        assert (legacy / "backups" / "proposals.jsonl.pre-sqlite-migration").exists()
        report = json.loads((legacy / "migration-report.json").read_text())
        assert report["importedMemories"] == 0 and report["proposedMemories"] == 2
        assert report["importedProposals"] == 1
        assert [(r["file"], r["line"]) for r in report["invalidRows"]] == [
            ("memories.jsonl", 3),
            ("memories.jsonl", 4),
        ]
        assert all(r["reason"] for r in report["invalidRows"])

    def test_never_reimports(self, tmp_path: Path) -> None:
        """Rows added to the legacy files later are not imported on the next open."""
        legacy = tmp_path / "legacy"
        legacy.mkdir()
        self.write_legacy(legacy)
        SqliteStore(
            tmp_path / "memory.db", legacy_dir=legacy, secrets=RegexSecretDetector()
        ).close()
        backup = (legacy / "backups" / "memories.jsonl.pre-sqlite-migration").read_bytes()
        late = make_memory("added after the migration")
        with (legacy / "memories.jsonl").open("a") as fh:
            fh.write(legacy_row(late) + "\n")
        with SqliteStore(
            tmp_path / "memory.db", legacy_dir=legacy, secrets=RegexSecretDetector()
        ) as store:
            assert store.get(late.id) is None and store.count() == 0
            assert len(store.list_proposals("pending")) == 3
        assert (legacy / "backups" / "memories.jsonl.pre-sqlite-migration").read_bytes() == backup


class TestUntrustedLegacyFiles:
    """JSONL found in the storage folder is imported as untrusted input."""

    def test_it_cannot_overwrite_teach_review_or_smuggle_secrets(self, tmp_path: Path) -> None:
        db, legacy = tmp_path / "memory.db", tmp_path / "legacy"
        legacy.mkdir()
        kept = make_memory("the stored version of a fact")
        with SqliteStore(db) as store:  # created before the legacy files appear
            store.upsert(kept)
        overwrite = attrs.evolve(kept, text="a planted replacement", metadata={"deleted": True})
        taught = make_memory("a fact that claims a learned value", metadata={"qValue": 0.99})
        leaked = make_memory("deploy key AKIAABCDEFGHIJKLMNOP goes here")
        reviewed = make_proposal(record=make_memory("an applied change"), status="applied")
        pending = make_proposal(record=make_memory("a pending change"))
        (legacy / "memories.jsonl").write_text(
            "\n".join(legacy_row(r) for r in (overwrite, taught, leaked)) + "\n"
        )
        (legacy / "proposals.jsonl").write_text(
            "\n".join(json.dumps(proposal_to_dict(p)) for p in (reviewed, pending)) + "\n"
        )
        with SqliteStore(db, legacy_dir=legacy, secrets=RegexSecretDetector()) as store:
            assert store.get(kept.id) == kept
            assert store.get(taught.id) is None  # a pending proposal, not memory
            (filed,) = [
                p
                for p in store.list_proposals("pending")
                if p.proposed_record is not None and p.proposed_record.id == taught.id
            ]
            assert "qValue" not in filed.proposed_record.metadata
            assert store.get(leaked.id) is None
            assert store.get_proposal(reviewed.id) is None
            assert store.get_proposal(pending.id) is not None
        report = json.loads((legacy / "migration-report.json").read_text())
        reasons = [row["reason"] for row in report["invalidRows"]]
        assert len(reasons) == 3
        assert any("may not overwrite" in r for r in reasons)
        assert any("likely secret" in r for r in reasons)
        assert any("must be pending" in r for r in reasons)


class TestCorruption:
    def test_truncated_database_is_refused_untouched(self, store: SqliteStore, db: Path) -> None:
        """A truncated file raises CorruptStoreError and is not modified."""
        for i in range(200):
            store.upsert(make_memory(f"filler fact number {i} " + "x" * 200))
        store.close()
        with raw(db) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        data = db.read_bytes()
        db.write_bytes(data[: len(data) // 2])
        for leftover in (db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
            leftover.unlink(missing_ok=True)
        before = db.read_bytes()
        with pytest.raises(CorruptStoreError) as info:
            SqliteStore(db)
        assert db.read_bytes() == before
        assert not db.with_name(db.name + "-wal").exists()
        assert "truncated" in str(info.value)

    @pytest.mark.parametrize(
        "content", [b"not a database at all\n" * 20, b"SQLite format 3\x00short"]
    )
    def test_non_database_file_is_refused(self, db: Path, content: bytes) -> None:
        """A file that is not SQLite raises CorruptStoreError and stays as it was."""
        db.write_bytes(content)
        with pytest.raises(CorruptStoreError):
            SqliteStore(db)
        assert db.read_bytes() == content

    def test_driver_errors_are_wrapped(self, db: Path) -> None:
        """A write blocked by another writer raises StorageError chained to the driver error."""
        with SqliteStore(db, busy_timeout_ms=0) as store, raw(db) as other:
            other.execute("BEGIN IMMEDIATE")
            with pytest.raises(StorageError) as info:
                store.upsert(make_memory())
            other.execute("ROLLBACK")
            assert isinstance(info.value.__cause__, sqlite.Error)
            assert store.count() == 0


class TestCompatibility:
    @pytest.mark.parametrize("written", [14, 16], ids=["reference-v14", "swarmmem-v16"])
    def test_opens_an_earlier_database(self, tmp_path: Path, written: int) -> None:
        """A database left at v14 the reference way (no chain, unaligned FTS), or at v16 as
        the release before per-role chains and stored text terms left it, opens and upgrades
        to the current version in place; its rows get their text terms."""
        db = tmp_path / "memory.db"
        record = make_memory("reference written fact")
        with raw(db) as conn:
            conn.execute(
                "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                "applied_at TEXT NOT NULL DEFAULT (datetime('now')))"
            )
            for version, name, statements in [m for m in MIGRATIONS if m.version <= written]:
                for statement in statements:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (?, ?)", (version, name)
                )
                conn.execute(
                    "INSERT INTO memory_events "
                    "(id, operation, target_id, reason, timestamp, event_json) "
                    "VALUES (?, 'migration', ?, ?, ?, NULL)",
                    (f"ev-{version}", str(version), name, T0),
                )
            conn.execute(
                "INSERT INTO memory_items (id, scope_key, kind, updated_at, record_json) "
                "VALUES (?, ?, ?, ?, ?)",
                (record.id, REPO_SCOPE.key, record.kind, T0, legacy_row(record)),
            )
            conn.execute(
                "INSERT INTO memory_items_fts (rowid, id, text, tags, kind, source_file_path, "
                "source_ref, metadata_symbols, metadata_files) "
                "VALUES (99, ?, ?, '', '', '', '', '', '')",
                (record.id, record.text),
            )
        with SqliteStore(db) as store:
            assert store.get(record.id) == attrs.evolve(record, valid_from=T0)
            assert store.verify_audit_chain()["verified"] is True
            assert (
                store.db.conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0]
                == MIGRATIONS[-1].version
            )
            held = store.db.conn.execute("SELECT text_terms FROM memory_items").fetchone()[0]
            assert held == "fact refer written"  # reference written fact, stemmed and sorted
            store.upsert(attrs.evolve(record, tags=("updated",)))
        with raw(db) as conn:
            assert fts_row(conn, record.id)[1] == "updated"

    def test_refuses_a_database_of_a_newer_release(self, db: Path) -> None:
        """A schema newer than this release knows is refused with what to do, unchanged."""
        SqliteStore(db).close()
        with raw(db) as conn:
            conn.execute("INSERT INTO schema_migrations (version, name) VALUES (99, 'future')")
        before = db.read_bytes()
        with pytest.raises(StorageError, match=r"v99, newer than the v\d+ .*upgrade swarmmem"):
            SqliteStore(db)
        assert db.read_bytes() == before

    def test_rows_an_earlier_release_writes_get_their_terms_on_the_next_open(
        self, db: Path
    ) -> None:
        """An earlier release writing to an upgraded file leaves text_terms empty; recall
        then stems those texts, and the next open fills them."""
        record = make_memory("Earlier writers leave the terms unset")
        with SqliteStore(db) as store:
            store.upsert(record)
        with raw(db) as conn:
            conn.execute("UPDATE memory_items SET text_terms = NULL")
        with SqliteStore(db) as store:
            terms = store.db.conn.execute("SELECT text_terms FROM memory_items").fetchone()[0]
        assert terms == "earlier leav term the unset writer"

    def test_a_damaged_row_is_not_reread_on_every_open(self, db: Path) -> None:
        """A row whose JSON does not parse gets empty text terms once, so later opens find
        nothing to fill (no write transaction on open)."""
        SqliteStore(db).close()
        with raw(db) as conn:
            conn.execute(
                "INSERT INTO memory_items (id, scope_key, kind, updated_at, record_json) "
                "VALUES ('mem_00000000000000aa', 'k', 'project_fact', 'x', '{not json')"
            )
        SqliteStore(db).close()
        with raw(db) as conn:
            assert conn.execute("SELECT text_terms FROM memory_items").fetchall() == [("",)]

    def test_rows_stay_readable_by_a_plain_reader(self, store: SqliteStore, db: Path) -> None:
        """record_json and proposal_json parse strictly with the reference shape."""
        record = make_memory(valid_from=T0)
        store.upsert(record)
        store.create_proposal(make_proposal(record=record))
        with raw(db) as conn:
            (record_json,) = conn.execute("SELECT record_json FROM memory_items").fetchone()
            (proposal_json,) = conn.execute("SELECT proposal_json FROM memory_proposals").fetchone()
        assert json.loads(record_json)["contentHash"] == record.content_hash
        assert json.loads(proposal_json)["proposedRecord"]["id"] == record.id

    def test_relations_are_replayed_on_open(self, store: SqliteStore, db: Path) -> None:
        """memory_relations rows lost on disk are rebuilt from applied merge proposals."""
        a, b = make_memory("a fact"), make_memory("b fact")
        store.upsert(a)
        store.upsert(b)
        store.create_proposal(
            make_proposal(operation="merge", related=[a.id, b.id], status="applied")
        )
        store.close()
        tamper(db, "DELETE FROM memory_relations")
        with SqliteStore(db) as again:
            assert again.related_ids(a.id) == [b.id] and again.related_ids(b.id) == [a.id]


# --- crash and concurrency (child processes) ------------------------------------------------


class SlowStore(SqliteStore):
    """Signals once ``pause_after`` records were written (one by one or in a bulk batch)
    and then blocks, so the parent can kill it."""

    def __init__(self, *args: Any, ready: Any, pause_after: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ready, self.pause_after, self.upserts = ready, pause_after, 0
        write_rows = self.fts.write_rows

        def counted(conn: Any, rows: Any, versions: Any) -> Any:  # a bulk batch
            result = write_rows(conn, rows, versions)
            self._written(len(rows))
            return result

        self.fts.write_rows = counted  # type: ignore[method-assign]

    def _written(self, count: int) -> None:
        before, self.upserts = self.upserts, self.upserts + count
        if before < self.pause_after <= self.upserts:
            self.ready.set()
            time.sleep(60)

    def upsert(self, record: Any) -> Any:
        result = super().upsert(record)
        self._written(1)
        return result


def _bulk_import_child(db: str, source: str, pause_after: int, ready: Any) -> None:
    store = SlowStore(db, ready=ready, pause_after=pause_after)
    import_jsonl(store, source, secrets=RegexSecretDetector())


def _decision_child(db: str, proposal_id: str, target: str, ready: Any) -> None:
    store = SlowStore(db, ready=ready, pause_after=1)
    decision = CuratorDecision(
        action="update",
        proposal_id=proposal_id,
        target_memory_id=target,
        patch={"text": "tests run with uv run pytest"},
        reason="tool changed",
    )
    apply_decision(store, decision, now=NOW)


def _kill_when_ready(target: Any, args: tuple[Any, ...]) -> None:
    ctx = multiprocessing.get_context("fork")
    ready = ctx.Event()
    child = ctx.Process(target=target, args=(*args, ready))
    child.start()
    try:
        deadline = time.monotonic() + 30
        while not ready.wait(0.05):
            assert child.is_alive(), f"child exited early with {child.exitcode}"
            assert time.monotonic() < deadline, "child never reached the middle of its transaction"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.join(10)
    assert child.exitcode == -signal.SIGKILL


@pytest.mark.slow
class TestCrashes:
    def test_sigkill_during_bulk_import_leaves_nothing(
        self, store: SqliteStore, db: Path, tmp_path: Path
    ) -> None:
        """A bulk import killed mid-transaction leaves a sound database without any of its rows."""
        store.upsert(make_memory("present before the import"))
        store.close()
        source = tmp_path / "source"
        source.mkdir()
        rows = [legacy_row(make_memory(f"imported fact {i}")) for i in range(300)]
        (source / "memories.jsonl").write_text("\n".join(rows) + "\n")
        _kill_when_ready(_bulk_import_child, (str(db), str(source), 150))
        with SqliteStore(db) as after:
            assert after.integrity_check() == "ok"
            assert after.count() == 1
            assert after.verify_audit_chain()["verified"] is True

    def test_committed_import_survives(self, store: SqliteStore, db: Path, tmp_path: Path) -> None:
        """The same import run to completion is fully visible (the all half of all-or-nothing)."""
        source = tmp_path / "source"
        source.mkdir()
        rows = [legacy_row(make_memory(f"imported fact {i}")) for i in range(300)]
        (source / "memories.jsonl").write_text("\n".join(rows) + "\n")
        assert import_jsonl(store, source, secrets=RegexSecretDetector())["importedMemories"] == 300
        store.close()
        with SqliteStore(db) as after:
            assert after.count() == 300 and after.integrity_check() == "ok"

    def test_sigkill_during_decision_leaves_the_proposal_pending(
        self, store: SqliteStore, db: Path
    ) -> None:
        """A curator decision killed between its writes changes nothing."""
        record = make_memory("tests run with pytest")
        store.upsert(record)
        proposal = make_proposal(operation="update", record=record, target=record.id)
        store.create_proposal(proposal)
        store.close()
        _kill_when_ready(_decision_child, (str(db), proposal.id, record.id))
        with SqliteStore(db) as after:
            assert after.integrity_check() == "ok"
            assert after.get_proposal(proposal.id).status == "pending"
            assert after.count() == 1 and after.get(record.id).active
            assert after.verify_audit_chain()["verified"] is True


def _propose_child(db: str, worker: int, count: int, errors: Any) -> None:
    try:
        with SqliteStore(db) as store:
            for i in range(count):
                record = make_memory(f"worker {worker} fact {i}")
                store.create_proposal(make_proposal(record=record, proposer=f"worker-{worker}"))
    except Exception as exc:  # reported to the parent, which fails the test
        errors.put(f"{type(exc).__name__}: {exc}")


def _run_proposers(db: Path, processes: int, count: int) -> tuple[list[int | None], Any]:
    """Fork ``processes`` children that each file ``count`` proposals into ``db`` at once;
    wait for them (a minute each at most). Their exit codes and the queue of their errors."""
    ctx = multiprocessing.get_context("fork")
    errors = ctx.Queue()
    workers = [
        ctx.Process(target=_propose_child, args=(str(db), w, count, errors))
        for w in range(processes)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    return [w.exitcode for w in workers], errors


@pytest.mark.slow
def test_concurrent_processes_lose_no_proposal(db: Path) -> None:
    """Four processes writing proposals at once lose nothing and never see 'database is locked'."""
    SqliteStore(db).close()
    exit_codes, errors = _run_proposers(db, 4, 40)
    assert exit_codes == [0, 0, 0, 0]
    assert errors.empty(), errors.get()
    with SqliteStore(db) as store:
        assert len(store.list_proposals()) == 160
        assert store.verify_audit_chain()["verified"] is True


@pytest.mark.slow
def test_concurrent_first_open_migrates_once(tmp_path: Path) -> None:
    """Processes opening a fresh database together apply each migration exactly once."""
    db = tmp_path / "fresh.db"
    _, errors = _run_proposers(db, 3, 3)
    assert errors.empty(), errors.get()
    with SqliteStore(db) as store:
        versions = [r[0] for r in store.db.conn.execute("SELECT version FROM schema_migrations")]
        assert versions == [v for v, _ in EXPECTED_MIGRATIONS]
        assert len(store.list_proposals()) == 9
        assert store.verify_audit_chain()["verified"] is True


def test_list_sql_post_filter_keeps_unparsable_expiry(store: SqliteStore, db: Path) -> None:
    """list() hides rows failing the SQL expiry test unless include_expired."""
    record = make_memory()
    store.upsert(record)
    tamper(db, "UPDATE memory_items SET expires_at = '2025-01-01T00:00:00.000Z'")
    assert store.list(ListFilter(now=NOW)) == []
    assert len(store.list(ListFilter(now=NOW, include_expired=True))) == 1

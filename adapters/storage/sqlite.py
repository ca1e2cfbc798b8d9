"""The ``sqlite`` storage provider (the default): one database file, reference-compatible.

The schema is the reference one, built by migrations v1..v14 recorded in
``schema_migrations`` (v2 is the marker row of the one-time legacy JSONL import). Records
live in ``memory_items`` (``record_json`` without the provenance keys, which have columns of
their own), full text in the FTS5 table ``memory_items_fts`` (rewritten on every write,
tombstones included), audit events in ``memory_events`` chained by ``prev_hash``.

Every write runs in a ``BEGIN IMMEDIATE`` transaction (nested blocks use savepoints), so
several processes can share one database: writers queue on the busy timeout instead of
failing, and a crash leaves either all or nothing of a transaction. Driver errors surface
as :class:`~swarmmem.core.model.errors.StorageError`, or :class:`CorruptStoreError` for a file that
is not a (complete) database; a corrupt file is detected before anything is written to it.

Full-text rows share the ``rowid`` of their ``memory_items`` row so that a rewrite is a
point delete; on open the alignment and the row counts are checked and the index rebuilt
when they disagree (for example after a write by another implementation).
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import json
import math
import os
import shutil
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import attrs

from swarmmem.adapters.storage.memory import (
    MAX_RELATIONS_PER_MEMORY,
    dumps,
    event_json_for,
    materialize,
    merge_pairs,
    normalize_outcome_event,
    normalize_recall_usage,
    normalize_reward_event,
    passes_parsed_expiry,
    relation_created_at,
    stored_form,
)
from swarmmem.adapters.storage.sql_rows import (
    EVENT_COLUMNS,
    event_from_row,
    recall_usage_params,
    record_from_columns,
    reward_event_from_row,
    reward_event_params,
)
from swarmmem.adapters.storage.sqlite_support import sqlite_module
from swarmmem.core.model.audit import CHAIN_HEAD_KEY, GENESIS, event_row_hash, verify_event_chain
from swarmmem.core.model.codec import (
    proposal_from_dict,
    proposal_to_dict,
    record_to_dict,
)
from swarmmem.core.model.errors import (
    ConflictError,
    CorruptStoreError,
    MemoryValidationError,
    NotFoundError,
    StorageError,
)
from swarmmem.core.model.ids import iso_to_ms, stable_scope_key, to_iso
from swarmmem.core.model.records import MemoryProposal, MemoryRecord
from swarmmem.ports.clock import Clock, SystemClock
from swarmmem.ports.storage import Candidates, ListFilter, StoredEvent

DEFAULT_PATH = Path(".swarm") / "memory" / "memory.db"
LEGACY_JSONL_MIGRATION_VERSION = 2
LEGACY_JSONL_MIGRATION_NAME = "legacy_jsonl_import_complete"
LEGACY_FILES = ("memories.jsonl", "proposals.jsonl")
BACKUP_SUFFIX = ".pre-sqlite-migration"
MIGRATION_REPORT = "migration-report.json"
MAX_BUSY_TIMEOUT_MS = 60_000
_CACHE_LIMIT = 50_000
_SQLITE_MAGIC = b"SQLite format 3\x00"

SCHEMA_MIGRATIONS_SQL = """CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL DEFAULT (datetime('now'))
)"""

# (version, name, statements). v2 is not here: it is the legacy-import marker row.
MIGRATIONS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (
        1,
        "create_memory_provider_tables",
        (
            """CREATE TABLE IF NOT EXISTS memory_items (
  id TEXT PRIMARY KEY, scope_key TEXT NOT NULL, kind TEXT NOT NULL,
  updated_at TEXT NOT NULL, expires_at TEXT, superseded_by TEXT,
  deleted INTEGER NOT NULL DEFAULT 0, record_json TEXT NOT NULL)""",
            "CREATE INDEX IF NOT EXISTS idx_memory_items_scope_kind "
            "ON memory_items(scope_key, kind)",
            "CREATE INDEX IF NOT EXISTS idx_memory_items_updated_at ON memory_items(updated_at)",
            """CREATE TABLE IF NOT EXISTS memory_proposals (
  id TEXT PRIMARY KEY, status TEXT NOT NULL, created_at TEXT NOT NULL,
  proposal_json TEXT NOT NULL)""",
            "CREATE INDEX IF NOT EXISTS idx_memory_proposals_status_created "
            "ON memory_proposals(status, created_at)",
            """CREATE TABLE IF NOT EXISTS memory_events (
  id TEXT PRIMARY KEY, operation TEXT NOT NULL, target_id TEXT NOT NULL, reason TEXT,
  timestamp TEXT NOT NULL, event_json TEXT)""",
            """CREATE TABLE IF NOT EXISTS memory_recall_usage (
  id TEXT PRIMARY KEY, bundle_id TEXT NOT NULL, timestamp TEXT NOT NULL,
  usage_json TEXT NOT NULL)""",
            "CREATE INDEX IF NOT EXISTS idx_memory_recall_usage_bundle "
            "ON memory_recall_usage(bundle_id)",
        ),
    ),
    (
        3,
        "create_memory_fts5_shadow_index",
        (
            "CREATE VIRTUAL TABLE IF NOT EXISTS memory_items_fts USING fts5(id UNINDEXED, text, "
            "tags, kind, source_file_path, source_ref, metadata_symbols, metadata_files)",
        ),
    ),
    (
        4,
        "create_meta_table",
        ("CREATE TABLE IF NOT EXISTS _meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",),
    ),
    (
        5,
        "create_recall_usage_timestamp_index",
        (
            "CREATE INDEX IF NOT EXISTS idx_memory_recall_usage_timestamp "
            "ON memory_recall_usage(timestamp DESC)",
        ),
    ),
    (
        6,
        "create_embedding_config_table",
        ("CREATE TABLE IF NOT EXISTS embedding_config (key TEXT PRIMARY KEY, value TEXT)",),
    ),
    (
        7,
        "add_recall_learning_columns",
        (
            "ALTER TABLE memory_recall_usage ADD COLUMN q_value REAL DEFAULT 0.5",
            "ALTER TABLE memory_recall_usage ADD COLUMN last_reward REAL",
            "ALTER TABLE memory_recall_usage ADD COLUMN task_outcome TEXT",
            "ALTER TABLE memory_recall_usage ADD COLUMN council_verdict_json TEXT",
        ),
    ),
    (
        8,
        "add_recall_reward_idempotency_key",
        ("ALTER TABLE memory_recall_usage ADD COLUMN reward_key TEXT",),
    ),
    (
        9,
        "add_reward_events_and_recall_run_id",
        (
            """CREATE TABLE IF NOT EXISTS memory_reward_events (
  id TEXT PRIMARY KEY, memory_id TEXT NOT NULL, run_id TEXT, unit_id TEXT,
  verdict TEXT NOT NULL, reward REAL NOT NULL, q_before REAL, q_after REAL,
  verdict_synthesis_json TEXT, timestamp TEXT NOT NULL)""",
            "CREATE INDEX IF NOT EXISTS idx_memory_reward_events_memory "
            "ON memory_reward_events(memory_id)",
            "ALTER TABLE memory_recall_usage ADD COLUMN run_id TEXT",
            "CREATE INDEX IF NOT EXISTS idx_memory_recall_usage_run_id "
            "ON memory_recall_usage(run_id)",
        ),
    ),
    (
        10,
        "add_recall_usage_unit_id",
        (
            "ALTER TABLE memory_recall_usage ADD COLUMN unit_id TEXT",
            "CREATE INDEX IF NOT EXISTS idx_memory_recall_usage_unit_id "
            "ON memory_recall_usage(unit_id)",
        ),
    ),
    (
        11,
        "create_memory_outcomes",
        (
            "CREATE TABLE IF NOT EXISTS memory_outcomes (id TEXT PRIMARY KEY, "
            "memory_id TEXT NOT NULL, generation TEXT NOT NULL, at TEXT NOT NULL, "
            "event_json TEXT NOT NULL)",
            "CREATE INDEX IF NOT EXISTS idx_memory_outcomes_memory_generation "
            "ON memory_outcomes(memory_id, generation, at, id)",
        ),
    ),
    (
        12,
        "add_memory_provenance_columns",
        (
            "ALTER TABLE memory_items ADD COLUMN source_task_id TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE memory_items ADD COLUMN agent_role TEXT NOT NULL DEFAULT 'unknown'",
            "ALTER TABLE memory_items ADD COLUMN embedding_model_version TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE memory_items ADD COLUMN valid_from TEXT",
            "ALTER TABLE memory_items ADD COLUMN supersedes_reason TEXT",
        ),
    ),
    (13, "add_memory_events_prev_hash", ("ALTER TABLE memory_events ADD COLUMN prev_hash TEXT",)),
    (
        14,
        "create_memory_relations",
        (
            """CREATE TABLE IF NOT EXISTS memory_relations (
  source_id TEXT NOT NULL, target_id TEXT NOT NULL, proposal_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (source_id, target_id),
  FOREIGN KEY (source_id) REFERENCES memory_items(id) ON DELETE CASCADE,
  FOREIGN KEY (target_id) REFERENCES memory_items(id) ON DELETE CASCADE,
  FOREIGN KEY (proposal_id) REFERENCES memory_proposals(id))""",
            "CREATE INDEX IF NOT EXISTS idx_memory_relations_source "
            "ON memory_relations(source_id, target_id)",
        ),
    ),
)
LATEST_VERSION = MIGRATIONS[-1][0]

_ITEM_COLUMNS = (
    "id, record_json, source_task_id, agent_role, embedding_model_version, valid_from, "
    "supersedes_reason"
)
_UPSERT_SQL = """INSERT INTO memory_items (id, scope_key, kind, updated_at, expires_at,
  superseded_by, deleted, record_json, source_task_id, agent_role, embedding_model_version,
  valid_from, supersedes_reason)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(id) DO UPDATE SET scope_key = excluded.scope_key, kind = excluded.kind,
  updated_at = excluded.updated_at, expires_at = excluded.expires_at,
  superseded_by = excluded.superseded_by, deleted = excluded.deleted,
  record_json = excluded.record_json, source_task_id = excluded.source_task_id,
  agent_role = excluded.agent_role, embedding_model_version = excluded.embedding_model_version,
  valid_from = memory_items.valid_from,
  supersedes_reason = COALESCE(excluded.supersedes_reason, memory_items.supersedes_reason)
RETURNING rowid, valid_from, supersedes_reason"""
_FTS_INSERT_SQL = (
    "INSERT INTO memory_items_fts (rowid, id, text, tags, kind, source_file_path, source_ref, "
    "metadata_symbols, metadata_files) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
RECALL_INDEX = "idx_memory_items_recall_order"


def _list_query(flt: ListFilter, columns: str) -> tuple[str, list[Any]] | None:
    """The reference list query for ``flt`` selecting ``columns`` (None: nothing can match)."""
    where: list[str] = []
    params: list[Any] = []
    for column, values in (("scope_key", flt.scope_keys), ("kind", flt.kinds)):
        if values is None:
            continue
        if not values:
            return None
        where.append(f"{column} IN ({', '.join('?' for _ in values)})")
        params.extend(values)
    if not flt.include_inactive:
        where.append("superseded_by IS NULL AND deleted = 0")
    if not flt.include_expired:
        where.append("(expires_at IS NULL OR expires_at > ?)")
        params.append(flt.now)
    sql = f"SELECT {columns} FROM memory_items"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY updated_at DESC, id ASC"
    if flt.limit is not None:
        sql += " LIMIT ?"
        params.append(max(flt.limit, 0))
    return sql, params


_FTS_SELECT_SQL = (
    "SELECT id, bm25(memory_items_fts) AS rank FROM memory_items_fts WHERE memory_items_fts "
    "MATCH ? AND id IN (SELECT value FROM json_each(?)) ORDER BY rank ASC LIMIT ?"
)

F = TypeVar("F", bound=Callable[..., Any])


def clamp_busy_timeout(value: float) -> int:
    """``busy_timeout`` in ms: truncated and clamped to 0..60000 (non-finite -> default)."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return 5000
    return max(0, min(MAX_BUSY_TIMEOUT_MS, math.trunc(value)))


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)]
    return []


def fts_values(record: Mapping[str, Any]) -> tuple[str, str, str, str, str, str, str]:
    """The FTS columns (text .. metadata_files) of a record in its JSON shape."""
    source = record.get("source") if isinstance(record.get("source"), Mapping) else {}
    metadata = record.get("metadata") if isinstance(record.get("metadata"), Mapping) else {}
    assert isinstance(source, Mapping) and isinstance(metadata, Mapping)
    text = record.get("text")
    kind = record.get("kind")
    file_path = source.get("filePath")
    ref = source.get("ref")
    symbols = [*_strings(metadata.get("symbol")), *_strings(metadata.get("symbols"))]
    files: list[str] = []
    for key in ("file", "filePath", "files", "touchedFiles"):
        files.extend(_strings(metadata.get(key)))
    return (
        text if isinstance(text, str) else "",
        " ".join(_strings(record.get("tags"))),
        kind.replace("_", " ") if isinstance(kind, str) else "",
        file_path if isinstance(file_path, str) else "",
        ref if isinstance(ref, str) else "",
        " ".join(symbols),
        " ".join(files),
    )


def _guarded(method: F) -> F:
    """Translate driver errors raised by ``method`` into the swarmmem hierarchy."""

    @functools.wraps(method)
    def wrapper(self: SqliteStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except self._sqlite.Error as exc:
            raise self._translate(exc) from exc

    return wrapper  # type: ignore[return-value]


class SqliteStore:
    """A :class:`~swarmmem.ports.storage.StorageProvider` over one SQLite database.

    Args:
        path: the database file (the configuration default is ``.swarm/memory/memory.db``).
        busy_timeout_ms: how long a writer waits for another one (clamped to 0..60000).
        clock: the time source of audit events (the system clock by default).
        legacy_dir: a directory whose ``memories.jsonl``/``proposals.jsonl`` are imported
            once, on the first open that finds them (backups and a report are written there).
        embedding_model_version: the value of the ``embedding_model_version`` column when
            embeddings are active; otherwise the record's own value (or ``''``) is kept.
    """

    name = "sqlite"

    def __init__(
        self,
        path: str | os.PathLike[str] = DEFAULT_PATH,
        *,
        busy_timeout_ms: float = 5000,
        clock: Clock | None = None,
        legacy_dir: str | os.PathLike[str] | None = None,
        embedding_model_version: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.busy_timeout_ms = clamp_busy_timeout(busy_timeout_ms)
        self.legacy_dir = None if legacy_dir is None else Path(legacy_dir)
        self.embedding_model_version = embedding_model_version
        self.load_report: builtins.list[dict[str, Any]] = []
        self.migration_report: dict[str, Any] | None = None
        self.fts_disabled_reason: str | None = None
        self._clock: Clock = clock or SystemClock()
        self._sqlite = sqlite_module()
        self._depth = 0
        self._chain_active = False
        self._fts_enabled = True
        self._cache: dict[str, tuple[tuple[Any, ...], MemoryRecord]] = {}
        self._reported_ids: set[str] = set()
        self._conn: Any = None
        self._check_file()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot create the directory of {self.path}: {exc}") from exc
        try:
            self._conn = self._sqlite.connect(
                str(self.path), isolation_level=None, timeout=self.busy_timeout_ms / 1000.0
            )
            self._init()
        except self._sqlite.Error as exc:
            self._abandon()
            raise self._translate(exc) from exc
        except BaseException:
            self._abandon()
            raise

    # -- opening -------------------------------------------------------------------------

    def _check_file(self) -> None:
        """Refuse a file that is not a complete SQLite database, without touching it.

        A writer in another process may be extending the file at this instant, so a failed
        check is repeated a few times before the file is declared corrupt.
        """
        for attempt in range(4):
            problem = self._file_problem()
            if problem is None:
                return
            if attempt < 3:
                time.sleep(0.05)
        raise CorruptStoreError(f"{self.path} {problem}")

    def _file_problem(self) -> str | None:
        try:
            size = self.path.stat().st_size
            if size == 0:
                return None
            with self.path.open("rb") as fh:
                header = fh.read(100)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError(f"cannot read {self.path}: {exc}") from exc
        if len(header) < 100 or not header.startswith(_SQLITE_MAGIC):
            return "is not a SQLite database (bad or short header)"
        page_size = int.from_bytes(header[16:18], "big")
        page_size = 65536 if page_size == 1 else page_size
        if page_size < 512 or page_size & (page_size - 1):
            return f"has an invalid page size {page_size}"
        if size % page_size:
            return f"is truncated: {size} bytes is not a whole number of {page_size}-byte pages"
        pages = int.from_bytes(header[28:32], "big")
        header_valid = header[24:28] == header[92:96]
        try:
            wal_has_frames = self.path.with_name(self.path.name + "-wal").stat().st_size > 32
        except OSError:
            wal_has_frames = False
        if header_valid and pages and size < pages * page_size and not wal_has_frames:
            return f"is truncated: {size} bytes for {pages} pages of {page_size} bytes"
        return None

    def _abandon(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
            self._conn = None

    def _translate(self, exc: BaseException) -> StorageError:
        message = str(exc)
        lowered = message.lower()
        if any(s in lowered for s in ("not a database", "malformed", "corrupt")):
            return CorruptStoreError(f"{self.path}: {message}")
        return StorageError(f"sqlite store {self.path}: {message}")

    def _init(self) -> None:
        conn = self._conn
        conn.execute(f"PRAGMA busy_timeout = {self.busy_timeout_ms}")
        self._retry_locked(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchall())
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # reads the schema
        self._migrate()
        self._run_backfills()
        self._ensure_recall_index()
        self._init_fts()
        self._legacy_import()
        self._replay_relations()

    def _ensure_recall_index(self) -> None:
        """A covering index for the recall candidate query (runtime-only, like the vec table).

        It lets recall find the newest active ids of a scope from the index alone, without
        reading record rows; databases of the reference implementation simply gain it.
        """
        if self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (RECALL_INDEX,)
        ).fetchone():
            return
        self._retry_locked(
            lambda: self._conn.execute(
                f"CREATE INDEX IF NOT EXISTS {RECALL_INDEX} ON memory_items(scope_key, "
                "superseded_by, deleted, updated_at DESC, id, kind, expires_at)"
            )
        )

    def _retry_locked(self, action: Callable[[], Any]) -> Any:
        """Run ``action``, retrying "database is locked" until the busy timeout has passed."""
        deadline = time.monotonic() + self.busy_timeout_ms / 1000.0
        while True:
            try:
                return action()
            except self._sqlite.OperationalError as exc:
                if "locked" not in str(exc).lower() or time.monotonic() >= deadline:
                    raise
                time.sleep(0.01)

    def _table_exists(self, name: str) -> bool:
        row = self._conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = ? AND type IN ('table', 'view')", (name,)
        ).fetchone()
        return row is not None

    def _columns(self, table: str) -> set[str]:
        return {row[1] for row in self._conn.execute(f"PRAGMA table_info({table})")}

    def _current_version(self) -> int:
        row = self._conn.execute(
            "SELECT COALESCE(MAX(version), 0) FROM schema_migrations"
        ).fetchone()
        return int(row[0])

    def _refresh_chain_state(self) -> None:
        self._chain_active = (
            self._table_exists("memory_events")
            and "prev_hash" in self._columns("memory_events")
            and self._table_exists("_meta")
            and self._get_meta("event_hash_chain_backfilled") == "1"
        )

    def _migrate(self) -> None:
        self._conn.execute(SCHEMA_MIGRATIONS_SQL)
        self._refresh_chain_state()
        if self._current_version() >= LATEST_VERSION:
            return
        for version, name, statements in MIGRATIONS:
            with self.transaction():
                conn = self._conn
                if version <= self._current_version():
                    continue
                for statement in statements:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (?, ?)", (version, name)
                )
                self._insert_event("migration", str(version), reason=name)

    def _get_meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM _meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, key: str, value: str) -> None:
        self._conn.execute("INSERT OR REPLACE INTO _meta (key, value) VALUES (?, ?)", (key, value))

    def _run_backfills(self) -> None:
        steps: tuple[tuple[str, Callable[[], None]], ...] = (
            ("scope_key_backfilled", self._backfill_scope_keys),
            ("recall_run_id_backfilled", self._backfill_recall_run_ids),
            ("provenance_columns_backfilled", self._backfill_provenance),
            ("event_hash_chain_backfilled", self._backfill_event_chain),
        )
        for key, step in steps:
            if self._get_meta(key) == "1":
                continue
            with self.transaction():
                if self._get_meta(key) == "1":
                    continue
                step()
                self._set_meta(key, "1")
        self._refresh_chain_state()

    def _backfill_scope_keys(self) -> None:
        rows = self._conn.execute("SELECT id, scope_key, record_json FROM memory_items").fetchall()
        for memory_id, scope_key, record_json in rows:
            try:
                scope = json.loads(record_json).get("scope")
                key = stable_scope_key(scope)
            except (ValueError, TypeError, KeyError, AttributeError):
                continue
            if key != scope_key:
                self._conn.execute(
                    "UPDATE memory_items SET scope_key = ? WHERE id = ?", (key, memory_id)
                )

    def _backfill_recall_run_ids(self) -> None:
        self._conn.execute(
            "UPDATE memory_recall_usage SET run_id = json_extract(usage_json, '$.runId') "
            "WHERE run_id IS NULL AND json_valid(usage_json)"
        )

    def _backfill_provenance(self) -> None:
        self._conn.execute(
            "UPDATE memory_items SET valid_from = COALESCE("
            "json_extract(record_json, '$.createdAt'), json_extract(record_json, '$.updatedAt')) "
            "WHERE valid_from IS NULL AND json_valid(record_json)"
        )

    def _backfill_event_chain(self) -> None:
        rows = self._conn.execute(
            "SELECT rowid, id, operation, target_id, reason, timestamp, event_json "
            "FROM memory_events ORDER BY rowid ASC"
        ).fetchall()
        previous = GENESIS
        for rowid, event_id, operation, target_id, reason, timestamp, event_json in rows:
            self._conn.execute(
                "UPDATE memory_events SET prev_hash = ? WHERE rowid = ?", (previous, rowid)
            )
            previous = event_row_hash(
                event_id, operation, target_id, reason, timestamp, event_json, previous
            )
        if rows:
            self._set_meta(CHAIN_HEAD_KEY, previous)
        self._chain_active = True
        self._insert_event(
            "migration",
            "13",
            reason="backfill_event_hash_chain",
            event={"detail": f"{len(rows)} memory_events row(s) chained deterministically"},
        )

    def _init_fts(self) -> None:
        if not self._table_exists("memory_items_fts"):
            with self.transaction():
                conn = self._conn
                conn.execute(MIGRATIONS[1][2][0])
                self._rebuild_fts_rows()
            return
        items = self._conn.execute("SELECT COUNT(*) FROM memory_items").fetchone()[0]
        indexed = self._conn.execute("SELECT COUNT(*) FROM memory_items_fts").fetchone()[0]
        aligned = items
        if items == indexed and items:
            aligned = self._conn.execute(
                "SELECT COUNT(*) FROM memory_items m JOIN memory_items_fts f ON f.rowid = m.rowid "
                "WHERE f.id = m.id"
            ).fetchone()[0]
        if items != indexed or aligned != items:
            self.rebuild_fts()

    def rebuild_fts(self) -> int:
        """Rebuild the full-text index from ``memory_items``; returns the rows indexed."""
        with self._guard(), self.transaction():
            return self._rebuild_fts_rows()

    def _rebuild_fts_rows(self) -> int:
        conn = self._conn
        conn.execute("DELETE FROM memory_items_fts")
        count = 0
        for rowid, memory_id, record_json in conn.execute(
            "SELECT rowid, id, record_json FROM memory_items"
        ).fetchall():
            try:
                data = json.loads(record_json)
            except ValueError:
                data = {}
            values = fts_values(data if isinstance(data, Mapping) else {})
            conn.execute(_FTS_INSERT_SQL, (rowid, memory_id, *values))
            count += 1
        return count

    def _replay_relations(self) -> None:
        proposals = self._applied_merge_proposals()
        if not proposals:
            return
        with self.transaction():
            for proposal in proposals:
                self._write_relations(proposal)

    def _applied_merge_proposals(self) -> builtins.list[MemoryProposal]:
        out = []
        for (proposal_json,) in self._conn.execute(
            "SELECT proposal_json FROM memory_proposals WHERE status = 'applied' "
            "ORDER BY created_at ASC, id ASC"
        ).fetchall():
            try:
                proposal = proposal_from_dict(json.loads(proposal_json))
            except (ValueError, MemoryValidationError):
                continue
            if proposal.operation == "merge":
                out.append(proposal)
        return out

    def _write_relations(self, proposal: MemoryProposal) -> None:
        created = relation_created_at(proposal)
        for source, target in merge_pairs(proposal):
            self._conn.execute(
                "INSERT OR IGNORE INTO memory_relations "
                "(source_id, target_id, proposal_id, created_at) "
                "SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memory_items WHERE id = ?) "
                "AND EXISTS (SELECT 1 FROM memory_items WHERE id = ?)",
                (source, target, proposal.id, created, source, target),
            )

    def _legacy_import(self) -> None:
        directory = self.legacy_dir
        if directory is None or not any((directory / f).is_file() for f in LEGACY_FILES):
            return
        marker = self._conn.execute(
            "SELECT 1 FROM schema_migrations WHERE version = ?", (LEGACY_JSONL_MIGRATION_VERSION,)
        ).fetchone()
        if marker is not None:
            return
        from swarmmem.adapters.storage.export_import import import_jsonl, write_json_atomic

        backups = []
        for file in (*LEGACY_FILES, "outcome-events.jsonl"):
            source = directory / file
            if not source.is_file():
                continue
            target = directory / "backups" / f"{file}{BACKUP_SUFFIX}"
            created = not target.exists()
            if created:
                target.parent.mkdir(parents=True, exist_ok=True)
                tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
                shutil.copy2(source, tmp)
                os.replace(tmp, target)
            backups.append(
                {"file": file, "path": str(Path("backups") / target.name), "created": created}
            )
        outcomes = directory / "outcome-events.jsonl"
        with self.transaction():
            marker = self._conn.execute(
                "SELECT 1 FROM schema_migrations WHERE version = ?",
                (LEGACY_JSONL_MIGRATION_VERSION,),
            ).fetchone()
            if marker is not None:
                return
            report = import_jsonl(self, directory)
            self._conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (?, ?)",
                (LEGACY_JSONL_MIGRATION_VERSION, LEGACY_JSONL_MIGRATION_NAME),
            )
            stat = outcomes.stat() if outcomes.is_file() else None
            self._set_meta(
                "legacy_jsonl_outcomes_import_complete",
                "missing" if stat is None else f"{stat.st_size}:{int(stat.st_mtime * 1000)}",
            )
            self._insert_event(
                "migration",
                str(LEGACY_JSONL_MIGRATION_VERSION),
                reason=LEGACY_JSONL_MIGRATION_NAME,
                event={
                    "importedMemories": report["importedMemories"],
                    "importedProposals": report["importedProposals"],
                    "invalidRows": report["invalidCount"],
                },
            )
        self.migration_report = {"completedAt": self._now(), **report, "backups": backups}
        write_json_atomic(directory / MIGRATION_REPORT, self.migration_report)

    # -- plumbing ------------------------------------------------------------------------

    def _now(self) -> str:
        return to_iso(self._clock.now())

    def _live_conn(self) -> Any:
        if self._conn is None:
            raise StorageError(f"the sqlite store {self.path} is closed")
        return self._conn

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except self._sqlite.Error as exc:
            raise self._translate(exc) from exc

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """``BEGIN IMMEDIATE`` .. ``COMMIT`` (``ROLLBACK`` on error); nested ones are savepoints."""
        conn = self._live_conn()
        depth = self._depth
        savepoint = f"swarmmem_sp{depth}"
        with self._guard():
            conn.execute("BEGIN IMMEDIATE" if depth == 0 else f"SAVEPOINT {savepoint}")
        self._depth += 1
        try:
            yield
        except BaseException:
            self._depth = depth
            with contextlib.suppress(Exception):
                if depth == 0:
                    conn.execute("ROLLBACK")
                else:
                    conn.execute(f"ROLLBACK TO {savepoint}")
                    conn.execute(f"RELEASE {savepoint}")
            if depth == 0:
                self._cache.clear()
            raise
        else:
            self._depth = depth
            try:
                conn.execute("COMMIT" if depth == 0 else f"RELEASE {savepoint}")
            except self._sqlite.Error as exc:
                if depth == 0:
                    with contextlib.suppress(Exception):
                        conn.execute("ROLLBACK")
                    self._cache.clear()
                raise self._translate(exc) from exc

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (idempotent)."""
        if self._conn is not None:
            conn, self._conn = self._conn, None
            self._cache.clear()
            with contextlib.suppress(Exception):
                conn.close()

    def _insert_event(
        self,
        operation: str,
        target_id: str,
        *,
        reason: str | None = None,
        event: Mapping[str, Any] | None = None,
    ) -> StoredEvent:
        """Insert an event row; inside a transaction, chained when the chain is active."""
        conn = self._conn
        stored = StoredEvent(
            id=str(uuid.uuid4()),
            operation=operation,
            target_id=target_id,
            timestamp=self._now(),
            reason=reason,
            event_json=event_json_for(reason, event),
        )
        if not self._chain_active:
            conn.execute(
                "INSERT INTO memory_events (id, operation, target_id, reason, timestamp, "
                "event_json) VALUES (?, ?, ?, ?, ?, ?)",
                (stored.id, operation, target_id, reason, stored.timestamp, stored.event_json),
            )
            return stored
        head = self._get_meta(CHAIN_HEAD_KEY) or GENESIS
        stored = attrs.evolve(stored, prev_hash=head)
        conn.execute(
            "INSERT INTO memory_events (id, operation, target_id, reason, timestamp, event_json, "
            "prev_hash) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (stored.id, operation, target_id, reason, stored.timestamp, stored.event_json, head),
        )
        digest = event_row_hash(
            stored.id, operation, target_id, reason, stored.timestamp, stored.event_json, head
        )
        self._set_meta(CHAIN_HEAD_KEY, digest)
        return stored

    # -- row mapping ---------------------------------------------------------------------

    def _row_to_record(self, row: tuple[Any, ...]) -> MemoryRecord | None:
        memory_id = row[0]
        cached = self._cache.get(memory_id)
        if cached is not None and cached[0] == row:
            return cached[1]
        _id, record_json, source_task_id, _role, model_version, valid_from, supersedes_reason = row
        try:
            record = record_from_columns(
                record_json, source_task_id, model_version, valid_from, supersedes_reason
            )
        except (ValueError, TypeError, MemoryValidationError) as exc:
            if memory_id not in self._reported_ids:
                self._reported_ids.add(memory_id)
                self.load_report.append(
                    {"file": str(self.path), "line": None, "id": memory_id, "error": str(exc)}
                )
            return None
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[memory_id] = (tuple(row), record)
        return record

    def _views(self, records: Sequence[MemoryRecord]) -> builtins.list[MemoryRecord]:
        """Attach relations and outcome views to ``records`` with two batched queries."""
        if not records:
            return []
        ids = dumps([r.id for r in records])
        related: dict[str, list[str]] = {}
        for source, target in self._conn.execute(
            "SELECT source_id, target_id FROM memory_relations WHERE source_id IN "
            "(SELECT value FROM json_each(?)) ORDER BY source_id ASC, target_id ASC",
            (ids,),
        ):
            bucket = related.setdefault(source, [])
            if len(bucket) < MAX_RELATIONS_PER_MEMORY:
                bucket.append(target)
        outcomes: dict[str, list[dict[str, Any]]] = {}
        for memory_id, event_json in self._conn.execute(
            "SELECT memory_id, event_json FROM memory_outcomes WHERE memory_id IN "
            "(SELECT value FROM json_each(?)) ORDER BY at ASC, id ASC",
            (ids,),
        ):
            with contextlib.suppress(ValueError, MemoryValidationError):
                outcomes.setdefault(memory_id, []).append(
                    normalize_outcome_event(json.loads(event_json))
                )
        return [materialize(r, outcomes.get(r.id, ()), related.get(r.id, ())) for r in records]

    def _stored(self, memory_id: str) -> MemoryRecord | None:
        row = self._conn.execute(
            f"SELECT {_ITEM_COLUMNS} FROM memory_items WHERE id = ?", (memory_id,)
        ).fetchone()
        return None if row is None else self._row_to_record(row)

    def _write_record(self, record: MemoryRecord) -> MemoryRecord:
        """Upsert the stored form of ``record`` and rewrite its FTS row; returns what is stored."""
        conn = self._conn
        data = record_to_dict(record, include_provenance=False, include_outcomes=False)
        model_version = self.embedding_model_version or record.embedding_model_version or ""
        rowid, valid_from, supersedes_reason = conn.execute(
            _UPSERT_SQL,
            (
                record.id,
                record.scope.key,
                record.kind,
                record.updated_at,
                record.expires_at,
                record.superseded_by,
                1 if record.deleted else 0,
                dumps(data),
                record.source_task_id or "",
                record.producer_agent_role or "unknown",
                model_version,
                record.valid_from,
                record.supersedes_reason,
            ),
        ).fetchone()
        conn.execute("DELETE FROM memory_items_fts WHERE rowid = ?", (rowid,))
        conn.execute(_FTS_INSERT_SQL, (rowid, record.id, *fts_values(data)))
        changes: dict[str, Any] = {}
        if valid_from != record.valid_from:
            changes["valid_from"] = valid_from
        if supersedes_reason != record.supersedes_reason:
            changes["supersedes_reason"] = supersedes_reason
        if (model_version or None) != record.embedding_model_version:
            changes["embedding_model_version"] = model_version or None
        return attrs.evolve(record, **changes) if changes else record

    # -- records -------------------------------------------------------------------------

    @_guarded
    def get(self, memory_id: str) -> MemoryRecord | None:
        """The record with ``memory_id`` (any state), or ``None``."""
        self._live_conn()
        record = self._stored(memory_id)
        return None if record is None else self._views([record])[0]

    @_guarded
    def get_many(self, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """The records (any state) of those ``memory_ids`` that exist, keyed by id."""
        return {r.id: r for r in self._records_by_id(builtins.list(memory_ids))}

    @_guarded
    def list(self, flt: ListFilter) -> builtins.list[MemoryRecord]:
        """Records matching ``flt``, newest first (the reference list query)."""
        query = _list_query(flt, _ITEM_COLUMNS)
        if query is None:
            return []
        sql, params = query
        rows = self._live_conn().execute(sql, params)
        records = [r for r in map(self._row_to_record, rows) if r is not None]
        if not flt.include_expired:
            now_ms = iso_to_ms(flt.now)
            records = [r for r in records if passes_parsed_expiry(r.expires_at, now_ms)]
        return self._views(records)

    def _scoped_ids(self, flt: ListFilter) -> builtins.list[str]:
        """The ids ``list(flt)`` would return, without reading or parsing any record."""
        query = _list_query(flt, "id, expires_at")
        if query is None:
            return []
        sql, params = query
        rows = self._live_conn().execute(sql, params).fetchall()
        if flt.include_expired:
            return [row[0] for row in rows]
        now_ms = iso_to_ms(flt.now)
        return [row[0] for row in rows if passes_parsed_expiry(row[1], now_ms)]

    def _records_by_id(self, ids: builtins.list[str]) -> builtins.list[MemoryRecord]:
        """Records for ``ids`` in the order given (unknown or unreadable ids skipped)."""
        rows = self._live_conn().execute(
            f"SELECT {_ITEM_COLUMNS} FROM memory_items "
            "WHERE id IN (SELECT value FROM json_each(?))",
            (dumps(ids),),
        )
        found = {r.id: r for r in map(self._row_to_record, rows) if r is not None}
        return self._views([found[i] for i in ids if i in found])

    @_guarded
    def count(self) -> int:
        """How many records are stored (tombstones included)."""
        return int(self._live_conn().execute("SELECT COUNT(*) FROM memory_items").fetchone()[0])

    @_guarded
    def upsert(self, record: MemoryRecord) -> MemoryRecord:
        """Insert or replace ``record``; returns the stored form."""
        if not isinstance(record, MemoryRecord):
            raise MemoryValidationError(f"upsert needs a MemoryRecord; got {type(record).__name__}")
        with self.transaction():
            stored = self._write_record(stored_form(record, None))
            self._insert_event("upsert", stored.id)
        return stored

    @_guarded
    def delete(self, memory_id: str, *, reason: str, now: str, hard: bool = False) -> bool:
        """Tombstone (or, with ``hard``, erase) a record; False when it did not exist."""
        with self.transaction():
            conn = self._conn
            row = conn.execute(
                "SELECT rowid FROM memory_items WHERE id = ?", (memory_id,)
            ).fetchone()
            if row is None:
                return False
            if hard:
                conn.execute("DELETE FROM memory_items_fts WHERE rowid = ?", (row[0],))
                conn.execute("DELETE FROM memory_outcomes WHERE memory_id = ?", (memory_id,))
                conn.execute("DELETE FROM memory_items WHERE id = ?", (memory_id,))
                self._insert_event(
                    "delete", memory_id, reason=reason, event={"reason": reason, "hard": True}
                )
                return True
            record = self._stored(memory_id)
            if record is None:
                raise StorageError(
                    f"stored record {memory_id} is invalid; only a hard delete can remove it"
                )
            tomb = attrs.evolve(
                record,
                metadata={**record.metadata, "deleted": True, "deleteReason": reason},
                updated_at=now,
            )
            self._write_record(tomb)
            self._insert_event("delete", memory_id, reason=reason)
        return True

    @_guarded
    def select_candidates(
        self,
        *,
        scope_keys: Sequence[str],
        kinds: Sequence[str] | None,
        fts_query: str | None,
        mode: str,
        max_items: int,
        now: str,
        include_expired: bool,
        candidate_cap: int,
    ) -> Candidates:
        """Scoped active records, pre-selected by FTS5/BM25 when a query is given.

        Only ids are read until full-text search has chosen the candidates, so a recall
        parses at most ``max(100, 20 * max_items)`` records instead of the whole scope.
        """
        flt = ListFilter(
            now=now,
            scope_keys=tuple(scope_keys),
            kinds=None if kinds is None else tuple(kinds),
            include_expired=include_expired,
            limit=candidate_cap,
        )
        if not fts_query or not self._fts_enabled:
            return Candidates(records=tuple(self.list(flt)), fts_order=None)
        scoped = self._scoped_ids(flt)
        if not scoped:
            return Candidates(records=(), fts_order=None)
        try:
            hits = self._conn.execute(
                _FTS_SELECT_SQL, (fts_query, dumps(scoped), max(100, max_items * 20))
            ).fetchall()
        except self._sqlite.Error as exc:
            self._fts_enabled = False
            self.fts_disabled_reason = f"full-text search failed and is off for this store: {exc}"
            return Candidates(records=tuple(self.list(flt)), fts_order=None)
        if not hits:
            if mode == "manual":
                return Candidates(records=tuple(self.list(flt)), fts_order=None)
            return Candidates(records=(), fts_order=None)
        order = {row[0]: position for position, row in enumerate(hits)}
        chosen = [i for i in scoped if i in order]
        return Candidates(records=tuple(self._records_by_id(chosen)), fts_order=order)

    def iter_all_records(self) -> Iterator[MemoryRecord]:
        """Every record in any state, oldest update first, with provenance and derived views."""
        conn = self._live_conn()
        with self._guard():
            rows = conn.execute(
                f"SELECT {_ITEM_COLUMNS} FROM memory_items ORDER BY updated_at ASC, id ASC"
            ).fetchall()
        for start in range(0, len(rows), 500):
            with self._guard():
                chunk = [
                    r for r in map(self._row_to_record, rows[start : start + 500]) if r is not None
                ]
                views = self._views(chunk)
            yield from views

    # -- proposals -----------------------------------------------------------------------

    def _proposal_row(self, proposal_id: str) -> MemoryProposal | None:
        row = self._conn.execute(
            "SELECT proposal_json FROM memory_proposals WHERE id = ?", (proposal_id,)
        ).fetchone()
        if row is None:
            return None
        return self._parse_proposal(proposal_id, row[0])

    def _parse_proposal(self, proposal_id: str, proposal_json: str) -> MemoryProposal | None:
        try:
            return proposal_from_dict(json.loads(proposal_json))
        except (ValueError, TypeError, MemoryValidationError) as exc:
            if proposal_id not in self._reported_ids:
                self._reported_ids.add(proposal_id)
                self.load_report.append(
                    {"file": str(self.path), "line": None, "id": proposal_id, "error": str(exc)}
                )
            return None

    def _put_proposal(self, proposal: MemoryProposal) -> None:
        self._conn.execute(
            "INSERT INTO memory_proposals (id, status, created_at, proposal_json) "
            "VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET status = excluded.status, "
            "created_at = excluded.created_at, proposal_json = excluded.proposal_json",
            (proposal.id, proposal.status, proposal.created_at, dumps(proposal_to_dict(proposal))),
        )
        self._write_relations(proposal)
        self._insert_event(
            "proposal",
            proposal.id,
            event={"operation": proposal.operation, "status": proposal.status},
        )

    @_guarded
    def create_proposal(self, proposal: MemoryProposal) -> MemoryProposal:
        """Store a new proposal (ConflictError when the id exists)."""
        if not isinstance(proposal, MemoryProposal):
            raise MemoryValidationError("create_proposal needs a MemoryProposal")
        with self.transaction():
            exists = self._conn.execute(
                "SELECT 1 FROM memory_proposals WHERE id = ?", (proposal.id,)
            ).fetchone()
            if exists is not None:
                raise ConflictError(f"memory proposal already exists: {proposal.id}")
            self._put_proposal(proposal)
        return proposal

    @_guarded
    def get_proposal(self, proposal_id: str) -> MemoryProposal | None:
        """A proposal by id, or ``None``."""
        self._live_conn()
        return self._proposal_row(proposal_id)

    @_guarded
    def list_proposals(self, status: str | None = None) -> builtins.list[MemoryProposal]:
        """Proposals (optionally of one status), oldest first (then by id)."""
        conn = self._live_conn()
        if status is None:
            rows = conn.execute(
                "SELECT id, proposal_json FROM memory_proposals ORDER BY created_at ASC, id ASC"
            )
        else:
            rows = conn.execute(
                "SELECT id, proposal_json FROM memory_proposals WHERE status = ? "
                "ORDER BY created_at ASC, id ASC",
                (status,),
            )
        parsed = [self._parse_proposal(pid, pjson) for pid, pjson in rows.fetchall()]
        return [p for p in parsed if p is not None]

    @_guarded
    def update_proposal(self, proposal: MemoryProposal) -> MemoryProposal:
        """Replace a stored proposal (NotFoundError when it does not exist)."""
        if not isinstance(proposal, MemoryProposal):
            raise MemoryValidationError("update_proposal needs a MemoryProposal")
        with self.transaction():
            exists = self._conn.execute(
                "SELECT 1 FROM memory_proposals WHERE id = ?", (proposal.id,)
            ).fetchone()
            if exists is None:
                raise NotFoundError("memory proposal was not found")
            self._put_proposal(proposal)
        return proposal

    # -- events and ledgers --------------------------------------------------------------

    @_guarded
    def append_event(
        self,
        operation: str,
        target_id: str,
        *,
        reason: str | None = None,
        event: dict[str, Any] | None = None,
    ) -> None:
        """Append an audit event (chained into the hash chain)."""
        with self.transaction():
            self._insert_event(operation, target_id, reason=reason, event=event)

    @_guarded
    def list_events(self) -> builtins.list[StoredEvent]:
        """Every audit event in insertion order."""
        rows = self._live_conn().execute(
            f"SELECT {EVENT_COLUMNS} FROM memory_events ORDER BY rowid ASC"
        )
        return [event_from_row(r) for r in rows]

    @_guarded
    def verify_audit_chain(self) -> dict[str, Any]:
        """Walk ``memory_events`` by rowid and check every ``prev_hash`` and the stored head.

        Returns ``{supported, totalRows, chainedRows, legacyRows, verified, headMatch,
        headStored}`` plus ``divergence: {rowId, detail}`` at the first broken link, or
        ``headExpected`` (the last row's hash) when the walk completed.
        """
        conn = self._live_conn()
        rows = conn.execute(
            f"SELECT {EVENT_COLUMNS} FROM memory_events ORDER BY rowid ASC"
        ).fetchall()
        stored_head = self._get_meta(CHAIN_HEAD_KEY)
        return verify_event_chain(rows, stored_head)

    @_guarded
    def record_recall_usage(self, usage: dict[str, Any]) -> None:
        """Store one recall bundle's usage in ``memory_recall_usage``."""
        self._live_conn()
        stored = normalize_recall_usage(usage, self._now())
        with self.transaction():
            self._conn.execute(
                "INSERT INTO memory_recall_usage "
                "(id, bundle_id, timestamp, usage_json, run_id, unit_id) VALUES (?, ?, ?, ?, ?, ?)",
                recall_usage_params(str(uuid.uuid4()), stored),
            )

    @_guarded
    def list_recall_usage(
        self, *, run_id: str | None = None, since: str | None = None
    ) -> builtins.list[dict[str, Any]]:
        """Recorded recall usage, oldest first, optionally for one run or from ``since`` on."""
        sql = "SELECT usage_json FROM memory_recall_usage"
        where, params = [], []
        if run_id is not None:
            where.append("run_id = ?")
            params.append(run_id)
        if since is not None:
            where.append("timestamp >= ?")
            params.append(since)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY timestamp ASC, rowid ASC"
        out = []
        for (usage_json,) in self._live_conn().execute(sql, params):
            with contextlib.suppress(ValueError):
                out.append(json.loads(usage_json))
        return out

    @_guarded
    def append_outcome(self, event: dict[str, Any]) -> None:
        """Append an outcome event; the same id with the same payload is a no-op."""
        self._live_conn()
        stored = normalize_outcome_event(event)
        with self.transaction():
            row = self._conn.execute(
                "SELECT event_json FROM memory_outcomes WHERE id = ?", (stored["id"],)
            ).fetchone()
            if row is not None:
                if json.loads(row[0]) == stored:
                    return
                raise ConflictError("outcome event id already exists with a different payload")
            self._conn.execute(
                "INSERT INTO memory_outcomes (id, memory_id, generation, at, event_json) "
                "VALUES (?, ?, ?, ?, ?)",
                (
                    stored["id"],
                    stored["memoryId"],
                    stored["generation"],
                    stored["outcome"]["at"],
                    dumps(stored),
                ),
            )

    @_guarded
    def list_outcomes(self, memory_id: str | None = None) -> builtins.list[dict[str, Any]]:
        """Outcome events, optionally of one memory, ordered by (``at``, ``id``)."""
        conn = self._live_conn()
        if memory_id is None:
            rows = conn.execute("SELECT event_json FROM memory_outcomes ORDER BY at ASC, id ASC")
        else:
            rows = conn.execute(
                "SELECT event_json FROM memory_outcomes WHERE memory_id = ? "
                "ORDER BY at ASC, id ASC",
                (memory_id,),
            )
        out = []
        for (event_json,) in rows.fetchall():
            with contextlib.suppress(ValueError, MemoryValidationError):
                out.append(normalize_outcome_event(json.loads(event_json)))
        return out

    @_guarded
    def append_reward_event(self, event: dict[str, Any]) -> None:
        """Append a learning reward event to ``memory_reward_events``."""
        self._live_conn()
        e = normalize_reward_event(event, self._now())
        with self.transaction():
            self._conn.execute(
                "INSERT INTO memory_reward_events (id, memory_id, run_id, unit_id, verdict, "
                "reward, q_before, q_after, verdict_synthesis_json, timestamp) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                reward_event_params(e),
            )

    @_guarded
    def list_reward_events(self) -> builtins.list[dict[str, Any]]:
        """Every reward event, oldest first."""
        rows = self._live_conn().execute(
            "SELECT id, memory_id, run_id, unit_id, verdict, reward, q_before, q_after, "
            "verdict_synthesis_json, timestamp FROM memory_reward_events "
            "ORDER BY timestamp ASC, rowid ASC"
        )
        return [reward_event_from_row(r) for r in rows.fetchall()]

    @_guarded
    def related_ids(self, memory_id: str) -> builtins.list[str]:
        """Ids merged with ``memory_id`` (sorted, at most 32)."""
        rows = self._live_conn().execute(
            "SELECT target_id FROM memory_relations WHERE source_id = ? "
            "ORDER BY target_id ASC LIMIT ?",
            (memory_id, MAX_RELATIONS_PER_MEMORY),
        )
        return [r[0] for r in rows]

    # -- maintenance ---------------------------------------------------------------------

    @_guarded
    def integrity_check(self) -> str:
        """``PRAGMA integrity_check`` (``'ok'`` for a healthy database)."""
        rows = self._live_conn().execute("PRAGMA integrity_check").fetchall()
        return "\n".join(str(r[0]) for r in rows)

"""The ``sqlite`` storage provider (the default): one database file, reference-compatible.

The schema is the reference one, built by migrations v1..v14 recorded in
``schema_migrations`` (v2 is the marker row of the one-time legacy JSONL import), plus v15
(report columns and indexes), v16 (the stemmed full-text index) and v17 (PostgreSQL's
per-role audit chains and totals; no change here). Records live in
``memory_items`` (``record_json`` without the provenance keys, which have columns of their
own), full text in the FTS5 tables ``memory_items_fts`` (the reference's ``unicode61``
index) and ``memory_items_fts_porter`` (the same columns stemmed, ``porter unicode61``),
both rewritten on every write, tombstones included, audit events in ``memory_events``
chained by ``prev_hash``. The flow is
:class:`~swarmmem.adapters.storage.sql.SqlStore`'s; this module adds the file, the FTS5
index, the reference migrations and the legacy import.

Every write runs in a ``BEGIN IMMEDIATE`` transaction (nested blocks use savepoints), so
several processes can share one database: writers queue on the busy timeout instead of
failing, and a crash leaves either all or nothing of a transaction. Driver errors surface
as :class:`~swarmmem.core.model.errors.StorageError`, or :class:`CorruptStoreError` for a file
that is not a (complete) database; a corrupt file is detected before anything is written to it.

Full-text rows share the ``rowid`` of their ``memory_items`` row so that a rewrite is a
point delete; on open the alignment and the row counts are checked and the index rebuilt
when they disagree (for example after a write by another implementation).

Purges. The connection runs with ``secure_delete`` on, so SQLite overwrites deleted and
replaced row content with zeros instead of leaving it in free space. A purge (``scrub``)
also merges the full-text index (its old segments still hold the erased terms) and, once
committed, checkpoints and truncates the write-ahead log, so the erased text is in neither
file.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from swarmmem.adapters.storage.sql import (
    RELATIONS_INDEX,
    RELATIONS_TABLE,
    REPORT_COLUMNS,
    TEXT_TERMS,
    FullTextHits,
    ItemQuery,
    SqlDialect,
    SqlStore,
    Written,
    guarded,
    migration_steps,
)
from swarmmem.adapters.storage.sql_rows import (
    ITEM_UPDATE,
    ITEM_WRITE_COLUMNS,
    ITEM_WRITE_COUNT,
    fts_values,
    item_params,
)
from swarmmem.adapters.storage.sqlite_support import sqlite_module
from swarmmem.core.model.errors import CorruptStoreError, StorageError
from swarmmem.core.model.ids import iso_to_ms
from swarmmem.core.model.semantics import (
    ListFilter,
    StoredRow,
    dumps,
    passes_parsed_expiry,
    passes_sql_expiry,
)
from swarmmem.ports.clock import Clock

DEFAULT_PATH = Path(".swarm") / "memory" / "memory.db"
LEGACY_JSONL_MIGRATION_VERSION = 2
LEGACY_JSONL_MIGRATION_NAME = "legacy_jsonl_import_complete"
LEGACY_FILES = ("memories.jsonl", "proposals.jsonl")
BACKUP_SUFFIX = ".pre-sqlite-migration"
MIGRATION_REPORT = "migration-report.json"
MAX_BUSY_TIMEOUT_MS = 60_000
#: the page cache of a bulk write, in KiB (SQLite's default is 2 MiB)
BULK_CACHE_KIB = 32 * 1024
_SQLITE_MAGIC = b"SQLite format 3\x00"

SCHEMA_MIGRATIONS_SQL = """CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL DEFAULT (datetime('now'))
)"""
FTS_TABLE = "memory_items_fts"
#: the stemmed index: the same columns, tokenized ``porter unicode61``
PORTER_FTS_TABLE = "memory_items_fts_porter"
#: the stemmed channel's ``MATCH``: every column but the kind, so that ``bm25()`` counts a
#: phrase's rows and occurrences there only (its words, "project fact", say what a memory is,
#: not what it says), while a row's length stays its tokens in all columns
STEMMED_MATCH = "- kind : ({query})"
_FTS_COLUMNS = (
    "id UNINDEXED, text, tags, kind, source_file_path, source_ref, metadata_symbols, metadata_files"
)
FTS_TABLE_SQL = f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5({_FTS_COLUMNS})"
PORTER_FTS_TABLE_SQL = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {PORTER_FTS_TABLE} USING fts5({_FTS_COLUMNS}, "
    "tokenize = 'porter unicode61')"
)

#: the rows ``status`` reports as unreadable, kept in a partial index so that finding them
#: reads no record
DAMAGED_INDEX = (
    "CREATE INDEX IF NOT EXISTS idx_memory_items_damaged ON memory_items(id) "
    "WHERE NOT json_valid(record_json)"
)

# v2 is not here: it is the legacy-import marker row.
MIGRATIONS = migration_steps(
    {
        1: (
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
        3: (FTS_TABLE_SQL,),
        4: ("CREATE TABLE IF NOT EXISTS _meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",),
        5: (
            "CREATE INDEX IF NOT EXISTS idx_memory_recall_usage_timestamp "
            "ON memory_recall_usage(timestamp DESC)",
        ),
        6: ("CREATE TABLE IF NOT EXISTS embedding_config (key TEXT PRIMARY KEY, value TEXT)",),
        7: (
            "ALTER TABLE memory_recall_usage ADD COLUMN q_value REAL DEFAULT 0.5",
            "ALTER TABLE memory_recall_usage ADD COLUMN last_reward REAL",
            "ALTER TABLE memory_recall_usage ADD COLUMN task_outcome TEXT",
            "ALTER TABLE memory_recall_usage ADD COLUMN council_verdict_json TEXT",
        ),
        8: ("ALTER TABLE memory_recall_usage ADD COLUMN reward_key TEXT",),
        9: (
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
        10: (
            "ALTER TABLE memory_recall_usage ADD COLUMN unit_id TEXT",
            "CREATE INDEX IF NOT EXISTS idx_memory_recall_usage_unit_id "
            "ON memory_recall_usage(unit_id)",
        ),
        11: (
            "CREATE TABLE IF NOT EXISTS memory_outcomes (id TEXT PRIMARY KEY, "
            "memory_id TEXT NOT NULL, generation TEXT NOT NULL, at TEXT NOT NULL, "
            "event_json TEXT NOT NULL)",
            "CREATE INDEX IF NOT EXISTS idx_memory_outcomes_memory_generation "
            "ON memory_outcomes(memory_id, generation, at, id)",
        ),
        12: (
            "ALTER TABLE memory_items ADD COLUMN source_task_id TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE memory_items ADD COLUMN agent_role TEXT NOT NULL DEFAULT 'unknown'",
            "ALTER TABLE memory_items ADD COLUMN embedding_model_version TEXT NOT NULL DEFAULT ''",
            "ALTER TABLE memory_items ADD COLUMN valid_from TEXT",
            "ALTER TABLE memory_items ADD COLUMN supersedes_reason TEXT",
        ),
        13: ("ALTER TABLE memory_events ADD COLUMN prev_hash TEXT",),
        14: (RELATIONS_TABLE.format(text="TEXT"), RELATIONS_INDEX),
        15: (
            *(s.format(if_not_exists="", real="REAL") for s in REPORT_COLUMNS),
            DAMAGED_INDEX,
        ),
        16: (
            PORTER_FTS_TABLE_SQL,
            f"INSERT INTO {PORTER_FTS_TABLE} (rowid, id, text, tags, kind, source_file_path, "
            "source_ref, metadata_symbols, metadata_files) SELECT rowid, id, text, tags, kind, "
            f"source_file_path, source_ref, metadata_symbols, metadata_files FROM {FTS_TABLE}",
        ),
        # one file is one audit chain, and FTS5 keeps its own totals: nothing changes here
        17: (),
        18: tuple(s.format(if_not_exists="") for s in TEXT_TERMS),
    }
)

_UPSERT_SQL = (
    f"INSERT INTO memory_items ({ITEM_WRITE_COLUMNS}) VALUES ({', '.join('?' * ITEM_WRITE_COUNT)}) "
    f"ON CONFLICT(id) DO UPDATE SET {ITEM_UPDATE} RETURNING rowid, valid_from, supersedes_reason"
)
# the batch upsert: ``_UPSERT_SQL`` without RETURNING, as the head and tail of its VALUES
_UPSERT_MANY_HEAD = f"INSERT INTO memory_items ({ITEM_WRITE_COLUMNS})"
_UPSERT_MANY_TAIL = f" ON CONFLICT(id) DO UPDATE SET {ITEM_UPDATE}"
#: the item columns that are often None (``expires_at``, ``superseded_by``, ``valid_from``,
#: ``supersedes_reason``)
_ITEM_NULLABLE = tuple(
    ITEM_WRITE_COLUMNS.split(", ").index(column)
    for column in ("expires_at", "superseded_by", "valid_from", "supersedes_reason")
)
_TOP_ROWID_SQL = "SELECT max(rowid) FROM memory_items"
_VALID_FROM = ITEM_WRITE_COLUMNS.split(", ").index("valid_from")
_SUPERSEDES_REASON = ITEM_WRITE_COLUMNS.split(", ").index("supersedes_reason")
_ROWIDS_SQL = "SELECT rowid FROM memory_items WHERE id IN (SELECT value FROM json_each(?))"
_WRITTEN_SQL = (
    "SELECT rowid, id, valid_from, supersedes_reason FROM memory_items "
    "WHERE id IN (SELECT value FROM json_each(?))"
)
_FTS_INSERT_SQL = (
    "INSERT INTO {table} (rowid, id, text, tags, kind, source_file_path, source_ref, "
    "metadata_symbols, metadata_files) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_FTS_SELECT_SQL = (
    "SELECT id, bm25({table}) AS rank FROM {table} WHERE {table} "
    "MATCH ? AND id IN (SELECT value FROM json_each(?)) ORDER BY rank ASC LIMIT ?"
)
_FTS_TABLES = (FTS_TABLE, PORTER_FTS_TABLE)
# the best matches of the whole index, then the item columns the scope filter needs
_FTS_RANKED_SQL = (
    "SELECT rowid, bm25({table}) FROM {table} WHERE {table} MATCH ? "
    "ORDER BY bm25({table}) ASC LIMIT ?"
)
_FTS_ITEMS_SQL = (
    "SELECT rowid, id, scope_key, kind, superseded_by, deleted, expires_at, updated_at, "
    "text_terms "
    "FROM memory_items WHERE rowid IN (SELECT value FROM json_each(?))"
)
#: how many of the index's best matches a recall reads per wanted hit, first and last try
_WINDOWS = (2, 16)
RECALL_INDEX = "idx_memory_items_recall_order"


class _FullTextFailed(Exception):
    """A full-text query failed (its cause is the driver error)."""


class SqliteDialect(SqlDialect):
    """SQLite's SQL: ``BEGIN IMMEDIATE`` is the write lock, long lists go through ``json_each``."""

    order_column = "rowid"
    damaged_items_sql = "SELECT id FROM memory_items WHERE NOT json_valid(record_json)"
    slow_null_binding = True

    def begin(self) -> list[tuple[str, tuple[Any, ...]]]:
        return [("BEGIN IMMEDIATE", ())]

    def unindexed(self, column: str) -> str:
        return f"+{column}"

    def select_items(self, q: ItemQuery) -> tuple[str, list[Any]]:
        """Several scope keys become one ordered (and limited) branch per key under
        ``UNION ALL``: each branch reads one scope's index in order, where ``scope_key IN``
        would make the planner sort every row of every scope."""
        keys = None if q.scope_keys is None else list(dict.fromkeys(q.scope_keys))
        if keys is None or len(keys) < 2:
            return super().select_items(q if keys is None else q._replace(scope_keys=keys))
        terms = [term.split() for term in q.order.split(",")]
        sort = ", ".join(f"{column} AS sort_{i}" for i, (column, _) in enumerate(terms))
        branches, params = [], []
        for key in keys:
            statement, args = super().select_items(
                q._replace(columns=f"{q.columns}, {sort}", scope_keys=[key])
            )
            branches.append(f"SELECT * FROM ({statement})")
            params.extend(args)
        order = ", ".join(f"sort_{i} {direction}" for i, (_, direction) in enumerate(terms))
        statement = f"SELECT {q.columns} FROM ({' UNION ALL '.join(branches)}) ORDER BY {order}"
        if q.limit is not None:
            statement += " LIMIT ?"
            params.append(q.limit)
        return statement, params

    def one_of(self, column: str, values: Sequence[str]) -> tuple[str, list[Any]]:
        return f"{column} IN ({', '.join('?' for _ in values)})", list(values)

    def any_of(self, column: str) -> str:
        return f"{column} IN (SELECT value FROM json_each(?))"

    def array(self, values: Sequence[str]) -> Any:
        return dumps(list(values))


def clamp_busy_timeout(value: float) -> int:
    """``busy_timeout`` in ms: truncated and clamped to 0..60000 (non-finite -> default)."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return 5000
    return max(0, min(MAX_BUSY_TIMEOUT_MS, math.trunc(value)))


class SqliteStore(SqlStore):
    """A :class:`~swarmmem.ports.storage.StorageProvider` over one SQLite database.

    Args:
        path: the database file (the configuration default is ``.swarm/memory/memory.db``).
        busy_timeout_ms: how long a writer waits for another one (clamped to 0..60000).
        clock: the time source of audit events (the system clock by default).
        legacy_dir: a directory whose ``memories.jsonl``/``proposals.jsonl`` are imported
            once, on the first open that finds them (backups and a report are written there).
        legacy_scope_keys: the scope keys legacy rows must lie in (the opening context's
            allowed scopes); rows outside them are refused and reported. ``None``: unchecked.
        embedding_model_version: the value of the ``embedding_model_version`` column when
            embeddings are active; otherwise the record's own value (or ``''``) is kept.
    """

    name = "sqlite"
    dialect = SqliteDialect()
    migrations = MIGRATIONS

    def __init__(
        self,
        path: str | os.PathLike[str] = DEFAULT_PATH,
        *,
        busy_timeout_ms: float = 5000,
        clock: Clock | None = None,
        legacy_dir: str | os.PathLike[str] | None = None,
        embedding_model_version: str | None = None,
        legacy_scope_keys: Collection[str] | None = None,
    ) -> None:
        super().__init__(clock=clock, embedding_model_version=embedding_model_version)
        self.path = Path(path)
        self.busy_timeout_ms = clamp_busy_timeout(busy_timeout_ms)
        self.legacy_dir = None if legacy_dir is None else Path(legacy_dir)
        self.legacy_scope_keys = None if legacy_scope_keys is None else frozenset(legacy_scope_keys)
        self._sqlite = sqlite_module()
        self.driver_errors = (self._sqlite.Error,)
        self._conn: Any = None
        self._check_file()
        if self._cannot_write():
            self._open_read_only()
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot create the directory of {self.path}: {exc}") from exc
        with self._opening():
            self._conn = self._sqlite.connect(
                str(self.path), isolation_level=None, timeout=self.busy_timeout_ms / 1000.0
            )
            self._init()

    @contextlib.contextmanager
    def _opening(self) -> Iterator[None]:
        """Close what was opened when opening fails (driver errors become StorageError)."""
        try:
            yield
        except self._sqlite.Error as exc:
            self._shutdown()
            raise self._translate(exc) from exc
        except BaseException:
            self._shutdown()
            raise

    # -- read-only checkouts ---------------------------------------------------------------

    def _cannot_write(self) -> bool:
        """The database exists but this process may not write it (or its folder, where SQLite
        keeps its write-ahead log): a read-only checkout, container or CI cache."""
        if not self.path.exists():
            return False
        return not (os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK))

    def _open_read_only(self) -> None:
        """Open for reading only: the schema must be current (nothing can be migrated); every
        write then fails with a :class:`StorageError` that says why."""
        uri = self.path.resolve().as_uri()
        with self._opening():
            self._conn = self._sqlite.connect(
                f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None
            )
            self._conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            if not self._table_exists(self._conn, "_meta") or self._needs_upgrade(self._conn):
                raise StorageError(
                    f"{self.path} is read-only and was written by an older version; open it "
                    "once where it can be written to upgrade it"
                )
            self.read_only = True
            self._refresh_chain_state()
            self._fts_enabled = self._table_exists(self._conn, "memory_items_fts")

    # -- the file ------------------------------------------------------------------------

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

    # -- connections ---------------------------------------------------------------------

    @property
    def _location(self) -> str:
        return str(self.path)

    def _acquire(self) -> Any:
        if self._conn is None:
            raise StorageError(f"the sqlite store {self.path} is closed")
        return self._conn

    def _shutdown(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    def _translate(self, exc: BaseException) -> StorageError:
        message = str(exc)
        lowered = message.lower()
        if any(s in lowered for s in ("not a database", "malformed", "corrupt")):
            return CorruptStoreError(f"{self.path}: {message}")
        return StorageError(f"sqlite store {self.path}: {message}")

    def _table_exists(self, conn: Any, table: str) -> bool:
        row = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = ? AND type IN ('table', 'view')", (table,)
        ).fetchone()
        return row is not None

    def _has_column(self, conn: Any, table: str, column: str) -> bool:
        return any(row[1] == column for row in conn.execute(f"PRAGMA table_info({table})"))

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

    # -- opening -------------------------------------------------------------------------

    def _init(self) -> None:
        conn = self._conn
        conn.execute(f"PRAGMA busy_timeout = {self.busy_timeout_ms}")
        self._retry_locked(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchall())
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # reads the schema
        conn.execute(SCHEMA_MIGRATIONS_SQL)
        self._migrate()
        self._run_backfills()
        self._ensure_recall_index()
        self._fill_derived_columns()
        self._init_fts()
        self._legacy_import()
        self._replay_relations()

    def _backfill_recall_run_ids(self, conn: Any) -> None:
        conn.execute(
            "UPDATE memory_recall_usage SET run_id = json_extract(usage_json, '$.runId') "
            "WHERE run_id IS NULL AND json_valid(usage_json)"
        )

    def _backfill_provenance(self, conn: Any) -> None:
        conn.execute(
            "UPDATE memory_items SET valid_from = COALESCE("
            "json_extract(record_json, '$.createdAt'), json_extract(record_json, '$.updatedAt')) "
            "WHERE valid_from IS NULL AND json_valid(record_json)"
        )

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

    def _init_fts(self) -> None:
        conn = self._conn
        if not all(self._table_exists(conn, table) for table in _FTS_TABLES):
            with self.transaction():
                conn.execute(FTS_TABLE_SQL)
                conn.execute(PORTER_FTS_TABLE_SQL)
                self._rebuild_fts_rows(conn)
            return
        items = conn.execute("SELECT COUNT(*) FROM memory_items").fetchone()[0]
        for table in _FTS_TABLES:
            indexed = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            aligned = items
            if items == indexed and items:
                aligned = conn.execute(
                    f"SELECT COUNT(*) FROM memory_items m JOIN {table} f ON f.rowid = m.rowid "
                    "WHERE f.id = m.id"
                ).fetchone()[0]
            if items != indexed or aligned != items:
                self.rebuild_fts()
                return

    def rebuild_fts(self) -> int:
        """Rebuild both full-text indexes from ``memory_items``; returns the rows indexed."""
        with self._guard(), self.transaction():
            return self._rebuild_fts_rows(self._tx_conn())

    def _rebuild_fts_rows(self, conn: Any) -> int:
        for table in _FTS_TABLES:
            conn.execute(f"DELETE FROM {table}")
        count = 0
        for rowid, memory_id, record_json in conn.execute(
            "SELECT rowid, id, record_json FROM memory_items"
        ).fetchall():
            try:
                data = json.loads(record_json)
            except ValueError:
                data = {}
            values = fts_values(data if isinstance(data, Mapping) else {})
            for table in _FTS_TABLES:
                conn.execute(_FTS_INSERT_SQL.format(table=table), (rowid, memory_id, *values))
            count += 1
        return count

    def _after_bulk_load(self, conn: Any) -> None:
        self._rebuild_fts_rows(conn)
        super()._after_bulk_load(conn)

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
            report = import_jsonl(
                self, directory, untrusted=True, allowed_scope_keys=self.legacy_scope_keys
            )
            self._conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (?, ?)",
                (LEGACY_JSONL_MIGRATION_VERSION, LEGACY_JSONL_MIGRATION_NAME),
            )
            stat = outcomes.stat() if outcomes.is_file() else None
            self._set_meta(
                self._conn,
                "legacy_jsonl_outcomes_import_complete",
                "missing" if stat is None else f"{stat.st_size}:{int(stat.st_mtime * 1000)}",
            )
            self._log(
                "migration",
                str(LEGACY_JSONL_MIGRATION_VERSION),
                LEGACY_JSONL_MIGRATION_NAME,
                {
                    "importedMemories": report["importedMemories"],
                    "proposedMemories": report["proposedMemories"],
                    "importedProposals": report["importedProposals"],
                    "invalidRows": report["invalidCount"],
                },
            )
        self.migration_report = {"completedAt": self._now(), **report, "backups": backups}
        write_json_atomic(directory / MIGRATION_REPORT, self.migration_report)

    # -- rows ----------------------------------------------------------------------------

    def _upsert_rows(
        self, rows: Sequence[StoredRow], progress: Callable[[int, int], None] | None
    ) -> list[Written]:
        """:meth:`SqlStore._upsert_rows` with a page cache of at least ``BULK_CACHE_KIB`` while
        it runs (then the one the connection had), so that the indexes of a large store stay
        in memory as the rows go in; what is written and when it is durable do not change."""
        self._check_open()
        conn = self._acquire()
        before = int(conn.execute("PRAGMA cache_size").fetchone()[0])
        # a negative size is in KiB, a positive one in pages
        page_kib = int(conn.execute("PRAGMA page_size").fetchone()[0]) / 1024
        if (-before if before < 0 else before * page_kib) >= BULK_CACHE_KIB:
            return super()._upsert_rows(rows, progress)
        conn.execute(f"PRAGMA cache_size = {-BULK_CACHE_KIB}")
        try:
            return super()._upsert_rows(rows, progress)
        finally:
            conn.execute(f"PRAGMA cache_size = {before}")

    def _write_item(
        self, conn: Any, row: StoredRow, params: tuple[Any, ...]
    ) -> tuple[str | None, str | None]:
        rowid, valid_from, supersedes_reason = conn.execute(_UPSERT_SQL, params).fetchone()
        values = fts_values(row.data)
        for table in _FTS_TABLES:
            conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
            conn.execute(_FTS_INSERT_SQL.format(table=table), (rowid, row.id, *values))
        return valid_from, supersedes_reason

    def _write_rows(self, conn: Any, rows: Sequence[StoredRow]) -> list[Written]:
        """One batch of item rows (distinct ids): ``executemany`` for the rows, one pass over
        the full-text index (old entries out, new ones in), the stored columns read back."""
        model = self.embedding_model_version
        versions = [model or row.embedding_model_version or "" for row in rows]
        params = [item_params(row, version) for row, version in zip(rows, versions, strict=True)]
        ids = dumps([row.id for row in rows])
        old = [(found[0],) for found in conn.execute(_ROWIDS_SQL, (ids,))]
        top = None if old else conn.execute(_TOP_ROWID_SQL).fetchone()[0] or 0
        self._insert_many(
            conn, _UPSERT_MANY_HEAD, params, nullable=_ITEM_NULLABLE, tail=_UPSERT_MANY_TAIL
        )
        if top is not None and conn.execute(_TOP_ROWID_SQL).fetchone()[0] == top + len(rows):
            # only new rows, each given the largest rowid plus one (SQLite's rule while the
            # largest possible rowid is unused): they hold top + 1 .. in order, and as no row
            # was rewritten, valid_from and supersedes_reason hold what was bound
            rowids: list[int] = list(range(top + 1, top + 1 + len(rows)))
            written = [
                (version, values[_VALID_FROM], values[_SUPERSEDES_REASON])
                for version, values in zip(versions, params, strict=True)
            ]
        else:
            stored = {found[1]: found for found in conn.execute(_WRITTEN_SQL, (ids,))}
            rowids = [stored[row.id][0] for row in rows]
            written = [
                (version, *stored[row.id][2:]) for row, version in zip(rows, versions, strict=True)
            ]
        fts_rows = [
            (rowid, row.id, *fts_values(row.data)) for rowid, row in zip(rowids, rows, strict=True)
        ]
        for table in _FTS_TABLES:
            if old:
                conn.executemany(f"DELETE FROM {table} WHERE rowid = ?", old)
            conn.executemany(_FTS_INSERT_SQL.format(table=table), fts_rows)
        self._touch([row.id for row in rows], items=True)
        return written

    def _erase_item(self, conn: Any, memory_id: str) -> None:
        for table in _FTS_TABLES:
            conn.execute(
                f"DELETE FROM {table} WHERE rowid = (SELECT rowid FROM memory_items WHERE id = ?)",
                (memory_id,),
            )
        conn.execute("DELETE FROM memory_items WHERE id = ?", (memory_id,))

    def _full_text(
        self, conn: Any, flt: ListFilter, fts_query: str, limit: int, *, stemmed: bool = False
    ) -> FullTextHits | None:
        """FTS5's ``bm25()`` over the scoped items; only ids are read until the hits are known.

        Without a cap on the scope (``flt.limit``) the index's best matches are read first and
        filtered by scope (:meth:`_full_text_ranked`), so no list of scoped ids is built;
        ``scoped`` then holds the hits in list order, or one scoped id when nothing matched.
        The stemmed index is searched outside the kind column (:data:`STEMMED_MATCH`).
        """
        if stemmed:
            fts_query = STEMMED_MATCH.format(query=fts_query)
        try:
            if flt.limit is None:
                found = self._full_text_ranked(conn, flt, fts_query, limit, stemmed=stemmed)
                if found is not None:
                    return found
            return self._full_text_listed(conn, flt, fts_query, limit, stemmed=stemmed)
        except _FullTextFailed as failed:
            self._fts_enabled = False
            self.fts_disabled_reason = (
                f"full-text search failed and is off for this store: {failed.__cause__}"
            )
            return None

    def _match(self, conn: Any, statement: str, params: Sequence[Any]) -> list[Any]:
        """Run a ``MATCH`` query; a failure (a query FTS5 refuses) is :class:`_FullTextFailed`."""
        try:
            return conn.execute(statement, params).fetchall()  # type: ignore[no-any-return]
        except self._sqlite.Error as exc:
            raise _FullTextFailed from exc

    def _full_text_ranked(
        self, conn: Any, flt: ListFilter, fts_query: str, limit: int, *, stemmed: bool
    ) -> FullTextHits | None:
        """The index's best matches filtered by scope afterwards.

        The first ``limit`` matches (in BM25 order) that pass the list filter are exactly the
        best ``limit`` among the scoped items; ``None`` when a window of the index's best
        matches did not hold that many (a scope that is a small part of a shared store).
        """
        scopes = None if flt.scope_keys is None else frozenset(flt.scope_keys)
        kinds = None if flt.kinds is None else frozenset(flt.kinds)
        now_ms = None if flt.include_expired else iso_to_ms(flt.now)
        ranked_sql = _FTS_RANKED_SQL.format(table=PORTER_FTS_TABLE if stemmed else FTS_TABLE)
        for factor in _WINDOWS:
            window = max(limit, 1) * factor
            ranked = self._match(conn, ranked_sql, (fts_query, window))
            rowids = [row[0] for row in ranked]
            items = {row[0]: row for row in conn.execute(_FTS_ITEMS_SQL, (dumps(rowids),))}
            hits = []
            for rowid in rowids:
                row = items.get(rowid)
                if row is None:
                    continue
                _rowid, _id, scope_key, kind, superseded_by, deleted, expires_at, _, _ = row
                if (
                    (scopes is None or scope_key in scopes)
                    and (kinds is None or kind in kinds)
                    and (flt.include_inactive or (superseded_by is None and not deleted))
                    and (flt.include_expired or passes_sql_expiry(expires_at, flt.now))
                    and passes_parsed_expiry(expires_at, now_ms)
                ):
                    hits.append(row)
            complete = len(rowids) < window  # every match was read
            if len(hits) >= limit or complete:
                break
        else:
            return None
        hits = hits[:limit]
        if not hits:  # is the scope empty? (read ids until one passes the expiry test)
            query = self._list_sql(flt, "id, expires_at")
            for row in conn.execute(*query) if query is not None else ():
                if passes_parsed_expiry(row[1], now_ms):
                    return FullTextHits([row[0]], [], {})
            return FullTextHits([], [], {})
        listed = sorted(hits, key=lambda row: row[1])
        listed.sort(key=lambda row: row[7], reverse=True)
        bm25 = {row[0]: float(row[1]) for row in ranked} if stemmed else {}
        scores = {row[1]: -bm25[row[0]] for row in hits} if stemmed else None
        terms = {row[1]: row[8] for row in hits} if stemmed else None
        return FullTextHits([row[1] for row in listed], [row[1] for row in hits], {}, scores, terms)

    def _full_text_listed(
        self, conn: Any, flt: ListFilter, fts_query: str, limit: int, *, stemmed: bool
    ) -> FullTextHits:
        """Every scoped id listed first, then FTS5 over them (a capped scope)."""
        query = self._list_sql(flt, "id, expires_at")
        if query is None:
            return FullTextHits([], [], {})
        rows = conn.execute(*query).fetchall()
        now_ms = None if flt.include_expired else iso_to_ms(flt.now)
        scoped = [row[0] for row in rows if passes_parsed_expiry(row[1], now_ms)]
        if not scoped:
            return FullTextHits([], [], {})
        table = PORTER_FTS_TABLE if stemmed else FTS_TABLE
        statement = _FTS_SELECT_SQL.format(table=table)
        hits = self._match(conn, statement, (fts_query, dumps(scoped), limit))
        scores = {row[0]: -float(row[1]) for row in hits} if stemmed else None
        return FullTextHits(scoped, [row[0] for row in hits], {}, scores)

    # -- purges --------------------------------------------------------------------------

    def _purge_full_text(self, conn: Any) -> None:
        for table in _FTS_TABLES:
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")

    def _after_purge(self) -> None:
        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    # -- maintenance ---------------------------------------------------------------------

    @guarded
    def integrity_check(self) -> str:
        """``PRAGMA integrity_check`` (``'ok'`` for a healthy database)."""
        with self._connection() as conn:
            rows = conn.execute("PRAGMA integrity_check").fetchall()
        return "\n".join(str(r[0]) for r in rows)

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
:class:`~swarmmem.adapters.storage.sql.SqlStore`'s; this module adds the file (its
:class:`SqliteDatabase`), the reference migrations and the legacy import, and
:mod:`.fulltext` the FTS5 index.

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
import math
import os
import shutil
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarmmem.adapters.storage.sql import (
    RELATIONS_INDEX,
    RELATIONS_TABLE,
    REPORT_COLUMNS,
    TEXT_TERMS,
    Database,
    ItemQuery,
    SqlDialect,
    SqlStore,
    guarded,
    migration_steps,
)
from swarmmem.adapters.storage.sql.migrator import Schema
from swarmmem.adapters.storage.sqlite.fulltext import (
    BULK_CACHE_KIB,
    FTS_TABLE,
    FTS_TABLE_SQL,
    PORTER_FTS_TABLE,
    PORTER_FTS_TABLE_SQL,
    Fts5Index,
)
from swarmmem.adapters.storage.sqlite.support import sqlite_module
from swarmmem.core.config import SqliteConfig
from swarmmem.core.model.errors import ConfigError, CorruptStoreError, StorageError
from swarmmem.core.model.semantics import dumps
from swarmmem.ports.clock import Clock
from swarmmem.ports.detectors import SecretDetector

if TYPE_CHECKING:
    from swarmmem.core.config import MemoryConfig

__all__ = ["BULK_CACHE_KIB", "MIGRATIONS", "SqliteDatabase", "SqliteStore"]

DEFAULT_PATH = Path(".swarm") / "memory" / "memory.db"
LEGACY_JSONL_MIGRATION_VERSION = 2
LEGACY_JSONL_MIGRATION_NAME = "legacy_jsonl_import_complete"
LEGACY_FILES = ("memories.jsonl", "proposals.jsonl")
BACKUP_SUFFIX = ".pre-sqlite-migration"
MIGRATION_REPORT = "migration-report.json"
MAX_BUSY_TIMEOUT_MS = 60_000
_SQLITE_MAGIC = b"SQLite format 3\x00"

SCHEMA_MIGRATIONS_SQL = """CREATE TABLE IF NOT EXISTS schema_migrations (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL DEFAULT (datetime('now'))
)"""

#: the rows ``status`` reports as unreadable, kept in a partial index so that finding them
#: reads no record
DAMAGED_INDEX = (
    "CREATE INDEX IF NOT EXISTS idx_memory_items_damaged ON memory_items(id) "
    "WHERE NOT json_valid(record_json)"
)

#: v19: a version per item row, what proves a cached row unchanged without reading it. The
#: store's writes bind a fresh random one (:func:`~.fulltext.new_row_version`); any other
#: write (an earlier release, a migration, a hand edit) gets one from these triggers, which
#: fire only when the statement left the version as it was (the rows written before keep
#: 0, a version like any other).
ROW_VERSIONS = (
    "ALTER TABLE memory_items ADD COLUMN row_version INTEGER NOT NULL DEFAULT 0",
    "CREATE TRIGGER IF NOT EXISTS memory_items_row_version_insert AFTER INSERT ON memory_items "
    "WHEN NEW.row_version = 0 BEGIN "
    "UPDATE memory_items SET row_version = random() | 1 WHERE rowid = NEW.rowid; END",
    "CREATE TRIGGER IF NOT EXISTS memory_items_row_version_update AFTER UPDATE ON memory_items "
    "WHEN NEW.row_version = OLD.row_version BEGIN "
    "UPDATE memory_items SET row_version = random() | 1 WHERE rowid = NEW.rowid; END",
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
        19: ROW_VERSIONS,
    }
)


RECALL_INDEX = "idx_memory_items_recall_order"


def _backfill_run_ids(conn: Any) -> None:
    """``memory_recall_usage.run_id`` from the usage JSON (rows of older writers)."""
    conn.execute(
        "UPDATE memory_recall_usage SET run_id = json_extract(usage_json, '$.runId') "
        "WHERE run_id IS NULL AND json_valid(usage_json)"
    )


def _backfill_provenance(conn: Any) -> None:
    """``memory_items.valid_from`` from the record's ``createdAt``, else ``updatedAt``."""
    conn.execute(
        "UPDATE memory_items SET valid_from = COALESCE("
        "json_extract(record_json, '$.createdAt'), json_extract(record_json, '$.updatedAt')) "
        "WHERE valid_from IS NULL AND json_valid(record_json)"
    )


class SqliteDialect(SqlDialect):
    """SQLite's SQL: ``BEGIN IMMEDIATE`` is the write lock, long lists go through ``json_each``."""

    order_column = "rowid"
    table_order = "rowid"
    version_column = "row_version"
    damaged_items_sql = "SELECT id FROM memory_items WHERE NOT json_valid(record_json)"
    slow_null_binding = True

    def begin(self) -> list[tuple[str, tuple[Any, ...]]]:
        return [("BEGIN IMMEDIATE", ())]

    def unindexed(self, column: str) -> str:
        return f"+{column}"

    def items_through(self, index: str | None) -> str:
        # without statistics the planner takes the wider recall index for the expiring rows
        return "memory_items" if index is None else f"memory_items INDEXED BY {index}"

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


def _create_private(path: Path) -> None:
    """Create the database file empty and private (0600) if it is missing, so SQLite (which
    gives its write-ahead log and shared-memory files the database's mode) never makes it
    readable by other users; a link there is never followed."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, flags, 0o600))


def clamp_busy_timeout(value: float) -> int:
    """``busy_timeout`` in ms: truncated and clamped to 0..60000 (non-finite -> default)."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return 5000
    return max(0, min(MAX_BUSY_TIMEOUT_MS, math.trunc(value)))


class SqliteDatabase(Database):
    """One SQLite database file and its connection (opened by :meth:`connect`).

    Args:
        path: the database file.
        busy_timeout_ms: how long a writer waits for another one (already clamped).
    """

    name = "sqlite"
    dialect = SqliteDialect()

    def __init__(self, path: Path, busy_timeout_ms: int) -> None:
        super().__init__()
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        self.sqlite = sqlite_module()
        self.driver_errors = (self.sqlite.Error,)
        self.conn: Any = None

    @property
    def location(self) -> str:
        return str(self.path)

    @contextlib.contextmanager
    def opening(self) -> Iterator[None]:
        """Close what was opened when opening fails (driver errors become StorageError)."""
        try:
            yield
        except self.sqlite.Error as exc:
            self.shutdown()
            raise self.translate(exc) from exc
        except BaseException:
            self.shutdown()
            raise

    def connect(self) -> Any:
        """Open the file for reading and writing, in WAL mode, with ``secure_delete`` on."""
        conn = self.conn = self.sqlite.connect(
            str(self.path), isolation_level=None, timeout=self.busy_timeout_ms / 1000.0
        )
        conn.execute(f"PRAGMA busy_timeout = {self.busy_timeout_ms}")
        self.retry_locked(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchall())
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA secure_delete = ON")
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # reads the schema
        return conn

    def connect_read_only(self) -> Any:
        """Open the file for reading only (nothing, not even the WAL, is written)."""
        uri = self.path.resolve().as_uri()
        self.conn = self.sqlite.connect(
            f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None
        )
        self.conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        self.read_only = True
        return self.conn

    def cannot_write(self) -> bool:
        """The database exists but this process may not write it (or its folder, where SQLite
        keeps its write-ahead log): a read-only checkout, container or CI cache."""
        if not self.path.exists():
            return False
        return not (os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK))

    def check_file(self) -> None:
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

    def acquire(self) -> Any:
        if self.conn is None:
            raise StorageError(f"the sqlite store {self.path} is closed")
        return self.conn

    def shutdown(self) -> None:
        conn, self.conn = self.conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    def translate(self, exc: BaseException) -> StorageError:
        message = str(exc)
        lowered = message.lower()
        if any(s in lowered for s in ("not a database", "malformed", "corrupt")):
            return CorruptStoreError(f"{self.path}: {message}")
        return StorageError(f"sqlite store {self.path}: {message}")

    def table_exists(self, conn: Any, table: str) -> bool:
        row = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = ? AND type IN ('table', 'view')", (table,)
        ).fetchone()
        return row is not None

    def has_column(self, conn: Any, table: str, column: str) -> bool:
        return any(row[1] == column for row in conn.execute(f"PRAGMA table_info({table})"))

    def retry_locked(self, action: Callable[[], Any]) -> Any:
        """Run ``action``, retrying "database is locked" until the busy timeout has passed."""
        deadline = time.monotonic() + self.busy_timeout_ms / 1000.0
        while True:
            try:
                return action()
            except self.sqlite.OperationalError as exc:
                if "locked" not in str(exc).lower() or time.monotonic() >= deadline:
                    raise
                time.sleep(0.01)

    def after_purge(self) -> None:
        """Checkpoint and truncate the write-ahead log, so erased text is in neither file."""
        if self.conn is not None:
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()


class SqliteStore(SqlStore):
    """A :class:`~swarmmem.ports.storage.StorageProvider` over one SQLite database.

    Args:
        path: the database file (the configuration default is ``.swarm/memory/memory.db``).
        busy_timeout_ms: how long a writer waits for another one (clamped to 0..60000).
        clock: the time source of audit events (the system clock by default).
        legacy_dir: a directory whose ``memories.jsonl``/``proposals.jsonl`` are imported
            once, on the first open that finds them (backups and a report are written there).
        secrets: the detector that screens legacy rows for secrets (needed with
            ``legacy_dir``).
        legacy_scope_keys: the scope keys legacy rows must lie in (the opening context's
            allowed scopes); rows outside them are refused and reported. ``None``: unchecked.
        embedding_model_version: the value of the ``embedding_model_version`` column when
            embeddings are active; otherwise the record's own value (or ``''``) is kept.
    """

    name = "sqlite"

    def __init__(
        self,
        path: str | os.PathLike[str] = DEFAULT_PATH,
        *,
        busy_timeout_ms: float = SqliteConfig().busy_timeout_ms,
        clock: Clock | None = None,
        legacy_dir: str | os.PathLike[str] | None = None,
        embedding_model_version: str | None = None,
        legacy_scope_keys: Collection[str] | None = None,
        secrets: SecretDetector | None = None,
    ) -> None:
        if legacy_dir is not None and secrets is None:
            raise ConfigError("a SQLite store with a legacy_dir needs the secret detector")
        db = SqliteDatabase(Path(path), clamp_busy_timeout(busy_timeout_ms))
        self.fts = Fts5Index(db, db.sqlite.Error)
        super().__init__(
            db,
            self.fts,
            Schema(MIGRATIONS, _backfill_run_ids, _backfill_provenance),
            clock=clock,
            embedding_model_version=embedding_model_version,
        )
        self.db: SqliteDatabase = db
        self.path = db.path
        self.busy_timeout_ms = db.busy_timeout_ms
        self.legacy_dir = None if legacy_dir is None else Path(legacy_dir)
        self.secrets = secrets
        self.legacy_scope_keys = None if legacy_scope_keys is None else frozenset(legacy_scope_keys)
        db.check_file()
        if db.cannot_write():
            self._open_read_only()
            return
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            _create_private(self.path)
        except OSError as exc:
            raise StorageError(f"cannot create {self.path}: {exc}") from exc
        with db.opening():
            self._open(db.connect())

    @classmethod
    def from_config(
        cls,
        tree: MemoryConfig,
        *,
        clock: Clock | None,
        scope_keys: Callable[[], Collection[str]],
        secrets: SecretDetector,
    ) -> SqliteStore:
        """The store of ``memory.sqlite`` (legacy JSONL in ``storageDir``, limited to the
        opening context's ``scope_keys``)."""
        return cls(
            tree.sqlite.path,
            busy_timeout_ms=tree.sqlite.busy_timeout_ms,
            clock=clock,
            legacy_dir=tree.storage_dir,
            legacy_scope_keys=scope_keys(),
            secrets=secrets,
        )

    def _open(self, conn: Any) -> None:
        conn.execute(SCHEMA_MIGRATIONS_SQL)
        self.migrator.upgrade()
        self._ensure_recall_index(conn)
        self.migrator.fill_derived_columns()
        self.fts.open(conn)
        self._legacy_import()
        self.proposals.replay_relations()

    def _open_read_only(self) -> None:
        """Open for reading only: the schema must be current (nothing can be migrated); every
        write then fails with a :class:`StorageError` that says why."""
        db = self.db
        with db.opening():
            conn = db.connect_read_only()
            if not db.table_exists(conn, "_meta") or self.migrator.needs_upgrade(conn):
                raise StorageError(
                    f"{self.path} is read-only and was written by an older version; open it "
                    "once where it can be written to upgrade it"
                )
            self.audit.refresh()
            self.fts.enabled = db.table_exists(conn, "memory_items_fts")

    def _ensure_recall_index(self, conn: Any) -> None:
        """A covering index for the recall candidate query (runtime-only, like the vec table).

        It lets recall find the newest active ids of a scope from the index alone, without
        reading record rows; databases of the reference implementation simply gain it.
        """
        if conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (RECALL_INDEX,)
        ).fetchone():
            return
        self.db.retry_locked(
            lambda: conn.execute(
                f"CREATE INDEX IF NOT EXISTS {RECALL_INDEX} ON memory_items(scope_key, "
                "superseded_by, deleted, updated_at DESC, id, kind, expires_at)"
            )
        )

    def _legacy_started(self) -> bool:
        """True once the legacy JSONL import has begun (its marker is committed)."""
        row = self.db.conn.execute(
            "SELECT 1 FROM schema_migrations WHERE version = ?", (LEGACY_JSONL_MIGRATION_VERSION,)
        ).fetchone()
        return row is not None

    def _legacy_import(self) -> None:
        """Import the JSONL files of a store written before SQLite (as untrusted rows), at
        most once: the marker is committed before the rows are read, so an import cut short
        (a hook's time limit, a crash) does not start again at every open; the files and their
        backups stay for ``swarmmem import``."""
        directory, secrets = self.legacy_dir, self.secrets
        if (
            directory is None
            or secrets is None
            or not any((directory / f).is_file() for f in LEGACY_FILES)
        ):
            return
        if self._legacy_started():
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
            if self._legacy_started():
                return
            self.db.conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (?, ?)",
                (LEGACY_JSONL_MIGRATION_VERSION, LEGACY_JSONL_MIGRATION_NAME),
            )
        with self.transaction():
            report = import_jsonl(
                self,
                directory,
                secrets=secrets,
                untrusted=True,
                allowed_scope_keys=self.legacy_scope_keys,
            )
            stat = outcomes.stat() if outcomes.is_file() else None
            self.db.set_meta(
                self.db.conn,
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

    # -- maintenance ---------------------------------------------------------------------

    def rebuild_fts(self) -> int:
        """Rebuild both full-text indexes from ``memory_items``; returns the rows indexed."""
        return self.fts.rebuild()

    @guarded
    def integrity_check(self) -> str:
        """``PRAGMA integrity_check`` (``'ok'`` for a healthy database)."""
        with self.db.connection() as conn:
            rows = conn.execute("PRAGMA integrity_check").fetchall()
        return "\n".join(str(r[0]) for r in rows)

"""The ``postgres`` storage provider: one schema of a PostgreSQL server, shared by many hosts.

The flow is :class:`~swarmmem.adapters.storage.sql.SqlStore`'s; :mod:`.database` supplies the
dialect (``%s`` placeholders, ``seq`` for insertion order, ``row_version`` for the record
cache, ``= ANY`` lists, one ordered branch per scope key) and the connections,
:mod:`.fulltext` the item rows with their ``tsvector`` documents, :mod:`.notify` the
NOTIFY-invalidated caches, and this module the per-role audit chains. The schema is
:mod:`.migrations`', the BM25 rank :mod:`.text_search`, writer locking :mod:`.locks` and the
password handling :mod:`.dsn`.

Connections come from a ``psycopg_pool.ConnectionPool`` (autocommit; transactions are
explicit); a thread inside ``transaction()`` keeps its connection until the outermost block
ends. Each transaction adds its full-text totals to ``memory_fts_stats`` once, at commit (one
row per scope key). Each database role keeps its own audit chain (``chain_id``, see
:mod:`.migrations` v17), so roles kept apart by row-level security never share one.

Caches (per store instance). ``records``: parsed rows keyed by id and validated by
``row_version`` on every read (a stale entry is never used). ``views`` (relations and outcome
events per memory) and ``fts stats`` (row count, token total, per-phrase document counts) are
kept current by :mod:`.notify`; reads inside a transaction never use or fill them. If the
listening connection fails, they are dropped and the store runs uncached (``cache_info()``
says why).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg_pool import PoolTimeout

from swarmmem.adapters.storage.postgres.database import (
    DEFAULT_POOL_SIZE,
    PostgresDatabase,
    PostgresDialect,
)
from swarmmem.adapters.storage.postgres.dsn import configured_dsn
from swarmmem.adapters.storage.postgres.fulltext import TsvectorIndex
from swarmmem.adapters.storage.postgres.migrations import (
    CHAINS_TABLE,
    MIGRATIONS,
    RECALL_INDEX_SQL,
    SCHEMA_MIGRATIONS_SQL,
    backfill_fts,
    backfill_provenance,
    backfill_recall_run_ids,
    backfill_stemmed_fts,
    rebuild_stemmed_fts,
)
from swarmmem.adapters.storage.postgres.notify import NotifiedCaches, channel_for
from swarmmem.adapters.storage.sql import Database, SqlStore, guarded
from swarmmem.adapters.storage.sql.audit import AuditLog, Log
from swarmmem.adapters.storage.sql.migrator import Schema
from swarmmem.core.model.audit import CHAIN_HEAD_KEY, KEY_MARKER_KEY
from swarmmem.ports.clock import Clock

if TYPE_CHECKING:
    from swarmmem.core.config import MemoryConfig

__all__ = ["DEFAULT_POOL_SIZE", "PostgresDialect", "PostgresStore", "RoleAuditLog"]

log = logging.getLogger("swarmmem.postgres")

#: the migrations and backfills of a PostgreSQL schema (full text has backfills of its own)
SCHEMA = Schema(
    MIGRATIONS,
    backfill_recall_run_ids,
    backfill_provenance,
    (
        ("fts_rows_backfilled", backfill_fts),
        ("fts_porter_rows_backfilled", backfill_stemmed_fts),
        ("fts_porter_kind_weighted", rebuild_stemmed_fts),
    ),
)

#: the ``memory_audit_chains`` column of each chain setting
_CHAIN_COLUMNS = {CHAIN_HEAD_KEY: "head", KEY_MARKER_KEY: "key_marker"}


class RoleAuditLog(AuditLog):
    """One audit chain per database role, once v17 made them (before it: one, in ``_meta``)."""

    def __init__(self, db: Database, log: Log) -> None:
        super().__init__(db, log)
        self._chains_ready = False

    def _own_chains(self, conn: Any) -> bool:
        if not self._chains_ready:
            self._chains_ready = self.db.table_exists(conn, CHAINS_TABLE)
        return self._chains_ready

    def meta(self, conn: Any, key: str) -> str | None:
        if not self._own_chains(conn):
            return super().meta(conn, key)
        row = self.db.execute(
            conn, f"SELECT {_CHAIN_COLUMNS[key]} FROM {CHAINS_TABLE} WHERE chain_id = current_user"
        ).fetchone()
        return None if row is None or row[0] is None else str(row[0])

    def set_meta(self, conn: Any, key: str, value: str | None) -> None:
        if not self._own_chains(conn):
            super().set_meta(conn, key, value)
            return
        column = _CHAIN_COLUMNS[key]
        self.db.execute(
            conn,
            f"INSERT INTO {CHAINS_TABLE} (chain_id, {column}) VALUES (current_user, ?) "
            f"ON CONFLICT (chain_id) DO UPDATE SET {column} = excluded.{column}",
            (value,),
        )

    def rows_where(self, conn: Any) -> str:
        return "WHERE chain_id = current_user" if self._own_chains(conn) else ""


class PostgresStore(SqlStore):
    """A :class:`~swarmmem.ports.storage.StorageProvider` over one PostgreSQL schema.

    Args:
        dsn: a libpq connection string or URI (its password never appears in messages).
        clock: the time source of audit events (the system clock by default).
        pool_size: the most pooled connections (one more is used for ``LISTEN``).
        schema: the schema holding the tables (created if missing); ``None`` uses the
            connection's current schema (normally ``public``).
        embedding_model_version: as for :class:`~swarmmem.adapters.storage.sqlite.SqliteStore`.
        fts_rank: ``"bm25"`` (FTS5's formula, the default) or ``"ts_rank_cd"``.
        cache: keep the NOTIFY-invalidated caches (see the module docstring).
        connect_timeout: seconds to wait for a connection.
    """

    name = "postgres"

    def __init__(
        self,
        dsn: str,
        *,
        clock: Clock | None = None,
        pool_size: int = DEFAULT_POOL_SIZE,
        schema: str | None = None,
        embedding_model_version: str | None = None,
        fts_rank: str = "bm25",
        cache: bool = True,
        connect_timeout: float = 10.0,
    ) -> None:
        db = PostgresDatabase(
            dsn, schema=schema, pool_size=pool_size, connect_timeout=connect_timeout
        )
        self.caches = NotifiedCaches(db, enabled=cache, scrub=db.dsn.scrub)
        self.fts = TsvectorIndex(db, self.caches, fts_rank)
        super().__init__(
            db,
            self.fts,
            SCHEMA,
            clock=clock,
            embedding_model_version=embedding_model_version,
            audit=RoleAuditLog,
        )
        self.db: PostgresDatabase = db
        self.schema = schema
        self.pool_size = pool_size
        self.fts_rank = fts_rank
        self.records.view_cache = self.caches
        db.before_read = self.caches.sync
        db.after_end.append(self.caches.invalidate)
        db.before_commit += [self.fts.write_totals, self.caches.announce]
        try:
            with db.opened():
                assert db.schema_name is not None
                self.caches.channel = channel_for(db.schema_name)
                self._open()
            db.open_pool()
            self.caches.start(db.connect)
        except (psycopg.Error, PoolTimeout) as exc:
            self.close()
            raise db.translate(exc) from None
        except BaseException:
            self.close()
            raise
        log.debug("opened %r", self)

    @classmethod
    def from_config(
        cls, tree: MemoryConfig, *, clock: Clock | None, **_parts: Any
    ) -> PostgresStore:
        """The store of ``memory.postgres`` (its DSN, else ``SWARMMEM_PG_DSN``)."""
        pg = tree.postgres
        return cls(configured_dsn(pg), clock=clock, pool_size=pg.pool_size, schema=pg.schema)

    @property
    def schema_name(self) -> str | None:
        """The schema in use (the configured one, else the connection's current one)."""
        return self.db.schema_name

    def __repr__(self) -> str:
        return f"PostgresStore(dsn={self.db.dsn.shown!r}, schema={self.db.schema_name!r})"

    def _open(self) -> None:
        """Create the schema, run missing migrations and backfills (under the write lock)."""
        db = self.db
        with db.connection() as conn:
            needed = self.migrator.needs_upgrade(conn)
        if needed:
            with db.transaction():
                conn = db.tx_conn()
                db.create_schema(conn)
                conn.execute(SCHEMA_MIGRATIONS_SQL)
                self.migrator.upgrade()
                conn.execute(RECALL_INDEX_SQL)
        self.audit.refresh()
        self.migrator.fill_derived_columns()
        self.proposals.replay_relations()

    def close(self) -> None:
        super().close()
        self.caches.stop()

    @guarded
    def cache_info(self) -> dict[str, Any]:
        """Sizes of the caches, notifications received, and why caching is off (if it is)."""
        self.caches.sync()
        return self.caches.info(len(self.records.cache))

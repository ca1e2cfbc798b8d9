"""The ``postgres`` storage provider: one schema of a PostgreSQL server, shared by many hosts.

The flow is :class:`~swarmmem.adapters.storage.sql.SqlStore`'s; this module supplies the
dialect (``%s`` placeholders, ``seq`` for insertion order, ``row_version`` for the record
cache, ``= ANY`` lists, one ordered branch per scope key), connections and the
NOTIFY-invalidated caches. The schema is :mod:`.migrations`', full text and its BM25 rank
:mod:`.text_search`, writer locking :mod:`.locks`, cache invalidation :mod:`.notify` and the
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

import builtins
import contextlib
import logging
import re
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

from swarmmem.adapters.storage.postgres.dsn import parse_dsn
from swarmmem.adapters.storage.postgres.locks import XACT_LOCK_SQL, chain_key
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
from swarmmem.adapters.storage.postgres.notify import NOTIFY_SQL, Listener, channel_for, encode
from swarmmem.adapters.storage.postgres.text_search import (
    ADJUST_STATS_SQL,
    CANDIDATE_COLUMNS,
    FTS_RANKS,
    RANKED_VECTORS,
    RECOUNT_STATS_SQL,
    STATS_MATCH,
    STATS_SQL,
    STEMMED_CANDIDATE_COLUMNS,
    candidate_query,
    fts_document,
    match_phrases,
    phrase_tsquery,
    rank_by_bm25,
    rank_by_cover_density,
)
from swarmmem.adapters.storage.sql import (
    CACHE_LIMIT,
    ITEM_ORDERS,
    FullTextHits,
    ItemQuery,
    SqlDialect,
    SqlStore,
    Touched,
    TxState,
    guarded,
)
from swarmmem.adapters.storage.sql_rows import ITEM_UPDATE, ITEM_WRITE_COLUMNS, ITEM_WRITE_COUNT
from swarmmem.core.model.audit import CHAIN_HEAD_KEY, KEY_MARKER_KEY
from swarmmem.core.model.errors import ConfigError, StorageError
from swarmmem.core.model.events import OutcomeEvent
from swarmmem.core.model.ids import iso_to_ms
from swarmmem.core.model.semantics import ListFilter, StoredRow, passes_parsed_expiry
from swarmmem.ports.clock import Clock

log = logging.getLogger("swarmmem.postgres")

DEFAULT_POOL_SIZE = 4
_SCHEMA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_UPSERT_SQL = (
    "WITH old AS (SELECT fts_len, scope_key FROM memory_items WHERE id = ?) "
    f"INSERT INTO memory_items ({ITEM_WRITE_COLUMNS}, fts, fts_len, fts_porter) "
    f"VALUES ({', '.join('?' * ITEM_WRITE_COUNT)}, ?::tsvector, ?, ?::tsvector) "
    f"ON CONFLICT (id) DO UPDATE SET {ITEM_UPDATE}, fts = excluded.fts, "
    "fts_len = excluded.fts_len, fts_porter = excluded.fts_porter, "
    "row_version = excluded.row_version "
    "RETURNING valid_from, supersedes_reason, (SELECT fts_len FROM old), "
    "(SELECT scope_key FROM old)"
)


class PostgresDialect(SqlDialect):
    """PostgreSQL's SQL; the write lock is the schema's transaction-scoped advisory lock."""

    placeholder = "%s"
    order_column = "seq"
    version_column = "row_version"

    def __init__(self, lock_key: int) -> None:
        self.lock_key = lock_key

    def begin(self) -> builtins.list[tuple[str, tuple[Any, ...]]]:
        return [("BEGIN", ()), (XACT_LOCK_SQL, (self.lock_key,))]

    def one_of(self, column: str, values: Sequence[str]) -> tuple[str, builtins.list[Any]]:
        return f"{column} = ANY(?)", [builtins.list(values)]

    def any_of(self, column: str) -> str:
        return f"{column} = ANY(?)"

    def array(self, values: Sequence[str]) -> Any:
        return builtins.list(values)

    def select_items(self, q: ItemQuery) -> tuple[str, builtins.list[Any]]:
        """Several scope keys become one ordered, limited branch per key under ``UNION ALL``,
        so each branch reads the recall index in order and stops at the limit (a plain
        ``scope_key = ANY(...)`` would sort every row of every scope)."""
        if q.order != ITEM_ORDERS["updated"]:  # the reports' orders: one plain query
            return super().select_items(q)
        order = " ORDER BY updated_at DESC, id ASC"
        tail = "" if q.limit is None else " LIMIT ?"
        limits = [] if q.limit is None else [q.limit]
        if q.scope_keys is None:
            clause = " WHERE " + " AND ".join(q.where) if q.where else ""
            statement = f"SELECT {q.columns} FROM memory_items{clause}{order}{tail}"
            return statement, [*q.params, *limits]
        keys = builtins.list(dict.fromkeys(q.scope_keys))
        clause = " AND ".join(["scope_key = ?", *q.where])
        if len(keys) == 1:
            statement = f"SELECT {q.columns} FROM memory_items WHERE {clause}{order}{tail}"
            return statement, [keys[0], *q.params, *limits]
        branch = (
            f"(SELECT {q.columns}, updated_at AS sort_at, id AS sort_id FROM memory_items "
            f"WHERE {clause}{order}{tail})"
        )
        names = ", ".join(c.split(" AS ")[-1].strip() for c in q.columns.split(","))
        statement = (
            f"SELECT {names} FROM ({' UNION ALL '.join(branch for _ in keys)}) AS scoped "
            f"ORDER BY sort_at DESC, sort_id ASC{tail}"
        )
        return statement, [*(v for key in keys for v in (key, *q.params, *limits)), *limits]


#: the ``memory_audit_chains`` column of each chain setting
_CHAIN_COLUMNS = {CHAIN_HEAD_KEY: "head", KEY_MARKER_KEY: "key_marker"}


class _PgTxState(TxState):
    """Also the full-text totals a transaction adds at commit: per scope key, its change
    in rows and in tokens."""

    def reset(self) -> None:
        super().reset()
        self.deltas: dict[str, tuple[int, int]] = {}

    def add(self, scope_key: str, rows: int, tokens: int) -> None:
        had = self.deltas.get(scope_key, (0, 0))
        self.deltas[scope_key] = (had[0] + rows, had[1] + tokens)

    def pending(self) -> tuple[int, int]:
        """The uncommitted change of the totals over every scope key."""
        return (sum(d[0] for d in self.deltas.values()), sum(d[1] for d in self.deltas.values()))

    def mark(self) -> tuple[Any, ...]:
        return (*super().mark(), dict(self.deltas))

    def restore(self, mark: tuple[Any, ...]) -> None:
        super().restore(mark[:-1])
        self.deltas = mark[-1]


@attrs.frozen
class _FtsStats:
    rows: int
    tokens: int


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
    migrations = MIGRATIONS
    driver_errors = (psycopg.Error, PoolTimeout)

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
        if schema is not None and not _SCHEMA_NAME.match(schema):
            raise ConfigError(f"memory.postgres.schema is not a plain identifier: {schema!r}")
        if fts_rank not in FTS_RANKS:
            raise ConfigError(f"fts_rank must be one of {', '.join(FTS_RANKS)}; got {fts_rank!r}")
        if not isinstance(pool_size, int) or isinstance(pool_size, bool) or pool_size < 1:
            raise ConfigError(f"memory.postgres.poolSize must be a positive integer: {pool_size!r}")
        super().__init__(clock=clock, embedding_model_version=embedding_model_version)
        self._dsn = parse_dsn(dsn)
        self.schema = schema
        self.pool_size = pool_size
        self.fts_rank = fts_rank
        self.connect_timeout = float(connect_timeout)
        self.cache_disabled_reason: str | None = None if cache else "caching is off"
        self._views_cache: dict[str, tuple[tuple[str, ...], tuple[OutcomeEvent, ...]]] = {}
        self._stats: _FtsStats | None = None
        self._chains_ready = False
        self._df: dict[tuple[bool, tuple[str, ...]], int] = {}
        self._generation = 0
        self._notifications = 0
        self._listener: Listener | None = None
        self._pool: ConnectionPool[Any] | None = None
        self._opening: Any = None
        try:
            with self._connect() as conn:
                self._resolve_schema(conn)
                self._opening = conn
                try:
                    self._init()
                finally:
                    self._opening = None
            self._pool = ConnectionPool(
                self._dsn.conninfo,
                kwargs=self._connect_kwargs(),
                min_size=1,
                max_size=pool_size,
                configure=self._configure,
                name="swarmmem",
                timeout=self.connect_timeout,
                num_workers=1,
                open=True,
            )
            if cache:
                self._start_listener()
        except (psycopg.Error, PoolTimeout) as exc:
            self.close()
            raise self._translate(exc) from None
        except BaseException:
            self.close()
            raise
        log.debug("opened %r", self)

    # -- connections ---------------------------------------------------------------------

    def _new_state(self) -> TxState:
        return _PgTxState()

    def _connect_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "autocommit": True,
            "connect_timeout": max(1, int(self.connect_timeout)),
        }
        if self._dsn.password:
            kwargs["password"] = self._dsn.password
        return kwargs

    def _connect(self) -> Any:
        conn = psycopg.connect(self._dsn.conninfo, **self._connect_kwargs())
        if self.schema is not None:
            self._configure(conn)
        return conn

    def _configure(self, conn: Any) -> None:
        if self.schema is not None:
            conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))

    def _resolve_schema(self, conn: Any) -> None:
        if self.schema is None:
            row = conn.execute("SELECT current_schema()").fetchone()
            if row is None or row[0] is None:
                raise StorageError("the postgres connection has no current schema")
            self.schema_name = str(row[0])
        else:
            self.schema_name = self.schema
        self.dialect = PostgresDialect(chain_key(self.schema_name))
        self.channel = channel_for(self.schema_name)

    def __repr__(self) -> str:
        schema = getattr(self, "schema_name", self.schema)
        return f"PostgresStore(dsn={self._dsn.shown!r}, schema={schema!r})"

    @property
    def _location(self) -> str:
        return f"postgres:{getattr(self, 'schema_name', self.schema)}"

    def _translate(self, exc: BaseException) -> StorageError:
        if isinstance(exc, StorageError):
            return exc
        message = self._dsn.scrub(str(exc).strip() or type(exc).__name__)
        return StorageError(f"postgres store (schema {self.schema or 'default'}): {message}")

    def _cause(self, exc: BaseException) -> BaseException | None:
        return None  # the driver's message may hold the password

    def _acquire(self) -> Any:
        if self._opening is not None:
            return self._opening
        if self._closed or self._pool is None:
            raise StorageError("the postgres store is closed")
        return self._pool.getconn()

    def _release(self, conn: Any) -> None:
        if conn is self._opening:
            return
        pool = self._pool
        with contextlib.suppress(Exception):
            if pool is None:
                conn.close()
            else:
                pool.putconn(conn)

    def _shutdown(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            with contextlib.suppress(Exception):
                pool.close(timeout=5.0)
        self._stop_listener()
        with self._lock:
            self._views_cache.clear()
            self._stats = None
            self._df.clear()

    def _table_exists(self, conn: Any, table: str) -> bool:
        qualified = '"' + self.schema_name.replace('"', '""') + '".' + table
        return bool(
            self._execute(conn, "SELECT to_regclass(?) IS NOT NULL", (qualified,)).fetchone()[0]
        )

    def _has_column(self, conn: Any, table: str, column: str) -> bool:
        row = self._execute(
            conn,
            "SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = ? "
            "AND table_name = ? AND column_name = ?)",
            (self.schema_name, table, column),
        ).fetchone()
        return bool(row[0])

    # -- opening -------------------------------------------------------------------------

    def _init(self) -> None:
        """Create the schema, run missing migrations and backfills (under the write lock)."""
        with self._connection() as conn:
            needed = self._needs_upgrade(conn)
        if needed:
            with self.transaction():
                conn = self._tx_conn()
                if self.schema is not None:
                    conn.execute(
                        sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(
                            sql.Identifier(self.schema)
                        )
                    )
                conn.execute(SCHEMA_MIGRATIONS_SQL)
                self._migrate()
                self._run_backfills()
                conn.execute(RECALL_INDEX_SQL)
        self._refresh_chain_state()
        self._fill_derived_columns()
        self._replay_relations()

    # -- the audit chain: one per database role -----------------------------------------

    def _own_chains(self, conn: Any) -> bool:
        """True once v17 gave each role a chain of its own (before it: one, in ``_meta``)."""
        if not self._chains_ready:
            self._chains_ready = self._table_exists(conn, CHAINS_TABLE)
        return self._chains_ready

    def _chain_meta(self, conn: Any, key: str) -> str | None:
        if not self._own_chains(conn):
            return super()._chain_meta(conn, key)
        row = self._execute(
            conn, f"SELECT {_CHAIN_COLUMNS[key]} FROM {CHAINS_TABLE} WHERE chain_id = current_user"
        ).fetchone()
        return None if row is None or row[0] is None else str(row[0])

    def _set_chain_meta(self, conn: Any, key: str, value: str | None) -> None:
        if not self._own_chains(conn):
            super()._set_chain_meta(conn, key, value)
            return
        column = _CHAIN_COLUMNS[key]
        self._execute(
            conn,
            f"INSERT INTO {CHAINS_TABLE} (chain_id, {column}) VALUES (current_user, ?) "
            f"ON CONFLICT (chain_id) DO UPDATE SET {column} = excluded.{column}",
            (value,),
        )

    def _chain_rows_where(self, conn: Any) -> str:
        return "WHERE chain_id = current_user" if self._own_chains(conn) else ""

    def _backfills(self) -> tuple[tuple[str, Callable[[Any], None]], ...]:
        return (
            *super()._backfills(),
            ("fts_rows_backfilled", backfill_fts),
            ("fts_porter_rows_backfilled", backfill_stemmed_fts),
            ("fts_porter_kind_weighted", rebuild_stemmed_fts),
        )

    def _backfill_recall_run_ids(self, conn: Any) -> None:
        backfill_recall_run_ids(conn)

    def _backfill_provenance(self, conn: Any) -> None:
        backfill_provenance(conn)

    def _after_bulk_load(self, conn: Any) -> None:
        super()._after_bulk_load(conn)
        for statement in RECOUNT_STATS_SQL:
            conn.execute(statement)
        conn.execute("ANALYZE memory_items")  # planner statistics for the bulk-loaded rows

    # -- transactions --------------------------------------------------------------------

    def _before_commit(self, conn: Any, state: TxState) -> None:
        """Also add the full-text totals and announce what changed (see :mod:`.notify`).

        The chain head and the totals are single hot rows; writing them once per transaction
        instead of once per write keeps a bulk import linear instead of quadratic.
        """
        super()._before_commit(conn, state)
        assert isinstance(state, _PgTxState)
        changed = [(key, *delta) for key, delta in state.deltas.items() if delta != (0, 0)]
        if changed:
            self._executemany(conn, ADJUST_STATS_SQL, changed)
        state.deltas = {}
        payload = encode(state.touched())
        if payload is not None:
            self._execute(conn, NOTIFY_SQL, (self.channel, payload))

    @property
    def _deltas(self) -> _PgTxState:
        state = self._state
        assert isinstance(state, _PgTxState)
        return state

    # -- caches --------------------------------------------------------------------------

    def _start_listener(self) -> None:
        try:
            self._listener = Listener(self._connect, self.channel)
        except psycopg.Error as exc:
            self.cache_disabled_reason = (
                f"LISTEN failed, caches are off: {self._dsn.scrub(str(exc).strip())}"
            )

    def _stop_listener(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()

    def _caching(self) -> bool:
        return self._listener is not None and self._state.conn is None

    def _sync(self) -> None:
        """Apply every notification that has arrived."""
        listener = self._listener
        if listener is None or self._state.conn is not None:
            return
        with self._lock:
            try:
                arrived = listener.drain()
            except psycopg.Error as exc:
                self.cache_disabled_reason = (
                    f"the LISTEN connection failed, caches are off: "
                    f"{self._dsn.scrub(str(exc).strip())}"
                )
                self._stop_listener()
                self._invalidate(Touched(everything=True))
                return
            for touched in arrived:
                self._notifications += 1
                self._invalidate(touched)

    def _invalidate(self, touched: Touched) -> None:
        if not (touched.ids or touched.items or touched.everything):
            return
        with self._lock:
            self._generation += 1
            super()._invalidate(touched)
            if touched.everything:
                self._views_cache.clear()
            for memory_id in touched.ids:
                self._views_cache.pop(memory_id, None)
            if touched.items or touched.everything:
                self._stats = None
                self._df.clear()

    @guarded
    def cache_info(self) -> dict[str, Any]:
        """Sizes of the caches, notifications received, and why caching is off (if it is)."""
        self._sync()
        with self._lock:
            return {
                "listening": self._listener is not None,
                "records": len(self._cache),
                "views": len(self._views_cache),
                "fts_stats": self._stats is not None,
                "document_frequencies": len(self._df),
                "notifications": self._notifications,
                "generation": self._generation,
                "reason": self.cache_disabled_reason,
            }

    def _view_parts(
        self, conn: Any, ids: builtins.list[str]
    ) -> dict[str, tuple[tuple[str, ...], tuple[OutcomeEvent, ...]]]:
        """Cached outside transactions."""
        caching = self._caching()
        found = {}
        if caching:
            with self._lock:
                found = {i: self._views_cache[i] for i in ids if i in self._views_cache}
        missing = [i for i in ids if i not in found]
        if missing:
            generation = self._generation
            fresh = super()._view_parts(conn, missing)
            found.update(fresh)
            if caching:
                with self._lock:
                    if self._generation == generation:
                        if len(self._views_cache) >= CACHE_LIMIT:
                            self._views_cache.clear()
                        self._views_cache.update(fresh)
        return found

    @guarded
    def related_ids(self, memory_id: str) -> builtins.list[str]:
        self._check_open()
        self._sync()
        if self._caching():
            with self._lock:
                hit = self._views_cache.get(memory_id)
            if hit is not None:
                return builtins.list(hit[0])
        return super().related_ids(memory_id)

    # -- rows and full text --------------------------------------------------------------

    def _write_item(
        self, conn: Any, row: StoredRow, params: tuple[Any, ...]
    ) -> tuple[str | None, str | None]:
        literal, length = fts_document(row.data)
        stemmed, _ = fts_document(row.data, stemmed=True)
        valid_from, supersedes_reason, old_length, old_key = self._execute(
            conn, _UPSERT_SQL, (row.id, *params, literal, length, stemmed)
        ).fetchone()
        state = self._deltas
        if old_key is not None:
            state.add(old_key, -1, -int(old_length))
        state.add(row.scope_key, 1, length)
        return valid_from, supersedes_reason

    def _erase_item(self, conn: Any, memory_id: str) -> None:
        length, scope_key = self._execute(
            conn,
            "DELETE FROM memory_items WHERE id = ? RETURNING fts_len, scope_key",
            (memory_id,),
        ).fetchone()
        self._deltas.add(scope_key, -1, -int(length))

    def _fts_statistics(
        self, conn: Any, phrases: Sequence[tuple[str, ...]], *, stemmed: bool = False
    ) -> tuple[_FtsStats, builtins.list[int]]:
        """Row count, token total and per-phrase document counts (cached between writes)."""
        caching = self._caching()
        with self._lock:
            stats = self._stats if caching else None
            known = dict(self._df) if caching else {}
        keys = [(stemmed, p) for p in phrases]
        wanted = [k for k in dict.fromkeys(keys) if k not in known]
        if stats is None or wanted:
            generation = self._generation
            row = self._execute(
                conn,
                STATS_SQL.format(match=STATS_MATCH[stemmed]),
                ([phrase_tsquery(p) for _, p in wanted],),
            ).fetchone()
            state = self._deltas
            pending = state.pending() if state.conn is conn else (0, 0)
            stats = _FtsStats(rows=int(row[0]) + pending[0], tokens=int(row[1]) + pending[1])
            known.update(zip(wanted, (int(n) for n in row[2]), strict=True))
            if caching:
                with self._lock:
                    if self._generation == generation:
                        self._stats = stats
                        if len(self._df) > CACHE_LIMIT:
                            self._df.clear()
                        self._df.update({p: known[p] for p in wanted})
        return stats, [known[k] for k in keys]

    def _full_text(
        self, conn: Any, flt: ListFilter, fts_query: str, limit: int, *, stemmed: bool = False
    ) -> FullTextHits | None:
        """The scoped rows with, for those matching the ``tsquery``, what the rank needs;
        ranks are computed here (see :mod:`.text_search`)."""
        query = self._list_sql(flt, STEMMED_CANDIDATE_COLUMNS if stemmed else CANDIDATE_COLUMNS)
        if query is None:
            return FullTextHits([], [], {})
        phrases = match_phrases(fts_query, stemmed=stemmed)
        statement, args = candidate_query(*query, phrases, self.fts_rank, RANKED_VECTORS[stemmed])
        try:
            rows = self._execute(conn, statement, args).fetchall()
        except psycopg.errors.SyntaxError as exc:
            if self._state.conn is not None:
                raise
            self._fts_enabled = False
            self.fts_disabled_reason = f"full-text search failed and is off for this store: {exc}"
            return None
        if not flt.include_expired:
            now_ms = iso_to_ms(flt.now)
            rows = [r for r in rows if passes_parsed_expiry(r[2], now_ms)]
        hits = [r for r in rows if r[5] is not None]
        versions = {r[0]: int(r[1]) for r in rows}
        if not hits:
            return FullTextHits([r[0] for r in rows], [], versions)
        if self.fts_rank == "ts_rank_cd" and not stemmed:
            ranked = rank_by_cover_density(hits, limit)
            return FullTextHits([r[0] for r in rows], ranked, versions)
        stats, counts = self._fts_statistics(conn, phrases, stemmed=stemmed)
        scored = rank_by_bm25(hits, phrases, stats.rows, stats.tokens, counts, limit)
        return FullTextHits(
            [r[0] for r in rows],
            [memory_id for memory_id, _ in scored],
            versions,
            dict(scored) if stemmed else None,
        )

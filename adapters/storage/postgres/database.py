"""One PostgreSQL schema as the store's parts share it: its dialect, pool and errors.

Connections come from a ``psycopg_pool.ConnectionPool`` (autocommit; transactions are
explicit); a thread inside ``transaction()`` keeps its connection until the outermost block
ends. While the store opens, one direct connection serves every statement (:meth:`opened`).
Each transaction also carries the full-text totals it adds at commit (:class:`PgTxState`).
"""

from __future__ import annotations

import builtins
import contextlib
import re
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

from swarmmem.adapters.storage.postgres.dsn import parse_dsn
from swarmmem.adapters.storage.postgres.locks import XACT_LOCK_SQL, chain_key
from swarmmem.adapters.storage.sql import ITEM_ORDERS, Database, ItemQuery, SqlDialect, TxState
from swarmmem.core.config import PostgresConfig
from swarmmem.core.model.errors import ConfigError, StorageError

DEFAULT_POOL_SIZE = PostgresConfig().pool_size
SCHEMA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


class PgTxState(TxState):
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


class PostgresDatabase(Database):
    """The connections of one PostgreSQL schema.

    Args:
        dsn: a libpq connection string or URI (its password never appears in messages).
        schema: the schema holding the tables (created if missing); ``None`` uses the
            connection's current schema (normally ``public``).
        pool_size: the most pooled connections.
        connect_timeout: seconds to wait for a connection.
    """

    name = "postgres"
    driver_errors = (psycopg.Error, PoolTimeout)

    def __init__(
        self,
        dsn: str,
        *,
        schema: str | None = None,
        pool_size: int = DEFAULT_POOL_SIZE,
        connect_timeout: float = 10.0,
    ) -> None:
        if schema is not None and not SCHEMA_NAME.match(schema):
            raise ConfigError(f"memory.postgres.schema is not a plain identifier: {schema!r}")
        if not isinstance(pool_size, int) or isinstance(pool_size, bool) or pool_size < 1:
            raise ConfigError(f"memory.postgres.poolSize must be a positive integer: {pool_size!r}")
        super().__init__()
        self.dsn = parse_dsn(dsn)
        self.schema = schema
        #: the schema in use (``schema``, else the connection's current one once resolved)
        self.schema_name = schema
        self.pool_size = pool_size
        self.connect_timeout = float(connect_timeout)
        self._pool: ConnectionPool[Any] | None = None
        self._opening: Any = None

    def new_state(self) -> TxState:
        return PgTxState()

    @property
    def totals(self) -> PgTxState:
        """This thread's transaction state, with its pending full-text totals."""
        state = self.state
        assert isinstance(state, PgTxState)
        return state

    # -- connections ---------------------------------------------------------------------

    def _connect_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "autocommit": True,
            "connect_timeout": max(1, int(self.connect_timeout)),
        }
        if self.dsn.password:
            kwargs["password"] = self.dsn.password
        return kwargs

    def connect(self) -> Any:
        """A new connection outside the pool (opening, ``LISTEN``)."""
        conn = psycopg.connect(self.dsn.conninfo, **self._connect_kwargs())
        if self.schema is not None:
            self._configure(conn)
        return conn

    def _configure(self, conn: Any) -> None:
        if self.schema is not None:
            conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))

    @contextlib.contextmanager
    def opened(self) -> Iterator[Any]:
        """A direct connection that serves every statement until the block ends, with the
        schema resolved (its dialect, whose write lock is keyed by the schema's name)."""
        with self.connect() as conn:
            if self.schema is None:
                row = conn.execute("SELECT current_schema()").fetchone()
                if row is None or row[0] is None:
                    raise StorageError("the postgres connection has no current schema")
                self.schema_name = str(row[0])
            assert self.schema_name is not None
            self.dialect = PostgresDialect(chain_key(self.schema_name))
            self._opening = conn
            try:
                yield conn
            finally:
                self._opening = None

    def create_schema(self, conn: Any) -> None:
        """Create the configured schema if it is missing."""
        if self.schema is not None:
            conn.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema))
            )

    def open_pool(self) -> None:
        self._pool = ConnectionPool(
            self.dsn.conninfo,
            kwargs=self._connect_kwargs(),
            min_size=1,
            max_size=self.pool_size,
            configure=self._configure,
            name="swarmmem",
            timeout=self.connect_timeout,
            num_workers=1,
            open=True,
        )

    @property
    def location(self) -> str:
        return f"postgres:{self.schema_name}"

    def translate(self, exc: BaseException) -> StorageError:
        if isinstance(exc, StorageError):
            return exc
        message = self.dsn.scrub(str(exc).strip() or type(exc).__name__)
        return StorageError(f"postgres store (schema {self.schema or 'default'}): {message}")

    def cause(self, exc: BaseException) -> BaseException | None:
        return None  # the driver's message may hold the password

    def acquire(self) -> Any:
        if self._opening is not None:
            return self._opening
        if self.closed or self._pool is None:
            raise StorageError("the postgres store is closed")
        return self._pool.getconn()

    def release(self, conn: Any) -> None:
        if conn is self._opening:
            return
        pool = self._pool
        with contextlib.suppress(Exception):
            if pool is None:
                conn.close()
            else:
                pool.putconn(conn)

    def shutdown(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            with contextlib.suppress(Exception):
                pool.close(timeout=5.0)

    def table_exists(self, conn: Any, table: str) -> bool:
        assert self.schema_name is not None
        qualified = '"' + self.schema_name.replace('"', '""') + '".' + table
        return bool(
            self.execute(conn, "SELECT to_regclass(?) IS NOT NULL", (qualified,)).fetchone()[0]
        )

    def has_column(self, conn: Any, table: str, column: str) -> bool:
        row = self.execute(
            conn,
            "SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = ? "
            "AND table_name = ? AND column_name = ?)",
            (self.schema_name, table, column),
        ).fetchone()
        return bool(row[0])

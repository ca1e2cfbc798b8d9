"""One database as the store's parts share it: connections, transactions, SQL text, errors.

The outermost :meth:`Database.transaction` runs the dialect's ``begin`` statements (the write
lock: SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's transaction-scoped advisory lock), so writers
queue and the audit chain never forks; nested blocks are savepoints. Each thread has its own
transaction state (:class:`TxState`): the pinned connection, the cached chain head and what
the transaction touched. The parts hook in: ``before_commit`` runs inside the transaction just
before ``COMMIT`` (the chain head, PostgreSQL's full-text totals), ``after_end`` gets what the
ended transaction touched (cache invalidation), ``before_read`` runs before a read outside a
transaction (PostgreSQL catches up with other writers). Driver errors surface as StorageError.
"""

from __future__ import annotations

import abc
import builtins
import contextlib
import functools
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple, TypeVar

from swarmmem.adapters.storage.sql.dialect import SqlDialect, shared_nulls, values_list
from swarmmem.core.model.errors import StorageError

F = TypeVar("F", bound=Callable[..., Any])


class Touched(NamedTuple):
    """What a transaction changed: these memories, the item rows at all, or everything."""

    ids: frozenset[str] = frozenset()
    items: bool = False
    everything: bool = False


class TxState(threading.local):
    """One thread's transaction: its connection, savepoint depth, cached chain head and
    what it touched."""

    def __init__(self) -> None:
        self.conn: Any = None
        self.depth = 0
        self.reset()

    def reset(self) -> None:
        self.ids: set[str] = set()
        self.items = False
        self.everything = False
        self.head: str | None = None
        self.head_loaded = False
        self.head_dirty = False
        self.purged = False

    def touched(self) -> Touched:
        return Touched(frozenset(self.ids), self.items, self.everything)

    def mark(self) -> tuple[Any, ...]:
        """What a savepoint restores when it rolls back (the touched sets only grow)."""
        return (self.head, self.head_loaded, self.head_dirty)

    def restore(self, mark: tuple[Any, ...]) -> None:
        self.head, self.head_loaded, self.head_dirty = mark


class Database(abc.ABC):
    """Connections and transactions of one database (see the module docstring).

    A database supplies how a connection is obtained and given back, what its driver errors
    mean, and two schema questions; everything else is written once here.
    """

    #: the provider's name, for messages
    name: str
    dialect: SqlDialect
    driver_errors: tuple[type[BaseException], ...]

    def __init__(self) -> None:
        self.read_only = False
        self.closed = False
        self.state = self.new_state()
        self.before_commit: builtins.list[Callable[[Any, TxState], None]] = []
        self.after_end: builtins.list[Callable[[Touched], None]] = []
        self.before_read: Callable[[], None] | None = None

    # -- what a database supplies ------------------------------------------------------------

    def new_state(self) -> TxState:
        return TxState()

    @abc.abstractmethod
    def acquire(self) -> Any:
        """A connection for one transaction or read (raises StorageError when closed)."""

    def release(self, conn: Any) -> None:  # noqa: B027 (optional hook)
        """Give back what :meth:`acquire` returned."""

    def shutdown(self) -> None:  # noqa: B027 (optional hook)
        """Close connections (for :meth:`close`)."""

    @property
    @abc.abstractmethod
    def location(self) -> str:
        """Where the rows live, for messages and load reports."""

    @abc.abstractmethod
    def translate(self, exc: BaseException) -> StorageError:
        """A driver error as StorageError (with nothing secret in its message)."""

    def cause(self, exc: BaseException) -> BaseException | None:
        """The cause to chain to a translated driver error."""
        return exc

    @abc.abstractmethod
    def table_exists(self, conn: Any, table: str) -> bool: ...

    @abc.abstractmethod
    def has_column(self, conn: Any, table: str, column: str) -> bool: ...

    def after_purge(self) -> None:  # noqa: B027 (optional hook)
        """Make a committed purge final on disk (e.g. empty the write-ahead log)."""

    # -- statements ----------------------------------------------------------------------------

    def execute(self, conn: Any, statement: str, params: Sequence[Any] = ()) -> Any:
        return conn.execute(self.dialect.sql(statement), params)

    def executemany(self, conn: Any, statement: str, rows: Sequence[Sequence[Any]]) -> None:
        cursor = conn.cursor()
        try:
            cursor.executemany(self.dialect.sql(statement), rows)
        finally:
            cursor.close()

    def insert_many(
        self,
        conn: Any,
        head: str,
        rows: Sequence[Sequence[Any]],
        *,
        nullable: Sequence[int],
        tail: str = "",
    ) -> None:
        """``executemany`` of ``{head} VALUES (?, ...){tail}`` over ``rows`` (one ``?`` per
        value). With a driver that binds ``None`` slowly, each position among ``nullable``
        that is ``None`` in every row is written as ``NULL`` instead of being bound."""
        if not rows:
            return
        width = len(rows[0])
        nulls: tuple[int, ...] = ()
        if self.dialect.slow_null_binding:
            nulls, rows = shared_nulls(rows, nullable)
        self.executemany(conn, f"{head} VALUES ({values_list(width, nulls)}){tail}", rows)

    def get_meta(self, conn: Any, key: str) -> str | None:
        row = self.execute(conn, "SELECT value FROM _meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, conn: Any, key: str, value: str) -> None:
        self.execute(
            conn,
            "INSERT INTO _meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def current_version(self, conn: Any) -> int:
        """The highest recorded migration (0 for an empty database)."""
        if not self.table_exists(conn, "schema_migrations"):
            return 0
        row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
        return int(row[0])

    # -- connections and transactions --------------------------------------------------------

    def check_open(self) -> None:
        if self.closed:
            raise StorageError(f"the {self.name} store {self.location} is closed")

    @contextlib.contextmanager
    def guard(self) -> Iterator[None]:
        """Driver errors raised inside the block become StorageError."""
        try:
            yield
        except self.driver_errors as exc:
            raise self.translate(exc) from self.cause(exc)

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        """The thread's transaction connection, else one acquired for this read."""
        self.check_open()
        if self.state.conn is not None:
            yield self.state.conn
            return
        if self.before_read is not None:
            self.before_read()
        conn = self.acquire()
        try:
            yield conn
        finally:
            self.release(conn)

    def tx_conn(self) -> Any:
        conn = self.state.conn
        assert conn is not None, "must run inside transaction()"
        return conn

    def touch(
        self, ids: Iterable[str] = (), *, items: bool = False, everything: bool = False
    ) -> None:
        """Note what the running transaction changed (its caches are dropped when it ends)."""
        state = self.state
        state.ids.update(ids)
        state.items = state.items or items
        state.everything = state.everything or everything

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All-or-nothing; the outermost block takes the write lock, inner ones are savepoints."""
        state = self.state
        if state.conn is not None:
            with self._savepoint(state):
                yield
            return
        self.check_open()
        if self.read_only:
            raise StorageError(
                f"the memory store {self.location} is read-only here: reading works, "
                "writing does not"
            )
        with self.guard():
            conn = self.acquire()
        state.conn = conn
        state.reset()
        purged = False
        try:
            for statement, params in self.dialect.begin():
                self.execute(conn, statement, params)
            yield
            for hook in self.before_commit:
                hook(conn, state)
            conn.execute("COMMIT")
            purged = state.purged
        except BaseException as exc:
            with contextlib.suppress(Exception):
                conn.execute("ROLLBACK")
            if isinstance(exc, self.driver_errors):
                raise self.translate(exc) from self.cause(exc)
            raise
        finally:
            touched = state.touched()
            state.conn = None
            state.depth = 0
            state.reset()
            self.release(conn)
            self.ended(touched)
        if purged:
            with self.guard():
                self.after_purge()

    @contextlib.contextmanager
    def _savepoint(self, state: TxState) -> Iterator[None]:
        conn, depth, mark = state.conn, state.depth, state.mark()
        name = f"swarmmem_sp{depth}"
        with self.guard():
            conn.execute(f"SAVEPOINT {name}")
        state.depth += 1
        try:
            yield
        except BaseException as exc:
            state.depth = depth
            state.restore(mark)
            with contextlib.suppress(Exception):
                conn.execute(f"ROLLBACK TO {name}")
                conn.execute(f"RELEASE {name}")
            if isinstance(exc, self.driver_errors):
                raise self.translate(exc) from self.cause(exc)
            raise
        state.depth = depth
        with self.guard():
            conn.execute(f"RELEASE {name}")

    def ended(self, touched: Touched) -> None:
        """Tell the parts what a transaction (this one's, or another writer's) changed."""
        for end in self.after_end:
            end(touched)

    def close(self) -> None:
        """Close the connections (idempotent); later calls raise StorageError."""
        self.closed = True
        self.shutdown()


def guarded(method: F) -> F:
    """Translate driver errors raised by a method of an object with a ``db`` into
    StorageError."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        db: Database = self.db
        try:
            return method(self, *args, **kwargs)
        except db.driver_errors as exc:
            raise db.translate(exc) from db.cause(exc)

    return wrapper  # type: ignore[return-value]

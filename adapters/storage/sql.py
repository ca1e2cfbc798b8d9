"""One SQL store for every database: the whole provider flow, written once.

:class:`SqlStore` keeps a project's memory in the reference tables (``memory_items``,
``memory_proposals``, ``memory_relations``, ``memory_events``, ``memory_recall_usage``,
``memory_outcomes``, ``memory_reward_events``, ``_meta``, ``schema_migrations``). A subclass
per database supplies a :class:`SqlDialect` (the SQL text that differs), how a connection is
obtained, how an item row and its full-text entry are written and erased, and full-text
pre-selection. SQL here is written with ``?`` placeholders; the dialect rewrites them.

Transactions. The outermost ``transaction()`` runs the dialect's ``begin`` statements (the
write lock: SQLite's ``BEGIN IMMEDIATE``, PostgreSQL's transaction-scoped advisory lock), so
writers queue and the audit chain never forks; nested blocks are savepoints. Each thread has
its own transaction state (:class:`TxState`): the pinned connection, the cached chain head
(written to ``_meta`` once, at commit) and the ids the transaction touched, whose cached
records are dropped when it ends. Driver errors surface as StorageError.

Audit chain. Once ``event_hash_chain_backfilled`` is set, every ``memory_events`` row stores
``prev_hash``, the hash of the previous row (:mod:`swarmmem.core.model.audit`), and ``_meta``
holds the head and the key marker. A dialect may keep one chain per database role instead
(PostgreSQL: :meth:`SqlStore._chain_rows_where`, :meth:`SqlStore._chain_meta`).

Migrations. A dialect lists its steps (:func:`migration_steps`, named by :data:`MIGRATION_NAMES` so
every database records the same ``schema_migrations`` rows); :meth:`SqlStore._migrate` runs
the missing ones, each in its own (nested) transaction and audited, then the backfills run
once each, remembered by a ``_meta`` flag.

Records are parsed once and cached per id with a token that proves the row unchanged (the
whole row, or the dialect's ``version_column``).
"""

from __future__ import annotations

import abc
import builtins
import contextlib
import functools
import json
import operator
import os
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

import attrs

from swarmmem.adapters.storage.base import BATCH_SIZE, StoreBase
from swarmmem.adapters.storage.sql_rows import (
    EVENT_COLUMNS,
    ITEM_COLUMNS,
    RECALL_USAGE_COLUMNS,
    REWARD_COLUMNS,
    event_from_row,
    item_params,
    outcome_event_from_row,
    recall_usage_from_row,
    recall_usage_params,
    record_from_columns,
    report_values,
    reward_event_from_row,
    reward_event_params,
    text_terms_of,
)
from swarmmem.core.model.audit import (
    CHAIN_HEAD_KEY,
    GENESIS,
    KEY_MARKER_KEY,
    chain_rows,
    event_row_hash,
    key_marker,
    read_key_marker,
    verify_event_chain,
)
from swarmmem.core.model.codec import (
    outcome_event_to_dict,
    proposal_from_dict,
    proposal_to_dict,
    recall_usage_to_dict,
)
from swarmmem.core.model.errors import ConflictError, MemoryValidationError, StorageError
from swarmmem.core.model.events import OutcomeEvent, RecallUsage, RewardEvent
from swarmmem.core.model.ids import iso_to_ms, stable_scope_key
from swarmmem.core.model.records import MemoryProposal, MemoryRecord
from swarmmem.core.model.semantics import (
    MAX_RELATIONS_PER_MEMORY,
    ListFilter,
    StoredRow,
    dumps,
    materialize,
    merge_pairs,
    passes_parsed_expiry,
    relation_created_at,
    scrub_outcome,
    scrub_proposal,
    scrub_usage,
    stored_form,
    stored_row,
)
from swarmmem.ports.clock import Clock, SystemClock
from swarmmem.ports.storage import Candidates, RecordKey, StoredEvent

CACHE_LIMIT = 50_000
#: the positions of ``reason`` and ``event_json`` in a ``memory_events`` row (often None)
_EVENT_NULLABLE = (3, 5)
F = TypeVar("F", bound=Callable[..., Any])
#: what an item row holds after a write: model version, ``valid_from``, ``supersedes_reason``
Written = tuple[str, str | None, str | None]
R = TypeVar("R")

MIGRATION_NAMES: dict[int, str] = {
    1: "create_memory_provider_tables",
    # 2 is SQLite's marker row of the one-time legacy JSONL import
    3: "create_memory_fts5_shadow_index",
    4: "create_meta_table",
    5: "create_recall_usage_timestamp_index",
    6: "create_embedding_config_table",
    7: "add_recall_learning_columns",
    8: "add_recall_reward_idempotency_key",
    9: "add_reward_events_and_recall_run_id",
    10: "add_recall_usage_unit_id",
    11: "create_memory_outcomes",
    12: "add_memory_provenance_columns",
    13: "add_memory_events_prev_hash",
    14: "create_memory_relations",
    15: "add_memory_report_columns",
    16: "create_stemmed_full_text_index",
    17: "separate_audit_chains_and_full_text_totals",
    18: "add_memory_text_terms",
}
#: v18: the stemmed terms of each memory's text (:func:`~.sql_rows.text_terms`), and the rows
#: without them (an earlier release's writes) in a partial index, filled on the next open
TEXT_TERMS = (
    "ALTER TABLE memory_items ADD COLUMN {if_not_exists}text_terms TEXT",
    "CREATE INDEX IF NOT EXISTS idx_memory_items_terms_unset ON memory_items(id) "
    "WHERE text_terms IS NULL",
)


#: v14's merge relations table; ``{text}`` is the dialect's type of compared text columns
RELATIONS_TABLE = """CREATE TABLE IF NOT EXISTS memory_relations (
  source_id {text} NOT NULL, target_id {text} NOT NULL, proposal_id {text} NOT NULL,
  created_at {text} NOT NULL,
  PRIMARY KEY (source_id, target_id),
  FOREIGN KEY (source_id) REFERENCES memory_items(id) ON DELETE CASCADE,
  FOREIGN KEY (target_id) REFERENCES memory_items(id) ON DELETE CASCADE,
  FOREIGN KEY (proposal_id) REFERENCES memory_proposals(id))"""
#: v15: what the reports filter on (``q_value`` is ``MemoryRecord.q``, ``confidence`` the
#: record's), with their indexes; ``{real}`` is the dialect's 8-byte float type
REPORT_COLUMNS = (
    "ALTER TABLE memory_items ADD COLUMN {if_not_exists}q_value {real}",
    "ALTER TABLE memory_items ADD COLUMN {if_not_exists}confidence {real}",
    "CREATE INDEX IF NOT EXISTS idx_memory_items_report_q "
    "ON memory_items(scope_key, deleted, superseded_by, q_value)",
    "CREATE INDEX IF NOT EXISTS idx_memory_items_report_confidence "
    "ON memory_items(scope_key, deleted, superseded_by, confidence)",
    "CREATE INDEX IF NOT EXISTS idx_memory_items_report_unset "
    "ON memory_items(id) WHERE q_value IS NULL OR confidence IS NULL",
    "CREATE INDEX IF NOT EXISTS idx_memory_items_report_expiring "
    "ON memory_items(scope_key, superseded_by, deleted, updated_at DESC, id, expires_at) "
    "WHERE expires_at IS NOT NULL",
)
RELATIONS_INDEX = (
    "CREATE INDEX IF NOT EXISTS idx_memory_relations_source "
    "ON memory_relations(source_id, target_id)"
)


#: what writes and verification say of a chain that a configured key never sealed
UNADOPTED_KEY = (
    "an audit key is configured but this store's audit chain carries no keyed marker: it was "
    "never adopted, or the marker was removed (a downgrade). If the history is yours, run "
    "`swarmmem audit-key adopt` to key it from now on"
)


class Migration(NamedTuple):
    """One schema step: recorded as (``version``, ``name``) once its statements ran."""

    version: int
    name: str
    statements: tuple[str, ...]


def migration_steps(statements: Mapping[int, tuple[str, ...]]) -> tuple[Migration, ...]:
    """A dialect's steps (every version of :data:`MIGRATION_NAMES`), in version order."""
    if set(statements) != set(MIGRATION_NAMES):
        raise ValueError("a dialect must define every migration version")
    return tuple(Migration(v, MIGRATION_NAMES[v], statements[v]) for v in sorted(statements))


class Touched(NamedTuple):
    """What a transaction changed: these memories, the item rows at all, or everything."""

    ids: frozenset[str] = frozenset()
    items: bool = False
    everything: bool = False


def held_text_terms(
    terms: Mapping[str, str | None], ids: Iterable[str]
) -> dict[str, frozenset[str]] | None:
    """Per id, its stored stemmed text terms as a set (``None`` when a row has none: written
    by an older writer, its text is stemmed at recall instead)."""
    held = {}
    for memory_id in ids:
        stored = terms.get(memory_id)
        if stored is None:
            return None
        held[memory_id] = frozenset(stored.split())
    return held


class FullTextHits(NamedTuple):
    """A full-text pre-selection: scoped ids in list order (every one, or at least every
    ranked one; empty only when nothing is in scope), the best matches first, and the row
    versions read with them (for the record cache)."""

    scoped: builtins.list[str]
    ranked: builtins.list[str]
    versions: dict[str, Any]
    #: ``-bm25()`` of each ranked id (higher is better); empty when the rank has no score
    scores: dict[str, float] | None = None
    #: the stored ``text_terms`` of each ranked id, when the search read them already
    terms: dict[str, str | None] | None = None


#: the SQL order of each ``ListFilter.order``
ITEM_ORDERS = {
    "updated": "updated_at DESC, id ASC",
    "q_desc": "q_value DESC, id ASC",
    "q_asc": "q_value ASC, id ASC",
}


class ItemQuery(NamedTuple):
    """A list query: ``columns`` of the items in ``scope_keys`` (any when None) that match
    every ``where`` condition (with ``params``), in ``order`` (newest first by default), at
    most ``limit``."""

    columns: str
    scope_keys: Sequence[str] | None
    where: builtins.list[str]
    params: builtins.list[Any]
    limit: int | None
    order: str = ITEM_ORDERS["updated"]


class SqlDialect(abc.ABC):
    """The SQL text that differs between databases (one subclass per database)."""

    #: how the driver marks a parameter (SQL here is written with ``?``)
    placeholder = "?"
    #: the column that orders rows by insertion
    order_column: str
    #: a column that changes on every write of an item row (else the whole row is compared)
    version_column: str | None = None
    #: ids of item rows whose JSON does not even parse (``None``: the type guarantees it does)
    damaged_items_sql: str | None = None
    #: the driver binds ``None`` slowly (Python's sqlite3 modules look for an adapter of it,
    #: raising and clearing an AttributeError for every value), so bulk inserts write a
    #: column that is ``None`` in every row of the batch as the ``NULL`` literal instead
    slow_null_binding = False

    def sql(self, statement: str) -> str:
        """``statement`` with this driver's placeholders."""
        return statement if self.placeholder == "?" else _rewrite(statement, self.placeholder)

    @abc.abstractmethod
    def begin(self) -> builtins.list[tuple[str, tuple[Any, ...]]]:
        """The statements that open the outermost transaction and take the write lock."""

    def unindexed(self, column: str) -> str:
        """``column`` written so that the planner does not pick an index for it."""
        return column

    @abc.abstractmethod
    def one_of(self, column: str, values: Sequence[str]) -> tuple[str, builtins.list[Any]]:
        """A condition ``column`` in a short list of ``values``, with its parameters."""

    @abc.abstractmethod
    def any_of(self, column: str) -> str:
        """A condition ``column`` in a list of any length passed as one parameter."""

    @abc.abstractmethod
    def array(self, values: Sequence[str]) -> Any:
        """The one parameter of :meth:`any_of`."""

    def select_items(self, q: ItemQuery) -> tuple[str, builtins.list[Any]]:
        """The list query of ``q``: one statement with its parameters."""
        where, params = q.where, q.params
        if q.scope_keys is not None:
            clause, values = self.one_of("scope_key", q.scope_keys)
            where, params = [clause, *where], [*values, *params]
        statement = f"SELECT {q.columns} FROM memory_items"
        if where:
            statement += " WHERE " + " AND ".join(where)
        statement += f" ORDER BY {q.order}"
        if q.limit is not None:
            statement += " LIMIT ?"
            params = [*params, q.limit]
        return statement, params


@functools.lru_cache(maxsize=512)
def _rewrite(statement: str, placeholder: str) -> str:
    return statement.replace("?", placeholder)


def shared_nulls(
    rows: Sequence[Sequence[Any]], nullable: Sequence[int]
) -> tuple[tuple[int, ...], Sequence[Sequence[Any]]]:
    """The positions among ``nullable`` whose value is ``None`` in every one of ``rows``, and
    the rows without the values at those positions (the rows themselves when there is none)."""
    if not rows:
        return (), rows
    nulls = tuple(at for at in nullable if all(row[at] is None for row in rows))
    if not nulls:
        return (), rows
    kept = [at for at in range(len(rows[0])) if at not in nulls]
    if len(kept) == 1:
        return nulls, [(row[kept[0]],) for row in rows]
    pick = operator.itemgetter(*kept)
    return nulls, [pick(row) for row in rows]


@functools.lru_cache(maxsize=64)
def values_list(width: int, nulls: tuple[int, ...] = ()) -> str:
    """``?, ?, NULL, ?`` for rows of ``width`` values, ``NULL`` at the positions ``nulls``."""
    return ", ".join("NULL" if at in nulls else "?" for at in range(width))


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


def uuid4_strings(count: int) -> builtins.list[str]:
    """``count`` random version-4 UUIDs as ``str(uuid.uuid4())`` writes them (one read of the
    system's random source for all of them)."""
    raw = bytearray(os.urandom(16 * count))
    for at in range(0, 16 * count, 16):
        raw[at + 6] = raw[at + 6] & 0x0F | 0x40  # version 4
        raw[at + 8] = raw[at + 8] & 0x3F | 0x80  # RFC 4122 variant
    h = raw.hex()
    return [
        f"{h[at : at + 8]}-{h[at + 8 : at + 12]}-{h[at + 12 : at + 16]}-"
        f"{h[at + 16 : at + 20]}-{h[at + 20 : at + 32]}"
        for at in range(0, 32 * count, 32)
    ]


def guarded(method: F) -> F:
    """Translate driver errors raised by a store method into StorageError."""

    @functools.wraps(method)
    def wrapper(self: SqlStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except self.driver_errors as exc:
            raise self._translate(exc) from self._cause(exc)

    return wrapper  # type: ignore[return-value]


class SqlStore(StoreBase):
    """A :class:`~swarmmem.ports.storage.StorageProvider` over SQL (see the module docstring)."""

    dialect: SqlDialect
    migrations: tuple[Migration, ...]
    driver_errors: tuple[type[BaseException], ...]

    def __init__(self, *, clock: Clock | None, embedding_model_version: str | None) -> None:
        self.embedding_model_version = embedding_model_version
        self.load_report: builtins.list[dict[str, Any]] = []
        self.migration_report: dict[str, Any] | None = None
        self.fts_disabled_reason: str | None = None
        self._clock = clock or SystemClock()
        self._state = self._new_state()
        self._lock = threading.RLock()
        self._cache: dict[str, tuple[Any, MemoryRecord]] = {}
        self._reported_ids: set[str] = set()
        self._fts_enabled = True
        self._chain_active = False
        self._audit_key: bytes | None = None
        self._key_marker: str | None = None
        #: this process created the store (its first migration ran here): a configured key
        #: may seal the chain at once, there is no earlier history to adopt
        self._created_here = False
        self._closed = False

    # -- what a database supplies ------------------------------------------------------------

    def _new_state(self) -> TxState:
        return TxState()

    @abc.abstractmethod
    def _acquire(self) -> Any:
        """A connection for one transaction or read (raises StorageError when closed)."""

    def _release(self, conn: Any) -> None:
        """Give back what :meth:`_acquire` returned."""

    def _shutdown(self) -> None:
        """Close connections (for :meth:`close`)."""

    @property
    @abc.abstractmethod
    def _location(self) -> str:
        """Where the rows live, for messages and ``load_report``."""

    @abc.abstractmethod
    def _translate(self, exc: BaseException) -> StorageError:
        """A driver error as StorageError (with nothing secret in its message)."""

    def _cause(self, exc: BaseException) -> BaseException | None:
        """The cause to chain to a translated driver error."""
        return exc

    @abc.abstractmethod
    def _table_exists(self, conn: Any, table: str) -> bool: ...

    @abc.abstractmethod
    def _has_column(self, conn: Any, table: str, column: str) -> bool: ...

    @abc.abstractmethod
    def _backfill_recall_run_ids(self, conn: Any) -> None:
        """``memory_recall_usage.run_id`` from the usage JSON (rows of older writers)."""

    @abc.abstractmethod
    def _backfill_provenance(self, conn: Any) -> None:
        """``memory_items.valid_from`` from the record's ``createdAt``, else ``updatedAt``."""

    @abc.abstractmethod
    def _write_item(
        self, conn: Any, row: StoredRow, params: tuple[Any, ...]
    ) -> tuple[str | None, str | None]:
        """Upsert the item row (``params`` in ``ITEM_WRITE_COLUMNS`` order) and its full-text
        entry; returns the stored ``valid_from`` and ``supersedes_reason``."""

    @abc.abstractmethod
    def _erase_item(self, conn: Any, memory_id: str) -> None:
        """Delete the item row and its full-text entry."""

    @abc.abstractmethod
    def _full_text(
        self, conn: Any, flt: ListFilter, fts_query: str, limit: int, *, stemmed: bool = False
    ) -> FullTextHits | None:
        """Scoped full-text matches, best first, at most ``limit``; ``None`` when full text
        failed (it is then off for this store, with ``fts_disabled_reason``). ``stemmed``
        searches the ``porter unicode61`` index."""

    def _purge_full_text(self, conn: Any) -> None:
        """Drop what the full-text index still holds of erased rows (inside the purge)."""

    def _after_purge(self) -> None:
        """Make a committed purge final on disk (e.g. empty the write-ahead log)."""

    def _sync(self) -> None:
        """Catch up with other writers before a read outside a transaction (caches)."""

    def _before_commit(self, conn: Any, state: TxState) -> None:
        """Write what the transaction kept in memory: the chain head."""
        if state.head_dirty:
            self._set_chain_meta(conn, CHAIN_HEAD_KEY, state.head)
            state.head_dirty = False

    def _invalidate(self, touched: Touched) -> None:
        """Drop cached records the ended transaction (or another writer) changed."""
        with self._lock:
            if touched.everything:
                self._cache.clear()
            for memory_id in touched.ids:
                self._cache.pop(memory_id, None)

    # -- connections and transactions --------------------------------------------------------

    def _execute(self, conn: Any, statement: str, params: Sequence[Any] = ()) -> Any:
        return conn.execute(self.dialect.sql(statement), params)

    def _executemany(self, conn: Any, statement: str, rows: Sequence[Sequence[Any]]) -> None:
        cursor = conn.cursor()
        try:
            cursor.executemany(self.dialect.sql(statement), rows)
        finally:
            cursor.close()

    def _insert_many(
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
        self._executemany(conn, f"{head} VALUES ({values_list(width, nulls)}){tail}", rows)

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError(f"the {self.name} store {self._location} is closed")

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except self.driver_errors as exc:
            raise self._translate(exc) from self._cause(exc)

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        """The thread's transaction connection, else one acquired for this read."""
        self._check_open()
        if self._state.conn is not None:
            yield self._state.conn
            return
        self._sync()
        conn = self._acquire()
        try:
            yield conn
        finally:
            self._release(conn)

    def _tx_conn(self) -> Any:
        conn = self._state.conn
        assert conn is not None, "must run inside transaction()"
        return conn

    def _touch(
        self, ids: Iterable[str] = (), *, items: bool = False, everything: bool = False
    ) -> None:
        state = self._state
        state.ids.update(ids)
        state.items = state.items or items
        state.everything = state.everything or everything

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All-or-nothing; the outermost block takes the write lock, inner ones are savepoints."""
        state = self._state
        if state.conn is not None:
            with self._savepoint(state):
                yield
            return
        self._check_open()
        if self.read_only:
            where = getattr(self, "path", self.name)
            raise StorageError(
                f"the memory store {where} is read-only here: reading works, writing does not"
            )
        with self._guard():
            conn = self._acquire()
        state.conn = conn
        state.reset()
        purged = False
        try:
            for statement, params in self.dialect.begin():
                self._execute(conn, statement, params)
            yield
            self._before_commit(conn, state)
            conn.execute("COMMIT")
            purged = state.purged
        except BaseException as exc:
            with contextlib.suppress(Exception):
                conn.execute("ROLLBACK")
            if isinstance(exc, self.driver_errors):
                raise self._translate(exc) from self._cause(exc)
            raise
        finally:
            touched = state.touched()
            state.conn = None
            state.depth = 0
            state.reset()
            self._release(conn)
            self._invalidate(touched)
        if purged:
            with self._guard():
                self._after_purge()

    @contextlib.contextmanager
    def _savepoint(self, state: TxState) -> Iterator[None]:
        conn, depth, mark = state.conn, state.depth, state.mark()
        name = f"swarmmem_sp{depth}"
        with self._guard():
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
                raise self._translate(exc) from self._cause(exc)
            raise
        state.depth = depth
        with self._guard():
            conn.execute(f"RELEASE {name}")

    def close(self) -> None:
        """Close the connections (idempotent); later calls raise StorageError."""
        self._closed = True
        self._shutdown()
        with self._lock:
            self._cache.clear()

    # -- opening: migrations and backfills ---------------------------------------------------

    def _get_meta(self, conn: Any, key: str) -> str | None:
        row = self._execute(conn, "SELECT value FROM _meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, conn: Any, key: str, value: str) -> None:
        self._execute(
            conn,
            "INSERT INTO _meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def _chain_meta(self, conn: Any, key: str) -> str | None:
        """The audit chain's head (``CHAIN_HEAD_KEY``) or key marker (``KEY_MARKER_KEY``)."""
        return self._get_meta(conn, key)

    def _set_chain_meta(self, conn: Any, key: str, value: str | None) -> None:
        """Store the chain's head or key marker (``None`` removes it)."""
        if value is None:
            self._execute(conn, "DELETE FROM _meta WHERE key = ?", (key,))
        else:
            self._set_meta(conn, key, value)

    def _chain_rows_where(self, conn: Any) -> str:
        """The ``WHERE`` clause selecting this store's audit chain among ``memory_events``
        (empty: every row is one chain)."""
        return ""

    def _current_version(self, conn: Any) -> int:
        if not self._table_exists(conn, "schema_migrations"):
            return 0
        row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
        return int(row[0])

    def _backfills(self) -> tuple[tuple[str, Callable[[Any], None]], ...]:
        """The one-time data steps after the migrations, in order: (``_meta`` flag, step)."""
        return (
            ("scope_key_backfilled", self._backfill_scope_keys),
            ("recall_run_id_backfilled", self._backfill_recall_run_ids),
            ("provenance_columns_backfilled", self._backfill_provenance),
            ("event_hash_chain_backfilled", self._backfill_event_chain),
            ("report_columns_backfilled", self._backfill_report_columns),
            ("text_terms_backfilled", self._backfill_text_terms),
        )

    def _current_known(self, conn: Any) -> int:
        """The schema version of the store, refused when a newer release wrote it.

        Raises:
            StorageError: the schema is newer than this release's last migration.
        """
        current = self._current_version(conn)
        latest = self.migrations[-1].version
        if current > latest:
            raise StorageError(
                f"this store's schema is v{current}, newer than the v{latest} this release of "
                "swarmmem knows: upgrade swarmmem to open it"
            )
        return current

    def _needs_upgrade(self, conn: Any) -> bool:
        """A migration is missing or a backfill has not run."""
        if self._current_known(conn) < self.migrations[-1].version:
            return True
        return any(self._get_meta(conn, key) != "1" for key, _ in self._backfills())

    def _refresh_chain_state(self) -> None:
        with self._connection() as conn:
            has_meta = self._table_exists(conn, "_meta")
            self._chain_active = (
                self._has_column(conn, "memory_events", "prev_hash")
                and has_meta
                and self._get_meta(conn, "event_hash_chain_backfilled") == "1"
            )
            self._key_marker = self._chain_meta(conn, KEY_MARKER_KEY) if has_meta else None

    def enable_audit_key(self, key: bytes) -> None:
        """Hash audit rows with HMAC-SHA256 under ``key`` from now on (see
        :mod:`swarmmem.core.model.audit`); opening never writes for it.

        A chain with a sealed key marker must bring that key. A store this process has just
        created is sealed at once. An existing chain without a marker is not keyed behind
        the owner's back (a marker deleted by someone without the key would otherwise be
        re-sealed over a downgraded history): it must be adopted explicitly
        (:meth:`adopt_audit_key`, ``swarmmem audit-key adopt``); until then writes are
        refused and verification fails.

        Raises:
            StorageError: the store was keyed with another key.
        """
        if not key:
            raise StorageError("the audit key is empty")
        if self._key_marker is not None:
            if read_key_marker(self._key_marker, key) is None:
                raise StorageError(
                    "the audit key does not match the key this store's audit chain was sealed "
                    "with (check SWARMMEM_AUDIT_KEY or memory.audit.keyFile)"
                )
            self._audit_key = key
            return
        self._audit_key = key
        if self._created_here and not self.read_only and self._chain_active:
            self._seal_audit_key("keyed audit chain started")

    def adopt_audit_key(self) -> dict[str, Any]:
        """Key an existing unkeyed chain from now on with the configured key: the current
        rows are sealed as the unkeyed part (they must verify first), and the adoption is an
        audit event of its own. Returns ``{adopted, keyedFrom, legacyRows}``.

        Raises:
            StorageError: no key is configured, the chain is already keyed, or it does not
                verify (nothing is sealed over a broken history).
        """
        if self._audit_key is None:
            raise StorageError(
                "no audit key is configured: set SWARMMEM_AUDIT_KEY or memory.audit.keyFile first"
            )
        if self._key_marker is not None:
            raise StorageError("this store's audit chain is already keyed")
        if not self._chain_active:
            raise StorageError("this store keeps no hash-chained audit log to key")
        with self._connection() as conn:
            rows = self._event_rows(conn)
            head = self._chain_meta(conn, CHAIN_HEAD_KEY)
        report = verify_event_chain(rows, head)
        if not report["verified"]:
            detail = (report.get("divergence") or {}).get("detail", "the head does not match")
            raise StorageError(f"the audit chain does not verify, so it is not adopted: {detail}")
        return self._seal_audit_key("keyed audit chain adopted")

    def _seal_audit_key(self, reason: str) -> dict[str, Any]:
        """Seal the key marker over the current rows and log the keying (the log row is the
        first keyed one)."""
        assert self._audit_key is not None
        with self.transaction():
            conn = self._tx_conn()
            rows = self._event_rows(conn)
            legacy = next((i for i, row in enumerate(rows) if row[6] is not None), len(rows))
            self._key_marker = key_marker(len(rows), legacy, self._audit_key)
            self._set_chain_meta(conn, KEY_MARKER_KEY, self._key_marker)
            self._log("audit_key", "memory_events", reason, {"keyedFrom": len(rows)})
        return {"adopted": True, "keyedFrom": len(rows), "legacyRows": legacy}

    def _migrate(self) -> None:
        """Run the missing migration steps, each in its own transaction and audited."""
        self._refresh_chain_state()
        with self._connection() as conn:
            current = self._current_known(conn)
            if current >= self.migrations[-1].version:
                return
        self._created_here = current == 0
        for step in self.migrations:
            with self.transaction():
                conn = self._tx_conn()
                if step.version <= self._current_version(conn):
                    continue
                for statement in step.statements:
                    conn.execute(statement)
                self._execute(
                    conn,
                    "INSERT INTO schema_migrations (version, name) VALUES (?, ?)",
                    (step.version, step.name),
                )
                self._log("migration", str(step.version), step.name)

    def _run_backfills(self) -> None:
        """Run each backfill not yet flagged done in ``_meta``, once, in its own transaction."""
        for key, step in self._backfills():
            with self._connection() as conn:
                if self._get_meta(conn, key) == "1":
                    continue
            with self.transaction():
                conn = self._tx_conn()
                if self._get_meta(conn, key) == "1":
                    continue
                step(conn)
                self._set_meta(conn, key, "1")
        self._refresh_chain_state()

    def _backfill_scope_keys(self, conn: Any) -> None:
        """Recompute ``scope_key`` from each record's scope (rows of older writers)."""
        rows = conn.execute("SELECT id, scope_key, record_json FROM memory_items").fetchall()
        for memory_id, scope_key, record_json in rows:
            try:
                key = stable_scope_key(json.loads(record_json).get("scope"))
            except (ValueError, TypeError, KeyError, AttributeError):
                continue
            if key != scope_key:
                self._execute(
                    conn, "UPDATE memory_items SET scope_key = ? WHERE id = ?", (key, memory_id)
                )

    def _backfill_report_columns(self, conn: Any) -> None:
        """``q_value`` and ``confidence`` of rows that lack them (written before v15, or by
        a writer that does not know them; also run on every open, through a partial index)."""
        rows = self._execute(
            conn,
            "SELECT id, record_json FROM memory_items WHERE q_value IS NULL OR confidence IS NULL",
        ).fetchall()
        updates = []
        for memory_id, record_json in rows:
            values = report_values(record_json)
            if values is not None:
                updates.append((*values, memory_id))
        if updates:
            self._executemany(
                conn, "UPDATE memory_items SET q_value = ?, confidence = ? WHERE id = ?", updates
            )
            self._touch(everything=True)

    def _backfill_text_terms(self, conn: Any) -> None:
        """``text_terms`` of rows written before v18 (or by a writer that does not know it)."""
        rows = conn.execute(
            "SELECT id, record_json FROM memory_items WHERE text_terms IS NULL"
        ).fetchall()
        updates = [(text_terms_of(record_json), memory_id) for memory_id, record_json in rows]
        if updates:
            self._executemany(conn, "UPDATE memory_items SET text_terms = ? WHERE id = ?", updates)

    def _fill_derived_columns(self) -> None:
        """Run :meth:`_backfill_report_columns` and :meth:`_backfill_text_terms` when a row
        lacks what they write (rows of an earlier release; each check reads a partial index)."""
        with self._connection() as conn:
            report = self._execute(
                conn,
                "SELECT 1 FROM memory_items WHERE q_value IS NULL OR confidence IS NULL LIMIT 1",
            ).fetchone()
            terms = self._execute(
                conn, "SELECT 1 FROM memory_items WHERE text_terms IS NULL LIMIT 1"
            ).fetchone()
        if self.read_only or (report is None and terms is None):
            return
        with self.transaction():
            if report is not None:
                self._backfill_report_columns(self._tx_conn())
            if terms is not None:
                self._backfill_text_terms(self._tx_conn())

    def _backfill_event_chain(self, conn: Any) -> None:
        """Chain the existing events in insertion order and start chaining new ones.

        Rows that are already chained are never chained again: a store whose flag went
        missing while chained rows exist only resumes (what was edited stays detectable).
        """
        order = self.dialect.order_column
        where = self._chain_rows_where(conn)
        chained = conn.execute(
            f"SELECT COUNT(*) FROM memory_events {where or 'WHERE TRUE'} AND prev_hash IS NOT NULL"
        ).fetchone()[0]
        if chained:
            self._chain_active = True
            self._log(
                "migration",
                "13",
                "event hash chain resumed",
                {"detail": f"{chained} chained row(s) found; nothing was re-chained"},
            )
            return
        rows = conn.execute(
            f"SELECT {order}, id, operation, target_id, reason, timestamp, event_json "
            f"FROM memory_events {where} ORDER BY {order} ASC"
        ).fetchall()
        previous = GENESIS
        for position, event_id, operation, target_id, reason, timestamp, event_json in rows:
            self._execute(
                conn,
                f"UPDATE memory_events SET prev_hash = ? WHERE {order} = ?",
                (previous, position),
            )
            previous = event_row_hash(
                event_id, operation, target_id, reason, timestamp, event_json, previous
            )
        if rows:
            self._set_chain_head(previous)
        self._chain_active = True
        self._log(
            "migration",
            "13",
            "backfill_event_hash_chain",
            {"detail": f"{len(rows)} memory_events row(s) chained deterministically"},
        )

    def _replay_relations(self) -> None:
        """Rebuild merge relations missing on disk from the applied merge proposals."""
        with self._connection() as conn:
            proposals = []
            for (proposal_json,) in conn.execute(
                "SELECT proposal_json FROM memory_proposals WHERE status = 'applied' "
                "ORDER BY created_at ASC, id ASC"
            ).fetchall():
                try:
                    proposal = proposal_from_dict(json.loads(proposal_json))
                except (ValueError, MemoryValidationError):
                    continue
                if proposal.operation == "merge":
                    proposals.append(proposal)
            missing = any(
                self._execute(
                    conn,
                    "SELECT 1 FROM memory_relations WHERE source_id = ? AND target_id = ?",
                    pair,
                ).fetchone()
                is None
                for proposal in proposals
                for pair in merge_pairs(proposal)
            )
        if missing:
            with self.transaction():
                for proposal in proposals:
                    self._write_relations(self._tx_conn(), proposal)

    def _after_bulk_load(self, conn: Any) -> None:
        """Rebuild what rows written around the store's own writes left stale (a migration)."""
        self._touch(everything=True)

    # -- the audit chain ---------------------------------------------------------------------

    def _set_chain_head(self, head: str | None) -> None:
        """Replace the chain head (written to ``_meta`` at commit; ``None`` removes it)."""
        state = self._state
        state.head, state.head_loaded, state.head_dirty = head, True, True

    def _store_event(self, event: StoredEvent) -> None:
        self._store_events([event])

    def _store_events(self, events: Sequence[StoredEvent]) -> None:
        """:meth:`_store_event` for many events: the chain computed in one loop, the rows
        written with one ``executemany``."""
        self._store_event_rows(
            [(e.id, e.operation, e.target_id, e.reason, e.timestamp, e.event_json) for e in events]
        )

    def _store_event_rows(
        self, rows: Sequence[tuple[str, str, str, str | None, str, str | None]]
    ) -> None:
        """:meth:`_store_events` for rows ``(id, operation, target_id, reason, timestamp,
        event_json)``."""
        conn = self._tx_conn()
        if not self._chain_active:
            self._insert_many(
                conn,
                "INSERT INTO memory_events (id, operation, target_id, reason, timestamp, "
                "event_json)",
                rows,
                nullable=_EVENT_NULLABLE,
            )
            return
        state = self._state
        if not state.head_loaded:
            state.head, state.head_loaded = self._chain_meta(conn, CHAIN_HEAD_KEY), True
            self._key_marker = self._chain_meta(conn, KEY_MARKER_KEY)
        if self._key_marker is not None and self._audit_key is None:
            raise StorageError(
                "this store's audit chain is keyed: set SWARMMEM_AUDIT_KEY (or "
                "memory.audit.keyFile) to write to it"
            )
        if self._key_marker is None and self._audit_key is not None:
            raise StorageError(UNADOPTED_KEY)
        key = self._audit_key if self._key_marker is not None else None
        chained, head = chain_rows(rows, state.head or GENESIS, key)
        insert = f"INSERT INTO memory_events ({EVENT_COLUMNS})"
        self._insert_many(conn, insert, chained, nullable=_EVENT_NULLABLE)
        if chained:
            state.head, state.head_dirty = head, True

    def _event_rows(self, conn: Any) -> builtins.list[Any]:
        order = self.dialect.order_column
        rows: builtins.list[Any] = conn.execute(
            f"SELECT {EVENT_COLUMNS} FROM memory_events {self._chain_rows_where(conn)} "
            f"ORDER BY {order} ASC"
        ).fetchall()
        return rows

    @guarded
    def list_events(self) -> builtins.list[StoredEvent]:
        with self._connection() as conn:
            return [event_from_row(r) for r in self._event_rows(conn)]

    @guarded
    def verify_audit_chain(self) -> dict[str, Any]:
        """Walk ``memory_events`` in insertion order and check every ``prev_hash`` and the head.

        Returns ``{supported, totalRows, chainedRows, legacyRows, verified, headMatch,
        headStored}`` plus ``divergence: {rowId, detail}`` at the first broken link, or
        ``headExpected`` (the last row's hash) when the walk completed.
        """
        with self._connection() as conn:
            rows = self._event_rows(conn)
            state = self._state
            if state.conn is conn and state.head_dirty:
                head = state.head
            else:
                head = self._chain_meta(conn, CHAIN_HEAD_KEY)
            marker = self._chain_meta(conn, KEY_MARKER_KEY)
        report = verify_event_chain(rows, head, key=self._audit_key, marker=marker)
        if marker is None and self._audit_key is not None and report["chainedRows"]:
            # a key is configured but the chain was never keyed, or its marker was removed
            return {**report, "verified": False, "keyed": False, "keyError": UNADOPTED_KEY}
        return report

    # -- records -----------------------------------------------------------------------------

    @property
    def _item_columns(self) -> str:
        version = self.dialect.version_column
        return ITEM_COLUMNS if version is None else f"{ITEM_COLUMNS}, {version}"

    def _report(self, row_id: str, exc: BaseException) -> None:
        if row_id not in self._reported_ids:
            self._reported_ids.add(row_id)
            self.load_report.append(
                {"file": self._location, "line": None, "id": row_id, "error": str(exc)}
            )

    def _row_to_record(self, row: Sequence[Any]) -> MemoryRecord | None:
        """The record of an ``_item_columns`` row (cached), or None (reported) if invalid."""
        memory_id = row[0]
        token = tuple(row) if self.dialect.version_column is None else row[7]
        cached = self._cache.get(memory_id)
        if cached is not None and cached[0] == token:
            return cached[1]
        _id, record_json, source_task_id, _role, model_version, valid_from, reason = row[:7]
        try:
            record = record_from_columns(
                record_json, source_task_id, model_version, valid_from, reason
            )
        except (ValueError, TypeError, MemoryValidationError) as exc:
            self._report(memory_id, exc)
            return None
        with self._lock:
            if len(self._cache) >= CACHE_LIMIT:
                self._cache.clear()
            self._cache[memory_id] = (token, record)
        return record

    def _view_parts(
        self, conn: Any, ids: builtins.list[str]
    ) -> dict[str, tuple[tuple[str, ...], tuple[OutcomeEvent, ...]]]:
        """Per memory id: its related ids and outcome events (two batched queries)."""
        related: dict[str, builtins.list[str]] = {}
        for source, target in self._execute(
            conn,
            "SELECT source_id, target_id FROM memory_relations WHERE "
            f"{self.dialect.any_of('source_id')} ORDER BY source_id ASC, target_id ASC",
            (self.dialect.array(ids),),
        ):
            bucket = related.setdefault(source, [])
            if len(bucket) < MAX_RELATIONS_PER_MEMORY:
                bucket.append(target)
        outcomes: dict[str, builtins.list[OutcomeEvent]] = {}
        rows = self._execute(
            conn,
            "SELECT event_json, memory_id FROM memory_outcomes WHERE "
            f"{self.dialect.any_of('memory_id')} ORDER BY at ASC, id ASC",
            (self.dialect.array(ids),),
        )
        for event in _parsed(rows, outcome_event_from_row):
            outcomes.setdefault(event.memory_id, []).append(event)
        return {i: (tuple(related.get(i, ())), tuple(outcomes.get(i, ()))) for i in ids}

    def _views(self, conn: Any, records: Sequence[MemoryRecord]) -> builtins.list[MemoryRecord]:
        """``records`` with their relations and outcome views attached."""
        if not records:
            return []
        parts = self._view_parts(conn, sorted({r.id for r in records}))
        return [materialize(r, parts[r.id][1], parts[r.id][0]) for r in records]

    def _stored(self, conn: Any, memory_id: str) -> MemoryRecord | None:
        row = self._execute(
            conn, f"SELECT {self._item_columns} FROM memory_items WHERE id = ?", (memory_id,)
        ).fetchone()
        return None if row is None else self._row_to_record(row)

    def _records_by_id(
        self, conn: Any, ids: Sequence[str], versions: Mapping[str, Any]
    ) -> builtins.list[MemoryRecord]:
        """Records for ``ids`` in order (unknown or unreadable ids skipped); rows whose cached
        version is in ``versions`` are not read again."""
        found: dict[str, MemoryRecord] = {}
        stale = []
        with self._lock:
            for memory_id in ids:
                cached = self._cache.get(memory_id)
                if (
                    cached is not None
                    and memory_id in versions
                    and cached[0] == versions[memory_id]
                ):
                    found[memory_id] = cached[1]
                else:
                    stale.append(memory_id)
        if stale:
            rows = self._execute(
                conn,
                f"SELECT {self._item_columns} FROM memory_items WHERE {self.dialect.any_of('id')}",
                (self.dialect.array(stale),),
            ).fetchall()
            for record in map(self._row_to_record, rows):
                if record is not None:
                    found[record.id] = record
        return self._views(conn, [found[i] for i in ids if i in found])

    def _list_sql(self, flt: ListFilter, columns: str) -> tuple[str, builtins.list[Any]] | None:
        """The reference list query for ``flt`` selecting ``columns`` (None: nothing matches)."""
        found = self._list_where(flt)
        if found is None:
            return None
        where, params = found
        limit = None if flt.limit is None else max(flt.limit, 0)
        if flt.order not in ITEM_ORDERS:
            raise MemoryValidationError(f"unknown list order {flt.order!r}")
        query = ItemQuery(columns, flt.scope_keys, where, params, limit, ITEM_ORDERS[flt.order])
        return self.dialect.select_items(query)

    def _list_where(self, flt: ListFilter) -> tuple[builtins.list[str], builtins.list[Any]] | None:
        """The conditions of ``flt`` but its scope keys (None: nothing matches)."""
        if flt.scope_keys is not None and not flt.scope_keys:
            return None
        if flt.kinds is not None and not flt.kinds:
            return None
        if flt.ids is not None and not flt.ids:
            return None
        where: builtins.list[str] = []
        params: builtins.list[Any] = []
        if flt.kinds is not None:
            clause, values = self.dialect.one_of("kind", flt.kinds)
            where.append(clause)
            params.extend(values)
        if not flt.include_inactive:
            where.append("superseded_by IS NULL AND deleted = 0")
        if not flt.include_expired:
            where.append("(expires_at IS NULL OR expires_at > ?)")
            params.append(flt.now)
        if flt.ids is not None:
            where.append(self.dialect.any_of("id"))
            params.append(self.dialect.array(flt.ids))
        if flt.exclude_ids:
            where.append(f"NOT ({self.dialect.any_of('id')})")
            params.append(self.dialect.array(flt.exclude_ids))
        for column, wanted in (("deleted", flt.deleted), ("superseded_by", flt.superseded)):
            if wanted is not None and column == "deleted":
                where.append("deleted = 1" if wanted else "deleted = 0")
            elif wanted is not None:
                where.append("superseded_by IS NOT NULL" if wanted else "superseded_by IS NULL")
        for condition, value in (
            ("q_value > ?", flt.q_above),
            ("q_value < ?", flt.q_below),
            ("confidence < ?", flt.confidence_below),
        ):
            if value is not None:
                where.append(condition)
                params.append(value)
        if flt.has_expiry is not None:
            where.append("expires_at IS NOT NULL" if flt.has_expiry else "expires_at IS NULL")
        return where, params

    @guarded
    def count_where(self, flt: ListFilter) -> int:
        if flt.exclude_ids:  # all of them minus the excluded ones (read through the key)
            every = attrs.evolve(flt, exclude_ids=None)
            wanted = set(flt.exclude_ids) & set(flt.ids) if flt.ids is not None else None
            excluded = tuple(sorted(wanted)) if wanted is not None else flt.exclude_ids
            return self._count(every) - self._count(attrs.evolve(every, ids=excluded))
        return self._count(flt)

    def _count(self, flt: ListFilter) -> int:
        keys = None if flt.scope_keys is None else builtins.list(dict.fromkeys(flt.scope_keys))
        if keys is not None and len(keys) > 1:  # one scope at a time: each reads its index
            return sum(self._count(attrs.evolve(flt, scope_keys=(key,))) for key in keys)
        found = self._list_where(flt)
        if found is None:
            return 0
        where, params = found
        if flt.scope_keys is not None:
            # with a list of ids the ids lead the plan, not the scope's index
            column = "scope_key" if flt.ids is None else self.dialect.unindexed("scope_key")
            clause, values = self.dialect.one_of(column, flt.scope_keys)
            where, params = [clause, *where], [*values, *params]
        statement = "SELECT COUNT(*) FROM memory_items"
        if flt.include_expired:
            with self._connection() as conn:
                clause = " WHERE " + " AND ".join(where) if where else ""
                return int(self._execute(conn, statement + clause, params).fetchone()[0])
        # rows with an expiry are read (ids and expiry only) for the parsed expiry test
        now_ms = iso_to_ms(flt.now)
        no_expiry = " WHERE " + " AND ".join([*where, "expires_at IS NULL"])
        expiring = " WHERE " + " AND ".join([*where, "expires_at IS NOT NULL"])
        with self._connection() as conn:
            count = int(self._execute(conn, statement + no_expiry, params).fetchone()[0])
            rows = self._execute(
                conn, "SELECT expires_at FROM memory_items" + expiring, params
            ).fetchall()
        return count + sum(1 for (expires_at,) in rows if passes_parsed_expiry(expires_at, now_ms))

    @guarded
    def list_keys(self, flt: ListFilter) -> builtins.list[RecordKey]:
        query = self._list_sql(flt, "id, updated_at, expires_at, q_value, confidence")
        if query is None:
            return []
        with self._connection() as conn:
            rows = self._execute(conn, *query).fetchall()
        now_ms = None if flt.include_expired else iso_to_ms(flt.now)
        return [RecordKey(*row) for row in rows if passes_parsed_expiry(row[2], now_ms)]

    @guarded
    def get(self, memory_id: str) -> MemoryRecord | None:
        with self._connection() as conn:
            record = self._stored(conn, memory_id)
            return None if record is None else self._views(conn, [record])[0]

    @guarded
    def get_many(self, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        with self._connection() as conn:
            return {r.id: r for r in self._records_by_id(conn, memory_ids, {})}

    @guarded
    def list(self, flt: ListFilter) -> builtins.list[MemoryRecord]:
        self._check_open()
        query = self._list_sql(flt, self._item_columns)
        if query is None:
            return []
        with self._connection() as conn:
            rows = self._execute(conn, *query).fetchall()
            records = [r for r in map(self._row_to_record, rows) if r is not None]
            if not flt.include_expired:
                now_ms = iso_to_ms(flt.now)
                records = [r for r in records if passes_parsed_expiry(r.expires_at, now_ms)]
            return self._views(conn, records)

    def unreadable_rows(self) -> builtins.list[dict[str, Any]]:
        known = builtins.list(self.load_report)
        statement = self.dialect.damaged_items_sql
        if statement is None:
            return known
        seen = {row.get("id") for row in known}
        with self._guard(), self._connection() as conn:
            damaged = [r[0] for r in conn.execute(statement).fetchall() if r[0] not in seen]
        error = "record_json is not valid JSON"
        return known + [
            {"file": self._location, "line": None, "id": i, "error": error} for i in damaged
        ]

    @guarded
    def count(self) -> int:
        with self._connection() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM memory_items").fetchone()[0])

    @guarded
    def scope_counts(self) -> dict[str, int]:
        """Active (not deleted, not superseded) memories per scope key, without parsing rows."""
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT scope_key, COUNT(*) FROM memory_items "
                "WHERE superseded_by IS NULL AND deleted = 0 GROUP BY scope_key"
            ).fetchall()
        return {str(key): int(count) for key, count in rows}

    @guarded
    def iter_all_records(self) -> Iterator[MemoryRecord]:
        with self._connection() as conn:
            rows = conn.execute(
                f"SELECT {self._item_columns} FROM memory_items ORDER BY updated_at ASC, id ASC"
            ).fetchall()
        return self._iter_views(rows)

    def _iter_views(self, rows: Sequence[Sequence[Any]]) -> Iterator[MemoryRecord]:
        for start in range(0, len(rows), 500):
            batch = rows[start : start + 500]
            with self._guard(), self._connection() as conn:
                chunk = [r for r in map(self._row_to_record, batch) if r is not None]
                views = self._views(conn, chunk)
            yield from views

    def _preselect(
        self,
        flt: ListFilter,
        fts_query: str,
        *,
        limit: int,
        scope_when_unmatched: bool,
        stemmed: bool = False,
    ) -> Candidates | None:
        """Full-text pre-selection: only the chosen records are read (or taken from cache)."""
        if not self._fts_enabled:
            return None
        with self._guard(), self._connection() as conn:
            hits = self._full_text(conn, flt, fts_query, limit, stemmed=stemmed)
            if hits is None:
                return None
            if not hits.scoped:
                return Candidates(records=())
            if not hits.ranked:
                return None if scope_when_unmatched else Candidates(records=())
            order = {memory_id: position for position, memory_id in enumerate(hits.ranked)}
            chosen = [i for i in hits.scoped if i in order]
            records = self._records_by_id(conn, chosen, hits.versions)
            held = None
            if stemmed:
                terms = hits.terms
                if terms is None:
                    terms = self._stored_terms(conn, chosen)
                held = held_text_terms(terms, chosen)
        return Candidates(
            records=tuple(records), fts_order=order, fts_scores=hits.scores, held_terms=held
        )

    def _stored_terms(self, conn: Any, ids: builtins.list[str]) -> dict[str, str | None]:
        """The stored ``text_terms`` of ``ids``."""
        if not ids:
            return {}
        clause, params = self.dialect.one_of("id", ids)
        rows = self._execute(
            conn, f"SELECT id, text_terms FROM memory_items WHERE {clause}", params
        ).fetchall()
        return dict(rows)

    def _write_record(self, record: MemoryRecord) -> MemoryRecord:
        record = stored_form(record, None)
        return as_written(record, *self._write_row(self._tx_conn(), stored_row(record)))

    def _write_row(self, conn: Any, row: StoredRow) -> Written:
        """One item row and its full-text entry; what the row holds after the write."""
        model_version = self.embedding_model_version or row.embedding_model_version or ""
        valid_from, supersedes_reason = self._write_item(conn, row, item_params(row, model_version))
        self._touch((row.id,), items=True)
        return model_version, valid_from, supersedes_reason

    @guarded
    def upsert_many(
        self,
        records: Sequence[MemoryRecord],
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> builtins.list[MemoryRecord]:
        """Batches of ``BATCH_SIZE`` records: their rows (:meth:`_write_rows`), then their
        ``upsert`` events in one go (same order and chain as one ``upsert`` per record)."""
        records = builtins.list(records)
        for record in records:
            if not isinstance(record, MemoryRecord):
                raise MemoryValidationError(
                    f"upsert_many needs MemoryRecords; got {type(record).__name__}"
                )
        stored = [stored_form(record, None) for record in records]
        written = self._upsert_rows([stored_row(record) for record in stored], progress)
        return [as_written(record, *row) for record, row in zip(stored, written, strict=True)]

    @guarded
    def upsert_rows(
        self,
        rows: Sequence[StoredRow],
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        """:meth:`upsert_many` of rows already in their stored form (no record is built)."""
        self._upsert_rows(rows, progress)

    def _upsert_rows(
        self, rows: Sequence[StoredRow], progress: Callable[[int, int], None] | None
    ) -> builtins.list[Written]:
        written: builtins.list[Written] = []
        with self.transaction():
            conn = self._tx_conn()
            for start in range(0, len(rows), BATCH_SIZE):
                batch = rows[start : start + BATCH_SIZE]
                if len({row.id for row in batch}) == len(batch):
                    written.extend(self._write_rows(conn, batch))
                else:  # an id twice in one batch: the second write must see the first
                    written.extend(self._write_row(conn, row) for row in batch)
                now = self._now()
                self._store_event_rows(
                    [
                        (event_id, "upsert", row.id, None, now, None)
                        for event_id, row in zip(uuid4_strings(len(batch)), batch, strict=True)
                    ]
                )
                if progress is not None:
                    progress(start + len(batch), len(rows))
        return written

    def _write_rows(self, conn: Any, rows: Sequence[StoredRow]) -> builtins.list[Written]:
        """:meth:`_write_row` for rows with distinct ids (a database may batch it)."""
        return [self._write_row(conn, row) for row in rows]

    def _has_record(self, memory_id: str) -> bool:
        row = self._execute(
            self._tx_conn(), "SELECT 1 FROM memory_items WHERE id = ?", (memory_id,)
        ).fetchone()
        return row is not None

    def _stored_record(self, memory_id: str) -> MemoryRecord | None:
        return self._stored(self._tx_conn(), memory_id)

    def _erase_record(self, memory_id: str) -> None:
        conn = self._tx_conn()
        linked = [
            row[0]
            for row in self._execute(
                conn, "SELECT source_id FROM memory_relations WHERE target_id = ?", (memory_id,)
            ).fetchall()
        ]
        self._execute(conn, "DELETE FROM memory_outcomes WHERE memory_id = ?", (memory_id,))
        self._erase_item(conn, memory_id)  # its relations go with it (ON DELETE CASCADE)
        self._touch([memory_id, *linked], items=True)

    @guarded
    def related_ids(self, memory_id: str) -> builtins.list[str]:
        with self._connection() as conn:
            rows = self._execute(
                conn,
                "SELECT target_id FROM memory_relations WHERE source_id = ? "
                "ORDER BY target_id ASC LIMIT ?",
                (memory_id, MAX_RELATIONS_PER_MEMORY),
            ).fetchall()
        return [r[0] for r in rows]

    # -- proposals ---------------------------------------------------------------------------

    def _parse_proposal(self, proposal_id: str, proposal_json: str) -> MemoryProposal | None:
        try:
            return proposal_from_dict(json.loads(proposal_json))
        except (ValueError, TypeError, MemoryValidationError) as exc:
            self._report(proposal_id, exc)
            return None

    def _has_proposal(self, proposal_id: str) -> bool:
        row = self._execute(
            self._tx_conn(), "SELECT 1 FROM memory_proposals WHERE id = ?", (proposal_id,)
        ).fetchone()
        return row is not None

    def _write_proposal(self, proposal: MemoryProposal) -> None:
        conn = self._tx_conn()
        self._execute(
            conn,
            "INSERT INTO memory_proposals (id, status, created_at, proposal_json) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET status = excluded.status, "
            "created_at = excluded.created_at, proposal_json = excluded.proposal_json",
            (proposal.id, proposal.status, proposal.created_at, dumps(proposal_to_dict(proposal))),
        )
        self._write_relations(conn, proposal)

    def _write_relations(self, conn: Any, proposal: MemoryProposal) -> None:
        """The relation clique of an applied merge proposal, between records that exist."""
        pairs = merge_pairs(proposal)
        if not pairs:
            return
        created = relation_created_at(proposal)
        self._executemany(
            conn,
            "INSERT INTO memory_relations (source_id, target_id, proposal_id, created_at) "
            "SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memory_items WHERE id = ?) "
            "AND EXISTS (SELECT 1 FROM memory_items WHERE id = ?) "
            "ON CONFLICT (source_id, target_id) DO NOTHING",
            [(s, t, proposal.id, created, s, t) for s, t in pairs],
        )
        self._touch({i for pair in pairs for i in pair})

    @guarded
    def get_proposal(self, proposal_id: str) -> MemoryProposal | None:
        with self._connection() as conn:
            row = self._execute(
                conn, "SELECT proposal_json FROM memory_proposals WHERE id = ?", (proposal_id,)
            ).fetchone()
        return None if row is None else self._parse_proposal(proposal_id, row[0])

    @guarded
    def list_proposals(self, status: str | None = None) -> builtins.list[MemoryProposal]:
        select = "SELECT id, proposal_json FROM memory_proposals"
        statement, params = _where(select, "status", status)
        with self._connection() as conn:
            rows = self._execute(conn, statement + " ORDER BY created_at ASC, id ASC", params)
            parsed = [self._parse_proposal(pid, pjson) for pid, pjson in rows.fetchall()]
        return [p for p in parsed if p is not None]

    # -- purges ------------------------------------------------------------------------------

    def _scrub_rows(self, memory_id: str, texts: Sequence[str], now: str) -> dict[str, int]:
        conn = self._tx_conn()
        counts: dict[str, int] = {}
        # (count, rows as (json, ..., id), parse, scrub, JSON form, the UPDATE of a row's JSON)
        tables: tuple[
            tuple[str, str, Callable[[Any], Any], Callable[[Any], Any], Any, str], ...
        ] = (
            (
                "proposals",
                "SELECT proposal_json, id FROM memory_proposals",
                lambda row: proposal_from_dict(json.loads(row[0])),
                lambda proposal: scrub_proposal(proposal, memory_id, texts, now),
                proposal_to_dict,
                "UPDATE memory_proposals SET proposal_json = ? WHERE id = ?",
            ),
            (
                "outcomes",
                "SELECT event_json, id FROM memory_outcomes",
                outcome_event_from_row,
                lambda event: scrub_outcome(event, texts),
                outcome_event_to_dict,
                "UPDATE memory_outcomes SET event_json = ? WHERE id = ?",
            ),
            (
                "recallUsage",
                "SELECT timestamp, usage_json, id FROM memory_recall_usage",
                recall_usage_from_row,
                lambda usage: scrub_usage(usage, texts),
                recall_usage_to_dict,
                "UPDATE memory_recall_usage SET usage_json = ? WHERE id = ?",
            ),
        )
        for name, select, parse, scrub, to_json, update in tables:
            counts[name] = 0
            for row in self._execute(conn, select).fetchall():
                try:
                    clean = scrub(parse(row))
                except (ValueError, TypeError):  # a row that does not parse stays as it is
                    continue
                if clean is not None:
                    self._execute(conn, update, (dumps(to_json(clean)), row[-1]))
                    counts[name] += 1
        self._purge_full_text(conn)
        self._touch(everything=True)
        self._state.purged = True
        return counts

    # -- ledgers -----------------------------------------------------------------------------

    def _write_usage(self, usage: RecallUsage) -> None:
        self._execute(
            self._tx_conn(),
            f"INSERT INTO memory_recall_usage ({RECALL_USAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
            recall_usage_params(str(uuid.uuid4()), usage),
        )

    @guarded
    def list_recall_usage(
        self, *, run_id: str | None = None, since: str | None = None
    ) -> builtins.list[RecallUsage]:
        where, params = [], []
        if run_id is not None:
            where.append("run_id = ?")
            params.append(run_id)
        if since is not None:
            where.append("timestamp >= ?")
            params.append(since)
        statement = "SELECT timestamp, usage_json FROM memory_recall_usage"
        if where:
            statement += " WHERE " + " AND ".join(where)
        statement += f" ORDER BY timestamp ASC, {self.dialect.order_column} ASC"
        with self._connection() as conn:
            rows = self._execute(conn, statement, params).fetchall()
        return _parsed(rows, recall_usage_from_row)

    def _stored_outcome(self, event_id: str) -> OutcomeEvent | None:
        row = self._execute(
            self._tx_conn(), "SELECT event_json FROM memory_outcomes WHERE id = ?", (event_id,)
        ).fetchone()
        if row is None:
            return None
        try:
            return outcome_event_from_row(row)
        except ValueError as exc:  # an unreadable row still owns its id
            raise ConflictError(f"outcome event id {event_id} is taken by an invalid row") from exc

    def _write_outcome(self, event: OutcomeEvent) -> None:
        self._execute(
            self._tx_conn(),
            "INSERT INTO memory_outcomes (id, memory_id, generation, at, event_json) "
            "VALUES (?, ?, ?, ?, ?)",
            (
                event.id,
                event.memory_id,
                event.generation,
                event.outcome.at,
                dumps(outcome_event_to_dict(event)),
            ),
        )
        self._touch((event.memory_id,))

    @guarded
    def list_outcomes(self, memory_id: str | None = None) -> builtins.list[OutcomeEvent]:
        statement, params = _where("SELECT event_json FROM memory_outcomes", "memory_id", memory_id)
        with self._connection() as conn:
            rows = self._execute(conn, statement + " ORDER BY at ASC, id ASC", params).fetchall()
        return _parsed(rows, outcome_event_from_row)

    def _write_reward(self, event: RewardEvent) -> None:
        self._execute(
            self._tx_conn(),
            f"INSERT INTO memory_reward_events ({REWARD_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            reward_event_params(event),
        )

    @guarded
    def list_reward_events(self) -> builtins.list[RewardEvent]:
        with self._connection() as conn:
            rows = conn.execute(
                f"SELECT {REWARD_COLUMNS} FROM memory_reward_events "
                f"ORDER BY timestamp ASC, {self.dialect.order_column} ASC"
            ).fetchall()
        return _parsed(rows, reward_event_from_row)


def _where(statement: str, column: str, value: str | None) -> tuple[str, tuple[str, ...]]:
    """``statement`` limited to rows whose ``column`` is ``value`` (all rows when None)."""
    return (statement, ()) if value is None else (f"{statement} WHERE {column} = ?", (value,))


def _parsed(rows: Iterable[Sequence[Any]], parse: Callable[[Sequence[Any]], R]) -> builtins.list[R]:
    """``parse`` of every row, skipping rows that do not parse (ValueError)."""
    out = []
    for row in rows:
        with contextlib.suppress(ValueError):
            out.append(parse(row))
    return out


def as_written(
    record: MemoryRecord, model_version: str, valid_from: str | None, supersedes_reason: str | None
) -> MemoryRecord:
    """``record`` (a stored form) with what the item row holds after the write."""
    changes: dict[str, Any] = {}
    if valid_from != record.valid_from:
        changes["valid_from"] = valid_from
    if supersedes_reason != record.supersedes_reason:
        changes["supersedes_reason"] = supersedes_reason
    if (model_version or None) != record.embedding_model_version:
        changes["embedding_model_version"] = model_version or None
    return attrs.evolve(record, **changes) if changes else record

"""The ``postgres`` storage provider: one schema of a PostgreSQL server, shared by many hosts.

Layout. The tables, columns and migration versions mirror the SQLite provider (v1..v14,
recorded in ``schema_migrations`` under the same names; v2, the legacy JSONL import marker,
does not apply). PostgreSQL-only parts: every text column that is compared or sorted uses
``COLLATE "C"`` (byte order, as in SQLite); ``memory_items``, ``memory_events``,
``memory_recall_usage`` and ``memory_reward_events`` carry an identity column ``seq`` that
plays SQLite's ``rowid`` (insertion order; an upsert keeps it); ``memory_items.row_version``
changes on every write (a sequence value, never reused); migration v3 replaces the FTS5 table
with a ``tsvector`` column ``fts`` (GIN index), the token count ``fts_len`` and a one-row
``memory_fts_stats`` table (rows, tokens) that each transaction adjusts once, at commit.

Full text. ``fts`` is built here, not by a text-search configuration: the seven FTS5 columns
of a record (``fts_values``) are split the way FTS5's ``unicode61`` tokenizer splits (runs of
letters and digits, lower-cased, Latin diacritics removed), positions are numbered with a
one-position gap between columns (so a phrase never spans two columns) and the literal is
cast to ``tsvector``. A recall's FTS5 ``MATCH`` string (quoted terms joined by ``OR``) is
tokenized the same way and becomes a ``tsquery`` of the same phrases (``'a' <-> 'b'`` for a
multi-token term) joined by ``|``.

Rank. The default rank (``fts_rank="bm25"``) is FTS5's ``bm25()`` recomputed from the same
statistics: ``idf = ln((N - n + 0.5) / (n + 0.5))`` (``1e-6`` when not positive) per phrase,
with ``N`` the number of rows and ``n`` the rows containing the phrase (GIN counts over the
whole table, tombstones included, like FTS5), phrase frequencies from the ``tsvector``
positions, the row length in tokens and the average row length, ``k1 = 1.2``, ``b = 0.75``;
ties by ``seq``. It differs from SQLite only where a ``tsvector`` cannot hold what FTS5 holds:
a lexeme keeps at most 256 positions and positions stop at 16383, and tokens longer than
2046 bytes are left out (far beyond the 500-character durable texts). Measured with the
evaluator (``evaluate_fixtures``), every run of the bundled golden fixtures (105) and of the
reference ones (24) retrieves the same ids with the same scores as SQLite
(``tests/integration/test_postgres_store.py`` pins this). ``fts_rank="ts_rank_cd"`` ranks by
PostgreSQL's cover density instead (no IDF, no length normalisation): on the same fixtures
it keeps the pass counts (91/105, 15/24) and the retrieved ids, but 21 + 3 runs get other
scores because the full-text order bonus moves.

Concurrency. Every transaction takes ``pg_advisory_xact_lock`` on a key derived from the
schema name before its first statement, so writers of all hosts queue like SQLite's
``BEGIN IMMEDIATE`` writers: the audit chain head (``_meta``) is read and advanced by one
writer at a time and never forks, and no two writers can deadlock. Nested ``transaction()``
blocks are savepoints. Connections come from a ``psycopg_pool.ConnectionPool``; a thread
inside ``transaction()`` keeps its connection until the outermost block ends.

Caches (per store instance). ``records``: parsed rows keyed by id and validated by
``row_version`` on every read (a stale entry is never used, no invalidation needed).
``views`` (relations and outcome events per memory) and ``fts stats`` (row count, token
total, per-phrase document counts) are not self-validating: every committing transaction
that changes them sends ``NOTIFY`` on the schema's channel with the touched ids (or
``{"all": true}``), in the same transaction, so a notification exists exactly for committed
changes. Each instance ``LISTEN``\\ s on a dedicated connection and drains the queue before
every read that could use these caches; its own writes invalidate synchronously. A write on
another host becomes visible once its notification has arrived (sub-millisecond on one
machine); reads inside a transaction never use or fill them. If the listening connection
fails, both caches are dropped and the store runs uncached (``cache_info()`` says why).

Secrets. The DSN password is kept out of the pool's connection string and of every message:
``repr`` shows the DSN without it, and driver errors are scrubbed before they surface as
:class:`~swarmmem.core.model.errors.StorageError`.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import hashlib
import json
import logging
import math
import re
import threading
import unicodedata
import urllib.parse
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import attrs
import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool, PoolTimeout

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
from swarmmem.adapters.storage.sqlite import MIGRATIONS as SQLITE_MIGRATIONS
from swarmmem.adapters.storage.sqlite import fts_values
from swarmmem.core.model.audit import CHAIN_HEAD_KEY, GENESIS, event_row_hash, verify_event_chain
from swarmmem.core.model.codec import (
    proposal_from_dict,
    proposal_to_dict,
    record_to_dict,
)
from swarmmem.core.model.errors import (
    ConfigError,
    ConflictError,
    MemoryValidationError,
    NotFoundError,
    StorageError,
)
from swarmmem.core.model.ids import iso_to_ms, stable_scope_key, to_iso
from swarmmem.core.model.records import MemoryProposal, MemoryRecord
from swarmmem.ports.clock import Clock, SystemClock
from swarmmem.ports.storage import Candidates, ListFilter, StoredEvent

log = logging.getLogger("swarmmem.postgres")

DEFAULT_POOL_SIZE = 4
BM25_K1 = 1.2
BM25_B = 0.75
FTS_RANKS = ("bm25", "ts_rank_cd")
MAX_LEXEME_BYTES = 2046
MAX_POSITION = 16383
MAX_POSITIONS_PER_LEXEME = 256
MAX_NOTIFY_IDS = 200
_CACHE_LIMIT = 50_000
_SCHEMA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_TOKEN = re.compile(r"[^\W_]+")
_PHRASE = re.compile(r'"((?:[^"]|"")*)"')
_NAMES = {version: name for version, name, _ in SQLITE_MIGRATIONS}

F = TypeVar("F", bound=Callable[..., Any])

# --------------------------------------------------------------------------- migrations
# (version, statements); names come from the SQLite provider so both record the same rows.

_C = 'TEXT COLLATE "C"'
MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (
        1,
        (
            "CREATE SEQUENCE IF NOT EXISTS memory_items_row_version_seq",
            f"""CREATE TABLE IF NOT EXISTS memory_items (
  seq BIGINT GENERATED ALWAYS AS IDENTITY,
  id {_C} PRIMARY KEY, scope_key {_C} NOT NULL, kind {_C} NOT NULL,
  updated_at {_C} NOT NULL, expires_at {_C}, superseded_by {_C},
  deleted INTEGER NOT NULL DEFAULT 0, record_json TEXT NOT NULL,
  row_version BIGINT NOT NULL DEFAULT nextval('memory_items_row_version_seq'))""",
            "CREATE INDEX IF NOT EXISTS idx_memory_items_scope_kind "
            "ON memory_items(scope_key, kind)",
            "CREATE INDEX IF NOT EXISTS idx_memory_items_updated_at ON memory_items(updated_at)",
            f"""CREATE TABLE IF NOT EXISTS memory_proposals (
  id {_C} PRIMARY KEY, status {_C} NOT NULL, created_at {_C} NOT NULL,
  proposal_json TEXT NOT NULL)""",
            "CREATE INDEX IF NOT EXISTS idx_memory_proposals_status_created "
            "ON memory_proposals(status, created_at)",
            f"""CREATE TABLE IF NOT EXISTS memory_events (
  seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  id {_C} PRIMARY KEY, operation {_C} NOT NULL, target_id {_C} NOT NULL, reason TEXT,
  timestamp {_C} NOT NULL, event_json TEXT)""",
            f"""CREATE TABLE IF NOT EXISTS memory_recall_usage (
  seq BIGINT GENERATED ALWAYS AS IDENTITY,
  id {_C} PRIMARY KEY, bundle_id {_C} NOT NULL, timestamp {_C} NOT NULL,
  usage_json TEXT NOT NULL)""",
            "CREATE INDEX IF NOT EXISTS idx_memory_recall_usage_bundle "
            "ON memory_recall_usage(bundle_id)",
        ),
    ),
    (
        3,
        (
            "ALTER TABLE memory_items ADD COLUMN IF NOT EXISTS fts tsvector NOT NULL "
            "DEFAULT ''::tsvector",
            "ALTER TABLE memory_items ADD COLUMN IF NOT EXISTS fts_len INTEGER NOT NULL DEFAULT 0",
            "CREATE INDEX IF NOT EXISTS idx_memory_items_fts ON memory_items USING gin (fts)",
            """CREATE TABLE IF NOT EXISTS memory_fts_stats (
  id INTEGER PRIMARY KEY CHECK (id = 1), row_count BIGINT NOT NULL, token_count BIGINT NOT NULL)""",
            "INSERT INTO memory_fts_stats (id, row_count, token_count) SELECT 1, count(*), "
            "COALESCE(sum(fts_len), 0) FROM memory_items ON CONFLICT (id) DO NOTHING",
        ),
    ),
    (4, (f"CREATE TABLE IF NOT EXISTS _meta (key {_C} PRIMARY KEY, value TEXT NOT NULL)",)),
    (
        5,
        (
            "CREATE INDEX IF NOT EXISTS idx_memory_recall_usage_timestamp "
            "ON memory_recall_usage(timestamp DESC)",
        ),
    ),
    (6, (f"CREATE TABLE IF NOT EXISTS embedding_config (key {_C} PRIMARY KEY, value TEXT)",)),
    (
        7,
        (
            "ALTER TABLE memory_recall_usage ADD COLUMN IF NOT EXISTS q_value DOUBLE PRECISION "
            "DEFAULT 0.5",
            "ALTER TABLE memory_recall_usage ADD COLUMN IF NOT EXISTS last_reward DOUBLE PRECISION",
            "ALTER TABLE memory_recall_usage ADD COLUMN IF NOT EXISTS task_outcome TEXT",
            "ALTER TABLE memory_recall_usage ADD COLUMN IF NOT EXISTS council_verdict_json TEXT",
        ),
    ),
    (8, ("ALTER TABLE memory_recall_usage ADD COLUMN IF NOT EXISTS reward_key TEXT",)),
    (
        9,
        (
            f"""CREATE TABLE IF NOT EXISTS memory_reward_events (
  seq BIGINT GENERATED ALWAYS AS IDENTITY,
  id {_C} PRIMARY KEY, memory_id {_C} NOT NULL, run_id TEXT, unit_id TEXT,
  verdict TEXT NOT NULL, reward DOUBLE PRECISION NOT NULL, q_before DOUBLE PRECISION,
  q_after DOUBLE PRECISION, verdict_synthesis_json TEXT, timestamp {_C} NOT NULL)""",
            "CREATE INDEX IF NOT EXISTS idx_memory_reward_events_memory "
            "ON memory_reward_events(memory_id)",
            f"ALTER TABLE memory_recall_usage ADD COLUMN IF NOT EXISTS run_id {_C}",
            "CREATE INDEX IF NOT EXISTS idx_memory_recall_usage_run_id "
            "ON memory_recall_usage(run_id)",
        ),
    ),
    (
        10,
        (
            f"ALTER TABLE memory_recall_usage ADD COLUMN IF NOT EXISTS unit_id {_C}",
            "CREATE INDEX IF NOT EXISTS idx_memory_recall_usage_unit_id "
            "ON memory_recall_usage(unit_id)",
        ),
    ),
    (
        11,
        (
            f"CREATE TABLE IF NOT EXISTS memory_outcomes (id {_C} PRIMARY KEY, "
            f"memory_id {_C} NOT NULL, generation {_C} NOT NULL, at {_C} NOT NULL, "
            "event_json TEXT NOT NULL)",
            "CREATE INDEX IF NOT EXISTS idx_memory_outcomes_memory_generation "
            "ON memory_outcomes(memory_id, generation, at, id)",
        ),
    ),
    (
        12,
        (
            "ALTER TABLE memory_items ADD COLUMN IF NOT EXISTS source_task_id TEXT NOT NULL "
            "DEFAULT ''",
            "ALTER TABLE memory_items ADD COLUMN IF NOT EXISTS agent_role TEXT NOT NULL "
            "DEFAULT 'unknown'",
            "ALTER TABLE memory_items ADD COLUMN IF NOT EXISTS embedding_model_version TEXT "
            "NOT NULL DEFAULT ''",
            f"ALTER TABLE memory_items ADD COLUMN IF NOT EXISTS valid_from {_C}",
            "ALTER TABLE memory_items ADD COLUMN IF NOT EXISTS supersedes_reason TEXT",
        ),
    ),
    (13, ("ALTER TABLE memory_events ADD COLUMN IF NOT EXISTS prev_hash TEXT",)),
    (
        14,
        (
            f"""CREATE TABLE IF NOT EXISTS memory_relations (
  source_id {_C} NOT NULL, target_id {_C} NOT NULL, proposal_id {_C} NOT NULL,
  created_at {_C} NOT NULL,
  PRIMARY KEY (source_id, target_id),
  FOREIGN KEY (source_id) REFERENCES memory_items(id) ON DELETE CASCADE,
  FOREIGN KEY (target_id) REFERENCES memory_items(id) ON DELETE CASCADE,
  FOREIGN KEY (proposal_id) REFERENCES memory_proposals(id))""",
            "CREATE INDEX IF NOT EXISTS idx_memory_relations_source "
            "ON memory_relations(source_id, target_id)",
            "CREATE INDEX IF NOT EXISTS idx_memory_relations_target ON memory_relations(target_id)",
        ),
    ),
)
LATEST_VERSION = MIGRATIONS[-1][0]
RECALL_INDEX_SQL = (
    "CREATE INDEX IF NOT EXISTS idx_memory_items_recall_order ON memory_items "
    "(scope_key, updated_at DESC, id) WHERE superseded_by IS NULL AND deleted = 0"
)

_ITEM_COLUMNS = (
    "id, row_version, record_json, source_task_id, agent_role, embedding_model_version, "
    "valid_from, supersedes_reason"
)
_UPSERT_SQL = """WITH old AS (SELECT fts_len FROM memory_items WHERE id = %s)
INSERT INTO memory_items (id, scope_key, kind, updated_at, expires_at,
  superseded_by, deleted, record_json, source_task_id, agent_role, embedding_model_version,
  valid_from, supersedes_reason, fts, fts_len)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::tsvector, %s)
ON CONFLICT (id) DO UPDATE SET scope_key = excluded.scope_key, kind = excluded.kind,
  updated_at = excluded.updated_at, expires_at = excluded.expires_at,
  superseded_by = excluded.superseded_by, deleted = excluded.deleted,
  record_json = excluded.record_json, source_task_id = excluded.source_task_id,
  agent_role = excluded.agent_role, embedding_model_version = excluded.embedding_model_version,
  valid_from = memory_items.valid_from,
  supersedes_reason = COALESCE(excluded.supersedes_reason, memory_items.supersedes_reason),
  fts = excluded.fts, fts_len = excluded.fts_len, row_version = excluded.row_version
RETURNING valid_from, supersedes_reason, (SELECT fts_len FROM old)"""


# --------------------------------------------------------------------------- full text


def fts_tokens(text: str) -> list[str]:
    """Tokens as FTS5's ``unicode61`` makes them: letter/digit runs, folded, no diacritics."""
    if not text:
        return []
    lowered = text.lower()
    if not lowered.isascii():
        lowered = "".join(
            c for c in unicodedata.normalize("NFD", lowered) if not unicodedata.combining(c)
        )
    return _TOKEN.findall(lowered)


def _quote_lexeme(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def fts_document(record: Mapping[str, Any]) -> tuple[str, int]:
    """The ``tsvector`` literal and token count of a record in its JSON shape."""
    positions: dict[str, list[int]] = {}
    position = 0
    count = 0
    for column in fts_values(record):
        for token in fts_tokens(column):
            position += 1
            count += 1
            if len(token.encode("utf-8")) > MAX_LEXEME_BYTES:
                continue
            bucket = positions.setdefault(token, [])
            if len(bucket) < MAX_POSITIONS_PER_LEXEME:
                spot = min(position, MAX_POSITION)
                if not bucket or bucket[-1] != spot:
                    bucket.append(spot)
        position += 1  # a gap: no phrase spans two columns
    literal = " ".join(
        f"{_quote_lexeme(lexeme)}:{','.join(map(str, spots))}"
        for lexeme, spots in positions.items()
    )
    return literal, count


def match_phrases(fts_query: str) -> list[tuple[str, ...]]:
    """The phrases of an FTS5 ``MATCH`` string of quoted terms (empty phrases dropped).

    Anything that is not a quoted term list is read as whitespace-separated terms.
    """
    quoted = _PHRASE.findall(fts_query)
    raw = [q.replace('""', '"') for q in quoted] if quoted else fts_query.split()
    phrases = []
    for term in raw:
        if term.upper() in ("OR", "AND", "NOT") and not quoted:
            continue
        tokens = tuple(fts_tokens(term))
        if tokens:
            phrases.append(tokens)
    return phrases


def phrase_tsquery(phrase: Sequence[str]) -> str:
    """One phrase as ``tsquery`` text (``'a' <-> 'b'``)."""
    return " <-> ".join(_quote_lexeme(t) for t in phrase)


def tsquery_text(phrases: Sequence[Sequence[str]]) -> str:
    """The phrases joined by ``|``."""
    return " | ".join(f"({phrase_tsquery(p)})" for p in phrases)


def phrase_frequency(positions: Mapping[str, Sequence[int]], phrase: Sequence[str]) -> int:
    """How often ``phrase`` occurs, from per-lexeme positions."""
    first = positions.get(phrase[0])
    if not first:
        return 0
    if len(phrase) == 1:
        return len(first)
    rest = [set(positions.get(t, ())) for t in phrase[1:]]
    return sum(1 for p in first if all(p + j + 1 in s for j, s in enumerate(rest)))


def phrase_frequencies(
    phrases: Sequence[Sequence[str]],
    lexemes: Sequence[str],
    counts: Sequence[int],
    positions: Mapping[str, Sequence[int]] | None,
) -> builtins.list[float]:
    """Per-phrase frequencies of one row: single tokens from ``counts`` (aligned with
    ``lexemes``), multi-token phrases from the row's ``positions``."""
    index = {lexeme: i for i, lexeme in enumerate(lexemes)}
    return [
        float(counts[index[p[0]]]) if len(p) == 1 else float(phrase_frequency(positions or {}, p))
        for p in phrases
    ]


def bm25_score(freqs: Sequence[float], length: int, idf: Sequence[float], avgdl: float) -> float:
    """FTS5's ``bm25()`` value (negative, lower is better) for one row."""
    score = 0.0
    for freq, weight in zip(freqs, idf, strict=True):
        score += weight * (
            (freq * (BM25_K1 + 1.0))
            / (freq + BM25_K1 * (1 - BM25_B + BM25_B * float(length) / avgdl))
        )
    return -1.0 * score


def bm25_idf(rows: int, hits: int) -> float:
    """FTS5's IDF of a phrase found in ``hits`` of ``rows`` rows."""
    idf = math.log((rows - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0.0 else 1e-6


# --------------------------------------------------------------------------- DSN handling


@attrs.frozen
class _Dsn:
    conninfo: str
    password: str | None
    shown: str

    def scrub(self, text: str) -> str:
        if not self.password:
            return text
        for secret in {self.password, urllib.parse.quote(self.password, safe="")}:
            if secret:
                text = text.replace(secret, "***")
        return text


def parse_dsn(dsn: str) -> _Dsn:
    """Split a DSN into a password-free connection string and the password."""
    if not isinstance(dsn, str) or not dsn.strip():
        raise ConfigError("memory.postgres.dsn must be a non-empty connection string")
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.Error:
        raise ConfigError("memory.postgres.dsn is not a valid PostgreSQL connection string")
    password = params.pop("password", None)
    conninfo = make_conninfo("", **params)
    return _Dsn(conninfo=conninfo, password=str(password) if password else None, shown=conninfo)


def _key(label: str) -> int:
    """A signed 64-bit advisory lock key for ``label``."""
    return int.from_bytes(hashlib.sha256(label.encode("utf-8")).digest()[:8], "big", signed=True)


# --------------------------------------------------------------------------- the adapter


class _TxState(threading.local):
    """Per-thread transaction state: the pinned connection and what it touched."""

    conn: Any = None
    ids: set[str]
    items: bool
    everything: bool
    head: str | None
    head_loaded: bool
    head_dirty: bool
    rows_delta: int
    tokens_delta: int

    def __init__(self) -> None:
        self.conn = None
        self.reset()

    def reset(self) -> None:
        self.ids = set()
        self.items = False
        self.everything = False
        self.head = None
        self.head_loaded = False
        self.head_dirty = False
        self.rows_delta = 0
        self.tokens_delta = 0

    def mark(self) -> tuple[Any, ...]:
        """What a savepoint must restore if it rolls back (touched sets only grow)."""
        return (self.head, self.head_loaded, self.head_dirty, self.rows_delta, self.tokens_delta)

    def restore(self, mark: tuple[Any, ...]) -> None:
        self.head, self.head_loaded, self.head_dirty, self.rows_delta, self.tokens_delta = mark


def _guarded(method: F) -> F:
    """Translate driver and pool errors raised by ``method`` into StorageError."""

    @functools.wraps(method)
    def wrapper(self: PostgresStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except (psycopg.Error, PoolTimeout) as exc:
            raise self._translate(exc) from None

    return wrapper  # type: ignore[return-value]


@attrs.frozen
class _FtsStats:
    rows: int
    tokens: int


class PostgresStore:
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
        if schema is not None and not _SCHEMA_NAME.match(schema):
            raise ConfigError(f"memory.postgres.schema is not a plain identifier: {schema!r}")
        if fts_rank not in FTS_RANKS:
            raise ConfigError(f"fts_rank must be one of {', '.join(FTS_RANKS)}; got {fts_rank!r}")
        if not isinstance(pool_size, int) or isinstance(pool_size, bool) or pool_size < 1:
            raise ConfigError(f"memory.postgres.poolSize must be a positive integer: {pool_size!r}")
        self._dsn = parse_dsn(dsn)
        self.schema = schema
        self.pool_size = pool_size
        self.fts_rank = fts_rank
        self.embedding_model_version = embedding_model_version
        self.connect_timeout = float(connect_timeout)
        self.load_report: builtins.list[dict[str, Any]] = []
        self.migration_report: dict[str, Any] | None = None
        self.fts_disabled_reason: str | None = None
        self.cache_disabled_reason: str | None = None if cache else "caching is off"
        self._clock: Clock = clock or SystemClock()
        self._state = _TxState()
        self._lock = threading.RLock()
        self._records: dict[str, tuple[int, MemoryRecord]] = {}
        self._views_cache: dict[str, tuple[tuple[str, ...], tuple[dict[str, Any], ...]]] = {}
        self._stats: _FtsStats | None = None
        self._df: dict[tuple[str, ...], int] = {}
        self._generation = 0
        self._notifications = 0
        self._listener: Any = None
        self._reported_ids: set[str] = set()
        self._fts_enabled = True
        self._chain_active = False
        self._pool: ConnectionPool[Any] | None = None
        self._closed = False
        try:
            with self._connect() as conn:
                self._resolve_schema(conn)
                self._init(conn)
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
        self._chain_key = _key(f"swarmmem:chain:{self.schema_name}")
        self.channel = "swarmmem_" + hashlib.sha256(self.schema_name.encode()).hexdigest()[:20]

    def _qualified(self, table: str) -> str:
        return '"' + self.schema_name.replace('"', '""') + '".' + table

    def __repr__(self) -> str:
        schema = getattr(self, "schema_name", self.schema)
        return f"PostgresStore(dsn={self._dsn.shown!r}, schema={schema!r})"

    def _translate(self, exc: BaseException) -> StorageError:
        if isinstance(exc, StorageError):
            return exc
        message = self._dsn.scrub(str(exc).strip() or type(exc).__name__)
        return StorageError(f"postgres store (schema {self.schema or 'default'}): {message}")

    def _live_pool(self) -> ConnectionPool[Any]:
        if self._closed or self._pool is None:
            raise StorageError("the postgres store is closed")
        return self._pool

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        """The thread's transaction connection, else one borrowed from the pool."""
        if self._state.conn is not None:
            yield self._state.conn
            return
        with self._live_pool().connection() as conn:
            yield conn

    def _in_tx(self) -> bool:
        return self._state.conn is not None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All-or-nothing; the outermost block holds the schema's advisory lock, inner ones
        are savepoints."""
        state = self._state
        if state.conn is not None:
            mark = state.mark()
            try:
                with state.conn.transaction():
                    yield
            except BaseException as exc:
                state.restore(mark)
                if isinstance(exc, psycopg.Error | PoolTimeout):
                    raise self._translate(exc) from None
                raise
            return
        pool = self._live_pool()
        try:
            conn = pool.getconn()
        except (psycopg.Error, PoolTimeout) as exc:
            raise self._translate(exc) from None
        state.conn = conn
        state.reset()
        try:
            try:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._chain_key,))
                    yield
                    self._flush(conn, state)
                    self._send_notification(conn, state)
            except (psycopg.Error, PoolTimeout) as exc:
                raise self._translate(exc) from None
        finally:
            state.conn = None
            touched = (set(state.ids), state.items, state.everything)
            state.reset()
            with contextlib.suppress(Exception):
                pool.putconn(conn)
            self._invalidate(*touched)

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the pool and the listening connection (idempotent)."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            with contextlib.suppress(Exception):
                pool.close(timeout=5.0)
        self._stop_listener()
        with self._lock:
            self._records.clear()
            self._views_cache.clear()
            self._stats = None
            self._df.clear()

    # -- opening -------------------------------------------------------------------------

    def _init(self, conn: Any) -> None:
        """Create the schema, run missing migrations and backfills (under the chain lock)."""
        version = self._current_version(conn)
        if version < LATEST_VERSION or not self._flags_done(conn):
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._chain_key,))
                if self.schema is not None:
                    conn.execute(
                        sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(
                            sql.Identifier(self.schema)
                        )
                    )
                conn.execute(
                    f"CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                    f"name TEXT NOT NULL, applied_at {_C} NOT NULL DEFAULT "
                    "(to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')))"
                )
                self._migrate(conn)
                self._run_backfills(conn)
                conn.execute(RECALL_INDEX_SQL)
        self._chain_active = self._chain_state(conn)
        self._replay_relations(conn)

    def _current_version(self, conn: Any) -> int:
        row = conn.execute(
            "SELECT to_regclass(%s) IS NOT NULL", (self._qualified("schema_migrations"),)
        ).fetchone()
        if not row[0]:
            return 0
        row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
        return int(row[0])

    def _flags_done(self, conn: Any) -> bool:
        row = conn.execute(
            "SELECT count(*) FROM _meta WHERE key = ANY(%s) AND value = '1'",
            ([key for key, _ in self._backfills()],),
        ).fetchone()
        return int(row[0]) == len(self._backfills())

    def _migrate(self, conn: Any, *, upto: int | None = None) -> None:
        self._chain_active = self._chain_state(conn)
        for version, statements in MIGRATIONS:
            if upto is not None and version > upto:
                break
            with conn.transaction():
                exists = conn.execute(
                    "SELECT 1 FROM schema_migrations WHERE version = %s", (version,)
                ).fetchone()
                if exists is not None:
                    continue
                for statement in statements:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                    (version, _NAMES[version]),
                )
                self._insert_event(conn, "migration", str(version), reason=_NAMES[version])

    def _chain_state(self, conn: Any) -> bool:
        row = conn.execute(
            "SELECT to_regclass(%s) IS NOT NULL AND EXISTS (SELECT 1 FROM "
            "information_schema.columns WHERE table_schema = %s AND table_name = "
            "'memory_events' AND column_name = 'prev_hash')",
            (self._qualified("_meta"), self.schema_name),
        ).fetchone()
        if not row[0]:
            return False
        return self._get_meta(conn, "event_hash_chain_backfilled") == "1"

    def _get_meta(self, conn: Any, key: str) -> str | None:
        row = conn.execute("SELECT value FROM _meta WHERE key = %s", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, conn: Any, key: str, value: str) -> None:
        conn.execute(
            "INSERT INTO _meta (key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def _backfills(self) -> tuple[tuple[str, Callable[[Any], None]], ...]:
        return (
            ("scope_key_backfilled", self._backfill_scope_keys),
            ("recall_run_id_backfilled", self._backfill_recall_run_ids),
            ("provenance_columns_backfilled", self._backfill_provenance),
            ("event_hash_chain_backfilled", self._backfill_event_chain),
            ("fts_rows_backfilled", self._backfill_fts),
        )

    def _run_backfills(self, conn: Any) -> None:
        for key, step in self._backfills():
            if self._get_meta(conn, key) == "1":
                continue
            with conn.transaction():
                step(conn)
                self._set_meta(conn, key, "1")
        self._chain_active = self._chain_state(conn)

    def _backfill_scope_keys(self, conn: Any) -> None:
        rows = conn.execute("SELECT id, scope_key, record_json FROM memory_items").fetchall()
        for memory_id, scope_key, record_json in rows:
            try:
                key = stable_scope_key(json.loads(record_json).get("scope"))
            except (ValueError, TypeError, KeyError, AttributeError):
                continue
            if key != scope_key:
                conn.execute(
                    "UPDATE memory_items SET scope_key = %s WHERE id = %s", (key, memory_id)
                )

    def _backfill_recall_run_ids(self, conn: Any) -> None:
        rows = conn.execute(
            "SELECT id, usage_json FROM memory_recall_usage WHERE run_id IS NULL"
        ).fetchall()
        for row_id, usage_json in rows:
            try:
                run_id = json.loads(usage_json).get("runId")
            except (ValueError, AttributeError):
                continue
            if isinstance(run_id, str):
                conn.execute(
                    "UPDATE memory_recall_usage SET run_id = %s WHERE id = %s", (run_id, row_id)
                )

    def _backfill_provenance(self, conn: Any) -> None:
        rows = conn.execute(
            "SELECT id, record_json FROM memory_items WHERE valid_from IS NULL"
        ).fetchall()
        for memory_id, record_json in rows:
            try:
                data = json.loads(record_json)
                value = data.get("createdAt") or data.get("updatedAt")
            except (ValueError, AttributeError):
                continue
            if isinstance(value, str):
                conn.execute(
                    "UPDATE memory_items SET valid_from = %s WHERE id = %s", (value, memory_id)
                )

    def _backfill_event_chain(self, conn: Any) -> None:
        rows = conn.execute(
            "SELECT seq, id, operation, target_id, reason, timestamp, event_json "
            "FROM memory_events ORDER BY seq ASC"
        ).fetchall()
        previous = GENESIS
        for seq, event_id, operation, target_id, reason, timestamp, event_json in rows:
            conn.execute("UPDATE memory_events SET prev_hash = %s WHERE seq = %s", (previous, seq))
            previous = event_row_hash(
                event_id, operation, target_id, reason, timestamp, event_json, previous
            )
        if rows:
            self._set_meta(conn, CHAIN_HEAD_KEY, previous)
        self._chain_active = True
        self._insert_event(
            conn,
            "migration",
            "13",
            reason="backfill_event_hash_chain",
            event={"detail": f"{len(rows)} memory_events row(s) chained deterministically"},
        )

    def _backfill_fts(self, conn: Any) -> None:
        """Index rows written before the ``fts`` column existed (every record has tokens)."""
        rows = conn.execute("SELECT id, record_json FROM memory_items WHERE fts_len = 0").fetchall()
        for memory_id, record_json in rows:
            try:
                data = json.loads(record_json)
            except ValueError:
                data = {}
            literal, length = fts_document(data if isinstance(data, dict) else {})
            conn.execute(
                "UPDATE memory_items SET fts = %s::tsvector, fts_len = %s WHERE id = %s",
                (literal, length, memory_id),
            )
        self._recount_stats(conn)

    def _replay_relations(self, conn: Any) -> None:
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
        if not proposals:
            return
        missing = False
        for proposal in proposals:
            for source, target in merge_pairs(proposal):
                row = conn.execute(
                    "SELECT 1 FROM memory_relations WHERE source_id = %s AND target_id = %s",
                    (source, target),
                ).fetchone()
                missing = missing or row is None
        if not missing:
            return
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._chain_key,))
            for proposal in proposals:
                self._write_relations(conn, proposal)

    # -- plumbing ------------------------------------------------------------------------

    def _now(self) -> str:
        return to_iso(self._clock.now())

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

    def _flush(self, conn: Any, state: _TxState) -> None:
        """Write what a transaction kept in memory: the chain head and the full-text totals.

        Both are single hot rows; updating them once per transaction instead of once per
        write keeps a long transaction (a bulk import) linear instead of quadratic.
        """
        if state.head_dirty and state.head is not None:
            self._set_meta(conn, CHAIN_HEAD_KEY, state.head)
            state.head_dirty = False
        if state.rows_delta or state.tokens_delta:
            conn.execute(
                "UPDATE memory_fts_stats SET row_count = row_count + %s, "
                "token_count = token_count + %s WHERE id = 1",
                (state.rows_delta, state.tokens_delta),
            )
            state.rows_delta = state.tokens_delta = 0

    def _recount_stats(self, conn: Any) -> None:
        """Set the full-text totals from the rows (after writes that bypass ``_write_record``)."""
        conn.execute(
            "UPDATE memory_fts_stats SET row_count = s.n, token_count = s.t FROM (SELECT "
            "count(*) AS n, COALESCE(sum(fts_len), 0) AS t FROM memory_items) s WHERE id = 1"
        )

    def _send_notification(self, conn: Any, state: _TxState) -> None:
        if not (state.ids or state.items or state.everything):
            return
        if state.everything or len(state.ids) > MAX_NOTIFY_IDS:
            payload = dumps({"all": True})
        else:
            payload = dumps({"ids": sorted(state.ids), "items": state.items})
        conn.execute("SELECT pg_notify(%s, %s)", (self.channel, payload))

    def _insert_event(
        self,
        conn: Any,
        operation: str,
        target_id: str,
        *,
        reason: str | None = None,
        event: Mapping[str, Any] | None = None,
    ) -> StoredEvent:
        """Insert an event row; chained to the head when the chain is active."""
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
                "event_json) VALUES (%s, %s, %s, %s, %s, %s)",
                (stored.id, operation, target_id, reason, stored.timestamp, stored.event_json),
            )
            return stored
        state = self._state
        pinned = state.conn is conn  # inside transaction(): the lock is ours, keep the head
        if pinned and state.head_loaded:
            head = state.head or GENESIS
        else:
            head = self._get_meta(conn, CHAIN_HEAD_KEY) or GENESIS
        stored = attrs.evolve(stored, prev_hash=head)
        conn.execute(
            "INSERT INTO memory_events (id, operation, target_id, reason, timestamp, event_json, "
            "prev_hash) VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (stored.id, operation, target_id, reason, stored.timestamp, stored.event_json, head),
        )
        digest = event_row_hash(
            stored.id, operation, target_id, reason, stored.timestamp, stored.event_json, head
        )
        if pinned:
            state.head, state.head_loaded, state.head_dirty = digest, True, True
        else:
            self._set_meta(conn, CHAIN_HEAD_KEY, digest)
        return stored

    # -- caches --------------------------------------------------------------------------

    def _start_listener(self) -> None:
        try:
            listener = self._connect()
            listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
        except psycopg.Error as exc:
            self.cache_disabled_reason = (
                f"LISTEN failed, caches are off: {self._dsn.scrub(str(exc).strip())}"
            )
            return
        self._listener = listener

    def _stop_listener(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(Exception):
                listener.close()

    def _caching(self) -> bool:
        return self._listener is not None and not self._in_tx()

    def _sync(self) -> None:
        """Apply every notification that has arrived (before a read that may use caches)."""
        listener = self._listener
        if listener is None or self._in_tx():
            return
        with self._lock:
            try:
                payloads = [n.payload for n in listener.notifies(timeout=0)]
            except psycopg.Error as exc:
                self.cache_disabled_reason = (
                    f"the LISTEN connection failed, caches are off: "
                    f"{self._dsn.scrub(str(exc).strip())}"
                )
                self._stop_listener()
                self._invalidate(set(), False, True)
                return
            for payload in payloads:
                self._notifications += 1
                try:
                    data = json.loads(payload)
                except ValueError:
                    data = {"all": True}
                if not isinstance(data, dict):
                    data = {"all": True}
                raw_ids = data.get("ids")
                ids: builtins.list[Any] = raw_ids if isinstance(raw_ids, builtins.list) else []
                self._invalidate(
                    {str(i) for i in ids}, bool(data.get("items")), bool(data.get("all"))
                )

    def _invalidate(self, ids: set[str], items: bool, everything: bool) -> None:
        if not (ids or items or everything):
            return
        with self._lock:
            self._generation += 1
            if everything:
                self._records.clear()
                self._views_cache.clear()
            else:
                for memory_id in ids:
                    self._records.pop(memory_id, None)
                    self._views_cache.pop(memory_id, None)
            if items or everything:
                self._stats = None
                self._df.clear()

    def cache_info(self) -> dict[str, Any]:
        """Sizes of the caches, notifications received, and why caching is off (if it is)."""
        self._sync()
        with self._lock:
            return {
                "listening": self._listener is not None,
                "records": len(self._records),
                "views": len(self._views_cache),
                "fts_stats": self._stats is not None,
                "document_frequencies": len(self._df),
                "notifications": self._notifications,
                "generation": self._generation,
                "reason": self.cache_disabled_reason,
            }

    # -- row mapping ---------------------------------------------------------------------

    def _row_to_record(self, row: Sequence[Any]) -> MemoryRecord | None:
        memory_id, version = row[0], int(row[1])
        cached = self._records.get(memory_id)
        if cached is not None and cached[0] == version:
            return cached[1]
        _id, _v, record_json, source_task_id, _role, model_version, valid_from, reason = row
        try:
            record = record_from_columns(
                record_json, source_task_id, model_version, valid_from, reason
            )
        except (ValueError, TypeError, MemoryValidationError) as exc:
            if memory_id not in self._reported_ids:
                self._reported_ids.add(memory_id)
                self.load_report.append(
                    {
                        "file": f"postgres:{self.schema_name}",
                        "line": None,
                        "id": memory_id,
                        "error": str(exc),
                    }
                )
            return None
        with self._lock:
            if len(self._records) >= _CACHE_LIMIT:
                self._records.clear()
            self._records[memory_id] = (version, record)
        return record

    def _views(self, conn: Any, records: Sequence[MemoryRecord]) -> builtins.list[MemoryRecord]:
        """Attach relations and outcome views (cached outside transactions)."""
        if not records:
            return []
        caching = self._caching()
        found: dict[str, tuple[tuple[str, ...], tuple[dict[str, Any], ...]]] = {}
        if caching:
            with self._lock:
                for r in records:
                    hit = self._views_cache.get(r.id)
                    if hit is not None:
                        found[r.id] = hit
        missing = sorted({r.id for r in records if r.id not in found})
        if missing:
            generation = self._generation
            related: dict[str, list[str]] = {}
            for source, target in conn.execute(
                "SELECT source_id, target_id FROM memory_relations WHERE source_id = ANY(%s) "
                "ORDER BY source_id ASC, target_id ASC",
                (missing,),
            ):
                bucket = related.setdefault(source, [])
                if len(bucket) < MAX_RELATIONS_PER_MEMORY:
                    bucket.append(target)
            outcomes: dict[str, list[dict[str, Any]]] = {}
            for memory_id, event_json in conn.execute(
                "SELECT memory_id, event_json FROM memory_outcomes WHERE memory_id = ANY(%s) "
                "ORDER BY at ASC, id ASC",
                (missing,),
            ):
                with contextlib.suppress(ValueError, MemoryValidationError):
                    outcomes.setdefault(memory_id, []).append(
                        normalize_outcome_event(json.loads(event_json))
                    )
            fresh = {i: (tuple(related.get(i, ())), tuple(outcomes.get(i, ()))) for i in missing}
            found.update(fresh)
            if caching:
                with self._lock:
                    if self._generation == generation:
                        if len(self._views_cache) >= _CACHE_LIMIT:
                            self._views_cache.clear()
                        self._views_cache.update(fresh)
        return [materialize(r, found[r.id][1], found[r.id][0]) for r in records]

    def _write_record(self, conn: Any, record: MemoryRecord) -> MemoryRecord:
        """Upsert the stored form of ``record``; returns what is stored."""
        data = record_to_dict(record, include_provenance=False, include_outcomes=False)
        literal, length = fts_document(data)
        model_version = self.embedding_model_version or record.embedding_model_version or ""
        valid_from, supersedes_reason, old_length = conn.execute(
            _UPSERT_SQL,
            (
                record.id,
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
                literal,
                length,
            ),
        ).fetchone()
        self._touch((record.id,), items=True)
        state = self._state
        state.rows_delta += 1 if old_length is None else 0
        state.tokens_delta += length - (old_length or 0)
        changes: dict[str, Any] = {}
        if valid_from != record.valid_from:
            changes["valid_from"] = valid_from
        if supersedes_reason != record.supersedes_reason:
            changes["supersedes_reason"] = supersedes_reason
        if (model_version or None) != record.embedding_model_version:
            changes["embedding_model_version"] = model_version or None
        return attrs.evolve(record, **changes) if changes else record

    def _stored(self, conn: Any, memory_id: str) -> MemoryRecord | None:
        row = conn.execute(
            f"SELECT {_ITEM_COLUMNS} FROM memory_items WHERE id = %s", (memory_id,)
        ).fetchone()
        return None if row is None else self._row_to_record(row)

    # -- records -------------------------------------------------------------------------

    @_guarded
    def get(self, memory_id: str) -> MemoryRecord | None:
        """The record with ``memory_id`` (any state), or ``None``."""
        self._live_pool()
        self._sync()
        with self._connection() as conn:
            record = self._stored(conn, memory_id)
            return None if record is None else self._views(conn, [record])[0]

    @_guarded
    def get_many(self, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """The records (any state) of those ``memory_ids`` that exist, keyed by id."""
        self._live_pool()
        self._sync()
        with self._connection() as conn:
            stored = [self._stored(conn, memory_id) for memory_id in memory_ids]
            views = self._views(conn, [r for r in stored if r is not None])
        return {r.id: r for r in views}

    @staticmethod
    def _scoped_sql(flt: ListFilter, columns: str) -> tuple[str, builtins.list[Any]] | None:
        """The list query for ``flt`` selecting ``columns`` (``None``: nothing can match).

        Several scope keys become one ordered, limited branch per key under ``UNION ALL``,
        so each branch reads the recall index in order and stops at the limit (a plain
        ``scope_key = ANY(...)`` would sort every row of every scope).
        """
        if flt.scope_keys is not None and not flt.scope_keys:
            return None
        if flt.kinds is not None and not flt.kinds:
            return None
        rest: builtins.list[str] = []
        rest_params: builtins.list[Any] = []
        if flt.kinds is not None:
            rest.append("kind = ANY(%s)")
            rest_params.append(builtins.list(flt.kinds))
        if not flt.include_inactive:
            rest.append("superseded_by IS NULL AND deleted = 0")
        if not flt.include_expired:
            rest.append("(expires_at IS NULL OR expires_at > %s)")
            rest_params.append(flt.now)
        order = " ORDER BY updated_at DESC, id ASC"
        limit = "" if flt.limit is None else " LIMIT %s"
        limit_params = [] if flt.limit is None else [max(flt.limit, 0)]
        if flt.scope_keys is None:
            where = " WHERE " + " AND ".join(rest) if rest else ""
            statement = f"SELECT {columns} FROM memory_items{where}{order}{limit}"
            return statement, [*rest_params, *limit_params]
        keys = builtins.list(dict.fromkeys(flt.scope_keys))
        where = " AND ".join(["scope_key = %s", *rest])
        if len(keys) == 1:
            statement = f"SELECT {columns} FROM memory_items WHERE {where}{order}{limit}"
            return statement, [keys[0], *rest_params, *limit_params]
        branch = (
            f"(SELECT {columns}, updated_at AS sort_at, id AS sort_id FROM memory_items "
            f"WHERE {where}{order}{limit})"
        )
        params: builtins.list[Any] = []
        for key in keys:
            params.extend([key, *rest_params, *limit_params])
        statement = (
            f"SELECT {columns} FROM ({' UNION ALL '.join(branch for _ in keys)}) AS scoped "
            f"ORDER BY sort_at DESC, sort_id ASC{limit}"
        )
        return statement, [*params, *limit_params]

    @_guarded
    def list(self, flt: ListFilter) -> builtins.list[MemoryRecord]:
        """Records matching ``flt``, newest first (the reference list query)."""
        self._live_pool()
        query = self._scoped_sql(flt, _ITEM_COLUMNS)
        if query is None:
            return []
        statement, params = query
        self._sync()
        with self._connection() as conn:
            rows = conn.execute(statement, params).fetchall()
            records = [r for r in map(self._row_to_record, rows) if r is not None]
            if not flt.include_expired:
                now_ms = iso_to_ms(flt.now)
                records = [r for r in records if passes_parsed_expiry(r.expires_at, now_ms)]
            return self._views(conn, records)

    def _records_by_id(
        self, conn: Any, ids: Sequence[str], versions: Mapping[str, int]
    ) -> builtins.list[MemoryRecord]:
        """Records for ``ids`` in order; rows whose cached version is current are not read."""
        found: dict[str, MemoryRecord] = {}
        stale = []
        with self._lock:
            for memory_id in ids:
                cached = self._records.get(memory_id)
                if cached is not None and cached[0] == versions.get(memory_id):
                    found[memory_id] = cached[1]
                else:
                    stale.append(memory_id)
        if stale:
            rows = conn.execute(
                f"SELECT {_ITEM_COLUMNS} FROM memory_items WHERE id = ANY(%s)", (stale,)
            ).fetchall()
            for record in map(self._row_to_record, rows):
                if record is not None:
                    found[record.id] = record
        return self._views(conn, [found[i] for i in ids if i in found])

    @_guarded
    def count(self) -> int:
        """How many records are stored (tombstones included)."""
        self._live_pool()
        with self._connection() as conn:
            return int(conn.execute("SELECT count(*) FROM memory_items").fetchone()[0])

    @_guarded
    def upsert(self, record: MemoryRecord) -> MemoryRecord:
        """Insert or replace ``record``; returns the stored form."""
        if not isinstance(record, MemoryRecord):
            raise MemoryValidationError(f"upsert needs a MemoryRecord; got {type(record).__name__}")
        with self.transaction():
            conn = self._tx_conn()
            stored = self._write_record(conn, stored_form(record, None))
            self._insert_event(conn, "upsert", stored.id)
        return stored

    @_guarded
    def delete(self, memory_id: str, *, reason: str, now: str, hard: bool = False) -> bool:
        """Tombstone (or, with ``hard``, erase) a record; False when it did not exist."""
        with self.transaction():
            conn = self._tx_conn()
            row = conn.execute(
                "SELECT 1 FROM memory_items WHERE id = %s FOR UPDATE", (memory_id,)
            ).fetchone()
            if row is None:
                return False
            if hard:
                linked = [
                    r[0]
                    for r in conn.execute(
                        "SELECT source_id FROM memory_relations WHERE target_id = %s",
                        (memory_id,),
                    )
                ]
                conn.execute("DELETE FROM memory_outcomes WHERE memory_id = %s", (memory_id,))
                (length,) = conn.execute(
                    "DELETE FROM memory_items WHERE id = %s RETURNING fts_len", (memory_id,)
                ).fetchone()
                self._state.rows_delta -= 1
                self._state.tokens_delta -= int(length)
                self._touch([memory_id, *linked], items=True)
                self._insert_event(
                    conn, "delete", memory_id, reason=reason, event={"reason": reason, "hard": True}
                )
                return True
            record = self._stored(conn, memory_id)
            if record is None:
                raise StorageError(
                    f"stored record {memory_id} is invalid; only a hard delete can remove it"
                )
            tomb = attrs.evolve(
                record,
                metadata={**record.metadata, "deleted": True, "deleteReason": reason},
                updated_at=now,
            )
            self._write_record(conn, tomb)
            self._insert_event(conn, "delete", memory_id, reason=reason)
        return True

    # -- full-text candidates ------------------------------------------------------------

    def _fts_statistics(
        self, conn: Any, phrases: Sequence[tuple[str, ...]]
    ) -> tuple[_FtsStats, builtins.list[int]]:
        """Row count, token total and per-phrase document counts (cached between writes)."""
        caching = self._caching()
        with self._lock:
            stats = self._stats if caching else None
            known = dict(self._df) if caching else {}
        wanted = [p for p in dict.fromkeys(phrases) if p not in known]
        if stats is None or wanted:
            generation = self._generation
            row = conn.execute(
                "SELECT s.row_count, s.token_count, ARRAY(SELECT (SELECT count(*) FROM "
                "memory_items m WHERE m.fts @@ t.q) FROM unnest(%s::tsquery[]) WITH ORDINALITY "
                "AS t(q, o) ORDER BY t.o) FROM memory_fts_stats s WHERE s.id = 1",
                ([phrase_tsquery(p) for p in wanted],),
            ).fetchone()
            state = self._state
            pending = (state.rows_delta, state.tokens_delta) if state.conn is conn else (0, 0)
            stats = _FtsStats(rows=int(row[0]) + pending[0], tokens=int(row[1]) + pending[1])
            known.update(zip(wanted, (int(n) for n in row[2]), strict=True))
            if caching:
                with self._lock:
                    if self._generation == generation:
                        self._stats = stats
                        if len(self._df) > _CACHE_LIMIT:
                            self._df.clear()
                        self._df.update({p: known[p] for p in wanted})
        return stats, [known[p] for p in phrases]

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
        """Scoped active records, pre-selected by ``tsvector`` full text when a query is given.

        The scoped query returns ids, row versions and, for rows matching the ``tsquery``,
        the positions of the query's lexemes; ranks are computed here (see the module
        docstring) and only the chosen records are read (or taken from the record cache).
        """
        self._live_pool()
        flt = ListFilter(
            now=now,
            scope_keys=tuple(scope_keys),
            kinds=None if kinds is None else tuple(kinds),
            include_expired=include_expired,
            limit=candidate_cap,
        )
        phrases = match_phrases(fts_query) if fts_query else []
        if not fts_query or not self._fts_enabled:
            return Candidates(records=tuple(self.list(flt)), fts_order=None)
        query = self._scoped_sql(flt, "id, row_version, expires_at, seq, fts_len, fts, updated_at")
        if query is None:
            return Candidates(records=(), fts_order=None)
        scoped, params = query
        lexemes = sorted({t for p in phrases for t in p})
        tsquery = tsquery_text(phrases) if phrases else None
        rank_sql = "ts_rank_cd(fts, %s::tsquery)" if self.fts_rank == "ts_rank_cd" else "NULL"
        if tsquery is None:
            statement = (
                f"WITH scoped AS ({scoped}) SELECT id, row_version, expires_at, 0, 0, NULL, "
                "NULL, NULL FROM scoped ORDER BY updated_at DESC, id ASC"
            )
            args = params
        else:
            # per matching row: occurrences of each query lexeme (array aligned with
            # ``lexemes``) and, only when a phrase has several tokens, their positions
            phrase_positions = any(len(p) > 1 for p in phrases)
            positions_sql = (
                "CASE WHEN fts @@ %s::tsquery THEN (SELECT jsonb_object_agg(u.lexeme, "
                "u.positions) FROM unnest(fts) u WHERE u.lexeme = ANY(%s)) END"
                if phrase_positions
                else "NULL"
            )
            statement = (
                f"WITH scoped AS ({scoped}) "
                "SELECT id, row_version, expires_at, seq, fts_len, CASE WHEN fts @@ "
                "%s::tsquery THEN ARRAY(SELECT COALESCE(array_length(u.positions, 1), 0) "
                "FROM unnest(%s::text[]) WITH ORDINALITY AS l(lexeme, o) LEFT JOIN "
                "unnest(fts) u ON u.lexeme = l.lexeme ORDER BY l.o) END, "
                f"{rank_sql}, {positions_sql} FROM scoped ORDER BY updated_at DESC, id ASC"
            )
            args = [*params, tsquery, lexemes]
            if self.fts_rank == "ts_rank_cd":
                args.append(tsquery)
            if phrase_positions:
                args.extend([tsquery, lexemes])
        self._sync()
        with self._connection() as conn:
            found = self._rank_candidates(
                conn,
                statement,
                args,
                phrases,
                mode=mode,
                max_items=max_items,
                now=None if include_expired else now,
            )
        # the fallback reads through list() once this connection is back in the pool
        return found if found is not None else Candidates(records=tuple(self.list(flt)))

    def _rank_candidates(
        self,
        conn: Any,
        statement: str,
        args: builtins.list[Any],
        phrases: Sequence[tuple[str, ...]],
        *,
        mode: str,
        max_items: int,
        now: str | None,
    ) -> Candidates | None:
        """Rank the scoped full-text hits; ``None`` asks for the unranked fallback."""
        try:
            rows = conn.execute(statement, args).fetchall()
        except psycopg.errors.SyntaxError as exc:
            if self._in_tx():
                raise
            self._fts_enabled = False
            self.fts_disabled_reason = f"full-text search failed and is off for this store: {exc}"
            return None
        if now is not None:
            now_ms = iso_to_ms(now)
            rows = [r for r in rows if passes_parsed_expiry(r[2], now_ms)]
        if not rows:
            return Candidates(records=(), fts_order=None)
        hits = [r for r in rows if r[5] is not None]
        if not hits:
            return None if mode == "manual" else Candidates(records=(), fts_order=None)
        limit = max(100, max_items * 20)
        if self.fts_rank == "ts_rank_cd":
            ranked = sorted(hits, key=lambda r: (-float(r[6]), int(r[3])))[:limit]
        else:
            stats, counts = self._fts_statistics(conn, phrases)
            idf = [bm25_idf(stats.rows, n) for n in counts]
            avgdl = (stats.tokens / stats.rows if stats.rows else 0.0) or 1.0
            lexemes = sorted({t for p in phrases for t in p})
            scored = [
                (
                    bm25_score(phrase_frequencies(phrases, lexemes, r[5], r[7]), r[4], idf, avgdl),
                    int(r[3]),
                    r,
                )
                for r in hits
            ]
            scored.sort(key=lambda t: (t[0], t[1]))
            ranked = [t[2] for t in scored[:limit]]
        order = {r[0]: position for position, r in enumerate(ranked)}
        versions = {r[0]: int(r[1]) for r in rows}
        chosen = [r[0] for r in rows if r[0] in order]
        records = self._records_by_id(conn, chosen, versions)
        return Candidates(records=tuple(records), fts_order=order)

    @_guarded
    def iter_all_records(self) -> Iterator[MemoryRecord]:
        """Every record in any state, oldest update first, with provenance and derived views."""
        self._live_pool()
        with self._connection() as conn:
            rows = conn.execute(
                f"SELECT {_ITEM_COLUMNS} FROM memory_items ORDER BY updated_at ASC, id ASC"
            ).fetchall()
        return self._iter_rows(rows)

    def _iter_rows(self, rows: Sequence[Sequence[Any]]) -> Iterator[MemoryRecord]:
        for start in range(0, len(rows), 500):
            try:
                with self._connection() as conn:
                    chunk = [
                        r
                        for r in map(self._row_to_record, rows[start : start + 500])
                        if r is not None
                    ]
                    views = self._views(conn, chunk)
            except (psycopg.Error, PoolTimeout) as exc:
                raise self._translate(exc) from None
            yield from views

    # -- proposals -----------------------------------------------------------------------

    def _parse_proposal(self, proposal_id: str, proposal_json: str) -> MemoryProposal | None:
        try:
            return proposal_from_dict(json.loads(proposal_json))
        except (ValueError, TypeError, MemoryValidationError) as exc:
            if proposal_id not in self._reported_ids:
                self._reported_ids.add(proposal_id)
                self.load_report.append(
                    {
                        "file": f"postgres:{self.schema_name}",
                        "line": None,
                        "id": proposal_id,
                        "error": str(exc),
                    }
                )
            return None

    def _write_relations(self, conn: Any, proposal: MemoryProposal) -> None:
        created = relation_created_at(proposal)
        pairs = merge_pairs(proposal)
        if not pairs:
            return
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO memory_relations (source_id, target_id, proposal_id, created_at) "
                "SELECT %s, %s, %s, %s WHERE EXISTS (SELECT 1 FROM memory_items WHERE id = %s) "
                "AND EXISTS (SELECT 1 FROM memory_items WHERE id = %s) "
                "ON CONFLICT (source_id, target_id) DO NOTHING",
                [(s, t, proposal.id, created, s, t) for s, t in pairs],
            )
        if self._state.conn is conn:
            self._touch({i for pair in pairs for i in pair})

    def _put_proposal(self, conn: Any, proposal: MemoryProposal) -> None:
        conn.execute(
            "INSERT INTO memory_proposals (id, status, created_at, proposal_json) "
            "VALUES (%s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET status = excluded.status, "
            "created_at = excluded.created_at, proposal_json = excluded.proposal_json",
            (proposal.id, proposal.status, proposal.created_at, dumps(proposal_to_dict(proposal))),
        )
        self._write_relations(conn, proposal)
        self._insert_event(
            conn,
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
            conn = self._tx_conn()
            exists = conn.execute(
                "SELECT 1 FROM memory_proposals WHERE id = %s", (proposal.id,)
            ).fetchone()
            if exists is not None:
                raise ConflictError(f"memory proposal already exists: {proposal.id}")
            self._put_proposal(conn, proposal)
        return proposal

    @_guarded
    def get_proposal(self, proposal_id: str) -> MemoryProposal | None:
        """A proposal by id, or ``None``."""
        self._live_pool()
        with self._connection() as conn:
            row = conn.execute(
                "SELECT proposal_json FROM memory_proposals WHERE id = %s", (proposal_id,)
            ).fetchone()
        return None if row is None else self._parse_proposal(proposal_id, row[0])

    @_guarded
    def list_proposals(self, status: str | None = None) -> builtins.list[MemoryProposal]:
        """Proposals (optionally of one status), oldest first (then by id)."""
        self._live_pool()
        with self._connection() as conn:
            if status is None:
                rows = conn.execute(
                    "SELECT id, proposal_json FROM memory_proposals ORDER BY created_at, id"
                ).fetchall()
            else:
                rows = conn.execute(
                    "SELECT id, proposal_json FROM memory_proposals WHERE status = %s "
                    "ORDER BY created_at, id",
                    (status,),
                ).fetchall()
        parsed = [self._parse_proposal(pid, pjson) for pid, pjson in rows]
        return [p for p in parsed if p is not None]

    @_guarded
    def update_proposal(self, proposal: MemoryProposal) -> MemoryProposal:
        """Replace a stored proposal (NotFoundError when it does not exist)."""
        if not isinstance(proposal, MemoryProposal):
            raise MemoryValidationError("update_proposal needs a MemoryProposal")
        with self.transaction():
            conn = self._tx_conn()
            exists = conn.execute(
                "SELECT 1 FROM memory_proposals WHERE id = %s", (proposal.id,)
            ).fetchone()
            if exists is None:
                raise NotFoundError("memory proposal was not found")
            self._put_proposal(conn, proposal)
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
            self._insert_event(self._tx_conn(), operation, target_id, reason=reason, event=event)

    @_guarded
    def list_events(self) -> builtins.list[StoredEvent]:
        """Every audit event in insertion (chain) order."""
        self._live_pool()
        with self._connection() as conn:
            rows = conn.execute(
                f"SELECT {EVENT_COLUMNS} FROM memory_events ORDER BY seq ASC"
            ).fetchall()
        return [event_from_row(r) for r in rows]

    @_guarded
    def verify_audit_chain(self) -> dict[str, Any]:
        """Walk ``memory_events`` in insertion order and check every ``prev_hash`` and the head.

        The report has the shape of :meth:`SqliteStore.verify_audit_chain`.
        """
        self._live_pool()
        with self._connection() as conn:
            rows = conn.execute(
                f"SELECT {EVENT_COLUMNS} FROM memory_events ORDER BY seq ASC"
            ).fetchall()
            state = self._state
            if state.conn is conn and state.head_dirty:
                stored_head = state.head
            else:
                stored_head = self._get_meta(conn, CHAIN_HEAD_KEY)
        return verify_event_chain(rows, stored_head)

    @_guarded
    def record_recall_usage(self, usage: dict[str, Any]) -> None:
        """Store one recall bundle's usage in ``memory_recall_usage``."""
        self._live_pool()
        stored = normalize_recall_usage(usage, self._now())
        with self.transaction():
            self._tx_conn().execute(
                "INSERT INTO memory_recall_usage "
                "(id, bundle_id, timestamp, usage_json, run_id, unit_id) "
                "VALUES (%s, %s, %s, %s, %s, %s)",
                recall_usage_params(str(uuid.uuid4()), stored),
            )

    @_guarded
    def list_recall_usage(
        self, *, run_id: str | None = None, since: str | None = None
    ) -> builtins.list[dict[str, Any]]:
        """Recorded recall usage, oldest first, optionally for one run or from ``since`` on."""
        self._live_pool()
        statement = "SELECT usage_json FROM memory_recall_usage"
        where: builtins.list[str] = []
        params: builtins.list[Any] = []
        if run_id is not None:
            where.append("run_id = %s")
            params.append(run_id)
        if since is not None:
            where.append("timestamp >= %s")
            params.append(since)
        if where:
            statement += " WHERE " + " AND ".join(where)
        statement += " ORDER BY timestamp ASC, seq ASC"
        with self._connection() as conn:
            rows = conn.execute(statement, params).fetchall()
        out = []
        for (usage_json,) in rows:
            with contextlib.suppress(ValueError):
                out.append(json.loads(usage_json))
        return out

    @_guarded
    def append_outcome(self, event: dict[str, Any]) -> None:
        """Append an outcome event; the same id with the same payload is a no-op."""
        self._live_pool()
        stored = normalize_outcome_event(event)
        with self.transaction():
            conn = self._tx_conn()
            row = conn.execute(
                "SELECT event_json FROM memory_outcomes WHERE id = %s", (stored["id"],)
            ).fetchone()
            if row is not None:
                if json.loads(row[0]) == stored:
                    return
                raise ConflictError("outcome event id already exists with a different payload")
            conn.execute(
                "INSERT INTO memory_outcomes (id, memory_id, generation, at, event_json) "
                "VALUES (%s, %s, %s, %s, %s)",
                (
                    stored["id"],
                    stored["memoryId"],
                    stored["generation"],
                    stored["outcome"]["at"],
                    dumps(stored),
                ),
            )
            self._touch((stored["memoryId"],))

    @_guarded
    def list_outcomes(self, memory_id: str | None = None) -> builtins.list[dict[str, Any]]:
        """Outcome events, optionally of one memory, ordered by (``at``, ``id``)."""
        self._live_pool()
        with self._connection() as conn:
            if memory_id is None:
                rows = conn.execute(
                    "SELECT event_json FROM memory_outcomes ORDER BY at ASC, id ASC"
                ).fetchall()
            else:
                rows = conn.execute(
                    "SELECT event_json FROM memory_outcomes WHERE memory_id = %s "
                    "ORDER BY at ASC, id ASC",
                    (memory_id,),
                ).fetchall()
        out = []
        for (event_json,) in rows:
            with contextlib.suppress(ValueError, MemoryValidationError):
                out.append(normalize_outcome_event(json.loads(event_json)))
        return out

    @_guarded
    def append_reward_event(self, event: dict[str, Any]) -> None:
        """Append a learning reward event to ``memory_reward_events``."""
        self._live_pool()
        e = normalize_reward_event(event, self._now())
        with self.transaction():
            self._tx_conn().execute(
                "INSERT INTO memory_reward_events (id, memory_id, run_id, unit_id, verdict, "
                "reward, q_before, q_after, verdict_synthesis_json, timestamp) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                reward_event_params(e),
            )

    @_guarded
    def list_reward_events(self) -> builtins.list[dict[str, Any]]:
        """Every reward event, oldest first."""
        self._live_pool()
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT id, memory_id, run_id, unit_id, verdict, reward, q_before, q_after, "
                "verdict_synthesis_json, timestamp FROM memory_reward_events "
                "ORDER BY timestamp ASC, seq ASC"
            ).fetchall()
        return [reward_event_from_row(r) for r in rows]

    @_guarded
    def related_ids(self, memory_id: str) -> builtins.list[str]:
        """Ids merged with ``memory_id`` (sorted, at most 32)."""
        self._live_pool()
        self._sync()
        if self._caching():
            with self._lock:
                hit = self._views_cache.get(memory_id)
            if hit is not None:
                return builtins.list(hit[0])
        with self._connection() as conn:
            rows = conn.execute(
                "SELECT target_id FROM memory_relations WHERE source_id = %s "
                "ORDER BY target_id ASC LIMIT %s",
                (memory_id, MAX_RELATIONS_PER_MEMORY),
            ).fetchall()
        return [r[0] for r in rows]

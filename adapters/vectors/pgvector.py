"""A :class:`~swarmmem.ports.vectors.VectorIndex` in PostgreSQL with pgvector.

Vectors live in ``memory_items_vec (id, embedding vector(d))`` beside the ``postgres``
store's tables (same schema), with an HNSW index over cosine distance
(``vector_cosine_ops``); the model version is the ``model_version`` row of
``embedding_config``, as in SQLite. ``search`` returns ``(id, 1 - cosine distance)`` best
first, ties by id.

Exactness. HNSW is approximate. While the table holds fewer than ``exact_below`` vectors
(``memory.postgres.exactBelow``, default 10,000) the search is an exact scan (the same
answer as the numpy index); above it the HNSW index is used with ``hnsw.ef_search =
max(ef_search, k)`` (at most 1000), set with ``SET LOCAL`` inside the query's own transaction
so it never outlives the query on a pooled connection, and a result shorter than ``k`` falls
back to the exact scan. ``ef_search`` comes from
``memory.postgres.hnswEfSearch`` (default 200: with the default build options Recall@10 >=
0.98 against the exact scan on MiniLM embeddings of real sentences and on clustered synthetic
data at 10k and 100k vectors, and on diffuse synthetic data at 10k, see
``benchmarks/test_pgvector_recall_bench.py``).

Scoping. ``search_scoped`` joins ``memory_items`` and applies the lexical candidate filter
(scope keys, kinds, not deleted or superseded, SQL expiry, then the parsed-expiry
post-filter), so a dense candidate is a record the lexical path could also have returned.
pgvector 0.6 filters after the index scan, so a selective scope is searched exactly.

Build options. The HNSW index is built with ``m`` and ``ef_construction`` from
``memory.postgres.hnswM`` / ``memory.postgres.hnswEfConstruction``, with
``maintenance_work_mem`` raised for the build's transaction to the estimated graph size (at
most 1 GB; never lowered) so pgvector builds the graph in memory (a parallel build reserves
that much shared memory: a server whose ``/dev/shm`` is smaller, as Docker's 64 MB default,
fails the build with nothing changed). Opening never rebuilds an
existing index: an index built with other options (one made without options has pgvector's
16 / 64) keeps serving, :meth:`PgVectorIndex.ann_index` reports the difference (``status``
shows it) and :meth:`PgVectorIndex.rebuild_ann_index` (run by ``swarmmem rebuild-embeddings``)
builds the new index beside the old one and swaps them in one transaction.

The extension is created in ``public`` when missing (``CREATE EXTENSION vector``); a server
without pgvector raises :class:`~swarmmem.core.model.errors.EmbeddingUnavailableError`.
"""

from __future__ import annotations

import builtins
import contextlib
import re
import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

from swarmmem.adapters.storage.postgres.dsn import configured_dsn, parse_dsn
from swarmmem.core.config import PostgresConfig
from swarmmem.core.model.errors import ConfigError, EmbeddingUnavailableError, StorageError
from swarmmem.core.model.ids import iso_to_ms
from swarmmem.core.model.semantics import passes_parsed_expiry

FloatArray = npt.NDArray[np.float32]
MAX_EF_SEARCH = 1000
PGVECTOR_DEFAULTS = (16, 64)
"""pgvector's own (m, ef_construction): what an index without build options was built with."""
_DEFAULTS = PostgresConfig()
_INDEX = "idx_memory_items_vec_hnsw"
_GRAPH_BYTES_CAP = 1 << 30
_SCHEMA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def check_build_options(m: int, ef_construction: int) -> tuple[int, int]:
    """``(m, ef_construction)`` as pgvector accepts them (m 2..100, ef_construction
    2 * m..1000), else :class:`ConfigError` naming the configuration keys."""
    for name, value in (("hnswM", m), ("hnswEfConstruction", ef_construction)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"memory.postgres.{name} must be an integer; got {value!r}")
    if not 2 <= m <= 100:
        raise ConfigError(f"memory.postgres.hnswM must be an integer in [2, 100]; got {m!r}")
    if not 2 * m <= ef_construction <= 1000:
        raise ConfigError(
            f"memory.postgres.hnswEfConstruction must be an integer in [2 * hnswM, 1000] = "
            f"[{2 * m}, 1000]; got {ef_construction!r}"
        )
    return m, ef_construction


def graph_bytes(rows: int, dimension: int, m: int) -> int:
    """A generous estimate of pgvector's in-memory HNSW graph for ``rows`` vectors (pgvector
    0.6 needed about ``4 * dimension + 32 * m + 210`` bytes per vector at d = 128 and 384,
    m = 8..32: the vector, the level-0 neighbour list of 2 * m entries, upper levels and
    bookkeeping)."""
    return rows * (4 * dimension + 40 * m + 512)


def vector_literal(vector: Sequence[float] | FloatArray) -> str:
    """pgvector's text form of a float32 vector (exact: float32 values print losslessly)."""
    values = np.asarray(vector, dtype=np.float32).reshape(-1).tolist()
    return "[" + ",".join(repr(v) for v in values) + "]"


class PgVectorIndex:
    """Durable embeddings in PostgreSQL (pgvector, HNSW over cosine distance).

    Args:
        dsn: the connection string (the store's; its password is never shown).
        dimension: vector length.
        schema: the store's schema (``None``: the connection's current schema).
        pool_size: pooled connections.
        ef_search: HNSW candidate list size (raised to ``k`` per search, at most 1000).
        m: HNSW graph degree of a new or rebuilt index (2..100).
        ef_construction: HNSW build candidate list size (2 * m..1000).
        exact_below: tables smaller than this are searched exactly.
    """

    def __init__(
        self,
        dsn: str,
        dimension: int,
        *,
        schema: str | None = None,
        pool_size: int = 2,
        ef_search: int = _DEFAULTS.hnsw_ef_search,
        m: int = _DEFAULTS.hnsw_m,
        ef_construction: int = _DEFAULTS.hnsw_ef_construction,
        exact_below: int = _DEFAULTS.exact_below,
        connect_timeout: float = 10.0,
    ) -> None:
        if schema is not None and not _SCHEMA_NAME.match(schema):
            raise ConfigError(f"memory.postgres.schema is not a plain identifier: {schema!r}")
        self.build = check_build_options(m, ef_construction)
        self._dim = int(dimension)
        self._dsn = parse_dsn(dsn)
        self.schema = schema
        self.ef_search = max(1, min(MAX_EF_SEARCH, int(ef_search)))
        self.exact_below = max(0, int(exact_below))
        self._pool: ConnectionPool[Any] | None = None
        kwargs: dict[str, Any] = {"autocommit": True, "connect_timeout": int(connect_timeout)}
        if self._dsn.password:
            kwargs["password"] = self._dsn.password
        try:
            with psycopg.connect(self._dsn.conninfo, **kwargs) as conn:
                self._configure(conn)
                self._init(conn)
            self._pool = ConnectionPool(
                self._dsn.conninfo,
                kwargs=kwargs,
                min_size=1,
                max_size=max(1, pool_size),
                configure=self._configure,
                name="swarmmem-vectors",
                timeout=connect_timeout,
                num_workers=1,
                open=True,
            )
        except (psycopg.Error, PoolTimeout) as exc:
            self.close()
            raise StorageError(f"pgvector index: {self._dsn.scrub(str(exc).strip())}") from None

    @classmethod
    def from_config(cls, section: PostgresConfig, *, dimension: int) -> PgVectorIndex:
        """The index of ``memory.postgres`` (its DSN, else ``SWARMMEM_PG_DSN``; HNSW options)."""
        return cls(
            configured_dsn(section),
            dimension,
            schema=section.schema,
            ef_search=section.hnsw_ef_search,
            m=section.hnsw_m,
            ef_construction=section.hnsw_ef_construction,
            exact_below=section.exact_below,
        )

    def __repr__(self) -> str:
        return f"PgVectorIndex(dsn={self._dsn.shown!r}, schema={self.schema!r}, dim={self._dim})"

    # -- connections ---------------------------------------------------------------------

    def _configure(self, conn: Any) -> None:
        if self.schema is not None:
            conn.execute(
                sql.SQL("SET search_path TO {}, public").format(sql.Identifier(self.schema))
            )

    def _init(self, conn: Any) -> None:
        row = conn.execute(
            "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
            "WHERE e.extname = 'vector'"
        ).fetchone()
        if row is None:
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public")
            except psycopg.Error as exc:
                raise EmbeddingUnavailableError(
                    "dense retrieval is unavailable: pgvector cannot be created on this server "
                    f"({self._dsn.scrub(str(exc).strip())})"
                ) from None
        elif row[0] != "public" and self.schema is not None:
            raise EmbeddingUnavailableError(
                f"pgvector is installed in schema {row[0]!r}; this index expects 'public'"
            )
        ready = conn.execute(
            "SELECT to_regclass('memory_items_vec') IS NOT NULL "
            "AND to_regclass('embedding_config') IS NOT NULL "
            "AND to_regclass('idx_memory_items_vec_hnsw') IS NOT NULL"
        ).fetchone()[0]
        if ready:  # no DDL: a role without CREATE rights (row-level security) opens it too
            self._check_dimension(conn)
            return
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('swarmmem:pgvector-init'))")
            if self.schema is not None:
                conn.execute(
                    sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema))
                )
            conn.execute(
                'CREATE TABLE IF NOT EXISTS embedding_config (key TEXT COLLATE "C" PRIMARY KEY, '
                "value TEXT)"
            )
            conn.execute(
                'CREATE TABLE IF NOT EXISTS memory_items_vec (id TEXT COLLATE "C" PRIMARY KEY, '
                f"embedding vector({self._dim}) NOT NULL)"
            )
            if conn.execute("SELECT to_regclass(%s) IS NULL", (_INDEX,)).fetchone()[0]:
                self._create_hnsw(conn, _INDEX)
        self._check_dimension(conn)

    def _create_hnsw(self, conn: Any, name: str) -> None:
        """``CREATE INDEX name`` with the configured build options (inside the caller's
        transaction), with ``maintenance_work_mem`` raised for this transaction to the
        estimated graph size (at most 1 GB) so the graph is built in memory."""
        m, ef_construction = self.build
        rows = int(conn.execute("SELECT count(*) FROM memory_items_vec").fetchone()[0])
        wanted = min(_GRAPH_BYTES_CAP, graph_bytes(rows, self._dim, m)) // 1024
        current = conn.execute(
            "SELECT setting::bigint * CASE unit WHEN '8kB' THEN 8 WHEN 'MB' THEN 1024 ELSE 1 END "
            "FROM pg_settings WHERE name = 'maintenance_work_mem'"
        ).fetchone()
        if current is not None and wanted > int(current[0]):
            conn.execute(
                sql.SQL("SET LOCAL maintenance_work_mem = {}").format(sql.Literal(f"{wanted}kB"))
            )
        conn.execute(
            sql.SQL(
                "CREATE INDEX {} ON memory_items_vec USING hnsw (embedding vector_cosine_ops) "
                "WITH (m = {}, ef_construction = {})"
            ).format(sql.Identifier(name), sql.Literal(m), sql.Literal(ef_construction))
        )

    def built_with(self) -> tuple[int, int] | None:
        """The ``(m, ef_construction)`` the HNSW index was built with (``None``: no index)."""
        with self._conn() as conn:
            return self._built_with(conn)

    @staticmethod
    def _built_with(conn: Any) -> tuple[int, int] | None:
        row = conn.execute(
            "SELECT reloptions FROM pg_class WHERE oid = to_regclass(%s)", (_INDEX,)
        ).fetchone()
        if row is None:
            return None
        options = dict(str(o).split("=", 1) for o in row[0] or [])
        return (
            int(options.get("m", PGVECTOR_DEFAULTS[0])),
            int(options.get("ef_construction", PGVECTOR_DEFAULTS[1])),
        )

    def ann_index(self) -> dict[str, Any]:
        """The HNSW index's build options against the configured ones (for ``status``)."""
        built = self.built_with()
        m, ef_construction = self.build
        return {
            "kind": "hnsw",
            "m": None if built is None else built[0],
            "ef_construction": None if built is None else built[1],
            "configured_m": m,
            "configured_ef_construction": ef_construction,
            "needs_rebuild": built != self.build,
        }

    def rebuild_ann_index(self, *, force: bool = False) -> dict[str, Any]:
        """Rebuild the HNSW index with the configured build options when it was built with
        others (or ``force``). The new index is built beside the old one, which keeps serving
        searches (writes wait), and replaces it in the same transaction; on any error nothing
        changes. A role that does not own the table gets the reason instead (the owner must
        run it). Returns what was done."""
        started = time.perf_counter()
        m, ef_construction = self.build
        with self._conn() as conn:
            try:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(hashtext('swarmmem:pgvector-init'))")
                    before = self._built_with(conn)
                    if before == self.build and not force:
                        return {"rebuilt": False, "m": m, "ef_construction": ef_construction}
                    self._create_hnsw(conn, _INDEX + "_new")
                    if before is not None:
                        conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(_INDEX)))
                    conn.execute(
                        sql.SQL("ALTER INDEX {} RENAME TO {}").format(
                            sql.Identifier(_INDEX + "_new"), sql.Identifier(_INDEX)
                        )
                    )
            except psycopg.errors.InsufficientPrivilege as exc:
                return {
                    "rebuilt": False,
                    "m": m,
                    "ef_construction": ef_construction,
                    "reason": "only the owner of memory_items_vec can rebuild its index "
                    f"({self._dsn.scrub(str(exc).strip())})",
                }
        return {
            "rebuilt": True,
            "m": m,
            "ef_construction": ef_construction,
            "previous": None if before is None else list(before),
            "seconds": round(time.perf_counter() - started, 3),
        }

    def _check_dimension(self, conn: Any) -> None:
        stored = conn.execute(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'memory_items_vec'::regclass "
            "AND attname = 'embedding'"
        ).fetchone()
        if stored is not None and int(stored[0]) != self._dim:
            raise EmbeddingUnavailableError(
                f"memory_items_vec holds vectors of dimension {stored[0]}, not {self._dim}; "
                "rebuild the embedding index"
            )

    def _live_pool(self) -> ConnectionPool[Any]:
        if self._pool is None:
            raise StorageError("the pgvector index is closed")
        return self._pool

    @contextlib.contextmanager
    def _conn(self) -> Iterator[Any]:
        try:
            with self._live_pool().connection() as conn:
                yield conn
        except (psycopg.Error, PoolTimeout) as exc:
            raise StorageError(f"pgvector index: {self._dsn.scrub(str(exc).strip())}") from None

    # -- the port ------------------------------------------------------------------------

    @property
    def dimension(self) -> int:
        return self._dim

    def stored_model_version(self) -> str | None:
        with self._conn() as conn:
            row = conn.execute(
                "SELECT value FROM embedding_config WHERE key = 'model_version'"
            ).fetchone()
        return None if row is None else str(row[0])

    def seed_model_version(self, version: str) -> str:
        stored = self.stored_model_version()
        if stored is not None:  # no write: under row-level security only the admin may
            return stored
        with self._conn() as conn:
            conn.execute(
                "INSERT INTO embedding_config (key, value) VALUES ('model_version', %s) "
                "ON CONFLICT (key) DO NOTHING",
                (version,),
            )
        stored = self.stored_model_version()
        assert stored is not None
        return stored

    def set_model_version(self, version: str) -> None:
        with self._conn() as conn:
            conn.execute(
                "INSERT INTO embedding_config (key, value) VALUES ('model_version', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (version,),
            )

    def upsert(self, ids: Sequence[str], vectors: FloatArray) -> None:
        vecs = np.asarray(vectors, dtype=np.float32).reshape(len(ids), self._dim)
        rows = [(key, vector_literal(vecs[i])) for i, key in enumerate(ids)]
        with self._conn() as conn, conn.transaction(), conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO memory_items_vec (id, embedding) VALUES (%s, %s::vector) "
                "ON CONFLICT (id) DO UPDATE SET embedding = excluded.embedding",
                rows,
            )

    def delete(self, ids: Sequence[str]) -> None:
        with self._conn() as conn:
            conn.execute("DELETE FROM memory_items_vec WHERE id = ANY(%s)", (list(ids),))

    def ids(self) -> builtins.list[str]:
        with self._conn() as conn:
            rows = conn.execute("SELECT id FROM memory_items_vec ORDER BY id").fetchall()
        return [str(r[0]) for r in rows]

    def _is_small(self, conn: Any) -> bool:
        if self.exact_below <= 0:
            return False
        row = conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM memory_items_vec LIMIT %s) s",
            (self.exact_below,),
        ).fetchone()
        return int(row[0]) < self.exact_below

    def _query(
        self, conn: Any, query: str, k: int, where: str, params: builtins.list[Any], exact: bool
    ) -> builtins.list[tuple[Any, ...]]:
        # ORDER BY (distance + 0) cannot use the HNSW index: that is the exact scan.
        order = "(v.embedding <=> %s::vector) + 0" if exact else "v.embedding <=> %s::vector"
        expires = "m.expires_at" if where else "NULL"
        join = " JOIN memory_items m ON m.id = v.id " + where if where else ""
        statement = (
            f"SELECT v.id, 1 - (v.embedding <=> %s::vector) AS cosine, {expires} "
            f"FROM memory_items_vec v{join} ORDER BY {order} LIMIT %s"
        )
        with conn.transaction():
            if not exact:
                conn.execute(
                    sql.SQL("SET LOCAL hnsw.ef_search = {}").format(
                        sql.Literal(min(MAX_EF_SEARCH, max(self.ef_search, k)))
                    )
                )
            rows = conn.execute(statement, [query, *params, query, k]).fetchall()
        return list(rows)

    def _search(
        self, query: FloatArray, k: int, where: str, params: builtins.list[Any], now: str | None
    ) -> builtins.list[tuple[str, float]]:
        q = np.asarray(query, dtype=np.float32).reshape(-1)
        if q.shape[0] != self._dim:
            raise ValueError(f"query has dimension {q.shape[0]}, index has {self._dim}")
        if k <= 0:
            return []
        literal = vector_literal(q)
        fetch = k + 8  # a margin so ties at the k-th distance are ordered by id exactly
        with self._conn() as conn:
            exact = fetch > MAX_EF_SEARCH or self._is_small(conn)
            rows = self._query(conn, literal, fetch, where, params, exact)
            if not exact and len(rows) < fetch:
                rows = self._query(conn, literal, fetch, where, params, True)
        if now is not None:
            now_ms = iso_to_ms(now)
            rows = [r for r in rows if passes_parsed_expiry(r[2], now_ms)]
        ranked = sorted(((str(r[0]), float(r[1])) for r in rows), key=lambda t: (-t[1], t[0]))
        return ranked[:k]

    def search(self, query: FloatArray, k: int) -> builtins.list[tuple[str, float]]:
        """The ``k`` stored vectors most similar to ``query`` (cosine, best first)."""
        return self._search(query, k, "", [], None)

    def search_scoped(
        self,
        query: FloatArray,
        k: int,
        *,
        scope_keys: Sequence[str],
        kinds: Sequence[str] | None,
        now: str,
        include_expired: bool = False,
    ) -> builtins.list[tuple[str, float]]:
        """Like ``search``, among the records the lexical candidates could contain."""
        if not scope_keys or (kinds is not None and not kinds):
            return []
        where = ["m.scope_key = ANY(%s)", "m.superseded_by IS NULL", "m.deleted = 0"]
        params: builtins.list[Any] = [list(scope_keys)]
        if kinds is not None:
            where.append("m.kind = ANY(%s)")
            params.append(list(kinds))
        if not include_expired:
            where.append("(m.expires_at IS NULL OR m.expires_at > %s)")
            params.append(now)
        return self._search(
            query, k, "WHERE " + " AND ".join(where), params, None if include_expired else now
        )

    def explain(self, query: FloatArray, k: int) -> str:
        """The plan of the approximate (HNSW) search, for tests and diagnostics."""
        literal = vector_literal(query)
        with self._conn() as conn, conn.transaction():
            rows = conn.execute(
                "EXPLAIN SELECT id FROM memory_items_vec ORDER BY embedding <=> %s::vector "
                "LIMIT %s",
                (literal, k),
            ).fetchall()
        return "\n".join(str(r[0]) for r in rows)

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            with contextlib.suppress(Exception):
                pool.close(timeout=5.0)

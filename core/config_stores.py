"""The store sections of the configuration tree (:mod:`swarmmem.core.config`): ``memory.sqlite``
and ``memory.postgres`` (with its pgvector index)."""

from __future__ import annotations

import attrs

from swarmmem.core.model.settings import matching, number, optional, setting, text

_INT = {"integer": True}


@attrs.frozen(kw_only=True)
class SqliteConfig:
    """``memory.sqlite``: the SQLite store."""

    path: str = setting(
        ".swarm/memory/memory.db",
        "path",
        text,
        "SQLite database file. A path outside the project is honoured only from your own "
        "configuration, never the repository's; `SWARMMEM_SQLITE_PATH` wins.",
        path=True,
    )
    busy_timeout_ms: int = setting(
        5000, "busyTimeoutMs", number(0, 60000, **_INT), "Lock wait (0..60000 ms)."
    )


@attrs.frozen(kw_only=True)
class PostgresConfig:
    """``memory.postgres``: the PostgreSQL store and its pgvector index."""

    dsn: str | None = setting(
        None,
        "dsn",
        optional(text),
        'PostgreSQL connection string for `provider: "postgres"`; `null` reads the '
        "`SWARMMEM_PG_DSN` environment variable. Its password is never logged or shown.",
    )
    pool_size: int = setting(
        4,
        "poolSize",
        number(1, 100, **_INT),
        "Most pooled connections per process (1..100; one more listens for cache invalidations).",
    )
    schema: str | None = setting(
        None,
        "schema",
        optional(matching(r"[A-Za-z_][A-Za-z0-9_]{0,62}", "a plain SQL identifier")),
        "Schema holding the tables (created if missing); `null` uses the connection's current "
        "schema (normally `public`).",
    )
    hnsw_ef_search: int = setting(
        200,
        "hnswEfSearch",
        number(1, 1000, **_INT),
        "pgvector HNSW candidate list size (`hnsw.ef_search`, 1..1000, pgvector's own limit), "
        "set per query with `SET LOCAL` (raised to the number of rows asked for). With the "
        "default build options 200 kept Recall@10 >= 0.98 against the exact scan on the "
        "bundled MiniLM's embeddings of real sentences (1.0 at 10k, 0.9995 at 100k vectors; "
        "0.98 is reached from 40 on), on clustered synthetic 384-d data at 10k and 100k and on "
        "diffuse synthetic data at 10k (`benchmarks/test_pgvector_recall_bench.py`); larger "
        "values trade latency for recall (diffuse synthetic data at 100k needs 1000, see "
        "benchmarks/README.md).",
    )
    hnsw_m: int = setting(
        32,
        "hnswM",
        number(2, 100, **_INT),
        "HNSW graph degree (`m`, 2..100) of the pgvector index when it is created or rebuilt. "
        "Larger graphs find more true neighbours on data without clear clusters, and cost "
        "build time, insert time and index size.",
    )
    hnsw_ef_construction: int = setting(
        200,
        "hnswEfConstruction",
        number(4, 1000, **_INT),
        "HNSW build candidate list size (`ef_construction`, at least twice `hnswM`, at most "
        "1000). Opening a project never rebuilds an existing index: when its options differ "
        "from these two keys (an index made by earlier versions has pgvector's 16 / 64), "
        "`swarmmem status` says so and `swarmmem rebuild-embeddings` rebuilds it (a new index "
        "beside the old one, swapped in one transaction; writes wait meanwhile; 100k vectors "
        "take minutes). Set the keys to the index's options to keep it.",
    )
    exact_below: int = setting(
        10_000,
        "exactBelow",
        number(0, 100_000_000, **_INT),
        "While the vector table holds fewer vectors than this, dense search scans them "
        "exactly instead of using the HNSW index (0: always the index). On data without clear "
        "neighbourhoods HNSW misses neighbours at any `hnswEfSearch` (Recall@10 0.87 at 100k "
        "diffuse vectors with the default graph, 0.987 only at 1000, where the index is barely "
        "faster than the exact scan: benchmarks/README.md); raising this key trades latency "
        "for exact results.",
    )

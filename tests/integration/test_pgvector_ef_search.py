"""``postgres.hnswEfSearch``: validated, handed to the pgvector index, applied per query only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pg_support import require_vector, schema_for

from swarmmem.core.config import PostgresConfig
from swarmmem.core.model.errors import ConfigError

DIM = 384


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.mark.parametrize("bad", [0, 1001, 2.5, "100", True, None])
def test_bad_values_are_refused(tmp_path: Path, bad: object) -> None:
    """Only integers in [1, 1000] are accepted, with a message naming the key."""
    import swarmmem

    config = {"enabled": True, "postgres": {"hnswEfSearch": bad}}
    with pytest.raises(ConfigError, match=r"memory\.postgres\.hnswEfSearch"):
        swarmmem.open(tmp_path, config).close()


def test_the_configured_value_reaches_the_index(tmp_path: Path) -> None:
    """provider postgres with embeddings: the pgvector index runs with the configured value."""
    import swarmmem

    dsn = require_vector()
    assert PostgresConfig().hnsw_ef_search == 200
    config = {
        "enabled": True,
        "provider": "postgres",
        "postgres": {"dsn": dsn, "schema": schema_for(tmp_path / "s"), "hnswEfSearch": 37},
        "embeddings": {"enabled": True, "provider": "hashing", "dimension": 64},
    }
    with swarmmem.open(tmp_path, config) as mem:
        parts = mem.runtime.dense_parts()
        assert parts is not None, mem.runtime.dense_unavailable_reason
        assert parts.index.ef_search == 37


def test_ef_search_applies_to_the_query_and_does_not_leak(tmp_path: Path) -> None:
    """A larger ef_search finds more true neighbours on hard data; the pooled connection
    keeps the server default afterwards (the value is SET LOCAL)."""
    from swarmmem.adapters.vectors.pgvector import PgVectorIndex

    dsn = require_vector()
    rng = np.random.default_rng(11)
    data, queries = _unit(rng, 3000), _unit(rng, 30)
    ids = [f"v{i:05d}" for i in range(len(data))]
    truth = np.argsort(-(queries @ data.T), axis=1)[:, :10]
    index = PgVectorIndex(dsn, DIM, schema=schema_for(tmp_path), exact_below=0, pool_size=1)
    try:
        index.upsert(ids, data)

        def recall(ef: int) -> float:
            index.ef_search = ef
            hits = []
            for query, row in zip(queries, truth, strict=True):
                found = {key for key, _ in index.search(query, 10)}
                hits.append(len(found & {ids[j] for j in row}) / 10)
            return float(np.mean(hits))

        low, high = recall(1), recall(1000)
        assert high == 1.0
        assert low < 0.9
        with index._conn() as conn:
            assert conn.execute("SHOW hnsw.ef_search").fetchone()[0] == "40"
    finally:
        index.close()

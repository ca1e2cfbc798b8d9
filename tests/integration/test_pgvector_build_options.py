"""``postgres.hnswM`` / ``postgres.hnswEfConstruction``: validated, used to build the HNSW
index, reported by ``status`` when the index was built with other options, and applied by
``rebuild-embeddings`` (never silently when a project is opened)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from pg_support import require_vector, schema_for
from psycopg import sql
from psycopg.conninfo import make_conninfo

from swarmmem.config import validate
from swarmmem.core.config import PostgresConfig
from swarmmem.core.model.errors import ConfigError
from swarmmem.ports.storage import ListFilter

DIM = 32


def _unit(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _reloptions(dsn: str, schema: str) -> list[str] | None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT c.reloptions FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relname = 'idx_memory_items_vec_hnsw'",
            (schema,),
        ).fetchone()
    return None if row is None else sorted(row[0] or [])


def _config(dsn: str, schema: str, **postgres: Any) -> dict[str, Any]:
    return {
        "enabled": True,
        "provider": "postgres",
        "postgres": {"dsn": dsn, "schema": schema, **postgres},
        "embeddings": {"enabled": True, "provider": "hashing", "dimension": DIM},
    }


@pytest.mark.parametrize(
    ("key", "bad"),
    [
        ("hnswM", 1),
        ("hnswM", 101),
        ("hnswM", 16.5),
        ("hnswM", "16"),
        ("hnswM", True),
        ("hnswM", None),
        ("hnswEfConstruction", 3),
        ("hnswEfConstruction", 1001),
        ("hnswEfConstruction", 100.5),
        ("hnswEfConstruction", "128"),
        ("exactBelow", -1),
        ("exactBelow", 2.5),
        ("exactBelow", "10000"),
    ],
)
def test_bad_values_are_refused(tmp_path: Path, key: str, bad: object) -> None:
    """Only integers in pgvector's ranges are accepted, with a message naming the key."""
    import swarmmem

    config = {"enabled": True, "postgres": {key: bad}}
    with pytest.raises(ConfigError, match=rf"memory\.postgres\.{key} must be an integer"):
        swarmmem.open(tmp_path, config).close()


def test_ef_construction_must_be_at_least_twice_m() -> None:
    """pgvector's rule between the two keys is checked on the merged configuration."""
    with pytest.raises(ConfigError, match=r"hnswEfConstruction must be at least twice"):
        validate({"postgres": {"hnswM": 40, "hnswEfConstruction": 79}})
    with pytest.raises(ConfigError, match=r"got 120 with hnswM 64"):
        validate({"postgres": {"hnswM": 64, "hnswEfConstruction": 120}})
    merged = validate({"postgres": {"hnswM": 40, "hnswEfConstruction": 80}})
    assert (merged["postgres"]["hnswM"], merged["postgres"]["hnswEfConstruction"]) == (40, 80)
    default_m, default_efc = PostgresConfig().hnsw_m, PostgresConfig().hnsw_ef_construction
    assert default_efc >= 2 * default_m


def test_a_bad_value_is_a_cli_usage_error(tmp_path: Path) -> None:
    """The command line refuses the configuration with exit code 2 and the key's name."""
    from click.testing import CliRunner

    from swarmmem.cli import main

    (tmp_path / ".opencode").mkdir()
    (tmp_path / ".opencode" / "opencode-swarm.json").write_text(
        json.dumps({"memory": {"enabled": True, "postgres": {"hnswM": 0}}}), encoding="utf-8"
    )
    result = CliRunner().invoke(main, ["--root", str(tmp_path), "status"])
    assert result.exit_code == 2
    assert "memory.postgres.hnswM must be an integer in [2, 100]" in result.output


@pytest.mark.parametrize(("m", "ef_construction"), [(1, 64), (101, 400), (16, 31), (8, 1001)])
def test_the_index_refuses_options_pgvector_would_refuse(
    tmp_path: Path, m: int, ef_construction: int
) -> None:
    """Built directly, the adapter checks the same ranges before touching the server."""
    from swarmmem.adapters.vectors.pgvector import PgVectorIndex

    with pytest.raises(ConfigError, match=r"memory\.postgres\.hnsw"):
        PgVectorIndex(
            "postgresql://nobody@127.0.0.1:1/none", DIM, m=m, ef_construction=ef_construction
        )


def test_the_configured_options_build_the_index_and_status_agrees(tmp_path: Path) -> None:
    """A new schema gets an HNSW index with the configured m / ef_construction."""
    import swarmmem

    dsn = require_vector()
    schema = schema_for(tmp_path / "s")
    config = _config(dsn, schema, hnswM=8, hnswEfConstruction=40)
    with swarmmem.open(tmp_path, config) as mem:
        parts = mem.runtime.dense_parts()
        assert parts is not None, mem.runtime.dense_unavailable_reason
        assert parts.index.build == (8, 40)
        assert parts.index.built_with() == (8, 40)
        ann = mem.runtime.embeddings.coverage()["ann_index"]
    assert _reloptions(dsn, schema) == ["ef_construction=40", "m=8"]
    assert ann == {
        "kind": "hnsw",
        "m": 8,
        "ef_construction": 40,
        "configured_m": 8,
        "configured_ef_construction": 40,
        "needs_rebuild": False,
    }


def test_other_options_are_reported_and_rebuild_embeddings_applies_them(tmp_path: Path) -> None:
    """An index built without options (pgvector's 16 / 64, as earlier versions made it) is
    left alone when the project opens; status warns and rebuild-embeddings rebuilds it with
    the configured options, after which searches still answer."""
    from click.testing import CliRunner

    import swarmmem
    from swarmmem.cli import main

    dsn = require_vector()
    schema = schema_for(tmp_path / "s")
    with swarmmem.open(tmp_path, _config(dsn, schema)) as mem:
        mem.import_records(
            [{"kind": "repo_convention", "text": f"Convention number {n}."} for n in range(5)]
        )
        assert mem.runtime.dense_parts() is not None
    with psycopg.connect(dsn, autocommit=True) as conn:  # the index as older versions built it
        conn.execute(sql.SQL("SET search_path TO {}, public").format(sql.Identifier(schema)))
        conn.execute("DROP INDEX idx_memory_items_vec_hnsw")
        conn.execute(
            "CREATE INDEX idx_memory_items_vec_hnsw ON memory_items_vec "
            "USING hnsw (embedding vector_cosine_ops)"
        )
    assert _reloptions(dsn, schema) == []
    (tmp_path / ".opencode").mkdir()
    (tmp_path / ".opencode" / "opencode-swarm.json").write_text(
        json.dumps({"memory": _config(dsn, schema, hnswM=12, hnswEfConstruction=48)}),
        encoding="utf-8",
    )

    def run(*args: str) -> Any:
        return CliRunner().invoke(main, ["--root", str(tmp_path), *args], catch_exceptions=False)

    status = json.loads(run("status", "--json").stdout)["embeddings"]
    assert _reloptions(dsn, schema) == []  # opening did not rebuild
    assert status["missing"] == 0 and status["needs_rebuild"] is True
    assert status["ann_index"]["m"] == 16 and status["ann_index"]["ef_construction"] == 64
    assert status["ann_index"]["configured_m"] == 12
    text = run("status").stdout
    assert "Vector index: hnsw m=16 ef_construction=64 (configured m=12 ef_construction=48)" in text
    assert (
        "the vector index was built with other options than configured; run "
        "`swarmmem rebuild-embeddings`"
    ) in text
    rebuilt = json.loads(run("rebuild-embeddings", "--json").stdout)
    assert rebuilt["ann_index"]["rebuilt"] is True
    assert rebuilt["ann_index"]["previous"] == [16, 64]
    assert _reloptions(dsn, schema) == ["ef_construction=48", "m=12"]
    after = json.loads(run("status", "--json").stdout)["embeddings"]
    assert after["needs_rebuild"] is False and after["ann_index"]["m"] == 12
    assert "Warning" not in run("status").stdout
    again = run("rebuild-embeddings")
    assert "vector index was rebuilt" not in again.stdout
    with swarmmem.open(tmp_path) as mem:
        parts = mem.runtime.dense_parts()
        assert parts is not None
        assert parts.index.rebuild_ann_index() == {"rebuilt": False, "m": 12, "ef_construction": 48}
        texts = {r.id: r.text for r in mem.store.list(ListFilter(now=mem.runtime.now()))}
        query = parts.embedder.embed_batch(["convention number 3."])[0]
        best = parts.index.search(query, 5)
        assert len(best) == 5 and texts[best[0][0]] == "Convention number 3."


def test_rebuild_builds_the_graph_in_memory_without_leaking_the_setting(tmp_path: Path) -> None:
    """With a tiny server-side maintenance_work_mem the rebuild raises it for its own
    transaction (no "graph no longer fits" notice), and the pooled connection keeps the
    server's value afterwards; the rebuilt index gives the same answers."""
    from swarmmem.adapters.vectors.pgvector import PgVectorIndex

    dsn = require_vector()
    rng = np.random.default_rng(5)
    data = _unit(rng, 2500, 128)
    ids = [f"v{i:05d}" for i in range(len(data))]
    truth = np.argsort(-(data[:20] @ data.T), axis=1)[:, :5]
    small = make_conninfo(dsn, options="-c maintenance_work_mem=1MB")
    index = PgVectorIndex(
        small, 128, schema=schema_for(tmp_path), exact_below=0, pool_size=1, m=8, ef_construction=32
    )
    index.ef_search = 1000

    def recall() -> float:
        found = [{key for key, _ in index.search(q, 5)} for q in data[:20]]
        hits = [len(f & {ids[j] for j in t}) / 5 for f, t in zip(found, truth, strict=True)]
        return float(np.mean(hits))

    try:
        index.upsert(ids, data)
        notices: list[str] = []
        with index._conn() as conn:
            assert conn.execute("SHOW maintenance_work_mem").fetchone()[0] == "1MB"
            conn.add_notice_handler(lambda d: notices.append(str(d.message_primary)))
        # the same build with the server's own 1 MB spills to disk and says so
        with index._conn() as conn, conn.transaction():
            conn.execute(
                "CREATE INDEX spill ON memory_items_vec USING hnsw (embedding vector_cosine_ops) "
                "WITH (m = 8, ef_construction = 32)"
            )
            conn.execute("DROP INDEX spill")
        assert any("no longer fits into maintenance_work_mem" in n for n in notices)
        notices.clear()
        done = index.rebuild_ann_index(force=True)
        assert done["rebuilt"] is True and done["previous"] == [8, 32]
        assert not [n for n in notices if "maintenance_work_mem" in n]
        with index._conn() as conn:
            assert conn.execute("SHOW maintenance_work_mem").fetchone()[0] == "1MB"
        assert index.built_with() == (8, 32)
        assert "idx_memory_items_vec_hnsw" in index.explain(data[0], 5)
        assert recall() >= 0.95
    finally:
        index.close()


@pytest.mark.parametrize("exact_below", [0, 5, 1_000_000])
def test_exact_below_decides_between_the_scan_and_the_index(
    tmp_path: Path, exact_below: int
) -> None:
    """``postgres.exactBelow`` reaches the index: below it a search scans exactly (the true
    nearest neighbours), from it on the HNSW index serves; 0 always uses the index."""
    import swarmmem

    dsn = require_vector()
    schema = schema_for(tmp_path / "s")
    config = _config(dsn, schema, hnswM=8, hnswEfConstruction=40, exactBelow=exact_below)
    with swarmmem.open(tmp_path, config) as mem:
        parts = mem.runtime.dense_parts()
        assert parts is not None, mem.runtime.dense_unavailable_reason
        index = parts.index
        assert index.exact_below == exact_below
        rng = np.random.default_rng(3)
        vectors = _unit(rng, 40)
        index.upsert([f"mem_{i:04d}" for i in range(40)], vectors)
        with index._conn() as conn:
            assert index._is_small(conn) is (exact_below > 40)
        query = _unit(rng, 1)[0]
        hits = index.search(query, 5)
        truth = np.argsort(-(vectors @ query))[:5]
        if exact_below > 40:
            assert [h[0] for h in hits] == [f"mem_{i:04d}" for i in truth]
        assert len(hits) == 5

"""The PostgreSQL provider on a real server: migrations, tsvector pre-selection, pgvector kNN,
the audit chain under concurrent writer processes, curator atomicity, NOTIFY-invalidated
caches and DSN secrecy. The server comes from ``pg_support`` (SWARMMEM_PG_DSN or pgserver)."""

from __future__ import annotations

import contextlib
import json
import logging
import multiprocessing
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest
from factories import (
    OTHER_SCOPE,
    REPO_SCOPE,
    at,
    curate_fact,
    make_memory,
    make_proposal,
    open_store,
    outcome_event,
    select_candidates,
    wait_for,
)
from pg_support import chain_writer, require_dsn, require_vector, schema_for

from swarmmem.adapters.storage.base import Preselection
from swarmmem.core.model.codec import record_to_dict
from swarmmem.core.model.errors import StorageError
from swarmmem.core.model.records import CuratorDecision, MemoryScope, MemorySource
from swarmmem.core.recall.bm25 import stemmed_query
from swarmmem.core.recall.fts import build_fts_query
from swarmmem.core.writes.curator import apply_decision
from swarmmem.ports.storage import ListFilter

NOW = at(days=1)


class _Boom(RuntimeError):
    """An injected failure."""


@pytest.fixture
def dsn() -> str:
    """The test server's DSN (skips when there is none)."""
    return require_dsn()


@pytest.fixture
def pg(dsn: str, tmp_path: Path) -> Iterator[Any]:
    """A fresh PostgresStore in a schema of its own."""
    store = open_store("postgres", tmp_path)
    yield store
    store.close()


def candidates(
    store: Any,
    query: str,
    *,
    scopes: Any = (REPO_SCOPE,),
    mode: str = "manual",
    kinds: Any = None,
    max_items: int = 5,
) -> Any:
    return store.select_candidates(
        scope_keys=[s.key for s in scopes],
        kinds=kinds,
        fts_query=build_fts_query(query, None, mode),
        preselect_limit=max(100, max_items * 20),
        scope_when_unmatched=mode == "manual",
        now=NOW,
        include_expired=False,
        candidate_cap=1000,
    )


def raw(store: Any, statement: str, params: Any = ()) -> list[Any]:
    with store.db.connection() as conn:
        return list(conn.execute(statement, params).fetchall())


CORPUS = [
    ("Tests run with pytest from the repository root", "project_fact", ("testing",)),
    ("Use ruff format before every commit; ruff check runs in CI", "repo_convention", ("lint",)),
    ("The API handlers live in src/app/main.py and src/app/routes.py", "project_fact", ()),
    ("repo_convention: never commit generated protobuf files", "repo_convention", ()),
    ("Deploys go through the staging cluster first, then production", "project_fact", ("ops",)),
    ("Café au lait rules: résumé parsing lives in the naïve module", "project_fact", ()),
    ("pytest fixtures live in tests/conftest.py; pytest markers are strict", "test_pattern", ()),
    ("Pin numpy below 3 until the Cython kernels are rebuilt", "architecture_decision", ()),
]


def seed(store: Any) -> list[Any]:
    out = []
    for minute, (text, kind, tags) in enumerate(CORPUS):
        out.append(store.upsert(make_memory(text, kind=kind, tags=tags, updated_at=at(minute))))
    store.upsert(make_memory("pytest in another repository", scope=OTHER_SCOPE))
    gone = store.upsert(make_memory("pytest tombstoned note", updated_at=at(30)))
    store.delete(gone.id, reason="obsolete", now=at(31))
    return out


# --------------------------------------------------------------------------- migrations


def test_fresh_schema_gets_the_sqlite_migration_rows_and_a_verified_chain(pg: Any) -> None:
    """Versions and names equal SQLite's (v2 is SQLite's legacy marker), each audited once."""
    from swarmmem.adapters.storage.sqlite import MIGRATIONS as SQLITE

    rows = raw(pg, "SELECT version, name FROM schema_migrations ORDER BY version")
    assert rows == [(v, n) for v, n, _ in SQLITE]
    migrations = [e.target_id for e in pg.list_events() if e.operation == "migration"]
    assert migrations == [str(v) for v, _, _ in SQLITE] + ["13"]
    report = pg.verify_audit_chain()
    assert report["verified"] and report["chainedRows"] == report["totalRows"] == len(SQLITE) + 1


def test_reopening_runs_nothing_again(pg: Any, tmp_path: Path) -> None:
    """A second open of a migrated schema adds no migration row and no event."""
    before = pg.list_events()
    pg.close()
    again = open_store("postgres", tmp_path)
    try:
        assert again.list_events() == before
        assert raw(again, "SELECT count(*) FROM schema_migrations")[0][0] == 18
    finally:
        again.close()


def test_an_older_schema_is_upgraded_in_place(dsn: str, tmp_path: Path) -> None:
    """A schema left at v9 with data gains v10..v15, keeps its rows and chains its log."""
    import psycopg
    from psycopg import sql

    from swarmmem.adapters.storage.postgres.migrations import MIGRATIONS

    schema = schema_for(tmp_path)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        conn.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "applied_at TEXT NOT NULL DEFAULT '')"
        )
        for version, name, statements in MIGRATIONS:
            if version > 9:
                break
            for statement in statements:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                (version, name),
            )
        record = make_memory("legacy row from an older writer")
        conn.execute(
            "INSERT INTO memory_items (id, scope_key, kind, updated_at, record_json) "
            "VALUES (%s, %s, %s, %s, %s)",
            (
                record.id,
                "stale-key",
                record.kind,
                record.updated_at,
                json.dumps(record_to_dict(record)),
            ),
        )
        conn.execute(
            "INSERT INTO memory_events (id, operation, target_id, timestamp) "
            "VALUES ('ev-old', 'upsert', %s, %s)",
            (record.id, record.updated_at),
        )
    store = open_store("postgres", tmp_path)
    try:
        versions = [r[0] for r in raw(store, "SELECT version FROM schema_migrations")]
        assert sorted(versions) == [1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]
        got = store.get(record.id)
        assert got.text == record.text and got.valid_from == record.created_at
        assert raw(store, "SELECT scope_key FROM memory_items")[0][0] == record.scope.key
        events = store.list_events()
        assert events[0].id == "ev-old" and events[0].prev_hash == "GENESIS"
        assert [e.target_id for e in events if e.operation == "migration"] == [
            "10",
            "11",
            "12",
            "13",
            "14",
            "15",
            "16",
            "17",
            "18",
            "19",
            "13",
        ]
        assert store.verify_audit_chain()["verified"]
        assert [r.id for r in candidates(store, "older writer").records] == [record.id]
    finally:
        store.close()


def test_a_v16_schema_gains_per_role_chains_and_scope_totals(pg: Any, tmp_path: Path) -> None:
    """v17 on a chained v16 schema: the chain head moves from ``_meta`` to the upgrading
    role's row, every earlier event joins that role's chain (which still verifies), and the
    single-row full-text totals become one row per scope key."""
    records = seed(pg)
    pg.delete(records[0].id, reason="gone", now=at(60))
    assert pg.verify_audit_chain()["verified"]
    events = len(pg.list_events())
    downgrade = (  # the v16 shape, as an older swarmmem left it
        "INSERT INTO _meta (key, value) SELECT 'memory_events_chain_head', head "
        "FROM memory_audit_chains WHERE chain_id = current_user",
        "DROP TABLE memory_audit_chains",
        "ALTER TABLE memory_events DROP COLUMN chain_id",
        "DROP TABLE memory_fts_stats",
        "CREATE TABLE memory_fts_stats (id INTEGER PRIMARY KEY CHECK (id = 1), "
        "row_count BIGINT NOT NULL, token_count BIGINT NOT NULL)",
        "INSERT INTO memory_fts_stats SELECT 1, count(*), sum(fts_len) FROM memory_items",
        "ALTER TABLE memory_items DROP COLUMN text_terms",
        "DELETE FROM _meta WHERE key = 'text_terms_backfilled'",
        "DELETE FROM schema_migrations WHERE version >= 17",
    )
    with pg.db.connection() as conn:
        for statement in downgrade:
            conn.execute(statement)
    pg.close()
    store = open_store("postgres", tmp_path)
    try:
        assert raw(store, "SELECT count(*) FROM _meta WHERE key LIKE 'memory_events_%%'") == [(0,)]
        report = store.verify_audit_chain()
        assert report["verified"] and report["totalRows"] == events + 3  # + the v17 to v19 rows
        totals = raw(store, "SELECT scope_key, row_count, token_count FROM memory_fts_stats")
        recount = raw(
            store,
            "SELECT scope_key, count(*), sum(fts_len) FROM memory_items GROUP BY scope_key",
        )
        assert sorted(map(tuple, totals)) == sorted(map(tuple, recount))
        assert candidates(store, "pytest").records
        store.upsert(make_memory("written after the upgrade"))
        assert store.verify_audit_chain()["verified"]
    finally:
        store.close()


def test_refuses_a_schema_of_a_newer_release(pg: Any, tmp_path: Path) -> None:
    """A schema newer than this release knows is refused with what to do."""
    with pg.db.connection() as conn:
        conn.execute("INSERT INTO schema_migrations (version, name) VALUES (99, 'future')")
    pg.close()
    with pytest.raises(StorageError, match=r"v99, newer than the v\d+ .*upgrade swarmmem"):
        open_store("postgres", tmp_path)


# --------------------------------------------------------------------------- full text


def test_bm25_preselection_matches_sqlite_order_exactly(pg: Any, tmp_path: Path) -> None:
    """tsvector + the recomputed bm25 give FTS5's candidate order, on several queries."""
    sqlite = open_store("sqlite", tmp_path / "sqlite")
    try:
        seed(pg)
        seed(sqlite)
        for query in (
            "how are tests run with pytest",
            "ruff format commit",
            "where is main.py in src/app",
            "repo_convention generated files",
            "resume parsing cafe",
            "numpy cython kernels pytest fixtures",
        ):
            for scopes in ((REPO_SCOPE,), (OTHER_SCOPE, REPO_SCOPE)):
                mine = candidates(pg, query, scopes=scopes)
                theirs = candidates(sqlite, query, scopes=scopes)
                assert mine.fts_order == theirs.fts_order, query
                assert [r.id for r in mine.records] == [r.id for r in theirs.records], query
    finally:
        sqlite.close()


def test_preselection_is_scoped_and_falls_back_like_sqlite(pg: Any) -> None:
    """Other scopes and tombstones never match; no hit means all scoped (manual) or none."""
    seed(pg)
    found = candidates(pg, "pytest")
    texts = {r.text for r in found.records}
    assert "pytest in another repository" not in texts and "pytest tombstoned note" not in texts
    assert len(found.fts_order) == 2
    none = candidates(pg, "kubernetes helm chart")
    assert none.fts_order is None and len(none.records) == len(CORPUS)
    assert candidates(pg, "kubernetes helm chart", mode="injection").records == ()
    kinds = candidates(pg, "pytest", kinds=["test_pattern"])
    assert [r.kind for r in kinds.records] == ["test_pattern"]


def _stemmed(
    store: Any, query: str, *, scopes: Any = (REPO_SCOPE,), unmatched: bool = False
) -> Any:
    return store.select_candidates(
        scope_keys=[s.key for s in scopes],
        kinds=None,
        fts_query=stemmed_query(query, None, "manual"),
        preselect_limit=100,
        scope_when_unmatched=unmatched,
        now=NOW,
        include_expired=False,
        candidate_cap=1000,
        cap_before_preselect=False,
        stemmed=True,
    )


def test_stemmed_preselection_reads_only_matching_rows_and_agrees_with_sqlite(
    pg: Any, tmp_path: Path
) -> None:
    """Without a cap on the scope the stemmed statement reads the rows its ``tsquery``
    matches (the GIN index finds them), not the whole scope; candidates, scores and held
    terms are SQLite's, and a question matching nothing still tells an empty scope from a
    scope without matches."""
    sqlite = open_store("sqlite", tmp_path / "sqlite")
    try:
        seed(pg)
        seed(sqlite)
        flt = ListFilter(now=NOW, scope_keys=(REPO_SCOPE.key,))
        with pg.db.connection() as conn:
            want = Preselection(
                flt, stemmed_query("pytest runs", None, "manual"), 100, False, stemmed=True
            )
            hits = pg.fts.search(conn, want, cached=False)
        assert hits is not None and sorted(hits.scoped) == sorted(hits.ranked)
        assert 0 < len(hits.scoped) < len(CORPUS)
        for query in ("how are tests run with pytest", "ruff formatting commits", "deploying"):
            for scopes in ((REPO_SCOPE,), (OTHER_SCOPE, REPO_SCOPE)):
                mine, theirs = (
                    _stemmed(pg, query, scopes=scopes),
                    _stemmed(sqlite, query, scopes=scopes),
                )
                assert sorted(r.id for r in mine.rows) == sorted(r.id for r in theirs.rows)
                assert mine.fts_scores == pytest.approx(theirs.fts_scores), query
                assert mine.held_terms == theirs.held_terms, query
        assert _stemmed(pg, "kubernetes helm chart").records == ()
        listed = _stemmed(pg, "kubernetes helm chart", unmatched=True)
        assert len(listed.records) == len(CORPUS)  # the scope is listed (the manual fallback)
        empty = MemoryScope(type="repository", repo_id="nothing-here")
        assert _stemmed(pg, "kubernetes helm chart", scopes=(empty,), unmatched=True).records == ()
    finally:
        sqlite.close()


def test_one_pooled_connection_is_enough_for_every_path(dsn: str, tmp_path: Path) -> None:
    """pool_size=1: recall with hits, the no-hit fallback and reads never wait on themselves."""
    from swarmmem.adapters.storage.postgres import PostgresStore

    store = PostgresStore(dsn, schema=schema_for(tmp_path), pool_size=1, connect_timeout=3)
    try:
        seed(store)
        assert len(candidates(store, "kubernetes helm").records) == len(CORPUS)
        assert len(candidates(store, "pytest").fts_order) == 2
        assert len(list(store.iter_all_records())) == len(CORPUS) + 2
    finally:
        store.close()


def test_phrases_tokens_and_the_gin_index(pg: Any) -> None:
    """An underscore term is a phrase, paths split into words, accents fold, GIN serves @@."""
    seed(pg)
    assert len(candidates(pg, "repo_convention").fts_order) == 2  # both repo_convention kinds
    assert any("routes.py" in r.text for r in candidates(pg, "routes").records)
    assert any("résumé" in r.text for r in candidates(pg, "resume").records)
    with pg.db.connection() as conn, conn.transaction():
        conn.execute("SET LOCAL enable_seqscan = off")
        plan = conn.execute(
            "EXPLAIN SELECT count(*) FROM memory_items WHERE fts @@ 'pytest'::tsquery"
        ).fetchall()
    assert "idx_memory_items_fts" in "\n".join(r[0] for r in plan)


def test_ts_rank_cd_is_available_as_a_documented_alternative(dsn: str, tmp_path: Path) -> None:
    """fts_rank='ts_rank_cd' selects the same hit set, ordered by cover density."""
    from swarmmem.adapters.storage.postgres import PostgresStore

    store = PostgresStore(dsn, schema=schema_for(tmp_path), fts_rank="ts_rank_cd")
    try:
        seed(store)
        got = candidates(store, "pytest fixtures")
        assert set(got.fts_order) == {r.id for r in got.records}
        assert sorted(got.fts_order.values()) == [0, 1]
        first = min(got.fts_order, key=got.fts_order.__getitem__)
        assert "fixtures" in store.get(first).text
    finally:
        store.close()


def test_fts_statistics_stay_exact_through_rewrites_and_deletes(pg: Any) -> None:
    """The row/token totals of each scope key equal a recount after upserts, rewrites, a move
    to another scope, deletes and rolled-back blocks."""
    records = seed(pg)
    pg.upsert(attrs.evolve(records[0], text="a much longer text now " * 5, updated_at=at(50)))
    pg.delete(records[1].id, reason="gone", now=at(51), hard=True)
    moved = MemoryScope(type="repository", repo_id="elsewhere")
    pg.upsert(attrs.evolve(records[3], scope=moved, updated_at=at(53)))  # totals move along
    with pytest.raises(_Boom), pg.transaction():
        pg.upsert(make_memory("rolled back with its whole transaction"))
        raise _Boom
    with pg.transaction():
        pg.upsert(make_memory("kept: the outer block commits"))
        with contextlib.suppress(_Boom), pg.transaction():
            pg.upsert(make_memory("rolled back with its savepoint only"))
            pg.delete(records[2].id, reason="undone", now=at(52), hard=True)
            raise _Boom
    assert pg.count() == len(CORPUS) + 2
    assert pg.verify_audit_chain()["verified"]
    kept = raw(pg, "SELECT scope_key, row_count, token_count FROM memory_fts_stats")
    recount = raw(
        pg,
        "SELECT scope_key, count(*), COALESCE(sum(fts_len), 0) FROM memory_items "
        "GROUP BY scope_key",
    )
    assert sorted(map(tuple, kept)) == sorted(map(tuple, recount))


# --------------------------------------------------------------------------- pgvector


def _unit(rng: Any, n: int, dim: int) -> Any:
    v = rng.normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.mark.parametrize("exact_below", [10_000, 0], ids=["exact", "hnsw"])
def test_knn_is_scoped_exactly_like_the_lexical_candidates(
    pg: Any, tmp_path: Path, exact_below: int
) -> None:
    """search_scoped returns the numpy top-k over exactly the records select_candidates
    would consider (scope, kind, active, unexpired), whether exact or through HNSW."""
    from swarmmem.adapters.vectors.local import NumpyVectorIndex
    from swarmmem.adapters.vectors.pgvector import PgVectorIndex

    dsn = require_vector()
    rng = np.random.default_rng(7)
    records = []
    for i in range(40):
        scope = REPO_SCOPE if i % 3 else OTHER_SCOPE
        kind = "scratch" if i % 7 == 0 else ("project_fact" if i % 2 else "repo_convention")
        created = at(days=-30) if i % 14 == 0 else at(i)
        record = make_memory(f"memory number {i}", kind=kind, scope=scope, created_at=created)
        if i % 5 == 0:
            record = attrs.evolve(record, superseded_by="mem_ffffffffffffffff")
        records.append(pg.upsert(record))
    pg.delete(records[4].id, reason="gone", now=at(60))
    vectors = _unit(rng, len(records), 16)
    ids = [r.id for r in records]
    index = PgVectorIndex(dsn, 16, schema=schema_for(tmp_path), exact_below=exact_below)
    try:
        index.upsert(ids, vectors)
        for kinds in (None, ["project_fact"]):
            allowed = {r.id for r in select_candidates(pg, now=NOW, kinds=kinds).records}
            reference = NumpyVectorIndex(16)
            keep = [i for i, key in enumerate(ids) if key in allowed]
            reference.upsert([ids[i] for i in keep], vectors[keep])
            query = _unit(rng, 1, 16)[0]
            got = index.search_scoped(query, 8, scope_keys=[REPO_SCOPE.key], kinds=kinds, now=NOW)
            want = reference.search(query, 8)
            assert [g[0] for g in got] == [w[0] for w in want]
            assert [g[1] for g in got] == pytest.approx([w[1] for w in want], abs=1e-6)
        plain = index.search(vectors[0], 3)
        assert plain[0][0] == ids[0] and plain[0][1] == pytest.approx(1.0, abs=1e-6)
        if exact_below == 0:
            assert "idx_memory_items_vec_hnsw" in index.explain(vectors[0], 3)
        assert index.seed_model_version("v1") == "v1" == index.seed_model_version("v2")
        index.set_model_version("v2")
        assert index.stored_model_version() == "v2"
        index.delete(ids[:10])
        assert len(index.ids()) == 30
    finally:
        index.close()


def test_hybrid_recall_through_the_facade_uses_pgvector(dsn: str, tmp_path: Path) -> None:
    """provider postgres + hashing embeddings: dense parts come from PgVectorIndex."""
    import swarmmem

    require_vector()
    config = {
        "enabled": True,
        "provider": "postgres",
        "postgres": {"dsn": dsn, "schema": schema_for(tmp_path / "facade")},
        "embeddings": {"enabled": True, "provider": "hashing", "dimension": 64},
    }
    with swarmmem.open(tmp_path, config) as mem:
        curate_fact(
            mem, "Use ruff for lint and format.", kind="repo_convention", rationale="house style"
        )
        parts = mem.runtime.dense_parts()
        assert type(parts.index).__name__ == "PgVectorIndex", mem.runtime.dense_unavailable_reason
        assert len(parts.index.ids()) == 1
        bundle = mem.recall("how do we lint", profile="hybrid")
        assert [it.record.text for it in bundle.items] == ["Use ruff for lint and format."]


# --------------------------------------------------------------------------- audit chain


@pytest.mark.slow
def test_four_writer_processes_never_fork_the_chain(pg: Any, dsn: str, tmp_path: Path) -> None:
    """Four processes writing at once: one unbroken chain, every prev_hash used once."""
    ctx = multiprocessing.get_context("spawn")
    per_worker = 15
    before = len(pg.list_events())
    workers = [
        ctx.Process(target=chain_writer, args=(dsn, schema_for(tmp_path), w, per_worker))
        for w in range(4)
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
    assert [w.exitcode for w in workers] == [0, 0, 0, 0]
    events = pg.list_events()
    assert len(events) == before + 4 * per_worker * 2
    prev = [e.prev_hash for e in events]
    assert len(set(prev)) == len(prev)
    report = pg.verify_audit_chain()
    assert report["verified"] and report["headMatch"], report
    assert pg.count() == 4 * per_worker
    writers = {e.target_id.split("-")[0] for e in events if e.operation == "note"}
    assert writers == {"w0", "w1", "w2", "w3"}


def test_a_tampered_row_is_reported(pg: Any) -> None:
    """Editing an event after the fact breaks verification at that row."""
    pg.upsert(make_memory())
    target = pg.list_events()[-1]
    with pg.db.connection() as conn:
        conn.execute("UPDATE memory_events SET reason = 'edited' WHERE id = %s", (target.id,))
    report = pg.verify_audit_chain()
    assert report["verified"] is False and report["headMatch"] is False


# --------------------------------------------------------------------------- curator


def test_a_curator_decision_commits_whole_or_not_at_all(pg: Any, tmp_path: Path) -> None:
    """A supersede that fails at its last write leaves nothing behind; while it runs, another
    instance sees none of its writes; the same decision then commits as a whole."""
    old = pg.upsert(make_memory("The formatter is black"))
    replacement = make_memory(
        "The formatter is ruff", source=MemorySource(type="file", file_path="pyproject.toml")
    )
    proposal = make_proposal(operation="supersede", record=replacement, target=old.id)
    pg.create_proposal(proposal)
    other = open_store("postgres", tmp_path)
    events_before = pg.list_events()
    seen: dict[str, Any] = {}
    real_append = pg.append_event

    def failing_append(operation: str, target_id: str, **kwargs: Any) -> None:
        if operation == "curator_decision":
            seen["replacement"] = other.get(replacement.id)
            seen["old_superseded_by"] = other.get(old.id).superseded_by
            raise _Boom("crash before the decision event")
        real_append(operation, target_id, **kwargs)

    decision = CuratorDecision(
        action="supersede",
        proposal_id=proposal.id,
        reason="switched",
        old_memory_id=old.id,
        replacement=replacement,
    )
    try:
        pg.append_event = failing_append
        with pytest.raises(_Boom):
            apply_decision(pg, decision, now=NOW, secrets=None)
        assert seen == {"replacement": None, "old_superseded_by": None}
        assert pg.get(replacement.id) is None and pg.get(old.id).superseded_by is None
        assert pg.get_proposal(proposal.id).status == "pending"
        assert pg.list_events() == events_before
        pg.append_event = real_append
        apply_decision(pg, decision, now=NOW, secrets=None)
        assert other.get(old.id).superseded_by == replacement.id
        assert other.get_proposal(proposal.id).status == "applied"
        assert pg.verify_audit_chain()["verified"]
    finally:
        other.close()


# --------------------------------------------------------------------------- caches


def test_notify_invalidates_another_instances_caches(pg: Any, tmp_path: Path) -> None:
    """B's outcome and merge reach A's cached views through NOTIFY; without draining the
    notifications A would keep serving the stale view."""
    a, b = pg, open_store("postgres", tmp_path)
    try:
        record = a.upsert(make_memory(metadata={"outcomeGeneration": "g1"}))
        twin = a.upsert(make_memory("Tests also run with tox"))
        assert a.get(record.id).outcomes is None  # the view is now cached in A
        assert a.cache_info()["views"] >= 1
        b.append_outcome(outcome_event("ev-1", record.id, "g1", at=at(3)))
        a.db.before_read = None  # stop draining: the cached view is stale
        try:
            time.sleep(0.05)
            assert a.get(record.id).outcomes is None
        finally:
            a.db.before_read = a.caches.sync
        assert wait_for(lambda: a.get(record.id).outcomes is not None)
        assert [o.outcome for o in a.get(record.id).outcomes] == ["useful"]
        assert a.related_ids(record.id) == []
        b.create_proposal(
            make_proposal(operation="merge", related=[record.id, twin.id], status="applied")
        )
        assert wait_for(lambda: a.related_ids(record.id) == [twin.id])
        assert a.cache_info()["notifications"] >= 2
    finally:
        b.close()


def test_record_cache_is_validated_by_row_version(pg: Any, tmp_path: Path) -> None:
    """A rewrite by another instance is visible at once, notification or not."""
    a, b = pg, open_store("postgres", tmp_path)
    try:
        record = a.upsert(make_memory())
        assert a.get(record.id).confidence == 0.8
        a.db.before_read = None
        b.upsert(attrs.evolve(record, confidence=0.3, updated_at=at(2)))
        assert a.list(ListFilter(now=NOW))[0].confidence == 0.3
    finally:
        b.close()


def test_fts_statistics_follow_another_instances_writes(pg: Any, tmp_path: Path) -> None:
    """Cached bm25 statistics are dropped when B adds rows, so A ranks like SQLite again."""
    a, b = pg, open_store("postgres", tmp_path)
    sqlite = open_store("sqlite", tmp_path / "sqlite")
    try:
        for store in (a, sqlite):
            seed(store)
        # statistics are cached once the invalidation listener is connected
        assert wait_for(lambda: candidates(a, "pytest ruff") and a.cache_info()["fts_stats"])
        for i in range(6):
            extra = make_memory(f"ruff note {i}", updated_at=at(40 + i))
            b.upsert(extra)
            sqlite.upsert(extra)
        assert wait_for(lambda: not a.cache_info()["fts_stats"])
        assert candidates(a, "pytest ruff").fts_order == candidates(sqlite, "pytest ruff").fts_order
    finally:
        b.close()
        sqlite.close()


# --------------------------------------------------------------------------- secrets


def test_the_dsn_password_never_appears(dsn: str, tmp_path: Path, caplog: Any) -> None:
    """Not in repr, the pool's connection string, error messages or any log record."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from swarmmem.adapters.storage.postgres import PostgresStore

    secret = "Pa55-word-never-shown-7731"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS swarm_secret_tester")
        conn.execute(f"CREATE ROLE swarm_secret_tester LOGIN SUPERUSER PASSWORD '{secret}'")
    params = conninfo_to_dict(dsn)
    params.update(user="swarm_secret_tester", password=secret)
    with_password = make_conninfo("", **params)
    caplog.set_level(logging.DEBUG)
    store = PostgresStore(with_password, schema=schema_for(tmp_path))
    messages = [repr(store), store.db._pool.conninfo]
    try:
        store.upsert(make_memory())
        assert store.count() == 1
    finally:
        store.close()
    with pytest.raises(StorageError) as closed:
        store.count()
    messages.append(str(closed.value))
    params.update(dbname="no_such_database_here")
    with pytest.raises(StorageError) as missing:
        PostgresStore(make_conninfo("", **params))
    messages.append(str(missing.value))
    assert "no_such_database_here" in messages[-1]
    uri = f"postgresql://swarm_secret_tester:{secret}@/no_such_database_here"
    with pytest.raises(StorageError) as bad_uri:
        PostgresStore(uri + "?host=" + str(conninfo_to_dict(dsn).get("host", "localhost")))
    messages.append(str(bad_uri.value))
    messages.extend(r.getMessage() for r in caplog.records)
    assert not [m for m in messages if secret in m]


# --------------------------------------------------------------------------- golden fixtures

SHARED_FIXTURES = (
    Path(__file__).resolve().parents[2].parent / "shared" / "spec" / "upstream-fixtures"
) / "memory-recall"
FIXTURE_SETS = [
    pytest.param(None, id="bundled"),
    pytest.param(
        SHARED_FIXTURES,
        id="upstream",
        marks=pytest.mark.skipif(
            not SHARED_FIXTURES.is_dir(), reason="../shared/spec is not available"
        ),
    ),
]


@pytest.mark.parametrize("directory", FIXTURE_SETS)
def test_golden_fixtures_rank_exactly_like_sqlite(
    dsn: str, tmp_path: Path, directory: Path | None
) -> None:
    """The evaluator over sqlite and postgres: every run retrieves the same ids with the same
    scores (so the same pass count), because the bm25 rank is FTS5's."""
    import itertools

    from swarmmem import fixtures as bundled
    from swarmmem.adapters.detectors.regex_secrets import RegexSecretDetector
    from swarmmem.adapters.storage.postgres import PostgresStore
    from swarmmem.adapters.storage.sqlite import SqliteStore
    from swarmmem.core.evaluation.metrics import evaluate_fixtures
    from swarmmem.evaluation import lexical_recall_fn, load_fixtures

    fixtures = load_fixtures(directory or bundled.RECALL_FIXTURES, secrets=RegexSecretDetector())
    counter = itertools.count()

    def factory(provider: str) -> Any:
        folder = tmp_path / f"{provider}-{next(counter)}"
        if provider == "sqlite":
            return SqliteStore(folder / "memory.db")
        return PostgresStore(dsn, schema=schema_for(folder), pool_size=1)

    report = evaluate_fixtures(
        fixtures, factory, lexical_recall_fn, now=at(days=330), providers=("sqlite", "postgres")
    )
    runs: dict[str, dict[Any, Any]] = {}
    for run in report["runs"]:
        runs.setdefault(run["provider"], {})[(run["fixture"], run["mode"])] = run
    assert len(runs["postgres"]) == len(runs["sqlite"]) == 3 * len(fixtures)
    for key, theirs in runs["sqlite"].items():
        mine = runs["postgres"][key]
        assert (mine["retrieved_ids"], mine["scores"], mine["passed"]) == (
            theirs["retrieved_ids"],
            theirs["scores"],
            theirs["passed"],
        ), key


# --------------------------------------------------------------------------- wiring


def test_the_registry_names_the_extra_when_psycopg_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without psycopg the postgres adapter asks for pip install 'swarmmem[postgres]'."""
    import sys

    from swarmmem.core.model.errors import MissingDependencyError
    from swarmmem.registry import resolve

    for name in [m for m in sys.modules if m == "psycopg" or m.startswith("psycopg.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.delitem(sys.modules, "swarmmem.adapters.storage.postgres", raising=False)
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(MissingDependencyError, match=r"swarmmem\[postgres\]"):
        resolve("store", "postgres")


def test_the_facade_reads_the_dsn_from_config_or_environment(
    dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """postgres.dsn null falls back to SWARMMEM_PG_DSN; with neither, a ConfigError."""
    import swarmmem
    from swarmmem.core.model.errors import ConfigError

    schema = schema_for(tmp_path / "env")
    config = {"enabled": True, "provider": "postgres", "postgres": {"schema": schema}}
    monkeypatch.delenv("SWARMMEM_PG_DSN", raising=False)
    with swarmmem.open(tmp_path, config) as mem, pytest.raises(ConfigError, match="dsn"):
        _ = mem.store
    monkeypatch.setenv("SWARMMEM_PG_DSN", dsn)
    config["postgres"]["poolSize"] = 1
    with swarmmem.open(tmp_path, config) as mem:
        assert mem.store.name == "postgres" and mem.store.pool_size == 1
        assert mem.store.schema_name == schema

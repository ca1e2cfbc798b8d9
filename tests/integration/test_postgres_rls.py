"""PostgreSQL row-level security: a project's role sees and changes only its own scopes.

Two login roles share one schema (on the pgserver test server). After the admin applies the
policies and grants each role the scope keys of its repository, role A cannot read, update,
delete or insert role B's memories, proposals, recall usage or outcomes, through the store or
with raw SQL, and cannot widen its own grants (the mapping table is the admin's; a session
setting changes nothing).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from click.testing import CliRunner
from factories import make_memory, make_proposal, outcome_event, recall_row
from pg_support import login_roles, require_dsn

from swarmmem.cli import main
from swarmmem.core.model.errors import StorageError
from swarmmem.core.model.records import MemoryScope

psycopg = pytest.importorskip("psycopg")

from swarmmem.adapters.storage.postgres import PostgresStore  # noqa: E402
from swarmmem.adapters.storage.postgres.rls import row_level_security  # noqa: E402

SCOPE_A = MemoryScope(type="repository", repo_id="a1a1a1a1a1a1a1a1")
SCOPE_B = MemoryScope(type="repository", repo_id="b2b2b2b2b2b2b2b2")


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A migrated schema owned by the admin and two fresh login roles (dropped afterwards)."""
    admin = require_dsn()
    with login_roles(admin, tmp_path, "a", "b") as (schema, roles, dsn):
        yield {"admin": admin, "schema": schema, "roles": roles, "dsn": dsn}


def secured(cluster: dict[str, Any]) -> None:
    for name, scope in (("a", SCOPE_A), ("b", SCOPE_B)):
        result = row_level_security(
            cluster["admin"], cluster["schema"], cluster["roles"][name], [scope.key], apply=True
        )
        assert result["applied"] is True


def store_of(cluster: dict[str, Any], name: str) -> Any:
    return PostgresStore(cluster["dsn"][name], schema=cluster["schema"], pool_size=1, cache=False)


def raw(cluster: dict[str, Any], name: str) -> Any:
    conn = psycopg.connect(cluster["dsn"][name], autocommit=True)
    conn.execute(f'SET search_path TO "{cluster["schema"]}"')
    return conn


def seed(store: Any, scope: MemoryScope, label: str) -> Any:
    record = make_memory(f"{label} deploys from the main branch", scope=scope)
    store.upsert(record)
    store.create_proposal(make_proposal(record=make_memory(f"{label} lints", scope=scope)))
    usage = recall_row([record.id], bundle_id=f"bundle_{label}", session_id=f"s-{label}")
    store.record_recall_usage(attrs.evolve(usage, scopes=(scope,)))
    store.append_outcome(outcome_event(f"evt-{label}", record.id, "g1"))
    return record


def test_each_role_sees_and_changes_only_its_own_scopes(cluster: dict[str, Any]) -> None:
    secured(cluster)
    with store_of(cluster, "a") as a, store_of(cluster, "b") as b:
        mine = seed(a, SCOPE_A, "alpha")
        theirs = seed(b, SCOPE_B, "beta")
        # through the store: every read is limited to the role's scopes
        assert [r.id for r in a.iter_all_records()] == [mine.id]
        assert a.get(theirs.id) is None and b.get(mine.id) is None
        assert len(a.list_proposals()) == 1 and len(b.list_proposals()) == 1
        assert [u.bundle_id for u in a.list_recall_usage()] == ["bundle_alpha"]
        assert [e.id for e in a.list_outcomes()] == ["evt-alpha"]
        # overwriting the other role's memory fails (its row is not updatable by this role)
        with pytest.raises(StorageError):
            a.upsert(make_memory("beta deploys from the main branch", scope=SCOPE_B))
    with raw(cluster, "a") as conn:
        # raw SQL: nothing of B can be read ...
        for table in ("memory_items", "memory_proposals", "memory_recall_usage", "memory_outcomes"):
            assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 1, table
        assert conn.execute("SELECT id FROM memory_items").fetchone()[0] == mine.id
        # ... changed or deleted ...
        updated = conn.execute(
            "UPDATE memory_items SET record_json = '{}' WHERE id = %s", (theirs.id,)
        )
        assert updated.rowcount == 0
        assert conn.execute("DELETE FROM memory_items WHERE id = %s", (theirs.id,)).rowcount == 0
        assert conn.execute("DELETE FROM memory_outcomes WHERE id = 'evt-beta'").rowcount == 0
        assert conn.execute("DELETE FROM memory_proposals WHERE id <> ''").rowcount == 1
        # ... or written into B's scope, by insert or by moving an own row there
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO memory_items (id, scope_key, kind, updated_at, record_json) "
                "VALUES ('mem_0000000000000000', %s, 'project_fact', 'x', '{}')",
                (SCOPE_B.key,),
            )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE memory_items SET scope_key = %s", (SCOPE_B.key,))
        # the role cannot widen its grants: the mapping table is the admin's ...
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO swarmmem_role_scopes VALUES (current_user, %s)", (SCOPE_B.key,)
            )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE swarmmem_role_scopes SET scope_key = %s", (SCOPE_B.key,))
        # ... it sees only its own grant, and a session setting changes nothing
        assert conn.execute("SELECT scope_key FROM swarmmem_role_scopes").fetchall() == [
            (SCOPE_A.key,)
        ]
        conn.execute("SELECT set_config('swarmmem.scope_keys', %s, false)", (SCOPE_B.key,))
        assert conn.execute("SELECT COUNT(*) FROM memory_items").fetchone()[0] == 1
        # the audit chain is shared but append-only for a role
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("DELETE FROM memory_events")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("CREATE OR REPLACE FUNCTION swarmmem_scope_granted(key text) "
                         "RETURNS boolean LANGUAGE sql AS $f$ SELECT true $f$")  # fmt: skip
    # B's rows are intact; the admin (the tables' owner) sees both repositories
    with store_of(cluster, "b") as b:
        assert b.get(theirs.id) is not None and len(b.list_outcomes()) == 1
    with psycopg.connect(cluster["admin"]) as conn:
        conn.execute(f'SET search_path TO "{cluster["schema"]}"')
        assert conn.execute("SELECT COUNT(*) FROM memory_items").fetchone()[0] == 2


def test_the_scope_key_function_matches_the_store(cluster: dict[str, Any]) -> None:
    """The policy's SQL spelling of a scope key equals the one the store writes."""
    secured(cluster)
    scopes = [
        SCOPE_A,
        MemoryScope(type="repository", repo_id='odd "id" \\ é\t', repo_root="/x"),
        MemoryScope(type="cohort", cohort_id="c-1"),
        MemoryScope(type="workspace", workspace_id="w1"),
        MemoryScope(type="agent", agent_id="coder", run_id="r1"),
        MemoryScope(type="run", run_id="r\u001f2"),
    ]
    with psycopg.connect(cluster["admin"]) as conn:
        for scope in scopes:
            row = conn.execute(
                f'SELECT "{cluster["schema"]}".swarmmem_scope_key(%s::jsonb)',
                (json.dumps(scope.as_dict()),),
            ).fetchone()
            assert row[0] == scope.key


def test_swarmmem_postgres_rls_prints_and_applies(cluster: dict[str, Any], tmp_path: Path) -> None:
    """The CLI helper prints the statements for this repository's scopes and applies them."""
    secured(cluster)  # B has its own grant; the helper adds this repository's key to A
    root = tmp_path / "project"
    (root / ".opencode").mkdir(parents=True)
    config = {"enabled": True, "provider": "postgres", "projectId": "proj_rls",
              "postgres": {"dsn": cluster["dsn"]["a"], "schema": cluster["schema"]}}  # fmt: skip
    (root / ".opencode" / "opencode-swarm.json").write_text(json.dumps({"memory": config}))
    role = cluster["roles"]["a"]
    printed = CliRunner().invoke(
        main,
        ["--root", str(root), "postgres-rls", "--role", role, "--dsn", cluster["admin"], "--json"],
    )
    assert printed.exit_code == 0, printed.output
    data = json.loads(printed.stdout)
    assert data["applied"] is False
    repo_key = MemoryScope(type="repository", repo_id=_repo_id("proj_rls")).key
    assert repo_key in data["scope_keys"]
    assert any("ENABLE ROW LEVEL SECURITY" in s for s in data["statements"])
    text = CliRunner().invoke(
        main, ["--root", str(root), "postgres-rls", "--role", role, "--dsn", cluster["admin"]]
    )
    assert text.exit_code == 0 and "CREATE POLICY" in text.stdout
    applied = CliRunner().invoke(
        main,
        ["--root", str(root), "postgres-rls", "--role", role, "--dsn", cluster["admin"],
         "--apply", "--json"],
    )  # fmt: skip
    assert applied.exit_code == 0, applied.output
    assert json.loads(applied.stdout)["applied"] is True
    # the project works as role A, and its memories stay its own
    learned = CliRunner().invoke(
        main,
        ["--root", str(root), "propose", "--kind", "todo", "--text", "Rotate the keys.",
         "--rationale", "r", "--json"],
    )  # fmt: skip
    assert learned.exit_code == 0, learned.output
    with raw(cluster, "b") as conn:
        assert conn.execute("SELECT COUNT(*) FROM memory_proposals").fetchone()[0] == 0
    with raw(cluster, "a") as conn:
        assert conn.execute("SELECT COUNT(*) FROM memory_proposals").fetchone()[0] == 1
    # a role name that is no identifier of a role is refused without a change
    bad = CliRunner().invoke(
        main,
        ["--root", str(root), "postgres-rls", "--role", "no_such_role_x", "--dsn",
         cluster["admin"], "--apply"],
    )  # fmt: skip
    assert bad.exit_code == 1 and "no_such_role_x" in bad.output


def _repo_id(project_id: str) -> str:
    from swarmmem.core.model.ids import stable_id

    return stable_id(f"project:{project_id}")


def test_vectors_follow_their_memory(cluster: dict[str, Any]) -> None:
    """With pgvector, a role's vector index holds only the vectors of memories it may see."""
    import numpy as np
    from pg_support import require_vector

    from swarmmem.adapters.vectors.pgvector import PgVectorIndex

    require_vector()
    PgVectorIndex(cluster["admin"], 4, schema=cluster["schema"]).close()  # the admin creates it
    secured(cluster)
    ids = {}
    for name, scope in (("a", SCOPE_A), ("b", SCOPE_B)):
        with store_of(cluster, name) as store:
            ids[name] = seed(store, scope, name).id
        index = PgVectorIndex(cluster["dsn"][name], 4, schema=cluster["schema"])
        try:
            index.upsert([ids[name]], np.ones((1, 4), dtype=np.float32))
        finally:
            index.close()
    index = PgVectorIndex(cluster["dsn"]["a"], 4, schema=cluster["schema"])
    try:
        assert index.ids() == [ids["a"]]
        built = index.built_with()
        other = PgVectorIndex(
            cluster["dsn"]["a"], 4, schema=cluster["schema"], m=5, ef_construction=10
        )
        try:  # other build options: reported; only the owner may rebuild
            assert other.ann_index()["needs_rebuild"] is True
            refused = other.rebuild_ann_index()
            assert refused["rebuilt"] is False and "only the owner" in refused["reason"]
            assert other.built_with() == built != (5, 10)
        finally:
            other.close()
        with pytest.raises(StorageError):
            index.upsert([ids["b"]], np.zeros((1, 4), dtype=np.float32))
    finally:
        index.close()
    with raw(cluster, "a") as conn:
        assert conn.execute("SELECT COUNT(*) FROM memory_items_vec").fetchone()[0] == 1
        assert conn.execute("DELETE FROM memory_items_vec WHERE id = %s", (ids["b"],)).rowcount == 0


def _lexical_ids(store: Any, scope: MemoryScope, query: str) -> list[str]:
    found = store.select_candidates(
        scope_keys=[scope.key], kinds=None, fts_query=query, preselect_limit=10,
        scope_when_unmatched=False, now="2026-12-02T00:00:00.000Z", include_expired=False,
        candidate_cap=100,
    )  # fmt: skip
    order = found.fts_order or {}
    return sorted(order, key=order.__getitem__)


def test_no_shared_table_lets_one_role_break_or_read_another(cluster: dict[str, Any]) -> None:
    """Each role's audit chain, chain head and full-text totals are its own; the schema's
    flags and the embedding settings are the admin's. Role A's raw SQL cannot break B's
    recall or audit verification, nor read B's audit reasons."""
    secured(cluster)
    with store_of(cluster, "a") as a, store_of(cluster, "b") as b:
        seed(a, SCOPE_A, "alpha")
        theirs = seed(b, SCOPE_B, "beta")
        b.delete(theirs.id, reason="beta forgot: secret plan text", now="2026-12-02T00:00:00Z")
        kept = make_memory("beta ships the release train", scope=SCOPE_B)
        b.upsert(kept)
        assert b.verify_audit_chain()["verified"] is True
    with raw(cluster, "a") as conn:
        # B's audit rows (their reasons quote memory text) are out of sight
        reasons = [r[0] for r in conn.execute("SELECT reason FROM memory_events").fetchall()]
        assert not any("beta" in (r or "") for r in reasons)
        # a row appended by A lands in A's own chain, never in B's
        conn.execute(
            "INSERT INTO memory_events (id, operation, target_id, reason, timestamp) "
            "VALUES ('evt_forged', 'delete', 'x', 'forged', '2026-12-02T00:00:00Z')"
        )
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO memory_events (id, operation, target_id, timestamp, chain_id) "
                "VALUES ('evt_forged2', 'delete', 'x', '2026-12-02T00:00:00Z', %s)",
                (cluster["roles"]["b"],),
            )
        # the schema's flags, markers and embedding settings are read-only
        for statement in (
            "UPDATE _meta SET value = 'tampered'",
            "INSERT INTO _meta (key, value) VALUES ('audit_key_marker', 'x')",
            "INSERT INTO embedding_config (key, value) VALUES ('model_version', 'x')",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)
        # zeroed full-text totals touch only A's own scopes
        conn.execute("UPDATE memory_fts_stats SET row_count = 0, token_count = 0")
    with store_of(cluster, "b") as b:
        assert b.verify_audit_chain()["verified"] is True
        assert _lexical_ids(b, SCOPE_B, '"release" OR "train"') == [kept.id]
    with store_of(cluster, "a") as a:  # A broke only its own chain
        assert a.verify_audit_chain()["verified"] is False


def test_workspace_scope_is_granted_only_when_mapped(
    cluster: dict[str, Any], tmp_path: Path
) -> None:
    """postgres-rls grants the workspace scope, which sibling repositories share, only with
    --workspace (the admin maps it explicitly)."""
    root = tmp_path / "project"
    (root / ".opencode").mkdir(parents=True)
    config = {"enabled": True, "provider": "postgres", "projectId": "proj_ws",
              "postgres": {"dsn": cluster["admin"], "schema": cluster["schema"]}}  # fmt: skip
    (root / ".opencode" / "opencode-swarm.json").write_text(json.dumps({"memory": config}))
    args = ["--root", str(root), "postgres-rls", "--role", cluster["roles"]["a"], "--json"]
    kinds = {}
    for extra in ([], ["--workspace"]):
        printed = CliRunner().invoke(main, [*args, *extra])
        assert printed.exit_code == 0, printed.output
        keys = json.loads(printed.stdout)["scope_keys"]
        kinds[bool(extra)] = {json.loads(k)["type"] for k in keys}
    assert kinds == {False: {"repository"}, True: {"repository", "workspace"}}


def test_a_new_roles_empty_chain_is_keyed_at_its_first_write(cluster: dict[str, Any]) -> None:
    """With an audit key set, a project role new to the schema has an empty chain of its own;
    its writes were refused until someone ran ``audit-key adopt`` as that role. An empty chain
    has no history to hide, so its first write now keys it and logs the keying; a role whose
    chain already holds rows must still adopt."""
    key = b"k" * 32
    secured(cluster)
    with store_of(cluster, "b") as b:  # B writes before any key is set
        seed(b, SCOPE_B, "beta")
    with store_of(cluster, "a") as a:
        a.enable_audit_key(key)
        seed(a, SCOPE_A, "alpha")
        report = a.verify_audit_chain()
        assert report["verified"] is True and report["keyed"] is True
        events = a.list_events()
        assert events[0].operation == "audit_key"
        assert events[0].reason == "keyed audit chain started"
    with store_of(cluster, "b") as b:
        b.enable_audit_key(key)
        with pytest.raises(StorageError, match="adopt"):
            seed(b, SCOPE_B, "again")

"""Optional row-level security: each project's database role sees only its own scopes.

When several repositories share one PostgreSQL schema, the store already limits every read to
the caller's scopes; row-level security makes the server enforce it too, so a project's role
cannot read or change another project's rows even with raw SQL.

The design keys the policies on ``current_user``, never on a session setting (a role could set
that to anything): an admin-owned mapping table ``swarmmem_role_scopes (role_name,
scope_key)`` lists the scope keys each role may use. Project roles can read only their own
mapping rows and cannot write the table, so no role can widen its scopes. Policies:

* ``memory_items``: the row's ``scope_key`` is granted to ``current_user`` (reads, and the new
  row of an insert or update);
* ``memory_outcomes``, ``memory_reward_events``, ``memory_relations`` and, when present, the
  vector table ``memory_items_vec``: the memory they are about is visible;
* ``memory_proposals``: the proposed record's scope is granted, or (a proposal without a
  proposed record) a memory it targets is visible;
* ``memory_recall_usage``: one of the recall's scopes other than the workspace is granted;
* ``memory_fts_stats`` (the full-text totals, one row per scope key): the scope key is
  granted, so a role's recall counts only its own rows and no role can change the totals
  another reads;
* ``memory_events`` and ``memory_audit_chains``: the row's ``chain_id`` is ``current_user``.
  Each role keeps its own audit chain and chain head: it reads and appends only its own rows
  (no update or delete), so no role can break or read another's audit log (whose reasons may
  quote memory text).

No table a project role may write is shared with another project: ``_meta`` (the schema's
flags), ``embedding_config`` (the embedding model of the shared vector table) and
``schema_migrations`` are read-only for roles; the store's open must find the schema migrated
(open it once as the admin after an upgrade, then run the setup again: an upgrade can add
tables that need their policies and grants).

The workspace scope, which sibling repositories share, is granted only when the admin maps it
(``swarmmem postgres-rls --workspace``).

Setup, as the role that owns the tables (the admin): :func:`policy_statements` once per schema
(idempotent), then :func:`grant_statements` per project role with the scope keys of its
repository (``swarmmem postgres-rls --role NAME`` prints both, ``--apply`` runs them).
Superusers and the tables' owner bypass the policies.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

MAPPING_TABLE = "swarmmem_role_scopes"
MEMORY_TABLES = (
    "memory_items",
    "memory_proposals",
    "memory_outcomes",
    "memory_reward_events",
    "memory_relations",
    "memory_recall_usage",
)
"""The tables that hold one repository's data (each gets a policy)."""
OWN_ROW_GRANTS = {
    "memory_events": "SELECT, INSERT",
    "memory_audit_chains": "SELECT, INSERT, UPDATE",
    "memory_fts_stats": "SELECT, INSERT, UPDATE, DELETE",
}
"""Tables whose policy keeps each role to its own rows, and what a role may do there."""
SHARED_GRANTS = {
    "_meta": "SELECT",
    "embedding_config": "SELECT",
    "schema_migrations": "SELECT",
}
"""Tables every project reads and only the admin writes."""
VECTOR_TABLE = "memory_items_vec"
POLICY = "swarmmem_scopes"


def ident(name: str) -> str:
    """``name`` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def literal(value: str) -> str:
    """``value`` as a quoted SQL string literal."""
    return "'" + value.replace("'", "''") + "'"


def policy_statements(schema: str, *, vector_table: bool = False) -> list[str]:
    """The mapping table, helper functions and policies of ``schema`` (idempotent)."""
    s = ident(schema)
    mapping = f"{s}.{MAPPING_TABLE}"
    granted = f"SELECT m.scope_key FROM {mapping} m WHERE m.role_name = current_user"
    out = [
        f'CREATE TABLE IF NOT EXISTS {mapping} (role_name TEXT COLLATE "C" NOT NULL, '
        'scope_key TEXT COLLATE "C" NOT NULL, PRIMARY KEY (role_name, scope_key))',
        f"ALTER TABLE {mapping} ENABLE ROW LEVEL SECURITY",
        f"DROP POLICY IF EXISTS {POLICY} ON {mapping}",
        f"CREATE POLICY {POLICY} ON {mapping} FOR SELECT USING (role_name = current_user)",
        # the JSON of a text column, NULL when it does not parse (a damaged row is hidden)
        f"CREATE OR REPLACE FUNCTION {s}.swarmmem_json(t text) RETURNS jsonb LANGUAGE plpgsql "
        "IMMUTABLE AS $f$ BEGIN RETURN t::jsonb; EXCEPTION WHEN others THEN RETURN NULL; END "
        "$f$",
        # the scope key exactly as swarmmem.core.model.ids.stable_scope_key spells it
        f"CREATE OR REPLACE FUNCTION {s}.swarmmem_scope_key(scope jsonb) RETURNS text "
        "LANGUAGE sql IMMUTABLE AS $f$ SELECT '{\"type\":' || to_json(scope->>'type')::text "
        "|| COALESCE((SELECT string_agg(',' || to_json(k.key)::text || ':' || "
        "to_json(scope->>k.key)::text, '' ORDER BY k.ord) FROM unnest(CASE scope->>'type' "
        "WHEN 'repository' THEN ARRAY['repoId'] WHEN 'cohort' THEN ARRAY['cohortId'] ELSE "
        "ARRAY['userId','workspaceId','projectId','repoId','repoRoot','runId','agentId'] END) "
        "WITH ORDINALITY AS k(key, ord) WHERE COALESCE(scope->>k.key, '') <> ''), '') || '}' "
        "$f$",
        f"CREATE OR REPLACE FUNCTION {s}.swarmmem_scope_granted(key text) RETURNS boolean "
        f"LANGUAGE sql STABLE AS $f$ SELECT EXISTS ({granted} AND m.scope_key = key) $f$",
    ]
    # the outer column is qualified by its table: an unqualified ``id`` would bind to ``i.id``
    visible = f"EXISTS (SELECT 1 FROM {s}.memory_items i WHERE i.id = {{table}}.{{column}})"
    proposal = (
        f"CASE WHEN jsonb_typeof({s}.swarmmem_json(proposal_json)->'proposedRecord') = 'object' "
        f"THEN {s}.swarmmem_scope_granted({s}.swarmmem_scope_key("
        f"{s}.swarmmem_json(proposal_json)->'proposedRecord'->'scope')) "
        f"ELSE EXISTS (SELECT 1 FROM {s}.memory_items i WHERE i.id = "
        f"{s}.swarmmem_json(proposal_json)->>'targetMemoryId' OR i.id IN (SELECT "
        f"jsonb_array_elements_text(CASE WHEN jsonb_typeof({s}.swarmmem_json(proposal_json)"
        "->'relatedMemoryIds') = 'array' THEN "
        f"{s}.swarmmem_json(proposal_json)->'relatedMemoryIds' ELSE '[]'::jsonb END))) END"
    )
    usage = (
        f"EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof("
        f"{s}.swarmmem_json(usage_json)->'scopes') = 'array' THEN "
        f"{s}.swarmmem_json(usage_json)->'scopes' ELSE '[]'::jsonb END) AS u(scope) "
        f"WHERE u.scope->>'type' <> 'workspace' AND "
        f"{s}.swarmmem_scope_granted({s}.swarmmem_scope_key(u.scope)))"
    )
    conditions = {
        "memory_items": f"scope_key IN ({granted})",
        "memory_proposals": proposal,
        "memory_outcomes": visible.format(table="memory_outcomes", column="memory_id"),
        "memory_reward_events": visible.format(table="memory_reward_events", column="memory_id"),
        "memory_relations": visible.format(table="memory_relations", column="source_id")
        + " AND "
        + visible.format(table="memory_relations", column="target_id"),
        "memory_recall_usage": usage,
        "memory_fts_stats": f"{s}.swarmmem_scope_granted(scope_key)",
        "memory_events": "chain_id = current_user",
        "memory_audit_chains": "chain_id = current_user",
    }
    if vector_table:
        conditions[VECTOR_TABLE] = visible.format(table=VECTOR_TABLE, column="id")
    for table, condition in conditions.items():
        qualified = f"{s}.{table}"
        out += [
            f"ALTER TABLE {qualified} ENABLE ROW LEVEL SECURITY",
            f"DROP POLICY IF EXISTS {POLICY} ON {qualified}",
            f"CREATE POLICY {POLICY} ON {qualified} USING ({condition}) WITH CHECK ({condition})",
        ]
    return out


def grant_statements(
    schema: str, role: str, scope_keys: Iterable[str], *, vector_table: bool = False
) -> list[str]:
    """What project ``role`` may do in ``schema``, and the scope keys it is granted."""
    s, r = ident(schema), ident(role)
    tables = [*MEMORY_TABLES, *([VECTOR_TABLE] if vector_table else [])]
    every = [*tables, *OWN_ROW_GRANTS, *SHARED_GRANTS]
    out = [
        # a rerun also takes back what an earlier setup granted and this one does not
        f"REVOKE ALL ON {', '.join(f'{s}.{t}' for t in every)} FROM {r}",
        f"GRANT USAGE ON SCHEMA {s} TO {r}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON {', '.join(f'{s}.{t}' for t in tables)} TO {r}",
        *(
            f"GRANT {what} ON {s}.{table} TO {r}"
            for table, what in (*OWN_ROW_GRANTS.items(), *SHARED_GRANTS.items())
        ),
        f"GRANT SELECT ON {s}.{MAPPING_TABLE} TO {r}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {s} TO {r}",
    ]
    out += [
        f"INSERT INTO {s}.{MAPPING_TABLE} (role_name, scope_key) VALUES "
        f"({literal(role)}, {literal(key)}) ON CONFLICT DO NOTHING"
        for key in sorted(set(scope_keys))
    ]
    return out


def has_vector_table(conn: Any, schema: str) -> bool:
    """True when ``schema`` holds the pgvector table."""
    row = conn.execute(
        "SELECT to_regclass(%s) IS NOT NULL", (f"{ident(schema)}.{VECTOR_TABLE}",)
    ).fetchone()
    return bool(row and row[0])


def row_level_security(
    dsn: str, schema: str, role: str, scope_keys: Sequence[str], *, apply: bool
) -> dict[str, Any]:
    """The setup statements for ``role`` in ``schema`` (run in one transaction when
    ``apply``, on a connection as the tables' owner)."""
    import psycopg

    from swarmmem.adapters.storage.postgres.dsn import parse_dsn

    parsed = parse_dsn(dsn)
    try:
        with psycopg.connect(parsed.conninfo, password=parsed.password) as conn:
            vector = has_vector_table(conn, schema)
            statements = [
                *policy_statements(schema, vector_table=vector),
                *grant_statements(schema, role, scope_keys, vector_table=vector),
            ]
            if apply:
                with conn.transaction():
                    for statement in statements:
                        conn.execute(statement)
    except psycopg.Error as exc:
        from swarmmem.core.model.errors import StorageError

        message = parsed.scrub(str(exc).strip() or type(exc).__name__)
        raise StorageError(f"postgres row-level security (schema {schema}): {message}") from None
    return {"schema": schema, "role": role, "scope_keys": sorted(set(scope_keys)),
            "statements": statements, "applied": apply}  # fmt: skip

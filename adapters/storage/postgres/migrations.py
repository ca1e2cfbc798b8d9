"""The PostgreSQL schema: migrations v1..v17 and the one-time backfills.

The tables, columns and migration versions mirror the SQLite provider's (recorded in
``schema_migrations`` under the same names; v2, SQLite's legacy JSONL import marker, does not
apply). PostgreSQL-only parts: every text column that is compared or sorted uses
``COLLATE "C"`` (byte order, as in SQLite); ``memory_items``, ``memory_events``,
``memory_recall_usage`` and ``memory_reward_events`` carry an identity column ``seq`` that
plays SQLite's ``rowid`` (insertion order; an upsert keeps it); ``memory_items.row_version``
changes on every write (a sequence value, never reused); migration v3 replaces the FTS5 table
with a ``tsvector`` column ``fts`` (GIN index), the token count ``fts_len`` and a one-row
``memory_fts_stats`` table (rows, tokens) that each transaction adjusts once, at commit
(see :mod:`.text_search`). v17 makes a shared schema safe for many database roles: the totals
get one row per scope key, and each role keeps its own audit chain (``memory_events.chain_id``
defaults to ``current_user``; the head and key marker move from ``_meta`` to one row per role
in ``memory_audit_chains``; rows chained before v17 belong to the role that upgrades).

The backfills here take a psycopg connection and use its ``%s`` placeholders.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from swarmmem.adapters.storage.postgres.text_search import RECOUNT_STATS_SQL, fts_document
from swarmmem.adapters.storage.sql import (
    RELATIONS_INDEX,
    RELATIONS_TABLE,
    REPORT_COLUMNS,
    TEXT_TERMS,
    migration_steps,
)
from swarmmem.core.model.audit import CHAIN_HEAD_KEY, KEY_MARKER_KEY

_C = 'TEXT COLLATE "C"'
#: v17: each database role's audit chain head and key marker (``chain_id`` is the role)
CHAINS_TABLE = "memory_audit_chains"
SCHEMA_MIGRATIONS_SQL = (
    f"CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
    f"name TEXT NOT NULL, applied_at {_C} NOT NULL DEFAULT "
    "(to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')))"
)
MIGRATIONS = migration_steps(
    {
        1: (
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
        3: (
            "ALTER TABLE memory_items ADD COLUMN IF NOT EXISTS fts tsvector NOT NULL "
            "DEFAULT ''::tsvector",
            "ALTER TABLE memory_items ADD COLUMN IF NOT EXISTS fts_len INTEGER NOT NULL DEFAULT 0",
            "CREATE INDEX IF NOT EXISTS idx_memory_items_fts ON memory_items USING gin (fts)",
            """CREATE TABLE IF NOT EXISTS memory_fts_stats (
  id INTEGER PRIMARY KEY CHECK (id = 1), row_count BIGINT NOT NULL, token_count BIGINT NOT NULL)""",
            "INSERT INTO memory_fts_stats (id, row_count, token_count) SELECT 1, count(*), "
            "COALESCE(sum(fts_len), 0) FROM memory_items ON CONFLICT (id) DO NOTHING",
        ),
        4: (f"CREATE TABLE IF NOT EXISTS _meta (key {_C} PRIMARY KEY, value TEXT NOT NULL)",),
        5: (
            "CREATE INDEX IF NOT EXISTS idx_memory_recall_usage_timestamp "
            "ON memory_recall_usage(timestamp DESC)",
        ),
        6: (f"CREATE TABLE IF NOT EXISTS embedding_config (key {_C} PRIMARY KEY, value TEXT)",),
        7: (
            "ALTER TABLE memory_recall_usage ADD COLUMN IF NOT EXISTS q_value DOUBLE PRECISION "
            "DEFAULT 0.5",
            "ALTER TABLE memory_recall_usage ADD COLUMN IF NOT EXISTS last_reward DOUBLE PRECISION",
            "ALTER TABLE memory_recall_usage ADD COLUMN IF NOT EXISTS task_outcome TEXT",
            "ALTER TABLE memory_recall_usage ADD COLUMN IF NOT EXISTS council_verdict_json TEXT",
        ),
        8: ("ALTER TABLE memory_recall_usage ADD COLUMN IF NOT EXISTS reward_key TEXT",),
        9: (
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
        10: (
            f"ALTER TABLE memory_recall_usage ADD COLUMN IF NOT EXISTS unit_id {_C}",
            "CREATE INDEX IF NOT EXISTS idx_memory_recall_usage_unit_id "
            "ON memory_recall_usage(unit_id)",
        ),
        11: (
            f"CREATE TABLE IF NOT EXISTS memory_outcomes (id {_C} PRIMARY KEY, "
            f"memory_id {_C} NOT NULL, generation {_C} NOT NULL, at {_C} NOT NULL, "
            "event_json TEXT NOT NULL)",
            "CREATE INDEX IF NOT EXISTS idx_memory_outcomes_memory_generation "
            "ON memory_outcomes(memory_id, generation, at, id)",
        ),
        12: (
            "ALTER TABLE memory_items ADD COLUMN IF NOT EXISTS source_task_id TEXT NOT NULL "
            "DEFAULT ''",
            "ALTER TABLE memory_items ADD COLUMN IF NOT EXISTS agent_role TEXT NOT NULL "
            "DEFAULT 'unknown'",
            "ALTER TABLE memory_items ADD COLUMN IF NOT EXISTS embedding_model_version TEXT "
            "NOT NULL DEFAULT ''",
            f"ALTER TABLE memory_items ADD COLUMN IF NOT EXISTS valid_from {_C}",
            "ALTER TABLE memory_items ADD COLUMN IF NOT EXISTS supersedes_reason TEXT",
        ),
        13: ("ALTER TABLE memory_events ADD COLUMN IF NOT EXISTS prev_hash TEXT",),
        14: (
            RELATIONS_TABLE.format(text=_C),
            RELATIONS_INDEX,
            "CREATE INDEX IF NOT EXISTS idx_memory_relations_target ON memory_relations(target_id)",
        ),
        15: tuple(
            s.format(if_not_exists="IF NOT EXISTS ", real="DOUBLE PRECISION")
            for s in REPORT_COLUMNS
        ),
        16: (
            "ALTER TABLE memory_items ADD COLUMN IF NOT EXISTS fts_porter tsvector NOT NULL "
            "DEFAULT ''::tsvector",
            "CREATE INDEX IF NOT EXISTS idx_memory_items_fts_porter ON memory_items "
            "USING gin (fts_porter)",
        ),
        17: (
            # one audit chain per database role: its rows, and its head and key marker
            f"ALTER TABLE memory_events ADD COLUMN IF NOT EXISTS chain_id {_C} NOT NULL "
            "DEFAULT current_user",
            "CREATE INDEX IF NOT EXISTS idx_memory_events_chain ON memory_events(chain_id, seq)",
            f"CREATE TABLE IF NOT EXISTS {CHAINS_TABLE} (chain_id {_C} PRIMARY KEY "
            "DEFAULT current_user, head TEXT, key_marker TEXT)",
            f"INSERT INTO {CHAINS_TABLE} (chain_id, head, key_marker) SELECT current_user, "
            f"(SELECT value FROM _meta WHERE key = '{CHAIN_HEAD_KEY}'), "
            f"(SELECT value FROM _meta WHERE key = '{KEY_MARKER_KEY}') "
            "ON CONFLICT (chain_id) DO NOTHING",
            f"DELETE FROM _meta WHERE key IN ('{CHAIN_HEAD_KEY}', '{KEY_MARKER_KEY}')",
            # the full-text totals per scope key (a reader sums the keys it may see)
            "DROP TABLE IF EXISTS memory_fts_stats",
            f"CREATE TABLE memory_fts_stats (scope_key {_C} PRIMARY KEY, "
            "row_count BIGINT NOT NULL, token_count BIGINT NOT NULL)",
            RECOUNT_STATS_SQL[1],
        ),
        18: tuple(s.format(if_not_exists="IF NOT EXISTS ") for s in TEXT_TERMS),
        # ``row_version`` is drawn from its sequence since v1 (SQLite's rows get theirs here)
        19: (),
    }
)
RECALL_INDEX_SQL = (
    "CREATE INDEX IF NOT EXISTS idx_memory_items_recall_order ON memory_items "
    "(scope_key, updated_at DESC, id) WHERE superseded_by IS NULL AND deleted = 0"
)


def _backfill_from_json(
    conn: Any, table: str, column: str, source: str, pick: Callable[[Any], Any]
) -> None:
    """Set ``column`` where it is NULL to what ``pick`` finds (a string) in the JSON column."""
    rows = conn.execute(f"SELECT id, {source} FROM {table} WHERE {column} IS NULL").fetchall()
    for row_id, text in rows:
        try:
            value = pick(json.loads(text))
        except (ValueError, AttributeError):
            continue
        if isinstance(value, str):
            conn.execute(f"UPDATE {table} SET {column} = %s WHERE id = %s", (value, row_id))


def backfill_recall_run_ids(conn: Any) -> None:
    """``memory_recall_usage.run_id`` from the usage JSON's ``runId``."""
    _backfill_from_json(
        conn, "memory_recall_usage", "run_id", "usage_json", lambda usage: usage.get("runId")
    )


def backfill_provenance(conn: Any) -> None:
    """``memory_items.valid_from`` from the record's ``createdAt`` (else ``updatedAt``)."""
    _backfill_from_json(
        conn,
        "memory_items",
        "valid_from",
        "record_json",
        lambda record: record.get("createdAt") or record.get("updatedAt"),
    )


def backfill_fts(conn: Any) -> None:
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
    for statement in RECOUNT_STATS_SQL:
        conn.execute(statement)


def backfill_stemmed_fts(conn: Any) -> None:
    """Fill the stemmed ``tsvector`` of rows written before it existed."""
    _write_stemmed_fts(
        conn, "SELECT id, record_json FROM memory_items WHERE fts_porter = ''::tsvector"
    )


def rebuild_stemmed_fts(conn: Any) -> None:
    """Build the stemmed ``tsvector`` of every row again, its kind column's positions
    weighted apart (:func:`~.text_search.fts_document`; rows written before that held them
    like any other column's)."""
    _write_stemmed_fts(conn, "SELECT id, record_json FROM memory_items")


def _write_stemmed_fts(conn: Any, select: str) -> None:
    """Write ``fts_porter`` of the rows ``select`` reads (id, record JSON) from their JSON."""
    for memory_id, record_json in conn.execute(select).fetchall():
        try:
            data = json.loads(record_json)
        except ValueError:
            data = {}
        literal, _ = fts_document(data if isinstance(data, dict) else {}, stemmed=True)
        conn.execute(
            "UPDATE memory_items SET fts_porter = %s::tsvector WHERE id = %s",
            (literal, memory_id),
        )

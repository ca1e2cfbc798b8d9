"""The schema steps every SQL database records: numbered migrations and shared DDL.

A database lists its own statements per version (:func:`migration_steps`); the names come from
:data:`MIGRATION_NAMES`, so every database records the same ``schema_migrations`` rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

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
    19: "add_memory_row_versions",
}
#: v18: the stemmed terms of each memory's text (:func:`~.rows.text_terms`), and the rows
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
#: the partial index of the rows with an expiry (few): the reports read these rows through it
EXPIRING_INDEX = "idx_memory_items_report_expiring"
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
    f"CREATE INDEX IF NOT EXISTS {EXPIRING_INDEX} "
    "ON memory_items(scope_key, superseded_by, deleted, updated_at DESC, id, expires_at) "
    "WHERE expires_at IS NOT NULL",
)
RELATIONS_INDEX = (
    "CREATE INDEX IF NOT EXISTS idx_memory_relations_source "
    "ON memory_relations(source_id, target_id)"
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

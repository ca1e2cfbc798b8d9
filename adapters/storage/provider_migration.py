"""Move one project's whole state between the ``sqlite`` and ``postgres`` providers.

The two schemas mirror each other, so the move is a table-by-table row copy of the columns
both have: memories (with provenance columns), proposals, merge relations, audit events
(with their ``prev_hash``, so the hash chain arrives intact, and the chain head), recall
usage, outcome events and reward events. Vectors are not copied (run ``rebuild-embeddings``
on the target).

All or nothing: the source is read inside its own ``transaction()`` (a consistent snapshot;
its writers wait) and everything is written inside ONE target transaction, which also checks
the per-table counts and the audit chain before it commits; any failure (including an
interrupted copy) rolls the target back to exactly what it was. The target must be empty:
no rows except the migration events of its own creation, which the copied log replaces.

This module reaches into both providers' connections on purpose: it is the one place that
knows both physical schemas.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs

from swarmmem.core.model.audit import CHAIN_HEAD_KEY
from swarmmem.core.model.errors import ConfigError, ConflictError, StorageError

BATCH = 500


@attrs.frozen
class Table:
    """One copied table: its common columns and the order rows are read in."""

    name: str
    columns: tuple[str, ...]
    sqlite_order: str
    postgres_order: str


TABLES: tuple[Table, ...] = (
    Table(
        "memory_items",
        (
            "id",
            "scope_key",
            "kind",
            "updated_at",
            "expires_at",
            "superseded_by",
            "deleted",
            "record_json",
            "source_task_id",
            "agent_role",
            "embedding_model_version",
            "valid_from",
            "supersedes_reason",
            "text_terms",
        ),
        "rowid",
        "seq",
    ),
    Table(
        "memory_proposals",
        ("id", "status", "created_at", "proposal_json"),
        "rowid",
        "created_at, id",
    ),
    Table(
        "memory_relations",
        ("source_id", "target_id", "proposal_id", "created_at"),
        "rowid",
        "source_id, target_id",
    ),
    Table(
        "memory_events",
        ("id", "operation", "target_id", "reason", "timestamp", "event_json", "prev_hash"),
        "rowid",
        "seq",
    ),
    Table(
        "memory_recall_usage",
        (
            "id",
            "bundle_id",
            "timestamp",
            "usage_json",
            "q_value",
            "last_reward",
            "task_outcome",
            "council_verdict_json",
            "reward_key",
            "run_id",
            "unit_id",
        ),
        "rowid",
        "seq",
    ),
    Table(
        "memory_outcomes",
        ("id", "memory_id", "generation", "at", "event_json"),
        "rowid",
        "at, id",
    ),
    Table(
        "memory_reward_events",
        (
            "id",
            "memory_id",
            "run_id",
            "unit_id",
            "verdict",
            "reward",
            "q_before",
            "q_after",
            "verdict_synthesis_json",
            "timestamp",
        ),
        "rowid",
        "seq",
    ),
)


class _Side:
    """SQL access to one provider's tables inside its open transaction (``?`` placeholders)."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def execute(self, statement: str, params: Sequence[Any] = ()) -> Any:
        return self.store._execute(self.store._tx_conn(), statement, tuple(params))

    def executemany(self, statement: str, rows: list[tuple[Any, ...]]) -> None:
        self.store._executemany(self.store._tx_conn(), statement, rows)

    def order(self, table: Table) -> str:
        return table.sqlite_order if self.store.name == "sqlite" else table.postgres_order

    def where(self, table: str) -> str:
        """Of ``memory_events``, only this store's own audit chain is copied."""
        if table != "memory_events":
            return ""
        where: str = self.store._chain_rows_where(self.store._tx_conn())
        return where

    def count(self, table: str) -> int:
        return int(self.execute(f"SELECT count(*) FROM {table} {self.where(table)}").fetchone()[0])

    def rows(self, table: Table) -> Iterator[list[tuple[Any, ...]]]:
        cursor = self.execute(
            f"SELECT {', '.join(table.columns)} FROM {table.name} {self.where(table.name)} "
            f"ORDER BY {self.order(table)}"
        )
        while True:
            chunk = cursor.fetchmany(BATCH)
            if not chunk:
                return
            yield [tuple(r) for r in chunk]

    def insert(self, table: Table, rows: list[tuple[Any, ...]]) -> None:
        marks = ", ".join("?" for _ in table.columns)
        self.executemany(
            f"INSERT INTO {table.name} ({', '.join(table.columns)}) VALUES ({marks})", rows
        )

    def chain_head(self) -> str | None:
        value: str | None = self.store._chain_meta(self.store._tx_conn(), CHAIN_HEAD_KEY)
        return value

    def set_head(self, head: str | None) -> None:
        self.store._set_chain_head(head)

    def finish(self) -> None:
        """Rebuild what the copied rows left stale (full text, caches, statistics)."""
        self.store._after_bulk_load(self.store._tx_conn())


class _PostgresSide(_Side):
    def insert(self, table: Table, rows: list[tuple[Any, ...]]) -> None:
        if table.name != "memory_items":
            super().insert(table, rows)
            return
        from swarmmem.adapters.storage.postgres.text_search import fts_document

        full = []
        for row in rows:
            try:
                data = json.loads(row[table.columns.index("record_json")])
            except ValueError:
                data = {}
            literal, length = fts_document(data if isinstance(data, dict) else {})
            full.append((*row, literal, length))
        marks = ", ".join("?" for _ in table.columns)
        self.executemany(
            f"INSERT INTO memory_items ({', '.join(table.columns)}, fts, fts_len) "
            f"VALUES ({marks}, ?::tsvector, ?)",
            full,
        )


def _side(store: Any) -> _Side:
    name = getattr(store, "name", None)
    if name == "sqlite":
        return _Side(store)
    if name == "postgres":
        return _PostgresSide(store)
    raise ConfigError(f"migrate moves data between sqlite and postgres, not {name!r}")


def _require_empty(side: _Side) -> None:
    for table in TABLES:
        if table.name == "memory_events":
            row = side.execute(
                "SELECT count(*) FROM memory_events WHERE operation <> 'migration'"
            ).fetchone()
        else:
            row = side.execute(f"SELECT count(*) FROM {table.name}").fetchone()
        if int(row[0]):
            raise ConflictError(
                f"the target {side.store.name} store is not empty ({table.name} has rows); "
                "migrate only into a new store"
            )


def copy_store(
    source: Any,
    target: Any,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Copy every row of ``source`` into the empty ``target`` in one target transaction.

    Returns ``{"counts": {table: rows}, "audit": target chain report, "verified": bool}``.

    Raises:
        ConflictError: the target already holds data.
        StorageError: the copied counts or the audit chain do not check out (rolled back).
    """
    src, dst = _side(source), _side(target)
    with source.transaction():
        counts = {t.name: src.count(t.name) for t in TABLES}
        source_head = src.chain_head()
        source_chain = source.verify_audit_chain()
        total = sum(counts.values())
        done = 0
        if progress is not None:
            progress(0, total)
        with target.transaction():
            _require_empty(dst)
            dst.execute("DELETE FROM memory_events")
            for table in TABLES:
                for chunk in src.rows(table):
                    dst.insert(table, chunk)
                    done += len(chunk)
                    if progress is not None:
                        progress(done, total)
            dst.set_head(source_head)
            dst.finish()
            copied = {t.name: dst.count(t.name) for t in TABLES}
            if copied != counts:
                raise StorageError(f"migration count mismatch: source {counts}, target {copied}")
            audit = target.verify_audit_chain()
            if source_chain.get("verified") and not audit.get("verified"):
                raise StorageError(f"the copied audit chain does not verify: {audit}")
    after = {t.name: _recount(target, t.name) for t in TABLES}
    return {
        "counts": counts,
        "target_counts": after,
        "verified": after == counts
        and bool(audit.get("verified")) == bool(source_chain.get("verified")),
        "audit": target.verify_audit_chain(),
        "source_audit": source_chain,
    }


def _recount(store: Any, table: str) -> int:
    """Rows of ``table`` in a committed store, read afresh."""
    with store.transaction():
        return _side(store).count(table)

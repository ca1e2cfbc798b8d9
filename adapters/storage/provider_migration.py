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

Both stores are read and written through their public row streams
(:class:`~swarmmem.adapters.storage.sql.table_rows.TableRows`); this module is the one place
that knows which columns both physical schemas share.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs

from swarmmem.adapters.storage.sql import SqlStore
from swarmmem.adapters.storage.sql.table_rows import TableRows
from swarmmem.core.model.errors import ConfigError, ConflictError, StorageError
from swarmmem.ports.storage import StorageProvider


@attrs.frozen
class Table:
    """One copied table: its common columns and the order rows are read in (where the
    database keeps no insertion order of its own)."""

    name: str
    columns: tuple[str, ...]
    order: str


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
        "seq",
    ),
    Table(
        "memory_proposals",
        ("id", "status", "created_at", "proposal_json"),
        "created_at, id",
    ),
    Table(
        "memory_relations",
        ("source_id", "target_id", "proposal_id", "created_at"),
        "source_id, target_id",
    ),
    Table(
        "memory_events",
        ("id", "operation", "target_id", "reason", "timestamp", "event_json", "prev_hash"),
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
        "seq",
    ),
    Table(
        "memory_outcomes",
        ("id", "memory_id", "generation", "at", "event_json"),
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
        "seq",
    ),
)


class _Side:
    """One store's tables inside its open transaction (its :class:`TableRows`)."""

    def __init__(self, store: SqlStore) -> None:
        self.store = store
        self.tables: TableRows = store.table_rows

    def execute(self, statement: str, params: Sequence[Any] = ()) -> Any:
        return self.tables.execute(statement, params)

    def count(self, table: str) -> int:
        return self.tables.count(table)

    def rows(self, table: Table) -> Iterator[list[tuple[Any, ...]]]:
        return self.tables.rows(table.name, table.columns, table.order)

    def insert(self, table: Table, rows: list[tuple[Any, ...]]) -> None:
        self.tables.insert(table.name, table.columns, rows)


def _side(store: StorageProvider) -> _Side:
    if isinstance(store, SqlStore):
        return _Side(store)
    raise ConfigError(f"migrate moves data between sqlite and postgres, not {store.name!r}")


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
        source_head = src.tables.chain_head()
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
            dst.tables.set_chain_head(source_head)
            dst.tables.finish()
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

"""One SQL store for every database, built from parts that share one :class:`~.database.Database`.

:class:`SqlStore` keeps a project's memory in the reference tables (``memory_items``,
``memory_proposals``, ``memory_relations``, ``memory_events``, ``memory_recall_usage``,
``memory_outcomes``, ``memory_reward_events``, ``_meta``, ``schema_migrations``). Its parts:

- :class:`~.records.Records`: the memories, their cache and recall's pre-selection;
- :class:`~.proposals.Proposals`: the curator's queue and merge relations;
- :class:`~.ledger.Ledger`: recall usage, outcome and reward events;
- :class:`~.audit.AuditLog`: the hash-chained audit log and its key;
- :class:`~.migrator.Migrator`: migrations and backfills at open;
- :class:`~.table_rows.TableRows`: whole tables as row streams (moving a store).

A database supplies the :class:`~.database.Database` (connections, dialect, errors), its
:class:`~.records.TextIndex` (item rows with their full text) and its migration steps; the
write flow every provider shares comes from :class:`~swarmmem.adapters.storage.base.StoreBase`.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

from swarmmem.adapters.storage.base import Preselection, StoreBase
from swarmmem.adapters.storage.sql.audit import AuditLog, Log
from swarmmem.adapters.storage.sql.database import Database, guarded
from swarmmem.adapters.storage.sql.ledger import Ledger, scrub_rows
from swarmmem.adapters.storage.sql.migrator import Migrator, Schema
from swarmmem.adapters.storage.sql.proposals import Proposals
from swarmmem.adapters.storage.sql.records import Progress, Records, TextIndex
from swarmmem.adapters.storage.sql.rows import EVENT_COLUMNS, event_from_row
from swarmmem.adapters.storage.sql.table_rows import TableRows
from swarmmem.core.model.events import OutcomeEvent, RecallUsage, RewardEvent
from swarmmem.core.model.records import MemoryProposal, MemoryRecord
from swarmmem.core.model.semantics import ListFilter, StoredRow
from swarmmem.ports.clock import Clock, SystemClock
from swarmmem.ports.storage import Candidates, RecordKey, StoredEvent


class SqlStore(StoreBase):
    """A :class:`~swarmmem.ports.storage.StorageProvider` over SQL (see the module docstring).

    Args:
        db: the database.
        text: its item rows and full-text index.
        schema: its migration steps and backfills (see :class:`~.migrator.Schema`).
        clock: the time source of audit events (the system clock by default).
        embedding_model_version: the value of the ``embedding_model_version`` column when
            embeddings are active; otherwise the record's own value (or ``''``) is kept.
        audit: makes the audit log (a database may keep one chain per role).
    """

    def __init__(
        self,
        db: Database,
        text: TextIndex,
        schema: Schema,
        *,
        clock: Clock | None,
        embedding_model_version: str | None,
        audit: Callable[[Database, Log], AuditLog] = AuditLog,
    ) -> None:
        self.db = db
        self.text = text
        self._clock = clock or SystemClock()
        self.migration_report: dict[str, Any] | None = None
        self.audit = audit(db, self._log)
        self.records = Records(
            db, text, self.audit, embedding_model_version=embedding_model_version, now=self._now
        )
        self.load_report = self.records.load_report
        self.proposals = Proposals(db, self.records.report)
        self.ledger = Ledger(db)
        self.migrator = Migrator(db, schema, self.audit)
        self.table_rows = TableRows(db, text, self.audit)

    @property
    def read_only(self) -> bool:
        """The database was opened for reading only (every write is refused)."""
        return self.db.read_only

    @read_only.setter
    def read_only(self, value: bool) -> None:
        self.db.read_only = value

    def transaction(self) -> AbstractContextManager[None]:
        """All-or-nothing; the outermost block takes the write lock, inner ones are savepoints."""
        return self.db.transaction()

    def close(self) -> None:
        """Close the connections (idempotent); later calls raise StorageError."""
        self.db.close()
        self.records.clear()

    # -- the primitives of the shared write flow ---------------------------------------------

    def _write_record(self, record: MemoryRecord) -> MemoryRecord:
        return self.records.write_record(record)

    def _has_record(self, memory_id: str) -> bool:
        return self.records.has(memory_id)

    def _stored_record(self, memory_id: str) -> MemoryRecord | None:
        return self.records.stored_record(memory_id)

    def _erase_record(self, memory_id: str) -> None:
        self.records.erase(memory_id)

    def _has_proposal(self, proposal_id: str) -> bool:
        return self.proposals.has(proposal_id)

    def _write_proposal(self, proposal: MemoryProposal) -> None:
        self.proposals.write(proposal)

    def _store_event(self, event: StoredEvent) -> None:
        self.audit.append_events([event])

    def _stored_outcome(self, event_id: str) -> OutcomeEvent | None:
        return self.ledger.stored_outcome(event_id)

    def _write_outcome(self, event: OutcomeEvent) -> None:
        self.ledger.write_outcome(event)

    def _write_usage(self, usage: RecallUsage) -> None:
        self.ledger.write_usage(usage)

    def _write_reward(self, event: RewardEvent) -> None:
        self.ledger.write_reward(event)

    def _scrub_rows(self, memory_id: str, texts: Sequence[str], now: str) -> dict[str, int]:
        return scrub_rows(self.db, self.text, memory_id, texts, now)

    def _preselect(self, want: Preselection) -> Candidates | None:
        return self.records.preselect(want)

    # -- records -----------------------------------------------------------------------------

    @guarded
    def get(self, memory_id: str) -> MemoryRecord | None:
        return self.records.get(memory_id)

    @guarded
    def get_many(self, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        return self.records.get_many(memory_ids)

    @guarded
    def list(self, flt: ListFilter) -> builtins.list[MemoryRecord]:
        return self.records.list(flt)

    @guarded
    def count(self) -> int:
        return self.records.count()

    @guarded
    def count_where(self, flt: ListFilter) -> int:
        return self.records.count_where(flt)

    @guarded
    def list_keys(self, flt: ListFilter) -> builtins.list[RecordKey]:
        return self.records.list_keys(flt)

    def unreadable_rows(self) -> builtins.list[dict[str, Any]]:
        return self.records.unreadable_rows()

    @guarded
    def scope_counts(self) -> dict[str, int]:
        """Active (not deleted, not superseded) memories per scope key, without parsing rows."""
        return self.records.scope_counts()

    @guarded
    def iter_all_records(self) -> Iterator[MemoryRecord]:
        return self.records.iter_all()

    @guarded
    def related_ids(self, memory_id: str) -> builtins.list[str]:
        return self.records.related_ids(memory_id)

    @guarded
    def upsert_many(
        self,
        records: Sequence[MemoryRecord],
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> builtins.list[MemoryRecord]:
        """Batches of records: their rows, then their ``upsert`` events in one go (same order
        and chain as one ``upsert`` per record)."""
        return self.records.upsert_many(records, progress)

    @guarded
    def upsert_rows(self, rows: Sequence[StoredRow], *, progress: Progress = None) -> None:
        """:meth:`upsert_many` of rows already in their stored form (no record is built)."""
        self.records.upsert_rows(rows, progress)

    # -- proposals and ledgers ---------------------------------------------------------------

    @guarded
    def get_proposal(self, proposal_id: str) -> MemoryProposal | None:
        return self.proposals.get(proposal_id)

    @guarded
    def list_proposals(self, status: str | None = None) -> builtins.list[MemoryProposal]:
        return self.proposals.list(status)

    @guarded
    def list_recall_usage(
        self, *, run_id: str | None = None, since: str | None = None
    ) -> builtins.list[RecallUsage]:
        return self.ledger.recall_usage(run_id=run_id, since=since)

    @guarded
    def list_outcomes(self, memory_id: str | None = None) -> builtins.list[OutcomeEvent]:
        return self.ledger.outcomes(memory_id)

    @guarded
    def list_reward_events(self) -> builtins.list[RewardEvent]:
        return self.ledger.reward_events()

    # -- one memory's history (the MemoryHistory capability) ---------------------------------

    @guarded
    def proposals_mentioning(self, memory_id: str) -> builtins.list[MemoryProposal]:
        """The proposals whose JSON contains ``memory_id`` (a text match in the database:
        only those rows are parsed), oldest first."""
        with self.db.connection() as conn:
            rows = self.db.execute(
                conn,
                "SELECT id, proposal_json FROM memory_proposals "
                "WHERE proposal_json LIKE ? ESCAPE '!' ORDER BY created_at ASC, id ASC",
                (_containing(memory_id),),
            ).fetchall()
        parsed = [self.proposals.parse(pid, pjson) for pid, pjson in rows]
        return [p for p in parsed if p is not None]

    @guarded
    def events_mentioning(self, ids: Sequence[str]) -> builtins.list[StoredEvent]:
        """The audit events of this chain about ``ids`` (target or payload), in order."""
        wanted = builtins.list(dict.fromkeys(ids))
        if not wanted:
            return []
        db = self.db
        with db.connection() as conn:
            chain = self.audit.rows_where(conn)
            about = " OR ".join(
                ["target_id IN (" + ", ".join("?" for _ in wanted) + ")"]
                + ["event_json LIKE ? ESCAPE '!'" for _ in wanted]
            )
            where = f"{chain} AND ({about})" if chain else f"WHERE {about}"
            rows = db.execute(
                conn,
                f"SELECT {EVENT_COLUMNS} FROM memory_events {where} "
                f"ORDER BY {db.dialect.order_column} ASC",
                [*wanted, *(_containing(i) for i in wanted)],
            ).fetchall()
        return [event_from_row(r) for r in rows]

    @guarded
    def reward_events_of(self, memory_id: str) -> builtins.list[RewardEvent]:
        return self.ledger.reward_events(memory_id)

    @guarded
    def recall_usage_mentioning(
        self, memory_id: str, newest: int | None = None
    ) -> builtins.list[RecallUsage]:
        return self.ledger.recall_usage(like=_containing(memory_id), newest=newest)

    # -- the audit chain ---------------------------------------------------------------------

    @guarded
    def list_events(self) -> builtins.list[StoredEvent]:
        return self.audit.events()

    @guarded
    def verify_audit_chain(self) -> dict[str, Any]:
        """See :meth:`~.audit.AuditLog.verify`."""
        return self.audit.verify()

    def enable_audit_key(self, key: bytes) -> None:
        """See :meth:`~.audit.AuditLog.enable_key`."""
        self.audit.enable_key(key)

    def adopt_audit_key(self) -> dict[str, Any]:
        """See :meth:`~.audit.AuditLog.adopt_key`."""
        return self.audit.adopt_key()


def _containing(text: str) -> str:
    """The ``LIKE`` pattern (escape character ``!``) of a text containing ``text``."""
    escaped = text.replace("!", "!!").replace("%", "!%").replace("_", "!_")
    return f"%{escaped}%"

"""The provider flow every store shares, over a few primitive reads and writes.

:class:`StoreBase` implements the write side of
:class:`~swarmmem.ports.storage.StorageProvider` once: argument checks, one transaction per
call, the audit event of every mutation, the conflict rules of proposals and outcome events,
the default time of reward events and the candidate filter of a recall. A store supplies
``transaction``/``close``, the reads, and the primitives below (``_write_record``,
``_erase_record``, ``_store_event``, ``_scrub_rows``, ...), each called inside a transaction.
"""

from __future__ import annotations

import abc
import builtins
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, NamedTuple, TypeVar

import attrs

from swarmmem.core.model.errors import (
    ConflictError,
    MemoryValidationError,
    NotFoundError,
    StorageError,
)
from swarmmem.core.model.events import OutcomeEvent, RecallUsage, RewardEvent
from swarmmem.core.model.ids import to_iso
from swarmmem.core.model.records import MemoryProposal, MemoryRecord
from swarmmem.core.model.semantics import (
    ListFilter,
    StoredRow,
    event_json_for,
    proposal_event,
    tombstone,
)
from swarmmem.ports.clock import Clock
from swarmmem.ports.storage import Candidates, RecordKey, StoredEvent

_S = TypeVar("_S", bound="StoreBase")
#: how many records a bulk write (``upsert_many``) writes per batch
BATCH_SIZE = 1000
#: an audit event's JSON payload (stored as ``event_json``)
Payload = Mapping[str, Any] | None


class Preselection(NamedTuple):
    """What a recall asks of full-text pre-selection: the best ``limit`` matches of
    ``fts_query`` among the records ``flt`` lists (the stemmed index when ``stemmed``); when
    nothing matches, every scoped record (``scope_when_unmatched``) or none."""

    flt: ListFilter
    fts_query: str
    limit: int
    scope_when_unmatched: bool
    stemmed: bool = False


class StoreBase(abc.ABC):
    """The shared write flow of a storage provider (see the module docstring)."""

    name: str
    read_only: bool = False
    _clock: Clock
    load_report: builtins.list[dict[str, Any]]

    # -- what a store supplies -------------------------------------------------------------

    @abc.abstractmethod
    def transaction(self) -> AbstractContextManager[None]: ...

    @abc.abstractmethod
    def close(self) -> None: ...

    @abc.abstractmethod
    def list(self, flt: ListFilter) -> builtins.list[MemoryRecord]: ...

    @abc.abstractmethod
    def _write_record(self, record: MemoryRecord) -> MemoryRecord:
        """Store the stored form of ``record`` (``semantics.stored_form``) and return it."""

    @abc.abstractmethod
    def _has_record(self, memory_id: str) -> bool: ...

    @abc.abstractmethod
    def _stored_record(self, memory_id: str) -> MemoryRecord | None:
        """The stored form (no derived fields), or None when the row does not parse."""

    @abc.abstractmethod
    def _erase_record(self, memory_id: str) -> None:
        """Remove the record, its outcome events and its merge relations."""

    @abc.abstractmethod
    def _has_proposal(self, proposal_id: str) -> bool: ...

    @abc.abstractmethod
    def _write_proposal(self, proposal: MemoryProposal) -> None:
        """Store the proposal and the merge relations it creates."""

    @abc.abstractmethod
    def _store_event(self, event: StoredEvent) -> None: ...

    @abc.abstractmethod
    def _stored_outcome(self, event_id: str) -> OutcomeEvent | None: ...

    @abc.abstractmethod
    def _write_outcome(self, event: OutcomeEvent) -> None: ...

    @abc.abstractmethod
    def _write_usage(self, usage: RecallUsage) -> None: ...

    @abc.abstractmethod
    def _write_reward(self, event: RewardEvent) -> None: ...

    @abc.abstractmethod
    def _scrub_rows(self, memory_id: str, texts: Sequence[str], now: str) -> dict[str, int]:
        """Rewrite the proposals, outcome events and recall usage quoting ``texts``
        (``semantics.scrub_*``); how many of each were rewritten."""

    def _preselect(self, want: Preselection) -> Candidates | None:
        """Full-text pre-selection; ``None``: every scoped record is a candidate."""
        return None

    def count_where(self, flt: ListFilter) -> int:
        return len(self.list(attrs.evolve(flt, limit=None)))

    def list_keys(self, flt: ListFilter) -> builtins.list[RecordKey]:
        return [
            RecordKey(r.id, r.updated_at, r.expires_at, r.q, float(r.confidence))
            for r in self.list(flt)
        ]

    def unreadable_rows(self) -> builtins.list[dict[str, Any]]:
        """Everything loaded at open, so what ``load_report`` holds is complete."""
        return builtins.list(self.load_report)

    # -- plumbing --------------------------------------------------------------------------

    def _now(self) -> str:
        return to_iso(self._clock.now())

    def _log(self, op: str, target: str, reason: str | None = None, event: Payload = None) -> None:
        """Append an audit event (inside a transaction)."""
        self._store_event(
            StoredEvent(
                id=str(uuid.uuid4()),
                operation=op,
                target_id=target,
                timestamp=self._now(),
                reason=reason,
                event_json=event_json_for(reason, event),
            )
        )

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- records ---------------------------------------------------------------------------

    def upsert(self, record: MemoryRecord) -> MemoryRecord:
        _require(record, MemoryRecord, "upsert")
        with self.transaction():
            stored = self._write_record(record)
            self._log("upsert", stored.id)
        return stored

    def upsert_many(
        self,
        records: Sequence[MemoryRecord],
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> builtins.list[MemoryRecord]:
        records = builtins.list(records)
        for record in records:
            _require(record, MemoryRecord, "upsert_many")
        stored = []
        with self.transaction():
            for done, record in enumerate(records, start=1):
                stored.append(self._write_record(record))
                self._log("upsert", record.id)
                if progress is not None and (done % BATCH_SIZE == 0 or done == len(records)):
                    progress(done, len(records))
        return stored

    def upsert_rows(
        self,
        rows: Sequence[StoredRow],
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        self.upsert_many([row.record for row in rows], progress=progress)

    def delete(self, memory_id: str, *, reason: str, now: str, hard: bool = False) -> bool:
        with self.transaction():
            if not self._has_record(memory_id):
                return False
            if hard:
                self._erase_record(memory_id)
                self._log("delete", memory_id, reason, {"reason": reason, "hard": True})
                return True
            record = self._stored_record(memory_id)
            if record is None:
                raise StorageError(
                    f"stored record {memory_id} is invalid; only a hard delete can remove it"
                )
            self._write_record(tombstone(record, reason, now))
            self._log("delete", memory_id, reason)
        return True

    def scrub(self, memory_id: str, texts: Sequence[str], *, now: str) -> dict[str, int]:
        texts = tuple(t for t in texts if isinstance(t, str) and t.strip())
        with self.transaction():
            counts = self._scrub_rows(memory_id, texts, now)
            self._log("purge", memory_id, event={"memoryId": memory_id, **counts})
        return counts

    def select_candidates(
        self,
        *,
        scope_keys: Sequence[str],
        kinds: Sequence[str] | None,
        fts_query: str | None,
        preselect_limit: int,
        scope_when_unmatched: bool,
        now: str,
        include_expired: bool,
        candidate_cap: int,
        cap_before_preselect: bool = True,
        stemmed: bool = False,
    ) -> Candidates:
        flt = ListFilter(
            now=now,
            scope_keys=tuple(scope_keys),
            kinds=None if kinds is None else tuple(kinds),
            include_expired=include_expired,
            limit=candidate_cap,
        )
        if fts_query:
            scope = flt if cap_before_preselect else attrs.evolve(flt, limit=None)
            found = self._preselect(
                Preselection(scope, fts_query, preselect_limit, scope_when_unmatched, stemmed)
            )
            if found is not None:
                return found
        return Candidates(records=tuple(self.list(flt)), fts_order=None)

    # -- proposals -------------------------------------------------------------------------

    def _put_proposal(self, proposal: MemoryProposal, *, exists: bool) -> MemoryProposal:
        if not isinstance(proposal, MemoryProposal):
            verb = "update" if exists else "create"
            raise MemoryValidationError(f"{verb}_proposal needs a MemoryProposal")
        with self.transaction():
            found = self._has_proposal(proposal.id)
            if found and not exists:
                raise ConflictError(f"memory proposal already exists: {proposal.id}")
            if exists and not found:
                raise NotFoundError("memory proposal was not found")
            self._write_proposal(proposal)
            self._log("proposal", proposal.id, event=proposal_event(proposal))
        return proposal

    def create_proposal(self, proposal: MemoryProposal) -> MemoryProposal:
        return self._put_proposal(proposal, exists=False)

    def update_proposal(self, proposal: MemoryProposal) -> MemoryProposal:
        return self._put_proposal(proposal, exists=True)

    # -- events and ledgers ----------------------------------------------------------------

    def append_event(
        self, operation: str, target_id: str, *, reason: str | None = None, event: Payload = None
    ) -> None:
        with self.transaction():
            self._log(operation, target_id, reason, event)

    def record_recall_usage(self, usage: RecallUsage) -> None:
        _require(usage, RecallUsage, "record_recall_usage")
        with self.transaction():
            self._write_usage(usage)

    def append_outcome(self, event: OutcomeEvent) -> None:
        _require(event, OutcomeEvent, "append_outcome")
        with self.transaction():
            existing = self._stored_outcome(event.id)
            if existing is not None:
                if existing == event:
                    return
                raise ConflictError("outcome event id already exists with a different payload")
            self._write_outcome(event)

    def append_reward_event(self, event: RewardEvent) -> None:
        _require(event, RewardEvent, "append_reward_event")
        if event.timestamp is None:
            event = attrs.evolve(event, timestamp=self._now())
        with self.transaction():
            self._write_reward(event)


def _require(value: object, kind: type, method: str) -> None:
    """A ledger entry of the wrong type is a validation error naming the expected type."""
    if not isinstance(value, kind):
        raise MemoryValidationError(f"{method} needs a {kind.__name__}; got {type(value).__name__}")

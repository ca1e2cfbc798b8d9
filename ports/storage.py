"""Storage provider port.

A provider keeps memories, proposals, audit events, recall usage, outcome events, reward
events and merge relations for one project. Three adapters ship: in-memory, JSONL and SQLite
(the default); every one passes ``tests/contracts/test_storage_contract.py``.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

import attrs

from swarmmem.core.model.records import MemoryProposal, MemoryRecord


@attrs.frozen(kw_only=True)
class ListFilter:
    """Which memories ``list`` returns.

    ``scope_keys``/``kinds``: ``None`` means any. Inactive (deleted or superseded) and expired
    records are hidden unless asked for; ``now`` is the ISO time expiry is judged against.
    Results are ordered by ``updated_at`` descending, then id ascending.
    """

    now: str
    scope_keys: tuple[str, ...] | None = attrs.field(default=None)
    kinds: tuple[str, ...] | None = attrs.field(default=None)
    include_inactive: bool = False
    include_expired: bool = False
    limit: int | None = None


@attrs.frozen(kw_only=True)
class Candidates:
    """Records a recall should score, plus the full-text order when pre-selection ran.

    ``fts_order`` maps memory id to its 0-based BM25 position (``None`` when no full-text
    pre-selection happened, including every fallback to all scoped records).
    """

    records: tuple[MemoryRecord, ...]
    fts_order: dict[str, int] | None = attrs.field(default=None, hash=False)


@attrs.frozen(kw_only=True)
class StoredEvent:
    """One audit event row."""

    id: str
    operation: str
    target_id: str
    timestamp: str
    reason: str | None = None
    event_json: str | None = None
    prev_hash: str | None = None


@runtime_checkable
class StorageProvider(Protocol):
    """**Protocol:** durable state of one project's memory.

    Obligations:

    * ``upsert`` is idempotent per id; the last write wins. ``list``/``get`` never return
      ``relations`` that were not derived from applied merge proposals.
    * Every mutation appends an audit event (``upsert``, ``delete``, ``proposal``, ...).
    * Inside ``transaction()`` all writes become visible together or not at all; a failure
      (exception) rolls every one of them back. Transactions may nest (inner ones join).
    * Deletes are tombstones (``metadata.deleted = True``) unless ``hard=True``.
    * Bad rows on disk are reported, never silently dropped, and never crash ``open``.
    * ``close`` releases files and connections; providers are context managers.
    """

    name: str

    def transaction(self) -> AbstractContextManager[None]:
        """All-or-nothing scope for a group of writes."""
        ...

    def get(self, memory_id: str) -> MemoryRecord | None:
        """The record with ``memory_id`` (any state), or ``None``."""
        ...

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """The records (any state) of those ``memory_ids`` that exist, keyed by id."""
        ...

    def list(self, flt: ListFilter) -> builtins.list[MemoryRecord]:
        """Records matching ``flt``, newest first."""
        ...

    def count(self) -> int:
        """How many records are stored (tombstones included)."""
        ...

    def upsert(self, record: MemoryRecord) -> MemoryRecord:
        """Insert or replace ``record`` (already validated by the caller)."""
        ...

    def delete(self, memory_id: str, *, reason: str, now: str, hard: bool = False) -> bool:
        """Tombstone (or, internally, erase) a record; False when it did not exist."""
        ...

    def select_candidates(
        self,
        *,
        scope_keys: Sequence[str],
        kinds: Sequence[str] | None,
        fts_query: str | None,
        mode: str,
        max_items: int,
        now: str,
        include_expired: bool,
        candidate_cap: int,
    ) -> Candidates:
        """Active scoped records to score for a recall, pre-selected by full text if supported.

        ``fts_query`` is a ready FTS5 ``MATCH`` string (quoted terms joined by ``OR``) or None.
        Providers without full-text search return every scoped record (up to the cap).
        """
        ...

    def create_proposal(self, proposal: MemoryProposal) -> MemoryProposal:
        """Store a new proposal."""
        ...

    def get_proposal(self, proposal_id: str) -> MemoryProposal | None:
        """A proposal by id, or ``None``."""
        ...

    def list_proposals(self, status: str | None = None) -> builtins.list[MemoryProposal]:
        """Proposals (optionally of one status), oldest first."""
        ...

    def update_proposal(self, proposal: MemoryProposal) -> MemoryProposal:
        """Replace a stored proposal (status, review fields)."""
        ...

    def append_event(
        self,
        operation: str,
        target_id: str,
        *,
        reason: str | None = None,
        event: dict[str, Any] | None = None,
    ) -> None:
        """Append an audit event."""
        ...

    def list_events(self) -> builtins.list[StoredEvent]:
        """Every audit event in insertion order."""
        ...

    def record_recall_usage(self, usage: dict[str, Any]) -> None:
        """Store one recall bundle's usage (``bundleId``, ``memoryIds``, ``scores``, ...)."""
        ...

    def list_recall_usage(
        self, *, run_id: str | None = None, since: str | None = None
    ) -> builtins.list[dict[str, Any]]:
        """Recorded recall usage, oldest first, optionally for one run or after ``since``."""
        ...

    def append_outcome(self, event: dict[str, Any]) -> None:
        """Append an outcome event (``id``, ``memoryId``, ``generation``, ``outcome``, ...)."""
        ...

    def list_outcomes(self, memory_id: str | None = None) -> builtins.list[dict[str, Any]]:
        """Outcome events, optionally of one memory, ordered by (``at``, ``id``)."""
        ...

    def append_reward_event(self, event: dict[str, Any]) -> None:
        """Append a learning reward event."""
        ...

    def list_reward_events(self) -> builtins.list[dict[str, Any]]:
        """Every reward event, oldest first."""
        ...

    def related_ids(self, memory_id: str) -> builtins.list[str]:
        """Ids merged with ``memory_id`` (sorted, at most 32)."""
        ...

    def iter_all_records(self) -> Iterator[MemoryRecord]:
        """Every record in any state, with provenance, for export."""
        ...

    def close(self) -> None:
        """Release resources. Idempotent."""
        ...

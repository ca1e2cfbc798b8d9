"""Storage ports: what callers need from the place one project's memory is kept.

Three small Protocols say what each kind of caller relies on: :class:`RecordStore` (the
memories), :class:`ProposalStore` (the curator's queue) and :class:`EventLedger` (the audit
log and the learning ledgers). :class:`StorageProvider` combines them with transactions and
is what a provider implements; four ship (in-memory, JSONL, SQLite, the default, and
PostgreSQL), and every one passes ``tests/contracts/test_storage_contract.py``.

What a stored record means (stored form, derived fields, list order) is stated once, in
:mod:`swarmmem.core.model.semantics`; :class:`ListFilter` lives there. Ledger entries are the
typed values of :mod:`swarmmem.core.model.events`.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, NamedTuple, Protocol, runtime_checkable

import attrs

from swarmmem.core.model.candidates import CandidateRow
from swarmmem.core.model.events import OutcomeEvent, RecallUsage, RewardEvent
from swarmmem.core.model.records import MemoryProposal, MemoryRecord
from swarmmem.core.model.semantics import ListFilter, StoredRow

__all__ = [
    "CandidateRow",
    "Candidates",
    "EventLedger",
    "ListFilter",
    "OutcomeEvent",
    "ProposalStore",
    "RecallUsage",
    "RecordKey",
    "RecordStore",
    "RewardEvent",
    "StorageProvider",
    "StoredEvent",
]


#: the full records of chosen candidate rows, by id; a row whose record cannot be read is
#: absent (and reported in the provider's ``load_report``)
RecordLoader = Callable[[Sequence[CandidateRow]], Mapping[str, MemoryRecord]]


@attrs.frozen(kw_only=True)
class Candidates:
    """Records a recall should score, plus the full-text order when pre-selection ran.

    A provider gives either the ``records`` or, decoding only what scoring needs, their
    ``rows`` (:class:`~swarmmem.core.model.candidates.CandidateRow`, in the same order) with
    ``load``, which builds the full records of the rows a recall returns. ``records`` of
    candidates given as rows builds every record (once). A row ``load`` cannot read is
    reported by the provider and never offered by a later ``select_candidates``.

    ``fts_order`` maps memory id to its 0-based BM25 position (``None`` when no full-text
    pre-selection happened, including every fallback to all scoped records).
    """

    _records: tuple[MemoryRecord, ...] | None = attrs.field(default=None, alias="records")
    rows: tuple[CandidateRow, ...] | None = None
    load: RecordLoader | None = attrs.field(default=None, eq=False, repr=False)
    fts_order: dict[str, int] | None = attrs.field(default=None, hash=False)
    #: BM25 relevance per pre-selected id (``-bm25()``: higher is better), when known
    fts_scores: dict[str, float] | None = attrs.field(default=None, hash=False)
    #: per pre-selected id, which of the query's stemmed terms its text holds (what
    #: :func:`~swarmmem.core.recall.bm25.content_matches` computes, no other term), when the
    #: store knows them without stemming the text again (its index, or terms written with
    #: the row)
    held_terms: dict[str, frozenset[str]] | None = attrs.field(default=None, hash=False)
    #: the same as masks, one per row in order (bit ``j``: ``marked_terms[j]``), from a store
    #: whose rows are exactly the pre-selected, recallable ones (its own index knows them)
    term_marks: tuple[int, ...] | None = attrs.field(default=None, hash=False)
    marked_terms: tuple[str, ...] = attrs.field(default=(), hash=False)
    _built: builtins.list[tuple[MemoryRecord, ...]] = attrs.field(
        factory=builtins.list, init=False, eq=False, repr=False, hash=False
    )

    def __attrs_post_init__(self) -> None:
        if self._records is None and (self.rows is None or self.load is None):
            raise TypeError("Candidates needs records, or rows with load")

    @property
    def records(self) -> tuple[MemoryRecord, ...]:
        """Every candidate's full record (those of ``rows`` built on first use)."""
        if self._records is not None:
            return self._records
        if not self._built:
            assert self.rows is not None and self.load is not None
            found = self.load(self.rows)
            self._built.append(tuple(found[r.id] for r in self.rows if r.id in found))
        return self._built[0]


class RecordKey(NamedTuple):
    """What a report needs to pick records before reading them: a record's id, update and
    expiry times, learned value and confidence."""

    id: str
    updated_at: str
    expires_at: str | None
    q: float | None
    confidence: float | None


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
class RecordStore(Protocol):
    """**Protocol:** the memories of one project.

    Obligations:

    * ``upsert`` is idempotent per id; the last write wins. It keeps and returns the stored
      form (``semantics.stored_form``) and appends an ``upsert`` audit event.
    * ``delete`` tombstones (``semantics.tombstone``) unless ``hard=True``, which erases the
      record with its outcome events and merge relations; either appends a ``delete`` event.
    * Reads return records in any state with their derived fields materialised
      (``semantics.materialize``); ``relations`` come only from applied merge proposals.
    * A stored row that does not parse is reported in the provider's ``load_report`` and
      skipped by reads; it never crashes ``open`` and is never silently dropped.
    """

    def get(self, memory_id: str) -> MemoryRecord | None:
        """The record with ``memory_id`` (any state), or ``None``."""
        ...

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """The records (any state) of those ``memory_ids`` that exist, keyed by id."""
        ...

    def list(self, flt: ListFilter) -> builtins.list[MemoryRecord]:
        """Records matching ``flt``, newest first (exactly ``semantics.filter_records``)."""
        ...

    def count(self) -> int:
        """How many records are stored (tombstones included)."""
        ...

    def count_where(self, flt: ListFilter) -> int:
        """How many records ``list(flt)`` returns without its limit (SQL stores count
        without reading records)."""
        ...

    def list_keys(self, flt: ListFilter) -> builtins.list[RecordKey]:
        """The keys of ``list(flt)``, in its order (SQL stores read no record to answer)."""
        ...

    def upsert(self, record: MemoryRecord) -> MemoryRecord:
        """Insert or replace ``record`` (already validated by the caller); the stored form."""
        ...

    def delete(self, memory_id: str, *, reason: str, now: str, hard: bool = False) -> bool:
        """Tombstone (or erase) a record; False when it did not exist."""
        ...

    def upsert_many(
        self,
        records: Sequence[MemoryRecord],
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> builtins.list[MemoryRecord]:
        """``upsert`` of each record in order, in one transaction (each still gets its
        ``upsert`` audit event); the stored forms. ``progress(done, total)`` is called as
        batches are written."""
        ...

    def upsert_rows(
        self,
        rows: Sequence[StoredRow],
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        """``upsert_many`` of each row's record (a bulk import's rows, validated and in their
        stored form: a SQL store writes them without building the records)."""
        ...

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
        """Active scoped records to score for a recall, pre-selected by full text if supported.

        ``fts_query`` is a ready FTS5 ``MATCH`` string (quoted terms joined by ``OR``) or None.
        Without it, or without full-text search, the answer is ``list`` of the scope (newest
        first, at most ``candidate_cap``). With it, the records whose text matches, at most
        ``preselect_limit`` by BM25, in list order with ``fts_order``, taken among the newest
        ``candidate_cap`` scoped records when ``cap_before_preselect`` (the reference's rule)
        or among all of them otherwise; when nothing matches,
        the whole scope when ``scope_when_unmatched``, else nothing. (The recall pipeline
        decides both values: :func:`swarmmem.core.recall.lexical.preselect_limit`.)
        ``stemmed`` searches the stemmed index (``porter unicode61``) instead of the
        reference's one; a store without it answers as without full-text search.
        """
        ...

    def iter_all_records(self) -> Iterator[MemoryRecord]:
        """Every record in any state, oldest update first, with provenance, for export."""
        ...

    def related_ids(self, memory_id: str) -> builtins.list[str]:
        """Ids merged with ``memory_id`` (sorted, at most 32)."""
        ...


@runtime_checkable
class ProposalStore(Protocol):
    """**Protocol:** the curator's queue of proposals.

    Obligations: every write appends a ``proposal`` audit event
    (``semantics.proposal_event``); writing an applied merge proposal relates its existing
    memories pairwise (``semantics.merge_pairs``), and those relations survive reopening.
    """

    def create_proposal(self, proposal: MemoryProposal) -> MemoryProposal:
        """Store a new proposal (ConflictError when the id exists)."""
        ...

    def get_proposal(self, proposal_id: str) -> MemoryProposal | None:
        """A proposal by id, or ``None``."""
        ...

    def list_proposals(self, status: str | None = None) -> builtins.list[MemoryProposal]:
        """Proposals (optionally of one status), oldest first, then by id."""
        ...

    def update_proposal(self, proposal: MemoryProposal) -> MemoryProposal:
        """Replace a stored proposal (NotFoundError when it does not exist)."""
        ...


@runtime_checkable
class EventLedger(Protocol):
    """**Protocol:** the audit log and the learning ledgers.

    Obligations: events and ledger entries are append-only and listed oldest first; SQL
    providers chain audit events by ``prev_hash`` (``swarmmem.core.model.audit``). Ledger
    entries are the typed values of ``swarmmem.core.model.events`` (validated when built;
    anything else raises MemoryValidationError), stored in the JSON shape of
    ``swarmmem.core.model.codec``, so every provider returns values equal to those stored.
    """

    def append_event(
        self,
        operation: str,
        target_id: str,
        *,
        reason: str | None = None,
        event: dict[str, Any] | None = None,
    ) -> None:
        """Append an audit event (``event_json`` is ``event``, else ``{"reason": ...}``)."""
        ...

    def list_events(self) -> builtins.list[StoredEvent]:
        """Every audit event in insertion order."""
        ...

    def record_recall_usage(self, usage: RecallUsage) -> None:
        """Store one recall bundle's usage."""
        ...

    def list_recall_usage(
        self, *, run_id: str | None = None, since: str | None = None
    ) -> builtins.list[RecallUsage]:
        """Recorded recall usage, oldest first, optionally for one run or from ``since`` on
        (exactly ``RecallUsage.matches``)."""
        ...

    def append_outcome(self, event: OutcomeEvent) -> None:
        """Append an outcome event.

        The same id with an equal event is a no-op; with another event, ConflictError.
        """
        ...

    def list_outcomes(self, memory_id: str | None = None) -> builtins.list[OutcomeEvent]:
        """Outcome events, optionally of one memory, ordered by ``OutcomeEvent.sort_key``."""
        ...

    def append_reward_event(self, event: RewardEvent) -> None:
        """Append a learning reward event (a ``timestamp`` of ``None`` becomes the clock's now)."""
        ...

    def list_reward_events(self) -> builtins.list[RewardEvent]:
        """Every reward event, oldest first (by ``timestamp``)."""
        ...


@runtime_checkable
class StorageProvider(RecordStore, ProposalStore, EventLedger, Protocol):
    """**Protocol:** durable state of one project's memory (all three stores at once).

    Obligations, besides those of each store:

    * Every mutation appends an audit event.
    * ``scrub`` leaves no copy of the scrubbed text in the provider's own files (the SQLite
      file and its write-ahead log, the JSONL files); a server database (PostgreSQL) may
      keep dead row versions until its own ``VACUUM``.
    * Inside ``transaction()`` all writes become visible together or not at all; a failure
      (exception) rolls every one of them back. Transactions may nest (a failing inner block
      undoes only its own writes, like a savepoint).
    * Driver errors surface as :class:`~swarmmem.core.model.errors.StorageError`.
    * ``close`` releases files and connections; later calls raise StorageError. Providers are
      context managers.
    * ``read_only`` is true when the store was opened for reading only (a store the process
      may not write): every read works, every write raises StorageError.
    """

    name: str
    read_only: bool

    def unreadable_rows(self) -> builtins.list[dict[str, Any]]:
        """Stored rows that cannot be read (``{file, line, id, error}``), found without
        parsing every record: what ``load_report`` holds plus, for SQL stores, item rows whose
        JSON does not parse."""
        ...

    def scrub(self, memory_id: str, texts: Sequence[str], *, now: str) -> dict[str, int]:
        """The second step of a purge, after ``delete(memory_id, hard=True)``: rewrite, in
        place and in one transaction, every row that still quotes the memory.

        Proposals (``semantics.scrub_proposal``), outcome events (``scrub_outcome``) and
        recall usage (``scrub_usage``) get ``[PURGED]`` in their quoting text fields, and no
        earlier version of a rewritten row survives in the provider's files. Audit events are
        never rewritten (the chain would break). Appends one ``purge`` audit event holding
        ``memoryId`` and the counts, never the texts. Returns how many rows were rewritten:
        ``{"proposals": n, "outcomes": n, "recallUsage": n}``.
        """
        ...

    def transaction(self) -> AbstractContextManager[None]:
        """All-or-nothing scope for a group of writes."""
        ...

    def close(self) -> None:
        """Release resources. Idempotent."""
        ...


# ----------------------------------------------------------------- optional capabilities


@runtime_checkable
class AuditChain(Protocol):
    """**Optional capability:** a hash-chained audit log that can be keyed and verified
    (the SQL stores)."""

    def enable_audit_key(self, key: bytes) -> None:
        """Hash audit rows with HMAC under ``key`` from now on."""
        ...

    def adopt_audit_key(self) -> dict[str, Any]:
        """Key an existing unkeyed chain with the configured key (an audited step)."""
        ...

    def verify_audit_chain(self) -> dict[str, Any]:
        """Walk the chain and report whether every link and the head hold."""
        ...


@runtime_checkable
class ScopeCounts(Protocol):
    """**Optional capability:** active memories per scope key, counted by the store's own
    query (others are counted by reading every record)."""

    def scope_counts(self) -> dict[str, int]:
        """Active (not deleted, not superseded) memories per scope key."""
        ...


@runtime_checkable
class MemoryHistory(Protocol):
    """**Optional capability:** the rows about one memory, found by the store's own query
    instead of reading and parsing every proposal, audit event and reward event (a memory's
    page on a large store). Each method may return more rows than asked for (a text match
    narrowed by the caller), never fewer; others read everything and filter."""

    def proposals_mentioning(self, memory_id: str) -> builtins.list[MemoryProposal]:
        """Every proposal whose stored form contains ``memory_id`` (among them, every one
        that proposes, targets or relates it), oldest first."""
        ...

    def events_mentioning(self, ids: Sequence[str]) -> builtins.list[StoredEvent]:
        """Every audit event whose target is one of ``ids`` or whose payload contains one of
        them, in insertion order."""
        ...

    def reward_events_of(self, memory_id: str) -> builtins.list[RewardEvent]:
        """The reward events of ``memory_id``, oldest first (by ``timestamp``)."""
        ...

    def recall_usage_mentioning(
        self, memory_id: str, newest: int | None = None
    ) -> builtins.list[RecallUsage]:
        """The recall usage rows whose stored form contains ``memory_id`` (among them, every
        one that returned it), oldest first; with ``newest``, only that many of the newest
        such rows."""
        ...

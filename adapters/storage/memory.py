"""The in-memory storage provider: everything in dictionaries.

:class:`InMemoryStore` is a real adapter (tests, scratch sessions, benchmarks) and the plainest
statement of what a provider does; the JSONL provider extends it with an append-only log.
The record rules every provider applies live in :mod:`swarmmem.core.model.semantics`, the
write flow in :mod:`swarmmem.adapters.storage.base`.
"""

from __future__ import annotations

import builtins
import contextlib
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from swarmmem.adapters.storage.base import Preselection, StoreBase
from swarmmem.core.model.candidates import CandidateRow
from swarmmem.core.model.codec import (
    outcome_event_to_dict,
    proposal_to_dict,
    recall_usage_to_dict,
    record_to_dict,
    reward_event_to_dict,
)
from swarmmem.core.model.errors import StorageError
from swarmmem.core.model.events import OutcomeEvent, RecallUsage, RewardEvent
from swarmmem.core.model.records import MemoryProposal, MemoryRecord
from swarmmem.core.model.semantics import (
    MAX_RELATIONS_PER_MEMORY,
    ListFilter,
    filter_records,
    materialize,
    merge_pairs,
    relation_created_at,
    scrub_outcome,
    scrub_proposal,
    scrub_usage,
    stored_form,
)
from swarmmem.core.recall.features import FeatureTable
from swarmmem.ports.clock import Clock, SystemClock
from swarmmem.ports.storage import Candidates, StoredEvent

if TYPE_CHECKING:
    from swarmmem.core.config import MemoryConfig

_MISSING = object()


class InMemoryStore(StoreBase):
    """A :class:`~swarmmem.ports.storage.StorageProvider` held in dictionaries.

    Transactions nest like savepoints: every mutation pushes an undo step; a failing block
    undoes its own steps (and, if the exception escapes, the enclosing ones too).
    """

    name = "memory"

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock: Clock = clock or SystemClock()
        self._records: dict[str, MemoryRecord] = {}
        self._proposals: dict[str, MemoryProposal] = {}
        self._events: builtins.list[StoredEvent] = []
        self._usage: builtins.list[RecallUsage] = []
        self._outcomes: dict[str, OutcomeEvent] = {}
        self._outcomes_by_memory: dict[str, dict[str, OutcomeEvent]] = {}
        self._rewards: builtins.list[RewardEvent] = []
        self._relations: dict[str, dict[str, str]] = {}
        self._undo: builtins.list[Callable[[], None]] = []
        #: BM25 features of ``_records``, built at the first stemmed recall, then kept in step
        #: with every write (dropped when a transaction rolls back)
        self._features: FeatureTable | None = None
        self._depth = 0
        self._closed = False
        self.load_report: builtins.list[dict[str, Any]] = []

    @classmethod
    def from_config(
        cls, tree: MemoryConfig, *, clock: Clock | None, **_parts: Any
    ) -> InMemoryStore:
        """An empty store (nothing of the configuration applies)."""
        return cls(clock=clock)

    # -- plumbing ------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError(f"the {self.name} store is closed")

    def _set(self, mapping: dict[Any, Any], key: Any, value: Any) -> None:
        old = mapping.get(key, _MISSING)
        mapping[key] = value

        def undo() -> None:
            if old is _MISSING:
                mapping.pop(key, None)
            else:
                mapping[key] = old

        self._undo.append(undo)

    def _pop(self, mapping: dict[Any, Any], key: Any) -> None:
        if key not in mapping:
            return
        old = mapping.pop(key)
        self._undo.append(lambda: mapping.__setitem__(key, old))

    def _append(self, items: builtins.list[Any], value: Any) -> None:
        items.append(value)
        self._undo.append(items.pop)

    def _replace(self, items: builtins.list[Any], index: int, value: Any) -> None:
        old = items[index]
        items[index] = value
        self._undo.append(lambda: items.__setitem__(index, old))

    def _rollback_to(self, mark: int) -> None:
        if len(self._undo) > mark:
            self._features = None
        while len(self._undo) > mark:
            self._undo.pop()()

    def _journal(self, file: str, line: Mapping[str, Any], *, durable: bool = True) -> None:
        """Persistence hook: a line for ``file`` (the JSONL provider writes them at commit);
        a commit of lines that are not ``durable`` alone (recall usage) is not synced to
        disk."""

    def _rewrite(self, file: str) -> None:
        """Persistence hook: ``file`` must be rewritten from state at commit."""

    def _commit(self) -> None:
        """Persistence hook: make the outermost transaction durable."""

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All-or-nothing scope; nested blocks behave like savepoints."""
        self._check_open()
        mark = len(self._undo)
        outer = self._depth == 0
        self._depth += 1
        try:
            yield
        except BaseException:
            self._rollback_to(mark)
            raise
        else:
            if outer:
                try:
                    self._commit()
                except BaseException:
                    self._rollback_to(mark)
                    raise
        finally:
            self._depth -= 1
            if self._depth == 0:
                self._undo.clear()

    def close(self) -> None:
        """Release the store (idempotent); later calls raise :class:`StorageError`."""
        self._closed = True

    # -- records -------------------------------------------------------------------------

    def _view(self, record: MemoryRecord) -> MemoryRecord:
        events = self._outcomes_by_memory.get(record.id)
        if not events and not record.relations and record.id not in self._relations:
            return record  # nothing to attach (most records)
        return materialize(
            record, list(events.values()) if events else (), self.related_ids(record.id)
        )

    def get(self, memory_id: str) -> MemoryRecord | None:
        self._check_open()
        record = self._records.get(memory_id)
        return None if record is None else self._view(record)

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        self._check_open()
        found = (self._records.get(memory_id) for memory_id in memory_ids)
        return {r.id: self._view(r) for r in found if r is not None}

    def list(self, flt: ListFilter) -> builtins.list[MemoryRecord]:
        self._check_open()
        return [self._view(r) for r in filter_records(self._records.values(), flt)]

    def count(self) -> int:
        self._check_open()
        return len(self._records)

    def iter_all_records(self) -> Iterator[MemoryRecord]:
        self._check_open()
        ordered = sorted(self._records.values(), key=lambda r: (r.updated_at, r.id))
        for record in ordered:
            yield self._view(record)

    def _write_record(self, record: MemoryRecord) -> MemoryRecord:
        stored = stored_form(record, self._records.get(record.id))
        self._set(self._records, stored.id, stored)
        if self._features is not None:
            self._features.put(stored)
        self._journal("memories.jsonl", _record_line(stored))
        return stored

    def _has_record(self, memory_id: str) -> bool:
        return memory_id in self._records

    def _stored_record(self, memory_id: str) -> MemoryRecord | None:
        return self._records.get(memory_id)

    def _erase_record(self, memory_id: str) -> None:
        self._pop(self._records, memory_id)
        if self._features is not None:
            self._features.remove(memory_id)
        self._rewrite("memories.jsonl")
        for event_id in list(self._outcomes_by_memory.get(memory_id, {})):
            self._pop(self._outcomes, event_id)
            self._rewrite("outcome-events.jsonl")
        self._pop(self._outcomes_by_memory, memory_id)
        self._pop(self._relations, memory_id)
        for source, bucket in list(self._relations.items()):
            if memory_id in bucket:
                self._pop(bucket, memory_id)
                if not bucket:
                    self._pop(self._relations, source)

    def _preselect(self, want: Preselection) -> Candidates | None:
        """The stemmed channel's best BM25 matches among every scoped record (the reference
        path, unstemmed, scores every scoped record instead: ``None``)."""
        if not want.stemmed:
            return None
        if self._features is None:
            self._features = FeatureTable(self._records.values())
        flt = want.flt
        hits = self._features.search(
            want.fts_query,
            scope_keys=flt.scope_keys,
            kinds=flt.kinds,
            now=flt.now,
            include_expired=flt.include_expired,
            limit=want.limit,
        )
        return Candidates(
            rows=hits.rows,
            load=self._load_rows,
            fts_scores=dict(zip(hits.ids, hits.scores, strict=True)),
            term_marks=hits.marks,
            marked_terms=hits.marked,
        )

    def _load_rows(self, rows: Sequence[CandidateRow]) -> dict[str, MemoryRecord]:
        """The records of candidate ``rows`` by id, as :meth:`get` reads them."""
        found = (self._records.get(row.id) for row in rows)
        return {r.id: self._view(r) for r in found if r is not None}

    def related_ids(self, memory_id: str) -> builtins.list[str]:
        self._check_open()
        return sorted(self._relations.get(memory_id, ()))[:MAX_RELATIONS_PER_MEMORY]

    # -- proposals -----------------------------------------------------------------------

    def _has_proposal(self, proposal_id: str) -> bool:
        return proposal_id in self._proposals

    def _write_proposal(self, proposal: MemoryProposal) -> None:
        self._set(self._proposals, proposal.id, proposal)
        self._journal("proposals.jsonl", proposal_to_dict(proposal))
        created = relation_created_at(proposal)
        for source, target in merge_pairs(proposal):
            if source in self._records and target in self._records:
                bucket = self._relations.get(source)
                if bucket is None:
                    bucket = {}
                    self._set(self._relations, source, bucket)
                if target not in bucket:
                    self._set(bucket, target, f"{proposal.id}|{created}")

    def get_proposal(self, proposal_id: str) -> MemoryProposal | None:
        self._check_open()
        return self._proposals.get(proposal_id)

    def list_proposals(self, status: str | None = None) -> builtins.list[MemoryProposal]:
        self._check_open()
        out = [p for p in self._proposals.values() if status is None or p.status == status]
        out.sort(key=lambda p: (p.created_at, p.id))
        return out

    # -- purges --------------------------------------------------------------------------

    def _scrub_rows(self, memory_id: str, texts: Sequence[str], now: str) -> dict[str, int]:
        counts = {"proposals": 0, "outcomes": 0, "recallUsage": 0}
        for proposal in list(self._proposals.values()):
            clean = scrub_proposal(proposal, memory_id, texts, now)
            if clean is not None:
                self._set(self._proposals, clean.id, clean)
                counts["proposals"] += 1
        for event in list(self._outcomes.values()):
            scrubbed = scrub_outcome(event, texts)
            if scrubbed is not None:
                self._set(self._outcomes, event.id, scrubbed)
                self._set(self._outcomes_by_memory[event.memory_id], event.id, scrubbed)
                counts["outcomes"] += 1
        for index, usage in enumerate(self._usage):
            cleaned = scrub_usage(usage, texts)
            if cleaned is not None:
                self._replace(self._usage, index, cleaned)
                counts["recallUsage"] += 1
        for file in ("memories.jsonl", "proposals.jsonl", "outcome-events.jsonl", "audit.jsonl"):
            self._rewrite(file)  # no earlier line version survives a purge
        return counts

    # -- events and ledgers --------------------------------------------------------------

    def _store_event(self, event: StoredEvent) -> None:
        self._append(self._events, event)
        self._journal("audit.jsonl", _event_line(event))

    def list_events(self) -> builtins.list[StoredEvent]:
        self._check_open()
        return list(self._events)

    def _write_usage(self, usage: RecallUsage) -> None:
        self._append(self._usage, usage)
        self._journal("audit.jsonl", _usage_line(usage), durable=False)

    def list_recall_usage(
        self, *, run_id: str | None = None, since: str | None = None
    ) -> builtins.list[RecallUsage]:
        self._check_open()
        out = [u for u in self._usage if u.matches(run_id, since)]
        out.sort(key=lambda u: u.timestamp)
        return out

    def _stored_outcome(self, event_id: str) -> OutcomeEvent | None:
        return self._outcomes.get(event_id)

    def _write_outcome(self, event: OutcomeEvent) -> None:
        self._set(self._outcomes, event.id, event)
        bucket = self._outcomes_by_memory.get(event.memory_id)
        if bucket is None:
            bucket = {}
            self._set(self._outcomes_by_memory, event.memory_id, bucket)
        self._set(bucket, event.id, event)
        self._journal("outcome-events.jsonl", outcome_event_to_dict(event))

    def list_outcomes(self, memory_id: str | None = None) -> builtins.list[OutcomeEvent]:
        self._check_open()
        if memory_id is None:
            events: Iterable[OutcomeEvent] = self._outcomes.values()
        else:
            events = self._outcomes_by_memory.get(memory_id, {}).values()
        return sorted(events, key=lambda e: e.sort_key)

    def _write_reward(self, event: RewardEvent) -> None:
        self._append(self._rewards, event)
        self._journal("reward-events.jsonl", reward_event_to_dict(event))

    def list_reward_events(self) -> builtins.list[RewardEvent]:
        self._check_open()
        return sorted(self._rewards, key=_reward_time)


# --------------------------------------------------------------------------- line shapes
# The JSONL provider's line formats live beside the state they serialise.


def _record_line(record: MemoryRecord) -> dict[str, Any]:
    return record_to_dict(record, include_provenance=True, include_outcomes=False)


def _event_line(event: StoredEvent) -> dict[str, Any]:
    line: dict[str, Any] = {
        "id": event.id,
        "operation": event.operation,
        "targetId": event.target_id,
        "timestamp": event.timestamp,
    }
    if event.reason is not None:
        line["reason"] = event.reason
    if event.event_json is not None:
        line["eventJson"] = event.event_json
    return line


def _usage_line(usage: RecallUsage) -> dict[str, Any]:
    return {
        "id": str(uuid.uuid4()),
        "operation": "recall",
        "targetId": usage.bundle_id,
        "timestamp": usage.timestamp,
        "usage": recall_usage_to_dict(usage),
    }


def _reward_time(event: RewardEvent) -> str:
    """The listing order of reward events (a stored event always has its timestamp)."""
    return event.timestamp or ""

"""The in-memory storage provider, and the provider semantics the other providers share.

:class:`InMemoryStore` keeps everything in dictionaries. It is a real adapter (tests, scratch
sessions, benchmarks) and it is the executable statement of what a provider does; the JSONL
provider extends it with an append-only log and the SQLite provider reuses its helpers, so
the three agree by construction where they can and by the contract suite everywhere else.

Shared semantics (every provider):

* ``upsert`` stores the *stored form* of a record: derived fields are dropped (``relations``;
  the ``outcomes`` view and ``metadata.outcomeEventIds``), ``validFrom`` is never reset once a
  row exists and ``supersedesReason`` keeps its previous value when the new one is absent.
* Reads materialise derived fields: ``relations`` from applied merge proposals and, for the
  record's current ``metadata.outcomeGeneration``, ``outcomes``, ``metadata.outcomeEventIds``
  and the union of record and outcome anchors.
* Outcome, reward and recall-usage ledgers are normalised through JSON, so every provider
  returns the same plain dicts.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import math
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs

from swarmmem.core.model.codec import (
    anchor_from_dict,
    anchor_to_dict,
    outcome_from_dict,
    outcome_to_dict,
)
from swarmmem.core.model.errors import (
    ConflictError,
    MemoryValidationError,
    NotFoundError,
    StorageError,
)
from swarmmem.core.model.ids import iso_to_ms, to_iso
from swarmmem.core.model.records import (
    MAX_ANCHORS,
    Anchor,
    MemoryProposal,
    MemoryRecord,
    MemoryScope,
    Relation,
)
from swarmmem.ports.clock import Clock, SystemClock
from swarmmem.ports.storage import Candidates, ListFilter, StoredEvent

MAX_RELATIONS_PER_MEMORY = 32
_MISSING = object()


# --------------------------------------------------------------------------- shared helpers


def dumps(value: Any) -> str:
    """Compact JSON (no spaces, non-ASCII kept), the on-disk form of every JSON column/line."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def plain_json(value: Any) -> Any:
    """``value`` after a JSON round trip (tuples become lists, keys become strings)."""
    return json.loads(dumps(value))


def stored_form(record: MemoryRecord, previous: MemoryRecord | None) -> MemoryRecord:
    """The record as a provider stores it (see the module docstring)."""
    changes: dict[str, Any] = {}
    if "outcomeEventIds" in record.metadata:
        changes["metadata"] = {k: v for k, v in record.metadata.items() if k != "outcomeEventIds"}
    if record.outcomes is not None:
        changes["outcomes"] = None
    if record.relations:
        changes["relations"] = ()
    if record.source_task_id == "":
        changes["source_task_id"] = None
    if record.embedding_model_version == "":
        changes["embedding_model_version"] = None
    if previous is not None:
        if record.valid_from != previous.valid_from:
            changes["valid_from"] = previous.valid_from
        if record.supersedes_reason is None and previous.supersedes_reason is not None:
            changes["supersedes_reason"] = previous.supersedes_reason
    return attrs.evolve(record, **changes) if changes else record


def passes_sql_expiry(expires_at: str | None, now: str) -> bool:
    """The SQL expiry test: no expiry, or an expiry string after ``now``."""
    return expires_at is None or expires_at > now


def passes_parsed_expiry(expires_at: str | None, now_ms: float | None) -> bool:
    """The post-filter: records whose expiry does not parse are kept; parsed ones must be later."""
    if expires_at is None or now_ms is None:
        return True
    expires_ms = iso_to_ms(expires_at)
    return expires_ms is None or expires_ms > now_ms


def is_live(record: MemoryRecord, now: str) -> bool:
    """Active (not deleted, not superseded) and not expired at ``now``."""
    return (
        record.active
        and passes_sql_expiry(record.expires_at, now)
        and passes_parsed_expiry(record.expires_at, iso_to_ms(now))
    )


_SCOPE_KEYS: dict[MemoryScope, str] = {}


def scope_key_of(scope: MemoryScope) -> str:
    """``scope.key``, memoised (the stable key is a JSON dump, costly in tight loops)."""
    key = _SCOPE_KEYS.get(scope)
    if key is None:
        if len(_SCOPE_KEYS) > 4096:
            _SCOPE_KEYS.clear()
        key = _SCOPE_KEYS[scope] = scope.key
    return key


def filter_records(records: Iterable[MemoryRecord], flt: ListFilter) -> list[MemoryRecord]:
    """Apply ``flt`` exactly as the SQL list query does (filter, order, limit, post-filter)."""
    scopes = None if flt.scope_keys is None else frozenset(flt.scope_keys)
    kinds = None if flt.kinds is None else frozenset(flt.kinds)
    out = [
        r
        for r in records
        if (scopes is None or scope_key_of(r.scope) in scopes)
        and (kinds is None or r.kind in kinds)
        and (flt.include_inactive or r.active)
        and (flt.include_expired or passes_sql_expiry(r.expires_at, flt.now))
    ]
    out.sort(key=lambda r: r.id)
    out.sort(key=lambda r: r.updated_at, reverse=True)
    if flt.limit is not None:
        out = out[: max(flt.limit, 0)]
    if not flt.include_expired:
        now_ms = iso_to_ms(flt.now)
        out = [r for r in out if passes_parsed_expiry(r.expires_at, now_ms)]
    return out


def materialize(
    record: MemoryRecord, outcome_events: Sequence[Mapping[str, Any]], related: Sequence[str]
) -> MemoryRecord:
    """Attach derived fields: relations and the current generation's outcome view."""
    changes: dict[str, Any] = {}
    generation = record.metadata.get("outcomeGeneration")
    current = [
        e for e in outcome_events if isinstance(generation, str) and e["generation"] == generation
    ]
    if current:
        current.sort(key=lambda e: (e["outcome"]["at"], e["id"]))
        changes["outcomes"] = tuple(outcome_from_dict(e["outcome"]) for e in current)
        changes["metadata"] = {**record.metadata, "outcomeEventIds": [e["id"] for e in current]}
        anchors: dict[tuple[str, str], Anchor] = {}
        for anchor in record.anchors or ():
            anchors.setdefault((anchor.file, anchor.symbol or ""), anchor)
        for event in current:
            for raw in event.get("anchors") or ():
                anchor = anchor_from_dict(raw)
                anchors.setdefault((anchor.file, anchor.symbol or ""), anchor)
        if anchors:
            changes["anchors"] = tuple(anchors[k] for k in sorted(anchors))[:MAX_ANCHORS]
    if related:
        changes["relations"] = tuple(Relation(memory_id=m) for m in related)
    elif record.relations:
        changes["relations"] = ()
    return attrs.evolve(record, **changes) if changes else record


def _require_str(event: Mapping[str, Any], key: str, what: str, hi: int = 256) -> str:
    value = event.get(key)
    if not isinstance(value, str) or not 1 <= len(value) <= hi:
        raise MemoryValidationError(f"{what}.{key} must be a string of 1..{hi} characters")
    return value


def _strict_keys(event: Any, allowed: frozenset[str], what: str) -> Mapping[str, Any]:
    if not isinstance(event, Mapping):
        raise MemoryValidationError(f"{what} must be an object; got {type(event).__name__}")
    unknown = sorted(str(k) for k in event if k not in allowed)
    if unknown:
        raise MemoryValidationError(f"{what} has unknown key(s): {', '.join(unknown)}")
    return event


_OUTCOME_EVENT_KEYS = frozenset({"id", "memoryId", "generation", "outcome", "anchors"})


def normalize_outcome_event(event: Any) -> dict[str, Any]:
    """The canonical outcome event ``{id, memoryId, generation, outcome, anchors}`` (strict)."""
    obj = _strict_keys(event, _OUTCOME_EVENT_KEYS, "outcome event")
    anchors = obj.get("anchors") or []
    if not isinstance(anchors, list | tuple):
        raise MemoryValidationError("outcome event.anchors must be an array")
    if len(anchors) > MAX_ANCHORS:
        raise MemoryValidationError(f"outcome event.anchors: at most {MAX_ANCHORS} anchors")
    return {
        "id": _require_str(obj, "id", "outcome event"),
        "memoryId": _require_str(obj, "memoryId", "outcome event"),
        "generation": _require_str(obj, "generation", "outcome event"),
        "outcome": outcome_to_dict(outcome_from_dict(obj.get("outcome"))),
        "anchors": [anchor_to_dict(anchor_from_dict(a)) for a in anchors],
    }


_REWARD_KEYS = (
    "id",
    "memoryId",
    "runId",
    "unitId",
    "verdict",
    "reward",
    "qBefore",
    "qAfter",
    "verdictSynthesis",
    "timestamp",
)


def normalize_reward_event(event: Any, now: str) -> dict[str, Any]:
    """The canonical reward event; ``id`` defaults to a UUID and ``timestamp`` to ``now``."""
    obj = dict(_strict_keys(event, frozenset(_REWARD_KEYS), "reward event"))
    obj.setdefault("id", str(uuid.uuid4()))
    obj.setdefault("timestamp", now)
    _require_str(obj, "id", "reward event")
    _require_str(obj, "memoryId", "reward event")
    _require_str(obj, "verdict", "reward event", 10_000)
    _require_str(obj, "timestamp", "reward event")
    for key in ("reward", "qBefore", "qAfter"):
        value = obj.get(key)
        if value is None and key != "reward":
            continue
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise MemoryValidationError(f"reward event.{key} must be a number; got {value!r}")
        obj[key] = float(value)
    for key in ("runId", "unitId"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            raise MemoryValidationError(f"reward event.{key} must be a string")
    out = {key: obj[key] for key in _REWARD_KEYS if obj.get(key) is not None}
    return plain_json(out)  # type: ignore[no-any-return]


def normalize_recall_usage(usage: Any, now: str) -> dict[str, Any]:
    """The recall usage as stored: a JSON object with ``bundleId`` and a ``timestamp``."""
    if not isinstance(usage, Mapping):
        raise MemoryValidationError("recall usage must be an object")
    if not isinstance(usage.get("bundleId"), str) or not usage["bundleId"]:
        raise MemoryValidationError("recall usage.bundleId must be a non-empty string")
    out = dict(usage)
    if not isinstance(out.get("timestamp"), str):
        out["timestamp"] = out["generatedAt"] if isinstance(out.get("generatedAt"), str) else now
    return plain_json(out)  # type: ignore[no-any-return]


def usage_matches(usage: Mapping[str, Any], run_id: str | None, since: str | None) -> bool:
    """The ``list_recall_usage`` filter (``since`` is inclusive)."""
    if run_id is not None and usage.get("runId") != run_id:
        return False
    return since is None or usage["timestamp"] >= since


def event_json_for(reason: str | None, event: Mapping[str, Any] | None) -> str | None:
    """The stored ``event_json``: the caller's JSON, else ``{"reason": ...}``, else NULL."""
    if event is not None:
        return dumps(event)
    if reason:
        return dumps({"reason": reason})
    return None


def merge_pairs(proposal: MemoryProposal) -> list[tuple[str, str]]:
    """Ordered pairs of the relation clique an applied merge proposal creates."""
    if proposal.operation != "merge" or proposal.status != "applied":
        return []
    ids = sorted(set(proposal.related_memory_ids or ()))
    return [(a, b) for a in ids for b in ids if a != b]


def relation_created_at(proposal: MemoryProposal) -> str:
    """When a merge relation came into being: the review time, else the proposal's creation."""
    return proposal.reviewed_at or proposal.created_at


# --------------------------------------------------------------------------- the adapter


class InMemoryStore:
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
        self._usage: builtins.list[dict[str, Any]] = []
        self._outcomes: dict[str, dict[str, Any]] = {}
        self._outcomes_by_memory: dict[str, dict[str, dict[str, Any]]] = {}
        self._rewards: builtins.list[dict[str, Any]] = []
        self._relations: dict[str, dict[str, str]] = {}
        self._undo: builtins.list[Callable[[], None]] = []
        self._depth = 0
        self._closed = False
        self.load_report: builtins.list[dict[str, Any]] = []

    # -- plumbing ------------------------------------------------------------------------

    def _now(self) -> str:
        return to_iso(self._clock.now())

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

    def _rollback_to(self, mark: int) -> None:
        while len(self._undo) > mark:
            self._undo.pop()()

    def _journal(self, file: str, line: Mapping[str, Any]) -> None:
        """Persistence hook: a line for ``file`` (the JSONL provider writes them at commit)."""

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

    def __enter__(self) -> InMemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the store (idempotent); later calls raise :class:`StorageError`."""
        self._closed = True

    # -- records -------------------------------------------------------------------------

    def _view(self, record: MemoryRecord) -> MemoryRecord:
        events = self._outcomes_by_memory.get(record.id)
        return materialize(
            record, list(events.values()) if events else (), self.related_ids(record.id)
        )

    def get(self, memory_id: str) -> MemoryRecord | None:
        """The record with ``memory_id`` (any state), or ``None``."""
        self._check_open()
        record = self._records.get(memory_id)
        return None if record is None else self._view(record)

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """The records (any state) of those ``memory_ids`` that exist, keyed by id."""
        self._check_open()
        found = (self._records.get(memory_id) for memory_id in memory_ids)
        return {r.id: self._view(r) for r in found if r is not None}

    def list(self, flt: ListFilter) -> builtins.list[MemoryRecord]:
        """Records matching ``flt``, newest first."""
        self._check_open()
        return [self._view(r) for r in filter_records(self._records.values(), flt)]

    def count(self) -> int:
        """How many records are stored (tombstones included)."""
        self._check_open()
        return len(self._records)

    def _put_record(self, record: MemoryRecord) -> MemoryRecord:
        stored = stored_form(record, self._records.get(record.id))
        self._set(self._records, stored.id, stored)
        self._journal("memories.jsonl", _record_line(stored))
        return stored

    def upsert(self, record: MemoryRecord) -> MemoryRecord:
        """Insert or replace ``record``; returns the stored form."""
        if not isinstance(record, MemoryRecord):
            raise MemoryValidationError(f"upsert needs a MemoryRecord; got {type(record).__name__}")
        with self.transaction():
            stored = self._put_record(record)
            self.append_event("upsert", stored.id)
        return stored

    def delete(self, memory_id: str, *, reason: str, now: str, hard: bool = False) -> bool:
        """Tombstone (or, with ``hard``, erase) a record; False when it did not exist."""
        with self.transaction():
            record = self._records.get(memory_id)
            if record is None:
                return False
            if hard:
                self._pop(self._records, memory_id)
                self._rewrite("memories.jsonl")
                for event_id in list(self._outcomes_by_memory.get(memory_id, {})):
                    self._pop(self._outcomes, event_id)
                    self._rewrite("outcome-events.jsonl")
                self._pop(self._outcomes_by_memory, memory_id)
                self._drop_relations(memory_id)
                self.append_event(
                    "delete", memory_id, reason=reason, event={"reason": reason, "hard": True}
                )
            else:
                tomb = attrs.evolve(
                    record,
                    metadata={**record.metadata, "deleted": True, "deleteReason": reason},
                    updated_at=now,
                )
                self._put_record(tomb)
                self.append_event("delete", memory_id, reason=reason)
        return True

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
        """Every active scoped record (no full-text pre-selection), newest first, capped."""
        flt = ListFilter(
            now=now,
            scope_keys=tuple(scope_keys),
            kinds=None if kinds is None else tuple(kinds),
            include_expired=include_expired,
            limit=candidate_cap,
        )
        return Candidates(records=tuple(self.list(flt)), fts_order=None)

    def iter_all_records(self) -> Iterator[MemoryRecord]:
        """Every record in any state, oldest update first, with provenance and derived views."""
        self._check_open()
        ordered = sorted(self._records.values(), key=lambda r: (r.updated_at, r.id))
        for record in ordered:
            yield self._view(record)

    # -- proposals -----------------------------------------------------------------------

    def _put_proposal(self, proposal: MemoryProposal) -> None:
        self._set(self._proposals, proposal.id, proposal)
        self._journal("proposals.jsonl", _proposal_line(proposal))
        created = relation_created_at(proposal)
        for source, target in merge_pairs(proposal):
            if source in self._records and target in self._records:
                bucket = self._relations.get(source)
                if bucket is None:
                    bucket = {}
                    self._set(self._relations, source, bucket)
                if target not in bucket:
                    self._set(bucket, target, f"{proposal.id}|{created}")

    def _drop_relations(self, memory_id: str) -> None:
        self._pop(self._relations, memory_id)
        for source, bucket in list(self._relations.items()):
            if memory_id in bucket:
                self._pop(bucket, memory_id)
                if not bucket:
                    self._pop(self._relations, source)

    def create_proposal(self, proposal: MemoryProposal) -> MemoryProposal:
        """Store a new proposal (ConflictError when the id exists)."""
        if not isinstance(proposal, MemoryProposal):
            raise MemoryValidationError("create_proposal needs a MemoryProposal")
        with self.transaction():
            if proposal.id in self._proposals:
                raise ConflictError(f"memory proposal already exists: {proposal.id}")
            self._put_proposal(proposal)
            self.append_event(
                "proposal",
                proposal.id,
                event={"operation": proposal.operation, "status": proposal.status},
            )
        return proposal

    def get_proposal(self, proposal_id: str) -> MemoryProposal | None:
        """A proposal by id, or ``None``."""
        self._check_open()
        return self._proposals.get(proposal_id)

    def list_proposals(self, status: str | None = None) -> builtins.list[MemoryProposal]:
        """Proposals (optionally of one status), oldest first (then by id)."""
        self._check_open()
        out = [p for p in self._proposals.values() if status is None or p.status == status]
        out.sort(key=lambda p: (p.created_at, p.id))
        return out

    def update_proposal(self, proposal: MemoryProposal) -> MemoryProposal:
        """Replace a stored proposal (NotFoundError when it does not exist)."""
        if not isinstance(proposal, MemoryProposal):
            raise MemoryValidationError("update_proposal needs a MemoryProposal")
        with self.transaction():
            if proposal.id not in self._proposals:
                raise NotFoundError("memory proposal was not found")
            self._put_proposal(proposal)
            self.append_event(
                "proposal",
                proposal.id,
                event={"operation": proposal.operation, "status": proposal.status},
            )
        return proposal

    # -- events and ledgers --------------------------------------------------------------

    def append_event(
        self,
        operation: str,
        target_id: str,
        *,
        reason: str | None = None,
        event: dict[str, Any] | None = None,
    ) -> None:
        """Append an audit event."""
        with self.transaction():
            stored = StoredEvent(
                id=str(uuid.uuid4()),
                operation=operation,
                target_id=target_id,
                timestamp=self._now(),
                reason=reason,
                event_json=event_json_for(reason, event),
            )
            self._append(self._events, stored)
            self._journal("audit.jsonl", _event_line(stored))

    def list_events(self) -> builtins.list[StoredEvent]:
        """Every audit event in insertion order."""
        self._check_open()
        return list(self._events)

    def record_recall_usage(self, usage: dict[str, Any]) -> None:
        """Store one recall bundle's usage."""
        with self.transaction():
            stored = normalize_recall_usage(usage, self._now())
            self._append(self._usage, stored)
            self._journal("audit.jsonl", _usage_line(stored))

    def list_recall_usage(
        self, *, run_id: str | None = None, since: str | None = None
    ) -> builtins.list[dict[str, Any]]:
        """Recorded recall usage, oldest first, optionally for one run or from ``since`` on."""
        self._check_open()
        out = [dict(u) for u in self._usage if usage_matches(u, run_id, since)]
        out.sort(key=lambda u: u["timestamp"])
        return out

    def append_outcome(self, event: dict[str, Any]) -> None:
        """Append an outcome event; the same id with the same payload is a no-op."""
        with self.transaction():
            stored = normalize_outcome_event(event)
            existing = self._outcomes.get(stored["id"])
            if existing is not None:
                if existing == stored:
                    return
                raise ConflictError("outcome event id already exists with a different payload")
            self._set(self._outcomes, stored["id"], stored)
            bucket = self._outcomes_by_memory.get(stored["memoryId"])
            if bucket is None:
                bucket = {}
                self._set(self._outcomes_by_memory, stored["memoryId"], bucket)
            self._set(bucket, stored["id"], stored)
            self._journal("outcome-events.jsonl", stored)

    def list_outcomes(self, memory_id: str | None = None) -> builtins.list[dict[str, Any]]:
        """Outcome events, optionally of one memory, ordered by (``at``, ``id``)."""
        self._check_open()
        if memory_id is None:
            events: Iterable[dict[str, Any]] = self._outcomes.values()
        else:
            events = self._outcomes_by_memory.get(memory_id, {}).values()
        return sorted((plain_json(e) for e in events), key=lambda e: (e["outcome"]["at"], e["id"]))

    def append_reward_event(self, event: dict[str, Any]) -> None:
        """Append a learning reward event."""
        with self.transaction():
            stored = normalize_reward_event(event, self._now())
            self._append(self._rewards, stored)
            self._journal("reward-events.jsonl", stored)

    def list_reward_events(self) -> builtins.list[dict[str, Any]]:
        """Every reward event, oldest first."""
        self._check_open()
        return sorted((dict(e) for e in self._rewards), key=lambda e: e["timestamp"])

    def related_ids(self, memory_id: str) -> builtins.list[str]:
        """Ids merged with ``memory_id`` (sorted, at most 32)."""
        self._check_open()
        return sorted(self._relations.get(memory_id, ()))[:MAX_RELATIONS_PER_MEMORY]


# --------------------------------------------------------------------------- line shapes
# The JSONL provider's line formats live beside the state they serialise.


def _record_line(record: MemoryRecord) -> dict[str, Any]:
    from swarmmem.core.model.codec import record_to_dict

    return record_to_dict(record, include_provenance=True, include_outcomes=False)


def _proposal_line(proposal: MemoryProposal) -> dict[str, Any]:
    from swarmmem.core.model.codec import proposal_to_dict

    return proposal_to_dict(proposal)


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


def _usage_line(usage: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": str(uuid.uuid4()),
        "operation": "recall",
        "targetId": usage["bundleId"],
        "timestamp": usage["timestamp"],
        "usage": dict(usage),
    }

"""Memory management as a use case: list, read, inspect and forget this context's memories.

Every call is bound to the context's allowed scopes: a record of another scope is never
listed, and reading, inspecting or forgetting it fails exactly like an unknown id (the same
:class:`~swarmmem.core.model.errors.NotFoundError`, no hint that it exists).

A memory is in exactly one state (:func:`memory_state`): ``deleted`` (a tombstone),
``superseded``, ``expired``, ``suppressed`` (a learned Q below the suppression threshold,
hidden from recall) or ``active``. ``forget`` tombstones through the store's audited
``delete``; with ``purge`` it erases the record and scrubs its text from the proposals,
outcome events and recall usage that quote it (:meth:`StorageProvider.scrub
<swarmmem.ports.storage.StorageProvider.scrub>`), which audits the purge with ids and counts
only.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import attrs

from swarmmem.core.maintenance.scoped import ScopedView
from swarmmem.core.model.codec import (
    outcome_event_to_dict,
    proposal_to_dict,
    record_to_dict,
    reward_event_to_dict,
    source_to_dict,
)
from swarmmem.core.model.errors import (
    ConflictError,
    MemoryValidationError,
    NotFoundError,
    ScopeError,
)
from swarmmem.core.model.formatting import age_text
from swarmmem.core.model.ids import is_iso_datetime, iso_to_ms, normalize_text
from swarmmem.core.model.records import (
    MEMORY_KINDS,
    SCOPE_TYPES,
    MemoryProposal,
    MemoryRecord,
    MemoryScope,
)
from swarmmem.core.model.reports import (
    ForgetResult,
    MemoryDetails,
    ProposalDetails,
    ReflectionStatus,
    ReviewQueue,
)
from swarmmem.core.model.semantics import PURGED, ListFilter, quotes, scope_key_of
from swarmmem.core.recall.lexical import recallable
from swarmmem.core.recall.scoring import LearningPolicy
from swarmmem.core.writes.validation import rephrasing_needed
from swarmmem.ports.storage import MemoryHistory, RecordKey, StorageProvider, StoredEvent
from swarmmem.ports.vectors import VectorIndex

MEMORY_STATES: tuple[str, ...] = ("active", "suppressed", "superseded", "deleted", "expired", "all")
MAX_LIST_LIMIT = 500
MAX_REASON_LENGTH = 2000


class MemoryQuery(NamedTuple):
    """Which memories :meth:`ManagementService.list` returns (see :func:`check_query`)."""

    kind: str | None = None
    """Only this memory kind."""
    scope: str | None = None
    """Only this scope type (one of the context's scopes)."""
    tag: str | None = None
    """Only memories with this tag."""
    file: str | None = None
    """Only memories anchored to this repository file (``metadata.files``, the source file
    or an anchor)."""
    created_since: str | None = None
    """Only memories created at or after this ISO time."""
    updated_since: str | None = None
    """Only memories updated at or after this ISO time."""
    state: str = "active"
    """One of :data:`MEMORY_STATES`."""
    limit: int = 50
    """At most this many (1..500)."""
    offset: int = 0
    """After skipping this many."""


def _count(value: object, name: str, low: int, high: int | None = None) -> None:
    ok = isinstance(value, int) and not isinstance(value, bool)
    if not ok or value < low or (high is not None and value > high):  # type: ignore[operator]
        bound = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise MemoryValidationError(f"{name} must be an integer {bound}; got {value!r:.80}")


def _choice(value: object, name: str, choices: Sequence[str]) -> None:
    if value is not None and value not in choices:
        raise MemoryValidationError(
            f"{name} must be one of {', '.join(choices)}; got {value!r:.80}"
        )


def check_query(query: MemoryQuery) -> None:
    """Raise :class:`MemoryValidationError` naming the first bad value of ``query``."""
    _choice(query.kind, "kind", MEMORY_KINDS)
    _choice(query.scope, "scope", SCOPE_TYPES)
    _choice(query.state, "state", MEMORY_STATES)
    for name in ("tag", "file"):
        value = getattr(query, name)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise MemoryValidationError(f"{name} must be a non-empty string; got {value!r:.80}")
    for name in ("created_since", "updated_since"):
        value = getattr(query, name)
        if value is not None and not is_iso_datetime(value):
            raise MemoryValidationError(f"{name} must be an ISO-8601 datetime; got {value!r:.80}")
    _count(query.limit, "limit", 1, MAX_LIST_LIMIT)
    _count(query.offset, "offset", 0)


def memory_state(record: MemoryRecord, *, now_ms: float | None, suppression: float) -> str:
    """The one state of ``record`` at ``now_ms`` (see the module docstring)."""
    if record.deleted:
        return "deleted"
    if record.superseded_by:
        return "superseded"
    expires = iso_to_ms(record.expires_at)
    if expires is not None and now_ms is not None and expires <= now_ms:
        return "expired"
    return "suppressed" if record.q < suppression else "active"


def plain_path(file: str) -> str:
    """A repository path compared as written: ``/`` separators, no ``.`` or empty parts."""
    return "/".join(p for p in file.strip().replace("\\", "/").split("/") if p not in ("", "."))


def anchored_files(record: MemoryRecord) -> set[str]:
    """The repository files ``record`` is anchored to: ``metadata.files``, the source file
    and the anchors."""
    files = record.metadata.get("files")
    found = [f for f in files if isinstance(f, str)] if isinstance(files, list) else []
    found += [a.file for a in record.anchors or ()]
    if record.source.file_path:
        found.append(record.source.file_path)
    return {plain_path(f) for f in found}


def _at_or_after(value: str, since: str | None) -> bool:
    if since is None:
        return True
    at, start = iso_to_ms(value), iso_to_ms(since)
    return at is not None and start is not None and at >= start


def concerns(proposal: MemoryProposal, memory_id: str) -> bool:
    """True when ``proposal`` proposed, targets or relates the memory ``memory_id``."""
    record = proposal.proposed_record
    return (
        (record is not None and record.id == memory_id)
        or proposal.target_memory_id == memory_id
        or memory_id in (proposal.related_memory_ids or ())
    )


def event_json(event: StoredEvent) -> dict[str, Any]:
    """An audit event as JSON data (its payload parsed when it is JSON)."""
    try:
        payload = None if event.event_json is None else json.loads(event.event_json)
    except ValueError:
        payload = event.event_json
    return {
        "id": event.id,
        "operation": event.operation,
        "target_id": event.target_id,
        "timestamp": event.timestamp,
        "reason": event.reason,
        "event": payload,
    }


@attrs.frozen(kw_only=True)
class ManagementService:
    """Listing, reading, inspecting and forgetting the memories of one context's scopes.

    ``redact`` masks secrets in a forget reason; ``vectors`` gives the vector index a purge
    keeps in step (``None`` when embeddings are off); ``refresh`` regenerates what is derived
    from the store (the reflection lessons) after a forget.
    """

    store: StorageProvider
    allowed_scopes: tuple[MemoryScope, ...]
    now: Callable[[], str]
    policy: LearningPolicy
    redact: Callable[[str], str]
    vectors: Callable[[], VectorIndex | None]
    refresh: Callable[[], ReflectionStatus]

    def state_of(self, record: MemoryRecord) -> str:
        """The state of ``record`` now (:func:`memory_state`)."""
        now_ms = iso_to_ms(self.now())
        return memory_state(record, now_ms=now_ms, suppression=self.policy.suppression_threshold)

    def list(self, query: MemoryQuery) -> builtins.list[MemoryRecord]:
        """The memories ``query`` selects, newest update first, then by id.

        Raises:
            MemoryValidationError: a bad filter or paging value (named).
            ScopeError: ``query.scope`` is a scope type this context does not have.
        """
        check_query(query)
        scopes = [s for s in self.allowed_scopes if query.scope in (None, s.type)]
        if not scopes:
            have = ", ".join(s.type for s in self.allowed_scopes)
            raise ScopeError(f"scope {query.scope} is not one of this context's scopes ({have})")
        now = self.now()
        if not (query.tag or query.file or query.created_since or query.updated_since):
            return self._page(query, tuple(s.key for s in scopes), now)
        live = query.state in ("active", "suppressed")
        flt = ListFilter(
            now=now,
            scope_keys=tuple(s.key for s in scopes),
            kinds=None if query.kind is None else (query.kind,),
            include_inactive=query.state not in ("active", "suppressed", "expired"),
            include_expired=not live,
        )
        now_ms = iso_to_ms(now)
        suppression = self.policy.suppression_threshold
        tag = query.tag.strip().casefold() if query.tag else None
        file = plain_path(query.file) if query.file else None
        picked = [
            r
            for r in self.store.list(flt)
            if query.state in ("all", memory_state(r, now_ms=now_ms, suppression=suppression))
            and recallable(r)  # an outcome's question record is bookkeeping, not a memory
            and (tag is None or tag in {t.casefold() for t in r.tags})
            and (file is None or file in anchored_files(r))
            and _at_or_after(r.created_at, query.created_since)
            and _at_or_after(r.updated_at, query.updated_since)
        ]
        return picked[query.offset : query.offset + query.limit]

    def _page(
        self, query: MemoryQuery, scope_keys: tuple[str, ...], now: str
    ) -> builtins.list[MemoryRecord]:
        """:meth:`list` without a tag, file or time filter, reading only its page: the state
        of each record is judged from its key (the store filters tombstones and superseded
        records; expiry and learned value come with the key), then the records of the page
        are read in batches (skipping outcome questions, which are not memories)."""
        state = query.state
        flt = ListFilter(
            now=now,
            scope_keys=scope_keys,
            kinds=None if query.kind is None else (query.kind,),
            include_inactive=state in ("all", "deleted", "superseded"),
            include_expired=True,  # judged here, so a short answer means no more rows
            deleted={"deleted": True, "superseded": False}.get(state),
            superseded={"superseded": True}.get(state),
            has_expiry=True if state == "expired" else None,
        )
        now_ms = iso_to_ms(now)
        suppression = self.policy.suppression_threshold

        def wanted(key: RecordKey) -> bool:
            if state in ("all", "deleted", "superseded"):
                return True
            expires = iso_to_ms(key.expires_at)
            if expires is not None and now_ms is not None and expires <= now_ms:
                return state == "expired"
            if state == "expired":
                return False
            q = key.q if key.q is not None else 0.5
            return (q < suppression) == (state == "suppressed")

        # keys in growing pages until the page is covered (the first one usually is)
        size = max(2 * (query.offset + query.limit), 256)
        while True:
            keys = self.store.list_keys(attrs.evolve(flt, limit=size))
            picked = self._read([key.id for key in keys if wanted(key)], query.offset, query.limit)
            if len(picked) == query.limit or len(keys) < size:
                return picked
            size *= 4

    def _read(
        self, ids: builtins.list[str], offset: int, limit: int
    ) -> builtins.list[MemoryRecord]:
        """The records ``ids`` in order after ``offset`` of them, at most ``limit``, outcome
        questions left out (not counted), read in batches."""
        skip, picked = offset, []
        batch = max(limit, 200)
        for start in range(0, len(ids), batch):
            chunk = ids[start : start + batch]
            found = self.store.get_many(chunk)
            for memory_id in chunk:
                record = found.get(memory_id)
                if record is None or not recallable(record):
                    continue
                if skip:
                    skip -= 1
                    continue
                picked.append(record)
                if len(picked) == limit:
                    return picked
        return picked

    def get(self, memory_id: str) -> MemoryRecord:
        """The memory ``memory_id`` in any state.

        Raises:
            NotFoundError: no such memory in this context's scopes (the same error whether it
                does not exist or belongs to another scope).
        """
        if not isinstance(memory_id, str):
            raise MemoryValidationError(f"memory_id must be a string; got {memory_id!r:.80}")
        record = self.store.get(memory_id)
        allowed = {s.key for s in self.allowed_scopes}
        if record is None or scope_key_of(record.scope) not in allowed:
            raise NotFoundError(f"memory {memory_id} was not found")
        return record

    def inspect_proposal(self, proposal_id: str) -> ProposalDetails:
        """A proposal of this context's scopes: what it proposes, who proposed it and when,
        whether it needs rephrasing to become memory, and the audit events about it."""
        # another repository's proposal in a shared store is not found, as its memories are not
        proposal = ScopedView(self.store, self.allowed_scopes).get_proposal(proposal_id)
        if proposal is None:
            raise NotFoundError(f"proposal {proposal_id} was not found")
        store = self.store
        about = (
            store.events_mentioning([proposal.id])
            if isinstance(store, MemoryHistory)
            else store.list_events()
        )
        events = [event_json(e) for e in about if e.target_id == proposal.id]
        details = self._proposal_details(proposal, events)
        decision = proposal.metadata.get("curatorDecision")
        written_id = decision.get("memoryId") if isinstance(decision, dict) else None
        record = store.get(written_id) if isinstance(written_id, str) else None
        if record is None:
            return details
        written = {"memory_id": record.id, "state": self.state_of(record), "text": record.text}
        return attrs.evolve(details, written=written)

    def review_queue(self, limit: int) -> ReviewQueue:
        """The pending proposals of this context's scopes, oldest first, at most ``limit``
        (without their audit events: reading the audit log is left to one proposal's page)."""
        _count(limit, "limit", 1, MAX_LIST_LIMIT)
        pending = ScopedView(self.store, self.allowed_scopes).list_proposals("pending")
        return ReviewQueue(
            limit=limit,
            pending_count=len(pending),
            proposals=[self._proposal_details(p, []) for p in pending[:limit]],
        )

    def _proposal_details(
        self, proposal: MemoryProposal, events: builtins.list[dict[str, Any]]
    ) -> ProposalDetails:
        needs = (
            rephrasing_needed(proposal.proposed_record)
            if proposal.status == "pending" and proposal.operation in ("add", "update", "supersede")
            else []
        )
        return ProposalDetails(
            proposal_id=proposal.id,
            proposal=proposal_to_dict(proposal),
            proposed_by=attrs.asdict(proposal.proposed_by),
            age=age_text(proposal.created_at, self.now()),
            needs_rephrasing=needs,
            similar=[
                {"memory_id": item.get("memoryId"), "score": item.get("score")}
                for item in proposal.metadata.get("similar") or ()
                if isinstance(item, dict)
            ],
            audit=events,
        )

    def inspect(self, memory_id: str) -> MemoryDetails:
        """The memory with its provenance, outcome events, Q history (its reward events),
        merge relations, the proposals that concern it and the audit events that touched it."""
        record = self.get(memory_id)
        store = self.store
        history = store if isinstance(store, MemoryHistory) else None
        # with the capability, the store's query narrows the rows; the filters stay exact
        found = history.proposals_mentioning(record.id) if history else store.list_proposals()
        proposals = [p.id for p in found if concerns(p, record.id)]
        touched = {record.id, *proposals}
        about = history.events_mentioning(sorted(touched)) if history else store.list_events()
        events = [
            event_json(e)
            for e in about
            if e.target_id in touched or record.id in (e.event_json or "")
        ]
        rewarded = history.reward_events_of(record.id) if history else store.list_reward_events()
        rewards = [e for e in rewarded if e.memory_id == record.id]
        return MemoryDetails(
            memory_id=record.id,
            state=self.state_of(record),
            record=record_to_dict(record),
            provenance={
                "source": source_to_dict(record.source),
                "producer_session_id": record.producer_session_id,
                "producer_agent_role": record.producer_agent_role,
                "source_task_id": record.source_task_id,
                "created_at": record.created_at,
                "updated_at": record.updated_at,
                "valid_from": record.valid_from,
                "valid_to": record.metadata.get("validTo"),
                "content_hash": record.content_hash,
            },
            outcomes=[outcome_event_to_dict(e) for e in self.store.list_outcomes(record.id)],
            q_value=record.q,
            q_history=[reward_event_to_dict(e) for e in rewards],
            relations=[r.memory_id for r in record.relations],
            proposals=proposals,
            audit=events,
        )

    def forget(self, memory_id: str, *, reason: str, purge: bool = False) -> ForgetResult:
        """Tombstone the memory with ``reason`` (secrets redacted); ``purge`` also erases it
        and scrubs its text from the store, and drops its vector.

        Raises:
            MemoryValidationError: a missing, empty or over-long reason.
            NotFoundError: as :meth:`get`.
            ConflictError: a plain forget of a memory already forgotten.
        """
        if not isinstance(reason, str) or not reason.strip():
            raise MemoryValidationError("reason is required: say why the memory is forgotten")
        if len(reason) > MAX_REASON_LENGTH:
            raise MemoryValidationError(f"reason must be at most {MAX_REASON_LENGTH} characters")
        if not isinstance(purge, bool):
            raise MemoryValidationError(f"purge must be true or false; got {purge!r:.80}")
        record = self.get(memory_id)
        texts = purged_texts(record)
        clean = self.redact(normalize_text(reason))
        if purge and quotes(clean, texts):
            clean = PURGED  # the audit log keeps the reason: it must not quote the text
        now = self.now()
        scrubbed = None
        if not purge:
            if record.deleted:
                raise ConflictError(
                    f"memory {record.id} is already forgotten; purge it to erase it for good"
                )
            self.store.delete(record.id, reason=clean, now=now)
        else:
            with self.store.transaction():
                self.store.delete(record.id, reason=clean, now=now, hard=True)
                scrubbed = self.store.scrub(record.id, texts, now=now)
            vectors = self.vectors()
            if vectors is not None:
                vectors.delete([record.id])
        return ForgetResult(
            memory_id=record.id,
            purged=purge,
            reason=clean,
            scrubbed=scrubbed,
            reflection=self.refresh(),
        )


def purged_texts(record: MemoryRecord) -> tuple[str, ...]:
    """The texts a purge of ``record`` scrubs: its text (and an outcome question's words)."""
    question = record.metadata.get("outcomeQuestion")
    return (record.text, question) if isinstance(question, str) and question else (record.text,)

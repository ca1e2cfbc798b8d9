"""What a stored record means, whichever store holds it.

Every storage provider (in-memory, JSONL, SQLite, PostgreSQL) applies these rules, so the
providers agree by construction; the contract suite checks the rest.

* ``upsert`` keeps the *stored form* of a record (:func:`stored_form`): derived fields are
  dropped (``relations``; the ``outcomes`` view and ``metadata.outcomeEventIds``),
  ``validFrom`` is never reset once a row exists and ``supersedesReason`` keeps its previous
  value when the new one is absent.
* Reads materialise derived fields (:func:`materialize`): ``relations`` from applied merge
  proposals (:func:`merge_pairs`) and, for the record's current
  ``metadata.outcomeGeneration``, ``outcomes``, ``metadata.outcomeEventIds`` and the union of
  record and outcome anchors.
* Outcome, reward and recall-usage ledger entries are typed values
  (:mod:`swarmmem.core.model.events`), validated when they are built and stored in the JSON
  shape of :mod:`swarmmem.core.model.codec`, so every provider returns equal values.
* ``list`` filters, orders and limits as :func:`filter_records` does.
* A purge scrubs what quotes a memory's text the same way everywhere (:func:`scrub_proposal`,
  :func:`scrub_outcome`, :func:`scrub_usage`): a quoting text field becomes ``[PURGED]``.

Pure: no I/O; the JSON text is the on-disk form of every JSON column and line (:func:`dumps`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from swarmmem.core.model.codec import record_to_dict
from swarmmem.core.model.events import OutcomeEvent, RecallUsage
from swarmmem.core.model.ids import iso_to_ms
from swarmmem.core.model.records import (
    MAX_ANCHORS,
    Anchor,
    MemoryProposal,
    MemoryRecord,
    MemoryScope,
    Relation,
)

MAX_RELATIONS_PER_MEMORY = 32


@attrs.frozen(kw_only=True)
class ListFilter:
    """Which memories ``list`` returns (:func:`filter_records` states it exactly).

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
    # what the reports select by (``None``: any); every store filters on its own columns
    ids: tuple[str, ...] | None = None
    """Only these ids."""
    exclude_ids: tuple[str, ...] | None = None
    """None of these ids."""
    deleted: bool | None = None
    """Only tombstones (True) or only records that are not (False)."""
    superseded: bool | None = None
    """Only superseded records (True) or only records that are not (False)."""
    q_above: float | None = None
    """Only ``q > q_above``."""
    q_below: float | None = None
    """Only ``q < q_below``."""
    confidence_below: float | None = None
    """Only ``confidence < confidence_below``."""
    has_expiry: bool | None = None
    """Only records with (True) or without (False) an ``expiresAt``."""
    order: str = "updated"
    """``updated`` (newest first, then id), ``q_desc`` (highest Q first, then id) or
    ``q_asc`` (lowest Q first, then id)."""


#: ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)`` with its encoder built once
_compact = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def dumps(value: Any) -> str:
    """Compact JSON (no spaces, non-ASCII kept), the on-disk form of every JSON column/line."""
    return _compact(value)


# --------------------------------------------------------------------------- records


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


class StoredRow:
    """A valid record in its stored form as the SQL stores write it: ``id``, ``scope_key``,
    ``data`` (its JSON without the provenance keys and derived views, what
    :func:`stored_row` gives) and the provenance kept beside it (``source_task_id`` and
    ``embedding_model_version``, never ``""``, ``valid_from``, ``supersedes_reason``).

    ``record`` is the record the row stands for (its stored form is the row); a row made
    without one (a bulk import builds the JSON directly) builds it on first use as
    ``make_record(made_from)`` (two references, not a closure: a large import keeps fewer
    objects for the garbage collector to walk). ``data`` may share its nested scope and
    source objects with other rows: it is read, never changed. ``json`` is ``dumps(data)``
    (handed over as ``text`` when the maker wrote it already).
    """

    __slots__ = (
        "_json",
        "_made_from",
        "_make_record",
        "_record",
        "data",
        "embedding_model_version",
        "id",
        "scope_key",
        "source_task_id",
        "supersedes_reason",
        "valid_from",
    )

    def __init__(
        self,
        memory_id: str,
        scope_key: str,
        data: dict[str, Any],
        provenance: tuple[str | None, str | None, str | None, str | None],
        record: MemoryRecord | None = None,
        *,
        make_record: Callable[[Any], MemoryRecord] | None = None,
        made_from: Any = None,
        text: str | None = None,
    ) -> None:
        self.id = memory_id
        self.scope_key = scope_key
        self.data = data
        (
            self.source_task_id,
            self.embedding_model_version,
            self.valid_from,
            self.supersedes_reason,
        ) = provenance
        self._record = record
        self._make_record = make_record
        self._made_from = made_from
        self._json = text

    @property
    def json(self) -> str:
        """The JSON text of ``data`` (:func:`dumps`)."""
        text = self._json
        if text is None:
            text = self._json = dumps(self.data)
        return text

    @property
    def record(self) -> MemoryRecord:
        """The record this row stores (built once, on first use, for a row made without it)."""
        record = self._record
        if record is None:
            assert self._make_record is not None, "a row needs its record or a maker"
            record = self._record = self._make_record(self._made_from)
            self._make_record = self._made_from = None
        return record


def stored_row(record: MemoryRecord, *, given: MemoryRecord | None = None) -> StoredRow:
    """The :class:`StoredRow` of a record in its stored form; ``given``: the record the row
    gives as ``record`` when not that one (one whose stored form it is)."""
    return StoredRow(
        record.id,
        scope_key_of(record.scope),
        record_to_dict(record, include_provenance=False, include_outcomes=False),
        (
            record.source_task_id,
            record.embedding_model_version,
            record.valid_from,
            record.supersedes_reason,
        ),
        record if given is None else given,
    )


def tombstone(record: MemoryRecord, reason: str, now: str) -> MemoryRecord:
    """``record`` soft-deleted at ``now`` (``metadata.deleted`` and ``deleteReason`` set)."""
    return attrs.evolve(
        record,
        metadata={**record.metadata, "deleted": True, "deleteReason": reason},
        updated_at=now,
    )


def materialize(
    record: MemoryRecord, outcome_events: Sequence[OutcomeEvent], related: Sequence[str]
) -> MemoryRecord:
    """Attach derived fields: relations and the current generation's outcome view."""
    changes: dict[str, Any] = {}
    generation = record.metadata.get("outcomeGeneration")
    current = [
        e for e in outcome_events if isinstance(generation, str) and e.generation == generation
    ]
    if current:
        current.sort(key=lambda e: e.sort_key)
        changes["outcomes"] = tuple(e.outcome for e in current)
        changes["metadata"] = {**record.metadata, "outcomeEventIds": [e.id for e in current]}
        anchors: dict[tuple[str, str], Anchor] = {}
        for anchor in [*(record.anchors or ()), *(a for e in current for a in e.anchors)]:
            anchors.setdefault((anchor.file, anchor.symbol or ""), anchor)
        if anchors:
            changes["anchors"] = tuple(anchors[k] for k in sorted(anchors))[:MAX_ANCHORS]
    if related:
        changes["relations"] = tuple(Relation(memory_id=m) for m in related)
    elif record.relations:
        changes["relations"] = ()
    return attrs.evolve(record, **changes) if changes else record


# --------------------------------------------------------------------------- listing


def passes_sql_expiry(expires_at: str | None, now: str) -> bool:
    """The SQL expiry test: no expiry, or an expiry string after ``now``."""
    return expires_at is None or expires_at > now


def passes_parsed_expiry(expires_at: str | None, now_ms: float | None) -> bool:
    """The post-filter: records whose expiry does not parse are kept; parsed ones must be later."""
    if expires_at is None or now_ms is None:
        return True
    expires_ms = iso_to_ms(expires_at)
    return expires_ms is None or expires_ms > now_ms


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
        and _report_match(r, flt)
    ]
    out.sort(key=lambda r: r.id)
    if flt.order == "updated":
        out.sort(key=lambda r: r.updated_at, reverse=True)
    else:
        out.sort(key=lambda r: r.q, reverse=flt.order == "q_desc")
    if flt.limit is not None:
        out = out[: max(flt.limit, 0)]
    if not flt.include_expired:
        now_ms = iso_to_ms(flt.now)
        out = [r for r in out if passes_parsed_expiry(r.expires_at, now_ms)]
    return out


def _report_match(record: MemoryRecord, flt: ListFilter) -> bool:
    """The report filters of ``flt`` (ids, states, Q, confidence, expiry presence)."""
    return (
        (flt.ids is None or record.id in flt.ids)
        and (flt.exclude_ids is None or record.id not in flt.exclude_ids)
        and (flt.deleted is None or record.deleted == flt.deleted)
        and (flt.superseded is None or bool(record.superseded_by) == flt.superseded)
        and (flt.q_above is None or record.q > flt.q_above)
        and (flt.q_below is None or record.q < flt.q_below)
        and (flt.confidence_below is None or record.confidence < flt.confidence_below)
        and (flt.has_expiry is None or (record.expires_at is not None) == flt.has_expiry)
    )


# --------------------------------------------------------------------------- audit events


def event_json_for(reason: str | None, event: Mapping[str, Any] | None) -> str | None:
    """The stored ``event_json``: the caller's JSON, else ``{"reason": ...}``, else NULL."""
    if event is not None:
        return dumps(event)
    if reason:
        return dumps({"reason": reason})
    return None


def proposal_event(proposal: MemoryProposal) -> dict[str, Any]:
    """The payload of the ``proposal`` audit event written with every proposal write."""
    return {"operation": proposal.operation, "status": proposal.status}


# --------------------------------------------------------------------------- merge relations


def merge_pairs(proposal: MemoryProposal) -> list[tuple[str, str]]:
    """Ordered pairs of the relation clique an applied merge proposal creates."""
    if proposal.operation != "merge" or proposal.status != "applied":
        return []
    ids = sorted(set(proposal.related_memory_ids or ()))
    return [(a, b) for a in ids for b in ids if a != b]


def relation_created_at(proposal: MemoryProposal) -> str:
    """When a merge relation came into being: the review time, else the proposal's creation."""
    return proposal.reviewed_at or proposal.created_at


# --------------------------------------------------------------------------- purges

PURGED = "[PURGED]"
"""What a scrubbed text field holds after a purge."""


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def quotes(value: object, texts: Sequence[str]) -> bool:
    """True when the string ``value`` contains one of ``texts`` (ignoring case and runs of
    white space)."""
    if not isinstance(value, str) or not value:
        return False
    folded = _folded(value)
    return any(needle in folded for needle in (_folded(t) for t in texts) if needle)


def scrub_proposal(
    proposal: MemoryProposal, memory_id: str, texts: Sequence[str], now: str
) -> MemoryProposal | None:
    """``proposal`` without the purged text, or ``None`` when nothing in it changes.

    The proposed record of ``memory_id`` (or one quoting ``texts``) gets the text
    ``[PURGED]``; a quoting rationale, rejection reason or curator-decision reason becomes
    ``[PURGED]``; ``metadata.purgedAt`` says when.
    """
    changes: dict[str, Any] = {}
    record = proposal.proposed_record
    proposed = record is not None and (record.id == memory_id or quotes(record.text, texts))
    if record is not None and proposed and record.text != PURGED:
        changes["proposed_record"] = attrs.evolve(record, text=PURGED)
    if quotes(proposal.rationale, texts):
        changes["rationale"] = PURGED
    if quotes(proposal.rejection_reason, texts):
        changes["rejection_reason"] = PURGED
    metadata = dict(proposal.metadata)
    decision = metadata.get("curatorDecision")
    if isinstance(decision, Mapping) and quotes(decision.get("reason"), texts):
        metadata["curatorDecision"] = {**decision, "reason": PURGED}
    if not changes and metadata == proposal.metadata:
        return None
    return attrs.evolve(proposal, **changes, metadata={**metadata, "purgedAt": now})


def scrub_outcome(event: OutcomeEvent, texts: Sequence[str]) -> OutcomeEvent | None:
    """``event`` with a correction quoting ``texts`` replaced, or ``None`` when it does not."""
    if not quotes(event.outcome.correction, texts):
        return None
    return attrs.evolve(event, outcome=attrs.evolve(event.outcome, correction=PURGED))


def scrub_usage(usage: RecallUsage, texts: Sequence[str]) -> RecallUsage | None:
    """``usage`` with a query (or unknown string field) quoting ``texts`` replaced, or ``None``."""
    extra = {k: PURGED if quotes(v, texts) else v for k, v in usage.extra.items()}
    if not quotes(usage.query, texts) and extra == usage.extra:
        return None
    query = PURGED if quotes(usage.query, texts) else usage.query
    return attrs.evolve(usage, query=query, extra=extra)

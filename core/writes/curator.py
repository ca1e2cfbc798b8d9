"""Applying a curator decision to storage: one pending proposal, one transaction.

:func:`apply_decision` loads the proposal, checks that the decision fits it, performs the
change (add, update, supersede, merge, delete, reject or noop), marks the proposal reviewed and
appends a ``curator_decision`` audit event, all inside a single ``store.transaction()``: a
failure anywhere leaves storage exactly as it was.

Promotions (``add`` and a ``supersede`` replacement) must pass the write funnel and the
promotion rules (durable, a durable fact kind, concise). An ``update`` patch passes the write
funnel. Merges link 2..8 distinct active memories of one scope and change no record; the
relation rows derive from the applied proposal. A delete tombstones its target with the
curator's reason (the store's audited ``delete``), in the same transaction.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from swarmmem.core.model.codec import record_from_dict, record_to_dict
from swarmmem.core.model.errors import ConflictError, MemoryValidationError, NotFoundError
from swarmmem.core.model.ids import (
    content_hash,
    iso_to_ms,
    memory_id_for_hash,
    normalize_text,
)
from swarmmem.core.model.records import (
    MAX_TAGS,
    AppliedChange,
    CuratorDecision,
    MemoryProposal,
    MemoryRecord,
)
from swarmmem.core.writes.validation import validate_promotable, validate_record
from swarmmem.ports.detectors import SecretDetector
from swarmmem.ports.storage import StorageProvider

MAX_MERGE_PARTICIPANTS = 8
MAX_RELATIONS_PER_MEMORY = 32
PATCHABLE_KEYS: frozenset[str] = frozenset(
    {
        "text",
        "kind",
        "scope",
        "tags",
        "confidence",
        "stability",
        "source",
        "expiresAt",
        "metadata",
        "anchors",
    }
)
_MATCHING_OPERATION = {
    "add": "add",
    "update": "update",
    "supersede": "supersede",
    "merge": "merge",
    "delete": "delete",
}
_TARGETED = {
    "update": "target_memory_id",
    "supersede": "old_memory_id",
    "delete": "target_memory_id",
}
APPROVAL_DECISIONS: Mapping[str, str] = {
    "add": "add",
    "update": "update",
    "merge": "merge",
    "supersede": "supersede",
    "delete": "delete",
    "ignore": "noop",
}
"""The curator decision that approves a proposal of each operation (an ``ignore`` proposal is
closed with ``noop``); a person's review (``swarmmem review``, ``swarmmem ui``) approves with it."""
DEFAULT_REJECT_REASON = "rejected in review"
"""The reason a person's review records when a rejection gives none."""
MERGE_REASON = "merged into {memory_id}: it already says this"
"""The reason a person's review rejects a proposal with when merging it into a similar
memory (``swarmmem review``'s ``m``, the web viewer's merge)."""
#: the reviewer label of a decision a person makes (the CLI's ``curate`` and ``review``, the
#: web viewer), as against a curator agent's or the curation policy's
PERSON_REVIEWER = "user"


def approval_decision(operation: str) -> str:
    """The curator decision approving a proposal of ``operation``."""
    return APPROVAL_DECISIONS.get(operation, operation)


_TAG_JUNK = re.compile(r"[^A-Za-z0-9_-]")
_DASHES = re.compile(r"-+")


def canonical_memory_ids(ids: Sequence[str]) -> tuple[str, ...]:
    """Sorted unique ids: the identity of a merge."""
    return tuple(sorted(set(ids)))


def normalize_tags(tags: Sequence[str]) -> list[str]:
    """Lower-case, non-word runs to ``-``, trimmed, unique in first-seen order, at most 32."""
    out: list[str] = []
    for tag in tags:
        cleaned = _DASHES.sub("-", _TAG_JUNK.sub("-", tag.lower())).strip("-")
        if cleaned and cleaned not in out:
            out.append(cleaned)
    return out[:MAX_TAGS]


def _is_expired(record: MemoryRecord, now_ms: float | None) -> bool:
    expires = iso_to_ms(record.expires_at)
    return expires is not None and now_ms is not None and expires <= now_ms


def _active_target(store: StorageProvider, memory_id: str | None) -> MemoryRecord:
    record = store.get(memory_id) if memory_id else None
    if record is None:
        raise NotFoundError("target memory was not found")
    if record.deleted:
        raise ConflictError("target memory is deleted")
    if record.superseded_by:
        raise ConflictError("target memory is superseded")
    return record


def validate_merge_participants(
    store: StorageProvider, ids: Sequence[str], *, now: str
) -> tuple[str, ...]:
    """Check a merge and return its canonical ids.

    Raises:
        MemoryValidationError: fewer than 2 or more than 8 distinct ids, an inactive or
            expired participant, mixed scopes, or more than 32 relations for a participant.
    """
    canonical = canonical_memory_ids(ids)
    if not 2 <= len(canonical) <= MAX_MERGE_PARTICIPANTS:
        raise MemoryValidationError("merge decisions require 2-8 distinct relatedMemoryIds")
    now_ms = iso_to_ms(now)
    scope_keys: set[str] = set()
    for memory_id in canonical:
        record = store.get(memory_id)
        if record is None or not record.active or _is_expired(record, now_ms):
            raise MemoryValidationError(f"merge participant is not active: {memory_id}")
        scope_keys.add(record.scope.key)
    if len(scope_keys) != 1:
        raise MemoryValidationError("merge participants must share one memory scope")
    for memory_id in canonical:
        related: set[str] = set(store.related_ids(memory_id))
        related.update(other for other in canonical if other != memory_id)
        if len(related) > MAX_RELATIONS_PER_MEMORY:
            raise MemoryValidationError(
                f"merge would exceed {MAX_RELATIONS_PER_MEMORY} relations for {memory_id}"
            )
    return canonical


def _require(value: Any, message: str) -> None:
    if value is None or (isinstance(value, str | tuple | dict) and not value):
        raise MemoryValidationError(message)


def check_decision_shape(decision: CuratorDecision) -> None:
    """The per-action required fields of a decision."""
    action = decision.action
    if action == "add":
        _require(decision.memory, "add decisions require memory")
        return
    _require(decision.reason, f"{action} decisions require a reason")
    if action == "update":
        _require(decision.target_memory_id, "update decisions require targetMemoryId")
        _require(decision.patch, "update decisions require a non-empty patch")
    elif action == "supersede":
        _require(decision.old_memory_id, "supersede decisions require oldMemoryId")
        _require(decision.replacement, "supersede decisions require replacement")
    elif action == "merge":
        _require(decision.related_memory_ids, "merge decisions require relatedMemoryIds")
    elif action == "delete":
        _require(decision.target_memory_id, "delete decisions require targetMemoryId")


def check_decision_matches(decision: CuratorDecision, proposal: MemoryProposal) -> None:
    """The decision must fit the proposal it reviews (reject and noop fit any operation)."""
    expected = _MATCHING_OPERATION.get(decision.action)
    if expected is not None and proposal.operation != expected:
        raise MemoryValidationError(
            f"curator decision {decision.action} does not match proposal operation "
            f"{proposal.operation}"
        )
    field = _TARGETED.get(decision.action)
    target = getattr(decision, field) if field else None
    if field and proposal.target_memory_id and target != proposal.target_memory_id:
        raise MemoryValidationError(
            f"curator decision target {target} does not match proposal target "
            f"{proposal.target_memory_id}"
        )
    if decision.action == "merge":
        wanted = canonical_memory_ids(proposal.related_memory_ids or ())
        if canonical_memory_ids(decision.related_memory_ids or ()) != wanted:
            raise MemoryValidationError(
                "curator merge relatedMemoryIds do not match the proposal's relatedMemoryIds"
            )


def apply_patch(record: MemoryRecord, patch: Mapping[str, Any], *, now: str) -> MemoryRecord:
    """``record`` with ``patch`` (reference JSON keys) applied; id and contentHash recomputed.

    Text is normalised, tags normalised, ``metadata`` shallow-merged; derived fields
    (relations, the outcome view) are dropped.
    """
    unknown = sorted(str(k) for k in patch if k not in PATCHABLE_KEYS)
    if unknown:
        raise MemoryValidationError(f"update patch has unknown key(s): {', '.join(unknown)}")
    data = record_to_dict(record, include_provenance=True, include_outcomes=False)
    for key, value in patch.items():
        if key == "text":
            if not isinstance(value, str):
                raise MemoryValidationError("update patch text must be a string")
            data["text"] = normalize_text(value)
        elif key == "tags":
            if not isinstance(value, list | tuple) or not all(isinstance(t, str) for t in value):
                raise MemoryValidationError("update patch tags must be an array of strings")
            data["tags"] = normalize_tags(value)
        elif key == "metadata":
            if not isinstance(value, Mapping):
                raise MemoryValidationError("update patch metadata must be an object")
            data["metadata"] = {**data.get("metadata", {}), **value}
        elif value is None:
            data.pop(key, None)
        else:
            data[key] = value
    data["updatedAt"] = now
    patched = record_from_dict(data)
    digest = content_hash(patched.scope.as_dict(), patched.kind, patched.text)
    return attrs.evolve(patched, content_hash=digest, id=memory_id_for_hash(digest))


def _decision_summary(change: AppliedChange) -> dict[str, Any]:
    summary: dict[str, Any] = {"action": change.action, "reason": change.reason}
    for key, value in (
        ("memoryId", change.memory_id),
        ("targetMemoryId", change.target_memory_id),
        ("oldMemoryId", change.old_memory_id),
        ("replacementMemoryId", change.replacement_memory_id),
    ):
        if value is not None:
            summary[key] = value
    if change.related_memory_ids is not None:
        summary["relatedMemoryIds"] = list(change.related_memory_ids)
    if change.rewritten:
        summary["rewritten"] = list(change.rewritten)  # the curator rephrased the proposal
    summary["appliedAt"] = change.applied_at
    if summary["reason"] is None:
        del summary["reason"]
    return summary


def apply_decision(
    store: StorageProvider,
    decision: CuratorDecision,
    *,
    now: str,
    secrets: SecretDetector | None = None,
    reject_durable_secrets: bool = True,
) -> AppliedChange:
    """Apply ``decision`` to its pending proposal inside one ``store.transaction()``.

    Raises:
        NotFoundError: the proposal (or an update/supersede/delete target) does not exist.
        ConflictError: the proposal is not pending, or the target is deleted (or, for an
            update or supersede, superseded).
        MemoryValidationError: the decision does not fit the proposal, or a written record
            breaks a write or promotion rule.
    """
    check_decision_shape(decision)

    def funnel(record: MemoryRecord) -> MemoryRecord:
        return validate_record(
            record, secrets=secrets, reject_durable_secrets=reject_durable_secrets
        )

    with store.transaction():
        proposal = store.get_proposal(decision.proposal_id)
        if proposal is None:
            raise NotFoundError("memory proposal was not found")
        if proposal.status != "pending":
            raise ConflictError("memory proposal is not pending")
        check_decision_matches(decision, proposal)
        base = AppliedChange(
            action=decision.action,
            proposal_id=proposal.id,
            reason=decision.reason,
            applied_at=now,
            rewritten=decision.rewritten,
        )
        apply = _ACTIONS.get(decision.action)
        change = base if apply is None else apply(_Step(store, decision, base, now, funnel))
        _close_proposal(store, proposal, decision, change, now)
    return change


#: validates a record about to be written (the write rules and the secret policy)
_Funnel = Callable[[MemoryRecord], MemoryRecord]


@attrs.frozen
class _Step:
    """What the step of an action works with: the store, the decision, the change recorded
    so far (``base``), the time and the write funnel."""

    store: StorageProvider
    decision: CuratorDecision
    base: AppliedChange
    now: str
    funnel: _Funnel


def _apply_add(step: _Step) -> AppliedChange:
    """Write the proposed memory (it must be promotable to durable memory)."""
    assert step.decision.memory is not None
    memory = step.funnel(attrs.evolve(step.decision.memory, updated_at=step.now))
    validate_promotable(memory)
    step.store.upsert(memory)
    return attrs.evolve(step.base, memory_id=memory.id)


def _apply_update(step: _Step) -> AppliedChange:
    """Patch the active target; a patch that changes its identity (scope, kind or text)
    writes a new memory that supersedes the target (valid from now, its learned value and
    its older chain carried) and leaves the target superseded by it, valid until now, naming
    its replacement (``updateReplacementId`` as the reference does, which tombstoned it)."""
    store, decision, now = step.store, step.decision, step.now
    assert decision.patch is not None
    target = _active_target(store, decision.target_memory_id)
    updated = step.funnel(apply_patch(target, decision.patch, now=now))
    if decision.rewritten:
        validate_promotable(updated)  # a rephrased memory must be durable memory
    if updated.id == target.id:
        store.upsert(updated)
        return attrs.evolve(step.base, memory_id=updated.id, target_memory_id=target.id)
    updated = attrs.evolve(
        updated,
        supersedes=tuple(dict.fromkeys([*(target.supersedes or ()), target.id])),
        supersedes_reason=decision.reason,
        valid_from=now,
    )
    store.upsert(updated)
    metadata = {
        **target.metadata,
        "supersedeReason": decision.reason,
        "updateReplacementId": updated.id,
        "validTo": now,
    }
    store.upsert(
        attrs.evolve(
            target,
            superseded_by=updated.id,
            supersedes_reason=decision.reason,
            metadata=metadata,
            updated_at=now,
        )
    )
    return attrs.evolve(step.base, memory_id=updated.id, target_memory_id=target.id)


def _apply_supersede(step: _Step) -> AppliedChange:
    """Write the replacement (naming the memories it supersedes) and mark the active old
    memory superseded by it, valid until now."""
    store, decision, now = step.store, step.decision, step.now
    assert decision.replacement is not None
    old = _active_target(store, decision.old_memory_id)
    replacement = decision.replacement
    if replacement.id == old.id:
        raise MemoryValidationError("a supersede replacement must differ from the old memory")
    supersedes = tuple(dict.fromkeys([*(replacement.supersedes or ()), old.id]))
    replacement = step.funnel(
        attrs.evolve(
            replacement,
            updated_at=now,
            supersedes=supersedes,
            supersedes_reason=decision.reason,
        )
    )
    validate_promotable(replacement)
    store.upsert(replacement)
    store.upsert(
        attrs.evolve(
            old,
            superseded_by=replacement.id,
            supersedes_reason=decision.reason,
            metadata={
                **old.metadata,
                "supersedeReason": decision.reason,
                "validTo": now,  # the fact held until its replacement
            },
            updated_at=now,
        )
    )
    return attrs.evolve(
        step.base,
        memory_id=replacement.id,
        old_memory_id=old.id,
        replacement_memory_id=replacement.id,
    )


def _apply_merge(step: _Step) -> AppliedChange:
    """Link the related memories (validated as merge participants)."""
    related = step.decision.related_memory_ids or ()
    canonical = validate_merge_participants(step.store, related, now=step.now)
    return attrs.evolve(step.base, related_memory_ids=canonical)


def _apply_delete(step: _Step) -> AppliedChange:
    """Tombstone the target (it must exist and not be deleted already)."""
    store, decision = step.store, step.decision
    doomed = store.get(decision.target_memory_id or "")
    if doomed is None:
        raise NotFoundError("target memory was not found")
    if doomed.deleted:
        raise ConflictError("target memory is deleted")
    store.delete(doomed.id, reason=decision.reason or "curator delete", now=step.now)
    return attrs.evolve(step.base, target_memory_id=doomed.id)


#: the step of each action that writes memory (``reject`` and ``noop`` write none)
_ACTIONS: dict[str, Callable[[_Step], AppliedChange]] = {
    "add": _apply_add,
    "update": _apply_update,
    "supersede": _apply_supersede,
    "merge": _apply_merge,
    "delete": _apply_delete,
}


def _close_proposal(
    store: StorageProvider,
    proposal: MemoryProposal,
    decision: CuratorDecision,
    change: AppliedChange,
    now: str,
) -> None:
    """Mark the proposal applied (or rejected), with the decision's summary, and append the
    ``curator_decision`` audit event."""
    rejected = decision.action == "reject"
    reviewed = attrs.evolve(
        proposal,
        status="rejected" if rejected else "applied",
        reviewer=decision.reviewer,
        reviewed_at=now,
        rejection_reason=decision.reason if rejected else proposal.rejection_reason,
        metadata={**proposal.metadata, "curatorDecision": _decision_summary(change)},
    )
    store.update_proposal(reviewed)
    store.append_event(
        "curator_decision",
        proposal.id,
        reason=decision.reason,
        event={
            "action": change.action,
            "proposalId": change.proposal_id,
            **{k: v for k, v in _decision_summary(change).items() if k != "action"},
            "proposalOperation": proposal.operation,
            **({"decidedBy": decision.reviewer} if decision.reviewer == "auto_policy" else {}),
        },
    )

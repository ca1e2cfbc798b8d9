"""The reference JSON shape of records, proposals and ledger entries (``record_json``, the
``*_json`` columns, JSONL lines, exports).

This shape is a file format shared by every provider, the golden fixtures and
``Memory.import_records``, so it lives beside the value objects. Parsing is strict: an
unknown key is an error naming the key, as in the reference schema. The one exception is
recall usage, whose unknown keys are kept (:class:`~swarmmem.core.model.events.RecallUsage`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.events import OutcomeEvent, RecallUsage, RewardEvent
from swarmmem.core.model.records import (
    Anchor,
    MemoryProposal,
    MemoryRecord,
    MemoryScope,
    MemorySource,
    OutcomeEntry,
    ProposedBy,
)

_SCOPE_KEYS = {
    "type": "type",
    "userId": "user_id",
    "workspaceId": "workspace_id",
    "projectId": "project_id",
    "repoId": "repo_id",
    "repoRoot": "repo_root",
    "runId": "run_id",
    "agentId": "agent_id",
    "cohortId": "cohort_id",
}
_SOURCE_KEYS = {
    "type": "type",
    "ref": "ref",
    "url": "url",
    "filePath": "file_path",
    "commitSha": "commit_sha",
    "createdBy": "created_by",
}
# JSON key -> attribute, in the order records are written.
_RECORD_KEYS: tuple[tuple[str, str], ...] = (
    ("id", "id"),
    ("scope", "scope"),
    ("kind", "kind"),
    ("text", "text"),
    ("tags", "tags"),
    ("confidence", "confidence"),
    ("stability", "stability"),
    ("source", "source"),
    ("createdAt", "created_at"),
    ("updatedAt", "updated_at"),
    ("lastAccessedAt", "last_accessed_at"),
    ("expiresAt", "expires_at"),
    ("qValue", "q_value"),
    ("supersedes", "supersedes"),
    ("supersededBy", "superseded_by"),
    ("contentHash", "content_hash"),
    ("metadata", "metadata"),
    ("anchors", "anchors"),
    ("outcomes", "outcomes"),
    ("cohortId", "cohort_id"),
    ("producerSessionId", "producer_session_id"),
    ("producerAgentRole", "producer_agent_role"),
    ("redactionPolicyVersion", "redaction_policy_version"),
    ("schemaVersion", "schema_version"),
    ("providerVersion", "provider_version"),
    ("sourceRevision", "source_revision"),
    ("sourceTaskId", "source_task_id"),
    ("embeddingModelVersion", "embedding_model_version"),
    ("validFrom", "valid_from"),
    ("supersedesReason", "supersedes_reason"),
)
_RECORD_JSON_TO_ATTR = dict(_RECORD_KEYS)
#: the keys a record may have on input (``relations`` is accepted and ignored)
_RECORD_INPUT_KEYS = {**_RECORD_JSON_TO_ATTR, "relations": "relations"}
PROVENANCE_KEYS: frozenset[str] = frozenset(
    {"sourceTaskId", "embeddingModelVersion", "validFrom", "supersedesReason"}
)
_PROPOSAL_KEYS: tuple[tuple[str, str], ...] = (
    ("id", "id"),
    ("operation", "operation"),
    ("proposedRecord", "proposed_record"),
    ("targetMemoryId", "target_memory_id"),
    ("relatedMemoryIds", "related_memory_ids"),
    ("proposedBy", "proposed_by"),
    ("rationale", "rationale"),
    ("evidenceRefs", "evidence_refs"),
    ("status", "status"),
    ("reviewer", "reviewer"),
    ("reviewedAt", "reviewed_at"),
    ("rejectionReason", "rejection_reason"),
    ("createdAt", "created_at"),
    ("metadata", "metadata"),
)


def _strict(obj: Any, allowed: Mapping[str, str] | set[str], what: str) -> Mapping[str, Any]:
    if not isinstance(obj, Mapping):
        raise MemoryValidationError(f"{what} must be an object; got {type(obj).__name__}")
    unknown = [key for key in obj if key not in allowed]
    if unknown:
        raise MemoryValidationError(f"{what} has unknown key(s): {', '.join(map(str, unknown))}")
    return obj


def scope_from_dict(data: Any) -> MemoryScope:
    """Parse a scope object (strict)."""
    obj = _strict(data, _SCOPE_KEYS, "scope")
    if "type" not in obj:
        raise MemoryValidationError("scope: type is required")
    return MemoryScope(**{_SCOPE_KEYS[k]: v for k, v in obj.items()})


def source_from_dict(data: Any) -> MemorySource:
    """Parse a source object (strict)."""
    obj = _strict(data, _SOURCE_KEYS, "source")
    if "type" not in obj:
        raise MemoryValidationError("source: type is required")
    return MemorySource(**{_SOURCE_KEYS[k]: v for k, v in obj.items()})


def source_to_dict(source: MemorySource) -> dict[str, Any]:
    """The JSON form of a source (only fields that are set)."""
    out: dict[str, Any] = {}
    for key, attr in _SOURCE_KEYS.items():
        value = getattr(source, attr)
        if value is not None:
            out[key] = value
    return out


def anchor_from_dict(data: Any) -> Anchor:
    """Parse an anchor object (strict)."""
    obj = _strict(data, {"file", "symbol"}, "anchor")
    return Anchor(file=obj.get("file"), symbol=obj.get("symbol"))  # type: ignore[arg-type]


def anchor_to_dict(anchor: Anchor) -> dict[str, Any]:
    """The JSON form of an anchor."""
    out: dict[str, Any] = {"file": anchor.file}
    if anchor.symbol is not None:
        out["symbol"] = anchor.symbol
    return out


def outcome_from_dict(data: Any) -> OutcomeEntry:
    """Parse one outcome entry (strict)."""
    obj = _strict(data, {"outcome", "at", "taskId", "correction"}, "outcome")
    return OutcomeEntry(
        outcome=obj.get("outcome"),  # type: ignore[arg-type]
        at=obj.get("at"),  # type: ignore[arg-type]
        task_id=obj.get("taskId"),
        correction=obj.get("correction"),
    )


def outcome_to_dict(entry: OutcomeEntry) -> dict[str, Any]:
    """The JSON form of an outcome entry."""
    out: dict[str, Any] = {"outcome": entry.outcome, "at": entry.at}
    if entry.task_id is not None:
        out["taskId"] = entry.task_id
    if entry.correction is not None:
        out["correction"] = entry.correction
    return out


def record_from_dict(data: Any, *, parsed: Mapping[str, Any] | None = None) -> MemoryRecord:
    """Parse a record in the reference shape (strict; ``relations`` is derived and ignored).

    ``parsed``: the values of some keys (``scope``, ``source``) that the caller already
    parsed from this same ``data`` with :func:`scope_from_dict` / :func:`source_from_dict`;
    they are taken as they are instead of being parsed again.

    Raises:
        MemoryValidationError: unknown keys, missing required fields or invalid values.
    """
    if not isinstance(data, Mapping):
        raise MemoryValidationError(f"record must be an object; got {type(data).__name__}")
    obj = _strict(data, _RECORD_INPUT_KEYS, "record")
    kwargs: dict[str, Any] = {}
    for key, value in obj.items():
        if key == "relations":
            continue  # derived from the proposal ledger only; never trusted from input
        attr = _RECORD_JSON_TO_ATTR[key]
        if key in _VALUE_PARSERS:
            if parsed is not None and key in parsed:
                value = parsed[key]
            else:
                value = _VALUE_PARSERS[key](value)
        kwargs[attr] = value
    for required in REQUIRED_RECORD_KEYS:
        if required not in obj:
            raise MemoryValidationError(f"record: {required} is required")
    kwargs.setdefault("tags", ())
    try:
        return MemoryRecord(**kwargs)
    except TypeError as exc:  # wrong value types reaching converters
        raise MemoryValidationError(f"record: {exc}") from exc


def _list(value: Any, name: str) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise MemoryValidationError(f"{name}: must be an array")
    return list(value)


#: the record keys whose JSON value is parsed (the others are taken as they are)
_VALUE_PARSERS: dict[str, Callable[[Any], Any]] = {
    "scope": scope_from_dict,
    "source": source_from_dict,
    "anchors": lambda value: [anchor_from_dict(a) for a in _list(value, "anchors")],
    "outcomes": lambda value: [outcome_from_dict(o) for o in _list(value, "outcomes")],
    "tags": lambda value: _list(value, "tags"),
    "supersedes": lambda value: _list(value, "supersedes"),
}
#: the keys every record holds, in the order their absence is reported
REQUIRED_RECORD_KEYS = (
    "id",
    "scope",
    "kind",
    "text",
    "confidence",
    "stability",
    "source",
    "createdAt",
    "updatedAt",
    "contentHash",
)


def record_to_dict(
    record: MemoryRecord,
    *,
    include_provenance: bool = True,
    include_outcomes: bool = True,
) -> dict[str, Any]:
    """The JSON form of a record, keys in the canonical write order.

    Args:
        record: the record.
        include_provenance: keep ``sourceTaskId``, ``embeddingModelVersion``, ``validFrom``
            and ``supersedesReason`` (SQLite keeps them in columns instead).
        include_outcomes: keep ``outcomes`` and ``metadata.outcomeEventIds`` (materialised
            views of the outcome events).
    """
    out: dict[str, Any] = {}
    for key, attr in _WRITTEN_KEYS[include_provenance]:
        value = getattr(record, attr)
        if value is None:
            continue
        if key in _CONVERTED_KEYS:
            if key == "scope":
                value = record.scope.as_dict()
            elif key == "source":
                value = source_to_dict(record.source)
            elif key in ("tags", "supersedes"):
                value = list(value)
            elif key == "anchors":
                value = [anchor_to_dict(a) for a in value]
            elif key == "outcomes":
                if not include_outcomes:
                    continue
                value = [outcome_to_dict(o) for o in value]
            else:  # metadata
                value = dict(value)
                if not include_outcomes:
                    value.pop("outcomeEventIds", None)
        out[key] = value
    return out


#: ``_RECORD_KEYS`` with (True) and without (False) the provenance keys
_WRITTEN_KEYS = {
    True: _RECORD_KEYS,
    False: tuple((key, attr) for key, attr in _RECORD_KEYS if key not in PROVENANCE_KEYS),
}
#: the keys whose JSON value is not the attribute itself
_CONVERTED_KEYS = frozenset(
    {"scope", "source", "tags", "supersedes", "anchors", "outcomes", "metadata"}
)


def proposal_from_dict(data: Any) -> MemoryProposal:
    """Parse a proposal in the reference shape (strict)."""
    allowed = dict(_PROPOSAL_KEYS)
    obj = _strict(data, allowed, "proposal")
    kwargs: dict[str, Any] = {}
    for key, value in obj.items():
        attr = allowed[key]
        if key == "proposedRecord":
            value = record_from_dict(value)
        elif key == "proposedBy":
            by = _strict(value, {"agentRole", "agentId", "runId"}, "proposedBy")
            value = ProposedBy(
                agent_role=by.get("agentRole"), agent_id=by.get("agentId"), run_id=by.get("runId")
            )
        elif key in ("relatedMemoryIds", "evidenceRefs"):
            value = _list(value, key)
        kwargs[attr] = value
    for required in ("id", "operation", "rationale", "status", "createdAt"):
        if required not in obj:
            raise MemoryValidationError(f"proposal: {required} is required")
    try:
        return MemoryProposal(**kwargs)
    except TypeError as exc:
        raise MemoryValidationError(f"proposal: {exc}") from exc


def proposal_to_dict(proposal: MemoryProposal) -> dict[str, Any]:
    """The JSON form of a proposal."""
    out: dict[str, Any] = {}
    for key, attr in _PROPOSAL_KEYS:
        value = getattr(proposal, attr)
        if value is None:
            continue
        if key == "proposedRecord":
            value = record_to_dict(value)
        elif key == "proposedBy":
            by: dict[str, Any] = {}
            if value.agent_role is not None:
                by["agentRole"] = value.agent_role
            if value.agent_id is not None:
                by["agentId"] = value.agent_id
            if value.run_id is not None:
                by["runId"] = value.run_id
            value = by
        elif key in ("relatedMemoryIds", "evidenceRefs"):
            value = list(value)
        elif key == "metadata":
            value = dict(value)
        out[key] = value
    return out


# --------------------------------------------------------------------------- ledgers

# JSON key -> attribute, in the order recall usage is written (``usage_json``, audit lines).
_USAGE_KEYS: tuple[tuple[str, str], ...] = (
    ("bundleId", "bundle_id"),
    ("query", "query"),
    ("scopes", "scopes"),
    ("kinds", "kinds"),
    ("memoryIds", "memory_ids"),
    ("scores", "scores"),
    ("tokenEstimate", "token_estimate"),
    ("agentRole", "agent_role"),
    ("runId", "run_id"),
    ("sessionId", "session_id"),
    ("unitId", "unit_id"),
    ("timestamp", "timestamp"),
)
_USAGE_JSON_TO_ATTR = dict(_USAGE_KEYS)
# JSON key -> attribute, in the order reward events are written (absent when None).
_REWARD_KEYS: tuple[tuple[str, str], ...] = (
    ("id", "id"),
    ("memoryId", "memory_id"),
    ("runId", "run_id"),
    ("unitId", "unit_id"),
    ("verdict", "verdict"),
    ("reward", "reward"),
    ("qBefore", "q_before"),
    ("qAfter", "q_after"),
    ("verdictSynthesis", "verdict_synthesis"),
    ("timestamp", "timestamp"),
)
_OUTCOME_EVENT_KEYS = {"id", "memoryId", "generation", "outcome", "anchors"}


def recall_usage_from_dict(data: Any, now: str | None = None) -> RecallUsage:
    """Parse a stored recall usage; unknown keys are kept in ``extra``.

    A ``timestamp`` that is not a string is taken from ``generatedAt``, else ``now``.
    """
    if not isinstance(data, Mapping):
        raise MemoryValidationError(f"recall usage must be an object; got {type(data).__name__}")
    kwargs: dict[str, Any] = {"bundle_id": None}
    omitted: set[str] = set()
    for key, attr in _USAGE_KEYS:
        if key not in data:
            omitted.add(attr)
            continue
        value = data[key]
        if key == "scopes" and isinstance(value, list | tuple):
            value = [scope_from_dict(scope) for scope in value]
        kwargs[attr] = value
    if not isinstance(kwargs.get("timestamp"), str):
        generated = data.get("generatedAt")
        kwargs["timestamp"] = generated if isinstance(generated, str) else now
        omitted.discard("timestamp")
    omitted.discard("bundle_id")
    extra = {k: v for k, v in data.items() if k not in _USAGE_JSON_TO_ATTR}
    return RecallUsage(**kwargs, extra=extra, omitted=omitted)


def recall_usage_to_dict(usage: RecallUsage) -> dict[str, Any]:
    """The JSON form of a recall usage (``None`` is ``null``; omitted fields are absent)."""
    out: dict[str, Any] = {}
    for key, attr in _USAGE_KEYS:
        if attr in usage.omitted:
            continue
        value = getattr(usage, attr)
        if key == "scopes" and value is not None:
            value = [scope.as_dict() for scope in value]
        elif isinstance(value, tuple):
            value = list(value)
        out[key] = value
    clash = sorted(k for k in usage.extra if k in _USAGE_JSON_TO_ATTR)
    if clash:
        raise MemoryValidationError(f"recall usage extra repeats known key(s): {', '.join(clash)}")
    out.update(usage.extra)
    return out


def outcome_event_from_dict(data: Any) -> OutcomeEvent:
    """Parse an outcome event ``{id, memoryId, generation, outcome, anchors}`` (strict)."""
    obj = _strict(data, _OUTCOME_EVENT_KEYS, "outcome event")
    return OutcomeEvent(
        id=obj.get("id"),  # type: ignore[arg-type]
        memory_id=obj.get("memoryId"),  # type: ignore[arg-type]
        generation=obj.get("generation"),  # type: ignore[arg-type]
        outcome=outcome_from_dict(obj.get("outcome")),
        anchors=[anchor_from_dict(a) for a in _list(obj.get("anchors") or [], "anchors")],
    )


def outcome_event_to_dict(event: OutcomeEvent) -> dict[str, Any]:
    """The JSON form of an outcome event (``anchors`` always present)."""
    return {
        "id": event.id,
        "memoryId": event.memory_id,
        "generation": event.generation,
        "outcome": outcome_to_dict(event.outcome),
        "anchors": [anchor_to_dict(a) for a in event.anchors],
    }


def reward_event_from_dict(data: Any) -> RewardEvent:
    """Parse a reward event (strict). Without ``id`` a new one is made; without
    ``timestamp`` it stays ``None`` (an explicit ``null`` of either is an error)."""
    allowed = dict(_REWARD_KEYS)
    obj = _strict(data, allowed, "reward event")
    for key in ("id", "timestamp"):
        if key in obj and obj[key] is None:
            raise MemoryValidationError(f"reward event: {key} must not be null")
    kwargs: dict[str, Any] = {"memory_id": None, "verdict": None, "reward": None}
    kwargs.update((allowed[key], value) for key, value in obj.items())
    return RewardEvent(**kwargs)


def reward_event_to_dict(event: RewardEvent) -> dict[str, Any]:
    """The JSON form of a reward event (fields that are ``None`` are absent)."""
    out: dict[str, Any] = {}
    for key, attr in _REWARD_KEYS:
        value = getattr(event, attr)
        if value is not None:
            out[key] = value
    return out

"""Row <-> value mappings shared by the SQL providers (SQLite and PostgreSQL).

The column lists of the reference tables and the conversion of records, events and ledger
entries to rows and back live here once (the SQL itself is in the rest of this package).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from swarmmem.core.model.codec import (
    outcome_event_from_dict,
    recall_usage_from_dict,
    recall_usage_to_dict,
    record_from_dict,
)
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.events import OutcomeEvent, RecallUsage, RewardEvent
from swarmmem.core.model.records import MemoryRecord, q_value_of
from swarmmem.core.model.semantics import StoredRow, dumps
from swarmmem.core.recall.stemming import stemmed_tokens
from swarmmem.ports.storage import StoredEvent

ITEM_COLUMNS = (
    "id, record_json, source_task_id, agent_role, embedding_model_version, valid_from, "
    "supersedes_reason"
)
ITEM_WRITE_COLUMNS = (
    "id, scope_key, kind, updated_at, expires_at, superseded_by, deleted, record_json, "
    "source_task_id, agent_role, embedding_model_version, valid_from, supersedes_reason, "
    "q_value, confidence, text_terms"
)
#: how many values an item write binds (``ITEM_WRITE_COLUMNS``)
ITEM_WRITE_COUNT = 16
# on a rewrite, ``valid_from`` is kept and an absent ``supersedes_reason`` keeps the old one
ITEM_UPDATE = (
    "scope_key = excluded.scope_key, kind = excluded.kind, "
    "updated_at = excluded.updated_at, expires_at = excluded.expires_at, "
    "superseded_by = excluded.superseded_by, deleted = excluded.deleted, "
    "record_json = excluded.record_json, source_task_id = excluded.source_task_id, "
    "agent_role = excluded.agent_role, embedding_model_version = excluded.embedding_model_version, "
    "valid_from = memory_items.valid_from, "
    "supersedes_reason = COALESCE(excluded.supersedes_reason, memory_items.supersedes_reason), "
    "q_value = excluded.q_value, confidence = excluded.confidence, "
    "text_terms = excluded.text_terms"
)
EVENT_COLUMNS = "id, operation, target_id, reason, timestamp, event_json, prev_hash"
REWARD_COLUMNS = (
    "id, memory_id, run_id, unit_id, verdict, reward, q_before, q_after, "
    "verdict_synthesis_json, timestamp"
)
# the RewardEvent field of each of ``REWARD_COLUMNS`` (``verdict_synthesis`` is JSON text)
_REWARD_FIELDS = tuple(column.removesuffix("_json") for column in REWARD_COLUMNS.split(", "))
RECALL_USAGE_COLUMNS = "id, bundle_id, timestamp, usage_json, run_id, unit_id"


def item_params(row: StoredRow, model_version: str) -> tuple[Any, ...]:
    """Insert parameters (``ITEM_WRITE_COLUMNS`` order) of a stored row."""
    data = row.data
    metadata = data["metadata"]  # (a stored record's JSON always holds it)
    return (
        row.id,
        row.scope_key,
        data["kind"],
        data["updatedAt"],
        data.get("expiresAt"),
        data.get("supersededBy"),
        1 if metadata.get("deleted") is True else 0,
        row.json,
        row.source_task_id or "",
        data.get("producerAgentRole") or "unknown",
        model_version,
        row.valid_from,
        row.supersedes_reason,
        q_value_of(metadata),
        float(data["confidence"]),
        text_terms(data.get("text")),
    )


def text_terms(text: Any) -> str:
    """The distinct stemmed terms of a memory's text (as FTS5's ``porter unicode61`` makes
    them), space-separated: written with the row, so a recall learns which query terms a
    candidate's text holds without stemming it again."""
    return " ".join(sorted(set(stemmed_tokens(text)))) if isinstance(text, str) else ""


def text_terms_of(record_json: str) -> str:
    """:func:`text_terms` of a stored ``record_json`` (none when it does not parse: a damaged
    row is not looked at again on every open)."""
    try:
        data = json.loads(record_json)
    except ValueError:
        return ""
    return text_terms(data.get("text")) if isinstance(data, dict) else ""


def report_values(record_json: str) -> tuple[float, float] | None:
    """``(q_value, confidence)`` of a stored ``record_json`` (``None`` when it does not parse):
    what the report columns hold for rows written before them."""
    try:
        data = json.loads(record_json)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    metadata = data.get("metadata")
    confidence = data.get("confidence")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        return None
    return q_value_of(metadata if isinstance(metadata, dict) else {}), float(confidence)


def record_from_columns(
    record_json: str,
    source_task_id: str | None,
    model_version: str | None,
    valid_from: str | None,
    supersedes_reason: str | None,
) -> MemoryRecord:
    """A record from its stored ``record_json`` and the provenance columns beside it.

    Derived views (relations, outcomes, outcome event ids) are dropped: they are rebuilt
    from their own tables. Raises ValueError, TypeError or MemoryValidationError.
    """
    data = json.loads(record_json)
    if not isinstance(data, dict):
        raise MemoryValidationError("record_json is not a JSON object")
    data.pop("relations", None)
    data.pop("outcomes", None)
    if isinstance(data.get("metadata"), dict):
        data["metadata"].pop("outcomeEventIds", None)
    if source_task_id:
        data["sourceTaskId"] = source_task_id
    if model_version:
        data["embeddingModelVersion"] = model_version
    if valid_from is not None:
        data["validFrom"] = valid_from
    if supersedes_reason is not None:
        data["supersedesReason"] = supersedes_reason
    return record_from_dict(data)


def event_from_row(row: Sequence[Any]) -> StoredEvent:
    """A ``memory_events`` row (``EVENT_COLUMNS`` order) as a StoredEvent."""
    return StoredEvent(
        id=row[0],
        operation=row[1],
        target_id=row[2],
        reason=row[3],
        timestamp=row[4],
        event_json=row[5],
        prev_hash=row[6],
    )


def reward_event_params(event: RewardEvent) -> tuple[Any, ...]:
    """Insert parameters (``REWARD_COLUMNS`` order) of a reward event with its timestamp."""
    values = {name: getattr(event, name) for name in _REWARD_FIELDS}
    if values["verdict_synthesis"] is not None:
        values["verdict_synthesis"] = dumps(values["verdict_synthesis"])
    return tuple(values.values())


def reward_event_from_row(row: Sequence[Any]) -> RewardEvent:
    """A ``memory_reward_events`` row (``REWARD_COLUMNS`` order) as a reward event.

    Raises ValueError (MemoryValidationError included) for a row that does not parse.
    """
    values = dict(zip(_REWARD_FIELDS, row, strict=True))
    if values["verdict_synthesis"] is not None:
        values["verdict_synthesis"] = json.loads(values["verdict_synthesis"])
    return RewardEvent(**values)


def outcome_event_from_row(row: Sequence[Any]) -> OutcomeEvent:
    """An outcome event from a row whose first column is ``event_json``.

    Raises ValueError (MemoryValidationError included) for a row that does not parse.
    """
    return outcome_event_from_dict(json.loads(row[0]))


def recall_usage_from_row(row: Sequence[Any]) -> RecallUsage:
    """A recall usage from ``(timestamp, usage_json)`` (the column stands in for a JSON
    ``timestamp`` that is missing). Raises ValueError for a row that does not parse."""
    return recall_usage_from_dict(json.loads(row[1]), row[0])


def recall_usage_params(row_id: str, usage: RecallUsage) -> tuple[Any, ...]:
    """Insert parameters (``RECALL_USAGE_COLUMNS`` order) of a recall usage."""
    return (
        row_id,
        usage.bundle_id,
        usage.timestamp,
        dumps(recall_usage_to_dict(usage)),
        usage.run_id,
        usage.unit_id,
    )


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)]
    return []


def _mapping_or_empty(value: Any) -> Mapping[str, Any]:
    if type(value) is dict or isinstance(value, Mapping):
        return value
    return {}


def fts_values(record: Mapping[str, Any]) -> tuple[str, str, str, str, str, str, str]:
    """The full-text columns (text, tags, kind, source_file_path, source_ref,
    metadata_symbols, metadata_files) of a record in its JSON shape."""
    source = _mapping_or_empty(record.get("source"))
    metadata = _mapping_or_empty(record.get("metadata"))
    text = record.get("text")
    kind = record.get("kind")
    file_path = source.get("filePath")
    ref = source.get("ref")
    symbols: list[str] = []
    files: list[str] = []
    if metadata:  # (most records have none)
        symbols = [*_strings(metadata.get("symbol")), *_strings(metadata.get("symbols"))]
        for key in ("file", "filePath", "files", "touchedFiles"):
            files.extend(_strings(metadata.get(key)))
    return (
        text if isinstance(text, str) else "",
        " ".join(_strings(record.get("tags"))),
        kind.replace("_", " ") if isinstance(kind, str) else "",
        file_path if isinstance(file_path, str) else "",
        ref if isinstance(ref, str) else "",
        " ".join(symbols),
        " ".join(files),
    )

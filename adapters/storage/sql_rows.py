"""Row <-> value mappings shared by the SQL providers (SQLite and PostgreSQL).

The column lists of the reference tables and the conversion of records, events and ledger
entries to rows and back live here once (the SQL itself is in :mod:`.sql`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from swarmmem.core.model.codec import record_from_dict
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.records import MemoryRecord
from swarmmem.core.model.semantics import dumps
from swarmmem.ports.storage import StoredEvent

ITEM_COLUMNS = (
    "id, record_json, source_task_id, agent_role, embedding_model_version, valid_from, "
    "supersedes_reason"
)
ITEM_WRITE_COLUMNS = (
    "id, scope_key, kind, updated_at, expires_at, superseded_by, deleted, record_json, "
    "source_task_id, agent_role, embedding_model_version, valid_from, supersedes_reason"
)
# on a rewrite, ``valid_from`` is kept and an absent ``supersedes_reason`` keeps the old one
ITEM_UPDATE = (
    "scope_key = excluded.scope_key, kind = excluded.kind, "
    "updated_at = excluded.updated_at, expires_at = excluded.expires_at, "
    "superseded_by = excluded.superseded_by, deleted = excluded.deleted, "
    "record_json = excluded.record_json, source_task_id = excluded.source_task_id, "
    "agent_role = excluded.agent_role, embedding_model_version = excluded.embedding_model_version, "
    "valid_from = memory_items.valid_from, "
    "supersedes_reason = COALESCE(excluded.supersedes_reason, memory_items.supersedes_reason)"
)
EVENT_COLUMNS = "id, operation, target_id, reason, timestamp, event_json, prev_hash"
REWARD_COLUMNS = (
    "id, memory_id, run_id, unit_id, verdict, reward, q_before, q_after, "
    "verdict_synthesis_json, timestamp"
)
RECALL_USAGE_COLUMNS = "id, bundle_id, timestamp, usage_json, run_id, unit_id"


def item_params(
    record: MemoryRecord, data: Mapping[str, Any], model_version: str
) -> tuple[Any, ...]:
    """Insert parameters (``ITEM_WRITE_COLUMNS`` order) of a stored record and its JSON."""
    return (
        record.id,
        record.scope.key,
        record.kind,
        record.updated_at,
        record.expires_at,
        record.superseded_by,
        1 if record.deleted else 0,
        dumps(data),
        record.source_task_id or "",
        record.producer_agent_role or "unknown",
        model_version,
        record.valid_from,
        record.supersedes_reason,
    )


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


def reward_event_params(event: Mapping[str, Any]) -> tuple[Any, ...]:
    """Insert parameters (``REWARD_COLUMNS`` order) of a normalised reward event."""
    synthesis = event.get("verdictSynthesis")
    return (
        event["id"],
        event["memoryId"],
        event.get("runId"),
        event.get("unitId"),
        event["verdict"],
        event["reward"],
        event.get("qBefore"),
        event.get("qAfter"),
        None if synthesis is None else dumps(synthesis),
        event["timestamp"],
    )


def reward_event_from_row(row: Sequence[Any]) -> dict[str, Any]:
    """A ``memory_reward_events`` row (``REWARD_COLUMNS`` order) as an event dict."""
    event = {
        "id": row[0],
        "memoryId": row[1],
        "runId": row[2],
        "unitId": row[3],
        "verdict": row[4],
        "reward": row[5],
        "qBefore": row[6],
        "qAfter": row[7],
        "verdictSynthesis": None if row[8] is None else json.loads(row[8]),
        "timestamp": row[9],
    }
    return {k: v for k, v in event.items() if v is not None}


def recall_usage_params(row_id: str, stored: Mapping[str, Any]) -> tuple[Any, ...]:
    """Insert parameters (``RECALL_USAGE_COLUMNS`` order) of a normalised usage record."""
    run_id = stored.get("runId")
    unit_id = stored.get("unitId")
    return (
        row_id,
        stored["bundleId"],
        stored["timestamp"],
        dumps(stored),
        run_id if isinstance(run_id, str) else None,
        unit_id if isinstance(unit_id, str) else None,
    )


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)]
    return []


def fts_values(record: Mapping[str, Any]) -> tuple[str, str, str, str, str, str, str]:
    """The full-text columns (text, tags, kind, source_file_path, source_ref,
    metadata_symbols, metadata_files) of a record in its JSON shape."""
    source = record.get("source") if isinstance(record.get("source"), Mapping) else {}
    metadata = record.get("metadata") if isinstance(record.get("metadata"), Mapping) else {}
    assert isinstance(source, Mapping) and isinstance(metadata, Mapping)
    text = record.get("text")
    kind = record.get("kind")
    file_path = source.get("filePath")
    ref = source.get("ref")
    symbols = [*_strings(metadata.get("symbol")), *_strings(metadata.get("symbols"))]
    files: list[str] = []
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

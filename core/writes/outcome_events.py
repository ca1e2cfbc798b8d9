"""Outcome recording: the argument rules of an outcome report, its anchors, and appending its
event exactly once (a retry repeats the event; a different payload under its id conflicts).

These are the steps of :meth:`~swarmmem.core.writes.service.WriteService.record_outcome`
that need only the store (the service adds the scopes, the policies and the clock).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import attrs

from swarmmem.core.model.errors import ConflictError, MemoryValidationError
from swarmmem.core.model.events import OutcomeEntry, OutcomeEvent
from swarmmem.core.model.ids import sha256_hex
from swarmmem.core.model.records import OUTCOMES, Anchor, MemoryRecord
from swarmmem.core.model.text import check_text
from swarmmem.ports.storage import StorageProvider

OUTCOME_QUESTION_PREFIX = "Outcome evidence for question: "
MAX_ANCHORS = 20
#: the outcome events one generation of a memory takes
MAX_OUTCOMES = 1000
MAX_CORRECTION_LENGTH = 4000


def check_outcome_args(
    *,
    outcome: str,
    memory_id: str | None,
    question: str | None,
    correction: str | None,
    event_id: str | None,
) -> str | None:
    """The correction text of a well-formed outcome report (stripped; ``None`` when blank),
    or MemoryValidationError: exactly one of ``memory_id`` and ``question``, a known outcome,
    and a correction exactly when the outcome is ``corrected``."""
    for text_name, text_value in (
        ("memory_id", memory_id),
        ("question", question),
        ("correction", correction),
        ("event_id", event_id),
    ):
        check_text(text_value, text_name)
    if (memory_id is None) == (question is None):
        raise MemoryValidationError("exactly one of memory_id or question is required")
    if outcome not in OUTCOMES:
        raise MemoryValidationError(
            f"outcome must be one of {', '.join(OUTCOMES)}; got {outcome!r}"
        )
    if correction is not None:
        correction = correction.strip() or None
    if outcome == "corrected" and not correction:
        raise MemoryValidationError("corrected outcomes require correction text")
    if outcome != "corrected" and correction:
        raise MemoryValidationError("correction text is only valid for corrected outcomes")
    if correction is not None and len(correction) > MAX_CORRECTION_LENGTH:
        raise MemoryValidationError("correction must be at most 4000 characters")
    return correction


def normalize_anchor_file(file: str) -> str:
    """A repository-relative anchor path, or MemoryValidationError."""
    value = file.strip() if isinstance(file, str) else ""
    if not value:
        raise MemoryValidationError("anchor file is required")
    if any(ord(c) <= 31 or ord(c) == 127 for c in value):
        raise MemoryValidationError(f"anchor file contains control characters: {value!r}")
    if value.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[\\/]", value):
        raise MemoryValidationError(f"anchor file must be repository-relative: {value!r}")
    parts = [p for p in value.replace("\\", "/").split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise MemoryValidationError(f"anchor file must not contain '..': {value!r}")
    if not parts:
        raise MemoryValidationError(f"anchor file is empty after normalisation: {file!r}")
    return "/".join(parts)


def parse_anchors(
    anchors: Sequence[Mapping[str, Any] | Anchor] | None, redact: Callable[[str], str]
) -> list[Anchor]:
    """The report's anchors (at most :data:`MAX_ANCHORS`), their files normalised and both
    fields redacted."""
    out: list[Anchor] = []
    items = list(anchors or ())
    if len(items) > MAX_ANCHORS:
        raise MemoryValidationError(f"at most {MAX_ANCHORS} anchors are accepted")
    for raw in items:
        file: Any
        symbol: Any
        if isinstance(raw, Anchor):
            file, symbol = raw.file, raw.symbol
        elif isinstance(raw, Mapping):
            if set(raw) - {"file", "symbol"}:
                raise MemoryValidationError(f"anchor has unknown keys: {sorted(raw)}")
            file, symbol = raw.get("file"), raw.get("symbol")
        else:
            raise MemoryValidationError(f"anchor must be an object; got {raw!r}")
        if symbol is not None and (not isinstance(symbol, str) or not symbol.strip()):
            raise MemoryValidationError("anchor symbol must be a non-empty string")
        out.append(
            Anchor(
                file=normalize_anchor_file(redact(file) if isinstance(file, str) else file),
                symbol=redact(symbol.strip()) if isinstance(symbol, str) else None,
            )
        )
    return out


class AppendedOutcome(NamedTuple):
    """The event an outcome report stands for, the memory's outcome generation it counts in,
    and whether this report appended it (False for a retry)."""

    event: OutcomeEvent
    generation: str
    is_new: bool


def append_outcome(
    store: StorageProvider,
    record: MemoryRecord,
    entry: OutcomeEntry,
    anchors: Sequence[Anchor],
    event_id: str | None,
    learn: Callable[[OutcomeEvent], object] | None,
) -> AppendedOutcome:
    """Append the outcome event of ``record`` in one transaction, handing it to ``learn``
    (a retried event too: the learner teaches each event once)."""
    generation = record.metadata.get("outcomeGeneration")
    with store.transaction():
        if not isinstance(generation, str):
            generation = _start_generation(store, record)
        events = store.list_outcomes(record.id)
        if sum(1 for e in events if e.generation == generation) >= MAX_OUTCOMES:
            raise MemoryValidationError("memory outcome limit exceeded")
        eid = event_id or str(uuid.uuid4())
        event = next((e for e in events if e.id == eid), None)
        is_new = event is None
        if event is not None:
            _check_retry(event, entry, anchors)
        else:
            event = OutcomeEvent(
                id=eid, memory_id=record.id, generation=generation, outcome=entry, anchors=anchors
            )
            store.append_outcome(event)
        if learn is not None:
            learn(event)
    return AppendedOutcome(event, generation, is_new)


def _start_generation(store: StorageProvider, record: MemoryRecord) -> str:
    """Give ``record`` its first outcome generation (stored with it) and return it."""
    generation = str(uuid.uuid4())
    store.upsert(
        attrs.evolve(record, metadata={**record.metadata, "outcomeGeneration": generation})
    )
    return generation


def _check_retry(event: OutcomeEvent, entry: OutcomeEntry, anchors: Sequence[Anchor]) -> None:
    """A retry must repeat the stored event (its time stays the first sending's)."""
    same = attrs.evolve(entry, at=event.outcome.at) == event.outcome
    if not same or event.anchors != tuple(anchors):
        raise ConflictError("outcome event id already exists with a different payload")


def outcome_result(
    store: StorageProvider, record: MemoryRecord, appended: AppendedOutcome, outcome: str
) -> dict[str, Any]:
    """The documented result of an outcome report, with the events of the memory's current
    generation counted."""
    generation = appended.generation
    count = sum(1 for e in store.list_outcomes(record.id) if e.generation == generation)
    return {
        "success": True,
        "outcome_recorded": True,
        "event_id": appended.event.id,
        "memory_id": record.id,
        "outcome": outcome,
        "outcomes": count,
    }


def tool_event_id(session_id: str | None, message_id: str | None, args: Mapping[str, Any]) -> str:
    """A deterministic outcome event id for a tool call (retries reuse it)."""
    doc = json.dumps(
        {"sessionID": session_id, "messageID": message_id, "args": args}, sort_keys=True
    )
    return "tool-" + sha256_hex(doc)[:32]

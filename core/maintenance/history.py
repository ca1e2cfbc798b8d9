"""A memory's history as a person reads it on its page: the chain of memories it replaced and
that replaced it (each with the time it held, ``valid_from`` to ``valid_to``), the proposals
about it with their decisions and who made them, the recalls that returned it and the
injections that put it into an agent's prompt.

Pure functions over records, proposals, usage rows and session events;
:func:`swarmmem.core.maintenance.memory_page.memory_history` reads them from the store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from swarmmem.core.model.events import RecallUsage
from swarmmem.core.model.records import MemoryProposal, MemoryRecord

MAX_CHAIN = 20
"""The most memories a chain shows on each side of the memory (a longer one is cut)."""
INJECTED = ("prompt_injected", "session_brief")
"""The run-log events that put memories into an agent's context."""


def _successor(record: MemoryRecord) -> str | None:
    """The memory that replaced ``record``: a supersede's replacement, or the new memory an
    update that changed its text wrote."""
    replacement = record.metadata.get("updateReplacementId")
    return record.superseded_by or (replacement if isinstance(replacement, str) else None)


def _link(record: MemoryRecord, state: str) -> dict[str, Any]:
    valid_to = record.metadata.get("validTo")
    return {
        "id": record.id,
        "state": state,
        "kind": record.kind,
        "text": record.text,
        "valid_from": record.valid_from or record.created_at,
        "valid_to": valid_to if isinstance(valid_to, str) else None,
        "reason": record.supersedes_reason,
    }


def supersede_chain(
    record: MemoryRecord,
    get: Callable[[str], MemoryRecord | None],
    state_of: Callable[[MemoryRecord], str],
) -> list[dict[str, Any]]:
    """The memories ``record`` replaced (through ``supersedes``, oldest first), ``record``
    itself, then those that replaced it (through ``superseded_by`` or an update's
    replacement); ``get`` returns a memory of the context or ``None``. Each link: id, state,
    kind, text, ``valid_from``, ``valid_to``, the reason it was replaced."""
    seen = {record.id}
    before: list[dict[str, Any]] = []
    current = record
    while current.supersedes and len(before) < MAX_CHAIN:
        older = next((get(i) for i in reversed(current.supersedes) if i not in seen), None)
        if older is None:
            break
        seen.add(older.id)
        before.append(_link(older, state_of(older)))
        current = older
    after: list[dict[str, Any]] = []
    current = record
    while len(after) < MAX_CHAIN:
        newer_id = _successor(current)
        newer = get(newer_id) if newer_id and newer_id not in seen else None
        if newer is None:
            break
        seen.add(newer.id)
        after.append(_link(newer, state_of(newer)))
        current = newer
    return [*reversed(before), _link(record, state_of(record)), *after]


def decision_rows(proposals: Iterable[MemoryProposal]) -> list[dict[str, Any]]:
    """The proposals about a memory, oldest first: what each proposed, who proposed it, its
    status and the decision (who made it, when, the action and the reason)."""
    rows = []
    for p in sorted(proposals, key=lambda p: (p.created_at, p.id)):
        summary = p.metadata.get("curatorDecision")
        action = summary.get("action") if isinstance(summary, Mapping) else None
        rows.append(
            {
                "id": p.id,
                "operation": p.operation,
                "status": p.status,
                "created_at": p.created_at,
                "proposed_by": p.proposed_by.agent_role or p.proposed_by.agent_id,
                "run_id": p.proposed_by.run_id,
                "reviewer": p.reviewer,
                "reviewed_at": p.reviewed_at,
                "action": action if isinstance(action, str) else None,
                "reason": p.rejection_reason,
                "undone_by": p.metadata.get("undoneBy"),
            }
        )
    return rows


def recall_rows(usage: Iterable[RecallUsage], memory_id: str) -> list[dict[str, Any]]:
    """The recalls that returned ``memory_id``, newest first: when, for which role and
    session, its place and score, the query."""
    rows: list[dict[str, Any]] = []
    for u in usage:
        if memory_id not in u.memory_ids:
            continue
        place = u.memory_ids.index(memory_id)
        rows.append(
            {
                "timestamp": u.timestamp,
                "agent_role": u.agent_role,
                "session_id": u.session_id,
                "rank": place + 1,
                "score": u.scores[place] if place < len(u.scores) else None,
                "query": u.query,
            }
        )
    rows.sort(key=lambda r: str(r["timestamp"]), reverse=True)
    return rows


def injection_rows(
    sessions: Iterable[tuple[str, Sequence[Mapping[str, Any]]]], memory_id: str
) -> list[dict[str, Any]]:
    """The brief and prompt injections of ``sessions`` (session id, its timeline's events)
    that put ``memory_id`` into the context, newest first: session, time, event, score."""
    rows: list[dict[str, Any]] = []
    for session_id, events in sessions:
        for event in events:
            ids = event.get("memory_ids") or []
            if event.get("type") not in INJECTED or memory_id not in ids:
                continue
            place = ids.index(memory_id)
            scores = event.get("scores") or []
            rows.append(
                {
                    "session_id": session_id,
                    "timestamp": event.get("timestamp"),
                    "type": event.get("type"),
                    "score": scores[place] if place < len(scores) else None,
                    "tokens": event.get("tokens"),
                }
            )
    rows.sort(key=lambda r: str(r["timestamp"] or ""), reverse=True)
    return rows

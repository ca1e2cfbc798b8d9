"""Sessions as their run logs tell them: what was briefed, injected, skipped and filed.

The hooks and automatic injection append one event per step to a run's log
(``.swarm/runs/<session>/memory.jsonl``): ``session_brief``, ``prompt_injected`` (memory ids,
scores, tokens, whether dense retrieval took part), ``prompt_injection_skipped`` (the reason),
``recall_requested``, ``proposals_filed`` / ``proposals_refused`` / ``proposals_none`` (with
the duplicates found and whether the agent was asked to propose), ``hook_skipped`` and
``session_brief_skipped``. The log lies in the project folder, so every field is read as
untrusted: :func:`timeline_entry` keeps the known fields with the expected types, clipped,
and drops anything else. :func:`session_summary` counts what a session received.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from swarmmem.core.model.reports import SessionList, SessionTimeline

MAX_TEXT = 500
"""The longest string kept from a run-log field (longer ones are cut, marked with "…")."""
MAX_ITEMS = 50
"""The most list items kept from a run-log field."""
INJECTION_EVENTS = ("session_brief", "prompt_injected")
"""The events that put memories into the agent's context."""


def _text(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    return value if len(value) <= MAX_TEXT else value[: MAX_TEXT - 1] + "…"


def _texts(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return [t for t in (_text(v) for v in value[:MAX_ITEMS]) if t is not None]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _count(value: Any) -> int | None:
    number = _number(value)
    return int(number) if number is not None and number >= 0 else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def timeline_entry(event: Mapping[str, Any]) -> dict[str, Any]:
    """One run-log event as a timeline entry: the known fields, typed and clipped."""
    scores = event.get("scores")
    return {
        "type": _text(event.get("type")) or "unknown",
        "timestamp": _text(event.get("timestamp")),
        "host": _text(event.get("host")),
        "hook_event": _text(event.get("event")),
        "source": _text(event.get("source")),
        "memory_ids": _texts(event.get("memoryIds")),
        "scores": [
            n
            for n in (_number(s) for s in (scores if isinstance(scores, list) else ()))
            if n is not None
        ][:MAX_ITEMS],
        "tokens": _count(event.get("tokens")),
        "dense": _flag(event.get("dense")),
        "lessons": _flag(event.get("lessons")),
        "reason": _text(event.get("reason")),
        "query_terms": _texts(event.get("queryTerms")),
        "query": _text(event.get("query")),
        "bundle_id": _text(event.get("bundleId")),
        "proposal_ids": _texts(event.get("proposalIds")),
        "rejected": _texts(event.get("rejected")),
        "duplicate_of": _texts(
            [d.get("duplicateOf") for d in _list(event.get("duplicates")) if isinstance(d, Mapping)]
        ),
        "nudged": _flag(event.get("nudged")),
        "error": _text(event.get("error")),
    }


def session_summary(session_id: str, entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the timeline ``entries`` of ``session_id`` add up to."""
    injected = [e for e in entries if e["type"] in INJECTION_EVENTS]
    stamps = sorted(e["timestamp"] for e in entries if e["timestamp"])
    return {
        "session_id": session_id,
        "events": len(entries),
        "first_at": stamps[0] if stamps else None,
        "last_at": stamps[-1] if stamps else None,
        "briefed": any(e["type"] == "session_brief" for e in entries),
        "injections": sum(1 for e in entries if e["type"] == "prompt_injected"),
        "skipped": sum(1 for e in entries if e["type"] == "prompt_injection_skipped"),
        "tokens_injected": sum(e["tokens"] or 0 for e in injected),
        "memories_injected": len({i for e in injected for i in e["memory_ids"]}),
        "proposals_filed": sum(len(e["proposal_ids"]) for e in entries),
    }


def session_timeline(session_id: str, events: Iterable[Mapping[str, Any]]) -> SessionTimeline:
    """The timeline of one session from its run-log ``events``."""
    entries = [timeline_entry(e) for e in events if isinstance(e, Mapping)]
    return SessionTimeline(
        session_id=session_id, summary=session_summary(session_id, entries), events=entries
    )


def session_list(summaries: Sequence[dict[str, Any]], *, total: int, limit: int) -> SessionList:
    """The list of sessions: ``summaries`` of the newest ``limit`` of ``total``."""
    return SessionList(limit=limit, session_count=total, sessions=list(summaries))

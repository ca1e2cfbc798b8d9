"""Renderings of memory management: list, show and forget."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from swarmmem.cli.render._common import Data, _bullets, _count


def _clip(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters (the last an ellipsis when cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def memory_list_json(records: Iterable[Any], states: Iterable[str], query: Data) -> dict[str, Any]:
    """The ``list`` result: the query and one entry per memory (with its state)."""
    memories = [
        {
            "memory_id": record.id,
            "kind": record.kind,
            "state": memory_state,
            "scope": record.scope.type,
            "tags": list(record.tags),
            "created_at": record.created_at,
            "updated_at": record.updated_at,
            "text": record.text,
        }
        for record, memory_state in zip(records, states, strict=True)
    ]
    return {"success": True, "count": len(memories), "query": dict(query), "memories": memories}


def memory_list_text(data: Data) -> str:
    """One line per memory: id, kind, state, last update, the first 80 characters."""
    rows = data["memories"]
    query = data["query"]
    if not rows:
        which = "" if query["state"] == "all" else f"{query['state']} "
        return f"No {which}memories match."
    lines = [
        f"{m['memory_id']}  {m['kind']:<21}  {m['state']:<10}  {m['updated_at']}  "
        f"{_clip(m['text'], 80)}"
        for m in rows
    ]
    if data["count"] == query["limit"]:
        lines.append(f"(more may follow: --offset {query['offset'] + data['count']})")
    return "\n".join(lines)


def _reward_line(event: Data) -> str:
    before, after = event.get("qBefore"), event.get("qAfter")
    change = f"q {before:.3f}→{after:.3f}" if before is not None and after is not None else ""
    return f"- {event.get('timestamp')} {event['verdict']} {event['reward']:+g} {change}".rstrip()


def _outcome_line(event: Data) -> str:
    outcome = event["outcome"]
    correction = f": {outcome['correction']}" if outcome.get("correction") else ""
    return f"- {outcome['at']} {outcome['outcome']}{correction}"


def _audit_line(event: Data) -> str:
    reason = f" ({event['reason']})" if event["reason"] else ""
    return f"- {event['timestamp']} {event['operation']} {event['target_id']}{reason}"


def memory_text(data: Data) -> str:
    """``show``: the memory, its provenance and everything recorded about it."""
    record, prov = data["record"], data["provenance"]
    source = prov["source"]
    where = " ".join(str(v) for k, v in source.items() if k != "type" and v)
    producer = ", ".join(
        f"{label} {value}"
        for label, value in (
            ("role", prov["producer_agent_role"]),
            ("session", prov["producer_session_id"]),
            ("task", prov["source_task_id"]),
        )
        if value
    )
    lines = [f"{data['memory_id']}  {record['kind']}  {data['state']}", record["text"], ""]
    lines += _bullets(
        [
            ("Scope", record["scope"]["type"]),
            ("Tags", ", ".join(record.get("tags", [])) or "none"),
            ("Source", f"{source['type']} {where}".rstrip()),
            ("Producer", producer or "unknown"),
            ("Created", prov["created_at"]),
            ("Updated", prov["updated_at"]),
            (
                "Held",
                f"{prov.get('valid_from') or prov['created_at']} to "
                f"{prov.get('valid_to') or 'now'}",
            ),
            ("Content hash", prov["content_hash"]),
            ("Relations", ", ".join(data["relations"]) or "none"),
            ("Proposals", ", ".join(data["proposals"]) or "none"),
        ]
    )
    history = data["q_history"]
    lines += ["", f"Q value {data['q_value']:.3f} ({_count(len(history), 'reward')})"]
    lines += [_reward_line(e) for e in history]
    lines += ["", f"Outcomes ({len(data['outcomes'])})"] + [
        _outcome_line(e) for e in data["outcomes"]
    ]
    lines += ["", f"Audit events ({len(data['audit'])})"] + [_audit_line(e) for e in data["audit"]]
    return "\n".join(lines)


def forget_text(data: Data) -> str:
    """What ``forget`` did, and what is left."""
    if not data["purged"]:
        return (
            f"Forgot {data['memory_id']}: it is a tombstone now (reason: {data['reason']}). "
            f"`swarmmem list --state deleted` still lists it; "
            f"`swarmmem forget {data['memory_id']} --purge --reason REASON` erases it."
        )
    counts = data["scrubbed"]
    return (
        f"Purged {data['memory_id']}: the record is erased and its text scrubbed from "
        f"{_count(counts['proposals'], 'proposal')}, {_count(counts['outcomes'], 'outcome event')} "
        f"and {_count(counts['recallUsage'], 'recall usage row')}. The audit log records the purge "
        "by id and counts, without the text."
    )

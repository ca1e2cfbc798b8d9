"""The curator's MCP tools: ``swarm_memory_pending`` and ``swarm_memory_curate``.

They are listed only by a server whose ``--role curator`` the person granted outside the
repository (:mod:`swarmmem.grants`); a curator agent then reviews the pending proposals and
decides on each through the same audited decision path as ``swarmmem curate``. The MCP server
(:mod:`swarmmem.mcp.server`) registers the schemas and handlers defined here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from swarmmem.core.model.records import CURATOR_ACTIONS, DURABLE_MEMORY_KINDS
from swarmmem.memory import Memory
from swarmmem.results import curate_json, pending_json

PENDING = "swarm_memory_pending"
CURATE = "swarm_memory_curate"
CURATOR_TOOLS = (PENDING, CURATE)

PENDING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 100,
            "description": "Most pending proposals to list, oldest first (default 20).",
        }
    },
    "additionalProperties": False,
}
CURATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "proposalId": {
            "type": "string",
            "pattern": "^prop_[a-f0-9]{16}$",
            "description": "The pending proposal (prop_<16 hex>) from swarm_memory_pending.",
        },
        "decision": {
            "type": "string",
            "enum": list(CURATOR_ACTIONS),
            "description": "add/update/merge/supersede/delete apply the proposal as its "
            "operation says; reject refuses it (give a reason); noop closes it unchanged.",
        },
        "reason": {
            "type": "string",
            "minLength": 1,
            "maxLength": 1000,
            "description": "Why; recorded in the audit log (required for reject).",
        },
        "text": {
            "type": "string",
            "minLength": 1,
            "maxLength": 500,
            "description": "add/update only: the memory's text in your words (a concise "
            "durable fact under 500 characters) instead of the proposal's.",
        },
        "kind": {
            "type": "string",
            "enum": sorted(DURABLE_MEMORY_KINDS),
            "description": "add/update only: a durable kind instead of the proposal's.",
        },
        "tags": {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": 100},
            "maxItems": 20,
            "description": "add/update only: the memory's tags instead of the proposal's.",
        },
    },
    "required": ["proposalId", "decision"],
    "additionalProperties": False,
}

DESCRIPTIONS = {
    PENDING: "List the memory proposals awaiting a curator decision, oldest first: each with "
    "its id, operation, kind, text, rationale, evidence refs and who proposed it.",
    CURATE: "Decide on one pending proposal (curator only). Approve a proposal (decision = "
    "its operation: add, update, merge, supersede or delete) only when it is a concise, "
    "durable, sourced fact that future agents need and no active memory says the same; "
    "an add or update may rephrase it (text, kind, tags) into such a fact; otherwise "
    "reject it with a reason. Every decision is audited.",
}
ANNOTATIONS: dict[str, dict[str, Any]] = {
    PENDING: {
        "title": "List pending memory proposals",
        "readOnlyHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    },
    CURATE: {
        "title": "Decide on a memory proposal",
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": False,
    },
}
RESULT_PROPERTIES: dict[str, dict[str, Any]] = {
    PENDING: {"success": {"const": True}, "pending": {"type": "array"}},
    CURATE: {
        "success": {"const": True},
        "action": {"enum": list(CURATOR_ACTIONS)},
        "proposal_id": {"type": "string"},
        "memory_id": {"type": ["string", "null"]},
        "reason": {"type": ["string", "null"]},
        "applied_at": {"type": "string"},
    },
}


def pending_rules(args: Mapping[str, Any], _names: Any) -> list[str]:
    return []


def curate_rules(args: Mapping[str, Any], _names: Any) -> list[str]:
    problems = []
    if args["decision"] == "reject" and not str(args.get("reason") or "").strip():
        problems.append("reason is required when decision is reject: say why, for the proposer")
    rephrased = [key for key in ("text", "kind", "tags") if key in args]
    if rephrased and args["decision"] not in ("add", "update"):
        problems.append(f"{', '.join(rephrased)} rephrase add and update decisions only")
    return problems


def pending(mem: Memory, args: dict[str, Any], _request_id: str | None) -> dict[str, Any]:
    report = mem.pending(args.get("limit", 20))
    by_id = {p.id: p for p in mem.proposals("pending")}
    proposals = [by_id.get(entry["id"]) for entry in report.pending]
    return pending_json(report, proposals)


def curate(mem: Memory, args: dict[str, Any], _request_id: str | None) -> dict[str, Any]:
    change = mem.curate(
        args["proposalId"],
        args["decision"],
        reason=args.get("reason"),
        text=args.get("text"),
        kind=args.get("kind"),
        tags=args.get("tags"),
    )
    return curate_json(change)

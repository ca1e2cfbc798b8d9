"""The MCP tools' names and JSON schemas: what each tool accepts and what it returns.

Input schemas are hand-written (``additionalProperties: false``, limits on every string and
list) so a client sees the exact argument rules; the rules one schema cannot state live in
:mod:`swarmmem.mcp.validation`. Each output schema is the tool's own result, the disabled
result or the error result. The curator's two tools come from :mod:`swarmmem.mcp.curator`.
"""

from __future__ import annotations

from typing import Any

from swarmmem.core.model.records import (
    MEMORY_KINDS,
    OUTCOMES,
    PROPOSAL_OPERATIONS,
    PROPOSAL_STATUSES,
)
from swarmmem.core.writes.service import MAX_ANCHORS
from swarmmem.mcp import curator

RECALL = "swarm_memory_recall"
PROPOSE = "swarm_memory_propose"
OUTCOME = "swarm_memory_outcome"
TOOL_NAMES = (RECALL, PROPOSE, OUTCOME)

MAX_EVIDENCE_REFS = 20
MAX_RELATED_IDS = 8  # a merge joins at most 8 memories (curator rule)
MEMORY_ID_PATTERN = "^mem_[a-f0-9]{16}$"


def _text(min_length: int, max_length: int, description: str) -> dict[str, Any]:
    return {
        "type": "string",
        "minLength": min_length,
        "maxLength": max_length,
        "description": description,
    }


# ------------------------------------------------------------------------ input schemas
RECALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": _text(3, 2000, "What you need to know (at least 3 characters)."),
        "task": _text(
            1, 2000, "The task you are working on; its terms count as an extra ranking signal."
        ),
        "kinds": {
            "type": "array",
            "items": {"type": "string", "enum": list(MEMORY_KINDS)},
            "maxItems": len(MEMORY_KINDS),
            "description": "Only recall these memory kinds.",
        },
        "maxItems": {
            "type": "integer",
            "minimum": 1,
            "maximum": 20,
            "description": "Most memories to return (default from configuration).",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}

PROPOSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "operation": {
            "type": "string",
            "enum": list(PROPOSAL_OPERATIONS),
            "description": "What the curator should do.",
        },
        "kind": {
            "type": "string",
            "enum": list(MEMORY_KINDS),
            "description": "Memory kind; required for add, update and supersede.",
        },
        "text": _text(1, 2000, "The concise fact; required for add, update and supersede."),
        "targetMemoryId": _text(
            1, 200, "The memory to update, delete or supersede; required for those operations."
        ),
        "relatedMemoryIds": {
            "type": "array",
            "items": _text(1, 200, "A memory id."),
            "maxItems": MAX_RELATED_IDS,
            "description": "Memories to merge (2 to 8); required for merge.",
        },
        "rationale": _text(1, 2000, "Why future agents need this."),
        "evidenceRefs": {
            "type": "array",
            "items": _text(1, 500, "A file path, URL, commit or evidence-cache ref."),
            "maxItems": MAX_EVIDENCE_REFS,
            "description": "Sources backing the fact; every kind except todo and scratch "
            "needs at least one.",
        },
    },
    "required": ["operation", "rationale"],
    "additionalProperties": False,
}

OUTCOME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "memoryId": {
            "type": "string",
            "pattern": MEMORY_ID_PATTERN,
            "description": "The recalled memory (mem_<16 hex>); or give question.",
        },
        "question": _text(1, 2000, "The question answered when no memory id is known."),
        "outcome": {
            "type": "string",
            "enum": list(OUTCOMES),
            "description": "Was the memory useful, a dead end, or corrected?",
        },
        "correction": _text(1, 4000, "The corrected fact; required for corrected only."),
        "anchors": {
            "type": "array",
            "maxItems": MAX_ANCHORS,
            "items": {
                "type": "object",
                "properties": {
                    "file": _text(1, 1000, "Repository-relative file path."),
                    "symbol": _text(1, 500, "Symbol in that file."),
                },
                "required": ["file"],
                "additionalProperties": False,
            },
            "description": "Files (and symbols) the outcome is about.",
        },
    },
    "required": ["outcome"],
    "additionalProperties": False,
}

SCHEMAS: dict[str, dict[str, Any]] = {
    RECALL: RECALL_SCHEMA,
    PROPOSE: PROPOSE_SCHEMA,
    OUTCOME: OUTCOME_SCHEMA,
    curator.PENDING: curator.PENDING_SCHEMA,
    curator.CURATE: curator.CURATE_SCHEMA,
}


# ----------------------------------------------------------------------- output schemas
def _result(title: str, properties: dict[str, Any], *optional: str) -> dict[str, Any]:
    """An object schema whose properties are all required except ``optional``.

    Extra keys are not forbidden, so a key added later does not break a validating client.
    """
    return {
        "title": title,
        "type": "object",
        "properties": properties,
        "required": [key for key in properties if key not in optional],
    }


_STRING = {"type": "string"}
_BOOLEAN = {"type": "boolean"}
_COUNT = {"type": "integer", "minimum": 0}
_MEMORY_ID = {"type": "string", "pattern": MEMORY_ID_PATTERN}

DISABLED_RESULT_SCHEMA = _result(
    "memory disabled",
    {"success": {"const": False}, "disabled": {"const": True}, "message": _STRING},
)
ERROR_RESULT_SCHEMA = _result(
    "error",
    {
        "success": {"const": False},
        "error": {
            "type": "string",
            "description": "Machine-readable code, e.g. memory_validation_error, not_found.",
        },
        "message": {"type": "string", "description": "What was wrong and what is accepted."},
    },
)
RECALL_RESULT_SCHEMA = _result(
    "recall result",
    {
        "success": {"const": True},
        "bundle_id": {"type": "string", "pattern": "^bundle_"},
        "memory_ids": {"type": "array", "items": _MEMORY_ID},
        "total": _COUNT,
        "token_estimate": _COUNT,
        "signals": {
            "type": "array",
            "items": _result(
                "signals",
                {
                    "memory_id": _MEMORY_ID,
                    "textOverlap": {"type": "number"},
                    "tagOverlap": {"type": "number"},
                    "fileOverlap": {"type": "number"},
                    "symbolOverlap": {"type": "number"},
                    "kindMatch": _BOOLEAN,
                    "scopeMatch": _BOOLEAN,
                },
            ),
        },
        "prompt_block": {
            "type": "string",
            "description": "Untrusted background facts to place in the prompt.",
        },
    },
)
PROPOSE_RESULT_SCHEMA = _result(
    "proposal result",
    {
        "success": {
            "type": "boolean",
            "description": "false when a policy (e.g. a redacted secret) rejected the proposal.",
        },
        "proposal_id": {"type": "string", "pattern": "^prop_[a-f0-9]{16}$"},
        "status": {"enum": list(PROPOSAL_STATUSES)},
        "operation": {"enum": list(PROPOSAL_OPERATIONS)},
        "memory_id": {"type": ["string", "null"]},
        "rejection_reason": {"type": ["string", "null"]},
        "needs_rephrasing": {
            "type": "array",
            "items": _STRING,
            "description": "Why a curator must rephrase it before it can become memory "
            "(a non-durable kind, a text over 500 characters); empty when it can be approved.",
        },
        "similar": {
            "type": "array",
            "items": _result(
                "similar memory", {"memory_id": _MEMORY_ID, "score": {"type": "number"}}
            ),
            "description": "Active memories this proposal resembles (token overlap), best first.",
        },
        "duplicate_of": {
            "type": ["string", "null"],
            "description": "The active memory or pending proposal that already holds exactly "
            "this memory (the proposal was then closed).",
        },
        "message": _STRING,
    },
)
OUTCOME_RESULT_SCHEMA = _result(
    "outcome result",
    {
        "success": {"const": True},
        "outcome_recorded": _BOOLEAN,
        "event_id": _STRING,
        "memory_id": _MEMORY_ID,
        "outcome": {"enum": list(OUTCOMES)},
        "outcomes": {**_COUNT, "description": "Outcome events this memory now has."},
        "status": {"enum": ["complete", "partial"]},
        "partial": {"type": "boolean", "description": "Reflection was on but failed."},
        "reflection_enabled": _BOOLEAN,
        "reflection_attempted": _BOOLEAN,
        "reflection_updated": _BOOLEAN,
        "reflection_entries": _COUNT,
        "reflection_error": {"type": ["string", "null"]},
        "correction_proposal_id": {
            "type": ["string", "null"],
            "description": "The pending update proposal a correction was filed as.",
        },
        "correction_proposal_error": {"type": "string"},
    },
    "reflection_entries",
    "reflection_error",
    "correction_proposal_id",
    "correction_proposal_error",
)


def _output_schema(result: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "anyOf": [result, DISABLED_RESULT_SCHEMA, ERROR_RESULT_SCHEMA],
    }


OUTPUT_SCHEMAS: dict[str, dict[str, Any]] = {
    RECALL: _output_schema(RECALL_RESULT_SCHEMA),
    PROPOSE: _output_schema(PROPOSE_RESULT_SCHEMA),
    OUTCOME: _output_schema(OUTCOME_RESULT_SCHEMA),
    **{
        name: _output_schema(_result(f"{name} result", properties))
        for name, properties in curator.RESULT_PROPERTIES.items()
    },
}
"""Each tool's result: its own result, the disabled result or the error result."""

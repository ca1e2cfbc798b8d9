"""The JSON results that the CLI and the MCP server both return.

A recall bundle, a proposal, and the payloads of a disabled memory and of an error are defined
once here, so the two surfaces cannot drift apart. Neither surface is imported: the CLI's
renderers (:mod:`swarmmem.cli.render`) and the MCP server (:mod:`swarmmem.mcp`) build
on these.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

import attrs

from swarmmem.core.model.codec import proposal_to_dict
from swarmmem.core.model.records import MemoryProposal, RecallBundle
from swarmmem.core.model.reports import PendingReport
from swarmmem.core.writes.validation import rephrasing_needed

DISABLED_MESSAGE = (
    'Swarm memory is disabled: set "enabled": true in the "memory" section of '
    ".opencode/opencode-swarm.json (`swarmmem init` writes it), or pass "
    "config={'enabled': True} to swarmmem.open()."
)
"""What every surface says when memory is disabled."""

PROPOSAL_MESSAGES = {
    True: "Memory proposal created. Durable memory was not written.",
    False: "Memory proposal was captured with policy rejection metadata.",
}
"""The message of a proposal result, keyed by "the proposal awaits a curator"."""


def bundle_json(bundle: RecallBundle) -> dict[str, Any]:
    """The stable JSON form of a recall bundle."""
    return {
        "success": True,
        "bundle_id": bundle.id,
        "memory_ids": [item.record.id for item in bundle.items],
        "total": len(bundle.items),
        "token_estimate": bundle.token_estimate,
        "items": [
            {
                "memory_id": item.record.id,
                "kind": item.record.kind,
                "scope": item.record.scope.type,
                "score": item.score,
                "reason": item.reason,
                "text": item.record.text,
                **(
                    {"evidence": {"status": item.evidence_status}}
                    if item.evidence_status is not None
                    else {}
                ),
                **(
                    {
                        "relation": {
                            "type": item.relation.type,
                            "source_memory_id": item.related_from,
                        }
                    }
                    if item.relation is not None
                    else {}
                ),
                **({"explored": True} if item.explored else {}),
            }
            for item in bundle.items
        ],
        "signals": [
            {
                "memory_id": item.record.id,
                "textOverlap": item.signals.text_overlap,
                "tagOverlap": item.signals.tag_overlap,
                "fileOverlap": item.signals.file_overlap,
                "symbolOverlap": item.signals.symbol_overlap,
                "kindMatch": item.signals.kind_match,
                "scopeMatch": item.signals.scope_match,
            }
            for item in bundle.items
        ],
        "diagnostics": bundle.diagnostics,
        "prompt_block": bundle.prompt_block,
    }


def proposal_json(proposal: MemoryProposal, *, with_proposal: bool = True) -> dict[str, Any]:
    """The tool-style JSON result of a proposal, ending with its message.

    ``with_proposal`` adds the whole proposal in the reference shape (key ``proposal``).
    """
    accepted = proposal.status != "rejected"
    data: dict[str, Any] = {
        "success": accepted,
        "proposal_id": proposal.id,
        "status": proposal.status,
        "operation": proposal.operation,
        "memory_id": proposal.proposed_record.id if proposal.proposed_record else None,
        "rejection_reason": proposal.rejection_reason,
    }
    data["needs_rephrasing"] = (
        rephrasing_needed(proposal.proposed_record)
        if accepted and proposal.operation in ("add", "update", "supersede")
        else []
    )
    data["similar"] = similar_of(proposal)
    data["duplicate_of"] = proposal.metadata.get("duplicateOf")
    if with_proposal:
        data["proposal"] = proposal_to_dict(proposal)
    data["message"] = PROPOSAL_MESSAGES[accepted]
    return data


def similar_of(proposal: Any) -> list[dict[str, Any]]:
    """The active memories a proposal resembles: ``[{"memory_id", "score"}]``, best first."""
    found = proposal.metadata.get("similar") if proposal is not None else None
    return [
        {"memory_id": item.get("memoryId"), "score": item.get("score")}
        for item in found or ()
        if isinstance(item, dict)
    ]


def disabled_result(message: str = DISABLED_MESSAGE) -> dict[str, Any]:
    """The result of any call while memory is disabled."""
    return {"success": False, "disabled": True, "message": message}


@functools.cache
def _secrets() -> Any:
    from swarmmem.registry import create

    return create("secrets", "regex")


def redact_secrets(text: str) -> str:
    """``text`` with every likely secret redacted (the regex detector)."""
    return str(_secrets().redact(text))


def error_result(code: str, message: str) -> dict[str, Any]:
    """The result of a refused or failed call; a likely secret the message quotes (an id or
    value the caller gave) is redacted, so an error never echoes one."""
    return {"success": False, "error": code, "message": redact_secrets(message)}


def curate_json(change: Any) -> dict[str, Any]:
    """The JSON result of a curator decision (an ``AppliedChange``)."""
    return {"success": True, **attrs.asdict(change)}


def proposal_details_json(prop: Any) -> dict[str, Any]:
    """What a reviewer needs to decide on a pending proposal, beyond the report line."""
    record = prop.proposed_record if prop is not None else None
    return {
        "kind": record.kind if record else None,
        "memory_id": record.id if record else None,
        "text": record.text if record else None,
        "rationale": prop.rationale if prop is not None else None,
        "evidence_refs": list(prop.evidence_refs) if prop is not None else [],
        "related_memory_ids": list(prop.related_memory_ids or ()) if prop is not None else [],
        "proposed_by": attrs.asdict(prop.proposed_by) if prop is not None else None,
        "similar": similar_of(prop),
        "needs_rephrasing": (
            rephrasing_needed(record)
            if prop is not None and prop.operation in ("add", "update", "supersede")
            else []
        ),
    }


def pending_json(report: PendingReport, proposals: Iterable[Any]) -> dict[str, Any]:
    """The ``pending`` report with each pending entry's proposal details merged in."""
    data = report.to_json()
    data["pending"] = [
        {**entry, **proposal_details_json(prop)}
        for entry, prop in zip(data["pending"], proposals, strict=True)
    ]
    return {"success": True, **data}

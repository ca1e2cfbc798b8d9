"""Renderings of the maintenance reports, rebuilds and the audit commands."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from swarmmem.cli.render._common import Data, _code, _heading, similar_line
from swarmmem.cli.render.markdown import (
    render_compaction,
    render_pending,
    render_recall_log,
    render_stale,
    render_value_log,
)
from swarmmem.core.model.text import lookalike_note


def pending_text(data: Data) -> str:
    """The pending report, then the details a reviewer decides on."""
    lines = [render_pending(data).rstrip("\n")]
    if data["pending"]:
        lines += ["", "### Pending proposal details", ""]
        for entry in data["pending"]:
            lines.append(f"- `{entry['id']}` {entry['operation']} {entry['kind'] or ''}".rstrip())
            lines.append(
                f"  proposed by {proposer_text(entry['proposed_by'])}, {ago(entry['age'])}"
            )
            if entry["text"]:
                lines.append(f"  text: {entry['text']}")
            lines.append(f"  rationale: {entry['rationale']}")
            if entry["evidence_refs"]:
                lines.append(f"  evidence: {', '.join(entry['evidence_refs'])}")
            lines += [f"  needs rephrasing: {note}" for note in entry["needs_rephrasing"]]
            if entry["similar"]:
                lines.append(f"  {similar_line(entry['similar'])}")
        lines += ["", "Decide with `swarmmem curate <proposal_id> <decision>`."]
    return "\n".join(lines)


def ago(age: str) -> str:
    """``5h`` -> ``5h ago``; ``just now`` and ``unknown`` stay as they are."""
    return age if age in ("just now", "unknown") else f"{age} ago"


def proposer_text(by: Mapping[str, Any] | None) -> str:
    """``coder (session s-1)``: who proposed, as far as it is known."""
    by = by or {}
    who = by.get("agent_role") or by.get("agent_id") or "an unknown caller"
    return f"{who} (session {by['run_id']})" if by.get("run_id") else str(who)


def proposal_show_text(data: Data) -> str:
    """``show`` of a proposal: what it proposes, who proposed it when, and its state."""
    p = data["proposal"]
    record = p.get("proposedRecord") or {}
    lines = _heading(f"Swarm Memory Proposal {p['id']}")
    lines.append(f"- Operation: `{p['operation']}`, status `{p['status']}`")
    lines.append(f"- Proposed by {proposer_text(data['proposed_by'])}, {ago(data['age'])}")
    if p.get("reviewer"):
        lines.append(f"- Decided by `{p['reviewer']}` at {p.get('reviewedAt')}")
    if record:
        lines.append(f"- Kind: `{record.get('kind')}`")
        lines.append(f"- Text: {record.get('text')}")
    lookalike = lookalike_note(record.get("text"), p.get("rationale"), *p.get("evidenceRefs") or ())
    if lookalike:
        lines.append(f"- Look-alike letters in a domain: {lookalike}")
    if p.get("targetMemoryId"):
        lines.append(f"- Target: `{p['targetMemoryId']}`")
    lines.append(f"- Rationale: {p['rationale']}")
    if p.get("evidenceRefs"):
        lines.append(f"- Evidence: {', '.join(p['evidenceRefs'])}")
    lines += [f"- Needs rephrasing: {note}" for note in data["needs_rephrasing"]]
    if data.get("similar"):
        lines.append(f"- {similar_line(data['similar']).capitalize()}")
    if p.get("rejectionReason"):
        lines.append(f"- Rejection reason: {p['rejectionReason']}")
    written = data.get("written")
    if written:
        lines.append(f"- Wrote memory `{written['memory_id']}` ({written['state']})")
        if written["text"] != record.get("text"):
            lines.append(f"- Applied text: {written['text']}")
    lines.append(f"- Audit events: {len(data['audit'])}")
    return "\n".join(lines)


def value_log_text(data: Data) -> str:
    """The ``value-log`` report."""
    return render_value_log(data).rstrip("\n")


def recall_log_text(data: Data) -> str:
    """The ``recall-log`` report."""
    return render_recall_log(data).rstrip("\n")


def stale_text(data: Data) -> str:
    """The ``stale`` report."""
    return render_stale(data).rstrip("\n")


def compaction_text(data: Data) -> str:
    """The ``compact`` plan or what it removed."""
    return render_compaction(data).rstrip("\n")


def reflect_text(data: Data) -> str:
    """Where the regenerated lessons went, or why they were not regenerated."""
    if not data.get("updated"):
        return f"Reflection lessons were not regenerated: {data.get('reason')}."
    return (
        f"Regenerated reflection lessons from {data['entries']} entries:\n"
        f"- {data['json_path']}\n- {data['md_path']}"
    )


def rebuild_text(data: Data) -> str:
    """The result of re-embedding every durable memory, naming what it fixed."""
    if data.get("reason"):
        return f"Embeddings were not rebuilt: {data['reason']}."
    fixed = [f"{data['missing_before']} memories had no vector"]
    if data["stale_removed"]:
        fixed.append(f"{data['stale_removed']} vectors of removed memories were dropped")
    if data["outdated_model"]:
        fixed.append("the stored vectors came from another model")
    version = "advanced to" if data["advanced"] else "left unchanged, not"
    text = (
        f"Re-embedded {data['rebuilt']} memories ({data['failed']} failed): "
        f"{'; '.join(fixed)}. The model version was {version} {data['model_version']}."
    )
    ann = data.get("ann_index")
    if ann and ann["rebuilt"]:
        text += (
            f" The vector index was rebuilt with m={ann['m']} "
            f"ef_construction={ann['ef_construction']} in {ann['seconds']:.1f} s."
        )
    elif ann and ann.get("reason"):
        text += f" The vector index was not rebuilt: {ann['reason']}."
    return text


def audit_text(report: Data) -> str:
    """Markdown rendering of an audit verification report."""
    lines = _heading("Swarm Memory Audit Verification")
    if not report.get("supported"):
        return "\n".join([*lines, f"- Verified: `n/a` ({report['message']})"])
    head = report.get("headMatch")
    lines += [
        f"- Verified: {_code(bool(report.get('verified')))}",
        f"- Event rows: {report['totalRows']} (chained: {report['chainedRows']}, "
        f"pre-chain legacy: {report['legacyRows']})",
        f"- Chain head: {_code('n/a' if head is None else str(head).lower())}",
    ]
    if report.get("keyed") is not None:
        lines.append(f"- Keyed: {_code(bool(report.get('keyed')))}")
    if report.get("keyError"):
        lines += ["", f"Not verified: {report['keyError']}"]
    elif report.get("divergence"):
        div = report["divergence"]
        lines += [
            "",
            f"First divergence at row `{div['rowId']}` — {div['detail']}",
            "The audit log was edited, reordered or had rows deleted after they were written.",
        ]
    elif head is False:
        lines += [
            "",
            "The chain head does not match the last row: the newest rows were changed or removed.",
        ]
    else:
        lines += ["", "The audit log hash chain is intact."]
    return "\n".join(lines)


def audit_key_text(result: Data) -> str:
    """Markdown rendering of ``audit-key adopt``."""
    lines = _heading("Swarm Memory Audit Key")
    lines += [
        f"- Adopted: {_code(bool(result.get('adopted')))}",
        f"- Keyed from row: {result['keyedFrom']} (earlier rows stay plain SHA-256, "
        f"{result['legacyRows']} of them from before the chain)",
    ]
    return "\n".join(lines)

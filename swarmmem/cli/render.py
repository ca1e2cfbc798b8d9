"""Every text and JSON rendering of the ``swarmmem`` command line.

The commands compute a result (through the :class:`~swarmmem.memory.Memory` facade and the
runner functions) and hand it to :func:`swarmmem.cli.app.emit` with one of the text renderers
below; ``--json`` prints the same result as a JSON document instead. A text renderer takes
that JSON document and returns the text form. The JSON shapes the MCP server shares (a recall
bundle, a proposal, errors) come from :mod:`swarmmem.results`; the maintenance report texts
from :mod:`swarmmem.core.maintenance.reports`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from swarmmem.core.maintenance.reports import (
    render_compaction,
    render_pending,
    render_recall_log,
    render_stale,
    render_value_log,
)
from swarmmem.core.model.formatting import to_fixed
from swarmmem.results import bundle_json as bundle_json
from swarmmem.results import curate_json as curate_json
from swarmmem.results import pending_json as pending_json
from swarmmem.results import proposal_details_json as proposal_details_json
from swarmmem.results import proposal_json as proposal_json


# ----------------------------------------------------------------------- text helpers
def _heading(title: str) -> list[str]:
    return [f"## {title}", ""]


Data = Mapping[str, Any]


# ----------------------------------------------------------------------------- JSON
def json_text(data: Any) -> str:
    """A result as the pretty-printed JSON document of ``--json``."""
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)


def error_json(payload: Data) -> str:
    """An error payload as the JSON document of ``--json`` (ASCII-escaped)."""
    return json.dumps(payload, indent=2)


def error_text(payload: Data) -> str:
    """An error payload as the line printed on stderr."""
    return f"Error: {payload['message']}"


def _bullets(pairs: Iterable[tuple[str, Any]]) -> list[str]:
    """``- label: value`` lines."""
    return [f"- {label}: {value}" for label, value in pairs]


def _code(value: Any) -> str:
    """A value in backticks; booleans as ``true``/``false``."""
    shown = str(value).lower() if isinstance(value, bool) else value
    return f"`{shown}`"


def _count(n: int, noun: str) -> str:
    """``1 row``, ``2 rows``, ``2 memories``."""
    if n == 1:
        return f"{n} {noun}"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "o", "u"):
        return f"{n} {noun[:-1]}ies"
    return f"{n} {noun}s"


def _lines(*parts: Iterable[str]) -> str:
    return "\n".join(line for part in parts for line in part)


# -------------------------------------------------------------------- agent commands
def recall_text(data: Data) -> str:
    """A recall result as the prompt block an agent would see."""
    return str(data["prompt_block"])


def skipped_recall_json(reason: str) -> dict[str, Any]:
    """An injection recall that did not run (``reason``): no memories, an empty block."""
    return {
        "success": True,
        "skipped": reason,
        "memory_ids": [],
        "total": 0,
        "token_estimate": 0,
        "prompt_block": "",
    }


def proposal_text(data: Data) -> str:
    """A proposal result: the message, the id and status, any rejection reason."""
    lines = [data["message"], f"proposal_id: {data['proposal_id']}", f"status: {data['status']}"]
    if data["rejection_reason"]:
        lines.append(f"rejection_reason: {data['rejection_reason']}")
    lines += [f"needs rephrasing: {note}" for note in data.get("needs_rephrasing") or ()]
    lines += [similar_line(data.get("similar") or [])] if data.get("similar") else []
    return "\n".join(lines)


def similar_line(similar: list[Mapping[str, Any]]) -> str:
    """``similar to: mem_a (0.82), mem_b (0.55)``."""
    shown = ", ".join(f"{s['memory_id']} ({to_fixed(s['score'], 2)})" for s in similar)
    return f"similar to: {shown}"


def curate_text(data: Data) -> str:
    """The line saying what a curator decision did."""
    target = data["memory_id"] or (data["target_memory_id"] if data["action"] == "delete" else None)
    shown = f" -> {target}" if target else ""
    return f"Applied {data['action']} to {data['proposal_id']}{shown}"


def undo_text(data: Data) -> str:
    """What ``undo`` did."""
    lines = [f"Undid the decision on {data['proposal_id']}."]
    if data["forgotten_memory_id"]:
        lines.append(f"Forgot {data['forgotten_memory_id']} (audited).")
    lines.append(f"Filed it again as {data['refiled_proposal_id']} ({data['refiled_status']}).")
    return "\n".join(lines)


def outcome_text(data: Data) -> str:
    """The line confirming a recorded outcome."""
    line = f"Recorded {data['outcome']} for {data['memory_id']} ({data['outcomes']} outcome(s))"
    if data.get("correction_proposal_id"):
        line += (
            f"\nFiled the correction as proposal {data['correction_proposal_id']} "
            "(update, pending a curator)."
        )
    elif data.get("correction_proposal_error"):
        line += f"\nThe correction was not proposed: {data['correction_proposal_error']}"
    return line


def verdict_text(data: Data) -> str:
    """A council verdict and the Q-value change of each memory it reached."""
    lines = [f"Verdict {data['verdict']} ({data['reward_key']}): {data['status']}"]
    if data["dropped_session_ids"]:
        lines.append("Dropped unknown session ids: " + ", ".join(data["dropped_session_ids"]))
    for update in data["updates"]:
        lines.append(
            f"- `{update['memory_id']}` {update['verdict']} "
            f"q {update['q_before']:.3f}→{update['q_after']:.3f}"
        )
    return "\n".join(lines)


def status_text(report: Data) -> str:
    """Markdown status like the reference ``/swarm memory status``."""
    lines = _heading("Swarm Memory Status") + _bullets(
        [
            ("Enabled", _code(report["enabled"])),
            ("Provider", _code(report["provider"])),
            ("Storage dir", _code(report["storage_dir"])),
            ("SQLite path", _code(report["sqlite_path"])),
            ("SQLite database exists", _code(report["sqlite_exists"])),
            ("Automatic destructive cleanup", _code("disabled")),
        ]
    )
    if "memory_count" in report:
        lines += _bullets(
            [
                ("Memories", report["memory_count"]),
                ("Pending proposals", report["pending_proposals"]),
            ]
        )
    lines += _embedding_lines(report.get("embeddings"))
    unreadable = report.get("unreadable_rows") or []
    if unreadable:
        first = ", ".join(
            str(r.get("id") or f"{r.get('file')} line {r.get('line')}") for r in unreadable[:5]
        )
        lines.append(
            f"- Warning: {_count(len(unreadable), 'stored row')} could not be read (every "
            f"command skips them; first: {first}); see `status --json`."
        )
    lines += _identity_lines(report.get("repository"))
    lines += ["", "### Legacy JSONL"]
    for name, info in report["legacy_jsonl"].items():
        state = "present" if info["present"] else "missing"
        lines.append(f"- {name}: `{state}` ({info['bytes']} bytes)")
    lines += ["", "### Migration"]
    migration = report.get("migration")
    if not migration:
        lines.append("- Last report: `none`")
        return "\n".join(lines)
    lines += _bullets(
        [
            ("Last report", _code(report["migration_report"])),
            ("Completed at", _code(migration.get("completedAt", "unknown"))),
            ("Imported memories", migration.get("importedMemories", 0)),
            ("Imported proposals", migration.get("importedProposals", 0)),
            ("Invalid rows", migration.get("invalidCount", 0)),
        ]
    )
    for backup in migration.get("backups", []):
        lines.append(f"- Backup: `{backup.get('path')}`")
    invalid = migration.get("invalidRows", [])
    for row in invalid[:20]:
        reason = row.get("reason") or row.get("error")
        lines.append(f"- {row.get('file')}:{row.get('line')} - {reason}")
    if len(invalid) > 20:
        lines.append(f"- ... {len(invalid) - 20} more")
    return "\n".join(lines)


def _identity_lines(repository: Data | None) -> list[str]:
    """The repository identity and the memories stored under other identities."""
    if not repository:
        return []
    lines = [
        f"- Repository id: `{repository['repository_id']}` "
        f"(from the {IDENTITY_SOURCES[repository['identity_kind']]})"
    ]
    others = repository["other_identities"]
    if others:
        lines += ["", "### Memories under other repository identities"]
        for other in others:
            root = f", last written from `{other['last_root']}`" if other["last_root"] else ""
            if other.get("same_folder"):
                root = ", written from this folder under an earlier identity"
            counts = _count(other["memories"], "memory")
            if other["pending_proposals"]:
                counts += f", {_count(other['pending_proposals'], 'pending proposal')}"
            lines.append(f"- `{other['repository_id']}`: {counts}{root}")
        lines.append(
            "- Not recalled here. If one is this repository before a rename or a remote "
            "change, adopt its memories with `swarmmem rescope --from ID`."
        )
    return lines


IDENTITY_SOURCES = {
    "projectId": "memory.projectId",
    "remote": "origin remote",
    "folder": "folder name and path",
}


def rls_text(data: Data) -> str:
    """The row-level security statements (as a SQL script), and whether they ran."""
    state = "applied" if data["applied"] else "not applied; run again with --apply"
    head = [
        f"-- row-level security for role {data['role']} in schema {data['schema']} ({state})",
        *(f"-- scope key: {key}" for key in data["scope_keys"]),
    ]
    return "\n".join([*head, *(f"{statement};" for statement in data["statements"])])


def rescope_text(data: Data) -> str:
    """What a rescope adopted, or would adopt."""
    head = (
        f"{data['from_repository_id']} -> {data['to_repository_id']}: "
        f"{_count(data['memories'], 'memory')}, "
        f"{_count(data['pending_proposals'], 'pending proposal')}"
    )
    if not data["applied"]:
        return f"Would adopt {head}. Nothing changed; run again with --yes to adopt."
    return (
        f"Adopted {head} ({data['adopted']} new here, {data['already_present']} already "
        "stored here); the old records are tombstoned with their replacement ids."
    )


# ---------------------------------------------------------------- memory management
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
            f"`swarmmem forget {data['memory_id']} --purge` erases it."
        )
    counts = data["scrubbed"]
    return (
        f"Purged {data['memory_id']}: the record is erased and its text scrubbed from "
        f"{_count(counts['proposals'], 'proposal')}, {_count(counts['outcomes'], 'outcome event')} "
        f"and {_count(counts['recallUsage'], 'recall usage row')}. The audit log records the purge "
        "by id and counts, without the text."
    )


# --------------------------------------------------------------- maintenance reports
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


def _embedding_lines(cov: Data | None) -> list[str]:
    """The embeddings part of ``status``: coverage, model version and what to run."""
    if not cov or not cov.get("enabled"):
        return [] if cov is None else ["- Embeddings: `off`"]
    if not cov.get("available"):
        return [f"- Embeddings: `on` but unavailable ({cov['reason']})"]
    lines = [
        f"- Embeddings: {cov['embedded']}/{cov['total']} memories embedded "
        f"(model {_code(cov['model_version'])})"
    ]
    ann = cov.get("ann_index")
    if ann:
        lines.append(
            f"- Vector index: {ann['kind']} m={ann['m']} ef_construction={ann['ef_construction']}"
            f" (configured m={ann['configured_m']} "
            f"ef_construction={ann['configured_ef_construction']})"
        )
    if cov["needs_rebuild"]:
        why = (
            f"{cov['missing']} memories have no vector"
            if cov["missing"]
            else f"vectors were made with {cov['stored_model_version']}"
            if cov["stored_model_version"] not in (None, cov["model_version"])
            else "the vector index was built with other options than configured"
        )
        lines.append(f"- Warning: {why}; run `swarmmem rebuild-embeddings`.")
    return lines


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


# ------------------------------------------------------------------- data commands
def evidence_json(document: Any, *, added: bool = False, with_text: bool = True) -> dict[str, Any]:
    """One evidence document (``added``: the result of ``evidence add``)."""
    data: dict[str, Any] = {
        "ref": document.ref,
        "source": document.source,
        "created_at": document.created_at,
        "bytes": len(document.text.encode("utf-8")),
    }
    if with_text:
        data["text"] = document.text
    return {"success": True, "added": True, **data} if added else data


def evidence_added_text(data: Data) -> str:
    """The ref to cite, and where the document came from."""
    return f"{data['ref']}\nStored {data['bytes']} bytes from {data['source']}; cite the ref above."


def evidence_text(data: Data) -> str:
    """A document with its ref and source."""
    return f"{data['ref']} (from {data['source']}, {data['created_at']})\n\n{data['text']}"


def evidence_list_text(data: Data) -> str:
    """One line per document, oldest first."""
    rows = data["documents"]
    if not rows:
        return "The evidence cache is empty."
    return "\n".join(
        f"{d['ref']}  {d['bytes']:>7} bytes  {d['created_at']}  {d['source']}" for d in rows
    )


def init_text(data: Data) -> str:
    """What ``init`` changed, as sentences (or that nothing needed to change)."""
    lines = list(data["actions"]) or ["Memory was already set up; nothing changed."]
    lines += data.get("notes") or []
    project = data["project_id"] or "none (the remote URL or folder name identifies the project)"
    lines.append(f"Project id: {project}.")
    lines.append(f"Project root: {data.get('project_root', '.')}.")
    return "\n".join(lines)


def grant_text(data: Data) -> str:
    """What ``grant`` changed."""
    state = "granted" if data["granted"] else "not granted"
    change = "" if data["changed"] else " (unchanged)"
    return (
        f"The {data['right']} role is {state} for {data['project_root']}{change}; "
        f"grants file: {data['grants_file']}."
    )


def export_text(data: Data) -> str:
    """The counts an export wrote and the files they went to."""
    target = Path(data["directory"])
    files = (
        ("Memories", "memories", "memories.jsonl"),
        ("Proposals", "proposals", "proposals.jsonl"),
        ("Outcomes", "outcomes", "outcome-events.jsonl"),
    )
    lines = _heading("Swarm Memory Export") + _bullets(
        (label, f"{data[key]} -> `{target / name}`") for label, key, name in files
    )
    unreadable = data.get("unreadable") or []
    if unreadable:
        lines += [
            "",
            f"Not exported: {_count(len(unreadable), 'row')} could not be read "
            f"({', '.join(map(str, unreadable[:20]))}).",
        ]
    return "\n".join(lines)


def import_text(data: Data) -> str:
    """What an import read, wrote and refused, as sentences (at most 20 refused rows listed)."""
    lines = [
        f"Imported {data['importedMemories']} memories, {data['importedProposals']} proposals "
        f"and {data['importedOutcomes']} outcome events from {data['directory']} "
        f"({_count(data['scannedRows'], 'row')} read).",
    ]
    refused = data["invalidRows"]
    if refused:
        lines.append(f"Refused {_count(data['invalidCount'], 'row')}:")
        lines.extend(f"- {row['file']} line {row['line']}: {row['reason']}" for row in refused[:20])
    return "\n".join(lines)


def migration_text(data: Data) -> str:
    """What a provider migration copied and whether the target checks out."""
    lines = _heading("Swarm Memory Migration")
    lines.append(f"- From `{data['source']}` to `{data['target']}` ({data['location']})")
    for table, rows in data["counts"].items():
        lines.append(f"- {table}: {rows} -> {data['target_counts'][table]}")
    chain = "verified" if data["audit_verified"] else "NOT verified"
    lines.append(f"- Audit chain on the target: {chain}")
    lines.append(f"- Counts verified: {'yes' if data['verified'] else 'NO'}")
    return "\n".join(lines)


def evaluation_text(report: Data) -> str:
    """Markdown summary like the reference ``/swarm memory evaluate``."""
    s = report["summary"]
    return _lines(
        _heading("Swarm Memory Recall Evaluation"),
        _bullets(
            [
                ("Fixtures", s["fixture_count"]),
                ("Runs", s["run_count"]),
                ("Passed runs", s["passed_run_count"]),
                ("Precision@k", f"{s['precision@k']:.3f}"),
                ("Recall@k", f"{s['recall@k']:.3f}"),
                ("Injection count", s["injection_count"]),
                ("Noisy injections", s["noisy_injection_count"]),
                ("Same-scope noise", s["same_scope_noise_count"]),
                ("Cross-scope leaks", s["cross_scope_leak_count"]),
                ("Stale memories", s["stale_memory_count"]),
            ]
        ),
        ["", "Use `swarmmem evaluate --json` for the full report."],
    )


def profiles_text(report: Data) -> str:
    """The evaluation summary, then one line per recall profile."""
    lines = [evaluation_text(report), "", "### Profiles"]
    for name, summary in report["profile_summaries"].items():
        lines.append(
            f"- {name}: passed {summary['passed_run_count']}/{summary['run_count']}, "
            f"precision@k {summary['precision@k']:.3f}, recall@k {summary['recall@k']:.3f}"
        )
    return "\n".join(lines)


def gate_text(result: Data, label: str) -> str:
    """``<label> gate passed``, or FAILED with the problems found."""
    if result["passed"]:
        return f"{label} gate passed"
    return f"{label} gate FAILED:\n" + "\n".join(result["problems"])


def dataset_text(report: Data) -> str:
    """The per-profile table of a dataset run."""
    lines = [
        f"documents: {report['documents']}, queries: {report['queries']}, k: {report['k']}",
        "",
        "| profile | Recall@k | nDCG@10 | MRR | ms/query |",
        "|---|---|---|---|---|",
    ]
    for name, row in report["profiles"].items():
        lines.append(
            f"| {name} | {row['recall@k']:.3f} | {row['ndcg@10']:.3f} | "
            f"{row['mrr']:.3f} | {row['mean_latency_ms']:.2f} |"
        )
    return "\n".join(lines)


# ------------------------------------------------------------------------- review
REVIEW_COUNTS = ("approved", "rejected", "merged", "skipped", "undone")
"""The decision counts a ``review`` session reports."""

REVIEW_KEYS = (
    ("a", "approve: apply the proposal's operation (add, update, merge, ...)"),
    ("e", "edit: give a new text and/or kind (Enter keeps each), then approve"),
    ("r", "reject, with an optional reason"),
    ("m", "merge into a similar memory: reject it as already said by that memory"),
    ("s", "skip: leave it pending and move on"),
    ("u", "undo the last decision of this session (the proposal is re-filed)"),
    ("q", "quit"),
    ("?", "this help"),
)


def review_proposal_text(entry: Data, left: int) -> str:
    """One pending proposal as the review queue shows it (``entry``: a ``pending --json``
    entry whose similar memories and target carry their ``text`` and ``state``)."""
    kind = f"  {entry['kind']}" if entry.get("kind") else ""
    lines = ["", f"== {entry['id']}  {entry['operation']}{kind}  ({_count(left, 'proposal')} left)"]
    if entry.get("text"):
        lines.append(f"Text: {entry['text']}")
    target = entry.get("target_memory")
    if target:
        shown = f": {_clip(target['text'], 100)}" if target.get("text") else ""
        lines.append(f"Target: {target['memory_id']} ({target['state']}){shown}")
    if entry.get("related_memory_ids"):
        lines.append(f"Related: {', '.join(entry['related_memory_ids'])}")
    lines.append(f"Rationale: {entry['rationale']}")
    if entry.get("evidence_refs"):
        status = f" ({entry['evidence_status']})" if entry.get("evidence_status") else ""
        lines.append(f"Evidence: {', '.join(entry['evidence_refs'])}{status}")
    lines.append(f"Proposed by {proposer_text(entry['proposed_by'])}, {ago(entry['age'])}")
    lines += [f"Needs rephrasing: {note}" for note in entry.get("needs_rephrasing") or ()]
    if entry.get("similar"):
        lines.append("Similar memories:")
        for n, item in enumerate(entry["similar"], 1):
            text = f" {_clip(item['text'], 100)}" if item.get("text") else ""
            score = to_fixed(item["score"], 2) if item.get("score") is not None else "?"
            lines.append(f"  {n}. {item['memory_id']} ({score}, {item['state']}){text}")
    return "\n".join(lines)


def review_prompt(entry: Data) -> str:
    """The key prompt under a proposal (``m`` only when it has similar memories)."""
    merge = " [m]erge" if entry.get("similar") else ""
    return f"[a]pprove [e]dit [r]eject{merge} [s]kip [u]ndo [q]uit [?]help > "


def review_help_text() -> str:
    """What each review key does."""
    return "\n".join(f"  {key}  {what}" for key, what in REVIEW_KEYS)


REVIEW_DONE_PROMPT = "[u]ndo the last decision, any other key to finish > "
"""The prompt once the queue has run out after decisions of the session."""


def review_empty_text(reviewed: bool) -> str:
    """The line when the queue has run out."""
    return "No more pending proposals to review." if reviewed else "No pending proposals to review."


def review_summary_text(data: Data) -> str:
    """The counts of a review session and how many proposals are still pending."""
    counts = ", ".join(f"{data[name]} {name}" for name in REVIEW_COUNTS)
    return f"Review finished: {counts}; {_count(data['pending'], 'proposal')} still pending."


def review_batch_text(data: Data) -> str:
    """What ``review --approve-all/--reject-all`` would decide, or decided and failed."""
    verb = data["action"]
    past = {"approve": "Approved", "reject": "Rejected"}[verb]
    if not data["matched"]:
        return "No pending proposals match."
    if data["dry_run"]:
        lines = [f"Would {verb} {_count(data['matched'], 'pending proposal')}:"]
        for p in data["proposals"]:
            by = proposer_text(p["proposed_by"])
            kind = f" {p['kind']}" if p["kind"] else ""
            text = f": {_clip(p['text'], 80)}" if p["text"] else ""
            lines.append(
                f"- {p['proposal_id']} {p['operation']}{kind} ({by}, {ago(p['age'])}){text}"
            )
        lines.append(f"Nothing changed; add --yes to {verb} them.")
        return "\n".join(lines)
    lines = [f"{past} {len(data['decided'])} of {_count(data['matched'], 'matching proposal')}:"]
    for d in data["decided"]:
        written = f" -> {d['memory_id']}" if d.get("memory_id") else ""
        lines.append(f"- {d['proposal_id']} {d['decision']}{written}")
    if data["failed"]:
        lines.append(f"Failed {len(data['failed'])}:")
        lines += [f"- {f['proposal_id']}: {f['error']}" for f in data["failed"]]
    return "\n".join(lines)


def verify_text(data: Data) -> str:
    """What ``verify`` found (and the proposals it filed)."""
    lines = _heading("Swarm Memory Evidence Check")
    lines.append(
        f"- Memories with fingerprinted evidence: {data['checked']}; changed: "
        f"{data['changed_count']}; gone: {data['missing_count']}"
    )
    for entry in [*data["changed"], *data["missing"]]:
        files = ", ".join(entry["files"])
        lines.append(f"- `{entry['id']}` {entry['status']} ({files}) - {entry['text']}")
    for prop in data.get("proposals") or ():
        lines.append(
            f"- Filed {prop['operation']} proposal {prop['proposal_id']} for {prop['memory_id']}"
        )
    if (data["changed_count"] or data["missing_count"]) and not data.get("proposals"):
        lines.append("Run `swarmmem verify --propose` to file proposals for the curator.")
    return "\n".join(lines)


def consolidate_text(data: Data) -> str:
    """The proposals ``consolidate`` filed."""
    lines = _heading("Swarm Memory Consolidation")
    lines.append(
        f"- Filed {data['merge_count']} merge and {data['supersede_count']} supersede "
        "proposal(s) for the curator"
    )
    for prop in data["proposals"]:
        lines.append(f"- `{prop['proposal_id']}` {prop['operation']}: {prop['rationale']}")
    return "\n".join(lines)

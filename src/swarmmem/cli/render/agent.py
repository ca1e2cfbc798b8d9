"""Renderings of the agent commands: recall, propose, curate, undo, outcome, verdict,
status, identity."""

from __future__ import annotations

from typing import Any

from swarmmem.cli.render._common import (
    Data,
    _bullets,
    _code,
    _count,
    _embedding_lines,
    _heading,
    similar_line,
)


def recall_text(data: Data) -> str:
    """A recall result as the prompt block an agent would see (or why there is none)."""
    return str(data["prompt_block"] or data.get("message") or "")


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

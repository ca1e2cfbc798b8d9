"""Renderings of the data commands: evidence, init, grants, export, import, migrate,
evaluate, dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from swarmmem.cli.render._common import Data, _bullets, _count, _heading, _lines


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
    note = f"\nnote: {data['note']}" if data.get("note") else ""
    return (
        f"The {data['right']} role is {state} for {data['project_root']}{change}; "
        f"grants file: {data['grants_file']}.{note}"
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
        lines.append(
            f"Refused {data['invalidCount']} of {_count(data['scannedRows'], 'row')}; why:"
        )
        lines.extend(f"- {r['count']} x {r['reason']}" for r in data.get("refusedReasons") or ())
        lines.append("The first refused rows:")
        lines.extend(f"- {row['file']} line {row['line']}: {row['reason']}" for row in refused[:20])
    if data.get("hint"):
        lines.append(str(data["hint"]))
    return "\n".join(lines)


def worktree_merge_text(data: Data) -> str:
    """What ``migrate --worktrees`` merged from each linked worktree's own store."""
    lines = _heading("Swarm Memory Worktree Merge")
    lines.append(f"- Main worktree: {data['main_worktree']}")
    if not data["stores"]:
        lines.append("- No linked worktree keeps a store of its own: nothing to merge.")
    for entry in data["stores"]:
        counts = (
            f"{entry['importedMemories']} memories, {entry['importedProposals']} proposals, "
            f"{entry['importedOutcomes']} outcome events"
        )
        if entry["merged"]:
            lines.append(
                f"- {entry['worktree']}: merged {counts}; its store is now memory.db.merged"
            )
        else:
            reasons = "; ".join(
                f"{row['file']} line {row['line']}: {row['reason']}"
                for row in entry["invalidRows"][:3]
            )
            lines.append(
                f"- {entry['worktree']}: imported {counts}, refused {entry['invalidCount']} "
                f"row(s) ({reasons}); its store is left in place"
            )
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

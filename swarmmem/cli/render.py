"""JSON and text renderings shared by the CLI and the MCP server."""

from __future__ import annotations

import json
from typing import Any

from swarmmem.core.model.codec import proposal_to_dict, record_to_dict
from swarmmem.core.model.records import MemoryProposal, RecallBundle


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


def proposal_json(proposal: MemoryProposal) -> dict[str, Any]:
    """The tool-style JSON result of a proposal."""
    return {
        "success": proposal.status != "rejected",
        "proposal_id": proposal.id,
        "status": proposal.status,
        "operation": proposal.operation,
        "memory_id": proposal.proposed_record.id if proposal.proposed_record else None,
        "rejection_reason": proposal.rejection_reason,
        "proposal": proposal_to_dict(proposal),
    }


def status_report(mem: Any) -> dict[str, Any]:
    """Enabled flag, provider, paths and legacy/migration files."""
    storage = mem.storage_dir
    db = mem.runtime.path(mem.config["sqlite"]["path"])
    legacy = {}
    for name in ("memories.jsonl", "proposals.jsonl", "outcome-events.jsonl"):
        path = storage / name
        legacy[name] = {
            "present": path.exists(),
            "bytes": path.stat().st_size if path.exists() else 0,
        }
    report_path = storage / "migration-report.json"
    migration: dict[str, Any] | None = None
    if report_path.exists():
        try:
            loaded = json.loads(report_path.read_text(encoding="utf-8"))
            migration = loaded if isinstance(loaded, dict) else None
        except (OSError, ValueError):
            migration = {"error": "migration-report.json is unreadable"}
    report: dict[str, Any] = {
        "enabled": mem.enabled,
        "provider": mem.config["provider"],
        "storage_dir": str(storage),
        "sqlite_path": str(db),
        "sqlite_exists": db.exists(),
        "automatic_destructive_cleanup": "disabled",
        "legacy_jsonl": legacy,
        "migration_report": str(report_path) if report_path.exists() else None,
        "migration": migration,
    }
    if mem.enabled and (mem.config["provider"] != "sqlite" or db.exists()):
        report["memory_count"] = mem.store.count()
        report["pending_proposals"] = len(mem.store.list_proposals("pending"))
    return report


def status_text(report: dict[str, Any]) -> str:
    """Markdown status like the reference ``/swarm memory status``."""
    lines = [
        "## Swarm Memory Status",
        "",
        f"- Enabled: `{str(report['enabled']).lower()}`",
        f"- Provider: `{report['provider']}`",
        f"- Storage dir: `{report['storage_dir']}`",
        f"- SQLite path: `{report['sqlite_path']}`",
        f"- SQLite database exists: `{str(report['sqlite_exists']).lower()}`",
        "- Automatic destructive cleanup: `disabled`",
    ]
    if "memory_count" in report:
        lines.append(f"- Memories: {report['memory_count']}")
        lines.append(f"- Pending proposals: {report['pending_proposals']}")
    lines += ["", "### Legacy JSONL"]
    for name, info in report["legacy_jsonl"].items():
        state = "present" if info["present"] else "missing"
        lines.append(f"- {name}: `{state}` ({info['bytes']} bytes)")
    lines += ["", "### Migration"]
    migration = report.get("migration")
    if not migration:
        lines.append("- Last report: `none`")
        return "\n".join(lines)
    lines += [
        f"- Last report: `{report['migration_report']}`",
        f"- Completed at: `{migration.get('completedAt', 'unknown')}`",
        f"- Imported memories: {migration.get('importedMemories', 0)}",
        f"- Imported proposals: {migration.get('importedProposals', 0)}",
        f"- Invalid rows: {migration.get('invalidCount', 0)}",
    ]
    for backup in migration.get("backups", []):
        lines.append(f"- Backup: `{backup.get('path')}`")
    invalid = migration.get("invalidRows", [])
    for row in invalid[:20]:
        reason = row.get("reason") or row.get("error")
        lines.append(f"- {row.get('file')}:{row.get('line')} - {reason}")
    if len(invalid) > 20:
        lines.append(f"- ... {len(invalid) - 20} more")
    return "\n".join(lines)


def evaluation_text(report: dict[str, Any]) -> str:
    """Markdown summary like the reference ``/swarm memory evaluate``."""
    s = report["summary"]
    return "\n".join(
        [
            "## Swarm Memory Recall Evaluation",
            "",
            f"- Fixtures: {s['fixture_count']}",
            f"- Runs: {s['run_count']}",
            f"- Passed runs: {s['passed_run_count']}",
            f"- Precision@k: {s['precision@k']:.3f}",
            f"- Recall@k: {s['recall@k']:.3f}",
            f"- Injection count: {s['injection_count']}",
            f"- Noisy injections: {s['noisy_injection_count']}",
            f"- Same-scope noise: {s['same_scope_noise_count']}",
            f"- Cross-scope leaks: {s['cross_scope_leak_count']}",
            f"- Stale memories: {s['stale_memory_count']}",
            "",
            "Use `swarmmem evaluate --json` for the full report.",
        ]
    )


def record_json(record: Any) -> dict[str, Any]:
    """A record in the reference JSON shape."""
    return record_to_dict(record)

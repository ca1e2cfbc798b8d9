"""Dataset benchmark and embedding-index commands (registered by ``swarmmem.cli.main``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from swarmmem.cli.main import State, command, emit, progress_bar


@click.command("dataset")
@click.option("--corpus", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--queries", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--qrels", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--profiles",
    default="lexical",
    show_default=True,
    help="Comma list of lexical,hybrid,hybrid+rerank.",
)
@click.option(
    "-k", "k", default=10, show_default=True, type=int, help="Cut-off for Recall@k and MRR."
)
@click.option("--limit-queries", type=int, default=None)
@command
def dataset(
    state: State,
    corpus: str,
    queries: str,
    qrels: str,
    profiles: str,
    k: int,
    limit_queries: int | None,
) -> None:
    """Retrieval quality (Recall@k, nDCG@10, MRR) of each profile on a collection."""
    from swarmmem.datasets import run_dataset

    wanted = [p.strip() for p in profiles.split(",") if p.strip()]
    with progress_bar("queries", not state.as_json) as progress:
        report = run_dataset(
            Path(corpus),
            Path(queries),
            Path(qrels),
            profiles=wanted,
            k=k,
            limit_queries=limit_queries,
            progress=progress,
        )

    def text() -> str:
        lines = [
            f"documents: {report['documents']}, queries: {report['queries']}, k: {k}",
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

    emit(state, report, text)


@click.command("rebuild-embeddings")
@command
def rebuild_embeddings(state: State) -> None:
    """Re-embed every durable memory; the model version advances only if all succeed."""
    with state.open() as mem, progress_bar("embedding", not state.as_json) as progress:
        result = mem.rebuild_embedding_index(progress=progress)
    emit(
        state,
        result,
        lambda: (
            f"Re-embedded {result['rebuilt']} memories ({result['failed']} failed); "
            f"model version {'advanced' if result['advanced'] else 'unchanged'}"
            + (f" - {result['reason']}" if result.get("reason") else "")
        ),
    )


@click.command("audit-verify")
@command
def audit_verify(state: State) -> None:
    """Verify the tamper-evident hash chain of the audit log (SQLite provider)."""
    import sys

    with state.open() as mem:
        store = mem.store
        verify = getattr(store, "verify_audit_chain", None)
        if verify is None:
            report = {
                "supported": False,
                "verified": None,
                "provider": store.name,
                "message": f"the {store.name} provider keeps no hash-chained audit log; "
                "only the sqlite provider supports audit-verify",
            }
        else:
            report = {"provider": store.name, **verify()}
    emit(state, report, lambda: audit_text(report))
    if report.get("supported") and not report.get("verified"):
        sys.exit(1)


def audit_text(report: dict[str, Any]) -> str:
    """Markdown rendering of an audit verification report."""
    lines = ["## Swarm Memory Audit Verification", ""]
    if not report.get("supported"):
        return "\n".join([*lines, f"- Verified: `n/a` ({report['message']})"])
    head = report.get("headMatch")
    lines += [
        f"- Verified: `{str(bool(report.get('verified'))).lower()}`",
        f"- Event rows: {report['totalRows']} (chained: {report['chainedRows']}, "
        f"pre-chain legacy: {report['legacyRows']})",
        f"- Chain head: `{'n/a' if head is None else str(head).lower()}`",
    ]
    if report.get("divergence"):
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


@click.command("export")
@click.option("--dir", "directory", default=None, help="Parent of the export/ folder.")
@command
def export_command(state: State, directory: str | None) -> None:
    """Write every memory, proposal and outcome to export/*.jsonl (atomic)."""
    from swarmmem.adapters.storage.export_import import export_store

    with state.open() as mem:
        mem.require_enabled()
        parent = Path(directory) if directory else mem.storage_dir
        counts = export_store(mem.store, parent)
    target = parent / "export"
    data = {"success": True, "directory": str(target), **counts}
    emit(
        state,
        data,
        lambda: "\n".join(
            [
                "## Swarm Memory Export",
                "",
                f"- Memories: {counts['memories']} -> `{target / 'memories.jsonl'}`",
                f"- Proposals: {counts['proposals']} -> `{target / 'proposals.jsonl'}`",
                f"- Outcomes: {counts['outcomes']} -> `{target / 'outcome-events.jsonl'}`",
            ]
        ),
    )


@click.command("import")
@click.option("--dir", "directory", default=None, help="Folder holding memories.jsonl etc.")
@command
def import_command(state: State, directory: str | None) -> None:
    """Import memories.jsonl / proposals.jsonl / outcome-events.jsonl (last row wins per id)."""
    from swarmmem.adapters.storage.export_import import import_jsonl

    with state.open() as mem:
        mem.require_enabled()
        source = Path(directory) if directory else mem.storage_dir
        with progress_bar("importing", not state.as_json):
            report = import_jsonl(mem.store, source)
    emit(state, {"success": True, "directory": str(source), **report}, lambda: _import_text(report))


def _import_text(report: dict[str, Any]) -> str:
    lines = ["## Swarm Memory Import", ""]
    for key, value in report.items():
        if isinstance(value, list):
            lines.append(f"- {key.replace('_', ' ').capitalize()}: {len(value)}")
            lines.extend(f"  - {row}" for row in value[:20])
        else:
            lines.append(f"- {key.replace('_', ' ').capitalize()}: {value}")
    return "\n".join(lines)


COMMANDS: list[click.Command] = [
    dataset,
    rebuild_embeddings,
    audit_verify,
    export_command,
    import_command,
]

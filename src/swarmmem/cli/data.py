"""Data in and out, and retrieval quality: export, import, evaluate, dataset."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from swarmmem import datasets, evaluation
from swarmmem import heldout as heldout_corpus
from swarmmem.cli import render
from swarmmem.cli.app import (
    State,
    comma_list,
    command,
    emit,
    flag,
    main,
    profiles_option,
    progress_bar,
)
from swarmmem.core.evaluation.metrics import PROVIDERS
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.recall.pipeline import PROFILES
from swarmmem.registry import stores_that

EVALUATION_PROVIDERS = (
    *PROVIDERS,
    *(name for name in stores_that(lambda t: not t.needs_server) if name not in PROVIDERS),
)
"""The stores ``evaluate --provider`` accepts: the default ones first, then every other
registered store that a run can create in a temporary folder (not postgres: it needs a server)."""


IMPORT_FILES = ("memories.jsonl", "proposals.jsonl", "outcome-events.jsonl")
"""The files ``import`` reads from its folder."""


@contextmanager
def _folder_of(state: State, directory: str | None) -> Iterator[tuple[Any, Path]]:
    """The project's store (memory must be enabled) and the ``--dir`` folder (default: the
    storage directory)."""
    with state.open() as mem:
        mem.require_enabled()
        yield mem, Path(directory) if directory else mem.storage_dir


@main.command("export")
@click.option("--dir", "directory", default=None, help="Parent of the export/ folder.")
@flag("--overwrite", "Replace an existing export.")
@command
def export_command(state: State, directory: str | None, overwrite: bool) -> None:
    """Write every memory, proposal and outcome to export/*.jsonl (atomic)."""
    with _folder_of(state, directory) as (mem, parent):
        existing = parent / "export"
        if not overwrite and existing.is_dir() and any(existing.iterdir()):
            raise MemoryValidationError(
                f"an export already exists in {existing}; pass --overwrite to replace it"
            )
        counts = mem.export_jsonl(parent)
        unreadable = counts.pop("unreadable")
    ok = not unreadable
    data = {"success": ok, "directory": str(parent / "export"), **counts}
    if unreadable:
        data["unreadable"] = unreadable
    emit(state, data, render.export_text, ok=ok)


@main.command("import")
@click.option(
    "--dir",
    "directory",
    default=None,
    help="Folder holding memories.jsonl etc., or the folder `export --dir` was given.",
)
@command
def import_command(state: State, directory: str | None) -> None:
    """Import memories.jsonl / proposals.jsonl / outcome-events.jsonl (last row wins per id).

    ``--dir D`` means the folder ``export --dir D`` wrote to: the files in ``D``, else in
    ``D/export``. Rows of another repository (scopes outside this context's) are refused and
    listed. Exits 2 when the folder holds none of them, 1 when rows were read but none was
    valid."""
    with _folder_of(state, directory) as (mem, source):
        if not _holds_export(source) and _holds_export(source / "export"):
            source = source / "export"
        present = [name for name in IMPORT_FILES if (source / name).is_file()]
        if not present:
            raise MemoryValidationError(
                f"import --dir {source}: no {', '.join(IMPORT_FILES)} in that folder"
            )
        with progress_bar("importing memories", state) as progress:
            report = mem.import_jsonl(source, progress=progress)
    imported = sum(report[k] for k in ("importedMemories", "importedProposals", "importedOutcomes"))
    ok = imported > 0 or report["invalidCount"] == 0
    data = {"success": ok, "directory": str(source), **report, **refusal_summary(report)}
    emit(state, data, render.import_text, ok=ok)


def _holds_export(folder: Path) -> bool:
    """True when ``folder`` holds one of the files ``import`` reads."""
    return any((folder / name).is_file() for name in IMPORT_FILES)


#: what a row of another repository's scope is refused with (the exporter's own words)
OTHER_REPOSITORY = "outside the importing repository's scopes"


def refusal_summary(report: dict[str, Any]) -> dict[str, Any]:
    """How many rows an import refused and why (``refusedReasons``: each reason with its
    count, most frequent first), ``partial`` when some were imported and some refused, and
    a ``hint`` when rows of another repository were refused."""
    rows = report.get("invalidRows") or []
    reasons = Counter(str(row.get("reason", "")) for row in rows)
    out: dict[str, Any] = {
        "partial": bool(rows) and report["scannedRows"] > report["invalidCount"],
        "refusedReasons": [{"reason": r, "count": n} for r, n in reasons.most_common()],
    }
    foreign = sum(n for reason, n in reasons.items() if OTHER_REPOSITORY in reason)
    if foreign:
        out["hint"] = (
            f"{foreign} refused row(s) belong to another repository identity. If they come from "
            "a checkout of this same project (a teammate's clone), give this checkout that "
            "checkout's memory.projectId (shown by `swarmmem status` there) and import again; "
            "rows of another project are never imported."
        )
    return out


@main.command()
@click.option(
    "--fixtures", "fixtures_dir", default=None, help="Fixture directory (inside the project)."
)
@click.option("--provider", "providers", multiple=True, type=click.Choice(EVALUATION_PROVIDERS))
@flag("--gate", "Run twice and compare with the pinned baseline.")
@click.option("--baseline", default=None, help="Baseline JSON for --gate.")
@flag("--update", "With --gate: rewrite the baseline.")
@profiles_option(PROFILES, default=None)
@click.option(
    "--manifest",
    default=None,
    help="Held-out manifest.json (inside the project) to evaluate instead of fixtures.",
)
@command
def evaluate(
    state: State,
    fixtures_dir: str | None,
    providers: tuple[str, ...],
    gate: bool,
    baseline: str | None,
    update: bool,
    profiles: str | None,
    manifest: str | None,
) -> None:
    """Evaluate recall quality on golden fixtures (or a held-out corpus with --manifest)."""
    from swarmmem import fixtures as bundled

    root = state.root.resolve()
    heldout = manifest is not None
    if heldout and fixtures_dir is not None:
        raise click.UsageError("--manifest and --fixtures cannot be combined")
    if gate:
        if heldout:
            result = heldout_corpus.heldout_gate(
                project_root=root,
                manifest_path=manifest,
                baseline_path=Path(baseline) if baseline else None,
                profiles=comma_list(profiles) if profiles else None,
                update=update,
            )
        else:
            result = evaluation.regression_gate(
                project_root=root,
                baseline_path=Path(baseline) if baseline else bundled.RECALL_BASELINE,
                fixtures_dir=fixtures_dir,
                update=update,
            )
        label = "Held-out" if heldout else "Regression"
        text = functools.partial(render.gate_text, label=label)
        emit(state, result, text, ok=bool(result["passed"]))
        return
    with progress_bar("evaluating", state) as progress:
        if heldout:
            report = heldout_corpus.evaluate_heldout(
                root,
                manifest,
                (comma_list(profiles) if profiles else None) or heldout_corpus.HELDOUT_PROFILES,
                providers=providers or heldout_corpus.HELDOUT_PROVIDERS,
                progress=progress,
            )
        elif profiles:
            report = evaluation.evaluate_profiles(
                project_root=root,
                profiles=comma_list(profiles),
                fixtures_dir=fixtures_dir,
                providers=providers or PROVIDERS,
                progress=progress,
            )
        else:
            report = evaluation.evaluate(
                project_root=root,
                fixtures_dir=fixtures_dir,
                providers=providers or PROVIDERS,
                progress=progress,
            )
    emit(state, report, render.profiles_text if heldout or profiles else render.evaluation_text)


@main.command("dataset")
@click.option(
    "--corpus",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help='JSONL, one {"id", "text"} per line ("title", "kind", "files", "symbol" optional; '
    '"written", an ISO 8601 time, on every row or none: undated rows are spread over 90 days '
    "in file order).",
)
@click.option(
    "--queries",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help='JSONL, one {"id", "text"} per line ("asked", an ISO 8601 time, optional: when the '
    "question is asked; a dated corpus is aged up to the latest).",
)
@click.option(
    "--qrels",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="TSV: query-id, corpus-id, relevance (a header line is skipped).",
)
@profiles_option(PROFILES, default="lexical", show_default=True)
@click.option(
    "-k", "k", default=10, show_default=True, type=int, help="Cut-off for Recall@k and MRR."
)
@click.option(
    "--limit-queries", type=int, default=None, help="Score only the first N judged queries."
)
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
    """Retrieval quality (Recall@k, nDCG@10, MRR) of each profile on a collection.

    The corpus is loaded into a temporary store (nothing is kept or downloaded) and every
    query with judgements is asked of each profile, next to floors ranked on the same
    documents: bare FTS5 BM25, porter-stemmed BM25 and, with a dense profile, the cosine
    nearest neighbours. Needs the eval extra (scikit-learn)."""
    with progress_bar("queries", state) as progress:
        report = datasets.run_dataset(
            Path(corpus),
            Path(queries),
            Path(qrels),
            profiles=comma_list(profiles),
            k=k,
            limit_queries=limit_queries,
            progress=progress,
        )
    emit(state, report, render.dataset_text)

"""The ``swarmmem`` command line.

Every command accepts ``--json`` for stable machine-readable output. Exit codes: 0 success,
1 failure (including disabled memory), 2 bad input (unknown flags, invalid values, refused
scopes, malformed JSON).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from swarmmem._version import __version__
from swarmmem.core.model.errors import (
    ConfigError,
    ConflictError,
    EvaluationError,
    MemoryDisabledError,
    MemoryValidationError,
    NotFoundError,
    ScopeError,
    SwarmMemoryError,
)
from swarmmem.memory import DISABLED_MESSAGE

BAD_INPUT = (
    ConfigError,
    MemoryValidationError,
    ScopeError,
    EvaluationError,
    NotFoundError,
    ConflictError,
)


class State:
    """Options shared by every command."""

    def __init__(
        self, root: str, config: str | None, as_json: bool, context: dict[str, str]
    ) -> None:
        self.root = Path(root)
        self.config = config
        self.as_json = as_json
        self.context = context

    def open(self) -> Any:
        import swarmmem

        return swarmmem.open(self.root, self.config, context=self.context)


def emit(state: State, data: Any, text: str | Callable[[], str]) -> None:
    """Print ``data`` as JSON in ``--json`` mode, else the text form."""
    if state.as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    else:
        click.echo(text() if callable(text) else text)


def command(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--json`` and uniform error handling to a command."""

    def wrapper(state: State, /, *args: Any, as_json: bool = False, **kwargs: Any) -> Any:
        if as_json:
            state.as_json = True
        try:
            return fn(state, *args, **kwargs)
        except MemoryDisabledError as exc:
            _fail(state, {"success": False, "disabled": True, "message": str(exc)}, 1)
        except BAD_INPUT as exc:
            _fail(state, {"success": False, "error": exc.code, "message": str(exc)}, 2)
        except SwarmMemoryError as exc:
            _fail(state, {"success": False, "error": exc.code, "message": str(exc)}, 1)

    functools.update_wrapper(wrapper, fn)
    json_option = click.option(
        "--json", "as_json", is_flag=True, help="Machine-readable JSON output."
    )
    return json_option(click.pass_obj(wrapper))


def _fail(state: State, payload: dict[str, Any], code: int) -> None:
    if state.as_json:
        click.echo(json.dumps(payload, indent=2))
    else:
        click.echo(f"Error: {payload['message']}", err=True)
    sys.exit(code)


@contextmanager
def progress_bar(label: str, enabled: bool = True) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on a terminal; silent when stderr is piped."""
    if not enabled or not sys.stderr.isatty():
        yield lambda done, total: None
        return
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="swarmmem")
@click.option("--root", default=".", show_default=True, help="Project root.")
@click.option(
    "--config", default=None, help="Config JSON (default: <root>/.opencode/opencode-swarm.json)."
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")
@click.option("--session", default=None, help="Session id (run scope).")
@click.option("--run", "run_id", default=None, help="Run id (defaults to the session id).")
@click.option("--role", default=None, help="Agent role of the caller.")
@click.pass_context
def main(
    ctx: click.Context,
    root: str,
    config: str | None,
    as_json: bool,
    session: str | None,
    run_id: str | None,
    role: str | None,
) -> None:
    """Scoped, source-backed memory for AI coding agents."""
    context = {
        k: v for k, v in {"session_id": session, "run_id": run_id, "agent_role": role}.items() if v
    }
    ctx.obj = State(root, config, as_json, context)


@main.command()
@command
def status(state: State) -> None:
    """Storage, configuration and migration status."""
    from swarmmem.cli.render import status_report, status_text

    with state.open() as mem:
        report = status_report(mem)
    emit(state, report, lambda: status_text(report))


@main.command()
@click.argument("query")
@click.option("--task", default=None, help="Task description (adds task-term signal).")
@click.option("--kind", "kinds", multiple=True, help="Restrict to a memory kind (repeatable).")
@click.option("--max-items", type=int, default=None)
@click.option("--token-budget", type=int, default=None)
@click.option("--mode", type=click.Choice(["manual", "injection", "curator"]), default="manual")
@command
def recall(
    state: State,
    query: str,
    task: str | None,
    kinds: tuple[str, ...],
    max_items: int | None,
    token_budget: int | None,
    mode: str,
) -> None:
    """Recall memories for QUERY and print the prompt block."""
    from swarmmem.cli.render import bundle_json

    with state.open() as mem:
        bundle = mem.recall(
            query,
            task=task,
            kinds=list(kinds) or None,
            max_items=max_items,
            token_budget=token_budget,
            mode=mode,
        )
    emit(state, bundle_json(bundle), bundle.prompt_block)


@main.command()
@click.option(
    "--operation",
    default="add",
    show_default=True,
    type=click.Choice(["add", "update", "delete", "ignore", "merge", "supersede"]),
)
@click.option("--kind", default=None)
@click.option("--text", default=None)
@click.option("--rationale", required=True)
@click.option("--evidence", "evidence_refs", multiple=True, help="Evidence ref (repeatable).")
@click.option("--target", "target_memory_id", default=None)
@click.option("--related", "related_memory_ids", multiple=True)
@command
def propose(
    state: State,
    operation: str,
    kind: str | None,
    text: str | None,
    rationale: str,
    evidence_refs: tuple[str, ...],
    target_memory_id: str | None,
    related_memory_ids: tuple[str, ...],
) -> None:
    """Create a pending memory proposal (never writes durable memory)."""
    from swarmmem.cli.render import proposal_json

    with state.open() as mem:
        prop = mem.propose(
            operation=operation,
            kind=kind,
            text=text,
            rationale=rationale,
            evidence_refs=list(evidence_refs),
            target_memory_id=target_memory_id,
            related_memory_ids=list(related_memory_ids) or None,
        )
    data = proposal_json(prop)
    message = (
        "Memory proposal created. Durable memory was not written."
        if prop.status != "rejected"
        else "Memory proposal was captured with policy rejection metadata."
    )
    data["message"] = message
    emit(
        state,
        data,
        lambda: (
            f"{message}\nproposal_id: {prop.id}\nstatus: {prop.status}"
            + (f"\nrejection_reason: {prop.rejection_reason}" if prop.rejection_reason else "")
        ),
    )
    if prop.status == "rejected":
        sys.exit(1)


@main.command()
@click.argument("proposal_id")
@click.argument(
    "decision", type=click.Choice(["add", "update", "merge", "supersede", "reject", "noop"])
)
@click.option("--reason", default=None)
@command
def curate(state: State, proposal_id: str, decision: str, reason: str | None) -> None:
    """Apply a curator DECISION to PROPOSAL_ID (for trusted reviewers, not agents)."""
    with state.open() as mem:
        change = mem.curate(proposal_id, decision, reason=reason)
    import attrs

    data = {"success": True, **attrs.asdict(change)}
    emit(
        state,
        data,
        lambda: (
            f"Applied {change.action} to {proposal_id}"
            + (f" -> {change.memory_id}" if change.memory_id else "")
        ),
    )


@main.command()
@click.option("--memory-id", default=None)
@click.option("--question", default=None)
@click.option("--outcome", required=True, type=click.Choice(["useful", "dead_end", "corrected"]))
@click.option("--correction", default=None)
@click.option("--anchor", "anchors", multiple=True, help="file[#symbol] (repeatable).")
@command
def outcome(
    state: State,
    memory_id: str | None,
    question: str | None,
    outcome: str,
    correction: str | None,
    anchors: tuple[str, ...],
) -> None:
    """Report whether a recalled memory was useful, a dead end, or corrected."""
    parsed = []
    for anchor in anchors:
        file, _, symbol = anchor.partition("#")
        parsed.append({"file": file, **({"symbol": symbol} if symbol else {})})
    with state.open() as mem:
        result = mem.record_outcome(
            memory_id=memory_id,
            question=question,
            outcome=outcome,
            correction=correction,
            anchors=parsed,
        )
    emit(
        state,
        result,
        lambda: f"Recorded {outcome} for {result['memory_id']} ({result['outcomes']} outcome(s))",
    )


@main.command()
@click.option(
    "--fixtures", "fixtures_dir", default=None, help="Fixture directory (inside the project)."
)
@click.option(
    "--provider", "providers", multiple=True, type=click.Choice(["local-jsonl", "sqlite", "memory"])
)
@click.option("--gate", is_flag=True, help="Run twice and compare with the pinned baseline.")
@click.option("--baseline", default=None, help="Baseline JSON for --gate.")
@click.option("--update", is_flag=True, help="With --gate: rewrite the baseline.")
@click.option("--profiles", default=None, help="Comma list of lexical,hybrid,hybrid+rerank.")
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
    from swarmmem import evaluation
    from swarmmem import fixtures as bundled
    from swarmmem.cli.render import evaluation_text

    root = state.root.resolve()
    if manifest is not None:
        _evaluate_heldout(
            state, root, manifest, fixtures_dir, providers, gate, baseline, update, profiles
        )
        return
    if gate:
        base = Path(baseline) if baseline else bundled.RECALL_BASELINE
        result = evaluation.regression_gate(
            project_root=root, baseline_path=base, fixtures_dir=fixtures_dir, update=update
        )
        _emit_gate(state, result, "Regression")
        return
    if profiles:
        wanted = [p.strip() for p in profiles.split(",") if p.strip()]
        with progress_bar("evaluating", not state.as_json) as progress:
            report = evaluation.evaluate_profiles(
                project_root=root,
                profiles=wanted,
                fixtures_dir=fixtures_dir,
                providers=providers or ("local-jsonl", "sqlite"),
                progress=progress,
            )
        emit(state, report, lambda: profiles_text(report))
        return
    with progress_bar("evaluating", not state.as_json) as progress:
        report = evaluation.evaluate(
            project_root=root,
            fixtures_dir=fixtures_dir,
            providers=providers or ("local-jsonl", "sqlite"),
            progress=progress,
        )
    emit(state, report, lambda: evaluation_text(report))


@main.command()
@click.option(
    "--limit",
    type=click.IntRange(1, 100, clamp=True),
    default=20,
    show_default=True,
    help="Most proposals and candidates listed per section (clamped to 1..100).",
)
@command
def pending(state: State, limit: int) -> None:
    """Pending proposals, rejected reasons and promotion candidates (for curators)."""
    from swarmmem.core.learning.rewards import LearningSettings
    from swarmmem.core.maintenance.reports import pending_report
    from swarmmem.core.model.ids import to_iso

    with state.open() as mem:
        if not mem.enabled:
            raise MemoryDisabledError(DISABLED_MESSAGE)
        report = pending_report(
            mem.store,
            now=to_iso(mem.clock.now()),
            policy=LearningSettings.from_config(mem.config["learning"]),
            limit=limit,
        )
        details = [_proposal_details(mem.store.get_proposal(e["id"])) for e in report["pending"]]
    for entry, extra in zip(report["pending"], details, strict=True):
        entry.update(extra)
    data = {"success": True, **report}
    emit(state, data, lambda: _pending_text(data))


def _proposal_details(prop: Any) -> dict[str, Any]:
    """What a reviewer needs to decide on a pending proposal, beyond the report line."""
    import attrs

    record = prop.proposed_record if prop is not None else None
    return {
        "kind": record.kind if record else None,
        "memory_id": record.id if record else None,
        "text": record.text if record else None,
        "rationale": prop.rationale if prop is not None else None,
        "evidence_refs": list(prop.evidence_refs) if prop is not None else [],
        "related_memory_ids": list(prop.related_memory_ids or ()) if prop is not None else [],
        "proposed_by": attrs.asdict(prop.proposed_by) if prop is not None else None,
    }


def _pending_text(data: dict[str, Any]) -> str:
    from swarmmem.core.maintenance.reports import render_pending

    lines = [render_pending(data).rstrip("\n")]
    if data["pending"]:
        lines += ["", "### Pending proposal details", ""]
        for entry in data["pending"]:
            lines.append(f"- `{entry['id']}` {entry['operation']} {entry['kind'] or ''}".rstrip())
            if entry["text"]:
                lines.append(f"  text: {entry['text']}")
            lines.append(f"  rationale: {entry['rationale']}")
            if entry["evidence_refs"]:
                lines.append(f"  evidence: {', '.join(entry['evidence_refs'])}")
        lines += ["", "Decide with `swarmmem curate <proposal_id> <decision>`."]
    return "\n".join(lines)


@main.command()
@click.option("--transport", default="stdio", type=click.Choice(["stdio"]))
@command
def mcp(state: State, transport: str) -> None:
    """Serve swarm_memory_recall/propose/outcome over MCP (stdio).

    Scopes come from --root and the context options; the session is --session or a fresh
    UUID for this server process.
    """
    from swarmmem.mcp_server import serve

    serve(state.root, state.config, state.context)


@main.command()
@click.option("--keep", is_flag=True, help="Keep the temporary project and print its path.")
@command
def demo(state: State, keep: bool) -> None:
    """End-to-end demo on the embedded SQLite store in a temporary project."""
    from swarmmem.demo import run_demo

    run_demo(keep=keep, as_json=state.as_json)


def _evaluate_heldout(
    state: State,
    root: Path,
    manifest: str,
    fixtures_dir: str | None,
    providers: tuple[str, ...],
    gate: bool,
    baseline: str | None,
    update: bool,
    profiles: str | None,
) -> None:
    """The ``evaluate --manifest`` branch: held-out corpus run or its regression gate."""
    from swarmmem import evaluation

    if fixtures_dir is not None:
        raise click.UsageError("--manifest and --fixtures cannot be combined")
    wanted = [p.strip() for p in profiles.split(",") if p.strip()] if profiles else None
    if gate:
        result = evaluation.heldout_gate(
            project_root=root,
            manifest_path=manifest,
            baseline_path=Path(baseline) if baseline else None,
            profiles=wanted,
            update=update,
        )
        _emit_gate(state, result, "Held-out")
        return
    with progress_bar("evaluating", not state.as_json) as progress:
        report = evaluation.evaluate_heldout(
            root,
            manifest,
            wanted or evaluation.HELDOUT_PROFILES,
            providers=providers or evaluation.HELDOUT_PROVIDERS,
            progress=progress,
        )
    emit(state, report, lambda: profiles_text(report))


def _emit_gate(state: State, result: dict[str, Any], label: str) -> None:
    """Print a gate result; exit 1 when it failed."""
    emit(
        state,
        result,
        lambda: (
            f"{label} gate passed"
            if result["passed"]
            else f"{label} gate FAILED:\n" + "\n".join(result["problems"])
        ),
    )
    if not result["passed"]:
        sys.exit(1)


def profiles_text(report: dict[str, Any]) -> str:
    """Per-profile summary lines under the legacy evaluation text."""
    from swarmmem.cli.render import evaluation_text

    lines = [evaluation_text(report), "", "### Profiles"]
    for name, summary in report["profile_summaries"].items():
        lines.append(
            f"- {name}: passed {summary['passed_run_count']}/{summary['run_count']}, "
            f"precision@k {summary['precision@k']:.3f}, recall@k {summary['recall@k']:.3f}"
        )
    return "\n".join(lines)


def _register_extra_commands() -> None:
    """Attach the command groups that live in their own modules."""
    from swarmmem.cli import data as cli_data
    from swarmmem.cli import maintenance as cli_maintenance
    from swarmmem.cli import migrate as cli_migrate

    for cmd in [*cli_maintenance.COMMANDS, *cli_data.COMMANDS, *cli_migrate.COMMANDS]:
        main.add_command(cmd)


if __name__ == "__main__":  # pragma: no cover - ``python -m swarmmem.cli.main``
    # Run the importable module's group: the command modules import ``swarmmem.cli.main`` and
    # attach to *its* group; registering from this ``__main__`` copy would import them while
    # ``swarmmem.cli.main`` is only half initialised (a circular import).
    from swarmmem.cli.main import main as _main

    _main()
else:
    _register_extra_commands()

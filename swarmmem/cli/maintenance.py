"""Maintenance and learning commands: value-log, recall-log, stale, compact, reflect, verdict.

``pending`` lives in :mod:`swarmmem.cli.main`. Every command takes ``--json``; the reports take
``--limit`` (1..100, default 20). The commands are attached to the ``swarmmem`` group by
:func:`swarmmem.cli.main._register_extra_commands`.
"""

from __future__ import annotations

from typing import Any

import click

COMMANDS: list[click.Command] = []

# Imported after COMMANDS exists: swarmmem.cli.main imports this module at its end to register the
# commands, and by then the names below are defined.
from swarmmem.cli.main import State, command, emit  # noqa: E402

_LIMIT = click.option(
    "--limit",
    type=click.IntRange(1, 100, clamp=True),
    default=20,
    show_default=True,
    help="Most entries listed per section (clamped to 1..100).",
)


def _register(cmd: click.Command) -> click.Command:
    COMMANDS.append(cmd)
    return cmd


@_register
@click.command("value-log")
@_LIMIT
@command
def value_log(state: State, limit: int) -> None:
    """Per-memory learned Q-values, statuses and recent rewards."""
    from swarmmem.core.maintenance.reports import render_value_log

    with state.open() as mem:
        report = mem.value_log(limit)
    emit(state, {"success": True, **report}, lambda: render_value_log(report).rstrip("\n"))


@_register
@click.command("recall-log")
@_LIMIT
@command
def recall_log(state: State, limit: int) -> None:
    """Recall usage by agent role; most- and never-recalled memories."""
    from swarmmem.core.maintenance.reports import render_recall_log

    with state.open() as mem:
        report = mem.recall_log(limit)
    emit(state, {"success": True, **report}, lambda: render_recall_log(report).rstrip("\n"))


@_register
@click.command("stale")
@_LIMIT
@command
def stale(state: State, limit: int) -> None:
    """Expired scratch, tombstones, superseded chains, dead-anchor, low-utility, low-Q memories."""
    from swarmmem.core.maintenance.reports import render_stale

    with state.open() as mem:
        report = mem.stale(limit)
    emit(state, {"success": True, **report}, lambda: render_stale(report).rstrip("\n"))


@_register
@click.command("compact")
@click.option("--confirm", is_flag=True, help="Actually remove the records (default: dry run).")
@command
def compact(state: State, confirm: bool) -> None:
    """Remove deleted tombstones, superseded records and expired scratch (dry run by default)."""
    from swarmmem.core.maintenance.reports import render_compaction

    with state.open() as mem:
        report = mem.compact(confirm=confirm)
    emit(state, {"success": True, **report}, lambda: render_compaction(report).rstrip("\n"))


@_register
@click.command("reflect")
@command
def reflect(state: State) -> None:
    """Regenerate .swarm/reflections/lessons.{json,md} (needs reflection.enabled)."""
    with state.open() as mem:
        result = mem.reflect()
    data: dict[str, Any] = {"success": True, **result}

    def text() -> str:
        if not result.get("updated"):
            return f"Reflection lessons were not regenerated: {result.get('reason')}."
        return (
            f"Regenerated reflection lessons from {result['entries']} entries:\n"
            f"- {result['json_path']}\n- {result['md_path']}"
        )

    emit(state, data, text)


@_register
@click.command("verdict")
@click.argument(
    "verdict", type=click.Choice(["APPROVE", "REJECT", "CONCERNS"], case_sensitive=False)
)
@click.option("--swarm-id", required=True, help="Swarm id (idempotency key part).")
@click.option(
    "--task", "task_or_phase", required=True, help="Task or phase (idempotency key part)."
)
@click.option(
    "--round", "round_number", type=click.IntRange(0), required=True, help="Review round."
)
@click.option(
    "--member-session",
    "session_ids",
    multiple=True,
    help="Session id of a council member (repeatable; unknown ids are dropped).",
)
@command
def verdict(
    state: State,
    verdict: str,
    swarm_id: str,
    task_or_phase: str,
    round_number: int,
    session_ids: tuple[str, ...],
) -> None:
    """Apply a council VERDICT to the memories the session (--session) recalled last."""
    with state.open() as mem:
        result = mem.record_verdict(
            verdict,
            swarm_id=swarm_id,
            task_or_phase=task_or_phase,
            round_number=round_number,
            session_ids=list(session_ids),
        )

    def text() -> str:
        lines = [f"Verdict {result['verdict']} ({result['reward_key']}): {result['status']}"]
        if result["dropped_session_ids"]:
            lines.append("Dropped unknown session ids: " + ", ".join(result["dropped_session_ids"]))
        for update in result["updates"]:
            lines.append(
                f"- `{update['memory_id']}` {update['verdict']} "
                f"q {update['q_before']:.3f}→{update['q_after']:.3f}"
            )
        return "\n".join(lines)

    emit(state, result, text)


def _ensure_registered() -> None:
    """Attach the commands when this module was imported before :mod:`swarmmem.cli.main`."""
    from swarmmem.cli.main import main

    for cmd in COMMANDS:
        if cmd.name not in main.commands:
            main.add_command(cmd)


_ensure_registered()

"""Managing what is stored: list, show, forget, rescope.

Each command sees this context's scopes only (``--session`` and ``--role`` add the run and
agent scopes): a memory of another repository is never listed, and ``show`` or ``forget`` of
its id fails exactly like an unknown id (exit 2). ``forget`` tombstones with an audited
reason; ``forget --purge`` also erases the record and scrubs its text from the store.
``rescope --from ID`` adopts the memories of an earlier repository identity (a renamed folder,
a changed remote) into this one; it is a trusted local command, never an agent tool.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from swarmmem.cli import render
from swarmmem.cli.app import State, command, emit, flag, main
from swarmmem.core.maintenance.management import MAX_LIST_LIMIT, MEMORY_STATES
from swarmmem.core.model.ids import is_iso_datetime, with_time
from swarmmem.core.model.records import MEMORY_KINDS, SCOPE_TYPES
from swarmmem.core.model.reports import ProposalDetails


def _iso(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """An ISO-8601 time (a date alone is its midnight UTC), or a usage error naming the
    option."""
    if value is not None:
        value = with_time(value)
    if value is not None and not is_iso_datetime(value):
        raise click.BadParameter(
            f"{value!r} is not an ISO-8601 time (e.g. 2026-01-31 or 2026-01-31T09:00:00Z)",
            param=param,
        )
    return value


@main.command("list")
@click.option("--kind", type=click.Choice(MEMORY_KINDS), default=None, help="Only this kind.")
@click.option("--scope", type=click.Choice(SCOPE_TYPES), default=None, help="Only this scope type.")
@click.option("--tag", default=None, help="Only memories with this tag.")
@click.option("--file", default=None, help="Only memories anchored to this repository file.")
@click.option("--since", "created_since", callback=_iso, help="Created at or after (ISO time).")
@click.option("--updated-since", callback=_iso, help="Updated at or after (ISO time).")
@click.option(
    "--state",
    "memory_state",
    type=click.Choice(MEMORY_STATES),
    default="active",
    show_default=True,
    help="suppressed: learned Q below the suppression threshold; all: every state.",
)
@click.option("--limit", type=click.IntRange(1, MAX_LIST_LIMIT), default=50, show_default=True)
@click.option("--offset", type=click.IntRange(0), default=0, show_default=True)
@command
def list_memories(state: State, memory_state: str, **filters: Any) -> None:
    """List this context's memories, newest update first: id, kind, state, updated, text."""
    with state.open() as mem:
        records = mem.list(state=memory_state, **filters)
        states = [mem.state_of(record) for record in records]
    query = {"state": memory_state, **filters}
    emit(state, render.memory_list_json(records, states, query), render.memory_list_text)


@main.command()
@click.argument("memory_id")
@command
def show(state: State, memory_id: str) -> None:
    """Show MEMORY_ID: text, provenance, outcomes, Q history, relations and audit events;
    or a proposal (prop_...): what it proposes, who proposed it when, and its decision."""
    with state.open() as mem:
        details = mem.inspect(memory_id)
    text = render.proposal_show_text if isinstance(details, ProposalDetails) else render.memory_text
    emit(state, details.to_json(), text)


@main.command()
@click.argument("memory_id")
@click.option("--reason", required=True, help="Why it is forgotten (kept in the audit log).")
@flag(
    "--purge", "Also erase the record and scrub its text from proposals, outcomes and recall logs."
)
@command
def forget(state: State, memory_id: str, reason: str, purge: bool) -> None:
    """Forget MEMORY_ID: tombstone it (audited), or with --purge erase it for good."""
    with state.open() as mem:
        result = mem.forget(memory_id, reason=reason, purge=purge)
    emit(state, result.to_json(), render.forget_text)


def interactive() -> bool:
    """True when standard input is a terminal (a person can answer a question)."""
    return sys.stdin.isatty()


@main.command()
@click.option(
    "--from",
    "from_repo_id",
    required=True,
    help="The repository id the memories are stored under (listed by `status`).",
)
@flag("--yes", "Adopt without asking (otherwise: ask, or dry run).")
@flag("--force", "Adopt even when the memories were last written from another folder that exists.")
@command
def rescope(state: State, from_repo_id: str, yes: bool, force: bool) -> None:
    """Adopt the memories of an earlier repository identity (after a folder rename or a
    remote change) into this repository: one audited transaction. Without --yes it asks on
    a terminal and only reports what it would adopt otherwise."""
    with state.open() as mem:
        preview = mem.rescope(from_repo_id, apply=False, force=force)
        apply = yes
        if not yes and not state.as_json and interactive():
            click.echo(render.terminal_text(render.rescope_text(preview)))
            apply = click.confirm("Adopt them now?", default=False)
        result = mem.rescope(from_repo_id, apply=True, force=force) if apply else preview
    emit(state, {"success": True, **result}, render.rescope_text)

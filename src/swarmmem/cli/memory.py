"""The memory loop on the command line: status, recall, propose, curate, outcome, verdict.

Agents recall, propose and report outcomes; a trusted reviewer curates; a council verdict
teaches the recalled memories a value. Option names are the facade's argument names, so each
command hands its options to :class:`~swarmmem.memory.Memory` as they come.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from swarmmem.cli import render
from swarmmem.cli.app import State, command, emit, main
from swarmmem.core.learning.rewards import VERDICTS
from swarmmem.core.model.records import (
    CURATOR_ACTIONS,
    MEMORY_KINDS,
    OUTCOMES,
    PROPOSAL_OPERATIONS,
    RECALL_MODES,
)
from swarmmem.core.writes.curator import PERSON_REVIEWER, approval_decision

if TYPE_CHECKING:
    from swarmmem.memory import Memory

CALLER_MODES = tuple(mode for mode in RECALL_MODES if mode != "evaluation")
"""The recall modes a caller may ask for (``evaluation`` is the evaluator's own)."""

NOTHING_MATCHED = "nothing matched: no stored memory is relevant to this query"


@main.command()
@command
def status(state: State) -> None:
    """Storage, configuration and migration status."""
    with state.open() as mem:
        report = status_report(mem)
    emit(state, report, render.status_text)


def status_report(mem: Memory) -> dict[str, Any]:
    """Enabled flag, provider, paths, legacy JSONL files and the last migration report
    (:meth:`~swarmmem.memory.Memory.status`)."""
    return dict(mem.status())


def _stdin_dash(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``-`` reads the value from standard input (trailing newlines dropped)."""
    if value != "-":
        return value
    text = sys.stdin.read().rstrip("\n")
    if not text.strip():
        raise click.BadParameter("standard input was empty", param=param)
    return text


@main.command()
@click.argument("query", callback=_stdin_dash)
@click.option("--task", default=None, help="Task description (adds task-term signal).")
@click.option("--kind", "kinds", multiple=True, help="Restrict to a memory kind (repeatable).")
@click.option("--max-items", type=click.IntRange(1, 20), default=None, help="1..20 items.")
@click.option(
    "--token-budget", type=click.IntRange(100, 5000), default=None, help="100..5000 tokens."
)
@click.option("--mode", type=click.Choice(CALLER_MODES), default="manual")
@command
def recall(state: State, query: str, kinds: tuple[str, ...], **options: Any) -> None:
    """Recall memories for QUERY (``-`` reads it from stdin) and print the prompt block.

    ``--mode injection`` applies the automatic-injection rules (``recall.injection``: a query
    signal required, its minimum score, item and token limits) and prints nothing, exit 0,
    when nothing qualifies or the query is trivial ("ok", "thanks", a slash command).
    """
    from swarmmem.hooks.hosts import trivial_prompt

    if options["mode"] == "injection" and trivial_prompt(query):
        emit(state, render.skipped_recall_json("trivial_prompt"), render.recall_text)
        return
    with state.open() as mem:
        bundle = mem.recall(query, kinds=list(kinds) or None, **options)
    data = render.bundle_json(bundle)
    if options["mode"] == "injection" and not bundle.items:
        data["prompt_block"] = ""
        data["skipped"] = bundle.diagnostics.get("injectionSkipReason") or "no_results"
    elif not bundle.items:  # no stored memory is relevant: a normal answer, said plainly
        data["prompt_block"], data["token_estimate"] = "", 0
        data["message"] = NOTHING_MATCHED
    emit(state, data, render.recall_text)


@main.command()
@click.option(
    "--operation", default="add", show_default=True, type=click.Choice(PROPOSAL_OPERATIONS)
)
@click.option("--kind", default=None)
@click.option("--text", default=None, callback=_stdin_dash, help="Memory text (- reads stdin).")
@click.option("--rationale", required=True)
@click.option("--evidence", "evidence_refs", multiple=True, help="Evidence ref (repeatable).")
@click.option("--target", "target_memory_id", default=None)
@click.option("--related", "related_memory_ids", multiple=True)
@command
def propose(
    state: State,
    evidence_refs: tuple[str, ...],
    related_memory_ids: tuple[str, ...],
    **fields: Any,
) -> None:
    """Create a pending memory proposal (never writes durable memory)."""
    with state.open() as mem:
        prop = mem.propose(
            **fields,
            evidence_refs=list(evidence_refs),
            related_memory_ids=list(related_memory_ids) or None,
        )
    data = render.proposal_json(prop)
    emit(state, data, render.proposal_text, ok=data["success"])


@main.command()
@click.argument("proposal_id")
@click.argument("decision", type=click.Choice((*CURATOR_ACTIONS, "approve")))
@click.option("--reason", default=None)
@click.option("--text", default=None, callback=_stdin_dash, help="Rephrase (add, update).")
@click.option("--kind", type=click.Choice(MEMORY_KINDS), default=None, help="Change the kind.")
@click.option("--tag", "tags", multiple=True, help="Replace the tags (repeatable).")
@command
def curate(
    state: State,
    proposal_id: str,
    decision: str,
    reason: str | None,
    text: str | None,
    kind: str | None,
    tags: tuple[str, ...],
) -> None:
    """Apply a curator DECISION to PROPOSAL_ID (for trusted reviewers, not agents).

    approve is the decision that accepts the proposal's operation (add for an add, update
    for an update...), as swarmmem review approves. An add or update may rephrase the
    proposal: --text (- reads stdin), --kind and --tag give the memory written; the audit
    event records the rewrite.
    """
    with state.open() as mem:
        if decision == "approve":
            decision = approval_decision(mem.proposal(proposal_id).operation)
        change = mem.curate(
            proposal_id,
            decision,
            reason=reason,
            text=text,
            kind=kind,
            tags=list(tags) or None,
            reviewer=PERSON_REVIEWER,
        )
    emit(state, render.curate_json(change), render.curate_text)


@main.command()
@click.argument("proposal_id")
@click.option("--reason", default=None, help="Why (kept in the audit log of a forget).")
@command
def undo(state: State, proposal_id: str, reason: str | None) -> None:
    """Undo the decision on PROPOSAL_ID: an add approval (yours, a curator's or the curation
    policy's) forgets the memory it wrote; then the proposal is filed again, pending."""
    with state.open() as mem:
        result = mem.undo_decision(proposal_id, reason=reason)
    emit(state, result.to_json(), render.undo_text)


def _anchors(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> Any:
    """``file[#symbol]`` values as anchor objects."""
    parsed = (value.partition("#") for value in values)
    return [{"file": file, **({"symbol": symbol} if symbol else {})} for file, _, symbol in parsed]


@main.command()
@click.option("--memory-id", default=None)
@click.option("--question", default=None)
@click.option("--outcome", required=True, type=click.Choice(OUTCOMES))
@click.option("--correction", default=None)
@click.option(
    "--anchor", "anchors", multiple=True, callback=_anchors, help="file[#symbol] (repeatable)."
)
@command
def outcome(state: State, **fields: Any) -> None:
    """Report whether a recalled memory was useful, a dead end, or corrected."""
    with state.open() as mem:
        result = mem.record_outcome(**fields)
    emit(state, result, render.outcome_text)


@main.command()
@click.argument("verdict", type=click.Choice(VERDICTS, case_sensitive=False))
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
def verdict(state: State, verdict: str, session_ids: tuple[str, ...], **fields: Any) -> None:
    """Apply a council VERDICT to the memories the session (--session) recalled last."""
    with state.open() as mem:
        result = mem.record_verdict(verdict, session_ids=list(session_ids), **fields)
    emit(state, result.to_json(), render.verdict_text)

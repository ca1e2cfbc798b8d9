"""Curator and maintenance commands: pending, value-log, recall-log, stale, compact, reflect,
rebuild-embeddings, audit-verify.

The reports take ``--limit`` (1..100, default 20); every command takes ``--json``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from swarmmem.cli import render
from swarmmem.cli.app import State, command, emit, flag, limit_option, main, progress_bar
from swarmmem.core.model.reports import Result
from swarmmem.memory import Memory


@main.command()
@limit_option("proposals and candidates")
@command
def pending(state: State, limit: int) -> None:
    """Pending proposals, rejected reasons and promotion candidates (for curators)."""
    with state.open() as mem:
        report = mem.pending(limit)
        by_id = {p.id: p for p in mem.proposals("pending")}
        proposals = [by_id.get(entry["id"]) for entry in report.pending]
    emit(state, render.pending_json(report, proposals), render.pending_text)


def _report_command(
    name: str,
    build: Callable[[Memory, int], Result],
    text: Callable[[Any], str],
    summary: str,
) -> None:
    """Attach the command ``name``: the facade report ``build`` rendered by ``text``."""

    @main.command(name, help=summary)
    @limit_option("entries")
    @command
    def report(state: State, limit: int) -> None:
        with state.open() as mem:
            data = build(mem, limit)
        emit(state, {"success": True, **data.to_json()}, text)


_report_command(
    "value-log",
    Memory.value_log,
    render.value_log_text,
    "Per-memory learned Q-values, statuses and recent rewards.",
)
_report_command(
    "recall-log",
    Memory.recall_log,
    render.recall_log_text,
    "Recall usage by agent role; most- and never-recalled memories.",
)
_report_command(
    "stale",
    Memory.stale,
    render.stale_text,
    "Expired scratch, tombstones, superseded chains, dead-anchor, low-utility, low-Q memories.",
)


@main.command()
@flag("--confirm", "Actually remove the records (default: dry run).")
@command
def compact(state: State, confirm: bool) -> None:
    """Remove deleted tombstones, superseded records and expired scratch (dry run by default)."""
    with state.open() as mem:
        report = mem.compact(confirm=confirm)
    emit(state, {"success": True, **report.to_json()}, render.compaction_text)


@main.command()
@command
def reflect(state: State) -> None:
    """Regenerate .swarm/reflections/lessons.{json,md} (needs reflection.enabled)."""
    with state.open() as mem:
        result = mem.reflect()
    emit(state, {"success": True, **result.to_json()}, render.reflect_text)


@main.command("rebuild-embeddings")
@command
def rebuild_embeddings(state: State) -> None:
    """Re-embed every durable memory; the model version advances only if all succeed. A
    pgvector index built with other options than configured is rebuilt too."""
    with state.open() as mem, progress_bar("embedding", state) as progress:
        result = mem.rebuild_embedding_index(progress=progress)
    emit(state, result.to_json(), render.rebuild_text)


@main.command("audit-verify")
@command
def audit_verify(state: State) -> None:
    """Verify the tamper-evident hash chain of the audit log (SQL providers)."""
    with state.open() as mem:
        report = mem.verify_audit_chain()
    broken = report.get("supported") and not report.get("verified")
    emit(state, report, render.audit_text, ok=not broken)


@main.group("audit-key")
def audit_key() -> None:
    """The audit chain's key (SWARMMEM_AUDIT_KEY or memory.audit.keyFile)."""


@audit_key.command("adopt")
@command
def audit_key_adopt(state: State) -> None:
    """Key this store's existing audit chain from now on with the configured key.

    The current rows must verify; they stay hashed with plain SHA-256 (sealed as such) and
    the adoption is itself an audit event. Opening a store with a key never does this: a
    chain that lost its key marker is reported, not silently re-keyed."""
    with state.open() as mem:
        result = mem.adopt_audit_key()
    emit(state, result, render.audit_key_text)


@main.command()
@flag("--propose", "File an update (changed) or delete (gone) proposal for each.")
@limit_option("memories")
@command
def verify(state: State, propose: bool, limit: int) -> None:
    """Memories whose cited files changed or are gone since they were written.

    With --propose, each gets a pending proposal for the curator (an update that keeps the
    text for a changed file, a delete for a missing one); memory itself is never changed.
    """
    with state.open() as mem:
        report = mem.verify(propose=propose, limit=limit)
    emit(state, report.to_json(), render.verify_text)


@main.command()
@command
def consolidate(state: State) -> None:
    """File merge proposals for near-duplicate memories and supersede proposals for pairs
    that state different values about the same file (for the curator; memory is unchanged)."""
    with state.open() as mem:
        report = mem.consolidate()
    emit(state, report.to_json(), render.consolidate_text)

"""``swarmmem migrate``: move the project's memory to another provider; ``swarmmem
postgres-rls``: the optional PostgreSQL row-level security of a shared schema."""

from __future__ import annotations

import click

from swarmmem.cli import render
from swarmmem.cli.app import State, command, emit, flag, main, progress_bar
from swarmmem.registry import stores_that

TARGETS = stores_that(lambda traits: traits.migrate_target)
"""The registered stores ``migrate --to`` can copy into (the SQL ones the copier supports)."""


@main.command("migrate")
@click.option(
    "--to",
    "target_kind",
    default=None,
    type=click.Choice(TARGETS),
    help="Provider to move the memory to.",
)
@flag("--worktrees", "Merge the stores linked git worktrees kept of their own into this one.")
@click.option("--dsn", default=None, help="Target DSN (default: postgres.dsn or SWARMMEM_PG_DSN).")
@click.option("--schema", default=None, help="Target PostgreSQL schema (default: postgres.schema).")
@click.option("--path", "sqlite_path", default=None, help="Target SQLite file (--to sqlite).")
@command
def migrate(
    state: State,
    target_kind: str | None,
    worktrees: bool,
    dsn: str | None,
    schema: str | None,
    sqlite_path: str | None,
) -> None:
    """Copy every memory, proposal, audit event (chain intact), outcome, recall usage, reward
    event and relation into an empty store of another provider, in one transaction (--to);
    or merge the stores linked git worktrees kept before they shared this one (--worktrees)."""
    if (target_kind is None) == (not worktrees):
        raise click.UsageError("give exactly one of --to PROVIDER and --worktrees")
    if worktrees:
        with state.open() as mem:
            merged = mem.merge_worktree_stores()
        ok = all(entry["merged"] for entry in merged["stores"])
        emit(state, {"success": ok, **merged}, render.worktree_merge_text, ok=ok)
        return
    assert target_kind is not None
    with state.open() as mem, progress_bar("migrating", state) as progress:
        report = mem.migrate_to(
            target_kind, dsn=dsn, schema=schema, path=sqlite_path, progress=progress
        )
    data = {
        "success": bool(report["verified"]),
        "source": report["source"],
        "target": target_kind,
        "location": report["location"],
        "counts": report["counts"],
        "target_counts": report["target_counts"],
        "verified": report["verified"],
        "audit_verified": bool(report["audit"].get("verified")),
    }
    emit(state, data, render.migration_text, ok=bool(report["verified"]))


@main.command("postgres-rls")
@click.option("--role", required=True, help="The database role this repository's project uses.")
@click.option("--dsn", default=None, help="The admin's connection (owner of the tables).")
@flag("--apply", "Run the statements (otherwise only print them).")
@flag("--workspace", "Also grant the workspace scope, which sibling repositories share.")
@command
def postgres_rls(state: State, role: str, dsn: str | None, apply: bool, workspace: bool) -> None:
    """Row-level security for a shared PostgreSQL schema: ROLE sees only this repository's
    scopes. Prints the policies and grants; --apply runs them as the tables' owner."""
    with state.open() as mem:
        result = mem.postgres_rls(role, dsn=dsn, apply=apply, workspace=workspace)
    emit(state, {"success": True, **result}, render.rls_text)

"""``swarmmem migrate``: move the project's memory to another provider; ``swarmmem
postgres-rls``: the optional PostgreSQL row-level security of a shared schema."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from swarmmem.bootstrap import postgres_rls as row_level_security
from swarmmem.cli import render
from swarmmem.cli.app import State, command, emit, main, progress_bar
from swarmmem.core.model.errors import ConfigError
from swarmmem.registry import choices

TARGETS = tuple(name for name in choices("store") if name in {"postgres", "sqlite"})
"""The registered stores ``migrate --to`` can copy into (the SQL ones the copier supports)."""


def _open_target(mem: Any, kind: str, dsn: str | None, schema: str | None, path: str | None) -> Any:
    if kind == "postgres":
        dsn = dsn or mem.config["postgres"]["dsn"] or os.environ.get("SWARMMEM_PG_DSN")
        if not dsn:
            raise ConfigError(
                "migrate --to postgres needs --dsn (or postgres.dsn, SWARMMEM_PG_DSN)"
            )
        return mem.runtime.open_store(
            "postgres",
            dsn=dsn,
            pool_size=mem.config["postgres"]["poolSize"],
            schema=schema or mem.config["postgres"]["schema"],
        )
    own = mem.runtime.sqlite_path
    target = Path(path) if path else own
    target = target if target.is_absolute() else mem.root / target
    source = (own if own.is_absolute() else mem.root / own) if mem.store.name == "sqlite" else None
    if source is not None and source.resolve() == target.resolve():
        raise ConfigError(f"the target {target} is the source database; pass --path")
    return mem.runtime.open_store("sqlite", path=target)


@main.command("migrate")
@click.option(
    "--to",
    "target_kind",
    required=True,
    type=click.Choice(TARGETS),
    help="Provider to move the memory to.",
)
@click.option("--dsn", default=None, help="Target DSN (default: postgres.dsn or SWARMMEM_PG_DSN).")
@click.option("--schema", default=None, help="Target PostgreSQL schema (default: postgres.schema).")
@click.option("--path", "sqlite_path", default=None, help="Target SQLite file (--to sqlite).")
@command
def migrate(
    state: State,
    target_kind: str,
    dsn: str | None,
    schema: str | None,
    sqlite_path: str | None,
) -> None:
    """Copy every memory, proposal, audit event (chain intact), outcome, recall usage, reward
    event and relation into an empty store of another provider, in one transaction."""
    with state.open() as mem:
        copy_store = mem.runtime.transfer("copy")
        source = mem.store
        target = _open_target(mem, target_kind, dsn, schema, sqlite_path)
        try:
            with progress_bar("migrating", state) as progress:
                report = copy_store(source, target, progress=progress)
            shown = repr(target) if target_kind == "postgres" else str(target.path)
        finally:
            target.close()
    data = {
        "success": bool(report["verified"]),
        "source": source.name,
        "target": target_kind,
        "location": shown,
        "counts": report["counts"],
        "target_counts": report["target_counts"],
        "verified": report["verified"],
        "audit_verified": bool(report["audit"].get("verified")),
    }
    emit(state, data, render.migration_text, ok=bool(report["verified"]))


@main.command("postgres-rls")
@click.option("--role", required=True, help="The database role this repository's project uses.")
@click.option("--dsn", default=None, help="The admin's connection (owner of the tables).")
@click.option("--apply", is_flag=True, help="Run the statements (otherwise only print them).")
@click.option(
    "--workspace",
    is_flag=True,
    help="Also grant the workspace scope, which sibling repositories share.",
)
@command
def postgres_rls(state: State, role: str, dsn: str | None, apply: bool, workspace: bool) -> None:
    """Row-level security for a shared PostgreSQL schema: ROLE sees only this repository's
    scopes. Prints the policies and grants; --apply runs them as the tables' owner."""
    with state.open() as mem:
        result = row_level_security(mem.runtime, role, dsn=dsn, apply=apply, workspace=workspace)
    emit(state, {"success": True, **result}, render.rls_text)

"""``swarmmem migrate``: move the project's memory to another provider (registered by
``swarmmem.cli.main``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from swarmmem.cli.main import State, command, emit, progress_bar


def _open_target(mem: Any, kind: str, dsn: str | None, schema: str | None, path: str | None) -> Any:
    from swarmmem.core.model.errors import ConfigError
    from swarmmem.registry import resolve

    cls = resolve("store", kind)
    if kind == "postgres":
        dsn = dsn or mem.config["postgres"]["dsn"] or os.environ.get("SWARMMEM_PG_DSN")
        if not dsn:
            raise ConfigError(
                "migrate --to postgres needs --dsn (or postgres.dsn, SWARMMEM_PG_DSN)"
            )
        return cls(
            dsn,
            clock=mem.clock,
            pool_size=mem.config["postgres"]["poolSize"],
            schema=schema or mem.config["postgres"]["schema"],
        )
    target = Path(path) if path else mem.runtime.path(mem.config["sqlite"]["path"])
    target = target if target.is_absolute() else mem.root / target
    source_path = getattr(mem.store, "path", None)
    if source_path is not None and Path(source_path).resolve() == target.resolve():
        raise ConfigError(f"the target {target} is the source database; pass --path")
    return cls(target, clock=mem.clock)


@click.command("migrate")
@click.option(
    "--to",
    "target_kind",
    required=True,
    type=click.Choice(["postgres", "sqlite"]),
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
    from swarmmem.adapters.storage.provider_migration import copy_store

    with state.open() as mem:
        source = mem.store
        target = _open_target(mem, target_kind, dsn, schema, sqlite_path)
        try:
            with progress_bar("migrating", not state.as_json) as progress:
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

    def text() -> str:
        lines = [
            "## Swarm Memory Migration",
            "",
            f"- From `{source.name}` to `{target_kind}` ({shown})",
        ]
        for table, rows in report["counts"].items():
            lines.append(f"- {table}: {rows} -> {report['target_counts'][table]}")
        chain = "verified" if data["audit_verified"] else "NOT verified"
        lines.append(f"- Audit chain on the target: {chain}")
        lines.append(f"- Counts verified: {'yes' if report['verified'] else 'NO'}")
        return "\n".join(lines)

    emit(state, data, text)
    if not report["verified"]:
        raise SystemExit(1)


COMMANDS: list[click.Command] = [migrate]

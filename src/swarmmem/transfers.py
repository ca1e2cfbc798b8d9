"""Stores beside the configured one, for the composition root (with :mod:`swarmmem.bootstrap`
and :mod:`swarmmem.registry`, the only modules that build adapters): another store on the
runtime's clock (a migration target, a worktree's own store), the registry's transfers
between stores (export, JSONL import, copy), PostgreSQL row-level security, and the SQLite
probes of diagnostics and measurement baselines."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from swarmmem.bootstrap import Runtime
from swarmmem.core.model.errors import ConfigError, MemoryValidationError
from swarmmem.ports.storage import StorageProvider
from swarmmem.registry import create, resolve, store_traits

__all__ = [
    "copy_rows",
    "export_rows",
    "import_rows",
    "migration_target",
    "open_store",
    "postgres_rls",
    "sqlite_capabilities",
    "sqlite_connect",
]


def sqlite_capabilities() -> dict[str, Any]:
    """What the SQLite build offers (FTS5, extension loading, sqlite-vec), for diagnostics."""
    from swarmmem.adapters.storage.sqlite.support import sqlite_capabilities as probe

    return probe()


def sqlite_connect(path: Path) -> Any:
    """A plain connection to the SQLite file at ``path``, from the module the stores use
    (for measurement baselines such as the bare FTS5 query)."""
    from swarmmem.adapters.storage.sqlite.support import sqlite_module

    return sqlite_module().connect(str(path))


def open_store(rt: Runtime, provider: str, **arguments: Any) -> StorageProvider:
    """Another store of ``provider`` on the clock of ``rt`` (e.g. a migration target); the
    caller closes it."""
    return create("store", provider, clock=rt.clock, **arguments)  # type: ignore[no-any-return]


def export_rows(store: StorageProvider, directory: str | os.PathLike[str]) -> dict[str, int]:
    """Write the rows ``store`` shows to ``directory/export/*.jsonl`` (the registry's
    ``export`` transfer): the counts written."""
    export: Callable[..., dict[str, int]] = resolve("transfer", "export")
    return export(store, directory)


def import_rows(
    rt: Runtime,
    directory: str | os.PathLike[str],
    *,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Import the JSONL files of ``directory`` into the store of ``rt``, its context's scopes
    only, secrets refused (the registry's ``import-jsonl`` transfer): its report."""
    load: Callable[..., dict[str, Any]] = resolve("transfer", "import-jsonl")
    return load(
        rt.store,
        directory,
        secrets=rt.secrets,
        allowed_scope_keys=rt.scope_keys(),
        progress=progress,
    )


def copy_rows(
    rt: Runtime,
    target: StorageProvider,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Copy every row of the store of ``rt`` into the empty ``target`` (the registry's
    ``copy`` transfer): the copier's report."""
    copy: Callable[..., dict[str, Any]] = resolve("transfer", "copy")
    return copy(rt.store, target, progress=progress)


def migration_target(
    rt: Runtime, provider: str, *, dsn: str | None, schema: str | None, path: str | None
) -> tuple[StorageProvider, str]:
    """An empty store of ``provider`` to copy the memory of ``rt`` into (the caller closes
    it) and where it is, as shown to the person: a PostgreSQL schema (``dsn``, default
    ``postgres.dsn`` or ``SWARMMEM_PG_DSN``; ``schema``, default ``postgres.schema``) or a
    SQLite file (``path``, default ``sqlite.path``; relative to the project, never the source
    database itself)."""
    if not store_traits(provider).migrate_target:
        raise ConfigError(f"migrate cannot copy into the {provider!r} store")
    if provider == "postgres":
        pg = rt.settings.postgres
        dsn = dsn or pg.dsn or os.environ.get("SWARMMEM_PG_DSN")
        if not dsn:
            raise ConfigError(
                "migrate --to postgres needs --dsn (or postgres.dsn, SWARMMEM_PG_DSN)"
            )
        store = open_store(
            rt, "postgres", dsn=dsn, pool_size=pg.pool_size, schema=schema or pg.schema
        )
        return store, repr(store)
    own = rt.sqlite_path
    target = Path(path) if path else own
    target = target if target.is_absolute() else rt.root / target
    if store_traits(rt.provider).database_file:
        source = own if own.is_absolute() else rt.root / own
        if source.resolve() == target.resolve():
            raise ConfigError(f"the target {target} is the source database; pass --path")
    return open_store(rt, provider, path=target), str(target)


def postgres_rls(
    rt: Runtime, role: str, *, dsn: str | None, apply: bool, workspace: bool = False
) -> dict[str, Any]:
    """The row-level security setup giving database ``role`` the repository's scopes of
    ``rt`` (repository, cohort and, only when ``workspace``, the workspace scope that sibling
    repositories share) in the configured schema; run when ``apply``. ``dsn``: the admin's
    connection (default: the configured one)."""
    if rt.provider != "postgres":
        raise ConfigError("row-level security needs memory.provider postgres")
    if not isinstance(role, str) or not role or len(role) > 63 or not role.isprintable():
        raise MemoryValidationError("--role must name a database role (1..63 characters)")
    from swarmmem.adapters.storage.postgres.rls import row_level_security

    granted_scopes = ("repository", "cohort", *(("workspace",) if workspace else ()))
    keys = [s.key for s in rt.allowed_scopes if s.type in granted_scopes]
    from swarmmem.adapters.storage.postgres.dsn import configured_dsn

    pg = rt.settings.postgres
    return row_level_security(
        dsn or configured_dsn(pg), pg.schema or "public", role, keys, apply=apply
    )

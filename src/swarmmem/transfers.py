"""The registry's transfers between stores (export, JSONL import, copy) for the maintenance
use cases. The stores they move rows between are built by :mod:`swarmmem.bootstrap` (with
:mod:`swarmmem.registry`, the only modules that import adapters or name a store)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from swarmmem.bootstrap import Runtime
from swarmmem.ports.storage import StorageProvider
from swarmmem.registry import resolve

__all__ = ["copy_rows", "export_rows", "import_rows"]


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

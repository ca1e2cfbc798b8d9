"""The one helper of the kernel selectors.

A selector imports the names it exports from the pure twin (which gives them their static
types), lists them in ``__all__`` and calls :func:`bind`, which swaps in the compiled kernel
when it is allowed and present::

    from swarmmem._speedups._fusion_py import rrf_fuse
    from swarmmem._speedups._select import bind

    __all__ = ["KERNEL_IMPL", "rrf_fuse"]
    KERNEL_IMPL = bind("fusion", globals())
"""

from __future__ import annotations

import importlib
import os
import platform
from collections.abc import MutableMapping
from types import ModuleType
from typing import Any


def load(name: str) -> tuple[ModuleType, str]:
    """Import kernel ``name``: the compiled module when allowed and present, else the twin."""
    pure = importlib.import_module(f"swarmmem._speedups._{name}_py")
    if (
        os.environ.get("SWARMMEM_NO_EXTENSIONS") == "1"
        or platform.python_implementation() != "CPython"
    ):
        return pure, "python"
    try:
        return importlib.import_module(f"swarmmem._speedups._{name}_c"), "compiled"
    except ImportError:
        return pure, "python"


def bind(name: str, namespace: MutableMapping[str, Any]) -> str:
    """Point every name of the selector's ``__all__`` at kernel ``name``; return its impl.

    The return value is the selector's ``KERNEL_IMPL``: ``"compiled"`` or ``"python"``.
    """
    module, impl = load(name)
    for export in namespace["__all__"]:
        if export != "KERNEL_IMPL":
            namespace[export] = getattr(module, export)
    return impl

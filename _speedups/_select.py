"""Shared helper of the kernel selectors."""

from __future__ import annotations

import importlib
import os
import platform
from types import ModuleType


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

"""swarmmem: scoped, source-backed long-term memory for AI coding agents.

>>> import swarmmem
>>> with swarmmem.open(".", config={"enabled": True}) as mem:   # doctest: +SKIP
...     bundle = mem.recall("how are tests run")

The public names load on first use, so ``import swarmmem`` (and the narrow hook entry point,
:mod:`swarmmem.hooks.client`) stays cheap: nothing but the version is imported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swarmmem._version import __version__

if TYPE_CHECKING:
    from swarmmem.api import diagnostics, open
    from swarmmem.memory import Memory

__all__ = ["Memory", "__version__", "diagnostics", "open"]

_LAZY = {"open": "swarmmem.api", "diagnostics": "swarmmem.api", "Memory": "swarmmem.memory"}


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'swarmmem' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

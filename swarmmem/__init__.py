"""swarmmem: scoped, source-backed long-term memory for AI coding agents.

>>> import swarmmem
>>> with swarmmem.open(".", config={"enabled": True}) as mem:   # doctest: +SKIP
...     bundle = mem.recall("how are tests run")
"""

from __future__ import annotations

from swarmmem._version import __version__
from swarmmem.api import diagnostics, open
from swarmmem.memory import Memory

__all__ = ["Memory", "__version__", "diagnostics", "open"]

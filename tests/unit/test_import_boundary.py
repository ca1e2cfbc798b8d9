"""The dependency rule and "nothing at import time", checked in fresh interpreters."""

from __future__ import annotations

import json
import subprocess
import sys

# Each import reports the entries it added to ``sys.modules``, so a failure names the module
# whose import pulled a banned one in.
PROBE = """
import importlib, json, pkgutil, sys

def load(name, added):
    before = set(sys.modules)
    module = importlib.import_module(name)
    added[name] = sorted(set(sys.modules) - before)
    return module

added = {{}}
for name in {targets!r}:
    module = load(name, added)
    if {walk!r}:
        for info in pkgutil.walk_packages(getattr(module, "__path__", []), name + "."):
            load(info.name, added)
print(json.dumps(added))
"""

HEAVY = ("sqlite3", "_sqlite3", "pysqlite3", "sqlite_vec", "onnxruntime", "tokenizers")


def _imports(targets: list[str], *, walk: bool = False) -> dict[str, list[str]]:
    """Import ``targets`` in a fresh interpreter (with ``walk``, every module under them too).

    Returns, per imported module, the modules that its import added to ``sys.modules``.
    """
    code = PROBE.format(targets=targets, walk=walk)
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _offenders(added: dict[str, list[str]], banned: tuple[str, ...]) -> dict[str, list[str]]:
    """Map each imported module to the banned modules its import loaded."""
    found = {}
    for name, modules in added.items():
        bad = [m for m in modules if any(m == b or m.startswith(b + ".") for b in banned)]
        if bad:
            found[name] = bad
    return found


def test_core_loads_no_adapter_database_or_model_module():
    """Importing swarmmem.core and every module under it loads no adapter or heavy driver."""
    added = _imports(["swarmmem.core"], walk=True)
    core_modules = [name for name in added if name.startswith("swarmmem.core.")]
    assert "swarmmem.core.model.errors" in core_modules
    assert "swarmmem.core.model.records" in core_modules
    assert _offenders(added, ("swarmmem.adapters", *HEAVY)) == {}


def test_import_swarmmem_loads_no_database_or_model_module():
    """``import swarmmem`` opens nothing: no sqlite, sqlite-vec, onnxruntime or tokenizers."""
    added = _imports(["swarmmem"])
    assert "swarmmem" in added["swarmmem"]
    assert _offenders(added, HEAVY) == {}

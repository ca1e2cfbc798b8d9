"""The dependency rule and "nothing at import time", checked in fresh interpreters."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from factories import run_python

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
    done = run_python(code, "-W", "error")
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


def _swarmmem_imports(path: Path) -> list[str]:
    """The ``swarmmem...`` modules that ``path`` imports (read statically)."""
    modules = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            modules.append(node.module or "")
        elif isinstance(node, ast.Import):
            modules.extend(alias.name for alias in node.names)
    return [m for m in modules if m.split(".")[0] == "swarmmem"]


def test_ports_import_only_the_core_model():
    """Every ``swarmmem`` import in ``ports/`` names ``swarmmem.core.model`` (or another port)."""
    ports = sorted((Path(__file__).resolve().parents[2] / "ports").glob("*.py"))
    imports = {path.name: _swarmmem_imports(path) for path in ports}
    assert "swarmmem.core.model.evidence" in imports["evidence.py"]
    allowed = ("swarmmem.core.model.", "swarmmem.ports.")
    bad = {name: [m for m in found if not m.startswith(allowed)] for name, found in imports.items()}
    assert {name: found for name, found in bad.items() if found} == {}

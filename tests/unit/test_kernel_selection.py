"""Which kernel implementation the selectors load, checked in fresh interpreters."""

from __future__ import annotations

import json
import os

import pytest
from factories import run_python

SELECTORS = ("fusion", "lexical", "jaccard", "bm25")

PROBE = """
import importlib, json
report = {}
for name in ("fusion", "lexical", "jaccard", "bm25"):
    selector = importlib.import_module("swarmmem._speedups." + name)
    # the kernels' functions (a row type such as LexicalRow is the twin's in both)
    functions = [getattr(selector, n) for n in selector.__all__]
    functions = [f for f in functions if callable(f) and not isinstance(f, type)]
    report[name] = {
        "impl": selector.KERNEL_IMPL,
        "modules": sorted({f.__module__ for f in functions}),
    }
print(json.dumps(report))
"""


def _probe(tmp_path, **env_overrides: str | None) -> dict[str, dict[str, object]]:
    """Import every selector in a fresh interpreter and report what each one loaded."""
    env = dict(os.environ)
    for key, value in env_overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    done = run_python(PROBE, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.compiled
@pytest.mark.skipif(
    os.environ.get("SWARMMEM_NO_EXTENSIONS") == "1", reason="SWARMMEM_NO_EXTENSIONS=1"
)
def test_compiled_kernels_are_loaded_by_default(tmp_path):
    """Without SWARMMEM_NO_EXTENSIONS every selector loads its compiled module."""
    report = _probe(tmp_path, SWARMMEM_NO_EXTENSIONS=None)
    assert set(report) == set(SELECTORS)
    for name, loaded in report.items():
        assert loaded == {"impl": "compiled", "modules": [f"swarmmem._speedups._{name}_c"]}, name


def test_no_extensions_forces_the_twins(tmp_path):
    """SWARMMEM_NO_EXTENSIONS=1 makes every selector load its pure-Python twin."""
    report = _probe(tmp_path, SWARMMEM_NO_EXTENSIONS="1")
    assert set(report) == set(SELECTORS)
    for name, loaded in report.items():
        assert loaded == {"impl": "python", "modules": [f"swarmmem._speedups._{name}_py"]}, name

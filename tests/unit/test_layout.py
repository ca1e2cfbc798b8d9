"""The shape of the package, read from the source: the dependency rule of the architecture.

Every import counts, at module level or inside a function: no import cycle anywhere; ports
import only ``core.model``; core imports only core, ports and the kernel selectors and does
no file or database I/O; adapters never import the composition root; inside ``swarmmem/``
only the composition root (registry, bootstrap) imports adapters.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FOLDERS = {
    "src/swarmmem": "swarmmem",
    "core": "swarmmem.core",
    "ports": "swarmmem.ports",
    "adapters": "swarmmem.adapters",
    "_speedups": "swarmmem._speedups",
}
COMPOSITION_ROOT = ("swarmmem.registry", "swarmmem.bootstrap")
"""The composition root: the registry and the bootstrap."""
# calls and imports that touch files or databases (core must reach them through ports)
IO_CALLS = {
    "open",
    "read_text",
    "read_bytes",
    "write_text",
    "write_bytes",
    "mkdir",
    "unlink",
    "rmdir",
    "touch",
    "glob",
    "rglob",
    "iterdir",
    "connect",
}
OS_CALLS = {
    "replace",
    "rename",
    "remove",
    "makedirs",
    "mkdir",
    "open",
    "fsync",
    "listdir",
    "scandir",
}
IO_MODULES = {"sqlite3", "pysqlite3", "sqlite_vec", "shutil", "tempfile", "psycopg", "onnxruntime"}


def _modules() -> dict[str, Path]:
    found = {}
    for folder, package in FOLDERS.items():
        for path in (REPO / folder).rglob("*.py"):
            parts = path.relative_to(REPO / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((package, *parts))] = path
    return found


MODULES = _modules()


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """(swarmmem modules imported, other top-level modules imported) by the file at ``path``."""
    ours: set[str] = set()
    others: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        for name in names:
            if name.startswith("swarmmem"):
                target = _resolve(name)
                if target is not None:
                    ours.add(target)
            else:
                others.add(name.split(".")[0])
    return ours, others


GRAPH = {name: _imports(path) for name, path in MODULES.items()}


def _edges(name: str) -> set[str]:
    return {t for t in GRAPH[name][0] if t != name and not name.startswith(t + ".")}


def test_the_source_tree_was_found() -> None:
    """The checks below read real modules (a moved folder would make them vacuous)."""
    assert {"swarmmem.memory", "swarmmem.bootstrap", "swarmmem.core.recall.pipeline"} <= set(
        MODULES
    )
    assert sum(1 for m in MODULES if m.startswith("swarmmem.adapters.")) > 10


def test_no_import_cycles() -> None:
    """No module reaches itself through the imports of others (Tarjan's strongly connected
    components over every import, function-level ones included)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in _edges(node):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in sorted(MODULES):
        if name not in index:
            visit(name)
    assert cycles == []


@pytest.mark.parametrize(
    ("layer", "allowed"),
    [
        ("swarmmem.ports", ("swarmmem.ports", "swarmmem.core.model")),
        ("swarmmem.core", ("swarmmem.core", "swarmmem.ports", "swarmmem._speedups")),
        ("swarmmem._speedups", ("swarmmem._speedups",)),
    ],
)
def test_inner_layers_import_only_what_the_rule_allows(
    layer: str, allowed: tuple[str, ...]
) -> None:
    """Ports see only the model; core sees core, ports and the kernel selectors."""
    bad = {
        name: sorted(t for t in _edges(name) if not t.startswith(allowed))
        for name in MODULES
        if name.startswith(layer)
    }
    assert {k: v for k, v in bad.items() if v} == {}


def test_adapters_never_import_the_composition_root() -> None:
    """Adapters import core, ports, kernels and each other, nothing of ``swarmmem/``."""
    inner = ("swarmmem.core", "swarmmem.ports", "swarmmem.adapters", "swarmmem._speedups")
    bad = {
        name: sorted(t for t in _edges(name) if not t.startswith(inner))
        for name in MODULES
        if name.startswith("swarmmem.adapters")
    }
    assert {k: v for k, v in bad.items() if v} == {}


def test_only_the_registry_and_bootstrap_import_adapters() -> None:
    """Everything else in ``swarmmem/`` gets adapters from the composition root."""
    inner = ("swarmmem.core", "swarmmem.ports", "swarmmem.adapters", "swarmmem._speedups")
    bad = {
        name: sorted(t for t in _edges(name) if t.startswith("swarmmem.adapters"))
        for name in MODULES
        if not name.startswith(inner) and name not in COMPOSITION_ROOT
    }
    assert {k: v for k, v in bad.items() if v} == {}


def test_core_does_no_io() -> None:
    """No file, database or model call in core: it reaches them through ports."""
    offenders: dict[str, list[str]] = {}
    for name, path in MODULES.items():
        if not name.startswith(("swarmmem.core", "swarmmem.ports")):
            continue
        found = sorted(GRAPH[name][1] & IO_MODULES)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                on_os = isinstance(func, ast.Attribute) and getattr(func.value, "id", "") == "os"
                if called in IO_CALLS or (on_os and called in OS_CALLS):
                    found.append(f"{called}() at line {node.lineno}")
        if found:
            offenders[name] = found
    assert offenders == {}


def test_readme_layout_table_matches_the_tree() -> None:
    """Every folder of the "Where things live" table (docs/layout.md) exists, and every
    package folder of the tree has a row (its own, or rows for the folders inside it)."""
    readme = (REPO / "docs" / "layout.md").read_text(encoding="utf-8")
    section = readme.split("## Where things live", 1)[1].split("\n## ", 1)[0]
    listed = {
        line.split("`")[1].rstrip("/")
        for line in section.splitlines()
        if line.startswith("| `") and line.count("`") >= 2
    }
    assert listed, "docs/layout.md has no layout table"
    missing = sorted(folder for folder in listed if not (REPO / folder).is_dir())
    packages = {
        str(init.parent.relative_to(REPO))
        for folder in FOLDERS
        for init in (REPO / folder).rglob("__init__.py")
    }
    unlisted = sorted(
        pkg for pkg in packages if not any(f == pkg or f.startswith(pkg + "/") for f in listed)
    )
    assert (missing, unlisted) == ([], [])


EDGES = ("swarmmem.hooks", "swarmmem.cli", "swarmmem.mcp", "swarmmem.ui")
"""The edges: they call typed use cases on ``Memory`` (or the services it exposes)."""
INTERNALS = {"runtime", "_rt", "store", "scoped_store"}
"""Attributes that reach past the facade: the composition root and raw stores."""
BUILDERS = ("swarmmem.bootstrap", "swarmmem.transfers")
"""The composition root's builders (the registry's capability metadata is the edges' to read)."""
NOT_YET: dict[str, int] = {}
"""Edge modules that still reach past the facade, and how many times at most (none now:
``migrate`` and ``postgres-rls`` go through ``Memory.migrate_to`` and
``Memory.postgres_rls``); a count may only fall."""


def _edge_internals(name: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(MODULES[name].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in INTERNALS:
            found.append(f".{node.attr} at line {node.lineno}")
        elif isinstance(node, ast.ImportFrom) and node.module in BUILDERS:
            found.append(f"import from {node.module} at line {node.lineno}")
    return found


@pytest.mark.parametrize("edge", EDGES)
def test_edges_reach_no_runtime_and_no_raw_store(edge: str) -> None:
    """Hooks, CLI, MCP server and web viewer use ``Memory`` and its typed use cases: no
    ``.runtime`` (or ``_rt``), no raw ``.store`` or ``.scoped_store`` read, nothing imported
    from the bootstrap or its transfers (rule 12 of the architecture; the registry's capability
    metadata is theirs to read)."""
    names = [n for n in MODULES if n == edge or n.startswith(edge + ".")]
    assert names, f"no module of {edge} was found"
    over = {
        name: found for name in names if len(found := _edge_internals(name)) > NOT_YET.get(name, 0)
    }
    assert over == {}


def test_the_edge_rule_sees_a_reach_past_the_facade() -> None:
    """The check above finds each way past the facade (it would pass vacuously otherwise)."""
    code = (
        "from swarmmem.bootstrap import Runtime\n"
        "from swarmmem.transfers import open_store\n"
        "def f(mem):\n    return mem.runtime.writes, mem.store.count(), mem._rt, x.scoped_store\n"
    )
    found = [
        node.attr if isinstance(node, ast.Attribute) else node.module
        for node in ast.walk(ast.parse(code))
        if (isinstance(node, ast.Attribute) and node.attr in INTERNALS)
        or (isinstance(node, ast.ImportFrom) and node.module in BUILDERS)
    ]
    assert sorted(found) == [
        "_rt",
        "runtime",
        "scoped_store",
        "store",
        "swarmmem.bootstrap",
        "swarmmem.transfers",
    ]


def _untyped_memories(source: str) -> list[str]:
    """The parameters named ``mem`` that are not annotated, or annotated ``Any``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = node.args
            for arg in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
                if arg.arg == "mem" and (
                    arg.annotation is None or ast.unparse(arg.annotation) in ("Any", "typing.Any")
                ):
                    found.append(f"{node.name} at line {node.lineno}")
    return found


@pytest.mark.parametrize("edge", EDGES)
def test_edges_type_the_memory_they_are_handed(edge: str) -> None:
    """An edge function handed a ``Memory`` says so (``mem: Memory``), so that the type checker
    follows every call an edge makes into the facade."""
    names = [n for n in MODULES if n == edge or n.startswith(edge + ".")]
    over = {
        name: found
        for name in names
        if (found := _untyped_memories(MODULES[name].read_text(encoding="utf-8")))
    }
    assert over == {}


def test_the_typing_rule_sees_an_untyped_memory() -> None:
    code = "def f(mem: Any):\n    pass\ndef g(x, mem):\n    pass\ndef h(mem: Memory):\n    pass\n"
    assert _untyped_memories(code) == ["f at line 1", "g at line 3"]

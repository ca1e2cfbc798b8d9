"""The shape of the command line package: no import cycle, a root module that imports no command
module, every command module registered, and nothing outside the CLI importing it."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import click

import swarmmem.cli
from swarmmem.cli import app, data, migrate
from swarmmem.registry import choices

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / "src" / "swarmmem" / "cli"
PACKAGE = "swarmmem.cli"

OUTSIDE_USERS: dict[str, set[str]] = {"src/swarmmem/_entry.py": {"swarmmem.cli"}}
"""Modules outside ``swarmmem/cli`` known to import it, and what they import: the console
script, which sends everything but a plain ``hook`` call to the command line."""


def _imported(tree: ast.AST, package: str) -> set[tuple[str, str | None]]:
    """``(module, name)`` for every import in ``tree``, at module level or inside functions.

    ``import a.b`` gives ``("a.b", None)``; ``from a import b`` gives ``("a", "b")`` (``b`` may
    be a submodule or an attribute). ``package`` resolves relative imports.
    """
    found: set[tuple[str, str | None]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.update((base, alias.name) for alias in node.names)
    return found


def cli_graph() -> dict[str, set[str]]:
    """``module -> cli modules it imports`` over ``swarmmem/cli/*.py`` (``__init__`` included)
    and its subpackages (``render/``: one node, what any of its files imports).

    Importing a submodule also runs the package's ``__init__``; that implicit edge is left out:
    only what each file names counts (``from swarmmem.cli import main`` names ``__init__``).
    """
    files = {path.stem: [path] for path in CLI.glob("*.py")}
    files.update(
        {path.parent.name: sorted(path.parent.glob("*.py")) for path in CLI.glob("*/__init__.py")}
    )
    graph: dict[str, set[str]] = {}
    for stem, paths in files.items():
        edges = set()
        for path in paths:
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for module, name in _imported(tree, PACKAGE):
                if module == PACKAGE:
                    edges.add(name if name in files else "__init__")
                elif module.startswith(PACKAGE + "."):
                    edges.add(module.removeprefix(PACKAGE + ".").split(".")[0])
        graph[stem] = edges - {stem}
    return graph


def find_cycle(graph: Mapping[str, Iterable[str]]) -> list[str] | None:
    """One import cycle of ``graph`` as a path ``[a, b, ..., a]``, or ``None``."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)) is not None:
            return found
    return None


def reachable(graph: Mapping[str, Iterable[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_the_cycle_finder_finds_a_cycle_and_only_a_cycle() -> None:
    """The check below can fail: a three-module circle is found, a diamond is not a circle."""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": set()}) is None


def test_no_import_cycle_among_the_cli_modules() -> None:
    """No module of swarmmem/cli imports itself back, even through a function-level import."""
    graph = cli_graph()
    assert {"__init__", "app", "render", "memory"} <= set(graph)
    assert find_cycle(graph) is None


def test_the_root_module_imports_no_command_module() -> None:
    """swarmmem.cli.app (the root group) reaches no command module; the commands attach to it."""
    graph = cli_graph()
    commands = set(swarmmem.cli.COMMANDS.values())
    assert reachable(graph, "app") & (commands | {"__init__"}) == set()
    assert reachable(graph, "render") == set()  # the renderers import nothing of the CLI


def test_every_command_module_is_registered_and_attaches_to_the_root_group() -> None:
    """Each module besides app, render and the entry points is named in ``COMMANDS``, and
    the commands each one attaches to the root group are exactly those ``COMMANDS`` gives it
    (so a command is found where the lazy group looks for it)."""
    expected = {path.stem for path in CLI.glob("*.py")} - {"__init__", "__main__", "app", "render"}
    assert set(swarmmem.cli.COMMANDS.values()) == expected
    swarmmem.cli.command_modules()
    assert swarmmem.cli.main is app.main
    attached = {
        name: command.callback.__module__.removeprefix(PACKAGE + ".")
        for name, command in app.main.commands.items()
        if command.callback is not None
    }
    assert attached == swarmmem.cli.COMMANDS
    assert {"status", "recall", "pending", "evaluate", "migrate", "mcp"} <= set(app.main.commands)


def test_a_command_imports_only_its_own_module(tmp_path: Path) -> None:
    """``swarmmem recall`` imports the memory commands, not the evaluator, the data commands
    or numpy (embeddings off); ``--help`` lists every command."""
    import json
    import subprocess
    import sys

    (tmp_path / ".opencode").mkdir()
    config = {"memory": {"enabled": True}}
    (tmp_path / ".opencode" / "opencode-swarm.json").write_text(json.dumps(config))
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "import swarmmem.cli as c\n"
        f"args = ['--root', {str(tmp_path)!r}, 'recall', 'how are tests run', '--json']\n"
        "r = CliRunner().invoke(c.main, args)\n"
        "assert r.exit_code == 0, r.output\n"
        "cli = {'.'.join(m.split('.')[:3]) for m in sys.modules if m.startswith('swarmmem.cli.')}\n"
        "print(sorted(cli))\n"
        "print('numpy' in sys.modules)\n"
        "r = CliRunner().invoke(c.main, ['--help'])\n"
        "print(sorted(c.COMMANDS) == sorted(c.main.list_commands(None)), 'evaluate' in r.output)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/"
    ).stdout.splitlines()
    assert out[0] == str(["swarmmem.cli.app", "swarmmem.cli.memory", "swarmmem.cli.render"])
    assert out[1] == "False"
    assert out[2] == "True True"


def test_nothing_outside_the_cli_imports_it() -> None:
    """The MCP server, the library and the architecture folders never import swarmmem.cli
    (besides the known users listed above)."""
    found: dict[str, set[str]] = {}
    folders = [REPO / "src" / "swarmmem", REPO / "core", REPO / "ports", REPO / "adapters"]
    for folder in folders:
        for path in folder.rglob("*.py"):
            if CLI in path.parents:
                continue
            imported = _imported(ast.parse(path.read_text(encoding="utf-8")), "swarmmem")
            hits = {m for m, _ in imported if m == PACKAGE or m.startswith(PACKAGE + ".")}
            if hits:
                found[path.relative_to(REPO).as_posix()] = hits
    assert not [path for path in found if path.startswith("src/swarmmem/mcp/")]
    assert found == OUTSIDE_USERS


def _choice(command: click.Command, option: str) -> tuple[str, ...]:
    param = next(p for p in command.params if p.name == option)
    assert isinstance(param.type, click.Choice)
    return tuple(param.type.choices)


def test_store_choices_are_registered_store_names() -> None:
    """``migrate --to`` and ``evaluate --provider`` offer registered stores only."""
    stores = set(choices("store"))
    assert _choice(app.main.commands["migrate"], "target_kind") == migrate.TARGETS
    assert set(migrate.TARGETS) <= stores
    assert _choice(app.main.commands["evaluate"], "providers") == data.EVALUATION_PROVIDERS
    assert set(data.EVALUATION_PROVIDERS) <= stores

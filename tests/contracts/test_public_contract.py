"""The public contract, frozen: commands, flags, exit codes, JSON shapes and the MCP tools.

Golden files in ``tests/contracts/golden/`` hold what users and agents rely on:

* ``cli_commands.json``: every command and subcommand with its arguments and options (names,
  flags, types, choices, defaults, required);
* ``cli_results.json``: the exit code and the JSON shape (keys and value types, not values)
  of each command of a scripted session on a new project, failures included;
* ``python_results.json``: the same for the ``Memory`` methods that return dicts;
* ``mcp_tools.json``: each MCP tool as the server lists it (description, input and output
  schemas, annotations), the curator's tools included.

A change that moves any of them fails here; when the change is meant, rerun with
``SWARMMEM_UPDATE_GOLDEN=1`` and commit the new files with it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import attrs
import click
import pytest
from click.testing import CliRunner
from factories import propose_fact

import swarmmem
from swarmmem.cli import main

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("SWARMMEM_UPDATE_GOLDEN") == "1"
CONFIG = {"memory": {"enabled": True, "projectId": "contract-project"}}
_ID = re.compile(r"\b(mem|prop|bundle)_[0-9a-z_]+\b")


def check_golden(name: str, value: Any) -> None:
    """``value`` equals the golden file ``name`` (written instead when updating)."""
    path = GOLDEN / name
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.is_file(), f"{path} is missing: run with SWARMMEM_UPDATE_GOLDEN=1"
    assert json.loads(path.read_text(encoding="utf-8")) == value


def shape(value: Any) -> Any:
    """The structure of a JSON value: objects keep their keys, arrays the distinct shapes
    of their items, scalars become their JSON type (numbers are one type)."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        shapes: list[Any] = []
        for item in value:
            found = shape(item)
            if found not in shapes:
                shapes.append(found)
        return sorted(shapes, key=lambda s: json.dumps(s, sort_keys=True))
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "string"


# ----------------------------------------------------------------------------- commands


def _default(param: click.Parameter) -> Any:
    default = param.default
    if callable(default):
        return "<computed>"
    if isinstance(default, tuple | list):
        return list(default)
    if default is None or isinstance(default, str | int | float | bool):
        return default
    return "<unset>"


def _param(param: click.Parameter) -> dict[str, Any]:
    kind = param.type
    spec: dict[str, Any] = {
        "kind": "argument" if isinstance(param, click.Argument) else "option",
        "opts": sorted([*param.opts, *param.secondary_opts]),
        "type": kind.name,
        "required": param.required,
        "multiple": param.multiple,
        "default": _default(param),
    }
    if isinstance(kind, click.Choice):
        spec["choices"] = list(kind.choices)
    if isinstance(param, click.Option):
        spec["flag"] = param.is_flag
    return spec


def describe(command: click.Command, ctx: click.Context) -> dict[str, Any]:
    """A command's parameters and, for a group, its subcommands (recursively)."""
    out: dict[str, Any] = {"params": {p.name or "": _param(p) for p in command.params}}
    if isinstance(command, click.Group):
        out["commands"] = {}
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, name
            out["commands"][name] = describe(sub, click.Context(sub, parent=ctx, info_name=name))
    return out


def test_the_commands_and_their_flags() -> None:
    check_golden("cli_commands.json", describe(main, click.Context(main, info_name="swarmmem")))


# ----------------------------------------------------------------------------- a session


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".opencode").mkdir(parents=True)
    (root / ".opencode" / "opencode-swarm.json").write_text(json.dumps(CONFIG))
    (root / "README.md").write_text("# Project\n\nLint with ruff.\n")
    return root


def _first_id(text: str, prefix: str) -> str:
    for match in _ID.finditer(text):
        if match.group(0).startswith(prefix + "_"):
            return match.group(0)
    raise AssertionError(f"no {prefix} id in {text!r}")


def test_cli_exit_codes_and_json_shapes(tmp_path: Path) -> None:
    root = _project(tmp_path)
    runner = CliRunner()
    results: dict[str, Any] = {}

    def run(label: str, *args: str) -> str:
        done = runner.invoke(main, ["--root", str(root), *args])
        try:
            found: Any = shape(json.loads(done.stdout))
        except ValueError:
            found = "<text>"
        results[label] = {"exit": done.exit_code, "shape": found}
        return done.stdout

    run("status", "status", "--json")
    proposed = run(
        "propose", "propose", "--kind", "repo_convention", "--text",
        "Use ruff for lint and format.", "--rationale", "the style guide says so",
        "--evidence", "README.md", "--json",
    )  # fmt: skip
    proposal = _first_id(proposed, "prop")
    run("pending", "pending", "--json")
    curated = run("curate", "curate", proposal, "add", "--reason", "verified", "--json")
    memory = _first_id(curated, "mem")
    run("recall", "recall", "which linter do we use", "--json")
    run("outcome", "outcome", "--memory-id", memory, "--outcome", "useful", "--json")
    run("list", "list", "--json")
    run("show", "show", memory, "--json")
    for report in ("value-log", "recall-log", "stale", "compact", "reflect", "audit-verify"):
        run(report, report, "--json")
    run("forget", "forget", memory, "--reason", "obsolete", "--json")
    # failures: an unknown id, a short query, a bad choice, an unknown flag
    run("show unknown id", "show", "mem_0000000000000000", "--json")
    run("recall too short", "recall", "x", "--json")
    run("propose bad kind", "propose", "--kind", "nope", "--text", "t", "--rationale", "r")
    run("unknown flag", "status", "--no-such-flag")
    check_golden("cli_results.json", results)


def _fields(value: Any) -> dict[str, Any]:
    """An attrs result's class and field names."""
    return {"type": type(value).__name__, "fields": sorted(attrs.fields_dict(type(value)))}


def _report(value: Any) -> dict[str, Any]:
    """A report's class and field names, and the shape of its JSON form."""
    return {**_fields(value), "json": shape(value.to_json())}


def test_python_return_shapes(tmp_path: Path) -> None:
    root = _project(tmp_path)
    results: dict[str, Any] = {}
    with swarmmem.open(root, context={"agent_role": "coder"}) as mem:
        proposal = propose_fact(
            mem,
            "Use ruff for lint and format.",
            kind="repo_convention",
            evidence="README.md",
            rationale="the style guide says so",
        )
        results["propose"] = _fields(proposal)
        results["pending"] = _report(mem.pending())
        change = mem.curate(proposal.id, "add", reason="verified")
        results["curate"] = _fields(change)
        memory = change.memory_id
        assert memory is not None
        results["inspect"] = _report(mem.inspect(memory))
        results["inspect_proposal"] = _report(mem.inspect(proposal.id))
        results["recall"] = _fields(mem.recall("which linter do we use"))
        for report in ("value_log", "recall_log", "stale", "reflect", "consolidate", "compact"):
            results[report] = _report(getattr(mem, report)())
        results["verify"] = _report(mem.verify(propose=True))
        results["rebuild_embedding_index"] = _report(mem.rebuild_embedding_index())
        results["forget"] = _report(mem.forget(memory, reason="obsolete"))
        results["undo_decision"] = _report(mem.undo_decision(proposal.id))
    check_golden("python_results.json", results)


def test_mcp_tools() -> None:
    from swarmmem import mcp as mcp_server
    from swarmmem.mcp import curator as mcp_curator

    names = (*mcp_server.TOOL_NAMES, *mcp_curator.CURATOR_TOOLS)
    tools = {
        name: {
            "description": mcp_server.DESCRIPTIONS[name],
            "inputSchema": mcp_server.SCHEMAS[name],
            "outputSchema": mcp_server.OUTPUT_SCHEMAS[name],
            "annotations": mcp_server.ANNOTATIONS[name],
        }
        for name in names
    }
    check_golden("mcp_tools.json", tools)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": [1, 2.5], "b": None}, {"a": ["number"], "b": "null"}),
        ([{"x": "s"}, {"x": "t"}, {"y": True}], [{"x": "string"}, {"y": "boolean"}]),
    ],
)
def test_shape_keeps_structure_not_values(value: Any, expected: Any) -> None:
    assert shape(value) == expected

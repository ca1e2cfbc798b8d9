"""The MCP server driven by the official MCP SDK's own stdio client, as an agent host would."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from factories import cite
from jsonschema import Draft202012Validator
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

import swarmmem
from swarmmem.core.model.errors import MemoryValidationError, NotFoundError
from swarmmem.mcp import (
    ALIASES,
    ANNOTATIONS,
    OUTCOME,
    OUTPUT_SCHEMAS,
    PROPOSE,
    RECALL,
    SCHEMAS,
    TOOL_NAMES,
    MemoryTools,
    build_server,
    validate_arguments,
)
from swarmmem.memory import DISABLED_MESSAGE

FACT = "Run the unit tests with `pytest tests/unit -q`; the slow suite needs the dev extra."
CONSOLE_SCRIPT = Path(sys.executable).parent / ("swarmmem.exe" if os.name == "nt" else "swarmmem")
#: swarm_memory_propose arguments adding FACT, sourced
ADD_FACT = {
    "operation": "add",
    "kind": "repo_convention",
    "text": FACT,
    "rationale": "r",
    "evidenceRefs": ["pyproject.toml"],
}
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def make_project(tmp_path: Path, memory: dict[str, Any] | None = None) -> Path:
    """A project folder whose .opencode/opencode-swarm.json holds ``memory``."""
    root = tmp_path / "project"
    (root / ".opencode").mkdir(parents=True)
    cite(root, "pyproject.toml", "Makefile", "a.py", *(f"f{i}.py" for i in range(21)))
    section = {"enabled": True} if memory is None else memory
    (root / ".opencode" / "opencode-swarm.json").write_text(
        json.dumps({"memory": section}), encoding="utf-8"
    )
    return root


def _child_env() -> dict[str, str]:
    keep = ("SWARMMEM_NO_EXTENSIONS", "PYTHONPATH")
    return {key: os.environ[key] for key in keep if key in os.environ}


def run_client(
    root: Path,
    scenario: Callable[[Client], Awaitable[Any]],
    *cli_options: str,
    mode: str = "auto",
) -> tuple[Any, str]:
    """Spawn ``python -m swarmmem.cli --root ROOT [options] mcp``, run ``scenario`` on a client.

    Returns the scenario's result and everything the server wrote to stderr.
    """
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "swarmmem.cli", "--root", str(root), *cli_options, "mcp"],
        cwd=str(root),
        env=_child_env(),
    )
    errlog_path = root.parent / "server-stderr.log"
    outcome: dict[str, Any] = {}

    async def main() -> None:
        with errlog_path.open("w", encoding="utf-8") as errlog:
            transport = stdio_client(params, errlog=errlog)
            async with Client(transport, mode=mode, read_timeout_seconds=60) as client:
                outcome["result"] = await scenario(client)

    anyio.run(main)
    return outcome["result"], errlog_path.read_text(encoding="utf-8")


def payload(result: Any) -> dict[str, Any]:
    """The JSON text of a tool result, parsed; it must equal the structured content."""
    assert len(result.content) == 1
    data = json.loads(result.content[0].text)
    assert result.content[0].text == json.dumps(data, indent=2, ensure_ascii=False)
    assert result.structured_content == data
    return data


# ----------------------------------------------------------------------- over stdio
@pytest.mark.slow
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_lists_the_three_tools_with_closed_schemas(tmp_path: Path, mode: str) -> None:
    """tools/list offers recall, propose and outcome with strict, bounded input schemas."""
    root = make_project(tmp_path)

    async def scenario(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools, stderr = run_client(root, scenario, mode=mode)
    by_name = {tool.name: tool for tool in tools}
    assert set(by_name) == set(TOOL_NAMES)
    for tool in tools:
        schema = tool.input_schema
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert "scope" not in schema["properties"]
        assert tool.description
    assert {name: set(tool.input_schema["properties"]) for name, tool in by_name.items()} == {
        RECALL: {"query", "task", "kinds", "maxItems"},
        PROPOSE: {
            "operation",
            "kind",
            "text",
            "targetMemoryId",
            "relatedMemoryIds",
            "rationale",
            "evidenceRefs",
        },
        OUTCOME: {"memoryId", "question", "outcome", "correction", "anchors"},
    }
    recall = by_name[RECALL].input_schema
    assert recall["required"] == ["query"]
    assert recall["properties"]["task"]["type"] == "string"
    assert recall["properties"]["query"]["minLength"] == 3
    assert (
        recall["properties"]["maxItems"]["minimum"],
        recall["properties"]["maxItems"]["maximum"],
    ) == (1, 20)
    propose = by_name[PROPOSE].input_schema
    assert set(propose["required"]) == {"operation", "rationale"}
    assert propose["properties"]["evidenceRefs"]["maxItems"] == 20
    outcome = by_name[OUTCOME].input_schema
    assert outcome["required"] == ["outcome"]
    anchors = outcome["properties"]["anchors"]
    assert anchors["maxItems"] == 20
    assert anchors["items"]["additionalProperties"] is False
    assert anchors["items"]["required"] == ["file"]
    assert "Traceback" not in stderr


@pytest.mark.slow
def test_propose_curate_recall_outcome_loop(tmp_path: Path) -> None:
    """A proposal made over MCP, approved by a curator, is recalled and takes an outcome."""
    root = make_project(tmp_path)
    seen: dict[str, Any] = {}

    async def scenario(client: Client) -> None:
        proposed = await client.call_tool(
            PROPOSE,
            {
                "operation": "add",
                "kind": "test_pattern",
                "text": FACT,
                "rationale": "Agents keep running the slow suite.",
                "evidenceRefs": ["pyproject.toml"],
            },
        )
        assert not proposed.is_error
        seen["proposal"] = payload(proposed)
        early = payload(await client.call_tool(RECALL, {"query": "how do I run the unit tests"}))
        seen["before"] = early
        # A trusted reviewer approves through the library while the server keeps running.
        with swarmmem.open(root, context={"agent_role": "curator"}) as curator:
            change = curator.curate(seen["proposal"]["proposal_id"], "add", reason="sourced")
        seen["memory_id"] = change.memory_id
        recalled = await client.call_tool(
            RECALL,
            {"query": "how do I run the unit tests", "kinds": ["test_pattern"], "maxItems": 5},
        )
        assert not recalled.is_error
        seen["recall"] = payload(recalled)
        outcome = await client.call_tool(
            OUTCOME,
            {
                "memoryId": change.memory_id,
                "outcome": "useful",
                "anchors": [{"file": "pyproject.toml"}, {"file": "tests/unit", "symbol": "test_x"}],
            },
        )
        assert not outcome.is_error
        seen["outcome"] = payload(outcome)

    _, stderr = run_client(root, scenario, "--session", "sess-mcp-1")

    proposal = seen["proposal"]
    assert set(proposal) == {
        "success",
        "proposal_id",
        "status",
        "operation",
        "memory_id",
        "rejection_reason",
        "needs_rephrasing",
        "similar",
        "duplicate_of",
        "message",
    }
    assert proposal["needs_rephrasing"] == [] and proposal["similar"] == []
    assert proposal["success"] is True
    assert proposal["status"] == "pending"
    assert proposal["operation"] == "add"
    assert proposal["message"] == "Memory proposal created. Durable memory was not written."
    assert seen["before"]["memory_ids"] == []  # pending proposals are never recalled

    recall = seen["recall"]
    assert set(recall) == {
        "success",
        "bundle_id",
        "memory_ids",
        "total",
        "token_estimate",
        "signals",
        "prompt_block",
    }
    assert recall["memory_ids"] == [seen["memory_id"]] == [proposal["memory_id"]]
    assert recall["total"] == 1
    assert recall["bundle_id"].startswith("bundle_")
    assert recall["bundle_id"] in recall["prompt_block"]
    assert FACT in recall["prompt_block"]
    assert recall["signals"][0]["memory_id"] == seen["memory_id"]
    assert recall["token_estimate"] > 0

    result = seen["outcome"]
    assert result["success"] is True
    assert result["memory_id"] == seen["memory_id"]
    assert result["outcome"] == "useful"
    assert result["outcomes"] == 1
    assert result["event_id"].startswith("tool-")

    with swarmmem.open(root) as mem:
        stored = mem.store.get_proposal(proposal["proposal_id"])
        events = mem.store.list_outcomes(seen["memory_id"])
    assert stored is not None
    assert stored.proposed_by.run_id == "sess-mcp-1"  # the session comes from --session
    assert [event.id for event in events] == [result["event_id"]]
    assert {a.file for a in events[0].anchors} == {"pyproject.toml", "tests/unit"}
    assert "Traceback" not in stderr


#: Calls the tools' schemas refuse, each with a part of its message: checked in process
#: (one MemoryValidationError naming the argument) and over stdio (a tool error).
INVALID_ARGUMENTS: list[tuple[str, dict[str, Any], str]] = [
    (RECALL, {"query": "ab"}, "query must be a string of 3 to 2000 characters; got 2"),
    (
        RECALL,
        {"query": "   x  "},
        "query must have at least 3 characters besides white space; got 1",
    ),
    (
        RECALL,
        {"query": "tests", "scope": {"type": "workspace"}},
        "unknown argument(s) 'scope'; accepted: query, task, kinds, maxItems",
    ),
    (RECALL, {"query": "tests", "maxItems": 0}, "maxItems must be an integer from 1 to 20"),
    (RECALL, {"query": "tests", "max_items": 0}, "maxItems (given as max_items) must be"),
    (RECALL, {"query": "tests", "kinds": ["nonsense"]}, "kinds[0] must be one of"),
    (RECALL, {}, "missing required argument(s): query (a string of 3 to 2000 characters)"),
    (RECALL, {"query": 42}, "query must be a string of 3 to 2000 characters; got 42"),
    (RECALL, {"query": "tests", "task": 7}, "task must be a non-empty string of at most"),
    (RECALL, {"query": "tests", "maxItems": True}, "maxItems must be an integer from 1 to"),
    (
        RECALL,
        {"query": "tests", "maxItems": 21},
        "maxItems must be an integer from 1 to 20; got 21",
    ),
    (
        PROPOSE,
        {"operation": "add", "rationale": "why"},
        "kind (one of user_preference,",
    ),
    (
        PROPOSE,
        {"operation": "add", "kind": "repo_convention"},
        "missing required argument(s): rationale (a non-empty string of at most 2000",
    ),
    (
        PROPOSE,
        {
            "operation": "add",
            "kind": "repo_convention",
            "text": "x",
            "rationale": "r",
            "evidenceRefs": [f"f{i}.py" for i in range(21)],
        },
        "evidenceRefs must be a list of at most 20 items",
    ),
    (
        PROPOSE,
        {"operation": "add", "kind": "repo_convention", "text": "Use tabs.", "rationale": "r"},
        "evidenceRefs must list at least one source",
    ),
    (
        PROPOSE,
        {"operation": "create", "rationale": "r"},
        'operation must be one of add, update, delete, ignore, merge, supersede; got "create"',
    ),
    (
        PROPOSE,
        {"operation": "add", "rationale": ""},
        "rationale must be a non-empty string of at most 2000 characters; got an empty string",
    ),
    (
        PROPOSE,
        {"operation": "ignore", "rationale": "   "},
        "rationale must not be blank",
    ),
    (
        PROPOSE,
        {"operation": "add", "kind": "todo", "rationale": "r"},
        "text (the fact, a non-empty string of at most 2000 characters) is required for "
        "operation add",
    ),
    (
        PROPOSE,
        {"operation": "add", "kind": "api_finding", "text": "x", "rationale": "r"},
        "evidenceRefs must list at least one source (file path, URL, commit or "
        "evidence-cache ref) for kind api_finding",
    ),
    (
        PROPOSE,
        {
            "operation": "add",
            "kind": "project_fact",
            "text": "x",
            "rationale": "r",
            "evidence_refs": [" "],
        },
        "evidenceRefs (given as evidence_refs) must list at least one source",
    ),
    (
        PROPOSE,
        {"operation": "delete", "rationale": "r"},
        "targetMemoryId is required for operation delete",
    ),
    (
        PROPOSE,
        {"operation": "merge", "rationale": "r", "related_memory_ids": ["mem_a"]},
        "relatedMemoryIds (given as related_memory_ids) must list 2 to 8 memory ids for "
        "operation merge; got 1",
    ),
    (
        OUTCOME,
        {"memory_id": "mem_0123456789abcdef", "question": "which?", "outcome": "useful"},
        "exactly one of memoryId (given as memory_id) or question is required; got both",
    ),
    (
        OUTCOME,
        {"question": "which?", "outcome": "useful", "anchors": [{"file": "a.py"}] * 21},
        "anchors must be a list of at most 20 items, each an object with file (required) "
        "and symbol; got 21 items",
    ),
    (
        OUTCOME,
        {"question": "which?", "outcome": "corrected"},
        "correction is required when outcome is corrected",
    ),
    (
        OUTCOME,
        {"memory_id": "mem_XYZ", "outcome": "useful"},
        'memoryId (given as memory_id) must be a string matching ^mem_[a-f0-9]{16}$; got "mem_XYZ"',
    ),
    (
        OUTCOME,
        {"outcome": "useful"},
        "exactly one of memoryId or question is required; got neither",
    ),
    (OUTCOME, {"question": "  ", "outcome": "useful"}, "question must not be blank"),
    (
        OUTCOME,
        {"question": "q", "outcome": "dead_end", "correction": "x"},
        "correction is only allowed when outcome is corrected; got outcome dead_end",
    ),
    (
        OUTCOME,
        {"outcome": "useful", "anchors": [{"symbol": "x"}]},
        "anchors[0]: missing required key(s): file (a non-empty string of at most 1000",
    ),
    (
        OUTCOME,
        {"outcome": "useful", "anchors": [{"file": "a", "line": 3}]},
        "anchors[0]: unknown key(s) 'line'; accepted: file, symbol",
    ),
    (
        OUTCOME,
        {"outcome": "useful", "question": "q", "correction": "x" * 4001},
        "correction must be a non-empty string of at most 4000 characters; got 4001",
    ),
]


@pytest.mark.slow
def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(tmp_path: Path) -> None:
    """Every invalid call returns isError with a message naming the problem; later calls work."""
    root = make_project(tmp_path)
    bad_calls: list[tuple[str, dict[str, Any], str]] = [
        *INVALID_ARGUMENTS,
        (
            OUTCOME,
            {"question": "which?", "outcome": "useful", "anchors": [{"file": "/etc/passwd"}]},
            "repository-relative",
        ),
        (OUTCOME, {"memoryId": "mem_0123456789abcdef", "outcome": "useful"}, "was not found"),
        ("swarm_memory_delete_everything", {}, "unknown tool"),
    ]
    results: list[Any] = []

    async def scenario(client: Client) -> Any:
        for name, arguments, _ in bad_calls:
            results.append(await client.call_tool(name, arguments))
        scratch = await client.call_tool(
            PROPOSE,
            {
                "operation": "add",
                "kind": "scratch",
                "text": "Halfway through the parser port.",
                "rationale": "resume point",
            },
        )
        good = await client.call_tool(RECALL, {"query": "parser port"})
        return scratch, good

    (scratch, good), stderr = run_client(root, scenario)

    for (name, _, expected), result in zip(bad_calls, results, strict=True):
        assert result.is_error, name
        data = payload(result)
        assert data["success"] is False
        assert expected in data["message"], (name, data["message"])
        assert data["error"] in {"memory_validation_error", "not_found", "unknown_tool"}
    assert not good.is_error
    assert payload(good)["success"] is True
    # Without --session the server runs under a generated UUID session.
    scratch_data = payload(scratch)
    with swarmmem.open(root) as mem:
        stored = mem.store.get_proposal(scratch_data["proposal_id"])
    assert stored is not None and stored.proposed_record is not None
    assert UUID_RE.match(stored.proposed_by.run_id or "")
    assert stored.proposed_record.producer_session_id == stored.proposed_by.run_id
    assert "Traceback" not in stderr


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_tools_list_annotations_and_output_schemas(tmp_path: Path, mode: str) -> None:
    """Recall is read-only, propose and outcome only add; each tool has a valid output schema."""
    root = make_project(tmp_path)

    async def scenario(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools, _ = run_client(root, scenario, mode=mode)
    by_name = {tool.name: tool for tool in tools}
    hints = {
        name: tool.annotations.model_dump(by_alias=True, exclude_none=True)
        for name, tool in by_name.items()
        if tool.annotations is not None
    }
    assert hints == {name: ANNOTATIONS[name] for name in TOOL_NAMES}
    assert hints[RECALL]["readOnlyHint"] is True
    assert hints[RECALL]["openWorldHint"] is False
    for name in (PROPOSE, OUTCOME):
        assert hints[name]["readOnlyHint"] is False
        assert hints[name]["destructiveHint"] is False
        assert hints[name]["openWorldHint"] is False
    for name, tool in by_name.items():
        schema = tool.output_schema
        assert schema == OUTPUT_SCHEMAS[name]
        Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object"
        titles = [branch["title"] for branch in schema["anyOf"]]
        assert titles[1:] == ["memory disabled", "error"]


def _documented_keys(schema: dict[str, Any], data: dict[str, Any]) -> bool:
    """Whether a branch of ``schema`` accepts ``data`` and lists every key of it."""
    return any(
        Draft202012Validator(branch).is_valid(data) and set(data) <= set(branch["properties"])
        for branch in schema["anyOf"]
    )


@pytest.mark.slow
def test_structured_content_matches_the_output_schema(tmp_path: Path) -> None:
    """Every kind of result, errors and the disabled result included, validates and is listed."""
    root = make_project(tmp_path, {"enabled": True, "reflection": {"enabled": True}})
    with swarmmem.open(root) as mem:
        mem.import_records(
            [{"kind": "test_pattern", "text": FACT, "source": {"type": "file", "filePath": "x"}}]
        )
    config = root / ".opencode" / "opencode-swarm.json"
    calls: list[tuple[str, dict[str, Any]]] = [
        (RECALL, {"query": "run the unit tests", "task": "speed up CI"}),
        (RECALL, {"query": "nothing matches this zzzz"}),
        (
            PROPOSE,
            {"operation": "add", "kind": "todo", "text": "Port the parser.", "rationale": "r"},
        ),
        (
            PROPOSE,
            {
                "operation": "add",
                "kind": "todo",
                "text": "token AKIAABCDEFGHIJKLMNOP here",
                "rationale": "r",
            },
        ),
        (
            PROPOSE,
            {"operation": "delete", "targetMemoryId": "mem_0123456789abcdef", "rationale": "r"},
        ),
        (OUTCOME, {"question": "Which runner?", "outcome": "corrected", "correction": "pytest"}),
        (PROPOSE, {}),
        (OUTCOME, {"memoryId": "mem_0123456789abcdef", "outcome": "useful"}),
    ]

    async def scenario(client: Client) -> Any:
        listed = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
        results = [(name, await client.call_tool(name, args)) for name, args in calls]
        config.write_text(json.dumps({"memory": {"enabled": False}}), encoding="utf-8")
        # The client still holds the output schemas and validates the disabled result too.
        results += [(name, await client.call_tool(name, {})) for name in TOOL_NAMES]
        return listed, results

    (listed, results), stderr = run_client(root, scenario)
    seen = set()
    for name, result in results:
        data = payload(result)
        Draft202012Validator(listed[name]).validate(data)
        assert _documented_keys(listed[name], data), (name, data)
        seen.add((name, "error" if result.is_error else data.get("status", data["success"])))
    assert (RECALL, True) in seen and (OUTCOME, "complete") in seen
    assert {(PROPOSE, "pending"), (PROPOSE, "rejected"), (PROPOSE, "error")} <= seen
    assert (OUTCOME, "error") in seen
    assert {(name, False) for name in TOOL_NAMES} <= seen  # the disabled results
    outcome = payload(results[5][1])
    assert outcome["reflection_enabled"] is True and "reflection_entries" in outcome
    assert "Traceback" not in stderr


@pytest.mark.slow
def test_aliases_task_and_conflicts_over_stdio(tmp_path: Path) -> None:
    """The snake_case spellings still work, task changes the recall, and a conflict is refused."""
    root = make_project(tmp_path)
    facts = {
        "parser": "The parser tests run with pytest tests/parser and need the grammar fixtures.",
        "storage": "The storage tests run with pytest tests/storage and need a temp database.",
    }
    with swarmmem.open(root) as mem:
        mem.import_records(
            {"kind": "test_pattern", "text": text, "source": {"type": "file", "filePath": key}}
            for key, text in facts.items()
        )
        by_text = {record.text: record.id for record in mem.store.iter_all_records()}
        ids = {key: by_text[text] for key, text in facts.items()}
    query = "how do I run the tests"

    async def scenario(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for task in ("porting the parser grammar", "tuning the storage database"):
            result = await client.call_tool(RECALL, {"query": query, "task": task, "maxItems": 1})
            out[task] = payload(result)["memory_ids"]
        out["alias recall"] = payload(
            await client.call_tool(RECALL, {"query": query, "max_items": 1})
        )
        out["documented recall"] = payload(
            await client.call_tool(RECALL, {"query": query, "maxItems": 1})
        )
        out["alias propose"] = payload(
            await client.call_tool(
                PROPOSE,
                {
                    "operation": "supersede",
                    "kind": "test_pattern",
                    "text": "The parser tests run with `make test-parser`.",
                    "rationale": "The Makefile wraps pytest now.",
                    "target_memory_id": ids["parser"],
                    "evidence_refs": ["Makefile"],
                },
            )
        )
        out["alias outcome"] = payload(
            await client.call_tool(OUTCOME, {"memory_id": ids["storage"], "outcome": "useful"})
        )
        out["conflict"] = await client.call_tool(
            OUTCOME,
            {"memoryId": ids["storage"], "memory_id": ids["parser"], "outcome": "useful"},
        )
        return out

    out, stderr = run_client(root, scenario)
    assert out["porting the parser grammar"] == [ids["parser"]]
    assert out["tuning the storage database"] == [ids["storage"]]
    assert out["alias recall"]["memory_ids"] == out["documented recall"]["memory_ids"]
    assert out["alias recall"]["total"] == 1
    assert out["alias propose"]["status"] == "pending"
    assert out["alias outcome"]["memory_id"] == ids["storage"]
    assert out["alias outcome"]["outcomes"] == 1
    assert out["conflict"].is_error
    conflict = payload(out["conflict"])
    assert conflict["error"] == "memory_validation_error"
    assert conflict["message"] == (
        "invalid arguments for swarm_memory_outcome: memoryId and memory_id are two spellings "
        f'of one argument but were given different values ("{ids["storage"]}" and '
        f'"{ids["parser"]}"); give only memoryId'
    )
    with swarmmem.open(root) as mem:
        stored = mem.store.get_proposal(out["alias propose"]["proposal_id"])
    assert stored is not None
    assert stored.target_memory_id == ids["parser"]
    assert stored.evidence_refs == ("Makefile",)
    assert "Traceback" not in stderr


@pytest.mark.slow
def test_single_specific_errors_over_stdio(tmp_path: Path) -> None:
    """An empty propose says so once; a missing source names evidenceRefs."""
    root = make_project(tmp_path)

    async def scenario(client: Client) -> Any:
        empty = await client.call_tool(PROPOSE, {})
        unsourced = await client.call_tool(
            PROPOSE,
            {
                "operation": "add",
                "kind": "architecture_decision",
                "text": "Storage goes through one provider port.",
                "rationale": "r",
            },
        )
        return payload(empty), payload(unsourced)

    (empty, unsourced), _ = run_client(root, scenario)
    assert empty["error"] == unsourced["error"] == "memory_validation_error"
    assert empty["message"].count("missing required argument(s)") == 1
    assert empty["message"].count("operation") == 1
    assert unsourced["message"] == (
        "invalid arguments for swarm_memory_propose: evidenceRefs must list at least one "
        "source (file path, URL, commit or evidence-cache ref) for kind architecture_decision; "
        "only todo and scratch memories may be proposed without evidence"
    )


def _serve_without_client(
    root: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``swarmmem --root ROOT mcp`` with nothing on stdin (a minute at most): how a server
    that cannot start ends."""
    return subprocess.run(
        [sys.executable, "-m", "swarmmem.cli", "--root", str(root), "mcp"],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


def _leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups."""
    inner = getattr(exc, "exceptions", None)
    return [leaf for e in inner for leaf in _leaves(e)] if inner else [exc]


@pytest.mark.slow
@pytest.mark.parametrize("what", ["missing", "file"])
def test_nonexistent_root_refuses_to_start(tmp_path: Path, what: str) -> None:
    """``--root`` must be an existing folder: the server exits 2 with the reason on stderr."""
    root = tmp_path / "no-such-project"
    if what == "file":
        root.write_text("not a folder", encoding="utf-8")
    reason = "does not exist" if what == "missing" else "is not a directory"
    done = _serve_without_client(root, env=_child_env())
    assert done.returncode == 2
    assert done.stderr.strip() == f"Error: project root {root} {reason} (check --root)"
    assert "disabled" not in done.stderr
    assert done.stdout == ""
    # An MCP client launching it sees the connection close, and the reason on stderr.
    errlog = tmp_path / "stderr.log"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "swarmmem.cli", "--root", str(root), "mcp"],
        cwd=str(tmp_path),
        env=_child_env(),
    )

    async def connect() -> None:
        with errlog.open("w", encoding="utf-8") as err:
            async with Client(stdio_client(params, errlog=err), read_timeout_seconds=60):
                pass

    with pytest.raises(Exception) as caught:  # an exception group from the task groups
        anyio.run(connect)
    assert any(
        isinstance(leaf, MCPError) and leaf.message == "Connection closed"
        for leaf in _leaves(caught.value)
    )
    assert reason in errlog.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["stderr.log", *(["no-such-project"] if what == "file" else [])]
    )


@pytest.mark.slow
def test_disabled_memory_lists_no_tools_and_reports_disabled(tmp_path: Path) -> None:
    """With memory disabled no tool is offered, a direct call says so, and nothing is written."""
    root = make_project(tmp_path, {"enabled": False})

    async def scenario(client: Client) -> Any:
        listed = (await client.list_tools()).tools
        called = await client.call_tool(
            PROPOSE, {"operation": "add", "kind": "todo", "text": "x", "rationale": "y"}
        )
        return listed, called

    (listed, called), stderr = run_client(root, scenario)
    assert f"memory is disabled for {root.resolve()}" in stderr
    assert listed == []
    assert called.is_error is False
    assert payload(called) == {"success": False, "disabled": True, "message": DISABLED_MESSAGE}
    assert not (root / ".swarm").exists()


@pytest.mark.slow
def test_malformed_config_stops_the_server_before_serving(tmp_path: Path) -> None:
    """A broken configuration makes ``swarmmem mcp`` exit with code 2 and a clear message."""
    root = make_project(tmp_path)
    (root / ".opencode" / "opencode-swarm.json").write_text("{not json", encoding="utf-8")
    done = _serve_without_client(root)
    assert done.returncode == 2
    assert "cannot read configuration" in done.stderr
    assert done.stdout == ""


class RawServer:
    """The ``swarmmem`` script serving MCP over stdio, spoken to line by line (killed after a
    minute whatever happens)."""

    def __init__(self, root: Path, session: str) -> None:
        self.process = subprocess.Popen(
            [str(CONSOLE_SCRIPT), "--root", str(root), "--session", session, "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.watchdog = threading.Timer(60, self.process.kill)
        self.watchdog.start()

    def send(self, *lines: str | dict[str, Any]) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        for line in lines:
            stdin.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
        stdin.flush()

    def answer(self) -> Any:
        assert self.process.stdout is not None
        return json.loads(self.process.stdout.readline())

    def hello(self, client: str) -> Any:
        """``initialize`` and its answer."""
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": client, "version": "0"},
                },
            }
        )
        return self.answer()

    def finish(self) -> tuple[int, str]:
        """Close stdin; the exit code and stderr."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            code = self.process.wait(timeout=60)
            stderr = self.process.stderr.read() if self.process.stderr else ""
        finally:
            self.close()
        return code, stderr

    def close(self) -> None:
        self.watchdog.cancel()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None and not stream.closed:
                stream.close()
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.mark.slow
@pytest.mark.skipif(not CONSOLE_SCRIPT.exists(), reason="console script not installed here")
def test_console_script_answers_raw_json_rpc_and_exits_cleanly(tmp_path: Path) -> None:
    """The ``swarmmem`` script speaks newline-delimited JSON-RPC and exits 0 when stdin closes."""
    server = RawServer(make_project(tmp_path), "raw")
    try:
        answer = server.hello("raw-test")
        server.send(
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        )
        listing = server.answer()
        code, stderr = server.finish()
    finally:
        server.close()
    assert answer["id"] == 1
    assert answer["result"]["serverInfo"] == {"name": "swarmmem", "version": swarmmem.__version__}
    assert answer["result"]["capabilities"]["tools"] == {"listChanged": False}
    assert [tool["name"] for tool in listing["result"]["tools"]] == list(TOOL_NAMES)
    assert code == 0
    assert "Traceback" not in stderr


# -------------------------------------------------------------------- in process
def test_in_process_client_sees_the_same_tools_and_errors(tmp_path: Path) -> None:
    """The server object also serves the SDK's in-process client (modern, direct dispatch)."""
    root = make_project(tmp_path)
    tools = MemoryTools(root, context={"session_id": "inproc"})

    async def main() -> tuple[Any, Any]:
        async with Client(build_server(tools)) as client:
            listed = (await client.list_tools()).tools
            bad = await client.call_tool(RECALL, {"query": "tests", "unknown": 1})
            return listed, bad

    try:
        listed, bad = anyio.run(main)
    finally:
        tools.close()
    assert [tool.name for tool in listed] == list(TOOL_NAMES)
    assert bad.is_error
    assert "unknown argument(s) 'unknown'" in payload(bad)["message"]


def test_in_memory_provider_keeps_one_memory_for_the_server_lifetime(tmp_path: Path) -> None:
    """With provider 'memory' proposals survive between calls (one resident Memory), then close."""
    root = make_project(tmp_path, {"enabled": True, "provider": "memory"})
    tools = MemoryTools(root)
    proposed, is_error = tools.call(PROPOSE, ADD_FACT)
    assert not is_error
    with tools.memory() as mem:
        first = mem
        change = mem.curate(proposed["proposal_id"], "add")
    recalled, is_error = tools.call(RECALL, {"query": "run the unit tests"})
    assert not is_error
    assert recalled["memory_ids"] == [change.memory_id]
    with tools.memory() as mem:
        assert mem is first
    tools.close()
    assert tools._resident is None
    assert not (root / ".swarm").exists()


def test_file_backed_memory_is_opened_per_call_and_sees_config_changes(tmp_path: Path) -> None:
    """Each call re-reads the configuration: disabling memory mid-session empties the tool list."""
    root = make_project(tmp_path)
    tools = MemoryTools(root)
    assert [spec["name"] for spec in tools.tool_specs()] == list(TOOL_NAMES)
    with tools.memory() as first:
        pass
    with tools.memory() as second:
        assert second is not first
    config = root / ".opencode" / "opencode-swarm.json"
    config.write_text(json.dumps({"memory": {"enabled": False}}), encoding="utf-8")
    assert tools.tool_specs() == []
    assert tools.call(RECALL, {"query": "anything"}) == (
        {"success": False, "disabled": True, "message": DISABLED_MESSAGE},
        False,
    )
    config.write_text("{broken", encoding="utf-8")
    data, is_error = tools.call(RECALL, {"query": "anything"})
    assert is_error
    assert data["error"] == "config_error"


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    # and arguments that are not an object, which the SDK's client refuses to send
    [*INVALID_ARGUMENTS, (OUTCOME, ["not", "an", "object"], "arguments must be an object")],
)
def test_argument_validation_names_the_offending_value(
    tool: str, arguments: Any, message: str
) -> None:
    """Each violation raises one MemoryValidationError naming the argument and what it accepts."""
    with pytest.raises(MemoryValidationError) as caught:
        validate_arguments(tool, arguments)
    text = str(caught.value)
    assert text.startswith(f"invalid arguments for {tool}: ")
    assert message in text
    assert text.count(message) == 1


def test_an_empty_propose_reports_each_missing_argument_once() -> None:
    """jsonschema reports every missing key apart; the message names them together, once."""
    with pytest.raises(MemoryValidationError) as caught:
        validate_arguments(PROPOSE, {})
    assert str(caught.value) == (
        "invalid arguments for swarm_memory_propose: missing required argument(s): "
        "operation (one of add, update, delete, ignore, merge, supersede), "
        "rationale (a non-empty string of at most 2000 characters)"
    )


def test_every_problem_of_a_call_is_in_its_one_message() -> None:
    """Several bad arguments: each is named once, in schema order, in one error."""
    with pytest.raises(MemoryValidationError) as caught:
        validate_arguments(OUTCOME, {"memory_id": "x", "question": "", "outcome": "bad"})
    assert str(caught.value) == (
        "invalid arguments for swarm_memory_outcome: "
        'memoryId (given as memory_id) must be a string matching ^mem_[a-f0-9]{16}$; got "x"; '
        'outcome must be one of useful, dead_end, corrected; got "bad"; '
        "question must be a non-empty string of at most 2000 characters; got an empty string"
    )


def test_valid_arguments_pass_unchanged() -> None:
    """Arguments that match the schema under their documented names come back untouched."""
    arguments = {
        "question": "Which parser?",
        "outcome": "dead_end",
        "anchors": [{"file": "docs/p.md"}],
    }
    assert validate_arguments(OUTCOME, arguments) == arguments
    recall = {"query": "tests", "task": "port the parser", "maxItems": 20, "kinds": ["todo"]}
    assert validate_arguments(RECALL, recall) == recall


def test_documented_names_are_camel_case_and_each_has_a_snake_case_alias() -> None:
    """One convention: no documented name has an underscore; every camelCase one has an alias."""
    for tool, schema in SCHEMAS.items():
        names = set(schema["properties"])
        assert not any("_" in name for name in names), tool
        assert set(ALIASES[tool].values()) == {n for n in names if n != n.lower()}
    assert ALIASES == {
        RECALL: {"max_items": "maxItems"},
        PROPOSE: {
            "target_memory_id": "targetMemoryId",
            "related_memory_ids": "relatedMemoryIds",
            "evidence_refs": "evidenceRefs",
        },
        OUTCOME: {"memory_id": "memoryId"},
        "swarm_memory_pending": {},
        "swarm_memory_curate": {"proposal_id": "proposalId"},
    }


@pytest.mark.parametrize(
    ("tool", "aliased", "documented"),
    [
        (RECALL, {"query": "tests", "max_items": 3}, {"query": "tests", "maxItems": 3}),
        (
            PROPOSE,
            {
                "operation": "supersede",
                "kind": "repo_convention",
                "text": "t",
                "rationale": "r",
                "target_memory_id": "mem_0123456789abcdef",
                "evidence_refs": ["a.py"],
            },
            {
                "operation": "supersede",
                "kind": "repo_convention",
                "text": "t",
                "rationale": "r",
                "targetMemoryId": "mem_0123456789abcdef",
                "evidenceRefs": ["a.py"],
            },
        ),
        (
            OUTCOME,
            {"memory_id": "mem_0123456789abcdef", "outcome": "useful"},
            {"memoryId": "mem_0123456789abcdef", "outcome": "useful"},
        ),
    ],
)
def test_aliases_come_back_under_their_documented_names(
    tool: str, aliased: dict[str, Any], documented: dict[str, Any]
) -> None:
    """An alias, or both spellings with one value, validates as the documented name."""
    assert validate_arguments(tool, aliased) == documented
    assert validate_arguments(tool, {**aliased, **documented}) == documented


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        (
            RECALL,
            {"query": "tests", "maxItems": 3, "max_items": 4},
            "maxItems and max_items are two spellings of one argument but were given different "
            "values (3 and 4); give only maxItems",
        ),
        (
            OUTCOME,
            {
                "memoryId": "mem_0123456789abcdef",
                "memory_id": "mem_fedcba9876543210",
                "outcome": "useful",
            },
            "memoryId and memory_id are two spellings of one argument",
        ),
        (
            PROPOSE,
            {
                "operation": "add",
                "kind": "todo",
                "text": "t",
                "rationale": "r",
                "evidenceRefs": ["a.py"],
                "evidence_refs": ["b.py"],
            },
            '(["a.py"] and ["b.py"]); give only evidenceRefs',
        ),
    ],
)
def test_conflicting_spellings_are_a_validation_error_naming_both(
    tool: str, arguments: dict[str, Any], message: str
) -> None:
    """Both spellings of one argument with different values: refused, naming both."""
    with pytest.raises(MemoryValidationError) as caught:
        validate_arguments(tool, arguments)
    assert message in str(caught.value)


def test_readme_tables_document_every_argument_and_alias() -> None:
    """The argument table of each tool (docs/mcp.md) lists its documented names and their
    aliases."""
    readme = (Path(__file__).resolve().parents[2] / "docs" / "mcp.md").read_text(encoding="utf-8")
    for tool, schema in SCHEMAS.items():
        table = re.search(rf"^`{tool}`\n\n(\|.*?)\n\n", readme, re.S | re.M)
        assert table is not None, tool
        rows = dict(re.findall(r"^\| `(\w+)` \|(.*)\|$", table.group(1), re.M))
        assert set(rows) == set(schema["properties"]), tool
        for alias, name in ALIASES[tool].items():
            assert f"alias `{alias}`" in rows[name], (tool, name)


def test_nonexistent_root_is_refused_before_anything_is_opened(tmp_path: Path) -> None:
    """MemoryTools (and so serve) refuses a missing root or a file, and creates nothing."""
    missing = tmp_path / "no-such-project"
    with pytest.raises(NotFoundError, match="does not exist"):
        MemoryTools(missing, config={"enabled": True})
    a_file = tmp_path / "file.txt"
    a_file.write_text("x", encoding="utf-8")
    with pytest.raises(NotFoundError, match="is not a directory"):
        MemoryTools(a_file, config={"enabled": True})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


def test_broken_config_mid_session_is_a_protocol_error_for_tools_list(tmp_path: Path) -> None:
    """If the configuration breaks while serving, tools/list answers an MCP error, not a crash."""
    root = make_project(tmp_path)
    tools = MemoryTools(root)

    async def main() -> tuple[str, Any]:
        async with Client(build_server(tools)) as client:
            (root / ".opencode" / "opencode-swarm.json").write_text("{", encoding="utf-8")
            with pytest.raises(MCPError) as caught:
                await client.list_tools()
            call = await client.call_tool(RECALL, {"query": "still serving?"})
            return caught.value.message, call

    message, call = anyio.run(main)
    assert "cannot read configuration" in message
    assert call.is_error
    assert payload(call)["error"] == "config_error"


@pytest.mark.parametrize("provider", ["sqlite", "local-jsonl"])
def test_curator_writes_from_another_handle_are_seen_by_the_next_call(
    tmp_path: Path, provider: str
) -> None:
    """Per-call opening: a curator's decision made elsewhere shows up in the next recall."""
    root = make_project(tmp_path, {"enabled": True, "provider": provider})
    tools = MemoryTools(root, context={"session_id": "sess-p", "agent_role": "coder"})
    proposed, is_error = tools.call(PROPOSE, ADD_FACT)
    assert not is_error
    with swarmmem.open(root, context={"agent_role": "curator"}) as curator:
        change = curator.curate(proposed["proposal_id"], "add")
    recalled, is_error = tools.call(RECALL, {"query": "run the unit tests"})
    assert not is_error
    assert recalled["memory_ids"] == [change.memory_id]
    result, is_error = tools.call(
        OUTCOME, {"memory_id": change.memory_id, "outcome": "dead_end"}, request_id="7"
    )
    assert not is_error
    with swarmmem.open(root) as mem:
        events = mem.store.list_outcomes(change.memory_id)
    assert [e.id for e in events] == [result["event_id"]]
    assert events[0].outcome.outcome == "dead_end"
    retry, is_error = tools.call(
        OUTCOME, {"memoryId": change.memory_id, "outcome": "dead_end"}, request_id="7"
    )
    assert not is_error
    # Same request, either spelling: the same event, not a duplicate.
    assert retry["event_id"] == result["event_id"]
    assert retry["outcomes"] == 1


@pytest.mark.skipif(not CONSOLE_SCRIPT.exists(), reason="console script not installed here")
def test_a_request_nested_50k_deep_is_answered_and_the_server_goes_on(tmp_path: Path) -> None:
    """Hostile input: a tools/call whose arguments nest 50,000 arrays. Before the stdin guard
    the transport's parser gave up without the id and the request was never answered; now it
    gets an Invalid Request error with its id, and the next request is served."""
    server = RawServer(make_project(tmp_path), "deep")
    deep = "[" * 50_000 + "]" * 50_000
    try:
        server.hello("deep-test")
        server.send(
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": '
            f'"swarm_memory_recall", "arguments": {{"query": "x", "junk": {deep}}}}}}}',
            {"jsonrpc": "2.0", "id": 8, "method": "ping"},
        )
        refused = server.answer()
        pong = server.answer()
        code, stderr = server.finish()
    finally:
        server.close()
    assert refused["id"] == 7
    assert refused["error"]["code"] == -32600
    assert "nested deeper than 64" in refused["error"]["message"]
    assert pong == {"jsonrpc": "2.0", "id": 8, "result": {}}
    assert code == 0
    assert "Traceback" not in stderr

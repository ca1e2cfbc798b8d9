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

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

import swarmmem
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.mcp_server import (
    OUTCOME,
    PROPOSE,
    RECALL,
    TOOL_NAMES,
    MemoryTools,
    build_server,
    validate_arguments,
)
from swarmmem.memory import DISABLED_MESSAGE

FACT = "Run the unit tests with `pytest tests/unit -q`; the slow suite needs the dev extra."
CONSOLE_SCRIPT = Path(sys.executable).parent / ("swarmmem.exe" if os.name == "nt" else "swarmmem")
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def make_project(tmp_path: Path, memory: dict[str, Any] | None = None) -> Path:
    """A project folder whose .opencode/opencode-swarm.json holds ``memory``."""
    root = tmp_path / "project"
    (root / ".opencode").mkdir(parents=True)
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
    recall = by_name[RECALL].input_schema
    assert recall["required"] == ["query"]
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
                "memory_id": change.memory_id,
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
        "message",
    }
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


@pytest.mark.slow
def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(tmp_path: Path) -> None:
    """Every invalid call returns isError with a message naming the problem; later calls work."""
    root = make_project(tmp_path)
    bad_calls: list[tuple[str, dict[str, Any], str]] = [
        (RECALL, {"query": "ab"}, "query must be at least 3 characters"),
        (RECALL, {"query": "   x  "}, "query must be at least 3 characters"),
        (RECALL, {"query": "tests", "scope": {"type": "workspace"}}, "unknown argument(s) 'scope'"),
        (RECALL, {"query": "tests", "maxItems": 0}, "maxItems must be >= 1"),
        (RECALL, {"query": "tests", "kinds": ["nonsense"]}, "kinds[0] must be one of"),
        (
            OUTCOME,
            {"memory_id": "mem_0123456789abcdef", "question": "which?", "outcome": "useful"},
            "exactly one of memory_id or question is required",
        ),
        (
            OUTCOME,
            {"question": "which?", "outcome": "useful", "anchors": [{"file": "a.py"}] * 21},
            "anchors accepts at most 20 items; got 21",
        ),
        (
            OUTCOME,
            {"question": "which?", "outcome": "useful", "anchors": [{"file": "/etc/passwd"}]},
            "repository-relative",
        ),
        (OUTCOME, {"question": "which?", "outcome": "corrected"}, "require correction text"),
        (OUTCOME, {"memory_id": "mem_0123456789abcdef", "outcome": "useful"}, "was not found"),
        (OUTCOME, {"memory_id": "mem_XYZ", "outcome": "useful"}, "memory_id must match"),
        (PROPOSE, {"operation": "add", "rationale": "why"}, "kind is required"),
        (
            PROPOSE,
            {"operation": "add", "kind": "repo_convention"},
            "missing required argument(s): rationale",
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
            "evidenceRefs accepts at most 20 items",
        ),
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
def test_disabled_memory_lists_no_tools_and_reports_disabled(tmp_path: Path) -> None:
    """With memory disabled no tool is offered, a direct call says so, and nothing is written."""
    root = make_project(tmp_path, {"enabled": False})

    async def scenario(client: Client) -> Any:
        listed = (await client.list_tools()).tools
        called = await client.call_tool(
            PROPOSE, {"operation": "add", "kind": "todo", "text": "x", "rationale": "y"}
        )
        return listed, called

    (listed, called), _ = run_client(root, scenario)
    assert listed == []
    assert called.is_error is False
    assert payload(called) == {"success": False, "disabled": True, "message": DISABLED_MESSAGE}
    assert not (root / ".swarm").exists()


@pytest.mark.slow
def test_malformed_config_stops_the_server_before_serving(tmp_path: Path) -> None:
    """A broken configuration makes ``swarmmem mcp`` exit with code 2 and a clear message."""
    root = make_project(tmp_path)
    (root / ".opencode" / "opencode-swarm.json").write_text("{not json", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "swarmmem.cli", "--root", str(root), "mcp"],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "cannot read configuration" in done.stderr
    assert done.stdout == ""


@pytest.mark.slow
@pytest.mark.skipif(not CONSOLE_SCRIPT.exists(), reason="console script not installed here")
def test_console_script_answers_raw_json_rpc_and_exits_cleanly(tmp_path: Path) -> None:
    """The ``swarmmem`` script speaks newline-delimited JSON-RPC and exits 0 when stdin closes."""
    root = make_project(tmp_path)
    process = subprocess.Popen(
        [str(CONSOLE_SCRIPT), "--root", str(root), "--session", "raw", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    watchdog = threading.Timer(60, process.kill)
    watchdog.start()
    try:
        assert process.stdin is not None and process.stdout is not None
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "0"},
            },
        }
        process.stdin.write(json.dumps(hello) + "\n")
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        process.stdin.write("\n")
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}) + "\n")
        process.stdin.flush()
        listing = json.loads(process.stdout.readline())
        process.stdin.close()
        code = process.wait(timeout=60)
        stderr = process.stderr.read() if process.stderr else ""
    finally:
        watchdog.cancel()
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None and not stream.closed:
                stream.close()
        if process.poll() is None:
            process.kill()
            process.wait()
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
    proposed, is_error = tools.call(
        PROPOSE,
        {
            "operation": "add",
            "kind": "repo_convention",
            "text": FACT,
            "rationale": "r",
            "evidenceRefs": ["pyproject.toml"],
        },
    )
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
    [
        (RECALL, {}, "missing required argument(s): query"),
        (RECALL, {"query": 42}, "query must be of type string; got 42"),
        (RECALL, {"query": "tests", "maxItems": True}, "maxItems must be of type integer"),
        (RECALL, {"query": "tests", "maxItems": 21}, "maxItems must be <= 20; got 21"),
        (PROPOSE, {"operation": "create", "rationale": "r"}, "operation must be one of add,"),
        (PROPOSE, {"operation": "add", "rationale": ""}, "rationale must not be empty"),
        (
            OUTCOME,
            {"outcome": "useful", "anchors": [{"symbol": "x"}]},
            "anchors[0]: missing required key(s): file",
        ),
        (
            OUTCOME,
            {"outcome": "useful", "anchors": [{"file": "a", "line": 3}]},
            "anchors[0]: unknown key(s) 'line'",
        ),
        (
            OUTCOME,
            {"outcome": "useful", "correction": "x" * 4001},
            "correction must be at most 4000",
        ),
        (OUTCOME, ["not", "an", "object"], "arguments must be an object"),
    ],
)
def test_argument_validation_names_the_offending_value(
    tool: str, arguments: Any, message: str
) -> None:
    """Schema violations raise MemoryValidationError with a readable, specific message."""
    with pytest.raises(MemoryValidationError) as caught:
        validate_arguments(tool, arguments)
    assert message in str(caught.value)


def test_valid_arguments_pass_unchanged() -> None:
    """Arguments that match the schema come back as a plain dict, untouched."""
    arguments = {
        "question": "Which parser?",
        "outcome": "dead_end",
        "anchors": [{"file": "docs/p.md"}],
    }
    assert validate_arguments(OUTCOME, arguments) == arguments
    assert validate_arguments(RECALL, {"query": "tests", "maxItems": 20, "kinds": ["todo"]}) == {
        "query": "tests",
        "maxItems": 20,
        "kinds": ["todo"],
    }


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
    proposed, is_error = tools.call(
        PROPOSE,
        {
            "operation": "add",
            "kind": "repo_convention",
            "text": FACT,
            "rationale": "r",
            "evidenceRefs": ["pyproject.toml"],
        },
    )
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
        OUTCOME, {"memory_id": change.memory_id, "outcome": "dead_end"}, request_id="7"
    )
    assert not is_error
    assert retry["event_id"] == result["event_id"]  # same request: same event, not a duplicate
    assert retry["outcomes"] == 1

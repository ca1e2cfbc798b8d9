"""The Claude Code test harness (``tests/hosts.py``) drives the real CLI against the fake API.

A tiny project in ``tmp_path`` has hooks in ``.claude/settings.json`` (plain Python one-liners,
not swarmmem). Each hook saves its stdin JSON to a file; SessionStart and UserPromptSubmit also
print context. One ``claude -p`` run must reach the fake API, and the test checks the hook
context in the request, the hook inputs and the transcript the CLI writes. A second run checks
that a project MCP server from ``.mcp.json`` is started and its tool can be called. Both need
node and npm (they skip without them, unless ``SWARMMEM_HOSTS_REQUIRED=1``). The last test
checks the fake API alone, without the CLI.
"""

from __future__ import annotations

import http.client
import json
import shlex
import sys
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import hosts
import pytest

START_MARKER = "MARKER-START-123"
PROMPT_MARKER = "MARKER-PROMPT-456"
REPLY_TEXT = "FAKE-REPLY-789 from the loopback API"
PROMPT = "Say hello to the harness."


@pytest.fixture
def claude_cli() -> Path:
    """Return the pinned ``claude`` binary, or skip (fail under SWARMMEM_HOSTS_REQUIRED=1)."""
    return hosts.require_claude_cli()


def python_hook(code: str) -> dict[str, Any]:
    """Return a command hook that runs the Python one-liner ``code`` with this interpreter."""
    return {
        "type": "command",
        "command": f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}",
        "timeout": 30,
    }


def saving_hook(path: Path, event: str | None = None, context: str | None = None) -> dict[str, Any]:
    """Return a hook that saves its stdin to ``path`` and, given ``context``, prints it."""
    code = f"import sys; open({str(path)!r}, 'w').write(sys.stdin.read())"
    if context is not None:
        output = {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}
        code += f"; print({json.dumps(output)!r})"
    return python_hook(code)


def write_project(project: Path, out: Path) -> None:
    """Write ``project/.claude/settings.json`` whose four hooks save their input under ``out``."""
    hooks = {
        "SessionStart": saving_hook(out / "SessionStart.json", "SessionStart", START_MARKER),
        "UserPromptSubmit": saving_hook(
            out / "UserPromptSubmit.json", "UserPromptSubmit", PROMPT_MARKER
        ),
        "Stop": saving_hook(out / "Stop.json"),
        "SessionEnd": saving_hook(out / "SessionEnd.json"),
    }
    settings = {"hooks": {event: [{"hooks": [hook]}] for event, hook in hooks.items()}}
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))


def read_json(path: Path) -> dict[str, Any]:
    """Return the JSON object saved in ``path``."""
    assert path.is_file(), f"{path.name} was not written: the hook did not run"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@pytest.mark.slow
def test_claude_cli_runs_project_hooks_against_the_fake_api(
    claude_cli: Path, tmp_path: Path
) -> None:
    """One print-mode run: the hooks fire, their context reaches the model, a transcript exists."""
    project, home, out = tmp_path / "project", tmp_path / "home", tmp_path / "hook-input"
    out.mkdir()
    write_project(project, out)
    session_id = str(uuid.uuid4())

    with hosts.FakeAnthropic(lambda body: REPLY_TEXT) as fake:
        done = hosts.run_claude(
            claude_cli, PROMPT, hosts.Launch(project, home, fake.url), session_id=session_id
        )
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert done.stdout.strip() == REPLY_TEXT
    assert fake.errors == []

    # the CLI spoke only the Messages API, and one turn is one main request
    assert {(r["method"], r["path"]) for r in fake.requests} <= {
        ("POST", hosts.MESSAGES_PATH),
        ("POST", hosts.COUNT_TOKENS_PATH),
    }
    main = fake.main_requests()
    assert len(main) == 1, [hosts.system_text(body)[:200] for body in fake.message_requests()]
    body = main[0]
    assert body["stream"] is True
    assert PROMPT in hosts.user_texts(body)

    # both hook contexts reach the model, in the system turn after the prompt
    system = hosts.system_text(body)
    assert START_MARKER in system
    assert PROMPT_MARKER in system
    turns = hosts.system_turn_texts(body)
    assert any(f"SessionStart hook additional context: {START_MARKER}" in t for t in turns)
    assert any(f"UserPromptSubmit hook additional context: {PROMPT_MARKER}" in t for t in turns)

    # the hooks got the documented input, all for the session we named
    inputs = {
        event: read_json(out / f"{event}.json")
        for event in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd")
    }
    for event, data in inputs.items():
        assert {"session_id", "transcript_path", "cwd", "hook_event_name"} <= data.keys(), event
        assert data["hook_event_name"] == event
        assert data["session_id"] == session_id
        assert Path(data["cwd"]).resolve() == project.resolve()
    assert inputs["SessionStart"]["source"] == "startup"
    assert inputs["UserPromptSubmit"]["prompt"] == PROMPT
    assert inputs["Stop"]["last_assistant_message"] == REPLY_TEXT
    assert "reason" in inputs["SessionEnd"]
    requests = fake.requests
    assert requests[0]["headers"].get("x-claude-code-session-id") == session_id

    # the transcript under $HOME holds the prompt and the fake reply
    transcript = Path(inputs["Stop"]["transcript_path"])
    assert transcript.is_file()
    assert transcript.is_relative_to(home / ".claude" / "projects")
    rows = [json.loads(line) for line in transcript.read_text().splitlines() if line.strip()]
    texts_by_type: dict[str, list[str]] = {}
    for row in rows:
        message = row.get("message")
        if isinstance(message, dict) and row.get("type") in ("user", "assistant"):
            content = message.get("content")
            texts = [content] if isinstance(content, str) else hosts.content_texts(content)
            texts_by_type.setdefault(row["type"], []).extend(texts)
    assert REPLY_TEXT in texts_by_type.get("assistant", [])
    assert PROMPT in texts_by_type.get("user", [])


MCP_SERVER = """
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue
    method, params = request["method"], request.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "probe", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "echo", "description": "Echo the text back.",
                             "inputSchema": {"type": "object",
                                             "properties": {"text": {"type": "string"}}}}]}
    elif method == "tools/call":
        text = "ECHO:" + params["arguments"]["text"]
        result = {"content": [{"type": "text", "text": text}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}), flush=True)
"""


@pytest.mark.slow
def test_project_mcp_server_starts_and_its_tool_can_be_called(
    claude_cli: Path, tmp_path: Path
) -> None:
    """A ``.mcp.json`` server needs no approval in print mode; ``allowed_tools`` grants its tool."""
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    server = tmp_path / "mcp_server.py"
    server.write_text(MCP_SERVER)
    mcp = {"mcpServers": {"probe": {"command": sys.executable, "args": [str(server)]}}}
    (project / ".mcp.json").write_text(json.dumps(mcp))

    def reply(body: dict[str, Any]) -> str | list[dict[str, Any]]:
        if any(text.startswith("ECHO:") for text in hosts.user_texts(body)):
            return "the tool answered"
        return [hosts.tool_use("mcp__probe__echo", {"text": "ping"})]

    with hosts.FakeAnthropic(reply) as fake:
        done = hosts.run_claude(
            claude_cli,
            "Call the echo tool.",
            hosts.Launch(project, home, fake.url),
            allowed_tools=["mcp__probe"],
        )
    assert done.returncode == 0, f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert done.stdout.strip() == "the tool answered"
    first, second = fake.main_requests()
    assert "mcp__probe__echo" in hosts.system_text(first)  # listed as a deferred tool
    assert "ECHO:ping" in hosts.user_texts(second)


def post(connection: http.client.HTTPConnection, path: str, body: Any) -> tuple[int, str, bytes]:
    """POST ``body`` as JSON and return the status, the content type and the response body."""
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    return response.status, response.getheader("Content-Type", ""), response.read()


def test_fake_api_speaks_the_messages_protocol() -> None:
    """Without the CLI: SSE and JSON answers, count_tokens, 404s, and a failing ``reply``."""

    def reply(body: dict[str, Any]) -> str:
        if "boom" in hosts.user_texts(body):
            raise RuntimeError("boom")
        return "pong"

    request = {
        "model": "claude-test",
        "system": [{"type": "text", "text": "You are a test."}],
        "messages": [
            {"role": "user", "content": "ping"},
            {"role": "system", "content": [{"type": "text", "text": "hook context"}]},
        ],
        "tools": [{"name": "Read", "input_schema": {"type": "object"}}],
        "stream": True,
    }
    with hosts.FakeAnthropic(reply) as fake:
        connection = http.client.HTTPConnection(urlsplit(fake.url).netloc, timeout=10)
        try:
            status, kind, streamed = post(connection, "/v1/messages?beta=true", request)
            assert (status, kind) == (200, "text/event-stream")
            events = [
                json.loads(line.removeprefix("data: "))
                for line in streamed.decode().splitlines()
                if line.startswith("data: ")
            ]
            assert [e["type"] for e in events] == [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop",
            ]
            assert events[2]["delta"] == {"type": "text_delta", "text": "pong"}
            assert events[4]["delta"]["stop_reason"] == "end_turn"

            status, _, plain = post(connection, "/v1/messages", {**request, "stream": False})
            assert status == 200
            assert json.loads(plain)["content"] == [{"type": "text", "text": "pong"}]

            status, _, counted = post(connection, "/v1/messages/count_tokens", request)
            assert status == 200
            assert json.loads(counted)["input_tokens"] > 0

            status, _, missing = post(connection, "/v1/other", {})
            assert status == 404
            assert json.loads(missing)["type"] == "error"

            failing = {**request, "messages": [{"role": "user", "content": "boom"}]}
            status, _, _ = post(connection, "/v1/messages", failing)
            assert status == 400
        finally:
            connection.close()
    assert [type(e) for e in fake.errors] == [RuntimeError]
    assert len(fake.requests) == 5
    assert len(fake.message_requests()) == 3
    assert len(fake.main_requests()) == 3
    assert fake.requests[0]["query"] == "beta=true"
    body = fake.message_requests()[0]
    assert hosts.system_text(body) == "You are a test.\n\nhook context"
    assert hosts.system_turn_texts(body) == ["hook context"]
    assert hosts.user_texts(body) == ["ping"]

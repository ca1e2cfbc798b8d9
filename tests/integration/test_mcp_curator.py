"""The curator role over MCP: granted only in the user's own file, never by the repository
(hostile checkouts included); with the grant, a real MCP client reviews and decides."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from factories import memory_project, propose_fact
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

import swarmmem
from swarmmem.grants import effective_role, granted, grants_path, set_grant
from swarmmem.mcp import CURATE, PENDING

BASE_TOOLS = {"swarm_memory_recall", "swarm_memory_propose", "swarm_memory_outcome"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return memory_project(tmp_path / "project", {"db.py": "x = 1\n"})


@pytest.fixture
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "user-config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    return folder


def serve(
    root: Path, config_home: Path, scenario: Callable[[Client], Awaitable[Any]], *options: str
) -> tuple[Any, str]:
    env = {k: os.environ[k] for k in ("SWARMMEM_NO_EXTENSIONS", "PYTHONPATH") if k in os.environ}
    env["XDG_CONFIG_HOME"] = str(config_home)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "swarmmem", *options, "mcp"],
        cwd=str(root),
        env=env,
    )
    errlog = root.parent / "stderr.log"
    out: dict[str, Any] = {}

    async def main() -> None:
        with errlog.open("w", encoding="utf-8") as err:
            async with Client(stdio_client(params, errlog=err), read_timeout_seconds=60) as c:
                out["result"] = await scenario(c)

    anyio.run(main)
    return out["result"], errlog.read_text(encoding="utf-8")


async def tool_names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools()).tools}


def test_without_a_grant_the_role_is_dropped(project: Path, user_config: Path) -> None:
    names, stderr = serve(project, user_config, tool_names, "--role", "curator")
    assert names == BASE_TOOLS
    assert "the curator role is not granted" in stderr

    async def try_curate(client: Client) -> Any:
        result = await client.call_tool(CURATE, {"proposalId": "prop_0000000000000000"})
        return result.is_error, json.loads(result.content[0].text)

    (is_error, body), _ = serve(project, user_config, try_curate, "--role", "curator")
    assert is_error and body["error"] == "unknown_tool"


def test_a_grants_file_inside_the_repository_is_ignored(project: Path, tmp_path: Path) -> None:
    """A hostile checkout ships its own grants file and points the server's config home at it
    (``.mcp.json`` can set a server's environment): the role is still not granted."""
    inside = project / ".config"
    (inside / "swarmmem").mkdir(parents=True)
    (inside / "swarmmem" / "grants.json").write_text(
        json.dumps({"curator": [str(project.resolve())]}), encoding="utf-8"
    )
    names, stderr = serve(project, inside, tool_names, "--role", "curator")
    assert names == BASE_TOOLS and "not granted" in stderr


def test_grants_file_must_be_the_users_own_and_private(project: Path, user_config: Path) -> None:
    set_grant(project, "curator")
    assert granted(project, "curator")
    path = grants_path()
    path.chmod(0o666)  # writable by anyone: could have been planted
    assert not granted(project, "curator")
    path.chmod(0o600)
    assert granted(project, "curator")
    assert effective_role(project, "curator") == ("curator", None)
    # another project is not granted by this one's entry
    other = project.parent / "other"
    other.mkdir()
    assert effective_role(other, "curator")[0] is None
    assert effective_role(other, "coder") == ("coder", None)
    assert set_grant(project, "curator", revoke=True)["granted"] is False
    assert not granted(project, "curator")


def test_a_granted_curator_reviews_and_decides_over_mcp(project: Path, user_config: Path) -> None:
    with swarmmem.open(project, context={"session_id": "agent-1", "agent_role": "coder"}) as mem:
        prop = propose_fact(
            mem,
            "Migrations run with alembic upgrade head.",
            kind="repo_convention",
            evidence="db.py",
            rationale="team rule",
        )
    set_grant(project, "curator")

    async def review(client: Client) -> Any:
        names = await tool_names(client)
        listing = await client.call_tool(PENDING, {})
        refused = await client.call_tool(CURATE, {"proposalId": prop.id, "decision": "reject"})
        decided = await client.call_tool(
            CURATE, {"proposalId": prop.id, "decision": "add", "reason": "sourced"}
        )
        return names, [json.loads(r.content[0].text) for r in (listing, refused, decided)]

    (names, (listing, refused, decided)), _ = serve(
        project, user_config, review, "--role", "curator"
    )
    assert names == BASE_TOOLS | {PENDING, CURATE}
    assert [p["id"] for p in listing["pending"]] == [prop.id]
    assert listing["pending"][0]["text"] == "Migrations run with alembic upgrade head."
    assert listing["pending"][0]["proposed_by"]["agent_role"] == "coder"
    assert (
        refused["error"] == "memory_validation_error" and "reason is required" in refused["message"]
    )
    assert decided["success"] is True and decided["action"] == "add"
    with swarmmem.open(project) as mem:
        record = mem.get(decided["memory_id"])
        assert record.active and record.text.startswith("Migrations")
        events = mem.inspect(record.id).audit
    decisions = [e for e in events if e["operation"] == "curator_decision"]
    assert [(d["reason"], d["event"]["memoryId"]) for d in decisions] == [("sourced", record.id)]


def test_a_server_started_in_a_subfolder_serves_its_project(
    project: Path, user_config: Path
) -> None:
    sub = project / "src" / "deep"
    sub.mkdir(parents=True)
    names, stderr = serve(sub, user_config, tool_names)
    assert names == BASE_TOOLS, stderr
    assert not (sub / ".swarm").exists() and not (sub / ".opencode").exists()


def test_a_granted_curator_rephrases_over_mcp(project: Path, user_config: Path) -> None:
    with swarmmem.open(project, context={"session_id": "agent-2", "agent_role": "coder"}) as mem:
        prop = propose_fact(
            mem,
            "I looked at db.py for a while and it seems x is always one " * 12,
            kind="api_finding",
            evidence="db.py",
            rationale="found it",
        )
    set_grant(project, "curator")

    async def decide(client: Client) -> Any:
        listing = json.loads((await client.call_tool(PENDING, {})).content[0].text)
        wrong = await client.call_tool(CURATE, {"proposalId": prop.id, "decision": "add"})
        done = await client.call_tool(
            CURATE,
            {
                "proposalId": prop.id,
                "decision": "add",
                "kind": "project_fact",
                "text": "db.py sets x = 1.",
            },
        )
        return listing, json.loads(wrong.content[0].text), json.loads(done.content[0].text)

    (listing, wrong, done), _ = serve(project, user_config, decide, "--role", "curator")
    assert listing["pending"][0]["id"] == prop.id
    assert "durable fact kinds" in wrong["message"]
    assert done["rewritten"] == ["kind", "text"]
    with swarmmem.open(project) as mem:
        assert mem.get(done["memory_id"]).text == "db.py sets x = 1."

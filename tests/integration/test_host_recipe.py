"""The "adding a host" recipe of ``docs/hosts.md``, followed with a host that exists only in
this test: one :class:`~swarmmem.hooks.hosts.Host` value in the table (step 1; its files use
writers that exist, so step 2 has nothing to do) is all the hook runner and ``init`` need."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from factories import curate_fact, write_memory_config

import swarmmem
from swarmmem.hooks import hosts, install
from swarmmem.hooks.hosts import PROMPT, SESSION_END, SESSION_START, STOP, Event, Host, InitFile
from swarmmem.hooks.runner import run_hook

ALEMBIC = "Database migrations are managed with alembic; run alembic upgrade head after pulling."

ACME = Host(
    name="acme",
    title="Acme Agent",
    events=(
        Event("onSessionStart", SESSION_START),
        Event("onPrompt", PROMPT),
        Event("onTurnDone", STOP),
        Event("onSessionEnd", SESSION_END, timeout=5),
        Event("onCompact", hosts.PRE_COMPACT, wired=False),
    ),
    payload=hosts.Payload(session_id=("chat",), prompt=("message",), cwd=("folder",)),
    output=hosts.Output(context_key="memory", json_only=True, notice_field="banner"),
    init=(
        InitFile(".acme/servers.json", "mcp"),
        InitFile(".acme/hooks.json", "hooks"),
    ),
    instructions="ACME.md",
    notes=("Restart Acme Agent to load its hooks.",),
)


@pytest.fixture
def acme(monkeypatch: pytest.MonkeyPatch) -> Host:
    """Step 1 of the recipe: the host's one entry in the table."""
    monkeypatch.setitem(hosts.TABLE, ACME.name, ACME)
    return ACME


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SWARMMEM_HOOK_HELPER", "0")
    root = tmp_path / "app"
    (root / "src").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "src" / "db.py").write_text("ENGINE = None\n", encoding="utf-8")
    write_memory_config(root, {"enabled": True, "projectId": "proj_00000000000000ac"})
    with swarmmem.open(root, context={"session_id": "setup", "agent_role": "coder"}) as mem:
        curate_fact(mem, ALEMBIC, kind="repo_convention", evidence="src/db.py", rationale="rule")
    return root


def test_init_wires_the_new_host_from_its_description(
    acme: Host, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # swarmmem on PATH, as for the files a team commits (off PATH adds a note; see
    # test_init_agents.py)
    bin_dir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", os.pathsep.join([bin_dir, os.environ.get("PATH", os.defpath)]))
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)  # on PATH for good, not by activation
    plan = install.plan_agents(project, ["acme"])
    plan.write()
    hooks = json.loads((project / ".acme" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    assert list(hooks) == ["onSessionStart", "onPrompt", "onTurnDone", "onSessionEnd"]
    end = hooks["onSessionEnd"][0]["hooks"][0]
    assert end["command"].endswith(" hook acme onSessionEnd") and end["timeout"] == 5
    servers = json.loads((project / ".acme" / "servers.json").read_text(encoding="utf-8"))
    assert servers["mcpServers"][install.SERVER_NAME]["args"][-1] == "mcp"
    assert "swarmmem" in (project / "ACME.md").read_text(encoding="utf-8")
    assert plan.notes == ["Restart Acme Agent to load its hooks."]

    install.plan_agents(project, ["acme"], remove=True).write()
    assert json.loads((project / ".acme" / "hooks.json").read_text(encoding="utf-8")) == {
        "hooks": {}
    }
    assert not (project / "ACME.md").exists()


def test_the_new_hosts_hooks_run_end_to_end(acme: Host, project: Path) -> None:
    """Its own event names and payload keys in, its own output shape out: a brief at session
    start, the prompt's recall (without what the brief gave), proposals read at turn end."""
    start = hosts.parse("acme", "onSessionStart", json.dumps({"chat": "c1"}))
    brief = json.loads(run_hook(project, start))
    assert list(brief) == ["memory"] and ALEMBIC in brief["memory"]

    ask = {"chat": "c2", "message": "how do I apply the database migrations after pulling?"}
    recalled = json.loads(run_hook(project, hosts.parse("acme", "on-prompt", json.dumps(ask))))
    assert ALEMBIC in recalled["memory"]

    again = {"chat": "c1", "message": "which tool runs the database migrations after pulling?"}
    deduped = run_hook(project, hosts.parse("acme", "onPrompt", json.dumps(again)))
    assert deduped == "{}"  # JSON even when there is nothing to add

    done = run_hook(project, hosts.parse("acme", "onTurnDone", json.dumps({"chat": "c1"})))
    assert done == "{}"
    log = project / ".swarm" / "runs" / "c1" / "memory.jsonl"
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [(e["type"], e["host"], e["event"]) for e in events] == [
        ("session_brief", "acme", "onSessionStart"),
        ("prompt_injection_skipped", "acme", "onPrompt"),
        ("proposals_none", "acme", "onTurnDone"),
    ]
    assert hosts.render_notice("acme", PROMPT, "fix it") == '{"banner": "fix it"}'

"""The host table is complete: every host is one :class:`~swarmmem.hooks.hosts.Host` value,
and every list of hosts and events (the ``hook`` and ``init --agent`` choices, the events
``init`` wires, the opencode plugin's calls, the documentation) agrees with it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest

from swarmmem.cli import command_modules, main
from swarmmem.hooks import hosts, install
from swarmmem.hooks.hosts import TABLE

REPO = Path(__file__).resolve().parents[2]
ALL = sorted(TABLE)


def _choices(command: str, param: str) -> tuple[str, ...]:
    command_modules()
    cmd = main.commands[command]
    found = next(p for p in cmd.params if p.name == param)
    assert isinstance(found.type, click.Choice)
    return tuple(found.type.choices)


def test_every_list_of_hosts_is_the_table() -> None:
    names = tuple(TABLE)
    assert names == ("claude-code", "codex", "gemini", "cursor", "opencode")
    assert all(TABLE[name].name == name for name in names)
    assert hosts.HOSTS == install.AGENTS == names
    assert _choices("hook", "host") == names
    assert _choices("init", "agents") == names
    assert set(hosts.EVENTS) == set(names)
    assert {n for n in names if TABLE[n].output.json_only} == hosts.JSON_ONLY
    assert set(hosts.NOTICE_FIELDS) == {n for n in names if TABLE[n].output.notice_field}


@pytest.mark.parametrize("name", ALL)
def test_each_host_answers_every_kind_of_hook_under_one_spelling_each(name: str) -> None:
    host = TABLE[name]
    spellings = [hosts.kebab(e.name) for e in host.events]
    assert len(spellings) == len(set(spellings)), "two events of one host read the same"
    assert {e.kind for e in host.events} == set(hosts.KINDS)
    for event in host.events:
        assert hosts.event_kind(name, event.name) == event.kind
        assert hosts.event_kind(name, hosts.kebab(event.name)) == event.kind
    # each kind that adds context has a wired event the host reports back under its name
    for kind in hosts.CONTEXT_KINDS:
        assert any(e.kind == kind for e in host.wired_events())
        assert host.event_name(kind) in {e.name for e in host.events}


@pytest.mark.parametrize("name", ALL)
def test_each_host_renders_what_it_reads(name: str) -> None:
    """Context reaches the output field the host reads; nothing is the host's empty answer."""
    host = TABLE[name]
    for kind in hosts.KINDS:
        empty = hosts.empty_output(name, kind)
        assert hosts.render(name, kind, None) == empty
        if host.output.json_only:
            assert isinstance(json.loads(empty), dict)
        else:
            assert empty == ""
    for kind in hosts.CONTEXT_KINDS:
        answer = json.loads(hosts.render(name, kind, "ctx"))
        if host.output.nested:
            answer = answer["hookSpecificOutput"]
            assert answer["hookEventName"] == host.event_name(kind)
        assert answer[host.output.context_key] == "ctx"


def test_every_init_writer_is_used_and_every_used_one_exists() -> None:
    used = {file.writes for host in TABLE.values() for file in host.init}
    assert used == set(install.WRITERS)


@pytest.mark.parametrize("name", ALL)
def test_init_wires_every_wired_event_and_nothing_else(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What ``init --agent`` writes runs ``swarmmem hook <host> <event>`` for exactly the
    wired events (the opencode plugin: calls exactly them), the host's MCP server and its
    instruction section; ``--remove`` takes all of it out again."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "repo"
    root.mkdir()
    host = TABLE[name]
    wired = {e.name for e in host.wired_events()}
    plan = install.plan_agents(root, [name])
    written = "\n".join(text or "" for text in plan.files.values())
    if any(f.writes.startswith("plugin-") for f in host.init):
        called = set(re.findall(r'runHook\("([a-z-]+)"', written))
        assert called == wired
    else:
        called = set(re.findall(rf" hook {re.escape(name)} (\S+?)[\"']", written))
        assert called == wired
    assert install.SERVER_NAME in written
    assert root / host.instructions in plan.files
    plan.write()
    assert install._wired(install.plan_agents(root, [], remove=True), host)
    removal = install.plan_agents(root, [name], remove=True)
    removal.write()
    assert not install._wired(install.plan_agents(root, [], remove=True), host)
    for path in root.rglob("*"):
        if path.is_file():
            assert f" hook {name} " not in path.read_text(encoding="utf-8"), path


@pytest.mark.parametrize(
    "path",
    ["src/swarmmem/hooks/hosts.py", "src/swarmmem/hooks/install.py", "docs/hosts.md"],
)
def test_the_documentation_names_every_host(path: str) -> None:
    text = (REPO / path).read_text(encoding="utf-8")
    assert [name for name in TABLE if f"``{name}``" not in text and f"`{name}`" not in text] == []

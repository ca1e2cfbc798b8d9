"""swarmmem's Codex hooks inside the real Codex CLI (``tests/host_codex.py``), against a fake API.

A small Python project in ``tmp_path`` (a git repository) gets ``swarmmem init --agent codex``
(run through the venv's ``swarmmem`` console script) and three curated memories added through
the Python API (an alembic migration rule, a test convention and a lint convention); the
session brief is cut to two memories, so the alembic one can only arrive through the prompt's
recall. The person trusts the project and then each of its hooks, the way Codex records it:
through ``codex app-server`` (``config/batchWrite`` of the project's ``trust_level``,
``hooks/list``, then ``config/batchWrite`` of each hook's ``trusted_hash``, what the TUI's
``/hooks`` view does). Then three ``codex exec`` sessions go through the hooks init wrote:

1. a paraphrase of the alembic memory: the SessionStart brief (the two newest memories)
   reaches the model before the prompt, the UserPromptSubmit recall adds the alembic memory
   (and not the lint rule) after it, and the fake reply's fenced ``memoryProposals`` block
   becomes exactly one pending proposal, filed by the Stop hook from
   ``last_assistant_message``;
2. an unrelated prompt: the brief again (a new session), but no prompt recall;
3. a session that runs two commands and proposes nothing: its Stop hook asks it once to
   propose (``{"decision": "block", "reason": ...}``), Codex goes on with that question as a
   user message, and the next Stop (``stop_hook_active``) lets it end.

No run warns that the SessionEnd timeout was clamped (init writes Codex's 3 s). A second test
checks that without the trust records no swarmmem hook runs: in an untrusted project Codex
loads no project configuration, in a trusted one it still skips hooks nobody trusted, and a
hook whose command changed after it was trusted is skipped as ``modified``.

What Codex 0.171.0 was seen to need and do (more in ``tests/host_codex.py``)
---------------------------------------------------------------------------

* Trust: project trust alone runs no project hook, and nothing says a hook was skipped; each
  hook needs its own ``hooks.state`` record whose ``trusted_hash`` matches the hook now.
* Hook context: SessionStart's ``additionalContext`` arrives as a ``developer`` message in
  front of the prompt's user message, UserPromptSubmit's as one right after it; Codex's own
  developer messages (its prompt, the skills list) and the ``AGENTS.md`` user message come
  first.
* Stop: a ``decision: block`` answer is shown as "hook: Stop Blocked" and its reason comes
  back as a user message wrapped in ``<hook_prompt hook_run_id="stop:...">``, in the same turn.
* ``codex exec`` shows a hook's ``systemMessage`` nowhere, so unlike the Gemini CLI test this
  one cannot check the "filed 1 for review" notice; the run log says what Stop filed.
* A ``hooks.json`` asking more than 3 s for SessionEnd makes every run say "warning: clamping
  SessionEnd hook timeout to 3s in <path>" (``host_codex.SESSION_END_CLAMP``).
* The hooks run with the hook helper off (``SWARMMEM_HOOK_HELPER=0``), so no helper process
  outlives the test. The whole file took 6-7 s here with Codex in the cache.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import host_codex
import host_project
import hosts
import pytest
from host_project import PARAPHRASE, RECALL_HEADER, UNRELATED

from swarmmem.core.recall.session import NUDGE_LINE

pytestmark = pytest.mark.slow

WORK = "which files did I touch in the working tree?"
REPLIES = {**host_project.REPLIES, WORK: "Nothing is modified; README.md is new."}
WORK_COMMANDS = ("git status --short", "git diff --stat")
NUDGE_ANSWER = "Nothing durable to propose from this session."

EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd", "PreCompact")


@pytest.fixture(scope="module")
def codex_cli() -> Path:
    """Return the pinned codex executable, or skip (fail under SWARMMEM_HOSTS_REQUIRED=1)."""
    return hosts.require_cli("Codex CLI", host_codex.ensure_codex_cli)


def make_project(project: Path, home: Path) -> None:
    """Write the project, make it a git repository and run ``init --agent codex``."""
    host_project.make_project(project, home)
    init = host_project.swarmmem_cli(project, home, "init", "--agent", "codex")
    assert init["success"] is True
    notes = "\n".join(init["notes"])
    assert "/hooks" in notes and "[mcp_servers.swarmmem]" in notes, notes
    settings = json.loads((project / ".codex" / "hooks.json").read_text(encoding="utf-8"))
    for event in EVENTS:
        (handler,) = settings["hooks"][event][0]["hooks"]
        assert handler["command"] == f"swarmmem hook codex {event}", handler  # by name
        assert handler["timeout"] == (3 if event == "SessionEnd" else 30), handler
    assert "memoryProposals" in (project / "AGENTS.md").read_text(encoding="utf-8")


def is_nudge(text: str) -> bool:
    """True for the user message Codex makes of the Stop hook's question."""
    return text.startswith("<hook_prompt") and NUDGE_LINE in text


def reply(body: dict[str, Any]) -> str | list[dict[str, Any]]:
    """Answer by the prompt of the request (its first user message that is a known prompt):
    ``WORK`` runs ``WORK_COMMANDS`` one by one before it answers, and the Stop hook's
    question gets ``NUDGE_ANSWER``."""
    users = host_codex.role_texts(body, "user")
    if users and is_nudge(users[-1]):
        return NUDGE_ANSWER
    for prompt, answer in REPLIES.items():
        if prompt in users:
            ran = len(host_codex.function_outputs(body))
            if prompt == WORK and ran < len(WORK_COMMANDS):
                return [host_codex.function_call("exec_command", {"cmd": WORK_COMMANDS[ran]})]
            return answer
    raise AssertionError(f"no known prompt among {users!r}")


def hook_contexts(body: dict[str, Any], prompt: str) -> tuple[list[str], list[str]]:
    """The developer messages right before the prompt's user message (the SessionStart
    brief; Codex's own come before the ``AGENTS.md`` user message) and right after it (the
    UserPromptSubmit recall)."""
    items = host_codex.messages(body)
    index = items.index(("user", prompt))
    before: list[str] = []
    for role, text in reversed(items[:index]):
        if role != "developer":
            break
        before.insert(0, text)
    after: list[str] = []
    for role, text in items[index + 1 :]:
        if role != "developer":
            break
        after.append(text)
    return before, after


def test_codex_session_gets_memory_and_files_proposals(codex_cli: Path, tmp_path: Path) -> None:
    """Brief, recall, no recall for small talk, one filed proposal, one nudge to propose."""
    project, home = tmp_path / "project", tmp_path / "home"
    make_project(project, home)
    ids = host_project.add_memories(project, home)
    hook_env = host_project.hook_env(helper=False)

    bodies: dict[str, list[dict[str, Any]]] = {}
    results: dict[str, subprocess.CompletedProcess[str]] = {}
    sessions: dict[str, str] = {}
    with host_codex.FakeResponses(reply) as fake:
        host_codex.prepare_home(home, fake.base_url)
        trusted = host_codex.trust_project(codex_cli, home, project)
        assert trusted["errors"] == [] and trusted["warnings"] == [], trusted
        listed = {(h["eventName"], h["source"], h["trustStatus"]) for h in trusted["hooks"]}
        wanted = {(e[0].lower() + e[1:], "project", "trusted") for e in EVENTS}
        assert listed == wanted, trusted["hooks"]
        for prompt in REPLIES:
            before = len(fake.response_requests())
            done = host_codex.run_codex(
                codex_cli, prompt, hosts.Launch(project, home, extra_env=hook_env)
            )
            assert done.returncode == 0, f"{prompt!r}:\n{done.stdout}\n{done.stderr}"
            bodies[prompt] = fake.response_requests()[before:]
            results[prompt] = done
            session_id = host_codex.session_id(done.stderr)
            assert session_id, done.stderr
            sessions[prompt] = session_id
    assert fake.errors == []
    assert {(r["method"], r["path"]) for r in fake.requests} == {("POST", "/v1/responses")}

    for done in results.values():
        # 5. init's 3 s SessionEnd timeout is what Codex allows: no clamping warning
        assert host_codex.SESSION_END_CLAMP not in done.stderr, done.stderr
        assert "Untrusted project-local configuration" not in done.stderr
        for event in ("SessionStart", "UserPromptSubmit"):
            assert f"hook: {event} Completed" in done.stderr, done.stderr
    for prompt in (PARAPHRASE, UNRELATED):
        assert results[prompt].stdout.strip() == REPLIES[prompt].strip()
        assert len(bodies[prompt]) == 1, f"{prompt!r}: {len(bodies[prompt])} model requests"
        assert "hook: Stop Completed" in results[prompt].stderr

    # 1. the brief (SessionStart) is a developer message in front of the prompt
    briefs, recalls = hook_contexts(bodies[PARAPHRASE][0], PARAPHRASE)
    assert len(briefs) == 1, host_codex.messages(bodies[PARAPHRASE][0])
    host_project.check_brief(briefs[0], ids)

    # 2. the prompt's recall (UserPromptSubmit) follows it with the alembic memory only
    assert len(recalls) == 1, host_codex.messages(bodies[PARAPHRASE][0])
    host_project.check_recall(recalls[0], ids)

    counts = {"SessionStart": 1, "UserPromptSubmit": 1, "Stop": 1, "SessionEnd": 1}
    raw_log, events = host_project.check_run_log(project, sessions[PARAPHRASE], "codex", counts)
    start, injected, stop, end = events
    host_project.check_brief_event(start, ids)
    host_project.check_recall_event(injected, ids)
    assert PARAPHRASE not in raw_log

    # 3. the reply's memoryProposals block is filed once, by Stop (SessionEnd finds it known)
    host_project.check_filed_event(stop)
    assert "nudged" not in stop
    assert end["type"] == "proposals_none", end
    proposal = host_project.check_pending_proposal(
        project, home, stop["proposalIds"], sessions[PARAPHRASE]
    )

    # 4. the unrelated prompt gets the brief of its new session, but no prompt recall
    briefs, recalls = hook_contexts(bodies[UNRELATED][0], UNRELATED)
    assert len(briefs) == 1 and briefs[0].startswith(RECALL_HEADER), briefs
    assert all(f"[{i}]" in briefs[0] for i in host_project.briefed(ids)), briefs
    assert recalls == [], recalls
    _, events = host_project.run_log(project, sessions[UNRELATED])
    assert [(e["event"], e["type"]) for e in events] == [
        ("SessionStart", "session_brief"),
        ("UserPromptSubmit", "prompt_injection_skipped"),
        ("Stop", "proposals_none"),
        ("SessionEnd", "proposals_none"),
    ]
    assert events[1]["reason"] == "no_results"
    assert all("nudged" not in e for e in events)  # no commands run: never asked

    # 6. two commands and no proposal: Stop asks once, and lets the answer end the session
    work = bodies[WORK]
    assert [len(host_codex.function_outputs(body)) for body in work] == [0, 1, 2, 2], work
    nudges = [text for text in host_codex.role_texts(work[-1], "user") if is_nudge(text)]
    assert len(nudges) == 1, host_codex.messages(work[-1])
    assert not any(is_nudge(t) for body in work[:-1] for t in host_codex.role_texts(body, "user"))
    assert results[WORK].stdout.strip() == NUDGE_ANSWER
    assert "hook: Stop Blocked" in results[WORK].stderr
    _, events = host_project.run_log(project, sessions[WORK])
    stops = [e for e in events if e["event"] == "Stop"]
    assert [(e["type"], e.get("nudged", False)) for e in stops] == [
        ("proposals_none", True),
        ("proposals_none", False),
    ], stops
    assert [p.id for p in host_project.pending_proposals(project, home)] == [proposal.id]


def test_hooks_run_only_once_trusted(codex_cli: Path, tmp_path: Path) -> None:
    """No trust: no project configuration. Project trust alone: the hooks are listed as
    untrusted and none runs. Then a hook whose command changed after it was trusted is
    ``modified`` and skipped while the others run: the steps ``init``'s note tells of."""
    project, home = tmp_path / "project", tmp_path / "home"
    make_project(project, home)
    hook_env = host_project.hook_env(helper=False)
    root = str(project.resolve())
    runs = project / ".swarm" / "runs"
    with host_codex.FakeResponses(reply) as fake:
        host_codex.prepare_home(home, fake.base_url)

        # an untrusted project: Codex says so and loads no project configuration
        done = host_codex.run_codex(codex_cli, UNRELATED, hosts.Launch(project, home))
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
        assert done.stdout.strip() == REPLIES[UNRELATED]
        assert "Untrusted project-local configuration is disabled" in done.stderr
        assert "hook:" not in done.stderr
        assert not runs.exists()

        # the project trusted, its hooks not: listed as untrusted, and none runs
        with host_codex.AppServer(codex_cli, home, project) as server:
            edit = {
                "keyPath": f"projects.{host_codex.toml_key(root)}.trust_level",
                "value": "trusted",
                "mergeStrategy": "upsert",
            }
            server.request("config/batchWrite", {"edits": [edit]})
            listed = host_codex.list_hooks(server, project)
        assert {hook["trustStatus"] for hook in listed["hooks"]} == {"untrusted"}
        assert len(listed["hooks"]) == len(EVENTS)
        done = host_codex.run_codex(codex_cli, UNRELATED, hosts.Launch(project, home))
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
        assert "Untrusted project-local configuration" not in done.stderr
        assert "hook:" not in done.stderr
        assert not runs.exists()
        assert all(RECALL_HEADER not in json.dumps(body) for body in fake.response_requests())

        # every hook trusted, then SessionStart's command changed: only it is skipped
        host_codex.trust_project(codex_cli, home, project)
        hooks_path = project / ".codex" / "hooks.json"
        settings = json.loads(hooks_path.read_text(encoding="utf-8"))
        handler = settings["hooks"]["SessionStart"][0]["hooks"][0]
        handler["command"] = f"env SWARMMEM_CHANGED=1 {handler['command']}"
        hooks_path.write_text(json.dumps(settings, indent=2), encoding="utf-8")
        with host_codex.AppServer(codex_cli, home, project) as server:
            listed = host_codex.list_hooks(server, project)
        status = {hook["eventName"]: hook["trustStatus"] for hook in listed["hooks"]}
        assert status.pop("sessionStart") == "modified", listed["hooks"]
        assert set(status.values()) == {"trusted"}, listed["hooks"]
        done = host_codex.run_codex(
            codex_cli, UNRELATED, hosts.Launch(project, home, extra_env=hook_env)
        )
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert fake.errors == []
    assert "hook: SessionStart" not in done.stderr
    assert "hook: UserPromptSubmit Completed" in done.stderr
    session_id = host_codex.session_id(done.stderr)
    assert session_id
    _, events = host_project.run_log(project, session_id)
    assert [e["event"] for e in events] == ["UserPromptSubmit", "Stop", "SessionEnd"], events

"""swarmmem's Claude Code hooks inside the real CLI (``tests/hosts.py``), against the fake API.

A small Python project in ``tmp_path`` (a git repository) gets ``swarmmem init --agent
claude-code`` and three curated memories (an alembic migration rule, a test convention and a
lint convention). Then one Claude Code session of three print-mode runs, started in the
project's subfolder ``src/app``, goes through the hooks that init wrote:

1. a new session (``--session-id``) with a paraphrase of the alembic memory: the SessionStart
   brief and the UserPromptSubmit recall reach the model, and the fake reply carries a fenced
   ``memoryProposals`` block;
2. ``--resume`` with an unrelated prompt, and 3. ``--resume`` with "ok": neither gets recall.

Afterwards the agent's proposal is pending exactly once (Stop and SessionEnd both read it in
every run) and the session's run log says what each hook did, without the raw prompt text.
The test runs with the hook helper process (``SWARMMEM_HOOK_HELPER_IDLE=5``, then it waits
for the helper to exit) and without it (``SWARMMEM_HOOK_HELPER=0``).

Claude Code 2.1.328 reads a project's ``.claude/settings.json`` from the folder it is started
in only, not from the repository root (anthropics/claude-code#36793, #74023, #86187): started
in ``src/app``, it runs none of the project-level hooks. The project is therefore set up with
``swarmmem init --agent claude-code --user``, as the README advises for sessions started in a
subfolder: the hooks go to ``$HOME/.claude/settings.json`` and get ``cwd`` = ``src/app``, and
must find the project root themselves.

The last test sets the project up with ``swarmmem`` off ``PATH``: the hooks and the MCP server
reach the CLI through Claude Code's per-user files, and the committed ones name no path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import host_project
import hosts
import pytest
from host_project import PARAPHRASE, PROPOSAL, UNRELATED

pytestmark = pytest.mark.slow

TRIVIAL = "ok"
REPLIES = {**host_project.REPLIES, TRIVIAL: "Glad to help."}

START_CONTEXT = "SessionStart hook additional context: "
PROMPT_CONTEXT = "UserPromptSubmit hook additional context: "


@pytest.fixture
def claude_cli() -> Path:
    """Return the pinned ``claude`` binary, or skip (fail under SWARMMEM_HOSTS_REQUIRED=1)."""
    return hosts.require_claude_cli()


def init_user_hooks(project: Path, home: Path) -> None:
    """Run ``init --agent claude-code --user``: the MCP server in the project, the hooks in
    ``$HOME/.claude/settings.json``."""
    init = host_project.swarmmem_cli(project, home, "init", "--agent", "claude-code", "--user")
    assert init["success"] is True
    assert (project / ".mcp.json").is_file() and not (project / ".claude").exists()
    settings_path = home / ".claude" / "settings.json"
    settings = json.loads(settings_path.read_text(encoding="utf-8"))
    for event in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"):
        command = settings["hooks"][event][0]["hooks"][0]["command"]
        assert command.endswith(f"hook claude-code {event}"), command


def reply(body: dict[str, Any]) -> str:
    """Answer the latest of our prompts in the request (a resumed request holds them all)."""
    for text in reversed(hosts.user_texts(body)):
        if text in REPLIES:
            return REPLIES[text]
    raise AssertionError(f"no known prompt among {hosts.user_texts(body)!r}")


def context_after(body: dict[str, Any], prompt: str) -> str:
    """The system turns that follow the last user turn holding ``prompt``, joined.

    That is where Claude Code 2.1.328 puts the hook context for that prompt; a resumed
    request also holds the earlier prompts with their own context, which this leaves out.
    """
    messages = body.get("messages") or []
    index = max(
        i
        for i, message in enumerate(messages)
        if message.get("role") == "user" and prompt in hosts.content_texts(message.get("content"))
    )
    texts: list[str] = []
    for message in messages[index + 1 :]:
        if message.get("role") != "system":
            break
        texts.extend(hosts.content_texts(message.get("content")))
    return "\n\n".join(texts)


def section(context: str, marker: str) -> str | None:
    """The hook context after ``marker`` up to the other hook's marker, or ``None``."""
    start = context.find(marker)
    if start < 0:
        return None
    rest = context[start + len(marker) :]
    ends = [i for other in (START_CONTEXT, PROMPT_CONTEXT) if (i := rest.find(other)) >= 0]
    return rest[: min(ends)] if ends else rest


@pytest.mark.parametrize("helper", [True, False], ids=["helper", "in-process"])
def test_claude_code_session_gets_memory_and_files_proposals(
    claude_cli: Path, tmp_path: Path, helper: bool
) -> None:
    """Brief, recall, no recall for small talk, one filed proposal, and an honest run log."""
    project, home = tmp_path / "project", tmp_path / "home"
    host_project.make_project(project, home)
    init_user_hooks(project, home)
    ids = host_project.add_memories(project, home)
    assert host_project.swarmmem_cli(project, home, "pending")["pending"] == []

    session_id = str(uuid.uuid4())
    workdir = project / "src" / "app"
    bodies: dict[str, dict[str, Any]] = {}
    try:
        with hosts.FakeAnthropic(reply) as fake:
            for prompt in (PARAPHRASE, UNRELATED, TRIVIAL):
                first = prompt == PARAPHRASE
                done = hosts.run_claude(
                    claude_cli,
                    prompt,
                    hosts.Launch(workdir, home, fake.url, host_project.hook_env(helper=helper)),
                    session_id=session_id if first else None,
                    resume=None if first else session_id,
                )
                new = fake.main_requests()[len(bodies) :]
                bodies[prompt] = host_project.one_turn(done, prompt, REPLIES[prompt], new)
        assert fake.errors == []
    finally:
        host_project.wait_for_helper(project, helper)

    # 1. the session-start brief holds the newest curated memories
    context = context_after(bodies[PARAPHRASE], PARAPHRASE)
    brief = section(context, START_CONTEXT)
    assert brief is not None, context[:2000]
    host_project.check_brief(brief, ids)

    # 2. the paraphrase gets the alembic memory, and not the unrelated lint rule
    recall = section(context, PROMPT_CONTEXT)
    assert recall is not None, context[-2000:]
    host_project.check_recall(recall, ids)

    # 3. the unrelated prompt and "ok" get no prompt context at all
    for prompt in (UNRELATED, TRIVIAL):
        context = context_after(bodies[prompt], prompt)
        assert PROMPT_CONTEXT not in context, context[-2000:]  # the log shows the hook ran

    # 5. the run log says what each hook did
    counts = {"SessionStart": 3, "UserPromptSubmit": 3, "Stop": 3, "SessionEnd": 3}
    raw_log, events = host_project.check_run_log(project, session_id, "claude-code", counts)
    starts = [e for e in events if e["event"] == "SessionStart"]
    host_project.check_brief_event(starts[0], ids)
    # the resumed runs keep the brief the session already holds
    assert [(e["type"], e["reason"]) for e in starts[1:]] == [
        ("session_brief_skipped", "already_briefed")
    ] * 2
    injected, unrelated, trivial = (e for e in events if e["event"] == "UserPromptSubmit")
    host_project.check_recall_event(injected, ids)
    assert unrelated["type"] == "prompt_injection_skipped"
    assert unrelated["reason"] == "no_results"
    assert trivial["type"] == "prompt_injection_skipped"
    assert trivial["reason"] == "trivial_prompt"
    for words in (PARAPHRASE, UNRELATED, "schema changes after I pull", "name for a cat"):
        assert words not in raw_log
    readers = [e for e in events if e["event"] in ("Stop", "SessionEnd")]
    filed = [e for e in readers if e["type"] == "proposals_filed"]
    assert len(filed) == 1, readers
    assert filed[0]["event"] == "Stop"
    host_project.check_filed_event(filed[0])
    assert all(e["type"] == "proposals_none" for e in readers if e is not filed[0]), readers

    # 4. the agent's proposal is pending, once
    host_project.check_pending_proposal(project, home, filed[0]["proposalIds"], session_id)

    host_project.check_helper(project, helper)


WORK_PROMPT = "add a created_at column to Item and run the tests"
NUDGED_TEXT = "Item rows carry created_at, set by src/app/models.py when an Item is built."
NUDGED_BLOCK = json.dumps(
    {"memoryProposals": [{**PROPOSAL, "text": NUDGED_TEXT, "evidenceRefs": ["src/app/models.py"]}]}
)


def test_a_session_that_worked_is_asked_once_to_propose(claude_cli: Path, tmp_path: Path) -> None:
    """The real CLI runs two commands and stops without a proposal; the Stop hook's
    ``decision: block`` makes it go on with the question, its answer's proposal is filed, and
    the stop after that (``stop_hook_active``) lets it stop."""
    from swarmmem.core.recall.session import NUDGE_LINE

    project, home = tmp_path / "project", tmp_path / "home"
    host_project.make_project(project, home)
    init_user_hooks(project, home)
    asked: list[str] = []

    def answer(body: dict[str, Any]) -> str | list[dict[str, Any]]:
        texts = hosts.user_texts(body)
        if any(NUDGE_LINE in t for t in texts):  # the stop hook's question reached the model
            asked.append(next(t for t in texts if NUDGE_LINE in t))
            return f"One durable fact from this session:\n\n```json\n{NUDGED_BLOCK}\n```"
        commands = [m for m in body.get("messages") or () if m.get("role") == "assistant"]
        if len(commands) < 2:  # run two commands first, one per turn
            return [hosts.tool_use("Bash", {"command": "true", "description": "check"})]
        return "Done: the column is added and the tests pass."

    session_id = str(uuid.uuid4())
    with hosts.FakeAnthropic(answer) as fake:
        at = hosts.Launch(project, home, fake.url, host_project.hook_env(helper=False))
        done = hosts.run_claude(
            claude_cli, WORK_PROMPT, at, session_id=session_id, allowed_tools=["Bash"]
        )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert fake.errors == []
    assert len(asked) == 1  # asked once
    pending = host_project.swarmmem_cli(project, home, "pending")["pending"]
    assert [p["text"] for p in pending] == [NUDGED_TEXT]
    _, events = host_project.run_log(project, session_id)
    stops = [e for e in events if e["event"] == "Stop"]
    assert [e.get("nudged", False) for e in stops] == [True, False]
    assert stops[1]["type"] == "proposals_filed"


def path_without_swarmmem() -> str:
    """This process's ``PATH`` without relative entries and folders holding a ``swarmmem``."""
    entries = os.environ.get("PATH", os.defpath).split(os.pathsep)
    return os.pathsep.join(
        e for e in entries if os.path.isabs(e) and shutil.which("swarmmem", path=e) is None
    )


def test_off_path_init_reaches_claude_code_through_its_per_user_files(
    claude_cli: Path, tmp_path: Path
) -> None:
    """``swarmmem`` not on ``PATH`` (a virtual environment that is not activated): ``init
    --agent claude-code`` keeps the committed files free of this machine's path, and the real
    CLI still runs the hooks (``.claude/settings.local.json``) and the MCP server (this
    project's local scope in ``~/.claude.json``, which wins over ``.mcp.json``'s by-name
    entry)."""
    project, home = tmp_path / "project", tmp_path / "home"
    host_project.make_project(project, home)
    path = path_without_swarmmem()
    env = {**host_project.cli_env(home), "PATH": path}
    script = str(host_project.swarmmem_script())
    done = subprocess.run(
        [script, "--json", "init", "--agent", "claude-code"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    committed = [project / ".mcp.json", project / "CLAUDE.md"]
    assert all(script not in p.read_text(encoding="utf-8") for p in committed)
    assert not (project / ".claude" / "settings.json").exists()
    assert script in (project / ".claude" / "settings.local.json").read_text(encoding="utf-8")
    ids = host_project.add_memories(project, home)

    recall_tool = "mcp__swarmmem__swarm_memory_recall"

    def answer(body: dict[str, Any]) -> str | list[dict[str, Any]]:
        if len(fake.main_requests()) > 1:  # the tool's result is the newest user text
            answered = "alembic upgrade head" in hosts.user_texts(body)[-1]
            return "done" if answered else "the tool gave nothing"
        return [hosts.tool_use(recall_tool, {"query": "database migrations"})]

    with hosts.FakeAnthropic(answer) as fake:
        run = hosts.run_claude(
            claude_cli,
            PARAPHRASE,
            hosts.Launch(project, home, fake.url, {"PATH": path, "SWARMMEM_HOOK_HELPER": "0"}),
            session_id=str(uuid.uuid4()),
            allowed_tools=["mcp__swarmmem"],
        )
    assert run.returncode == 0, f"{run.stdout}\n{run.stderr}"
    first, second = fake.main_requests()[:2]
    context = context_after(first, PARAPHRASE)
    brief, recall = section(context, START_CONTEXT), section(context, PROMPT_CONTEXT)
    assert brief is not None and recall is not None, context[:2000]
    host_project.check_brief(brief, ids)
    host_project.check_recall(recall, ids)
    # the MCP server answered the tool call: its result reached the model
    assert run.stdout.strip() == "done", hosts.user_texts(second)[-3:]

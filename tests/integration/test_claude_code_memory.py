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
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import hosts
import pytest

from swarmmem.hooks.client import socket_path

pytestmark = pytest.mark.slow

ALEMBIC = "Database migrations are managed with alembic; run alembic upgrade head after pulling."
TESTS = "Run the test suite with pytest -q from the project root; the tests live in tests/."
LINT = "Lint with ruff check before committing; the line length limit is 100."

PARAPHRASE = "how should I apply the database schema changes after I pull?"
UNRELATED = "what's a good name for a cat?"
TRIVIAL = "ok"

PROPOSED_TEXT = "Seed data is loaded by src/app/db.py; rerun it after alembic upgrade head."
PROPOSAL = {
    "operation": "add",
    "kind": "repo_convention",
    "text": PROPOSED_TEXT,
    "rationale": "Found while explaining the migration steps.",
    "evidenceRefs": ["src/app/db.py"],
}
PROPOSAL_BLOCK = json.dumps({"memoryProposals": [PROPOSAL]}, indent=2)
REPLIES = {
    PARAPHRASE: f"Run `alembic upgrade head` after pulling.\n\n```json\n{PROPOSAL_BLOCK}\n```",
    UNRELATED: "How about Miso?",
    TRIVIAL: "Glad to help.",
}

START_CONTEXT = "SessionStart hook additional context: "
PROMPT_CONTEXT = "UserPromptSubmit hook additional context: "
RECALL_HEADER = "## Retrieved Swarm Memory"

PROJECT_FILES = {
    "pyproject.toml": '[project]\nname = "shop"\nversion = "0.1.0"\n'
    'dependencies = ["sqlalchemy", "alembic"]\n\n[tool.ruff]\nline-length = 100\n',
    "README.md": "# shop\n\nA small web shop.\n",
    "src/app/__init__.py": "",
    "src/app/db.py": 'from sqlalchemy import create_engine\n\nENGINE = create_engine("sqlite:///shop.db")\n',
    "src/app/models.py": "from dataclasses import dataclass\n\n\n@dataclass\nclass Item:\n"
    "    name: str\n    price_cents: int\n",
    "tests/test_models.py": "from app.models import Item\n\n\ndef test_item():\n"
    '    assert Item("tea", 250).price_cents == 250\n',
}
MEMORIES = (
    (ALEMBIC, "Seen in the deploy notes.", "src/app/db.py"),
    (TESTS, "CI runs the same command.", "tests/test_models.py"),
    (LINT, "The CI lint job fails otherwise.", "pyproject.toml"),
)


@pytest.fixture
def claude_cli() -> Path:
    """Return the pinned ``claude`` binary, or skip (fail under SWARMMEM_HOSTS_REQUIRED=1)."""
    return hosts.require_claude_cli()


def swarmmem_command() -> list[str]:
    """The venv's ``swarmmem`` console script beside this interpreter (else ``-m swarmmem``)."""
    script = Path(sys.executable).parent / "swarmmem"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "swarmmem"]


def cli_env(home: Path) -> dict[str, str]:
    """This environment without swarmmem settings or user configuration, ``HOME`` = ``home``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("SWARMMEM_") and key != "XDG_CONFIG_HOME"
    }
    env["HOME"] = str(home)
    return env


def swarmmem(project: Path, home: Path, *args: str) -> dict[str, Any]:
    """Run ``swarmmem --json ARGS`` in ``project`` and return its JSON answer."""
    done = subprocess.run(
        [*swarmmem_command(), "--json", *args],
        cwd=project,
        env=cli_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"swarmmem {args}:\n{done.stdout}\n{done.stderr}"
    answer = json.loads(done.stdout)
    assert isinstance(answer, dict)
    return answer


def make_project(project: Path) -> None:
    """Write the project's files and make it a git repository."""
    for relative, text in PROJECT_FILES.items():
        path = project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)


def add_memory(project: Path, home: Path, text: str, rationale: str, evidence: str) -> str:
    """Propose a repo convention and curate it in; return the new memory's id."""
    proposed = swarmmem(
        project,
        home,
        "propose",
        "--kind",
        "repo_convention",
        "--text",
        text,
        "--rationale",
        rationale,
        "--evidence",
        evidence,
    )
    curated = swarmmem(project, home, "curate", proposed["proposal_id"], "add")
    assert curated["success"] is True
    memory_id = curated["memory_id"]
    assert isinstance(memory_id, str)
    return memory_id


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


def helper_gone(project: Path) -> bool:
    """True when no helper holds the project's ``.swarm/hookd.lock`` and its socket is gone."""
    if socket_path(project).exists():
        return False
    with open(project / ".swarm" / "hookd.lock", "rb") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        fcntl.flock(lock, fcntl.LOCK_UN)
    return True


@pytest.mark.parametrize("helper", [True, False], ids=["helper", "in-process"])
def test_claude_code_session_gets_memory_and_files_proposals(
    claude_cli: Path, tmp_path: Path, helper: bool
) -> None:
    """Brief, recall, no recall for small talk, one filed proposal, and an honest run log."""
    project, home = tmp_path / "project", tmp_path / "home"
    make_project(project)
    home.mkdir()
    init = swarmmem(project, home, "init", "--agent", "claude-code", "--user")
    assert init["success"] is True
    assert (project / ".mcp.json").is_file() and not (project / ".claude").exists()
    settings_path = home / ".claude" / "settings.json"
    settings = json.loads(settings_path.read_text(encoding="utf-8"))
    for event in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"):
        command = settings["hooks"][event][0]["hooks"][0]["command"]
        assert command.endswith(f"hook claude-code {event}"), command
    ids = [add_memory(project, home, *memory) for memory in MEMORIES]
    alembic_id, _, lint_id = ids
    # a brief of the two newest memories: the prompt's recall may add only the third (a
    # memory the brief gave is in the context already and is never injected again)
    config_path = project / ".opencode" / "opencode-swarm.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["memory"].setdefault("recall", {})["sessionBrief"] = {"maxItems": 2}
    config_path.write_text(json.dumps(config), encoding="utf-8")
    briefed = ids[1:]
    assert swarmmem(project, home, "pending")["pending"] == []

    session_id = str(uuid.uuid4())
    workdir = project / "src" / "app"
    extra_env = {"SWARMMEM_HOOK_HELPER_IDLE": "5"}
    if not helper:
        extra_env["SWARMMEM_HOOK_HELPER"] = "0"
    bodies: dict[str, dict[str, Any]] = {}
    try:
        with hosts.FakeAnthropic(reply) as fake:
            for prompt in (PARAPHRASE, UNRELATED, TRIVIAL):
                first = prompt == PARAPHRASE
                done = hosts.run_claude(
                    claude_cli,
                    prompt,
                    cwd=workdir,
                    home=home,
                    base_url=fake.url,
                    extra_env=extra_env,
                    session_id=session_id if first else None,
                    resume=None if first else session_id,
                )
                assert done.returncode == 0, f"{prompt!r}:\n{done.stdout}\n{done.stderr}"
                assert done.stdout.strip() == REPLIES[prompt].strip()
                new = fake.main_requests()[len(bodies) :]
                assert len(new) == 1, f"{prompt!r}: {len(new)} agent requests"
                bodies[prompt] = new[0]
        assert fake.errors == []
    finally:
        if helper and (project / ".swarm" / "hookd.lock").exists():
            deadline = time.monotonic() + 30
            while not helper_gone(project) and time.monotonic() < deadline:
                time.sleep(0.25)

    # 1. the session-start brief holds the newest curated memories
    context = context_after(bodies[PARAPHRASE], PARAPHRASE)
    brief = section(context, START_CONTEXT)
    assert brief is not None, context[:2000]
    assert brief.startswith(RECALL_HEADER), brief[:500]
    for memory_id, (text, _, evidence) in zip(ids, MEMORIES, strict=True):
        assert (f"[{memory_id}]" in brief) == (memory_id in briefed)
        assert (text in brief) == (memory_id in briefed)
        assert (f"Source: file {evidence}" in brief) == (memory_id in briefed)

    # 2. the paraphrase gets the alembic memory, and not the unrelated lint rule
    recall = section(context, PROMPT_CONTEXT)
    assert recall is not None, context[-2000:]
    assert recall.startswith(RECALL_HEADER), recall[:500]
    assert f"[{alembic_id}]" in recall
    assert ALEMBIC in recall
    assert lint_id not in recall
    assert LINT not in recall

    # 3. the unrelated prompt and "ok" get no prompt context at all
    for prompt in (UNRELATED, TRIVIAL):
        context = context_after(bodies[prompt], prompt)
        assert PROMPT_CONTEXT not in context, context[-2000:]  # the log shows the hook ran

    # 5. the run log says what each hook did
    log_path = project / ".swarm" / "runs" / session_id / "memory.jsonl"
    raw_log = log_path.read_text(encoding="utf-8")
    events = [json.loads(line) for line in raw_log.splitlines() if line.strip()]
    assert all(e["runId"] == session_id and e["host"] == "claude-code" for e in events)
    assert Counter(e["event"] for e in events) == {
        "SessionStart": 3,
        "UserPromptSubmit": 3,
        "Stop": 3,
        "SessionEnd": 3,
    }, [(e["event"], e["type"]) for e in events]
    starts = [e for e in events if e["event"] == "SessionStart"]
    assert starts[0]["type"] == "session_brief"
    assert starts[0]["source"] == "startup"
    assert sorted(starts[0]["memoryIds"]) == sorted(briefed)
    # the resumed runs keep the brief the session already holds
    assert [(e["type"], e["reason"]) for e in starts[1:]] == [
        ("session_brief_skipped", "already_briefed")
    ] * 2
    injected, unrelated, trivial = (e for e in events if e["event"] == "UserPromptSubmit")
    assert injected["type"] == "prompt_injected"
    assert injected["memoryIds"] == [alembic_id]
    assert {"database", "schema"} <= set(injected["queryTerms"])
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
    assert filed[0]["rejected"] == []
    assert len(filed[0]["proposalIds"]) == 1
    assert all(e["type"] == "proposals_none" for e in readers if e is not filed[0]), readers

    # 4. the agent's proposal is pending, once
    pending = swarmmem(project, home, "pending")["pending"]
    assert len(pending) == 1, pending
    proposal = pending[0]
    assert proposal["id"] == filed[0]["proposalIds"][0]
    assert proposal["operation"] == "add"
    assert proposal["kind"] == "repo_convention"
    assert proposal["text"] == PROPOSED_TEXT
    assert proposal["evidence_refs"] == ["src/app/db.py"]
    assert proposal["proposed_by"]["run_id"] == session_id

    # the helper ran (and has exited) only when it was allowed to
    lock_path = project / ".swarm" / "hookd.lock"
    if helper:
        assert lock_path.exists(), "no hook helper was started"
        assert helper_gone(project), "the hook helper did not exit within 30 s of idling"
    else:
        assert not lock_path.exists(), "a hook helper was started with SWARMMEM_HOOK_HELPER=0"
        assert not socket_path(project).exists()


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
    make_project(project)
    home.mkdir()
    assert swarmmem(project, home, "init", "--agent", "claude-code", "--user")["success"]
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
        done = hosts.run_claude(
            claude_cli,
            WORK_PROMPT,
            cwd=project,
            home=home,
            base_url=fake.url,
            extra_env={"SWARMMEM_HOOK_HELPER": "0"},
            session_id=session_id,
            allowed_tools=["Bash"],
        )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert fake.errors == []
    assert len(asked) == 1  # asked once
    pending = swarmmem(project, home, "pending")["pending"]
    assert [p["text"] for p in pending] == [NUDGED_TEXT]
    log_path = project / ".swarm" / "runs" / session_id / "memory.jsonl"
    events = [json.loads(line) for line in log_path.read_text(encoding="utf-8").splitlines()]
    stops = [e for e in events if e["event"] == "Stop"]
    assert [e.get("nudged", False) for e in stops] == [True, False]
    assert stops[1]["type"] == "proposals_filed"

"""swarmmem's Gemini CLI hooks inside the real CLI (``tests/host_gemini.py``), against the fake API.

A small Python project in ``tmp_path`` (a git repository) gets ``swarmmem init --agent
gemini`` (run through the ``swarmmem`` command) and three curated memories added through the
Python API (an alembic migration rule, a test convention and a lint convention); the session
brief is cut to two memories, so the alembic one can only arrive through the prompt's recall.
The person trusts the project the way Gemini CLI records it, in
``$HOME/.gemini/trustedFolders.json``. Then two print-mode sessions (``gemini -p``, each with
its own ``--session-id``) go through the hooks init wrote:

1. a paraphrase of the alembic memory: the SessionStart brief reaches the model in front of
   the prompt, the BeforeAgent recall adds the alembic memory (and not the lint rule the
   brief already holds), and the fake reply's fenced ``memoryProposals`` block becomes exactly
   one pending proposal, read from AfterAgent's ``prompt_response``;
2. an unrelated prompt: the brief again (a new session), but no prompt recall.

Gemini CLI hands BeforeAgent the prompt with the brief's ``<hook_context>`` in front of it, so
the test also checks that recall searched the person's words only (the run log's query terms).
It runs with the hook helper process (``SWARMMEM_HOOK_HELPER_IDLE=5``, then it waits for the
helper to exit) and without it (``SWARMMEM_HOOK_HELPER=0``). A second test checks that in a
folder the home does not trust the CLI runs no hook at all (exit 55), which is why ``init``
tells the person to trust the project.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import sys
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import factories
import host_gemini
import pytest

import swarmmem
from swarmmem.hooks.client import socket_path

pytestmark = pytest.mark.slow

ALEMBIC = "Database migrations are managed with alembic; run alembic upgrade head after pulling."
TESTS = "Run the test suite with pytest -q from the project root; the tests live in tests/."
LINT = "Lint with ruff check before committing; the line length limit is 100."

PARAPHRASE = "how should I apply the database schema changes after I pull?"
UNRELATED = "what's a good name for a cat?"

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
}

RECALL_HEADER = "## Retrieved Swarm Memory"
FILED_NOTICE = "Hook system message: swarmmem memoryProposals: filed 1 for review."

PROJECT_FILES = {
    "pyproject.toml": '[project]\nname = "shop"\nversion = "0.1.0"\n'
    'dependencies = ["sqlalchemy", "alembic"]\n\n[tool.ruff]\nline-length = 100\n',
    "README.md": "# shop\n\nA small web shop.\n",
    "src/app/__init__.py": "",
    "src/app/db.py": 'from sqlalchemy import create_engine\n\nENGINE = create_engine("sqlite:///shop.db")\n',
    "tests/test_models.py": "def test_nothing():\n    assert True\n",
}
MEMORIES = (
    (ALEMBIC, "Seen in the deploy notes.", "src/app/db.py"),
    (TESTS, "CI runs the same command.", "tests/test_models.py"),
    (LINT, "The CI lint job fails otherwise.", "pyproject.toml"),
)


@pytest.fixture(scope="module")
def gemini_cli() -> Path:
    """Return the pinned ``gemini`` binary, or skip (fail under SWARMMEM_HOSTS_REQUIRED=1).

    Module-scoped: checking the installed version starts node (about 2 s) once."""
    return host_gemini.require_gemini_cli()


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


def swarmmem_cli(project: Path, home: Path, *args: str) -> dict[str, Any]:
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


def make_project(project: Path, home: Path) -> None:
    """Write the project's files, make it a git repository and run ``init --agent gemini``."""
    for relative, text in PROJECT_FILES.items():
        path = project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)
    home.mkdir()
    init = swarmmem_cli(project, home, "init", "--agent", "gemini")
    assert init["success"] is True
    assert any("trustedFolders.json" in note for note in init["notes"]), init["notes"]
    settings = json.loads((project / ".gemini" / "settings.json").read_text(encoding="utf-8"))
    assert settings["mcpServers"]["swarmmem"]["args"] == ["mcp"]
    for event in ("SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd", "PreCompress"):
        command = settings["hooks"][event][0]["hooks"][0]["command"]
        assert command.endswith(f"hook gemini {event}"), command
    assert "memoryProposals" in (project / "GEMINI.md").read_text(encoding="utf-8")


def add_memories(project: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Curate ``MEMORIES`` in, oldest first, through the Python API; return their ids."""
    with monkeypatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.delenv("XDG_CONFIG_HOME", raising=False)
        for key in [k for k in os.environ if k.startswith("SWARMMEM_")]:
            patch.delenv(key)
        with swarmmem.open(project) as mem:
            return [
                factories.curate_fact(
                    mem, text, kind="repo_convention", rationale=rationale, evidence=evidence
                )
                for text, rationale, evidence in MEMORIES
            ]


def reply(body: dict[str, Any]) -> str:
    """Answer the prompt of the request's last user turn (it ends the prompt's part)."""
    for text in host_gemini.user_parts(body):
        for prompt, answer in REPLIES.items():
            if text.endswith(prompt):
                return answer
    raise AssertionError(f"no known prompt in {host_gemini.user_parts(body)!r}")


def prompt_contexts(body: dict[str, Any], prompt: str) -> tuple[list[str], list[str]]:
    """The hook contexts in the part holding ``prompt`` (the SessionStart brief), and those in
    the parts after it (the BeforeAgent recall), in the request's last user turn."""
    parts = host_gemini.user_parts(body)
    index = next(i for i, text in enumerate(parts) if text.endswith(prompt))
    before = host_gemini.hook_contexts(parts[index])
    after = [c for text in parts[index + 1 :] for c in host_gemini.hook_contexts(text)]
    return before, after


def run_log(project: Path, session_id: str) -> tuple[str, list[dict[str, Any]]]:
    """The session's run log: its raw text and its events."""
    raw = (project / ".swarm" / "runs" / session_id / "memory.jsonl").read_text(encoding="utf-8")
    return raw, [json.loads(line) for line in raw.splitlines() if line.strip()]


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
def test_gemini_session_gets_memory_and_files_proposals(
    gemini_cli: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helper: bool
) -> None:
    """Brief, recall of the memory asked about, no recall for small talk, one filed proposal."""
    project, home = tmp_path / "project", tmp_path / "home"
    make_project(project, home)
    ids = add_memories(project, home, monkeypatch)
    alembic_id, _, lint_id = ids
    # a brief of the two newest memories: the prompt's recall may add only the third (a
    # memory the brief gave is in the context already and is never injected again)
    swarmmem_cli(project, home, "config", "set", "recall.sessionBrief.maxItems", "2")
    briefed = ids[1:]
    host_gemini.trust_folder(home, project)

    sessions = {prompt: str(uuid.uuid4()) for prompt in REPLIES}
    extra_env = {"SWARMMEM_HOOK_HELPER_IDLE": "5"}
    if not helper:
        extra_env["SWARMMEM_HOOK_HELPER"] = "0"
    bodies: dict[str, dict[str, Any]] = {}
    stderr: dict[str, str] = {}
    try:
        with host_gemini.FakeGemini(reply) as fake:
            for prompt, session_id in sessions.items():
                done = host_gemini.run_gemini(
                    gemini_cli,
                    prompt,
                    cwd=project,
                    home=home,
                    base_url=fake.url,
                    extra_env=extra_env,
                    session_id=session_id,
                )
                assert done.returncode == 0, f"{prompt!r}:\n{done.stdout}\n{done.stderr}"
                assert done.stdout.strip() == REPLIES[prompt].strip()
                new = fake.main_requests()[len(bodies) :]
                assert len(new) == 1, f"{prompt!r}: {len(new)} agent requests"
                bodies[prompt] = new[0]
                stderr[prompt] = done.stderr
        assert fake.errors == []
        assert {method for _, method, _ in fake.model_requests()} == {
            "generateContent",  # the routing classifier
            "streamGenerateContent",
        }
    finally:
        if helper and (project / ".swarm" / "hookd.lock").exists():
            deadline = time.monotonic() + 30
            while not helper_gone(project) and time.monotonic() < deadline:
                time.sleep(0.25)

    # 1. the brief (SessionStart) is in front of the prompt and holds the newest memories
    briefs, recalls = prompt_contexts(bodies[PARAPHRASE], PARAPHRASE)
    assert len(briefs) == 1, host_gemini.user_parts(bodies[PARAPHRASE])
    brief = briefs[0]
    assert brief.startswith(RECALL_HEADER), brief[:500]
    for memory_id, (text, _, evidence) in zip(ids, MEMORIES, strict=True):
        assert (f"[{memory_id}]" in brief) == (memory_id in briefed)
        assert (text in brief) == (memory_id in briefed)
        assert (f"Source: file {evidence}" in brief) == (memory_id in briefed)

    # 2. the prompt's recall (BeforeAgent) adds the alembic memory, and not the lint rule
    assert len(recalls) == 1, host_gemini.user_parts(bodies[PARAPHRASE])
    recall = recalls[0]
    assert recall.startswith(RECALL_HEADER), recall[:500]
    assert f"[{alembic_id}]" in recall
    assert ALEMBIC in recall
    assert lint_id not in recall
    assert LINT not in recall

    raw_log, events = run_log(project, sessions[PARAPHRASE])
    assert all(e["runId"] == sessions[PARAPHRASE] and e["host"] == "gemini" for e in events), events
    # each hook ran once; PreCompress runs at every turn, before the CLI decides to compress
    assert Counter(e["event"] for e in events) == {
        "SessionStart": 1,
        "BeforeAgent": 1,
        "PreCompress": 1,
        "AfterAgent": 1,
        "SessionEnd": 1,
    }, [(e["event"], e["type"]) for e in events]
    (start,) = (e for e in events if e["event"] == "SessionStart")
    assert start["type"] == "session_brief"
    assert sorted(start["memoryIds"]) == sorted(briefed)
    (injected,) = (e for e in events if e["event"] == "BeforeAgent")
    assert injected["type"] == "prompt_injected"
    assert injected["memoryIds"] == [alembic_id]
    # recall searched the person's words, not the brief the CLI put in front of them
    prompt_words = set(re.findall(r"\w+", PARAPHRASE.lower()))
    assert {"database", "schema"} <= set(injected["queryTerms"]) <= prompt_words, injected
    for words in (PARAPHRASE, "schema changes after I pull"):
        assert words not in raw_log

    # 3. the reply's memoryProposals block is filed once (AfterAgent), and the person is told
    readers = [e for e in events if e["event"] in ("AfterAgent", "SessionEnd", "PreCompress")]
    filed = [e for e in readers if e["type"] == "proposals_filed"]
    assert len(filed) == 1, readers
    assert filed[0]["event"] == "AfterAgent"
    assert filed[0]["rejected"] == []
    assert all(e["type"] == "proposals_none" for e in readers if e is not filed[0]), readers
    assert FILED_NOTICE in stderr[PARAPHRASE], stderr[PARAPHRASE][-2000:]
    with monkeypatch.context() as patch:
        patch.setenv("HOME", str(home))
        with swarmmem.open(project) as mem:
            pending = mem.proposals("pending")
    assert len(pending) == 1, pending
    proposal = pending[0]
    assert [proposal.id] == filed[0]["proposalIds"]
    assert proposal.operation == "add"
    assert proposal.proposed_record is not None
    assert proposal.proposed_record.kind == "repo_convention"
    assert proposal.proposed_record.text == PROPOSED_TEXT
    assert proposal.evidence_refs == ("src/app/db.py",)
    assert proposal.proposed_by.run_id == sessions[PARAPHRASE]

    # 4. the unrelated prompt gets the brief of its new session, but no prompt recall
    briefs, recalls = prompt_contexts(bodies[UNRELATED], UNRELATED)
    assert len(briefs) == 1 and briefs[0].startswith(RECALL_HEADER)
    assert recalls == [], recalls
    _, events = run_log(project, sessions[UNRELATED])
    (skipped,) = (e for e in events if e["event"] == "BeforeAgent")
    assert skipped["type"] == "prompt_injection_skipped"
    assert skipped["reason"] == "no_results"
    assert [e["type"] for e in events if e["event"] == "AfterAgent"] == ["proposals_none"]
    assert "memoryProposals" not in stderr[UNRELATED]

    # the helper ran (and has exited) only when it was allowed to
    lock_path = project / ".swarm" / "hookd.lock"
    if helper:
        assert lock_path.exists(), "no hook helper was started"
        assert helper_gone(project), "the hook helper did not exit within 30 s of idling"
    else:
        assert not lock_path.exists(), "a hook helper was started with SWARMMEM_HOOK_HELPER=0"
        assert not socket_path(project).exists()


def test_an_untrusted_folder_runs_no_hooks(gemini_cli: Path, tmp_path: Path) -> None:
    """Without the project in ``trustedFolders.json`` the CLI stops (exit 55) before any hook
    or model call: the trust step ``init`` tells the person about is needed."""
    project, home = tmp_path / "project", tmp_path / "home"
    make_project(project, home)
    with host_gemini.FakeGemini(reply) as fake:
        done = host_gemini.run_gemini(
            gemini_cli, PARAPHRASE, cwd=project, home=home, base_url=fake.url
        )
    assert done.returncode == host_gemini.EXIT_UNTRUSTED, f"{done.stdout}\n{done.stderr}"
    assert "trusted" in done.stderr
    assert fake.requests == []
    assert not (project / ".swarm" / "runs").exists()

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

import json
import re
import uuid
from pathlib import Path
from typing import Any

import host_gemini
import host_project
import hosts
import pytest
from host_project import PARAPHRASE, RECALL_HEADER, REPLIES, UNRELATED

pytestmark = pytest.mark.slow

FILED_NOTICE = "Hook system message: swarmmem memoryProposals: filed 1 for review."


@pytest.fixture(scope="module")
def gemini_cli() -> Path:
    """Return the pinned ``gemini`` binary, or skip (fail under SWARMMEM_HOSTS_REQUIRED=1).

    Module-scoped: checking the installed version starts node (about 2 s) once."""
    return hosts.require_cli("Gemini CLI", host_gemini.ensure_gemini_cli)


def make_project(project: Path, home: Path) -> None:
    """Write the project, make it a git repository and run ``init --agent gemini``."""
    host_project.make_project(project, home)
    init = host_project.swarmmem_cli(project, home, "init", "--agent", "gemini")
    assert init["success"] is True
    assert any("trustedFolders.json" in note for note in init["notes"]), init["notes"]
    settings = json.loads((project / ".gemini" / "settings.json").read_text(encoding="utf-8"))
    assert settings["mcpServers"]["swarmmem"]["args"] == ["mcp"]
    for event in ("SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd", "PreCompress"):
        command = settings["hooks"][event][0]["hooks"][0]["command"]
        assert command.endswith(f"hook gemini {event}"), command
    assert "memoryProposals" in (project / "GEMINI.md").read_text(encoding="utf-8")


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


@pytest.mark.parametrize("helper", [True, False], ids=["helper", "in-process"])
def test_gemini_session_gets_memory_and_files_proposals(
    gemini_cli: Path, tmp_path: Path, helper: bool
) -> None:
    """Brief, recall of the memory asked about, no recall for small talk, one filed proposal."""
    project, home = tmp_path / "project", tmp_path / "home"
    make_project(project, home)
    ids = host_project.add_memories(project, home)
    host_gemini.trust_folder(home, project)

    sessions = {prompt: str(uuid.uuid4()) for prompt in REPLIES}
    bodies: dict[str, dict[str, Any]] = {}
    stderr: dict[str, str] = {}
    try:
        with host_gemini.FakeGemini(reply) as fake:
            for prompt, session_id in sessions.items():
                at = hosts.Launch(project, home, fake.url, host_project.hook_env(helper=helper))
                done = host_gemini.run_gemini(gemini_cli, prompt, at, session_id=session_id)
                new = fake.main_requests()[len(bodies) :]
                bodies[prompt] = host_project.one_turn(done, prompt, REPLIES[prompt], new)
                stderr[prompt] = done.stderr
        assert fake.errors == []
        assert {method for _, method, _ in fake.model_requests()} == {
            "generateContent",  # the routing classifier
            "streamGenerateContent",
        }
    finally:
        host_project.wait_for_helper(project, helper)

    # 1. the brief (SessionStart) is in front of the prompt and holds the newest memories
    briefs, recalls = prompt_contexts(bodies[PARAPHRASE], PARAPHRASE)
    assert len(briefs) == 1, host_gemini.user_parts(bodies[PARAPHRASE])
    host_project.check_brief(briefs[0], ids)

    # 2. the prompt's recall (BeforeAgent) adds the alembic memory, and not the lint rule
    assert len(recalls) == 1, host_gemini.user_parts(bodies[PARAPHRASE])
    host_project.check_recall(recalls[0], ids)

    # each hook ran once; PreCompress runs at every turn, before the CLI decides to compress
    hook_events = ("SessionStart", "BeforeAgent", "PreCompress", "AfterAgent", "SessionEnd")
    counts = dict.fromkeys(hook_events, 1)
    raw_log, events = host_project.check_run_log(project, sessions[PARAPHRASE], "gemini", counts)
    (start,) = (e for e in events if e["event"] == "SessionStart")
    host_project.check_brief_event(start, ids)
    (injected,) = (e for e in events if e["event"] == "BeforeAgent")
    host_project.check_recall_event(injected, ids)
    # recall searched the person's words, not the brief the CLI put in front of them
    prompt_words = set(re.findall(r"\w+", PARAPHRASE.lower()))
    assert set(injected["queryTerms"]) <= prompt_words, injected
    for words in (PARAPHRASE, "schema changes after I pull"):
        assert words not in raw_log

    # 3. the reply's memoryProposals block is filed once (AfterAgent), and the person is told
    readers = [e for e in events if e["event"] in ("AfterAgent", "SessionEnd", "PreCompress")]
    filed = [e for e in readers if e["type"] == "proposals_filed"]
    assert len(filed) == 1, readers
    assert filed[0]["event"] == "AfterAgent"
    host_project.check_filed_event(filed[0])
    assert all(e["type"] == "proposals_none" for e in readers if e is not filed[0]), readers
    assert FILED_NOTICE in stderr[PARAPHRASE], stderr[PARAPHRASE][-2000:]
    host_project.check_pending_proposal(
        project, home, filed[0]["proposalIds"], sessions[PARAPHRASE]
    )

    # 4. the unrelated prompt gets the brief of its new session, but no prompt recall
    briefs, recalls = prompt_contexts(bodies[UNRELATED], UNRELATED)
    assert len(briefs) == 1 and briefs[0].startswith(RECALL_HEADER)
    assert recalls == [], recalls
    _, events = host_project.run_log(project, sessions[UNRELATED])
    (skipped,) = (e for e in events if e["event"] == "BeforeAgent")
    assert skipped["type"] == "prompt_injection_skipped"
    assert skipped["reason"] == "no_results"
    assert [e["type"] for e in events if e["event"] == "AfterAgent"] == ["proposals_none"]
    assert "memoryProposals" not in stderr[UNRELATED]

    host_project.check_helper(project, helper)


def test_an_untrusted_folder_runs_no_hooks(gemini_cli: Path, tmp_path: Path) -> None:
    """Without the project in ``trustedFolders.json`` the CLI stops (exit 55) before any hook
    or model call: the trust step ``init`` tells the person about is needed."""
    project, home = tmp_path / "project", tmp_path / "home"
    make_project(project, home)
    with host_gemini.FakeGemini(reply) as fake:
        done = host_gemini.run_gemini(gemini_cli, PARAPHRASE, hosts.Launch(project, home, fake.url))
    assert done.returncode == host_gemini.EXIT_UNTRUSTED, f"{done.stdout}\n{done.stderr}"
    assert "trusted" in done.stderr
    assert fake.requests == []
    assert not (project / ".swarm" / "runs").exists()

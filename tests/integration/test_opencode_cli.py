"""swarmmem's opencode plugin inside the real opencode CLI (``tests/host_opencode.py``).

A small Python project in ``tmp_path`` (a git repository) gets ``swarmmem init --agent
opencode`` through the venv's ``swarmmem`` console script, and three curated memories through
the Python API (an alembic migration rule, a test convention and a lint convention; the
session brief is cut to the two newest). Then two ``opencode run`` sessions against a loopback
fake of the OpenAI chat API go through the plugin that init wrote:

1. a paraphrase of the alembic memory: the brief (the two newest memories) and the prompt's
   recall (the alembic memory) reach the model, and the fake reply carries a fenced
   ``memoryProposals`` block;
2. an unrelated prompt: the brief again, but no recall.

Afterwards the agent's proposal is pending exactly once and each session's run log says what
the plugin's hooks did.

What opencode 1.18.33 was seen to need and do (more in ``tests/host_opencode.py``)
----------------------------------------------------------------------------------

* No trust gate or approval: the project's ``.opencode/plugins/swarmmem.js`` loads in
  ``opencode run`` as written. Its first run in the project installs ``@opencode-ai/plugin``
  from npm into ``.opencode/`` (``node_modules``, ``package.json``), which takes a few seconds
  to half a minute; later runs reuse it.
* Requests: each run sends the title generator's ``POST /v1/chat/completions`` first (the
  plugin adds nothing to it), then one for the agent's turn. In the agent request opencode's
  own prompt is the first ``{"role": "system"}`` message; the texts the plugin pushed onto the
  system prompt (the ``session-start`` brief, then the ``user-prompt-submit`` recall, each
  starting with "## Retrieved Swarm Memory") arrive joined by newlines as the second. The user
  message is the prompt wrapped in double quotes (``opencode run`` added them to the argument).
* Stop: the plugin runs ``stop`` on the session's idle event, with the reply it fetches from
  opencode's server. ``opencode run`` exits within about half a second of that event and
  does not wait for plugin event handlers; the ``swarmmem hook`` child it spawned in time
  outlives it and files the proposal (delaying the spawn by 300 ms in a copy of the plugin
  lost the stop hook in one run of two). The test therefore polls the run logs briefly.
* A run takes about 4 s here once the plugin package and ``@ai-sdk/openai-compatible`` are in
  place; the whole test took 20-25 s (opencode already in the cache), much of it npm.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import host_opencode
import host_project
import hosts
import pytest
from host_project import PARAPHRASE, RECALL_HEADER, REPLIES, UNRELATED

pytestmark = pytest.mark.slow

TITLE = "Applying schema changes"
STOP_WAIT_S = 30


@pytest.fixture
def opencode_cli() -> Path:
    """Return the pinned opencode executable, or skip (fail under SWARMMEM_HOSTS_REQUIRED=1)."""
    return hosts.require_cli("opencode CLI", host_opencode.ensure_opencode_cli)


def reply(body: dict[str, Any]) -> str:
    """Name the title call; answer an agent turn by the prompt it carries."""
    if host_opencode.is_title_request(body):
        return TITLE
    users = host_opencode.role_texts(body, "user")
    for prompt, answer in REPLIES.items():
        if any(prompt in text for text in users):
            return answer
    raise AssertionError(f"no known prompt among {users!r}")


def plugin_context(body: dict[str, Any]) -> str:
    """The system messages after opencode's own prompt (the first), joined by blank lines."""
    systems = host_opencode.role_texts(body, "system")
    assert systems, body
    return "\n\n".join(systems[1:])


def blocks(context: str) -> list[str]:
    """Split the plugin's context into its recall blocks, each from its header on."""
    starts = []
    index = context.find(RECALL_HEADER)
    while index >= 0:
        starts.append(index)
        index = context.find(RECALL_HEADER, index + 1)
    return [context[a:b] for a, b in zip(starts, [*starts[1:], len(context)], strict=True)]


def run_dirs(project: Path) -> set[Path]:
    runs = project / ".swarm" / "runs"
    return set(runs.iterdir()) if runs.is_dir() else set()


def log_events(project: Path, run: Path) -> list[dict[str, Any]]:
    """The events of the run log in the run folder ``run`` ([] while there is none)."""
    if not host_project.run_log_path(project, run.name).is_file():
        return []
    return host_project.run_log(project, run.name)[1]


def test_opencode_session_gets_memory_and_files_proposals(
    opencode_cli: Path, tmp_path: Path
) -> None:
    """Brief, recall, no recall for small talk, one filed proposal, and honest run logs."""
    project, home = tmp_path / "project", tmp_path / "home"
    host_project.make_project(project, home)
    init = host_project.swarmmem_cli(project, home, "init", "--agent", "opencode")
    assert init["success"] is True
    assert "opencode" in json.loads((project / "opencode.json").read_text("utf-8"))["$schema"]
    plugin = (project / ".opencode" / "plugins" / "swarmmem.js").read_text(encoding="utf-8")
    assert "__SWARMMEM_COMMAND__" not in plugin
    assert 'const SWARMMEM_COMMAND = ["swarmmem"];' in plugin  # by name: swarmmem is on PATH
    ids = host_project.add_memories(project, home)
    assert host_project.pending_proposals(project, home) == []
    alembic_id = ids[0]
    bodies: dict[str, dict[str, Any]] = {}
    sessions: dict[str, Path] = {}
    with host_opencode.FakeOpenAI(reply) as fake:
        for prompt in (PARAPHRASE, UNRELATED):
            before_runs, before_calls = run_dirs(project), len(fake.chat_requests())
            at = hosts.Launch(
                project, home, fake.base_url, host_project.hook_env(helper=False), timeout=120
            )
            done = host_opencode.run_opencode(opencode_cli, prompt, at)
            assert done.returncode == 0, f"{prompt!r}:\n{done.stdout}\n{done.stderr}"
            assert REPLIES[prompt].strip() in done.stdout, done.stdout
            calls = fake.chat_requests()[before_calls:]
            titles = [body for body in calls if host_opencode.is_title_request(body)]
            turns = [body for body in calls if not host_opencode.is_title_request(body)]
            assert len(turns) == 1, f"{prompt!r}: {len(turns)} agent requests"
            assert turns[0].get("tools"), "the agent request offers no tools"
            for title in titles:  # the plugin leaves the title generator alone
                assert RECALL_HEADER not in json.dumps(title)
            bodies[prompt] = turns[0]
            new_runs = run_dirs(project) - before_runs
            assert len(new_runs) == 1, f"{prompt!r}: run folders {new_runs}"
            sessions[prompt] = new_runs.pop()
    assert fake.errors == []

    # the plugin files in the background after the idle event: wait for both stop hooks
    deadline = time.monotonic() + STOP_WAIT_S
    while True:
        logs = {prompt: log_events(project, run) for prompt, run in sessions.items()}
        stopped = all(any(e["event"] == "stop" for e in events) for events in logs.values())
        if stopped or time.monotonic() >= deadline:
            break
        time.sleep(0.25)

    # 1. the session brief holds the two newest memories, and only them
    paraphrase_blocks = blocks(plugin_context(bodies[PARAPHRASE]))
    assert len(paraphrase_blocks) == 2, plugin_context(bodies[PARAPHRASE])[:3000]
    brief, recall = paraphrase_blocks
    host_project.check_brief(brief, ids)

    # 2. the paraphrase gets the alembic memory, and not the unrelated lint rule
    host_project.check_recall(recall, ids)
    assert any(PARAPHRASE in text for text in host_opencode.role_texts(bodies[PARAPHRASE], "user"))

    # 4. the unrelated prompt gets the new session's brief and no prompt recall
    unrelated_blocks = blocks(plugin_context(bodies[UNRELATED]))
    assert len(unrelated_blocks) == 1, plugin_context(bodies[UNRELATED])[:3000]
    assert all(f"[{memory_id}]" in unrelated_blocks[0] for memory_id in host_project.briefed(ids))
    assert alembic_id not in unrelated_blocks[0]

    # the run logs say what each hook did, without the raw prompt text
    for prompt, events in logs.items():
        session_id = sessions[prompt].name
        assert session_id.startswith("ses_"), session_id
        assert all(e["runId"] == session_id and e["host"] == "opencode" for e in events)
        # the plugin runs session-start and the first prompt's hook at once: either may log first
        named = {e["event"]: e for e in events[:2]}
        assert sorted(named) == ["session-start", "user-prompt-submit"], [
            (e["event"], e["type"]) for e in events
        ]
        assert [e["event"] for e in events[2:]] == ["stop"]
        start, submitted, stop = named["session-start"], named["user-prompt-submit"], events[2]
        host_project.check_brief_event(start, ids)
        raw_log, _ = host_project.run_log(project, session_id)
        assert prompt not in raw_log
        if prompt == PARAPHRASE:
            host_project.check_recall_event(submitted, ids)
            host_project.check_filed_event(stop)
        else:
            assert submitted["type"] == "prompt_injection_skipped", submitted
            assert submitted["reason"] == "no_results"
            assert stop["type"] == "proposals_none", stop

    # 3. the agent's proposal is pending, once
    filed_ids = logs[PARAPHRASE][2]["proposalIds"]
    host_project.check_pending_proposal(project, home, filed_ids, sessions[PARAPHRASE].name)

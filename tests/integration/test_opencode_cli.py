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
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import host_opencode
import pytest
from factories import curate_fact

import swarmmem

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
TITLE = "Applying schema changes"

RECALL_HEADER = "## Retrieved Swarm Memory"

PROJECT_FILES = {
    "pyproject.toml": '[project]\nname = "shop"\nversion = "0.1.0"\n'
    'dependencies = ["sqlalchemy", "alembic"]\n\n[tool.ruff]\nline-length = 100\n',
    "README.md": "# shop\n\nA small web shop.\n",
    "src/app/__init__.py": "",
    "src/app/db.py": 'from sqlalchemy import create_engine\n\nENGINE = create_engine("sqlite:///shop.db")\n',
    "tests/test_app.py": "def test_nothing():\n    pass\n",
}
MEMORIES = (
    (ALEMBIC, "src/app/db.py"),
    (TESTS, "tests/test_app.py"),
    (LINT, "pyproject.toml"),
)
STOP_WAIT_S = 30


@pytest.fixture
def opencode_cli() -> Path:
    """Return the pinned opencode executable, or skip (fail under SWARMMEM_HOSTS_REQUIRED=1)."""
    return host_opencode.require_opencode_cli()


def venv_bin() -> Path:
    """The folder of this interpreter, which holds the venv's ``swarmmem`` console script."""
    return Path(sys.executable).parent


def swarmmem_cli(project: Path, home: Path, *args: str) -> dict[str, Any]:
    """Run the venv's ``swarmmem --json ARGS`` in ``project`` and return its JSON answer."""
    script = venv_bin() / "swarmmem"
    if not (script.is_file() and os.access(script, os.X_OK)):
        pytest.fail(f"no swarmmem console script at {script}")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("SWARMMEM_") and not key.startswith("XDG_")
    }
    env["HOME"] = str(home)
    done = subprocess.run(
        [str(script), "--json", *args],
        cwd=project,
        env=env,
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


def log_events(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "memory.jsonl"
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_opencode_session_gets_memory_and_files_proposals(
    opencode_cli: Path, tmp_path: Path
) -> None:
    """Brief, recall, no recall for small talk, one filed proposal, and honest run logs."""
    project, home = tmp_path / "project", tmp_path / "home"
    make_project(project)
    home.mkdir()
    init = swarmmem_cli(project, home, "init", "--agent", "opencode")
    assert init["success"] is True
    assert "opencode" in json.loads((project / "opencode.json").read_text("utf-8"))["$schema"]
    plugin = (project / ".opencode" / "plugins" / "swarmmem.js").read_text(encoding="utf-8")
    assert "__SWARMMEM_COMMAND__" not in plugin
    assert str(venv_bin() / "swarmmem") in plugin
    with swarmmem.open(project) as mem:
        ids = [
            curate_fact(mem, text, kind="repo_convention", evidence=evidence)
            for text, evidence in MEMORIES
        ]
        assert mem.proposals("pending") == []
    alembic_id, _, lint_id = ids
    # a brief of the two newest memories: the prompt's recall may add only the third (a
    # memory the brief gave is in the context already and is never injected again)
    config_path = project / ".opencode" / "opencode-swarm.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["memory"].setdefault("recall", {})["sessionBrief"] = {"maxItems": 2}
    config_path.write_text(json.dumps(config), encoding="utf-8")
    briefed = ids[1:]

    extra_env = {
        "PATH": f"{venv_bin()}{os.pathsep}{os.environ.get('PATH', os.defpath)}",
        "SWARMMEM_HOOK_HELPER": "0",
    }
    bodies: dict[str, dict[str, Any]] = {}
    sessions: dict[str, Path] = {}
    with host_opencode.FakeOpenAI(reply) as fake:
        for prompt in (PARAPHRASE, UNRELATED):
            before_runs, before_calls = run_dirs(project), len(fake.chat_requests())
            done = host_opencode.run_opencode(
                opencode_cli,
                prompt,
                cwd=project,
                home=home,
                base_url=fake.base_url,
                extra_env=extra_env,
                timeout=120,
            )
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
    while time.monotonic() < deadline:
        if all(any(e["event"] == "stop" for e in log_events(run)) for run in sessions.values()):
            break
        time.sleep(0.25)
    logs = {prompt: log_events(run) for prompt, run in sessions.items()}

    # 1. the session brief holds the two newest memories, and only them
    paraphrase_blocks = blocks(plugin_context(bodies[PARAPHRASE]))
    assert len(paraphrase_blocks) == 2, plugin_context(bodies[PARAPHRASE])[:3000]
    brief, recall = paraphrase_blocks
    for memory_id, (text, evidence) in zip(ids, MEMORIES, strict=True):
        assert (f"[{memory_id}]" in brief) == (memory_id in briefed), brief
        assert (text in brief) == (memory_id in briefed), brief
        assert (f"Source: file {evidence}" in brief) == (memory_id in briefed), brief

    # 2. the paraphrase gets the alembic memory, and not the unrelated lint rule
    assert f"[{alembic_id}]" in recall, recall
    assert ALEMBIC in recall
    assert lint_id not in recall
    assert LINT not in recall
    assert any(PARAPHRASE in text for text in host_opencode.role_texts(bodies[PARAPHRASE], "user"))

    # 4. the unrelated prompt gets the new session's brief and no prompt recall
    unrelated_blocks = blocks(plugin_context(bodies[UNRELATED]))
    assert len(unrelated_blocks) == 1, plugin_context(bodies[UNRELATED])[:3000]
    assert all(f"[{memory_id}]" in unrelated_blocks[0] for memory_id in briefed)
    assert alembic_id not in unrelated_blocks[0]

    # the run logs say what each hook did, without the raw prompt text
    for prompt, events in logs.items():
        session_id = sessions[prompt].name
        assert session_id.startswith("ses_"), session_id
        assert all(e["runId"] == session_id and e["host"] == "opencode" for e in events)
        assert [e["event"] for e in events] == ["session-start", "user-prompt-submit", "stop"], [
            (e["event"], e["type"]) for e in events
        ]
        start, submitted, stop = events
        assert start["type"] == "session_brief"
        assert start["source"] == "startup"
        assert sorted(start["memoryIds"]) == sorted(briefed)
        raw_log = (sessions[prompt] / "memory.jsonl").read_text(encoding="utf-8")
        assert prompt not in raw_log
        if prompt == PARAPHRASE:
            assert submitted["type"] == "prompt_injected", submitted
            assert submitted["memoryIds"] == [alembic_id]
            assert {"database", "schema"} <= set(submitted["queryTerms"])
            assert stop["type"] == "proposals_filed", stop
            assert stop["rejected"] == []
            assert len(stop["proposalIds"]) == 1
        else:
            assert submitted["type"] == "prompt_injection_skipped", submitted
            assert submitted["reason"] == "no_results"
            assert stop["type"] == "proposals_none", stop

    # 3. the agent's proposal is pending, once
    with swarmmem.open(project) as mem:
        pending = mem.proposals("pending")
    assert len(pending) == 1, pending
    proposal = pending[0]
    assert proposal.id == logs[PARAPHRASE][2]["proposalIds"][0]
    assert proposal.operation == "add"
    assert proposal.proposed_record is not None
    assert proposal.proposed_record.kind == "repo_convention"
    assert proposal.proposed_record.text == PROPOSED_TEXT
    assert list(proposal.evidence_refs) == ["src/app/db.py"]
    assert proposal.proposed_by.run_id == sessions[PARAPHRASE].name

"""The scenario every real-host test sets up, and the steps and checks around it.

``tests/integration/test_claude_code_memory.py``, ``test_codex_cli.py``, ``test_gemini_cli.py``
and ``test_opencode_cli.py`` each run a real agent host against a fake model API in the same
small Python project:

* ``PROJECT_FILES``: a web shop with SQLAlchemy and alembic, made a git repository by
  ``make_project()``;
* ``MEMORIES``: three curated repo conventions (an alembic migration rule, a test convention
  and a lint convention), added through the Python API by ``add_memories()``, which also cuts
  the session brief to the two newest, so the alembic memory (the oldest) can only arrive
  through a prompt's recall;
* the prompts: ``PARAPHRASE`` of the alembic memory, whose reply (``REPLIES``) carries a fenced
  ``memoryProposals`` block holding ``PROPOSAL``, and ``UNRELATED`` small talk.

The steps: ``swarmmem_cli()`` runs the venv's ``swarmmem --json ...`` with a clean environment
and a given ``HOME``; ``hook_env()`` is what a host run adds to the host's environment for the
hooks; ``run_log()`` reads a session's run log; ``wait_for_helper()`` waits for the hook
helper process to be gone. The checks every test makes of what the model was sent and of what
the hooks did are ``check_brief()``, ``check_recall()``, ``check_run_log()``,
``check_brief_event()``, ``check_recall_event()``, ``check_filed_event()``,
``check_pending_proposal()`` and ``check_helper()``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from factories import curate_fact

import swarmmem
from swarmmem.hooks.client import socket_path

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
"""The fake model's answer to each prompt."""

RECALL_HEADER = "## Retrieved Swarm Memory"
"""How the session brief and a prompt's recall each begin."""

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
"""``(text, rationale, evidence)`` of each curated memory, oldest first."""
BRIEF_ITEMS = 2
"""How many memories the session brief gives: the two newest, not the alembic one."""
HELPER_WAIT_S = 30
"""How long the hook helper may take to exit once idle (``hook_env`` gives it 5 s)."""


# --- running swarmmem ------------------------------------------------------------------------


def swarmmem_script() -> Path:
    """The venv's ``swarmmem`` console script beside this interpreter (the test fails without
    it: the hooks ``init`` writes name it)."""
    script = Path(sys.executable).parent / "swarmmem"
    if not (script.is_file() and os.access(script, os.X_OK)):
        pytest.fail(f"no swarmmem console script at {script}")
    return script


def on_path() -> str:
    """This process's ``PATH`` with the venv's folder first: ``swarmmem`` on ``PATH``, as the
    files ``init`` writes for committing expect (and as a host started from there sees it)."""
    return f"{swarmmem_script().parent}{os.pathsep}{os.environ.get('PATH', os.defpath)}"


def cli_env(home: Path) -> dict[str, str]:
    """This environment without swarmmem settings or user configuration, ``HOME`` = ``home``,
    the venv first on ``PATH`` (:func:`on_path`)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("SWARMMEM_") and not key.startswith("XDG_")
    }
    env["HOME"] = str(home)
    env["PATH"] = on_path()
    return env


def swarmmem_cli(project: Path, home: Path, *args: str) -> dict[str, Any]:
    """Run ``swarmmem --json ARGS`` in ``project`` (``cli_env(home)``); return its JSON answer."""
    done = subprocess.run(
        [str(swarmmem_script()), "--json", *args],
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


@contextlib.contextmanager
def clean_process(home: Path) -> Iterator[None]:
    """Within: this process's environment as ``cli_env(home)`` has it (for the Python API)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        for key in [k for k in os.environ if k.startswith(("SWARMMEM_", "XDG_"))]:
            patch.delenv(key)
        yield


def hook_env(*, helper: bool) -> dict[str, str]:
    """What a host run adds to the host CLI's clean environment: the venv first on ``PATH``,
    and the hook helper process idling out after 5 s (``helper``) or none at all (each hook
    answers in its own process)."""
    path = on_path()
    if helper:
        return {"PATH": path, "SWARMMEM_HOOK_HELPER_IDLE": "5"}
    return {"PATH": path, "SWARMMEM_HOOK_HELPER": "0"}


# --- the project -----------------------------------------------------------------------------


def one_turn(
    done: subprocess.CompletedProcess[str], prompt: str, reply: str, requests: Sequence[Any]
) -> Any:
    """The one agent request a host run sent (``requests``: those it added), after checking
    that the run exited 0 and printed ``reply``."""
    assert done.returncode == 0, f"{prompt!r}:\n{done.stdout}\n{done.stderr}"
    assert done.stdout.strip() == reply.strip()
    assert len(requests) == 1, f"{prompt!r}: {len(requests)} agent requests"
    return requests[0]


def make_project(project: Path, home: Path) -> None:
    """Write ``PROJECT_FILES`` into ``project``, make it a git repository and make ``home``."""
    for relative, text in PROJECT_FILES.items():
        path = project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)
    home.mkdir()


def add_memories(project: Path, home: Path) -> list[str]:
    """Curate ``MEMORIES`` in, oldest first, through the Python API, and cut the session brief
    to the ``BRIEF_ITEMS`` newest (a memory the brief gave is in the context already and is
    never injected again, so the prompt's recall may add only the alembic one); return their
    ids, oldest first."""
    with clean_process(home), swarmmem.open(project) as mem:
        ids = [
            curate_fact(mem, text, kind="repo_convention", rationale=rationale, evidence=evidence)
            for text, rationale, evidence in MEMORIES
        ]
    swarmmem_cli(project, home, "config", "set", "recall.sessionBrief.maxItems", str(BRIEF_ITEMS))
    return ids


def pending_proposals(project: Path, home: Path) -> list[Any]:
    """The project's pending proposals, read through the Python API."""
    with clean_process(home), swarmmem.open(project) as mem:
        return list(mem.proposals("pending"))


def run_log_path(project: Path, session_id: str) -> Path:
    """Where the hooks log what they did in the session ``session_id``."""
    return project / ".swarm" / "runs" / session_id / "memory.jsonl"


def run_log(project: Path, session_id: str) -> tuple[str, list[dict[str, Any]]]:
    """The session's run log: its raw text and its events."""
    raw = run_log_path(project, session_id).read_text(encoding="utf-8")
    return raw, [json.loads(line) for line in raw.splitlines() if line.strip()]


def check_run_log(
    project: Path, session_id: str, host: str, counts: Mapping[str, int]
) -> tuple[str, list[dict[str, Any]]]:
    """Check that the session's run log is the ``host``'s, of that session, and holds
    ``counts[event]`` entries of each hook event (and no others); return its raw text and
    events (see ``run_log``)."""
    raw, events = run_log(project, session_id)
    assert all(e["runId"] == session_id and e["host"] == host for e in events), events
    counted = Counter(e["event"] for e in events)
    assert counted == counts, [(e["event"], e["type"]) for e in events]
    return raw, events


# --- the hook helper process -----------------------------------------------------------------


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


def wait_for_helper(project: Path, helper: bool) -> None:
    """When a helper may have run (``helper``) and did, wait up to ``HELPER_WAIT_S`` for it to
    be gone, so that no helper outlives the test."""
    if helper and (project / ".swarm" / "hookd.lock").exists():
        deadline = time.monotonic() + HELPER_WAIT_S
        while not helper_gone(project) and time.monotonic() < deadline:
            time.sleep(0.25)


def check_helper(project: Path, helper: bool) -> None:
    """The helper ran (and has exited) only when it was allowed to."""
    lock_path = project / ".swarm" / "hookd.lock"
    if helper:
        assert lock_path.exists(), "no hook helper was started"
        assert helper_gone(project), f"the hook helper did not exit within {HELPER_WAIT_S} s"
    else:
        assert not lock_path.exists(), "a hook helper was started with SWARMMEM_HOOK_HELPER=0"
        assert not socket_path(project).exists()


# --- what the model was sent and what the hooks did ------------------------------------------


def briefed(ids: Sequence[str]) -> list[str]:
    """The ids (of ``ids``, oldest first) of the memories a session brief gives."""
    return list(ids[-BRIEF_ITEMS:])


def check_brief(brief: str, ids: Sequence[str]) -> None:
    """The session brief is a recall block holding the newest memories (their ids, texts and
    evidence), and none of the others."""
    assert brief.startswith(RECALL_HEADER), brief[:500]
    for memory_id, (text, _, evidence) in zip(ids, MEMORIES, strict=True):
        shown = memory_id in briefed(ids)
        assert (f"[{memory_id}]" in brief) == shown, (memory_id, brief)
        assert (text in brief) == shown, (text, brief)
        assert (f"Source: file {evidence}" in brief) == shown, (evidence, brief)


def check_recall(recall: str, ids: Sequence[str]) -> None:
    """The paraphrase's recall is a recall block with the alembic memory, and not the unrelated
    lint rule."""
    alembic_id, _, lint_id = ids
    assert recall.startswith(RECALL_HEADER), recall[:500]
    assert f"[{alembic_id}]" in recall, recall
    assert ALEMBIC in recall, recall
    assert lint_id not in recall, recall
    assert LINT not in recall, recall


def check_brief_event(event: dict[str, Any], ids: Sequence[str]) -> None:
    """The run log's entry of a new session's brief names the newest memories."""
    assert event["type"] == "session_brief", event
    assert event["source"] == "startup", event
    assert sorted(event["memoryIds"]) == sorted(briefed(ids)), event


def check_recall_event(event: dict[str, Any], ids: Sequence[str]) -> None:
    """The run log's entry of the paraphrase's recall: the alembic memory, found by the words
    of the paraphrase."""
    assert event["type"] == "prompt_injected", event
    assert event["memoryIds"] == [ids[0]], event
    assert {"database", "schema"} <= set(event["queryTerms"]), event


def check_filed_event(event: dict[str, Any]) -> None:
    """The run log's entry of the reply's ``memoryProposals`` block: one proposal filed."""
    assert event["type"] == "proposals_filed", event
    assert event["rejected"] == [], event
    assert len(event["proposalIds"]) == 1, event


def check_pending_proposal(
    project: Path, home: Path, proposal_ids: Sequence[str], run_id: str
) -> Any:
    """Exactly one proposal is pending: ``PROPOSAL``, the one the run log says was filed
    (``proposal_ids``), proposed in the session ``run_id``. Return it."""
    pending = pending_proposals(project, home)
    assert len(pending) == 1, pending
    proposal = pending[0]
    assert [proposal.id] == list(proposal_ids), (proposal, proposal_ids)
    assert proposal.operation == PROPOSAL["operation"], proposal
    record = proposal.proposed_record
    assert record is not None, proposal
    assert record.kind == PROPOSAL["kind"], record
    assert record.text == PROPOSED_TEXT, record
    assert list(proposal.evidence_refs) == PROPOSAL["evidenceRefs"], proposal
    assert proposal.proposed_by.run_id == run_id, (proposal.proposed_by, run_id)
    return proposal

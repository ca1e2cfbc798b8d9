"""``swarmmem review`` as a person uses it: the installed console script in a real terminal
(a private tmux server), single keypresses without Enter, a typed reason; and the batch mode
as a subprocess."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from factories import memory_project, propose_fact

import swarmmem

pytestmark = pytest.mark.slow

SWARMMEM = Path(sys.executable).parent / ("swarmmem.exe" if os.name == "nt" else "swarmmem")
CODER = {"session_id": "s1", "agent_role": "coder"}
RETRY = "Retry HTTP calls three times with exponential backoff in retry.py."
TIMEOUTS = "HTTP calls in retry.py time out after ten seconds."
FORMAT = "Format Python code with ruff format before every commit."
WAIT = 30.0  # seconds for the terminal to show an expected text


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project enabling memory (SQLite) whose repository holds retry.py."""
    return memory_project(tmp_path / "project", {"retry.py": "def retry(call): ...\n"})


def seed(root: Path, *proposals: tuple[str, str]) -> list[str]:
    """File pending ``(kind, text)`` adds citing retry.py, oldest first; their ids."""
    ids = []
    with swarmmem.open(root, context=CODER) as mem:
        for kind, text in proposals:
            time.sleep(0.003)  # distinct creation times: the queue order is the order here
            prop = propose_fact(
                mem,
                text,
                kind=kind,
                evidence="retry.py",
                rationale=f"read in retry.py: {text[:24]}",
            )
            assert prop.status == "pending", prop.rejection_reason
            ids.append(prop.id)
    return ids


def proposal(root: Path, proposal_id: str) -> Any:
    with swarmmem.open(root) as mem:
        found = mem.store.get_proposal(proposal_id)
    assert found is not None
    return found


class Terminal:
    """A private tmux server (its own socket) running one command in a 200x50 pane."""

    def __init__(self, cwd: Path, command: str) -> None:
        self.name = f"swarmmem-review-{uuid.uuid4().hex[:10]}"
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        self.env = {**env, "TERM": env.get("TERM") or "xterm", "PYTHONIOENCODING": "utf-8"}
        # the shell keeps the pane open after the command, so its last words stay readable
        script = f"{command}; echo REVIEW-EXIT=$?; sleep 600"
        self.tmux("new-session", "-d", "-s", self.name, "-x", "200", "-y", "50", "-c", str(cwd))
        self.socket = Path(self.tmux("display-message", "-p", "#{socket_path}").strip())
        self.tmux("send-keys", "-t", self.name, "-l", f"exec sh -c {shlex.quote(script)}")
        self.tmux("send-keys", "-t", self.name, "Enter")

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.name, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        )
        return done.stdout

    def keys(self, text: str, *, enter: bool = False) -> None:
        """Type ``text`` literally (then Enter)."""
        self.tmux("send-keys", "-t", self.name, "-l", text)
        if enter:
            self.tmux("send-keys", "-t", self.name, "Enter")

    def screen(self) -> str:
        """Everything the pane printed, wrapped lines joined."""
        return self.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", self.name)

    def wait_for(self, *texts: str) -> str:
        """The screen once it shows every one of ``texts`` (fails after :data:`WAIT`)."""
        deadline = time.monotonic() + WAIT
        while True:
            screen = self.screen()
            if all(text in screen for text in texts):
                return screen
            if time.monotonic() > deadline:
                missing = [t for t in texts if t not in screen]
                pytest.fail(f"the terminal never showed {missing}; it shows:\n{screen}")
            time.sleep(0.1)

    def close(self) -> None:
        subprocess.run(
            ["tmux", "-L", self.name, "kill-server"],
            env=self.env,
            capture_output=True,
            timeout=20,
            check=False,
        )
        self.socket.unlink(missing_ok=True)  # kill-server may leave the socket file behind


@pytest.fixture
def terminal() -> Iterator[Callable[[Path, str], Terminal]]:
    """Opens a command in a real terminal (skips without tmux); the servers are killed at
    the end."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed: the real-terminal review test needs it")
    opened: list[Terminal] = []

    def open_terminal(cwd: Path, command: str) -> Terminal:
        opened.append(Terminal(cwd, command))
        return opened[-1]

    try:
        yield open_terminal
    finally:
        for term in opened:
            term.close()


def needs_console_script() -> None:
    if not SWARMMEM.exists():
        pytest.skip(f"the console script {SWARMMEM} is not installed beside the interpreter")


def test_review_in_a_real_terminal_approves_rejects_and_quits(
    terminal: Callable[[Path, str], Terminal], project: Path
) -> None:
    needs_console_script()
    approve, reject, keep = seed(
        project,
        ("repo_convention", RETRY),
        ("repo_convention", TIMEOUTS),
        ("repo_convention", FORMAT),
    )
    term = terminal(project, f"{shlex.quote(str(SWARMMEM))} review")
    prompt = "[?]help > "
    term.wait_for(f"== {approve}", RETRY, "Proposed by coder (session s1)", prompt)
    term.keys("a")  # one keypress, no Enter
    term.wait_for(f"Applied add to {approve} -> mem_", f"== {reject}")
    term.keys("r")
    term.wait_for("Reason (Enter: rejected in review): ")
    term.keys("timeouts are configurable", enter=True)
    term.wait_for(f"Rejected {reject}: timeouts are configurable", f"== {keep}")
    term.keys("q")
    screen = term.wait_for("REVIEW-EXIT=0")
    assert "Review finished: 1 approved, 1 rejected, 0 merged, 0 skipped, 0 undone; " in screen
    assert "1 proposal still pending." in screen

    applied = proposal(project, approve)
    assert applied.status == "applied"
    with swarmmem.open(project) as mem:
        memory = mem.get(applied.metadata["curatorDecision"]["memoryId"])
    assert (memory.text, memory.kind, memory.active) == (RETRY, "repo_convention", True)
    rejected = proposal(project, reject)
    assert (rejected.status, rejected.rejection_reason) == (
        "rejected",
        "timeouts are configurable",
    )
    assert proposal(project, keep).status == "pending"


def test_edit_in_a_real_terminal_starts_from_the_current_text(
    terminal: Callable[[Path, str], Terminal], project: Path
) -> None:
    """``e`` offers the proposal's text already typed: the person adds to it instead of
    typing it again; a kind typo is asked again and the edited text is kept; the evidence
    refs are offered the same way, and a line ref added to them is what the memory cites."""
    needs_console_script()
    (prop,) = seed(project, ("repo_convention", RETRY))
    term = terminal(project, f"{shlex.quote(str(SWARMMEM))} review")
    term.wait_for(f"== {prop}", "[?]help > ")
    term.keys("e")
    term.wait_for(f"New text (Enter keeps it): {RETRY}")
    term.keys(" Checked in review.", enter=True)
    term.wait_for("(Enter keeps it): ")
    term.keys("repo_convension", enter=True)
    term.wait_for("'repo_convension' is no memory kind; did you mean repo_convention?")
    term.keys("", enter=True)
    term.wait_for("Evidence refs (Enter keeps them): retry.py")
    term.keys(", retry.py:1", enter=True)
    term.wait_for(f"Applied add to {prop} -> mem_")
    term.keys("q")
    term.wait_for("REVIEW-EXIT=0")
    applied = proposal(project, prop)
    with swarmmem.open(project) as mem:
        memory = mem.get(applied.metadata["curatorDecision"]["memoryId"])
    assert (memory.text, memory.kind) == (f"{RETRY} Checked in review.", "repo_convention")
    assert memory.metadata["evidenceRefs"] == ["retry.py", "retry.py:1"]


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SWARMMEM), "--root", str(root), "review", *args],
        cwd=root,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def test_batch_approval_by_kind_is_a_dry_run_without_yes(project: Path) -> None:
    needs_console_script()
    too_long = "Retry policy: " + "backoff doubles each attempt and is capped. " * 14
    assert len(too_long) > 500
    retry, timeouts, long_one, fact = seed(
        project,
        ("repo_convention", RETRY),
        ("repo_convention", TIMEOUTS),
        ("repo_convention", too_long),
        ("project_fact", "The service runs on Python 3.12."),
    )

    dry = run(project, "--approve-all", "--kind", "repo_convention", "--json")
    assert dry.returncode == 0, dry.stderr
    data = json.loads(dry.stdout)
    assert (data["success"], data["dry_run"], data["matched"]) == (True, True, 3)
    assert (data["decided"], data["failed"]) == ([], [])
    assert [p["proposal_id"] for p in data["proposals"]] == [retry, timeouts, long_one]
    assert all(proposal(project, i).status == "pending" for i in (retry, timeouts, long_one, fact))
    text = run(project, "--approve-all", "--kind", "repo_convention")
    assert text.returncode == 0, text.stderr
    assert "Would approve 3 pending proposals:" in text.stdout
    # every word of each text is shown before a bulk decision (no text cut at 80 characters)
    assert too_long.split()[-1] in text.stdout.split()
    assert " ".join(too_long.split()) in " ".join(text.stdout.split())
    assert "Nothing changed; add --yes to approve them." in text.stdout

    done = run(project, "--approve-all", "--kind", "repo_convention", "--yes", "--json")
    assert done.returncode == 1, done.stderr  # one proposal failed; the others went through
    data = json.loads(done.stdout)
    assert (data["success"], data["dry_run"], data["matched"]) == (False, False, 3)
    assert [(d["proposal_id"], d["decision"]) for d in data["decided"]] == [
        (retry, "add"),
        (timeouts, "add"),
    ]
    assert all(d["memory_id"].startswith("mem_") for d in data["decided"])
    (failed,) = data["failed"]
    assert failed["proposal_id"] == long_one
    assert "under 500 characters" in failed["error"]
    assert proposal(project, retry).status == "applied"
    assert proposal(project, timeouts).status == "applied"
    assert proposal(project, long_one).status == "pending"
    assert proposal(project, fact).status == "pending"

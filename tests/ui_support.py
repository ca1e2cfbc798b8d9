"""What the ``swarmmem ui`` tests share: a project with memories, pending proposals and a
session's run log (hostile strings included), and the browser the real-browser tests drive."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from factories import cite, curate_fact, propose_fact, write_memory_config

import swarmmem

BIDI = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: makes "txt.exe" read as "exe.txt"
SCRIPT_TEXT = "Never log tokens <script>window.__xss = 1</script> in the CI output."
IMG_TEXT = 'Builds use <img src=x onerror="window.__xss = 2"> the cache folder.'
APPROVE_TEXT = "Lint the Python sources with ruff check before each commit."
EDIT_TEXT = "The api server listens on port 8080 in development."
EDITED_TEXT = "The api server listens on port 8081 in development."
REJECT_TEXT = "Deployment happens on fridays after lunch."
HOSTILE_PROPOSAL = "Use <b>bold</b> and </textarea><script>window.__xss=3</script> in docs."
SESSION = "sess-1"
HOSTILE_SESSION = "sess-evil"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass
class UiProject:
    """A project for the viewer: its root, stored memories and pending proposals by role."""

    root: Path
    memories: dict[str, str] = field(default_factory=dict)  # name -> memory id
    proposals: dict[str, str] = field(default_factory=dict)  # name -> proposal id

    def open(self) -> Any:
        return swarmmem.open(self.root)


def ui_project(root: Path) -> UiProject:
    """Memory on, two stored memories (one quoting a script, one an HTML image), three
    pending proposals (to approve, edit and reject), a hostile one, and two sessions' logs: a
    normal one (brief, injection with scores, a skip, proposals filed) and a hostile one."""
    from swarmmem.adapters.files.runlog import append_run_event

    root.mkdir(parents=True, exist_ok=True)
    write_memory_config(root, {"enabled": True, "projectId": "ui-tests"})
    cite(root, "pyproject.toml", "README.md", "ci/deploy.yml", "src/api/server.py")
    project = UiProject(root)
    with swarmmem.open(root, context={"agent_role": "coder", "session_id": SESSION}) as mem:
        project.memories["script"] = curate_fact(
            mem, SCRIPT_TEXT, kind="repo_convention", evidence="README.md"
        )
        project.memories["img"] = curate_fact(mem, IMG_TEXT, evidence="pyproject.toml")
        for name, text, evidence in (
            ("approve", APPROVE_TEXT, "pyproject.toml"),
            ("edit", EDIT_TEXT, "src/api/server.py"),
            ("reject", REJECT_TEXT, "ci/deploy.yml"),
            ("hostile", HOSTILE_PROPOSAL, "README.md"),
        ):
            prop = propose_fact(mem, text, evidence=evidence, rationale=f"why {name} <i>it</i>")
            assert prop.status == "pending", prop
            project.proposals[name] = prop.id
    script_id = project.memories["script"]
    events: list[dict[str, Any]] = [
        {"type": "session_brief", "source": "startup", "memoryIds": [script_id], "tokens": 41,
         "lessons": False, "host": "claude-code", "event": "SessionStart"},
        {"type": "prompt_injected", "bundleId": "bundle_1", "memoryIds": [script_id],
         "scores": [0.8123], "tokens": 57, "dense": False, "queryTerms": ["token", "log"],
         "host": "claude-code", "event": "UserPromptSubmit"},
        {"type": "prompt_injection_skipped", "reason": "below_threshold", "queryTerms": ["hi"],
         "host": "claude-code", "event": "UserPromptSubmit"},
        {"type": "proposals_filed", "proposalIds": [project.proposals["approve"]],
         "rejected": [], "host": "claude-code", "event": "Stop"},
    ]  # fmt: skip
    for i, event in enumerate(events):
        append_run_event(root, SESSION, event, f"2026-01-01T00:0{i}:00.000Z")
    hostile = {
        "type": "prompt_injection_skipped",
        "reason": f"<script>window.__xss = 4</script> file{BIDI}txt.exe",
        "queryTerms": ["<img src=x onerror=window.__xss=5>"],
        "memoryIds": ["javascript:alert(1)", 'mem_ok"><script>x</script>'],
        "error": "\x1b]52;c;cGF5bG9hZA==\x07 clipboard",
    }
    append_run_event(root, HOSTILE_SESSION, hostile, "2026-01-02T00:00:00.000Z")
    return project


def chromium_or_skip() -> Any:
    """Playwright's sync API and Debian's Chromium; skip (or, with
    ``SWARMMEM_BROWSER_REQUIRED=1``, fail) saying which is missing."""
    required = os.environ.get("SWARMMEM_BROWSER_REQUIRED") == "1"
    missing = []
    try:
        from playwright import sync_api
    except ImportError:
        sync_api = None
        missing.append("the playwright package (pip install -e '.[dev]')")
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        missing.append(f"{CHROMIUM} (apt-get install chromium)")
    if missing:
        reason = "browser tests need " + " and ".join(missing)
        if required:
            pytest.fail(reason + " (SWARMMEM_BROWSER_REQUIRED=1)")
        pytest.skip(reason)
    return sync_api


def launch_chromium(sync_api: Any, user_data: Path) -> tuple[Any, Any]:
    """Playwright started and Debian's Chromium launched headless on a fresh profile in
    ``user_data``: ``(playwright, context)``; never downloads a browser."""
    if user_data.exists():
        shutil.rmtree(user_data)
    user_data.mkdir(parents=True)
    playwright = sync_api.sync_playwright().start()
    try:
        context = playwright.chromium.launch_persistent_context(
            str(user_data),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
        )
    except Exception:
        playwright.stop()
        raise
    return playwright, context


def copied_project(seeded: Path, tmp_path: Path) -> UiProject:
    """A copy of the ``seeded`` project (built once per module) for one test, with the ids of
    its memories and pending proposals."""
    root = tmp_path / "project"
    shutil.copytree(seeded, root, symlinks=True)
    with swarmmem.open(root) as mem:
        memories = {r.text: r.id for r in mem.list()}
        pending = {p.proposed_record.text: p.id for p in mem.store.list_proposals("pending")}
    return UiProject(
        root,
        memories={"script": memories[SCRIPT_TEXT], "img": memories[IMG_TEXT]},
        proposals={
            "approve": pending[APPROVE_TEXT],
            "edit": pending[EDIT_TEXT],
            "reject": pending[REJECT_TEXT],
            "hostile": pending[HOSTILE_PROPOSAL],
        },
    )

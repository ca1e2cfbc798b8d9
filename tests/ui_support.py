"""What the ``swarmmem ui`` tests share: a project with memories, pending proposals and a
session's run log (hostile strings included), and the browser the real-browser tests drive."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from factories import cite, curate_fact, make_memory, propose_fact, write_memory_config

import swarmmem
from swarmmem.core.model.ids import stable_id
from swarmmem.core.model.records import MemoryScope

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


def seeded_fixture(folder: str) -> Any:
    """A module-scoped ``seeded`` fixture: the ``ui_project`` built once per module (in a
    temporary ``folder``), which each test copies with ``copied_project``."""

    @pytest.fixture(scope="module")
    def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
        return ui_project(tmp_path_factory.mktemp(folder) / "seed").root

    return seeded


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


# ------------------------------------------ several projects of a shared PostgreSQL store
API_ID = stable_id("project:proj_api")
WEB_ID = stable_id("project:proj_web")
GHOST_ID = stable_id("project:proj_ghost")
API_MEMORY = "The api server is started with make serve-api."
WEB_MEMORY = "The web bundle is built with npm run build-web."
WEB_PROPOSAL = "The web tests run in headless Firefox on every push."
API_PROPOSAL = "The api schema lives in the openapi yaml file."
GHOST_MEMORY = "A ghost identity whose rows name the web folder."


def _scope_key(repo_id: str) -> str:
    return str(MemoryScope(type="repository", repo_id=repo_id).key)


def shared_config(project_id: str, dsn: str, schema: str) -> dict[str, Any]:
    return {
        "enabled": True,
        "provider": "postgres",
        "projectId": project_id,
        "postgres": {"dsn": dsn, "schema": schema},
        "embeddings": {"enabled": False},
    }


@contextlib.contextmanager
def shared_projects(admin: str, base: Path) -> Iterator[dict[str, Any]]:
    """Two projects (``api``, ``web``) in one schema of the server at ``admin`` under
    row-level security, in folders under ``base``: role ``both`` granted both, role ``one``
    granted ``api`` and a ghost identity whose stored memory names ``web``'s folder; each
    folder's own file names the admin's connection. Yields the DSNs (``dsn[role]``), the
    schema, the folders and the ids of the seeded memories and proposals; the roles are
    dropped afterwards."""
    from pg_support import login_roles

    from swarmmem.adapters.storage.postgres import PostgresStore
    from swarmmem.adapters.storage.postgres.rls import row_level_security

    grants = {
        "both": [_scope_key(API_ID), _scope_key(WEB_ID)],
        "one": [_scope_key(API_ID), _scope_key(GHOST_ID)],
    }
    with login_roles(admin, base, *grants) as (schema, roles, dsn):
        for name, keys in grants.items():
            done = row_level_security(admin, schema, roles[name], keys, apply=True)
            assert done["applied"] is True
        api, web = base / "work" / "api", base / "work" / "web"
        # each folder's own file names the admin's connection: the viewer must never use it
        write_memory_config(api, shared_config("proj_api", admin, schema))
        write_memory_config(web, shared_config("proj_web", admin, schema))
        ids: dict[str, str] = {}
        with swarmmem.open(api, config=shared_config("proj_api", dsn["both"], schema)) as mem:
            ids["api_memory"] = curate_fact(mem, API_MEMORY)
            ids["api_proposal"] = propose_fact(mem, API_PROPOSAL).id
        with swarmmem.open(web, config=shared_config("proj_web", dsn["both"], schema)) as mem:
            ids["web_memory"] = curate_fact(mem, WEB_MEMORY)
            ids["web_proposal"] = propose_fact(mem, WEB_PROPOSAL, evidence="package.json").id
        # the admin writes a memory of a third identity that names web's folder as its root
        ghost = MemoryScope(type="repository", repo_id=GHOST_ID, repo_root=str(web))
        with PostgresStore(admin, schema=schema, pool_size=1, cache=False) as store:
            record = make_memory(GHOST_MEMORY, scope=ghost)
            store.upsert(record)
            ids["ghost_memory"] = record.id
        yield {"admin": admin, "schema": schema, "dsn": dsn, "api": api, "web": web, **ids}

"""``swarmmem ui`` in a real browser: Debian's Chromium, headless, driven by Playwright.

One browser per module (a fresh profile); each test serves its own project with the real
server (:class:`~swarmmem.ui.server.UiServer`, uvicorn on 127.0.0.1) and signs in the way a
person does: through the private redirect file the viewer writes, then the token cookie.
Screenshots of every page go to each test's temporary folder, or to
``$SWARMMEM_SCREENSHOTS`` when it names a folder (CI keeps them there as artifacts). Without
Playwright or ``/usr/bin/chromium`` the tests skip, saying which is missing; with
``SWARMMEM_BROWSER_REQUIRED=1`` (CI) they fail.
"""

from __future__ import annotations

import contextlib
import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_support import (
    APPROVE_TEXT,
    EDIT_TEXT,
    EDITED_TEXT,
    HOSTILE_PROPOSAL,
    REJECT_TEXT,
    SCRIPT_TEXT,
    SESSION,
    UiProject,
    chromium_or_skip,
    copied_project,
    launch_chromium,
    seeded_fixture,
)

import swarmmem

pytestmark = pytest.mark.slow
WAIT_MS = 15_000


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium (a persistent context on a fresh profile) for the module."""
    sync_api = chromium_or_skip()
    pytest.importorskip("starlette", reason="the ui extra is not installed")
    playwright, context = launch_chromium(sync_api, tmp_path_factory.mktemp("chromium-profile"))
    context.set_default_timeout(WAIT_MS)
    try:
        yield context
    finally:
        context.close()
        playwright.stop()


seeded = seeded_fixture("ui-browser")


@pytest.fixture
def project(seeded: Path, tmp_path: Path) -> UiProject:
    return copied_project(seeded, tmp_path)


@contextlib.contextmanager
def serving(root: Path, config: dict[str, Any] | None = None) -> Iterator[Any]:
    """The real viewer of ``root`` (with ``config``, if given) on 127.0.0.1 in a thread (the
    memory opens in it)."""
    from swarmmem.ui.server import UiServer

    server = UiServer(lambda: swarmmem.open(root, config=config))
    ready = threading.Event()
    failed: list[BaseException] = []

    def run() -> None:
        try:
            server.run(on_ready=ready.set)
        except BaseException as exc:
            failed.append(exc)
            ready.set()

    thread = threading.Thread(target=run, name="swarmmem-ui", daemon=True)
    thread.start()
    assert ready.wait(30) and not failed, failed
    try:
        yield server
    finally:
        server.stop()
        thread.join(30)


@pytest.fixture
def page(browser: Any, project: UiProject, tmp_path: Path) -> Iterator[Any]:
    """A tab signed in to the viewer of ``project`` through the viewer's redirect file, with
    every dialog, console error and blocked script recorded (``page.seen``)."""
    from swarmmem.ui.server import write_redirect

    with serving(project.root) as server:
        tab = browser.new_page()
        seen: dict[str, list[str]] = {"dialogs": [], "errors": []}
        tab.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
        tab.on("pageerror", lambda e: seen["errors"].append(str(e)))
        tab.seen, tab.server, tab.shots = seen, server, tmp_path
        redirect = write_redirect(server.url)
        try:
            tab.goto(redirect.as_uri())
            tab.wait_for_url(f"http://127.0.0.1:{server.port}/")
            tab.wait_for_selector("#list")
            yield tab
        finally:
            shutil.rmtree(redirect.parent, ignore_errors=True)
            tab.close()
            browser.clear_cookies()


def shot(tab: Any, name: str) -> None:
    """A full-page screenshot ``name.png`` (in ``$SWARMMEM_SCREENSHOTS`` when it is set)."""
    kept = os.environ.get("SWARMMEM_SCREENSHOTS")
    folder = Path(kept) if kept else tab.shots
    folder.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def base(tab: Any) -> str:
    return f"http://127.0.0.1:{tab.server.port}"


def no_script_ran(tab: Any) -> None:
    assert tab.evaluate("() => window.__xss === undefined")
    assert tab.seen["dialogs"] == [] and tab.seen["errors"] == []


def test_the_review_flow_end_to_end(page: Any, project: UiProject) -> None:
    """Approve, edit then approve, reject with a reason: each checked against the store."""
    ids = project.proposals
    page.click("nav >> text=Review")
    page.wait_for_selector("#pending-count")
    assert page.inner_text("#pending-count") == "4"
    shot(page, "review-queue")

    page.click(f"article[id='{ids['approve']}'] form.approve button")
    page.wait_for_selector("#notice")
    assert f"Approved {ids['approve']}" in page.inner_text("#notice")
    assert page.inner_text("#pending-count") == "3"

    card = f"article[id='{ids['edit']}']"
    page.click(f"{card} details.edit summary")
    page.fill(f"{card} textarea[name=text]", EDITED_TEXT)
    page.select_option(f"{card} select[name=kind]", "repo_convention")
    page.click(f"{card} button[name=edit]")
    page.wait_for_selector("#notice")
    assert f"Approved {ids['edit']} with your text" in page.inner_text("#notice")

    card = f"article[id='{ids['reject']}']"
    page.fill(f"{card} input[name=reason]", "we deploy any day")
    page.click(f"{card} button[name=reject]")
    page.wait_for_selector("#notice")
    assert page.inner_text("#pending-count") == "1"
    shot(page, "review-after")
    no_script_ran(page)

    with swarmmem.open(project.root) as mem:
        stored = {r.text: r for r in mem.list()}
        decided = {name: mem.store.get_proposal(ids[name]) for name in ids}
    assert stored[APPROVE_TEXT].kind == "project_fact"
    assert stored[EDITED_TEXT].kind == "repo_convention" and EDIT_TEXT not in stored
    assert REJECT_TEXT not in stored
    assert decided["approve"].status == decided["edit"].status == "applied"
    assert decided["reject"].status == "rejected"
    assert decided["reject"].rejection_reason == "we deploy any day"
    assert decided["hostile"].status == "pending"


def test_the_search_page(page: Any, project: UiProject) -> None:
    shot(page, "memories")
    page.fill("#q", "never log tokens in the CI output")
    page.press("#q", "Enter")
    page.wait_for_selector("#results .result")
    first = page.locator("#results .result").first
    assert SCRIPT_TEXT in first.inner_text()  # the hostile text is shown as text
    assert float(first.locator(".score").inner_text()) > 0
    assert "why:" in first.inner_text()
    shot(page, "search")
    page.fill("#q", "kubernetes helm chart rollback")
    page.press("#q", "Enter")
    page.wait_for_selector("#nothing-matched")
    assert "Nothing matched" in page.inner_text("#results")
    no_script_ran(page)


def test_a_session_timeline(page: Any, project: UiProject) -> None:
    page.click("nav >> text=Sessions")
    page.wait_for_selector("#tokens-chart")
    shot(page, "sessions")
    page.click(f"a[href='/sessions/{SESSION}']")
    page.wait_for_selector("#timeline")
    timeline = page.inner_text("#timeline")
    assert "prompt_injected" in timeline and "57 tokens" in timeline and "score 0.812" in timeline
    assert "below_threshold" in timeline and "proposals_filed" in timeline
    shot(page, "session")
    memory_id = project.memories["script"]
    page.click(f"#timeline a[href='/memory/{memory_id}']")
    page.wait_for_selector("#evidence")
    assert "fresh" in page.inner_text("#evidence")
    assert page.inner_text("#memory-text") == SCRIPT_TEXT
    shot(page, "memory")
    page.click("nav >> text=Health")
    page.wait_for_selector("#memory-count")
    shot(page, "health")
    no_script_ran(page)


class _Attacker(http.server.BaseHTTPRequestHandler):
    """Another local server (same site as the viewer: 127.0.0.1, another port) whose page
    posts a forged decision to the viewer as soon as it loads."""

    target = ""

    def do_GET(self) -> None:
        body = (
            "<!doctype html><html><body>"
            f"<form method='post' action='{self.target}'>"
            "<input name='csrf' value='guess'><input name='reason' value='forged'></form>"
            "<script>document.forms[0].submit()</script></body></html>"
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_xss_and_csrf_attempts_fail(page: Any, project: UiProject) -> None:
    """Every page holding hostile text runs no script; a forged form from another local
    port, sent with the viewer's cookie (same site), changes nothing."""
    paths = ["/", "/review", "/sessions/sess-evil", "/?q=never+log+tokens",
             f"/memory/{project.memories['script']}", f"/memory/{project.memories['img']}",
             f"/proposal/{project.proposals['hostile']}"]  # fmt: skip
    for path in paths:
        page.goto(base(page) + path)
        page.wait_for_selector("main")
        no_script_ran(page)
    page.goto(base(page) + "/review")
    hostile = page.inner_text(f"article[id='{project.proposals['hostile']}'] .proposal-text")
    assert hostile == HOSTILE_PROPOSAL
    page.goto(base(page) + "/sessions/sess-evil")
    assert "file[U+202E]txt.exe" in page.inner_text("#timeline")
    shot(page, "hostile-session")

    proposal_id = project.proposals["reject"]
    _Attacker.target = f"{base(page)}/review/{proposal_id}/reject"
    attacker = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Attacker)
    thread = threading.Thread(target=attacker.serve_forever, daemon=True)
    thread.start()
    try:
        with page.expect_response(lambda r: r.request.method == "POST") as posted:
            page.goto(f"http://127.0.0.1:{attacker.server_port}/")
        assert posted.value.status == 403
    finally:
        attacker.shutdown()
        attacker.server_close()
    with swarmmem.open(project.root) as mem:
        assert mem.store.get_proposal(proposal_id).status == "pending"


def test_switching_between_the_projects_of_a_shared_store(
    browser: Any, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """On a shared PostgreSQL store (pgserver; skips without it), a role granted two projects
    picks the other one in the header and its pages show its memories only; a project the
    role may not see answers 404 in the browser too."""
    from pg_support import require_dsn
    from ui_support import (
        API_MEMORY,
        GHOST_ID,
        WEB_ID,
        WEB_MEMORY,
        shared_config,
        shared_projects,
    )

    from swarmmem.ui.server import write_redirect

    pytest.importorskip("psycopg")
    with shared_projects(require_dsn(), tmp_path_factory.mktemp("ui-browser-pg")) as shared:
        config = shared_config("proj_api", shared["dsn"]["both"], shared["schema"])
        with serving(shared["api"], config=config) as server:
            tab = browser.new_page()
            tab.shots = tmp_path
            redirect = write_redirect(server.url)
            try:
                tab.goto(redirect.as_uri())
                tab.wait_for_url(f"http://127.0.0.1:{server.port}/")
                tab.wait_for_selector("#project-picker")
                assert API_MEMORY in tab.inner_text("main")
                tab.select_option("#project-picker select", WEB_ID)
                tab.click("#project-picker button")
                tab.wait_for_url(f"http://127.0.0.1:{server.port}/p/{WEB_ID}/")
                tab.wait_for_selector("#list")
                shown = tab.inner_text("main")
                assert WEB_MEMORY in shown and API_MEMORY not in shown
                assert tab.inner_text("#project") == "web"
                shot(tab, "project-web")
                tab.click("nav a[href$='/review']")
                tab.wait_for_url(f"http://127.0.0.1:{server.port}/p/{WEB_ID}/review")
                refused = tab.goto(f"http://127.0.0.1:{server.port}/p/{GHOST_ID}/")
                assert refused is not None and refused.status == 404
            finally:
                shutil.rmtree(redirect.parent, ignore_errors=True)
                tab.close()
                browser.clear_cookies()

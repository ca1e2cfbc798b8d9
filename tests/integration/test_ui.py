"""``swarmmem ui`` through Starlette's test client and as a real process: who may ask (token,
cookie, Host, Origin, CSRF), the headers every answer carries, every stored string escaped,
and each page against the store it shows."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from factories import cli, curate_fact, memory_project, propose_fact, run_python, unwritable
from ui_support import (
    APPROVE_TEXT,
    BIDI,
    EDIT_TEXT,
    EDITED_TEXT,
    HOSTILE_SESSION,
    REJECT_TEXT,
    SCRIPT_TEXT,
    SESSION,
    UiProject,
    copied_project,
    seeded_fixture,
)

import swarmmem

pytest.importorskip("starlette", reason="the ui extra is not installed")
pytest.importorskip("jinja2", reason="the ui extra is not installed")

from starlette.testclient import TestClient

from swarmmem.ui.app import create_app
from swarmmem.ui.guard import CONTENT_SECURITY_POLICY, cookie_name

PORT = 48123  # the test client binds nothing; the viewer only checks the Host it is given
TOKEN = "test-token-" + "x" * 32
CSRF = "test-csrf-" + "y" * 32
ORIGIN = f"http://127.0.0.1:{PORT}"
PAGES = ("/", "/review", "/sessions", f"/sessions/{SESSION}", "/health")


seeded = seeded_fixture("ui")  # a project built once per module; each test works on a copy


@pytest.fixture
def project(seeded: Path, tmp_path: Path) -> UiProject:
    return copied_project(seeded, tmp_path)


@contextlib.contextmanager
def viewer(root: Path, *, signed_in: bool = True) -> Iterator[TestClient]:
    """The viewer of ``root`` behind a test client (signed in with the printed link)."""
    app = create_app(lambda: swarmmem.open(root), port=PORT, token=TOKEN, csrf=CSRF)
    with TestClient(app, base_url=ORIGIN, follow_redirects=False) as client:
        if signed_in:
            assert client.get(f"/?token={TOKEN}").status_code == 200
        yield client


def post(client: TestClient, path: str, data: dict[str, str], **headers: str) -> Any:
    """A form POST as the viewer's own page sends it (Origin of the viewer), ``headers``
    overriding (``Origin=""`` drops it)."""
    sent = {"Origin": ORIGIN, **headers}
    return client.post(path, data=data, headers={k: v for k, v in sent.items() if v})


def proposal_of(root: Path, proposal_id: str) -> Any:
    with swarmmem.open(root) as mem:
        return mem.store.get_proposal(proposal_id)


def store_digest(root: Path) -> str:
    """The store's rows that a decision changes: memories and proposals with their states."""
    with swarmmem.open(root) as mem:
        rows = sorted((r.id, r.text, mem.state_of(r)) for r in mem.list(state="all"))
        props = sorted((p.id, p.status) for p in mem.store.list_proposals())
    return hashlib.sha256(repr((rows, props)).encode()).hexdigest()


# ------------------------------------------------------------------------ who may ask
def test_a_request_without_the_token_gets_401_and_a_wrong_one_403(project: UiProject) -> None:
    with viewer(project.root, signed_in=False) as client:
        for path in (*PAGES, "/static/style.css", f"/memory/{project.memories['script']}"):
            refused = client.get(path)
            assert refused.status_code == 401, path
            assert SCRIPT_TEXT not in refused.text and "<html" not in refused.text
        assert client.get("/?token=not-the-token").status_code == 403
        client.cookies.set(cookie_name(PORT), "not-the-token")
        assert client.get("/").status_code == 403
        assert client.get("/review").status_code == 403


def test_the_printed_link_sets_an_httponly_strict_cookie_and_drops_the_token(
    project: UiProject,
) -> None:
    with viewer(project.root, signed_in=False) as client:
        signed = client.get(f"/review?token={TOKEN}&done=x")
        assert signed.status_code == 200
        cookie = signed.headers["set-cookie"]
        assert cookie.startswith(f"{cookie_name(PORT)}={TOKEN};")
        assert {"HttpOnly", "SameSite=Strict", "Path=/"} <= {p.strip() for p in cookie.split(";")}
        # the page moves on to the same page without the token in its address
        assert "url=/review?done=x'" in signed.text and TOKEN not in signed.text
        assert client.get("/review").status_code == 200  # the cookie now signs every request
    # a path of two slashes never becomes a link to another host
    assert "url=/evil.example/x'" in _raw_get(project.root, "//evil.example/x", f"token={TOKEN}")


def _raw_get(root: Path, path: str, query: str) -> str:
    """The body the viewer answers to a GET of the raw ``path`` (no client normalizes it)."""
    import asyncio

    app = create_app(lambda: swarmmem.open(root), port=PORT, token=TOKEN, csrf=CSRF)
    scope = {
        "type": "http", "method": "GET", "path": path, "query_string": query.encode(),
        "headers": [(b"host", f"127.0.0.1:{PORT}".encode())],
    }  # fmt: skip
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    return b"".join(m.get("body", b"") for m in sent).decode()


def test_each_viewer_has_its_own_cookie_per_port(project: UiProject) -> None:
    assert cookie_name(8000) != cookie_name(8001)
    with viewer(project.root) as client:
        client.cookies.clear()
        client.cookies.set(cookie_name(PORT + 1), TOKEN)  # another viewer's cookie name
        assert client.get("/").status_code == 401


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",  # a rebinding name re-pointed at 127.0.0.1
        f"evil.example:{PORT}",
        f"127.0.0.1:{PORT + 1}",
        "127.0.0.1",
        f"0.0.0.0:{PORT}",
        f"[::1]:{PORT}",
    ],
)
def test_a_foreign_host_header_is_refused_even_signed_in(project: UiProject, host: str) -> None:
    """DNS rebinding: a page of another site whose name now points at 127.0.0.1 sends its own
    name as Host (and, from the browser, the cookie if it had one): refused."""
    with viewer(project.root) as client:
        refused = client.get("/", headers={"Host": host})
        assert refused.status_code == 403
        assert "Host" in refused.text and SCRIPT_TEXT not in refused.text
        assert post(client, f"/review/{project.proposals['approve']}/approve",
                    {"csrf": CSRF}, Host=host).status_code == 403  # fmt: skip
    assert proposal_of(project.root, project.proposals["approve"]).status == "pending"


def test_localhost_is_the_viewer_too(project: UiProject) -> None:
    with viewer(project.root) as client:
        assert client.get("/", headers={"Host": f"localhost:{PORT}"}).status_code == 200


@pytest.mark.parametrize(
    ("origin", "fetch_site"),
    [
        ("http://evil.example", None),
        (f"http://127.0.0.1:{PORT + 1}", None),  # another local server: same site, other port
        ("null", None),  # a file or sandboxed page
        ("", None),  # no Origin at all
        (ORIGIN, "cross-site"),
    ],
)
def test_a_post_from_elsewhere_changes_nothing(
    project: UiProject, origin: str, fetch_site: str | None
) -> None:
    before = store_digest(project.root)
    with viewer(project.root) as client:
        extra = {"Sec-Fetch-Site": fetch_site} if fetch_site else {}
        for name in ("approve", "reject"):
            proposal_id = project.proposals[name]
            sent = post(client, f"/review/{proposal_id}/{name}", {"csrf": CSRF}, Origin=origin,
                        **extra)  # fmt: skip
            assert sent.status_code == 403, (origin, sent.text)
    assert store_digest(project.root) == before


def test_a_get_from_another_origin_is_refused(project: UiProject) -> None:
    with viewer(project.root) as client:
        assert client.get("/", headers={"Origin": "http://evil.example"}).status_code == 403


def _post_routes() -> list[str]:
    app = create_app(lambda: swarmmem.open("."), port=PORT, token=TOKEN, csrf=CSRF)
    starlette = app.app
    return sorted(r.path for r in starlette.routes if "POST" in (getattr(r, "methods", ()) or ()))


def test_every_post_route_is_known_to_the_csrf_tests() -> None:
    """The CSRF test below covers every state-changing route the application has."""
    assert _post_routes() == [
        "/health/audit",
        "/health/evidence",
        "/health/propose",
        "/review-batch",
        "/review-batch/preview",
        "/review/{proposal_id}/approve",
        "/review/{proposal_id}/edit",
        "/review/{proposal_id}/merge",
        "/review/{proposal_id}/reject",
        "/review/{proposal_id}/undo",
    ]


@pytest.mark.parametrize("csrf", [None, "", "wrong", CSRF[:-1]])
@pytest.mark.parametrize(
    "route",
    ["approve", "edit", "reject", "merge", "undo", "batch", "audit", "evidence", "propose"],
)
def test_a_post_with_the_cookie_but_without_the_csrf_token_changes_nothing(
    project: UiProject, route: str, csrf: str | None
) -> None:
    (project.root / "README.md").unlink()  # a proposal to file if the form were obeyed
    if route == "undo":  # a decision to undo if the form were obeyed
        with viewer(project.root) as client:
            post(client, f"/review/{project.proposals['approve']}/approve", {"csrf": CSRF})
    before = store_digest(project.root)
    proposal_id = project.proposals["approve" if route == "undo" else "edit"]
    health = ("audit", "evidence", "propose")
    path = f"/health/{route}" if route in health else f"/review/{proposal_id}/{route}"
    path = "/review-batch" if route == "batch" else path
    data = {"text": "Changed by a forged form.", "kind": "project_fact", "reason": "forged",
            "into": project.memories["script"], "action": "reject",
            f"pick_{project.proposals['edit']}": "1"}  # fmt: skip
    if csrf is not None:
        data["csrf"] = csrf
    with viewer(project.root) as client:
        refused = post(client, path, data)
        assert refused.status_code == 403
        assert "CSRF" in refused.text and "Verified" not in refused.text
    assert store_digest(project.root) == before
    expected = "applied" if route == "undo" else "pending"
    assert proposal_of(project.root, proposal_id).status == expected


def test_only_small_url_encoded_forms_are_read(project: UiProject) -> None:
    proposal_id = project.proposals["approve"]
    path = f"/review/{proposal_id}/approve"
    with viewer(project.root) as client:
        big = post(client, path, {"csrf": CSRF, "pad": "x" * 70_000})
        assert big.status_code == 413
        multipart = client.post(
            path, files={"csrf": (None, CSRF)}, headers={"Origin": ORIGIN}
        )  # fmt: skip
        assert multipart.status_code == 415
        assert client.put(path, headers={"Origin": ORIGIN}).status_code == 405
    assert proposal_of(project.root, proposal_id).status == "pending"


def test_every_answer_carries_a_strict_content_security_policy(project: UiProject) -> None:
    assert "script-src 'none'" in CONTENT_SECURITY_POLICY
    assert "default-src 'self'" in CONTENT_SECURITY_POLICY
    assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY
    with viewer(project.root, signed_in=False) as client:
        answers = [client.get("/"), client.get("/", headers={"Host": "evil.example"})]
        answers.append(client.get(f"/?token={TOKEN}"))
        answers += [client.get(path) for path in (*PAGES, "/static/style.css")]
    for answer in answers:
        assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["referrer-policy"] == "same-origin"
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["cache-control"] == "no-store"
        assert "server" not in answer.headers


# ------------------------------------------------------------------------- escaping
def _bodies(client: TestClient, project: UiProject) -> dict[str, str]:
    paths = [*PAGES, f"/sessions/{HOSTILE_SESSION}", "/?q=tokens+CI+output",
             "/?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E", "/?state=all"]  # fmt: skip
    paths += [f"/memory/{i}" for i in project.memories.values()]
    paths += [f"/proposal/{i}" for i in project.proposals.values()]
    bodies = {}
    for path in paths:
        answer = client.get(path)
        assert answer.status_code == 200, (path, answer.text)
        bodies[path] = answer.text
    return bodies


def test_every_stored_string_is_escaped_and_invisible_characters_shown(
    project: UiProject,
) -> None:
    with viewer(project.root) as client:
        bodies = _bodies(client, project)
    for path, body in bodies.items():
        lowered = body.lower()
        assert "<script" not in lowered, path  # the pages have no script at all
        assert "<img" not in lowered and "<b>bold" not in lowered and "<i>it" not in lowered, path
        assert "</textarea><" not in lowered, path
        assert 'href="javascript' not in lowered, path
        assert BIDI not in body and "\x1b" not in body and "\x07" not in body, path
    assert "&lt;script&gt;window.__xss = 1&lt;/script&gt;" in bodies["/"]
    assert "onerror=&#34;window.__xss = 2&#34;" in bodies["/"]
    review = bodies["/review"]
    assert "&lt;/textarea&gt;&lt;script&gt;window.__xss=3&lt;/script&gt;" in review
    assert "why approve &lt;i&gt;it&lt;/i&gt;" in review
    hostile = bodies[f"/sessions/{HOSTILE_SESSION}"]
    assert "file[U+202E]txt.exe" in hostile  # the override is shown, not obeyed
    assert "[U+001B]]52;c;" in hostile and "[U+0007]" in hostile
    assert "&lt;script&gt;window.__xss = 4&lt;/script&gt;" in hostile
    assert "javascript:alert(1)" in hostile  # shown as text, never as a link
    assert (
        "&lt;script&gt;alert(1)&lt;/script&gt;" in bodies["/?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E"]
    )


def test_a_stored_bidi_override_is_shown_not_obeyed(project: UiProject) -> None:
    """Intake strips invisible characters from proposals, so this memory is written straight
    into the store, as a reference store or another tool might have."""
    import attrs

    with swarmmem.open(project.root) as mem:
        record = mem.get(project.memories["img"])
        mem.store.upsert(attrs.evolve(record, text=f"Run deploy{BIDI}hs.exe only from CI"))
    with viewer(project.root) as client:
        page = client.get(f"/memory/{record.id}").text
        listing = client.get("/").text
    for body in (page, listing):
        assert BIDI not in body
        assert "Run deploy[U+202E]hs.exe only from CI" in body


# ------------------------------------------------------------------------------ pages
def test_the_memories_page_lists_and_filters(project: UiProject) -> None:
    with viewer(project.root) as client:
        everything = client.get("/").text
        conventions = client.get("/?kind=repo_convention").text
        deleted = client.get("/?state=deleted").text
        bad = client.get("/?kind=%3Cx%3E&state=nope&offset=-3")
        by_file = client.get("/?file=pyproject.toml&scope=repository").text
        recent = client.get("/?since=2000-01-31").text
        later = client.get("/?since=2999-01-31").text
        bad_since = client.get("/?since=yesterday%3Cb%3E")
    assert project.memories["img"] in by_file and project.memories["script"] not in by_file
    assert 'value="pyproject.toml"' in by_file  # the filter is kept in the form
    assert project.memories["img"] in recent and project.memories["img"] not in later
    assert bad_since.status_code == 400 and "<b>" not in bad_since.text
    # by what the cited files say now, and by learned value (Q 0.5 is the middle band)
    (project.root / "pyproject.toml").unlink()  # the file the img memory cites
    with viewer(project.root) as client:
        missing = client.get("/?evidence=missing").text
        fresh = client.get("/?evidence=fresh").text
        middle = client.get("/?value=middle").text
        high = client.get("/?value=high").text
    assert project.memories["img"] in missing and project.memories["script"] not in missing
    assert project.memories["script"] in fresh and project.memories["img"] not in fresh
    assert 'id="scanned">Filtered among the 2 newest memories read' in missing
    assert all(project.memories[n] in middle for n in ("img", "script"))
    assert "No memory" in high
    assert project.memories["script"] in everything and project.memories["img"] in everything
    assert project.memories["script"] in conventions
    assert project.memories["img"] not in conventions
    assert project.memories["script"] not in deleted and "No memory" in deleted
    assert bad.status_code == 200 and project.memories["img"] in bad.text  # unknown filters: none


def test_search_runs_the_real_recall_with_scores_and_reasons(project: UiProject) -> None:
    with swarmmem.open(project.root) as mem:
        expected = mem.recall("never log tokens in the CI output")
    assert expected.items
    first = expected.items[0]
    with viewer(project.root) as client:
        found = client.get("/?q=never+log+tokens+in+the+CI+output").text
        nothing = client.get("/?q=kubernetes+helm+chart+rollback").text
        short = client.get("/?q=x")
    assert f"{first.score:.3f}" in found
    assert first.reason.split(",")[0] in found  # the reason recall gives
    assert first.record.id in found and "evidence" in found
    assert "Nothing matched" in nothing and "nothing-matched" in nothing
    assert "Left out" in nothing
    assert short.status_code == 200 and 'class="error"' in short.text


def test_a_memory_page_shows_evidence_freshness_outcomes_and_value(project: UiProject) -> None:
    memory_id = project.memories["script"]
    with swarmmem.open(project.root, context={"agent_role": "coder"}) as mem:
        mem.record_outcome(memory_id=memory_id, outcome="useful")
    with viewer(project.root) as client:
        fresh = client.get(f"/memory/{memory_id}").text
        (project.root / "README.md").write_text("# changed since\n", encoding="utf-8")
        changed = client.get(f"/memory/{memory_id}").text
        (project.root / "README.md").unlink()
        missing = client.get(f"/memory/{memory_id}").text
        unknown = client.get("/memory/mem_0000000000000000")
        weird = client.get("/memory/%3Cscript%3E")
    assert "README.md" in fresh
    assert re.search(r'<td class="ref">README.md</td><td><span class="status ok">fresh', fresh)
    assert re.search(r'class="ref">README.md</td><td><span class="status warn">changed', changed)
    assert re.search(r'class="ref">README.md</td><td><span class="status bad">missing', missing)
    assert "useful" in fresh and 'id="q-value">0.550' in fresh  # one useful: 0.5 -> 0.55
    assert "repo_convention" in fresh and "repository" in fresh
    assert unknown.status_code == 404 and weird.status_code == 404


def test_a_memory_page_shows_the_lines_that_changed_in_what_it_cites(project: UiProject) -> None:
    """A memory citing a line range keeps those lines; when they change, its page shows the
    lines removed and added (escaped like every stored string)."""
    (project.root / "ci").mkdir(exist_ok=True)
    (project.root / "ci" / "build.sh").write_text("set -e\nmake test\nmake lint\n", "utf-8")
    with swarmmem.open(project.root, context={"agent_role": "coder"}) as mem:
        memory_id = curate_fact(
            mem, "CI runs make test, then make lint.", evidence="ci/build.sh:2-3"
        )
    (project.root / "ci" / "build.sh").write_text(
        "set -e\nmake test\nmake lint <b>now</b>\n", "utf-8"
    )
    with viewer(project.root) as client:
        page = client.get(f"/memory/{memory_id}").text
    assert "Changed in ci/build.sh:2-3 since the memory was written" in page
    assert "-make lint\n+make lint &lt;b&gt;now&lt;/b&gt;" in page


def test_a_memory_page_shows_its_history_value_chart_recalls_and_injections(
    project: UiProject,
) -> None:
    """The supersede chain with the times each held, the proposals and who decided them (a
    person through the viewer's label), the learned value as an SVG line, the recalls that
    returned it and its injections from the run logs; hostile text in each stays text."""
    from swarmmem.adapters.files.runlog import append_run_event

    old_id = project.memories["script"]
    hostile_query = "never log tokens <script>window.__xss = 6</script> in the CI output"
    with swarmmem.open(project.root, context={"agent_role": "coder", "session_id": "s-9"}) as mem:
        prop = mem.propose(
            operation="supersede", target_memory_id=old_id, kind="repo_convention",
            text="Never log tokens or cookies in the CI output.",
            rationale="cookies <b>too</b>", evidence_refs=["README.md"],
        )  # fmt: skip
        new_id = mem.curate(prop.id, "supersede", reason="wider <i>rule</i>", reviewer="user")
        new_id = new_id.memory_id
        for outcome in ("useful", "useful", "dead_end"):
            mem.record_outcome(memory_id=new_id, outcome=outcome)
        recalled = mem.recall(hostile_query)
    assert new_id in [i.record.id for i in recalled.items]
    injected = {"type": "prompt_injected", "memoryIds": [new_id], "scores": [0.777],
                "tokens": 33, "dense": False}  # fmt: skip
    append_run_event(project.root, "s-9", injected, "2026-01-03T00:00:00.000Z")
    with viewer(project.root) as client:
        page = client.get(f"/memory/{new_id}").text
        older = client.get(f"/memory/{old_id}").text
    chain = page.split('id="chain"')[1].split("</table>")[0]
    assert chain.index(old_id) < chain.index(new_id)  # oldest first
    assert "wider &lt;i&gt;rule&lt;/i&gt;" in chain and "superseded" in chain
    assert re.search(r'<td class="time">[0-9T:.-]+Z</td><td class="time">now</td>', chain)
    decisions = page.split('id="decisions"')[1].split("</table>")[0]
    assert prop.id in decisions and "supersede" in decisions
    assert '<td class="reviewer">a person</td>' in decisions
    chart = page.split('id="value-chart"')[1].split("</figure>")[0]
    assert "<svg" in chart and "<polyline points=" in chart and chart.count("<circle") == 4
    recalls = page.split('id="recalls"')[1].split("</table>")[0]
    assert "&lt;script&gt;window.__xss = 6&lt;/script&gt;" in recalls and "coder" in recalls
    injections = page.split('id="injections"')[1].split("</table>")[0]
    assert 'href="/sessions/s-9"' in injections and "0.777" in injections and ">33<" in injections
    assert new_id in older.split('id="chain"')[1]  # the old one names its replacement
    assert "<script" not in page.lower() and "<b>too" not in page


def test_review_approve_edit_and_reject_go_through_the_audited_curator_path(
    project: UiProject,
) -> None:
    ids = project.proposals
    with viewer(project.root) as client:
        queue = client.get("/review").text
        assert all(ids[name] in queue for name in ("approve", "edit", "reject"))
        assert 'id="pending-count">4<' in queue
        approved = post(client, f"/review/{ids['approve']}/approve", {"csrf": CSRF})
        assert approved.status_code == 303
        assert approved.headers["location"].startswith(f"/review?done=approved&id={ids['approve']}")
        edited = post(client, f"/review/{ids['edit']}/edit",
                      {"csrf": CSRF, "text": EDITED_TEXT, "kind": "project_fact"})  # fmt: skip
        assert edited.status_code == 303
        rejected = post(client, f"/review/{ids['reject']}/reject",
                        {"csrf": CSRF, "reason": "we deploy <any> day"})  # fmt: skip
        assert rejected.status_code == 303
        after = client.get(rejected.headers["location"]).text
        again = post(client, f"/review/{ids['approve']}/approve", {"csrf": CSRF})
    assert "Rejected " + ids["reject"] in after and ids["approve"] not in after.split("<article")[0]
    assert 'id="pending-count">1<' in after
    assert again.status_code == 409 and "stays pending" in again.text
    with swarmmem.open(project.root) as mem:
        texts = {r.text for r in mem.list()}
        approve, edit, reject = (
            mem.store.get_proposal(ids[n]) for n in ("approve", "edit", "reject")
        )
        edit_events = [
            e for e in mem.inspect(ids["edit"]).audit if e["operation"] == "curator_decision"
        ]
    assert APPROVE_TEXT in texts and EDITED_TEXT in texts and EDIT_TEXT not in texts
    assert REJECT_TEXT not in texts
    assert (approve.status, edit.status, reject.status) == ("applied", "applied", "rejected")
    assert reject.rejection_reason == "we deploy <any> day"
    assert edit_events[0]["event"]["rewritten"] == ["text"]


def test_review_edit_can_give_the_memory_other_evidence(project: UiProject) -> None:
    """The edit form offers the proposal's refs; refs that do not hold are refused (the
    proposal stays pending), others are what the memory is fingerprinted from."""
    prop_id = project.proposals["edit"]
    with viewer(project.root) as client:
        card = client.get("/review").text.split(f'id="{prop_id}"')[1].split("</article>")[0]
        assert 'name="evidence"' in card and 'value="src/api/server.py"' in card
        bad = post(client, f"/review/{prop_id}/edit",
                   {"csrf": CSRF, "text": EDIT_TEXT, "evidence": "nowhere.py"})  # fmt: skip
        good = post(client, f"/review/{prop_id}/edit",
                    {"csrf": CSRF, "text": EDIT_TEXT,
                     "evidence": "src/api/server.py, ci/deploy.yml:1"})  # fmt: skip
    assert bad.status_code == 400 and "names no file of the repository" in bad.text
    assert good.status_code == 303
    with swarmmem.open(project.root) as mem:
        decision = mem.store.get_proposal(prop_id).metadata["curatorDecision"]
        record = mem.get(decision["memoryId"])
    assert decision["rewritten"] == ["evidence"]
    assert record.metadata["evidenceRefs"] == ["src/api/server.py", "ci/deploy.yml:1"]


def test_merge_skip_undo_and_batch_decide_as_a_person(project: UiProject) -> None:
    """Merge into a similar memory (rejected as its duplicate, as ``review``'s ``m``), skip
    (a link: nothing stored), undo (``Memory.undo_decision``), and a batch previewed then
    confirmed; every decision carries the person's label."""
    from swarmmem.core.writes.curator import MERGE_REASON  # the terminal review's words

    ids, script = project.proposals, project.memories["script"]
    with swarmmem.open(project.root, context={"agent_role": "coder"}) as mem:
        dup = propose_fact(mem, SCRIPT_TEXT.replace("output.", "output, always."),
                           kind="repo_convention", evidence="README.md")  # fmt: skip
    assert dup.status == "pending" and script in [
        s["memoryId"] for s in dup.metadata.get("similar", [])
    ]
    with viewer(project.root) as client:
        queue = client.get("/review").text
        card = queue.split(f'id="{dup.id}"')[1].split("</article>")[0]
        assert f'<option value="{script}">' in card and 'name="merge"' in card
        bad = post(client, f"/review/{dup.id}/merge",
                   {"csrf": CSRF, "into": project.memories["img"]})  # fmt: skip
        assert bad.status_code == 400 and "similar memories" in bad.text
        merged = post(client, f"/review/{dup.id}/merge", {"csrf": CSRF, "into": script})
        assert merged.status_code == 303 and "done=merged" in merged.headers["location"]
        # skip: a link that hides the card, and the queue still counts it
        skipped = client.get(f"/review?skip={ids['edit']},not-an-id,<x>").text
        assert f'id="{ids["edit"]}"' not in skipped and 'id="pending-count">4<' in skipped
        assert 'id="skipped">1 skipped' in skipped
        # the next skip link keeps this one (the bad ids are dropped)
        assert f'href="/review?skip={ids["edit"]}%2C{ids["reject"]}"' in skipped
        # approve, then undo from the notice
        approved = post(client, f"/review/{ids['approve']}/approve", {"csrf": CSRF})
        after = client.get(approved.headers["location"]).text
        assert f'action="/review/{ids["approve"]}/undo"' in after
        undone = post(client, f"/review/{ids['approve']}/undo", {"csrf": CSRF})
        assert undone.status_code == 303 and "done=undone" in undone.headers["location"]
        twice = post(client, f"/review/{ids['approve']}/undo", {"csrf": CSRF})
        assert twice.status_code == 409 and "was not undone" in twice.text
        # a batch: the preview decides nothing, the confirmation decides each
        picks = {f"pick_{ids['edit']}": "1", f"pick_{ids['reject']}": "1"}
        form = {"csrf": CSRF, "action": "reject", "reason": "not <ours>", **picks}
        preview = post(client, "/review-batch/preview", form)
        assert preview.status_code == 200 and 'id="preview"' in preview.text
        assert "not &lt;ours&gt;" in preview.text
        assert proposal_of(project.root, ids["edit"]).status == "pending"
        assert all(f'name="pick_{ids[n]}" value="1"' in preview.text for n in ("edit", "reject"))
        empty = post(client, "/review-batch/preview", {"csrf": CSRF, "action": "reject"})
        assert empty.status_code == 400
        confirmed = post(client, "/review-batch", form)
        assert confirmed.status_code == 303 and "done=batch&n=2" in confirmed.headers["location"]
    with swarmmem.open(project.root) as mem:
        merged_prop = mem.store.get_proposal(dup.id)
        approve = mem.store.get_proposal(ids["approve"])
        refiled = mem.store.get_proposal(approve.metadata["undoneBy"])
        batch = [mem.store.get_proposal(ids[n]) for n in ("edit", "reject")]
        texts = {r.text for r in mem.list()}
    assert merged_prop.status == "rejected" and merged_prop.reviewer == "user"
    assert merged_prop.rejection_reason == MERGE_REASON.format(memory_id=script)
    assert APPROVE_TEXT not in texts and refiled.status == "pending"  # undone: forgotten
    assert [(p.status, p.reviewer, p.rejection_reason) for p in batch] == [
        ("rejected", "user", "not <ours>")
    ] * 2


def test_a_look_alike_domain_is_flagged_on_the_review_card(project: UiProject) -> None:
    """A Cyrillic letter in a domain name reads as the familiar name: the card says so, with
    the name a browser would resolve."""
    with swarmmem.open(project.root, context={"agent_role": "coder"}) as mem:
        prop = propose_fact(
            mem, "Tokens are refreshed at https://lоgin.example.com/token every hour."
        )
    with viewer(project.root) as client:
        card = client.get("/review").text.split(f'id="{prop.id}"')[1].split("</article>")[0]
    assert 'class="warn lookalike"' in card
    assert "&#39;lоgin.example.com&#39; is xn--lgin-" in card


def test_a_person_decides_with_the_same_label_as_swarmmem_review(project: UiProject) -> None:
    """The viewer records a decision exactly as ``swarmmem review`` does (the same reviewer
    label, reason and audit event)."""
    ids = project.proposals
    with viewer(project.root) as client:
        post(client, f"/review/{ids['approve']}/approve", {"csrf": CSRF})
        post(client, f"/review/{ids['reject']}/reject", {"csrf": CSRF, "reason": ""})
    with swarmmem.open(project.root, context={"agent_role": "coder"}) as mem:
        by_cli = [propose_fact(mem, t, evidence="pyproject.toml").id for t in (
            "Format Python code with ruff format before every commit.",
            "Releases are tagged from the main branch only.",
        )]  # fmt: skip
    # the terminal review takes the oldest first: decide the viewer's leftovers, then ours
    keys = "s\ns\na\nr\n\nq\n"
    done = cli(project.root, "review", stdin=keys)
    assert done.exit_code == 0, done.output
    viewer_approve, viewer_reject = (
        proposal_of(project.root, ids[n]) for n in ("approve", "reject")
    )
    cli_approve, cli_reject = (proposal_of(project.root, i) for i in by_cli)
    assert cli_approve.status == "applied" and cli_reject.status == "rejected"
    assert viewer_approve.reviewer == cli_approve.reviewer == "user"  # a person's decision
    assert viewer_reject.reviewer == cli_reject.reviewer == "user"
    assert viewer_reject.rejection_reason == cli_reject.rejection_reason == "rejected in review"


def test_the_sessions_page_and_a_session_timeline(project: UiProject) -> None:
    with viewer(project.root) as client:
        listing = client.get("/sessions").text
        timeline = client.get(f"/sessions/{SESSION}").text
        unknown = client.get("/sessions/nobody")
        escape = client.get("/sessions/..%2F..%2Fetc")
    assert SESSION in listing and HOSTILE_SESSION in listing
    assert f'href="/sessions/{SESSION}"' in listing
    memory_id, proposal_id = project.memories["script"], project.proposals["approve"]
    assert "session_brief" in timeline and "41 tokens" in timeline
    assert f'href="/memory/{memory_id}"' in timeline and "score 0.812" in timeline
    assert "57 tokens" in timeline and "lexical only" in timeline
    assert "below_threshold" in timeline
    assert f'href="/proposal/{proposal_id}"' in timeline
    assert "2 injection(s) (98 tokens" not in timeline  # the brief is not a prompt injection
    assert "1 injection(s) (98 tokens, 1 memories)" in timeline
    assert unknown.status_code == 404 and escape.status_code == 404
    # tokens injected per day: one bar per day, server-rendered SVG
    chart = listing.split('<figure id="tokens-chart">')[1].split("</figure>")[0]
    assert chart.count("<rect ") >= 1 and "tokens</title></rect>" in chart


def test_tokens_per_day_adds_the_sessions_of_each_day() -> None:
    from swarmmem.ui.pages import tokens_per_day

    summaries = [
        {"last_at": "2026-12-07T10:00:00.000Z", "tokens_injected": 40},
        {"last_at": "2026-12-06T23:59:00.000Z", "tokens_injected": 7},
        {"last_at": "2026-12-07T11:00:00.000Z", "tokens_injected": 2},
        {"last_at": None, "tokens_injected": 9},
        {"last_at": "2026-12-05<script>", "tokens_injected": "many"},
    ]
    assert tokens_per_day(summaries) == [("2026-12-06", 7), ("2026-12-07", 42)]


def test_the_health_page_and_the_audit_chain_on_demand(project: UiProject) -> None:
    with viewer(project.root) as client:
        health = client.get("/health").text
        verified = post(client, "/health/audit", {"csrf": CSRF})
        checked = post(client, "/health/evidence", {"csrf": CSRF})
    assert 'id="memory-count">2<' in health and "sqlite" in health
    assert "evidence-counts" not in health  # every memory is read only on demand
    assert 'id="evidence-counts">2 memories cite files: 0 changed, 0 missing' in checked.text
    assert verified.status_code == 200 and "<b>Verified</b>" in verified.text
    # the configuration in force, key by key
    assert '<td class="id">provider</td><td>&#34;sqlite&#34;</td>' in health
    assert '<td class="id">recall.injection.maxItems</td><td>6</td>' in health


def test_verify_propose_from_the_health_page_files_proposals_for_review(
    project: UiProject,
) -> None:
    memory_id = project.memories["script"]  # cites README.md
    (project.root / "README.md").unlink()
    with viewer(project.root) as client:
        checked = post(client, "/health/evidence", {"csrf": CSRF})
        assert "1 missing" in checked.text and "evidence-proposals" not in checked.text
        filed = post(client, "/health/propose", {"csrf": CSRF})
        again = post(client, "/health/propose", {"csrf": CSRF})
        queue = client.get("/review").text
    assert filed.status_code == 200 and 'id="evidence-proposals">Filed 1 proposal(s)' in filed.text
    assert f'href="/memory/{memory_id}"' in filed.text
    assert "evidence-proposals" not in again.text  # one pending proposal per memory
    with swarmmem.open(project.root) as mem:
        pending = [p for p in mem.store.list_proposals("pending") if p.target_memory_id]
    assert [(p.operation, p.target_memory_id) for p in pending] == [("delete", memory_id)]
    assert pending[0].id in queue


def test_the_configuration_is_shown_escaped_and_without_passwords(project: UiProject) -> None:
    from swarmmem.ui.pages import config_rows

    hostile = {"postgres": {"dsn": "postgresql://bob:hunter2@db.internal/mem?x=<script>"},
               "other": {"dsn": "host=db password='s3cret pw' user=bob"},
               "token": "ghp_" + "a" * 36}  # fmt: skip
    rows = dict(config_rows(hostile))
    assert "hunter2" not in rows["postgres.dsn"] and "db.internal/mem" in rows["postgres.dsn"]
    assert "s3cret" not in rows["other.dsn"] and "password=***" in rows["other.dsn"]
    assert "a" * 36 not in rows["token"]
    config = json.loads((project.root / ".opencode" / "opencode-swarm.json").read_text())
    config["memory"]["postgres"] = {
        "dsn": "postgresql://bob:hunter2@db/x?<script>alert(1)</script>"
    }
    (project.root / ".opencode" / "opencode-swarm.json").write_text(json.dumps(config))
    with viewer(project.root) as client:
        health = client.get("/health").text
    assert "hunter2" not in health and "<script" not in health.lower()
    assert "db/x?&lt;script&gt;alert(1)&lt;/script&gt;" in health


def test_the_viewer_never_writes_through_a_planted_run_log_link(project: UiProject) -> None:
    """A run log linked to another file is refused, and a linked run folder is not listed."""
    secret = project.root.parent / "elsewhere.jsonl"
    secret.write_text(json.dumps({"type": "prompt_injected", "reason": "SECRET-LINE"}) + "\n")
    runs = project.root / ".swarm" / "runs"
    (runs / "linked-file").mkdir()
    os.symlink(secret, runs / "linked-file" / "memory.jsonl")
    os.symlink(secret.parent, runs / "linked-folder")
    with viewer(project.root) as client:
        listing = client.get("/sessions").text
        refused = client.get("/sessions/linked-file")
    assert "linked-file" not in listing and "linked-folder" not in listing
    assert refused.status_code == 404 and "SECRET-LINE" not in refused.text


def test_a_read_only_store_opens_read_only_and_offers_no_decision(project: UiProject) -> None:
    store = project.root / ".swarm" / "memory"
    assert sorted(p.name for p in store.iterdir()) == ["memory.db"]
    before = hashlib.sha256((store / "memory.db").read_bytes()).hexdigest()
    proposal_id = project.proposals["approve"]
    with unwritable(store / "memory.db", store), viewer(project.root) as client:
        review = client.get("/review").text
        pages = [client.get(p) for p in PAGES]
        searched = client.get("/?q=never+log+tokens")
        refused = post(client, f"/review/{proposal_id}/approve", {"csrf": CSRF})
        audit = post(client, "/health/audit", {"csrf": CSRF})
        health = client.get("/health").text
        propose = post(client, "/health/propose", {"csrf": CSRF})
        batch = post(client, "/review-batch",
                     {"csrf": CSRF, "action": "approve", f"pick_{proposal_id}": "1"})  # fmt: skip
        merge = post(client, f"/review/{proposal_id}/merge", {"csrf": CSRF, "into": "mem_x"})
    assert batch.status_code == 409 and merge.status_code == 409
    assert 'form="batch"' not in review and 'name="merge"' not in review
    assert 'id="read-only"' in review and '<form method="post" action="/review' not in review
    assert 'action="/health/propose"' not in health and propose.status_code == 409
    assert all(p.status_code == 200 for p in pages) and searched.status_code == 200
    assert refused.status_code == 409 and "read-only" in refused.text
    assert audit.status_code == 200 and "Verified" in audit.text
    assert hashlib.sha256((store / "memory.db").read_bytes()).hexdigest() == before
    assert sorted(p.name for p in store.iterdir()) == ["memory.db"]
    assert proposal_of(project.root, proposal_id).status == "pending"


# ------------------------------------------------------------------ the command itself
def test_the_ui_command_refuses_a_project_without_memory(tmp_path: Path) -> None:
    root = memory_project(tmp_path / "off", {}, {"enabled": False})
    done = cli(root, "ui", "--no-browser", "--json")
    assert done.exit_code == 1 and json.loads(done.stdout)["disabled"] is True


def test_the_ui_command_names_the_extra_when_it_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import swarmmem.ui

    monkeypatch.setattr(swarmmem.ui, "missing_modules", lambda: ["starlette"])
    done = cli(tmp_path, "ui", "--no-browser", "--json")
    assert done.exit_code == 2
    assert json.loads(done.stdout)["error"] == "missing_dependency"
    assert "pip install 'swarmmem[ui]'" in json.loads(done.stdout)["message"]


def _listeners(port: int) -> list[str]:
    """The local addresses (hex, as /proc/net/tcp* gives them) listening on ``port``."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table, encoding="ascii") as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                address, hex_port = fields[1].rsplit(":", 1)
                if int(hex_port, 16) == port and fields[3] == "0A":  # LISTEN
                    found.append(address)
    return found


def _fetch(url: str, cookie: str | None = None, host: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url)
    if cookie:
        request.add_header("Cookie", cookie)
    if host:
        request.add_header("Host", host)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@contextlib.contextmanager
def running_ui(root: Path, *args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``swarmmem ui --no-browser ARGS`` as a process, with the first line it printed."""
    command = [sys.executable, "-m", "swarmmem", "--root", str(root), "ui", "--no-browser", *args]
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()  # flushed at start, while it keeps running
        assert process.poll() is None, process.stderr.read() if process.stderr else ""
        yield process, line
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


def test_the_ui_process_listens_on_127_0_0_1_only_and_prints_a_fresh_token(
    project: UiProject,
) -> None:
    url_shape = re.compile(r"^http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]{40,})$")
    with running_ui(project.root) as (process, line):
        match = url_shape.match(line)
        assert match, line
        port, token = int(match.group(1)), match.group(2)
        assert _listeners(port) == ["0100007F"]  # 127.0.0.1, no other address
        assert _fetch(f"http://127.0.0.1:{port}/")[0] == 401
        status, body = _fetch(line)
        assert status == 200 and "Signed in" in body
        cookie = f"{cookie_name(port)}={token}"
        status, body = _fetch(f"http://127.0.0.1:{port}/review", cookie)
        assert status == 200 and APPROVE_TEXT in body
        rebinding = _fetch(f"http://127.0.0.1:{port}/", cookie, host=f"evil.example:{port}")
        assert rebinding[0] == 403
    assert process.returncode == 0
    with running_ui(project.root, "--json") as (_, again):
        second = json.loads(again)
    assert second["url"] != line and second["success"] is True
    assert url_shape.match(second["url"]).group(2) != token  # a new token per start


def test_the_ui_command_takes_the_port_given(project: UiProject) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with running_ui(project.root, "--port", str(port)) as (_, line):
        assert line.startswith(f"http://127.0.0.1:{port}/?token=")
        busy = cli(project.root, "ui", "--no-browser", "--port", str(port))  # taken now
        assert busy.exit_code == 2 and f"127.0.0.1:{port}" in busy.output


def test_the_browser_gets_a_private_file_never_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    from swarmmem.ui import server

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    url = "http://127.0.0.1:5/?token=SECRET-TOKEN-VALUE"
    opened: list[str] = []
    folder = server.open_browser(url, opener=lambda target: bool(opened.append(target)) or True)
    assert folder is not None
    (target,) = opened
    assert "SECRET-TOKEN-VALUE" not in target and target.startswith("file://")
    page = folder / server.REDIRECT_NAME
    assert target == page.as_uri()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(page.stat().st_mode) == 0o600
    assert "url=http://127.0.0.1:5/?token=SECRET-TOKEN-VALUE" in page.read_text()
    shutil.rmtree(folder)
    # a browser that did not open leaves no file behind; no display: no text browser is tried
    assert server.open_browser(url, opener=lambda target: False) is None
    assert page.parent.parent == tmp_path
    assert not list(tmp_path.glob("swarmmem-ui-*/" + server.REDIRECT_NAME))


def test_without_a_display_no_browser_is_started(monkeypatch: pytest.MonkeyPatch) -> None:
    from swarmmem.ui import server

    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(server.sys, "platform", "linux")
    monkeypatch.setattr(server.webbrowser, "open", lambda *a, **k: pytest.fail("opened"))
    assert server.open_browser("http://127.0.0.1:5/?token=t") is None


def test_the_server_removes_the_redirect_folder_when_it_stops(
    project: UiProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    from swarmmem.ui import server

    monkeypatch.setenv("DISPLAY", ":99")
    seen: list[str] = []
    monkeypatch.setattr(server.webbrowser, "open", lambda target: bool(seen.append(target)) or True)
    ui = server.UiServer(lambda: swarmmem.open(project.root))
    try:
        assert ui.open_browser()
        folder = Path(seen[0].removeprefix("file://")).parent
        assert folder.is_dir()
    finally:
        ui.close()
    assert not folder.exists()


def test_import_swarmmem_and_its_cli_load_no_web_framework() -> None:
    code = (
        "import sys, swarmmem, swarmmem.cli\n"
        "swarmmem.cli.command_modules()\n"
        "print(sorted(m for m in ('starlette', 'jinja2', 'uvicorn', 'swarmmem.ui.app') "
        "if m in sys.modules))\n"
    )
    done = run_python(code, "-W", "error")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_store_of_one_project_offers_no_other_project(project: UiProject) -> None:
    """SQLite keeps one project's memory: no picker, and no ``/p/`` page (not even this
    project's own identity), nothing to switch to."""
    with swarmmem.open(project.root) as mem:
        own = mem.status()["repository"]["repository_id"]
    with viewer(project.root) as client:
        home = client.get("/")
        assert home.status_code == 200 and 'id="project-picker"' not in home.text
        assert 'href="/review"' in home.text  # links keep their unprefixed paths
        for path in (f"/p/{own}/", f"/p/{own}/review", "/p/0123456789abcdef/"):
            assert client.get(path).status_code == 404, path
        assert client.get(f"/switch?project={own}").status_code == 404
        post_ = post(
            client, f"/p/{own}/review/{project.proposals['approve']}/approve", {"csrf": CSRF}
        )
        assert post_.status_code == 404
        assert proposal_of(project.root, project.proposals["approve"]).status == "pending"
        listing = client.get("/projects")
        assert listing.status_code == 200 and own not in listing.text


def test_a_folder_a_stored_row_names_is_not_opened_through_a_link_or_from_another_user(
    tmp_path: Path,
) -> None:
    """A shared store's rows may come from another role: a project folder that is a link,
    whose configuration file is a link, or that another user owns is listed with the reason
    and never read or opened."""
    from types import SimpleNamespace

    from swarmmem.ui.projects import Projects

    opened: list[Path] = []

    def opener(folder: Path, config: Any, context: Any) -> Any:
        opened.append(folder)
        raise AssertionError("a refused folder was opened")

    home = SimpleNamespace(config={}, context=SimpleNamespace(), root=tmp_path)
    projects = Projects(home, opener=opener)  # type: ignore[arg-type]
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text('{"memory": {"enabled": true, "projectId": "proj_x"}}', "utf-8")
    linked_config = tmp_path / "linked-config"
    (linked_config / ".opencode").mkdir(parents=True)
    (linked_config / ".opencode" / "opencode-swarm.json").symlink_to(elsewhere)
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "linked-folder").symlink_to(real)
    cases = {"linked-config": "link", "linked-folder": "link"}
    if os.getuid() == 0:
        foreign = tmp_path / "foreign"
        foreign.mkdir()
        os.chown(foreign, 65534, 65534)
        cases["foreign"] = "owned by another user"
    for name, why in cases.items():
        entry = {"repository_id": "0123456789abcdef", "last_root": str(tmp_path / name)}
        project = projects._project(entry)
        assert project.reason is not None and why in project.reason, (name, project)
    assert opened == []

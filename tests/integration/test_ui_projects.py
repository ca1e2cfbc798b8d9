"""``swarmmem ui`` over a shared PostgreSQL store: one viewer for the projects the store serves
to this database role, each page bound to the chosen project's scopes.

Two projects (``api`` and ``web``) share one schema under row-level security. Role ``both`` is
granted both repositories, role ``one`` only ``api`` plus a third identity whose stored rows
name ``web``'s folder (a forged or stale folder name). The viewer started in ``api``:

- as ``both`` offers ``web`` too, and every ``/p/<web>/`` page shows and decides ``web``'s
  memories and proposals only (and ``api``'s pages ``api``'s only);
- as ``one`` never opens ``web``: not listed, ``/p/<web>/`` and every page and action under it
  refused (404), though ``web``'s folder is here and its own configuration names the admin's
  connection (the viewer never uses a folder's own connection);
- on SQLite nothing changes (tested in ``test_ui.py``).

A real PostgreSQL server comes from ``pg_support`` (``pgserver`` or ``SWARMMEM_PG_DSN``);
without one the tests skip.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from pg_support import require_dsn
from ui_support import (
    API_ID,
    API_MEMORY,
    API_PROPOSAL,
    GHOST_ID,
    GHOST_MEMORY,
    WEB_ID,
    WEB_MEMORY,
    WEB_PROPOSAL,
    shared_config,
    shared_projects,
)

import swarmmem

pytest.importorskip("starlette", reason="the ui extra is not installed")
pytest.importorskip("jinja2", reason="the ui extra is not installed")
pytest.importorskip("psycopg")

from starlette.testclient import TestClient

from swarmmem.adapters.storage.postgres import PostgresStore
from swarmmem.ui.app import create_app

PORT = 48124
TOKEN = "test-token-" + "p" * 32
CSRF = "test-csrf-" + "q" * 32
ORIGIN = f"http://127.0.0.1:{PORT}"


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One schema, two project folders, roles ``both`` and ``one`` (see ``ui_support``)."""
    with shared_projects(require_dsn(), tmp_path_factory.mktemp("ui-projects")) as found:
        yield found


@contextlib.contextmanager
def viewer_as(shared: dict[str, Any], role: str) -> Iterator[TestClient]:
    """The viewer started in ``api`` connecting as ``role``, signed in."""
    config = shared_config("proj_api", shared["dsn"][role], shared["schema"])
    app = create_app(
        lambda: swarmmem.open(shared["api"], config=config), port=PORT, token=TOKEN, csrf=CSRF
    )
    with TestClient(app, base_url=ORIGIN, follow_redirects=False) as client:
        assert client.get(f"/?token={TOKEN}").status_code == 200
        yield client


def post(client: TestClient, path: str, data: dict[str, str]) -> Any:
    return client.post(path, data=data, headers={"Origin": ORIGIN})


def proposal_status(shared: dict[str, Any], proposal_id: str) -> str | None:
    with PostgresStore(shared["admin"], schema=shared["schema"], pool_size=1, cache=False) as s:
        found = s.get_proposal(proposal_id)
    return None if found is None else str(found.status)


def test_a_role_that_sees_both_projects_switches_between_them(shared: dict[str, Any]) -> None:
    with viewer_as(shared, "both") as client:
        home = client.get("/")
        assert home.status_code == 200
        # the picker offers both projects, the one started in selected
        assert 'id="project-picker"' in home.text
        assert f'<option value="{API_ID}" selected>api' in home.text
        assert f'<option value="{WEB_ID}">web' in home.text
        assert GHOST_ID not in home.text  # not granted to this role: the store never names it
        assert API_MEMORY in home.text and WEB_MEMORY not in home.text
        # the picker's target moves to the chosen project's pages
        moved = client.get(f"/switch?project={WEB_ID}")
        assert (moved.status_code, moved.headers["location"]) == (303, f"/p/{WEB_ID}/")
        assert client.get(f"/switch?project={API_ID}").headers["location"] == "/"
        web = client.get(f"/p/{WEB_ID}/")
        assert web.status_code == 200
        assert WEB_MEMORY in web.text and API_MEMORY not in web.text
        assert f'<option value="{WEB_ID}" selected>web' in web.text
        # every link of a web page stays in web
        assert f'href="/p/{WEB_ID}/memory/{shared["web_memory"]}"' in web.text
        assert f'href="/p/{WEB_ID}/review"' in web.text
        assert f'action="/p/{WEB_ID}/"' in web.text
        # search runs the real recall in web's scopes only
        found = client.get(f"/p/{WEB_ID}/", params={"q": "how is the web bundle built"})
        assert shared["web_memory"] in found.text
        api_search = client.get(f"/p/{WEB_ID}/", params={"q": "how is the api server started"})
        assert shared["api_memory"] not in api_search.text
        # a memory's page: web's under web; api's memory is not found under web (nor web's
        # under the project the viewer started in)
        assert client.get(f"/p/{WEB_ID}/memory/{shared['web_memory']}").status_code == 200
        assert client.get(f"/p/{WEB_ID}/memory/{shared['api_memory']}").status_code == 404
        assert client.get(f"/memory/{shared['web_memory']}").status_code == 404
        assert client.get(f"/p/{WEB_ID}/proposal/{shared['web_proposal']}").status_code == 200
        assert client.get(f"/proposal/{shared['web_proposal']}").status_code == 404
        # each review queue holds its own project's proposals
        review = client.get(f"/p/{WEB_ID}/review")
        assert WEB_PROPOSAL in review.text and API_PROPOSAL not in review.text
        assert f'action="/p/{WEB_ID}/review/{shared["web_proposal"]}/approve"' in review.text
        home_review = client.get("/review")
        assert API_PROPOSAL in home_review.text and WEB_PROPOSAL not in home_review.text
        # the projects page lists both, and the ghost identity is nowhere
        listing = client.get("/projects")
        assert listing.status_code == 200
        assert f'href="/p/{WEB_ID}/"' in listing.text and GHOST_ID not in listing.text
        health = client.get(f"/p/{WEB_ID}/health")
        assert health.status_code == 200 and "proj_web" in health.text


def test_a_decision_in_one_project_lands_in_that_project_only(shared: dict[str, Any]) -> None:
    web_prop, api_prop = shared["web_proposal"], shared["api_proposal"]
    with viewer_as(shared, "both") as client:
        # web's proposal cannot be decided from the project the viewer started in
        refused = post(client, f"/review/{web_prop}/approve", {"csrf": CSRF})
        assert refused.status_code == 404
        assert proposal_status(shared, web_prop) == "pending"
        # nor without the CSRF token under web's prefix
        for csrf in ({}, {"csrf": "x"}, {"csrf": CSRF[:-1]}):
            forged = post(client, f"/p/{WEB_ID}/review/{web_prop}/reject", {"reason": "r", **csrf})
            assert forged.status_code == 403
        assert proposal_status(shared, web_prop) == "pending"
        # under web's prefix it is decided, and the answer goes back to web's queue
        done = post(client, f"/p/{WEB_ID}/review/{web_prop}/reject", {"csrf": CSRF})
        assert done.status_code == 303
        assert done.headers["location"].startswith(f"/p/{WEB_ID}/review?done=rejected")
        assert proposal_status(shared, web_prop) == "rejected"
        assert proposal_status(shared, api_prop) == "pending"
        # undo puts it back, still in web
        undone = post(client, f"/p/{WEB_ID}/review/{web_prop}/undo", {"csrf": CSRF})
        assert undone.status_code == 303
        assert undone.headers["location"].startswith(f"/p/{WEB_ID}/review?done=undone")
        with swarmmem.open(
            shared["web"], config=shared_config("proj_web", shared["dsn"]["both"], shared["schema"])
        ) as mem:
            texts = [p.proposed_record.text for p in mem.proposals("pending")]
        assert texts == [WEB_PROPOSAL]


def all_rows(shared: dict[str, Any]) -> list[tuple[str, str]]:
    """Every memory and proposal of the schema with its state (as the admin reads them)."""
    with PostgresStore(shared["admin"], schema=shared["schema"], pool_size=1, cache=False) as s:
        rows = [(r.id, repr((r.text, r.active, r.updated_at))) for r in s.iter_all_records()]
        return sorted(rows + [(p.id, str(p.status)) for p in s.list_proposals()])


def test_a_project_the_role_may_not_see_is_refused(shared: dict[str, Any]) -> None:
    """Role ``one`` sees ``api`` and a ghost identity whose rows name ``web``'s folder: the
    folder opens to ``web``, not the ghost, so neither is opened; ``web``'s own file names
    the admin's connection, which the viewer never uses."""
    before = all_rows(shared)
    with viewer_as(shared, "one") as client:
        home = client.get("/")
        assert home.status_code == 200
        assert API_MEMORY in home.text and WEB_MEMORY not in home.text
        assert 'id="project-picker"' not in home.text  # one project to show: no picker
        for project in (WEB_ID, GHOST_ID, "0" * 16, "../../etc", API_ID.upper()):
            for path in ("/", "/review", "/health", "/sessions", f"/memory/{shared['web_memory']}"):
                answer = client.get(f"/p/{project}{path}")
                assert answer.status_code == 404, (project, path)
                assert WEB_MEMORY not in answer.text and GHOST_MEMORY not in answer.text
            assert client.get(f"/switch?project={project}").status_code == 404
            decided = post(
                client, f"/p/{project}/review/{shared['web_proposal']}/reject", {"csrf": CSRF}
            )
            assert decided.status_code == 404
        assert client.get(f"/memory/{shared['web_memory']}").status_code == 404
        assert client.get(f"/proposal/{shared['web_proposal']}").status_code == 404
        assert all_rows(shared) == before
        # the projects page names the ghost identity with the reason it was not opened
        listing = client.get("/projects")
        assert GHOST_ID in listing.text and "another project" in listing.text
        assert f'href="/p/{GHOST_ID}/"' not in listing.text and WEB_ID not in listing.text


def test_the_admin_sees_every_project_and_the_ghost_stays_closed(shared: dict[str, Any]) -> None:
    """The tables' owner bypasses row-level security: every identity is listed; the ghost's
    folder still opens to ``web``, so only ``web`` becomes a project."""
    config = shared_config("proj_api", shared["admin"], shared["schema"])
    app = create_app(
        lambda: swarmmem.open(shared["api"], config=config), port=PORT, token=TOKEN, csrf=CSRF
    )
    with TestClient(app, base_url=ORIGIN, follow_redirects=False) as client:
        assert client.get(f"/?token={TOKEN}").status_code == 200
        assert f'<option value="{WEB_ID}">web' in client.get("/").text
        assert client.get(f"/p/{GHOST_ID}/").status_code == 404
        assert WEB_MEMORY in client.get(f"/p/{WEB_ID}/").text


def test_an_unknown_project_prefix_needs_the_token_first(shared: dict[str, Any]) -> None:
    config = shared_config("proj_api", shared["dsn"]["both"], shared["schema"])
    app = create_app(
        lambda: swarmmem.open(shared["api"], config=config), port=PORT, token=TOKEN, csrf=CSRF
    )
    with TestClient(app, base_url=ORIGIN, follow_redirects=False) as client:
        for path in (f"/p/{WEB_ID}/", "/projects", f"/switch?project={WEB_ID}"):
            answer = client.get(path)
            assert answer.status_code == 401 and WEB_MEMORY not in answer.text

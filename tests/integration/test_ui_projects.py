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
import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from factories import curate_fact, make_memory, propose_fact, write_memory_config
from pg_support import require_dsn, schema_for

import swarmmem
from swarmmem.core.model.ids import stable_id
from swarmmem.core.model.records import MemoryScope

pytest.importorskip("starlette", reason="the ui extra is not installed")
pytest.importorskip("jinja2", reason="the ui extra is not installed")
psycopg = pytest.importorskip("psycopg")

from psycopg.conninfo import conninfo_to_dict, make_conninfo  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from swarmmem.adapters.storage.postgres import PostgresStore  # noqa: E402
from swarmmem.adapters.storage.postgres.rls import row_level_security  # noqa: E402
from swarmmem.ui.app import create_app  # noqa: E402

PORT = 48124
TOKEN = "test-token-" + "p" * 32
CSRF = "test-csrf-" + "q" * 32
ORIGIN = f"http://127.0.0.1:{PORT}"
API_ID = stable_id("project:proj_api")
WEB_ID = stable_id("project:proj_web")
GHOST_ID = stable_id("project:proj_ghost")
API_MEMORY = "The api server is started with make serve-api."
WEB_MEMORY = "The web bundle is built with npm run build-web."
WEB_PROPOSAL = "The web tests run in headless Firefox on every push."
API_PROPOSAL = "The api schema lives in the openapi yaml file."
GHOST_MEMORY = "A ghost identity whose rows name the web folder."


def _key(repo_id: str) -> str:
    return str(MemoryScope(type="repository", repo_id=repo_id).key)


def _role_dsn(admin: str, role: str, password: str) -> str:
    params = conninfo_to_dict(admin)
    params.update(user=role, password=password)
    return make_conninfo("", **params)


def _config(project_id: str, dsn: str, schema: str) -> dict[str, Any]:
    return {
        "enabled": True,
        "provider": "postgres",
        "projectId": project_id,
        "postgres": {"dsn": dsn, "schema": schema},
        "embeddings": {"enabled": False},
    }


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One schema, two project folders, roles ``both`` and ``one`` (dropped afterwards)."""
    admin = require_dsn()
    base = tmp_path_factory.mktemp("ui-projects")
    schema = schema_for(base)
    PostgresStore(admin, schema=schema, pool_size=1, cache=False).close()
    suffix = secrets.token_hex(4)
    roles = {"both": f"swarm_both_{suffix}", "one": f"swarm_one_{suffix}"}
    password = secrets.token_hex(12)
    with psycopg.connect(admin, autocommit=True) as conn:
        for role in roles.values():
            conn.execute(f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{password}'")
    grants = {"both": [_key(API_ID), _key(WEB_ID)], "one": [_key(API_ID), _key(GHOST_ID)]}
    try:
        for name, keys in grants.items():
            done = row_level_security(admin, schema, roles[name], keys, apply=True)
            assert done["applied"] is True
        dsn = {name: _role_dsn(admin, role, password) for name, role in roles.items()}
        api, web = base / "work" / "api", base / "work" / "web"
        # each folder's own file names the admin's connection: the viewer must never use it
        write_memory_config(api, _config("proj_api", admin, schema))
        write_memory_config(web, _config("proj_web", admin, schema))
        ids: dict[str, str] = {}
        with swarmmem.open(api, config=_config("proj_api", dsn["both"], schema)) as mem:
            ids["api_memory"] = curate_fact(mem, API_MEMORY)
            ids["api_proposal"] = propose_fact(mem, API_PROPOSAL).id
        with swarmmem.open(web, config=_config("proj_web", dsn["both"], schema)) as mem:
            ids["web_memory"] = curate_fact(mem, WEB_MEMORY)
            ids["web_proposal"] = propose_fact(mem, WEB_PROPOSAL, evidence="package.json").id
        # the admin writes a memory of a third identity that names web's folder as its root
        ghost = MemoryScope(type="repository", repo_id=GHOST_ID, repo_root=str(web))
        with PostgresStore(admin, schema=schema, pool_size=1, cache=False) as store:
            record = make_memory(GHOST_MEMORY, scope=ghost)
            store.upsert(record)
            ids["ghost_memory"] = record.id
        yield {"admin": admin, "schema": schema, "dsn": dsn, "api": api, "web": web, **ids}
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            for role in roles.values():
                conn.execute(f'DROP OWNED BY "{role}" CASCADE')
                conn.execute(f'DROP ROLE "{role}"')


@contextlib.contextmanager
def viewer_as(shared: dict[str, Any], role: str) -> Iterator[TestClient]:
    """The viewer started in ``api`` connecting as ``role``, signed in."""
    config = _config("proj_api", shared["dsn"][role], shared["schema"])
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
            shared["web"], config=_config("proj_web", shared["dsn"]["both"], shared["schema"])
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
    config = _config("proj_api", shared["admin"], shared["schema"])
    app = create_app(
        lambda: swarmmem.open(shared["api"], config=config), port=PORT, token=TOKEN, csrf=CSRF
    )
    with TestClient(app, base_url=ORIGIN, follow_redirects=False) as client:
        assert client.get(f"/?token={TOKEN}").status_code == 200
        assert f'<option value="{WEB_ID}">web' in client.get("/").text
        assert client.get(f"/p/{GHOST_ID}/").status_code == 404
        assert WEB_MEMORY in client.get(f"/p/{WEB_ID}/").text


def test_an_unknown_project_prefix_needs_the_token_first(shared: dict[str, Any]) -> None:
    config = _config("proj_api", shared["dsn"]["both"], shared["schema"])
    app = create_app(
        lambda: swarmmem.open(shared["api"], config=config), port=PORT, token=TOKEN, csrf=CSRF
    )
    with TestClient(app, base_url=ORIGIN, follow_redirects=False) as client:
        for path in (f"/p/{WEB_ID}/", "/projects", f"/switch?project={WEB_ID}"):
            answer = client.get(path)
            assert answer.status_code == 401 and WEB_MEMORY not in answer.text

"""The viewer as an ASGI application: :func:`create_app` wires the pages
(:mod:`swarmmem.ui.pages`), the static files and the :class:`~swarmmem.ui.guard.Guard` around
them, and opens the memory when the application starts.

The pages of the project the viewer started in have no prefix (``/``, ``/review``, ...); the
same pages of another project its store serves to this role are under ``/p/<id>/``
(:mod:`swarmmem.ui.projects`), ``/projects`` lists them and ``/switch`` is the picker's
target.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from swarmmem.memory import Memory
from swarmmem.ui import pages, review
from swarmmem.ui.guard import Guard
from swarmmem.ui.projects import Opener
from swarmmem.ui.viewer import HERE, Viewer, action, page

BATCH_FIELDS = review.QUEUE_LIMIT + 8
"""The fields of a batch form: a checkbox per proposal shown, the action, reason, CSRF."""


def create_app(
    open_memory: Callable[[], Memory],
    *,
    port: int,
    token: str,
    csrf: str,
    on_ready: Callable[[], None] | None = None,
    opener: Opener | None = None,
) -> Guard:
    """The viewer for the memory ``open_memory`` gives, answering only on 127.0.0.1:``port``
    (or localhost) to requests carrying ``token``; forms carry ``csrf``. ``on_ready`` runs
    once the memory is open (the server prints its address then). When its store serves
    several projects to this role, each other one is served under ``/p/<id>/`` with the
    same pages (``opener`` opens a project folder's memory; default :func:`swarmmem.open`)."""
    viewer = Viewer(open_memory, csrf=csrf, port=port, opener=opener)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        viewer.start()
        try:
            if on_ready is not None:
                on_ready()
            yield
        finally:
            viewer.stop()

    project_routes = [
        Route("/", page(pages.memories), methods=["GET"]),
        Route("/memory/{memory_id}", page(pages.memory), methods=["GET"]),
        Route("/proposal/{proposal_id}", page(pages.proposal), methods=["GET"]),
        Route("/review", page(review.review), methods=["GET"]),
        Route("/review/{proposal_id}/approve", action(review.approve), methods=["POST"]),
        Route("/review/{proposal_id}/edit", action(review.edit), methods=["POST"]),
        Route("/review/{proposal_id}/reject", action(review.reject), methods=["POST"]),
        Route("/review/{proposal_id}/merge", action(review.merge), methods=["POST"]),
        Route("/review/{proposal_id}/undo", action(review.undo), methods=["POST"]),
        Route(
            "/review-batch/preview",
            action(review.batch_preview, writes=False, max_fields=BATCH_FIELDS),
            methods=["POST"],
        ),
        Route("/review-batch", action(review.batch, max_fields=BATCH_FIELDS), methods=["POST"]),
        Route("/sessions", page(pages.sessions), methods=["GET"]),
        Route("/sessions/{session_id}", page(pages.session), methods=["GET"]),
        Route("/health", page(pages.health), methods=["GET"]),
        Route("/health/audit", action(pages.audit, writes=False), methods=["POST"]),
        Route("/health/evidence", action(pages.evidence, writes=False), methods=["POST"]),
        Route("/health/propose", action(pages.propose_updates), methods=["POST"]),
    ]
    routes = [
        *project_routes,
        # the same pages of another project the store serves to this role (404 otherwise)
        Mount("/p/{project:str}", routes=project_routes),
        Route("/projects", page(pages.projects), methods=["GET"]),
        Route("/switch", page(pages.switch), methods=["GET"]),
        Mount("/static", StaticFiles(directory=HERE / "static", follow_symlink=False)),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.viewer = viewer
    return Guard(app, port=port, token=token)

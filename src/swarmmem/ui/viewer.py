"""What every page of the viewer shares: the :class:`Viewer` (the memory, the templates, the
CSRF token), the template environment, and the wrappers that turn a handler into a ``GET``
page (:func:`page`) or a ``POST`` action (:func:`action`).

Pages are server-rendered Jinja2 templates with autoescaping on, so a stored string never
becomes markup; :func:`reveal` runs on every value a template prints, turning characters that
change a text without being seen (bidi overrides, zero-width and other format characters,
control characters) into a visible ``[U+XXXX]``. State changes are ``POST`` forms whose CSRF
token :func:`read_form` checks before anything else happens.

The :class:`~swarmmem.memory.Memory` is opened once, when the application starts, and used
from the event loop's thread only (a SQLite connection belongs to the thread that opened it):
every page is an ``async`` function calling the facade directly.
"""

from __future__ import annotations

import hmac
import re
import unicodedata
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from swarmmem.core.model.errors import (
    ConflictError,
    MemoryDisabledError,
    MemoryValidationError,
    NotFoundError,
    ScopeError,
    SwarmMemoryError,
)
from swarmmem.memory import Memory
from swarmmem.results import redact_secrets
from swarmmem.ui.guard import MAX_BODY
from swarmmem.ui.projects import Opener, Projects

HERE = Path(__file__).parent
MAX_FIELDS = 16

Page = Callable[[Request], Awaitable[Response]]
Action = Callable[[Request, dict[str, str]], Awaitable[Response]]


class Refused(Exception):
    """A request the viewer answers with ``status`` and ``message`` (an error page)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


STATUS_OF_ERROR: tuple[tuple[type[SwarmMemoryError], int], ...] = (
    (NotFoundError, 404),
    (MemoryValidationError, 400),
    (ScopeError, 400),
    (ConflictError, 409),
    (MemoryDisabledError, 503),
)


ID_PATTERN = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
"""What an id in a page's path may be: a short run of letters, digits and ``_.:-``."""


def path_id(value: str, *, prefix: str | None = None) -> str:
    """A path's id, or 404 (:data:`ID_PATTERN`, and ``prefix`` when given)."""
    if not ID_PATTERN.match(value) or (prefix is not None and not value.startswith(prefix)):
        raise Refused(404, "no such page")
    return value


def status_of(exc: SwarmMemoryError) -> int:
    """The HTTP status of a library error."""
    return next((status for kind, status in STATUS_OF_ERROR if isinstance(exc, kind)), 500)


def _visible(char: str) -> str:
    if char in "\n\t" or unicodedata.category(char) == "Zs":
        return char
    return f"[U+{ord(char):04X}]"


def reveal(value: Any) -> Any:
    """``value`` as a template prints it: a string keeps every visible character, and each
    invisible or control character (bidi controls and overrides, zero-width characters, tag
    characters, C0/C1 controls; not line breaks, tabs and spaces) becomes ``[U+XXXX]``, so a
    text cannot read differently on the page from what is stored. Markup the templates made
    themselves and non-strings pass unchanged (autoescaping then escapes the string)."""
    if isinstance(value, Markup) or not isinstance(value, str) or value.isprintable():
        return value
    return "".join(c if c.isprintable() else _visible(c) for c in value)


def score(value: Any) -> str:
    """A number with three decimals (anything else prints as nothing)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ""
    return f"{value:.3f}"


def environment() -> jinja2.Environment:
    """The template environment: package templates, autoescaping on for every template,
    :func:`reveal` on every printed value (a key a stored object lacks prints as nothing)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        finalize=reveal,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["score"] = score
    env.filters["clip"] = lambda text, n=160: (
        "" if text is None else text if len(text) <= n else text[: n - 1] + "…"
    )
    return env


class Viewer:
    """What the pages share: the memory of the project it started in (opened at startup),
    the other projects its store serves to this role (:mod:`swarmmem.ui.projects`), the
    templates, the CSRF token and the port."""

    def __init__(
        self,
        open_memory: Callable[[], Memory],
        *,
        csrf: str,
        port: int,
        opener: Opener | None = None,
    ) -> None:
        self.open_memory = open_memory
        self.csrf = csrf
        self.port = port
        self.opener = opener
        self.env = environment()
        self._mem: Memory | None = None
        self.projects: Projects | None = None

    @property
    def mem(self) -> Memory:
        """The memory of the project the viewer started in."""
        if self._mem is None:
            raise RuntimeError("the viewer's memory is not open (the application has not started)")
        return self._mem

    def start(self) -> None:
        """Open the memory (from the event loop's thread) and the store with it, then the
        other projects the store serves to this role, if any."""
        self._mem = self.open_memory()
        self._mem.require_enabled()
        _ = self._mem.read_only  # opens the store now: a failure stops the start
        self.projects = Projects(self._mem, opener=self.opener)
        self.projects.discover()

    def stop(self) -> None:
        if self.projects is not None:
            self.projects.close()
            self.projects = None
        if self._mem is not None:
            self._mem.close()
            self._mem = None

    def bind(self, project_id: str | None) -> View:
        """The view of one project: ``None`` is the project the viewer started in (paths
        without a prefix); another is one the store serves to this role (``/p/<id>/...``),
        refused (404) unless it was discovered and opened at the start."""
        if project_id is None:
            return View(self, self.mem, base="", project_id=None)
        mem = self.projects.memory(project_id) if self.projects is not None else None
        if mem is None:
            raise Refused(404, "no such project (or this database role may not see it)")
        return View(self, mem, base=f"/p/{project_id}", project_id=project_id)

    def render(self, template: str, *, status: int = 200, **context: Any) -> HTMLResponse:
        """``template`` rendered for the project the viewer started in."""
        return View(self, self._mem, base="", project_id=None).render(
            template, status=status, **context
        )

    def error(self, status: int, message: str) -> HTMLResponse:
        """The error page (the message redacted of likely secrets)."""
        return self.render(
            "error.html", status=status, title="Error", status_code=status,
            message=redact_secrets(message),
        )  # fmt: skip


class View:
    """The viewer bound to one project for one request: its memory, the prefix of its
    paths (``base``: empty for the project the viewer started in) and the pages' rendering
    (every page shows the project and, when the store serves several, the picker)."""

    def __init__(
        self, viewer: Viewer, mem: Memory | None, *, base: str, project_id: str | None
    ) -> None:
        self.viewer = viewer
        self._mem = mem
        self.base = base
        self.project_id = project_id
        self.csrf = viewer.csrf

    @property
    def mem(self) -> Memory:
        if self._mem is None:
            raise RuntimeError("the viewer's memory is not open (the application has not started)")
        return self._mem

    def render(self, template: str, *, status: int = 200, **context: Any) -> HTMLResponse:
        """``template`` rendered with ``context`` and what every page shows."""
        mem = self._mem
        projects = self.viewer.projects
        listed = projects.listed if projects is not None and projects.shared else []
        current = self.project_id or (projects.home_id if projects is not None else None)
        shared = {
            "project": mem.root.name if mem is not None else "",
            "read_only": bool(mem is not None and mem.enabled and mem.read_only),
            "csrf": self.csrf,
            "base": self.base,
            "projects": [p for p in listed if p.reason is None],
            "current_project": current,
        }
        body = self.viewer.env.get_template(template).render(**shared, **context)
        return HTMLResponse(body, status_code=status)

    def error(self, status: int, message: str) -> HTMLResponse:
        """The error page (the message redacted of likely secrets)."""
        return self.render(
            "error.html", status=status, title="Error", status_code=status,
            message=redact_secrets(message),
        )  # fmt: skip


def app_viewer(request: Request) -> Viewer:
    """The application's :class:`Viewer`."""
    viewer: Viewer = request.app.state.viewer
    return viewer


def viewer_of(request: Request) -> View:
    """The viewer bound to the request's project (``/p/<id>/...``; none: the project the
    viewer started in). An unknown project or one this role may not see: 404."""
    project = request.path_params.get("project")
    return app_viewer(request).bind(None if project is None else str(project))


def page(handler: Page) -> Page:
    """A ``GET`` page: a library error or a refusal becomes the error page."""

    async def run(request: Request) -> Response:
        try:
            view = viewer_of(request)
        except Refused as exc:
            return app_viewer(request).error(exc.status, exc.message)
        try:
            return await handler(request)
        except Refused as exc:
            return view.error(exc.status, exc.message)
        except SwarmMemoryError as exc:
            return view.error(status_of(exc), str(exc))

    return run


async def read_form(request: Request, max_fields: int = MAX_FIELDS) -> dict[str, str]:
    """The posted form's text fields (at most ``max_fields``), after its CSRF token matched
    this viewer's (403 otherwise: nothing is done)."""
    form = await request.form(max_files=0, max_fields=max_fields, max_part_size=MAX_BODY)
    fields = {key: value for key, value in form.items() if isinstance(value, str)}
    token = fields.get("csrf", "")
    expected = app_viewer(request).csrf
    if not hmac.compare_digest(token.encode("utf-8", "replace"), expected.encode("utf-8")):
        raise Refused(403, "refused: the form's CSRF token is missing or wrong (reload the page)")
    return fields


def action(handler: Action, *, writes: bool = True, max_fields: int = MAX_FIELDS) -> Page:
    """A ``POST`` action: the form (at most ``max_fields`` fields) and its CSRF token are
    checked first, then the project (an unknown one: 404), a store opened read-only refuses
    a writing action (409), and errors become the error page."""

    async def run(request: Request) -> Response:
        viewer = app_viewer(request)
        try:
            form = await read_form(request, max_fields)
            view = viewer_of(request)
        except Refused as exc:
            return viewer.error(exc.status, exc.message)
        try:
            if writes and view.mem.read_only:
                raise Refused(409, "the memory store is read-only: nothing can be decided here")
            return await handler(request, form)
        except Refused as exc:
            return view.error(exc.status, exc.message)
        except SwarmMemoryError as exc:
            return view.error(status_of(exc), str(exc))

    run.writes = writes  # type: ignore[attr-defined]
    return run

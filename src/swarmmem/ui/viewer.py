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
    """What the pages share: the memory (opened at startup), the templates, the CSRF token
    and the port."""

    def __init__(self, open_memory: Callable[[], Memory], *, csrf: str, port: int) -> None:
        self.open_memory = open_memory
        self.csrf = csrf
        self.port = port
        self.env = environment()
        self._mem: Memory | None = None

    @property
    def mem(self) -> Memory:
        if self._mem is None:
            raise RuntimeError("the viewer's memory is not open (the application has not started)")
        return self._mem

    def start(self) -> None:
        """Open the memory (from the event loop's thread) and the store with it."""
        self._mem = self.open_memory()
        self._mem.require_enabled()
        _ = self._mem.read_only  # opens the store now: a failure stops the start

    def stop(self) -> None:
        if self._mem is not None:
            self._mem.close()
            self._mem = None

    def render(self, template: str, *, status: int = 200, **context: Any) -> HTMLResponse:
        """``template`` rendered with ``context`` and what every page shows."""
        mem = self._mem
        shared = {
            "project": mem.root.name if mem is not None else "",
            "read_only": bool(mem is not None and mem.enabled and mem.read_only),
            "csrf": self.csrf,
        }
        body = self.env.get_template(template).render(**shared, **context)
        return HTMLResponse(body, status_code=status)

    def error(self, status: int, message: str) -> HTMLResponse:
        """The error page (the message redacted of likely secrets)."""
        return self.render(
            "error.html", status=status, title="Error", status_code=status,
            message=redact_secrets(message),
        )  # fmt: skip


def viewer_of(request: Request) -> Viewer:
    viewer: Viewer = request.app.state.viewer
    return viewer


def page(handler: Page) -> Page:
    """A ``GET`` page: a library error or a refusal becomes the error page."""

    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except Refused as exc:
            return viewer_of(request).error(exc.status, exc.message)
        except SwarmMemoryError as exc:
            return viewer_of(request).error(status_of(exc), str(exc))

    return run


async def read_form(request: Request, max_fields: int = MAX_FIELDS) -> dict[str, str]:
    """The posted form's text fields (at most ``max_fields``), after its CSRF token matched
    this viewer's (403 otherwise: nothing is done)."""
    form = await request.form(max_files=0, max_fields=max_fields, max_part_size=MAX_BODY)
    fields = {key: value for key, value in form.items() if isinstance(value, str)}
    token = fields.get("csrf", "")
    expected = viewer_of(request).csrf
    if not hmac.compare_digest(token.encode("utf-8", "replace"), expected.encode("utf-8")):
        raise Refused(403, "refused: the form's CSRF token is missing or wrong (reload the page)")
    return fields


def action(handler: Action, *, writes: bool = True, max_fields: int = MAX_FIELDS) -> Page:
    """A ``POST`` action: the form (at most ``max_fields`` fields) and its CSRF token are
    checked first, a store opened read-only refuses a writing action (409), and errors
    become the error page."""

    async def run(request: Request) -> Response:
        viewer = viewer_of(request)
        try:
            form = await read_form(request, max_fields)
            if writes and viewer.mem.read_only:
                raise Refused(409, "the memory store is read-only: nothing can be decided here")
            return await handler(request, form)
        except Refused as exc:
            return viewer.error(exc.status, exc.message)
        except SwarmMemoryError as exc:
            return viewer.error(status_of(exc), str(exc))

    run.writes = writes  # type: ignore[attr-defined]
    return run

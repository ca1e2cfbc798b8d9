"""The viewer's gate: every request passes :class:`Guard` before any page sees it.

In order, for each HTTP request:

1. **Host**: the ``Host`` header must be ``127.0.0.1:PORT`` or ``localhost:PORT`` (the port
   the viewer listens on). A page of another site whose name was re-pointed at 127.0.0.1 (DNS
   rebinding) sends its own name, and is refused (403).
2. **Origin**: an ``Origin`` header must be this viewer's own (``http://127.0.0.1:PORT`` or
   ``http://localhost:PORT``), and a ``POST`` must carry one (browsers send it with every
   ``POST``): a form on another site, or another port of this machine, is refused (403).
3. **Method**: only ``GET``, ``HEAD`` and ``POST``; a ``POST`` body is a form of at most
   :data:`MAX_BODY` bytes with a ``Content-Length``.
4. **Token**: the random per-start token, first as ``?token=`` of the URL the viewer printed
   (answered with a page that sets it as an ``HttpOnly``, ``SameSite=Strict`` cookie and moves
   on to the same page without the token in its address), then as that cookie. Without it:
   401; with a wrong one: 403.

The CSRF token of state-changing requests is checked where the form is read
(:func:`swarmmem.ui.app.read_form`), since only the page's handler reads the body.

Every response, refusals included, carries :data:`SECURITY_HEADERS`: a strict Content
Security Policy (no script at all: the pages are plain forms), no framing, no referrer, no
caching, no MIME sniffing.
"""

from __future__ import annotations

import hmac
import html
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY = 64 * 1024
"""The largest request body accepted (a review form is far smaller)."""
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'none'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; "
    "base-uri 'none'; object-src 'none'"
)
SECURITY_HEADERS: tuple[tuple[str, str], ...] = (
    ("content-security-policy", CONTENT_SECURITY_POLICY),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("referrer-policy", "same-origin"),
    ("cache-control", "no-store"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cross-origin-resource-policy", "same-origin"),
    ("permissions-policy", "camera=(), microphone=(), geolocation=(), clipboard-read=()"),
)
"""Headers added to every response."""
ALLOWED_METHODS = ("GET", "HEAD", "POST")


def cookie_name(port: int) -> str:
    """The token cookie's name: one per port, since a cookie of 127.0.0.1 reaches every port
    (two viewers of two projects must not overwrite each other's)."""
    return f"swarmmem_ui_{port}"


class Guard:
    """ASGI middleware admitting only this viewer's own, signed-in requests (see the module
    docstring)."""

    def __init__(self, app: App, *, port: int, token: str) -> None:
        self.app = app
        self.port = port
        self.token = token
        self.cookie = cookie_name(port)
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{host}" for host in self.hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websockets
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        send = _with_headers(send)
        refusal = self.refusal(scope)
        if refusal is not None:
            status, message = refusal
            await _plain(send, status, message)
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if "token" in query and scope["method"] == "GET":
            if not _same(query["token"], self.token):
                await _plain(
                    send,
                    403,
                    "this link's token is not this viewer's (it changes "
                    "each time `swarmmem ui` starts: use the link it printed last)",
                )
                return
            await self.sign_in(send, scope["path"], query)
            return
        given = _cookies(scope).get(self.cookie)
        if given is None:
            await _plain(send, 401, "sign in with the link `swarmmem ui` printed")
            return
        if not _same(given, self.token):
            await _plain(
                send,
                403,
                "this cookie is not this viewer's: use the link `swarmmem ui` printed last",
            )
            return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """Why a request is refused before its token is looked at, or ``None``."""
        headers = _headers(scope)
        if headers.get("host") not in self.hosts:
            return 403, f"refused: the Host header must be 127.0.0.1:{self.port} or localhost"
        origin = headers.get("origin")
        method = scope["method"]
        if origin is not None and origin not in self.origins:
            return 403, "refused: a request from another site or port"
        if method not in ALLOWED_METHODS:
            return 405, "only GET, HEAD and POST"
        if method == "POST":
            if origin is None:
                return 403, "refused: a POST without an Origin header"
            if headers.get("sec-fetch-site") not in (None, "same-origin"):
                return 403, "refused: a POST from another site"
            length = headers.get("content-length")
            if length is None or not length.isdigit():
                return 411, "a POST needs a Content-Length"
            if int(length) > MAX_BODY:
                return 413, "the form is too large"
            kind = headers.get("content-type", "").split(";")[0].strip().lower()
            if kind != "application/x-www-form-urlencoded":
                return 415, "a POST must be a URL-encoded form"
        return None

    async def sign_in(self, send: Send, path: str, query: dict[str, str]) -> None:
        """Set the token cookie and continue to ``path`` without the token: a page that
        refreshes itself, so the next request comes from this site (a ``SameSite=Strict``
        cookie is not sent along a redirect that a link from elsewhere started)."""
        rest = {k: v for k, v in query.items() if k != "token"}
        target = "/" + path.lstrip("/")  # never "//host": a same-site path only
        if rest:
            target += "?" + urlencode(rest)
        link = html.escape(target, quote=True)
        body = (
            "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta http-equiv='refresh' content='0; url={link}'>"
            "<title>swarmmem</title></head>"
            f"<body><p>Signed in. <a href='{link}'>Continue to swarmmem</a>.</p></body></html>"
        ).encode()
        cookie = f"{self.cookie}={self.token}; HttpOnly; SameSite=Strict; Path=/"
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-type", b"text/html; charset=utf-8"),
                    (b"content-length", str(len(body)).encode()),
                    (b"set-cookie", cookie.encode("latin-1")),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _same(given: str, expected: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("utf-8"))


def _headers(scope: Scope) -> dict[str, str]:
    """The request's headers, lower-case names; a repeated header keeps its first value."""
    out: dict[str, str] = {}
    for name, value in scope.get("headers", ()):
        out.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    return out


def _cookies(scope: Scope) -> dict[str, str]:
    """The request's cookies (``name=value`` pairs split on ``;``; the first of a name
    counts). Parsed by hand: other sites' cookies of 127.0.0.1 may hold anything."""
    out: dict[str, str] = {}
    for name, value in scope.get("headers", ()):
        if name.lower() != b"cookie":
            continue
        for pair in value.decode("latin-1").split(";"):
            key, eq, val = pair.strip().partition("=")
            if eq:
                out.setdefault(key.strip(), val.strip())
    return out


def _with_headers(send: Send) -> Send:
    """``send`` adding :data:`SECURITY_HEADERS` to the response start."""

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [
                (k, v)
                for k, v in message.get("headers", ())
                if k.decode("latin-1").lower() not in dict(SECURITY_HEADERS)
            ]
            headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS]
            message = {**message, "headers": headers}
        await send(message)

    return wrapped


async def _plain(send: Send, status: int, message: str) -> None:
    body = (message + "\n").encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})

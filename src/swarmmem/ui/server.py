"""Serving the viewer: a socket on 127.0.0.1 only, a fresh token per start, and the browser
opened through a private file rather than a command line.

:class:`UiServer` binds ``127.0.0.1:PORT`` (port 0: a free one the system picks) before
anything else, draws a random token and CSRF token (:func:`secrets.token_urlsafe`) and runs the
application (:func:`swarmmem.ui.app.create_app`) under uvicorn with its access log off (the
sign-in URL carries the token). :func:`open_browser` writes a small page that refreshes to the
sign-in URL into a new private folder (0700, the file 0600, created exclusively without
following links) and hands the browser that file's path: the token never appears on a command
line another user could read (``ps``). The folder is removed a minute later and when the
viewer stops.
"""

from __future__ import annotations

import html
import os
import secrets
import shutil
import socket
import sys
import tempfile
import threading
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import Any

from swarmmem.memory import Memory

HOST = "127.0.0.1"
REDIRECT_NAME = "open-swarmmem.html"
REDIRECT_LIFETIME = 60.0
"""Seconds the browser has to read the redirect file before it is removed."""


class UiServer:
    """The viewer of one memory on ``127.0.0.1:port`` (``port`` 0: a free port)."""

    def __init__(self, open_memory: Callable[[], Memory], *, port: int = 0) -> None:
        self.open_memory = open_memory
        self.token = secrets.token_urlsafe(32)
        self.csrf = secrets.token_urlsafe(32)
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            self.socket.bind((HOST, port))
            self.socket.listen(64)
        except OSError:
            self.socket.close()
            raise
        self.port: int = self.socket.getsockname()[1]
        self._server: Any = None
        self._cleanup: list[Path] = []

    @property
    def url(self) -> str:
        """The sign-in address: ``http://127.0.0.1:PORT/?token=...``."""
        return f"http://{HOST}:{self.port}/?token={self.token}"

    def run(self, on_ready: Callable[[], None] | None = None) -> None:
        """Serve until stopped (Ctrl-C, or :meth:`stop`); ``on_ready`` runs once the memory
        is open and requests are answered. The memory is opened here, in the thread that
        serves (the SQLite connection stays in it)."""
        import uvicorn

        from swarmmem.ui.app import create_app

        app = create_app(
            self.open_memory, port=self.port, token=self.token, csrf=self.csrf, on_ready=on_ready
        )
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,  # request lines would print the sign-in token
            server_header=False,
            proxy_headers=False,
            lifespan="on",
            ws="none",
        )
        self._server = uvicorn.Server(config)
        try:
            self._server.run(sockets=[self.socket])
        except KeyboardInterrupt:  # uvicorn raises the Ctrl-C again once it has shut down
            pass
        finally:
            self.close()

    def stop(self) -> None:
        """Ask the server to stop (from any thread)."""
        if self._server is not None:
            self._server.should_exit = True

    def close(self) -> None:
        """Close the socket and remove the browser's redirect folders."""
        self.socket.close()
        for folder in self._cleanup:
            shutil.rmtree(folder, ignore_errors=True)
        self._cleanup.clear()

    def open_browser(self) -> bool:
        """Open the viewer in the person's browser (see :func:`open_browser`)."""
        folder = open_browser(self.url)
        if folder is None:
            return False
        self._cleanup.append(folder)
        timer = threading.Timer(REDIRECT_LIFETIME, shutil.rmtree, (folder, True))
        timer.daemon = True
        timer.start()
        return True


def redirect_page(url: str) -> str:
    """A page that moves the browser on to ``url`` at once."""
    link = html.escape(url, quote=True)
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='referrer' content='no-referrer'>"
        f"<meta http-equiv='refresh' content='0; url={link}'><title>swarmmem</title></head>"
        f"<body><p><a href='{link}'>Open swarmmem</a></p></body></html>\n"
    )


def write_redirect(url: str) -> Path:
    """A new private folder (0700) holding a 0600 page that refreshes to ``url``; the file is
    created exclusively and never through a link."""
    folder = Path(tempfile.mkdtemp(prefix="swarmmem-ui-"))  # 0700, a fresh name
    path = folder / REDIRECT_NAME
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o600)
    try:
        os.write(fd, redirect_page(url).encode("utf-8"))
    finally:
        os.close(fd)
    return path


def has_graphical_browser() -> bool:
    """A graphical browser can be expected: macOS, Windows, or a display to draw on (without
    one, Python would start a text browser in the terminal the viewer prints to)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_browser(url: str, opener: Callable[[str], bool] | None = None) -> Path | None:
    """Open ``url`` in the browser through a private redirect file (its folder returned for
    removal), so that only the file's path reaches the browser's command line; ``None`` when
    no graphical browser can be expected or none opened."""
    if opener is None:
        if not has_graphical_browser():
            return None
        opener = webbrowser.open
    path = write_redirect(url)
    try:
        opened = opener(path.as_uri())
    except Exception:  # webbrowser errors: the printed URL still works
        opened = False
    if not opened:
        shutil.rmtree(path.parent, ignore_errors=True)
        return None
    return path.parent

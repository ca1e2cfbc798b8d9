"""The project's hook helper: one small background process that keeps the library (and the
embedding model, when embeddings are on) loaded so a prompt hook answers in milliseconds.

``python -m swarmmem.hooks.daemon ROOT`` is started by a hook (:mod:`swarmmem.hooks.client`);
nobody needs to start or stop it. It

- serves only the project at ``ROOT``, on a Unix socket only its user can open (``.swarm/
  hookd.sock``, mode 0600, in a folder it makes 0700), and answers a request for any other
  root or library version, or from a process of another user (``SO_PEERCRED``), with a
  refusal (the hook then answers by itself); whatever a checkout left at the socket's path
  (a file, a link) is removed, never followed;
- runs alone: a second helper for the same project exits at once (a lock on
  ``.swarm/hookd.lock``);
- opens the project's memory afresh for every request, so configuration changes and writes
  by other processes are seen at once (an invalid configuration included: the hook's notes
  go back with its answer, for the hook to print); only the loaded model outlives a request;
- answers one request at a time, in a worker thread; a request that comes while another is
  being answered is refused at once as ``busy`` (its hook answers by itself), so one slow
  request never makes another session's hook wait;
- exits after ``SWARMMEM_HOOK_HELPER_IDLE`` seconds without a request (default 600), when the
  project's ``.swarm`` folder goes away, or when its socket is taken over; it removes its socket
  when it exits. Nothing of it outlives the project.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from swarmmem._version import __version__
from swarmmem.hooks import hosts
from swarmmem.hooks.client import peer_uid, socket_path

MAX_REQUEST = 9 << 20
POLL_SECONDS = 2.0


def idle_limit() -> float:
    try:
        return max(1.0, float(os.environ.get("SWARMMEM_HOOK_HELPER_IDLE", "600")))
    except ValueError:
        return 600.0


def _private_folder(folder: Path) -> None:
    """Make ``folder`` (the socket's) private to this user: created 0700 when missing (no
    follow, no reuse of what another user made), else it must be a folder of this user (not a
    link), whose mode is then set to 0700."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        if os.fstat(fd).st_uid != os.getuid():
            raise PermissionError(f"{folder} is not a folder of this user")
        os.fchmod(fd, 0o700)
    finally:
        os.close(fd)


def _read_request(conn: socket.socket) -> dict[str, Any] | None:
    chunks: list[bytes] = []
    size = 0
    while chunk := conn.recv(65536):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_REQUEST:
            return None
    try:
        request = json.loads(b"".join(chunks))
    except ValueError:
        return None
    return request if isinstance(request, dict) else None


def answer(root: Path, request: dict[str, Any] | None) -> dict[str, Any]:
    """The reply to one request (see the module docstring for the refusals)."""
    if request is None:
        return {"ok": False, "reason": "bad request"}
    if request.get("version") != __version__:
        return {"ok": False, "reason": "version"}
    if request.get("root") != str(root):
        return {"ok": False, "reason": "another project"}
    host, event, payload = request.get("host"), request.get("event"), request.get("payload")
    if not (isinstance(host, str) and isinstance(event, str) and isinstance(payload, str)):
        return {"ok": False, "reason": "bad request"}
    from swarmmem.hooks.runner import run_hook

    hook = hosts.parse(host, event, payload)
    with contextlib.redirect_stderr(io.StringIO()) as note:  # one request at a time
        stdout = run_hook(root, hook)
    return {"ok": True, "stdout": stdout, "stderr": note.getvalue()}


def warm_up(root: Path) -> None:
    """Load what the first request would (the library, the model when embeddings are on);
    an invalid configuration loads nothing (each request reads it afresh and says why)."""
    import swarmmem
    from swarmmem.core.model.errors import ConfigError

    try:
        mem = swarmmem.open(root)
    except ConfigError:
        return
    with mem:
        mem.warm_up()


def serve(root: Path) -> int:
    """Serve ``root`` until idle (see the module docstring); 0, or 1 if another helper runs."""
    swarm = root / ".swarm"
    if not swarm.is_dir() or swarm.is_symlink():
        return 1
    lock_fd = os.open(swarm / "hookd.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock_fd)
        return 1
    path = socket_path(root)
    _private_folder(path.parent)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a stale socket, or what a checkout shipped there (a link, a file)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mine = -1
    worker = _Worker(root)
    try:
        old_mask = os.umask(0o177)
        try:
            server.bind(os.fsencode(path))
        finally:
            os.umask(old_mask)
        server.listen(32)
        server.settimeout(POLL_SECONDS)
        mine = os.stat(path).st_ino
        warm_up(root)
        limit = idle_limit()
        while not worker.upgraded:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                gone = not swarm.is_dir() or not path.exists() or os.stat(path).st_ino != mine
                if gone or worker.idle_for() > limit:
                    return 0
                continue
            worker.take(conn)
        return 0  # the library was upgraded: the next hook starts a new helper
    finally:
        server.close()
        worker.finish()
        try:
            if path.exists() and os.stat(path).st_ino == mine:
                path.unlink()
        except OSError:
            pass
        os.close(lock_fd)


class _Worker:
    """Answers the requests of one helper, one at a time, each in its own thread; a request
    that comes while one is being answered is refused as ``busy`` without waiting."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.busy = threading.Lock()
        self.last = time.monotonic()
        self.thread: threading.Thread | None = None
        #: a request came from another library version: the helper leaves
        self.upgraded = False

    def idle_for(self) -> float:
        """Seconds since the last request ended (0 while one is answered)."""
        return 0.0 if self.busy.locked() else time.monotonic() - self.last

    def take(self, conn: socket.socket) -> None:
        """Answer ``conn`` in a new thread, or refuse it at once when busy."""
        if not self.busy.acquire(blocking=False):
            with conn:
                conn.settimeout(1)
                with contextlib.suppress(OSError):
                    conn.sendall(json.dumps({"ok": False, "reason": "busy"}).encode("utf-8"))
            return
        self.thread = threading.Thread(target=self._answer, args=(conn,), daemon=True)
        self.thread.start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            reply: dict[str, Any] = {"ok": False, "reason": "no answer"}
            try:
                conn.settimeout(30)
                if peer_uid(conn) not in (None, os.getuid()):
                    reply = {"ok": False, "reason": "another user"}  # its request is not read
                else:
                    reply = answer(self.root, _read_request(conn))
            except Exception as exc:  # a request never ends the helper
                reply = {"ok": False, "reason": f"{type(exc).__name__}: {exc}"}
            finally:
                # free before the reply goes out: a hook that sends its next request as soon
                # as it reads this one's answer must not find the helper still busy
                self.upgraded = self.upgraded or reply.get("reason") == "version"
                self.last = time.monotonic()
                self.busy.release()
            with contextlib.suppress(OSError):
                conn.sendall(json.dumps(reply).encode("utf-8"))

    def finish(self) -> None:
        """Let a request being answered end (at most its 30 s socket timeout and more)."""
        if self.thread is not None:
            self.thread.join(timeout=60)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m swarmmem.hooks.daemon PROJECT_ROOT", file=sys.stderr)
        return 2
    return serve(Path(os.path.abspath(args[0])))


if __name__ == "__main__":
    sys.exit(main())

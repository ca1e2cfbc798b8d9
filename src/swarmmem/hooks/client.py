"""``swarmmem hook <host> <event>``: the narrow entry point a host runs on every prompt.

Only the standard library and :mod:`swarmmem.hooks.hosts` / :mod:`swarmmem.project` are
imported until the answer must be computed here. The answer comes from the project's helper
process (:mod:`swarmmem.hooks.daemon`, which keeps the libraries and the embedding model
loaded) when one is running, for every hook of a session (brief, prompts, the proposals read
at stop and session end); otherwise this process starts the helper first, so it warms up for
the hooks to come (a one-prompt session's prompt included), then computes the answer itself
(:func:`run_in_process`). Either way the
host gets its documented output and exit code 0: a memory failure never blocks the person.

``SWARMMEM_HOOK_HELPER=0`` turns the helper off (every hook computes its own answer).

The checkout is hostile: the helper runs with an isolated ``sys.path`` (``python -I``), so a
``swarmmem.py`` or ``swarmmem/`` shipped in the project is never imported; and the hook sends
a prompt only to a socket of this user (not a link) in a folder only this user can open (not a
link), whose listening process runs as this user (``SO_PEERCRED``, where the system has it).
"""

from __future__ import annotations

import json
import os
import socket
import stat
import struct
import sys
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from swarmmem._version import __version__
from swarmmem.hooks import hosts
from swarmmem.project import CONFIG_RELATIVE_PATH, find_root, read_small_file

MAX_STDIN = 8 << 20
"""Stdin beyond this many bytes is not read (the payload then counts as empty)."""
HELPER_TIMEOUT = 25.0
"""Seconds the hook waits for the helper's answer (hosts allow 60 s by default)."""


def socket_path(root: Path) -> Path:
    """Where the helper of the project at ``root`` listens: ``.swarm/hookd.sock``, or, when
    that path is too long for a Unix socket, a per-user folder under the temporary folder."""
    inside = root / ".swarm" / "hookd.sock"
    if len(os.fsencode(inside)) < 100:
        return inside
    import hashlib
    import tempfile

    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:24]
    return Path(tempfile.gettempdir()) / f"swarmmem-{os.getuid()}" / f"{digest}.sock"


def memory_enabled(root: Path) -> bool | None:
    """``memory.enabled`` of the project's configuration file, read without the library: a
    missing file means disabled, a file that cannot be read as JSON ``None`` (the library then
    says what is wrong with it)."""
    try:
        data = json.loads(read_small_file(root / CONFIG_RELATIVE_PATH))
    except FileNotFoundError:
        return False
    except (OSError, ValueError, RecursionError):
        return None
    section = data.get("memory") if isinstance(data, dict) else None
    return isinstance(section, dict) and section.get("enabled") is True


def private_socket(path: Path) -> bool:
    """Whether ``path`` is a socket of this user in a folder of this user that nobody else
    can open, neither of them a symbolic link (``lstat``)."""
    uid = os.getuid()
    try:
        folder, sock = os.lstat(path.parent), os.lstat(path)
    except OSError:
        return False
    return (
        stat.S_ISDIR(folder.st_mode)
        and folder.st_uid == uid
        and not folder.st_mode & 0o077
        and stat.S_ISSOCK(sock.st_mode)
        and sock.st_uid == uid
    )


def peer_uid(conn: socket.socket) -> int | None:
    """The user id of the process at the other end of the Unix socket ``conn`` (``None``
    where the system does not tell: ``SO_PEERCRED`` is Linux's)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    pid_uid_gid = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    return int(struct.unpack("3i", pid_uid_gid)[1])


def helper_request(root: Path, host: str, event: str, payload: str) -> dict[str, Any]:
    """The request that asks the helper of ``root`` to answer one hook call (``payload``: the
    host's JSON as it came); the helper refuses another library version's."""
    return {
        "version": __version__,
        "root": str(root),
        "host": host,
        "event": event,
        "payload": payload,
    }


def ask_helper(root: Path, request: dict[str, Any]) -> str | None:
    """The helper's answer to ``request``, or ``None`` (no helper, it did not answer, or its
    socket or process is not safely this user's: see the module docstring)."""
    path = socket_path(root)
    if not private_socket(path):
        return None
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.settimeout(0.5)
        client.connect(os.fsencode(path))
        if peer_uid(client) not in (None, os.getuid()):
            return None
        client.settimeout(HELPER_TIMEOUT)
        client.sendall(json.dumps(request).encode("utf-8") + b"\n")
        client.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := client.recv(65536):
            chunks.append(chunk)
        answer = json.loads(b"".join(chunks))
    except (OSError, ValueError):
        return None
    finally:
        client.close()
    if isinstance(answer, dict) and answer.get("ok") is True:
        stdout, note = answer.get("stdout"), answer.get("stderr")
        if isinstance(note, str) and note:
            sys.stderr.write(note)  # what the helper had to say goes where the host shows it
        return stdout if isinstance(stdout, str) else None
    return None


def helper_command(root: Path) -> list[str]:
    """The helper's command line: ``python -I`` (isolated: neither the working directory nor
    ``PYTHONPATH`` comes first on ``sys.path``), so nothing of the project is imported."""
    return [sys.executable, "-I", "-m", "swarmmem.hooks.daemon", str(root)]


def start_helper(root: Path) -> None:
    """Start the project's helper in the background (it exits at once if one runs)."""
    import subprocess

    try:
        subprocess.Popen(
            helper_command(root),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            cwd=str(root),
        )
    except OSError as exc:
        print(f"swarmmem hook: the helper did not start: {exc}", file=sys.stderr)


def run_in_process(root: Path, hook: hosts.HookInput, config: str | None) -> str:
    """Compute the answer here (imports the library)."""
    from swarmmem.hooks.runner import run_hook

    return run_hook(root, hook, config=config)


def helper_enabled() -> bool:
    return os.environ.get("SWARMMEM_HOOK_HELPER", "1") != "0"


def run(
    host: str,
    event: str,
    *,
    root: str | None = None,
    config: str | None = None,
    stdin: BinaryIO | None = None,
    stdout: TextIO | None = None,
) -> int:
    """Answer one hook call: read the host's JSON, write its output; the exit code (0, or 1
    for an unknown host or event, which every host treats as a non-blocking error)."""
    out = stdout or sys.stdout
    try:
        kind = hosts.event_kind(host, event)
    except hosts.HookUsageError as exc:
        print(f"swarmmem hook: {exc}", file=sys.stderr)
        return 1
    try:
        raw = (stdin or sys.stdin.buffer).read(MAX_STDIN + 1)
        hook = hosts.parse(host, event, raw if len(raw) <= MAX_STDIN else b"")
        project = Path(os.path.abspath(root)) if root else find_root(hook.cwd or os.getcwd())
        if config is None and memory_enabled(project) is False:
            out.write(hosts.empty_output(host, kind))
            return 0
        # every hook of a session goes to the project's helper (the brief, each prompt, the
        # proposals read at stop and session end), which keeps the library and model warm
        wants_helper = config is None and helper_enabled()
        answer = None
        if wants_helper:
            request = helper_request(project, host, event, raw.decode("utf-8", "replace"))
            answer = ask_helper(project, request)
        if answer is None:
            if wants_helper:  # started first: it warms up while this hook answers itself
                start_helper(project)
            answer = run_in_process(project, hook, config)
        out.write(answer)
    except Exception as exc:  # never block the person's work
        print(f"swarmmem hook {host} {event}: {type(exc).__name__}: {exc}", file=sys.stderr)
        out.write(hosts.empty_output(host, kind))
    out.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    """``[--root DIR] [--config FILE] hook HOST EVENT`` (what :mod:`swarmmem._entry` passes)."""
    args = list(sys.argv[1:] if argv is None else argv)
    options: dict[str, str] = {}
    while args and args[0] in ("--root", "--config") and len(args) > 1:
        options[args[0][2:]] = args[1]
        args = args[2:]
    if args[:1] == ["hook"]:
        args = args[1:]
    if len(args) != 2:
        print("usage: swarmmem hook HOST EVENT", file=sys.stderr)
        return 1
    return run(args[0], args[1], root=options.get("root"), config=options.get("config"))

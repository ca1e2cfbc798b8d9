"""Finding the project a command, a hook or the MCP server works on.

A project is the nearest folder, walking up from the working directory, that holds the
configuration file ``.opencode/opencode-swarm.json``; failing that, the top level of the git
work tree around it (the nearest folder holding ``.git``, a folder or a worktree's file);
failing that, the working directory itself. An explicit ``--root`` always wins.

On a shared machine a parent folder may belong to someone else, so only folders of this user
(or root) count: the walk stops at a folder every user can write to (``/tmp``, unless it is
the user's own with the sticky bit), passes over folders of other users, and refuses a
configuration file found in one of them, or one that is itself another user's
(:class:`~swarmmem.core.model.errors.UntrustedPathError`).

Only the standard library is imported: the hook entry point runs this on every prompt.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NoReturn

CONFIG_RELATIVE_PATH = Path(".opencode") / "opencode-swarm.json"
"""Where a project keeps its configuration (the ``memory`` section), relative to its root."""
MAX_CONFIG_BYTES = 1 << 20
"""A configuration file larger than this is refused."""


def read_small_file(path: str | os.PathLike[str], max_bytes: int = MAX_CONFIG_BYTES) -> bytes:
    """The bytes of the regular file at ``path``, at most ``max_bytes`` of them.

    A FIFO, a device (a link to ``/dev/zero`` included) or a larger file is refused with a
    :class:`ValueError` saying so, without blocking or reading it whole; a missing or
    unreadable file raises :class:`OSError`.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ValueError("it is not a regular file")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValueError(f"it is larger than {max_bytes} bytes")
    return data


def untrusted(info: os.stat_result) -> str | None:
    """Why a folder or file with ``info`` cannot belong to this user's project, else ``None``:
    "writable by every user" (a folder of the user's own with the sticky bit excepted) or
    "owned by another user" (root counts as the user)."""
    uid = os.getuid()
    if info.st_mode & stat.S_IWOTH and not (info.st_mode & stat.S_ISVTX and info.st_uid == uid):
        return "writable by every user"
    if info.st_uid not in (uid, 0):
        return f"owned by another user (uid {info.st_uid})"
    return None


def _refuse(path: Path, reason: str) -> NoReturn:
    from swarmmem.core.model.errors import UntrustedPathError

    raise UntrustedPathError(
        f"refusing the swarmmem configuration {path}: {reason}; a project must be a folder of "
        "yours (or root's) that other users cannot write to (or pass --root)"
    )


def _folders(start: str | os.PathLike[str]) -> Iterator[Path]:
    """The folders at and above ``start`` that may hold this user's project, nearest first
    (see the module docstring); raises for a configuration file in another user's folder."""
    here = Path(os.path.abspath(start))
    for folder in (here, *here.parents):
        try:
            info = os.stat(folder)
        except OSError:
            return
        reason = untrusted(info)
        if reason is None:
            yield folder
        elif info.st_mode & stat.S_IWOTH:
            return  # nothing at or above a folder anyone can write to is trusted
        elif os.path.lexists(folder / CONFIG_RELATIVE_PATH):
            _refuse(folder / CONFIG_RELATIVE_PATH, f"the folder {folder} is {reason}")


def configured_root(start: str | os.PathLike[str]) -> Path | None:
    """The nearest folder at or above ``start`` holding the configuration file, else ``None``
    (only folders and files of this user count; see the module docstring)."""
    for folder in _folders(start):
        config = folder / CONFIG_RELATIVE_PATH
        if config.is_file():
            reason = untrusted(os.stat(config))
            if reason is not None:
                _refuse(config, f"the file is {reason}")
            return folder
    return None


def git_root(start: str | os.PathLike[str]) -> Path | None:
    """The nearest folder at or above ``start`` holding ``.git``, else ``None`` (only folders
    of this user count)."""
    for folder in _folders(start):
        if (folder / ".git").exists():
            return folder
    return None


def checkout(root: str | os.PathLike[str]) -> tuple[Path, ...]:
    """The folders of the checkout the project at ``root`` lies in, resolved: the project
    itself and, when it is inside one, the git work tree around it. Everything in them is the
    repository's (see ``docs/security.md``)."""
    here = Path(root).resolve()
    try:
        top = git_root(here)
    except PermissionError:  # a configuration in another user's folder above: not ours
        top = None
    return (here,) if top is None or top.resolve() == here else (here, top.resolve())


_TRACKED: dict[tuple[str, tuple[str, ...], tuple[int, int, int]], tuple[str, ...]] = {}
"""What :func:`tracked_files` found, per work tree, paths and state of git's index."""


def _git(top: Path, *args: str) -> str | None:
    """What ``git -C top ARGS`` prints, or ``None`` when git is missing, fails or hangs (no
    file-system monitor started, no optional lock taken)."""
    import subprocess  # here: the prompt hook's client finds its root without git

    command = ["git", "-c", "core.fsmonitor=false", "-C", str(top), *args]
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        done = subprocess.run(command, capture_output=True, timeout=30, env=env, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


def tracked_files(top: Path, paths: Sequence[Path]) -> tuple[str, ...]:
    """The files at or below ``paths`` (inside the git work tree ``top``) that git tracks
    there: they came with the repository (a clone, a pull), not from this user's work.

    Nothing when the work tree has no index (nothing is tracked yet) or git cannot say (not
    installed, not a repository); a work tree whose ``.git`` is a folder is asked once per
    state of its index (the hooks open the store on every prompt)."""
    relative = [os.path.relpath(p, top) for p in paths]
    dot_git = top / ".git"
    key = None
    if dot_git.is_dir():
        try:
            index = os.stat(dot_git / "index")
        except FileNotFoundError:
            return ()
        except OSError:
            index = None
        if index is not None:
            key = (str(top), tuple(relative), (index.st_ino, index.st_size, index.st_mtime_ns))
            if key in _TRACKED:
                return _TRACKED[key]
    out = _git(top, "ls-files", "-z", "--", *relative)
    found = tuple(name for name in (out or "").split("\0") if name)
    if key is not None:
        _TRACKED[key] = found
    return found


def find_root(start: str | os.PathLike[str] = ".") -> Path:
    """The project ``start`` belongs to (see the module docstring); absolute, not resolved
    through symbolic links, so paths shown to the person read as they typed them.

    Raises:
        UntrustedPathError: the configuration file found belongs to another user, or sits in
            a folder of another user or one every user can write to.
    """
    found = configured_root(start) or git_root(start)
    if found is not None:
        return found
    here = Path(os.path.abspath(start))
    if os.path.lexists(here / CONFIG_RELATIVE_PATH):  # in a folder the walk did not trust
        reason = untrusted(os.stat(here))
        if reason is not None:
            _refuse(here / CONFIG_RELATIVE_PATH, f"the folder {here} is {reason}")
    return here


def resolve_root(
    explicit: str | os.PathLike[str] | None, cwd: str | os.PathLike[str] = "."
) -> Path:
    """``explicit`` (a ``--root`` option) when given, else :func:`find_root` of ``cwd``."""
    return Path(explicit) if explicit is not None else find_root(cwd)


def main_worktree(root: str | os.PathLike[str]) -> Path | None:
    """The main worktree of the linked git worktree whose top level is ``root``, else
    ``None`` (``root`` is no linked worktree, or git's records of it cannot be trusted).

    A linked worktree's ``.git`` is a file naming its folder in the main repository
    (``gitdir: <main>/.git/worktrees/<name>``); that folder names the common directory
    (``commondir``, the main ``.git``) and points back at the worktree (``gitdir``). It counts
    only when that ``.git`` file is a regular file, the back-pointer names this worktree, the
    common directory is the ``.git`` folder of its parent, the worktree's folder is in that
    directory's ``worktrees/`` (where only git writes, not a checkout), and every one of them is
    this user's (or root's) and not writable by other users: a checkout cannot borrow another
    repository's memory by shipping a ``.git`` file or a folder of its own.
    """
    here = Path(os.path.abspath(root))
    dotgit = here / ".git"
    try:
        if not stat.S_ISREG(os.lstat(dotgit).st_mode) or untrusted(os.lstat(dotgit)):
            return None
        line = read_small_file(dotgit, 4096).decode("utf-8").strip()
        if not line.startswith("gitdir:"):
            return None
        gitdir = (here / line[len("gitdir:") :].strip()).resolve()
        back = read_small_file(gitdir / "gitdir", 4096).decode("utf-8").strip()
        common = gitdir / read_small_file(gitdir / "commondir", 4096).decode("utf-8").strip()
        common = common.resolve()
        main = common.parent
        if (
            gitdir.parent != common / "worktrees"  # git's own record, not one the checkout ships
            or (here / back).resolve() != dotgit.resolve()
            or common.name != ".git"
        ):
            return None
        for path in (gitdir, common, main):
            info = os.stat(path)
            if not stat.S_ISDIR(info.st_mode) or untrusted(info):
                return None
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return main if main != here else None


_SECTION_RE = re.compile(r'^\s*\[\s*([^\]"\s]+)(?:\s+"([^"]*)")?\s*\]')
_URL_RE = re.compile(r"^\s*url\s*=\s*(.*?)\s*$", re.IGNORECASE)


def git_remote_origin(root: Path) -> str | None:
    """The ``url`` of the ``[remote "origin"]`` section of ``<root>/.git/config``, if any
    (a ``url`` of another section never counts)."""
    try:
        text = (root / ".git" / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    in_origin = False
    for line in text.splitlines():
        section = _SECTION_RE.match(line)
        if section is not None:
            in_origin = section.group(1).lower() == "remote" and section.group(2) == "origin"
            continue
        url = _URL_RE.match(line) if in_origin else None
        if url is not None and url.group(1):
            return url.group(1)
    return None


def linked_worktrees(top: Path) -> list[Path]:
    """The linked worktrees git records for the repository whose main worktree is ``top``
    (``git worktree list``), each accepted only when :func:`main_worktree` finds ``top`` from
    it (git's records agree and are the user's); none when git cannot say."""
    out = _git(top, "worktree", "list", "--porcelain")
    here = top.resolve()
    found: list[Path] = []
    for line in (out or "").splitlines():
        if not line.startswith("worktree "):
            continue
        path = Path(line[len("worktree ") :])
        main = main_worktree(path) if path.resolve() != here else None
        if main is not None and main.resolve() == here:
            found.append(path)
    return found

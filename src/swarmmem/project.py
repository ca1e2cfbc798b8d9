"""Finding the project a command, a hook or the MCP server works on.

A project is the nearest folder, walking up from the working directory, that holds the
configuration file ``.opencode/opencode-swarm.json``; failing that, the top level of the git
work tree around it (the nearest folder holding ``.git``, a folder or a worktree's file);
failing that, the working directory itself. An explicit ``--root`` always wins.

Only the standard library is imported: the hook entry point runs this on every prompt.
"""

from __future__ import annotations

import os
from pathlib import Path

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
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ValueError("it is not a regular file")
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValueError(f"it is larger than {max_bytes} bytes")
    return data


def configured_root(start: str | os.PathLike[str]) -> Path | None:
    """The nearest folder at or above ``start`` holding the configuration file, else ``None``."""
    here = Path(os.path.abspath(start))
    for folder in (here, *here.parents):
        if (folder / CONFIG_RELATIVE_PATH).is_file():
            return folder
    return None


def git_root(start: str | os.PathLike[str]) -> Path | None:
    """The nearest folder at or above ``start`` holding ``.git``, else ``None``."""
    here = Path(os.path.abspath(start))
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def find_root(start: str | os.PathLike[str] = ".") -> Path:
    """The project ``start`` belongs to (see the module docstring); absolute, not resolved
    through symbolic links, so paths shown to the person read as they typed them."""
    return configured_root(start) or git_root(start) or Path(os.path.abspath(start))


def resolve_root(
    explicit: str | os.PathLike[str] | None, cwd: str | os.PathLike[str] = "."
) -> Path:
    """``explicit`` (a ``--root`` option) when given, else :func:`find_root` of ``cwd``."""
    return Path(explicit) if explicit is not None else find_root(cwd)

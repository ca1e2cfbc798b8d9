"""Files under the project root that never follow a symbolic link.

A run log or lesson file written through a planted link would land wherever the link points
(another project's files, a system file); every folder below the root and the file itself are
therefore checked, and files are opened with ``O_NOFOLLOW``. They are swarmmem's own state, so
they are private to the user: folders are created 0700, files 0600.
"""

from __future__ import annotations

import os
from pathlib import Path

from swarmmem.core.model.errors import StorageError


def safe_dir(root: Path, relative: Path) -> Path:
    """``root / relative``, created folder by folder (0700); a symbolic link on the way is
    refused."""
    current = Path(root)
    for part in Path(relative).parts:
        current = current / part
        if current.is_symlink():
            raise StorageError(f"refusing to write through the symbolic link {current}")
        current.mkdir(mode=0o700, exist_ok=True)
    return current


def open_append(path: Path) -> int:
    """A file descriptor appending to ``path`` (created 0600), never through a link."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    try:
        return os.open(path, flags, 0o600)
    except OSError as exc:
        if Path(path).is_symlink():
            raise StorageError(f"refusing to write through the symbolic link {path}") from exc
        raise


def open_new(path: Path) -> int:
    """A file descriptor of a new file at ``path`` (it must not exist, not even as a link),
    created 0600."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    return os.open(path, flags, 0o600)

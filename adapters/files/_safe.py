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

FolderId = tuple[int, int]
"""A folder's device and inode: which folder a path named when it was looked at."""


def folder_id(path: Path) -> FolderId | None:
    """The identity of what is at ``path`` (not followed if a link), ``None`` if nothing is."""
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (info.st_dev, info.st_ino)


def safe_dir(root: Path, relative: Path, *, expect: FolderId | None = None) -> Path:
    """``root / relative``, created folder by folder (0700); a symbolic link on the way is
    refused. With ``expect`` (the :func:`folder_id` of the first folder when the memory
    opened), a first folder removed or replaced since is not made again: a hook still running
    when the person deletes ``.swarm/`` writes nothing rather than bring it back."""
    current = Path(root)
    for index, part in enumerate(Path(relative).parts):
        current = current / part
        if index == 0 and expect is not None and folder_id(current) != expect:
            raise StorageError(
                f"{current} was removed or replaced after the memory opened; nothing is "
                "written there"
            )
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

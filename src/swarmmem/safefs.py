"""Reading and writing files under a folder that may be hostile (a checkout, a shared folder).

A checkout can ship a symbolic link at any name swarmmem writes (a host's settings file, a
folder such as ``.claude/``, a temporary file's name), so :func:`write_file`

- walks from ``base`` down to the file's folder one folder at a time, each opened with
  ``O_NOFOLLOW`` (the missing ones created, each owned by the user), and refuses a symbolic
  link on the way;
- refuses a target that is a symbolic link or not a regular file;
- writes a new temporary file with a random name in that folder (``O_CREAT | O_EXCL |
  O_NOFOLLOW``), syncs it and renames it over the target, so a reader sees the old file or
  the new one, never a part;
- keeps the mode of a file the person shares (host settings, ``.gitignore``); swarmmem's own
  state (``private``) is 0600 in folders it creates 0700.

:func:`read_text` reads and :func:`remove_file` removes without following the same links.
:func:`private_folder` and :func:`private_file` check (and make) the place of swarmmem's own
state, such as the store, before a library that opens paths by name (SQLite) opens it. A
refusal is an :class:`~swarmmem.core.model.errors.UntrustedPathError` naming the path.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

from swarmmem.core.model.errors import UntrustedPathError
from swarmmem.project import MAX_CONFIG_BYTES, untrusted

_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


def _parts(path: Path, base: Path) -> tuple[str, ...]:
    """``path``'s names below ``base`` (at least one; no ``..``)."""
    try:
        parts = Path(path).relative_to(base).parts
    except ValueError:
        raise UntrustedPathError(f"refusing {path}: it is not inside {base}") from None
    if not parts or ".." in parts:
        raise UntrustedPathError(f"refusing {path}: it is not a file inside {base}")
    return parts


def _refuse_link(folder_fd: int, name: str, shown: Path) -> None:
    """Raise if ``name`` in the folder ``folder_fd`` is a symbolic link."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISLNK(os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode):
            raise UntrustedPathError(f"refusing to go through the symbolic link {shown}")


def _open_folder(base: Path, parts: tuple[str, ...], *, create: bool, private: bool) -> int:
    """A descriptor of the folder ``base/parts``, reached without following a link below
    ``base``; missing folders are created (0700 when ``private``) when ``create``."""
    if create:
        os.makedirs(base, 0o700 if private else 0o777, exist_ok=True)  # base itself is trusted
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    current = Path(base)
    try:
        for part in parts:
            current = current / part
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o700 if private else 0o777, dir_fd=fd)
            try:
                below = os.open(part, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW, dir_fd=fd)
            except OSError:
                _refuse_link(fd, part, current)
                raise
            os.close(fd)
            fd = below
            owner = os.fstat(fd).st_uid
            if owner != os.getuid():
                raise UntrustedPathError(
                    f"refusing to write in {current}: it is owned by another user (uid {owner})"
                )
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_file(path: Path, data: str | bytes, *, base: Path, private: bool = False) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` inside ``base`` atomically, never through a
    symbolic link (see the module docstring)."""
    parts = _parts(path, base)
    fd = _open_folder(base, parts[:-1], create=True, private=private)
    name = parts[-1]
    try:
        try:
            old = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None and not stat.S_ISREG(old.st_mode):
            what = "a symbolic link" if stat.S_ISLNK(old.st_mode) else "not a regular file"
            raise UntrustedPathError(f"refusing to write {path}: it is {what}")
        mode = 0o600 if private else (stat.S_IMODE(old.st_mode) if old is not None else None)
        tmp = f".{name}.{secrets.token_hex(8)}.swarmmem-tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
        out = os.open(tmp, flags, 0o600 if private else 0o666, dir_fd=fd)
        try:
            with os.fdopen(out, "wb") as handle:
                handle.write(data.encode("utf-8") if isinstance(data, str) else data)
                if mode is not None:
                    os.fchmod(handle.fileno(), mode)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=fd)
            raise
    finally:
        os.close(fd)


def remove_file(path: Path, *, base: Path) -> None:
    """Remove the file ``path`` inside ``base`` (nothing when it is missing), reaching its
    folder without following a link; a folder there is refused (a link is removed, never
    followed)."""
    parts = _parts(path, base)
    try:
        fd = _open_folder(base, parts[:-1], create=False, private=False)
    except FileNotFoundError:
        return
    try:
        with contextlib.suppress(FileNotFoundError):
            info = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                raise UntrustedPathError(f"refusing to remove {path}: it is a folder")
            os.unlink(parts[-1], dir_fd=fd)
    finally:
        os.close(fd)


def read_text(path: Path, *, base: Path, max_bytes: int = MAX_CONFIG_BYTES) -> str | None:
    """The text of the regular file ``path`` inside ``base`` (``None`` when it is missing);
    a symbolic link at it or at a folder below ``base``, a FIFO, a device or a file over
    ``max_bytes`` is refused."""
    parts = _parts(path, base)
    try:
        fd = _open_folder(base, parts[:-1], create=False, private=False)
    except FileNotFoundError:
        return None
    try:
        flags = os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW
        file_fd = os.open(parts[-1], flags, dir_fd=fd)
    except FileNotFoundError:
        return None
    except OSError:
        _refuse_link(fd, parts[-1], Path(path))
        raise
    finally:
        os.close(fd)
    if not stat.S_ISREG(os.fstat(file_fd).st_mode):
        os.close(file_fd)
        raise UntrustedPathError(f"refusing to read {path}: it is not a regular file")
    with os.fdopen(file_fd, "rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise UntrustedPathError(f"refusing to read {path}: it is larger than {max_bytes} bytes")
    return data.decode("utf-8")


def private_folder(folder: Path, *, base: Path, create: bool) -> None:
    """Check each folder from ``base`` (trusted) down to ``folder`` by ``lstat``: a symbolic
    link, something else than a folder, a folder of another user or one every user can write
    to is refused. With ``create`` the missing folders are made (0700); without, a missing
    folder ends the check. Checked top-down, so a folder that passed cannot be swapped by a
    user outside its group."""
    current = Path(base)
    for part in Path(folder).relative_to(base).parts:
        current = current / part
        if part == "..":
            raise UntrustedPathError(f"refusing {folder}: it is not inside {base}")
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(current, 0o700)
        if not _check_entry(current, stat.S_ISDIR, "a folder", f"the folder {current}"):
            return


def private_file(path: Path, *, base: Path) -> None:
    """Check (and make) the folders down to ``path`` (:func:`private_folder`), then ``path``
    itself when it exists: a symbolic link, anything but a regular file, or another user's
    file is refused."""
    private_folder(path.parent, base=base, create=True)
    _check_entry(path, stat.S_ISREG, "a regular file", str(path))


def _check_entry(path: Path, is_kind: Callable[[int], bool], kind: str, shown: str) -> bool:
    """False when nothing is at ``path``; else True, unless it is a symbolic link, not
    ``kind`` (``is_kind`` of its mode) or not the user's: then :class:`UntrustedPathError`
    names it as ``shown``."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(info.st_mode):
        raise UntrustedPathError(f"refusing {shown}: it is a symbolic link")
    reason = f"not {kind}" if not is_kind(info.st_mode) else untrusted(info)
    if reason is not None:
        raise UntrustedPathError(f"refusing {shown}: it is {reason}")
    return True

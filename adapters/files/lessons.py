"""Reflection lesson files: ``.swarm/reflections/lessons.json`` and ``lessons.md``.

The digest is pure (:mod:`swarmmem.core.learning.reflection`) and its regeneration a use case
(:mod:`swarmmem.core.learning.lessons`); this module does the file work behind the
:class:`~swarmmem.ports.files.LessonFiles` port: anchor liveness against the repository, a
lock file so concurrent writers take turns, and atomic writes (``lessons.json`` first, as the
authoritative copy, then ``lessons.md``).
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from swarmmem.adapters.files._safe import open_new, safe_dir
from swarmmem.core.learning import reflection as digest_mod
from swarmmem.core.model.errors import StorageError

REFLECTIONS_DIR = Path(".swarm") / "reflections"
LESSONS_JSON = "lessons.json"
LESSONS_MD = "lessons.md"
LOCK_NAME = ".lessons.lock"
LOCK_STALE_SECONDS = 10.0
LOCK_RETRIES = 20
_STORE_FILES = (
    "memory.db",
    "memory.db-wal",
    "memory.db-shm",
    "audit.jsonl",
    "memories.jsonl",
    "outcome-events.jsonl",
    "proposals.jsonl",
    "reward-events.jsonl",
)


class ReflectionLockError(StorageError, code="reflection_lock_error"):
    """Another writer held the reflection lock for longer than the retries allow."""


def reflections_dir(root: Path) -> Path:
    """``<root>/.swarm/reflections``."""
    return Path(root) / REFLECTIONS_DIR


def anchor_checker(root: Path) -> Callable[[str], bool]:
    """``file -> bool``: the file exists inside ``root`` (after realpath) and is a regular file."""
    base = os.path.realpath(root)

    def alive(file: str) -> bool:
        target = os.path.realpath(os.path.join(base, file))
        try:
            if os.path.commonpath([base, target]) != base:
                return False
            return stat.S_ISREG(os.stat(target).st_mode)
        except (OSError, ValueError):
            return False

    return alive


def store_bytes(storage_dir: Path, extra: tuple[Path, ...] = ()) -> int:
    """Total size of the memory store files that exist (the regeneration guard)."""
    paths = {Path(storage_dir) / name for name in _STORE_FILES}
    for path in extra:
        paths.update({path, Path(f"{path}-wal"), Path(f"{path}-shm")})
    total = 0
    for path in paths:
        try:
            total += path.stat().st_size
        except OSError:
            continue
    return total


@contextmanager
def directory_lock(
    directory: Path, *, sleep: Callable[[float], None] = time.sleep
) -> Iterator[None]:
    """Hold ``<directory>/.lessons.lock`` (an exclusively created file) for the block.

    A lock older than 10 seconds is treated as abandoned and removed. Up to 20 retries wait
    25 ms, doubling to at most 250 ms.

    Raises:
        ReflectionLockError: the lock stayed busy through every retry.
    """
    lock = directory / LOCK_NAME
    delay = 0.025
    for attempt in range(LOCK_RETRIES + 1):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                age = time.time() - lock.stat().st_mtime
            except OSError:
                continue  # released meanwhile
            if age > LOCK_STALE_SECONDS:
                lock.unlink(missing_ok=True)
                continue
            if attempt == LOCK_RETRIES:
                break
            sleep(delay)
            delay = min(0.25, delay * 2)
            continue
        try:
            os.write(fd, str(os.getpid()).encode("ascii"))
        finally:
            os.close(fd)
        try:
            yield
        finally:
            lock.unlink(missing_ok=True)
        return
    raise ReflectionLockError(f"reflection lock is busy: {lock}")


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a new temporary file and a rename (a link at
    ``path`` is replaced, never followed)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = open_new(tmp)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists() and not tmp.is_symlink():
            tmp.unlink()


class LessonFiles:
    """The lesson files of the project at ``root`` (implements
    :class:`~swarmmem.ports.files.LessonFiles`); ``storage_dir`` and ``extra_store_files``
    are the store files the size guard adds up."""

    def __init__(
        self, root: Path, storage_dir: Path, extra_store_files: tuple[Path, ...] = ()
    ) -> None:
        self.root = Path(root)
        self.storage_dir = Path(storage_dir)
        self.extra_store_files = tuple(extra_store_files)
        self._alive = anchor_checker(self.root)

    def store_bytes(self) -> int:
        return store_bytes(self.storage_dir, self.extra_store_files)

    def anchor_alive(self, file: str) -> bool:
        return self._alive(file)

    def write(self, json_text: str, markdown: str) -> tuple[str, str]:
        directory = safe_dir(self.root, REFLECTIONS_DIR)
        json_path = directory / LESSONS_JSON
        md_path = directory / LESSONS_MD
        with directory_lock(directory):
            write_atomic(json_path, json_text)
            write_atomic(md_path, markdown)
        return str(json_path), str(md_path)

    def load(self) -> dict[str, Any] | None:
        return load_lessons(self.root)


def load_lessons(root: Path) -> dict[str, Any] | None:
    """``lessons.json`` as a dict, or ``None`` when absent, larger than 256 KiB or malformed."""
    path = reflections_dir(root) / LESSONS_JSON
    try:
        if path.stat().st_size > digest_mod.MAX_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None

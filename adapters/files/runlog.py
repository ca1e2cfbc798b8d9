"""Per-run event log: ``.swarm/runs/<run-id>/memory.jsonl``."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from swarmmem.adapters.files._safe import FolderId, open_append, safe_dir
from swarmmem.core.model.errors import StorageError
from swarmmem.core.recall.injection import sanitize_run_id

MAX_READ_BYTES = 8 * 1024 * 1024
"""The most of one run log :func:`read_run_events` reads: its newest lines up to this size."""
LOG_NAME = "memory.jsonl"


def run_log_path(root: Path, run_id: str | None) -> Path:
    """Where the events of ``run_id`` are appended."""
    return runs_folder(root) / sanitize_run_id(run_id) / LOG_NAME


def runs_folder(root: Path) -> Path:
    """The folder holding one folder per run."""
    return Path(root) / ".swarm" / "runs"


def append_run_event(
    root: Path,
    run_id: str | None,
    event: dict[str, Any],
    timestamp: str,
    *,
    expect: FolderId | None = None,
) -> None:
    """Append one event line (``runId`` and ``timestamp`` added); never through a link
    (``expect``: see :func:`~swarmmem.adapters.files._safe.safe_dir`)."""
    path = run_log_path(root, run_id)
    safe_dir(Path(root), path.parent.relative_to(root), expect=expect)
    line = json.dumps({**event, "runId": sanitize_run_id(run_id), "timestamp": timestamp}) + "\n"
    fd = open_append(path)
    try:
        # written before the call returns, not synced: a crash may lose the last lines of a
        # log (never a memory, a proposal or an audit row), and a recall does not wait on
        # the disk
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


def read_run_events(root: Path, run_id: str | None) -> list[dict[str, Any]]:
    """Every event logged for ``run_id`` (malformed lines skipped; of a log over
    :data:`MAX_READ_BYTES`, the newest lines that fit). A symbolic link on the way (``.swarm``,
    ``runs``, the run's folder) or at the log, and a log that is not a regular file, are
    refused with a :class:`StorageError`; a missing log has no events."""
    path = run_log_path(root, run_id)
    for folder in (path.parent.parent.parent, path.parent.parent, path.parent):
        if folder.is_symlink():
            raise StorageError(f"refusing to read through the symbolic link {folder}")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return []
    except OSError as exc:
        if path.is_symlink():
            raise StorageError(f"refusing to read through the symbolic link {path}") from exc
        raise StorageError(f"cannot read the run log {path}: {exc}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise StorageError(f"refusing to read {path}: it is not a regular file")
        start = max(0, info.st_size - MAX_READ_BYTES)
        os.lseek(fd, start, os.SEEK_SET)
        chunks = []
        left = MAX_READ_BYTES
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    lines = b"".join(chunks).decode("utf-8", "replace").splitlines()
    if start:
        lines = lines[1:]  # the first line was cut
    out = []
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            out.append(event)
    return out


def run_ids(root: Path) -> list[str]:
    """The runs under ``.swarm/runs/`` with a log (a regular file), the most recently written
    first; links at ``.swarm``, ``runs``, a run's folder or its log are passed over."""
    runs = runs_folder(root)
    if runs.parent.is_symlink() or runs.is_symlink() or not runs.is_dir():
        return []
    found: list[tuple[int, str]] = []
    with os.scandir(runs) as entries:
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                continue
            try:
                info = os.lstat(os.path.join(entry.path, LOG_NAME))
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                found.append((info.st_mtime_ns, entry.name))
    return [name for _, name in sorted(found, key=lambda item: (-item[0], item[1]))]


class JsonlRunLog:
    """The run log of the project at ``root`` (implements :class:`~swarmmem.ports.files.RunLog`
    and :class:`~swarmmem.ports.files.RunHistory`). With ``expect``, the identity of
    ``.swarm/`` when the memory opened, a ``.swarm/`` deleted since is not made again."""

    def __init__(self, root: Path, expect: FolderId | None = None) -> None:
        self.root = Path(root)
        self.expect = expect

    def append(self, run_id: str | None, event: Mapping[str, Any], timestamp: str) -> None:
        append_run_event(self.root, run_id, dict(event), timestamp, expect=self.expect)

    def read(self, run_id: str | None) -> list[dict[str, Any]]:
        return read_run_events(self.root, run_id)

    def runs(self) -> list[str]:
        return run_ids(self.root)

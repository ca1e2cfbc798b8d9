"""What the hooks of one agent session remember between processes.

``.swarm/runs/<session>/hook-state.json`` holds the ids injected at prompts since the context
was last cleared, how far the transcript has been read, and the digests of the proposal blocks
already filed. A hook reads and rewrites it under an exclusive lock (``hook-state.lock``), so
hooks that a host runs at the same time take turns; nothing is followed through a link.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from swarmmem.adapters.files._safe import FolderId, safe_dir
from swarmmem.core.recall.injection import sanitize_run_id

MAX_STATE_BYTES = 1 << 20
"""A state file larger than this is unreadable (and starts afresh)."""


class SessionStateFile:
    """The hook state of one session of the project at ``root`` (``expect``: the identity of
    ``.swarm/`` when the memory opened; a ``.swarm/`` deleted since is not made again)."""

    def __init__(self, root: Path, session_id: str | None, expect: FolderId | None = None) -> None:
        self.root = Path(root)
        self.relative = Path(".swarm") / "runs" / sanitize_run_id(session_id)
        self.expect = expect

    @property
    def path(self) -> Path:
        return self.root / self.relative / "hook-state.json"

    @contextmanager
    def update(self) -> Iterator[dict[str, Any]]:
        """The state as a dict, written back when the block ends without an error."""
        folder = safe_dir(self.root, self.relative, expect=self.expect)
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        lock = os.open(folder / "hook-state.lock", flags, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = self._read()
            yield state
            tmp = folder / f".hook-state.{os.getpid()}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(state, out)
            os.replace(tmp, self.path)
        finally:
            os.close(lock)  # closing releases the lock

    def _read(self) -> dict[str, Any]:
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return {}
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read(MAX_STATE_BYTES + 1)
        try:
            data = json.loads(raw) if len(raw) <= MAX_STATE_BYTES else {}
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}

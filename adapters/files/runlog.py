"""Per-run event log: ``.swarm/runs/<run-id>/memory.jsonl``."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from swarmmem.adapters.files._safe import open_append, safe_dir
from swarmmem.core.recall.injection import sanitize_run_id


def run_log_path(root: Path, run_id: str | None) -> Path:
    """Where the events of ``run_id`` are appended."""
    return root / ".swarm" / "runs" / sanitize_run_id(run_id) / "memory.jsonl"


def append_run_event(root: Path, run_id: str | None, event: dict[str, Any], timestamp: str) -> None:
    """Append one event line (``runId`` and ``timestamp`` added); never through a link."""
    path = run_log_path(root, run_id)
    safe_dir(Path(root), path.parent.relative_to(root))
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
    """Every event logged for ``run_id`` (malformed lines skipped)."""
    path = run_log_path(root, run_id)
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


class JsonlRunLog:
    """The run log of the project at ``root`` (implements :class:`~swarmmem.ports.files.RunLog`)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def append(self, run_id: str | None, event: Mapping[str, Any], timestamp: str) -> None:
        append_run_event(self.root, run_id, dict(event), timestamp)

    def read(self, run_id: str | None) -> list[dict[str, Any]]:
        return read_run_events(self.root, run_id)

"""``swarmmem import`` on a real terminal (a pseudo-terminal) shows a progress bar while it
works; with ``--json`` the terminal gets the JSON document alone."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest

import swarmmem

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")


@pytest.fixture
def exported(tmp_path: Path) -> tuple[Path, Path]:
    """A project with memory enabled and an export of 3,000 of its memories."""
    root = tmp_path / "project"
    (root / ".opencode").mkdir(parents=True)
    (root / ".opencode" / "opencode-swarm.json").write_text(
        json.dumps({"memory": {"enabled": True}}), encoding="utf-8"
    )
    rows = [
        {
            "kind": "project_fact",
            "text": f"fact {i}: the retry loop of module {i % 50} waits for the lock",
            "tags": ["retry"],
            "source": {"type": "file", "filePath": f"src/mod{i % 50}.py"},
        }
        for i in range(3000)
    ]
    with swarmmem.open(root) as mem:
        assert mem.import_records(rows).written == len(rows)
    dump = tmp_path / "dump"
    result = run_on_terminal(root, "export", "--dir", str(dump), "--json")
    assert result[0] == 0, result[1]
    return root, dump / "export"


def run_on_terminal(root: Path, *args: str) -> tuple[int, str]:
    """Run ``swarmmem --root ROOT ARGS`` with a pseudo-terminal as its stdin, stdout and
    stderr; returns its exit code and everything it wrote to the terminal."""
    main_fd, child_fd = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "PYTHONIOENCODING": "utf-8"}
    process = subprocess.Popen(
        [sys.executable, "-m", "swarmmem.cli", "--root", str(root), *args],
        stdin=child_fd,
        stdout=child_fd,
        stderr=child_fd,
        env=env,
        close_fds=True,
    )
    os.close(child_fd)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main_fd)
    code = process.wait(timeout=30)
    return code, b"".join(chunks).decode("utf-8", "replace")


def test_import_on_a_terminal_shows_a_progress_bar(exported: tuple[Path, Path]) -> None:
    root, folder = exported
    code, screen = run_on_terminal(root, "import", "--dir", str(folder))
    assert code == 0, screen
    assert "importing memories" in screen
    assert "100%" in screen  # the bar counted the written rows to the end
    assert "Imported 3000 memories" in screen


def test_import_with_json_on_a_terminal_prints_the_document_alone(
    exported: tuple[Path, Path],
) -> None:
    root, folder = exported
    code, screen = run_on_terminal(root, "import", "--dir", str(folder), "--json")
    assert code == 0, screen
    assert "importing memories" not in screen
    data = json.loads(screen)
    assert data["success"] is True and data["importedMemories"] == 3000

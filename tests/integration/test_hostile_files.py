"""Hostile files in a checkout: a configuration file that is a FIFO, a link to /dev/zero,
too large, or nested too deeply is refused with a clear error naming it, at once; the hook
answers "nothing" and exits 0 (before, a FIFO hung status, mcp and every hook, and the link
ended in a MemoryError traceback)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CASES = ["fifo", "dev-zero", "huge", "deep"]


def plant(root: Path, case: str) -> Path:
    path = root / ".opencode" / "opencode-swarm.json"
    path.parent.mkdir(parents=True)
    if case == "fifo":
        os.mkfifo(path)
    elif case == "dev-zero":
        path.symlink_to("/dev/zero")
    elif case == "huge":
        path.write_text('{"memory": {"enabled": true}, "x": "' + "a" * (2 << 20) + '"}')
    else:
        path.write_text('{"memory": ' + "[" * 100_000 + "]" * 100_000 + "}")
    return path


def run(root: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: os.environ[k] for k in ("PATH", "SWARMMEM_NO_EXTENSIONS") if k in os.environ}
    env["SWARMMEM_HOOK_HELPER"] = "0"
    return subprocess.run(
        [sys.executable, "-m", "swarmmem", *args],
        cwd=root,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,  # a hang fails here instead of blocking the suite
    )


@pytest.mark.parametrize("case", CASES)
def test_a_hostile_configuration_file_is_refused_at_once(tmp_path: Path, case: str) -> None:
    path = plant(tmp_path, case)
    done = run(tmp_path, "--root", str(tmp_path), "status")
    assert done.returncode == 2, done.stderr
    assert f"cannot read configuration {path}" in done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    init = run(tmp_path, "--root", str(tmp_path), "init")
    assert init.returncode == 2 and "cannot read configuration" in init.stderr


@pytest.mark.parametrize("case", CASES)
def test_the_hook_answers_nothing_and_exits_0(tmp_path: Path, case: str) -> None:
    plant(tmp_path, case)
    payload = json.dumps({"session_id": "s", "cwd": str(tmp_path), "prompt": "how do tests run"})
    done = run(tmp_path, "hook", "claude-code", "UserPromptSubmit", stdin=payload)
    assert (done.returncode, done.stdout) == (0, "")

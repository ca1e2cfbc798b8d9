"""A store the process may not write (read-only checkouts, containers, CI caches): status,
recall, list, show and export work, usage logging is skipped (said once), writes fail with a
clear message and nothing is changed."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from factories import cite, cli, curate_fact

import swarmmem
from swarmmem.cli import main
from swarmmem.core.model.errors import StorageError

FACT = "Release builds are signed with the team key in CI."


@contextlib.contextmanager
def unwritable(*paths: Path) -> Iterator[None]:
    """Make ``paths`` unwritable for this process (immutable for root, read-only modes
    otherwise); skip the test when the machine cannot do either."""
    modes = {p: p.stat().st_mode for p in paths}
    immutable = os.geteuid() == 0 and shutil.which("chattr") is not None
    try:
        for path in paths:
            path.chmod(0o555 if path.is_dir() else 0o444)
        if immutable:
            done = subprocess.run(["chattr", "+i", *map(str, paths)], capture_output=True)
            if done.returncode != 0:
                pytest.skip(f"chattr +i failed: {done.stderr.decode().strip()}")
        if any(os.access(p, os.W_OK) for p in paths):
            pytest.skip("cannot make a file unwritable for this user on this machine")
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", *map(str, paths)], capture_output=True)
        for path, mode in modes.items():
            path.chmod(mode)


def digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    assert CliRunner().invoke(main, ["--root", str(root), "init"]).exit_code == 0
    cite(root, "ci/release.yml", "README.md")
    with swarmmem.open(root, context={"agent_role": "coder"}) as mem:
        curate_fact(
            mem,
            FACT,
            kind="repo_convention",
            evidence="ci/release.yml",
            rationale="release checklist",
        )
    return root


def test_reads_work_and_writes_fail_clearly_on_a_store_this_process_cannot_write(
    project: Path, tmp_path: Path
) -> None:
    store_dir = project / ".swarm" / "memory"
    assert sorted(p.name for p in store_dir.iterdir()) == ["memory.db"]  # no WAL left
    before = digest(store_dir)
    with unwritable(store_dir / "memory.db", store_dir):
        status = cli(project, "status", "--json")
        assert status.exit_code == 0, status.output
        assert json.loads(status.stdout)["memory_count"] == 1

        recalled = cli(project, "recall", "how are release builds signed", "--json")
        assert recalled.exit_code == 0, recalled.output
        data = json.loads(recalled.stdout)
        assert [item["text"] for item in data["items"]] == [FACT]

        listed = json.loads(cli(project, "list", "--json").stdout)
        memory_id = listed["memories"][0]["memory_id"]
        assert cli(project, "show", memory_id).exit_code == 0
        exported = cli(project, "export", "--dir", str(tmp_path / "out"))
        assert exported.exit_code == 0, exported.output
        assert (tmp_path / "out" / "export" / "memories.jsonl").read_text().count(FACT) == 1

        refused = cli(
            project, "propose", "--kind", "repo_convention", "--text", "Another rule.",
            "--rationale", "r", "--evidence", "README.md",
        )  # fmt: skip
        assert refused.exit_code == 1
        assert "read-only" in refused.output and "Traceback" not in refused.output

        with swarmmem.open(project) as mem:
            assert mem.store.read_only is True
            bundle = mem.recall("how are release builds signed")
            assert bundle.items and bundle.diagnostics["usageRecorded"] is False
            with pytest.raises(StorageError, match="read-only"):
                mem.forget(memory_id, reason="outdated")
    assert digest(store_dir) == before

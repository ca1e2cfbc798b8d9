"""A store the process may not write (read-only checkouts, containers, CI caches): status,
recall, list, show and export work, usage logging is skipped (said once), writes fail with a
clear message and nothing is changed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from factories import cite, cli, curate_fact, unwritable

import swarmmem
from swarmmem.cli import main
from swarmmem.core.model.errors import StorageError

FACT = "Release builds are signed with the team key in CI."


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

"""`swarmmem audit-verify`: intact chains pass, tampering is reported with exit code 1."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner
from factories import cite

from swarmmem.cli import main


def _project(tmp_path: Path, provider: str = "sqlite") -> list[str]:
    (tmp_path / "cfg.json").write_text(
        json.dumps({"memory": {"enabled": True, "provider": provider}})
    )
    cite(tmp_path, "pyproject.toml")
    return ["--root", str(tmp_path), "--config", str(tmp_path / "cfg.json")]


def _propose(runner: CliRunner, base: list[str]) -> None:
    result = runner.invoke(
        main,
        [
            *base,
            "propose",
            "--kind",
            "repo_convention",
            "--text",
            "Use ruff for lint.",
            "--rationale",
            "style",
            "--evidence",
            "pyproject.toml",
        ],
    )
    assert result.exit_code == 0, result.output


def test_intact_chain_verifies(tmp_path: Path) -> None:
    """A fresh store's audit log verifies in text and JSON."""
    runner = CliRunner()
    base = _project(tmp_path)
    _propose(runner, base)
    text = runner.invoke(main, [*base, "audit-verify"])
    assert text.exit_code == 0 and "hash chain is intact" in text.output
    report = json.loads(runner.invoke(main, [*base, "audit-verify", "--json"]).output)
    assert report["verified"] is True and report["headMatch"] is True


def test_edited_row_is_reported(tmp_path: Path) -> None:
    """Editing an event row breaks the chain at the next row; the command exits 1."""
    runner = CliRunner()
    base = _project(tmp_path)
    _propose(runner, base)
    with sqlite3.connect(tmp_path / ".swarm" / "memory" / "memory.db") as conn:
        conn.execute("UPDATE memory_events SET reason = 'forged' WHERE rowid = 2")
    result = runner.invoke(main, [*base, "audit-verify", "--json"])
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["verified"] is False
    assert "prev_hash mismatch" in report["divergence"]["detail"]


def test_jsonl_provider_reports_the_gap(tmp_path: Path) -> None:
    """The JSONL provider says explicitly that it keeps no hash chain."""
    runner = CliRunner()
    base = _project(tmp_path, "local-jsonl")
    result = runner.invoke(main, [*base, "audit-verify", "--json"])
    report = json.loads(result.output)
    assert result.exit_code == 0
    assert report["supported"] is False and report["verified"] is None
    assert report["provider"] == "local-jsonl"

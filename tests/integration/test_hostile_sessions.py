"""Hostile agent sessions: what an agent writes (often steered by text a cloned repository
ships) reaches the stop hook through the host's transcript, and must neither stop the session's
proposal filing nor flood the person's review queue (docs/security.md)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from factories import run_swarmmem, write_memory_config

import swarmmem


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    (root / ".git").mkdir(parents=True)
    (root / "README.md").write_text("# app\n", encoding="utf-8")
    write_memory_config(root, {"enabled": True, "projectId": "proj_00000000000000ab"})
    return root


def _row(text: str) -> str:
    message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    return json.dumps({"type": "assistant", "message": message}) + "\n"


def _reply(*texts: str) -> str:
    entries = [
        {
            "operation": "add",
            "kind": "repo_convention",
            "text": text,
            "rationale": "seen in review",
            "evidenceRefs": ["README.md"],
        }
        for text in texts
    ]
    return "Done.\n```json\n" + json.dumps({"memoryProposals": entries}) + "\n```\n"


def _stop(root: Path, transcript: Path, session: str = "s1") -> Any:
    payload = {"session_id": session, "cwd": str(root), "transcript_path": str(transcript)}
    env = {"SWARMMEM_HOOK_HELPER": "0", "HOME": os.environ.get("HOME", str(root))}
    done = run_swarmmem(root, "hook", "claude-code", "Stop", stdin=json.dumps(payload), env=env)
    assert done.returncode == 0, done.stderr
    return done


def _pending(root: Path) -> list[str]:
    with swarmmem.open(root) as mem:
        return sorted(p.proposed_record.text for p in mem.proposals("pending") if p.proposed_record)


def _run_log(root: Path, session: str = "s1") -> list[dict[str, Any]]:
    path = root / ".swarm" / "runs" / session / "memory.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_deeply_nested_transcript_line_does_not_stop_the_sessions_filing(
    tmp_path: Path,
) -> None:
    """Hostile: one transcript line nested 100,000 deep raised a RecursionError in the stop
    hook before the transcript offset moved, so every later stop hook of the session read the
    same line again and no proposal of the session was ever filed."""
    root = _project(tmp_path)
    transcript = tmp_path / "transcript.jsonl"
    deep = '{"type": "assistant", "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    transcript.write_text(
        _row(_reply("Format code with ruff format before committing.")) + deep,
        encoding="utf-8",
    )
    _stop(root, transcript)
    with transcript.open("a", encoding="utf-8") as out:
        out.write(_row(_reply("Run the tests with pytest -q before pushing.")))
    _stop(root, transcript)
    assert _pending(root) == [
        "Format code with ruff format before committing.",
        "Run the tests with pytest -q before pushing.",
    ]

"""What a stop hook reads from a host's transcript: the assistant's texts and how many file
edits and commands it ran (Claude Code's and Codex's line shapes)."""

from __future__ import annotations

import json
from pathlib import Path

from swarmmem.hooks.transcript import read_transcript, tool_actions


def _claude(*tools: str) -> dict[str, object]:
    content = [{"type": "tool_use", "name": t, "input": {}} for t in tools]
    return {"type": "assistant", "message": {"role": "assistant", "content": content}}


def _codex(kind: str, name: str | None = None) -> dict[str, object]:
    payload: dict[str, object] = {"type": kind}
    if name is not None:
        payload["name"] = name
    return {"type": "response_item", "payload": payload}


def test_edits_and_commands_are_counted_reads_are_not() -> None:
    assert tool_actions(_claude("Edit", "Read", "Bash", "Grep", "MultiEdit")) == 3
    assert tool_actions(_codex("function_call", "shell")) == 1
    assert tool_actions(_codex("function_call", "exec_command")) == 1
    assert tool_actions(_codex("custom_tool_call", "apply_patch")) == 1
    assert tool_actions(_codex("local_shell_call")) == 1
    assert tool_actions(_codex("function_call", "view_image")) == 0
    assert tool_actions({"message": {"content": "text, not blocks"}}) == 0
    assert tool_actions(["not", "a", "row"]) == 0


def test_a_read_counts_only_the_lines_after_its_offset(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    said = {"type": "assistant", "message": {"content": [{"type": "text", "text": "Done."}]}}
    first = [_claude("Edit"), said, _codex("function_call", "shell")]
    path.write_text("".join(json.dumps(r) + "\n" for r in first), encoding="utf-8")
    reading = read_transcript(str(path), 0)
    assert (reading.texts, reading.actions, reading.offset) == (["Done."], 2, path.stat().st_size)
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(_claude("Write", "Bash")) + "\n" + '{"partial": ')
    later = read_transcript(str(path), reading.offset)
    assert (later.texts, later.actions) == ([], 2)
    assert later.offset == path.stat().st_size - len('{"partial": ')

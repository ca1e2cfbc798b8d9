"""What a stop hook reads from a host's transcript: the assistant's texts and how many file
edits and commands it ran (Claude Code's and Codex's line shapes)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

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


def _said(text: str) -> str:
    row = {"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}}
    return json.dumps(row) + "\n"


def test_a_transcript_reached_through_a_link_in_the_checkout_is_not_read(tmp_path: Path) -> None:
    """A repository can ship a linked folder; the host may name a transcript below it."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "t.jsonl").write_text(_said("Planted."), encoding="utf-8")
    checkout = tmp_path / "app"
    checkout.mkdir()
    (checkout / "logs").symlink_to(elsewhere)
    through = checkout / "logs" / "t.jsonl"
    assert read_transcript(str(through), 0, checkout=checkout).texts == []
    # the same file named directly (or with no checkout to guard) is the host's business
    assert read_transcript(str(elsewhere / "t.jsonl"), 0, checkout=checkout).texts == ["Planted."]
    (checkout / "own").mkdir()
    (checkout / "own" / "t.jsonl").write_text(_said("Mine."), encoding="utf-8")
    assert read_transcript(str(checkout / "own" / "t.jsonl"), 0, checkout=checkout).texts == [
        "Mine."
    ]


def test_a_relative_or_linked_transcript_reads_as_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "t.jsonl").write_text(_said("Here."), encoding="utf-8")
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "t.jsonl")
    monkeypatch.chdir(tmp_path)
    assert read_transcript("t.jsonl", 0).texts == []
    assert read_transcript(str(tmp_path / "link.jsonl"), 0).texts == []
    assert read_transcript(str(tmp_path / "t.jsonl"), 0).texts == ["Here."]


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_another_users_transcript_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(_said("Theirs."), encoding="utf-8")
    os.chown(path, 65534, 65534)
    assert read_transcript(str(path), 0).texts == []

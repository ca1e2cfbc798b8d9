"""Reading what an agent said from a host's transcript, from where the last read stopped.

Transcripts are JSON lines that grow during a session (Claude Code writes ``user`` and
``assistant`` rows whose ``message.content`` holds the text; Codex writes ``response_item``
rows with a ``payload`` of role ``assistant``). :func:`read_transcript` reads complete lines
after ``offset`` (at most :data:`MAX_READ` bytes a call, so a long transcript is read over
several hooks) and returns the assistant texts it finds with the new offset, and how many file
edits and commands the agent ran (its tool calls named in :data:`ACTION_TOOLS`), which tell a
session that did real work from a trivial one. A line that does not decode (nested too deep
for the decoder included) is passed over, so it can never hold the offset back and stop a
session's proposal filing.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

MAX_READ = 4 << 20
"""The most bytes of transcript read by one hook."""
ACTION_TOOLS = frozenset(
    {
        # Claude Code
        "Bash",
        "Edit",
        "MultiEdit",
        "NotebookEdit",
        "Write",
        # Codex
        "apply_patch",
        "exec_command",
        "local_shell",
        "shell",
    }
)
"""The tool calls that edit a file or run a command."""


class Reading(NamedTuple):
    """What one read of a transcript found."""

    texts: list[str]
    """The assistant texts."""
    actions: int
    """The tool calls that edit a file or run a command (:data:`ACTION_TOOLS`)."""
    offset: int
    """Where the next read starts."""


def read_transcript(path: str | None, offset: int, *, checkout: Path | None = None) -> Reading:
    """The assistant texts and the count of edits and commands in the complete lines of
    ``path`` after byte ``offset``, and the offset to start from next time. A file now
    shorter than ``offset`` (rewritten) is read from the start.

    The host names the transcript, but not everything on its way is the host's: what is
    missing, relative, not a regular file, not the user's own, a link, or reached through a
    link inside ``checkout`` (a folder the repository shipped) reads as nothing."""
    if not path or not os.path.isabs(path) or _linked_in(Path(path), checkout):
        return Reading([], 0, offset)
    try:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
    except OSError:
        return Reading([], 0, offset)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            return Reading([], 0, offset)
        if info.st_size < offset:
            offset = 0
        handle.seek(offset)
        chunk = handle.read(MAX_READ)
    end = chunk.rfind(b"\n")
    if end < 0:
        # no complete line yet; a single line longer than MAX_READ is skipped whole
        return Reading([], 0, offset + len(chunk) if len(chunk) >= MAX_READ else offset)
    texts: list[str] = []
    actions = 0
    for line in chunk[: end + 1].splitlines():
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):  # a line nested too deep for the decoder
            continue
        texts.extend(assistant_texts(row))
        actions += tool_actions(row)
    return Reading(texts, actions, offset + end + 1)


def _linked_in(path: Path, checkout: Path | None) -> bool:
    """True when a folder of ``path`` below ``checkout`` is a symbolic link."""
    if checkout is None:
        return False
    path = Path(os.path.normpath(path))
    if not path.is_relative_to(checkout):
        return False
    current = Path(checkout)
    for part in path.relative_to(checkout).parts[:-1]:
        current = current / part
        if current.is_symlink():
            return True
    return False


def tool_actions(row: Any) -> int:
    """How many tool calls in ``row`` edit a file or run a command: Claude Code's
    ``tool_use`` blocks of an assistant message, Codex's ``function_call`` /
    ``custom_tool_call`` / ``local_shell_call`` items."""
    if not isinstance(row, dict):
        return 0
    payload = row.get("payload")
    if isinstance(payload, dict) and payload.get("type") in (
        "function_call",
        "custom_tool_call",
        "local_shell_call",
    ):
        name = "local_shell" if payload["type"] == "local_shell_call" else payload.get("name")
        return 1 if name in ACTION_TOOLS else 0
    message = row.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return 0
    return sum(
        1
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "tool_use"
        and block.get("name") in ACTION_TOOLS
    )


def assistant_texts(row: Any) -> Iterator[str]:
    """The text an assistant message in ``row`` carries (Claude Code and Codex shapes)."""
    if not isinstance(row, dict):
        return
    for message in (row, row.get("message"), row.get("payload")):
        if isinstance(message, dict) and message.get("role") == "assistant":
            yield from _content_text(message.get("content"))
            return
    if row.get("type") == "assistant" and isinstance(row.get("message"), dict):
        yield from _content_text(row["message"].get("content"))


def _content_text(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                yield block["text"]

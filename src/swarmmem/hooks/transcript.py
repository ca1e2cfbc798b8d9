"""Reading what an agent said from a host's transcript, from where the last read stopped.

Transcripts are JSON lines that grow during a session (Claude Code writes ``user`` and
``assistant`` rows whose ``message.content`` holds the text; Codex writes ``response_item``
rows with a ``payload`` of role ``assistant``). :func:`read_assistant_texts` reads complete lines
after ``offset`` (at most :data:`MAX_READ` bytes a call, so a long transcript is read over
several hooks) and returns the assistant texts it finds with the new offset. A line that does
not decode (nested too deep for the decoder included) is passed over, so it can never hold the
offset back and stop a session's proposal filing.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from typing import Any

MAX_READ = 4 << 20
"""The most bytes of transcript read by one hook."""


def read_assistant_texts(path: str | None, offset: int) -> tuple[list[str], int]:
    """The assistant texts in the complete lines of ``path`` after byte ``offset``, and the
    offset to start from next time. A missing or irregular file reads as nothing; a file now
    shorter than ``offset`` (rewritten) is read from the start."""
    if not path:
        return [], offset
    try:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
    except OSError:
        return [], offset
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return [], offset
        if info.st_size < offset:
            offset = 0
        handle.seek(offset)
        chunk = handle.read(MAX_READ)
    end = chunk.rfind(b"\n")
    if end < 0:
        # no complete line yet; a single line longer than MAX_READ is skipped whole
        return [], offset + len(chunk) if len(chunk) >= MAX_READ else offset
    texts: list[str] = []
    for line in chunk[: end + 1].splitlines():
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):  # a line nested too deep for the decoder
            continue
        texts.extend(assistant_texts(row))
    return texts, offset + end + 1


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

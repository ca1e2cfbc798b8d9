"""The MCP server's stdin guard: a request nested deeper than :data:`MAX_REQUEST_DEPTH` is
answered with a JSON-RPC "Invalid Request" error and never parsed.

The transport's JSON parser gives up on very deep input (a request nested 50,000 levels)
without knowing the request's id, so such a request was never answered. Here each stdin line
is measured first, in linear time and without recursion; a line too deep is answered through
the transport's own writer (so responses never interleave) with the id found at its top level,
else ``null``, and the server goes on with the next line.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any

#: the deepest nesting of objects and arrays a request line may have
MAX_REQUEST_DEPTH = 64
_OPENERS = "{["
_CLOSERS = "}]"


def too_deep(line: str, limit: int = MAX_REQUEST_DEPTH) -> bool:
    """Whether ``line`` nests objects and arrays more than ``limit`` levels deep (brackets
    inside strings do not count)."""
    if line.count("{") + line.count("[") <= limit:
        return False
    depth = 0
    in_string = escaped = False
    for char in line:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in _OPENERS:
            depth += 1
            if depth > limit:
                return True
        elif char in _CLOSERS:
            depth -= 1
    return False


def top_level_id(line: str) -> int | str | None:
    """The ``id`` member of the JSON object ``line`` when it stands at the top level (before
    or between nested values) and is a number or a string; else ``None``."""
    decoder = json.JSONDecoder()
    depth = 0
    i, n = 0, len(line)
    while i < n:
        char = line[i]
        if char == '"':
            try:
                key, end = decoder.raw_decode(line, i)  # a string: flat, no recursion
            except ValueError:
                return None
            if depth == 1 and key == "id":
                rest = line[end:].lstrip()
                if rest.startswith(":"):
                    start = n - len(rest) + 1
                    while start < n and line[start] in " \t\r\n":
                        start += 1
                    if start < n and (line[start] == '"' or line[start] in "-0123456789"):
                        try:
                            value, _ = decoder.raw_decode(line, start)
                        except ValueError:
                            return None
                        if isinstance(value, bool) or not isinstance(value, int | str):
                            return None
                        return value
            i = end
            continue
        if char in _OPENERS:
            depth += 1
        elif char in _CLOSERS:
            depth -= 1
        i += 1
    return None


class GuardedLines:
    """The transport's stdin lines, each too deep one answered (see the module text) instead.

    ``attach`` gives the transport's write stream; a too-deep line read before that waits
    for it."""

    def __init__(self, lines: AsyncIterable[str]) -> None:
        import anyio

        self._lines = lines
        self._ready = anyio.Event()
        self._write: Any = None

    def attach(self, write_stream: Any) -> None:
        self._write = write_stream
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[str]:
        async for line in self._lines:
            if not too_deep(line):
                yield line
                continue
            await self._ready.wait()
            await self._write.send(refusal(line))


def refusal(line: str) -> Any:
    """The JSON-RPC "Invalid Request" error answering a too-deep ``line``."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    error = types.ErrorData(
        code=types.INVALID_REQUEST,
        message=f"request nested deeper than {MAX_REQUEST_DEPTH} levels; not read",
    )
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=top_level_id(line), error=error))


def stdin_lines() -> Any:
    """This process's stdin as the transport reads it (UTF-8, bad bytes replaced), in a text
    layer that leaves the underlying buffer open when it goes away."""
    import contextlib
    import io
    import sys

    import anyio

    class _Unowned(io.TextIOWrapper):
        def close(self) -> None:
            with contextlib.suppress(ValueError):
                self.detach()

    return anyio.wrap_file(_Unowned(sys.stdin.buffer, encoding="utf-8", errors="replace"))

"""The MCP server object and its stdio run: ``swarmmem mcp``.

It is built on the low-level :class:`mcp.server.Server` of the official SDK (2.x) because the
tools need hand-written JSON schemas, a tool list that follows the configuration (no tools
while memory is disabled) and one uniform error result. Results are pretty-printed JSON text,
also sent as ``structuredContent``. Calls run one at a time on the server's event loop, so a
store is never used from two threads; whatever is still open is closed when the server shuts
down.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from typing import Any, cast

from swarmmem import config as _config
from swarmmem._version import __version__
from swarmmem.core.model.errors import SwarmMemoryError
from swarmmem.mcp.descriptions import CURATOR_INSTRUCTIONS, INSTRUCTIONS
from swarmmem.mcp.stdio import GuardedLines, stdin_lines
from swarmmem.mcp.tools import MemoryTools

log = logging.getLogger("swarmmem.mcp")


def _require_mcp() -> None:
    """Raise :class:`MissingDependencyError` naming the extra when ``mcp`` is missing."""
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        from swarmmem.core.model.errors import MissingDependencyError

        raise MissingDependencyError(
            "the MCP server needs the 'mcp' package: pip install 'swarmmem[mcp]'"
        )


def build_server(tools: MemoryTools) -> Any:
    """A low-level MCP :class:`mcp.server.Server` serving ``tools``."""
    _require_mcp()
    from mcp import types
    from mcp.server import Server
    from mcp.shared.exceptions import MCPError

    async def list_tools(ctx: Any, params: Any) -> Any:
        try:
            specs = tools.tool_specs()
        except SwarmMemoryError as exc:
            raise MCPError(code=types.INTERNAL_ERROR, message=str(exc)) from None
        return types.ListToolsResult(tools=[types.Tool.model_validate(s) for s in specs])

    async def call_tool(ctx: Any, params: Any) -> Any:
        request_id = None if ctx.request_id is None else str(ctx.request_id)
        payload, is_error = tools.call(params.name, params.arguments, request_id)
        return types.CallToolResult(
            content=[
                types.TextContent(
                    type="text", text=json.dumps(payload, indent=2, ensure_ascii=False)
                )
            ],
            structured_content=payload,
            is_error=is_error,
        )

    return Server(
        "swarmmem",
        version=__version__,
        instructions=INSTRUCTIONS + (CURATOR_INSTRUCTIONS if tools.curator else ""),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def run_stdio(tools: MemoryTools) -> None:
    """Serve ``tools`` on this process's stdin/stdout until the client closes stdin."""
    from mcp.server.stdio import stdio_server

    server = build_server(tools)
    guard = GuardedLines(stdin_lines())  # a too-deep request is answered, not parsed
    async with stdio_server(stdin=cast(Any, guard)) as (read_stream, write_stream):
        guard.attach(write_stream)
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve(
    root: str | os.PathLike[str],
    config: Mapping[str, Any] | str | os.PathLike[str] | None = None,
    context: Mapping[str, Any] | None = None,
) -> None:
    """Run the MCP server over stdio for the project at ``root`` (blocks until stdin closes).

    The server refuses to start (nothing is created) when ``root`` is not an existing
    directory. It starts while memory is disabled, with a warning on stderr: the tool list
    follows the configuration, which is read again on every request.

    Raises:
        NotFoundError: ``root`` does not exist or is not a directory.
        ConfigError: the configuration is malformed (before anything is served).
        MissingDependencyError: the ``mcp`` extra is not installed.
    """
    import anyio

    _require_mcp()
    tools = MemoryTools(root, config, context)
    if not tools.enabled():
        source = config if isinstance(config, (str, os.PathLike)) else None
        if config is None:
            source = tools.root / _config.CONFIG_RELATIVE_PATH
        log.warning(
            "swarmmem mcp: memory is disabled for %s, so no tools are listed until "
            "memory.enabled is true in %s",
            tools.root,
            source or "the configuration passed in",
        )
    try:
        anyio.run(run_stdio, tools)
    except KeyboardInterrupt:
        pass
    finally:
        tools.close()

"""The swarmmem MCP server: ``swarm_memory_recall``, ``swarm_memory_propose`` and
``swarm_memory_outcome`` over stdio (and, for a granted curator, ``swarm_memory_pending`` and
``swarm_memory_curate``).

Run it with ``swarmmem --root <project> [--session ID] [--role ROLE] mcp``. The project root
must be an existing directory: :func:`serve` refuses to start otherwise.

Scopes come only from the server's project root and context: the session id is ``--session``
or a fresh UUID per server process. Tool arguments never name a scope; unknown arguments are
refused.

Arguments: every documented argument name is camelCase (``maxItems``, ``evidenceRefs``,
``targetMemoryId``, ``relatedMemoryIds``, ``memoryId``); its snake_case spelling (``max_items``,
``memory_id``, ...) is accepted as an alias that the input schemas do not advertise. Giving both
spellings of one argument with different values is a validation error. Every tool lists
annotations (recall is read-only; propose and outcome only add) and an output schema.

Results are pretty-printed JSON text, also sent as ``structuredContent`` (which matches the
tool's output schema). Invalid arguments and refused operations come back as tool errors
(``isError``) holding ``{"success": false, "error": <code>, "message": ...}``, one message
naming every offending argument and what it accepts; an unexpected failure is logged to stderr
and reported the same way, so the server keeps serving. While memory is disabled a call returns
``{"success": false, "disabled": true, "message": ...}`` as an ordinary result, like the
reference tools do.

The modules: :mod:`~swarmmem.mcp.schemas` (tool names, input and output schemas),
:mod:`~swarmmem.mcp.descriptions` (descriptions, annotations, server instructions),
:mod:`~swarmmem.mcp.validation` (aliases and argument rules), :mod:`~swarmmem.mcp.errors`
(argument messages, library errors to error results), :mod:`~swarmmem.mcp.tools` (what each
tool does with a memory; :class:`MemoryTools`), :mod:`~swarmmem.mcp.curator` (the curator's
tools), :mod:`~swarmmem.mcp.stdio` (the stdin guard) and :mod:`~swarmmem.mcp.server` (the
server object and :func:`serve`).
"""

from __future__ import annotations

from swarmmem.mcp.curator import CURATE, CURATOR_TOOLS, PENDING
from swarmmem.mcp.descriptions import ANNOTATIONS, DESCRIPTIONS
from swarmmem.mcp.schemas import OUTCOME, OUTPUT_SCHEMAS, PROPOSE, RECALL, SCHEMAS, TOOL_NAMES
from swarmmem.mcp.server import build_server, serve
from swarmmem.mcp.tools import MemoryTools
from swarmmem.mcp.validation import ALIASES, validate_arguments

__all__ = [
    "ALIASES",
    "ANNOTATIONS",
    "CURATE",
    "CURATOR_TOOLS",
    "DESCRIPTIONS",
    "OUTCOME",
    "OUTPUT_SCHEMAS",
    "PENDING",
    "PROPOSE",
    "RECALL",
    "SCHEMAS",
    "TOOL_NAMES",
    "MemoryTools",
    "build_server",
    "serve",
    "validate_arguments",
]

"""The swarmmem MCP server: ``swarm_memory_recall``, ``swarm_memory_propose`` and
``swarm_memory_outcome`` over stdio.

Run it with ``swarmmem --root <project> [--session ID] [--role ROLE] mcp``. It is built on the
low-level :class:`mcp.server.Server` of the official SDK (2.x) because the tools need
hand-written JSON schemas (``additionalProperties: false``), a tool list that follows the
configuration (no tools while memory is disabled) and one uniform error result.

Scopes come only from the server's project root and context: the session id is ``--session``
or a fresh UUID per server process. Tool arguments never name a scope; unknown arguments are
refused.

Memory lifetime: every tool call opens the project's memory, runs, and closes it again. The
configuration (``memory.enabled`` included) is therefore read per call, and a file-backed
store always sees what a curator wrote from another process meanwhile (the JSONL store replays
its files on open and assumes one writer, so a long-lived handle would go stale). The one
exception is the in-process ``memory`` provider, which persists nothing: it keeps a single
:class:`~swarmmem.memory.Memory` for the server's lifetime. Whatever is still open is closed
when the server shuts down. Calls run one at a time on the server's event loop, so a store is
never used from two threads.

Results are pretty-printed JSON text (also sent as ``structuredContent``). Invalid arguments
and refused operations come back as tool errors (``isError``) holding
``{"success": false, "error": <code>, "message": ...}``; an unexpected failure is logged to
stderr and reported the same way, so the server keeps serving. While memory is disabled a call
returns ``{"success": false, "disabled": true, "message": ...}`` as an ordinary result, like
the reference tools do.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from swarmmem import config as _config
from swarmmem._version import __version__
from swarmmem.core.model.errors import MemoryDisabledError, MemoryValidationError, SwarmMemoryError
from swarmmem.core.model.records import MEMORY_KINDS, OUTCOMES, PROPOSAL_OPERATIONS
from swarmmem.core.writes.service import MAX_ANCHORS, tool_event_id
from swarmmem.memory import Memory
from swarmmem.results import bundle_json, disabled_result, error_result, proposal_json

log = logging.getLogger("swarmmem.mcp")

RECALL = "swarm_memory_recall"
PROPOSE = "swarm_memory_propose"
OUTCOME = "swarm_memory_outcome"
TOOL_NAMES = (RECALL, PROPOSE, OUTCOME)

MAX_EVIDENCE_REFS = 20
MAX_RELATED_IDS = 8  # a merge joins at most 8 memories (curator rule)

RECALL_OMITS = ("items", "diagnostics")
"""Keys of the CLI's recall JSON that a recall tool result leaves out."""


def _text(min_length: int, max_length: int, description: str) -> dict[str, Any]:
    return {
        "type": "string",
        "minLength": min_length,
        "maxLength": max_length,
        "description": description,
    }


RECALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": _text(3, 2000, "What you need to know (at least 3 characters)."),
        "kinds": {
            "type": "array",
            "items": {"type": "string", "enum": list(MEMORY_KINDS)},
            "maxItems": len(MEMORY_KINDS),
            "description": "Only recall these memory kinds.",
        },
        "maxItems": {
            "type": "integer",
            "minimum": 1,
            "maximum": 20,
            "description": "Most memories to return (default from configuration).",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}

PROPOSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "operation": {
            "type": "string",
            "enum": list(PROPOSAL_OPERATIONS),
            "description": "What the curator should do.",
        },
        "kind": {
            "type": "string",
            "enum": list(MEMORY_KINDS),
            "description": "Memory kind; required for add, update and supersede.",
        },
        "text": _text(1, 2000, "The concise fact; required for add, update and supersede."),
        "targetMemoryId": _text(1, 200, "The memory to update, delete or supersede."),
        "relatedMemoryIds": {
            "type": "array",
            "items": _text(1, 200, "A memory id."),
            "maxItems": MAX_RELATED_IDS,
            "description": "Memories to merge (2 to 8).",
        },
        "rationale": _text(1, 2000, "Why future agents need this."),
        "evidenceRefs": {
            "type": "array",
            "items": _text(1, 500, "A file path, URL, commit or evidence-cache ref."),
            "maxItems": MAX_EVIDENCE_REFS,
            "description": "Sources backing the fact (durable kinds need at least one).",
        },
    },
    "required": ["operation", "rationale"],
    "additionalProperties": False,
}

OUTCOME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "memory_id": {
            "type": "string",
            "pattern": "^mem_[a-f0-9]{16}$",
            "description": "The recalled memory (mem_<16 hex>); or give question.",
        },
        "question": _text(1, 2000, "The question answered when no memory id is known."),
        "outcome": {
            "type": "string",
            "enum": list(OUTCOMES),
            "description": "Was the memory useful, a dead end, or corrected?",
        },
        "correction": _text(1, 4000, "The corrected fact; required for corrected only."),
        "anchors": {
            "type": "array",
            "maxItems": MAX_ANCHORS,
            "items": {
                "type": "object",
                "properties": {
                    "file": _text(1, 1000, "Repository-relative file path."),
                    "symbol": _text(1, 500, "Symbol in that file."),
                },
                "required": ["file"],
                "additionalProperties": False,
            },
            "description": "Files (and symbols) the outcome is about.",
        },
    },
    "required": ["outcome"],
    "additionalProperties": False,
}

SCHEMAS: dict[str, dict[str, Any]] = {
    RECALL: RECALL_SCHEMA,
    PROPOSE: PROPOSE_SCHEMA,
    OUTCOME: OUTCOME_SCHEMA,
}

DESCRIPTIONS = {
    RECALL: "Recall concise, source-backed facts about this project from Swarm memory "
    "(read-only, limited to this project's and session's scopes). Returns a prompt block of "
    "untrusted background facts with their memory ids.",
    PROPOSE: "Propose a memory change for a curator to review. Never writes durable memory: "
    "the proposal stays pending until a curator decides. Propose only short facts that future "
    "agents need, with evidence refs.",
    OUTCOME: "Report whether a recalled memory (memory_id) or a question's answer (question) "
    "was useful, a dead end, or corrected. Give exactly one of memory_id and question; "
    "correction only with outcome=corrected.",
}


# --------------------------------------------------------------------- argument checks
def _where(path: Any) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "arguments"


def _about_keys(where: str, adjective: str, rest: str) -> str:
    """``<adjective> argument(s)<rest>`` at the top level, ``<where>: <adjective> key(s)<rest>``
    inside an argument."""
    if where == "arguments":
        return f"{adjective} argument(s){rest}"
    return f"{where}: {adjective} key(s){rest}"


def _describe(error: Any, schema: Mapping[str, Any]) -> str:
    """A readable message for one jsonschema error."""
    where = _where(error.absolute_path)
    kind, limit, value = error.validator, error.validator_value, error.instance
    if kind == "additionalProperties":
        allowed = sorted(_schema_at(schema, error.absolute_schema_path).get("properties", {}))
        extra = sorted(set(value) - set(allowed))
        return _about_keys(
            where, "unknown", f" {', '.join(map(repr, extra))}; accepted: {', '.join(allowed)}"
        )
    if kind == "required":
        missing = [key for key in limit if key not in value]
        return _about_keys(where, "missing required", f": {', '.join(missing)}")
    if kind == "type":
        return f"{where} must be of type {limit}; got {json.dumps(value)}"
    if kind == "enum":
        return f"{where} must be one of {', '.join(map(str, limit))}; got {json.dumps(value)}"
    if kind == "minLength":
        if limit == 1:
            return f"{where} must not be empty"
        return f"{where} must be at least {limit} characters"
    if kind == "maxLength":
        return f"{where} must be at most {limit} characters"
    if kind == "minimum":
        return f"{where} must be >= {limit}; got {json.dumps(value)}"
    if kind == "maximum":
        return f"{where} must be <= {limit}; got {json.dumps(value)}"
    if kind == "maxItems":
        return f"{where} accepts at most {limit} items; got {len(value)}"
    if kind == "pattern":
        return f"{where} must match {limit}; got {json.dumps(value)}"
    return f"{where}: {error.message}"


def _schema_at(schema: Mapping[str, Any], path: Any) -> Mapping[str, Any]:
    """The sub-schema at a jsonschema ``absolute_schema_path`` (without its last keyword)."""
    node: Any = schema
    for part in list(path)[:-1]:
        node = node[part]
    return node  # type: ignore[no-any-return]


_VALIDATORS: dict[str, Any] = {}


def validate_arguments(tool: str, arguments: Any) -> dict[str, Any]:
    """Check ``arguments`` against the tool's input schema.

    Raises:
        MemoryValidationError: naming every offending argument.
    """
    if arguments is None:
        arguments = {}
    schema = SCHEMAS[tool]
    if not isinstance(arguments, Mapping):
        raise MemoryValidationError(f"{tool}: arguments must be an object")
    validator = _VALIDATORS.get(tool)
    if validator is None:
        from jsonschema import Draft202012Validator

        validator = _VALIDATORS[tool] = Draft202012Validator(schema)
    errors = sorted(
        validator.iter_errors(dict(arguments)),
        key=lambda e: (list(map(str, e.absolute_path)), str(e.validator)),
    )
    if errors:
        raise MemoryValidationError(
            f"invalid arguments for {tool}: " + "; ".join(_describe(e, schema) for e in errors)
        )
    return dict(arguments)


# ------------------------------------------------------------------------- the tools
def _recall(mem: Memory, args: dict[str, Any], _request_id: str | None) -> dict[str, Any]:
    bundle = mem.recall(
        args["query"], kinds=args.get("kinds") or None, max_items=args.get("maxItems")
    )
    return {key: value for key, value in bundle_json(bundle).items() if key not in RECALL_OMITS}


def _propose(mem: Memory, args: dict[str, Any], _request_id: str | None) -> dict[str, Any]:
    prop = mem.propose(
        operation=args["operation"],
        kind=args.get("kind"),
        text=args.get("text"),
        rationale=args["rationale"],
        evidence_refs=args.get("evidenceRefs"),
        target_memory_id=args.get("targetMemoryId"),
        related_memory_ids=args.get("relatedMemoryIds"),
    )
    return proposal_json(prop, with_proposal=False)


def _outcome(mem: Memory, args: dict[str, Any], request_id: str | None) -> dict[str, Any]:
    event_id = tool_event_id(mem.context.session_id, request_id, args)
    return mem.record_outcome(
        memory_id=args.get("memory_id"),
        question=args.get("question"),
        outcome=args["outcome"],
        correction=args.get("correction"),
        anchors=args.get("anchors"),
        event_id=event_id,
    )


_HANDLERS: dict[str, Callable[[Memory, dict[str, Any], str | None], dict[str, Any]]] = {
    RECALL: _recall,
    PROPOSE: _propose,
    OUTCOME: _outcome,
}


class MemoryTools:
    """The three tools bound to one project root and one server context (no MCP types here).

    Args:
        root: the project root; scopes derive from it.
        config: ``None`` (the project's ``.opencode/opencode-swarm.json``), a dict of the
            ``memory`` section or a path to a JSON file, as for :func:`swarmmem.open`.
        context: ``session_id`` (a UUID is generated when absent), ``run_id``,
            ``agent_role``, ``agent_id``, ``unit_id``.

    Raises:
        ConfigError: the configuration is malformed (checked once, at construction).
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        config: Mapping[str, Any] | str | os.PathLike[str] | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        self.config = config
        ctx = {key: value for key, value in dict(context or {}).items() if value is not None}
        ctx.setdefault("session_id", str(uuid.uuid4()))
        self.context = ctx
        self._resident: Memory | None = None
        Memory.open(self.root, self.config, context=self.context).close()  # fail fast

    @property
    def session_id(self) -> str:
        """The session id every call of this server runs under."""
        return str(self.context["session_id"])

    @contextmanager
    def memory(self) -> Iterator[Memory]:
        """The memory for one call: opened per call, or the resident one for ``memory``."""
        if self._resident is not None:
            yield self._resident
            return
        mem = Memory.open(self.root, self.config, context=self.context)
        if mem.config["provider"] == "memory":
            self._resident = mem
            yield mem
            return
        try:
            yield mem
        finally:
            mem.close()

    def enabled(self) -> bool:
        """Whether memory is enabled right now (the configuration is read again)."""
        if self._resident is not None:
            return bool(self._resident.enabled)
        return bool(_config.load(self.root, self.config)["enabled"])

    def tool_specs(self) -> list[dict[str, Any]]:
        """``name``, ``description`` and ``inputSchema`` of each tool (none when disabled)."""
        if not self.enabled():
            return []
        return [
            {"name": name, "description": DESCRIPTIONS[name], "inputSchema": SCHEMAS[name]}
            for name in TOOL_NAMES
        ]

    def call(
        self, name: str, arguments: Any, request_id: str | None = None
    ) -> tuple[dict[str, Any], bool]:
        """Run one tool call; returns ``(payload, is_error)`` and never raises."""
        if name not in _HANDLERS:
            return error_result(
                "unknown_tool", f"unknown tool {name!r}; tools: " + ", ".join(TOOL_NAMES)
            ), True
        try:
            with self.memory() as mem:
                if not mem.enabled:
                    return disabled_result(), False
                args = validate_arguments(name, arguments)
                return _HANDLERS[name](mem, args, request_id), False
        except MemoryDisabledError:
            return disabled_result(), False
        except SwarmMemoryError as exc:
            return error_result(exc.code, str(exc)), True
        except Exception as exc:
            log.exception("%s failed unexpectedly", name)
            return error_result("internal_error", f"{type(exc).__name__}: {exc}"), True

    def close(self) -> None:
        """Close the resident memory, if any. Idempotent."""
        if self._resident is not None:
            self._resident.close()
            self._resident = None


# ------------------------------------------------------------------------ MCP wiring
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
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=s["name"], description=s["description"], input_schema=s["inputSchema"]
                )
                for s in specs
            ]
        )

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
        instructions="Scoped project memory: recall facts, propose new ones for curator review, "
        "and report outcomes of recalled memories.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def run_stdio(tools: MemoryTools) -> None:
    """Serve ``tools`` on this process's stdin/stdout until the client closes stdin."""
    from mcp.server.stdio import stdio_server

    server = build_server(tools)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve(
    root: str | os.PathLike[str],
    config: Mapping[str, Any] | str | os.PathLike[str] | None = None,
    context: Mapping[str, Any] | None = None,
) -> None:
    """Run the MCP server over stdio for the project at ``root`` (blocks until stdin closes).

    Raises:
        ConfigError: the configuration is malformed (before anything is served).
        MissingDependencyError: the ``mcp`` extra is not installed.
    """
    import anyio

    _require_mcp()
    tools = MemoryTools(root, config, context)
    try:
        anyio.run(run_stdio, tools)
    except KeyboardInterrupt:
        pass
    finally:
        tools.close()

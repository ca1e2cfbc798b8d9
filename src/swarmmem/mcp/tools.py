"""The MCP tools bound to one project root: what each tool does with a :class:`Memory`, and
:class:`MemoryTools`, which runs one call (no MCP types here).

Memory lifetime: every tool call opens the project's memory, runs, and closes it again. The
configuration (``memory.enabled`` included) is therefore read per call, and a file-backed
store always sees what a curator wrote from another process meanwhile (the JSONL store replays
its files on open and assumes one writer, so a long-lived handle would go stale). The one
exception is the in-process ``memory`` provider, which persists nothing: it keeps a single
:class:`~swarmmem.memory.Memory` for the server's lifetime.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from swarmmem import config as _config
from swarmmem.api import open as open_memory
from swarmmem.core.model.errors import NotFoundError
from swarmmem.core.writes.service import tool_event_id
from swarmmem.grants import effective_role
from swarmmem.mcp import curator
from swarmmem.mcp.descriptions import ANNOTATIONS, DESCRIPTIONS
from swarmmem.mcp.errors import failure, unknown_tool
from swarmmem.mcp.schemas import OUTCOME, OUTPUT_SCHEMAS, PROPOSE, RECALL, SCHEMAS, TOOL_NAMES
from swarmmem.mcp.validation import validate_arguments
from swarmmem.memory import Memory
from swarmmem.registry import store_traits
from swarmmem.results import bundle_json, disabled_result, proposal_json

log = logging.getLogger("swarmmem.mcp")

RECALL_OMITS = ("items", "diagnostics")
"""Keys of the CLI's recall JSON that a recall tool result leaves out."""


def _recall(mem: Memory, args: dict[str, Any], _request_id: str | None) -> dict[str, Any]:
    """swarm_memory_recall: the recall bundle, without its items and diagnostics."""
    bundle = mem.recall(
        args["query"],
        task=args.get("task"),
        kinds=args.get("kinds") or None,
        max_items=args.get("maxItems"),
    )
    return {key: value for key, value in bundle_json(bundle).items() if key not in RECALL_OMITS}


def _propose(mem: Memory, args: dict[str, Any], _request_id: str | None) -> dict[str, Any]:
    """swarm_memory_propose: file a pending proposal for a curator."""
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
    """swarm_memory_outcome: record an outcome, one event per request id."""
    # The event id hashes the arguments as the reference tool names them (memory_id), so
    # either spelling, and servers before the camelCase names, give a retry the same id.
    hashed = {("memory_id" if key == "memoryId" else key): value for key, value in args.items()}
    event_id = tool_event_id(mem.context.session_id, request_id, hashed)
    return mem.record_outcome(
        memory_id=args.get("memoryId"),
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
    curator.PENDING: curator.pending,
    curator.CURATE: curator.curate,
}


def check_root(root: str | os.PathLike[str]) -> Path:
    """The absolute project root, which must be an existing directory.

    Raises:
        NotFoundError: it does not exist or is not a directory.
    """
    path = Path(root).resolve()
    if not path.exists():
        raise NotFoundError(f"project root {path} does not exist (check --root)")
    if not path.is_dir():
        raise NotFoundError(f"project root {path} is not a directory (check --root)")
    return path


class MemoryTools:
    """The three tools bound to one project root and one server context (no MCP types here).

    Args:
        root: the project root; scopes derive from it.
        config: ``None`` (the project's ``.opencode/opencode-swarm.json``), a dict of the
            ``memory`` section or a path to a JSON file, as for :func:`swarmmem.open`.
        context: ``session_id`` (a UUID is generated when absent), ``run_id``,
            ``agent_role``, ``agent_id``, ``unit_id``.

    Raises:
        NotFoundError: ``root`` is not an existing directory (nothing is opened or created).
        ConfigError: the configuration is malformed (checked once, at construction).
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        config: Mapping[str, Any] | str | os.PathLike[str] | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> None:
        self.root = check_root(root)
        self.config = config
        ctx = {key: value for key, value in dict(context or {}).items() if value is not None}
        ctx.setdefault("session_id", str(uuid.uuid4()))
        role, warning = effective_role(self.root, ctx.get("agent_role"))
        if warning:
            log.warning("swarmmem mcp: %s", warning)
            ctx.pop("agent_role", None)
        self.curator = role is not None and role.strip().lower() == "curator"
        self.context = ctx
        self._resident: Memory | None = None
        first = open_memory(self.root, self.config, context=self.context)  # fail fast
        try:
            # with embeddings on, the model starts loading (in the background, shared by
            # every later call) before the first request arrives; a failure here is only a
            # missed head start: the calls report it as before
            first.prepare_writes()
        except Exception as exc:
            log.debug("swarmmem mcp: no early model load (%s)", exc)
        finally:
            first.close()

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
        mem = open_memory(self.root, self.config, context=self.context)
        if store_traits(mem.settings.provider).in_process:
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

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The tools this server offers: the curator's too when the role is granted."""
        return TOOL_NAMES + (curator.CURATOR_TOOLS if self.curator else ())

    def tool_specs(self) -> list[dict[str, Any]]:
        """Each tool as MCP lists it (``name``, ``description``, ``inputSchema``,
        ``outputSchema``, ``annotations``); none while memory is disabled."""
        if not self.enabled():
            return []
        return [
            {
                "name": name,
                "description": DESCRIPTIONS[name],
                "inputSchema": SCHEMAS[name],
                "outputSchema": OUTPUT_SCHEMAS[name],
                "annotations": ANNOTATIONS[name],
            }
            for name in self.tool_names
        ]

    def call(
        self, name: str, arguments: Any, request_id: str | None = None
    ) -> tuple[dict[str, Any], bool]:
        """Run one tool call; returns ``(payload, is_error)`` and never raises."""
        if name not in self.tool_names:
            return unknown_tool(name, self.tool_names), True
        try:
            with self.memory() as mem:
                if not mem.enabled:
                    return disabled_result(), False
                args = validate_arguments(name, arguments)
                return _HANDLERS[name](mem, args, request_id), False
        except Exception as exc:
            return failure(name, exc)

    def close(self) -> None:
        """Close the resident memory, if any. Idempotent."""
        if self._resident is not None:
            self._resident.close()
            self._resident = None

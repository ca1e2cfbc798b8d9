"""How a failed MCP tool call is reported: readable messages for invalid arguments, and the
mapping of library errors to the uniform error result.

An invalid argument becomes one sentence naming the argument (as the caller spelled it) and
what it accepts. A refused operation (any :class:`SwarmMemoryError`) becomes the tool error
``{"success": false, "error": <code>, "message": ...}``; disabled memory becomes the ordinary
disabled result; an unexpected failure is logged to stderr and reported as ``internal_error``,
so the server keeps serving.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from swarmmem.core.model.errors import MemoryDisabledError, SwarmMemoryError
from swarmmem.results import disabled_result, error_result

log = logging.getLogger("swarmmem.mcp")


# ------------------------------------------------------------------ argument messages
def shown(value: Any) -> str:
    """``value`` as JSON, cut to 80 characters: how a message quotes what was given."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:79] + "…"


def accepts(node: Mapping[str, Any]) -> str:
    """What a schema node accepts, in words."""
    if "enum" in node:
        return "one of " + ", ".join(map(str, node["enum"]))
    kind = node.get("type")
    if kind == "string":
        if "pattern" in node:
            return f"a string matching {node['pattern']}"
        low, high = node.get("minLength", 0), node.get("maxLength")
        if low <= 1:
            return f"a non-empty string of at most {high} characters"
        return f"a string of {low} to {high} characters"
    if kind == "integer":
        return f"an integer from {node['minimum']} to {node['maximum']}"
    if kind == "array":
        return f"a list of at most {node['maxItems']} items, each {accepts(node['items'])}"
    if kind == "object":
        keys = [
            f"{key} (required)" if key in node.get("required", ()) else key
            for key in node.get("properties", {})
        ]
        return "an object with " + " and ".join(keys)
    return json.dumps(node)


def _schema_at(schema: Mapping[str, Any], path: Any) -> Mapping[str, Any]:
    """The sub-schema at a jsonschema ``absolute_schema_path`` (without its last keyword)."""
    node: Any = schema
    for part in list(path)[:-1]:
        node = node[part]
    return node  # type: ignore[no-any-return]


class ArgumentNames:
    """Argument names as the caller spelled them: ``memoryId (given as memory_id)``."""

    def __init__(self, given: Mapping[str, str]) -> None:
        self.given = given

    def __call__(self, name: str) -> str:
        alias = self.given.get(name)
        return name if alias is None else f"{name} (given as {alias})"

    def where(self, path: Any) -> str:
        out = ""
        for part in path:
            if isinstance(part, int):
                out += f"[{part}]"
            else:
                out += f".{part}" if out else self(str(part))
        return out or "arguments"


def describe(error: Any, schema: Mapping[str, Any], names: ArgumentNames) -> str:
    """A readable message for one jsonschema error: the argument, and what it accepts."""
    where = names.where(error.absolute_path)
    kind, limit, value = error.validator, error.validator_value, error.instance
    node = _schema_at(schema, error.absolute_schema_path)
    top = where == "arguments"
    if kind == "additionalProperties":
        accepted = ", ".join(node.get("properties", {}))
        extra = ", ".join(repr(key) for key in value if key not in node.get("properties", {}))
        if top:
            return f"unknown argument(s) {extra}; accepted: {accepted}"
        return f"{where}: unknown key(s) {extra}; accepted: {accepted}"
    if kind == "required":
        missing = ", ".join(
            f"{key} ({accepts(node['properties'][key])})" for key in limit if key not in value
        )
        if top:
            return f"missing required argument(s): {missing}"
        return f"{where}: missing required key(s): {missing}"
    allowed = accepts(node)
    if kind in ("minLength", "maxLength"):
        got = "an empty string" if value == "" else f"{len(value)} characters"
    elif kind == "maxItems":
        got = f"{len(value)} items"
    elif kind in ("type", "enum", "minimum", "maximum", "pattern"):
        got = shown(value)
    else:
        return f"{where}: {error.message}"
    return f"{where} must be {allowed}; got {got}"


# --------------------------------------------------------------------- failed calls
def unknown_tool(name: str, offered: Sequence[str]) -> dict[str, Any]:
    """The error result of a call to a tool this server does not offer."""
    return error_result("unknown_tool", f"unknown tool {name!r}; tools: " + ", ".join(offered))


def failure(tool: str, exc: Exception) -> tuple[dict[str, Any], bool]:
    """``(payload, is_error)`` for a call of ``tool`` that raised ``exc``.

    Call it from the ``except`` block, so an unexpected failure is logged with its traceback.
    """
    if isinstance(exc, MemoryDisabledError):
        return disabled_result(), False
    if isinstance(exc, SwarmMemoryError):
        return error_result(exc.code, str(exc)), True
    log.exception("%s failed unexpectedly", tool)
    return error_result("internal_error", f"{type(exc).__name__}: {exc}"), True

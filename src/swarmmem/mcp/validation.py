"""Checking a tool call's arguments: aliases, the input schema, and the rules one schema
cannot state.

Every documented argument name is camelCase; its snake_case spelling is accepted as an alias
that the input schemas do not advertise, and giving both spellings with different values is a
validation error. All problems of one call are reported together, in one message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.records import DURABLE_MEMORY_KINDS, EVIDENCE_REQUIRED_KINDS, MEMORY_KINDS
from swarmmem.mcp import curator
from swarmmem.mcp.errors import ArgumentNames, accepts, describe, shown
from swarmmem.mcp.schemas import MAX_RELATED_IDS, OUTCOME, PROPOSE, PROPOSE_SCHEMA, RECALL, SCHEMAS

RECORD_OPERATIONS = ("add", "update", "supersede")
"""Proposal operations that describe a memory (``kind`` and ``text`` required)."""
TARGET_OPERATIONS = ("update", "delete", "supersede")
"""Proposal operations that change an existing memory (``targetMemoryId`` required)."""
EVIDENCE_KINDS = tuple(
    kind
    for kind in MEMORY_KINDS
    if kind in DURABLE_MEMORY_KINDS | EVIDENCE_REQUIRED_KINDS | {"api_finding", "evidence"}
)
"""Kinds whose proposed memory needs a source (every kind but todo and scratch): the evidence
rules of :func:`swarmmem.core.writes.validation.validate_record` for a proposed record, which is
durable unless its kind is scratch."""


def snake_case(name: str) -> str:
    """``maxItems`` -> ``max_items``."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


ALIASES: dict[str, dict[str, str]] = {
    tool: {snake_case(name): name for name in schema["properties"] if snake_case(name) != name}
    for tool, schema in SCHEMAS.items()
}
"""Per tool, ``{alias: documented name}``: the snake_case spelling of every camelCase argument
(accepted, not advertised in the input schema)."""


def _filled(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _recall_rules(args: Mapping[str, Any], names: ArgumentNames) -> list[str]:
    """The argument rules of a recall that one schema cannot state."""
    letters = len(" ".join(args["query"].split()))
    if letters < 3:
        return [f"query must have at least 3 characters besides white space; got {letters}"]
    return []


def _propose_rules(args: Mapping[str, Any], names: ArgumentNames) -> list[str]:
    """The argument rules of a proposal that one schema cannot state."""
    problems = []
    operation = args["operation"]
    if not _filled(args["rationale"]):
        problems.append("rationale must not be blank: say why future agents need this")
    if operation in RECORD_OPERATIONS:
        kind = args.get("kind")
        missing = []
        if kind is None:
            missing.append(f"kind ({accepts(PROPOSE_SCHEMA['properties']['kind'])})")
        if not _filled(args.get("text")):
            missing.append("text (the fact, a non-empty string of at most 2000 characters)")
        if missing:
            problems.append(
                f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} required for "
                f"operation {operation} (add, update and supersede describe a memory)"
            )
        if kind in EVIDENCE_KINDS and not any(map(_filled, args.get("evidenceRefs") or ())):
            problems.append(
                f"{names('evidenceRefs')} must list at least one source (file path, URL, "
                f"commit or evidence-cache ref) for kind {kind}; only todo and scratch "
                "memories may be proposed without evidence"
            )
    if operation in TARGET_OPERATIONS and not _filled(args.get("targetMemoryId")):
        problems.append(
            f"{names('targetMemoryId')} is required for operation {operation}: the id of the "
            "memory to change (update, delete and supersede need it)"
        )
    related = args.get("relatedMemoryIds")
    if operation == "merge" and len(related or ()) < 2:
        problems.append(
            f"{names('relatedMemoryIds')} must list 2 to {MAX_RELATED_IDS} memory ids for "
            f"operation merge; got {len(related or ())}"
        )
    return problems


def _outcome_rules(args: Mapping[str, Any], names: ArgumentNames) -> list[str]:
    """The argument rules of an outcome that one schema cannot state."""
    problems = []
    has_id, has_question = "memoryId" in args, "question" in args
    if has_id == has_question:
        problems.append(
            f"exactly one of {names('memoryId')} or question is required; got "
            + ("both" if has_id else "neither")
        )
    elif has_question and not _filled(args["question"]):
        problems.append("question must not be blank")
    outcome, correction = args["outcome"], args.get("correction")
    if outcome == "corrected" and not _filled(correction):
        problems.append(
            "correction is required when outcome is corrected: the corrected fact, a "
            "non-empty string of at most 4000 characters"
        )
    if outcome != "corrected" and _filled(correction):
        problems.append(
            f"correction is only allowed when outcome is corrected; got outcome {outcome}"
        )
    return problems


_RULES: dict[str, Callable[[Mapping[str, Any], ArgumentNames], list[str]]] = {
    RECALL: _recall_rules,
    PROPOSE: _propose_rules,
    OUTCOME: _outcome_rules,
    curator.PENDING: curator.pending_rules,
    curator.CURATE: curator.curate_rules,
}

_VALIDATORS: dict[str, Any] = {}


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _documented_names(
    tool: str, arguments: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """``arguments`` under their documented names, the aliases used, and alias conflicts."""
    args = dict(arguments)
    given: dict[str, str] = {}
    problems: list[str] = []
    for alias, name in ALIASES[tool].items():
        if alias not in args:
            continue
        value = args.pop(alias)
        if name not in args:
            args[name] = value
            given[name] = alias
        elif not _same(args[name], value):
            problems.append(
                f"{name} and {alias} are two spellings of one argument but were given "
                f"different values ({shown(args[name])} and {shown(value)}); give only {name}"
            )
    return args, given, problems


def validate_arguments(tool: str, arguments: Any) -> dict[str, Any]:
    """Check ``arguments`` against the tool's input schema and argument rules.

    Aliases (``memory_id``, ``max_items``, ...) are accepted and come back under their
    documented names.

    Raises:
        MemoryValidationError: one message naming every offending argument and what it
            accepts.
    """
    if arguments is None:
        arguments = {}
    schema = SCHEMAS[tool]
    if not isinstance(arguments, Mapping):
        raise MemoryValidationError(
            f"invalid arguments for {tool}: arguments must be an object; got {shown(arguments)}"
        )
    args, given, problems = _documented_names(tool, arguments)
    names = ArgumentNames(given)
    validator = _VALIDATORS.get(tool)
    if validator is None:
        from jsonschema import Draft202012Validator

        validator = _VALIDATORS[tool] = Draft202012Validator(schema)
    errors = sorted(
        validator.iter_errors(args),
        key=lambda e: (list(map(str, e.absolute_path)), str(e.validator)),
    )
    problems += [describe(error, schema, names) for error in errors]
    if not problems:
        problems = _RULES[tool](args, names)
    if problems:
        unique = list(dict.fromkeys(problems))  # jsonschema reports each missing key apart
        raise MemoryValidationError(f"invalid arguments for {tool}: " + "; ".join(unique))
    return args

"""Task output as a write: the ``memoryProposals`` and ``curatorMemoryDecisions`` JSON arrays an
agent's output may carry, each entry filed as a proposal or applied as a curator decision
through the write service's own ``propose`` and ``curate`` (so every check of theirs holds).
Invalid entries are logged and listed, never raised."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.records import AppliedChange, MemoryProposal
from swarmmem.core.writes.intake import as_list, json_objects

__all__ = ["ingest_task_output"]

log = logging.getLogger("swarmmem")


def ingest_task_output(
    output: str,
    *,
    curator: bool,
    propose: Callable[..., MemoryProposal],
    curate: Callable[..., AppliedChange],
) -> dict[str, Any]:
    """Accept ``memoryProposals`` / ``curatorMemoryDecisions`` JSON arrays from task output.

    Invalid entries are logged and dropped; curator decisions are accepted only when
    ``curator`` (the context's role is a curator's). Never raises on malformed input. A
    proposal closed at once as a duplicate is listed under ``duplicates`` (its id and
    ``duplicateOf``), not under ``proposals``.
    """
    result: dict[str, Any] = {
        "proposals": [],
        "decisions": [],
        "rejected": [],
        "duplicates": [],
    }

    def file_entry(entry: Mapping[str, Any]) -> str | None:
        prop = propose(
            operation=entry.get("operation", "add"),
            kind=entry.get("kind"),
            text=entry.get("text"),
            rationale=entry.get("rationale", ""),
            evidence_refs=entry.get("evidenceRefs"),
            target_memory_id=entry.get("targetMemoryId"),
            related_memory_ids=entry.get("relatedMemoryIds"),
        )
        original = prop.metadata.get("duplicateOf")
        if original is None:
            return prop.id
        result["duplicates"].append({"proposalId": prop.id, "duplicateOf": str(original)})
        return None

    def decide_entry(entry: Mapping[str, Any]) -> str:
        """Apply one decision entry; the id of the proposal it decided."""
        change = curate(
            str(entry.get("proposalId", "")),
            str(entry.get("action", entry.get("decision", ""))),
            reason=entry.get("reason"),
            patch=entry.get("patch"),
        )
        return change.proposal_id

    for payload in json_objects(output):
        proposals = as_list(payload.get("memoryProposals"))
        _accept_entries(proposals, "proposal", file_entry, result)
        decisions = as_list(payload.get("curatorMemoryDecisions"))
        if decisions and not curator:
            result["rejected"].append(
                {
                    "kind": "decision",
                    "error": "only curator agents may emit curatorMemoryDecisions",
                }
            )
            continue
        _accept_entries(decisions, "decision", decide_entry, result)
    return result


def _accept_entries(
    entries: Iterable[Any],
    kind: str,
    accept: Callable[[Mapping[str, Any]], str | None],
    result: dict[str, Any],
) -> None:
    """Hand each ``kind`` entry (``proposal`` or ``decision``) of task output to ``accept``:
    the proposal id it returns goes to ``result[kind + "s"]`` (``None``: it listed the entry
    elsewhere); an entry it refuses (or one that is no object) is logged and listed under
    ``rejected``."""
    label = "memory proposal" if kind == "proposal" else "curator decision"
    for entry in entries:
        try:
            if not isinstance(entry, Mapping):
                raise MemoryValidationError(f"{kind} entry must be an object")
            accepted = accept(entry)
            if accepted is not None:
                result[f"{kind}s"].append(accepted)
        except Exception as exc:
            log.warning("%s dropped: %s", label, exc)
            result["rejected"].append({"kind": kind, "error": str(exc)})

"""Proposal intake: the checks and the cleaning every proposal passes before a record is built
from it, the curator's rephrasing of one, and the JSON blocks a task's output carries.

These are the steps of :meth:`~swarmmem.core.writes.service.WriteService.propose` that read
only their arguments (the service adds what needs the store, the clock and the context).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.ids import normalize_text
from swarmmem.core.model.records import (
    DURABLE_MEMORY_KINDS,
    MAX_MEMORY_TEXT_LENGTH,
    MEMORY_KINDS,
    PROPOSAL_OPERATIONS,
    MemoryProposal,
    MemoryRecord,
    ProposedBy,
    unknown_kinds,
)
from swarmmem.core.model.text import check_text, check_texts, without_hidden
from swarmmem.core.writes.redaction import redact_fields, redaction_rejection_reason
from swarmmem.core.writes.validation import check_sentinels
from swarmmem.ports.detectors import PiiFindings, SecretDetector

#: the operations that propose a record
NEEDS_RECORD = ("add", "update", "supersede")
#: the operations that name the memory they change
NEEDS_TARGET = ("update", "delete", "supersede")

MAX_PROPOSAL_TEXT = MAX_MEMORY_TEXT_LENGTH
"""The longest text or rationale a proposal takes (checked before any detector runs)."""
MAX_EVIDENCE_REFS = 20
MAX_EVIDENCE_REF_LENGTH = 500


def clean_text(value: str) -> str:
    """A proposed text as it is stored: hidden characters removed, whitespace collapsed."""
    return normalize_text(without_hidden(value))


def check_proposal_args(
    *,
    operation: str,
    rationale: str,
    kind: str | None,
    text: str | None,
    evidence_refs: Sequence[str] | None,
    target_memory_id: str | None,
    related_memory_ids: Sequence[str] | None,
    tags: Sequence[str] | None,
) -> None:
    """Refuse a malformed proposal before anything reads it: an unknown operation, a field
    that is not text, a missing rationale or an over-long field."""
    if operation not in PROPOSAL_OPERATIONS:
        raise MemoryValidationError(
            f"operation must be one of {', '.join(PROPOSAL_OPERATIONS)}; got {operation!r}"
        )
    for text_name, text_value in (
        ("rationale", rationale),
        ("kind", kind),
        ("text", text),
        ("target_memory_id", target_memory_id),
    ):
        check_text(text_value, text_name)
    check_texts(evidence_refs, "evidence_refs")
    check_texts(related_memory_ids, "related_memory_ids")
    check_texts(tags, "tags")
    if not isinstance(rationale, str):
        raise MemoryValidationError("rationale is required")
    check_lengths(text=text, rationale=rationale, evidence_refs=evidence_refs, tags=tags)


def check_lengths(
    *,
    text: str | None,
    rationale: str,
    evidence_refs: Sequence[str] | None,
    tags: Sequence[str] | None,
) -> None:
    """Refuse over-long input before anything else reads it (the secret and PII detectors
    included), naming the argument and its limit."""
    for name, value in (("text", text), ("rationale", rationale)):
        if isinstance(value, str) and len(value) > MAX_PROPOSAL_TEXT:
            raise MemoryValidationError(
                f"{name} must be at most {MAX_PROPOSAL_TEXT} characters; got {len(value)}"
            )
    if evidence_refs is not None and len(evidence_refs) > MAX_EVIDENCE_REFS:
        raise MemoryValidationError(f"at most 20 evidence refs; got {len(evidence_refs)}")
    if tags is not None and len(tags) > 64:
        raise MemoryValidationError(f"at most 64 tags; got {len(tags)}")
    for name, values, limit in (
        ("evidence ref", evidence_refs, MAX_EVIDENCE_REF_LENGTH),
        ("tag", tags, 200),
    ):
        for value in values or ():
            if isinstance(value, str) and len(value) > limit:
                raise MemoryValidationError(
                    f"each {name} must be at most {limit} characters; got {len(value)}"
                )


@attrs.frozen(kw_only=True)
class ProposalFields:
    """A proposal's fields as they are stored: cleaned of hidden characters, secrets redacted,
    evidence refs cut to their limits.

    Attributes:
        rationale: the non-empty rationale.
        refs: the evidence refs (none of them forging a recall block).
        target: the target memory id, if any.
        related: the related memory ids, if any.
        text: the record text (only for an operation that proposes a record).
        tags: the proposed tags, if any.
        redacted: the names of the fields that held a likely secret, in order.
    """

    rationale: str
    refs: list[str]
    target: str | None
    related: list[str] | None
    text: str | None
    tags: list[str] | None
    redacted: tuple[str, ...]


def proposal_fields(
    secrets: SecretDetector,
    *,
    operation: str,
    rationale: str,
    evidence_refs: Sequence[str] | None,
    target_memory_id: str | None,
    related_memory_ids: Sequence[str] | None,
    text: str | None,
    tags: Sequence[str] | None,
) -> ProposalFields:
    """The fields of a checked proposal as they are stored (what a curator and a prompt read:
    control, bidi and tag characters removed, secrets redacted)."""
    clean = clean_text  # (a local name: called once per field)
    redacted = redact_fields(
        secrets,
        {
            "rationale": clean(rationale),
            "evidenceRefs": [v for v in map(clean, evidence_refs or ()) if v],
            "targetMemoryId": normalize_text(target_memory_id) if target_memory_id else None,
            "relatedMemoryIds": None
            if related_memory_ids is None
            else [normalize_text(r) for r in related_memory_ids],
            "text": clean(text) if operation in NEEDS_RECORD and isinstance(text, str) else None,
            "tags": None if tags is None else [clean(t) for t in tags],
        },
    )
    values = redacted.values
    clean_rationale = str(values["rationale"])
    if not clean_rationale:
        raise MemoryValidationError("rationale is required")
    refs = [ref[:MAX_EVIDENCE_REF_LENGTH] for ref in values["evidenceRefs"] or ()]
    refs = refs[:MAX_EVIDENCE_REFS]
    for ref in refs:  # a ref is shown on a Source line of the prompt block
        check_sentinels(ref, "evidence ref")
    target, related, tag_list = values["targetMemoryId"], values["relatedMemoryIds"], values["tags"]
    return ProposalFields(
        rationale=clean_rationale,
        refs=refs,
        target=target if isinstance(target, str) else None,
        related=related if isinstance(related, list) else None,
        text=values["text"] if isinstance(values["text"], str) else None,
        tags=tag_list if isinstance(tag_list, list) else None,
        redacted=redacted.changed,
    )


def check_record_args(kind: str | None, text: str | None) -> str:
    """The kind of a proposal that proposes a record: known, with a non-empty text."""
    if not kind:
        raise MemoryValidationError("kind is required for this operation")
    if kind not in MEMORY_KINDS:
        raise unknown_kinds([kind])
    if not text or not normalize_text(text):
        raise MemoryValidationError("text is required for this operation")
    return kind


def check_targets(operation: str, fields: ProposalFields) -> None:
    """An update, delete or supersede names its target; a merge names two memories or more."""
    if operation in NEEDS_TARGET and not fields.target:
        raise MemoryValidationError(f"{operation} proposals require targetMemoryId")
    if operation == "merge" and (fields.related is None or len(fields.related) < 2):
        raise MemoryValidationError("merge proposals require relatedMemoryIds")


def new_proposal(
    *,
    proposal_id: str,
    operation: str,
    record: MemoryRecord | None,
    fields: ProposalFields,
    proposed_by: ProposedBy,
    created_at: str,
    pii: PiiFindings | None,
) -> MemoryProposal:
    """The pending proposal (its PII findings noted in its metadata); a proposal whose fields
    held a likely secret is closed at once by the auto policy, naming those fields."""
    proposal = MemoryProposal(
        id=proposal_id,
        operation=operation,
        proposed_record=record,
        target_memory_id=fields.target,
        related_memory_ids=tuple(fields.related) if fields.related is not None else None,
        proposed_by=proposed_by,
        rationale=fields.rationale,
        evidence_refs=tuple(fields.refs),
        status="pending",
        created_at=created_at,
        metadata={"pii": {"score": pii.score, "countsByType": pii.counts_by_type}}
        if pii is not None and pii.found
        else {},
    )
    if not fields.redacted:
        return proposal
    return attrs.evolve(
        proposal,
        status="rejected",
        reviewer="auto_policy",
        reviewed_at=created_at,
        rejection_reason=redaction_rejection_reason(fields.redacted),
    )


def rewrite_fields(
    decision: str,
    *,
    text: str | None,
    kind: str | None,
    tags: Sequence[str] | None,
    patch: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The patch a curator's rephrasing makes (empty when there is none); a durable kind
    also makes the memory durable (no expiry)."""
    rewrite: dict[str, Any] = {}
    if text is not None:
        rewrite["text"] = clean_text(text) if isinstance(text, str) else text
    if kind is not None:
        if kind not in MEMORY_KINDS:
            raise unknown_kinds([kind])
        rewrite["kind"] = kind
        if kind in DURABLE_MEMORY_KINDS:
            rewrite.update(stability="durable", expiresAt=None)
    if tags is not None:
        rewrite["tags"] = [clean_text(t) if isinstance(t, str) else t for t in tags]
    if rewrite and decision not in ("add", "update"):
        raise MemoryValidationError(
            f"text, kind and tags rephrase add and update decisions only; got {decision}"
        )
    if rewrite and patch:
        raise MemoryValidationError("give either a patch or text/kind/tags, not both")
    return rewrite


def edited_refs(
    decision: str,
    refs: Sequence[str] | None,
    *,
    patch: Mapping[str, Any] | None,
    secrets: SecretDetector,
) -> tuple[str, ...] | None:
    """The evidence refs a curator gives an ``add`` or ``update`` instead of the proposal's
    (``None``: none given), cleaned and checked: at least one, within the limits, no likely
    secret in any."""
    if refs is None:
        return None
    check_texts(refs, "evidence_refs")
    if decision not in ("add", "update"):
        raise MemoryValidationError(
            f"evidence refs are edited for add and update decisions only; got {decision}"
        )
    if patch:
        raise MemoryValidationError("give either a patch or evidence refs, not both")
    cleaned = tuple(dict.fromkeys(v for v in (clean_text(r) for r in refs) if v))
    if not cleaned:
        raise MemoryValidationError("give at least one evidence ref")
    check_lengths(text=None, rationale="", evidence_refs=cleaned, tags=None)
    if any(secrets.redact(ref) != ref for ref in cleaned):
        raise MemoryValidationError("an evidence ref holds a likely secret; cite the file instead")
    return cleaned


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a list (a copy), else an empty list."""
    return list(value) if isinstance(value, list) else []


BLOCK_KEYS = ("memoryProposals", "curatorMemoryDecisions")
"""The keys that make a JSON object in a task's output a block of proposals or decisions."""
MAX_RETRY_DEPTH = 8
"""How many undecodable objects around it an object may sit in and still be tried."""
_BRACE_TOKENS = re.compile(r'[{}"\\\n]')
_BLOCK_KEY = re.compile("|".join(f'"{key}"' for key in BLOCK_KEYS))


def json_objects(text: str) -> list[Mapping[str, Any]]:
    """The JSON objects in free text (the whole text, fenced blocks, or balanced braces) that
    carry one of :data:`BLOCK_KEYS`, in order.

    Linear in the text: one pass pairs each ``{`` with its ``}``, then each pair that holds
    such a key is decoded from its own slice, left to right; an object that decodes is passed
    over whole, one that does not is looked into (down to :data:`MAX_RETRY_DEPTH` undecodable
    objects deep).
    """
    if not isinstance(text, str):
        return []
    keys = [m.start() for m in _BLOCK_KEY.finditer(text)]
    if not keys:
        return []
    found: list[Mapping[str, Any]] = []
    failed: list[int] = []  # the ends of the undecodable objects around the current one
    done = 0
    for start, end in _brace_pairs(text):
        while failed and failed[-1] < start:
            failed.pop()
        next_key = bisect.bisect_right(keys, start)
        holds_key = next_key < len(keys) and keys[next_key] < end
        if start < done or len(failed) >= MAX_RETRY_DEPTH or not holds_key:
            continue
        try:
            obj = json.loads(text[start : end + 1])
        except (ValueError, RecursionError):
            failed.append(end)
            continue
        if isinstance(obj, Mapping) and any(key in obj for key in BLOCK_KEYS):
            found.append(obj)
        done = end + 1
    return found


def _brace_pairs(text: str) -> list[tuple[int, int]]:
    """Each ``{`` of ``text`` that is closed, with its ``}``, in text order. Quotes open and
    close strings (with backslash escapes) only inside braces, and a line break ends one (JSON
    strings hold none: the quote was not JSON's); an unclosed ``{`` pairs with nothing."""
    pairs: list[tuple[int, int]] = []
    open_at: list[int] = []
    in_string = False
    escaped = -1
    for token in _BRACE_TOKENS.finditer(text):
        at, char = token.start(), token.group()
        if at == escaped:
            continue
        if in_string:
            if char == "\\":
                escaped = at + 1
            elif char in ('"', "\n"):
                in_string = False
        elif char == '"':
            in_string = bool(open_at)
        elif char == "{":
            open_at.append(at)
        elif char == "}" and open_at:
            pairs.append((open_at.pop(), at))
    pairs.sort()
    return pairs

"""The single write funnel: every rule a record must pass before it is stored.

Rules run in the reference order and the first failure raises
:class:`~swarmmem.core.model.errors.MemoryValidationError` with the reference message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from swarmmem.core.config import RedactionConfig
from swarmmem.core.model.errors import MemoryPiiRejectedError, MemoryValidationError
from swarmmem.core.model.ids import (
    CONTENT_HASH_RE,
    MEMORY_ID_RE,
    content_hash,
    iso_to_ms,
    memory_id_for_hash,
)
from swarmmem.core.model.records import DURABLE_MEMORY_KINDS, EVIDENCE_REQUIRED_KINDS, MemoryRecord
from swarmmem.core.model.text import folded
from swarmmem.ports.detectors import PiiFindings, SecretDetector

RECALL_SENTINEL_HEADER = "## Retrieved Swarm Memory"
BUNDLE_MARKER_PREFIX = "bundle_"
SCRATCH_MAX_MS = 7 * 24 * 3600 * 1000


def holds_sentinel(text: str) -> bool:
    """True when ``text`` holds the recall header or the bundle marker prefix, also when
    invisible characters or full-width forms disguise them (only non-ASCII text is folded)."""
    seen = text if text.isascii() else folded(text)
    return RECALL_SENTINEL_HEADER in seen or BUNDLE_MARKER_PREFIX in seen


def check_sentinels(text: str, what: str = "memory text") -> None:
    """Reject text that could forge a recall block or its bundle marker, also when invisible
    characters or full-width forms disguise them."""
    seen = folded(text)
    if RECALL_SENTINEL_HEADER in seen:
        raise MemoryValidationError(f"{what} cannot contain the recall sentinel header")
    if BUNDLE_MARKER_PREFIX in seen:
        raise MemoryValidationError(f"{what} cannot contain the recall bundle marker prefix")


def pii_summary_text(findings: PiiFindings) -> str:
    """``emailx1, phonex2`` style summary of PII counts (never the matched text)."""
    return ", ".join(f"{kind}x{count}" for kind, count in findings.counts_by_type.items())


def validate_record(
    record: MemoryRecord,
    *,
    secrets: SecretDetector | None = None,
    reject_durable_secrets: bool = True,
    pii: PiiFindings | None = None,
    reject_durable_pii: bool = False,
    pii_threshold: float = RedactionConfig().pii_threshold,
    content_digest: str | None = None,
) -> MemoryRecord:
    """Apply every write rule to ``record`` and return it unchanged when it passes.

    ``content_digest``: the content hash of the record's scope, kind and text when the
    caller has just computed it from these same values (it is then not computed again).

    Raises:
        MemoryValidationError: the first rule that fails, with its reference message.
        MemoryPiiRejectedError: durable text above the PII threshold (when enabled).
    """
    if not MEMORY_ID_RE.match(record.id):
        raise MemoryValidationError(f"id: must look like mem_<16 hex>; got {record.id!r}")
    if not CONTENT_HASH_RE.match(record.content_hash):
        raise MemoryValidationError("contentHash: must be 64 lowercase hex digits")
    check_sentinels(record.text)
    if "\x00" in record.text:
        raise MemoryValidationError("memory text must not contain NUL characters")
    expected_hash = content_digest or content_hash(record.scope.as_dict(), record.kind, record.text)
    if record.content_hash != expected_hash:
        raise MemoryValidationError("contentHash does not match memory content")
    if record.id != memory_id_for_hash(expected_hash):
        raise MemoryValidationError("id does not match memory content")
    check_kind_rules(
        record.kind,
        record.stability,
        record.scope.type,
        record.source.has_evidence,
        record.created_at,
        record.expires_at,
    )
    durable = record.stability == "durable"
    if reject_durable_secrets and durable and secrets is not None:
        texts = [record.text] + [o.correction for o in record.outcomes or () if o.correction]
        if any(secrets.contains_secret(t) for t in texts):
            raise MemoryValidationError("durable memory contains a likely secret")
    if reject_durable_pii and durable and pii is not None and pii.score > pii_threshold:
        raise MemoryPiiRejectedError(
            f"durable memory exceeds the PII threshold: score {pii.score:.2f} "
            f"(types: {pii_summary_text(pii)}) exceeded threshold {pii_threshold:.2f}"
        )
    _check_outcome_metadata(record.metadata, record)
    return record


def check_kind_rules(
    kind: str,
    stability: str,
    scope_type: str,
    evidence: bool,
    created_at: str,
    expires_at: str | None,
) -> None:
    """The rules of :func:`validate_record` on kind, stability, scope type, source evidence
    and scratch expiry, in its order (``evidence``: the source's ``has_evidence``)."""
    durable = stability == "durable"
    if durable and scope_type in ("run", "agent"):
        raise MemoryValidationError("durable memories cannot use run or agent scope")
    needs_durable_evidence = kind in DURABLE_MEMORY_KINDS or kind in ("api_finding", "evidence")
    if durable and needs_durable_evidence and not evidence:
        raise MemoryValidationError(
            "durable project, repository, API, evidence, and security memories require "
            "source evidence"
        )
    if kind in EVIDENCE_REQUIRED_KINDS and not evidence:
        raise MemoryValidationError(f"{kind} memories require source evidence")
    if kind == "scratch":
        expires = iso_to_ms(expires_at)
        created = iso_to_ms(created_at)
        if expires is None or created is None or expires - created > SCRATCH_MAX_MS:
            raise MemoryValidationError("scratch memories must expire within 7 days")


def _check_outcome_metadata(metadata: Mapping[str, Any], record: MemoryRecord) -> None:
    if "outcomeEventIds" in metadata:
        ids = metadata["outcomeEventIds"]
        ok = isinstance(ids, list) and all(isinstance(i, str) and 1 <= len(i) <= 256 for i in ids)
        if not ok or len(ids) != len(record.outcomes or ()):
            raise MemoryValidationError("metadata.outcomeEventIds must align with outcomes")
    if "outcomeGeneration" in metadata:
        gen = metadata["outcomeGeneration"]
        if not isinstance(gen, str) or not 1 <= len(gen) <= 256:
            raise MemoryValidationError("metadata.outcomeGeneration must be a string of 1..256")


def rephrasing_needed(record: MemoryRecord | None) -> list[str]:
    """Why a proposed record cannot become durable memory as it stands (empty when it can):
    the curator would have to rephrase it (``curate ID add --kind ... --text ...``)."""
    from swarmmem.core.model.ids import normalize_text

    if record is None:
        return []
    notes = []
    if record.kind not in DURABLE_MEMORY_KINDS:
        kinds = ", ".join(sorted(DURABLE_MEMORY_KINDS))
        notes.append(
            f"kind {record.kind} cannot become durable memory: a curator must give it one of "
            f"{kinds}"
        )
    length = len(normalize_text(record.text))
    if length > 500:
        notes.append(
            f"text is {length} characters: durable memory holds concise facts under 500, so "
            "a curator must shorten it"
        )
    return notes


def validate_promotable(record: MemoryRecord) -> None:
    """Extra rules for records a curator promotes into durable memory."""
    from swarmmem.core.model.ids import normalize_text

    if record.stability != "durable":
        raise MemoryValidationError("curator memory promotions must be durable facts")
    if record.kind not in DURABLE_MEMORY_KINDS:
        raise MemoryValidationError(
            "curator memory promotions must use durable fact kinds; store raw docs, search "
            "results, and other bulky source material as evidence records instead"
        )
    if len(normalize_text(record.text)) > 500:
        raise MemoryValidationError(
            "curator memory promotions must be concise durable facts under 500 characters"
        )

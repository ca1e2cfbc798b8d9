"""Evidence documents: the citable ref format, content ids and the retention policy.

Raw documents (API docs, search results, pages) are kept out of memory in an evidence store
(:class:`~swarmmem.ports.evidence.EvidenceStore`); memories and proposals cite them as
``evidence-cache:evd_<16 hex>``. The id is the first 16 hex digits of the SHA-256 of the
document text with whitespace runs collapsed, so the same document always gets the same ref.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import attrs

from swarmmem.core.model.errors import ConfigError, MemoryValidationError
from swarmmem.core.model.ids import normalize_text, sha256_hex

EVIDENCE_REF_PREFIX = "evidence-cache:"
_ID_RE = re.compile(r"^evd_[a-f0-9]{16}$")


def evidence_id(text: str) -> tuple[str, str]:
    """``(id, contentHash)`` of a document text (whitespace-normalised SHA-256)."""
    digest = sha256_hex(normalize_text(text))
    return "evd_" + digest[:16], digest


def parse_evidence_ref(ref: str) -> str:
    """The ``evd_`` id inside ``evidence-cache:evd_...`` (a bare ``evd_...`` id is accepted).

    Raises:
        MemoryValidationError: ``ref`` is not an evidence-cache reference.
    """
    if not isinstance(ref, str):
        raise MemoryValidationError(f"evidence ref must be a string; got {ref!r}")
    candidate = ref[len(EVIDENCE_REF_PREFIX) :] if ref.startswith(EVIDENCE_REF_PREFIX) else ref
    if not _ID_RE.match(candidate):
        raise MemoryValidationError(
            f"not an evidence-cache reference (expected evidence-cache:evd_<16 hex>): {ref!r}"
        )
    return candidate


@attrs.frozen(kw_only=True)
class EvidenceDocument:
    """One cached document, as stored (already redacted)."""

    id: str
    source: str
    text: str
    content_hash: str
    created_at: str

    @property
    def ref(self) -> str:
        """The citable reference, ``evidence-cache:evd_...``."""
        return EVIDENCE_REF_PREFIX + self.id


@attrs.frozen(kw_only=True)
class EvidenceReport:
    """What a full scan of an evidence store found.

    Attributes:
        records: readable documents.
        corrupt_lines: 1-based numbers of the stored entries that could not be used.
        bytes: size of the stored data.
    """

    records: int
    corrupt_lines: tuple[int, ...]
    bytes: int

    @property
    def healthy(self) -> bool:
        """True when no entry was damaged."""
        return not self.corrupt_lines


def _positive_or_none(setting: str) -> Any:
    def check(_inst: object, _attr: attrs.Attribute[Any], value: object) -> None:
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise ConfigError(f"{setting} must be a positive integer or None; got {value!r}")

    return check


@attrs.frozen(kw_only=True)
class EvidenceRetention:
    """How much an evidence store keeps: unbounded (append-only) unless a bound is set.

    ``max_bytes`` bounds the stored size (``evidence.cacheMaxBytes``), ``max_records`` the
    number of entries (``evidence.cacheMaxRecords``); each is a positive integer or ``None``.
    When a bound is exceeded the oldest entries go first; every entry counts, a damaged one
    included.

    Raises:
        ConfigError: a bound that is not a positive integer or ``None`` (the message names the
            setting and the value).
    """

    max_bytes: int | None = attrs.field(
        default=None, validator=_positive_or_none("evidence.cacheMaxBytes")
    )
    max_records: int | None = attrs.field(
        default=None, validator=_positive_or_none("evidence.cacheMaxRecords")
    )

    def fits(self, entry_bytes: int) -> bool:
        """True when one entry of ``entry_bytes`` bytes is within ``max_bytes`` on its own."""
        return self.max_bytes is None or entry_bytes <= self.max_bytes

    def exceeded(self, entries: int, size: int) -> bool:
        """True when ``entries`` entries taking ``size`` bytes break a bound."""
        too_many = self.max_records is not None and entries > self.max_records
        return too_many or (self.max_bytes is not None and size > self.max_bytes)

    def keep_newest(self, entry_sizes: Sequence[int]) -> int:
        """How many of the newest entries (sizes oldest first) stay within both bounds."""
        kept = total = 0
        for cost in reversed(entry_sizes):
            if self.max_records is not None and kept >= self.max_records:
                break
            if self.max_bytes is not None and total + cost > self.max_bytes:
                break
            kept += 1
            total += cost
        return kept

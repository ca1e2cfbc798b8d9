"""Evidence store port: raw documents kept out of memory and cited by ref."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, runtime_checkable

from swarmmem.core.model.evidence import EvidenceDocument, EvidenceReport, EvidenceRetention


@runtime_checkable
class EvidenceStore(Protocol):
    """**Protocol:** keep redacted documents (API docs, search results, pages) by content ref.

    Obligations:

    * ``add(text, source)`` redacts secrets from text and source *before* anything is hashed
      or written, and returns ``evidence-cache:evd_<16 hex>`` as computed by
      :func:`~swarmmem.core.model.evidence.evidence_id` of the redacted text. Adding a text
      that normalises the same again returns the same ref and writes nothing. Blank text or
      source, or a document larger than ``retention.max_bytes`` on its own, raises
      :class:`~swarmmem.core.model.errors.MemoryValidationError` and writes nothing.
    * ``get(ref)`` accepts the ref or the bare ``evd_`` id and returns the stored document, or
      ``None`` when it is not (or no longer) stored; a string that is not an evidence ref
      raises :class:`~swarmmem.core.model.errors.MemoryValidationError`. ``ref in store``
      verifies a ref: it is the same test and never raises.
    * Iteration lists the readable documents oldest first (a snapshot); ``len`` counts them.
    * ``retention`` is the policy in force: after each add the oldest entries are dropped
      until both bounds hold. Without bounds the store is append-only.
    * Damaged entries never stop the store: they are skipped by every read and reported by
      ``check()``. A failed write leaves the stored documents as they were and raises
      :class:`~swarmmem.core.model.errors.StorageError`.
    * Nothing touches storage until the first call; instances are safe to share between
      threads.
    """

    @property
    def retention(self) -> EvidenceRetention:
        """The bounds in force (``max_bytes``, ``max_records``; ``None`` = unbounded)."""
        ...

    def add(self, text: str, source: str) -> str:
        """Store ``text`` (redacted) from ``source``; return its ``evidence-cache:`` ref."""
        ...

    def get(self, ref: str) -> EvidenceDocument | None:
        """The document cited by ``ref``, or ``None``."""
        ...

    def __contains__(self, ref: object) -> bool:
        """True when ``ref`` is an evidence ref whose document is stored."""
        ...

    def __len__(self) -> int:
        """How many readable documents are stored."""
        ...

    def __iter__(self) -> Iterator[EvidenceDocument]:
        """The readable documents, oldest first."""
        ...

    def check(self) -> EvidenceReport:
        """Scan everything stored: readable documents, damaged entries and size."""
        ...

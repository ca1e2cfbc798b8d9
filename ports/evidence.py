"""Evidence ports: raw documents kept out of memory and cited by ref (:class:`EvidenceStore`),
and the project files a memory cites, checked and fingerprinted (:class:`SourceChecker`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

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


@runtime_checkable
class SourceChecker(Protocol):
    """**Protocol:** evidence refs checked against the project's files, and memories' cited
    files compared with what they were when the memory was written.

    Obligations:

    * ``check(refs)`` returns one sentence per ref that does not hold, naming it (empty when
      all hold): a file ref (``path``, ``path:LINE``, ``path:START-END``, ``path#symbol``)
      must name a regular file inside the project root that git does not ignore, its lines
      must exist and its symbol occur in it; a commit must exist in the repository (when git
      and a repository are there); URLs, ``manual:`` notes and ``evidence-cache:`` refs pass
      here (the evidence cache checks its own refs). Nothing is written.
    * ``fingerprints(refs)`` returns, for each file ref, a JSON-ready fingerprint of the file
      as it is now (content digest, size, modification time; the digest of the symbol's
      lines when a symbol is cited, of the lines when a range is; and, when short, those
      lines themselves as ``cited``); other refs give none.
    * ``cited_now(fingerprint)`` returns what a symbol or line-range fingerprint cites in its
      file now (``None`` for a whole-file one or a file gone or unreadable); never raises.
    * ``status(fingerprints)`` compares stored fingerprints with the files now: ``missing``
      when a fingerprinted file is gone, else ``changed`` when a digest differs, else
      ``fresh``; ``unverified`` when there is no fingerprint. It reads a file only when its
      size or modification time moved, and never raises.
    """

    def check(self, refs: Sequence[str]) -> list[str]:
        """The refs that do not hold, each in a sentence naming it."""
        ...

    def fingerprints(self, refs: Sequence[str]) -> list[dict[str, Any]]:
        """Fingerprints of the file refs, as they are now."""
        ...

    def status(self, fingerprints: Sequence[Mapping[str, Any]]) -> str:
        """``fresh``, ``changed``, ``missing`` or ``unverified``."""
        ...

    def cited_now(self, fingerprint: Mapping[str, Any]) -> str | None:
        """What the fingerprint's symbol or line range says now."""
        ...

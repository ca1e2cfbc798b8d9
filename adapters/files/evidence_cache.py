"""The evidence cache: raw documents (API docs, search results, pages) kept out of memory.

Documents live in one JSONL file, by default ``<root>/.swarm/evidence-cache/documents.jsonl``,
one JSON object per line::

    {"id": "evd_<16 hex>", "source": "...", "text": "...",
     "contentHash": "<64 hex>", "createdAt": "<ISO-8601>"}

Agents cite a document as ``evidence-cache:evd_<16 hex>``. The id is the first 16 hex digits
of ``contentHash``, the SHA-256 of the stored text with whitespace runs collapsed, so adding
the same document twice returns the same ref and writes nothing. Text and source are
secret-redacted *before* anything is hashed or written: a cached page never carries a token.

Retention: append-only unless ``max_bytes`` and/or ``max_records`` is given
(``evidence.cache_max_bytes`` / ``evidence.cache_max_records``). Then, after each append, the
oldest lines are dropped until the file is within both bounds; every line counts as one entry,
an unreadable one included. The file is rewritten through a temporary file and an atomic
rename, so a crash leaves either the old or the new file.

Damaged lines (bad JSON, wrong shape, an id that does not match its text, a half-written last
line) never stop the cache: they are skipped, and :meth:`EvidenceCache.check` reports their
line numbers. A new record always starts on a fresh line.

Concurrency: one lock per instance for threads, plus an advisory ``flock`` on a sidecar
``.lock`` file (POSIX only) so that processes sharing the file do not interleave a compaction
with an append.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from swarmmem.core.model.errors import ConfigError, MemoryValidationError, StorageError
from swarmmem.core.model.ids import normalize_text, sha256_hex, to_iso
from swarmmem.ports.clock import Clock, SystemClock
from swarmmem.ports.detectors import SecretDetector

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "DEFAULT_RELATIVE_PATH",
    "EVIDENCE_REF_PREFIX",
    "EvidenceCache",
    "EvidenceCacheReport",
    "EvidenceDocument",
    "evidence_id",
    "parse_evidence_ref",
]

EVIDENCE_REF_PREFIX = "evidence-cache:"
DEFAULT_RELATIVE_PATH = Path(".swarm", "evidence-cache", "documents.jsonl")
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
class EvidenceCacheReport:
    """What a full scan of the cache file found.

    Attributes:
        records: readable documents.
        corrupt_lines: 1-based numbers of the lines that could not be used.
        bytes: file size.
    """

    records: int
    corrupt_lines: tuple[int, ...]
    bytes: int

    @property
    def healthy(self) -> bool:
        """True when no line was damaged."""
        return not self.corrupt_lines


def _positive_or_none(name: str, value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name} must be a positive integer or None; got {value!r}")
    return value


def _decode(raw: bytes) -> EvidenceDocument | None:
    """Parse one stored line; ``None`` when it is damaged in any way."""
    try:
        data: Any = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    doc_id, text, source = data.get("id"), data.get("text"), data.get("source")
    created = data.get("createdAt", "")
    if not (isinstance(doc_id, str) and isinstance(text, str) and isinstance(source, str)):
        return None
    if not isinstance(created, str):
        return None
    expected_id, digest = evidence_id(text)
    if doc_id != expected_id:
        return None
    return EvidenceDocument(
        id=doc_id, source=source, text=text, content_hash=digest, created_at=created
    )


class EvidenceCache:
    """Append-only (optionally bounded) store of redacted evidence documents.

    Args:
        path: the JSONL file; see :meth:`for_root` for the conventional location.
        max_bytes: optional bound on the file size.
        max_records: optional bound on the number of lines.
        secrets: the detector used to redact text and source before storing (default: the
            regex detector).
        clock: source of ``createdAt`` (default: the system clock).

    Nothing touches the disk until the first call.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        max_bytes: int | None = None,
        max_records: int | None = None,
        *,
        secrets: SecretDetector | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.path = Path(path)
        self.max_bytes = _positive_or_none("evidence.cache_max_bytes", max_bytes)
        self.max_records = _positive_or_none("evidence.cache_max_records", max_records)
        if secrets is None:
            from swarmmem.adapters.detectors.regex_secrets import RegexSecretDetector

            secrets = RegexSecretDetector()
        self._secrets = secrets
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._lock = threading.RLock()
        self._offsets: dict[str, int] = {}
        self._corrupt: list[int] = []
        self._lines = 0
        self._scanned_size = 0
        self._partial_tail = False
        self._signature: tuple[int, int, int] | None = None

    @classmethod
    def for_root(
        cls,
        root: str | os.PathLike[str],
        max_bytes: int | None = None,
        max_records: int | None = None,
        **kwargs: Any,
    ) -> EvidenceCache:
        """The cache of the project at ``root`` (``.swarm/evidence-cache/documents.jsonl``)."""
        return cls(Path(root) / DEFAULT_RELATIVE_PATH, max_bytes, max_records, **kwargs)

    # -- public API ---------------------------------------------------------------------

    def add(self, text: str, source: str) -> str:
        """Store ``text`` (redacted) from ``source`` and return its ``evidence-cache:`` ref.

        Raises:
            MemoryValidationError: empty text or source, or a document larger than
                ``max_bytes`` on its own.
            StorageError: the file cannot be written.
        """
        if not isinstance(text, str) or not text.strip():
            raise MemoryValidationError(f"evidence text must be a non-empty string; got {text!r}")
        if not isinstance(source, str) or not source.strip():
            raise MemoryValidationError(
                f"evidence source must be a non-empty string; got {source!r}"
            )
        clean_text = self._secrets.redact(text)
        clean_source = self._secrets.redact(source.strip())
        doc_id, digest = evidence_id(clean_text)
        record = {
            "id": doc_id,
            "source": clean_source,
            "text": clean_text,
            "contentHash": digest,
            "createdAt": to_iso(self._clock.now()),
        }
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        if self.max_bytes is not None and len(line) + 1 > self.max_bytes:
            raise MemoryValidationError(
                f"evidence document of {len(line) + 1} bytes exceeds "
                f"evidence.cache_max_bytes={self.max_bytes}"
            )
        with self._locked():
            self._sync()
            if doc_id not in self._offsets:
                self._append(line)
                self._enforce_retention()
        return EVIDENCE_REF_PREFIX + doc_id

    def get(self, ref: str) -> EvidenceDocument | None:
        """The document cited by ``ref``, or ``None`` when it is not (or no longer) cached.

        Raises:
            MemoryValidationError: ``ref`` is not an evidence-cache reference.
        """
        doc_id = parse_evidence_ref(ref)
        with self._lock:
            self._sync()
            offset = self._offsets.get(doc_id)
            if offset is None:
                return None
            try:
                with self.path.open("rb") as handle:
                    handle.seek(offset)
                    raw = handle.readline()
            except OSError:
                return None
        doc = _decode(raw.rstrip(b"\n"))
        return doc if doc is not None and doc.id == doc_id else None

    def __contains__(self, ref: object) -> bool:
        if not isinstance(ref, str):
            return False
        try:
            return self.get(ref) is not None
        except MemoryValidationError:
            return False

    def __len__(self) -> int:
        with self._lock:
            self._sync()
            return len(self._offsets)

    def __iter__(self) -> Iterator[EvidenceDocument]:
        """Readable documents, oldest first (a snapshot taken when iteration starts)."""
        with self._lock:
            docs = [doc for _, doc in self._read_all() if doc is not None]
        return iter(docs)

    def check(self) -> EvidenceCacheReport:
        """Scan the whole file and report readable records and damaged lines."""
        with self._lock:
            self._signature = None
            self._sync()
            corrupt = list(self._corrupt)
            if self._partial_tail:
                corrupt.append(self._lines + 1)
            signature = self._signature
            return EvidenceCacheReport(
                records=len(self._offsets),
                corrupt_lines=tuple(corrupt),
                bytes=signature[1] if signature is not None else 0,
            )

    # -- internals ----------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Thread lock plus, where available, an exclusive advisory file lock."""
        with self._lock:
            if fcntl is None:
                yield
                return
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                handle = open(self.path.with_name(self.path.name + ".lock"), "a+b")  # noqa: SIM115
            except OSError as exc:
                raise StorageError(f"cannot lock the evidence cache {self.path}: {exc}") from exc
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
                handle.close()

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError(f"cannot read the evidence cache {self.path}: {exc}") from exc
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _reset(self) -> None:
        self._offsets = {}
        self._corrupt = []
        self._lines = 0
        self._scanned_size = 0
        self._partial_tail = False

    def _sync(self) -> None:
        """Bring the in-memory index up to date with the file (incrementally when it grew)."""
        signature = self._stat()
        if signature is None:
            self._reset()
            self._signature = None
            return
        if signature == self._signature:
            return
        previous = self._signature
        grew = (
            previous is not None
            and previous[0] == signature[0]
            and signature[1] >= self._scanned_size
        )
        if not grew:
            self._reset()
        try:
            with self.path.open("rb") as handle:
                handle.seek(self._scanned_size)
                self._index_from(handle, self._scanned_size)
        except OSError as exc:
            raise StorageError(f"cannot read the evidence cache {self.path}: {exc}") from exc
        self._signature = self._stat()

    def _index_from(self, handle: Any, offset: int) -> None:
        self._partial_tail = False
        for raw in handle:
            if not raw.endswith(b"\n"):
                # No newline yet: half-written (crash, or a writer still busy). Do not index
                # past it, so a later scan reads the completed line from its start.
                self._partial_tail = bool(raw.strip())
                break
            body = raw[:-1]
            if body.strip():
                self._lines += 1
                doc = _decode(body)
                if doc is None:
                    self._corrupt.append(self._lines)
                else:
                    self._offsets.setdefault(doc.id, offset)
            offset += len(raw)
        self._scanned_size = offset

    def _read_all(self) -> list[tuple[bytes, EvidenceDocument | None]]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StorageError(f"cannot read the evidence cache {self.path}: {exc}") from exc
        out: list[tuple[bytes, EvidenceDocument | None]] = []
        for raw in data.split(b"\n"):
            if raw.strip():
                out.append((raw, _decode(raw)))
        return out

    def _append(self, line: bytes) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("ab") as handle:
                prefix = b""
                if handle.tell() > 0:
                    with self.path.open("rb") as reader:
                        reader.seek(-1, os.SEEK_END)
                        if reader.read(1) != b"\n":
                            prefix = b"\n"
                handle.write(prefix + line + b"\n")
        except OSError as exc:
            raise StorageError(f"cannot append to the evidence cache {self.path}: {exc}") from exc
        self._signature = None  # force a rescan: the damaged tail (if any) is now a full line
        self._sync()

    def _enforce_retention(self) -> None:
        if self.max_bytes is None and self.max_records is None:
            return
        size = self._signature[1] if self._signature is not None else 0
        if (self.max_records is None or self._lines <= self.max_records) and (
            self.max_bytes is None or size <= self.max_bytes
        ):
            return
        lines = [raw for raw, _ in self._read_all()]
        kept: list[bytes] = []
        total = 0
        for raw in reversed(lines):
            cost = len(raw) + 1
            if self.max_records is not None and len(kept) >= self.max_records:
                break
            if self.max_bytes is not None and total + cost > self.max_bytes:
                break
            kept.append(raw)
            total += cost
        kept.reverse()
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            with tmp.open("wb") as handle:
                handle.write(b"".join(raw + b"\n" for raw in kept))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise StorageError(f"cannot compact the evidence cache {self.path}: {exc}") from exc
        self._signature = None
        self._reset()
        self._sync()

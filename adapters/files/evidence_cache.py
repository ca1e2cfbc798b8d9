"""The evidence cache: the JSONL :class:`~swarmmem.ports.evidence.EvidenceStore`.

Raw documents (API docs, search results, pages) are kept out of memory. Documents live in one
JSONL file, by default ``<root>/.swarm/evidence-cache/documents.jsonl``, one JSON object per line::

    {"id": "evd_<16 hex>", "source": "...", "text": "...",
     "contentHash": "<64 hex>", "createdAt": "<ISO-8601>"}

Agents cite a document as ``evidence-cache:evd_<16 hex>`` (the ref format and ids live in
:mod:`swarmmem.core.model.evidence`), so adding the same document twice returns the same ref
and writes nothing. Text and source are secret-redacted *before* anything is hashed or
written: a cached page never carries a token.

Retention (:class:`~swarmmem.core.model.evidence.EvidenceRetention`): append-only unless
``max_bytes`` and/or ``max_records`` is given. Then, after each append, the oldest lines are
dropped until the file is within both bounds; every line counts as one entry, an unreadable
one included. The file is rewritten through a temporary file and an atomic rename, so a crash
leaves either the old or the new file.

Damaged lines (bad JSON, wrong shape, an id that does not match its text, a half-written last
line) never stop the cache: they are skipped, and :meth:`EvidenceCache.check` reports their
line numbers. A new record always starts on a fresh line.

Concurrency: one lock per instance for threads, plus an advisory ``flock`` on a sidecar
``.lock`` file (POSIX only) so that processes sharing the file do not interleave a compaction
with an append.

A cloned repository may ship links in ``.swarm/``: no file of the cache (documents, lock,
compaction's temporary file) is opened through a symbolic link, nor any folder from the
project root down to the cache when the cache is the project's (:meth:`EvidenceCache.for_root`);
a link is refused with a :class:`~swarmmem.core.model.errors.StorageError`. The cache is the
user's own state: its folder is created 0700 and its files 0600.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets as random_names
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarmmem.adapters.files._safe import open_append, open_new, safe_dir
from swarmmem.core.model.errors import MemoryValidationError, StorageError
from swarmmem.core.model.evidence import (
    EVIDENCE_REF_PREFIX,
    EvidenceDocument,
    EvidenceReport,
    EvidenceRetention,
    evidence_id,
    parse_evidence_ref,
)
from swarmmem.core.model.ids import to_iso
from swarmmem.ports.clock import Clock, SystemClock
from swarmmem.ports.detectors import SecretDetector

if TYPE_CHECKING:
    from swarmmem.core.config import EvidenceConfig

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["DEFAULT_RELATIVE_PATH", "EvidenceCache"]

DEFAULT_RELATIVE_PATH = Path(".swarm", "evidence-cache", "documents.jsonl")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _linked(path: Path) -> StorageError:
    return StorageError(f"refusing to use the evidence cache through the symbolic link {path}")


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
    """Append-only (optionally bounded) JSONL store of redacted evidence documents.

    Implements :class:`~swarmmem.ports.evidence.EvidenceStore`.

    Args:
        path: the JSONL file; see :meth:`for_root` for the conventional location.
        max_bytes: optional bound on the file size.
        max_records: optional bound on the number of lines.
        secrets: the detector used to redact text and source before storing (default: the
            regex detector).
        clock: source of ``createdAt`` (default: the system clock).
        root: the project folder the cache lies under, if any: no folder from it down to the
            cache may be a symbolic link.

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
        root: str | os.PathLike[str] | None = None,
    ) -> None:
        self.path = Path(path)
        self._root = Path(root) if root is not None else None
        self.retention = EvidenceRetention(max_bytes=max_bytes, max_records=max_records)
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
    def from_config(cls, section: EvidenceConfig, **parts: Any) -> EvidenceCache:
        """The project's cache under ``memory.evidence``'s size limits (``parts``: the project
        ``root`` and what :meth:`for_root` passes on)."""
        return cls.for_root(
            max_bytes=section.cache_max_bytes, max_records=section.cache_max_records, **parts
        )

    @classmethod
    def for_root(
        cls,
        root: str | os.PathLike[str],
        max_bytes: int | None = None,
        max_records: int | None = None,
        **kwargs: Any,
    ) -> EvidenceCache:
        """The cache of the project at ``root`` (``.swarm/evidence-cache/documents.jsonl``)."""
        return cls(Path(root) / DEFAULT_RELATIVE_PATH, max_bytes, max_records, root=root, **kwargs)

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
        if not self.retention.fits(len(line) + 1):
            raise MemoryValidationError(
                f"evidence document of {len(line) + 1} bytes exceeds "
                f"evidence.cacheMaxBytes={self.retention.max_bytes}"
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
                with self._open_read() as handle:
                    handle.seek(offset)
                    raw = handle.readline()
            except (OSError, StorageError):
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

    def check(self) -> EvidenceReport:
        """Scan the whole file and report readable records and damaged lines."""
        with self._lock:
            self._signature = None
            self._sync()
            corrupt = list(self._corrupt)
            if self._partial_tail:
                corrupt.append(self._lines + 1)
            signature = self._signature
            return EvidenceReport(
                records=len(self._offsets),
                corrupt_lines=tuple(corrupt),
                bytes=signature[1] if signature is not None else 0,
            )

    # -- internals ----------------------------------------------------------------------

    def _folder(self) -> None:
        """Create the cache's folder (0700), never through a link: from the project root down
        when the cache is the project's, else its own folder."""
        folder = self.path.parent
        if self._root is not None:
            with contextlib.suppress(ValueError):
                safe_dir(self._root, folder.relative_to(self._root))
                return
        if folder.is_symlink():
            raise _linked(folder)
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)

    def _open_read(self) -> Any:
        """The cache file opened for reading, never through a link."""
        try:
            fd = os.open(self.path, os.O_RDONLY | _NOFOLLOW)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _linked(self.path) from exc
            raise
        return os.fdopen(fd, "rb")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Thread lock plus, where available, an exclusive advisory file lock."""
        with self._lock:
            if fcntl is None:
                yield
                return
            lock = self.path.with_name(self.path.name + ".lock")
            try:
                self._folder()
                fd = os.open(lock, os.O_RDWR | os.O_CREAT | _NOFOLLOW, 0o600)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise _linked(lock) from exc
                raise StorageError(f"cannot lock the evidence cache {self.path}: {exc}") from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StorageError(f"cannot read the evidence cache {self.path}: {exc}") from exc
        if stat.S_ISLNK(st.st_mode):
            raise _linked(self.path)
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
            with self._open_read() as handle:
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
            with self._open_read() as handle:
                data = handle.read()
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
            self._folder()
            with os.fdopen(open_append(self.path), "ab") as handle:
                prefix = b""
                if handle.tell() > 0:
                    with self._open_read() as reader:
                        reader.seek(-1, os.SEEK_END)
                        if reader.read(1) != b"\n":
                            prefix = b"\n"
                handle.write(prefix + line + b"\n")
        except OSError as exc:
            raise StorageError(f"cannot append to the evidence cache {self.path}: {exc}") from exc
        self._signature = None  # force a rescan: the damaged tail (if any) is now a full line
        self._sync()

    def _enforce_retention(self) -> None:
        size = self._signature[1] if self._signature is not None else 0
        if not self.retention.exceeded(self._lines, size):
            return
        lines = [raw for raw, _ in self._read_all()]
        kept = lines[len(lines) - self.retention.keep_newest([len(raw) + 1 for raw in lines]) :]
        tmp = self.path.with_name(f"{self.path.name}.{random_names.token_hex(8)}.tmp")
        try:
            with os.fdopen(open_new(tmp), "wb") as handle:
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

"""Trusted bulk import: records in the reference shape, completed, validated, written at once.

What can be derived and is absent is filled (id, contentHash, timestamps, the repository scope,
confidence 0.8, stability durable, source manual, scratch expiry); every record is validated;
a record whose scope is not one of the importing context's is refused (no repository writes
into another's scope through an import); invalid ones are refused with their reason and
nothing else changes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

import attrs

from swarmmem.core.model.codec import record_from_dict, scope_from_dict, source_from_dict
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.ids import content_hash, memory_id_for_hash, to_iso
from swarmmem.core.model.records import MemoryRecord, MemoryScope
from swarmmem.core.model.text import all_encode, check_json_texts, json_strings
from swarmmem.core.writes.proposals import SCRATCH_TTL
from swarmmem.core.writes.redaction import secret_field
from swarmmem.core.writes.validation import validate_record
from swarmmem.ports.detectors import SecretDetector
from swarmmem.ports.storage import StorageProvider


@attrs.frozen(kw_only=True)
class ImportResult:
    """Outcome of an import: how many were written, which were refused (index, reason)."""

    written: int
    refused: tuple[tuple[int, str], ...]


def complete_record(
    raw: Any,
    *,
    now: dt.datetime,
    repo_scope: MemoryScope,
    secrets: SecretDetector,
    reject_durable_secrets: bool,
    allowed_keys: Collection[str] | None = None,
) -> MemoryRecord:
    """One import row as a validated record (``MemoryValidationError`` when it is refused);
    ``allowed_keys``: the scope keys the record must lie in (``None``: any)."""
    if not isinstance(raw, Mapping):
        raise MemoryValidationError(f"record must be an object; got {type(raw).__name__}")
    strings = json_strings(raw)
    if strings is None or not all_encode(strings):
        check_json_texts(raw, "record")  # names the field that is not valid text
    where = secret_field(secrets, raw, "record", strings=strings)
    if where is not None:
        raise MemoryValidationError(f"{where} contains a likely secret")
    data = dict(raw)
    scope = scope_from_dict(data["scope"]) if "scope" in data else repo_scope
    if allowed_keys is not None and scope.key not in allowed_keys:
        raise MemoryValidationError(
            f"record: scope {scope.type} is outside this context's scopes (another "
            "repository's scope cannot be written by an import)"
        )
    data["scope"] = scope.as_dict()
    kind = data.get("kind")
    text = data.get("text")
    if not isinstance(kind, str) or not isinstance(text, str):
        raise MemoryValidationError("record: kind and text are required strings")
    digest = content_hash(scope.as_dict(), kind, text)
    data.setdefault("contentHash", digest)
    data.setdefault("id", memory_id_for_hash(digest))
    data.setdefault("createdAt", to_iso(now))
    data.setdefault("updatedAt", data["createdAt"])
    data.setdefault("confidence", 0.8)
    data.setdefault("stability", "ephemeral" if kind == "scratch" else "durable")
    data.setdefault("tags", [])
    if "source" not in data:
        data["source"] = {"type": "manual", "ref": "import"}
    else:
        source_from_dict(data["source"])
    if kind == "scratch" and "expiresAt" not in data:
        data["expiresAt"] = to_iso(now + SCRATCH_TTL)
    return validate_record(
        record_from_dict(data), secrets=secrets, reject_durable_secrets=reject_durable_secrets
    )


def import_records(
    store: StorageProvider,
    rows: Iterable[Any],
    *,
    now: dt.datetime,
    repo_scope: MemoryScope,
    secrets: SecretDetector,
    reject_durable_secrets: bool,
    allowed_scopes: Iterable[MemoryScope] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[ImportResult, list[MemoryRecord]]:
    """Write every valid row in one transaction (the store's batched ``upsert_many``, which
    reports ``progress(done, total)``); returns the result and the written records.
    ``allowed_scopes``: the importing context's scopes, which every record must lie in."""
    allowed_keys = None if allowed_scopes is None else frozenset(s.key for s in allowed_scopes)
    refused: list[tuple[int, str]] = []
    ready: list[MemoryRecord] = []
    for index, raw in enumerate(rows):
        try:
            ready.append(
                complete_record(
                    raw,
                    now=now,
                    repo_scope=repo_scope,
                    secrets=secrets,
                    reject_durable_secrets=reject_durable_secrets,
                    allowed_keys=allowed_keys,
                )
            )
        except (MemoryValidationError, TypeError, ValueError) as exc:
            refused.append((index, str(exc)))
    store.upsert_many(ready, progress=progress)
    return ImportResult(written=len(ready), refused=tuple(refused)), ready

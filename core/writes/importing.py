"""Trusted bulk import: records in the reference shape, completed, validated, written at once.

What can be derived and is absent is filled (id, contentHash, timestamps, the repository scope,
confidence 0.8, stability durable, source manual, scratch expiry); every record is validated;
a record whose scope is not one of the importing context's is refused (no repository writes
into another's scope through an import); invalid ones are refused with their reason and
nothing else changes.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

import attrs

from swarmmem.core.model.codec import record_from_dict, scope_from_dict, source_from_dict
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.ids import content_hash_for_key, memory_id_for_hash, to_iso
from swarmmem.core.model.records import MemoryRecord, MemoryScope, MemorySource
from swarmmem.core.model.semantics import scope_key_of
from swarmmem.core.model.text import all_encode, check_json_texts, json_strings
from swarmmem.core.writes.proposals import SCRATCH_TTL
from swarmmem.core.writes.redaction import screened_clean, secret_field
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
    completer = _Completer(
        now=now,
        repo_scope=repo_scope,
        secrets=secrets,
        allowed_keys=allowed_keys,
    )
    strings = completer.check_texts(raw)
    completer.check_secrets(raw, strings)
    return completer.finish(raw)


#: rows whose strings are screened for secrets together (a clean screen clears them all)
SCREEN_ROWS = 256
#: parsed scope and source objects kept per import (rows mostly share a few of them)
_PARSED_CACHE = 4096


class _Completer:
    """The steps of :func:`complete_record`, with what rows share computed once: the
    timestamps of ``now``, parsed scopes (their keys) and sources."""

    def __init__(
        self,
        *,
        now: dt.datetime,
        repo_scope: MemoryScope,
        secrets: SecretDetector,
        allowed_keys: Collection[str] | None,
    ) -> None:
        self.now = to_iso(now)
        self.scratch_expiry = to_iso(now + SCRATCH_TTL)
        self.repo_scope = repo_scope
        self.secrets = secrets
        self.allowed_keys = allowed_keys
        self._scopes: dict[Any, tuple[MemoryScope, str]] = {}
        self._sources: dict[Any, MemorySource] = {}

    def check_texts(self, raw: Any) -> list[str] | None:
        """The row is an object whose strings are valid text; returns those strings (or
        ``None`` when they could not be gathered)."""
        if not isinstance(raw, Mapping):
            raise MemoryValidationError(f"record must be an object; got {type(raw).__name__}")
        strings = json_strings(raw)
        if strings is None or not all_encode(strings):
            check_json_texts(raw, "record")  # names the field that is not valid text
        return strings

    def check_secrets(self, raw: Mapping[str, Any], strings: list[str] | None) -> None:
        where = secret_field(self.secrets, raw, "record", strings=strings)
        if where is not None:
            raise MemoryValidationError(f"{where} contains a likely secret")

    def finish(self, raw: Mapping[str, Any]) -> MemoryRecord:
        """Complete and validate a row whose texts and secrets were checked."""
        data = dict(raw)
        scope, scope_key = self._scope(data["scope"]) if "scope" in data else self._repo_scope()
        if self.allowed_keys is not None and scope_key not in self.allowed_keys:
            raise MemoryValidationError(
                f"record: scope {scope.type} is outside this context's scopes (another "
                "repository's scope cannot be written by an import)"
            )
        data["scope"] = scope  # handed to record_from_dict below as parsed
        kind = data.get("kind")
        text = data.get("text")
        if not isinstance(kind, str) or not isinstance(text, str):
            raise MemoryValidationError("record: kind and text are required strings")
        digest = content_hash_for_key(scope_key, kind, text)
        data.setdefault("contentHash", digest)
        data.setdefault("id", memory_id_for_hash(digest))
        data.setdefault("createdAt", self.now)
        data.setdefault("updatedAt", data["createdAt"])
        data.setdefault("confidence", 0.8)
        data.setdefault("stability", "ephemeral" if kind == "scratch" else "durable")
        data.setdefault("tags", [])
        if "source" not in data:
            data["source"] = {"type": "manual", "ref": "import"}
        source = self._source(data["source"])
        if kind == "scratch" and "expiresAt" not in data:
            data["expiresAt"] = self.scratch_expiry
        record = record_from_dict(data, parsed={"scope": scope, "source": source})
        # every string of the row, the text and corrections included, was checked for
        # secrets above with the same detector: the record's own check would find nothing
        return validate_record(
            record, secrets=None, reject_durable_secrets=False, content_digest=digest
        )

    def _repo_scope(self) -> tuple[MemoryScope, str]:
        return self.repo_scope, scope_key_of(self.repo_scope)

    def _scope(self, value: Any) -> tuple[MemoryScope, str]:
        """:func:`scope_from_dict` and the scope's key, kept per distinct scope object."""
        token = _token(value)
        found = self._scopes.get(token) if token is not None else None
        if found is None:
            scope = scope_from_dict(value)
            found = (scope, scope_key_of(scope))
            if token is not None and len(self._scopes) < _PARSED_CACHE:
                self._scopes[token] = found
        return found

    def _source(self, value: Any) -> MemorySource:
        """:func:`source_from_dict`, kept per distinct source object."""
        token = _token(value)
        found = self._sources.get(token) if token is not None else None
        if found is None:
            found = source_from_dict(value)
            if token is not None and len(self._sources) < _PARSED_CACHE:
                self._sources[token] = found
        return found


def _token(value: Any) -> tuple[tuple[str, str], ...] | None:
    """A hashable stand-in for a flat object of strings (what a scope or source object is):
    two such objects with equal tokens parse to equal values. ``None`` for anything else."""
    if type(value) is not dict:
        return None
    items = tuple(value.items())
    for key, item in items:
        if type(key) is not str or type(item) is not str:
            return None
    return items


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
    ``allowed_scopes``: the importing context's scopes, which every record must lie in.

    Each row goes through :func:`complete_record`'s checks in its order; the secret check of
    :data:`SCREEN_ROWS` rows at a time starts with one screen of all their strings, and only
    when that screen may find something is each row checked on its own. A row with a likely
    secret in any string is refused whatever ``reject_durable_secrets`` says (that check
    covers the durable-record one, which therefore does not run again).
    """
    allowed_keys = None if allowed_scopes is None else frozenset(s.key for s in allowed_scopes)
    completer = _Completer(
        now=now,
        repo_scope=repo_scope,
        secrets=secrets,
        allowed_keys=allowed_keys,
    )
    refused: list[tuple[int, str]] = []
    ready: list[MemoryRecord] = []
    numbered = enumerate(rows)
    while chunk := list(itertools.islice(numbered, SCREEN_ROWS)):
        checked: list[tuple[int, Any, list[str] | None]] = []
        failed: dict[int, str] = {}
        for index, raw in chunk:
            try:
                checked.append((index, raw, completer.check_texts(raw)))
            except _REFUSALS as exc:
                failed[index] = str(exc)
        clean = screened_clean(secrets, [s for _i, _raw, s in checked if s is not None])
        for index, raw, strings in checked:
            try:
                if not (clean and strings is not None):
                    completer.check_secrets(raw, strings)
                ready.append(completer.finish(raw))
            except _REFUSALS as exc:
                failed[index] = str(exc)
        refused.extend(sorted(failed.items()))
    store.upsert_many(ready, progress=progress)
    return ImportResult(written=len(ready), refused=tuple(refused)), ready


#: what refuses one row (the others are still imported)
_REFUSALS = (MemoryValidationError, TypeError, ValueError)

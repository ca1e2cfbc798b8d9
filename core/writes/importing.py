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
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from json.encoder import encode_basestring
from typing import Any, NamedTuple, TypeVar, overload

import attrs

from swarmmem.core.model.codec import (
    REQUIRED_RECORD_KEYS,
    record_from_dict,
    scope_from_dict,
    source_from_dict,
    source_to_dict,
)
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.ids import (
    content_hash_for_key,
    is_iso_datetime,
    memory_id_for_hash,
    to_iso,
)
from swarmmem.core.model.records import (
    MAX_MEMORY_TEXT_LENGTH,
    MAX_TAG_LENGTH,
    MAX_TAGS,
    MEMORY_KINDS,
    STABILITIES,
    MemoryRecord,
    MemoryScope,
    MemorySource,
)
from swarmmem.core.model.scopes import WORKSPACE_WRITES_OFF
from swarmmem.core.model.semantics import (
    StoredRow,
    dumps,
    scope_key_of,
    stored_form,
    stored_row,
)
from swarmmem.core.model.text import HIDDEN_RE, all_encode, check_json_texts, json_strings
from swarmmem.core.writes.proposals import SCRATCH_TTL
from swarmmem.core.writes.redaction import screened_clean, secret_field
from swarmmem.core.writes.validation import (
    check_kind_rules,
    holds_sentinel,
    validate_record,
)
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
_T = TypeVar("_T")


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
        self._scope_rows: dict[Any, tuple[MemoryScope, str, dict[str, str], str]] = {}
        self._source_rows: dict[Any, tuple[dict[str, Any], str, bool]] = {}
        #: what the direct check found valid: timestamps, and (kind, stability, scope type,
        #: evidence) of kinds other than scratch
        self._valid_times: set[str] = set()
        self._valid_rules: set[tuple[str, str, str, bool]] = set()
        self._repo_direct = (*self._repo_scope(), *_with_text(repo_scope.as_dict()))
        #: the key names of the record shape that hold no likely secret (all of them, with
        #: any usual detector): valid text, checked once here instead of in every row
        self._clean_names = frozenset(n for n in _NAMES if not secrets.contains_secret(n))
        self._finish = self.finish  # (one bound method for every direct row)

    def check_texts(self, raw: Any) -> list[str] | None:
        """The row is an object whose strings are valid text; returns those strings that
        may need a secret check, every one but the keys named in the record shape that
        were found clean (or ``None`` when they could not be gathered)."""
        if type(raw) is not dict and not isinstance(raw, Mapping):
            raise MemoryValidationError(f"record must be an object; got {type(raw).__name__}")
        strings = json_strings(raw, self._clean_names)
        if strings is None or not all_encode(strings):
            check_json_texts(raw, "record")  # names the field that is not valid text
        if strings is not None and HIDDEN_RE.search("\n".join(strings)):
            raise MemoryValidationError(HIDDEN_REFUSAL)
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
            if scope.type == "workspace":
                raise MemoryValidationError(f"record: {WORKSPACE_WRITES_OFF}")
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
            data["source"] = dict(_IMPORT_SOURCE)
        source = self._source(data["source"])
        if kind == "scratch" and "expiresAt" not in data:
            data["expiresAt"] = self.scratch_expiry
        record = record_from_dict(data, parsed={"scope": scope, "source": source})
        # every string of the row, the text and corrections included, was checked for
        # secrets above with the same detector: the record's own check would find nothing
        return validate_record(
            record, secrets=None, reject_durable_secrets=False, content_digest=digest
        )

    def direct(self, raw: Any) -> StoredRow | None:
        """:meth:`finish` as a :class:`StoredRow` built straight from the row, for a row
        whose every value this check proves valid (no record is built); ``None`` for any
        other row, which :meth:`finish` then completes or refuses with its reason. Covers
        plain rows: no anchors, outcomes, supersedes or relations, flat scope and source
        objects, metadata without the outcome keys."""
        if type(raw) is not dict or not raw.keys() <= _DIRECT_KEYS:
            return None
        scope_row = self._direct_scope(raw["scope"]) if "scope" in raw else self._repo_direct
        if scope_row is None:
            return None
        if self.allowed_keys is not None and scope_row[1] not in self.allowed_keys:
            return None
        kind: Any = raw.get("kind")
        text: Any = raw.get("text")
        if not _plain_text(kind, text):
            return None
        values = self._direct_values(raw, kind, text, scope_row[1])
        if values is None or not self._direct_rules(values, kind, scope_row[0].type):
            return None
        return self._direct_row(raw, values, kind, text, scope_row)

    def _direct_values(
        self, raw: dict[str, Any], kind: str, text: str, scope_key: str
    ) -> _DirectValues | None:
        """The row's values with the defaults :meth:`finish` would fill, when each is valid
        (its id and content hash the derived ones, its times ISO timestamps, its confidence,
        stability, tags, expiry, metadata and source plain and in range)."""
        get = raw.get
        digest = content_hash_for_key(scope_key, kind, text)
        memory_id = memory_id_for_hash(digest)
        given_id = get("id", memory_id)
        given_hash = get("contentHash", digest)
        created = get("createdAt", self.now)
        updated = get("updatedAt", created)
        confidence = get("confidence", 0.8)
        stability = get("stability", "ephemeral" if kind == "scratch" else "durable")
        tags = get("tags", _NO_TAGS)
        found_source = self._direct_source(get("source", _IMPORT_SOURCE))
        expires = get("expiresAt", self.scratch_expiry if kind == "scratch" else None)
        metadata = get("metadata")
        times = self._valid_times
        if (
            found_source is None
            or type(given_id) is not str
            or given_id != memory_id
            or type(given_hash) is not str
            or given_hash != digest
            or type(created) is not str
            or (created not in times and not self._valid_time(created))
            or type(updated) is not str
            or (updated not in times and not self._valid_time(updated))
            or type(confidence) not in _NUMBERS
            or not 0.0 <= confidence <= 1.0
            or type(stability) is not str
            or stability not in _STABILITIES
            or type(tags) not in _SEQUENCES
            or len(tags) > MAX_TAGS
            or not (expires is None or is_iso_datetime(expires))
            or not (metadata is None or _plain_metadata(metadata))
        ):
            return None
        for tag in tags:
            if type(tag) is not str or not 1 <= len(tag) <= MAX_TAG_LENGTH:
                return None
        return _DirectValues(
            memory_id,
            digest,
            created,
            updated,
            confidence,
            stability,
            tags,
            expires,
            metadata,
            *found_source,
        )

    def _direct_rules(self, values: _DirectValues, kind: str, scope_type: str) -> bool:
        """The row keeps the kind rules (its stability, scope and evidence; a scratch row's
        expiry); a kind other than scratch is checked once per combination."""
        rules = (kind, values.stability, scope_type, values.evidence)
        if kind != "scratch" and rules in self._valid_rules:
            return True
        try:
            check_kind_rules(*rules, values.created, values.expires)
        except MemoryValidationError:
            return False
        if kind != "scratch":  # (the other rules do not depend on the row's times)
            self._valid_rules.add(rules)
        return True

    def _direct_row(
        self,
        raw: dict[str, Any],
        values: _DirectValues,
        kind: str,
        text: str,
        scope_row: tuple[MemoryScope, str, dict[str, str], str],
    ) -> StoredRow | None:
        """The stored row of valid ``values``: its data and the JSON text of that data,
        written piece by piece; ``None`` when its metadata or an optional key is not plain."""
        memory_id, digest, confidence = values.memory_id, values.digest, values.confidence
        created, updated, stability = values.created, values.updated, values.stability
        tags = values.tags
        _, scope_key, scope_json, scope_text = scope_row
        tag_list = tags if type(tags) is list else list(tags)  # (read, never changed)
        data: dict[str, Any] = {
            "id": memory_id,
            "scope": scope_json,
            "kind": kind,
            "text": text,
            "tags": tag_list,
            "confidence": confidence,
            "stability": stability,
            "source": values.source_json,
            "createdAt": created,
            "updatedAt": updated,
        }
        # the JSON text of ``data`` written piece by piece, as ``dumps(data)`` writes it: the
        # id, kind, stability and content hash need no escaping (hex digits and the fixed
        # names), the scope and source texts are kept per distinct object
        head = (
            f'{{"id":"{memory_id}","scope":{scope_text},"kind":"{kind}","text":{_string(text)},'
            f'"tags":[{",".join(map(_string, tag_list))}],"confidence":{_number(confidence)},'
            f'"stability":"{stability}","source":{values.source_text},'
            f'"createdAt":{_string(created)},"updatedAt":{_string(updated)}'
        )
        metadata = values.metadata
        stored_metadata = {} if metadata is None else dict(metadata)
        metadata_text = _metadata_text(stored_metadata)
        if metadata_text is None:
            return None
        optional = raw.keys() - _BASE_KEYS
        if not optional and values.expires is None:  # (most rows)
            data["contentHash"] = digest
            data["metadata"] = stored_metadata
            text_json = f'{head},"contentHash":"{digest}","metadata":{metadata_text}}}'
            return StoredRow(
                memory_id,
                scope_key,
                data,
                _NO_PROVENANCE,
                make_record=self._finish,
                made_from=raw,
                text=text_json,
            )
        if not self._direct_optional(raw, optional):
            return None
        tail = _optional_tail(raw, data, values, stored_metadata, metadata_text)
        provenance = (
            raw.get("sourceTaskId") or None,
            raw.get("embeddingModelVersion") or None,
            raw.get("validFrom"),
            raw.get("supersedesReason"),
        )
        return StoredRow(
            memory_id,
            scope_key,
            data,
            provenance,
            make_record=self._finish,
            made_from=raw,
            text=head + tail,
        )

    def _direct_optional(self, raw: dict[str, Any], optional: set[str]) -> bool:
        """The optional keys of a direct row hold valid values?"""
        for key in optional:
            value = raw[key]
            if value is None:
                continue
            if key in _ISO_KEYS:
                ok = is_iso_datetime(value)
            elif key == "qValue":
                ok = type(value) in _NUMBERS and 0.0 <= value <= 1.0
            elif key == "supersededBy":
                ok = type(value) is str and 1 <= len(value) <= 100_000
            elif key in _TEXT_KEYS:
                ok = type(value) is str
            else:
                ok = type(value) in _SCALARS
            if not ok:
                return False
        return True

    def _valid_time(self, value: str) -> bool:
        """``is_iso_datetime(value)``, remembered when True."""
        if not is_iso_datetime(value):
            return False
        if len(self._valid_times) < _PARSED_CACHE:
            self._valid_times.add(value)
        return True

    def _direct_scope(self, value: Any) -> tuple[MemoryScope, str, dict[str, str], str] | None:
        """A scope object's parsed value, key, stored JSON and its text (``None``: not
        proven valid)."""
        return _kept_if_valid(self._scope_rows, value, self._scope_row)

    def _scope_row(self, value: Any) -> tuple[MemoryScope, str, dict[str, str], str]:
        scope, key = self._scope(value)
        return (scope, key, *_with_text(scope.as_dict()))

    def _direct_source(self, value: Any) -> tuple[dict[str, Any], str, bool] | None:
        """A source object's stored JSON, its text and whether it is evidence (``None``: not
        proven valid)."""
        return _kept_if_valid(self._source_rows, value, self._source_row)

    def _source_row(self, value: Any) -> tuple[dict[str, Any], str, bool]:
        source = self._source(value)
        return (*_with_text(source_to_dict(source)), source.has_evidence)

    def _repo_scope(self) -> tuple[MemoryScope, str]:
        return self.repo_scope, scope_key_of(self.repo_scope)

    def _scope(self, value: Any) -> tuple[MemoryScope, str]:
        """:func:`scope_from_dict` and the scope's key, kept per distinct scope object."""
        return _kept(self._scopes, _token(value), value, _parse_scope)

    def _source(self, value: Any) -> MemorySource:
        """:func:`source_from_dict`, kept per distinct source object."""
        return _kept(self._sources, _token(value), value, source_from_dict)


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


def _parse_scope(value: Any) -> tuple[MemoryScope, str]:
    scope = scope_from_dict(value)
    return scope, scope_key_of(scope)


def _kept(cache: dict[Any, _T], token: Any, value: Any, parse: Callable[[Any], _T]) -> _T:
    """``parse(value)``, kept in ``cache`` under ``token`` (see :func:`_token`; ``None``:
    not kept) while the cache holds fewer than :data:`_PARSED_CACHE` values."""
    found = cache.get(token) if token is not None else None
    if found is None:
        found = parse(value)
        if token is not None and len(cache) < _PARSED_CACHE:
            cache[token] = found
    return found


def _kept_if_valid(cache: dict[Any, _T], value: Any, parse: Callable[[Any], _T]) -> _T | None:
    """:func:`_kept` for a flat object of strings; ``None`` for anything else or a value
    ``parse`` refuses."""
    token = _token(value)
    if token is None:
        return None
    try:
        return _kept(cache, token, value, parse)
    except _REFUSALS:
        return None


#: why an imported row holding hidden characters is refused
HIDDEN_REFUSAL = (
    "record holds control, bidi or Unicode tag characters, which change what a text says "
    "without being seen; remove them"
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
) -> tuple[ImportResult, Sequence[MemoryRecord]]:
    """Write every valid row in one transaction (the store's batched ``upsert_rows``, which
    reports ``progress(done, total)``); returns the result and the written records (built
    from their rows when first read).
    ``allowed_scopes``: the importing context's scopes, which every record must lie in.

    Each row goes through :func:`complete_record`'s checks in its order; the secret check of
    :data:`SCREEN_ROWS` rows at a time starts with one screen of all their strings, and only
    when that screen may find something is each row checked on its own. A row with a likely
    secret in any string is refused whatever ``reject_durable_secrets`` says (that check
    covers the durable-record one, which therefore does not run again). A plain row that
    passes is written in its stored form without building its record first
    (:meth:`_Completer.direct`); any other is completed by :meth:`_Completer.finish`.
    """
    allowed_keys = None if allowed_scopes is None else frozenset(s.key for s in allowed_scopes)
    completer = _Completer(
        now=now,
        repo_scope=repo_scope,
        secrets=secrets,
        allowed_keys=allowed_keys,
    )
    refused: list[tuple[int, str]] = []
    ready: list[StoredRow] = []
    check_texts, direct = completer.check_texts, completer.direct
    numbered = enumerate(rows)
    while chunk := list(itertools.islice(numbered, SCREEN_ROWS)):
        checked: list[tuple[int, Any, list[str] | None]] = []
        failed: dict[int, str] = {}
        for index, raw in chunk:
            try:
                checked.append((index, raw, check_texts(raw)))
            except _REFUSALS as exc:
                failed[index] = str(exc)
        clean = screened_clean(secrets, [s for _i, _raw, s in checked if s is not None])
        for index, raw, strings in checked:
            try:
                if not (clean and strings is not None):
                    completer.check_secrets(raw, strings)
                row = direct(raw)
                ready.append(row if row is not None else stored_row_of(completer.finish(raw)))
            except _REFUSALS as exc:
                failed[index] = str(exc)
        refused.extend(sorted(failed.items()))
    store.upsert_rows(ready, progress=progress)
    return ImportResult(written=len(ready), refused=tuple(refused)), _Records(ready)


class _Records(Sequence[MemoryRecord]):
    """The records of stored rows, each built when first read."""

    def __init__(self, rows: Sequence[StoredRow]) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> MemoryRecord: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[MemoryRecord]: ...

    def __getitem__(self, index: int | slice) -> MemoryRecord | Sequence[MemoryRecord]:
        if isinstance(index, slice):
            return [row.record for row in self._rows[index]]
        return self._rows[index].record


def stored_row_of(record: MemoryRecord) -> StoredRow:
    """The stored row of a completed record (which stays the record the row gives)."""
    return stored_row(stored_form(record, None), given=record)


def _with_text(value: dict[str, Any]) -> tuple[dict[str, Any], str]:
    return value, dumps(value)


#: a string as ``dumps`` writes it (the JSON encoder's own quoting, non-ASCII kept)
_string = encode_basestring


def _number(value: float) -> str:
    """A finite ``int`` or ``float`` as ``dumps`` writes it."""
    return float.__repr__(value) if type(value) is float else int.__repr__(value)


class _DirectValues(NamedTuple):
    """The values of a direct row, defaults filled, and its source (as stored, as JSON text,
    and whether it is evidence)."""

    memory_id: str
    digest: str
    created: str
    updated: str
    confidence: float
    stability: str
    tags: Sequence[str]
    expires: str | None
    metadata: Mapping[str, Any] | None
    source_json: dict[str, Any]
    source_text: str
    evidence: bool


def _plain_text(kind: Any, text: Any) -> bool:
    """A known kind and a text of a valid length that holds no NUL and forges no recall
    block."""
    return (
        type(kind) is str
        and kind in _KINDS
        and type(text) is str
        and 1 <= len(text) <= MAX_MEMORY_TEXT_LENGTH
        and not holds_sentinel(text)
        and "\x00" not in text
    )


def _optional_tail(
    raw: Mapping[str, Any],
    data: dict[str, Any],
    values: _DirectValues,
    stored_metadata: dict[str, Any],
    metadata_text: str,
) -> str:
    """The JSON text after the head of a direct row with optional keys, those keys added to
    ``data`` in the stored order (the middle ones, the content hash and metadata, the tail
    ones)."""
    pieces = []
    for key in _MIDDLE_KEYS:
        value = values.expires if key == "expiresAt" else raw.get(key)
        if value is not None:
            data[key] = value
            pieces.append(f',"{key}":{dumps(value)}')
    data["contentHash"] = values.digest
    data["metadata"] = stored_metadata
    pieces.append(f',"contentHash":"{values.digest}","metadata":{metadata_text}')
    for key in _TAIL_KEYS:
        value = raw.get(key)
        if value is not None:
            data[key] = value
            pieces.append(f',"{key}":{dumps(value)}')
    pieces.append("}")
    return "".join(pieces)


def _metadata_text(metadata: dict[str, Any]) -> str | None:
    """``dumps(metadata)``; ``None`` when it cannot be written (a value that is not JSON:
    the row then takes the full path, whose write fails as it did)."""
    if not metadata:
        return "{}"
    try:
        return dumps(metadata)
    except (TypeError, ValueError):
        return None


def _plain_metadata(metadata: Any) -> bool:
    """Metadata a direct row may hold: an object without the outcome keys (which
    :func:`validate_record` checks against the outcomes)."""
    return (
        type(metadata) is dict
        and "outcomeEventIds" not in metadata
        and ("outcomeGeneration" not in metadata)
    )


#: what refuses one row (the others are still imported)
_REFUSALS = (MemoryValidationError, TypeError, ValueError)
#: the keys of a row that :meth:`_Completer.direct` takes: always written ...
_BASE_KEYS = frozenset({*REQUIRED_RECORD_KEYS, "tags", "metadata"})
#: ... optional, written between ``updatedAt`` and ``contentHash`` ...
_MIDDLE_KEYS = ("lastAccessedAt", "expiresAt", "qValue", "supersededBy")
#: ... optional, written after ``metadata`` ...
_TAIL_KEYS = (
    "cohortId",
    "producerSessionId",
    "producerAgentRole",
    "redactionPolicyVersion",
    "schemaVersion",
    "providerVersion",
    "sourceRevision",
)
#: ... and kept in columns beside the JSON
_PROVENANCE_KEYS = ("sourceTaskId", "embeddingModelVersion", "validFrom", "supersedesReason")
_DIRECT_KEYS = _BASE_KEYS | {*_MIDDLE_KEYS, *_TAIL_KEYS, *_PROVENANCE_KEYS}
#: the key names of the record shape (its own, its scope's and its source's)
_NAMES = _DIRECT_KEYS | {
    *("anchors", "outcomes", "supersedes", "relations", "file", "symbol"),
    *("type", "userId", "workspaceId", "projectId", "repoId", "repoRoot", "runId", "agentId"),
    *("ref", "url", "filePath", "commitSha", "createdBy"),
}
_ISO_KEYS = frozenset({"lastAccessedAt", "expiresAt", "validFrom"})
#: optional keys a direct row holds only as text (they are also bound as SQL values)
_TEXT_KEYS = frozenset(
    {"sourceTaskId", "embeddingModelVersion", "supersedesReason", "producerAgentRole"}
)
_SCALARS = (str, int, float, bool)
_NUMBERS = (int, float)
_SEQUENCES = (list, tuple)
_KINDS = frozenset(MEMORY_KINDS)
_STABILITIES = frozenset(STABILITIES)
_NO_TAGS: tuple[str, ...] = ()
_IMPORT_SOURCE = {"type": "manual", "ref": "import"}
_NO_PROVENANCE = (None, None, None, None)

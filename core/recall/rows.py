"""The scorer's candidate rows: what recall reads of a memory besides its text (tags, files,
symbols, kind words, scope specificity and key, times, Q-value, the kernel's columns), built
once per record object (:func:`derived`) or straight from a stored record's JSON object
(:func:`candidate_row`, for the SQL stores), and the loader of the full records a ranking
turns into items."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from swarmmem.core.model.candidates import CandidateRow
from swarmmem.core.model.codec import scope_from_dict
from swarmmem.core.model.ids import iso_to_ms
from swarmmem.core.model.records import MemoryRecord, q_value_of
from swarmmem.core.model.semantics import scope_key_of
from swarmmem.core.recall.references import FILE_KEYS, SYMBOL_KEYS, metadata_strings

SCOPE_SPECIFICITY: dict[str, float] = {
    "agent": 1.0,
    "run": 0.9,
    "repository": 0.8,
    "cohort": 0.8,
    "project": 0.65,
    "workspace": 0.45,
    "global_user": 0.3,
}


def symbol_field(record: MemoryRecord) -> str:
    """The symbol text of a record (metadata symbol keys)."""
    return " ".join(metadata_strings(record.metadata, SYMBOL_KEYS))


def is_expired(record: MemoryRecord, now_ms: float) -> bool:
    """True when the record has a parsable ``expiresAt`` at or before ``now_ms``."""
    expires = derived(record).expires_ms
    return expires is not None and expires <= now_ms


#: what the scorer reads of a record besides its text (:mod:`swarmmem.core.model.candidates`)
Derived = CandidateRow
#: the full records of chosen candidate rows by id (an id whose record cannot be read is
#: absent): what a ranking builds its items from
RecordLoader = Callable[[Sequence[CandidateRow]], Mapping[str, MemoryRecord]]


def derived(record: MemoryRecord) -> CandidateRow:
    """The scorer's fields of ``record``, computed once per record object and kept with it
    (a store that holds its records, like the in-memory and JSONL ones, pays for them once)."""
    cached: CandidateRow | None = record._derived
    if cached is None:
        path = record.source.file_path if isinstance(record.source.file_path, str) else None
        cached = _row(
            record.metadata,
            tags=" ".join(record.tags),
            kind=record.kind,
            ref=record.source.ref or "",
            path=path,
            scope_type=record.scope.type,
            scope_key=scope_key_of(record.scope),
            updated_at=record.updated_at,
            expires_at=record.expires_at,
            memory_id=record.id,
            text=record.text,
            confidence=float(record.confidence),
            inactive=bool(record.superseded_by) or record.deleted,
        )
        object.__setattr__(record, "_derived", cached)
    return cached


def candidate_row(data: Mapping[str, Any]) -> CandidateRow:
    """The scorer's fields of a stored record's JSON object (the reference shape), without
    building the record: equal to ``derived`` of the record it parses to. Raises KeyError,
    TypeError, ValueError, AttributeError or MemoryValidationError for a shape no record
    has (the caller then reads it as a record, which reports it)."""
    source = data["source"]
    metadata = data.get("metadata")
    if metadata is None:
        metadata = {}
    elif not isinstance(metadata, Mapping):
        raise TypeError("metadata is not an object")
    file_path = source.get("filePath")
    tags = data.get("tags")
    text = data["text"]
    confidence = data["confidence"]
    if not isinstance(text, str) or isinstance(confidence, bool):
        raise TypeError("text or confidence of a wrong type")
    return _row(
        metadata,
        tags="" if tags is None else " ".join(tags),
        kind=data["kind"],
        ref=source.get("ref") or "",
        path=file_path if isinstance(file_path, str) else None,
        scope_type=data["scope"]["type"],
        scope_key=_scope_key(data["scope"]),
        updated_at=data["updatedAt"],
        expires_at=data.get("expiresAt"),
        memory_id=data["id"],
        text=text,
        confidence=float(confidence),
        inactive=bool(data.get("supersededBy")) or metadata.get("deleted") is True,
    )


_SCOPE_KEY_OF: dict[tuple[tuple[str, Any], ...], str] = {}


def _scope_key(scope: Mapping[str, Any]) -> str:
    """``scope_key_of`` the scope a stored scope object parses to (memoised per object)."""
    items = tuple(scope.items())
    key = _SCOPE_KEY_OF.get(items)
    if key is None:
        if len(_SCOPE_KEY_OF) > 4096:
            _SCOPE_KEY_OF.clear()
        key = _SCOPE_KEY_OF[items] = scope_key_of(scope_from_dict(scope))
    return key


def _row(
    metadata: Mapping[str, Any],
    *,
    tags: str,
    kind: str,
    ref: str,
    path: str | None,
    scope_type: str,
    scope_key: str,
    updated_at: str | None,
    expires_at: str | None,
    memory_id: str,
    text: str,
    confidence: float,
    inactive: bool,
) -> CandidateRow:
    kind_words = kind.replace("_", " ")
    symbols = " ".join(metadata_strings(metadata, SYMBOL_KEYS))
    listed = metadata_strings(metadata, FILE_KEYS)
    return CandidateRow(
        tags=tags,
        files=" ".join(listed if path is None else [path, *listed]),
        symbols=symbols,
        kind_words=kind_words,
        ref=ref,
        specificity=SCOPE_SPECIFICITY.get(scope_type, 0.0),
        scope_key=scope_key,
        updated_ms=iso_to_ms(updated_at),
        expires_ms=iso_to_ms(expires_at),
        q=q_value_of(metadata),
        columns=(text, tags, kind_words, path or "", ref, symbols, " ".join(listed)),
        id=memory_id,
        text=text,
        kind=kind,
        confidence=confidence,
        scope_type=scope_type,
        inactive=inactive,
        recallable="outcomeQuestion" not in metadata,
    )


def records_loader(records: Iterable[MemoryRecord]) -> RecordLoader:
    """The :data:`RecordLoader` of records at hand."""
    by_id = {record.id: record for record in records}
    return lambda rows: by_id

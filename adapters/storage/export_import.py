"""JSONL export and import, for any storage provider.

``export_store`` writes ``<directory>/export/{memories,proposals,outcome-events}.jsonl``: every
record in any state (with provenance and its outcome view), every proposal, every outcome
event; one compact JSON object per line, a trailing newline when the file is not empty; each
file is replaced atomically (temporary file, fsync, rename).

``import_jsonl`` reads ``memories.jsonl``, ``proposals.jsonl`` and ``outcome-events.jsonl`` from
a directory (an export directory or a legacy JSONL store). Per file and id the **last** row
wins, even when it is invalid (the newest row owns the id); invalid rows are reported with
file, line and reason and nothing else about them is written. Everything is imported in one
store transaction: all rows or none.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from swarmmem.adapters.storage.jsonl import atomic_write_lines, read_jsonl
from swarmmem.core.model.codec import (
    outcome_event_from_dict,
    outcome_event_to_dict,
    proposal_from_dict,
    proposal_to_dict,
    record_from_dict,
    record_to_dict,
)
from swarmmem.core.model.errors import ConflictError, MemoryValidationError, StorageError
from swarmmem.core.model.ids import PROPOSAL_ID_RE, sha256_hex, stable_scope_key
from swarmmem.core.model.ids import memory_id as content_memory_id
from swarmmem.core.model.records import MemoryProposal, MemoryRecord, ProposedBy
from swarmmem.core.model.semantics import dumps
from swarmmem.core.model.text import json_strings
from swarmmem.core.writes.importing import SCREEN_ROWS
from swarmmem.core.writes.redaction import screened_clean, secret_field
from swarmmem.core.writes.validation import validate_record
from swarmmem.ports.detectors import SecretDetector
from swarmmem.ports.storage import StorageProvider

EXPORT_FILES = ("memories.jsonl", "proposals.jsonl", "outcome-events.jsonl")


def write_jsonl_atomic(path: Path, rows: Iterable[Mapping[str, Any]]) -> int:
    """Write ``rows`` as JSON lines to ``path`` atomically; returns how many were written."""
    lines = [dumps(row) + "\n" for row in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_lines(path, lines)
    return len(lines)


def write_json_atomic(path: Path, value: Any) -> None:
    """Write ``value`` as indented JSON to ``path`` atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_lines(path, [json.dumps(value, indent=2, ensure_ascii=False) + "\n"])


def export_store(store: StorageProvider, directory: str | os.PathLike[str]) -> dict[str, int]:
    """Export ``store`` to ``<directory>/export``; returns the row count of each file.

    Raises:
        StorageError: a file could not be written (earlier files of the export are complete).
    """
    target = Path(directory) / "export"
    try:
        memories = write_jsonl_atomic(
            target / "memories.jsonl",
            (record_to_dict(r, include_provenance=True) for r in store.iter_all_records()),
        )
        proposals = write_jsonl_atomic(
            target / "proposals.jsonl", (proposal_to_dict(p) for p in store.list_proposals())
        )
        outcomes = write_jsonl_atomic(
            target / "outcome-events.jsonl", map(outcome_event_to_dict, store.list_outcomes())
        )
    except OSError as exc:
        raise StorageError(f"cannot write the export to {target}: {exc}") from exc
    return {"memories": memories, "proposals": proposals, "outcomes": outcomes}


def _last_rows(
    path: Path, file: str, invalid: list[dict[str, Any]]
) -> tuple[dict[str, tuple[int, Any]], int]:
    """``{id: (line, object)}`` keeping the last row per id, and the number of rows scanned."""
    rows: dict[str, tuple[int, Any]] = {}
    scanned = 0
    if not path.is_file():
        return rows, 0
    for line, obj, error in read_jsonl(path):
        scanned += 1
        if error is not None:
            invalid.append({"file": file, "line": line, "reason": error})
        elif not isinstance(obj, dict) or not isinstance(obj.get("id"), str) or not obj["id"]:
            invalid.append({"file": file, "line": line, "reason": "row has no string id"})
        else:
            rows.pop(obj["id"], None)  # re-insert so the import follows the winning row's order
            rows[obj["id"]] = (line, obj)
    return rows, scanned


def _screened(secrets: SecretDetector, rows: list[Any]) -> set[int]:
    """The positions of the rows whose strings one screen per :data:`SCREEN_ROWS` rows
    cleared of secrets (:func:`secret_field` would find nothing in them)."""
    cleared: set[int] = set()
    for start in range(0, len(rows), SCREEN_ROWS):
        end = min(start + SCREEN_ROWS, len(rows))
        gathered = {at: json_strings(rows[at]) for at in range(start, end)}
        texts = {at: strings for at, strings in gathered.items() if strings is not None}
        if screened_clean(secrets, texts.values()):
            cleared.update(texts)
    return cleared


def _refusal(obj: Any, file: str, run: _Import, screened: bool = False) -> str | None:
    """Why a row may not be imported, before it is parsed (``None``: it may); ``screened``:
    its strings were already cleared of secrets."""
    store, untrusted = run.store, run.untrusted
    where = None if screened else secret_field(run.secrets, obj, "row")
    if where is not None:
        return f"{where} contains a likely secret"
    if not untrusted:
        return None
    row_id = obj["id"]
    if file == "memories.jsonl" and store.get(row_id) is not None:
        return "a stored memory has this id; legacy rows may not overwrite, delete or re-open it"
    if file == "proposals.jsonl":
        if store.get_proposal(row_id) is not None:
            return "a stored proposal has this id; legacy rows may not overwrite it"
        if obj.get("status", "pending") != "pending":
            return "legacy proposals must be pending: review state comes from a curator"
    return None


OUTSIDE = (
    "is outside the importing repository's scopes; rows of another repository are not imported"
)


def _scope_key(value: Any) -> str | None:
    """The stable key of a scope object (``None`` when it is not one)."""
    if not isinstance(value, Mapping) or not isinstance(value.get("type"), str):
        return None
    try:
        return str(stable_scope_key(value))
    except (TypeError, ValueError):
        return None


class _ScopeCheck:
    """Which rows lie inside the importing context's scopes (``allowed``: their keys).

    A memory row must carry one of the allowed scopes; a proposal's proposed record too, and
    the memories it targets may not be stored under another scope; an outcome must be about a
    memory stored inside the scopes or imported with it (an outcome cannot wait for another
    repository's memory, whose id can be computed in advance)."""

    def __init__(self, store: StorageProvider, allowed: Collection[str]) -> None:
        self.store = store
        self.allowed = frozenset(allowed)
        self.memory_ids: set[str] = set()

    def _stored_outside(self, memory_id: Any) -> bool:
        if not isinstance(memory_id, str):
            return False
        record = self.store.get(memory_id)
        return record is not None and record.scope.key not in self.allowed

    def refusal(self, obj: Mapping[str, Any], file: str) -> str | None:
        if file == "memories.jsonl":
            scope = obj.get("scope")
            if _scope_key(scope) not in self.allowed:
                return f"scope {OUTSIDE}"
            kind, text = obj.get("kind"), obj.get("text")
            if (
                isinstance(scope, Mapping)
                and isinstance(kind, str)
                and isinstance(text, str)
                and content_memory_id(scope, kind, text) == obj["id"]
            ):
                self.memory_ids.add(obj["id"])  # only an id this scope can own
        elif file == "proposals.jsonl":
            record = obj.get("proposedRecord")
            if record is not None and (
                not isinstance(record, Mapping)
                or _scope_key(record.get("scope")) not in self.allowed
            ):
                return f"proposedRecord.scope {OUTSIDE}"
            related = obj.get("relatedMemoryIds")
            targets = [obj.get("targetMemoryId"), *(related if isinstance(related, list) else ())]
            if any(self._stored_outside(t) for t in targets):
                return f"a target memory {OUTSIDE}"
        else:
            about = obj.get("memoryId")
            if about not in self.memory_ids:
                record = self.store.get(about) if isinstance(about, str) else None
                if record is None or record.scope.key not in self.allowed:
                    return f"the outcome's memory {OUTSIDE}"
        return None


def _untrusted_record(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A legacy memory row without learned values (``metadata.qValue``)."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping) or "qValue" not in metadata:
        return dict(obj)
    return {**obj, "metadata": {k: v for k, v in metadata.items() if k != "qValue"}}


LEGACY_RATIONALE = (
    "Found in a legacy memories.jsonl when the store was first opened; nobody approved it, so "
    "decide before it becomes memory."
)


def _legacy_proposal_id(record: MemoryRecord) -> str:
    return "prop_" + sha256_hex(f"legacy\n{record.id}")[:16]


def _legacy_proposal(record: MemoryRecord) -> MemoryProposal:
    """A pending ``add`` proposal of a record found in a legacy file."""
    locator = record.source.locator
    return MemoryProposal(
        id=_legacy_proposal_id(record),
        operation="add",
        rationale=LEGACY_RATIONALE,
        status="pending",
        created_at=record.created_at,
        proposed_by=ProposedBy(agent_role="legacy-import"),
        proposed_record=record,
        evidence_refs=(locator,) if locator else (),
    )


def import_jsonl(
    store: StorageProvider,
    directory: str | os.PathLike[str],
    *,
    secrets: SecretDetector,
    untrusted: bool = False,
    allowed_scope_keys: Collection[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Import the JSONL files of ``directory`` into ``store`` in one transaction.

    A row with a likely secret in any field (found by ``secrets``) is refused. ``untrusted``
    (JSONL found in the storage folder, imported without anyone asking): nothing becomes
    memory without a curator (each memory row becomes a pending ``add`` proposal of that
    record, and outcome rows, whose memories are not stored, are refused); rows may not
    overwrite, delete or re-open stored memories or proposals, may not bring learned values
    (``qValue`` is dropped) and proposals must be pending. ``allowed_scope_keys`` (the
    importing context's scope keys): rows about memories outside them are refused (see
    :class:`_ScopeCheck`); ``None`` checks no scope (a whole-store copy). Memories are
    written in batches (``upsert_many``), which report ``progress(done, total)``.

    Returns:
        ``{importedMemories, proposedMemories, importedProposals, importedOutcomes,
        scannedRows, invalidCount,
        invalidRows: [{file, line, reason}]}``.
    """
    base = Path(directory)
    run = _Import(store, secrets, untrusted)
    files, scanned = run.read(base)
    run.refuse(
        files, None if allowed_scope_keys is None else _ScopeCheck(store, allowed_scope_keys)
    )
    with store.transaction():
        run.memories(files["memories.jsonl"], progress)
        run.proposals(files["proposals.jsonl"])
        run.outcomes(files["outcome-events.jsonl"])
    invalid = sorted(run.invalid, key=lambda row: (EXPORT_FILES.index(row["file"]), row["line"]))
    counts = run.counts
    return {
        "importedMemories": counts["memories"],
        "proposedMemories": counts["proposed"],
        "importedProposals": counts["proposals"],
        "importedOutcomes": counts["outcomes"],
        "scannedRows": scanned,
        "invalidCount": len(invalid),
        "invalidRows": invalid,
    }


#: the rows of one imported file that are kept: per row id, (line, object)
_Rows = dict[str, tuple[int, Any]]


class _Import:
    """One run of :func:`import_jsonl`: what it refused (``invalid``) and wrote (``counts``)."""

    def __init__(self, store: StorageProvider, secrets: SecretDetector, untrusted: bool) -> None:
        self.store = store
        self.secrets = secrets
        self.untrusted = untrusted
        self.invalid: list[dict[str, Any]] = []
        self.counts = {"memories": 0, "proposals": 0, "outcomes": 0, "proposed": 0}

    def _refused(self, file: str, line: int, reason: str) -> None:
        self.invalid.append({"file": file, "line": line, "reason": reason})

    def read(self, base: Path) -> tuple[dict[str, _Rows], int]:
        """The last row of each id of every file, and how many rows were scanned."""
        files: dict[str, _Rows] = {}
        scanned = 0
        try:
            for file in ("memories.jsonl", "proposals.jsonl", "outcome-events.jsonl"):
                files[file], count = _last_rows(base / file, file, self.invalid)
                scanned += count
        except OSError as exc:
            raise StorageError(f"cannot read JSONL files in {base}: {exc}") from exc
        return files, scanned

    def refuse(self, files: dict[str, _Rows], scopes: _ScopeCheck | None) -> None:
        """Drop the rows that hold a likely secret, break the untrusted rules or leave the
        allowed scopes (each is reported)."""
        for file, rows in files.items():
            listed = list(rows.items())
            cleared = _screened(self.secrets, [obj for _row_id, (_line, obj) in listed])
            for at, (row_id, (line, obj)) in enumerate(listed):
                reason = _refusal(obj, file, self, screened=at in cleared)
                if reason is None and scopes is not None:
                    reason = scopes.refusal(obj, file)
                if reason is not None:
                    self._refused(file, line, reason)
                    del rows[row_id]

    def memories(self, rows: _Rows, progress: Callable[[int, int], None] | None) -> None:
        """Write the valid memory rows (untrusted: propose each one to a curator)."""
        valid = []
        for line, obj in rows.values():
            try:
                raw = _untrusted_record(obj) if self.untrusted else obj
                valid.append(validate_record(record_from_dict(raw)))
            except MemoryValidationError as exc:
                self._refused("memories.jsonl", line, str(exc))
        if self.untrusted:
            for record in valid:  # a curator decides what becomes memory
                if self.store.get_proposal(_legacy_proposal_id(record)) is None:
                    self.store.create_proposal(_legacy_proposal(record))
                    self.counts["proposed"] += 1
        else:
            self.store.upsert_many(valid, progress=progress)
            self.counts["memories"] = len(valid)

    def proposals(self, rows: _Rows) -> None:
        """Create or update the valid proposal rows."""
        for line, obj in rows.values():
            try:
                proposal = proposal_from_dict(obj)
                if not PROPOSAL_ID_RE.match(proposal.id):
                    raise MemoryValidationError(
                        f"id: must look like prop_<16 hex>; got {proposal.id!r}"
                    )
            except MemoryValidationError as exc:
                self._refused("proposals.jsonl", line, str(exc))
                continue
            if self.store.get_proposal(proposal.id) is None:
                self.store.create_proposal(proposal)
            else:
                self.store.update_proposal(proposal)
            self.counts["proposals"] += 1

    def outcomes(self, rows: _Rows) -> None:
        """Append the valid outcome rows (untrusted: only of memories already stored)."""
        for line, obj in rows.values():
            if self.untrusted and self.store.get(str(obj.get("memoryId"))) is None:
                reason = "its memory is a pending proposal: legacy rows are reviewed first"
                self._refused("outcome-events.jsonl", line, reason)
                continue
            try:
                self.store.append_outcome(outcome_event_from_dict(obj))
            except (MemoryValidationError, ConflictError) as exc:
                self._refused("outcome-events.jsonl", line, str(exc))
                continue
            self.counts["outcomes"] += 1

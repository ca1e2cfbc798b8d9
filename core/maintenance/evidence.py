"""Memories whose cited files moved on: the ``verify`` report and the proposals it files.

A memory written from a proposal keeps a fingerprint of each file it cites
(``metadata.evidenceFingerprints``). :func:`evidence_report` sorts the active memories by what
their files say now (``changed``: a cited file or symbol differs; ``missing``: a cited file is
gone); :func:`verification_proposals` describes, for each, the proposal a curator should
decide: an ``update`` that keeps the text for a changed file (approving it re-fingerprints the
files; rephrasing it corrects the memory) and a ``delete`` for a missing one. Nothing here
writes memory.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from swarmmem.core.model.records import MemoryRecord
from swarmmem.core.model.reports import EvidenceFreshness, EvidenceReport

StatusOf = Callable[[Mapping[str, Any]], str]
CitedNow = Callable[[Mapping[str, Any]], "str | None"]
"""A fingerprint -> what its symbol or lines say now (``SourceChecker.cited_now``)."""
DIFF_LINES = 12
"""The most changed lines a ref's diff shows (the rest are counted)."""
FilesStatus = Callable[[Sequence[Mapping[str, Any]]], str]
"""Stored fingerprints -> what the files say now (``SourceChecker.status``)."""
STATUS_ORDER = ("missing", "changed", "fresh")
"""The status of a ref naming several fingerprinted files: the first of these any has."""
TEXT_CLIP = 120


def _paths(record: MemoryRecord) -> list[str]:
    stored = record.metadata.get("evidenceFingerprints")
    if not isinstance(stored, list):
        return []
    return [str(fp["path"]) for fp in stored if isinstance(fp, Mapping) and "path" in fp]


def _refs(record: MemoryRecord) -> list[str]:
    """The evidence refs a memory's fingerprints stand for, as precise as they were cited:
    ``path#symbol``, ``path:START-END`` (``path:LINE``) or ``path``, once each."""
    return list(dict.fromkeys(_ref(fp) for fp in _fingerprints(record)))


def _fingerprints(record: MemoryRecord) -> list[Mapping[str, Any]]:
    stored = record.metadata.get("evidenceFingerprints")
    items = stored if isinstance(stored, list) else ()
    return [fp for fp in items if isinstance(fp, Mapping) and "path" in fp]


def _ref(fp: Mapping[str, Any]) -> str:
    """The ref one fingerprint stands for."""
    ref, lines = str(fp["path"]), fp.get("lines")
    if isinstance(fp.get("symbol"), str):
        return f"{ref}#{fp['symbol']}"
    if isinstance(lines, list) and len(lines) == 2:
        start, end = lines
        return f"{ref}:{start}" if start == end else f"{ref}:{start}-{end}"
    return ref


def short_diff(before: str, after: str, *, most: int = DIFF_LINES) -> list[str]:
    """The lines that changed from ``before`` to ``after``, ``-`` removed and ``+`` added (a
    unified diff without its headers, hunk markers or context), at most ``most`` of them and
    then a line counting the rest."""
    changed = [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), n=0, lineterm="")
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    if len(changed) > most:
        changed = [*changed[:most], f"... {len(changed) - most} more changed lines"]
    return changed


def _diff_of(fp: Mapping[str, Any], cited_now: CitedNow | None) -> list[str]:
    """What changed in a fingerprint's cited lines (empty when they were not kept, or the
    file cannot be read now)."""
    before = fp.get("cited")
    after = cited_now(fp) if cited_now is not None and isinstance(before, str) else None
    return short_diff(before, after) if isinstance(before, str) and after is not None else []


def _moved_refs(
    record: MemoryRecord, status_of: StatusOf, cited_now: CitedNow | None
) -> tuple[list[str], dict[str, list[str]]]:
    """The refs of ``record`` whose own fingerprint no longer holds, each with its status
    (``src/a.py:3-9 changed``), and for each changed one whose cited lines were kept, what
    changed in them (:func:`short_diff`)."""
    out: dict[str, None] = {}
    diffs: dict[str, list[str]] = {}
    for fp in _fingerprints(record):
        status = status_of({"evidenceFingerprints": [fp]})
        if status not in ("changed", "missing"):
            continue
        out[f"{_ref(fp)} {status}"] = None
        changed = _diff_of(fp, cited_now) if status == "changed" else []
        if changed:
            diffs[_ref(fp)] = changed
    return list(out), diffs


def _entry(
    record: MemoryRecord, status: str, status_of: StatusOf, cited_now: CitedNow | None
) -> dict[str, Any]:
    text = record.text if len(record.text) <= TEXT_CLIP else record.text[: TEXT_CLIP - 1] + "…"
    moved, diffs = _moved_refs(record, status_of, cited_now)
    return {
        "id": record.id,
        "kind": record.kind,
        "status": status,
        "files": _paths(record),
        "moved": moved,
        "diff": diffs,
        "confidence": record.confidence,
        "updated_at": record.updated_at,
        "q": record.q,
        "text": text,
    }


def evidence_report(
    records: Iterable[MemoryRecord],
    status_of: StatusOf,
    *,
    limit: int,
    cited_now: CitedNow | None = None,
) -> EvidenceReport:
    """Counts and (at most ``limit`` each) entries of the active memories with ``changed``
    and ``missing`` evidence; ``checked`` counts the memories that have fingerprints. With
    ``cited_now``, each changed ref whose fingerprint kept its cited lines says what changed
    in them (``diff``: ref -> changed lines)."""
    checked = 0
    found: dict[str, list[MemoryRecord]] = {"changed": [], "missing": []}
    for record in records:
        if not record.active or not _paths(record):
            continue
        checked += 1
        status = status_of(record.metadata)
        if status in found:
            found[status].append(record)
    return EvidenceReport(
        checked=checked,
        changed_count=len(found["changed"]),
        missing_count=len(found["missing"]),
        changed=[_entry(r, "changed", status_of, cited_now) for r in found["changed"][:limit]],
        missing=[_entry(r, "missing", status_of, cited_now) for r in found["missing"][:limit]],
    )


def verification_proposals(
    records: Iterable[MemoryRecord], status_of: StatusOf, *, pending_targets: set[str]
) -> list[dict[str, Any]]:
    """The proposal arguments for every active memory with changed or missing evidence that
    no pending proposal targets yet."""
    out: list[dict[str, Any]] = []
    for record in records:
        if not record.active or record.id in pending_targets or not _paths(record):
            continue
        status = status_of(record.metadata)
        files = ", ".join(dict.fromkeys(_paths(record)))
        if status == "changed":
            out.append(
                {
                    "operation": "update",
                    "kind": record.kind,
                    "text": record.text,
                    "rationale": f"Its evidence changed since it was written ({files}): check "
                    "the text still holds (approve to re-fingerprint, or rephrase).",
                    "evidence_refs": _refs(record),
                    "target_memory_id": record.id,
                    "scope": record.scope,
                }
            )
        elif status == "missing":
            out.append(
                {
                    "operation": "delete",
                    "rationale": f"A file it cites is gone ({files}).",
                    "target_memory_id": record.id,
                }
            )
    return out


def _names(ref: str, path: str) -> bool:
    """True when the evidence ``ref`` (``path``, ``path:LINE``, ``path:A-B``, ``path#symbol``)
    names the file ``path``."""
    ref = ref.strip()
    return ref == path or ref.startswith((f"{path}:", f"{path}#"))


def evidence_freshness(
    record: MemoryRecord,
    refs: Iterable[str],
    *,
    status_of: StatusOf,
    files_status: FilesStatus,
    cited_now: CitedNow | None = None,
) -> EvidenceFreshness:
    """What ``record``'s evidence says now: its status (``status_of``, as recall reads it),
    each of ``refs`` with the status of the fingerprinted files it names, and each
    fingerprinted file with its own status (``files_status`` over that file alone) and, when
    it changed and its cited lines were kept, what changed in them (``diff``, with
    ``cited_now``)."""
    stored = record.metadata.get("evidenceFingerprints")
    prints = [
        fp
        for fp in (stored if isinstance(stored, list) else ())
        if isinstance(fp, Mapping) and isinstance(fp.get("path"), str)
    ]
    files = []
    for fp in prints:
        status = files_status([fp])
        files.append(
            {
                "path": fp["path"],
                "ref": _ref(fp),
                "symbol": fp["symbol"] if isinstance(fp.get("symbol"), str) else None,
                "status": status,
                "diff": _diff_of(fp, cited_now) if status == "changed" else [],
            }
        )

    def ref_status(ref: str) -> str:
        found = {f["status"] for f in files if _names(ref, f["path"])}
        return next((s for s in STATUS_ORDER if s in found), "unverified")

    unique = [r for r in dict.fromkeys(refs) if isinstance(r, str) and r.strip()]
    return EvidenceFreshness(
        memory_id=record.id,
        status=status_of(record.metadata),
        refs=[{"ref": r, "status": ref_status(r)} for r in unique],
        files=files,
    )

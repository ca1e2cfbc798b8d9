"""Consolidation: clusters of near-duplicate memories and pairs that contradict each other,
found among the active memories of a context's scopes and handed to the curator as proposals.

- **Near duplicates**: two memories of one kind whose tokens overlap by at least
  ``merge_threshold`` (Jaccard, through the ``jaccard`` kernel) are linked; the connected groups
  (2 to 8 memories, the most overlapping kept when a group is larger) become ``merge`` proposals
  listing them in ``related_memory_ids``.
- **Contradictions** (looked for first): two memories of one kind that cite the same file and
  overlap by at least ``contradiction_threshold`` but state different values (each holds a
  number, version or quoted value the other lacks) are one fact that changed: the older
  becomes the target of a ``supersede`` proposal whose replacement is the newer one's text.

Candidates come from each memory's best full-text matches, so the work grows with the store,
not with its square. Nothing here writes memory; memories a pending proposal already targets
or relates are left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from swarmmem._speedups import jaccard
from swarmmem.core.model.records import MemoryRecord
from swarmmem.core.recall.lexical import recallable
from swarmmem.core.writes.similar import text_matches
from swarmmem.ports.storage import StorageProvider

MAX_GROUP = 8
PRESELECT = 20
_VALUE = re.compile(r"(?<![\w.])(?:v?\d+(?:\.\d+)*%?|'[^']{1,40}'|\"[^\"]{1,40}\"|`[^`]{1,40}`)")


@attrs.frozen(kw_only=True)
class ConsolidationSettings:
    """How alike two memories must be to count as duplicates or as one changed fact."""

    merge_threshold: float = 0.6
    contradiction_threshold: float = 0.4


def _values(text: str) -> set[str]:
    return {m.group(0).strip("'\"`").lower() for m in _VALUE.finditer(text)}


def _files(record: MemoryRecord) -> set[str]:
    found = {record.source.file_path} if record.source.file_path else set()
    stored = record.metadata.get("evidenceFingerprints")
    if isinstance(stored, list):
        found |= {str(fp.get("path")) for fp in stored if isinstance(fp, dict) and fp.get("path")}
    return found


def _overlaps(
    store: StorageProvider,
    records: Sequence[MemoryRecord],
    scope_keys: Sequence[str],
    now: str,
) -> dict[tuple[str, str], float]:
    """Token overlap of each memory with its best full-text matches of the same kind."""
    by_id = {r.id: r for r in records}
    keys = {r.id: jaccard.token_keys(r.text) for r in records}
    pairs: dict[tuple[str, str], float] = {}
    for record in records:
        found = text_matches(
            store, record.text, scope_keys=scope_keys, now=now, kinds=(record.kind,),
            limit=PRESELECT,
        )  # fmt: skip
        others = [r.id for r in found if r.id in by_id and r.id != record.id]
        others = [o for o in others if (min(o, record.id), max(o, record.id)) not in pairs]
        if not others:
            continue
        scores = jaccard.jaccard_keys(keys[record.id], [keys[o] for o in others])
        for other, score in zip(others, scores, strict=True):
            pairs[(min(other, record.id), max(other, record.id))] = float(score)
    return pairs


def _groups(pairs: Iterable[tuple[tuple[str, str], float]]) -> list[list[str]]:
    """Connected groups of the linked pairs (union-find), strongest links first."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    size: dict[str, int] = {}
    for (a, b), _score in sorted(pairs, key=lambda p: (-p[1], p[0])):
        ra, rb = find(a), find(b)
        if ra == rb:
            continue
        if size.get(ra, 1) + size.get(rb, 1) > MAX_GROUP:
            continue  # a group stops growing at 8 (its strongest links were taken first)
        parent[rb] = ra
        size[ra] = size.get(ra, 1) + size.get(rb, 1)
    members: dict[str, list[str]] = {}
    for x in parent:
        members.setdefault(find(x), []).append(x)
    return sorted((sorted(m) for m in members.values() if len(m) > 1), key=lambda m: m[0])


def consolidation_proposals(
    store: StorageProvider,
    *,
    scope_keys: Sequence[str],
    now: str,
    busy: set[str],
    settings: ConsolidationSettings | None = None,
) -> list[dict[str, Any]]:
    """The ``merge`` and ``supersede`` proposals (as :meth:`WriteService.propose` arguments)
    for the active memories of ``scope_keys`` that no pending proposal (``busy``) concerns."""
    settings = settings or ConsolidationSettings()
    records = [
        r
        for r in store.iter_all_records()
        if r.active and recallable(r) and r.scope.key in scope_keys and r.id not in busy
    ]
    by_id = {r.id: r for r in records}
    pairs = _overlaps(store, records, scope_keys, now)
    out: list[dict[str, Any]] = []
    taken: set[str] = set()
    for (a, b), score in sorted(pairs.items(), key=lambda p: (-p[1], p[0])):
        first, second = by_id[a], by_id[b]
        if (
            a in taken
            or b in taken
            or score < settings.contradiction_threshold
            or not (_files(first) & _files(second))
        ):
            continue
        va, vb = _values(first.text), _values(second.text)
        if not (va - vb and vb - va):
            continue
        old, new = sorted((first, second), key=lambda r: (r.updated_at, r.id))
        taken |= {a, b}
        out.append(
            {
                "operation": "supersede",
                "kind": new.kind,
                "text": new.text,
                "rationale": f"{old.id} and {new.id} state different values about the same "
                f"file ({', '.join(sorted(_files(old) & _files(new)))}); the newer one, "
                f"{new.id}, replaces {old.id}.",
                "evidence_refs": sorted(_files(new)),
                "target_memory_id": old.id,
                "scope": new.scope,
            }
        )
    merge_pairs = [
        (pair, score)
        for pair, score in pairs.items()
        if score >= settings.merge_threshold and not (set(pair) & taken)
    ]
    for group in _groups(merge_pairs):
        out.append(
            {
                "operation": "merge",
                "rationale": f"{len(group)} memories say nearly the same (token overlap of "
                f"{settings.merge_threshold:.2f} or more): merge them, or keep the best.",
                "related_memory_ids": group,
            }
        )
    return out

"""Memories a proposal resembles: shown to the curator at propose time.

A proposal that says what an active memory already says wastes a review and, once approved,
a recall slot. :func:`similar_memories` finds the active memories of the proposal's scopes
whose tokens overlap its text by at least :data:`SIMILAR_THRESHOLD` (Jaccard, through the
``jaccard`` kernel), among the best full-text matches of its text (every scoped memory on a
store without full-text search, newest first up to :data:`CANDIDATE_CAP`).
"""

from __future__ import annotations

from collections.abc import Sequence

from swarmmem._speedups import jaccard
from swarmmem.core.model.records import MemoryRecord
from swarmmem.core.recall.bm25 import stemmed_query
from swarmmem.core.recall.lexical import recallable
from swarmmem.ports.storage import StorageProvider

SIMILAR_THRESHOLD = 0.5
"""Token overlap (Jaccard) at which an active memory counts as similar."""
MAX_SIMILAR = 5
PRESELECT = 50
CANDIDATE_CAP = 2000


def text_matches(
    store: StorageProvider,
    text: str,
    *,
    scope_keys: Sequence[str],
    now: str,
    kinds: Sequence[str] | None = None,
    limit: int = PRESELECT,
) -> list[MemoryRecord]:
    """The active, recallable memories of ``scope_keys`` whose stemmed text best matches
    ``text`` (at most ``limit`` by BM25; newest first up to :data:`CANDIDATE_CAP` on a store
    without full-text search)."""
    query = stemmed_query(text, None, "manual")
    if query is None:
        return []
    found = store.select_candidates(
        scope_keys=scope_keys,
        kinds=kinds,
        fts_query=query,
        preselect_limit=limit,
        scope_when_unmatched=False,
        now=now,
        include_expired=False,
        candidate_cap=CANDIDATE_CAP,
        cap_before_preselect=False,
        stemmed=True,
    )
    return [r for r in found.records if r.active and recallable(r)]


def similar_memories(
    store: StorageProvider, record: MemoryRecord, *, scope_keys: Sequence[str], now: str
) -> list[tuple[str, float]]:
    """``(memory_id, overlap)`` of the active memories most like ``record``, best first."""
    matches = text_matches(store, record.text, scope_keys=scope_keys, now=now)
    others = [r for r in matches if r.id != record.id]
    if not others:
        return []
    scores = jaccard.jaccard_keys(
        jaccard.token_keys(record.text), [jaccard.token_keys(r.text) for r in others]
    )
    pairs = [(r.id, round(float(s), 4)) for r, s in zip(others, scores, strict=True)]
    pairs = [p for p in pairs if p[1] >= SIMILAR_THRESHOLD]
    pairs.sort(key=lambda p: (-p[1], p[0]))
    return pairs[:MAX_SIMILAR]

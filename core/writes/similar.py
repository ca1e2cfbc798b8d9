"""Memories a proposal resembles: shown to the curator at propose time.

A proposal that says what an active memory already says wastes a review and, once approved,
a recall slot. :func:`similar_memories` finds the active memories of the proposal's scopes
whose tokens overlap its text by at least :data:`SIMILAR_THRESHOLD` (Jaccard, through the
``jaccard`` kernel), or that hold at least :data:`CONTAINED_THRESHOLD` of the shorter
text's tokens (a shorter restatement of a longer memory, or a longer one of a short memory;
the shorter has :data:`CONTAINED_MIN_TOKENS` tokens or more), among the best full-text matches
of its text (every scoped memory on a store without full-text search, newest first up to
:data:`CANDIDATE_CAP`). The score shown is the Jaccard overlap either way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import attrs

from swarmmem._speedups import jaccard
from swarmmem.core.model.records import MemoryProposal, MemoryRecord
from swarmmem.core.recall.bm25 import stemmed_query
from swarmmem.core.recall.lexical import recallable
from swarmmem.ports.storage import StorageProvider

SIMILAR_THRESHOLD = 0.5
"""Token overlap (Jaccard) at which an active memory counts as similar."""
CONTAINED_THRESHOLD = 0.8
"""Share of the shorter text's tokens the other holds at which it counts as similar."""
CONTAINED_MIN_TOKENS = 4
"""The fewest tokens of the shorter text for the containment rule (three shared words say
little)."""
MAX_SIMILAR = 5
SIMILAR_COSINE = 0.85
"""Embedding cosine at which an active memory counts as similar (with embeddings on)."""
PRESELECT = 50
CANDIDATE_CAP = 2000

log = logging.getLogger("swarmmem")


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


def _contained(jaccard_score: float, size_a: int, size_b: int) -> bool:
    """True when the longer key set holds :data:`CONTAINED_THRESHOLD` of the shorter one (of
    :data:`CONTAINED_MIN_TOKENS` keys or more); the shared count follows from the Jaccard
    score and the sizes: ``j * (a + b) / (1 + j)``."""
    shorter = min(size_a, size_b)
    if shorter < CONTAINED_MIN_TOKENS:
        return False
    shared = jaccard_score * (size_a + size_b) / (1.0 + jaccard_score)
    return shared >= CONTAINED_THRESHOLD * shorter - 1e-9


def similar_memories(
    store: StorageProvider, record: MemoryRecord, *, scope_keys: Sequence[str], now: str
) -> list[tuple[str, float]]:
    """``(memory_id, overlap)`` of the active memories most like ``record`` (Jaccard), best
    first."""
    matches = text_matches(store, record.text, scope_keys=scope_keys, now=now)
    others = [r for r in matches if r.id != record.id]
    if not others:
        return []
    mine = jaccard.token_keys(record.text)
    theirs = [jaccard.token_keys(r.text) for r in others]
    scores = jaccard.jaccard_keys(mine, theirs)
    pairs = [
        (r.id, round(float(j), 4))
        for r, j, keys in zip(others, scores, theirs, strict=True)
        if j >= SIMILAR_THRESHOLD or _contained(float(j), len(mine), len(keys))
    ]
    pairs.sort(key=lambda p: (-p[1], p[0]))
    return pairs[:MAX_SIMILAR]


def with_meaning(
    store: StorageProvider,
    similar: list[tuple[str, float]],
    record: MemoryRecord,
    keys: Sequence[str],
    similar_by_meaning: Callable[[str], list[tuple[str, float]]],
) -> list[tuple[str, float]]:
    """``similar`` joined with the active memories of ``keys`` whose embedding is close
    to ``record``'s (cosine at least :data:`SIMILAR_COSINE`), each with its best score."""
    try:
        close = [(i, c) for i, c in similar_by_meaning(record.text) if c >= SIMILAR_COSINE]
    except Exception:  # a failing embedder never stops a proposal
        log.warning("similar memories by meaning are unavailable", exc_info=True)
        return similar
    found = store.get_many([i for i, _ in close])
    best = dict(similar)
    for memory_id, cosine in close:
        hit = found.get(memory_id)
        if hit is not None and hit.active and hit.scope.key in keys and hit.id != record.id:
            best[memory_id] = max(best.get(memory_id, 0.0), round(float(cosine), 4))
    return sorted(best.items(), key=lambda p: (-p[1], p[0]))[:MAX_SIMILAR]


def with_duplicates(
    store: StorageProvider,
    proposal: MemoryProposal,
    record: MemoryRecord,
    created_at: str,
    keys: Sequence[str],
    similar_by_meaning: Callable[[str], list[tuple[str, float]]] | None,
) -> MemoryProposal:
    """``proposal`` with the active memories of ``keys`` it resembles (``metadata.similar``);
    closed at once, naming the original, when an active memory already holds exactly its
    record (same scope, kind and text) or a pending ``add`` proposes it with the same
    evidence."""
    similar = similar_memories(store, record, scope_keys=keys, now=created_at)
    if similar_by_meaning is not None:
        similar = with_meaning(store, similar, record, keys, similar_by_meaning)
    metadata = dict(proposal.metadata)
    if similar:
        metadata["similar"] = [{"memoryId": i, "score": score} for i, score in similar]
    existing = store.get(record.id)
    duplicate: str | None = None
    if existing is not None and existing.active and existing.scope.key in keys:
        duplicate = existing.id
        metadata["similar"] = [{"memoryId": existing.id, "score": 1.0}, *similar]
    elif proposal.operation == "add":
        duplicate = next(
            (
                p.id
                for p in store.list_proposals("pending")
                if p.operation == "add"  # an update restating a memory does not add it
                and p.proposed_record is not None
                and p.proposed_record.id == record.id
                and p.evidence_refs == proposal.evidence_refs
            ),
            None,
        )
    proposal = attrs.evolve(proposal, metadata=metadata)
    if duplicate is None or proposal.operation != "add":
        return proposal
    metadata["duplicateOf"] = duplicate
    return attrs.evolve(
        proposal,
        metadata=metadata,
        status="rejected",
        reviewer="auto_policy",
        reviewed_at=created_at,
        rejection_reason=f"duplicate: {duplicate} already holds this memory",
    )

"""The lexical stages of the recall pipeline (:mod:`.pipeline` composes them).

provider candidates (scope/kind filter, FTS pre-selection) -> nine-factor scorer -> BM25-order
bonus; then, after any dense stages, the maxItems slice (exploration is additive) and
related-item expansion.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from swarmmem.core.model.ids import iso_to_ms
from swarmmem.core.model.records import MemoryRecord, RecallItem, RecallRequest, Relation
from swarmmem.core.recall.fts import FTS_BONUS, build_fts_query
from swarmmem.core.recall.scoring import LearningPolicy, rank_records, score_records
from swarmmem.ports.storage import StorageProvider

DEFAULT_CANDIDATE_CAP = 1000
RELATED_RECALL_FANOUT = 2


@attrs.frozen(kw_only=True)
class RecallResult:
    """Ranked items with the scorer's diagnostics counts."""

    items: tuple[RecallItem, ...]
    diagnostics: dict[str, int] = attrs.field(hash=False)
    lexical_order: tuple[str, ...] = ()
    candidate_count: int | None = None
    """How many items the scorer kept (``items`` may hold fewer: ``lexical_recall(keep=)``);
    ``None``: ``len(items)``."""

    @property
    def kept_count(self) -> int:
        """How many items the scorer kept."""
        return len(self.items) if self.candidate_count is None else self.candidate_count


def preselect_limit(request: RecallRequest) -> int:
    """How many full-text hits (best BM25 first) a recall scores: ``max(100, 20 * maxItems)``;
    the same number bounds the dense kNN candidates."""
    return max(100, request.max_items * 20)


def recallable(record: MemoryRecord) -> bool:
    """False for outcome evidence: the record an outcome about a question (not a memory)
    leaves for reflection is never recalled, since no curator approved its text."""
    return "outcomeQuestion" not in record.metadata


def candidate_cap(request: RecallRequest) -> int:
    """The provider candidate limit (1000, or a lower quality-profile cap)."""
    if request.candidate_cap is None:
        return DEFAULT_CANDIDATE_CAP
    return min(DEFAULT_CANDIDATE_CAP, max(1, int(request.candidate_cap)))


def lexical_recall(
    store: StorageProvider,
    request: RecallRequest,
    *,
    now: str,
    policy: LearningPolicy | None = None,
    rng: Callable[[], float] | None = None,
    reference: bool = False,
    keep: int | None = None,
) -> RecallResult:
    """Run the lexical path and return items before the maxItems slice, best first.

    ``reference`` caps the scope at its newest records before the full-text pre-selection,
    as the reference implementation does; otherwise the pre-selection sees every scoped
    record and the cap bounds what it returns. ``keep`` builds items for only the first
    ``keep`` regular candidates (and the explored one); ``lexical_order`` and the counts
    still cover all of them.
    """
    now_ms = iso_to_ms(now)
    assert now_ms is not None, "now must be an ISO timestamp"
    candidates = store.select_candidates(
        scope_keys=[scope.key for scope in request.scopes],
        kinds=request.kinds,
        fts_query=build_fts_query(request.query, request.task, request.mode),
        preselect_limit=preselect_limit(request),
        # a manual recall whose words match nothing still scores the scope (the reference's
        # fallback); injection and curator recalls then return nothing
        scope_when_unmatched=request.mode == "manual",
        now=now,
        include_expired=request.include_expired,
        candidate_cap=candidate_cap(request),
        cap_before_preselect=reference,
    )
    records = [r for r in candidates.records if recallable(r)]
    ranking = rank_records(request, records, now_ms=now_ms, policy=policy, rng=rng)
    if candidates.fts_order is not None:
        ranking.add_fts_bonus(candidates.fts_order, FTS_BONUS)
    return RecallResult(
        items=tuple(ranking.items(keep)),
        diagnostics=ranking.diagnostics,
        lexical_order=tuple(s.record.id for s in ranking.kept),
        candidate_count=len(ranking.kept) + (ranking.explored is not None),
    )


def slice_items(
    items: tuple[RecallItem, ...] | list[RecallItem], max_items: int
) -> list[RecallItem]:
    """The first ``max_items`` regular items, then any explored item (exploration is additive)."""
    normal = [it for it in items if not it.explored][:max_items]
    return normal + [it for it in items if it.explored]


def expand_related(
    store: StorageProvider,
    items: list[RecallItem],
    request: RecallRequest,
    *,
    now: str,
    policy: LearningPolicy | None = None,
) -> list[RecallItem]:
    """Fill unused slots with up to two merged memories per direct result (one hop)."""
    normal = [it for it in items if not it.explored]
    explored = [it for it in items if it.explored]
    if len(normal) >= request.max_items:
        return _dedupe(normal + explored)
    now_ms = iso_to_ms(now)
    assert now_ms is not None
    selected = {it.record.id for it in items}
    for source in list(normal):
        added = 0
        for related_id in store.related_ids(source.record.id)[:RELATED_RECALL_FANOUT]:
            if len(normal) >= request.max_items or added >= RELATED_RECALL_FANOUT:
                break
            if related_id in selected:
                continue
            record = store.get(related_id)
            if record is None or not recallable(record):
                continue
            scored, _ = score_records(
                request,
                [record],
                now_ms=now_ms,
                policy=policy,
                apply_min_score=False,
                require_signal=False,
            )
            if not scored:
                continue
            item = scored[0]
            normal.append(
                attrs.evolve(
                    item,
                    reason=f"{item.reason}, relation=merged_with, related_from={source.record.id}",
                    relation=Relation(memory_id=source.record.id),
                    related_from=source.record.id,
                )
            )
            selected.add(related_id)
            added += 1
        if len(normal) >= request.max_items:
            break
    return _dedupe(normal + explored)


def _dedupe(items: list[RecallItem]) -> list[RecallItem]:
    seen: set[str] = set()
    out: list[RecallItem] = []
    for item in items:
        if item.record.id not in seen:
            seen.add(item.record.id)
            out.append(item)
    return out

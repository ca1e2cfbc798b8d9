"""Maintenance reports and explicit compaction.

Every report builder reads the store and returns its result class
(:mod:`swarmmem.core.model.reports`); the edges render the result's JSON form (``to_json()``,
what ``--json`` prints) as text (:mod:`swarmmem.cli.render.markdown`).
Nothing here removes data except :func:`apply_compaction` with ``confirm=True``, and that
only removes deleted tombstones, superseded records and expired scratch memories.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from swarmmem.core.learning.rewards import (
    LearningConfig,
    is_promotion_candidate,
    recall_counts,
    reward_source,
)
from swarmmem.core.maintenance.utility import LOW_UTILITY_THRESHOLD as LOW_UTILITY_THRESHOLD
from swarmmem.core.maintenance.utility import expired_at, is_low_utility
from swarmmem.core.maintenance.utility import importance as importance
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.events import RewardEvent
from swarmmem.core.model.formatting import age_text
from swarmmem.core.model.ids import iso_to_ms
from swarmmem.core.model.records import MemoryProposal, MemoryRecord
from swarmmem.core.model.reports import (
    CompactionReport,
    EvidenceReport,
    PendingReport,
    RecallLogReport,
    StaleReport,
    ValueLogReport,
)
from swarmmem.ports.storage import ListFilter, StorageProvider

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
VALUE_LOG_EVENTS_PER_LIMIT = 20
VALUE_LOG_RECENT = 5
STATUS_SUPPRESSED = "suppressed (low learned-utility)"
STATUS_PROMOTION = "promotion candidate"
STATUS_NEUTRAL = "neutral"

#: The stale report's sections: key, label (also of its count), what the section title adds.
STALE_SECTIONS: tuple[tuple[str, str, str], ...] = (
    ("expired_scratch", "Expired scratch memories", ""),
    ("deleted_tombstones", "Deleted tombstones", ""),
    ("superseded_chains", "Superseded chains", ""),
    ("structurally_stale", "Structurally stale memories", " (all anchors dead; retained)"),
    ("low_utility", "Low-utility memories", ""),
    ("low_learned_utility", "Low-learned-utility memories", " (suppressed by q-value)"),
    ("evidence_changed", "Memories whose cited files changed", " (swarmmem verify --propose)"),
    ("evidence_missing", "Memories whose cited files are gone", " (not injected)"),
)


def parse_limit(value: str | int | None) -> int:
    """A ``--limit`` value: digits only, clamped to 1..100; ``None`` gives 20.

    Raises:
        MemoryValidationError: anything that is not a non-negative whole number.
    """
    if value is None:
        return DEFAULT_LIMIT
    if isinstance(value, bool):
        raise MemoryValidationError(f"limit must be a whole number; got {value!r}")
    text = str(value).strip()
    if not text.isascii() or not text.isdigit():
        raise MemoryValidationError(f"limit must be a whole number; got {value!r}")
    return min(MAX_LIMIT, max(1, int(text)))


# --------------------------------------------------------------------------- helpers


def _all_records(store: StorageProvider, now: str) -> list[MemoryRecord]:
    return store.list(ListFilter(now=now, include_inactive=True, include_expired=True))


def _first(store: StorageProvider, flt: ListFilter, count: int, limit: int) -> list[MemoryRecord]:
    """The first ``limit`` records of ``store.list(flt)`` (of ``count`` in all), read with a
    SQL limit; again without it when the expiry post-filter dropped some."""
    shown = store.list(attrs.evolve(flt, limit=limit))
    if len(shown) < min(limit, count):
        shown = store.list(flt)[:limit]
    return shown


def _in_order(store: StorageProvider, ids: Sequence[str]) -> list[MemoryRecord]:
    """The records of ``ids`` (read at once), in that order; ids that vanished are skipped."""
    found = store.get_many(list(ids))
    return [found[i] for i in ids if i in found]


def _promotable(now: str, counts: Mapping[str, int], policy: LearningConfig) -> ListFilter:
    """Live memories recalled often enough whose Q exceeds the promotion threshold, highest
    Q first: the live memories that pass
    :func:`~swarmmem.core.learning.rewards.is_promotion_candidate`."""
    recalled = tuple(sorted(i for i, n in counts.items() if n > policy.promotion_min_recalls))
    return ListFilter(now=now, ids=recalled, q_above=policy.promotion_threshold, order="q_desc")


def _expired(record: MemoryRecord, now_ms: float) -> bool:
    return expired_at(record.expires_at, now_ms)


def _memory_entry(record: MemoryRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "kind": record.kind,
        "confidence": record.confidence,
        "updated_at": record.updated_at,
        "q": record.q,
        "text": record.text,
    }


# --------------------------------------------------------------------------- pending


def _proposal_entry(proposal: MemoryProposal) -> dict[str, Any]:
    record = proposal.proposed_record
    target = proposal.target_memory_id or (record.id if record is not None else None) or "new"
    pii = proposal.metadata.get("pii")
    pii_entry: dict[str, Any] | None = None
    if isinstance(pii, Mapping) and isinstance(pii.get("score"), int | float):
        counts = pii.get("countsByType")
        pii_entry = {
            "score": float(pii["score"]),
            "counts_by_type": dict(counts) if isinstance(counts, Mapping) else {},
        }
    return {
        "id": proposal.id,
        "operation": proposal.operation,
        "target": target,
        "status": proposal.status,
        "created_at": proposal.created_at,
        "reviewed_at": proposal.reviewed_at,
        "reason": proposal.rejection_reason,
        "pii": pii_entry,
    }


def _candidate_entry(record: MemoryRecord, recalls: int) -> dict[str, Any]:
    return {
        "id": record.id,
        "kind": record.kind,
        "q": record.q,
        "recalls": recalls,
        "text": record.text,
    }


def pending_report(
    store: StorageProvider,
    *,
    now: str,
    policy: LearningConfig | None = None,
    limit: int = DEFAULT_LIMIT,
) -> PendingReport:
    """Pending proposals (oldest first), rejected reasons (newest first), promotion candidates."""
    policy = policy or LearningConfig()
    pending = store.list_proposals("pending")
    rejected = sorted(
        store.list_proposals("rejected"),
        key=lambda p: (p.reviewed_at or p.created_at, p.id),
        reverse=True,
    )
    decided = sorted(
        (p for p in store.list_proposals("applied") if p.reviewer == "auto_policy"),
        key=lambda p: (p.reviewed_at or p.created_at, p.id),
        reverse=True,
    )
    counts = recall_counts(store.list_recall_usage())
    promotable = _promotable(now, counts, policy)
    total = store.count_where(promotable)
    candidates = _first(store, promotable, total, limit)
    return PendingReport(
        limit=limit,
        pending_count=len(pending),
        rejected_count=len(rejected),
        promotion_candidate_count=total,
        pending=[
            {**_proposal_entry(p), "age": age_text(p.created_at, now)} for p in pending[:limit]
        ],
        rejected=[_proposal_entry(p) for p in rejected[:limit]],
        policy_decided_count=len(decided),
        policy_decided=[_proposal_entry(p) for p in decided[:limit]],
        promotion_candidates=[_candidate_entry(r, counts.get(r.id, 0)) for r in candidates],
    )


# --------------------------------------------------------------------------- recall log


def recall_log_report(
    store: StorageProvider, *, now: str, limit: int = DEFAULT_LIMIT
) -> RecallLogReport:
    """Recall usage by agent role and by memory: most-recalled and never-recalled memories."""
    usage = store.list_recall_usage()
    roles: dict[str, dict[str, Any]] = {}
    hits: dict[str, dict[str, Any]] = {}
    for row in usage:
        bucket = roles.setdefault(row.agent_role or "unknown", {"events": 0, "ids": set()})
        bucket["events"] += 1
        scores, stamp = row.scores, row.timestamp
        for index, mid in enumerate(row.memory_ids):
            bucket["ids"].add(mid)
            entry = hits.setdefault(mid, {"hits": 0, "last": "", "score_sum": 0.0, "scored": 0})
            entry["hits"] += 1
            entry["last"] = max(entry["last"], stamp)
            score = scores[index] if index < len(scores) else None
            if score is not None and math.isfinite(score):
                entry["score_sum"] += float(score)
                entry["scored"] += 1
    by_role = sorted(
        ({"role": r, "events": b["events"], "memory_ids": len(b["ids"])} for r, b in roles.items()),
        key=lambda e: (-e["events"], e["role"]),
    )
    ranked = sorted(hits.items(), key=lambda kv: kv[0])
    ranked.sort(key=lambda kv: kv[1]["last"], reverse=True)
    ranked.sort(key=lambda kv: kv[1]["hits"], reverse=True)
    most = [
        {
            "id": mid,
            "hits": e["hits"],
            "last": e["last"],
            "avg_score": (e["score_sum"] / e["scored"]) if e["scored"] else 0.0,
        }
        for mid, e in ranked[:limit]
    ]
    unrecalled = ListFilter(now=now, exclude_ids=tuple(sorted(hits)))
    never_count = store.count_where(unrecalled)
    never = _first(store, unrecalled, never_count, limit)
    return RecallLogReport(
        limit=limit,
        events_scanned=len(usage),
        recalled_memory_count=len(hits),
        never_recalled_count=never_count,
        by_role=by_role[:limit],
        most_recalled=most,
        never_recalled=[_memory_entry(r) for r in never],
    )


# --------------------------------------------------------------------------- value log


def value_status(
    record: MemoryRecord | None, q: float, recalls: int, policy: LearningConfig
) -> str:
    """``suppressed (low learned-utility)``, ``promotion candidate`` or ``neutral``."""
    if q < policy.suppression_threshold:
        return STATUS_SUPPRESSED
    if record is not None and is_promotion_candidate(record, recalls, policy):
        return STATUS_PROMOTION
    return STATUS_NEUTRAL


def value_log_report(
    store: StorageProvider,
    *,
    now: str,
    policy: LearningConfig | None = None,
    limit: int = DEFAULT_LIMIT,
) -> ValueLogReport:
    """Per memory: current Q, status and up to five recent rewards (newest first)."""
    policy = policy or LearningConfig()
    events = list(reversed(store.list_reward_events()))
    events.sort(key=lambda e: e.timestamp or "", reverse=True)  # stable: newest first
    window = events[: limit * VALUE_LOG_EVENTS_PER_LIMIT]
    grouped: dict[str, list[RewardEvent]] = {}
    for event in window:
        grouped.setdefault(event.memory_id, []).append(event)
    counts = recall_counts(store.list_recall_usage())
    memories: list[dict[str, Any]] = []
    shown = list(grouped.items())[:limit]
    records = store.get_many([mid for mid, _ in shown])
    for mid, rows in shown:
        record = records.get(mid)
        last_q = rows[0].q_after
        if record is not None:
            q = record.q
        elif last_q is not None:
            q = last_q
        else:
            q = 0.5
        memories.append(
            {
                "id": mid,
                "q": q,
                "status": value_status(record, q, counts.get(mid, 0), policy),
                "rewards": len(rows),
                "recalls": counts.get(mid, 0),
                "text": record.text if record is not None else "",
                "recent": [
                    {
                        "timestamp": e.timestamp,
                        "verdict": e.verdict,
                        "source": reward_source(e),
                        "reward": e.reward,
                        "q_before": e.q_before,
                        "q_after": e.q_after,
                    }
                    for e in rows[:VALUE_LOG_RECENT]
                ],
            }
        )
    suppressed = ListFilter(now=now, q_below=policy.suppression_threshold, order="q_asc")
    promotable = _promotable(now, counts, policy)
    return ValueLogReport(
        limit=limit,
        reward_events_scanned=len(window),
        memory_count=len(grouped),
        memories=memories,
        promotion_candidates=[k.id for k in store.list_keys(promotable)],
        suppressed=[k.id for k in store.list_keys(suppressed)],
    )


# --------------------------------------------------------------------------- stale


def _classify(record: MemoryRecord, now_ms: float) -> str | None:
    """The compaction class of a record, or ``None`` when it stays."""
    if record.deleted:
        return "deleted_tombstones"
    if record.superseded_by:
        return "superseded_records"
    if record.kind == "scratch" and _expired(record, now_ms):
        return "expired_scratch"
    return None


#: how many memories a stale report section holds, and the first of them as shown
_Section = tuple[int, list[Any]]


def stale_report(
    store: StorageProvider,
    *,
    now: str,
    policy: LearningConfig | None = None,
    limit: int = DEFAULT_LIMIT,
    dead_anchor_ids: Iterable[str] = (),
    evidence: EvidenceReport | None = None,
) -> StaleReport:
    """Expired scratch, tombstones, superseded chains, dead-anchor, low-utility and low-Q memories,
    and (from ``evidence``, an :func:`~swarmmem.core.maintenance.evidence.evidence_report`)
    those whose cited files changed or are gone.

    ``dead_anchor_ids`` come from the reflection digest (``deadAnchorMemoryIds``); those
    memories are listed and retained.
    """
    policy = policy or LearningConfig()
    now_ms = iso_to_ms(now)
    if now_ms is None:
        raise MemoryValidationError(f"now must be an ISO timestamp; got {now!r}")
    active = ListFilter(now=now, include_expired=True)
    ended, live_count = _ended_and_live(store, active, now_ms)
    recalled = set(recall_counts(store.list_recall_usage()))
    sections: dict[str, _Section] = {}
    scratch = [
        k.id
        for k in store.list_keys(attrs.evolve(active, kinds=("scratch",), has_expiry=True))
        if k.id in ended
    ]
    sections["expired_scratch"] = (len(scratch), _entries(store, scratch[:limit]))
    every = ListFilter(now=now, include_inactive=True, include_expired=True)
    tombstones = attrs.evolve(every, deleted=True)
    count = store.count_where(tombstones)
    sections["deleted_tombstones"] = (count, _entries_of(_first(store, tombstones, count, limit)))
    sections["superseded_chains"] = _superseded_chains(store, every, limit)
    dead_found = store.get_many(sorted(set(dead_anchor_ids)))
    dead = [i for i in sorted(dead_found) if dead_found[i].active]
    sections["structurally_stale"] = (len(dead), _entries(store, dead[:limit]))
    sections["low_utility"] = _low_utility_section(store, active, recalled, ended, now_ms, limit)
    sections["low_learned_utility"] = _low_q_section(store, active, policy, ended, limit)
    sections["evidence_changed"] = (
        (evidence.changed_count, evidence.changed) if evidence else (0, [])
    )
    sections["evidence_missing"] = (
        (evidence.missing_count, evidence.missing) if evidence else (0, [])
    )
    parts: dict[str, Any] = {f"{name}_count": total for name, (total, _) in sections.items()}
    parts.update((name, items[:limit]) for name, (_, items) in sections.items())
    return StaleReport(limit=limit, active_count=live_count, **parts)


def _ended_and_live(
    store: StorageProvider, active: ListFilter, now_ms: float
) -> tuple[set[str], int]:
    """The ids of the active memories whose parsed expiry has passed, and how many are live
    (active and not expired); records with an expiry are few: their keys are read and tested
    here, the rest are counted by the store."""
    expiring = store.list_keys(attrs.evolve(active, has_expiry=True))
    ended = {k.id for k in expiring if expired_at(k.expires_at, now_ms)}
    live_count = store.count_where(attrs.evolve(active, has_expiry=False)) + sum(
        1 for k in expiring if k.id not in ended
    )
    return ended, live_count


def _superseded_chains(store: StorageProvider, every: ListFilter, limit: int) -> _Section:
    """Superseded memories, each with its successor and the successor's reason."""
    superseded = attrs.evolve(every, deleted=False, superseded=True)
    count = store.count_where(superseded)
    olds = _first(store, superseded, count, limit)
    successors = store.get_many([r.superseded_by for r in olds if r.superseded_by])
    chains = [
        {
            "id": r.id,
            "superseded_by": r.superseded_by,
            "reason": (
                successors[r.superseded_by].supersedes_reason
                if r.superseded_by in successors
                else None
            ),
        }
        for r in olds
    ]
    return count, chains


def _low_utility_section(
    store: StorageProvider,
    active: ListFilter,
    recalled: set[str],
    ended: set[str],
    now_ms: float,
    limit: int,
) -> _Section:
    """Live memories never recalled whose importance is under 0.2 (which needs a confidence
    under 0.8: 0.25 * 0.8 = 0.2 and the age term is > 0)."""
    unrecalled = attrs.evolve(
        active, confidence_below=0.8, exclude_ids=tuple(sorted(recalled)) or None
    )
    low = [
        k.id
        for k in store.list_keys(unrecalled)
        if k.id not in ended and is_low_utility(store, k, now_ms)
    ]
    return len(low), _entries(store, low[:limit])


def _low_q_section(
    store: StorageProvider,
    active: ListFilter,
    policy: LearningConfig,
    ended: set[str],
    limit: int,
) -> _Section:
    """Live memories whose learned Q-value is under the suppression threshold, lowest
    first."""
    low_q = [
        k.id
        for k in store.list_keys(
            attrs.evolve(active, q_below=policy.suppression_threshold, order="q_asc")
        )
        if k.id not in ended
    ]
    return len(low_q), _entries(store, low_q[:limit])


def _entries(store: StorageProvider, ids: Sequence[str]) -> list[dict[str, Any]]:
    return _entries_of(_in_order(store, ids))


def _entries_of(records: Sequence[MemoryRecord]) -> list[dict[str, Any]]:
    return [_memory_entry(r) for r in records]


# --------------------------------------------------------------------------- compaction

#: the label of each class a compaction removes
COMPACTION_LABELS: dict[str, str] = {
    "deleted_tombstones": "Deleted tombstones",
    "superseded_records": "Superseded records",
    "expired_scratch": "Expired scratch records",
}
#: What a confirmed compaction removes, by class, in this order.
COMPACTION_CLASSES: tuple[str, ...] = tuple(COMPACTION_LABELS)


def compact_plan(store: StorageProvider, *, now: str) -> CompactionReport:
    """What a confirmed compaction would remove, by class (ids sorted), without removing it."""
    now_ms = iso_to_ms(now)
    if now_ms is None:
        raise MemoryValidationError(f"now must be an ISO timestamp; got {now!r}")
    plan: dict[str, list[str]] = {name: [] for name in COMPACTION_CLASSES}
    for record in _all_records(store, now):
        name = _classify(record, now_ms)
        if name is not None:
            plan[name].append(record.id)
    for name in COMPACTION_CLASSES:
        plan[name].sort()
    total = store.count()
    removable = sum(len(plan[name]) for name in COMPACTION_CLASSES)
    return CompactionReport(
        mode="dry-run",
        deleted_tombstones=plan["deleted_tombstones"],
        superseded_records=plan["superseded_records"],
        expired_scratch=plan["expired_scratch"],
        counts={name: len(plan[name]) for name in COMPACTION_CLASSES},
        removable=removable,
        removed=0,
        remaining_memories=total,
    )


def apply_compaction(
    store: StorageProvider, *, now: str, confirm: bool = False
) -> CompactionReport:
    """Run compaction: a dry run unless ``confirm``.

    A confirmed run hard-deletes (with their outcome rows) exactly the records of
    :func:`compact_plan`, in one transaction, and appends a ``compact`` audit event.
    """
    plan = compact_plan(store, now=now)
    if not confirm:
        return plan
    removed = 0
    with store.transaction():
        for name in COMPACTION_CLASSES:
            for memory_id in getattr(plan, name):
                if store.delete(memory_id, reason=f"compact: {name}", now=now, hard=True):
                    removed += 1
        store.append_event(
            "compact",
            "memory_items",
            reason="explicit compaction",
            event={"counts": plan.counts, "removed": removed, "at": now},
        )
    return attrs.evolve(plan, mode="confirmed", removed=removed, remaining_memories=store.count())

"""The reports read through indexed queries give exactly what reading every record gave.

Each report is compared, on every provider and through a scoped view, with a reference
built the plain way: every record of the scope read and filtered in Python (the rules of
:mod:`swarmmem.core.maintenance.reports` and :mod:`swarmmem.core.learning.rewards`). The
store mixes two repositories, tombstones, superseded chains, scratch memories (expired and
not, one whose expiry has a UTC offset), Q-values on both sides of the thresholds,
low-confidence old memories, recall usage and rewards.
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from factories import OTHER_SCOPE, REPO_SCOPE, at, make_memory, make_proposal
from report_rules import low_q_memories, promotion_candidates

from swarmmem.core.learning.rewards import LearningConfig, recall_counts
from swarmmem.core.maintenance import reports
from swarmmem.core.maintenance.scoped import ScopedView
from swarmmem.core.model.events import RecallUsage, RewardEvent
from swarmmem.core.model.ids import iso_to_ms
from swarmmem.core.model.records import MemoryScope
from swarmmem.ports.storage import ListFilter

NOW = at(days=200)
WORKSPACE = MemoryScope(type="workspace", workspace_id="shared-folder")
POLICY = LearningConfig()


def _seed(store: Any) -> None:
    records = []
    for scope in (REPO_SCOPE, OTHER_SCOPE, WORKSPACE):
        name = scope.repo_id or scope.workspace_id
        for i in range(30):
            metadata: dict[str, Any] = {}
            if i % 5 == 0:
                metadata["qValue"] = 0.9 + i / 1000
            if i % 7 == 0:
                metadata["qValue"] = 0.05 + i / 1000
            records.append(
                make_memory(
                    f"{name} fact {i} about the cache",
                    scope=scope,
                    metadata=metadata,
                    updated_at=at(days=i % 11),
                    confidence=0.4 if i % 4 == 0 else 0.8,
                )
            )
        for i, expiry in enumerate(
            [at(days=190), at(days=210), "2026-07-20T01:00:00+02:00", at(days=199, minutes=1439)]
        ):
            records.append(
                make_memory(
                    f"{name} scratch note {i}",
                    kind="scratch",
                    scope=scope,
                    created_at=at(days=189),
                    expires_at=expiry,
                )
            )
    store.upsert_many(records)
    mine = [r for r in records if r.scope == REPO_SCOPE]
    with store.transaction():
        store.delete(mine[1].id, reason="wrong", now=at(days=3))
        successor = make_memory("repo fact that replaces", scope=REPO_SCOPE)
        store.upsert(attrs.evolve(successor, supersedes_reason="newer finding"))
        store.upsert(attrs.evolve(mine[2], superseded_by=successor.id))
        other = [r for r in records if r.scope == OTHER_SCOPE]
        store.delete(other[3].id, reason="other repo", now=at(days=3))
        for k in range(40):
            pool = mine if k % 3 else other
            picked = tuple(r.id for r in pool[k % 9 : k % 9 + 4])
            store.record_recall_usage(
                RecallUsage(
                    bundle_id=f"b{k}",
                    timestamp=at(days=k % 30),
                    memory_ids=(*picked, mine[0].id, mine[5].id),
                    scores=tuple(0.5 for _ in range(len(picked) + 2)),
                    scopes=(REPO_SCOPE if k % 3 else OTHER_SCOPE, WORKSPACE),
                    agent_role="coder",
                )
            )
        for k in range(25):
            store.append_reward_event(
                RewardEvent(
                    memory_id=(mine if k % 2 else other)[k % 12].id,
                    verdict="APPROVE",
                    reward=1.0,
                    q_before=0.5,
                    q_after=0.55,
                    timestamp=at(days=k),
                )
            )
        store.create_proposal(make_proposal(record=make_memory("a proposed repo fact")))


def _live(record: Any, now_ms: float) -> bool:
    return record.active and not _expired(record, now_ms)


def _reference(view: Any, report: str, limit: int) -> dict[str, Any]:
    """What the report gave when it read every record (the rules, written plainly)."""
    now_ms = iso_to_ms(NOW)
    assert now_ms is not None
    counts = recall_counts(view.list_recall_usage())
    live = view.list(ListFilter(now=NOW))
    everything = view.list(ListFilter(now=NOW, include_inactive=True, include_expired=True))
    if report == "pending":
        found = promotion_candidates(live, counts, POLICY)
        return {"count": len(found), "ids": [r.id for r in found[:limit]]}
    if report == "recall_log":
        never = [r for r in live if r.id not in counts]
        return {"count": len(never), "ids": [r.id for r in never[:limit]]}
    if report == "value_log":
        return {
            "promotion": [r.id for r in promotion_candidates(live, counts, POLICY)],
            "suppressed": [r.id for r in low_q_memories(live, POLICY)],
        }
    alive = [r for r in everything if _live(r, now_ms)]
    by_id = {r.id: r for r in everything}
    sections = {
        "expired_scratch": [
            r for r in everything if r.active and r.kind == "scratch" and not _live(r, now_ms)
        ],
        "deleted_tombstones": [r for r in everything if r.deleted],
        "low_utility": [
            r
            for r in alive
            if r.id not in counts and reports.importance(r, now_ms) < reports.LOW_UTILITY_THRESHOLD
        ],
        "low_learned_utility": low_q_memories(alive, POLICY),
    }
    chains = [
        {
            "id": r.id,
            "superseded_by": r.superseded_by,
            "reason": by_id[r.superseded_by].supersedes_reason
            if r.superseded_by in by_id
            else None,
        }
        for r in everything
        if r.superseded_by and not r.deleted
    ]
    out: dict[str, Any] = {"active_count": len(alive), "superseded_chains": chains[:limit]}
    out["superseded_chains_count"] = len(chains)
    for name, found in sections.items():
        out[f"{name}_count"] = len(found)
        out[name] = [r.id for r in found[:limit]]
    return out


@pytest.mark.parametrize("limit", [2, 20])
@pytest.mark.parametrize("scopes", [(REPO_SCOPE, WORKSPACE), (OTHER_SCOPE,)], ids=["repo", "other"])
def test_reports_match_reading_every_record(store: Any, limit: int, scopes: Any) -> None:
    """pending, recall-log, value-log and stale agree with the plain computation, and never
    show a record of another scope."""
    _seed(store)
    view = ScopedView(store, scopes)
    keys = {s.key for s in scopes}
    pending = reports.pending_report(view, now=NOW, policy=POLICY, limit=limit)
    expected = _reference(view, "pending", limit)
    assert pending.promotion_candidate_count == expected["count"]
    assert [e["id"] for e in pending.promotion_candidates] == expected["ids"]

    log = reports.recall_log_report(view, now=NOW, limit=limit)
    expected = _reference(view, "recall_log", limit)
    assert log.never_recalled_count == expected["count"]
    assert [e["id"] for e in log.never_recalled] == expected["ids"]

    values = reports.value_log_report(view, now=NOW, policy=POLICY, limit=limit)
    expected = _reference(view, "value_log", limit)
    assert values.promotion_candidates == expected["promotion"]
    assert values.suppressed == expected["suppressed"]

    stale = reports.stale_report(view, now=NOW, policy=POLICY, limit=limit)
    expected = _reference(view, "stale", limit)
    assert stale.active_count == expected["active_count"]
    assert stale.superseded_chains == expected["superseded_chains"]
    for name in ("expired_scratch", "deleted_tombstones", "low_utility", "low_learned_utility"):
        assert getattr(stale, f"{name}_count") == expected[f"{name}_count"], name
        assert [e["id"] for e in getattr(stale, name)] == expected[name], name
    listed = stale.to_json()
    shown = [e["id"] for key in expected if isinstance(listed.get(key), list) for e in listed[key]]
    shown += [e["id"] for e in log.never_recalled] + values.suppressed
    assert shown and all(store.get(i).scope.key in keys for i in shown)
    assert stale.deleted_tombstones_count >= 1 and stale.expired_scratch_count >= 1


@pytest.mark.parametrize("mine", [3, 40, 400])
def test_full_text_preselection_by_scope_matches_listing_the_scope(store: Any, mine: int) -> None:
    """Pre-selection over every scoped record (the best matches of the whole index filtered
    by scope) picks what pre-selection over the listed scope picks, whether the scope holds
    a few, some or most of the matching records of a shared store."""
    records = [
        make_memory(f"repo cache retry note {i} {'cache ' * (i % 3)}", scope=REPO_SCOPE)
        for i in range(mine)
    ] + [
        make_memory(f"other cache retry note {i} {'retry ' * (i % 4)}", scope=OTHER_SCOPE)
        for i in range(300)
    ]
    store.upsert_many(records)
    store.delete(records[0].id, reason="gone", now=at(days=1))
    query = dict(
        scope_keys=[REPO_SCOPE.key],
        kinds=None,
        fts_query='"cache" OR "retry"',
        preselect_limit=25,
        scope_when_unmatched=True,
        now=at(days=2),
        include_expired=False,
    )
    ranked = store.select_candidates(**query, candidate_cap=1000, cap_before_preselect=False)
    listed = store.select_candidates(**query, candidate_cap=10_000, cap_before_preselect=True)
    assert [r.id for r in ranked.records] == [r.id for r in listed.records]
    assert ranked.fts_order == listed.fts_order
    assert all(r.scope == REPO_SCOPE and not r.deleted for r in ranked.records)
    nothing = store.select_candidates(
        **{**query, "fts_query": '"zzzunknown"'}, candidate_cap=1000, cap_before_preselect=False
    )
    assert nothing.fts_order is None or not nothing.records


@pytest.mark.parametrize("has_expiry", [None, True, False])
@pytest.mark.parametrize("include_expired", [False, True])
@pytest.mark.parametrize("include_inactive", [False, True])
def test_counts_and_lists_agree_with_every_record(
    store: Any, has_expiry: bool | None, include_expired: bool, include_inactive: bool
) -> None:
    """``count_where`` and ``list`` of the report filters (expiry present or not, expired
    rows in or out, one scope or several, ids excluded or picked) give what testing every
    record gives; the rows with an expiry are read through their own index."""
    _seed(store)
    everything = store.list(ListFilter(now=NOW, include_inactive=True, include_expired=True))
    now_ms = iso_to_ms(NOW)
    some = tuple(sorted(r.id for r in everything[::3]))
    for scopes in ((REPO_SCOPE,), (REPO_SCOPE, WORKSPACE), None):
        for ids, exclude in ((None, None), (None, some), (some, None)):
            flt = ListFilter(
                now=NOW,
                scope_keys=None if scopes is None else tuple(s.key for s in scopes),
                include_inactive=include_inactive,
                include_expired=include_expired,
                has_expiry=has_expiry,
                ids=ids,
                exclude_ids=exclude,
            )
            expected = sorted(
                r.id
                for r in everything
                if (scopes is None or r.scope in scopes)
                and (include_inactive or r.active)
                and (include_expired or not _expired(r, now_ms))
                and (has_expiry is None or (r.expires_at is not None) == has_expiry)
                and (ids is None or r.id in ids)
                and (exclude is None or r.id not in exclude)
            )
            assert store.count_where(flt) == len(expected), (scopes, ids, exclude)
            assert sorted(r.id for r in store.list(flt)) == expected, (scopes, ids, exclude)
    assert any(r.expires_at and _expired(r, now_ms) and r.active for r in everything)


def _expired(record: Any, now_ms: float | None) -> bool:
    expires = iso_to_ms(record.expires_at)
    return expires is not None and now_ms is not None and expires <= now_ms

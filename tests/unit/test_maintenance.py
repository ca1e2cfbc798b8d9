"""Maintenance reports (pending, recall-log, value-log, stale) and explicit compaction."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from factories import BASE_TIME, at, make_memory, make_proposal, outcome_event, recall_row

from swarmmem.adapters.storage.memory import InMemoryStore
from swarmmem.cli.render import markdown
from swarmmem.core.learning.rewards import LearningConfig
from swarmmem.core.maintenance import reports as mt
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.events import OutcomeEvent, RewardEvent
from swarmmem.core.model.records import MemoryRecord
from swarmmem.ports.clock import FixedClock

NOW = at(days=30)


@pytest.fixture
def store() -> InMemoryStore:
    """An empty in-memory store with a clock at 2026-01-01."""
    return InMemoryStore(clock=FixedClock(BASE_TIME))


def with_q(record: MemoryRecord, q: float) -> MemoryRecord:
    """``record`` with a learned value."""
    return attrs.evolve(record, metadata={**record.metadata, "qValue": q})


def dead_end(memory_id: str, event_id: str) -> OutcomeEvent:
    """A minimal outcome event for ``memory_id``."""
    return outcome_event(event_id, memory_id, "gen-1", outcome="dead_end", at=at(5))


@pytest.fixture
def mixed(store: InMemoryStore) -> dict[str, MemoryRecord]:
    """One record of every maintenance class, plus live ones that must survive."""
    records = {
        "live": make_memory("Tests run with pytest from the repository root"),
        "tombstone": make_memory(
            "Old docs lived in the wiki", metadata={"deleted": True, "outcomeGeneration": "gen-1"}
        ),
        "replacement": make_memory(
            "The formatter is ruff format", supersedes_reason="switched formatter"
        ),
        "expired_scratch": make_memory("Scratch note from last month", kind="scratch"),
        "fresh_scratch": make_memory(
            "Scratch note from today", kind="scratch", created_at=at(days=29)
        ),
        "expired_todo": make_memory(
            "Todo with a lapsed expiry", kind="todo", expires_at=at(days=2), stability="session"
        ),
    }
    records["superseded"] = make_memory(
        "The formatter is black",
        superseded_by=records["replacement"].id,
        metadata={"outcomeGeneration": "gen-1"},
    )
    for record in records.values():
        store.upsert(record)
    store.append_outcome(dead_end(records["tombstone"].id, "ev-tomb"))
    store.append_outcome(dead_end(records["superseded"].id, "ev-sup"))
    return records


# ----------------------------------------------------------------------------- limits


@pytest.mark.parametrize(
    ("raw", "expected"), [(None, 20), ("7", 7), (0, 1), ("0", 1), ("500", 100), (100, 100)]
)
def test_limit_defaults_and_clamps(raw: Any, expected: int) -> None:
    """``--limit`` defaults to 20 and is clamped to 1..100."""
    assert mt.parse_limit(raw) == expected


@pytest.mark.parametrize("raw", ["abc", "-1", "1.5", "", True, "٣"])
def test_limit_accepts_digits_only(raw: Any) -> None:
    """Anything but ASCII digits is refused."""
    with pytest.raises(MemoryValidationError, match="limit"):
        mt.parse_limit(raw)


# ----------------------------------------------------------------------------- compaction


def test_dry_run_compaction_removes_nothing(
    store: InMemoryStore, mixed: dict[str, MemoryRecord]
) -> None:
    """Without confirmation the plan is reported and the store is unchanged."""
    before = store.count()
    report = mt.apply_compaction(store, now=NOW)
    assert report.mode == "dry-run"
    assert report.removed == 0
    assert report.counts == {
        "deleted_tombstones": 1,
        "superseded_records": 1,
        "expired_scratch": 1,
    }
    assert store.count() == before
    assert all(store.get(r.id) is not None for r in mixed.values())
    assert [e for e in store.list_events() if e.operation == "compact"] == []
    text = markdown.render_compaction(report.to_json())
    assert "- Mode: `dry-run`" in text
    assert "No records were removed." in text


def test_confirmed_compaction_removes_only_the_three_classes(
    store: InMemoryStore, mixed: dict[str, MemoryRecord]
) -> None:
    """Tombstones, superseded records and expired scratch go (with outcomes); the rest stays."""
    report = mt.apply_compaction(store, now=NOW, confirm=True)
    assert report.mode == "confirmed"
    assert report.removed == 3
    gone = {"tombstone", "superseded", "expired_scratch"}
    for name, record in mixed.items():
        assert (store.get(record.id) is None) == (name in gone), name
    assert store.list_outcomes(mixed["tombstone"].id) == []
    assert store.list_outcomes(mixed["superseded"].id) == []
    assert report.remaining_memories == store.count() == len(mixed) - 3
    (event,) = [e for e in store.list_events() if e.operation == "compact"]
    assert json.loads(event.event_json or "{}")["removed"] == 3
    assert "- Removed records: 3" in markdown.render_compaction(report.to_json())


def test_compaction_plan_lists_sorted_ids(
    store: InMemoryStore, mixed: dict[str, MemoryRecord]
) -> None:
    """The plan names exactly the records of each class."""
    plan = mt.compact_plan(store, now=NOW)
    assert plan.deleted_tombstones == [mixed["tombstone"].id]
    assert plan.superseded_records == [mixed["superseded"].id]
    assert plan.expired_scratch == [mixed["expired_scratch"].id]


def test_a_second_confirmed_compaction_finds_nothing(
    store: InMemoryStore, mixed: dict[str, MemoryRecord]
) -> None:
    """Compaction is idempotent."""
    mt.apply_compaction(store, now=NOW, confirm=True)
    assert mt.apply_compaction(store, now=NOW, confirm=True).removed == 0


# ----------------------------------------------------------------------------- stale


def test_stale_report_sections(store: InMemoryStore, mixed: dict[str, MemoryRecord]) -> None:
    """Each stale class is listed; superseded chains carry the replacement's reason."""
    report = mt.stale_report(store, now=NOW, dead_anchor_ids=[mixed["live"].id, "mem_missing"])
    assert [e["id"] for e in report.expired_scratch] == [mixed["expired_scratch"].id]
    assert [e["id"] for e in report.deleted_tombstones] == [mixed["tombstone"].id]
    assert report.superseded_chains == [
        {
            "id": mixed["superseded"].id,
            "superseded_by": mixed["replacement"].id,
            "reason": "switched formatter",
        }
    ]
    assert [e["id"] for e in report.structurally_stale] == [mixed["live"].id]
    assert report.active_count == 3  # live, replacement, fresh scratch
    text = markdown.render_stale(report.to_json())
    assert (
        f"- `{mixed['superseded'].id}` -> `{mixed['replacement'].id}` - switched formatter" in text
    )
    assert "### Structurally stale memories (all anchors dead; retained)" in text
    assert (
        f"- `{mixed['live'].id}` project_fact confidence=0.80 updated={mixed['live'].updated_at}"
        in text
    )


@pytest.mark.parametrize(
    ("confidence", "age_days", "recalled", "low"),
    [
        (0.1, 0, False, True),  # 0.15 + 0.025 = 0.175
        (0.5, 100, False, True),  # 0.15 e^-1 + 0.125 = 0.180
        (0.5, 10, False, False),  # 0.136 + 0.125 = 0.261
        (0.1, 0, True, False),  # recalled memories are never low-utility
    ],
)
def test_low_utility_formula(
    store: InMemoryStore, confidence: float, age_days: int, recalled: bool, low: bool
) -> None:
    """Never recalled and ``0.15 exp(-0.01 age) + 0.25 confidence < 0.2``."""
    now = at(days=200)
    record = make_memory(
        "A rarely useful fact", confidence=confidence, created_at=at(days=200 - age_days)
    )
    store.upsert(record)
    if recalled:
        store.record_recall_usage(recall_row([record.id], timestamp=at(days=150)))
    report = mt.stale_report(store, now=now)
    assert ([e["id"] for e in report.low_utility] == [record.id]) is low


def test_low_learned_utility_lists_suppressed_memories(store: InMemoryStore) -> None:
    """Memories whose Q fell below the suppression threshold are listed."""
    low = with_q(make_memory("Suppressed fact"), 0.1)
    fine = with_q(make_memory("Healthy fact"), 0.6)
    store.upsert(low)
    store.upsert(fine)
    report = mt.stale_report(store, now=NOW, policy=LearningConfig(suppression_threshold=0.15))
    assert [e["id"] for e in report.low_learned_utility] == [low.id]


def test_stale_lists_respect_the_limit_but_counts_do_not(store: InMemoryStore) -> None:
    """Lists are cut at ``limit``; counts stay totals and the text says how many more."""
    for i in range(5):
        store.upsert(make_memory(f"Deleted fact number {i}", metadata={"deleted": True}))
    report = mt.stale_report(store, now=NOW, limit=2)
    assert len(report.deleted_tombstones) == 2
    assert report.deleted_tombstones_count == 5
    assert "- ... 3 more" in markdown.render_stale(report.to_json())


# ----------------------------------------------------------------------------- recall log


def test_recall_log_by_role_most_and_never_recalled(store: InMemoryStore) -> None:
    """Roles, hit counts, last times and average scores; never-recalled active memories."""
    a, b, c = (make_memory(t) for t in ("Fact alpha", "Fact beta", "Fact gamma"))
    for record in (a, b, c):
        store.upsert(record)
    store.record_recall_usage(recall_row([a.id, b.id], scores=[0.8, 0.4], timestamp=at(1)))
    store.record_recall_usage(recall_row([a.id], scores=[0.6], timestamp=at(2), role="reviewer"))
    store.record_recall_usage(recall_row([], timestamp=at(3), role=None))
    report = mt.recall_log_report(store, now=NOW)
    assert report.events_scanned == 3
    assert report.by_role == [
        {"role": "coder", "events": 1, "memory_ids": 2},
        {"role": "reviewer", "events": 1, "memory_ids": 1},
        {"role": "unknown", "events": 1, "memory_ids": 0},
    ]
    top = report.most_recalled[0]
    assert (top["id"], top["hits"], top["last"]) == (a.id, 2, at(2))
    assert top["avg_score"] == pytest.approx(0.7)
    assert [e["id"] for e in report.never_recalled] == [c.id]
    text = markdown.render_recall_log(report.to_json())
    assert f"- `{a.id}`: 2 hit(s), last={at(2)}, avgScore=0.700" in text
    assert "- `coder`: 1 recall event(s), 2 memory ID(s)" in text


# ----------------------------------------------------------------------------- value log


def reward(
    memory_id: str, minute: int, verdict: str, q_before: float, q_after: float
) -> RewardEvent:
    """A reward event."""
    return RewardEvent(
        memory_id=memory_id,
        verdict=verdict,
        reward=1.0 if verdict.startswith("APPROVE") else -1.0,
        q_before=q_before,
        q_after=q_after,
        timestamp=at(minute),
    )


def test_value_log_groups_rewards_newest_first_with_statuses(store: InMemoryStore) -> None:
    """Per memory: Q, status, reward count and at most five recent rewards, newest first."""
    star = with_q(make_memory("Star fact"), 0.9)
    low = with_q(make_memory("Low fact"), 0.1)
    mid = with_q(make_memory("Middle fact"), 0.6)
    for record in (star, low, mid):
        store.upsert(record)
    for minute in range(6):
        store.record_recall_usage(recall_row([star.id], timestamp=at(minute)))
    for minute in range(7):
        store.append_reward_event(reward(star.id, minute, "APPROVE", 0.5, 0.55))
    store.append_reward_event(reward(low.id, 20, "REJECT", 0.2, 0.1))
    store.append_reward_event(reward(mid.id, 10, "APPROVE_PROPAGATED", 0.5, 0.6))
    report = mt.value_log_report(store, now=NOW)
    assert [m["id"] for m in report.memories] == [low.id, mid.id, star.id]
    by_id = {m["id"]: m for m in report.memories}
    assert by_id[star.id]["status"] == mt.STATUS_PROMOTION
    assert by_id[low.id]["status"] == mt.STATUS_SUPPRESSED
    assert by_id[mid.id]["status"] == mt.STATUS_NEUTRAL
    assert by_id[star.id]["rewards"] == 7
    assert [e["timestamp"] for e in by_id[star.id]["recent"]] == [at(m) for m in (6, 5, 4, 3, 2)]
    assert report.promotion_candidates == [star.id]
    assert report.suppressed == [low.id]
    text = markdown.render_value_log(report.to_json())
    assert f"- `{low.id}` q=0.100 [suppressed (low learned-utility)] rewards=1 - Low fact" in text
    assert f"    - {at(20)} REJECT reward=-1.00 (q 0.20→0.10)" in text


def test_value_log_window_is_twenty_events_per_limit(store: InMemoryStore) -> None:
    """Only the newest ``limit * 20`` reward events are scanned."""
    record = make_memory("Busy fact")
    store.upsert(record)
    for minute in range(30):
        store.append_reward_event(reward(record.id, minute, "APPROVE", 0.5, 0.55))
    report = mt.value_log_report(store, now=NOW, limit=1)
    assert report.reward_events_scanned == 20
    assert report.memories[0]["rewards"] == 20


def test_empty_value_log_says_so(store: InMemoryStore) -> None:
    """Without reward events the text says no history exists."""
    assert "- No reward history recorded yet." in markdown.render_value_log(
        mt.value_log_report(store, now=NOW).to_json()
    )


# ----------------------------------------------------------------------------- pending


def test_pending_report_lists_proposals_rejections_with_pii_and_candidates(
    store: InMemoryStore,
) -> None:
    """Pending proposals, rejected reasons with a PII summary, promotion candidates."""
    waiting = make_proposal(record=make_memory("Proposed fact"), created_at=at(1))
    rejected = make_proposal(
        record=make_memory("Leaky fact"),
        created_at=at(2),
        status="rejected",
        rejection_reason="too personal",
        reviewed_at=at(3),
        metadata={"pii": {"score": 0.9, "countsByType": {"email": 1}}},
    )
    store.create_proposal(waiting)
    store.create_proposal(rejected)
    star = with_q(make_memory("Promoted fact"), 0.95)
    store.upsert(star)
    for minute in range(6):
        store.record_recall_usage(recall_row([star.id], timestamp=at(minute)))
    report = mt.pending_report(store, now=NOW)
    assert (report.pending_count, report.rejected_count) == (1, 1)
    assert report.pending[0]["id"] == waiting.id
    assert report.pending[0]["target"] == make_memory("Proposed fact").id
    assert [c["id"] for c in report.promotion_candidates] == [star.id]
    text = markdown.render_pending(report.to_json())
    assert (
        f"- `{rejected.id}` add {make_memory('Leaky fact').id} (rejected) - too personal "
        "pii-score=0.90 (emailx1)"
    ) in text
    assert "### Promotion candidates (high learned utility, frequently recalled)" in text
    assert f"- `{star.id}` q=0.950 recalls=6 - Promoted fact" in text


def test_reports_are_stable_json(store: InMemoryStore, mixed: dict[str, MemoryRecord]) -> None:
    """Every report serialises to JSON, identically on a second build."""
    for build in (
        lambda: mt.stale_report(store, now=NOW),
        lambda: mt.recall_log_report(store, now=NOW),
        lambda: mt.value_log_report(store, now=NOW),
        lambda: mt.pending_report(store, now=NOW),
        lambda: mt.compact_plan(store, now=NOW),
    ):
        first, second = build().to_json(), build().to_json()
        assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)

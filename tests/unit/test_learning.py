"""Recall learning: EMA rewards, verdict targeting, idempotency, propagation and candidates;
explicit outcomes teaching Q values (rewards, retries, scope, configuration, value-log)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
from factories import (
    BASE_TIME,
    OTHER_SCOPE,
    REPO_SCOPE,
    at,
    learning_gateway,
    make_memory,
    open_store,
    outcome_event,
    recall_row,
)
from report_rules import low_q_memories, promotion_candidates

import swarmmem
from swarmmem import config as config_mod
from swarmmem.adapters.storage.memory import InMemoryStore
from swarmmem.core.learning.outcomes import (
    STATUS_DISABLED,
    STATUS_INACTIVE,
    STATUS_OUT_OF_SCOPE,
    STATUS_QUESTION,
    apply_outcome,
    outcome_label,
)
from swarmmem.core.learning.rewards import (
    OUTCOME_REWARDS,
    REWARDS,
    STATUS_ALREADY_APPLIED,
    STATUS_APPLIED,
    STATUS_NO_USAGE,
    LearningConfig,
    SessionRegistry,
    VerdictResult,
    apply_verdict,
    clamp01,
    cosine,
    ema,
    propagated_signal,
    recall_counts,
)
from swarmmem.core.maintenance.reports import value_log_report
from swarmmem.core.model.errors import (
    ConfigError,
    ConflictError,
    MemoryValidationError,
    NotFoundError,
)
from swarmmem.core.model.events import RewardEvent
from swarmmem.core.model.records import MemoryRecord, MemoryScope
from swarmmem.core.recall.scoring import LearningPolicy
from swarmmem.ports.clock import FixedClock
from swarmmem.ports.storage import ListFilter

NOW = at(days=1)
TESTS_FACT = "Run the unit tests with pytest from the repository root directory"
TESTS_TWIN = "Run the unit tests with pytest from the repository root folder"


@pytest.fixture
def clock() -> FixedClock:
    """A clock stopped at 2026-01-01."""
    return FixedClock(BASE_TIME)


@pytest.fixture
def store(clock: FixedClock) -> InMemoryStore:
    """An empty in-memory store."""
    return InMemoryStore(clock=clock)


def put(store: InMemoryStore, *records: MemoryRecord) -> list[MemoryRecord]:
    """Store ``records`` and return them."""
    return [store.upsert(r) for r in records]


def q_of(store: InMemoryStore, memory_id: str) -> float:
    """The stored Q-value of a memory."""
    record = store.get(memory_id)
    assert record is not None
    return record.q


def verdict(store: InMemoryStore, label: str = "APPROVE", **options: Any) -> VerdictResult:
    """``apply_verdict`` with test defaults (host session ``sess-1``, round 1)."""
    params: dict[str, Any] = {
        "verdict": label,
        "host_session_id": "sess-1",
        "swarm_id": "swarm-a",
        "task_or_phase": "task-1",
        "round_number": 1,
        "now": NOW,
    }
    params.update(options)
    return apply_verdict(store, **params)


def recalled(store: InMemoryStore, ids: Sequence[str], **options: Any) -> None:
    """Record one recall bundle listing ``ids``."""
    store.record_recall_usage(recall_row(ids, **options))


# ----------------------------------------------------------------------------- arithmetic


def test_rewards_follow_the_design_document() -> None:
    """APPROVE is +1, REJECT -1 and CONCERNS 0."""
    assert dict(REWARDS) == {"APPROVE": 1.0, "REJECT": -1.0, "CONCERNS": 0.0}


@pytest.mark.parametrize(
    ("q", "reward", "expected"),
    [(0.5, 1.0, 0.55), (0.5, -1.0, 0.35), (0.5, 0.0, 0.45), (0.35, -1.0, 0.215)],
)
def test_ema_step_numbers(q: float, reward: float, expected: float) -> None:
    """One EMA step at eta 0.1 gives the documented numbers."""
    assert ema(q, reward, 0.1) == pytest.approx(expected, abs=1e-12)


def test_ema_clamps_to_unit_interval_and_guards_non_finite_input() -> None:
    """Results stay in [0, 1]; a NaN q counts as 0, a NaN reward or rate changes nothing."""
    assert ema(0.01, -1.0, 0.5) == 0.0
    assert ema(1.0, 5.0, 0.5) == 1.0
    assert ema(math.nan, 1.0, 0.1) == pytest.approx(0.1)
    assert ema(0.7, math.nan, 0.1) == 0.7
    assert ema(0.7, 1.0, math.inf) == 0.7
    assert clamp01(math.nan) == 0.0


def test_propagated_signal_is_pulled_toward_the_middle() -> None:
    """The propagated signal is ``0.5 + clamp01(f) * (r - 0.5)``."""
    assert propagated_signal(1.0, 0.3) == pytest.approx(0.65)
    assert propagated_signal(-1.0, 0.3) == pytest.approx(0.05)
    assert propagated_signal(1.0, 7.0) == pytest.approx(1.0)
    assert ema(0.5, propagated_signal(1.0, 0.3), 0.1) == pytest.approx(0.515)


def test_cosine_handles_zero_and_mismatched_vectors() -> None:
    """Cosine is 1 for parallel vectors and 0 for zero or different-length vectors."""
    assert cosine([1.0, 2.0], [2.0, 4.0]) == pytest.approx(1.0)
    assert cosine([0.0, 0.0], [1.0, 0.0]) == 0.0
    assert cosine([1.0], [1.0, 0.0]) == 0.0


def test_settings_read_the_learning_config_section() -> None:
    """Every ``memory.learning`` key maps onto the settings."""
    settings = config_mod.parse(
        {"learning": {"learningRate": 0.2, "propagationFanout": 3, "propagationLookbackDays": 7}}
    ).learning
    assert settings.learning_rate == 0.2
    assert settings.fanout == 3
    assert settings.lookback_days == 7.0
    assert settings.token_overlap_threshold == 0.4
    assert settings.embedding_cosine_threshold == 0.7
    assert settings.promotion_threshold == 0.85


# ----------------------------------------------------------------------------- direct rewards


def test_approve_moves_a_recalled_memory_from_half_to_055(store: InMemoryStore) -> None:
    """An APPROVE verdict takes a neutral recalled memory to 0.55."""
    (fact,) = put(store, make_memory(TESTS_FACT))
    recalled(store, [fact.id])
    result = verdict(store)
    assert result.status == STATUS_APPLIED
    assert q_of(store, fact.id) == pytest.approx(0.55)
    assert [u.q_after for u in result.direct] == [pytest.approx(0.55)]


def test_reject_moves_a_recalled_memory_from_half_to_035(store: InMemoryStore) -> None:
    """A REJECT verdict takes a neutral recalled memory to 0.35."""
    (fact,) = put(store, make_memory(TESTS_FACT))
    recalled(store, [fact.id])
    verdict(store, "reject")
    assert q_of(store, fact.id) == pytest.approx(0.35)


def test_reward_event_records_the_update(store: InMemoryStore) -> None:
    """Each direct update appends one reward event with its key, values and context."""
    (fact,) = put(store, make_memory(TESTS_FACT))
    recalled(store, [fact.id], run_id="run-9", unit_id="unit-3")
    verdict(store, "APPROVE")
    (event,) = store.list_reward_events()
    assert event.memory_id == fact.id
    assert event.run_id == "run-9"
    assert event.unit_id == "unit-3"
    assert event.verdict == "APPROVE"
    assert event.reward == 1.0
    assert event.q_before == 0.5
    assert event.q_after == pytest.approx(0.55)
    assert event.timestamp == NOW
    assert event.verdict_synthesis["rewardKey"] == "swarm-a:task-1:1"


def test_a_memory_in_several_bundles_gets_exactly_one_step(store: InMemoryStore) -> None:
    """A memory recalled by the host and a member session is updated once."""
    fact, other = put(store, make_memory(TESTS_FACT), make_memory("Docs live in docs/"))
    recalled(store, [fact.id], session_id="sess-1", timestamp=at(1))
    recalled(store, [fact.id, other.id], session_id="sess-2", timestamp=at(2))
    result = verdict(store, session_ids=["sess-2"], known_sessions={"sess-2"})
    assert sorted(u.memory_id for u in result.direct) == sorted([fact.id, other.id])
    assert q_of(store, fact.id) == pytest.approx(0.55)
    assert len([e for e in store.list_reward_events() if e.memory_id == fact.id]) == 1


def test_stability_and_content_are_never_changed(store: InMemoryStore) -> None:
    """Learning writes only ``metadata.qValue``: text, stability and timestamps stay."""
    (fact,) = put(store, make_memory(TESTS_FACT))
    recalled(store, [fact.id])
    verdict(store)
    after = store.get(fact.id)
    assert after is not None
    assert (after.text, after.stability, after.updated_at) == (
        fact.text,
        fact.stability,
        fact.updated_at,
    )
    assert after.metadata["qValue"] == pytest.approx(0.55)


def test_repeat_verdict_is_already_applied_and_changes_nothing(store: InMemoryStore) -> None:
    """The same swarm, task and round applies once; a repeat reports already_applied."""
    (fact,) = put(store, make_memory(TESTS_FACT))
    recalled(store, [fact.id])
    verdict(store)
    events = store.list_reward_events()
    again = verdict(store, "REJECT")
    assert again.status == STATUS_ALREADY_APPLIED
    assert again.updates == ()
    assert q_of(store, fact.id) == pytest.approx(0.55)
    assert store.list_reward_events() == events


def test_next_round_applies_again(store: InMemoryStore) -> None:
    """A different round is a different key and applies a second EMA step."""
    (fact,) = put(store, make_memory(TESTS_FACT))
    recalled(store, [fact.id])
    verdict(store, round_number=1)
    assert verdict(store, round_number=2).status == STATUS_APPLIED
    assert q_of(store, fact.id) == pytest.approx(0.595)


def test_no_matching_bundle_reports_no_recall_usage(store: InMemoryStore) -> None:
    """Without a bundle for the targeted sessions nothing is written."""
    (fact,) = put(store, make_memory(TESTS_FACT))
    recalled(store, [fact.id], session_id="someone-else")
    result = verdict(store)
    assert result.status == STATUS_NO_USAGE
    assert result.to_json()["success"] is False
    assert store.list_reward_events() == []
    assert q_of(store, fact.id) == 0.5


def test_no_recall_usage_does_not_burn_the_reward_key(store: InMemoryStore) -> None:
    """After no_recall_usage_for_run the same key still applies once usage exists."""
    (fact,) = put(store, make_memory(TESTS_FACT))
    assert verdict(store).status == STATUS_NO_USAGE
    recalled(store, [fact.id])
    assert verdict(store).status == STATUS_APPLIED


def test_unknown_caller_session_ids_are_dropped(store: InMemoryStore) -> None:
    """A made-up member session id is dropped, not matched, even if it has recall usage."""
    (fact,) = put(store, make_memory(TESTS_FACT))
    recalled(store, [fact.id], session_id="spoofed")
    result = verdict(store, session_ids=["spoofed"], known_sessions={"sess-7"})
    assert result.status == STATUS_NO_USAGE
    assert result.dropped_session_ids == ("spoofed",)
    assert q_of(store, fact.id) == 0.5


def test_known_member_sessions_are_rewarded_and_unknown_ones_dropped(
    store: InMemoryStore,
) -> None:
    """Registered member sessions are targeted alongside the host; the rest are reported."""
    host, member, stranger = put(
        store,
        make_memory("Host fact about builds"),
        make_memory("Member fact about linting"),
        make_memory("Stranger fact about deploys"),
    )
    recalled(store, [host.id], session_id="sess-1")
    recalled(store, [member.id], session_id="member")
    recalled(store, [stranger.id], session_id="stranger")
    registry = SessionRegistry(["member"])
    result = verdict(store, session_ids=["member", "stranger"], known_sessions=registry.snapshot())
    assert result.sessions == ("sess-1", "member")
    assert result.dropped_session_ids == ("stranger",)
    assert q_of(store, host.id) == pytest.approx(0.55)
    assert q_of(store, member.id) == pytest.approx(0.55)
    assert q_of(store, stranger.id) == 0.5


def test_only_the_most_recent_bundle_of_a_session_counts(store: InMemoryStore) -> None:
    """Older bundles of the same session are ignored; empty bundles do not count."""
    old, new = put(
        store, make_memory("Caches are flushed nightly"), make_memory("Logs rotate every week")
    )
    recalled(store, [old.id], timestamp=at(1))
    recalled(store, [new.id], timestamp=at(2))
    recalled(store, [], timestamp=at(3))
    result = verdict(store)
    assert [u.memory_id for u in result.direct] == [new.id]
    assert q_of(store, old.id) == 0.5


def test_bundles_of_another_unit_are_skipped(store: InMemoryStore) -> None:
    """With a unit id, a session's bundle recorded for another unit is not rewarded."""
    mine, theirs = put(store, make_memory("Unit one fact"), make_memory("Unit two fact"))
    recalled(store, [mine.id], unit_id="unit-1", timestamp=at(1))
    recalled(store, [theirs.id], unit_id="unit-2", timestamp=at(2))
    result = verdict(store, unit_id="unit-1")
    assert [u.memory_id for u in result.direct] == [mine.id]


def test_deleted_memories_are_not_rewarded(store: InMemoryStore) -> None:
    """A recalled memory that became a tombstone keeps its value."""
    (fact,) = put(store, make_memory(TESTS_FACT))
    recalled(store, [fact.id])
    store.delete(fact.id, reason="retired", now=at(5))
    assert verdict(store).status == STATUS_NO_USAGE


@pytest.mark.parametrize(
    ("field", "value"),
    [("verdict", "MAYBE"), ("swarm_id", " "), ("round_number", -1), ("now", "yesterday")],
)
def test_bad_verdict_input_is_rejected(store: InMemoryStore, field: str, value: Any) -> None:
    """Unknown verdicts, empty key parts, negative rounds and bad times raise."""
    with pytest.raises(MemoryValidationError):
        verdict(store, **{field: value})


def test_updates_are_all_or_nothing(store: InMemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure while writing reward events rolls every Q-value back."""
    first, second = put(store, make_memory("First fact here"), make_memory("Second fact here"))
    recalled(store, [first.id, second.id])
    calls = {"n": 0}
    original = store.append_reward_event

    def failing(event: RewardEvent) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("disk full")
        original(event)

    monkeypatch.setattr(store, "append_reward_event", failing)
    with pytest.raises(RuntimeError):
        verdict(store)
    assert q_of(store, first.id) == 0.5
    assert q_of(store, second.id) == 0.5
    assert store.list_reward_events() == []


# ----------------------------------------------------------------------------- propagation


def test_near_duplicate_receives_the_propagated_update(store: InMemoryStore) -> None:
    """A recently recalled same-kind near-duplicate of an APPROVEd memory goes 0.5 -> 0.515."""
    fact, twin = put(store, make_memory(TESTS_FACT), make_memory(TESTS_TWIN))
    recalled(store, [twin.id], session_id="other", timestamp=at(1))
    recalled(store, [fact.id], timestamp=at(2))
    result = verdict(store)
    (update,) = result.propagated
    assert update.memory_id == twin.id
    assert update.verdict == "APPROVE_PROPAGATED"
    assert update.source_memory_id == fact.id
    assert q_of(store, twin.id) == pytest.approx(0.515)
    event = next(e for e in store.list_reward_events() if e.memory_id == twin.id)
    assert event.verdict == "APPROVE_PROPAGATED"
    assert event.reward == pytest.approx(0.65)


def test_reject_propagates_a_weakened_negative_signal(store: InMemoryStore) -> None:
    """A REJECT propagates the signal 0.05, so a neutral twin goes to 0.455."""
    fact, twin = put(store, make_memory(TESTS_FACT), make_memory(TESTS_TWIN))
    recalled(store, [twin.id], session_id="other", timestamp=at(1))
    recalled(store, [fact.id], timestamp=at(2))
    verdict(store, "REJECT")
    assert q_of(store, twin.id) == pytest.approx(0.455)


def test_dissimilar_other_kind_other_scope_and_unrecalled_are_not_touched(
    store: InMemoryStore,
) -> None:
    """Propagation needs overlap >= threshold, the same kind and scope, and a recent recall."""
    other_scope = MemoryScope(type="repository", repo_id="elsewhere")
    fact, unrelated, other_kind, foreign, never = put(
        store,
        make_memory(TESTS_FACT),
        make_memory("Deploys go through the staging pipeline first"),
        make_memory(TESTS_TWIN, kind="test_pattern"),
        make_memory(TESTS_TWIN, scope=other_scope),
        make_memory("Run the unit tests with pytest from the repository root dir"),
    )
    recalled(store, [unrelated.id, other_kind.id, foreign.id], session_id="x", timestamp=at(1))
    recalled(store, [fact.id], timestamp=at(2))
    result = verdict(store)
    assert result.propagated == ()
    for record in (unrelated, other_kind, foreign, never):
        assert q_of(store, record.id) == 0.5


def test_fanout_caps_targets_per_source_by_similarity_then_id(store: InMemoryStore) -> None:
    """At most ``fanout`` targets per source: the most similar first, ties by id."""
    base = "alpha beta gamma delta epsilon zeta eta theta"
    fact = make_memory(base)
    twins = [
        make_memory(base + " iota"),
        make_memory(base + " kappa"),
        make_memory(base + " lambda mu"),
        make_memory(base + " nu xi omicron"),
    ]
    put(store, fact, *twins)
    recalled(store, [t.id for t in twins], session_id="x", timestamp=at(1))
    recalled(store, [fact.id], timestamp=at(2))
    result = verdict(store, policy=LearningConfig(fanout=2))
    one_word = sorted([twins[0].id, twins[1].id])
    assert [u.memory_id for u in result.propagated] == one_word
    assert q_of(store, twins[2].id) == 0.5
    assert q_of(store, twins[3].id) == 0.5


def test_lookback_limits_propagation_to_recent_recalls(store: InMemoryStore) -> None:
    """A twin last recalled before the lookback window is not updated."""
    fact, fresh, stale = put(
        store,
        make_memory(TESTS_FACT),
        make_memory(TESTS_TWIN),
        make_memory("Run the unit tests with pytest from the repository root dir"),
    )
    now = at(days=60)
    recalled(store, [stale.id], session_id="x", timestamp=at(days=20))
    recalled(store, [fresh.id], session_id="y", timestamp=at(days=45))
    recalled(store, [fact.id], timestamp=at(days=59))
    result = verdict(store, now=now, policy=LearningConfig(lookback_days=30))
    assert [u.memory_id for u in result.propagated] == [fresh.id]
    assert q_of(store, stale.id) == 0.5


@pytest.mark.parametrize(
    "settings",
    [
        LearningConfig(propagation_factor=0),
        LearningConfig(fanout=0),
        LearningConfig(lookback_days=0),
    ],
)
def test_zero_factor_fanout_or_lookback_disables_propagation(
    store: InMemoryStore, settings: LearningConfig
) -> None:
    """Propagation is off when its factor, fanout or lookback is zero."""
    fact, twin = put(store, make_memory(TESTS_FACT), make_memory(TESTS_TWIN))
    recalled(store, [twin.id], session_id="other", timestamp=at(1))
    recalled(store, [fact.id], timestamp=at(2))
    assert verdict(store, policy=settings).propagated == ()
    assert q_of(store, twin.id) == 0.5


def test_each_target_is_updated_once_and_never_propagates_further(
    store: InMemoryStore,
) -> None:
    """Two sources sharing a twin update it once; the twin's own neighbour is untouched."""
    a = make_memory("one two three four five six seven eight")
    b = make_memory("one two three four five six seven nine")
    twin = make_memory("one two three four five six seven ten")
    far = make_memory("five six seven ten eleven twelve thirteen fourteen")
    put(store, a, b, twin, far)
    recalled(store, [twin.id, far.id], session_id="x", timestamp=at(1))
    recalled(store, [a.id, b.id], timestamp=at(2))
    result = verdict(store, policy=LearningConfig(token_overlap_threshold=0.5))
    assert [u.memory_id for u in result.propagated] == [twin.id]
    assert result.propagated[0].source_memory_id == min(a.id, b.id)
    assert q_of(store, twin.id) == pytest.approx(0.515)
    assert q_of(store, far.id) == 0.5


def test_embedding_path_reaches_across_kinds(store: InMemoryStore) -> None:
    """With an embedder, a cosine >= 0.7 neighbour of another kind is updated too."""
    fact = make_memory("Use the fixture factory for database rows")
    cousin = make_memory("Tables are populated through builders", kind="test_pattern")
    distant = make_memory("Release notes are written by hand", kind="test_pattern")
    put(store, fact, cousin, distant)
    vectors = {fact.text: [1.0, 0.0], cousin.text: [0.8, 0.6], distant.text: [0.0, 1.0]}
    seen: list[list[str]] = []

    def embed(texts: Sequence[str]) -> list[list[float]]:
        seen.append(list(texts))
        return [vectors[t] for t in texts]

    recalled(store, [cousin.id, distant.id], session_id="x", timestamp=at(1))
    recalled(store, [fact.id], timestamp=at(2))
    without = verdict(store, round_number=1)
    assert without.propagated == ()
    result = verdict(store, round_number=2, embed=embed)
    assert [(u.memory_id, u.similarity) for u in result.propagated] == [
        (cousin.id, pytest.approx(0.8))
    ]
    assert q_of(store, distant.id) == 0.5
    assert seen, "the embedder was called"


def test_a_failing_embedder_falls_back_to_the_lexical_path(store: InMemoryStore) -> None:
    """An embedder error disables only the embedding path; lexical twins still update."""
    fact, twin = put(store, make_memory(TESTS_FACT), make_memory(TESTS_TWIN))
    recalled(store, [twin.id], session_id="other", timestamp=at(1))
    recalled(store, [fact.id], timestamp=at(2))

    def broken(texts: Sequence[str]) -> list[list[float]]:
        raise RuntimeError("model missing")

    result = verdict(store, embed=broken)
    assert [u.memory_id for u in result.propagated] == [twin.id]


# ----------------------------------------------------------------------------- recall effects


def test_exploration_is_off_by_default_so_recall_is_deterministic(
    store: InMemoryStore, clock: FixedClock
) -> None:
    """The default exploration rate is 0: a suppressed memory never resurfaces."""
    assert config_mod.defaults()["learning"]["explorationRate"] == 0
    assert LearningPolicy().exploration_rate == 0
    good = make_memory("Lint the code with ruff check before pushing")
    bad = make_memory("Lint the code with flake8 before pushing", metadata={"qValue": 0.05})
    put(store, good, bad)
    gateway = learning_gateway(store, clock, session_id="sess-1")
    results = {
        tuple(i.record.id for i in gateway.recall("lint the code before pushing").items)
        for _ in range(40)
    }
    assert results == {(good.id,)}


def test_three_rejects_suppress_a_memory_from_recall(
    store: InMemoryStore, clock: FixedClock
) -> None:
    """0.5 -> 0.35 -> 0.215 -> 0.0935 falls below 0.15, so default recall hides it."""
    (fact,) = put(store, make_memory("Lint the code with flake8 before pushing"))
    gateway = learning_gateway(store, clock, session_id="sess-1")
    for round_number in (1, 2, 3):
        clock.advance(minutes=1)
        assert [i.record.id for i in gateway.recall("lint the code").items] == [fact.id]
        verdict(store, "REJECT", round_number=round_number, now=at(10))
    assert q_of(store, fact.id) == pytest.approx(0.0935)
    clock.advance(minutes=1)
    assert gateway.recall("lint the code").items == ()
    assert gateway.recall("lint the code", include_low_q=True).items[0].record.id == fact.id


def _with_q(record: MemoryRecord, q: float) -> MemoryRecord:
    return attrs.evolve(record, metadata={**record.metadata, "qValue": q})


def test_promotion_needs_high_q_and_more_than_five_recalls(store: InMemoryStore) -> None:
    """q > 0.85 and > 5 recalls are both required; stability is untouched."""
    star = _with_q(make_memory("Star fact one"), 0.9)
    few = _with_q(make_memory("Few recalls fact"), 0.9)
    edge = _with_q(make_memory("Exactly threshold fact"), 0.85)
    gone = _with_q(make_memory("Deleted star fact", metadata={"deleted": True}), 0.95)
    put(store, star, few, edge, gone)
    for minute in range(6):
        recalled(store, [star.id, edge.id, gone.id], timestamp=at(minute))
    for minute in range(5):
        recalled(store, [few.id], timestamp=at(10 + minute))
    counts = recall_counts(store.list_recall_usage())
    assert counts[star.id] == 6
    assert counts[few.id] == 5
    records = [r for r in (store.get(i) for i in (star.id, few.id, edge.id, gone.id)) if r]
    assert [r.id for r in promotion_candidates(records, counts)] == [star.id]
    assert all(r.stability == "durable" for r in records)


def test_low_q_lists_active_memories_below_the_suppression_threshold() -> None:
    """Low-Q memories are active ones with q < 0.15, lowest first."""
    low = _with_q(make_memory("Low fact"), 0.1)
    lower = _with_q(make_memory("Lower fact"), 0.01)
    fine = _with_q(make_memory("Fine fact"), 0.15)
    dead = _with_q(make_memory("Dead low fact", metadata={"deleted": True}), 0.0)
    assert [r.id for r in low_q_memories([low, lower, fine, dead])] == [lower.id, low.id]


def test_session_registry_registers_ids() -> None:
    """The registry knows registered ids; empty ids are ignored."""
    registry = SessionRegistry(["x", ""])
    registry.register("a")
    registry.register("")
    assert registry.snapshot() == frozenset({"a", "x"})


def test_gateway_recall_feeds_the_verdict_loop(store: InMemoryStore, clock: FixedClock) -> None:
    """Bundles recorded by gateway recalls are what a verdict rewards."""
    fact, other = put(
        store,
        make_memory("Build the docs with mkdocs build"),
        make_memory("Release tags follow semantic versioning"),
    )
    clock.advance(minutes=1)
    bundle = learning_gateway(store, clock, session_id="sess-1").recall(
        "build the docs", max_items=1
    )
    assert [i.record.id for i in bundle.items] == [fact.id]
    result = verdict(store, now=at(5))
    assert [u.memory_id for u in result.direct] == [fact.id]
    assert result.bundle_ids == (bundle.id,)
    assert q_of(store, other.id) == 0.5
    assert REPO_SCOPE.key == fact.scope.key


# ----------------------------------------------------------------------------- explicit outcomes

SCOPE_KEYS = frozenset({REPO_SCOPE.key})


def teaching(
    store: Any, clock: FixedClock, settings: LearningConfig | None = None, **kw: Any
) -> Any:
    """A gateway of session ``sess-1`` whose outcomes teach (default learning settings)."""
    return learning_gateway(
        store, clock, session_id="sess-1", outcomes=settings or LearningConfig(), **kw
    )


def test_outcome_rewards_are_the_design_documents_verdict_rewards() -> None:
    """useful is APPROVE (+1), dead_end REJECT (-1), corrected CONCERNS (0); the settings and
    the configuration defaults agree with them."""
    assert dict(OUTCOME_REWARDS) == {
        "useful": REWARDS["APPROVE"],
        "dead_end": REWARDS["REJECT"],
        "corrected": REWARDS["CONCERNS"],
    }
    settings = LearningConfig()
    assert {o: settings.outcome_reward(o) for o in OUTCOME_REWARDS} == {
        "useful": 1.0,
        "dead_end": -1.0,
        "corrected": 0.0,
    }
    assert config_mod.parse({}).learning == settings


@pytest.mark.parametrize(
    ("outcome", "correction", "expected"),
    [("useful", None, 0.55), ("dead_end", None, 0.35), ("corrected", "Use tox.", 0.45)],
)
def test_one_outcome_takes_one_ema_step_from_half(
    store: InMemoryStore, clock: FixedClock, outcome: str, correction: str | None, expected: float
) -> None:
    """At rate 0.1: useful 0.5 -> 0.55, dead_end 0.5 -> 0.35, corrected 0.5 -> 0.45."""
    (fact,) = put(store, make_memory(TESTS_FACT))
    teaching(store, clock).record_outcome(memory_id=fact.id, outcome=outcome, correction=correction)
    assert q_of(store, fact.id) == pytest.approx(expected, abs=1e-12)


def test_successive_outcomes_compound_and_the_rate_is_configurable(
    store: InMemoryStore, clock: FixedClock
) -> None:
    """Two useful outcomes: 0.5 -> 0.55 -> 0.595; at rate 0.5 one dead end: 0.5 -> 0.0."""
    good, bad = put(store, make_memory(TESTS_FACT), make_memory("Lint with flake8"))
    gateway = teaching(store, clock)
    gateway.record_outcome(memory_id=good.id, outcome="useful")
    gateway.record_outcome(memory_id=good.id, outcome="useful")
    assert q_of(store, good.id) == pytest.approx(0.595, abs=1e-12)
    teaching(store, clock, LearningConfig(learning_rate=0.5)).record_outcome(
        memory_id=bad.id, outcome="dead_end"
    )
    assert q_of(store, bad.id) == 0.0


def test_configured_rewards_replace_the_defaults(store: InMemoryStore, clock: FixedClock) -> None:
    """``learning.outcomeRewards.*`` set the rewards: useful 0.5 leaves a neutral memory at 0.5,
    corrected -1 takes it to 0.35."""
    settings = config_mod.parse(
        {"learning": {"outcomeRewards": {"useful": 0.5, "corrected": -1}}}
    ).learning
    assert (settings.useful_reward, settings.dead_end_reward, settings.corrected_reward) == (
        0.5,
        -1.0,
        -1.0,
    )
    useful, corrected = put(store, make_memory(TESTS_FACT), make_memory("Lint with flake8"))
    gateway = teaching(store, clock, settings)
    gateway.record_outcome(memory_id=useful.id, outcome="useful")
    gateway.record_outcome(memory_id=corrected.id, outcome="corrected", correction="Use ruff.")
    assert q_of(store, useful.id) == 0.5
    assert q_of(store, corrected.id) == pytest.approx(0.35)


def test_the_reward_event_records_the_outcome(store: InMemoryStore, clock: FixedClock) -> None:
    """One reward event per outcome: label ``OUTCOME:<outcome>``, the reward, both Q values, the
    outcome's time, run (the session) and unit, and its event id as the idempotency key."""
    (fact,) = put(store, make_memory(TESTS_FACT))
    clock.advance(minutes=3)
    gateway = teaching(store, clock, unit_id="unit-7")
    result = gateway.record_outcome(memory_id=fact.id, outcome="dead_end", event_id="tool-1")
    (event,) = store.list_reward_events()
    assert event.memory_id == fact.id
    assert event.verdict == outcome_label("dead_end") == "OUTCOME:dead_end"
    assert event.reward == -1.0
    assert (event.q_before, event.q_after) == (0.5, pytest.approx(0.35))
    assert event.timestamp == at(3)
    assert (event.run_id, event.unit_id) == ("sess-1", "unit-7")
    (outcome,) = store.list_outcomes(fact.id)
    assert event.verdict_synthesis == {
        "source": "outcome",
        "outcomeEventId": "tool-1",
        "outcome": "dead_end",
        "generation": outcome.generation,
    }
    # the outcome's own result keeps its documented keys (the MCP output schema lists them)
    assert set(result) == {"success", "outcome_recorded", "event_id", "memory_id", "outcome",
                           "outcomes"}  # fmt: skip


def test_content_stability_and_timestamps_are_not_changed(
    store: InMemoryStore, clock: FixedClock
) -> None:
    """Only ``metadata.qValue`` changes (besides the outcome bookkeeping every outcome adds)."""
    (fact,) = put(store, make_memory(TESTS_FACT))
    clock.advance(minutes=9)
    teaching(store, clock).record_outcome(memory_id=fact.id, outcome="useful")
    after = store.get(fact.id)
    assert after is not None
    assert (after.text, after.stability, after.updated_at, after.confidence) == (
        fact.text,
        fact.stability,
        fact.updated_at,
        fact.confidence,
    )
    bookkeeping = {"outcomeGeneration", "outcomeEventIds"}
    assert set(after.metadata) - set(fact.metadata) - bookkeeping == {"qValue"}


# ------------------------------------------------------------------- outcomes: idempotency


def test_a_retried_outcome_moves_q_once(store: InMemoryStore, clock: FixedClock) -> None:
    """The same event id sent twice (an MCP retry) stores one outcome and one EMA step; the
    learner answers ``already_applied`` with the first step's values."""
    (fact,) = put(store, make_memory(TESTS_FACT))
    gateway = teaching(store, clock)
    gateway.record_outcome(memory_id=fact.id, outcome="useful", event_id="tool-1")
    clock.advance(minutes=1)
    again = gateway.record_outcome(memory_id=fact.id, outcome="useful", event_id="tool-1")
    assert again["outcomes"] == 1
    assert len(store.list_reward_events()) == 1
    assert q_of(store, fact.id) == pytest.approx(0.55)
    (event,) = store.list_outcomes(fact.id)
    replay = apply_outcome(store, event, scope_keys=SCOPE_KEYS)
    assert replay.status == STATUS_ALREADY_APPLIED
    assert (replay.update.q_before, replay.update.q_after) == (0.5, pytest.approx(0.55))
    assert q_of(store, fact.id) == pytest.approx(0.55)


def test_a_conflicting_retry_is_refused_and_teaches_nothing(
    store: InMemoryStore, clock: FixedClock
) -> None:
    """The same event id with another outcome is a conflict: no second reward."""
    (fact,) = put(store, make_memory(TESTS_FACT))
    gateway = teaching(store, clock)
    gateway.record_outcome(memory_id=fact.id, outcome="useful", event_id="tool-1")
    with pytest.raises(ConflictError, match="different payload"):
        gateway.record_outcome(memory_id=fact.id, outcome="dead_end", event_id="tool-1")
    assert len(store.list_reward_events()) == 1
    assert q_of(store, fact.id) == pytest.approx(0.55)


def test_the_outcome_and_its_reward_commit_together(
    store: InMemoryStore, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failure while teaching rolls the outcome event back too (one transaction)."""
    (fact,) = put(store, make_memory(TESTS_FACT))

    def broken(event: Any) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(store, "append_reward_event", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        teaching(store, clock).record_outcome(memory_id=fact.id, outcome="useful")
    assert store.list_outcomes(fact.id) == []
    assert q_of(store, fact.id) == 0.5


# ------------------------------------------------------------------- outcomes: what teaches


def test_question_outcomes_teach_nothing(tmp_path: Path) -> None:
    """A question outcome creates its evidence record and event but no reward, and an outcome
    aimed at that evidence record by id teaches nothing either."""
    with swarmmem.open(tmp_path, config={"enabled": True}, context={"session_id": "s"}) as mem:
        result = mem.record_outcome(question="Which test runner is current?", outcome="useful")
        mem.record_outcome(memory_id=result["memory_id"], outcome="dead_end")
        assert len(mem.store.list_outcomes(result["memory_id"])) == 2
        assert mem.store.list_reward_events() == []
        assert q_of(mem.store, result["memory_id"]) == 0.5
        first = mem.store.list_outcomes(result["memory_id"])[0]
        keys = {s.key for s in mem.runtime.allowed_scopes}
        assert apply_outcome(mem.store, first, scope_keys=keys).status == STATUS_QUESTION


def test_outcomes_teach_nothing_when_disabled(store: InMemoryStore, clock: FixedClock) -> None:
    """``learning.outcomesTeach: false``: the outcome is recorded, Q stays 0.5."""
    settings = config_mod.parse({"learning": {"outcomesTeach": False}}).learning
    assert settings.outcomes_teach is False
    (fact,) = put(store, make_memory(TESTS_FACT))
    teaching(store, clock, settings).record_outcome(memory_id=fact.id, outcome="dead_end")
    assert len(store.list_outcomes(fact.id)) == 1
    assert store.list_reward_events() == []
    assert q_of(store, fact.id) == 0.5
    (event,) = store.list_outcomes(fact.id)
    assert apply_outcome(store, event, scope_keys=SCOPE_KEYS, policy=settings).status == (
        STATUS_DISABLED
    )


def test_memories_outside_the_contexts_scopes_are_not_taught(
    store: InMemoryStore, clock: FixedClock
) -> None:
    """A memory of another repository keeps its value whatever this context reports."""
    (foreign,) = put(store, make_memory(TESTS_FACT, scope=OTHER_SCOPE))
    with pytest.raises(NotFoundError):  # recording is refused: a foreign id reads as unknown
        teaching(store, clock).record_outcome(memory_id=foreign.id, outcome="dead_end")
    assert store.list_outcomes(foreign.id) == [] and store.list_reward_events() == []
    assert q_of(store, foreign.id) == 0.5
    event = outcome_event("evt-1", foreign.id, "gen-1", outcome="dead_end")
    assert apply_outcome(store, event, scope_keys=SCOPE_KEYS).status == STATUS_OUT_OF_SCOPE
    assert apply_outcome(store, event, scope_keys={OTHER_SCOPE.key}).status == STATUS_APPLIED


def test_deleted_or_missing_memories_are_not_taught(store: InMemoryStore) -> None:
    """An outcome event of a deleted (or vanished) memory changes no value."""
    (gone,) = put(store, make_memory(TESTS_FACT, metadata={"deleted": True}))
    for memory_id in (gone.id, "mem_0123456789abcdef"):
        event = outcome_event("evt-1", memory_id, "gen-1", outcome="dead_end")
        assert apply_outcome(store, event, scope_keys=SCOPE_KEYS).status == STATUS_INACTIVE
    assert store.list_reward_events() == []


def test_outcome_rewards_do_not_propagate(store: InMemoryStore, clock: FixedClock) -> None:
    """A recently recalled near-duplicate (Jaccard above 0.4, same kind) keeps 0.5: an outcome
    judges only the memory it names."""
    fact, twin = put(store, make_memory(TESTS_FACT), make_memory(TESTS_TWIN))
    store.record_recall_usage(recall_row([twin.id], timestamp=at(0)))
    teaching(store, clock).record_outcome(memory_id=fact.id, outcome="useful")
    assert q_of(store, twin.id) == 0.5
    assert [e.memory_id for e in store.list_reward_events()] == [fact.id]


# ------------------------------------------------------------------- outcomes: what follows


def test_three_dead_ends_suppress_a_memory_and_useful_outcomes_rank_one_higher(
    store: InMemoryStore, clock: FixedClock
) -> None:
    """0.5 -> 0.35 -> 0.215 -> 0.0935 falls below 0.15, so default recall hides the memory;
    useful outcomes lift its twin above an otherwise equal memory."""
    bad, good, plain = put(
        store,
        make_memory("Lint the code with flake8 before pushing"),
        make_memory("Deploy the service with the release script", tags=()),
        make_memory("Deploy the service with the release tool", tags=()),
    )
    gateway = teaching(store, clock)
    for _ in range(3):
        gateway.record_outcome(memory_id=bad.id, outcome="dead_end")
    assert q_of(store, bad.id) == pytest.approx(0.0935)
    clock.advance(minutes=1)
    assert bad.id not in [i.record.id for i in gateway.recall("lint the code").items]
    assert gateway.recall("lint the code", include_low_q=True).items[0].record.id == bad.id
    before = [i.record.id for i in gateway.recall("deploy the service release").items]
    gateway.record_outcome(memory_id=before[-1], outcome="useful")
    after = [i.record.id for i in gateway.recall("deploy the service release").items]
    assert set(before) == {good.id, plain.id}
    assert after == [before[-1], before[0]]


def test_value_log_lists_outcome_rewards_with_their_source(
    store: InMemoryStore, clock: FixedClock
) -> None:
    """value-log shows the outcome reward (source ``outcome``) beside verdict rewards."""
    (fact,) = put(store, make_memory(TESTS_FACT))
    teaching(store, clock).record_outcome(memory_id=fact.id, outcome="useful")
    report = value_log_report(store, now=at(10))
    (entry,) = report.memories
    assert entry["id"] == fact.id and entry["q"] == pytest.approx(0.55)
    (recent,) = entry["recent"]
    assert recent["source"] == "outcome"
    assert recent["verdict"] == "OUTCOME:useful"
    assert (recent["q_before"], recent["q_after"]) == (0.5, pytest.approx(0.55))


@pytest.mark.parametrize("kind", ["local-jsonl", "sqlite"])
def test_outcome_rewards_survive_a_reopen(kind: str, tmp_path: Path, clock: FixedClock) -> None:
    """The reward event keeps the reference shape on disk: a reopened store lists it with its
    source, and the learned Q value is stored with the memory."""
    store = open_store(kind, tmp_path, clock)
    (fact,) = put(store, make_memory(TESTS_FACT))
    teaching(store, clock).record_outcome(memory_id=fact.id, outcome="dead_end")
    store.close()
    reopened = open_store(kind, tmp_path, clock)
    try:
        assert q_of(reopened, fact.id) == pytest.approx(0.35)
        (event,) = reopened.list_reward_events()
        assert event.verdict == "OUTCOME:dead_end"
        assert value_log_report(reopened, now=at(10)).memories[0]["recent"][0]["source"] == (
            "outcome"
        )
    finally:
        reopened.close()


# ------------------------------------------------------------------- outcomes: configuration


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ({"outcomesTeach": "yes"}, "memory.learning.outcomesTeach"),
        ({"outcomeRewards": {"useful": 1.5}}, "memory.learning.outcomeRewards.useful"),
        ({"outcomeRewards": {"deadEnd": -2}}, "memory.learning.outcomeRewards.deadEnd"),
        ({"outcomeRewards": {"dead_end": -2}}, "memory.learning.outcomeRewards.dead_end"),
        ({"outcomeRewards": {"corrected": "low"}}, "memory.learning.outcomeRewards.corrected"),
        ({"outcomeRewards": {"useful": float("nan")}}, "memory.learning.outcomeRewards.useful"),
        ({"outcomeRewards": 1}, "memory.learning.outcomeRewards"),
        ({"outcomeRewards": {"great": 1}}, "memory.learning.outcomeRewards.great"),
    ],
)
def test_bad_outcome_settings_name_the_key(section: dict[str, Any], key: str) -> None:
    """Out-of-range, mistyped and unknown values are refused, naming the dotted key."""
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        config_mod.validate({"learning": section})


# ------------------------------------------------------------------- outcomes: the facade


def test_the_facade_teaches_by_default_and_not_when_disabled(tmp_path: Path) -> None:
    """swarmmem.open wires the learner with the context's scopes; outcomesTeach false keeps
    the value."""
    for teach, expected in ((True, 0.35), (False, 0.5)):
        root = tmp_path / f"teach-{teach}"
        root.mkdir()
        config = {"enabled": True, "learning": {"outcomesTeach": teach}}
        with swarmmem.open(root, config=config, context={"session_id": "s-1"}) as mem:
            mem.import_records([{"kind": "project_fact", "text": TESTS_FACT}])
            (record,) = mem.store.list(ListFilter(now=at(days=400)))
            mem.record_outcome(memory_id=record.id, outcome="dead_end")
            assert q_of(mem.store, record.id) == pytest.approx(expected)
            rewards = [m["recent"][0]["source"] for m in mem.value_log().memories]
            assert rewards == (["outcome"] if teach else [])

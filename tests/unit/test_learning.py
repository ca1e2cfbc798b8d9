"""Recall learning: EMA rewards, verdict targeting, idempotency, propagation and candidates."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs
import pytest
from factories import BASE_TIME, REPO_SCOPE, at, learning_gateway, make_memory, recall_row

from swarmmem import config as config_mod
from swarmmem.adapters.storage.memory import InMemoryStore
from swarmmem.core.learning.rewards import (
    REWARDS,
    STATUS_ALREADY_APPLIED,
    STATUS_APPLIED,
    STATUS_NO_USAGE,
    LearningSettings,
    SessionRegistry,
    VerdictResult,
    apply_verdict,
    clamp01,
    cosine,
    ema,
    low_q_memories,
    promotion_candidates,
    propagated_signal,
    recall_counts,
)
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.events import RewardEvent
from swarmmem.core.model.records import MemoryRecord, MemoryScope
from swarmmem.core.recall.scoring import LearningPolicy
from swarmmem.core.recall.service import RecallDefaults
from swarmmem.ports.clock import FixedClock

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
    section = config_mod.validate(
        {"learning": {"learningRate": 0.2, "propagationFanout": 3, "propagationLookbackDays": 7}}
    )["learning"]
    settings = LearningSettings.from_config(section)
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
    assert result.as_dict()["success"] is False
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
    result = verdict(store, policy=LearningSettings(fanout=2))
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
    result = verdict(store, now=now, policy=LearningSettings(lookback_days=30))
    assert [u.memory_id for u in result.propagated] == [fresh.id]
    assert q_of(store, stale.id) == 0.5


@pytest.mark.parametrize(
    "settings",
    [
        LearningSettings(propagation_factor=0),
        LearningSettings(fanout=0),
        LearningSettings(lookback_days=0),
    ],
)
def test_zero_factor_fanout_or_lookback_disables_propagation(
    store: InMemoryStore, settings: LearningSettings
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
    result = verdict(store, policy=LearningSettings(token_overlap_threshold=0.5))
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
    assert RecallDefaults().learning.exploration_rate == 0
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

"""The ledger entries (recall usage, outcome and reward events): validation and JSON shape."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from factories import REPO_SCOPE, at, outcome_event

from swarmmem.core.model.codec import (
    outcome_event_from_dict,
    outcome_event_to_dict,
    recall_usage_from_dict,
    recall_usage_to_dict,
    reward_event_from_dict,
    reward_event_to_dict,
)
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.events import OutcomeEvent, RecallUsage, RewardEvent
from swarmmem.core.model.records import MAX_ANCHORS, Anchor, OutcomeEntry
from swarmmem.core.model.semantics import dumps

# The shapes as they are stored (JSONL lines, ``*_json`` columns, export files), key order too.
USAGE_JSON = (
    '{"bundleId":"bundle_1","query":"how are tests run",'
    '"scopes":[{"type":"repository","repoId":"swarmmem-tests"}],"kinds":[],'
    '"memoryIds":["mem_a","mem_b"],"scores":[0.75,0.5],"tokenEstimate":42,"agentRole":null,'
    '"runId":"s1","sessionId":"s1","unitId":null,"timestamp":"2026-01-01T00:00:00.000Z"}'
)
# as the reference writes it: no sessionId, no agentRole or unitId when they are unset
REFERENCE_USAGE_JSON = (
    '{"bundleId":"bundle_2","query":"lint","scopes":[],"kinds":["repo_convention"],'
    '"memoryIds":[],"scores":[],"tokenEstimate":0,"runId":"r1",'
    '"timestamp":"2026-01-01T00:01:00.000Z"}'
)
OUTCOME_JSON = (
    '{"id":"ev-1","memoryId":"mem_a","generation":"g1","outcome":{"outcome":"corrected",'
    '"at":"2026-01-01T00:01:00.000Z","taskId":"unit-3","correction":"use uv"},'
    '"anchors":[{"file":"src/app.py","symbol":"main"},{"file":"README.md"}]}'
)
REWARD_JSON = (
    '{"id":"rw-1","memoryId":"mem_a","runId":"run-1","unitId":"unit-3","verdict":"APPROVE",'
    '"reward":1.0,"qBefore":0.5,"qAfter":0.55,"verdictSynthesis":{"rewardKey":"s:t:1",'
    '"votes":[1,2]},"timestamp":"2026-01-01T00:02:00.000Z"}'
)


def parsed(text: str) -> Any:
    return json.loads(text)


def make_usage(**changes: Any) -> RecallUsage:
    return RecallUsage(**{"bundle_id": "b", "timestamp": at(0), **changes})


def make_reward(**changes: Any) -> RewardEvent:
    return RewardEvent(**{"memory_id": "m", "verdict": "APPROVE", "reward": 1.0, **changes})


def make_outcome(**changes: Any) -> OutcomeEvent:
    entry = OutcomeEntry(outcome="useful", at=at(0))
    return OutcomeEvent(
        **{"id": "e", "memory_id": "m", "generation": "g", "outcome": entry, **changes}
    )


# ----------------------------------------------------------------------------- JSON shape


@pytest.mark.parametrize("text", [USAGE_JSON, REFERENCE_USAGE_JSON])
def test_recall_usage_round_trips_byte_for_byte(text: str) -> None:
    """Our usage rows and the reference's (which lack keys) are written back unchanged."""
    usage = recall_usage_from_dict(parsed(text))
    assert dumps(recall_usage_to_dict(usage)) == text


def test_recall_usage_fields_read_from_json() -> None:
    """The JSON keys land on their fields; absent keys are remembered as omitted."""
    usage = recall_usage_from_dict(parsed(USAGE_JSON))
    assert usage == RecallUsage(
        bundle_id="bundle_1",
        query="how are tests run",
        scopes=(REPO_SCOPE,),
        kinds=(),
        memory_ids=("mem_a", "mem_b"),
        scores=(0.75, 0.5),
        token_estimate=42,
        run_id="s1",
        session_id="s1",
        timestamp=at(0),
    )
    reference = recall_usage_from_dict(parsed(REFERENCE_USAGE_JSON))
    assert reference.omitted == {"agent_role", "session_id", "unit_id"}
    assert reference.session_id is None


def test_recall_usage_keeps_unknown_keys_and_fills_the_timestamp() -> None:
    """Unknown keys survive (after the known ones); a missing timestamp comes from
    ``generatedAt``, else from ``now``."""
    raw = {"bundleId": "b", "generatedAt": at(3), "custom": {"n": [1]}}
    usage = recall_usage_from_dict(raw, now=at(9))
    assert usage.timestamp == at(3) and usage.extra == {"generatedAt": at(3), "custom": {"n": [1]}}
    assert list(recall_usage_to_dict(usage)) == ["bundleId", "timestamp", "generatedAt", "custom"]
    assert recall_usage_from_dict({"bundleId": "b"}, now=at(9)).timestamp == at(9)


def test_a_recorded_usage_writes_every_key() -> None:
    """A usage built here has the full shape: unset fields are null, none omitted."""
    data = recall_usage_to_dict(make_usage(memory_ids=["mem_a"], session_id="s1"))
    assert list(data) == [
        "bundleId",
        "query",
        "scopes",
        "kinds",
        "memoryIds",
        "scores",
        "tokenEstimate",
        "agentRole",
        "runId",
        "sessionId",
        "unitId",
        "timestamp",
    ]
    assert data["agentRole"] is None and data["memoryIds"] == ["mem_a"]


def test_outcome_event_round_trips_byte_for_byte() -> None:
    """An outcome event is written back exactly as stored."""
    event = outcome_event_from_dict(parsed(OUTCOME_JSON))
    assert event == outcome_event(
        "ev-1",
        "mem_a",
        "g1",
        outcome="corrected",
        at=at(1),
        task_id="unit-3",
        correction="use uv",
        anchors=[Anchor(file="src/app.py", symbol="main"), Anchor(file="README.md")],
    )
    assert dumps(outcome_event_to_dict(event)) == OUTCOME_JSON


def test_outcome_event_without_anchors_is_written_with_an_empty_list() -> None:
    """``anchors`` may be absent or null on input; it is always written."""
    raw = {"id": "e", "memoryId": "m", "generation": "g", "outcome": {"outcome": "useful"}}
    raw["outcome"]["at"] = at(0)
    for anchors in ({}, {"anchors": None}):
        event = outcome_event_from_dict({**raw, **anchors})
        assert outcome_event_to_dict(event) == {**raw, "anchors": []}


def test_reward_event_round_trips_byte_for_byte() -> None:
    """A reward event is written back exactly as stored; unset fields stay absent."""
    event = reward_event_from_dict(parsed(REWARD_JSON))
    assert event.verdict_synthesis == {"rewardKey": "s:t:1", "votes": [1, 2]}
    assert dumps(reward_event_to_dict(event)) == REWARD_JSON
    bare = RewardEvent(id="rw-2", memory_id="m", verdict="REJECT", reward=-1, timestamp=at(0))
    assert dumps(reward_event_to_dict(bare)) == (
        '{"id":"rw-2","memoryId":"m","verdict":"REJECT","reward":-1.0,'
        '"timestamp":"2026-01-01T00:00:00.000Z"}'
    )


def test_reward_event_defaults() -> None:
    """Numbers become floats, tuples lists; the id defaults to a fresh UUID, the time to None."""
    one = RewardEvent(memory_id="m", verdict="APPROVE", reward=1, verdict_synthesis={"v": (1,)})
    two = RewardEvent(memory_id="m", verdict="APPROVE", reward=1)
    assert isinstance(one.reward, float) and one.verdict_synthesis == {"v": [1]}
    assert one.id != two.id and one.timestamp is None
    assert reward_event_from_dict({"memoryId": "m", "verdict": "APPROVE", "reward": 1}).id


# ----------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: make_usage(bundle_id=""), "bundle_id"),
        (lambda: make_usage(timestamp=None), "timestamp"),
        (lambda: make_usage(memory_ids=["mem_a", 7]), "memory_ids"),
        (lambda: make_usage(memory_ids="mem_a"), "memory_ids"),
        (lambda: make_usage(scores=[0.5, True]), "scores"),
        (lambda: make_usage(scopes=[{"type": "repository"}]), "scopes"),
        (lambda: make_usage(kinds=[None]), "kinds"),
        (lambda: make_usage(token_estimate="12"), "token_estimate"),
        (lambda: make_usage(session_id=3), "session_id"),
        (lambda: make_usage(extra=[1]), "extra"),
        (lambda: make_usage(extra={"x": {1, 2}}), "extra"),
        (lambda: make_usage(omitted={"bundle_id"}), "omitted"),
        (lambda: make_usage(omitted={"nothing"}), "omitted"),
        (lambda: make_outcome(id=""), "id"),
        (lambda: make_outcome(memory_id="m" * 257), "memory_id"),
        (lambda: make_outcome(generation=None), "generation"),
        (lambda: make_outcome(outcome={"outcome": "useful", "at": at(0)}), "outcome"),
        (lambda: make_outcome(anchors=[{"file": "a.py"}]), "anchors"),
        (lambda: make_outcome(anchors=[Anchor(file="a.py")] * (MAX_ANCHORS + 1)), "anchors"),
        (lambda: make_reward(memory_id=""), "memory_id"),
        (lambda: make_reward(verdict="V" * 10_001), "verdict"),
        (lambda: make_reward(reward="1"), "reward"),
        (lambda: make_reward(reward=True), "reward"),
        (lambda: make_reward(q_before=math.nan), "q_before"),
        (lambda: make_reward(q_after=math.inf), "q_after"),
        (lambda: make_reward(run_id=1), "run_id"),
        (lambda: make_reward(id=""), "id"),
        (lambda: make_reward(timestamp=""), "timestamp"),
        (lambda: make_reward(verdict_synthesis={"s": {1}}), "verdict_synthesis"),
    ],
)
def test_a_bad_value_is_refused_naming_its_field(build: Any, field: str) -> None:
    """Each validator raises MemoryValidationError whose message starts with the field name."""
    with pytest.raises(MemoryValidationError, match=f"^{field}: "):
        build()


@pytest.mark.parametrize(
    ("parse", "data", "message"),
    [
        (recall_usage_from_dict, ["bundleId"], "recall usage must be an object"),
        (recall_usage_from_dict, {"memoryIds": []}, "bundle_id: is required"),
        (outcome_event_from_dict, {"id": "e", "extra": 1}, "unknown key.*extra"),
        (outcome_event_from_dict, {"id": "e", "memoryId": "m", "generation": "g"}, "outcome"),
        (reward_event_from_dict, {"memoryId": "m", "x": 1}, "unknown key.*x"),
        (reward_event_from_dict, {"memoryId": "m", "verdict": "V"}, "reward: "),
        (reward_event_from_dict, {"id": None, "memoryId": "m"}, "id must not be null"),
        (reward_event_from_dict, {"timestamp": None, "memoryId": "m"}, "timestamp must not"),
    ],
)
def test_bad_json_is_refused_with_a_clear_message(parse: Any, data: Any, message: str) -> None:
    """Parsing refuses what the ledgers never stored, naming the key or field."""
    with pytest.raises(MemoryValidationError, match=message):
        parse(data)


def test_extra_may_not_shadow_a_known_key() -> None:
    """An ``extra`` key that is a known JSON key would write the key twice: refused."""
    with pytest.raises(MemoryValidationError, match="bundleId"):
        recall_usage_to_dict(make_usage(extra={"bundleId": "other"}))


def test_usage_filter_matches_run_and_inclusive_since() -> None:
    """``matches`` is the ``list_recall_usage`` filter."""
    row = make_usage(run_id="r1", timestamp=at(2))
    assert row.matches(None, None) and row.matches("r1", at(2))
    assert not row.matches("r2", None) and not row.matches(None, at(3))

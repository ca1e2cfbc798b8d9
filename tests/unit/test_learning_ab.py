"""Offline A/B: recall precision with the learning loop on versus off.

Four topics, each with two memories that served agents well (APPROVE verdicts, useful
outcomes) and two that misled them (REJECT verdicts, dead ends). The misleading ones are
lexically the closest to the topic query, so a recall that ignores learned values ranks
them first. Every arm runs the same recalls and outcomes through the gateway; the "on" arm
applies the verdicts, the "outcomes" arm lets only the explicit outcomes teach (as the facade
does by default), and the "off" arm learns nothing. Precision@k uses the evaluator's metric
helper.
"""

from __future__ import annotations

import datetime as dt

import pytest
from factories import learning_gateway

from swarmmem.adapters.storage.memory import InMemoryStore
from swarmmem.core.evaluation.metrics import Fixture, parse_fixture, run_metrics
from swarmmem.core.learning.reflection import build_digest
from swarmmem.core.learning.rewards import LearningConfig, apply_verdict
from swarmmem.core.model.ids import to_iso
from swarmmem.core.model.records import MemoryScope
from swarmmem.ports.clock import FixedClock
from swarmmem.ports.storage import ListFilter

SCOPE = {"type": "repository", "repoId": "ab-repo"}
START = dt.datetime(2026, 6, 1, tzinfo=dt.timezone.utc)
K = 2

#: topic -> the query that should recall the memories that helped with it
QUERIES: dict[str, str] = {
    "tests": "run the test suite locally",
    "format": "format the python code",
    "migrations": "create a database migration",
    "logs": "where are the application logs",
}
#: label -> text of the memory
TEXTS: dict[str, str] = {
    "t-pytest": "Run pytest -q from the repository root for the unit tests",
    "t-tox": "The tox environments run the test matrix before a release",
    "t-nose": "Run the test suite locally with nosetests",
    "t-make": "Run the whole test suite locally through make check",
    "f-ruff": "Format Python code with ruff format before committing",
    "f-pre": "pre-commit hooks format the code automatically",
    "f-black": "Format the python code with black",
    "f-yapf": "To format the python code use yapf",
    "d-alembic": "Create a database migration with alembic revision --autogenerate",
    "d-review": "Every database migration is reviewed by the data team",
    "d-manual": "Create a database migration by editing schema.sql by hand",
    "d-old": "To create a database migration run the legacy migrate.py script",
    "l-path": "Application logs are written to var/log/app.log",
    "l-json": "The application logs are JSON lines",
    "l-stdout": "Where are the application logs? They go to stdout only",
    "l-syslog": "The application logs are in syslog",
}
#: label -> (topic, helped agents?, probe query that pinpoints it, verdict per training
#: round: A(PPROVE), R(EJECT), C(ONCERNS) or - for none)
PLANS: dict[str, tuple[str, bool, str, str]] = {
    "t-pytest": ("tests", True, "pytest", "AAA"),
    "t-tox": ("tests", True, "tox environments", "AAC"),
    "t-nose": ("tests", False, "nosetests", "RRR"),
    "t-make": ("tests", False, "make check", "RRR"),
    "f-ruff": ("format", True, "ruff", "AAA"),
    "f-pre": ("format", True, "pre-commit hooks", "ACA"),
    "f-black": ("format", False, "black", "RRR"),
    "f-yapf": ("format", False, "yapf", "R--"),
    "d-alembic": ("migrations", True, "alembic", "AAA"),
    "d-review": ("migrations", True, "reviewed data team", "AA-"),
    "d-manual": ("migrations", False, "schema.sql by hand", "RRR"),
    "d-old": ("migrations", False, "legacy migrate.py script", "RRR"),
    "l-path": ("logs", True, "var/log/app.log", "AAA"),
    "l-json": ("logs", True, "JSON lines", "AAA"),
    "l-stdout": ("logs", False, "stdout only", "RRR"),
    "l-syslog": ("logs", False, "syslog", "RR-"),
}
VERDICTS = {"A": "APPROVE", "R": "REJECT", "C": "CONCERNS", "-": None}


def labels_of(topic: str, helped: bool) -> list[str]:
    """The labels of ``topic`` whose memories helped (or misled) agents, in table order."""
    return [label for label, (t, good, _, _) in PLANS.items() if t == topic and good == helped]


def fixtures() -> list[Fixture]:
    """One evaluator fixture per topic; the expected labels are the memories that helped."""
    out = []
    for name, query in QUERIES.items():
        records = [
            {"label": label, "scope": SCOPE, "kind": "repo_convention", "text": TEXTS[label]}
            for label in labels_of(name, True) + labels_of(name, False)
        ]
        document = {
            "name": f"ab-{name}",
            "query": query,
            "scopes": [SCOPE],
            "k": K,
            "expectedLabels": labels_of(name, True),
            "records": records,
        }
        out.append(parse_fixture(document, source=f"ab-{name}"))
    return out


def run_arm(
    learning: bool, settings: LearningConfig | None = None, *, outcomes: bool = False
) -> tuple[float, dict[str, float], InMemoryStore, str]:
    """Train through the gateway (verdicts when ``learning``, outcome rewards when
    ``outcomes``) and measure precision@k."""
    clock = FixedClock(START)
    store = InMemoryStore(clock=clock)
    scope = MemoryScope(type="repository", repo_id="ab-repo")
    parsed = fixtures()
    ids: dict[str, str] = {}
    for fixture in parsed:
        for record in fixture.records:
            store.upsert(record)
            ids[fixture.labels[record.id]] = record.id
    for round_number in range(3):
        for label in sorted(PLANS):
            _topic, helped, probe, plan = PLANS[label]
            session = f"{label}-round-{round_number}"
            clock.advance(minutes=5)
            gateway = learning_gateway(
                store,
                clock,
                session_id=session,
                scope=scope,
                outcomes=(settings or LearningConfig()) if outcomes else None,
            )
            bundle = gateway.recall(probe, max_items=1, include_low_q=True)
            assert [i.record.id for i in bundle.items] == [ids[label]], label
            gateway.record_outcome(memory_id=ids[label], outcome="useful" if helped else "dead_end")
            verdict = VERDICTS[plan[round_number]]
            if learning and verdict is not None:
                clock.advance(minutes=1)
                apply_verdict(
                    store,
                    verdict=verdict,
                    host_session_id=session,
                    swarm_id="ab",
                    task_or_phase=label,
                    round_number=round_number,
                    now=to_iso(clock.now()),
                    policy=settings or LearningConfig(),
                )
    clock.advance(minutes=5)
    now = to_iso(clock.now())
    evaluator = learning_gateway(store, clock, session_id="evaluation", scope=scope)
    per_topic: dict[str, float] = {}
    for fixture in parsed:
        bundle = evaluator.recall(fixture.data["query"], max_items=K)
        retrieved = [item.record.id for item in bundle.items]
        per_topic[fixture.name] = run_metrics(fixture, retrieved, K, "manual", now)["precision@k"]
    mean = sum(per_topic.values()) / len(per_topic)
    return mean, per_topic, store, now


@pytest.fixture(scope="module")
def arms() -> dict[str, tuple[float, dict[str, float], InMemoryStore, str]]:
    """The arms, computed once."""
    return {"off": run_arm(False), "on": run_arm(True), "outcomes": run_arm(False, outcomes=True)}


def test_learning_on_beats_learning_off_on_precision_at_k(
    arms: dict[str, tuple[float, dict[str, float], InMemoryStore, str]],
) -> None:
    """Mean precision@2 with learned values beats the lexical-only ranking by a wide margin."""
    off, on = arms["off"][0], arms["on"][0]
    assert on > off
    assert on - off >= 0.5
    assert all(arms["on"][1][t] >= arms["off"][1][t] for t in arms["on"][1])


def test_learning_without_propagation_also_beats_learning_off(
    arms: dict[str, tuple[float, dict[str, float], InMemoryStore, str]],
) -> None:
    """Direct rewards alone also beat learning off, at least as well as with propagation."""
    # Propagation nudges lexically near-duplicate good and bad memories toward each other.
    direct_only = run_arm(True, LearningConfig(propagation_factor=0))[0]
    assert direct_only > arms["off"][0]
    assert direct_only >= arms["on"][0]


def test_learning_off_arm_keeps_neutral_values(
    arms: dict[str, tuple[float, dict[str, float], InMemoryStore, str]],
) -> None:
    """Without verdicts every memory keeps q = 0.5 and no reward event exists."""
    _mean, _topics, store, now = arms["off"]
    assert store.list_reward_events() == []
    assert {r.q for r in store.list(ListFilter(now=now))} == {0.5}


def test_learned_values_separate_helpful_from_misleading(
    arms: dict[str, tuple[float, dict[str, float], InMemoryStore, str]],
) -> None:
    """Every helpful memory ends above 0.5 and every misleading one below it."""
    _mean, _topics, store, now = arms["on"]
    by_label = {r.metadata["fixtureLabel"]: r.q for r in store.list(ListFilter(now=now))}
    for topic in QUERIES:
        assert all(by_label[label] > 0.5 for label in labels_of(topic, True))
        assert all(by_label[label] < 0.5 for label in labels_of(topic, False))


def test_outcomes_feed_the_reflection_digest(
    arms: dict[str, tuple[float, dict[str, float], InMemoryStore, str]],
) -> None:
    """Useful outcomes make helpful memories preferred; dead ends list misleading ones."""
    _mean, _topics, store, now = arms["on"]
    records = store.list(ListFilter(now=now))
    labels = {r.id: r.metadata["fixtureLabel"] for r in records}
    digest = build_digest(records, now=now, anchor_alive=lambda file: True)
    preferred = {labels[i["memoryId"]] for i in digest["preferred"]}
    dead = {labels[i["memoryId"]] for i in digest["deadEnds"]}
    assert preferred == {label for t in QUERIES for label in labels_of(t, True)}
    assert dead == {label for t in QUERIES for label in labels_of(t, False)}


def test_outcome_learning_beats_learning_off_on_precision_at_k(
    arms: dict[str, tuple[float, dict[str, float], InMemoryStore, str]],
) -> None:
    """Explicit outcomes alone (no verdicts) lift mean precision@2 from 0.375 to 1.0."""
    off, taught = arms["off"], arms["outcomes"]
    assert taught[0] > off[0]
    assert taught[0] - off[0] >= 0.5
    assert all(taught[1][t] >= off[1][t] for t in taught[1])
    assert (off[0], taught[0]) == (0.375, 1.0)


def test_outcome_arm_learns_one_reward_per_outcome(
    arms: dict[str, tuple[float, dict[str, float], InMemoryStore, str]],
) -> None:
    """Three useful outcomes take a memory to 0.6355, three dead ends to 0.0935 (suppressed);
    every reward event is an outcome's, one per outcome (16 memories x 3 rounds)."""
    _mean, _topics, store, now = arms["outcomes"]
    events = store.list_reward_events()
    assert len(events) == 3 * len(PLANS)
    assert {e.verdict_synthesis["source"] for e in events} == {"outcome"}
    by_label = {r.metadata["fixtureLabel"]: r.q for r in store.list(ListFilter(now=now))}
    for label, (_topic, helped, _probe, _plan) in PLANS.items():
        assert by_label[label] == pytest.approx(0.6355 if helped else 0.0935), label


def test_a_zero_dead_end_reward_would_not_reorder_the_topics() -> None:
    """With dead_end at 0 instead of the design document's -1 (REJECT), three dead ends leave
    a misleading memory at 0.3645: above the suppression threshold, and its +-0.05 Q boost does
    not overcome its lexical lead, so precision stays at the learning-off level (0.375 to 0.5),
    far below the -1 arm (1.0)."""
    mean, _topics, _store, _now = run_arm(False, LearningConfig(dead_end_reward=0.0), outcomes=True)
    assert mean <= 0.5

"""Explicit outcomes teach the memory they name a value (``metadata.qValue``).

An outcome reported for a memory (``record_outcome(memory_id=..., outcome=...)``) is a
judgement of that one memory, so it takes one step of the verdicts' update:

* rewards on the design document's verdict scale (``learning.outcomeRewards.*``): ``useful``
  +1 (as APPROVE), ``dead_end`` -1 (as REJECT), ``corrected`` 0 (as CONCERNS: the memory was
  partly right and needed fixing), so ``useful`` moves Q up and the other two move it down;
* update: ``ema(q, reward, learningRate)``, clamped to [0, 1], at the outcome's time;
* one reward event per outcome event (verdict ``OUTCOME:<outcome>``, ``verdict_synthesis``
  ``{"source": "outcome", "outcomeEventId", "outcome", "generation"}``); an outcome event
  teaches once: a retry with the same event id finds that reward event and changes nothing;
* only the named memory, only when it is active and in a scope the context may read; no
  propagation (near-duplicates were not judged, and the A/B harness shows propagation pulling
  good and bad near-duplicates toward each other);
* outcomes about a question (the evidence record a ``question`` outcome creates) teach
  nothing; ``learning.outcomesTeach: false`` turns the whole rule off.

Suppression and promotion follow from the Q value as they do for verdicts.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping

import attrs

from swarmmem.core.learning.rewards import (
    SOURCE_OUTCOME,
    STATUS_ALREADY_APPLIED,
    STATUS_APPLIED,
    LearningConfig,
    RewardUpdate,
    write_q,
)
from swarmmem.core.model.events import OutcomeEvent, RewardEvent
from swarmmem.ports.storage import StorageProvider

OUTCOME_LABEL_PREFIX = "OUTCOME:"

# The statuses of apply_outcome besides STATUS_APPLIED and STATUS_ALREADY_APPLIED (verdicts').
STATUS_DISABLED = "disabled"
STATUS_QUESTION = "question"
STATUS_INACTIVE = "inactive"
STATUS_OUT_OF_SCOPE = "out_of_scope"


@attrs.frozen(kw_only=True)
class OutcomeReward:
    """What :func:`apply_outcome` did; ``update`` is the EMA step (for an event that taught
    before, the step it made then)."""

    status: str
    event_id: str
    update: RewardUpdate | None = None


def outcome_label(outcome: str) -> str:
    """The reward-event verdict label of an outcome: ``OUTCOME:useful`` and so on."""
    return OUTCOME_LABEL_PREFIX + outcome


def outcome_reward_event(store: StorageProvider, event_id: str) -> RewardEvent | None:
    """The reward event an outcome event wrote, if any."""
    for reward in store.list_reward_events():
        synthesis = reward.verdict_synthesis
        if (
            isinstance(synthesis, Mapping)
            and synthesis.get("source") == SOURCE_OUTCOME
            and synthesis.get("outcomeEventId") == event_id
        ):
            return reward
    return None


def _as_update(event: RewardEvent) -> RewardUpdate:
    return RewardUpdate(
        memory_id=event.memory_id,
        verdict=event.verdict,
        reward=event.reward,
        q_before=math.nan if event.q_before is None else event.q_before,
        q_after=math.nan if event.q_after is None else event.q_after,
    )


def apply_outcome(
    store: StorageProvider,
    event: OutcomeEvent,
    *,
    scope_keys: Collection[str],
    policy: LearningConfig | None = None,
    run_id: str | None = None,
) -> OutcomeReward:
    """Teach the memory of ``event`` a value from its outcome (once per event id).

    The composition root binds everything but ``event`` (``functools.partial``) and hands
    that to the write service, which calls it with every outcome event it accepts (new or
    retried) inside the transaction that stores the event.

    Args:
        store: the storage provider (the Q value is written with a direct ``upsert``).
        event: a stored outcome event.
        scope_keys: keys of the scopes the reporting context may read.
        policy: learning settings (defaults when omitted).
        run_id: recorded on the reward event; its ``unit_id`` is the outcome's task id.
    """
    policy = policy or LearningConfig()
    result = OutcomeReward(status=STATUS_DISABLED, event_id=event.id)
    if not policy.outcomes_teach:
        return result
    prior = outcome_reward_event(store, event.id)
    if prior is not None:
        return attrs.evolve(result, status=STATUS_ALREADY_APPLIED, update=_as_update(prior))
    record = store.get(event.memory_id)
    if record is None or not record.active:
        return attrs.evolve(result, status=STATUS_INACTIVE)
    if "outcomeQuestion" in record.metadata:
        return attrs.evolve(result, status=STATUS_QUESTION)
    if record.scope.key not in scope_keys:
        return attrs.evolve(result, status=STATUS_OUT_OF_SCOPE)
    outcome = event.outcome.outcome
    with store.transaction():
        step = write_q(
            store,
            record,
            verdict=outcome_label(outcome),
            signal=policy.outcome_reward(outcome),
            eta=policy.learning_rate,
            now=event.outcome.at,
            run_id=run_id,
            unit_id=event.outcome.task_id,
            synthesis={
                "source": SOURCE_OUTCOME,
                "outcomeEventId": event.id,
                "outcome": outcome,
                "generation": event.generation,
            },
        )
    return attrs.evolve(result, status=STATUS_APPLIED, update=step)

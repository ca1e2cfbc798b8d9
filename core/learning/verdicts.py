"""Council verdicts as a use case: reward what the reviewed sessions recalled."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import attrs

from swarmmem.core.learning.rewards import EmbedFn, LearningSettings, apply_verdict
from swarmmem.core.model.scopes import MemoryContext
from swarmmem.ports.storage import StorageProvider


@attrs.frozen(kw_only=True)
class VerdictService:
    """Applies verdicts for one host session; ``known_sessions`` names the member sessions a
    verdict may target and ``embed`` (when embeddings are on) enables cross-kind propagation."""

    store: StorageProvider
    context: MemoryContext
    now: Callable[[], str]
    policy: LearningSettings
    known_sessions: Callable[[], Collection[str]]
    embed: Callable[[], EmbedFn | None]

    def record(
        self,
        verdict: str,
        *,
        swarm_id: str,
        task_or_phase: str,
        round_number: int,
        session_ids: Sequence[str] = (),
        synthesis: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """:func:`~swarmmem.core.learning.rewards.apply_verdict` for this host session."""
        return apply_verdict(
            self.store,
            verdict=verdict,
            host_session_id=self.context.session_id,
            session_ids=session_ids,
            known_sessions=self.known_sessions(),
            swarm_id=swarm_id,
            task_or_phase=task_or_phase,
            round_number=round_number,
            now=self.now(),
            unit_id=self.context.unit_id,
            policy=self.policy,
            embed=self.embed(),
            synthesis=synthesis,
        ).as_dict()

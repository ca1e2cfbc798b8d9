"""Council verdicts as a use case: reward what the reviewed sessions recalled."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import attrs

from swarmmem.core.learning.rewards import EmbedFn, LearningConfig, VerdictResult, apply_verdict
from swarmmem.core.model.ids import sha256_hex
from swarmmem.core.model.scopes import MemoryContext
from swarmmem.ports.storage import StorageProvider


@attrs.frozen(kw_only=True)
class VerdictService:
    """Applies verdicts for one host session; ``known_sessions`` names the member sessions a
    verdict may target and ``embed`` (when embeddings are on) enables cross-kind propagation.
    ``redact`` masks likely secrets in the caller's text (key parts, session ids, synthesis)
    before anything is stored or returned."""

    store: StorageProvider
    context: MemoryContext
    now: Callable[[], str]
    policy: LearningConfig
    known_sessions: Callable[[], Collection[str]]
    embed: Callable[[], EmbedFn | None]
    redact: Callable[[str], str] | None = None

    def _clean(self, value: Any) -> Any:
        """``value`` with secrets redacted (strings inside lists and mappings too). A redacted
        key part keeps a short hash of the original, so different verdicts keep different
        idempotency keys."""
        redact = self.redact
        if redact is None:
            return value
        if isinstance(value, str):
            cleaned = redact(value)
            return value if cleaned == value else f"{cleaned}#{sha256_hex(value)[:12]}"
        if isinstance(value, Mapping):
            return {self._clean(k): self._clean(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._clean(item) for item in value]
        return value

    def record_verdict(
        self,
        verdict: str,
        *,
        swarm_id: str,
        task_or_phase: str,
        round_number: int,
        session_ids: Sequence[str] = (),
        synthesis: Mapping[str, Any] | None = None,
    ) -> VerdictResult:
        """Reward what this and the known member sessions recalled (``APPROVE``, ``REJECT``
        or ``CONCERNS``; see :func:`~swarmmem.core.learning.rewards.apply_verdict`)."""
        return apply_verdict(
            self.store,
            verdict=verdict,
            host_session_id=self.context.session_id,
            session_ids=self._clean(session_ids)
            if isinstance(session_ids, list | tuple)
            else session_ids,
            known_sessions=self.known_sessions(),
            swarm_id=self._clean(swarm_id),
            task_or_phase=self._clean(task_or_phase),
            round_number=round_number,
            now=self.now(),
            unit_id=self.context.unit_id,
            policy=self.policy,
            embed=self.embed(),
            synthesis=None if synthesis is None else self._clean(synthesis),
        )

"""The :class:`Memory` facade: one project's memory seen from one context.

It holds no domain logic: each call checks that memory is enabled and hands over to a use
case in :mod:`swarmmem.core` with the adapters the composition root
(:mod:`swarmmem.bootstrap`) built from the configuration.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from swarmmem.bootstrap import Runtime
from swarmmem.core.learning import lessons
from swarmmem.core.learning.rewards import apply_verdict
from swarmmem.core.maintenance import reports
from swarmmem.core.maintenance.compaction import compact
from swarmmem.core.model.errors import MemoryDisabledError
from swarmmem.core.model.ids import to_iso
from swarmmem.core.model.records import (
    Anchor,
    AppliedChange,
    MemoryProposal,
    MemoryRecord,
    MemoryScope,
    RecallBundle,
)
from swarmmem.core.recall import embeddings, injection
from swarmmem.core.recall.hybrid import DenseParts
from swarmmem.core.writes.importing import ImportResult, import_records
from swarmmem.ports.storage import StorageProvider

log = logging.getLogger("swarmmem")

DISABLED_MESSAGE = (
    "Swarm memory is disabled. Set memory.enabled=true in .opencode/opencode-swarm.json "
    "(or pass config={'enabled': True})."
)

__all__ = ["DISABLED_MESSAGE", "ImportResult", "Memory"]


class Memory:
    """Create it with :func:`swarmmem.open`. Scopes come from the context; agents only
    propose; durable writes happen through curator decisions."""

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime
        self._reflected = False

    @classmethod
    def open(
        cls,
        root: Path,
        config: Mapping[str, Any] | str | os.PathLike[str] | None,
        *,
        context: Mapping[str, Any] | None = None,
        **adapters: Any,
    ) -> Memory:
        """See :func:`swarmmem.open`."""
        return cls(Runtime(root, config, context=context, adapters=adapters))

    # ------------------------------------------------------------- the wiring
    root = property(lambda self: self._rt.root, doc="The project root.")
    config = property(lambda self: self._rt.config, doc="The resolved ``memory`` section.")
    context = property(lambda self: self._rt.context, doc="The session context.")
    clock = property(lambda self: self._rt.clock, doc="The clock.")
    storage_dir = property(lambda self: self._rt.storage_dir, doc="The memory directory.")
    runtime = property(lambda self: self._rt, doc="The composition root (adapters, settings).")

    @property
    def enabled(self) -> bool:
        """True when memory is enabled in the configuration."""
        return bool(self._rt.config["enabled"])

    def require_enabled(self) -> None:
        """Raise :class:`MemoryDisabledError` unless memory is enabled."""
        if not self.enabled:
            raise MemoryDisabledError(DISABLED_MESSAGE)

    @property
    def store(self) -> StorageProvider:
        """The storage provider, opened on first use."""
        return self._rt.store

    @property
    def dense_unavailable_reason(self) -> str | None:
        """Why dense retrieval is off (``None`` when it is on or was not tried yet)."""
        return self._rt.dense_unavailable_reason

    def dense_parts(self, rerank: bool | None = None) -> DenseParts | None:
        """The embedder, vector index, cache (and reranker), or ``None`` when unavailable."""
        return self._rt.dense_parts(rerank)

    @property
    def last_trace(self) -> Any:
        """What the last recall's pipeline did (profile stages, candidate counts)."""
        return self._rt.recall.last_trace if "recall" in self._rt.__dict__ else None

    def _ready(self, *, startup: bool = True) -> Runtime:
        """The runtime of an enabled memory; the first agent-facing call also regenerates the
        lessons once (a deferred startup task whose failures are only logged)."""
        self.require_enabled()
        if startup and not self._reflected:
            self._reflected = True
            self._refresh_reflection()
        return self._rt

    # ------------------------------------------------------------------ recall
    def recall(
        self,
        query: str,
        task: str | None = None,
        kinds: Sequence[str] | None = None,
        max_items: int | None = None,
        token_budget: int | None = None,
        mode: str = "manual",
        profile: str | None = None,
        *,
        scopes: Sequence[MemoryScope] | None = None,
        include_low_q: bool = False,
    ) -> RecallBundle:
        """Recall memories relevant to ``query`` within this context's scopes."""
        return self._ready().recall.recall(
            query,
            task=task,
            kinds=kinds,
            max_items=max_items,
            token_budget=token_budget,
            mode=mode,
            profile=profile,
            scopes=scopes,
            include_low_q=include_low_q,
        )

    def inject(
        self,
        *,
        agent_task: str | None = None,
        user_goal: str | None = None,
        messages: Sequence[str] = (),
        project: str | None = None,
        current_plan: str | None = None,
    ) -> RecallBundle | None:
        """Automatic recall before an agent call (:func:`.core.recall.injection.inject`): the
        bundle to inject, or ``None`` when skipped (the reason is in the run log)."""
        if not self.enabled:
            return None
        rt = self._ready()
        return injection.inject(
            rt.recall,
            rt.run_log,
            settings=rt.injection_settings(),
            stamp=to_iso(rt.clock.now()),
            agent_task=agent_task,
            user_goal=user_goal,
            messages=messages,
            project=project,
            current_plan=current_plan,
        )

    def inject_blocks(
        self,
        *,
        agent_task: str | None = None,
        user_goal: str | None = None,
        messages: Sequence[str] = (),
        project: str | None = None,
        current_plan: str | None = None,
    ) -> list[str]:
        """Every block to place before the agent's task message: the recall block of
        :meth:`inject`, then the reflection block when it fits the injection budget."""
        bundle = self.inject(
            agent_task=agent_task,
            user_goal=user_goal,
            messages=messages,
            project=project,
            current_plan=current_plan,
        )
        if not self.enabled:
            return []
        return injection.injection_blocks(
            bundle,
            self.reflection_block(),
            messages=messages,
            token_budget=self._rt.injection_settings().token_budget,
        )

    # ------------------------------------------------------------------ writes
    def propose(
        self,
        *,
        operation: str,
        rationale: str,
        kind: str | None = None,
        text: str | None = None,
        evidence_refs: Sequence[str] | None = None,
        target_memory_id: str | None = None,
        related_memory_ids: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        confidence: float | None = None,
    ) -> MemoryProposal:
        """Propose a memory change (pending until a curator decides)."""
        return self._ready().writes.propose(
            operation=operation,
            rationale=rationale,
            kind=kind,
            text=text,
            evidence_refs=evidence_refs,
            target_memory_id=target_memory_id,
            related_memory_ids=related_memory_ids,
            tags=tags,
            confidence=confidence,
        )

    def curate(
        self,
        proposal_id: str,
        decision: str,
        *,
        reason: str | None = None,
        patch: Mapping[str, Any] | None = None,
    ) -> AppliedChange:
        """Apply a curator decision to a pending proposal (trusted path)."""
        rt = self._ready()
        change = rt.writes.curate(proposal_id, decision, reason=reason, patch=patch)
        written = [i for i in (change.memory_id, change.replacement_memory_id) if i]
        self._embed(rt.store.get_many(written).values())
        return change

    def record_outcome(
        self,
        *,
        outcome: str,
        memory_id: str | None = None,
        question: str | None = None,
        correction: str | None = None,
        anchors: Sequence[Mapping[str, Any] | Anchor] | None = None,
        event_id: str | None = None,
    ) -> dict[str, Any]:
        """Report that a memory (or question) was useful, a dead end, or corrected; lessons
        are regenerated afterwards when reflection is on (a failure makes it ``partial``)."""
        result = self._ready().writes.record_outcome(
            outcome=outcome,
            memory_id=memory_id,
            question=question,
            correction=correction,
            anchors=anchors,
            event_id=event_id,
        )
        return {**result, **self._refresh_reflection()}

    def import_records(self, records: Iterable[Mapping[str, Any]]) -> ImportResult:
        """Trusted bulk write of records in the reference shape, in one transaction (see
        :mod:`swarmmem.core.writes.importing`)."""
        rt = self._ready(startup=False)
        result, written = import_records(
            rt.store,
            records,
            now=rt.clock.now(),
            repo_scope=rt.allowed_scopes[1],
            secrets=rt.secrets,
            reject_durable_secrets=rt.config["redaction"]["rejectDurableSecrets"],
        )
        self._embed(written)
        return result

    def _embed(self, records: Iterable[MemoryRecord]) -> int:
        parts = self._rt.dense_parts(rerank=False) if self.config["embeddings"]["enabled"] else None
        return embeddings.embed_records(parts, records) if parts is not None else 0

    def rebuild_embedding_index(
        self, progress: Callable[[int, int], None] | None = None, batch_size: int = 64
    ) -> dict[str, Any]:
        """Re-embed every active durable memory; the stored model version advances only when
        every record was embedded."""
        rt = self._ready(startup=False)
        rt.reset_dense()
        parts = rt.dense_parts(rerank=False)
        if parts is None:
            reason = rt.dense_unavailable_reason
            return {"rebuilt": 0, "failed": 0, "advanced": False, "reason": reason}
        now = to_iso(rt.clock.now())
        return embeddings.rebuild_index(
            rt.store, parts, now=now, progress=progress, batch_size=batch_size
        )

    # ------------------------------------------------ learning and maintenance
    def register_session(self, session_id: str) -> None:
        """Mark a live session (e.g. a dispatched council member) as a known verdict target."""
        self._rt.sessions.register(session_id)

    def record_verdict(
        self,
        verdict: str,
        *,
        swarm_id: str,
        task_or_phase: str,
        round_number: int,
        session_ids: Sequence[str] = (),
        synthesis: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Apply a council verdict (APPROVE/REJECT/CONCERNS) to the memories recalled by this
        session and by known member sessions (registered here, or with recall usage in the
        store); idempotent per swarm, task/phase and round."""
        rt = self._ready(startup=False)
        parts = rt.dense_parts(rerank=False) if self.config["embeddings"]["enabled"] else None
        seen = {u.get("sessionId") for u in rt.store.list_recall_usage()}
        known = rt.sessions.snapshot() | {s for s in seen if isinstance(s, str) and s}
        result = apply_verdict(
            rt.store,
            verdict=verdict,
            host_session_id=rt.context.session_id,
            session_ids=session_ids,
            known_sessions=known,
            swarm_id=swarm_id,
            task_or_phase=task_or_phase,
            round_number=round_number,
            now=to_iso(rt.clock.now()),
            unit_id=rt.context.unit_id,
            policy=rt.learning_settings(),
            embed=parts.embedder.embed_batch if parts is not None else None,
            synthesis=synthesis,
        )
        return result.as_dict()

    def _report(self, build: Callable[..., dict[str, Any]], limit: Any, **extra: Any) -> Any:
        rt = self._ready(startup=False)
        now = to_iso(rt.clock.now())
        return build(rt.store, now=now, limit=reports.parse_limit(limit), **extra)

    def value_log(self, limit: int | str | None = None) -> dict[str, Any]:
        """Per-memory Q-values, statuses and recent rewards."""
        return self._report(reports.value_log_report, limit, policy=self._rt.learning_settings())

    def pending(self, limit: int | str | None = None) -> dict[str, Any]:
        """Pending proposals, rejected reasons and promotion candidates."""
        return self._report(reports.pending_report, limit, policy=self._rt.learning_settings())

    def recall_log(self, limit: int | str | None = None) -> dict[str, Any]:
        """Recall usage by role and memory, most- and never-recalled memories."""
        return self._report(reports.recall_log_report, limit)

    def stale(self, limit: int | str | None = None) -> dict[str, Any]:
        """Expired scratch, tombstones, superseded chains, dead-anchor, low-utility, low-Q."""
        dead = lessons.dead_anchor_ids(self._rt.lessons)
        policy = self._rt.learning_settings()
        return self._report(reports.stale_report, limit, policy=policy, dead_anchor_ids=dead)

    def compact(self, confirm: bool = False) -> dict[str, Any]:
        """Remove deleted tombstones, superseded records and expired scratch (and their
        vectors); a dry run unless ``confirm``."""
        rt = self._ready(startup=False)
        parts = (
            rt.dense_parts(rerank=False)
            if confirm and self.config["embeddings"]["enabled"]
            else None
        )
        now = to_iso(rt.clock.now())
        vectors = parts.index if parts is not None else None
        return compact(rt.store, now=now, confirm=confirm, vectors=vectors)

    def reflect(self) -> dict[str, Any]:
        """Regenerate ``.swarm/reflections/lessons.{json,md}`` (only when reflection is on)."""
        rt = self._ready(startup=False)
        if not rt.reflection_enabled:
            return {"updated": False, "reason": "disabled"}
        result = lessons.regenerate(
            rt.store,
            rt.lessons,
            now=to_iso(rt.clock.now()),
            secrets=rt.secrets,
            half_life_days=float(rt.config["reflection"]["halfLifeDays"]),
        )
        result.pop("digest", None)
        return result

    def reflection_block(self) -> str:
        """The bounded reflection prompt block from ``lessons.json`` (empty when disabled)."""
        if not self._rt.reflection_enabled:
            return ""
        return lessons.prompt_block(self._rt.lessons, self._rt.secrets)

    def _refresh_reflection(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": "complete",
            "partial": False,
            "reflection_enabled": self._rt.reflection_enabled,
            "reflection_attempted": False,
            "reflection_updated": False,
        }
        if not out["reflection_enabled"]:
            return out
        out["reflection_attempted"] = True
        try:
            result = self.reflect()
        except Exception as exc:  # the outcome is recorded; a failure makes the result partial
            log.warning("reflection regeneration failed", exc_info=True)
            out.update(status="partial", partial=True, reflection_error=str(exc))
            return out
        out["reflection_updated"] = bool(result.get("updated"))
        if "entries" in result:
            out["reflection_entries"] = result["entries"]
        if not result.get("updated"):
            out.update(status="partial", partial=True, reflection_error=result.get("reason"))
        return out

    # -------------------------------------------------------------- lifecycle
    def close(self) -> None:
        """Release the store and the vector index. Idempotent."""
        self._rt.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

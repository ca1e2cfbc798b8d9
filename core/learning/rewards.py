"""Recall learning: council verdicts teach recalled memories a value (``metadata.qValue``).

The semantics are those of the design document's ``memory.learning`` block:

* rewards: APPROVE ``+1``, REJECT ``-1``, CONCERNS ``0``;
* update: ``ema(q, r, eta) = clamp01((1 - eta) * q + eta * r)`` with ``eta = learningRate``;
* targeting: the most recent non-empty recall bundle of the host-derived session, plus the
  most recent bundle of each caller-supplied session id that a :class:`SessionRegistry`
  knows (unknown ids are dropped, never matched);
* idempotency: one application per ``swarmId:taskOrPhase:round`` reward key;
* soft propagation (one hop, after the direct updates): same-scope memories recalled within
  ``propagationLookbackDays`` whose token Jaccard with a rewarded memory reaches
  ``propagationTokenOverlapThreshold`` (same kind only) or, when an embedding function is
  given, whose cosine reaches ``propagationEmbeddingCosineThreshold`` (any kind); at most
  ``propagationFanout`` per source, each target once, with the signal
  ``0.5 + clamp01(propagationFactor) * (reward - 0.5)``.

Explicit outcomes teach on the same scale (see :mod:`.outcomes`): ``OUTCOME_REWARDS`` maps
them onto the verdict rewards. Learning never changes stability; promotion candidates are
only reported.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import threading
from array import array
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import attrs

from swarmmem._speedups import jaccard
from swarmmem.core.config import LearningConfig as LearningConfig  # the settings node
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.events import RecallUsage, RewardEvent
from swarmmem.core.model.ids import iso_to_ms, parse_iso, to_iso
from swarmmem.core.model.records import MemoryRecord
from swarmmem.ports.storage import ListFilter, StorageProvider

log = logging.getLogger("swarmmem")

REWARDS: Mapping[str, float] = {"APPROVE": 1.0, "REJECT": -1.0, "CONCERNS": 0.0}
VERDICTS: tuple[str, ...] = tuple(REWARDS)
PROPAGATED_SUFFIX = "_PROPAGATED"
#: Default outcome rewards (``learning.outcomeRewards.*``): a useful memory is approved, a
#: dead end rejected, a corrected one met with concerns.
OUTCOME_REWARDS: Mapping[str, float] = {
    "useful": REWARDS["APPROVE"],
    "dead_end": REWARDS["REJECT"],
    "corrected": REWARDS["CONCERNS"],
}
#: ``verdict_synthesis["source"]`` of the reward events an outcome writes.
SOURCE_OUTCOME = "outcome"

STATUS_APPLIED = "applied"
STATUS_ALREADY_APPLIED = "already_applied"
STATUS_NO_USAGE = "no_recall_usage_for_run"

#: Embedding function for the cross-kind propagation path: texts -> one vector per text.
EmbedFn = Callable[[Sequence[str]], Iterable[Iterable[float]]]


def clamp01(value: float) -> float:
    """``value`` limited to [0, 1]; NaN becomes 0."""
    if math.isnan(value):
        return 0.0
    return min(1.0, max(0.0, value))


def ema(q: float, reward: float, eta: float) -> float:
    """One exponential-moving-average step, clamped to [0, 1].

    A non-finite ``q`` counts as 0; a non-finite ``reward`` or ``eta`` leaves ``q`` unchanged.
    """
    if not math.isfinite(q):
        q = 0.0
    if not math.isfinite(reward) or not math.isfinite(eta):
        return clamp01(q)
    return clamp01((1.0 - eta) * q + eta * reward)


def propagated_signal(reward: float, factor: float) -> float:
    """The signal a near-duplicate receives: the reward pulled toward 0.5 by ``factor``."""
    return 0.5 + clamp01(factor) * (reward - 0.5)


def reward_key(swarm_id: str, task_or_phase: str, round_number: int) -> str:
    """The idempotency key of one verdict: ``swarmId:taskOrPhase:round``."""
    return f"{swarm_id}:{task_or_phase}:{round_number}"


class SessionRegistry:
    """Session ids known to be live, against which caller-supplied ids are resolved.

    Membership proves only that a session exists, not that it took part in the reviewed
    task (the design document states this limitation). Thread-safe.
    """

    def __init__(self, session_ids: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self._ids: set[str] = {s for s in session_ids if isinstance(s, str) and s}

    def register(self, session_id: str) -> None:
        """Mark ``session_id`` as known (empty ids are ignored)."""
        if isinstance(session_id, str) and session_id:
            with self._lock:
                self._ids.add(session_id)

    def snapshot(self) -> frozenset[str]:
        """The known ids right now."""
        with self._lock:
            return frozenset(self._ids)


@attrs.frozen(kw_only=True)
class RewardUpdate:
    """One Q-value change made by a verdict."""

    memory_id: str
    verdict: str
    reward: float
    q_before: float
    q_after: float
    source_memory_id: str | None = None
    similarity: float | None = None

    @property
    def propagated(self) -> bool:
        """True for a soft-propagated update."""
        return self.source_memory_id is not None

    def as_dict(self) -> dict[str, Any]:
        """Stable JSON form (``source_memory_id`` and ``similarity`` only when propagated)."""
        out = attrs.asdict(self)
        if not self.propagated:
            del out["source_memory_id"], out["similarity"]
        return out


@attrs.frozen(kw_only=True)
class VerdictResult:
    """What :func:`apply_verdict` did."""

    status: str
    reward_key: str
    verdict: str
    reward: float
    sessions: tuple[str, ...] = ()
    dropped_session_ids: tuple[str, ...] = ()
    bundle_ids: tuple[str, ...] = ()
    updates: tuple[RewardUpdate, ...] = ()

    @property
    def direct(self) -> tuple[RewardUpdate, ...]:
        """The direct (non-propagated) updates."""
        return tuple(u for u in self.updates if not u.propagated)

    @property
    def propagated(self) -> tuple[RewardUpdate, ...]:
        """The propagated updates."""
        return tuple(u for u in self.updates if u.propagated)

    def to_json(self) -> dict[str, Any]:
        """The JSON object ``swarmmem verdict --json`` prints."""
        return {
            "success": self.status != STATUS_NO_USAGE,
            "status": self.status,
            "reward_key": self.reward_key,
            "verdict": self.verdict,
            "reward": self.reward,
            "sessions": list(self.sessions),
            "dropped_session_ids": list(self.dropped_session_ids),
            "bundle_ids": list(self.bundle_ids),
            "updated": len(self.direct),
            "propagated": len(self.propagated),
            "updates": [u.as_dict() for u in self.updates],
        }


def _event_reward_key(event: RewardEvent) -> str | None:
    synthesis = event.verdict_synthesis
    if isinstance(synthesis, Mapping) and isinstance(synthesis.get("rewardKey"), str):
        return str(synthesis["rewardKey"])
    return None


def reward_key_applied(store: StorageProvider, key: str) -> bool:
    """True when a reward event with ``key`` exists.

    The key is read from ``verdict_synthesis["rewardKey"]``, where this package writes it (the
    reward ledger has no column of its own for it).
    """
    return any(_event_reward_key(e) == key for e in store.list_reward_events())


def _check_text(name: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise MemoryValidationError(f"{name} must be a non-empty string; got {value!r}")
    return value.strip()


def _target_sessions(
    host_session_id: str | None, session_ids: Iterable[str], known: Collection[str]
) -> tuple[list[str], list[str]]:
    targets: list[str] = []
    dropped: list[str] = []
    if host_session_id:
        targets.append(host_session_id)
    for sid in session_ids:
        if not isinstance(sid, str) or not sid or sid in targets:
            continue
        if sid in known:
            targets.append(sid)
        elif sid not in dropped:
            dropped.append(sid)
    return targets, dropped


def latest_bundles(
    usage: Sequence[RecallUsage], sessions: Sequence[str], unit_id: str | None
) -> list[RecallUsage]:
    """Per session, its most recent recall bundle that listed at least one memory.

    Bundles of another unit of work are skipped when both the bundle and the caller name one.
    ``usage`` is oldest first, so the last match of a session wins.
    """
    wanted = set(sessions)
    latest: dict[str, RecallUsage] = {}
    for row in usage:
        sid = row.session_id
        if sid is None or sid not in wanted or not row.memory_ids:
            continue
        if unit_id is not None and row.unit_id is not None and row.unit_id != unit_id:
            continue
        latest[sid] = row
    return [latest[s] for s in sessions if s in latest]


def apply_verdict(
    store: StorageProvider,
    *,
    verdict: str,
    host_session_id: str | None,
    swarm_id: str,
    task_or_phase: str,
    round_number: int,
    now: str,
    session_ids: Iterable[str] = (),
    known_sessions: Collection[str] = frozenset(),
    run_id: str | None = None,
    unit_id: str | None = None,
    policy: LearningConfig | None = None,
    embed: EmbedFn | None = None,
    synthesis: Mapping[str, Any] | None = None,
) -> VerdictResult:
    """Apply a council verdict to the memories recalled by the reviewed sessions.

    Args:
        store: the storage provider (Q-values are written with direct ``upsert`` calls).
        verdict: ``APPROVE``, ``REJECT`` or ``CONCERNS`` (case-insensitive).
        host_session_id: the submitting session's own id (trusted).
        swarm_id, task_or_phase, round_number: the idempotency key parts.
        now: ISO timestamp of the reward (reward events, propagation lookback).
        session_ids: caller-supplied session ids (council members, provenance); kept only
            when ``known_sessions`` contains them.
        known_sessions: the registry of live session ids.
        run_id, unit_id: recorded on reward events (default: the bundle's); ``unit_id`` also
            skips bundles recorded for another unit of work.
        policy: learning settings (defaults when omitted).
        embed: optional embedding function enabling the cross-kind propagation path.
        synthesis: optional JSON-safe context stored with each reward event.

    Raises:
        MemoryValidationError: an unknown verdict, empty key parts or a bad timestamp.
    """
    label, swarm, task = _check_verdict_args(verdict, swarm_id, task_or_phase, round_number, now)
    policy = policy or LearningConfig()
    reward = REWARDS[label]
    key = reward_key(swarm, task, round_number)
    targets, dropped = _target_sessions(host_session_id, session_ids, known_sessions)
    base = VerdictResult(
        status=STATUS_NO_USAGE,
        reward_key=key,
        verdict=label,
        reward=reward,
        sessions=tuple(targets),
        dropped_session_ids=tuple(dropped),
    )
    if reward_key_applied(store, key):
        return attrs.evolve(base, status=STATUS_ALREADY_APPLIED)

    bundles = latest_bundles(store.list_recall_usage(), targets, unit_id)
    first_bundle = _first_bundles(bundles)
    records = _active_records(store, sorted(first_bundle))
    if not records:
        return base

    context: dict[str, Any] = dict(synthesis or {})
    context.update({"rewardKey": key, "swarmId": swarm, "taskOrPhase": task, "round": round_number})
    run = _RewardRun(
        verdict=label, reward=reward, now=now, run_id=run_id, unit_id=unit_id, context=context
    )
    with store.transaction():
        updates = [
            _reward_recalled(store, record, first_bundle[record.id], run, policy.learning_rate)
            for record in records
        ]
        updates.extend(_propagate(store, records, run, policy=policy, embed=embed))
    return attrs.evolve(
        base,
        status=STATUS_APPLIED,
        bundle_ids=tuple(b.bundle_id for b in bundles),
        updates=tuple(updates),
    )


def _check_verdict_args(
    verdict: str, swarm_id: str, task_or_phase: str, round_number: int, now: str
) -> tuple[str, str, str]:
    """The verdict's label and the checked swarm and task of its reward key, or
    MemoryValidationError (an unknown verdict, empty key parts, a bad round or timestamp)."""
    label = verdict.strip().upper() if isinstance(verdict, str) else ""
    if label not in REWARDS:
        raise MemoryValidationError(
            f"verdict must be one of {', '.join(VERDICTS)}; got {verdict!r}"
        )
    swarm = _check_text("swarm_id", swarm_id)
    task = _check_text("task_or_phase", task_or_phase)
    if isinstance(round_number, bool) or not isinstance(round_number, int) or round_number < 0:
        raise MemoryValidationError(f"round must be a non-negative integer; got {round_number!r}")
    if parse_iso(now) is None:
        raise MemoryValidationError(f"now must be an ISO timestamp; got {now!r}")
    return label, swarm, task


def _first_bundles(bundles: Iterable[RecallUsage]) -> dict[str, RecallUsage]:
    """Per recalled memory id, the first of ``bundles`` that recalled it."""
    first: dict[str, RecallUsage] = {}
    for bundle in bundles:
        for mid in bundle.memory_ids:
            first.setdefault(mid, bundle)
    return first


def _active_records(store: StorageProvider, memory_ids: Iterable[str]) -> list[MemoryRecord]:
    """The active memories of ``memory_ids``, in their order (a missing one is skipped)."""
    records: list[MemoryRecord] = []
    for mid in memory_ids:
        record = store.get(mid)
        if record is not None and record.active:
            records.append(record)
    return records


@attrs.frozen(kw_only=True)
class _RewardRun:
    """What every reward of one verdict shares: its label and reward, the time, the run and
    unit it is recorded on (the bundle's when ``None``) and the synthesis context."""

    verdict: str
    reward: float
    now: str
    run_id: str | None
    unit_id: str | None
    context: Mapping[str, Any]


def _reward_recalled(
    store: StorageProvider,
    record: MemoryRecord,
    bundle: RecallUsage,
    run: _RewardRun,
    eta: float,
) -> RewardUpdate:
    """Write the verdict's reward to a memory the bundle recalled (its run and unit default
    to the bundle's; the reward event names the session and bundle)."""
    return write_q(
        store,
        record,
        verdict=run.verdict,
        signal=run.reward,
        eta=eta,
        now=run.now,
        run_id=run.run_id if run.run_id is not None else bundle.run_id or None,
        unit_id=run.unit_id if run.unit_id is not None else bundle.unit_id or None,
        synthesis={**run.context, "sessionId": bundle.session_id, "bundleId": bundle.bundle_id},
    )


def write_q(
    store: StorageProvider,
    record: MemoryRecord,
    *,
    verdict: str,
    signal: float,
    eta: float,
    now: str,
    run_id: str | None,
    unit_id: str | None,
    synthesis: Mapping[str, Any],
    source_id: str | None = None,
    similarity: float | None = None,
) -> RewardUpdate:
    """One EMA step of ``record``'s Q toward ``signal``, and its reward event."""
    q_before = record.q
    q_after = ema(q_before, signal, eta)
    # A system write of the learned value: content, stability and timestamps stay as they are.
    store.upsert(attrs.evolve(record, metadata={**record.metadata, "qValue": q_after}))
    store.append_reward_event(
        RewardEvent(
            memory_id=record.id,
            verdict=verdict,
            reward=signal,
            q_before=q_before,
            q_after=q_after,
            verdict_synthesis={k: v for k, v in synthesis.items() if v is not None},
            timestamp=now,
            run_id=run_id,
            unit_id=unit_id,
        )
    )
    return RewardUpdate(
        memory_id=record.id,
        verdict=verdict,
        reward=signal,
        q_before=q_before,
        q_after=q_after,
        source_memory_id=source_id,
        similarity=similarity,
    )


def recent_recall_times(
    store: StorageProvider, *, now: str, lookback_days: float
) -> dict[str, str]:
    """The latest recall time of every memory recalled within ``lookback_days`` of ``now``."""
    moment = parse_iso(now)
    if moment is None or not math.isfinite(lookback_days) or lookback_days <= 0:
        return {}
    since = to_iso(moment - dt.timedelta(days=lookback_days))
    now_ms = iso_to_ms(now) or 0.0
    latest: dict[str, str] = {}
    for row in store.list_recall_usage(since=since):
        stamp = row.timestamp
        stamp_ms = iso_to_ms(stamp)
        if stamp_ms is None or stamp_ms > now_ms:
            continue
        for mid in row.memory_ids:
            if stamp > latest.get(mid, ""):
                latest[mid] = stamp
    return latest


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity (0 when either vector is zero or the lengths differ)."""
    if len(a) != len(b):
        return 0.0
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return dot / (na * nb)


class _Vectors:
    """Embeddings computed once per call, by memory id; failures disable the path."""

    def __init__(self, embed: EmbedFn | None) -> None:
        self._embed = embed
        self._cache: dict[str, list[float]] = {}

    @property
    def active(self) -> bool:
        return self._embed is not None

    def ensure(self, records: Sequence[MemoryRecord]) -> None:
        if self._embed is None:
            return
        missing = [r for r in records if r.id not in self._cache]
        if not missing:
            return
        try:
            rows = [[float(x) for x in row] for row in self._embed([r.text for r in missing])]
        except Exception:  # propagation is best effort: fall back to the lexical path
            log.warning("embedding propagation disabled: the embedder failed", exc_info=True)
            self._embed = None
            return
        if len(rows) != len(missing):
            log.warning("embedding propagation disabled: the embedder returned a wrong count")
            self._embed = None
            return
        for record, row in zip(missing, rows, strict=True):
            self._cache[record.id] = row

    def get(self, memory_id: str) -> list[float] | None:
        return self._cache.get(memory_id) if self._embed is not None else None


def _propagate(
    store: StorageProvider,
    sources: Sequence[MemoryRecord],
    run: _RewardRun,
    *,
    policy: LearningConfig,
    embed: EmbedFn | None,
) -> list[RewardUpdate]:
    """Spread a share of the verdict's reward (``propagation_factor``) to the memories like
    ``sources`` recalled within the lookback: each source's ``fanout`` most similar ones of
    its scope, each memory rewarded once (for its first source)."""
    factor, fanout = policy.propagation_factor, policy.fanout
    if not math.isfinite(factor) or factor <= 0 or fanout <= 0:
        return []
    recent = recent_recall_times(store, now=run.now, lookback_days=policy.lookback_days)
    if not recent:
        return []
    scheduled = _propagation_targets(store, sources, recent, run.now, policy, _Vectors(embed))
    signal = propagated_signal(run.reward, factor)
    label = run.verdict + PROPAGATED_SUFFIX
    return [
        write_q(
            store,
            cand,
            verdict=label,
            signal=signal,
            eta=policy.learning_rate,
            now=run.now,
            run_id=run.run_id,
            unit_id=run.unit_id,
            synthesis={**run.context, "sourceMemoryId": source_id, "similarity": sim},
            source_id=source_id,
            similarity=sim,
        )
        for cand, source_id, sim in scheduled.values()
    ]


def _propagation_targets(
    store: StorageProvider,
    sources: Sequence[MemoryRecord],
    recent: Collection[str],
    now: str,
    policy: LearningConfig,
    vectors: _Vectors,
) -> dict[str, tuple[MemoryRecord, str, float]]:
    """Per memory to reward: the memory, its first source (by id) and their similarity;
    candidates are the other recently recalled memories of each source's scope."""
    direct = {r.id for r in sources}
    by_scope: dict[str, list[MemoryRecord]] = {}
    token_keys: dict[str, array[int]] = {}  # text -> its Jaccard token keys, made once
    scheduled: dict[str, tuple[MemoryRecord, str, float]] = {}
    for source in sorted(sources, key=lambda r: r.id):
        scope_key = source.scope.key
        if scope_key not in by_scope:
            by_scope[scope_key] = store.list(ListFilter(now=now, scope_keys=(scope_key,)))
        pool = [c for c in by_scope[scope_key] if c.id not in direct and c.id in recent]
        if not pool:
            continue
        similarity = _similarities(source, pool, policy, token_keys, vectors)
        ranked = sorted(
            (c for c in pool if c.id in similarity), key=lambda c: (-similarity[c.id], c.id)
        )
        for cand in ranked[: int(policy.fanout)]:
            if cand.id not in scheduled:
                scheduled[cand.id] = (cand, source.id, similarity[cand.id])
    return scheduled


def _similarities(
    source: MemoryRecord,
    pool: Sequence[MemoryRecord],
    policy: LearningConfig,
    token_keys: dict[str, array[int]],
    vectors: _Vectors,
) -> dict[str, float]:
    """Per candidate of ``pool`` like ``source``: its token overlap (a candidate of the same
    kind, at least ``token_overlap_threshold``) or, when higher, its embedding cosine (any
    kind, at least ``embedding_cosine_threshold``; with embeddings)."""
    similarity: dict[str, float] = {}
    same_kind = [c for c in pool if c.kind == source.kind]
    if same_kind:
        overlaps = jaccard.jaccard_keys(
            _keys_of(token_keys, source.text), [_keys_of(token_keys, c.text) for c in same_kind]
        )
        for cand, overlap in zip(same_kind, overlaps, strict=True):
            if overlap >= policy.token_overlap_threshold:
                similarity[cand.id] = overlap
    if vectors.active:
        vectors.ensure([source, *pool])
        src_vec = vectors.get(source.id)
        for cand in pool:
            cand_vec = vectors.get(cand.id)
            if src_vec is None or cand_vec is None:
                break
            sim = cosine(src_vec, cand_vec)
            if sim >= policy.embedding_cosine_threshold:
                similarity[cand.id] = max(sim, similarity.get(cand.id, -math.inf))
    return similarity


def _keys_of(token_keys: dict[str, array[int]], text: str) -> array[int]:
    """The Jaccard token keys of ``text``, made once per text."""
    found = token_keys.get(text)
    if found is None:
        found = token_keys[text] = jaccard.token_keys(text)
    return found


def reward_source(event: RewardEvent) -> str:
    """What wrote a reward event: ``outcome``, ``propagated`` or ``verdict``."""
    synthesis = event.verdict_synthesis
    if isinstance(synthesis, Mapping) and synthesis.get("source") == SOURCE_OUTCOME:
        return SOURCE_OUTCOME
    return "propagated" if event.verdict.endswith(PROPAGATED_SUFFIX) else "verdict"


def recall_counts(usage: Iterable[RecallUsage]) -> dict[str, int]:
    """How many recall-usage rows list each memory id (a row counts once per id)."""
    counts: dict[str, int] = {}
    for row in usage:
        for mid in set(row.memory_ids):
            counts[mid] = counts.get(mid, 0) + 1
    return counts


def is_promotion_candidate(
    record: MemoryRecord, recalls: int, policy: LearningConfig | None = None
) -> bool:
    """Active, ``q > promotionThreshold`` and recalled more than ``promotion_min_recalls``."""
    policy = policy or LearningConfig()
    return (
        record.active
        and record.q > policy.promotion_threshold
        and recalls > policy.promotion_min_recalls
    )

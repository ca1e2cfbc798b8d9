"""The results of the facade's reports and maintenance calls.

Each is a frozen attrs class whose fields are the result's parts; :meth:`Result.to_json`
gives the stable JSON form the CLI's ``--json`` and the MCP tools print (the keys are the
field names, in field order). Entries of a report's lists stay plain JSON objects: they are
what a reviewer reads and what the JSON carries, field for field.

A field marked :data:`OPTIONAL` is left out of the JSON while it is ``None`` (a key the JSON
has only sometimes, such as a purge's ``scrubbed`` counts).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import attrs

Entries = list[dict[str, Any]]
"""A report's list of entries, each a JSON object."""

OPTIONAL = {"optional": True}
"""Field metadata: the key is left out of the JSON while the value is ``None``."""


def _kept(field: attrs.Attribute[Any], value: Any) -> bool:
    return not (value is None and field.metadata.get("optional"))


@attrs.frozen(kw_only=True)
class Result:
    """A result with a JSON form; ``SUCCESS`` results start it with ``"success": true``."""

    SUCCESS: ClassVar[bool] = False

    def to_json(self) -> dict[str, Any]:
        """The JSON object of this result (nested results become objects too)."""
        data = attrs.asdict(self, filter=_kept)
        return {"success": True, **data} if self.SUCCESS else data


# ----------------------------------------------------------------------------- reports


@attrs.frozen(kw_only=True)
class PendingReport(Result):
    """Pending proposals (oldest first), rejected and policy-decided ones (newest first) and
    the memories that qualify for promotion; each list holds at most ``limit`` entries and
    its ``*_count`` says how many there are."""

    limit: int
    pending_count: int
    rejected_count: int
    promotion_candidate_count: int
    pending: Entries
    rejected: Entries
    policy_decided_count: int
    policy_decided: Entries
    promotion_candidates: Entries


@attrs.frozen(kw_only=True)
class RecallLogReport(Result):
    """Recall usage: the recall events scanned, per agent role, the most-recalled memories
    and those never recalled."""

    limit: int
    events_scanned: int
    recalled_memory_count: int
    never_recalled_count: int
    by_role: Entries
    most_recalled: Entries
    never_recalled: Entries


@attrs.frozen(kw_only=True)
class ValueLogReport(Result):
    """Per-memory Q-values, statuses and recent rewards; the ids of promotion candidates and
    of suppressed memories."""

    limit: int
    reward_events_scanned: int
    memory_count: int
    memories: Entries
    promotion_candidates: list[str]
    suppressed: list[str]


@attrs.frozen(kw_only=True)
class StaleReport(Result):
    """What may be stale, by section: each section lists at most ``limit`` entries and its
    ``*_count`` says how many there are."""

    SECTIONS: ClassVar[tuple[str, ...]] = (
        "expired_scratch",
        "deleted_tombstones",
        "superseded_chains",
        "structurally_stale",
        "low_utility",
        "low_learned_utility",
        "evidence_changed",
        "evidence_missing",
    )

    limit: int
    active_count: int
    expired_scratch_count: int
    deleted_tombstones_count: int
    superseded_chains_count: int
    structurally_stale_count: int
    low_utility_count: int
    low_learned_utility_count: int
    evidence_changed_count: int
    evidence_missing_count: int
    expired_scratch: Entries
    deleted_tombstones: Entries
    superseded_chains: Entries
    structurally_stale: Entries
    low_utility: Entries
    low_learned_utility: Entries
    evidence_changed: Entries
    evidence_missing: Entries


@attrs.frozen(kw_only=True)
class EvidenceReport(Result):
    """The active memories whose cited files changed or are gone (``checked`` memories cite
    files), and the proposals a ``verify --propose`` filed for them."""

    SUCCESS = True

    checked: int
    changed_count: int
    missing_count: int
    changed: Entries
    missing: Entries
    proposals: Entries = attrs.field(factory=list)


@attrs.frozen(kw_only=True)
class EvidenceFreshness(Result):
    """What one memory's evidence says now: the memory's ``status`` as recall and ``verify``
    read it (``fresh``, ``changed``, ``missing`` or ``unverified``), each evidence ref it was
    written from with the status of the file it names (``refs``: ``ref``, ``status``; a ref
    naming no fingerprinted file, such as a URL or a commit, is ``unverified``), and each
    fingerprinted file (``files``: ``path``, ``ref`` (as cited: ``path#symbol``,
    ``path:START-END`` or ``path``), ``symbol``, ``status``, and ``diff``: the lines
    that changed in what it cites, when they were kept)."""

    SUCCESS = True

    memory_id: str
    status: str
    refs: Entries
    files: Entries


@attrs.frozen(kw_only=True)
class SessionList(Result):
    """The sessions (runs) with a run log, newest first: per session its id and what its
    log records (``events``, ``first_at``, ``last_at``, ``briefed``, ``injections``,
    ``skipped``, ``tokens_injected``, ``memories_injected``, ``proposals_filed``); at most
    ``limit`` of ``session_count``."""

    SUCCESS = True

    limit: int
    session_count: int
    sessions: Entries


@attrs.frozen(kw_only=True)
class SessionTimeline(Result):
    """One session's run log in order: each event normalized (``type``, ``timestamp``,
    ``host``, ``hook_event``, ``memory_ids``, ``scores``, ``tokens``, ``dense``, ``reason``,
    ``query_terms``, ``query``, ``proposal_ids``, ``rejected``, ``error``), and the
    ``summary`` a :class:`SessionList` gives it."""

    SUCCESS = True

    session_id: str
    summary: dict[str, Any]
    events: Entries


@attrs.frozen(kw_only=True)
class CompactionReport(Result):
    """What compaction removes, by class (sorted ids); ``mode`` is ``dry-run`` (nothing
    removed) or ``confirmed``."""

    mode: Literal["dry-run", "confirmed"]
    deleted_tombstones: list[str]
    superseded_records: list[str]
    expired_scratch: list[str]
    counts: dict[str, int]
    removable: int
    removed: int
    remaining_memories: int


@attrs.frozen(kw_only=True)
class ConsolidationResult(Result):
    """The ``merge`` and ``supersede`` proposals a consolidation filed."""

    SUCCESS = True

    merge_count: int
    supersede_count: int
    proposals: Entries


# ------------------------------------------------------------------- memories, proposals


@attrs.frozen(kw_only=True)
class MemoryDetails(Result):
    """One memory with its provenance, outcome events, Q history, merge relations, the
    proposals that concern it and the audit events that touched it."""

    SUCCESS = True

    memory_id: str
    state: str
    record: dict[str, Any]
    provenance: dict[str, Any]
    outcomes: Entries
    q_value: float | None
    q_history: Entries
    relations: list[str]
    proposals: list[str]
    audit: Entries


@attrs.frozen(kw_only=True)
class ProposalDetails(Result):
    """One proposal: what it proposes, who proposed it and how long ago, what it needs
    before it can become memory, the memories it resembles, its audit events and, once a
    decision wrote memory, the memory it wrote (``written``: id, state and the text applied,
    which a person's edit may have rephrased; ``None`` otherwise)."""

    SUCCESS = True

    proposal_id: str
    proposal: dict[str, Any]
    proposed_by: dict[str, Any]
    age: str
    needs_rephrasing: list[str]
    similar: Entries
    audit: Entries
    written: dict[str, Any] | None = None


@attrs.frozen(kw_only=True)
class MemoryHistoryReport(Result):
    """What happened to one memory (:mod:`swarmmem.core.maintenance.history`): the chain of
    memories it replaced and that replaced it, the proposals about it with their decisions,
    the recalls that returned it (newest first, at most ``limit``, of ``recall_count``
    found among the ``recalls_read`` newest usage rows naming it) and the injections of it
    in the newest ``sessions_read`` sessions' run logs."""

    SUCCESS = True

    memory_id: str
    limit: int
    chain: Entries
    decisions: Entries
    recall_count: int
    recalls_read: int
    recalls: Entries
    injection_count: int
    injections: Entries
    sessions_read: int


@attrs.frozen(kw_only=True)
class ReviewQueue(Result):
    """The pending proposals a person reviews, oldest first (at most ``limit``; their audit
    events are left out: a pending proposal's only event is its filing), and how many are
    pending in all."""

    SUCCESS = True

    limit: int
    pending_count: int
    proposals: list[ProposalDetails]


@attrs.frozen(kw_only=True)
class UndoResult(Result):
    """An undone decision: the memory its ``add`` had written and was forgotten (``None``
    for a rejection) and the pending copy of the proposal filed for a new decision."""

    SUCCESS = True

    proposal_id: str
    forgotten_memory_id: str | None
    refiled_proposal_id: str
    refiled_status: str


@attrs.frozen(kw_only=True)
class EmbeddingRebuild(Result):
    """A re-embedding of every active durable memory: how many were embedded and failed,
    whether the stored model version ``advanced`` (nothing failed), the vectors that were
    missing before and those of records gone, whether they were of another model, and the
    approximate index rebuilt when its build options differed (``ann_index``); or, when no
    embedder is available, only the counts and the ``reason``."""

    rebuilt: int
    failed: int
    advanced: bool
    model_version: str | None = attrs.field(default=None, metadata=OPTIONAL)
    missing_before: int | None = attrs.field(default=None, metadata=OPTIONAL)
    stale_removed: int | None = attrs.field(default=None, metadata=OPTIONAL)
    outdated_model: bool | None = attrs.field(default=None, metadata=OPTIONAL)
    ann_index: dict[str, Any] | None = attrs.field(default=None, metadata=OPTIONAL)
    reason: str | None = attrs.field(default=None, metadata=OPTIONAL)


# ---------------------------------------------------------------------------- reflection


@attrs.frozen(kw_only=True)
class Reflection(Result):
    """A regeneration of the lesson files: ``updated`` with the entries and paths written,
    or not, with the ``reason`` (``disabled``, a store too large)."""

    updated: bool
    reason: str | None = attrs.field(default=None, metadata=OPTIONAL)
    entries: int | None = attrs.field(default=None, metadata=OPTIONAL)
    json_path: str | None = attrs.field(default=None, metadata=OPTIONAL)
    md_path: str | None = attrs.field(default=None, metadata=OPTIONAL)


@attrs.frozen(kw_only=True)
class ReflectionStatus(Result):
    """What the lesson regeneration that follows a write did: ``complete``, or ``partial``
    (the write stands) with the ``reflection_error``."""

    status: Literal["complete", "partial"] = "complete"
    partial: bool = False
    reflection_enabled: bool
    reflection_attempted: bool
    reflection_updated: bool = False
    reflection_entries: int | None = attrs.field(default=None, metadata=OPTIONAL)
    reflection_error: str | None = attrs.field(default=None, metadata=OPTIONAL)


@attrs.frozen(kw_only=True)
class ForgetResult(Result):
    """A forgotten memory: the audited ``reason`` (secrets redacted), whether it was purged
    (and, then, the rows ``scrubbed`` per table) and what the lesson refresh did."""

    SUCCESS = True

    memory_id: str
    purged: bool
    reason: str
    scrubbed: dict[str, int] | None = attrs.field(default=None, metadata=OPTIONAL)
    reflection: ReflectionStatus

    def to_json(self) -> dict[str, Any]:
        """The JSON object, the reflection status's keys inline."""
        data = super().to_json()
        reflection = data.pop("reflection")
        return {**data, **reflection}

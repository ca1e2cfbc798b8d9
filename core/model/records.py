"""Value objects of the memory data model.

All are ``@attrs.frozen(kw_only=True)``; validators enforce the per-field rules of the record
schema and raise :class:`~swarmmem.core.model.errors.MemoryValidationError` naming the field.
Cross-field write rules (content hash, evidence, scratch expiry, secrets) live in
:mod:`swarmmem.core.writes.validation`, the single write funnel. The JSON shape used on disk is
produced by :mod:`swarmmem.core.model.codec`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.ids import (
    content_hash,
    is_iso_datetime,
    memory_id_for_hash,
    stable_scope_key,
)

MEMORY_KINDS: tuple[str, ...] = (
    "user_preference",
    "project_fact",
    "architecture_decision",
    "repo_convention",
    "api_finding",
    "code_pattern",
    "test_pattern",
    "failure_pattern",
    "security_note",
    "evidence",
    "todo",
    "scratch",
)


def unknown_kinds(kinds: Iterable[object]) -> MemoryValidationError:
    """The error for ``kinds`` that are no memory kind; it lists the kinds there are."""
    names = ", ".join(repr(kind) if isinstance(kind, str) else str(kind) for kind in kinds)
    return MemoryValidationError(
        f"unknown memory kind {names} (the kinds: {', '.join(MEMORY_KINDS)})"
    )


DURABLE_MEMORY_KINDS: frozenset[str] = frozenset(
    {
        "user_preference",
        "project_fact",
        "architecture_decision",
        "repo_convention",
        "code_pattern",
        "test_pattern",
        "failure_pattern",
        "security_note",
    }
)
EVIDENCE_REQUIRED_KINDS: frozenset[str] = frozenset({"api_finding", "evidence", "security_note"})
SCOPE_TYPES: tuple[str, ...] = (
    "global_user",
    "workspace",
    "project",
    "repository",
    "run",
    "agent",
    "cohort",
)
STABILITIES: tuple[str, ...] = ("ephemeral", "session", "durable")
SOURCE_TYPES: tuple[str, ...] = (
    "user",
    "agent",
    "tool",
    "file",
    "repo",
    "commit",
    "test",
    "web",
    "manual",
)
PROPOSAL_OPERATIONS: tuple[str, ...] = ("add", "update", "delete", "ignore", "merge", "supersede")
PROPOSAL_STATUSES: tuple[str, ...] = ("pending", "approved", "rejected", "superseded", "applied")
REVIEWERS: tuple[str, ...] = ("user", "controller", "curator_agent", "auto_policy")
OUTCOMES: tuple[str, ...] = ("useful", "dead_end", "corrected")
RECALL_MODES: tuple[str, ...] = ("manual", "injection", "curator", "evaluation")
CURATOR_ACTIONS: tuple[str, ...] = (
    "add",
    "update",
    "merge",
    "supersede",
    "delete",
    "reject",
    "noop",
)
MAX_MEMORY_TEXT_LENGTH = 2000
MAX_TAGS = 32
MAX_TAG_LENGTH = 64
MAX_ANCHORS = 20
MAX_OUTCOMES = 1000


def _fail(name: str, message: str) -> MemoryValidationError:
    return MemoryValidationError(f"{name}: {message}")


def _one_of(choices: tuple[str, ...]) -> Any:
    def check(_inst: object, attr: attrs.Attribute[Any], value: object) -> None:
        if value not in choices:
            raise _fail(attr.name, f"must be one of {', '.join(choices)}; got {value!r}")

    return check


def _opt_str(lo: int = 1, hi: int = 100_000) -> Any:
    def check(_inst: object, attr: attrs.Attribute[Any], value: object) -> None:
        if value is None:
            return
        if not isinstance(value, str) or not lo <= len(value) <= hi:
            raise _fail(attr.name, f"must be a string of {lo}..{hi} characters; got {value!r:.80}")

    return check


def _req_str(lo: int = 1, hi: int = 100_000) -> Any:
    inner = _opt_str(lo, hi)

    def check(inst: object, attr: attrs.Attribute[Any], value: object) -> None:
        if value is None:
            raise _fail(attr.name, "is required")
        inner(inst, attr, value)

    return check


def _opt_iso(_inst: object, attr: attrs.Attribute[Any], value: object) -> None:
    if value is not None and not is_iso_datetime(value):
        raise _fail(attr.name, f"must be an ISO-8601 datetime; got {value!r:.80}")


def _req_iso(inst: object, attr: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        raise _fail(attr.name, "is required")
    _opt_iso(inst, attr, value)


def _unit_float(_inst: object, attr: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok or not math.isfinite(float(value)) or not 0.0 <= float(value) <= 1.0:  # type: ignore[arg-type]
        raise _fail(attr.name, f"must be a number between 0 and 1; got {value!r}")


def _str_tuple(max_items: int, lo: int, hi: int) -> Any:
    def check(_inst: object, attr: attrs.Attribute[Any], value: object) -> None:
        if value is None:
            return
        if not isinstance(value, tuple) or len(value) > max_items:
            raise _fail(attr.name, f"must hold at most {max_items} strings")
        for item in value:
            if not isinstance(item, str) or not lo <= len(item) <= hi:
                raise _fail(
                    attr.name, f"items must be strings of {lo}..{hi} characters; got {item!r:.80}"
                )

    return check


def _tuple(value: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(value)


def _opt_tuple(value: Any) -> tuple[Any, ...] | None:
    return None if value is None else tuple(value)


def _mapping(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise MemoryValidationError(f"metadata: must be an object; got {type(value).__name__}")
    return dict(value)


@attrs.frozen(kw_only=True)
class MemoryScope:
    """Where a memory belongs: a repository, workspace, run, agent, ... of one context."""

    type: str = attrs.field(validator=_one_of(SCOPE_TYPES))
    user_id: str | None = attrs.field(default=None, validator=_opt_str())
    workspace_id: str | None = attrs.field(default=None, validator=_opt_str())
    project_id: str | None = attrs.field(default=None, validator=_opt_str())
    repo_id: str | None = attrs.field(default=None, validator=_opt_str())
    repo_root: str | None = attrs.field(default=None, validator=_opt_str())
    run_id: str | None = attrs.field(default=None, validator=_opt_str())
    agent_id: str | None = attrs.field(default=None, validator=_opt_str())
    cohort_id: str | None = attrs.field(default=None, validator=_opt_str())

    def as_dict(self) -> dict[str, str]:
        """The camelCase JSON form (only fields that are set, in schema order)."""
        out: dict[str, str] = {"type": self.type}
        for name, key in _SCOPE_JSON_KEYS:
            value = getattr(self, name)
            if value is not None:
                out[key] = value
        return out

    @property
    def key(self) -> str:
        """The stable scope key used for storage and scope filters."""
        return _scope_key(self)


@functools.lru_cache(maxsize=4096)
def _scope_key(scope: MemoryScope) -> str:
    """:attr:`MemoryScope.key`, kept per scope value (a recall asks it of the same few
    scopes many times, and a scope is immutable)."""
    return stable_scope_key(scope.as_dict())


_SCOPE_JSON_KEYS: tuple[tuple[str, str], ...] = (
    ("user_id", "userId"),
    ("workspace_id", "workspaceId"),
    ("project_id", "projectId"),
    ("repo_id", "repoId"),
    ("repo_root", "repoRoot"),
    ("run_id", "runId"),
    ("agent_id", "agentId"),
    ("cohort_id", "cohortId"),
)


@attrs.frozen(kw_only=True)
class MemorySource:
    """Where a fact came from; ``url``, ``file_path``, ``commit_sha`` or ``ref`` are evidence."""

    type: str = attrs.field(validator=_one_of(SOURCE_TYPES))
    ref: str | None = attrs.field(default=None, validator=_opt_str(0))
    url: str | None = attrs.field(default=None, validator=_opt_str(0))
    file_path: str | None = attrs.field(default=None, validator=_opt_str(0))
    commit_sha: str | None = attrs.field(default=None, validator=_opt_str(0))
    created_by: str | None = attrs.field(default=None, validator=_opt_str(0))

    @property
    def has_evidence(self) -> bool:
        """True when the source points at something a reviewer can check."""
        return bool(self.url or self.file_path or self.commit_sha or self.ref)

    @property
    def locator(self) -> str | None:
        """The most specific pointer (file path, url, commit or ref), if any."""
        return self.file_path or self.url or self.commit_sha or self.ref or None


@attrs.frozen(kw_only=True)
class Anchor:
    """A repository-relative file (and optional symbol) that a memory or outcome refers to."""

    file: str = attrs.field(validator=_req_str(1, 512))
    symbol: str | None = attrs.field(default=None, validator=_opt_str(1, 256))


@attrs.frozen(kw_only=True)
class OutcomeEntry:
    """One reported outcome of using a memory."""

    outcome: str = attrs.field(validator=_one_of(OUTCOMES))
    at: str = attrs.field(validator=_req_iso)
    task_id: str | None = attrs.field(default=None, validator=_opt_str(1, 256))
    correction: str | None = attrs.field(default=None, validator=_opt_str(1, 4000))

    def __attrs_post_init__(self) -> None:
        if self.outcome != "corrected" and self.correction is not None:
            raise MemoryValidationError("correction text is only valid for corrected outcomes")


@attrs.frozen(kw_only=True)
class Relation:
    """A derived relation to another memory (only ``merged_with`` exists)."""

    memory_id: str
    type: str = "merged_with"


@attrs.frozen(kw_only=True)
class MemoryRecord:
    """A stored memory: one concise, scoped, source-backed fact."""

    id: str = attrs.field(validator=_req_str())
    scope: MemoryScope
    kind: str = attrs.field(validator=_one_of(MEMORY_KINDS))
    text: str = attrs.field(validator=_req_str(1, MAX_MEMORY_TEXT_LENGTH))
    tags: tuple[str, ...] = attrs.field(
        converter=_tuple, validator=_str_tuple(MAX_TAGS, 1, MAX_TAG_LENGTH)
    )
    confidence: float = attrs.field(validator=_unit_float)
    stability: str = attrs.field(validator=_one_of(STABILITIES))
    source: MemorySource
    created_at: str = attrs.field(validator=_req_iso)
    updated_at: str = attrs.field(validator=_req_iso)
    content_hash: str = attrs.field(validator=_req_str(64, 64))
    metadata: dict[str, Any] = attrs.field(factory=dict, converter=_mapping, eq=True, hash=False)
    last_accessed_at: str | None = attrs.field(default=None, validator=_opt_iso)
    expires_at: str | None = attrs.field(default=None, validator=_opt_iso)
    q_value: float | None = attrs.field(default=None, validator=_unit_float)
    supersedes: tuple[str, ...] | None = attrs.field(default=None, converter=_opt_tuple)
    superseded_by: str | None = attrs.field(default=None, validator=_opt_str())
    relations: tuple[Relation, ...] = attrs.field(default=(), converter=_tuple)
    anchors: tuple[Anchor, ...] | None = attrs.field(default=None, converter=_opt_tuple)
    outcomes: tuple[OutcomeEntry, ...] | None = attrs.field(default=None, converter=_opt_tuple)
    cohort_id: str | None = None
    producer_session_id: str | None = None
    producer_agent_role: str | None = None
    redaction_policy_version: int | None = None
    schema_version: int | None = None
    provider_version: str | None = None
    source_revision: str | None = None
    source_task_id: str | None = None
    embedding_model_version: str | None = None
    valid_from: str | None = attrs.field(default=None, validator=_opt_iso)
    supersedes_reason: str | None = None
    #: what recall derives from this record (``core.recall.rows.derived``), computed once
    #: per record object; not part of its value (no init, eq or repr; ``evolve`` drops it)
    _derived: Any = attrs.field(default=None, init=False, eq=False, repr=False)

    @anchors.validator
    def _check_anchors(self, _attr: attrs.Attribute[Any], value: tuple[Anchor, ...] | None) -> None:
        if value is not None and len(value) > MAX_ANCHORS:
            raise MemoryValidationError(f"anchors: at most {MAX_ANCHORS} anchors are accepted")

    @outcomes.validator
    def _check_outcomes(
        self, _attr: attrs.Attribute[Any], value: tuple[OutcomeEntry, ...] | None
    ) -> None:
        if value is not None and len(value) > MAX_OUTCOMES:
            raise MemoryValidationError("memory outcome limit exceeded")

    @property
    def deleted(self) -> bool:
        """True for a tombstone."""
        return self.metadata.get("deleted") is True

    @property
    def active(self) -> bool:
        """Neither deleted nor superseded (expiry is checked separately, against a clock)."""
        return not self.deleted and not self.superseded_by

    @property
    def q(self) -> float:
        """The learned value in [0, 1] (``metadata.qValue``), 0.5 when unset or invalid."""
        return q_value_of(self.metadata)


def identified_record(*, scope: MemoryScope, kind: str, text: str, **fields: Any) -> MemoryRecord:
    """A new record whose id and content hash derive from its scope, kind and (normalised)
    ``text``, as every memory's do; ``fields`` are its other attributes."""
    digest = content_hash(scope.as_dict(), kind, text)
    return MemoryRecord(
        id=memory_id_for_hash(digest),
        scope=scope,
        kind=kind,
        text=text,
        content_hash=digest,
        **fields,
    )


def q_value_of(metadata: Mapping[str, Any], fallback: float = 0.5) -> float:
    """``metadata.qValue`` when it is a finite number in [0, 1], else ``fallback``."""
    value = metadata.get("qValue")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return fallback
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        return fallback
    return float(value)


@attrs.frozen(kw_only=True)
class ProposedBy:
    """Who proposed a memory change."""

    agent_role: str | None = None
    agent_id: str | None = None
    run_id: str | None = None


@attrs.frozen(kw_only=True)
class MemoryProposal:
    """A proposed memory change awaiting a curator decision."""

    id: str = attrs.field(validator=_req_str())
    operation: str = attrs.field(validator=_one_of(PROPOSAL_OPERATIONS))
    rationale: str = attrs.field(validator=_req_str(1, 2000))
    status: str = attrs.field(validator=_one_of(PROPOSAL_STATUSES))
    created_at: str = attrs.field(validator=_req_iso)
    proposed_by: ProposedBy = attrs.field(factory=ProposedBy)
    proposed_record: MemoryRecord | None = None
    target_memory_id: str | None = None
    related_memory_ids: tuple[str, ...] | None = attrs.field(default=None, converter=_opt_tuple)
    evidence_refs: tuple[str, ...] = attrs.field(
        default=(), converter=_tuple, validator=_str_tuple(20, 1, 500)
    )
    reviewer: str | None = attrs.field(default=None)
    reviewed_at: str | None = attrs.field(default=None, validator=_opt_iso)
    rejection_reason: str | None = None
    metadata: dict[str, Any] = attrs.field(factory=dict, converter=_mapping, hash=False)

    @reviewer.validator
    def _check_reviewer(self, attr: attrs.Attribute[Any], value: str | None) -> None:
        if value is not None:
            _one_of(REVIEWERS)(self, attr, value)


@attrs.frozen(kw_only=True)
class RecallRequest:
    """A scoped recall query as the provider sees it (scopes already checked)."""

    query: str
    scopes: tuple[MemoryScope, ...] = attrs.field(converter=_tuple)
    task: str | None = None
    agent_role: str | None = None
    mode: str = attrs.field(default="manual", validator=_one_of(RECALL_MODES))
    kinds: tuple[str, ...] | None = attrs.field(default=None, converter=_opt_tuple)
    max_items: int = 8
    token_budget: int = 1200
    min_score: float | None = None
    #: the relevance admission requires (the default profiles; ``None``: 0)
    min_relevance: float | None = None
    #: the default profiles' recency half-life in days (``None``: the configuration's
    #: default, ``recall.recencyHalfLifeDays``)
    recency_half_life_days: float | None = None
    require_query_signal: bool | None = None
    include_expired: bool = False
    include_low_q: bool = False
    candidate_cap: int | None = None
    profile: str | None = None


@attrs.frozen(kw_only=True)
class RecallSignals:
    """The per-item overlap signals a ranking was built from."""

    text_overlap: float
    tag_overlap: float
    file_overlap: float
    symbol_overlap: float
    kind_match: bool
    scope_match: bool


NO_SIGNALS = RecallSignals(
    text_overlap=0.0,
    tag_overlap=0.0,
    file_overlap=0.0,
    symbol_overlap=0.0,
    kind_match=False,
    scope_match=True,
)
"""The signals of an item that no query matched (a dense-only hit, a session brief)."""


@attrs.frozen(kw_only=True)
class RecallItem:
    """One recalled memory with its score and the reason for it."""

    record: MemoryRecord
    score: float
    reason: str
    signals: RecallSignals
    base_score: float = 0.0
    relation: Relation | None = None
    related_from: str | None = None
    explored: bool = False
    #: whether the files the memory cites still match: ``fresh``, ``changed``, ``missing``
    #: or ``unverified`` (``None``: not checked, as in the reference profile)
    evidence_status: str | None = None

    def with_evidence(self, status: str | None) -> RecallItem:
        """This item with ``evidence_status`` set to ``status``: ``attrs.evolve`` without its
        keyword round trip (it runs for every returned item of a recall; the class has no
        validators to run again)."""
        if status == self.evidence_status:
            return self
        item = object.__new__(RecallItem)
        for name in _ITEM_FIELDS:
            object.__setattr__(item, name, getattr(self, name))
        object.__setattr__(item, "evidence_status", status)
        return item


_ITEM_FIELDS = tuple(field.name for field in attrs.fields(RecallItem))


@attrs.frozen(kw_only=True)
class RecallBundle:
    """The result of a recall: ranked items, the prompt block and diagnostics."""

    id: str
    query: str
    generated_at: str
    items: tuple[RecallItem, ...] = attrs.field(converter=_tuple)
    token_estimate: int
    prompt_block: str
    diagnostics: dict[str, Any] = attrs.field(factory=dict, hash=False)


@attrs.frozen(kw_only=True)
class CuratorDecision:
    """A curator's decision about one pending proposal."""

    action: str = attrs.field(validator=_one_of(CURATOR_ACTIONS))
    proposal_id: str = attrs.field(validator=_req_str())
    reason: str | None = attrs.field(default=None, validator=_opt_str(1, 2000))
    memory: MemoryRecord | None = None
    target_memory_id: str | None = None
    patch: dict[str, Any] | None = None
    old_memory_id: str | None = None
    replacement: MemoryRecord | None = None
    related_memory_ids: tuple[str, ...] | None = attrs.field(default=None, converter=_opt_tuple)
    #: the fields of the proposed memory the curator rewrote (``text``, ``kind``, ``tags``)
    rewritten: tuple[str, ...] | None = attrs.field(default=None, converter=_opt_tuple)
    #: who decided: a curator (the default) or the opt-in curation policy (``auto_policy``)
    reviewer: str = attrs.field(default="curator_agent", validator=_one_of(REVIEWERS))


@attrs.frozen(kw_only=True)
class AppliedChange:
    """What a curator decision changed in storage."""

    action: str
    proposal_id: str
    memory_id: str | None = None
    target_memory_id: str | None = None
    old_memory_id: str | None = None
    replacement_memory_id: str | None = None
    related_memory_ids: tuple[str, ...] | None = None
    reason: str | None = None
    applied_at: str = ""
    rewritten: tuple[str, ...] | None = None

"""The write side as a use case: propose, curate, report outcomes, ingest task output.

:class:`WriteService` validates every write, binds it to the context's scopes, redacts secrets
and enforces the evidence, PII and secret policies. Agents only propose; durable memory is
written by curator decisions (:mod:`.curator`), in one transaction each.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from swarmmem.core.config import RedactionConfig
from swarmmem.core.model.errors import (
    ConflictError,
    MemoryPiiRejectedError,
    MemoryValidationError,
    NotFoundError,
    SwarmMemoryError,
)
from swarmmem.core.model.events import OutcomeEntry, OutcomeEvent
from swarmmem.core.model.evidence import EVIDENCE_REF_PREFIX
from swarmmem.core.model.ids import MEMORY_ID_RE, proposal_id, to_iso
from swarmmem.core.model.records import (
    CURATOR_ACTIONS,
    Anchor,
    AppliedChange,
    CuratorDecision,
    MemoryProposal,
    MemoryRecord,
    MemoryScope,
    MemorySource,
    ProposedBy,
)
from swarmmem.core.model.roles import is_curator_role
from swarmmem.core.model.scopes import (
    MemoryContext,
    check_writable,
    writable_scopes,
    write_scope,
)
from swarmmem.core.model.text import check_json_texts, check_text, check_texts
from swarmmem.core.writes.curator import apply_patch
from swarmmem.core.writes.importing import ImportResult, import_records
from swarmmem.core.writes.intake import (
    NEEDS_RECORD,
    ProposalFields,
    check_proposal_args,
    check_record_args,
    check_targets,
    edited_refs,
    json_objects,
    new_proposal,
    proposal_fields,
    rewrite_fields,
)
from swarmmem.core.writes.outcome_events import (
    MAX_ANCHORS,
    OUTCOME_QUESTION_PREFIX,
    append_outcome,
    check_outcome_args,
    outcome_result,
    parse_anchors,
    tool_event_id,
)
from swarmmem.core.writes.policy import CurationPolicy
from swarmmem.core.writes.proposals import (
    create_record,
    extract_file_paths,
    extract_symbols,
    source_from_evidence,
)
from swarmmem.core.writes.similar import with_duplicates
from swarmmem.core.writes.task_output import ingest_task_output
from swarmmem.core.writes.validation import check_sentinels, validate_record
from swarmmem.ports.clock import Clock
from swarmmem.ports.detectors import PiiDetector, PiiFindings, SecretDetector
from swarmmem.ports.evidence import SourceChecker
from swarmmem.ports.storage import StorageProvider

#: the names other modules import from here (the outcome and intake steps live in
#: :mod:`.outcome_events` and :mod:`.intake`)
__all__ = [
    "MAX_ANCHORS",
    "WritePolicy",
    "WriteService",
    "json_objects",
    "tool_event_id",
]

log = logging.getLogger("swarmmem")

#: Ids tried for one proposal before a clash is reported (see ``_create_unique``).
PROPOSAL_ID_ATTEMPTS = 8


#: the ``memory.redaction`` values every write enforces: that node of the configuration tree
WritePolicy = RedactionConfig


class WriteService:
    """Validated, scoped writes to one project's memory for one context; ``written`` is told
    about every record a curator decision or an import wrote (the composition root embeds
    them)."""

    def __init__(
        self,
        store: StorageProvider,
        context: MemoryContext,
        *,
        allowed_scopes: Sequence[MemoryScope],
        clock: Clock,
        secrets: SecretDetector,
        pii: PiiDetector | None = None,
        policy: WritePolicy | None = None,
        known_evidence: Callable[[str], bool] | None = None,
        sources: SourceChecker | None = None,
        curation_policy: CurationPolicy | None = None,
        similar_by_meaning: Callable[[str], list[tuple[str, float]]] | None = None,
        learn: Callable[[OutcomeEvent], object] | None = None,
        written: Callable[[Iterable[MemoryRecord]], object] | None = None,
        workspace_shared: bool = False,
    ) -> None:
        self.store = store
        #: whether writes may land in the workspace scope (``memory.workspace.shared``)
        self.workspace_shared = workspace_shared
        self.known_evidence = known_evidence
        self.sources = sources
        self.curation_policy = curation_policy
        self.similar_by_meaning = similar_by_meaning
        self.learn = learn
        self.written = written or (lambda records: None)
        self.context = context
        self.allowed_scopes = list(allowed_scopes)
        self.clock = clock
        self.secrets = secrets
        self.pii = pii
        self.policy = policy or WritePolicy()

    # ----------------------------------------------------------------- propose
    def _pii(self, text: str) -> PiiFindings | None:
        if not self.policy.detect_pii or self.pii is None:
            return None
        return self.pii.detect(text)

    def _pii_policy(self, findings: PiiFindings | None, what: str) -> None:
        s = self.policy
        if s.reject_durable_pii and findings is not None and findings.score > s.pii_threshold:
            summary = ", ".join(f"{k}x{v}" for k, v in findings.counts_by_type.items())
            message = (
                f"{what} exceeds the PII threshold: score {findings.score:.2f} "
                f"(types: {summary}) exceeded threshold {s.pii_threshold:.2f}"
            )
            try:
                self.store.append_event(
                    "pii_rejected",
                    "pii_rejection",
                    reason=message,
                    event={"types": sorted(findings.counts_by_type), "score": findings.score},
                )
            except Exception:
                log.warning("could not record pii_rejected event", exc_info=True)
            raise MemoryPiiRejectedError(message)

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
        scope: MemoryScope | None = None,
        auto_decide: bool = True,
        proposed_by: ProposedBy | None = None,
    ) -> MemoryProposal:
        """Store a pending proposal (secrets redacted; a redacted proposal is auto-rejected).

        An update without ``kind`` keeps its target's. ``scope`` (one of this context's)
        places the proposed record there instead of the default write scope (a correction's
        update lands in its target's scope);
        ``auto_decide=False`` keeps it for a person even under the curation policy (a
        proposal filed again by an undo); ``proposed_by`` names its proposer when that is not
        this context (such a proposal keeps the one who first proposed it).

        Raises:
            MemoryValidationError: missing fields, missing evidence for durable kinds, etc.
        """
        check_proposal_args(
            operation=operation,
            rationale=rationale,
            kind=kind,
            text=text,
            evidence_refs=evidence_refs,
            target_memory_id=target_memory_id,
            related_memory_ids=related_memory_ids,
            tags=tags,
        )
        fields = proposal_fields(
            self.secrets,
            operation=operation,
            rationale=rationale,
            evidence_refs=evidence_refs,
            target_memory_id=target_memory_id,
            related_memory_ids=related_memory_ids,
            text=text,
            tags=tags,
        )
        self._check_cached_evidence(fields.refs)
        now = self.clock.now()
        record: MemoryRecord | None = None
        pii: PiiFindings | None = None
        if operation == "update" and not kind and fields.target:
            target = self.store.get(fields.target)  # an update keeps its target's kind
            kind = target.kind if target is not None else None
        if operation in NEEDS_RECORD:
            record, pii = self._proposed_record(kind, text, fields, now, confidence, scope)
        check_targets(operation, fields)
        if self.sources is not None and not fields.redacted:
            problems = self.sources.check(fields.refs)  # the cited files, lines, symbols, commits
            if problems:
                raise MemoryValidationError("; ".join(problems))
        by = proposed_by or ProposedBy(
            agent_role=self.context.agent_role,
            agent_id=self.context.agent_id,
            run_id=self.context.effective_run_id,
        )
        return self._file_proposal(operation, text, record, fields, pii, now, auto_decide, by)

    def _proposed_record(
        self,
        kind: str | None,
        text: str | None,
        fields: ProposalFields,
        now: dt.datetime,
        confidence: float | None,
        scope: MemoryScope | None,
    ) -> tuple[MemoryRecord, PiiFindings | None]:
        """The record a proposal proposes, in its write scope, with the files and symbols its
        evidence names, and its PII findings; validated as memory (a durable record over the
        PII threshold is refused when the policy says so)."""
        kind = check_record_args(kind, text)
        metadata: dict[str, Any] = {}
        files = extract_file_paths(fields.refs)
        symbols = extract_symbols(fields.refs)
        if files:
            metadata["files"] = files
        if symbols:
            metadata["symbols"] = symbols
        stability = "ephemeral" if kind == "scratch" else "durable"
        target_scope = write_scope(stability, self.allowed_scopes, scope)
        check_writable(target_scope, self.workspace_shared)
        ctx = self.context
        record = create_record(
            kind=kind,
            text=str(fields.text),
            scope=target_scope,
            now=now,
            tags=fields.tags,
            confidence=confidence,
            source=source_from_evidence(fields.refs, ctx.agent_id or ctx.agent_role),
            metadata=metadata,
            producer_session_id=ctx.session_id,
            producer_agent_role=ctx.agent_role,
            provider_version=self.store.name,
            source_task_id=ctx.unit_id,
        )
        pii = self._pii(record.text)
        if pii is not None and record.stability == "durable":
            self._pii_policy(pii, "durable memory")
        validate_record(
            record, secrets=self.secrets, reject_durable_secrets=self.policy.reject_durable_secrets
        )
        return record, pii

    def _file_proposal(
        self,
        operation: str,
        text: str | None,
        record: MemoryRecord | None,
        fields: ProposalFields,
        pii: PiiFindings | None,
        now: dt.datetime,
        auto_decide: bool,
        proposed_by: ProposedBy,
    ) -> MemoryProposal:
        """Store the checked proposal under an id made of the time, the proposer and its text
        (a duplicate of an active memory or a pending proposal is closed at once), then let
        the curation policy decide it when ``auto_decide``."""
        created_at = to_iso(now)
        ctx = self.context
        proposer = ctx.agent_id or ctx.agent_role or ctx.session_id or "unknown"
        id_text = (
            text if (operation in NEEDS_RECORD and text) else f"{operation}:{fields.target or ''}"
        )
        proposal = new_proposal(
            proposal_id=proposal_id(created_at, proposer, id_text),
            operation=operation,
            record=record,
            fields=fields,
            proposed_by=proposed_by,
            created_at=created_at,
            pii=pii,
        )
        if not fields.redacted and record is not None:
            keys = [scope.key for scope in self.allowed_scopes]
            proposal = with_duplicates(
                self.store, proposal, record, created_at, keys, self.similar_by_meaning
            )
        stored = self._create_unique(proposal, created_at, proposer, id_text)
        return self._auto_decide(stored) if auto_decide else stored

    def _auto_decide(self, proposal: MemoryProposal) -> MemoryProposal:
        """Approve ``proposal`` now when the opt-in curation policy allows it (only with the
        evidence checks on, so its sources were verified)."""
        if self.curation_policy is None or self.sources is None:
            return proposal
        reason = self.curation_policy.approval(proposal)
        if reason is None:
            return proposal
        self.curate(proposal.id, "add", reason=reason, reviewer="auto_policy")
        return self.store.get_proposal(proposal.id) or proposal

    def _create_unique(
        self, proposal: MemoryProposal, created_at: str, proposer: str, id_text: str
    ) -> MemoryProposal:
        """Store ``proposal``; another proposal holding its id (same proposer, text and
        millisecond) gets the next salted id instead of a conflict."""
        for attempt in range(1, PROPOSAL_ID_ATTEMPTS):
            try:
                return self.store.create_proposal(proposal)
            except ConflictError:
                salted = proposal_id(created_at, proposer, f"{id_text}\n#{attempt}")
                proposal = attrs.evolve(proposal, id=salted)
        return self.store.create_proposal(proposal)  # the last try reports a clash

    def _check_cached_evidence(self, refs: Sequence[str]) -> None:
        """Refs into the evidence cache must name a stored document."""
        if self.known_evidence is None:
            return
        unknown = [
            r for r in refs if r.startswith(EVIDENCE_REF_PREFIX) and not self.known_evidence(r)
        ]
        if unknown:
            raise MemoryValidationError(
                f"evidenceRefs cites {', '.join(unknown)}, which the evidence cache does not "
                "hold; add the document first (swarmmem evidence add)"
            )

    # ------------------------------------------------------------------ curate
    def curate(
        self,
        proposal_id: str,
        decision: str,
        *,
        reason: str | None = None,
        patch: Mapping[str, Any] | None = None,
        text: str | None = None,
        kind: str | None = None,
        tags: Sequence[str] | None = None,
        evidence_refs: Sequence[str] | None = None,
        reviewer: str = "curator_agent",
    ) -> AppliedChange:
        """Apply a curator decision to a pending proposal, in one transaction.

        ``add``/``supersede`` promote the proposal's record; ``update`` patches the target
        with the proposal's text (or ``patch``); ``merge`` links the related memories;
        ``delete`` tombstones the target; ``reject``/``noop`` close the proposal. A target
        outside this context's scopes is not found.

        ``text``, ``kind`` and ``tags`` rephrase an ``add`` or ``update``: the memory written
        carries them instead of the proposal's (validated as durable memory), and the audit
        event records which fields the curator rewrote. ``evidence_refs`` replace the
        proposal's refs for an ``add`` or ``update`` (checked as a proposal's are): the memory
        is fingerprinted from them and keeps them (``metadata.evidenceRefs``).

        ``reviewer`` says who decided: ``"user"`` for a person (the CLI's ``curate`` and
        ``review``, the web viewer), ``"curator_agent"`` (the default) for an agent.
        """
        check_text(proposal_id, "proposal_id")
        check_text(reason, "reason")
        check_json_texts(patch, "patch")
        check_text(text, "text")
        check_text(kind, "kind")
        check_texts(tags, "tags")
        rewrite = rewrite_fields(decision, text=text, kind=kind, tags=tags, patch=patch)
        refs = edited_refs(decision, evidence_refs, patch=patch, secrets=self.secrets)
        if decision not in CURATOR_ACTIONS:
            raise MemoryValidationError(
                f"decision must be one of {', '.join(CURATOR_ACTIONS)}; got {decision!r}"
            )
        proposal = self.store.get_proposal(proposal_id)
        if proposal is None:
            raise NotFoundError("memory proposal was not found")
        if proposal.status != "pending":
            raise ConflictError("memory proposal is not pending")
        self._check_proposal_scope(proposal)
        reason = self.secrets.redact(reason) if reason else f"curator {decision}"
        record = proposal.proposed_record
        if record is not None and decision in ("add", "supersede", "update", "merge"):
            check_writable(record.scope, self.workspace_shared)
        fields: dict[str, Any] = {
            "action": decision,
            "proposal_id": proposal_id,
            "reason": reason,
            "reviewer": reviewer,
        }
        rewritten = sorted(k for k in rewrite if k in ("text", "kind", "tags"))
        if refs is not None:
            rewritten.append("evidence")
            problems = self.sources.check(refs) if self.sources is not None else []
            if problems:
                raise MemoryValidationError("; ".join(problems))
        if rewritten:
            fields["rewritten"] = tuple(rewritten)
        fingerprints = self._fingerprints(refs if refs is not None else proposal.evidence_refs)
        cited: dict[str, Any] = {"evidenceFingerprints": fingerprints} if fingerprints else {}
        if refs is not None:
            cited["evidenceRefs"] = list(refs)
        if cited and record is not None and decision in ("add", "supersede"):
            record = attrs.evolve(record, metadata={**record.metadata, **cited})
        if decision == "add":
            if rewrite and record is not None:
                record = apply_patch(record, rewrite, now=to_iso(self.clock.now()))
            fields["memory"] = record
        elif decision == "update":
            fields["target_memory_id"] = proposal.target_memory_id
            target = self.store.get(proposal.target_memory_id or "")
            if refs is None and target is not None and "evidenceRefs" in target.metadata:
                cited["evidenceRefs"] = list(proposal.evidence_refs)  # no longer the edited ones
            base_patch: dict[str, Any] = {"text": record.text} if record else {}
            if cited:
                base_patch["metadata"] = cited
            fields["patch"] = dict(patch) if patch else ({**base_patch, **rewrite} or None)
        elif decision == "delete":
            fields["target_memory_id"] = proposal.target_memory_id
        elif decision == "supersede":
            fields["old_memory_id"] = proposal.target_memory_id
            fields["replacement"] = record
        elif decision == "merge":
            fields["related_memory_ids"] = proposal.related_memory_ids
        change = self.apply_decision(CuratorDecision(**fields))
        written = [i for i in (change.memory_id, change.replacement_memory_id) if i]
        self.written(self.store.get_many(written).values())
        return change

    def _fingerprints(self, refs: Sequence[str]) -> list[dict[str, Any]]:
        """The cited files as they are now (none without a source checker); the cited lines
        a fingerprint keeps are stored with their secrets redacted."""
        found = self.sources.fingerprints(refs) if self.sources is not None else []
        for fp in found:
            if isinstance(fp.get("cited"), str):
                fp["cited"] = self.secrets.redact(fp["cited"])
        return found

    def _check_proposal_scope(self, proposal: MemoryProposal) -> None:
        """A proposal of another repository sharing the store reads as unknown: its proposed
        record, target and related memories must lie in this context's scopes."""
        keys = {s.key for s in self.allowed_scopes}
        record = proposal.proposed_record
        if record is not None and record.scope.key not in keys:
            raise NotFoundError("memory proposal was not found")
        for memory_id in (proposal.target_memory_id, *(proposal.related_memory_ids or ())):
            self._check_target_scope(memory_id)

    def _check_target_scope(self, memory_id: str | None) -> None:
        """A proposal's target must lie in this context's scopes (else it is not found)."""
        target = self.store.get(memory_id) if memory_id else None
        if target is not None and target.scope.key not in {s.key for s in self.allowed_scopes}:
            raise NotFoundError("target memory was not found")

    def refile(self, original: MemoryProposal, rationale: str) -> MemoryProposal:
        """A pending copy of ``original`` (same operation, kind, text, tags, confidence,
        evidence, target and related memories, and proposer) with ``rationale``, left for a
        person (never decided by the curation policy); ``original`` then names the copy
        (``metadata.undoneBy``), so its decision is not undone twice."""
        record = original.proposed_record
        related = original.related_memory_ids
        copy = self.propose(
            auto_decide=False,
            proposed_by=original.proposed_by,
            operation=original.operation,
            kind=record.kind if record is not None else None,
            text=record.text if record is not None else None,
            rationale=rationale[:2000],
            evidence_refs=list(original.evidence_refs),
            target_memory_id=original.target_memory_id,
            related_memory_ids=list(related) if related is not None else None,
            tags=list(record.tags) if record is not None and record.tags else None,
            confidence=record.confidence if record is not None else None,
        )
        current = self.store.get_proposal(original.id) or original
        stamp = to_iso(self.clock.now())
        undone = {**current.metadata, "undoneBy": copy.id, "undoneAt": stamp}
        self.store.update_proposal(attrs.evolve(current, metadata=undone))
        return copy

    def import_records(self, records: Iterable[Mapping[str, Any]]) -> ImportResult:
        """Trusted bulk write of reference-shaped records in one transaction (refusals listed)."""
        result, written = import_records(
            self.store,
            records,
            now=self.clock.now(),
            repo_scope=self.allowed_scopes[1],
            secrets=self.secrets,
            reject_durable_secrets=self.policy.reject_durable_secrets,
            allowed_scopes=writable_scopes(self.allowed_scopes, self.workspace_shared),
        )
        self.written(written)
        return result

    def apply_decision(self, decision: CuratorDecision) -> AppliedChange:
        """Apply a ready curator decision (PII policy first, then the transactional apply)."""
        for candidate in (decision.memory, decision.replacement):
            if candidate is not None and candidate.stability == "durable":
                self._pii_policy(self._pii(candidate.text), "durable memory")
        if decision.patch and isinstance(decision.patch.get("text"), str):
            self._pii_policy(self._pii(decision.patch["text"]), "durable memory")
        from swarmmem.core.writes import curator

        return curator.apply_decision(
            self.store,
            decision,
            now=to_iso(self.clock.now()),
            secrets=self.secrets,
            reject_durable_secrets=self.policy.reject_durable_secrets,
        )

    # ----------------------------------------------------------------- outcome
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
        """Append an outcome event for a memory (or a question's evidence record).

        With a ``learn`` callable (the composition root binds
        :func:`~swarmmem.core.learning.outcomes.apply_outcome`), every accepted event, a
        retried one included, is handed to it in the same transaction (the learner teaches
        each event once). The result keeps its documented keys; ``value-log`` shows what
        was learned.

        Raises:
            MemoryValidationError: the argument rules of ``swarm_memory_outcome``.
            NotFoundError: an unknown ``memory_id``.
        """
        correction = check_outcome_args(
            outcome=outcome,
            memory_id=memory_id,
            question=question,
            correction=correction,
            event_id=event_id,
        )
        anchor_list = parse_anchors(anchors, self.secrets.redact)
        now = self.clock.now()
        if question is not None:
            record = self._question_record(question, now)
        else:
            record = self._outcome_target(memory_id)
        if correction is not None:
            correction = self._screened_correction(correction, record)
        if event_id is not None:
            event_id = self.secrets.redact(event_id)
        entry = OutcomeEntry(
            outcome=outcome,
            at=to_iso(now),
            task_id=self.context.unit_id or None,
            correction=correction or None,
        )
        appended = append_outcome(self.store, record, entry, anchor_list, event_id, self.learn)
        result = outcome_result(self.store, record, appended, outcome)
        if correction is not None and question is None and appended.is_new:
            result.update(self._file_correction(record, correction, anchor_list, appended.event.id))
        return result

    def _outcome_target(self, memory_id: str | None) -> MemoryRecord:
        """The memory an outcome reports on; a malformed id is refused, and an unknown one or
        one outside this context's scopes is not found (a foreign id reads as unknown)."""
        if not isinstance(memory_id, str) or not MEMORY_ID_RE.match(memory_id):
            raise MemoryValidationError(f"memory_id must look like mem_<16 hex>; got {memory_id!r}")
        found = self.store.get(memory_id)
        visible = {scope.key for scope in self.allowed_scopes}
        if found is None or found.scope.key not in visible:
            raise NotFoundError(f"memory {memory_id} was not found")
        return found

    def _screened_correction(self, correction: str, record: MemoryRecord) -> str:
        """An outcome's correction text, redacted; on a durable memory it must pass the PII
        and secret policies of durable memory (it may become that memory's text)."""
        check_sentinels(correction, "outcome correction")
        if record.stability == "durable":
            self._pii_policy(self._pii(correction), "durable memory correction")
            if self.policy.reject_durable_secrets and self.secrets.contains_secret(correction):
                raise MemoryValidationError("durable memory contains a likely secret")
        return self.secrets.redact(correction)

    def _file_correction(
        self, record: MemoryRecord, correction: str, anchors: Sequence[Anchor], event_id: str
    ) -> dict[str, Any]:
        """A pending ``update`` proposal of ``record`` whose text is the correction, with the
        outcome's anchors as evidence (else the memory's own source), naming the outcome event;
        a correction that cannot be proposed is reported, never raised (the outcome stands)."""
        evidence = list(dict.fromkeys(a.file for a in anchors)) or (
            [record.source.locator] if record.source.locator else []
        )
        try:
            prop = self.propose(
                operation="update",
                kind=record.kind,
                text=correction,
                rationale=f"Correction reported with outcome {event_id} on {record.id}.",
                evidence_refs=evidence,
                target_memory_id=record.id,
                scope=record.scope,
            )
        except SwarmMemoryError as exc:
            return {"correction_proposal_id": None, "correction_proposal_error": str(exc)}
        return {"correction_proposal_id": prop.id}

    def _question_record(self, question: str, now: dt.datetime) -> MemoryRecord:
        """The evidence record of a question an outcome reports on (written once, then found
        again)."""
        if not isinstance(question, str) or not question.strip():
            raise MemoryValidationError("question must be a non-empty string")
        q = question.strip()
        limit = 2000 - len(OUTCOME_QUESTION_PREFIX)
        if len(q) > limit:
            raise MemoryValidationError(f"question must be at most {limit} characters")
        check_sentinels(q, "question")
        record = create_record(
            kind="evidence",
            text=OUTCOME_QUESTION_PREFIX + q,
            scope=write_scope("durable", self.allowed_scopes),
            now=now,
            tags=["outcome-result"],
            confidence=0.5,
            stability="durable",
            source=MemorySource(type="tool", ref="swarm_memory_outcome"),
            metadata={"outcomeQuestion": q},
            producer_session_id=self.context.session_id,
            producer_agent_role=self.context.agent_role,
            provider_version=self.store.name,
        )
        existing = self.store.get(record.id)
        if existing is not None and existing.active:
            return existing
        validate_record(
            record,
            secrets=self.secrets,
            reject_durable_secrets=self.policy.reject_durable_secrets,
        )
        self.store.upsert(record)
        return record

    # ------------------------------------------------------------ task output
    def ingest_task_output(self, output: str) -> dict[str, Any]:
        """Accept ``memoryProposals`` / ``curatorMemoryDecisions`` JSON arrays from task output
        (see :func:`~swarmmem.core.writes.task_output.ingest_task_output`): proposals filed as
        this context's, decisions only from curator roles. Never raises on malformed input."""
        return ingest_task_output(
            output,
            curator=is_curator_role(self.context.agent_role),
            propose=self.propose,
            curate=self.curate,
        )

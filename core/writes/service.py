"""The write side as a use case: propose, curate, report outcomes, ingest task output.

:class:`WriteService` validates every write, binds it to the context's scopes, redacts secrets
and enforces the evidence, PII and secret policies. Agents only propose; durable memory is
written by curator decisions (:mod:`.curator`), in one transaction each.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from swarmmem.core.model.errors import (
    ConflictError,
    MemoryPiiRejectedError,
    MemoryValidationError,
    NotFoundError,
    SwarmMemoryError,
)
from swarmmem.core.model.events import OutcomeEntry, OutcomeEvent
from swarmmem.core.model.evidence import EVIDENCE_REF_PREFIX
from swarmmem.core.model.ids import (
    MEMORY_ID_RE,
    normalize_text,
    proposal_id,
    sha256_hex,
    to_iso,
)
from swarmmem.core.model.records import (
    CURATOR_ACTIONS,
    DURABLE_MEMORY_KINDS,
    MAX_MEMORY_TEXT_LENGTH,
    MEMORY_KINDS,
    OUTCOMES,
    PROPOSAL_OPERATIONS,
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
from swarmmem.core.model.text import check_json_texts, check_text, check_texts, without_hidden
from swarmmem.core.writes.curator import apply_patch
from swarmmem.core.writes.importing import ImportResult, import_records
from swarmmem.core.writes.policy import CurationPolicy
from swarmmem.core.writes.proposals import (
    create_record,
    extract_file_paths,
    extract_symbols,
    source_from_evidence,
)
from swarmmem.core.writes.redaction import redact_fields, redaction_rejection_reason
from swarmmem.core.writes.similar import MAX_SIMILAR, similar_memories
from swarmmem.core.writes.validation import check_sentinels, validate_record
from swarmmem.ports.clock import Clock
from swarmmem.ports.detectors import PiiDetector, PiiFindings, SecretDetector
from swarmmem.ports.evidence import SourceChecker
from swarmmem.ports.storage import StorageProvider

log = logging.getLogger("swarmmem")

SIMILAR_COSINE = 0.85
"""Embedding cosine at which an active memory counts as similar (with embeddings on)."""

OUTCOME_QUESTION_PREFIX = "Outcome evidence for question: "
MAX_ANCHORS = 20
#: Ids tried for one proposal before a clash is reported (see ``_create_unique``).
PROPOSAL_ID_ATTEMPTS = 8
_NEEDS_RECORD = ("add", "update", "supersede")
_NEEDS_TARGET = ("update", "delete", "supersede")


@attrs.frozen(kw_only=True)
class WritePolicy:
    """The ``memory.redaction`` values every write enforces (see the README configuration table)."""

    reject_durable_secrets: bool = True
    detect_pii: bool = False
    reject_durable_pii: bool = False
    pii_threshold: float = 0.7


def normalize_anchor_file(file: str) -> str:
    """A repository-relative anchor path, or MemoryValidationError."""
    value = file.strip() if isinstance(file, str) else ""
    if not value:
        raise MemoryValidationError("anchor file is required")
    if any(ord(c) <= 31 or ord(c) == 127 for c in value):
        raise MemoryValidationError(f"anchor file contains control characters: {value!r}")
    if value.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[\\/]", value):
        raise MemoryValidationError(f"anchor file must be repository-relative: {value!r}")
    parts = [p for p in value.replace("\\", "/").split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise MemoryValidationError(f"anchor file must not contain '..': {value!r}")
    if not parts:
        raise MemoryValidationError(f"anchor file is empty after normalisation: {file!r}")
    return "/".join(parts)


def _clean(value: str) -> str:
    """A proposed text as it is stored: hidden characters removed, whitespace collapsed."""
    return normalize_text(without_hidden(value))


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
    ) -> MemoryProposal:
        """Store a pending proposal (secrets redacted; a redacted proposal is auto-rejected).

        ``scope`` (one of this context's) places the proposed record there instead of the
        default write scope (a correction's update lands in its target's scope);
        ``auto_decide=False`` keeps it for a person even under the curation policy (a
        proposal filed again by an undo).

        Raises:
            MemoryValidationError: missing fields, missing evidence for durable kinds, etc.
        """
        if operation not in PROPOSAL_OPERATIONS:
            raise MemoryValidationError(
                f"operation must be one of {', '.join(PROPOSAL_OPERATIONS)}; got {operation!r}"
            )
        for text_name, text_value in (
            ("rationale", rationale),
            ("kind", kind),
            ("text", text),
            ("target_memory_id", target_memory_id),
        ):
            check_text(text_value, text_name)
        check_texts(evidence_refs, "evidence_refs")
        check_texts(related_memory_ids, "related_memory_ids")
        check_texts(tags, "tags")
        if not isinstance(rationale, str):
            raise MemoryValidationError("rationale is required")
        check_lengths(text=text, rationale=rationale, evidence_refs=evidence_refs, tags=tags)
        needs_record = operation in _NEEDS_RECORD
        # what a curator and a prompt read: control, bidi and tag characters removed
        clean = _clean  # (a local name: called once per field)
        redacted = redact_fields(
            self.secrets,
            {
                "rationale": clean(rationale),
                "evidenceRefs": [v for v in map(clean, evidence_refs or ()) if v],
                "targetMemoryId": normalize_text(target_memory_id) if target_memory_id else None,
                "relatedMemoryIds": None
                if related_memory_ids is None
                else [normalize_text(r) for r in related_memory_ids],
                "text": clean(text) if needs_record and isinstance(text, str) else None,
                "tags": None if tags is None else [clean(t) for t in tags],
            },
        )
        values = redacted.values
        clean_rationale = str(values["rationale"])
        if not clean_rationale:
            raise MemoryValidationError("rationale is required")
        refs = [ref[:500] for ref in values["evidenceRefs"] or ()][:20]
        for ref in refs:  # a ref is shown on a Source line of the prompt block
            check_sentinels(ref, "evidence ref")
        self._check_cached_evidence(refs)
        target = values["targetMemoryId"] if isinstance(values["targetMemoryId"], str) else None
        related = (
            values["relatedMemoryIds"] if isinstance(values["relatedMemoryIds"], list) else None
        )
        now = self.clock.now()
        created_at = to_iso(now)
        record: MemoryRecord | None = None
        pii: PiiFindings | None = None
        if operation in _NEEDS_RECORD:
            if not kind:
                raise MemoryValidationError("kind is required for this operation")
            if kind not in MEMORY_KINDS:
                raise MemoryValidationError(f"unknown memory kind {kind!r}")
            if not text or not normalize_text(text):
                raise MemoryValidationError("text is required for this operation")
            clean_text = str(values["text"])
            metadata: dict[str, Any] = {}
            files = extract_file_paths(refs)
            symbols = extract_symbols(refs)
            if files:
                metadata["files"] = files
            if symbols:
                metadata["symbols"] = symbols
            stability = "ephemeral" if kind == "scratch" else "durable"
            target_scope = write_scope(stability, self.allowed_scopes, scope)
            check_writable(target_scope, self.workspace_shared)
            record = create_record(
                kind=kind,
                text=clean_text,
                scope=target_scope,
                now=now,
                tags=values["tags"] if isinstance(values["tags"], list) else None,
                confidence=confidence,
                source=source_from_evidence(refs, self.context.agent_id or self.context.agent_role),
                metadata=metadata,
                producer_session_id=self.context.session_id,
                producer_agent_role=self.context.agent_role,
                provider_version=self.store.name,
                source_task_id=self.context.unit_id,
            )
            pii = self._pii(record.text)
            if pii is not None and record.stability == "durable":
                self._pii_policy(pii, "durable memory")
            validate_record(
                record,
                secrets=self.secrets,
                reject_durable_secrets=self.policy.reject_durable_secrets,
            )
        if operation in _NEEDS_TARGET and not target:
            raise MemoryValidationError(f"{operation} proposals require targetMemoryId")
        if operation == "merge" and (related is None or len(related) < 2):
            raise MemoryValidationError("merge proposals require relatedMemoryIds")
        if self.sources is not None and not redacted.any_changed:
            problems = self.sources.check(refs)  # the cited files, lines, symbols, commits
            if problems:
                raise MemoryValidationError("; ".join(problems))
        ctx = self.context
        proposer = ctx.agent_id or ctx.agent_role or ctx.session_id or "unknown"
        id_text = text if (operation in _NEEDS_RECORD and text) else f"{operation}:{target or ''}"
        proposal = MemoryProposal(
            id=proposal_id(created_at, proposer, id_text),
            operation=operation,
            proposed_record=record,
            target_memory_id=target,
            related_memory_ids=tuple(related) if related is not None else None,
            proposed_by=ProposedBy(
                agent_role=ctx.agent_role, agent_id=ctx.agent_id, run_id=ctx.effective_run_id
            ),
            rationale=clean_rationale,
            evidence_refs=tuple(refs),
            status="pending",
            created_at=created_at,
            metadata={"pii": {"score": pii.score, "countsByType": pii.counts_by_type}}
            if pii is not None and pii.found
            else {},
        )
        if redacted.any_changed:
            proposal = attrs.evolve(
                proposal,
                status="rejected",
                reviewer="auto_policy",
                reviewed_at=created_at,
                rejection_reason=redaction_rejection_reason(redacted.changed),
            )
        elif record is not None:
            proposal = self._with_duplicates(proposal, record, created_at)
        stored = self._create_unique(proposal, created_at, proposer, id_text)
        return self._auto_decide(stored) if auto_decide else stored

    def _with_meaning(
        self, similar: list[tuple[str, float]], record: MemoryRecord, keys: Sequence[str]
    ) -> list[tuple[str, float]]:
        """``similar`` joined with the active memories of ``keys`` whose embedding is close
        to ``record``'s (cosine at least :data:`SIMILAR_COSINE`), each with its best score."""
        assert self.similar_by_meaning is not None
        try:
            close = [(i, c) for i, c in self.similar_by_meaning(record.text) if c >= SIMILAR_COSINE]
        except Exception:  # a failing embedder never stops a proposal
            log.warning("similar memories by meaning are unavailable", exc_info=True)
            return similar
        found = self.store.get_many([i for i, _ in close])
        best = dict(similar)
        for memory_id, cosine in close:
            hit = found.get(memory_id)
            if hit is not None and hit.active and hit.scope.key in keys and hit.id != record.id:
                best[memory_id] = max(best.get(memory_id, 0.0), round(float(cosine), 4))
        return sorted(best.items(), key=lambda p: (-p[1], p[0]))[:MAX_SIMILAR]

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

    def _with_duplicates(
        self, proposal: MemoryProposal, record: MemoryRecord, created_at: str
    ) -> MemoryProposal:
        """``proposal`` with the active memories it resembles (``metadata.similar``); closed at
        once, naming the original, when an active memory already holds exactly its record
        (same scope, kind and text) or a pending proposal proposes it with the same evidence."""
        keys = [s.key for s in self.allowed_scopes]
        similar = similar_memories(self.store, record, scope_keys=keys, now=created_at)
        if self.similar_by_meaning is not None:
            similar = self._with_meaning(similar, record, keys)
        metadata = dict(proposal.metadata)
        if similar:
            metadata["similar"] = [{"memoryId": i, "score": score} for i, score in similar]
        existing = self.store.get(record.id)
        duplicate: str | None = None
        if existing is not None and existing.active and existing.scope.key in keys:
            duplicate = existing.id
            metadata["similar"] = [{"memoryId": existing.id, "score": 1.0}, *similar]
        elif proposal.operation == "add":
            duplicate = next(
                (
                    p.id
                    for p in self.store.list_proposals("pending")
                    if p.proposed_record is not None
                    and p.proposed_record.id == record.id
                    and p.evidence_refs == proposal.evidence_refs
                ),
                None,
            )
        proposal = attrs.evolve(proposal, metadata=metadata)
        if duplicate is None or proposal.operation != "add":
            return proposal
        metadata["duplicateOf"] = duplicate
        return attrs.evolve(
            proposal,
            metadata=metadata,
            status="rejected",
            reviewer="auto_policy",
            reviewed_at=created_at,
            rejection_reason=f"duplicate: {duplicate} already holds this memory",
        )

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
        reviewer: str = "curator_agent",
    ) -> AppliedChange:
        """Apply a curator decision to a pending proposal, in one transaction.

        ``add``/``supersede`` promote the proposal's record; ``update`` patches the target
        with the proposal's text (or ``patch``); ``merge`` links the related memories;
        ``delete`` tombstones the target; ``reject``/``noop`` close the proposal. A target
        outside this context's scopes is not found.

        ``text``, ``kind`` and ``tags`` rephrase an ``add`` or ``update``: the memory written
        carries them instead of the proposal's (validated as durable memory), and the audit
        event records which fields the curator rewrote.
        """
        check_text(proposal_id, "proposal_id")
        check_text(reason, "reason")
        check_json_texts(patch, "patch")
        check_text(text, "text")
        check_text(kind, "kind")
        check_texts(tags, "tags")
        rewrite = rewrite_fields(decision, text=text, kind=kind, tags=tags, patch=patch)
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
        if rewrite:
            fields["rewritten"] = tuple(sorted(k for k in rewrite if k in ("text", "kind", "tags")))
        fingerprints = self._fingerprints(proposal.evidence_refs)
        if fingerprints and record is not None and decision in ("add", "supersede"):
            record = attrs.evolve(
                record, metadata={**record.metadata, "evidenceFingerprints": fingerprints}
            )
        if decision == "add":
            if rewrite and record is not None:
                record = apply_patch(record, rewrite, now=to_iso(self.clock.now()))
            fields["memory"] = record
        elif decision == "update":
            fields["target_memory_id"] = proposal.target_memory_id
            base_patch: dict[str, Any] = {"text": record.text} if record else {}
            if fingerprints:
                base_patch["metadata"] = {"evidenceFingerprints": fingerprints}
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
        """The cited files as they are now (none without a source checker)."""
        return self.sources.fingerprints(refs) if self.sources is not None else []

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
        for text_name, text_value in (
            ("memory_id", memory_id),
            ("question", question),
            ("correction", correction),
            ("event_id", event_id),
        ):
            check_text(text_value, text_name)
        if (memory_id is None) == (question is None):
            raise MemoryValidationError("exactly one of memory_id or question is required")
        if outcome not in OUTCOMES:
            raise MemoryValidationError(
                f"outcome must be one of {', '.join(OUTCOMES)}; got {outcome!r}"
            )
        if correction is not None:
            correction = correction.strip()
            if not correction:
                correction = None
        if outcome == "corrected" and not correction:
            raise MemoryValidationError("corrected outcomes require correction text")
        if outcome != "corrected" and correction:
            raise MemoryValidationError("correction text is only valid for corrected outcomes")
        if correction is not None and len(correction) > 4000:
            raise MemoryValidationError("correction must be at most 4000 characters")
        anchor_list = self._anchors(anchors)
        now = self.clock.now()
        if question is not None:
            record = self._question_record(question, now)
        else:
            if not isinstance(memory_id, str) or not MEMORY_ID_RE.match(memory_id):
                raise MemoryValidationError(
                    f"memory_id must look like mem_<16 hex>; got {memory_id!r}"
                )
            found = self.store.get(memory_id)
            visible = {scope.key for scope in self.allowed_scopes}
            if found is None or found.scope.key not in visible:  # a foreign id reads as unknown
                raise NotFoundError(f"memory {memory_id} was not found")
            record = found
        if correction is not None:
            check_sentinels(correction, "outcome correction")
            if record.stability == "durable":
                self._pii_policy(self._pii(correction), "durable memory correction")
                if self.policy.reject_durable_secrets and self.secrets.contains_secret(correction):
                    raise MemoryValidationError("durable memory contains a likely secret")
            correction = self.secrets.redact(correction)
        if event_id is not None:
            event_id = self.secrets.redact(event_id)
        generation = record.metadata.get("outcomeGeneration")
        with self.store.transaction():
            if not isinstance(generation, str):
                generation = str(uuid.uuid4())
                record = attrs.evolve(
                    record, metadata={**record.metadata, "outcomeGeneration": generation}
                )
                self.store.upsert(record)
            events = self.store.list_outcomes(record.id)
            if sum(1 for e in events if e.generation == generation) >= 1000:
                raise MemoryValidationError("memory outcome limit exceeded")
            entry = OutcomeEntry(
                outcome=outcome,
                at=to_iso(now),
                task_id=self.context.unit_id or None,
                correction=correction or None,
            )
            eid = event_id or str(uuid.uuid4())
            event = next((e for e in events if e.id == eid), None)
            is_new = event is None
            if event is not None:
                # a retry must repeat the event; its time stays the first sending's
                same = attrs.evolve(entry, at=event.outcome.at) == event.outcome
                if not same or event.anchors != tuple(anchor_list):
                    raise ConflictError("outcome event id already exists with a different payload")
            else:
                event = OutcomeEvent(
                    id=eid,
                    memory_id=record.id,
                    generation=generation,
                    outcome=entry,
                    anchors=anchor_list,
                )
                self.store.append_outcome(event)
            if self.learn is not None:
                self.learn(event)
        count = sum(1 for e in self.store.list_outcomes(record.id) if e.generation == generation)
        result: dict[str, Any] = {
            "success": True,
            "outcome_recorded": True,
            "event_id": eid,
            "memory_id": record.id,
            "outcome": outcome,
            "outcomes": count,
        }
        if correction is not None and question is None and is_new:
            result.update(self._file_correction(record, correction, anchor_list, eid))
        return result

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

    def _anchors(self, anchors: Sequence[Mapping[str, Any] | Anchor] | None) -> list[Anchor]:
        out: list[Anchor] = []
        items = list(anchors or ())
        if len(items) > MAX_ANCHORS:
            raise MemoryValidationError(f"at most {MAX_ANCHORS} anchors are accepted")
        for raw in items:
            file: Any
            symbol: Any
            if isinstance(raw, Anchor):
                file, symbol = raw.file, raw.symbol
            elif isinstance(raw, Mapping):
                if set(raw) - {"file", "symbol"}:
                    raise MemoryValidationError(f"anchor has unknown keys: {sorted(raw)}")
                file, symbol = raw.get("file"), raw.get("symbol")
            else:
                raise MemoryValidationError(f"anchor must be an object; got {raw!r}")
            if symbol is not None and (not isinstance(symbol, str) or not symbol.strip()):
                raise MemoryValidationError("anchor symbol must be a non-empty string")
            redact = self.secrets.redact
            out.append(
                Anchor(
                    file=normalize_anchor_file(redact(file) if isinstance(file, str) else file),
                    symbol=redact(symbol.strip()) if isinstance(symbol, str) else None,
                )
            )
        return out

    def _question_record(self, question: str, now: dt.datetime) -> MemoryRecord:
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
        """Accept ``memoryProposals`` / ``curatorMemoryDecisions`` JSON arrays from task output.

        Invalid entries are logged and dropped; curator decisions are accepted only from
        curator roles. Never raises on malformed input.
        """
        result: dict[str, Any] = {"proposals": [], "decisions": [], "rejected": []}
        for payload in json_objects(output):
            for entry in _as_list(payload.get("memoryProposals")):
                try:
                    if not isinstance(entry, Mapping):
                        raise MemoryValidationError("proposal entry must be an object")
                    prop = self.propose(
                        operation=entry.get("operation", "add"),
                        kind=entry.get("kind"),
                        text=entry.get("text"),
                        rationale=entry.get("rationale", ""),
                        evidence_refs=entry.get("evidenceRefs"),
                        target_memory_id=entry.get("targetMemoryId"),
                        related_memory_ids=entry.get("relatedMemoryIds"),
                    )
                    result["proposals"].append(prop.id)
                except Exception as exc:
                    log.warning("memory proposal dropped: %s", exc)
                    result["rejected"].append({"kind": "proposal", "error": str(exc)})
            decisions = _as_list(payload.get("curatorMemoryDecisions"))
            if decisions and not is_curator_role(self.context.agent_role):
                result["rejected"].append(
                    {
                        "kind": "decision",
                        "error": "only curator agents may emit curatorMemoryDecisions",
                    }
                )
                continue
            for entry in decisions:
                try:
                    if not isinstance(entry, Mapping):
                        raise MemoryValidationError("decision entry must be an object")
                    change = self.curate(
                        str(entry.get("proposalId", "")),
                        str(entry.get("action", entry.get("decision", ""))),
                        reason=entry.get("reason"),
                        patch=entry.get("patch"),
                    )
                    result["decisions"].append(change.proposal_id)
                except Exception as exc:
                    log.warning("curator decision dropped: %s", exc)
                    result["rejected"].append({"kind": "decision", "error": str(exc)})
        return result


MAX_PROPOSAL_TEXT = MAX_MEMORY_TEXT_LENGTH
"""The longest text or rationale a proposal takes (checked before any detector runs)."""


def check_lengths(
    *,
    text: str | None,
    rationale: str,
    evidence_refs: Sequence[str] | None,
    tags: Sequence[str] | None,
) -> None:
    """Refuse over-long input before anything else reads it (the secret and PII detectors
    included), naming the argument and its limit."""
    for name, value in (("text", text), ("rationale", rationale)):
        if isinstance(value, str) and len(value) > MAX_PROPOSAL_TEXT:
            raise MemoryValidationError(
                f"{name} must be at most {MAX_PROPOSAL_TEXT} characters; got {len(value)}"
            )
    if evidence_refs is not None and len(evidence_refs) > 20:
        raise MemoryValidationError(f"at most 20 evidence refs; got {len(evidence_refs)}")
    if tags is not None and len(tags) > 64:
        raise MemoryValidationError(f"at most 64 tags; got {len(tags)}")
    for name, values, limit in (("evidence ref", evidence_refs, 500), ("tag", tags, 200)):
        for value in values or ():
            if isinstance(value, str) and len(value) > limit:
                raise MemoryValidationError(
                    f"each {name} must be at most {limit} characters; got {len(value)}"
                )


def rewrite_fields(
    decision: str,
    *,
    text: str | None,
    kind: str | None,
    tags: Sequence[str] | None,
    patch: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The patch a curator's rephrasing makes (empty when there is none); a durable kind
    also makes the memory durable (no expiry)."""
    rewrite: dict[str, Any] = {}
    if text is not None:
        rewrite["text"] = _clean(text) if isinstance(text, str) else text
    if kind is not None:
        if kind not in MEMORY_KINDS:
            raise MemoryValidationError(f"unknown memory kind {kind!r}")
        rewrite["kind"] = kind
        if kind in DURABLE_MEMORY_KINDS:
            rewrite.update(stability="durable", expiresAt=None)
    if tags is not None:
        rewrite["tags"] = [_clean(t) if isinstance(t, str) else t for t in tags]
    if rewrite and decision not in ("add", "update"):
        raise MemoryValidationError(
            f"text, kind and tags rephrase add and update decisions only; got {decision}"
        )
    if rewrite and patch:
        raise MemoryValidationError("give either a patch or text/kind/tags, not both")
    return rewrite


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def json_objects(text: str) -> list[Mapping[str, Any]]:
    """JSON objects found in free text (whole text, fenced blocks, or balanced braces)."""
    if not isinstance(text, str):
        return []
    found: list[Mapping[str, Any]] = []
    decoder = json.JSONDecoder()
    i = 0
    while i < len(text):
        j = text.find("{", i)
        if j < 0:
            break
        try:
            obj, end = decoder.raw_decode(text, j)
        except ValueError:
            i = j + 1
            continue
        if isinstance(obj, Mapping) and (
            "memoryProposals" in obj or "curatorMemoryDecisions" in obj
        ):
            found.append(obj)
        i = end
    return found


def tool_event_id(session_id: str | None, message_id: str | None, args: Mapping[str, Any]) -> str:
    """A deterministic outcome event id for a tool call (retries reuse it)."""
    doc = json.dumps(
        {"sessionID": session_id, "messageID": message_id, "args": args}, sort_keys=True
    )
    return "tool-" + sha256_hex(doc)[:32]

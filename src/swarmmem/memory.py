"""The :class:`Memory` facade: each call checks that memory is enabled and hands over to a use
case of :mod:`swarmmem.core` built by the composition root (:mod:`swarmmem.bootstrap`)."""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Concatenate, ParamSpec, TypeVar

from swarmmem.bootstrap import Runtime
from swarmmem.core.config import MemoryConfig
from swarmmem.core.learning.verdicts import VerdictService
from swarmmem.core.maintenance import memory_page
from swarmmem.core.maintenance.management import MemoryQuery
from swarmmem.core.maintenance.undo import undo_decision
from swarmmem.core.model.errors import (
    MemoryDisabledError,
    NotFoundError,
)
from swarmmem.core.model.records import (
    Anchor,
    MemoryProposal,
    MemoryRecord,
    MemoryScope,
    RecallBundle,
    RecallItem,
)
from swarmmem.core.model.reports import (
    EmbeddingRebuild,
    EvidenceFreshness,
    ForgetResult,
    MemoryDetails,
    MemoryHistoryReport,
    ProposalDetails,
    ReviewQueue,
    UndoResult,
)
from swarmmem.core.recall.injection import InjectionService
from swarmmem.core.recall.session import SessionHooks
from swarmmem.core.writes.importing import ImportResult
from swarmmem.core.writes.service import WriteService
from swarmmem.hooks.instructions import PROPOSE_LINE
from swarmmem.maintenance import MaintenanceMixin
from swarmmem.ports.evidence import EvidenceStore
from swarmmem.ports.storage import StorageProvider
from swarmmem.results import DISABLED_MESSAGE

__all__ = ["DISABLED_MESSAGE", "ImportResult", "Memory"]

P = ParamSpec("P")
R = TypeVar("R")


def use_case(
    method: Callable[Concatenate[Any, P], R],
    service: str,
    *,
    startup: bool = True,
    off: Callable[[], R] | None = None,
) -> Callable[Concatenate[Memory, P], R]:
    """A :class:`Memory` method that is ``method`` of the runtime's ``service``, signature and
    docstring included: each call checks that memory is enabled (else raises, or returns
    ``off()`` when given) and goes to it unchanged."""

    def call(mem: Memory, /, *args: P.args, **kwargs: P.kwargs) -> R:
        if off is not None and not mem.enabled:
            return off()
        return method(getattr(mem._ready(startup=startup), service), *args, **kwargs)

    return functools.update_wrapper(call, method)


def _as_injected(rt: Runtime, items: Sequence[RecallItem]) -> list[RecallItem]:
    """``items`` with what the files they cite say now, as an injection has them (those whose
    files are gone left out unless ``evidence.injectMissing``); as they are when evidence
    checks are off."""
    policy = rt.recall.evidence
    return list(items) if policy is None else policy.apply(items, injection=True)


class Memory(MaintenanceMixin):
    """Open it with :func:`swarmmem.open`; scopes come from the context, never the caller.

    The maintenance and transfer use cases (reports, consolidation, verification, compaction,
    reflection, the audit chain, export, import and migration) come from
    :class:`~swarmmem.maintenance.MaintenanceMixin`."""

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime
        self._reflected = False

    # ------------------------------------------------------------- the wiring
    root = property(lambda self: self._rt.root, doc="The project root.")
    config = property(lambda self: self._rt.config, doc="The resolved ``memory`` section.")
    context = property(lambda self: self._rt.context, doc="The session context.")
    clock = property(lambda self: self._rt.clock, doc="The clock.")
    storage_dir = property(lambda self: self._rt.storage_dir, doc="The memory directory.")
    runtime = property(lambda self: self._rt, doc="The composition root (adapters, settings).")

    enabled = property(lambda self: self._rt.settings.enabled, doc="Memory is on.")

    @property
    def settings(self) -> MemoryConfig:
        """The typed configuration tree (the same values as :attr:`config`)."""
        return self._rt.settings

    def require_enabled(self) -> None:
        """Raise :class:`MemoryDisabledError` unless memory is enabled."""
        if not self.enabled:
            raise MemoryDisabledError(DISABLED_MESSAGE)

    @property
    def store(self) -> StorageProvider:
        """The storage provider, opened on first use."""
        return self._rt.store

    @property
    def read_only(self) -> bool:
        """The store was opened for reading only (this process may not write it): reads work,
        every write fails saying so."""
        return bool(self._rt.store.read_only)

    @property
    def evidence(self) -> EvidenceStore:
        """The evidence cache: ``add(text, source)`` returns a ref proposals may cite."""
        return self._ready(startup=False).evidence

    def _ready(self, *, startup: bool = True) -> Runtime:
        """The runtime of an enabled memory (the first agent call regenerates lessons once)."""
        self.require_enabled()
        if startup and not self._reflected:
            self._reflected = True
            self._rt.reflection.refresh()
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
        service = self._ready().recall
        request = service.build_request(
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
        return service.run(request)

    inject = use_case(InjectionService.inject, "injection", off=lambda: None)

    def inject_blocks(
        self,
        *,
        agent_task: str | None = None,
        user_goal: str | None = None,
        messages: Sequence[str] = (),
        project: str | None = None,
        current_plan: str | None = None,
    ) -> list[str]:
        """The recall block of :meth:`inject`, then lessons when they fit the injection budget."""
        bundle = self.inject(
            agent_task=agent_task,
            user_goal=user_goal,
            messages=messages,
            project=project,
            current_plan=current_plan,
        )
        return self._rt.injection.blocks(bundle, messages) if self.enabled else []

    # ------------------------------------------------------------ agent hosts
    @property
    def session_hooks(self) -> SessionHooks:
        """The use cases behind an agent host's hooks in this context: the session brief, the
        prompt's injection and filing the agent's proposals (see
        :mod:`swarmmem.core.recall.session`)."""
        rt = self._ready(startup=False)
        # each service is built when a hook first needs it (a brief never loads the writes)
        return SessionHooks(
            injection=lambda: rt.injection,
            brief_settings=rt.settings.recall.session_brief,
            suppression_threshold=rt.settings.learning.suppression_threshold,
            records=lambda limit: self.list(limit=limit),
            refresh_lessons=lambda: rt.reflection.refresh(),
            lessons=lambda: rt.reflection.block(),
            ingest=lambda text: rt.writes.ingest_task_output(text),
            redact=rt.secrets.redact,
            now=rt.now,
            propose_line=PROPOSE_LINE,
            evidence=lambda items: _as_injected(rt, items),
        )

    def session_state(self, session_id: str) -> AbstractContextManager[dict[str, Any]]:
        """The hook state of an agent session (a dict, written back when the block ends
        without an error), held under the session's lock."""
        return self._rt.hook_state(session_id).update()

    def log_session(self, session_id: str, event: Mapping[str, Any]) -> None:
        """Append ``event`` to the session's run log (its ``error``, if any, redacted)."""
        line = dict(event)
        if "error" in line:
            line["error"] = self._rt.secrets.redact(line["error"])
        self._rt.run_log.append(session_id, line, self._rt.now())

    def prepare_writes(self) -> None:
        """Start loading what a write needs (the embedder, when embeddings are on)."""
        if self.enabled:
            self._rt.write_dense(warm=True)

    def warm_up(self) -> None:
        """Load what the first recall would: the embedding model when embeddings are on."""
        if self.enabled and self._rt.settings.embeddings.enabled:
            parts = self._rt.dense_parts()
            if parts is not None:
                parts.embedder.embed_batch(["warm up"])

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

    curate = use_case(WriteService.curate, "writes")

    refile = use_case(WriteService.refile, "writes")

    def evidence_status(self, refs: Sequence[str]) -> str:
        """Whether evidence ``refs`` hold in the project now: ``verified`` or the problems
        (``unchecked`` when evidence checks are off, ``none`` without refs)."""
        if not refs:
            return "none"
        rt = self._ready(startup=False)
        if not rt.settings.evidence.verify:
            return "unchecked"
        problems = rt.sources.check(builtins.list(refs))
        return "verified" if not problems else "; ".join(problems)

    def undo_decision(self, proposal_id: str, *, reason: str | None = None) -> UndoResult:
        """Undo the decision on ``proposal_id`` (audited): an ``add`` approval forgets the
        memory it wrote; then, for it or a rejection, a pending copy of the proposal is filed
        for a new decision, under its first proposer. Other decisions cannot be undone this way,
        nor a decision twice (a :class:`ConflictError` says so): forgetting their result would
        not restore what they changed."""
        rt = self._ready(startup=False)
        return undo_decision(
            proposal_id,
            reason=reason,
            writes=rt.writes,
            management=rt.management,
            scoped=rt.scoped_store,
        )

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
        """Report a memory (or question) useful, a dead end or corrected; lessons follow."""
        result = self._ready().writes.record_outcome(
            outcome=outcome,
            memory_id=memory_id,
            question=question,
            correction=correction,
            anchors=anchors,
            event_id=event_id,
        )
        return {**result, **self._rt.reflection.refresh().to_json()}

    def import_records(self, records: Iterable[Mapping[str, Any]]) -> ImportResult:
        """Trusted bulk write of reference-shaped records in one transaction (refusals listed)."""
        return self._ready(startup=False).writes.import_records(records)

    def rebuild_embedding_index(
        self, progress: Callable[[int, int], None] | None = None, batch_size: int = 256
    ) -> EmbeddingRebuild:
        """Re-embed every active durable memory (the model version advances if all made it),
        ``batch_size`` records per embedder call."""
        rt = self._ready(startup=False)
        rt.reset_dense()
        return rt.embeddings.rebuild(progress, batch_size)

    # ------------------------------------------------------------- management
    def list(
        self,
        kind: str | None = None,
        scope: str | None = None,
        tag: str | None = None,
        file: str | None = None,
        created_since: str | None = None,
        updated_since: str | None = None,
        state: str = "active",
        limit: int = 50,
        offset: int = 0,
    ) -> builtins.list[MemoryRecord]:
        """This context's memories in ``state``, filtered, newest update first (paged)."""
        q = MemoryQuery(kind, scope, tag, file, created_since, updated_since, state, limit, offset)
        return self._ready(startup=False).management.list(q)

    def get(self, memory_id: str) -> MemoryRecord:
        """One memory of this context in any state (NotFoundError for any other id)."""
        return self._ready(startup=False).management.get(memory_id)

    def state_of(self, record: MemoryRecord) -> str:
        """The state of ``record`` now: ``active``, ``suppressed``, ``superseded``,
        ``deleted`` or ``expired``."""
        return str(self._ready(startup=False).management.state_of(record))

    def freshness_of(self, record: MemoryRecord) -> str:
        """What the files ``record`` cites say now: ``fresh``, ``changed``, ``missing`` or
        ``unverified`` (no fingerprint), as recall items say it."""
        return self._ready(startup=False).evidence_status(record.metadata)

    def proposals(self, status: str | None = "pending") -> builtins.list[MemoryProposal]:
        """This context's proposals in ``status`` (every status for ``None``), oldest first:
        the scoped view :meth:`pending` reports from."""
        return builtins.list(self._ready(startup=False).scoped_store.list_proposals(status))

    def proposal(self, proposal_id: str) -> MemoryProposal:
        """One proposal of this context in any status (NotFoundError for any other id)."""
        found = self._ready(startup=False).scoped_store.get_proposal(proposal_id)
        if found is None:
            raise NotFoundError(f"proposal {proposal_id} was not found")
        return found

    def has_memories(self) -> bool:
        """True when the configured store already exists and holds records of this context
        (another repository's records in a shared store do not count); nothing is created."""
        if not self._rt.store_exists:
            return False
        return any(True for _ in self._rt.scoped_store.iter_all_records())

    def evidence_freshness(self, memory_id: str) -> EvidenceFreshness:
        """What the evidence of a memory of this context says now: its status as recall reads
        it, each evidence ref of the proposals that concern it (else its source) with the
        status of the file it names, and each fingerprinted file's status."""
        rt = self._ready(startup=False)
        return memory_page.memory_evidence(
            memory_id,
            management=rt.management,
            status_of=rt.evidence_status,
            files_status=rt.sources.status,
            cited_now=rt.evidence_cited,
        )

    def inspect(self, memory_id: str) -> MemoryDetails | ProposalDetails:
        """A memory with provenance, outcomes, Q history, relations and its audit events; for
        a proposal id (``prop_...``), the proposal, its proposer and age and its events."""
        management = self._ready(startup=False).management
        if isinstance(memory_id, str) and memory_id.startswith("prop_"):
            return management.inspect_proposal(memory_id)
        return management.inspect(memory_id)

    def memory_history(
        self, memory_id: str, *, limit: int = 50, sessions: int = 50
    ) -> MemoryHistoryReport:
        """What happened to a memory of this context (see
        :mod:`swarmmem.core.maintenance.memory_page`): the chain of memories it replaced and that
        replaced it, the proposals about it and their decisions, the recalls that returned it
        (the newest ``limit``) and its injections in the newest ``sessions`` run logs."""
        rt = self._ready(startup=False)
        return memory_page.memory_history(
            memory_id, management=rt.management, run_log=rt.run_log, limit=limit, sessions=sessions
        )

    def review_queue(self, limit: int = 100) -> ReviewQueue:
        """The pending proposals a person reviews, oldest first (at most ``limit``, each as
        :meth:`inspect` shows it but without audit events), and how many are pending."""
        return self._ready(startup=False).management.review_queue(limit)

    def forget(self, memory_id: str, *, reason: str, purge: bool = False) -> ForgetResult:
        """Tombstone a memory (audited); ``purge`` erases it and scrubs its text everywhere."""
        return self._ready(startup=False).management.forget(memory_id, reason=reason, purge=purge)

    # ------------------------------------------------ learning and maintenance
    def register_session(self, session_id: str) -> None:
        """Mark a live session (e.g. a dispatched council member) as a known verdict target."""
        self._rt.sessions.register(session_id)

    record_verdict = use_case(VerdictService.record_verdict, "verdicts", startup=False)

    # -------------------------------------------------------------- lifecycle
    def close(self) -> None:
        """Release the store and the vector index. Idempotent."""
        self._rt.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

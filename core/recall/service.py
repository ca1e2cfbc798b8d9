"""Recall as a use case: validate the request, run the pipeline, build the bundle, log usage.

:class:`RecallService` is what the facade, the CLI and the MCP server call. Scopes come from
the context (never from the caller); a requested scope outside them is a :class:`ScopeError`.
The profile's configuration and its dense parts come from ``resolve_profile`` (supplied by the
composition root), so this module never builds an adapter.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from swarmmem.core.config import RecallConfig
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.events import RecallUsage
from swarmmem.core.model.ids import bundle_id, normalize_text, to_iso
from swarmmem.core.model.records import (
    MEMORY_KINDS,
    MemoryScope,
    RecallBundle,
    RecallItem,
    RecallRequest,
    unknown_kinds,
)
from swarmmem.core.model.scopes import MemoryContext, authorize_scopes
from swarmmem.core.model.text import check_text, check_texts
from swarmmem.core.recall.hybrid import DenseParts
from swarmmem.core.recall.pipeline import PROFILES, PipelineSettings, run_recall
from swarmmem.core.recall.prompt import build_prompt_block
from swarmmem.core.recall.scoring import LearningPolicy
from swarmmem.ports.clock import Clock
from swarmmem.ports.storage import StorageProvider

log = logging.getLogger("swarmmem")

#: profile name (``None`` = the configured default) -> its configuration and dense parts.
ProfileResolver = Callable[[str | None], tuple[PipelineSettings, DenseParts | None]]


@attrs.frozen(kw_only=True)
class EvidencePolicy:
    """Freshness at recall time (``memory.evidence.*``): each returned item gets the status of
    the files it cites (``status`` reads a record's stored fingerprints); an item whose file
    went missing is left out of automatic injection unless ``inject_missing``, and ranked
    after the others in a manual recall."""

    status: Callable[[Any], str]
    inject_missing: bool = False

    def apply(self, items: Sequence[RecallItem], *, injection: bool) -> list[RecallItem]:
        checked = [item.with_evidence(self.status(item.record.metadata)) for item in items]
        missing = [item for item in checked if item.evidence_status == "missing"]
        kept = [item for item in checked if item.evidence_status != "missing"]
        if injection and not self.inject_missing:
            return kept
        return kept + missing


def clamp_int(value: int, lo: int, hi: int, name: str) -> int:
    """``value`` clamped to ``[lo, hi]``; a non-number is a :class:`MemoryValidationError`."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MemoryValidationError(f"{name} must be a number; got {value!r}")
    return int(min(hi, max(lo, int(value))))


def injection_skip_reason(diagnostics: Mapping[str, Any]) -> str | None:
    """Why an injection recall returned nothing: no_results, no_signal or below_threshold."""
    if diagnostics.get("returnedCount", 0) > 0:
        return None
    candidates = diagnostics.get("candidateCount", 0)
    if candidates == 0:
        return "no_results"
    if diagnostics.get("notAdmittedCount", 0) > 0:  # candidates, none relevant enough
        return "below_threshold"
    eligible = (
        candidates
        - diagnostics.get("preScoredFilteredCount", 0)
        - diagnostics.get("suppressedLowQCount", 0)
    )
    no_signal = diagnostics.get("noSignalCount", 0)
    if eligible > 0 and no_signal > 0 and no_signal >= eligible:
        return "no_signal"
    if diagnostics.get("belowThresholdCount", 0) > 0:
        return "below_threshold"
    return "no_results"


def assemble_bundle(
    request: RecallRequest,
    items: Sequence[RecallItem],
    diagnostics: Mapping[str, Any],
    *,
    generated_at: str,
    redact: Callable[[str], str],
    screen: Callable[[Sequence[str]], bool] | None = None,
) -> RecallBundle:
    """The bundle of ``items``: the token-budgeted, redacted prompt block and what fit in it,
    and the question redacted.

    ``screen`` (a detector's ``may_contain_secret``) first looks at every string of
    ``items`` that ``redact`` would see, in one pass: when it clears them, nothing is
    redacted item by item."""
    bid = bundle_id(request.query, generated_at)
    query = redact(request.query)  # the bundle is printed and logged: no secret of the caller's
    clean = screen is not None and not screen(item_strings(items))
    if clean:
        redact = _unchanged
    block, tokens, included = build_prompt_block(
        bid, items, generated_at=generated_at, token_budget=request.token_budget, redact=redact
    )
    diag: dict[str, Any] = dict(diagnostics)
    if request.mode == "injection" and not included:
        diag["injectionSkipReason"] = injection_skip_reason(diag)
    return RecallBundle(
        id=bid,
        query=query,
        generated_at=generated_at,
        items=tuple(included) if clean else tuple(redacted_item(i, redact) for i in included),
        token_estimate=tokens,
        prompt_block=block,
        diagnostics=diag,
    )


def _unchanged(text: str) -> str:
    return text


class RememberedScreen:
    """A screen (a detector's ``may_contain_secret``) that remembers the strings it cleared,
    so that a memory recalled again is not scanned again: only strings it has not cleared are
    screened, and those are remembered once the screen clears them (up to ``limit`` strings,
    then it starts afresh). Its answers mean what the screen's do: False, no string holds a
    secret; True, one may."""

    def __init__(self, screen: Callable[[Sequence[str]], bool], limit: int = 4096) -> None:
        self._screen = screen
        self._limit = limit
        self._cleared: set[str] = set()

    def __call__(self, texts: Sequence[str]) -> bool:
        cleared = self._cleared
        unseen = [text for text in texts if text not in cleared]
        if not unseen:
            return False
        if self._screen(unseen):
            return True
        if len(cleared) + len(unseen) > self._limit:
            cleared.clear()
        cleared.update(unseen)
        return False


def item_strings(items: Sequence[RecallItem]) -> list[str]:
    """Every string of ``items`` that leaves the library through :func:`redacted_item` or the
    prompt block: each record's text, tags and source pointers (the locator is one of them)."""
    out: list[str] = []
    for item in items:
        record, source = item.record, item.record.source
        out.append(record.text)
        out.extend(record.tags)
        out.extend(
            value
            for value in (source.ref, source.url, source.file_path, source.commit_sha)
            if isinstance(value, str)
        )
    return out


def redacted_item(item: RecallItem, redact: Callable[[str], str]) -> RecallItem:
    """``item`` as it may leave the library: its record's text, tags and source pointers go
    through ``redact`` (unchanged when nothing is detected)."""
    record, source = item.record, item.record.source
    pointers = {
        name: redact(value)
        for name in ("ref", "url", "file_path", "commit_sha")
        if isinstance(value := getattr(source, name), str)
    }
    clean = attrs.evolve(
        record,
        text=redact(record.text),
        tags=tuple(redact(tag) for tag in record.tags),
        source=attrs.evolve(source, **pointers),
    )
    return item if clean == record else attrs.evolve(item, record=clean)


#: the longest query a usage row keeps (what a stored string may hold)
USAGE_QUERY_CHARS = 100_000


def usage_row(bundle: RecallBundle, request: RecallRequest, context: MemoryContext) -> RecallUsage:
    """The recall usage of ``bundle`` (what learning later rewards), with the bundle's query,
    already redacted (cut to :data:`USAGE_QUERY_CHARS`: redaction markers may make a query
    longer)."""
    return RecallUsage(
        bundle_id=bundle.id,
        query=bundle.query[:USAGE_QUERY_CHARS] if bundle.query else bundle.query,
        scopes=request.scopes,
        kinds=request.kinds or (),
        memory_ids=tuple(item.record.id for item in bundle.items),
        scores=tuple(item.score for item in bundle.items),
        token_estimate=bundle.token_estimate,
        agent_role=context.agent_role,
        run_id=context.effective_run_id,
        session_id=context.session_id,
        unit_id=context.unit_id,
        timestamp=bundle.generated_at,
    )


class RecallService:
    """Scoped recall for one context over one store."""

    def __init__(
        self,
        store: StorageProvider,
        context: MemoryContext,
        *,
        allowed_scopes: Sequence[MemoryScope],
        clock: Clock,
        redact: Callable[[str], str],
        screen: Callable[[Sequence[str]], bool] | None = None,
        config: RecallConfig | None = None,
        learning: LearningPolicy | None = None,
        resolve_profile: ProfileResolver | None = None,
        evidence: EvidencePolicy | None = None,
    ) -> None:
        self.store = store
        self.context = context
        self.allowed_scopes = list(allowed_scopes)
        self.clock = clock
        self.redact = redact
        self.screen = None if screen is None else RememberedScreen(screen)
        #: ``memory.recall``: what a request leaves out falls back to
        self.config = config or RecallConfig()
        #: ``memory.learning``: how Q values rank (a profile resolver brings its own)
        self.learning = learning or LearningPolicy()
        self._resolve = resolve_profile
        self.evidence = evidence
        self._said_read_only = False

    def build_request(
        self,
        query: str,
        *,
        task: str | None = None,
        kinds: Sequence[str] | None = None,
        max_items: int | None = None,
        token_budget: int | None = None,
        min_score: float | None = None,
        min_relevance: float | None = None,
        mode: str = "manual",
        scopes: Sequence[MemoryScope] | None = None,
        include_low_q: bool = False,
        require_query_signal: bool | None = None,
        candidate_cap: int | None = None,
        profile: str | None = None,
    ) -> RecallRequest:
        """Validate recall input and build the provider request."""
        check_text(query, "query")
        check_text(task, "task")
        check_texts(kinds, "kinds")
        if not isinstance(query, str):
            raise MemoryValidationError(f"query must be a string; got {type(query).__name__}")
        normalized = normalize_text(query)
        if len(normalized) < 3:
            raise MemoryValidationError("query must be at least 3 characters")
        if profile is not None and profile not in PROFILES:
            raise MemoryValidationError(
                f"profile must be one of {', '.join(PROFILES)}; got {profile!r}"
            )
        if kinds is not None:
            bad = [k for k in kinds if k not in MEMORY_KINDS]
            if bad:
                raise unknown_kinds(bad)
        d = self.config
        if mode == "injection":
            injection = d.injection
            max_items = injection.max_items if max_items is None else max_items
            token_budget = injection.token_budget if token_budget is None else token_budget
            min_score = injection.min_score if min_score is None else min_score
            if min_relevance is None:
                min_relevance = injection.min_relevance
            if require_query_signal is None:
                require_query_signal = injection.require_query_signal
        return RecallRequest(
            query=normalized,
            task=normalize_text(task) if task else None,
            agent_role=self.context.agent_role,
            mode=mode,
            scopes=tuple(authorize_scopes(scopes, self.allowed_scopes)),
            kinds=tuple(kinds) if kinds else None,
            max_items=clamp_int(
                max_items if max_items is not None else d.default_max_items, 1, 20, "max_items"
            ),
            token_budget=clamp_int(
                token_budget if token_budget is not None else d.default_token_budget,
                100,
                5000,
                "token_budget",
            ),
            min_score=d.min_score if min_score is None else float(min_score),
            min_relevance=d.min_relevance if min_relevance is None else float(min_relevance),
            recency_half_life_days=d.recency_half_life_days,
            require_query_signal=require_query_signal,
            include_low_q=include_low_q,
            candidate_cap=candidate_cap,
            profile=profile,
        )

    def run(self, request: RecallRequest) -> RecallBundle:
        """Run a request of :meth:`build_request`: rank, budget, redact, record usage.

        Raises:
            MemoryValidationError: a too-short query or unknown kinds (from the request).
            ScopeError: a requested scope outside the context's allowed scopes.
        """
        if self._resolve is not None:
            config, parts = self._resolve(request.profile)
        else:
            config, parts = PipelineSettings(policy=self.learning), None
        result, _trace = run_recall(
            self.store, request, now=to_iso(self.clock.now()), config=config, parts=parts
        )
        items: Sequence[RecallItem] = result.items
        checked = config.profile != "reference" and request.mode != "evaluation"
        if self.evidence is not None and checked:
            items = self.evidence.apply(items, injection=request.mode == "injection")
        bundle = assemble_bundle(
            request,
            items,
            result.diagnostics,
            generated_at=to_iso(self.clock.now()),
            redact=self.redact,
            screen=self.screen,
        )
        if self.store.read_only:
            if not self._said_read_only:
                log.warning("recall usage is not recorded: the memory store is read-only")
                self._said_read_only = True
            return attrs.evolve(bundle, diagnostics={**bundle.diagnostics, "usageRecorded": False})
        self.store.record_recall_usage(usage_row(bundle, request, self.context))
        return bundle

"""The :class:`Memory` facade: the composition root that wires config, adapters and gateway."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from swarmmem import config as _config
from swarmmem.core.gateway import GatewaySettings, MemoryGateway
from swarmmem.core.learning.rewards import LearningSettings, SessionRegistry
from swarmmem.core.model.codec import record_from_dict, scope_from_dict, source_from_dict
from swarmmem.core.model.errors import MemoryDisabledError, MemoryValidationError
from swarmmem.core.model.ids import content_hash, memory_id_for_hash, to_iso
from swarmmem.core.model.records import AppliedChange, MemoryProposal, MemoryRecord, RecallBundle
from swarmmem.core.model.scopes import MemoryContext, derive_allowed_scopes
from swarmmem.core.recall.scoring import LearningPolicy
from swarmmem.core.writes.proposals import SCRATCH_TTL
from swarmmem.core.writes.validation import validate_record
from swarmmem.ports.clock import Clock, SystemClock
from swarmmem.ports.storage import StorageProvider
from swarmmem.registry import resolve

DISABLED_MESSAGE = (
    "Swarm memory is disabled. Set memory.enabled=true in .opencode/opencode-swarm.json "
    "(or pass config={'enabled': True})."
)
_REMOTE_RE = re.compile(r'\[remote "origin"\][\s\S]*?\n\s*url\s*=\s*(.+)')
_CONTEXT_KEYS = {"session_id", "run_id", "agent_role", "agent_id", "unit_id"}
#: Session ids live in this process; caller-supplied verdict session ids must be here.
KNOWN_SESSIONS = SessionRegistry()


def git_remote_origin(root: Path) -> str | None:
    """The ``origin`` remote URL from ``<root>/.git/config``, if any."""
    try:
        text = (root / ".git" / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    match = _REMOTE_RE.search(text)
    return match.group(1).strip() if match else None


@attrs.frozen(kw_only=True)
class ImportResult:
    """Outcome of :meth:`Memory.import_records`: how many were written, which were refused."""

    written: int
    refused: tuple[tuple[int, str], ...]


def _adapter(kind: str, value: Any, **kwargs: Any) -> Any:
    if isinstance(value, str):
        return resolve(kind, value)(**kwargs)
    return value


class Memory:
    """One project's memory seen from one context.

    Create it with :func:`swarmmem.open`. All agent-facing calls go through the gateway:
    scopes come from the context, durable writes only through curator decisions.
    """

    def __init__(
        self,
        root: Path,
        cfg: dict[str, Any],
        context: MemoryContext,
        *,
        adapters: Mapping[str, Any],
    ) -> None:
        self.root = root
        self.config = cfg
        self.context = context
        self._adapters = dict(adapters)
        self._store: StorageProvider | None = None
        self._gateway: MemoryGateway | None = None
        self.clock: Clock = self._adapters.get("clock") or SystemClock()
        self.secrets = _adapter("secrets", self._adapters.get("secrets", "regex"))
        self._pii: Any = None
        self._dense: Any = None
        self._reranker: Any = None
        self.dense_unavailable_reason: str | None = None
        self.last_trace: Any = None
        if context.session_id:
            KNOWN_SESSIONS.register(context.session_id)

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
        root = Path(root).resolve()
        cfg = _config.load(root, config)
        ctx = dict(context or {})
        unknown = set(ctx) - _CONTEXT_KEYS
        if unknown:
            raise MemoryValidationError(f"unknown context key(s): {', '.join(sorted(unknown))}")
        bad = set(adapters) - {
            "store",
            "secrets",
            "pii",
            "embedder",
            "reranker",
            "clock",
            "vector_index",
        }
        if bad:
            raise TypeError(f"unknown adapter argument(s): {', '.join(sorted(bad))}")
        return cls(root, cfg, MemoryContext(directory=str(root), **ctx), adapters=adapters)

    # ----------------------------------------------------------------- wiring
    @property
    def enabled(self) -> bool:
        """True when memory is enabled in the configuration."""
        return bool(self.config["enabled"])

    def require_enabled(self) -> None:
        """Raise :class:`MemoryDisabledError` unless memory is enabled."""
        if not self.enabled:
            raise MemoryDisabledError(DISABLED_MESSAGE)

    _require_enabled = require_enabled

    def _path(self, value: str) -> Path:
        path = Path(value)
        return path if path.is_absolute() else self.root / path

    @property
    def storage_dir(self) -> Path:
        """The memory directory (``.swarm/memory`` by default)."""
        return self._path(self.config["storageDir"])

    @property
    def store(self) -> StorageProvider:
        """The storage provider, opened on first use."""
        if self._store is None:
            given = self._adapters.get("store")
            if given is not None and not isinstance(given, str):
                self._store = given
            else:
                self._store = self._open_store(given or self.config["provider"])
        return self._store

    def _open_store(self, name: str) -> StorageProvider:
        cls = resolve("store", name)
        if name == "sqlite":
            return cls(  # type: ignore[no-any-return]
                self._path(self.config["sqlite"]["path"]),
                busy_timeout_ms=self.config["sqlite"]["busyTimeoutMs"],
                clock=self.clock,
                legacy_dir=self.storage_dir,
            )
        if name == "local-jsonl":
            return cls(self.storage_dir, clock=self.clock)  # type: ignore[no-any-return]
        if name == "postgres":
            pg = self.config["postgres"]
            return cls(  # type: ignore[no-any-return]
                self.postgres_dsn(),
                clock=self.clock,
                pool_size=pg["poolSize"],
                schema=pg["schema"],
            )
        return cls(clock=self.clock)  # type: ignore[no-any-return]

    def postgres_dsn(self) -> str:
        """``postgres.dsn``, else the ``SWARMMEM_PG_DSN`` environment variable."""
        from swarmmem.core.model.errors import ConfigError

        dsn = self.config["postgres"]["dsn"] or os.environ.get("SWARMMEM_PG_DSN")
        if not dsn:
            raise ConfigError(
                "memory.postgres.dsn is required for provider postgres "
                "(or set the SWARMMEM_PG_DSN environment variable)"
            )
        return str(dsn)

    @property
    def pii(self) -> Any:
        """The PII detector named by ``redaction.piiDetector`` (only built when enabled)."""
        if self._pii is None and self.config["redaction"]["detectPii"]:
            redaction = self.config["redaction"]
            name = self._adapters.get("pii", redaction["piiDetector"])
            kwargs = {}
            if name == "ner" and redaction["nerModelPath"]:
                kwargs["model_dir"] = self._path(redaction["nerModelPath"])
            self._pii = _adapter("pii", name, **kwargs)
        return self._pii

    def settings(self) -> GatewaySettings:
        """The gateway settings derived from the configuration."""
        c = self.config
        learning = c["learning"]
        return GatewaySettings(
            default_max_items=c["recall"]["defaultMaxItems"],
            default_token_budget=c["recall"]["defaultTokenBudget"],
            min_score=c["recall"]["minScore"],
            reject_durable_secrets=c["redaction"]["rejectDurableSecrets"],
            detect_pii=c["redaction"]["detectPii"],
            reject_durable_pii=c["redaction"]["rejectDurablePii"],
            pii_threshold=c["redaction"]["piiThreshold"],
            learning=LearningPolicy(
                q_boost_weight=learning["qValueBoostWeight"],
                suppression_threshold=learning["suppressionThreshold"],
                exploration_rate=learning["explorationRate"],
            ),
        )

    @property
    def allowed_scopes(self) -> list[Any]:
        """Scopes this context may read and write."""
        return derive_allowed_scopes(self.context, remote_url=git_remote_origin(self.root))

    @property
    def gateway(self) -> MemoryGateway:
        """The validated path into memory (requires memory to be enabled)."""
        self._require_enabled()
        if self._gateway is None:
            self._gateway = MemoryGateway(
                self.store,
                self.context,
                allowed_scopes=self.allowed_scopes,
                clock=self.clock,
                secrets=self.secrets,
                pii=self.pii,
                settings=self.settings(),
                recall_hook=self._recall,
            )
            self._startup_reflection()
        return self._gateway

    def _startup_reflection(self) -> None:
        """Deferred startup task: regenerate lessons once, on the first gateway use."""
        from swarmmem.adapters.files import lessons as reflection

        if reflection.reflection_enabled(self.config):
            self._refresh_reflection()  # failures are logged; they never block the caller

    # ----------------------------------------------------------------- dense
    def _recall(self, request: Any, now: str) -> Any:
        """The gateway's recall stage: lexical unless the dense path is on and usable."""
        from swarmmem.core.recall.hybrid import hybrid_recall
        from swarmmem.core.recall.lexical import provider_recall

        profile = request.profile or (
            "hybrid" if self.config["embeddings"]["enabled"] else "lexical"
        )
        policy = self.settings().learning
        if profile == "lexical":
            return provider_recall(self.store, request, now=now, policy=policy)
        result, trace = hybrid_recall(
            self.store,
            request,
            now=now,
            parts=self.dense_parts(rerank=profile == "hybrid+rerank" or None),
            settings=self.hybrid_settings(rerank=profile == "hybrid+rerank" or None),
            policy=policy,
            min_score=request.min_score or 0.0,
        )
        self.last_trace = trace
        return result

    def hybrid_settings(self, rerank: bool | None = None) -> Any:
        """``memory.retrieval`` as pipeline settings (``rerank`` overrides the config)."""
        from swarmmem.core.recall.hybrid import HybridSettings

        r = self.config["retrieval"]
        return HybridSettings(
            rrf_k=r["rrfK"],
            weight_lexical=r["weights"]["lexical"],
            weight_dense=r["weights"]["dense"],
            weight_metadata=r["weights"]["metadata"],
            fusion=r["fusion"],
            dense_rescue=r["denseRescue"],
            rerank=r["rerank"]["enabled"] if rerank is None else rerank,
            rerank_weight=r["rerank"]["weight"],
            latency_budget_ms=r["latencyBudgetMs"],
        )

    def dense_parts(self, rerank: bool | None = None) -> Any:
        """Embedder, vector index, cache (and reranker) when usable, else ``None``.

        The reason dense retrieval is off is kept in ``dense_unavailable_reason``.
        """
        if self._dense is not None or self.dense_unavailable_reason is not None:
            return self._with_reranker(self._dense, rerank)
        from swarmmem.core.model.errors import SwarmMemoryError
        from swarmmem.core.recall.embedding_cache import EmbeddingCache
        from swarmmem.core.recall.hybrid import DenseParts

        emb_cfg = self.config["embeddings"]
        try:
            name = self._adapters.get("embedder", emb_cfg["provider"])
            kwargs = {"dimension": emb_cfg["dimension"]} if name == "hashing" else {}
            embedder = _adapter("embedder", name, **kwargs)
            if not embedder.available:
                raise SwarmMemoryError(
                    "the embedder is not available (pip install 'swarmmem[dense]')"
                )
            index = self._adapters.get("vector_index") or self._open_index(embedder.dimension)
            index.seed_model_version(embedder.model_version)
            self._dense = DenseParts(
                embedder=embedder, index=index, cache=EmbeddingCache(emb_cfg["cacheSize"])
            )
        except SwarmMemoryError as exc:
            self.dense_unavailable_reason = str(exc)
            return None
        return self._with_reranker(self._dense, rerank)

    def _open_index(self, dimension: int) -> Any:
        from swarmmem.adapters.vectors.local import NumpyVectorIndex, SqliteVecIndex

        name = self._adapters.get("store") if isinstance(self._adapters.get("store"), str) else None
        provider = name or self.config["provider"]
        if provider == "sqlite" and not isinstance(self._adapters.get("store"), StorageProvider):
            _ = self.store  # make sure the database exists and is migrated
            return SqliteVecIndex(
                self._path(self.config["sqlite"]["path"]),
                dimension,
                busy_timeout_ms=self.config["sqlite"]["busyTimeoutMs"],
            )
        if provider == "postgres" and not isinstance(self._adapters.get("store"), StorageProvider):
            from swarmmem.adapters.vectors.pgvector import PgVectorIndex

            _ = self.store  # the schema exists and is migrated
            return PgVectorIndex(
                self.postgres_dsn(), dimension, schema=self.config["postgres"]["schema"]
            )
        return NumpyVectorIndex(dimension)

    def _with_reranker(self, parts: Any, rerank: bool | None) -> Any:
        if parts is None:
            return None
        wanted = self.config["retrieval"]["rerank"]["enabled"] if rerank is None else rerank
        if not wanted:
            return parts
        if self._reranker is None:
            given = self._adapters.get("reranker")
            if given is not None and not isinstance(given, str):
                self._reranker = given
            else:
                rr = self.config["retrieval"]["rerank"]
                name = given or rr["provider"]
                cls = resolve("reranker", name)
                if name == "cross-encoder":
                    if not rr["path"]:
                        return parts
                    self._reranker = cls(self._path(rr["path"]))
                elif name == "maxsim":
                    from swarmmem.registry import maxsim_reranker

                    self._reranker = maxsim_reranker(parts.embedder) or cls()
                else:
                    self._reranker = cls()
        return attrs.evolve(parts, reranker=self._reranker)

    def embed_records(self, records: Iterable[MemoryRecord]) -> int:
        """Write-time embedding of durable, non-ephemeral records (failures are non-fatal)."""
        if not self.config["embeddings"]["enabled"]:
            return 0
        parts = self.dense_parts(rerank=False)
        if parts is None:
            return 0
        from swarmmem.core.model.ids import normalize_text
        from swarmmem.core.model.records import DURABLE_MEMORY_KINDS

        chosen = [
            r for r in records if r.kind in DURABLE_MEMORY_KINDS and r.stability != "ephemeral"
        ]
        if not chosen:
            return 0
        try:
            vectors = parts.embedder.embed_batch([normalize_text(r.text).lower() for r in chosen])
            parts.index.upsert([r.id for r in chosen], vectors)
        except Exception as exc:
            import logging

            logging.getLogger("swarmmem").warning("write-time embedding failed: %s", exc)
            return 0
        return len(chosen)

    def rebuild_embedding_index(self, progress: Any = None, batch_size: int = 64) -> dict[str, Any]:
        """Re-embed every active durable memory; advance the stored model version only when
        every record was embedded."""
        from swarmmem.core.model.ids import normalize_text
        from swarmmem.core.model.records import DURABLE_MEMORY_KINDS
        from swarmmem.ports.storage import ListFilter

        self._require_enabled()
        self.dense_unavailable_reason = None
        self._dense = None
        parts = self.dense_parts(rerank=False)
        if parts is None:
            return {
                "rebuilt": 0,
                "failed": 0,
                "advanced": False,
                "reason": self.dense_unavailable_reason,
            }
        records = [
            r
            for r in self.store.list(ListFilter(now=to_iso(self.clock.now())))
            if r.kind in DURABLE_MEMORY_KINDS and r.stability != "ephemeral"
        ]
        done = failed = 0
        for start in range(0, len(records), batch_size):
            batch = records[start : start + batch_size]
            try:
                vectors = parts.embedder.embed_batch(
                    [normalize_text(r.text).lower() for r in batch]
                )
                parts.index.upsert([r.id for r in batch], vectors)
                done += len(batch)
            except Exception:
                failed += len(batch)
            if progress is not None:
                progress(done + failed, len(records))
        keep = {r.id for r in records}
        stale = [i for i in parts.index.ids() if i not in keep]
        if stale:
            parts.index.delete(stale)
        advanced = failed == 0
        if advanced:
            parts.index.set_model_version(parts.embedder.model_version)
        return {
            "rebuilt": done,
            "failed": failed,
            "advanced": advanced,
            "model_version": parts.embedder.model_version,
        }

    # ------------------------------------------------------------- operations
    def recall(
        self,
        query: str,
        task: str | None = None,
        kinds: Sequence[str] | None = None,
        max_items: int | None = None,
        token_budget: int | None = None,
        mode: str = "manual",
        profile: str | None = None,
        **options: Any,
    ) -> RecallBundle:
        """Recall memories relevant to ``query`` within this context's scopes."""
        return self.gateway.recall(
            query,
            task=task,
            kinds=kinds,
            max_items=max_items,
            token_budget=token_budget,
            mode=mode,
            profile=profile,
            **options,
        )

    def propose(self, **fields: Any) -> MemoryProposal:
        """Propose a memory change (pending until a curator decides)."""
        return self.gateway.propose(**fields)

    def curate(self, proposal_id: str, decision: str, **options: Any) -> AppliedChange:
        """Apply a curator decision to a pending proposal."""
        change = self.gateway.curate(proposal_id, decision, **options)
        written = [change.memory_id, change.replacement_memory_id]
        self.embed_records(r for r in (self.store.get(i) for i in written if i) if r is not None)
        return change

    def record_outcome(self, **fields: Any) -> dict[str, Any]:
        """Report that a memory (or question) was useful, a dead end, or corrected.

        When reflection is enabled the lesson files are regenerated afterwards; a failed
        regeneration makes the result ``partial`` (the outcome itself is recorded).
        """
        result = self.gateway.record_outcome(**fields)
        return {**result, **self._refresh_reflection()}

    def import_records(self, records: Iterable[Mapping[str, Any]]) -> ImportResult:
        """Trusted bulk write of records in the reference shape (one transaction).

        Missing derivable fields are filled (id, contentHash, timestamps, the repository
        scope, confidence 0.8, stability durable, source manual, scratch expiry); every record
        is validated; invalid ones are refused with their reason and nothing else changes.
        """
        self._require_enabled()
        now = self.clock.now()
        stamp = to_iso(now)
        repo_scope = self.allowed_scopes[1]
        written = 0
        refused: list[tuple[int, str]] = []
        ready: list[MemoryRecord] = []
        for index, raw in enumerate(records):
            try:
                ready.append(self._complete(raw, stamp, now, repo_scope))
            except (MemoryValidationError, TypeError, ValueError) as exc:
                refused.append((index, str(exc)))
        with self.store.transaction():
            for record in ready:
                self.store.upsert(record)
                written += 1
        self.embed_records(ready)
        return ImportResult(written=written, refused=tuple(refused))

    def _complete(
        self, raw: Mapping[str, Any], stamp: str, now: Any, repo_scope: Any
    ) -> MemoryRecord:
        if not isinstance(raw, Mapping):
            raise MemoryValidationError(f"record must be an object; got {type(raw).__name__}")
        data = dict(raw)
        scope = scope_from_dict(data["scope"]) if "scope" in data else repo_scope
        data["scope"] = scope.as_dict()
        kind = data.get("kind")
        text = data.get("text")
        if not isinstance(kind, str) or not isinstance(text, str):
            raise MemoryValidationError("record: kind and text are required strings")
        digest = content_hash(scope.as_dict(), kind, text)
        data.setdefault("contentHash", digest)
        data.setdefault("id", memory_id_for_hash(digest))
        data.setdefault("createdAt", stamp)
        data.setdefault("updatedAt", data["createdAt"])
        data.setdefault("confidence", 0.8)
        data.setdefault("stability", "ephemeral" if kind == "scratch" else "durable")
        data.setdefault("tags", [])
        if "source" not in data:
            data["source"] = {"type": "manual", "ref": "import"}
        else:
            source_from_dict(data["source"])
        if kind == "scratch" and "expiresAt" not in data:
            data["expiresAt"] = to_iso(now + SCRATCH_TTL)
        record = record_from_dict(data)
        return validate_record(
            record,
            secrets=self.secrets,
            reject_durable_secrets=self.config["redaction"]["rejectDurableSecrets"],
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
        """Automatic recall before an agent call: the bundle to inject, or ``None`` (skipped).

        Uses the stricter injection settings, never injects twice (``messages`` already holding
        a recall block), and logs ``recall_returned``, ``prompt_injected`` or
        ``prompt_injection_skipped`` (``disabled``, ``already_injected``, ``no_signal``,
        ``below_threshold``, ``no_results``) to ``.swarm/runs/<run-id>/memory.jsonl``.
        """
        from swarmmem.adapters.files.runlog import append_run_event
        from swarmmem.core.recall.injection import build_plan, should_skip

        run_id = self.context.effective_run_id
        stamp = to_iso(self.clock.now())
        settings = self.injection_settings()
        if not self.enabled or not settings.enabled:
            if self.enabled:
                append_run_event(
                    self.root,
                    run_id,
                    {"type": "prompt_injection_skipped", "reason": "disabled"},
                    stamp,
                )
            return None
        if should_skip(messages):
            append_run_event(
                self.root,
                run_id,
                {"type": "prompt_injection_skipped", "reason": "already_injected"},
                stamp,
            )
            return None
        plan = build_plan(
            agent_role=self.context.agent_role,
            agent_task=agent_task,
            user_goal=user_goal,
            settings=settings,
            project=project,
            current_plan=current_plan,
        )
        append_run_event(
            self.root, run_id, {"type": "recall_requested", "query": plan.query}, stamp
        )
        bundle = self.gateway.recall(
            plan.query,
            task=plan.task or None,
            kinds=plan.kinds,
            max_items=plan.max_items,
            token_budget=plan.token_budget,
            mode="injection",
            min_score=settings.min_score,
            require_query_signal=settings.require_query_signal,
        )
        if not bundle.items:
            reason = bundle.diagnostics.get("injectionSkipReason") or "no_results"
            append_run_event(
                self.root,
                run_id,
                {"type": "prompt_injection_skipped", "reason": reason, "bundleId": bundle.id},
                stamp,
            )
            return None
        append_run_event(
            self.root,
            run_id,
            {
                "type": "prompt_injected",
                "bundleId": bundle.id,
                "memoryIds": [i.record.id for i in bundle.items],
            },
            stamp,
        )
        return bundle

    def inject_blocks(
        self,
        *,
        agent_task: str | None = None,
        user_goal: str | None = None,
        messages: Sequence[str] = (),
        project: str | None = None,
        current_plan: str | None = None,
    ) -> list[str]:
        """Every block to place before the agent's task message, in order.

        The recall block of :meth:`inject` (when it is not skipped), then the bounded
        reflection block when reflection is enabled, lessons exist and it fits in what the
        injection token budget leaves.
        """
        from swarmmem.core.model.ids import estimate_tokens

        bundle = self.inject(
            agent_task=agent_task,
            user_goal=user_goal,
            messages=messages,
            project=project,
            current_plan=current_plan,
        )
        blocks = [bundle.prompt_block] if bundle is not None else []
        if not self.enabled or any("[SWARM MEMORY REFLECTION" in m for m in messages):
            return blocks
        lessons = self.reflection_block()
        used = bundle.token_estimate if bundle is not None else 0
        budget = self.injection_settings().token_budget
        if lessons and used + estimate_tokens(lessons) <= budget:
            blocks.append(lessons)
        return blocks

    def injection_settings(self) -> Any:
        """``memory.recall.injection`` as settings."""
        from swarmmem.core.recall.injection import InjectionSettings

        inj = self.config["recall"]["injection"]
        return InjectionSettings(
            enabled=inj["enabled"],
            min_score=inj["minScore"],
            require_query_signal=inj["requireQuerySignal"],
            max_items=inj["maxItems"],
            token_budget=inj["tokenBudget"],
        )

    # ------------------------------------------------ learning and maintenance
    def learning_settings(self) -> LearningSettings:
        """``memory.learning`` as learning-loop settings."""
        return LearningSettings.from_config(self.config["learning"])

    def register_session(self, session_id: str) -> None:
        """Mark a live session (e.g. a dispatched council member) as a known verdict target."""
        KNOWN_SESSIONS.register(session_id)

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
        session and by known member sessions; idempotent per swarm, task/phase and round."""
        from swarmmem.core.learning.rewards import apply_verdict

        self._require_enabled()
        parts = self.dense_parts(rerank=False) if self.config["embeddings"]["enabled"] else None
        result = apply_verdict(
            self.store,
            verdict=verdict,
            host_session_id=self.context.session_id,
            session_ids=session_ids,
            known_sessions=KNOWN_SESSIONS.snapshot(),
            swarm_id=swarm_id,
            task_or_phase=task_or_phase,
            round_number=round_number,
            now=to_iso(self.clock.now()),
            unit_id=self.context.unit_id,
            policy=self.learning_settings(),
            embed=parts.embedder.embed_batch if parts is not None else None,
            synthesis=synthesis,
        )
        return result.as_dict()

    def _report(self, name: str, limit: int | str | None, **extra: Any) -> dict[str, Any]:
        """Run ``core.maintenance.<name>`` on the store with the clock, limit and options."""
        from swarmmem.core.maintenance import reports as maintenance

        self._require_enabled()
        build = getattr(maintenance, name)
        return build(  # type: ignore[no-any-return]
            self.store,
            now=to_iso(self.clock.now()),
            limit=maintenance.parse_limit(limit),
            **extra,
        )

    def value_log(self, limit: int | str | None = None) -> dict[str, Any]:
        """Per-memory Q-values, statuses and recent rewards."""
        return self._report("value_log_report", limit, policy=self.learning_settings())

    def pending(self, limit: int | str | None = None) -> dict[str, Any]:
        """Pending proposals, rejected reasons and promotion candidates."""
        return self._report("pending_report", limit, policy=self.learning_settings())

    def recall_log(self, limit: int | str | None = None) -> dict[str, Any]:
        """Recall usage by role and memory, most- and never-recalled memories."""
        return self._report("recall_log_report", limit)

    def stale(self, limit: int | str | None = None) -> dict[str, Any]:
        """Expired scratch, tombstones, superseded chains, dead-anchor, low-utility, low-Q."""
        from swarmmem.adapters.files import lessons as reflection

        return self._report(
            "stale_report",
            limit,
            policy=self.learning_settings(),
            dead_anchor_ids=reflection.dead_anchor_ids(self.root),
        )

    def compact(self, confirm: bool = False) -> dict[str, Any]:
        """Remove deleted tombstones, superseded records and expired scratch (dry run unless
        ``confirm``)."""
        from swarmmem.core.maintenance import reports as maintenance

        self._require_enabled()
        now = to_iso(self.clock.now())
        report = maintenance.apply_compaction(self.store, now=now, confirm=confirm)
        if confirm and report["removed"] and self.config["embeddings"]["enabled"]:
            parts = self.dense_parts(rerank=False)
            if parts is not None:  # vectors live beside the store: drop the removed ones too
                parts.index.delete([i for n in maintenance.COMPACTION_CLASSES for i in report[n]])
        return report

    def reflect(self) -> dict[str, Any]:
        """Regenerate ``.swarm/reflections/lessons.{json,md}`` (only when reflection is enabled)."""
        from swarmmem.adapters.files import lessons as reflection

        self._require_enabled()
        result = reflection.regenerate(
            self.root,
            self.store,
            config=self.config,
            clock=self.clock,
            secrets=self.secrets,
            storage_dir=self.storage_dir,
            extra_store_files=(self._path(self.config["sqlite"]["path"]),),
        )
        result.pop("digest", None)
        return result

    def reflection_block(self) -> str:
        """The bounded reflection prompt block from ``lessons.json`` (empty when disabled)."""
        from swarmmem.adapters.files import lessons as reflection

        if not reflection.reflection_enabled(self.config):
            return ""
        return reflection.prompt_block(self.root, self.secrets)

    def _refresh_reflection(self) -> dict[str, Any]:
        from swarmmem.adapters.files import lessons as reflection

        out: dict[str, Any] = {
            "status": "complete",
            "partial": False,
            "reflection_enabled": reflection.reflection_enabled(self.config),
            "reflection_attempted": False,
            "reflection_updated": False,
        }
        if not out["reflection_enabled"]:
            return out
        out["reflection_attempted"] = True
        try:
            result = self.reflect()
        except Exception as exc:  # the outcome is recorded; a failure makes the result partial
            import logging

            logging.getLogger("swarmmem").warning("reflection regeneration failed", exc_info=True)
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
        """Release the store. Idempotent."""
        if self._dense is not None and "vector_index" not in self._adapters:
            self._dense.index.close()
        self._dense = None
        if self._store is not None and not isinstance(self._adapters.get("store"), StorageProvider):
            self._store.close()
        self._store = None
        self._gateway = None

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

"""The :class:`Memory` facade: the composition root that wires config, adapters and gateway."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from swarmmem import config as _config
from swarmmem.core.codec import record_from_dict, scope_from_dict, source_from_dict
from swarmmem.core.errors import MemoryDisabledError, MemoryValidationError
from swarmmem.core.gateway import GatewaySettings, MemoryGateway
from swarmmem.core.ids import content_hash, memory_id_for_hash, to_iso
from swarmmem.core.proposals import SCRATCH_TTL
from swarmmem.core.records import AppliedChange, MemoryProposal, MemoryRecord, RecallBundle
from swarmmem.core.scopes import MemoryContext, derive_allowed_scopes
from swarmmem.core.scoring import LearningPolicy
from swarmmem.core.validation import validate_record
from swarmmem.ports.clock import Clock, SystemClock
from swarmmem.ports.storage import StorageProvider
from swarmmem.registry import resolve

DISABLED_MESSAGE = (
    "Swarm memory is disabled. Set memory.enabled=true in .opencode/opencode-swarm.json "
    "(or pass config={'enabled': True})."
)
_REMOTE_RE = re.compile(r'\[remote "origin"\][\s\S]*?\n\s*url\s*=\s*(.+)')
_CONTEXT_KEYS = {"session_id", "run_id", "agent_role", "agent_id", "unit_id"}


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

    @classmethod
    def open(
        cls,
        root: Path,
        config: None | Mapping[str, Any] | str | os.PathLike[str],
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
        bad = set(adapters) - {"store", "secrets", "pii", "embedder", "reranker", "clock"}
        if bad:
            raise TypeError(f"unknown adapter argument(s): {', '.join(sorted(bad))}")
        return cls(root, cfg, MemoryContext(directory=str(root), **ctx), adapters=adapters)

    # ----------------------------------------------------------------- wiring
    @property
    def enabled(self) -> bool:
        """True when memory is enabled in the configuration."""
        return bool(self.config["enabled"])

    def _require_enabled(self) -> None:
        if not self.enabled:
            raise MemoryDisabledError(DISABLED_MESSAGE)

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
        return cls(clock=self.clock)  # type: ignore[no-any-return]

    @property
    def pii(self) -> Any:
        """The PII detector named by ``redaction.piiDetector`` (only built when enabled)."""
        if self._pii is None and self.config["redaction"]["detectPii"]:
            self._pii = _adapter("pii", self._adapters.get("pii", self.config["redaction"]["piiDetector"]))
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
            )
        return self._gateway

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
            query, task=task, kinds=kinds, max_items=max_items, token_budget=token_budget,
            mode=mode, **options,
        )

    def propose(self, **fields: Any) -> MemoryProposal:
        """Propose a memory change (pending until a curator decides)."""
        return self.gateway.propose(**fields)

    def curate(self, proposal_id: str, decision: str, **options: Any) -> AppliedChange:
        """Apply a curator decision to a pending proposal."""
        return self.gateway.curate(proposal_id, decision, **options)

    def record_outcome(self, **fields: Any) -> dict[str, Any]:
        """Report that a memory (or question) was useful, a dead end, or corrected."""
        return self.gateway.record_outcome(**fields)

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
        return ImportResult(written=written, refused=tuple(refused))

    def _complete(self, raw: Mapping[str, Any], stamp: str, now: Any, repo_scope: Any) -> MemoryRecord:
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

    # -------------------------------------------------------------- lifecycle
    def close(self) -> None:
        """Release the store. Idempotent."""
        if self._store is not None and not isinstance(self._adapters.get("store"), StorageProvider):
            self._store.close()
        self._store = None
        self._gateway = None

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

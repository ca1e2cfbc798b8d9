"""Helper constructors shared by the test suite (append new helpers; do not rewrite)."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import functools
import importlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from click.testing import CliRunner, Result

from swarmmem.core.model.events import Anchor, OutcomeEntry, OutcomeEvent, RecallUsage
from swarmmem.core.model.ids import content_hash, memory_id, proposal_id, to_iso
from swarmmem.core.model.records import (
    MemoryProposal,
    MemoryRecord,
    MemoryScope,
    MemorySource,
    ProposedBy,
)
from swarmmem.ports.clock import FixedClock
from swarmmem.registry import choices

# --- storage (issue "Storage") ---------------------------------------------------------------

REPO_SCOPE = MemoryScope(type="repository", repo_id="swarmmem-tests")
OTHER_SCOPE = MemoryScope(type="repository", repo_id="another-repo")
BASE_TIME = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
T0 = to_iso(BASE_TIME)
#: every registered store (the contract suite runs over each; :func:`open_store` opens them)
STORE_KINDS = choices("store")


def at(minutes: float = 0, *, days: float = 0) -> str:
    """An ISO timestamp ``minutes`` (and ``days``) after 2026-01-01T00:00:00.000Z."""
    return to_iso(BASE_TIME + dt.timedelta(minutes=minutes, days=days))


def make_memory(
    text: str = "Tests run with pytest from the repository root",
    *,
    kind: str = "project_fact",
    scope: MemoryScope = REPO_SCOPE,
    stability: str = "durable",
    created_at: str = T0,
    updated_at: str | None = None,
    tags: Sequence[str] = ("testing",),
    source: MemorySource | None = None,
    metadata: Mapping[str, Any] | None = None,
    expires_at: str | None = None,
    confidence: float = 0.8,
    **extra: Any,
) -> MemoryRecord:
    """A valid record whose id and contentHash derive from scope, kind and text."""
    scope_dict = scope.as_dict()
    if kind == "scratch" and expires_at is None:
        expires_at = to_iso(
            dt.datetime.fromisoformat(created_at.replace("Z", "+00:00")) + dt.timedelta(days=7)
        )
    return MemoryRecord(
        id=memory_id(scope_dict, kind, text),
        scope=scope,
        kind=kind,
        text=text,
        tags=tuple(tags),
        confidence=confidence,
        stability="ephemeral" if kind == "scratch" and stability == "durable" else stability,
        source=source or MemorySource(type="file", file_path="src/app/main.py"),
        created_at=created_at,
        updated_at=updated_at or created_at,
        content_hash=content_hash(scope_dict, kind, text),
        metadata=dict(metadata or {}),
        expires_at=expires_at,
        **extra,
    )


def make_proposal(
    *,
    operation: str = "add",
    record: MemoryRecord | None = None,
    target: str | None = None,
    related: Sequence[str] | None = None,
    created_at: str = T0,
    status: str = "pending",
    proposer: str = "coder",
    rationale: str = "observed while running the test suite",
    **extra: Any,
) -> MemoryProposal:
    """A proposal whose id derives from its creation time, proposer and text."""
    text = (
        record.text
        if record is not None
        else f"{operation}:{target or ''}:{','.join(related or ())}"
    )
    return MemoryProposal(
        id=proposal_id(created_at, proposer, text),
        operation=operation,
        rationale=rationale,
        status=status,
        created_at=created_at,
        proposed_by=ProposedBy(agent_role=proposer, run_id="run-1"),
        proposed_record=record,
        target_memory_id=target,
        related_memory_ids=tuple(related) if related is not None else None,
        evidence_refs=("src/app/main.py",),
        **extra,
    )


def open_store(kind: str, directory: Path, clock: FixedClock | None = None) -> Any:
    """Open (or reopen) a storage provider of ``kind`` whose files live in ``directory``."""
    from swarmmem.adapters.storage.jsonl import JsonlStore
    from swarmmem.adapters.storage.memory import InMemoryStore
    from swarmmem.adapters.storage.sqlite import SqliteStore

    clock = clock or FixedClock(BASE_TIME)
    if kind == "memory":
        return InMemoryStore(clock=clock)
    if kind == "local-jsonl":
        return JsonlStore(directory / "jsonl", clock=clock)
    if kind == "sqlite":
        return SqliteStore(directory / "memory.db", clock=clock)
    if kind == "postgres":
        from pg_support import open_pg_store

        return open_pg_store(directory, clock)  # one schema per directory; skips without a server
    raise ValueError(f"unknown store kind {kind!r}")


def available_store_kinds() -> tuple[str, ...]:
    """``STORE_KINDS`` without ``postgres`` when no PostgreSQL server is available."""
    from pg_support import postgres_available

    return tuple(k for k in STORE_KINDS if k != "postgres" or postgres_available())


# --- learning, maintenance and reflection (issue "Learning and reflection") -----------------


def recall_row(
    memory_ids: Sequence[str],
    *,
    session_id: str | None = "sess-1",
    timestamp: str = T0,
    bundle_id: str | None = None,
    run_id: str | None = None,
    unit_id: str | None = None,
    role: str | None = "coder",
    scores: Sequence[float] | None = None,
) -> RecallUsage:
    """A recall usage like the ones the gateway records."""
    from swarmmem.core.model.ids import bundle_id as make_bundle_id

    return RecallUsage(
        bundle_id=bundle_id or make_bundle_id(f"{session_id}:{memory_ids}", timestamp),
        query="test query",
        memory_ids=tuple(memory_ids),
        scores=tuple(scores) if scores is not None else (0.5,) * len(memory_ids),
        agent_role=role,
        run_id=run_id or session_id,
        session_id=session_id,
        unit_id=unit_id,
        timestamp=timestamp,
    )


def outcome_event(
    event_id: str, memory_id: str, generation: str, *, anchors: Sequence[Anchor] = (), **entry: Any
) -> OutcomeEvent:
    """An outcome event; ``entry`` overrides the ``OutcomeEntry`` (useful, at ``at(1)``)."""
    outcome = OutcomeEntry(**{"outcome": "useful", "at": at(1), **entry})
    return OutcomeEvent(
        id=event_id, memory_id=memory_id, generation=generation, outcome=outcome, anchors=anchors
    )


class Gateway:
    """Recall and writes of one session over a store, wired as the facade wires them."""

    def __init__(self, recall: Any, writes: Any) -> None:
        self.recall_service = recall
        self.writes = writes
        self.recall = lambda query, **options: recall.run(recall.build_request(query, **options))
        self.record_outcome = writes.record_outcome
        self.propose = writes.propose
        self.curate = writes.curate


def learning_gateway(
    store: Any,
    clock: FixedClock,
    *,
    session_id: str,
    scope: MemoryScope = REPO_SCOPE,
    role: str = "coder",
    unit_id: str | None = None,
    learning: Any = None,
    outcomes: Any = None,
) -> Gateway:
    """Recall and writes over ``store`` for one session that reads and writes ``scope`` only.

    ``outcomes`` (``LearningConfig``) makes outcomes teach Q values, as the facade wires it.
    """
    from swarmmem.adapters.detectors.regex_secrets import RegexSecretDetector
    from swarmmem.core.learning.outcomes import apply_outcome
    from swarmmem.core.model.scopes import MemoryContext
    from swarmmem.core.recall.service import RecallService
    from swarmmem.core.writes.service import WriteService

    context = MemoryContext(directory=".", session_id=session_id, agent_role=role, unit_id=unit_id)
    secrets = RegexSecretDetector()
    recall = RecallService(
        store,
        context,
        allowed_scopes=[scope],
        clock=clock,
        redact=secrets.redact,
        learning=learning,
    )
    learn = None
    if outcomes is not None:
        keys = frozenset({scope.key})
        learn = functools.partial(
            apply_outcome, store, scope_keys=keys, policy=outcomes, run_id=session_id
        )
    writes = WriteService(
        store, context, allowed_scopes=[scope], clock=clock, secrets=secrets, learn=learn
    )
    return Gateway(recall, writes)


# --- the Memory facade -----------------------------------------------------------------------


def enabled_config(provider: str, folder: Path) -> dict[str, Any]:
    """A ``memory`` section that turns memory on with ``provider`` (PostgreSQL: the test
    server, in a schema of ``folder``'s own; skipped when there is no server)."""
    if provider == "postgres":
        from pg_support import require_dsn, schema_for

        return {
            "enabled": True,
            "provider": "postgres",
            "postgres": {"dsn": require_dsn(), "schema": schema_for(folder)},
        }
    return {"enabled": True, "provider": provider}


def cite(root: Path | str, *refs: str) -> None:
    """Create the project files that evidence ``refs`` name under ``root`` (proposals must
    cite files that exist): enough lines for a ``:LINE`` ref and the symbol of a ``#symbol``
    one. URLs, commits, ``manual:`` and ``evidence-cache:`` refs need nothing."""
    from swarmmem.adapters.files.sources import parse_file_ref

    for ref in refs:
        parsed = parse_file_ref(ref)
        if parsed is None:
            continue
        path = Path(root) / parsed.path
        if path.exists():
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [f"# {parsed.path}"] + [f"line {i}" for i in range(2, (parsed.end or 1) + 1)]
        if parsed.symbol:
            lines.append(f"def {parsed.symbol.rsplit('.', 1)[-1]}(): ...")
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def propose_fact(
    mem: Any,
    text: str,
    *,
    kind: str = "project_fact",
    evidence: str = "pyproject.toml",
    rationale: str = "r",
    **extra: Any,
) -> Any:
    """``mem.propose`` an ``add`` of ``text`` citing one evidence ref (created when it is a
    missing project file, see :func:`cite`); return the proposal."""
    cite(mem.root, evidence)
    return mem.propose(
        operation="add",
        kind=kind,
        text=text,
        rationale=rationale,
        evidence_refs=[evidence],
        **extra,
    )


def curate_fact(mem: Any, text: str, **kwargs: Any) -> str:
    """Propose ``text`` (see :func:`propose_fact`), curate it with ``add``; return the memory id."""
    return str(mem.curate(propose_fact(mem, text, **kwargs).id, "add").memory_id)


def write_memory_config(root: Path, memory: Mapping[str, Any] | None = None) -> Path:
    """Write ``root/.opencode/opencode-swarm.json`` whose ``memory`` section is ``memory``
    (default: memory on, nothing else); return the file."""
    config = root / ".opencode" / "opencode-swarm.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    body = {"memory": dict(memory) if memory is not None else {"enabled": True}}
    config.write_text(json.dumps(body), encoding="utf-8")
    return config


def memory_project(
    root: Path, files: Mapping[str, str], memory: Mapping[str, Any] | None = None
) -> Path:
    """A project folder ``root`` with memory on (``memory``: the section, see
    :func:`write_memory_config`) that holds ``files`` (relative path: text); ``root``."""
    write_memory_config(root, memory)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


#: ``select_candidates`` arguments as recall gives them (100 pre-selected, expired records
#: left out), over the repository scope, every kind and no full-text query.
RECALL_QUERY: dict[str, Any] = {
    "scope_keys": (REPO_SCOPE.key,),
    "kinds": None,
    "fts_query": None,
    "preselect_limit": 100,
    "scope_when_unmatched": True,
    "include_expired": False,
    "candidate_cap": 1000,
}


def select_candidates(store: Any, *, now: str, **overrides: Any) -> Any:
    """``store.select_candidates`` at ``now`` with :data:`RECALL_QUERY`, ``overrides`` (the
    arguments a test is about) on top."""
    return store.select_candidates(**{**RECALL_QUERY, **overrides}, now=now)


# --- the command line ------------------------------------------------------------------------


def cli(root: Path, *args: str, stdin: str | None = None) -> Result:
    """``swarmmem --root ROOT ARGS`` in process (unexpected exceptions propagate)."""
    from swarmmem.cli import main

    return CliRunner().invoke(
        main, ["--root", str(root), *args], input=stdin, catch_exceptions=False
    )


def as_json(result: Result) -> dict[str, Any]:
    """The JSON object a ``--json`` command printed on stdout."""
    data = json.loads(result.stdout)
    assert isinstance(data, dict)
    return data


def run_swarmmem(
    cwd: Path,
    *args: str,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m swarmmem ARGS`` in ``cwd`` as a host would: a fresh process with only
    ``PATH`` and ``SWARMMEM_NO_EXTENSIONS`` of this environment, plus ``env``. Returns the
    ``subprocess.CompletedProcess`` (text output captured); the exit code is the caller's to
    check, and a hang fails after ``timeout`` seconds instead of blocking the suite."""
    keep = ("PATH", "SWARMMEM_NO_EXTENSIONS")
    full_env = {key: os.environ[key] for key in keep if key in os.environ}
    return subprocess.run(
        [sys.executable, "-m", "swarmmem", *args],
        cwd=cwd,
        env={**full_env, **(env or {})},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


# --- subprocesses ----------------------------------------------------------------------------


def run_python(
    code: str, *options: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> Any:
    """Run ``code`` in a fresh interpreter (``python *options -c code``); capture its text output.

    Returns the ``subprocess.CompletedProcess``; a non-zero exit is left to the caller to check.
    """
    return subprocess.run(
        [sys.executable, *options, "-c", code],
        cwd=cwd,
        env=None if env is None else dict(env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_threads(worker: Any, count: int) -> None:
    """Run ``worker(0)`` ... ``worker(count - 1)`` on ``count`` threads and wait for all."""
    import threading

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def wait_for(predicate: Any, timeout: float = 30.0, interval: float = 0.01) -> bool:
    """Poll ``predicate()`` every ``interval`` seconds until it is true or ``timeout`` seconds
    have passed; whether it came true (asked once more at the end)."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


# --- kernels -------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class KernelImpl:
    """One implementation of every ``_speedups`` kernel: the pure twins or the compiled ones."""

    name: str
    fusion: ModuleType
    lexical: ModuleType
    jaccard: ModuleType
    bm25: ModuleType

    @classmethod
    def load(cls, name: str) -> KernelImpl:
        """Import the kernel modules of implementation ``name`` (``py`` or ``compiled``)."""
        suffix = "c" if name == "compiled" else "py"
        modules = {
            kernel: importlib.import_module(f"swarmmem._speedups._{kernel}_{suffix}")
            for kernel in ("fusion", "lexical", "jaccard", "bm25")
        }
        return cls(name=name, **modules)


#: The parameters of a ``kernels`` fixture: the pure twins, then the compiled kernels (marked
#: ``compiled``, skipped under ``SWARMMEM_NO_EXTENSIONS=1``).
KERNEL_IMPLS = [
    pytest.param("py", id="py"),
    pytest.param(
        "compiled",
        id="compiled",
        marks=[
            pytest.mark.compiled,
            pytest.mark.skipif(
                os.environ.get("SWARMMEM_NO_EXTENSIONS") == "1", reason="SWARMMEM_NO_EXTENSIONS=1"
            ),
        ],
    ),
]


def stemmed_candidates(store: Any, query: str, *, include_expired: bool = False) -> Any:
    """The stemmed channel's pre-selection for ``query`` over :data:`REPO_SCOPE`, as of
    ``at(days=1)``."""
    from swarmmem.core.recall.bm25 import stemmed_query

    return store.select_candidates(
        scope_keys=[REPO_SCOPE.key],
        kinds=None,
        fts_query=stemmed_query(query, None, "manual"),
        preselect_limit=100,
        scope_when_unmatched=False,
        now=at(days=1),
        include_expired=include_expired,
        candidate_cap=1000,
        cap_before_preselect=False,
        stemmed=True,
    )


# --- files a process may not write ---------------------------------------------------------


@contextlib.contextmanager
def unwritable(*paths: Path) -> Iterator[None]:
    """Make ``paths`` unwritable for this process (immutable for root, read-only modes
    otherwise); skip the test when the machine cannot do either."""
    modes = {p: p.stat().st_mode for p in paths}
    immutable = os.geteuid() == 0 and shutil.which("chattr") is not None
    try:
        for path in paths:
            path.chmod(0o555 if path.is_dir() else 0o444)
        if immutable:
            done = subprocess.run(["chattr", "+i", *map(str, paths)], capture_output=True)
            if done.returncode != 0:
                pytest.skip(f"chattr +i failed: {done.stderr.decode().strip()}")
        if any(os.access(p, os.W_OK) for p in paths):
            pytest.skip("cannot make a file unwritable for this user on this machine")
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", *map(str, paths)], capture_output=True)
        for path, mode in modes.items():
            path.chmod(mode)


@contextlib.contextmanager
def closing_each() -> Iterator[list[Any]]:
    """A list to put what a test opens in (stores, listeners: anything with ``close()``); each
    is closed, in order, on leaving."""
    opened: list[Any] = []
    try:
        yield opened
    finally:
        for item in opened:
            item.close()

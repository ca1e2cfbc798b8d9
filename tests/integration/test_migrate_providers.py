"""``swarmmem migrate``: sqlite -> postgres -> sqlite keeps everything, all or nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from click.testing import CliRunner
from factories import (
    OTHER_SCOPE,
    at,
    make_memory,
    make_proposal,
    open_store,
    outcome_event,
    recall_row,
)
from pg_support import require_dsn, schema_for

import swarmmem
from swarmmem.adapters.storage.provider_migration import copy_store
from swarmmem.adapters.storage.sqlite import SqliteStore
from swarmmem.cli import main
from swarmmem.core.model.codec import proposal_to_dict, record_to_dict
from swarmmem.core.model.errors import ConflictError
from swarmmem.core.model.events import RewardEvent
from swarmmem.core.model.records import Anchor
from swarmmem.core.recall.fts import build_fts_query


@pytest.fixture
def dsn() -> str:
    """The test server's DSN (skips when there is none)."""
    return require_dsn()


def fill(store: Any) -> None:
    """Memories in every state, proposals, a merge, outcomes, usage, rewards and events."""
    a = store.upsert(make_memory("Tests run with pytest", metadata={"outcomeGeneration": "g"}))
    b = store.upsert(make_memory("Tests also run under tox", updated_at=at(2)))
    c = store.upsert(make_memory("Lint with ruff", kind="repo_convention", updated_at=at(3)))
    store.upsert(make_memory("Other repo fact", scope=OTHER_SCOPE, valid_from=at(1)))
    store.upsert(make_memory("scratch thought", kind="scratch", created_at=at(4)))
    old = store.upsert(make_memory("formatter is black", updated_at=at(5)))
    store.upsert(
        make_memory(
            "formatter is ruff",
            updated_at=at(6),
            supersedes=(old.id,),
            supersedes_reason="switched",
            source_task_id="task-9",
        )
    )
    store.upsert(attrs.evolve(old, superseded_by=make_memory("formatter is ruff").id))
    store.delete(c.id, reason="obsolete", now=at(7))
    store.create_proposal(make_proposal(record=make_memory("pending idea"), created_at=at(8)))
    store.create_proposal(
        make_proposal(operation="merge", related=[a.id, b.id], status="applied", created_at=at(9))
    )
    store.append_outcome(
        outcome_event("ev-1", a.id, "g", at=at(10), anchors=[Anchor(file="src/app.py")])
    )
    store.record_recall_usage(recall_row([a.id, b.id], timestamp=at(11), run_id="run-7"))
    store.record_recall_usage(recall_row([b.id], timestamp=at(11), session_id="s2"))
    store.append_reward_event(
        RewardEvent(
            id="rw-1",
            memory_id=a.id,
            verdict="APPROVE",
            reward=1.0,
            q_before=0.5,
            q_after=0.55,
            timestamp=at(12),
            verdict_synthesis={"votes": [1, 2]},
        )
    )
    store.append_event("note", a.id, reason="hand-written", event={"k": [1, "two"]})


def snapshot(store: Any) -> dict[str, Any]:
    """Everything a provider returns, in provider-independent form."""
    records = list(store.iter_all_records())
    return {
        "records": [record_to_dict(r) for r in records],
        "related": {r.id: store.related_ids(r.id) for r in records},
        "proposals": [proposal_to_dict(p) for p in store.list_proposals()],
        "events": [attrs.asdict(e) for e in store.list_events()],
        "outcomes": store.list_outcomes(),
        "usage": store.list_recall_usage(),
        "rewards": store.list_reward_events(),
        "head": store.verify_audit_chain()["headStored"],
    }


def recall_order(store: Any) -> Any:
    found = store.select_candidates(
        scope_keys=[make_memory().scope.key],
        kinds=None,
        fts_query=build_fts_query("run tests with pytest or tox", None, "manual"),
        preselect_limit=100,
        scope_when_unmatched=True,
        now=at(days=1),
        include_expired=False,
        candidate_cap=1000,
    )
    return found.fts_order


def project(root: Path, memory: dict[str, Any]) -> Path:
    config = root / ".opencode" / "opencode-swarm.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"memory": {"enabled": True, **memory}}), encoding="utf-8")
    return root


def migrate(root: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["--root", str(root), "--json", "migrate", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)  # type: ignore[no-any-return]


def test_round_trip_sqlite_postgres_sqlite_preserves_everything(dsn: str, tmp_path: Path) -> None:
    """Every row comes back identical, the chain verifies on each target, counts check out,
    and full-text pre-selection agrees on the copies."""
    first = project(tmp_path / "one", {"provider": "sqlite"})
    original_db = first / ".swarm" / "memory" / "memory.db"
    with SqliteStore(original_db) as store:
        fill(store)
        original = snapshot(store)
        original_order = recall_order(store)
    schema = schema_for(tmp_path / "pg")
    report = migrate(first, "--to", "postgres", "--dsn", dsn, "--schema", schema)
    assert report["success"] and report["verified"] and report["audit_verified"]
    assert report["counts"] == report["target_counts"]
    assert report["counts"]["memory_items"] == 7 and report["counts"]["memory_relations"] == 2
    assert report["counts"]["memory_events"] == len(original["events"])
    pg = open_store("postgres", tmp_path / "pg")
    try:
        assert snapshot(pg) == original
        assert pg.verify_audit_chain()["verified"]
        assert recall_order(pg) == original_order
    finally:
        pg.close()

    second = project(
        tmp_path / "two", {"provider": "postgres", "postgres": {"dsn": dsn, "schema": schema}}
    )
    back = tmp_path / "back.db"
    report = migrate(second, "--to", "sqlite", "--path", str(back))
    assert report["success"] and report["source"] == "postgres"
    with SqliteStore(back) as store:
        assert snapshot(store) == original
        assert store.verify_audit_chain()["verified"]
        assert recall_order(store) == original_order


def test_text_output_names_every_table(dsn: str, tmp_path: Path) -> None:
    """Without --json the command prints one verified count line per table."""
    root = project(tmp_path / "p", {"provider": "sqlite"})
    with SqliteStore(root / ".swarm" / "memory" / "memory.db") as store:
        store.upsert(make_memory())
    result = CliRunner().invoke(
        main,
        [
            "--root",
            str(root),
            "migrate",
            "--to",
            "postgres",
            "--dsn",
            dsn,
            "--schema",
            schema_for(tmp_path / "pg"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "- memory_items: 1 -> 1" in result.output
    assert "Audit chain on the target: verified" in result.output


@pytest.mark.parametrize("direction", ["to-postgres", "to-sqlite"])
def test_an_interrupted_copy_leaves_the_target_untouched(
    dsn: str, tmp_path: Path, direction: str
) -> None:
    """A failure half-way (after some rows went in) rolls the whole target back."""
    source = open_store("sqlite" if direction == "to-postgres" else "postgres", tmp_path / "src")
    target = open_store("postgres" if direction == "to-postgres" else "sqlite", tmp_path / "dst")
    try:
        fill(source)
        before = snapshot(target)
        calls: list[int] = []

        def interrupt(done: int, total: int) -> None:
            calls.append(done)
            if done > 0:
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            copy_store(source, target, progress=interrupt)
        assert calls[-1] > 0
        assert snapshot(target) == before
        assert target.count() == 0 and target.verify_audit_chain()["verified"]
        report = copy_store(source, target)
        assert report["verified"] and snapshot(target) == snapshot(source)
    finally:
        source.close()
        target.close()


def test_a_non_empty_target_is_refused(dsn: str, tmp_path: Path) -> None:
    """Migration only fills a new store; an existing one is left as it was."""
    source = open_store("sqlite", tmp_path / "src")
    target = open_store("postgres", tmp_path / "dst")
    try:
        fill(source)
        target.upsert(make_memory("already here"))
        before = snapshot(target)
        with pytest.raises(ConflictError, match="not empty"):
            copy_store(source, target)
        assert snapshot(target) == before
    finally:
        source.close()
        target.close()


@pytest.mark.parametrize("given", [None, "relative", "absolute"])
def test_migrate_refuses_the_source_database_as_its_target(
    tmp_path: Path, given: str | None
) -> None:
    """A SQLite project migrated to SQLite needs a --path other than its own database
    (exit 2); the store is left as it was."""
    root = project(tmp_path, {"provider": "sqlite"})
    own = root / ".swarm" / "memory" / "memory.db"
    with swarmmem.open(root) as mem:
        mem.import_records([{"kind": "project_fact", "text": "Builds run with make."}])
    before = own.read_bytes()
    path = {None: [], "relative": [".swarm/memory/memory.db"], "absolute": [str(own)]}[given]
    result = CliRunner().invoke(
        main,
        ["--root", str(root), "--json", "migrate", "--to", "sqlite"]
        + (["--path", *path] if path else []),
    )
    assert result.exit_code == 2, result.output
    assert "is the source database" in json.loads(result.output)["message"]
    assert own.read_bytes() == before


def test_migrate_needs_a_dsn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--to postgres without any DSN is a configuration error (exit 2), nothing is opened."""
    monkeypatch.delenv("SWARMMEM_PG_DSN", raising=False)
    pytest.importorskip("psycopg")
    root = project(tmp_path, {"provider": "sqlite"})
    result = CliRunner().invoke(
        main, ["--root", str(root), "--json", "migrate", "--to", "postgres"]
    )
    assert result.exit_code == 2
    assert "needs --dsn" in json.loads(result.output)["message"]

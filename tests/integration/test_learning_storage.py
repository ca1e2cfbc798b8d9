"""Learning, compaction and reflection on every storage provider, through the facade and CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from factories import (
    BASE_TIME,
    STORE_KINDS,
    at,
    available_store_kinds,
    make_memory,
    open_store,
    outcome_event,
    recall_row,
)

import swarmmem
from swarmmem.cli import main
from swarmmem.core.learning.reflection import build_digest, render_json, select_entries
from swarmmem.core.learning.rewards import STATUS_ALREADY_APPLIED, STATUS_APPLIED, apply_verdict
from swarmmem.core.maintenance import reports as mt
from swarmmem.core.model.records import Anchor, OutcomeEntry
from swarmmem.ports.clock import FixedClock

NOW = at(days=30)
FACT = "Run the unit tests with pytest from the repository root directory"
TWIN = "Run the unit tests with pytest from the repository root folder"


@pytest.fixture(params=STORE_KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    """The provider under test."""
    return str(request.param)


def reopen(kind: str, current: Any, directory: Path) -> Any:
    """Close and reopen a file-backed store (the in-memory one is kept)."""
    if kind == "memory":
        return current
    current.close()
    return open_store(kind, directory, FixedClock(BASE_TIME))


def test_verdicts_persist_and_stay_idempotent_across_reopen(kind: str, tmp_path: Path) -> None:
    """Q-values, reward events and the reward key survive closing the store."""
    store = open_store(kind, tmp_path, FixedClock(BASE_TIME))
    fact, twin = store.upsert(make_memory(FACT)), store.upsert(make_memory(TWIN))
    store.record_recall_usage(recall_row([twin.id], session_id="other", timestamp=at(1)))
    store.record_recall_usage(recall_row([fact.id], timestamp=at(2)))
    args: dict[str, Any] = {
        "verdict": "APPROVE",
        "host_session_id": "sess-1",
        "swarm_id": "s",
        "task_or_phase": "t",
        "round_number": 1,
        "now": NOW,
    }
    assert apply_verdict(store, **args).status == STATUS_APPLIED
    store = reopen(kind, store, tmp_path)
    try:
        assert store.get(fact.id).q == pytest.approx(0.55)
        assert store.get(twin.id).q == pytest.approx(0.515)
        verdicts = sorted(e.verdict for e in store.list_reward_events())
        assert verdicts == ["APPROVE", "APPROVE_PROPAGATED"]
        assert (
            apply_verdict(store, **{**args, "verdict": "REJECT"}).status == STATUS_ALREADY_APPLIED
        )
        assert store.get(fact.id).q == pytest.approx(0.55)
    finally:
        store.close()


def test_compaction_removes_only_the_three_classes_on_every_provider(
    kind: str, tmp_path: Path
) -> None:
    """Dry run keeps everything; confirmed compaction removes exactly the three classes."""
    store = open_store(kind, tmp_path, FixedClock(BASE_TIME))
    replacement = make_memory("The formatter is ruff", supersedes_reason="switched")
    keep = [make_memory("Live fact stays"), replacement, make_memory("Todo note", kind="todo")]
    drop = [
        make_memory("Tombstoned fact", metadata={"deleted": True, "outcomeGeneration": "g"}),
        make_memory("The formatter is black", superseded_by=replacement.id),
        make_memory("Old scratch note", kind="scratch"),
    ]
    for record in keep + drop:
        store.upsert(record)
    store.append_outcome(outcome_event("ev-1", drop[0].id, "g", outcome="dead_end"))
    try:
        assert mt.apply_compaction(store, now=NOW).removed == 0
        assert store.count() == 6
        report = mt.apply_compaction(store, now=NOW, confirm=True)
        assert report.removed == 3
        store = reopen(kind, store, tmp_path)
        assert sorted(r.id for r in store.iter_all_records()) == sorted(r.id for r in keep)
        assert store.list_outcomes(drop[0].id) == []
        assert any(e.operation == "compact" for e in store.list_events())
    finally:
        store.close()


def test_reflection_digest_is_identical_on_every_provider(tmp_path: Path) -> None:
    """The same history gives byte-identical lessons.json text on all providers."""
    texts = []
    for kind in available_store_kinds():
        store = open_store(kind, tmp_path / kind, FixedClock(BASE_TIME))
        record = make_memory(FACT, anchors=(Anchor(file="src/app.py"),))
        generation = "gen-1"
        store.upsert(
            make_memory(
                FACT,
                anchors=(Anchor(file="src/app.py"),),
                metadata={"outcomeGeneration": generation},
            )
        )
        for index, outcome in enumerate(("useful", "useful", "dead_end")):
            store.append_outcome(
                outcome_event(
                    f"ev-{index}",
                    record.id,
                    generation,
                    outcome=outcome,
                    at=at(index),
                    anchors=[Anchor(file="src/app.py", symbol="main")],
                )
            )
        entries = select_entries(store, now=NOW)
        assert entries[0].outcomes == (
            OutcomeEntry(outcome="useful", at=at(0)),
            OutcomeEntry(outcome="useful", at=at(1)),
            OutcomeEntry(outcome="dead_end", at=at(2)),
        )
        texts.append(render_json(build_digest(entries, now=NOW, anchor_alive=lambda f: True)))
        store.close()
    assert texts[0] == texts[1] == texts[2]
    assert json.loads(texts[0])["contested"][0]["positiveOutcomes"] == 2


# ----------------------------------------------------------------------------- facade


def open_project(root: Path, session: str, **config: Any) -> Any:
    """An enabled SQLite-backed Memory for ``session`` with a fixed clock."""
    return swarmmem.open(
        root,
        {"enabled": True, **config},
        context={"session_id": session},
        clock=FixedClock(BASE_TIME),
    )


def test_facade_verdict_uses_host_and_registered_member_sessions(tmp_path: Path) -> None:
    """Sessions opened in this process are known members; made-up ids are dropped."""
    root = tmp_path / "repo"
    root.mkdir()
    with open_project(root, "host-1") as host, open_project(root, "member-1") as member:
        host.import_records([{"kind": "repo_convention", "text": "Builds use make release"}])
        member.import_records([{"kind": "repo_convention", "text": "Docs build with mkdocs"}])
        host.recall("make release builds")
        member.recall("mkdocs docs build")
        result = host.record_verdict(
            "approve",
            swarm_id="swarm",
            task_or_phase="phase-1",
            round_number=0,
            session_ids=["member-1", "ghost-session"],
        )
        assert result.status == STATUS_APPLIED
        assert result.sessions == ("host-1", "member-1")
        assert result.dropped_session_ids == ("ghost-session",)
        assert len(result.direct) == 2
        log = host.value_log()
        assert {m["id"] for m in log.memories} == {u.memory_id for u in result.updates}
        assert host.recall_log().events_scanned == 2
        assert host.pending().pending_count == 0
        assert host.compact().mode == "dry-run"


# ----------------------------------------------------------------------------- CLI


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose configuration enables memory and reflection (SQLite store)."""
    root = tmp_path / "project"
    (root / ".opencode").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("x = 1\n", encoding="utf-8")
    document = {"memory": {"enabled": True, "reflection": {"enabled": True}}}
    (root / ".opencode" / "opencode-swarm.json").write_text(json.dumps(document), encoding="utf-8")
    with swarmmem.open(root, context={"session_id": "cli-session"}) as mem:
        mem.import_records([{"kind": "repo_convention", "text": "Run tests with pytest -q"}])
    return root


def cli(root: Path, *args: str) -> Result:
    """Invoke ``swarmmem --root ROOT ARGS`` in process."""
    return CliRunner().invoke(main, ["--root", str(root), *args], catch_exceptions=False)


def test_cli_verdict_then_value_log(project: Path) -> None:
    """``verdict`` rewards the session's last recall; ``value-log`` shows it."""
    assert cli(project, "--session", "cli-session", "recall", "pytest tests").exit_code == 0
    result = cli(
        project, "--session", "cli-session", "verdict", "APPROVE",
        "--swarm-id", "s", "--task", "t", "--round", "1", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "applied"
    assert data["updates"][0]["q_after"] == pytest.approx(0.55)
    again = cli(
        project, "--session", "cli-session", "verdict", "REJECT",
        "--swarm-id", "s", "--task", "t", "--round", "1",
    )  # fmt: skip
    assert "already_applied" in again.stdout
    text = cli(project, "value-log").stdout
    assert text.startswith("## Swarm Memory Value Log")
    assert "q=0.550 [neutral] rewards=1" in text


def test_cli_reports_accept_limit_and_json(project: Path) -> None:
    """recall-log, stale and compact print Markdown, JSON with --json, and clamp --limit."""
    assert "## Swarm Memory Recall Log" in cli(project, "recall-log").stdout
    stale = json.loads(cli(project, "stale", "--limit", "500", "--json").stdout)
    assert stale["limit"] == 100
    assert stale["active_count"] == 1
    compact = cli(project, "compact")
    assert "- Mode: `dry-run`" in compact.stdout
    confirmed = json.loads(cli(project, "compact", "--confirm", "--json").stdout)
    assert confirmed["mode"] == "confirmed"
    assert cli(project, "stale", "--limit", "abc").exit_code == 2


def test_cli_reflect_writes_lessons(project: Path) -> None:
    """``reflect`` regenerates both lesson files."""
    result = cli(project, "reflect", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["updated"] is True
    assert (project / ".swarm/reflections/lessons.json").exists()
    assert (project / ".swarm/reflections/lessons.md").exists()


def test_cli_verdict_rejects_unknown_verdicts(project: Path) -> None:
    """An unknown verdict is a usage error (exit 2)."""
    result = cli(project, "verdict", "MAYBE", "--swarm-id", "s", "--task", "t", "--round", "1")
    assert result.exit_code == 2


class CountingEmbedder:
    """The hashing embedder, counting batch calls."""

    def __init__(self) -> None:
        from swarmmem.adapters.models.hashing_embedder import HashingEmbedder

        self.inner = HashingEmbedder(dimension=32)
        self.batches = 0
        self.model_version = self.inner.model_version
        self.dimension = self.inner.dimension
        self.available = True

    def embed(self, text: str) -> Any:
        """One vector."""
        return self.inner.embed(text)

    def embed_batch(self, texts: Any) -> Any:
        """Vectors of ``texts``, counted."""
        self.batches += 1
        return self.inner.embed_batch(texts)


def test_dense_facade_propagates_with_the_embedder_and_compacts_vectors(tmp_path: Path) -> None:
    """With embeddings on, verdicts use the embedder and compaction drops removed vectors."""
    root = tmp_path / "repo"
    root.mkdir()
    embedder = CountingEmbedder()
    config = {"enabled": True, "provider": "memory", "embeddings": {"enabled": True}}
    with swarmmem.open(
        root,
        config,
        context={"session_id": "dense-1"},
        embedder=embedder,
        clock=FixedClock(BASE_TIME),
    ) as mem:
        mem.import_records(
            [
                {"kind": "repo_convention", "text": "Builds use make release"},
                {"kind": "code_pattern", "text": "Release builds go through make"},
            ]
        )
        assert mem.rebuild_embedding_index().rebuilt == 2
        first = mem.recall("release builds go through make", max_items=1, kinds=["code_pattern"])
        last = mem.recall("builds use make release", max_items=1, kinds=["repo_convention"])
        assert len(first.items) == len(last.items) == 1
        calls = embedder.batches
        result = mem.record_verdict("APPROVE", swarm_id="s", task_or_phase="t", round_number=1)
        assert result.status == STATUS_APPLIED
        assert [u.memory_id for u in result.updates[:1]] == [last.items[0].record.id]
        assert embedder.batches == calls + 1  # the cross-kind path embedded source and pool
        parts = mem.runtime.dense_parts(rerank=False)
        victim = result.updates[0].memory_id
        mem.store.delete(victim, reason="retired", now=at(1))
        assert victim in parts.index.ids()
        assert mem.compact(confirm=True).removed == 1
        assert victim not in parts.index.ids()

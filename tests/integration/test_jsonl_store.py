"""The local-jsonl provider against real files: append-only log, replay, damaged lines."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest
from factories import at, make_memory, make_proposal

from swarmmem.adapters.storage.jsonl import FILES, JsonlStore
from swarmmem.core.model.codec import record_to_dict
from swarmmem.core.model.events import RecallUsage


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def test_writes_append_and_replay_last_row_wins(tmp_path: Path) -> None:
    """Every write appends a line; reopening replays them and keeps the last row per id."""
    with JsonlStore(tmp_path) as store:
        record = make_memory()
        store.upsert(record)
        store.upsert(attrs.evolve(record, confidence=0.1, updated_at=at(5)))
    assert len(lines(tmp_path / "memories.jsonl")) == 2
    with JsonlStore(tmp_path) as again:
        assert again.get(record.id).confidence == 0.1 and again.count() == 1
        assert again.load_report == []
    assert {p.name for p in tmp_path.iterdir()} <= set(FILES)


def test_corrupted_lines_are_reported_not_fatal(tmp_path: Path) -> None:
    """Bad JSON, an invalid record and a torn last line are listed; valid rows still load."""
    good = make_memory("good fact")
    invalid = {**record_to_dict(make_memory("other fact")), "kind": "nonsense"}
    (tmp_path / "memories.jsonl").write_text(
        json.dumps(record_to_dict(good)) + "\n{oops\n" + json.dumps(invalid) + "\n" + '{"id": "mem_'
    )
    store = JsonlStore(tmp_path)
    try:
        assert store.count() == 1 and store.get(good.id) == good
        assert [(p["file"], p["line"]) for p in store.load_report] == [
            ("memories.jsonl", 2),
            ("memories.jsonl", 3),
            ("memories.jsonl", 4),
        ]
        assert "invalid JSON" in store.load_report[0]["error"]
        later = make_memory("written after the torn line")
        store.upsert(later)
    finally:
        store.close()
    with JsonlStore(tmp_path) as again:
        assert again.get(later.id) == later and len(again.load_report) == 3


def test_invalid_newer_row_keeps_the_last_valid_version(tmp_path: Path) -> None:
    """On load, a broken newer row is reported and the previous valid version stays visible."""
    record = make_memory()
    broken = {**record_to_dict(record), "confidence": 7}
    (tmp_path / "memories.jsonl").write_text(
        json.dumps(record_to_dict(record)) + "\n" + json.dumps(broken) + "\n"
    )
    with JsonlStore(tmp_path) as store:
        assert store.get(record.id) == record
        assert store.load_report[0]["line"] == 2


def test_rolled_back_transaction_leaves_files_untouched(tmp_path: Path) -> None:
    """Buffered lines of a failed transaction are never written."""
    with JsonlStore(tmp_path) as store:
        store.upsert(make_memory("kept"))
        before = {
            name: (tmp_path / name).read_bytes() for name in ("memories.jsonl", "audit.jsonl")
        }
        with pytest.raises(RuntimeError), store.transaction():
            store.upsert(make_memory("discarded"))
            store.create_proposal(make_proposal(record=make_memory("discarded")))
            raise RuntimeError("abort")
        after = {name: (tmp_path / name).read_bytes() for name in before}
        assert after == before and not (tmp_path / "proposals.jsonl").exists()


def test_hard_delete_rewrites_the_file(tmp_path: Path) -> None:
    """A hard delete rewrites memories.jsonl without the erased id."""
    a, b = make_memory("a fact"), make_memory("b fact")
    with JsonlStore(tmp_path) as store:
        store.upsert(a)
        store.upsert(b)
        store.upsert(attrs.evolve(a, confidence=0.3))
        store.delete(b.id, reason="compact", now=at(9), hard=True)
    rows = [json.loads(line) for line in lines(tmp_path / "memories.jsonl")]
    assert [r["id"] for r in rows] == [a.id] and rows[0]["confidence"] == 0.3


def test_recall_usage_is_logged_as_recall_lines(tmp_path: Path) -> None:
    """Recall usage is logged to audit.jsonl as `recall` lines, read back apart from events."""
    with JsonlStore(tmp_path) as store:
        store.record_recall_usage(RecallUsage(bundle_id="bundle_1", run_id="r", timestamp=at(1)))
        store.append_event("compact", "store")
    audit = [json.loads(line) for line in lines(tmp_path / "audit.jsonl")]
    assert [a["operation"] for a in audit] == ["recall", "compact"]
    assert audit[0]["usage"]["bundleId"] == "bundle_1"
    with JsonlStore(tmp_path) as again:
        assert [u.bundle_id for u in again.list_recall_usage()] == ["bundle_1"]
        assert [e.operation for e in again.list_events()] == ["compact"]

"""Sessions from their run logs: the run-log reader (never through a link, only regular files,
bounded), the list of runs, and the timeline every field of which is read as untrusted."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from swarmmem.adapters.files import runlog
from swarmmem.adapters.files.runlog import JsonlRunLog, append_run_event, read_run_events
from swarmmem.core.maintenance.sessions import MAX_TEXT, session_timeline, timeline_entry
from swarmmem.core.model.errors import StorageError
from swarmmem.ports.files import RunHistory, RunLog


def test_the_jsonl_run_log_lists_its_runs_newest_first(tmp_path: Path) -> None:
    log = JsonlRunLog(tmp_path)
    assert isinstance(log, RunLog) and isinstance(log, RunHistory)
    assert log.runs() == []  # no .swarm/runs yet
    for run in ("a", "b", "c"):
        log.append(run, {"type": "recall_requested"}, "2026-01-01T00:00:00.000Z")
    for age, run in enumerate(("b", "c", "a")):
        path = runlog.run_log_path(tmp_path, run)
        os.utime(path, ns=(10**18 - age * 10**9, 10**18 - age * 10**9))
    (tmp_path / ".swarm" / "runs" / "empty").mkdir()  # a folder without a log
    assert log.runs() == ["b", "c", "a"]


def test_links_are_never_followed_when_reading(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "memory.jsonl").write_text(json.dumps({"type": "x"}) + "\n")
    project = tmp_path / "project"
    project.mkdir()
    append_run_event(project, "real", {"type": "y"}, "t")
    runs = project / ".swarm" / "runs"
    os.symlink(elsewhere, runs / "folder-link")
    (runs / "file-link").mkdir()
    os.symlink(elsewhere / "memory.jsonl", runs / "file-link" / "memory.jsonl")
    assert JsonlRunLog(project).runs() == ["real"]
    with pytest.raises(StorageError, match="symbolic link"):
        read_run_events(project, "folder-link")
    with pytest.raises(StorageError, match="symbolic link"):
        read_run_events(project, "file-link")


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    folder = tmp_path / ".swarm" / "runs" / "fifo"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "memory.jsonl")
    with pytest.raises(StorageError, match="not a regular file"):
        read_run_events(tmp_path, "fifo")


def test_a_huge_log_is_read_from_its_newest_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runlog, "MAX_READ_BYTES", 200)
    for i in range(40):
        append_run_event(tmp_path, "big", {"type": "t", "n": i}, "x")
    events = read_run_events(tmp_path, "big")
    assert 0 < len(events) < 40 and events[-1]["n"] == 39
    assert [e["n"] for e in events] == list(range(40 - len(events), 40))  # no cut line


def test_lines_that_are_not_objects_are_skipped(tmp_path: Path) -> None:
    append_run_event(tmp_path, "r", {"type": "ok"}, "t")
    with open(runlog.run_log_path(tmp_path, "r"), "a", encoding="utf-8") as log:
        log.write("[1, 2]\nnot json\n42\n")
    assert [e["type"] for e in read_run_events(tmp_path, "r")] == ["ok"]


def test_every_field_is_typed_and_clipped() -> None:
    entry = timeline_entry(
        {
            "type": ["not", "a", "string"],
            "memoryIds": ["mem_a", 7, None, "x" * (MAX_TEXT + 50)],
            "scores": [0.5, "high", True, 0, None],
            "tokens": -3,
            "dense": "yes",
            "reason": {"nested": 1},
            "queryTerms": "not a list",
            "proposalIds": ["prop_1"],
            "duplicates": [{"duplicateOf": "prop_0"}, "junk", {"duplicateOf": 5}],
            "nudged": "yes",
        }
    )
    assert entry["type"] == "unknown"
    assert entry["memory_ids"][:1] == ["mem_a"] and len(entry["memory_ids"]) == 2
    assert len(entry["memory_ids"][1]) == MAX_TEXT and entry["memory_ids"][1].endswith("…")
    assert entry["scores"] == [0.5, 0.0]
    assert entry["tokens"] is None and entry["dense"] is None and entry["reason"] is None
    assert entry["query_terms"] == [] and entry["proposal_ids"] == ["prop_1"]
    assert entry["duplicate_of"] == ["prop_0"] and entry["nudged"] is None


def test_a_timeline_adds_up_what_the_session_received() -> None:
    events = [
        {"type": "session_brief", "memoryIds": ["m1", "m2"], "tokens": 40, "timestamp": "t2"},
        {"type": "prompt_injected", "memoryIds": ["m2", "m3"], "tokens": 30, "timestamp": "t3"},
        {"type": "prompt_injection_skipped", "reason": "no_signal", "timestamp": "t1"},
        {"type": "proposals_filed", "proposalIds": ["p1", "p2"], "timestamp": "t4"},
        "not an event",
    ]
    timeline = session_timeline("s", events)  # type: ignore[arg-type]
    assert timeline.summary == {
        "session_id": "s",
        "events": 4,
        "first_at": "t1",
        "last_at": "t4",
        "briefed": True,
        "injections": 1,
        "skipped": 1,
        "tokens_injected": 70,
        "memories_injected": 3,
        "proposals_filed": 2,
    }
    assert [e["type"] for e in timeline.events][:2] == ["session_brief", "prompt_injected"]

"""What a recall pays for on its read path: the token estimate by arithmetic (the same
numbers as counting characters), and no disk sync for recall usage and run-log lines (a
crash may lose the newest of those, never a memory, a proposal or an audit row)."""

from __future__ import annotations

import math
import os
import random
from pathlib import Path
from typing import Any

import pytest
from factories import make_memory

from swarmmem.adapters.files.runlog import append_run_event, read_run_events
from swarmmem.adapters.storage.jsonl import JsonlStore
from swarmmem.core.model.events import RecallUsage
from swarmmem.core.model.ids import estimate_tokens


def _counted(text: str) -> int:
    """The reference's estimate as first written: UTF-16 units counted character by character."""
    if not text:
        return 0
    return math.ceil((len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)) * 0.33)


def test_estimate_tokens_gives_the_counted_estimate_on_a_corpus() -> None:
    rng = random.Random(28)
    alphabet = [chr(c) for c in range(32, 127)]
    alphabet += ["\u00e9", "\u4e2d", "\U0001f600", "\U00010348", "\ud800", "\udfff", "\u200b"]
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 120)))
        assert estimate_tokens(text) == _counted(text), text


@pytest.fixture
def syncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = os.fsync

    def counting(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", counting)
    return calls


def _usage() -> RecallUsage:
    return RecallUsage(
        bundle_id="bundle_20260101000000_deadbeef",
        timestamp="2026-01-01T00:00:00.000Z",
        memory_ids=("mem_0000000000000000",),
        query="how do deploys run",
    )


def test_jsonl_recall_usage_alone_is_not_synced(tmp_path: Path, syncs: list[int]) -> None:
    store = JsonlStore(tmp_path)
    with store.transaction():
        store.upsert(make_memory("Deploys run nightly."))
    assert syncs  # a memory reaches the disk
    syncs.clear()
    store.record_recall_usage(_usage())
    assert syncs == []
    reopened = JsonlStore(tmp_path)
    assert [u.bundle_id for u in reopened.list_recall_usage()] == [_usage().bundle_id]
    # a commit holding usage and a memory is synced as before
    with store.transaction():
        store.record_recall_usage(_usage())
        store.upsert(make_memory("Builds are cached."))
    assert syncs


def test_run_log_lines_are_written_but_not_synced(tmp_path: Path, syncs: list[Any]) -> None:
    append_run_event(tmp_path, "run-1", {"type": "prompt_injected"}, "2026-01-01T00:00:00.000Z")
    assert syncs == []
    assert read_run_events(tmp_path, "run-1")[0]["type"] == "prompt_injected"

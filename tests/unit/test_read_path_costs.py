"""What a recall pays for on its read path: the token estimate by arithmetic (the same
numbers as counting characters), and no disk sync for recall usage and run-log lines (a
crash may lose the newest of those, never a memory, a proposal or an audit row)."""

from __future__ import annotations

import math
import os
import random
from pathlib import Path
from typing import Any

import attrs
import pytest
from factories import make_memory

from swarmmem.adapters.files.runlog import append_run_event, read_run_events
from swarmmem.adapters.storage.jsonl import JsonlStore
from swarmmem.core.model.events import RecallUsage
from swarmmem.core.model.ids import estimate_tokens
from swarmmem.core.model.records import NO_SIGNALS, RecallItem
from swarmmem.core.recall.prompt import build_prompt_block, format_item, header

_SIGNALS = attrs.evolve(NO_SIGNALS, text_overlap=0.5)


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


def test_the_prompt_block_stops_where_the_counted_estimate_says(tmp_path: Path) -> None:
    """The block sums its parts' lengths: the same items, block and estimate as counting the
    whole block again after each item, over budgets around every item's edge."""
    rng = random.Random(7)
    words = ["deploy", "caf\u00e9", "\u4e2d\u6587", "\U0001f600", "tests", "run"]
    items = []
    for i in range(6):
        text = " ".join(rng.choice(words) for _ in range(rng.randrange(3, 30)))
        record = make_memory(text)
        items.append(RecallItem(record=record, score=1.0 - i / 10, reason="r", signals=_SIGNALS))
    now = "2026-01-02T00:00:00.000Z"
    for budget in range(0, 900, 7):
        block = header("bundle_20260101000000_deadbeef")
        expected = []
        for item in items:
            grown = block + format_item(item, now, str)
            if _counted(grown) > budget:
                break
            block, expected = grown, [*expected, item]
        found = build_prompt_block(
            "bundle_20260101000000_deadbeef",
            items,
            generated_at=now,
            token_budget=budget,
            redact=str,
        )
        assert found == (block.rstrip(), _counted(block), expected)


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


def test_one_line_skips_its_patterns_only_where_they_match_nothing() -> None:
    """Plain ASCII text is returned as it is; every character, ASCII or not, is treated as
    the two patterns treat it (line breaks and controls to spaces, invisible ones dropped)."""
    from swarmmem.core.model.text import INVISIBLE_RE
    from swarmmem.core.recall.prompt import _BREAKS, one_line

    def patterns(text: str) -> str:
        return _BREAKS.sub(" ", INVISIBLE_RE.sub("", text))

    samples = [chr(c) for c in range(0x300)] + [chr(c) for c in range(0x2000, 0x2070)]
    samples += ["\u3164", "\ufeff", "\uffa0", "\U000e0041", "\U0001d173", "\u061c"]
    for ch in samples:
        text = f"cache {ch} key"
        assert one_line(text) == patterns(text), repr(ch)
    assert one_line("a\nb\x7fc\u200bd\u2028e") == "a b cd e"
    plain = "retry the sqlite write with backoff"
    assert one_line(plain) is plain


def test_with_evidence_equals_evolve_on_every_field() -> None:
    """``RecallItem.with_evidence`` copies every field, as ``attrs.evolve`` does, and keeps
    the item when nothing changes."""
    from swarmmem.core.model.records import Relation

    # the copy skips ``__init__``: a validator given to a field would not run in it
    assert all(field.validator is None for field in attrs.fields(RecallItem))
    item = RecallItem(
        record=make_memory("deploy with make release"),
        score=0.7,
        reason="text_overlap=0.50",
        signals=_SIGNALS,
        base_score=0.6,
        relation=Relation(memory_id="mem_2"),
        related_from="mem_1",
        explored=True,
        evidence_status="fresh",
    )
    for status in ("changed", "missing", "unverified", None):
        assert item.with_evidence(status) == attrs.evolve(item, evidence_status=status)
    assert item.with_evidence("fresh") is item

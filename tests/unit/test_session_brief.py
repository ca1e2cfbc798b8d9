"""The session-start brief's evidence step: the best memories whose evidence holds, checking
only as many as it takes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from factories import make_memory

from swarmmem.core.config import SessionBriefConfig
from swarmmem.core.model.records import RecallItem
from swarmmem.core.recall.session import SessionHooks


def _hooks(records: Sequence[Any], evidence: Any, max_items: int) -> SessionHooks:
    def unused(*args: Any) -> Any:
        raise AssertionError("a brief does not call this")

    return SessionHooks(
        injection=unused,
        brief_settings=SessionBriefConfig(max_items=max_items),
        suppression_threshold=0.0,
        records=lambda limit: records[:limit],
        refresh_lessons=lambda: None,
        lessons=lambda: "",
        ingest=unused,
        redact=lambda text: text,
        now=lambda: "2026-12-08T00:00:00.000Z",
        evidence=evidence,
    )


def test_gone_memories_give_their_place_to_the_next_best_and_no_more_are_checked() -> None:
    records = [
        make_memory(f"Fact number {n} about the deploy script.", confidence=0.9 - n / 100)
        for n in range(6)
    ]
    gone = {records[0].id, records[2].id}
    asked: list[list[str]] = []

    def evidence(items: Sequence[RecallItem]) -> list[RecallItem]:
        asked.append([item.record.id for item in items])
        return [item.with_evidence("fresh") for item in items if item.record.id not in gone]

    answer = _hooks(records, evidence, max_items=3).session_start(
        session_id="s1", source="startup", state={}
    )
    ids = [r.id for r in records]
    assert answer.event["memoryIds"] == [ids[1], ids[3], ids[4]]
    assert asked == [ids[0:3], ids[3:5]]  # records[5] was never checked
    assert answer.context is not None and answer.context.count("(evidence fresh)") == 3


def test_without_evidence_checks_the_brief_is_the_best_memories() -> None:
    records = [make_memory(f"Fact number {n} about the deploy script.") for n in range(4)]
    answer = _hooks(records, None, max_items=2).session_start(
        session_id="s1", source="startup", state={}
    )
    assert len(answer.event["memoryIds"]) == 2
    assert answer.context is not None and "(evidence" not in answer.context

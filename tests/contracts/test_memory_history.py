"""The ``MemoryHistory`` capability (a memory's proposals, audit events and rewards found by
the store's own query): narrowed as ``inspect`` narrows a full read, it gives exactly what
reading everything gives, ids with ``LIKE`` wildcards (``_``, ``%``) included."""

from __future__ import annotations

from pathlib import Path

import pytest
from factories import available_store_kinds, make_memory, make_proposal, open_store

from swarmmem.core.maintenance.management import concerns
from swarmmem.core.model.events import RecallUsage, RewardEvent
from swarmmem.ports.storage import MemoryHistory


@pytest.mark.parametrize("kind", available_store_kinds())
def test_a_memory_history_narrowed_is_the_full_read_narrowed(kind: str, tmp_path: Path) -> None:
    store = open_store(kind, tmp_path)
    try:
        if not isinstance(store, MemoryHistory):
            assert kind in ("memory", "local-jsonl")  # they read everything, and say so
            return
        first = make_memory("The cache layer keeps sqlite reads fast")
        second = make_memory("The cache layer keeps postgres reads fast")
        other = make_memory("Releases are tagged from main")
        for record in (first, second, other):
            store.upsert(record)
        props = [
            make_proposal(record=first, created_at="2026-01-01T00:00:01.000Z"),
            make_proposal(operation="merge", target=first.id, related=[second.id],
                          created_at="2026-01-01T00:00:02.000Z"),
            make_proposal(record=other, created_at="2026-01-01T00:00:03.000Z"),
            make_proposal(operation="delete", target=second.id,
                          created_at="2026-01-01T00:00:04.000Z"),
        ]  # fmt: skip
        for prop in props:
            store.create_proposal(prop)
            store.append_event("proposal_created", prop.id, event={"operation": prop.operation})
        store.append_event("curator_decision", "x", event={"memoryId": first.id})
        store.append_event("curator_decision", "y", event={"memoryId": "mem%_" + "0" * 12})
        for i, record in enumerate((first, second, first)):
            store.append_reward_event(
                RewardEvent(id=f"r{i}", memory_id=record.id, verdict="APPROVE", reward=1.0,
                            q_before=0.5, q_after=0.55, timestamp=f"2026-01-02T00:00:0{i}.000Z")
            )  # fmt: skip
        for k in range(6):
            recalled = (first.id, second.id) if k % 2 else (other.id,)
            store.record_recall_usage(
                RecallUsage(bundle_id=f"b{k}", timestamp=f"2026-01-03T00:00:0{k}.000Z",
                            memory_ids=recalled, scores=tuple(0.5 for _ in recalled),
                            query=f"question {k}")
            )  # fmt: skip
        assert [u.bundle_id for u in store.recall_usage_mentioning(first.id)] == ["b1", "b3", "b5"]
        assert [u.bundle_id for u in store.recall_usage_mentioning(first.id, 2)] == ["b3", "b5"]
        assert store.recall_usage_mentioning("mem%_") == []
        for memory_id in (first.id, second.id, other.id, "mem%_" + "0" * 12, "mem_unknown"):
            everything = [p.id for p in store.list_proposals() if concerns(p, memory_id)]
            found = store.proposals_mentioning(memory_id)
            assert [p.id for p in found if concerns(p, memory_id)] == everything
            touched = {memory_id, *everything}
            events = store.events_mentioning(sorted(touched))

            def about(e: object, touched: set[str] = touched, memory_id: str = memory_id) -> bool:
                return e.target_id in touched or memory_id in (e.event_json or "")  # type: ignore[attr-defined]

            assert [e.id for e in events if about(e)] == [
                e.id for e in store.list_events() if about(e)
            ]
            rewards = [e.id for e in store.list_reward_events() if e.memory_id == memory_id]
            assert [e.id for e in store.reward_events_of(memory_id)] == rewards
        # a wildcard in an id matches only itself
        assert store.proposals_mentioning("mem%_") == []
        assert [e.target_id for e in store.events_mentioning(["mem%_" + "0" * 12])] == ["y"]
        assert len(store.proposals_mentioning(first.id)) == 2
    finally:
        store.close()

"""Maintenance reports at growing store sizes: each should cost what it shows, not the store.

Sizes come from ``SWARMMEM_BENCH_REPORT_SIZES`` (default ``1000``; the table in README.md used
``1000,100000``). Each size builds one project (SQLite store, memory enabled) whose stores
differ only in the number of ordinary memories: the rows the reports show are the same at
every size (12 tombstones, 12 superseded, 12 scratch memories half of them expired, 12
low-confidence old ones, 12 of high and 12 of low learned value, 40 proposals, 300 recall
usage rows and 120 reward events), and 1% of the memories belong to another repository,
which no report may show. Each benchmark calls the report the way the CLI command does
(``Memory.pending()`` and so on, through the scoped view; ``status_report`` for ``status``).
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

import swarmmem
from swarmmem.cli.memory import status_report
from swarmmem.core.model.events import RecallUsage, RewardEvent
from swarmmem.core.model.ids import content_hash, memory_id_for_hash
from swarmmem.core.model.records import MemoryProposal, MemoryRecord, MemoryScope, MemorySource
from swarmmem.ports.clock import FixedClock

SIZES = [
    int(s) for s in os.environ.get("SWARMMEM_BENCH_REPORT_SIZES", "1000").split(",") if s.strip()
]
SPECIAL = 12
NOW = datetime.datetime(2026, 6, 1, tzinfo=datetime.timezone.utc)
STAMP = "2026-05-01T00:00:00.000Z"
OTHER = MemoryScope(type="repository", repo_id="another-repository")


def _memory(scope: MemoryScope, i: int, **changes: Any) -> MemoryRecord:
    text = f"memory {i}: the cache layer keeps sqlite reads fast for module {i % 97}"
    kind = changes.pop("kind", "code_pattern")
    digest = content_hash(scope.as_dict(), kind, text)
    record = MemoryRecord(
        id=memory_id_for_hash(digest),
        scope=scope,
        kind=kind,
        text=text,
        tags=("cache",),
        confidence=0.8,
        stability="durable",
        source=MemorySource(type="file", file_path=f"src/mod{i % 50}.py"),
        created_at=STAMP,
        updated_at=STAMP,
        content_hash=digest,
    )
    return attrs.evolve(record, **changes)


def _fill(mem: Any, n: int) -> list[str]:
    """``n`` memories (the special ones among them) plus proposals, usage and rewards."""
    scope = mem.runtime.allowed_scopes[1]
    store = mem.store
    ordinary = n - 7 * SPECIAL
    records = []
    for i in range(ordinary):
        records.append(_memory(OTHER if i % 100 == 0 else scope, i))
    special = iter(range(n, n + 7 * SPECIAL))
    for _ in range(SPECIAL):
        records.append(_memory(scope, next(special), metadata={"deleted": True}))
        successor = records[SPECIAL + _]
        records.append(_memory(scope, next(special), superseded_by=successor.id))
        expiry = "2026-05-20T00:00:00.000Z" if _ % 2 else "2026-06-05T00:00:00.000Z"
        records.append(
            _memory(scope, next(special), kind="scratch", stability="ephemeral", expires_at=expiry)
        )
        old = "2025-01-01T00:00:00.000Z"
        records.append(_memory(scope, next(special), confidence=0.4, updated_at=old))
        records.append(_memory(scope, next(special), metadata={"qValue": 0.95}))
        records.append(_memory(scope, next(special), metadata={"qValue": 0.05}))
        records.append(_memory(scope, next(special)))
    store.upsert_many(records)
    ids = [r.id for r in records if r.scope == scope and not r.deleted][:400]
    high = [r.id for r in records if r.metadata.get("qValue") == 0.95]
    with store.transaction():
        for k in range(300):
            recalled = [*high[k % SPECIAL : k % SPECIAL + 2], *ids[(k * 8) % 392 :][:6]]
            store.record_recall_usage(
                RecallUsage(
                    bundle_id=f"bundle-{k}",
                    timestamp=f"2026-05-{1 + k % 28:02d}T00:00:00.000Z",
                    memory_ids=tuple(recalled),
                    scores=tuple(0.5 for _ in recalled),
                    scopes=(scope,),
                    agent_role=("coder", "reviewer", "architect")[k % 3],
                )
            )
        for k in range(120):
            store.append_reward_event(
                RewardEvent(
                    id=f"reward-{k}",
                    memory_id=ids[k % 60],
                    verdict="APPROVE",
                    reward=1.0,
                    q_before=0.5,
                    q_after=0.55,
                    timestamp=f"2026-05-{1 + k % 28:02d}T01:00:00.000Z",
                )
            )
        for k in range(40):
            proposed = _memory(scope, n + 1000 + k)
            store.create_proposal(
                MemoryProposal(
                    id=f"prop_{k:016x}",
                    operation="add",
                    status="pending" if k % 2 else "rejected",
                    created_at=STAMP,
                    proposed_record=proposed,
                    rationale="seen in review",
                    rejection_reason=None if k % 2 else "duplicate of an existing memory",
                )
            )
    return ids


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"{n}")
def project(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    """An enabled project whose SQLite store holds ``n`` memories."""
    root: Path = tmp_path_factory.mktemp(f"reports{request.param}")
    (root / ".opencode").mkdir()
    (root / ".opencode" / "opencode-swarm.json").write_text(
        json.dumps({"memory": {"enabled": True}})
    )
    with swarmmem.open(root, clock=FixedClock(NOW)) as mem:
        _fill(mem, request.param)
    mem = swarmmem.open(root, clock=FixedClock(NOW))
    yield mem
    mem.close()


REPORTS = ["pending", "value_log", "recall_log", "stale"]


@pytest.mark.benchmark(group="reports")
@pytest.mark.parametrize("report", REPORTS)
def test_report(benchmark: Any, project: Any, report: str) -> None:
    """One report as its CLI command builds it."""
    result = benchmark(getattr(project, report))
    if report == "stale":
        assert result.deleted_tombstones_count == SPECIAL
        assert result.expired_scratch_count == SPECIAL // 2
        assert result.low_learned_utility_count == SPECIAL
    elif report == "pending":
        assert result.pending_count == result.rejected_count == 20
    elif report == "recall_log":
        assert result.events_scanned == 300
    else:
        assert result.memories


@pytest.mark.benchmark(group="reports")
def test_status(benchmark: Any, project: Any) -> None:
    """``swarmmem status``: counts, pending proposals, unreadable rows."""
    result = benchmark(status_report, project)
    assert result["memory_count"] >= 1000 - 7 * SPECIAL and result["unreadable_rows"] == []

"""Recall candidates decoded only as far as scoring needs (SQL stores).

A SQL store gives recall :class:`CandidateRow` values read from the stored JSON; they must
equal what the scorer derives from the full records, full records are built only for the
items a recall returns, and a row that reads as a candidate but not as a record is reported
and leaves the ranking as if it were not stored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from factories import REPO_SCOPE, at, make_memory, open_store, stemmed_candidates

from swarmmem.core.model.records import Anchor, MemorySource, RecallRequest
from swarmmem.core.recall.pipeline import run_recall
from swarmmem.core.recall.scoring import derived

NOW = at(days=1)


def _memories() -> list[Any]:
    """Records of every shape the scorer reads: tags, cited files and symbols, a learned
    value, an expiry, a tombstone, a superseded one and outcome evidence."""
    base = "The billing webhook retries failed deliveries"
    return [
        make_memory(f"{base} three times", tags=("billing", "webhooks"), updated_at=at(1)),
        make_memory(
            f"{base} with backoff in worker.py",
            tags=(),
            source=MemorySource(type="file", file_path="src/worker.py", ref="abc123"),
            metadata={"files": ["src/billing.py"], "symbols": ["retry_webhook"], "qValue": 0.9},
            anchors=(Anchor(file="src/queue.py", symbol="Queue.push"),),
            updated_at=at(2),
        ),
        make_memory(f"{base} until the queue drains", expires_at=at(days=30), updated_at=at(3)),
        make_memory(f"{base} (removed)", metadata={"deleted": True}, updated_at=at(4)),
        make_memory(f"{base} (old rule)", superseded_by="x" * 8, updated_at=at(5)),
        make_memory(f"{base}?", metadata={"outcomeQuestion": True}, updated_at=at(6)),
        make_memory(f"{base} per tenant", kind="repo_convention", confidence=1, updated_at=at(7)),
    ]


@pytest.fixture
def sqlite(tmp_path: Path) -> Any:
    store = open_store("sqlite", tmp_path)
    store.upsert_many(_memories())
    yield store
    store.close()


@pytest.mark.parametrize("cold", [True, False])
def test_rows_equal_what_the_records_give(sqlite: Any, cold: bool) -> None:
    if cold:
        sqlite.records.clear()
    found = stemmed_candidates(sqlite, "billing webhook retries", include_expired=True)
    assert found.rows is not None and len(found.rows) == 5  # tombstones are not candidates
    assert list(found.rows) == [derived(r) for r in found.records]
    # the second time from the row cache
    again = stemmed_candidates(sqlite, "billing webhook retries", include_expired=True)
    assert again.rows == found.rows


def test_full_records_only_for_returned_items(sqlite: Any) -> None:
    sqlite.records.clear()
    request = RecallRequest(query="billing webhook retries", scopes=(REPO_SCOPE,), max_items=2)
    result, _ = run_recall(sqlite, request, now=NOW)
    assert len(result.items) == 2 and result.diagnostics["scoredCount"] > 2
    assert set(sqlite.records.cache) == {item.record.id for item in result.items}


def test_named_file_query_reads_cited_references(sqlite: Any) -> None:
    """The named-reference rule needs the records (anchors included): same ranking as the
    in-memory store."""
    memory = open_store("memory", Path("unused"))
    memory.upsert_many(_memories())
    for query in ("webhook retries in queue.py", "where is Queue.push retry webhook"):
        request = RecallRequest(query=query, scopes=(REPO_SCOPE,), max_items=5)
        got = run_recall(sqlite, request, now=NOW)[0].items
        want = run_recall(memory, request, now=NOW)[0].items
        assert [i.record for i in got] == [i.record for i in want] and got
        assert [i.score for i in got] == pytest.approx([i.score for i in want], abs=1e-6)
        assert [i.signals for i in got] == [i.signals for i in want]


def test_a_row_only_its_candidate_reads_is_reported_and_not_ranked(
    sqlite: Any, tmp_path: Path
) -> None:
    """JSON that reads as a candidate but fails record validation: the recall that finds it
    scores again without it (as one that never decoded it: the row still counts in FTS5's
    own statistics), and the row is reported."""
    request = RecallRequest(query="billing webhook retries", scopes=(REPO_SCOPE,), max_items=10)
    before = [(i.record.id, i.score) for i in run_recall(sqlite, request, now=NOW)[0].items]
    bad = make_memory("Billing webhook retries are logged", updated_at=at(9))
    sqlite.upsert(bad)
    data = json.loads(
        sqlite.db.conn.execute(
            "SELECT record_json FROM memory_items WHERE id = ?", (bad.id,)
        ).fetchone()[0]
    )
    data["stability"] = "forever"  # not a stability
    with sqlite.transaction():
        sqlite.db.tx_conn().execute(
            "UPDATE memory_items SET record_json = ? WHERE id = ?", (json.dumps(data), bad.id)
        )
    sqlite.records.clear()
    after = [(i.record.id, i.score) for i in run_recall(sqlite, request, now=NOW)[0].items]
    assert [i for i, _ in after] == [i for i, _ in before]
    assert after == [(i.record.id, i.score) for i in run_recall(sqlite, request, now=NOW)[0].items]
    assert [row["id"] for row in sqlite.unreadable_rows()] == [bad.id]

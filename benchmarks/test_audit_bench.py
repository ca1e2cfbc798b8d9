"""What the audit hash chain adds to a write: the same appends and upserts, chained or not.

The unchained variant switches the store's chain off (the state of a database before
migration v13), so both run the same code path apart from reading the head, hashing the row
and writing the new head.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from factories import make_memory

from swarmmem.adapters.storage.sqlite import SqliteStore


@pytest.fixture(params=["chained", "unchained"])
def store(request: pytest.FixtureRequest, tmp_path: Path):
    """A SQLite store with the audit chain on or off."""
    db = SqliteStore(tmp_path / "memory.db")
    if request.param == "unchained":
        db.audit.chain_active = False
    yield db
    db.close()


@pytest.mark.benchmark(group="audit-append")
def test_append_event(benchmark, store) -> None:
    """One audit event in its own transaction."""
    counter = itertools.count()
    benchmark(lambda: store.append_event("proposal", f"prop_{next(counter):016x}", reason="bench"))
    assert store.list_events()


@pytest.mark.benchmark(group="audit-upsert")
def test_upsert(benchmark, store) -> None:
    """A full record write (row, FTS rows and its audit event)."""
    counter = itertools.count()
    benchmark(lambda: store.upsert(make_memory(f"fact number {next(counter)} about caching")))
    assert store.count() > 0
    if store.audit.chain_active:
        assert store.verify_audit_chain()["verified"] is True

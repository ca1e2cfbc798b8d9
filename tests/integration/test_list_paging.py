"""``Memory.list`` without a tag, file or time filter reads only its page (the keys, then the
page's records): it must return exactly what the full filter returns, for every state, kind,
offset and limit, outcome questions left out."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from factories import write_memory_config

import swarmmem
from swarmmem.core.model.ids import content_hash, memory_id_for_hash
from swarmmem.core.model.records import MemoryRecord, MemorySource

EPOCH = "1970-01-01T00:00:00.000Z"  # a time filter that keeps everything: the full path


def _record(scope: object, i: int, **changes: object) -> MemoryRecord:
    kind = ("project_fact", "repo_convention", "scratch")[i % 3]
    text = f"memory {i} about module {i % 7} and its cache"
    digest = content_hash(scope.as_dict(), kind, text)  # type: ignore[attr-defined]
    stamp = f"2026-01-{1 + i % 28:02d}T00:{i % 60:02d}:00.000Z"
    record = MemoryRecord(
        id=memory_id_for_hash(digest), scope=scope, kind=kind, text=text, tags=(),
        confidence=0.8, stability="ephemeral" if kind == "scratch" else "durable",
        source=MemorySource(type="manual"), created_at=stamp, updated_at=stamp,
        content_hash=digest, metadata={"qValue": (i % 10) / 10},
    )  # fmt: skip
    return attrs.evolve(record, **changes)


@pytest.mark.parametrize("provider", ["sqlite", "local-jsonl", "memory"])
def test_a_page_is_the_page_of_the_full_filter(tmp_path: Path, provider: str) -> None:
    write_memory_config(tmp_path, {"enabled": True, "provider": provider})
    with swarmmem.open(tmp_path) as mem:
        scope = mem.runtime.allowed_scopes[1]
        records = [_record(scope, i) for i in range(300)]
        for i in range(0, 300, 17):
            records[i] = attrs.evolve(records[i], metadata={"deleted": True})
        for i in range(1, 300, 19):
            records[i] = attrs.evolve(records[i], superseded_by=records[i + 1].id)
        for i in range(2, 300, 9):  # scratch or not, some expired, some not yet
            past = "2020-01-01T00:00:00.000Z" if i % 2 else "2099-01-01T00:00:00.000Z"
            records[i] = attrs.evolve(records[i], expires_at=past)
        mem.store.upsert_many(records)
        for n in range(3):
            mem.record_outcome(question=f"how is module {n} cached?", outcome="useful")
        for state in ("active", "suppressed", "superseded", "deleted", "expired", "all"):
            for kind in (None, "project_fact"):
                for offset, limit in ((0, 1), (0, 50), (7, 13), (120, 50), (290, 500)):
                    fast = mem.list(kind=kind, state=state, limit=limit, offset=offset)
                    full = mem.list(
                        kind=kind, state=state, limit=limit, offset=offset, created_since=EPOCH
                    )
                    assert [r.id for r in fast] == [r.id for r in full], (state, kind, offset)
        assert mem.store.count() == 303
        assert len(mem.list(state="all", limit=500)) == 300  # outcome questions left out

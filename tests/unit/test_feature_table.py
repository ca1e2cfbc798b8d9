"""The stemmed BM25 features of the in-memory and JSONL stores (``core/recall/features.py``).

The table's search must return exactly what BM25 computed record by record returns
(:func:`bm25_relevance` over the scoped, active, unexpired, recallable records, best first,
ties by id), with either kernel, after any sequence of writes, replacements and removals.
"""

from __future__ import annotations

import importlib
import random

import attrs
import pytest
from factories import KERNEL_IMPLS, OTHER_SCOPE, REPO_SCOPE, at, make_memory, open_store

from swarmmem.core.model.records import MemoryRecord, RecallRequest
from swarmmem.core.model.semantics import ListFilter, filter_records
from swarmmem.core.recall import features
from swarmmem.core.recall.bm25 import (
    bm25_relevance,
    content_matches,
    match_terms,
    stemmed_query,
)
from swarmmem.core.recall.features import FeatureTable
from swarmmem.core.recall.lexical import recallable
from swarmmem.core.recall.pipeline import run_recall

WORDS = (
    "pytest", "ruff", "cache", "caching", "cached", "migration", "migrations", "sqlite",
    "schema", "token", "tokens", "run", "runs", "running", "deploy", "deployed", "retry",
    "retries", "parser", "parsing", "index", "indexes", "vector", "snake_case",
    "write_ahead_log", "utf-8", "api-key", "fixtures", "fixture", "lint", "linting",
)  # fmt: skip
KINDS = ("project_fact", "repo_convention", "failure_pattern")
NOW = at(days=30)


@pytest.fixture(params=KERNEL_IMPLS)
def kernel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    suffix = "c" if request.param == "compiled" else "py"
    module = importlib.import_module(f"swarmmem._speedups._bm25_{suffix}")
    monkeypatch.setattr(features, "kernel", module)
    return str(request.param)


def _records(rng: random.Random, n: int) -> list[MemoryRecord]:
    out = []
    for i in range(n):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 14))) + f" n{i}"
        metadata: dict[str, object] = {"symbols": [rng.choice(WORDS)]} if i % 3 == 0 else {}
        if i % 17 == 0:
            metadata["deleted"] = True
        if i % 23 == 0:
            metadata["outcomeQuestion"] = True
        record = make_memory(
            text,
            kind=KINDS[i % 3],
            scope=REPO_SCOPE if i % 4 else OTHER_SCOPE,
            tags=(rng.choice(WORDS),),
            updated_at=at(i),
            metadata=metadata,
            expires_at=at(days=10) if i % 11 == 0 else (at(days=90) if i % 13 == 0 else None),
        )
        if i % 19 == 0:
            record = attrs.evolve(record, superseded_by="mem_other")
        out.append(record)
    return out


def _expected(
    records: list[MemoryRecord], match: str | None, scopes: tuple[str, ...], kinds, limit: int
) -> list[tuple[str, float]]:
    flt = ListFilter(now=NOW, scope_keys=scopes, kinds=kinds)
    scoped = [r for r in filter_records(records, flt) if recallable(r)]
    every = bm25_relevance(scoped, match)
    best = sorted(every, key=lambda i: (-every[i], i))[:limit]
    return [(i, every[i]) for i in best]


def _found(table: FeatureTable, match: str | None, scopes, kinds, limit: int):
    hits = table.search(
        match, scope_keys=scopes, kinds=kinds, now=NOW, include_expired=False, limit=limit
    )
    assert tuple(row.id for row in hits.rows) == hits.ids
    return list(zip(hits.ids, hits.scores, strict=True))


QUERIES = [
    "how do we run pytest fixtures for the sqlite migration",
    "snake_case parser",
    "write_ahead_log retries",
    "utf-8 api-key",
    "caching tokens index vector deploy",
    "nothing matches zzzqqq",
]


@pytest.mark.parametrize("query", QUERIES)
def test_search_equals_bm25_record_by_record(kernel: str, query: str) -> None:
    rng = random.Random(7)
    records = _records(rng, 300)
    table = FeatureTable(records)
    match = stemmed_query(query, None, "manual")
    for scopes in ((REPO_SCOPE.key,), (REPO_SCOPE.key, OTHER_SCOPE.key), ("nope",)):
        for kinds in (None, ("project_fact",), ("failure_pattern", "repo_convention")):
            for limit in (1, 5, 40, 1000):
                expected = _expected(records, match, scopes, kinds, limit)
                assert _found(table, match, scopes, kinds, limit) == expected
    if "zzzqqq" not in query:
        assert _found(table, match, (REPO_SCOPE.key,), None, 1000)


@pytest.mark.parametrize("query", [*QUERIES, "project fact about pytest", "failure zzzqqq"])
def test_held_terms_equal_the_records_content(kernel: str, query: str) -> None:
    """The terms the table's marks say a found record's text holds equal what
    ``content_matches`` computes from the records, which keeps every found record (queries
    with a phrase of several terms are left to it: ``held`` is ``None``)."""
    rng = random.Random(5)
    records = _records(rng, 300)
    table = FeatureTable(records)
    match = stemmed_query(query, None, "manual")
    phrases = match_terms(match)
    for kinds in (None, ("project_fact",)):
        hits = table.search(
            match, scope_keys=None, kinds=kinds, now=NOW, include_expired=False, limit=60
        )
        if any(len(phrase) > 1 for phrase in phrases):
            assert hits.held() is None
            continue
        kept, held = content_matches(hits.rows, phrases)
        assert hits.held() == held
        assert held.keys() == {record.id for record in kept} == set(hits.ids)
        if "zzzqqq" not in query:
            assert held and any(held.values())
    # kind words alone match nothing: a third of the records are project_facts, none says
    # "project" or "fact", and BM25 counts no word of the kind column
    if query == "project fact about pytest":
        assert any(record.kind == "project_fact" for record in records)
        only_kind = table.search(
            stemmed_query("project fact", None, "manual"),
            scope_keys=None,
            kinds=None,
            now=NOW,
            include_expired=False,
            limit=60,
        )
        assert only_kind.rows == () and only_kind.held() == {}


def test_rows_follow_replacements_removals_and_compaction(kernel: str) -> None:
    rng = random.Random(11)
    records = {r.id: r for r in _records(rng, 200)}
    table = FeatureTable(records.values())
    ids = sorted(records)
    for step in range(3000):  # enough replaced terms to compact the arrays several times
        if step % 250 == 0:  # searches build the postings; later writes extend them
            _check_every_query(table, records)
        memory_id = rng.choice(ids)
        if step % 7 == 0 and memory_id in records:
            del records[memory_id]
            table.remove(memory_id)
            continue
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 14)))
        base = records.get(memory_id) or make_memory(f"restored {step}", updated_at=at(step))
        records[memory_id] = attrs.evolve(base, id=memory_id, text=text)
        table.put(records[memory_id])
    assert len(table) == len(records)
    _check_every_query(table, records)


def _check_every_query(table: FeatureTable, records: dict[str, MemoryRecord]) -> None:
    for query in QUERIES:
        match = stemmed_query(query, None, "manual")
        scopes = (REPO_SCOPE.key, OTHER_SCOPE.key)
        expected = _expected(list(records.values()), match, scopes, None, 50)
        assert _found(table, match, scopes, None, 50) == expected


def test_postings_kernels_agree(kernel: str) -> None:
    """The postings built at once from the rows hold, per term, every row holding it with its
    version and count (both kernels; a free slot holds nothing)."""
    rng = random.Random(13)
    records = _records(rng, 120)
    table = FeatureTable(records)
    for record in records[::9]:
        table.remove(record.id)
    built = features.kernel.postings(
        table._starts, table._ends, table._terms, table._tfs, table._versions,
        len(table._vocabulary),
    )  # fmt: skip
    expected: dict[int, list[int]] = {}
    for slot in range(len(table._records)):
        for p in range(table._starts[slot], table._ends[slot]):
            expected.setdefault(table._terms[p], []).extend(
                (slot, table._versions[slot], table._tfs[p])
            )
    assert len(built) == len(table._vocabulary)
    assert {t: list(a) for t, a in enumerate(built) if a} == expected


def test_the_kernel_refuses_malformed_input(kernel: str) -> None:
    module = features.kernel
    ints = features.array("i", [0])
    live = bytearray(b"\x01")

    def call(postings: list, phrases: list, versions=ints, ids=("m0",)) -> None:
        module.bm25_top(
            versions, ints, live, ints, b"\x01", ints, None, postings, phrases, 1.2, 0.75, 10, ids
        )

    with pytest.raises(ValueError, match="phrase column"):
        call([None], [])
    with pytest.raises(ValueError, match="triples"):
        call([features.array("i", [0, 1])], [])
    with pytest.raises(ValueError, match="version per row"):
        call([features.array("i", [0, 1, 1])], [], versions=features.array("i"))
    with pytest.raises(ValueError, match="id per row"):
        call([features.array("i", [0, 1, 1])], [], ids=())
    with pytest.raises(TypeError, match="must be a str"):
        call([features.array("i", [0, 0, 1])], [], ids=(None,))


@pytest.mark.parametrize("kind", ["memory", "local-jsonl"])
def test_lexical_recall_searches_every_scoped_record(kind: str, tmp_path) -> None:
    """The only memory naming a word is the oldest of 1,500 in its scope: it is found (the
    stores without full-text search used to score only the newest 1,000)."""
    store = open_store(kind, tmp_path)
    with store.transaction():
        store.upsert(
            make_memory("Release notes are written by the zeppelin script", updated_at=at(0))
        )
        for i in range(1, 1500):
            store.upsert(
                make_memory(f"Ordinary convention number {i} about builds", updated_at=at(i))
            )
    request = RecallRequest(query="zeppelin release script", scopes=(REPO_SCOPE,), max_items=3)
    result, _ = run_recall(store, request, now=NOW)
    assert [it.record.text for it in result.items][:1] == [
        "Release notes are written by the zeppelin script"
    ]
    if kind == "local-jsonl":  # the reopened store builds its table from the log
        store.close()
        reopened = open_store(kind, tmp_path)
        result, _ = run_recall(reopened, request, now=NOW)
        assert result.items[0].record.text.endswith("zeppelin script")


def test_a_rolled_back_write_leaves_no_row(tmp_path) -> None:
    store = open_store("memory", tmp_path)
    store.upsert(make_memory("Deploys go through the staging pipeline"))
    request = RecallRequest(query="staging pipeline tangerine", scopes=(REPO_SCOPE,), max_items=5)
    assert len(run_recall(store, request, now=NOW)[0].items) == 1  # the table now exists
    with pytest.raises(RuntimeError), store.transaction():
        store.upsert(make_memory("The tangerine flag gates the staging pipeline"))
        assert len(run_recall(store, request, now=NOW)[0].items) == 2
        raise RuntimeError("abort")
    texts = [it.record.text for it in run_recall(store, request, now=NOW)[0].items]
    assert texts == ["Deploys go through the staging pipeline"]
    store.upsert(make_memory("The tangerine flag gates the staging pipeline"))
    assert len(run_recall(store, request, now=NOW)[0].items) == 2

"""Hybrid recall: disabled-path guarantee, honest degradation, fusion and rerank rules."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from swarmmem.adapters.models.hashing_embedder import HashingEmbedder
from swarmmem.adapters.models.rerankers import IdentityReranker
from swarmmem.adapters.storage.memory import InMemoryStore
from swarmmem.adapters.storage.sqlite import SqliteStore
from swarmmem.adapters.vectors.local import NumpyVectorIndex, SqliteVecIndex
from swarmmem.core.evaluation.metrics import fixture_request
from swarmmem.core.model.ids import normalize_text
from swarmmem.core.recall.embedding_cache import EmbeddingCache
from swarmmem.core.recall.hybrid import DenseParts, HybridSettings
from swarmmem.core.recall.pipeline import PipelineSettings, run_recall
from swarmmem.evaluation import load_fixtures, temporary_stores

NOW = "2026-11-30T00:00:00.000Z"
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "spec" / "upstream-fixtures"
OWN = Path(__file__).resolve().parents[2] / "fixtures" / "memory-recall"


def _fixture_dirs() -> list[Path]:
    dirs = [d for d in (SHARED / "memory-recall", OWN) if d.is_dir() and any(d.glob("*.json"))]
    if not dirs:
        pytest.skip("no golden fixtures available")
    return dirs


def _dense(records, embedder=None, index=None, reranker=None) -> DenseParts:
    embedder = embedder or HashingEmbedder(dimension=64)
    index = index or NumpyVectorIndex(embedder.dimension)
    index.seed_model_version(embedder.model_version)
    index.upsert(
        [r.id for r in records],
        embedder.embed_batch([normalize_text(r.text).lower() for r in records]),
    )
    return DenseParts(embedder=embedder, index=index, cache=EmbeddingCache(8), reranker=reranker)


def _store(records) -> InMemoryStore:
    """An in-memory store holding ``records``."""
    store = InMemoryStore()
    for record in records:
        store.upsert(record)
    return store


def _first_fixture():
    """The first golden fixture, its records in a store, and its manual-mode request."""
    fixture = load_fixtures(_fixture_dirs()[0])[0]
    request, _ = fixture_request(fixture, "manual")
    return fixture, _store(fixture.records), request


def _recall(store, request, parts, **settings):
    """The hybrid profile of the pipeline at ``NOW`` with ``HybridSettings(**settings)``."""
    return run_recall(
        store,
        request,
        now=NOW,
        parts=parts,
        config=PipelineSettings(profile="hybrid", hybrid=HybridSettings(**settings)),
    )


def _rerank_case(text: str, count: int, query: str):
    """``count`` code-pattern memories ``text.format(i)`` in a store, dense parts reranking
    with :class:`_Reverse`, and a request for all of them."""
    from factories import make_memory

    from swarmmem.core.model.records import RecallRequest

    records = [make_memory(text.format(i), kind="code_pattern") for i in range(count)]
    request = RecallRequest(query=query, scopes=(records[0].scope,), max_items=count, min_score=0.0)
    return _store(records), _dense(records, reranker=_Reverse()), request


def _snapshot(result) -> str:
    return json.dumps(
        {
            "items": [(it.record.id, it.score, it.reason) for it in result.items],
            "diagnostics": result.diagnostics,
        },
        sort_keys=True,
    )


class _Broken:
    """An embedder that is present but fails on use."""

    model_version = "broken:4"
    dimension = 4
    available = True

    def embed(self, text):
        raise RuntimeError("model crashed")

    def embed_batch(self, texts):
        raise RuntimeError("model crashed")


def test_disabled_path_is_byte_identical_on_every_golden_fixture() -> None:
    """Without dense parts the hybrid entry point returns exactly the lexical result."""
    for directory in _fixture_dirs():
        for fixture in load_fixtures(directory):
            with temporary_stores() as factory:
                for provider in ("local-jsonl", "sqlite"):
                    store = factory(provider)
                    for record in fixture.records:
                        store.upsert(record)
                    for mode in ("manual", "injection", "curator"):
                        request, _k = fixture_request(fixture, mode)
                        lexical = run_recall(store, request, now=NOW)[0]
                        hybrid, trace = _recall(store, request, None)
                        assert _snapshot(hybrid) == _snapshot(lexical), (
                            fixture.name,
                            provider,
                            mode,
                        )
                        assert "fusionActive" not in hybrid.diagnostics
                        assert trace.status == "degraded"
                        assert trace.degradation_reason == "dense retrieval is unavailable"
                    store.close()


def _broken_embedder(_records) -> DenseParts:
    """An embedder that raises."""
    return DenseParts(embedder=_Broken(), index=NumpyVectorIndex(4), cache=EmbeddingCache(4))


def _other_model_version(records) -> DenseParts:
    """Vectors stored under another model version (never mixed with new queries)."""
    parts = _dense(records)
    parts.index.set_model_version("other-model:64")
    return parts


@pytest.mark.parametrize("failing_parts", [_broken_embedder, _other_model_version])
def test_dense_failure_falls_back_to_exact_lexical_output(failing_parts) -> None:
    """A failing dense path yields the lexical items and diagnostics unchanged."""
    fixture, store, request = _first_fixture()
    result, trace = _recall(store, request, failing_parts(fixture.records))
    assert _snapshot(result) == _snapshot(run_recall(store, request, now=NOW)[0])
    assert trace.degradation_reason == "dense retrieval failed"


def test_fusion_marks_diagnostics_and_normalises_scores() -> None:
    """When RRF fusion runs, fusionActive is set and the top score is exactly 1.0."""
    fixture, store, request = _first_fixture()
    result, trace = _recall(store, request, _dense(fixture.records), fusion="rrf")
    assert result.diagnostics["fusionActive"] is True
    assert result.items[0].score == 1.0
    assert all(0.0 <= it.score <= 1.0 for it in result.items)
    assert trace.used_embedding and trace.status == "complete"
    assert trace.query_embedding_invocation_count == 1


def test_query_embedding_cache_hit_skips_the_model() -> None:
    """A repeated query (modulo case and spacing) reuses the cached vector."""
    fixture, store, request = _first_fixture()
    parts = _dense(fixture.records)
    _recall(store, request, parts)
    again = attrs.evolve(request, query="  " + request.query.upper() + " ")
    _, trace = _recall(store, again, parts)
    assert trace.query_embedding_invocation_count == 0
    assert parts.cache.hits >= 1


def test_dense_candidates_respect_scope_kind_and_state() -> None:
    """Dense hits outside the request's scopes, kinds or active set never surface."""
    for directory in _fixture_dirs():
        for fixture in load_fixtures(directory):
            store = _store(fixture.records)
            request, _ = fixture_request(fixture, "manual")
            result, _trace = _recall(store, request, _dense(fixture.records), dense_rescue=0.0)
            keys = {s.key for s in request.scopes}
            for item in result.items:
                assert item.record.scope.key in keys, fixture.name
                assert item.record.active, fixture.name
                if request.kinds:
                    assert item.record.kind in request.kinds, fixture.name


def test_latency_gate_skips_rerank() -> None:
    """A spent latency budget keeps the fused order and says why."""
    fixture, store, request = _first_fixture()
    parts = _dense(fixture.records, reranker=IdentityReranker())
    ticks = iter([0.0] + [10.0] * 100)
    result, trace = run_recall(
        store,
        request,
        now=NOW,
        parts=parts,
        config=PipelineSettings(
            profile="hybrid", hybrid=HybridSettings(rerank=True, latency_budget_ms=250)
        ),
        timer=lambda: next(ticks),
    )
    plain, _ = _recall(store, request, parts)
    assert trace.degradation_reason == "reranking skipped by latency budget"
    assert [it.record.id for it in result.items] == [it.record.id for it in plain.items]


class _Reverse:
    """A reranker that prefers later texts (to make reordering visible)."""

    name = "reverse"
    available = True

    def rerank(self, query, texts):
        return [float(i) for i in range(len(texts))]


def test_rerank_reorders_only_the_top_prefix() -> None:
    """Only the top 20 are reordered; the tail keeps its fused order below them."""
    store, parts, request = _rerank_case(
        "alpha memory number {} about caching layers", 30, "alpha caching"
    )
    fused, _ = _recall(store, request, parts)
    reranked, trace = _recall(store, request, parts, rerank=True, rerank_weight=1.0)
    before = [it.record.id for it in fused.items]
    after = [it.record.id for it in reranked.items]
    assert trace.used_reranker and trace.rerank_candidate_count == 20
    assert after[:20] == list(reversed(before[:20]))
    assert after[20:] == before[20:]


@pytest.mark.slow
def test_hybrid_rescues_paraphrases_with_the_real_model(tmp_path: Path) -> None:
    """With MiniLM and sqlite-vec, hybrid finds the paraphrase memories lexical recall misses,
    and loses none of the runs lexical recall passes."""
    pytest.importorskip("onnxruntime")
    from swarmmem.adapters.models.onnx_embedder import OnnxMiniLmEmbedder
    from swarmmem.core.evaluation.metrics import run_metrics

    embedder = OnnxMiniLmEmbedder()
    if not embedder.available:
        pytest.skip("MiniLM model is not installed")
    gained = lost = 0
    for directory in _fixture_dirs():
        for n, fixture in enumerate(load_fixtures(directory)):
            db = tmp_path / f"{directory.name}-{n}.db"
            store = SqliteStore(db)
            for record in fixture.records:
                store.upsert(record)
            index = SqliteVecIndex(db, embedder.dimension)
            parts = _dense(fixture.records, embedder=embedder, index=index)
            for mode in ("manual", "curator", "injection"):
                request, k = fixture_request(fixture, mode)
                lexical = run_recall(store, request, now=NOW)[0]
                hybrid, _ = _recall(store, request, parts, dense_rescue=0.25)
                lex_ok = run_metrics(fixture, [i.record.id for i in lexical.items], k, mode, NOW)[
                    "passed"
                ]
                hyb_ok = run_metrics(fixture, [i.record.id for i in hybrid.items], k, mode, NOW)[
                    "passed"
                ]
                lost += lex_ok and not hyb_ok
                gained += hyb_ok and not lex_ok
                if (
                    fixture.name.startswith("paraphrase")
                    and mode != "injection"
                    and directory.parent == SHARED
                ):
                    assert hyb_ok, (fixture.name, mode)
            index.close()
            store.close()
    assert lost == 0
    assert gained >= 1


def test_rerank_blend_weighs_both_orders() -> None:
    """With weight 0.5 the blend of a reversing reranker and the fused order ties the ends,
    and weight 0 keeps the fused order exactly."""
    store, parts, request = _rerank_case("beta note {} on retry budgets", 5, "beta retry")
    fused, _ = _recall(store, request, parts)
    kept, trace = _recall(store, request, parts, rerank=True, rerank_weight=0.0)
    assert trace.used_reranker
    assert [it.record.id for it in kept.items] == [it.record.id for it in fused.items]
    flipped, _ = _recall(store, request, parts, rerank=True, rerank_weight=1.0)
    assert [it.record.id for it in flipped.items] == [it.record.id for it in reversed(fused.items)]


def test_lexical_searches_every_scoped_memory_while_reference_keeps_its_cap(
    tmp_path: Path,
) -> None:
    """Beyond 1,000 memories the reference pre-selects among the newest 1,000 only; the
    lexical profile finds an older memory that matches."""
    import swarmmem

    old = {
        "kind": "project_fact",
        "text": "The zanzibar billing export runs nightly.",
        "createdAt": "2020-01-01T00:00:00.000Z",
        "updatedAt": "2020-01-01T00:00:00.000Z",
    }
    filler = [{"kind": "project_fact", "text": f"Unrelated fact number {n}."} for n in range(1100)]
    with swarmmem.open(tmp_path, config={"enabled": True}) as mem:
        assert mem.import_records([old, *filler]).written == 1101
        found = {
            profile: [i.record.text for i in mem.recall("zanzibar billing", profile=profile).items]
            for profile in ("reference", "lexical")
        }
    assert found["lexical"][0] == old["text"]
    assert old["text"] not in found["reference"]


class _CountingStore(InMemoryStore):
    """Counts the ids ``get_many`` is asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[str] = []

    def get_many(self, ids):  # type: ignore[no-untyped-def]
        self.read.extend(ids)
        return super().get_many(ids)


def test_dense_candidates_read_records_only_as_far_as_needed() -> None:
    """The index is asked for four times ``k`` hits (some may be filtered out), but records
    are read in chunks: when the first hits are usable, only about ``k`` records are read;
    hits of another scope are skipped and the next chunk read; hits under the relevance
    floor are neither returned nor read."""
    from factories import OTHER_SCOPE, REPO_SCOPE, make_memory

    from swarmmem.core.model.records import RecallRequest
    from swarmmem.core.recall.hybrid import dense_candidates, query_vector

    mine = [make_memory(f"cache layer note {i} about eviction", tags=()) for i in range(60)]
    theirs = [
        make_memory(f"cache layer note {i} about eviction!", scope=OTHER_SCOPE, tags=())
        for i in range(60)
    ]
    store = _CountingStore()
    for record in mine + theirs:
        store.upsert(record)
    parts = _dense(mine + theirs)
    request = RecallRequest(query="cache layer eviction", scopes=(REPO_SCOPE,), max_items=5)
    vector, _ = query_vector(parts, request.query)
    everything = parts.index.search(vector, len(mine) + len(theirs))
    expected = [(mid, cos) for mid, cos in everything if mid in {r.id for r in mine}]

    found = dense_candidates(store, parts, request, vector, now=NOW, k=20).candidates
    assert [(r.id, c) for r, c in found] == expected[:20]
    # half the nearest hits are of another scope: the records up to the 20th of mine (and at
    # most one chunk of 16 beyond it) are read, not the 80 hits the index was asked for
    last = next(i for i, (mid, _) in enumerate(everything) if mid == expected[19][0])
    assert len(store.read) <= last + 1 + 16 < 4 * 20

    floor = (expected[2][1] + expected[3][1]) / 2  # three of mine reach it
    store.read.clear()
    found = dense_candidates(store, parts, request, vector, now=NOW, k=20, floor=floor).candidates
    assert [(r.id, c) for r, c in found] == expected[:3]
    cosine = dict(everything)
    assert store.read and all(cosine[mid] >= floor for mid in store.read)


def _gate_store(count: int):
    """``count`` memories of varied English text (spelling overlap only, for the hashing
    embedder) plus one about database migrations."""
    from factories import make_memory

    subjects = ["billing", "search", "deploy", "cache", "auth", "queue", "metrics", "mail"]
    verbs = ["retries", "batches", "logs", "shards", "signs", "throttles", "pins", "rotates"]
    objects = ["webhooks", "tokens", "images", "reports", "sessions", "jobs", "keys", "feeds"]
    texts = [
        f"The {subjects[i % 8]} worker {verbs[(i // 8) % 8]} {objects[(i * 3) % 8]} hourly ({i})"
        for i in range(count)
    ]
    records = [make_memory(t, tags=()) for t in texts]
    records.append(make_memory("Database migrations are numbered by alembic", tags=()))
    return _store(records), _dense(records, embedder=HashingEmbedder(dimension=256))


def _hybrid_texts(store, parts, query: str, gate: float | None) -> list[str]:
    """The hybrid recall of ``query`` under rank fusion, where the gate decides for every
    query (score fusion asks it only of queries whose words match well)."""
    from factories import REPO_SCOPE

    from swarmmem.core.model.records import RecallRequest

    request = RecallRequest(query=query, scopes=(REPO_SCOPE,), max_items=8)
    settings = HybridSettings(fusion="rrf", dense_floor=0.15, dense_gate=gate, dense_rescue=None)
    result, _ = run_recall(
        store,
        request,
        now=NOW,
        parts=parts,
        config=PipelineSettings(profile="hybrid", hybrid=settings),
    )
    return [it.record.text for it in result.items]


def test_dense_gate_keeps_filler_out_of_large_stores() -> None:
    """In a store of 120 memories some memory is always near a question; the gate returns
    no dense hit when the nearest does not stand out from the next 49 (an unrelated question
    gets an empty bundle) and keeps it when one does (a misspelt question, which no word
    matches, still finds its memory)."""
    store, parts = _gate_store(120)
    unrelated = "Where do the quarterly offsite photos live?"
    assert _hybrid_texts(store, parts, unrelated, gate=None)  # the floor alone lets filler in
    assert _hybrid_texts(store, parts, unrelated, gate=0.15) == []
    misspelt = "databse migratoins numbred"
    found = _hybrid_texts(store, parts, misspelt, gate=0.15)
    assert found[:1] == ["Database migrations are numbered by alembic"]


def test_dense_gate_abstains_in_small_stores() -> None:
    """Under 50 hits the mean of the others is no estimate of what unrelated memories score:
    the gate lets everything through, as in our own stores of a handful of memories."""
    store, parts = _gate_store(20)
    unrelated = "Where do the quarterly offsite photos live?"
    assert _hybrid_texts(store, parts, unrelated, gate=0.15) == _hybrid_texts(
        store, parts, unrelated, gate=None
    )


def test_stands_out_compares_the_best_with_the_next_49() -> None:
    from swarmmem.core.recall.hybrid import GATE_DEPTH, stands_out

    flat = [0.30] + [0.25] * (GATE_DEPTH - 1)  # best 0.05 above the others
    assert not stands_out(flat, 0.15)
    assert stands_out(flat, 0.04)
    assert stands_out([0.60] + [0.25] * 200, 0.15)  # only the next 49 count
    assert not stands_out([0.30] + [0.25] * (GATE_DEPTH - 1) + [-1.0] * 100, 0.15)
    assert stands_out([0.30] + [0.29] * (GATE_DEPTH - 2), 0.15)  # too few: abstains
    assert stands_out([], 0.15)


def _minilm_store(count: int):
    """The six conventions of a small project among ``count`` memories of varied English
    about other services, embedded with the real MiniLM model (skips without it)."""
    pytest.importorskip("onnxruntime")
    from factories import make_memory

    from swarmmem.adapters.models.onnx_embedder import OnnxMiniLmEmbedder

    embedder = OnnxMiniLmEmbedder()
    if not embedder.available:
        pytest.skip("MiniLM model is not installed")
    services = ["billing", "search", "ingest", "thumbnail", "audit", "notification", "export"]
    actions = ["retries", "batches", "compresses", "shards", "signs", "throttles", "caches"]
    things = ["invoices", "webhooks", "images", "reports", "sessions", "exports", "feeds"]
    periods = ["every hour", "at midnight", "on each deploy", "after a failure", "weekly"]
    texts = [
        f"The {services[i % 7]} service {actions[(i // 7) % 7]} {things[(i // 49) % 7]} "
        f"{periods[i % 5]} (queue {i})"
        for i in range(count)
    ]
    conventions = [
        "Use ruff for lint.",
        "Database migrations are generated with alembic.",
        "Release builds are signed with the team key.",
        "Feature flags are read from flags.yaml at startup.",
        "Integration tests need a running PostgreSQL on port 5433.",
    ]
    records = [make_memory(t, tags=()) for t in [*texts, *conventions]]
    return _store(records), _dense(records, embedder=embedder)


@pytest.mark.slow
def test_a_paraphrase_is_found_in_a_large_store_and_nonsense_is_not() -> None:
    """Among 600 memories a question sharing no word with its memory finds it first (the
    dense evidence read against the query's own cosines; the fixed gate drops it), and
    a question about nothing in the store (every cosine under 0.08, where the paraphrase's
    memory has 0.22) gets an empty bundle."""
    from factories import REPO_SCOPE

    from swarmmem.core.model.records import RecallRequest

    store, parts = _minilm_store(600)

    def texts(query: str, **settings) -> list[str]:
        request = RecallRequest(query=query, scopes=(REPO_SCOPE,), max_items=5)
        result, _ = _recall(store, request, parts, **settings)
        return [it.record.text for it in result.items]

    paraphrase = "which tool checks code style"
    assert texts(paraphrase)[:1] == ["Use ruff for lint."]
    # judged like a query whose words match well (one weight for every query), the gate
    # finds nothing standing out and the dense evidence is dropped
    assert "Use ruff for lint." not in texts(paraphrase, weak_lexical_below=None)
    assert texts("recipe for a chocolate cake") == []

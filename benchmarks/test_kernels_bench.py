"""Kernel timings, compiled against pure twin (one group per kernel, both implementations)."""

from __future__ import annotations

import itertools
import random
from array import array

import pytest

QUERY = "how are the unit tests run with pytest fixtures and the sqlite cache"
TASK = "fix the flaky recall test in ci when the fts5 index migration runs"
RRF_K = 60.0


@pytest.fixture(scope="module")
def lexical_columns(memory_corpus):
    """The ten ``score_lexical`` columns for the corpus, shaped as the recall path builds them."""
    rng = random.Random(7)
    corpus = memory_corpus
    n = len(corpus)
    return [
        [c.text for c in corpus],
        [" ".join(c.tags) for c in corpus],
        [" ".join(c.files) for c in corpus],
        [" ".join(c.symbols) for c in corpus],
        [c.kind.replace("_", " ") for c in corpus],
        [c.ref for c in corpus],
        [rng.choice([1.0, 0.9, 0.8, 0.65, 0.45, 0.3]) for _ in range(n)],
        [0.5] * n,
        [rng.choice([0.0, 1.0]) for _ in range(n)],
        [round(rng.uniform(0.5, 1.0), 2) for _ in range(n)],
    ]


@pytest.fixture(scope="module")
def rrf_channels():
    """Three best-first channels of 1,000 ids each (lexical, dense, metadata), overlapping."""
    rng = random.Random(11)
    pool = [f"{rng.getrandbits(64):016x}" for _ in range(2500)]
    return [rng.sample(pool, 1000) for _ in range(3)], [0.5, 0.4, 0.1]


@pytest.mark.benchmark(group="lexical: 1k candidates")
def test_score_lexical(benchmark, kernels, lexical_columns):
    """Time the nine-factor lexical scorer over 1,000 candidates."""
    rows = benchmark(kernels.lexical.score_lexical, QUERY, TASK, False, *lexical_columns)
    assert len(rows) == len(lexical_columns[0])
    assert any(row[0] > 0 for row in rows)


@pytest.mark.benchmark(group="lexical: 1k candidate rows")
def test_score_candidates(benchmark, kernels, lexical_columns):
    """Time the same scorer reading 1,000 candidate tuples in place (as recall calls it)."""
    texts, tags, files, symbols, kind_words, refs, scope, _kind, role, confidence = lexical_columns
    kinds = [("project_fact", "decision")[int(r)] for r in role]
    columns = (texts, tags, files, symbols, kind_words, refs, scope, kinds, confidence)
    rows = list(zip(*columns, strict=True))
    fields = tuple(range(9))
    scored = benchmark(
        kernels.lexical.score_candidates, QUERY, TASK, False, rows, fields, None, {"decision"}
    )
    assert scored == kernels.lexical.score_lexical(QUERY, TASK, False, *lexical_columns)


@pytest.mark.benchmark(group="lexical: 1k scored candidates")
def test_scored_candidates(benchmark, kernels, lexical_columns):
    """Time the scorer going on to each candidate's ranking score (text relevance in the text
    factor's place, recency, Q boost) over 1,000 candidate tuples, best first, as stemmed
    recall calls it."""
    texts, tags, files, symbols, kind_words, refs, scope, _kind, role, confidence = lexical_columns
    rng = random.Random(5)
    n = len(texts)
    kinds = [("project_fact", "decision")[int(r)] for r in role]
    ids = [f"m{i:05d}" for i in range(n)]
    qs = [rng.choice([0.5, 0.5, 0.3, 0.8]) for _ in range(n)]
    updated = [1.7e12 + rng.uniform(0.0, 9e9) for _ in range(n)]
    columns = (texts, tags, files, symbols, kind_words, refs, scope, kinds, confidence)
    rows = list(zip(*columns, ids, qs, updated, strict=True))
    relevance = {key: rng.random() for key in ids}
    oldest = min(updated)
    recency = (oldest, max(updated) - oldest)
    args = (QUERY, TASK, False, rows, tuple(range(12)), None, {"decision"}, relevance)
    scored = benchmark(kernels.lexical.scored_candidates, *args, recency, 0.16, 0.2)
    rows_by_id = {s.fields[9]: s.row for s in scored}
    assert [rows_by_id[key] for key in ids] == kernels.lexical.score_candidates(
        QUERY, TASK, False, rows, tuple(range(9)), None, {"decision"}
    )
    assert all(s.relevance == relevance[s.fields[9]] for s in scored)
    assert all(a.score >= b.score for a, b in itertools.pairwise(scored))


@pytest.mark.benchmark(group="lexical: 1k candidates ranked")
def test_ranked_candidates(benchmark, kernels, lexical_columns):
    """Time one whole ranking of 1,000 candidate tuples as stemmed recall calls it: the
    filters (expiry, scope, low Q), the recency bounds, the scores, the base-score rule."""
    texts, tags, files, symbols, kind_words, refs, scope, _kind, role, confidence = lexical_columns
    rng = random.Random(6)
    n = len(texts)
    kinds = [("project_fact", "decision")[int(r)] for r in role]
    ids = [f"m{i:05d}" for i in range(n)]
    qs = [rng.choice([0.5, 0.5, 0.3, 0.8, 0.1]) for _ in range(n)]
    updated = [1.7e12 + rng.uniform(0.0, 9e9) for _ in range(n)]
    expires = [rng.choice([None, None, None, 1.0, 2e12]) for _ in range(n)]
    inactive = [rng.random() < 0.05 for _ in range(n)]
    scopes = [rng.choice(["repository:r", "repository:r", "workspace:w"]) for _ in range(n)]
    columns = (texts, tags, files, symbols, kind_words, refs, scope, kinds, confidence)
    rows = list(zip(*columns, ids, qs, updated, expires, inactive, scopes, strict=True))
    relevance = {key: rng.random() for key in ids}
    rules = kernels.lexical.RankRules(
        scope_keys={"repository:r", "workspace:w"},
        now_ms=1.75e12,
        check_expiry=True,
        check_q=True,
        threshold=0.15,
        require_signal=False,
        min_base=0.3,
        half_life_ms=2.592e9,
    )
    args = (QUERY, TASK, False, rows, tuple(range(15)), None, {"decision"}, relevance)
    ranked = benchmark(kernels.lexical.ranked_candidates, *args, 0.16, 0.2, rules)
    assert ranked.dropped > 0 and ranked.held and ranked.below > 0 and ranked.recency
    assert len(ranked.kept) + len(ranked.held) + ranked.dropped + ranked.below == n
    assert all(a.score >= b.score for a, b in itertools.pairwise(ranked.kept))


@pytest.fixture(scope="module")
def rrf_int_channels(rrf_channels):
    """The same three channels with the string ids replaced by integers (``array('q')``)."""
    rankings, weights = rrf_channels
    index: dict[str, int] = {}
    for ranking in rankings:
        for doc in ranking:
            index.setdefault(doc, len(index))
    return [array("q", [index[doc] for doc in r]) for r in rankings], weights, len(index)


@pytest.mark.benchmark(group="rrf: 3 x 1k int ids")
def test_rrf_fuse_ids(benchmark, kernels, rrf_int_channels):
    """Time the fusion kernel proper: three channels of 1,000 integer ids."""
    rankings, weights, n_ids = rrf_int_channels
    ids, scores = benchmark(kernels.fusion.rrf_fuse_ids, rankings, weights, RRF_K, n_ids)
    assert len(ids) == n_ids
    assert list(scores) == sorted(scores, reverse=True)


@pytest.mark.benchmark(group="rrf: 3 x 1k str ids")
def test_rrf_fuse(benchmark, kernels, rrf_channels):
    """Time fusion of three channels of 1,000 string ids (what the recall path calls)."""
    rankings, weights = rrf_channels
    ids, scores = benchmark(kernels.fusion.rrf_fuse, rankings, weights, RRF_K)
    assert len(ids) == len(set().union(*rankings))
    assert scores == sorted(scores, reverse=True)


@pytest.mark.benchmark(group="jaccard: 1k key sets")
def test_jaccard_keys(benchmark, kernels, memory_corpus):
    """Time the Jaccard kernel proper: one key set against 1,000 pre-computed key sets."""
    keys = [kernels.jaccard.token_keys(c.text) for c in memory_corpus]
    result = benchmark(kernels.jaccard.jaccard_keys, keys[0], keys)
    assert len(result) == len(keys)
    assert result[0] == 1.0


@pytest.mark.benchmark(group="jaccard: keys of 1k texts")
def test_token_keys(benchmark, kernels, memory_corpus):
    """Time turning 1,000 memory texts into sorted token-key arrays."""
    texts = [c.text for c in memory_corpus]
    keys = benchmark(lambda: [kernels.jaccard.token_keys(text) for text in texts])
    assert len(keys) == len(texts)
    assert all(list(k) == sorted(set(k)) for k in keys[:50])


@pytest.mark.benchmark(group="jaccard: 1k texts")
def test_jaccard_many(benchmark, kernels, memory_corpus):
    """Time Jaccard similarity of one memory text against 1,000 texts (tokenizing included)."""
    texts = [c.text for c in memory_corpus]
    result = benchmark(kernels.jaccard.jaccard_many, texts[0], texts)
    assert len(result) == len(texts)
    assert result[0] == 1.0


@pytest.fixture(scope="module")
def bm25_table(memory_corpus):
    """A feature table of 5,000 memory-like records (the corpus five times over, one scope)."""
    from factories import make_memory

    from swarmmem.core.recall.bm25 import stemmed_query
    from swarmmem.core.recall.features import FeatureTable

    records = [
        make_memory(f"{c.text} ({i})", tags=c.tags, metadata={"symbols": c.symbols})
        for i, c in enumerate(memory_corpus * 5)
    ]
    table = FeatureTable(records)
    match = stemmed_query(QUERY, TASK, "manual")
    table.search(match, scope_keys=None, kinds=None, now="", include_expired=True, limit=1)
    assert table._postings is not None  # built by the first search
    return table


def _bm25_args(t, query: list[int]) -> tuple:
    postings = [t._postings[term] for term in query]
    scan = (t._versions, t._lengths, t._live, t._scopes, b"\x01", t._kinds, None)
    return (*scan, postings, [], 1.2, 0.75, 160, t._ids)


def _query_ids(t) -> list[int]:
    from swarmmem.core.recall.bm25 import match_terms, stemmed_query

    phrases = match_terms(stemmed_query(QUERY, TASK, "manual"))
    return [t._vocabulary[p[0]] for p in phrases if len(p) == 1 and p[0] in t._vocabulary]


@pytest.mark.benchmark(group="bm25: 5k rows")
def test_bm25_top(benchmark, kernels, bm25_table):
    """Time the BM25 kernel: filter 5,000 feature rows by scope, read the postings of the
    query's terms, score the matched rows, rank the best 160."""
    t = bm25_table
    rows, scores = benchmark(kernels.bm25.bm25_top, *_bm25_args(t, _query_ids(t)))
    assert len(rows) == 160 and min(scores) > 0 and scores == sorted(scores, reverse=True)


@pytest.mark.benchmark(group="bm25: marks of 160 rows")
def test_term_marks(benchmark, kernels, bm25_table):
    """Time the marks read for the 160 rows a recall returns: which query terms each row's
    text holds."""
    t = bm25_table
    query = _query_ids(t)
    rows, _ = kernels.bm25.bm25_top(*_bm25_args(t, query))
    texts = benchmark(kernels.bm25.term_marks, t._starts, t._ends, t._terms, t._marks, rows, query)
    assert len(texts) == len(rows) and any(texts)


@pytest.mark.benchmark(group="bm25: postings of 5k rows")
def test_postings(benchmark, kernels, bm25_table):
    """Time building the postings of every term from the 5,000 feature rows (what the first
    search of a table, or the one after a compaction, pays)."""
    t = bm25_table
    built = benchmark(
        kernels.bm25.postings,
        t._starts,
        t._ends,
        t._terms,
        t._tfs,
        t._versions,
        len(t._vocabulary),
    )
    assert sum(len(listed) for listed in built) == 3 * len(t._terms)


@pytest.fixture(scope="module")
def text_relevance_inputs(memory_corpus):
    """1,000 candidates as the stemmed channel hands them over: candidate tuples (the text
    at 0), each with a BM25 score and a mask of the query terms its text holds (the few
    distinct ones a real query's candidates share), for a query of six terms."""
    rng = random.Random(13)
    rows, scores, marks = [], [], []
    for candidate in memory_corpus:
        rows.append((candidate.text * rng.choice([1, 1, 1, 4]),))
        scores.append(rng.uniform(0.5, 12.0))
        marks.append(sum(1 << j for j in rng.sample(range(4), rng.randint(1, 2))))
    return rows, 0, scores, marks, 6, 500, 2.0, 5.0


@pytest.mark.benchmark(group="bm25: text relevance of 1k candidates")
def test_text_relevance(benchmark, kernels, text_relevance_inputs):
    """Time the stemmed channel's text relevance (coverage, length scaling, text factor) of
    1,000 candidates."""
    relevance = benchmark(kernels.bm25.text_relevance, *text_relevance_inputs)
    assert len(relevance) == 1000
    assert 0.0 < min(relevance) < max(relevance) <= 1.0

"""The library's dataset runner with what the quality benchmarks record besides its report.

:func:`run_dataset` scores a collection as ``swarmmem dataset`` does
(:func:`swarmmem.datasets.run_dataset`, through the same steps) and can also:

* run the profiles under other ``retrieval`` configuration keys (e.g. ``{"fusion":
  "calibrated"}``);
* ask *foreign* queries (texts from another data set, so relevant to nothing here) and count,
  per row, how often they get an answer anyway (the no-filler check);
* record, per query, what the fusion stage sees (``channels``), for fitting it offline in
  ``calibrate.py`` and ``fit_fusion.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from swarmmem.core.config import RecallConfig
from swarmmem.core.model.ids import iso_to_ms
from swarmmem.core.model.records import RecallRequest
from swarmmem.core.recall.bm25 import held_terms, stemmed_query
from swarmmem.core.recall.hybrid import query_vector
from swarmmem.core.recall.lexical import lexical_recall, preselect_limit
from swarmmem.datasets import SCOPE, Dataset, DatasetRun, check_options, open_run, read_dataset

#: how many of the best cosines a query's channel entry keeps (every relevant one besides)
CHANNEL_DEPTH = 200
#: how many of a foreign query's best cosines its channel entry keeps
FOREIGN_COSINES = 50


def run_dataset(
    corpus_path: Path,
    queries_path: Path,
    qrels_path: Path,
    *,
    profiles: Sequence[str] = ("lexical",),
    k: int = 10,
    embedder: Any = None,
    limit_queries: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    channels: list[dict[str, Any]] | None = None,
    foreign_queries: Sequence[str] = (),
    retrieval: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Score the floors and every profile on the collection; return the library's report.

    ``channels``, when given with a dense profile, receives one entry per query with what
    the fusion stage sees: ``relevant``, ``lexical`` (every lexical candidate's text
    relevance), its raw evidence (``bm25``: each stemmed candidate's ``-bm25()``; ``terms``:
    the stemmed query terms its text holds; ``length``: its text length; ``query_terms``: the
    query's stemmed terms), ``dense`` (the cosines of the best :data:`CHANNEL_DEPTH`
    documents and of every relevant one) and ``written`` (their ``updatedAt`` in epoch ms),
    keyed by corpus id. ``foreign_queries`` add entries ``{"foreign": True, "lexical": n,
    "best_cosine": c, ...}``: how many lexical candidates such a query gets and its best
    cosine, with its stemmed channel's evidence (``query_terms``, ``terms``, ``bm25``) and
    its :data:`FOREIGN_COSINES` best cosines (``cosines``).

    ``foreign_queries`` also give the report a ``foreign`` table: per profile (and for the
    ``bm25-porter`` and ``dense-floor`` rows) how many foreign queries were asked
    (``queries``), how many got any item (``answered``) and the items returned in all
    (``items``), at ``k`` items at most; the profiles run with the library's default
    ``minScore``, as a user's recall would.
    """
    check_options(profiles, k)
    dataset = read_dataset(corpus_path, queries_path, qrels_path, limit_queries=limit_queries)
    with open_run(dataset, profiles=profiles, k=k, embedder=embedder, retrieval=retrieval) as run:
        recording = channels is not None and run.dense_parts is not None
        written = _written_ms(dataset) if recording else {}
        for n, query in enumerate(dataset.queries, 1):
            relevant = dataset.relevant(str(query["id"]))
            run.score_floors(query, relevant)
            if channels is not None and recording:
                channels.append(_labelled_entry(run, query, relevant, written))
            run.score_profiles(query, relevant)
            if progress is not None:
                progress(n, len(dataset.queries))
        foreign = _ask_foreign(run, foreign_queries, channels if recording else None)
    report = run.report()
    if not foreign_queries:
        return report
    unavailable = report.pop("dense_unavailable", None)
    report["foreign"] = foreign
    if unavailable is not None:
        report["dense_unavailable"] = unavailable
    return report


def hybrid_channels(
    paths: Sequence[Path], *, embedder: Any, foreign_queries: Sequence[str], **tags: str
) -> list[dict[str, Any]]:
    """The channel entries (see :func:`run_dataset`) of the hybrid profile on the collection
    at ``paths`` (corpus, queries, qrels), foreign queries included, each tagged with
    ``tags`` (the set and collection it came from, say): what the fusion fits learn from."""
    channels: list[dict[str, Any]] = []
    run_dataset(
        *paths,
        profiles=("hybrid",),
        embedder=embedder,
        channels=channels,
        foreign_queries=foreign_queries,
    )
    return [{**tags, **entry} for entry in channels]


def _ask_foreign(
    run: DatasetRun, texts: Sequence[str], channels: list[dict[str, Any]] | None
) -> dict[str, dict[str, int]]:
    """Ask every foreign query of every row; per row: how many were asked, how many got any
    item, the items in all. With ``channels``, each query's entry is appended to it."""
    foreign: dict[str, dict[str, int]] = {}
    for text in texts:
        for name, count in _foreign_answers(run, text).items():
            tally = foreign.setdefault(name, {"queries": 0, "answered": 0, "items": 0})
            tally["queries"] += 1
            tally["answered"] += count > 0
            tally["items"] += count
        if channels is not None:
            channels.append(_foreign_entry(run, text))
    return foreign


def _foreign_answers(run: DatasetRun, text: str) -> dict[str, int]:
    """How many items each row returns for ``text``: ``bm25-porter``, ``dense-floor`` (when it
    runs) and the profiles at the library's default ``minRelevance`` (admission, as a user's
    recall would; no base-score floor), at most ``k``."""
    returned = {"bm25-porter": len(run.porter_ranking(text))}
    if run.dense_parts is not None and run.has_dense_floor:
        returned["dense-floor"] = min(run.k, len(run.passing(run.dense_hits(text))))
    minimum = RecallConfig().min_relevance
    request = RecallRequest(query=text, scopes=(SCOPE,), max_items=run.k, min_relevance=minimum)
    for profile in run.profiles:
        result, _ = run.recall(profile, request)
        returned[profile] = len(result.items)
    return returned


def query_channels(run: DatasetRun, text: str) -> dict[str, Any]:
    """One query's lexical scores, the stemmed channel's raw evidence and the cosines, keyed
    by memory id (``query_terms``: the query's stemmed terms; ``dense``: the best
    :data:`CHANNEL_DEPTH` cosines; ``all_dense``: every cosine). Needs dense parts."""
    parts = run.dense_parts
    assert parts is not None
    request = RecallRequest(query=text, scopes=(SCOPE,), max_items=10, min_score=0.0)
    lexical = lexical_recall(run.store, request, now=run.dataset.now)
    vector, _ = query_vector(parts, text)
    every = parts.index.search(vector, len(parts.index.ids()))
    match = stemmed_query(text, None, "manual")
    found = run.store.select_candidates(
        scope_keys=[SCOPE.key],
        kinds=None,
        fts_query=match,
        preselect_limit=preselect_limit(request),
        scope_when_unmatched=False,
        now=run.dataset.now,
        include_expired=False,
        candidate_cap=1000,
        cap_before_preselect=False,
        stemmed=True,
    )
    terms, held = held_terms(found.records, match)
    return {
        "query_terms": sorted(terms),
        "lexical": {
            it.record.id: lexical.text_relevance[it.record.id]
            for it in lexical.items
            if not it.explored
        },
        "bm25": dict(found.fts_scores or {}),
        "terms": {key: sorted(have) for key, have in held.items()},
        "length": {r.id: len(r.text) for r in found.records},
        "dense": dict(every[:CHANNEL_DEPTH]),
        "all_dense": dict(every),
    }


def _labelled_entry(
    run: DatasetRun,
    query: Mapping[str, Any],
    relevant: dict[str, float],
    written: Mapping[str, float],
) -> dict[str, Any]:
    """A judged query's channel entry, keyed by corpus id; the cosines of the relevant
    documents are added to the best ones (-1 for one the index does not hold), ``written``
    (see :func:`_written_ms`) gives the write times."""
    found = query_channels(run, query["text"])
    terms = found.pop("query_terms")
    doc_of = run.dataset.doc_of
    docs: dict[str, Any] = {n: {doc_of[i]: v for i, v in c.items()} for n, c in found.items()}
    every = docs.pop("all_dense")
    docs["dense"] |= {doc: every.get(doc, -1.0) for doc in relevant}
    docs["query_terms"] = terms
    docs["written"] = {doc: written[doc] for doc in {*docs["lexical"], *docs["dense"]}}
    return {"query": str(query["id"]), "relevant": relevant, **docs}


def _written_ms(dataset: Dataset) -> dict[str, float]:
    """Each stored document's ``updatedAt`` in epoch ms, by corpus id."""
    return {dataset.doc_of[r.id]: iso_to_ms(r.updated_at) or 0.0 for r in dataset.records}


def _foreign_entry(run: DatasetRun, text: str) -> dict[str, Any]:
    """A foreign query's channel entry: its lexical candidates and best cosines, keyed by
    memory id."""
    found = query_channels(run, text)
    return {
        "foreign": True,
        "lexical": len(found["lexical"]),
        "lexical_scores": found["lexical"],
        "best_cosine": max(found["dense"].values(), default=-1.0),
        "query_terms": found["query_terms"],
        "terms": found["terms"],
        "bm25": found["bm25"],
        "cosines": sorted(found["dense"].values(), reverse=True)[:FOREIGN_COSINES],
    }

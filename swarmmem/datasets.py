"""Dataset runner: retrieval quality of each profile on an external collection.

Input files (nothing is downloaded; the user provides them):

* corpus JSONL: one ``{"id": ..., "text": ..., "title"?: ..., "kind"?: ..., "files"?: [...],
  "symbol"?: ...}`` per line (``kind`` a memory kind, ``project_fact`` when absent; ``files``
  and ``symbol`` become the memory's cited files and symbol, which recall reads as signals);
* queries JSONL: one ``{"id": ..., "text": ...}`` per line;
* qrels TSV: ``query-id<TAB>corpus-id<TAB>relevance`` (a header line is skipped).

The corpus is loaded as memories of one repository scope in a temporary SQLite store; each
profile is scored with Recall@k, nDCG@10 (scikit-learn) and MRR@k, next to floors computed in
the same run on the same documents:

* ``fts5-bm25``: the bare FTS5 BM25 query (the library's own query string) over the store's
  full-text index;
* ``bm25-porter``: a bare FTS5 BM25 query over a separate temporary FTS5 table tokenized with
  ``porter unicode61``, query terms without :data:`PORTER_STOP_WORDS`;
* ``dense-only`` (when the run embeds, i.e. a dense profile is asked for): exact cosine kNN of
  the query embedding over the same vectors the hybrid profiles use, nothing lexical;
* ``dense-floor`` (with ``dense-only``, when ``retrieval.denseFloor`` is set): the same
  ranking without the cosines under that relevance floor, and empty when the nearest hit
  does not pass the dense gate (``retrieval.denseGate``), i.e. what the dense channel offers
  under the hybrid profiles' no-filler rule (``dense-only`` returns the top ``k`` whatever
  the question).

Documents with the same text are stored once; judgements of a dropped duplicate count for the
document that was kept. Every query's metrics and latency are kept (``per_query``, with the
pipeline's degradation reason when a profile degraded, e.g. a reranker skipped by the latency
budget); the table gives means, the median (p50) latency and how many queries degraded.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from swarmmem.core.model.errors import EvaluationError
from swarmmem.core.recall.bm25 import STOP_WORDS, stemmed_query
from swarmmem.core.recall.pipeline import DENSE_PROFILES, PROFILES
from swarmmem.registry import create

FLOORS = ("fts5-bm25", "bm25-porter", "dense-only", "dense-floor")

#: the stemmed channel's stop words (``bm25-porter`` drops them from its query too)
PORTER_STOP_WORDS = STOP_WORDS
_PORTER_TABLE_SQL = (
    "CREATE VIRTUAL TABLE temp.dataset_porter_fts USING fts5("
    "id UNINDEXED, text, tokenize = 'porter unicode61')"
)


def porter_query(text: str) -> str | None:
    """The ``bm25-porter`` floor's FTS5 ``MATCH`` string: the query's word tokens, lower-cased,
    without :data:`PORTER_STOP_WORDS` and single letters, each quoted (the porter tokenizer
    stems them), joined by ``OR``; ``None`` when nothing is left."""
    return stemmed_query(text, None, "manual")


CHANNEL_DEPTH = 200


def _channels(store: Any, parts: Any, text: str, scope: Any, now: str) -> dict[str, Any]:
    """One query's lexical scores, the stemmed channel's raw evidence and the cosines (keyed
    by memory id, except ``query_terms``; see ``run_dataset``)."""
    from swarmmem.core.model.records import RecallRequest
    from swarmmem.core.recall.bm25 import held_terms
    from swarmmem.core.recall.hybrid import query_vector
    from swarmmem.core.recall.lexical import lexical_recall, preselect_limit

    request = RecallRequest(query=text, scopes=(scope,), max_items=10, min_score=0.0)
    lexical = lexical_recall(store, request, now=now)
    vector, _ = query_vector(parts, text)
    every = parts.index.search(vector, len(parts.index.ids()))
    match = stemmed_query(text, None, "manual")
    found = store.select_candidates(
        scope_keys=[scope.key],
        kinds=None,
        fts_query=match,
        preselect_limit=preselect_limit(request),
        scope_when_unmatched=False,
        now=now,
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


def _read_jsonl(path: Path, what: str) -> list[dict[str, Any]]:
    rows = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise EvaluationError(f"cannot read {what} {path}: {exc}") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise EvaluationError(f"{path.name}:{number}: invalid JSON ({exc})") from exc
        if not isinstance(row, dict) or "id" not in row or not isinstance(row.get("text"), str):
            raise EvaluationError(f"{path.name}:{number}: expected an object with id and text")
        rows.append(row)
    return rows


def load_qrels(path: Path) -> dict[str, dict[str, float]]:
    """``{query_id: {doc_id: relevance}}`` from a TSV file (header optional)."""
    out: dict[str, dict[str, float]] = {}
    try:
        handle = path.open(encoding="utf-8", newline="")
    except OSError as exc:
        raise EvaluationError(f"cannot read qrels {path}: {exc}") from exc
    with handle:
        for number, row in enumerate(csv.reader(handle, delimiter="\t"), 1):
            if not row or not "".join(row).strip():
                continue
            if len(row) < 3:
                raise EvaluationError(
                    f"{path.name}:{number}: expected query-id, corpus-id, relevance"
                )
            try:
                score = float(row[2])
            except ValueError:
                if number == 1:
                    continue  # header
                raise EvaluationError(f"{path.name}:{number}: relevance must be a number") from None
            out.setdefault(row[0], {})[row[1]] = score
    return out


def metrics_for(ranked: Sequence[str], relevant: dict[str, float], k: int) -> dict[str, float]:
    """Recall@k, nDCG@10 (scikit-learn's ``ndcg_score``) and MRR@k of one ranking."""
    from sklearn.metrics import ndcg_score  # the eval extra

    positives = {doc for doc, rel in relevant.items() if rel > 0}
    top = list(ranked[:k])
    recall = len(set(top) & positives) / len(positives) if positives else 0.0
    mrr = next((1.0 / (i + 1) for i, doc in enumerate(top) if doc in positives), 0.0)
    if not positives:
        return {"recall@k": recall, "ndcg@10": 0.0, "mrr": mrr}
    # The ten ranked slots (padded with placeholders) score above every unretrieved document,
    # so relevant documents the ranking missed sit below the cut-off and add nothing.
    top10 = list(dict.fromkeys(ranked[:10]))
    slots = top10 + [f"\0pad{i}" for i in range(10 - len(top10))]
    universe = slots + sorted(doc for doc in relevant if doc not in top10)
    y_true = [[float(relevant.get(doc, 0.0)) for doc in universe]]
    y_score = [[float(len(slots) - i) if i < len(slots) else 0.0 for i in range(len(universe))]]
    ndcg = float(ndcg_score(y_true, y_score, k=10))
    return {"recall@k": recall, "ndcg@10": ndcg, "mrr": mrr}


def run_dataset(
    corpus_path: Path,
    queries_path: Path,
    qrels_path: Path,
    *,
    profiles: Sequence[str] = ("lexical",),
    k: int = 10,
    embedder: Any = None,
    reranker: Any = None,
    limit_queries: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    channels: list[dict[str, Any]] | None = None,
    foreign_queries: Sequence[str] = (),
    retrieval: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Score the floors and every profile on the collection; return a report dict.

    ``profiles`` (the report's ``profiles`` table) lists the floors first: ``fts5-bm25`` and
    ``bm25-porter`` always, ``dense-only`` when a dense profile is asked for and the dense
    parts are available (otherwise ``dense_unavailable`` says why).

    ``channels``, when given with a dense profile, receives one entry per query with what
    the fusion stage sees (for fitting it offline, see benchmarks/quality/calibrate.py):
    ``relevant``, ``lexical`` (every lexical candidate's text relevance), its raw evidence
    (``bm25``: each stemmed candidate's ``-bm25()``; ``terms``: the stemmed query terms its
    text holds; ``query_terms``: the query's stemmed terms), ``dense`` (the cosines of the
    best :data:`CHANNEL_DEPTH` documents and of every relevant one) and ``written`` (their
    ``updatedAt`` in epoch ms), keyed by corpus id. ``foreign_queries``
    (texts from another data set, so relevant to nothing here) add entries
    ``{"foreign": True, "lexical": n, "best_cosine": c, ...}``: how many lexical candidates
    such a query gets and its best cosine (the no-filler check), with its stemmed channel's
    evidence (``query_terms``, ``terms``, ``bm25``) and its 50 best cosines (``cosines``).

    ``retrieval`` overrides ``retrieval`` configuration keys (e.g. ``{"fusion":
    "calibrated"}``) for this run.

    ``foreign_queries`` also give the report a ``foreign`` table: per profile (and for the
    ``bm25-porter`` and ``dense-floor`` rows) how many foreign queries were asked
    (``queries``), how many got any item (``answered``) and the items returned in all
    (``items``), at ``k`` items at most; the profiles run with the library's default
    ``minScore``, as a user's recall would.
    """
    from swarmmem.bootstrap import sqlite_connect
    from swarmmem.core.model.ids import (
        content_hash,
        iso_to_ms,
        memory_id_for_hash,
        normalize_text,
        to_iso,
    )
    from swarmmem.core.model.records import (
        MEMORY_KINDS,
        MemoryRecord,
        MemoryScope,
        MemorySource,
        RecallRequest,
    )
    from swarmmem.core.recall.embeddings import embed_records
    from swarmmem.core.recall.fts import build_fts_query
    from swarmmem.core.recall.hybrid import GATE_DEPTH, CosineProfile, query_vector, stands_out
    from swarmmem.core.recall.pipeline import run_recall
    from swarmmem.evaluation import project_runtime
    from swarmmem.ports.clock import SystemClock

    bad = [p for p in profiles if p not in PROFILES]
    if bad:
        raise EvaluationError(f"unknown profile(s) {bad}; choose from {', '.join(PROFILES)}")
    if not 1 <= k <= 100:
        raise EvaluationError(f"k must be in 1..100; got {k}")
    corpus = _read_jsonl(corpus_path, "corpus")
    queries = _read_jsonl(queries_path, "queries")
    qrels = load_qrels(qrels_path)
    queries = [q for q in queries if str(q["id"]) in qrels][: limit_queries or None]
    if not queries:
        raise EvaluationError("no query has relevance judgements in the qrels file")
    scope = MemoryScope(type="repository", repo_id="dataset")
    clock_now = SystemClock().now()
    stamp = to_iso(clock_now)
    doc_of: dict[str, str] = {}  # memory id -> corpus id of the document kept
    kept_as: dict[str, str] = {}  # corpus id -> corpus id of the document stored for its text
    records: list[MemoryRecord] = []
    index_of: dict[str, int] = {}
    for position, row in enumerate(corpus):
        # the corpus is written in file order, one millisecond apart (the last row at "now")
        written = to_iso(clock_now - dt.timedelta(milliseconds=len(corpus) - 1 - position))
        text = normalize_text(" ".join(str(x) for x in (row.get("title") or "", row["text"]) if x))[
            :2000
        ]
        if not text:
            continue
        kind = str(row.get("kind") or "project_fact")
        if kind not in MEMORY_KINDS:
            raise EvaluationError(f"corpus row {row['id']!r}: unknown kind {kind!r}")
        metadata: dict[str, Any] = {}
        if row.get("files"):
            metadata["files"] = [str(f) for f in row["files"]]
        if row.get("symbol"):
            metadata["symbol"] = str(row["symbol"])
        digest = content_hash(scope.as_dict(), kind, text)
        mid = memory_id_for_hash(digest)
        if mid in doc_of:  # the same text again: the stored memory is refreshed
            kept_as[str(row["id"])] = doc_of[mid]
            i = index_of[mid]
            records[i] = attrs.evolve(records[i], updated_at=written)
            continue
        doc_of[mid] = str(row["id"])
        index_of[mid] = len(records)
        records.append(
            MemoryRecord(
                id=mid,
                scope=scope,
                kind=kind,
                text=text,
                tags=(),
                metadata=metadata,
                confidence=0.8,
                stability="durable",
                source=MemorySource(type="manual", ref=str(row["id"])[:200]),
                created_at=written,
                updated_at=written,
                content_hash=digest,
            )
        )
    written_ms = {doc_of[r.id]: iso_to_ms(r.updated_at) or 0.0 for r in records}
    dense = any(p in DENSE_PROFILES for p in profiles)
    names = ["fts5-bm25", "bm25-porter", *(["dense-only", "dense-floor"] if dense else [])]
    names += profiles
    per_query: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    dense_unavailable: str | None = None
    #: per row, over the foreign queries: how many, how many got any item, items in all
    foreign: dict[str, dict[str, int]] = {}
    # the dataset ranks whole collections: no last-slot rescue, no query cache
    config = {
        "retrieval": {"denseRescue": None, **(retrieval or {})},
        "embeddings": {"cacheSize": 0},
    }
    with tempfile.TemporaryDirectory(prefix="swarmmem-dataset-") as tmp:
        runtime = project_runtime(
            Path(tmp),
            "sqlite",
            config=config,
            embedder=(embedder or create("embedder", "onnx")) if dense else None,
            reranker=reranker if dense else None,
        )
        try:
            store = runtime.store
            with store.transaction():
                for record in records:
                    store.upsert(record)
            dense_parts = runtime.dense_parts(rerank=False) if dense else None
            dense_floor = runtime.config["retrieval"]["denseFloor"]
            dense_gate = runtime.config["retrieval"]["denseGate"]
            fusion = runtime.config["retrieval"]["fusion"]
            evidence_threshold = runtime.config["retrieval"]["denseEvidence"]
            if dense_floor is None and fusion != "calibrated":
                per_query.pop("dense-floor", None)
            if dense_parts is not None:
                embed_records(dense_parts, records)
            elif dense:
                dense_unavailable = runtime.dense_unavailable_reason or "dense parts unavailable"
                for name in ("dense-only", "dense-floor"):
                    per_query.pop(name, None)
            conn = sqlite_connect(runtime.sqlite_path)
            try:
                conn.execute(_PORTER_TABLE_SQL)
                conn.executemany(
                    "INSERT INTO temp.dataset_porter_fts (id, text) VALUES (?, ?)",
                    [(r.id, r.text) for r in records],
                )

                def note_result(
                    name: str, qid: str, ranked: list[str], started: float, note: str | None = None
                ) -> None:
                    elapsed = time.perf_counter() - started
                    row = {"query": qid, **metrics_for(ranked, relevant, k)}
                    row["latency_ms"] = elapsed * 1000.0
                    if note is not None:
                        row["degraded"] = note
                    per_query[name].append(row)

                def nearest(vector: Any) -> list[tuple[str, float]]:
                    """Enough nearest hits for ``dense-only`` (``k``) and the dense gate."""
                    assert dense_parts is not None
                    return dense_parts.index.search(vector, max(k, GATE_DEPTH))

                def passing(hits: list[tuple[str, float]]) -> list[tuple[str, float]]:
                    """The hits under the hybrid profiles' no-filler rule: with the
                    calibrated fusion, those whose evidence as dense-only candidates reaches
                    ``retrieval.denseEvidence``; else none when the nearest does not stand
                    out (the dense gate), and those reaching the floor."""
                    if fusion == "calibrated":
                        profile = CosineProfile.of([c for _, c in hits])
                        if profile is None:
                            return []
                        lowest = profile.evidence_floor(evidence_threshold, [c for _, c in hits])
                        if dense_floor is not None:
                            lowest = max(lowest, dense_floor)
                        return [h for h in hits if h[1] >= lowest]
                    if dense_gate is not None and not stands_out([c for _, c in hits], dense_gate):
                        return []
                    return [h for h in hits if h[1] >= dense_floor]

                def bare(table: str, match: str | None) -> list[str]:
                    if not match:
                        return []
                    rows = conn.execute(
                        f"SELECT id FROM {table} WHERE {table} MATCH ? "
                        f"ORDER BY bm25({table}) LIMIT ?",
                        (match, k),
                    ).fetchall()
                    return [doc_of[r[0]] for r in rows]

                for n, query in enumerate(queries, 1):
                    qid = str(query["id"])
                    relevant: dict[str, float] = {}
                    for doc, rel in qrels[qid].items():
                        doc = kept_as.get(doc, doc)
                        relevant[doc] = max(rel, relevant.get(doc, rel))
                    started = time.perf_counter()
                    fts = build_fts_query(query["text"], None, "manual")
                    note_result("fts5-bm25", qid, bare("memory_items_fts", fts), started)
                    started = time.perf_counter()
                    ranked = bare("dataset_porter_fts", porter_query(query["text"]))
                    note_result("bm25-porter", qid, ranked, started)
                    if dense_parts is not None:
                        started = time.perf_counter()
                        vector, _ = query_vector(dense_parts, query["text"])
                        hits = nearest(vector)
                        note_result("dense-only", qid, [doc_of[h[0]] for h in hits[:k]], started)
                        if "dense-floor" in per_query:
                            kept = [doc_of[h[0]] for h in passing(hits)[:k]]
                            note_result("dense-floor", qid, kept, started)
                        if channels is not None:
                            found = _channels(store, dense_parts, query["text"], scope, stamp)
                            terms = found.pop("query_terms")
                            docs: dict[str, Any] = {
                                n: {doc_of[i]: v for i, v in c.items()} for n, c in found.items()
                            }
                            every = docs.pop("all_dense")
                            docs["dense"] |= {doc: every.get(doc, -1.0) for doc in relevant}
                            docs["query_terms"] = terms
                            docs["written"] = {
                                doc: written_ms[doc] for doc in {*docs["lexical"], *docs["dense"]}
                            }
                            channels.append({"query": qid, "relevant": relevant, **docs})
                    request = RecallRequest(
                        query=query["text"], scopes=(scope,), max_items=k, min_score=0.0
                    )
                    for profile in profiles:
                        started = time.perf_counter()
                        recall_config, parts = runtime.resolve_profile(profile)
                        res, trace = run_recall(
                            store, request, now=stamp, config=recall_config, parts=parts
                        )
                        ranked = [doc_of[it.record.id] for it in res.items]
                        note_result(profile, qid, ranked, started, trace.degradation_reason)
                    if progress is not None:
                        progress(n, len(queries))
                for text in foreign_queries:
                    returned = {"bm25-porter": len(bare("dataset_porter_fts", porter_query(text)))}
                    if dense_parts is not None and "dense-floor" in per_query:
                        vector, _ = query_vector(dense_parts, text)
                        returned["dense-floor"] = min(k, len(passing(nearest(vector))))
                    request = RecallRequest(query=text, scopes=(scope,), max_items=k)
                    for profile in profiles:  # the default minScore: what a user would get
                        recall_config, parts = runtime.resolve_profile(profile)
                        res, _ = run_recall(
                            store, request, now=stamp, config=recall_config, parts=parts
                        )
                        returned[profile] = len(res.items)
                    for name, count in returned.items():
                        tally = foreign.setdefault(name, {"queries": 0, "answered": 0, "items": 0})
                        tally["queries"] += 1
                        tally["answered"] += count > 0
                        tally["items"] += count
                    if channels is not None and dense_parts is not None:
                        found = _channels(store, dense_parts, text, scope, stamp)
                        best = max(found["dense"].values(), default=-1.0)
                        channels.append(
                            {
                                "foreign": True,
                                "lexical": len(found["lexical"]),
                                "lexical_scores": found["lexical"],
                                "best_cosine": best,
                                "query_terms": found["query_terms"],
                                "terms": found["terms"],
                                "bm25": found["bm25"],
                                "cosines": sorted(found["dense"].values(), reverse=True)[:50],
                            }
                        )
            finally:
                conn.close()
        finally:
            runtime.close()
    table = {
        name: {
            metric: sum(r[metric] for r in rows) / len(rows)
            for metric in ("recall@k", "ndcg@10", "mrr")
        }
        | {
            "mean_latency_ms": sum(r["latency_ms"] for r in rows) / len(rows),
            "p50_latency_ms": statistics.median(r["latency_ms"] for r in rows),
            "degraded": sum(1 for r in rows if "degraded" in r),
        }
        for name, rows in per_query.items()
    }
    report: dict[str, Any] = {
        "k": k,
        "documents": len(records),
        "queries": len(queries),
        "profiles": table,
        "per_query": per_query,
    }
    if foreign_queries:
        report["foreign"] = foreign
    if dense_unavailable is not None:
        report["dense_unavailable"] = dense_unavailable
    return report

"""Dataset runner: retrieval quality of each profile on an external collection.

Input files (nothing is downloaded; the user provides them):

* corpus JSONL: one ``{"id": ..., "text": ..., "title"?: ..., "kind"?: ..., "files"?: [...],
  "symbol"?: ..., "written"?: ...}`` per line (``kind`` a memory kind, ``project_fact`` when
  absent; ``files`` and ``symbol`` become the memory's cited files and symbol, which recall
  reads as signals; ``written``, an ISO 8601 time, when the document was written: given for
  one row, it is needed for every row);
* queries JSONL: one ``{"id": ..., "text": ..., "asked"?: ...}`` per line (``asked``, an
  ISO 8601 time, when the question is asked: a dated corpus keeps its rows' ages up to the
  latest of these and the rows' own times, which is the run's ``now``);
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
  ranking under the hybrid profiles' no-filler rule for dense evidence without lexical
  support (``dense-only`` returns the top ``k`` whatever the question): with ``fusion:
  score``, without the cosines under that relevance floor or at or under the query's
  background cosine; with ``rrf`` or ``convex``, under the floor and empty when the nearest
  hit does not pass the dense gate (``retrieval.denseGate``).

Documents with the same text are stored once; judgements of a dropped duplicate count for the
document that was kept. Every query's metrics and latency are kept (``per_query``, with the
pipeline's degradation reason when a profile degraded, e.g. a reranker skipped by the latency
budget); the table gives means, the median (p50) latency and how many queries degraded.

:func:`run_dataset` is what ``swarmmem dataset`` runs. Its steps are public so that a
measurement can add its own per query: :func:`read_dataset` reads the files,
:func:`open_run` loads the corpus into a temporary store and yields a :class:`DatasetRun`
whose :meth:`~DatasetRun.score_floors` and :meth:`~DatasetRun.score_profiles` score a query
and whose :meth:`~DatasetRun.report` makes the report.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

from swarmmem.bootstrap import Runtime, sqlite_connect
from swarmmem.core.model.errors import EvaluationError
from swarmmem.core.model.ids import normalize_text, parse_iso, to_iso
from swarmmem.core.model.records import (
    MEMORY_KINDS,
    MemoryRecord,
    MemoryScope,
    MemorySource,
    RecallRequest,
    identified_record,
)
from swarmmem.core.recall.bm25 import STOP_WORDS, stemmed_query
from swarmmem.core.recall.embeddings import embed_records
from swarmmem.core.recall.fts import build_fts_query
from swarmmem.core.recall.hybrid import (
    GATE_DEPTH,
    CosineProfile,
    DenseParts,
    query_vector,
    stands_out,
)
from swarmmem.core.recall.lexical import RecallResult
from swarmmem.core.recall.pipeline import DENSE_PROFILES, PROFILES, RecallTrace, run_recall
from swarmmem.evaluation import project_runtime
from swarmmem.ports.clock import SystemClock
from swarmmem.registry import create

FLOORS = ("fts5-bm25", "bm25-porter", "dense-only", "dense-floor")

#: the stemmed channel's stop words (``bm25-porter`` drops them from its query too)
PORTER_STOP_WORDS = STOP_WORDS
_PORTER_TABLE_SQL = (
    "CREATE VIRTUAL TABLE temp.dataset_porter_fts USING fts5("
    "id UNINDEXED, text, tokenize = 'porter unicode61')"
)
#: the one repository scope every document of a collection is stored in
SCOPE = MemoryScope(type="repository", repo_id="dataset")
#: a document's text is cut to this many characters
MAX_TEXT = 2000
#: a corpus whose rows do not say when they were written is written over this many days
#: before the run's ``now``, its rows evenly spaced in file order (recency reads a memory's
#: age: rows written a millisecond apart would all be as recent as each other, which no store
#: that lived through a corpus's updates is)
CORPUS_DAYS = 90


def porter_query(text: str) -> str | None:
    """The ``bm25-porter`` floor's FTS5 ``MATCH`` string: the query's word tokens, lower-cased,
    without :data:`PORTER_STOP_WORDS` and single letters, each quoted (the porter tokenizer
    stems them), joined by ``OR``; ``None`` when nothing is left."""
    return stemmed_query(text, None, "manual")


# ------------------------------------------------------------------------------ the files


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


def check_options(profiles: Sequence[str], k: int) -> None:
    """Refuse unknown profiles and a cut-off outside 1..100, before any file is read.

    Raises:
        EvaluationError: naming the bad profiles or the cut-off.
    """
    bad = [p for p in profiles if p not in PROFILES]
    if bad:
        raise EvaluationError(f"unknown profile(s) {bad}; choose from {', '.join(PROFILES)}")
    if not 1 <= k <= 100:
        raise EvaluationError(f"k must be in 1..100; got {k}")


# ------------------------------------------------------------------------ the collection


@attrs.frozen(kw_only=True)
class Dataset:
    """A collection read from its files: the corpus as memories of :data:`SCOPE` and the
    queries that have judgements."""

    records: tuple[MemoryRecord, ...]
    doc_of: Mapping[str, str]
    """memory id -> corpus id of the document kept for its text"""
    kept_as: Mapping[str, str]
    """corpus id of a dropped duplicate -> corpus id of the document kept for its text"""
    queries: tuple[Mapping[str, Any], ...]
    qrels: Mapping[str, Mapping[str, float]]
    now: str
    """the time the collection is recalled at (the last document was written then)"""

    def relevant(self, qid: str) -> dict[str, float]:
        """The judgements of query ``qid``, a dropped duplicate's counted for the document
        kept (the highest relevance wins)."""
        out: dict[str, float] = {}
        for doc, rel in self.qrels[qid].items():
            doc = self.kept_as.get(doc, doc)
            out[doc] = max(rel, out.get(doc, rel))
        return out


def read_dataset(
    corpus_path: Path, queries_path: Path, qrels_path: Path, *, limit_queries: int | None = None
) -> Dataset:
    """Read the three files; keep the queries that have judgements (the first
    ``limit_queries`` of them).

    Raises:
        EvaluationError: a file cannot be read or parsed, no query has judgements, or a
            corpus row names an unknown kind.
    """
    corpus = _read_jsonl(corpus_path, "corpus")
    queries = _read_jsonl(queries_path, "queries")
    qrels = load_qrels(qrels_path)
    queries = [q for q in queries if str(q["id"]) in qrels][: limit_queries or None]
    if not queries:
        raise EvaluationError("no query has relevance judgements in the qrels file")
    now = SystemClock().now()
    records, doc_of, kept_as = _memories(corpus, now, _asked(queries))
    return Dataset(
        records=tuple(records),
        doc_of=doc_of,
        kept_as=kept_as,
        queries=tuple(queries),
        qrels=qrels,
        now=to_iso(now),
    )


def _time(row: Mapping[str, Any], key: str, what: str) -> dt.datetime:
    value = row.get(key)
    moment = parse_iso(value) if isinstance(value, str) else None
    if moment is None:
        raise EvaluationError(f"{what} {row['id']}: {key} must be an ISO 8601 time, not {value!r}")
    return moment


def _asked(queries: Sequence[Mapping[str, Any]]) -> dt.datetime | None:
    """The latest time a query says it is asked (``None``: none says)."""
    times = [_time(q, "asked", "query") for q in queries if "asked" in q]
    return max(times, default=None)


def _written_times(
    rows: Sequence[Mapping[str, Any]], now: dt.datetime, asked: dt.datetime | None
) -> list[dt.datetime]:
    """When each row was written, on the run's clock: the rows' own ``written`` times moved
    so that the latest of them and ``asked`` is ``now`` (ages kept); rows that do not say, in
    file order over :data:`CORPUS_DAYS`, evenly spaced, the last at ``now``.

    Raises:
        EvaluationError: some rows say when they were written and others do not, or one is
            not an ISO 8601 time.
    """
    dated = sum(1 for row in rows if "written" in row)
    if not dated:
        step = dt.timedelta(days=CORPUS_DAYS) / max(len(rows) - 1, 1)
        return [now - step * (len(rows) - 1 - position) for position in range(len(rows))]
    if dated < len(rows):
        bare = next(row["id"] for row in rows if "written" not in row)
        raise EvaluationError(
            f"corpus {bare}: no written time, while {dated} of {len(rows)} rows have one"
        )
    times = [_time(row, "written", "corpus") for row in rows]
    latest = max([*times, *([] if asked is None else [asked])])
    return [now - (latest - moment) for moment in times]


def _memories(
    rows: Sequence[Mapping[str, Any]], now: dt.datetime, asked: dt.datetime | None = None
) -> tuple[list[MemoryRecord], dict[str, str], dict[str, str]]:
    """The corpus rows as memories, each written at its time (:func:`_written_times`); a
    text seen before refreshes the stored memory instead of adding one (when written later).
    Returns the memories, the corpus id of each and the corpus id kept for each duplicate."""
    doc_of: dict[str, str] = {}
    kept_as: dict[str, str] = {}
    records: list[MemoryRecord] = []
    index_of: dict[str, int] = {}
    for row, moment in zip(rows, _written_times(rows, now, asked), strict=True):
        written = to_iso(moment)
        record = _record_of(row, written)
        if record is None:
            continue
        if record.id in doc_of:  # the same text again: the stored memory is refreshed
            kept_as[str(row["id"])] = doc_of[record.id]
            i = index_of[record.id]
            if written > records[i].updated_at:
                records[i] = attrs.evolve(records[i], updated_at=written)
            continue
        doc_of[record.id] = str(row["id"])
        index_of[record.id] = len(records)
        records.append(record)
    return records, doc_of, kept_as


def _record_of(row: Mapping[str, Any], written: str) -> MemoryRecord | None:
    """One corpus row as a memory (title and text joined, normalised, cut to
    :data:`MAX_TEXT`); ``None`` when no text is left.

    Raises:
        EvaluationError: the row names an unknown kind.
    """
    joined = " ".join(str(x) for x in (row.get("title") or "", row["text"]) if x)
    text = normalize_text(joined)[:MAX_TEXT]
    if not text:
        return None
    kind = str(row.get("kind") or "project_fact")
    if kind not in MEMORY_KINDS:
        raise EvaluationError(f"corpus row {row['id']!r}: unknown kind {kind!r}")
    metadata: dict[str, Any] = {}
    if row.get("files"):
        metadata["files"] = [str(f) for f in row["files"]]
    if row.get("symbol"):
        metadata["symbol"] = str(row["symbol"])
    return identified_record(
        scope=SCOPE,
        kind=kind,
        text=text,
        tags=(),
        metadata=metadata,
        confidence=0.8,
        stability="durable",
        source=MemorySource(type="manual", ref=str(row["id"])[:200]),
        created_at=written,
        updated_at=written,
    )


# --------------------------------------------------------------------------------- the run


class DatasetRun:
    """A collection loaded in a temporary store (see :func:`open_run`): the floors and the
    profiles rank its queries, each ranking's metrics and latency kept per row
    (:attr:`per_query`)."""

    def __init__(
        self,
        dataset: Dataset,
        runtime: Runtime,
        connection: Any,
        dense_parts: DenseParts | None,
        *,
        profiles: Sequence[str],
        k: int,
    ) -> None:
        self.dataset = dataset
        self.runtime = runtime
        self.store = runtime.store
        self.dense_parts = dense_parts
        self.profiles = tuple(profiles)
        self.k = k
        self._connection = connection
        retrieval = runtime.settings.retrieval
        self._dense_floor = retrieval.dense_floor
        self._dense_gate = retrieval.dense_gate
        self._fusion = retrieval.fusion
        self._evidence_threshold = retrieval.dense_evidence
        dense = any(p in DENSE_PROFILES for p in profiles)
        self.dense_unavailable: str | None = None
        if dense_parts is None and dense:
            self.dense_unavailable = runtime.dense_unavailable_reason or "dense parts unavailable"
        rows = ["fts5-bm25", "bm25-porter"]
        if dense_parts is not None:
            rows.append("dense-only")
            if self._dense_floor is not None or self._fusion == "calibrated":
                rows.append("dense-floor")
        #: per row (floor or profile), one entry per scored query
        self.per_query: dict[str, list[dict[str, Any]]] = {name: [] for name in [*rows, *profiles]}

    @property
    def has_dense_floor(self) -> bool:
        """Whether the ``dense-floor`` row runs (dense parts, and a relevance floor or the
        calibrated fusion)."""
        return "dense-floor" in self.per_query

    # -- rankings, as corpus ids

    def _bare(self, table: str, match: str | None) -> list[str]:
        """The best ``k`` of a bare FTS5 BM25 query on ``table``."""
        if not match:
            return []
        rows = self._connection.execute(
            f"SELECT id FROM {table} WHERE {table} MATCH ? ORDER BY bm25({table}) LIMIT ?",
            (match, self.k),
        ).fetchall()
        return [self.dataset.doc_of[r[0]] for r in rows]

    def fts5_ranking(self, text: str) -> list[str]:
        """The ``fts5-bm25`` floor: the library's own FTS5 query on the store's index."""
        return self._bare("memory_items_fts", build_fts_query(text, None, "manual"))

    def porter_ranking(self, text: str) -> list[str]:
        """The ``bm25-porter`` floor: :func:`porter_query` on the porter-stemmed table."""
        return self._bare("dataset_porter_fts", porter_query(text))

    def dense_hits(self, text: str) -> list[tuple[str, float]]:
        """The nearest memories by cosine, enough for ``dense-only`` (``k``) and the dense
        gate (needs dense parts)."""
        assert self.dense_parts is not None
        vector, _ = query_vector(self.dense_parts, text)
        return self.dense_parts.index.search(vector, max(self.k, GATE_DEPTH))

    def passing(self, hits: list[tuple[str, float]]) -> list[tuple[str, float]]:
        """The hits under the hybrid profiles' no-filler rule: with the calibrated fusion,
        those whose evidence as dense-only candidates reaches ``retrieval.denseEvidence``;
        with ``score`` fusion (the rule of a query without lexical evidence), those reaching the
        floor and standing above the query's background; else none when the nearest does not
        stand out (the dense gate), and those reaching the floor."""
        cosines = [c for _, c in hits]
        if self._fusion == "calibrated":
            profile = CosineProfile.of(cosines)
            if profile is None:
                return []
            lowest = profile.evidence_floor(self._evidence_threshold, cosines)
            if self._dense_floor is not None:
                lowest = max(lowest, self._dense_floor)
            return [h for h in hits if h[1] >= lowest]
        assert self._dense_floor is not None
        if self._fusion == "score":  # a query without lexical evidence: the background rule
            profile = CosineProfile.of(cosines)
            lowest = self._dense_floor
            if profile is not None and profile.floor is not None:
                lowest = max(lowest, profile.floor)
            return [h for h in hits if h[1] >= lowest]
        if self._dense_gate is not None and not stands_out(cosines, self._dense_gate):
            return []
        return [h for h in hits if h[1] >= self._dense_floor]

    def recall(self, profile: str, request: RecallRequest) -> tuple[RecallResult, RecallTrace]:
        """``request`` through the recall pipeline under ``profile``."""
        config, parts = self.runtime.resolve_profile(profile)
        return run_recall(self.store, request, now=self.dataset.now, config=config, parts=parts)

    # -- scoring

    def _note(
        self,
        name: str,
        qid: str,
        ranked: list[str],
        relevant: dict[str, float],
        started: float,
        note: str | None = None,
    ) -> None:
        """Keep one ranking's metrics and its latency since ``started``."""
        elapsed = time.perf_counter() - started
        row = {"query": qid, **metrics_for(ranked, relevant, self.k)}
        row["latency_ms"] = elapsed * 1000.0
        if note is not None:
            row["degraded"] = note
        self.per_query[name].append(row)

    def score_floors(self, query: Mapping[str, Any], relevant: dict[str, float]) -> None:
        """Rank ``query`` with every floor (``dense-floor`` timed with the ``dense-only``
        search it filters)."""
        qid, text = str(query["id"]), query["text"]
        started = time.perf_counter()
        self._note("fts5-bm25", qid, self.fts5_ranking(text), relevant, started)
        started = time.perf_counter()
        self._note("bm25-porter", qid, self.porter_ranking(text), relevant, started)
        if self.dense_parts is None:
            return
        started = time.perf_counter()
        hits = self.dense_hits(text)
        doc_of = self.dataset.doc_of
        self._note("dense-only", qid, [doc_of[h[0]] for h in hits[: self.k]], relevant, started)
        if self.has_dense_floor:
            kept = [doc_of[h[0]] for h in self.passing(hits)[: self.k]]
            self._note("dense-floor", qid, kept, relevant, started)

    def score_profiles(self, query: Mapping[str, Any], relevant: dict[str, float]) -> None:
        """Rank ``query`` with every profile (``k`` items, no relevance threshold)."""
        qid = str(query["id"])
        request = RecallRequest(
            query=query["text"], scopes=(SCOPE,), max_items=self.k, min_score=0.0
        )
        for profile in self.profiles:
            started = time.perf_counter()
            result, trace = self.recall(profile, request)
            ranked = [self.dataset.doc_of[it.record.id] for it in result.items]
            self._note(profile, qid, ranked, relevant, started, trace.degradation_reason)

    def report(self) -> dict[str, Any]:
        """The report: per row the mean metrics, the mean and median latency and how many
        queries degraded (``profiles``, floors first), and every query's entry
        (``per_query``)."""
        report: dict[str, Any] = {
            "k": self.k,
            "documents": len(self.dataset.records),
            "queries": len(self.dataset.queries),
            "profiles": {name: _summary(rows) for name, rows in self.per_query.items()},
            "per_query": self.per_query,
        }
        if self.dense_unavailable is not None:
            report["dense_unavailable"] = self.dense_unavailable
        return report


def _summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One row of the report's table: means over the queries, median latency, degradations."""
    return {
        metric: sum(r[metric] for r in rows) / len(rows)
        for metric in ("recall@k", "ndcg@10", "mrr")
    } | {
        "mean_latency_ms": sum(r["latency_ms"] for r in rows) / len(rows),
        "p50_latency_ms": statistics.median(r["latency_ms"] for r in rows),
        "degraded": sum(1 for r in rows if "degraded" in r),
    }


@contextmanager
def open_run(
    dataset: Dataset,
    *,
    profiles: Sequence[str],
    k: int,
    embedder: Any = None,
    retrieval: Mapping[str, Any] | None = None,
) -> Iterator[DatasetRun]:
    """Load ``dataset`` into a temporary SQLite project configured like a user's (the
    ``retrieval`` keys override it), embed it when a dense profile is asked for (``embedder``,
    else the default ONNX one), and add the porter-stemmed table of the ``bm25-porter``
    floor; everything is removed afterwards."""
    dense = any(p in DENSE_PROFILES for p in profiles)
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
        )
        try:
            parts = _fill_store(runtime, dataset.records, dense=dense)
            connection = _porter_table(runtime, dataset.records)
            try:
                yield DatasetRun(dataset, runtime, connection, parts, profiles=profiles, k=k)
            finally:
                connection.close()
        finally:
            runtime.close()


def _fill_store(
    runtime: Runtime, records: Sequence[MemoryRecord], *, dense: bool
) -> DenseParts | None:
    """Store the memories; with ``dense``, embed them and return the dense parts (``None``
    when they are unavailable)."""
    store = runtime.store
    with store.transaction():
        for record in records:
            store.upsert(record)
    parts = runtime.dense_parts(rerank=False) if dense else None
    if parts is not None:
        embed_records(parts, records)
    return parts


def _porter_table(runtime: Runtime, records: Sequence[MemoryRecord]) -> Any:
    """A connection to the store's file holding the memories in a temporary FTS5 table
    tokenized with ``porter unicode61``."""
    connection = sqlite_connect(runtime.sqlite_path)
    try:
        connection.execute(_PORTER_TABLE_SQL)
        connection.executemany(
            "INSERT INTO temp.dataset_porter_fts (id, text) VALUES (?, ?)",
            [(r.id, r.text) for r in records],
        )
    except BaseException:
        connection.close()
        raise
    return connection


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
) -> dict[str, Any]:
    """Score the floors and every profile on the collection; return a report dict.

    ``profiles`` (the report's ``profiles`` table) lists the floors first: ``fts5-bm25`` and
    ``bm25-porter`` always, ``dense-only`` when a dense profile is asked for and the dense
    parts are available (otherwise ``dense_unavailable`` says why), ``dense-floor`` with it
    when a relevance floor is set (or the fusion is calibrated).
    """
    check_options(profiles, k)
    dataset = read_dataset(corpus_path, queries_path, qrels_path, limit_queries=limit_queries)
    with open_run(dataset, profiles=profiles, k=k, embedder=embedder) as run:
        for n, query in enumerate(dataset.queries, 1):
            relevant = dataset.relevant(str(query["id"]))
            run.score_floors(query, relevant)
            run.score_profiles(query, relevant)
            if progress is not None:
                progress(n, len(dataset.queries))
    return run.report()

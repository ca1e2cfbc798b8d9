"""Dataset runner: file formats, metric arithmetic, and a run on a tiny collection."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from swarmmem.adapters.models.hashing_embedder import HashingEmbedder
from swarmmem.core.model.errors import EvaluationError
from swarmmem.core.model.ids import parse_iso
from swarmmem.datasets import load_qrels, metrics_for, read_dataset, run_dataset

pytest.importorskip("sklearn")


def _write(
    tmp_path: Path, docs: list[dict], queries: list[dict], qrels: str
) -> tuple[Path, Path, Path]:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    qfile = tmp_path / "queries.jsonl"
    qfile.write_text("\n".join(json.dumps(q) for q in queries) + "\n")
    rfile = tmp_path / "qrels.tsv"
    rfile.write_text(qrels)
    return corpus, qfile, rfile


def test_metrics_by_hand() -> None:
    """Recall@k, MRR and nDCG@10 of a small ranking, computed independently."""
    ranked = ["d3", "d1", "d9", "d2"]
    relevant = {"d1": 1.0, "d2": 1.0}
    m = metrics_for(ranked, relevant, k=3)
    assert m["recall@k"] == 0.5
    assert m["mrr"] == 0.5
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    ideal = 1 / math.log2(2) + 1 / math.log2(3)
    assert m["ndcg@10"] == pytest.approx(dcg / ideal)


def test_metrics_of_a_miss_are_zero() -> None:
    """A ranking without relevant documents scores zero everywhere."""
    m = metrics_for(["x", "y"], {"d1": 1.0}, k=2)
    assert m == {"recall@k": 0.0, "ndcg@10": 0.0, "mrr": 0.0}


def test_qrels_header_and_errors(tmp_path: Path) -> None:
    """A header line is skipped; a malformed row names file and line."""
    path = tmp_path / "q.tsv"
    path.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t2\n")
    assert load_qrels(path) == {"q1": {"d1": 1.0, "d2": 2.0}}
    path.write_text("q1\td1\n")
    with pytest.raises(EvaluationError, match=r"q\.tsv:1"):
        load_qrels(path)


def test_malformed_corpus_line_is_reported(tmp_path: Path) -> None:
    """Invalid JSON in the corpus stops the run with the file and line."""
    corpus, queries, qrels = _write(
        tmp_path, [{"id": "d1", "text": "x"}], [{"id": "q1", "text": "x"}], "q1\td1\t1\n"
    )
    corpus.write_text('{"id": "d1", "text": "ok"}\n{oops\n')
    with pytest.raises(EvaluationError, match=r"corpus\.jsonl:2"):
        run_dataset(corpus, queries, qrels)


def test_run_on_tiny_collection(tmp_path: Path) -> None:
    """Lexical and hybrid profiles and bare FTS5 all find the obvious answers."""
    docs = [
        {"id": "auth", "text": "Login sessions are invalidated after a failed password check."},
        {"id": "db", "text": "Database migrations are numbered and never edited after release."},
        {"id": "ci", "text": "The CI pipeline runs ruff, mypy and the pytest suite on every push."},
        {"id": "dup", "text": "Database migrations are numbered and never edited after release."},
    ]
    queries = [
        {"id": "q1", "text": "what happens to sessions after a failed password"},
        {"id": "q2", "text": "are database migrations edited"},
        {"id": "q3", "text": "unjudged query"},
    ]
    corpus, qfile, rfile = _write(tmp_path, docs, queries, "q1\tauth\t1\nq2\tdb\t1\n")
    report = run_dataset(
        corpus,
        qfile,
        rfile,
        profiles=("lexical", "hybrid"),
        k=3,
        embedder=HashingEmbedder(dimension=64),
    )
    assert report["documents"] == 3  # the duplicate text is one memory
    assert report["queries"] == 2
    for name in ("fts5-bm25", "lexical", "hybrid"):
        row = report["profiles"][name]
        assert row["recall@k"] == 1.0, name
        assert row["mrr"] == 1.0, name
        assert row["mean_latency_ms"] >= 0


def test_unknown_profile_is_refused(tmp_path: Path) -> None:
    """Profiles are validated before any work."""
    corpus, queries, qrels = _write(
        tmp_path, [{"id": "d", "text": "x y"}], [{"id": "q", "text": "x"}], "q\td\t1\n"
    )
    with pytest.raises(EvaluationError, match="unknown profile"):
        run_dataset(corpus, queries, qrels, profiles=("magic",))


def test_rows_that_say_when_they_were_written_keep_their_ages(tmp_path: Path) -> None:
    """Dated rows keep their ages, read from the latest of their times and the queries'
    ``asked`` (the files need not be in time order); a repeated text keeps its latest time."""
    docs = [
        {"id": "new", "text": "Deploys run from main.", "written": "2023-05-20T00:00:00Z"},
        {"id": "old", "text": "Tests run on push.", "written": "2023-05-10T00:00:00Z"},
        {"id": "again", "text": "Deploys run from main.", "written": "2023-05-01T00:00:00Z"},
    ]
    queries = [{"id": "q1", "text": "deploys", "asked": "2023-05-30T00:00:00+00:00"}]
    dataset = read_dataset(*_write(tmp_path, docs, queries, "q1\tnew\t1\n"))
    now = parse_iso(dataset.now)
    assert now is not None
    ages = {}
    for record in dataset.records:
        written = parse_iso(record.updated_at)
        assert written is not None
        ages[dataset.doc_of[record.id]] = (now - written).days
    assert ages == {"new": 10, "old": 20}
    assert dataset.kept_as == {"again": "new"}


@pytest.mark.parametrize(
    ("docs", "error"),
    [
        (
            [{"id": "a", "text": "x", "written": "2023-05-20T00:00:00Z"}, {"id": "b", "text": "y"}],
            "corpus b: no written time, while 1 of 2 rows have one",
        ),
        ([{"id": "a", "text": "x", "written": "May 20"}], "corpus a: written must be an ISO"),
    ],
)
def test_written_times_are_all_or_none_and_iso(
    tmp_path: Path, docs: list[dict], error: str
) -> None:
    with pytest.raises(EvaluationError, match=error):
        read_dataset(*_write(tmp_path, docs, [{"id": "q1", "text": "x"}], "q1\ta\t1\n"))

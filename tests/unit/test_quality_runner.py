"""The pure parts of the public-data quality runner: label rules and conversions on tiny
hand-made inputs, and the ``bm25-porter`` and ``dense-only`` floors on tiny corpora. Nothing
is downloaded (the runner's fetching lives in ``benchmarks/quality/``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks.quality import scoring
from benchmarks.quality.conversions import (
    Collection,
    FactIndex,
    convert_fact_consolidation,
    convert_longmemeval,
    convert_memoryeval,
    fact_labels,
    parse_fact_list,
    write_collection,
)
from swarmmem.adapters.models.hashing_embedder import HashingEmbedder
from swarmmem.datasets import PORTER_STOP_WORDS, load_qrels, porter_query, run_dataset

pytest.importorskip("sklearn")

CONTEXT = """Here is a list of facts:
0. The capital of Freedonia is Oldtown.
1. The author of The Long Road is Ann Smith.
2. Ann Smith is married to Bob Jones.
3. Bob Jones is a citizen of Elbonia.
4. Born This Way was performed by Lady Gaga.
5. Born This Way Ball was performed by Lady Gaga.
6. The capital of Freedonia is Newtown.
7. Bob Jones is a citizen of Ruritania.
8. The Mayor of Oldtown is Carla Diaz.
9. Carla Diaz is a citizen of Ruritania.
"""
# a second chain from the author to Ruritania, through a child
AMBIGUOUS = (
    CONTEXT
    + """10. Ann Smith's child is Dan Smith.
11. Dan Smith is a citizen of Ruritania.
"""
)


# ------------------------------------------------------------------- fact consolidation


def test_fact_lines_parse_into_relation_subject_object() -> None:
    """Numbered lines become facts (header skipped); templates split subject and object, the
    office-holder catch-all and the possessive shape included."""
    facts = parse_fact_list(AMBIGUOUS)
    assert [f.number for f in facts] == list(range(12))
    assert (facts[1].relation, facts[1].subject, facts[1].object) == (
        "The author of {s} is {o}.",
        "The Long Road",
        "Ann Smith",
    )
    assert (facts[8].relation, facts[8].subject, facts[8].object) == (
        "The {s} is {o}.",
        "Mayor of Oldtown",
        "Carla Diaz",
    )
    assert (facts[10].subject, facts[10].object) == ("Ann Smith", "Dan Smith")
    odd = parse_fact_list("0. Something without a known shape")[0]
    assert odd.relation is None and odd.text == "Something without a known shape"


def test_single_hop_label_is_the_last_fact_about_subject_and_relation() -> None:
    """A later fact about the same subject and relation overrides an earlier one; an answer
    held only by the overridden fact leaves the question unlabelled."""
    index = FactIndex(parse_fact_list(CONTEXT))
    assert fact_labels(index, "What is the capital of Freedonia?", ["newtown"]) == ([6], None)
    labels, reason = fact_labels(index, "What is the capital of Freedonia?", ["Oldtown"])
    assert labels == [] and reason is not None and "overridden" in reason


def test_single_hop_prefers_the_longest_mentioned_subject() -> None:
    """ "Born This Way" inside "Born This Way Ball" is not a second subject of the question."""
    index = FactIndex(parse_fact_list(CONTEXT))
    assert fact_labels(index, "Who performed Born This Way Ball?", ["Lady Gaga"]) == ([5], None)


def test_multi_hop_label_is_the_chain_of_current_facts() -> None:
    """Author -> spouse -> citizenship, through the current citizenship fact only."""
    index = FactIndex(parse_fact_list(CONTEXT))
    question = "What is the country of citizenship of the spouse of the author of The Long Road?"
    assert fact_labels(index, question, ["Ruritania"], min_hops=2, max_hops=4) == ([1, 2, 7], None)
    labels, reason = fact_labels(index, question, ["Elbonia"], min_hops=2, max_hops=4)
    assert labels == [] and reason is not None


def test_multi_hop_with_two_shortest_chains_is_unlabelled() -> None:
    """Author -> spouse -> Ruritania and author -> child -> Ruritania: ambiguous."""
    index = FactIndex(parse_fact_list(AMBIGUOUS))
    labels, reason = fact_labels(
        index,
        "Which country is linked to the author of The Long Road?",
        ["Ruritania"],
        min_hops=2,
        max_hops=4,
    )
    assert labels == []
    assert reason == "2 chains of 3 facts reach the answer"


def test_fact_consolidation_collection() -> None:
    """Facts become ``f<number>`` documents, questions ``q<n>`` queries with their labels."""
    collection = convert_fact_consolidation(
        "fc_sh_tiny",
        CONTEXT,
        ["What is the capital of Freedonia?", "Who is the mayor of Atlantis?"],
        [["Newtown"], ["Nobody"]],
        multi_hop=False,
    )
    assert collection.corpus[0] == {"id": "f0", "text": "The capital of Freedonia is Oldtown."}
    assert len(collection.corpus) == 10
    assert [q["id"] for q in collection.queries] == ["q000", "q001"]
    assert collection.qrels == {"q000": {"f6": 1.0}}
    assert set(collection.unlabelled) == {"q001"}
    assert collection.labelled == 1


# --------------------------------------------------------------------------- LongMemEval


def _session(sid: str, turns: list[tuple[str, bool]], day: int = 20) -> dict:
    return {
        "id": sid,
        "timestamp": f"2023/05/{day:02d} (Sat) 02:21",
        "turns": [
            {"id": f"{sid}_turn_{i}", "content": text, "metadata": {"has_answer": has}}
            for i, (text, has) in enumerate(turns)
        ],
    }


def _question(qid: str, supporting: list[str]) -> dict:
    return {
        "id": qid,
        "question": f"question {qid}?",
        "ground_truth": {
            "supporting_session_ids": supporting,
            "valid_as_of": "2023/05/30 (Tue) 23:40",
        },
    }


def test_longmemeval_blocks_labels_and_opaque_ids() -> None:
    """Each question owns the sessions up to its last supporting one; has_answer turns are
    relevant; empty turns are skipped; ids do not carry the session names."""
    sessions = [
        _session("chat_a", [("hello there", False), ("", False)]),
        _session("answer_1", [("I graduated in history", True), ("nice", False)]),
        _session("chat_b", [("weather talk", False)]),
        _session("answer_2", [("my commute is long", False)]),
        _session("answer_3", [("I drive 40 minutes", True)]),
    ]
    questions = [_question("qa", ["answer_1"]), _question("qb", ["answer_3", "answer_2"])]
    first, second = convert_longmemeval(questions, sessions)
    assert [d["text"] for d in first.corpus] == ["hello there", "I graduated in history", "nice"]
    assert first.qrels == {"qa": {first.corpus[1]["id"]: 1.0}}
    assert [d["text"] for d in second.corpus] == [
        "weather talk",
        "my commute is long",
        "I drive 40 minutes",
    ]
    assert second.qrels == {"qb": {second.corpus[2]["id"]: 1.0}}
    ids = [d["id"] for c in (first, second) for d in c.corpus]
    assert len(set(ids)) == len(ids)
    assert all(i.startswith("t") and "answer" not in i for i in ids)


def test_longmemeval_turns_keep_their_times_and_the_question_its_date() -> None:
    """The sessions are not in time order in the files: each turn is written at its own time
    (its session's when it has none), the question asked at its ``valid_as_of``."""
    later = _session("answer_1", [("I graduated in history", True)], day=25)
    earlier = _session("chat_a", [("hello there", False)], day=3)
    earlier["turns"][0]["timestamp"] = "2023/05/03 (Wed) 09:05"
    (only,) = convert_longmemeval([_question("qa", ["answer_1"])], [later])
    assert only.corpus[0]["written"] == "2023-05-25T02:21:00.000Z"
    assert only.queries[0]["asked"] == "2023-05-30T23:40:00.000Z"
    first, _ = convert_longmemeval(
        [_question("qa", ["chat_a"]), _question("qb", ["answer_1"])], [earlier, later]
    )
    assert first.corpus[0]["written"] == "2023-05-03T09:05:00.000Z"
    bad = {**earlier, "turns": [{**earlier["turns"][0], "timestamp": "May 3"}]}
    with pytest.raises(ValueError, match="unexpected time"):
        convert_longmemeval([_question("qa", ["chat_a"])], [bad])


def test_longmemeval_question_without_has_answer_is_unlabelled() -> None:
    (only,) = convert_longmemeval(
        [_question("q", ["answer_1"])], [_session("answer_1", [("text", False)])]
    )
    assert only.qrels == {} and "has_answer" in only.unlabelled["q"]


def test_longmemeval_out_of_order_files_are_refused() -> None:
    sessions = [_session("answer_1", [("a", True)]), _session("answer_2", [("b", True)])]
    questions = [_question("q1", ["answer_2"]), _question("q2", ["answer_1"])]
    with pytest.raises(ValueError, match="q2"):
        convert_longmemeval(questions, sessions)


# ---------------------------------------------------------------------------- memoryeval

SCENARIO = {
    "setup": [
        {"write": {"key": "city", "content": "User lives in Paris"}},
        {"write": {"key": "pet", "content": "User has a cat named Max"}},
        {"write": {"key": "old", "content": "User's email is old@example.com"}},
        {"write": {"key": "f1", "content": "User enjoys hiking"}},
        {"write": {"key": "f2", "content": "User likes climbing"}},
        {"write": {"content": "Alice salary is 185,000", "metadata": {"user_id": "alice"}}},
        {"write": {"content": "Bob salary is 145,000", "metadata": {"user_id": "bob"}}},
    ],
    "steps": [
        {"write": {"key": "city", "content": "User moved to London"}},
        {"delete": {"key": "old"}},
        {"consolidate": {"source_keys": ["f1", "f2"], "strategy": "merge"}},
        {"create_session": {"session_id": "s1", "user_id": "dave"}},
        {"add_message": {"session_id": "s1", "role": "user", "content": "Book a window seat"}},
        {"create_session": {"session_id": "s2", "user_id": "eve"}},
        {"add_message": {"session_id": "s2", "role": "user", "content": "Window seat for me"}},
        {"assert_search": {"query": "Where does the user live?", "expected_contains": ["london"]}},
        {"assert_search": {"query": "Pets?", "expected_contains": ["Max"]}},
        {"assert_search": {"query": "email?", "expected_not_contains": ["old@example.com"]}},
        {"assert_search": {"query": "hobbies?", "expected_contains": ["hiking"]}},
        {
            "assert_search": {
                "query": "salary?",
                "filters": {"user_id": "alice"},
                "expected_contains": ["salary"],
            }
        },
        {
            "assert_context": {
                "session_id": "s2",
                "query": "seat?",
                "expected_contains": ["window"],
            }
        },
        {"assert_read": {"key": "pet", "expected_contains": "Max"}},
    ],
}


def test_memoryeval_replay_and_labels() -> None:
    """Replaced, deleted and consolidated writes leave the store; labels are the live memories
    containing an expected string (case-insensitive), within the query's filter or session;
    only-not-contains queries stay unlabelled; reads by key are not queries."""
    c = convert_memoryeval("tiny", SCENARIO)
    text = {d["id"]: d["text"] for d in c.corpus}
    assert sorted(text.values()) == sorted(
        [
            "User moved to London",
            "User has a cat named Max",
            "Alice salary is 185,000",
            "Bob salary is 145,000",
            "User enjoys hiking\nUser likes climbing",
            "Book a window seat",
            "Window seat for me",
        ]
    )
    assert [q["text"] for q in c.queries] == [
        "Where does the user live?",
        "Pets?",
        "email?",
        "hobbies?",
        "salary?",
        "seat?",
    ]

    def relevant(qid: str) -> list[str]:
        return sorted(text[d] for d in c.qrels.get(qid, {}))

    assert relevant("q00") == ["User moved to London"]
    assert relevant("q01") == ["User has a cat named Max"]
    assert relevant("q02") == [] and "expected_not_contains" in c.unlabelled["q02"]
    assert relevant("q03") == ["User enjoys hiking\nUser likes climbing"]
    assert relevant("q04") == ["Alice salary is 185,000"]
    assert relevant("q05") == ["Window seat for me"]


def test_written_collection_reads_back(tmp_path: Path) -> None:
    """The written files are the ``swarmmem dataset`` format."""
    collection = Collection(
        name="x",
        corpus=({"id": "d1", "text": "Ünïcode text"}, {"id": "d2", "text": "other"}),
        queries=({"id": "q1", "text": "unicode?"},),
        qrels={"q1": {"d1": 1.0}},
    )
    corpus, queries, qrels = write_collection(collection, tmp_path / "out")
    rows = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()]
    assert rows[0] == {"id": "d1", "text": "Ünïcode text"}
    assert json.loads(queries.read_text(encoding="utf-8")) == {"id": "q1", "text": "unicode?"}
    assert load_qrels(qrels) == {"q1": {"d1": 1.0}}


# ------------------------------------------------------------------------------ floors


def _dataset(tmp_path: Path, docs: dict[str, str], queries: dict[str, str], qrels: dict) -> tuple:
    collection = Collection(
        name="t",
        corpus=tuple({"id": k, "text": v} for k, v in docs.items()),
        queries=tuple({"id": k, "text": v} for k, v in queries.items()),
        qrels=qrels,
    )
    return write_collection(collection, tmp_path)


def test_porter_query_drops_function_words() -> None:
    assert porter_query("What are the tests of the running suite?") == (
        '"tests" OR "running" OR "suite"'
    )
    assert porter_query("what is it and where?") is None
    assert {"the", "which", "would", "between"} <= PORTER_STOP_WORDS


def test_porter_floor_matches_stems_the_plain_floor_misses(tmp_path: Path) -> None:
    """ "running tests" finds "runs every test" only through stemming; a query of function
    words alone retrieves nothing."""
    paths = _dataset(
        tmp_path,
        {
            "ci": "The suite runs every test on each push.",
            "db": "Database migrations are numbered.",
        },
        {"q1": "running tests", "q2": "what is it and where"},
        {"q1": {"ci": 1.0}, "q2": {"db": 1.0}},
    )
    report = run_dataset(*paths, profiles=("lexical",), k=3)
    porter = {r["query"]: r for r in report["per_query"]["bm25-porter"]}
    plain = {r["query"]: r for r in report["per_query"]["fts5-bm25"]}
    assert porter["q1"]["mrr"] == 1.0
    assert plain["q1"]["mrr"] == 0.0
    assert porter["q2"]["recall@k"] == 0.0
    assert "dense-only" not in report["profiles"]  # no dense profile, no embedding
    row = report["profiles"]["bm25-porter"]
    assert row["p50_latency_ms"] >= 0 and len(report["per_query"]["bm25-porter"]) == 2


def test_dense_only_floor_is_cosine_knn(tmp_path: Path) -> None:
    """The dense-only ranking is the cosine order of the embeddings, with no lexical part: a
    misspelt query that no full-text floor can match still ranks by vector similarity."""
    embedder = HashingEmbedder(dimension=256)
    docs = {
        "mig": "database migrations are numbered",
        "ci": "the ci pipeline runs ruff",
        "auth": "login sessions expire after a failed password",
        "dup": "database migrations are numbered",  # same text: stored once, as "mig"
    }
    query = "databse migratoins"
    vectors = embedder.embed_batch([docs[d] for d in ("mig", "ci", "auth")])
    cosines = vectors @ embedder.embed(query)
    order = [("mig", "ci", "auth")[i] for i in np.argsort(-cosines)]
    assert order[0] == "mig"
    paths = _dataset(
        tmp_path,
        docs,
        {"first": query, "second": query, "dup": query},
        {"first": {order[0]: 1.0}, "second": {order[1]: 1.0}, "dup": {"dup": 1.0}},
    )
    report = run_dataset(*paths, profiles=("hybrid",), k=3, embedder=embedder)
    dense = {r["query"]: r for r in report["per_query"]["dense-only"]}
    assert dense["first"]["mrr"] == 1.0
    assert dense["second"]["mrr"] == 0.5
    assert dense["dup"]["mrr"] == 1.0  # the dropped duplicate's judgement counts for "mig"
    for floor in ("fts5-bm25", "bm25-porter"):
        assert all(r["recall@k"] == 0.0 for r in report["per_query"][floor]), floor
    assert list(report["profiles"]) == [
        "fts5-bm25",
        "bm25-porter",
        "dense-only",
        "dense-floor",
        "hybrid",
    ]
    assert report["documents"] == 3


def test_dense_floor_row_drops_cosines_under_the_relevance_floor(tmp_path: Path) -> None:
    """``dense-floor`` is the dense-only ranking without the cosines under
    ``retrieval.denseFloor``: a relevant document the floor drops is found by ``dense-only``
    (which returns the top k whatever the question) and not by ``dense-floor``."""
    from swarmmem.core.config import RetrievalConfig

    floor = RetrievalConfig().dense_floor
    embedder = HashingEmbedder(dimension=256)
    docs = {
        "mig": "database migrations are numbered",
        "ci": "the ci pipeline runs ruff",
        "auth": "login sessions expire after a failed password",
    }
    query = "ruff pipeline"
    vectors = embedder.embed_batch(list(docs.values()))
    cosines = dict(zip(docs, vectors @ embedder.embed(query), strict=True))
    assert cosines["ci"] >= floor > cosines["mig"]
    paths = _dataset(
        tmp_path, docs, {"near": query, "far": query}, {"near": {"ci": 1.0}, "far": {"mig": 1.0}}
    )
    report = run_dataset(*paths, profiles=("hybrid",), k=3, embedder=embedder)
    only = {r["query"]: r for r in report["per_query"]["dense-only"]}
    kept = {r["query"]: r for r in report["per_query"]["dense-floor"]}
    assert only["near"]["mrr"] == kept["near"]["mrr"] == 1.0
    assert only["far"]["recall@k"] == 1.0
    assert kept["far"]["recall@k"] == 0.0


def test_calibration_replays_the_pipelines_text_relevance(tmp_path: Path) -> None:
    """benchmarks/quality/calibrate.py refits the text factor from the evidence the runner
    records (BM25, held terms, lengths); its replay must give the relevance the pipeline
    gave, long texts (length scaling) included, or the fit would tune another function."""
    from benchmarks.quality.calibrate import text_relevance

    filler = " and the deploy notes mention a staging database backup in passing" * 12
    docs = {
        "short": "The staging database backup runs nightly.",
        "long": "Weekly summary of the platform work" + filler,
        "longer": "Quarterly summary of every deploy" + filler * 2,
        "other": "Migrations are generated by alembic.",
    }
    queries = {"q1": "staging database backup", "q2": "deploy notes", "q3": "alembic migrations"}
    qrels = {"q1": {"short": 1.0}, "q2": {"long": 1.0}, "q3": {"other": 1.0}}
    channels: list[dict] = []
    scoring.run_dataset(
        *_dataset(tmp_path, docs, queries, qrels),
        profiles=("hybrid",),
        embedder=HashingEmbedder(dimension=64),
        channels=channels,
    )
    assert len(channels) == 3
    scaled = 0
    for entry in channels:
        replay = text_relevance(entry)
        assert replay.keys() == entry["lexical"].keys()
        for key, value in entry["lexical"].items():
            assert replay[key] == pytest.approx(value, abs=1e-12), (entry["query"], key)
        unscaled = text_relevance(entry, length_exponent=0.0)
        scaled += any(abs(unscaled[k] - replay[k]) > 1e-9 for k in replay)
    assert scaled  # the long texts were scaled in at least one query


def test_an_unavailable_embedder_leaves_out_the_dense_rows(tmp_path: Path) -> None:
    """Without usable dense parts the report says why and has no dense-only or dense-floor
    row; the hybrid profile degrades to the lexical path instead of failing."""

    class Unavailable(HashingEmbedder):
        available = False
        unavailable_reason = "no model here"

    paths = _dataset(tmp_path, {"a": "ruff checks the style"}, {"q": "ruff"}, {"q": {"a": 1.0}})
    report = run_dataset(*paths, profiles=("hybrid",), embedder=Unavailable(dimension=16))
    assert "no model here" in report["dense_unavailable"]
    assert list(report["profiles"]) == ["fts5-bm25", "bm25-porter", "hybrid"]
    assert report["per_query"]["hybrid"][0]["mrr"] == 1.0


def test_foreign_queries_are_counted_per_row(tmp_path: Path) -> None:
    """Foreign queries (relevant to nothing in the store) tell how often each row answers
    anyway: a query sharing no word gets nothing from the lexical rows, one sharing a word
    gets its matches."""
    docs = {"ci": "the ci pipeline runs ruff", "db": "database migrations are numbered"}
    paths = _dataset(tmp_path, docs, {"q": "ruff"}, {"q": {"ci": 1.0}})
    asked = ["quantum banana spaceship", "which ruff release do we pin"]
    report = scoring.run_dataset(*paths, profiles=("lexical",), foreign_queries=asked)
    expected = {"queries": 2, "answered": 1, "items": 1}
    assert report["foreign"] == {"bm25-porter": expected, "lexical": expected}
    assert "q" in {r["query"] for r in report["per_query"]["lexical"]}  # labelled ones as before

    dense = scoring.run_dataset(
        *paths, profiles=("hybrid",), embedder=HashingEmbedder(dimension=64), foreign_queries=asked
    )
    assert set(dense["foreign"]) == {"bm25-porter", "dense-floor", "hybrid"}
    for tally in dense["foreign"].values():
        assert tally["queries"] == 2 and 0 <= tally["answered"] <= 2
        assert tally["items"] >= tally["answered"]
    assert "foreign" not in scoring.run_dataset(*paths, profiles=("lexical",))


def test_the_benchmark_runner_scores_as_the_library_does(tmp_path: Path) -> None:
    """Without foreign queries, channels or overrides, the benchmarks' runner gives the
    library's report (latencies aside): the same rows, documents, queries and metrics."""
    docs = {"ci": "the ci pipeline runs ruff", "db": "database migrations are numbered"}
    paths = _dataset(
        tmp_path, docs, {"q": "ruff", "r": "migrations"}, {"q": {"ci": 1.0}, "r": {"db": 1.0}}
    )
    embedder = HashingEmbedder(dimension=64)

    def metrics(report: dict) -> dict:
        return {
            name: [{m: row[m] for m in ("query", "recall@k", "ndcg@10", "mrr")} for row in rows]
            for name, rows in report["per_query"].items()
        }

    ours = run_dataset(*paths, profiles=("lexical", "hybrid"), embedder=embedder)
    theirs = scoring.run_dataset(*paths, profiles=("lexical", "hybrid"), embedder=embedder)
    assert list(theirs) == list(ours)
    assert metrics(theirs) == metrics(ours)
    assert (theirs["documents"], theirs["queries"], theirs["k"]) == (2, 2, 10)


def test_code_memory_distractors_are_reproducible_code_facts() -> None:
    """The code-memory runner's distractors: the same draw every time, each a docstring
    sentence citing its standard-library file and symbol, in the kinds a user stores."""
    from benchmarks.quality.code_memory import distractors

    first = distractors(200)
    assert first == distractors(200)
    assert len({d["text"] for d in first}) == 200
    for row in first:
        assert row["text"].startswith(f"{row['symbol']} in {row['files'][0]}: ")
        assert row["files"][0].endswith(".py") and not row["symbol"].startswith("_")
        assert 40 <= len(row["text"].split(": ", 1)[1]) <= 300
    assert len({d["kind"] for d in first}) == 4
    assert distractors(200, seed=1) != first


def test_code_memory_runner_scores_files_symbols_and_unrelated_questions(tmp_path: Path) -> None:
    """A set written by the runner reaches the store with its kinds, files and symbols (a
    named file finds its memory), and the summary counts top-1 and unrelated answers."""
    from benchmarks.quality.code_memory import summarise, write_set

    memories = [
        {
            "id": "m1",
            "kind": "code_pattern",
            "text": "Spinner frames refresh on every tick",
            "evidence": ["spinner.py"],
            "symbol": "Spinner.render",
        },
        {
            "id": "m2",
            "kind": "project_fact",
            "text": "Tables measure cells before layout",
            "evidence": ["table.py"],
            "symbol": None,
        },
    ]
    queries = [
        {"id": "q1", "query": "what should I know before editing spinner.py", "gold": "m1"},
        {"id": "q2", "query": "how are cells measured", "gold": "m2"},
    ]
    report = scoring.run_dataset(
        *write_set(tmp_path / "set", memories, queries),
        profiles=("lexical",),
        foreign_queries=["zzqx.py", "quantum banana spaceship"],
    )
    table = summarise(report)
    assert table["lexical"]["top1"] == 1.0 and table["lexical"]["mrr@10"] == 1.0
    assert table["lexical"]["unrelated_answered"] == 0.0
    assert table["bm25-porter"]["top1"] <= 1.0
    lines = (tmp_path / "set" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    corpus = [json.loads(line) for line in lines]
    assert corpus[0] == {
        "id": "m1",
        "text": memories[0]["text"],
        "kind": "code_pattern",
        "files": ["spinner.py"],
        "symbol": "Spinner.render",
    }


def test_dataset_rows_refuse_an_unknown_kind(tmp_path: Path) -> None:
    from swarmmem.core.model.errors import EvaluationError

    paths = _dataset(tmp_path, {"a": "text a"}, {"q": "text"}, {"q": {"a": 1.0}})
    rows = [json.loads(line) for line in paths[0].read_text(encoding="utf-8").splitlines()]
    paths[0].write_text("".join(json.dumps({**r, "kind": "gossip"}) + "\n" for r in rows))
    with pytest.raises(EvaluationError, match="unknown kind"):
        run_dataset(*paths)


def test_late_interaction_forms_keep_what_a_store_would_give_back() -> None:
    """The stored forms of token vectors: ``float32`` unchanged, ``int8`` within half a step
    of its per-token scale, 1 bit the sign pattern at unit norm; MaxSim of a text with itself
    is 1 and a query token's best match counts once."""
    from benchmarks.quality.late_interaction import maxsim, metrics, stored

    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(7, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    assert np.array_equal(stored(vectors, "float32"), vectors)
    steps = np.abs(vectors).max(axis=1, keepdims=True) / 127.0
    assert np.all(np.abs(stored(vectors, "int8") - vectors) <= steps / 2 + 1e-7)
    bits = stored(vectors, "1-bit")
    assert np.array_equal(bits > 0, vectors >= 0)
    assert np.allclose(np.linalg.norm(bits, axis=1), 1.0)
    assert maxsim(vectors, vectors) == pytest.approx(1.0)
    assert maxsim(vectors[:1], vectors) == pytest.approx(1.0)
    assert maxsim(vectors[:0], vectors) == 0.0
    assert metrics(["a", "b", "c"], "b") == pytest.approx((0.5, 1 / np.log2(3)))
    assert metrics(["x"] * 10 + ["b"], "b") == (0.0, 0.0)


def test_dense_ceiling_keeps_only_rules_that_leave_other_topics_alone() -> None:
    """The ceiling's rule injects no other-topic question; a paraphrase whose nearest memory
    is its own counts only when that rule fires on it."""
    from benchmarks.quality.dense_ceiling import Nearest, ceiling

    def row(name: str, label: str, gold: bool, cosine: float, lead: float) -> Nearest:
        return Nearest(name, "alone", label, gold, cosine, lead, lead)

    rows = [
        row("rich", "paraphrase", True, 0.50, 0.30),  # stands out: reachable
        row("rich", "paraphrase", True, 0.30, 0.05),  # as weak as the unrelated one: not
        row("rich", "paraphrase", False, 0.60, 0.30),  # its nearest is another memory
        row("rich", "other topic", False, 0.40, 0.10),
        row("attrs", "paraphrase", True, 0.45, 0.25),
        row("attrs", "other topic", False, 0.35, 0.08),
        row("jsonschema", "paraphrase", False, 0.20, 0.00),
    ]
    rule, hits, per_set = ceiling(rows)
    assert rule is not None
    assert not any(
        r.cosine >= rule[0] and r.lead >= rule[1] for r in rows if r.label == "other topic"
    )
    assert hits == per_set == {"rich": 1 / 3, "attrs": 1.0, "jsonschema": 0.0}

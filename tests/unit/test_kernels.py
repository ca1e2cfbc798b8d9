"""Behaviour of the ``_speedups`` kernels, run once per implementation (``py``, ``compiled``)."""

from __future__ import annotations

from array import array

import pytest

K = 60.0

# One stored memory, with every field and boost set.
CANDIDATE = {
    "text": "Run tests with pytest -q",
    "tags": "testing ci",
    "files": "pyproject.toml tests/conftest.py",
    "symbols": "run_tests",
    "kinds": "repo convention",
    "refs": "docs/run.md",
    "scope": 0.8,
    "kind_boost": 0.5,
    "role": 1.0,
    "confidence": 0.9,
}


def _score_one(kernels, query, *, task=None, task_as_query=False, **fields):
    """Score a single candidate whose fields default to empty strings and zero boosts."""
    texts = [fields.get("text", "")]
    tags = [fields.get("tags", "")]
    files = [fields.get("files", "")]
    symbols = [fields.get("symbols", "")]
    kinds = [fields.get("kinds", "")]
    refs = [fields.get("refs", "")]
    boosts = [[fields.get(name, 0.0)] for name in ("scope", "kind_boost", "role", "confidence")]
    rows = kernels.lexical.score_lexical(
        query, task, task_as_query, texts, tags, files, symbols, kinds, refs, *boosts
    )
    assert len(rows) == 1
    return rows[0]


class TestReciprocalRankFusion:
    def test_scores_follow_the_weighted_formula(self, kernels):
        """Each id scores the sum over channels of weight / (k + 1-based rank)."""
        ids, scores = kernels.fusion.rrf_fuse([["a", "b", "c"], ["b", "a"]], [0.5, 0.4], K)
        expected = {
            "a": 0.5 / (K + 1) + 0.4 / (K + 2),
            "b": 0.5 / (K + 2) + 0.4 / (K + 1),
            "c": 0.5 / (K + 3),
        }
        assert ids == ["a", "b", "c"]
        assert scores == pytest.approx([expected[i] for i in ids], rel=1e-15)

    def test_weights_decide_between_channels(self, kernels):
        """A heavier channel's first id outranks a lighter channel's first id."""
        ids, scores = kernels.fusion.rrf_fuse([["x"], ["y"]], [0.1, 0.9], K)
        assert ids == ["y", "x"]
        assert scores == pytest.approx([0.9 / (K + 1), 0.1 / (K + 1)], rel=1e-15)

    def test_k_shifts_the_rank_denominator(self, kernels):
        """With k = 0 an id at rank r contributes weight / r."""
        ids, scores = kernels.fusion.rrf_fuse([["a", "b", "c", "d"]], [1.0], 0.0)
        assert ids == ["a", "b", "c", "d"]
        assert scores == pytest.approx([1.0, 1 / 2, 1 / 3, 1 / 4], rel=1e-15)

    def test_duplicate_in_a_channel_counts_once_at_its_first_rank(self, kernels):
        """A repeated id keeps its first rank and does not push later ids down."""
        ids, scores = kernels.fusion.rrf_fuse([["a", "a", "b", "a"]], [1.0], K)
        assert ids == ["a", "b"]
        assert scores == pytest.approx([1 / (K + 1), 1 / (K + 2)], rel=1e-15)

    def test_empty_channels_contribute_nothing(self, kernels):
        """An empty channel adds no ids and leaves the other channels' scores unchanged."""
        ids, scores = kernels.fusion.rrf_fuse([[], ["a"], []], [0.5, 0.4, 0.1], K)
        assert ids == ["a"]
        assert scores == pytest.approx([0.4 / (K + 1)], rel=1e-15)

    @pytest.mark.parametrize("rankings", [[], [[]], [[], []]], ids=["none", "one", "two"])
    def test_no_ids_fuse_to_empty_lists(self, kernels, rankings):
        """Fusing channels that hold no ids returns two empty lists."""
        assert kernels.fusion.rrf_fuse(rankings, [1.0] * len(rankings), K) == ([], [])

    def test_ties_break_by_id_ascending(self, kernels):
        """Equal scores are ordered by id in code-point order."""
        ids, scores = kernels.fusion.rrf_fuse(
            [["b", "a"], ["a", "b"], ["B"], ["c"]], [1, 1, 2, 2], K
        )
        assert ids == ["B", "c", "a", "b"]
        assert scores[0] == scores[1]
        assert scores[2] == scores[3]

    def test_score_outranks_id_order(self, kernels):
        """A higher score comes first even when its id sorts later."""
        ids, _ = kernels.fusion.rrf_fuse([["z", "a"]], [1.0], K)
        assert ids == ["z", "a"]

    def test_accepts_tuples_and_integer_weights(self, kernels):
        """Any sequences work as channels and weights; integer weights act as floats."""
        ids, scores = kernels.fusion.rrf_fuse((("a", "b"),), (2,), 60)
        assert ids == ["a", "b"]
        assert scores == pytest.approx([2 / 61, 2 / 62], rel=1e-15)

    @pytest.mark.parametrize(
        ("n_rankings", "n_weights"), [(1, 2), (2, 1), (0, 1)], ids=["fewer", "more", "none"]
    )
    def test_length_mismatch_is_rejected(self, kernels, n_rankings, n_weights):
        """Rankings and weights of different lengths raise the same message in both twins."""
        message = f"rrf_fuse: got {n_rankings} rankings but {n_weights} weights"
        with pytest.raises(ValueError, match=f"^{message}$"):
            kernels.fusion.rrf_fuse([["a"]] * n_rankings, [1.0] * n_weights, K)

    @pytest.mark.parametrize(
        "k", [-1.0, -0.5, float("nan")], ids=["minus-one", "minus-half", "nan"]
    )
    def test_negative_or_nan_k_is_rejected(self, kernels, k):
        """A k that is not a non-negative number raises the same message in both twins."""
        with pytest.raises(ValueError, match=r"^rrf_fuse: k must be >= 0, got "):
            kernels.fusion.rrf_fuse([["a"]], [1.0], k)


class TestReciprocalRankFusionOfIntegerIds:
    def test_same_scores_and_order_as_string_ids(self, kernels):
        """Integer ids numbered in string order fuse exactly like the string ids."""
        rankings = [["b", "a", "d"], ["a", "c"], ["d", "d", "b"]]
        names = sorted({doc for r in rankings for doc in r})
        index = {name: i for i, name in enumerate(names)}
        as_ints = [array("q", [index[doc] for doc in r]) for r in rankings]
        ids, scores = kernels.fusion.rrf_fuse_ids(as_ints, [0.5, 0.4, 0.1], K, len(names))
        expected_ids, expected_scores = kernels.fusion.rrf_fuse(rankings, [0.5, 0.4, 0.1], K)
        assert [names[i] for i in ids] == expected_ids
        assert list(scores) == expected_scores

    def test_returns_typed_arrays(self, kernels):
        """Ids come back as ``array('q')`` and scores as ``array('d')``."""
        ids, scores = kernels.fusion.rrf_fuse_ids([[2, 0]], [1.0], K, 3)
        assert (ids.typecode, scores.typecode) == ("q", "d")
        assert list(ids) == [2, 0]
        assert list(scores) == pytest.approx([1 / (K + 1), 1 / (K + 2)], rel=1e-15)

    def test_ties_break_by_smaller_id(self, kernels):
        """Equal scores are ordered by id ascending; a duplicate counts at its first rank."""
        ids, scores = kernels.fusion.rrf_fuse_ids([[5, 5, 1], [1, 5]], [1.0, 1.0], K, 6)
        assert list(ids) == [1, 5]
        assert scores[0] == scores[1]

    def test_untouched_ids_are_left_out(self, kernels):
        """Only ids that some channel ranks appear; no channels give empty arrays."""
        assert [list(x) for x in kernels.fusion.rrf_fuse_ids([[3]], [1.0], K, 10)] == [
            [3],
            [1 / (K + 1)],
        ]
        assert [list(x) for x in kernels.fusion.rrf_fuse_ids([], [], K, 10)] == [[], []]

    @pytest.mark.parametrize("bad", [-1, 4, 2**40], ids=["negative", "n_ids", "huge"])
    def test_id_outside_the_range_is_rejected(self, kernels, bad):
        """An id outside ``range(n_ids)`` raises the same message in both twins."""
        with pytest.raises(ValueError, match=rf"^rrf_fuse_ids: id {bad} is outside range\(4\)$"):
            kernels.fusion.rrf_fuse_ids([[0, 1], [2, bad]], [1.0, 1.0], K, 4)

    def test_checks_like_the_string_version(self, kernels):
        """Length mismatch, a negative k and a negative ``n_ids`` are rejected."""
        with pytest.raises(ValueError, match=r"^rrf_fuse: got 1 rankings but 2 weights$"):
            kernels.fusion.rrf_fuse_ids([[0]], [1.0, 1.0], K, 1)
        with pytest.raises(ValueError, match=r"^rrf_fuse: k must be >= 0, got -1.0$"):
            kernels.fusion.rrf_fuse_ids([[0]], [1.0], -1.0, 1)
        with pytest.raises(ValueError, match=r"^rrf_fuse_ids: n_ids must be >= 0, got -1$"):
            kernels.fusion.rrf_fuse_ids([], [], K, -1)


class TestTokenize:
    @pytest.mark.parametrize(
        ("text", "tokens"),
        [
            ("", set()),
            ("   \t\n", set()),
            ("Hello WORLD hello", {"hello", "world"}),
            ("query-signal -x- - --", {"query-signal", "-x-", "-", "--"}),
            ("_internals snake_case __", {"_internals", "snake_case", "__"}),
            (
                "src/memory/scoring.ts: run(); a,b!c?d",
                {"src", "memory", "scoring", "ts", "run"} | {"a", "b", "c", "d"},
            ),
            ("v2 3.14 x86_64", {"v2", "3", "14", "x86_64"}),
            ("café naïve über", {"caf", "na", "ve", "ber"}),
            ("日本語 テスト", set()),
            ("a\u00a0b\u3000c\u2028d", {"a", "b", "c", "d"}),
            ("İstanbul", {"i", "stanbul"}),
            ("\u212aelvin 5\u212a", {"kelvin", "5k"}),
            ("straße ǅemal", {"stra", "e", "emal"}),
        ],
        ids=[
            "empty",
            "whitespace",
            "case",
            "hyphens",
            "underscores",
            "punctuation",
            "digits",
            "accented",
            "cjk",
            "unicode-spaces",
            "dotted-capital-i",
            "kelvin-sign",
            "other-letters",
        ],
    )
    def test_tokens_are_ascii_word_and_hyphen_runs(self, kernels, text, tokens):
        """Lower-cased runs of ASCII letters, digits, '_' and '-' are the tokens."""
        result = kernels.lexical.tokenize(text)
        assert isinstance(result, frozenset)
        assert result == tokens

    @pytest.mark.parametrize(
        ("text", "found", "decoys"),
        [
            ("query-signal", ["query-signal"], ["query", "signal"]),
            ("src/memory/scoring.ts", ["src", "memory", "scoring", "ts"], ["scoring-ts"]),
            ("café", ["caf"], ["cafe"]),
            ("İstanbul", ["i", "stanbul"], ["istanbul"]),
            ("\u212aelvin", ["kelvin"], ["elvin", "k"]),
            ("RUN_Tests!", ["run_tests"], ["run", "tests"]),
        ],
        ids=["hyphen", "path", "accent", "dotted-capital-i", "kelvin-sign", "case"],
    )
    def test_scorer_sees_the_tokenizer_tokens(self, kernels, text, found, decoys):
        """The scorer's field scan finds exactly the tokens that ``tokenize`` yields."""
        query = " ".join(found + decoys)
        assert kernels.lexical.tokenize(text) == frozenset(found)
        row = _score_one(kernels, query, text=text, tags=text, files=text, symbols=text)
        share = len(found) / (len(found) + len(decoys))
        assert row[:4] == (share, share, share, share)


class TestScoreLexical:
    def test_weights_are_the_reference_weights(self, kernels):
        """The nine weights are the reference ones, summing to 1.13."""
        assert kernels.lexical.WEIGHTS == (0.38, 0.16, 0.12, 0.08, 0.08, 0.12, 0.06, 0.05, 0.08)
        assert sum(kernels.lexical.WEIGHTS) == pytest.approx(1.13)

    def test_overlaps_and_base_by_hand(self, kernels):
        """Signals are query-normalised overlaps and base is the nine-factor weighted sum."""
        # Q = {run, the, tests}; task tokens = {fix, the, flaky, tests, in, ci}.
        row = _score_one(kernels, "Run the tests", task="fix the flaky tests in CI", **CANDIDATE)
        text, tag, file, symbol, kind_q, task_term, base = row
        assert (text, tag, file, symbol, kind_q) == (2 / 3, 0.0, 1 / 3, 0.0, 0.0)
        assert task_term == 2 / 6  # tests (text, files) and ci (tags) out of six task tokens
        expected = (
            0.38 * (2 / 3)
            + 0.12 * (1 / 3)
            + 0.08 * (1 / 3)
            + 0.12 * 0.8
            + 0.06 * 0.5
            + 0.05 * 1.0
            + 0.08 * 0.9
        )
        assert base == pytest.approx(expected, rel=1e-12)
        assert base == pytest.approx(0.568, rel=1e-12)

    def test_task_as_query_puts_task_tokens_on_the_query_side(self, kernels):
        """In task-as-query mode the task tokens replace the query tokens."""
        row = _score_one(
            kernels,
            "Run the tests",
            task="fix the flaky tests in CI",
            task_as_query=True,
            **CANDIDATE,
        )
        assert row[:6] == (1 / 6, 1 / 6, 1 / 6, 0.0, 0.0, 2 / 6)

    def test_task_as_query_without_task_keeps_the_query(self, kernels):
        """Task-as-query with no task scores the query and leaves the task term at zero."""
        row = _score_one(kernels, "Run the tests", task_as_query=True, **CANDIDATE)
        assert row[:6] == (2 / 3, 0.0, 1 / 3, 0.0, 0.0, 0.0)

    def test_without_task_the_task_term_is_zero(self, kernels):
        """No task means a zero task-term signal and no task weight in base."""
        row = _score_one(kernels, "tests", text="tests", confidence=0.5)
        assert row == (1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.38 + 0.08 * 0.5)

    def test_duplicate_tokens_count_once(self, kernels):
        """Overlap counts distinct query tokens found, whatever the repetitions."""
        row = _score_one(kernels, "tests tests run", text="tests Tests TESTS tests")
        assert row[0] == 1 / 2

    def test_kind_signal_is_reported_but_not_weighted(self, kernels):
        """A query matching only the kind gives a kind signal and no base contribution."""
        row = _score_one(kernels, "convention", kinds="repo convention")
        assert row == (0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0)

    def test_rows_name_their_fields(self, kernels):
        """Each row is the twin's LexicalRow: its signals and base score read by name."""
        row = _score_one(kernels, "pytest tests", **CANDIDATE)
        assert type(row) is kernels.lexical.LexicalRow
        assert row._fields == ("text", "tag", "file", "symbol", "kind_query", "task_term", "base")
        assert (row.text, row.tag, row.base) == (row[0], row[1], row[6])

    def test_refs_count_only_for_the_task_term(self, kernels):
        """The source ref feeds the task term but none of the query signals."""
        row = _score_one(kernels, "docs", task="docs", refs="docs/run.md")
        assert row == (0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.08)

    def test_empty_query_scores_only_the_boosts(self, kernels):
        """An empty query yields zero overlaps and a base made of the boosts alone."""
        row = _score_one(
            kernels, "", text="anything", scope=1.0, kind_boost=1.0, role=1.0, confidence=1.0
        )
        assert row[:6] == (0.0,) * 6
        assert row[6] == pytest.approx(0.12 + 0.06 + 0.05 + 0.08, rel=1e-15)

    def test_empty_task_gives_zero_task_term(self, kernels):
        """A task without tokens gives a zero task term, also in task-as-query mode."""
        assert _score_one(kernels, "run", task="", text="run")[:6] == (1.0, 0, 0, 0, 0, 0)
        assert (
            _score_one(kernels, "run", task="?!", task_as_query=True, text="run")[:6] == (0.0,) * 6
        )

    def test_one_row_per_candidate_in_input_order(self, kernels):
        """Rows come back one per candidate, in the order given."""
        texts = ["alpha", "beta gamma", "", "gamma"]
        n = len(texts)
        rows = kernels.lexical.score_lexical(
            "gamma alpha", None, False, texts, *([""] * n,) * 5, *([0.0] * n,) * 4
        )
        assert [row[0] for row in rows] == [0.5, 0.5, 0.0, 0.5]
        assert [row[6] for row in rows] == [0.38 * 0.5, 0.38 * 0.5, 0.0, 0.38 * 0.5]

    def test_no_candidates_gives_no_rows(self, kernels):
        """Scoring zero candidates returns an empty list."""
        assert kernels.lexical.score_lexical("q", "t", False, *([],) * 10) == []

    @pytest.mark.parametrize("short", range(10), ids=lambda i: f"column{i}")
    def test_column_length_mismatch_is_rejected(self, kernels, short):
        """Any candidate column of the wrong length raises the same message in both twins."""
        columns = [["x", "y"]] * 6 + [[0.0, 0.0]] * 4
        columns[short] = columns[short][:1]
        message = "score_lexical: every candidate column must have the same length"
        with pytest.raises(ValueError, match=f"^{message}$"):
            kernels.lexical.score_lexical("x", None, False, *columns)


class TestJaccard:
    @pytest.mark.parametrize(
        ("source", "candidate", "expected"),
        [
            ("a b c", "b c d", 2 / 4),
            ("run the tests", "Run THE tests!", 1.0),
            ("alpha beta", "gamma delta", 0.0),
            ("", "", 0.0),
            ("", "alpha", 0.0),
            ("alpha alpha beta", "beta alpha", 1.0),
            ("query-signal", "query signal", 0.0),
            ("café", "caf", 1.0),
            ("one two three", "three", 1 / 3),
        ],
        ids=[
            "partial",
            "case-and-punctuation",
            "disjoint",
            "both-empty",
            "one-empty",
            "duplicates",
            "hyphen-joins",
            "non-ascii-separates",
            "subset",
        ],
    )
    def test_jaccard_of_token_sets(self, kernels, source, candidate, expected):
        """Similarity is |A ∩ B| / |A ∪ B| over token sets, 0 when both are empty."""
        assert kernels.jaccard.jaccard_many(source, [candidate]) == [expected]

    def test_one_value_per_candidate_in_order(self, kernels):
        """Each candidate gets its own similarity, in the order given."""
        result = kernels.jaccard.jaccard_many("a b", ["a", "b c", "a b", "z", ""])
        assert result == [1 / 2, 1 / 3, 1.0, 0.0, 0.0]

    def test_no_candidates_give_no_values(self, kernels):
        """An empty candidate list returns an empty list."""
        assert kernels.jaccard.jaccard_many("a b", []) == []

    @pytest.mark.parametrize("length", [1, 6, 7, 8, 9, 15, 70])
    def test_tokens_across_block_edges(self, kernels, length):
        """Tokens that start, end or run across a 64-character block edge are whole tokens."""
        for offset in range(50, 70):
            token = "Ab_-9xyZ" * 9
            text = "." * offset + token[:length] + ". tail" * (offset % 2)
            assert kernels.jaccard.jaccard_many(text, [token[:length].lower()]) == [
                1 / (1 + offset % 2)
            ]
            assert len(kernels.jaccard.token_keys(text)) == 1 + offset % 2

    def test_candidate_with_many_tokens(self, kernels):
        """A candidate of more distinct tokens than the source is counted exactly."""
        source = "w0 w1 w2"
        many = " ".join(f"w{i}" for i in range(500))
        assert kernels.jaccard.jaccard_many(source, ["w1", many, "w2 w0"]) == [
            1 / 3,
            3 / 500,
            2 / 3,
        ]

    def test_symmetric(self, kernels):
        """Swapping source and candidate leaves the similarity unchanged."""
        a, b = "src/memory/scoring.ts tests", "tests scoring lint"
        assert kernels.jaccard.jaccard_many(a, [b]) == kernels.jaccard.jaccard_many(b, [a])


class TestJaccardKeys:
    def test_short_tokens_are_their_own_bytes(self, kernels):
        """A token of up to 7 characters is its ASCII bytes read big-endian."""
        keys = kernels.jaccard.token_keys("Run TESTS run")
        assert keys.typecode == "Q"
        assert list(keys) == sorted(
            [int.from_bytes(b"run", "big"), int.from_bytes(b"tests", "big")]
        )

    def test_long_tokens_are_hashed_with_the_top_bit_set(self, kernels):
        """A longer token's key is its FNV-1a 64-bit hash with bit 63 set."""
        h = 0xCBF29CE484222325
        for byte in b"token-refresh":
            h = ((h ^ byte) * 0x100000001B3) % 2**64
        assert list(kernels.jaccard.token_keys("token-refresh")) == [h | 1 << 63]
        assert list(kernels.jaccard.token_keys("exactly7 exactly")) == sorted(
            [kernels.jaccard.token_keys("exactly7")[0], int.from_bytes(b"exactly", "big")]
        )
        assert kernels.jaccard.token_keys("exactly7")[0] >> 63 == 1

    def test_keys_are_sorted_and_unique(self, kernels):
        """Repeated tokens give one key; keys come sorted ascending."""
        keys = list(kernels.jaccard.token_keys("z a z b a snake_case_name snake_case_name"))
        assert keys == sorted(set(keys))
        assert len(keys) == 4

    def test_empty_and_token_free_texts_have_no_keys(self, kernels):
        """Texts without ``[a-z0-9_-]`` runs give an empty array."""
        assert list(kernels.jaccard.token_keys("")) == []
        assert list(kernels.jaccard.token_keys("日本語 ...")) == []

    def test_jaccard_keys_equals_jaccard_many(self, kernels):
        """Comparing key arrays gives the same similarities as comparing the texts."""
        source = "Run the FTS5 migration before the token-refresh tests"
        texts = ["run tests", "", "token-refresh migration fts5 before the run", "日本", source]
        keys = [kernels.jaccard.token_keys(t) for t in texts]
        result = kernels.jaccard.jaccard_keys(kernels.jaccard.token_keys(source), keys)
        assert result.typecode == "d"
        assert list(result) == kernels.jaccard.jaccard_many(source, texts)
        assert result[4] == 1.0
        assert result[1] == 0.0

    def test_jaccard_keys_accepts_plain_sequences(self, kernels):
        """Sorted lists of ints work as key sets too."""
        assert list(kernels.jaccard.jaccard_keys([1, 2, 3], [[2, 3, 4], [], [9]])) == [
            2 / 4,
            0.0,
            0.0,
        ]
        assert list(kernels.jaccard.jaccard_keys([], [[]])) == [0.0]

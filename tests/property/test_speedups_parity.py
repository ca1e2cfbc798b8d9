"""Hypothesis parity of the ``_speedups`` kernels.

Each compiled kernel must return exactly what its pure twin returns (ids, order and floats:
the twins sum in the same order, so no tolerance is needed), and the tokenizer of both twins
must equal a naive transcription of the reference definition
``text.toLowerCase().replace(/[^\\w\\s-]/g, ' ').split(/\\s+/)`` (ASCII ``\\w``).
"""

from __future__ import annotations

import importlib
import os
import string

import pytest

pytest.importorskip("hypothesis")

from hypothesis import example, given, settings
from hypothesis import strategies as st

from swarmmem._speedups import _fusion_py, _jaccard_py, _lexical_py

NO_EXTENSIONS = os.environ.get("SWARMMEM_NO_EXTENSIONS") == "1"


def compiled(test):
    """Mark ``test`` ``compiled`` (``--no-compiled`` deselects it) and skip it under
    SWARMMEM_NO_EXTENSIONS=1."""
    skip = pytest.mark.skipif(NO_EXTENSIONS, reason="SWARMMEM_NO_EXTENSIONS=1")
    return pytest.mark.compiled(skip(test))


def _compiled(kernel: str):
    """Import the compiled module of ``kernel`` (an ImportError here is a failure)."""
    return importlib.import_module(f"swarmmem._speedups._{kernel}_c")


def _lexical_twins_agree(function: str, *args):
    """Call ``function`` of the compiled lexical kernel and of its pure twin with ``args``;
    assert both return the same, and return the compiled kernel's answer."""
    found = getattr(_compiled("lexical"), function)(*args)
    assert found == getattr(_lexical_py, function)(*args)
    return found


# --- naive reference tokenizer ---------------------------------------------------------------

# JavaScript \s: WhiteSpace (TAB, VT, FF, ZWNBSP, every Zs space) and LineTerminator.
JS_SPACE = frozenset(
    "\t\n\v\f\r \u00a0\u1680\u202f\u205f\u3000\ufeff\u2028\u2029"
    + "".join(chr(cp) for cp in range(0x2000, 0x200B))
)
JS_WORD = frozenset(string.ascii_letters + string.digits + "_")


def reference_tokenize(text: str) -> frozenset[str]:
    """Transcribe the reference tokenizer step by step (Python's ``lower`` is JS's mapping)."""
    lowered = text.lower()
    replaced = "".join(
        ch if ch in JS_WORD or ch in JS_SPACE or ch == "-" else " " for ch in lowered
    )
    pieces = [""]
    for ch in replaced:
        if ch in JS_SPACE:
            pieces.append("")
        else:
            pieces[-1] += ch
    return frozenset(piece for piece in pieces if piece)


def reference_overlap(query: frozenset[str], field: frozenset[str]) -> float:
    """Reference overlap: share of query tokens found in the field, 0 if either is empty."""
    if not query or not field:
        return 0.0
    return len([token for token in query if token in field]) / max(len(query), 1)


def reference_score(query, task, task_as_query, candidate):
    """Score one candidate with the reference formulas and the naive tokenizer."""
    text, tags, files, symbols, kinds, refs, scope, kind_boost, role, confidence = candidate
    task_tokens = reference_tokenize(task) if task is not None else None
    q = task_tokens if task_as_query and task_tokens is not None else reference_tokenize(query)
    sets = [reference_tokenize(field) for field in (text, tags, files, symbols, kinds, refs)]
    t, g, f, s, k = (reference_overlap(q, field) for field in sets[:5])
    if task_tokens is not None:
        task_term = reference_overlap(task_tokens, frozenset().union(*sets))
    else:
        task_term = 0.0
    base = (
        0.38 * t
        + 0.16 * g
        + 0.12 * f
        + 0.08 * s
        + 0.08 * task_term
        + 0.12 * scope
        + 0.06 * kind_boost
        + 0.05 * role
        + 0.08 * confidence
    )
    return (t, g, f, s, k, task_term, base)


# --- strategies ------------------------------------------------------------------------------

ALPHABET = "aAbBkKiIzZ09_- \t\n.,/:;()!?'\"`éİ\u212aß\u01c5\u0307日\u00a0\u3000\u2028\ufeff\x00\x85"
WORDS = [
    "run",
    "Run",
    "RUN",
    "tests",
    "test-suite",
    "_x",
    "x_",
    "-",
    "--",
    "a",
    "b",
    "i",
    "k",
    "café",
    "İstanbul",
    "\u212aelvin",
    "kelvin",
    "src/app.py",
    "ts",
    "ÉTÉ",
    "日本",
    "CI",
    "ci",
]
SEPARATORS = [" ", "  ", "/", ".", ", ", "\u00a0", "-", "_", "é", "\n"]

texts = st.one_of(
    st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), max_size=8).map(
        lambda parts: "".join(word + sep for word, sep in parts)
    ),
    st.text(alphabet=ALPHABET, max_size=30),
    st.text(max_size=20),
)
boosts = st.one_of(
    st.sampled_from([0, 1, 0.0, 0.3, 0.45, 0.5, 0.65, 0.8, 0.9, 1.0]),
    st.floats(min_value=0.0, max_value=1.0),
    st.floats(allow_nan=False, allow_infinity=False),
)
candidates = st.lists(
    st.tuples(texts, texts, texts, texts, texts, texts, boosts, boosts, boosts, boosts),
    max_size=5,
)
ids = st.one_of(st.sampled_from(["a", "b", "c", "B", "é", "id9", "id10", ""]), st.text(max_size=3))
weights = st.one_of(
    st.sampled_from([0, 1, 0.5, 0.4, 0.1]),
    st.floats(min_value=-2.0, max_value=2.0),
)


class _Id(str):
    """An id of a ``str`` subclass: the compiled fusion hands such rankings to its twin."""


fusion_inputs = st.lists(st.lists(ids, max_size=8), max_size=4).flatmap(
    lambda rankings: st.tuples(
        st.just(rankings),
        st.lists(weights, min_size=len(rankings), max_size=len(rankings)),
        st.one_of(st.sampled_from([0, 0.0, 1.0, 60, 60.0]), st.floats(0.0, 1e6)),
    )
)


def _columns(cands):
    """Turn candidate tuples into the ten column lists that ``score_lexical`` takes."""
    return (
        [list(column) for column in zip(*cands, strict=True)] if cands else [[] for _ in range(10)]
    )


# --- tokenizer and lexical scorer against the reference ----------------------------------------


@settings(max_examples=300, deadline=None)
@given(text=texts)
@example(text="")
@example(text="run")
@example(text="run Run RUN run")
@example(text="İstanbul \u212aelvin")
@example(text="query-signal _internals a.b/c:d")
@example(text="café\u00a0naïve\u3000日本語")
def test_tokenize_equals_reference(kernels, text):
    """Both twins' ``tokenize`` equal the naive transcription of the reference tokenizer."""
    assert kernels.lexical.tokenize(text) == reference_tokenize(text)


@settings(deadline=None)
@given(query=texts, task=st.none() | texts, task_as_query=st.booleans(), cands=candidates)
@example(query="", task=None, task_as_query=False, cands=[])
@example(query="", task="", task_as_query=True, cands=[("",) * 6 + (0,) * 4])
@example(query="run", task=None, task_as_query=False, cands=[("run",) * 6 + (1,) * 4])
@example(
    query="run run run", task="run", task_as_query=False, cands=[("run run",) * 6 + (0.5,) * 4]
)
@example(
    query="İ \u212a café",
    task="i k caf",
    task_as_query=True,
    cands=[("İstanbul", "\u212a", "caf-é", "i_k", "k i", "café", 0.8, 0.5, 1, 0.9)],
)
def test_score_lexical_equals_reference(kernels, query, task, task_as_query, cands):
    """Both twins' lexical rows equal the reference formulas applied with the naive tokenizer."""
    rows = kernels.lexical.score_lexical(query, task, task_as_query, *_columns(cands))
    assert rows == [reference_score(query, task, task_as_query, cand) for cand in cands]


# --- compiled == twin --------------------------------------------------------------------------


@compiled
@settings(deadline=None)
@given(query=texts, task=st.none() | texts, task_as_query=st.booleans(), cands=candidates)
@example(query="", task=None, task_as_query=False, cands=[])
@example(query="run", task=None, task_as_query=False, cands=[("run",) * 6 + (1,) * 4])
@example(query="a a a", task="a a", task_as_query=False, cands=[("a a a a",) * 6 + (0,) * 4])
@example(
    query="İ \u212a",
    task="İ",
    task_as_query=True,
    cands=[("i̇ k", "\u212a\u212a", "İİ", "ı", "K", "i", 0.3, 0.0, 0, 1.0)],
)
def test_score_lexical_compiled_equals_twin(query, task, task_as_query, cands):
    """The compiled scorer returns exactly the twin's signals and base for every candidate."""
    columns = _columns(cands)
    assert _compiled("lexical").score_lexical(query, task, task_as_query, *columns) == (
        _lexical_py.score_lexical(query, task, task_as_query, *columns)
    )


KINDS = ["project_fact", "test_pattern", "decision"]
kind_sets = st.none() | st.frozensets(st.sampled_from(KINDS))
#: a query, a task, candidates with a kind each, the wanted kinds and the role's kinds
CANDIDATE_INPUTS = {
    "query": texts,
    "task": st.none() | texts,
    "task_as_query": st.booleans(),
    "cands": candidates,
    "kinds": st.lists(st.sampled_from(KINDS), min_size=5, max_size=5),
    "wanted": kind_sets,
    "role": kind_sets,
}
candidate_inputs = given(**CANDIDATE_INPUTS)


def _candidate_tuples(cands, kinds):
    """Candidate tuples with the kernel's fields in a scrambled order, and their positions."""
    order = (8, 0, 7, 1, 6, 2, 5, 3, 4)  # CANDIDATE_FIELDS[i] sits at order[i]
    rows = []
    for (text, tags, files, symbols, kind_words, ref, scope, _k, _r, conf), kind in zip(
        cands, kinds, strict=True
    ):
        values = (text, tags, files, symbols, kind_words, ref, scope, kind, conf)
        row = [None] * 10
        for value, at in zip(values, order, strict=True):
            row[at] = value
        rows.append(tuple(row))
    return rows, order


@settings(deadline=None)
@candidate_inputs
def test_score_candidates_equals_score_lexical_of_the_columns(
    kernels, query, task, task_as_query, cands, kinds, wanted, role
):
    """Candidate tuples read in place score exactly as their columns do, in both twins."""
    kinds = kinds[: len(cands)]
    rows, order = _candidate_tuples(cands, kinds)
    columns = _columns(cands)
    columns[7] = [0.5 if wanted is None else float(k in wanted) for k in kinds]
    columns[8] = [float(role is not None and k in role) for k in kinds]
    expected = kernels.lexical.score_lexical(query, task, task_as_query, *columns)
    found = kernels.lexical.score_candidates(query, task, task_as_query, rows, order, wanted, role)
    assert found == expected


@compiled
@settings(deadline=None)
@candidate_inputs
def test_score_candidates_compiled_equals_twin(
    query, task, task_as_query, cands, kinds, wanted, role
):
    """The compiled candidate scorer returns exactly the twin's rows."""
    rows, order = _candidate_tuples(cands, kinds[: len(cands)])
    args = (query, task, task_as_query, rows, order, wanted, role)
    assert _compiled("lexical").score_candidates(*args) == _lexical_py.score_candidates(*args)


#: the candidate inputs, and a source for each candidate's id, Q-value and update time and the
#: relevance maps
scored_inputs = given(**CANDIDATE_INPUTS, data=st.data())


def _scored_inputs(cands, kinds, data):
    """Candidate tuples holding every ``SCORED_FIELDS`` name (scrambled), their positions, and
    the relevance maps and recency bounds ``data`` draws for them."""
    order = (10, 0, 9, 1, 8, 2, 7, 3, 4, 11, 6, 5)  # SCORED_FIELDS[i] sits at order[i]
    numbers = st.floats(0.0, 1.0, allow_nan=False)
    rows = []
    for n, ((text, tags, files, symbols, kind_words, ref, scope, _k, _r, conf), kind) in enumerate(
        zip(cands, kinds, strict=True)
    ):
        updated = data.draw(st.none() | st.floats(0.0, 2e12, allow_nan=False))
        q = data.draw(numbers)
        values = (text, tags, files, symbols, kind_words, ref, scope, kind, conf, f"m{n}", q)
        row = [None] * 12
        for value, at in zip((*values, updated), order, strict=True):
            row[at] = value
        rows.append(tuple(row))
    ids = [f"m{n}" for n in range(len(cands))] + ["absent"]
    maps = st.dictionaries(st.sampled_from(ids), numbers)
    relevance = data.draw(st.none() | maps)
    # the recency feature: now and the half-life (a zero one turns it off)
    recency = data.draw(
        st.none()
        | st.tuples(
            st.floats(0.0, 2e12, allow_nan=False),
            st.sampled_from([0.0, 1.0, 86_400_000.0, 2.592e9, 1e12]),
        )
    )
    return rows, order, relevance, recency


@settings(deadline=None)
@scored_inputs
def test_scored_candidates_extend_the_rows_by_the_documented_formula(
    kernels, query, task, task_as_query, cands, kinds, wanted, role, data
):
    """Each candidate keeps its ``score_candidates`` row; its base is the row's, or with a
    relevance the row's plus the relevance and recency terms; its score adds the Q boost;
    they come best first, ties by id."""
    rows, order, relevance, recency = _scored_inputs(cands, kinds[: len(cands)], data)
    kernel = kernels.lexical
    found = kernel.scored_candidates(
        query,
        task,
        task_as_query,
        rows,
        order,
        wanted,
        role,
        relevance,
        recency,
        0.16,
        0.2,
    )
    plain = kernel.score_candidates(query, task, task_as_query, rows, order[:9], wanted, role)
    ranks = [(-s.score, s.fields[order[9]]) for s in found]
    assert ranks == sorted(ranks)  # best first, ties by id
    position = {id(c): n for n, c in enumerate(rows)}
    found = sorted(found, key=lambda s: position[id(s.fields)])
    assert [s.row for s in found] == plain
    now_ms, half_life = recency or (0.0, 0.0)
    for s, c, row in zip(found, rows, plain, strict=True):
        assert s.fields is c and s.fts_rank is None
        if relevance is None:
            assert (s.base, s.relevance) == (row.base, None)
        else:
            value = relevance.get(c[order[9]], 0.0)
            updated = c[order[11]]
            age = None if updated is None else now_ms - updated
            fresh = (
                0.0
                if age is None or half_life <= 0
                else 1.0
                if age <= 0
                else 0.5 ** (age / half_life)
            )
            assert s.relevance == value
            stale = 1.0 - fresh if half_life > 0 and updated is not None else 0.0
            assert s.base == row.base + (0.38 * (value - row.text) - 0.16 * stale * value)
        assert s.score == s.base + (c[order[10]] - 0.5) * 0.2


@compiled
@settings(deadline=None)
@scored_inputs
def test_scored_candidates_compiled_equals_twin(
    query, task, task_as_query, cands, kinds, wanted, role, data
):
    """The compiled scorer returns exactly the twin's scored candidates."""
    rows, order, relevance, recency = _scored_inputs(cands, kinds[: len(cands)], data)
    args = (query, task, task_as_query, rows, order, wanted, role, relevance, recency)
    scored = _lexical_twins_agree("scored_candidates", *args, 0.16, 0.2)
    assert [type(s) for s in scored] == [_lexical_py.Scored] * len(rows)


def _ranked_inputs(cands, kinds, data):
    """``_scored_inputs`` with the filter fields appended to each row (expiry, inactive flag,
    scope key) and the rules ``data`` draws for them."""
    rows, order, relevance, _recency = _scored_inputs(cands, kinds, data)
    extended = []
    for row in rows:
        expires = data.draw(st.sampled_from([None, 0, 999.0, 1000, 1000.5, 2e12]))
        inactive = data.draw(st.booleans()) and data.draw(st.booleans())
        scope = data.draw(st.sampled_from(["repository:r", "workspace:w", "agent:a"]))
        extended.append((*row, expires, inactive, scope))
    rules = _lexical_py.RankRules(
        scope_keys=data.draw(st.sets(st.sampled_from(["repository:r", "workspace:w", "run:x"]))),
        now_ms=1000.0,
        check_expiry=data.draw(st.booleans()),
        check_q=data.draw(st.booleans()),
        threshold=data.draw(st.sampled_from([0.0, 0.15, 0.5])),
        require_signal=data.draw(st.booleans()),
        min_base=data.draw(st.none() | st.sampled_from([float("-inf"), 0.0, 0.2, 0.4])),
        half_life_ms=data.draw(st.sampled_from([0.0, 1.0, 500.0, 2.592e9])),
    )
    return extended, (*order, 12, 13, 14), relevance, rules


@settings(deadline=None)
@scored_inputs
def test_ranked_candidates_is_the_filters_then_the_scores_then_the_rules(
    kernels, query, task, task_as_query, cands, kinds, wanted, role, data
):
    """One ranking call equals its parts: the filters, ``scored_candidates`` with the
    recency of ``rules`` (its now and half-life), then the signal and base-score rules."""
    rows, order, relevance, rules = _ranked_inputs(cands, kinds[: len(cands)], data)
    kernel = kernels.lexical
    ranked = kernel.ranked_candidates(
        query, task, task_as_query, rows, order, wanted, role, relevance, 0.16, 0.2, rules
    )
    dropped = [
        r
        for r in rows
        if (rules.check_expiry and r[12] is not None and r[12] <= rules.now_ms)
        or r[13]
        or r[14] not in rules.scope_keys
        or (wanted is not None and r[order[7]] not in wanted)
    ]
    rest = [r for r in rows if not any(r is d for d in dropped)]
    held = [r for r in rest if rules.check_q and r[order[10]] < rules.threshold]
    eligible = [r for r in rest if not any(r is h for h in held)]
    recency = None
    if relevance is not None and rules.half_life_ms > 0:
        recency = (rules.now_ms, rules.half_life_ms)
    scored = kernel.scored_candidates(
        query, task, task_as_query, eligible, order[:12], wanted, role, relevance,
        recency, 0.16, 0.2,
    )  # fmt: skip
    signalled = [
        s
        for s in scored
        if not rules.require_signal
        or s.relevance
        or max(s.row.text, s.row.tag, s.row.file, s.row.symbol, s.row.kind_query) > 0
    ]
    kept = [s for s in signalled if rules.min_base is None or s.base >= rules.min_base]
    assert ranked == (
        kept,
        held,
        len(dropped),
        len(scored) - len(signalled),
        len(signalled) - len(kept),
        recency,
    )


@compiled
@settings(deadline=None)
@scored_inputs
def test_ranked_candidates_compiled_equals_twin(
    query, task, task_as_query, cands, kinds, wanted, role, data
):
    """The compiled ranking returns exactly the twin's."""
    rows, order, relevance, rules = _ranked_inputs(cands, kinds[: len(cands)], data)
    args = (query, task, task_as_query, rows, order, wanted, role, relevance, 0.16, 0.2)
    ranked = _lexical_twins_agree("ranked_candidates", *args, rules)
    assert type(ranked) is _lexical_py.Ranked


@pytest.mark.parametrize("impl", ["python", "compiled"])
def test_ranked_candidates_signal_rule_keeps_relevant_rows(impl):
    """The signal rule keeps a candidate with relevance even when no query word is in its
    fields, and drops (and counts) one with neither; the base-score rule comes after it."""
    if impl == "compiled" and NO_EXTENSIONS:
        pytest.skip("SWARMMEM_NO_EXTENSIONS=1")
    kernel = _lexical_py if impl == "python" else _compiled("lexical")

    def row(key, text):
        return (text, "", "", "", "", "", 0.5, "gotcha", 0.8, key, 0.5, None, None, False, "r")

    rows = [row("m1", "unrelated words"), row("m2", "nothing here"), row("m3", "deploy script")]
    relevance = {"m1": 0.6, "m3": 0.4}
    for min_base, below in ((None, 0), (0.35, 1)):
        rules = _lexical_py.RankRules({"r"}, 0.0, True, True, 0.1, True, min_base)
        ranked = kernel.ranked_candidates(
            "deploy script", None, False, rows, tuple(range(15)), None, None, relevance, 0.16,
            0.2, rules,
        )  # fmt: skip
        assert ranked.no_signal == 1 and ranked.below == below
        kept = {s.fields[9] for s in ranked.kept}
        assert kept == ({"m1", "m3"} if min_base is None else {"m1"})


@pytest.mark.parametrize("impl", ["python", "compiled"])
def test_ranked_candidates_refuses_bad_positions_and_rules(impl):
    """Positions must be one per field, none negative; the rules must be complete."""
    if impl == "compiled" and NO_EXTENSIONS:
        pytest.skip("SWARMMEM_NO_EXTENSIONS=1")
    kernel = _lexical_py if impl == "python" else _compiled("lexical")
    row = ("text", "", "", "", "", "", 0.5, "gotcha", 0.8, "m1", 0.5, None, None, False, "r")
    rules = _lexical_py.RankRules({"r"}, 0.0, True, True, 0.1, False, None)
    ok = kernel.ranked_candidates(
        "text", None, False, [row], tuple(range(15)), None, None, None, 0.16, 0.2, rules
    )
    assert [s.fields for s in ok.kept] == [row] and ok.dropped == 0
    bad_calls = [
        (tuple(range(12)), rules),
        ((*range(14), -1), rules),
        (tuple(range(15)), tuple(rules)[:6]),
    ]
    for fields, bad_rules in bad_calls:
        with pytest.raises(ValueError):
            kernel.ranked_candidates(
                "text", None, False, [row], fields, None, None, None, 0.16, 0.2, bad_rules
            )


@pytest.mark.parametrize("impl", ["python", "compiled"])
def test_scored_candidates_refuses_bad_positions_and_values(impl):
    """Positions must be one per field; a candidate without a number for its Q-value fails."""
    if impl == "compiled" and NO_EXTENSIONS:
        pytest.skip("SWARMMEM_NO_EXTENSIONS=1")
    kernel = _lexical_py if impl == "python" else _compiled("lexical")
    row = ("text", "", "", "", "", "", 0.5, "project_fact", 0.8, "m1", 0.5, None)
    fields = tuple(range(12))
    ok = kernel.scored_candidates(
        "text", None, False, [row], fields, None, None, {}, None, 0.16, 0.2
    )
    assert ok[0].relevance == 0.0 and ok[0].score == ok[0].base
    with pytest.raises(ValueError):
        kernel.scored_candidates(
            "text", None, False, [row], fields[:9], None, None, None, None, 0.16, 0.2
        )
    with pytest.raises(TypeError):
        bad = (*row[:10], None, None)
        kernel.scored_candidates(
            "text", None, False, [bad], fields, None, None, None, None, 0.16, 0.2
        )


@pytest.mark.parametrize("impl", ["python", "compiled"])
def test_score_candidates_refuses_bad_positions_and_rows(impl):
    """Positions must be one per field and inside every candidate tuple."""
    if impl == "compiled" and NO_EXTENSIONS:
        pytest.skip("SWARMMEM_NO_EXTENSIONS=1")
    kernel = _lexical_py if impl == "python" else _compiled("lexical")
    row = ("text", "", "", "", "", "", 0.5, "project_fact", 0.8)
    with pytest.raises(ValueError):
        kernel.score_candidates("text", None, False, [row], (0, 1, 2), None, None)
    with pytest.raises((TypeError, IndexError)):
        kernel.score_candidates("text", None, False, [row[:5]], tuple(range(9)), None, None)


@compiled
@settings(deadline=None)
@given(text=texts, other=texts)
@example(text="", other="")
@example(text="İstanbul", other="istanbul i")
@example(text="\u212aelvin", other="k elvin")
def test_compiled_scan_finds_the_tokenizer_tokens(text, other):
    """With a query made of a field's own tokens plus decoys, the compiled scan agrees exactly."""
    query = " ".join(sorted(reference_tokenize(text) | reference_tokenize(other)))
    columns = _columns([(text, text, text, text, text, text, 0, 0, 0, 0)])
    row = _compiled("lexical").score_lexical(query, query, False, *columns)[0]
    assert row == _lexical_py.score_lexical(query, query, False, *columns)[0]
    q = reference_tokenize(query)
    share = len(q & reference_tokenize(text)) / len(q) if q and text else 0.0
    assert row[:6] == (share,) * 6


def _compiled_text_twin(*examples: str):
    """Decorate a property that compares a compiled kernel with its twin on one ``text``:
    marked ``compiled`` (skipped under SWARMMEM_NO_EXTENSIONS=1), 300 examples, the empty
    text and ``examples`` always among them."""

    def decorate(test):
        for text in reversed(("", *examples)):
            test = example(text=text)(test)
        test = settings(max_examples=300, deadline=None)(given(text=texts)(test))
        return compiled(test)

    return decorate


@_compiled_text_twin("İ\u212a")
def test_tokenize_compiled_equals_twin(text):
    """The compiled ``tokenize`` returns the twin's token set."""
    assert _compiled("lexical").tokenize(text) == _lexical_py.tokenize(text)


@compiled
def test_lexical_weights_equal():
    """Both twins export the same weights."""
    assert _compiled("lexical").WEIGHTS == _lexical_py.WEIGHTS


@compiled
@settings(deadline=None)
@given(inputs=fusion_inputs)
@example(inputs=([], [], 60.0))
@example(inputs=([[]], [1.0], 60.0))
@example(inputs=([["a"]], [1.0], 0.0))
@example(inputs=([["a", "a", "a"]], [1.0], 60.0))
@example(inputs=([["a", "b"], ["b", "a"]], [1.0, 1.0], 60.0))
@example(inputs=([["b"], ["a"], ["c"]], [0.5, 0.5, 0.5], 60))
@example(inputs=([["é", "e", "É", "E"], ["E"]], [0.5, 0.4], 60.0))
@example(inputs=([["mem_a", "mem_b"], ["".join(["mem_", "a"]), "mem_c"]], [1.0, 1.0], 60.0))
@example(inputs=([[f"mem_{i}" for i in range(300)], ["mem_7", _Id("mem_8")]], [1.0, 1.0], 60.0))
def test_rrf_fuse_compiled_equals_twin(inputs):
    """The compiled fusion returns exactly the twin's ids, order and scores."""
    rankings, ws, k = inputs
    assert _compiled("fusion").rrf_fuse(rankings, ws, k) == _fusion_py.rrf_fuse(rankings, ws, k)


@compiled
@settings(deadline=None)
@given(n_rankings=st.integers(0, 4), n_weights=st.integers(0, 4), k=st.floats(max_value=1e6))
@example(n_rankings=1, n_weights=2, k=60.0)
@example(n_rankings=1, n_weights=1, k=-1.0)
@example(n_rankings=1, n_weights=1, k=float("nan"))
def test_rrf_fuse_errors_equal(n_rankings, n_weights, k):
    """Both fusion twins accept or reject the same inputs, with the same message."""
    outcomes = []
    for module in (_compiled("fusion"), _fusion_py):
        try:
            outcomes.append(module.rrf_fuse([["a"]] * n_rankings, [1.0] * n_weights, k))
        except ValueError as exc:
            outcomes.append(str(exc))
    assert outcomes[0] == outcomes[1]


# Texts of up to a few hundred characters: the compiled scan reads 64 bytes a block, and
# its hash table grows for candidates of many tokens.
long_texts = st.lists(
    st.tuples(
        st.one_of(st.sampled_from(WORDS), st.text(alphabet=ALPHABET, min_size=1, max_size=12)),
        st.sampled_from(SEPARATORS),
    ),
    max_size=90,
).map(lambda parts: "".join(word + sep for word, sep in parts))


@compiled
@settings(deadline=None)
@given(source=long_texts, others=st.lists(long_texts, max_size=4))
@example(source="x" * 64, others=["x" * 63 + " " + "x", "a" * 70, "a" * 7 + " " * 57 + "b" * 8])
def test_jaccard_long_texts_compiled_equals_twin(source, others):
    """On long texts the compiled Jaccard kernel and key scan equal the twin."""
    compiled_jaccard = _compiled("jaccard")
    assert compiled_jaccard.jaccard_many(source, others) == _jaccard_py.jaccard_many(source, others)
    for text in [source, *others]:
        assert compiled_jaccard.token_keys(text) == _jaccard_py.token_keys(text)


@compiled
@settings(deadline=None)
@given(source=texts, others=st.lists(texts, max_size=6))
@example(source="", others=[])
@example(source="", others=[""])
@example(source="a", others=["a", "b", ""])
@example(source="a a a", others=["a"])
@example(source="İ \u212a", others=["i k", "İ", "caf é"])
@example(source="ÉCOLE École AB-cd_9 Ÿ", others=["école ab-cd_9", "ÀÉ ÿ", "AB"])
@example(source=" ".join(f"w{i}" for i in range(40)), others=["w1 " * 50, "w39 W38 x"])
def test_jaccard_compiled_equals_twin(source, others):
    """The compiled Jaccard kernel returns exactly the twin's similarities."""
    assert _compiled("jaccard").jaccard_many(source, others) == _jaccard_py.jaccard_many(
        source, others
    )


@settings(deadline=None)
@given(source=texts, others=st.lists(texts, max_size=6))
def test_jaccard_equals_reference(kernels, source, others):
    """Both twins compute |A ∩ B| / |A ∪ B| over the reference token sets."""
    a = reference_tokenize(source)
    expected = []
    for other in others:
        b = reference_tokenize(other)
        expected.append(len(a & b) / len(a | b) if a | b else 0.0)
    assert kernels.jaccard.jaccard_many(source, others) == expected


# --- integer-id fusion and key-based Jaccard ---------------------------------------------------

int_fusion_inputs = (
    st.integers(0, 12)
    .flatmap(
        lambda n_ids: st.tuples(
            st.just(n_ids),
            st.lists(
                st.lists(st.integers(0, max(n_ids - 1, 0)), max_size=10 if n_ids else 0), max_size=4
            ),
        )
    )
    .flatmap(
        lambda pair: st.tuples(
            st.just(pair[1]),
            st.lists(weights, min_size=len(pair[1]), max_size=len(pair[1])),
            st.one_of(st.sampled_from([0, 0.0, 1.0, 60, 60.0]), st.floats(0.0, 1e6)),
            st.just(pair[0]),
        )
    )
)


@compiled
@settings(deadline=None)
@given(inputs=int_fusion_inputs)
@example(inputs=([], [], 60.0, 0))
@example(inputs=([[0, 0, 1], [1, 0]], [1.0, 1.0], 60.0, 2))
@example(inputs=([[3, 1], [1, 3], [2], [0]], [1, 1, 2, 2], 60, 4))
def test_rrf_fuse_ids_compiled_equals_twin(inputs):
    """The compiled integer-id fusion returns exactly the twin's ids, order and scores."""
    rankings, ws, k, n_ids = inputs
    assert _compiled("fusion").rrf_fuse_ids(rankings, ws, k, n_ids) == _fusion_py.rrf_fuse_ids(
        rankings, ws, k, n_ids
    )


@settings(deadline=None)
@given(inputs=fusion_inputs)
def test_rrf_fuse_ids_equals_rrf_fuse(kernels, inputs):
    """Ids numbered in string order fuse like the strings, in both twins."""
    rankings, ws, k = inputs
    names = sorted({doc for ranking in rankings for doc in ranking})
    index = {name: i for i, name in enumerate(names)}
    as_ints = [[index[doc] for doc in ranking] for ranking in rankings]
    ids, scores = kernels.fusion.rrf_fuse_ids(as_ints, ws, k, len(names))
    assert ([names[i] for i in ids], list(scores)) == kernels.fusion.rrf_fuse(rankings, ws, k)


@_compiled_text_twin("exactly7 exactly token-refresh İstanbul \u212aelvin")
def test_token_keys_compiled_equals_twin(text):
    """The compiled key scan returns the twin's keys."""
    assert _compiled("jaccard").token_keys(text) == _jaccard_py.token_keys(text)


@settings(deadline=None)
@given(text=texts)
def test_token_keys_are_the_reference_tokens(kernels, text):
    """One key per reference token, each the twin's ``token_key`` of that token, sorted."""
    expected = sorted({_jaccard_py.token_key(t) for t in _jaccard_py._tokens(text)})
    assert list(kernels.jaccard.token_keys(text)) == expected
    assert len(expected) == len(_jaccard_py._tokens(text))


@settings(deadline=None)
@given(source=texts, others=st.lists(texts, max_size=6))
@example(source="İ \u212a", others=["i k", "İ", "caf é"])
def test_jaccard_keys_equals_jaccard_many(kernels, source, others):
    """Key-based Jaccard equals text-based Jaccard; compiled equals twin."""
    keys = kernels.jaccard.token_keys
    result = kernels.jaccard.jaccard_keys(keys(source), [keys(o) for o in others])
    assert list(result) == kernels.jaccard.jaccard_many(source, others)
    assert list(result) == list(
        _jaccard_py.jaccard_keys(
            _jaccard_py.token_keys(source), [_jaccard_py.token_keys(o) for o in others]
        )
    )


# --- bm25: postings over feature rows ---------------------------------------------------------


@st.composite
def bm25_inputs(draw):
    """Rows with random scopes, kinds, liveness, versions and lengths; per query entry either
    postings (triples, including stale versions, out-of-range rows and duplicates) or a
    phrase column; a limit."""
    n_rows = draw(st.integers(0, 12))
    versions = [draw(st.integers(0, 3)) for _ in range(n_rows)]
    lengths = [draw(st.integers(0, 40)) for _ in range(n_rows)]
    live = bytes(draw(st.integers(0, 1)) for _ in range(n_rows))
    scopes = [draw(st.integers(-1, 2)) for _ in range(n_rows)]
    kinds = [draw(st.integers(-1, 2)) for _ in range(n_rows)]
    allowed_scopes = bytes(draw(st.lists(st.integers(0, 1), max_size=3)))
    allowed_kinds = draw(st.none() | st.lists(st.integers(0, 1), max_size=3).map(bytes))
    postings, phrases = [], []
    for _ in range(draw(st.integers(0, 4))):
        if n_rows and draw(st.booleans()) and draw(st.booleans()):
            phrases.append([draw(st.integers(0, 3)) for _ in range(n_rows)])
            postings.append(None)
            continue
        triples = []
        for _ in range(draw(st.integers(0, 8))):
            row = draw(st.integers(-1, n_rows))
            version = versions[row] if 0 <= row < n_rows and draw(st.booleans()) else 9
            triples += [row, version, draw(st.integers(1, 5))]
        postings.append(triples)
    limit = draw(st.integers(0, 14))
    ids = [draw(st.sampled_from(["a", "b", "c", "é"])) for _ in range(n_rows)]
    return (
        ids,
        versions,
        lengths,
        live,
        scopes,
        allowed_scopes,
        kinds,
        allowed_kinds,
        postings,
        (phrases),
        limit,
    )


def _bm25_call(module, inputs):
    from array import array

    (
        ids,
        versions,
        lengths,
        live,
        scopes,
        allowed,
        kinds,
        allowed_kinds,
        postings,
        phrases,
        limit,
    ) = inputs
    ints = lambda values: array("i", values)  # noqa: E731
    return module.bm25_top(
        ints(versions),
        ints(lengths),
        live,
        ints(scopes),
        allowed,
        ints(kinds),
        allowed_kinds,
        [None if p is None else ints(p) for p in postings],
        [ints(p) for p in phrases],
        1.2,
        0.75,
        limit,
        ids,
    )


@compiled
@settings(deadline=None, max_examples=300)
@given(inputs=bm25_inputs())
def test_bm25_top_compiled_equals_twin(inputs):
    """Both BM25 kernels return the same rows with the same scores, in the same order."""
    from swarmmem._speedups import _bm25_py

    assert _bm25_call(_compiled("bm25"), inputs) == _bm25_call(_bm25_py, inputs)


@settings(deadline=None)
@given(inputs=bm25_inputs())
def test_bm25_top_returns_the_best_first(kernels, inputs):
    """At most ``limit`` rows, by score (highest first), ties by id; every row left out
    scores no higher than the last one returned."""
    ids, limit = inputs[0], inputs[-1]
    rows, scores = _bm25_call(kernels.bm25, inputs)
    assert len(rows) <= limit and len(set(rows)) == len(rows)
    keys = [(-score, ids[row]) for row, score in zip(rows, scores, strict=True)]
    assert keys == sorted(keys)
    if len(rows) == limit and limit:
        unlimited = _bm25_call(kernels.bm25, (*inputs[:-1], 10_000))
        left_out = [s for r, s in zip(*unlimited, strict=True) if r not in rows]
        assert all(s <= scores[-1] for s in left_out)


@compiled
@settings(deadline=None)
@given(data=st.data())
def test_term_marks_compiled_equals_twin(data):
    """Both kernels read the same marks for the same rows."""
    from array import array

    from swarmmem._speedups import _bm25_py

    n_rows = data.draw(st.integers(0, 6))
    starts, ends, terms, marks = [], [], [], []
    for _ in range(n_rows):
        row = sorted(set(data.draw(st.lists(st.integers(0, 70), max_size=8))))
        starts.append(len(terms))
        terms += row
        marks += [data.draw(st.integers(0, 1)) for _ in row]
        ends.append(len(terms))
    query = data.draw(st.lists(st.integers(-1, 70), max_size=70, unique=True))
    rows = data.draw(st.lists(st.integers(0, n_rows - 1), max_size=8)) if n_rows else []
    args = (array("q", starts), array("q", ends), array("i", terms), bytes(marks), rows, query)
    assert _compiled("bm25").term_marks(*args) == _bm25_py.term_marks(*args)


# --- bm25: the stemmed channel's text relevance ------------------------------------------------

TERMS = ["user", "allergi", "fruit", "cach", "sqlite"]


@st.composite
def text_relevance_inputs(draw):
    """Candidate tuples ``(text, id)`` with texts short and long, a BM25 score and the set of
    query terms each text holds; the query's terms (some held by no candidate); the length
    and share parameters."""
    n = draw(st.integers(0, 14))
    lengths = st.sampled_from([0, 40, 499, 500, 501, 900, 4000])
    cands = [("x" * draw(lengths), f"m{i}") for i in range(n)]
    score = st.sampled_from([0.0, 0.5, 1.25, 3.0]) | st.floats(0.0, 30.0)
    scores = [draw(score) for _ in cands]
    terms = draw(st.lists(st.sampled_from(TERMS), unique=True))
    held = [draw(st.frozensets(st.sampled_from(terms))) if terms else frozenset() for _ in cands]
    free = draw(st.sampled_from([0, 100, 500]))
    exponent = draw(st.sampled_from([0.0, 1.0, 2.0, 0.7]))
    half = draw(st.sampled_from([5.0, 1.0, 0.25]))
    return cands, scores, held, terms, free, exponent, half


def _as_masks(held, terms):
    return [sum(1 << terms.index(t) for t in have) for have in held]


@settings(deadline=None, max_examples=300)
@given(inputs=text_relevance_inputs())
def test_text_relevance_is_the_text_factor_over_the_terms_held(kernels, inputs):
    """Each candidate's relevance is the text factor of its length-scaled, IDF-weighted
    coverage of the query's terms (the recall path's formulas over sets of terms)."""
    from swarmmem.core.recall.lexical import length_scaled, text_factors, weighted_coverage

    cands, scores, held, terms, free, exponent, half = inputs
    found = kernels.bm25.text_relevance(
        cands, 0, scores, _as_masks(held, terms), len(terms), free, exponent, half
    )
    by_id = {c[1]: have for c, have in zip(cands, held, strict=True)}
    cover = weighted_coverage(by_id, frozenset(terms))
    cover = length_scaled(cover, {c[1]: len(c[0]) for c in cands}, free, exponent)
    bm25 = {c[1]: score for c, score in zip(cands, scores, strict=True)}
    expected = text_factors(cover, bm25, max(scores, default=0.0) or 1.0, half)
    assert found == [expected[c[1]] for c in cands]


@compiled
@settings(deadline=None, max_examples=400)
@given(inputs=text_relevance_inputs(), width=st.sampled_from([0, 60, 70]))
def test_text_relevance_compiled_equals_twin(inputs, width):
    """Both kernels give the same floats, masks wider than 64 terms included."""
    from swarmmem._speedups import _bm25_py

    cands, scores, held, terms, free, exponent, half = inputs
    terms = [f"pad{i}" for i in range(width)] + terms  # the terms move to high bits
    args = (cands, 0, scores, _as_masks(held, terms), len(terms), free, exponent, half)
    assert _compiled("bm25").text_relevance(*args) == _bm25_py.text_relevance(*args)


@pytest.mark.parametrize("impl", ["python", "compiled"])
def test_text_relevance_refuses_bad_input(impl):
    """One score and one mask per candidate, masks within the terms, a text in each tuple."""
    from swarmmem._speedups import _bm25_py

    if impl == "compiled" and NO_EXTENSIONS:
        pytest.skip("SWARMMEM_NO_EXTENSIONS=1")
    kernel = _bm25_py if impl == "python" else _compiled("bm25")
    params = (500, 2.0, 5.0)
    assert kernel.text_relevance([("t",)], 0, [2.0], [1], 1, *params) == [1.0]
    assert kernel.text_relevance([], 0, [], [], 3, *params) == []
    with pytest.raises(ValueError):
        kernel.text_relevance([("t",)], 0, [2.0, 1.0], [1], 1, *params)
    with pytest.raises(ValueError):
        kernel.text_relevance([("t",)], 0, [2.0], [4], 2, *params)
    with pytest.raises(ValueError):
        kernel.text_relevance([("t",)], 0, [2.0], [-1], 2, *params)
    with pytest.raises((TypeError, IndexError)):
        kernel.text_relevance([("t",)], 1, [2.0], [1], 1, *params)

"""The Python porter stemmer makes exactly the terms SQLite's FTS5 ``porter unicode61`` makes."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmmem.adapters.storage.sqlite.support import sqlite_module
from swarmmem.core.recall.stemming import fts_tokens, porter_stem, stemmed_tokens

# words that walk through every rule of every step (and the pass-through cases)
_WORD_TEXT = (
    "caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated "
    "troubled sized hopping tanned falling hissing fizzed failing filing happy sky relational "
    "conditional rational valenci hesitanci digitizer conformabli radicalli differentli vileli "
    "analogousli vietnamization predication operator feudalism decisiveness hopefulness "
    "callousness formaliti sensitiviti sensibiliti triplicate formative formalize electriciti "
    "electrical hopeful goodness revival allowance inference airliner gyroscopic adjustable "
    "defensible irritant replacement adjustment dependent adoption homologou communism "
    "activate angulariti homologous effective bowdlerize probate rate cease controll roll "
    "generalizations oscillators archaeology ies sses eed yyy ayy x1y2 2021s ab abc"
)
WORDS = [*_WORD_TEXT.split(" "), "a" * 64, "b" * 65]


def fts5_terms(texts: list[str]) -> list[list[str]]:
    """What FTS5 stores for each text, in token order."""
    conn = sqlite_module().connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(w, tokenize = 'porter unicode61')")
    conn.executemany("INSERT INTO t (rowid, w) VALUES (?, ?)", list(enumerate(texts, 1)))
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    out: list[list[str]] = [[] for _ in texts]
    for doc, term in conn.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
        out[doc - 1].append(term)
    conn.close()
    return out


def test_every_rule_matches_fts5() -> None:
    expected = fts5_terms(WORDS)
    assert [[porter_stem(w)] for w in WORDS] == expected
    # spot checks that the comparison is not vacuous
    assert porter_stem("generalizations") == "gener"
    assert porter_stem("ponies") == "poni"
    assert porter_stem("ies") == "ie"
    assert porter_stem("b" * 65) == "b" * 65


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="aeiouyysbcdlmnrtzg0123", min_size=1, max_size=14), max_size=40))
def test_random_ascii_words_match_fts5(words: list[str]) -> None:
    texts = [w for w in words if w]
    if not texts:
        return
    assert [[porter_stem(w)] for w in texts] == fts5_terms(texts)


# ASCII and accented Latin letters: the folding the twin reproduces (rarer letters whose
# case folding differs from str.lower, such as the micro sign, are outside it)
LATIN = st.sampled_from(
    string.printable.replace("\x0b", "").replace("\x0c", "")
    + "àáâãäåçèéêëìíîïñòóôõöùúûüýÿÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖÙÚÛÜÝ"
)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=LATIN, max_size=60))
def test_latin_text_tokenizes_like_fts5(text: str) -> None:
    assert [stemmed_tokens(text)] == fts5_terms([text])


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Café naïve", ["cafe", "naive"]),
        ("snake_case and-hyphen", ["snake", "case", "and", "hyphen"]),
        (string.punctuation, []),
    ],
)
def test_fold_tokens(text: str, tokens: list[str]) -> None:
    assert fts_tokens(text) == tokens

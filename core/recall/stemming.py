"""Porter stemming, the way SQLite's FTS5 ``porter`` tokenizer stems (pure Python).

The stemmed BM25 channel stems in SQLite's own tokenizer; this twin lets the stores without
FTS5 (PostgreSQL, in memory, JSONL) build the same terms. FTS5 passes a token through
unchanged when it is shorter than 3 or longer than 64 bytes; otherwise it runs the five steps of
M. F. Porter's 1980 algorithm with two later refinements of his own reference
implementation (``bli`` -> ``ble`` for ``abli`` -> ``able``, and ``logi`` -> ``log``).
Digits count as consonants, and a suffix needs at least one character before it.
``tests/unit/test_stemming.py`` checks this function against FTS5 itself, word by word.
"""

from __future__ import annotations

import functools
import re
import unicodedata

_TOKEN = re.compile(r"[^\W_]+")
_VOWELS = frozenset("aeiou")
MIN_STEM_LENGTH = 3
MAX_STEM_LENGTH = 64

_STEP2 = (
    ("ational", "ate"),
    ("tional", "tion"),
    ("enci", "ence"),
    ("anci", "ance"),
    ("izer", "ize"),
    ("bli", "ble"),
    ("alli", "al"),
    ("entli", "ent"),
    ("eli", "e"),
    ("ousli", "ous"),
    ("ization", "ize"),
    ("ation", "ate"),
    ("ator", "ate"),
    ("alism", "al"),
    ("iveness", "ive"),
    ("fulness", "ful"),
    ("ousness", "ous"),
    ("aliti", "al"),
    ("iviti", "ive"),
    ("biliti", "ble"),
    ("logi", "log"),
)
_STEP3 = (
    ("icate", "ic"),
    ("ative", ""),
    ("alize", "al"),
    ("iciti", "ic"),
    ("ical", "ic"),
    ("ful", ""),
    ("ness", ""),
)
_STEP4 = (
    "al",
    "ance",
    "ence",
    "er",
    "ic",
    "able",
    "ible",
    "ant",
    "ement",
    "ment",
    "ent",
    "ion",
    "ou",
    "ism",
    "ate",
    "iti",
    "ous",
    "ive",
    "ize",
)


_STEP2_BY_LENGTH = tuple(sorted(_STEP2, key=lambda rule: -len(rule[0])))
_STEP3_BY_LENGTH = tuple(sorted(_STEP3, key=lambda rule: -len(rule[0])))
_STEP4_BY_LENGTH = tuple(sorted(_STEP4, key=len, reverse=True))


def _consonant(word: str, i: int) -> bool:
    ch = word[i]
    if ch in _VOWELS:
        return False
    if ch == "y":
        return i == 0 or not _consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """Porter's *m*: the number of vowel-consonant sequences in ``stem``."""
    m = 0
    previous_vowel = False
    for i in range(len(stem)):
        vowel = not _consonant(stem, i)
        if previous_vowel and not vowel:
            m += 1
        previous_vowel = vowel
    return m


def _has_vowel(stem: str) -> bool:
    return any(not _consonant(stem, i) for i in range(len(stem)))


def _double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _consonant(word, len(word) - 1)


def _cvc(word: str) -> bool:
    """Ends consonant-vowel-consonant, the last not ``w``, ``x`` or ``y``."""
    n = len(word)
    return (
        n >= 3
        and _consonant(word, n - 3)
        and not _consonant(word, n - 2)
        and _consonant(word, n - 1)
        and word[-1] not in "wxy"
    )


def _ends(word: str, suffix: str) -> bool:
    """A suffix matches only with something before it (``ies`` alone is not ``i`` + ``es``)."""
    return len(word) > len(suffix) and word.endswith(suffix)


def _step1(word: str) -> str:
    if _ends(word, "sses") or _ends(word, "ies"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if _ends(word, "eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    else:
        for suffix in ("ed", "ing"):
            if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
                word = word[: -len(suffix)]
                if word.endswith(("at", "bl", "iz")):
                    word += "e"
                elif _double_consonant(word) and word[-1] not in "lsz":
                    word = word[:-1]
                elif _measure(word) == 1 and _cvc(word):
                    word += "e"
                break
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    return word


def _replace(word: str, rules: tuple[tuple[str, str], ...], min_measure: int) -> str:
    for suffix, replacement in rules:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem + replacement if _measure(stem) > min_measure else word
    return word


def _step4(word: str) -> str:
    for suffix in _STEP4_BY_LENGTH:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            if suffix == "ion" and not stem.endswith(("s", "t")):
                return word
            return stem if _measure(stem) > 1 else word
    return word


def _step5(word: str) -> str:
    if word.endswith("e"):
        stem = word[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _cvc(stem)):
            word = stem
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word


@functools.lru_cache(maxsize=65536)
def porter_stem(token: str) -> str:
    """The stem FTS5's ``porter`` tokenizer makes of a folded ``unicode61`` token.

    Like FTS5 it works on the UTF-8 bytes: the length limits count bytes and every byte of
    a non-ASCII character is a consonant (only ASCII suffixes are ever cut or added, so the
    result stays valid UTF-8).
    """
    raw = token.encode("utf-8")
    if len(raw) < MIN_STEM_LENGTH or len(raw) > MAX_STEM_LENGTH:
        return token
    word = _step1(raw.decode("latin-1"))
    word = _replace(word, _STEP2_BY_LENGTH, 0)
    word = _replace(word, _STEP3_BY_LENGTH, 0)
    word = _step5(_step4(word))
    return word.encode("latin-1").decode("utf-8")


def fts_tokens(text: str) -> list[str]:
    """Tokens as FTS5's ``unicode61`` makes them: letter/digit runs, folded, no diacritics."""
    if not text:
        return []
    lowered = text.lower()
    if not lowered.isascii():
        lowered = "".join(
            c for c in unicodedata.normalize("NFD", lowered) if not unicodedata.combining(c)
        )
    return _TOKEN.findall(lowered)


def stemmed_tokens(text: str) -> list[str]:
    """Tokens as FTS5's ``porter unicode61`` makes them."""
    return [porter_stem(token) for token in fts_tokens(text)]

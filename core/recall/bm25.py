"""The stemmed BM25 channel: its query, and BM25 computed here for stores without FTS5.

The query keeps a recall's word tokens minus :data:`STOP_WORDS` (common English function
words) and single letters; the stemmed index (``porter unicode61``) stems them. A store with
full-text search ranks by its own ``bm25()`` (SQLite: FTS5 over ``memory_items_fts_porter``;
PostgreSQL: the same formula over its stemmed ``tsvector``). For the in-memory and JSONL
stores :func:`bm25_relevance` computes FTS5's formula over the scoped candidates (so the
document statistics are the scope's, not the whole store's).

Term frequencies and document frequencies leave out the kind column (its words, such as
"project fact", describe what a memory is, not what it says: in a scope of ``project_fact``
memories the word "project" would otherwise be in every document and weigh nothing), while a
document's length stays the token count of all seven columns. SQLite restricts its ``MATCH``
with the column filter ``- kind : (...)``, which gives ``bm25()`` exactly these statistics;
PostgreSQL weighs the kind's positions apart in its stemmed ``tsvector``.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import TypeVar

from swarmmem.core.model.candidates import CandidateRow
from swarmmem.core.model.records import MemoryRecord
from swarmmem.core.recall.fts import distinct_terms
from swarmmem.core.recall.rows import derived
from swarmmem.core.recall.stemming import stemmed_tokens

#: a record or its candidate row (:func:`record_fields` reads either)
Candidate = TypeVar("Candidate", MemoryRecord, CandidateRow)

# Common English function words (articles, pronouns, prepositions, conjunctions, auxiliary
# and modal verbs, question words, a few frequent adverbs), written for this project rather
# than copied from a published list.
_FUNCTION_WORDS = """
    a an the this that these those some any each every either neither no not nor
    i me my mine myself we us our ours ourselves you your yours yourself yourselves
    he him his himself she her hers herself it its itself they them their theirs themselves
    one ones other others such own same
    who whom whose which what when where why how whether
    and or but if then else than so because while although though unless until since
    as at by for from in into of off on onto out over under up down to with within without
    about above across after against along among around before behind below beneath beside
    between beyond during except near per through throughout toward towards upon via
    am is are was were be been being do does did doing done have has had having
    can could may might must shall should will would
    there here also just only very too quite rather more most much many few less least
    again ever never once still yet already even both all
"""
STOP_WORDS: frozenset[str] = frozenset(_FUNCTION_WORDS.split())
MAX_TERMS = 40
BM25_K1 = 1.2
BM25_B = 0.75
_WORD = re.compile(r"\w+")


def query_terms(text: str) -> list[str]:
    """The query's word tokens, lower-cased, first-seen order, without :data:`STOP_WORDS`
    and single letters (digits stay), at most :data:`MAX_TERMS`."""
    return distinct_terms(_WORD.findall(text.lower()), STOP_WORDS, 2, MAX_TERMS)


def stemmed_query(query: str, task: str | None, mode: str) -> str | None:
    """The FTS5 ``MATCH`` string for the stemmed index (quoted terms joined by ``OR``);
    ``None`` when no term is left. Injection recalls search the task first, as the
    reference's query does."""
    if mode == "injection" and task:
        text = f"{task}\n{query}"
    else:
        text = f"{query}\n{task or ''}"
    terms = query_terms(text)
    if not terms:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


@functools.lru_cache(maxsize=256)
def match_terms(match: str | None) -> tuple[tuple[str, ...], ...]:
    """The distinct stemmed phrases of a :func:`stemmed_query` string (kept per string: the
    store and the scorer of one recall both read them)."""
    if not match:
        return ()
    phrases = [tuple(stemmed_tokens(t)) for t in re.findall(r'"((?:[^"]|"")*)"', match)]
    return tuple(p for p in dict.fromkeys(phrases) if p)


def held_terms(
    records: Sequence[MemoryRecord], match: str | None
) -> tuple[frozenset[str], dict[str, frozenset[str]]]:
    """The query's stemmed terms, and per record the ones its text holds."""
    terms = frozenset(t for phrase in match_terms(match) for t in phrase)
    return terms, {r.id: terms.intersection(document(record_fields(r)).columns[0]) for r in records}


#: the position of the memory kind among :func:`record_fields` (its words, such as "test
#: pattern" or "project fact", describe what a memory is, not what it says)
KIND_COLUMN = 2


def record_fields(record: MemoryRecord | CandidateRow) -> tuple[str, ...]:
    """The seven full-text columns of a record (or of its candidate row), as the stores index
    them: text, tags, kind words, source path, source ref, symbols, metadata files (derived
    once per record)."""
    return (record if isinstance(record, CandidateRow) else derived(record)).columns


def bm25_relevance(
    records: Sequence[MemoryRecord] | Sequence[CandidateRow], match: str | None
) -> dict[str, float]:
    """``-bm25()`` of every record matching a term of ``match`` (a :func:`stemmed_query`
    string), with the statistics of ``records``; records matching nothing are absent."""
    phrases = match_terms(match)
    if not phrases or not records:
        return {}
    docs = [document(record_fields(r)) for r in records]
    n = len(docs)
    avgdl = (sum(doc.length for doc in docs) / n) or 1.0
    freqs = [[doc.count(p) for p in phrases] for doc in docs]
    idf = []
    for j in range(len(phrases)):
        hits = sum(1 for row in freqs if row[j])
        value = math.log((n - hits + 0.5) / (hits + 0.5))
        idf.append(value if value > 0.0 else 1e-6)
    out: dict[str, float] = {}
    ids = [r.id for r in records]
    for memory_id, doc, row in zip(ids, docs, freqs, strict=True):
        if not any(row):
            continue
        norm = BM25_K1 * (1 - BM25_B + BM25_B * doc.length / avgdl)
        out[memory_id] = sum(
            w * (f * (BM25_K1 + 1.0)) / (f + norm) for w, f in zip(idf, row, strict=True) if f
        )
    return out


class _Document:
    """A record's stemmed columns, the token counts of every column but the kind (what BM25
    and a match count: the kind's words describe what a memory is, not what it says) and its
    length in tokens over all seven columns (as FTS5's ``bm25()`` measures it)."""

    __slots__ = ("columns", "counts", "length")

    def __init__(self, fields: tuple[str, ...]) -> None:
        self.columns = [tuple(stemmed_tokens(field)) for field in fields]
        self.counts = Counter(
            t for i, column in enumerate(self.columns) if i != KIND_COLUMN for t in column
        )
        self.length = sum(len(column) for column in self.columns)

    def count(self, phrase: tuple[str, ...]) -> int:
        """Occurrences of ``phrase`` within a column other than the kind (a phrase never
        spans two columns)."""
        if len(phrase) == 1:
            return self.counts.get(phrase[0], 0)
        if any(t not in self.counts for t in phrase):
            return 0
        return sum(
            _occurrences(column, phrase)
            for i, column in enumerate(self.columns)
            if i != KIND_COLUMN
        )


def _occurrences(column: tuple[str, ...], phrase: tuple[str, ...]) -> int:
    """How often ``phrase`` occurs in one column's tokens."""
    size = len(phrase)
    return sum(1 for i in range(len(column) - size + 1) if column[i : i + size] == phrase)


def content_matches(
    records: Sequence[Candidate], phrases: Sequence[tuple[str, ...]]
) -> tuple[list[Candidate], dict[str, frozenset[str]]]:
    """The records holding one of the stemmed ``phrases`` (:func:`match_terms`) in what they
    say (text, tags, files, symbols, source), not only in the words of their kind: "which
    project owns billing" is no match for every ``project_fact``. With them, per kept record,
    the phrases' terms its text holds (as :func:`held_terms`), from the same pass. (BM25
    counts no term of the kind either, so every record it scores is kept.)"""
    terms = frozenset(t for phrase in phrases for t in phrase)
    out = []
    held = {}
    for record in records:
        doc = document(record_fields(record))
        if any(doc.count(phrase) for phrase in phrases):
            out.append(record)
            held[record.id] = terms.intersection(doc.columns[0])  # the text's terms
    return out, held


@functools.lru_cache(maxsize=65536)
def document(fields: tuple[str, ...]) -> _Document:
    """The stemmed document of a record's :func:`record_fields` (the last 65,536 are kept)."""
    return _Document(fields)


def stemmed_document(fields: tuple[str, ...]) -> _Document:
    """The same document, not kept: for one pass over many records (a store's feature
    table), whose documents would only fill the cache and the garbage collector's work."""
    return _Document(fields)

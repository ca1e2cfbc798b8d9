"""Full text in PostgreSQL that ranks exactly like SQLite's FTS5 (pure: no connection).

Documents. ``memory_items.fts`` is built here, not by a text-search configuration: the seven
FTS5 columns of a record (``fts_values``) are split the way FTS5's ``unicode61`` tokenizer
splits (runs of letters and digits, lower-cased, Latin diacritics removed), positions are
numbered with a one-position gap between columns (so a phrase never spans two columns) and
the literal is cast to ``tsvector``; ``fts_len`` is the token count. A recall's FTS5 ``MATCH``
string (quoted terms joined by ``OR``) is tokenized the same way and becomes a ``tsquery`` of
the same phrases (``'a' <-> 'b'`` for a multi-token term) joined by ``|``. The stemmed
``fts_porter`` weighs every position ``A`` but the kind column's (``D``), and the stemmed
channel matches and counts in ``ts_filter(fts_porter, '{a}')`` only, as SQLite's stemmed
``MATCH`` leaves out the kind column (``fts_len`` still counts every column's tokens).

Rank. The default rank (``fts_rank="bm25"``) is FTS5's ``bm25()`` recomputed from the same
statistics: ``idf = ln((N - n + 0.5) / (n + 0.5))`` (``1e-6`` when not positive) per phrase,
with ``N`` the number of rows and ``n`` the rows containing the phrase (GIN counts over the
whole table, tombstones included, like FTS5), phrase frequencies from the ``tsvector``
positions, the row length in tokens and the average row length, ``k1 = 1.2``, ``b = 0.75``;
ties by ``seq``. The row and token totals live in ``memory_fts_stats``, one row per scope key,
and a query sums the rows it can see (every row; under row-level security, those of the
role's scopes, the same rows its document counts see).
It differs from SQLite only where a ``tsvector`` cannot hold what FTS5 holds: a lexeme keeps
at most 256 positions and positions stop at 16383, and tokens longer than 2046 bytes are
left out (far beyond the 500-character durable texts). Measured with the evaluator
(``evaluate_fixtures``), every run of the bundled golden fixtures (105) and of the reference
ones (24) retrieves the same ids with the same scores as SQLite
(``tests/integration/test_postgres_store.py`` pins this). ``fts_rank="ts_rank_cd"`` ranks by
PostgreSQL's cover density instead (no IDF, no length normalisation): on the same fixtures
it keeps the pass counts (91/105, 15/24) and the retrieved ids, but 21 + 3 runs get other
scores because the full-text order bonus moves.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from swarmmem.adapters.storage.sql.rows import fts_values
from swarmmem.core.recall.bm25 import KIND_COLUMN
from swarmmem.core.recall.stemming import fts_tokens, stemmed_tokens

BM25_K1 = 1.2
BM25_B = 0.75
FTS_RANKS = ("bm25", "ts_rank_cd")
MAX_LEXEME_BYTES = 2046
MAX_POSITION = 16383
MAX_POSITIONS_PER_LEXEME = 256
_PHRASE = re.compile(r'"((?:[^"]|"")*)"')

#: the columns a candidate query reads of each scoped row (see :func:`candidate_query`)
CANDIDATE_COLUMNS = "id, row_version, expires_at, seq, fts_len, fts, updated_at"
#: the weight of the stemmed ``tsvector``'s positions outside the kind column (the kind's
#: keep the default ``D``): the stemmed channel reads only these, as SQLite's stemmed
#: ``MATCH`` reads every column but the kind, while ``fts_len`` counts every column
CONTENT_WEIGHT = "A"
#: the same, reading the stemmed ``tsvector`` (as ``fts``)
STEMMED_CANDIDATE_COLUMNS = (
    "id, row_version, expires_at, seq, fts_len, fts_porter AS fts, updated_at"
)
#: what :func:`candidate_query` ranks of each index's ``fts``: all of the reference's, and
#: the stemmed one's positions outside the kind column
RANKED_VECTORS = {False: "fts", True: "ts_filter(fts, '{a}')"}
#: row count, token total and, per ``tsquery`` of the parameter, the rows it matches
STATS_SQL = (
    "SELECT COALESCE(sum(s.row_count), 0), COALESCE(sum(s.token_count), 0), ARRAY(SELECT "
    "(SELECT count(*) FROM memory_items m WHERE {match}) FROM unnest(?::tsquery[]) WITH "
    "ORDINALITY AS t(q, o) ORDER BY t.o) FROM memory_fts_stats s"
)
#: per index, the rows a ``tsquery`` ``t.q`` matches for :data:`STATS_SQL`: the reference's
#: ``fts``, and the stemmed one outside the kind column (the GIN index of ``fts_porter``
#: finds the rows, the filtered vector keeps those matching beyond the kind)
STATS_MATCH = {
    False: "m.fts @@ t.q",
    True: "m.fts_porter @@ t.q AND ts_filter(m.fts_porter, '{a}') @@ t.q",
}
#: add a transaction's row and token changes of one scope key
ADJUST_STATS_SQL = (
    "INSERT INTO memory_fts_stats (scope_key, row_count, token_count) VALUES (?, ?, ?) "
    "ON CONFLICT (scope_key) DO UPDATE SET row_count = memory_fts_stats.row_count + "
    "excluded.row_count, token_count = memory_fts_stats.token_count + excluded.token_count"
)
#: the totals of every (visible) scope key counted afresh
RECOUNT_STATS_SQL = (
    "DELETE FROM memory_fts_stats",
    "INSERT INTO memory_fts_stats (scope_key, row_count, token_count) SELECT scope_key, "
    "count(*), COALESCE(sum(fts_len), 0) FROM memory_items GROUP BY scope_key",
)


def _quote_lexeme(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def fts_document(record: Mapping[str, Any], *, stemmed: bool = False) -> tuple[str, int]:
    """The ``tsvector`` literal and token count of a record in its JSON shape (``stemmed``:
    the ``porter unicode61`` terms, as SQLite's stemmed index holds them, every position
    weighted ``A`` but the kind column's, left at ``D``: see :data:`CONTENT_WEIGHT`)."""
    tokenize = stemmed_tokens if stemmed else fts_tokens
    positions: dict[str, list[str]] = {}
    last: dict[str, int] = {}
    position = 0
    count = 0
    for index, column in enumerate(fts_values(record)):
        weight = CONTENT_WEIGHT if stemmed and index != KIND_COLUMN else ""
        for token in tokenize(column):
            position += 1
            count += 1
            if len(token.encode("utf-8")) > MAX_LEXEME_BYTES:
                continue
            bucket = positions.setdefault(token, [])
            if len(bucket) < MAX_POSITIONS_PER_LEXEME:
                spot = min(position, MAX_POSITION)
                if last.get(token) != spot:
                    bucket.append(f"{spot}{weight}")
                    last[token] = spot
        position += 1  # a gap: no phrase spans two columns
    literal = " ".join(
        f"{_quote_lexeme(lexeme)}:{','.join(spots)}" for lexeme, spots in positions.items()
    )
    return literal, count


def match_phrases(fts_query: str, *, stemmed: bool = False) -> list[tuple[str, ...]]:
    """The phrases of an FTS5 ``MATCH`` string of quoted terms (empty phrases dropped),
    stemmed like the ``porter unicode61`` index when ``stemmed``.

    Anything that is not a quoted term list is read as whitespace-separated terms.
    """
    tokenize = stemmed_tokens if stemmed else fts_tokens
    quoted = _PHRASE.findall(fts_query)
    raw = [q.replace('""', '"') for q in quoted] if quoted else fts_query.split()
    phrases = []
    for term in raw:
        if term.upper() in ("OR", "AND", "NOT") and not quoted:
            continue
        tokens = tuple(tokenize(term))
        if tokens:
            phrases.append(tokens)
    return phrases


def phrase_tsquery(phrase: Sequence[str]) -> str:
    """One phrase as ``tsquery`` text (``'a' <-> 'b'``)."""
    return " <-> ".join(_quote_lexeme(t) for t in phrase)


def tsquery_text(phrases: Sequence[Sequence[str]]) -> str:
    """The phrases joined by ``|``."""
    return " | ".join(f"({phrase_tsquery(p)})" for p in phrases)


def phrase_frequency(positions: Mapping[str, Sequence[int]], phrase: Sequence[str]) -> int:
    """How often ``phrase`` occurs, from per-lexeme positions."""
    first = positions.get(phrase[0])
    if not first:
        return 0
    if len(phrase) == 1:
        return len(first)
    rest = [set(positions.get(t, ())) for t in phrase[1:]]
    return sum(1 for p in first if all(p + j + 1 in s for j, s in enumerate(rest)))


def phrase_frequencies(
    phrases: Sequence[Sequence[str]],
    lexemes: Sequence[str],
    counts: Sequence[int],
    positions: Mapping[str, Sequence[int]] | None,
) -> list[float]:
    """Per-phrase frequencies of one row: single tokens from ``counts`` (aligned with
    ``lexemes``), multi-token phrases from the row's ``positions``."""
    index = {lexeme: i for i, lexeme in enumerate(lexemes)}
    return [
        float(counts[index[p[0]]]) if len(p) == 1 else float(phrase_frequency(positions or {}, p))
        for p in phrases
    ]


def bm25_score(freqs: Sequence[float], length: int, idf: Sequence[float], avgdl: float) -> float:
    """FTS5's ``bm25()`` value (negative, lower is better) for one row."""
    score = 0.0
    for freq, weight in zip(freqs, idf, strict=True):
        score += weight * (
            (freq * (BM25_K1 + 1.0))
            / (freq + BM25_K1 * (1 - BM25_B + BM25_B * float(length) / avgdl))
        )
    return -1.0 * score


def bm25_idf(rows: int, hits: int) -> float:
    """FTS5's IDF of a phrase found in ``hits`` of ``rows`` rows (``1e-6`` when not positive,
    also for totals that cannot be: fewer rows than hits)."""
    ratio = (rows - hits + 0.5) / (hits + 0.5)
    return math.log(ratio) if ratio > 1.0 else 1e-6


def query_lexemes(phrases: Sequence[Sequence[str]]) -> list[str]:
    """The distinct tokens of ``phrases``, sorted (the order of a row's ``counts``)."""
    return sorted({t for p in phrases for t in p})


def candidate_query(
    scoped: str,
    params: Sequence[Any],
    phrases: Sequence[Sequence[str]],
    fts_rank: str,
    vector: str = RANKED_VECTORS[False],
    *,
    matching_only: bool = False,
) -> tuple[str, list[Any]]:
    """The ranking query over the scoped query (``CANDIDATE_COLUMNS``, ``?`` placeholders),
    matching and counting in ``vector`` (an expression of the scoped ``fts``).

    Each row: ``id, row_version, expires_at, seq, fts_len``, then for rows matching the
    ``tsquery`` the occurrences of each query lexeme (aligned with :func:`query_lexemes`,
    else NULL), the ``ts_rank_cd`` value (or NULL) and, only when a phrase has several
    tokens, the positions of the query's lexemes as JSON. ``matching_only`` keeps only the
    matching rows (the scoped query must have no ``LIMIT``: the match is pushed into it, so
    the GIN index finds the rows instead of a read of the whole scope).
    """
    if not phrases:
        statement = (
            f"WITH scoped AS ({scoped}) SELECT id, row_version, expires_at, 0, 0, NULL, "
            "NULL, NULL FROM scoped ORDER BY updated_at DESC, id ASC"
        )
        return statement, list(params)
    tsquery = tsquery_text(phrases)
    lexemes = query_lexemes(phrases)
    rank_sql = f"ts_rank_cd({vector}, ?::tsquery)" if fts_rank == "ts_rank_cd" else "NULL"
    phrase_positions = any(len(p) > 1 for p in phrases)
    positions_sql = (
        f"CASE WHEN {vector} @@ ?::tsquery THEN (SELECT jsonb_object_agg(u.lexeme, "
        f"u.positions) FROM unnest({vector}) u WHERE u.lexeme = ANY(?)) END"
        if phrase_positions
        else "NULL"
    )
    statement = (
        f"WITH scoped AS ({scoped}) "
        f"SELECT id, row_version, expires_at, seq, fts_len, CASE WHEN {vector} @@ "
        "?::tsquery THEN ARRAY(SELECT COALESCE(array_length(u.positions, 1), 0) "
        "FROM unnest(?::text[]) WITH ORDINALITY AS l(lexeme, o) LEFT JOIN "
        f"unnest({vector}) u ON u.lexeme = l.lexeme ORDER BY l.o) END, "
        f"{rank_sql}, {positions_sql} FROM scoped "
        + (f"WHERE fts @@ ?::tsquery AND {vector} @@ ?::tsquery " if matching_only else "")
        + "ORDER BY updated_at DESC, id ASC"
    )
    args = [*params, tsquery, lexemes]
    if fts_rank == "ts_rank_cd":
        args.append(tsquery)
    if phrase_positions:
        args.extend([tsquery, lexemes])
    if matching_only:
        args.extend([tsquery, tsquery])
    return statement, args


def rank_by_cover_density(hits: Sequence[Sequence[Any]], limit: int) -> list[str]:
    """Ids of the matching rows of :func:`candidate_query`, best ``ts_rank_cd`` first."""
    ranked = sorted(hits, key=lambda r: (-float(r[6]), int(r[3])))
    return [r[0] for r in ranked[:limit]]


def rank_by_bm25(
    hits: Sequence[Sequence[Any]],
    phrases: Sequence[Sequence[str]],
    rows: int,
    tokens: int,
    counts: Sequence[int],
    limit: int,
) -> list[tuple[str, float]]:
    """Ids of the matching rows of :func:`candidate_query` with their relevance
    (``-bm25()``), best first (ties by ``seq``), given the table's row and token totals and
    each phrase's document count."""
    idf = [bm25_idf(rows, n) for n in counts]
    avgdl = tokens / rows if rows > 0 and tokens > 0 else 1.0
    lexemes = query_lexemes(phrases)
    scored = [
        (bm25_score(phrase_frequencies(phrases, lexemes, r[5], r[7]), r[4], idf, avgdl), int(r[3]))
        for r in hits
    ]
    order = sorted(range(len(hits)), key=lambda i: scored[i])
    return [(hits[i][0], -scored[i][0]) for i in order[:limit]]

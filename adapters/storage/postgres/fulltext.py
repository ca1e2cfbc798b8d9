"""PostgreSQL's item rows and full text: ``tsvector`` columns of ``memory_items``, ranked here.

Each item row carries its literal and stemmed documents (``fts``, ``fts_porter``) and its
length (``fts_len``); BM25 needs the totals of the rows a role sees, kept per scope key in
``memory_fts_stats`` and adjusted once per transaction, at commit (see :mod:`.text_search`).
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from typing import Any

import attrs
import psycopg

from swarmmem.adapters.storage.base import Preselection
from swarmmem.adapters.storage.postgres.database import PgTxState, PostgresDatabase
from swarmmem.adapters.storage.postgres.notify import FtsStats, NotifiedCaches
from swarmmem.adapters.storage.postgres.text_search import (
    ADJUST_STATS_SQL,
    CANDIDATE_COLUMNS,
    FTS_RANKS,
    RANKED_VECTORS,
    RECOUNT_STATS_SQL,
    STATS_MATCH,
    STATS_SQL,
    STEMMED_CANDIDATE_COLUMNS,
    candidate_query,
    fts_document,
    match_phrases,
    phrase_tsquery,
    rank_by_bm25,
    rank_by_cover_density,
)
from swarmmem.adapters.storage.sql import (
    CACHE_LIMIT,
    FullTextHits,
    TextIndex,
    TxState,
    list_query,
)
from swarmmem.adapters.storage.sql.rows import ITEM_UPDATE, ITEM_WRITE_COLUMNS, ITEM_WRITE_COUNT
from swarmmem.core.model.errors import ConfigError
from swarmmem.core.model.ids import iso_to_ms
from swarmmem.core.model.semantics import StoredRow, passes_parsed_expiry

_UPSERT_SQL = (
    "WITH old AS (SELECT fts_len, scope_key FROM memory_items WHERE id = ?) "
    f"INSERT INTO memory_items ({ITEM_WRITE_COLUMNS}, fts, fts_len, fts_porter) "
    f"VALUES ({', '.join('?' * ITEM_WRITE_COUNT)}, ?::tsvector, ?, ?::tsvector) "
    f"ON CONFLICT (id) DO UPDATE SET {ITEM_UPDATE}, fts = excluded.fts, "
    "fts_len = excluded.fts_len, fts_porter = excluded.fts_porter, "
    "row_version = excluded.row_version "
    "RETURNING valid_from, supersedes_reason, (SELECT fts_len FROM old), "
    "(SELECT scope_key FROM old)"
)


class TsvectorIndex(TextIndex):
    """Item rows with their ``tsvector`` documents, and the BM25 (or ``ts_rank_cd``) rank.

    Args:
        db: the database.
        caches: where the statistics are cached between transactions.
        fts_rank: ``"bm25"`` (FTS5's formula, the default) or ``"ts_rank_cd"``.
    """

    def __init__(self, db: PostgresDatabase, caches: NotifiedCaches, fts_rank: str) -> None:
        if fts_rank not in FTS_RANKS:
            raise ConfigError(f"fts_rank must be one of {', '.join(FTS_RANKS)}; got {fts_rank!r}")
        self.db: PostgresDatabase = db
        self.caches = caches
        self.fts_rank = fts_rank

    # -- writes ----------------------------------------------------------------------------

    def write_item(
        self, conn: Any, row: StoredRow, params: tuple[Any, ...]
    ) -> tuple[str | None, str | None]:
        literal, length = fts_document(row.data)
        stemmed, _ = fts_document(row.data, stemmed=True)
        valid_from, supersedes_reason, old_length, old_key = self.db.execute(
            conn, _UPSERT_SQL, (row.id, *params, literal, length, stemmed)
        ).fetchone()
        state = self.db.totals
        if old_key is not None:
            state.add(old_key, -1, -int(old_length))
        state.add(row.scope_key, 1, length)
        return valid_from, supersedes_reason

    def erase_item(self, conn: Any, memory_id: str) -> None:
        length, scope_key = self.db.execute(
            conn,
            "DELETE FROM memory_items WHERE id = ? RETURNING fts_len, scope_key",
            (memory_id,),
        ).fetchone()
        self.db.totals.add(scope_key, -1, -int(length))

    def insert_item_rows(
        self, conn: Any, columns: Sequence[str], rows: builtins.list[tuple[Any, ...]]
    ) -> None:
        """Item rows copied from another store, with their literal documents (the stemmed
        ones and the totals follow in :meth:`after_bulk_load` and the backfills)."""
        full = []
        at = list(columns).index("record_json")
        for row in rows:
            try:
                data = json.loads(row[at])
            except ValueError:
                data = {}
            literal, length = fts_document(data if isinstance(data, dict) else {})
            full.append((*row, literal, length))
        marks = ", ".join("?" for _ in columns)
        self.db.executemany(
            conn,
            f"INSERT INTO memory_items ({', '.join(columns)}, fts, fts_len) "
            f"VALUES ({marks}, ?::tsvector, ?)",
            full,
        )

    def after_bulk_load(self, conn: Any) -> None:
        for statement in RECOUNT_STATS_SQL:
            conn.execute(statement)
        conn.execute("ANALYZE memory_items")  # planner statistics for the bulk-loaded rows

    def write_totals(self, conn: Any, state: TxState) -> None:
        """Add the transaction's full-text totals (a ``before_commit`` hook).

        The chain head and the totals are single hot rows; writing them once per transaction
        instead of once per write keeps a bulk import linear instead of quadratic.
        """
        assert isinstance(state, PgTxState)
        changed = [(key, *delta) for key, delta in state.deltas.items() if delta != (0, 0)]
        if changed:
            self.db.executemany(conn, ADJUST_STATS_SQL, changed)
        state.deltas = {}

    # -- search ----------------------------------------------------------------------------

    def _statistics(
        self, conn: Any, phrases: Sequence[tuple[str, ...]], *, stemmed: bool = False
    ) -> tuple[FtsStats, builtins.list[int]]:
        """Row count, token total and per-phrase document counts (cached between writes)."""
        caches = self.caches
        caching = caches.caching()
        with caches.lock:
            stats = caches.stats if caching else None
            known = dict(caches.df) if caching else {}
        keys = [(stemmed, p) for p in phrases]
        wanted = [k for k in dict.fromkeys(keys) if k not in known]
        if stats is None or wanted:
            generation = caches.generation
            row = self.db.execute(
                conn,
                STATS_SQL.format(match=STATS_MATCH[stemmed]),
                ([phrase_tsquery(p) for _, p in wanted],),
            ).fetchone()
            state = self.db.totals
            pending = state.pending() if state.conn is conn else (0, 0)
            stats = FtsStats(rows=int(row[0]) + pending[0], tokens=int(row[1]) + pending[1])
            known.update(zip(wanted, (int(n) for n in row[2]), strict=True))
            if caching:
                with caches.lock:
                    if caches.generation == generation:
                        caches.stats = stats
                        if len(caches.df) > CACHE_LIMIT:
                            caches.df.clear()
                        caches.df.update({p: known[p] for p in wanted})
        return stats, [known[k] for k in keys]

    def search(self, conn: Any, want: Preselection, *, cached: bool) -> FullTextHits | None:
        """The scoped rows with, for those matching the ``tsquery``, what the rank needs;
        ranks are computed here (see :mod:`.text_search`); the rows' versions are read with
        every search (``cached`` changes nothing)."""
        flt, fts_query, limit, stemmed = want.flt, want.fts_query, want.limit, want.stemmed
        columns = STEMMED_CANDIDATE_COLUMNS if stemmed else CANDIDATE_COLUMNS
        query = list_query(self.db.dialect, flt, columns)
        if query is None:
            return FullTextHits([], [], {})
        phrases = match_phrases(fts_query, stemmed=stemmed)
        # without a cap on the scope only the matching rows are read (through the GIN index)
        matching = flt.limit is None and bool(phrases)
        statement, args = candidate_query(
            *query, phrases, self.fts_rank, RANKED_VECTORS[stemmed], matching_only=matching
        )
        try:
            rows = self.db.execute(conn, statement, args).fetchall()
        except psycopg.errors.SyntaxError as exc:
            if self.db.state.conn is not None:
                raise
            self.enabled = False
            self.disabled_reason = f"full-text search failed and is off for this store: {exc}"
            return None
        if not flt.include_expired:
            now_ms = iso_to_ms(flt.now)
            rows = [r for r in rows if passes_parsed_expiry(r[2], now_ms)]
        hits = [r for r in rows if r[5] is not None]
        versions = {r[0]: int(r[1]) for r in rows}
        if not hits and matching:  # nothing matched: one scoped id says the scope holds rows
            probe = list_query(self.db.dialect, attrs.evolve(flt, limit=1), "id")
            assert probe is not None
            found = self.db.execute(conn, *probe).fetchall()
            return FullTextHits([r[0] for r in found], [], {})
        if not hits:
            return FullTextHits([r[0] for r in rows], [], versions)
        if self.fts_rank == "ts_rank_cd" and not stemmed:
            ranked = rank_by_cover_density(hits, limit)
            return FullTextHits([r[0] for r in rows], ranked, versions)
        stats, counts = self._statistics(conn, phrases, stemmed=stemmed)
        scored = rank_by_bm25(hits, phrases, stats.rows, stats.tokens, counts, limit)
        return FullTextHits(
            [r[0] for r in rows],
            [memory_id for memory_id, _ in scored],
            versions,
            dict(scored) if stemmed else None,
        )

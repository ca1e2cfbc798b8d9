"""SQLite's item rows and full text: the FTS5 tables beside ``memory_items``.

Full text lives in ``memory_items_fts`` (the reference's ``unicode61`` index) and
``memory_items_fts_porter`` (the same columns stemmed, ``porter unicode61``), both rewritten on
every write, tombstones included. Full-text rows share the ``rowid`` of their ``memory_items``
row so that a rewrite is a point delete; on open the alignment and the row counts are checked
and the index rebuilt when they disagree (for example after a write by another
implementation). A purge merges the index (its old segments still hold the erased terms).
"""

from __future__ import annotations

import contextlib
import json
import secrets
from collections.abc import Iterator, Mapping, Sequence
from sys import intern
from typing import Any

from swarmmem.adapters.storage.base import Preselection
from swarmmem.adapters.storage.sql import (
    CACHE_LIMIT,
    Database,
    FullTextHits,
    TextIndex,
    Written,
    list_query,
)
from swarmmem.adapters.storage.sql.rows import (
    ITEM_COLUMNS,
    ITEM_UPDATE,
    ITEM_WRITE_COLUMNS,
    ITEM_WRITE_COUNT,
    fts_values,
    item_params,
)
from swarmmem.core.model.ids import iso_to_ms
from swarmmem.core.model.semantics import (
    ListFilter,
    StoredRow,
    dumps,
    passes_parsed_expiry,
    passes_sql_expiry,
)

#: the page cache of a bulk write, in KiB (SQLite's default is 2 MiB)
BULK_CACHE_KIB = 32 * 1024
FTS_TABLE = "memory_items_fts"
#: the stemmed index: the same columns, tokenized ``porter unicode61``
PORTER_FTS_TABLE = "memory_items_fts_porter"
#: the stemmed channel's ``MATCH``: every column but the kind, so that ``bm25()`` counts a
#: phrase's rows and occurrences there only (its words, "project fact", say what a memory is,
#: not what it says), while a row's length stays its tokens in all columns
STEMMED_MATCH = "- kind : ({query})"
_FTS_COLUMNS = (
    "id UNINDEXED, text, tags, kind, source_file_path, source_ref, metadata_symbols, metadata_files"
)
FTS_TABLE_SQL = f"CREATE VIRTUAL TABLE IF NOT EXISTS {FTS_TABLE} USING fts5({_FTS_COLUMNS})"
PORTER_FTS_TABLE_SQL = (
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {PORTER_FTS_TABLE} USING fts5({_FTS_COLUMNS}, "
    "tokenize = 'porter unicode61')"
)

# the item columns and a fresh ``row_version`` (:func:`new_row_version`) after them
_WRITE_COLUMNS = f"{ITEM_WRITE_COLUMNS}, row_version"
_UPDATE = f"{ITEM_UPDATE}, row_version = excluded.row_version"
_UPSERT_SQL = (
    f"INSERT INTO memory_items ({_WRITE_COLUMNS}) "
    f"VALUES ({', '.join('?' * (ITEM_WRITE_COUNT + 1))}) "
    f"ON CONFLICT(id) DO UPDATE SET {_UPDATE} RETURNING rowid, valid_from, supersedes_reason"
)
# the batch upsert: ``_UPSERT_SQL`` without RETURNING, as the head and tail of its VALUES
_UPSERT_MANY_HEAD = f"INSERT INTO memory_items ({_WRITE_COLUMNS})"
_UPSERT_MANY_TAIL = f" ON CONFLICT(id) DO UPDATE SET {_UPDATE}"
#: the item columns that are often None (``expires_at``, ``superseded_by``, ``valid_from``,
#: ``supersedes_reason``)
_ITEM_NULLABLE = tuple(
    ITEM_WRITE_COLUMNS.split(", ").index(column)
    for column in ("expires_at", "superseded_by", "valid_from", "supersedes_reason")
)
_TOP_ROWID_SQL = "SELECT max(rowid) FROM memory_items"
_VALID_FROM = ITEM_WRITE_COLUMNS.split(", ").index("valid_from")
_SUPERSEDES_REASON = ITEM_WRITE_COLUMNS.split(", ").index("supersedes_reason")
_ROWIDS_SQL = "SELECT rowid FROM memory_items WHERE id IN (SELECT value FROM json_each(?))"
_WRITTEN_SQL = (
    "SELECT rowid, id, valid_from, supersedes_reason FROM memory_items "
    "WHERE id IN (SELECT value FROM json_each(?))"
)
_FTS_INSERT_SQL = (
    "INSERT INTO {table} (rowid, id, text, tags, kind, source_file_path, source_ref, "
    "metadata_symbols, metadata_files) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_FTS_SELECT_SQL = (
    "SELECT id, bm25({table}) AS rank FROM {table} WHERE {table} "
    "MATCH ? AND id IN (SELECT value FROM json_each(?)) ORDER BY rank ASC LIMIT ?"
)
_FTS_TABLES = (FTS_TABLE, PORTER_FTS_TABLE)
#: how many rows a table holds and the sum of their rowids (an index agrees with its items)
_ROWS_SQL = "SELECT COUNT(*), TOTAL(rowid) FROM {table}"
#: what a hit's scope filter and ordering read of its item row
_HIT_COLUMNS = (
    "rowid",
    "id",
    "scope_key",
    "kind",
    "superseded_by",
    "deleted",
    "expires_at",
    "updated_at",
    "text_terms",
)
#: a window of the index's best matches (``LIMIT ? OFFSET ?``) in BM25 order, ties by rowid,
#: each with its item row: no id list goes back and forth between Python and SQLite
_FTS_RANKED_TAIL = (
    " FROM (SELECT rowid AS hit, bm25({table}) AS score FROM {table} WHERE {table} MATCH ? "
    "ORDER BY score, hit LIMIT ? OFFSET ?) AS f "
    "LEFT JOIN memory_items AS m ON m.rowid = f.hit ORDER BY f.score, f.hit"
)
#: the hits with their item rows (``_HIT_COLUMNS``, the score, the version, then the
#: ``ITEM_COLUMNS`` after ``id``; the version ends an ``item_columns`` row) ...
_FTS_RANKED_SQL = (
    "SELECT "
    + ", ".join(f"m.{c}" for c in _HIT_COLUMNS)
    + ", f.score, m.row_version, "
    + ", ".join(f"m.{c}" for c in ITEM_COLUMNS.split(", ")[1:])
    + _FTS_RANKED_TAIL
)
#: ... or with their versions only (``NULL`` for an index row without its item): a caller
#: that cached rows reads only those it lacks, and the hits' columns come from
#: :attr:`Fts5Index.hit_rows`
_FTS_VERSIONS_SQL = "SELECT f.hit, f.score, m.row_version" + _FTS_RANKED_TAIL
#: the ``_HIT_COLUMNS`` and the version of the rows of a JSON list of rowids
_HIT_ROWS_SQL = (
    f"SELECT {', '.join(_HIT_COLUMNS)}, row_version FROM memory_items "
    "WHERE rowid IN (SELECT value FROM json_each(?))"
)
#: where the score, the version and the ``ITEM_COLUMNS`` after ``id`` are in a row of
#: ``_FTS_RANKED_SQL``
_TERMS_AT = _HIT_COLUMNS.index("text_terms")
_SCORE_AT = len(_HIT_COLUMNS)
_VERSION_AT = _SCORE_AT + 1
_ITEM_AT = _VERSION_AT + 1
#: how many of the index's best matches a recall reads per wanted hit, first to last try
_WINDOWS = (1, 2, 16)


def new_row_version() -> int:
    """A fresh ``memory_items.row_version``: random from the system's source (no seed, no
    fork repeats it), so that no two writes (a rolled-back one included, or another
    process's) leave a row with a version a cache has seen; never 0, the version of rows
    written before versions were kept."""
    return secrets.randbits(62) + 1


def _hit_columns(row: Sequence[Any]) -> tuple[Any, ...]:
    """The ``_HIT_COLUMNS`` that start ``row``, its stored ``text_terms`` split into a set
    (``None`` when the row has none): kept per row version, so that a recall finds which
    query terms a hit holds by a set intersection. The terms are interned: rows share most
    of them (about 1 KB a kept row instead of 1.7)."""
    terms = row[_TERMS_AT]
    return (*row[:_TERMS_AT], None if terms is None else frozenset(map(intern, terms.split())))


class _FullTextFailed(Exception):
    """A full-text query failed (its cause is the driver error)."""


class Fts5Index(TextIndex):
    """Item rows and both FTS5 indexes of one SQLite database."""

    def __init__(self, db: Database, errors: type[BaseException]) -> None:
        self.db = db
        #: the driver's error class (a failed ``MATCH`` turns full text off)
        self._errors = errors
        #: per rowid, the ``_HIT_COLUMNS`` of its item row last read and that row's version:
        #: a later hit of the same version is that same row (every write renews the version,
        #: see :func:`new_row_version`), so a recall that has cached rows reads only versions
        self.hit_rows: dict[int, tuple[tuple[Any, ...], Any]] = {}

    # -- opening ---------------------------------------------------------------------------

    def open(self, conn: Any) -> None:
        """Create the indexes, or rebuild them when they disagree with ``memory_items``: another
        number of rows, or rows at other rowids (an index row of ours has its item's rowid; the
        reference implementation writes its index rows by id, and SQLite numbers them anew).
        Two sums, no join: every prompt hook opens the store."""
        db = self.db
        if not all(db.table_exists(conn, table) for table in _FTS_TABLES):
            with db.transaction():
                conn.execute(FTS_TABLE_SQL)
                conn.execute(PORTER_FTS_TABLE_SQL)
                self.rebuild_rows(conn)
            return
        items = tuple(conn.execute(_ROWS_SQL.format(table="memory_items")).fetchone())
        for table in _FTS_TABLES:
            # FTS5 keeps one row per document, keyed by its rowid, in its ``_docsize`` shadow
            # table: counted there, the texts are not read
            sizes = f"{table}_docsize"
            counted = sizes if db.table_exists(conn, sizes) else table
            if tuple(conn.execute(_ROWS_SQL.format(table=counted)).fetchone()) != items:
                self.rebuild()
                return

    def rebuild(self) -> int:
        """Rebuild both full-text indexes from ``memory_items``; returns the rows indexed."""
        with self.db.guard(), self.db.transaction():
            return self.rebuild_rows(self.db.tx_conn())

    def rebuild_rows(self, conn: Any) -> int:
        for table in _FTS_TABLES:
            conn.execute(f"DELETE FROM {table}")
        count = 0
        for rowid, memory_id, record_json in conn.execute(
            "SELECT rowid, id, record_json FROM memory_items"
        ).fetchall():
            try:
                data = json.loads(record_json)
            except ValueError:
                data = {}
            values = fts_values(data if isinstance(data, Mapping) else {})
            for table in _FTS_TABLES:
                conn.execute(_FTS_INSERT_SQL.format(table=table), (rowid, memory_id, *values))
            count += 1
        return count

    def after_bulk_load(self, conn: Any) -> None:
        self.rebuild_rows(conn)

    # -- writes ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _bigger_cache(self) -> Iterator[None]:
        """A page cache of at least ``BULK_CACHE_KIB`` while a bulk write runs (then the one
        the connection had), so that the indexes of a large store stay in memory as the rows
        go in; what is written and when it is durable do not change."""
        self.db.check_open()
        conn = self.db.acquire()
        before = int(conn.execute("PRAGMA cache_size").fetchone()[0])
        # a negative size is in KiB, a positive one in pages
        page_kib = int(conn.execute("PRAGMA page_size").fetchone()[0]) / 1024
        if (-before if before < 0 else before * page_kib) >= BULK_CACHE_KIB:
            yield
            return
        conn.execute(f"PRAGMA cache_size = {-BULK_CACHE_KIB}")
        try:
            yield
        finally:
            conn.execute(f"PRAGMA cache_size = {before}")

    def bulk(self) -> contextlib.AbstractContextManager[None]:
        return self._bigger_cache()

    def write_item(
        self, conn: Any, row: StoredRow, params: tuple[Any, ...]
    ) -> tuple[str | None, str | None]:
        rowid, valid_from, supersedes_reason = conn.execute(
            _UPSERT_SQL, (*params, new_row_version())
        ).fetchone()
        values = fts_values(row.data)
        for table in _FTS_TABLES:
            conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
            conn.execute(_FTS_INSERT_SQL.format(table=table), (rowid, row.id, *values))
        return valid_from, supersedes_reason

    def write_rows(
        self, conn: Any, rows: Sequence[StoredRow], versions: Sequence[str]
    ) -> list[Written]:
        """One batch of item rows (distinct ids): ``executemany`` for the rows, one pass over
        the full-text index (old entries out, new ones in), the stored columns read back."""
        params = [
            (*item_params(row, version), new_row_version())
            for row, version in zip(rows, versions, strict=True)
        ]
        ids = dumps([row.id for row in rows])
        old = [(found[0],) for found in conn.execute(_ROWIDS_SQL, (ids,))]
        top = None if old else conn.execute(_TOP_ROWID_SQL).fetchone()[0] or 0
        self.db.insert_many(
            conn, _UPSERT_MANY_HEAD, params, nullable=_ITEM_NULLABLE, tail=_UPSERT_MANY_TAIL
        )
        if top is not None and conn.execute(_TOP_ROWID_SQL).fetchone()[0] == top + len(rows):
            # only new rows, each given the largest rowid plus one (SQLite's rule while the
            # largest possible rowid is unused): they hold top + 1 .. in order, and as no row
            # was rewritten, valid_from and supersedes_reason hold what was bound
            rowids: list[int] = list(range(top + 1, top + 1 + len(rows)))
            written = [
                (version, values[_VALID_FROM], values[_SUPERSEDES_REASON])
                for version, values in zip(versions, params, strict=True)
            ]
        else:
            stored = {found[1]: found for found in conn.execute(_WRITTEN_SQL, (ids,))}
            rowids = [stored[row.id][0] for row in rows]
            written = [
                (version, *stored[row.id][2:]) for row, version in zip(rows, versions, strict=True)
            ]
        fts_rows = [
            (rowid, row.id, *fts_values(row.data)) for rowid, row in zip(rowids, rows, strict=True)
        ]
        for table in _FTS_TABLES:
            if old:
                conn.executemany(f"DELETE FROM {table} WHERE rowid = ?", old)
            conn.executemany(_FTS_INSERT_SQL.format(table=table), fts_rows)
        return written

    def erase_item(self, conn: Any, memory_id: str) -> None:
        for table in _FTS_TABLES:
            conn.execute(
                f"DELETE FROM {table} WHERE rowid = (SELECT rowid FROM memory_items WHERE id = ?)",
                (memory_id,),
            )
        conn.execute("DELETE FROM memory_items WHERE id = ?", (memory_id,))

    def purge(self, conn: Any) -> None:
        for table in _FTS_TABLES:
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")

    # -- search ----------------------------------------------------------------------------

    def search(self, conn: Any, want: Preselection, *, cached: bool) -> FullTextHits | None:
        """FTS5's ``bm25()`` over the scoped items; only ids are read until the hits are known.

        Without a cap on the scope (``flt.limit``) the index's best matches are read first and
        filtered by scope (:meth:`_ranked`), so no list of scoped ids is built; ``scoped`` then
        holds the hits in list order, or one scoped id when nothing matched. The stemmed
        index is searched outside the kind column (:data:`STEMMED_MATCH`).
        """
        flt, fts_query, limit, stemmed = want.flt, want.fts_query, want.limit, want.stemmed
        if stemmed:
            fts_query = STEMMED_MATCH.format(query=fts_query)
        try:
            if flt.limit is None:
                found = self._ranked(
                    conn, flt, fts_query, limit, stemmed=stemmed, with_rows=not cached
                )
                if found is not None:
                    return found
            return self._listed(conn, flt, fts_query, limit, stemmed=stemmed)
        except _FullTextFailed as failed:
            self.enabled = False
            self.disabled_reason = (
                f"full-text search failed and is off for this store: {failed.__cause__}"
            )
            return None

    def _match(self, conn: Any, statement: str, params: Sequence[Any]) -> list[Any]:
        """Run a ``MATCH`` query; a failure (a query FTS5 refuses) is :class:`_FullTextFailed`."""
        try:
            return conn.execute(statement, params).fetchall()  # type: ignore[no-any-return]
        except self._errors as exc:
            raise _FullTextFailed from exc

    def _ranked(
        self,
        conn: Any,
        flt: ListFilter,
        fts_query: str,
        limit: int,
        *,
        stemmed: bool,
        with_rows: bool,
    ) -> FullTextHits | None:
        """The index's best matches filtered by scope afterwards, with their item rows
        (``with_rows``) or their versions.

        The first ``limit`` matches (in BM25 order) that pass the list filter are exactly the
        best ``limit`` among the scoped items; ``None`` when a window of the index's best
        matches did not hold that many (a scope that is a small part of a shared store).
        """
        scopes = None if flt.scope_keys is None else frozenset(flt.scope_keys)
        kinds = None if flt.kinds is None else frozenset(flt.kinds)
        now_ms = None if flt.include_expired else iso_to_ms(flt.now)
        inactive = flt.include_inactive
        ranked_sql = (_FTS_RANKED_SQL if with_rows else _FTS_VERSIONS_SQL).format(
            table=PORTER_FTS_TABLE if stemmed else FTS_TABLE
        )
        hits: list[Any] = []
        read = 0  # matches read so far; each window reads the next ones only
        for factor in _WINDOWS:
            window = max(limit, 1) * factor
            rows = self._match(conn, ranked_sql, (fts_query, window - read, read))
            complete = len(rows) < window - read  # every match was read
            if with_rows:
                rows = self._remember(rows)
            else:
                rows = self._with_hit_columns(conn, rows)
            for row in rows:
                _rowid, memory_id, scope_key, kind, superseded_by, deleted, expires_at = row[:7]
                if (
                    memory_id is None  # an index row without its item is skipped
                    or (scopes is not None and scope_key not in scopes)
                    or (kinds is not None and kind not in kinds)
                    or not (inactive or (superseded_by is None and not deleted))
                ):
                    continue
                if expires_at is None or (
                    (flt.include_expired or passes_sql_expiry(expires_at, flt.now))
                    and passes_parsed_expiry(expires_at, now_ms)
                ):
                    hits.append(row)
            read = window
            if len(hits) >= limit or complete:
                break
        else:
            return None
        hits = hits[:limit]
        if not hits:  # is the scope empty? (read ids until one passes the expiry test)
            query = list_query(self.db.dialect, flt, "id, expires_at")
            for row in conn.execute(*query) if query is not None else ():
                if passes_parsed_expiry(row[1], now_ms):
                    return FullTextHits([row[0]], [], {})
            return FullTextHits([], [], {})
        listed = sorted(hits, key=lambda row: row[1])
        listed.sort(key=lambda row: row[7], reverse=True)
        scores = {row[1]: -float(row[_SCORE_AT]) for row in hits} if stemmed else None
        terms = {row[1]: row[_TERMS_AT] for row in hits} if stemmed else None
        ranked = [row[1] for row in hits]
        if not with_rows:
            versions = {row[1]: row[_VERSION_AT] for row in hits}
            return FullTextHits([row[1] for row in listed], ranked, versions, scores, terms)
        items = {row[1]: (row[1], *row[_ITEM_AT:], row[_VERSION_AT]) for row in hits}
        return FullTextHits([row[1] for row in listed], ranked, {}, scores, terms, items)

    def forget(self) -> None:
        self.hit_rows.clear()

    def _remember(self, rows: Sequence[Any]) -> list[Any]:
        """``rows`` of ``_FTS_RANKED_SQL`` with their stored terms as sets (see
        :func:`_hit_columns`), their hit columns and versions kept."""
        read = {}
        out = []
        for row in rows:
            if row[1] is None:  # an index row without its item
                out.append(row)
                continue
            columns = _hit_columns(row)
            read[row[0]] = (columns, row[_VERSION_AT])
            out.append((*columns, *row[_SCORE_AT:]))
        self._keep(read)
        return out

    def _keep(self, read: Mapping[int, tuple[tuple[Any, ...], Any]]) -> None:
        """Keep ``read`` in :attr:`hit_rows` (emptied first when it would outgrow the
        store's cache limit)."""
        known = self.hit_rows
        if len(known) + len(read) > CACHE_LIMIT:
            known.clear()
        known.update(read)

    def _with_hit_columns(self, conn: Any, hits: Sequence[Any]) -> list[Any]:
        """The ``(rowid, score, version)`` ``hits`` as rows of ``_FTS_RANKED_SQL``'s head
        (``_HIT_COLUMNS``, score, version), in order: from :attr:`hit_rows` when the version
        is the one kept, else read (all in one statement) and kept. A hit without its item
        row, or whose row is gone by then, is left out."""
        known = self.hit_rows
        kept = [None if version is None else known.get(hit) for hit, _score, version in hits]
        stale = [
            hit
            for (hit, _score, version), row in zip(hits, kept, strict=True)
            if version is not None and (row is None or row[1] != version)
        ]
        read = {}
        if stale:
            for row in self._match(conn, _HIT_ROWS_SQL, (dumps(stale),)):
                read[row[0]] = (_hit_columns(row), row[_SCORE_AT])
            self._keep(read)
        out = []
        for (hit, score, version), row in zip(hits, kept, strict=True):
            if version is None:
                continue
            if row is None or row[1] != version:
                row = read.get(hit)
                if row is None:  # deleted since the match
                    continue
            out.append((*row[0], score, row[1]))
        return out

    def _listed(
        self, conn: Any, flt: ListFilter, fts_query: str, limit: int, *, stemmed: bool
    ) -> FullTextHits:
        """Every scoped id listed first, then FTS5 over them (a capped scope)."""
        query = list_query(self.db.dialect, flt, "id, expires_at")
        if query is None:
            return FullTextHits([], [], {})
        rows = conn.execute(*query).fetchall()
        now_ms = None if flt.include_expired else iso_to_ms(flt.now)
        scoped = [row[0] for row in rows if passes_parsed_expiry(row[1], now_ms)]
        if not scoped:
            return FullTextHits([], [], {})
        table = PORTER_FTS_TABLE if stemmed else FTS_TABLE
        statement = _FTS_SELECT_SQL.format(table=table)
        hits = self._match(conn, statement, (fts_query, dumps(scoped), limit))
        scores = {row[0]: -float(row[1]) for row in hits} if stemmed else None
        return FullTextHits(scoped, [row[0] for row in hits], {}, scores)

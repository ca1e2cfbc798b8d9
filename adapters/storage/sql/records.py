"""The memories of a SQL store: ``memory_items`` rows, their relations and outcome views.

Records are parsed once and cached per id with a token that proves the row unchanged (the
whole row, or the dialect's ``version_column``). A recall's candidates are decoded only as far
as scoring needs (a :class:`~swarmmem.core.model.candidates.CandidateRow` read from the stored
JSON, cached the same way); full records are built only for what the recall returns. Each
database supplies a :class:`TextIndex`: how an item row is written with its full-text entry,
erased, and searched; a database whose views are cached across transactions (PostgreSQL)
supplies a :class:`ViewCache`.
"""

from __future__ import annotations

import abc
import builtins
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

import attrs

from swarmmem.adapters.storage.base import BATCH_SIZE, Preselection
from swarmmem.adapters.storage.sql.audit import AuditLog
from swarmmem.adapters.storage.sql.database import Database, Touched
from swarmmem.adapters.storage.sql.dialect import (
    FullTextHits,
    held_text_terms,
    list_conditions,
    list_query,
)
from swarmmem.adapters.storage.sql.rows import (
    ITEM_COLUMNS,
    item_params,
    outcome_event_from_row,
    record_from_columns,
)
from swarmmem.adapters.storage.sql.schema import EXPIRING_INDEX
from swarmmem.core.model.candidates import CandidateRow
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.events import OutcomeEvent
from swarmmem.core.model.ids import iso_to_ms
from swarmmem.core.model.records import MemoryRecord
from swarmmem.core.model.semantics import (
    MAX_RELATIONS_PER_MEMORY,
    ListFilter,
    StoredRow,
    materialize,
    passes_parsed_expiry,
    stored_form,
    stored_row,
)
from swarmmem.core.recall.bm25 import match_terms
from swarmmem.core.recall.rows import candidate_row, derived
from swarmmem.ports.storage import Candidates, RecordKey

CACHE_LIMIT = 50_000
#: what an item row holds after a write: model version, ``valid_from``, ``supersedes_reason``
Written = tuple[str, str | None, str | None]
#: per memory id, its related ids and its outcome events
ViewParts = dict[str, tuple[tuple[str, ...], tuple[OutcomeEvent, ...]]]
Progress = Callable[[int, int], None] | None


class TextIndex(abc.ABC):
    """How a database writes item rows with their full-text entries, erases and searches them."""

    db: Database
    #: full text works (a failed query turns it off for the store, saying why)
    enabled = True
    disabled_reason: str | None = None

    @abc.abstractmethod
    def write_item(
        self, conn: Any, row: StoredRow, params: tuple[Any, ...]
    ) -> tuple[str | None, str | None]:
        """Upsert the item row (``params`` in ``ITEM_WRITE_COLUMNS`` order) and its full-text
        entry; returns the stored ``valid_from`` and ``supersedes_reason``."""

    def write_rows(
        self, conn: Any, rows: Sequence[StoredRow], versions: Sequence[str]
    ) -> builtins.list[Written] | None:
        """Write rows with distinct ids at once (``versions``: each row's model version), or
        ``None`` to have them written one by one."""
        return None

    @abc.abstractmethod
    def erase_item(self, conn: Any, memory_id: str) -> None:
        """Delete the item row and its full-text entry."""

    @abc.abstractmethod
    def search(self, conn: Any, want: Preselection, *, cached: bool) -> FullTextHits | None:
        """Scoped full-text matches of ``want``, best first, at most ``want.limit``; ``None``
        when full text failed (it is then off for this store, with ``disabled_reason``).
        ``want.stemmed`` searches the stemmed index; ``cached``: the caller keeps rows it read
        before, so an index that reads the hits' item rows with them may give their versions
        instead."""

    def purge(self, conn: Any) -> None:  # noqa: B027 (optional hook)
        """Drop what the index still holds of erased rows (inside a purge)."""

    def forget(self) -> None:  # noqa: B027 (optional hook)
        """Drop the rows the index keeps between searches, if any."""

    def insert_item_rows(
        self, conn: Any, columns: Sequence[str], rows: builtins.list[tuple[Any, ...]]
    ) -> None:
        """Append item rows (values of ``columns``) as they are, e.g. copied from another
        store; :meth:`after_bulk_load` then brings the index up to date."""
        marks = ", ".join("?" for _ in columns)
        statement = f"INSERT INTO memory_items ({', '.join(columns)}) VALUES ({marks})"
        self.db.executemany(conn, statement, rows)

    def after_bulk_load(self, conn: Any) -> None:  # noqa: B027 (optional hook)
        """Rebuild what rows written around the store's own writes left stale."""

    def bulk(self) -> AbstractContextManager[None] | None:
        """A context a large write runs in (e.g. a bigger page cache), or ``None``."""
        return None


class ViewCache(Protocol):
    """Relations and outcome views kept between transactions (invalidated by other writers)."""

    def views(
        self,
        conn: Any,
        ids: builtins.list[str],
        read: Callable[[Any, builtins.list[str]], ViewParts],
    ) -> ViewParts:
        """The views of ``ids``: cached ones, the rest from ``read`` (then cached)."""

    def related(self, memory_id: str) -> builtins.list[str] | None:
        """The cached related ids of ``memory_id`` (``None`` when not cached)."""


class Records:
    """Reads and writes of ``memory_items`` (see the module docstring)."""

    def __init__(
        self,
        db: Database,
        text: TextIndex,
        audit: AuditLog,
        *,
        embedding_model_version: str | None,
        now: Callable[[], str],
    ) -> None:
        self.db = db
        self.text = text
        self.audit = audit
        self.embedding_model_version = embedding_model_version
        self.view_cache: ViewCache | None = None
        self.load_report: builtins.list[dict[str, Any]] = []
        self._now = now
        self._lock = threading.RLock()
        self.cache: dict[str, tuple[Any, MemoryRecord]] = {}
        #: per id, its candidate row (``None``: the row is unreadable) and the row's token
        self.row_cache: dict[str, tuple[Any, CandidateRow | None]] = {}
        self._reported_ids: set[str] = set()
        db.after_end.append(self.invalidate)

    # -- the record cache --------------------------------------------------------------------

    def invalidate(self, touched: Touched) -> None:
        """Drop cached records the ended transaction (or another writer) changed."""
        with self._lock:
            if touched.everything:
                self.cache.clear()
                self.row_cache.clear()
            for memory_id in touched.ids:
                self.cache.pop(memory_id, None)
                self.row_cache.pop(memory_id, None)

    def clear(self) -> None:
        with self._lock:
            self.cache.clear()
            self.row_cache.clear()
        self.text.forget()

    @property
    def item_columns(self) -> str:
        version = self.db.dialect.version_column
        return ITEM_COLUMNS if version is None else f"{ITEM_COLUMNS}, {version}"

    def report(self, row_id: str, exc: BaseException) -> None:
        """Note an unreadable row once (``load_report``)."""
        if row_id not in self._reported_ids:
            self._reported_ids.add(row_id)
            self.load_report.append(
                {"file": self.db.location, "line": None, "id": row_id, "error": str(exc)}
            )

    def token(self, row: Sequence[Any]) -> Any:
        """What proves an ``item_columns`` row unchanged: the row, or its version column."""
        return tuple(row) if self.db.dialect.version_column is None else row[7]

    def row_to_record(self, row: Sequence[Any]) -> MemoryRecord | None:
        """The record of an ``item_columns`` row (cached), or None (reported) if invalid."""
        memory_id = row[0]
        token = self.token(row)
        cached = self.cache.get(memory_id)
        if cached is not None and cached[0] == token:
            return cached[1]
        _id, record_json, source_task_id, _role, model_version, valid_from, reason = row[:7]
        try:
            record = record_from_columns(
                record_json, source_task_id, model_version, valid_from, reason
            )
        except (ValueError, TypeError, MemoryValidationError) as exc:
            self.report(memory_id, exc)
            return None
        with self._lock:
            if len(self.cache) >= CACHE_LIMIT:
                self.cache.clear()
            self.cache[memory_id] = (token, record)
        return record

    def row_to_candidate(self, row: Sequence[Any]) -> CandidateRow | None:
        """The candidate row of an ``item_columns`` row (cached), or None if the row is
        unreadable (reported): the stored JSON is decoded only as far as scoring needs; a
        JSON object of an unexpected shape is read as a record (which reports it)."""
        memory_id = row[0]
        token = self.token(row)
        cached = self.row_cache.get(memory_id)
        if cached is not None and cached[0] == token:
            return cached[1]
        known = self.cache.get(memory_id)
        fields: CandidateRow | None
        if known is not None and known[0] == token:
            fields = derived(known[1])
        else:
            try:
                fields = candidate_row(json.loads(row[1]))
            except (KeyError, TypeError, ValueError, AttributeError, MemoryValidationError):
                record = self.row_to_record(row)
                fields = None if record is None else derived(record)
        with self._lock:
            if len(self.row_cache) >= CACHE_LIMIT:
                self.row_cache.clear()
            self.row_cache[memory_id] = (token, fields)
        return fields

    def candidates(
        self,
        conn: Any,
        ids: Sequence[str],
        rows: Mapping[str, Sequence[Any]] | None,
        versions: Mapping[str, Any],
    ) -> tuple[builtins.list[CandidateRow], Callable[..., dict[str, MemoryRecord]]]:
        """The candidate rows of ``ids`` in order (unknown or unreadable ids skipped) from
        their ``item_columns`` ``rows`` (read here when not given, but for those whose cached
        version is in ``versions``), and the loader of their full records (with views),
        built from those same rows."""
        held: Mapping[str, Sequence[Any]] = {} if rows is None else rows
        kept: builtins.list[Any] = [None] * len(ids)  # the cached rows still current
        if rows is None:  # the cached rows of the versions read; the others are read now
            row_cache = self.row_cache
            stale = []
            with self._lock:
                for n, memory_id in enumerate(ids):
                    cached = row_cache.get(memory_id)
                    if cached is not None and versions.get(memory_id, self) == cached[0]:
                        kept[n] = cached
                    else:
                        stale.append(memory_id)
            if stale:
                held = {row[0]: row for row in self.item_rows(conn, stale)}
        out = []
        for memory_id, cached in zip(ids, kept, strict=True):
            if cached is None:
                row = held.get(memory_id)
                fields = None if row is None else self.row_to_candidate(row)
            else:
                fields = cached[1]
            if fields is not None:
                out.append(fields)

        def load(chosen: Sequence[CandidateRow]) -> dict[str, MemoryRecord]:
            records = []
            unread = []
            for fields in chosen:
                row = held.get(fields.id)
                if row is None:
                    unread.append(fields.id)
                    continue
                record = self.row_to_record(row)
                if record is None:  # reported, and offered no more
                    with self._lock:
                        self.row_cache[fields.id] = (self.token(row), None)
                else:
                    records.append(record)
            with self.db.guard(), self.db.connection() as read_conn:
                found = {r.id: r for r in self.views(read_conn, records)}
                if unread:
                    found.update((r.id, r) for r in self.by_id(read_conn, unread, versions))
            for memory_id in unread:
                if memory_id not in found and memory_id in versions:
                    with self._lock:
                        self.row_cache[memory_id] = (versions[memory_id], None)
            return found

        return out, load

    # -- views -------------------------------------------------------------------------------

    def read_view_parts(self, conn: Any, ids: builtins.list[str]) -> ViewParts:
        """Per memory id: its related ids and outcome events (two batched queries)."""
        db, dialect = self.db, self.db.dialect
        related: dict[str, builtins.list[str]] = {}
        for source, target in db.execute(
            conn,
            "SELECT source_id, target_id FROM memory_relations WHERE "
            f"{dialect.any_of('source_id')} ORDER BY source_id ASC, target_id ASC",
            (dialect.array(ids),),
        ):
            bucket = related.setdefault(source, [])
            if len(bucket) < MAX_RELATIONS_PER_MEMORY:
                bucket.append(target)
        outcomes: dict[str, builtins.list[OutcomeEvent]] = {}
        rows = db.execute(
            conn,
            "SELECT event_json, memory_id FROM memory_outcomes WHERE "
            f"{dialect.any_of('memory_id')} ORDER BY at ASC, id ASC",
            (dialect.array(ids),),
        )
        for event in parsed_rows(rows, outcome_event_from_row):
            outcomes.setdefault(event.memory_id, []).append(event)
        return {i: (tuple(related.get(i, ())), tuple(outcomes.get(i, ()))) for i in ids}

    def views(self, conn: Any, records: Sequence[MemoryRecord]) -> builtins.list[MemoryRecord]:
        """``records`` with their relations and outcome views attached."""
        if not records:
            return []
        ids = sorted({r.id for r in records})
        cache = self.view_cache
        parts = (
            self.read_view_parts(conn, ids)
            if cache is None
            else cache.views(conn, ids, self.read_view_parts)
        )
        return [materialize(r, parts[r.id][1], parts[r.id][0]) for r in records]

    # -- reads -------------------------------------------------------------------------------

    def stored(self, conn: Any, memory_id: str) -> MemoryRecord | None:
        row = self.db.execute(
            conn, f"SELECT {self.item_columns} FROM memory_items WHERE id = ?", (memory_id,)
        ).fetchone()
        return None if row is None else self.row_to_record(row)

    def item_rows(self, conn: Any, ids: Sequence[str]) -> builtins.list[Any]:
        """The ``item_columns`` rows of ``ids`` (any order; unknown ids have none)."""
        dialect = self.db.dialect
        return builtins.list(
            self.db.execute(
                conn,
                f"SELECT {self.item_columns} FROM memory_items WHERE {dialect.any_of('id')}",
                (dialect.array(builtins.list(ids)),),
            ).fetchall()
        )

    def by_id(
        self, conn: Any, ids: Sequence[str], versions: Mapping[str, Any]
    ) -> builtins.list[MemoryRecord]:
        """Records for ``ids`` in order (unknown or unreadable ids skipped); rows whose cached
        version is in ``versions`` are not read again."""
        found: dict[str, MemoryRecord] = {}
        stale = []
        with self._lock:
            for memory_id in ids:
                cached = self.cache.get(memory_id)
                if (
                    cached is not None
                    and memory_id in versions
                    and cached[0] == versions[memory_id]
                ):
                    found[memory_id] = cached[1]
                else:
                    stale.append(memory_id)
        if stale:
            for record in map(self.row_to_record, self.item_rows(conn, stale)):
                if record is not None:
                    found[record.id] = record
        return self.views(conn, [found[i] for i in ids if i in found])

    def count_where(self, flt: ListFilter) -> int:
        if flt.exclude_ids:  # all of them minus the excluded ones (read through the key)
            every = attrs.evolve(flt, exclude_ids=None)
            wanted = set(flt.exclude_ids) & set(flt.ids) if flt.ids is not None else None
            excluded = tuple(sorted(wanted)) if wanted is not None else flt.exclude_ids
            return self._count(every) - self._count(attrs.evolve(every, ids=excluded))
        return self._count(flt)

    def _count(self, flt: ListFilter) -> int:
        """Rows without an expiry are counted without reading it (one scan of the scope's
        index); rows with one are few and read through their own index: the string
        pre-filter, then the parsed expiry test, decide which of them count."""
        keys = None if flt.scope_keys is None else builtins.list(dict.fromkeys(flt.scope_keys))
        if keys is not None and len(keys) > 1:  # one scope at a time: each reads its index
            return sum(self._count(attrs.evolve(flt, scope_keys=(key,))) for key in keys)
        db = self.db
        unread = attrs.evolve(flt, include_expired=True, has_expiry=None)
        found = list_conditions(db.dialect, unread)
        if found is None:
            return 0
        where, params = found
        if flt.scope_keys is not None:
            # with a list of ids the ids lead the plan, not the scope's index
            column = "scope_key" if flt.ids is None else db.dialect.unindexed("scope_key")
            clause, values = db.dialect.one_of(column, flt.scope_keys)
            where, params = [clause, *where], [*values, *params]
        count = "SELECT COUNT(*) FROM memory_items"
        count += " WHERE " + " AND ".join(where) if where else ""
        with db.connection() as conn:
            if flt.include_expired and flt.has_expiry is None:
                return int(db.execute(conn, count, params).fetchone()[0])
            table = db.dialect.items_through(EXPIRING_INDEX)
            expiring = " AND ".join([*where, "expires_at IS NOT NULL"])
            rows = db.execute(
                conn,
                f"SELECT expires_at > ?, expires_at FROM {table} WHERE {expiring}",
                [flt.now, *params],
            ).fetchall()
            if flt.include_expired:
                kept = len(rows)
            else:
                now_ms = iso_to_ms(flt.now)
                kept = sum(1 for ahead, at in rows if ahead and passes_parsed_expiry(at, now_ms))
            if flt.has_expiry:
                return kept
            unexpiring = int(db.execute(conn, count, params).fetchone()[0]) - len(rows)
        return unexpiring if flt.has_expiry is False else unexpiring + kept

    def list_keys(self, flt: ListFilter) -> builtins.list[RecordKey]:
        query = list_query(self.db.dialect, flt, "id, updated_at, expires_at, q_value, confidence")
        if query is None:
            return []
        with self.db.connection() as conn:
            rows = self.db.execute(conn, *query).fetchall()
        now_ms = None if flt.include_expired else iso_to_ms(flt.now)
        return [RecordKey(*row) for row in rows if passes_parsed_expiry(row[2], now_ms)]

    def get(self, memory_id: str) -> MemoryRecord | None:
        with self.db.connection() as conn:
            record = self.stored(conn, memory_id)
            return None if record is None else self.views(conn, [record])[0]

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        with self.db.connection() as conn:
            return {r.id: r for r in self.by_id(conn, memory_ids, {})}

    def list(self, flt: ListFilter) -> builtins.list[MemoryRecord]:
        self.db.check_open()
        query = list_query(self.db.dialect, flt, self.item_columns)
        if query is None:
            return []
        with self.db.connection() as conn:
            rows = self.db.execute(conn, *query).fetchall()
            records = [r for r in map(self.row_to_record, rows) if r is not None]
            if not flt.include_expired:
                now_ms = iso_to_ms(flt.now)
                records = [r for r in records if passes_parsed_expiry(r.expires_at, now_ms)]
            return self.views(conn, records)

    def unreadable_rows(self) -> builtins.list[dict[str, Any]]:
        known = builtins.list(self.load_report)
        statement = self.db.dialect.damaged_items_sql
        if statement is None:
            return known
        seen = {row.get("id") for row in known}
        with self.db.guard(), self.db.connection() as conn:
            damaged = [r[0] for r in conn.execute(statement).fetchall() if r[0] not in seen]
        error = "record_json is not valid JSON"
        location = self.db.location
        return known + [{"file": location, "line": None, "id": i, "error": error} for i in damaged]

    def count(self) -> int:
        with self.db.connection() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM memory_items").fetchone()[0])

    def scope_counts(self) -> dict[str, int]:
        """Active (not deleted, not superseded) memories per scope key, without parsing rows."""
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT scope_key, COUNT(*) FROM memory_items "
                "WHERE superseded_by IS NULL AND deleted = 0 GROUP BY scope_key"
            ).fetchall()
        return {str(key): int(count) for key, count in rows}

    def iter_all(self) -> Iterator[MemoryRecord]:
        with self.db.connection() as conn:
            rows = conn.execute(
                f"SELECT {self.item_columns} FROM memory_items ORDER BY updated_at ASC, id ASC"
            ).fetchall()
        return self._iter_views(rows)

    def _iter_views(self, rows: Sequence[Sequence[Any]]) -> Iterator[MemoryRecord]:
        for start in range(0, len(rows), 500):
            batch = rows[start : start + 500]
            with self.db.guard(), self.db.connection() as conn:
                chunk = [r for r in map(self.row_to_record, batch) if r is not None]
                views = self.views(conn, chunk)
            yield from views

    def related_ids(self, memory_id: str) -> builtins.list[str]:
        cache = self.view_cache
        if cache is not None:
            self.db.check_open()
            if self.db.before_read is not None:
                self.db.before_read()
            hit = cache.related(memory_id)
            if hit is not None:
                return hit
        with self.db.connection() as conn:
            rows = self.db.execute(
                conn,
                "SELECT target_id FROM memory_relations WHERE source_id = ? "
                "ORDER BY target_id ASC LIMIT ?",
                (memory_id, MAX_RELATIONS_PER_MEMORY),
            ).fetchall()
        return [r[0] for r in rows]

    # -- recall's pre-selection --------------------------------------------------------------

    def preselect(self, want: Preselection) -> Candidates | None:
        """Full-text pre-selection: only the chosen records are read (or taken from cache)."""
        if not self.text.enabled:
            return None
        stemmed = want.stemmed
        with self.db.guard(), self.db.connection() as conn:
            hits = self.text.search(conn, want, cached=bool(self.row_cache))
            if hits is None:
                return None
            if not hits.scoped:
                return Candidates(records=())
            if not hits.ranked:
                return None if want.scope_when_unmatched else Candidates(records=())
            order = {memory_id: position for position, memory_id in enumerate(hits.ranked)}
            chosen = [i for i in hits.scoped if i in order]
            rows, load = self.candidates(conn, chosen, hits.items, hits.versions)
            held = None
            if stemmed:
                terms = hits.terms
                if terms is None:
                    terms = self._stored_terms(conn, chosen)
                held = held_text_terms(
                    terms, chosen, (t for p in match_terms(want.fts_query) for t in p)
                )
        return Candidates(
            rows=tuple(rows), load=load, fts_order=order, fts_scores=hits.scores, held_terms=held
        )

    def _stored_terms(self, conn: Any, ids: builtins.list[str]) -> dict[str, frozenset[str] | None]:
        """The stored ``text_terms`` of ``ids``, each as a set."""
        if not ids:
            return {}
        clause, params = self.db.dialect.one_of("id", ids)
        rows = self.db.execute(
            conn, f"SELECT id, text_terms FROM memory_items WHERE {clause}", params
        ).fetchall()
        return {
            memory_id: None if terms is None else frozenset(terms.split())
            for memory_id, terms in rows
        }

    # -- writes ------------------------------------------------------------------------------

    def write_record(self, record: MemoryRecord) -> MemoryRecord:
        record = stored_form(record, None)
        return as_written(record, *self._write_row(self.db.tx_conn(), stored_row(record)))

    def _write_row(self, conn: Any, row: StoredRow) -> Written:
        """One item row and its full-text entry; what the row holds after the write."""
        model_version = self.embedding_model_version or row.embedding_model_version or ""
        valid_from, supersedes_reason = self.text.write_item(
            conn, row, item_params(row, model_version)
        )
        self.db.touch((row.id,), items=True)
        return model_version, valid_from, supersedes_reason

    def upsert_many(
        self, records: Sequence[MemoryRecord], progress: Progress
    ) -> builtins.list[MemoryRecord]:
        """Batches of ``BATCH_SIZE`` records: their rows, then their ``upsert`` events in one
        go (same order and chain as one ``upsert`` per record)."""
        records = builtins.list(records)
        for record in records:
            if not isinstance(record, MemoryRecord):
                raise MemoryValidationError(
                    f"upsert_many needs MemoryRecords; got {type(record).__name__}"
                )
        stored = [stored_form(record, None) for record in records]
        written = self.upsert_rows([stored_row(record) for record in stored], progress)
        return [as_written(record, *row) for record, row in zip(stored, written, strict=True)]

    def upsert_rows(self, rows: Sequence[StoredRow], progress: Progress) -> builtins.list[Written]:
        """:meth:`upsert_many` of rows already in their stored form (no record is built)."""
        bulk = self.text.bulk()
        if bulk is None:
            return self._upsert_rows(rows, progress)
        with bulk:
            return self._upsert_rows(rows, progress)

    def _upsert_rows(self, rows: Sequence[StoredRow], progress: Progress) -> builtins.list[Written]:
        written: builtins.list[Written] = []
        with self.db.transaction():
            conn = self.db.tx_conn()
            for start in range(0, len(rows), BATCH_SIZE):
                batch = rows[start : start + BATCH_SIZE]
                written.extend(self._write_batch(conn, batch))
                now = self._now()
                self.audit.append(
                    [
                        (event_id, "upsert", row.id, None, now, None)
                        for event_id, row in zip(uuid4_strings(len(batch)), batch, strict=True)
                    ]
                )
                if progress is not None:
                    progress(start + len(batch), len(rows))
        return written

    def _write_batch(self, conn: Any, batch: Sequence[StoredRow]) -> builtins.list[Written]:
        """One batch: at once when its ids are distinct and the index can, else row by row
        (an id twice in one batch: the second write must see the first)."""
        if len({row.id for row in batch}) == len(batch):
            model = self.embedding_model_version
            versions = [model or row.embedding_model_version or "" for row in batch]
            written = self.text.write_rows(conn, batch, versions)
            if written is not None:
                self.db.touch([row.id for row in batch], items=True)
                return written
        return [self._write_row(conn, row) for row in batch]

    def has(self, memory_id: str) -> bool:
        row = self.db.execute(
            self.db.tx_conn(), "SELECT 1 FROM memory_items WHERE id = ?", (memory_id,)
        ).fetchone()
        return row is not None

    def stored_record(self, memory_id: str) -> MemoryRecord | None:
        return self.stored(self.db.tx_conn(), memory_id)

    def erase(self, memory_id: str) -> None:
        db = self.db
        conn = db.tx_conn()
        linked = [
            row[0]
            for row in db.execute(
                conn, "SELECT source_id FROM memory_relations WHERE target_id = ?", (memory_id,)
            ).fetchall()
        ]
        db.execute(conn, "DELETE FROM memory_outcomes WHERE memory_id = ?", (memory_id,))
        self.text.erase_item(conn, memory_id)  # its relations go with it (ON DELETE CASCADE)
        db.touch([memory_id, *linked], items=True)


def parsed_rows(rows: Any, parse: Callable[[Sequence[Any]], Any]) -> builtins.list[Any]:
    """``parse`` of every row, skipping rows that do not parse (ValueError)."""
    out = []
    for row in rows:
        try:
            out.append(parse(row))
        except ValueError:
            continue
    return out


def uuid4_strings(count: int) -> builtins.list[str]:
    """``count`` random version-4 UUIDs as ``str(uuid.uuid4())`` writes them (one read of the
    system's random source for all of them)."""
    raw = bytearray(os.urandom(16 * count))
    for at in range(0, 16 * count, 16):
        raw[at + 6] = raw[at + 6] & 0x0F | 0x40  # version 4
        raw[at + 8] = raw[at + 8] & 0x3F | 0x80  # RFC 4122 variant
    h = raw.hex()
    return [
        f"{h[at : at + 8]}-{h[at + 8 : at + 12]}-{h[at + 12 : at + 16]}-"
        f"{h[at + 16 : at + 20]}-{h[at + 20 : at + 32]}"
        for at in range(0, 32 * count, 32)
    ]


def as_written(
    record: MemoryRecord, model_version: str, valid_from: str | None, supersedes_reason: str | None
) -> MemoryRecord:
    """``record`` (a stored form) with what the item row holds after the write."""
    changes: dict[str, Any] = {}
    if valid_from != record.valid_from:
        changes["valid_from"] = valid_from
    if supersedes_reason != record.supersedes_reason:
        changes["supersedes_reason"] = supersedes_reason
    if (model_version or None) != record.embedding_model_version:
        changes["embedding_model_version"] = model_version or None
    return attrs.evolve(record, **changes) if changes else record

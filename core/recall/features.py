"""What the stemmed BM25 channel needs of each record, computed once and kept as arrays.

The stores without a full-text engine (in-memory, JSONL) keep a :class:`FeatureTable`: one row
per record holding its distinct stemmed term ids (sorted) with their counts over the
full-text columns other than the kind (a term found only among the kind's words is not in
the row) and whether each occurs in the text column, its length
in tokens over all seven columns, its scope and kind (as small integer ids) and whether
it may be recalled at all (active, not outcome evidence); and, per term, the postings of the
rows holding it. A row is computed when the record is written; a recall then runs the
``bm25`` kernel over the postings of the query's terms (scope and kind filtered by id, never
by re-serialising scopes) and hands back the scorer's fields of the best rows (kept with each
row: :func:`~swarmmem.core.recall.rows.derived`), not their records.

The scores equal :func:`swarmmem.core.recall.bm25.bm25_relevance` over the same records (the
scope's own statistics); tests compare the two.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from operator import itemgetter
from typing import Any, NamedTuple

from swarmmem._speedups import bm25 as kernel
from swarmmem.core.model.candidates import CandidateRow
from swarmmem.core.model.ids import iso_to_ms
from swarmmem.core.model.records import MemoryRecord
from swarmmem.core.model.semantics import passes_parsed_expiry, passes_sql_expiry, scope_key_of
from swarmmem.core.recall.bm25 import (
    BM25_B,
    BM25_K1,
    document,
    match_terms,
    record_fields,
    stemmed_document,
)
from swarmmem.core.recall.rows import derived

#: compact the term arrays once this share of them belongs to replaced or removed rows
_GARBAGE_SHARE = 0.5
#: a term's mark: it occurs in the text column
IN_TEXT = 1
#: the kernel marks the text's terms for this many query terms
_MARKED_TERMS = 64


class Hits(NamedTuple):
    """What :meth:`FeatureTable.search` found: the scorer's fields of the best records (best
    first), their ids and ``-bm25()``, and per record a mask of the query's terms its text
    holds, bit ``j`` for ``marked[j]`` (what :func:`~swarmmem.core.recall.bm25.content_matches`
    computes from the records; ``None`` when the marks cannot tell: a query with a phrase of
    several terms)."""

    rows: tuple[CandidateRow, ...]
    ids: tuple[str, ...]
    scores: tuple[float, ...]
    marks: tuple[int, ...] | None
    marked: tuple[str, ...]

    def held(self) -> dict[str, frozenset[str]] | None:
        """Per found id, the query's terms its text holds (the masks as sets)."""
        if self.marks is None:
            return None
        names = self.marked
        return {
            key: frozenset(name for j, name in enumerate(names) if mask >> j & 1)
            for key, mask in zip(self.ids, self.marks, strict=True)
        }


class FeatureTable:
    """Per-record BM25 features of a store's records, updated as records are written."""

    def __init__(self, records: Iterable[MemoryRecord] = ()) -> None:
        self._vocabulary: dict[str, int] = {}
        self._scope_ids: dict[str, int] = {}
        self._kind_ids: dict[str, int] = {}
        self._slots: dict[str, int] = {}
        self._records: list[MemoryRecord | None] = []
        #: per slot, the scorer's fields of its record
        self._fields: list[CandidateRow | None] = []
        #: per slot, its record's id
        self._ids: list[str | None] = []
        self._free: list[int] = []
        self._expiring: dict[int, str] = {}
        self._starts = array("q")
        self._ends = array("q")
        self._terms = array("i")
        self._tfs = array("i")
        self._marks = bytearray()
        self._lengths = array("i")
        self._scopes = array("i")
        self._kinds = array("i")
        self._live = bytearray()
        #: per slot, the version of its row (raised by every write or removal of the slot)
        self._versions = array("i")
        #: per term id, ``(slot, version, count)`` triples of the rows holding it; a triple of
        #: an older version of its slot is stale. Built from the rows by the kernel at the
        #: first search (and again after a compaction), then kept up to date by each write.
        self._postings: list[array[int]] | None = None
        self._garbage = 0
        for record in records:
            self.put(record)

    def __len__(self) -> int:
        return len(self._slots)

    # -- writes ------------------------------------------------------------------------------

    def put(self, record: MemoryRecord) -> None:
        """Add ``record``, or replace the row of the record with its id."""
        slot = self._slots.get(record.id)
        if slot is None:
            if self._free:
                slot = self._free.pop()
            else:
                slot = len(self._records)
                self._records.append(None)
                self._fields.append(None)
                self._ids.append(None)
                for column in (self._starts, self._ends):
                    column.append(0)
                for column in (self._lengths, self._scopes, self._kinds):
                    column.append(-1)
                self._live.append(0)
                self._versions.append(0)
            self._slots[record.id] = slot
        else:
            self._garbage += self._ends[slot] - self._starts[slot]
        doc = stemmed_document(record_fields(record))
        vocabulary = self._vocabulary
        known = vocabulary.get
        text = frozenset(doc.columns[0])
        entries = []
        # the counts leave out the kind column (a term only there is not in the row)
        for term, count in doc.counts.items():
            term_id = known(term)
            if term_id is None:
                term_id = vocabulary[term] = len(vocabulary)
            entries.append((term_id, count, IN_TEXT if term in text else 0))
        entries.sort()
        term_ids, counts, marks = zip(*entries, strict=True) if entries else ((), (), ())
        self._records[slot] = record
        self._fields[slot] = derived(record)
        self._ids[slot] = record.id
        version = self._versions[slot] = self._versions[slot] + 1
        if self._postings is not None:
            self._post(slot, version, zip(term_ids, counts, strict=True))
        self._starts[slot] = len(self._terms)
        self._terms.extend(term_ids)
        self._tfs.extend(counts)
        self._marks.extend(marks)
        self._ends[slot] = len(self._terms)
        self._lengths[slot] = doc.length
        self._scopes[slot] = self._scope_ids.setdefault(
            scope_key_of(record.scope), len(self._scope_ids)
        )
        self._kinds[slot] = self._kind_ids.setdefault(record.kind, len(self._kind_ids))
        self._live[slot] = record.active and "outcomeQuestion" not in record.metadata
        if record.expires_at is not None:
            self._expiring[slot] = record.expires_at
        else:
            self._expiring.pop(slot, None)
        self._maybe_compact()

    def remove(self, memory_id: str) -> None:
        """Drop the row of ``memory_id`` (nothing when absent)."""
        slot = self._slots.pop(memory_id, None)
        if slot is None:
            return
        self._garbage += self._ends[slot] - self._starts[slot]
        self._starts[slot] = self._ends[slot] = 0
        self._records[slot] = self._fields[slot] = self._ids[slot] = None
        self._versions[slot] += 1  # its postings are stale from now on
        self._live[slot] = 0
        self._scopes[slot] = self._kinds[slot] = -1
        self._expiring.pop(slot, None)
        self._free.append(slot)
        self._maybe_compact()

    def _maybe_compact(self) -> None:
        if self._garbage < 4096 or self._garbage < _GARBAGE_SHARE * len(self._terms):
            return
        terms, tfs, marks = array("i"), array("i"), bytearray()
        for slot in range(len(self._records)):
            start, end = self._starts[slot], self._ends[slot]
            self._starts[slot] = len(terms)
            terms.extend(self._terms[start:end])
            tfs.extend(self._tfs[start:end])
            marks.extend(self._marks[start:end])
            self._ends[slot] = len(terms)
        self._terms, self._tfs, self._marks, self._garbage = terms, tfs, marks, 0
        self._postings = None  # built again from the compacted rows when next needed

    def _post(self, slot: int, version: int, pairs: Iterable[tuple[int, int]]) -> None:
        """Append the row's ``(term id, count)`` pairs to the postings of their terms."""
        postings = self._postings
        assert postings is not None
        for term_id, count in pairs:
            while term_id >= len(postings):
                postings.append(array("i"))
            postings[term_id].extend((slot, version, count))

    # -- reads -------------------------------------------------------------------------------

    def search(
        self,
        match: str | None,
        *,
        scope_keys: Sequence[str] | None,
        kinds: Sequence[str] | None,
        now: str,
        include_expired: bool,
        limit: int,
    ) -> Hits:
        """The ``limit`` records of the scopes with the best BM25 for ``match`` (a stemmed
        query string), best first (ties by id), with their ``-bm25()`` and the query terms
        their texts hold (:class:`Hits`). ``scope_keys`` and ``kinds`` restrict the rows
        (``None``: any)."""
        phrases = match_terms(match)
        if not phrases or limit <= 0 or not self._slots:
            return _NO_HITS
        live = self._live_now(now, include_expired)
        allowed_scopes = (
            bytearray(b"\x01" * len(self._scope_ids))
            if scope_keys is None
            else _allowed(self._scope_ids, scope_keys)
        )
        allowed_kinds = None if kinds is None else _allowed(self._kind_ids, kinds)
        query: list[int] = []
        names: list[str] = []
        columns: list[array[int]] = []
        for phrase in phrases:
            ids = [self._vocabulary.get(term, -1) for term in phrase]
            if -1 in ids:
                continue  # a term no record holds matches nothing and adds nothing
            if len(ids) == 1:
                query.append(ids[0])
            else:
                query.append(-1)
                columns.append(self._phrase_counts(phrase, ids, live))
            names.append(phrase[0])
        if not query:
            return _NO_HITS
        if self._postings is None:
            self._postings = kernel.postings(
                self._starts,
                self._ends,
                self._terms,
                self._tfs,
                self._versions,
                len(self._vocabulary),
            )
        index = self._postings
        postings = [index[t] if t >= 0 else None for t in query]
        rows, scores = kernel.bm25_top(
            self._versions,
            self._lengths,
            live,
            self._scopes,
            allowed_scopes,
            self._kinds,
            allowed_kinds,
            postings,
            columns,
            BM25_K1,
            BM25_B,
            limit,
            self._ids,
        )
        if not rows:
            return _NO_HITS
        hits = Hits(_gather(rows, self._fields), _gather(rows, self._ids), tuple(scores), None, ())
        if any(len(phrase) > 1 for phrase in phrases) or len(query) > _MARKED_TERMS:
            return hits  # the marks cannot tell (phrases are counted apart)
        texts = kernel.term_marks(self._starts, self._ends, self._terms, self._marks, rows, query)
        return hits._replace(marks=tuple(texts), marked=tuple(names))

    def _live_now(self, now: str, include_expired: bool) -> bytearray:
        """The live flags with rows expired at ``now`` cleared (unless they are wanted)."""
        if include_expired or not self._expiring:
            return self._live
        live = bytearray(self._live)
        now_ms = iso_to_ms(now)
        for slot, expires_at in self._expiring.items():
            if not (
                passes_sql_expiry(expires_at, now) and passes_parsed_expiry(expires_at, now_ms)
            ):
                live[slot] = 0
        return live

    def _phrase_counts(
        self, phrase: tuple[str, ...], ids: list[int], live: bytearray
    ) -> array[int]:
        """Per row, how often ``phrase`` occurs within one of its columns."""
        counts = array("i", bytes(4 * len(self._records)))
        for row in kernel.having_all(self._starts, self._ends, self._terms, live, ids):
            record = self._records[row]
            assert record is not None
            counts[row] = document(record_fields(record)).count(phrase)
        return counts


_NO_HITS = Hits((), (), (), (), ())


def _gather(indices: Sequence[int], values: Sequence[Any]) -> tuple[Any, ...]:
    """``tuple(values[i] for i in indices)``, gathered in one C call."""
    if len(indices) == 1:
        return (values[indices[0]],)
    return itemgetter(*indices)(values) if indices else ()


def _allowed(ids: dict[str, int], keys: Iterable[str]) -> bytearray:
    flags = bytearray(len(ids))
    for key in keys:
        index = ids.get(key)
        if index is not None:
            flags[index] = 1
    return flags

"""What recall's scorer reads of a candidate memory: one row of plain values, no record.

A store that keeps whole records (in-memory, JSONL) derives the row from a record
(``swarmmem.core.recall.rows.derived``, once per record object); a SQL store derives it from
the stored JSON and columns without building the record
(``swarmmem.core.recall.rows.candidate_row``), and builds full records only for the items a
recall returns. Both give equal rows for the same stored memory.
"""

from __future__ import annotations

from typing import NamedTuple


class CandidateRow(NamedTuple):
    """The scorer's fields of one memory, in the lexical kernel's shape."""

    tags: str
    files: str
    symbols: str
    kind_words: str
    ref: str
    specificity: float
    scope_key: str
    updated_ms: float | None
    expires_ms: float | None
    q: float
    #: the seven full-text columns (text, tags, kind words, source path, source ref, symbols,
    #: metadata files), as the stores index them (``swarmmem.core.recall.bm25.record_fields``)
    columns: tuple[str, ...]
    id: str
    text: str
    kind: str
    confidence: float
    scope_type: str
    #: superseded or deleted (never scored)
    inactive: bool
    #: not outcome evidence (``swarmmem.core.recall.lexical.recallable``)
    recallable: bool

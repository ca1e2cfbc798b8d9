"""BM25 scan kernel selector (see ``_bm25_py`` for the contract)."""

from __future__ import annotations

from swarmmem._speedups._bm25_py import (
    bm25_top,
    having_all,
    postings,
    term_marks,
    text_relevance,
)
from swarmmem._speedups._select import bind

__all__ = ["KERNEL_IMPL", "bm25_top", "having_all", "postings", "term_marks", "text_relevance"]
KERNEL_IMPL = bind("bm25", globals())

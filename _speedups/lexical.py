"""Lexical overlap kernel selector (see ``_lexical_py`` for the contract)."""

from __future__ import annotations

from swarmmem._speedups._lexical_py import WEIGHTS, LexicalRow, score_lexical, tokenize
from swarmmem._speedups._select import bind

__all__ = ["KERNEL_IMPL", "WEIGHTS", "LexicalRow", "score_lexical", "tokenize"]
KERNEL_IMPL = bind("lexical", globals())

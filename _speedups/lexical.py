"""Lexical overlap kernel selector (see ``_lexical_py`` for the contract)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmmem._speedups._select import load

if TYPE_CHECKING:
    from swarmmem._speedups._lexical_py import WEIGHTS, score_lexical, tokenize

    KERNEL_IMPL: str
else:
    _module, KERNEL_IMPL = load("lexical")
    WEIGHTS = _module.WEIGHTS
    score_lexical = _module.score_lexical
    tokenize = _module.tokenize

__all__ = ["KERNEL_IMPL", "WEIGHTS", "score_lexical", "tokenize"]

"""Lexical overlap kernel selector (see ``_lexical_py`` for the contract)."""

from __future__ import annotations

from swarmmem._speedups._lexical_py import (
    CANDIDATE_FIELDS,
    RANKED_FIELDS,
    SCORED_FIELDS,
    WEIGHTS,
    LexicalRow,
    Ranked,
    RankRules,
    Scored,
    freshness,
    ranked_candidates,
    score_candidates,
    score_lexical,
    scored_candidates,
    staleness,
    tokenize,
)
from swarmmem._speedups._select import bind

__all__ = [
    "CANDIDATE_FIELDS",
    "KERNEL_IMPL",
    "RANKED_FIELDS",
    "SCORED_FIELDS",
    "WEIGHTS",
    "LexicalRow",
    "RankRules",
    "Ranked",
    "Scored",
    "freshness",
    "ranked_candidates",
    "score_candidates",
    "score_lexical",
    "scored_candidates",
    "staleness",
    "tokenize",
]
KERNEL_IMPL = bind("lexical", globals())

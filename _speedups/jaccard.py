"""Jaccard kernel selector (see ``_jaccard_py`` for the contract)."""

from __future__ import annotations

from swarmmem._speedups._jaccard_py import jaccard_keys, jaccard_many, token_keys
from swarmmem._speedups._select import bind

__all__ = ["KERNEL_IMPL", "jaccard_keys", "jaccard_many", "token_keys"]
KERNEL_IMPL = bind("jaccard", globals())

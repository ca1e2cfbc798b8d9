"""Jaccard kernel selector (see ``_jaccard_py`` for the contract)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmmem._speedups._select import load

if TYPE_CHECKING:
    from swarmmem._speedups._jaccard_py import jaccard_many

    KERNEL_IMPL: str
else:
    _module, KERNEL_IMPL = load("jaccard")
    jaccard_many = _module.jaccard_many

__all__ = ["KERNEL_IMPL", "jaccard_many"]

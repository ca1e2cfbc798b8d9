"""Reciprocal rank fusion kernel selector (see ``_fusion_py`` for the contract)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmmem._speedups._select import load

if TYPE_CHECKING:
    from swarmmem._speedups._fusion_py import rrf_fuse

    KERNEL_IMPL: str
else:
    _module, KERNEL_IMPL = load("fusion")
    rrf_fuse = _module.rrf_fuse

__all__ = ["KERNEL_IMPL", "rrf_fuse"]

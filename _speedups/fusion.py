"""Reciprocal rank fusion kernel selector (see ``_fusion_py`` for the contract)."""

from __future__ import annotations

from swarmmem._speedups._fusion_py import rrf_fuse, rrf_fuse_ids
from swarmmem._speedups._select import bind

__all__ = ["KERNEL_IMPL", "rrf_fuse", "rrf_fuse_ids"]
KERNEL_IMPL = bind("fusion", globals())

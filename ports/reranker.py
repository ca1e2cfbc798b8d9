"""Reranker port: rescores the top fused recall candidates against the query."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class Reranker(Protocol):
    """**Protocol:** score how well each candidate text answers a query.

    Obligations:

    * ``rerank(query, texts)`` returns one finite ``float`` per text, aligned with ``texts``
      (``scores[i]`` belongs to ``texts[i]``); higher means more relevant. Scores are only
      comparable within one call. An empty ``texts`` gives ``[]`` without loading anything.
    * The caller reorders; the reranker never drops, adds or reorders texts itself.
    * ``name`` is a short stable label for diagnostics (e.g. ``"cross-encoder"``).
    * Nothing heavy happens at import or construction: models load lazily on the first
      ``rerank``. Reading ``available`` never loads a model; it is False when a dependency
      or model file is missing or a load already failed.
    * Any failure (missing model, load error, inference error) raises
      :class:`~swarmmem.core.model.errors.RerankError`; recall then keeps the fused order.
    * Instances are safe to share between threads (the lazy load happens once).
    """

    @property
    def name(self) -> str:
        """Short label reported in diagnostics."""
        ...

    @property
    def available(self) -> bool:
        """False when the reranker is known not to work; never loads a model."""
        ...

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score per text, aligned with ``texts``."""
        ...

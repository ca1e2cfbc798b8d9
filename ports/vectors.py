"""Vector index port: stores one embedding per memory and finds nearest neighbours."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from swarmmem.ports.embedder import FloatArray


@runtime_checkable
class VectorIndex(Protocol):
    """**Protocol:** durable memory embeddings with exact cosine nearest-neighbour search.

    Obligations:

    * Vectors are L2-normalised float32 of ``dimension``; ``search`` returns
      ``(id, cosine)`` pairs, best first, ties by id ascending, at most ``k``.
    * ``stored_model_version`` is the version seeded on first use (never silently
      changed); ``set_model_version`` advances it (only a complete rebuild may call it).
    * Writes from other processes become visible to ``search`` (the index reloads when the
      underlying store changed).
    * Optional capability: an index living in the same database as the records may also
      offer ``search_scoped(query, k, *, scope_keys, kinds, now, include_expired)`` returning
      only ids of active, unexpired records of those scopes and kinds (the recall pipeline
      uses it when present and still re-checks every hit).
    * ``close`` releases resources; idempotent.
    """

    @property
    def dimension(self) -> int:
        """Vector length."""
        ...

    def stored_model_version(self) -> str | None:
        """The model version the stored vectors were made with."""
        ...

    def seed_model_version(self, version: str) -> str:
        """Record ``version`` if none is stored yet; return the stored version."""
        ...

    def set_model_version(self, version: str) -> None:
        """Advance the stored version (after a complete rebuild)."""
        ...

    def upsert(self, ids: Sequence[str], vectors: FloatArray) -> None:
        """Insert or replace vectors (row ``i`` belongs to ``ids[i]``)."""
        ...

    def delete(self, ids: Sequence[str]) -> None:
        """Remove vectors; unknown ids are ignored."""
        ...

    def ids(self) -> list[str]:
        """Every id with a stored vector."""
        ...

    def search(self, query: FloatArray, k: int) -> list[tuple[str, float]]:
        """The ``k`` most similar stored vectors to ``query``."""
        ...

    def close(self) -> None:
        """Release resources."""
        ...


# ----------------------------------------------------------------- optional capabilities


@runtime_checkable
class ScopedVectorSearch(Protocol):
    """**Optional capability:** nearest neighbours among the memories of some scopes and
    kinds, filtered inside the index's database (pgvector)."""

    def search_scoped(
        self,
        query: FloatArray,
        k: int,
        *,
        scope_keys: Sequence[str],
        kinds: Sequence[str] | None,
        now: str,
        include_expired: bool = False,
    ) -> list[tuple[str, float]]:
        """At most ``k`` ``(id, cosine)`` pairs of live memories in those scopes, best first."""
        ...


@runtime_checkable
class ApproximateIndex(Protocol):
    """**Optional capability:** an approximate-neighbour index built with options that can
    differ from the configured ones (pgvector's HNSW)."""

    def ann_index(self) -> dict[str, Any]:
        """The index's build options and whether it needs a rebuild."""
        ...

    def rebuild_ann_index(self, *, force: bool = False) -> dict[str, Any]:
        """Rebuild the index with the configured options (when they differ, or ``force``)."""
        ...

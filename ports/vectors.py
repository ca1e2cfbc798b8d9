"""Vector index port: stores one embedding per memory and finds nearest neighbours."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float32]


def __getattr__(name: str) -> Any:
    """``FloatArray`` built on first use: importing this port does not import numpy (the
    lexical path never needs it)."""
    if name == "FloatArray":
        import numpy as np
        import numpy.typing as npt

        return npt.NDArray[np.float32]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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

"""Per-session LRU cache of query embeddings.

One :class:`EmbeddingCache` lives in each session (never module-level state). Entries are
keyed by ``(model_version, normalised query)`` so that vectors of different models never mix
and queries that differ only in case or whitespace share one entry. When the cache is full,
the least recently used entry is evicted; a capacity of 0 stores nothing.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

from swarmmem.core.model.errors import ConfigError
from swarmmem.core.model.ids import normalize_text

if TYPE_CHECKING:
    import numpy.typing as npt

    from swarmmem.ports.embedder import FloatArray

#: Default ``embeddings.cacheSize``.
DEFAULT_CAPACITY = 256


def normalize_query(query: str) -> str:
    """The cache form of a query: whitespace runs collapsed, lower-cased, trimmed."""
    return normalize_text(query).lower().strip()


class EmbeddingCache:
    """LRU map from ``(model_version, normalised query)`` to a read-only float32 vector.

    ``get`` returns the stored array itself (no copy); it is marked read-only so a caller
    cannot corrupt the entry. ``hits`` and ``misses`` count ``get`` outcomes for diagnostics.
    All methods are thread-safe.
    """

    __slots__ = ("_capacity", "_entries", "_lock", "hits", "misses")

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 0:
            raise ConfigError(f"embedding cache capacity must be an integer >= 0, got {capacity!r}")
        self._capacity = capacity
        self._entries: OrderedDict[tuple[str, str], FloatArray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def capacity(self) -> int:
        """Maximum number of entries (0: the cache never stores)."""
        return self._capacity

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 2:
            return False
        model_version, query = key
        if not isinstance(model_version, str) or not isinstance(query, str):
            return False
        return (model_version, normalize_query(query)) in self._entries

    def get(self, model_version: str, query: str) -> FloatArray | None:
        """The cached vector for ``query`` under ``model_version``, or None.

        A hit becomes the most recently used entry.
        """
        key = (model_version, normalize_query(query))
        with self._lock:
            vector = self._entries.get(key)
            if vector is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return vector

    def set(self, model_version: str, query: str, vector: npt.ArrayLike) -> None:
        """Store a read-only float32 copy of ``vector`` as the most recent entry.

        The least recently used entry is evicted when full; nothing is stored at capacity 0.
        """
        if self._capacity == 0:
            return
        import numpy as np  # (only a dense recall gets here; importing the cache is free)

        stored = np.array(vector, dtype=np.float32, copy=True)
        stored.setflags(write=False)
        key = (model_version, normalize_query(query))
        with self._lock:
            self._entries[key] = stored
            self._entries.move_to_end(key)
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        """Drop every entry and reset the counters."""
        with self._lock:
            self._entries.clear()
            self.hits = 0
            self.misses = 0

"""Deterministic, dependency-free embedder built from hashed character n-grams.

It needs nothing but numpy, never fails and gives the same vector on every platform, which
makes it the embedder of choice for tests, fixtures and environments without the dense extra.
It captures spelling overlap, not meaning.

Recipe (``hashing-ngram-v1``): lower-case the text, collapse whitespace runs to one space and
trim; for every character n-gram of width 2, 3 and 4, hash its UTF-8 bytes with 32-bit FNV-1a
and add the n-gram's weight (1.0 for widths 2 and 3, 0.5 for width 4) to bucket
``hash % dimension``; finally L2-normalise. A text shorter than two characters has no n-gram
and maps to the zero vector.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from swarmmem.core.model.ids import normalize_text
from swarmmem.ports.embedder import FloatArray

FNV_OFFSET_BASIS = 0x811C9DC5
FNV_PRIME = 0x01000193
_MASK32 = 0xFFFFFFFF

#: (width, weight) of every n-gram family.
NGRAM_WEIGHTS: tuple[tuple[int, float], ...] = ((2, 1.0), (3, 1.0), (4, 0.5))
MODEL_NAME = "hashing-ngram-v1"


def fnv1a_32(data: bytes) -> int:
    """32-bit FNV-1a hash of ``data``."""
    h = FNV_OFFSET_BASIS
    for byte in data:
        h = ((h ^ byte) * FNV_PRIME) & _MASK32
    return h


class HashingEmbedder:
    """Hashed character n-gram vectors; implements :class:`~swarmmem.ports.embedder.Embedder`.

    Pure and stateless after construction, hence thread-safe; always available.
    """

    def __init__(self, dimension: int = 64) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
            raise ValueError(f"dimension must be an integer >= 1, got {dimension!r}")
        self._dimension = dimension

    def __repr__(self) -> str:
        return f"HashingEmbedder(dimension={self._dimension})"

    @property
    def model_version(self) -> str:
        """``"hashing-ngram-v1:<dimension>"``."""
        return f"{MODEL_NAME}:{self._dimension}"

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        return self._dimension

    @property
    def available(self) -> bool:
        """Always True: nothing to load."""
        return True

    def embed(self, text: str) -> FloatArray:
        """The unit-length n-gram vector of ``text`` (zeros when it has no n-gram)."""
        if not isinstance(text, str):
            raise TypeError(f"embed() expects str, got {type(text).__name__}: {text!r}")
        vector = np.zeros(self._dimension, dtype=np.float64)
        normalised = normalize_text(text).lower()
        for width, weight in NGRAM_WEIGHTS:
            for start in range(len(normalised) - width + 1):
                gram = normalised[start : start + width]
                vector[fnv1a_32(gram.encode("utf-8")) % self._dimension] += weight
        norm = float(np.linalg.norm(vector))
        if norm > 0.0:
            vector /= norm
        return vector.astype(np.float32)

    def embed_batch(self, texts: Sequence[str]) -> FloatArray:
        """The vectors of ``texts`` in input order, shape ``(len(texts), dimension)``."""
        if isinstance(texts, str):
            raise TypeError("embed_batch() expects a sequence of str, not a single str")
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = self.embed(text)
        return out

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
from typing import TYPE_CHECKING

import attrs
import numpy as np

from swarmmem.adapters.models._inputs import positive_int, text_list
from swarmmem.core.model.ids import normalize_text
from swarmmem.ports.embedder import FloatArray

if TYPE_CHECKING:
    from swarmmem.core.config import EmbeddingsConfig

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


def _positive(_inst: object, attribute: attrs.Attribute[int], value: object) -> None:
    positive_int(attribute.name, value)


@attrs.frozen
class HashingEmbedder:
    """Hashed character n-gram vectors; implements :class:`~swarmmem.ports.embedder.Embedder`.

    A frozen value: pure and stateless, hence thread-safe; always available.
    """

    dimension: int = attrs.field(default=64, validator=_positive)

    @classmethod
    def from_config(cls, section: EmbeddingsConfig) -> HashingEmbedder:
        """An embedder of ``memory.embeddings.dimension``."""
        return cls(dimension=section.dimension)

    @property
    def model_version(self) -> str:
        """``"hashing-ngram-v1:<dimension>"``."""
        return f"{MODEL_NAME}:{self.dimension}"

    @property
    def available(self) -> bool:
        """Always True: nothing to load."""
        return True

    def embed(self, text: str) -> FloatArray:
        """The unit-length n-gram vector of ``text`` (zeros when it has no n-gram)."""
        if not isinstance(text, str):
            raise TypeError(f"embed() expects str, got {type(text).__name__}: {text!r}")
        vector = np.zeros(self.dimension, dtype=np.float64)
        normalised = normalize_text(text).lower()
        for width, weight in NGRAM_WEIGHTS:
            for start in range(len(normalised) - width + 1):
                gram = normalised[start : start + width]
                vector[fnv1a_32(gram.encode("utf-8")) % self.dimension] += weight
        norm = float(np.linalg.norm(vector))
        if norm > 0.0:
            vector /= norm
        return vector.astype(np.float32)

    def embed_batch(self, texts: Sequence[str]) -> FloatArray:
        """The vectors of ``texts`` in input order, shape ``(len(texts), dimension)``."""
        items = text_list(texts, "embed_batch")
        out = np.zeros((len(items), self.dimension), dtype=np.float32)
        for row, text in enumerate(items):
            out[row] = self.embed(text)
        return out

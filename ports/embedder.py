"""Embedder port: turns text into dense vectors for the hybrid recall path."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    #: A float32 vector of shape ``(dimension,)`` or a matrix of shape ``(n, dimension)``.
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
class Embedder(Protocol):
    """**Protocol:** map text to fixed-size float32 vectors for dense retrieval.

    Obligations:

    * ``embed(text)`` returns a C-contiguous ``float32`` array of shape ``(dimension,)``;
      ``embed_batch(texts)`` returns shape ``(len(texts), dimension)`` with row ``i`` equal
      (within float tolerance) to ``embed(texts[i])``: order is preserved and the vector of a
      text does not depend on the other texts of the batch. An empty batch gives ``(0, dim)``.
    * Vectors meant for cosine search are L2-normalised (a text with no features may map to
      the zero vector; the adapter documents it).
    * ``model_version`` identifies model and dimension as ``"<model>:<dimension>"``. Stored
      vectors are only comparable with vectors of the same ``model_version``.
    * ``dimension`` and ``model_version`` are known without loading any model.
    * Nothing heavy happens at import or construction: models load lazily on the first
      ``embed``/``embed_batch``. Reading ``available`` never loads a model; it is False when a
      dependency or model file is missing or a load already failed, and may be True before a
      load that then fails.
    * When the embedder cannot run, ``embed``/``embed_batch`` raise
      :class:`~swarmmem.core.model.errors.EmbeddingUnavailableError` naming the cause and the extra
      to install; callers fall back to lexical recall. Non-``str`` input raises ``TypeError``.
    * Instances are safe to share between threads (the lazy load happens once).
    * Optional: a model trained with separate query and document encodings (e5's
      ``query: `` / ``passage: `` prefixes) adds ``embed_query(text)``, same contract as
      ``embed``; ``embed``/``embed_batch`` then give the document side. Recall embeds its
      query with ``embed_query`` when the embedder has one (:func:`query_embedding`), else
      with ``embed``.
    """

    @property
    def model_version(self) -> str:
        """``"<model>:<dimension>"``, pinned in the store next to the vectors."""
        ...

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        ...

    @property
    def available(self) -> bool:
        """False when the embedder is known not to work; never loads a model."""
        ...

    def embed(self, text: str) -> FloatArray:
        """The vector of one text, shape ``(dimension,)``."""
        ...

    def embed_batch(self, texts: Sequence[str]) -> FloatArray:
        """The vectors of ``texts`` in input order, shape ``(len(texts), dimension)``."""
        ...


@runtime_checkable
class QueryEmbedder(Protocol):
    """**Optional capability:** queries embedded otherwise than stored texts (an
    instruction-tuned model's query prefix)."""

    def embed_query(self, text: str) -> FloatArray:
        """The vector of a recall query."""
        ...


@runtime_checkable
class ExplainsUnavailable(Protocol):
    """**Optional capability:** a model that can say why it cannot run, without loading."""

    @property
    def unavailable_reason(self) -> str | None:
        """Why the model cannot run, when known without loading."""
        ...


@runtime_checkable
class WarmsUp(Protocol):
    """**Optional capability:** a model that loads on first use and can start loading in
    the background."""

    def warm_up(self) -> None:
        """Start loading in the background."""
        ...


def query_embedding(embedder: Embedder, text: str) -> FloatArray:
    """The vector of a recall query: ``embed_query`` of a :class:`QueryEmbedder`, else
    ``embed``."""
    if isinstance(embedder, QueryEmbedder):
        return embedder.embed_query(text)
    return embedder.embed(text)

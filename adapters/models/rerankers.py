"""Rerankers behind :class:`~swarmmem.ports.reranker.Reranker`.

* :class:`CrossEncoderReranker` runs a local ONNX cross-encoder directory (``model.onnx`` or
  ``onnx/model.onnx`` plus ``tokenizer.json``, e.g. an ``optimum-cli export onnx`` of
  ms-marco-MiniLM-L-6-v2). No cross-encoder weights ship on PyPI, so nothing is found
  automatically: the user points at a directory.
* :class:`MaxSimReranker` needs no extra weights: late interaction over the token vectors of
  the bundled all-MiniLM-L6-v2 (see :meth:`OnnxMiniLmEmbedder.token_vectors`).
* :class:`IdentityReranker` keeps the fused order; the no-op default.

Every model loads lazily on the first ``rerank``; every failure surfaces as
:class:`~swarmmem.core.model.errors.RerankError`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from swarmmem.adapters.models._inputs import positive_int, text_list
from swarmmem.adapters.models._lazy import LazyModel, LazyRuntime
from swarmmem.adapters.models.onnx_embedder import (
    DENSE_INSTALL_HINT,
    OnnxMiniLmEmbedder,
    build_session,
    load_tokenizer,
    missing_runtime_module,
)
from swarmmem.core.model.errors import EmbeddingError, RerankError

if TYPE_CHECKING:
    from swarmmem.core.config import RerankConfig

_PAIR_INPUTS = frozenset({"input_ids", "attention_mask", "token_type_ids"})


def _check_texts(query: object, texts: Sequence[str]) -> list[str]:
    if not isinstance(query, str):
        raise TypeError(f"rerank() expects a str query, got {type(query).__name__}: {query!r}")
    return text_list(texts, "rerank")


class IdentityReranker:
    """Keeps the input order: text ``i`` of ``n`` scores ``n - i``. Always available."""

    @classmethod
    def from_config(cls, section: RerankConfig, *, embedder: object) -> IdentityReranker:
        """The reranker that keeps the order (nothing of the configuration applies)."""
        return cls()

    @property
    def name(self) -> str:
        """``"identity"``."""
        return "identity"

    @property
    def available(self) -> bool:
        """Always True."""
        return True

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """Strictly descending scores by input position."""
        items = _check_texts(query, texts)
        return [float(len(items) - index) for index in range(len(items))]


class _CrossEncoderRuntime:
    def __init__(self, session: Any, pair_tokenizer: Any, fallback_tokenizer: Any) -> None:
        self.session = session
        self.pair_tokenizer = pair_tokenizer
        self.fallback_tokenizer = fallback_tokenizer
        self.feeds = tuple(sorted(i.name for i in session.get_inputs()))
        self.output = session.get_outputs()[0].name


class CrossEncoderReranker(LazyModel):
    """A local ONNX cross-encoder scoring ``[CLS] query [SEP] text [SEP]`` pairs.

    The tokenizer truncates only the text (``only_second``) so the query is always seen whole;
    a query too long to leave room for any text falls back to ``longest_first`` for that
    batch. Segment ids (``token_type_ids``) are fed when the model takes them. The score is
    the model's raw logit: output ``(batch,)`` or ``(batch, 1)``; a two-logit head scores with
    its second (positive-class) logit.
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str],
        *,
        tokenizer_path: str | os.PathLike[str] | None = None,
        max_length: int = 512,
        batch_size: int = 32,
        intra_op_threads: int = 1,
    ) -> None:
        self._max_length = positive_int("max_length", max_length)
        self._batch_size = positive_int("batch_size", batch_size)
        self._threads = positive_int("intra_op_threads", intra_op_threads)
        if max_length < 4:
            raise ValueError(f"max_length must leave room for a pair, got {max_length!r}")
        self._model_dir = Path(model_dir)
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None
        self._lazy: LazyRuntime[_CrossEncoderRuntime] = LazyRuntime(
            self._load, self._missing, lambda why: RerankError(f"cross-encoder unavailable: {why}")
        )

    @classmethod
    def from_config(cls, section: RerankConfig, *, embedder: object) -> CrossEncoderReranker | None:
        """The cross-encoder exported to ``retrieval.rerank.path``; ``None`` without a path
        (no reranking: the model is not shipped)."""
        return cls(model_dir=section.path) if section.path else None

    def __repr__(self) -> str:
        return f"CrossEncoderReranker({str(self._model_dir)!r}, loaded={self.loaded})"

    @property
    def name(self) -> str:
        """``"cross-encoder"``."""
        return "cross-encoder"

    @property
    def model_dir(self) -> Path:
        """The configured model directory."""
        return self._model_dir

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """The cross-encoder logit of every ``(query, text)`` pair, aligned with ``texts``."""
        items = _check_texts(query, texts)
        if not items:
            return []
        runtime = self._lazy.get()
        scores: list[float] = []
        try:
            for start in range(0, len(items), self._batch_size):
                scores.extend(self._score(runtime, query, items[start : start + self._batch_size]))
        except RerankError:
            raise
        except Exception as exc:
            raise RerankError(
                f"cross-encoder inference failed ({type(exc).__name__}: {exc})"
            ) from exc
        return scores

    # ------------------------------------------------------------------ internals

    def _score(self, runtime: _CrossEncoderRuntime, query: str, batch: list[str]) -> list[float]:
        pairs = [(query, text) for text in batch]
        try:
            encodings = runtime.pair_tokenizer.encode_batch(pairs)
        except Exception:  # the query alone exceeds max_length: cut it as well
            encodings = runtime.fallback_tokenizer.encode_batch(pairs)
        columns = {
            "input_ids": [e.ids for e in encodings],
            "attention_mask": [e.attention_mask for e in encodings],
            "token_type_ids": [e.type_ids for e in encodings],
        }
        feeds = {name: np.array(columns[name], dtype=np.int64) for name in runtime.feeds}
        (logits,) = runtime.session.run([runtime.output], feeds)
        logits = np.asarray(logits, dtype=np.float64)
        if logits.ndim == 2 and logits.shape[1] in (1, 2):
            logits = logits[:, -1]
        if logits.shape != (len(batch),):
            raise RerankError(
                f"cross-encoder output has shape {tuple(logits.shape)}; expected "
                f"({len(batch)},), ({len(batch)}, 1) or ({len(batch)}, 2)"
            )
        if not np.all(np.isfinite(logits)):
            raise RerankError("cross-encoder produced a non-finite score")
        return [float(value) for value in logits]

    def _paths(self) -> tuple[Path, Path]:
        model = self._model_dir / "model.onnx"
        if not model.is_file() and (self._model_dir / "onnx" / "model.onnx").is_file():
            model = self._model_dir / "onnx" / "model.onnx"
        tokenizer = self._tokenizer_path or self._model_dir / "tokenizer.json"
        return model, tokenizer

    def _missing(self) -> str | None:
        if not self._model_dir.is_dir():
            return f"cross-encoder model directory not found: {self._model_dir}"
        for label, path in zip(("model", "tokenizer"), self._paths(), strict=True):
            if not path.is_file():
                return f"cross-encoder {label} file not found: {path}"
        module = missing_runtime_module()
        if module is not None:
            return f"Python package {module!r} is not installed ({DENSE_INSTALL_HINT})"
        return None

    def _load(self) -> _CrossEncoderRuntime:
        model, tokenizer = self._paths()
        session = build_session(model, self._threads)
        names = {i.name for i in session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= names or not names <= _PAIR_INPUTS:
            raise ValueError(f"unsupported cross-encoder inputs {sorted(names)}")
        pair = load_tokenizer(tokenizer, self._max_length, strategy="only_second")
        fallback = load_tokenizer(tokenizer, self._max_length, strategy="longest_first")
        return _CrossEncoderRuntime(session, pair, fallback)


class MaxSimReranker(LazyModel):
    """Late-interaction reranking with the bundled all-MiniLM-L6-v2 token vectors.

    Score of a text: for every real query token, the best cosine against the text's real
    tokens, averaged over the query tokens (``[CLS]``, ``[SEP]`` and padding are excluded on
    both sides). Scores lie in ``[-1, 1]``; a query or text without tokens scores 0. Query and
    texts are encoded in separate batches. Pass ``embedder`` to share an already configured
    :class:`~swarmmem.adapters.models.onnx_embedder.OnnxMiniLmEmbedder` (and its loaded session);
    otherwise one is built from ``model_path``/``tokenizer_path`` (default: the installed
    packages).
    """

    def __init__(
        self,
        embedder: OnnxMiniLmEmbedder | None = None,
        *,
        model_path: str | os.PathLike[str] | None = None,
        tokenizer_path: str | os.PathLike[str] | None = None,
        intra_op_threads: int = 1,
    ) -> None:
        if embedder is not None and (model_path is not None or tokenizer_path is not None):
            raise ValueError("pass either an embedder or model/tokenizer paths, not both")
        self._embedder = embedder or OnnxMiniLmEmbedder(
            model_path=model_path,
            tokenizer_path=tokenizer_path,
            intra_op_threads=intra_op_threads,
        )
        self._lazy = self._embedder  # available / loaded / unavailable_reason: the embedder's

    @classmethod
    def from_config(cls, section: RerankConfig, *, embedder: object) -> MaxSimReranker:
        """A MaxSim reranker; it shares ``embedder``'s loaded MiniLM session when it is one."""
        return cls(embedder if isinstance(embedder, OnnxMiniLmEmbedder) else None)

    def __repr__(self) -> str:
        return f"MaxSimReranker({self._embedder!r})"

    @property
    def name(self) -> str:
        """``"maxsim"``."""
        return "maxsim"

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """Mean over query tokens of the max cosine over each text's tokens."""
        items = _check_texts(query, texts)
        if not items:
            return []
        try:
            (query_vectors,) = self._embedder.token_vectors([query])
            text_vectors = self._embedder.token_vectors(items)
        except EmbeddingError as exc:
            raise RerankError(f"maxsim reranker unavailable: {exc}") from exc
        scores: list[float] = []
        for vectors in text_vectors:
            if query_vectors.shape[0] == 0 or vectors.shape[0] == 0:
                scores.append(0.0)
                continue
            similarity = query_vectors @ vectors.T
            scores.append(float(similarity.max(axis=1).mean()))
        return scores

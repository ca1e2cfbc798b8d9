"""The files of a user's own all-MiniLM-L6-v2 ONNX export, and sha256 digests of model files.

``model_path`` (``embeddings.modelPath``) names one of:

* a directory holding ``model.onnx`` (what ``optimum-cli export onnx`` writes) or, failing
  that, ``onnx/model.onnx`` (the Hugging Face repository layout; a hub cache snapshot, whose
  files are symlinks into ``blobs/``, works as well);
* an ``.onnx`` file itself, e.g. one of a repository's ``onnx/model_*.onnx`` variants.

The model must be one self-contained file (no external-data side file). Its tokenizer is the
``tokenizer.json`` or, without one, the ``vocab.txt`` of the model file's directory or, when
that directory is ``onnx/``, of its parent. ``tokenizer_config.json``,
``special_tokens_map.json`` and ``config.json`` may lie beside them and are not read: the
tokenisation settings (256 tokens, padding to the longest text) are the embedder's own.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from pathlib import Path

#: Where a model directory holds its ONNX file, in the order they are tried.
MODEL_FILES_IN_DIR: tuple[tuple[str, ...], ...] = (("model.onnx",), ("onnx", "model.onnx"))
#: The tokenizer files looked for beside a user's model, the preferred first.
TOKENIZER_FILES: tuple[str, ...] = ("tokenizer.json", "vocab.txt")
_CHUNK = 1 << 20


def installed_package_file(package: str, *parts: str) -> Path | None:
    """Path of ``parts`` inside the installed top-level ``package``, without importing it.

    None when the package is not installed (the file itself may still be missing).
    """
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)), *parts)


class ModelFilesError(ValueError):
    """A model path that names no usable model or tokenizer file (the message says which)."""


def locate_model_file(path: Path) -> Path:
    """The ONNX file that ``path`` (a model directory or an ``.onnx`` file) names."""
    if path.is_dir():
        for parts in MODEL_FILES_IN_DIR:
            candidate = path.joinpath(*parts)
            if candidate.is_file():
                return candidate
        names = " or ".join("/".join(parts) for parts in MODEL_FILES_IN_DIR)
        raise ModelFilesError(f"the model directory {path} holds no {names}")
    if not path.exists():
        raise ModelFilesError(f"model path not found: {path}")
    if not path.is_file():
        raise ModelFilesError(f"model path is neither a directory nor a file: {path}")
    if path.suffix.lower() != ".onnx":
        raise ModelFilesError(
            f"model file {path} is not an ONNX export (.onnx); name the export's directory "
            "or its .onnx file"
        )
    return path


def tokenizer_dirs(model_file: Path) -> list[Path]:
    """The directories searched for the tokenizer of ``model_file``, nearest first."""
    here = model_file.parent
    return [here, here.parent] if here.name == "onnx" else [here]


def locate_tokenizer_file(model_file: Path) -> Path:
    """The ``tokenizer.json`` (else ``vocab.txt``) that belongs to ``model_file``."""
    dirs = tokenizer_dirs(model_file)
    for directory in dirs:
        for name in TOKENIZER_FILES:
            candidate = directory / name
            if candidate.is_file():
                return candidate
    places = ", ".join(str(d) for d in dirs)
    wanted = " or ".join(TOKENIZER_FILES)
    raise ModelFilesError(f"no tokenizer file ({wanted}) for the model {model_file} in {places}")


def bytes_sha256(data: bytes) -> str:
    """The hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


#: Digests already computed, by (real path, inode, size, modification time).
_DIGESTS: dict[tuple[str, int, int, int], str] = {}
_DIGESTS_LOCK = threading.Lock()


def file_sha256(path: Path) -> str:
    """The hex sha256 of the file at ``path`` (``OSError`` when it cannot be read).

    Remembered for the process while the file keeps its inode, size and modification time,
    so a server that builds an embedder per call hashes a model once.
    """
    real = path.resolve()
    status = real.stat()
    key = (str(real), status.st_ino, status.st_size, status.st_mtime_ns)
    with _DIGESTS_LOCK:
        known = _DIGESTS.get(key)
    if known is not None:
        return known
    digest = hashlib.sha256()
    with real.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    value = digest.hexdigest()
    with _DIGESTS_LOCK:
        _DIGESTS[key] = value
    return value

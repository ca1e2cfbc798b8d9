"""Optional NER PII detector: people, organisations and places from a local ONNX model.

No model ships with swarmmem and nothing is ever downloaded, so this detector needs a local
token-classification model directory holding

* ``model.onnx`` (or ``model_quantized.onnx``, either possibly under ``onnx/``) with inputs
  ``input_ids`` and optionally ``attention_mask`` / ``token_type_ids`` (int64, ``[batch,
  tokens]``) and, as its first output, logits ``[batch, tokens, labels]``;
* ``tokenizer.json`` (a Hugging Face *tokenizers* file);
* ``config.json`` with an ``id2label`` map using BIO labels (``B-PER``, ``I-ORG``, ...).

A BERT NER model exported with ``optimum-cli export onnx --task token-classification`` has
exactly this layout. Without such a directory, or without ``onnxruntime`` and ``tokenizers``,
the detector fails closed: construction raises
:class:`~swarmmem.core.model.errors.MemoryPiiDetectorError` whose message says what to install and
configure, and so does any later failure to load or run the model.

Decoding follows the reference: ``PER`` -> ``person``, ``ORG`` -> ``organization``, ``LOC`` ->
``location`` (``MISC`` and ``O`` are ignored); consecutive tokens of the same type form one
entity whose confidence is the lowest token score. The score is the highest entity
confidence and the counts are per type in order of first appearance. Text is normalised as
for the regex detector (NFKC, invisible characters removed). Long texts are cut into
consecutive windows of ``max_length`` tokens, and an entity may continue across a window
boundary.

The model is loaded on the first :meth:`NerPiiDetector.detect` call, once, under a lock, so
concurrent first calls share a single load.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from swarmmem.adapters.detectors.regex_pii import normalize_for_detection
from swarmmem.core.model.errors import MemoryPiiDetectorError
from swarmmem.ports.detectors import PiiFindings

if TYPE_CHECKING:
    from swarmmem.core.config import RedactionConfig

__all__ = ["ENTITY_TYPES", "NerPiiDetector"]

#: BIO entity suffix -> reported PII type.
ENTITY_TYPES: dict[str, str] = {"PER": "person", "ORG": "organization", "LOC": "location"}

_MODEL_CANDIDATES = (
    "model.onnx",
    "model_quantized.onnx",
    "onnx/model.onnx",
    "onnx/model_quantized.onnx",
)

_HOW_TO = (
    "Install the runtime with `pip install 'swarmmem[dense]'` (onnxruntime and tokenizers), "
    "and pass model_dir=<directory> pointing at a local ONNX token-classification model: "
    "model.onnx, tokenizer.json and a config.json whose id2label uses B-/I- PER, ORG and LOC "
    "labels (for example the output of `optimum-cli export onnx --task token-classification "
    "--model dslim/bert-base-NER <directory>`, run once on a machine that can download it). "
    'Or set memory.redaction.piiDetector to "regex".'
)


def _fail(reason: str) -> MemoryPiiDetectorError:
    return MemoryPiiDetectorError(f"NER PII detector unavailable: {reason}. {_HOW_TO}")


@attrs.frozen(kw_only=True)
class _Model:
    session: Any
    tokenizer: Any
    input_names: frozenset[str]
    labels: tuple[str | None, ...]  # label id -> PII type, None for ignored labels


@attrs.frozen(kw_only=True)
class _Token:
    index: int
    kind: str | None
    score: float


def _label_type(label: str) -> str | None:
    """``B-PER`` / ``I-PER`` / ``PER`` -> ``person``; anything else -> ``None``."""
    suffix = label.split("-", 1)[1] if label[:2] in ("B-", "I-") else label
    return ENTITY_TYPES.get(suffix.upper())


def _find_model_file(directory: Path) -> Path | None:
    for candidate in _MODEL_CANDIDATES:
        path = directory / candidate
        if path.is_file():
            return path
    return None


class NerPiiDetector:
    """:class:`~swarmmem.ports.detectors.PiiDetector` backed by a local ONNX NER model.

    Args:
        model_dir: the model directory (see the module docstring). ``None`` fails closed.
        max_length: tokens per window, special tokens included.
        threads: onnxruntime intra-op threads (``None``: onnxruntime's default).

    Raises:
        MemoryPiiDetectorError: no model directory, a missing file, or onnxruntime /
            tokenizers not installed.
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        *,
        max_length: int = 512,
        threads: int | None = None,
    ) -> None:
        if model_dir is None:
            raise _fail("no local model directory was configured")
        directory = Path(model_dir)
        if not directory.is_dir():
            raise _fail(f"model directory {str(directory)!r} does not exist")
        model_file = _find_model_file(directory)
        if model_file is None:
            raise _fail(f"no model.onnx found in {str(directory)!r}")
        for name in ("tokenizer.json", "config.json"):
            if not (directory / name).is_file():
                raise _fail(f"{name} is missing from {str(directory)!r}")
        missing = [m for m in ("onnxruntime", "tokenizers") if importlib.util.find_spec(m) is None]
        if missing:
            raise _fail(f"{' and '.join(missing)} not installed")
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 3:
            raise MemoryPiiDetectorError(f"max_length must be an integer >= 3; got {max_length!r}")
        self.model_dir = directory
        self._model_file = model_file
        self._max_length = max_length
        self._threads = threads
        self._model: _Model | None = None
        self._load_lock = threading.Lock()

    @classmethod
    def from_config(cls, section: RedactionConfig) -> NerPiiDetector:
        """The NER detector of ``redaction.nerModelPath`` (else the default model folder)."""
        return cls(model_dir=section.ner_model_path) if section.ner_model_path else cls()

    @property
    def loaded(self) -> bool:
        """True once the model has been loaded."""
        return self._model is not None

    def detect(self, text: str) -> PiiFindings:
        """Score and per-type counts of the named entities in ``text``.

        Raises:
            MemoryPiiDetectorError: the model cannot be loaded or run (fail closed).
        """
        model = self._load()
        normalized = normalize_for_detection(text)
        if not normalized.strip():
            return PiiFindings()
        try:
            tokens = self._classify(model, normalized)
        except MemoryPiiDetectorError:
            raise
        except Exception as exc:
            raise _fail(f"running the model failed ({type(exc).__name__}: {exc})") from exc
        return _summarise(tokens)

    # -- internals ----------------------------------------------------------------------

    def _load(self) -> _Model:
        with self._load_lock:  # cheap next to a model run; concurrent first calls load once
            if self._model is None:
                self._model = self._build()
            return self._model

    def _build(self) -> _Model:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise _fail(f"cannot import the runtime ({exc})") from exc
        try:
            config = json.loads((self.model_dir / "config.json").read_text(encoding="utf-8"))
            id2label = config["id2label"]
            size = max(int(key) for key in id2label) + 1
            labels: list[str | None] = [None] * size
            for key, label in id2label.items():
                labels[int(key)] = _label_type(str(label))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise _fail(f"config.json has no usable id2label map ({exc})") from exc
        try:
            tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
            tokenizer.no_padding()
            tokenizer.enable_truncation(max_length=self._max_length, stride=0)
            options = ort.SessionOptions()
            if self._threads is not None:
                options.intra_op_num_threads = self._threads
            session = ort.InferenceSession(
                str(self._model_file), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise _fail(f"loading the model failed ({type(exc).__name__}: {exc})") from exc
        names = frozenset(i.name for i in session.get_inputs())
        if "input_ids" not in names:
            raise _fail(f"the model has no input_ids input (inputs: {sorted(names)})")
        return _Model(session=session, tokenizer=tokenizer, input_names=names, labels=tuple(labels))

    def _classify(self, model: _Model, text: str) -> list[_Token]:
        encoding = model.tokenizer.encode(text)
        windows = [encoding, *encoding.overflowing]
        tokens: list[_Token] = []
        index = 0
        for window in windows:
            ids = np.asarray([window.ids], dtype=np.int64)
            if ids.shape[1] == 0:
                continue
            feeds = {"input_ids": ids}
            if "attention_mask" in model.input_names:
                feeds["attention_mask"] = np.asarray([window.attention_mask], dtype=np.int64)
            if "token_type_ids" in model.input_names:
                feeds["token_type_ids"] = np.zeros_like(ids)
            logits = np.asarray(model.session.run(None, feeds)[0], dtype=np.float64)
            if logits.ndim != 3 or logits.shape[1] != ids.shape[1]:
                raise _fail(f"unexpected logits shape {logits.shape} for {ids.shape[1]} tokens")
            if logits.shape[2] != len(model.labels):
                raise _fail(
                    f"the model emits {logits.shape[2]} labels but config.json names "
                    f"{len(model.labels)}"
                )
            row = logits[0]
            shifted = np.exp(row - row.max(axis=1, keepdims=True))
            probs = shifted / shifted.sum(axis=1, keepdims=True)
            best = probs.argmax(axis=1)
            for position, special in enumerate(window.special_tokens_mask):
                if special:
                    continue
                label = int(best[position])
                tokens.append(
                    _Token(
                        index=index,
                        kind=model.labels[label],
                        score=float(probs[position, label]),
                    )
                )
                index += 1
        return tokens


def _summarise(tokens: list[_Token]) -> PiiFindings:
    """Merge consecutive same-type tokens into entities and summarise them."""
    entities: list[tuple[str, float]] = []
    previous: _Token | None = None
    for token in tokens:
        if token.kind is None:
            previous = None
            continue
        if (
            previous is not None
            and previous.kind == token.kind
            and token.index == previous.index + 1
        ):
            kind, score = entities[-1]
            entities[-1] = (kind, min(score, token.score))
        else:
            entities.append((token.kind, token.score))
        previous = token
    counts: dict[str, int] = {}
    for kind, _ in entities:
        counts[kind] = counts.get(kind, 0) + 1
    score = max((s for _, s in entities), default=0.0)
    return PiiFindings(score=score, counts_by_type=counts)

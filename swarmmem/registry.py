"""The adapter registry: configuration strings -> adapter classes, imported lazily.

Every place that takes an adapter key also accepts a ready instance.
"""

from __future__ import annotations

import importlib
from typing import Any

from swarmmem.core.model.errors import MissingDependencyError, UnknownAdapterError

# kind -> name -> ("module:attribute", extra to install or None)
REGISTRY: dict[str, dict[str, tuple[str, str | None]]] = {
    "store": {
        "sqlite": ("swarmmem.adapters.storage.sqlite:SqliteStore", None),
        "local-jsonl": ("swarmmem.adapters.storage.jsonl:JsonlStore", None),
        "memory": ("swarmmem.adapters.storage.memory:InMemoryStore", None),
        "postgres": ("swarmmem.adapters.storage.postgres:PostgresStore", "postgres"),
    },
    "secrets": {"regex": ("swarmmem.adapters.detectors.regex_secrets:RegexSecretDetector", None)},
    "pii": {
        "regex": ("swarmmem.adapters.detectors.regex_pii:RegexPiiDetector", None),
        "ner": ("swarmmem.adapters.detectors.ner_pii:NerPiiDetector", "dense"),
    },
    "embedder": {
        "onnx": ("swarmmem.adapters.models.onnx_embedder:OnnxMiniLmEmbedder", "dense"),
        "hashing": ("swarmmem.adapters.models.hashing_embedder:HashingEmbedder", None),
    },
    "reranker": {
        "cross-encoder": ("swarmmem.adapters.models.rerankers:CrossEncoderReranker", "dense"),
        "maxsim": ("swarmmem.adapters.models.rerankers:MaxSimReranker", "dense"),
        "identity": ("swarmmem.adapters.models.rerankers:IdentityReranker", None),
    },
}


def choices(kind: str) -> list[str]:
    """Registered names of an adapter kind."""
    return sorted(REGISTRY[kind])


def resolve(kind: str, name: str) -> Any:
    """The adapter class registered as ``name`` for ``kind``.

    Raises:
        UnknownAdapterError: ``name`` is not registered (the message lists the choices).
        MissingDependencyError: importing it needs an optional extra (named in the message).
    """
    table = REGISTRY.get(kind)
    if table is None or name not in table:
        valid = ", ".join(choices(kind)) if table else ""
        raise UnknownAdapterError(f"unknown {kind} adapter {name!r}; choose from: {valid}")
    target, extra = table[name]
    module_name, attr = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        hint = f"pip install 'swarmmem[{extra}]'" if extra else "reinstall swarmmem"
        raise MissingDependencyError(
            f"the {kind} adapter {name!r} needs a missing package ({exc.name}); {hint}"
        ) from exc
    return getattr(module, attr)


def maxsim_reranker(embedder: Any) -> Any:
    """A MaxSim reranker sharing ``embedder``'s loaded MiniLM session, or ``None``."""
    try:
        from swarmmem.adapters.models.onnx_embedder import OnnxMiniLmEmbedder
        from swarmmem.adapters.models.rerankers import MaxSimReranker
    except ImportError:
        return None
    if isinstance(embedder, OnnxMiniLmEmbedder):
        return MaxSimReranker(embedder)
    return None

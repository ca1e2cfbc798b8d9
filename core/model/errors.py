"""The swarmmem error hierarchy.

Every error the library raises on purpose derives from :class:`SwarmMemoryError`::

    SwarmMemoryError
    ├── ConfigError (ValueError)
    │   ├── UnknownAdapterError (LookupError)
    │   └── MissingDependencyError (ImportError)
    ├── MemoryValidationError (ValueError)
    │   └── MemoryPiiRejectedError
    ├── ScopeError (PermissionError)
    ├── UntrustedPathError (PermissionError)
    ├── MemoryDisabledError
    ├── NotFoundError (LookupError)
    ├── ConflictError
    ├── StorageError
    │   └── CorruptStoreError
    ├── EmbeddingError
    │   ├── EmbeddingUnavailableError
    │   └── EmbeddingVersionMismatchError
    ├── RerankError
    ├── DetectorError
    │   └── MemoryPiiDetectorError
    └── EvaluationError (ValueError)

Each class carries a stable machine-readable ``code`` (the ``error`` field of CLI and MCP
results), given as a class keyword: ``class ConfigError(SwarmMemoryError, code="config_error")``;
a subclass declared without one inherits its parent's. Messages name the offending value so
that a caller can fix the input without reading code.
"""

from __future__ import annotations

from typing import ClassVar


class SwarmMemoryError(Exception):
    """Base class of every error raised by swarmmem."""

    code: ClassVar[str] = "swarm_memory_error"

    def __init_subclass__(cls, *, code: str | None = None, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code


class ConfigError(SwarmMemoryError, ValueError, code="config_error"):
    """The ``memory`` configuration is malformed, names an unknown key or is out of range."""


class UnknownAdapterError(ConfigError, LookupError, code="unknown_adapter"):
    """A configuration string names an adapter that is not registered."""


class MissingDependencyError(ConfigError, ImportError, code="missing_dependency"):
    """An optional dependency is not installed; the message names the extra to install."""


class MemoryValidationError(SwarmMemoryError, ValueError, code="memory_validation_error"):
    """A record, proposal, decision or request breaks a write or read rule."""


class MemoryPiiRejectedError(MemoryValidationError, code="memory_pii_rejected"):
    """Durable text scored above the configured PII threshold."""


class ScopeError(SwarmMemoryError, PermissionError, code="scope_not_allowed"):
    """A caller asked for a scope outside the scopes derived from its context."""


class UntrustedPathError(SwarmMemoryError, PermissionError, code="untrusted_path"):
    """A project folder, configuration, file or socket is not safely the user's: a symbolic
    link where none may be, owned by another user, or writable by every user."""


class MemoryDisabledError(SwarmMemoryError, code="memory_disabled"):
    """Memory is disabled in the configuration; nothing is read or written."""


class NotFoundError(SwarmMemoryError, LookupError, code="not_found"):
    """A memory, proposal or file that the operation needs does not exist."""


class ConflictError(SwarmMemoryError, code="conflict"):
    """The operation conflicts with stored state (e.g. a proposal that is no longer pending)."""


class StorageError(SwarmMemoryError, code="storage_error"):
    """A storage provider failed; the stored data is unchanged."""


class CorruptStoreError(StorageError, code="corrupt_store"):
    """A store file could not be read (truncated database, malformed JSONL line)."""


class EmbeddingError(SwarmMemoryError, code="embedding_error"):
    """Base class of dense-embedding failures."""


class EmbeddingUnavailableError(EmbeddingError, code="embedding_unavailable"):
    """The embedder cannot run (missing package or model); recall falls back to lexical."""


class EmbeddingVersionMismatchError(EmbeddingError, code="embedding_version_mismatch"):
    """The stored embedding model version differs from the embedder's version."""


class RerankError(SwarmMemoryError, code="rerank_error"):
    """A reranker failed; recall keeps the fused order."""


class DetectorError(SwarmMemoryError, code="detector_error"):
    """A secret or PII detector failed."""


class MemoryPiiDetectorError(DetectorError, code="memory_pii_detector_error"):
    """The configured PII detector cannot run; detection fails closed."""


class EvaluationError(SwarmMemoryError, ValueError, code="evaluation_error"):
    """Fixtures, manifests or evaluation options are invalid."""

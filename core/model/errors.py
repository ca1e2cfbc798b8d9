"""The swarmmem error hierarchy.

Every error the library raises on purpose derives from :class:`SwarmMemoryError`::

    SwarmMemoryError
    ├── ConfigError (ValueError)
    │   ├── UnknownAdapterError (LookupError)
    │   └── MissingDependencyError (ImportError)
    ├── MemoryValidationError (ValueError)
    │   └── MemoryPiiRejectedError
    ├── ScopeError (PermissionError)
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
    ├── EvaluationError (ValueError)
    └── KernelInputError (ValueError)

Messages name the offending value so that a caller can fix the input without reading code.
"""

from __future__ import annotations


class SwarmMemoryError(Exception):
    """Base class of every error raised by swarmmem."""

    code = "swarm_memory_error"


class ConfigError(SwarmMemoryError, ValueError):
    """The ``memory`` configuration is malformed, names an unknown key or is out of range."""

    code = "config_error"


class UnknownAdapterError(ConfigError, LookupError):
    """A configuration string names an adapter that is not registered."""

    code = "unknown_adapter"


class MissingDependencyError(ConfigError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""

    code = "missing_dependency"


class MemoryValidationError(SwarmMemoryError, ValueError):
    """A record, proposal, decision or request breaks a write or read rule."""

    code = "memory_validation_error"


class MemoryPiiRejectedError(MemoryValidationError):
    """Durable text scored above the configured PII threshold."""

    code = "memory_pii_rejected"


class ScopeError(SwarmMemoryError, PermissionError):
    """A caller asked for a scope outside the scopes derived from its context."""

    code = "scope_not_allowed"


class MemoryDisabledError(SwarmMemoryError):
    """Memory is disabled in the configuration; nothing is read or written."""

    code = "memory_disabled"


class NotFoundError(SwarmMemoryError, LookupError):
    """A memory, proposal or file that the operation needs does not exist."""

    code = "not_found"


class ConflictError(SwarmMemoryError):
    """The operation conflicts with stored state (e.g. a proposal that is no longer pending)."""

    code = "conflict"


class StorageError(SwarmMemoryError):
    """A storage provider failed; the stored data is unchanged."""

    code = "storage_error"


class CorruptStoreError(StorageError):
    """A store file could not be read (truncated database, malformed JSONL line)."""

    code = "corrupt_store"


class EmbeddingError(SwarmMemoryError):
    """Base class of dense-embedding failures."""

    code = "embedding_error"


class EmbeddingUnavailableError(EmbeddingError):
    """The embedder cannot run (missing package or model); recall falls back to lexical."""

    code = "embedding_unavailable"


class EmbeddingVersionMismatchError(EmbeddingError):
    """The stored embedding model version differs from the embedder's version."""

    code = "embedding_version_mismatch"


class RerankError(SwarmMemoryError):
    """A reranker failed; recall keeps the fused order."""

    code = "rerank_error"


class DetectorError(SwarmMemoryError):
    """A secret or PII detector failed."""

    code = "detector_error"


class MemoryPiiDetectorError(DetectorError):
    """The configured PII detector cannot run; detection fails closed."""

    code = "memory_pii_detector_error"


class EvaluationError(SwarmMemoryError, ValueError):
    """Fixtures, manifests or evaluation options are invalid."""

    code = "evaluation_error"


class KernelInputError(SwarmMemoryError, ValueError):
    """A speed kernel received inputs of mismatched shape or type."""

    code = "kernel_input_error"

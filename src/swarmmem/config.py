"""Loading the ``memory`` section of ``.opencode/opencode-swarm.json`` into the typed tree.

The tree (:class:`~swarmmem.core.config.MemoryConfig`) holds every default, check and meaning;
this module reads the file, checks adapter and model names against the registry and the rules
that join two keys, and gives the JSON shape back (:func:`load`, :func:`validate`). Unknown
keys and out-of-range values raise :class:`~swarmmem.core.model.errors.ConfigError` naming the
dotted key (with the nearest known key when one is close); a former spelling is accepted with
a :class:`~swarmmem.core.model.settings.ConfigDeprecationWarning`. Memory is disabled by
default. The configuration reference's table (``docs/configuration.md``) is
:func:`reference_table`; ``swarmmem config`` edits the file through :func:`with_value`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from swarmmem.core.config import EmbeddingsConfig, MemoryConfig, RerankConfig
from swarmmem.core.model.errors import ConfigError
from swarmmem.core.model.settings import as_dict, build, nearest_key, walk
from swarmmem.project import CONFIG_RELATIVE_PATH as CONFIG_RELATIVE_PATH
from swarmmem.project import read_small_file
from swarmmem.registry import MODELS, choices


def parse(section: Any) -> MemoryConfig:
    """The tree of the ``memory`` object ``section`` (absent keys take their defaults).

    Raises:
        ConfigError: naming the first offending dotted key.
    """
    if not isinstance(section, Mapping):
        raise ConfigError(f"memory must be an object; got {type(section).__name__}")
    tree = build(MemoryConfig, section, "memory", choices)
    embeddings = _given(section, "embeddings")
    retrieval = _given(_given(section, "retrieval"), "rerank")
    tree = attrs.evolve(
        tree,
        embeddings=_embedder_model(tree.embeddings, "provider" in embeddings),
        retrieval=attrs.evolve(
            tree.retrieval, rerank=_reranker_model(tree.retrieval.rerank, "provider" in retrieval)
        ),
    )
    _check_hnsw(tree)
    return tree


def _given(section: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = section.get(key)
    return value if isinstance(value, Mapping) else {}


def _model_adapter(kind: str, key: str, model: str) -> str:
    """The adapter that runs ``model`` (refused naming ``key`` when none does)."""
    known = MODELS[kind]
    if model not in known:
        near = nearest_key(model, list(known))
        hint = f" (did you mean {near!r}?)" if near else ""
        raise ConfigError(
            f"memory.{key} must name a model the package runs ({', '.join(known)}); "
            f"got {model!r}{hint}"
        )
    return known[model][0]


def _embedder_model(emb: EmbeddingsConfig, provider_given: bool) -> EmbeddingsConfig:
    """``embeddings.model`` selects the embedder (or labels ``modelPath``); the shipped
    models fix ``embeddings.dimension``."""
    if emb.model_path is not None:
        if emb.provider != "onnx":
            raise ConfigError(
                f"memory.embeddings.modelPath needs embeddings.provider 'onnx'; got "
                f"{emb.provider!r}"
            )
        return emb
    if emb.model is not None:
        adapter = _model_adapter("embedder", "embeddings.model", emb.model)
        if provider_given and adapter != emb.provider:
            raise ConfigError(
                f"memory.embeddings.model {emb.model!r} runs on embeddings.provider "
                f"{adapter!r}, not {emb.provider!r}"
            )
        emb = attrs.evolve(emb, provider=adapter)
    width = next((w for _m, (a, w) in MODELS["embedder"].items() if a == emb.provider), None)
    if width is not None and emb.dimension != width:
        raise ConfigError(
            f"memory.embeddings.dimension must be {width} with embeddings.provider "
            f"{emb.provider!r} (the model's width); got {emb.dimension!r}"
        )
    return emb


def _reranker_model(rerank: RerankConfig, provider_given: bool) -> RerankConfig:
    """``retrieval.rerank.model`` selects the reranker when the provider is not given."""
    if rerank.model is None:
        return rerank
    adapter = _model_adapter("reranker", "retrieval.rerank.model", rerank.model)
    if provider_given and adapter != rerank.provider:
        raise ConfigError(
            f"memory.retrieval.rerank.model {rerank.model!r} runs on retrieval.rerank.provider "
            f"{adapter!r}, not {rerank.provider!r}"
        )
    return attrs.evolve(rerank, provider=adapter)


def _check_hnsw(tree: MemoryConfig) -> None:
    pg = tree.postgres
    if pg.hnsw_ef_construction < 2 * pg.hnsw_m:
        raise ConfigError(
            "memory.postgres.hnswEfConstruction must be at least twice memory.postgres.hnswM "
            f"(pgvector's rule); got {pg.hnsw_ef_construction!r} with hnswM {pg.hnsw_m!r}"
        )


def validate(section: Any) -> dict[str, Any]:
    """``section`` merged over the defaults, in its JSON shape (see :func:`parse`)."""
    return as_dict(parse(section))


def defaults() -> dict[str, Any]:
    """A fresh nested dict with every default."""
    return as_dict(MemoryConfig())


def read(root: Path, config: Mapping[str, Any] | str | os.PathLike[str] | None) -> MemoryConfig:
    """The effective tree.

    Args:
        root: the project root.
        config: ``None`` (read ``<root>/.opencode/opencode-swarm.json`` if present), a dict
            of the ``memory`` section, or a path to a JSON file holding ``{"memory": {...}}``
            (or the bare section).
    """
    if config is None:
        path = root / CONFIG_RELATIVE_PATH
        return parse(_read_section(path)) if path.exists() else MemoryConfig()
    if isinstance(config, Mapping):
        section = (
            config.get("memory", config) if "memory" in config and len(config) == 1 else config
        )
        return parse(section)
    return parse(_read_section(Path(config)))


def load(root: Path, config: Mapping[str, Any] | str | os.PathLike[str] | None) -> dict[str, Any]:
    """The effective configuration in its JSON shape (see :func:`read`)."""
    return as_dict(read(root, config))


def read_json_object(path: Path) -> dict[str, Any]:
    """The JSON object a configuration file holds (``swarmmem init`` completes the same file).

    Raises:
        ConfigError: the file is missing, unreadable, not JSON or not a JSON object.
    """
    try:
        data = json.loads(read_small_file(path).decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"configuration file not found: {path}") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read configuration {path}: {exc}") from exc
    except RecursionError:
        raise ConfigError(f"cannot read configuration {path}: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise ConfigError(f"configuration {path} must hold a JSON object")
    return data


def _read_section(path: Path) -> Mapping[str, Any]:
    data = read_json_object(path)
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


_TOP_KEYS = frozenset(defaults())


# --------------------------------------------------------------------------- editing


def parse_value(text: str) -> Any:
    """A value given on the command line: its JSON reading where it parses (``true``,
    ``0.3``, ``"text"``, ``null``), else the text itself."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def relative_key(key: str) -> str:
    """``key`` relative to the ``memory`` section: the ``memory.`` that messages and the
    configuration reference write in front of a key may be given or not
    (``memory.embeddings.enabled`` is ``embeddings.enabled``)."""
    return key.removeprefix("memory.")


def value_key(key: str) -> str:
    """``key`` (relative to the ``memory`` section, e.g. ``embeddings.enabled``) when it names
    one value of the tree.

    Raises:
        ConfigError: an unknown key (with the nearest known one), a section, or a former
            spelling (naming the current one).
    """
    keys = {k.name: k for k in walk(MemoryConfig)}
    if key in keys:
        return key
    former = next((k.name for k in keys.values() if key in k.aliases), None)
    if former is not None:
        raise ConfigError(f"memory.{key} is now spelled memory.{former}; use that")
    inside = sorted(name for name in keys if name.startswith(key + "."))
    if inside:
        raise ConfigError(
            f"memory.{key} is a section; name one of its keys: {', '.join(inside[:8])}"
            + (", ..." if len(inside) > 8 else "")
        )
    near = nearest_key(key, list(keys))
    hint = f" (did you mean memory.{near}?)" if near else ""
    raise ConfigError(f"unknown configuration key memory.{key}{hint}")


def memory_section(data: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """The ``memory`` object of a configuration file's JSON object ``data``: a bare section
    is the file's own object; a file without one has an empty one."""
    if "memory" not in data and any(key in _TOP_KEYS for key in data):
        return dict(data)  # a bare memory section (see _read_section)
    section = data.get("memory", {})
    if not isinstance(section, dict):
        raise ConfigError(f"memory in {path} must be an object")
    return section


def with_value(data: Mapping[str, Any], key: str, value: Any, path: Path) -> dict[str, Any]:
    """A copy of the configuration file's object ``data`` with ``memory.<key>`` set to
    ``value``, every other key kept; refused unless the result is a valid configuration.

    Raises:
        ConfigError: naming the key (or the value) at fault.
    """
    key = value_key(key)
    memory_section(data, path)  # the file's memory section is an object
    new: dict[str, Any] = json.loads(json.dumps(data))
    bare = "memory" not in new and any(k in _TOP_KEYS for k in new)
    target = new if bare else new.setdefault("memory", {})
    *parents, leaf = key.split(".")
    for i, part in enumerate(parents):
        target = target.setdefault(part, {})
        if not isinstance(target, dict):
            where = ".".join(parents[: i + 1])
            raise ConfigError(f"memory.{where} in {path} must be an object")
    target[leaf] = value
    parse(memory_section(new, path))
    return new


def lookup(tree: Mapping[str, Any], key: str) -> Any:
    """The value (or section) at the dotted ``key`` of a JSON-shaped configuration.

    Raises:
        KeyError: there is none.
    """
    value: Any = tree
    for part in key.split("."):
        if not isinstance(value, Mapping) or part not in value:
            raise KeyError(key)
        value = value[part]
    return value


def reference_table() -> str:
    """The configuration reference's table (``docs/configuration.md``): one row per key of
    the tree, in its order."""
    rows = ["| key | default | meaning |", "|---|---|---|"]
    for key in walk(MemoryConfig):
        former = "".join(
            f" Formerly `{alias}` (still read, with a warning)." for alias in key.aliases
        )
        rows.append(f"| `{key.name}` | `{json.dumps(key.default)}` | {key.doc}{former} |")
    return "\n".join(rows) + "\n"

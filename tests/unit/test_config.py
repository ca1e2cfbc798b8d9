"""Configuration: defaults, file loading, unknown keys and out-of-range values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarmmem import config
from swarmmem.core.model.errors import ConfigError


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


def test_readme_documents_every_key() -> None:
    """Every configuration key has a row in the README's configuration reference."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    missing = [key for key in config.SCHEMA if f"| `{key}` |" not in readme]
    assert not missing


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
    README row names every one of them."""
    from swarmmem.registry import choices

    default, _check = config.SCHEMA[key]
    assert default == choices(kind)[0]
    for name in choices(kind):
        config.SCHEMA[key][1](key, name)
    with pytest.raises(ConfigError, match=", ".join(choices(kind))):
        config.SCHEMA[key][1](key, "no-such-adapter")
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith(f"| `{key}` |"))
    assert all(f"`{name}`" in row for name in choices(kind)), row

"""The default profiles as a new user meets them, with the real MiniLM model.

An unrelated query returns an empty bundle that says so (lexical and hybrid, manual mode
and over the facade), a paraphrase with no shared word is found by ``hybrid`` at rank 1 in
a small store and among many unrelated ones, and ``score`` fusion lets a channel without
evidence stay silent.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from factories import curate_fact

import swarmmem
from swarmmem.core.recall.fusion import score_fusion

MINILM = {"enabled": True, "embeddings": {"enabled": True, "provider": "onnx"}}
CONVENTIONS = [
    "Use ruff for lint.",
    "Database migrations are generated with alembic.",
    "Release builds are signed with the team key.",
    "Feature flags are read from flags.yaml at startup.",
    "The payments service retries failed webhooks three times.",
    "Integration tests need a running PostgreSQL on port 5433.",
]


def _minilm() -> None:
    from swarmmem.adapters.models.onnx_embedder import OnnxMiniLmEmbedder

    embedder = OnnxMiniLmEmbedder()
    if not embedder.available:
        pytest.skip(f"dense extra not usable: {embedder.unavailable_reason}")


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    _minilm()
    with swarmmem.open(tmp_path, config=MINILM) as mem:
        for text in CONVENTIONS:
            curate_fact(mem, text, kind="repo_convention", evidence="README.md")
    return tmp_path


@pytest.mark.parametrize("profile", ["lexical", "hybrid"])
def test_an_unrelated_query_returns_an_empty_bundle(store_dir: Path, profile: str) -> None:
    with swarmmem.open(store_dir, config=MINILM) as mem:
        bundle = mem.recall("quantum banana spaceship", profile=profile)
        assert bundle.items == ()
        assert bundle.prompt_block == "" or "no" in bundle.prompt_block.lower()


def test_hybrid_finds_a_paraphrase_at_rank_one(store_dir: Path) -> None:
    with swarmmem.open(store_dir, config=MINILM) as mem:
        lexical = mem.recall("which tool checks code style", profile="lexical")
        hybrid = mem.recall("which tool checks code style")  # the default with embeddings on
        assert "Use ruff for lint." not in [it.record.text for it in lexical.items]
        assert hybrid.items[0].record.text == "Use ruff for lint."
        # the unrelated memories do not ride along as filler
        assert len(hybrid.items) < len(CONVENTIONS)


def test_score_fusion_lets_a_silent_channel_abstain() -> None:
    lexical = {"a": 0.9, "b": 0.3}
    dense = {"b": 0.6, "c": 0.5}
    fused = score_fusion(lexical, dense, 0.5)
    assert set(fused) == {"a", "b", "c"}
    assert fused["b"] == pytest.approx(0.5 * 0.3 + 0.5 * 0.6)
    assert fused["a"] == pytest.approx(0.45) and fused["c"] == pytest.approx(0.25)
    # no lexical candidate at all: the dense side decides alone, at full weight
    assert score_fusion({}, dense, 0.5) == dense
    # no dense hit: the lexical side decides alone
    assert score_fusion(lexical, {}, 0.5) == lexical


def test_calibrated_fusion_finds_the_paraphrase_and_ignores_nonsense(store_dir: Path) -> None:
    """``retrieval.fusion: calibrated`` (real MiniLM, real SQLite): the paraphrase comes first,
    the quantum banana gets an empty bundle (every cosine below the dense floor)."""
    config = {**MINILM, "retrieval": {**MINILM.get("retrieval", {}), "fusion": "calibrated"}}
    with swarmmem.open(store_dir, config=config) as mem:
        hybrid = mem.recall("which tool checks code style")
        assert hybrid.items[0].record.text == "Use ruff for lint."
        assert "cosine=" in hybrid.items[0].reason
        assert mem.recall("quantum banana spaceship").items == ()


def test_injection_takes_a_paraphrase_only_dense_retrieval_finds(store_dir: Path) -> None:
    """A prompt hook's recall (injection mode, the default fusion): "which linter do we have"
    shares no stemmed word with "Use ruff for lint." (cosine 0.50), so only the dense channel
    finds it; it is injected. A question whose nearest memory stays under the injection's
    dense floor (0.22) and nonsense are not."""
    with swarmmem.open(store_dir, config=MINILM) as mem:
        lexical = mem.recall("which linter do we have", profile="lexical", mode="injection")
        assert lexical.items == ()
        bundle = mem.inject(agent_task="which linter do we have")
        assert bundle is not None
        assert [it.record.text for it in bundle.items] == ["Use ruff for lint."]
        assert "cosine=" in bundle.items[0].reason
        for task in ("which tool checks code style", "quantum banana spaceship"):
            quiet = mem.inject(agent_task=task)
            assert quiet is None or quiet.items == ()


def test_injection_dense_floor_off_keeps_the_lexical_rule(tmp_path: Path) -> None:
    """``recall.injection.denseFloor: null``: injection takes no dense-only hit, as before."""
    _minilm()
    config = {**MINILM, "recall": {"injection": {"denseFloor": None}}}
    with swarmmem.open(tmp_path, config=config) as mem:
        for text in CONVENTIONS:
            curate_fact(mem, text, kind="repo_convention", evidence="README.md")
        bundle = mem.inject(agent_task="which linter do we have")
        assert bundle is None or bundle.items == ()

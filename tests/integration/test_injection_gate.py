"""The injection gate: what the prompt hook injects on a small set written for it
(``benchmarks/quality/injection_gate.json``: notes about this repository's own code), through
the real hook path on a real SQLite store, embeddings off and on.

The full evaluation on the code-memory dev sets is ``python -m benchmarks.quality.injection``
(tables in ``benchmarks/README.md``); this is its fast slice, run in CI: nothing is injected for
questions about nothing stored, a question whose words reach its memory gets it, and what is
injected is mostly what was asked about."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.quality.injection import evaluate

GATE_SET = Path(__file__).resolve().parents[2] / "benchmarks" / "quality" / "injection_gate.json"


def _row(tmp_path: Path, embedder: Any) -> dict[str, Any]:
    data = json.loads(GATE_SET.read_text(encoding="utf-8"))
    root = tmp_path / "project"
    root.mkdir()
    row = evaluate(
        root,
        data["codebase"],
        data["memories"],
        data["queries"],
        embedder=embedder,
        near=data["near_misses"],
    )
    return row["table"]


def _check(table: dict[str, Any]) -> None:
    assert table["questions"] == {
        "word-sharing": table["questions"]["word-sharing"],
        "paraphrase": table["questions"]["paraphrase"],
        "other topic": 4,
        "near miss": 2,
    }
    assert table["questions"]["word-sharing"] >= 8, table
    assert table["injected other topic"] == 0.0, table
    assert table["hit word-sharing"] >= 0.7, table
    assert table["precision"] >= 0.9, table
    assert table["items per prompt"] <= 1.0, table


def test_injection_gate_without_embeddings(tmp_path: Path) -> None:
    _check(_row(tmp_path, None))


@pytest.mark.slow
def test_injection_gate_with_embeddings(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    from swarmmem.adapters.models.onnx_embedder import OnnxMiniLmEmbedder

    embedder = OnnxMiniLmEmbedder()
    if not embedder.available:
        pytest.skip("MiniLM model is not installed")
    table = _row(tmp_path, embedder)
    _check(table)
    assert table["manual mrr@10"] >= 0.85, table

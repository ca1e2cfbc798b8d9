"""Golden conformance: the lexical path reproduces the reference evaluation exactly.

The reference fixtures and the per-run golden table live beside the project in
``../shared/spec``; the tests skip cleanly when that folder is absent.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from swarmmem.core.evaluation.metrics import evaluate_fixtures
from swarmmem.evaluation import lexical_recall_fn, load_fixtures, temporary_stores

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "spec"
FIXTURES = SHARED / "upstream-fixtures" / "memory-recall"
STUDY = SHARED / "reference-implementation.md"
NOW = "2026-11-30T00:00:00.000Z"

pytestmark = pytest.mark.skipif(
    not (FIXTURES.is_dir() and STUDY.is_file()), reason="../shared/spec is not available"
)

_ROW = re.compile(
    r"^\| (?P<fixture>[a-z-]+) \| (?P<provider>local-jsonl|sqlite) \| (?P<mode>\w+) \| "
    r"(?P<passed>True|False) \| [0-9.]+ \| (?P<labels>\[.*?\]) \| (?P<scores>\[.*?\]) \|$"
)


def golden_rows() -> dict[tuple[str, str, str], dict[str, object]]:
    """Parse the per-run golden table of the reference study."""
    rows = {}
    for line in STUDY.read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line.strip())
        if match:
            rows[(match["fixture"], match["provider"], match["mode"])] = {
                "passed": match["passed"] == "True",
                "labels": ast.literal_eval(match["labels"]),
                "scores": ast.literal_eval(match["scores"]),
            }
    return rows


@pytest.fixture(scope="module")
def report() -> dict[str, object]:
    """One evaluation of the reference fixtures over both providers and three modes."""
    fixtures = load_fixtures(FIXTURES)
    with temporary_stores() as factory:
        return evaluate_fixtures(fixtures, factory, lexical_recall_fn, now=NOW)


def test_summary_matches_reference(report: dict) -> None:
    """48 runs, 30 passed, and the pinned precision@k / recall@k, bit for bit."""
    expected = {
        "run_count": 48,
        "fixture_count": 8,
        "passed_run_count": 30,
        "precision@k": 0.20833333333333334,
        "recall@k": 0.625,
        "injection_count": 22,
        "noisy_injection_count": 12,
        "same_scope_noise_count": 46,
        "cross_scope_leak_count": 0,
        "stale_memory_count": 0,
    }
    assert {key: report["summary"][key] for key in expected} == expected


def test_every_run_matches_golden_table(report: dict) -> None:
    """Each run retrieves the reference labels in order, with the reference scores."""
    golden = golden_rows()
    assert len(golden) == 48
    for run in report["runs"]:
        key = (run["fixture"], run["provider"], run["mode"])
        expected = golden[key]
        assert run["retrieved_labels"] == expected["labels"], key
        assert run["passed"] == expected["passed"], key
        assert run["scores"] == pytest.approx(expected["scores"], abs=6e-5), key


def test_baseline_file_agrees(report: dict) -> None:
    """The reference baseline's metrics equal ours."""
    import json

    baseline = json.loads(
        (SHARED / "upstream-fixtures" / "memory-recall-baseline.json").read_text()
    )
    for key, value in baseline["metrics"].items():
        assert report["summary"][key] == value, key

"""The bundled golden fixtures and held-out corpus: they load, pass and match their baselines."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from swarmmem import fixtures as bundled
from swarmmem._speedups.lexical import tokenize
from swarmmem.adapters.detectors.regex_secrets import RegexSecretDetector
from swarmmem.core.evaluation.heldout import heldout_fixtures
from swarmmem.core.evaluation.metrics import Fixture
from swarmmem.evaluation import evaluate, load_fixtures, regression_gate
from swarmmem.heldout import heldout_gate, read_heldout_corpus

ROOT = Path(__file__).resolve().parents[2]
PROVIDERS = ("local-jsonl", "sqlite")
# One prefix per pinned behaviour; every bundled fixture belongs to exactly one of them.
BEHAVIOURS = (
    "scope-",
    "stale-",
    "injection-",
    "role-",
    "kind-filter-",
    "file-signal-",
    "symbol-signal-",
    "source-filepath-",
    "tag-signal-",
    "confidence-",
    "multi-label-",
    "token-budget-",
    "paraphrase-",
)


@pytest.fixture(scope="module")
def fixtures() -> list[Fixture]:
    """The bundled fixtures, validated with the secret detector like the evaluator does."""
    return load_fixtures(bundled.RECALL_FIXTURES, secrets=RegexSecretDetector())


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    """One lexical evaluation of the bundled fixtures on both providers and all modes."""
    return evaluate(project_root=ROOT, providers=PROVIDERS)


def test_bundled_fixtures_load_and_cover_every_behaviour(fixtures: list[Fixture]) -> None:
    """At least 24 fixtures load; each is named after its file and says what it pins."""
    assert len(fixtures) >= 24
    files = sorted(p.stem for p in bundled.RECALL_FIXTURES.glob("*.json"))
    assert sorted(f.name for f in fixtures) == files
    for fixture in fixtures:
        assert len(fixture.data.get("description", "")) > 40, fixture.name
        assert sum(fixture.name.startswith(prefix) for prefix in BEHAVIOURS) == 1, fixture.name
    for prefix in BEHAVIOURS:
        assert any(f.name.startswith(prefix) for f in fixtures), prefix
    languages = " ".join(json.dumps(f.data) for f in fixtures)
    for marker in (".py", ".go", ".rs", ".ts", ".java", ".kt", "terraform", "helm"):
        assert marker in languages, marker


def test_bundled_fixture_texts_hold_no_project_paths() -> None:
    """Fixture files never embed absolute paths of the machine they were written on."""
    for path in bundled.RECALL_FIXTURES.glob("*.json"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"/(?:home|tmp|work|root)/", text), path.name


def test_gate_passes_against_the_pinned_baseline() -> None:
    """Two runs agree and match the pinned baseline of the bundled fixtures exactly."""
    result = regression_gate(project_root=ROOT, baseline_path=bundled.RECALL_BASELINE)
    assert result["passed"], result["problems"]
    pinned = json.loads(bundled.RECALL_BASELINE.read_text(encoding="utf-8"))["metrics"]
    assert {key: result["summary"][key] for key in pinned} == pinned


def test_non_paraphrase_fixtures_pass_manual_and_curator(report: dict[str, Any]) -> None:
    """Every non-paraphrase fixture passes in manual and curator mode on both providers."""
    runs = [
        r
        for r in report["runs"]
        if r["mode"] in ("manual", "curator") and not r["fixture"].startswith("paraphrase-")
    ]
    names = {r["fixture"] for r in runs}
    assert len(names) >= 20
    assert len(runs) == len(names) * len(PROVIDERS) * 2
    failures = [
        (r["fixture"], r["provider"], r["mode"], r["retrieved_labels"])
        for r in runs
        if not r["passed"]
    ]
    assert failures == []
    assert report["summary"]["cross_scope_leak_count"] == 0
    assert report["summary"]["stale_memory_count"] == 0


def test_no_signal_fixtures_inject_only_the_expected_memory(report: dict[str, Any]) -> None:
    """Injection-mode runs of the injection-* fixtures inject nothing but the expected memory."""
    runs = [
        r
        for r in report["runs"]
        if r["fixture"].startswith("injection-") and r["mode"] == "injection"
    ]
    assert len(runs) >= 3 * len(PROVIDERS)
    for run in runs:
        assert run["retrieved_labels"] == run["expected_labels"], run["fixture"]
        assert run["metrics"]["noisy_injection_count"] == 0


def test_partial_recall_fixture_reports_half_recall_in_injection(report: dict[str, Any]) -> None:
    """The multi-label partial fixture has recall@k 0.5 in injection and 1 elsewhere."""
    for run in report["runs"]:
        if run["fixture"] == "multi-label-partial-injection":
            expected = 0.5 if run["mode"] == "injection" else 1.0
            assert run["metrics"]["recall@k"] == expected, (run["provider"], run["mode"])


def _record_tokens(record: Any) -> set[str]:
    """Every token the lexical scorer can match on a record."""
    metadata = record.metadata
    parts = [record.text, " ".join(record.tags), record.kind.replace("_", " ")]
    parts += [record.source.file_path or "", record.source.ref or ""]
    for key in ("file", "filePath", "files", "touchedFiles", "symbol", "symbols"):
        value = metadata.get(key)
        parts += [value] if isinstance(value, str) else list(value or [])
    return set().union(*(tokenize(p) for p in parts))


def test_paraphrase_fixtures_share_no_word_and_fail_lexically(
    fixtures: list[Fixture], report: dict[str, Any]
) -> None:
    """Paraphrase queries and tasks share no token with the expected memory; lexical misses it."""
    paraphrases = [f for f in fixtures if f.name.startswith("paraphrase-")]
    assert len(paraphrases) >= 3
    for fixture in paraphrases:
        words = tokenize(fixture.data["query"]) | tokenize(fixture.data["task"])
        for record in fixture.records:
            if record.id in fixture.expected_ids:
                assert not words & _record_tokens(record), fixture.name
    runs = [r for r in report["runs"] if r["fixture"].startswith("paraphrase-")]
    assert runs and not any(r["passed"] for r in runs)


def test_heldout_corpus_loads_and_paraphrases_share_no_word() -> None:
    """The bundled corpus passes every limit and hash check; paraphrases avoid their source."""
    manifest, texts = read_heldout_corpus(bundled.HELDOUT_MANIFEST)
    assert manifest.corpus_id == "swarmmem-memory-recall-heldout-v1"
    assert len(manifest.cases) >= 12
    assert len({c.language for c in manifest.cases}) == len(manifest.cases)
    for case in manifest.cases:
        assert case.source_path == f"sources/{Path(case.source_path).name}"
        own = tokenize(texts[case.source_path])
        assert not tokenize(case.paraphrase) & own, case.id
    built = heldout_fixtures(manifest, texts, secrets=RegexSecretDetector())
    assert [f.name for f in built] == [f"heldout:{c.id}" for c in manifest.cases]
    assert all(len(f.records) == len(manifest.cases) for f in built)


def test_heldout_gate_passes_against_its_pinned_baseline() -> None:
    """The held-out corpus matches its pinned lexical and hybrid baseline (needs MiniLM)."""
    from swarmmem.adapters.models.onnx_embedder import OnnxMiniLmEmbedder

    embedder = OnnxMiniLmEmbedder()
    if not embedder.available:
        pytest.skip(f"dense extra not usable: {embedder.unavailable_reason}")
    result = heldout_gate(project_root=ROOT, embedder=embedder)
    assert result["passed"], result["problems"]
    baseline = json.loads((bundled.HELDOUT_MANIFEST.parent / "baseline.json").read_text())
    assert set(result["profile_summaries"]) == set(baseline["profiles"]) == {"lexical", "hybrid"}
    for name, pinned in baseline["profiles"].items():
        summary = result["profile_summaries"][name]
        assert {key: summary[key] for key in pinned} == pinned

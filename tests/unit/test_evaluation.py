"""Evaluation harness: metric arithmetic, fixture and manifest validation, path safety."""

from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from swarmmem.adapters.models.hashing_embedder import HashingEmbedder
from swarmmem.cli import main
from swarmmem.core.evaluation.heldout import (
    MAX_CASES,
    MAX_MANIFEST_BYTES,
    SOURCE_TEXT_LIMIT,
    check_heldout_regression,
    heldout_fixture_data,
    parse_manifest,
    parse_manifest_bytes,
    source_content_hash,
)
from swarmmem.core.evaluation.metrics import (
    fixture_request,
    parse_fixture,
    run_metrics,
    summarize,
)
from swarmmem.core.model.errors import EvaluationError
from swarmmem.evaluation import evaluate, load_fixtures, resolve_fixture_dir
from swarmmem.heldout import evaluate_heldout, read_heldout_corpus, resolve_manifest_path

NOW = "2026-11-30T00:00:00.000Z"
REPO = {"type": "repository", "repoId": "orders-api"}
OTHER = {"type": "repository", "repoId": "billing-worker"}


def record(label: str, text: str, *, scope: dict[str, str] = REPO, **extra: Any) -> dict[str, Any]:
    """A fixture record with a file source (valid for every durable kind)."""
    return {
        "label": label,
        "scope": scope,
        "kind": "repo_convention",
        "text": text,
        "source": {"type": "file", "filePath": "CONTRIBUTING.md"},
        **extra,
    }


def metric_fixture() -> dict[str, Any]:
    """Two expected records, same-scope noise, a cross-scope copy and three stale records."""
    return {
        "name": "metric-arithmetic",
        "query": "how are database migrations applied",
        "scopes": [REPO],
        "k": 2,
        "expectedLabels": ["exp-a", "exp-b"],
        "records": [
            record("exp-a", "Migrations run with alembic upgrade head before deploy."),
            record("exp-b", "Every migration ships with a downgrade step."),
            record("noise-c", "Branch names start with the ticket number."),
            record("leak-d", "Migrations run with alembic upgrade head.", scope=OTHER),
            record("stale-e", "Migrations used to run by hand.", state={"deleted": True}),
            record("stale-f", "Migrations ran with flask db.",
                   state={"supersededByLabel": "exp-a"}),
            record(
                "stale-g", "Migrations are frozen this week.",
                state={"expiresAt": "2020-01-01T00:00:00.000Z"},
            ),
        ],
    }  # fmt: skip


def ids_of(fixture: Any, *labels: str) -> list[str]:
    """Memory ids of ``labels`` in the given order."""
    by_label = {label: memory_id for memory_id, label in fixture.labels.items()}
    return [by_label[label] for label in labels]


def write_json(path: Path, data: Any) -> Path:
    """Write ``data`` as JSON (parents created) and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


# ------------------------------------------------------------------------ metric arithmetic


def test_metrics_count_noise_leaks_and_stale_in_injection_mode() -> None:
    """Injection runs count every class of unwanted item and fail with partial recall."""
    fixture = parse_fixture(metric_fixture(), source="metric.json")
    got = ids_of(fixture, "exp-a", "noise-c", "leak-d", "stale-e", "stale-f", "stale-g")
    metrics = run_metrics(fixture, got, 2, "injection", NOW)
    assert metrics == {
        "precision@k": 0.5,
        "recall@k": 0.5,
        "injection_count": 6,
        "noisy_injection_count": 1,
        "same_scope_noise_count": 1,
        "cross_scope_leak_count": 1,
        "stale_memory_count": 3,
        "passed": False,
    }


def test_metrics_in_manual_mode_do_not_count_injections() -> None:
    """Manual runs report no injections; same-scope noise alone does not fail a run."""
    fixture = parse_fixture(metric_fixture(), source="metric.json")
    got = ids_of(fixture, "exp-b", "noise-c", "exp-a")
    metrics = run_metrics(fixture, got, 3, "manual", NOW)
    assert metrics["precision@k"] == pytest.approx(2 / 3)
    assert metrics["recall@k"] == 1.0
    assert metrics["injection_count"] == 0
    assert metrics["noisy_injection_count"] == 0
    assert metrics["same_scope_noise_count"] == 1
    assert metrics["passed"] is True


def test_metrics_only_count_relevant_items_within_k() -> None:
    """An expected item beyond k does not count towards precision or recall."""
    fixture = parse_fixture(metric_fixture(), source="metric.json")
    got = ids_of(fixture, "noise-c", "exp-a", "exp-b")
    metrics = run_metrics(fixture, got, 1, "curator", NOW)
    assert metrics["precision@k"] == 0.0
    assert metrics["recall@k"] == 0.0
    assert metrics["passed"] is False
    assert run_metrics(fixture, [], 2, "manual", NOW)["recall@k"] == 0.0


def test_a_leak_or_stale_item_fails_an_otherwise_perfect_run() -> None:
    """Full recall still fails when a cross-scope or stale memory is returned."""
    fixture = parse_fixture(metric_fixture(), source="metric.json")
    leak = run_metrics(fixture, ids_of(fixture, "exp-a", "exp-b", "leak-d"), 2, "manual", NOW)
    stale = run_metrics(fixture, ids_of(fixture, "exp-a", "exp-b", "stale-g"), 2, "manual", NOW)
    assert (leak["recall@k"], leak["cross_scope_leak_count"], leak["passed"]) == (1.0, 1, False)
    assert (stale["recall@k"], stale["stale_memory_count"], stale["passed"]) == (1.0, 1, False)


def test_summary_means_ratios_and_sums_counts() -> None:
    """precision@k and recall@k are means over runs; the five counts are sums."""
    counts = {
        "injection_count": 2,
        "noisy_injection_count": 1,
        "same_scope_noise_count": 1,
        "cross_scope_leak_count": 0,
        "stale_memory_count": 1,
    }
    runs = [
        {"passed": True, "metrics": {"precision@k": 0.5, "recall@k": 1.0, **counts}},
        {"passed": False, "metrics": {"precision@k": 0.0, "recall@k": 0.5, **counts}},
        {"passed": True, "metrics": {"precision@k": 1.0, "recall@k": 1.0, **counts}},
    ]
    summary = summarize(runs, fixture_count=1)
    assert summary["run_count"] == 3
    assert summary["passed_run_count"] == 2
    assert summary["precision@k"] == pytest.approx(0.5)
    assert summary["recall@k"] == pytest.approx(2.5 / 3)
    assert summary["injection_count"] == 6
    assert summary["stale_memory_count"] == 3
    assert summarize([], fixture_count=0)["precision@k"] == 0.0


def test_fixture_request_applies_the_run_matrix_rules() -> None:
    """Item and budget caps, curator role, injection floor and signal rule per mode."""
    data = {**metric_fixture(), "agentRole": "coder", "maxItems": 9, "tokenBudget": 4000}
    fixture = parse_fixture(data, source="metric.json")
    manual, k = fixture_request(fixture, "manual")
    injection, _ = fixture_request(fixture, "injection")
    curator, _ = fixture_request(fixture, "curator")
    assert (manual.max_items, manual.token_budget, k) == (5, 1000, 2)
    assert (manual.agent_role, curator.agent_role) == ("coder", "curator")
    assert (manual.min_score, injection.min_score) == (0.0, 0.25)
    assert (manual.require_query_signal, injection.require_query_signal) == (False, True)


# ------------------------------------------------------------------------ fixture validation


@pytest.mark.parametrize(
    ("patch", "needles"),
    [
        (lambda d: d.update(colour="blue"), ["broken.json", "unknown fixture key", "colour"]),
        (lambda d: d.update(expectedLabels=["ghost"]), ["broken.json", "expectedLabels", "ghost"]),
        (lambda d: d.update(scopes=[{"type": "galaxy"}]), ["broken.json", "scope"]),
        (lambda d: d["records"][0].update(weight=3), ["broken.json", "records[0]", "weight"]),
        (
            lambda d: d["records"][1].update(scope={"type": "repository", "repo": "x"}),
            ["broken.json", "records[1]", "repo"],
        ),
        (
            lambda d: d["records"][0].update(source={"type": "manual"}),
            ["broken.json", "records[0]", "exp-a", "source evidence"],
        ),
        (lambda d: d.update(k=0), ["broken.json", "k must be a positive integer"]),
    ],
    ids=["unknown-key", "missing-label", "bad-scope", "record-key", "record-scope", "no-evidence",
         "bad-k"],
)  # fmt: skip
def test_fixture_errors_name_the_file_and_field(
    tmp_path: Path, patch: Any, needles: list[str]
) -> None:
    """A bad fixture file is refused with its file name and the offending field."""
    data = metric_fixture()
    patch(data)
    write_json(tmp_path / "fixtures" / "broken.json", data)
    with pytest.raises(EvaluationError) as info:
        load_fixtures(tmp_path / "fixtures")
    for needle in needles:
        assert needle in str(info.value)


def test_fixture_directory_must_hold_json_files(tmp_path: Path) -> None:
    """A missing or empty fixture directory is an error naming it."""
    with pytest.raises(EvaluationError, match="not found"):
        load_fixtures(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    with pytest.raises(EvaluationError, match=r"no \*\.json fixtures"):
        load_fixtures(tmp_path / "empty")
    write_json(tmp_path / "bad" / "a.json", {}).write_text("{not json", encoding="utf-8")
    with pytest.raises(EvaluationError, match=r"a\.json: cannot read fixture"):
        load_fixtures(tmp_path / "bad")


# ------------------------------------------------------------------------ held-out corpus


SOURCES = {
    "sources/python.py": "def add(a, b):\n    return a + b\n",
    "sources/go.go": "package util\n\nfunc Max(a, b int) int {\n\tif a > b {\n\t\treturn a\n\t}\n"
    "\treturn b\n}\n",
    "sources/shell.sh": "#!/bin/sh\nexec make test\n",
}
PARAPHRASES = {
    "sources/python.py": "sum two numbers",
    "sources/go.go": "pick the larger integer",
    "sources/shell.sh": "launch the build checks",
}


def manifest_data(**overrides: Any) -> dict[str, Any]:
    """A valid three-case manifest for :data:`SOURCES`."""
    cases = [
        {
            "id": f"case-{i}",
            "language": path.split("/")[1].split(".")[0],
            "source_path": path,
            "content_hash": source_content_hash(text),
            "expected_symbols": ["x"],
            "expected_edges": ["x -> y", {"from": "y", "to": "z"}],
            "known_misses": [],
            "spurious_edges": [],
            "paraphrase": PARAPHRASES[path],
            "analyzer_id": "backend:test:v1",
        }
        for i, (path, text) in enumerate(SOURCES.items())
    ]
    data = {
        "corpus_id": "unit-heldout",
        "split": "heldout",
        "version": "1.0.0",
        "supported_languages": ["python", "go", "shell"],
        "thresholds": {"precision_at_k": 0.0, "recall_at_k": 0.0, "max_known_misses": 2},
        "cases": cases,
    }
    data.update(overrides)
    return data


def write_corpus(root: Path, data: dict[str, Any] | None = None) -> Path:
    """Write :data:`SOURCES` and a manifest under ``root``; return the manifest path."""
    for rel, text in SOURCES.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
    return write_json(root / "manifest.json", manifest_data() if data is None else data)


def test_manifest_parses_edges_hashes_and_default_ids() -> None:
    """Edges normalise to "a -> b", hashes to lower case, missing ids to <language>-<n>."""
    data = manifest_data()
    data["cases"][0]["content_hash"] = data["cases"][0]["content_hash"].upper()
    del data["cases"][2]["id"]
    manifest = parse_manifest(data)
    assert manifest.cases[0].expected_edges == ("x -> y", "y -> z")
    assert manifest.cases[0].content_hash == source_content_hash(SOURCES["sources/python.py"])
    assert manifest.cases[2].id == "shell-3"
    assert manifest.thresholds["max_known_misses"] == 2.0


def test_content_hash_ignores_line_endings() -> None:
    """CRLF and CR text hash like its LF form (SHA-256 of the UTF-8 bytes)."""
    lf = "a\nb\n"
    assert (
        source_content_hash("a\r\nb\r\n")
        == source_content_hash("a\rb\r")
        == source_content_hash(lf)
    )
    assert source_content_hash(lf) == hashlib.sha256(lf.encode()).hexdigest()


def _cases(data: dict[str, Any]) -> list[dict[str, Any]]:
    return data["cases"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: d.update(owner="me"), "unknown manifest key(s): owner"),
        (lambda d: d.pop("corpus_id"), "missing corpus_id"),
        (lambda d: d.update(split="train"), "split must be 'heldout'"),
        (lambda d: d.update(cases=[]), "cases must be a non-empty array"),
        (lambda d: _cases(d)[1].update(id="case-0"), "cases[1].id 'case-0' repeats cases[0]"),
        (
            lambda d: _cases(d)[2].update(source_path="sources/./python.py"),
            "cases[2].source_path 'sources/python.py' repeats cases[0]",
        ),
        (lambda d: _cases(d)[0].update(content_hash="abc"), "cases[0].content_hash"),
        (lambda d: _cases(d)[0].update(language="cobol"), "not in supported_languages"),
        (lambda d: _cases(d)[0].update(source_path="../outside.py"), "escapes the corpus root"),
        (lambda d: _cases(d)[0].update(source_path="/etc/hosts"), "relative POSIX path"),
        (lambda d: _cases(d)[0].update(source_path="C:/x.py"), "relative POSIX path"),
        (lambda d: _cases(d)[0].update(expected_edges=["a => b"]), "expected_edges[0]"),
        (lambda d: _cases(d)[0].update(paraphrase=""), "paraphrase"),
        (lambda d: _cases(d)[0].update(extra=1), "cases[0] has unknown key(s): extra"),
        (lambda d: _cases(d)[0].update(known_misses=["a", "b", "c"]), "max_known_misses"),
        (lambda d: d["thresholds"].update(recall_at_k=2), "thresholds.recall_at_k"),
        (lambda d: d.update(cases=[_cases(d)[0]] * (MAX_CASES + 1)), "exceed the limit of 256"),
    ],
)
def test_malformed_manifests_are_refused(mutate: Any, needle: str) -> None:
    """Every structural problem of a manifest raises an error naming the field."""
    data = copy.deepcopy(manifest_data())
    mutate(data)
    with pytest.raises(EvaluationError) as info:
        parse_manifest(data, source="corpus/manifest.json")
    assert "corpus/manifest.json" in str(info.value)
    assert needle in str(info.value)


def test_manifest_bytes_must_be_small_utf8_json() -> None:
    """More than 1 MiB, invalid UTF-8 or invalid JSON is refused before validation."""
    big = json.dumps(manifest_data()).encode() + b" " * MAX_MANIFEST_BYTES
    with pytest.raises(EvaluationError, match="above the 1048576 limit"):
        parse_manifest_bytes(big)
    with pytest.raises(EvaluationError, match="not valid UTF-8 JSON"):
        parse_manifest_bytes(b"\xff\xfe")
    with pytest.raises(EvaluationError, match="not valid UTF-8 JSON"):
        parse_manifest_bytes(b'{"corpus_id": ')
    with pytest.raises(EvaluationError, match="must be a JSON object"):
        parse_manifest_bytes(b"[]")


def test_oversized_manifest_file_is_refused(tmp_path: Path) -> None:
    """A manifest.json above 1 MiB on disk is refused by the reader."""
    path = write_corpus(tmp_path)
    path.write_text(json.dumps(manifest_data()) + " " * MAX_MANIFEST_BYTES, encoding="utf-8")
    with pytest.raises(EvaluationError, match="above the 1048576 byte limit"):
        read_heldout_corpus(path)


def test_corpus_reader_returns_checked_texts(tmp_path: Path) -> None:
    """A valid corpus reads every source; CRLF files match their LF hash and become LF."""
    path = write_corpus(tmp_path)
    (tmp_path / "sources/python.py").write_bytes(
        SOURCES["sources/python.py"].replace("\n", "\r\n").encode()
    )
    manifest, texts = read_heldout_corpus(path)
    assert [c.id for c in manifest.cases] == ["case-0", "case-1", "case-2"]
    assert texts == SOURCES


def test_wrong_content_hash_is_refused(tmp_path: Path) -> None:
    """A source whose text no longer matches content_hash is refused naming the case."""
    path = write_corpus(tmp_path)
    (tmp_path / "sources/go.go").write_text("package util\n", encoding="utf-8")
    with pytest.raises(EvaluationError, match="content_hash of case 'case-1' does not match"):
        read_heldout_corpus(path)


def test_source_size_caps_are_enforced(tmp_path: Path) -> None:
    """One source above 1 MiB, or sources above 4 MiB together, are refused."""
    big = "x" * (MAX_MANIFEST_BYTES + 1)
    data = manifest_data()
    data["cases"][0]["content_hash"] = source_content_hash(big)
    path = write_corpus(tmp_path / "one", data)
    (tmp_path / "one/sources/python.py").write_text(big, encoding="utf-8")
    with pytest.raises(EvaluationError, match=r"sources/python\.py is 1048577 bytes"):
        read_heldout_corpus(path)

    chunk = 900 * 1024
    cases = []
    root = tmp_path / "total"
    for i in range(5):
        text = chr(ord("a") + i) * chunk
        (root / "sources").mkdir(parents=True, exist_ok=True)
        (root / f"sources/f{i}.txt").write_text(text, encoding="utf-8")
        cases.append(
            {"id": f"f{i}", "language": "text", "source_path": f"sources/f{i}.txt",
             "content_hash": source_content_hash(text), "paraphrase": "some words"}
        )  # fmt: skip
    path = write_json(
        root / "manifest.json",
        {"corpus_id": "big", "split": "heldout", "version": "1", "cases": cases},
    )
    with pytest.raises(
        EvaluationError, match="sources exceed 4194304 bytes in total at sources/f4"
    ):
        read_heldout_corpus(path)


def test_symlinked_source_outside_the_corpus_is_refused(tmp_path: Path) -> None:
    """A source_path that is a symlink leaving the corpus root is refused."""
    outside = tmp_path / "outside.py"
    outside.write_text(SOURCES["sources/python.py"], encoding="utf-8")
    path = write_corpus(tmp_path / "corpus")
    target = tmp_path / "corpus/sources/python.py"
    target.unlink()
    target.symlink_to(outside)
    with pytest.raises(EvaluationError, match="resolves outside the corpus root"):
        read_heldout_corpus(path)


def test_heldout_fixture_data_follows_the_case_recipe() -> None:
    """query = task = paraphrase, k = maxItems = 1, budget 512, all sources as records."""
    manifest = parse_manifest(manifest_data())
    texts = dict(SOURCES)
    texts["sources/shell.sh"] = "echo run\n" * 400
    fixtures = heldout_fixture_data(manifest, texts)
    first = fixtures[0]
    assert first["name"] == "heldout:case-0"
    assert first["query"] == first["task"] == "sum two numbers"
    assert (first["k"], first["maxItems"], first["tokenBudget"]) == (1, 1, 512)
    assert first["scopes"] == [{"type": "repository", "repoId": "heldout-retrieval-corpus"}]
    assert first["kinds"] == ["code_pattern"] and first["expectedLabels"] == ["case-0"]
    records = {r["label"]: r for r in first["records"]}
    assert set(records) == {"case-0", "case-1", "case-2"}
    assert len(records["case-2"]["text"]) == SOURCE_TEXT_LIMIT
    assert records["case-0"]["tags"] == ["python", "backend:test:v1"]
    assert records["case-0"]["source"] == {"type": "file", "filePath": "sources/python.py"}
    assert records["case-0"]["confidence"] == 1
    texts["sources/go.go"] = texts["sources/python.py"]
    with pytest.raises(EvaluationError, match="same source text"):
        heldout_fixture_data(manifest, texts)


def _report(metrics: dict[str, tuple[float, float]], status: str = "complete") -> dict[str, Any]:
    """A minimal held-out report with per-profile precision and recall."""
    summaries = {
        name: {"precision@k": p, "recall@k": r, "fixture_count": 3, "run_count": 3,
               "passed_run_count": round(r * 3)}
        for name, (p, r) in metrics.items()
    }  # fmt: skip
    runs = [{"profile": name, "status": status, "degradation_reason": "x"} for name in metrics]
    return {"profile_summaries": summaries, "runs": runs}


def test_heldout_regression_checks() -> None:
    """Determinism, tolerance, thresholds, hybrid >= lexical and degradation are all gated."""
    manifest = parse_manifest(manifest_data(thresholds={"precision_at_k": 0.3}))
    good = _report({"lexical": (0.0, 0.0), "hybrid": (1 / 3, 1 / 3)})
    baseline = {
        "corpus_id": "unit-heldout",
        "tolerance": 0.05,
        "profiles": {"lexical": {"precision@k": 0.0, "recall@k": 0.0},
                     "hybrid": {"precision@k": 1 / 3, "recall@k": 1 / 3}},
    }  # fmt: skip
    assert check_heldout_regression(good, good, baseline, manifest) == []
    worse = _report({"lexical": (1 / 3, 1 / 3), "hybrid": (0.0, 0.0)})
    problems = " | ".join(check_heldout_regression(worse, good, baseline, manifest))
    assert "not deterministic" in problems
    assert "hybrid precision@k dropped" in problems
    assert "below the threshold 0.3" in problems
    assert "below lexical" in problems
    degraded = _report({"lexical": (0.0, 0.0), "hybrid": (1 / 3, 1 / 3)}, status="degraded")
    assert any(
        "degraded" in p for p in check_heldout_regression(degraded, degraded, baseline, manifest)
    )
    other = {**baseline, "corpus_id": "another"}
    assert any("another" in p for p in check_heldout_regression(good, good, other, manifest))


# ------------------------------------------------------------------------ path safety


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project directory with a corpus and fixtures inside, and another directory outside."""
    root = tmp_path / "project"
    write_corpus(root / "corpus")
    write_json(root / "fixtures" / "one.json", metric_fixture())
    write_corpus(tmp_path / "elsewhere")
    write_json(tmp_path / "elsewhere" / "one.json", metric_fixture())
    return root


def test_paths_inside_the_project_are_accepted(project: Path) -> None:
    """Relative and absolute paths inside the project resolve to real paths."""
    assert resolve_fixture_dir("fixtures", project) == Path(os.path.realpath(project / "fixtures"))
    manifest = project / "corpus" / "manifest.json"
    assert resolve_manifest_path("corpus/manifest.json", project) == Path(
        os.path.realpath(manifest)
    )
    assert resolve_manifest_path(str(manifest), project) == Path(os.path.realpath(manifest))


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink"])
def test_fixture_dir_escapes_are_refused(project: Path, kind: str) -> None:
    """--fixtures outside the project (.., absolute elsewhere, symlink out) is refused."""
    elsewhere = project.parent / "elsewhere"
    if kind == "dotdot":
        path = "../elsewhere"
    elif kind == "absolute":
        path = str(elsewhere)
    else:
        (project / "link").symlink_to(elsewhere, target_is_directory=True)
        path = "link"
    with pytest.raises(EvaluationError, match="escapes the project root"):
        resolve_fixture_dir(path, project)


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink-dir", "symlink-file"])
def test_manifest_escapes_are_refused(project: Path, kind: str) -> None:
    """--manifest outside the project (.., absolute elsewhere, symlinks out) is refused."""
    elsewhere = project.parent / "elsewhere"
    if kind == "dotdot":
        path = "../elsewhere/manifest.json"
    elif kind == "absolute":
        path = str(elsewhere / "manifest.json")
    elif kind == "symlink-dir":
        (project / "link").symlink_to(elsewhere, target_is_directory=True)
        path = "link/manifest.json"
    else:
        (project / "mine").mkdir()
        (project / "mine" / "manifest.json").symlink_to(elsewhere / "manifest.json")
        path = "mine/manifest.json"
    with pytest.raises(EvaluationError, match="escapes the project root"):
        resolve_manifest_path(path, project)


def test_manifest_must_be_a_file_named_manifest_json(project: Path) -> None:
    """Another file name, or a directory, is refused as --manifest."""
    write_json(project / "corpus" / "other.json", manifest_data())
    with pytest.raises(EvaluationError, match=r"called manifest\.json"):
        resolve_manifest_path("corpus/other.json", project)
    (project / "dir" / "manifest.json").mkdir(parents=True)
    with pytest.raises(EvaluationError, match="is not a file"):
        resolve_manifest_path("dir/manifest.json", project)


def test_cli_refuses_escaping_paths_with_exit_code_2(project: Path) -> None:
    """The evaluate command reports escapes as bad input (exit 2) in JSON."""
    runner = CliRunner()
    for option, value in (
        ("--manifest", "../elsewhere/manifest.json"),
        ("--fixtures", "../elsewhere"),
    ):
        result = runner.invoke(main, ["--root", str(project), "evaluate", option, value, "--json"])
        assert result.exit_code == 2, result.output
        payload = json.loads(result.stdout)
        assert payload["error"] == "evaluation_error"
        assert "escapes the project root" in payload["message"]
    both = runner.invoke(
        main, ["--root", str(project), "evaluate", "--manifest", "corpus/manifest.json",
               "--fixtures", "fixtures"],
    )  # fmt: skip
    assert both.exit_code == 2
    assert "cannot be combined" in both.output


# ------------------------------------------------------------------------ determinism


def _strip_volatile(report: dict[str, Any]) -> dict[str, Any]:
    """Drop the fields allowed to differ between runs: generated_at and latencies."""
    out = copy.deepcopy(report)
    out.pop("generated_at")
    for run in out["runs"]:
        run.pop("latency_ms", None)
    for comparison in out.get("comparisons", []):
        comparison.pop("latency_ms_delta", None)
    return out


def test_two_fixture_evaluations_are_identical(project: Path) -> None:
    """Two full fixture runs differ only in generated_at."""
    first = evaluate(project_root=project, fixtures_dir="fixtures")
    second = evaluate(project_root=project, fixtures_dir="fixtures")
    assert first["summary"]["run_count"] == 6
    assert _strip_volatile(first) == _strip_volatile(second)


def test_two_heldout_evaluations_are_identical(project: Path) -> None:
    """Two held-out runs (lexical and hybrid) differ only in generated_at and latencies."""
    runs = [
        evaluate_heldout(
            project, "corpus/manifest.json", ("lexical", "hybrid"), embedder=HashingEmbedder()
        )
        for _ in range(2)
    ]
    first, second = runs
    assert [r["profile"] for r in first["runs"]] == ["lexical", "hybrid"] * 3
    assert {r["status"] for r in first["runs"]} == {"complete"}
    assert all(
        r["query"] == PARAPHRASES[s] for r, s in zip(first["runs"][::2], SOURCES, strict=True)
    )
    assert first["manifest"]["source_id"] == "heldout:unit-heldout"
    assert first["heldout"]["counts"]["cases"] == 3
    assert len(first["comparisons"]) == 3
    assert _strip_volatile(first) == _strip_volatile(second)

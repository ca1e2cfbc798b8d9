"""Evaluation runners: fixture-path safety, temporary projects, profiles, the regression gates.

Every run recalls through the library's own path: stores, vector indexes, embedders and
rerankers come from :class:`swarmmem.bootstrap.Runtime` (the composition root), ranking from
:func:`swarmmem.core.recall.pipeline.run_recall`, and profile runs keep what fits the token
budget exactly as a recall bundle does. An evaluation profile is only a recall configuration.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from swarmmem import fixtures as bundled
from swarmmem.bootstrap import Runtime
from swarmmem.core.evaluation.metrics import (
    MODES,
    PROVIDERS,
    Fixture,
    baseline_document,
    check_regression,
    evaluate_fixtures,
    fixture_request,
    parse_fixture,
    run_metrics,
    summarize,
)
from swarmmem.core.model.errors import EvaluationError, SwarmMemoryError
from swarmmem.core.model.ids import to_iso
from swarmmem.core.model.records import RecallItem, RecallRequest
from swarmmem.core.recall.embeddings import embed_records
from swarmmem.core.recall.pipeline import DENSE_PROFILES, PROFILES, PipelineSettings, run_recall
from swarmmem.core.recall.service import assemble_bundle
from swarmmem.ports.clock import Clock, SystemClock
from swarmmem.ports.storage import StorageProvider
from swarmmem.registry import create, stores_that

#: the stores a dense profile runs on: those keeping their own vector index in a local file
DENSE_STORES = stores_that(lambda traits: traits.vector_index is not None and traits.local_folder)


def contained_path(option: str, path: str | os.PathLike[str], project_root: Path) -> Path:
    """``path`` resolved (realpath) after checking it stays inside the allowed roots.

    The check runs on the lexical path and again after symlinks are resolved; the allowed
    roots are the project root and the bundled fixtures directory.

    Raises:
        EvaluationError: the path escapes both roots.
    """
    raw = Path(path)
    lexical = Path(os.path.normpath(raw if raw.is_absolute() else project_root / raw))
    real = Path(os.path.realpath(lexical))
    roots = [Path(os.path.realpath(project_root)), Path(os.path.realpath(bundled.ROOT))]
    lexical_roots = [Path(os.path.normpath(project_root.absolute())), bundled.ROOT]
    if not any(lexical.is_relative_to(r) for r in lexical_roots) or not any(
        real.is_relative_to(r) for r in roots
    ):
        raise EvaluationError(
            f"{option} {path} escapes the project root and the bundled fixtures directory"
        )
    return real


def resolve_baseline_path(path: str | os.PathLike[str], project_root: Path) -> Path:
    """The gate's baseline file, refusing a path that escapes the allowed roots (see
    :func:`contained_path`), is not a ``.json`` file, or exists as anything but a regular file
    (``--update`` writes it).

    Raises:
        EvaluationError: the path escapes, has another suffix, or is not a regular file.
    """
    real = contained_path("--baseline", path, project_root)
    if real.suffix.lower() != ".json" or Path(os.path.normpath(path)).suffix.lower() != ".json":
        raise EvaluationError(f"--baseline {path} must name a .json file")
    if real.exists() and not real.is_file():
        raise EvaluationError(f"--baseline {path} is not a regular file")
    return real


def load_fixtures(directory: Path, *, secrets: Any = None) -> list[Fixture]:
    """Load every ``*.json`` fixture of ``directory``, sorted by file name."""
    if not directory.is_dir():
        raise EvaluationError(f"fixture directory not found: {directory}")
    files = sorted(directory.glob("*.json"), key=lambda p: (p.name.casefold(), p.name))
    if not files:
        raise EvaluationError(f"no *.json fixtures in {directory}")
    out = []
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise EvaluationError(f"{path.name}: cannot read fixture: {exc}") from exc
        out.append(parse_fixture(data, source=path.name, secrets=secrets))
    return out


def resolve_fixture_dir(path: str | os.PathLike[str] | None, project_root: Path) -> Path:
    """The fixture directory to evaluate, refusing paths that escape the allowed roots.

    The path is checked lexically and after resolving symlinks (realpath); it must stay
    inside the project root or the bundled fixtures directory.

    Raises:
        EvaluationError: the path escapes, or is not a directory.
    """
    if path is None:
        return bundled.RECALL_FIXTURES
    real = contained_path("--fixtures", path, project_root)
    if not real.is_dir():
        raise EvaluationError(f"--fixtures {path} is not a directory")
    return real


def project_runtime(
    folder: Path,
    provider: str,
    *,
    clock: Clock | None = None,
    config: Mapping[str, Any] | None = None,
    **adapters: Any,
) -> Runtime:
    """A runtime for an evaluation project at ``folder`` on ``provider``, configured like a
    user's project (``config`` overrides the defaults; embeddings are on when an ``embedder``
    is given)."""
    settings: dict[str, Any] = {**(config or {}), "enabled": True, "provider": provider}
    if adapters.get("embedder") is not None:
        settings["embeddings"] = {**settings.get("embeddings", {}), "enabled": True}
    given = {k: v for k, v in adapters.items() if v is not None}
    return Runtime(folder, settings, adapters={"clock": clock or SystemClock(), **given})


@contextmanager
def temporary_stores(clock: Clock | None = None) -> Iterator[Callable[[str], StorageProvider]]:
    """A factory of fresh stores (one temporary project each), removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="swarmmem-eval-") as tmp:
        counter = iter(range(1_000_000))

        def make(provider: str) -> StorageProvider:
            folder = Path(tmp) / f"{provider}-{next(counter)}"
            folder.mkdir()
            return project_runtime(folder, provider, clock=clock).store

        yield make


def lexical_recall_fn(
    store: StorageProvider, request: RecallRequest, now: str
) -> Sequence[RecallItem]:
    """The ``reference`` profile of the recall pipeline, as the reference evaluator ranks."""
    return run_recall(store, request, now=now, config=PipelineSettings(profile="reference"))[
        0
    ].items


def evaluate(
    *,
    project_root: Path,
    fixtures_dir: str | os.PathLike[str] | None = None,
    providers: Sequence[str] = PROVIDERS,
    modes: Sequence[str] = MODES,
    clock: Clock | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Run the golden fixtures and return the schema-v1 report."""
    directory = resolve_fixture_dir(fixtures_dir, project_root)
    fixtures = load_fixtures(directory, secrets=create("secrets", "regex"))
    clock = clock or SystemClock()
    with temporary_stores(clock) as factory:
        return evaluate_fixtures(
            fixtures,
            factory,
            lexical_recall_fn,
            now=to_iso(clock.now()),
            providers=providers,
            modes=modes,
            fixture_directory=str(fixtures_dir) if fixtures_dir else "bundled:memory-recall",
            progress=progress,
        )


def regression_gate(
    *,
    project_root: Path,
    baseline_path: Path,
    fixtures_dir: str | os.PathLike[str] | None = None,
    update: bool = False,
) -> dict[str, Any]:
    """Evaluate twice, require identical metrics, compare precision@k with the baseline (a
    ``.json`` file inside the project or the bundled fixtures, :func:`resolve_baseline_path`)."""
    baseline_path = resolve_baseline_path(baseline_path, project_root)
    first = evaluate(project_root=project_root, fixtures_dir=fixtures_dir)
    second = evaluate(project_root=project_root, fixtures_dir=fixtures_dir)
    if update:
        baseline_path.write_text(
            baseline_document(first, to_iso(SystemClock().now())), encoding="utf-8"
        )
    try:
        baseline = json.loads(baseline_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EvaluationError(f"cannot read baseline {baseline_path}: {exc}") from exc
    problems = check_regression(first, second, baseline)
    return {"passed": not problems, "problems": problems, "summary": first["summary"]}


def check_profiles(profiles: Sequence[str]) -> None:
    """Refuse an empty list of profiles or one the evaluator does not know."""
    bad = [p for p in profiles if p not in PROFILES]
    if bad or not profiles:
        raise EvaluationError(
            f"--profiles must list some of {', '.join(PROFILES)}; got {list(profiles)}"
        )


def default_embedder() -> Any:
    """The embedder dense profiles use when the caller gives none."""
    return create("embedder", "onnx")


def evaluate_profiles(
    *,
    project_root: Path,
    profiles: Sequence[str],
    fixtures_dir: str | os.PathLike[str] | None = None,
    providers: Sequence[str] = PROVIDERS,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Evaluate retrieval profiles on the fixtures of a folder (the bundled ones by default)
    with identical candidate and token caps: :func:`run_profiles` over every mode, with the
    default embedder and no reranker.

    Non-lexical profiles need the SQLite provider (other providers report ``skipped``) and a
    working embedder (else ``degraded`` to lexical with the reason). Each non-lexical run is
    compared with the lexical run of the same fixture, provider and mode.
    """
    check_profiles(profiles)
    directory = resolve_fixture_dir(fixtures_dir, project_root)
    fixtures = load_fixtures(directory, secrets=create("secrets", "regex"))
    label = str(fixtures_dir) if fixtures_dir else "bundled:memory-recall"
    return run_profiles(
        fixtures, profiles=profiles, providers=providers, progress=progress, fixture_directory=label
    )


#: every profile run may rank this many candidates
CANDIDATE_CAP = 20


def run_profiles(
    fixtures: Sequence[Fixture],
    *,
    profiles: Sequence[str],
    providers: Sequence[str] = PROVIDERS,
    modes: Sequence[str] = MODES,
    embedder: Any = None,
    reranker: Any = None,
    clock: Clock | None = None,
    progress: Callable[[int, int], None] | None = None,
    fixture_directory: str = "",
) -> dict[str, Any]:
    """Run parsed fixtures under every profile (the body of :func:`evaluate_profiles`): each
    fixture in a fresh project per provider, every mode and profile recalled from it."""
    check_profiles(profiles)
    clock = clock or SystemClock()
    now = to_iso(clock.now())
    embedder, unavailable = _profile_embedder(profiles, embedder)
    dense = unavailable is None and any(p in DENSE_PROFILES for p in profiles)
    runs: list[dict[str, Any]] = []
    total = len(fixtures) * len(providers) * len(modes) * len(profiles)
    with tempfile.TemporaryDirectory(prefix="swarmmem-eval-") as tmp:
        for number, fixture in enumerate(fixtures):
            for provider in providers:
                folder = Path(tmp) / f"{provider}-{number}"
                folder.mkdir()
                with_dense = dense and provider in DENSE_STORES
                runtime = project_runtime(
                    folder,
                    provider,
                    clock=clock,
                    embedder=embedder if with_dense else None,
                    reranker=reranker if with_dense else None,
                )
                try:
                    _load_fixture(runtime, fixture, with_dense=with_dense)
                    for mode in modes:
                        for profile in profiles:
                            runs.append(
                                _profile_run(
                                    runtime,
                                    fixture,
                                    provider=provider,
                                    mode=mode,
                                    profile=profile,
                                    now=now,
                                    unavailable=unavailable,
                                )
                            )
                            if progress is not None:
                                progress(len(runs), total)
                finally:
                    runtime.close()
    version = None if unavailable or embedder is None else embedder.model_version
    return _profiles_report(
        runs,
        fixtures,
        profiles=profiles,
        providers=providers,
        modes=modes,
        now=now,
        fixture_directory=fixture_directory,
        embedding_model_version=version,
    )


def _profile_embedder(profiles: Sequence[str], embedder: Any) -> tuple[Any, str | None]:
    """The embedder of the dense profiles (the default one when none is given) and, when it
    cannot load or is unavailable, why the dense profiles degrade; nothing is loaded without
    a dense profile."""
    if not any(p in DENSE_PROFILES for p in profiles):
        return embedder, None
    try:
        embedder = embedder or default_embedder()
        if embedder.available:
            return embedder, None
    except (SwarmMemoryError, ImportError):
        pass
    return embedder, "dense retrieval is unavailable"


def _load_fixture(runtime: Runtime, fixture: Fixture, *, with_dense: bool) -> None:
    """Store the fixture's memories and, ``with_dense``, embed them (when the dense parts
    load)."""
    store = runtime.store
    with store.transaction():
        for record in fixture.records:
            store.upsert(record)
    if with_dense:
        parts = runtime.dense_parts(rerank=False)
        if parts is not None:
            embed_records(parts, fixture.records)


def _profile_items(
    runtime: Runtime,
    request: RecallRequest,
    profile: str,
    *,
    provider: str,
    now: str,
    unavailable: str | None,
) -> tuple[list[RecallItem], str, str | None, Any]:
    """What ``profile`` returns for ``request`` (the items that fit the token budget, as a
    recall bundle keeps them), with the run's status, degradation reason and hybrid trace.

    A dense profile is skipped on a provider not in :data:`DENSE_STORES`, and runs as the
    lexical one (``degraded``) when dense retrieval is ``unavailable``."""
    if profile in DENSE_PROFILES and provider not in DENSE_STORES:
        return [], "skipped", f"profile requires {' or '.join(DENSE_STORES)} provider", None
    degraded = bool(unavailable) and profile in DENSE_PROFILES
    config, parts = runtime.resolve_profile("lexical" if degraded else profile)
    result, trace = run_recall(runtime.store, request, now=now, config=config, parts=parts)
    bundle = assemble_bundle(
        request,
        result.items,
        result.diagnostics,
        generated_at=now,
        redact=runtime.secrets.redact,
    )
    items = list(bundle.items)
    if degraded:
        return items, "degraded", unavailable, None
    if profile in DENSE_PROFILES:
        return items, trace.status, trace.degradation_reason, trace
    return items, "complete", None, None


def _profile_run(
    runtime: Runtime,
    fixture: Fixture,
    *,
    provider: str,
    mode: str,
    profile: str,
    now: str,
    unavailable: str | None,
) -> dict[str, Any]:
    """One fixture's run under one provider, mode and profile: what was retrieved, its
    metrics, latency and resource use."""
    request, k = fixture_request(fixture, mode, candidate_cap=CANDIDATE_CAP)
    started = time.perf_counter()
    items, status, reason, trace = _profile_items(
        runtime, request, profile, provider=provider, now=now, unavailable=unavailable
    )
    latency = (time.perf_counter() - started) * 1000.0
    ids = [it.record.id for it in items]
    metrics = run_metrics(fixture, ids, k, mode, now)
    passed = metrics.pop("passed")
    return {
        "fixture": fixture.name,
        "provider": provider,
        "mode": mode,
        "profile": profile,
        "status": status,
        "degradation_reason": reason,
        "k": k,
        "query": request.query,
        "expected_labels": list(fixture.data["expectedLabels"]),
        "retrieved_labels": [fixture.labels.get(i, i) for i in ids],
        "retrieved_ids": ids,
        "metrics": metrics,
        "passed": passed,
        "resource_cap": {
            "candidate_count": CANDIDATE_CAP,
            "token_budget": request.token_budget,
        },
        "latency_ms": round(latency, 3),
        "provenance": "lexical"
        if profile not in DENSE_PROFILES or status != "complete"
        else "sqlite-vec",
        "resource_usage": {
            "returned_count": len(ids),
            "returned_token_estimate": sum(_tokens(it.record.text) for it in items),
            **_trace_usage(trace),
        },
    }


def _comparisons(runs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each non-lexical run against the lexical run of the same fixture, provider and mode."""
    lexical = {
        (r["fixture"], r["provider"], r["mode"]): r for r in runs if r["profile"] == "lexical"
    }
    comparisons = []
    for run in runs:
        base = lexical.get((run["fixture"], run["provider"], run["mode"]))
        if run["profile"] == "lexical" or base is None:
            continue
        comparisons.append(
            {
                "fixture": run["fixture"],
                "provider": run["provider"],
                "mode": run["mode"],
                "profile": run["profile"],
                "status": run["status"],
                "precision_at_k_delta": run["metrics"]["precision@k"]
                - base["metrics"]["precision@k"],
                "recall_at_k_delta": run["metrics"]["recall@k"] - base["metrics"]["recall@k"],
                "latency_ms_delta": round(run["latency_ms"] - base["latency_ms"], 3),
                "cost_delta": None,
                "cost_comparison": "unavailable",
            }
        )
    return comparisons


def _profiles_report(
    runs: list[dict[str, Any]],
    fixtures: Sequence[Fixture],
    *,
    profiles: Sequence[str],
    providers: Sequence[str],
    modes: Sequence[str],
    now: str,
    fixture_directory: str,
    embedding_model_version: str | None,
) -> dict[str, Any]:
    """The profile report (schema 2): the runs, a summary per profile (skipped runs left
    out) and the comparisons with the lexical runs."""
    by_profile = {
        p: summarize(
            [r for r in runs if r["profile"] == p and r["status"] != "skipped"], len(fixtures)
        )
        for p in profiles
    }
    return {
        "schema_version": 2,
        "generated_at": now,
        "fixture_directory": fixture_directory,
        "providers": list(providers),
        "modes": list(modes),
        "profiles": list(profiles),
        "summary": by_profile.get("lexical") or next(iter(by_profile.values())),
        "profile_summaries": by_profile,
        "runs": runs,
        "comparisons": _comparisons(runs),
        "embedding_model_version": embedding_model_version,
    }


def _trace_usage(trace: Any) -> dict[str, int]:
    """The candidate counts of a hybrid trace (empty for lexical runs)."""
    if trace is None:
        return {}
    return {
        "lexical_candidate_count": trace.lexical_candidate_count,
        "dense_candidate_count": trace.dense_candidate_count,
        "rerank_candidate_count": trace.rerank_candidate_count,
        "query_embedding_invocation_count": trace.query_embedding_invocation_count,
    }


def _tokens(text: str) -> int:
    from swarmmem.core.model.ids import estimate_tokens

    return estimate_tokens(text)

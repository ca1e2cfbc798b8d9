"""Evaluation wiring: fixture-path safety, temporary stores, the regression gate."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from swarmmem import fixtures as bundled
from swarmmem.core.errors import EvaluationError
from swarmmem.core.evaluation import (
    MODES,
    PROVIDERS,
    baseline_document,
    check_regression,
    evaluate_fixtures,
    load_fixtures,
)
from swarmmem.core.ids import to_iso
from swarmmem.core.recall import provider_recall
from swarmmem.core.records import RecallItem, RecallRequest
from swarmmem.ports.clock import Clock, SystemClock
from swarmmem.ports.storage import StorageProvider
from swarmmem.registry import resolve


def _within(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def resolve_fixture_dir(path: str | os.PathLike[str] | None, project_root: Path) -> Path:
    """The fixture directory to evaluate, refusing paths that escape the allowed roots.

    The path is checked lexically and after resolving symlinks (realpath); it must stay
    inside the project root or the bundled fixtures directory.

    Raises:
        EvaluationError: the path escapes, or is not a directory.
    """
    if path is None:
        return bundled.RECALL_FIXTURES
    raw = Path(path)
    lexical = Path(os.path.normpath(raw if raw.is_absolute() else project_root / raw))
    real = Path(os.path.realpath(lexical))
    roots = [Path(os.path.realpath(project_root)), Path(os.path.realpath(bundled.ROOT))]
    lexical_roots = [Path(os.path.normpath(project_root.absolute())), bundled.ROOT]
    if not any(_within(lexical, r) for r in lexical_roots) or not any(
        _within(real, r) for r in roots
    ):
        raise EvaluationError(
            f"--fixtures {path} escapes the project root and the bundled fixtures directory"
        )
    if not real.is_dir():
        raise EvaluationError(f"--fixtures {path} is not a directory")
    return real


@contextmanager
def temporary_stores(clock: Clock | None = None) -> Iterator[Callable[[str], StorageProvider]]:
    """A factory of fresh stores (one temporary directory each), removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="swarmmem-eval-") as tmp:
        counter = iter(range(1_000_000))

        def make(provider: str) -> StorageProvider:
            folder = Path(tmp) / f"{provider}-{next(counter)}"
            folder.mkdir()
            cls = resolve("store", provider)
            if provider == "sqlite":
                return cls(folder / "memory.db", clock=clock)  # type: ignore[no-any-return]
            if provider == "local-jsonl":
                return cls(folder, clock=clock)  # type: ignore[no-any-return]
            return cls(clock=clock)  # type: ignore[no-any-return]

        yield make


def lexical_recall_fn(store: StorageProvider, request: RecallRequest, now: str) -> Sequence[RecallItem]:
    """Provider-level lexical recall used by the evaluator."""
    return provider_recall(store, request, now=now).items


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
    from swarmmem.adapters.regex_secrets import RegexSecretDetector

    directory = resolve_fixture_dir(fixtures_dir, project_root)
    fixtures = load_fixtures(directory, secrets=RegexSecretDetector())
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
    """Evaluate twice, require identical metrics, compare precision@k with the baseline."""
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


PROFILES = ("lexical", "hybrid", "hybrid+rerank")


def _default_embedder() -> Any:
    from swarmmem.adapters.onnx_embedder import OnnxMiniLmEmbedder

    return OnnxMiniLmEmbedder()


def evaluate_profiles(
    *,
    project_root: Path,
    profiles: Sequence[str],
    fixtures_dir: str | os.PathLike[str] | None = None,
    providers: Sequence[str] = PROVIDERS,
    modes: Sequence[str] = MODES,
    embedder: Any = None,
    reranker: Any = None,
    settings: Any = None,
    clock: Clock | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Evaluate retrieval profiles with identical candidate and token caps.

    Non-lexical profiles need the SQLite provider (other providers report ``skipped``) and a
    working embedder (else ``degraded`` to lexical with the reason). Each non-lexical run is
    compared with the lexical run of the same fixture, provider and mode.
    """
    import time

    import attrs

    from swarmmem.adapters.regex_secrets import RegexSecretDetector
    from swarmmem.adapters.vector_index import SqliteVecIndex
    from swarmmem.core.embedding_cache import EmbeddingCache
    from swarmmem.core.errors import SwarmMemoryError
    from swarmmem.core.evaluation import fixture_request, run_metrics, summarize
    from swarmmem.core.hybrid import DenseParts, HybridSettings, hybrid_recall
    from swarmmem.core.ids import normalize_text

    bad = [p for p in profiles if p not in PROFILES]
    if bad or not profiles:
        raise EvaluationError(f"--profiles must list some of {', '.join(PROFILES)}; got {list(profiles)}")
    directory = resolve_fixture_dir(fixtures_dir, project_root)
    fixtures = load_fixtures(directory, secrets=RegexSecretDetector())
    clock = clock or SystemClock()
    now = to_iso(clock.now())
    settings = settings or HybridSettings(dense_rescue=0.25)
    unavailable: str | None = None
    if any(p != "lexical" for p in profiles):
        try:
            embedder = embedder or _default_embedder()
            if not embedder.available:
                unavailable = "dense retrieval is unavailable"
        except (SwarmMemoryError, ImportError):
            unavailable = "dense retrieval is unavailable"
        if reranker is None and unavailable is None and "hybrid+rerank" in profiles:
            from swarmmem.registry import maxsim_reranker

            reranker = maxsim_reranker(embedder)
    runs: list[dict[str, Any]] = []
    total = len(fixtures) * len(providers) * len(modes) * len(profiles)
    cap = 20
    with temporary_stores(clock) as factory:
        for fixture in fixtures:
            for provider in providers:
                store = factory(provider)
                index = None
                try:
                    with store.transaction():
                        for record in fixture.records:
                            store.upsert(record)
                    for mode in modes:
                        for profile in profiles:
                            request, k = fixture_request(fixture, mode, candidate_cap=cap)
                            request = attrs.evolve(request, profile=profile)
                            status, reason, trace = "complete", None, None
                            started = time.perf_counter()
                            if profile != "lexical" and provider != "sqlite":
                                status, reason, items = "skipped", "profile requires sqlite provider", []
                            elif profile == "lexical" or unavailable:
                                items = list(provider_recall(store, request, now=now).items)
                                if profile != "lexical":
                                    status, reason = "degraded", unavailable
                            else:
                                if index is None:
                                    db = getattr(store, "path", None)
                                    index = SqliteVecIndex(db, embedder.dimension)
                                    index.seed_model_version(embedder.model_version)
                                    index.upsert(
                                        [r.id for r in fixture.records],
                                        embedder.embed_batch([normalize_text(r.text).lower() for r in fixture.records]),
                                    )
                                parts = DenseParts(
                                    embedder=embedder, index=index, cache=EmbeddingCache(64),
                                    reranker=reranker if profile == "hybrid+rerank" else None,
                                )
                                result, trace = hybrid_recall(
                                    store, request, now=now, parts=parts,
                                    settings=attrs.evolve(settings, rerank=profile == "hybrid+rerank"),
                                    min_score=request.min_score or 0.0,
                                )
                                items = list(result.items)
                                status, reason = trace.status, trace.degradation_reason
                            latency = (time.perf_counter() - started) * 1000.0
                            ids = [it.record.id for it in items]
                            metrics = run_metrics(fixture, ids, k, mode, now)
                            passed = metrics.pop("passed")
                            runs.append({
                                "fixture": fixture.name, "provider": provider, "mode": mode,
                                "profile": profile, "status": status, "degradation_reason": reason,
                                "k": k, "query": request.query,
                                "expected_labels": list(fixture.data["expectedLabels"]),
                                "retrieved_labels": [fixture.labels.get(i, i) for i in ids],
                                "retrieved_ids": ids, "metrics": metrics, "passed": passed,
                                "resource_cap": {"candidate_count": cap, "token_budget": request.token_budget},
                                "latency_ms": round(latency, 3),
                                "provenance": "lexical" if profile == "lexical" or status != "complete"
                                else "sqlite-vec",
                                "resource_usage": {
                                    "returned_count": len(ids),
                                    "returned_token_estimate": sum(
                                        _tokens(it.record.text) for it in items
                                    ),
                                    **({} if trace is None else {
                                        "lexical_candidate_count": trace.lexical_candidate_count,
                                        "dense_candidate_count": trace.dense_candidate_count,
                                        "rerank_candidate_count": trace.rerank_candidate_count,
                                        "query_embedding_invocation_count": trace.query_embedding_invocation_count,
                                    }),
                                },
                            })
                            if progress is not None:
                                progress(len(runs), total)
                finally:
                    if index is not None:
                        index.close()
                    store.close()
    lexical = {(r["fixture"], r["provider"], r["mode"]): r for r in runs if r["profile"] == "lexical"}
    comparisons = []
    for run in runs:
        base = lexical.get((run["fixture"], run["provider"], run["mode"]))
        if run["profile"] == "lexical" or base is None:
            continue
        comparisons.append({
            "fixture": run["fixture"], "provider": run["provider"], "mode": run["mode"],
            "profile": run["profile"], "status": run["status"],
            "precision_at_k_delta": run["metrics"]["precision@k"] - base["metrics"]["precision@k"],
            "recall_at_k_delta": run["metrics"]["recall@k"] - base["metrics"]["recall@k"],
            "latency_ms_delta": round(run["latency_ms"] - base["latency_ms"], 3),
            "cost_delta": None, "cost_comparison": "unavailable",
        })
    by_profile = {
        p: summarize([r for r in runs if r["profile"] == p and r["status"] != "skipped"], len(fixtures))
        for p in profiles
    }
    return {
        "schema_version": 2,
        "generated_at": now,
        "fixture_directory": str(fixtures_dir) if fixtures_dir else "bundled:memory-recall",
        "providers": list(providers),
        "modes": list(modes),
        "profiles": list(profiles),
        "summary": by_profile.get("lexical") or next(iter(by_profile.values())),
        "profile_summaries": by_profile,
        "runs": runs,
        "comparisons": comparisons,
        "embedding_model_version": None if unavailable or embedder is None else embedder.model_version,
    }


def _tokens(text: str) -> int:
    from swarmmem.core.ids import estimate_tokens

    return estimate_tokens(text)

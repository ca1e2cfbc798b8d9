"""The held-out corpus: reading it safely, evaluating recall on it, and its regression gate.

The corpus ships as a manifest plus source files; every path is checked to stay inside the
project, every file is read with a size cap, and runs go through
:func:`swarmmem.evaluation.run_profiles` like the bundled fixtures.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from swarmmem import fixtures as bundled
from swarmmem.core.model.errors import EvaluationError, SwarmMemoryError
from swarmmem.core.model.ids import to_iso
from swarmmem.core.recall.pipeline import DENSE_PROFILES
from swarmmem.evaluation import (
    check_profiles,
    contained_path,
    default_embedder,
    resolve_baseline_path,
    run_profiles,
)
from swarmmem.ports.clock import Clock, SystemClock
from swarmmem.registry import create

HELDOUT_PROFILES: tuple[str, ...] = ("lexical", "hybrid")
HELDOUT_PROVIDERS: tuple[str, ...] = ("sqlite",)


def resolve_manifest_path(path: str | os.PathLike[str] | None, project_root: Path) -> Path:
    """The held-out ``manifest.json`` to read, refusing paths that escape the allowed roots.

    ``None`` means the bundled manifest. Otherwise the file must be named ``manifest.json``
    and lie inside the project root or the bundled fixtures directory, both lexically and
    after resolving symlinks (realpath).

    Raises:
        EvaluationError: wrong name, the path escapes, or it is not a regular file.
    """
    from swarmmem.core.evaluation.heldout import MANIFEST_NAME

    if path is None:
        return bundled.HELDOUT_MANIFEST
    lexical_name = Path(os.path.normpath(path)).name
    real = contained_path("--manifest", path, project_root)
    if lexical_name != MANIFEST_NAME or real.name != MANIFEST_NAME:
        raise EvaluationError(f"--manifest {path} must name a file called {MANIFEST_NAME}")
    if not real.is_file():
        raise EvaluationError(f"--manifest {path} is not a file")
    return real


def _read_capped(path: Path, limit: int, what: str) -> bytes:
    """Read at most ``limit`` bytes, refusing a larger file before and while reading."""
    try:
        size = path.stat().st_size
        if size > limit:
            raise EvaluationError(f"{what} is {size} bytes, above the {limit} byte limit")
        with path.open("rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise EvaluationError(f"cannot read {what}: {exc}") from exc
    if len(data) > limit:
        raise EvaluationError(f"{what} grew above the {limit} byte limit while being read")
    return data


def read_heldout_corpus(manifest_path: Path) -> tuple[Any, dict[str, str]]:
    """Read and validate a held-out manifest and every source it names.

    Each source must resolve (realpath) inside the manifest's directory, respect the per-file
    and total byte caps and match its ``content_hash``. Returns the parsed
    :class:`~swarmmem.core.evaluation.heldout.HeldoutManifest` and the LF-normalised texts by
    ``source_path``.

    Raises:
        EvaluationError: naming the manifest and the offending case or limit.
    """
    from swarmmem.core.evaluation.heldout import (
        MAX_MANIFEST_BYTES,
        MAX_SOURCE_BYTES,
        SourceBudget,
        decode_source,
        parse_manifest_bytes,
    )

    label = f"{manifest_path.parent.name}/{manifest_path.name}"
    manifest = parse_manifest_bytes(
        _read_capped(manifest_path, MAX_MANIFEST_BYTES, label), source=label
    )
    root = Path(os.path.realpath(manifest_path.parent))
    budget = SourceBudget()
    texts: dict[str, str] = {}
    for case in manifest.cases:
        real = Path(os.path.realpath(root / case.source_path))
        if not real.is_relative_to(root):
            raise EvaluationError(
                f"{label}: source_path {case.source_path!r} of case {case.id!r} resolves "
                "outside the corpus root"
            )
        if not real.is_file():
            raise EvaluationError(
                f"{label}: source_path {case.source_path!r} of case {case.id!r} is not a file"
            )
        try:
            size = real.stat().st_size
        except OSError as exc:
            raise EvaluationError(f"{label}: cannot read {case.source_path}: {exc}") from exc
        budget.admit(case, size, source=label)
        raw = _read_capped(real, MAX_SOURCE_BYTES, f"{label}: {case.source_path}")
        texts[case.source_path] = decode_source(case, raw, source=label)
    return manifest, texts


def _shared_embedder(profiles: Sequence[str], embedder: Any) -> Any:
    """Load the default embedder once for several runs (``None`` when it cannot load)."""
    if embedder is not None or not any(p in DENSE_PROFILES for p in profiles):
        return embedder
    try:
        return default_embedder()
    except (SwarmMemoryError, ImportError):
        return None


def evaluate_heldout(
    project_root: Path,
    manifest_path: str | os.PathLike[str] | None = None,
    profiles: Sequence[str] = HELDOUT_PROFILES,
    *,
    providers: Sequence[str] = HELDOUT_PROVIDERS,
    embedder: Any = None,
    reranker: Any = None,
    clock: Clock | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Evaluate the held-out corpus: one manual-mode run per case, provider and profile.

    Each case asks for its paraphrase (query = task) among all corpus sources in the
    ``heldout-retrieval-corpus`` repository scope, kinds ``[code_pattern]``,
    ``k = maxItems = 1``, token budget 512, and expects its own source. The report is the
    profile report (schema 2) plus a ``heldout`` section and a ``manifest`` section whose
    ``source_id`` is ``heldout:<corpus_id>``.
    """
    from swarmmem.core.evaluation.heldout import corpus_hash, heldout_fixtures, summarize_cases

    check_profiles(profiles)
    path = resolve_manifest_path(manifest_path, project_root)
    manifest, texts = read_heldout_corpus(path)
    fixtures = heldout_fixtures(
        manifest,
        texts,
        secrets=create("secrets", "regex"),
        source=f"{path.parent.name}/{path.name}",
    )
    report = run_profiles(
        fixtures,
        profiles=profiles,
        providers=providers,
        modes=("manual",),
        embedder=embedder,
        reranker=reranker,
        clock=clock,
        progress=progress,
        fixture_directory=str(manifest_path) if manifest_path else "bundled:memory-recall-heldout",
    )
    digest = corpus_hash(manifest)
    report["heldout"] = {
        "corpus_id": manifest.corpus_id,
        "split": manifest.split,
        "version": manifest.version,
        "corpus_hash": digest,
        "thresholds": dict(manifest.thresholds),
        "counts": summarize_cases(manifest.cases),
    }
    report["manifest"] = {
        "version": "1.0.0",
        "source_id": f"heldout:{manifest.corpus_id}",
        "provider_id": "providers:" + ",".join(providers),
        "corpus_hash": digest,
        "profile_thresholds": {
            p: manifest.thresholds.get("precision_at_k", 0.01) for p in profiles
        },
        "sample_counts": {"total": len(report["runs"])},
        "metric_definitions": {"precision": "precision@k", "recall": "recall@k"},
        "uncertainty": {
            "method": "deterministic-fixture",
            "confidence": 0.95,
            "sample_count": len(report["runs"]),
        },
    }
    return report


def heldout_gate(
    *,
    project_root: Path,
    manifest_path: str | os.PathLike[str] | None = None,
    baseline_path: Path | None = None,
    profiles: Sequence[str] | None = None,
    update: bool = False,
    embedder: Any = None,
) -> dict[str, Any]:
    """Evaluate the held-out corpus twice and compare it with its pinned baseline.

    The baseline defaults to ``baseline.json`` next to the manifest; the profiles default to
    those of the baseline (else lexical and hybrid). See
    :func:`swarmmem.core.evaluation.heldout.check_heldout_regression` for the checks.
    """
    from swarmmem.core.evaluation.heldout import check_heldout_regression, heldout_baseline_document

    path = resolve_manifest_path(manifest_path, project_root)
    base_path = resolve_baseline_path(baseline_path or path.parent / "baseline.json", project_root)
    if profiles is None:
        try:
            pinned = json.loads(base_path.read_text(encoding="utf-8")).get("profiles")
        except (OSError, ValueError, AttributeError):
            pinned = None
        profiles = tuple(pinned) if isinstance(pinned, dict) and pinned else HELDOUT_PROFILES
    embedder = _shared_embedder(profiles, embedder)
    first = evaluate_heldout(project_root, path, profiles, embedder=embedder)
    second = evaluate_heldout(project_root, path, profiles, embedder=embedder)
    manifest, _ = read_heldout_corpus(path)
    if update:
        base_path.write_text(
            heldout_baseline_document(first, manifest, to_iso(SystemClock().now())),
            encoding="utf-8",
        )
    try:
        baseline = json.loads(base_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EvaluationError(f"cannot read baseline {base_path}: {exc}") from exc
    if not isinstance(baseline, dict):
        raise EvaluationError(f"baseline {base_path} must be a JSON object")
    problems = check_heldout_regression(first, second, baseline, manifest)
    return {
        "passed": not problems,
        "problems": problems,
        "corpus_id": manifest.corpus_id,
        "profile_summaries": first["profile_summaries"],
    }

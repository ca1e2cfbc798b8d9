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

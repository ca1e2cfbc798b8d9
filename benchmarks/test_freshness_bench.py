"""What the freshness check costs a recall: the whole ``mem.recall`` (ranking, bundle, usage
row) on a SQLite store of 10,000 memories whose evidence is fingerprinted (1,000 with
``--benchmark-disable``), with ``evidence.freshness`` on and off.

Every memory cites one of 200 real files of the project, so each returned item stats its file
(and reads it only if it moved). ``test_recall_freshness_ratio`` times both settings
interleaved in one run and puts the ratio of medians in ``extra_info``: the target is at most
1.05. Nothing here asserts a time.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import make_corpus

import swarmmem
from swarmmem.adapters.files.sources import RepositorySources

QUERY = "how do we run pytest fixtures for the sqlite migration tests"
FILES = 200


@pytest.fixture(scope="module")
def project(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    size = 1000 if request.config.getoption("benchmark_disable") else 10_000
    root = tmp_path_factory.mktemp("freshness") / "repo"
    (root / "src").mkdir(parents=True)
    for i in range(FILES):
        (root / "src" / f"mod{i}.py").write_text(f"def f{i}():\n    return {i}\n", "utf-8")
    sources = RepositorySources(root)
    prints = [sources.fingerprints([f"src/mod{i}.py"]) for i in range(FILES)]
    rows = [
        {
            "kind": cand.kind if cand.kind != "evidence" else "project_fact",
            "text": f"{cand.text} ({i})",
            "tags": cand.tags,
            "source": {"type": "file", "filePath": f"src/mod{i % FILES}.py"},
            "metadata": {"evidenceFingerprints": prints[i % FILES]},
        }
        for i, cand in enumerate(make_corpus(size, seed=11))
    ]
    with swarmmem.open(root, config={"enabled": True}) as mem:
        result = mem.import_records(rows)
        assert result.written >= size * 0.99, result
    return root


def _memory(root: Path, freshness: bool) -> Any:
    return swarmmem.open(root, config={"enabled": True, "evidence": {"freshness": freshness}})


@pytest.fixture(params=[True, False], ids=["freshness-on", "freshness-off"])
def mem(request: pytest.FixtureRequest, project: Path) -> Iterator[Any]:
    with _memory(project, request.param) as memory:
        memory.recall(QUERY)  # warm: store open, caches filled
        yield memory


@pytest.mark.benchmark(group="recall with evidence freshness (10k SQLite)")
def test_recall(benchmark: Any, mem: Any) -> None:
    bundle = benchmark(mem.recall, QUERY)
    assert bundle.items
    statuses = {item.evidence_status for item in bundle.items}
    fresh = mem.config["evidence"]["freshness"]
    assert statuses == ({"fresh"} if fresh else {None})


@pytest.mark.benchmark(group="recall with evidence freshness (10k SQLite)")
def test_recall_freshness_ratio(benchmark: Any, project: Path) -> None:
    """Both settings interleaved, 41 recalls each; ``extra_info`` holds the median ratio."""
    with _memory(project, True) as on, _memory(project, False) as off:
        on.recall(QUERY)
        off.recall(QUERY)
        times: dict[bool, list[float]] = {True: [], False: []}

        def pair() -> None:
            for flag, memory in ((True, on), (False, off)):
                start = time.perf_counter()
                memory.recall(QUERY)
                times[flag].append(time.perf_counter() - start)

        benchmark.pedantic(lambda: [pair() for _ in range(41)], rounds=1, iterations=1)
        ratio = statistics.median(times[True]) / statistics.median(times[False])
        benchmark.extra_info["median_on_ms"] = round(statistics.median(times[True]) * 1000, 3)
        benchmark.extra_info["median_off_ms"] = round(statistics.median(times[False]) * 1000, 3)
        benchmark.extra_info["ratio_on_off"] = round(ratio, 3)
        assert ratio > 0

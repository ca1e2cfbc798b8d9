"""Dense retrieval cost: the numpy scan, sqlite-vec's KNN and the memory-bandwidth floor.

Sizes come from ``SWARMMEM_BENCH_DENSE_SIZES`` (default ``10000``; the README table used
``100000``). The floor is one pass over the same contiguous float32 matrix (``X.sum()``), the
least any exact scan can cost.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from swarmmem.adapters.vectors.local import SqliteVecIndex

SIZES = [int(s) for s in os.environ.get("SWARMMEM_BENCH_DENSE_SIZES", "10000").split(",") if s]
DIM = 384


@pytest.fixture(scope="module", params=SIZES, ids=str)
def index(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """A sqlite-vec index holding ``n`` random unit vectors."""
    rng = np.random.default_rng(0)
    n = request.param
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    path: Path = tmp_path_factory.mktemp(f"dense{n}") / "memory.db"
    idx = SqliteVecIndex(path, DIM)
    ids = [f"mem_{i:016x}" for i in range(n)]
    for start in range(0, n, 5000):
        idx.upsert(ids[start : start + 5000], vectors[start : start + 5000])
    idx.search(vectors[0], 10)  # load the matrix once
    yield idx, vectors
    idx.close()


@pytest.mark.benchmark(group="dense-knn")
def test_memory_bandwidth_floor(benchmark, index) -> None:
    """One read of the whole float32 matrix."""
    _idx, vectors = index
    total = benchmark(vectors.sum)
    assert np.isfinite(total)


@pytest.mark.benchmark(group="dense-knn")
def test_numpy_scan_search(benchmark, index) -> None:
    """The index's search path: matrix-vector product + partial sort (k=100)."""
    idx, vectors = index
    hits = benchmark(idx.search, vectors[1], 100)
    assert hits[0][0] == "mem_0000000000000001"


@pytest.mark.benchmark(group="dense-knn")
def test_sqlite_vec_knn(benchmark, index) -> None:
    """sqlite-vec's own KNN query over the same table (k=100)."""
    idx, vectors = index
    hits = benchmark(idx.search_vec0, vectors[1], 100)
    assert hits[0][0] == "mem_0000000000000001"

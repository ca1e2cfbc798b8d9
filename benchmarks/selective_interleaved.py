"""Selective lexical recall against the bare stemmed FTS5 query, timed in turns in one process.

``test_selective_recall_bench.py`` times the bare query and the recall one after the other,
so a change of the machine's load between the two skews their ratio. Here each round asks
the same selective query of both, in turns (each of the two first every other round), on one
SQLite file, and the ratio is of the two minima and of the two medians; the recall's
statements (``Fts5Index._match``) are timed apart, so the Python share of a recall shows too.
Not a test; run by hand::

    python benchmarks/selective_interleaved.py --size 100000 --rounds 2000 [--db FILE]

``--db`` keeps the store between runs (built on first use, about a minute at 100,000).
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path

# the benchmarks' conftest and the tests' factories it reads
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from conftest import bulk
from test_selective_recall_bench import (
    NOW,
    _records,
    _requests,
    selective_queries,
)

from swarmmem.adapters.storage.sqlite import SqliteStore
from swarmmem.adapters.storage.sqlite import fulltext as sqlite_fts
from swarmmem.adapters.storage.sqlite.support import sqlite_module
from swarmmem.core.recall.bm25 import stemmed_query
from swarmmem.core.recall.pipeline import run_recall

BARE = (
    "SELECT id, bm25(memory_items_fts_porter) FROM memory_items_fts_porter WHERE "
    "memory_items_fts_porter MATCH ? ORDER BY bm25(memory_items_fts_porter) LIMIT 160"
)


def summary(name: str, values: list[float]) -> str:
    return (
        f"{name}: min {min(values) * 1e3:.2f} ms, median {statistics.median(values) * 1e3:.2f} ms"
    )


def ratios(slow: list[float], fast: list[float]) -> str:
    """``slow`` against ``fast``: the ratio of their minima and of their medians."""
    return (
        f"{min(slow) / min(fast):.2f}x by the minimum, "
        f"{statistics.median(slow) / statistics.median(fast):.2f}x by the median"
    )


def measure(path: Path, size: int, rounds: int) -> None:
    if not path.exists():
        store = SqliteStore(path)
        bulk(store, _records(size))
        store.close()
    store = SqliteStore(path)
    spent = [0.0]
    match = sqlite_fts.Fts5Index._match

    def timed(self: sqlite_fts.Fts5Index, *args: object) -> object:
        started = time.perf_counter()
        try:
            return match(self, *args)  # type: ignore[arg-type]
        finally:
            spent[0] += time.perf_counter() - started

    sqlite_fts.Fts5Index._match = timed  # type: ignore[method-assign]
    conn = sqlite_module().connect(str(path))
    queries = selective_queries(size)
    requests = list(itertools.islice(_requests(size), len(queries)))
    matches = [stemmed_query(q, None, "manual") for q in queries]
    for request, text in zip(requests, matches, strict=True):  # warm both
        run_recall(store, request, now=NOW)
        conn.execute(BARE, (text,)).fetchall()
    bare, recall, statements = [], [], []

    def ask_bare(j: int) -> None:
        started = time.perf_counter()
        conn.execute(BARE, (matches[j],)).fetchall()
        bare.append(time.perf_counter() - started)

    def ask_recall(j: int) -> None:
        spent[0] = 0.0
        started = time.perf_counter()
        run_recall(store, requests[j], now=NOW)
        recall.append(time.perf_counter() - started)
        statements.append(spent[0])

    for n in range(rounds):
        # each query is asked of the two in both orders: the first one asked warms the
        # operating system's and the processor's caches for the second
        j = (n // 2) % len(queries)
        first, second = (ask_bare, ask_recall) if n % 2 == 0 else (ask_recall, ask_bare)
        first(j)
        second(j)
    conn.close()
    store.close()
    python = [r - s for r, s in zip(recall, statements, strict=True)]
    print(summary("bare stemmed FTS5", bare))
    print(summary("lexical recall", recall))
    print(summary("  its statements", statements))
    print(summary("  the rest (Python)", python))
    print(f"ratio: {ratios(recall, bare)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--db", type=Path, default=None)
    args = parser.parse_args()
    if args.db is not None:
        measure(args.db, args.size, args.rounds)
        return 0
    with tempfile.TemporaryDirectory(prefix="swarmmem-interleaved-") as tmp:
        measure(Path(tmp) / "memory.db", args.size, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

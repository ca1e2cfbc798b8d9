"""Read each fetched set's files and turn them into ``swarmmem dataset`` collections.

The conversions and label rules themselves are pure functions in :mod:`.conversions`
(unit-tested in ``tests/unit/test_quality_runner.py``); this module only reads the files
:mod:`fetch` extracted:

* ``memagentbench-fc``: the parquet file's 8 rows (contexts); a row whose ``source`` contains
  ``_mh_`` is multi-hop;
* ``longmemeval-s``: ``questions.jsonl`` and ``sessions.jsonl``, one collection per question;
* ``memoryeval``: every ``*.yaml`` scenario, one collection per scenario.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import fetch
from .conversions import (
    Collection,
    convert_fact_consolidation,
    convert_longmemeval,
    convert_memoryeval,
)

SETS = tuple(fetch.PINS)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def fact_consolidation(root: Path, cache: Path) -> list[Collection]:
    """The 8 fact-consolidation contexts (``factconsolidation_{sh,mh}_{6k,32k,64k,262k}``)."""
    pq = fetch.ensure_module("pyarrow.parquet", "pyarrow", cache)
    path = root / "sage/data/sources/memagentbench/Conflict_Resolution.parquet"
    out = []
    for row in pq.read_table(path).to_pylist():
        source = str(row["metadata"]["source"])
        out.append(
            convert_fact_consolidation(
                source,
                row["context"],
                list(row["questions"]),
                [list(a) for a in row["answers"]],
                multi_hop="_mh_" in source,
            )
        )
    return out


def longmemeval(root: Path, cache: Path) -> list[Collection]:
    """The 16 LongMemEval-S questions, each with the turns of its own sessions."""
    folder = root / "memory_arena/data/longmemeval-s/processed"
    return convert_longmemeval(
        _jsonl(folder / "questions.jsonl"), _jsonl(folder / "sessions.jsonl")
    )


def memoryeval(root: Path, cache: Path) -> list[Collection]:
    """The 30 built-in memoryeval scenarios, in file-name order."""
    yaml = fetch.ensure_module("yaml", "pyyaml", cache)
    files = sorted((root / "memeval/datasets/builtin").glob("*.yaml"))
    return [
        convert_memoryeval(path.stem, yaml.safe_load(path.read_text(encoding="utf-8")))
        for path in files
    ]


_READERS = {
    "memagentbench-fc": fact_consolidation,
    "longmemeval-s": longmemeval,
    "memoryeval": memoryeval,
}


def collections(name: str, cache: Path | None = None) -> list[Collection]:
    """Fetch set ``name`` (when not cached yet) and return its collections."""
    cache = cache or fetch.cache_dir()
    return _READERS[name](fetch.fetch(name, cache), cache)

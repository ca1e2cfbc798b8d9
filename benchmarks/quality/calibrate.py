"""Fit the hybrid fusion on public data: the dense relevance floor and the lexical weight.

Opt-in, like ``run.py`` (same cache, same sets, needs the ``quality`` and ``dense`` extras)::

    python -m benchmarks.quality.calibrate [--collections 'memagentbench-fc/*_32k'] \\
        [--channels PATH] [--reuse]

1. Every selected collection is scored once by :func:`benchmarks.quality.scoring.run_dataset` with
   ``channels``: per query, every lexical candidate's text relevance and the cosines (the best 200
   documents and every relevant one), plus 30 *foreign* queries (taken from the other sets,
   so relevant to nothing) per collection. ``--reuse`` reads that file instead.
2. The floor: the highest cosine in 0.00, 0.05, ... whose false-drop rate (the share of
   relevant documents whose cosine falls below it) stays at or under 5%. Printed with, at
   each candidate floor, that rate and the share of foreign queries that still have a dense
   hit above it.
3. The stemmed channel's text factor (:func:`swarmmem.core.recall.lexical.text_factor`),
   recomputed from each query's recorded evidence (``bm25``, ``terms``, ``query_terms``,
   ``length``), by the same 5-fold cross-validation over collections, maximising the mean
   over sets of the mean of ``lexical`` (``w`` = 1) and ``hybrid`` (the current ``w``)
   nDCG@10, recency at its current weight. First the length scaling of the coverage
   (:func:`swarmmem.core.recall.lexical.length_scaled`: the free length and the exponent),
   then, over it, the coverage exponent (0.5: the square root; 1: plain) and the candidate
   count at which BM25 has half of the factor.
4. The weight ``w`` of ``score`` fusion and the scorer's recency weight ``r``, jointly, by
   5-fold cross-validation over collections. The ranking is the scorer's (on these sets every
   memory has the same kind, scope and confidence): ``0.38 * text + r * recency * lexical``,
   ``text`` from :func:`swarmmem.core.recall.fusion.score_fusion` (the function the pipeline
   runs) for a query of full lexical strength, where the dense side is the plain cosine
   (:func:`~swarmmem.core.recall.fusion.dense_relevance`; ``check_agreement`` asserts the
   array form here ranks the same), ties by id. The weak-query rule (``weakLexicalBelow``,
   ``strongLexicalFrom``, ``weights.lexicalWhenWeak``, ``weights.lexicalWhenWeakRelative``)
   was chosen on these sets and the code-memory sets together (benchmarks/README.md). Each
   fold picks ``w`` in 0.0, 0.05, ..., 1.0 and ``r`` in 0, 0.02, ..., 0.16 (capped there:
   recency stays a secondary feature) maximising the mean over sets of the mean nDCG@10 on
   the other folds, then is scored with them. Printed per fold; the final values are the
   fit on every fold.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import convert, fetch
from benchmarks.quality.conversions import write_collection
from benchmarks.quality.run import _selected
from benchmarks.quality.scoring import CHANNEL_DEPTH, hybrid_channels
from swarmmem._speedups.lexical import WEIGHTS as FACTOR_WEIGHTS
from swarmmem.core.config import RetrievalConfig
from swarmmem.core.recall.fusion import dense_relevance, score_fusion
from swarmmem.core.recall.hybrid import GATE_DEPTH, stands_out
from swarmmem.core.recall.lexical import (
    BM25_HALF_SHARE_AT,
    LENGTH_EXPONENT,
    LENGTH_FREE_CHARS,
    length_scaled,
    text_factor,
    weighted_coverage,
)
from swarmmem.core.recall.scoring import RECENCY_WEIGHT
from swarmmem.datasets import metrics_for

FOLDS = 5
MAX_FALSE_DROP = 0.05
FOREIGN_PER_COLLECTION = 30
FLOORS = [round(0.05 * i, 2) for i in range(0, 13)]
GATES = [0.05, 0.10, 0.15, 0.20, 0.25]
W_GRID = [round(0.05 * i, 2) for i in range(0, 21)]
RECENCY_GRID = [0.0, 0.02, 0.04, 0.06, 0.08, 0.10, 0.12, 0.14, 0.16]
EXPONENTS = [0.5, 1.0]
HALF_SHARES = [1.0, 2.5, 5.0, 10.0, 20.0, 40.0]
#: up to 2: at 2 a text twice the limit keeps a quarter of its coverage (half after the
#: square root), so a long, thorough memory stays reachable
LENGTH_EXPONENTS = [0.0, 0.5, 1.0, 1.5, 2.0]
LENGTH_FREES = [250, 500, 1000]


def collect(sets: list[str], patterns: list[str], cache: Path) -> list[dict[str, Any]]:
    """Channel entries of every selected collection, tagged with set and collection."""
    from swarmmem.registry import create

    embedder = create("embedder", "onnx")
    chosen = {
        name: [c for c in convert.collections(name, cache) if _selected(name, c.name, patterns)]
        for name in sets
    }
    texts = {name: [q["text"] for c in cols for q in c.queries] for name, cols in chosen.items()}
    rng = random.Random(7)
    entries: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="swarmmem-calibrate-") as tmp:
        for name, cols in chosen.items():
            others = [t for other, ts in texts.items() if other != name for t in ts]
            for n, collection in enumerate(cols, 1):
                if not collection.labelled:
                    continue
                paths = write_collection(collection, Path(tmp) / f"{name}-{n:03d}")
                foreign = rng.sample(others, min(FOREIGN_PER_COLLECTION, len(others)))
                channels = hybrid_channels(
                    paths,
                    embedder=embedder,
                    foreign_queries=foreign,
                    set=name,
                    collection=collection.name,
                )
                entries += channels
                print(f"  {name}/{collection.name}: {len(channels)} entries", file=sys.stderr)
    return entries


def ndcg(
    entry: dict[str, Any], w: float, floor: float | None, recency: float = RECENCY_WEIGHT
) -> float:
    """nDCG@10 of the order the scorer gives these candidates: the fused text relevance
    times the text weight plus the recency feature (every other factor is constant here),
    for a query of full lexical strength (the dense side the plain cosine over the floor)."""
    lexical = entry["lexical"]
    cosines = {k: c for k, c in entry["dense"].items() if floor is None or c >= floor}
    fused = score_fusion(lexical, dense_relevance(cosines, None, 1.0), w)
    written = {key: entry["written"][key] for key in fused}
    lo = min(written.values(), default=0.0)
    span = max(written.values(), default=0.0) - lo
    score = {
        key: FACTOR_WEIGHTS[0] * v
        + (recency * lexical.get(key, 0.0) * (written[key] - lo) / span if span else 0.0)
        for key, v in fused.items()
    }
    ranked = sorted(score, key=lambda key: (-score[key], key))[:10]
    return metrics_for(ranked, entry["relevant"], 10)["ndcg@10"]


class Prepared:
    """One query's candidates as arrays (keys in id order, so a stable sort ties by id)."""

    def __init__(self, entry: dict[str, Any], floor: float | None) -> None:
        self.set = entry["set"]
        dense = dict(sorted(entry["dense"].items(), key=lambda kv: -kv[1])[:CHANNEL_DEPTH])
        if floor is not None:
            dense = {key: cos for key, cos in dense.items() if cos >= floor}
        lexical = entry["lexical"]
        keys = sorted({*lexical, *dense})
        self.lex = np.array([lexical.get(k, 0.0) for k in keys])
        self.cos = np.array([max(0.0, dense.get(k, 0.0)) for k in keys])
        self.both = bool(lexical) and bool(dense)
        self.only_lexical = bool(lexical) and not dense
        written = np.array([entry["written"].get(k, 0.0) for k in keys])
        span = float(written.max() - written.min()) if keys else 0.0
        self.recency = (written - written.min()) / span if span > 0 else np.zeros(len(keys))
        relevant = entry["relevant"]
        self.gains = np.array([relevant.get(k, 0.0) for k in keys])
        ideal = sorted(relevant.values(), reverse=True)[:10]
        self.idcg = sum(g / np.log2(i + 2) for i, g in enumerate(ideal))

    def ndcg(self, w: float, recency: float) -> float:
        if not self.idcg or not len(self.gains):
            return 0.0
        weight = w if self.both else (1.0 if self.only_lexical else 0.0)
        fused = weight * self.lex + (1.0 - weight) * self.cos
        score = FACTOR_WEIGHTS[0] * fused + recency * self.lex * self.recency
        top = np.argsort(-score, kind="stable")[:10]
        return float((self.gains[top] / np.log2(np.arange(2, len(top) + 2))).sum() / self.idcg)


def per_set(prepared: list[Prepared], w: float, recency: float) -> dict[str, float]:
    by_set: dict[str, list[float]] = {}
    for item in prepared:
        by_set.setdefault(item.set, []).append(item.ndcg(w, recency))
    return {name: statistics.mean(v) for name, v in sorted(by_set.items())}


def fit(prepared: list[Prepared]) -> tuple[float, float]:
    """``(w, recency weight)`` maximising the mean over sets of the mean nDCG@10 (ties: the
    ``w`` nearest 0.5, then the smaller recency weight)."""
    grid = [(w, r) for w in W_GRID for r in RECENCY_GRID]
    return max(
        grid,
        key=lambda p: (
            statistics.mean(per_set(prepared, p[0], p[1]).values()),
            -abs(p[0] - 0.5),
            -p[1],
        ),
    )


def check_agreement(entries: list[dict[str, Any]], floor: float | None) -> None:
    """The array form ranks exactly like :func:`score_fusion` plus the recency term."""
    for entry in entries[:: max(1, len(entries) // 200)]:
        for w, r in ((0.5, 0.04), (0.85, 0.0), (1.0, 0.08)):
            top = {
                **entry,
                "dense": dict(
                    sorted(entry["dense"].items(), key=lambda kv: -kv[1])[:CHANNEL_DEPTH]
                ),
            }
            expected = ndcg(top, w, floor, r)
            got = Prepared(entry, floor).ndcg(w, r)
            assert abs(expected - got) < 1e-9, (entry["query"], w, r, expected, got)


def text_relevance(
    entry: dict[str, Any],
    exponent: float = 0.5,
    half_share: float = BM25_HALF_SHARE_AT,
    free: int = LENGTH_FREE_CHARS,
    length_exponent: float = LENGTH_EXPONENT,
) -> dict[str, float]:
    """The stemmed channel's text relevance per candidate, from the recorded evidence, with
    :func:`length_scaled` (when the entry recorded the texts' ``length``) and
    :func:`text_factor` (its square root of the coverage turned into ``coverage **
    exponent``)."""
    bm25 = entry["bm25"]
    held = {k: frozenset(v) for k, v in entry["terms"].items()}
    cover = weighted_coverage(held, entry["query_terms"])
    if "length" in entry:  # the pipeline's candidates: those BM25 scored
        lengths = {key: entry["length"][key] for key in bm25}
        cover = length_scaled(cover, lengths, free, length_exponent)
    best = max(bm25.values(), default=0.0) or 1.0
    return {
        key: text_factor(cover[key] ** (2 * exponent), bm25[key], best, len(bm25), half_share)
        for key in bm25
    }


def fit_text_factor(
    labelled: list[dict[str, Any]],
    floor: float | None,
    fold_of: Any,
    grid: list[dict[str, float]],
    fixed: dict[str, float],
) -> dict[str, float]:
    """Print the 5-fold cross-validation of some of :func:`text_relevance`'s parameters
    (each point of ``grid`` names them; ``fixed`` gives the others; see the module text)
    and the same entries at every grid point; return the point fitted on every fold."""
    shipped = RetrievalConfig()
    w = shipped.weight_lexical / (shipped.weight_lexical + shipped.weight_dense)
    scores: list[list[tuple[str, int, float]]] = []
    for point in grid:
        rows = []
        for entry in labelled:
            lexical = text_relevance(entry, **fixed, **point)
            alone = Prepared({**entry, "lexical": lexical, "dense": {}}, floor)
            fused = Prepared({**entry, "lexical": lexical}, floor)
            value = (alone.ndcg(1.0, RECENCY_WEIGHT) + fused.ndcg(w, RECENCY_WEIGHT)) / 2
            rows.append((entry["set"], fold_of[(entry["set"], entry["collection"])], value))
        scores.append(rows)

    def mean_over_sets(index: int, folds: set[int]) -> dict[str, float]:
        by_set: dict[str, list[float]] = {}
        for name, fold, value in scores[index]:
            if fold in folds:
                by_set.setdefault(name, []).append(value)
        return {name: statistics.mean(v) for name, v in sorted(by_set.items())}

    def best(folds: set[int]) -> int:  # ties: the earlier grid point
        return max(
            range(len(grid)),
            key=lambda i: (statistics.mean(mean_over_sets(i, folds).values()), -i),
        )

    names = list(grid[0])
    sets = sorted({e["set"] for e in labelled})
    print(
        f"## Text factor ({', '.join(names)}), 5-fold cross-validation "
        "(mean of lexical and hybrid nDCG@10)\n"
    )
    print(f"| fold | {' | '.join(names)} | " + " | ".join(f"{s} (test)" for s in sets) + " |")
    print("|---|" + "---|" * (len(names) + len(sets)))
    every = set(range(FOLDS))
    for fold in range(FOLDS):
        point = best(every - {fold})
        test = mean_over_sets(point, {fold})
        cells = " | ".join(f"{test[s]:.3f}" if s in test else "" for s in sets)
        print(f"| {fold} | {' | '.join(f'{grid[point][n]:g}' for n in names)} | {cells} |")
    chosen = grid[best(every)]
    print(f"\nfitted on every fold: {chosen}\n")
    print(f"| {' | '.join(names)} | " + " | ".join(sets) + " |")
    print("|" + "---|" * (len(names) + len(sets)))
    for i, point in enumerate(grid):
        cells = " | ".join(f"{v:.3f}" for v in mean_over_sets(i, every).values())
        print(f"| {' | '.join(f'{point[n]:g}' for n in names)} | {cells} |")
    print()
    return chosen


def print_gate_table(labelled: list[dict[str, Any]], foreign: list[dict[str, Any]]) -> None:
    """The dense gate (:func:`swarmmem.core.recall.hybrid.stands_out`) over the stores with
    at least ``GATE_DEPTH`` documents (below that it abstains): per gate, the labelled
    queries whose nearest documents pass it and the foreign queries that pass it at all."""
    big = [e for e in labelled if len(e["dense"]) >= GATE_DEPTH]
    strangers = [e for e in foreign if len(e.get("cosines", ())) >= GATE_DEPTH]
    if not big or not strangers:
        return

    def nearest(values: Any) -> list[float]:
        return sorted(values, reverse=True)[:GATE_DEPTH]

    print(
        f"## Dense gate ({len(big)} labelled and {len(strangers)} foreign queries in stores "
        f"of {GATE_DEPTH} or more)\n"
    )
    print("| gate | labelled queries passing | foreign queries passing |")
    print("|---|---|---|")
    for gate in GATES:
        kept = sum(stands_out(nearest(e["dense"].values()), gate) for e in big) / len(big)
        alarms = sum(stands_out(nearest(e["cosines"]), gate) for e in strangers)
        print(f"| {gate:.2f} | {kept:.1%} | {alarms / len(strangers):.1%} |")
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(convert.SETS))
    parser.add_argument("--collections", action="append", default=[], metavar="SET/GLOB")
    parser.add_argument("--channels", type=Path, default=None, help="default: <cache>/...")
    parser.add_argument("--reuse", action="store_true", help="read --channels, do not score")
    args = parser.parse_args(argv)
    cache = fetch.cache_dir()
    path = args.channels or cache / "calibration-channels.json"
    if args.reuse:
        entries = json.loads(path.read_text(encoding="utf-8"))
    else:
        sets = [s.strip() for s in args.sets.split(",") if s.strip()]
        entries = collect(sets, args.collections, cache)
        path.write_text(json.dumps(entries), encoding="utf-8")
    labelled = [e for e in entries if not e.get("foreign")]
    foreign = [e for e in entries if e.get("foreign")]

    relevant_cos = [e["dense"][doc] for e in labelled for doc in e["relevant"]]
    print(
        f"## Dense relevance floor ({len(relevant_cos)} relevant documents, "
        f"{len(foreign)} foreign queries)\n"
    )
    print("| floor | relevant dropped | foreign queries with a dense hit |")
    print("|---|---|---|")
    floor = None
    for value in FLOORS:
        dropped = sum(1 for c in relevant_cos if c < value) / len(relevant_cos)
        alarms = sum(1 for e in foreign if e["best_cosine"] >= value) / max(len(foreign), 1)
        print(f"| {value:.2f} | {dropped:.1%} | {alarms:.1%} |")
        if dropped <= MAX_FALSE_DROP:
            floor = value
    lexical_alarms = sum(1 for e in foreign if e["lexical"]) / max(len(foreign), 1)
    print(
        f"\nchosen floor: {floor} (false-drop rate <= {MAX_FALSE_DROP:.0%}); foreign "
        f"queries with any lexical candidate: {lexical_alarms:.1%}\n"
    )
    print_gate_table(labelled, foreign)

    collections = sorted({(e["set"], e["collection"]) for e in labelled})
    fold_of: dict[tuple[str, str], int] = {}
    for name in sorted({s for s, _ in collections}):
        mine = [c for c in collections if c[0] == name]
        for i, key in enumerate(mine):
            fold_of[key] = i % FOLDS
    if all("query_terms" in e for e in labelled):
        sample = labelled[:: max(1, len(labelled) // 200)]
        differ = sum(
            1
            for entry in sample
            if any(abs(text_relevance(entry)[k] - v) > 1e-9 for k, v in entry["lexical"].items())
        )
        if differ:  # the recorded relevance is the pipeline's text factor at record time
            print(
                f"note: {differ} of {len(sample)} sampled queries were recorded with other "
                "text-factor constants than the current ones\n"
            )
        # the length scaling at the current factor, then the factor over that scaling
        length = fit_text_factor(
            labelled,
            floor,
            fold_of,
            [{"free": f, "length_exponent": x} for f in LENGTH_FREES for x in LENGTH_EXPONENTS],
            {"exponent": 0.5, "half_share": BM25_HALF_SHARE_AT},
        )
        factor = fit_text_factor(
            labelled,
            floor,
            fold_of,
            [{"exponent": g, "half_share": h} for g in EXPONENTS for h in HALF_SHARES],
            length,
        )
        # the fusion weight is fitted over that text factor
        labelled = [{**e, "lexical": text_relevance(e, **factor, **length)} for e in labelled]
    print(f"## Fusion weight, {FOLDS}-fold cross-validation over {len(collections)} collections\n")
    sets = sorted({e["set"] for e in labelled})
    check_agreement(labelled, floor)
    prepared = {id(e): Prepared(e, floor) for e in labelled}
    print("| fold | w | recency | " + " | ".join(f"{s} nDCG@10 (test)" for s in sets) + " |")
    print("|---|---|---|" + "---|" * len(sets))
    for fold in range(FOLDS):
        train = [e for e in labelled if fold_of[(e["set"], e["collection"])] != fold]
        test = [e for e in labelled if fold_of[(e["set"], e["collection"])] == fold]
        if not test:
            continue
        w, recency = fit([prepared[id(e)] for e in train])
        scores = per_set([prepared[id(e)] for e in test], w, recency)
        cells = " | ".join(f"{scores[s]:.3f}" if s in scores else "" for s in sets)
        print(f"| {fold} | {w:.2f} | {recency:.2f} | {cells} |")
    everything = list(prepared.values())
    w, recency = fit(everything)
    print(f"\nfitted on every fold: w = {w:.2f}, recency weight = {recency:.2f}\n")
    print("| w | recency | " + " | ".join(sets) + " |")
    print("|---|---|" + "---|" * len(sets))
    for pair in ((0.0, recency), (0.5, recency), (1.0, recency), (w, 0.0), (w, recency)):
        scores = per_set(everything, pair[0], pair[1])
        cells = " | ".join(f"{scores[s]:.3f}" for s in sets)
        print(f"| {pair[0]:.2f} | {pair[1]:.2f} | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

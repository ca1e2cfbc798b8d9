"""Fit the calibrated fusion: a logistic model of "this memory answers the question" over
per-query-normalised lexical and dense features, cross-validated by set.

Opt-in (needs the ``eval`` extra for scikit-learn; nothing of scikit-learn ships at run time:
the fitted coefficients are constants of :mod:`swarmmem.core.recall.hybrid`)::

    python -m benchmarks.quality.fit_fusion [--public PATH] [--code PATH] [--record]

Input: the channels ``benchmarks.quality.scoring.run_dataset`` records per query (every lexical
candidate's text relevance, the best 200 cosines and every relevant one's):

* the public sets' file written by ``python -m benchmarks.quality.calibrate``
  (``<cache>/calibration-channels.json``);
* the code-memory sets' file, written here with ``--record`` (each set alone and among the
  distractors, as :mod:`benchmarks.quality.code_memory` scores them;
  ``<cache>/code-memory-channels.json``).

A query's candidates are its lexical candidates and its nearest :data:`PROFILE_DEPTH` hits;
their features are :meth:`CosineProfile.features`. The model is fitted pointwise with each
query weighing the same (its relevant and its other candidates half each) and scored by
ranking the candidates by its logit: MRR@10 and nDCG@10 per set, next to the lexical channel
alone, the dense channel alone and the linear fusion with the shipped weight. The folds leave
one set out at a time; the printed coefficients are then fitted on every set.

The calibrated evidence threshold (below it a dense-only hit is no candidate) is printed with
its false-drop rate (relevant memories found only by the dense channel whose probability falls
below it) and false-alarm rate (questions relevant to nothing in their store with a dense-only
candidate at or above it).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import code_memory, fetch
from swarmmem.core.recall.hybrid import FUSION_MODEL, PROFILE_DEPTH, CosineProfile

FEATURES = (
    "lexical",
    "lexical share",
    "cosine",
    "cosine z",
    "below best cosine",
    "lexical 1/(1+rank)",
    "dense 1/(1+rank)",
)
#: the hardest other candidates (by lexical relevance and cosine z) paired with each relevant
HARD_NEGATIVES = 30
THRESHOLDS = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5)


def record_code_channels(path: Path) -> None:
    """Run every code-memory set alone and among the distractors, keeping the channels."""
    from benchmarks.quality.scoring import hybrid_channels
    from swarmmem.registry import create

    folder = code_memory.data_dir()
    sets = {name: code_memory.load_set(folder, name) for name in code_memory.SETS}
    extra = code_memory.distractors(1500)
    cache = fetch.cache_dir()
    embedder = code_memory.CachedEmbedder(
        create("embedder", "onnx"), cache / "code-memory-embeddings.npz"
    )
    entries: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="swarmmem-fit-") as tmp:
        for name, data in sets.items():
            gold = [q for q in data["queries"] if q["gold"]]
            unrelated = [q["query"] for q in data["queries"] if not q["gold"]]
            others = [m for o in code_memory.SETS if o != name for m in sets[o]["memories"]]
            for setting, memories in (
                ("alone", data["memories"]),
                ("among", data["memories"] + others + extra),
            ):
                paths = code_memory.write_set(Path(tmp) / f"{name}-{setting}", memories, gold)
                entries += hybrid_channels(
                    paths,
                    embedder=embedder,
                    foreign_queries=unrelated,
                    set=f"code-{name}",
                    collection=setting,
                )
    embedder.save()
    path.write_text(json.dumps(entries), encoding="utf-8")


def candidates(entry: dict[str, Any]) -> tuple[list[str], np.ndarray]:
    """A labelled query's candidates and their feature rows."""
    lexical: dict[str, float] = entry["lexical"]
    nearest = sorted(entry["dense"].items(), key=lambda kv: -kv[1])[:PROFILE_DEPTH]
    profile = CosineProfile.of([c for _, c in nearest])
    assert profile is not None
    dense = dict(nearest)
    best = max(lexical.values(), default=0.0)
    lexical_rank = {k: i for i, k in enumerate(sorted(lexical, key=lambda k: (-lexical[k], k)))}
    dense_rank = {k: i for i, (k, _) in enumerate(nearest)}
    keys = sorted({*lexical, *dense})
    rows = [
        profile.features(
            lexical.get(k, 0.0), best, lexical_rank.get(k), dense.get(k), dense_rank.get(k)
        )
        for k in keys
    ]
    return keys, np.array(rows, dtype=float)


def foreign_rows(entry: dict[str, Any]) -> np.ndarray:
    """A foreign query's dense-only candidates (its nearest hits, no lexical relevance)."""
    profile = CosineProfile.of(entry["cosines"])
    if profile is None:
        return np.zeros((0, len(FEATURES)))
    rows = [profile.features(0.0, 0.0, None, c, i) for i, c in enumerate(entry["cosines"])]
    return np.array(rows, dtype=float)


def ranking_scores(scores: np.ndarray, keys: list[str], relevant: dict[str, float]) -> tuple:
    order = np.argsort(-scores, kind="stable")[:10]
    ranked = [keys[i] for i in order]
    mrr = next((1.0 / (i + 1) for i, k in enumerate(ranked) if relevant.get(k, 0) > 0), 0.0)
    gains = [relevant.get(k, 0.0) for k in ranked]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sorted(relevant.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return mrr, (dcg / idcg if idcg else 0.0)


def fit(prepared: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, float]:
    """Coefficients and intercept of the logistic model: the direction by pairwise logistic
    regression (each relevant candidate against the query's :data:`HARD_NEGATIVES` hardest
    others, every query weighing the same), then the scale and intercept by a pointwise
    logistic fit on that score (each query's relevant and other candidates half each), so
    the logit is a calibrated probability."""
    from sklearn.linear_model import LogisticRegression

    pairs, pair_weights, points, labels, weights = [], [], [], [], []
    for rows, y in prepared:
        positive = np.flatnonzero(y > 0)
        negative = np.flatnonzero(y == 0)
        if not len(positive) or not len(negative):
            continue
        hard = negative[np.argsort(-(rows[negative, 0] + rows[negative, 3] / 5))[:HARD_NEGATIVES]]
        diff = (rows[positive][:, None, :] - rows[hard][None, :, :]).reshape(-1, rows.shape[1])
        pairs.append(diff)
        pair_weights.append(np.full(len(diff), 1.0 / len(diff)))
        points.append(rows)
        labels.append(y)
        weights.append(np.where(y > 0, 0.5 / len(positive), 0.5 / len(negative)))
    x = np.vstack(pairs)
    w = np.concatenate(pair_weights)
    ranker = LogisticRegression(C=1.0, max_iter=3000, fit_intercept=False)
    ranker.fit(
        np.vstack([x, -x]), np.r_[np.ones(len(x)), np.zeros(len(x))], sample_weight=np.r_[w, w]
    )
    direction = ranker.coef_[0]
    score = (np.vstack(points) @ direction)[:, None]
    scale = LogisticRegression(C=1.0, max_iter=3000)
    scale.fit(score, np.concatenate(labels), sample_weight=np.concatenate(weights))
    return direction * scale.coef_[0][0], float(scale.intercept_[0])


FLOORS = (0.10, 0.15, 0.20, 0.25, 0.30)


def background_rule(labelled: list[dict[str, Any]], foreign: list[dict[str, Any]]) -> None:
    """Print the ``score`` fusion's candidate rule (a cosine at or above the floor and above
    the query's background, :attr:`CosineProfile.floor`) per set and store at each floor:
    false drops (relevant memories whose cosine the rule drops) and false alarms (questions
    relevant to nothing in their store that keep a dense candidate)."""
    print("\n## Dense candidates of `score` fusion: floor and background\n")
    print("false drops / false alarms per set and floor (the default floor is 0.15)\n")

    def group(e: dict[str, Any]) -> tuple[str, str]:  # code sets: alone / among apart
        return e["set"], e.get("collection", "") if e["set"].startswith("code-") else ""

    groups = sorted({group(e) for e in labelled})
    print("| set | " + " | ".join(f"{f:.2f}" for f in FLOORS) + " |")
    print("|---|" + "---|" * len(FLOORS))
    for name, collection in groups:
        mine = [e for e in labelled if group(e) == (name, collection)]
        strangers = [e for e in foreign if group(e) == (name, collection)]
        cells = []
        for floor in FLOORS:
            kept = dropped = 0
            for e in mine:
                nearest = sorted(e["dense"].values(), reverse=True)[:PROFILE_DEPTH]
                profile = CosineProfile.of(nearest)
                lowest = max(floor, (profile.floor if profile else None) or floor)
                for key in e["relevant"]:
                    cosine = e["dense"].get(key, -1.0)
                    dropped += cosine < lowest
                    kept += cosine >= lowest
            alarms = 0
            for e in strangers:
                profile = CosineProfile.of(e["cosines"])
                lowest = max(floor, (profile.floor if profile else None) or floor)
                alarms += any(c >= lowest for c in e["cosines"])
            drops = dropped / max(kept + dropped, 1)
            cells.append(f"{drops:.1%} / {alarms / max(len(strangers), 1):.0%}")
        label = f"{name}, {collection}" if collection else name
        print(f"| {label} | " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cache = fetch.cache_dir()
    parser.add_argument("--public", type=Path, default=cache / "calibration-channels.json")
    parser.add_argument("--code", type=Path, default=cache / "code-memory-channels.json")
    parser.add_argument("--record", action="store_true", help="record the code-memory channels")
    args = parser.parse_args(argv)
    if args.record or not args.code.exists():
        record_code_channels(args.code)
    entries = json.loads(args.code.read_text(encoding="utf-8"))
    if args.public.exists():
        entries += json.loads(args.public.read_text(encoding="utf-8"))
    else:
        print(f"note: no public channels at {args.public}; code-memory sets only\n")
    labelled = [e for e in entries if not e.get("foreign") and e.get("relevant")]
    foreign = [e for e in entries if e.get("foreign") and e.get("cosines")]
    prepared: dict[int, tuple[list[str], np.ndarray, np.ndarray]] = {}
    for e in labelled:
        keys, rows = candidates(e)
        labels = np.array([1.0 if e["relevant"].get(k, 0) > 0 else 0.0 for k in keys])
        prepared[id(e)] = (keys, rows, labels)
    sets = sorted({e["set"] for e in labelled})
    shipped = np.array(FUSION_MODEL[1:]), FUSION_MODEL[0]

    def table(coef: np.ndarray, intercept: float, chosen: list[dict[str, Any]]) -> dict:
        out: dict[str, list[tuple[float, float]]] = {}
        for e in chosen:
            keys, rows, _ = prepared[id(e)]
            scored = {
                "lexical": rows[:, 0] + 1e-9 * rows[:, 2],
                "dense": rows[:, 2] + 1e-9 * rows[:, 0],
                "linear 0.85": 0.85 * rows[:, 0] + 0.15 * np.maximum(rows[:, 2], 0),
                "model": rows @ coef + intercept,
            }
            for name, values in scored.items():
                out.setdefault(f"{e['set']}|{name}", []).append(
                    ranking_scores(values, keys, e["relevant"])
                )
        return {k: tuple(np.mean(v, axis=0)) for k, v in out.items()}

    print("## Leave-one-set-out folds (MRR@10 / nDCG@10 on the held-out set)\n")
    print("| held-out set | lexical | dense | linear 0.85 | model | coefficients |")
    print("|---|---|---|---|---|---|")
    for held in sets:
        train = [prepared[id(e)][1:] for e in labelled if e["set"] != held]
        coef, intercept = fit(train)
        result = table(coef, intercept, [e for e in labelled if e["set"] == held])
        cells = " | ".join(
            "{:.3f} / {:.3f}".format(*result[f"{held}|{name}"])
            for name in ("lexical", "dense", "linear 0.85", "model")
        )
        print(f"| {held} | {cells} | {np.round(coef, 2).tolist()} {intercept:.2f} |")
    coef, intercept = fit([v[1:] for v in prepared.values()])
    print(
        "\nfitted on every set: intercept {:.3f}, coefficients {}".format(
            intercept, ", ".join(f"{n} {c:.3f}" for n, c in zip(FEATURES, coef, strict=True))
        )
    )
    print(f"shipped (FUSION_MODEL): {FUSION_MODEL}\n")
    shipped_result = table(shipped[0], shipped[1], labelled)
    print("| set | lexical | dense | linear 0.85 | shipped model |")
    print("|---|---|---|---|---|")
    for name in sets:
        cells = " | ".join(
            "{:.3f} / {:.3f}".format(*shipped_result[f"{name}|{row}"])
            for row in ("lexical", "dense", "linear 0.85", "model")
        )
        print(f"| {name} | {cells} |")

    background_rule(labelled, foreign)
    print("\n## Dense evidence threshold (shipped model)\n")
    dense_only = []  # probability of each relevant memory the lexical channel did not find
    for e in labelled:
        keys, rows, labels = prepared[id(e)]
        logits = rows @ shipped[0] + shipped[1]
        for i, key in enumerate(keys):
            if labels[i] > 0 and rows[i, 0] == 0 and key in e["dense"]:
                dense_only.append(1.0 / (1.0 + math.exp(-logits[i])))
    alarms = []
    for e in foreign:
        rows = foreign_rows(e)
        logits = rows @ shipped[0] + shipped[1] if len(rows) else np.array([-99.0])
        alarms.append(1.0 / (1.0 + math.exp(-float(logits.max()))))
    print(
        f"{len(dense_only)} relevant memories only the dense channel finds; "
        f"{len(alarms)} foreign questions\n"
    )
    print("| threshold | false drops | false alarms |")
    print("|---|---|---|")
    for t in THRESHOLDS:
        drops = sum(p < t for p in dense_only) / max(len(dense_only), 1)
        fired = sum(p >= t for p in alarms) / max(len(alarms), 1)
        print(f"| {t:.2f} | {drops:.1%} | {fired:.1%} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

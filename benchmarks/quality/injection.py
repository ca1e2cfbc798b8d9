"""What reaches the agent: the prompt hook's injections on the code-memory dev sets.

Opt-in (not part of the pytest suite)::

    python -m benchmarks.quality.injection [--sets rich,attrs,jsonschema] [--settings alone,among]
        [--embeddings off,on] [--distractors 1500] [--json PATH] [--data DIR]

Each dev set (``../shared/data/code-memory``, see :mod:`benchmarks.quality.code_memory`) is
loaded into a real project (SQLite, the user's default configuration) through
``Memory.import_records``: alone (its 50 memories) and among the other sets' memories and
1,500 facts about other code, with embeddings off and on. Every question is then typed through
the real prompt hook, ``run_hook`` for ``claude-code UserPromptSubmit`` (a new session per
question, so nothing is held back as already injected), and what the host would receive is
read back: the memory ids in the injected block and its size in tokens.

Labels: a question with a gold memory is *word-sharing* when it shares a content stem (the
stemmed channel's query terms) with the gold memory's text, files or symbol, else a
*paraphrase*; an unrelated question is a *near miss* when it is about the code base's own
domain (:data:`NEAR_MISSES`), else *other topic*.

Per row: **hit** (share of the questions whose gold memory is injected) per label,
**precision** (the share of all memories injected, unrelated questions included, that are
their question's gold; 0 when nothing is injected), the unrelated questions injected anything
per label, tokens injected per prompt, the **embedder's top-1** on paraphrases (the share of
paraphrases whose nearest memory by cosine is the gold one: what injecting the embedder's best
answer alone would hit), and for manual recall (``Memory.recall``, 10 items) MRR@10 and the
items returned to unrelated questions.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import swarmmem
from benchmarks.quality import fetch
from benchmarks.quality.code_memory import (
    SETS,
    add_output_options,
    add_set_options,
    comma_list,
    data_folder,
    distractors,
    load_set,
    onnx_embedder,
    save_results,
)
from swarmmem.core.model.ids import estimate_tokens
from swarmmem.core.recall.bm25 import query_terms
from swarmmem.core.recall.stemming import stemmed_tokens
from swarmmem.hooks.hosts import HookInput
from swarmmem.hooks.runner import run_hook

#: unrelated questions about the code base's own domain (the rest are about other topics)
NEAR_MISSES: dict[str, frozenset[str]] = {
    "rich": frozenset({"rq51", "rq52", "rq53", "rq60"}),
    "attrs": frozenset({"aq51", "aq56"}),
    "jsonschema": frozenset({"jq52", "jq53", "jq56"}),
}
LABELS = ("word-sharing", "paraphrase", "other topic", "near miss")
_ITEM = re.compile(r"^- \[([^\]\s]+)\] kind=", re.M)


def content_stems(text: str) -> set[str]:
    """The stemmed content terms of ``text``, as the stemmed channel reads a question."""
    return {stem for term in query_terms(text) for stem in stemmed_tokens(term)}


def label(
    question: dict[str, Any], memories: dict[str, dict[str, Any]], near: Collection[str]
) -> str:
    """The question's label (:data:`LABELS`; ``near``: the ids of the near misses)."""
    gold = question["gold"]
    if gold is None:
        return "near miss" if question["id"] in near else "other topic"
    memory = memories[gold]
    said = " ".join([memory["text"], *(memory.get("evidence") or []), memory.get("symbol") or ""])
    shared = content_stems(question["query"]) & content_stems(said)
    return "word-sharing" if shared else "paraphrase"


def record_of(memory: dict[str, Any]) -> dict[str, Any]:
    """A dev-set memory as the reference record shape ``import_records`` takes."""
    metadata: dict[str, Any] = {"files": list(memory.get("evidence") or memory.get("files") or [])}
    if memory.get("symbol"):
        metadata["symbol"] = memory["symbol"]
    return {
        "kind": memory["kind"],
        "text": memory["text"],
        "metadata": metadata,
        "source": {"type": "manual", "ref": memory["id"]},
    }


def injected_ids(output: str) -> tuple[list[str], int]:
    """The memory ids in a Claude Code prompt hook's stdout, and its context's tokens."""
    if not output.strip():
        return [], 0
    context = json.loads(output).get("hookSpecificOutput", {}).get("additionalContext") or ""
    return _ITEM.findall(context), estimate_tokens(context) if context else 0


def evaluate(
    root: Path,
    codebase: str,
    memories: Sequence[dict[str, Any]],
    questions: Sequence[dict[str, Any]],
    *,
    embedder: Any,
    overrides: dict[str, Any] | None = None,
    near: Collection[str] = (),
) -> dict[str, Any]:
    """One row: the store of ``memories`` at ``root``, every question through the prompt hook
    and manual recall (``embedder`` ``None``: embeddings off; ``overrides``: configuration
    sections merged into the default one)."""
    config: dict[str, Any] = {"enabled": True, "embeddings": {"enabled": embedder is not None}}
    for key, value in (overrides or {}).items():
        config[key] = {**config.get(key, {}), **value} if isinstance(value, dict) else value
    adapters = {"embedder": embedder} if embedder is not None else {}
    by_id = {m["id"]: m for m in memories}
    with swarmmem.open(root, config, **adapters) as mem:
        result = mem.import_records(record_of(m) for m in memories)
        if result.refused:
            raise SystemExit(f"{codebase}: {len(result.refused)} memories refused")
        corpus_of = _corpus_ids(mem)
        manual = [_manual(mem, q, corpus_of) for q in questions]
    nearest = _nearest(embedder, memories, questions) if embedder is not None else {}
    rows = []
    for question, (ranked, returned) in zip(questions, manual, strict=True):
        started = time.perf_counter()
        hook = HookInput(
            "claude-code",
            "UserPromptSubmit",
            {"session_id": f"eval-{question['id']}", "prompt": question["query"]},
        )
        output = run_hook(root, hook, config=config, adapters=adapters)
        ids, tokens = injected_ids(output)
        injected = [corpus_of.get(i, i) for i in ids]
        rows.append(
            {
                "id": question["id"],
                "label": label(question, by_id, near or NEAR_MISSES.get(codebase, ())),
                "gold": question["gold"],
                "injected": injected,
                "tokens": tokens,
                "ms": (time.perf_counter() - started) * 1000.0,
                "manual": ranked,
                "manual_returned": returned,
                "nearest": nearest.get(question["id"]),
            }
        )
    return {"rows": rows, "table": summarise(rows, dense=embedder is not None)}


def _corpus_ids(mem: Any) -> dict[str, str]:
    """Each stored memory's dev-set id (kept as its source ref)."""
    out: dict[str, str] = {}
    while page := mem.list(limit=500, offset=len(out)):
        out.update((r.id, r.source.ref) for r in page)
    return out


def _manual(mem: Any, question: dict[str, Any], corpus_of: dict[str, str]) -> tuple[list[str], int]:
    bundle = mem.recall(question["query"], max_items=10)
    ranked = [corpus_of.get(i.record.id, i.record.id) for i in bundle.items]
    return ranked, len(bundle.items)


def _nearest(
    embedder: Any, memories: Sequence[dict[str, Any]], questions: Sequence[dict[str, Any]]
) -> dict[str, str]:
    """Each question's nearest memory by cosine (the embedder alone)."""
    matrix = np.asarray(embedder.embed_batch([m["text"] for m in memories]), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    out = {}
    for question in questions:
        vector = np.asarray(embedder.embed(question["query"]), dtype=np.float32)
        cosines = matrix @ (vector / np.linalg.norm(vector))
        out[question["id"]] = memories[int(np.argmax(cosines))]["id"]
    return out


def summarise(rows: Sequence[dict[str, Any]], *, dense: bool) -> dict[str, Any]:
    """The row's measures (see the module's docstring)."""
    by_label = {name: [r for r in rows if r["label"] == name] for name in LABELS}
    gold = by_label["word-sharing"] + by_label["paraphrase"]
    unrelated = by_label["other topic"] + by_label["near miss"]
    table: dict[str, Any] = {"questions": {name: len(by_label[name]) for name in LABELS}}
    for name in ("word-sharing", "paraphrase"):
        group = by_label[name]
        table[f"hit {name}"] = _share(r["gold"] in r["injected"] for r in group)
    injected = sum(len(r["injected"]) for r in rows)
    table["precision"] = (
        sum(r["injected"].count(r["gold"]) for r in gold) / injected if injected else 0.0
    )
    for name in ("other topic", "near miss"):
        table[f"injected {name}"] = _share(bool(r["injected"]) for r in by_label[name])
    table["items per prompt"] = statistics.fmean(len(r["injected"]) for r in rows)
    table["tokens per prompt"] = statistics.fmean(r["tokens"] for r in rows)
    table["p50 ms"] = statistics.median(r["ms"] for r in rows)
    if dense:
        table["embedder top-1 paraphrase"] = _share(
            r["nearest"] == r["gold"] for r in by_label["paraphrase"]
        )
    table["manual mrr@10"] = statistics.fmean(
        _reciprocal_rank(r["manual"], r["gold"]) for r in gold
    )
    table["manual items unrelated"] = statistics.fmean(r["manual_returned"] for r in unrelated)
    table["manual answered unrelated"] = _share(r["manual_returned"] > 0 for r in unrelated)
    return table


def _share(flags: Any) -> float:
    values = list(flags)
    return sum(1 for v in values if v) / len(values) if values else float("nan")


def _reciprocal_rank(ranked: Sequence[str], gold: str) -> float:
    return 1.0 / (ranked.index(gold) + 1) if gold in ranked[:10] else 0.0


COLUMNS = (
    ("hit word-sharing", "hit words", "{:.2f}"),
    ("hit paraphrase", "hit para.", "{:.2f}"),
    ("embedder top-1 paraphrase", "emb. top-1 para.", "{:.2f}"),
    ("precision", "precision", "{:.2f}"),
    ("injected other topic", "other topic injected", "{:.0%}"),
    ("injected near miss", "near miss injected", "{:.0%}"),
    ("items per prompt", "items/prompt", "{:.1f}"),
    ("tokens per prompt", "tokens/prompt", "{:.0f}"),
    ("manual mrr@10", "manual MRR@10", "{:.3f}"),
    ("manual answered unrelated", "manual unrelated answered", "{:.0%}"),
    ("p50 ms", "hook p50 ms", "{:.0f}"),
)


def markdown(results: dict[str, Any]) -> str:
    """One Markdown table: a row per set, setting and embeddings."""
    head = ["set", "store", "embeddings", *(title for _, title, _ in COLUMNS)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in results["rows"]:
        table = row["table"]
        cells = [row["set"], row["setting"], row["embeddings"]]
        for key, _, fmt in COLUMNS:
            value = table.get(key)
            cells.append("" if value is None else fmt.format(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_set_options(parser)
    parser.add_argument("--settings", default="alone,among")
    parser.add_argument("--embeddings", default="off,on")
    parser.add_argument("--distractors", type=int, default=1500)
    parser.add_argument(
        "--config",
        type=json.loads,
        default=None,
        help='configuration sections to merge, as JSON: \'{"recall": {"minScore": 0.1}}\'',
    )
    add_output_options(parser)
    args = parser.parse_args(argv)
    folder = data_folder(parser, args)
    names = comma_list(args.sets)
    settings = comma_list(args.settings)
    modes = comma_list(args.embeddings)
    cache = args.cache or fetch.cache_dir()
    sets = {name: load_set(folder, name) for name in SETS}
    extra = distractors(args.distractors) if "among" in settings else []
    embedder = None
    if "on" in modes:
        embedder = onnx_embedder(cache)
    results: dict[str, Any] = {
        "date": dt.date.today().isoformat(),
        "command": shlex.join(["python", "-m", "benchmarks.quality.injection", *(argv or [])]),
        "rows": [],
    }
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="swarmmem-injection-") as tmp:
        for name in names:
            data = sets[name]
            others = [m for other in SETS if other != name for m in sets[other]["memories"]]
            for setting in settings:
                memories = data["memories"] + (others + extra if setting == "among" else [])
                for mode in modes:
                    t0 = time.perf_counter()
                    root = Path(tmp) / f"{name}-{setting}-{mode}"
                    root.mkdir()
                    row = evaluate(
                        root,
                        name,
                        memories,
                        data["queries"],
                        embedder=embedder if mode == "on" else None,
                        overrides=args.config,
                    )
                    results["rows"].append(
                        {"set": name, "setting": setting, "embeddings": mode, **row}
                    )
                    if embedder is not None:
                        embedder.save()
                    print(
                        f"  {name} {setting} embeddings {mode}: {time.perf_counter() - t0:.0f} s",
                        file=sys.stderr,
                        flush=True,
                    )
    results["seconds"] = round(time.perf_counter() - started, 1)
    print(markdown(results))
    save_results(results, args.json or cache / "injection-results.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

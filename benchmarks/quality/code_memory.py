"""Recall quality on coding-agent memories: the code-memory dev sets, alone and among distractors.

Opt-in (not part of CI or the pytest suite); needs the ``eval`` extra (scikit-learn) and, for
the dense rows, the ``dense`` extra::

    python -m benchmarks.quality.code_memory [--data DIR] [--distractors 1500] \\
        [--profiles lexical,hybrid,hybrid+rerank] [--sets rich,attrs,jsonschema] [--json PATH]

The sets are JSON files (``rich.json``, ``attrs.json``, ``jsonschema.json``: memories with
their kind, evidence files and symbol; 50 questions with one gold memory each and 10 unrelated
questions) in ``--data`` (default ``../shared/data/code-memory`` beside the repository, or
``SWARMMEM_CODE_MEMORY_DATA``). They are development data: never copied into the repository.

Each set is scored twice, by :func:`benchmarks.quality.scoring.run_dataset` (the library's own
recall pipeline, the floors in the same run):

* ``alone``: the store holds the set's 50 memories;
* ``among``: the store also holds the other sets' memories and ``--distractors`` facts about
  other code, generated reproducibly from the first sentence of the docstrings of the
  standard library's functions and classes (:func:`distractors`), each citing its file and
  symbol like a coding agent's memory would.

Per row: MRR@10, nDCG@10, top-1, and for the unrelated questions the share answered with any
item and the items per answer (the no-filler check; profiles at the default ``minScore``).
Embeddings are cached by text in ``<cache>/code-memory-embeddings.npz`` so a rerun embeds only
new texts.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import functools
import json
import os
import random
import re
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.quality import fetch, run
from benchmarks.quality.scoring import run_dataset
from benchmarks.stdlib_docs import stdlib_docstrings

SETS = ("rich", "attrs", "jsonschema")
ROWS = ("bm25-porter", "dense-only", "dense-floor", "lexical", "hybrid", "hybrid+rerank")
#: stdlib folders whose docstrings read like nothing a user stores (tests, GUI toolkits,
#: bundled third-party code, the 2to3 grammar)
_SKIPPED_DIRS = {"test", "tests", "idlelib", "tkinter", "turtledemo", "lib2to3", "ensurepip"}
_SKIPPED_DIRS |= {"site-packages", "dist-packages", "pydoc_data", "__pycache__", "config-3"}
_SENTENCE = re.compile(r"^(.+?[.!?])(\s|$)", re.S)


def data_dir() -> Path:
    """Where the dev sets are: ``SWARMMEM_CODE_MEMORY_DATA`` or ``../shared/data/code-memory``."""
    configured = os.environ.get("SWARMMEM_CODE_MEMORY_DATA")
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[3] / "shared" / "data" / "code-memory"


def add_set_options(parser: argparse.ArgumentParser) -> None:
    """``--data`` and ``--sets``: the dev sets' folder and which sets to run."""
    parser.add_argument("--data", type=Path, default=None, help="the dev sets' folder")
    parser.add_argument("--sets", default=",".join(SETS))


def add_output_options(parser: argparse.ArgumentParser) -> None:
    """``--json`` (where the results go) and ``--cache`` (the embeddings' cache folder)."""
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--cache", type=Path, default=None, help="default: fetch.cache_dir()")


def data_folder(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Path:
    """The dev sets' folder of ``args`` (``--data``, else :func:`data_dir`); a usage error
    through ``parser`` when it is not there."""
    folder: Path = args.data or data_dir()
    if not folder.is_dir():
        parser.error(f"no code-memory data at {folder} (set --data or SWARMMEM_CODE_MEMORY_DATA)")
    return folder


def comma_list(value: str) -> list[str]:
    """The items of a comma-separated option, stripped, empty ones left out."""
    return [s.strip() for s in value.split(",") if s.strip()]


def onnx_embedder(cache: Path) -> CachedEmbedder:
    """The ONNX embedder, its vectors cached by text in ``cache``."""
    from swarmmem.registry import create

    return CachedEmbedder(create("embedder", "onnx"), cache / "code-memory-embeddings.npz")


def load_set(folder: Path, name: str) -> dict[str, Any]:
    """One dev set as its JSON says (memories, queries)."""
    with (folder / f"{name}.json").open(encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


def _first_sentence(doc: str) -> str | None:
    text = " ".join(doc.split())
    match = _SENTENCE.match(text)
    sentence = match.group(1) if match else None
    if sentence is None or not 40 <= len(sentence) <= 300:
        return None
    return sentence


@functools.cache
def _docstring_facts() -> tuple[dict[str, str], ...]:
    """Every public stdlib function and class with a usable first docstring sentence, in
    sorted file order."""
    found: list[dict[str, str]] = []
    seen: set[str] = set()
    for relative, node, doc in stdlib_docstrings(
        lambda relative: any(p in _SKIPPED_DIRS or p.startswith("plat-") for p in relative.parts),
        (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef),
    ):
        name = getattr(node, "name", "")
        if name.startswith("_"):
            continue
        sentence = _first_sentence(doc)
        if sentence is None or sentence in seen:
            continue
        seen.add(sentence)
        found.append({"file": relative.as_posix(), "symbol": name, "sentence": sentence})
    return tuple(found)


def distractors(count: int, seed: int = 26) -> list[dict[str, Any]]:
    """``count`` facts about other code: for each a stdlib function or class, the first
    sentence of its docstring as a memory that cites the module's file and the symbol.

    Reproducible for a Python version: the candidates are collected in sorted file order and
    ``count`` of them drawn with ``random.Random(seed)``."""
    kinds = ("project_fact", "code_pattern", "repo_convention", "failure_pattern")
    found = _docstring_facts()
    if len(found) < count:
        raise SystemExit(f"only {len(found)} docstring sentences found; asked for {count}")
    chosen = random.Random(seed).sample(found, count)
    return [
        {
            "id": f"d{i:05d}",
            "kind": kinds[i % len(kinds)],
            "text": f"{row['symbol']} in {row['file']}: {row['sentence']}",
            "files": [row["file"]],
            "symbol": row["symbol"],
        }
        for i, row in enumerate(chosen)
    ]


class CachedEmbedder:
    """An embedder that remembers every text's vector (documents and queries share it), so
    the runs of one invocation, and later invocations, embed each text once."""

    def __init__(self, inner: Any, path: Path) -> None:
        self.inner = inner
        self.path = path
        self.vectors: dict[str, np.ndarray] = {}
        self.dirty = False
        if path.exists():
            with np.load(path, allow_pickle=False) as saved:
                if str(saved["model"]) == inner.model_version:
                    for text, vector in zip(saved["texts"], saved["vectors"], strict=True):
                        self.vectors[str(text)] = vector

    @property
    def model_version(self) -> str:
        return str(self.inner.model_version)

    @property
    def dimension(self) -> int:
        return int(self.inner.dimension)

    @property
    def available(self) -> bool:
        return bool(self.inner.available)

    def embed(self, text: str) -> np.ndarray:
        return self.embed_batch([text])[0]

    def embed_batch(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        for start in range(0, len(missing), 64):
            chunk = missing[start : start + 64]
            for text, vector in zip(chunk, self.inner.embed_batch(chunk), strict=True):
                self.vectors[text] = np.asarray(vector, dtype=np.float32)
                self.dirty = True
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self.vectors[t] for t in texts])

    def save(self) -> None:
        if not self.dirty:
            return
        texts = list(self.vectors)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(
            self.path,
            model=np.array(self.model_version),
            texts=np.array(texts),
            vectors=np.stack([self.vectors[t] for t in texts]),
        )
        self.dirty = False


def write_set(folder: Path, memories: list[dict[str, Any]], queries: list[dict[str, Any]]) -> tuple:
    folder.mkdir(parents=True, exist_ok=True)
    corpus, questions, qrels = (
        folder / "corpus.jsonl",
        folder / "queries.jsonl",
        folder / "qrels.tsv",
    )
    with corpus.open("w", encoding="utf-8") as handle:
        for m in memories:
            row = {"id": m["id"], "text": m["text"], "kind": m.get("kind")}
            row |= {"files": m.get("evidence") or m.get("files") or [], "symbol": m.get("symbol")}
            handle.write(json.dumps(row) + "\n")
    with questions.open("w", encoding="utf-8") as handle:
        for q in queries:
            handle.write(json.dumps({"id": q["id"], "text": q["query"]}) + "\n")
    with qrels.open("w", encoding="utf-8") as handle:
        handle.write("query-id\tcorpus-id\tscore\n")
        for q in queries:
            handle.write(f"{q['id']}\t{q['gold']}\t1\n")
    return corpus, questions, qrels


def summarise(report: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per row: MRR@10, nDCG@10, top-1 (share of questions with the gold memory first) and,
    for the unrelated questions, the share answered and the items per answered question."""
    table: dict[str, dict[str, float]] = {}
    foreign = report.get("foreign", {})
    for name, rows in report["per_query"].items():
        row = {
            "mrr@10": statistics.fmean(r["mrr"] for r in rows),
            "ndcg@10": statistics.fmean(r["ndcg@10"] for r in rows),
            "top1": sum(1 for r in rows if r["mrr"] == 1.0) / len(rows),
            "p50_ms": statistics.median(r["latency_ms"] for r in rows),
        }
        tally = foreign.get(name)
        if tally:
            row["unrelated_answered"] = tally["answered"] / tally["queries"]
            row["items_per_answer"] = (
                tally["items"] / tally["answered"] if tally["answered"] else 0.0
            )
        table[name] = row
    return table


def markdown(title: str, table: dict[str, dict[str, float]]) -> str:
    """One Markdown table: a row per floor/profile, in :data:`ROWS` order."""
    rows = []
    for name in run.in_row_order(table, ROWS):
        row = table[name]
        answered = row.get("unrelated_answered")
        per = row.get("items_per_answer")
        rows.append(
            [
                name,
                f"{row['mrr@10']:.3f}",
                f"{row['ndcg@10']:.3f}",
                f"{row['top1']:.2f}",
                "" if answered is None else f"{answered:.0%}",
                "" if per is None else f"{per:.1f}",
                f"{row['p50_ms']:.1f}",
            ]
        )
    columns = ("row", "MRR@10", "nDCG@10", "top-1", "unrelated answered", "items per answer")
    return run.markdown_table(f"#### {title}", (*columns, "p50 ms"), rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_set_options(parser)
    parser.add_argument("--profiles", default="lexical,hybrid,hybrid+rerank")
    parser.add_argument("--distractors", type=int, default=1500)
    run.add_retrieval_options(parser)
    add_output_options(parser)
    args = parser.parse_args(argv)
    folder = data_folder(parser, args)
    names = comma_list(args.sets)
    profiles = tuple(comma_list(args.profiles))
    cache = args.cache or fetch.cache_dir()
    sets = {name: load_set(folder, name) for name in SETS}
    extra = distractors(args.distractors)
    embedder = None
    if any(p != "lexical" for p in profiles):
        embedder = onnx_embedder(cache)
    started = time.perf_counter()
    results: dict[str, Any] = {
        "date": dt.date.today().isoformat(),
        "command": shlex.join(["python", "-m", "benchmarks.quality.code_memory", *(argv or [])]),
        "python": sys.version.split()[0],
        "distractors": len(extra),
        "profiles": list(profiles),
        "fusion": args.fusion or "default",
        "retrieval": args.retrieval or {},
        "sets": {},
    }
    with tempfile.TemporaryDirectory(prefix="swarmmem-code-memory-") as tmp:
        for name in names:
            data = sets[name]
            gold = [q for q in data["queries"] if q["gold"]]
            unrelated = [q["query"] for q in data["queries"] if not q["gold"]]
            others = [m for other in SETS if other != name for m in sets[other]["memories"]]
            for setting, memories in (
                ("alone", data["memories"]),
                ("among", data["memories"] + others + extra),
            ):
                t0 = time.perf_counter()
                paths = write_set(Path(tmp) / f"{name}-{setting}", memories, gold)
                report = run_dataset(
                    *paths,
                    profiles=profiles,
                    k=10,
                    embedder=embedder,
                    foreign_queries=unrelated,
                    retrieval=run.retrieval_overrides(args),
                )
                table = summarise(report)
                results["sets"].setdefault(name, {})[setting] = {
                    "documents": report["documents"],
                    "table": table,
                    "per_query": report["per_query"],
                }
                title = f"{name} ({data['version']}), {setting}: {report['documents']} memories"
                print(markdown(title, table) + "\n", flush=True)
                print(f"  {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
                if embedder is not None:
                    embedder.save()
    results["seconds"] = round(time.perf_counter() - started, 1)
    save_results(results, args.json or cache / "code-memory-results.json")
    return 0


def save_results(results: dict[str, Any], out: Path) -> None:
    """Write ``results`` as JSON to ``out`` and say so on stderr (with its ``seconds``)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out} ({results['seconds']:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())

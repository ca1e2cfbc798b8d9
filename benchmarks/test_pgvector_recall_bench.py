"""HNSW Recall@10 of the pgvector index against the exact scan, per ``hnsw.ef_search``.

The PostgreSQL server comes from ``tests/pg_support.py`` (``SWARMMEM_PG_DSN`` or a throw-away
pgserver cluster with pgvector); the benchmarks skip without one.

Data (384-d unit vectors), four kinds:

- ``clustered``: ``n / 100`` random centres, each point a centre plus Gaussian noise (cosine to
  its centre about 0.6, like topic clusters of sentence embeddings);
- ``diffuse``: the same with about 3.7 times the noise variance (cosine to the centre about
  0.37, so two points of one cluster are barely closer than two random points);
- ``uniform``: uniformly random directions, the worst case for any graph index (no
  structure, all distances alike);
- ``text``: real sentence embeddings from the project's own embedder (the bundled MiniLM,
  ``dense`` extra) of docstring and comment sentences (5 to 40 words, deduplicated) found in
  the ``.py`` files of the running interpreter's standard library and site-packages, in a
  fixed shuffled order; skipped when the embedder is unavailable. Embedding 100k sentences
  takes minutes, so the vectors are cached as ``.npy`` in ``$SWARMMEM_BENCH_CACHE`` (default
  ``$XDG_CACHE_HOME/swarmmem-bench``, else ``~/.cache/swarmmem-bench``), keyed by model
  version, size and a fingerprint of the source files and harvest rules, with the sentences
  beside them (``.txt``).

With the configured defaults (build options and ``ef_search``) Recall@10 >= 0.98 is held
where the defaults reach it (``HELD``): ``clustered`` and ``text`` at every size, ``diffuse`` up
to 10k vectors. ``diffuse`` at 100k and ``uniform`` are measured and reported
(benchmarks/README.md).

Queries are 200 fresh points from the same distribution (for ``text``, 200 sentences held out
of the indexed set). The truth is the exact top 10 by cosine, computed with numpy (checked
against the index's exact scan, up to ties at the tenth place).

Each size is loaded once with ``COPY`` and its HNSW index built after the load by
:meth:`PgVectorIndex.rebuild_ann_index` with the configured ``postgres.hnswM`` /
``postgres.hnswEfConstruction``, or with each ``m,ef_construction`` pair of
``SWARMMEM_PGVEC_BUILD`` (``;``-separated, e.g. ``16,64;32,200``). For every ``ef_search``
the test runs :meth:`PgVectorIndex.search` (k = 10; the index asks for k + 8 rows, so the
effective list size is ``max(ef_search, 18)``) and reports the mean Recall@10 and the median
query time; the ``benchmark`` timing is the HNSW search at the configured default.

Sizes via ``SWARMMEM_PGVEC_SIZES`` (default ``2000``; measured with ``10000,100000``), kinds
via ``SWARMMEM_PGVEC_KINDS`` (default ``clustered,diffuse,uniform``; ``text`` on request).
"""

from __future__ import annotations

import ast
import hashlib
import io
import os
import random
import re
import statistics
import sys
import sysconfig
import time
import tokenize
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pg_support import require_vector, schema_for

from swarmmem.core.config import PostgresConfig

SIZES = [int(s) for s in os.environ.get("SWARMMEM_PGVEC_SIZES", "2000").split(",") if s]
DIM = 384
K = 10
N_QUERIES = 200
EF_VALUES = [10, 20, 40, 64, 100, 200, 400, 1000]
DEFAULT_EF = PostgresConfig().hnsw_ef_search


KINDS = os.environ.get("SWARMMEM_PGVEC_KINDS", "clustered,diffuse,uniform").split(",")
DEFAULT_BUILD = (PostgresConfig().hnsw_m, PostgresConfig().hnsw_ef_construction)
BUILDS = [
    (int(m), int(efc))
    for m, efc in (
        part.split(",")
        for part in os.environ.get("SWARMMEM_PGVEC_BUILD", "").split(";")
        if part.strip()
    )
] or [DEFAULT_BUILD]
NOISE = {"clustered": 1.3, "diffuse": 2.5}
HELD = {"clustered": 10**9, "diffuse": 10_000, "text": 10**9}
"""Kind -> the largest size held to Recall@10 >= 0.98 with the configured defaults."""


def sample(kind: str, n: int, rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    """``n`` unit vectors: around randomly chosen ``centres`` (cosine to the centre ~0.6), or
    uniformly random."""
    noise = rng.standard_normal((n, DIM)).astype(np.float32)
    if kind in NOISE:
        picks = rng.integers(0, len(centres), n)
        noise = centres[picks] + NOISE[kind] * noise / np.sqrt(DIM)
    return (noise / np.linalg.norm(noise, axis=1, keepdims=True)).astype(np.float32)


# --------------------------------------------------------------------------- text data

HARVEST_RULES = "docstrings+comments;5-40 words;v3"
"""Changes whenever the harvest below changes, so cached vectors of other rules are not used."""
TEXT_SEED = 20261201
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_PLAIN_WORD = re.compile(r"[(\"'`]?[A-Za-z][A-Za-z'-]*[.,;:!?)\"'`]*$")
_HARVESTED: dict[str, list[str]] = {}
"""Sentences per source fingerprint, so each size of one run harvests once."""


def _source_files() -> list[Path]:
    """The interpreter's standard library and site-packages ``.py`` files, in a fixed order."""
    paths = sysconfig.get_paths()
    roots = sorted({paths["stdlib"], paths["purelib"], paths["platlib"]})
    return sorted({file for root in roots for file in Path(root).rglob("*.py") if file.is_file()})


def _string_value(literal: str) -> str | None:
    """The text of a string literal; None for bytes and f-strings."""
    try:
        with warnings.catch_warnings():  # invalid escapes: the same text whatever the filters
            warnings.simplefilter("ignore")
            value = ast.literal_eval(literal)
    except (SyntaxError, ValueError):
        return None
    return value if isinstance(value, str) else None


def _prose(source: str) -> Iterator[str]:
    """The triple-quoted strings and the comments of a file; consecutive lines holding only a
    comment are one text."""
    block: list[str] = []
    last_line = -2
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                text = token.string.lstrip("#").strip()
                if not token.line.lstrip().startswith("#"):  # after code: on its own
                    yield text
                    continue
                if token.start[0] != last_line + 1 and block:
                    yield " ".join(block)
                    block = []
                block.append(text)
                last_line = token.start[0]
            elif token.type == tokenize.STRING and token.string.endswith(('"""', "'''")):
                value = _string_value(token.string)
                if value:
                    yield value
    except (SyntaxError, ValueError, tokenize.TokenError):
        pass
    if block:
        yield " ".join(block)


def _sentences(text: str) -> Iterator[str]:
    """Prose sentences of 5 to 40 words (capitalised, ending in ``.``/``!``/``?``, mostly plain
    words); paragraphs with doctest or shell lines are left out."""
    for paragraph in re.split(r"\n\s*\n", text):
        lines = [line.strip() for line in paragraph.splitlines()]
        if any(line.startswith((">>>", "...", "$ ")) for line in lines):
            continue
        for sentence in _SENTENCE_END.split(" ".join(lines)):
            words = sentence.split()
            if not 5 <= len(words) <= 40 or not words[0][0].isupper() or words[-1][-1] not in ".!?":
                continue
            if sum(bool(_PLAIN_WORD.match(w)) for w in words) >= 0.8 * len(words):
                yield " ".join(words)


def harvest_sentences(files: Iterable[Path]) -> list[str]:
    """Distinct sentences (case-insensitive) of ``files``, sorted, then shuffled with a fixed
    seed: the order depends only on the text found."""
    found: dict[str, str] = {}
    for file in files:
        try:
            source = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for text in _prose(source):
            for sentence in _sentences(text):
                found.setdefault(sentence.lower(), sentence)
    sentences = [found[key] for key in sorted(found)]
    random.Random(TEXT_SEED).shuffle(sentences)
    return sentences


def _cache_dir() -> Path:
    if os.environ.get("SWARMMEM_BENCH_CACHE"):
        return Path(os.environ["SWARMMEM_BENCH_CACHE"])
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "swarmmem-bench"


def text_vectors(n: int) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """``(data (n, 384), queries (200, 384), info)``: embedded sentences, the queries held out.

    Skips when the embedder is unavailable or the interpreter holds too few sentences.
    """
    from swarmmem.adapters.models.onnx_embedder import OnnxMiniLmEmbedder

    embedder = OnnxMiniLmEmbedder(intra_op_threads=2)
    reason = embedder.unavailable_reason
    if reason is not None:
        pytest.skip(f"text data needs the MiniLM embedder (dense extra): {reason}")
    files = _source_files()
    fingerprint = hashlib.sha256(HARVEST_RULES.encode())
    for file in files:
        fingerprint.update(f"{file}\0{file.stat().st_size}\n".encode())
    model = re.sub(r"[^A-Za-z0-9-]+", "_", embedder.model_version)
    stem = _cache_dir() / f"text-{model}-{n}-{fingerprint.hexdigest()[:16]}"
    cached = stem.with_suffix(".npy")
    info: dict[str, Any] = {"cache": str(cached), "embed_s": None}
    if cached.exists():
        vectors = np.load(cached)
        print(f"\ntext: {len(vectors)} vectors from the cache {cached}", file=sys.stderr)
    else:
        key = fingerprint.hexdigest()
        if key not in _HARVESTED:
            started = time.perf_counter()
            _HARVESTED[key] = harvest_sentences(files)
            print(
                f"\ntext: {len(_HARVESTED[key])} sentences from {len(files)} files in "
                f"{time.perf_counter() - started:.0f} s",
                file=sys.stderr,
            )
        sentences = _HARVESTED[key]
        if len(sentences) < n + N_QUERIES:
            pytest.skip(f"text data: {len(sentences)} sentences found, {n + N_QUERIES} needed")
        chosen = sentences[: n + N_QUERIES]
        print(
            f"\ntext: embedding {len(chosen)} sentences with {embedder.model_version} (cached "
            f"for later runs in {cached})",
            file=sys.stderr,
        )
        started = time.perf_counter()
        parts = []
        for at in range(0, len(chosen), 5000):
            parts.append(embedder.embed_batch(chosen[at : at + 5000]))
            print(f"  embedded {at + len(parts[-1])}/{len(chosen)}", file=sys.stderr)
        vectors = np.concatenate(parts).astype(np.float32)
        info["embed_s"] = time.perf_counter() - started
        cached.parent.mkdir(parents=True, exist_ok=True)
        stem.with_suffix(".txt").write_text("\n".join(chosen) + "\n", encoding="utf-8")
        np.save(cached.with_suffix(".tmp.npy"), vectors)
        os.replace(cached.with_suffix(".tmp.npy"), cached)
        print(f"text: embedded in {info['embed_s']:.0f} s, saved {cached}", file=sys.stderr)
    return vectors[N_QUERIES:], vectors[:N_QUERIES], info


@pytest.fixture(
    scope="module",
    params=[(n, kind, build) for n in SIZES for kind in KINDS for build in BUILDS],
    ids=[f"{n}-{kind}-m{m}-efc{efc}" for n in SIZES for kind in KINDS for m, efc in BUILDS],
)
def loaded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """An index of ``n`` vectors of one kind with its HNSW index built after the load."""
    import psycopg
    from psycopg import sql

    from swarmmem.adapters.vectors.pgvector import PgVectorIndex

    dsn = require_vector()
    n, kind, (m, efc) = request.param
    text_info: dict[str, Any] = {}
    if kind == "text":
        data, queries, text_info = text_vectors(n)
    else:
        rng = np.random.default_rng(20261201 + n)
        centres = rng.standard_normal((max(1, n // 100), DIM)).astype(np.float32)
        centres /= np.linalg.norm(centres, axis=1, keepdims=True)
        data = sample(kind, n, rng, centres)
        queries = sample(kind, N_QUERIES, rng, centres)
    schema = schema_for(tmp_path_factory.mktemp(f"pgvec{n}{kind}m{m}e{efc}"))
    index = PgVectorIndex(dsn, DIM, schema=schema, exact_below=0, m=m, ef_construction=efc)
    started = time.perf_counter()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("SET search_path TO {}, public").format(sql.Identifier(schema)))
        conn.execute("DROP INDEX IF EXISTS idx_memory_items_vec_hnsw")
        with (
            conn.cursor() as cur,
            cur.copy("COPY memory_items_vec (id, embedding) FROM STDIN") as cp,
        ):
            for i, row in enumerate(data):
                cp.write_row((f"v{i:07d}", "[" + ",".join(map(repr, row.tolist())) + "]"))
        loaded_at = time.perf_counter()
        assert index.rebuild_ann_index()["rebuilt"]  # the index's own build (memory raised)
        conn.execute("ANALYZE memory_items_vec")
    built_at = time.perf_counter()
    similarity = queries @ data.T
    truth = np.argsort(-similarity, axis=1)[:, :K]
    try:
        yield {
            "n": n,
            "kind": kind,
            "build": (m, efc),
            "index": index,
            "queries": queries,
            "truth": [{f"v{j:07d}" for j in row} for row in truth],
            "similarity": similarity,
            "text": text_info,
            "load_s": loaded_at - started,
            "build_s": built_at - loaded_at,
        }
    finally:
        index.close()


def _recall(place: dict[str, Any], ef: int) -> tuple[float, float]:
    """Mean Recall@10 and median query time (ms) of the HNSW search with ``ef_search``."""
    index = place["index"]
    index.ef_search = ef
    hits, times = [], []
    for query, truth in zip(place["queries"], place["truth"], strict=True):
        started = time.perf_counter()
        found = index.search(query, K)
        times.append(time.perf_counter() - started)
        hits.append(len(truth & {key for key, _ in found}) / K)
    return float(np.mean(hits)), statistics.median(times) * 1000


@pytest.mark.benchmark(group="pgvector: HNSW search k=10")
def test_hnsw_recall_at_10(benchmark: Any, loaded: dict[str, Any]) -> None:
    """Recall@10 per ef_search; the configured defaults keep Recall@10 >= 0.98 where
    ``HELD`` says."""
    index = loaded["index"]
    index.exact_below = loaded["n"] + 1  # the exact scan: it must agree with numpy
    exact_ms = []
    for i, (query, truth) in enumerate(
        zip(loaded["queries"][:40], loaded["truth"][:40], strict=True)
    ):
        started = time.perf_counter()
        found = {key for key, _ in index.search(query, K)}
        exact_ms.append((time.perf_counter() - started) * 1000)
        if found != truth:  # only a tie at the tenth place may differ (real text has near-ties)
            row = loaded["similarity"][i]
            tenth = min(row[int(key[1:])] for key in truth)
            assert len(found) == K and all(row[int(key[1:])] >= tenth - 1e-5 for key in found)
    index.exact_below = 0
    table = {ef: _recall(loaded, ef) for ef in EF_VALUES}
    lines = [
        f"\npgvector n={loaded['n']} {loaded['kind']} m={loaded['build'][0]} "
        f"ef_construction={loaded['build'][1]}: COPY {loaded['load_s']:.1f} s, HNSW build "
        f"{loaded['build_s']:.1f} s, exact scan median {statistics.median(exact_ms):.1f} ms, "
        f"load average {os.getloadavg()[0]:.1f}"
    ]
    if loaded["text"]:
        embed_s = loaded["text"]["embed_s"]
        lines.append(
            f"  text vectors {loaded['text']['cache']}: "
            + ("from the cache" if embed_s is None else f"embedded in {embed_s:.0f} s")
        )
    lines += [
        f"  ef_search {ef:4d}: Recall@10 {recall:.4f}, median {ms:.2f} ms"
        for ef, (recall, ms) in table.items()
    ]
    print("\n".join(lines))
    benchmark.extra_info.update(
        {f"recall_ef{ef}": recall for ef, (recall, _) in table.items()}
        | {"exact_ms": statistics.median(exact_ms), "build_s": loaded["build_s"]}
    )
    index.ef_search = DEFAULT_EF
    queries = iter(loaded["queries"].tolist() * 1000)
    benchmark(lambda: index.search(np.asarray(next(queries), dtype=np.float32), K))
    recall, _ = table.get(DEFAULT_EF) or _recall(loaded, DEFAULT_EF)
    if loaded["n"] <= HELD.get(loaded["kind"], -1) and loaded["build"] == DEFAULT_BUILD:
        assert recall >= 0.98, (
            f"Recall@10 {recall:.4f} at the default ef_search {DEFAULT_EF} and build "
            f"{DEFAULT_BUILD}"
        )


def test_text_harvest_rules(tmp_path: Path) -> None:
    """The ``text`` sentences: docstrings and comment blocks split into 5-40 word sentences;
    doctest paragraphs, code-like, short and repeated sentences, bytes and f-strings left out."""
    source = tmp_path / "mod.py"
    source.write_text(
        'r"""Open the store and read every record. Too short here.\n\n'
        ">>> open_store('x') is not None\nTrue\n\n"
        'Returns a_b(c[0]) == d_e(f[1]) + g_h(i[2]) for j_k.\n"""\n'
        "# The cache keeps at most one entry per\n# key and drops the oldest first.\n"
        "x = 1  # Open the Store and read every record.\n"
        'B = b"""Bytes are never read as prose text."""\n'
        'F = f"""Formatted strings are never read {x} either."""\n',
        encoding="utf-8",
    )
    found = harvest_sentences([source, tmp_path / "missing.py"])
    assert sorted(found) == [
        "Open the store and read every record.",
        "The cache keeps at most one entry per key and drops the oldest first.",
    ]
    assert harvest_sentences([source]) == found  # a fixed order

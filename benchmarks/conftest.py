"""Shared fixtures of the benchmark suites: kernel implementations and a synthetic corpus."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from factories import KERNEL_IMPLS, KernelImpl, write_memory_config

from swarmmem.core.model.ids import content_hash, memory_id, memory_id_for_hash
from swarmmem.core.model.records import MemoryRecord, MemoryScope, MemorySource

# --- kernels -------------------------------------------------------------------------------


@pytest.fixture(scope="session", params=KERNEL_IMPLS)
def kernels(request: pytest.FixtureRequest) -> KernelImpl:
    """Return the kernel modules of one implementation, so each benchmark runs on both."""
    return KernelImpl.load(request.param)


# --- synthetic memory corpus -----------------------------------------------------------------

_VOCABULARY = """
the a an to of in on for with from by when before after and or not never always only use run
runs used keep prefer avoid add check set read write call pass fail returns store load open
close test tests unit integration fixture fixtures pytest coverage lint ruff mypy format build
release ci pipeline cache caches config json yaml toml schema migration migrations sqlite fts5
vector index query queries token tokens budget prompt block recall memory memories record
records scope scopes repository project workspace agent agents role curator proposal evidence
kernel cython twin score scores scoring rank ranking fusion weight weights jaccard embedding
embeddings onnx model models rerank reranker latency timeout retry retries lock locks thread
async await event events handler handlers server client request response error errors raise
exception logging log logs path paths file files directory module modules package import
imports export api endpoint route routes auth token-refresh rate-limit feature-flag dry-run
write-ahead snake_case camelCase utf-8 redact secret secrets pii session sessions run-id
"""
_WORDS = _VOCABULARY.split()
_DIRS = ["src", "core", "adapters", "tests", "docs", "scripts", "packages/api", "lib/memory"]
_EXTS = [".py", ".ts", ".md", ".json", ".toml", ".sql"]
_KINDS = [
    "repo_convention",
    "project_fact",
    "architecture_decision",
    "api_finding",
    "code_pattern",
    "test_pattern",
    "failure_pattern",
    "security_note",
    "user_preference",
    "evidence",
]


@dataclasses.dataclass(frozen=True)
class Candidate:
    """The raw fields of one stored memory, as the recall path hands them to the kernels."""

    text: str
    tags: list[str]
    files: list[str]
    symbols: list[str]
    kind: str
    ref: str


def _sentence(rng: random.Random, n_words: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(n_words)]
    for _ in range(rng.randint(0, 2)):
        words.insert(rng.randrange(len(words)), _path(rng) if rng.random() < 0.5 else "`x`,")
    words[0] = words[0].capitalize()
    return " ".join(words) + rng.choice([".", ".", ";", ":", "!"])


def _path(rng: random.Random) -> str:
    return f"{rng.choice(_DIRS)}/{rng.choice(_WORDS)}_{rng.choice(_WORDS)}{rng.choice(_EXTS)}"


def make_corpus(n: int, seed: int = 20240601) -> list[Candidate]:
    """Build ``n`` memory-like candidates: 10-40 word texts, tags, file paths and symbols."""
    rng = random.Random(seed)
    corpus = []
    for _ in range(n):
        corpus.append(
            Candidate(
                text=_sentence(rng, rng.randint(10, 40)),
                tags=[rng.choice(_WORDS) for _ in range(rng.randint(1, 4))],
                files=[_path(rng) for _ in range(rng.randint(0, 3))],
                symbols=[
                    f"{rng.choice(_WORDS)}_{rng.choice(_WORDS)}" for _ in range(rng.randint(0, 2))
                ],
                kind=rng.choice(_KINDS),
                ref=rng.choice(["", "package.json", _path(rng)]),
            )
        )
    return corpus


@pytest.fixture(scope="session")
def memory_corpus() -> list[Candidate]:
    """Return 1,000 deterministic memory-like candidates."""
    return make_corpus(1000)


# --- storage records -------------------------------------------------------------------------

SCOPE = MemoryScope(type="repository", repo_id="bench")
T0 = "2026-01-01T00:00:00.000Z"
WORDS = [
    "pytest", "ruff", "numpy", "sqlite", "cache", "retry",
    "deploy", "parser", "schema", "token", "index", "vector",
]  # fmt: skip


def record(i: int, prefix: str = "fact") -> MemoryRecord:
    """A valid record whose words vary with ``i`` (so full text search has something to rank)."""
    text = f"{prefix} {i}: {WORDS[i % 12]} {WORDS[(i * 7) % 12]} keeps {WORDS[(i * 5) % 12]} fast"
    scope = SCOPE.as_dict()
    return MemoryRecord(
        id=memory_id(scope, "project_fact", text),
        scope=SCOPE,
        kind="project_fact",
        text=text,
        tags=(WORDS[i % 12],),
        confidence=0.8,
        stability="durable",
        source=MemorySource(type="file", file_path=f"src/mod{i % 50}.py"),
        created_at=T0,
        updated_at=T0,
        content_hash=content_hash(scope, "project_fact", text),
    )


def bulk(store: Any, records: list[MemoryRecord]) -> None:
    """Upsert ``records`` into ``store`` in one transaction."""
    with store.transaction():
        for item in records:
            store.upsert(item)


# --- facts about other code ------------------------------------------------------------------


def fact_record(text: str, path: str, scope: MemoryScope, stamp: str = T0) -> MemoryRecord:
    """A durable ``project_fact`` of ``text`` citing the file ``path``, in ``scope``."""
    digest = content_hash(scope.as_dict(), "project_fact", text)
    return MemoryRecord(
        id=memory_id_for_hash(digest),
        scope=scope,
        kind="project_fact",
        text=text,
        tags=(),
        confidence=0.8,
        stability="durable",
        source=MemorySource(type="file", file_path=path),
        created_at=stamp,
        updated_at=stamp,
        content_hash=digest,
    )


def code_facts(n: int) -> list[tuple[str, str]]:
    """``n`` realistic memory texts about code, with the file each names: the first sentence of
    docstrings of this Python's standard library (modules, classes and functions; tests,
    IDLE, tkinter and lib2to3 left out), every third one in path order, so a store of facts
    about other code is the same for every run on one Python version."""
    import ast
    import re

    from stdlib_docs import stdlib_docstrings

    skip = ("test", "idlelib", "site-packages", "lib2to3", "turtledemo", "tkinter")
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    for path, node, doc in stdlib_docstrings(
        lambda relative: any(part in str(relative) for part in skip),
        (ast.Module, ast.ClassDef, ast.FunctionDef),
    ):
        first = re.split(r"(?<=[.!?])\s", " ".join(doc.split()), maxsplit=1)[0]
        if not 40 <= len(first) <= 300 or first in seen:
            continue
        seen.add(first)
        rel, name = str(path), getattr(node, "name", "")
        found.append((f"{first} ({rel}{':' + name if name else ''})", rel))
        if len(found) >= 3 * n:
            return found[::3]
    return found[::3]


# --- processes -------------------------------------------------------------------------------


def run_ok(command: Sequence[str], *, env: Mapping[str, str], stdin: str | None = None) -> str:
    """Run ``command`` with ``env`` (and ``stdin``), two minutes at most, and return its
    stdout; a non-zero exit fails the benchmark with the command's stderr."""
    import subprocess

    done = subprocess.run(
        list(command),
        input=stdin,
        capture_output=True,
        text=True,
        env=dict(env),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def dense_config(root: Path, *, dense: bool) -> None:
    """Turn memory on in the project at ``root``, with embeddings on when ``dense``."""
    write_memory_config(root, {"enabled": True, "embeddings": {"enabled": dense}})

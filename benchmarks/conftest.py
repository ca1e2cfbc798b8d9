"""Shared fixtures of the benchmark suites: kernel implementations and a synthetic corpus."""

from __future__ import annotations

import dataclasses
import importlib
import os
import random
from types import ModuleType

import pytest

NO_EXTENSIONS = os.environ.get("SWARMMEM_NO_EXTENSIONS") == "1"

# --- kernels -------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class KernelImpl:
    """One implementation of every ``_speedups`` kernel: the pure twins or the compiled ones."""

    name: str
    fusion: ModuleType
    lexical: ModuleType
    jaccard: ModuleType


@pytest.fixture(
    scope="session",
    params=[
        pytest.param("py", id="py"),
        pytest.param(
            "compiled",
            id="compiled",
            marks=[
                pytest.mark.compiled,
                pytest.mark.skipif(NO_EXTENSIONS, reason="SWARMMEM_NO_EXTENSIONS=1"),
            ],
        ),
    ],
)
def kernels(request: pytest.FixtureRequest) -> KernelImpl:
    """Return the kernel modules of one implementation, so each benchmark runs on both."""
    suffix = "c" if request.param == "compiled" else "py"
    modules = {
        kernel: importlib.import_module(f"swarmmem._speedups._{kernel}_{suffix}")
        for kernel in ("fusion", "lexical", "jaccard")
    }
    return KernelImpl(name=request.param, **modules)


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

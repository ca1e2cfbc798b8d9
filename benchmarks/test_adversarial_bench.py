"""Detectors and entry points on adversarial inputs of 100 KB and 400 KB: repetitions of each
pattern's own literals, the inputs most likely to make a regular expression backtrack.

Each call should answer in well under a second (the target: every one under 1 s). Each
benchmark records the slowest input of its group in ``extra_info`` (``worst_s`` and which
input); nothing here asserts a time. ``--benchmark-disable`` (CI) runs each once at 100 KB.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import swarmmem
from swarmmem.adapters.detectors.regex_pii import RegexPiiDetector
from swarmmem.adapters.detectors.regex_secrets import RegexSecretDetector

SEEDS = [
    "-----BEGIN ",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY-----",
    "-----BEGIN RSA PRIVATE KEY-----x-----END X KEY-----",
    "-----BEGIN RSA PRIVATE KEY----- AAAAAAAA",
    "-----BEGIN PGP PRIVATE KEY BLOCK-----",
    "http://a:",
    "x://a:bbb",
    "a@",
    "eyJ",
    "eyJa.eyJ",
    "password=",
    "db_pass=",
    "AKIA",
    "AKIAAAAAAAAAAAAAAAAA ",
    "Authorization: Bearer ",
    "MY_API_KEY=",
    "SG.",
    "ya29.",
    "a.b@c",
    "+1 ",
    "555-",
    "\\n",
]


def _inputs(size: int) -> list[tuple[str, str]]:
    texts = [(seed, (seed * (size // len(seed) + 1))[:size]) for seed in SEEDS]
    begins = "-----BEGIN RSA PRIVATE KEY-----" * (size // 31)
    texts.append(("many BEGIN lines, one END", begins + "-----END RSA PRIVATE KEY-----"))
    return texts


@pytest.fixture(params=[100_000, 400_000], ids=["100KB", "400KB"])
def size(request: pytest.FixtureRequest) -> int:
    if request.config.getoption("benchmark_disable") and request.param > 100_000:
        pytest.skip("smoke run: 100 KB only")
    return int(request.param)


def _worst(benchmark: Any, call: Callable[[str], Any], size: int) -> None:
    timings: list[tuple[float, str]] = []

    def every_input() -> None:
        for name, text in _inputs(size):
            start = time.perf_counter()
            call(text)
            timings.append((time.perf_counter() - start, name))

    benchmark.pedantic(every_input, rounds=1, iterations=1)
    worst_s, worst_input = max(timings)
    benchmark.extra_info["worst_s"] = round(worst_s, 4)
    benchmark.extra_info["worst_input"] = worst_input
    assert worst_s >= 0


SECRETS = RegexSecretDetector()
PII = RegexPiiDetector()


@pytest.mark.benchmark(group="adversarial inputs")
@pytest.mark.parametrize("call", ["find", "redact", "contains_secret"])
def test_secret_detector(benchmark: Any, size: int, call: str) -> None:
    _worst(benchmark, getattr(SECRETS, call), size)


@pytest.mark.benchmark(group="adversarial inputs")
def test_pii_detector(benchmark: Any, size: int) -> None:
    _worst(benchmark, PII.detect, size)


@pytest.mark.benchmark(group="adversarial inputs")
@pytest.mark.parametrize("entry", ["propose", "evidence_add", "import_records", "recall"])
def test_entry_points(benchmark: Any, size: int, entry: str, tmp_path: Path) -> None:
    """The whole call a caller makes with such a text: it is refused (too long, or a secret)
    or handled, never stuck."""
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    with swarmmem.open(tmp_path, config={"enabled": True}) as mem:

        def call(text: str) -> None:
            try:
                if entry == "propose":
                    mem.propose(
                        operation="add",
                        kind="project_fact",
                        text=text,
                        rationale=text,
                        evidence_refs=["a.py"],
                    )
                elif entry == "evidence_add":
                    mem.evidence.add(text, "benchmark")
                elif entry == "import_records":
                    mem.import_records([{"kind": "project_fact", "text": text, "tags": [text]}])
                else:
                    mem.recall(text)
            except swarmmem_errors():
                pass

        _worst(benchmark, call, size)


def swarmmem_errors() -> type[Exception]:
    from swarmmem.core.model.errors import SwarmMemoryError

    return SwarmMemoryError

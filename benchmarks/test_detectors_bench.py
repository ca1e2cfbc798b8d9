"""Detector throughput on a ~1 MB mixed corpus (prose, code, config, logs, a few secrets).

Run: ``pytest benchmarks/test_detectors_bench.py`` (CI: add ``--benchmark-disable``).
Each benchmark stores its throughput as ``extra_info["mb_per_s"]`` (MB = 10**6 UTF-8 bytes).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from swarmmem.adapters.detectors.regex_pii import RegexPiiDetector
from swarmmem.adapters.detectors.regex_secrets import RegexSecretDetector

TARGET_BYTES = 1_000_000

_VOCABULARY = (
    "memory recall curator proposal evidence scope repository convention test fixture "
    "vitest pytest module import function returns value config loader cache index token "
    "budget ranking lexical dense fusion score outcome useful dead end correction agent "
    "the a of to and in is for on with that this by from as be are was were"
)
WORDS = _VOCABULARY.split()


def _prose(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(20, 60))]
    return " ".join(words).capitalize() + ".\n"


def _code(rng: random.Random) -> str:
    name = rng.choice(WORDS)
    return (
        f"def {name}_{rng.randint(0, 999)}(value: int) -> int:\n"
        f"    # compute {rng.choice(WORDS)} for {rng.choice(WORDS)}\n"
        f"    return value * {rng.randint(2, 99)} + len('{rng.choice(WORDS)}')\n\n"
    )


def _config(rng: random.Random) -> str:
    return (
        f"TIMEOUT_SECONDS={rng.randint(1, 300)}\n"
        f"LOG_LEVEL={rng.choice(['debug', 'info', 'warn'])}\n"
        f"TOKEN_COUNT = twelve_items\n"
        f"url = https://example.com/search?key={rng.randint(10**9, 10**10)}\n"
    )


def _log(rng: random.Random) -> str:
    ip = ".".join(str(rng.randint(0, 255)) for _ in range(4))
    return (
        f"2026-01-{rng.randint(10, 28)}T10:{rng.randint(10, 59)}:00Z INFO request from {ip} "
        f"user{rng.randint(1, 999)}@example.org took {rng.randint(1, 900)}ms "
        f"call +1 (555) {rng.randint(100, 999)}-{rng.randint(1000, 9999)}\n"
    )


def _secret(rng: random.Random) -> str:
    alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

    def chunk(n: int) -> str:
        return "".join(rng.choice(alnum) for _ in range(n))

    return rng.choice(
        [
            f"OPENAI_API_KEY=sk-{chunk(32)}\n",
            f"token ghp_{chunk(36)} in ci\n",
            f"aws AKIA{chunk(16).upper()} {chunk(40)}\n",
            f"Authorization: Bearer {chunk(24)}\n",
            f"jwt eyJ{chunk(20)}.eyJ{chunk(30)}.{chunk(20)}\n",
            f"-----BEGIN RSA PRIVATE KEY-----\n{chunk(64)}\n-----END RSA PRIVATE KEY-----\n",
            f"card 4111 1111 1111 1111 ssn 123-45-{rng.randint(1000, 9999)}\n",
        ]
    )


def make_corpus(seed: int = 1466, target: int = TARGET_BYTES) -> str:
    """A deterministic mixed corpus of about ``target`` UTF-8 bytes."""
    rng = random.Random(seed)
    makers = [_prose] * 5 + [_code] * 3 + [_config, _log, _log] + [_secret]
    parts: list[str] = []
    size = 0
    while size < target:
        part = rng.choice(makers)(rng)
        parts.append(part)
        size += len(part.encode("utf-8"))
    return "".join(parts)


@pytest.fixture(scope="module")
def corpus() -> str:
    """The ~1 MB corpus."""
    return make_corpus()


def _throughput(benchmark: Any, corpus: str, fn: Callable[[str], Any]) -> Any:
    result = benchmark(fn, corpus)
    stats = getattr(benchmark, "stats", None)
    if stats is not None:
        seconds = stats.stats.median
        benchmark.extra_info["mb_per_s"] = round(len(corpus.encode("utf-8")) / 1e6 / seconds, 2)
    return result


def test_corpus_is_about_one_megabyte(corpus: str) -> None:
    """The generated corpus is between 1.0 and 1.1 MB."""
    assert 1_000_000 <= len(corpus.encode("utf-8")) < 1_100_000


def test_secret_find_throughput(benchmark: Any, corpus: str) -> None:
    """RegexSecretDetector.find over the corpus."""
    findings = _throughput(benchmark, corpus, RegexSecretDetector().find)
    assert len(findings) > 100


def test_secret_redact_throughput(benchmark: Any, corpus: str) -> None:
    """RegexSecretDetector.redact over the corpus; the result has no finding left."""
    detector = RegexSecretDetector()
    redacted = _throughput(benchmark, corpus, detector.redact)
    assert detector.find(redacted) == []


def test_secret_contains_on_clean_text_throughput(benchmark: Any, corpus: str) -> None:
    """contains_secret on a corpus without secrets (every pattern scans everything)."""
    detector = RegexSecretDetector()
    clean = detector.redact(corpus).replace("[REDACTED:", "[R:")
    assert not _throughput(benchmark, clean, detector.contains_secret)


def test_pii_detect_throughput(benchmark: Any, corpus: str) -> None:
    """RegexPiiDetector.detect over the corpus."""
    findings = _throughput(benchmark, corpus, RegexPiiDetector().detect)
    assert findings.counts_by_type["email"] > 100
    assert findings.score == 0.95

"""Detectors, parsers and every entry point a hook reaches, on adversarial inputs of 100 KB and
400 KB: repetitions of each pattern's own literals, and long runs of the characters a pattern
or parser scans before the literal it needs (a URL scheme before ``://``, a JWT header before
``.eyJ``, an email's local part before ``@``, braces and open strings before a proposals
block), the inputs most likely to make a scan quadratic.

Entry points: the detectors; the prompt hook (the prompt), the stop hook (the last assistant
message, and the same text in the session's transcript) as a host runs them, in process; the
first open of a project that ships the text in a legacy ``.swarm/memory/proposals.jsonl``;
propose, evidence, import and recall through the Python API.

Each call should answer in well under a second (the target: every one under 1 s). Each
benchmark records the slowest input of its group in ``extra_info`` (``worst_s`` and which
input); nothing here asserts a time. ``--benchmark-disable`` (CI) runs each once at 100 KB.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import swarmmem
from swarmmem.adapters.detectors.regex_pii import RegexPiiDetector
from swarmmem.adapters.detectors.regex_secrets import RegexSecretDetector
from swarmmem.core.model.text import lookalike_hosts
from swarmmem.hooks import hosts
from swarmmem.hooks.runner import run_hook

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


BLOCK = '{"memoryProposals": [{"operation": "add", "kind": "project_fact", "text": "t"}]}'


def _fill(seed: str, size: int) -> str:
    return (seed * (size // len(seed) + 1))[:size]


def _inputs(size: int) -> list[tuple[str, str]]:
    texts = [(seed, _fill(seed, size)) for seed in SEEDS]
    begins = "-----BEGIN RSA PRIVATE KEY-----" * (size // 31)
    texts.append(("many BEGIN lines, one END", begins + "-----END RSA PRIVATE KEY-----"))
    runs = [
        ("URL scheme run, then ://@", "a.", "://@"),
        ("JWT header run, then .eyJ", "eyJ-", ".eyJ"),
        ("email local-part run, then @", "a-", "@"),
        ("braces, then a block", "{", BLOCK),
        ("open strings, then a block", '{"a":"', BLOCK),
        ("nested objects, then a block", '{"a":' * 900 + "x", BLOCK),
        ("code with quoted braces, then a block", 'printf("{");\n', BLOCK),
    ]
    texts += [(name, _fill(run, size - len(end)) + end) for name, run, end in runs]
    texts.append(("@, then a domain run", "a@" + _fill("a-", size - 2)))
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
def test_lookalike_domains(benchmark: Any, size: int) -> None:
    """The look-alike domain check of review, show and the web viewer."""
    _worst(benchmark, lookalike_hosts, size)


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


def _project(root: Path) -> Path:
    (root / ".opencode").mkdir(parents=True)
    (root / ".opencode" / "opencode-swarm.json").write_text(
        '{"memory": {"enabled": true}}', encoding="utf-8"
    )
    (root / "a.py").write_text("x = 1\n", encoding="utf-8")
    with swarmmem.open(root) as mem:
        mem.import_records([{"kind": "repo_convention", "text": "Run the tests with pytest."}])
    return root


@pytest.mark.benchmark(group="adversarial inputs")
@pytest.mark.parametrize("hook", ["prompt", "stop", "stop-transcript"])
def test_hooks(benchmark: Any, size: int, hook: str, tmp_path: Path) -> None:
    """A hook as a host runs it (in process, from its JSON input): the prompt is the text, or
    the agent's last message is (given in the input, or read from the transcript)."""
    root = _project(tmp_path / "project")
    transcript = tmp_path / "transcript.jsonl"
    calls = iter(range(1_000_000))

    def call(text: str) -> None:
        payload: dict[str, Any] = {"session_id": f"s{next(calls)}", "cwd": str(root)}
        if hook == "prompt":
            payload["prompt"] = text
        elif hook == "stop":
            payload["last_assistant_message"] = text
        else:
            row = {"type": "assistant", "message": {"role": "assistant", "content": text}}
            transcript.write_text(json.dumps(row) + "\n", encoding="utf-8")
            payload["transcript_path"] = str(transcript)
        event = "UserPromptSubmit" if hook == "prompt" else "Stop"
        run_hook(root, hosts.parse("claude-code", event, json.dumps(payload)))

    _worst(benchmark, call, size)


@pytest.mark.benchmark(group="adversarial inputs")
def test_legacy_import_at_first_open(benchmark: Any, size: int, tmp_path: Path) -> None:
    """A checkout ships ``.swarm/memory/proposals.jsonl`` whose row carries the text (as its
    text and rationale); the first open imports it (untrusted: refused or proposed)."""
    projects = iter(range(1_000_000))

    def call(text: str) -> None:
        root = tmp_path / f"p{next(projects)}"
        folder = root / ".swarm" / "memory"
        folder.mkdir(parents=True)
        row = {"id": "prop_0000000000000001", "operation": "add", "status": "pending"}
        row |= {"text": text, "rationale": text, "evidenceRefs": ["a.py"]}
        (folder / "proposals.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
        with swarmmem.open(root, config={"enabled": True}) as mem:
            mem.list()

    _worst(benchmark, call, size)


def swarmmem_errors() -> type[Exception]:
    from swarmmem.core.model.errors import SwarmMemoryError

    return SwarmMemoryError

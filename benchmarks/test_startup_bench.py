"""Cold start: one ``swarmmem recall`` in a fresh interpreter, and an MCP server's first recalls.

Each round starts a new process (``python -m swarmmem.cli``), so every round pays the
interpreter start, the imports, opening the store and, with embeddings on, loading the MiniLM
model. The project is built once per module: 40 curated memories in a SQLite store.

- ``recall[dense]``: embeddings on (hybrid recall: FTS5 + MiniLM kNN + RRF);
- ``recall[lexical]``: embeddings off, same store;
- ``import``: ``python -c "import swarmmem.cli"``, the floor under both;
- ``mcp``: start ``swarmmem mcp`` over stdio, initialise, and run two recalls (embeddings on).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import dense_config, run_ok

from swarmmem.adapters.models.onnx_embedder import OnnxMiniLmEmbedder

QUERY = "how do I run the unit tests before pushing"
FACTS = [
    f"Fact {i}: run the unit tests with make test before pushing; module {i} keeps its "
    f"{['sqlite fts5 index', 'token budget', 'retry policy', 'schema migration'][i % 4]} small"
    for i in range(40)
]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["HF_HUB_OFFLINE"] = "1"
    return env


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository-scoped project with 40 curated memories, embedded with MiniLM."""
    reason = OnnxMiniLmEmbedder().unavailable_reason
    if reason is not None:
        pytest.skip(f"dense extra not usable: {reason}")
    import swarmmem

    root = tmp_path_factory.mktemp("startup") / "shop-api"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text(
        '[remote "origin"]\n\turl = https://example.com/acme/shop-api.git\n', encoding="utf-8"
    )
    (root / ".opencode").mkdir()
    (root / "Makefile").write_text("test:\n\tpytest -q\n", encoding="utf-8")  # the evidence
    dense_config(root, dense=True)
    with swarmmem.open(root, context={"session_id": "s1", "agent_role": "coder"}) as agent:
        proposals = [
            agent.propose(
                operation="add",
                kind="test_pattern",
                text=text,
                rationale="how the tests run",
                evidence_refs=["Makefile"],
            ).id
            for text in FACTS
        ]
    with swarmmem.open(root, context={"agent_role": "curator"}) as curator:
        for proposal in proposals:
            curator.curate(proposal, "add", reason="sourced")
    return root


def _cli_recall(root: Path) -> dict[str, Any]:
    command = [sys.executable, "-m", "swarmmem.cli", "--root", str(root), "--json", "recall"]
    return json.loads(run_ok([*command, QUERY], env=_env()))


@pytest.mark.benchmark(group="cold start: CLI")
@pytest.mark.parametrize("mode", ["dense", "lexical"])
def test_cold_cli_recall(benchmark, project: Path, mode: str) -> None:
    """Time one ``swarmmem --json recall QUERY`` in a new process."""
    dense_config(project, dense=mode == "dense")
    try:
        result = benchmark.pedantic(_cli_recall, args=(project,), rounds=7, warmup_rounds=1)
    finally:
        dense_config(project, dense=True)
    assert result["success"] is True
    assert result["total"] > 0
    assert result["diagnostics"].get("fusionActive", False) is (mode == "dense")


NO_VECTOR_COMMANDS = {
    "status": ["status"],
    "list": ["list", "--limit", "20"],
    "pending": ["pending"],
    "show": ["show", "--first"],
}
"""Commands that compute no vector: with embeddings on they must not load the model."""


@pytest.mark.benchmark(group="cold start: commands that compute no vector")
@pytest.mark.parametrize("mode", ["dense", "lexical"])
@pytest.mark.parametrize("command", sorted(NO_VECTOR_COMMANDS))
def test_cold_command_without_vectors(benchmark, project: Path, mode: str, command: str) -> None:
    """Time one ``swarmmem --json COMMAND`` in a new process, embeddings on and off: the
    two stay close (the model is loaded only by commands that embed)."""
    args = list(NO_VECTOR_COMMANDS[command])
    if args == ["show", "--first"]:
        import swarmmem

        with swarmmem.open(project) as mem:
            args = ["show", mem.list(limit=1)[0].id]
    base = [sys.executable, "-m", "swarmmem.cli", "--root", str(project), "--json"]
    dense_config(project, dense=mode == "dense")
    try:
        out = benchmark.pedantic(
            run_ok, args=([*base, *args],), kwargs={"env": _env()}, rounds=5, warmup_rounds=1
        )
    finally:
        dense_config(project, dense=True)
    answer = json.loads(out)
    assert answer.get("success", answer.get("enabled")) is True
    benchmark.extra_info["command"] = " ".join(args[:1])


@pytest.mark.benchmark(group="cold start: commands that compute no vector")
@pytest.mark.parametrize("mode", ["dense", "lexical"])
@pytest.mark.parametrize("command", ["outcome", "reject"])
def test_cold_write_without_vectors(benchmark, project: Path, mode: str, command: str) -> None:
    """Time a write that embeds nothing in a new process, embeddings on and off: an outcome
    for a memory, or the rejection of a proposal filed (untimed) before each round."""
    import itertools

    import swarmmem

    base = [sys.executable, "-m", "swarmmem.cli", "--root", str(project), "--json"]
    with swarmmem.open(project) as mem:
        memory_id = mem.list(limit=1)[0].id
    numbers = itertools.count()

    def setup() -> tuple[tuple[list[str]], dict[str, Any]]:
        if command == "outcome":
            args = ["outcome", "--memory-id", memory_id, "--outcome", "useful"]
        else:
            with swarmmem.open(project, context={"agent_role": "coder"}) as mem:
                prop = mem.propose(
                    operation="add",
                    kind="test_pattern",
                    text=f"Proposal {next(numbers)} ({mode}) to reject: tests run in CI only.",
                    rationale="a round of the benchmark",
                    evidence_refs=["Makefile"],
                )
            args = ["curate", prop.id, "reject", "--reason", "benchmark"]
        return ([*base, *args],), {"env": _env()}

    dense_config(project, dense=mode == "dense")
    try:
        out = benchmark.pedantic(run_ok, setup=setup, rounds=5, warmup_rounds=1)
    finally:
        dense_config(project, dense=True)
    assert json.loads(out).get("success") is True


@pytest.mark.benchmark(group="cold start: CLI")
def test_cold_import(benchmark) -> None:
    """Time ``python -c 'import swarmmem.cli'``: the floor under every CLI command."""

    def run() -> int:
        code = "import swarmmem.cli"
        return subprocess.run([sys.executable, "-c", code], env=_env(), check=False).returncode

    assert benchmark.pedantic(run, rounds=7, warmup_rounds=1) == 0


@pytest.mark.benchmark(group="cold start: MCP")
def test_mcp_start_and_two_recalls(benchmark, project: Path) -> None:
    """Time starting ``swarmmem mcp``, initialising and two recalls (embeddings on)."""
    anyio = pytest.importorskip("anyio")
    pytest.importorskip("mcp")
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "swarmmem.cli", "--root", str(project), "mcp"],
        cwd=str(project),
        env=_env(),
    )

    def run() -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = []

        async def main() -> None:
            with open(os.devnull, "w", encoding="utf-8") as errlog:
                async with Client(
                    stdio_client(params, errlog=errlog), read_timeout_seconds=60
                ) as client:
                    for _ in range(2):
                        reply = await client.call_tool("swarm_memory_recall", {"query": QUERY})
                        results.append(json.loads(reply.content[0].text))

        anyio.run(main)
        return results

    results = benchmark.pedantic(run, rounds=5, warmup_rounds=1)
    assert [(r["success"], r["total"] > 0) for r in results] == [(True, True)] * 2

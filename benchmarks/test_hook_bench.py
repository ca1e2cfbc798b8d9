"""The prompt hook as a host runs it: a new ``swarmmem hook claude-code UserPromptSubmit``
process per prompt, against a bare ``python -c "import sqlite3, json"`` in the same run.

The project holds 2,000 memories about other code (first docstring sentences of the standard
library, :func:`conftest.code_facts`) and the memories the prompts are about; 200 with
``--benchmark-disable`` (the CI smoke run). As in a real session, the session's start has
already run, so the project's helper process is up (the first prompt of a session is not
timed); every timed prompt is a new session, so no dedupe shortens it.

- ``hook[lexical]``: embeddings off;
- ``hook[dense]``: embeddings on (MiniLM): the helper embeds each prompt and searches the
  vectors, and the run log says the dense channel took part; a paraphrase only the dense
  channel finds is injected;
- ``bare-python``: the floor the targets are stated against (4x lexical, 6x dense).

Each hook test also times the floor itself, interleaved with its own runs, and puts the median
ratio in ``extra_info["ratio_to_bare_python"]``: the ratio the target is about, measured in one
run. Nothing here asserts a time.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from conftest import code_facts, dense_config, run_ok

import swarmmem
from swarmmem.adapters.models.onnx_embedder import OnnxMiniLmEmbedder
from swarmmem.hooks.client import socket_path

ALEMBIC = "Database migrations are managed with alembic; run alembic upgrade head after pulling."
PROMPT = "how should I apply the database migrations after I pull the latest changes?"
#: shares no stemmed word with ALEMBIC; its nearest memory among the code facts (cosine 0.43)
PARAPHRASE = "what tool changes our sql schema versions"
BARE = [sys.executable, "-c", "import sqlite3, json"]
SCRIPT = Path(sys.executable).parent / "swarmmem"
HOOK = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "swarmmem"]


def _env() -> dict[str, str]:
    keep = ("PATH", "HOME", "SWARMMEM_NO_EXTENSIONS", "PYTHONPATH")
    env = {key: os.environ[key] for key in keep if key in os.environ}
    env["HF_HUB_OFFLINE"] = "1"
    env["SWARMMEM_HOOK_HELPER_IDLE"] = "120"
    return env


def _project(base: Path, size: int, *, dense: bool) -> Path:
    root = base / ("dense" if dense else "lexical")
    (root / ".git").mkdir(parents=True)
    (root / ".opencode").mkdir()
    (root / "src").mkdir()
    (root / "src" / "db.py").write_text("ENGINE = None\n", encoding="utf-8")
    dense_config(root, dense=dense)
    rows: list[dict[str, Any]] = [
        {"kind": "code_pattern", "text": text, "source": {"type": "file", "filePath": path}}
        for text, path in code_facts(size)
    ]
    rows.append(
        {
            "kind": "repo_convention",
            "text": ALEMBIC,
            "source": {"type": "file", "filePath": "src/db.py"},
        }
    )
    with swarmmem.open(root) as mem:
        result = mem.import_records(rows)
        assert result.written == len(rows), result
    return root


def _hook(root: Path, session: str, event: str, payload: dict[str, Any]) -> str:
    stdin = json.dumps({"session_id": session, "cwd": str(root), **payload})
    return run_ok([*HOOK, "hook", "claude-code", event], env=_env(), stdin=stdin)


def _wall(command: list[str], **kwargs: Any) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, env=_env(), **kwargs)
    return time.perf_counter() - start


@pytest.fixture(scope="module")
def size(request: pytest.FixtureRequest) -> int:
    return 200 if request.config.getoption("benchmark_disable") else 2000


@pytest.mark.benchmark(group="prompt hook (new process per prompt)")
@pytest.mark.parametrize("mode", ["lexical", "dense"])
def test_prompt_hook(
    benchmark: Any, tmp_path_factory: pytest.TempPathFactory, size: int, mode: str
) -> None:
    dense = mode == "dense"
    if dense and (reason := OnnxMiniLmEmbedder().unavailable_reason) is not None:
        pytest.skip(f"dense extra not usable: {reason}")
    root = _project(tmp_path_factory.mktemp("hook"), size, dense=dense)
    # the session has started: the brief is given and the helper is up
    _hook(root, "warm", "SessionStart", {"source": "startup"})
    deadline = time.monotonic() + 120
    while not socket_path(root).exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert socket_path(root).exists(), "the session start did not start the helper"
    _hook(root, "warm", "UserPromptSubmit", {"prompt": "how do the tests run?"})

    def prompt() -> str:
        return _hook(root, f"s-{uuid.uuid4().hex[:12]}", "UserPromptSubmit", {"prompt": PROMPT})

    out = benchmark.pedantic(prompt, rounds=15, warmup_rounds=2)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert ALEMBIC in context
    events = [
        json.loads(line)
        for folder in (root / ".swarm" / "runs").iterdir()
        for line in (folder / "memory.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    injected = [e for e in events if e["type"] == "prompt_injected"]
    assert injected and all(e["dense"] is dense for e in injected)
    if dense:  # a paraphrase sharing no word with the memory: only the dense channel finds it
        out = _hook(root, "paraphrase", "UserPromptSubmit", {"prompt": PARAPHRASE})
        assert ALEMBIC in json.loads(out)["hookSpecificOutput"]["additionalContext"]

    pairs = []
    stdin = json.dumps({"session_id": "ratio", "cwd": str(root), "prompt": PROMPT})
    for i in range(9):
        payload = stdin.replace('"ratio"', f'"ratio-{i}"')
        hook = _wall(
            [*HOOK, "hook", "claude-code", "UserPromptSubmit"],
            input=payload.encode(),
            capture_output=True,
        )
        pairs.append(hook / _wall(BARE))
    benchmark.extra_info["memories"] = size + 1
    benchmark.extra_info["ratio_to_bare_python"] = round(statistics.median(pairs), 2)
    subprocess.run(["rm", "-rf", str(root / ".swarm")], check=True)  # the helper leaves


@pytest.mark.benchmark(group="prompt hook (new process per prompt)")
def test_bare_python(benchmark: Any) -> None:
    """``python -c "import sqlite3, json"``: the floor of the hook targets."""
    benchmark.pedantic(lambda: _wall(BARE), rounds=15, warmup_rounds=2)

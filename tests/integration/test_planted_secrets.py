"""Planted secrets through the command line and the MCP server reach no file and no output.

Every agent-controlled field gets its own secret (one of the detector's patterns around a
body unique to the field): proposal text, rationale, evidence refs, targets and related ids,
outcome questions, corrections and anchors (file and symbol), curator and forget reasons,
recall queries and tasks, verdict tasks, evidence documents and their source, and ids given
where an id belongs. The agent side runs through the CLI (in process and as the installed
``swarmmem`` console script) and through the MCP server with the MCP SDK's own stdio client;
the injection task and goal, which only the Python API takes, are planted in the same store.
Then the SQLite file, its ``-wal`` file, every file under ``.swarm`` and every output
(stdout, stderr, ``--json``, tool results) are scanned for the unique body of each secret.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from factories import curate_fact

import swarmmem
from swarmmem.adapters.detectors.regex_secrets import RegexSecretDetector
from swarmmem.adapters.storage.sqlite.support import sqlite_module
from swarmmem.cli import main

CONSOLE_SCRIPT = Path(sys.executable).parent / ("swarmmem.exe" if os.name == "nt" else "swarmmem")

SHAPES: tuple[Callable[[str], str], ...] = (
    lambda body: f"ghp_{body}",  # github_token
    lambda body: f"sk-{body}",  # openai_api_key
    lambda body: f"glpat-{body}",  # gitlab_token
    lambda body: f"xoxb-{body}",  # slack_token
    lambda body: f"DEPLOY_TOKEN={body}",  # env_secret
    lambda body: f"Authorization: Bearer {body}",  # authorization_bearer
    lambda body: f"eyJ{body}.eyJ{body}.{body}",  # jwt_token
    lambda body: f"AKIA{body[:16]}",  # aws_access_key_id (the body's first 16 characters)
    lambda body: f"password={body}",  # password_assignment
    lambda body: f"postgres://admin:{body}@db.internal/app",  # url_credentials
)


class Secrets:
    """One distinct secret per field name; ``bodies`` are what must never be found."""

    def __init__(self) -> None:
        self.bodies: dict[str, str] = {}
        self._detector = RegexSecretDetector()

    def __call__(self, field: str) -> str:
        body = "Q" + hashlib.sha256(field.encode()).hexdigest()[:23].upper()
        shape = SHAPES[len(self.bodies) % len(SHAPES)]
        secret = shape(body)
        assert self._detector.contains_secret(secret), secret
        # the part that must not survive (an AWS key id is only its first 16 characters)
        self.bodies[field] = body[:16] if secret.startswith("AKIA") else body
        return secret

    def leaks(self, blob: bytes, where: str) -> list[str]:
        text = blob.decode("utf-8", "replace")
        return [f"{field} in {where}" for field, body in self.bodies.items() if body in text]


def write_config(root: Path) -> None:
    (root / ".opencode").mkdir(parents=True)
    (root / ".opencode" / "opencode-swarm.json").write_text(
        json.dumps({"memory": {"enabled": True, "reflection": {"enabled": True}}}),
        encoding="utf-8",
    )
    (root / "docs").mkdir()
    (root / "docs" / "release.md").write_text("release notes\n", encoding="utf-8")


def store_files(root: Path) -> list[Path]:
    """Every file under .swarm (the database and its -wal file live there)."""
    return sorted(p for p in (root / ".swarm").rglob("*") if p.is_file())


def scan(root: Path, secrets: Secrets, outputs: list[tuple[str, str]]) -> list[str]:
    files = store_files(root)
    names = {p.name for p in files}
    assert "memory.db" in names
    found = []
    for path in files:
        found += secrets.leaks(path.read_bytes(), str(path.relative_to(root)))
    for where, text in outputs:
        found += secrets.leaks(text.encode("utf-8"), where)
    return found


class Shell:
    """Runs ``swarmmem --root ROOT ...`` in process and keeps every output for the scan."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.outputs: list[tuple[str, str]] = []

    def __call__(self, *args: str, stdin: str | None = None, ok: bool | None = True) -> Any:
        """``ok``: True expects exit 0, False a failure (1 or 2), None either."""
        result = CliRunner().invoke(
            main, ["--root", str(self.root), *args], input=stdin, catch_exceptions=False
        )
        label = " ".join(args[:3])
        self.outputs += [
            (f"stdout of {label}", result.stdout),
            (f"stderr of {label}", result.stderr),
        ]
        if ok is not None:
            assert (result.exit_code == 0) is ok, result.output
        assert result.exit_code in (0, 1, 2), result.output
        return result

    def json(self, *args: str, ok: bool | None = True) -> dict[str, Any]:
        result = self(*args, "--json", ok=ok)
        data = json.loads(result.stdout)
        assert isinstance(data, dict)
        return data


def plant_through_the_cli(root: Path, s: Secrets, sh: Shell) -> None:
    agent = ("--session", "s1", "--role", "coder")
    # a sourced proposal a curator accepts (the reason carries a secret)
    kept = sh.json(
        *agent, "propose", "--kind", "repo_convention",
        "--text", "Release notes live in docs/release.md.",
        "--rationale", "the docs say so", "--evidence", "docs/release.md",
    )  # fmt: skip
    change = sh.json("curate", kept["proposal_id"], "add", "--reason", f"ok {s('curate reason')}")
    memory_id = change["memory_id"]
    # proposals carrying a secret are rejected (redacted) at once; they are still stored
    for field, args in (
        ("rationale", ("--rationale", f"because {s('propose rationale')}")),
        ("evidence", ("--rationale", "r", "--evidence", f"ref {s('propose evidence')}")),
        ("text", ("--rationale", "r", "--text", f"deploy with {s('text durable')}")),
    ):
        text = () if field == "text" else ("--text", f"A fact about {field}.")
        rejected = sh.json(
            *agent, "propose", "--kind", "project_fact", *text, *args,
            "--evidence", "docs/release.md", ok=None,
        )  # fmt: skip
        assert rejected["status"] == "rejected", rejected
    todo = sh.json(
        *agent, "propose", "--kind", "todo", "--text", "Rotate the deploy token soon.",
        "--rationale", "r",
    )  # fmt: skip
    sh.json("curate", todo["proposal_id"], "reject", "--reason", f"no {s('reject reason')}")
    sh.json(
        *agent, "propose", "--operation", "update", "--target", memory_id, "--kind",
        "repo_convention", "--text", f"Release notes moved {s('update text')}.",
        "--rationale", "moved", "--evidence", "docs/release.md", ok=None,
    )  # fmt: skip
    # ids where an id belongs: refused without echoing the value
    sh(*agent, "propose", "--operation", "delete", "--target", s("propose target"),
       "--rationale", "r", ok=False)  # fmt: skip
    sh(*agent, "propose", "--operation", "merge", "--related", s("related id 1"),
       "--related", s("related id 2"), "--rationale", "r", ok=False)  # fmt: skip
    sh("show", s("show id"), ok=False)
    sh("forget", s("forget id"), "--reason", "r", ok=False)
    sh("curate", s("curate id"), "add", ok=False)
    sh("rescope", "--from", s("rescope from"), "--yes", ok=False)
    sh(*agent, "outcome", "--memory-id", s("outcome memory id"), "--outcome", "useful", ok=False)
    # values click itself refuses (usage errors) are not echoed either
    sh("list", "--kind", s("list kind"), ok=False)
    sh("recall", "release notes", "--max-items", s("max items"), ok=False)
    sh(*agent, "propose", "--operation", s("propose operation"), "--rationale", "r", ok=False)
    sh("list", "--since", s("list since"), ok=False)
    # recall (query and task), outcomes (anchors, correction, question), a verdict
    sh.json(*agent, "recall", f"where are release notes {s('recall query')}",
            "--task", f"ship {s('recall task')}")  # fmt: skip
    sh("--session", "s1", "recall", "-", stdin=f"release notes {s('recall stdin')}\n")
    sh.json(
        *agent, "outcome", "--memory-id", memory_id, "--outcome", "useful",
        "--anchor", f"src/{s('anchor file')}.py#{s('anchor symbol')}",
    )  # fmt: skip
    # a durable memory refuses a correction with a secret; a scratch note keeps it, redacted
    sh.json(
        *agent, "outcome", "--memory-id", memory_id, "--outcome", "corrected",
        "--correction", f"use {s('correction durable')} instead", ok=False,
    )  # fmt: skip
    (scratch_id,) = [m["memory_id"] for m in sh.json("list", "--kind", "scratch")["memories"]]
    sh.json(
        *agent, "outcome", "--memory-id", scratch_id, "--outcome", "corrected",
        "--correction", f"use {s('correction scratch')} instead",
    )  # fmt: skip
    sh.json(*agent, "outcome", "--question", f"how to deploy {s('outcome question')}",
            "--outcome", "dead_end", ok=False)  # fmt: skip
    sh.json(
        "--session", "s1", "verdict", "approve", "--swarm-id", "swarm-1",
        "--task", f"release {s('verdict task')}", "--round", "1",
        "--member-session", s("verdict member session"),
    )  # fmt: skip
    # the evidence cache (document and source)
    doc = root / "notes.txt"
    doc.write_text(f"deploy key {s('evidence document')}\n", encoding="utf-8")
    added = sh.json("evidence", "add", str(doc), "--source", f"wiki {s('evidence source')}")
    doc.unlink()
    sh.json("evidence", "show", added["ref"])
    sh.json("evidence", "list")
    # the maintenance reports and views print what was stored
    for report in ("pending", "value-log", "recall-log", "stale", "reflect", "status", "list"):
        sh.json(report)
        sh(report)
    sh.json("show", memory_id)
    sh("show", memory_id)
    sh.json("forget", memory_id, "--reason", f"stale {s('forget reason')}")
    sh.json("export")
    sh.json("audit-verify")


def plant_through_the_library(root: Path, s: Secrets) -> None:
    """The injection task and goal, which only the Python API takes."""
    with swarmmem.open(root, context={"session_id": "s1", "agent_role": "coder"}) as mem:
        mem.inject(agent_task=f"ship it {s('inject task')}", user_goal=f"go {s('inject goal')}")


def test_secrets_planted_through_the_cli_are_stored_and_echoed_nowhere(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write_config(root)
    secrets, sh = Secrets(), Shell(root)
    with swarmmem.open(root) as mem:  # creates the database, with one scratch note
        mem.import_records([{"kind": "scratch", "text": "Scratch: the release is on Friday."}])
    # a reader kept open for the whole test keeps the write-ahead log on disk for the scan
    reader = sqlite_module().connect(str(root / ".swarm" / "memory" / "memory.db"))
    try:
        reader.execute("SELECT COUNT(*) FROM memory_items").fetchone()
        plant_through_the_cli(root, secrets, sh)
        plant_through_the_library(root, secrets)
        wal = root / ".swarm" / "memory" / "memory.db-wal"
        assert wal.is_file() and wal.stat().st_size > 0
        assert len(secrets.bodies) == 33
        leaks = scan(root, secrets, sh.outputs)
        assert leaks == [], "\n".join(leaks)
    finally:
        reader.close()


@pytest.mark.slow
def test_secrets_planted_through_the_console_script_reach_no_output(tmp_path: Path) -> None:
    """The installed ``swarmmem`` script (a real process): stdout and stderr of refused and
    accepted calls hold none of the planted secrets."""
    import subprocess

    root = tmp_path / "project"
    write_config(root)
    s = Secrets()
    runs = [
        ["propose", "--kind", "todo", "--text", f"rotate {s('script text')}",
         "--rationale", f"r {s('script rationale')}", "--json"],
        ["recall", f"how do we deploy {s('script query')}"],
        ["show", s("script show id")],
        ["outcome", "--question", f"q {s('script question')}", "--outcome", "dead_end"],
    ]  # fmt: skip
    outputs = []
    for args in runs:
        done = subprocess.run(
            [str(CONSOLE_SCRIPT), "--root", str(root), "--session", "s9", *args],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        outputs += [(f"stdout of {args[0]}", done.stdout), (f"stderr of {args[0]}", done.stderr)]
    leaks = scan(root, s, outputs)
    assert leaks == [], "\n".join(leaks)


# ----------------------------------------------------------------------------- MCP
def run_mcp(root: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[list[str], str, list]:
    """Call each tool over stdio with the MCP SDK client; returns every result's text, the
    server's stderr and the tool list."""
    pytest.importorskip("mcp")
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.shared.exceptions import MCPError

    env = {k: os.environ[k] for k in ("SWARMMEM_NO_EXTENSIONS", "PYTHONPATH") if k in os.environ}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "swarmmem.cli", "--root", str(root), "--session", "m1", "mcp"],
        cwd=str(root),
        env=env,
    )
    errlog_path = root.parent / "mcp-stderr.log"
    texts: list[str] = []
    listed: list[Any] = []

    async def scenario() -> None:
        with errlog_path.open("w", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=60) as c:
                listed.extend((await c.list_tools()).tools)
                for name, arguments in calls:
                    try:
                        result = await c.call_tool(name, arguments)
                    except MCPError as exc:
                        texts.append(str(exc))
                        continue
                    texts.extend(getattr(part, "text", "") for part in result.content)
                    texts.append(json.dumps(result.structured_content))

    anyio.run(scenario)
    return texts, errlog_path.read_text(encoding="utf-8"), listed


@pytest.mark.slow
def test_secrets_planted_through_mcp_are_stored_and_echoed_nowhere(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write_config(root)
    with swarmmem.open(root) as mem:  # curated memories to report outcomes about
        mem.import_records(
            [{"kind": "repo_convention", "text": "Release notes live in docs/release.md.",
              "source": {"type": "file", "filePath": "docs/release.md"}},
             {"kind": "scratch", "text": "Scratch: the release is on Friday."}]
        )  # fmt: skip
        (record,) = mem.list(kind="repo_convention")
        (scratch,) = mem.list(kind="scratch")
    s = Secrets()
    calls = [
        ("swarm_memory_recall", {"query": f"release notes {s('mcp query')}",
                                 "task": f"ship {s('mcp task')}"}),
        ("swarm_memory_propose", {"operation": "add", "kind": "repo_convention",
                                  "text": f"deploy with {s('mcp text durable')}",
                                  "rationale": "r", "evidenceRefs": ["docs/release.md"]}),
        ("swarm_memory_propose", {"operation": "add", "kind": "todo",
                                  "text": f"rotate {s('mcp text todo')}",
                                  "rationale": f"why {s('mcp rationale')}",
                                  "evidenceRefs": [f"see {s('mcp evidence')}"]}),
        ("swarm_memory_propose", {"operation": "delete", "targetMemoryId": s("mcp target"),
                                  "rationale": "r"}),
        ("swarm_memory_propose", {"operation": "merge", "rationale": "r",
                                  "relatedMemoryIds": [s("mcp related 1"), s("mcp related 2")]}),
        ("swarm_memory_outcome", {"memoryId": record.id, "outcome": "useful",
                                  "anchors": [{"file": f"src/{s('mcp anchor file')}.py",
                                               "symbol": s("mcp anchor symbol")}]}),
        ("swarm_memory_outcome", {"memoryId": record.id, "outcome": "corrected",
                                  "correction": f"use {s('mcp correction')}"}),
        ("swarm_memory_outcome", {"memoryId": scratch.id, "outcome": "corrected",
                                  "correction": f"use {s('mcp scratch correction')}"}),
        ("swarm_memory_outcome", {"question": f"how {s('mcp question')}", "outcome": "dead_end"}),
        ("swarm_memory_outcome", {"memoryId": s("mcp memory id"), "outcome": "useful"}),
        ("swarm_memory_recall", {"query": s("mcp bare query")}),
        ("swarm_memory_recall", {"query": "release", "kinds": [s("mcp kind")]}),
        ("swarm_memory_propose", {"operation": s("mcp operation"), "rationale": "r"}),
        ("swarm_memory_outcome", {"outcome": "useful", s("mcp argument name"): "x"}),
        ("swarm_memory_rescope", {"from": "0123456789abcdef"}),
    ]  # fmt: skip
    texts, stderr, tools = run_mcp(root, calls)
    with swarmmem.open(root) as mem:  # the scratch correction was kept, redacted
        (corrected,) = [e for e in mem.store.list_outcomes(scratch.id) if e.outcome.correction]
        assert "[REDACTED" in str(corrected.outcome.correction)
        assert mem.store.list_recall_usage()  # the recalls were logged (redacted)
    # rescope is a trusted local command: the server offers no such tool and refuses the call
    assert "swarm_memory_rescope" not in {tool.name for tool in tools}
    assert not any("rescope" in tool.name for tool in tools)
    assert "unknown tool" in texts[-2] + texts[-1]
    outputs = [(f"tool result {i}", text) for i, text in enumerate(texts)]
    outputs.append(("server stderr", stderr))
    leaks = scan(root, s, outputs)
    assert leaks == [], "\n".join(leaks)


def test_a_recall_bundle_never_carries_the_callers_secret(tmp_path: Path) -> None:
    """``mem.inject()`` and ``mem.recall()`` return the question in ``RecallBundle.query``,
    which callers print and log: a secret in the task, goal or query is redacted there as in
    the usage row."""
    token = "ghp_" + "a1B2c3D4e5" * 4
    config = {"enabled": True, "recall": {"injection": {"enabled": True}}}
    with swarmmem.open(tmp_path, config=config) as mem:
        curate_fact(mem, "Deploys run through scripts/deploy.sh with the staging profile.")
        task = f"how do deploys run with the staging profile and deploy.sh? token {token}"
        injected = mem.inject(agent_task=task, user_goal="deploy to staging")
        recalled = mem.recall(f"deploy token {token}")
    assert injected is not None
    for bundle in (injected, recalled):
        assert token not in bundle.query and "[REDACTED:" in bundle.query
        assert token not in repr(bundle)

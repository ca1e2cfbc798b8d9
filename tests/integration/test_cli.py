"""The ``swarmmem`` command line: every command in process (CliRunner) and a few as real
subprocesses (``python -m swarmmem.cli`` and the installed ``swarmmem`` console script)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from factories import as_json, cite, cli, run_swarmmem

import swarmmem
from swarmmem.cli import main
from swarmmem.memory import DISABLED_MESSAGE

FACT = "Format Python code with ruff format before every commit."
CONSOLE_SCRIPT = Path(sys.executable).parent / ("swarmmem.exe" if os.name == "nt" else "swarmmem")

FIXTURE = {
    "name": "formatter-choice",
    "query": "which formatter does the project use",
    "task": "Format the Python code before committing.",
    "agentRole": "coder",
    "scopes": [{"type": "repository", "repoId": "demo-repo"}],
    "kinds": ["repo_convention"],
    "k": 2,
    "maxItems": 2,
    "tokenBudget": 800,
    "expectedLabels": ["formatter"],
    "records": [
        {
            "label": "formatter",
            "scope": {"type": "repository", "repoId": "demo-repo"},
            "kind": "repo_convention",
            "text": "The project formatter is ruff format; run it before every commit.",
            "tags": ["formatter", "ruff"],
            "confidence": 0.9,
            "source": {"type": "file", "filePath": "pyproject.toml"},
        },
        {
            "label": "elsewhere",
            "scope": {"type": "repository", "repoId": "another-repo"},
            "kind": "repo_convention",
            "text": "That project formatter is black.",
            "tags": ["formatter"],
            "confidence": 1,
        },
        {
            "label": "retired",
            "scope": {"type": "repository", "repoId": "demo-repo"},
            "kind": "repo_convention",
            "text": "The project formatter used to be yapf.",
            "tags": ["formatter"],
            "confidence": 1,
            "state": {"deleted": True},
        },
    ],
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose .opencode/opencode-swarm.json enables memory (SQLite default store)."""
    root = tmp_path / "project"
    (root / ".opencode").mkdir(parents=True)
    write_config(root, {"memory": {"enabled": True}})
    cite(root, "pyproject.toml", "docs/deploy.md")
    return root


def write_config(root: Path, document: Any) -> None:
    """Replace the project's configuration file with ``document`` (a str is written raw)."""
    text = document if isinstance(document, str) else json.dumps(document)
    (root / ".opencode" / "opencode-swarm.json").write_text(text, encoding="utf-8")


def propose_fact(root: Path, text: str = FACT) -> dict[str, Any]:
    """Propose a sourced repo convention through the CLI and return its JSON result."""
    result = cli(
        root,
        "--session", "sess-cli",
        "propose", "--kind", "repo_convention", "--text", text,
        "--rationale", "Keeps diffs clean.", "--evidence", "pyproject.toml", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return as_json(result)


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a real subprocess with a timeout and captured text output."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "COLUMNS": "100"}
    return subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        stdin=subprocess.DEVNULL,
    )


# ------------------------------------------------------------------------- in process
def test_version_option_prints_the_package_version() -> None:
    """``swarmmem --version`` names the program and the installed version."""
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"swarmmem, version {swarmmem.__version__}"


def test_help_lists_every_command() -> None:
    """The top-level help lists the agent, curator, evaluation and server commands."""
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for name in (
        "status",
        "recall",
        "propose",
        "curate",
        "pending",
        "outcome",
        "evaluate",
        "mcp",
        "demo",
    ):
        assert f"  {name}" in result.stdout, name


def test_status_text_reports_configuration_and_storage(project: Path) -> None:
    """``status`` prints the Markdown status with the enabled flag, provider and paths."""
    result = cli(project, "status")
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert text.startswith("## Swarm Memory Status\n")
    assert "- Enabled: `true`" in text
    assert "- Provider: `sqlite`" in text
    assert f"- SQLite path: `{project.resolve() / '.swarm/memory/memory.db'}`" in text
    assert "- Automatic destructive cleanup: `disabled`" in text
    assert "### Legacy JSONL" in text
    assert "- memories.jsonl: `missing` (0 bytes)" in text
    assert "- Last report: `none`" in text


def test_status_json_counts_memories_and_pending_proposals(project: Path) -> None:
    """``status --json`` has the documented keys; counts appear once the database exists."""
    before = as_json(cli(project, "status", "--json"))
    assert before["enabled"] is True
    assert before["provider"] == "sqlite"
    assert before["sqlite_exists"] is False
    assert before["automatic_destructive_cleanup"] == "disabled"
    assert set(before["legacy_jsonl"]) == {
        "memories.jsonl",
        "proposals.jsonl",
        "outcome-events.jsonl",
    }
    assert "memory_count" not in before
    propose_fact(project)
    after = as_json(cli(project, "--json", "status"))  # the group-level --json works too
    assert after["sqlite_exists"] is True
    assert after["memory_count"] == 0
    assert after["pending_proposals"] == 1


def test_agent_and_curator_loop_through_the_cli(project: Path) -> None:
    """propose -> pending -> curate -> recall -> outcome, each with its documented JSON keys."""
    proposal = propose_fact(project)
    assert {"success", "proposal_id", "status", "operation", "memory_id", "rejection_reason",
            "message", "proposal"} <= set(proposal)  # fmt: skip
    assert proposal["status"] == "pending"
    assert proposal["message"] == "Memory proposal created. Durable memory was not written."

    waiting = as_json(cli(project, "pending", "--json"))
    assert waiting["success"] is True
    assert waiting["pending_count"] == 1
    entry = waiting["pending"][0]
    assert entry["id"] == proposal["proposal_id"]
    assert entry["text"] == FACT
    assert entry["kind"] == "repo_convention"
    assert entry["evidence_refs"] == ["pyproject.toml"]
    assert entry["proposed_by"]["run_id"] == "sess-cli"

    pending_text = cli(project, "pending")
    assert pending_text.exit_code == 0
    assert "## Swarm Memory Pending" in pending_text.stdout
    assert f"`{proposal['proposal_id']}`" in pending_text.stdout
    assert f"text: {FACT}" in pending_text.stdout

    curated = cli(project, "--role", "curator", "curate", proposal["proposal_id"], "add", "--json")
    assert curated.exit_code == 0, curated.output
    change = as_json(curated)
    assert change["success"] is True
    assert change["action"] == "add"
    assert change["memory_id"] == proposal["memory_id"]

    recalled = as_json(cli(project, "recall", "how do I format python code", "--json"))
    assert {"success", "bundle_id", "memory_ids", "total", "token_estimate", "items", "signals",
            "diagnostics", "prompt_block"} <= set(recalled)  # fmt: skip
    assert recalled["memory_ids"] == [proposal["memory_id"]]
    assert recalled["items"][0]["text"] == FACT

    block = cli(project, "recall", "how do I format python code", "--kind", "repo_convention")
    assert block.exit_code == 0
    assert block.stdout.startswith("## Retrieved Swarm Memory\nSwarm-Recall-Bundle: bundle_")
    assert f"[{proposal['memory_id']}] kind=repo_convention" in block.stdout

    outcome = cli(
        project,
        "outcome", "--memory-id", proposal["memory_id"], "--outcome", "corrected",
        "--correction", "Run ruff format and ruff check --fix.",
        "--anchor", "pyproject.toml#tool.ruff", "--json",
    )  # fmt: skip
    assert outcome.exit_code == 0, outcome.output
    recorded = as_json(outcome)
    assert recorded["success"] is True
    assert recorded["memory_id"] == proposal["memory_id"]
    assert recorded["outcome"] == "corrected"
    assert recorded["outcomes"] == 1
    correction = recorded["correction_proposal_id"]  # the correction waits for a curator

    question = cli(project, "outcome", "--question", "Which formatter?", "--outcome", "useful")
    assert question.exit_code == 0
    assert question.stdout.startswith("Recorded useful for mem_")

    after = as_json(cli(project, "pending", "--json"))
    assert after["pending_count"] == 1
    (filed,) = after["pending"]
    assert (filed["id"], filed["operation"], filed["target"]) == (
        correction,
        "update",
        proposal["memory_id"],
    )
    assert filed["text"] == "Run ruff format and ruff check --fix."
    assert filed["evidence_refs"] == ["pyproject.toml"]


def test_secret_proposal_is_rejected_with_exit_1_and_listed_with_its_reason(project: Path) -> None:
    """A proposal carrying a secret is stored redacted and rejected; pending shows the reason."""
    result = cli(
        project,
        "propose", "--kind", "repo_convention",
        "--text", "Deploy with token ghp_abcdefghijklmnopqrstuvwxyz0123456789 please.",
        "--rationale", "deploy notes", "--evidence", "docs/deploy.md", "--json",
    )  # fmt: skip
    assert result.exit_code == 1
    data = as_json(result)
    assert data["success"] is False
    assert data["status"] == "rejected"
    assert "likely secret" in data["rejection_reason"]
    assert "ghp_" not in result.stdout
    report = as_json(cli(project, "pending", "--json"))
    assert report["rejected_count"] == 1
    assert report["rejected"][0]["id"] == data["proposal_id"]
    assert "likely secret" in report["rejected"][0]["reason"]
    text = cli(project, "pending").stdout
    assert f"`{data['proposal_id']}` add" in text
    assert "(rejected) - proposal field(s) contained a likely secret" in text


def test_evaluate_scores_own_fixtures_in_json_and_text(project: Path) -> None:
    """``evaluate --fixtures`` runs 2 providers x 3 modes and reports the documented summary."""
    fixtures = project / "recall-fixtures"
    fixtures.mkdir()
    (fixtures / "formatter.json").write_text(json.dumps(FIXTURE), encoding="utf-8")
    report = as_json(cli(project, "evaluate", "--fixtures", "recall-fixtures", "--json"))
    assert report["schema_version"] == 1
    summary = report["summary"]
    assert summary["fixture_count"] == 1
    assert summary["run_count"] == 6
    assert summary["cross_scope_leak_count"] == 0
    assert summary["stale_memory_count"] == 0
    assert summary["recall@k"] == 1.0
    assert {(run["provider"], run["mode"]) for run in report["runs"]} == {
        (p, m) for p in ("local-jsonl", "sqlite") for m in ("manual", "injection", "curator")
    }
    assert all(run["retrieved_labels"][0] == "formatter" for run in report["runs"])
    text = cli(project, "evaluate", "--fixtures", "recall-fixtures", "--provider", "memory")
    assert text.exit_code == 0
    assert text.stdout.startswith("## Swarm Memory Recall Evaluation\n")
    assert "- Runs: 3\n" in text.stdout


def test_evaluate_gate_writes_and_checks_a_baseline(project: Path) -> None:
    """``evaluate --gate --update`` pins a baseline the next gate run passes against."""
    fixtures = project / "recall-fixtures"
    fixtures.mkdir()
    (fixtures / "formatter.json").write_text(json.dumps(FIXTURE), encoding="utf-8")
    baseline = project / "baseline.json"
    args = ("evaluate", "--fixtures", "recall-fixtures", "--gate", "--baseline", str(baseline))
    pinned = cli(project, *args, "--update", "--json")
    assert pinned.exit_code == 0, pinned.output
    assert as_json(pinned)["passed"] is True
    assert json.loads(baseline.read_text(encoding="utf-8"))
    again = cli(project, *args)
    assert again.exit_code == 0
    assert again.stdout.strip() == "Regression gate passed"


def test_mcp_command_help_and_bad_transport(project: Path) -> None:
    """``mcp --help`` documents the session; an unknown transport is a usage error (2)."""
    shown = cli(project, "mcp", "--help")
    assert shown.exit_code == 0
    assert "--session" in shown.stdout
    refused = cli(project, "mcp", "--transport", "sse")
    assert refused.exit_code == 2
    assert "Invalid value for '--transport'" in refused.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("status", "--nope"), "No such option"),
        (("--frobnicate", "status"), "No such option"),
        (("recall", "tests", "--mode", "sideways"), "Invalid value for '--mode'"),
        (("curate", "prop_0000000000000000", "accept"), "'accept' is not one of"),
        (
            ("propose", "--operation", "create", "--rationale", "r"),
            "Invalid value for '--operation'",
        ),
        (("propose", "--kind", "todo"), "Missing option '--rationale'"),
        (("outcome", "--question", "q", "--outcome", "great"), "Invalid value for '--outcome'"),
        (("pending", "--limit", "many"), "Invalid value for '--limit'"),
        (("recall", "tests", "--max-items", "lots"), "Invalid value for '--max-items'"),
        (("nosuchcommand",), "No such command 'nosuchcommand'"),
    ],
)
def test_usage_errors_exit_2(project: Path, args: tuple[str, ...], message: str) -> None:
    """Unknown flags, commands and invalid choices are usage errors with exit code 2."""
    result = cli(project, *args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stderr.startswith("Usage: ")
    assert result.stdout == ""
    assert not (project / ".swarm").exists()
    # with --json, the same error is one JSON object on stdout, still exit 2
    as_json_ = cli(project, *args, "--json")
    assert as_json_.exit_code == 2, as_json_.output
    error = json.loads(as_json_.stdout)
    assert (error["success"], error["error"]) == (False, "usage_error")
    assert message in error["message"] and as_json_.stderr == ""
    assert not (project / ".swarm").exists()


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        (("recall", "ab"), "memory_validation_error", "query must be at least 3 characters"),
        (("recall", "tests", "--kind", "gossip"), "memory_validation_error", "unknown memory kind"),
        (
            (
                "outcome",
                "--memory-id",
                "mem_0123456789abcdef",
                "--question",
                "q",
                "--outcome",
                "useful",
            ),
            "memory_validation_error",
            "exactly one of memory_id or question is required",
        ),
        (
            ("outcome", "--question", "q", "--outcome", "useful", "--anchor", "../secret.txt"),
            "memory_validation_error",
            "must not contain '..'",
        ),
        (("curate", "prop_0123456789abcdef", "add"), "not_found", "memory proposal was not found"),
        (
            ("propose", "--kind", "repo_convention", "--text", "x", "--rationale", "r"),
            "memory_validation_error",
            "require source evidence",
        ),
        (
            ("evaluate", "--fixtures", "../elsewhere"),
            "evaluation_error",
            "escapes the project root",
        ),
    ],
)
def test_bad_values_exit_2_with_a_json_error(
    project: Path, args: tuple[str, ...], error: str, message: str
) -> None:
    """Values the library refuses exit 2; --json prints a parseable error naming the problem."""
    result = cli(project, *args, "--json")
    assert result.exit_code == 2, result.output
    data = as_json(result)
    assert data["success"] is False
    assert data["error"] == error
    assert message in data["message"]
    text = cli(project, *args)
    assert text.exit_code == 2
    assert text.stderr.startswith("Error: ")


def test_malformed_config_json_exits_2(project: Path) -> None:
    """A configuration file that is not JSON (or breaks the schema) is bad input: exit 2."""
    write_config(project, '{"memory": {"enabled": true,')
    broken = cli(project, "status", "--json")
    assert broken.exit_code == 2
    data = as_json(broken)
    assert data["error"] == "config_error"
    assert "cannot read configuration" in data["message"]
    write_config(project, {"memory": {"enabled": True, "recall": {"defaultMaxItems": 99}}})
    out_of_range = cli(project, "recall", "tests")
    assert out_of_range.exit_code == 2
    assert "memory.recall.defaultMaxItems" in out_of_range.stderr
    missing = cli(project, "--config", str(project / "nope.json"), "status")
    assert missing.exit_code == 2
    assert "configuration file not found" in missing.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("recall", "how are tests run"),
        ("propose", "--kind", "todo", "--text", "x", "--rationale", "r"),
        ("curate", "prop_0123456789abcdef", "reject"),
        ("outcome", "--question", "q", "--outcome", "useful"),
        ("pending",),
    ],
)
def test_disabled_memory_fails_with_exit_1(project: Path, args: tuple[str, ...]) -> None:
    """With memory disabled every memory command exits 1 with the disabled result."""
    write_config(project, {"memory": {"enabled": False}})
    result = cli(project, *args, "--json")
    assert result.exit_code == 1
    assert as_json(result) == {"success": False, "disabled": True, "message": DISABLED_MESSAGE}
    text = cli(project, *args)
    assert text.exit_code == 1
    assert text.stderr.strip() == f"Error: {DISABLED_MESSAGE}"
    assert not (project / ".swarm").exists()


def test_status_works_while_memory_is_disabled(project: Path) -> None:
    """``status`` reports a disabled memory with exit 0 and touches no storage."""
    write_config(project, {"memory": {"enabled": False}})
    data = as_json(cli(project, "status", "--json"))
    assert data["enabled"] is False
    assert "memory_count" not in data
    assert not (project / ".swarm").exists()


@pytest.mark.slow
def test_demo_json_runs_the_whole_loop() -> None:
    """``demo --json`` proposes, curates, recalls, records an outcome and evaluates."""
    result = CliRunner().invoke(main, ["demo", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    summary = as_json(result)
    assert [p["status"] for p in summary["proposals"]] == ["pending"] * 3 + ["rejected"]
    assert len(summary["memories"]) == 3
    assert summary["recalled"]
    assert set(summary["recalled"]) <= set(summary["memories"])
    assert summary["outcome"]["success"] is True
    assert summary["outcome"]["memory_id"] == summary["recalled"][0]
    assert summary["evaluation"]["run_count"] > 0
    assert not Path(summary["project"]).exists()  # the temporary project is removed


# ----------------------------------------------------------------------- subprocesses
@pytest.mark.slow
def test_module_entry_point_runs_as_a_subprocess(project: Path) -> None:
    """``python -m swarmmem.cli`` prints the version, JSON status, and exits 2 on bad input."""
    version = run(sys.executable, "-m", "swarmmem.cli", "--version", cwd=project)
    assert version.returncode == 0
    assert version.stdout.strip() == f"swarmmem, version {swarmmem.__version__}"
    status = run(sys.executable, "-m", "swarmmem.cli", "status", "--json", cwd=project)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["enabled"] is True  # --root defaults to the cwd
    short = run(sys.executable, "-m", "swarmmem.cli", "recall", "ab", cwd=project)
    assert short.returncode == 2
    assert short.stderr.strip() == "Error: query must be at least 3 characters"
    assert short.stdout == ""


@pytest.mark.slow
@pytest.mark.skipif(not CONSOLE_SCRIPT.exists(), reason="console script not installed here")
def test_console_script_runs_as_a_subprocess(project: Path) -> None:
    """The installed ``swarmmem`` script handles propose, recall, errors and disabled memory."""
    proposed = run(
        CONSOLE_SCRIPT, "--root", project,
        "propose", "--kind", "repo_convention", "--text", FACT,
        "--rationale", "style", "--evidence", "pyproject.toml", "--json",
        cwd=project.parent,
    )  # fmt: skip
    assert proposed.returncode == 0, proposed.stderr
    assert json.loads(proposed.stdout)["status"] == "pending"
    status = run(CONSOLE_SCRIPT, "--root", project, "status", cwd=project.parent)
    assert status.returncode == 0
    assert "- Pending proposals: 1" in status.stdout
    unknown = run(CONSOLE_SCRIPT, "--root", project, "recall", "tests", "--bogus", cwd=project)
    assert unknown.returncode == 2
    assert "No such option" in unknown.stderr
    assert "--bogus" in unknown.stderr
    write_config(project, "[1, 2")
    broken = run(CONSOLE_SCRIPT, "--root", project, "status", "--json", cwd=project)
    assert broken.returncode == 2
    assert json.loads(broken.stdout)["error"] == "config_error"
    write_config(project, {"memory": {"enabled": False}})
    disabled = run(CONSOLE_SCRIPT, "--root", project, "recall", "tests", "--json", cwd=project)
    assert disabled.returncode == 1
    assert json.loads(disabled.stdout)["disabled"] is True


@pytest.mark.slow
def test_demo_json_as_a_subprocess(tmp_path: Path) -> None:
    """``python -m swarmmem.cli demo --json`` prints one JSON document and exits 0."""
    done = run(sys.executable, "-m", "swarmmem.cli", "demo", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert set(summary) >= {"project", "proposals", "memories", "recalled", "outcome", "evaluation"}
    assert summary["evaluation"]["fixture_count"] > 0


@pytest.mark.parametrize("where", ["outside", "symlink-out", "not-json", "directory"])
def test_evaluate_gate_refuses_a_baseline_outside_the_project(
    project: Path, tmp_path_factory: pytest.TempPathFactory, where: str
) -> None:
    """Hostile input: ``--gate --update --baseline`` wrote wherever it was pointed (a file
    outside the project, through a symlink, or over a non-JSON file). The baseline must be a
    ``.json`` regular file inside the project (or the bundled fixtures); nothing is written."""
    fixtures = project / "recall-fixtures"
    fixtures.mkdir()
    (fixtures / "formatter.json").write_text(json.dumps(FIXTURE), encoding="utf-8")
    outside = tmp_path_factory.mktemp("elsewhere") / "victim.json"
    outside.write_text("precious", encoding="utf-8")
    target = {
        "outside": str(outside),
        "symlink-out": "link.json",
        "not-json": "notes.txt",
        "directory": "folder.json",
    }[where]
    if where == "symlink-out":
        (project / "link.json").symlink_to(outside)
    if where == "not-json":
        (project / "notes.txt").write_text("keep me", encoding="utf-8")
    if where == "directory":
        (project / "folder.json").mkdir()
    args = ("evaluate", "--fixtures", "recall-fixtures", "--gate", "--baseline", target)
    refused = cli(project, *args, "--update")
    assert refused.exit_code != 0
    assert "--baseline" in refused.output
    assert outside.read_text(encoding="utf-8") == "precious"
    if where == "not-json":
        assert (project / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_a_renamed_config_key_is_one_plain_warning_line(tmp_path: Path) -> None:
    """A configuration written with a former spelling still works, and the command line says
    so in one line, not with the source file and line of the library that noticed it."""
    (tmp_path / ".opencode").mkdir()
    config = {"memory": {"enabled": True, "evidence": {"cache_max_bytes": 1_000_000}}}
    (tmp_path / ".opencode" / "opencode-swarm.json").write_text(json.dumps(config))
    done = run_swarmmem(tmp_path, "status", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["enabled"] is True
    lines = done.stderr.strip().splitlines()
    assert lines == [
        "warning: memory.evidence.cache_max_bytes is now spelled "
        "memory.evidence.cacheMaxBytes; rename it"
    ]


def test_recall_of_nothing_stored_says_nothing_matched(project: Path) -> None:
    """A question about nothing stored is answered "nothing matched", in text and JSON,
    while one the stored memory answers prints its block."""
    proposal = propose_fact(project)
    assert cli(project, "curate", proposal["proposal_id"], "add").exit_code == 0
    text = cli(project, "recall", "how do I marinate chicken thighs overnight")
    assert text.exit_code == 0 and text.output.strip().startswith("nothing matched"), text.output
    data = as_json(cli(project, "--json", "recall", "how do I marinate chicken thighs overnight"))
    assert data["success"] is True and data["memory_ids"] == [] and data["prompt_block"] == ""
    assert data["message"].startswith("nothing matched") and data["token_estimate"] == 0
    found = as_json(cli(project, "--json", "recall", "format python code before a commit"))
    assert found["memory_ids"] and "nothing matched" not in found["prompt_block"]


def test_a_decision_at_the_command_line_is_labelled_as_a_persons(project: Path) -> None:
    """``swarmmem curate`` records the person as the reviewer; an agent's decision through
    the library (and the MCP curator tools) stays ``curator_agent``."""
    by_person = propose_fact(project)
    assert cli(project, "curate", by_person["proposal_id"], "add").exit_code == 0
    by_agent = propose_fact(project, "Tag releases from the main branch only.")
    with swarmmem.open(project) as mem:
        mem.curate(by_agent["proposal_id"], "add")
        reviewers = {p.id: p.reviewer for p in mem.store.list_proposals()}
    assert reviewers[by_person["proposal_id"]] == "user"
    assert reviewers[by_agent["proposal_id"]] == "curator_agent"

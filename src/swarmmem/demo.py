"""``swarmmem demo``: the whole loop on the embedded SQLite store in a temporary project.

propose -> curate -> recall (prompt block) -> outcome -> evaluate.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

FACTS: list[dict[str, Any]] = [
    {
        "kind": "test_pattern",
        "text": "Run focused tests with `pytest tests/unit -q -k <name>`; the full suite needs "
        "the dev extra.",
        "rationale": "Agents keep running the slow full suite.",
        "evidence_refs": ["pyproject.toml"],
    },
    {
        "kind": "repo_convention",
        "text": "Database migrations live in src/db/migrations and are numbered; never edit an "
        "applied migration.",
        "rationale": "A migration was edited in place last week.",
        "evidence_refs": ["src/db/migrations/README.md"],
    },
    {
        "kind": "failure_pattern",
        "text": "The flaky test_upload timeout comes from the S3 mock; set MOCK_S3_LATENCY=0 in "
        "tests.",
        "rationale": "Saves an hour of debugging.",
        "evidence_refs": ["tests/test_upload.py"],
    },
]


QUERY = "why does the upload test time out"
TASK = "fix flaky upload test"
EVALUATION_NOTE = (
    "Each fixture is a small store with a query and the memories that should (and should not)\n"
    "come back, run in manual, injection and curator modes. What good looks like:\n"
    "- Precision@k / Recall@k: the share of returned items that were expected / of expected\n"
    "  items that came back; 1.0 is perfect.\n"
    "- Cross-scope leaks and stale memories: must be 0 (another repository's memory, or a\n"
    "  superseded/expired one, was returned).\n"
    "- Noisy injections and same-scope noise: unexpected items in the prompt; lower is better.\n"
)


def _project(tmp: Path) -> Path:
    root = tmp / "shop-api"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text(
        '[remote "origin"]\n\turl = https://example.com/acme/shop-api.git\n', encoding="utf-8"
    )
    files = {
        "pyproject.toml": '[project]\nname = "shop-api"\n',
        "src/db/migrations/README.md": "Migrations: alembic upgrade head.\n",
        "tests/test_upload.py": "def test_upload():\n    assert True\n",
        "docs/deploy.md": "# Deploying\n",
    }
    for name, text in files.items():  # the files the demo's proposals cite
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    (root / ".opencode").mkdir()
    (root / ".opencode" / "opencode-swarm.json").write_text(
        json.dumps({"memory": {"enabled": True}}, indent=2), encoding="utf-8"
    )
    return root


#: prints one line of the demo (nothing under ``--json``)
Say = Callable[..., Any]


def run_demo(
    *,
    render_evaluation: Callable[[dict[str, Any]], str],
    keep: bool = False,
    as_json: bool = False,
) -> dict[str, Any]:
    """Run the demo and print each step (the evaluation report through ``render_evaluation``);
    returns what happened."""
    from swarmmem.evaluation import evaluate

    say: Say = (lambda *_a, **_k: None) if as_json else click.echo
    tmp = Path(tempfile.mkdtemp(prefix="swarmmem-demo-"))
    summary: dict[str, Any] = {"project": None, "proposals": [], "memories": []}
    try:
        root = _project(tmp)
        summary["project"] = str(root)
        say(f"# swarmmem demo\nProject: {root}\nStore: {root / '.swarm/memory/memory.db'}\n")
        _propose(root, say, summary)
        _curate(root, say, summary)
        _recall_and_report(root, say, summary)
        say("## 5. Offline evaluation on the bundled golden fixtures")
        say(EVALUATION_NOTE)
        report = evaluate(project_root=root)
        summary["evaluation"] = report["summary"]
        say(render_evaluation(report))
    finally:
        if keep:
            say(f"\nKept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    return summary


def _propose(root: Path, say: Say, summary: dict[str, Any]) -> None:
    """Step 1: an agent proposes the facts, and one note holding a secret (redacted, and
    the proposal rejected)."""
    import swarmmem

    with swarmmem.open(
        root, context={"session_id": "demo-session", "agent_role": "coder"}
    ) as agent:
        say("## 1. An agent proposes memories")
        for fact in FACTS:
            prop = agent.propose(
                operation="add",
                kind=fact["kind"],
                text=fact["text"],
                rationale=fact["rationale"],
                evidence_refs=fact["evidence_refs"],
            )
            summary["proposals"].append({"id": prop.id, "status": prop.status})
            say(f"- {prop.id} [{prop.status}] {fact['kind']}: {fact['text'][:60]}...")
        leaked = agent.propose(
            operation="add",
            kind="repo_convention",
            text="Deploy with AWS key AKIAABCDEFGHIJKLMNOP and the staging bucket.",
            rationale="deploy notes",
            evidence_refs=["docs/deploy.md"],
        )
        summary["proposals"].append({"id": leaked.id, "status": leaked.status})
        redacted = leaked.proposed_record.text if leaked.proposed_record else ""
        say(f"- {leaked.id} [{leaked.status}] secret redacted: {redacted}")
        say(f"  reason: {leaked.rejection_reason}\n")


def _curate(root: Path, say: Say, summary: dict[str, Any]) -> None:
    """Step 2: the curator adds every pending proposal."""
    import swarmmem

    with swarmmem.open(root, context={"agent_role": "curator"}) as curator:
        say("## 2. The curator decides")
        for entry in summary["proposals"]:
            if entry["status"] != "pending":
                continue
            change = curator.curate(entry["id"], "add", reason="concise, sourced fact")
            summary["memories"].append(change.memory_id)
            say(f"- add {entry['id']} -> {change.memory_id}")
        say("")


def _recall_and_report(root: Path, say: Say, summary: dict[str, Any]) -> None:
    """Steps 3 and 4: a later agent recalls (showing the prompt block) and reports its first
    memory useful."""
    import swarmmem

    context = {"session_id": "demo-session-2", "agent_role": "coder"}
    with swarmmem.open(root, context=context) as agent:
        say("## 3. A later agent recalls (the prompt block it would see)")
        query, task = QUERY, TASK
        say(f'Query: "{query}"  (task: "{task}")\n')
        bundle = agent.recall(query, task=task)
        summary["query"] = {"query": query, "task": task}
        summary["recalled"] = [item.record.id for item in bundle.items]
        say(bundle.prompt_block + "\n")
        say("## 4. It reports the outcome")
        if bundle.items:
            result = agent.record_outcome(
                memory_id=bundle.items[0].record.id,
                outcome="useful",
                anchors=[{"file": "tests/test_upload.py"}],
            )
            summary["outcome"] = result
            say(f"- useful: {result['memory_id']} ({result['outcomes']} outcome(s))\n")

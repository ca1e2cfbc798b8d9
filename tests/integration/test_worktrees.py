"""One memory per repository across its git worktrees: every linked worktree (real ``git
worktree add``) reads and writes the main worktree's store, agents in several worktrees write
at once, evidence is read in the worktree the agent is in, and a checkout cannot borrow
another repository's store with a ``.git`` file of its own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from factories import cli, curate_fact

import swarmmem
from swarmmem.project import main_worktree

SWARMMEM = [sys.executable, "-m", "swarmmem"]


def git(*args: str | Path, cwd: Path) -> None:
    subprocess.run(["git", *map(str, args)], cwd=cwd, check=True, timeout=60, capture_output=True)


def curate(root: Path, text: str, evidence: str = "Makefile") -> str:
    proposal = json.loads(
        cli(
            root,
            "--json",
            "propose",
            "--kind",
            "repo_convention",
            "--text",
            text,
            "--rationale",
            "seen in the repository",
            "--evidence",
            evidence,
        ).stdout
    )
    done = json.loads(cli(root, "--json", "curate", proposal["proposal_id"], "add").stdout)
    return str(done["memory_id"])


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with memory on (configuration committed) and one commit."""
    main = tmp_path / "main"
    main.mkdir()
    git("init", "-q", "-b", "main", cwd=main)
    git("config", "user.email", "dev@example.org", cwd=main)
    git("config", "user.name", "Dev", cwd=main)
    (main / "Makefile").write_text("check:\n\truff check .\n", encoding="utf-8")
    assert cli(main, "init").exit_code == 0
    git("add", "-A", cwd=main)
    git("commit", "-q", "-m", "start", cwd=main)
    return main


def worktree(repo: Path, name: str) -> Path:
    path = repo.parent / name
    git("worktree", "add", "-q", str(path), cwd=repo)
    return path


def test_a_worktree_reads_and_writes_the_main_worktrees_memory(repo: Path) -> None:
    first = curate(repo, "Run make check before pushing; it runs the linters.")
    wt = worktree(repo, "wt2")
    assert main_worktree(wt) == repo.resolve() and main_worktree(repo) is None
    status = json.loads(cli(wt, "--json", "status").stdout)
    assert status["sqlite_path"] == str(repo.resolve() / ".swarm/memory/memory.db")
    assert not (wt / ".swarm" / "memory").exists()
    with swarmmem.open(wt) as mem:
        assert [i.record.id for i in mem.recall("what should I run before pushing").items] == [
            first
        ]
    second = curate(wt, "Releases are tagged from the main branch only.")
    with swarmmem.open(repo) as mem:
        assert {r.id for r in mem.list()} == {first, second}


def test_a_worktree_without_its_own_configuration_uses_the_main_one(
    repo: Path, tmp_path: Path
) -> None:
    """A configuration that was never committed still reaches the worktrees."""
    git("rm", "-q", "--cached", ".opencode/opencode-swarm.json", cwd=repo)
    git("commit", "-q", "-m", "untrack the config", cwd=repo)
    wt = worktree(repo, "bare-wt")
    assert not (wt / ".opencode").exists()
    curate(repo, "Database migrations run with alembic upgrade head.")
    with swarmmem.open(wt) as mem:
        assert mem.enabled and len(mem.list()) == 1


def test_agents_in_three_worktrees_write_at_once(repo: Path) -> None:
    trees = [worktree(repo, f"agent{i}") for i in range(3)]
    script = (
        "import sys, swarmmem\n"
        "with swarmmem.open(sys.argv[1], context={'session_id': sys.argv[2]}) as mem:\n"
        "    for n in range(4):\n"
        "        p = mem.propose(operation='add', kind='repo_convention', rationale='r',\n"
        "            text=f'Worktree {sys.argv[2]} convention number {n} about the build.',\n"
        "            evidence_refs=['Makefile'])\n"
        "        mem.curate(p.id, decision='add')\n"
    )
    runs = [
        subprocess.Popen([sys.executable, "-c", script, str(tree), tree.name], cwd=tree)
        for tree in trees
    ]
    assert [run.wait(timeout=180) for run in runs] == [0, 0, 0]
    with swarmmem.open(repo) as mem:
        texts = {r.text for r in mem.list(limit=100)}
    assert len(texts) == 12


def test_evidence_is_read_in_the_worktree_the_agent_is_in(repo: Path) -> None:
    memory_id = curate(repo, "make check runs ruff check over the tree.")
    wt = worktree(repo, "feature")
    (wt / "Makefile").write_text("check:\n\tflake8\n", encoding="utf-8")  # changed here only

    def status_in(root: Path) -> Any:
        with swarmmem.open(root) as mem:
            items = mem.recall("what does make check run").items
            return {i.record.id: i.evidence_status for i in items}[memory_id]

    assert status_in(repo) == "fresh"
    assert status_in(wt) == "changed"


def test_a_checkout_cannot_borrow_another_repositorys_store(repo: Path, tmp_path: Path) -> None:
    """A ``.git`` file naming the victim's real worktree record (whose back-pointer names the
    real worktree), or a folder of the checkout's own posing as one, is no worktree: the
    checkout keeps its own memory."""
    curate(repo, "The deploy key lives in the ops vault under shop/prod.")
    real = worktree(repo, "real-wt")
    record = Path((real / ".git").read_text(encoding="utf-8").split(":", 1)[1].strip()).resolve()
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / ".git").write_text(f"gitdir: {record}\n", encoding="utf-8")
    assert main_worktree(evil) is None
    fake = evil / "fakegit"
    fake.mkdir()
    (fake / "commondir").write_text(str(repo.resolve() / ".git"), encoding="utf-8")
    (fake / "gitdir").write_text(".git", encoding="utf-8")  # "points back" at the checkout
    (evil / ".git").write_text(f"gitdir: {fake}\n", encoding="utf-8")
    assert main_worktree(evil) is None
    with swarmmem.open(evil, config={"enabled": True}) as mem:
        assert mem.list() == []
        assert mem.runtime.sqlite_path == evil.resolve() / ".swarm/memory/memory.db"


def test_stores_worktrees_kept_of_their_own_are_merged_once(repo: Path) -> None:
    """A worktree that kept its own store (before worktrees shared one) has its memories
    merged into the main worktree's by ``migrate --worktrees`` (scoped, like an import); the
    old store is renamed so it is never merged twice; a second run finds nothing."""
    main_memory = curate(repo, "Run make check before pushing; it runs the linters.")
    wt = worktree(repo, "old-wt")
    own = wt / ".swarm" / "memory" / "memory.db"
    (wt / "Makefile").write_text("check:\n\truff check .\n", encoding="utf-8")
    # the store this worktree kept before: its own file, placed by the person's own config
    config = json.loads((repo / ".opencode" / "opencode-swarm.json").read_text("utf-8"))
    config["memory"]["sqlite"] = {"path": str(own)}
    with swarmmem.open(wt, config=config["memory"]) as mem:
        kept = curate_fact(
            mem, "Releases are tagged from the main branch only.", evidence="Makefile"
        )
    assert own.is_file()
    with swarmmem.open(repo) as mem:
        assert [r.id for r in mem.list()] == [main_memory]
    done = cli(wt, "--json", "migrate", "--worktrees")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    (entry,) = report["stores"]
    assert (entry["worktree"], entry["merged"], entry["importedMemories"]) == (str(wt), True, 1)
    assert not own.exists() and own.with_name("memory.db.merged").is_file()
    with swarmmem.open(repo) as mem:
        assert {r.id for r in mem.list()} == {main_memory, kept}
    again = json.loads(cli(repo, "--json", "migrate", "--worktrees").stdout)
    assert again["stores"] == [] and again["success"] is True
    assert cli(repo, "migrate").exit_code == 2  # --to or --worktrees

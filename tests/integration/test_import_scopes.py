"""Imports stay inside the importing repository's scopes.

Hostile legacy JSONL in a project's storage folder (imported automatically, as untrusted
input), ``swarmmem import`` and ``Memory.import_records`` may not plant memories, proposals or
outcomes in another repository's scope of a shared store: such rows are refused and
reported, and the rows inside the scopes still come in.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from factories import cli, make_memory, make_proposal, outcome_event, propose_fact

import swarmmem
from swarmmem.core.model.codec import outcome_event_to_dict, proposal_to_dict, record_to_dict
from swarmmem.core.model.errors import NotFoundError
from swarmmem.core.model.ids import memory_id
from swarmmem.core.model.records import MemoryScope


def make_project(folder: Path) -> Path:
    (folder / ".opencode").mkdir(parents=True)
    (folder / ".opencode" / "opencode-swarm.json").write_text(
        json.dumps({"memory": {"enabled": True}}), encoding="utf-8"
    )
    return folder


def repo_scope(root: Path) -> MemoryScope:
    with swarmmem.open(root) as mem:
        return mem.runtime.repository_scope


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@pytest.fixture
def projects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """An attacker and a victim repository sharing one SQLite file (the person's, placed by
    the environment); the victim holds a fact."""
    db = tmp_path / "shared" / "memory.db"
    db.parent.mkdir()
    monkeypatch.setenv("SWARMMEM_SQLITE_PATH", str(db))
    victim = make_project(tmp_path / "victim" / "api")
    attacker = make_project(tmp_path / "attacker" / "api")
    with swarmmem.open(victim) as mem:
        assert mem.import_records([{"kind": "project_fact", "text": "Victim deploys on Monday."}])
    return attacker, victim, db


def victim_record(victim: Path) -> Any:
    with swarmmem.open(victim) as mem:
        (record,) = mem.list()
        return record


def hostile_rows(attacker: Path, victim: Path) -> dict[str, list[dict[str, Any]]]:
    """One row of each kind inside the attacker's scope, and several aimed at the victim."""
    own = make_memory("Attacker builds with make.", scope=repo_scope(attacker))
    theirs = repo_scope(victim)
    planted = make_memory("Victim deploys on Friday now.", scope=theirs)
    target = victim_record(victim)
    future_id = memory_id(theirs.as_dict(), "project_fact", "A fact the victim may learn.")
    forged = {**record_to_dict(own), "id": future_id}  # inside the scope, but not its id
    return {
        "memories.jsonl": [record_to_dict(own), record_to_dict(planted), forged],
        "proposals.jsonl": [
            proposal_to_dict(make_proposal(record=planted, created_at="2026-01-01T00:00:01.000Z")),
            proposal_to_dict(
                make_proposal(
                    operation="delete",
                    target=target.id,
                    created_at="2026-01-01T00:00:02.000Z",
                    rationale="delete the victim's fact",
                )
            ),
            proposal_to_dict(make_proposal(record=own, created_at="2026-01-01T00:00:03.000Z")),
        ],
        "outcome-events.jsonl": [
            outcome_event_to_dict(outcome_event("evt-own", own.id, "g1")),
            outcome_event_to_dict(outcome_event("evt-victim", target.id, "g1", outcome="dead_end")),
            outcome_event_to_dict(outcome_event("evt-future", future_id, "g1")),
        ],
    }


def check_victim_untouched(victim: Path, db: Path) -> None:
    with swarmmem.open(victim) as mem:
        assert [r.text for r in mem.list()] == ["Victim deploys on Monday."]
        assert mem.runtime.scoped_store.list_proposals() == []
        assert mem.runtime.scoped_store.list_outcomes() == []
        (record,) = mem.list()
        # nothing in the whole store is about the victim's memory
        assert {e.id for e in mem.store.list_outcomes()} <= {"evt-own"}
        assert all(p.target_memory_id != record.id for p in mem.store.list_proposals())
        assert all(
            p.proposed_record is None or p.proposed_record.scope.key != record.scope.key
            for p in mem.store.list_proposals()
        )


def test_legacy_jsonl_rows_of_another_repository_are_refused(
    projects: tuple[Path, Path, Path],
) -> None:
    attacker, victim, db = projects
    rows = hostile_rows(attacker, victim)
    storage = attacker / ".swarm" / "memory"
    for name, content in rows.items():
        write_jsonl(storage / name, content)
    with swarmmem.open(attacker) as mem:  # the first open imports the legacy files
        assert mem.list() == []  # its own memory row waits as a pending proposal
        proposals = mem.runtime.scoped_store.list_proposals()
        assert len(proposals) == 2
        assert "Attacker builds with make." in [
            p.proposed_record.text for p in proposals if p.proposed_record is not None
        ]
        assert mem.store.list_outcomes() == []  # about a memory that is only proposed
    report = json.loads((storage / "migration-report.json").read_text(encoding="utf-8"))
    assert (report["importedMemories"], report["proposedMemories"]) == (0, 1)
    refused = {(r["file"], r["line"]): r["reason"] for r in report["invalidRows"]}
    assert "outside the importing repository's scopes" in refused[("memories.jsonl", 2)]
    assert "id does not match" in refused[("memories.jsonl", 3)]
    assert "outside" in refused[("proposals.jsonl", 1)]
    assert "outside" in refused[("proposals.jsonl", 2)]
    assert "pending proposal" in refused[("outcome-events.jsonl", 1)]
    assert "outside" in refused[("outcome-events.jsonl", 2)]
    assert "outside" in refused[("outcome-events.jsonl", 3)]
    check_victim_untouched(victim, db)
    status = json.loads(cli(attacker, "status", "--json").stdout)
    assert status["migration"]["invalidCount"] == report["invalidCount"]


def test_swarmmem_import_refuses_rows_of_another_repository(
    projects: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    attacker, victim, db = projects
    dump = tmp_path / "dump"
    for name, content in hostile_rows(attacker, victim).items():
        write_jsonl(dump / name, content)
    result = cli(attacker, "import", "--dir", str(dump), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["importedOutcomes"] == 1 and data["importedProposals"] == 1
    reasons = [r["reason"] for r in data["invalidRows"]]
    assert sum("outside" in reason for reason in reasons) == 5
    # never a bare success: how many were refused, why, and what to do about them
    assert data["partial"] is True
    assert sum(r["count"] for r in data["refusedReasons"]) == data["invalidCount"]
    assert "5 refused row(s) belong to another repository" in data["hint"]
    text = cli(attacker, "import", "--dir", str(dump)).stdout
    assert f"Refused {data['invalidCount']} of {data['scannedRows']} rows; why:" in text
    assert "memory.projectId" in text
    check_victim_untouched(victim, db)


def test_import_records_refuses_another_repositorys_scope(
    projects: tuple[Path, Path, Path],
) -> None:
    attacker, victim, db = projects
    theirs = repo_scope(victim).as_dict()
    with swarmmem.open(attacker) as mem:
        result = mem.import_records(
            [
                {"kind": "project_fact", "text": "Victim deploys on Sunday.", "scope": theirs},
                {"kind": "project_fact", "text": "Attacker lints with ruff."},
            ]
        )
    assert result.written == 1
    assert [index for index, _ in result.refused] == [0]
    assert "outside this context's scopes" in result.refused[0][1]
    check_victim_untouched(victim, db)


def test_a_curator_cannot_decide_on_another_repositorys_proposal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hostile: two repositories sharing one SQLite file; the curator of one decided (and
    so wrote into memory) a pending proposal of the other by its id."""
    monkeypatch.setenv("SWARMMEM_SQLITE_PATH", str(tmp_path / "shared.db"))
    repos = []
    for name in ("alpha", "beta"):
        root = make_project(tmp_path / name)
        (root / "a.py").write_text("x = 1\n", encoding="utf-8")
        repos.append(root)
    alpha, beta = repos
    with swarmmem.open(alpha, context={"agent_role": "coder"}) as mem:
        prop = propose_fact(mem, "Alpha deploys on Fridays.", evidence="a.py")
    with swarmmem.open(beta, context={"agent_role": "curator"}) as mem:
        for decision in ("add", "reject"):
            with pytest.raises(NotFoundError):
                mem.curate(prop.id, decision, reason="not mine")
    with swarmmem.open(alpha) as mem:
        assert mem.store.get_proposal(prop.id).status == "pending"
        assert mem.list() == []

"""Curator decisions that rephrase, on every provider (in-memory, JSONL, SQLite, PostgreSQL):
a proposal the agent could not have made durable is rewritten by the curator, validated as
durable memory, and the audit event says it was rewritten."""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from factories import curate_fact, enabled_config, memory_project, propose_fact, run_swarmmem

import swarmmem
from swarmmem.core.model.errors import ConflictError, MemoryValidationError, NotFoundError
from swarmmem.results import proposal_json

PROVIDERS = ["memory", "local-jsonl", "sqlite", "postgres"]
LONG = "The retry helper " + "waits and retries the request again " * 30  # ~1,000 characters


@pytest.fixture(params=PROVIDERS)
def config(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    return enabled_config(request.param, tmp_path)


@pytest.fixture
def mem(tmp_path: Path, config: dict[str, Any]) -> Iterator[Any]:
    (tmp_path / "retry.py").write_text("def retry(): ...\n", encoding="utf-8")
    with swarmmem.open(tmp_path, config, context={"session_id": "s1", "agent_role": "coder"}) as m:
        yield m


def _curator_events(mem: Any, memory_id: str) -> list[dict[str, Any]]:
    return [e for e in mem.inspect(memory_id).audit if e["operation"] == "curator_decision"]


def test_a_non_durable_long_proposal_is_rephrased_into_memory(mem: Any) -> None:
    prop = propose_fact(
        mem, LONG, kind="api_finding", evidence="retry.py", rationale="found while debugging"
    )
    notes = proposal_json(prop)["needs_rephrasing"]
    assert len(notes) == 2
    assert notes[0].startswith("kind api_finding cannot become durable memory")
    assert "characters: durable memory holds concise facts under 500" in notes[1]
    with pytest.raises(MemoryValidationError, match="durable fact kinds"):
        mem.curate(prop.id, "add")
    assert mem.store.get_proposal(prop.id).status == "pending"  # nothing changed

    short = "retry() in retry.py retries a failed request up to three times."
    change = mem.curate(
        prop.id, "add", text=short, kind="code_pattern", tags=["http", "retry"], reason="ok"
    )
    assert change.rewritten == ("kind", "tags", "text")
    record = mem.get(change.memory_id)
    assert (record.text, record.kind, record.tags) == (short, "code_pattern", ("http", "retry"))
    assert record.stability == "durable" and record.active
    assert change.memory_id != prop.proposed_record.id  # the id follows the new text
    (event,) = _curator_events(mem, record.id)
    assert event["event"]["rewritten"] == ["kind", "tags", "text"]
    assert mem.store.get_proposal(prop.id).status == "applied"


def test_a_scratch_note_becomes_a_durable_fact(mem: Any) -> None:
    bare = mem.propose(operation="add", kind="scratch", text="retry waits 2s", rationale="note")
    assert proposal_json(bare)["needs_rephrasing"][0].startswith("kind scratch")
    with pytest.raises(MemoryValidationError, match="require source evidence"):
        mem.curate(bare.id, "add", kind="project_fact", text="retry() waits 2 s between tries.")
    sourced = propose_fact(
        mem, "retry waits 2s", kind="scratch", evidence="retry.py", rationale="note"
    )
    change = mem.curate(sourced.id, "add", kind="project_fact", text="retry() waits 2 s.")
    record = mem.get(change.memory_id)
    assert record.stability == "durable" and record.expires_at is None
    assert record.kind == "project_fact"


def test_a_rephrasing_that_is_still_not_durable_memory_is_refused(mem: Any) -> None:
    prop = propose_fact(mem, "check retry", kind="todo", evidence="retry.py", rationale="later")
    with pytest.raises(MemoryValidationError, match="under 500 characters"):
        mem.curate(prop.id, "add", kind="project_fact", text=LONG)
    with pytest.raises(MemoryValidationError, match="durable fact kinds"):
        mem.curate(prop.id, "add", text="retry() retries three times.")
    with pytest.raises(MemoryValidationError, match="likely secret"):
        mem.curate(
            prop.id, "add", kind="project_fact", text="The key is AKIAIOSFODNN7EXAMPLE here."
        )
    with pytest.raises(MemoryValidationError, match="rephrase add and update decisions only"):
        mem.curate(prop.id, "reject", text="x", reason="no")
    assert mem.store.get_proposal(prop.id).status == "pending"
    assert mem.list() == []


def test_an_update_can_be_rephrased(mem: Any) -> None:
    first = propose_fact(mem, "retry() retries twice.", kind="code_pattern", evidence="retry.py")
    old = mem.curate(first.id, "add").memory_id
    update = mem.propose(
        operation="update",
        kind="code_pattern",
        text="It is three now I think, see the PR discussion for details.",
        rationale="changed",
        target_memory_id=old,
        evidence_refs=["retry.py"],
    )
    change = mem.curate(update.id, "update", text="retry() retries three times.", reason="ok")
    assert change.rewritten == ("text",)
    assert mem.get(change.memory_id).text == "retry() retries three times."
    assert [r.text for r in mem.list()] == ["retry() retries three times."]


def test_the_command_line_rephrases_and_says_what_needs_it(tmp_path: Path) -> None:
    memory_project(tmp_path, {"retry.py": "x = 1\n"})
    cli = functools.partial(run_swarmmem, tmp_path)

    proposed = cli(
        "propose", "--kind", "api_finding", "--text", "retry() retries 3x",
        "--rationale", "r", "--evidence", "retry.py",
    )  # fmt: skip
    assert "needs rephrasing: kind api_finding cannot become durable memory" in proposed.stdout
    prop_id = proposed.stdout.split("proposal_id: ")[1].split()[0]
    done = cli(
        "--json", "curate", prop_id, "add", "--kind", "code_pattern", "--text", "-",
        stdin="retry() in retry.py retries a failed call three times.\n",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    change = json.loads(done.stdout)
    assert change["rewritten"] == ["kind", "text"]
    shown = json.loads(cli("--json", "show", change["memory_id"]).stdout)
    assert shown["record"]["text"] == "retry() in retry.py retries a failed call three times."


def _memory(mem: Any, text: str = "retry() retries twice.") -> str:
    return curate_fact(mem, text, kind="code_pattern", evidence="retry.py")


def test_pending_names_the_proposer_and_age_and_show_takes_proposal_ids(mem: Any) -> None:
    prop = mem.propose(
        operation="add", kind="api_finding", text="x", rationale="r", evidence_refs=["retry.py"]
    )
    (entry,) = mem.pending().pending
    assert entry["id"] == prop.id and entry["age"] == "just now"
    details = mem.inspect(prop.id)
    assert details.proposal["id"] == prop.id
    assert details.proposed_by == {"agent_role": "coder", "agent_id": None, "run_id": "s1"}
    assert details.needs_rephrasing[0].startswith("kind api_finding")
    assert [e["operation"] for e in details.audit] == ["proposal"]
    with pytest.raises(NotFoundError):
        mem.inspect("prop_0123456789abcdef")


def test_a_correction_becomes_a_pending_update_proposal(mem: Any) -> None:
    memory_id = _memory(mem)

    def correct() -> Any:
        """Report the memory corrected, under one event id each time (as a retried call does)."""
        return mem.record_outcome(
            memory_id=memory_id,
            outcome="corrected",
            correction="retry() retries three times since v2.",
            anchors=[{"file": "retry.py", "symbol": "retry"}],
            event_id="ev-1",
        )

    result = correct()
    prop = mem.store.get_proposal(result["correction_proposal_id"])
    assert (prop.operation, prop.status, prop.target_memory_id) == ("update", "pending", memory_id)
    assert prop.proposed_record.text == "retry() retries three times since v2."
    assert prop.evidence_refs == ("retry.py",)
    assert "ev-1" in prop.rationale
    # a retry of the same outcome files nothing new; the wrong text is recalled until decided
    again = correct()
    assert "correction_proposal_id" not in again
    assert len(mem.store.list_proposals("pending")) == 1
    change = mem.curate(prop.id, "update", reason="confirmed")
    assert mem.get(change.memory_id).text == "retry() retries three times since v2."
    # without anchors the memory's own source backs the correction
    other = mem.record_outcome(
        memory_id=change.memory_id, outcome="corrected", correction="retry() retries 4 times."
    )
    assert mem.store.get_proposal(other["correction_proposal_id"]).evidence_refs == ("retry.py",)


def test_question_outcomes_file_nothing_and_stay_out_of_list_and_recall(mem: Any) -> None:
    _memory(mem)
    result = mem.record_outcome(question="how often does retry retry?", outcome="useful")
    assert "correction_proposal_id" not in result
    assert [r.kind for r in mem.list()] == ["code_pattern"]
    recalled = mem.recall("how often does retry retry")
    assert all(i.record.kind == "code_pattern" for i in recalled.items)


def test_similar_memories_and_exact_duplicates_are_seen_at_propose_time(mem: Any) -> None:
    propose_code_pattern = functools.partial(
        propose_fact, mem, kind="code_pattern", evidence="retry.py"
    )
    original = _memory(mem, "retry() in retry.py retries a failed request three times.")
    near = propose_code_pattern("retry() in retry.py retries a failed request up to three times.")
    result = proposal_json(near)
    assert result["status"] == "pending" and result["duplicate_of"] is None
    assert [s["memory_id"] for s in result["similar"]] == [original]
    assert 0.5 <= result["similar"][0]["score"] < 1
    assert mem.pending().pending[0]["id"] == near.id
    assert mem.inspect(near.id).similar == result["similar"]
    unrelated = propose_code_pattern("Logging goes through structlog with JSON output.")
    assert proposal_json(unrelated)["similar"] == []
    # a shorter restatement of a long memory: few of the memory's words, all of its own
    long = _memory(
        mem,
        "The HTTP client in client.py sends every request through a session that keeps "
        "connections alive, sets a ten second timeout and adds the API token header.",
    )
    short = propose_code_pattern(
        "client.py sends every request through a session with a ten second timeout."
    )
    (similar,) = proposal_json(short)["similar"]
    assert similar["memory_id"] == long and similar["score"] < 0.5  # Jaccard alone missed it

    same = propose_code_pattern(
        "retry() in retry.py retries a failed request three times.",
        rationale="again",
    )
    answer = proposal_json(same)
    assert (answer["status"], answer["duplicate_of"]) == ("rejected", original)
    assert original in answer["rejection_reason"]
    # the same proposal filed twice (two sessions, say) waits for review once
    again = propose_code_pattern(
        "retry() in retry.py retries a failed request up to three times.",
        rationale="from another session",
    )
    assert proposal_json(again)["duplicate_of"] == near.id
    assert {p.id for p in mem.store.list_proposals("pending")} == {
        near.id,
        unrelated.id,
        short.id,
    }


@pytest.fixture
def user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "user-config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    return folder


def _open(root: Path, config: dict[str, Any]) -> Any:
    return swarmmem.open(root, config, context={"session_id": "s2", "agent_role": "coder"})


def test_the_curation_policy_is_off_unless_the_person_grants_it(
    tmp_path: Path, config: dict[str, Any], user_config: Path
) -> None:
    from swarmmem.grants import set_grant

    root = tmp_path / "project"
    root.mkdir()
    (root / "retry.py").write_text("def retry(): ...\n", encoding="utf-8")
    # a cloned repository cannot switch it on: a grants file inside it is ignored
    inside = root / ".config" / "swarmmem"
    inside.mkdir(parents=True)
    (inside / "grants.json").write_text(
        json.dumps({"curation-policy": [str(root.resolve())]}), encoding="utf-8"
    )
    os.environ["XDG_CONFIG_HOME"] = str(root / ".config")
    with _open(root, config) as mem:
        assert _memory_proposal(mem).status == "pending"
    os.environ["XDG_CONFIG_HOME"] = str(user_config)
    set_grant(root, "curation-policy")
    with _open(root, config) as mem:
        auto = _memory_proposal(mem, "retry() gives up after three failed calls.")
        assert (auto.status, auto.reviewer) == ("applied", "auto_policy")
        written = auto.metadata["curatorDecision"]["memoryId"]
        assert mem.get(written).active
        (event,) = [e for e in mem.inspect(written).audit if e["operation"] == "curator_decision"]
        assert event["event"]["decidedBy"] == "auto_policy"
        assert mem.pending().policy_decided[0]["id"] == auto.id
        # what the policy does not cover waits for a person
        waits = [
            mem.propose(operation="add", kind="api_finding", text="a", rationale="r",
                        evidence_refs=["retry.py"]),
            mem.propose(operation="add", kind="code_pattern", text="b", rationale="r",
                        evidence_refs=["manual:said in standup"]),
            _memory_proposal(mem, "retry() gives up after three failed calls, always."),
        ]  # fmt: skip
        assert [p.status for p in waits] == ["pending"] * 3
        assert waits[2].metadata["similar"][0]["memoryId"] == written
        # and its decision can be undone
        undone = mem.undo_decision(auto.id)
        assert undone.forgotten_memory_id == written and not mem.get(written).active
        # the re-filed copy waits for a person: the policy does not approve it again
        assert mem.store.get_proposal(undone.refiled_proposal_id).status == "pending"


def _memory_proposal(mem: Any, text: str = "retry() retries three times.") -> Any:
    return propose_fact(
        mem, text, kind="code_pattern", evidence="retry.py", rationale="read the code"
    )


def test_undo_takes_back_an_approval_or_a_rejection(mem: Any) -> None:
    approved = _memory_proposal(mem)
    memory_id = mem.curate(approved.id, "add").memory_id
    result = mem.undo_decision(approved.id)
    assert result.forgotten_memory_id == memory_id
    assert not mem.get(memory_id).active
    again = mem.store.get_proposal(result.refiled_proposal_id)
    assert again.status == "pending" and "re-filed by undo of add" in again.rationale
    mem.curate(again.id, "reject", reason="no")
    assert mem.undo_decision(again.id).forgotten_memory_id is None
    with pytest.raises(ConflictError, match="still pending"):
        mem.undo_decision(_memory_proposal(mem, "Another retry fact.").id)


def test_a_decision_is_undone_once_and_the_copy_keeps_its_proposer(mem: Any) -> None:
    approved = _memory_proposal(mem)
    mem.curate(approved.id, "add")
    copy_id = mem.undo_decision(approved.id).refiled_proposal_id
    copy = mem.store.get_proposal(copy_id)
    assert copy.proposed_by == approved.proposed_by  # coder of session s1, not the undoer
    assert mem.store.get_proposal(approved.id).metadata["undoneBy"] == copy_id
    before = sorted(p.id for p in mem.store.list_proposals())
    with pytest.raises(ConflictError, match=f"already undone: .* filed again as {copy_id}"):
        mem.undo_decision(approved.id)
    assert sorted(p.id for p in mem.store.list_proposals()) == before  # nothing filed
    mem.curate(copy_id, "reject", reason="not now")  # the copy is decided on its own
    assert mem.undo_decision(copy_id).refiled_proposal_id not in before


def test_an_undone_approval_waits_again_beside_an_update_that_restates_it(mem: Any) -> None:
    """A pending update that restates a memory (as ``verify --propose`` files one when its
    evidence changed) is not a pending add of it: once an undo forgets the memory, the add
    filed again waits for a person instead of being closed as that update's duplicate."""
    approved = _memory_proposal(mem)
    memory_id = mem.curate(approved.id, "add").memory_id
    record = mem.get(memory_id)
    update = mem.propose(
        operation="update",
        target_memory_id=memory_id,
        kind=record.kind,
        text=record.text,
        rationale="its evidence changed",
        evidence_refs=list(approved.evidence_refs),
    )
    assert update.status == "pending"
    copy = mem.proposal(mem.undo_decision(approved.id).refiled_proposal_id)
    assert (copy.status, copy.metadata.get("duplicateOf")) == ("pending", None)
    again = propose_fact(mem, record.text, kind="code_pattern", evidence="retry.py")
    assert again.metadata.get("duplicateOf") == copy.id  # a second add is the copy's duplicate


def test_consolidate_proposes_merges_and_supersessions_and_writes_nothing(mem: Any) -> None:
    (mem.root / "lint.py").write_text("LINE = 100\n", encoding="utf-8")
    dupes = [
        _memory(mem, "Lint the code with ruff check before every commit to main."),
        _memory(mem, "Lint the code with ruff check before each commit to main."),
        _memory(mem, "Always lint the code with ruff check before every commit to main."),
    ]
    old = _memory(mem, "retry() in retry.py retries a failed request 3 times.")
    time.sleep(0.01)  # the newer fact is written later
    new = _memory(mem, "retry() in retry.py now retries a failed request 5 times.")
    lone = _memory(mem, "Logging goes through structlog with JSON output.")
    before = {r.id: r for r in mem.list()}
    result = mem.consolidate()
    assert (result.merge_count, result.supersede_count) == (1, 1)
    merge = next(p for p in result.proposals if p["operation"] == "merge")
    assert sorted(merge["related_memory_ids"]) == sorted(dupes)
    supersede = next(p for p in result.proposals if p["operation"] == "supersede")
    assert supersede["target_memory_id"] == old
    assert lone not in json.dumps(result.proposals)
    assert {r.id: r for r in mem.list()} == before  # nothing written
    assert mem.consolidate().proposals == []  # already pending: not filed twice

    change = mem.curate(supersede["proposal_id"], "supersede", reason="the code changed")
    shown = mem.inspect(old)
    assert shown.state == "superseded" and shown.provenance["valid_to"]
    assert change.replacement_memory_id == new


def test_with_embeddings_on_similar_memories_are_found_by_meaning(tmp_path: Path) -> None:
    """Two wordings of one fact share few tokens (overlap under 0.5) but their MiniLM
    embeddings are close: the proposal names the memory; an unrelated one names nothing."""
    from swarmmem.adapters.models.onnx_embedder import OnnxMiniLmEmbedder

    if (reason := OnnxMiniLmEmbedder().unavailable_reason) is not None:
        pytest.skip(f"dense extra not usable: {reason}")
    (tmp_path / "db.py").write_text("ENGINE = None\n", encoding="utf-8")
    config = {"enabled": True, "embeddings": {"enabled": True}}
    with swarmmem.open(tmp_path, config, context={"agent_role": "coder"}) as mem:
        propose_convention = functools.partial(
            propose_fact, mem, kind="repo_convention", evidence="db.py"
        )
        first = propose_convention("Database migrations are managed with alembic.")
        original = mem.curate(first.id, "add").memory_id
        reworded = propose_convention("We manage database migrations using alembic.")
        unrelated = propose_convention("Logs are shipped to Loki through promtail.")
    (found,) = proposal_json(reworded)["similar"]
    assert found["memory_id"] == original and found["score"] >= 0.85
    assert proposal_json(unrelated)["similar"] == []


def test_undo_on_the_command_line_keeps_the_proposer_and_refuses_a_second_time(
    tmp_path: Path,
) -> None:
    """An agent proposes (role coder, session s7); a person approves and undoes it twice."""
    root = memory_project(tmp_path / "p", {"retry.py": "def retry(): ...\n"})
    env = {"HOME": str(tmp_path / "home")}

    def sm(*args: str, code: int = 0) -> Any:
        done = run_swarmmem(root, "--json", *args, env=env)
        assert done.returncode == code, done.stdout + done.stderr
        return json.loads(done.stdout)

    prop = sm(
        "--role", "coder", "--session", "s7", "propose", "--kind", "code_pattern",
        "--text", "retry() retries three times.", "--rationale", "r", "--evidence", "retry.py",
    )["proposal_id"]  # fmt: skip
    sm("curate", prop, "add")
    copy = sm("undo", prop)["refiled_proposal_id"]
    shown = sm("show", copy)
    assert shown["proposed_by"] == {"agent_role": "coder", "agent_id": None, "run_id": "s7"}
    before = sm("pending")["pending"]
    refused = sm("undo", prop, code=2)
    assert refused["error"] == "conflict" and copy in refused["message"]
    text = run_swarmmem(root, "undo", prop, env=env)
    assert text.returncode == 2 and "already undone" in text.stderr and copy in text.stderr
    assert sm("pending")["pending"] == before and sm("pending")["rejected"] == []

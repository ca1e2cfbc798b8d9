"""The gateway: proposals, curation, recall, outcomes, scopes and task-output ingestion."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from factories import cite, curate_fact, propose_fact

import swarmmem
from swarmmem.adapters.storage.memory import InMemoryStore
from swarmmem.core.model.errors import (
    ConflictError,
    MemoryDisabledError,
    MemoryValidationError,
    NotFoundError,
    ScopeError,
)
from swarmmem.core.model.records import Anchor, MemoryScope
from swarmmem.ports.clock import FixedClock

CLOCK_START = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.timezone.utc)


@pytest.fixture
def mem(tmp_path: Path):
    """An enabled in-memory Memory for a coder session."""
    with swarmmem.open(
        tmp_path,
        config={"enabled": True},
        context={"session_id": "s1", "agent_role": "coder"},
        store=InMemoryStore(),
        clock=FixedClock(CLOCK_START),
    ) as memory:
        yield memory


def add_fact(mem, text="Run tests with pytest -q from the repo root.", kind="test_pattern"):
    """Propose and curate one fact; return its memory id."""
    return curate_fact(mem, text, kind=kind, rationale="useful")


def test_propose_creates_pending_proposal_only(mem) -> None:
    """Proposals never write durable memory."""
    prop = propose_fact(mem, "Use ruff.", kind="repo_convention", rationale="style")
    assert prop.status == "pending"
    assert prop.proposed_record.scope.type == "repository"
    assert mem.store.count() == 0


def test_secret_in_proposal_is_redacted_and_auto_rejected(mem) -> None:
    """A likely secret is redacted and the proposal rejected by auto_policy."""
    prop = propose_fact(
        mem,
        "Deploy key AKIAABCDEFGHIJKLMNOP for staging",
        kind="repo_convention",
        rationale="token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        evidence="docs/deploy.md",
    )
    assert prop.status == "rejected" and prop.reviewer == "auto_policy"
    assert "AKIA" not in prop.proposed_record.text and "ghp_" not in prop.rationale
    assert prop.rejection_reason.endswith("redacted: rationale, text")
    assert mem.store.get_proposal(prop.id).status == "rejected"


def test_durable_kind_without_evidence_is_refused(mem) -> None:
    """Durable kinds need an evidence ref."""
    with pytest.raises(MemoryValidationError, match="require source evidence"):
        mem.propose(operation="add", kind="project_fact", text="Something true.", rationale="r")


def test_proposal_field_rules(mem) -> None:
    """Missing kind/text/target/related ids are refused with clear messages."""
    with pytest.raises(MemoryValidationError, match="kind is required"):
        mem.propose(operation="add", text="x", rationale="r")
    with pytest.raises(MemoryValidationError, match="update proposals require targetMemoryId"):
        mem.propose(
            operation="update", kind="project_fact", text="x", rationale="r", evidence_refs=["a.md"]
        )
    with pytest.raises(MemoryValidationError, match="merge proposals require relatedMemoryIds"):
        mem.propose(operation="merge", rationale="r", related_memory_ids=["mem_1"])
    with pytest.raises(MemoryValidationError, match="rationale is required"):
        mem.propose(operation="add", kind="scratch", text="x", rationale="   ")


def test_curate_add_then_recall(mem) -> None:
    """A curated fact is recalled with a prompt block and recall usage is recorded."""
    memory_id = add_fact(mem)
    bundle = mem.recall("how do I run the tests")
    assert [it.record.id for it in bundle.items] == [memory_id]
    assert bundle.prompt_block.startswith("## Retrieved Swarm Memory\nSwarm-Recall-Bundle: bundle_")
    usage = mem.store.list_recall_usage()
    assert usage[-1].memory_ids == (memory_id,)
    assert usage[-1].bundle_id == bundle.id
    assert usage[-1].run_id == "s1"


def test_curate_twice_is_a_conflict(mem) -> None:
    """A decided proposal cannot be decided again; an unknown one is not found."""
    prop = propose_fact(mem, "Use tox.", kind="test_pattern", evidence="tox.ini")
    mem.curate(prop.id, "reject", reason="duplicate")
    with pytest.raises(ConflictError, match="not pending"):
        mem.curate(prop.id, "add")
    with pytest.raises(NotFoundError):
        mem.curate("prop_0000000000000000", "add")


def test_recall_input_validation_and_clamps(mem) -> None:
    """Short queries and unknown kinds are refused; sizes are clamped."""
    with pytest.raises(MemoryValidationError, match="at least 3 characters"):
        mem.recall(" a ")
    with pytest.raises(MemoryValidationError, match="unknown memory kind 'recipes'") as caught:
        mem.recall("tests please", kinds=["recipes", "project_fact"])
    assert "'project_fact'" not in str(caught.value)  # only the unknown kinds are named
    assert "(the kinds: user_preference, project_fact, " in str(caught.value)
    with pytest.raises(MemoryValidationError, match=r"kind 'gotcha' \(the kinds: user_pref"):
        mem.propose(operation="add", kind="gotcha", text="Run tests: make check", rationale="seen")
    request = mem.runtime.recall.build_request("tests please", max_items=99, token_budget=5)
    assert request.max_items == 20 and request.token_budget == 100


def test_recall_refuses_foreign_scopes(mem) -> None:
    """A scope outside the context's allowed list is refused."""
    foreign = MemoryScope(type="repository", repo_id="someone-else")
    with pytest.raises(ScopeError, match="not allowed"):
        mem.recall("tests please", scopes=[foreign])
    with pytest.raises(ScopeError, match="must not be empty"):
        mem.recall("tests please", scopes=[])


def test_other_repository_never_sees_memories(tmp_path: Path) -> None:
    """Two projects sharing one store do not see each other's memories."""
    store = InMemoryStore()
    a, b = tmp_path / "alpha", tmp_path / "beta"
    a.mkdir()
    b.mkdir()
    with swarmmem.open(a, config={"enabled": True}, store=store) as mem_a:
        add_fact(mem_a, "Alpha uses pytest for tests.")
    with swarmmem.open(b, config={"enabled": True}, store=store) as mem_b:
        assert mem_b.recall("pytest tests").items == ()


def test_outcome_rules(mem) -> None:
    """Exactly one target, correction only when corrected, anchors validated."""
    memory_id = add_fact(mem)
    with pytest.raises(MemoryValidationError, match="exactly one of memory_id or question"):
        mem.record_outcome(outcome="useful")
    with pytest.raises(MemoryValidationError, match="corrected outcomes require correction"):
        mem.record_outcome(memory_id=memory_id, outcome="corrected")
    with pytest.raises(MemoryValidationError, match="only valid for corrected"):
        mem.record_outcome(memory_id=memory_id, outcome="useful", correction="x")
    with pytest.raises(MemoryValidationError, match="repository-relative"):
        mem.record_outcome(memory_id=memory_id, outcome="useful", anchors=[{"file": "/etc/passwd"}])
    with pytest.raises(MemoryValidationError, match="'\\.\\.'"):
        mem.record_outcome(memory_id=memory_id, outcome="useful", anchors=[{"file": "a/../../b"}])
    with pytest.raises(NotFoundError):
        mem.record_outcome(memory_id="mem_0000000000000000", outcome="useful")
    result = mem.record_outcome(
        memory_id=memory_id,
        outcome="corrected",
        correction="Use pytest -q -x instead.",
        anchors=[{"file": "./tests\\unit/test_a.py", "symbol": "test_x"}],
    )
    assert result["outcome_recorded"] and result["outcomes"] == 1
    event = mem.store.list_outcomes(memory_id)[-1]
    assert event.anchors == (Anchor(file="tests/unit/test_a.py", symbol="test_x"),)


def test_outcome_event_id_is_idempotent(mem) -> None:
    """Retrying with the same event id is a no-op; a different payload conflicts."""
    memory_id = add_fact(mem)
    mem.record_outcome(memory_id=memory_id, outcome="useful", event_id="tool-1")
    again = mem.record_outcome(memory_id=memory_id, outcome="useful", event_id="tool-1")
    assert again["outcomes"] == 1
    with pytest.raises(ConflictError, match="different payload"):
        mem.record_outcome(memory_id=memory_id, outcome="dead_end", event_id="tool-1")


def test_question_outcome_creates_evidence_record(mem) -> None:
    """A question without a memory id gets a lightweight evidence record."""
    result = mem.record_outcome(question="Which parser is current?", outcome="dead_end")
    record = mem.store.get(result["memory_id"])
    assert record.kind == "evidence"
    assert record.text == "Outcome evidence for question: Which parser is current?"


def test_task_output_ingestion(tmp_path: Path) -> None:
    """memoryProposals are accepted from anyone; curator decisions only from curators."""
    store = InMemoryStore()
    cite(tmp_path, "pyproject.toml")
    output = "done.\n" + json.dumps(
        {
            "memoryProposals": [
                {
                    "operation": "add",
                    "kind": "repo_convention",
                    "text": "Use black.",
                    "rationale": "style",
                    "evidenceRefs": ["pyproject.toml"],
                },
                {"operation": "add", "kind": "nonsense", "text": "x", "rationale": "r"},
            ]
        }
    )
    with swarmmem.open(
        tmp_path, config={"enabled": True}, store=store, context={"agent_role": "coder"}
    ) as coder:
        result = coder.runtime.writes.ingest_task_output(output)
        assert len(result["proposals"]) == 1 and len(result["rejected"]) == 1
        decisions = json.dumps(
            {"curatorMemoryDecisions": [{"proposalId": result["proposals"][0], "action": "add"}]}
        )
        refused = coder.runtime.writes.ingest_task_output(decisions)
        assert refused["decisions"] == []
        assert "only curator agents" in refused["rejected"][0]["error"]
        assert coder.runtime.writes.ingest_task_output("not json {at all") == {
            "proposals": [],
            "decisions": [],
            "rejected": [],
            "duplicates": [],
        }
        # the same proposal again is closed as a duplicate of the pending one, never "filed"
        again = coder.runtime.writes.ingest_task_output(output)
        assert again["proposals"] == []
        assert [d["duplicateOf"] for d in again["duplicates"]] == result["proposals"]
    with swarmmem.open(
        tmp_path, config={"enabled": True}, store=store, context={"agent_role": "curator_phase"}
    ) as curator:
        applied = curator.runtime.writes.ingest_task_output(decisions)
        assert applied["decisions"] == [result["proposals"][0]]
        assert store.count() == 1


BLOCK = '{"memoryProposals": [{"operation": "add", "kind": "x", "text": "t"}]}'
NOISE = ["{", '{"a":"', '{"a":' * 900 + "x", '{"memoryProposals":x}', 'printf("{");\n']


@pytest.mark.parametrize("noise", NOISE, ids=["braces", "open-strings", "deep", "keyed", "code"])
def test_task_output_blocks_are_found_in_linear_work(
    noise: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hostile: 400 KB of braces before a block cost 30 s in the stop hook (each failed
    decode built an error whose line number counts every character before it). The decoder
    now sees each character a bounded number of times, and the block is still found."""
    from swarmmem.core.writes.intake import json_objects

    text = (noise * (400_000 // len(noise) + 1))[:400_000] + "\n" + BLOCK
    work = {"decoded": 0, "error_offsets": 0}
    loads, error_init = json.loads, json.JSONDecodeError.__init__

    def counted_loads(doc: str, *args: object, **kwargs: object) -> object:
        work["decoded"] += len(doc)
        return loads(doc, *args, **kwargs)

    def counted_error(self: json.JSONDecodeError, msg: str, doc: str, pos: int) -> None:
        work["error_offsets"] += pos  # what building the error reads (its line and column)
        error_init(self, msg, doc, pos)

    monkeypatch.setattr(json, "loads", counted_loads)
    monkeypatch.setattr(json.JSONDecodeError, "__init__", counted_error)
    assert json_objects(text) == [json.loads(BLOCK)]
    bound = 10 * len(text)  # MAX_RETRY_DEPTH undecodable objects deep, and the one that decodes
    assert work["decoded"] <= bound and work["error_offsets"] <= bound, work


def test_disabled_memory_writes_nothing(tmp_path: Path) -> None:
    """Disabled memory raises a clear error and creates no files."""
    with swarmmem.open(tmp_path) as memory:
        assert not memory.enabled
        with pytest.raises(MemoryDisabledError, match="disabled"):
            memory.recall("anything here")
        with pytest.raises(MemoryDisabledError):
            memory.propose(operation="add", kind="scratch", text="x", rationale="r")
        assert memory.inject(agent_task="fix tests", user_goal="green build") is None
    assert not (tmp_path / ".swarm").exists()


def test_injection_logs_skip_reasons_and_guards_double_injection(mem) -> None:
    """Injection needs a signal, logs why it skipped, and never injects twice."""
    from swarmmem.adapters.files.runlog import read_run_events

    add_fact(mem)
    bundle = mem.inject(agent_task="run the pytest tests", user_goal="green tests")
    assert bundle is not None and bundle.items
    assert mem.inject(agent_task="run the pytest tests", messages=[bundle.prompt_block]) is None
    assert mem.inject(agent_task="paint bikeshed", user_goal="colours") is None
    reasons = [
        e.get("reason")
        for e in read_run_events(mem.root, "s1")
        if e["type"] == "prompt_injection_skipped"
    ]
    assert reasons[0] == "already_injected"
    assert reasons[1] in ("no_signal", "no_results", "below_threshold")


def test_import_records_fills_and_refuses(mem) -> None:
    """Trusted bulk import derives missing fields and reports refused rows."""
    result = mem.import_records(
        [
            {
                "kind": "repo_convention",
                "text": "Branches are named feat/<topic>.",
                "source": {"type": "file", "filePath": "CONTRIBUTING.md"},
            },
            {"kind": "repo_convention", "text": "Unknown key here.", "surprise": True},
            {"kind": "scratch", "text": "temporary note"},
            "not a record",
        ]
    )
    assert result.written == 2
    assert [index for index, _ in result.refused] == [1, 3]
    scratch = next(r for r in mem.store.iter_all_records() if r.kind == "scratch")
    assert scratch.expires_at == "2026-03-08T12:00:00.000Z"


def _pii_memory(tmp_path: Path, **redaction):
    """An enabled in-memory Memory with PII detection configured."""
    config = {"enabled": True, "redaction": {"detectPii": True, **redaction}}
    return swarmmem.open(
        tmp_path, config=config, store=InMemoryStore(), context={"agent_role": "coder"}
    )


def test_pii_summary_is_stored_without_the_matched_text(tmp_path: Path) -> None:
    """detectPii attaches types, counts and score to the proposal, never the text itself."""
    with _pii_memory(tmp_path) as mem:
        prop = propose_fact(mem, "Escalate to ops@example.com.", evidence="docs/oncall.md")
        assert prop.metadata["pii"] == {"score": 0.9, "countsByType": {"email": 1}}
        assert "ops@example.com" not in json.dumps(prop.metadata)


def test_durable_pii_is_rejected_and_audited(tmp_path: Path) -> None:
    """rejectDurablePii refuses text above the threshold and logs a pii_rejected event."""
    from swarmmem.core.model.errors import MemoryPiiRejectedError

    with _pii_memory(tmp_path, rejectDurablePii=True) as mem:
        with pytest.raises(MemoryPiiRejectedError, match=r"score 0\.90 \(types: emailx1\)"):
            propose_fact(mem, "Escalate to ops@example.com.", evidence="docs/oncall.md")
        events = [e for e in mem.store.list_events() if e.operation == "pii_rejected"]
        assert len(events) == 1 and "ops@example.com" not in (events[0].event_json or "")
        assert mem.store.list_proposals() == []
        phone_only = propose_fact(mem, "Desk line 555 123 4567.", evidence="docs/oncall.md")
        assert phone_only.status == "pending"  # a phone alone scores 0.7, not above 0.7
        memory_id = mem.curate(phone_only.id, "add").memory_id
        with pytest.raises(MemoryPiiRejectedError, match="correction"):
            mem.record_outcome(
                memory_id=memory_id, outcome="corrected", correction="Call 123-45-6789 instead."
            )


def test_ner_detector_fails_closed_without_a_model(tmp_path: Path) -> None:
    """Choosing the NER detector without a local model is an error naming what to install."""
    from swarmmem.core.model.errors import MemoryPiiDetectorError

    with (
        _pii_memory(tmp_path, piiDetector="ner") as mem,
        pytest.raises(MemoryPiiDetectorError, match="regex"),
    ):
        propose_fact(mem, "Alice owns the billing service.", evidence="docs/owners.md")

"""``swarmmem review``: the review state machine driven by scripted keys on a real SQLite-backed
memory, the filters and durations, and the batch mode's usage rules (in process)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import swarmmem
from swarmmem.cli import main
from swarmmem.cli.review import Filters, Reviewer, parse_duration
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.records import MemoryProposal
from swarmmem.memory import Memory

RETRY = "Retry HTTP calls three times with exponential backoff in retry.py."
NEAR_RETRY = "Retry HTTP calls three times with exponential backoff."
FINDING = "The payments API answers HTTP 429 when called more than ten times a second."


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    """An enabled SQLite-backed memory in ``tmp_path`` (session s1, role coder) whose
    repository holds retry.py, the evidence every proposal cites."""
    (tmp_path / "retry.py").write_text("def retry(call): ...\n", encoding="utf-8")
    context = {"session_id": "s1", "agent_role": "coder"}
    with swarmmem.open(tmp_path, config={"enabled": True}, context=context) as memory:
        yield memory


def propose(mem: Memory, text: str, kind: str = "repo_convention", **fields: Any) -> MemoryProposal:
    """A pending add citing retry.py (created a little after the previous one, so the
    queue order is the order of the calls)."""
    time.sleep(0.003)
    fields.setdefault("operation", "add")
    fields.setdefault("rationale", f"seen while reading retry.py: {text[:20]}")
    prop = mem.propose(kind=kind, text=text, evidence_refs=["retry.py"], **fields)
    assert prop.status == "pending", prop.rejection_reason
    return prop


def approved(mem: Memory, text: str) -> str:
    """The id of a memory holding ``text``, written through an approved proposal."""
    change = mem.curate(propose(mem, text).id, "add")
    assert change.memory_id is not None
    return change.memory_id


class Script:
    """The reviewer's input: the scripted answers in order, then the end of input."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.prompts: list[tuple[str, bool]] = []
        self.prefills: list[str] = []

    def __call__(self, prompt: str, *, key: bool = False, prefill: str = "") -> str:
        self.prompts.append((prompt, key))
        self.prefills.append(prefill)
        if not self.answers:
            raise EOFError
        return self.answers.pop(0)


def review(
    mem: Memory, *answers: str, filters: Filters | None = None
) -> tuple[str, dict[str, int]]:
    """Run a review answering ``answers``; its printed text and summary."""
    out: list[str] = []
    script = Script(*answers)
    reviewer = Reviewer(mem, script, out.append, filters or Filters())
    summary = reviewer.run()
    assert not script.answers, f"unused answers {script.answers}"
    return "\n".join(out), summary


def status(mem: Memory, proposal_id: str) -> MemoryProposal:
    prop = mem.store.get_proposal(proposal_id)
    assert prop is not None
    return prop


def pending(mem: Memory) -> list[MemoryProposal]:
    return mem.store.list_proposals("pending")


def counts(summary: dict[str, int], **expected: int) -> None:
    """The summary counts: ``expected`` ones as given, the others zero."""
    names = ("approved", "rejected", "merged", "skipped", "undone")
    assert {n: summary[n] for n in names} == {n: expected.get(n, 0) for n in names}


# ------------------------------------------------------------------------- deciding
def test_approve_writes_the_proposed_memory_and_shows_who_proposed_it(mem: Memory) -> None:
    prop = propose(mem, RETRY, rationale="The retry helper says so.")
    text, summary = review(mem, "a")
    assert status(mem, prop.id).status == "applied"
    written = status(mem, prop.id).metadata["curatorDecision"]["memoryId"]
    record = mem.get(written)
    assert (record.text, record.kind, record.active) == (RETRY, "repo_convention", True)
    for shown in (prop.id, RETRY, "The retry helper says so.", "Evidence: retry.py"):
        assert shown in text
    assert "Proposed by coder (session s1), just now" in text
    assert f"Applied add to {prop.id} -> {written}" in text
    counts(summary, approved=1)
    assert summary["pending"] == 0
    assert "1 approved, 0 rejected, 0 merged, 0 skipped, 0 undone" in text


def test_edit_then_approve_writes_the_new_text_and_kind(mem: Memory) -> None:
    prop = propose(mem, FINDING, kind="api_finding")
    new_text = "Throttle payments API calls to ten a second; it answers HTTP 429 above that."
    text, summary = review(mem, "e", new_text, "failure_pattern", "")
    assert "Needs rephrasing: kind api_finding cannot become durable memory" in text
    assert f"Current text: {FINDING}" in text
    decision = status(mem, prop.id).metadata["curatorDecision"]
    assert decision["rewritten"] == ["kind", "text"]
    record = mem.get(decision["memoryId"])
    assert (record.text, record.kind) == (new_text, "failure_pattern")
    counts(summary, approved=1)


def test_edit_with_enter_twice_approves_the_proposal_as_it_is(mem: Memory) -> None:
    prop = propose(mem, RETRY)
    review(mem, "e", "", "", "")
    decision = status(mem, prop.id).metadata["curatorDecision"]
    assert "rewritten" not in decision
    assert mem.get(decision["memoryId"]).text == RETRY


def test_a_kind_typo_is_asked_again_and_keeps_the_new_text(mem: Memory) -> None:
    """The edit offers the current text to edit in place (``prefill``) and asks again for a
    kind that is none, naming the nearest; the text typed first is what gets approved."""
    prop = propose(mem, FINDING, kind="api_finding")
    new_text = "Throttle payments API calls to ten a second; it answers HTTP 429 above that."
    out: list[str] = []
    script = Script("e", new_text, "failure_patern", "failure_pattern", "")
    Reviewer(mem, script, out.append, Filters()).run()
    text = "\n".join(out)
    assert "'failure_patern' is no memory kind; did you mean failure_pattern?" in text
    assert FINDING in script.prefills  # the current text, offered to edit in place
    record = mem.get(status(mem, prop.id).metadata["curatorDecision"]["memoryId"])
    assert (record.text, record.kind) == (new_text, "failure_pattern")


def test_edit_gives_the_memory_other_evidence_refs(mem: Memory, tmp_path: Path) -> None:
    """The edit offers the proposal's refs to edit in place; refs that do not hold are shown
    and asked for again; the memory is fingerprinted from the refs given, keeps them, and the
    decision records that the evidence was rewritten."""
    (tmp_path / "http.py").write_text("def call():\n    retries = 3\n", encoding="utf-8")
    prop = propose(mem, RETRY)
    script = Script("e", "", "", "nowhere.py", "retry.py, http.py:2")
    out: list[str] = []
    Reviewer(mem, script, out.append, Filters()).run()
    text = "\n".join(out)
    assert "retry.py" in script.prefills
    assert "evidence 'nowhere.py' names no file of the repository" in text
    decision = status(mem, prop.id).metadata["curatorDecision"]
    assert decision["rewritten"] == ["evidence"]
    record = mem.get(decision["memoryId"])
    assert record.metadata["evidenceRefs"] == ["retry.py", "http.py:2"]
    cited = [fp["path"] for fp in record.metadata["evidenceFingerprints"]]
    assert cited == ["retry.py", "http.py"]
    refs = [r["ref"] for r in mem.evidence_freshness(record.id).refs]
    assert refs == ["retry.py", "http.py:2"]


def test_edited_evidence_is_checked_like_a_proposals(mem: Memory) -> None:
    prop = propose(mem, RETRY)
    for refs, message in (
        ([], "at least one evidence ref"),
        (["ghp_" + "a" * 36], "likely secret"),
        (["missing.py"], "names no file"),
    ):
        with pytest.raises(MemoryValidationError, match=message):
            mem.curate(prop.id, "add", evidence_refs=refs)
    with pytest.raises(MemoryValidationError, match="add and update decisions only"):
        mem.curate(prop.id, "reject", evidence_refs=["retry.py"])
    assert status(mem, prop.id).status == "pending"


def test_three_kind_typos_cancel_the_edit_and_keep_the_proposal_pending(mem: Memory) -> None:
    prop = propose(mem, FINDING, kind="api_finding")
    text, summary = review(mem, "e", "A new text for it.", "x", "y", "z")
    assert f"Edit cancelled: {prop.id} stays pending." in text
    assert status(mem, prop.id).status == "pending"
    counts(summary)


def test_reject_records_the_reason_or_the_default_one(mem: Memory) -> None:
    first, second = propose(mem, RETRY), propose(mem, FINDING, kind="api_finding")
    text, summary = review(mem, "r", "retry.py retries five times", "r", "")
    assert status(mem, first.id).status == "rejected"
    assert status(mem, first.id).rejection_reason == "retry.py retries five times"
    assert status(mem, second.id).rejection_reason == "rejected in review"
    counts(summary, rejected=2)
    assert "No more pending proposals to review." in text


def test_merge_rejects_the_proposal_as_said_by_the_chosen_similar_memory(mem: Memory) -> None:
    original = approved(mem, RETRY)
    prop = propose(mem, NEAR_RETRY)
    text, summary = review(mem, "m", "1")
    assert "Similar memories:" in text
    assert f"  1. {original} (0.80, active) {RETRY}" in text
    rejected = status(mem, prop.id)
    assert rejected.status == "rejected"
    assert rejected.rejection_reason == f"merged into {original}: it already says this"
    counts(summary, merged=1)


def test_merge_needs_a_similar_memory_and_a_valid_number(mem: Memory) -> None:
    approved(mem, RETRY)
    lonely = propose(mem, FINDING, kind="api_finding")
    text, _ = review(mem, "m", "q")
    assert "No similar memory to merge into" in text
    assert status(mem, lonely.id).status == "pending"
    mem.curate(lonely.id, "reject", reason="out of the way")
    near = propose(mem, NEAR_RETRY)
    text, summary = review(mem, "m", "7", "m", "", "q")
    assert "Choose a number from 1 to 1." in text
    assert "Merge cancelled." in text
    assert status(mem, near.id).status == "pending"
    counts(summary)


def test_skip_leaves_the_proposal_pending_and_moves_to_the_next(mem: Memory) -> None:
    first, second = propose(mem, RETRY), propose(mem, FINDING, kind="api_finding")
    text, summary = review(mem, "s", "r", "")
    assert status(mem, first.id).status == "pending"
    assert status(mem, second.id).status == "rejected"
    assert text.index(first.id) < text.index(second.id)  # oldest first
    counts(summary, skipped=1, rejected=1)
    assert summary["pending"] == 1
    assert "1 proposal still pending" in text


def test_a_failed_approval_shows_the_error_and_stays_on_the_proposal(mem: Memory) -> None:
    prop = propose(mem, FINDING, kind="api_finding")
    text, summary = review(mem, "a", "q")
    assert "Error: curator memory promotions must use durable fact kinds" in text
    assert "(the proposal stays pending)" in text
    assert status(mem, prop.id).status == "pending"
    counts(summary)
    # the next key acts on the same proposal
    text, summary = review(mem, "a", "r", "needs a durable kind")
    assert status(mem, prop.id).rejection_reason == "needs a durable kind"
    assert text.count(f"== {prop.id}") == 1  # shown once, not again after the error
    counts(summary, rejected=1)


def test_quit_changes_nothing_and_prints_the_summary(mem: Memory) -> None:
    prop = propose(mem, RETRY)
    text, summary = review(mem, "q")
    assert status(mem, prop.id).status == "pending"
    counts(summary)
    assert text.endswith(
        "Review finished: 0 approved, 0 rejected, 0 merged, 0 skipped, "
        "0 undone; 1 proposal still pending."
    )


def test_unknown_keys_and_help_change_nothing(mem: Memory) -> None:
    prop = propose(mem, RETRY)
    text, _ = review(mem, "x", "?", "q")
    assert "Unknown key 'x'; press ? for help." in text
    assert "u  undo the last decision of this session" in text
    assert status(mem, prop.id).status == "pending"


def test_an_empty_queue_ends_at_once(mem: Memory) -> None:
    text, summary = review(mem)
    assert text.startswith("No pending proposals to review.")
    counts(summary)


def test_the_end_of_input_ends_the_review_like_quit(mem: Memory) -> None:
    propose(mem, RETRY)
    _, summary = review(mem)  # no answer at all: EOFError at the first key
    assert summary["pending"] == 1


# ----------------------------------------------------------------------------- undo
def test_undo_of_an_approval_forgets_the_memory_and_refiles_a_copy_shown_next(
    mem: Memory,
) -> None:
    prop = propose(mem, RETRY, rationale="The retry helper says so.")
    text, summary = review(mem, "a", "u", "q")
    written = status(mem, prop.id).metadata["curatorDecision"]["memoryId"]
    assert mem.get(written).deleted
    reasons = [event["reason"] for event in mem.inspect(written).audit]
    assert f"undone in review: {prop.id}" in reasons
    (copy,) = pending(mem)
    assert copy.id != prop.id
    assert copy.operation == "add"
    assert copy.proposed_record is not None
    assert (copy.proposed_record.text, copy.proposed_record.kind) == (RETRY, "repo_convention")
    assert copy.evidence_refs == ("retry.py",)
    assert copy.rationale == f"re-filed by undo of add of {prop.id}: The retry helper says so."
    after_undo = text.split("Undid the decision")[1]
    assert f"re-filed it as {copy.id} (shown next)" in after_undo
    assert f"== {copy.id}" in after_undo
    counts(summary, approved=1, undone=1)


def test_undo_of_a_rejection_refiles_a_copy_and_it_can_be_approved(mem: Memory) -> None:
    prop = propose(mem, RETRY)
    _, summary = review(mem, "r", "wrong", "u", "a")
    assert status(mem, prop.id).status == "rejected"
    copies = [p for p in mem.store.list_proposals() if p.id != prop.id]
    (copy,) = copies
    assert copy.rationale.startswith(f"re-filed by undo of reject of {prop.id}: ")
    assert copy.status == "applied"  # the copy came next and was approved
    assert mem.get(copy.metadata["curatorDecision"]["memoryId"]).text == RETRY
    counts(summary, rejected=1, undone=1, approved=1)


def test_undo_of_a_merge_refiles_a_copy(mem: Memory) -> None:
    approved(mem, RETRY)
    prop = propose(mem, NEAR_RETRY)
    _, summary = review(mem, "m", "1", "u", "q")
    (copy,) = pending(mem)
    assert copy.rationale.startswith(f"re-filed by undo of reject of {prop.id}: ")
    counts(summary, merged=1, undone=1)


def test_undo_goes_back_one_decision_at_a_time(mem: Memory) -> None:
    first, second = propose(mem, RETRY), propose(mem, FINDING, kind="api_finding")
    text, summary = review(mem, "a", "r", "", "u", "u", "u", "q")
    assert "Nothing to undo in this session." in text
    refiled = {p.rationale.split(":")[0] for p in pending(mem)}
    assert refiled == {
        f"re-filed by undo of add of {first.id}",
        f"re-filed by undo of reject of {second.id}",
    }
    counts(summary, approved=1, rejected=1, undone=2)


def test_undo_refuses_an_approved_update_and_changes_nothing(mem: Memory) -> None:
    target = approved(mem, RETRY)
    update = propose(mem, NEAR_RETRY, operation="update", target_memory_id=target)
    text, summary = review(mem, "a", "u", "q")
    assert f"Target: {target}" in text
    assert status(mem, update.id).status == "applied"
    assert "Cannot undo the last decision (approved" in text
    assert "undo reverses rejections and approved additions only" in text
    assert pending(mem) == []
    counts(summary, approved=1)


def test_undo_keeps_a_memory_that_existed_before_the_approval(mem: Memory) -> None:
    """Two pending proposals of one fact (different evidence): approving the second rewrites
    the memory the first wrote, so undoing it must not forget that memory."""
    (mem.root / "backoff.md").write_text("backoff\n", encoding="utf-8")
    first = propose(mem, RETRY)
    time.sleep(0.003)
    second = mem.propose(
        operation="add", kind="repo_convention", text=RETRY, rationale="again",
        evidence_refs=["backoff.md"],
    )  # fmt: skip
    assert second.status == "pending"
    text, _ = review(mem, "a", "a", "u", "q")
    written = status(mem, first.id).metadata["curatorDecision"]["memoryId"]
    assert mem.get(written).active
    assert "was already stored before this approval" in text


# ------------------------------------------------------------- filters and durations
def test_durations() -> None:
    assert [parse_duration(d) for d in ("45s", "30m", "2h", "3d", "1w")] == [
        45, 1800, 7200, 259_200, 604_800,
    ]  # fmt: skip
    for bad in ("", "3", "h", "2 days", "-1h", "1.5h"):
        with pytest.raises(ValueError, match="not a duration"):
            parse_duration(bad)


def test_filters_combine() -> None:
    entry = {
        "kind": "repo_convention",
        "proposed_by": {"agent_role": "coder", "agent_id": None, "run_id": "s1"},
        "created_at": "2026-01-01T00:00:00.000Z",
    }
    now_ms = 1767225600000 + 3 * 3600 * 1000  # three hours later
    assert Filters().match(entry, now_ms)
    assert Filters(kind="repo_convention", proposer="coder", older_than=7200).match(entry, now_ms)
    assert not Filters(kind="project_fact").match(entry, now_ms)
    assert not Filters(proposer="reviewer").match(entry, now_ms)
    assert not Filters(older_than=4 * 3600).match(entry, now_ms)
    assert not Filters(kind="repo_convention", proposer="reviewer").match(entry, now_ms)


def test_the_interactive_queue_honours_the_filters(mem: Memory) -> None:
    skipped_by_filter = propose(mem, FINDING, kind="api_finding")
    prop = propose(mem, RETRY)
    text, summary = review(mem, "a", filters=Filters(kind="repo_convention"))
    assert skipped_by_filter.id not in text
    assert status(mem, prop.id).status == "applied"
    assert summary["pending"] == 1


# ------------------------------------------------------------------ the command line
def cli(root: Path, *args: str) -> Any:
    return CliRunner().invoke(main, ["--root", str(root), *args], catch_exceptions=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".opencode").mkdir()
    (tmp_path / ".opencode" / "opencode-swarm.json").write_text(
        json.dumps({"memory": {"enabled": True}}), encoding="utf-8"
    )
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [
        ("--approve-all", "--reject-all"),
        ("--yes",),
        ("--reason", "why"),
        ("--json",),
        ("--approve-all", "--older-than", "2 days"),
    ],
)
def test_usage_errors_exit_2(project: Path, args: tuple[str, ...]) -> None:
    result = cli(project, "review", *args)
    assert result.exit_code == 2, result.output


def test_reject_all_by_proposer_with_a_reason(project: Path) -> None:
    (project / "retry.py").write_text("x\n", encoding="utf-8")
    ids = {}
    for role, text in (("coder", RETRY), ("tester", FINDING)):
        context = {"session_id": "s1", "agent_role": role}
        with swarmmem.open(project, context=context) as memory:
            ids[role] = propose(memory, text).id
    dry = cli(project, "review", "--reject-all", "--proposer", "tester", "--json")
    assert dry.exit_code == 0, dry.output
    data = json.loads(dry.stdout)
    assert (data["dry_run"], data["matched"], data["decided"]) == (True, 1, [])
    result = cli(project, "review", "--reject-all", "--proposer", "tester", "--reason", "stale",
                 "--yes")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert f"Rejected 1 of 1 matching proposal:\n- {ids['tester']} reject" in result.stdout
    with swarmmem.open(project) as memory:
        assert status(memory, ids["tester"]).rejection_reason == "stale"
        assert status(memory, ids["coder"]).status == "pending"


def test_the_queue_shows_whether_each_proposals_evidence_still_holds(
    mem: Memory, tmp_path: Path
) -> None:
    propose(mem, RETRY)
    (tmp_path / "retry.py").unlink()  # gone since it was proposed
    text, _ = review(mem, "q")
    assert "Evidence: retry.py (evidence 'retry.py' names no file of the repository" in text
    (tmp_path / "retry.py").write_text("x = 1\n", encoding="utf-8")
    text, _ = review(mem, "q")
    assert "Evidence: retry.py (verified)" in text


def test_a_verify_update_shows_what_changed_in_the_targets_cited_lines(
    mem: Memory, tmp_path: Path
) -> None:
    """``verify --propose`` files an update for a memory whose cited lines changed; its
    review card shows the lines removed and added under the target."""
    (tmp_path / "retry.py").write_text("def retry(call):\n    tries = 3\n", encoding="utf-8")
    prop = mem.propose(
        operation="add", kind="repo_convention", text=RETRY, rationale="read it",
        evidence_refs=["retry.py:2"],
    )  # fmt: skip
    mem.curate(prop.id, "add")
    (tmp_path / "retry.py").write_text("def retry(call):\n    tries = 5\n", encoding="utf-8")
    (filed,) = mem.verify(propose=True).proposals
    text, _ = review(mem, "q")
    assert f"== {filed['proposal_id']}  update" in text
    assert "  Changed in retry.py:2:\n    -    tries = 3\n    +    tries = 5" in text

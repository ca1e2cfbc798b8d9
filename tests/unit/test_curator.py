"""Curator decisions applied to storage: every action, its errors and its atomicity."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from factories import OTHER_SCOPE, STORE_KINDS, T0, at, make_memory, make_proposal, open_store

from swarmmem.core.model.errors import ConflictError, MemoryValidationError, NotFoundError
from swarmmem.core.model.records import CuratorDecision, MemorySource
from swarmmem.core.writes.curator import apply_decision, apply_patch, normalize_tags
from swarmmem.ports.detectors import SecretFinding
from swarmmem.ports.storage import ListFilter

NOW = at(60)


@pytest.fixture(params=STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A fresh store of each provider."""
    opened = open_store(request.param, tmp_path)
    yield opened
    opened.close()


class FakeSecrets:
    """Flags any text containing the word SECRETVALUE."""

    def find(self, text: str) -> list[SecretFinding]:
        at_ = text.find("SECRETVALUE")
        return [] if at_ < 0 else [SecretFinding(type="fake", start=at_, end=at_ + 11)]

    def contains_secret(self, text: str) -> bool:
        return bool(self.find(text))

    def redact(self, text: str) -> str:
        return text.replace("SECRETVALUE", "[REDACTED:fake]")


def pending(store: Any, **kwargs: Any) -> Any:
    proposal = make_proposal(**kwargs)
    store.create_proposal(proposal)
    return proposal


def decide(store: Any, action: str, proposal: Any, **fields: Any) -> Any:
    fields.setdefault("reason", f"curator says {action}")
    return apply_decision(
        store,
        CuratorDecision(action=action, proposal_id=proposal.id, **fields),
        now=NOW,
        secrets=FakeSecrets(),
    )


def last_decision_event(store: Any) -> dict[str, Any]:
    events = [e for e in store.list_events() if e.operation == "curator_decision"]
    return json.loads(events[-1].event_json)


class TestProposalChecks:
    def test_unknown_proposal(self, store: Any) -> None:
        """A decision for an unknown proposal raises NotFoundError with the reference message."""
        with pytest.raises(NotFoundError, match="memory proposal was not found"):
            decide(store, "noop", make_proposal(record=make_memory()))

    def test_proposal_must_be_pending(self, store: Any) -> None:
        """A reviewed proposal cannot be decided again."""
        proposal = pending(store, record=make_memory())
        decide(store, "reject", proposal)
        with pytest.raises(ConflictError, match="memory proposal is not pending"):
            decide(store, "noop", proposal)

    def test_action_must_match_the_operation(self, store: Any) -> None:
        """An add decision cannot apply an update proposal; the proposal stays pending."""
        record = make_memory()
        proposal = pending(store, operation="update", record=record, target=record.id)
        with pytest.raises(MemoryValidationError, match="does not match proposal operation"):
            decide(store, "add", proposal, memory=record)
        assert store.get_proposal(proposal.id).status == "pending"

    def test_update_target_must_match_the_proposal(self, store: Any) -> None:
        """The decision's target must be the proposal's targetMemoryId."""
        a, b = make_memory("a fact"), make_memory("b fact")
        store.upsert(a)
        store.upsert(b)
        proposal = pending(store, operation="update", record=a, target=a.id)
        with pytest.raises(MemoryValidationError, match="does not match proposal target"):
            decide(store, "update", proposal, target_memory_id=b.id, patch={"confidence": 0.1})

    def test_required_fields(self, store: Any) -> None:
        """Missing per-action fields are validation errors."""
        proposal = pending(store, record=make_memory())
        with pytest.raises(MemoryValidationError, match="add decisions require memory"):
            decide(store, "add", proposal)
        with pytest.raises(MemoryValidationError, match="require a reason"):
            decide(store, "reject", proposal, reason=None)


class TestAdd:
    def test_add_promotes_and_marks_the_proposal_applied(self, store: Any) -> None:
        """add writes the record (updatedAt = now), reviews the proposal and audits the decision."""
        record = make_memory()
        proposal = pending(store, record=record)
        change = decide(store, "add", proposal, memory=record)
        stored = store.get(record.id)
        assert stored.updated_at == NOW and change.memory_id == record.id
        reviewed = store.get_proposal(proposal.id)
        assert (reviewed.status, reviewed.reviewer, reviewed.reviewed_at) == (
            "applied",
            "curator_agent",
            NOW,
        )
        assert reviewed.metadata["curatorDecision"] == {
            "action": "add",
            "reason": "curator says add",
            "memoryId": record.id,
            "appliedAt": NOW,
        }
        event = last_decision_event(store)
        assert event["proposalOperation"] == "add" and event["memoryId"] == record.id

    @pytest.mark.parametrize(
        ("record", "message"),
        [
            (make_memory(stability="session"), "must be durable facts"),
            (make_memory(kind="todo"), "durable fact kinds"),
            (make_memory("word " * 120), "under 500 characters"),
            (make_memory("token is SECRETVALUE"), "likely secret"),
            (make_memory(source=MemorySource(type="agent")), "require source evidence"),
        ],
    )
    def test_add_refuses_unpromotable_records(self, store: Any, record: Any, message: str) -> None:
        """Promotion rules and the write funnel apply; nothing is written on refusal."""
        proposal = pending(store, record=record)
        with pytest.raises(MemoryValidationError, match=message):
            decide(store, "add", proposal, memory=record)
        assert store.count() == 0
        assert store.get_proposal(proposal.id).status == "pending"


class TestUpdate:
    def test_patch_that_keeps_the_id(self, store: Any) -> None:
        """A patch of tags and metadata keeps the id; tags are normalised, metadata merged."""
        record = make_memory(metadata={"files": ["a.py"]})
        store.upsert(record)
        proposal = pending(store, operation="update", record=record, target=record.id)
        patch = {"tags": ["Fast Tests!", "fast-tests", "CI"], "metadata": {"symbols": ["run"]}}
        change = decide(store, "update", proposal, target_memory_id=record.id, patch=patch)
        got = store.get(record.id)
        assert change.memory_id == record.id == change.target_memory_id
        assert got.tags == ("fast-tests", "ci")
        assert got.metadata == {"files": ["a.py"], "symbols": ["run"]}
        assert store.count() == 1

    def test_text_patch_moves_the_id_and_supersedes_the_old_record(self, store: Any) -> None:
        """Changing the text recomputes id and hash; the new memory supersedes the old one
        (valid from the decision, its learned value carried) and the old one points at it,
        valid until then: the history stays whole."""
        base = make_memory("tests use pytest")
        record = attrs.evolve(base, metadata={**base.metadata, "qValue": 0.8})
        store.upsert(record)
        proposal = pending(store, operation="update", record=record, target=record.id)
        change = decide(
            store,
            "update",
            proposal,
            target_memory_id=record.id,
            patch={"text": "  tests use   uv run pytest "},
        )
        new = store.get(change.memory_id)
        assert new.text == "tests use uv run pytest" and new.id == make_memory(new.text).id
        old = store.get(record.id)
        assert not old.deleted and old.superseded_by == new.id
        assert old.metadata["updateReplacementId"] == new.id
        assert old.supersedes_reason == "curator says update" == new.supersedes_reason
        assert new.supersedes == (record.id,) and new.q == 0.8
        assert old.metadata["validTo"] == new.valid_from == new.updated_at
        assert [r.id for r in store.list(ListFilter(now=NOW))] == [new.id]

    def test_target_must_be_active(self, store: Any) -> None:
        """Missing, deleted and superseded targets are refused with the reference messages."""
        record = make_memory()
        proposal = pending(store, operation="update", record=record, target=record.id)
        with pytest.raises(NotFoundError, match="target memory was not found"):
            decide(store, "update", proposal, target_memory_id=record.id, patch={"confidence": 0.2})
        store.upsert(attrs.evolve(record, superseded_by="mem_0000000000000001"))
        with pytest.raises(ConflictError, match="target memory is superseded"):
            decide(store, "update", proposal, target_memory_id=record.id, patch={"confidence": 0.2})
        store.delete(record.id, reason="gone", now=NOW)
        with pytest.raises(ConflictError, match="target memory is deleted"):
            decide(store, "update", proposal, target_memory_id=record.id, patch={"confidence": 0.2})

    def test_patch_cannot_forge_derived_fields(self, store: Any) -> None:
        """relations, ids and hashes are not patchable."""
        record = make_memory()
        store.upsert(record)
        proposal = pending(store, operation="update", record=record, target=record.id)
        for key in ("relations", "id", "contentHash"):
            with pytest.raises(MemoryValidationError, match="unknown key"):
                decide(store, "update", proposal, target_memory_id=record.id, patch={key: "x"})
        assert store.get(record.id) == record


class TestSupersede:
    def test_supersede_links_both_records(self, store: Any) -> None:
        """The replacement lists the old id; the old record is superseded and hidden."""
        old = make_memory("deploys use fabric")
        store.upsert(old)
        replacement = make_memory("deploys use ansible")
        proposal = pending(store, operation="supersede", record=replacement, target=old.id)
        change = decide(store, "supersede", proposal, old_memory_id=old.id, replacement=replacement)
        new = store.get(replacement.id)
        assert new.supersedes == (old.id,) and new.supersedes_reason == "curator says supersede"
        before = store.get(old.id)
        assert before.superseded_by == replacement.id
        assert before.metadata["supersedeReason"] == "curator says supersede"
        assert [r.id for r in store.list(ListFilter(now=NOW))] == [replacement.id]
        assert (change.old_memory_id, change.replacement_memory_id) == (old.id, replacement.id)

    def test_supersede_is_all_or_nothing(self, store: Any) -> None:
        """If writing the old record fails, the replacement and the review are rolled back."""
        old = make_memory("deploys use fabric")
        store.upsert(old)
        replacement = make_memory("deploys use ansible")
        proposal = pending(store, operation="supersede", record=replacement, target=old.id)
        failing = FailingStore(store, fail_on_upsert=2)
        with pytest.raises(RuntimeError, match="disk full"):
            decide(failing, "supersede", proposal, old_memory_id=old.id, replacement=replacement)
        assert store.get(replacement.id) is None
        assert store.get(old.id).superseded_by is None
        assert store.get_proposal(proposal.id).status == "pending"
        assert not [e for e in store.list_events() if e.operation == "curator_decision"]


class FailingStore:
    """Delegates to a store but fails its n-th upsert."""

    def __init__(self, inner: Any, fail_on_upsert: int) -> None:
        self.inner = inner
        self.calls = 0
        self.fail_on_upsert = fail_on_upsert

    def upsert(self, record: Any) -> Any:
        self.calls += 1
        if self.calls == self.fail_on_upsert:
            raise RuntimeError("disk full")
        return self.inner.upsert(record)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class TestMerge:
    def test_merge_relates_participants_without_changing_records(self, store: Any) -> None:
        """A merge links the canonical ids both ways and rewrites no record."""
        a, b, c = make_memory("a fact"), make_memory("b fact"), make_memory("c fact")
        for record in (a, b, c):
            store.upsert(record)
        proposal = pending(store, operation="merge", related=[c.id, a.id, b.id])
        change = decide(store, "merge", proposal, related_memory_ids=[b.id, c.id, a.id, a.id])
        assert change.related_memory_ids == tuple(sorted([a.id, b.id, c.id]))
        assert store.related_ids(a.id) == sorted([b.id, c.id])
        assert store.get(a.id).updated_at == T0
        assert store.get_proposal(proposal.id).status == "applied"

    def test_merge_ids_must_match_the_proposal(self, store: Any) -> None:
        """The decision's canonical id set must equal the proposal's."""
        a, b, c = make_memory("a fact"), make_memory("b fact"), make_memory("c fact")
        for record in (a, b, c):
            store.upsert(record)
        proposal = pending(store, operation="merge", related=[a.id, b.id])
        with pytest.raises(MemoryValidationError, match="do not match"):
            decide(store, "merge", proposal, related_memory_ids=[a.id, c.id])

    @pytest.mark.parametrize("count", [1, 9])
    def test_merge_needs_two_to_eight_ids(self, store: Any, count: int) -> None:
        """Fewer than 2 or more than 8 distinct ids are refused."""
        records = [make_memory(f"fact number {i}") for i in range(count)]
        for record in records:
            store.upsert(record)
        ids = [r.id for r in records]
        proposal = pending(store, operation="merge", related=ids)
        with pytest.raises(MemoryValidationError, match="require 2-8 distinct relatedMemoryIds"):
            decide(store, "merge", proposal, related_memory_ids=ids)

    def test_merge_participants_must_be_active_and_share_a_scope(self, store: Any) -> None:
        """Deleted, expired or foreign-scope participants are refused with their reason."""
        a, b = make_memory("a fact"), make_memory("b fact")
        foreign = make_memory("c fact", scope=OTHER_SCOPE)
        stale = make_memory("old scratch", kind="scratch", created_at=at(days=-9))
        for record in (a, b, foreign, stale):
            store.upsert(record)
        store.delete(b.id, reason="gone", now=NOW)
        for ids, message in (
            ([a.id, b.id], f"merge participant is not active: {b.id}"),
            ([a.id, stale.id], f"merge participant is not active: {stale.id}"),
            ([a.id, foreign.id], "merge participants must share one memory scope"),
        ):
            proposal = pending(store, operation="merge", related=ids)
            with pytest.raises(MemoryValidationError, match=message):
                decide(store, "merge", proposal, related_memory_ids=ids)
        assert store.related_ids(a.id) == []

    def test_merge_respects_the_relation_cap(self, store: Any) -> None:
        """A merge that would give a memory more than 32 relations is refused."""
        hub = make_memory("hub fact")
        store.upsert(hub)
        spokes = [make_memory(f"spoke fact {i}") for i in range(33)]
        for record in spokes:
            store.upsert(record)
        for start in range(0, 28, 7):
            group = [hub.id] + [s.id for s in spokes[start : start + 7]]
            decide(
                store,
                "merge",
                pending(store, operation="merge", related=group),
                related_memory_ids=group,
            )
        group = [hub.id] + [s.id for s in spokes[28:32]]
        decide(
            store,
            "merge",
            pending(store, operation="merge", related=group),
            related_memory_ids=group,
        )
        assert len(store.related_ids(hub.id)) == 32
        last = [hub.id, spokes[32].id]
        with pytest.raises(
            MemoryValidationError, match=f"merge would exceed 32 relations for {hub.id}"
        ):
            decide(
                store,
                "merge",
                pending(store, operation="merge", related=last),
                related_memory_ids=last,
            )


class FailingReview:
    """Delegates to a store but fails when the proposal is marked reviewed."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def update_proposal(self, proposal: Any) -> Any:
        raise RuntimeError("disk full")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class TestDelete:
    def test_delete_tombstones_the_target_with_the_reason(self, store: Any) -> None:
        """The target becomes a tombstone carrying the curator's reason; the proposal is
        applied; both the store's delete and the decision are audited."""
        record = make_memory("deploys use fabric")
        store.upsert(record)
        proposal = pending(store, operation="delete", target=record.id)
        change = decide(store, "delete", proposal, target_memory_id=record.id, reason="obsolete")
        gone = store.get(record.id)
        assert gone.deleted and gone.metadata["deleteReason"] == "obsolete"
        assert store.list(ListFilter(now=NOW)) == []
        assert (change.action, change.target_memory_id, change.memory_id) == (
            "delete",
            record.id,
            None,
        )
        assert store.get_proposal(proposal.id).status == "applied"
        deletes = [e for e in store.list_events() if e.operation == "delete"]
        assert [(e.target_id, e.reason) for e in deletes] == [(record.id, "obsolete")]
        event = last_decision_event(store)
        assert event["action"] == "delete" and event["targetMemoryId"] == record.id

    def test_delete_needs_an_existing_live_target_that_matches(self, store: Any) -> None:
        """Unknown, already deleted or mismatched targets are refused; nothing changes."""
        record, other = make_memory("a fact"), make_memory("another fact")
        store.upsert(record)
        store.upsert(other)
        proposal = pending(store, operation="delete", target=record.id)
        with pytest.raises(MemoryValidationError, match="does not match proposal target"):
            decide(store, "delete", proposal, target_memory_id=other.id)
        with pytest.raises(MemoryValidationError, match="delete decisions require targetMemoryId"):
            decide(store, "delete", proposal)
        add = pending(store, record=make_memory("a third fact"))
        with pytest.raises(MemoryValidationError, match="does not match proposal operation add"):
            decide(store, "delete", add, target_memory_id=record.id)
        missing = pending(store, operation="delete", target="mem_0000000000000000")
        with pytest.raises(NotFoundError, match="target memory was not found"):
            decide(store, "delete", missing, target_memory_id="mem_0000000000000000")
        store.delete(record.id, reason="gone", now=NOW)
        with pytest.raises(ConflictError, match="target memory is deleted"):
            decide(store, "delete", proposal, target_memory_id=record.id)
        assert store.get_proposal(proposal.id).status == "pending"
        assert not store.get(other.id).deleted

    def test_delete_is_all_or_nothing(self, store: Any) -> None:
        """If closing the proposal fails, the tombstone is rolled back with it."""
        record = make_memory("deploys use fabric")
        store.upsert(record)
        proposal = pending(store, operation="delete", target=record.id)
        with pytest.raises(RuntimeError, match="disk full"):
            decide(FailingReview(store), "delete", proposal, target_memory_id=record.id)
        assert not store.get(record.id).deleted
        assert store.get_proposal(proposal.id).status == "pending"
        assert not [e for e in store.list_events() if e.operation in ("delete", "curator_decision")]


class TestRejectAndNoop:
    def test_reject(self, store: Any) -> None:
        """reject closes the proposal as rejected with the reason and writes no record."""
        record = make_memory()
        proposal = pending(store, record=record)
        decide(store, "reject", proposal, reason="not a durable fact")
        reviewed = store.get_proposal(proposal.id)
        assert reviewed.status == "rejected" and reviewed.rejection_reason == "not a durable fact"
        assert store.count() == 0
        assert last_decision_event(store)["action"] == "reject"

    def test_noop(self, store: Any) -> None:
        """noop applies the proposal without touching any record."""
        record = make_memory()
        store.upsert(record)
        proposal = pending(store, operation="delete", target=record.id)
        decide(store, "noop", proposal)
        assert store.get_proposal(proposal.id).status == "applied"
        assert store.get(record.id) == record


class TestHelpers:
    def test_normalize_tags(self) -> None:
        """Tags are lower-cased, cleaned to word characters and dashes, de-duplicated."""
        assert normalize_tags(["API Docs", "api-docs", "--x--", "", "C++"]) == [
            "api-docs",
            "x",
            "c",
        ]
        assert len(normalize_tags([f"t{i}" for i in range(40)])) == 32

    def test_apply_patch_drops_a_field_set_to_none(self) -> None:
        """A None value in a patch removes the optional field."""
        record = make_memory(expires_at=at(days=3))
        assert apply_patch(record, {"expiresAt": None}, now=NOW).expires_at is None

"""The storage provider contract: every provider (memory, local-jsonl, sqlite) must pass it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest
from factories import (
    BASE_TIME,
    OTHER_SCOPE,
    REPO_SCOPE,
    T0,
    at,
    make_memory,
    make_proposal,
    open_store,
    outcome_event,
    select_candidates,
)

from swarmmem.adapters.detectors.regex_secrets import RegexSecretDetector
from swarmmem.adapters.storage.export_import import export_store, import_jsonl
from swarmmem.core.model.codec import (
    outcome_event_from_dict,
    outcome_event_to_dict,
    proposal_to_dict,
    recall_usage_from_dict,
    recall_usage_to_dict,
    record_to_dict,
    reward_event_from_dict,
    reward_event_to_dict,
)
from swarmmem.core.model.errors import (
    ConflictError,
    MemoryValidationError,
    NotFoundError,
    StorageError,
)
from swarmmem.core.model.events import RecallUsage, RewardEvent
from swarmmem.core.model.records import Anchor, OutcomeEntry, Relation
from swarmmem.core.model.semantics import PURGED, dumps
from swarmmem.core.writes.importing import _Completer
from swarmmem.ports.storage import (
    EventLedger,
    ListFilter,
    ProposalStore,
    RecordStore,
    StorageProvider,
)

NOW = at(days=1)


def ids(records: Any) -> list[str]:
    return [r.id for r in records]


def listed(store: Any, **kwargs: Any) -> list[str]:
    return ids(store.list(ListFilter(now=kwargs.pop("now", NOW), **kwargs)))


def operations(store: Any) -> list[tuple[str, str]]:
    return [(e.operation, e.target_id) for e in store.list_events() if e.operation != "migration"]


class TestIdentity:
    def test_is_a_storage_provider(self, store: Any, store_kind: str) -> None:
        """Every provider satisfies the Protocols and names itself by its registry key."""
        assert isinstance(store, StorageProvider)
        assert all(isinstance(store, p) for p in (RecordStore, ProposalStore, EventLedger))
        assert store.name == store_kind

    def test_close_is_idempotent_and_later_calls_fail(self, store: Any) -> None:
        """close() twice is fine; a closed store raises StorageError instead of working."""
        store.close()
        store.close()
        with pytest.raises(StorageError):
            store.upsert(make_memory())
        with pytest.raises(StorageError):
            store.count()


class TestRecords:
    def test_upsert_then_get_round_trips(self, store: Any) -> None:
        """A stored record comes back equal, with its provenance fields."""
        record = make_memory(valid_from=T0, source_task_id="task-7", supersedes_reason=None)
        stored = store.upsert(record)
        assert record_to_dict(store.get(record.id)) == record_to_dict(record)
        assert stored == record

    def test_get_missing_is_none(self, store: Any) -> None:
        """get() of an unknown id returns None."""
        assert store.get("mem_0000000000000000") is None

    def test_get_many_returns_existing_records_in_any_state(self, store: Any) -> None:
        """get_many() maps each existing id to the same record get() returns, skipping others."""
        live = make_memory("first fact about the cache layer")
        gone = make_memory("second fact about the cache layer", metadata={"deleted": True})
        store.upsert(live)
        store.upsert(gone)
        found = store.get_many([gone.id, "mem_0000000000000000", live.id])
        assert set(found) == {live.id, gone.id}
        assert record_to_dict(found[live.id]) == record_to_dict(store.get(live.id))
        assert found[gone.id].deleted
        assert store.get_many([]) == {}

    def test_upsert_is_idempotent_per_id_and_last_write_wins(self, store: Any) -> None:
        """Writing the same id twice keeps one row holding the second write."""
        first = make_memory()
        store.upsert(first)
        store.upsert(attrs.evolve(first, confidence=0.3, updated_at=at(5)))
        assert store.count() == 1
        assert store.get(first.id).confidence == 0.3

    def test_upsert_rejects_non_records(self, store: Any) -> None:
        """upsert() of a dict is a validation error, not a silent write."""
        with pytest.raises(MemoryValidationError):
            store.upsert({"id": "mem_0000000000000000"})
        assert store.count() == 0

    def test_valid_from_is_never_reset_and_supersedes_reason_coalesces(self, store: Any) -> None:
        """Rewrites keep the first validFrom, and supersedesReason when the new one is absent."""
        record = make_memory(valid_from=T0, supersedes_reason="older fact was wrong")
        store.upsert(record)
        stored = store.upsert(attrs.evolve(record, valid_from=at(9), supersedes_reason=None))
        got = store.get(record.id)
        assert got.valid_from == T0 == stored.valid_from
        assert got.supersedes_reason == "older fact was wrong" == stored.supersedes_reason
        store.upsert(attrs.evolve(record, supersedes_reason="new reason"))
        assert store.get(record.id).supersedes_reason == "new reason"

    def test_upsert_many_matches_one_upsert_per_record(self, store: Any, monkeypatch: Any) -> None:
        """upsert_many stores and returns what upsert would, across batches and with an id
        twice in one batch, keeps validFrom/supersedesReason rules, audits one upsert per
        record in order and reports progress per batch."""
        from swarmmem.adapters.storage import base

        monkeypatch.setattr(base, "BATCH_SIZE", 3)
        for module in ("swarmmem.adapters.storage.sql.records",):
            monkeypatch.setattr(f"{module}.BATCH_SIZE", 3, raising=False)
        old = store.upsert(make_memory("old fact", valid_from=T0, supersedes_reason="kept"))
        rewrite = attrs.evolve(old, valid_from=at(9), supersedes_reason=None, confidence=0.4)
        fresh = [make_memory(f"bulk fact number {i}") for i in range(5)]
        again = attrs.evolve(fresh[3], confidence=0.2, updated_at=at(3))  # same batch as fresh[3]
        batch = [rewrite, *fresh, again]
        seen: list[tuple[int, int]] = []
        stored = store.upsert_many(batch, progress=lambda done, total: seen.append((done, total)))
        assert [r.id for r in stored] == [r.id for r in batch]
        assert stored[0].valid_from == T0 and stored[0].supersedes_reason == "kept"
        assert store.get(old.id).valid_from == T0 and store.get(old.id).confidence == 0.4
        assert store.get(fresh[3].id).confidence == 0.2
        assert store.count() == 6
        assert seen[-1] == (7, 7) and len(seen) in (3, 7)
        upserts = [t for op, t in operations(store) if op == "upsert"]
        assert upserts == [old.id, *[r.id for r in batch]]
        verify = getattr(store, "verify_audit_chain", None)
        if verify is not None:
            assert verify()["verified"] is True
        listed_ids = listed(store)
        assert set(listed_ids) == {old.id, *(r.id for r in fresh)}

    def test_upsert_rows_writes_what_upsert_many_writes(
        self, store: Any, store_kind: str, tmp_path: Path, opened: list[Any], monkeypatch: Any
    ) -> None:
        """Rows in their stored form (a bulk import's direct rows, no record built) are
        stored, listed and audited as ``upsert_many`` of their records: across batches, a
        rewrite of an existing record and an id twice in one batch."""
        from swarmmem.adapters.storage import base

        monkeypatch.setattr(base, "BATCH_SIZE", 3)
        monkeypatch.setattr("swarmmem.adapters.storage.sql.records.BATCH_SIZE", 3, raising=False)
        (tmp_path / "twin").mkdir()
        twin = open_store(store_kind, tmp_path / "twin")
        opened.append(twin)
        old = make_memory("old fact", valid_from=T0, supersedes_reason="kept")
        rewrite = attrs.evolve(old, valid_from=at(9), supersedes_reason=None, confidence=0.4)
        given = [record_to_dict(make_memory(f"bulk fact number {i}")) for i in range(5)]
        given[1]["metadata"] = {"qValue": 0.9, "symbol": "retry_loop"}
        given[2].update(sourceTaskId="task-2", embeddingModelVersion="m-2", validFrom=at(2))
        given.append(record_to_dict(rewrite))
        given.append({**given[3], "confidence": 0.2, "updatedAt": at(3)})  # same id, same batch

        def direct_rows() -> list[Any]:
            secrets = RegexSecretDetector()
            completer = _Completer(
                now=BASE_TIME, repo_scope=REPO_SCOPE, secrets=secrets, allowed_keys=None
            )
            rows = [completer.direct(raw) for raw in given]
            assert all(row is not None for row in rows)
            return rows

        for target in (store, twin):
            target.upsert(old)
        store.upsert_rows(direct_rows())
        twin.upsert_many([row.record for row in direct_rows()])
        ids = sorted({raw["id"] for raw in given})
        assert store.get_many(ids) == twin.get_many(ids) and len(ids) == 6
        assert store.get(old.id).valid_from == T0 and store.get(old.id).confidence == 0.4
        assert listed(store) == listed(twin)
        assert operations(store) == operations(twin)
        verify = getattr(store, "verify_audit_chain", None)
        if verify is not None:
            assert verify()["verified"] is True

    def test_upsert_many_rejects_non_records_and_writes_nothing(self, store: Any) -> None:
        """A non-record anywhere in the batch is a validation error before anything is written."""
        with pytest.raises(MemoryValidationError):
            store.upsert_many([make_memory("fine fact"), {"id": "mem_0000000000000000"}])
        assert store.count() == 0

    def test_count_includes_tombstones(self, store: Any) -> None:
        """count() counts deleted records too."""
        a, b = make_memory("alpha fact"), make_memory("beta fact")
        store.upsert(a)
        store.upsert(b)
        store.delete(a.id, reason="obsolete", now=NOW)
        assert store.count() == 2

    def test_iter_all_records_returns_every_state_oldest_first(self, store: Any) -> None:
        """iter_all_records() includes tombstones, superseded and expired records."""
        live = make_memory("live fact", updated_at=at(3))
        gone = make_memory("deleted fact", updated_at=at(1))
        old = make_memory("expired scratch", kind="scratch", created_at=at(-60, days=-30))
        store.upsert(live)
        store.upsert(gone)
        store.upsert(old)
        store.delete(gone.id, reason="wrong", now=at(2))
        assert ids(store.iter_all_records()) == [old.id, gone.id, live.id]


class TestListing:
    @pytest.fixture
    def seeded(self, store: Any) -> dict[str, Any]:
        records = {
            "fact": make_memory("fact one", updated_at=at(10)),
            "convention": make_memory("convention one", kind="repo_convention", updated_at=at(20)),
            "other": make_memory("fact elsewhere", scope=OTHER_SCOPE, updated_at=at(30)),
            "tie_a": make_memory("tie alpha", updated_at=at(40)),
            "tie_b": make_memory("tie beta", updated_at=at(40)),
        }
        for record in records.values():
            store.upsert(record)
        return records

    def test_orders_newest_first_then_by_id(self, store: Any, seeded: dict[str, Any]) -> None:
        """list() orders by updatedAt descending, then id ascending."""
        ties = sorted([seeded["tie_a"].id, seeded["tie_b"].id])
        expected = [*ties, seeded["other"].id, seeded["convention"].id, seeded["fact"].id]
        assert listed(store) == expected

    def test_filters_by_scope_and_kind(self, store: Any, seeded: dict[str, Any]) -> None:
        """scope_keys and kinds restrict the result; None means any."""
        assert seeded["other"].id not in listed(store, scope_keys=(REPO_SCOPE.key,))
        assert listed(store, scope_keys=(OTHER_SCOPE.key,)) == [seeded["other"].id]
        assert listed(store, kinds=("repo_convention",)) == [seeded["convention"].id]
        assert listed(store, scope_keys=()) == []

    def test_limit(self, store: Any, seeded: dict[str, Any]) -> None:
        """limit caps the number of records after ordering."""
        assert listed(store, limit=2) == listed(store)[:2]

    def test_hides_tombstones_and_superseded_unless_inactive_requested(
        self, store: Any, seeded: dict[str, Any]
    ) -> None:
        """Deleted and superseded records are hidden unless include_inactive."""
        store.delete(seeded["fact"].id, reason="obsolete", now=NOW)
        replaced = attrs.evolve(seeded["convention"], superseded_by=seeded["tie_a"].id)
        store.upsert(replaced)
        visible = listed(store)
        assert seeded["fact"].id not in visible and seeded["convention"].id not in visible
        everything = listed(store, include_inactive=True)
        assert {seeded["fact"].id, seeded["convention"].id} <= set(everything)

    def test_hides_expired_unless_requested(self, store: Any) -> None:
        """A record whose expiresAt is at or before now is hidden unless include_expired."""
        scratch = make_memory("scratch note", kind="scratch", created_at=T0)
        store.upsert(scratch)
        assert listed(store, now=at(days=1)) == [scratch.id]
        assert listed(store, now=scratch.expires_at) == []
        assert listed(store, now=at(days=8), include_expired=True) == [scratch.id]


class TestDelete:
    def test_tombstone_keeps_the_row(self, store: Any) -> None:
        """A soft delete marks metadata.deleted, records the reason and the time."""
        record = make_memory()
        store.upsert(record)
        assert store.delete(record.id, reason="no longer true", now=NOW) is True
        tomb = store.get(record.id)
        assert tomb.deleted and tomb.metadata["deleteReason"] == "no longer true"
        assert tomb.updated_at == NOW
        assert ("delete", record.id) in operations(store)

    def test_delete_missing_returns_false(self, store: Any) -> None:
        """Deleting an unknown id reports False and writes nothing."""
        assert store.delete("mem_0000000000000000", reason="x", now=NOW) is False
        assert operations(store) == []

    def test_hard_delete_erases(self, store: Any, reopen: Any) -> None:
        """hard=True removes the record and its outcomes, also after reopening."""
        record = make_memory()
        store.upsert(record)
        store.append_outcome(outcome_event("ev-1", record.id, "gen-1"))
        assert store.delete(record.id, reason="compact", now=NOW, hard=True)
        store = reopen(store)
        assert store.get(record.id) is None and store.count() == 0
        assert store.list_outcomes(record.id) == []


SECRET_FACT = "Deploy keys live in the vault under ops slash deploy"


def purge_fixture(store: Any) -> dict[str, Any]:
    """Two memories and rows that quote the first one's text (one way or another) or not."""
    gone, kept = make_memory(SECRET_FACT), make_memory("Tests run with pytest")
    store.upsert(gone)
    store.upsert(kept)
    rows: dict[str, Any] = {
        "gone": gone,
        "kept": kept,
        "own": make_proposal(record=gone, rationale="seen in the runbook"),
        "quoting": make_proposal(
            record=make_memory("Another fact"),
            rationale=f"like {SECRET_FACT.upper()}",
            created_at=at(1),
        ),
        "other": make_proposal(record=kept, created_at=at(2)),
    }
    for name in ("own", "quoting", "other"):
        store.create_proposal(rows[name])
    correction = f"no: {SECRET_FACT}"
    store.append_outcome(
        outcome_event("ev-1", kept.id, "g", outcome="corrected", correction=correction)
    )
    store.append_outcome(outcome_event("ev-2", kept.id, "g", at=at(2)))
    # runs of white space and case do not hide a quote
    query = "where do  DEPLOY keys live in the vault under ops slash deploy?"
    store.record_recall_usage(
        RecallUsage(bundle_id="b-1", query=query, memory_ids=(gone.id,), timestamp=T0)
    )
    store.record_recall_usage(
        RecallUsage(bundle_id="b-2", query="test query", memory_ids=(kept.id,), timestamp=at(3))
    )
    return rows


def ledger_text(store: Any) -> str:
    """Every proposal, outcome event and recall usage as JSON text."""
    return dumps(
        [proposal_to_dict(p) for p in store.list_proposals()]
        + [outcome_event_to_dict(e) for e in store.list_outcomes()]
        + [recall_usage_to_dict(u) for u in store.list_recall_usage()]
    )


class TestScrub:
    def test_scrub_rewrites_every_quoting_row_and_nothing_else(
        self, store: Any, reopen: Any
    ) -> None:
        """The purged memory's proposal and every quoting field become [PURGED] (ignoring
        case and white space); other rows and fields are untouched, also after reopening."""
        rows = purge_fixture(store)
        gone = rows["gone"]
        assert store.delete(gone.id, reason="purge", now=NOW, hard=True)
        counts = store.scrub(gone.id, [SECRET_FACT], now=NOW)
        assert counts == {"proposals": 2, "outcomes": 1, "recallUsage": 1}
        store = reopen(store)
        own = store.get_proposal(rows["own"].id)
        assert own.proposed_record.text == PURGED and own.rationale == "seen in the runbook"
        assert own.proposed_record.id == gone.id and own.metadata["purgedAt"] == NOW
        quoting = store.get_proposal(rows["quoting"].id)
        assert quoting.rationale == PURGED and quoting.proposed_record.text == "Another fact"
        assert store.get_proposal(rows["other"].id) == rows["other"]
        outcomes = {e.id: e.outcome for e in store.list_outcomes()}
        assert outcomes["ev-1"].correction == PURGED and outcomes["ev-2"].outcome == "useful"
        usage = store.list_recall_usage()
        assert [u.query for u in usage] == [PURGED, "test query"]
        assert usage[0].memory_ids == (gone.id,)
        assert "deploy keys" not in ledger_text(store).lower()

    def test_scrub_audits_the_purge_by_id_and_counts_only(self, store: Any) -> None:
        """One purge event with the id and counts, no text; earlier audit rows are kept as
        they were and a hash-chained log still verifies."""
        rows = purge_fixture(store)
        gone = rows["gone"]
        store.delete(gone.id, reason="purge", now=NOW, hard=True)
        before = store.list_events()
        store.scrub(gone.id, [SECRET_FACT], now=NOW)
        events = store.list_events()
        assert events[: len(before)] == before
        assert [(e.operation, e.target_id) for e in events[len(before) :]] == [("purge", gone.id)]
        purge = events[-1]
        assert json.loads(purge.event_json) == {
            "memoryId": gone.id,
            "proposals": 2,
            "outcomes": 1,
            "recallUsage": 1,
        }
        assert "deploy" not in purge.event_json.lower() and purge.reason is None
        verify = getattr(store, "verify_audit_chain", None)
        if verify is not None:
            assert verify()["verified"] is True

    def test_scrub_without_a_quote_changes_nothing(self, store: Any) -> None:
        """Nothing quoting the text (and no proposal of the id): zero counts, rows unchanged."""
        rows = purge_fixture(store)
        before = ledger_text(store)
        counts = store.scrub("mem_0000000000000000", ["text that is nowhere"], now=NOW)
        assert counts == {"proposals": 0, "outcomes": 0, "recallUsage": 0}
        assert ledger_text(store) == before
        assert store.get(rows["gone"].id) is not None

    def test_scrub_rolls_back_with_its_transaction(self, store: Any, reopen: Any) -> None:
        """A failing enclosing block undoes the scrub and its audit event."""
        rows = purge_fixture(store)
        before = ledger_text(store)
        with pytest.raises(RuntimeError), store.transaction():
            store.scrub(rows["gone"].id, [SECRET_FACT], now=NOW)
            raise RuntimeError("boom")
        store = reopen(store)
        assert ledger_text(store) == before
        assert "purge" not in {e.operation for e in store.list_events()}


class TestCandidates:
    def test_returns_scoped_active_records_newest_first_capped(self, store: Any) -> None:
        """select_candidates filters scope, kind, activity and expiry, then applies the cap."""
        keep = [make_memory(f"pytest fact {i}", updated_at=at(i)) for i in range(4)]
        for record in keep:
            store.upsert(record)
        store.upsert(make_memory("pytest elsewhere", scope=OTHER_SCOPE))
        store.upsert(make_memory("pytest convention", kind="repo_convention"))
        store.delete(keep[0].id, reason="old", now=at(5))
        result = select_candidates(store, now=NOW, kinds=["project_fact"], candidate_cap=2)
        assert ids(result.records) == [keep[3].id, keep[2].id]
        assert result.fts_order is None

    def test_no_scopes_means_no_candidates(self, store: Any) -> None:
        """An empty scope list selects nothing."""
        store.upsert(make_memory())
        result = select_candidates(store, now=NOW, scope_keys=[], fts_query='"pytest"')
        assert result.records == ()


class TestProposals:
    def test_create_get_list_update(self, store: Any) -> None:
        """Proposals are stored, listed oldest first (by status too) and replaced by update."""
        first = make_proposal(record=make_memory("first"), created_at=at(1))
        second = make_proposal(record=make_memory("second"), created_at=at(2))
        store.create_proposal(second)
        store.create_proposal(first)
        assert store.get_proposal(first.id) == first
        assert [p.id for p in store.list_proposals()] == [first.id, second.id]
        store.update_proposal(attrs.evolve(first, status="rejected", rejection_reason="dup"))
        assert [p.id for p in store.list_proposals("pending")] == [second.id]
        assert store.get_proposal(first.id).rejection_reason == "dup"
        assert ("proposal", first.id) in operations(store)

    def test_duplicate_create_conflicts_and_missing_update_fails(self, store: Any) -> None:
        """create_proposal refuses an existing id; update_proposal refuses an unknown one."""
        proposal = make_proposal(record=make_memory())
        store.create_proposal(proposal)
        with pytest.raises(ConflictError):
            store.create_proposal(proposal)
        with pytest.raises(NotFoundError):
            store.update_proposal(make_proposal(record=make_memory("never stored")))
        assert store.get_proposal("prop_0000000000000000") is None


class TestEvents:
    def test_mutations_are_audited_in_order(self, store: Any) -> None:
        """upsert, delete and proposal writes each append an event, in insertion order."""
        record = make_memory()
        store.upsert(record)
        store.create_proposal(make_proposal(record=record))
        store.delete(record.id, reason="stale", now=NOW)
        assert [op for op, _ in operations(store)] == ["upsert", "proposal", "delete"]

    def test_append_event_stores_reason_and_json(self, store: Any, clock: Any) -> None:
        """event_json is the caller's JSON, else {"reason": ...}; timestamps come from the clock."""
        store.append_event("compact", "store", reason="weekly")
        store.append_event("recall", "bundle_1", event={"n": 2})
        first, second = [e for e in store.list_events() if e.operation != "migration"][-2:]
        assert json.loads(first.event_json) == {"reason": "weekly"} and first.reason == "weekly"
        assert json.loads(second.event_json) == {"n": 2} and second.reason is None
        assert first.timestamp == T0 and first.id != second.id


class TestRecallUsage:
    def test_records_and_filters_usage(self, store: Any) -> None:
        """Usage comes back oldest first, filtered by run and by an inclusive since."""
        store.record_recall_usage(
            RecallUsage(bundle_id="b2", run_id="r1", timestamp=at(2), scores=(0.5,))
        )
        store.record_recall_usage(RecallUsage(bundle_id="b1", run_id="r2", timestamp=at(1)))
        store.record_recall_usage(RecallUsage(bundle_id="b3", run_id="r1", timestamp=at(3)))
        assert [u.bundle_id for u in store.list_recall_usage()] == ["b1", "b2", "b3"]
        assert [u.bundle_id for u in store.list_recall_usage(run_id="r1")] == ["b2", "b3"]
        assert [u.bundle_id for u in store.list_recall_usage(since=at(2))] == ["b2", "b3"]
        assert store.list_recall_usage(run_id="r1")[0].scores == (0.5,)

    def test_usage_needs_a_bundle_id(self, store: Any) -> None:
        """A usage without bundleId is rejected."""
        with pytest.raises(MemoryValidationError):
            store.record_recall_usage(recall_usage_from_dict({"memoryIds": []}, at(1)))
        with pytest.raises(MemoryValidationError):
            store.record_recall_usage({"bundleId": "b1", "timestamp": at(1)})
        assert store.list_recall_usage() == []

    def test_usage_comes_back_as_recorded(self, store: Any, reopen: Any) -> None:
        """Every field, unknown JSON keys and a row's missing keys survive reopening."""
        full = RecallUsage(
            bundle_id="b1",
            query="how are tests run",
            scopes=(REPO_SCOPE,),
            kinds=("project_fact",),
            memory_ids=("mem_a", "mem_b"),
            scores=(0.75, 0.25),
            token_estimate=9,
            run_id="r1",
            session_id="s1",
            timestamp=T0,
        )
        raw = {"bundleId": "b0", "memoryIds": ["mem_a"], "timestamp": at(-1), "custom": [1]}
        store.record_recall_usage(full)
        store.record_recall_usage(recall_usage_from_dict(raw))
        store = reopen(store)
        legacy, again = store.list_recall_usage()
        assert again == full
        assert legacy.extra == {"custom": [1]} and legacy.memory_ids == ("mem_a",)
        assert dumps(recall_usage_to_dict(legacy)) == dumps(raw)


class TestOutcomes:
    def test_list_orders_by_time_then_id(self, store: Any) -> None:
        """Outcome events are listed per memory or all, ordered by (at, id)."""
        store.append_outcome(outcome_event("b", "mem_a", "g", at=at(2)))
        store.append_outcome(outcome_event("a", "mem_a", "g", at=at(2)))
        store.append_outcome(outcome_event("c", "mem_b", "g", at=at(1)))
        assert [e.id for e in store.list_outcomes()] == ["c", "a", "b"]
        assert [e.id for e in store.list_outcomes("mem_a")] == ["a", "b"]
        assert store.list_outcomes("mem_a")[0].anchors == ()

    def test_same_id_same_payload_is_idempotent_other_payload_conflicts(self, store: Any) -> None:
        """Re-sending an event is a no-op; reusing its id for another payload is refused."""
        event = outcome_event("e1", "mem_a", "g")
        store.append_outcome(event)
        store.append_outcome(event)
        assert len(store.list_outcomes()) == 1
        with pytest.raises(ConflictError):
            store.append_outcome(outcome_event("e1", "mem_a", "g", outcome="dead_end"))

    def test_invalid_events_are_refused(self, store: Any) -> None:
        """Unknown keys and a correction on a non-corrected outcome are validation errors."""
        valid = outcome_event_to_dict(outcome_event("e1", "mem_a", "g"))
        with pytest.raises(MemoryValidationError):
            store.append_outcome(outcome_event_from_dict({**valid, "extra": 1}))
        with pytest.raises(MemoryValidationError):
            store.append_outcome(outcome_event("e2", "mem_a", "g", correction="no"))
        with pytest.raises(MemoryValidationError):
            store.append_outcome(valid)
        assert store.list_outcomes() == []

    def test_reads_materialise_the_current_generation(self, store: Any) -> None:
        """get() shows outcomes, outcomeEventIds and anchor union for the current generation."""
        record = make_memory(metadata={"outcomeGeneration": "gen-2"}, anchors=[Anchor(file="b.py")])
        store.upsert(record)
        store.append_outcome(outcome_event("old", record.id, "gen-1"))
        later = outcome_event(
            "e2",
            record.id,
            "gen-2",
            outcome="corrected",
            correction="use uv",
            at=at(5),
            anchors=[Anchor(file="a.py", symbol="main")],
        )
        store.append_outcome(later)
        store.append_outcome(outcome_event("e1", record.id, "gen-2", at=at(4)))
        got = store.get(record.id)
        assert [o.outcome for o in got.outcomes] == ["useful", "corrected"]
        assert got.metadata["outcomeEventIds"] == ["e1", "e2"]
        assert got.anchors == (Anchor(file="a.py", symbol="main"), Anchor(file="b.py"))
        assert store.list(ListFilter(now=NOW))[0].outcomes == got.outcomes

    def test_upsert_strips_the_outcome_view(self, store: Any) -> None:
        """Outcomes passed to upsert are not stored: only outcome events feed the view."""
        record = make_memory(
            outcomes=[OutcomeEntry(outcome="useful", at=T0)],
            metadata={"outcomeEventIds": ["ghost"]},
        )
        stored = store.upsert(record)
        assert stored.outcomes is None and "outcomeEventIds" not in stored.metadata
        assert store.get(record.id).outcomes is None


class TestRewards:
    def test_append_and_list(self, store: Any) -> None:
        """Reward events are normalised (floats, defaults filled) and listed oldest first."""
        store.append_reward_event(
            RewardEvent(id="r2", memory_id="mem_a", verdict="APPROVE", reward=1, timestamp=at(2))
        )
        store.append_reward_event(
            RewardEvent(
                memory_id="mem_b",
                verdict="REJECT",
                reward=-1,
                q_before=0.5,
                q_after=0.4,
                verdict_synthesis={"votes": (1, 2)},
                run_id="run-1",
            )
        )
        events = store.list_reward_events()
        assert [e.memory_id for e in events] == ["mem_b", "mem_a"]
        assert events[0].timestamp == T0 and events[0].verdict_synthesis == {"votes": [1, 2]}
        assert reward_event_to_dict(events[1]) == {
            "id": "r2",
            "memoryId": "mem_a",
            "verdict": "APPROVE",
            "reward": 1.0,
            "timestamp": at(2),
        }

    def test_rejects_malformed_reward_events(self, store: Any) -> None:
        """Unknown keys and non-numeric rewards are refused."""
        with pytest.raises(MemoryValidationError):
            store.append_reward_event(
                reward_event_from_dict({"memoryId": "m", "verdict": "APPROVE", "reward": 1, "x": 1})
            )
        with pytest.raises(MemoryValidationError):
            store.append_reward_event(RewardEvent(memory_id="m", verdict="APPROVE", reward="1"))
        with pytest.raises(MemoryValidationError):
            store.append_reward_event({"memoryId": "m", "verdict": "APPROVE", "reward": 1})
        assert store.list_reward_events() == []


def merge_of(store: Any, *records: Any, status: str = "applied") -> Any:
    for record in records:
        store.upsert(record)
    proposal = make_proposal(
        operation="merge",
        related=[r.id for r in records],
        status=status,
        reviewed_at=at(1) if status == "applied" else None,
    )
    store.create_proposal(proposal)
    return proposal


class TestRelations:
    def test_applied_merge_links_every_pair(self, store: Any) -> None:
        """An applied merge proposal relates each participant to all others, both ways."""
        a, b, c = make_memory("a fact"), make_memory("b fact"), make_memory("c fact")
        merge_of(store, a, b, c)
        assert store.related_ids(a.id) == sorted([b.id, c.id])
        assert store.get(b.id).relations == tuple(
            Relation(memory_id=m) for m in sorted([a.id, c.id])
        )

    def test_pending_merge_links_nothing_until_applied(self, store: Any) -> None:
        """Relations derive only from applied merges."""
        a, b = make_memory("a fact"), make_memory("b fact")
        proposal = merge_of(store, a, b, status="pending")
        assert store.related_ids(a.id) == []
        store.update_proposal(attrs.evolve(proposal, status="applied", reviewed_at=at(2)))
        assert store.related_ids(a.id) == [b.id]

    def test_relations_survive_reopen(self, store: Any, reopen: Any) -> None:
        """Relations are rebuilt from the proposal ledger after reopening."""
        a, b = make_memory("a fact"), make_memory("b fact")
        merge_of(store, a, b)
        store = reopen(store)
        assert store.related_ids(b.id) == [a.id]
        assert store.get(a.id).relations == (Relation(memory_id=b.id),)

    def test_relations_cannot_be_forged_through_upsert(self, store: Any, reopen: Any) -> None:
        """A record written with relations does not gain them."""
        a, b = make_memory("a fact"), make_memory("b fact")
        store.upsert(b)
        store.upsert(attrs.evolve(a, relations=[Relation(memory_id=b.id)]))
        assert store.get(a.id).relations == () and store.related_ids(a.id) == []
        store = reopen(store)
        assert store.get(a.id).relations == ()

    def test_hard_delete_drops_relations(self, store: Any) -> None:
        """Erasing a participant removes its relation rows."""
        a, b = make_memory("a fact"), make_memory("b fact")
        merge_of(store, a, b)
        store.delete(b.id, reason="compact", now=NOW, hard=True)
        assert store.related_ids(a.id) == []


class TestTransactions:
    def test_exception_rolls_everything_back(self, store: Any, reopen: Any) -> None:
        """A failing block leaves no record, proposal or event behind, also after reopening."""
        before = len(store.list_events())
        record = make_memory()
        with pytest.raises(RuntimeError), store.transaction():
            store.upsert(record)
            store.create_proposal(make_proposal(record=record))
            store.append_outcome(outcome_event("e1", record.id, "g"))
            raise RuntimeError("boom")
        assert store.get(record.id) is None and store.list_proposals() == []
        assert len(store.list_events()) == before
        store = reopen(store)
        assert store.count() == 0 and store.list_outcomes() == []

    def test_commit_makes_writes_durable(self, store: Any, reopen: Any) -> None:
        """Writes of a committed block survive reopening."""
        a, b = make_memory("a fact"), make_memory("b fact")
        with store.transaction():
            store.upsert(a)
            store.upsert(b)
        store = reopen(store)
        assert sorted(ids(store.iter_all_records())) == sorted([a.id, b.id])

    def test_nested_failure_rolls_back_only_the_inner_block(self, store: Any, reopen: Any) -> None:
        """A caught failure of an inner block undoes that block alone."""
        a, b = make_memory("a fact"), make_memory("b fact")
        with store.transaction():
            store.upsert(a)
            with pytest.raises(ValueError), store.transaction():
                store.upsert(b)
                raise ValueError("inner")
        store = reopen(store)
        assert ids(store.iter_all_records()) == [a.id]

    def test_escaping_inner_failure_rolls_back_the_outer_block(self, store: Any) -> None:
        """An exception that leaves both blocks undoes both."""
        a, b = make_memory("a fact"), make_memory("b fact")
        with pytest.raises(KeyError), store.transaction():
            store.upsert(a)
            with store.transaction():
                store.upsert(b)
                raise KeyError("inner")
        assert store.count() == 0


class TestExportImport:
    def populate(self, store: Any) -> None:
        a = make_memory(
            "a fact",
            metadata={"outcomeGeneration": "g1"},
            valid_from=T0,
            source_task_id="unit-3",
            updated_at=at(1),
        )
        b = make_memory("b fact", updated_at=at(2), supersedes_reason="replaced older")
        scratch = make_memory("scratch thought", kind="scratch", created_at=at(-5, days=-10))
        for record in (a, b, scratch):
            store.upsert(record)
        store.delete(b.id, reason="obsolete", now=at(3))
        store.append_outcome(outcome_event("e1", a.id, "g1", anchors=[Anchor(file="src/x.py")]))
        store.create_proposal(make_proposal(record=make_memory("pending idea")))
        store.create_proposal(
            make_proposal(
                operation="merge", related=[a.id, b.id], status="applied", created_at=at(4)
            )
        )

    def test_round_trip_is_byte_identical(
        self, store: Any, store_kind: str, tmp_path: Path
    ) -> None:
        """export -> fresh store -> import -> export reproduces the same bytes."""
        self.populate(store)
        counts = export_store(store, tmp_path / "first")
        assert counts == {"memories": 3, "proposals": 2, "outcomes": 1}
        fresh = open_store(store_kind, tmp_path / "fresh")
        try:
            report = import_jsonl(
                fresh, tmp_path / "first" / "export", secrets=RegexSecretDetector()
            )
            assert report["invalidCount"] == 0 and report["importedMemories"] == 3
            export_store(fresh, tmp_path / "second")
        finally:
            fresh.close()
        for name in ("memories.jsonl", "proposals.jsonl", "outcome-events.jsonl"):
            first = (tmp_path / "first" / "export" / name).read_bytes()
            assert first.endswith(b"\n")
            assert first == (tmp_path / "second" / "export" / name).read_bytes(), name

    def test_export_keeps_provenance_and_empty_files(self, store: Any, tmp_path: Path) -> None:
        """Exported records carry provenance; an empty export file is empty (no newline)."""
        store.upsert(make_memory(valid_from=T0, source_task_id="unit-9"))
        export_store(store, tmp_path)
        row = json.loads((tmp_path / "export" / "memories.jsonl").read_text())
        assert row["validFrom"] == T0 and row["sourceTaskId"] == "unit-9"
        assert (tmp_path / "export" / "proposals.jsonl").read_bytes() == b""

    def test_import_is_last_row_wins_and_reports_invalid_rows(
        self, store: Any, tmp_path: Path
    ) -> None:
        """The newest row of an id wins even when invalid; invalid rows are counted with reasons."""
        good = make_memory("good fact")
        newer = attrs.evolve(good, confidence=0.2)
        owned = make_memory("owned by a broken row")
        rows = [
            json.dumps(record_to_dict(good)),
            json.dumps(record_to_dict(newer)),
            json.dumps(record_to_dict(owned)),
            json.dumps({**record_to_dict(owned), "text": "tampered"}),
            "{not json",
        ]
        (tmp_path / "memories.jsonl").write_text("\n".join(rows) + "\n")
        report = import_jsonl(store, tmp_path, secrets=RegexSecretDetector())
        assert report["importedMemories"] == 1 and report["scannedRows"] == 5
        assert store.get(good.id).confidence == 0.2 and store.get(owned.id) is None
        assert [(r["file"], r["line"]) for r in report["invalidRows"]] == [
            ("memories.jsonl", 4),
            ("memories.jsonl", 5),
        ]
        assert "contentHash" in report["invalidRows"][0]["reason"]

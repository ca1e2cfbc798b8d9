"""The storage providers agree on random sequences of writes, deletes and reads."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from factories import (
    at,
    available_store_kinds,
    make_proposal,
    open_store,
)
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from strategies import MEMORY_KINDS, MEMORY_SCOPES, memories

from swarmmem.core.model.codec import proposal_to_dict, record_to_dict
from swarmmem.core.model.errors import SwarmMemoryError
from swarmmem.ports.storage import ListFilter


def _snapshot(record: Any) -> Any:
    if record is None:
        return None
    return record_to_dict(record), record.relations


class StoresAgree(RuleBasedStateMachine):
    """Applies the same random operations to every provider and compares what they return."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="swarmmem-agree-"))
        self.stores = [open_store(kind, self.tmp / kind) for kind in available_store_kinds()]
        self.ids: list[str] = []

    def teardown(self) -> None:
        for store in self.stores:
            store.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def each(self, action: Callable[[Any], Any]) -> Any:
        """Run ``action`` on every store; all must return the same value or raise the same error."""
        outcomes = []
        for store in self.stores:
            try:
                outcomes.append(("ok", action(store)))
            except SwarmMemoryError as exc:
                outcomes.append(("error", type(exc).__name__))
        assert all(o == outcomes[0] for o in outcomes), outcomes
        return outcomes[0]

    @rule(batch=st.lists(memories, min_size=1, max_size=3))
    def upsert(self, batch: list[Any]) -> None:
        """Write one to three records."""
        for record in batch:
            self.each(lambda s, record=record: _snapshot(s.upsert(record)))
            if record.id not in self.ids:
                self.ids.append(record.id)

    @rule(data=st.data(), hard=st.booleans(), minute=st.integers(0, 9))
    def delete(self, data: st.DataObject, hard: bool, minute: int) -> None:
        """Delete a known (or unknown) id, softly or hard."""
        memory_id = data.draw(st.sampled_from([*self.ids, "mem_0000000000000000"]))
        self.each(lambda s: s.delete(memory_id, reason="random", now=at(minute), hard=hard))

    @rule(
        scopes=st.none() | st.lists(st.sampled_from(MEMORY_SCOPES), max_size=2),
        kinds=st.none() | st.lists(st.sampled_from(MEMORY_KINDS), max_size=2),
        inactive=st.booleans(),
        expired=st.booleans(),
        limit=st.none() | st.integers(0, 4),
        day=st.integers(0, 10),
    )
    def list_records(
        self, scopes: Any, kinds: Any, inactive: bool, expired: bool, limit: Any, day: int
    ) -> None:
        """Filtered listings agree, order included."""
        flt = ListFilter(
            now=at(days=day),
            scope_keys=None if scopes is None else tuple(s.key for s in scopes),
            kinds=None if kinds is None else tuple(kinds),
            include_inactive=inactive,
            include_expired=expired,
            limit=limit,
        )
        self.each(lambda s: [_snapshot(r) for r in s.list(flt)])

    @rule(record=memories, minute=st.integers(0, 3))
    def propose(self, record: Any, minute: int) -> None:
        """Store an add proposal (duplicates must fail the same way everywhere)."""
        proposal = make_proposal(record=record, created_at=at(minute))
        self.each(lambda s: proposal_to_dict(s.create_proposal(proposal)))

    @rule(data=st.data(), status=st.sampled_from(("applied", "rejected", "pending")))
    def review(self, data: st.DataObject, status: str) -> None:
        """Change the status of a stored proposal (or try an unknown one)."""
        stored = self.stores[0].list_proposals()
        if not stored:
            return
        proposal = data.draw(st.sampled_from(stored))
        self.each(
            lambda s: proposal_to_dict(s.update_proposal(attrs.evolve(proposal, status=status)))
        )

    @rule(data=st.data())
    def merge(self, data: st.DataObject) -> None:
        """Store an applied merge of two or three known ids."""
        if len(self.ids) < 2:
            return
        related = data.draw(
            st.lists(st.sampled_from(self.ids), min_size=2, max_size=3, unique=True)
        )
        proposal = make_proposal(operation="merge", related=related, status="applied")
        self.each(lambda s: s.create_proposal(proposal).id)

    @rule(record=memories)
    def failed_transaction(self, record: Any) -> None:
        """A block that raises leaves every store unchanged."""

        def attempt(store: Any) -> None:
            try:
                with store.transaction():
                    store.upsert(record)
                    store.delete(record.id, reason="inside", now=at(1))
                    raise RuntimeError("abort")
            except RuntimeError:
                return

        self.each(attempt)

    @invariant()
    def same_state(self) -> None:
        """Counts, every known record, relations and proposals agree."""
        self.each(lambda s: s.count())
        self.each(lambda s: [(_snapshot(s.get(i)), s.related_ids(i)) for i in self.ids])
        self.each(lambda s: [proposal_to_dict(p) for p in s.list_proposals()])
        for flt in (
            ListFilter(now=at(days=2)),
            ListFilter(now=at(days=2), include_inactive=True, include_expired=True),
        ):
            self.each(lambda s, flt=flt: [_snapshot(r) for r in s.list(flt)])


StoresAgree.TestCase.settings = settings(
    max_examples=30,
    stateful_step_count=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestStoresAgree = StoresAgree.TestCase

"""A store seen through one context's scopes: what reports, lessons and exports read.

When repositories share one store (an SQLite file outside the project, or PostgreSQL), every
read a report makes goes through :class:`ScopedView`, so another repository's memories,
proposals, recall usage, outcomes and rewards never reach it. Writes pass through unchanged
(the use cases that write resolve their targets inside the scopes themselves).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Sequence
from typing import Any

import attrs

from swarmmem.core.model.events import OutcomeEvent, RecallUsage, RewardEvent
from swarmmem.core.model.records import MemoryProposal, MemoryRecord, MemoryScope
from swarmmem.ports.storage import (
    ListFilter,
    MemoryHistory,
    RecordKey,
    StorageProvider,
    StoredEvent,
)


class ScopedView:
    """``store``'s reads limited to records whose scope is one of ``scopes``."""

    def __init__(self, store: StorageProvider, scopes: Sequence[MemoryScope]) -> None:
        self._store = store
        self.scope_keys = frozenset(scope.key for scope in scopes)
        # what makes a recall ours: a scope narrower than the workspace (which repositories
        # in one folder share)
        self._own_keys = frozenset(s.key for s in scopes if s.type != "workspace")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def _visible(self, record: MemoryRecord | None) -> bool:
        return record is not None and record.scope.key in self.scope_keys

    def _visible_ids(self, memory_ids: Sequence[str]) -> set[str]:
        found = self._store.get_many(list(dict.fromkeys(memory_ids)))
        return {i for i, r in found.items() if self._visible(r)}

    # -- records ---------------------------------------------------------------------------
    def get(self, memory_id: str) -> MemoryRecord | None:
        record = self._store.get(memory_id)
        return record if self._visible(record) else None

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, MemoryRecord]:
        return {i: r for i, r in self._store.get_many(memory_ids).items() if self._visible(r)}

    def _scoped(self, flt: ListFilter) -> ListFilter:
        wanted = (
            self.scope_keys if flt.scope_keys is None else self.scope_keys & set(flt.scope_keys)
        )
        return attrs.evolve(flt, scope_keys=tuple(sorted(wanted)))

    def list(self, flt: ListFilter) -> builtins.list[MemoryRecord]:
        return self._store.list(self._scoped(flt))

    def count_where(self, flt: ListFilter) -> int:
        return self._store.count_where(self._scoped(flt))

    def list_keys(self, flt: ListFilter) -> builtins.list[RecordKey]:
        return self._store.list_keys(self._scoped(flt))

    def count(self) -> int:
        return sum(1 for _ in self.iter_all_records())

    def iter_all_records(self) -> Iterator[MemoryRecord]:
        return (r for r in self._store.iter_all_records() if self._visible(r))

    def related_ids(self, memory_id: str) -> builtins.list[str]:
        related = self._store.related_ids(memory_id) if self.get(memory_id) else []
        visible = self._visible_ids(related)
        return [i for i in related if i in visible]

    # -- proposals -------------------------------------------------------------------------
    def _proposal_visible(self, proposal: MemoryProposal | None) -> bool:
        if proposal is None:
            return False
        if proposal.proposed_record is not None:
            return self._visible(proposal.proposed_record)
        targets = [proposal.target_memory_id or "", *(proposal.related_memory_ids or ())]
        return bool(self._visible_ids([t for t in targets if t]))

    def get_proposal(self, proposal_id: str) -> MemoryProposal | None:
        proposal = self._store.get_proposal(proposal_id)
        return proposal if self._proposal_visible(proposal) else None

    def list_proposals(self, status: str | None = None) -> builtins.list[MemoryProposal]:
        return [p for p in self._store.list_proposals(status) if self._proposal_visible(p)]

    # -- one memory's history (when the store has the MemoryHistory capability) ------------
    def history(self) -> MemoryHistory | None:
        """The store's :class:`MemoryHistory` reads seen through the scopes, or ``None``."""
        return _ScopedHistory(self) if isinstance(self._store, MemoryHistory) else None

    # -- ledgers ---------------------------------------------------------------------------
    def list_recall_usage(
        self, *, run_id: str | None = None, since: str | None = None
    ) -> builtins.list[RecallUsage]:
        """Usage rows that recalled in one of our scopes narrower than the workspace (a
        shared workspace scope alone does not make another repository's recall ours)."""
        rows = self._store.list_recall_usage(run_id=run_id, since=since)
        return [u for u in rows if any(s.key in self._own_keys for s in u.scopes or ())]

    def list_outcomes(self, memory_id: str | None = None) -> builtins.list[OutcomeEvent]:
        if memory_id is not None:
            return self._store.list_outcomes(memory_id) if self.get(memory_id) else []
        events = self._store.list_outcomes()
        visible = self._visible_ids([e.memory_id for e in events])
        return [e for e in events if e.memory_id in visible]

    def list_reward_events(self) -> builtins.list[RewardEvent]:
        events = self._store.list_reward_events()
        visible = self._visible_ids([e.memory_id for e in events])
        return [e for e in events if e.memory_id in visible]


class _ScopedHistory:
    """A store's :class:`MemoryHistory` reads limited to ``view``'s scopes: proposals as
    :meth:`ScopedView.list_proposals` shows them, and nothing about a memory it does not
    show (audit events are not scoped, as :meth:`ScopedView.list_events` is not)."""

    def __init__(self, view: ScopedView) -> None:
        self._view = view
        self._store: MemoryHistory = view._store  # type: ignore[assignment]

    def proposals_mentioning(self, memory_id: str) -> builtins.list[MemoryProposal]:
        found = self._store.proposals_mentioning(memory_id)
        return [p for p in found if self._view._proposal_visible(p)]

    def events_mentioning(self, ids: Sequence[str]) -> builtins.list[StoredEvent]:
        return self._store.events_mentioning(ids)

    def reward_events_of(self, memory_id: str) -> builtins.list[RewardEvent]:
        return self._store.reward_events_of(memory_id) if self._view.get(memory_id) else []

    def recall_usage_mentioning(
        self, memory_id: str, newest: int | None = None
    ) -> builtins.list[RecallUsage]:
        """As :meth:`ScopedView.list_recall_usage` keeps them (recalled in our scopes)."""
        rows = self._store.recall_usage_mentioning(memory_id, newest)
        own = self._view._own_keys
        return [u for u in rows if any(s.key in own for s in u.scopes or ())]


def history_of(store: StorageProvider | ScopedView) -> MemoryHistory | None:
    """The :class:`MemoryHistory` reads of ``store`` (through its scopes for a view), or
    ``None`` when the store has no such query."""
    if isinstance(store, ScopedView):
        return store.history()
    return store if isinstance(store, MemoryHistory) else None

"""Repository identities in one store, and adopting the memories of an earlier identity.

A repository's memories live under the scope ``{"type": "repository", "repoId": ...}`` whose id
is derived from the repository identity (``memory.projectId``, else the ``origin`` remote, else
the folder name with a hash of its path). Renaming the folder or changing the remote changes
the identity, and the memories stored before then are no longer in this context's scopes.
Nothing is lost: :func:`other_identities` counts them per identity (``swarmmem status``) and
:func:`rescope` adopts them into the current identity (``swarmmem rescope``, a trusted local
command, never an agent tool).

Memory ids are derived from the scope, so an adopted memory gets a new id; the old record is
tombstoned with a pointer to its replacement (``metadata.rescopeReplacementId``), its learned
value and provenance travel with it, and pending proposals about it follow. Everything happens
in one transaction and is recorded as one ``rescope`` audit event.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from swarmmem.core.model.errors import ConflictError, MemoryValidationError, NotFoundError
from swarmmem.core.model.ids import content_hash, memory_id_for_hash
from swarmmem.core.model.records import MemoryProposal, MemoryRecord, MemoryScope
from swarmmem.core.model.semantics import ListFilter
from swarmmem.ports.storage import ScopeCounts, StorageProvider
from swarmmem.ports.vectors import VectorIndex

REPO_ID_MAX = 128


def scope_counts(store: StorageProvider) -> dict[str, int]:
    """Active (not deleted, not superseded) memories per scope key; a store's own
    ``scope_counts`` query when it has one."""
    if isinstance(store, ScopeCounts):
        return dict(store.scope_counts())
    counts: dict[str, int] = {}
    for record in store.iter_all_records():
        if record.active:
            counts[record.scope.key] = counts.get(record.scope.key, 0) + 1
    return counts


def repository_scope_key(repo_id: str) -> str:
    """The scope key of the repository identity ``repo_id``."""
    return str(MemoryScope(type="repository", repo_id=repo_id).key)


def other_identities(
    store: StorageProvider, current: MemoryScope, *, now: str
) -> list[dict[str, Any]]:
    """Repository identities other than ``current`` holding active memories or pending
    proposals in ``store``: ``{repository_id, memories, pending_proposals, last_root,
    same_folder}`` (the folder the newest memory, else a proposal, was written from, and
    whether it is ``current``'s folder: an earlier identity of this repository), most
    memories first."""
    memories: dict[str, int] = {}
    roots: dict[str, str | None] = {}
    for key, count in scope_counts(store).items():
        try:
            fields = json.loads(key)
        except ValueError:
            continue
        if not isinstance(fields, dict) or fields.get("type") != "repository":
            continue
        repo_id = fields.get("repoId")
        if not isinstance(repo_id, str) or repo_id == current.repo_id or count <= 0:
            continue
        newest = store.list(ListFilter(now=now, scope_keys=(key,), include_expired=True, limit=1))
        memories[repo_id] = count
        roots[repo_id] = newest[0].scope.repo_root if newest else None
    pending: dict[str, int] = {}
    for proposal in store.list_proposals("pending"):
        scope = proposal.proposed_record.scope if proposal.proposed_record else None
        if scope is None or scope.type != "repository" or not scope.repo_id:
            continue
        if scope.repo_id != current.repo_id:
            pending[scope.repo_id] = pending.get(scope.repo_id, 0) + 1
            roots.setdefault(scope.repo_id, scope.repo_root)
    found = sorted(roots, key=lambda i: (-memories.get(i, 0), -pending.get(i, 0), i))
    return [
        {
            "repository_id": i,
            "memories": memories.get(i, 0),
            "pending_proposals": pending.get(i, 0),
            "last_root": roots[i],
            "same_folder": roots[i] == current.repo_root,
        }
        for i in found
    ]


def _moved(record: MemoryRecord, target: MemoryScope, now: str) -> MemoryRecord:
    digest = content_hash(target.as_dict(), record.kind, record.text)
    return attrs.evolve(
        record,
        scope=target,
        content_hash=digest,
        id=memory_id_for_hash(digest),
        metadata={**record.metadata, "rescopedFrom": record.id},
        updated_at=now,
        relations=(),
        outcomes=None,
    )


def _moved_proposal(
    proposal: MemoryProposal, target: MemoryScope, source_key: str, ids: Mapping[str, str], now: str
) -> MemoryProposal | None:
    """``proposal`` pointing at the adopted memories (``None`` when it is not about them)."""
    changes: dict[str, Any] = {}
    record = proposal.proposed_record
    if record is not None and record.scope.key == source_key:
        changes["proposed_record"] = _moved(record, target, now)
    target_id = proposal.target_memory_id
    if target_id is not None and target_id in ids:
        changes["target_memory_id"] = ids[target_id]
    related = proposal.related_memory_ids or ()
    if any(i in ids for i in related):
        changes["related_memory_ids"] = tuple(ids.get(i, i) for i in related)
    return attrs.evolve(proposal, **changes) if changes else None


@attrs.frozen(kw_only=True)
class RescopeService:
    """Identities in the store and adoption into ``target`` (this context's repository scope).

    ``vectors`` gives the vector index to keep in step (``None`` when embeddings are off) and
    ``embed`` embeds adopted records; both run after the transaction commits. ``live_elsewhere``
    tells whether a folder is another repository that still exists (not this one): memories
    last written from such a folder are adopted only when forced.
    """

    store: StorageProvider
    target: MemoryScope
    identity_kind: str
    now: Callable[[], str]
    vectors: Callable[[], VectorIndex | None]
    embed: Callable[[list[MemoryRecord]], Any]
    live_elsewhere: Callable[[str], bool] = lambda _root: False

    def identities(self) -> dict[str, Any]:
        """This repository's identity and the other identities with memories in the store."""
        return {
            "repository_id": self.target.repo_id,
            "identity_kind": self.identity_kind,
            "other_identities": other_identities(self.store, self.target, now=self.now()),
        }

    def rescope(self, from_repo_id: str, *, apply: bool, force: bool = False) -> dict[str, Any]:
        """Adopt the active memories (and pending proposals) of the repository identity
        ``from_repo_id`` into this repository's scope; a dry run unless ``apply``.

        Raises:
            MemoryValidationError: ``from_repo_id`` is malformed or is this identity.
            NotFoundError: nothing is stored under ``from_repo_id``.
            ConflictError: the memories were last written from another folder that still
                exists (a live repository, not an earlier name of this one) and not ``force``.
        """
        source = from_repo_id.strip() if isinstance(from_repo_id, str) else ""
        if not source or len(source) > REPO_ID_MAX or not source.isprintable():
            raise MemoryValidationError("--from must name a repository id (see `status`)")
        if source == self.target.repo_id:
            raise MemoryValidationError(
                f"{source} is this repository's identity already; nothing to adopt"
            )
        now = self.now()
        key = repository_scope_key(source)
        records = self.store.list(ListFilter(now=now, scope_keys=(key,), include_expired=True))
        pending = [
            p
            for p in self.store.list_proposals("pending")
            if p.proposed_record is not None and p.proposed_record.scope.key == key
        ]
        if not records and not pending:
            raise NotFoundError(f"no memories are stored under repository identity {source}")
        written = [*records, *(p.proposed_record for p in pending if p.proposed_record)]
        newest = max(written, key=lambda r: (r.updated_at, r.id), default=None)
        root = newest.scope.repo_root if newest is not None else None
        if root and not force and self.live_elsewhere(root):
            raise ConflictError(
                f"the memories of {source} were last written from {root}, which still exists: "
                "they may belong to another repository; pass --force to adopt them anyway"
            )
        result: dict[str, Any] = {
            "from_repository_id": source,
            "to_repository_id": self.target.repo_id,
            "memories": len(records),
            "pending_proposals": len(pending),
            "applied": False,
        }
        if not apply:
            return result
        adopted, already, ids = self._apply(source, key, records, now)
        result.update(applied=True, adopted=len(adopted), already_present=already, ids=ids)
        self._sync_vectors(adopted, list(ids))
        return result

    def _apply(
        self, source: str, key: str, records: list[MemoryRecord], now: str
    ) -> tuple[list[MemoryRecord], int, dict[str, str]]:
        store = self.store
        adopted: list[MemoryRecord] = []
        already = 0
        ids: dict[str, str] = {}
        reason = f"rescoped from repository {source} to {self.target.repo_id}"
        with store.transaction():
            for record in records:
                moved = _moved(record, self.target, now)
                if store.get(moved.id) is None:
                    adopted.append(store.upsert(moved))
                else:  # the same fact is stored here already (in any state): keep that one
                    already += 1
                ids[record.id] = moved.id
                metadata = {
                    **record.metadata,
                    "deleted": True,
                    "deleteReason": reason,
                    "rescopeReplacementId": moved.id,
                }
                store.upsert(attrs.evolve(record, metadata=metadata, updated_at=now))
            moved_proposals = 0
            for proposal in store.list_proposals("pending"):
                changed = _moved_proposal(proposal, self.target, key, ids, now)
                if changed is not None:
                    store.update_proposal(changed)
                    moved_proposals += 1
            store.append_event(
                "rescope",
                self.target.repo_id or "",
                reason=reason,
                event={
                    "fromRepositoryId": source,
                    "toRepositoryId": self.target.repo_id,
                    "memories": len(records),
                    "adopted": len(adopted),
                    "alreadyPresent": already,
                    "pendingProposals": moved_proposals,
                    "ids": ids,
                },
            )
        return adopted, already, ids

    def _sync_vectors(self, adopted: list[MemoryRecord], old_ids: list[str]) -> None:
        vectors = self.vectors()
        if vectors is None:
            return
        if old_ids:
            vectors.delete(old_ids)
        if adopted:
            self.embed(adopted)

"""Undoing a curator decision: the memory an ``add`` approval wrote is forgotten, and the
proposal (approved or rejected) is filed again for a new decision.

Only those two decisions can be undone: forgetting what an update, merge, supersede or delete
wrote would not restore what it changed. A decision is undone once: the proposal then names
its pending copy (``metadata.undoneBy``), and that copy is the one to decide.
"""

from __future__ import annotations

from collections.abc import Mapping

from swarmmem.core.maintenance.management import ManagementService
from swarmmem.core.model.errors import ConflictError, NotFoundError
from swarmmem.core.model.reports import UndoResult
from swarmmem.core.writes.service import WriteService
from swarmmem.ports.storage import StorageProvider


def undo_decision(
    proposal_id: str,
    *,
    reason: str | None,
    writes: WriteService,
    management: ManagementService,
    scoped: StorageProvider,
) -> UndoResult:
    """Undo the decision on ``proposal_id`` (audited; see the module's docstring), reading
    the proposal through ``scoped`` (this context's view: another's is not found), forgetting
    through ``management`` and filing the copy through ``writes`` under its first proposer.

    Raises:
        NotFoundError: no such proposal in this context.
        ConflictError: it is pending, was undone already, or its decision cannot be undone.
    """
    prop = writes.store.get_proposal(proposal_id)
    if prop is None or scoped.get_proposal(proposal_id) is None:
        raise NotFoundError(f"proposal {proposal_id} was not found")
    summary = prop.metadata.get("curatorDecision")
    decision = summary if isinstance(summary, Mapping) else {}
    action = decision.get("action")
    if prop.status == "pending":
        raise ConflictError(f"proposal {proposal_id} is still pending: nothing to undo")
    refiled = prop.metadata.get("undoneBy")
    if isinstance(refiled, str):
        raise ConflictError(
            f"the {action or prop.status} decision on {proposal_id} was already undone: "
            f"the proposal was filed again as {refiled}; decide that one"
        )
    forgotten = None
    if prop.status == "applied" and action == "add":
        memory_id = decision.get("memoryId")
        if isinstance(memory_id, str) and management.get(memory_id).active:
            why = reason or f"undone: the add decision on {proposal_id}"
            management.forget(memory_id, reason=why)
            forgotten = memory_id
    elif prop.status != "rejected":
        raise ConflictError(
            f"the {action or prop.status} decision on {proposal_id} cannot be undone; only "
            "add approvals and rejections can"
        )
    copy = writes.refile(
        prop, f"re-filed by undo of {action or prop.status} of {prop.id}: {prop.rationale}"
    )
    return UndoResult(
        proposal_id=proposal_id,
        forgotten_memory_id=forgotten,
        refiled_proposal_id=copy.id,
        refiled_status=copy.status,
    )

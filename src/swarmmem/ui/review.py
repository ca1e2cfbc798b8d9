"""The review pages: the pending queue as ``swarmmem review`` shows it (``/review``), and
its decisions (approve, edit then approve, reject with a reason, merge into a similar memory,
undo, a batch of ticked proposals with a preview first), each through ``Memory.curate``
labelled as a person's, exactly as ``swarmmem review`` decides (house rule 12).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from swarmmem.core.model.errors import MemoryValidationError, NotFoundError, SwarmMemoryError
from swarmmem.core.model.records import MEMORY_KINDS
from swarmmem.core.model.reports import ProposalDetails
from swarmmem.core.model.text import lookalike_note
from swarmmem.core.writes.curator import (
    DEFAULT_REJECT_REASON,
    MERGE_REASON,
    PERSON_REVIEWER,
    approval_decision,
)
from swarmmem.memory import Memory
from swarmmem.results import redact_secrets
from swarmmem.ui.viewer import ID_PATTERN, Refused, path_id, status_of, viewer_of

QUEUE_LIMIT = 100
"""The most pending proposals the review page lists."""
EDITABLE = ("add", "update")
"""The operations an edit may rephrase (as in ``swarmmem review``)."""
NOTICES = {
    "approved": "Approved {id}.",
    "edited": "Approved {id} with your text.",
    "rejected": "Rejected {id}.",
    "merged": "Merged {id} into the memory it repeats (rejected as a duplicate).",
    "undone": "Undid the decision on {id}; it is pending again as a copy.",
    "batch": "Decided {n} proposals.",
}
"""What a review decision says on the page it returns to."""
UNDOABLE = frozenset({"approved", "rejected", "merged"})
"""The notices of a decision a person can undo from the notice (an edited add too)."""
MERGEABLE_STATES = ("active", "suppressed")
"""The states of a similar memory a proposal can be merged into (as ``swarmmem review``)."""
BATCH_ACTIONS = ("approve", "reject")
"""What a batch of ticked proposals can be given."""
_PICK = "pick_"
"""The prefix of a batch form's checkbox of one proposal (``pick_<proposal id>``)."""


def _memory_view(mem: Memory, memory_id: str | None) -> dict[str, Any] | None:
    """A memory of this context shown beside a proposal (its text and state), if any."""
    if not memory_id:
        return None
    try:
        record = mem.get(memory_id)
    except SwarmMemoryError:
        return {"id": memory_id, "state": "not found", "text": None, "kind": None}
    return {
        "id": record.id,
        "state": mem.state_of(record),
        "text": record.text,
        "kind": record.kind,
    }


def _card(mem: Memory, details: ProposalDetails) -> dict[str, Any]:
    """A pending proposal as the review page shows it (what ``swarmmem review`` shows)."""
    prop = details.proposal
    record = prop.get("proposedRecord") or {}
    refs = [r for r in prop.get("evidenceRefs") or () if isinstance(r, str)]
    operation = str(prop.get("operation"))
    text = record.get("text")
    return {
        "id": details.proposal_id,
        "operation": operation,
        "decision": approval_decision(operation),
        "age": details.age,
        "created_at": prop.get("createdAt"),
        "kind": record.get("kind"),
        "text": text,
        "rationale": prop.get("rationale"),
        "refs": refs,
        "evidence_status": mem.evidence_status(refs),
        "proposed_by": details.proposed_by,
        "needs_rephrasing": details.needs_rephrasing,
        "lookalike": lookalike_note(text, prop.get("rationale"), *refs),
        "similar": [
            {**(_memory_view(mem, s.get("memory_id")) or {}), "score": s.get("score")}
            for s in details.similar
            if isinstance(s.get("memory_id"), str)
        ],
        "target": _memory_view(mem, prop.get("targetMemoryId")),
        "editable": operation in EDITABLE and bool(text),
    }


async def review(request: Request) -> Response:
    """The pending queue, oldest first, each proposal with its decision forms."""
    viewer = viewer_of(request)
    return _review_page(request, viewer.mem)


def _skipped(request: Request) -> list[str]:
    """The proposals this review skipped (``?skip=ID,ID``: a link, nothing is stored)."""
    given = request.query_params.get("skip", "")[:20_000].split(",")
    return [i for i in dict.fromkeys(given) if ID_PATTERN.match(i) and i.startswith("prop_")]


def _review_page(
    request: Request, mem: Memory, *, error: str | None = None, status: int = 200
) -> Response:
    queue = mem.review_queue(QUEUE_LIMIT)
    base = viewer_of(request).base
    skipped = _skipped(request)
    shown = [d for d in queue.proposals if d.proposal_id not in skipped]
    cards = [_card(mem, details) for details in shown]
    done = request.query_params.get("done")
    shown_id = request.query_params.get("id", "")
    notice = None
    if done == "batch":
        count = request.query_params.get("n", "")
        notice = NOTICES["batch"].format(n=int(count)) if count.isdigit() else None
    elif done in NOTICES and ID_PATTERN.match(shown_id):
        notice = NOTICES[done].format(id=shown_id)
    memory_id = request.query_params.get("memory", "")

    def skip_link(proposal_id: str) -> str:
        return f"{base}/review?" + urlencode({"skip": ",".join([*skipped, proposal_id])})

    return viewer_of(request).render(
        "review.html",
        status=status,
        title="Review",
        cards=cards,
        total=queue.pending_count,
        skipped=[i for i in skipped if any(d.proposal_id == i for d in queue.proposals)],
        skip_link=skip_link,
        kinds=sorted(MEMORY_KINDS),
        notice=notice,
        notice_memory=memory_id if notice and ID_PATTERN.match(memory_id) else None,
        undo_id=shown_id if notice and done in UNDOABLE | {"edited"} else None,
        error=error,
        reject_reason=DEFAULT_REJECT_REASON,
    )


def _decide(
    request: Request,
    proposal_id: str,
    done: str,
    decide: Callable[[Memory], str | None],
    *,
    refused: str = "stays pending",
) -> Response:
    """Run ``decide`` (a curator decision; it returns the memory an add wrote) and go back to
    the queue saying so; a refused decision shows the queue again with the error."""
    view = viewer_of(request)
    mem = view.mem
    try:
        written = decide(mem)
    except SwarmMemoryError as exc:
        message = f"{proposal_id} {refused}: {redact_secrets(str(exc))}"
        return _review_page(request, mem, error=message, status=status_of(exc))
    args = {"done": done, "id": proposal_id, **({"memory": written} if written else {})}
    return RedirectResponse(f"{view.base}/review?" + urlencode(args), status_code=303)


def _pending(mem: Memory, proposal_id: str) -> dict[str, Any]:
    """The proposal ``proposal_id`` as stored (its JSON form)."""
    details = mem.inspect(proposal_id)
    if not isinstance(details, ProposalDetails):
        raise NotFoundError(f"proposal {proposal_id} was not found")
    return details.proposal


async def approve(request: Request, form: dict[str, str]) -> Response:
    """Approve with the decision matching the proposal's operation (as ``review``'s ``a``)."""
    proposal_id = path_id(request.path_params["proposal_id"], prefix="prop_")

    def decide(mem: Memory) -> str | None:
        decision = approval_decision(str(_pending(mem, proposal_id).get("operation")))
        change = mem.curate(proposal_id, decision, reviewer=PERSON_REVIEWER)
        return change.memory_id if decision == "add" else None

    return _decide(request, proposal_id, "approved", decide)


async def edit(request: Request, form: dict[str, str]) -> Response:
    """Approve an add or update with the reviewer's text, kind and evidence refs
    (comma-separated; as ``review``'s ``e``): a field left as it was is not a rewrite."""
    proposal_id = path_id(request.path_params["proposal_id"], prefix="prop_")
    text = form.get("text", "").replace("\r\n", "\n").strip()
    kind = form.get("kind", "").strip()
    refs = [r.strip() for r in form.get("evidence", "").split(",") if r.strip()]

    def decide(mem: Memory) -> str | None:
        prop = _pending(mem, proposal_id)
        operation = str(prop.get("operation"))
        record = prop.get("proposedRecord") or {}
        if operation not in EDITABLE or not record.get("text"):
            raise MemoryValidationError(
                "edit rephrases add and update proposals only; approve or reject it"
            )
        if kind and kind not in MEMORY_KINDS:
            raise MemoryValidationError(f"kind must be one of the memory kinds; got {kind!r:.80}")
        given = [r for r in prop.get("evidenceRefs") or () if isinstance(r, str)]
        change = mem.curate(
            proposal_id,
            approval_decision(operation),
            text=text if text and text != record.get("text") else None,
            kind=kind if kind and kind != record.get("kind") else None,
            evidence_refs=refs if refs and refs != given else None,
            reviewer=PERSON_REVIEWER,
        )
        return change.memory_id if operation == "add" else None

    return _decide(request, proposal_id, "edited", decide)


async def reject(request: Request, form: dict[str, str]) -> Response:
    """Reject with the reviewer's reason (or :data:`DEFAULT_REJECT_REASON`)."""
    proposal_id = path_id(request.path_params["proposal_id"], prefix="prop_")
    reason = form.get("reason", "").strip() or DEFAULT_REJECT_REASON

    def decide(mem: Memory) -> str | None:
        mem.curate(proposal_id, "reject", reason=reason, reviewer=PERSON_REVIEWER)
        return None

    return _decide(request, proposal_id, "rejected", decide)


async def merge(request: Request, form: dict[str, str]) -> Response:
    """Merge the proposal into one of its similar memories (``into``): it is rejected as
    saying what that memory says (as ``review``'s ``m``), so nothing is written twice."""
    proposal_id = path_id(request.path_params["proposal_id"], prefix="prop_")
    into = form.get("into", "")

    def decide(mem: Memory) -> str | None:
        details = mem.inspect(proposal_id)
        if not isinstance(details, ProposalDetails):
            raise NotFoundError(f"proposal {proposal_id} was not found")
        similar = [s.get("memory_id") for s in details.similar]
        if into not in similar:
            raise MemoryValidationError(
                "merge into one of the proposal's similar memories; "
                f"got {redact_secrets(into)[:80]!r}"
            )
        state = mem.state_of(mem.get(into))
        if state not in MERGEABLE_STATES:
            raise MemoryValidationError(f"memory {into} is {state}; choose another")
        reason = MERGE_REASON.format(memory_id=into)
        mem.curate(proposal_id, "reject", reason=reason, reviewer=PERSON_REVIEWER)
        return into

    return _decide(request, proposal_id, "merged", decide)


async def undo(request: Request, form: dict[str, str]) -> Response:
    """Undo a person's decision on the proposal (``Memory.undo_decision``, as ``swarmmem
    undo``): an approved add forgets the memory it wrote, and a pending copy is filed."""
    proposal_id = path_id(request.path_params["proposal_id"], prefix="prop_")

    def decide(mem: Memory) -> str | None:
        mem.undo_decision(proposal_id, reason=f"undone in review: {proposal_id}")
        return None

    return _decide(request, proposal_id, "undone", decide, refused="was not undone")


def _batch(form: dict[str, str]) -> tuple[str, list[str], str]:
    """The batch form: its action, the proposals picked (in the form's order) and the
    reject reason; a missing pick or an unknown action is refused (400)."""
    action = form.get("action", "")
    if action not in BATCH_ACTIONS:
        raise Refused(400, "choose approve or reject for the proposals you picked")
    picked = [k[len(_PICK) :] for k, v in form.items() if k.startswith(_PICK) and v]
    picked = [path_id(i, prefix="prop_") for i in picked]
    if not picked:
        raise Refused(400, "pick at least one proposal with its checkbox")
    return action, picked, form.get("reason", "").strip() or DEFAULT_REJECT_REASON


async def batch_preview(request: Request, form: dict[str, str]) -> Response:
    """What a batch decision will do, proposal by proposal, with a form to confirm it;
    nothing is decided yet."""
    viewer = viewer_of(request)
    mem = viewer.mem
    action, picked, reason = _batch(form)
    rows = []
    for proposal_id in picked:
        details = mem.inspect(proposal_id)
        if not isinstance(details, ProposalDetails):
            raise Refused(404, f"no such proposal: {proposal_id}")
        prop = details.proposal
        operation = str(prop.get("operation"))
        rows.append(
            {
                "id": proposal_id,
                "operation": operation,
                "status": prop.get("status"),
                "decision": approval_decision(operation) if action == "approve" else "reject",
                "text": (prop.get("proposedRecord") or {}).get("text"),
                "target": prop.get("targetMemoryId"),
            }
        )
    return viewer.render(
        "batch.html", title="Review: confirm", action=action, rows=rows, reason=reason, pick=_PICK
    )


async def batch(request: Request, form: dict[str, str]) -> Response:
    """Decide every picked proposal, one by one through ``Memory.curate`` as a person (each
    audited as its own decision); the first refusal stops the batch and says which."""
    action, picked, reason = _batch(form)
    view = viewer_of(request)
    mem = view.mem
    done = 0
    for proposal_id in picked:
        try:
            if action == "approve":
                decision = approval_decision(str(_pending(mem, proposal_id).get("operation")))
                mem.curate(proposal_id, decision, reviewer=PERSON_REVIEWER)
            else:
                mem.curate(proposal_id, "reject", reason=reason, reviewer=PERSON_REVIEWER)
        except SwarmMemoryError as exc:
            message = (
                f"decided {done} of {len(picked)}; {proposal_id} stays pending: "
                f"{redact_secrets(str(exc))}"
            )
            return _review_page(request, mem, error=message, status=status_of(exc))
        done += 1
    args = urlencode({"done": "batch", "n": done})
    return RedirectResponse(f"{view.base}/review?{args}", status_code=303)

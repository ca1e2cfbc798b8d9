"""Renderings of the interactive and batch review, verification and consolidation."""

from __future__ import annotations

import textwrap

from swarmmem.cli.render._common import Data, _count, _heading
from swarmmem.cli.render.manage import _clip
from swarmmem.cli.render.reports import ago, proposer_text
from swarmmem.core.model.formatting import to_fixed
from swarmmem.core.model.text import lookalike_note

WRAP = 96
"""The width proposal texts are wrapped to in the bulk preview."""

REVIEW_COUNTS = ("approved", "rejected", "merged", "skipped", "undone")
"""The decision counts a ``review`` session reports."""

REVIEW_KEYS = (
    ("a", "approve: apply the proposal's operation (add, update, merge, ...)"),
    ("e", "edit: the text (offered to edit in place) and/or kind (Enter keeps each), then approve"),
    ("r", "reject, with an optional reason"),
    ("m", "merge into a similar memory: reject it as already said by that memory"),
    ("s", "skip: leave it pending and move on"),
    ("u", "undo the last decision of this session (the proposal is re-filed)"),
    ("q", "quit"),
    ("?", "this help"),
)


def review_proposal_text(entry: Data, left: int) -> str:
    """One pending proposal as the review queue shows it (``entry``: a ``pending --json``
    entry whose similar memories and target carry their ``text`` and ``state``)."""
    kind = f"  {entry['kind']}" if entry.get("kind") else ""
    lines = ["", f"== {entry['id']}  {entry['operation']}{kind}  ({_count(left, 'proposal')} left)"]
    if entry.get("text"):
        lines.append(f"Text: {entry['text']}")
    refs = entry.get("evidence_refs") or ()
    lookalike = lookalike_note(entry.get("text"), entry.get("rationale"), *refs)
    if lookalike:
        lines.append(f"Look-alike letters in a domain: {lookalike}")
    target = entry.get("target_memory")
    if target:
        shown = f": {target['text']}" if target.get("text") else ""  # whole: it is replaced
        lines.append(f"Target: {target['memory_id']} ({target['state']}){shown}")
        for changed in target.get("changes") or ():
            lines.append(f"  Changed in {changed['ref']}:")
            lines += [f"    {line}" for line in changed["diff"]]
    if entry.get("related_memory_ids"):
        lines.append(f"Related: {', '.join(entry['related_memory_ids'])}")
    lines.append(f"Rationale: {entry['rationale']}")
    if entry.get("evidence_refs"):
        status = f" ({entry['evidence_status']})" if entry.get("evidence_status") else ""
        lines.append(f"Evidence: {', '.join(entry['evidence_refs'])}{status}")
    lines.append(f"Proposed by {proposer_text(entry['proposed_by'])}, {ago(entry['age'])}")
    lines += [f"Needs rephrasing: {note}" for note in entry.get("needs_rephrasing") or ()]
    if entry.get("similar"):
        lines.append("Similar memories:")
        for n, item in enumerate(entry["similar"], 1):
            text = f" {_clip(item['text'], 100)}" if item.get("text") else ""
            score = to_fixed(item["score"], 2) if item.get("score") is not None else "?"
            lines.append(f"  {n}. {item['memory_id']} ({score}, {item['state']}){text}")
    return "\n".join(lines)


def review_prompt(entry: Data) -> str:
    """The key prompt under a proposal (``m`` only when it has similar memories)."""
    merge = " [m]erge" if entry.get("similar") else ""
    return f"[a]pprove [e]dit [r]eject{merge} [s]kip [u]ndo [q]uit [?]help > "


def review_help_text() -> str:
    """What each review key does."""
    return "\n".join(f"  {key}  {what}" for key, what in REVIEW_KEYS)


REVIEW_DONE_PROMPT = "[u]ndo the last decision, any other key to finish > "
"""The prompt once the queue has run out after decisions of the session."""


def review_empty_text(reviewed: bool) -> str:
    """The line when the queue has run out."""
    return "No more pending proposals to review." if reviewed else "No pending proposals to review."


def review_summary_text(data: Data) -> str:
    """The counts of a review session and how many proposals are still pending."""
    counts = ", ".join(f"{data[name]} {name}" for name in REVIEW_COUNTS)
    return f"Review finished: {counts}; {_count(data['pending'], 'proposal')} still pending."


def review_batch_text(data: Data) -> str:
    """What ``review --approve-all/--reject-all`` would decide, or decided and failed."""
    verb = data["action"]
    past = {"approve": "Approved", "reject": "Rejected"}[verb]
    if not data["matched"]:
        return "No pending proposals match."
    if data["dry_run"]:
        lines = [f"Would {verb} {_count(data['matched'], 'pending proposal')}:"]
        for p in data["proposals"]:
            by = proposer_text(p["proposed_by"])
            kind = f" {p['kind']}" if p["kind"] else ""
            lines.append(f"- {p['proposal_id']} {p['operation']}{kind} ({by}, {ago(p['age'])})")
            # the whole text, wrapped: a person deciding in bulk sees every word of it
            lines += textwrap.wrap(
                " ".join((p["text"] or "").split()),
                WRAP,
                initial_indent="    ",
                subsequent_indent="    ",
            )
        lines.append(f"Nothing changed; add --yes to {verb} them.")
        return "\n".join(lines)
    lines = [f"{past} {len(data['decided'])} of {_count(data['matched'], 'matching proposal')}:"]
    for d in data["decided"]:
        written = f" -> {d['memory_id']}" if d.get("memory_id") else ""
        lines.append(f"- {d['proposal_id']} {d['decision']}{written}")
    if data["failed"]:
        lines.append(f"Failed {len(data['failed'])}:")
        lines += [f"- {f['proposal_id']}: {f['error']}" for f in data["failed"]]
    return "\n".join(lines)


def verify_text(data: Data) -> str:
    """What ``verify`` found (and the proposals it filed)."""
    lines = _heading("Swarm Memory Evidence Check")
    lines.append(
        f"- Memories with fingerprinted evidence: {data['checked']}; changed: "
        f"{data['changed_count']}; gone: {data['missing_count']}"
    )
    for entry in [*data["changed"], *data["missing"]]:
        moved = entry.get("moved") or list(dict.fromkeys(entry["files"]))
        lines.append(f"- `{entry['id']}` {entry['status']} ({', '.join(moved)}) - {entry['text']}")
        for ref, changed in (entry.get("diff") or {}).items():
            lines.append(f"  {ref}:")
            lines += [f"    {line}" for line in changed]
    for prop in data.get("proposals") or ():
        lines.append(
            f"- Filed {prop['operation']} proposal {prop['proposal_id']} for {prop['memory_id']}"
        )
    if (data["changed_count"] or data["missing_count"]) and not data.get("proposals"):
        lines.append("Run `swarmmem verify --propose` to file proposals for the curator.")
    return "\n".join(lines)


def consolidate_text(data: Data) -> str:
    """The proposals ``consolidate`` filed."""
    lines = _heading("Swarm Memory Consolidation")
    lines.append(
        f"- Filed {data['merge_count']} merge and {data['supersede_count']} supersede "
        "proposal(s) for the curator"
    )
    for prop in data["proposals"]:
        lines.append(f"- `{prop['proposal_id']}` {prop['operation']}: {prop['rationale']}")
    return "\n".join(lines)

"""Reviewing pending proposals: ``review``, a terminal queue and its batch mode.

Interactive (``swarmmem review``): one pending proposal at a time, oldest first, decided with a
single key (``a`` approve, ``e`` edit then approve, ``r`` reject, ``m`` merge into a similar
memory, ``s`` skip, ``u`` undo, ``q`` quit, ``?`` help). On a terminal the key needs no Enter
(raw mode); piped input is read a line at a time. The logic is :class:`Reviewer`, a small state
machine over a memory, an input function and an output function.

Batch (``--approve-all`` or ``--reject-all``, with ``--kind``, ``--proposer`` and
``--older-than`` filters): a dry run listing the matching proposals unless ``--yes``; with it,
each is decided on its own, a failure is reported and the batch goes on (exit 1 if any failed).

An approval is the decision matching the proposal's operation (an ``ignore`` proposal is
closed with ``noop``). Undo reverses the last decision of the session when it can: a rejection
(or merge) by re-filing a pending copy of the proposal, an approved ``add`` by forgetting the
memory it wrote (audited) and re-filing the copy. An approved update, supersede, delete or merge
changed memory that already existed, so undo refuses it and says why.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import click

from swarmmem.cli import render
from swarmmem.cli.app import State, command, emit, flag, main
from swarmmem.core.model.errors import ConflictError, NotFoundError, SwarmMemoryError
from swarmmem.core.model.formatting import age_text
from swarmmem.core.model.ids import iso_to_ms, memory_id, to_iso
from swarmmem.core.model.records import MEMORY_KINDS, MemoryProposal
from swarmmem.core.writes.curator import (
    DEFAULT_REJECT_REASON,
    MERGE_REASON,
    PERSON_REVIEWER,
    approval_decision,
)
from swarmmem.memory import Memory
from swarmmem.results import proposal_details_json, redact_secrets

UNDO_FORGET_REASON = "undone in review: {proposal_id}"
REFILE_RATIONALE = "re-filed by undo of {decision} of {proposal_id}: {rationale}"
MAX_RATIONALE = 2000
MERGEABLE_STATES = ("active", "suppressed")
"""The states of a similar memory a proposal can be merged into."""

KIND_TRIES = 3
"""How many times an edit asks for a kind before it gives up (the proposal stays pending)."""
DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}
_DURATION = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")


def parse_duration(text: str) -> int:
    """``30m``, ``2h``, ``3d`` (units s, m, h, d, w) in seconds; ValueError otherwise."""
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(
            f"{text!r} is not a duration: give a number and a unit, e.g. 30m, 2h or 3d "
            "(units s, m, h, d, w)"
        )
    return int(match.group(1)) * DURATION_UNITS[match.group(2)]


@dataclass(frozen=True)
class Filters:
    """Which pending proposals a review covers (all given filters must match)."""

    kind: str | None = None
    proposer: str | None = None
    older_than: int | None = None  # seconds

    def match(self, entry: dict[str, Any], now_ms: float) -> bool:
        """``entry`` (a :func:`pending_entries` entry) passes every given filter."""
        if self.kind is not None and entry["kind"] != self.kind:
            return False
        if self.proposer is not None:
            by = entry["proposed_by"] or {}
            if self.proposer not in (by.get("agent_role"), by.get("agent_id")):
                return False
        if self.older_than is not None:
            created = iso_to_ms(entry["created_at"])
            if created is None or created > now_ms - self.older_than * 1000:
                return False
        return True

    @property
    def any(self) -> bool:
        """At least one filter is given."""
        return (self.kind, self.proposer, self.older_than) != (None, None, None)


def entry_of(proposal: MemoryProposal, now: str) -> dict[str, Any]:
    """A pending proposal as a ``pending --json`` entry: id, operation, target, created_at,
    age, then what a reviewer decides on (kind, text, rationale, evidence, proposer, similar
    memories, rephrasing notes)."""
    record = proposal.proposed_record
    return {
        "id": proposal.id,
        "operation": proposal.operation,
        "target": proposal.target_memory_id or (record.id if record is not None else None),
        "target_memory_id": proposal.target_memory_id,
        "created_at": proposal.created_at,
        "age": age_text(proposal.created_at, now),
        **proposal_details_json(proposal),
    }


def pending_entries(mem: Memory, filters: Filters | None = None) -> list[dict[str, Any]]:
    """Every pending proposal that passes ``filters``, oldest first (no report limit)."""
    mem.require_enabled()
    moment = mem.clock.now()
    now = to_iso(moment)
    now_ms = moment.timestamp() * 1000
    entries = [entry_of(p, now) for p in mem.proposals("pending")]
    return [e for e in entries if filters is None or filters.match(e, now_ms)]


# ---------------------------------------------------------------------- interactive
class Reader(Protocol):
    """Reads an answer: one keypress when ``key`` is true, else a line (without its newline),
    offered already typed as ``prefill`` where the terminal can (the person edits it in
    place). Raises EOFError when input ends (the review then stops, like ``q``)."""

    def __call__(self, prompt: str, *, key: bool = False, prefill: str = "") -> str: ...


Writer = Callable[[str], None]


@dataclass
class Decided:
    """A decision of this session, kept for undo."""

    proposal_id: str
    decision: str  # the curator decision: add ... delete, noop, reject
    outcome: str  # approved, rejected or merged
    memory_id: str | None = None  # the new memory an approved add wrote (undo forgets it)
    blocked: str | None = None  # why undo cannot reverse it


@dataclass
class Reviewer:
    """The review queue as a state machine: :meth:`run` shows the current proposal, reads a
    key and :meth:`handle` applies it, until the queue is empty or ``q``. Decisions go through
    ``mem.curate`` (and, for undo, ``mem.forget`` and ``mem.propose``); an error is shown and
    the proposal stays current."""

    mem: Memory
    read: Reader
    write: Writer
    filters: Filters = field(default_factory=Filters)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(render.REVIEW_COUNTS, 0))
    history: list[Decided] = field(default_factory=list)
    skipped: set[str] = field(default_factory=set)
    focus: str | None = None  # a re-filed copy to show next, before the oldest
    _shown: str | None = field(default=None, init=False, repr=False)  # the id on screen

    # ------------------------------------------------------------------ the loop
    def run(self) -> dict[str, int]:
        """Review until the queue is empty, ``q`` or the end of input; print and return the
        summary (the decision counts and the proposals still pending)."""
        try:
            while True:
                entry = self.current()
                if entry is None:
                    if not self._last_chance():
                        break
                    continue
                if entry["id"] != self._shown:
                    self.write(render.review_proposal_text(self._view(entry), self.left()))
                    self._shown = entry["id"]
                if not self.handle(self.read(render.review_prompt(entry), key=True), entry):
                    break
        except (EOFError, KeyboardInterrupt):
            self.write("")
        summary = {**self.counts, "pending": len(self.mem.proposals("pending"))}
        self.write(render.review_summary_text(summary))
        return summary

    def _last_chance(self) -> bool:
        """The queue has run out: after decisions of this session, one more key may undo
        the last of them (True: undone, go on reviewing); otherwise the review ends."""
        self.write(render.review_empty_text(bool(self.history or self.skipped)))
        self._shown = None
        if not self.history:
            return False
        if self.read(render.REVIEW_DONE_PROMPT, key=True).strip()[:1].lower() != "u":
            return False
        self.undo()
        return True

    def queue(self) -> list[dict[str, Any]]:
        """The pending proposals under review, oldest first, without the skipped ones."""
        return [e for e in pending_entries(self.mem, self.filters) if e["id"] not in self.skipped]

    def current(self) -> dict[str, Any] | None:
        """The proposal to decide now: a re-filed copy first, else the oldest in the queue."""
        if self.focus is not None:
            prop = self._proposal(self.focus)
            if prop is not None and prop.status == "pending":
                return entry_of(prop, to_iso(self.mem.clock.now()))
            self.focus = None
        queue = self.queue()
        return queue[0] if queue else None

    def left(self) -> int:
        """How many proposals are left to review, the current one included."""
        ids = {e["id"] for e in self.queue()}
        return len(ids | ({self.focus} if self.focus else set()))

    def handle(self, key: str, entry: dict[str, Any]) -> bool:
        """Apply ``key`` to ``entry``; False when the review should stop (``q``)."""
        choice = key.strip()[:1].lower()
        if choice == "q":
            return False
        actions: dict[str, Callable[[dict[str, Any]], object]] = {
            "a": self.approve,
            "e": self.edit,
            "r": self.reject,
            "m": self.merge,
            "s": self.skip,
            "u": self.undo,
            "?": self.help,
            "h": self.help,
        }
        action = actions.get(choice)
        if action is None:
            self.write(f"Unknown key {key!r}; press ? for help.")
        else:
            action(entry)
        return True

    # ----------------------------------------------------------------- decisions
    def approve(
        self,
        entry: dict[str, Any],
        text: str | None = None,
        kind: str | None = None,
        evidence: list[str] | None = None,
    ) -> bool:
        """Approve ``entry`` (rephrased with ``text``/``kind``, citing ``evidence``, when
        given); False when the approval failed (the error is shown)."""
        decision = approval_decision(entry["operation"])
        expected = self._written_id(entry["id"], text, kind) if decision == "add" else None
        existed = expected is not None and self._active(expected)
        try:
            change = self.mem.curate(
                entry["id"],
                decision,
                text=text,
                kind=kind,
                evidence_refs=evidence,
                reviewer=PERSON_REVIEWER,
            )
        except SwarmMemoryError as exc:
            self._error(exc)
            return False
        written = change.memory_id if decision == "add" else None
        blocked = None
        if decision == "add" and (existed or written != expected):
            blocked = (
                f"memory {written} was already stored before this approval, so forgetting it "
                "would lose more than the approval"
            )
        elif decision not in ("add", "noop"):
            changed = change.memory_id or change.target_memory_id
            what = f" ({changed})" if changed else ""
            blocked = (
                f"the approved {decision} changed existing memory{what}; undo reverses "
                "rejections and approved additions only"
            )
        self.history.append(Decided(entry["id"], decision, "approved", written, blocked))
        self.counts["approved"] += 1
        self.write(render.curate_text(render.curate_json(change)))
        return True

    def edit(self, entry: dict[str, Any]) -> None:
        """Ask for a new text (on a terminal the current one is offered to edit in place), a
        kind and the evidence refs (Enter keeps each; a kind that is none is asked again, the
        text kept; refs are comma-separated, offered to edit in place), then approve with
        them; refs that do not hold are shown and asked again."""
        if entry["operation"] not in ("add", "update") or not entry["text"]:
            self.write("Edit rephrases add and update proposals only; approve or reject this one.")
            return
        self.write(f"Current text: {entry['text']}")
        text = self.read("New text (Enter keeps it): ", prefill=entry["text"]).strip()
        kinds = ", ".join(sorted(k for k in MEMORY_KINDS))
        self.write(f"Kinds: {kinds}")
        kind = None
        for _ in range(KIND_TRIES):
            answer = self.read(f"Kind [{entry['kind']}] (Enter keeps it): ").strip()
            if not answer or answer in MEMORY_KINDS:
                kind = answer or entry["kind"]
                break
            nearest = difflib.get_close_matches(answer, MEMORY_KINDS, n=1)
            hint = f"; did you mean {nearest[0]}?" if nearest else ""
            self.write(f"{answer!r} is no memory kind{hint}")
        if kind is None:
            self.write(f"Edit cancelled: {entry['id']} stays pending.")
            return
        current = ", ".join(entry.get("evidence_refs") or ())
        for _ in range(KIND_TRIES):
            answer = self.read("Evidence refs (Enter keeps them): ", prefill=current).strip()
            refs = [r.strip() for r in answer.split(",") if r.strip()]
            edited = refs if refs and refs != list(entry.get("evidence_refs") or ()) else None
            approved = self.approve(
                entry,
                text=text if text and text != entry["text"] else None,
                kind=kind if kind != entry["kind"] else None,
                evidence=edited,
            )
            if approved or edited is None:  # only edited refs are asked for again
                return
        self.write(f"Edit cancelled: {entry['id']} stays pending.")

    def reject(self, entry: dict[str, Any]) -> None:
        """Ask for a reason (Enter: the default reason) and reject."""
        reason = self.read(f"Reason (Enter: {DEFAULT_REJECT_REASON}): ").strip()
        self._reject(entry, reason or DEFAULT_REJECT_REASON, "rejected")

    def merge(self, entry: dict[str, Any]) -> None:
        """Pick one of the similar memories by number and reject the proposal as merged
        into it."""
        similar = entry["similar"]
        if not similar:
            self.write("No similar memory to merge into; approve, reject or skip it.")
            return
        answer = self.read(f"Merge into which similar memory? [1-{len(similar)}, Enter cancels]: ")
        answer = answer.strip()
        if not answer:
            self.write("Merge cancelled.")
            return
        if not answer.isdigit() or not 1 <= int(answer) <= len(similar):
            self.write(f"Choose a number from 1 to {len(similar)}.")
            return
        target = similar[int(answer) - 1]["memory_id"]
        state = self._state(target)
        if state not in MERGEABLE_STATES:
            self.write(f"Memory {target} is {state or 'not found'}; choose another.")
            return
        self._reject(entry, MERGE_REASON.format(memory_id=target), "merged")

    def _reject(self, entry: dict[str, Any], reason: str, outcome: str) -> None:
        try:
            change = self.mem.curate(entry["id"], "reject", reason=reason, reviewer=PERSON_REVIEWER)
        except SwarmMemoryError as exc:
            self._error(exc)
            return
        self.history.append(Decided(entry["id"], "reject", outcome))
        self.counts[outcome] += 1
        verb = "Rejected" if outcome == "rejected" else "Merged (rejected)"
        self.write(f"{verb} {entry['id']}: {change.reason}")

    def skip(self, entry: dict[str, Any]) -> None:
        """Leave ``entry`` pending and move on (for the rest of this session)."""
        self.skipped.add(entry["id"])
        if self.focus == entry["id"]:
            self.focus = None
        self.counts["skipped"] += 1
        self.write(f"Skipped {entry['id']}; it stays pending.")

    def undo(self, entry: dict[str, Any] | None = None) -> None:
        """Undo the last decision of this session (see the module docstring)."""
        if not self.history:
            self.write("Nothing to undo in this session.")
            return
        last = self.history[-1]
        if last.blocked:
            self.write(
                f"Cannot undo the last decision ({last.outcome} {last.proposal_id}): "
                f"{last.blocked}."
            )
            return
        original = self._proposal(last.proposal_id)
        if original is None:
            self.write(f"Cannot undo: proposal {last.proposal_id} is no longer stored.")
            return
        done = []
        if last.memory_id:
            reason = UNDO_FORGET_REASON.format(proposal_id=last.proposal_id)
            try:
                self.mem.forget(last.memory_id, reason=reason)
                done.append(f"forgot {last.memory_id}")
            except (ConflictError, NotFoundError):
                done.append(f"{last.memory_id} was already forgotten")
            except SwarmMemoryError as exc:
                self._error(exc)
                return
        self.history.pop()
        self.counts["undone"] += 1
        try:
            copy = self.refile(original, last.decision)
        except SwarmMemoryError as exc:
            done.append(f"could not re-file the proposal: {redact_secrets(str(exc))}")
            self.write(f"Undid the decision on {last.proposal_id}: {'; '.join(done)}.")
            return
        if copy.status != "pending":
            done.append(f"re-filed it as {copy.id}, closed at once: {copy.rejection_reason}")
        else:
            done.append(f"re-filed it as {copy.id} (shown next)")
            self.focus = copy.id
        self.write(f"Undid the decision on {last.proposal_id}: {'; '.join(done)}.")

    def refile(self, original: MemoryProposal, decision: str) -> MemoryProposal:
        """A pending copy of ``original`` (same operation, kind, text, tags, evidence, target
        and related memories) whose rationale names the undone ``decision``."""
        rationale = REFILE_RATIONALE.format(
            decision=decision, proposal_id=original.id, rationale=original.rationale
        )[:MAX_RATIONALE]
        proposal: MemoryProposal = self.mem.refile(original, rationale)
        return proposal

    def help(self, entry: dict[str, Any]) -> None:
        """Print what each key does."""
        self.write(render.review_help_text())

    # ------------------------------------------------------------------- helpers
    def _error(self, exc: SwarmMemoryError) -> None:
        self.write(f"Error: {redact_secrets(str(exc))} (the proposal stays pending)")

    def _written_id(self, proposal_id: str, text: str | None, kind: str | None) -> str | None:
        """The id of the memory an add approval writes (with the rephrasing, if any)."""
        prop = self._proposal(proposal_id)
        record = prop.proposed_record if prop is not None else None
        if record is None:
            return None
        new_text = text if text is not None else record.text
        return str(memory_id(record.scope.as_dict(), kind or record.kind, new_text))

    def _proposal(self, proposal_id: str) -> MemoryProposal | None:
        """A proposal of this context (None when not found)."""
        try:
            return self.mem.proposal(proposal_id)
        except NotFoundError:
            return None

    def _active(self, mem_id: str) -> bool:
        try:
            record = self.mem.get(mem_id)
        except NotFoundError:
            return False
        return bool(record.active)

    def _state(self, mem_id: str) -> str | None:
        """The state of a memory of this context (None when not found)."""
        try:
            record = self.mem.get(mem_id)
        except SwarmMemoryError:
            return None
        return self.mem.state_of(record)

    def _memory_view(self, mem_id: str) -> dict[str, Any]:
        try:
            record = self.mem.get(mem_id)
        except SwarmMemoryError:
            return {"memory_id": mem_id, "state": "not found", "text": None}
        state = self.mem.state_of(record)
        return {"memory_id": mem_id, "state": state, "text": record.text}

    def _target_view(self, mem_id: str) -> dict[str, Any]:
        """A proposal's target memory, with what changed in the lines it cites (a ``verify
        --propose`` update says why it was filed)."""
        view = self._memory_view(mem_id)
        if view["text"] is None:
            return view
        try:
            files = self.mem.evidence_freshness(mem_id).files
        except SwarmMemoryError:
            return view
        changes = [{"ref": f["ref"], "diff": f["diff"]} for f in files if f.get("diff")]
        return {**view, "changes": changes}

    def _view(self, entry: dict[str, Any]) -> dict[str, Any]:
        """``entry`` with the texts of its similar memories and of its target."""
        similar = [{**s, **self._memory_view(s["memory_id"])} for s in entry["similar"]]
        target = entry["target_memory_id"]
        return {
            **entry,
            "evidence_status": self.mem.evidence_status(entry.get("evidence_refs") or []),
            "similar": similar,
            "target_memory": self._target_view(target) if target else None,
        }


def _edit_line(prompt: str, prefill: str) -> str | None:
    """A line read with ``prefill`` already typed (GNU readline's startup hook), or ``None``
    where readline is missing. The stored text is shown without control characters, on one
    line."""
    try:
        import readline
    except ImportError:
        return None
    shown = " ".join(render.terminal_text(prefill).split())
    readline.set_startup_hook(lambda: readline.insert_text(shown))
    try:
        return input(prompt)
    finally:
        readline.set_startup_hook()


class TerminalReader:
    """Reads keys and lines from standard input: a key without Enter on a terminal (raw mode
    through termios), otherwise (piped input, no termios) the first character of a line."""

    def __init__(self) -> None:
        self.raw = sys.stdin.isatty()

    def __call__(self, prompt: str, *, key: bool = False, prefill: str = "") -> str:
        if prefill and not key and sys.stdin.isatty():
            edited = _edit_line(render.terminal_text(prompt), prefill)
            if edited is not None:
                return edited
        click.echo(render.terminal_text(prompt), nl=False)
        if key and self.raw:
            try:
                return self._key()
            except (ImportError, OSError):
                self.raw = False  # no usable terminal after all: read lines
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        answer = line.rstrip("\r\n")
        if not sys.stdin.isatty():
            say(answer)  # piped input is not echoed: keep the transcript readable
        return answer.strip()[:1] if key else answer

    @staticmethod
    def _key() -> str:
        import termios
        import tty

        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
        try:
            tty.setraw(fd)
            data = os.read(fd, 32)  # an escape sequence (an arrow key) arrives in one read
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        if not data or data in (b"\x03", b"\x04"):  # end of input, Ctrl-C, Ctrl-D
            click.echo("")
            raise EOFError
        text = data.decode("utf-8", "replace")
        click.echo(text if text.isprintable() else "")
        return text


def say(text: str) -> None:
    """Print ``text`` on the terminal without its escape sequences or control characters."""
    click.echo(render.terminal_text(text))


# ------------------------------------------------------------------------- batch
def decide_all(
    mem: Memory, *, approve: bool, filters: Filters, reason: str | None, apply: bool
) -> dict[str, Any]:
    """Approve (each by its operation's decision) or reject every pending proposal passing
    ``filters``; only list them unless ``apply``. A failure is recorded and the rest go on."""
    entries = pending_entries(mem, filters)
    proposals = [
        {
            "proposal_id": e["id"],
            "operation": e["operation"],
            "kind": e["kind"],
            "decision": approval_decision(e["operation"]) if approve else "reject",
            "text": e["text"],
            "proposed_by": e["proposed_by"],
            "age": e["age"],
        }
        for e in entries
    ]
    decided: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    why = reason or (None if approve else DEFAULT_REJECT_REASON)  # None: "curator <decision>"
    for item in proposals if apply else ():
        decision = item["decision"]
        try:
            change = mem.curate(item["proposal_id"], decision, reason=why, reviewer=PERSON_REVIEWER)
        except SwarmMemoryError as exc:
            failed.append({"proposal_id": item["proposal_id"], "error": redact_secrets(str(exc))})
            continue
        done = {"proposal_id": item["proposal_id"], "decision": decision}
        if change.memory_id:
            done["memory_id"] = change.memory_id
        decided.append(done)
    return {
        "success": not failed,
        "dry_run": not apply,
        "action": "approve" if approve else "reject",
        "matched": len(proposals),
        "decided": decided,
        "failed": failed,
        "proposals": proposals,
    }


def _duration(_ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    """``--older-than``: a duration in seconds, or a usage error naming the option."""
    if value is None:
        return None
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param=param) from None


@main.command()
@flag("--approve-all", "Batch: approve every matching proposal.")
@flag("--reject-all", "Batch: reject every matching proposal.")
@click.option(
    "--kind", type=click.Choice(MEMORY_KINDS), default=None, help="Only proposals of this kind."
)
@click.option("--proposer", default=None, help="Only proposals by this agent role (or id).")
@click.option(
    "--older-than",
    callback=_duration,
    default=None,
    metavar="D",
    help="Only proposals older than D (30m, 2h, 3d; units s, m, h, d, w).",
)
@click.option("--reason", default=None, help="Batch: the reason recorded with each decision.")
@flag("--yes", "Batch: decide them (otherwise only list them).")
@command
def review(
    state: State,
    approve_all: bool,
    reject_all: bool,
    kind: str | None,
    proposer: str | None,
    older_than: int | None,
    reason: str | None,
    yes: bool,
) -> None:
    """Review pending proposals one at a time, oldest first, with single keys: a approve,
    e edit then approve, r reject, m merge into a similar memory, s skip, u undo, q quit,
    ? help. The filters narrow the queue.

    Batch: --approve-all or --reject-all decide every matching proposal; without --yes they
    only list them. Exit 1 if any decision failed.
    """
    filters = Filters(kind=kind, proposer=proposer, older_than=older_than)
    if approve_all and reject_all:
        raise click.UsageError("--approve-all and --reject-all exclude each other")
    if not (approve_all or reject_all):
        if yes or reason is not None:
            raise click.UsageError("--yes and --reason go with --approve-all or --reject-all")
        if state.as_json:
            raise click.UsageError(
                "the interactive review has no JSON output; use --approve-all or --reject-all "
                "(or `swarmmem pending --json` to list the proposals)"
            )
        with state.open() as mem:
            Reviewer(mem, TerminalReader(), say, filters).run()
        return
    with state.open() as mem:
        result = decide_all(mem, approve=approve_all, filters=filters, reason=reason, apply=yes)
    emit(state, result, render.review_batch_text, ok=result["success"])

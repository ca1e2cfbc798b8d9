"""An agent session's hooks as use cases: the session-start brief, the prompt's injection, and
filing the proposals the agent wrote; each answers the context to add (or nothing) and the
run-log line that says what happened.

The host's edge (:mod:`swarmmem.hooks.runner`) parses the host's input, calls one of these
with the session's hook state (a dict the edge reads and writes back under the session's
lock) and renders the answer in the host's shape. What a session's context already holds is
kept in that state: the ids the brief and earlier prompts injected (never injected twice until
the context is cleared or compacted), the digests of proposal blocks already filed, the edits
and commands the session ran, whether the agent proposed anything, whether it was asked to,
and what the last filing told it (said once, in front of the next context a hook adds).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

import attrs

from swarmmem.core.config import SessionBriefConfig
from swarmmem.core.model.ids import bundle_id, estimate_tokens
from swarmmem.core.model.records import MEMORY_KINDS, MemoryRecord, RecallItem
from swarmmem.core.recall.bm25 import query_terms
from swarmmem.core.recall.brief import BRIEF_KINDS, brief_items
from swarmmem.core.recall.injection import InjectionService, build_plan
from swarmmem.core.recall.prompt import build_prompt_block
from swarmmem.core.writes.intake import BLOCK_KEYS
from swarmmem.core.writes.service import json_objects

HOOK_KINDS = tuple(k for k in MEMORY_KINDS if k in BRIEF_KINDS)
"""The kinds a host's prompt recall searches (durable kinds and API findings)."""
MAX_REMEMBERED = 500
"""The most injected ids and filed block digests a session's state keeps."""
BRIEF_CANDIDATES = 500
"""The most memories (newest update first) a brief chooses from."""
MAX_ENTRIES_PER_MESSAGE = 20
"""The most ``memoryProposals`` and ``curatorMemoryDecisions`` entries filed from one agent
message; the rest are counted in the run log (``capped``), not filed."""
MAX_ENTRIES_PER_SESSION = 100
"""The most entries filed from one session's messages, all hooks together."""
NUDGE_MIN_ACTIONS = 2
"""The fewest file edits and commands a session runs before its end asks the agent to propose
(a session with fewer is trivial: it is never asked)."""
NUDGE_LINE = (
    "Before you stop (swarmmem asks this once per session): did this session teach you a "
    "durable fact about this project that a later session would need and could not see at a "
    "glance (a convention, a pitfall and its fix, a decision and its reason)? If so, propose "
    "it now; if not, just stop."
)
"""What the agent is asked at the end of a session that did real work and proposed nothing
(followed by the brief's propose line)."""
MAX_REASONS = 3
"""The most refusal reasons one feedback message names."""

State = MutableMapping[str, Any]
"""A session's hook state (JSON values), read and written back by the edge."""


@attrs.frozen(kw_only=True)
class HookAnswer:
    """What a hook gives the host's agent (``context``: ``None`` for nothing) and the run-log
    line that says why (``event``); at the end of a turn, what the person is told
    (``notice``: the proposals filed and refused) and what the agent is asked before it stops
    (``nudge``: the host's stop hook keeps it going with this text)."""

    context: str | None
    event: dict[str, Any]
    notice: str | None = None
    nudge: str | None = None


@attrs.frozen(kw_only=True)
class SessionHooks:
    """The use cases behind an agent host's hooks, for one memory context.

    Each service is reached through a callable, so a hook builds only what it uses:
    ``injection`` gives the injection service; ``records`` lists the context's active memories
    (newest update first, at most the count given); ``refresh_lessons`` regenerates the
    reflection lessons and ``lessons`` gives their prompt block (``""`` when off); ``ingest``
    files an agent reply's ``memoryProposals``
    blocks (:meth:`~swarmmem.core.writes.service.WriteService.ingest_task_output`).
    """

    injection: Callable[[], InjectionService]
    brief_settings: SessionBriefConfig
    suppression_threshold: float
    records: Callable[[int], Sequence[MemoryRecord]]
    refresh_lessons: Callable[[], object]
    lessons: Callable[[], str]
    ingest: Callable[[str], Mapping[str, Any]]
    redact: Callable[[str], str]
    now: Callable[[], str]
    propose_line: str = ""
    """The line that ends a brief (how to propose a memory)."""
    evidence: Callable[[Sequence[RecallItem]], list[RecallItem]] | None = None
    """Briefed items with the status of the files they cite, those whose files are gone left
    out, as an injection's are (``None``: evidence checks are off)."""

    def session_start(self, *, session_id: str, source: str, state: State) -> HookAnswer:
        """The brief (and the reflection lessons when they fit), ending with
        :attr:`propose_line`; a new, cleared or compacted context (``source`` ``startup``,
        ``clear``, ``compact``) forgets what earlier prompts injected, and a resumed one that
        was briefed gets nothing. What the last filing of proposals told the person comes
        first, once (:meth:`told`)."""
        return self.told(self._brief(session_id=session_id, source=source, state=state), state)

    def _brief(self, *, session_id: str, source: str, state: State) -> HookAnswer:
        if source in ("startup", "clear", "compact"):
            state["injected"] = []
        elif state.get("briefed"):
            # a resumed session still holds the brief it was given
            return _nothing({"type": "session_brief_skipped", "reason": "already_briefed"})
        settings = self.brief_settings
        if not settings.enabled:
            return _nothing({"type": "session_brief_skipped", "reason": "disabled"})
        self.refresh_lessons()  # lessons are regenerated here, never on a prompt
        items = self._checked(
            brief_items(
                self.records(BRIEF_CANDIDATES),
                max_items=BRIEF_CANDIDATES,
                suppression_threshold=self.suppression_threshold,
            ),
            settings.max_items,
        )
        budget = settings.token_budget
        blocks: list[str] = []
        ids: list[str] = []
        tokens = 0
        if items:
            now = self.now()
            block, tokens, included = build_prompt_block(
                bundle_id(f"brief:{session_id}", now),
                items,
                generated_at=now,
                token_budget=budget,
                redact=self.redact,
            )
            if included:
                blocks.append(block)
                ids = [item.record.id for item in included]
        lessons = self.lessons()
        if lessons and tokens + estimate_tokens(lessons) <= budget:
            blocks.append(lessons)
        if not blocks:
            return _nothing({"type": "session_brief_skipped", "reason": "no_results"})
        state["briefed"] = True
        # what the brief gave is in the context: a prompt's recall does not inject it again
        state["injected"] = [*(state.get("injected") or ()), *ids][-MAX_REMEMBERED:]
        event = {
            "type": "session_brief",
            "source": source,
            "memoryIds": ids,
            "lessons": len(blocks) > (1 if ids else 0),
            "tokens": tokens,
        }
        return HookAnswer(context="\n\n".join([*blocks, self.propose_line]), event=event)

    def _checked(self, ranked: Sequence[RecallItem], wanted: int) -> list[RecallItem]:
        """The first ``wanted`` of ``ranked`` whose evidence holds, each saying what its files
        say now; only as many are checked as it takes."""
        if self.evidence is None:
            return list(ranked[:wanted])
        kept: list[RecallItem] = []
        position = 0
        while len(kept) < wanted and position < len(ranked):
            chunk = ranked[position : position + wanted - len(kept)]
            position += len(chunk)
            kept += self.evidence(chunk)
        return kept

    def prompt(self, prompt: str | None, *, trivial: bool, state: State) -> HookAnswer:
        """The injection recall for the person's ``prompt`` (nothing for a ``trivial`` one),
        without the memories the context already holds; the block is re-budgeted when some
        were left out. What the last filing of proposals told the person comes first, once
        (:meth:`told`)."""
        return self.told(self._recall(prompt, trivial=trivial, state=state), state)

    @staticmethod
    def told(answer: HookAnswer, state: State) -> HookAnswer:
        """``answer`` with the feedback of the last filing of proposals (kept in ``state`` by
        :meth:`file_proposals`) in front of its context, so the agent learns what became of
        them; said once. The run-log line says so (``feedback``)."""
        feedback = state.pop("feedback", None)
        if not isinstance(feedback, str) or not feedback:
            return answer
        context = "\n\n".join(c for c in (feedback, answer.context) if c)
        return attrs.evolve(answer, context=context, event={**answer.event, "feedback": True})

    def _recall(self, prompt: str | None, *, trivial: bool, state: State) -> HookAnswer:
        terms = query_terms(self.redact(prompt or ""))[:20]
        skipped: dict[str, Any] = {"type": "prompt_injection_skipped", "queryTerms": terms}
        if trivial:
            return _nothing({**skipped, "reason": "trivial_prompt"})
        injection = self.injection()
        settings = injection.settings
        if not settings.enabled:
            return _nothing({**skipped, "reason": "disabled"})
        plan = build_plan(
            agent_role=injection.recall.context.agent_role,
            agent_task=None,
            user_goal=prompt,
            settings=settings,
        )
        bundle = injection.recall_plan(plan, kinds=HOOK_KINDS)
        if not bundle.items:
            reason = bundle.diagnostics.get("injectionSkipReason") or "no_results"
            return _nothing({**skipped, "reason": reason, "bundleId": bundle.id})
        seen = set(state.get("injected") or ())
        fresh = [item for item in bundle.items if item.record.id not in seen]
        if not fresh:
            return _nothing(
                {
                    **skipped,
                    "reason": "deduped",
                    "bundleId": bundle.id,
                    "memoryIds": [i.record.id for i in bundle.items],
                }
            )
        block, tokens = bundle.prompt_block, bundle.token_estimate
        if len(fresh) < len(bundle.items):
            block, tokens, fresh = build_prompt_block(
                bundle.id,
                fresh,
                generated_at=bundle.generated_at,
                token_budget=settings.token_budget,
                redact=self.redact,
            )
        ids = [item.record.id for item in fresh]
        state["injected"] = [*seen, *ids][-MAX_REMEMBERED:]
        event = {
            "type": "prompt_injected",
            "bundleId": bundle.id,
            "memoryIds": ids,
            "scores": [round(item.score, 4) for item in fresh],
            "tokens": tokens,
            "dense": bool(bundle.diagnostics.get("fusionActive")),
            "queryTerms": terms,
        }
        return HookAnswer(context=block, event=event)

    def file_proposals(
        self,
        texts: Sequence[str],
        *,
        state: State,
        actions: int = 0,
        can_nudge: bool = False,
        nudged_already: bool = False,
    ) -> HookAnswer:
        """Route the ``memoryProposals`` blocks of the agent's ``texts`` through propose (each
        block once per session; invalid entries are dropped and counted, a duplicate of a
        memory or a pending proposal is closed at once and never counted as filed). At most
        :data:`MAX_ENTRIES_PER_MESSAGE` entries of one text and
        :data:`MAX_ENTRIES_PER_SESSION` of the session are filed; the rest are counted
        (``capped``), never filed, so one message cannot flood the review queue.

        What was filed, found duplicate or refused (with the reasons) is the answer's
        ``notice`` for the person, and is kept in ``state`` for the agent's next context
        (:meth:`told`). ``actions`` is how many file edits and commands the agent ran since
        the last read; when the host's stop hook can keep the agent going (``can_nudge``, and
        it is not already doing so: ``nudged_already``), a session that ran at least
        :data:`NUDGE_MIN_ACTIONS` of them and proposed nothing is asked once to propose
        (``nudge``), unless ``recall.sessionBrief.proposeNudge`` is off."""
        filed = list(state.get("filed") or ())
        spent = _count(state.get("entriesFiled"))
        proposals: list[str] = []
        duplicates: list[dict[str, str]] = []
        rejected: list[str] = []
        capped = 0
        for text in texts:
            left_here = MAX_ENTRIES_PER_MESSAGE
            for block in json_objects(text):
                digest = hashlib.sha256(
                    json.dumps(block, sort_keys=True, ensure_ascii=False).encode()
                ).hexdigest()[:32]
                if digest in filed:
                    continue
                filed.append(digest)
                allowed = min(left_here, MAX_ENTRIES_PER_SESSION - spent)
                kept, dropped = _within(block, allowed)
                capped += dropped
                left_here -= kept
                spent += kept
                if not kept:
                    continue
                result = self.ingest(json.dumps(block if not dropped else _cut(block, allowed)))
                proposals.extend(result["proposals"] + result["decisions"])
                duplicates.extend(result.get("duplicates") or ())
                rejected.extend(str(r.get("error", "")) for r in result["rejected"])
        state["filed"] = filed[-MAX_REMEMBERED:]
        state["entriesFiled"] = spent
        state["actions"] = _count(state.get("actions")) + max(0, actions)
        reasons = [self.redact(r)[:300] for r in rejected]
        event: dict[str, Any] = {
            "type": "proposals_filed"
            if proposals
            else ("proposals_refused" if rejected or duplicates else "proposals_none"),
            "proposalIds": proposals,
            "rejected": reasons,
        }
        if duplicates:
            event["duplicates"] = duplicates
        if capped:
            event["capped"] = capped
            event["caps"] = {
                "perMessage": MAX_ENTRIES_PER_MESSAGE,
                "perSession": MAX_ENTRIES_PER_SESSION,
            }
        notice: str | None = None
        if proposals or duplicates or rejected:
            state["proposed"] = True
            notice = feedback_message(len(proposals), duplicates, reasons)
            state["feedback"] = notice
        nudge: str | None = None
        if (
            can_nudge
            and not nudged_already
            and self.brief_settings.propose_nudge
            and not state.get("proposed")
            and not state.get("nudged")
            and state["actions"] >= NUDGE_MIN_ACTIONS
        ):
            state["nudged"] = True
            nudge = f"{NUDGE_LINE} {self.propose_line}".strip()
            event["nudged"] = True
        return HookAnswer(context=None, event=event, notice=notice, nudge=nudge)


def feedback_message(
    filed: int, duplicates: Sequence[Mapping[str, Any]], reasons: Sequence[str]
) -> str:
    """What became of the agent's ``memoryProposals``, in one short line: how many were filed
    for review, how many were already known (naming the original), how many were refused and
    why (the first :data:`MAX_REASONS` reasons)."""
    parts: list[str] = []
    if filed:
        parts.append(f"filed {filed} for review")
    if duplicates:
        originals = ", ".join(str(d.get("duplicateOf", "")) for d in duplicates[:MAX_REASONS])
        parts.append(f"{len(duplicates)} already known ({originals})")
    if reasons:
        listed = "; ".join(reasons[:MAX_REASONS])
        more = f"; and {len(reasons) - MAX_REASONS} more" if len(reasons) > MAX_REASONS else ""
        parts.append(f"refused {len(reasons)}: {listed}{more}")
    return "swarmmem memoryProposals: " + ", ".join(parts) + "."


def _count(value: Any) -> int:
    """A count kept in the session state (anything else reads as 0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _within(block: Mapping[str, Any], allowed: int) -> tuple[int, int]:
    """How many of ``block``'s entries fit in ``allowed`` and how many do not."""
    total = sum(len(block[key]) for key in BLOCK_KEYS if isinstance(block.get(key), list))
    kept = min(total, max(allowed, 0))
    return kept, total - kept


def _cut(block: Mapping[str, Any], allowed: int) -> dict[str, Any]:
    """``block`` with only its first ``allowed`` entries (proposals first, then decisions)."""
    out = dict(block)
    for key in BLOCK_KEYS:
        entries = block.get(key)
        if isinstance(entries, list):
            out[key] = entries[: max(allowed, 0)]
            allowed -= len(out[key])
    return out


def _nothing(event: dict[str, Any]) -> HookAnswer:
    return HookAnswer(context=None, event=event)

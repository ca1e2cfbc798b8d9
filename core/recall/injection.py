"""Automatic recall injection as a use case: the query plan, the skip rules, the run log.

Injection is stricter than manual recall: it needs a query signal, uses a higher minimum
score (0.25), at most 6 items and 1000 tokens by default, and never injects twice.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from swarmmem.core.config import InjectionSettings as InjectionSettings  # the settings node
from swarmmem.core.model.ids import estimate_tokens
from swarmmem.core.model.records import RecallBundle
from swarmmem.core.model.roles import canonical_role, profile_for
from swarmmem.core.recall.prompt import already_injected
from swarmmem.core.recall.service import RecallService
from swarmmem.ports.files import RunLog

TOUCHED_FILE_RE = re.compile(
    r"\b(?:src|tests|test|docs|scripts|packages)/[A-Za-z0-9._/@+-]+", re.ASCII
)
MAX_COMPACT = 2000
#: The header that marks a reflection block already in the conversation.
REFLECTION_MARKER = "[SWARM MEMORY REFLECTION"


@attrs.frozen(kw_only=True)
class InjectionPlan:
    """What an automatic recall asks for."""

    query: str
    task: str
    kinds: tuple[str, ...]
    max_items: int
    token_budget: int
    role: str


def compact(text: str | None) -> str:
    """Whitespace collapsed, at most 2000 code points."""
    return re.sub(r"\s+", " ", text or "").strip()[:MAX_COMPACT]


def touched_files(*texts: str | None) -> list[str]:
    """Repository paths mentioned in the texts (unique, at most 20)."""
    out: list[str] = []
    for text in texts:
        for match in TOUCHED_FILE_RE.finditer(text or ""):
            if match.group(0) not in out:
                out.append(match.group(0))
    return out[:20]


def build_plan(
    *,
    agent_role: str | None,
    agent_task: str | None,
    user_goal: str | None,
    settings: InjectionSettings,
    project: str | None = None,
    current_plan: str | None = None,
) -> InjectionPlan:
    """The injection query: role and task, user goal, project, touched files, plan."""
    role = canonical_role(agent_role or "architect")
    task = compact(agent_task) or compact(user_goal)
    goal = compact(user_goal)
    lines = [f"{role} task: {task}", f"user goal: {goal}"]
    if project:
        lines.append(f"repo/project: {compact(project)}")
    files = touched_files(agent_task, user_goal)
    if files:
        lines.append("touched files: " + ", ".join(files))
    if current_plan:
        lines.append(f"current plan: {compact(current_plan)}")
    return InjectionPlan(
        query="\n".join(lines),
        task=task,
        kinds=profile_for(agent_role).kinds,
        max_items=settings.max_items,
        token_budget=settings.token_budget,
        role=role,
    )


def should_skip(messages: Sequence[str]) -> bool:
    """True when a message already carries a recall block (double-injection guard)."""
    return any(already_injected(message) for message in messages)


def sanitize_run_id(run_id: str | None) -> str:
    """A run id safe to use as a folder name under ``.swarm/runs/`` (at most 80 characters):
    other characters become ``_``, and a name of dots alone (``.``, ``..``), which would name
    the runs folder or its parent, gets a leading ``_``."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]", "_", (run_id or "").strip() or "unknown")[:80]
    return f"_{cleaned}"[:80] if set(cleaned) <= {"."} else cleaned


@attrs.frozen(kw_only=True)
class InjectionService:
    """Automatic recall before agent calls, logged to the run log; ``lessons`` gives the
    reflection block that may follow the recall block."""

    recall: RecallService
    run_log: RunLog
    settings: InjectionSettings
    now: Callable[[], str]
    lessons: Callable[[], str] = lambda: ""

    def inject(
        self,
        *,
        agent_task: str | None = None,
        user_goal: str | None = None,
        messages: Sequence[str] = (),
        project: str | None = None,
        current_plan: str | None = None,
    ) -> RecallBundle | None:
        """The bundle to inject before an agent call, or ``None`` (skipped).

        Uses the stricter injection settings, never injects twice (``messages`` already
        holding a recall block), and logs ``recall_requested``, ``prompt_injected`` or
        ``prompt_injection_skipped`` (``disabled``, ``already_injected``, ``no_signal``,
        ``below_threshold``, ``no_results``) to the run log.
        """
        run_id = self.recall.context.effective_run_id
        stamp = self.now()

        def log(event: dict[str, Any]) -> None:
            self.run_log.append(run_id, event, stamp)

        settings = self.settings
        if not settings.enabled:
            log({"type": "prompt_injection_skipped", "reason": "disabled"})
            return None
        if should_skip(messages):
            log({"type": "prompt_injection_skipped", "reason": "already_injected"})
            return None
        plan = build_plan(
            agent_role=self.recall.context.agent_role,
            agent_task=agent_task,
            user_goal=user_goal,
            settings=settings,
            project=project,
            current_plan=current_plan,
        )
        log({"type": "recall_requested", "query": self.recall.redact(plan.query)})
        bundle = self.recall_plan(plan)
        if not bundle.items:
            reason = bundle.diagnostics.get("injectionSkipReason") or "no_results"
            log({"type": "prompt_injection_skipped", "reason": reason, "bundleId": bundle.id})
            return None
        ids = [i.record.id for i in bundle.items]
        log({"type": "prompt_injected", "bundleId": bundle.id, "memoryIds": ids})
        return bundle

    def recall_plan(self, plan: InjectionPlan, kinds: Sequence[str] | None = None) -> RecallBundle:
        """The injection recall of ``plan`` under the injection settings (``kinds``, when
        given, in place of the role's); nothing is logged here."""
        settings = self.settings
        return self.recall.run(
            self.recall.build_request(
                plan.query,
                task=plan.task or None,
                kinds=plan.kinds if kinds is None else kinds,
                max_items=plan.max_items,
                token_budget=plan.token_budget,
                mode="injection",
                min_score=settings.min_score,
                min_relevance=settings.min_relevance,
                require_query_signal=settings.require_query_signal,
            )
        )

    def blocks(self, bundle: RecallBundle | None, messages: Sequence[str]) -> list[str]:
        """The blocks for an injected ``bundle`` (see :func:`injection_blocks`)."""
        return injection_blocks(
            bundle, self.lessons(), messages=messages, token_budget=self.settings.token_budget
        )


def injection_blocks(
    bundle: RecallBundle | None,
    lessons: str,
    *,
    messages: Sequence[str],
    token_budget: int,
) -> list[str]:
    """The blocks to place before the agent's task: the recall block (when not skipped), then
    the reflection block when there is one, none was injected yet, and it fits the budget."""
    blocks = [bundle.prompt_block] if bundle is not None else []
    if not lessons or any(REFLECTION_MARKER in m for m in messages):
        return blocks
    used = bundle.token_estimate if bundle is not None else 0
    if used + estimate_tokens(lessons) <= token_budget:
        blocks.append(lessons)
    return blocks

"""Automatic recall injection: the query plan and the skip rules.

Injection is stricter than manual recall: it needs a query signal, uses a higher minimum
score (0.25), at most 6 items and 1000 tokens by default, and never injects twice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from swarmmem.core.model.roles import canonical_role, profile_for
from swarmmem.core.recall.prompt import already_injected

TOUCHED_FILE_RE = re.compile(
    r"\b(?:src|tests|test|docs|scripts|packages)/[A-Za-z0-9._/@+-]+", re.ASCII
)
MAX_COMPACT = 2000


@attrs.frozen(kw_only=True)
class InjectionSettings:
    """``memory.recall.injection``."""

    enabled: bool = True
    min_score: float = 0.25
    require_query_signal: bool = True
    max_items: int = 6
    token_budget: int = 1000


@attrs.frozen(kw_only=True)
class RecallPlan:
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
) -> RecallPlan:
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
    return RecallPlan(
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
    """A run id safe to use as a folder name (at most 80 characters)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", (run_id or "").strip() or "unknown")[:80]

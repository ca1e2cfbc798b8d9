"""Recall role profiles and agent-role normalisation."""

from __future__ import annotations

import attrs

from swarmmem.core.model.records import MEMORY_KINDS


@attrs.frozen(kw_only=True)
class RoleProfile:
    """The kinds a role cares about and its default recall size."""

    name: str
    kinds: tuple[str, ...]
    max_items: int
    token_budget: int


ROLE_PROFILES: dict[str, RoleProfile] = {
    p.name: p
    for p in (
        RoleProfile(
            name="architect",
            kinds=(
                "project_fact",
                "architecture_decision",
                "repo_convention",
                "failure_pattern",
                "security_note",
            ),
            max_items=10,
            token_budget=1600,
        ),
        RoleProfile(
            name="sme",
            kinds=("api_finding", "code_pattern", "repo_convention", "failure_pattern", "evidence"),
            max_items=8,
            token_budget=1200,
        ),
        RoleProfile(
            name="coder",
            kinds=(
                "architecture_decision",
                "repo_convention",
                "code_pattern",
                "test_pattern",
                "failure_pattern",
            ),
            max_items=8,
            token_budget=1200,
        ),
        RoleProfile(
            name="qa",
            kinds=("test_pattern", "failure_pattern", "repo_convention", "security_note"),
            max_items=8,
            token_budget=1200,
        ),
        RoleProfile(
            name="security",
            kinds=("security_note", "architecture_decision", "repo_convention", "evidence"),
            max_items=8,
            token_budget=1200,
        ),
        RoleProfile(
            name="curator",
            kinds=tuple(
                kind for kind in MEMORY_KINDS if kind not in ("user_preference", "todo", "scratch")
            ),
            max_items=20,
            token_budget=3000,
        ),
    )
}

CURATOR_ROLES: frozenset[str] = frozenset(
    {"curator", "curator_init", "curator_phase", "curator_postmortem"}
)

# Agent names of a swarm; a prefixed name such as "myswarm_coder" resolves by suffix.
CANONICAL_ROLES: tuple[str, ...] = (
    "architect",
    "coder",
    "reviewer",
    "test_engineer",
    "critic",
    "critic_sounding_board",
    "critic_drift_verifier",
    "critic_hallucination_verifier",
    "curator",
    "curator_init",
    "curator_phase",
    "curator_postmortem",
    "docs",
    "sme",
    "security",
    "designer",
    "explorer",
)
_SEPARATORS = ("_", "-", ":", "/", ".")
_ALIASES = {
    "reviewer": "qa",
    "test_engineer": "qa",
    "critic": "security",
    "critic_sounding_board": "security",
    "critic_drift_verifier": "security",
    "critic_hallucination_verifier": "security",
    "curator_init": "curator",
    "curator_phase": "curator",
    "curator_postmortem": "curator",
    "docs": "sme",
}


def canonical_role(role: str | None) -> str:
    """Lower-case ``role`` and strip a swarm prefix when it ends with a known agent name."""
    base = (role or "architect").strip().lower()
    if base in CANONICAL_ROLES:
        return base
    for known in sorted(CANONICAL_ROLES, key=len, reverse=True):
        if any(base.endswith(sep + known) for sep in _SEPARATORS):
            return known
    return base


def normalize_role(role: str | None) -> str:
    """The recall profile name for an agent role (unknown roles recall like a coder)."""
    base = canonical_role(role)
    base = _ALIASES.get(base, base)
    return base if base in ROLE_PROFILES else "coder"


def profile_for(role: str | None) -> RoleProfile:
    """The recall profile of an agent role."""
    return ROLE_PROFILES[normalize_role(role)]


def is_curator_role(role: str | None) -> bool:
    """True for the roles allowed to emit curator decisions."""
    return canonical_role(role) in CURATOR_ROLES

"""Scopes derived from context only: agents never choose or widen them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal

import attrs

from swarmmem.core.model.errors import ScopeError
from swarmmem.core.model.ids import sha256_hex, stable_id
from swarmmem.core.model.records import MemoryScope


@attrs.frozen(kw_only=True)
class MemoryContext:
    """Who is asking: the project root and the session, run, agent and unit of work."""

    directory: str
    session_id: str | None = None
    agent_role: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    unit_id: str | None = None

    @property
    def effective_run_id(self) -> str | None:
        """The run id, falling back to the session id."""
        return self.run_id or self.session_id


IdentityKind = Literal["projectId", "remote", "folder"]
"""What a repository identity comes from (:func:`identity_kind`)."""


_IDENTITY_PREFIXES = ("project:", "folder:")


def repository_identity(project_id: str | None, remote_url: str | None, root: str) -> str:
    """What identifies the repository: the configured project id, else the ``origin`` remote,
    else the folder name with a short hash of its absolute path (two checkouts that share a
    folder name but not a path never share a repository scope).

    ``root`` should be resolved (symbolic links followed) by the caller: core does no I/O.
    """
    if project_id:
        return f"project:{project_id}"
    if remote_url and not remote_url.strip().lower().startswith(_IDENTITY_PREFIXES):
        return remote_url  # a "remote" spelling another identity's key is no remote
    root = os.path.abspath(root)
    return f"folder:{os.path.basename(root)}:{sha256_hex(root)[:12]}"


def identity_kind(project_id: str | None, remote_url: str | None) -> IdentityKind:
    """What :func:`repository_identity` uses: ``memory.projectId``, the remote or the folder."""
    remote = remote_url and not remote_url.strip().lower().startswith(_IDENTITY_PREFIXES)
    return "projectId" if project_id else "remote" if remote else "folder"


def derive_allowed_scopes(
    context: MemoryContext,
    *,
    remote_url: str | None,
    cohort_id: str | None = None,
    project_id: str | None = None,
) -> list[MemoryScope]:
    """The allowed scopes, most general first: workspace, repository, [cohort], [run], [agent].

    Args:
        context: the caller's context; ``directory`` is resolved to an absolute path.
        remote_url: the ``origin`` remote of the repository, if any.
        cohort_id: a linked cohort, when memory sharing between worktrees is configured.
        project_id: ``memory.projectId``; when set it identifies the repository (see
            :func:`repository_identity`).
    """
    root = os.path.abspath(context.directory)
    repo_id = stable_id(repository_identity(project_id, remote_url, root))
    scopes = [
        MemoryScope(type="workspace", workspace_id=stable_id(os.path.dirname(root))),
        MemoryScope(type="repository", repo_id=repo_id, repo_root=root),
    ]
    if cohort_id:
        scopes.append(MemoryScope(type="cohort", cohort_id=cohort_id))
    # run and agent scopes carry the repository id: two repositories sharing a store never
    # share a run or an agent role's memories (a session id or a role name like "coder"
    # alone is no boundary)
    run_id = context.effective_run_id
    if run_id:
        scopes.append(MemoryScope(type="run", run_id=run_id, repo_id=repo_id))
    agent = context.agent_id or context.agent_role
    if agent:
        scopes.append(MemoryScope(type="agent", agent_id=agent, run_id=run_id, repo_id=repo_id))
    return scopes


def _strict_key(scope: MemoryScope) -> tuple[object, ...]:
    root = os.path.abspath(scope.repo_root) if scope.repo_root else None
    return (
        scope.type,
        scope.user_id,
        scope.workspace_id,
        scope.project_id,
        scope.repo_id,
        root,
        scope.run_id,
        scope.agent_id,
        scope.cohort_id,
    )


def authorize_scopes(
    requested: Sequence[MemoryScope] | None, allowed: Sequence[MemoryScope]
) -> list[MemoryScope]:
    """Check that ``requested`` is a non-empty subset of ``allowed`` (``None`` -> all allowed).

    Raises:
        ScopeError: an empty list, or a scope outside the allowed list.
    """
    if requested is None:
        return list(allowed)
    if not requested:
        raise ScopeError("recall scopes must not be empty")
    allowed_keys = {_strict_key(scope) for scope in allowed}
    for scope in requested:
        if _strict_key(scope) not in allowed_keys:
            raise ScopeError(f"recall scope is not allowed for this context: {scope.as_dict()}")
    return list(requested)


#: why a write into the workspace scope is refused (``memory.workspace.shared`` is off)
WORKSPACE_WRITES_OFF = (
    "the workspace scope is shared by every repository in this one's parent folder, so writes "
    "to it are off; set memory.workspace.shared to true to allow them"
)


def writable_scopes(allowed: Sequence[MemoryScope], workspace_shared: bool) -> list[MemoryScope]:
    """The ``allowed`` scopes a write may land in: all but the workspace scope, unless it is
    shared on purpose (``memory.workspace.shared``)."""
    return [s for s in allowed if s.type != "workspace" or workspace_shared]


def check_writable(scope: MemoryScope, workspace_shared: bool) -> None:
    """Refuse a write into the workspace scope unless it is shared on purpose.

    Raises:
        ScopeError: ``scope`` is the workspace scope and ``workspace_shared`` is off.
    """
    if scope.type == "workspace" and not workspace_shared:
        raise ScopeError(WORKSPACE_WRITES_OFF)


def write_scope(
    stability: str, allowed: Sequence[MemoryScope], requested: MemoryScope | None = None
) -> MemoryScope:
    """The scope a new record lands in (the repository scope unless a cohort is linked)."""
    if requested is not None:
        authorize_scopes([requested], allowed)
        return requested
    if stability == "durable":
        for scope in allowed:
            if scope.type == "cohort":
                return scope
    return allowed[1]

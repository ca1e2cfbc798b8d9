"""The projects one viewer shows: the project it was started in and, when its store is a
server that several projects share (PostgreSQL), every other project that store serves to
this database role.

Which projects a role may see is the store's answer, never the viewer's: ``Memory.status``
lists the repository identities holding memories or pending proposals that the connection
can read (under row-level security, exactly the scope keys the admin granted the role), each
with the folder its newest memory was written from. A listed identity becomes a project of the
viewer only when that folder is a checkout on this machine that opens to the same identity:
it is opened through :func:`swarmmem.open` with *this* project's configuration (the same
connection, role and schema; only ``memory.projectId`` is the folder's own) and the viewer's
context, so its scopes are exactly those ``swarmmem ui`` started in that folder with this
connection would use. A folder that opens to another identity (a stale or forged folder name
in a stored row), a folder that is not there and an identity the role cannot read are never
opened as a project; a request naming one is refused (404).

A store of one project's own (SQLite, JSONL, in memory) has no projects to switch to: the
viewer stays as it was, with no picker and no ``/p/`` pages.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from swarmmem.config import read as read_config
from swarmmem.core.model.errors import SwarmMemoryError
from swarmmem.memory import Memory
from swarmmem.project import CONFIG_RELATIVE_PATH, untrusted
from swarmmem.registry import store_traits

MAX_PROJECTS = 20
"""The most projects one viewer opens (the project it started in included)."""
PROJECT_ID = re.compile(r"^[0-9a-f]{16}$")
"""A repository identity as the store keeps it (16 hex digits) and as the viewer's paths
name a project (``/p/<id>/...``)."""
CONTEXT_KEYS = ("session_id", "agent_role", "agent_id", "run_id", "unit_id")
"""The context a project's memory is opened with: the viewer's own (never its folder)."""

Opener = Callable[[Path, Mapping[str, Any], Mapping[str, Any]], Memory]
"""Opens the memory of a project folder with a configuration and a context."""


@dataclass(frozen=True)
class Project:
    """A project the store serves to this role: its repository identity (``id``), the
    folder name shown (``name``), its folder on this machine, and why it cannot be opened
    here (``reason``; ``None`` when it can)."""

    id: str
    name: str
    root: str | None
    home: bool = False
    memories: int | None = None
    pending: int | None = None
    reason: str | None = None


def shares_projects(mem: Memory) -> bool:
    """The memory's store is a server that several projects share (its registry traits say
    so), so the viewer may offer the store's other projects."""
    try:
        return bool(store_traits(str(mem.config.get("provider"))).needs_server)
    except SwarmMemoryError:
        return False


def default_opener(root: Path, config: Mapping[str, Any], context: Mapping[str, Any]) -> Memory:
    import swarmmem

    return swarmmem.open(root, config=dict(config), context=dict(context))


def _context_of(mem: Memory) -> dict[str, Any]:
    context = mem.context
    return {key: value for key in CONTEXT_KEYS if (value := getattr(context, key, None))}


def _untrusted_checkout(folder: Path) -> str | None:
    """Why a folder a stored row names is not opened as this user's checkout (rule 14 of the
    architecture: the row may come from another role of a shared store), else ``None``."""
    config = folder / CONFIG_RELATIVE_PATH
    if folder.is_symlink() or config.is_symlink():
        return "its folder or configuration file is a link"
    reason = untrusted(folder.stat())
    return None if reason is None else f"its folder is {reason}"


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class Projects:
    """The projects of one viewer and their open memories (the home project's memory is the
    one the viewer started with; the others are opened by :meth:`discover`)."""

    def __init__(self, home: Memory, *, opener: Opener | None = None) -> None:
        self.home = home
        self.opener = opener or default_opener
        self.listed: list[Project] = []
        self.home_id: str | None = None
        self._open: dict[str, Memory] = {}

    @property
    def shared(self) -> bool:
        """More than one project can be shown (a picker is offered)."""
        return sum(1 for p in self.listed if p.reason is None) > 1

    def discover(self) -> None:
        """List the projects this role's store serves and open each one that has a checkout
        here opening to its identity (see the module docstring)."""
        self.close()
        self.listed = []
        if not shares_projects(self.home):
            return
        status = self.home.status()
        repository = status.get("repository")
        if not isinstance(repository, Mapping):
            return
        home_id = repository.get("repository_id")
        if not isinstance(home_id, str) or not PROJECT_ID.match(home_id):
            return
        self.home_id = home_id
        self._open[home_id] = self.home
        self.listed.append(
            Project(id=home_id, name=self.home.root.name, root=str(self.home.root), home=True)
        )
        others = repository.get("other_identities")
        for entry in others if isinstance(others, list) else []:
            if len(self._open) >= MAX_PROJECTS:
                break
            if isinstance(entry, Mapping):
                self.listed.append(self._project(entry))

    def _project(self, entry: Mapping[str, Any]) -> Project:
        """One identity the store listed, opened when its folder here opens to it."""
        repo_id = str(entry.get("repository_id") or "")
        last_root = entry.get("last_root")
        root = last_root if isinstance(last_root, str) else None
        name = (Path(root).name if root else "") or repo_id[:16]
        if not PROJECT_ID.match(repo_id):
            return Project(id=repo_id[:40], name=name, root=root, reason="not an identity")
        base = Project(
            id=repo_id,
            name=name,
            root=root,
            memories=_count(entry.get("memories")),
            pending=_count(entry.get("pending_proposals")),
        )
        if root is None or not os.path.isabs(root) or not os.path.isdir(root):
            return replace(base, reason="no checkout of it on this machine")
        folder = Path(root)
        if (refused := _untrusted_checkout(folder)) is not None:
            return replace(base, reason=refused)
        context = _context_of(self.home)
        try:
            config = {**self.home.config, "projectId": self._project_id(folder)}
            if config["projectId"] is None:
                del config["projectId"]
            mem = self.opener(folder, config, context)
        except (SwarmMemoryError, OSError, ValueError) as exc:
            return replace(base, reason=f"its folder cannot be opened: {str(exc)[:200]}")
        try:
            opened = mem.status().get("repository")
        except (SwarmMemoryError, OSError) as exc:
            mem.close()
            return replace(base, reason=f"its folder cannot be opened: {str(exc)[:200]}")
        if not isinstance(opened, Mapping) or opened.get("repository_id") != repo_id:
            mem.close()
            return replace(base, reason="its folder here is another project")
        self._open[repo_id] = mem
        return base

    def _project_id(self, folder: Path) -> str | None:
        """The ``memory.projectId`` of the folder's own configuration file, read as a file:
        nothing of it is opened (its connection and store settings are never used)."""
        value = read_config(folder, None).project_id
        return value if isinstance(value, str) and value else None

    def memory(self, project_id: str) -> Memory | None:
        """The open memory of a listed project, or ``None`` (not listed, or not openable)."""
        if not PROJECT_ID.match(project_id):
            return None
        return self._open.get(project_id)

    def project(self, project_id: str) -> Project | None:
        return next((p for p in self.listed if p.id == project_id), None)

    def close(self) -> None:
        """Close the memories opened here (never the home project's)."""
        for mem in self._open.values():
            if mem is not self.home:
                mem.close()
        self._open.clear()

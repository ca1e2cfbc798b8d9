"""``swarmmem init``: turn memory on for a project, once, and say what changed; ``swarmmem
grant``: rights a person grants outside the repository.

``init`` writes (or completes) ``.opencode/opencode-swarm.json`` with ``memory.enabled`` and a
``memory.projectId`` (derived from the origin remote, so a teammate's clone is the same
project; random without a remote), and adds ``.swarm/`` (the store, run logs and lessons:
local state, not source) to ``.gitignore``. Running it again changes nothing. Other sections of the
configuration file and other ``.gitignore`` lines are kept as they are. Inside a folder of an
initialised project it names that project and changes nothing (``--here`` starts a separate
project there). ``--agent HOST`` (repeatable) also writes the host's MCP and hook configuration
(:mod:`swarmmem.hooks.install`) and a marked section in its instruction file
(``--no-instructions`` leaves that file alone); ``--remove --agent HOST`` takes out what it
wrote for the host. ``--dry-run`` says what would change and writes nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from swarmmem import config as _config
from swarmmem.cli import render
from swarmmem.cli.app import State, command, emit, flag, main
from swarmmem.core.model.errors import ConfigError
from swarmmem.grants import GRANTABLE, set_grant
from swarmmem.hooks.install import AGENTS, plan_agents
from swarmmem.project import configured_root, git_remote_origin
from swarmmem.safefs import read_text, write_file

if TYPE_CHECKING:
    from swarmmem.memory import Memory

IGNORED = ".swarm/"


def new_project_id() -> str:
    """A random project id (``proj_`` + 16 hex digits)."""
    return f"proj_{secrets.token_hex(8)}"


_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_SCP_LIKE = re.compile(r"^([^/@:]+@)?([^/:]+):(?!//)(.+)$")


def remote_key(url: str) -> str:
    """The part of a git remote URL that names the repository, the same for its spellings:
    ``https://github.com/Org/App.git``, ``git@github.com:org/app`` and
    ``ssh://git@github.com/org/app/`` all give ``github.com/org/app``."""
    text = url.strip()
    scp = None if _SCHEME.match(text) else _SCP_LIKE.match(text)
    if scp is not None:
        text = f"{scp.group(2)}/{scp.group(3)}"
    else:
        text = _SCHEME.sub("", text)
        host, _, path = text.partition("/")
        text = f"{host.rpartition('@')[2]}/{path}"
    text = text.rstrip("/")
    text = text[: -len(".git")] if text.endswith(".git") else text
    return text.lower()


def project_id_for(root: Path) -> tuple[str, str | None]:
    """The project id ``init`` writes, and the remote it came from: derived from the origin
    remote when there is one (``proj_`` + 16 hex digits of the SHA-256 of :func:`remote_key`),
    so every clone of the repository that runs ``init`` is the same project; random without
    a remote."""
    remote = git_remote_origin(root)
    if remote is None or not remote_key(remote).strip("/"):
        return new_project_id(), None
    digest = hashlib.sha256(remote_key(remote).encode("utf-8")).hexdigest()
    return f"proj_{digest[:16]}", remote


def _read_json(path: Path) -> dict[str, Any]:
    return _config.read_json_object(path) if path.exists() else {}


def enable_memory(root: Path, *, has_memories: bool, dry_run: bool = False) -> list[str]:
    """Turn memory on in ``root``'s configuration file; returns what changed (sentences).

    A project id is added only when none is set and no memories are stored yet (memories
    already stored keep the repository identity they were written under).
    """
    path = root / _config.CONFIG_RELATIVE_PATH
    data = _read_json(path)
    section = data.setdefault("memory", {})
    if not isinstance(section, dict):
        raise ConfigError(f"memory in {path} must be an object")
    changes = []
    if section.get("enabled") is not True:
        section["enabled"] = True
        changes.append(f"Turned memory on in {path}.")
    if not section.get("projectId"):
        if has_memories:
            changes.append(
                "Kept the repository identity the stored memories use (no projectId added)."
            )
        else:
            section["projectId"], remote = project_id_for(root)
            source = (
                f" (from the origin remote {remote_key(remote)}: a clone that runs init gets "
                "the same id)"
                if remote
                else " (random: no origin remote)"
            )
            changes.append(f"Set memory.projectId to {section['projectId']}{source}.")
    _config.validate(section)  # nothing is written unless the result is a valid configuration
    if any(not c.startswith("Kept") for c in changes) and not dry_run:
        write_file(path, json.dumps(data, indent=2) + "\n", base=root)
    return changes


def ignore_swarm_folder(root: Path, *, dry_run: bool = False) -> list[str]:
    """Add ``.swarm/`` to ``root/.gitignore`` unless a line already ignores it."""
    return ignore_in_git(
        root, IGNORED, "# swarmmem: local memory store, run logs, lessons", dry_run=dry_run
    )


def ignore_in_git(root: Path, entry: str, note: str, *, dry_run: bool = False) -> list[str]:
    """Add ``entry`` (a path relative to ``root``) under ``note`` to ``root/.gitignore``
    unless a line already names it (with or without a leading or trailing ``/``)."""
    path = root / ".gitignore"
    try:
        text = read_text(path, base=root, max_bytes=8 << 20) or ""
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    bare = entry.strip("/")
    if any(line.strip().strip("/") == bare for line in text.splitlines()):
        return []
    prefix = "" if not text or text.endswith("\n") else "\n"
    if not dry_run:
        write_file(path, f"{text}{prefix}{note}\n{entry}\n", base=root)
    return [f"Added {entry} to {path}."]


@main.command()
@click.option(
    "--agent",
    "agents",
    multiple=True,
    type=click.Choice(AGENTS),
    help="Also wire this agent host's MCP server and hooks (repeatable).",
)
@flag(
    "--user",
    "Claude Code: hooks in ~/.claude/settings.json (so sessions started in a subfolder "
    "get them too); Codex: the MCP entry in ~/.codex/config.toml.",
)
@flag("--here", "Start a separate project inside another one.")
@flag(
    "--no-instructions",
    "With --agent: leave the host's instruction file (CLAUDE.md, AGENTS.md, ...) alone.",
)
@flag(
    "--remove",
    "With --agent: take out what init wrote for the host (MCP entry, hooks, plugin, "
    "instruction section); memory stays on.",
)
@flag("--dry-run", "Say what would change; write nothing.")
@command
def init(
    state: State,
    agents: tuple[str, ...],
    user: bool,
    here: bool,
    no_instructions: bool,
    remove: bool,
    dry_run: bool,
) -> None:
    """Turn memory on for this project (config file, project id, .gitignore); idempotent.

    --agent HOST also wires the host: its MCP server, its hooks and a short section in its
    instruction file telling the agent how to propose memories.
    """
    target = Path(os.path.abspath(state.root))
    if not target.is_dir():
        raise ConfigError(f"the project root {target} does not exist or is not a folder")
    if remove and not agents:
        raise click.UsageError("--remove needs --agent HOST (the host to unwire)")
    enclosing = configured_root(target)
    if remove:
        root = target if here else (enclosing or target)
        changes = []
    elif enclosing is not None and enclosing != target and not here:
        root = enclosing
        changes = [
            f"{target} is inside the project at {enclosing}; nothing changed there "
            f"(--here starts a separate project in {target})."
        ]
    else:
        root = target
        with _open(state, root) as mem:
            has_memories = mem.enabled and _store_has_memories(mem)
        changes = enable_memory(root, has_memories=has_memories, dry_run=dry_run)
        changes += ignore_swarm_folder(root, dry_run=dry_run)
    plan = plan_agents(
        root, list(agents), user=user, instructions=not no_instructions, remove=remove
    )
    if not dry_run:
        plan.write()
    changes += plan.actions
    for per_user in [] if remove else [f for f in plan.local if not f.startswith("~/")]:
        note = "# swarmmem: a per-user file naming this machine's swarmmem (not for commits)"
        changes += ignore_in_git(root, per_user, note, dry_run=dry_run)
    if remove and not plan.actions:
        changes.append(f"Kept everything: nothing of {', '.join(agents)} to remove in {root}.")
    project = _configured_project_id(root)
    if dry_run:
        changes = [f"(dry run) {c}" for c in changes]
    data = {
        "success": True,
        "changed": not dry_run and any(not _unchanged(c) for c in changes),
        "dry_run": dry_run,
        "actions": changes,
        "notes": plan.notes,
        "project_root": str(root),
        "config_path": str(root / _config.CONFIG_RELATIVE_PATH),
        "project_id": project,
    }
    emit(state, data, render.init_text)


def _unchanged(sentence: str) -> bool:
    return sentence.startswith("Kept") or " is inside the project at " in sentence


def _open(state: State, root: Path) -> Any:
    import swarmmem

    return swarmmem.open(root, state.config, context=state.context)


def _configured_project_id(root: Path) -> str | None:
    section = _read_json(root / _config.CONFIG_RELATIVE_PATH).get("memory")
    return section.get("projectId") if isinstance(section, dict) else None


PERSON_ROLE = "user"
"""The only ``--role`` that may grant: a person's (as a curator decision's reviewer names one)."""


@main.command()
@click.argument("right", type=click.Choice(GRANTABLE))
@flag("--revoke", "Take the right back.")
@flag("--yes", "Grant without asking (needed without a terminal).")
@command
def grant(state: State, right: str, revoke: bool, yes: bool) -> None:
    """Grant this project a RIGHT, in your user-level file: curator or curation-policy.

    The grant lives in ~/.config/swarmmem/grants.json (never in the repository), so a cloned
    repository cannot grant its own agents these rights. curator: `swarmmem --role curator
    mcp` also serves swarm_memory_pending and swarm_memory_curate. curation-policy: a new
    proposal that adds one concise fact of a durable kind, sourced from a repository file or
    commit, with no secret, personal data or similar memory, is approved at once (audited as
    decided by the policy; `swarmmem undo PROPOSAL_ID` takes it back).

    A person grants: an agent's --role is refused, and without a terminal to ask on, --yes is
    needed.
    """
    role = state.context.get("agent_role")
    if role is not None and role != PERSON_ROLE:
        raise click.UsageError(
            f"--role {role} is an agent's: agents cannot grant rights (a person runs "
            "`swarmmem grant` without --role)"
        )
    root = Path(os.path.abspath(state.root))
    if not (yes or revoke):
        if state.as_json or not sys.stdin.isatty():
            raise click.UsageError(
                f"granting {right} needs a person: run it on a terminal, or add --yes"
            )
        if not click.confirm(f"Grant {right} to the agents working in {root}?", default=False):
            raise click.Abort()
    data = set_grant(root, right, revoke=revoke)
    emit(state, data, render.grant_text)


def _store_has_memories(mem: Memory) -> bool:
    """True when the configured store already exists and holds records of this repository
    (another repository's records in a shared store do not count)."""
    return bool(mem.has_memories())

"""``swarmmem init``: turn memory on for a project, once, and say what changed.

It writes (or completes) ``.opencode/opencode-swarm.json`` with ``memory.enabled`` and a random
``memory.projectId``, and adds ``.swarm/`` (the store, run logs and lessons: local state, not
source) to ``.gitignore``. Running it again changes nothing. Other sections of the
configuration file and other ``.gitignore`` lines are kept as they are.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

from swarmmem import config as _config
from swarmmem.cli import render
from swarmmem.cli.app import State, command, emit, main
from swarmmem.core.model.errors import ConfigError

IGNORED = ".swarm/"


def new_project_id() -> str:
    """A random project id (``proj_`` + 16 hex digits)."""
    return f"proj_{secrets.token_hex(8)}"


def _read_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read configuration {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"configuration {path} must hold a JSON object")
    return data


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def enable_memory(root: Path, *, has_memories: bool) -> list[str]:
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
            section["projectId"] = new_project_id()
            changes.append(f"Set memory.projectId to {section['projectId']}.")
    _config.validate(section)  # nothing is written unless the result is a valid configuration
    if any(not c.startswith("Kept") for c in changes):
        _write_atomic(path, json.dumps(data, indent=2) + "\n")
    return changes


def ignore_swarm_folder(root: Path) -> list[str]:
    """Add ``.swarm/`` to ``root/.gitignore`` unless a line already ignores it."""
    path = root / ".gitignore"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if any(line.strip().rstrip("/") in (".swarm", "/.swarm") for line in text.splitlines()):
        return []
    prefix = "" if not text or text.endswith("\n") else "\n"
    note = "# swarmmem: local memory store, run logs, lessons"
    _write_atomic(path, f"{text}{prefix}{note}\n{IGNORED}\n")
    return [f"Added {IGNORED} to {path}."]


@main.command()
@command
def init(state: State) -> None:
    """Turn memory on for this project (config file, project id, .gitignore); idempotent."""
    root = state.root
    if not root.is_dir():
        raise ConfigError(f"the project root {root} does not exist or is not a folder")
    with state.open() as mem:
        has_memories = mem.enabled and _store_has_memories(mem)
    changes = enable_memory(root, has_memories=has_memories)
    changes += ignore_swarm_folder(root)
    with state.open() as mem:
        project = mem.config["projectId"]
    data = {
        "success": True,
        "changed": any(not c.startswith("Kept") for c in changes),
        "actions": changes,
        "config_path": str(root / _config.CONFIG_RELATIVE_PATH),
        "project_id": project,
    }
    emit(state, data, render.init_text)


def _store_has_memories(mem: Any) -> bool:
    """True when the configured store already exists and holds records of this repository
    (another repository's records in a shared store do not count)."""
    if mem.config["provider"] == "sqlite" and not mem.runtime.sqlite_path.exists():
        return False
    return any(True for _ in mem.runtime.scoped_store.iter_all_records())

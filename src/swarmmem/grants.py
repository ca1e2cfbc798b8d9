"""Rights a person grants outside the repository: the curator role for agents and the
curation policy.

A cloned repository must not grant its own agents curator rights, so a grant never comes from
a file inside the checkout (``.mcp.json``, ``.claude/settings.json``, the project's
configuration), from a tool argument, or from an environment variable (a project's
``.mcp.json`` can set its server's environment). It comes from the user's own file,
``~/.config/swarmmem/grants.json`` (``$XDG_CONFIG_HOME/swarmmem/grants.json`` when that is
set), which ``swarmmem grant curator`` writes::

    {"curator": ["/home/me/code/app"], "curation-policy": ["/home/me/code/app"]}

A project is named by its absolute root folder (a project id would not do: a cloned
repository can copy another project's id). The file is honoured only when it is a regular
file of this user, writable by no one else, and does not lie inside the project it grants.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

GRANTABLE = ("curator", "curation-policy")
"""The rights a person can grant: the curator role for MCP servers started with
``--role curator``, and the curation policy that approves qualifying proposals at once."""
MAX_GRANTS_BYTES = 1 << 20


def grants_path() -> Path:
    """The user's grants file."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "swarmmem" / "grants.json"


def read_grants(root: Path | None = None) -> dict[str, Any]:
    """The grants file's content; ``{}`` when it is missing, unreadable, not this user's own,
    writable by others, or inside ``root``."""
    path = grants_path()
    try:
        resolved = path.resolve(strict=True)
        info = os.stat(resolved)
    except OSError:
        return {}
    if root is not None and resolved.is_relative_to(Path(root).resolve()):
        return {}
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
        return {}
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) or info.st_size > MAX_GRANTS_BYTES:
        return {}
    try:
        data = json.loads(resolved.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def granted(root: Path, right: str) -> bool:
    """True when the person granted ``right`` for the project at ``root``."""
    entries = read_grants(root).get(right)
    if not isinstance(entries, list):
        return False
    here = str(Path(root).resolve())
    return any(isinstance(e, str) and e == here for e in entries)


def effective_role(root: Path, role: str | None) -> tuple[str | None, str | None]:
    """``(role, warning)``: a requested ``curator`` role without a grant is dropped (with a
    warning saying how to grant it); any other role is kept as given."""
    if role is None or role.strip().lower() != "curator" or granted(root, "curator"):
        return role, None
    return None, (
        f"the curator role is not granted for {Path(root).resolve()}; running without it "
        "(a person grants it outside the repository: swarmmem grant curator)"
    )


def set_grant(root: Path, right: str, *, revoke: bool = False) -> dict[str, Any]:
    """Grant (or revoke) ``right`` for ``root`` in the user's file; returns what changed."""
    if right not in GRANTABLE:
        raise ValueError(f"unknown right {right!r}; one of {', '.join(GRANTABLE)}")
    path = grants_path()
    data = read_grants() if path.exists() else {}
    here = str(Path(root).resolve())
    entries = [e for e in data.get(right, []) if isinstance(e, str)]
    before = here in entries
    if revoke:
        entries = [e for e in entries if e != here]
    elif not before:
        entries.append(here)
    data[right] = entries
    changed = before != (here in entries)
    if changed:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2)
            out.write("\n")
        os.replace(tmp, path)
    return {
        "success": True,
        "right": right,
        "project_root": here,
        "granted": here in entries,
        "changed": changed,
        "grants_file": str(path),
    }

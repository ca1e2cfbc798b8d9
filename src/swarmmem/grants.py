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
file of this user, writable by no one else, and lies outside the checkout (the project and
the git work tree around it).

A checkout's host settings can set the environment of the hooks and servers they start
(``env`` in ``.mcp.json`` or ``.claude/settings.json``), so ``XDG_CONFIG_HOME`` and ``HOME``
are used for grants only when they name an absolute folder outside the checkout that is this
user's and writable by no one else; otherwise they are ignored, with a note, and the config
folder of the user's real home (the password database's, not ``$HOME``) is used.
"""

from __future__ import annotations

import json
import logging
import os
import pwd
import stat
from pathlib import Path
from typing import Any

from swarmmem import safefs
from swarmmem.project import checkout

GRANTABLE = ("curator", "curation-policy")
"""The rights a person can grant: the curator role for MCP servers started with
``--role curator``, and the curation policy that approves qualifying proposals at once."""
MAX_GRANTS_BYTES = 1 << 20

log = logging.getLogger("swarmmem.grants")


def _checkout_of(root: Path | None) -> tuple[Path, ...]:
    return () if root is None else checkout(root)


def _untrusted_base(base: Path, folders: tuple[Path, ...]) -> str | None:
    """Why the folder ``base`` (named by the environment) cannot hold the grants file."""
    if not base.is_absolute():
        return "it is not an absolute path"
    resolved = base.resolve()
    if any(resolved.is_relative_to(folder) for folder in folders):
        return "it is inside the checkout"
    existing = next(f for f in (resolved, *resolved.parents) if os.path.lexists(f))
    info = os.stat(existing)
    if info.st_uid != os.getuid():
        return f"{existing} is not your folder (uid {info.st_uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"other users can write to {existing}"
    return None


def grants_file(root: Path | None = None) -> tuple[Path, str | None]:
    """``(path, note)``: the user's grants file for the project at ``root``, and why an
    environment variable naming another place was ignored (``None`` when none was)."""
    real = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".config"
    xdg, home = os.environ.get("XDG_CONFIG_HOME"), os.environ.get("HOME")
    name, base = ("XDG_CONFIG_HOME", xdg) if xdg else ("HOME", home)
    if not base:
        return real / "swarmmem" / "grants.json", None
    chosen = Path(base) / ".config" if name == "HOME" else Path(base)
    reason = None if chosen == real else _untrusted_base(Path(base), _checkout_of(root))
    if reason is None:
        return chosen / "swarmmem" / "grants.json", None
    note = f"ignoring {name}={base!r} for grants ({reason}); using {real}"
    return real / "swarmmem" / "grants.json", note


def grants_path(root: Path | None = None) -> Path:
    """The user's grants file for the project at ``root`` (see :func:`grants_file`)."""
    return grants_file(root)[0]


def read_grants(root: Path | None = None) -> dict[str, Any]:
    """The grants file's content; ``{}`` when it is missing, unreadable, not this user's own,
    writable by others, or inside the checkout of ``root``. A relocation the environment asked
    for and :func:`grants_file` ignored is logged."""
    path, note = grants_file(root)
    if note is not None:
        log.warning("swarmmem: %s", note)
    return _read(path, root)


def _read(path: Path, root: Path | None) -> dict[str, Any]:
    try:
        resolved = path.resolve(strict=True)
        info = os.stat(resolved)
    except OSError:
        return {}
    if any(resolved.is_relative_to(folder) for folder in _checkout_of(root)):
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
    """Grant (or revoke) ``right`` for ``root`` in the user's file; returns what changed (and
    the note of :func:`grants_file`, when the environment's folder was ignored)."""
    if right not in GRANTABLE:
        raise ValueError(f"unknown right {right!r}; one of {', '.join(GRANTABLE)}")
    path, note = grants_file(root)
    data = _read(path, root) if path.exists() else {}
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
        text = json.dumps(data, indent=2) + "\n"
        safefs.write_file(path, text, base=path.parent.parent, private=True)
    return {
        "success": True,
        "right": right,
        "project_root": here,
        "granted": here in entries,
        "changed": changed,
        "grants_file": str(path),
        **({"note": note} if note else {}),
    }

"""The host configuration ``swarmmem init --agent <host>`` writes.

For each host of :data:`swarmmem.hooks.hosts.TABLE`: the files its ``init`` entries name, each
written by its writer in :data:`WRITERS` (its project-level MCP server entry and its hooks),
merged into the files that may already exist (other servers, other hooks and other settings
are kept; an earlier swarmmem entry is updated in place, so running it again changes
nothing).

Files in the project are meant to be committed, so they call the ``swarmmem`` console script
by name when the one on ``PATH`` is the one installed now (:func:`on_path`); every teammate
with ``swarmmem`` on ``PATH`` then uses them as they are. When it is not on ``PATH`` (a virtual
environment that is not activated), the absolute path goes where the host keeps per-user
settings of a project (Claude Code: hooks in ``.claude/settings.local.json``, the MCP server
in this project's local scope in ``~/.claude.json``), and the hosts without such a file get
the absolute path in their project files, with a note that they are not for committing.
Files in the home folder always name the install by its absolute path. No command imports
anything from the project it runs in.

================  ==========================================================================
``claude-code``   ``.mcp.json``, ``.claude/settings.json`` (with ``--user`` the hooks go to
                  ``~/.claude/settings.json`` instead; off ``PATH``, see above)
``codex``         ``.codex/hooks.json``; the MCP entry of ``~/.codex/config.toml`` is printed,
                  and written only with ``--user``
``gemini``        ``.gemini/settings.json`` (MCP server and hooks)
``cursor``        ``.cursor/mcp.json``, ``.cursor/hooks.json``
``opencode``      ``opencode.json`` (MCP server), ``.opencode/plugins/swarmmem.js`` (hooks)
================  ==========================================================================

Each host also gets a short marked section in its instruction file (``CLAUDE.md``,
``AGENTS.md``, ``GEMINI.md``, ``.cursor/rules/swarmmem.mdc``; see
:mod:`swarmmem.hooks.instructions`) unless ``instructions`` is off. ``remove`` takes out what
it wrote: our server entries, hooks, plugin file and instruction section, nothing else.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from swarmmem.core.model.errors import ConfigError
from swarmmem.hooks.hosts import TABLE, Host, InitFile
from swarmmem.hooks.instructions import with_section, without_section
from swarmmem.safefs import read_text, remove_file, write_file

AGENTS = tuple(TABLE)
"""The hosts ``init --agent`` knows (:data:`swarmmem.hooks.hosts.TABLE`)."""
SERVER_NAME = "swarmmem"
HOOK_TIMEOUT_S = 30
"""The time limit given to each hook (the hook's own answer comes well within it)."""

PLUGIN_PLACEHOLDER = 'const SWARMMEM_COMMAND = ["__SWARMMEM_COMMAND__"];'


def swarmmem_command() -> list[str]:
    """The installed ``swarmmem`` as an argument list: the console script by absolute path,
    else ``python -I -m swarmmem`` (isolated, so the project a host starts it in, which is
    its working directory, is never on ``sys.path``)."""
    script = Path(sys.executable).parent / "swarmmem"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-I", "-m", "swarmmem"]


BY_NAME = ["swarmmem"]
"""The command committed files run: the console script, found on the host's ``PATH``."""


def on_path() -> bool:
    """Whether a host started from this environment finds the installed ``swarmmem`` by name:
    the first ``swarmmem`` on ``PATH`` is this install's console script, and no relative
    ``PATH`` entry comes before it (the host looks those up in the project folder it runs in,
    where a checkout could ship a ``swarmmem`` of its own)."""
    script = Path(sys.executable).parent / "swarmmem"
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isabs(entry):
            return False
        found = shutil.which("swarmmem", path=entry)
        if found is not None:
            return script.is_file() and Path(found).resolve() == script.resolve()
    return False


def through_active_venv() -> Path | None:
    """The activated virtual environment (``VIRTUAL_ENV``) this install runs from, if any: the
    name is on ``PATH`` only in shells where it is activated."""
    venv = os.environ.get("VIRTUAL_ENV")
    if not venv:
        return None
    here = Path(sys.prefix).resolve()
    return here if Path(venv).resolve() == here else None


def _shell(args: list[str]) -> str:
    return " ".join(shlex.quote(a) for a in args)


def hook_line(host: str, event: str, command: list[str] | None = None) -> str:
    """The shell command a host runs for ``event`` (``command``: how it calls swarmmem, by
    default :func:`swarmmem_command`)."""
    return _shell([*(command or swarmmem_command()), "hook", host, event])


def _is_ours(command: Any, host: str) -> bool:
    text = command if isinstance(command, str) else " ".join(map(str, command or ()))
    return f" hook {host} " in f" {text} "


class Plan:
    """The files one ``init --agent`` writes: path -> new text (``None``: the file goes), and
    what it says about them."""

    def __init__(self, root: Path, *, remove: bool = False, by_name: bool = False) -> None:
        self.root = root
        self.remove = remove
        self.by_name = by_name
        """Whether project files call ``swarmmem`` by name (:func:`on_path`)."""
        self.files: dict[Path, str | None] = {}
        self.actions: list[str] = []
        self.notes: list[str] = []
        self.pinned: list[str] = []
        """Project files that name this machine's install by its path."""
        self.local: list[str] = []
        """Per-user files written because ``swarmmem`` is not on ``PATH``."""

    def command(self, path: Path, *, local: bool = False) -> list[str]:
        """How the file at ``path`` calls swarmmem: by name in a project file when it is on
        ``PATH``, else by the install's absolute path; a per-user file (``local``, or one in
        the home folder) always by the path. Project files doing so are noted in
        :attr:`pinned`, per-user ones in :attr:`local`."""
        shown = _shown(self.root, path)
        if local or not path.is_relative_to(self.root):
            if local and shown not in self.local:
                self.local.append(shown)
            return swarmmem_command()
        if self.by_name:
            return BY_NAME
        if shown not in self.pinned:
            self.pinned.append(shown)
        return swarmmem_command()

    def base(self, path: Path) -> Path:
        """The folder below which ``path`` is read and written without following links: the
        project, else the home folder (``--user`` files)."""
        return self.root if path.is_relative_to(self.root) else Path.home()

    def read(self, path: Path) -> str:
        """The text of ``path`` on disk ('' when missing), never read through a link."""
        return read_text(path, base=self.base(path)) or ""

    def current(self, path: Path) -> str | None:
        """The text this plan holds for ``path``, else the file's (``None`` when missing)."""
        if path in self.files:
            return self.files[path]
        return read_text(path, base=self.base(path))

    def json_file(self, relative: str | Path, change: Callable[[dict[str, Any]], None]) -> None:
        """Apply ``change`` to the JSON object in ``relative`` (read from what this plan
        already holds for it, else from disk) and record the result if it differs; when
        removing, a missing file stays missing."""
        path = self.root / relative
        old_text = self.current(path)
        if old_text is None and self.remove:
            return
        old_text = old_text or ""
        try:
            data = json.loads(old_text) if old_text.strip() else {}
        except ValueError as exc:
            raise ConfigError(f"{path} is not valid JSON ({exc}); fix it or move it away") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"{path} must hold a JSON object")
        before = json.dumps(data, sort_keys=True)
        change(data)
        if json.dumps(data, sort_keys=True) != before or not path.exists():
            self.files[path] = json.dumps(data, indent=2) + "\n"

    def text_file(self, relative: str | Path, text: str) -> None:
        path = self.root / relative
        if not path.is_file() or self.read(path) != text:
            self.files[path] = text

    def drop_file(self, relative: str | Path) -> None:
        """Remove ``relative`` (a file of swarmmem's own) if it is there."""
        path = self.root / relative
        if path.is_file() or path.is_symlink():
            self.files[path] = None

    def instructions(self, host: Host) -> None:
        """Add (or, when removing, take out) the section of ``host``'s instruction file."""
        path = self.root / host.instructions
        header = host.instructions_header
        old = self.current(path)
        if self.remove:
            if old is not None and (new := without_section(old, header)) != old:
                self.files[path] = new
        elif (new := with_section(old, header)) != old:
            self.files[path] = new

    def write(self) -> None:
        """Write every file atomically, never through a link (:func:`~swarmmem.safefs.
        write_file`); a file that exists keeps its mode."""
        for path, text in self.files.items():
            if text is None:
                remove_file(path, base=self.base(path))
            else:
                write_file(path, text, base=self.base(path))


def _object(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.setdefault(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{key} in {where} must be a JSON object")
    return value


def _event_list(hooks: dict[str, Any], event: str, where: str) -> list[Any]:
    value = hooks.setdefault(event, [])
    if not isinstance(value, list):
        raise ConfigError(f"hooks.{event} in {where} must be a list")
    return value


def _path(plan: Plan, relative: str) -> Path:
    """``relative`` in the project, or in the home folder for ``~/...``."""
    if relative.startswith("~/"):
        return Path.home() / relative[2:]
    return plan.root / relative


def _claude_style_hooks(
    data: dict[str, Any], host: Host, where: str, command: list[str], *, ms: bool = False
) -> None:
    """Hooks in the Claude Code shape (also Codex's and Gemini's): one matcher group per
    wired event holding our command (an event's own ``timeout`` where the host allows less
    than :data:`HOOK_TIMEOUT_S`); an earlier group of ours is replaced in place."""
    hooks = _object(data, "hooks", where)
    for event in host.wired_events():
        groups = _event_list(hooks, event.name, where)
        seconds = event.timeout or HOOK_TIMEOUT_S
        handler: dict[str, Any] = {
            "type": "command",
            "command": hook_line(host.name, event.name, command),
            "timeout": seconds * 1000 if ms else seconds,
        }
        if ms:
            handler["name"] = SERVER_NAME
        group = {"hooks": [handler]}
        mine = [i for i, g in enumerate(groups) if _group_is_ours(g, host.name)]
        if mine:
            groups[mine[0]] = group
            for i in reversed(mine[1:]):
                del groups[i]
        else:
            groups.append(group)


def _handler_is_ours(handler: Any, host: str) -> bool:
    return isinstance(handler, dict) and _is_ours(handler.get("command"), host)


def _group_is_ours(group: Any, host: str) -> bool:
    handlers = group.get("hooks", []) if isinstance(group, dict) else []
    return any(_handler_is_ours(h, host) for h in handlers)


def _drop_hooks(data: dict[str, Any], host: Host, *, flat: bool = False) -> None:
    """Remove our entries and the event lists they leave empty: matcher groups (Claude Code's
    shape) or, ``flat``, handlers (Cursor's)."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return
    ours = _handler_is_ours if flat else _group_is_ours
    for event in host.wired_events():
        entries = hooks.get(event.name)
        if isinstance(entries, list):
            entries[:] = [e for e in entries if not ours(e, host.name)]
            if not entries:
                del hooks[event.name]


def _drop_server(data: dict[str, Any], key: str = "mcpServers") -> None:
    """Remove our MCP server entry (and the table it leaves empty)."""
    servers = data.get(key)
    if isinstance(servers, dict) and SERVER_NAME in servers:
        del servers[SERVER_NAME]
        if not servers:
            del data[key]


def _flat_hooks(data: dict[str, Any], host: Host, where: str, command: list[str]) -> None:
    """Hooks in Cursor's shape: ``version`` and, per wired event, a flat list of handlers
    whose last is ours."""
    data.setdefault("version", 1)
    hooks = _object(data, "hooks", where)
    for event in host.wired_events():
        handlers = _event_list(hooks, event.name, where)
        ours = {"command": hook_line(host.name, event.name, command), "timeout": HOOK_TIMEOUT_S}
        kept = [h for h in handlers if not _handler_is_ours(h, host.name)]
        handlers[:] = [*kept, ours]


# ------------------------------------------------------------------ the writers of init files


def _mcp_entry(command: list[str], *, stdio: bool) -> dict[str, Any]:
    entry = {"command": command[0], "args": [*command[1:], "mcp"]}
    return {"type": "stdio", **entry} if stdio else entry


def _local_scope(plan: Plan, data: dict[str, Any], where: str) -> dict[str, Any]:
    """This project's entry in a host's per-user file keyed by project folder (Claude Code's
    ``projects`` table of ``~/.claude.json``)."""
    return _object(_object(data, "projects", where), str(plan.root), where)


def write_mcp(plan: Plan, host: Host, file: InitFile, *, user: bool) -> None:
    """Our server in ``mcpServers`` (``{"command", "args"}``). With a ``local_path`` and
    ``swarmmem`` not on ``PATH``, the project file calls it by name and this project's local
    scope there names the install (the host prefers that entry); on ``PATH``, ours leaves it."""
    stdio = file.writes == "mcp-stdio"
    project = _path(plan, file.path)
    local = _path(plan, file.local_path) if file.local_path else None
    command = BY_NAME if local is not None else plan.command(project)
    plan.json_file(
        project,
        lambda d: _object(d, "mcpServers", file.path).update(
            {SERVER_NAME: _mcp_entry(command, stdio=stdio)}
        ),
    )
    if local is None:
        return
    if plan.by_name:
        if local.is_file():
            plan.json_file(local, lambda d: _drop_local_server(plan, d))
        return
    entry = _mcp_entry(plan.command(local, local=True), stdio=stdio)
    plan.json_file(
        local,
        lambda d: _object(_local_scope(plan, d, str(local)), "mcpServers", str(local)).update(
            {SERVER_NAME: entry}
        ),
    )


def _drop_local_server(plan: Plan, data: dict[str, Any]) -> None:
    projects = data.get("projects")
    scope = projects.get(str(plan.root)) if isinstance(projects, dict) else None
    if isinstance(scope, dict):
        _drop_server(scope)


def remove_mcp(plan: Plan, host: Host, file: InitFile, *, user: bool) -> None:
    plan.json_file(_path(plan, file.path), _drop_server)
    if file.local_path:
        plan.json_file(_path(plan, file.local_path), lambda d: _drop_local_server(plan, d))


def write_opencode_mcp(plan: Plan, host: Host, file: InitFile, *, user: bool) -> None:
    """Our server in opencode's ``mcp`` table."""
    command = plan.command(_path(plan, file.path))

    def change(data: dict[str, Any]) -> None:
        data.setdefault("$schema", "https://opencode.ai/config.json")
        _object(data, "mcp", file.path)[SERVER_NAME] = {
            "type": "local",
            "command": [*command, "mcp"],
            "enabled": True,
        }

    plan.json_file(_path(plan, file.path), change)


def remove_opencode_mcp(plan: Plan, host: Host, file: InitFile, *, user: bool) -> None:
    plan.json_file(_path(plan, file.path), lambda d: _drop_server(d, "mcp"))


def codex_toml_snippet() -> str:
    """Codex's MCP server table (in the home folder: the install's absolute path)."""
    command = swarmmem_command()
    args = ", ".join(json.dumps(a) for a in [*command[1:], "mcp"])
    return f"[mcp_servers.{SERVER_NAME}]\ncommand = {json.dumps(command[0])}\nargs = [{args}]\n"


def merge_toml_section(text: str, table: str, section: str) -> str:
    """``text`` with the ``[table]`` section replaced by ``section`` (appended if absent)."""
    header = re.compile(rf"^\[{re.escape(table)}\]\s*$", re.M)
    match = header.search(text)
    if match is None:
        glue = (
            "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        )
        return f"{text}{glue}{section}"
    following = re.compile(r"^\[", re.M).search(text, match.end())
    end = following.start() if following else len(text)
    tail = text[end:]
    return text[: match.start()] + section + ("\n" if tail else "") + tail


def drop_toml_section(text: str, table: str) -> str:
    """``text`` without its ``[table]`` section (unchanged when there is none)."""
    if not re.search(rf"^\[{re.escape(table)}\]\s*$", text, re.M):
        return text
    kept = merge_toml_section(text, table, "")
    return kept.rstrip("\n") + "\n" if kept.strip() else ""


def write_mcp_toml(plan: Plan, host: Host, file: InitFile, *, user: bool) -> None:
    """Our ``[mcp_servers.swarmmem]`` table; a file in the home folder is written only with
    ``user`` (else the table is printed for the person to add)."""
    snippet = codex_toml_snippet()
    if user or not file.path.startswith("~/"):
        path = _path(plan, file.path)
        old = plan.read(path)
        new = merge_toml_section(old, f"mcp_servers.{SERVER_NAME}", snippet)
        if new != old:
            plan.files[path] = new
    else:
        plan.notes.append(
            f"{host.title} reads MCP servers from {file.path}; add this (or rerun with --user "
            "to have it added):\n" + snippet
        )


def remove_mcp_toml(plan: Plan, host: Host, file: InitFile, *, user: bool) -> None:
    path = _path(plan, file.path)
    if (user or not file.path.startswith("~/")) and path.is_file():
        old = plan.read(path)
        new = drop_toml_section(old, f"mcp_servers.{SERVER_NAME}")
        if new != old:
            plan.files[path] = new


def write_hooks(plan: Plan, host: Host, file: InitFile, *, user: bool) -> None:
    """Matcher groups (:func:`_claude_style_hooks`) in one file: the ``user_path`` with
    ``user``, else the ``local_path`` when ``swarmmem`` is not on ``PATH``, else the project's
    file; ours leave the others, so none runs twice."""
    ms = file.writes == "hooks-ms"
    places = [_path(plan, p) for p in (file.path, file.user_path, file.local_path) if p]
    target = places[0]
    if user and file.user_path:
        target = _path(plan, file.user_path)
    elif file.local_path and not plan.by_name:
        target = _path(plan, file.local_path)
    command = plan.command(target, local=target != places[0])
    plan.json_file(target, lambda d: _claude_style_hooks(d, host, str(target), command, ms=ms))
    for other in places:
        if other != target and other.is_file() and other.resolve() != target.resolve():
            plan.json_file(other, lambda d: _drop_hooks(d, host))


def remove_hooks(plan: Plan, host: Host, file: InitFile, *, user: bool) -> None:
    """Our matcher groups in the project's files; with ``user`` also in the ``user_path``."""
    paths = [file.path, file.local_path, *([file.user_path] if user else [])]
    for relative in filter(None, paths):
        plan.json_file(_path(plan, relative), lambda d: _drop_hooks(d, host))


def write_flat_hooks(plan: Plan, host: Host, file: InitFile, *, user: bool) -> None:
    path = _path(plan, file.path)
    command = plan.command(path)
    plan.json_file(path, lambda d: _flat_hooks(d, host, file.path, command))


def remove_flat_hooks(plan: Plan, host: Host, file: InitFile, *, user: bool) -> None:
    plan.json_file(_path(plan, file.path), lambda d: _drop_hooks(d, host, flat=True))


def write_opencode_plugin(plan: Plan, host: Host, file: InitFile, *, user: bool) -> None:
    """The packaged plugin, calling the installed ``swarmmem``."""
    command = plan.command(_path(plan, file.path))
    template = resources.files("swarmmem.hooks").joinpath("opencode_plugin.js").read_text("utf-8")
    if PLUGIN_PLACEHOLDER not in template:
        raise ConfigError("the packaged opencode plugin template has no command placeholder")
    rendered = template.replace(
        PLUGIN_PLACEHOLDER, f"const SWARMMEM_COMMAND = {json.dumps(command)};"
    )
    plan.text_file(_path(plan, file.path), rendered)


def remove_plugin(plan: Plan, host: Host, file: InitFile, *, user: bool) -> None:
    plan.drop_file(_path(plan, file.path))


def _hooks_in(plan: Plan, host: Host, file: InitFile) -> bool:
    return f" hook {host.name} " in (plan.current(_path(plan, file.path)) or "")


def _plugin_in(plan: Plan, host: Host, file: InitFile) -> bool:
    return plan.current(_path(plan, file.path)) is not None


class Writer(NamedTuple):
    """How one kind of init file is written, taken out, and seen to wire the host's hooks."""

    write: Callable[..., None]
    remove: Callable[..., None]
    wires: Callable[[Plan, Host, InitFile], bool] | None = None
    """Whether the file (after the plan) runs the host's hooks (``None``: it never does)."""


WRITERS: dict[str, Writer] = {
    "mcp": Writer(write_mcp, remove_mcp),
    "mcp-stdio": Writer(write_mcp, remove_mcp),
    "mcp-opencode": Writer(write_opencode_mcp, remove_opencode_mcp),
    "mcp-toml": Writer(write_mcp_toml, remove_mcp_toml),
    "hooks": Writer(write_hooks, remove_hooks, _hooks_in),
    "hooks-ms": Writer(write_hooks, remove_hooks, _hooks_in),
    "hooks-flat": Writer(write_flat_hooks, remove_flat_hooks, _hooks_in),
    "plugin-opencode": Writer(write_opencode_plugin, remove_plugin, _plugin_in),
}
""":attr:`InitFile.writes` -> its writer: ``mcp`` (``mcpServers``: ``{"command", "args"}``),
``mcp-stdio`` (the same with ``"type": "stdio"``), ``mcp-opencode`` (opencode's ``mcp``
table), ``mcp-toml`` (Codex's ``[mcp_servers.swarmmem]``), ``hooks`` (matcher groups, timeouts
in seconds), ``hooks-ms`` (the same in milliseconds, with a ``name``), ``hooks-flat``
(Cursor's handler lists), ``plugin-opencode`` (the packaged opencode plugin)."""


def _wired(plan: Plan, host: Host) -> bool:
    """Whether ``host``'s hooks are in the project (after this plan): an instruction file
    hosts share (``AGENTS.md``) keeps its section while another host still reads it."""
    for file in host.init:
        wires = WRITERS[file.writes].wires
        if wires is not None and wires(plan, host, file):
            return True
    return False


def _verb(files: list[str]) -> str:
    return "calls" if len(files) == 1 else "call"


def _pinned_note(plan: Plan) -> str:
    listed = ", ".join(plan.pinned)
    return (
        f"swarmmem is not on PATH, so {listed} {_verb(plan.pinned)} it by its path on this machine "
        f"({swarmmem_command()[0]}): keep them out of commits, or put swarmmem on PATH "
        "(activate its environment, or install it with pipx or uv tool) and run init again."
    )


def _shown(root: Path, path: Path) -> str:
    """``path`` as the person knows it: relative to the project, else ``~/...``."""
    if path.is_relative_to(root):
        return str(path.relative_to(root))
    home = Path.home()
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)


def plan_agents(
    root: Path,
    agents: list[str],
    *,
    user: bool = False,
    instructions: bool = True,
    remove: bool = False,
) -> Plan:
    """What ``init --agent`` (``remove``: ``init --remove --agent``) would write for
    ``agents`` in the project at ``root``."""
    plan = Plan(root, remove=remove, by_name=on_path())
    chosen = list(dict.fromkeys(agents))
    for agent in chosen:
        host = TABLE.get(agent)
        if host is None:
            raise ConfigError(f"unknown agent {agent!r}; one of {', '.join(TABLE)}")
        for file in host.init:
            writer = WRITERS[file.writes]
            (writer.remove if remove else writer.write)(plan, host, file, user=user)
        if not remove:
            plan.notes.extend(host.notes)
    if plan.local:
        listed = " and ".join(plan.local)
        plan.notes.append(
            f"swarmmem is not on PATH, so {listed} (per-user, never committed) "
            f"{_verb(plan.local)} it by its path on this machine ({swarmmem_command()[0]}); "
            "the project's own files call it by name, for teammates who have it on PATH."
        )
    if plan.pinned:
        plan.notes.append(_pinned_note(plan))
    venv = through_active_venv() if plan.by_name and not remove else None
    if venv is not None:
        plan.notes.append(
            f"swarmmem is on PATH through the activated environment {venv}: a host started "
            "where it is not activated (an editor opened from the desktop, another terminal) "
            "will not find it; install swarmmem with pipx or uv tool for such hosts, or run "
            "init with the environment deactivated to have its path written to per-user files."
        )
    for agent in chosen if instructions or remove else ():
        host = TABLE[agent]
        shared = [
            other
            for other in TABLE.values()
            if other.instructions == host.instructions and other.name not in chosen
        ]
        if not (remove and any(_wired(plan, other) for other in shared)):
            plan.instructions(host)
    for path, text in plan.files.items():
        shown = path.relative_to(root) if path.is_relative_to(root) else path
        verb = "Removed" if text is None else ("Updated" if path.exists() else "Wrote")
        plan.actions.append(f"{verb} {shown}.")
    return plan

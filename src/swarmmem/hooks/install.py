"""The host configuration ``swarmmem init --agent <host>`` writes.

For each host: its project-level MCP server entry and its hooks, merged into the files that
may already exist (other servers, other hooks and other settings are kept; an earlier swarmmem
entry is updated in place, so running it again changes nothing). The commands run the
``swarmmem`` that is installed now, by absolute path, so a virtual environment works without
being activated, and never import anything from the project they run in.

================  ==========================================================================
``claude-code``   ``.mcp.json``, ``.claude/settings.json`` (with ``--user`` the hooks go to
                  ``~/.claude/settings.json`` instead)
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
import sys
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from swarmmem.core.model.errors import ConfigError
from swarmmem.hooks.instructions import INSTRUCTION_FILES, with_section, without_section
from swarmmem.safefs import read_text, remove_file, write_file

AGENTS = ("claude-code", "codex", "gemini", "cursor", "opencode")
SERVER_NAME = "swarmmem"
HOOK_TIMEOUT_S = 30
"""The time limit given to each hook (the hook's own answer comes well within it)."""

CLAUDE_EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd", "PreCompact")
GEMINI_EVENTS = ("SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd", "PreCompress")
CURSOR_EVENTS = ("sessionStart", "beforeSubmitPrompt", "stop", "sessionEnd", "preCompact")
PLUGIN_PATH = Path(".opencode") / "plugins" / "swarmmem.js"
PLUGIN_PLACEHOLDER = 'const SWARMMEM_COMMAND = ["__SWARMMEM_COMMAND__"];'


def swarmmem_command() -> list[str]:
    """The installed ``swarmmem`` as an argument list: the console script by absolute path,
    else ``python -I -m swarmmem`` (isolated, so the project a host starts it in, which is
    its working directory, is never on ``sys.path``)."""
    script = Path(sys.executable).parent / "swarmmem"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-I", "-m", "swarmmem"]


def _shell(args: list[str]) -> str:
    return " ".join(shlex.quote(a) for a in args)


def hook_line(host: str, event: str) -> str:
    """The shell command a host runs for ``event``."""
    return _shell([*swarmmem_command(), "hook", host, event])


def _is_ours(command: Any, host: str) -> bool:
    text = command if isinstance(command, str) else " ".join(map(str, command or ()))
    return f" hook {host} " in f" {text} "


class Plan:
    """The files one ``init --agent`` writes: path -> new text (``None``: the file goes), and
    what it says about them."""

    def __init__(self, root: Path, *, remove: bool = False) -> None:
        self.root = root
        self.remove = remove
        self.files: dict[Path, str | None] = {}
        self.actions: list[str] = []
        self.notes: list[str] = []

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

    def instructions(self, host: str) -> None:
        """Add (or, when removing, take out) the section of ``host``'s instruction file."""
        relative = INSTRUCTION_FILES[host]
        path = self.root / relative
        old = self.current(path)
        if self.remove:
            if old is not None and (new := without_section(old, relative)) != old:
                self.files[path] = new
        elif (new := with_section(old, relative)) != old:
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


def _claude_style_hooks(
    data: dict[str, Any],
    host: str,
    events: tuple[str, ...],
    where: str,
    *,
    ms: bool = False,
    timeouts: Mapping[str, int] | None = None,
) -> None:
    """Hooks in the Claude Code shape (also Codex's and Gemini's): one matcher group per
    event holding our command (``timeouts``: seconds for events the host allows less than
    :data:`HOOK_TIMEOUT_S`); an earlier group of ours is replaced in place."""
    hooks = _object(data, "hooks", where)
    for event in events:
        groups = _event_list(hooks, event, where)
        seconds = (timeouts or {}).get(event, HOOK_TIMEOUT_S)
        handler: dict[str, Any] = {
            "type": "command",
            "command": hook_line(host, event),
            "timeout": seconds * 1000 if ms else seconds,
        }
        if ms:
            handler["name"] = SERVER_NAME
        group = {"hooks": [handler]}
        mine = [
            i
            for i, g in enumerate(groups)
            if isinstance(g, dict)
            and any(
                isinstance(h, dict) and _is_ours(h.get("command"), host) for h in g.get("hooks", [])
            )
        ]
        if mine:
            groups[mine[0]] = group
            for i in reversed(mine[1:]):
                del groups[i]
        else:
            groups.append(group)


def _group_is_ours(group: Any, host: str) -> bool:
    handlers = group.get("hooks", []) if isinstance(group, dict) else []
    return any(isinstance(h, dict) and _is_ours(h.get("command"), host) for h in handlers)


def _mcp_servers(data: dict[str, Any], where: str, entry: dict[str, Any]) -> None:
    _object(data, "mcpServers", where)[SERVER_NAME] = entry


def plan_claude_code(plan: Plan, *, user: bool) -> None:
    """``.mcp.json`` and the hooks: in ``.claude/settings.json``, or with ``user`` in
    ``~/.claude/settings.json`` (Claude Code reads a project's settings only when started in
    the project root; user-level hooks run wherever it starts and do nothing outside a
    project with memory on). Hooks of ours in the other file are removed, so none runs twice."""
    command = swarmmem_command()
    entry = {"type": "stdio", "command": command[0], "args": [*command[1:], "mcp"]}
    plan.json_file(".mcp.json", lambda d: _mcp_servers(d, ".mcp.json", entry))
    project = plan.root / ".claude" / "settings.json"
    home = Path.home() / ".claude" / "settings.json"
    target, other = (home, project) if user else (project, home)
    plan.json_file(
        target, lambda d: _claude_style_hooks(d, "claude-code", CLAUDE_EVENTS, str(target))
    )
    if other.is_file() and other.resolve() != target.resolve():
        plan.json_file(other, lambda d: _drop_hooks(d, "claude-code"))


def _drop_hooks(data: dict[str, Any], host: str, events: tuple[str, ...] = CLAUDE_EVENTS) -> None:
    """Remove our matcher groups (Claude Code's shape) and the event lists they leave empty."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event in events:
        groups = hooks.get(event)
        if isinstance(groups, list):
            groups[:] = [g for g in groups if not _group_is_ours(g, host)]
            if not groups:
                del hooks[event]


def _drop_server(data: dict[str, Any], key: str = "mcpServers") -> None:
    """Remove our MCP server entry (and the table it leaves empty)."""
    servers = data.get(key)
    if isinstance(servers, dict) and SERVER_NAME in servers:
        del servers[SERVER_NAME]
        if not servers:
            del data[key]


def _drop_cursor_hooks(data: dict[str, Any]) -> None:
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return
    for event in CURSOR_EVENTS:
        handlers = hooks.get(event)
        if isinstance(handlers, list):
            handlers[:] = [
                h
                for h in handlers
                if not (isinstance(h, dict) and _is_ours(h.get("command"), "cursor"))
            ]
            if not handlers:
                del hooks[event]


#: Codex clamps a SessionEnd hook to 3 seconds and warns on every run when asked for more
CODEX_TIMEOUTS = {"SessionEnd": 3}
CODEX_TRUST_NOTE = (
    "Codex runs a project's hooks only once you trust them: start `codex` in this folder and "
    "trust the project when asked, then open `/hooks` and trust each swarmmem hook (a hook "
    "whose command changes must be trusted again). swarmmem never writes Codex's trust state."
)
GEMINI_TRUST_NOTE = (
    "Gemini CLI reads this folder's .gemini/settings.json (hooks, MCP server) only in a trusted "
    "folder: trust it when gemini asks (or add it in ~/.gemini/trustedFolders.json yourself); "
    "with --skip-trust no project settings load. swarmmem never writes Gemini's trust state."
)


def plan_codex(plan: Plan, *, user: bool) -> None:
    where = ".codex/hooks.json"
    plan.json_file(
        where,
        lambda d: _claude_style_hooks(d, "codex", CLAUDE_EVENTS, where, timeouts=CODEX_TIMEOUTS),
    )
    snippet = codex_toml_snippet()
    if user:
        path = Path.home() / ".codex" / "config.toml"
        old = plan.read(path)
        new = merge_toml_section(old, f"mcp_servers.{SERVER_NAME}", snippet)
        if new != old:
            plan.files[path] = new
    else:
        plan.notes.append(
            "Codex reads MCP servers from ~/.codex/config.toml; add this (or rerun with --user "
            "to have it added):\n" + snippet
        )
    plan.notes.append(CODEX_TRUST_NOTE)


def codex_toml_snippet() -> str:
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


def plan_gemini(plan: Plan) -> None:
    where = ".gemini/settings.json"
    command = swarmmem_command()
    entry = {"command": command[0], "args": [*command[1:], "mcp"]}

    def change(data: dict[str, Any]) -> None:
        _mcp_servers(data, where, entry)
        _claude_style_hooks(data, "gemini", GEMINI_EVENTS, where, ms=True)

    plan.json_file(where, change)
    plan.notes.append(GEMINI_TRUST_NOTE)


def plan_cursor(plan: Plan) -> None:
    command = swarmmem_command()
    entry = {"command": command[0], "args": [*command[1:], "mcp"]}
    plan.json_file(".cursor/mcp.json", lambda d: _mcp_servers(d, ".cursor/mcp.json", entry))
    where = ".cursor/hooks.json"

    def change(data: dict[str, Any]) -> None:
        data.setdefault("version", 1)
        hooks = _object(data, "hooks", where)
        for event in CURSOR_EVENTS:
            handlers = _event_list(hooks, event, where)
            ours = {"command": hook_line("cursor", event), "timeout": HOOK_TIMEOUT_S}
            kept = [
                h
                for h in handlers
                if not (isinstance(h, dict) and _is_ours(h.get("command"), "cursor"))
            ]
            handlers[:] = [*kept, ours]

    plan.json_file(where, change)


def plan_opencode(plan: Plan) -> None:
    command = swarmmem_command()

    def change(data: dict[str, Any]) -> None:
        data.setdefault("$schema", "https://opencode.ai/config.json")
        _object(data, "mcp", "opencode.json")[SERVER_NAME] = {
            "type": "local",
            "command": [*command, "mcp"],
            "enabled": True,
        }

    plan.json_file("opencode.json", change)
    template = resources.files("swarmmem.hooks").joinpath("opencode_plugin.js").read_text("utf-8")
    if PLUGIN_PLACEHOLDER not in template:
        raise ConfigError("the packaged opencode plugin template has no command placeholder")
    rendered = template.replace(
        PLUGIN_PLACEHOLDER, f"const SWARMMEM_COMMAND = {json.dumps(command)};"
    )
    plan.text_file(PLUGIN_PATH, rendered)


def remove_claude_code(plan: Plan, *, user: bool) -> None:
    """The MCP entry and the project's hooks; with ``user`` the hooks in the home folder."""
    plan.json_file(".mcp.json", _drop_server)
    home = Path.home() / ".claude" / "settings.json"
    for path in (plan.root / ".claude" / "settings.json", *([home] if user else [])):
        plan.json_file(path, lambda d: _drop_hooks(d, "claude-code"))


def remove_codex(plan: Plan, *, user: bool) -> None:
    plan.json_file(".codex/hooks.json", lambda d: _drop_hooks(d, "codex"))
    path = Path.home() / ".codex" / "config.toml"
    if user and path.is_file():
        old = plan.read(path)
        new = drop_toml_section(old, f"mcp_servers.{SERVER_NAME}")
        if new != old:
            plan.files[path] = new


def remove_gemini(plan: Plan) -> None:
    def change(data: dict[str, Any]) -> None:
        _drop_server(data)
        _drop_hooks(data, "gemini", GEMINI_EVENTS)

    plan.json_file(".gemini/settings.json", change)


def remove_cursor(plan: Plan) -> None:
    plan.json_file(".cursor/mcp.json", _drop_server)
    plan.json_file(".cursor/hooks.json", _drop_cursor_hooks)


def remove_opencode(plan: Plan) -> None:
    plan.json_file("opencode.json", lambda d: _drop_server(d, "mcp"))
    plan.drop_file(PLUGIN_PATH)


def _wired(plan: Plan, host: str) -> bool:
    """Whether ``host``'s hooks are in the project (after this plan): an instruction file
    hosts share (``AGENTS.md``) keeps its section while another host still reads it."""
    if host == "opencode":
        return plan.current(plan.root / PLUGIN_PATH) is not None
    files = {
        "claude-code": [plan.root / ".claude" / "settings.json"],
        "codex": [plan.root / ".codex" / "hooks.json"],
        "gemini": [plan.root / ".gemini" / "settings.json"],
        "cursor": [plan.root / ".cursor" / "hooks.json"],
    }[host]
    return any(f" hook {host} " in (plan.current(path) or "") for path in files)


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
    plan = Plan(root, remove=remove)
    chosen = list(dict.fromkeys(agents))
    for agent in chosen:
        if agent not in AGENTS:
            raise ConfigError(f"unknown agent {agent!r}; one of {', '.join(AGENTS)}")
        if remove:
            _remove_agent(plan, agent, user=user)
        else:
            _plan_agent(plan, agent, user=user)
    for agent in chosen if instructions or remove else ():
        shared = [
            other
            for other, path in INSTRUCTION_FILES.items()
            if path == INSTRUCTION_FILES[agent] and other not in chosen
        ]
        if not (remove and any(_wired(plan, other) for other in shared)):
            plan.instructions(agent)
    for path, text in plan.files.items():
        shown = path.relative_to(root) if path.is_relative_to(root) else path
        verb = "Removed" if text is None else ("Updated" if path.exists() else "Wrote")
        plan.actions.append(f"{verb} {shown}.")
    return plan


def _plan_agent(plan: Plan, agent: str, *, user: bool) -> None:
    writers: dict[str, Callable[[], None]] = {
        "claude-code": lambda: plan_claude_code(plan, user=user),
        "codex": lambda: plan_codex(plan, user=user),
        "gemini": lambda: plan_gemini(plan),
        "cursor": lambda: plan_cursor(plan),
        "opencode": lambda: plan_opencode(plan),
    }
    writers[agent]()


def _remove_agent(plan: Plan, agent: str, *, user: bool) -> None:
    removers: dict[str, Callable[[], None]] = {
        "claude-code": lambda: remove_claude_code(plan, user=user),
        "codex": lambda: remove_codex(plan, user=user),
        "gemini": lambda: remove_gemini(plan),
        "cursor": lambda: remove_cursor(plan),
        "opencode": lambda: remove_opencode(plan),
    }
    removers[agent]()

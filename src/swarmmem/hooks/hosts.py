"""What each agent host sends a hook and what it expects back (standard library only).

Every host is one :class:`Host` value in :data:`TABLE`: its events and their spellings, where
its stdin puts the fields a hook reads (:class:`Payload`), the shape of its stdout
(:class:`Output`) and the files ``swarmmem init --agent`` writes for it (:class:`InitFile`,
its instruction file and notes). Every list of hosts and events (the ``hook`` command's
choices, the events ``init`` wires, the run-log fields) is derived from that table, and a test
ties them together; ``docs/hosts.md`` has the recipe for adding a host.

A host runs ``swarmmem hook <host> <event>`` with one JSON object on stdin. :func:`parse`
turns the host's event name and fields into a :class:`HookInput`; :func:`render` turns the
context to add (or nothing) into exactly what the host reads on stdout,
:func:`render_notice` a message for the person (where the host shows one), and
:func:`render_stop` what a stop hook says: a notice, and on hosts whose stop hook can keep the
agent going, the question asking it to propose. Hosts and events:

================  ==========================================================================
``claude-code``   SessionStart, UserPromptSubmit, Stop, SubagentStop, SessionEnd, PreCompact
``codex``         the same names and shapes as Claude Code
``gemini``        SessionStart, BeforeAgent, AfterAgent, SessionEnd, PreCompress (JSON only)
``cursor``        sessionStart, beforeSubmitPrompt, afterAgentResponse, stop, sessionEnd,
                  preCompact (JSON only)
``opencode``      session-start, user-prompt-submit, stop, pre-compact (the plugin's calls)
================  ==========================================================================

The event argument is the host's own spelling or its kebab case (``UserPromptSubmit`` or
``user-prompt-submit``). Every host's event maps to one of the :data:`KINDS`.
"""

# no ``from __future__ import annotations``: the NamedTuples below would then compile each
# field's annotation string when the module loads, at every prompt hook's start
import json
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

SESSION_START = "session-start"
PROMPT = "user-prompt-submit"
STOP = "stop"
SESSION_END = "session-end"
PRE_COMPACT = "pre-compact"
KINDS = (SESSION_START, PROMPT, STOP, SESSION_END, PRE_COMPACT)
"""What a hook does: brief, recall for a prompt, or read proposals (the last three)."""
CONTEXT_KINDS = (SESSION_START, PROMPT)
"""The kinds of hook whose answer may add context for the agent."""


def kebab(name: str) -> str:
    """``UserPromptSubmit`` / ``beforeSubmitPrompt`` / ``user_prompt`` in kebab case."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name.strip())
    return re.sub(r"[\s_]+", "-", spaced).lower()


class Event(NamedTuple):
    """One event of a host."""

    name: str
    """The host's own spelling (``UserPromptSubmit``); its kebab case is accepted too."""
    kind: str
    """What the hook does for it: one of :data:`KINDS`."""
    wired: bool = True
    """``init`` writes a hook for it (the opencode plugin: the plugin calls it)."""
    timeout: int | None = None
    """Seconds the host allows this hook when it allows less than the usual limit."""


class Payload(NamedTuple):
    """Where a host's stdin puts the fields a hook reads: for each, the keys tried in order
    (the first non-empty string wins; ``key[0]`` is the first item of a list)."""

    session_id: tuple[str, ...] = ("session_id", "conversation_id")
    cwd: tuple[str, ...] = ("cwd", "workspace_roots[0]")
    prompt: tuple[str, ...] = ("prompt",)
    source: tuple[str, ...] = ("source",)
    transcript_path: tuple[str, ...] = ("transcript_path",)
    reply: tuple[str, ...] = ("last_assistant_message", "prompt_response")
    """The agent's last reply."""
    stop_reply: tuple[str, ...] = ("text",)
    """Keys read as the agent's last reply by a stop-kind hook only."""
    prompt_has_hook_context: bool = False
    """The host puts earlier hook context (``<hook_context>...``) in front of the prompt."""
    stop_active: tuple[str, ...] = ("stop_hook_active",)
    """Keys that are ``true`` when the agent is already going on because a stop hook asked."""


class Output(NamedTuple):
    """The shape of a host's stdout."""

    context_key: str = "additionalContext"
    """The field that carries context for the agent."""
    nested: bool = False
    """Context goes in ``hookSpecificOutput`` with ``hookEventName`` (the event's spelling)."""
    json_only: bool = False
    """Stdout must be one JSON object, even when there is nothing to add."""
    prompt_continue: bool = False
    """A prompt hook's answer carries ``"continue": true``."""
    notice_field: str | None = None
    """The field whose text the person sees (``None``: a notice goes to stderr only)."""
    stop_continue: bool = False
    """A stop hook can keep the agent going: ``{"decision": "block", "reason": ...}`` hands it
    the reason as its next instruction (guarded by :attr:`Payload.stop_active`)."""


class InitFile(NamedTuple):
    """One file ``swarmmem init --agent`` writes for a host."""

    path: str
    """Relative to the project; ``~/...`` is in the home folder (written only with ``--user``,
    else the file's text is printed as a note)."""
    writes: str
    """What goes in it: a key of :data:`swarmmem.hooks.install.WRITERS`."""
    user_path: str | None = None
    """With ``--user`` the same content goes here instead (and ours leaves ``path``)."""
    local_path: str | None = None
    """The host's own per-user file for this content: when ``swarmmem`` is not on ``PATH``,
    what names it by its absolute path goes here (never committed), so ``path`` stays the same
    for every teammate (:func:`swarmmem.hooks.install.write_hooks`,
    :func:`swarmmem.hooks.install.write_mcp`)."""


class Host(NamedTuple):
    """Everything swarmmem knows about one agent host."""

    name: str
    """The ``HOST`` argument of ``swarmmem hook`` and ``init --agent``."""
    title: str
    """How the person knows it (in notes)."""
    events: tuple[Event, ...]
    output: Output
    init: tuple[InitFile, ...]
    instructions: str
    """The instruction file (relative to the project) the host reads at every session."""
    instructions_header: str = ""
    """What that file starts with when ``init`` creates it (a Cursor rule's front matter)."""
    notes: tuple[str, ...] = ()
    """What ``init`` tells the person after writing the files."""
    payload: Payload = Payload()

    def kinds(self) -> dict[str, str]:
        """Its events in kebab case -> the kind of hook."""
        return {kebab(e.name): e.kind for e in self.events}

    def wired_events(self) -> tuple[Event, ...]:
        """The events ``init`` writes hooks for, in the host's order."""
        return tuple(e for e in self.events if e.wired)

    def event_name(self, kind: str) -> str:
        """The host's spelling of its first event of ``kind``."""
        return next(e.name for e in self.events if e.kind == kind)


_CLAUDE_EVENTS = (
    Event("SessionStart", SESSION_START),
    Event("UserPromptSubmit", PROMPT),
    Event("Stop", STOP),
    Event("SubagentStop", STOP, wired=False),
    Event("SessionEnd", SESSION_END),
    Event("PreCompact", PRE_COMPACT),
)
_HOOK_SPECIFIC = Output(nested=True, notice_field="systemMessage")
_CLAUDE_OUTPUT = _HOOK_SPECIFIC._replace(stop_continue=True)

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

TABLE: dict[str, Host] = {
    host.name: host
    for host in (
        Host(
            name="claude-code",
            title="Claude Code",
            events=_CLAUDE_EVENTS,
            output=_CLAUDE_OUTPUT,
            init=(
                # Claude Code's local scope: this project's entry in ~/.claude.json
                InitFile(".mcp.json", "mcp-stdio", local_path="~/.claude.json"),
                InitFile(
                    ".claude/settings.json",
                    "hooks",
                    user_path="~/.claude/settings.json",
                    local_path=".claude/settings.local.json",
                ),
            ),
            instructions="CLAUDE.md",
        ),
        Host(
            name="codex",
            title="Codex",
            # Codex clamps a SessionEnd hook to 3 seconds and warns on every run when asked
            # for more
            events=tuple(
                e._replace(timeout=3) if e.kind == SESSION_END else e for e in _CLAUDE_EVENTS
            ),
            output=_CLAUDE_OUTPUT,
            init=(
                InitFile(".codex/hooks.json", "hooks"),
                InitFile("~/.codex/config.toml", "mcp-toml"),
            ),
            instructions="AGENTS.md",
            notes=(CODEX_TRUST_NOTE,),
        ),
        Host(
            name="gemini",
            title="Gemini CLI",
            events=(
                Event("SessionStart", SESSION_START),
                Event("BeforeAgent", PROMPT),
                Event("AfterAgent", STOP),
                Event("SessionEnd", SESSION_END),
                Event("PreCompress", PRE_COMPACT),
            ),
            output=_HOOK_SPECIFIC._replace(json_only=True),
            init=(
                InitFile(".gemini/settings.json", "mcp"),
                InitFile(".gemini/settings.json", "hooks-ms"),
            ),
            instructions="GEMINI.md",
            notes=(GEMINI_TRUST_NOTE,),
            # in -p mode Gemini CLI puts the brief in front of the prompt
            payload=Payload(prompt_has_hook_context=True),
        ),
        Host(
            name="cursor",
            title="Cursor",
            events=(
                Event("sessionStart", SESSION_START),
                Event("beforeSubmitPrompt", PROMPT),
                Event("afterAgentResponse", STOP, wired=False),
                Event("stop", STOP),
                Event("sessionEnd", SESSION_END),
                Event("preCompact", PRE_COMPACT),
            ),
            output=Output(context_key="additional_context", json_only=True, prompt_continue=True),
            init=(
                InitFile(".cursor/mcp.json", "mcp"),
                InitFile(".cursor/hooks.json", "hooks-flat"),
            ),
            instructions=".cursor/rules/swarmmem.mdc",
            instructions_header="---\ndescription: How to propose project memories (swarmmem)"
            "\nalwaysApply: true\n---\n\n",
        ),
        Host(
            name="opencode",
            title="opencode",
            events=(
                Event("session-start", SESSION_START),
                Event("user-prompt-submit", PROMPT),
                Event("stop", STOP),
                Event("session-end", SESSION_END, wired=False),
                Event("pre-compact", PRE_COMPACT),
            ),
            output=Output(json_only=True),
            init=(
                InitFile("opencode.json", "mcp-opencode"),
                InitFile(".opencode/plugins/swarmmem.js", "plugin-opencode"),
            ),
            instructions="AGENTS.md",
        ),
    )
}
"""host name -> its description: the one place a host is written down."""

HOSTS = tuple(TABLE)
EVENTS: dict[str, dict[str, str]] = {name: host.kinds() for name, host in TABLE.items()}
"""host -> its events in kebab case -> the kind of hook."""
JSON_ONLY = frozenset(name for name, host in TABLE.items() if host.output.json_only)
"""Hosts whose stdout must be one JSON object, even when there is nothing to add."""
NOTICE_FIELDS = {
    name: host.output.notice_field for name, host in TABLE.items() if host.output.notice_field
}
"""host -> the field of its hook output that the person sees (the others have no such field:
a notice reaches their person on stderr only)."""

MAX_CONTEXT_CHARS = 9_000
"""Context longer than this is cut at an item boundary (hosts truncate ~10,000 characters)."""

_CONTEXT_OPEN, _CONTEXT_CLOSE = "<hook_context>", "</hook_context>"
_SESSION_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_TRIVIAL_WORDS = (
    "ok okay k kk thanks thank-you thx ty yes no y n yep nope sure continue go go-on "
    "go-ahead proceed done lgtm cool great nice perfect fine right correct agreed hi hello"
)
_TRIVIAL = frozenset(_TRIVIAL_WORDS.split())


class HookUsageError(ValueError):
    """An unknown host or event (a configuration mistake, reported on stderr)."""


def host_of(name: str) -> Host:
    """The :class:`Host` called ``name`` (:class:`HookUsageError` if unknown)."""
    host = TABLE.get(name)
    if host is None:
        raise HookUsageError(f"unknown host {name!r}; one of {', '.join(TABLE)}")
    return host


def event_kind(host: str, event: str) -> str:
    """The :data:`KINDS` entry of ``host``'s ``event`` (:class:`HookUsageError` if unknown)."""
    events = host_of(host).kinds()
    kind = events.get(kebab(event))
    if kind is None:
        raise HookUsageError(f"unknown {host} event {event!r}; one of {', '.join(sorted(events))}")
    return kind


def _field(payload: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    """The first non-empty string under ``keys`` (``key[0]``: a list's first item)."""
    for key in keys:
        if key.endswith("[0]"):
            items = payload.get(key[:-3])
            value = items[0] if isinstance(items, list) and items else None
        else:
            value = payload.get(key)
        if text := _text(value):
            return text
    return None


class HookInput:
    """The fields of a host's stdin that a hook uses, whatever the host calls them."""

    __slots__ = (
        "bad_input",
        "cwd",
        "event",
        "host",
        "kind",
        "last_assistant_message",
        "prompt",
        "session_id",
        "source",
        "stop_active",
        "transcript_path",
    )

    def __init__(self, host: str, event: str, payload: dict[str, Any]) -> None:
        self.host = host
        self.event = event
        self.kind = event_kind(host, event)
        keys = host_of(host).payload
        #: stdin was not one JSON object (set by :func:`parse`): the hook does nothing
        self.bad_input = False
        self.session_id = session_key(_field(payload, keys.session_id))
        self.cwd = _field(payload, keys.cwd)
        self.prompt = _field(payload, keys.prompt)
        if keys.prompt_has_hook_context and self.prompt:
            self.prompt = _text(without_hook_context(self.prompt))
        self.source = _field(payload, keys.source) or "startup"
        self.transcript_path = _field(payload, keys.transcript_path)
        self.last_assistant_message = _field(payload, keys.reply) or (
            _field(payload, keys.stop_reply) if self.kind == STOP else None
        )
        #: the agent goes on because a stop hook asked it to (never asked twice in a row)
        self.stop_active = any(payload.get(key) is True for key in keys.stop_active)

    def as_dict(self) -> dict[str, Any]:
        """The fields (for the helper process and the tests)."""
        return {name: getattr(self, name) for name in self.__slots__}


def without_hook_context(prompt: str) -> str:
    """``prompt`` without the ``<hook_context>...</hook_context>`` blocks Gemini CLI puts in
    front of it (a SessionStart hook's context, not the person's words), stripped; one pass."""
    parts: list[str] = []
    at = 0
    while (start := prompt.find(_CONTEXT_OPEN, at)) >= 0:
        end = prompt.find(_CONTEXT_CLOSE, start + len(_CONTEXT_OPEN))
        if end < 0:
            break
        parts.append(prompt[at:start])
        at = end + len(_CONTEXT_CLOSE)
    parts.append(prompt[at:])
    return "".join(parts).strip()


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def session_key(value: str | None) -> str:
    """A session id usable as a folder name: kept when it is a plain identifier of at most
    128 characters, else replaced by a digest (``s-`` + 24 hex digits); ``unknown`` if absent."""
    if not value:
        return "unknown"
    if _SESSION_ID.fullmatch(value) and value not in (".", ".."):
        return value
    import hashlib  # here: a plain id, the usual case, needs no digest at hook start-up

    return "s-" + hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()[:24]


def parse(host: str, event: str, raw: str | bytes) -> HookInput:
    """The :class:`HookInput` of ``raw`` stdin; stdin that is not one JSON object (empty,
    not JSON, or another JSON value) reads as ``{}`` with ``bad_input`` set."""
    try:
        payload = json.loads(raw) if raw and raw.strip() else None
    except (ValueError, RecursionError):
        payload = None
    hook = HookInput(host, event, payload if isinstance(payload, dict) else {})
    hook.bad_input = not isinstance(payload, dict)
    return hook


def trivial_prompt(prompt: str | None) -> bool:
    """True for a prompt with nothing to recall for: empty, under 3 characters, a slash
    command, or an acknowledgement such as "ok", "thanks" or "go ahead"."""
    text = (prompt or "").strip()
    if len(text) < 3 or text.startswith("/"):
        return True
    words = re.sub(r"[^\w\s-]", " ", text.lower()).split()
    return not words or (len(words) <= 3 and "-".join(words) in _TRIVIAL)


def empty_output(host: str, kind: str) -> str:
    """What the host reads as "nothing to add, carry on"."""
    output = host_of(host).output
    if output.prompt_continue and kind == PROMPT:
        return '{"continue": true}'
    return "{}" if output.json_only else ""


def render_notice(host: str, kind: str, message: str) -> str:
    """The stdout that shows ``message`` to the person and adds nothing for the agent
    (:func:`empty_output` for a host without a user-visible field)."""
    field = host_of(host).output.notice_field
    if field is None:
        return empty_output(host, kind)
    return json.dumps({field: message}, ensure_ascii=False)


def can_continue(host: str, kind: str) -> bool:
    """True when ``host``'s hook of ``kind`` can keep the agent going (a stop hook)."""
    return kind == STOP and host_of(host).output.stop_continue


def render_stop(host: str, kind: str, notice: str | None, nudge: str | None) -> str:
    """The stdout of a hook that adds no context: ``nudge`` as the agent's next instruction
    where the host's stop hook can keep it going (:func:`can_continue`), with ``notice`` for
    the person; else ``notice`` alone (:func:`render_notice`), or nothing."""
    if nudge and can_continue(host, kind):
        answer: dict[str, Any] = {"decision": "block", "reason": nudge}
        field = host_of(host).output.notice_field
        if notice and field:
            answer[field] = notice
        return json.dumps(answer, ensure_ascii=False)
    if notice:
        return render_notice(host, kind, notice)
    return empty_output(host, kind)


def render(host: str, kind: str, context: str | None) -> str:
    """The stdout that hands ``context`` to ``host`` (:func:`empty_output` when there is
    none, or when the host takes no context for this kind of event)."""
    if not context or kind not in CONTEXT_KINDS:
        return empty_output(host, kind)
    context = clip(context)
    spec = host_of(host)
    output = spec.output
    answer: dict[str, Any] = {output.context_key: context}
    if output.nested:
        answer = {"hookSpecificOutput": {"hookEventName": spec.event_name(kind), **answer}}
    elif output.prompt_continue and kind == PROMPT:
        answer = {"continue": True, **answer}
    return json.dumps(answer, ensure_ascii=False)


def clip(context: str) -> str:
    """``context`` within :data:`MAX_CONTEXT_CHARS`, cut before the item that overflows."""
    if len(context) <= MAX_CONTEXT_CHARS:
        return context
    cut = context.rfind("\n- [", 0, MAX_CONTEXT_CHARS)
    return context[: cut if cut > 0 else MAX_CONTEXT_CHARS].rstrip()

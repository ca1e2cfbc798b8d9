"""What each agent host sends a hook and what it expects back (standard library only).

A host runs ``swarmmem hook <host> <event>`` with one JSON object on stdin. :func:`parse`
turns the host's event name and fields into a :class:`HookInput`; :func:`render` turns the
context to add (or nothing) into exactly what the host reads on stdout, and
:func:`render_notice` a message for the person (where the host shows one). Hosts and events:

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

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

SESSION_START = "session-start"
PROMPT = "user-prompt-submit"
STOP = "stop"
SESSION_END = "session-end"
PRE_COMPACT = "pre-compact"
KINDS = (SESSION_START, PROMPT, STOP, SESSION_END, PRE_COMPACT)
"""What a hook does: brief, recall for a prompt, or read proposals (the last three)."""

_COMMON = {
    "session-start": SESSION_START,
    "stop": STOP,
    "session-end": SESSION_END,
    "pre-compact": PRE_COMPACT,
}
EVENTS: dict[str, dict[str, str]] = {
    "claude-code": {**_COMMON, "user-prompt-submit": PROMPT, "subagent-stop": STOP},
    "codex": {**_COMMON, "user-prompt-submit": PROMPT, "subagent-stop": STOP},
    "gemini": {
        "session-start": SESSION_START,
        "before-agent": PROMPT,
        "after-agent": STOP,
        "session-end": SESSION_END,
        "pre-compress": PRE_COMPACT,
    },
    "cursor": {
        **_COMMON,
        "before-submit-prompt": PROMPT,
        "after-agent-response": STOP,
    },
    "opencode": {**_COMMON, "user-prompt-submit": PROMPT},
}
"""host -> its events in kebab case -> the kind of hook."""

HOSTS = tuple(EVENTS)

# the event names the JSON hosts expect back in ``hookSpecificOutput.hookEventName``
_CONTEXT_EVENT_NAMES = {
    "claude-code": {SESSION_START: "SessionStart", PROMPT: "UserPromptSubmit"},
    "codex": {SESSION_START: "SessionStart", PROMPT: "UserPromptSubmit"},
    "gemini": {SESSION_START: "SessionStart", PROMPT: "BeforeAgent"},
}
JSON_ONLY = frozenset({"gemini", "cursor", "opencode"})
"""Hosts whose stdout must be one JSON object, even when there is nothing to add."""

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


def kebab(name: str) -> str:
    """``UserPromptSubmit`` / ``beforeSubmitPrompt`` / ``user_prompt`` in kebab case."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name.strip())
    return re.sub(r"[\s_]+", "-", spaced).lower()


def event_kind(host: str, event: str) -> str:
    """The :data:`KINDS` entry of ``host``'s ``event`` (:class:`HookUsageError` if unknown)."""
    events = EVENTS.get(host)
    if events is None:
        raise HookUsageError(f"unknown host {host!r}; one of {', '.join(HOSTS)}")
    kind = events.get(kebab(event))
    if kind is None:
        raise HookUsageError(f"unknown {host} event {event!r}; one of {', '.join(sorted(events))}")
    return kind


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
        "transcript_path",
    )

    def __init__(self, host: str, event: str, payload: dict[str, Any]) -> None:
        self.host = host
        self.event = event
        self.kind = event_kind(host, event)
        #: stdin was not one JSON object (set by :func:`parse`): the hook does nothing
        self.bad_input = False
        self.session_id = session_key(
            _text(payload.get("session_id")) or _text(payload.get("conversation_id"))
        )
        roots = payload.get("workspace_roots")
        first_root = roots[0] if isinstance(roots, list) and roots else None
        self.cwd = _text(payload.get("cwd")) or _text(first_root)
        self.prompt = _text(payload.get("prompt"))
        if host == "gemini" and self.prompt:  # in -p mode Gemini CLI puts the brief in front
            self.prompt = _text(without_hook_context(self.prompt))
        self.source = _text(payload.get("source")) or "startup"
        self.transcript_path = _text(payload.get("transcript_path"))
        self.last_assistant_message = (
            _text(payload.get("last_assistant_message"))
            or _text(payload.get("prompt_response"))
            or (_text(payload.get("text")) if self.kind == STOP else None)
        )

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
    if host == "cursor" and kind == PROMPT:
        return '{"continue": true}'
    return "{}" if host in JSON_ONLY else ""


NOTICE_FIELDS = {
    "claude-code": "systemMessage",
    "codex": "systemMessage",
    "gemini": "systemMessage",
}
"""host -> the field of its hook output that the person sees (the others have no such field:
a notice reaches their person on stderr only)."""


def render_notice(host: str, kind: str, message: str) -> str:
    """The stdout that shows ``message`` to the person and adds nothing for the agent
    (:func:`empty_output` for a host without a user-visible field)."""
    field = NOTICE_FIELDS.get(host)
    if field is None:
        return empty_output(host, kind)
    return json.dumps({field: message}, ensure_ascii=False)


def render(host: str, kind: str, context: str | None) -> str:
    """The stdout that hands ``context`` to ``host`` (:func:`empty_output` when there is
    none, or when the host takes no context for this kind of event)."""
    if not context or kind not in (SESSION_START, PROMPT):
        return empty_output(host, kind)
    context = clip(context)
    if host == "cursor":
        answer: dict[str, Any] = {"additional_context": context}
        if kind == PROMPT:
            answer = {"continue": True, **answer}
    elif host == "opencode":
        answer = {"additionalContext": context}
    else:
        name = _CONTEXT_EVENT_NAMES[host][kind]
        answer = {"hookSpecificOutput": {"hookEventName": name, "additionalContext": context}}
    return json.dumps(answer, ensure_ascii=False)


def clip(context: str) -> str:
    """``context`` within :data:`MAX_CONTEXT_CHARS`, cut before the item that overflows."""
    if len(context) <= MAX_CONTEXT_CHARS:
        return context
    cut = context.rfind("\n- [", 0, MAX_CONTEXT_CHARS)
    return context[: cut if cut > 0 else MAX_CONTEXT_CHARS].rstrip()

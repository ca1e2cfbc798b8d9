"""What a hook does, once the host's input is parsed: brief, recall for a prompt, or file the
agent's proposals; and the run-log line that says what happened.

A stop hook tells the person what it filed, found duplicate or refused (the host's
user-visible field), and the agent hears it in front of the next context a hook adds; where
the host's stop hook can keep the agent going, a session that edited files or ran commands and
proposed nothing is asked once to propose what it learned.

:func:`run_hook` is called in the hook process itself or in the project's helper process
(:mod:`swarmmem.hooks.daemon`); both give the same answer. It never raises: a failure is
logged and answered with the host's empty output, so memory never blocks the person's work.
An invalid configuration is said once per session, on stderr and where the host shows the
person a message (``hook_skipped``, ``bad_config`` in the run log); stdin that is not one JSON
object is logged as ``bad_input``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import swarmmem
from swarmmem.core.model.errors import ConfigError
from swarmmem.core.model.ids import to_iso
from swarmmem.core.recall.session import HOOK_KINDS, MAX_REMEMBERED, HookAnswer, SessionHooks
from swarmmem.hooks import hosts
from swarmmem.hooks.hosts import HookInput
from swarmmem.hooks.transcript import read_transcript
from swarmmem.memory import Memory
from swarmmem.project import CONFIG_RELATIVE_PATH
from swarmmem.registry import create
from swarmmem.results import redact_secrets

log = logging.getLogger("swarmmem")

__all__ = ["HOOK_KINDS", "MAX_REMEMBERED", "REPEAT_SECONDS", "answer", "run_hook"]

REPEAT_SECONDS = 10.0
"""The same event with the same input within this many seconds is answered only once."""


def run_hook(
    root: Path,
    hook: HookInput,
    *,
    config: Mapping[str, Any] | str | None = None,
    role: str | None = None,
    adapters: Mapping[str, Any] | None = None,
) -> str:
    """The stdout for ``hook`` in the project at ``root`` (never raises)."""
    context = {"session_id": hook.session_id, "agent_role": role or "coder"}
    mem: Memory | None = None
    try:
        if hook.bad_input:
            _log_plain(root, hook, {"type": "hook_skipped", "reason": "bad_input"})
            return hosts.empty_output(hook.host, hook.kind)
        try:
            mem = swarmmem.open(root, config, context=context, **dict(adapters or {}))
        except ConfigError as exc:
            return _bad_config(root, hook, config, exc)
        if not mem.enabled:
            return hosts.empty_output(hook.host, hook.kind)
        use_cases = mem.session_hooks
        with mem.session_state(hook.session_id) as state:
            result = answer(use_cases, hook, state, checkout=root)
        _log(mem, hook, result.event)
        if hook.kind in hosts.CONTEXT_KINDS:
            return hosts.render(hook.host, hook.kind, result.context)
        return hosts.render_stop(hook.host, hook.kind, result.notice, result.nudge)
    except Exception as exc:
        note = f"swarmmem hook {hook.host} {hook.event}: {type(exc).__name__}: {exc}"
        print(note, file=sys.stderr)
        if mem is not None:
            try:
                error = {"type": "hook_skipped", "reason": "error", "error": note}
                _log(mem, hook, error)
            except Exception:
                log.warning("the run log could not record a hook error", exc_info=True)
        return hosts.empty_output(hook.host, hook.kind)
    finally:
        if mem is not None:
            mem.close()


def _bad_config(
    root: Path, hook: HookInput, config: Mapping[str, Any] | str | None, exc: ConfigError
) -> str:
    """Nothing to add, because the configuration is invalid: said once per session (and
    again when the error changes) on stderr and where the host shows the person a message;
    every such hook is logged (``bad_config``)."""
    where = config if isinstance(config, str) else root / CONFIG_RELATIVE_PATH
    message = redact_secrets(
        f"swarmmem: memory is off until the configuration is fixed ({where}): {exc}. "
        "`swarmmem config show` checks it."
    )
    digest = hashlib.sha256(message.encode("utf-8", "replace")).hexdigest()[:16]
    first = True
    try:
        with create("file", "hook-state", root=root, session_id=hook.session_id).update() as st:
            first = st.get("configError") != digest
            st["configError"] = digest
        event = {"type": "hook_skipped", "reason": "bad_config", "error": message}
        _log_plain(root, hook, {**event, "notified": first})
    except Exception as log_exc:  # the state or the log cannot be written: still say it
        log.warning("the hook state or run log could not record a bad configuration: %s", log_exc)
    if not first:
        return hosts.empty_output(hook.host, hook.kind)
    print(message, file=sys.stderr)
    return hosts.render_notice(hook.host, hook.kind, message)


def _log_plain(root: Path, hook: HookInput, event: dict[str, Any]) -> None:
    """Log ``event`` without an open memory (the configuration may be what is wrong)."""
    event = {**event, "host": hook.host, "event": hook.event}
    now = to_iso(dt.datetime.now(dt.timezone.utc))
    create("file", "run-log", root=root).append(hook.session_id, event, now)


def _log(mem: Memory, hook: HookInput, event: dict[str, Any]) -> None:
    mem.log_session(hook.session_id, {**event, "host": hook.host, "event": hook.event})


def answer(
    use_cases: SessionHooks,
    hook: HookInput,
    state: dict[str, Any],
    *,
    checkout: Path | None = None,
) -> HookAnswer:
    """What ``hook`` adds to the session (and its run-log line): one use case of
    ``use_cases`` for its kind, with the session's ``state``; a transcript reached through a
    link inside ``checkout`` (the project folder) is not read."""
    if hook.kind in hosts.CONTEXT_KINDS and _repeated(hook, state):
        return HookAnswer(context=None, event={"type": "hook_skipped", "reason": "duplicate"})
    if hook.kind == hosts.SESSION_START:
        return use_cases.session_start(session_id=hook.session_id, source=hook.source, state=state)
    if hook.kind == hosts.PROMPT:
        trivial = hosts.trivial_prompt(hook.prompt)
        return use_cases.prompt(hook.prompt, trivial=trivial, state=state)
    texts, actions = _agent_work(hook, state, checkout)
    return use_cases.file_proposals(
        texts,
        state=state,
        actions=actions,
        can_nudge=hosts.can_continue(hook.host, hook.kind),
        nudged_already=hook.stop_active,
    )


def _agent_work(
    hook: HookInput, state: dict[str, Any], checkout: Path | None
) -> tuple[list[str], int]:
    """What the agent wrote since the transcript was last read (the host's last reply too),
    and how many files it edited and commands it ran meanwhile."""
    offset = int(state.get("transcriptOffset") or 0)
    reading = read_transcript(hook.transcript_path, offset, checkout=checkout)
    state["transcriptOffset"] = reading.offset
    texts = list(reading.texts)
    if hook.last_assistant_message:
        texts.append(hook.last_assistant_message)
    return texts, reading.actions


def _repeated(hook: HookInput, state: dict[str, Any]) -> bool:
    """True when the same event with the same input reached this session less than
    :data:`REPEAT_SECONDS` ago (a hook configured twice, e.g. at user and project level)."""
    text = f"{hook.kind}\0{hook.source}\0{hook.prompt or ''}"
    key = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]
    now = time.time()
    last = state.get("last")
    state["last"] = {"key": key, "at": now}
    if not isinstance(last, dict) or last.get("key") != key:
        return False
    at = last.get("at")
    return isinstance(at, int | float) and 0 <= now - at < REPEAT_SECONDS

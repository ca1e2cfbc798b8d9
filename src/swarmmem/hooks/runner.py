"""What a hook does, once the host's input is parsed: brief, recall for a prompt, or file the
agent's proposals; and the run-log line that says what happened.

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
import json
import logging
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import swarmmem
from swarmmem.core.model.errors import ConfigError
from swarmmem.core.model.ids import bundle_id, estimate_tokens, to_iso
from swarmmem.core.model.records import MEMORY_KINDS
from swarmmem.core.recall.bm25 import query_terms
from swarmmem.core.recall.brief import BRIEF_KINDS, brief_items
from swarmmem.core.recall.injection import build_plan
from swarmmem.core.recall.prompt import build_prompt_block
from swarmmem.core.writes.service import json_objects
from swarmmem.hooks import hosts
from swarmmem.hooks.hosts import HookInput
from swarmmem.hooks.instructions import PROPOSE_LINE
from swarmmem.hooks.transcript import read_assistant_texts
from swarmmem.project import CONFIG_RELATIVE_PATH
from swarmmem.registry import create
from swarmmem.results import redact_secrets

log = logging.getLogger("swarmmem")

HOOK_KINDS = tuple(k for k in MEMORY_KINDS if k in BRIEF_KINDS)
"""The kinds a host's prompt recall searches (durable kinds and API findings)."""
MAX_REMEMBERED = 500
"""The most injected ids and filed block digests a session's state keeps."""
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
    mem = None
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
        with mem.runtime.hook_state(hook.session_id).update() as state:
            context_text, event = _dispatch(mem, hook, state)
        _log(mem, hook, event)
        return hosts.render(hook.host, hook.kind, context_text)
    except Exception as exc:
        note = f"swarmmem hook {hook.host} {hook.event}: {type(exc).__name__}: {exc}"
        print(note, file=sys.stderr)
        if mem is not None:
            try:
                _log(mem, hook, {"type": "hook_skipped", "reason": "error", "error": note})
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


def _log(mem: Any, hook: HookInput, event: dict[str, Any]) -> None:
    event = {**event, "host": hook.host, "event": hook.event}
    if "error" in event:
        event["error"] = mem.runtime.secrets.redact(event["error"])
    mem.runtime.run_log.append(hook.session_id, event, mem.runtime.now())


def _dispatch(
    mem: Any, hook: HookInput, state: dict[str, Any]
) -> tuple[str | None, dict[str, Any]]:
    if hook.kind in (hosts.SESSION_START, hosts.PROMPT) and _repeated(hook, state):
        return None, {"type": "hook_skipped", "reason": "duplicate"}
    if hook.kind == hosts.SESSION_START:
        return session_start(mem, hook, state)
    if hook.kind == hosts.PROMPT:
        return prompt_submit(mem, hook, state)
    return None, file_proposals(mem, hook, state)


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


def session_start(
    mem: Any, hook: HookInput, state: dict[str, Any]
) -> tuple[str | None, dict[str, Any]]:
    """The brief (and the reflection lessons when they fit), ending with how to propose a
    memory; a new, cleared or compacted context forgets what earlier prompts injected."""
    if hook.source in ("startup", "clear", "compact"):
        state["injected"] = []
    elif state.get("briefed"):
        # a resumed session still holds the brief it was given
        return None, {"type": "session_brief_skipped", "reason": "already_briefed"}
    rt = mem.runtime
    settings = mem.config["recall"]["sessionBrief"]
    if not settings["enabled"]:
        return None, {"type": "session_brief_skipped", "reason": "disabled"}
    rt.reflection.refresh()  # lessons are regenerated here, never on a prompt
    records = mem.list(limit=500)
    items = brief_items(
        records,
        max_items=int(settings["maxItems"]),
        suppression_threshold=float(mem.config["learning"]["suppressionThreshold"]),
    )
    budget = int(settings["tokenBudget"])
    blocks: list[str] = []
    ids: list[str] = []
    tokens = 0
    if items:
        now = rt.now()
        block, tokens, included = build_prompt_block(
            bundle_id(f"brief:{hook.session_id}", now),
            items,
            generated_at=now,
            token_budget=budget,
            redact=rt.secrets.redact,
        )
        if included:
            blocks.append(block)
            ids = [item.record.id for item in included]
    lessons = rt.reflection.block()
    if lessons and tokens + estimate_tokens(lessons) <= budget:
        blocks.append(lessons)
    if not blocks:
        return None, {"type": "session_brief_skipped", "reason": "no_results"}
    state["briefed"] = True
    # what the brief gave is in the context: a prompt's recall does not inject it again
    state["injected"] = [*(state.get("injected") or ()), *ids][-MAX_REMEMBERED:]
    event = {
        "type": "session_brief",
        "source": hook.source,
        "memoryIds": ids,
        "lessons": len(blocks) > (1 if ids else 0),
        "tokens": tokens,
    }
    return "\n\n".join([*blocks, PROPOSE_LINE]), event


def prompt_submit(
    mem: Any, hook: HookInput, state: dict[str, Any]
) -> tuple[str | None, dict[str, Any]]:
    """The injection recall for the person's prompt, without the memories this context
    already holds."""
    rt = mem.runtime
    terms = query_terms(rt.secrets.redact(hook.prompt or ""))[:20]
    skipped: dict[str, Any] = {"type": "prompt_injection_skipped", "queryTerms": terms}
    if hosts.trivial_prompt(hook.prompt):
        return None, {**skipped, "reason": "trivial_prompt"}
    settings = rt.settings.recall.injection
    if not settings.enabled:
        return None, {**skipped, "reason": "disabled"}
    plan = build_plan(
        agent_role=rt.context.agent_role,
        agent_task=None,
        user_goal=hook.prompt,
        settings=settings,
    )
    bundle = rt.injection.recall_plan(plan, kinds=HOOK_KINDS)
    if not bundle.items:
        reason = bundle.diagnostics.get("injectionSkipReason") or "no_results"
        return None, {**skipped, "reason": reason, "bundleId": bundle.id}
    seen = set(state.get("injected") or ())
    fresh = [item for item in bundle.items if item.record.id not in seen]
    if not fresh:
        return None, {
            **skipped,
            "reason": "deduped",
            "bundleId": bundle.id,
            "memoryIds": [i.record.id for i in bundle.items],
        }
    block, tokens = bundle.prompt_block, bundle.token_estimate
    if len(fresh) < len(bundle.items):
        block, tokens, fresh = build_prompt_block(
            bundle.id,
            fresh,
            generated_at=bundle.generated_at,
            token_budget=settings.token_budget,
            redact=rt.secrets.redact,
        )
    ids = [item.record.id for item in fresh]
    state["injected"] = [*seen, *ids][-MAX_REMEMBERED:]
    event = {
        "type": "prompt_injected",
        "bundleId": bundle.id,
        "memoryIds": ids,
        "scores": [round(item.score, 4) for item in fresh],
        "tokens": tokens,
        "dense": bool(bundle.diagnostics.get("fusionActive")),
        "queryTerms": terms,
    }
    return block, event


def file_proposals(mem: Any, hook: HookInput, state: dict[str, Any]) -> dict[str, Any]:
    """Route the ``memoryProposals`` blocks the agent wrote since the last read through
    propose (each block once per session; invalid entries are dropped and counted)."""
    offset = int(state.get("transcriptOffset") or 0)
    texts, offset = read_assistant_texts(hook.transcript_path, offset)
    state["transcriptOffset"] = offset
    if hook.last_assistant_message:
        texts.append(hook.last_assistant_message)
    filed = list(state.get("filed") or ())
    proposals: list[str] = []
    rejected: list[str] = []
    writes = mem.runtime.writes
    for text in texts:
        for block in json_objects(text):
            digest = hashlib.sha256(
                json.dumps(block, sort_keys=True, ensure_ascii=False).encode()
            ).hexdigest()[:32]
            if digest in filed:
                continue
            filed.append(digest)
            result = writes.ingest_task_output(json.dumps(block))
            proposals.extend(result["proposals"] + result["decisions"])
            rejected.extend(str(r.get("error", "")) for r in result["rejected"])
    state["filed"] = filed[-MAX_REMEMBERED:]
    return {
        "type": "proposals_filed" if proposals or rejected else "proposals_none",
        "proposalIds": proposals,
        "rejected": [mem.runtime.secrets.redact(r)[:300] for r in rejected],
    }

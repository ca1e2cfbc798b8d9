"""Each agent host's documented hook input and output, as :mod:`swarmmem.hooks.hosts` reads
and writes them (contract tests; the real Claude Code CLI is exercised in the integration
tests)."""

from __future__ import annotations

import json

import pytest

from swarmmem.hooks import hosts
from swarmmem.hooks.hosts import (
    HookUsageError,
    event_kind,
    parse,
    render,
    render_notice,
    trivial_prompt,
)

CONTEXT = "## Retrieved Swarm Memory\n- [mem_0123456789abcdef] kind=repo_convention"


@pytest.mark.parametrize(
    ("host", "event", "kind"),
    [
        ("claude-code", "SessionStart", hosts.SESSION_START),
        ("claude-code", "session-start", hosts.SESSION_START),
        ("claude-code", "UserPromptSubmit", hosts.PROMPT),
        ("claude-code", "user-prompt-submit", hosts.PROMPT),
        ("claude-code", "Stop", hosts.STOP),
        ("claude-code", "SubagentStop", hosts.STOP),
        ("claude-code", "SessionEnd", hosts.SESSION_END),
        ("claude-code", "PreCompact", hosts.PRE_COMPACT),
        ("codex", "UserPromptSubmit", hosts.PROMPT),
        ("codex", "pre-compact", hosts.PRE_COMPACT),
        ("gemini", "SessionStart", hosts.SESSION_START),
        ("gemini", "BeforeAgent", hosts.PROMPT),
        ("gemini", "before-agent", hosts.PROMPT),
        ("gemini", "AfterAgent", hosts.STOP),
        ("gemini", "PreCompress", hosts.PRE_COMPACT),
        ("cursor", "sessionStart", hosts.SESSION_START),
        ("cursor", "beforeSubmitPrompt", hosts.PROMPT),
        ("cursor", "before-submit-prompt", hosts.PROMPT),
        ("cursor", "afterAgentResponse", hosts.STOP),
        ("opencode", "user-prompt-submit", hosts.PROMPT),
        ("opencode", "pre-compact", hosts.PRE_COMPACT),
    ],
)
def test_each_host_spelling_and_its_kebab_case_map_to_one_kind(
    host: str, event: str, kind: str
) -> None:
    assert event_kind(host, event) == kind


@pytest.mark.parametrize(
    ("host", "event", "message"),
    [
        ("vim", "SessionStart", "unknown host 'vim'"),
        ("gemini", "UserPromptSubmit", "unknown gemini event 'UserPromptSubmit'"),
        ("cursor", "PreToolUse", "unknown cursor event"),
    ],
)
def test_unknown_hosts_and_events_are_named(host: str, event: str, message: str) -> None:
    with pytest.raises(HookUsageError, match=message):
        event_kind(host, event)


def test_claude_code_prompt_output_is_nested_hook_specific_output() -> None:
    """A bare top-level additionalContext is ignored by Claude Code: it must be nested."""
    out = json.loads(render("claude-code", hosts.PROMPT, CONTEXT))
    assert out == {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": CONTEXT}
    }
    start = json.loads(render("codex", hosts.SESSION_START, CONTEXT))
    assert start["hookSpecificOutput"]["hookEventName"] == "SessionStart"


def test_gemini_uses_its_own_event_names_and_json_only() -> None:
    out = json.loads(render("gemini", hosts.PROMPT, CONTEXT))
    assert out["hookSpecificOutput"] == {
        "hookEventName": "BeforeAgent",
        "additionalContext": CONTEXT,
    }
    assert render("gemini", hosts.PROMPT, None) == "{}"
    assert render("gemini", hosts.STOP, None) == "{}"


def test_cursor_answers_continue_and_additional_context() -> None:
    assert json.loads(render("cursor", hosts.PROMPT, CONTEXT)) == {
        "continue": True,
        "additional_context": CONTEXT,
    }
    assert json.loads(render("cursor", hosts.PROMPT, None)) == {"continue": True}
    assert json.loads(render("cursor", hosts.SESSION_START, CONTEXT)) == {
        "additional_context": CONTEXT
    }
    assert render("cursor", hosts.SESSION_START, "") == "{}"


def test_opencode_plugin_reads_additional_context() -> None:
    assert json.loads(render("opencode", hosts.PROMPT, CONTEXT)) == {"additionalContext": CONTEXT}
    assert render("opencode", hosts.STOP, CONTEXT) == "{}"


@pytest.mark.parametrize("host", ["claude-code", "codex"])
def test_plain_text_hosts_get_nothing_on_stdout_when_there_is_nothing(host: str) -> None:
    for kind in hosts.KINDS:
        assert render(host, kind, None) == ""
    # stop, session end and pre-compact take no context on these hosts
    assert render(host, hosts.STOP, CONTEXT) == ""
    assert render(host, hosts.PRE_COMPACT, CONTEXT) == ""


def test_context_over_the_host_limit_is_cut_before_an_item() -> None:
    items = "".join(f"\n- [mem_{i:016x}] kind=repo_convention\n  {'x' * 200}" for i in range(80))
    out = json.loads(render("claude-code", hosts.PROMPT, "## Retrieved Swarm Memory" + items))
    text = out["hookSpecificOutput"]["additionalContext"]
    assert len(text) <= hosts.MAX_CONTEXT_CHARS
    assert text.endswith("x" * 200)  # whole items only


def test_claude_code_stdin_fields() -> None:
    raw = json.dumps(
        {
            "session_id": "8f2c1a52-0a3c-4c8e-9d0e-2f1b5a6c7d8e",
            "transcript_path": "/home/u/.claude/projects/p/8f2c.jsonl",
            "cwd": "/home/dev/app/src",
            "hook_event_name": "UserPromptSubmit",
            "permission_mode": "default",
            "prompt": "how do we run migrations?",
            "prompt_id": "p1",
        }
    )
    hook = parse("claude-code", "UserPromptSubmit", raw)
    assert hook.session_id == "8f2c1a52-0a3c-4c8e-9d0e-2f1b5a6c7d8e"
    assert hook.cwd == "/home/dev/app/src"
    assert hook.prompt == "how do we run migrations?"
    assert hook.transcript_path.endswith("8f2c.jsonl")
    stop = parse("claude-code", "Stop", json.dumps({"last_assistant_message": "done"}))
    assert stop.last_assistant_message == "done"


def test_cursor_and_gemini_stdin_fields() -> None:
    cursor = parse(
        "cursor",
        "beforeSubmitPrompt",
        json.dumps(
            {
                "conversation_id": "c-1",
                "generation_id": "g-1",
                "workspace_roots": ["/home/dev/app"],
                "prompt": "fix the flaky test",
            }
        ),
    )
    assert (cursor.session_id, cursor.cwd, cursor.prompt) == (
        "c-1",
        "/home/dev/app",
        "fix the flaky test",
    )
    reply = parse("cursor", "afterAgentResponse", json.dumps({"text": "All done."}))
    assert reply.last_assistant_message == "All done."
    gemini = parse("gemini", "AfterAgent", json.dumps({"prompt_response": "Here it is."}))
    assert gemini.last_assistant_message == "Here it is."


@pytest.mark.parametrize("raw", [b"", b"not json", b"[1, 2]", b'"text"', b"{"])
def test_malformed_stdin_reads_as_an_empty_payload(raw: bytes) -> None:
    hook = parse("claude-code", "UserPromptSubmit", raw)
    assert (hook.session_id, hook.prompt, hook.cwd) == ("unknown", None, None)
    assert hook.bad_input is True  # logged as bad input, never as a trivial prompt
    assert parse("claude-code", "UserPromptSubmit", b"{}").bad_input is False


@pytest.mark.parametrize(
    ("host", "kind", "expected"),
    [
        ("claude-code", "stop", {"systemMessage": "fix it"}),
        ("codex", "user-prompt-submit", {"systemMessage": "fix it"}),
        ("gemini", "session-start", {"systemMessage": "fix it"}),
        ("cursor", "user-prompt-submit", {"continue": True}),
        ("opencode", "user-prompt-submit", {}),
    ],
)
def test_a_notice_reaches_the_person_where_the_host_shows_one(
    host: str, kind: str, expected: dict[str, object]
) -> None:
    assert json.loads(render_notice(host, kind, "fix it")) == expected


@pytest.mark.parametrize(
    "session", ["../../etc", "a/b", "x" * 200, "..", "tab\there", "\u202egnp.exe"]
)
def test_session_ids_that_are_not_plain_identifiers_become_digests(session: str) -> None:
    key = parse("claude-code", "Stop", json.dumps({"session_id": session})).session_id
    assert key.startswith("s-") and len(key) == 26
    assert "/" not in key and ".." not in key


@pytest.mark.parametrize(
    "prompt", ["ok", "OK!", "thanks", "Thank you.", "go ahead", "/compact", "  ", "y", "lgtm"]
)
def test_trivial_prompts(prompt: str) -> None:
    assert trivial_prompt(prompt)


@pytest.mark.parametrize(
    "prompt", ["how do we run the tests?", "ok so where is the config loaded", "fix db.py"]
)
def test_real_prompts_are_not_trivial(prompt: str) -> None:
    assert not trivial_prompt(prompt)


def test_the_hook_entry_point_imports_nothing_heavy() -> None:
    """A prompt hook answered by the helper must not pay for the library: the entry point
    imports only the standard library and the hook's own small modules."""
    import subprocess
    import sys

    code = (
        "import json, sys, swarmmem._entry, swarmmem.hooks.client; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('numpy', 'attrs', 'click', 'rich', 'sqlite3', 'onnxruntime', 'swarmmem', "
        "'subprocess', 'hashlib'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == [
        "swarmmem",
        "swarmmem._entry",
        "swarmmem._version",
        "swarmmem.hooks",
        "swarmmem.hooks.client",
        "swarmmem.hooks.hosts",
        "swarmmem.project",
    ]


def test_the_host_table_types_are_evaluated_not_compiled_at_import() -> None:
    """Under ``from __future__ import annotations`` a NamedTuple compiles each field's string
    annotation when the class is made (3 ms of every prompt hook's start for the host
    table's 32 fields); the host table's annotations are real types."""
    import typing

    tables = (hosts.Event, hosts.Payload, hosts.Output, hosts.InitFile, hosts.Host)
    late = [
        f"{table.__name__}.{name}"
        for table in tables
        for name, hint in table.__annotations__.items()
        if isinstance(hint, (str, typing.ForwardRef))
    ]
    assert late == []


def test_gemini_prompts_lose_the_context_gemini_put_in_front_of_them() -> None:
    """In -p mode Gemini CLI prepends the session-start context to the prompt; recall reads
    the person's words alone (other hosts' prompts are kept as they are)."""
    wrapped = (
        "<hook_context>## Retrieved Swarm Memory\nlint with ruff</hook_context>\nwhy is CI red?"
    )
    payload = {"session_id": "s", "prompt": wrapped}
    assert hosts.HookInput("gemini", "BeforeAgent", payload).prompt == "why is CI red?"
    assert hosts.HookInput("claude-code", "UserPromptSubmit", payload).prompt == wrapped
    only = {"session_id": "s", "prompt": "<hook_context>brief</hook_context>"}
    assert hosts.HookInput("gemini", "BeforeAgent", only).prompt is None
    assert hosts.without_hook_context("a <hook_context>b</hook_context> c") == "a  c"
    assert hosts.without_hook_context("<hook_context>open") == "<hook_context>open"

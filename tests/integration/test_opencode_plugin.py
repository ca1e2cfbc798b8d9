"""The opencode plugin template, ``swarmmem/hooks/opencode_plugin.js``, run under node.

The test renders the template with a fake ``swarmmem`` command: a Python script that appends
its argv, working folder and stdin to a JSON-lines log and answers
``{"additionalContext": "CTX-<event>"}`` (``CTX-session-start:<source>`` and
``CTX-user-prompt-submit:<prompt>``; ``{}`` for a prompt starting with "nothing"), or
misbehaves, depending on ``FAKE_SWARMMEM_MODE``. ``opencode_plugin_harness.mjs`` imports the
rendered plugin, plays one session through the opencode v1 hooks (``server()``) and one
through the v2 hooks (``setup(ctx)``) and prints the system prompt of every model call it
made. Without node >= 20 the tests skip, or fail when ``SWARMMEM_HOSTS_REQUIRED=1``.

The rule under test: the start context (``session-start``, source startup, then compact after
a compaction) and the prompt context (``user-prompt-submit`` of the latest user message) are
kept and appended to every primary model call; each command runs once per event.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import swarmmem

pytestmark = pytest.mark.slow

TEMPLATE = Path(swarmmem.__file__).resolve().parent / "hooks" / "opencode_plugin.js"
HARNESS = Path(__file__).resolve().with_name("opencode_plugin_harness.mjs")
PLACEHOLDER = "__SWARMMEM_COMMAND__"
PLACEHOLDER_LINE = f'const SWARMMEM_COMMAND = ["{PLACEHOLDER}"];'
ENV_REQUIRED = "SWARMMEM_HOSTS_REQUIRED"
MIN_NODE_MAJOR = 20
V1, V1_CHILD, V2, V2_CHILD = "ses_v1", "ses_v1_child", "ses_v2", "ses_v2_child"
START, PROMPT, PRE_COMPACT, STOP = "session-start", "user-prompt-submit", "pre-compact", "stop"
COMMON_KEYS = {"hook_event_name", "session_id", "cwd"}

FAKE_SWARMMEM = """\
import json, os, sys, time

mode = os.environ.get("FAKE_SWARMMEM_MODE", "ok")
raw = sys.stdin.read()
record = {"argv": sys.argv[1:], "cwd": os.getcwd(), "stdin": raw}
with open(os.environ["FAKE_SWARMMEM_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps(record) + "\\n")
event = sys.argv[-1]
payload = json.loads(raw)
if mode == "garbage":
    print("this is not JSON {")
elif mode == "exit1":
    print(json.dumps({"additionalContext": "CTX-from-a-failed-run"}))
    sys.exit(1)
elif mode == "sleep":
    time.sleep(30)
    print(json.dumps({"additionalContext": "CTX-too-late"}))
elif event == "session-start":
    print(json.dumps({"additionalContext": "CTX-session-start:" + payload["source"]}))
elif event == "user-prompt-submit" and payload["prompt"].startswith("nothing"):
    print("{}")
elif event == "user-prompt-submit":
    print(json.dumps({"additionalContext": "CTX-user-prompt-submit:" + payload["prompt"]}))
else:
    print(json.dumps({"additionalContext": "CTX-" + event}))
"""


def _node() -> str:
    """Return node's path, or skip (fail under ``SWARMMEM_HOSTS_REQUIRED=1``) without node 20+."""
    node = shutil.which("node")
    reason = None
    if node is None:
        reason = "node is not on PATH"
    else:
        try:
            done = subprocess.run(
                [node, "--version"], capture_output=True, text=True, timeout=30, check=False
            )
            version = done.stdout.strip()
            major = int(version.removeprefix("v").split(".", 1)[0])
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            reason = f"cannot read node's version: {exc}"
        else:
            if major < MIN_NODE_MAJOR:
                reason = f"node {version} is older than {MIN_NODE_MAJOR}"
    if reason is None:
        assert node is not None
        return node
    reason = f"the opencode plugin test needs node >= {MIN_NODE_MAJOR}: {reason}"
    if os.environ.get(ENV_REQUIRED) == "1":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def node() -> str:
    return _node()


def render(command: list[str] | None) -> str:
    """The template with the placeholder line replaced by ``command`` as a JSON array."""
    template = TEMPLATE.read_text(encoding="utf-8")
    assert template.count(PLACEHOLDER_LINE) == 1
    assert template.count(PLACEHOLDER) == 1
    if command is None:
        return template
    rendered = template.replace(
        PLACEHOLDER_LINE, f"const SWARMMEM_COMMAND = {json.dumps(command)};"
    )
    assert PLACEHOLDER not in rendered
    return rendered


def install(tmp_path: Path, command: list[str] | None) -> tuple[Path, Path]:
    """Write the rendered plugin to ``<project>/.opencode/plugins/swarmmem.js``."""
    project = tmp_path / "project"
    plugins = project / ".opencode" / "plugins"
    plugins.mkdir(parents=True)
    # node < 20.19 needs the hint to load a ``.js`` file as an ES module; Bun does not
    (project / ".opencode" / "package.json").write_text('{"type": "module"}\n', encoding="utf-8")
    plugin = plugins / "swarmmem.js"
    plugin.write_text(render(command), encoding="utf-8")
    return project, plugin


def fake_command(tmp_path: Path) -> list[str]:
    script = tmp_path / "fake_swarmmem.py"
    script.write_text(FAKE_SWARMMEM, encoding="utf-8")
    return [sys.executable, "-S", str(script)]


def run_harness(
    node: str,
    *,
    plugin: Path,
    project: Path,
    log: Path,
    mode: str,
    timeout_ms: int | None = None,
    stop_wait_ms: int = 10_000,
) -> dict[str, Any]:
    config = {
        "plugin": str(plugin),
        "log": str(log),
        "project": str(project),
        "stopWaitMs": stop_wait_ms,
    }
    env = {**os.environ, "FAKE_SWARMMEM_LOG": str(log), "FAKE_SWARMMEM_MODE": mode}
    env.pop("SWARMMEM_HOOK_TIMEOUT_MS", None)
    if timeout_ms is not None:
        env["SWARMMEM_HOOK_TIMEOUT_MS"] = str(timeout_ms)
    done = subprocess.run(
        [node, str(HARNESS), json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        check=False,
    )
    assert done.returncode == 0, f"harness exited {done.returncode}: {done.stderr}\n{done.stdout}"
    result: dict[str, Any] = json.loads(done.stdout)
    assert result["errors"] == [], "\n".join(result["errors"])
    assert result["exports"] == ["default"]
    assert result["shape"] == {
        "type": "object",
        "id": "swarmmem",
        "server": "function",
        "setup": "function",
    }
    return result


def read_log(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    entries = []
    for line in log.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record["input"] = json.loads(record["stdin"])
        entries.append(record)
    return entries


def session_calls(entries: list[dict[str, Any]], session_id: str) -> list[dict[str, Any]]:
    return [entry for entry in entries if entry["input"].get("session_id") == session_id]


def check_call(call: dict[str, Any], event: str, project: Path, extra: dict[str, str]) -> None:
    """One logged call: argv, working folder and exactly the expected stdin keys and values."""
    assert call["argv"] == ["hook", "opencode", event]
    assert Path(call["cwd"]).resolve() == project.resolve()
    assert set(call["input"]) == COMMON_KEYS | set(extra), call["input"]
    assert call["input"]["hook_event_name"] == event
    assert call["input"]["cwd"] == str(project)
    for key, value in extra.items():
        assert call["input"][key] == value, (key, call["input"])


# every session: session-start and the first prompt (concurrent), the second prompt,
# pre-compact, session-start again, the third prompt, stop; nothing else
SESSION_EVENTS = [START, PROMPT, PROMPT, PRE_COMPACT, START, PROMPT, STOP]


def events_of(calls: list[dict[str, Any]]) -> list[str]:
    return [call["argv"][-1] for call in calls]


def same_events(logged: list[str], expected: list[str]) -> bool:
    """``logged`` is ``expected``, up to the order of the first two (concurrent) commands."""
    return sorted(logged[:2]) == sorted(expected[:2]) and logged[2:] == expected[2:]


def check_session_log(
    calls: list[dict[str, Any]],
    project: Path,
    *,
    prompts: list[str],
    pre_compact: str,
    stop: str,
) -> None:
    """Each command ran once per event, in order, with exactly the expected stdin."""
    events = events_of(calls)
    assert same_events(events, SESSION_EVENTS), events
    by_event = {call["argv"][-1]: call for call in calls[:2]}
    check_call(by_event[START], START, project, {"source": "startup"})
    check_call(by_event[PROMPT], PROMPT, project, {"prompt": prompts[0]})
    check_call(calls[2], PROMPT, project, {"prompt": prompts[1]})
    check_call(calls[3], PRE_COMPACT, project, {"last_assistant_message": pre_compact})
    check_call(calls[4], START, project, {"source": "compact"})
    check_call(calls[5], PROMPT, project, {"prompt": prompts[2]})
    check_call(calls[6], STOP, project, {"last_assistant_message": stop})


def check_systems(
    systems: dict[str, list[Any]],
    logged_at: dict[str, list[str]],
    *,
    base: str,
    prompts: list[str],
    wrap: Any,
) -> None:
    """What each primary call got, and which commands had run by then (v1 and v2 alike)."""
    startup, compact = "CTX-session-start:startup", "CTX-session-start:compact"
    first, second = (f"CTX-user-prompt-submit:{prompt}" for prompt in prompts[:2])
    expected = {
        "first": [base, startup, first],
        # a later call of the same turn gets the same texts again, without a new command run
        "second": [base, startup, first],
        # a new user prompt replaces the prompt context
        "afterPrompt2": [base, startup, second],
        # after the compaction the start context is the compact one; the prompt one stays
        "afterCompact": [base, compact, second],
        "afterCompact2": [base, compact, second],
        # the third prompt's hook answered nothing: the prompt context is cleared
        "afterPrompt3": [base, compact],
        "child": [base],
    }
    for name, texts in expected.items():
        assert systems[name] == wrap(texts), name
    ran = {
        "first": [START, PROMPT],
        "second": [START, PROMPT],
        "afterPrompt2": [START, PROMPT, PROMPT],
        "afterCompact": [START, PROMPT, PROMPT, PRE_COMPACT, START],
        "afterCompact2": [START, PROMPT, PROMPT, PRE_COMPACT, START],
        "afterPrompt3": [START, PROMPT, PROMPT, PRE_COMPACT, START, PROMPT],
    }
    for name, events in ran.items():
        assert same_events(logged_at[name], events), (name, logged_at[name])


def test_template_has_one_placeholder_and_one_default_export() -> None:
    template = TEMPLATE.read_text(encoding="utf-8")
    assert template.count(PLACEHOLDER_LINE) == 1
    assert template.count(PLACEHOLDER) == 1
    exports = re.findall(r"^export\s+(.*)$", template, flags=re.MULTILINE)
    assert exports == ["default { id: PLUGIN_ID, server, setup };"]
    assert not re.search(r"^\s*(import|export)\s.*from\s+[\"'](?!node:)", template, re.MULTILINE)


def test_plugin_feeds_hook_context_into_opencode(node: str, tmp_path: Path) -> None:
    project, plugin = install(tmp_path, fake_command(tmp_path))
    log = tmp_path / "calls.jsonl"
    result = run_harness(node, plugin=plugin, project=project, log=log, mode="ok")
    base, prompts, summarizer = result["base"], result["prompts"], result["summarizer"]
    v1, v2 = result["v1"], result["v2"]

    def text_blocks(texts: list[str]) -> list[dict[str, str]]:
        return [{"type": "text", "text": text} for text in texts]

    assert v1["hookNames"] == [
        "chat.message",
        "event",
        "experimental.chat.system.transform",
        "experimental.session.compacting",
    ]
    check_systems(v1["systems"], v1["loggedAt"], base=base, prompts=prompts, wrap=list)
    assert v1["systems"]["title"] == [
        "You are a title generator. You output ONLY a thread title. Nothing else."
    ]
    assert v1["systems"]["noSession"] == [base]
    assert v1["systems"]["compactionCall"] == [summarizer]
    assert v1["compactContext"] == ["CTX-pre-compact"]
    assert v1["stopLogged"] is True
    assert {"path": {"id": V1}} in v1["messageCalls"]

    assert v2["hookNames"] == ["compaction", "context", "prompt"]
    assert v2["cleanupType"] == "function"
    check_systems(v2["systems"], v2["loggedAt"], base=base, prompts=prompts, wrap=text_blocks)
    assert v2["systems"]["title"] == text_blocks([base])
    assert v2["systems"]["compactionCall"] == text_blocks([base])
    assert v2["compactionSystem"] == text_blocks(["Summarize the conversation.", "CTX-pre-compact"])
    assert v2["stopLogged"] is True
    assert v2["subscribeArgs"] == [[["signal"]]]
    assert v2["streamClosed"] is True
    assert sorted(v2["disposed"]) == ["compaction", "context", "prompt"]
    assert v2["setupWithoutContext"] == "undefined"

    entries = read_log(log)
    check_session_log(
        session_calls(entries, V1),
        project,
        prompts=prompts,
        pre_compact="Run pytest -q.",
        stop="Run pytest -q.",
    )
    check_session_log(
        session_calls(entries, V2),
        project,
        prompts=prompts,
        pre_compact="Use pytest.",
        stop="All\ntests pass.",
    )
    assert session_calls(entries, V1_CHILD) == []
    assert session_calls(entries, V2_CHILD) == []
    # v1, the reply heard through message events: the parts of the assistant's message as
    # last streamed, no round trip to the server
    assert v1["streamStopLogged"] is True
    assert {"path": {"id": "ses_v1_stream"}} not in v1["messageCalls"]
    streamed = session_calls(entries, "ses_v1_stream")
    assert sorted(events_of(streamed)) == sorted([START, PROMPT, STOP])
    (stop,) = [call for call in streamed if call["argv"][-1] == STOP]
    check_call(stop, STOP, project, {"last_assistant_message": "Lint with ruff.\nThen test."})
    assert len(entries) == 2 * len(SESSION_EVENTS) + 3


@pytest.mark.parametrize("mode", ["garbage", "exit1", "sleep", "missing", "unrendered"])
def test_a_failing_command_adds_nothing_and_throws_nothing(
    node: str, tmp_path: Path, mode: str
) -> None:
    if mode == "missing":
        command: list[str] | None = [str(tmp_path / "no-such-swarmmem")]
    elif mode == "unrendered":
        command = None
    else:
        command = fake_command(tmp_path)
    project, plugin = install(tmp_path, command)
    log = tmp_path / "calls.jsonl"
    quiet = mode in ("missing", "unrendered")
    result = run_harness(
        node,
        plugin=plugin,
        project=project,
        log=log,
        mode=mode,
        timeout_ms=400 if mode == "sleep" else None,
        stop_wait_ms=200 if quiet else 5_000,
    )
    base = result["base"]
    v1, v2 = result["v1"], result["v2"]
    assert v1["systems"]["compactionCall"] == [result["summarizer"]]
    for name, system in v1["systems"].items():
        if name not in ("title", "compactionCall"):
            assert system == [base], name
    for name, system in v2["systems"].items():
        assert system == [{"type": "text", "text": base}], name
    assert v1["compactContext"] == []
    assert v2["compactionSystem"] == [{"type": "text", "text": "Summarize the conversation."}]
    entries = read_log(log)
    if quiet:
        assert entries == []
    elif mode != "sleep":
        # the command ran once for every event; only its answers were dropped
        for session_id in (V1, V2):
            events = events_of(session_calls(entries, session_id))
            assert same_events(events, SESSION_EVENTS), (session_id, events)

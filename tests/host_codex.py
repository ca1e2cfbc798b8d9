"""Run the real Codex CLI (``codex exec``) against a loopback fake of the OpenAI Responses API.

The parts, like ``tests/hosts.py`` for Claude Code (whose generic pieces this reuses):

* ``ensure_codex_cli()`` installs ``@openai/codex`` at ``CODEX_VERSION`` with npm into
  ``<parent>/codex-<version>`` beside the Claude Code cache (``$SWARMMEM_TEST_CACHE`` or
  ``~/.cache/swarmmem-test-hosts``), once, under an ``fcntl`` lock, and returns the native
  ``codex`` executable (``hosts.ensure_npm_cli``). A test gets it through
  ``hosts.require_cli("Codex CLI", ensure_codex_cli)``, which skips when that fails, or fails
  when ``SWARMMEM_HOSTS_REQUIRED=1``.
* ``FakeResponses`` is ``hosts.FakeAnthropic``'s threaded loopback server answering
  ``POST /v1/responses`` instead (Responses API SSE events) and recording every request. A
  ``reply`` returns the assistant's text, or a list of items that may hold
  ``function_call(...)`` items to make the agent run a tool.
* ``prepare_home()`` writes ``$CODEX_HOME/config.toml`` (``CODEX_HOME`` is ``HOME/.codex``)
  with the fake as the model provider ``fake``; ``trust_project()`` gives the trust a person
  gives, through ``codex app-server``; ``run_codex()`` runs ``codex exec <prompt>`` in a
  project with a clean environment and that throw-away ``HOME``.

What Codex 0.171.0 (Linux x64, npm 11) was seen to need and do
--------------------------------------------------------------

* Install: ``@openai/codex`` is a small node wrapper (``bin/codex.js``) whose native (Rust,
  musl) executable comes in an optional dependency aliased to
  ``@openai/codex-<os>-<arch>`` (``npm:@openai/codex@<version>-<os>-<arch>``, about 420 MB),
  at ``vendor/<target triple>/bin/codex``; the wrapper only hands over to it (``execve``).
  The install took about 5 s. ``find_executable()`` prefers the native file (no node
  start) and falls back to the wrapper's ``.bin/codex``.
* Endpoint: a custom provider in ``config.toml`` (``model_provider = "fake"``,
  ``[model_providers.fake]`` with ``base_url`` ``http://127.0.0.1:PORT/v1``,
  ``env_key = "FAKE_API_KEY"``, ``wire_api = "responses"``). ``codex exec`` then sends one
  streamed ``POST /v1/responses`` per model turn and nothing else (no model list, no login).
  The body's ``input`` holds the developer messages (Codex's prompt, the skills list), a user
  message with ``AGENTS.md``, then the prompt as a user message; a ``function_call_output``
  item follows each tool call. The answer is the SSE events ``response.created``,
  ``response.output_item.added``, ``response.output_text.delta``,
  ``response.output_item.done`` and ``response.completed``. ``prepare_home()`` also turns off
  the update check, analytics, feedback and OpenTelemetry export (all accepted by
  ``--strict-config``), and the provider's retries.
* Trust, two levels. In a project ``config.toml`` does not trust, ``codex exec`` loads no
  project configuration ("Untrusted project-local configuration is disabled. Run `codex exec
  --trust` ...") and runs none of ``.codex/hooks.json``. ``codex exec --trust`` (or the TUI's
  question) writes ``[projects."<root>"] trust_level = "trusted"``. Even then each project
  hook runs only once it is trusted itself, else it is skipped without a word: the TUI's
  ``/hooks`` view, or the ``codex app-server`` JSON-RPC calls behind it, ``hooks/list`` (each
  hook's ``key``, ``currentHash`` and ``trustStatus``: ``untrusted``, ``trusted`` or
  ``modified`` when its command changed) and ``config/batchWrite`` of
  ``hooks.state."<key>".trusted_hash = <currentHash>``, stored in ``config.toml`` as
  ``[hooks.state."<root>/.codex/hooks.json:session_start:0:0"] trusted_hash = "sha256:..."``.
  ``trust_project()`` drives that app-server (``initialize`` with a ``clientInfo``, the
  ``initialized`` notification, then the calls; one JSON object a line on stdin/stdout, no
  ``jsonrpc`` field needed) and writes the project's trust the same way.
  ``--dangerously-bypass-hook-trust`` is not used.
* Hooks: ``hooks.json`` in Claude Code's shape. SessionStart, UserPromptSubmit, Stop and
  SessionEnd each ran once for a one-prompt run (SessionEnd with ``reason: "other"``).
  Codex clamps a SessionEnd hook's timeout to 3 s and says "warning: clamping SessionEnd hook
  timeout to 3s in <path>" on stderr at every run when the file asks for more. A hook's
  ``additionalContext`` becomes a ``developer`` message in ``input``: SessionStart's before
  the prompt's user message, UserPromptSubmit's right after it. Stop gets the reply as
  ``last_assistant_message`` and ``transcript_path`` (``$CODEX_HOME/sessions/.../rollout-
  <date>-<session id>.jsonl``); its ``{"decision": "block", "reason": ...}`` goes on with the
  reason as the next user message in the same turn, and the next Stop has
  ``stop_hook_active: true``.
* Output: stdout is the last reply; stderr has the banner (``session id: <uuid>``), the
  prompt, ``hook: <Event>`` / ``hook: <Event> Completed`` (or ``Blocked``) lines and
  warnings. A hook's ``systemMessage`` (swarmmem's "filed 1 for review") shows up nowhere
  in ``codex exec``: not on stderr, not in the ``--json`` events, not in the rollout file.
  With ``HOME`` under ``/tmp`` it warns that it will not create its PATH helper aliases
  there; it warns that it uses its bundled bubblewrap and that ``fake-model`` has no
  metadata. All harmless.
* A one-turn run took about 0.5-1 s, hooks included; ``trust_project()`` about 0.4 s.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import queue
import re
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import hosts

CODEX_VERSION = "0.171.0"
CODEX_PACKAGE = f"@openai/codex@{CODEX_VERSION}"
RESPONSES_PATH = "/v1/responses"
PROVIDER = "fake"
MODEL = "fake-model"
API_KEY_ENV = "FAKE_API_KEY"
DUMMY_API_KEY = "dummy"
SESSION_END_CLAMP = "clamping SessionEnd hook timeout"
"""What Codex warns on stderr when ``hooks.json`` gives SessionEnd more than 3 s."""
TRIPLES = {
    ("linux", "x64"): "x86_64-unknown-linux-musl",
    ("linux", "arm64"): "aarch64-unknown-linux-musl",
    ("darwin", "x64"): "x86_64-apple-darwin",
    ("darwin", "arm64"): "aarch64-apple-darwin",
}
"""(os, npm arch) -> the target triple of the native build (as ``bin/codex.js`` maps it)."""


# --- installing the CLI ----------------------------------------------------------------------


def cache_dir() -> Path:
    """Return ``<parent>/codex-<version>``, beside Claude Code's (``hosts.cache_root()``)."""
    return hosts.cache_root() / f"codex-{CODEX_VERSION}"


def executable_candidates(target: Path) -> list[Path]:
    """The places the codex executable may be under ``target/node_modules``, best first: the
    native build of this machine, then the node wrapper."""
    modules = target / "node_modules" / "@openai"
    system = platform.system().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower(), platform.machine().lower()
    )
    triple = TRIPLES.get((system, arch))
    native = []
    if triple is not None:
        for package in (modules / f"codex-{system}-{arch}", modules / "codex"):
            native.append(package / "vendor" / triple / "bin" / "codex")
    wrapper = [target / "node_modules" / ".bin" / "codex"]
    return [path for path in [*native, *wrapper] if path.is_file()]


def find_executable(target: Path) -> Path | None:
    """Return the first candidate that runs and reports ``CODEX_VERSION``, else ``None``."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8"}
    env["HOME"] = os.environ.get("HOME", "/")
    return hosts.first_reporting(
        executable_candidates(target),
        lambda version: version.split()[-1:] == [CODEX_VERSION],
        env,
    )


def ensure_codex_cli() -> Path:
    """Install the pinned Codex CLI into ``cache_dir()`` if needed and return its executable
    (see ``hosts.ensure_npm_cli``; node and npm are needed only to install it)."""
    return hosts.ensure_npm_cli(CODEX_PACKAGE, cache_dir(), find_executable)


# --- reading request bodies ------------------------------------------------------------------


def item_text(item: dict[str, Any]) -> str:
    """The text of one ``message`` item: a string ``content`` or its text parts, joined."""
    return hosts.joined_text(item.get("content"))


def messages(body: dict[str, Any]) -> list[tuple[str, str]]:
    """``(role, text)`` of each ``message`` item of the request's ``input``, in order."""
    found: list[tuple[str, str]] = []
    for item in body.get("input") or ():
        if isinstance(item, dict) and item.get("type", "message") == "message":
            found.append((str(item.get("role")), item_text(item)))
    return found


def role_texts(body: dict[str, Any], role: str) -> list[str]:
    """The texts of the ``input`` messages with ``role``, in order."""
    return [text for who, text in messages(body) if who == role]


def function_outputs(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``function_call_output`` items of the request's ``input`` (a tool call's result)."""
    return [
        item
        for item in body.get("input") or ()
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]


# --- the fake API ----------------------------------------------------------------------------


Reply = Callable[[dict[str, Any]], str | list[dict[str, Any]]]


def function_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A ``function_call`` output item, for a ``reply`` that makes the agent call a tool."""
    return {
        "type": "function_call",
        "id": f"fc_fake_{uuid.uuid4().hex[:20]}",
        "call_id": f"call_fake_{uuid.uuid4().hex[:20]}",
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


def message_item(text: str) -> dict[str, Any]:
    """An assistant ``message`` output item holding ``text``."""
    return {
        "type": "message",
        "id": f"msg_fake_{uuid.uuid4().hex[:20]}",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def output_items(reply: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Turn what a ``reply`` returned into output items (a string is one message item)."""
    if isinstance(reply, str):
        return [message_item(reply)]
    items = [dict(item) for item in reply]
    if not items or any(item.get("type") not in ("message", "function_call") for item in items):
        raise ValueError(f"the fake answers message and function_call items only, not {reply!r}")
    return items


def _default_reply(body: dict[str, Any]) -> str:
    return "ok"


class FakeResponses(hosts.FakeOpenAIStyle):
    """A loopback stand-in for the OpenAI Responses API that records what it is sent.

    Use it as a context manager; ``base_url`` (``<url>/v1``) is the provider's ``base_url``.
    ``reply(body)`` answers each ``POST /v1/responses``: a string, or a list of items (see
    ``function_call``); if it raises, the request gets a 400 and the exception goes to
    ``errors``. ``requests`` holds every request as ``hosts.FakeAnthropic`` records it.
    """

    endpoint = RESPONSES_PATH

    def __init__(self, reply: Reply = _default_reply, *, model: str = MODEL) -> None:
        super().__init__(reply, model=model)

    def response_requests(self) -> list[dict[str, Any]]:
        """Return the bodies of the ``POST /v1/responses`` requests, in order."""
        return self.endpoint_requests()

    def _answer(self, handler: Any, body: dict[str, Any]) -> None:
        """Answer with ``reply(body)``: Responses API SSE events when the request streams,
        else the response object as JSON."""
        try:
            items = output_items(self.reply(body))
        except Exception as exc:
            self._reply_failed(handler, exc)
            return
        input_tokens = max(1, len(json.dumps(body)) // 4)
        output_tokens = max(1, len(json.dumps(items)) // 4)
        response: dict[str, Any] = {
            "id": f"resp_fake_{uuid.uuid4().hex[:24]}",
            "object": "response",
            "created_at": int(time.time()),
            "status": "in_progress",
            "model": body.get("model") or self.model,
            "output": [],
        }
        usage = {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens,
        }
        done = {**response, "status": "completed", "output": items, "usage": usage}
        if not body.get("stream"):
            hosts._send_json(handler, 200, done)
            return
        events: list[dict[str, Any]] = [{"type": "response.created", "response": response}]
        for index, item in enumerate(items):
            if item["type"] == "message":
                opening = {**item, "status": "in_progress", "content": []}
            else:
                opening = {**item, "status": "in_progress", "arguments": ""}
            events.append(
                {"type": "response.output_item.added", "output_index": index, "item": opening}
            )
            if item["type"] == "message":
                events.append(
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "content_index": 0,
                        "delta": item_text(item),
                    }
                )
            events.append(
                {"type": "response.output_item.done", "output_index": index, "item": item}
            )
        events.append({"type": "response.completed", "response": done})
        stream = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
        hosts._send(handler, 200, "text/event-stream", stream.encode())


# --- the home, its trust records and running the CLI -----------------------------------------


def codex_home(home: Path) -> Path:
    """``CODEX_HOME``: ``home/.codex``."""
    return home / ".codex"


def user_config(base_url: str) -> str:
    """The ``config.toml`` that makes ``fake-model`` at ``base_url`` the only model and turns
    off what would reach out (the update check, analytics, feedback, OpenTelemetry)."""
    return (
        f"model = {json.dumps(MODEL)}\n"
        f"model_provider = {json.dumps(PROVIDER)}\n"
        "check_for_update_on_startup = false\n"
        "\n"
        f"[model_providers.{PROVIDER}]\n"
        'name = "fake loopback"\n'
        f"base_url = {json.dumps(base_url)}\n"
        f"env_key = {json.dumps(API_KEY_ENV)}\n"
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
        "\n"
        "[analytics]\nenabled = false\n\n"
        "[feedback]\nenabled = false\n\n"
        '[otel]\nexporter = "none"\ntrace_exporter = "none"\nmetrics_exporter = "none"\n'
    )


def prepare_home(home: Path, base_url: str) -> Path:
    """Write ``home/.codex/config.toml`` (``user_config``) afresh and return that file.

    It holds Codex's trust records too, so call this before ``trust_project``.
    """
    config = codex_home(home) / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(user_config(base_url), encoding="utf-8")
    return config


def codex_env(home: Path, extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The clean environment the CLI gets: no real API keys, ``CODEX_HOME`` in ``home``."""
    variables = {
        "CODEX_HOME": str(codex_home(home)),
        "TERM": "dumb",
        "NO_COLOR": "1",
        API_KEY_ENV: DUMMY_API_KEY,
    }
    return hosts.host_env(home, variables, extra_env)


class AppServer:
    """``codex app-server`` over stdio: ``request(method, params)`` returns the result.

    A context manager; it sends ``initialize`` (with a ``clientInfo``) and ``initialized``
    first. Server notifications are kept in ``notifications``. The server runs in its own
    process group and is killed when it does not exit within ``timeout`` of stdin closing.
    """

    def __init__(self, cli: Path, home: Path, cwd: Path, *, timeout: float = 30) -> None:
        self.timeout = timeout
        self.notifications: list[dict[str, Any]] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._next_id = 0
        self._process = hosts.start_in_group(
            [str(cli), "app-server"],
            cwd=cwd,
            env=codex_env(home),
            stdin=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._reader = threading.Thread(target=self._read, name="codex-app-server", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _send(self, message: dict[str, Any]) -> None:
        assert self._process.stdin is not None
        self._process.stdin.write(json.dumps(message) + "\n")
        self._process.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send one request and return its ``result`` (``RuntimeError`` on an error answer,
        ``TimeoutError`` after ``timeout`` seconds)."""
        self._next_id += 1
        ident = self._next_id
        self._send({"id": ident, "method": method, "params": params or {}})
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"codex app-server did not answer {method}") from None
            if line is None:
                raise RuntimeError(f"codex app-server exited before answering {method}")
            with contextlib.suppress(ValueError):
                message = json.loads(line)
                if not isinstance(message, dict):
                    continue
                if message.get("id") == ident and "method" not in message:
                    if "error" in message:
                        raise RuntimeError(f"{method} failed: {message['error']}")
                    return message.get("result")
                if "method" in message:
                    self.notifications.append(message)

    def __enter__(self) -> AppServer:
        try:
            self.request("initialize", {"clientInfo": {"name": "swarmmem-tests", "version": "0"}})
            self._send({"method": "initialized"})
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        """Close stdin and wait for the server to exit (kill its group after ``timeout``)."""
        with contextlib.suppress(OSError):
            if self._process.stdin is not None:
                self._process.stdin.close()
        try:
            self._process.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            hosts.kill_group(self._process)
            self._process.wait()
        self._reader.join(timeout=self.timeout)
        if self._process.stdout is not None:
            self._process.stdout.close()

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def toml_key(text: str) -> str:
    """``text`` as a quoted key of a dotted ``keyPath`` (JSON escapes are TOML's)."""
    return json.dumps(text)


def list_hooks(server: AppServer, project: Path) -> dict[str, Any]:
    """``hooks/list`` for ``project``: its one entry (``hooks``, ``warnings``, ``errors``)."""
    result = server.request("hooks/list", {"cwds": [str(project)]})
    (entry,) = result["data"]
    assert isinstance(entry, dict), entry
    return entry


def trust_project(cli: Path, home: Path, project: Path) -> dict[str, Any]:
    """Trust ``project`` and each of its hooks, the way the person does, through Codex's own
    trust records (written by ``codex app-server``, the service behind the TUI's ``/hooks``).

    ``config/batchWrite`` sets ``projects."<root>".trust_level = "trusted"`` (what ``codex exec
    --trust`` writes), then ``hooks/list`` names the project's hooks and a second
    ``config/batchWrite`` sets ``hooks.state."<key>".trusted_hash`` to each untrusted or
    modified hook's ``currentHash``. Returns the ``hooks/list`` entry listed afterwards.
    """
    root = str(project.resolve())
    with AppServer(cli, home, project) as server:
        trust = {
            "keyPath": f"projects.{toml_key(root)}.trust_level",
            "value": "trusted",
            "mergeStrategy": "upsert",
        }
        server.request("config/batchWrite", {"edits": [trust]})
        entry = list_hooks(server, project)
        edits = [
            {
                "keyPath": f"hooks.state.{toml_key(hook['key'])}.trusted_hash",
                "value": hook["currentHash"],
                "mergeStrategy": "upsert",
            }
            for hook in entry["hooks"]
            if hook.get("source") == "project" and hook.get("trustStatus") != "trusted"
        ]
        if edits:
            server.request("config/batchWrite", {"edits": edits})
        return list_hooks(server, project)


def session_id(stderr: str) -> str | None:
    """The session id ``codex exec`` prints in its banner (``session id: <uuid>``)."""
    match = re.search(r"^session id: (\S+)$", stderr, re.M)
    return match.group(1) if match else None


def run_codex(
    cli: Path, prompt: str, at: hosts.Launch, *, extra_args: Sequence[str] = ()
) -> subprocess.CompletedProcess[str]:
    """Run ``codex exec <prompt>`` in ``at.cwd`` with ``at.home`` as ``HOME``; return the result.

    ``prepare_home`` must have written the config (and ``trust_project`` the trust, if any).
    The environment is ``codex_env(home, extra_env)``; ``extra_args`` go before the prompt.
    stdin is empty and stdout/stderr are captured as text. Raises
    ``subprocess.TimeoutExpired`` after ``timeout`` seconds; the CLI's process group (its
    hooks and tools included) is killed then.
    """
    command = [str(cli), "exec", "--color", "never", *extra_args, "--", prompt]
    return at.run(command, codex_env(at.home, at.extra_env))

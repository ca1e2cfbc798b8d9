"""Run the real Claude Code CLI headless against a loopback fake of the Anthropic Messages API.

The integration tests that check swarmmem inside a real agent host use three parts:

* ``ensure_claude_cli()`` installs ``@anthropic-ai/claude-code`` at ``CLAUDE_CODE_VERSION`` with
  npm into a cache folder (once; an ``fcntl`` lock keeps parallel test processes from installing
  at the same time) and returns the ``claude`` binary. ``require_claude_cli()`` wraps it for a
  test: it skips when node/npm are missing or too old or the install fails, and fails instead
  when ``SWARMMEM_HOSTS_REQUIRED=1`` (CI sets that). Both are the generic ``ensure_npm_cli()``
  and ``require_cli()``, which the other hosts' modules (``host_codex``, ``host_gemini``,
  ``host_opencode``) use too.
* ``FakeAnthropic`` is a threaded HTTP server on 127.0.0.1 that answers ``POST /v1/messages``
  (SSE stream or plain JSON) and ``POST /v1/messages/count_tokens`` and records every request.
  ``system_text()``, ``system_turn_texts()`` and ``user_texts()`` pull out what the model was
  sent; a ``reply`` may return ``tool_use(...)`` blocks to make the agent call a tool.
* ``run_claude()`` runs ``claude -p <prompt>`` in a project folder with a clean environment, a
  throw-away ``HOME`` and ``ANTHROPIC_BASE_URL`` pointing at the fake.

What the real CLI (2.1.328, Linux, node 20) was seen to need and do
-------------------------------------------------------------------

* Trust and onboarding: print mode (``-p``) shows no workspace-trust or onboarding dialog. With
  an empty ``HOME`` the project's ``.claude/settings.json`` hooks already run. ``prepare_home()``
  still writes ``hasCompletedOnboarding`` and ``projects[<cwd>].hasTrustDialogAccepted`` into
  ``$HOME/.claude.json``, so the same home also suits an interactive run. It keeps the rest of
  that file, because the CLI adds its own keys there (``userID``, ``firstStartTime``, ...).
* MCP: the servers in ``<cwd>/.mcp.json`` start in print mode without any approval. The CLI
  approves project servers itself when it runs non-interactively, so you don't need
  ``enableAllProjectMcpServers``, ``enabledMcpjsonServers`` or ``--mcp-config``. Their tools are
  *deferred*: they are listed by name (``mcp__<server>__<tool>``) in a system turn under
  "deferred tools ... via ToolSearch" and are not in ``tools``, unless the environment has
  ``ENABLE_TOOL_SEARCH=false``. A deferred tool can still be called directly. Calling one needs
  permission: pass ``allowed_tools=["mcp__<server>"]`` (``--allowedTools``); without it the
  tool result is the error "Claude requested permissions to use ..., but you haven't granted
  it yet." and the run still exits 0.
* Traffic: with ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` and ``DISABLE_TELEMETRY=1`` the
  CLI talks only to ``ANTHROPIC_BASE_URL``. It sends one streamed
  ``POST /v1/messages?beta=true`` per model turn (model ``claude-opus-5-5``, header
  ``x-claude-code-session-id``). It made no title, summary, quota or ``count_tokens`` calls,
  even with non-essential traffic left on. The fake answers such calls anyway.
* Where hook context lands: not in the top-level ``system`` and not in the user turn. Each
  prompt is followed by a ``{"role": "system"}`` turn in ``messages``. For the first prompt
  that turn holds "SessionStart hook additional context: <text>", then the environment
  section, the deferred tool and skill lists, and "UserPromptSubmit hook additional context:
  <text>". After ``--resume`` the new prompt gets a short system turn with the resume
  SessionStart context and the new UserPromptSubmit context. So ``system_text()`` joins the
  top-level ``system`` with those system turns.
* A run with a one-turn reply takes about 0.5-1 s.

Recognising the main conversation request: ``is_main_request(body)`` is true when the body
has a non-empty ``tools`` list. Every agent turn of the CLI carries its tool list, even with
no MCP server. 2.1.328 made no side calls here. Calls of other kinds, such as title or topic
generation, quota probes and compaction summaries, have no agent tools to offer, so they are
left out. "Claude Code" in the system prompt would be a weak rule: the 2.1.328 print-mode
prompt introduces itself as "a Claude agent, built on Anthropic's Claude Agent SDK", and the
words "Claude Code" appear only further down.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import uuid
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import pytest

CLAUDE_CODE_VERSION = "2.1.328"
CLAUDE_CODE_PACKAGE = f"@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}"
ENV_CACHE = "SWARMMEM_TEST_CACHE"
ENV_REQUIRED = "SWARMMEM_HOSTS_REQUIRED"
MIN_NODE_MAJOR = 20
DUMMY_API_KEY = "sk-ant-test-dummy"
DEFAULT_MODEL = "claude-fake-1"
MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"


class HostUnavailable(RuntimeError):
    """The agent host cannot run on this machine; ``str(exc)`` says why."""


# --- installing a CLI with npm ---------------------------------------------------------------


def cache_root() -> Path:
    """Return the folder the pinned host CLIs are installed under, one subfolder each.

    That is ``$SWARMMEM_TEST_CACHE``, or ``~/.cache/swarmmem-test-hosts`` when it is unset.
    """
    parent = os.environ.get(ENV_CACHE)
    return Path(parent) if parent else Path.home() / ".cache" / "swarmmem-test-hosts"


def cache_dir() -> Path:
    """Return the folder the pinned Claude Code is installed into.

    That is ``<cache_root()>/claude-code-<version>``.
    """
    return cache_root() / f"claude-code-{CLAUDE_CODE_VERSION}"


def check_node(package: str, min_major: int | None = None) -> None:
    """Raise ``HostUnavailable`` unless node and npm are on PATH, and node's major version is
    at least ``min_major`` when one is given. ``package`` names what needs them."""
    node = shutil.which("node")
    if node is None:
        needs = f"{package} needs node >= {min_major}" if min_major else f"npm installs {package}"
        raise HostUnavailable(f"node is not on PATH ({needs})")
    if shutil.which("npm") is None:
        raise HostUnavailable(f"npm is not on PATH (it installs {package})")
    if min_major is None:
        return
    try:
        done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        raise HostUnavailable(f"node --version failed: {exc}") from exc
    version = done.stdout.strip()
    try:
        major = int(version.removeprefix("v").split(".", 1)[0])
    except ValueError:
        raise HostUnavailable(f"cannot read node's version from {version!r}") from None
    if major < min_major:
        raise HostUnavailable(f"node {version} is too old ({package} needs >= {min_major})")


def npm_install(package: str, target: Path, npm_args: Sequence[str] = ()) -> None:
    """Run ``npm install [npm_args] --prefix target package`` (raises ``HostUnavailable``)."""
    target.mkdir(parents=True, exist_ok=True)
    command = ["npm", "install", "--no-audit", "--no-fund", *npm_args, "--prefix", str(target)]
    try:
        done = subprocess.run(
            [*command, package],
            capture_output=True,
            text=True,
            timeout=900,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise HostUnavailable(f"npm install {package} failed: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-2000:]
        raise HostUnavailable(f"npm install {package} exited {done.returncode}: {tail}")


def cli_version(cli: Path, env: Mapping[str, str] | None = None) -> str | None:
    """Return what ``cli --version`` prints (stripped), or ``None`` when it cannot run or fails.

    It runs with ``env`` (default: this process's environment) and an empty stdin.
    """
    try:
        done = subprocess.run(
            [str(cli), "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def first_reporting(
    candidates: Iterable[Path],
    accepts: Callable[[str], bool],
    env: Mapping[str, str] | None = None,
) -> Path | None:
    """Return the first of ``candidates`` that is an executable file whose ``--version`` output
    ``accepts`` (run with ``env``, see ``cli_version``), else ``None``."""
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            version = cli_version(path, env)
            if version is not None and accepts(version):
                return path
    return None


def ensure_npm_cli(
    package: str,
    target: Path,
    find: Callable[[Path], Path | None],
    *,
    npm_args: Sequence[str] = (),
    node_major: int | None = None,
) -> Path:
    """Return the executable of the npm ``package`` (pinned: ``name@version``) in ``target``,
    installing it there first when it is missing.

    ``find(target)`` returns the executable once it has seen it run and report the pinned
    version, else ``None``. The install (``npm install --prefix target``, with ``npm_args``)
    runs only when ``find`` finds nothing, and the look and the install hold an exclusive
    ``fcntl`` lock on ``<target>.lock``, so concurrent test processes install it once.
    ``node_major`` is the node the CLI itself runs on, checked first even when it is
    installed; without it node and npm are needed only to install. Raises
    ``HostUnavailable`` when node/npm are missing or too old, the install fails, or nothing
    in ``target`` reports the version afterwards.
    """
    if node_major is not None:
        check_node(package, node_major)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            cli = find(target)
            if cli is None:
                check_node(package, node_major)
                npm_install(package, target, npm_args)
                cli = find(target)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    if cli is None:
        raise HostUnavailable(
            f"npm install {package} left no executable in {target} that reports its version"
        )
    return cli


def require_cli(title: str, ensure: Callable[[], Path]) -> Path:
    """Return ``ensure()``, or skip the calling test when it raises ``HostUnavailable``.

    ``title`` names the CLI in the reason. With ``SWARMMEM_HOSTS_REQUIRED=1`` in the
    environment the test fails instead of skipping.
    """
    try:
        return ensure()
    except HostUnavailable as exc:
        reason = f"{title} unavailable: {exc}"
        if os.environ.get(ENV_REQUIRED) == "1":
            pytest.fail(reason)
        pytest.skip(reason)


def find_claude(target: Path) -> Path | None:
    """Return ``target``'s ``node_modules/.bin/claude`` when it reports
    ``CLAUDE_CODE_VERSION``, else ``None``."""
    env = {**os.environ, "DISABLE_AUTOUPDATER": "1"}
    return first_reporting(
        [target / "node_modules" / ".bin" / "claude"],
        lambda version: version.startswith(CLAUDE_CODE_VERSION),
        env,
    )


def ensure_claude_cli() -> Path:
    """Install the pinned Claude Code CLI into ``cache_dir()`` if needed and return its
    ``claude`` (see ``ensure_npm_cli``; it runs on node >= ``MIN_NODE_MAJOR``)."""
    return ensure_npm_cli(CLAUDE_CODE_PACKAGE, cache_dir(), find_claude, node_major=MIN_NODE_MAJOR)


def require_claude_cli() -> Path:
    """Return the ``claude`` binary, or skip the calling test when it is unavailable.

    With ``SWARMMEM_HOSTS_REQUIRED=1`` in the environment the test fails instead of skipping.
    """
    return require_cli("Claude Code CLI", ensure_claude_cli)


# --- reading request bodies ------------------------------------------------------------------


def content_texts(content: Any) -> list[str]:
    """Return the texts of a message ``content``: a string or a list of content blocks.

    ``text`` blocks give their text, ``tool_result`` blocks the texts of their own
    ``content``; other blocks (images, tool calls, thinking) give nothing.
    """
    if isinstance(content, str):
        return [content]
    texts: list[str] = []
    if not isinstance(content, list):
        return texts
    for block in content:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, dict):
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") == "tool_result":
                texts.extend(content_texts(block.get("content")))
    return texts


def joined_text(content: Any, kinds: Container[str] | None = None) -> str:
    """Return a message ``content`` as one text: itself when it is a string, else the ``text``
    of its parts (only those whose ``type`` is in ``kinds``, when given) joined by newlines.

    The OpenAI-style APIs (Codex's Responses, opencode's chat completions) send messages so.
    """
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        part["text"]
        for part in content
        if isinstance(part, dict)
        and isinstance(part.get("text"), str)
        and (kinds is None or part.get("type") in kinds)
    )


def _role_texts(body: dict[str, Any], role: str) -> list[str]:
    """Return the texts of the ``messages`` turns with ``role``, in order."""
    texts: list[str] = []
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == role:
            texts.extend(content_texts(message.get("content")))
    return texts


def system_turn_texts(body: dict[str, Any]) -> list[str]:
    """Return the texts of the ``{"role": "system"}`` turns inside ``messages``, in order.

    Claude Code 2.1.328 sends the SessionStart and UserPromptSubmit hook context there (see
    the module docstring).
    """
    return _role_texts(body, "system")


def system_text(body: dict[str, Any]) -> str:
    """Return all system text of a request as one string, parts joined by blank lines.

    That is the top-level ``system`` (a string or a list of blocks), then every system turn
    inside ``messages``.
    """
    return "\n\n".join(content_texts(body.get("system", "")) + system_turn_texts(body))


def user_texts(body: dict[str, Any]) -> list[str]:
    """Return every text of the request's user turns, in order (tool results included)."""
    return _role_texts(body, "user")


def is_main_request(body: dict[str, Any]) -> bool:
    """Tell whether a ``/v1/messages`` body is an agent turn rather than a side call.

    The rule is that the body has a non-empty ``tools`` list. The module docstring says why.
    """
    return bool(body.get("tools"))


# --- the fake API ----------------------------------------------------------------------------


Reply = Callable[[dict[str, Any]], str | list[dict[str, Any]]]


def tool_use(
    name: str, tool_input: dict[str, Any], tool_use_id: str | None = None
) -> dict[str, Any]:
    """Return a ``tool_use`` content block, for a ``reply`` that makes the agent call a tool."""
    return {
        "type": "tool_use",
        "id": tool_use_id or f"toolu_fake_{uuid.uuid4().hex[:20]}",
        "name": name,
        "input": tool_input,
    }


def content_blocks(reply: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Turn what a ``reply`` returned into assistant content blocks (a string is one text block).

    Only ``text`` and ``tool_use`` blocks are allowed; raises ``ValueError`` otherwise.
    """
    if isinstance(reply, str):
        return [{"type": "text", "text": reply}]
    blocks = [dict(block) for block in reply]
    for block in blocks:
        if block.get("type") not in ("text", "tool_use"):
            raise ValueError(f"the fake API answers only text and tool_use blocks, not {block!r}")
    if not blocks:
        raise ValueError("a reply needs at least one content block")
    return blocks


def _default_reply(body: dict[str, Any]) -> str:
    """Answer every message request with ``ok``."""
    return "ok"


def _error(kind: str, message: str) -> dict[str, Any]:
    """Return an Anthropic API error body."""
    return {"type": "error", "error": {"type": kind, "message": message}}


class _Handler(BaseHTTPRequestHandler):
    """One connection to the fake API; ``FakeAnthropic`` does the work."""

    protocol_version = "HTTP/1.1"  # keep-alive, as the CLI's HTTP client expects
    timeout = 120  # a silent connection cannot keep a handler thread forever
    disable_nagle_algorithm = True  # headers and body go out as two writes
    server: _Server

    def do_POST(self) -> None:
        self.server.fake._handle(self)

    do_GET = do_PUT = do_PATCH = do_DELETE = do_POST

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""


class _Server(ThreadingHTTPServer):
    """A ``ThreadingHTTPServer`` that can cut its open keep-alive connections when closing."""

    daemon_threads = True

    def __init__(self, fake: FakeAnthropic) -> None:
        self.fake = fake
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def cut_connections(self) -> None:
        """Shut down the connections still open, so their handler threads end."""
        with self._open_lock:
            sockets = list(self._open)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


_Fake = TypeVar("_Fake", bound="FakeAnthropic")


class FakeAnthropic:
    """A loopback stand-in for the Anthropic Messages API that records what it is sent.

    Use it as a context manager. ``url`` is the base URL for ``ANTHROPIC_BASE_URL``.
    ``reply(body)`` gives the assistant's answer to each ``POST /v1/messages``: a string, or a
    list of ``text``/``tool_use`` blocks (see ``tool_use``). If ``reply`` raises, the request
    gets a 400 ``invalid_request_error``, which the CLI does not retry, and the exception goes
    to ``errors``. ``requests`` holds one dict per request (``method``, ``path``, ``query``,
    ``headers`` with lower-case names, ``body``: parsed JSON, or text if it is not JSON) in
    arrival order. The ``?beta=true`` query that the CLI sends does not change the answer.
    """

    def __init__(self, reply: Reply = _default_reply, *, model: str = DEFAULT_MODEL) -> None:
        self.reply = reply
        self.model = model
        self.errors: list[BaseException] = []
        self._requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # life cycle

    def start(self: _Fake) -> _Fake:
        """Start serving on an ephemeral port of 127.0.0.1."""
        if self._server is not None:
            raise RuntimeError("FakeAnthropic is already running")
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},  # how fast close() can stop it
            name="FakeAnthropic",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, cut the open connections and wait for every thread to end."""
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is None:
            return
        server.shutdown()
        server.cut_connections()
        server.server_close()  # joins the handler threads
        if thread is not None:
            thread.join()

    def __enter__(self: _Fake) -> _Fake:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def url(self) -> str:
        """Return the base URL, e.g. ``http://127.0.0.1:PORT``."""
        if self._server is None:
            raise RuntimeError("FakeAnthropic is not running")
        return f"http://127.0.0.1:{self._server.server_port}"

    # what was sent

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Return a snapshot of every request received so far."""
        with self._lock:
            return list(self._requests)

    def posted(self, path: str) -> list[dict[str, Any]]:
        """Return the JSON object bodies of the ``POST`` requests to ``path``, in order."""
        return [
            r["body"]
            for r in self.requests
            if r["method"] == "POST" and r["path"] == path and isinstance(r["body"], dict)
        ]

    def message_requests(self) -> list[dict[str, Any]]:
        """Return the bodies of the ``POST /v1/messages`` requests (not ``count_tokens``)."""
        return self.posted(MESSAGES_PATH)

    def main_requests(self) -> list[dict[str, Any]]:
        """Return the message bodies of the agent's own turns (see ``is_main_request``)."""
        return [body for body in self.message_requests() if is_main_request(body)]

    # answering

    def _handle(self, handler: _Handler) -> None:
        """Record one request and answer it (``_respond``)."""
        parts = urlsplit(handler.path)
        raw = _read_body(handler)
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
        record = {
            "method": handler.command,
            "path": parts.path,
            "query": parts.query,
            "headers": {name.lower(): value for name, value in handler.headers.items()},
            "body": body,
        }
        with self._lock:
            self._requests.append(record)
        self._respond(handler, record, raw)

    def _respond(self, handler: Any, request: dict[str, Any], raw: bytes) -> None:
        """Answer one recorded ``request`` (``raw``: its body as sent). The fakes of other
        APIs override this."""
        body, is_post = request["body"], request["method"] == "POST"
        if is_post and request["path"] == MESSAGES_PATH and isinstance(body, dict):
            self._answer_message(handler, body)
        elif is_post and request["path"] == COUNT_TOKENS_PATH:
            _send_json(handler, 200, {"input_tokens": max(1, len(raw) // 4)})
        else:
            message = f"the fake API has no {request['method']} {request['path']}"
            _send_json(handler, 404, _error("not_found_error", message))

    def _failed(self, handler: Any, exc: Exception, error: dict[str, Any]) -> None:
        """Keep ``exc`` (a ``reply`` that raised) in ``errors`` and answer 400 with ``error``."""
        with self._lock:
            self.errors.append(exc)
        _send_json(handler, 400, error)

    def _answer_message(self, handler: _Handler, body: dict[str, Any]) -> None:
        """Answer a Messages API request with ``reply(body)``, as SSE when it asks to stream."""
        try:
            blocks = content_blocks(self.reply(body))
        except Exception as exc:
            self._failed(handler, exc, _error("invalid_request_error", f"reply failed: {exc!r}"))
            return
        uses_tool = any(block["type"] == "tool_use" for block in blocks)
        stop_reason = "tool_use" if uses_tool else "end_turn"
        usage = {
            "input_tokens": max(1, len(json.dumps(body)) // 4),
            "output_tokens": max(1, len(json.dumps(blocks)) // 4),
        }
        message = {
            "id": f"msg_fake_{uuid.uuid4().hex[:24]}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or self.model,
            "content": blocks,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }
        if not body.get("stream"):
            _send_json(handler, 200, message)
            return
        opening = {
            **message,
            "content": [],
            "stop_reason": None,
            "usage": {**usage, "output_tokens": 1},
        }
        events: list[dict[str, Any]] = [{"type": "message_start", "message": opening}]
        for index, block in enumerate(blocks):
            if block["type"] == "tool_use":
                start = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            else:
                start = {**block, "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            events += [
                {"type": "content_block_start", "index": index, "content_block": start},
                {"type": "content_block_delta", "index": index, "delta": delta},
                {"type": "content_block_stop", "index": index},
            ]
        events += [
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
            {"type": "message_stop"},
        ]
        stream = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
        _send(handler, 200, "text/event-stream", stream.encode())


class FakeOpenAIStyle(FakeAnthropic):
    """The base of the fakes of an OpenAI-style API (``host_codex``'s Responses API,
    ``host_opencode``'s chat completions): ``POST <endpoint>`` is answered by ``_answer``,
    anything else gets a 404, both with OpenAI's error bodies. ``base_url`` is ``<url>/v1``.
    """

    endpoint = ""
    """The one path the fake answers, e.g. ``/v1/responses``."""

    @property
    def base_url(self) -> str:
        """Return the API's base URL, ``<url>/v1``."""
        return f"{self.url}/v1"

    def endpoint_requests(self) -> list[dict[str, Any]]:
        """Return the bodies of the ``POST <endpoint>`` requests, in order."""
        return self.posted(self.endpoint)

    def _respond(self, handler: Any, request: dict[str, Any], raw: bytes) -> None:
        body, path = request["body"], request["path"]
        if request["method"] == "POST" and path == self.endpoint and isinstance(body, dict):
            self._answer(handler, body)
        else:
            error = {"message": f"the fake API has no {request['method']} {path}"}
            _send_json(handler, 404, {"error": {**error, "type": "not_found"}})

    def _answer(self, handler: Any, body: dict[str, Any]) -> None:
        """Answer one ``POST <endpoint>`` with ``reply(body)`` (the subclass's API)."""
        raise NotImplementedError

    def _reply_failed(self, handler: Any, exc: Exception) -> None:
        """Answer 400 for a ``reply`` that raised ``exc`` (kept in ``errors``)."""
        error = {"message": f"reply failed: {exc!r}", "type": "invalid_request_error"}
        self._failed(handler, exc, {"error": error})


def _read_body(handler: _Handler) -> bytes:
    """Read a request body, sent with ``Content-Length`` or chunked."""
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        chunks: list[bytes] = []
        while True:
            size = int(handler.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while handler.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailer lines
                return b"".join(chunks)
            chunks.append(handler.rfile.read(size))
            handler.rfile.readline()  # the CRLF after each chunk
    length = int(handler.headers.get("Content-Length") or 0)
    return handler.rfile.read(length) if length else b""


def _send(handler: _Handler, status: int, content_type: str, payload: bytes) -> None:
    """Send one complete response with a ``Content-Length`` (the connection stays open)."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("request-id", f"req_fake_{uuid.uuid4().hex[:24]}")
    handler.send_header("Content-Length", str(len(payload)))
    handler.end_headers()
    handler.wfile.write(payload)


def _send_json(handler: _Handler, status: int, data: dict[str, Any]) -> None:
    """Send ``data`` as a JSON response."""
    _send(handler, status, "application/json", json.dumps(data).encode())


# --- running a CLI ---------------------------------------------------------------------------


def kill_group(process: subprocess.Popen[Any]) -> None:
    """Kill the process group that ``process`` leads (it started with ``start_new_session``)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def host_env(
    home: Path, variables: Mapping[str, str], extra_env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Return the clean environment a host CLI runs in: ``PATH`` (kept for the hooks),
    ``HOME`` = ``home`` and ``LANG``, then the host's own ``variables``, then ``extra_env``.
    Nothing else of this process's environment (API keys, ``XDG_*``) goes in."""
    base = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home), "LANG": "C.UTF-8"}
    return {**base, **variables, **(extra_env or {})}


def start_in_group(
    command: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin: int = subprocess.DEVNULL,
    stderr: int = subprocess.PIPE,
) -> subprocess.Popen[str]:
    """Start ``command`` in ``cwd`` as the leader of a new process group (see ``kill_group``),
    its stdout piped and everything in text."""
    return subprocess.Popen(
        list(command),
        cwd=cwd,
        env=dict(env),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        start_new_session=True,
    )


def run_in_group(
    command: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` in ``cwd`` in its own process group and return the result.

    stdin is empty and stdout/stderr are captured as text. Raises ``subprocess.TimeoutExpired``
    after ``timeout`` seconds; the whole group (the CLI, its MCP server and hook commands) is
    killed then.
    """
    with start_in_group(command, cwd=cwd, env=env) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(process)
            process.communicate()
            raise
    return subprocess.CompletedProcess(list(command), process.returncode, stdout, stderr)


# --- running Claude Code ---------------------------------------------------------------------


def prepare_home(home: Path, cwd: Path) -> None:
    """Make ``home/.claude.json`` say that onboarding is done and that ``cwd`` is trusted.

    Print mode does not need this (see the module docstring), but it makes the home fit other
    modes as well. Keys that are already in the file are kept.
    """
    home.mkdir(parents=True, exist_ok=True)
    config_path = home / ".claude.json"
    config: dict[str, Any] = {}
    if config_path.exists():
        with contextlib.suppress(ValueError):
            loaded = json.loads(config_path.read_text(encoding="utf-8"))
            if isinstance(loaded, dict):
                config = loaded
    config["hasCompletedOnboarding"] = True
    projects = config.setdefault("projects", {})
    for key in dict.fromkeys([str(cwd), str(cwd.resolve())]):
        projects.setdefault(key, {})["hasTrustDialogAccepted"] = True
    config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")


@dataclasses.dataclass(frozen=True)
class Launch:
    """Where and how a host CLI runs, the same for every host's ``run_*``: the project folder
    (``cwd``), the throw-away ``HOME``, the fake API's URL (Codex reads it from the config
    ``prepare_home`` writes instead), extra environment and the time limit in seconds."""

    cwd: Path
    home: Path
    base_url: str = ""
    extra_env: Mapping[str, str] | None = None
    timeout: float = 90

    def run(
        self, command: Sequence[str], env: Mapping[str, str]
    ) -> subprocess.CompletedProcess[str]:
        """``run_in_group(command)`` in ``cwd`` with ``env`` and this launch's time limit."""
        return run_in_group(command, cwd=self.cwd, env=env, timeout=self.timeout)


def claude_env(
    home: Path, base_url: str, extra_env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Return the clean environment ``run_claude`` gives the CLI (``PATH`` is kept for hooks)."""
    variables = {
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": DUMMY_API_KEY,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    return host_env(home, variables, extra_env)


def run_claude(
    cli: Path,
    prompt: str,
    at: Launch,
    *,
    session_id: str | None = None,
    resume: str | None = None,
    allowed_tools: Sequence[str] = (),
    extra_args: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """Run ``claude -p <prompt>`` in ``at.cwd`` against the API at ``at.base_url``; return the
    result.

    ``at.home`` becomes ``HOME`` (prepared by ``prepare_home``), so the transcripts land under
    ``home/.claude/projects/``. The environment is ``claude_env(home, base_url, extra_env)``.
    ``session_id`` (a UUID string) starts a new session with that id (``--session-id``);
    ``resume`` continues a stored session (``--resume``; its SessionStart hooks see
    ``source == "resume"``). ``allowed_tools`` are granted without asking (``--allowedTools``,
    e.g. ``"mcp__memory"`` for every tool of that MCP server). ``extra_args`` are added before
    the prompt. stdin is empty and stdout/stderr are captured as text. Raises
    ``subprocess.TimeoutExpired`` after ``timeout`` seconds; the CLI's process group (its
    hooks and MCP servers included) is killed then.
    """
    prepare_home(at.home, at.cwd)
    command = [str(cli), "-p"]
    if session_id is not None:
        command += ["--session-id", session_id]
    if resume is not None:
        command += ["--resume", resume]
    if allowed_tools:
        command += ["--allowedTools", ",".join(allowed_tools)]
    command += [*extra_args, "--", prompt]
    return at.run(command, claude_env(at.home, at.base_url, at.extra_env))

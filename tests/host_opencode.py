"""Run the real opencode CLI (``opencode run``) against a loopback fake of the OpenAI chat API.

The parts, like ``tests/hosts.py`` for Claude Code (whose generic pieces this reuses):

* ``ensure_opencode_cli()`` installs ``opencode-ai`` at ``OPENCODE_VERSION`` with npm into
  ``<parent>/opencode-<version>`` beside the Claude Code cache (``$SWARMMEM_TEST_CACHE`` or
  ``~/.cache/swarmmem-test-hosts``), once, under an ``fcntl`` lock, and returns the native
  ``opencode`` executable. ``require_opencode_cli()`` skips the calling test when that fails,
  or fails it when ``SWARMMEM_HOSTS_REQUIRED=1``.
* ``FakeOpenAI`` is ``hosts.FakeAnthropic``'s threaded loopback server answering
  ``POST /v1/chat/completions`` instead (OpenAI ``chat.completion.chunk`` SSE events, then
  ``data: [DONE]``; plain JSON when the request does not stream) and recording every request.
* ``prepare_home()`` writes the user config that points opencode at the fake as provider
  ``fake`` (``@ai-sdk/openai-compatible``), and ``run_opencode()`` runs ``opencode run <prompt>``
  in a project with a clean environment and a throw-away ``HOME``.

What opencode 1.18.33 (Linux x64, npm 11) was seen to need and do
-----------------------------------------------------------------

* Install: ``opencode-ai`` is a small wrapper whose ``bin`` is ``bin/opencode.exe``; the real
  program is a native (Bun-compiled) executable in an optional dependency,
  ``opencode-<os>-<arch>[-baseline][-musl]/bin/opencode``. ``find_executable()`` tries the
  wrapper's ``.bin/opencode`` first, then those, and keeps the first that reports the version.
  node is needed only for npm: the executable brings its own runtime.
* Config: a provider in ``$XDG_CONFIG_HOME/opencode/opencode.json`` (``HOME``'s
  ``.config/opencode``) with ``"npm": "@ai-sdk/openai-compatible"`` and ``options.baseURL``;
  ``model`` and ``small_model`` name it. opencode installs that npm package itself at first use
  into its cache (``$XDG_CACHE_HOME/opencode``). The ``OPENCODE_DISABLE_*`` variables in
  ``opencode_env()`` keep it off models.dev, LSP downloads, sharing and auto-update.
* No trust or permission gate: the project's ``opencode.json`` (the MCP server) and
  ``.opencode/plugins/swarmmem.js`` load as they are. The first run in a project installs
  ``@opencode-ai/plugin`` from npm into ``.opencode/`` (``package.json``, ``node_modules``),
  which took from a few seconds to half a minute; later runs reuse it.
* Traffic: ``opencode run`` sends two streamed ``POST /v1/chat/completions``: the title
  generator (its system prompt says "You are a title generator"), then the agent's turn (with
  ``tools``). The plugin adds nothing to the title call.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import hosts
import pytest

OPENCODE_VERSION = "1.18.33"
OPENCODE_PACKAGE = f"opencode-ai@{OPENCODE_VERSION}"
CHAT_PATH = "/v1/chat/completions"
PROVIDER = "fake"
MODEL_NAME = "fake-model"
MODEL = f"{PROVIDER}/{MODEL_NAME}"
DUMMY_API_KEY = "dummy-key"
TITLE_PROMPT = "you are a title generator"


# --- installing the CLI ----------------------------------------------------------------------


def cache_dir() -> Path:
    """Return ``<parent>/opencode-<version>``, beside Claude Code's ``hosts.cache_dir()``."""
    return hosts.cache_dir().parent / f"opencode-{OPENCODE_VERSION}"


def _check_npm() -> None:
    """Raise ``HostUnavailable`` unless node and npm are on PATH (npm installs opencode)."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise hosts.HostUnavailable(f"{tool} is not on PATH (npm installs opencode)")


def _cli_version(cli: Path) -> str | None:
    """Return what ``cli --version`` prints, or ``None`` when it cannot run."""
    env = {**os.environ, "OPENCODE_DISABLE_AUTOUPDATE": "1"}
    try:
        done = subprocess.run(
            [str(cli), "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def executable_candidates(target: Path) -> list[Path]:
    """The places the opencode executable may be under ``target/node_modules``, best first."""
    modules = target / "node_modules"
    system = {"linux": "linux", "darwin": "darwin"}.get(platform.system().lower(), "unknown")
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower(), platform.machine().lower()
    )
    native = sorted(
        modules.glob(f"opencode-{system}-{machine}*/bin/opencode"),
        key=lambda path: len(path.parent.parent.name),  # the plain build before -baseline/-musl
    )
    wrapper = [modules / ".bin" / "opencode", modules / "opencode-ai" / "bin" / "opencode.exe"]
    return [path for path in [*wrapper, *native] if path.is_file()]


def find_executable(target: Path) -> Path | None:
    """Return the first candidate that runs and reports ``OPENCODE_VERSION``, else ``None``."""
    for path in executable_candidates(target):
        if os.access(path, os.X_OK) and (_cli_version(path) or "").startswith(OPENCODE_VERSION):
            return path
    return None


def _install(target: Path) -> None:
    """Run ``npm install`` of the pinned package into ``target`` (raises ``HostUnavailable``)."""
    target.mkdir(parents=True, exist_ok=True)
    command = ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(target)]
    try:
        done = subprocess.run(
            [*command, OPENCODE_PACKAGE],
            capture_output=True,
            text=True,
            timeout=900,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise hosts.HostUnavailable(f"npm install {OPENCODE_PACKAGE} failed: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-2000:]
        raise hosts.HostUnavailable(
            f"npm install {OPENCODE_PACKAGE} exited {done.returncode}: {tail}"
        )


def ensure_opencode_cli() -> Path:
    """Install the pinned opencode if needed and return its executable.

    The install runs only when no working executable is found in ``cache_dir()``, and holds an
    exclusive ``fcntl`` lock on ``<cache_dir>.lock`` meanwhile. Raises ``HostUnavailable``
    when npm is missing, the install fails or nothing there reports ``OPENCODE_VERSION``.
    """
    target = cache_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            cli = find_executable(target)
            if cli is None:
                _check_npm()
                _install(target)
                cli = find_executable(target)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    if cli is None:
        found = [str(path) for path in executable_candidates(target)]
        raise hosts.HostUnavailable(
            f"no opencode executable under {target} reports {OPENCODE_VERSION} (tried {found})"
        )
    return cli


def require_opencode_cli() -> Path:
    """Return the opencode executable, or skip the calling test when it is unavailable.

    With ``SWARMMEM_HOSTS_REQUIRED=1`` in the environment the test fails instead of skipping.
    """
    try:
        return ensure_opencode_cli()
    except hosts.HostUnavailable as exc:
        reason = f"opencode CLI unavailable: {exc}"
        if os.environ.get(hosts.ENV_REQUIRED) == "1":
            pytest.fail(reason)
        pytest.skip(reason)


# --- reading request bodies ------------------------------------------------------------------


def message_text(message: dict[str, Any]) -> str:
    """The text of one chat message: a string ``content`` or its ``text`` parts, joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        part["text"]
        for part in content
        if isinstance(part, dict)
        and part.get("type") == "text"
        and isinstance(part.get("text"), str)
    )


def role_texts(body: dict[str, Any], role: str) -> list[str]:
    """The texts of the ``messages`` with ``role``, in order."""
    return [
        message_text(message)
        for message in body.get("messages") or []
        if isinstance(message, dict) and message.get("role") == role
    ]


def is_title_request(body: dict[str, Any]) -> bool:
    """Tell whether a chat request is opencode's title generator (its system prompt says so)."""
    return any(TITLE_PROMPT in text.lower() for text in role_texts(body, "system"))


# --- the fake API ----------------------------------------------------------------------------


ChatReply = Callable[[dict[str, Any]], str]


def _default_reply(body: dict[str, Any]) -> str:
    return "ok"


class FakeOpenAI(hosts.FakeAnthropic):
    """A loopback stand-in for the OpenAI chat completions API that records what it is sent.

    Use it as a context manager; ``base_url`` (``<url>/v1``) goes into the provider's
    ``options.baseURL``. ``reply(body)`` gives the assistant's text for each
    ``POST /v1/chat/completions``; if it raises, the request gets a 400 and the exception goes
    to ``errors``. ``requests`` holds every request as ``hosts.FakeAnthropic`` records it.
    """

    def __init__(self, reply: ChatReply = _default_reply, *, model: str = MODEL_NAME) -> None:
        super().__init__(reply, model=model)  # type: ignore[arg-type]

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def chat_requests(self) -> list[dict[str, Any]]:
        """Return the bodies of the ``POST /v1/chat/completions`` requests, in order."""
        return [
            r["body"]
            for r in self.requests
            if r["method"] == "POST" and r["path"] == CHAT_PATH and isinstance(r["body"], dict)
        ]

    def agent_requests(self) -> list[dict[str, Any]]:
        """Return the chat bodies that are not the title generator's."""
        return [body for body in self.chat_requests() if not is_title_request(body)]

    def _handle(self, handler: Any) -> None:
        """Record one request and answer it."""
        parts = urlsplit(handler.path)
        raw = hosts._read_body(handler)
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
        if handler.command == "POST" and parts.path == CHAT_PATH and isinstance(body, dict):
            self._answer_chat(handler, body)
        else:
            error = {"message": f"the fake API has no {handler.command} {parts.path}"}
            hosts._send_json(handler, 404, {"error": {**error, "type": "not_found"}})

    def _answer_chat(self, handler: Any, body: dict[str, Any]) -> None:
        """Answer with ``reply(body)``: SSE chunks when the request streams, else JSON."""
        try:
            text = self.reply(body)
            if not isinstance(text, str):
                raise TypeError(f"the fake chat API answers text only, not {text!r}")
        except Exception as exc:
            with self._lock:
                self.errors.append(exc)
            error = {"message": f"reply failed: {exc!r}", "type": "invalid_request_error"}
            hosts._send_json(handler, 400, {"error": error})
            return
        ident = f"chatcmpl-fake{uuid.uuid4().hex[:20]}"
        created = int(time.time())
        model = body.get("model") or self.model
        prompt_tokens = max(1, len(json.dumps(body)) // 4)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": max(1, len(text) // 4),
            "total_tokens": prompt_tokens + max(1, len(text) // 4),
        }
        if not body.get("stream"):
            message = {"role": "assistant", "content": text}
            answer = {
                "id": ident,
                "object": "chat.completion",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": usage,
            }
            hosts._send_json(handler, 200, answer)
            return
        base = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model}
        deltas: list[tuple[dict[str, Any], str | None]] = [
            ({"role": "assistant", "content": ""}, None),
            ({"content": text}, None),
            ({}, "stop"),
        ]
        chunks = [
            {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            for delta, finish in deltas
        ]
        chunks.append({**base, "choices": [], "usage": usage})
        stream = "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"
        hosts._send(handler, 200, "text/event-stream", stream.encode())


# --- running the CLI -------------------------------------------------------------------------


def user_config(base_url: str) -> dict[str, Any]:
    """The user config that makes ``fake/fake-model`` (at ``base_url``) the only model."""
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "Fake loopback",
        "options": {"baseURL": base_url, "apiKey": DUMMY_API_KEY},
        "models": {MODEL_NAME: {"name": "Fake model"}},
    }
    return {
        "$schema": "https://opencode.ai/config.json",
        "model": MODEL,
        "small_model": MODEL,
        "autoupdate": False,
        "share": "disabled",
        "provider": {PROVIDER: provider},
    }


def prepare_home(home: Path, base_url: str) -> None:
    """Write ``home/.config/opencode/opencode.json`` (``user_config``) and the XDG folders."""
    for sub in (".config", ".cache", ".local/share", ".local/state"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    config = home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps(user_config(base_url), indent=2), encoding="utf-8")


def opencode_env(home: Path, extra_env: dict[str, str] | None = None) -> dict[str, str]:
    """The clean environment ``run_opencode`` gives the CLI: no API keys, XDG dirs in ``home``."""
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_SHARE": "1",
    }
    env.update(extra_env or {})
    return env


def run_opencode(
    cli: Path,
    prompt: str,
    *,
    cwd: Path,
    home: Path,
    base_url: str,
    timeout: float = 90,
    extra_env: dict[str, str] | None = None,
    extra_args: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """Run ``opencode run <prompt>`` in ``cwd`` against the chat API at ``base_url``.

    ``home`` becomes ``HOME`` and holds the XDG folders (``prepare_home`` writes the user
    config). stdin is empty and stdout/stderr are captured as text. Raises
    ``subprocess.TimeoutExpired`` after ``timeout`` seconds; the CLI is killed then.
    """
    prepare_home(home, base_url)
    command = [str(cli), "run", *extra_args, "--", prompt]
    # its own process group, so a timeout also ends the MCP server and the hook commands
    with subprocess.Popen(
        command,
        cwd=cwd,
        env=opencode_env(home, extra_env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)

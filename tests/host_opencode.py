"""Run the real opencode CLI (``opencode run``) against a loopback fake of the OpenAI chat API.

The parts, like ``tests/hosts.py`` for Claude Code (whose generic pieces this reuses):

* ``ensure_opencode_cli()`` installs ``opencode-ai`` at ``OPENCODE_VERSION`` with npm into
  ``<parent>/opencode-<version>`` beside the Claude Code cache (``$SWARMMEM_TEST_CACHE`` or
  ``~/.cache/swarmmem-test-hosts``), once, under an ``fcntl`` lock, and returns the native
  ``opencode`` executable (``hosts.ensure_npm_cli``). A test gets it through
  ``hosts.require_cli("opencode CLI", ensure_opencode_cli)``, which skips when that fails, or
  fails when ``SWARMMEM_HOSTS_REQUIRED=1``.
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

import json
import os
import platform
import subprocess
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import hosts

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
    """Return ``<parent>/opencode-<version>``, beside Claude Code's (``hosts.cache_root()``)."""
    return hosts.cache_root() / f"opencode-{OPENCODE_VERSION}"


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
    env = {**os.environ, "OPENCODE_DISABLE_AUTOUPDATE": "1"}
    return hosts.first_reporting(
        executable_candidates(target), lambda version: version.startswith(OPENCODE_VERSION), env
    )


def ensure_opencode_cli() -> Path:
    """Install the pinned opencode into ``cache_dir()`` if needed and return its executable
    (see ``hosts.ensure_npm_cli``; node and npm are needed only to install it)."""
    return hosts.ensure_npm_cli(OPENCODE_PACKAGE, cache_dir(), find_executable)


# --- reading request bodies ------------------------------------------------------------------


def message_text(message: dict[str, Any]) -> str:
    """The text of one chat message: a string ``content`` or its ``text`` parts, joined."""
    return hosts.joined_text(message.get("content"), kinds=("text",))


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


class FakeOpenAI(hosts.FakeOpenAIStyle):
    """A loopback stand-in for the OpenAI chat completions API that records what it is sent.

    Use it as a context manager; ``base_url`` (``<url>/v1``) goes into the provider's
    ``options.baseURL``. ``reply(body)`` gives the assistant's text for each
    ``POST /v1/chat/completions``; if it raises, the request gets a 400 and the exception goes
    to ``errors``. ``requests`` holds every request as ``hosts.FakeAnthropic`` records it.
    """

    endpoint = CHAT_PATH

    def __init__(self, reply: ChatReply = _default_reply, *, model: str = MODEL_NAME) -> None:
        super().__init__(reply, model=model)

    def chat_requests(self) -> list[dict[str, Any]]:
        """Return the bodies of the ``POST /v1/chat/completions`` requests, in order."""
        return self.endpoint_requests()

    def agent_requests(self) -> list[dict[str, Any]]:
        """Return the chat bodies that are not the title generator's."""
        return [body for body in self.chat_requests() if not is_title_request(body)]

    def _answer(self, handler: Any, body: dict[str, Any]) -> None:
        """Answer with ``reply(body)``: SSE chunks when the request streams, else JSON."""
        try:
            text = self.reply(body)
            if not isinstance(text, str):
                raise TypeError(f"the fake chat API answers text only, not {text!r}")
        except Exception as exc:
            self._reply_failed(handler, exc)
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


def opencode_env(home: Path, extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The clean environment ``run_opencode`` gives the CLI: no API keys, XDG dirs in ``home``."""
    variables = {
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
    return hosts.host_env(home, variables, extra_env)


def run_opencode(
    cli: Path, prompt: str, at: hosts.Launch, *, extra_args: Sequence[str] = ()
) -> subprocess.CompletedProcess[str]:
    """Run ``opencode run <prompt>`` in ``at.cwd`` against the chat API at ``at.base_url``.

    ``at.home`` becomes ``HOME`` and holds the XDG folders (``prepare_home`` writes the user
    config). stdin is empty and stdout/stderr are captured as text. Raises
    ``subprocess.TimeoutExpired`` after ``timeout`` seconds; the CLI's process group (its MCP
    server and hook commands included) is killed then.
    """
    prepare_home(at.home, at.base_url)
    command = [str(cli), "run", *extra_args, "--", prompt]
    return at.run(command, opencode_env(at.home, at.extra_env))

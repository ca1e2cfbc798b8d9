"""Run the real Gemini CLI headless against a loopback fake of the Gemini API.

The same three parts as ``tests/hosts.py`` has for Claude Code, whose generic pieces it reuses
(``HostUnavailable``, the cached npm install, the skip-or-fail rule, the threaded loopback
server):

* ``ensure_gemini_cli()`` installs ``@google/gemini-cli`` at ``GEMINI_CLI_VERSION`` with npm
  into ``<cache parent>/gemini-cli-<version>`` (once; an ``fcntl`` lock keeps parallel test
  processes from installing at the same time) and returns the ``gemini`` binary.
  ``hosts.require_cli("Gemini CLI", ensure_gemini_cli)`` wraps it for a test: it skips when
  node/npm are missing or too old or the install fails, and fails instead when
  ``SWARMMEM_HOSTS_REQUIRED=1`` (CI sets that).
* ``FakeGemini`` is a threaded HTTP server on 127.0.0.1 that answers
  ``POST /v1beta/models/<model>:generateContent`` and ``:streamGenerateContent`` and records
  every request. ``user_parts()`` and ``hook_contexts()`` pull out what the model was sent.
* ``run_gemini()`` runs ``gemini -p <prompt>`` in a project folder with a clean environment, a
  throw-away ``HOME`` and ``GOOGLE_GEMINI_BASE_URL`` pointing at the fake; ``trust_folder()``
  records the project as trusted in that home first.

What the real CLI (0.61.0, Linux, node 20) was seen to need and do
------------------------------------------------------------------

* Install: the npm package is one bundle (about 100 MB with its few dependencies, 4 s). Its
  optional ``node-pty`` wants a ``node-gyp`` build in an install script; print mode does not
  use it, so the install passes ``--ignore-scripts`` (npm 11 holds such scripts back anyway).
* Endpoint and auth: ``GOOGLE_GEMINI_BASE_URL`` moves every model call to the fake;
  ``GEMINI_API_KEY`` (any value, sent as ``x-goog-api-key``) plus
  ``security.auth.selectedType: "gemini-api-key"`` in ``$HOME/.gemini/settings.json`` skip
  the login. ``prepare_home()`` also turns usage statistics, telemetry and auto-update off.
* Trust: folder trust is on by default. In a folder the home does not trust, ``gemini -p``
  exits 55 ("not running in a trusted directory") before any hook or model call. The person's
  way to trust it is the CLI's own record, ``$HOME/.gemini/trustedFolders.json`` mapping the
  folder to ``"TRUST_FOLDER"`` (``trust_folder()``). ``--skip-trust`` would run, but it loads
  no project settings, so none of swarmmem's hooks. A trusted folder's project hooks run
  without a per-hook approval; the CLI prints a warning naming them on stderr.
* Traffic: two calls per prompt. First a JSON-mode routing classifier,
  ``POST /v1beta/models/<lite model>:generateContent`` whose ``generationConfig`` carries
  ``responseMimeType: application/json`` and a ``responseJsonSchema`` (0.61.0 asks for
  ``complexity_reasoning``, a string, and ``complexity_score``, an integer 1-100; a low score
  picks a flash model). The fake answers every JSON-mode call with an object built from that
  schema (``schema_sample``). Then the agent turn,
  ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` with the agent's ``tools``,
  answered with SSE ``data: {...}`` chunks of GenerateContentResponse objects. No other
  request was seen.
* Where hook context lands: in the last ``{"role": "user"}`` item of ``contents``. Its parts
  are the ``<session_context>`` text (GEMINI.md and the MCP server's instructions included),
  then the prompt with the SessionStart context in front of it,
  ``"<hook_context>BRIEF</hook_context>\\n\\nPROMPT"``, then, when the BeforeAgent hook adds
  context, one more part ``"<hook_context>RECALL</hook_context>"``. The BeforeAgent hook is
  handed the prompt *with* the brief in front of it, which swarmmem strips before recall.
* Hooks: SessionStart, BeforeAgent, PreCompress, AfterAgent and SessionEnd each ran once for a
  one-prompt run. PreCompress runs at every turn, before the CLI checks whether the history is
  long enough to compress. AfterAgent gets the reply as ``prompt_response``. A hook's
  ``systemMessage`` is printed on stderr as "Hook system message: <text>".
* stdout is the model's reply text. A run takes about 2-3 s, most of it node starting up.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import hosts

GEMINI_CLI_VERSION = "0.61.0"
GEMINI_CLI_PACKAGE = f"@google/gemini-cli@{GEMINI_CLI_VERSION}"
DUMMY_API_KEY = "gemini-test-dummy-key"
EXIT_UNTRUSTED = 55
"""What ``gemini -p`` exits with in a folder the home does not trust."""
HOOK_CONTEXT_OPEN, HOOK_CONTEXT_CLOSE = "<hook_context>", "</hook_context>"
MODELS_PATH = "/v1beta/models/"


# --- installing the CLI ----------------------------------------------------------------------


def cache_dir() -> Path:
    """Return the folder the pinned Gemini CLI is installed into.

    That is ``<parent>/gemini-cli-<version>`` beside Claude Code's, where the parent is
    ``$SWARMMEM_TEST_CACHE`` or ``~/.cache/swarmmem-test-hosts`` (``hosts.cache_root()``).
    """
    return hosts.cache_root() / f"gemini-cli-{GEMINI_CLI_VERSION}"


def find_gemini(target: Path) -> Path | None:
    """Return ``target``'s ``node_modules/.bin/gemini`` when it reports ``GEMINI_CLI_VERSION``
    (run with an empty home), else ``None``."""
    with tempfile.TemporaryDirectory(prefix="gemini-home-") as home:
        env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": home, "LANG": "C.UTF-8"}
        return hosts.first_reporting(
            [target / "node_modules" / ".bin" / "gemini"], GEMINI_CLI_VERSION.__eq__, env
        )


def ensure_gemini_cli() -> Path:
    """Install the pinned Gemini CLI into ``cache_dir()`` if needed and return its ``gemini``
    (see ``hosts.ensure_npm_cli``). The install skips npm's install scripts (see the module
    docstring). Gemini CLI 0.61.0 runs on the same node as Claude Code (engines: >=20)."""
    return hosts.ensure_npm_cli(
        GEMINI_CLI_PACKAGE,
        cache_dir(),
        find_gemini,
        npm_args=["--ignore-scripts"],
        node_major=hosts.MIN_NODE_MAJOR,
    )


# --- reading request bodies ------------------------------------------------------------------


def part_texts(content: Any) -> list[str]:
    """Return the ``text`` of each part of one ``contents`` item (other parts give nothing)."""
    parts = content.get("parts") if isinstance(content, dict) else None
    return [
        part["text"]
        for part in parts or ()
        if isinstance(part, dict) and isinstance(part.get("text"), str)
    ]


def user_parts(body: dict[str, Any]) -> list[str]:
    """Return the text parts of the last ``{"role": "user"}`` item of ``contents``.

    For a one-prompt run that is the session context, the prompt (with the SessionStart
    context in front of it) and the BeforeAgent context, if any (see the module docstring).
    """
    users = [
        c for c in body.get("contents") or () if isinstance(c, dict) and c.get("role") == "user"
    ]
    return part_texts(users[-1]) if users else []


def hook_contexts(text: str) -> list[str]:
    """Return the texts inside the ``<hook_context>...</hook_context>`` blocks of ``text``."""
    found: list[str] = []
    at = 0
    while (start := text.find(HOOK_CONTEXT_OPEN, at)) >= 0:
        end = text.find(HOOK_CONTEXT_CLOSE, start)
        if end < 0:
            break
        found.append(text[start + len(HOOK_CONTEXT_OPEN) : end])
        at = end + len(HOOK_CONTEXT_CLOSE)
    return found


def is_json_mode(body: dict[str, Any]) -> bool:
    """Tell whether a request asks for a JSON answer (the CLI's classifier and checks)."""
    config = body.get("generationConfig") or {}
    return config.get("responseMimeType") == "application/json"


def is_main_request(method: str, body: dict[str, Any]) -> bool:
    """Tell whether a request is an agent turn: a streamed call that offers the agent's tools."""
    return method == "streamGenerateContent" and bool(body.get("tools"))


def schema_sample(schema: Any) -> Any:
    """Return a value of the (Gemini-style, upper-case ``type``) JSON ``schema``.

    An object gets every property, a string its first ``enum`` value or ``"fake"``, a number
    its ``minimum`` or 1, a boolean ``false``, an array ``[]``.
    """
    if not isinstance(schema, dict):
        return {}
    kind = str(schema.get("type") or "object").lower()
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: schema_sample(sub) for name, sub in properties.items()}
    if kind == "string":
        return (schema.get("enum") or ["fake"])[0]
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    return None


# --- the fake API ----------------------------------------------------------------------------


Reply = Callable[[dict[str, Any]], str]


def _default_reply(body: dict[str, Any]) -> str:
    """Answer every agent turn with ``ok``."""
    return "ok"


def _json_reply(body: dict[str, Any]) -> str:
    """Answer a JSON-mode request with a sample of the schema it asks for."""
    schema = (body.get("generationConfig") or {}).get("responseJsonSchema")
    return json.dumps(schema_sample(schema))


def _response(text: str, body: dict[str, Any]) -> dict[str, Any]:
    """Return a GenerateContentResponse holding ``text`` as the model's whole answer."""
    prompt_tokens = max(1, len(json.dumps(body)) // 4)
    reply_tokens = max(1, len(text) // 4)
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": text}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": prompt_tokens,
            "candidatesTokenCount": reply_tokens,
            "totalTokenCount": prompt_tokens + reply_tokens,
        },
        "modelVersion": "gemini-fake-1",
    }


def _error(code: int, status: str, message: str) -> dict[str, Any]:
    """Return a Google API error body."""
    return {"error": {"code": code, "message": message, "status": status}}


class FakeGemini(hosts.FakeAnthropic):
    """A loopback stand-in for the Gemini API (``generativelanguage``) that records requests.

    It reuses the server, life cycle and recording of ``hosts.FakeAnthropic`` and answers
    ``POST /v1beta/models/<model>:<method>`` instead. Use it as a context manager; ``url`` is
    the base URL for ``GOOGLE_GEMINI_BASE_URL``. A JSON-mode request (the CLI's routing
    classifier) is answered by ``classify(body)`` (default: a sample of its schema); any other
    ``generateContent`` or ``streamGenerateContent`` call by ``reply(body)``, as SSE for the
    streamed one. If either raises, the request gets a 400 ``INVALID_ARGUMENT`` and the
    exception goes to ``errors``. ``requests`` holds one dict per request (``method``,
    ``path``, ``query``, ``headers`` with lower-case names, ``body``) in arrival order.
    """

    def __init__(self, reply: Reply = _default_reply, *, classify: Reply = _json_reply) -> None:
        super().__init__(reply)
        self.classify = classify

    def model_requests(self) -> list[tuple[str, str, dict[str, Any]]]:
        """Return ``(model, method, body)`` for each model call, in arrival order."""
        calls: list[tuple[str, str, dict[str, Any]]] = []
        for request in self.requests:
            path, body = request["path"], request["body"]
            if path.startswith(MODELS_PATH) and ":" in path and isinstance(body, dict):
                model, method = path[len(MODELS_PATH) :].rsplit(":", 1)
                calls.append((model, method, body))
        return calls

    def main_requests(self) -> list[dict[str, Any]]:
        """Return the bodies of the agent's own turns (see ``is_main_request``)."""
        return [body for _, method, body in self.model_requests() if is_main_request(method, body)]

    def _respond(self, handler: Any, request: dict[str, Any], raw: bytes) -> None:
        """Answer ``POST /v1beta/models/<model>:<method>``; anything else gets a 404."""
        path, body = request["path"], request["body"]
        method = path.rsplit(":", 1)[-1] if ":" in path else ""
        calls = ("generateContent", "streamGenerateContent")
        if request["method"] != "POST" or not path.startswith(MODELS_PATH):
            method = ""
        if method in calls and isinstance(body, dict):
            self._answer(handler, method, body)
        elif method == "countTokens":
            hosts._send_json(handler, 200, {"totalTokens": max(1, len(raw) // 4)})
        else:
            message = f"the fake API has no {request['method']} {path}"
            hosts._send_json(handler, 404, _error(404, "NOT_FOUND", message))

    def _answer(self, handler: Any, method: str, body: dict[str, Any]) -> None:
        """Answer one model call, as SSE for ``streamGenerateContent``."""
        answer = self.classify if is_json_mode(body) else self.reply
        try:
            text = answer(body)
            if not isinstance(text, str):
                raise TypeError(f"the fake Gemini API answers text only, not {text!r}")
        except Exception as exc:
            self._failed(handler, exc, _error(400, "INVALID_ARGUMENT", f"reply failed: {exc!r}"))
            return
        response = _response(text, body)
        if method == "generateContent":
            hosts._send_json(handler, 200, response)
            return
        stream = f"data: {json.dumps(response)}\r\n\r\n".encode()
        hosts._send(handler, 200, "text/event-stream", stream)


# --- running the CLI -------------------------------------------------------------------------


def _load(path: Path) -> dict[str, Any]:
    """Return the JSON object in ``path`` ({} when it is missing or not an object)."""
    with contextlib.suppress(OSError, ValueError):
        loaded = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(loaded, dict):
            return loaded
    return {}


def prepare_home(home: Path) -> None:
    """Make ``home/.gemini/settings.json`` pick API-key auth and turn statistics, telemetry
    and auto-update off. Other keys already in the file are kept."""
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    settings = _load(path)
    settings.setdefault("security", {}).setdefault("auth", {})["selectedType"] = "gemini-api-key"
    settings.setdefault("privacy", {})["usageStatisticsEnabled"] = False
    settings.setdefault("telemetry", {})["enabled"] = False
    general = settings.setdefault("general", {})
    general["enableAutoUpdate"] = False
    general["enableAutoUpdateNotification"] = False
    path.write_text(json.dumps(settings, indent=2), encoding="utf-8")


def trust_folder(home: Path, folder: Path) -> None:
    """Record ``folder`` as trusted in ``home/.gemini/trustedFolders.json``, the CLI's own
    trust record (what the person's "trust this folder" answer writes)."""
    path = home / ".gemini" / "trustedFolders.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    trusted = _load(path)
    for key in dict.fromkeys([str(folder), str(folder.resolve())]):
        trusted[key] = "TRUST_FOLDER"
    path.write_text(json.dumps(trusted, indent=2), encoding="utf-8")


def gemini_env(
    home: Path, base_url: str, extra_env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Return the clean environment ``run_gemini`` gives the CLI (``PATH`` is kept for hooks)."""
    variables = {"GOOGLE_GEMINI_BASE_URL": base_url, "GEMINI_API_KEY": DUMMY_API_KEY}
    return hosts.host_env(home, variables, extra_env)


def run_gemini(
    cli: Path,
    prompt: str,
    at: hosts.Launch,
    *,
    session_id: str | None = None,
    extra_args: Sequence[str] = (),
) -> subprocess.CompletedProcess[str]:
    """Run ``gemini -p <prompt>`` in ``at.cwd`` against the API at ``at.base_url``; return the
    result.

    ``at.home`` becomes ``HOME`` (``prepare_home`` runs on it; trusting ``cwd`` is up to the
    caller, see ``trust_folder``). The environment is ``gemini_env(home, base_url,
    extra_env)``. ``session_id`` (a UUID string) starts the session with that id
    (``--session-id``); ``extra_args`` are added before ``-p``. stdin is empty and
    stdout/stderr are captured as text. Raises ``subprocess.TimeoutExpired`` after ``timeout``
    seconds; the CLI's process group (its hooks included) is killed then.
    """
    prepare_home(at.home)
    command = [str(cli), *extra_args]
    if session_id is not None:
        command += ["--session-id", session_id]
    command += ["-p", prompt]
    return at.run(command, gemini_env(at.home, at.base_url, at.extra_env))

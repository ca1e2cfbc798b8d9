"""Regex secret detector: the reference's fourteen patterns, with span-merging redaction.

The patterns are the reference ``SECRET_PATTERNS`` (JavaScript) carried over to :mod:`re`:

* every pattern is compiled with :data:`re.ASCII`, because JavaScript's ``\\b``, ``\\w`` and
  ``\\d`` only know ASCII word characters;
* ``authorization_bearer`` and ``env_secret`` (the two ``/gi`` patterns) add :data:`re.I`;
* JavaScript's ``\\s`` also matches Unicode spaces (NO-BREAK SPACE, the U+2000 block, U+3000,
  BOM, line and paragraph separators), whereas ``\\s`` under ``re.ASCII`` does not. Each ``\\s``
  is therefore spelled as the explicit JavaScript whitespace class, so ``API_KEY\\u00a0=...``
  is caught here exactly as it is by the reference.

Redaction differs from the reference on purpose. The reference substitutes pattern after
pattern, so an earlier replacement can hide a later match (an ``AKIA...`` key id redacted first
leaves the 40-character secret access key that follows it on the same line in clear text).
Here every pattern is matched against the *original* text, the spans are merged, and each
merged span is replaced once. Labelling rule for a merged span:

1. the earliest pattern (in pattern order) whose single match covers the whole merged span;
2. when no single match covers it (a chain of overlapping or touching matches), the earliest
   pattern among all matches that make up the span.

This reproduces the reference labels wherever the reference redacts completely
(``OPENAI_API_KEY=sk-...`` becomes ``[REDACTED:env_secret]``, an OpenSSH key block becomes
``[REDACTED:private_key_block]``). The result is scanned again; if a replacement happened to
complete a new match, redaction repeats (a few rounds at most); should matches still remain
after that, the whole text is replaced by one marker (or by nothing, if a custom pattern
matches that marker too), so no detected secret ever survives.

Speed: before scanning, each built-in pattern is skipped when none of its literal anchors
(:data:`PATTERN_HINTS`) occurs in the text; a property test checks that this never changes
what :meth:`RegexSecretDetector.find` returns.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from swarmmem.adapters.detectors.runs import AnchoredRunPattern
from swarmmem.core.model.text import INVISIBLE_RE
from swarmmem.ports.detectors import SecretFinding

__all__ = [
    "DEFAULT_PATTERNS",
    "EXTRA_PATTERNS",
    "PATTERN_HINTS",
    "SECRET_PATTERNS",
    "RegexSecretDetector",
    "normalized_view",
    "redaction_marker",
]

# JavaScript's \s: ECMAScript WhiteSpace + LineTerminator.
_WS = r"[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"
_NOT_WS_QUOTE = r"[^\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff\"'`]"

_A = re.ASCII
_AI = re.ASCII | re.IGNORECASE

#: ``type -> pattern`` in the reference order (the order is part of the contract).
_PATTERN_SOURCES: dict[str, str] = {
    "openai_api_key": r"\bsk-[A-Za-z0-9_-]{20,}\b",
    "github_token": r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}\b",
    "aws_access_key_id": r"\bAKIA[0-9A-Z]{16}\b",
    "private_key_block": (
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"
    ),
    "authorization_bearer": rf"\bAuthorization{_WS}*:{_WS}*Bearer{_WS}+[A-Za-z0-9._~+/=-]{{12,}}",
    "env_secret": (
        r"\b(?:[A-Z][A-Z0-9]+_)+(?:KEY|TOKEN|SECRET|PASSWORD)\b"
        rf"{_WS}*={_WS}*[\"']?{_NOT_WS_QUOTE}{{8,}}[\"']?"
    ),
    "gitlab_token": r"\bgl(?:pat|ptt)-[A-Za-z0-9_-]{15,}\b",
    "slack_token": r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b",
    "jwt_token": r"\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\b",
    "aws_secret_access_key": (
        r"\b(?:aws_secret_access_key|AWS_SECRET_ACCESS_KEY|secret_access_key|SecretAccessKey)"
        rf"\"?{_WS}*[=:]{_WS}*[\"']?[A-Za-z0-9/+=]{{40}}\b"
    ),
    "aws_secret_access_key_context": r"\bAKIA[0-9A-Z]{16}\b[^\n]{0,200}?\b[A-Za-z0-9/+=]{40}\b",
    "stripe_secret_key": r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{24,}\b",
    "google_api_key": r"\bAIza[0-9A-Za-z_-]{35}\b",
    "openssh_private_key_block": (
        r"-----BEGIN[ ]OPENSSH[ ]PRIVATE[ ]KEY-----[\s\S]*?"
        r"-----END[ ]OPENSSH[ ]PRIVATE[ ]KEY-----"
    ),
}
#: The two ``/gi`` patterns of the reference (compiled with ``re.I`` as well).
_IGNORECASE_TYPES = frozenset({"authorization_bearer", "env_secret"})


#: ``(type, compiled pattern)`` in the reference order.
class RegionPattern:
    """A key-block pattern searched only where it can match, so that many BEGIN lines cannot
    make a scan quadratic; its matches are exactly those of the pattern it wraps.

    A block that needs its END line can only match up to the text's last END marker
    (``before_end``); a block without one can only start after it (and there ``fast``, the
    pattern without its look-ahead for an END line, finds the same matches in linear time).
    ``fullmatch`` and ``sub`` behave as the wrapped pattern's.
    """

    def __init__(
        self, source: str, flags: int, end: str, *, before_end: bool, fast: str | None = None
    ) -> None:
        self._re = re.compile(source, flags)
        self._fast = re.compile(fast or source, flags)
        self._end = re.compile(end, flags)
        self._before_end = before_end
        self.pattern, self.flags = self._re.pattern, self._re.flags

    def _region(self, text: str, pos: int, endpos: int) -> tuple[int, int] | None:
        last = -1
        for m in self._end.finditer(text, pos, endpos):
            last = m.end()
        if self._before_end:
            return (pos, last) if last >= 0 else None
        return (max(pos, last), endpos)

    def finditer(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[Any]:
        region = self._region(text, pos, min(endpos, len(text)))
        return iter(()) if region is None else self._fast.finditer(text, *region)

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Any:
        region = self._region(text, pos, min(endpos, len(text)))
        return None if region is None else self._fast.search(text, *region)

    def fullmatch(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Any:
        return self._re.fullmatch(text, pos, endpos)

    def sub(self, repl: str, text: str) -> str:
        out, at = [], 0
        for m in self.finditer(text):
            if m.end() > m.start():
                out += [text[at : m.start()], repl]
                at = m.end()
        return "".join([*out, text[at:]])


SecretPattern = re.Pattern[str] | RegionPattern | AnchoredRunPattern
"""A compiled secret pattern: a regular expression, or one searched by region or from the
literal after its leading run (both linear in the text)."""

_KEY_END = r"-----END [A-Z ]*PRIVATE KEY-----"
_REGIONS: dict[str, tuple[str, bool]] = {
    "private_key_block": (_KEY_END, True),
    "openssh_private_key_block": (r"-----END[ ]OPENSSH[ ]PRIVATE[ ]KEY-----", True),
}


#: Patterns that begin with a run (a URL scheme, a JWT's header): ``type -> (run, anchor,
#: start)``, searched from the literal after the run (:class:`AnchoredRunPattern`), since a
#: long run of such characters made the plain expression quadratic.
_SCHEME_RUN = ("[A-Za-z0-9+.-]", "://", r"\b[A-Za-z]")
_RUNS: dict[str, tuple[str, str, str]] = {
    "jwt_token": ("[A-Za-z0-9_-]", ".eyJ", r"\beyJ"),
    "url_credentials": _SCHEME_RUN,
    "url_credentials_at": _SCHEME_RUN,
}


def _compile(name: str, source: str, flags: int) -> SecretPattern:
    if name in _REGIONS:
        end, before = _REGIONS[name]
        return RegionPattern(source, flags, end, before_end=before)
    if name in _RUNS:
        run, anchor, start = _RUNS[name]
        return AnchoredRunPattern(source, flags, run=run, anchor=anchor, start=start)
    return re.compile(source, flags)


SECRET_PATTERNS: tuple[tuple[str, SecretPattern], ...] = tuple(
    (name, _compile(name, pattern, _AI if name in _IGNORECASE_TYPES else _A))
    for name, pattern in _PATTERN_SOURCES.items()
)

#: Literal anchors per type: ``type -> (test lower-cased text?, groups)``. A pattern can only
#: match when, for every group, at least one of its literals occurs in the text; otherwise
#: its scan is skipped (cheap ``in`` tests; this also avoids the quadratic lazy scan of a key
#: block that has a BEGIN line but no END line). For the two ``re.I`` patterns the test runs
#: on ``text.lower()``, which maps every ASCII letter to ASCII, so a hint can let through text
#: that the pattern then rejects but never hides a match.
PATTERN_HINTS: dict[str, tuple[bool, tuple[tuple[str, ...], ...]]] = {
    "openai_api_key": (False, (("sk-",),)),
    "github_token": (False, (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),)),
    "aws_access_key_id": (False, (("AKIA",),)),
    "private_key_block": (False, (("-----BEGIN ",), ("-----END ",))),
    "authorization_bearer": (True, (("authorization",), ("bearer",))),
    "env_secret": (True, (("key", "token", "secret", "password"), ("=",))),
    "gitlab_token": (False, (("glpat-", "glptt-"),)),
    "slack_token": (False, (("xox",),)),
    "jwt_token": (False, (("eyJ",),)),
    "aws_secret_access_key": (
        False,
        (("secret_access_key", "AWS_SECRET_ACCESS_KEY", "SecretAccessKey"),),
    ),
    "aws_secret_access_key_context": (False, (("AKIA",),)),
    "stripe_secret_key": (False, (("_live_", "_test_"),)),
    "google_api_key": (False, (("AIza",),)),
    "openssh_private_key_block": (False, (("-----BEGIN OPENSSH",), ("-----END OPENSSH",))),
}

#: Our own patterns, checked after the reference's fourteen (``type -> (pattern, flags)``):
#: credentials in URLs (database, broker and basic-auth URLs), password assignments, Azure
#: storage account keys, npm and Anthropic tokens, Slack webhook URLs, ``Authorization:
#: Basic``, private-key blocks cut before their END line, and 40-character AWS secret keys
#: near an access key id whatever characters they start or end with.
_B64 = r"[A-Za-z0-9/+=]"
_EXTRA_SOURCES: dict[str, tuple[str, re.RegexFlag]] = {
    "url_credentials": (r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@\[\]]*:[^\s:/@\[\]]{3,}@", _A),
    # the value is neither a placeholder (``$VAR``, ``<pw>``, ``{{ x }}``, ``***``) nor a
    # type annotation (``password: String``)
    "password_assignment": (
        rf"\b(?:password|passwd|passphrase|pwd)\b[\"']?{_WS}*[:=]{_WS}*[\"']?"
        r"(?![$<{%*(])(?!(?:String|string|str|Int|int|bool|Boolean|CharArray|SecureString|"
        r"Optional|Option|None|null|nil|undefined|Any|any|Text|text)\b)"
        rf"{_NOT_WS_QUOTE}{{4,}}",
        _AI,
    ),
    "azure_storage_key": (r"\bAccountKey=[A-Za-z0-9+/]{40,}={0,2}", _A),
    "npm_token": (r"\bnpm_[A-Za-z0-9]{36}\b", _A),
    "anthropic_api_key": (r"\bsk-ant-[A-Za-z0-9_-]{20,}", _A),
    "slack_webhook_url": (
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}",
        _A,
    ),
    "authorization_basic": (rf"\bAuthorization{_WS}*:{_WS}*Basic{_WS}+[A-Za-z0-9+/=]{{8,}}", _AI),
    "private_key_unterminated": (
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?![\s\S]*-----END [A-Z ]*PRIVATE KEY-----)"
        # the body as pasted, or with its line breaks turned into spaces or "\n" escapes
        r"[A-Za-z0-9+/=\r\n]*(?:(?:[ \t]|\\n)+[A-Za-z0-9+/=]{8,})*",
        _A,
    ),
    # every 40-character run after the key id (each within 200 characters of the last): the
    # secret may follow another such run ("AKIA... <40 letters> <secret>")
    "aws_secret_near_key_id": (
        rf"\bAKIA[0-9A-Z]{{16}}\b(?:[^\n]{{0,200}}?(?<!{_B64}){_B64}{{40}}(?!{_B64}))+",
        _A,
    ),
    # a password that itself holds "@" (the last "@" before the host ends it)
    "url_credentials_at": (r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@\[\]]+:[^\s/\[\]]{3,}@", _A),
    # db_password: ..., DB_PASS=..., smtp_pwd = ... (a prefixed name the others miss)
    "prefixed_password": (
        rf"\b[A-Za-z][A-Za-z0-9]*_(?:password|passwd|pass|pwd)\b[\"']?{_WS}*[:=]{_WS}*[\"']?"
        r"(?![$<{%*(])(?!(?:String|string|str|None|null|nil|undefined)\b)"
        rf"{_NOT_WS_QUOTE}{{8,}}",
        _AI,
    ),
    "pgp_private_key_block": (
        r"-----BEGIN PGP PRIVATE KEY BLOCK-----[A-Za-z0-9+/=\s:.,()<>@-]*",
        _A,
    ),
    "huggingface_token": (r"\bhf_[A-Za-z0-9]{30,}\b", _A),
    "pypi_token": (r"\bpypi-AgE[A-Za-z0-9_-]{50,}", _A),
    "sendgrid_api_key": (r"\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,64}\b", _A),
    "digitalocean_token": (r"\bdo[opr]_v1_[a-f0-9]{64}\b", _A),
    "google_oauth_token": (r"\bya29\.[0-9A-Za-z_-]{20,}", _A),
    # a 40-character AWS secret key after a label the reference's pattern misses: "AWS secret
    # key: ...", "aws-secret-access-key ...", "SecretKey: ...", "the AWS secret is ..."
    "aws_secret_labelled": (
        r"(?:\baws\b[^\n]{0,30}?\bsecret|\bsecret[ _-]?(?:access[ _-]?)?key)"
        r"[^\n]{0,30}?(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])",
        _AI,
    ),
}
_UNTERMINATED_LOOKAHEAD = r"(?![\s\S]*-----END [A-Z ]*PRIVATE KEY-----)"
EXTRA_PATTERNS: tuple[tuple[str, SecretPattern], ...] = tuple(
    (
        name,
        RegionPattern(
            pattern,
            flags,
            _KEY_END,
            before_end=False,
            fast=pattern.replace(_UNTERMINATED_LOOKAHEAD, "", 1),
        )
        if name == "private_key_unterminated"
        else _compile(name, pattern, flags),
    )
    for name, (pattern, flags) in _EXTRA_SOURCES.items()
)
#: What the default detector looks for: the reference's fourteen, then ours.
DEFAULT_PATTERNS = SECRET_PATTERNS + EXTRA_PATTERNS

PATTERN_HINTS.update(
    {
        "url_credentials": (False, (("://",), ("@",))),
        "password_assignment": (True, (("pass", "pwd"), ("=", ":"))),
        "azure_storage_key": (False, (("AccountKey=",),)),
        "npm_token": (False, (("npm_",),)),
        "anthropic_api_key": (False, (("sk-ant-",),)),
        "slack_webhook_url": (False, (("hooks.slack.com",),)),
        "authorization_basic": (True, (("authorization",), ("basic",))),
        "private_key_unterminated": (False, (("-----BEGIN ",),)),
        "aws_secret_near_key_id": (False, (("AKIA",),)),
        "url_credentials_at": (False, (("://",), ("@",))),
        "prefixed_password": (True, (("_pass", "_pwd"), ("=", ":"))),
        "pgp_private_key_block": (False, (("-----BEGIN PGP PRIVATE KEY BLOCK-----",),)),
        "huggingface_token": (False, (("hf_",),)),
        "pypi_token": (False, (("pypi-AgE",),)),
        "sendgrid_api_key": (False, (("SG.",),)),
        "digitalocean_token": (False, (("_v1_",),)),
        "google_oauth_token": (False, (("ya29.",),)),
        "aws_secret_labelled": (True, (("secret",),)),
    }
)

#: Built-in types whose match depends on the whole rest of the text (a lookahead for the END
#: line), so a joined scan could miss them: ``contains_secret_in_any`` checks them per text.
PER_TEXT_TYPES = frozenset({"private_key_unterminated"})

#: Characters removed before detection: zero-width spaces and joiners, word joiner, BOM,
#: soft hyphen (they split a secret without changing how it reads).
INVISIBLE = frozenset("\u00ad\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff")

#: Redaction passes before the whole-text fallback (one pass is enough for every known input).
MAX_REDACTION_ROUNDS = 4


def redaction_marker(secret_type: str) -> str:
    """The text that replaces a secret of ``secret_type``."""
    return f"[REDACTED:{secret_type}]"


class RegexSecretDetector:
    """The default :class:`~swarmmem.ports.detectors.SecretDetector` (stateless, thread-safe).

    Args:
        patterns: ``(type, compiled pattern)`` pairs in priority order; the reference set
            by default. Types listed in ``hints`` are skipped quickly when their literals
            are absent (see :data:`PATTERN_HINTS`).
        hints: prefilter literals per type.
    """

    def __init__(
        self,
        patterns: Sequence[tuple[str, SecretPattern]] = DEFAULT_PATTERNS,
        hints: Mapping[str, tuple[bool, tuple[tuple[str, ...], ...]]] | None = None,
    ) -> None:
        self._patterns = tuple(patterns)
        if hints is None:
            builtin = set(DEFAULT_PATTERNS)
            hints = PATTERN_HINTS if all(p in builtin for p in self._patterns) else {}
        self._hints = dict(hints)
        self._plan = tuple((name, p, self._hints.get(name)) for name, p in self._patterns)
        self._order = {name: rank for rank, (name, _) in enumerate(self._patterns)}
        # the joined scan of ``contains_secret_in_any`` is only known safe for the built-in
        # patterns (with their hints, which the per-text check reuses)
        builtin_ids = {name: id(pattern) for name, pattern in DEFAULT_PATTERNS}
        self._join_safe = all(
            builtin_ids.get(name) == id(pattern) for name, pattern in self._patterns
        ) and all(name in self._hints for name in PER_TEXT_TYPES if name in self._order)

    @property
    def types(self) -> tuple[str, ...]:
        """The secret types in pattern order."""
        return tuple(name for name, _ in self._patterns)

    def _candidates(self, text: str) -> Iterator[tuple[str, SecretPattern]]:
        """The patterns whose literals occur in ``text`` (all of them when unhinted)."""
        lowered: str | None = None
        for name, pattern, hint in self._plan:
            if hint is not None:
                on_lower, groups = hint
                if on_lower:
                    if lowered is None:
                        lowered = text.lower()
                    haystack = lowered
                else:
                    haystack = text
                passed = True
                for group in groups:
                    for literal in group:
                        if literal in haystack:
                            break
                    else:
                        passed = False
                        break
                if not passed:
                    continue
            yield name, pattern

    def find(self, text: str) -> list[SecretFinding]:
        """Every non-empty match of every pattern, grouped by pattern in pattern order.

        Matching runs on the text as it reads (:func:`normalized_view`: NFKC, invisible
        characters dropped); spans are positions in ``text`` itself.
        """
        view, origin = normalized_view(text)
        return [
            SecretFinding(type=name, start=origin[m.start()], end=origin[m.end() - 1] + 1)
            for name, pattern in self._candidates(view)
            for m in pattern.finditer(view)
            if m.end() > m.start()
        ]

    def contains_secret(self, text: str) -> bool:
        """True when any pattern matches (stops at the first hit)."""
        view = _view(text)
        return any(pattern.search(view) is not None for _, pattern in self._candidates(view))

    def may_contain_secret(self, texts: Sequence[str]) -> bool:
        """A quick screen of many texts: False means ``contains_secret`` is False for every
        one of them; True means one of them may hold a secret (check them one by one).

        The texts are joined by a newline and scanned together with every built-in pattern
        whose matches inside one text are still matches in the joined text (a newline acts
        like the end of a text for their ``\\b`` and lookarounds); a match that spans two
        texts makes the answer True without any text holding a secret. Patterns that look at
        the whole rest of the text (:data:`PER_TEXT_TYPES`) are checked text by text, and a
        custom pattern set is never joined.
        """
        if not self._join_safe:
            return any(self.contains_secret(t) for t in texts)
        texts = list(texts)
        joined = "\n".join(texts)
        if joined.isascii():  # every text is ASCII: each is its own view
            views: Sequence[str] = texts
        else:
            views = [_view(t) for t in texts]
            joined = "\n".join(views)
        for name, pattern in self._candidates(joined):
            if name in PER_TEXT_TYPES:
                if any(
                    pattern.search(v) is not None
                    for v in views
                    if all(any(lit in v for lit in group) for group in self._hints[name][1])
                ):
                    return True
            elif pattern.search(joined) is not None:
                return True
        return False

    def redact(self, text: str) -> str:
        """Replace every detected secret with ``[REDACTED:<type>]`` (see the module docstring)."""
        current = text
        for _ in range(MAX_REDACTION_ROUNDS):
            findings = self.find(current)
            if not findings:
                return current
            current = _replace_spans(current, findings, self._order)
        findings = self.find(current)
        if not findings:
            return current
        marker = redaction_marker(min(findings, key=lambda f: self._order[f.type]).type)
        return "" if self.find(marker) else marker


def _view(text: str) -> str:
    """The first half of :func:`normalized_view` (without the index map)."""
    return text if text.isascii() else normalized_view(text)[0]


def normalized_view(text: str) -> tuple[str, list[int]]:
    """``text`` as a reader sees it, and the index in ``text`` each of its characters comes from.

    Each character is NFKC-normalised on its own (full-width ``ｓｋ－`` reads as ``sk-``) and
    :data:`INVISIBLE` characters are dropped, so ``AKIA\u200b...`` cannot hide a key id. ASCII
    text is its own view.
    """
    if text.isascii():
        return text, list(range(len(text)))
    pieces: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if char in INVISIBLE or INVISIBLE_RE.match(char):
            continue
        piece = unicodedata.normalize("NFKC", char) if ord(char) > 127 else char
        pieces.append(piece)
        origin.extend([index] * len(piece))
    return "".join(pieces), origin


def _merge(findings: Iterable[SecretFinding]) -> list[list[SecretFinding]]:
    """Group findings whose spans overlap or touch, left to right."""
    groups: list[list[SecretFinding]] = []
    end = -1
    for finding in sorted(findings, key=lambda f: (f.start, -f.end)):
        if groups and finding.start <= end:
            groups[-1].append(finding)
            end = max(end, finding.end)
        else:
            groups.append([finding])
            end = finding.end
    return groups


def _replace_spans(text: str, findings: Iterable[SecretFinding], order: dict[str, int]) -> str:
    """Replace each merged span by one marker labelled as the module docstring describes."""
    pieces: list[str] = []
    cursor = 0
    for group in _merge(findings):
        start = group[0].start
        end = max(f.end for f in group)
        covering = [f for f in group if f.start == start and f.end == end]
        label = min(covering or group, key=lambda f: order[f.type]).type
        pieces.append(text[cursor:start])
        pieces.append(redaction_marker(label))
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)

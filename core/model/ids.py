"""Identifiers, hashes, text normalisation and timestamps, bit-compatible with the reference.

* ``mem_`` + the first 16 hex digits of the content hash: the same fact (ignoring case and
  whitespace) in the same scope and kind is the same memory.
* ``prop_`` + 16 hex digits of ``sha256(createdAt \\n proposer \\n text)``.
* ``bundle_<YYYYMMDDHHMMSS>_<8 hex>`` for recall bundles.
* Timestamps are ISO-8601 UTC strings with millisecond precision and a ``Z`` suffix.
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import json
import math
import re
from collections.abc import Mapping
from typing import Any

#: compact JSON, non-ASCII kept (``json.dumps`` with these options, its encoder built once)
_compact = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_FRACTION_RE = re.compile(r"^(.*T\d{2}:\d{2}:\d{2})\.(\d+)(.*)$")
_WS = re.compile(r"\s+")
_ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$")
MEMORY_ID_RE = re.compile(r"^mem_[a-f0-9]{16}$")
PROPOSAL_ID_RE = re.compile(r"^prop_[a-f0-9]{16}$")
CONTENT_HASH_RE = re.compile(r"^[a-f0-9]{64}$")

_SCOPE_GENERIC_KEYS = (
    "userId",
    "workspaceId",
    "projectId",
    "repoId",
    "repoRoot",
    "runId",
    "agentId",
)


def sha256_hex(text: str) -> str:
    """Return the lowercase hex SHA-256 of ``text`` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normalize_text(text: str) -> str:
    """Collapse every run of whitespace to one space and trim the ends.

    A ``str`` is split with ``str.split`` (its whitespace is ``\\s``'s: ``str.isspace``);
    anything else goes through the regular expression (and fails as it does)."""
    if type(text) is str:
        return " ".join(text.split())
    return _WS.sub(" ", text).strip()


def scope_key_fields(scope: Mapping[str, Any]) -> dict[str, Any]:
    """Return the ordered fields that identify ``scope`` (the reference's stable scope key)."""
    out: dict[str, Any] = {"type": scope["type"]}
    kind = scope["type"]
    if kind == "repository":
        keys: tuple[str, ...] = ("repoId",)
    elif kind == "cohort":
        keys = ("cohortId",)
    else:
        keys = _SCOPE_GENERIC_KEYS
    for key in keys:
        value = scope.get(key)
        if value:
            out[key] = value
    return out


def stable_scope_key(scope: Mapping[str, Any]) -> str:
    """Compact JSON of the identifying scope fields in insertion order.

    ``repoRoot`` never takes part for repository scopes, so two checkouts of one remote share
    their memories.
    """
    return _compact(scope_key_fields(scope))


def content_hash(scope: Mapping[str, Any], kind: str, text: str) -> str:
    """SHA-256 over the scope key, the kind and the normalised lower-cased text."""
    return content_hash_for_key(stable_scope_key(scope), kind, text)


def content_hash_for_key(scope_key: str, kind: str, text: str) -> str:
    """:func:`content_hash` of a scope whose stable key is already known."""
    return sha256_hex(f"{scope_key}\n{kind}\n{normalize_text(text).lower()}")


def memory_id_for_hash(digest: str) -> str:
    """The memory id derived from a content hash."""
    return "mem_" + digest[:16]


def memory_id(scope: Mapping[str, Any], kind: str, text: str) -> str:
    """The content-derived memory id of a fact."""
    return memory_id_for_hash(content_hash(scope, kind, text))


def proposal_id(created_at: str, proposer: str, text: str) -> str:
    """The proposal id: a hash of its creation time, proposer and normalised text."""
    return "prop_" + sha256_hex(f"{created_at}\n{proposer}\n{normalize_text(text)}")[:16]


def bundle_id(query: str, generated_at: str) -> str:
    """The recall bundle id, ``bundle_<14 digits of the timestamp>_<8 hex>``."""
    digits = re.sub(r"[-:.TZ]", "", generated_at)[:14]
    return f"bundle_{digits}_{sha256_hex(generated_at + chr(10) + query)[:8]}"


def stable_id(value: str) -> str:
    """16 hex digits identifying a workspace or repository name, case-insensitively."""
    return sha256_hex(value.lower())[:16]


def to_iso(moment: _dt.datetime) -> str:
    """Format a datetime like JavaScript's ``Date.toISOString`` (UTC, milliseconds, ``Z``)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.timezone.utc)
    utc = moment.astimezone(_dt.timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def is_iso_datetime(value: object) -> bool:
    """True when ``value`` is an ISO-8601 datetime string with a timezone."""
    if type(value) is str:
        return _is_iso_text(value)
    return (
        isinstance(value, str) and _ISO_RE.match(value) is not None and parse_iso(value) is not None
    )


@functools.lru_cache(maxsize=1024)
def _is_iso_text(value: str) -> bool:
    """:func:`is_iso_datetime` of a string, memoised (records of one write or one read share
    their timestamps)."""
    return _ISO_RE.match(value) is not None and parse_iso(value) is not None


def parse_iso(value: str | None) -> _dt.datetime | None:
    """Parse an ISO-8601 timestamp; ``None`` when absent or unparsable."""
    if not value or not isinstance(value, str):
        return None
    text = value.strip()
    if text.endswith("Z") or text.endswith("z"):
        text = text[:-1] + "+00:00"
    match = _FRACTION_RE.match(text)
    if match:  # Python accepts at most 6 fractional digits
        text = f"{match.group(1)}.{match.group(2)[:6].ljust(6, '0')}{match.group(3)}"
    try:
        parsed = _dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=_dt.timezone.utc)
    return parsed


def iso_to_ms(value: str | None) -> float | None:
    """Milliseconds since the epoch for an ISO timestamp, or ``None``."""
    return _iso_text_to_ms(value) if isinstance(value, str) else None


@functools.lru_cache(maxsize=16384)
def _iso_text_to_ms(value: str) -> float | None:
    """:func:`iso_to_ms` of a string, memoised (a recall reads the same stored timestamps
    again and again)."""
    parsed = parse_iso(value)
    return None if parsed is None else parsed.timestamp() * 1000.0


def canonical_json(value: Any) -> str:
    """Key-sorted compact JSON (the audit chain's canonical form)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def estimate_tokens(text: str) -> int:
    """The reference token estimate: ``ceil(len_utf16(text) * 0.33)``.

    The UTF-16 length is ``len(text)`` for text without characters beyond the Basic
    Multilingual Plane (checked by the encoder, not a loop), else half the length of its
    UTF-16 encoding."""
    return tokens_of_units(utf16_units(text))


def utf16_units(text: str) -> int:
    """The UTF-16 length of ``text`` (additive: a concatenation has the sum of its parts')."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def tokens_of_units(units: int) -> int:
    """:func:`estimate_tokens` of a text of ``units`` UTF-16 code units."""
    return math.ceil(units * 0.33) if units else 0


_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def with_time(value: str) -> str:
    """``value`` with a date alone (``2026-01-31``) read as its midnight UTC; anything else
    unchanged (check it with :func:`is_iso_datetime`)."""
    text = value.strip()
    return f"{text}T00:00:00.000Z" if _DATE_ONLY.match(text) else value

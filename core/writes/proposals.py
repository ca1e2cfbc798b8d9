"""Building records from agent input: tags, evidence-derived sources, file and symbol hints."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from swarmmem.core.model.ids import (
    normalize_text,
    to_iso,
)
from swarmmem.core.model.records import MemoryRecord, MemoryScope, MemorySource, identified_record

SCRATCH_TTL = dt.timedelta(days=7)
_TAG_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (tag, re.compile(pattern, re.ASCII))
    for tag, pattern in (
        ("testing", r"\b(test|spec|bun|jest|vitest)\b"),
        ("tooling", r"\b(pnpm|npm|yarn|bun|biome|eslint|typescript)\b"),
        ("security", r"\b(security|auth|token|secret|password|csp)\b"),
        ("api", r"\b(api|endpoint|graphql|rest|sdk)\b"),
        ("architecture", r"\b(architecture|decision|adr|pattern)\b"),
        ("failure", r"\b(fail|failure|regression|flaky|timeout)\b"),
    )
)
FILE_PATH_RE = re.compile(
    r"\b(?:src|tests|test|docs|scripts|packages|lib|config|examples|internal|cmd|pkg|bin|tools"
    r"|cli|api|server|client|app|core|utils|hooks|services|commands|agents|memory)"
    r"/[A-Za-z0-9._/@+-]+",
    re.ASCII,
)
_SYMBOL_RE = re.compile(r"\b[a-zA-Z_][a-zA-Z0-9_]*(?:\.[a-zA-Z_][a-zA-Z0-9_]*)*\b", re.ASCII)
_RESERVED = frozenset(
    [
        "const",
        "let",
        "var",
        "function",
        "class",
        "interface",
        "type",
        "async",
        "await",
        "return",
        "if",
        "else",
        "for",
        "while",
        "do",
        "switch",
        "case",
        "break",
        "continue",
        "new",
        "this",
        "super",
        "extends",
        "implements",
        "import",
        "export",
        "from",
        "default",
        "try",
        "catch",
        "finally",
        "throw",
        "typeof",
        "instanceof",
        "in",
        "of",
        "as",
        "yield",
        "static",
        "get",
        "set",
        "readonly",
        "public",
        "private",
        "protected",
    ]
)
_URL_RE = re.compile(r"^https?://", re.I)
_SHA_RE = re.compile(r"^[a-f0-9]{40}$", re.I)


def infer_tags(text: str) -> list[str]:
    """Tags suggested by keywords in the text."""
    lowered = text.lower()
    return [tag for tag, rule in _TAG_RULES if rule.search(lowered)]


def normalize_tags(tags: Iterable[str]) -> list[str]:
    """Lower-case, non-word runs to ``-``, trimmed, unique, at most 32."""
    out: list[str] = []
    for tag in tags:
        value = re.sub(r"[^A-Za-z0-9_-]", "-", tag.lower())
        value = re.sub(r"-+", "-", value).strip("-")
        if value and value not in out:
            out.append(value[:64])
    return out[:32]


def _unique(items: Iterable[str], limit: int) -> list[str]:
    out: list[str] = []
    for item in items:
        if item not in out:
            out.append(item)
            if len(out) >= limit:
                break
    return out


def extract_file_paths(refs: Sequence[str]) -> list[str]:
    """Repository-looking paths mentioned in evidence refs (unique, at most 20)."""
    return _unique((m.group(0) for ref in refs for m in FILE_PATH_RE.finditer(ref)), 20)


def extract_symbols(refs: Sequence[str]) -> list[str]:
    """Identifier-looking words of at least 3 characters in evidence refs (at most 20)."""
    found = (
        m.group(0)
        for ref in refs
        for m in _SYMBOL_RE.finditer(ref)
        if len(m.group(0)) >= 3 and m.group(0) not in _RESERVED
    )
    return _unique(found, 20)


def source_from_evidence(refs: Sequence[str], created_by: str | None) -> MemorySource:
    """The record source implied by the first evidence ref (no ref: an agent source)."""
    if not refs:
        return MemorySource(type="agent", created_by=created_by)
    first = refs[0]
    if _URL_RE.match(first):
        return MemorySource(type="web", url=first)
    if _SHA_RE.match(first):
        return MemorySource(type="commit", commit_sha=first)
    paths = extract_file_paths([first])
    if paths and paths[0] != first and any(c in paths[0] for c in "/\\."):
        return MemorySource(type="file", file_path=paths[0])
    if any(c in first for c in "/\\."):
        return MemorySource(type="file", file_path=first)
    return MemorySource(type="manual", ref=first)


def create_record(
    *,
    kind: str,
    text: str,
    scope: MemoryScope,
    now: dt.datetime,
    tags: Sequence[str] | None = None,
    confidence: float | None = None,
    stability: str | None = None,
    source: MemorySource,
    metadata: Mapping[str, Any] | None = None,
    expires_at: str | None = None,
    producer_session_id: str | None = None,
    producer_agent_role: str | None = None,
    provider_version: str | None = None,
    source_task_id: str | None = None,
) -> MemoryRecord:
    """A new record with content-derived id and hash; scratch records expire in 7 days."""
    stamp = to_iso(now)
    normalized = normalize_text(text)
    stability = stability or ("ephemeral" if kind == "scratch" else "durable")
    if kind == "scratch" and expires_at is None:
        expires_at = to_iso(now + SCRATCH_TTL)
    return identified_record(
        scope=scope,
        kind=kind,
        text=normalized,
        tags=tuple(normalize_tags(tags if tags is not None else infer_tags(normalized))),
        confidence=min(1.0, max(0.0, 0.5 if confidence is None else float(confidence))),
        stability=stability,
        source=source,
        created_at=stamp,
        updated_at=stamp,
        expires_at=expires_at,
        metadata=dict(metadata or {}),
        producer_session_id=producer_session_id,
        producer_agent_role=producer_agent_role,
        provider_version=provider_version,
        source_task_id=source_task_id,
        valid_from=stamp,
    )

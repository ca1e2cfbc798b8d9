"""Shared pieces of the renderers: JSON documents, error payloads and small text helpers."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from swarmmem.core.model.formatting import to_fixed

#: an escape sequence (OSC, DCS/PM/APC/SOS strings, CSI in its 7- and 8-bit forms, any other
#: ESC sequence) or a control character other than a line break or a tab; each branch ends
#: where its scan ends, so one pass is linear in the text
_TERMINAL_CONTROL = re.compile(
    r"\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[P^_X][^\x1b\x9c]*(?:\x1b\\|\x9c)?"
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|\x1b[ -/]*[0-~]?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)
#: DEL and the C1 controls, which JSON leaves unescaped
_C1_CONTROL = re.compile("[\x7f-\x9f]")


def terminal_text(text: str) -> str:
    """``text`` safe to print on a terminal: escape sequences and control characters (which
    could set the clipboard, move the cursor and overpaint lines, or hide a link) removed;
    line breaks and tabs kept. Every text a command prints goes through it."""
    return _TERMINAL_CONTROL.sub("", text)


def _heading(title: str) -> list[str]:
    return [f"## {title}", ""]


Data = Mapping[str, Any]


def json_text(data: Any) -> str:
    """A result as the pretty-printed JSON document of ``--json`` (C0 controls are escaped by
    JSON itself; DEL and the C1 controls, which a terminal may also obey, are escaped too)."""
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    return _C1_CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def error_json(payload: Data) -> str:
    """An error payload as the JSON document of ``--json`` (ASCII-escaped)."""
    return json.dumps(payload, indent=2)


def error_text(payload: Data) -> str:
    """An error payload as the line printed on stderr."""
    return f"Error: {payload['message']}"


def _bullets(pairs: Iterable[tuple[str, Any]]) -> list[str]:
    """``- label: value`` lines."""
    return [f"- {label}: {value}" for label, value in pairs]


def _code(value: Any) -> str:
    """A value in backticks; booleans as ``true``/``false``."""
    shown = str(value).lower() if isinstance(value, bool) else value
    return f"`{shown}`"


def _count(n: int, noun: str) -> str:
    """``1 row``, ``2 rows``, ``2 memories``."""
    if n == 1:
        return f"{n} {noun}"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "o", "u"):
        return f"{n} {noun[:-1]}ies"
    return f"{n} {noun}s"


def _lines(*parts: Iterable[str]) -> str:
    return "\n".join(line for part in parts for line in part)


def similar_line(similar: list[Mapping[str, Any]]) -> str:
    """``similar to: mem_a (0.82), mem_b (0.55)``."""
    shown = ", ".join(f"{s['memory_id']} ({to_fixed(s['score'], 2)})" for s in similar)
    return f"similar to: {shown}"


def _embedding_lines(cov: Data | None) -> list[str]:
    """The embeddings part of ``status``: coverage, model version and what to run."""
    if not cov or not cov.get("enabled"):
        return [] if cov is None else ["- Embeddings: `off`"]
    if not cov.get("available"):
        return [f"- Embeddings: `on` but unavailable ({cov['reason']})"]
    lines = [
        f"- Embeddings: {cov['embedded']}/{cov['total']} memories embedded "
        f"(model {_code(cov['model_version'])})"
    ]
    ann = cov.get("ann_index")
    if ann:
        lines.append(
            f"- Vector index: {ann['kind']} m={ann['m']} ef_construction={ann['ef_construction']}"
            f" (configured m={ann['configured_m']} "
            f"ef_construction={ann['configured_ef_construction']})"
        )
    if cov["needs_rebuild"]:
        why = (
            f"{cov['missing']} memories have no vector"
            if cov["missing"]
            else f"vectors were made with {cov['stored_model_version']}"
            if cov["stored_model_version"] not in (None, cov["model_version"])
            else "the vector index was built with other options than configured"
        )
        lines.append(f"- Warning: {why}; run `swarmmem rebuild-embeddings`.")
    return lines

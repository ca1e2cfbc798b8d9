"""Full-text pre-selection: the FTS5 query and the BM25-order bonus."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

FTS_STOP_WORDS: frozenset[str] = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "goal",
        "how",
        "in",
        "into",
        "is",
        "it",
        "of",
        "on",
        "or",
        "role",
        "task",
        "that",
        "the",
        "this",
        "to",
        "user",
        "what",
        "when",
        "with",
    ]
)
MAX_FTS_TERMS = 40
FTS_BONUS = 0.08
_TERM = re.compile(r"[a-z0-9_]{2,}")


def fts_terms(query: str, task: str | None, mode: str) -> list[str]:
    """Unique search terms, first-seen order, stop words and short words removed, at most 40."""
    if mode == "injection" and task:
        text = f"{task}\n{query}"
    else:
        text = f"{query}\n{task or ''}"
    return distinct_terms(_TERM.findall(text.lower()), FTS_STOP_WORDS, 3, MAX_FTS_TERMS)


def distinct_terms(
    words: Iterable[str], stop_words: Collection[str], min_length: int, most: int
) -> list[str]:
    """``words`` in first-seen order without repeats, leaving out ``stop_words`` and words
    shorter than ``min_length`` (numbers stay), at most ``most`` of them."""
    seen: dict[str, None] = {}
    for term in words:
        if term in stop_words or (len(term) < min_length and not term.isdigit()):
            continue
        seen.setdefault(term, None)
    return list(seen)[:most]


def build_fts_query(query: str, task: str | None, mode: str) -> str | None:
    """An FTS5 ``MATCH`` string of quoted terms joined by ``OR``; ``None`` without terms."""
    terms = fts_terms(query, task, mode)
    if not terms:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)

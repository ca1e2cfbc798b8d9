"""Hypothesis strategies shared by the test suite (imported as ``from strategies import ...``,
like :mod:`factories`): any text a user or a file may hold, and the small random memories the
storage state machine writes to every provider."""

from __future__ import annotations

from factories import OTHER_SCOPE, REPO_SCOPE, at, make_memory
from hypothesis import strategies as st

from swarmmem.core.model.records import MemoryRecord, MemoryScope


def any_text(*, max_size: int, without: str = "") -> st.SearchStrategy[str]:
    """Any Unicode text of at most ``max_size`` characters that UTF-8 can encode (no lone
    surrogates), without the characters of ``without``."""
    return st.text(
        st.characters(blacklist_categories=("Cs",), blacklist_characters=without),
        max_size=max_size,
    )


#: a few texts, kinds and scopes, so that random operations meet the same records again
MEMORY_TEXTS = (
    "pytest runs from the root",
    "use ruff format",
    "api lives in core",
    "pin numpy below 3",
)
MEMORY_KINDS = ("project_fact", "repo_convention", "scratch")
MEMORY_SCOPES = (REPO_SCOPE, OTHER_SCOPE)


def _memory(
    text: str, kind: str, scope: MemoryScope, minute: int, confidence: float
) -> MemoryRecord:
    return make_memory(
        text,
        kind=kind,
        scope=scope,
        created_at=at(minute, days=-8 if kind == "scratch" and minute % 2 else 0),
        updated_at=at(minute),
        confidence=confidence,
    )


#: a memory of one of :data:`MEMORY_TEXTS`, kinds and scopes (half the scratch ones expired)
memories = st.builds(
    _memory,
    st.sampled_from(MEMORY_TEXTS),
    st.sampled_from(MEMORY_KINDS),
    st.sampled_from(MEMORY_SCOPES),
    st.integers(0, 5),
    st.sampled_from((0.1, 0.5, 0.9)),
)

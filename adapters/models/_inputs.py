"""Argument checks shared by the model adapters (embedders and rerankers)."""

from __future__ import annotations

from collections.abc import Sequence


def positive_int(name: str, value: object) -> int:
    """``value`` when it is an ``int`` >= 1 (not a bool); else ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return value


def text_list(texts: Sequence[str], caller: str) -> list[str]:
    """``texts`` as a list, or ``TypeError`` naming ``caller`` for a bare str or a non-str item."""
    if isinstance(texts, str):
        raise TypeError(f"{caller}() expects a sequence of str, not a single str")
    items = list(texts)
    for index, text in enumerate(items):
        if not isinstance(text, str):
            raise TypeError(
                f"{caller}() expects str items, got {type(text).__name__} at index {index}: "
                f"{text!r}"
            )
    return items

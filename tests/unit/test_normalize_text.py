"""``normalize_text`` (behind every content hash and memory id) collapses exactly the
whitespace that the regular expression ``\\s+`` collapses, and fails as it does on anything
that is not a string."""

from __future__ import annotations

import random
import re

import pytest

from swarmmem.core.model.ids import normalize_text


def test_normalize_text_whitespace_is_the_regular_expression_one() -> None:
    """Every code point is checked, and texts that mix whitespace with other characters
    normalize as the regular expression does."""
    space = re.compile(r"\s")
    points = [chr(c) for c in range(0x110000)]
    assert [c for c in points if (space.fullmatch(c) is not None) != c.isspace()] == []
    spaces = [c for c in points if c.isspace()]
    assert len(spaces) > 20 and "\x1c" in spaces and "\u3000" in spaces
    rng = random.Random(7)
    alphabet = [*spaces, "a", "b", "\u00e9", "\u200b", "_", "\ufeff"]
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert normalize_text(text) == re.sub(r"\s+", " ", text).strip()
    assert normalize_text("\n a \t b  ") == "a b"


class _Text(str):
    """A ``str`` subclass (normalized the way the regular expression does it)."""


@pytest.mark.parametrize("value", [None, 5, b"a b", ["a"]])
def test_normalize_text_of_a_non_string_fails_as_the_regular_expression_does(value: object) -> None:
    with pytest.raises(TypeError):
        re.sub(r"\s+", " ", value).strip()  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        normalize_text(value)  # type: ignore[arg-type]


def test_normalize_text_of_a_string_subclass() -> None:
    text = _Text("  a \u3000 b ")
    assert normalize_text(text) == re.sub(r"\s+", " ", text).strip() == "a b"

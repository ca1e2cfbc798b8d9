"""The prose figures of the README and ``docs/`` are the configuration tree's defaults:
wherever the prose names a key followed by a figure (`` `learning.learningRate` (0.1)``,
`` `retrieval.denseFloor`, 0.15``), the figure is that key's default, so changing a default in
:mod:`swarmmem.core.config` without the prose fails here (the table itself is generated:
``tests/unit/test_config.py``)."""

from __future__ import annotations

import re
from pathlib import Path

from swarmmem import config

README = Path(__file__).resolve().parents[2] / "README.md"
TABLE_START = "<!-- configuration table: made from swarmmem.core.config.MemoryConfig -->\n"
TABLE_END = "<!-- end of configuration table -->\n"
#: a dotted key in backticks, then `` (`` or ``, `` and a figure
FIGURE = re.compile(r"`([a-z][A-Za-z]*(?:\.[A-Za-z]+)+)`(?: \(|, )(-?\d+(?:\.\d+)?)")


def figures(text: str) -> list[tuple[str, float]]:
    """The (configuration key, figure) pairs of ``text``'s prose (keys of the tree only)."""
    defaults = config.defaults()
    found = []
    for match in FIGURE.finditer(text):
        try:
            value = config.lookup(defaults, match.group(1))
        except KeyError:
            continue
        if isinstance(value, int | float) and not isinstance(value, bool):
            found.append((match.group(1), float(match.group(2))))
    return found


def test_the_prose_figures_are_the_defaults() -> None:
    prose = ""
    for page in [README, *sorted((README.parent / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        if TABLE_START in text:  # the generated table (docs/configuration.md) is not prose
            head, rest = text.split(TABLE_START)
            text = head + rest.split(TABLE_END)[1]
        prose += text
    named = figures(prose)
    assert len(named) >= 5, "the pattern no longer finds the README's figures"
    defaults = config.defaults()
    wrong = {k: v for k, v in named if float(config.lookup(defaults, k)) != v}
    assert wrong == {}


def test_a_figure_that_is_not_the_default_is_found() -> None:
    text = "rewards move by `learning.learningRate` (0.5) and `not.aKey` (3)"
    assert figures(text) == [("learning.learningRate", 0.5)]
    assert config.lookup(config.defaults(), "learning.learningRate") != 0.5

"""Patterns that begin with a run of characters, searched from the literal that ends the run.

A regular expression such as ``\\b[A-Za-z][A-Za-z0-9+.-]*://...`` (a URL scheme) is tried by the
engine at every start in a long run of scheme characters, and from each start it scans to the
end of the run: a text of 400 KB of ``a.a.a...`` costs minutes. :class:`AnchoredRunPattern`
finds the same matches in linear time.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["AnchoredRunPattern"]


class AnchoredRunPattern:
    """A pattern shaped ``START RUN* ANCHOR REST`` whose matches are exactly those of the
    regular expression it wraps, found in time linear in the text.

    Preconditions (true of the patterns wrapped in this package): every character ``START``
    consumes is a ``run`` character, the first character of ``anchor`` is not, and whether a
    match continues after the run does not depend on where in the run it started. Then every
    match starts in the maximal run right before an ``anchor``, and the first place in that run
    where ``start`` fits is the only start worth trying: the engine's other starts would all
    fail the same way (or lie further right). So each run is scanned a bounded number of times.

    Args:
        source: the regular expression; ``flags``: its flags.
        run: a character class (``[...]``) of the run.
        anchor: the literal that follows the run in every match.
        start: where a match may begin (e.g. ``\\b[A-Za-z]``), matched at a position.
    """

    def __init__(self, source: str, flags: int, *, run: str, anchor: str, start: str) -> None:
        self._re = re.compile(source, flags)
        self._runs = re.compile(f"{run}+", flags)
        self._start = re.compile(start, flags)
        self._anchor = anchor
        self.pattern, self.flags = self._re.pattern, self._re.flags

    def finditer(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[Any]:
        endpos = min(endpos, len(text))
        backwards: str | None = None  # the text reversed, to find where a run begins
        at = pos
        while (found := text.find(self._anchor, at, endpos)) >= 0:
            match = None
            if found > at and self._runs.match(text, found - 1, found):
                if backwards is None:
                    backwards = text[::-1]
                run = self._runs.match(backwards, len(text) - found)
                begin = max(at, len(text) - run.end()) if run is not None else found
                first = self._start.search(text, begin, found)
                if first is not None:
                    match = self._re.match(text, first.start(), endpos)
            if match is not None and match.end() > match.start():
                yield match
                at = match.end()
            else:
                at = found + 1

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Any:
        return next(self.finditer(text, pos, endpos), None)

    def fullmatch(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Any:
        return self._re.fullmatch(text, pos, endpos)

    def sub(self, repl: str, text: str) -> str:
        out, at = [], 0
        for m in self.finditer(text):
            out += [text[at : m.start()], repl]
            at = m.end()
        return "".join([*out, text[at:]])

"""Text that crosses the API boundary: a ``str`` that encodes as UTF-8, or a list of them.

Bytes, lone surrogates (what undecodable command-line bytes become) and a bare string where a
list belongs (``evidence_refs="a.py"`` would read as four one-letter refs) are refused with a
:class:`~swarmmem.core.model.errors.MemoryValidationError` naming the argument, before
anything is stored.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Mapping

from swarmmem.core.model.errors import MemoryValidationError

INVISIBLE_RE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
"""Characters that show nothing: soft hyphen, joiners and zero-width spaces, bidi controls,
variation selectors, Hangul fillers, tag characters."""


HIDDEN_RE = re.compile(
    "[\x01-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
    "\u2066-\u2069\U000e0000-\U000e0fff]"
)
"""Characters that change what a text says without being seen: control characters (other
than tab, newline and carriage return; NUL is refused on its own, with its own message),
bidi marks, embeddings, overrides and isolates, and Unicode tag characters (which can spell a
hidden instruction a model reads)."""


def without_hidden(text: str) -> str:
    """``text`` without :data:`HIDDEN_RE` characters (unchanged when it has none)."""
    if text.isascii() and text.isprintable():
        return text
    return HIDDEN_RE.sub("", text)


#: Cyrillic and Greek letters drawn like Latin ones (``Rеtrieved`` with a Cyrillic ``е``),
#: mapped to the Latin letter they pass for
LATIN_CONFUSABLES = str.maketrans(
    "АВЕЅІЈКМНОРСТХУаеѕіјорсхуԁԛԝһ"  # Cyrillic
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαικνορτυχ",  # Greek
    "ABESIJKMHOPCTXYaesijopcxydqwhABEZHIKMNOPTYXaikvoptux",
)


def folded(text: str) -> str:
    """``text`` as a reader sees it: invisible characters dropped, compatibility forms
    (full-width letters, ligatures) folded by NFKC, and Cyrillic or Greek letters that look
    Latin mapped to it (:data:`LATIN_CONFUSABLES`)."""
    return unicodedata.normalize("NFKC", INVISIBLE_RE.sub("", text)).translate(LATIN_CONFUSABLES)


def check_text(value: object, name: str) -> None:
    """``value`` is ``None`` or a ``str`` that encodes as UTF-8 and holds no NUL."""
    if value is None:
        return
    if isinstance(value, (bytes, bytearray)):
        raise MemoryValidationError(f"{name} must be text (str), not bytes; decode it first")
    if not isinstance(value, str):
        raise MemoryValidationError(f"{name} must be a string; got {type(value).__name__}")
    if "\x00" in value:
        raise MemoryValidationError(f"{name} must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise MemoryValidationError(
            f"{name} is not valid Unicode text (a lone surrogate at position {exc.start}: "
            "undecodable bytes?)"
        ) from None


def check_texts(values: object, name: str) -> None:
    """``values`` is ``None`` or a list/tuple of texts (a bare string or bytes is refused)."""
    if values is None:
        return
    if isinstance(values, (str, bytes, bytearray)):
        raise MemoryValidationError(f"{name} must be a list of strings, not a single string")
    if not isinstance(values, (list, tuple)):
        raise MemoryValidationError(
            f"{name} must be a list of strings; got {type(values).__name__}"
        )
    for index, value in enumerate(values):
        check_text(value, f"{name}[{index}]")


def check_json_texts(value: object, name: str) -> None:
    """Every string (keys included) inside a JSON-shaped ``value`` is valid text."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            check_text(key, f"{name} key")
            check_json_texts(item, f"{name}.{key}")
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            check_json_texts(item, f"{name}[{index}]")
    elif isinstance(value, (str, bytes, bytearray)):
        check_text(value, name)


def json_strings(value: object, known: Collection[str] = ()) -> list[str] | None:
    """Every string inside a JSON-shaped ``value`` (each key, then its value, in order), or
    ``None`` when something in it is bytes or a key is not a string (callers then take the
    field-by-field checks, which name the field). A key among ``known`` (names the caller
    has checked once) is left out."""
    out: list[str] = []
    return out if _gather(value, out, known) else None


def _gather(value: object, out: list[str], known: Collection[str]) -> bool:
    kind = type(value)
    if kind is str:
        out.append(value)  # type: ignore[arg-type]
    elif kind in _SCALARS:  # (no string inside, and not bytes: quickly done)
        pass
    elif kind is dict or (kind is not list and isinstance(value, Mapping)):
        append = out.append
        for key, item in value.items():  # type: ignore[attr-defined]
            if type(key) is not str and not isinstance(key, str):
                return False
            if key not in known:
                append(key)
            kind = type(item)
            if kind is str:  # the common cases, without a call
                append(item)
            elif kind in _SCALARS:
                pass
            elif not _gather(item, out, known):
                return False
    elif kind is list or isinstance(value, (list, tuple)):
        append = out.append
        for item in value:  # type: ignore[attr-defined]
            if type(item) is str:
                append(item)
            elif not _gather(item, out, known):
                return False
    elif isinstance(value, str):
        out.append(value)
    elif isinstance(value, (bytes, bytearray)):
        return False
    return True


#: the JSON scalars other than strings
_SCALARS = frozenset({int, float, bool, type(None)})


def all_encode(strings: list[str]) -> bool:
    """True when every one of ``strings`` encodes as UTF-8 (one encode of them all)."""
    try:
        "\n".join(strings).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_NAME_RE = re.compile(r"[\w.-]+")
"""A run of letters, digits, dots and hyphens: a dotted one may be a domain (one greedy class,
so a search is linear in the text)."""


MAX_HOST = 253
"""The longest domain name (a longer dotted run is not one)."""


def _latin(letter: str) -> bool:
    return letter.isascii() or unicodedata.name(letter, "").startswith("LATIN ")


def lookalike_hosts(text: str) -> list[tuple[str, str]]:
    """The domain names in ``text`` that mix ASCII letters with letters of another script
    (``pаypal.com`` with a Cyrillic ``а``: a look-alike of a familiar name), each with the
    ASCII form a browser would resolve (its IDNA ``xn--`` spelling), in order, once each. A
    name all in one non-Latin script (``пример.рф``) is an ordinary international name and
    is not listed, nor Latin letters with accents (``café.fr``)."""
    found: dict[str, str] = {}
    for match in _NAME_RE.finditer(text):
        host = match.group().strip(".-_")
        if host.isascii() or "." not in host or len(host) > MAX_HOST or host in found:
            continue
        letters = [c for c in host if c.isalpha()]
        if not any(c.isascii() for c in letters) or all(_latin(c) for c in letters):
            continue  # one non-Latin script, or Latin letters with accents (café.fr)
        try:
            found[host] = host.encode("idna").decode("ascii")
        except UnicodeError:  # not a valid international name: show its code points
            found[host] = host.encode("ascii", "backslashreplace").decode("ascii")
    return list(found.items())


def lookalike_note(*texts: str | None) -> str | None:
    """One line naming the look-alike domain names of ``texts`` with their ASCII form
    (:func:`lookalike_hosts`), or ``None`` when there is none."""
    found = dict(pair for text in texts if text for pair in lookalike_hosts(text))
    if not found:
        return None
    return "; ".join(f"{host!r} is {ascii_form}" for host, ascii_form in found.items())

"""Files and symbols named in a query: the code references recall ranks by (not the
``reference`` profile, which keeps the reference implementation's token overlaps).

A query names a file when it holds a path (``console.py``, ``attr/_make.py``,
``src/app/main``: a name with a known source extension, or a path with a slash that does not
end in one) and a symbol when it holds an identifier that a memory cites and writes as code. A
memory cites the files of its source, of its ``files`` metadata, of its anchors and of its
evidence fingerprints, and the symbols of its ``symbol(s)`` metadata and anchors.

What is not a signal on its own: an extension (``py``, ``.py``, ``*.py``), a directory, a
plain word (``field``, ``validate``: it names a symbol only as ``field()`` or in backticks). A
named file matches a cited file when one path ends with the other (whole components); a symbol
matches when the query writes the cited name, or its last dotted component, with the same
case.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from swarmmem.core.model.records import MemoryRecord

#: source and configuration extensions: ``name.ext`` with one of these is a file reference,
#: and its extension is no query word
SOURCE_EXTENSIONS = frozenset(
    [
        "c",
        "cc",
        "cfg",
        "cjs",
        "cpp",
        "cs",
        "css",
        "go",
        "h",
        "hpp",
        "html",
        "ini",
        "java",
        "js",
        "json",
        "jsx",
        "kt",
        "lock",
        "md",
        "mjs",
        "php",
        "pxd",
        "pyi",
        "py",
        "pyx",
        "rb",
        "rs",
        "rst",
        "scss",
        "sh",
        "sql",
        "swift",
        "toml",
        "ts",
        "tsx",
        "txt",
        "vue",
        "xml",
        "yaml",
        "yml",
    ]
)
_PATH = re.compile(
    r"(?<![\w@/.])((?:[\w.-]+/)*[\w-][\w.-]*\.([A-Za-z0-9]{1,5})|(?:[\w.-]+/)+[\w.-]+)(?![\w/])"
)
#: a maximal run of the characters a path is made of; :data:`_PATH` matches inside one
_PATH_RUN = re.compile(r"[\w./-]+")
#: a run longer than this is no file reference (and is not searched: :data:`_PATH` backtracks
#: within a run, so each search is kept short and the whole scan linear)
MAX_PATH_CHARS = 256
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(\(\))?")
#: the metadata keys that list a memory's files, and its symbols
FILE_KEYS = ("file", "filePath", "files", "touchedFiles")
SYMBOL_KEYS = ("symbol", "symbols")


def _paths(query: str) -> Iterator[re.Match[str]]:
    """The :data:`_PATH` matches of ``query``, searched run by run (:data:`_PATH_RUN`; a match
    never spans two runs, and the pattern's look-behind still sees the character before its
    run), leaving out runs longer than :data:`MAX_PATH_CHARS`: linear in ``query``."""
    for run in _PATH_RUN.finditer(query):
        start, end = run.span()
        if end - start <= MAX_PATH_CHARS:
            yield from _PATH.finditer(query, start, end)


def query_files(query: str) -> frozenset[str]:
    """The file paths ``query`` names, lower-cased, without ``./`` and a trailing slash; a
    bare extension or a path ending in a slash (a directory) is none."""
    found = set()
    for match in _paths(query):
        path, extension = match.group(1), match.group(2)
        if path.endswith("/"):
            continue
        known = extension is None or extension.lower() in SOURCE_EXTENSIONS
        if not known and "/" not in path:
            continue  # "e.g", "v1.2", "Console.print": not files
        name = path.rsplit("/", 1)[-1]
        stem = name.rsplit(".", 1)[0] if "." in name else name
        if not stem.strip(".*-_"):
            continue  # ".py", "*.py"
        found.add(path.lower().removeprefix("./"))
    return frozenset(found)


def query_symbols(query: str) -> frozenset[str]:
    """The identifiers ``query`` writes as code: with an underscore, a dot, an inner
    capital, a call's ``()``, in backticks, or capitalised after the first word (``Console``);
    dotted names also by each dotted suffix (``Console.is_terminal`` gives ``is_terminal``),
    case kept."""
    found = set()
    first_word = len(query) - len(query.lstrip())  # where the query's first word starts
    for match in _IDENT.finditer(query):
        name = match.group(0)
        start, end = match.span()
        quoted = query[start - 1 : start] == "`" and query[end : end + 1] == "`"
        called = match.group(1) is not None
        name = name.removesuffix("()")
        capital = name[:1].isupper() and start > first_word
        if not 2 <= len(name) <= MAX_PATH_CHARS or not (
            called or quoted or capital or _code_like(name)
        ):
            continue  # a name of hundreds of characters is no symbol of the code
        parts = name.split(".")
        for i in range(len(parts)):
            found.add(".".join(parts[i:]))
    return frozenset(found)


def metadata_strings(metadata: Mapping[str, Any], keys: Iterable[str]) -> list[str]:
    """The strings under ``keys`` of ``metadata`` (a string, or the strings of a list)."""
    out: list[str] = []
    for key in keys:
        value = metadata.get(key)
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list | tuple):
            out.extend(v for v in value if isinstance(v, str))
    return out


def cited_files(record: MemoryRecord) -> tuple[str, ...]:
    """The files ``record`` cites, lower-cased."""
    files = metadata_strings(record.metadata, FILE_KEYS)
    if isinstance(record.source.file_path, str):
        files.append(record.source.file_path)
    files += [anchor.file for anchor in record.anchors or ()]
    prints = record.metadata.get("evidenceFingerprints")
    if isinstance(prints, list):
        files += [str(p["path"]) for p in prints if isinstance(p, Mapping) and "path" in p]
    return tuple(dict.fromkeys(f.lower().removeprefix("./") for f in files if f))


def cited_symbols(record: MemoryRecord) -> tuple[str, ...]:
    """The symbols ``record`` cites, case kept."""
    symbols = metadata_strings(record.metadata, SYMBOL_KEYS)
    symbols += [anchor.symbol for anchor in record.anchors or () if anchor.symbol]
    return tuple(dict.fromkeys(s.strip() for s in symbols if s.strip()))


def _same_file(named: str, cited: str) -> bool:
    return named == cited or cited.endswith("/" + named) or named.endswith("/" + cited)


def _code_like(name: str) -> bool:
    return "_" in name.strip("_") or "." in name or any(c.isupper() for c in name[1:])


def names_file(files: frozenset[str], cited: Iterable[str]) -> bool:
    """Whether a file of ``files`` (from :func:`query_files`) is one of ``cited``."""
    return bool(files) and any(_same_file(n, c) for c in cited for n in files)


def names_symbol(symbols: frozenset[str], cited: Iterable[str]) -> bool:
    """Whether the query's code identifiers (from :func:`query_symbols`) name a ``cited``
    symbol: its whole name or its last dotted component, same case."""
    if not symbols:
        return False
    return any(s in symbols or s.rsplit(".", 1)[-1] in symbols for s in cited)


def without_extensions(query: str) -> str:
    """``query`` with the source extension of every file it names dropped (``console.py``
    becomes ``console``), so that the extension is no query word of the full-text search."""

    parts: list[str] = []
    at = 0
    for match in _paths(query):
        path, extension = match.group(1), match.group(2)
        if extension is not None and extension.lower() in SOURCE_EXTENSIONS:
            parts.append(query[at : match.start(1)] + path[: -len(extension) - 1])
            at = match.end(1)
    parts.append(query[at:])
    return "".join(parts)

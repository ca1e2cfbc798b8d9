"""The project's files as evidence: refs checked at propose time, fingerprints taken when a
memory is written, and compared at recall time (implements
:class:`~swarmmem.ports.evidence.SourceChecker`).

Ref forms: ``path``, ``path:LINE``, ``path:START-END``, ``path#symbol`` (and ``path:LINE#symbol``),
a commit (7 to 40 hex digits), a URL, ``manual:<note>`` or ``evidence-cache:<id>``. A path is
relative to the project root and must stay inside it. Git is asked (when the root is in a work
tree) whether a file is ignored and whether a commit exists; without git those two checks are
skipped. A file is read only when its size or modification time differ from what was seen.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

MAX_FILE_BYTES = 8 << 20
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
MAX_RELOCATE_WORK = 4_000_000
MAX_CITED_CHARS = 4000
"""The longest cited text (a symbol's or a line range's lines) a fingerprint keeps, so that
``verify`` can show what changed in it; a longer one is kept as a digest only."""
"""The most lines compared to find a cited line range that moved (width times file lines)."""
"""A cited file larger than this is fingerprinted by size and time only (never read)."""
RACY_NS = 2_000_000_000
"""A file modified this recently (ns) may change again within the same clock tick without its
size or time moving, so its digest is not trusted from the stat alone (as git does)."""

_REF = re.compile(
    r"^(?P<path>[^#]+?)(?::(?P<start>\d+)(?:-(?P<end>\d+))?)?(?:#(?P<symbol>[A-Za-z_][\w.]*))?$"
)
_COMMIT = re.compile(r"^[0-9a-fA-F]{7,40}$")
_PASS_PREFIXES = ("http://", "https://", "manual:", "evidence-cache:")


class FileRef:
    """A parsed file ref."""

    __slots__ = ("end", "path", "ref", "start", "symbol")

    def __init__(self, ref: str, path: str, start: int | None, end: int | None, symbol: str | None):
        self.ref, self.path, self.start, self.end, self.symbol = ref, path, start, end, symbol


def parse_file_ref(ref: str) -> FileRef | None:
    """The file ref in ``ref``, or ``None`` for URLs, notes, cache refs and commits."""
    text = ref.strip()
    if not text or text.lower().startswith(_PASS_PREFIXES) or _COMMIT.match(text):
        return None
    match = _REF.match(text)
    if match is None:
        return FileRef(text, text, None, None, None)
    start = int(match["start"]) if match["start"] else None
    end = int(match["end"]) if match["end"] else start
    return FileRef(text, match["path"].strip(), start, end, match["symbol"])


def symbol_lines(text: str, symbol: str) -> list[str]:
    """The lines of ``text`` about ``symbol``: each line mentioning its last part as a whole
    word, with the block indented under it (a definition's body); empty when it never occurs."""
    name = re.escape(symbol.rsplit(".", 1)[-1])
    pattern = re.compile(rf"(?<![\w]){name}(?![\w])")
    lines = text.splitlines()
    picked: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not pattern.search(line):
            continue
        picked.append(line)
        depth = len(line) - len(line.lstrip())
        while i < len(lines) and (
            not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > depth
        ):
            picked.append(lines[i])
            i += 1
    return picked


def _line_range(full: Path, start: int, end: int) -> list[str] | None:
    """Lines ``start`` to ``end`` (1-based, inclusive) of the file, or ``None`` when the file
    is unreadable, too large or shorter."""
    lines = _text_lines(full)
    if lines is None or not 1 <= start <= end <= len(lines):
        return None
    return lines[start - 1 : end]


def _text_lines(full: Path) -> list[str] | None:
    """The file's lines (never read through a link), or ``None`` when it is unreadable or
    too large."""
    try:
        fd = os.open(full, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
                return None
            return handle.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return None


def _lines_hold(full: Path, fp: Mapping[str, Any]) -> bool:
    """True when the lines a fingerprint cites are still in the file: where they were, or
    moved elsewhere as a whole (lines added or removed above them)."""
    lines = _text_lines(full)
    cited = fp.get("lines")
    if lines is None or not isinstance(cited, list) or len(cited) != 2:
        return False
    start, end = int(cited[0]), int(cited[1])
    want, width = fp["linesSha256"], end - start + 1
    if width < 1:
        return False
    if 1 <= start <= end <= len(lines) and _digest("\n".join(lines[start - 1 : end])) == want:
        return True
    return _relocated(lines, fp) is not None  # too long a search says it changed


def _relocated(lines: list[str], fp: Mapping[str, Any]) -> int | None:
    """The first line where the fingerprint's cited lines stand whole now (``None``: nowhere,
    or too long a search)."""
    want, (start, end) = fp.get("linesSha256"), fp["lines"]
    width = int(end) - int(start) + 1
    if width < 1 or width * len(lines) > MAX_RELOCATE_WORK:
        return None
    for i in range(len(lines) - width + 1):
        if _digest("\n".join(lines[i : i + width])) == want:
            return i + 1
    return None


def _keep_cited(entry: dict[str, Any], text: str | None) -> None:
    """Keep ``text`` as the fingerprint's ``cited`` text when it is short enough."""
    if text is not None and len(text) <= MAX_CITED_CHARS:
        entry["cited"] = text


def _digest(data: bytes | str) -> str:
    raw = data.encode("utf-8", "replace") if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


class RepositorySources:
    """The files of the project at ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        self._git: bool | None = None
        self._seen: dict[str, tuple[int, int, str, dict[str, str]]] = {}
        self._lock = threading.Lock()

    # ---------------------------------------------------------------- git
    def _in_git(self) -> bool:
        if self._git is None:
            self._git = self._run_git("rev-parse", "--is-inside-work-tree") == (0, "true")
        return self._git

    def _run_git(self, *args: str) -> tuple[int, str]:
        try:
            done = subprocess.run(
                ["git", "-C", str(self.root), *args],
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return 127, ""
        return done.returncode, done.stdout.strip()

    def _ignored(self, paths: Sequence[str]) -> set[str]:
        if not paths or not self._in_git():
            return set()
        code, out = self._run_git("check-ignore", "--", *paths)
        return set(out.splitlines()) if code == 0 else set()

    # -------------------------------------------------------------- checks
    def _resolve(self, path: str) -> Path | None:
        """``path`` under the root, when it is relative and stays inside it."""
        if os.path.isabs(path) or path.startswith("~"):
            return None
        full = (self.root / path).resolve()
        try:
            full.relative_to(self.root)
        except ValueError:
            return None
        return full

    def check(self, refs: Sequence[str]) -> list[str]:
        problems: list[str] = []
        files: list[tuple[FileRef, Path]] = []
        for ref in refs:
            text = ref.strip()
            if _COMMIT.match(text):
                if self._in_git() and self._run_git("cat-file", "-e", f"{text}^{{commit}}")[0]:
                    problems.append(f"evidence {text!r} is not a commit of this repository")
                continue
            parsed = parse_file_ref(text)
            if parsed is None:
                continue
            full = self._resolve(parsed.path)
            if full is None:
                problems.append(
                    f"evidence {text!r} must be a path relative to the project root, inside it"
                )
                continue
            try:
                info = os.stat(full)
            except OSError:
                problems.append(
                    f"evidence {text!r} names no file of the repository (paths are relative "
                    "to the project root; a free-text note is written manual:<note>)"
                )
                continue
            if not stat.S_ISREG(info.st_mode):
                problems.append(f"evidence {text!r} is not a regular file")
                continue
            files.append((parsed, full))
        ignored = self._ignored([str(full.relative_to(self.root)) for _, full in files])
        for parsed, full in files:
            if str(full.relative_to(self.root)) in ignored:
                problems.append(f"evidence {parsed.ref!r} is a file git ignores")
                continue
            if parsed.start is None and parsed.symbol is None:
                continue
            content = self._read_text(full)
            if content is None:
                problems.append(f"evidence {parsed.ref!r} cannot be read as text")
                continue
            count = len(content.splitlines())
            if parsed.start is not None:
                end = parsed.end or parsed.start
                if not 1 <= parsed.start <= end <= count:
                    cited = f"line {end}" if end == parsed.start else f"lines {parsed.start}-{end}"
                    problems.append(
                        f"evidence {parsed.ref!r} cites {cited}, but {parsed.path} has "
                        f"{count} line{'s' if count != 1 else ''}"
                    )
            if parsed.symbol is not None and not symbol_lines(content, parsed.symbol):
                problems.append(f"evidence {parsed.ref!r}: {parsed.symbol} does not occur in it")
        return problems

    @staticmethod
    def _read_text(full: Path) -> str | None:
        try:
            if full.stat().st_size > MAX_FILE_BYTES:
                return None
            return full.read_bytes().decode("utf-8", "replace")
        except OSError:
            return None

    # -------------------------------------------------------- fingerprints
    def fingerprints(self, refs: Sequence[str]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for ref in refs:
            parsed = parse_file_ref(ref)
            full = self._resolve(parsed.path) if parsed is not None else None
            if parsed is None or full is None:
                continue
            seen = self._observe(full, parsed.symbol)
            if seen is None:
                continue
            size, mtime, digest, symbols = seen
            entry: dict[str, Any] = {
                "path": str(full.relative_to(self.root)),
                "sha256": digest,
                "size": size,
                "mtimeNs": mtime,
            }
            if parsed.symbol is not None and parsed.symbol in symbols:
                entry["symbol"] = parsed.symbol
                entry["symbolSha256"] = symbols[parsed.symbol]
                _keep_cited(entry, self.cited_now(entry))
            elif parsed.start is not None and parsed.end is not None:
                cited = _line_range(full, parsed.start, parsed.end)
                if cited is not None:  # the lines cited, found again by content if they move
                    entry["lines"] = [parsed.start, parsed.end]
                    entry["linesSha256"] = _digest("\n".join(cited))
                    _keep_cited(entry, "\n".join(cited))
            out.append(entry)
        return out

    def cited_now(self, fingerprint: Mapping[str, Any]) -> str | None:
        """What the fingerprint's symbol or line range says in its file now: the symbol's
        lines, or the cited lines (where they were, or where they moved as a whole); ``None``
        for a whole-file fingerprint or a file that is gone or unreadable."""
        try:
            full = self._resolve(str(fingerprint["path"]))
        except (KeyError, TypeError):
            return None
        lines = _text_lines(full) if full is not None else None
        symbol, cited = fingerprint.get("symbol"), fingerprint.get("lines")
        if lines is None:
            return None
        if isinstance(symbol, str):
            return "\n".join(symbol_lines("\n".join(lines), symbol))
        if not (isinstance(cited, list) and len(cited) == 2):
            return None
        start, end = int(cited[0]), int(cited[1])
        found = _relocated(lines, fingerprint)
        if found is not None:
            start, end = found, found + end - start
        return "\n".join(lines[max(start, 1) - 1 : end])

    def _observe(
        self, full: Path, symbol: str | None
    ) -> tuple[int, int, str, dict[str, str]] | None:
        """``(size, mtime_ns, digest, {symbol: digest})`` of ``full`` (``None`` when it is not
        a readable regular file, or has become a link since it was resolved); read again only
        when size or time moved. The file is opened once, without following a link, and
        stat and content come from that one descriptor: a file swapped for a link between
        the check and the read is never read through it."""
        try:
            fd = os.open(full, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
        except OSError:
            return None
        with os.fdopen(fd, "rb") as handle:
            return self._observe_open(full, handle, symbol)

    def _observe_open(
        self, full: Path, handle: Any, symbol: str | None
    ) -> tuple[int, int, str, dict[str, str]] | None:
        try:
            info = os.fstat(handle.fileno())
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode):
            return None
        key = str(full)
        with self._lock:
            cached = self._seen.get(key)
        same = cached is not None and cached[:2] == (info.st_size, info.st_mtime_ns)
        settled = time.time_ns() - info.st_mtime_ns >= RACY_NS
        if cached is not None and same and settled and (symbol is None or symbol in cached[3]):
            return cached
        seen: tuple[int, int, str, dict[str, str]]
        if info.st_size > MAX_FILE_BYTES:
            seen = (info.st_size, info.st_mtime_ns, f"size:{info.st_size}", {})
        else:
            try:
                data = handle.read()
            except OSError:
                return None
            symbols = dict(cached[3]) if cached is not None and same else {}
            if symbol is not None:
                text = data.decode("utf-8", "replace")
                symbols[symbol] = _digest("\n".join(symbol_lines(text, symbol)))
            seen = (info.st_size, info.st_mtime_ns, _digest(data), symbols)
        with self._lock:
            self._seen[key] = seen
        return seen

    def status(self, fingerprints: Sequence[Mapping[str, Any]]) -> str:
        if not fingerprints:
            return "unverified"
        changed = False
        for fp in fingerprints:
            try:
                path = str(fp["path"])
                full = self._resolve(path)
                if full is None:
                    return "missing"
                symbol = fp.get("symbol")
                seen = self._observe(full, symbol if isinstance(symbol, str) else None)
                if seen is None:
                    return "missing"
                if isinstance(symbol, str) and fp.get("symbolSha256"):
                    changed = changed or seen[3].get(symbol) != fp["symbolSha256"]
                elif fp.get("linesSha256") and seen[2] != fp.get("sha256"):
                    changed = changed or not _lines_hold(full, fp)
                else:
                    changed = changed or seen[2] != fp.get("sha256")
            except (KeyError, TypeError, ValueError):
                continue
        return "changed" if changed else "fresh"

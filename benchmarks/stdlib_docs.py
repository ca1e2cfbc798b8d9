"""The docstrings of this Python's standard library, read in one fixed order: the source of
the "facts about other code" that the benchmarks store (``conftest.code_facts``) and that the
code-memory quality runner mixes in as distractors (``quality/code_memory.py``)."""

from __future__ import annotations

import ast
import sysconfig
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath


def stdlib_docstrings(
    skip: Callable[[PurePosixPath], bool], kinds: tuple[type[ast.AST], ...]
) -> Iterator[tuple[PurePosixPath, ast.AST, str]]:
    """Each non-empty docstring of a node of ``kinds`` in the standard library's ``.py``
    files, in sorted file order and ``ast.walk`` order within a file: the file's path
    relative to the library, the node and the docstring. Files ``skip`` says yes to (given
    that relative path) and files that do not parse are left out."""
    base = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(base.rglob("*.py")):
        relative = PurePosixPath(path.relative_to(base).as_posix())
        if skip(relative):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, kinds):
                doc = ast.get_docstring(node)  # type: ignore[arg-type]
                if doc:
                    yield relative, node, doc

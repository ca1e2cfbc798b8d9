"""``swarmmem evidence``: keep source documents out of memory and cite them by ref.

``add`` stores a document (a file, or ``-`` for standard input; secrets redacted first) and
prints its ``evidence-cache:evd_...`` ref, which proposals may cite in ``--evidence``; a cited
ref the cache does not hold is refused. ``show`` prints one document, ``list`` all of them.
Retention follows ``evidence.cacheMaxBytes`` and ``evidence.cacheMaxRecords``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from swarmmem.cli import render
from swarmmem.cli.app import State, command, emit, main
from swarmmem.core.model.errors import MemoryValidationError, NotFoundError


@main.group()
def evidence() -> None:
    """Add, show and list documents of the evidence cache."""


@evidence.command("add")
@click.argument("file", default="-")
@click.option("--source", default=None, help="Where it came from (default: the file path).")
@command
def add(state: State, file: str, source: str | None) -> None:
    """Store FILE (``-``: standard input) and print its evidence ref."""
    if file == "-":
        text = sys.stdin.read()
        origin = source or "stdin"
    else:
        path = Path(file)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise MemoryValidationError(f"cannot read {file}: {exc}") from exc
        origin = source or file
    with state.open() as mem:
        ref = mem.evidence.add(text, origin)
        document = mem.evidence.get(ref)
    emit(state, render.evidence_json(document, added=True), render.evidence_added_text)


@evidence.command("show")
@click.argument("ref")
@command
def show(state: State, ref: str) -> None:
    """Print the document cited by REF."""
    with state.open() as mem:
        document = mem.evidence.get(ref)
    if document is None:
        raise NotFoundError(f"the evidence cache holds no document {ref}")
    emit(state, render.evidence_json(document), render.evidence_text)


@evidence.command("list")
@command
def list_documents(state: State) -> None:
    """List the cached documents, oldest first."""
    with state.open() as mem:
        documents = [render.evidence_json(d, with_text=False) for d in mem.evidence]
    emit(state, {"success": True, "documents": documents}, render.evidence_list_text)

"""``swarmmem ui``: a local web viewer and review page for one project's memory (or, on a
shared PostgreSQL store, the projects it serves to this role: :mod:`swarmmem.ui.projects`).

Four pages over the :class:`~swarmmem.memory.Memory` facade (:mod:`swarmmem.ui.pages`):
memories (search through the real recall, the filtered list, a memory's page), review (the
pending queue, decided through ``Memory.curate`` as ``swarmmem review`` does), sessions (each
session's timeline from its run log) and health (status, evidence, the audit chain).

Safe by construction: it listens on 127.0.0.1 only and answers only requests carrying the
random token of this start (:mod:`swarmmem.ui.guard`), checks Host and Origin, takes state
changes as POST forms with a CSRF token, sends a strict Content Security Policy, escapes and
reveals every stored string (:mod:`swarmmem.ui.viewer`), and opens the browser through a
private file (:mod:`swarmmem.ui.server`).

Nothing here is imported by ``import swarmmem``; Starlette, Jinja2 and uvicorn (the ``ui``
extra) are imported only when the viewer starts.
"""

from __future__ import annotations

UI_EXTRA_MODULES = ("starlette", "jinja2", "uvicorn", "python_multipart")
"""The modules of the ``ui`` extra (``python_multipart`` reads the forms)."""


def missing_modules() -> list[str]:
    """The modules of the ``ui`` extra that cannot be imported here."""
    import importlib.util

    return [name for name in UI_EXTRA_MODULES if importlib.util.find_spec(name) is None]


__all__ = ["UI_EXTRA_MODULES", "missing_modules"]

"""The ``swarmmem`` command line.

:data:`main` is the root group of :mod:`swarmmem.cli.app`; importing this package attaches every
command family to it: :mod:`~swarmmem.cli.setup` (init), :mod:`~swarmmem.cli.memory` (status,
recall, propose, curate, outcome, verdict), :mod:`~swarmmem.cli.manage` (list, show, forget),
:mod:`~swarmmem.cli.evidence` (evidence add, show, list), :mod:`~swarmmem.cli.maintenance`
(pending and the reports, compact, reflect, rebuild-embeddings, audit-verify),
:mod:`~swarmmem.cli.data` (export, import, evaluate, dataset), :mod:`~swarmmem.cli.migrate` and
:mod:`~swarmmem.cli.serve` (mcp, demo) and :mod:`~swarmmem.cli.hooks` (hook). Every rendering
lives in :mod:`~swarmmem.cli.render`.
"""

from swarmmem.cli import (
    data,
    evidence,
    hooks,
    maintenance,
    manage,
    memory,
    migrate,
    review,
    serve,
    setup,
)
from swarmmem.cli.app import main

COMMAND_MODULES = (
    setup,
    memory,
    manage,
    evidence,
    maintenance,
    review,
    data,
    migrate,
    serve,
    hooks,
)
"""The modules whose import attaches their commands to :data:`main`."""

__all__ = ["COMMAND_MODULES", "main"]

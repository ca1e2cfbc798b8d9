"""The ``swarmmem`` command line.

:data:`main` is the root group of :mod:`swarmmem.cli.app`. Each command family lives in a
module of its own that attaches its commands to :data:`main` when imported:
:mod:`~swarmmem.cli.setup` (init, grant), :mod:`~swarmmem.cli.configure` (config),
:mod:`~swarmmem.cli.memory` (status, recall, propose, curate, outcome, verdict, undo),
:mod:`~swarmmem.cli.manage` (list, show, forget, rescope),
:mod:`~swarmmem.cli.evidence` (evidence add, show, list), :mod:`~swarmmem.cli.maintenance`
(pending and the reports, compact, reflect, rebuild-embeddings, audit-verify, audit-key),
:mod:`~swarmmem.cli.review`, :mod:`~swarmmem.cli.data` (export, import, evaluate, dataset),
:mod:`~swarmmem.cli.migrate`, :mod:`~swarmmem.cli.serve` (mcp, demo, ui) and
:mod:`~swarmmem.cli.hooks` (hook). :data:`COMMANDS` names the module of each command, and the
group imports it on first use, so one command pays only for its own imports (``--help``
imports them all). Every rendering lives in :mod:`~swarmmem.cli.render`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from swarmmem.cli.app import main

COMMANDS: dict[str, str] = {
    **dict.fromkeys(("init", "grant"), "setup"),
    "config": "configure",
    **dict.fromkeys(("status", "recall", "propose", "curate"), "memory"),
    **dict.fromkeys(("outcome", "verdict", "undo"), "memory"),
    **dict.fromkeys(("list", "show", "forget", "rescope"), "manage"),
    "evidence": "evidence",
    **dict.fromkeys(("pending", "value-log", "recall-log", "stale", "verify"), "maintenance"),
    **dict.fromkeys(("compact", "consolidate", "reflect"), "maintenance"),
    **dict.fromkeys(("rebuild-embeddings", "audit-verify", "audit-key"), "maintenance"),
    "review": "review",
    **dict.fromkeys(("export", "import", "evaluate", "dataset"), "data"),
    **dict.fromkeys(("migrate", "postgres-rls"), "migrate"),
    **dict.fromkeys(("mcp", "demo", "ui"), "serve"),
    "hook": "hooks",
}
"""Each command of :data:`main` and the module (of this package) that attaches it."""

main.lazy = COMMANDS


def command_modules() -> tuple[ModuleType, ...]:
    """Every command module, imported (each attaches its commands to :data:`main`)."""
    return tuple(
        importlib.import_module(f"{__name__}.{name}") for name in dict.fromkeys(COMMANDS.values())
    )


__all__ = ["COMMANDS", "command_modules", "main"]

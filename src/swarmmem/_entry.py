"""The ``swarmmem`` console script: ``hook`` calls take the narrow path, the rest the CLI.

A host runs ``swarmmem hook <host> <event>`` on every prompt, so that call must not pay for
importing the whole command line (click, rich, numpy): it goes straight to
:func:`swarmmem.hooks.client.main`. Every other command (and ``hook`` with other global
options) goes through :data:`swarmmem.cli.main`.
"""

from __future__ import annotations

import sys


def _is_hook_call(args: list[str]) -> bool:
    while args[:1] and args[0] in ("--root", "--config") and len(args) > 1:
        args = args[2:]
    return len(args) == 3 and args[0] == "hook" and not args[1].startswith("-")


def main() -> int | None:
    """Run ``swarmmem`` with ``sys.argv``."""
    if _is_hook_call(sys.argv[1:]):
        from swarmmem.hooks.client import main as hook_main

        return hook_main(sys.argv[1:])
    from swarmmem.cli import main as cli_main

    return cli_main()  # type: ignore[no-any-return]

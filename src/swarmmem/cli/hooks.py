"""``swarmmem hook <host> <event>``: what an agent host runs (see :mod:`swarmmem.hooks`).

The console script sends plain ``hook`` calls straight to :mod:`swarmmem.hooks.client`
without loading the command line; this command is the same call for every other spelling
(global options, ``python -m swarmmem.cli``) and documents it in ``--help``.
"""

from __future__ import annotations

import sys

import click

from swarmmem.cli.app import State, main
from swarmmem.hooks.hosts import HOSTS


@main.command()
@click.argument("host", type=click.Choice(HOSTS))
@click.argument("event")
@click.pass_obj
def hook(state: State, host: str, event: str) -> None:
    """Answer an agent host's hook: read its JSON on stdin, write its output; exit 0.

    HOST is claude-code, codex, gemini, cursor or opencode; EVENT the host's event name
    (SessionStart, UserPromptSubmit, BeforeAgent, beforeSubmitPrompt, Stop, ...) or its
    kebab case (session-start, user-prompt-submit, ...). Session start gives a brief of the
    project's most valuable memories, a prompt the injection recall, and stop, session end
    and pre-compact file the agent's memoryProposals as pending proposals.
    """
    from swarmmem.hooks.client import run

    sys.exit(run(host, event, root=state.root_given, config=state.config))

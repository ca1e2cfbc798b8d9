"""Serving and showing: ``mcp`` (the MCP server over stdio) and ``demo``."""

from __future__ import annotations

import click

from swarmmem.cli import render
from swarmmem.cli.app import State, command, main

TRANSPORTS = ("stdio",)
"""The transports ``swarmmem mcp`` serves on."""


@main.command()
@click.option("--transport", default="stdio", type=click.Choice(TRANSPORTS))
@command
def mcp(state: State, transport: str) -> None:
    """Serve swarm_memory_recall/propose/outcome over MCP (stdio).

    Scopes come from --root and the context options; the session is --session or a fresh
    UUID for this server process.
    """
    from swarmmem.mcp import serve

    serve(state.root, state.config, state.context)


@main.command()
@click.option("--keep", is_flag=True, help="Keep the temporary project and print its path.")
@command
def demo(state: State, keep: bool) -> None:
    """End-to-end demo on the embedded SQLite store in a temporary project."""
    from swarmmem.demo import run_demo

    run_demo(render_evaluation=render.evaluation_text, keep=keep, as_json=state.as_json)

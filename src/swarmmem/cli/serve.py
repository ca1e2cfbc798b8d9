"""Serving and showing: ``mcp`` (the MCP server over stdio), ``demo`` and ``ui`` (the local
web viewer, :mod:`swarmmem.ui`)."""

from __future__ import annotations

import json
import sys

import click

from swarmmem.cli import render
from swarmmem.cli.app import State, command, flag, main
from swarmmem.core.model.errors import MissingDependencyError

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
@flag("--keep", "Keep the temporary project and print its path.")
@command
def demo(state: State, keep: bool) -> None:
    """End-to-end demo on the embedded SQLite store in a temporary project."""
    from swarmmem.demo import run_demo

    run_demo(render_evaluation=render.evaluation_text, keep=keep, as_json=state.as_json)


@main.command()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port on 127.0.0.1 (0: a free port).",
)
@flag("--no-browser", "Only print the address; open no browser.")
@command
def ui(state: State, port: int, no_browser: bool) -> None:
    """A local web viewer: memories (search, list, each memory's evidence and value), the
    review queue, each session's timeline and the store's health.

    Listens on 127.0.0.1 only and prints http://127.0.0.1:PORT/?token=... (a new token each
    start; every request needs it). Opens the browser unless --no-browser. Ctrl-C stops it.
    Needs the ui extra: pip install 'swarmmem[ui]'.
    """
    from swarmmem.ui import missing_modules

    missing = missing_modules()
    if missing:
        raise MissingDependencyError(
            f"swarmmem ui needs the ui extra ({', '.join(missing)} not installed): "
            "pip install 'swarmmem[ui]'"
        )
    from swarmmem.ui.server import UiServer

    with state.open() as mem:
        mem.require_enabled()
        _ = mem.read_only  # opens the store: a store that cannot open fails here
        try:
            server = UiServer(lambda: mem, port=port)
        except OSError as exc:
            raise click.BadParameter(
                f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}", param_hint="--port"
            ) from None

        def ready() -> None:
            if state.as_json:
                line = {"success": True, "url": server.url, "port": server.port}
                # one line, so a script reads the address as soon as it is printed
                click.echo(json.dumps({**line, "browser": not no_browser}))
            else:
                click.echo(server.url)
            sys.stdout.flush()
            where = f"127.0.0.1:{server.port}"
            note = f"swarmmem ui: serving {mem.root} on {where}; Ctrl-C stops it"
            click.echo(render.terminal_text(note), err=True)
            if not no_browser and not server.open_browser():
                click.echo("No browser could be opened: open the address above.", err=True)

        server.run(on_ready=ready)

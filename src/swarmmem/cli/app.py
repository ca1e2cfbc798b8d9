"""The root ``swarmmem`` group and what every command shares.

The context object (:class:`State`: project root, configuration, ``--json``, caller context),
the ``--json`` flag and uniform error handling of :func:`command`, the output of :func:`emit`,
the shared ``--limit`` and ``--profiles`` options and the progress bar.

Exit codes: 0 success, 1 failure (including disabled memory), 2 bad input (unknown flags,
invalid values, refused scopes, malformed JSON).

The command modules (:mod:`swarmmem.cli.memory`, :mod:`~swarmmem.cli.maintenance`,
:mod:`~swarmmem.cli.data`, :mod:`~swarmmem.cli.migrate`, :mod:`~swarmmem.cli.serve`) decorate
their commands onto :data:`main`; this module imports none of them. :mod:`swarmmem.cli` tells
the group which module holds each command (:attr:`Group.lazy`), and a command's module is
imported when the command is first looked up: ``swarmmem recall`` imports what recall needs,
not the evaluator or the MCP server.
"""

from __future__ import annotations

import functools
import importlib
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import click

from swarmmem._version import __version__
from swarmmem.cli import render
from swarmmem.core.maintenance.reports import DEFAULT_LIMIT, MAX_LIMIT
from swarmmem.core.model.errors import (
    ConfigError,
    ConflictError,
    EvaluationError,
    MemoryDisabledError,
    MemoryValidationError,
    NotFoundError,
    ScopeError,
    SwarmMemoryError,
    UntrustedPathError,
)
from swarmmem.core.model.settings import ConfigDeprecationWarning
from swarmmem.project import resolve_root
from swarmmem.results import disabled_result, error_result, redact_secrets

EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2

BAD_INPUT = (
    ConfigError,
    MemoryValidationError,
    ScopeError,
    EvaluationError,
    NotFoundError,
    ConflictError,
)
"""Errors that exit with :data:`EXIT_BAD_INPUT`; any other ``SwarmMemoryError`` exits 1."""

json_flag = click.option("--json", "as_json", is_flag=True, help="Machine-readable JSON output.")
"""``--json``: on the root group and on every command."""


class State:
    """Options shared by every command (the click context object)."""

    def __init__(
        self, root: str | None, config: str | None, as_json: bool, context: dict[str, str]
    ) -> None:
        self.root_given = root
        self.root = resolve_root(root)
        self.config = config
        self.as_json = as_json
        self.context = context

    def open(self) -> Any:
        """The project's memory for this caller (a context manager)."""
        import swarmmem

        return swarmmem.open(self.root, self.config, context=self.context)


def emit(state: State, data: Any, text: Callable[[Any], str], *, ok: bool = True) -> None:
    """Print ``data`` as JSON in ``--json`` mode, else ``text(data)``; exit 1 unless ``ok``."""
    out = render.json_text(data) if state.as_json else render.terminal_text(text(data))
    if out:  # an empty text result (an injection recall with nothing to inject) prints nothing
        click.echo(out)
    if not ok:
        sys.exit(EXIT_FAILURE)


def command(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--json`` and uniform error handling to a command taking the :class:`State`."""

    def wrapper(state: State, /, *args: Any, as_json: bool = False, **kwargs: Any) -> Any:
        if as_json:
            state.as_json = True
        try:
            return fn(state, *args, **kwargs)
        except MemoryDisabledError as exc:
            _fail(state.as_json, disabled_result(str(exc)), EXIT_FAILURE)
        except BAD_INPUT as exc:
            _fail(state.as_json, error_result(exc.code, str(exc)), EXIT_BAD_INPUT)
        except SwarmMemoryError as exc:
            _fail(state.as_json, error_result(exc.code, str(exc)), EXIT_FAILURE)

    functools.update_wrapper(wrapper, fn)
    return json_flag(click.pass_obj(wrapper))


def _fail(as_json: bool, payload: dict[str, Any], code: int) -> None:
    if as_json:
        click.echo(render.error_json(payload))
    else:
        click.echo(render.terminal_text(render.error_text(payload)), err=True)
    sys.exit(code)


def limit_option(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--limit``: the most ``what`` a report lists per section (clamped like the reports)."""
    return click.option(
        "--limit",
        type=click.IntRange(1, MAX_LIMIT, clamp=True),
        default=DEFAULT_LIMIT,
        show_default=True,
        help=f"Most {what} listed per section (clamped to 1..{MAX_LIMIT}).",
    )


def flag(name: str, help_text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A boolean option ``name``: off unless given."""
    return click.option(name, is_flag=True, help=help_text)


def profiles_option(
    profiles: Sequence[str], **options: Any
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--profiles``: a comma list of the recall ``profiles`` a runner accepts."""
    return click.option("--profiles", help=f"Comma list of {','.join(profiles)}.", **options)


def comma_list(text: str) -> list[str]:
    """The non-empty, stripped items of a comma list."""
    return [item.strip() for item in text.split(",") if item.strip()]


@contextmanager
def progress_bar(label: str, state: State) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on a terminal; silent in ``--json`` mode or when stderr is piped."""
    if state.as_json or not sys.stderr.isatty():
        yield lambda done, total: None
        return
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


@contextmanager
def _redacted_usage_errors() -> Iterator[None]:
    """A usage error (an invalid option value, say) never echoes a likely secret."""
    try:
        yield
    except click.ClickException as exc:
        exc.message = redact_secrets(exc.message)  # type: ignore[misc]  # Final in the stubs
        raise


class Group(click.Group):
    """The root group: usage errors of any command are redacted before click prints them, and
    a command's module is imported when the command is first looked up."""

    #: command name -> the module of ``swarmmem.cli`` that attaches it (set by the package)
    lazy: Mapping[str, str] = {}

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            importlib.import_module(f"swarmmem.cli.{self.lazy[cmd_name]}")
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        with _redacted_usage_errors():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        with _redacted_usage_errors(), _plain_config_warnings():
            return super().invoke(ctx)

    def main(self, args: Sequence[str] | None = None, *rest: Any, **kwargs: Any) -> Any:
        """As click runs a group; with ``--json`` among the arguments, a usage error (an
        unknown option, an invalid value, a missing argument) is one JSON error object on
        stdout (``"error": "usage_error"``, exit 2) like every other failure."""
        argv = list(sys.argv[1:] if args is None else args)
        if "--json" not in argv or not kwargs.get("standalone_mode", True):
            return super().main(argv, *rest, **kwargs)
        try:
            code = super().main(argv, *rest, **{**kwargs, "standalone_mode": False})
        except click.UsageError as exc:
            payload = error_result("usage_error", redact_secrets(exc.format_message()))
            _fail(True, payload, EXIT_BAD_INPUT)
        except click.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        # outside standalone mode click returns what ctx.exit(code) was given
        sys.exit(code if isinstance(code, int) and not isinstance(code, bool) else 0)


@contextmanager
def _plain_config_warnings() -> Iterator[None]:
    """A configuration deprecation as one ``warning: ...`` line on stderr (not the library's
    source file and line); other warnings show as Python shows them."""
    with warnings.catch_warnings():
        shown = warnings.showwarning

        def show(
            message: Warning | str,
            category: type[Warning],
            filename: str,
            lineno: int,
            file: Any = None,
            line: str | None = None,
        ) -> None:
            if issubclass(category, ConfigDeprecationWarning):
                click.echo(render.terminal_text(f"warning: {message}"), err=True)
            else:
                shown(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        yield


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="swarmmem")
@click.option(
    "--root",
    default=None,
    help="Project root (default: the nearest folder up from here holding "
    ".opencode/opencode-swarm.json, else the git top level, else here).",
)
@click.option(
    "--config", default=None, help="Config JSON (default: <root>/.opencode/opencode-swarm.json)."
)
@json_flag
@click.option("--session", default=None, help="Session id (run scope).")
@click.option("--run", "run_id", default=None, help="Run id (defaults to the session id).")
@click.option("--role", default=None, help="Agent role of the caller.")
@click.pass_context
def main(
    ctx: click.Context,
    root: str | None,
    config: str | None,
    as_json: bool,
    session: str | None,
    run_id: str | None,
    role: str | None,
) -> None:
    """Scoped, source-backed memory for AI coding agents."""
    context = {
        k: v for k, v in {"session_id": session, "run_id": run_id, "agent_role": role}.items() if v
    }
    try:
        ctx.obj = State(root, config, as_json, context)
    except UntrustedPathError as exc:  # the project found is not safely this user's
        _fail(as_json, error_result(exc.code, str(exc)), EXIT_FAILURE)

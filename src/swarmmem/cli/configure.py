"""``swarmmem config``: read and edit the project's configuration file without pasting JSON.

``set KEY VALUE`` writes one key of the ``memory`` section (``embeddings.enabled``; VALUE is
read as JSON where it parses, else as text), keeping every other key (``projectId`` included)
and refusing, with the file untouched, a key or value the configuration tree does not accept;
the file is replaced atomically, never through a link. ``get KEY`` prints a key's effective
value (or a section's), ``show`` checks the file and prints what it sets. The file is
``<root>/.opencode/opencode-swarm.json``, or the one ``--config`` names.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from swarmmem import config as _config
from swarmmem.cli import render
from swarmmem.cli.app import State, command, emit, main
from swarmmem.core.model.errors import ConfigError
from swarmmem.safefs import read_text, write_file


@main.group("config")
def config_group() -> None:
    """Show, get and set keys of the project's memory configuration."""


def _place(state: State) -> tuple[Path, Path]:
    """The configuration file and the folder it is reached from without following links."""
    if state.config is not None:
        path = Path(os.path.abspath(state.config))
        return path, path.parent
    root = Path(os.path.abspath(state.root))
    return root / _config.CONFIG_RELATIVE_PATH, root


def _read(path: Path, base: Path, *, missing_ok: bool = False) -> dict[str, Any]:
    """The JSON object in the configuration file (refused: not JSON, not an object, or
    missing unless ``missing_ok``, which reads a missing file as ``{}``)."""
    text = read_text(path, base=base)
    if text is None:
        if missing_ok:
            return {}
        raise ConfigError(f"no configuration file at {path}; `swarmmem init` creates one")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"cannot read configuration {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"configuration {path} must hold a JSON object")
    return data


@config_group.command("set", context_settings={"ignore_unknown_options": True})  # VALUE -1
@click.argument("key")
@click.argument("value")
@command
def set_key(state: State, key: str, value: str) -> None:
    """Set KEY (relative to the memory section, e.g. embeddings.enabled) to VALUE (JSON where
    it parses: true, 0.3, "text"; else text). Other keys are kept; an invalid key or value is
    refused and the file left as it was."""
    key = _config.relative_key(key)
    path, base = _place(state)
    data = _read(path, base)
    parsed = _config.parse_value(value)
    new = _config.with_value(data, key, parsed, path)
    previous = _lookup(_config.memory_section(data, path), key)
    changed = new != data
    if changed:
        write_file(path, json.dumps(new, indent=2) + "\n", base=base)
    result = {
        "success": True,
        "config_path": str(path),
        "key": key,
        "value": parsed,
        "was_set": previous is not _UNSET,
        "previous": None if previous is _UNSET else previous,
        "changed": changed,
    }
    emit(state, result, render.config_set_text)


@config_group.command("get")
@click.argument("key")
@command
def get_key(state: State, key: str) -> None:
    """Print KEY's effective value (a section prints as a JSON object)."""
    key = _config.relative_key(key)
    path, base = _place(state)
    effective = _config.load(Path(os.path.abspath(state.root)), state.config)
    try:
        value = _config.lookup(effective, key)
    except KeyError:
        _config.value_key(key)  # names the key it most likely misspells
        raise ConfigError(f"unknown configuration key memory.{key}") from None
    given = _lookup(_config.memory_section(_read(path, base, missing_ok=True), path), key)
    result = {
        "success": True,
        "config_path": str(path),
        "key": key,
        "value": value,
        "set_in_file": given is not _UNSET,
    }
    emit(state, result, render.config_get_text)


@config_group.command("show")
@command
def show(state: State) -> None:
    """Check the configuration file and print the memory keys it sets."""
    path, base = _place(state)
    data = _read(path, base)
    section = _config.memory_section(data, path)
    effective = _config.load(path.parent, str(path))  # every rule of the file, as hooks read it
    result = {
        "success": True,
        "config_path": str(path),
        "valid": True,
        "memory": section,
        "effective": effective,
    }
    emit(state, result, render.config_show_text)


_UNSET: Any = object()


def _lookup(section: dict[str, Any], key: str) -> Any:
    try:
        return _config.lookup(section, key)
    except KeyError:
        return _UNSET

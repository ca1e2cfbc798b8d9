"""Typed configuration nodes: one attrs class is a section's defaults, checks and meanings.

A node is an ``@attrs.frozen(kw_only=True)`` class whose fields are made with :func:`setting`
(a value: its JSON key, check and meaning) or :func:`section` (a nested node). A key may be
dotted (``outcomeRewards.useful``): the JSON nests it, the class keeps a flat field.

:func:`build` turns a JSON object into a node: an unknown key is refused with the nearest
known key as a suggestion, every value is checked (type and range) and every error names the
dotted key (``memory.recall.defaultMaxItems must be ...``). A former spelling (``aliases``) is
accepted with a :class:`ConfigDeprecationWarning`; a removed key (named with the reason in
the node's ``retired_keys`` class attribute) is accepted and ignored with the same warning.
:func:`as_dict` gives the JSON shape back, :func:`walk` lists every key (the README's
configuration table is made from it) and :func:`map_paths` rewrites the path-valued fields
(relative paths resolved under a project root).
"""

from __future__ import annotations

import difflib
import math
import re
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import attrs

from swarmmem.core.model.errors import ConfigError

#: ``check(dotted_name, value)`` raises :class:`ConfigError` naming ``dotted_name``
Check = Callable[[str, Any], None]
#: the registered names of an adapter kind (``store``, ``embedder``, ...), default first
Choices = Callable[[str], Sequence[str]]
N = TypeVar("N")


class ConfigDeprecationWarning(FutureWarning):
    """A configuration key is spelled the former way, or is no longer read.

    A ``FutureWarning`` so that people running the command line see it (a plain
    ``DeprecationWarning`` is hidden outside ``__main__``)."""


# --------------------------------------------------------------------------- checks


def boolean(name: str, value: Any) -> None:
    """``true`` or ``false``."""
    if not isinstance(value, bool):
        raise ConfigError(f"{name} must be true or false; got {value!r}")


def number(
    lo: float, hi: float, *, integer: bool = False, lo_open: bool = False, hi_open: bool = False
) -> Check:
    """A finite number (an integer when ``integer``) in ``[lo, hi]`` (open ends on request)."""

    def check(name: str, value: Any) -> None:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        ok = ok and math.isfinite(value) and (not integer or float(value).is_integer())
        ok = ok and (value > lo if lo_open else value >= lo)
        ok = ok and (value < hi if hi_open else value <= hi)
        if not ok:
            kind = "an integer" if integer else "a number"
            lo_s = f"({lo}" if lo_open else f"[{lo}"
            hi_s = f"{hi})" if hi_open else f"{hi}]"
            raise ConfigError(f"{name} must be {kind} in {lo_s}, {hi_s}; got {value!r}")

    return check


def text(name: str, value: Any) -> None:
    """A non-empty string."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{name} must be a non-empty string; got {value!r}")


def matching(pattern: str, meaning: str) -> Check:
    """A string matching ``pattern`` whole; ``meaning`` says what that is in the message."""

    def check(name: str, value: Any) -> None:
        if not isinstance(value, str) or not re.fullmatch(pattern, value):
            raise ConfigError(f"{name} must be {meaning}; got {value!r}")

    return check


def one_of(*allowed: str) -> Check:
    """One of the ``allowed`` strings."""

    def check(name: str, value: Any) -> None:
        if value not in allowed:
            raise ConfigError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")

    return check


def optional(check: Check) -> Check:
    """``null`` or what ``check`` accepts."""

    def inner(name: str, value: Any) -> None:
        if value is not None:
            check(name, value)

    return inner


# --------------------------------------------------------------------------- fields


def setting(
    default: Any,
    key: str,
    check: Check,
    doc: str,
    *,
    aliases: tuple[str, ...] = (),
    adapter: str | None = None,
    path: bool = False,
) -> Any:
    """A value field: its ``default``, JSON ``key`` (relative to the node, may be dotted),
    ``check``, meaning (``doc``, the README's text), former spellings (``aliases``), the
    adapter kind whose registered names it takes (``adapter``) and whether it is a path."""
    meta = {"key": key, "check": check, "doc": doc, "aliases": aliases, "adapter": adapter}
    return attrs.field(default=default, metadata={**meta, "path": path})


def section(node: type[Any], key: str) -> Any:
    """A nested node field (its defaults are the node's)."""
    return attrs.field(factory=node, metadata={"key": key, "node": node})


def _fields(cls: type[Any]) -> tuple[attrs.Attribute[Any], ...]:
    return tuple(f for f in attrs.fields(cls) if "key" in f.metadata)


def _names(cls: type[Any]) -> dict[str, attrs.Attribute[Any]]:
    """Every spelling (current and former) of each field's key."""
    out: dict[str, attrs.Attribute[Any]] = {}
    for field in _fields(cls):
        for key in (field.metadata["key"], *field.metadata.get("aliases", ())):
            out[key] = field
    return out


def _branches(cls: type[Any]) -> set[str]:
    """The JSON objects the dotted keys of ``cls`` nest in (``outcomeRewards``)."""
    out: set[str] = set()
    for key in _names(cls):
        parts = key.split(".")
        out.update(".".join(parts[:i]) for i in range(1, len(parts)))
    return out


# --------------------------------------------------------------------------- loading


def build(cls: type[N], data: Any, name: str, choices: Choices | None = None) -> N:
    """The node ``cls`` from the JSON object ``data`` found at the dotted ``name``.

    Raises:
        ConfigError: naming the first offending dotted key.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"{name} must be an object; got {data!r}")
    values: dict[str, Any] = {}
    _fill(cls, data, name, "", values, choices)
    return cls(**values)


def _fill(
    cls: type[Any],
    data: Mapping[str, Any],
    name: str,
    prefix: str,
    values: dict[str, Any],
    choices: Choices | None,
) -> None:
    names = _names(cls)
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        full = f"{name}.{dotted}"
        field = names.get(dotted)
        if field is None and dotted in _branches(cls):
            if not isinstance(value, Mapping):
                raise ConfigError(f"{full} must be an object; got {value!r}")
            _fill(cls, value, name, dotted + ".", values, choices)
        elif field is None:
            _unknown(cls, dotted, name)
        else:
            values[_claim(field, values, full)] = _value(field, value, full, choices)
            if dotted != field.metadata["key"]:
                _warn(f"{full} is now spelled {name}.{field.metadata['key']}; rename it")


def _claim(field: attrs.Attribute[Any], values: Mapping[str, Any], full: str) -> str:
    """The field's name; a key given in both spellings is an error."""
    if field.name in values:
        raise ConfigError(f"{full} is given twice (in its current and its former spelling)")
    return field.name


def _value(field: attrs.Attribute[Any], value: Any, full: str, choices: Choices | None) -> Any:
    node = field.metadata.get("node")
    if node is not None:
        return build(node, value, full, choices)
    kind = field.metadata["adapter"]
    check = one_of(*choices(kind)) if kind is not None and choices is not None else None
    (check or field.metadata["check"])(full, value)
    return value


def _unknown(cls: type[Any], dotted: str, name: str) -> None:
    retired: Mapping[str, str] = cls.__dict__.get("retired_keys", {})
    why = retired.get(dotted)
    if why is not None:
        _warn(f"{name}.{dotted} is no longer read ({why}); remove it")
        return
    message = f"unknown configuration key {name}.{dotted}"
    nested = [key.name for key in walk(cls)]
    nearest = nearest_key(dotted, [*_names(cls), *_branches(cls), *nested])
    raise ConfigError(f"{message} (did you mean {name}.{nearest}?)" if nearest else message)


def nearest_key(key: str, known: Sequence[str]) -> str | None:
    """The known key ``key`` most likely misspells (case, ``_`` and ``-`` ignored), if any."""

    def plain(value: str) -> str:
        return re.sub(r"[_\-]", "", value).lower()

    by_plain = {plain(k): k for k in known}
    if plain(key) in by_plain:
        return by_plain[plain(key)]
    close = difflib.get_close_matches(plain(key), list(by_plain), n=1, cutoff=0.6)
    if close:
        return by_plain[close[0]]
    leaf = key.rpartition(".")[2]
    ends = [k for k in known if k.rpartition(".")[2] == leaf]
    return ends[0] if len(ends) == 1 else None


def _warn(message: str) -> None:
    warnings.warn(message, ConfigDeprecationWarning, stacklevel=2)


# --------------------------------------------------------------------------- reading back


def as_dict(node: Any) -> dict[str, Any]:
    """The node in its JSON shape (camelCase keys, dotted keys nested)."""
    out: dict[str, Any] = {}
    for field in _fields(type(node)):
        value = getattr(node, field.name)
        if "node" in field.metadata:
            value = as_dict(value)
        target = out
        *parents, leaf = field.metadata["key"].split(".")
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = value
    return out


@attrs.frozen
class Key:
    """One documented key: its dotted name, default and field metadata."""

    name: str
    default: Any
    doc: str
    adapter: str | None
    aliases: tuple[str, ...]


def walk(cls: type[Any], prefix: str = "") -> Iterator[Key]:
    """Every value key of ``cls`` and its nodes, in declaration order."""
    for field in _fields(cls):
        dotted = f"{prefix}{field.metadata['key']}"
        node = field.metadata.get("node")
        if node is not None:
            yield from walk(node, dotted + ".")
            continue
        meta = field.metadata
        aliases = tuple(f"{prefix}{a}" for a in meta["aliases"])
        yield Key(dotted, field.default, meta["doc"], meta["adapter"], aliases)


def map_paths(node: N, change: Callable[[str, str], str], prefix: str = "") -> N:
    """``node`` with every path-valued field that is set replaced by ``change(dotted, value)``
    (nested nodes included)."""
    updates: dict[str, Any] = {}
    for field in _fields(type(node)):
        value = getattr(node, field.name)
        dotted = f"{prefix}{field.metadata['key']}"
        if "node" in field.metadata:
            updates[field.name] = map_paths(value, change, dotted + ".")
        elif field.metadata["path"] and value is not None:
            updates[field.name] = change(dotted, value)
    return attrs.evolve(node, **updates)  # type: ignore[misc]

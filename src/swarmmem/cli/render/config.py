"""The texts of ``swarmmem config``: what ``set`` changed, a key's value, the file's keys."""

from __future__ import annotations

import json

from swarmmem.cli.render._common import Data


def _value(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def config_set_text(data: Data) -> str:
    """``memory.KEY = VALUE`` and what it was (or that it already was)."""
    line = f"memory.{data['key']} = {_value(data['value'])}"
    if not data["changed"]:
        return f"{line} (already; {data['config_path']} unchanged)"
    before = f"was {_value(data['previous'])}" if data["was_set"] else "was the default"
    return f"{line} ({before}) in {data['config_path']}."


def config_get_text(data: Data) -> str:
    """The key's effective value; a value the file does not set is marked as the default."""
    value = data["value"]
    shown = json.dumps(value, indent=2, ensure_ascii=False) if isinstance(value, dict) else None
    text = shown or _value(value)
    return text if data["set_in_file"] else f"{text} (default)"


def config_show_text(data: Data) -> str:
    """The file, that it is valid, and the memory keys it sets."""
    keys = json.dumps(data["memory"], indent=2, ensure_ascii=False)
    return f"{data['config_path']}: valid. The memory keys it sets:\n{keys}"

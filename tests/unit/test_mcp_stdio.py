"""The MCP stdin guard's measures (swarmmem.mcp.stdio): nesting depth without recursion and
the id at a request's top level, on hostile lines."""

from __future__ import annotations

import json

import pytest

from swarmmem.mcp.stdio import MAX_REQUEST_DEPTH, too_deep, top_level_id


def test_depth_counts_brackets_outside_strings_only() -> None:
    assert not too_deep(json.dumps({"a": [[[1]]]}))
    assert too_deep("[" * (MAX_REQUEST_DEPTH + 1) + "]" * (MAX_REQUEST_DEPTH + 1))
    assert not too_deep("[" * MAX_REQUEST_DEPTH + "]" * MAX_REQUEST_DEPTH)
    # brackets in strings, escaped quotes included, are text
    assert not too_deep(json.dumps({"text": "[" * 10_000, "more": '\\"[[[' * 100}))
    # many flat arrays side by side are not deep
    assert not too_deep(json.dumps([[1]] * 10_000))
    # a million-deep line is measured without recursion
    assert too_deep("[" * 1_000_000)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"jsonrpc": "2.0", "id": 7, "params": [[[]]]}', 7),
        ('{"params": {"id": 3, "x": [[]]}, "id": "abc"}', "abc"),  # the nested id is not it
        ('{"params": {"id": 3}}', None),
        ('{"id": true}', None),
        ('{"id": null}', None),
        ('{"id": 1.5}', None),
        ('{"k": "\\"id\\": 9", "id": -4}', -4),
        ('{"id": "unterminated', None),
        ("[" * 100_000, None),
    ],
)
def test_top_level_id(line: str, expected: object) -> None:
    assert top_level_id(line) == expected

"""The bulk chain loop hashes exactly like one ``event_row_hash`` per row."""

from __future__ import annotations

import pytest

from swarmmem.core.model.audit import GENESIS, _event_text, chain_rows, event_row_hash
from swarmmem.core.model.ids import canonical_json


@pytest.mark.parametrize("key", [None, b"k" * 32])
def test_chain_rows_equals_row_by_row_hashing(key: bytes | None) -> None:
    rows = [
        ("e1", "upsert", "mem_1", None, "2026-01-01T00:00:00.000Z", None),
        ("e2", "delete", "mem_2", "gone é", "2026-01-01T00:00:01.000Z", '{"reason":"gone é"}'),
        ("e3", "proposal", "prop_1", None, "2026-01-01T00:00:02.000Z", '{"b":1,"a":[2]}'),
    ]
    chained, head = chain_rows(rows, GENESIS, key)
    previous = GENESIS
    for row, stored in zip(rows, chained, strict=True):
        assert stored == (*row, previous)
        previous = event_row_hash(*row, previous, key)
    assert head == previous
    assert chain_rows([], "abc", key) == ([], "abc")


@pytest.mark.parametrize(
    "row",
    [
        ("e1", "upsert", "mem_1", None, "2026-01-01T00:00:00.000Z", None, GENESIS),
        ('q"uote\\', "op\n\t\x00\x1f", "é😀\u2028", "", "t", '{"a":"b"}', "h" * 64),
        ("\ud800", "x", "y", "r", "t", None, "p"),  # a lone surrogate is encoded as is
        ("e", "op", "t", 5, "t", True, "p"),  # not text: the encoder writes the row
    ],
)
def test_event_text_is_the_canonical_encoding(row: tuple[object, ...]) -> None:
    keys = ("id", "operation", "target_id", "reason", "timestamp", "event_json", "prev_hash")
    assert _event_text(*row) == canonical_json(dict(zip(keys, row, strict=True)))

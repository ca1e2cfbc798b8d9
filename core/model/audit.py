"""The tamper-evident audit log: row hashes and chain verification (any storage backend).

Each ``memory_events`` row stores ``prev_hash``, the SHA-256 of the complete previous row
(key-sorted canonical JSON), anchored at ``GENESIS``; the hash of the newest row is mirrored
as the chain head. Verification walks the rows in insertion order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from swarmmem.core.model.ids import canonical_json

GENESIS = "GENESIS"
CHAIN_HEAD_KEY = "memory_events_chain_head"


def event_row_hash(
    event_id: str,
    operation: str,
    target_id: str,
    reason: str | None,
    timestamp: str,
    event_json: str | None,
    prev_hash: str | None,
) -> str:
    """SHA-256 of the key-sorted canonical JSON of one ``memory_events`` row."""
    row = {
        "id": event_id,
        "operation": operation,
        "target_id": target_id,
        "reason": reason,
        "timestamp": timestamp,
        "event_json": event_json,
        "prev_hash": prev_hash,
    }
    return hashlib.sha256(canonical_json(row).encode("utf-8")).hexdigest()


def verify_event_chain(rows: Sequence[Sequence[Any]], stored_head: str | None) -> dict[str, Any]:
    """Check every ``prev_hash`` link and the stored head.

    Leading rows without ``prev_hash`` (written before the chain existed) are counted as
    legacy rows and skipped. Returns ``{supported, totalRows, chainedRows, legacyRows,
    verified, headMatch, headStored}`` plus ``divergence: {rowId, detail}`` at the first
    broken link, or ``headExpected`` (the last row's hash) when the walk completed.
    """
    legacy = 0
    while legacy < len(rows) and rows[legacy][6] is None:
        legacy += 1
    last_hash: str | None = None
    divergence: dict[str, str] | None = None
    for row in rows[legacy:]:
        event_id, operation, target_id, reason, timestamp, event_json, prev_hash = row
        if last_hash is None and prev_hash != GENESIS:
            divergence = {
                "rowId": event_id,
                "detail": "chain anchor mismatch: first chained row has prev_hash "
                f"{prev_hash}, expected {GENESIS}",
            }
        elif last_hash is not None and prev_hash != last_hash:
            found = "NULL" if prev_hash is None else prev_hash
            divergence = {
                "rowId": event_id,
                "detail": f"prev_hash mismatch: expected {last_hash}, found {found}",
            }
        if divergence is not None:
            break
        last_hash = event_row_hash(
            event_id, operation, target_id, reason, timestamp, event_json, prev_hash
        )
    report: dict[str, Any] = {
        "supported": True,
        "totalRows": len(rows),
        "chainedRows": len(rows) - legacy,
        "legacyRows": legacy,
    }
    if divergence is not None:
        report.update(verified=False, divergence=divergence, headMatch=None)
    else:
        head_match = stored_head is None if last_hash is None else stored_head == last_hash
        report.update(verified=head_match, headMatch=head_match)
        if last_hash is not None:
            report["headExpected"] = last_hash
    report["headStored"] = stored_head
    return report

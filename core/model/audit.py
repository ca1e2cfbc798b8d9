"""The tamper-evident audit log: row hashes and chain verification (any storage backend).

Each ``memory_events`` row stores ``prev_hash``, the SHA-256 of the complete previous row
(key-sorted canonical JSON), anchored at ``GENESIS``; the hash of the newest row is mirrored
as the chain head. Verification walks the rows in insertion order.

Keyed chain. With an audit key, rows appended from the moment the key was first used are
hashed with HMAC-SHA256 under it, and a key marker (:func:`key_marker`) records where keying
started and how many leading rows were legacy (written before any chain), sealed with the
key. Someone who can write the database but does not hold the key can then neither re-chain
edited rows nor re-label chained rows as legacy without verification failing.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Sequence
from typing import Any

#: :func:`~swarmmem.core.model.ids.canonical_json` with its encoder built once
_canonical = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode

GENESIS = "GENESIS"
CHAIN_HEAD_KEY = "memory_events_chain_head"
KEY_MARKER_KEY = "memory_events_keyed_from"


def event_row_hash(
    event_id: str,
    operation: str,
    target_id: str,
    reason: str | None,
    timestamp: str,
    event_json: str | None,
    prev_hash: str | None,
    key: bytes | None = None,
) -> str:
    """SHA-256 (HMAC-SHA256 under ``key``) of the key-sorted canonical JSON of one
    ``memory_events`` row."""
    text = _event_text(event_id, operation, target_id, reason, timestamp, event_json, prev_hash)
    return _digest(text.encode("utf-8"), key)


def chain_rows(
    rows: Sequence[tuple[str, str, str, str | None, str, str | None]],
    head: str,
    key: bytes | None = None,
) -> tuple[list[tuple[Any, ...]], str]:
    """Chain new ``memory_events`` rows (``id, operation, target_id, reason, timestamp,
    event_json``) after ``head``: each row with its ``prev_hash`` appended, and the new head.

    Exactly :func:`event_row_hash` applied row by row, in one loop (for bulk writes).
    """
    chained: list[tuple[Any, ...]] = []
    new_hmac, sha256, text = hmac.new, hashlib.sha256, _event_text
    for event_id, operation, target_id, reason, timestamp, event_json in rows:
        chained.append((event_id, operation, target_id, reason, timestamp, event_json, head))
        payload = text(event_id, operation, target_id, reason, timestamp, event_json, head)
        data = payload.encode("utf-8")
        digest = sha256(data) if key is None else new_hmac(key, data, sha256)
        head = digest.hexdigest()
    return chained, head


#: what the canonical encoder writes for a string (``ensure_ascii=False``)
_quote = json.encoder.encode_basestring


def _event_text(*values: Any) -> str:
    """The canonical JSON of one row (``id, operation, target_id, reason, timestamp,
    event_json, prev_hash``): written directly when every value is a string or ``None``
    (the same text, key by key, as the encoder's), else by the encoder."""
    quoted = []
    for value in values:
        if type(value) is str:
            quoted.append(_quote(value))
        elif value is None:
            quoted.append("null")
        else:
            return str(_canonical(dict(zip(_ROW_KEYS, values, strict=True))))
    event_id, operation, target_id, reason, timestamp, event_json, prev_hash = quoted
    return (
        f'{{"event_json":{event_json},"id":{event_id},"operation":{operation},'
        f'"prev_hash":{prev_hash},"reason":{reason},"target_id":{target_id},'
        f'"timestamp":{timestamp}}}'
    )


_ROW_KEYS = ("id", "operation", "target_id", "reason", "timestamp", "event_json", "prev_hash")


def _digest(payload: bytes, key: bytes | None) -> str:
    if key is None:
        return hashlib.sha256(payload).hexdigest()
    return hmac.new(key, payload, hashlib.sha256).hexdigest()


def key_marker(keyed_from: int, legacy_rows: int, key: bytes) -> str:
    """The sealed marker ``<first keyed row>:<legacy rows>:<HMAC>`` kept beside the head."""
    seal = _digest(f"keyed-from:{keyed_from}:{legacy_rows}".encode(), key)
    return f"{keyed_from}:{legacy_rows}:{seal}"


def read_key_marker(marker: str | None, key: bytes | None) -> tuple[int, int] | None:
    """``(first keyed row, legacy rows)`` of a marker whose seal matches ``key``, else None."""
    if marker is None or key is None:
        return None
    try:
        keyed_from, legacy, _seal = marker.split(":")
        parsed = int(keyed_from), int(legacy)
    except ValueError:
        return None
    return parsed if hmac.compare_digest(marker, key_marker(*parsed, key)) else None


def verify_event_chain(
    rows: Sequence[Sequence[Any]],
    stored_head: str | None,
    *,
    key: bytes | None = None,
    marker: str | None = None,
) -> dict[str, Any]:
    """Check every ``prev_hash`` link and the stored head.

    Leading rows without ``prev_hash`` (written before the chain existed) are counted as
    legacy rows and skipped. With a ``marker`` (a keyed chain), rows from the marked position
    are checked under ``key``, the legacy count must be the sealed one, and without the right
    key nothing verifies. Returns ``{supported, totalRows, chainedRows, legacyRows, verified,
    headMatch, headStored, keyed}`` plus ``divergence: {rowId, detail}`` at the first broken
    link, or ``headExpected`` (the last row's hash) when the walk completed.
    """
    legacy = 0
    while legacy < len(rows) and rows[legacy][6] is None:
        legacy += 1
    report: dict[str, Any] = {
        "supported": True,
        "totalRows": len(rows),
        "chainedRows": len(rows) - legacy,
        "legacyRows": legacy,
        "keyed": marker is not None,
        "headStored": stored_head,
    }
    keyed_from = len(rows) + 1
    if marker is not None:
        sealed = read_key_marker(marker, key)
        if sealed is None:
            detail = (
                "the chain is keyed but no audit key is configured (SWARMMEM_AUDIT_KEY)"
                if key is None
                else "the key marker does not match the configured audit key (wrong key, or "
                "the marker was edited)"
            )
            return {**report, "verified": False, "headMatch": None, "keyError": detail}
        keyed_from, sealed_legacy = sealed
        if sealed_legacy != legacy:
            relabelled = {
                "rowId": str(rows[min(legacy, sealed_legacy)][0]) if rows else "",
                "detail": f"{legacy} legacy rows found where the key marker sealed "
                f"{sealed_legacy}: chained rows were re-labelled as legacy (or the reverse)",
            }
            return {**report, "verified": False, "divergence": relabelled, "headMatch": None}
    last_hash: str | None = None
    divergence: dict[str, str] | None = None
    for position, row in enumerate(rows[legacy:], start=legacy):
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
        row_key = key if position >= keyed_from else None
        last_hash = event_row_hash(
            event_id, operation, target_id, reason, timestamp, event_json, prev_hash, row_key
        )
    if divergence is not None:
        report.update(verified=False, divergence=divergence, headMatch=None)
    else:
        head_match = stored_head is None if last_hash is None else stored_head == last_hash
        report.update(verified=head_match, headMatch=head_match)
        if last_hash is not None:
            report["headExpected"] = last_hash
    return report

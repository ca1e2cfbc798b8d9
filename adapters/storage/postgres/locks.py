"""Advisory locks: how writers of every host take turns on one schema.

Every transaction takes ``pg_advisory_xact_lock`` on a key derived from the schema name
before its first statement, so writers queue like SQLite's ``BEGIN IMMEDIATE`` writers: the
audit chain head (``_meta``) is read and advanced by one writer at a time and never forks,
and no two writers can deadlock. The lock is released with the transaction.
"""

from __future__ import annotations

import hashlib

#: takes the transaction-scoped lock of the key passed as its one parameter
XACT_LOCK_SQL = "SELECT pg_advisory_xact_lock(?)"


def advisory_key(label: str) -> int:
    """A signed 64-bit advisory lock key for ``label``."""
    return int.from_bytes(hashlib.sha256(label.encode("utf-8")).digest()[:8], "big", signed=True)


def chain_key(schema_name: str) -> int:
    """The key of the lock that serialises the writers of ``schema_name``."""
    return advisory_key(f"swarmmem:chain:{schema_name}")

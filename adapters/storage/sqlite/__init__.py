"""The ``sqlite`` storage provider (the default): one database file, reference-compatible.

The store (:mod:`.store`: the file, the reference migrations, the legacy JSONL import), its
FTS5 full text (:mod:`.fulltext`) and which SQLite module to use and what it can do
(:mod:`.support`).
"""

from swarmmem.adapters.storage.sqlite.store import BULK_CACHE_KIB, MIGRATIONS, SqliteStore

__all__ = ["BULK_CACHE_KIB", "MIGRATIONS", "SqliteStore"]

"""The ``postgres`` storage provider (``pip install 'swarmmem[postgres]'``).

One schema of a PostgreSQL server, shared by many hosts, ranked like SQLite: the store
(:mod:`.store`), its schema (:mod:`.migrations`), BM25-compatible full text
(:mod:`.text_search`), writer locks (:mod:`.locks`), NOTIFY cache invalidation
(:mod:`.notify`) and password-safe DSNs (:mod:`.dsn`).
"""

import psycopg  # noqa: F401  (first: without the driver this package does not import)

from swarmmem.adapters.storage.postgres.store import PostgresStore

__all__ = ["PostgresStore"]

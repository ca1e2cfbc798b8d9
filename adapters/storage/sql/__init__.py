"""The SQL store, written once for every database (see :mod:`.store`)."""

from __future__ import annotations

from swarmmem.adapters.storage.sql.database import Database, Touched, TxState, guarded
from swarmmem.adapters.storage.sql.dialect import (
    ITEM_ORDERS,
    FullTextHits,
    ItemQuery,
    SqlDialect,
    list_query,
)
from swarmmem.adapters.storage.sql.records import (
    CACHE_LIMIT,
    TextIndex,
    ViewCache,
    ViewParts,
    Written,
)
from swarmmem.adapters.storage.sql.schema import (
    MIGRATION_NAMES,
    RELATIONS_INDEX,
    RELATIONS_TABLE,
    REPORT_COLUMNS,
    TEXT_TERMS,
    Migration,
    migration_steps,
)
from swarmmem.adapters.storage.sql.store import SqlStore

__all__ = [
    "CACHE_LIMIT",
    "ITEM_ORDERS",
    "MIGRATION_NAMES",
    "RELATIONS_INDEX",
    "RELATIONS_TABLE",
    "REPORT_COLUMNS",
    "TEXT_TERMS",
    "Database",
    "FullTextHits",
    "ItemQuery",
    "Migration",
    "SqlDialect",
    "SqlStore",
    "TextIndex",
    "Touched",
    "TxState",
    "ViewCache",
    "ViewParts",
    "Written",
    "guarded",
    "list_query",
    "migration_steps",
]

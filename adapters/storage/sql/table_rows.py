"""Whole tables as row streams: what moving a store to another database reads and writes.

:class:`TableRows` works inside the store's open transaction, with ``?`` placeholders. Of
``memory_events`` it sees only the store's own audit chain; rows written to ``memory_items``
go through the database's :class:`~.records.TextIndex` (which may add full-text columns), and
:meth:`TableRows.finish` rebuilds what rows written this way leave stale.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Sequence
from typing import Any

from swarmmem.adapters.storage.sql.audit import AuditLog
from swarmmem.adapters.storage.sql.database import Database
from swarmmem.adapters.storage.sql.records import TextIndex
from swarmmem.core.model.audit import CHAIN_HEAD_KEY

#: rows read per chunk
CHUNK = 500


class TableRows:
    """Reads and bulk writes of whole tables (see the module docstring)."""

    def __init__(self, db: Database, text: TextIndex, audit: AuditLog) -> None:
        self.db = db
        self.text = text
        self.audit = audit

    def execute(self, statement: str, params: Sequence[Any] = ()) -> Any:
        return self.db.execute(self.db.tx_conn(), statement, tuple(params))

    def _where(self, table: str) -> str:
        return self.audit.rows_where(self.db.tx_conn()) if table == "memory_events" else ""

    def count(self, table: str) -> int:
        """The rows of ``table`` (of ``memory_events``: this store's chain)."""
        statement = f"SELECT count(*) FROM {table} {self._where(table)}"
        return int(self.execute(statement).fetchone()[0])

    def rows(
        self, table: str, columns: Sequence[str], order: str
    ) -> Iterator[builtins.list[tuple[Any, ...]]]:
        """``columns`` of every row of ``table`` in ``order`` (in insertion order where the
        database keeps one for every table), in chunks."""
        order = self.db.dialect.table_order or order
        cursor = self.execute(
            f"SELECT {', '.join(columns)} FROM {table} {self._where(table)} ORDER BY {order}"
        )
        while True:
            chunk = cursor.fetchmany(CHUNK)
            if not chunk:
                return
            yield [tuple(r) for r in chunk]

    def insert(
        self, table: str, columns: Sequence[str], rows: builtins.list[tuple[Any, ...]]
    ) -> None:
        """Append ``rows`` (values of ``columns``) to ``table``."""
        conn = self.db.tx_conn()
        if table == "memory_items":
            self.text.insert_item_rows(conn, columns, rows)
            return
        marks = ", ".join("?" for _ in columns)
        self.db.executemany(
            conn, f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows
        )

    def chain_head(self) -> str | None:
        return self.audit.meta(self.db.tx_conn(), CHAIN_HEAD_KEY)

    def set_chain_head(self, head: str | None) -> None:
        self.audit.set_head(head)

    def finish(self) -> None:
        """Rebuild what the copied rows left stale (full text, caches, statistics)."""
        self.text.after_bulk_load(self.db.tx_conn())
        self.db.touch(everything=True)

"""The audit log of a SQL store: ``memory_events`` rows chained by ``prev_hash``.

Once ``event_hash_chain_backfilled`` is set, every ``memory_events`` row stores ``prev_hash``,
the hash of the previous row (:mod:`swarmmem.core.model.audit`), and ``_meta`` holds the head
and the key marker. A database may keep one chain per database role instead (PostgreSQL:
:class:`~swarmmem.adapters.storage.postgres.store.RoleAuditLog` overrides :meth:`AuditLog.meta`,
:meth:`AuditLog.set_meta` and :meth:`AuditLog.rows_where`). The head a transaction moves is
kept in its :class:`~.database.TxState` and written once, at commit.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from swarmmem.adapters.storage.sql.database import Database, TxState
from swarmmem.adapters.storage.sql.rows import EVENT_COLUMNS, event_from_row
from swarmmem.core.model.audit import (
    CHAIN_HEAD_KEY,
    GENESIS,
    KEY_MARKER_KEY,
    chain_rows,
    event_row_hash,
    key_marker,
    read_key_marker,
    verify_event_chain,
)
from swarmmem.core.model.errors import StorageError
from swarmmem.ports.storage import StoredEvent

#: the positions of ``reason`` and ``event_json`` in a ``memory_events`` row (often None)
_EVENT_NULLABLE = (3, 5)
#: an event row: ``(id, operation, target_id, reason, timestamp, event_json)``
EventRow = tuple[str, str, str, str | None, str, str | None]
#: appends one audit event inside a transaction: (operation, target, reason, payload)
Log = Callable[[str, str, "str | None", "Mapping[str, Any] | None"], None]

#: what writes and verification say of a chain that a configured key never sealed
UNADOPTED_KEY = (
    "an audit key is configured but this store's audit chain carries no keyed marker: it was "
    "never adopted, or the marker was removed (a downgrade). If the history is yours, run "
    "`swarmmem audit-key adopt` to key it from now on"
)


class AuditLog:
    """The store's audit chain (see the module docstring); ``log`` appends an event."""

    def __init__(self, db: Database, log: Log) -> None:
        self.db = db
        self.log = log
        self.chain_active = False
        self.audit_key: bytes | None = None
        self.key_marker: str | None = None
        #: this process created the store (its first migration ran here): a configured key
        #: may seal the chain at once, there is no earlier history to adopt
        self.created_here = False
        db.before_commit.append(self._write_head)

    # -- where the chain's settings live (a database may keep one chain per role) -----------

    def meta(self, conn: Any, key: str) -> str | None:
        """The chain's head (``CHAIN_HEAD_KEY``) or key marker (``KEY_MARKER_KEY``)."""
        return self.db.get_meta(conn, key)

    def set_meta(self, conn: Any, key: str, value: str | None) -> None:
        """Store the chain's head or key marker (``None`` removes it)."""
        if value is None:
            self.db.execute(conn, "DELETE FROM _meta WHERE key = ?", (key,))
        else:
            self.db.set_meta(conn, key, value)

    def rows_where(self, conn: Any) -> str:
        """The ``WHERE`` clause selecting this store's chain among ``memory_events`` (empty:
        every row is one chain)."""
        return ""

    # -- state -----------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read whether the chain is on and its key marker."""
        db = self.db
        with db.connection() as conn:
            has_meta = db.table_exists(conn, "_meta")
            self.chain_active = (
                db.has_column(conn, "memory_events", "prev_hash")
                and has_meta
                and db.get_meta(conn, "event_hash_chain_backfilled") == "1"
            )
            self.key_marker = self.meta(conn, KEY_MARKER_KEY) if has_meta else None

    def _write_head(self, conn: Any, state: TxState) -> None:
        """Write the head the transaction moved (a ``before_commit`` hook)."""
        if state.head_dirty:
            self.set_meta(conn, CHAIN_HEAD_KEY, state.head)
            state.head_dirty = False

    def set_head(self, head: str | None) -> None:
        """Replace the chain head (written at commit; ``None`` removes it)."""
        state = self.db.state
        state.head, state.head_loaded, state.head_dirty = head, True, True

    def head(self, conn: Any) -> str | None:
        """The chain head as this thread sees it (its transaction's, else the stored one)."""
        state = self.db.state
        if state.conn is conn and state.head_dirty:
            return state.head
        return self.meta(conn, CHAIN_HEAD_KEY)

    # -- keys ------------------------------------------------------------------------------

    def enable_key(self, key: bytes) -> None:
        """Hash audit rows with HMAC-SHA256 under ``key`` from now on (see
        :mod:`swarmmem.core.model.audit`); opening never writes for it.

        A chain with a sealed key marker must bring that key. A store this process has just
        created is sealed at once. An existing chain without a marker is not keyed behind
        the owner's back (a marker deleted by someone without the key would otherwise be
        re-sealed over a downgraded history): it must be adopted explicitly
        (:meth:`adopt_key`, ``swarmmem audit-key adopt``); until then writes are refused and
        verification fails.

        Raises:
            StorageError: the store was keyed with another key.
        """
        if not key:
            raise StorageError("the audit key is empty")
        if self.key_marker is not None:
            if read_key_marker(self.key_marker, key) is None:
                raise StorageError(
                    "the audit key does not match the key this store's audit chain was sealed "
                    "with (check SWARMMEM_AUDIT_KEY or memory.audit.keyFile)"
                )
            self.audit_key = key
            return
        self.audit_key = key
        if self.created_here and not self.db.read_only and self.chain_active:
            self._seal("keyed audit chain started")

    def adopt_key(self) -> dict[str, Any]:
        """Key an existing unkeyed chain from now on with the configured key: the current
        rows are sealed as the unkeyed part (they must verify first), and the adoption is an
        audit event of its own. Returns ``{adopted, keyedFrom, legacyRows}``.

        Raises:
            StorageError: no key is configured, the chain is already keyed, or it does not
                verify (nothing is sealed over a broken history).
        """
        if self.audit_key is None:
            raise StorageError(
                "no audit key is configured: set SWARMMEM_AUDIT_KEY or memory.audit.keyFile first"
            )
        if self.key_marker is not None:
            raise StorageError("this store's audit chain is already keyed")
        if not self.chain_active:
            raise StorageError("this store keeps no hash-chained audit log to key")
        with self.db.connection() as conn:
            rows = self.rows(conn)
            head = self.meta(conn, CHAIN_HEAD_KEY)
        report = verify_event_chain(rows, head)
        if not report["verified"]:
            detail = (report.get("divergence") or {}).get("detail", "the head does not match")
            raise StorageError(f"the audit chain does not verify, so it is not adopted: {detail}")
        return self._seal("keyed audit chain adopted")

    def _seal(self, reason: str) -> dict[str, Any]:
        """Seal the key marker over the current rows and log the keying (the log row is the
        first keyed one)."""
        assert self.audit_key is not None
        with self.db.transaction():
            conn = self.db.tx_conn()
            rows = self.rows(conn)
            legacy = next((i for i, row in enumerate(rows) if row[6] is not None), len(rows))
            self.key_marker = key_marker(len(rows), legacy, self.audit_key)
            self.set_meta(conn, KEY_MARKER_KEY, self.key_marker)
            self.log("audit_key", "memory_events", reason, {"keyedFrom": len(rows)})
        return {"adopted": True, "keyedFrom": len(rows), "legacyRows": legacy}

    # -- rows ------------------------------------------------------------------------------

    def append(self, rows: Sequence[EventRow]) -> None:
        """Write event rows (inside a transaction): the chain computed in one loop, the rows
        written with one ``executemany``."""
        db = self.db
        conn = db.tx_conn()
        if not self.chain_active:
            db.insert_many(
                conn,
                "INSERT INTO memory_events (id, operation, target_id, reason, timestamp, "
                "event_json)",
                rows,
                nullable=_EVENT_NULLABLE,
            )
            return
        state = db.state
        if not state.head_loaded:
            state.head, state.head_loaded = self.meta(conn, CHAIN_HEAD_KEY), True
            self.key_marker = self.meta(conn, KEY_MARKER_KEY)
        if self.key_marker is not None and self.audit_key is None:
            raise StorageError(
                "this store's audit chain is keyed: set SWARMMEM_AUDIT_KEY (or "
                "memory.audit.keyFile) to write to it"
            )
        if self.key_marker is None and self.audit_key is not None:
            if state.head is not None or self._has_rows(conn) or db.read_only:
                raise StorageError(UNADOPTED_KEY)
            # an empty chain has no history a removed marker could hide (a new database
            # role's own chain, say): it is keyed at its first write, which logs the keying
            self.key_marker = key_marker(0, 0, self.audit_key)
            self.set_meta(conn, KEY_MARKER_KEY, self.key_marker)
            self.log("audit_key", "memory_events", "keyed audit chain started", {"keyedFrom": 0})
        key = self.audit_key if self.key_marker is not None else None
        chained, head = chain_rows(rows, state.head or GENESIS, key)
        insert = f"INSERT INTO memory_events ({EVENT_COLUMNS})"
        db.insert_many(conn, insert, chained, nullable=_EVENT_NULLABLE)
        if chained:
            state.head, state.head_dirty = head, True

    def _has_rows(self, conn: Any) -> bool:
        """True when this chain holds a row."""
        found = conn.execute(
            f"SELECT 1 FROM memory_events {self.rows_where(conn)} LIMIT 1"
        ).fetchone()
        return found is not None

    def append_events(self, events: Sequence[StoredEvent]) -> None:
        """:meth:`append` of stored events."""
        self.append(
            [(e.id, e.operation, e.target_id, e.reason, e.timestamp, e.event_json) for e in events]
        )

    def rows(self, conn: Any) -> builtins.list[Any]:
        """This chain's rows in insertion order."""
        order = self.db.dialect.order_column
        rows: builtins.list[Any] = conn.execute(
            f"SELECT {EVENT_COLUMNS} FROM memory_events {self.rows_where(conn)} "
            f"ORDER BY {order} ASC"
        ).fetchall()
        return rows

    def events(self) -> builtins.list[StoredEvent]:
        with self.db.connection() as conn:
            return [event_from_row(r) for r in self.rows(conn)]

    def verify(self) -> dict[str, Any]:
        """Walk the chain in insertion order and check every ``prev_hash`` and the head.

        Returns ``{supported, totalRows, chainedRows, legacyRows, verified, headMatch,
        headStored}`` plus ``divergence: {rowId, detail}`` at the first broken link, or
        ``headExpected`` (the last row's hash) when the walk completed.
        """
        with self.db.connection() as conn:
            rows = self.rows(conn)
            head = self.head(conn)
            marker = self.meta(conn, KEY_MARKER_KEY)
        report = verify_event_chain(rows, head, key=self.audit_key, marker=marker)
        if marker is None and self.audit_key is not None and report["chainedRows"]:
            # a key is configured but the chain was never keyed, or its marker was removed
            return {**report, "verified": False, "keyed": False, "keyError": UNADOPTED_KEY}
        return report

    # -- the one-time backfill ---------------------------------------------------------------

    def backfill(self, conn: Any) -> None:
        """Chain the existing events in insertion order and start chaining new ones.

        Rows that are already chained are never chained again: a store whose flag went
        missing while chained rows exist only resumes (what was edited stays detectable).
        """
        order = self.db.dialect.order_column
        where = self.rows_where(conn)
        chained = conn.execute(
            f"SELECT COUNT(*) FROM memory_events {where or 'WHERE TRUE'} AND prev_hash IS NOT NULL"
        ).fetchone()[0]
        if chained:
            self.chain_active = True
            self.log(
                "migration",
                "13",
                "event hash chain resumed",
                {"detail": f"{chained} chained row(s) found; nothing was re-chained"},
            )
            return
        rows = conn.execute(
            f"SELECT {order}, id, operation, target_id, reason, timestamp, event_json "
            f"FROM memory_events {where} ORDER BY {order} ASC"
        ).fetchall()
        previous = GENESIS
        for position, event_id, operation, target_id, reason, timestamp, event_json in rows:
            self.db.execute(
                conn,
                f"UPDATE memory_events SET prev_hash = ? WHERE {order} = ?",
                (previous, position),
            )
            previous = event_row_hash(
                event_id, operation, target_id, reason, timestamp, event_json, previous
            )
        if rows:
            self.set_head(previous)
        self.chain_active = True
        self.log(
            "migration",
            "13",
            "backfill_event_hash_chain",
            {"detail": f"{len(rows)} memory_events row(s) chained deterministically"},
        )

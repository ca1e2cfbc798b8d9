"""Opening a SQL store: the missing migration steps, then the one-time backfills.

A database lists its steps (:func:`~.schema.migration_steps`); :meth:`Migrator.migrate` runs
the missing ones, each in its own (nested) transaction and audited, then the backfills run
once each, remembered by a ``_meta`` flag. A store written by a newer release is refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple

from swarmmem.adapters.storage.sql.audit import AuditLog
from swarmmem.adapters.storage.sql.database import Database
from swarmmem.adapters.storage.sql.rows import report_values, text_terms_of
from swarmmem.adapters.storage.sql.schema import Migration
from swarmmem.core.model.errors import StorageError
from swarmmem.core.model.ids import stable_scope_key

#: one backfill: reads and rewrites rows on the transaction's connection
Step = Callable[[Any], None]


class Schema(NamedTuple):
    """What a database brings to :class:`Migrator`: its migration steps, its fills of
    ``memory_recall_usage.run_id`` (from the usage JSON) and ``memory_items.valid_from`` (from
    the record's ``createdAt``, else ``updatedAt``), and its own backfills after the shared
    ones (``_meta`` flag, step)."""

    migrations: tuple[Migration, ...]
    run_ids: Step
    provenance: Step
    backfills: tuple[tuple[str, Step], ...] = ()


class Migrator:
    """Brings a database's schema and derived data up to this release.

    Args:
        db: the database.
        schema: its steps (in version order) and backfills.
        audit: the store's audit log (each step is audited; v13 chains the events).
    """

    def __init__(self, db: Database, schema: Schema, audit: AuditLog) -> None:
        self.db = db
        self.migrations = schema.migrations
        self.audit = audit
        self.backfills: tuple[tuple[str, Step], ...] = (
            ("scope_key_backfilled", self._scope_keys),
            ("recall_run_id_backfilled", schema.run_ids),
            ("provenance_columns_backfilled", schema.provenance),
            ("event_hash_chain_backfilled", audit.backfill),
            ("report_columns_backfilled", self._report_columns),
            ("text_terms_backfilled", self._text_terms),
            *schema.backfills,
        )

    @property
    def latest(self) -> int:
        return self.migrations[-1].version

    def current_known(self, conn: Any) -> int:
        """The schema version of the store, refused when a newer release wrote it.

        Raises:
            StorageError: the schema is newer than this release's last migration.
        """
        current = self.db.current_version(conn)
        if current > self.latest:
            raise StorageError(
                f"this store's schema is v{current}, newer than the v{self.latest} this release "
                "of swarmmem knows: upgrade swarmmem to open it"
            )
        return current

    def needs_upgrade(self, conn: Any) -> bool:
        """A migration is missing or a backfill has not run."""
        if self.current_known(conn) < self.latest:
            return True
        return any(self.db.get_meta(conn, key) != "1" for key, _ in self.backfills)

    def upgrade(self) -> None:
        """Run the missing migrations, then the backfills not yet done."""
        self.migrate()
        self.run_backfills()

    def migrate(self) -> None:
        """Run the missing migration steps, each in its own transaction and audited."""
        db = self.db
        self.audit.refresh()
        with db.connection() as conn:
            current = self.current_known(conn)
            if current >= self.latest:
                return
        self.audit.created_here = current == 0
        for step in self.migrations:
            with db.transaction():
                conn = db.tx_conn()
                if step.version <= db.current_version(conn):
                    continue
                for statement in step.statements:
                    conn.execute(statement)
                db.execute(
                    conn,
                    "INSERT INTO schema_migrations (version, name) VALUES (?, ?)",
                    (step.version, step.name),
                )
                self.audit.log("migration", str(step.version), step.name, None)

    def run_backfills(self) -> None:
        """Run each backfill not yet flagged done in ``_meta``, once, in its own transaction."""
        db = self.db
        for key, step in self.backfills:
            with db.connection() as conn:
                if db.get_meta(conn, key) == "1":
                    continue
            with db.transaction():
                conn = db.tx_conn()
                if db.get_meta(conn, key) == "1":
                    continue
                step(conn)
                db.set_meta(conn, key, "1")
        self.audit.refresh()

    def fill_derived_columns(self) -> None:
        """Fill the report columns and the text terms when a row lacks them (rows of an
        earlier release; each check reads a partial index)."""
        db = self.db
        with db.connection() as conn:
            report = db.execute(
                conn,
                "SELECT 1 FROM memory_items WHERE q_value IS NULL OR confidence IS NULL LIMIT 1",
            ).fetchone()
            terms = db.execute(
                conn, "SELECT 1 FROM memory_items WHERE text_terms IS NULL LIMIT 1"
            ).fetchone()
        if db.read_only or (report is None and terms is None):
            return
        with db.transaction():
            if report is not None:
                self._report_columns(db.tx_conn())
            if terms is not None:
                self._text_terms(db.tx_conn())

    # -- the shared backfills ----------------------------------------------------------------

    def _scope_keys(self, conn: Any) -> None:
        """Recompute ``scope_key`` from each record's scope (rows of older writers)."""
        rows = conn.execute("SELECT id, scope_key, record_json FROM memory_items").fetchall()
        for memory_id, scope_key, record_json in rows:
            try:
                key = stable_scope_key(json.loads(record_json).get("scope"))
            except (ValueError, TypeError, KeyError, AttributeError):
                continue
            if key != scope_key:
                self.db.execute(
                    conn, "UPDATE memory_items SET scope_key = ? WHERE id = ?", (key, memory_id)
                )

    def _report_columns(self, conn: Any) -> None:
        """``q_value`` and ``confidence`` of rows that lack them (written before v15, or by
        a writer that does not know them; also run on every open, through a partial index)."""
        rows = self.db.execute(
            conn,
            "SELECT id, record_json FROM memory_items WHERE q_value IS NULL OR confidence IS NULL",
        ).fetchall()
        updates = []
        for memory_id, record_json in rows:
            values = report_values(record_json)
            if values is not None:
                updates.append((*values, memory_id))
        if updates:
            self.db.executemany(
                conn, "UPDATE memory_items SET q_value = ?, confidence = ? WHERE id = ?", updates
            )
            self.db.touch(everything=True)

    def _text_terms(self, conn: Any) -> None:
        """``text_terms`` of rows written before v18 (or by a writer that does not know it)."""
        rows = conn.execute(
            "SELECT id, record_json FROM memory_items WHERE text_terms IS NULL"
        ).fetchall()
        updates = [(text_terms_of(record_json), memory_id) for memory_id, record_json in rows]
        if updates:
            self.db.executemany(
                conn, "UPDATE memory_items SET text_terms = ? WHERE id = ?", updates
            )

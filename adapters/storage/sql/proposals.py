"""The curator's queue of a SQL store: ``memory_proposals`` and the merge relations an applied
merge writes to ``memory_relations``."""

from __future__ import annotations

import builtins
import json
from collections.abc import Callable
from typing import Any

from swarmmem.adapters.storage.sql.database import Database
from swarmmem.adapters.storage.sql.dialect import where_equal
from swarmmem.core.model.codec import proposal_from_dict, proposal_to_dict
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.records import MemoryProposal
from swarmmem.core.model.semantics import dumps, merge_pairs, relation_created_at


class Proposals:
    """Reads and writes of proposals; ``report`` notes a row that does not parse."""

    def __init__(self, db: Database, report: Callable[[str, BaseException], None]) -> None:
        self.db = db
        self.report = report

    def parse(self, proposal_id: str, proposal_json: str) -> MemoryProposal | None:
        """The proposal of a row (``None``, reported, when it does not parse)."""
        try:
            return proposal_from_dict(json.loads(proposal_json))
        except (ValueError, TypeError, MemoryValidationError) as exc:
            self.report(proposal_id, exc)
            return None

    def has(self, proposal_id: str) -> bool:
        row = self.db.execute(
            self.db.tx_conn(), "SELECT 1 FROM memory_proposals WHERE id = ?", (proposal_id,)
        ).fetchone()
        return row is not None

    def write(self, proposal: MemoryProposal) -> None:
        conn = self.db.tx_conn()
        self.db.execute(
            conn,
            "INSERT INTO memory_proposals (id, status, created_at, proposal_json) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET status = excluded.status, "
            "created_at = excluded.created_at, proposal_json = excluded.proposal_json",
            (proposal.id, proposal.status, proposal.created_at, dumps(proposal_to_dict(proposal))),
        )
        self.write_relations(conn, proposal)

    def write_relations(self, conn: Any, proposal: MemoryProposal) -> None:
        """The relation clique of an applied merge proposal, between records that exist."""
        pairs = merge_pairs(proposal)
        if not pairs:
            return
        created = relation_created_at(proposal)
        self.db.executemany(
            conn,
            "INSERT INTO memory_relations (source_id, target_id, proposal_id, created_at) "
            "SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM memory_items WHERE id = ?) "
            "AND EXISTS (SELECT 1 FROM memory_items WHERE id = ?) "
            "ON CONFLICT (source_id, target_id) DO NOTHING",
            [(s, t, proposal.id, created, s, t) for s, t in pairs],
        )
        self.db.touch({i for pair in pairs for i in pair})

    def get(self, proposal_id: str) -> MemoryProposal | None:
        with self.db.connection() as conn:
            row = self.db.execute(
                conn, "SELECT proposal_json FROM memory_proposals WHERE id = ?", (proposal_id,)
            ).fetchone()
        return None if row is None else self.parse(proposal_id, row[0])

    def list(self, status: str | None = None) -> builtins.list[MemoryProposal]:
        select = "SELECT id, proposal_json FROM memory_proposals"
        statement, params = where_equal(select, "status", status)
        with self.db.connection() as conn:
            rows = self.db.execute(conn, statement + " ORDER BY created_at ASC, id ASC", params)
            parsed = [self.parse(pid, pjson) for pid, pjson in rows.fetchall()]
        return [p for p in parsed if p is not None]

    def replay_relations(self) -> None:
        """Rebuild merge relations missing on disk from the applied merge proposals."""
        db = self.db
        with db.connection() as conn:
            proposals = []
            for (proposal_json,) in conn.execute(
                "SELECT proposal_json FROM memory_proposals WHERE status = 'applied' "
                "ORDER BY created_at ASC, id ASC"
            ).fetchall():
                try:
                    proposal = proposal_from_dict(json.loads(proposal_json))
                except (ValueError, MemoryValidationError):
                    continue
                if proposal.operation == "merge":
                    proposals.append(proposal)
            missing = any(
                db.execute(
                    conn,
                    "SELECT 1 FROM memory_relations WHERE source_id = ? AND target_id = ?",
                    pair,
                ).fetchone()
                is None
                for proposal in proposals
                for pair in merge_pairs(proposal)
            )
        if missing:
            with db.transaction():
                for proposal in proposals:
                    self.write_relations(db.tx_conn(), proposal)

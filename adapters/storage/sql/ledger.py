"""The learning ledgers of a SQL store (recall usage, outcome events, reward events), and the
purge that scrubs a memory's text out of every ledger and the proposals."""

from __future__ import annotations

import builtins
import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from swarmmem.adapters.storage.sql.database import Database
from swarmmem.adapters.storage.sql.dialect import where_equal
from swarmmem.adapters.storage.sql.records import TextIndex, parsed_rows
from swarmmem.adapters.storage.sql.rows import (
    RECALL_USAGE_COLUMNS,
    REWARD_COLUMNS,
    outcome_event_from_row,
    recall_usage_from_row,
    recall_usage_params,
    reward_event_from_row,
    reward_event_params,
)
from swarmmem.core.model.codec import (
    outcome_event_to_dict,
    proposal_from_dict,
    proposal_to_dict,
    recall_usage_to_dict,
)
from swarmmem.core.model.errors import ConflictError
from swarmmem.core.model.events import OutcomeEvent, RecallUsage, RewardEvent
from swarmmem.core.model.semantics import dumps, scrub_outcome, scrub_proposal, scrub_usage

#: one table a purge rewrites: (count name, rows as (json, ..., id), parse, scrub, JSON form,
#: the UPDATE of a row's JSON)
ScrubbedTable = tuple[str, str, Callable[[Any], Any], Callable[[Any], Any], Any, str]


class Ledger:
    """Appends to and reads of the ledgers."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def write_usage(self, usage: RecallUsage) -> None:
        self.db.execute(
            self.db.tx_conn(),
            f"INSERT INTO memory_recall_usage ({RECALL_USAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
            recall_usage_params(str(uuid.uuid4()), usage),
        )

    def recall_usage(
        self,
        *,
        run_id: str | None = None,
        since: str | None = None,
        like: str | None = None,
        newest: int | None = None,
    ) -> builtins.list[RecallUsage]:
        """Usage rows, oldest first: of ``run_id``, from ``since`` on, whose JSON is ``LIKE``
        the pattern ``like`` (escape character ``!``); with ``newest``, only that many of the
        newest."""
        where: builtins.list[str] = []
        params: builtins.list[Any] = []
        if like is not None:
            where.append("usage_json LIKE ? ESCAPE '!'")
            params.append(like)
        if run_id is not None:
            where.append("run_id = ?")
            params.append(run_id)
        if since is not None:
            where.append("timestamp >= ?")
            params.append(since)
        statement = "SELECT timestamp, usage_json FROM memory_recall_usage"
        if where:
            statement += " WHERE " + " AND ".join(where)
        order = self.db.dialect.order_column
        if newest is not None:
            statement += f" ORDER BY timestamp DESC, {order} DESC LIMIT ?"
            params.append(newest)
        else:
            statement += f" ORDER BY timestamp ASC, {order} ASC"
        with self.db.connection() as conn:
            rows = self.db.execute(conn, statement, params).fetchall()
        return parsed_rows(rows[::-1] if newest is not None else rows, recall_usage_from_row)

    def stored_outcome(self, event_id: str) -> OutcomeEvent | None:
        row = self.db.execute(
            self.db.tx_conn(), "SELECT event_json FROM memory_outcomes WHERE id = ?", (event_id,)
        ).fetchone()
        if row is None:
            return None
        try:
            return outcome_event_from_row(row)
        except ValueError as exc:  # an unreadable row still owns its id
            raise ConflictError(f"outcome event id {event_id} is taken by an invalid row") from exc

    def write_outcome(self, event: OutcomeEvent) -> None:
        self.db.execute(
            self.db.tx_conn(),
            "INSERT INTO memory_outcomes (id, memory_id, generation, at, event_json) "
            "VALUES (?, ?, ?, ?, ?)",
            (
                event.id,
                event.memory_id,
                event.generation,
                event.outcome.at,
                dumps(outcome_event_to_dict(event)),
            ),
        )
        self.db.touch((event.memory_id,))

    def outcomes(self, memory_id: str | None = None) -> builtins.list[OutcomeEvent]:
        select = "SELECT event_json FROM memory_outcomes"
        statement, params = where_equal(select, "memory_id", memory_id)
        with self.db.connection() as conn:
            rows = self.db.execute(conn, statement + " ORDER BY at ASC, id ASC", params).fetchall()
        return parsed_rows(rows, outcome_event_from_row)

    def write_reward(self, event: RewardEvent) -> None:
        self.db.execute(
            self.db.tx_conn(),
            f"INSERT INTO memory_reward_events ({REWARD_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            reward_event_params(event),
        )

    def reward_events(self, memory_id: str | None = None) -> builtins.list[RewardEvent]:
        """Every reward event, or those of ``memory_id`` (through its index), oldest first."""
        where, params = ("WHERE memory_id = ? ", (memory_id,)) if memory_id else ("", ())
        with self.db.connection() as conn:
            rows = self.db.execute(
                conn,
                f"SELECT {REWARD_COLUMNS} FROM memory_reward_events {where}"
                f"ORDER BY timestamp ASC, {self.db.dialect.order_column} ASC",
                params,
            ).fetchall()
        return parsed_rows(rows, reward_event_from_row)


def scrub_rows(
    db: Database, text: TextIndex, memory_id: str, texts: Sequence[str], now: str
) -> dict[str, int]:
    """Rewrite every proposal, outcome event and usage row that holds ``texts`` (inside a
    transaction), then purge the full-text index; returns how many rows of each changed."""
    conn = db.tx_conn()
    counts: dict[str, int] = {}
    tables: tuple[ScrubbedTable, ...] = (
        (
            "proposals",
            "SELECT proposal_json, id FROM memory_proposals",
            lambda row: proposal_from_dict(json.loads(row[0])),
            lambda proposal: scrub_proposal(proposal, memory_id, texts, now),
            proposal_to_dict,
            "UPDATE memory_proposals SET proposal_json = ? WHERE id = ?",
        ),
        (
            "outcomes",
            "SELECT event_json, id FROM memory_outcomes",
            outcome_event_from_row,
            lambda event: scrub_outcome(event, texts),
            outcome_event_to_dict,
            "UPDATE memory_outcomes SET event_json = ? WHERE id = ?",
        ),
        (
            "recallUsage",
            "SELECT timestamp, usage_json, id FROM memory_recall_usage",
            recall_usage_from_row,
            lambda usage: scrub_usage(usage, texts),
            recall_usage_to_dict,
            "UPDATE memory_recall_usage SET usage_json = ? WHERE id = ?",
        ),
    )
    for name, select, parse, scrub, to_json, update in tables:
        counts[name] = 0
        for row in db.execute(conn, select).fetchall():
            try:
                clean = scrub(parse(row))
            except (ValueError, TypeError):  # a row that does not parse stays as it is
                continue
            if clean is not None:
                db.execute(conn, update, (dumps(to_json(clean)), row[-1]))
                counts[name] += 1
    text.purge(conn)
    db.touch(everything=True)
    db.state.purged = True
    return counts

"""Cache invalidation between store instances (and hosts) with LISTEN/NOTIFY.

The record cache is self-validating (row versions), but the caches of derived views
(relations and outcome events per memory) and of full-text statistics are not. Every
committing transaction that changes them sends ``NOTIFY`` on the schema's channel with the
touched ids (or ``{"all": true}``), in the same transaction, so a notification exists
exactly for committed changes. Each instance ``LISTEN``\\ s on a dedicated connection
(:class:`Listener`) and drains the queue before every read that could use these caches; its
own writes invalidate synchronously. A write on another host becomes visible once its
notification has arrived (sub-millisecond on one machine).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable
from typing import Any

from psycopg import sql

from swarmmem.adapters.storage.sql import Touched
from swarmmem.core.model.semantics import dumps

MAX_NOTIFY_IDS = 200
NOTIFY_SQL = "SELECT pg_notify(?, ?)"


def channel_for(schema_name: str) -> str:
    """The notification channel of a schema."""
    return "swarmmem_" + hashlib.sha256(schema_name.encode()).hexdigest()[:20]


def encode(touched: Touched) -> str | None:
    """The payload announcing ``touched`` (None: nothing to announce)."""
    if not (touched.ids or touched.items or touched.everything):
        return None
    if touched.everything or len(touched.ids) > MAX_NOTIFY_IDS:
        return dumps({"all": True})
    return dumps({"ids": sorted(touched.ids), "items": touched.items})


def decode(payload: str) -> Touched:
    """What a payload announces (anything unreadable means everything)."""
    try:
        data = json.loads(payload)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return Touched(everything=True)
    ids = data.get("ids")
    return Touched(
        frozenset(str(i) for i in ids) if isinstance(ids, list) else frozenset(),
        bool(data.get("items")),
        bool(data.get("all")),
    )


class Listener:
    """A dedicated connection ``LISTEN``-ing on one channel."""

    def __init__(self, connect: Callable[[], Any], channel: str) -> None:
        self._conn = connect()
        try:
            self._conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
        except BaseException:
            self.close()
            raise

    def drain(self) -> list[Touched]:
        """The notifications that have arrived (raises the driver's error if the link broke)."""
        return [decode(n.payload) for n in self._conn.notifies(timeout=0)]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._conn.close()

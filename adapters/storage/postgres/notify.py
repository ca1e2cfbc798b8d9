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
import threading
from collections.abc import Callable
from typing import Any

import attrs
import psycopg
from psycopg import sql

from swarmmem.adapters.storage.sql import CACHE_LIMIT, Database, Touched, TxState, ViewParts
from swarmmem.core.model.events import OutcomeEvent
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


@attrs.frozen
class FtsStats:
    """The full-text totals of the rows a role sees: how many, and their tokens."""

    rows: int
    tokens: int


class NotifiedCaches:
    """The caches that ``NOTIFY`` keeps current: views per memory (relations and outcome
    events) and full-text statistics (totals and per-phrase document counts).

    Reads inside a transaction never use or fill them; a fill is kept only when no
    invalidation happened while it was read (``generation``). If the listening connection
    fails, they are dropped and the store runs uncached (``disabled_reason`` says why).
    """

    def __init__(self, db: Database, *, enabled: bool, scrub: Callable[[str], str]) -> None:
        self.db = db
        self.lock = threading.RLock()
        self.views_cache: dict[str, tuple[tuple[str, ...], tuple[OutcomeEvent, ...]]] = {}
        self.stats: FtsStats | None = None
        self.df: dict[tuple[bool, tuple[str, ...]], int] = {}
        self.generation = 0
        self.notifications = 0
        self.channel = ""
        self.disabled_reason: str | None = None if enabled else "caching is off"
        self._scrub = scrub
        self._listener: Listener | None = None

    def start(self, connect: Callable[[], Any]) -> None:
        """Listen on :attr:`channel` (when caching is on)."""
        if self.disabled_reason is not None:
            return
        try:
            self._listener = Listener(connect, self.channel)
        except psycopg.Error as exc:
            self.disabled_reason = f"LISTEN failed, caches are off: {self._scrub(str(exc).strip())}"

    def stop(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        with self.lock:
            self.views_cache.clear()
            self.stats = None
            self.df.clear()

    def caching(self) -> bool:
        return self._listener is not None and self.db.state.conn is None

    def sync(self) -> None:
        """Apply every notification that has arrived (before a read outside a transaction)."""
        listener = self._listener
        if listener is None or self.db.state.conn is not None:
            return
        with self.lock:
            try:
                arrived = listener.drain()
            except psycopg.Error as exc:
                self.disabled_reason = (
                    f"the LISTEN connection failed, caches are off: {self._scrub(str(exc).strip())}"
                )
                self.stop()
                self.db.ended(Touched(everything=True))
                return
            for touched in arrived:
                self.notifications += 1
                self.db.ended(touched)

    def invalidate(self, touched: Touched) -> None:
        """Drop what ``touched`` changed (an ``after_end`` hook)."""
        if not (touched.ids or touched.items or touched.everything):
            return
        with self.lock:
            self.generation += 1
            if touched.everything:
                self.views_cache.clear()
            for memory_id in touched.ids:
                self.views_cache.pop(memory_id, None)
            if touched.items or touched.everything:
                self.stats = None
                self.df.clear()

    def announce(self, conn: Any, state: TxState) -> None:
        """Tell the other instances what the transaction changed (a ``before_commit`` hook)."""
        payload = encode(state.touched())
        if payload is not None:
            self.db.execute(conn, NOTIFY_SQL, (self.channel, payload))

    def views(
        self, conn: Any, ids: list[str], read: Callable[[Any, list[str]], ViewParts]
    ) -> ViewParts:
        caching = self.caching()
        found = {}
        if caching:
            with self.lock:
                found = {i: self.views_cache[i] for i in ids if i in self.views_cache}
        missing = [i for i in ids if i not in found]
        if missing:
            generation = self.generation
            fresh = read(conn, missing)
            found.update(fresh)
            if caching:
                with self.lock:
                    if self.generation == generation:
                        if len(self.views_cache) >= CACHE_LIMIT:
                            self.views_cache.clear()
                        self.views_cache.update(fresh)
        return found

    def related(self, memory_id: str) -> list[str] | None:
        if not self.caching():
            return None
        with self.lock:
            hit = self.views_cache.get(memory_id)
        return None if hit is None else list(hit[0])

    def info(self, records: int) -> dict[str, Any]:
        """Sizes of the caches, notifications received, and why caching is off (if it is)."""
        with self.lock:
            return {
                "listening": self._listener is not None,
                "records": records,
                "views": len(self.views_cache),
                "fts_stats": self.stats is not None,
                "document_frequencies": len(self.df),
                "notifications": self.notifications,
                "generation": self.generation,
                "reason": self.disabled_reason,
            }

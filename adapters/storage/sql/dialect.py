"""The SQL text that differs between databases, and the shapes list queries and searches share."""

from __future__ import annotations

import abc
import builtins
import functools
import operator
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from swarmmem.adapters.storage.sql.schema import EXPIRING_INDEX
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.semantics import ListFilter


def held_text_terms(
    terms: Mapping[str, frozenset[str] | None], ids: Iterable[str], wanted: Iterable[str]
) -> dict[str, frozenset[str]] | None:
    """Per id, which of the ``wanted`` stemmed terms its stored text terms (as a set) hold
    (``None`` when a row has none: written by an older writer, its text is stemmed at recall
    instead)."""
    wanted = frozenset(wanted)
    held = {}
    for memory_id in ids:
        stored = terms.get(memory_id)
        if stored is None:
            return None
        held[memory_id] = wanted & stored
    return held


class FullTextHits(NamedTuple):
    """A full-text pre-selection: scoped ids in list order (every one, or at least every
    ranked one; empty only when nothing is in scope), the best matches first, and the row
    versions read with them (for the record cache)."""

    scoped: builtins.list[str]
    ranked: builtins.list[str]
    versions: dict[str, Any]
    #: ``-bm25()`` of each ranked id (higher is better); empty when the rank has no score
    scores: dict[str, float] | None = None
    #: the stored ``text_terms`` of each ranked id as a set, when the search read them already
    terms: dict[str, frozenset[str] | None] | None = None
    #: the ``item_columns`` row of each ranked id, when the search read them already
    items: dict[str, tuple[Any, ...]] | None = None


#: the SQL order of each ``ListFilter.order``
ITEM_ORDERS = {
    "updated": "updated_at DESC, id ASC",
    "q_desc": "q_value DESC, id ASC",
    "q_asc": "q_value ASC, id ASC",
}


class ItemQuery(NamedTuple):
    """A list query: ``columns`` of the items in ``scope_keys`` (any when None) that match
    every ``where`` condition (with ``params``), in ``order`` (newest first by default), at
    most ``limit``."""

    columns: str
    scope_keys: Sequence[str] | None
    where: builtins.list[str]
    params: builtins.list[Any]
    limit: int | None
    order: str = ITEM_ORDERS["updated"]
    #: the index the rows are read through (the planner is told where it must be)
    through: str | None = None


class SqlDialect(abc.ABC):
    """The SQL text that differs between databases (one subclass per database)."""

    #: how the driver marks a parameter (SQL here is written with ``?``)
    placeholder = "?"
    #: the column that orders rows by insertion
    order_column: str
    #: a column of every table that orders its rows by insertion (SQLite's ``rowid``), or
    #: ``None``: whole tables are then read in the order their copy names
    table_order: str | None = None
    #: a column that changes on every write of an item row (else the whole row is compared)
    version_column: str | None = None
    #: ids of item rows whose JSON does not even parse (``None``: the type guarantees it does)
    damaged_items_sql: str | None = None
    #: the driver binds ``None`` slowly (Python's sqlite3 modules look for an adapter of it,
    #: raising and clearing an AttributeError for every value), so bulk inserts write a
    #: column that is ``None`` in every row of the batch as the ``NULL`` literal instead
    slow_null_binding = False

    def sql(self, statement: str) -> str:
        """``statement`` with this driver's placeholders."""
        return statement if self.placeholder == "?" else _rewrite(statement, self.placeholder)

    @abc.abstractmethod
    def begin(self) -> builtins.list[tuple[str, tuple[Any, ...]]]:
        """The statements that open the outermost transaction and take the write lock."""

    def unindexed(self, column: str) -> str:
        """``column`` written so that the planner does not pick an index for it."""
        return column

    def items_through(self, index: str | None) -> str:
        """The items table read through ``index`` (a planner with statistics finds it
        alone)."""
        return "memory_items"

    @abc.abstractmethod
    def one_of(self, column: str, values: Sequence[str]) -> tuple[str, builtins.list[Any]]:
        """A condition ``column`` in a short list of ``values``, with its parameters."""

    @abc.abstractmethod
    def any_of(self, column: str) -> str:
        """A condition ``column`` in a list of any length passed as one parameter."""

    @abc.abstractmethod
    def array(self, values: Sequence[str]) -> Any:
        """The one parameter of :meth:`any_of`."""

    def select_items(self, q: ItemQuery) -> tuple[str, builtins.list[Any]]:
        """The list query of ``q``: one statement with its parameters."""
        where, params = q.where, q.params
        if q.scope_keys is not None:
            clause, values = self.one_of("scope_key", q.scope_keys)
            where, params = [clause, *where], [*values, *params]
        statement = f"SELECT {q.columns} FROM {self.items_through(q.through)}"
        if where:
            statement += " WHERE " + " AND ".join(where)
        statement += f" ORDER BY {q.order}"
        if q.limit is not None:
            statement += " LIMIT ?"
            params = [*params, q.limit]
        return statement, params


@functools.lru_cache(maxsize=512)
def _rewrite(statement: str, placeholder: str) -> str:
    return statement.replace("?", placeholder)


def shared_nulls(
    rows: Sequence[Sequence[Any]], nullable: Sequence[int]
) -> tuple[tuple[int, ...], Sequence[Sequence[Any]]]:
    """The positions among ``nullable`` whose value is ``None`` in every one of ``rows``, and
    the rows without the values at those positions (the rows themselves when there is none)."""
    if not rows:
        return (), rows
    nulls = tuple(at for at in nullable if all(row[at] is None for row in rows))
    if not nulls:
        return (), rows
    kept = [at for at in range(len(rows[0])) if at not in nulls]
    if len(kept) == 1:
        return nulls, [(row[kept[0]],) for row in rows]
    pick = operator.itemgetter(*kept)
    return nulls, [pick(row) for row in rows]


@functools.lru_cache(maxsize=64)
def values_list(width: int, nulls: tuple[int, ...] = ()) -> str:
    """``?, ?, NULL, ?`` for rows of ``width`` values, ``NULL`` at the positions ``nulls``."""
    return ", ".join("NULL" if at in nulls else "?" for at in range(width))


def where_equal(statement: str, column: str, value: str | None) -> tuple[str, tuple[str, ...]]:
    """``statement`` limited to rows whose ``column`` is ``value`` (every row when None)."""
    return (statement, ()) if value is None else (f"{statement} WHERE {column} = ?", (value,))


def list_query(
    dialect: SqlDialect, flt: ListFilter, columns: str
) -> tuple[str, builtins.list[Any]] | None:
    """The reference list query for ``flt`` selecting ``columns`` (None: nothing matches)."""
    found = list_conditions(dialect, flt)
    if found is None:
        return None
    where, params = found
    limit = None if flt.limit is None else max(flt.limit, 0)
    if flt.order not in ITEM_ORDERS:
        raise MemoryValidationError(f"unknown list order {flt.order!r}")
    order = ITEM_ORDERS[flt.order]
    through = EXPIRING_INDEX if flt.has_expiry else None
    query = ItemQuery(columns, flt.scope_keys, where, params, limit, order, through)
    return dialect.select_items(query)


def list_conditions(
    dialect: SqlDialect, flt: ListFilter
) -> tuple[builtins.list[str], builtins.list[Any]] | None:
    """The conditions of ``flt`` but its scope keys (None: nothing matches)."""
    if flt.scope_keys is not None and not flt.scope_keys:
        return None
    if flt.kinds is not None and not flt.kinds:
        return None
    if flt.ids is not None and not flt.ids:
        return None
    where: builtins.list[str] = []
    params: builtins.list[Any] = []
    if flt.kinds is not None:
        clause, values = dialect.one_of("kind", flt.kinds)
        where.append(clause)
        params.extend(values)
    if not flt.include_inactive:
        where.append("superseded_by IS NULL AND deleted = 0")
    if not flt.include_expired:
        where.append("(expires_at IS NULL OR expires_at > ?)")
        params.append(flt.now)
    if flt.ids is not None:
        where.append(dialect.any_of("id"))
        params.append(dialect.array(flt.ids))
    if flt.exclude_ids:
        where.append(f"NOT ({dialect.any_of('id')})")
        params.append(dialect.array(flt.exclude_ids))
    for column, wanted in (("deleted", flt.deleted), ("superseded_by", flt.superseded)):
        if wanted is not None and column == "deleted":
            where.append("deleted = 1" if wanted else "deleted = 0")
        elif wanted is not None:
            where.append("superseded_by IS NOT NULL" if wanted else "superseded_by IS NULL")
    for condition, value in (
        ("q_value > ?", flt.q_above),
        ("q_value < ?", flt.q_below),
        ("confidence < ?", flt.confidence_below),
    ):
        if value is not None:
            where.append(condition)
            params.append(value)
    if flt.has_expiry is not None:
        where.append("expires_at IS NOT NULL" if flt.has_expiry else "expires_at IS NULL")
    return where, params

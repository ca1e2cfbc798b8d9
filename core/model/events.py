"""Entries of the three learning ledgers: recall usage, outcome events and reward events.

The storage port takes and returns these values; every provider keeps them in the reference
JSON shape (JSONL lines, SQL ``*_json`` columns, export files), which
:mod:`swarmmem.core.model.codec` writes and reads. Like the records they are
``@attrs.frozen(kw_only=True)`` and validated on construction: a bad value raises
:class:`~swarmmem.core.model.errors.MemoryValidationError` naming the field.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from swarmmem.core.model.records import (
    MAX_ANCHORS,
    Anchor,
    MemoryScope,
    OutcomeEntry,
    _fail,
    _opt_str,
    _req_str,
)

# Anchor and OutcomeEntry, the parts of an outcome event, are re-exported with it.
__all__ = ["Anchor", "OutcomeEntry", "OutcomeEvent", "RecallUsage", "RewardEvent"]


def _as_tuple(value: Any) -> Any:
    """Lists become tuples; anything else is left for the validator to refuse."""
    return tuple(value) if isinstance(value, list | tuple) else value


def _items(kind: type | tuple[type, ...], what: str, optional: bool = False) -> Any:
    def check(_inst: object, attr: attrs.Attribute[Any], value: object) -> None:
        if value is None and optional:
            return
        if not isinstance(value, tuple):
            raise _fail(attr.name, f"must be an array; got {value!r:.80}")
        for item in value:
            if not isinstance(item, kind) or isinstance(item, bool):
                raise _fail(attr.name, f"items must be {what}; got {item!r:.80}")

    return check


def _instance(kind: type) -> Any:
    def check(_inst: object, attr: attrs.Attribute[Any], value: object) -> None:
        if not isinstance(value, kind):
            raise _fail(attr.name, f"must be a {kind.__name__}; got {type(value).__name__}")

    return check


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _opt_int(_inst: object, attr: attrs.Attribute[Any], value: object) -> None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise _fail(attr.name, f"must be an integer; got {value!r:.80}")


def _float(value: Any, name: str) -> float:
    """``value`` as a float; anything but a finite number is refused."""
    if not _is_number(value) or not math.isfinite(value):
        raise _fail(name, f"must be a number; got {value!r:.80}")
    return float(value)


def _reward(value: Any) -> float:
    return _float(value, "reward")


def _q_before(value: Any) -> float | None:
    return None if value is None else _float(value, "q_before")


def _q_after(value: Any) -> float | None:
    return None if value is None else _float(value, "q_after")


def _names(value: Iterable[str]) -> frozenset[str]:
    return frozenset(value)


def _json_data(value: Any, name: str) -> Any:
    """``value`` after a JSON round trip (tuples become lists, keys strings), as stored."""
    try:
        return json.loads(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError) as exc:
        raise _fail(name, f"must be JSON data ({exc})") from exc


def _extra(value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail("extra", f"must be an object; got {type(value).__name__}")
    if not value:  # every row this package records (no JSON round trip needed)
        return {}
    data: dict[str, Any] = _json_data(value, "extra")
    return data


def _synthesis(value: Any) -> Any:
    return None if value is None else _json_data(value, "verdict_synthesis")


@attrs.frozen(kw_only=True)
class RecallUsage:
    """One recall bundle as the usage ledger keeps it: what learning later rewards.

    ``extra`` holds JSON keys this package does not know (kept as read, written back after
    the known ones); ``omitted`` names the optional fields a stored row did not carry (a row
    written by the reference has no ``sessionId``), which stay absent when it is written
    back. Both are empty for usage this package records.
    """

    bundle_id: str = attrs.field(validator=_req_str())
    timestamp: str = attrs.field(validator=_req_str(0))
    query: str | None = attrs.field(default=None, validator=_opt_str(0))
    scopes: tuple[MemoryScope, ...] | None = attrs.field(
        default=None, converter=_as_tuple, validator=_items(MemoryScope, "scopes", True)
    )
    kinds: tuple[str, ...] | None = attrs.field(
        default=None, converter=_as_tuple, validator=_items(str, "strings", True)
    )
    memory_ids: tuple[str, ...] = attrs.field(
        default=(), converter=_as_tuple, validator=_items(str, "strings")
    )
    scores: tuple[float, ...] = attrs.field(
        default=(), converter=_as_tuple, validator=_items((int, float), "numbers")
    )
    token_estimate: int | None = attrs.field(default=None, validator=_opt_int)
    agent_role: str | None = attrs.field(default=None, validator=_opt_str(0))
    run_id: str | None = attrs.field(default=None, validator=_opt_str(0))
    session_id: str | None = attrs.field(default=None, validator=_opt_str(0))
    unit_id: str | None = attrs.field(default=None, validator=_opt_str(0))
    extra: dict[str, Any] = attrs.field(factory=dict, converter=_extra, hash=False)
    omitted: frozenset[str] = attrs.field(default=frozenset(), converter=_names)

    @omitted.validator
    def _check_omitted(self, attr: attrs.Attribute[Any], value: frozenset[str]) -> None:
        if not value:
            return
        names = {a.name for a in attrs.fields(RecallUsage)}
        unknown = sorted(n for n in value if n in _NOT_OPTIONAL or n not in names)
        if unknown:
            raise _fail(attr.name, f"names no optional field: {', '.join(map(str, unknown))}")

    def matches(self, run_id: str | None, since: str | None) -> bool:
        """The ``list_recall_usage`` filter: this run (if given), from ``since`` on (inclusive)."""
        if run_id is not None and self.run_id != run_id:
            return False
        return since is None or self.timestamp >= since


_NOT_OPTIONAL = frozenset({"bundle_id", "timestamp", "extra", "omitted"})


@attrs.frozen(kw_only=True)
class OutcomeEvent:
    """One reported outcome of a memory, for one generation of it (see ``record_outcome``)."""

    id: str = attrs.field(validator=_req_str(1, 256))
    memory_id: str = attrs.field(validator=_req_str(1, 256))
    generation: str = attrs.field(validator=_req_str(1, 256))
    outcome: OutcomeEntry = attrs.field(validator=_instance(OutcomeEntry))
    anchors: tuple[Anchor, ...] = attrs.field(
        default=(), converter=_as_tuple, validator=_items(Anchor, "anchors")
    )

    @anchors.validator
    def _check_anchors(self, attr: attrs.Attribute[Any], value: tuple[Anchor, ...]) -> None:
        if len(value) > MAX_ANCHORS:
            raise _fail(attr.name, f"at most {MAX_ANCHORS} anchors are accepted")

    @property
    def sort_key(self) -> tuple[str, str]:
        """The listing order: outcome time, then id."""
        return (self.outcome.at, self.id)


def _new_id() -> str:
    return str(uuid.uuid4())


@attrs.frozen(kw_only=True)
class RewardEvent:
    """One Q-value change a council verdict made to a memory (the reward ledger).

    ``id`` defaults to a new UUID; ``timestamp`` ``None`` means "when the store appends it"
    (every listed event has one). ``verdict_synthesis`` is JSON data (this package writes an
    object whose ``rewardKey`` makes verdicts idempotent).
    """

    memory_id: str = attrs.field(validator=_req_str(1, 256))
    verdict: str = attrs.field(validator=_req_str(1, 10_000))
    reward: float = attrs.field(converter=_reward)
    id: str = attrs.field(factory=_new_id, validator=_req_str(1, 256))
    run_id: str | None = attrs.field(default=None, validator=_opt_str(0))
    unit_id: str | None = attrs.field(default=None, validator=_opt_str(0))
    q_before: float | None = attrs.field(default=None, converter=_q_before)
    q_after: float | None = attrs.field(default=None, converter=_q_after)
    verdict_synthesis: Any = attrs.field(default=None, converter=_synthesis, hash=False)
    timestamp: str | None = attrs.field(default=None, validator=_opt_str(1, 256))

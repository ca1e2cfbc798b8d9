"""Clock port."""

from __future__ import annotations

import datetime as dt
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    """**Protocol:** the current time as an aware UTC datetime. Tests inject fixed clocks."""

    def now(self) -> dt.datetime:
        """The current time."""
        ...


class SystemClock:
    """The wall clock."""

    def now(self) -> dt.datetime:
        """The current UTC time."""
        return dt.datetime.now(dt.timezone.utc)


class FixedClock:
    """A clock stopped at one moment (advance it with :meth:`advance`)."""

    def __init__(self, moment: dt.datetime) -> None:
        self._now = moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)

    def now(self) -> dt.datetime:
        """The fixed moment."""
        return self._now

    def advance(self, **delta: float) -> None:
        """Move the clock forward by a ``timedelta(**delta)``."""
        self._now += dt.timedelta(**delta)

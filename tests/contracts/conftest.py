"""Fixtures of the storage contract suite: one ``store`` per provider, in ``tmp_path``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from factories import BASE_TIME, STORE_KINDS, closing_each, open_store

from swarmmem.ports.clock import FixedClock


@pytest.fixture
def clock() -> FixedClock:
    """A clock stopped at 2026-01-01T00:00:00Z (advance it in tests)."""
    return FixedClock(BASE_TIME)


@pytest.fixture(params=STORE_KINDS)
def store_kind(request: pytest.FixtureRequest) -> str:
    """The provider under test: ``memory``, ``local-jsonl``, ``sqlite`` or ``postgres``."""
    return str(request.param)


@pytest.fixture
def opened() -> Iterator[list[Any]]:
    """Every store a test opened; all are closed at teardown."""
    with closing_each() as stores:
        yield stores


@pytest.fixture
def store(store_kind: str, tmp_path: Path, clock: FixedClock, opened: list[Any]) -> Any:
    """A fresh, empty store of the provider under test."""
    opened.append(open_store(store_kind, tmp_path, clock))
    return opened[-1]


@pytest.fixture
def reopen(
    store_kind: str, tmp_path: Path, clock: FixedClock, opened: list[Any]
) -> Callable[[Any], Any]:
    """Close a store and open its files again (the in-memory store is returned as is)."""

    def _reopen(current: Any) -> Any:
        if store_kind == "memory":
            return current
        current.close()
        opened.append(open_store(store_kind, tmp_path, clock))
        return opened[-1]

    return _reopen

"""Shared fixtures and command-line options of the test suite."""

from __future__ import annotations

import argparse

import pytest
from factories import KERNEL_IMPLS, KernelImpl


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--compiled/--no-compiled`` (default on): run the tests marked ``compiled``."""
    parser.addoption(
        "--compiled",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="run the tests marked 'compiled' (--no-compiled keeps only the pure twins)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the tests marked ``compiled`` under ``--no-compiled``."""
    if config.getoption("--compiled"):
        return
    kept = [item for item in items if item.get_closest_marker("compiled") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(
            items=[item for item in items if item.get_closest_marker("compiled") is not None]
        )
        items[:] = kept


# --- kernels -------------------------------------------------------------------------------


@pytest.fixture(scope="session", params=KERNEL_IMPLS)
def kernels(request: pytest.FixtureRequest) -> KernelImpl:
    """Return the fusion, lexical and jaccard kernel modules of one implementation."""
    return KernelImpl.load(request.param)

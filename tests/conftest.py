"""Shared fixtures and command-line options of the test suite."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import os
from types import ModuleType

import pytest

NO_EXTENSIONS = os.environ.get("SWARMMEM_NO_EXTENSIONS") == "1"


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


@dataclasses.dataclass(frozen=True)
class KernelImpl:
    """One implementation of every ``_speedups`` kernel: the pure twins or the compiled ones."""

    name: str
    fusion: ModuleType
    lexical: ModuleType
    jaccard: ModuleType

    @classmethod
    def load(cls, name: str) -> KernelImpl:
        """Import the kernel modules of implementation ``name`` (``py`` or ``compiled``)."""
        suffix = "c" if name == "compiled" else "py"
        modules = {
            kernel: importlib.import_module(f"swarmmem._speedups._{kernel}_{suffix}")
            for kernel in ("fusion", "lexical", "jaccard")
        }
        return cls(name=name, **modules)


@pytest.fixture(
    scope="session",
    params=[
        pytest.param("py", id="py"),
        pytest.param(
            "compiled",
            id="compiled",
            marks=[
                pytest.mark.compiled,
                pytest.mark.skipif(NO_EXTENSIONS, reason="SWARMMEM_NO_EXTENSIONS=1"),
            ],
        ),
    ],
)
def kernels(request: pytest.FixtureRequest) -> KernelImpl:
    """Return the fusion, lexical and jaccard kernel modules of one implementation."""
    return KernelImpl.load(request.param)

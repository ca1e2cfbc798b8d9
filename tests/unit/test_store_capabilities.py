"""Stores say what they can do through the registry (:data:`swarmmem.registry.STORES`), never
through their names: outside the registry, the bootstrap and the store adapters themselves, no
module compares a value with a store's name."""

from __future__ import annotations

import ast
import sys
import types
from pathlib import Path

import pytest
from factories import curate_fact

from swarmmem.core.model.errors import UnknownAdapterError
from swarmmem.registry import STORES, choices, store_traits, stores_that

REPO = Path(__file__).resolve().parents[2]
LIBRARY = ("src/swarmmem", "core", "ports", "adapters")
#: the files allowed to name a store: the registry, the bootstrap and the stores themselves
ALLOWED = (
    "src/swarmmem/registry.py",
    "src/swarmmem/bootstrap.py",
    "adapters/storage/sqlite/",
    "adapters/storage/postgres/",
    "adapters/storage/memory.py",
    "adapters/storage/jsonl.py",
)
NAMES = frozenset(choices("store"))


def _names_a_store(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in NAMES


def name_comparisons(source: str) -> list[int]:
    """Lines of ``source`` comparing a value with a store's name: ``x == "sqlite"``,
    ``x != "postgres"``, ``x in ("sqlite", "local-jsonl")`` (a name in a literal tuple, list or
    set; ``"memory" in data`` asks for a key and does not count)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        for op, left, right in zip(node.ops, operands[:-1], operands[1:], strict=True):
            if (
                isinstance(op, ast.Eq | ast.NotEq)
                and (_names_a_store(left) or _names_a_store(right))
            ) or (
                isinstance(op, ast.In | ast.NotIn)
                and isinstance(right, ast.Tuple | ast.List | ast.Set)
                and any(_names_a_store(e) for e in right.elts)
            ):
                lines.append(node.lineno)
    return lines


def test_no_library_module_compares_with_a_store_name() -> None:
    offenders = {}
    for folder in LIBRARY:
        for path in sorted((REPO / folder).rglob("*.py")):
            relative = path.relative_to(REPO).as_posix()
            if relative.startswith(ALLOWED):
                continue
            found = name_comparisons(path.read_text(encoding="utf-8"))
            if found:
                offenders[relative] = found
    assert offenders == {}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('if provider == "sqlite":\n    pass\n', [1]),
        ('ok = "postgres" != kind\n', [1]),
        ('x = kind in ("memory", "other")\n', [1]),
        ('x = kind not in {"local-jsonl"}\n', [1]),
        ('x = "memory" in data\n', []),
        ('x = kind == "numpy"\n', []),
    ],
)
def test_the_check_finds_what_it_names(source: str, expected: list[int]) -> None:
    assert name_comparisons(source) == expected


def test_every_registered_store_declares_its_traits() -> None:
    assert set(STORES) == set(choices("store"))
    for traits in STORES.values():
        if traits.vector_index is not None:
            assert traits.vector_index in choices("vector_index")
            assert traits.section is not None


def test_traits_answer_the_questions_once_asked_by_name() -> None:
    assert stores_that(lambda t: t.migrate_target) == ("sqlite", "postgres")
    assert stores_that(lambda t: t.in_process) == ("memory",)
    assert stores_that(lambda t: t.needs_server) == ("postgres",)
    assert stores_that(lambda t: t.database_file) == ("sqlite",)
    with pytest.raises(UnknownAdapterError, match="choose from: sqlite"):
        store_traits("oracle")


def test_a_store_added_as_the_recipe_says_is_opened_and_asked_by_its_traits(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """docs/stores.md, steps 1 and 2, with a store that exists only here: a registry row and
    its traits are all the library needs to open a memory on it."""
    import swarmmem
    from swarmmem import registry
    from swarmmem.adapters.storage.memory import InMemoryStore

    class ScratchStore(InMemoryStore):
        name = "scratchpad"

    module = types.ModuleType("scratch_store_module")
    module.ScratchStore = ScratchStore  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "scratch_store_module", module)
    stores = {
        **registry.REGISTRY["store"],
        "scratchpad": ("scratch_store_module:ScratchStore", None),
    }
    monkeypatch.setitem(registry.REGISTRY, "store", stores)
    monkeypatch.setitem(registry.STORES, "scratchpad", registry.StoreTraits(in_process=True))

    assert "scratchpad" in stores_that(lambda t: t.in_process)
    config = {"enabled": True, "provider": "scratchpad"}
    with swarmmem.open(tmp_path, config=config) as mem:
        assert isinstance(mem.store, ScratchStore)
        curate_fact(mem, "Tests run with pytest from the repository root")
        bundle = mem.recall("how are tests run with pytest")
        assert [item.record.text for item in bundle.items] == [
            "Tests run with pytest from the repository root"
        ]
        assert mem.status()["provider"] == "scratchpad"

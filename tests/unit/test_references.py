"""Files and symbols named in a query (core.recall.references) and what they do to recall:
a named file ranks the memories citing it first, an extension alone is no signal, and the
``reference`` profile keeps the reference implementation's token overlaps."""

from __future__ import annotations

from pathlib import Path

import pytest
from factories import REPO_SCOPE, make_memory

from swarmmem.adapters.storage.memory import InMemoryStore
from swarmmem.core.model.records import Anchor, MemoryRecord, MemorySource, RecallRequest
from swarmmem.core.recall.pipeline import PipelineSettings, run_recall
from swarmmem.core.recall.references import (
    cited_files,
    cited_symbols,
    names_file,
    names_symbol,
    query_files,
    query_symbols,
    without_extensions,
)

NOW = "2026-01-05T00:00:00.000Z"


@pytest.mark.parametrize(
    ("query", "files"),
    [
        ("zzqx.py", {"zzqx.py"}),
        ("before editing console.py what should I know", {"console.py"}),
        ("see attr/_make.py, then", {"attr/_make.py"}),
        ("./src/app/main.ts broke", {"src/app/main.ts"}),
        ("the src/app/main module", {"src/app/main"}),
        ("every *.py and .py file", set()),  # an extension alone
        ("the rich/ folder", set()),  # a directory
        ("e.g. version 1.2 of Console.print", set()),  # not source extensions
        ("mail user@host.com", set()),
    ],
)
def test_query_files(query: str, files: set[str]) -> None:
    assert query_files(query) == files


def test_query_symbols_are_the_identifiers_written_as_code() -> None:
    assert query_symbols("Why does Console.is_terminal lie") == {
        "Console.is_terminal",
        "is_terminal",
    }
    assert query_symbols("use `field` or field() for defaults") == {"field"}
    assert query_symbols("field default for validate") == set()  # plain words
    assert query_symbols("The Console prints") == {"Console"}  # capitalised after the start
    assert query_symbols("Console prints") == set()  # the first word may be capitalised
    assert query_symbols("is I a") == set()


def test_without_extensions_drops_only_source_extensions() -> None:
    assert without_extensions("before editing console.py now") == "before editing console now"
    assert without_extensions("attr/_make.py and v1.2") == "attr/_make and v1.2"
    assert without_extensions("Console.print") == "Console.print"


def test_matching_rules() -> None:
    assert names_file(frozenset({"console.py"}), ["rich/console.py"])
    assert names_file(frozenset({"rich/console.py"}), ["console.py"])
    assert not names_file(frozenset({"sole.py"}), ["rich/console.py"])  # whole components
    assert not names_file(frozenset(), ["console.py"])
    assert names_symbol(frozenset({"is_terminal"}), ["Console.is_terminal"])
    assert names_symbol(frozenset({"Console.is_terminal"}), ["Console.is_terminal"])
    assert not names_symbol(frozenset({"is_Terminal"}), ["Console.is_terminal"])  # same case


def test_cited_files_and_symbols_come_from_source_metadata_anchors_and_evidence() -> None:
    record = make_memory(
        "a fact",
        source=MemorySource(type="file", file_path="./src/A.py"),
        metadata={
            "files": ["b.py"],
            "symbol": "Thing.run",
            "evidenceFingerprints": [{"path": "c/d.py", "sha256": "0" * 64}],
        },
        anchors=(Anchor(file="e.ts", symbol="render"),),
    )
    assert cited_files(record) == ("b.py", "src/a.py", "e.ts", "c/d.py")
    assert cited_symbols(record) == ("Thing.run", "render")


def _store(records: list[MemoryRecord]) -> InMemoryStore:
    store = InMemoryStore()
    for record in records:
        store.upsert(record)
    return store


def _recall(store: InMemoryStore, query: str, profile: str = "lexical") -> list[str]:
    request = RecallRequest(query=query, scopes=(REPO_SCOPE,), max_items=10)
    result, _ = run_recall(store, request, now=NOW, config=PipelineSettings(profile=profile))
    return [item.record.text for item in result.items]


CODE_MEMORIES = [
    ("Editing the console output path needs the terminal width check first", ["rich/live.py"]),
    ("Before editing anything run the full test suite with tox", ["tox.ini"]),
    ("What you should know: the render loop caches segments", ["rich/segment.py"]),
    ("Console.is_terminal honours FORCE_TERMINAL before TTY checks", ["rich/console.py"]),
    ("Table column widths are computed in two passes", ["rich/table.py"]),
    ("Progress bars refresh ten times a second by default", ["rich/progress.py"]),
]


@pytest.fixture
def code_store() -> InMemoryStore:
    return _store(
        [make_memory(text, tags=(), metadata={"files": files}) for text, files in CODE_MEMORIES]
    )


def test_an_unknown_file_name_recalls_nothing(code_store: InMemoryStore) -> None:
    """Every memory cites a ``.py`` file: the extension alone is no signal (before, each of
    them got a file-overlap score and came back)."""
    assert _recall(code_store, "zzqx.py") == []


def test_a_named_file_ranks_the_memory_citing_it_first(code_store: InMemoryStore) -> None:
    """The only memory citing console.py comes first, above memories sharing the question's
    words ("before", "editing", "know")."""
    texts = _recall(code_store, "before editing console.py what should I know")
    assert texts[0].startswith("Console.is_terminal")


def test_a_named_symbol_is_a_full_symbol_signal() -> None:
    store = _store(
        [
            make_memory(
                "terminal detection honours FORCE_TERMINAL",
                tags=(),
                metadata={"symbol": "Console.is_terminal"},
            ),
            make_memory("terminal colours come from the COLORTERM variable", tags=()),
        ]
    )
    request = RecallRequest(query="why is is_terminal wrong for my terminal", scopes=(REPO_SCOPE,))
    result, _ = run_recall(store, request, now=NOW)
    first = result.items[0]
    assert first.record.metadata.get("symbol") == "Console.is_terminal"
    assert first.signals.symbol_overlap == 1.0


def test_the_reference_profile_keeps_token_overlaps(code_store: InMemoryStore) -> None:
    """The reference path still scores the extension token like the reference does."""
    assert _recall(code_store, "zzqx.py", profile="reference")


def test_sqlite_store_agrees(tmp_path: Path) -> None:
    """The same rules over the real SQLite store (its full-text index holds the files)."""
    from swarmmem.evaluation import project_runtime

    runtime = project_runtime(tmp_path, "sqlite")
    try:
        store = runtime.store
        with store.transaction():
            for text, files in CODE_MEMORIES:
                store.upsert(make_memory(text, tags=(), metadata={"files": files}))
        assert _recall(store, "zzqx.py") == []
        texts = _recall(store, "before editing console.py what should I know")
        assert texts[0].startswith("Console.is_terminal")
    finally:
        runtime.close()


def test_runs_longer_than_a_path_are_no_reference_and_are_read_once() -> None:
    """Hostile queries of path and identifier characters (each a quadratic scan before):
    a run longer than MAX_PATH_CHARS names no file, a name that long no symbol, and what a
    short run names is found as before, even right after a long one."""
    from swarmmem.core.recall.references import MAX_PATH_CHARS

    long_run = "a-" * (MAX_PATH_CHARS // 2 + 1) + "@x.py"
    assert query_files(long_run) == frozenset()
    assert without_extensions(long_run) == long_run
    dotted = "eyJa." * 100 + "eyJ"
    assert query_symbols(dotted) == frozenset()
    text = f"{'a/' * 200}b fix it in attr/_make.py and Console.is_terminal"
    assert query_files(text) == {"attr/_make.py"}
    assert without_extensions(text).endswith("fix it in attr/_make and Console.is_terminal")
    assert {"Console.is_terminal", "is_terminal"} <= query_symbols(text)
    assert without_extensions("see x@a-b.py and ./src/app.py") == "see x@a-b and ./src/app"

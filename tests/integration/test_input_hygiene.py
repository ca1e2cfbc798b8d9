"""Hostile input: undecodable text, bytes and bare strings, colliding proposal ids, planted
symbolic links, paths that leave the project, and exports that would be overwritten. Each is
refused with a clear error (or handled) and nothing is lost or written elsewhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest
from click.testing import CliRunner
from factories import BASE_TIME, FixedClock, cite, write_memory_config

import swarmmem
from swarmmem.adapters.storage.sqlite.support import sqlite_module
from swarmmem.cli import main
from swarmmem.core.model.errors import (
    ConfigError,
    MemoryValidationError,
    NotFoundError,
    StorageError,
)
from swarmmem.mcp import MemoryTools

ENABLED = {"enabled": True}
LONE = "bad \ud800 text"


@pytest.fixture
def mem(tmp_path: Path) -> Any:
    cite(tmp_path, "docs/release.md")
    with swarmmem.open(tmp_path, config=ENABLED, context={"session_id": "s1"}) as memory:
        yield memory


def _propose(mem: Any, **fields: Any) -> Any:
    base = {
        "operation": "add",
        "kind": "project_fact",
        "text": "The release branch is cut on Fridays.",
        "rationale": "team habit",
        "evidence_refs": ["docs/release.md"],
    }
    cite(mem.root, "docs/release.md")
    return mem.propose(**{**base, **fields})


# --------------------------------------------------------------- text and types
@pytest.mark.parametrize(
    "fields",
    [
        {"text": LONE},
        {"rationale": LONE},
        {"evidence_refs": [LONE]},
        {"tags": ["ok", LONE]},
        {"text": b"bytes are not text"},
        {"evidence_refs": "docs/release.md"},
        {"evidence_refs": b"docs/release.md"},
        {"tags": "release"},
    ],
)
def test_proposals_with_bad_text_are_refused_before_anything_is_stored(
    mem: Any, fields: dict[str, Any]
) -> None:
    with pytest.raises(MemoryValidationError) as caught:
        _propose(mem, **fields)
    name = next(iter(fields)).split("[")[0]
    assert name in str(caught.value)
    assert mem.store.list_proposals() == []


def test_recall_outcome_curate_and_import_refuse_bad_text(mem: Any) -> None:
    with pytest.raises(MemoryValidationError, match="query"):
        mem.recall(LONE)
    with pytest.raises(MemoryValidationError, match="kinds"):
        mem.recall("release branch", kinds="project_fact")
    with pytest.raises(MemoryValidationError, match="question"):
        mem.record_outcome(question=LONE, outcome="useful")
    with pytest.raises(MemoryValidationError, match="reason"):
        mem.curate(_propose(mem).id, "add", reason=LONE)
    result = mem.import_records([{"kind": "project_fact", "text": LONE}])
    assert result.written == 0 and "record.text" in result.refused[0][1]
    assert mem.store.count() == 0


def test_undecodable_command_line_bytes_exit_2_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / ".opencode").mkdir()
    (tmp_path / ".opencode" / "opencode-swarm.json").write_text(json.dumps({"memory": ENABLED}))
    argv = [sys.executable, "-m", "swarmmem.cli", "--root", str(tmp_path), "recall"]
    done = subprocess.run(
        [*argv, b"caf\xe9 menu lookup"], capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 2, done.stderr
    assert b"Traceback" not in done.stderr
    assert b"not valid Unicode text" in done.stderr


def test_mcp_refuses_lone_surrogates_as_validation_errors(tmp_path: Path) -> None:
    tools = MemoryTools(tmp_path, config=ENABLED)
    try:
        payload, is_error = tools.call("swarm_memory_recall", {"query": LONE})
    finally:
        tools.close()
    assert is_error
    assert payload["error"] == "memory_validation_error"


# ---------------------------------------------------------------- proposal ids
def test_different_proposals_in_one_millisecond_get_different_ids(tmp_path: Path) -> None:
    """A fixed clock makes every proposal share its millisecond and proposer."""
    with swarmmem.open(tmp_path, config=ENABLED, clock=FixedClock(BASE_TIME)) as mem:
        first = _propose(mem, rationale="first reason")
        second = _propose(mem, rationale="second reason")
        third = _propose(mem, operation="supersede", target_memory_id="mem_0000000000000000")
        ids = {first.id, second.id, third.id}
        assert len(ids) == 3
        stored = {p.id: p.rationale for p in mem.store.list_proposals()}
        assert stored[first.id] == "first reason" and stored[second.id] == "second reason"


# ----------------------------------------------------------------- symbolic links
def _planted_folder_link(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A project whose ``.swarm/<name>`` is a symbolic link to an empty folder outside it;
    the project and that folder."""
    root, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    (root / ".swarm").mkdir()
    os.symlink(elsewhere, root / ".swarm" / name)
    return root, elsewhere


def _injection_refuses_the_link(root: Path) -> None:
    """An injection in session s1 under ``root`` fails naming the symbolic link its run log
    would have followed."""
    with (
        swarmmem.open(root, config=ENABLED, context={"session_id": "s1"}) as mem,
        pytest.raises(StorageError, match="symbolic link"),
    ):
        mem.inject(agent_task="fix the login form", user_goal="ship")


def test_run_log_writes_never_follow_a_planted_link(tmp_path: Path) -> None:
    root, elsewhere = _planted_folder_link(tmp_path, "runs")
    _injection_refuses_the_link(root)
    assert list(elsewhere.iterdir()) == []


def test_run_log_file_link_is_not_followed(tmp_path: Path) -> None:
    root, target = tmp_path / "project", tmp_path / "victim.txt"
    root.mkdir()
    target.write_text("keep me\n", encoding="utf-8")
    run_dir = root / ".swarm" / "runs" / "s1"
    run_dir.mkdir(parents=True)
    os.symlink(target, run_dir / "memory.jsonl")
    _injection_refuses_the_link(root)
    assert target.read_text(encoding="utf-8") == "keep me\n"


def test_lesson_files_never_follow_a_planted_link(tmp_path: Path) -> None:
    root, elsewhere = _planted_folder_link(tmp_path, "reflections")
    config = {"enabled": True, "reflection": {"enabled": True}}
    with swarmmem.open(root, config=config) as mem, pytest.raises(StorageError):
        mem.reflect()
    assert list(elsewhere.iterdir()) == []


# ------------------------------------------------------------------------ paths
@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"storageDir": "../shared-memory"}, "memory.storageDir"),
        ({"sqlite": {"path": "data/../../memory.db"}}, "memory.sqlite.path"),
    ],
)
def test_relative_paths_cannot_leave_the_project(
    tmp_path: Path, config: dict[str, Any], key: str
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    with pytest.raises(ConfigError, match=key):
        swarmmem.open(root, config={**ENABLED, **config})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project"]


def test_an_absolute_store_path_is_the_persons_and_status_shows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The repository's configuration cannot put the store outside the project (a command
    says which path and which file); the person's environment can."""
    root, shared = tmp_path / "project", tmp_path / "shared" / "memory.db"
    (root / ".opencode").mkdir(parents=True)
    document = {"memory": {**ENABLED, "sqlite": {"path": str(shared)}}}
    (root / ".opencode" / "opencode-swarm.json").write_text(json.dumps(document))
    refused = CliRunner().invoke(main, ["--root", str(root), "list"])
    assert refused.exit_code == 1 and "outside the checkout" in refused.output
    assert str(shared) in refused.output and "opencode-swarm.json" in refused.output
    assert not shared.parent.exists()
    monkeypatch.setenv("SWARMMEM_SQLITE_PATH", str(shared))
    assert CliRunner().invoke(main, ["--root", str(root), "list"]).exit_code == 0
    status = CliRunner().invoke(main, ["--root", str(root), "status", "--json"])
    assert status.exit_code == 0
    assert json.loads(status.stdout)["sqlite_path"] == str(shared)


# ----------------------------------------------------------------------- export
def test_export_refuses_to_overwrite_unless_asked(tmp_path: Path) -> None:
    (tmp_path / ".opencode").mkdir()
    (tmp_path / ".opencode" / "opencode-swarm.json").write_text(json.dumps({"memory": ENABLED}))
    with swarmmem.open(tmp_path) as mem:
        mem.import_records([{"kind": "project_fact", "text": "The first export fact."}])

    def run(*args: str) -> Any:
        return CliRunner().invoke(main, ["--root", str(tmp_path), "export", *args])

    assert run().exit_code == 0
    exported = tmp_path / ".swarm" / "memory" / "export" / "memories.jsonl"
    before = exported.read_text(encoding="utf-8")
    again = run()
    assert again.exit_code == 2 and "--overwrite" in again.output
    assert exported.read_text(encoding="utf-8") == before
    assert run("--overwrite").exit_code == 0


# ------------------------------------------------------- no memory without a curator
def test_an_outcome_about_a_question_never_becomes_recallable(tmp_path: Path) -> None:
    """The evidence an outcome about a question leaves is for reflection, not for recall."""
    config = {"enabled": True, "embeddings": {"enabled": True, "provider": "hashing"}}
    with swarmmem.open(tmp_path, config=config, context={"session_id": "s1"}) as mem:
        question = "Which port does the staging payments gateway listen on?"
        result = mem.record_outcome(question=question, outcome="dead_end")
        evidence = mem.store.get(result["memory_id"])
        assert evidence is not None and evidence.metadata["outcomeQuestion"] == question
        for profile in ("lexical", "hybrid"):
            bundle = mem.recall("staging payments gateway port", profile=profile)
            assert result["memory_id"] not in [item.record.id for item in bundle.items]
        assert result["memory_id"] not in mem.runtime.dense_parts().index.ids()


def test_outcomes_on_another_repositorys_memory_read_as_unknown(tmp_path: Path) -> None:
    """Two repositories share one SQLite file; neither can report outcomes on the other's
    memories, and the error is the one an unknown id gets."""
    shared = tmp_path / "shared.db"
    config = {**ENABLED, "sqlite": {"path": str(shared)}}
    roots = [tmp_path / "api", tmp_path / "web"]
    for root in roots:
        root.mkdir()
    with swarmmem.open(roots[0], config=config) as mem:
        mem.import_records([{"kind": "project_fact", "text": "API facts."}])
        memory_id = mem.list()[0].id
    with swarmmem.open(roots[1], config=config) as other:
        with pytest.raises(NotFoundError) as foreign:
            other.record_outcome(memory_id=memory_id, outcome="dead_end")
        with pytest.raises(NotFoundError) as unknown:
            other.record_outcome(memory_id="mem_0000000000000000", outcome="dead_end")
        assert str(foreign.value).replace(memory_id, "X") == str(unknown.value).replace(
            "mem_0000000000000000", "X"
        )
    with swarmmem.open(roots[0], config=config) as mem:
        assert mem.store.list_outcomes(memory_id) == []


# ----------------------------------------------------------- secrets in every field
SECRET = "ghp_" + "Zq7" * 10  # a GitHub token shape


def _plant_everywhere(root: Path) -> None:
    """Put SECRET in every agent- or import-controlled field the Python API takes."""
    context = {"session_id": "s1", "agent_role": "coder"}
    with swarmmem.open(root, config=ENABLED, context=context) as mem:
        tagged = _propose(mem, tags=["release", f"token {SECRET}"])
        assert tagged.status == "rejected"
        kept = _propose(mem, text="Release notes live in docs/release.md.")
        change = mem.curate(kept.id, "add", reason=f"ok {SECRET}")
        mem.import_records([{"kind": "scratch", "text": "Scratch note for the release."}])
        scratch_id = mem.list(kind="scratch")[0].id
        mem.record_outcome(
            memory_id=change.memory_id,
            outcome="useful",
            anchors=[{"file": f"src/{SECRET}.py", "symbol": SECRET}],
            event_id=f"evt-{SECRET}",
        )
        mem.record_outcome(
            memory_id=scratch_id, outcome="corrected", correction=f"use {SECRET} instead"
        )
        mem.recall(f"release notes {SECRET}")
        mem.inject(agent_task=f"ship the release with {SECRET}", user_goal="release")
        refused = mem.import_records(
            [
                {"kind": "scratch", "text": f"ephemeral {SECRET}"},
                {"kind": "project_fact", "text": "ok", "tags": [SECRET]},
            ]
        )
        assert refused.written == 0 and len(refused.refused) == 2


def test_a_planted_secret_is_stored_nowhere(tmp_path: Path) -> None:
    _plant_everywhere(tmp_path)
    leaks = [
        str(path.relative_to(tmp_path))
        for path in (tmp_path / ".swarm").rglob("*")
        if path.is_file() and SECRET.encode() in path.read_bytes()
    ]
    assert leaks == []


def test_reports_and_exports_of_one_repository_never_show_another(tmp_path: Path) -> None:
    """Two repositories (one folder, so one workspace scope) share one SQLite file: pending,
    value-log, recall-log, stale, the lessons and export show only each one's own data."""
    shared = tmp_path / "shared.db"
    config = {**ENABLED, "sqlite": {"path": str(shared)}, "reflection": {"enabled": True}}
    texts = {"api": "The API rate limit is 40 per second.", "web": "The web bundle is split."}
    for name, text in texts.items():
        (tmp_path / name).mkdir()
        with swarmmem.open(tmp_path / name, config=config, context={"session_id": name}) as mem:
            change = mem.curate(_propose(mem, text=text).id, "add")
            _propose(mem, text=f"Pending about {name}.")
            mem.recall(text)
            mem.record_outcome(memory_id=change.memory_id, outcome="useful")
    with swarmmem.open(tmp_path / "api", config=config, context={"session_id": "api"}) as mem:
        reports = json.dumps(
            [
                report.to_json()
                for report in (
                    mem.pending(),
                    mem.value_log(),
                    mem.recall_log(),
                    mem.stale(),
                    mem.reflect(),
                )
            ]
        )
        lessons = (tmp_path / "api" / ".swarm" / "reflections" / "lessons.json").read_text()
        assert "Pending about web" not in reports and texts["web"] not in reports
        assert texts["web"] not in lessons
        assert mem.pending().pending_count == 1
        assert mem.recall_log().events_scanned == 1
        assert len(mem.value_log().memories) == 1
    exported = CliRunner().invoke(
        main, ["--root", str(tmp_path / "api"), "--config", _write_config(tmp_path, config),
               "export", "--dir", str(tmp_path / "out")],
    )  # fmt: skip
    assert exported.exit_code == 0, exported.output
    dump = "".join(p.read_text() for p in (tmp_path / "out" / "export").iterdir())
    assert texts["api"] in dump and texts["web"] not in dump and "Pending about web" not in dump


def _write_config(folder: Path, config: dict[str, Any]) -> str:
    path = folder / "config.json"
    path.write_text(json.dumps({"memory": config}), encoding="utf-8")
    return str(path)


ORIGIN_CASES = [
    ('[remote "origin"]\n\tfetch = +refs/*\n[remote "fork"]\n\turl = git@x:fork.git\n', None),
    ('[core]\n\tbare = false\n[remote "origin"]\n\turl = git@x:api.git\n', "git@x:api.git"),
    (
        '[remote "up"]\n\turl = git@x:up.git\n[remote "origin"]\n\turl = https://x/o\n',
        "https://x/o",
    ),
]


@pytest.mark.parametrize(("config", "expected"), ORIGIN_CASES)
def test_only_the_origin_section_names_the_remote(
    tmp_path: Path, config: str, expected: str | None
) -> None:
    from swarmmem.project import git_remote_origin

    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text(config, encoding="utf-8")
    assert git_remote_origin(tmp_path) == expected


def test_recall_output_is_redacted_in_every_channel(tmp_path: Path) -> None:
    """A record that reached the store with a secret (written by an older version, or
    directly into the database) leaves recall redacted: the returned record, the prompt block
    with its Source line, and `recall --json`."""
    from swarmmem.core.model.records import MemorySource

    (tmp_path / ".opencode").mkdir()
    (tmp_path / ".opencode" / "opencode-swarm.json").write_text(json.dumps({"memory": ENABLED}))
    with swarmmem.open(tmp_path) as mem:
        mem.import_records([{"kind": "project_fact", "text": "Deploys use the release token."}])
        (record,) = mem.list()
        leaked = attrs.evolve(
            record,
            text=f"Deploys use the release token {SECRET}.",
            tags=("deploy", SECRET),
            source=MemorySource(type="file", file_path=f"ops/{SECRET}.env"),
        )
        mem.store.upsert(leaked)  # the store takes what it is given; recall must not echo it
        bundle = mem.recall("release token deploys")
        (item,) = bundle.items
        shown = [item.record.text, *item.record.tags, item.record.source.file_path or ""]
        assert not any(SECRET in value for value in shown)
        assert (
            SECRET not in bundle.prompt_block
            and "Source: file ops/[REDACTED" in bundle.prompt_block
        )
    result = CliRunner().invoke(
        main, ["--root", str(tmp_path), "recall", "release token", "--json"]
    )
    assert result.exit_code == 0 and SECRET not in result.stdout


@pytest.mark.parametrize(
    "where",
    [
        {"text": f"Deploys use the release token {SECRET}."},
        {"tags": ("deploy", SECRET)},
        {"source": {"type": "file", "file_path": f"ops/{SECRET}.env"}},
        {"source": {"type": "web", "url": f"https://ci.example/?t={SECRET}"}},
        {"source": {"type": "commit", "commit_sha": "abc1234", "ref": f"refs/{SECRET}"}},
    ],
    ids=["text", "tag", "file", "url", "ref"],
)
def test_a_secret_in_any_one_field_of_a_recalled_record_is_redacted(
    tmp_path: Path, where: dict[str, Any]
) -> None:
    """Recall screens every returned string in one pass and redacts item by item only when
    the screen finds something: a secret in a single field of one record is still caught."""
    from swarmmem.core.model.records import MemorySource

    write_memory_config(tmp_path, ENABLED)
    with swarmmem.open(tmp_path) as mem:
        mem.import_records(
            [
                {"kind": "project_fact", "text": "Deploys use the release token."},
                {"kind": "project_fact", "text": "Release deploys run on Fridays."},
            ]
        )
        record = next(r for r in mem.list() if "token" in r.text)
        changes = {
            key: MemorySource(**value) if key == "source" else value for key, value in where.items()
        }
        mem.store.upsert(attrs.evolve(record, **changes))
        bundle = mem.recall("release token deploys")
        assert len(bundle.items) == 2
        shown = [
            value
            for item in bundle.items
            for value in (
                item.record.text,
                *item.record.tags,
                item.record.source.file_path,
                item.record.source.url,
                item.record.source.ref,
            )
            if value
        ]
        assert not any(SECRET in value for value in shown)
        assert SECRET not in bundle.prompt_block
        assert any("[REDACTED" in value for value in shown)


def test_a_secret_written_after_a_clean_recall_is_still_redacted(tmp_path: Path) -> None:
    """Recall remembers the strings its screen cleared, not the memories: a memory recalled
    clean, then rewritten with a secret, comes back redacted."""
    write_memory_config(tmp_path, ENABLED)
    with swarmmem.open(tmp_path) as mem:
        mem.import_records([{"kind": "project_fact", "text": "Deploys use the release token."}])
        (record,) = mem.list()
        (clean,) = mem.recall("release token deploys").items
        assert clean.record.text == record.text
        mem.store.upsert(attrs.evolve(record, text=f"Deploys use the release token {SECRET}."))
        for _ in range(2):
            (item,) = mem.recall("release token deploys").items
            assert SECRET not in item.record.text and "[REDACTED" in item.record.text


def test_the_remembered_screen_scans_each_cleared_string_once() -> None:
    """Strings the screen cleared are not screened again; one it flags never counts as
    cleared; past its limit it starts afresh."""
    from swarmmem.adapters.detectors.regex_secrets import RegexSecretDetector
    from swarmmem.core.recall.service import RememberedScreen

    detector = RegexSecretDetector()
    seen: list[list[str]] = []

    def screen(texts: Any) -> bool:
        seen.append(list(texts))
        return detector.may_contain_secret(texts)

    remembered = RememberedScreen(screen, limit=3)
    assert remembered(["a note", "another note"]) is False
    assert remembered(["another note", "a note"]) is False
    assert remembered(["a note", f"token {SECRET}"]) is True
    assert remembered([f"token {SECRET}"]) is True
    assert seen == [["a note", "another note"], [f"token {SECRET}"], [f"token {SECRET}"]]
    assert remembered(["third", "fourth"]) is False  # five cleared strings: starts afresh
    assert remembered(["a note"]) is False
    assert seen[-2:] == [["third", "fourth"], ["a note"]]


# ------------------------------------------------------------ nothing lost silently
def _project_with_facts(root: Path, texts: list[str]) -> list[str]:
    """Memory on in ``root`` (SQLite), holding ``texts`` imported as project facts; their
    ids, sorted."""
    write_memory_config(root, ENABLED)
    with swarmmem.open(root) as mem:
        mem.import_records([{"kind": "project_fact", "text": text} for text in texts])
        return sorted(r.id for r in mem.list())


def test_unreadable_rows_fail_the_export_and_show_in_status(tmp_path: Path) -> None:
    damaged = _project_with_facts(tmp_path, [f"Fact {n} of ten." for n in range(10)])[:2]
    conn = sqlite_module().connect(str(tmp_path / ".swarm" / "memory" / "memory.db"))
    conn.executemany(
        "UPDATE memory_items SET record_json = '{not json' WHERE id = ?", [(i,) for i in damaged]
    )
    conn.commit()
    conn.close()

    def run(*args: str) -> Any:
        return CliRunner().invoke(main, ["--root", str(tmp_path), *args])

    exported = run("export", "--dir", str(tmp_path / "out"), "--json")
    assert exported.exit_code == 1
    data = json.loads(exported.stdout)
    assert data["success"] is False and sorted(data["unreadable"]) == damaged
    assert data["memories"] == 8
    status = run("status")
    assert (
        status.exit_code == 0
        and "2 stored rows could not be read (every command skips them" in status.stdout
    )
    rows = json.loads(run("status", "--json").stdout)["unreadable_rows"]
    assert sorted(r["id"] for r in rows) == damaged


def test_invalid_jsonl_rows_show_in_status(tmp_path: Path) -> None:
    storage = tmp_path / ".swarm" / "memory"
    storage.mkdir(parents=True)
    (storage / "memories.jsonl").write_text("{broken\n", encoding="utf-8")
    config = _write_config(tmp_path, {**ENABLED, "provider": "local-jsonl"})
    status = CliRunner().invoke(main, ["--root", str(tmp_path), "--config", config, "status"])
    assert status.exit_code == 0
    assert "1 stored row could not be read" in status.stdout and "line 1" in status.stdout


def test_recall_on_a_damaged_database_fails_with_a_clear_error(tmp_path: Path) -> None:
    _project_with_facts(tmp_path, [f"Build fact {n}." for n in range(300)])
    db = tmp_path / ".swarm" / "memory" / "memory.db"
    with db.open("r+b") as handle:
        handle.seek(8192)
        handle.write(bytes(range(256)) * 32)
    result = CliRunner().invoke(main, ["--root", str(tmp_path), "recall", "build facts"])
    assert result.exit_code == 1
    assert "malformed" in result.output and "Traceback" not in result.output


def test_a_query_that_redaction_makes_longer_is_still_recalled(tmp_path: Path) -> None:
    """A query within the length limit whose secrets' redaction markers are longer than the
    secrets (thousands of JWT-like tokens): the recall answers, and its usage row keeps the
    redacted query cut to the limit (it once failed validation and raised)."""
    query = ("eyJa." * 19_800)[:99_000]
    with swarmmem.open(tmp_path, config={"enabled": True}) as mem:
        bundle = mem.recall(query)
        assert bundle.items == ()
        (usage,) = mem.store.list_recall_usage()
    assert usage.query is not None and len(usage.query) <= 100_000
    assert "eyJa" not in usage.query

"""Laundering the audit chain: a store never re-chains rows that were chained, and with an
audit key someone who can write the database but lacks the key cannot re-chain edited rows or
re-label chained rows as legacy without verification failing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from factories import cite

import swarmmem
from swarmmem.adapters.storage.sqlite_support import sqlite_module
from swarmmem.core.model.audit import GENESIS, event_row_hash
from swarmmem.core.model.errors import StorageError

ENABLED = {"enabled": True}
KEY = "correct horse battery staple"


def _write_some(root: Path) -> None:
    cite(root, "BUILD.md")
    with swarmmem.open(root, config=ENABLED, context={"agent_role": "coder"}) as mem:
        for n in range(3):
            prop = mem.propose(
                operation="add",
                kind="project_fact",
                text=f"Fact number {n} about the build.",
                rationale="r",
                evidence_refs=["BUILD.md"],
            )
            mem.curate(prop.id, "add")


def _db(root: Path) -> Any:
    conn = sqlite_module().connect(str(root / ".swarm" / "memory" / "memory.db"))
    conn.isolation_level = None
    return conn


def _rows(conn: Any) -> list[Any]:
    return conn.execute(
        "SELECT rowid, id, operation, target_id, reason, timestamp, event_json, prev_hash "
        "FROM memory_events ORDER BY rowid"
    ).fetchall()


def _rechain_unkeyed(conn: Any) -> None:
    """What an attacker with write access but no key can do: recompute every SHA-256 link."""
    previous = GENESIS
    for rowid, *values, prev in _rows(conn):
        if prev is None:
            continue
        conn.execute("UPDATE memory_events SET prev_hash = ? WHERE rowid = ?", (previous, rowid))
        previous = event_row_hash(*values, previous)
    conn.execute("UPDATE _meta SET value = ? WHERE key = 'memory_events_chain_head'", (previous,))


def _verify(root: Path) -> dict[str, Any]:
    with swarmmem.open(root, config=ENABLED) as mem:
        return mem.store.verify_audit_chain()  # type: ignore[no-any-return]


def test_a_missing_chain_flag_never_launders_a_tampered_log(tmp_path: Path) -> None:
    _write_some(tmp_path)
    conn = _db(tmp_path)
    rowid = _rows(conn)[2][0]
    conn.execute("UPDATE memory_events SET reason = 'nothing happened' WHERE rowid = ?", (rowid,))
    conn.execute("DELETE FROM _meta WHERE key = 'event_hash_chain_backfilled'")
    conn.close()
    report = _verify(tmp_path)
    assert report["verified"] is False
    assert "prev_hash mismatch" in report["divergence"]["detail"]


def test_without_a_key_a_recomputed_chain_verifies(tmp_path: Path) -> None:
    """The threat model's limit, stated as a test: the unkeyed chain only catches edits made
    without recomputing the hashes."""
    _write_some(tmp_path)
    conn = _db(tmp_path)
    conn.execute("UPDATE memory_events SET reason = 'rewritten' WHERE rowid = 3")
    _rechain_unkeyed(conn)
    conn.close()
    assert _verify(tmp_path)["verified"] is True


@pytest.fixture
def keyed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SWARMMEM_AUDIT_KEY", KEY)
    _write_some(tmp_path)
    return tmp_path


def test_a_keyed_chain_verifies_and_marks_itself(keyed: Path) -> None:
    report = _verify(keyed)
    assert report["verified"] is True and report["keyed"] is True


def test_a_keyed_chain_cannot_be_rechained_without_the_key(keyed: Path) -> None:
    conn = _db(keyed)
    conn.execute("UPDATE memory_events SET reason = 'rewritten' WHERE rowid = 5")
    _rechain_unkeyed(conn)
    conn.close()
    report = _verify(keyed)
    assert report["verified"] is False


def test_chained_rows_cannot_be_relabelled_as_legacy(keyed: Path) -> None:
    conn = _db(keyed)
    first_rows = [row[0] for row in _rows(conn)[:4]]
    conn.executemany(
        "UPDATE memory_events SET prev_hash = NULL WHERE rowid = ?", [(r,) for r in first_rows]
    )
    conn.close()
    report = _verify(keyed)
    assert report["verified"] is False
    assert "re-labelled as legacy" in report["divergence"]["detail"]


def test_without_the_key_nothing_verifies_and_nothing_is_written(
    keyed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SWARMMEM_AUDIT_KEY")
    with swarmmem.open(keyed, config=ENABLED) as mem:
        report = mem.store.verify_audit_chain()
        assert report["verified"] is False and "no audit key" in report["keyError"]
        with pytest.raises(StorageError, match="SWARMMEM_AUDIT_KEY"):
            mem.import_records([{"kind": "project_fact", "text": "An unkeyed write."}])
        assert mem.store.count() == 3


def test_a_wrong_key_is_refused(keyed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARMMEM_AUDIT_KEY", "another key")
    with pytest.raises(StorageError, match="does not match"):
        swarmmem.open(keyed, config=ENABLED).store  # noqa: B018 - opening is the test


def test_the_key_can_come_from_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SWARMMEM_AUDIT_KEY", raising=False)
    key_file = tmp_path / "audit.key"
    key_file.write_text(KEY + "\n", encoding="utf-8")
    config = {**ENABLED, "audit": {"keyFile": str(key_file)}}
    with swarmmem.open(tmp_path, config=config) as mem:
        mem.import_records([{"kind": "project_fact", "text": "Keyed by a file."}])
        assert mem.store.verify_audit_chain()["keyed"] is True
    monkeypatch.setenv("SWARMMEM_AUDIT_KEY", KEY)  # the same key from the environment
    assert _verify(tmp_path)["verified"] is True

"""Laundering the audit chain: a store never re-chains rows that were chained, and with an
audit key someone who can write the database but lacks the key cannot re-chain edited rows or
re-label chained rows as legacy without verification failing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from factories import curate_fact

import swarmmem
from swarmmem.adapters.storage.sqlite.support import sqlite_module
from swarmmem.core.model.audit import GENESIS, event_row_hash
from swarmmem.core.model.errors import StorageError

ENABLED = {"enabled": True}
KEY = "correct horse battery staple"


def _write_some(root: Path) -> None:
    with swarmmem.open(root, config=ENABLED, context={"agent_role": "coder"}) as mem:
        for n in range(3):
            curate_fact(mem, f"Fact number {n} about the build.", evidence="BUILD.md")


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


def _downgrade(conn: Any) -> None:
    """What an attacker with write access but no key can do to a keyed chain: drop the key
    marker and the row that logged the keying, then recompute every link with SHA-256."""
    conn.execute("DELETE FROM _meta WHERE key = 'memory_events_keyed_from'")
    conn.execute("DELETE FROM memory_events WHERE operation = 'audit_key'")
    conn.execute("UPDATE memory_events SET reason = 'nothing happened' WHERE rowid = 5")
    _rechain_unkeyed(conn)


def _meta(root: Path) -> list[Any]:
    conn = _db(root)
    try:
        return conn.execute("SELECT key, value FROM _meta ORDER BY key").fetchall()
    finally:
        conn.close()


def test_a_downgraded_chain_does_not_verify_under_the_key(keyed: Path) -> None:
    """Hostile: with the marker and the keying row deleted and the chain recomputed with plain
    SHA-256, opening with the key sealed a new marker (a write) and audit-verify reported
    ``verified: true, keyed: true``. Now nothing is sealed on open, verification fails and
    keyed writes are refused until the owner adopts the key explicitly."""
    conn = _db(keyed)
    _downgrade(conn)
    conn.close()
    before = _meta(keyed)
    report = _verify(keyed)
    assert report["verified"] is False
    assert "audit-key adopt" in report["keyError"]
    assert _meta(keyed) == before  # opening and verifying wrote nothing
    with swarmmem.open(keyed, config=ENABLED) as mem, pytest.raises(StorageError, match="adopt"):
        mem.import_records([{"kind": "project_fact", "text": "A write on a downgraded chain."}])


def test_audit_verify_on_the_command_line_never_writes(keyed: Path) -> None:
    from click.testing import CliRunner

    from swarmmem.cli.app import main

    conn = _db(keyed)
    _downgrade(conn)
    conn.close()
    before = _meta(keyed)
    database = keyed / ".swarm" / "memory" / "memory.db"
    size = database.stat().st_size
    result = CliRunner().invoke(main, ["--root", str(keyed), "audit-verify", "--json"])
    assert result.exit_code != 0
    assert "no keyed marker" in result.stdout
    assert _meta(keyed) == before and database.stat().st_size == size


def test_an_existing_chain_is_keyed_only_by_adopting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store written without a key, then opened with one: writes wait for ``audit-key
    adopt``, which seals the verified history and logs itself; from then on the chain is
    keyed. Adopting twice, or adopting a chain that does not verify, is refused."""
    from click.testing import CliRunner

    from swarmmem.cli.app import main

    monkeypatch.delenv("SWARMMEM_AUDIT_KEY", raising=False)
    _write_some(tmp_path)
    monkeypatch.setenv("SWARMMEM_AUDIT_KEY", KEY)
    with swarmmem.open(tmp_path, config=ENABLED) as mem, pytest.raises(StorageError, match="adopt"):
        mem.import_records([{"kind": "project_fact", "text": "Too early."}])
    runner = CliRunner()
    adopted = runner.invoke(main, ["--root", str(tmp_path), "audit-key", "adopt", "--json"])
    assert adopted.exit_code == 0, adopted.output
    result = json.loads(adopted.stdout)
    assert result["adopted"] is True and result["keyedFrom"] > 0
    with swarmmem.open(tmp_path, config=ENABLED) as mem:
        mem.import_records([{"kind": "project_fact", "text": "A keyed write."}])
        report = mem.store.verify_audit_chain()
        assert report["verified"] is True and report["keyed"] is True
        assert any(e.operation == "audit_key" for e in mem.store.list_events())
    again = runner.invoke(main, ["--root", str(tmp_path), "audit-key", "adopt"])
    assert again.exit_code != 0 and "already keyed" in again.output


def test_a_chain_that_does_not_verify_is_not_adopted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SWARMMEM_AUDIT_KEY", raising=False)
    _write_some(tmp_path)
    conn = _db(tmp_path)
    conn.execute("UPDATE memory_events SET reason = 'edited' WHERE rowid = 3")
    conn.close()
    monkeypatch.setenv("SWARMMEM_AUDIT_KEY", KEY)
    with swarmmem.open(tmp_path, config=ENABLED) as mem:
        with pytest.raises(StorageError, match="does not verify"):
            mem.store.adopt_audit_key()
        assert mem.store.verify_audit_chain()["verified"] is False

"""The hook state of one agent session (``.swarm/runs/<session>/hook-state.json``): the
:class:`~swarmmem.ports.files.SessionState` port and its file adapter."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmmem.adapters.files._safe import folder_id
from swarmmem.adapters.files.hookstate import SessionStateFile
from swarmmem.core.model.errors import StorageError
from swarmmem.ports.files import SessionState


def test_the_state_is_written_back_only_when_the_block_ends_well(tmp_path: Path) -> None:
    state = SessionStateFile(tmp_path, "s1")
    assert isinstance(state, SessionState)
    with state.update() as data:
        assert data == {}
        data["injected"] = ["mem_1"]
    with pytest.raises(RuntimeError), state.update() as data:
        data["injected"] = ["mem_2"]
        raise RuntimeError("the hook failed")
    with state.update() as data:
        assert data == {"injected": ["mem_1"]}
    assert (tmp_path / ".swarm" / "runs" / "s1" / "hook-state.json").stat().st_mode & 0o077 == 0


def test_a_state_folder_removed_since_opening_is_not_made_again(tmp_path: Path) -> None:
    (tmp_path / ".swarm").mkdir()
    state = SessionStateFile(tmp_path, "s1", expect=folder_id(tmp_path / ".swarm"))
    with state.update() as data:
        data["n"] = 1
    (tmp_path / ".swarm" / "runs" / "s1" / "hook-state.json").unlink()
    (tmp_path / ".swarm" / "runs" / "s1" / "hook-state.lock").unlink()
    (tmp_path / ".swarm" / "runs" / "s1").rmdir()
    (tmp_path / ".swarm" / "runs").rmdir()
    (tmp_path / ".swarm").rmdir()
    with pytest.raises(StorageError, match="removed or replaced"), state.update():
        pass
    assert not (tmp_path / ".swarm").exists()

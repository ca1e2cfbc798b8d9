"""Files written and read under a hostile folder never through a link (swarmmem.safefs)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swarmmem.core.model.errors import UntrustedPathError
from swarmmem.safefs import read_text, remove_file, write_file


def test_own_state_is_private_and_shared_files_keep_their_mode(tmp_path: Path) -> None:
    write_file(tmp_path / "state" / "deep" / "a.json", "{}", base=tmp_path, private=True)
    assert (tmp_path / "state").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "state" / "deep").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "state" / "deep" / "a.json").stat().st_mode & 0o777 == 0o600
    shared = tmp_path / "shared.txt"
    shared.write_text("old", encoding="utf-8")
    shared.chmod(0o664)
    write_file(shared, "new", base=tmp_path)
    assert shared.read_text(encoding="utf-8") == "new"
    assert shared.stat().st_mode & 0o777 == 0o664
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shared.txt", "state"]


def test_a_path_outside_the_base_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UntrustedPathError, match="not inside"):
        write_file(tmp_path.parent / "elsewhere.txt", "x", base=tmp_path)
    with pytest.raises(UntrustedPathError, match="not a file inside"):
        write_file(tmp_path / "a" / ".." / "b.txt", "x", base=tmp_path)


def test_a_fifo_or_folder_at_the_target_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    for name in ("fifo", "folder"):
        with pytest.raises(UntrustedPathError, match="not a regular file"):
            write_file(tmp_path / name, "x", base=tmp_path)
        with pytest.raises(UntrustedPathError, match="not a regular file"):
            read_text(tmp_path / name, base=tmp_path)


def test_reading_never_follows_a_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.json").write_text('{"token": "x"}', encoding="utf-8")
    base = tmp_path / "repo"
    base.mkdir()
    (base / "linked.json").symlink_to(outside / "secret.json")
    (base / "folder").symlink_to(outside)
    with pytest.raises(UntrustedPathError, match="symbolic link"):
        read_text(base / "linked.json", base=base)
    with pytest.raises(UntrustedPathError, match="symbolic link"):
        read_text(base / "folder" / "secret.json", base=base)
    assert read_text(base / "missing" / "x.json", base=base) is None
    assert read_text(base / "missing.json", base=base) is None


def test_removing_never_follows_a_link(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    (outside / "rules").mkdir(parents=True)
    (outside / "rules" / "swarmmem.mdc").write_text("theirs", encoding="utf-8")
    (outside / "plugin.js").write_text("theirs", encoding="utf-8")
    (project / ".cursor").mkdir(parents=True)
    (project / ".cursor" / "rules").symlink_to(outside / "rules")  # a linked folder
    with pytest.raises(UntrustedPathError, match="symbolic link"):
        remove_file(project / ".cursor" / "rules" / "swarmmem.mdc", base=project)
    assert (outside / "rules" / "swarmmem.mdc").read_text(encoding="utf-8") == "theirs"
    (project / "plugin.js").symlink_to(outside / "plugin.js")  # a linked file: the link goes
    remove_file(project / "plugin.js", base=project)
    assert not (project / "plugin.js").is_symlink()
    assert (outside / "plugin.js").read_text(encoding="utf-8") == "theirs"
    (project / "folder").mkdir()
    with pytest.raises(UntrustedPathError, match="it is a folder"):
        remove_file(project / "folder", base=project)
    remove_file(project / "missing" / "file.txt", base=project)  # nothing there: nothing done
    (project / "mine.txt").write_text("x", encoding="utf-8")
    remove_file(project / "mine.txt", base=project)
    assert not (project / "mine.txt").exists()

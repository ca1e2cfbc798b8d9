"""Hostile: a cloned repository ships links inside ``.swarm/evidence-cache/``; adding a
document (``swarmmem evidence add``, the MCP tool) wrote, truncated or created files wherever
those links pointed (docs/security.md)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from swarmmem.adapters.files.evidence_cache import EvidenceCache
from swarmmem.core.model.errors import StorageError

ORIGINAL = "export PATH=$HOME/bin:$PATH\n"


def _victim(tmp_path: Path) -> Path:
    """A file of the user's outside the checkout (their shell start-up, say)."""
    home = tmp_path / "home"
    home.mkdir()
    target = home / ".bashrc"
    target.write_text(ORIGINAL, encoding="utf-8")
    return target


def _cache(project: Path, **limits: int) -> EvidenceCache:
    return EvidenceCache.for_root(project, **limits)


@pytest.mark.parametrize("link", [".swarm", ".swarm/evidence-cache"])
def test_a_linked_cache_folder_is_refused(tmp_path: Path, link: str) -> None:
    project = tmp_path / "checkout"
    project.mkdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (project / link).parent.mkdir(parents=True, exist_ok=True)
    (project / link).symlink_to(outside, target_is_directory=True)
    with pytest.raises(StorageError, match="symbolic link"):
        _cache(project).add("The API returns 429 after 100 calls a minute.", "docs")
    assert list(outside.rglob("*")) == []


@pytest.mark.parametrize("name", ["documents.jsonl", "documents.jsonl.lock"])
def test_a_linked_cache_file_is_never_written_through(tmp_path: Path, name: str) -> None:
    project = tmp_path / "checkout"
    folder = project / ".swarm" / "evidence-cache"
    folder.mkdir(parents=True)
    victim = _victim(tmp_path)
    (folder / name).symlink_to(victim)
    with pytest.raises(StorageError, match="symbolic link"):
        _cache(project).add("The API returns 429 after 100 calls a minute.", "docs")
    assert victim.read_text(encoding="utf-8") == ORIGINAL


def test_a_link_to_a_missing_file_is_never_created(tmp_path: Path) -> None:
    project = tmp_path / "checkout"
    folder = project / ".swarm" / "evidence-cache"
    folder.mkdir(parents=True)
    planted = tmp_path / "home" / ".ssh" / "authorized_keys"
    planted.parent.mkdir(parents=True)
    (folder / "documents.jsonl.lock").symlink_to(planted)
    with pytest.raises(StorageError, match="symbolic link"):
        _cache(project).add("The API returns 429 after 100 calls a minute.", "docs")
    assert not planted.exists()


def test_compaction_never_writes_through_a_planted_temporary_name(tmp_path: Path) -> None:
    """The compaction wrote its new file to the fixed name ``documents.jsonl.tmp`` through a
    link there (the user's file became the cache's lines), then renamed it into the cache."""
    project = tmp_path / "checkout"
    folder = project / ".swarm" / "evidence-cache"
    folder.mkdir(parents=True)
    victim = _victim(tmp_path)
    (folder / "documents.jsonl.tmp").symlink_to(victim)
    cache = _cache(project, max_records=2)
    for n in range(4):
        cache.add(f"Document number {n} about the rate limits of the API.", f"page {n}")
    assert victim.read_text(encoding="utf-8") == ORIGINAL
    assert len(cache) == 2


def test_the_cache_is_private_to_the_user(tmp_path: Path) -> None:
    project = tmp_path / "checkout"
    project.mkdir()
    old = os.umask(0o022)
    try:
        cache = _cache(project)
        cache.add("The API returns 429 after 100 calls a minute.", "docs")
    finally:
        os.umask(old)
    assert stat.S_IMODE(cache.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(cache.path.parent.stat().st_mode) == 0o700
    lock = cache.path.with_name(cache.path.name + ".lock")
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600

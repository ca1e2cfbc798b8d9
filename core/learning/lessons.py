"""Reflection as a use case: regenerate the lesson files from the store, read them back.

The digest is built by :mod:`.reflection`; the files are reached through the
:class:`~swarmmem.ports.files.LessonFiles` port.
"""

from __future__ import annotations

from typing import Any

from swarmmem.core.learning import reflection
from swarmmem.ports.detectors import SecretDetector
from swarmmem.ports.files import LessonFiles
from swarmmem.ports.storage import StorageProvider

#: A store larger than this is not read for reflection.
MAX_STORE_BYTES = 16 * 1024 * 1024


def regenerate(
    store: StorageProvider,
    files: LessonFiles,
    *,
    now: str,
    secrets: SecretDetector,
    half_life_days: float = 30.0,
) -> dict[str, Any]:
    """Rebuild the lesson files from the store.

    Returns ``{"updated", "entries", "json_path", "md_path", "digest"}``, or ``{"updated":
    False, "reason": ...}`` when refused (a store larger than 16 MiB).

    Raises:
        ReflectionLockError: another writer kept the lock.
        OSError: the files could not be written.
    """
    size = files.store_bytes()
    if size > MAX_STORE_BYTES:
        return {"updated": False, "reason": f"memory store too large ({size} bytes > 16 MiB)"}
    entries = reflection.select_entries(store, now=now)
    digest = reflection.build_digest(
        entries,
        now=now,
        anchor_alive=files.anchor_alive,
        secrets=secrets,
        half_life_days=half_life_days,
    )
    json_path, md_path = files.write(
        reflection.render_json(digest), reflection.render_markdown(digest)
    )
    return {
        "updated": True,
        "entries": digest["generatedFrom"]["entries"],
        "json_path": json_path,
        "md_path": md_path,
        "digest": digest,
    }


def prompt_block(files: LessonFiles, secrets: SecretDetector | None = None) -> str:
    """The bounded reflection block from ``lessons.json`` (``""`` when there is none)."""
    return reflection.reflection_block(files.load(), secrets=secrets)


def dead_anchor_ids(files: LessonFiles) -> list[str]:
    """``deadAnchorMemoryIds`` from ``lessons.json`` (empty when unavailable)."""
    ids = (files.load() or {}).get("deadAnchorMemoryIds")
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []

"""Reflection as a use case: regenerate the lesson files from the store, read them back.

The digest is built by :mod:`.reflection`; the files are reached through the
:class:`~swarmmem.ports.files.LessonFiles` port.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import attrs

from swarmmem.core.learning import reflection
from swarmmem.core.model.reports import Reflection, ReflectionStatus
from swarmmem.ports.detectors import SecretDetector
from swarmmem.ports.files import LessonFiles
from swarmmem.ports.storage import StorageProvider

log = logging.getLogger("swarmmem")

#: A store larger than this is not read for reflection.
MAX_STORE_BYTES = 16 * 1024 * 1024


def regenerate(
    store: StorageProvider,
    files: LessonFiles,
    *,
    now: str,
    secrets: SecretDetector,
    half_life_days: float = reflection.DEFAULT_HALF_LIFE_DAYS,
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


def refresh_status(enabled: bool, regenerate: Callable[[], Reflection]) -> ReflectionStatus:
    """Run ``regenerate`` when reflection is ``enabled`` and describe what happened.

    A failure never propagates (the caller's own work is already done): it is logged and
    makes the status ``partial`` with ``reflection_error``.
    """
    out = ReflectionStatus(reflection_enabled=enabled, reflection_attempted=enabled)
    if not enabled:
        return out
    try:
        result = regenerate()
    except Exception as exc:
        log.warning("reflection regeneration failed", exc_info=True)
        return attrs.evolve(out, status="partial", partial=True, reflection_error=str(exc))
    out = attrs.evolve(out, reflection_updated=result.updated, reflection_entries=result.entries)
    if not result.updated:
        return attrs.evolve(out, status="partial", partial=True, reflection_error=result.reason)
    return out


@attrs.frozen(kw_only=True)
class LessonService:
    """Reflection for one project: regenerate the lessons, read their prompt block, and report
    the outcome of a regeneration triggered by another call."""

    store: StorageProvider
    files: LessonFiles
    enabled: bool
    now: Callable[[], str]
    secrets: SecretDetector
    half_life_days: float = reflection.DEFAULT_HALF_LIFE_DAYS

    def regenerate(self) -> Reflection:
        """Rebuild the lesson files (not ``updated``, with the reason ``disabled``, when off)."""
        if not self.enabled:
            return Reflection(updated=False, reason="disabled")
        result = regenerate(
            self.store,
            self.files,
            now=self.now(),
            secrets=self.secrets,
            half_life_days=self.half_life_days,
        )
        if not result["updated"]:
            return Reflection(updated=False, reason=result["reason"])
        return Reflection(
            updated=True,
            entries=result["entries"],
            json_path=result["json_path"],
            md_path=result["md_path"],
        )

    def block(self) -> str:
        """The bounded reflection prompt block (empty when reflection is off)."""
        return prompt_block(self.files, self.secrets) if self.enabled else ""

    def refresh(self) -> ReflectionStatus:
        """Regenerate after another write and describe it (see :func:`refresh_status`)."""
        return refresh_status(self.enabled, self.regenerate)

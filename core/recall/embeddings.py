"""Keeping the vector index in step with the records: write-time embedding and rebuilds.

Only durable, non-ephemeral memories are embedded. Write-time failures are logged and never
fail the write; a rebuild advances the stored model version only when every record made it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from swarmmem.core.model.ids import normalize_text
from swarmmem.core.model.records import DURABLE_MEMORY_KINDS, MemoryRecord
from swarmmem.core.model.reports import EmbeddingRebuild
from swarmmem.core.recall.hybrid import DenseParts
from swarmmem.core.recall.lexical import recallable
from swarmmem.ports.storage import ListFilter, StorageProvider
from swarmmem.ports.vectors import ApproximateIndex

log = logging.getLogger("swarmmem")
#: how many records a rebuild hands the embedder per call (and per progress step)
REBUILD_BATCH = 256


def embeddable(records: Iterable[MemoryRecord]) -> list[MemoryRecord]:
    """The records that get a vector: durable kinds, not ephemeral."""
    return [
        r
        for r in records
        if r.kind in DURABLE_MEMORY_KINDS and r.stability != "ephemeral" and recallable(r)
    ]


def _embed(parts: DenseParts, records: list[MemoryRecord]) -> None:
    vectors = parts.embedder.embed_batch([normalize_text(r.text).lower() for r in records])
    parts.index.upsert([r.id for r in records], vectors)


def embed_records(parts: DenseParts, records: Iterable[MemoryRecord]) -> int:
    """Embed ``records`` at write time; how many were embedded (0 on failure, logged)."""
    chosen = embeddable(records)
    if not chosen:
        return 0
    try:
        _embed(parts, chosen)
    except Exception as exc:  # an embedding failure never fails the write
        log.warning("write-time embedding failed: %s", exc)
        return 0
    return len(chosen)


def rebuild_index(
    store: StorageProvider,
    parts: DenseParts,
    *,
    now: str,
    progress: Callable[[int, int], None] | None = None,
    batch_size: int = REBUILD_BATCH,
) -> EmbeddingRebuild:
    """Re-embed every active durable memory, drop vectors of records that are gone, advance
    the stored model version when nothing failed, and rebuild an approximate index whose build
    options differ from the configured ones (optional ``rebuild_ann_index`` of the index).

    The records go to the embedder shortest text first, ``batch_size`` per call, so each
    call's model batches hold texts of about one length (little padding) and keep every
    core busy."""
    records = embeddable(store.list(ListFilter(now=now)))
    records.sort(key=lambda r: len(r.text))
    before = set(parts.index.ids())
    missing = sum(1 for r in records if r.id not in before)
    outdated = parts.index.stored_model_version() not in (None, parts.embedder.model_version)
    done = failed = 0
    for start in range(0, len(records), batch_size):
        batch = records[start : start + batch_size]
        try:
            _embed(parts, batch)
            done += len(batch)
        except Exception:  # counted; the version is not advanced
            failed += len(batch)
        if progress is not None:
            progress(done + failed, len(records))
    keep = {r.id for r in records}
    stale = [i for i in parts.index.ids() if i not in keep]
    if stale:
        parts.index.delete(stale)
    advanced = failed == 0
    if advanced:
        parts.index.set_model_version(parts.embedder.model_version)
    return EmbeddingRebuild(
        rebuilt=done,
        failed=failed,
        advanced=advanced,
        model_version=parts.embedder.model_version,
        missing_before=missing,
        stale_removed=len(stale),
        outdated_model=outdated,
        # an approximate index built with other options than configured is rebuilt
        ann_index=(
            parts.index.rebuild_ann_index() if isinstance(parts.index, ApproximateIndex) else None
        ),
    )


def coverage(store: StorageProvider, parts: DenseParts, *, now: str) -> dict[str, Any]:
    """How many embeddable memories have a vector, under which model version, and whether
    ``rebuild_index`` is needed (missing vectors, vectors of another model, or an approximate
    index built with other options: optional ``ann_index`` of the index)."""
    records = embeddable(store.list(ListFilter(now=now)))
    stored = set(parts.index.ids())
    embedded = sum(1 for r in records if r.id in stored)
    version = parts.index.stored_model_version()
    current = parts.embedder.model_version
    ann = parts.index.ann_index() if isinstance(parts.index, ApproximateIndex) else None
    out = {
        "embedded": embedded,
        "total": len(records),
        "missing": len(records) - embedded,
        "model_version": current,
        "stored_model_version": version,
        "needs_rebuild": embedded < len(records)
        or version not in (None, current)
        or bool(ann and ann["needs_rebuild"]),
    }
    if ann is not None:
        out["ann_index"] = ann
    return out


@attrs.frozen(kw_only=True)
class EmbeddingSync:
    """Keeps one store's vector index in step. ``parts`` gives the dense parts (``None`` when
    unavailable, ``reason`` saying why); writes embed only when ``enabled``."""

    store: StorageProvider
    enabled: bool
    parts: Callable[[], DenseParts | None]
    reason: Callable[[], str | None]
    now: Callable[[], str]

    def embed(self, records: Iterable[MemoryRecord]) -> int:
        """Write-time embedding of ``records`` (0 when embeddings are off)."""
        parts = self.parts() if self.enabled else None
        return embed_records(parts, records) if parts is not None else 0

    def coverage(self) -> dict[str, Any]:
        """:func:`coverage` when embeddings are on (``{"enabled": False}`` otherwise, with the
        reason when they are on but unavailable)."""
        if not self.enabled:
            return {"enabled": False}
        parts = self.parts()
        if parts is None:
            return {"enabled": True, "available": False, "reason": self.reason()}
        return {"enabled": True, "available": True, **coverage(self.store, parts, now=self.now())}

    def rebuild(
        self, progress: Callable[[int, int], None] | None = None, batch_size: int = REBUILD_BATCH
    ) -> EmbeddingRebuild:
        """:func:`rebuild_index`, or why it could not run."""
        parts = self.parts()
        if parts is None:
            return EmbeddingRebuild(rebuilt=0, failed=0, advanced=False, reason=self.reason())
        return rebuild_index(
            self.store, parts, now=self.now(), progress=progress, batch_size=batch_size
        )

"""Files the memory keeps beside its store: the per-run event log and the lesson files.

Core code reaches them only through these ports, so it never opens a file itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class RunLog(Protocol):
    """**Protocol:** the append-only event log of one run (``.swarm/runs/<run>/memory.jsonl``).

    Obligations: ``append`` adds ``runId`` and ``timestamp`` to the event and makes the line
    durable before returning; ``read`` returns the events in order and skips malformed lines,
    and never reads through a symbolic link.
    """

    def append(self, run_id: str | None, event: Mapping[str, Any], timestamp: str) -> None:
        """Append one event of ``run_id``."""
        ...

    def read(self, run_id: str | None) -> list[dict[str, Any]]:
        """Every event logged for ``run_id``."""
        ...


@runtime_checkable
class RunHistory(Protocol):
    """**Optional capability** of a :class:`RunLog`: the runs that have a log.

    Obligations: ``runs`` returns the id of every run whose log exists, the most recently
    written first; it reads no folder or file through a symbolic link (a link where a run's
    folder or log belongs is passed over) and never raises for a missing runs folder.
    """

    def runs(self) -> list[str]:
        """The ids of the runs with a log, newest first."""
        ...


@runtime_checkable
class SessionState(Protocol):
    """**Protocol:** what the hooks of one agent session remember between processes.

    Obligations: ``update`` holds the session's lock for the block, yields the stored state
    (an empty dict for a missing or unreadable one) and writes it back atomically when the
    block ends without an error; it never reads or writes through a symbolic link.
    """

    def update(self) -> AbstractContextManager[dict[str, Any]]:
        """The state as a dict, written back when the block ends without an error."""
        ...


@runtime_checkable
class LessonFiles(Protocol):
    """**Protocol:** the reflection lesson files (``lessons.json`` and ``lessons.md``).

    Obligations: ``write`` replaces both files atomically under an exclusive lock (raising
    ``ReflectionLockError`` when the lock stays busy); ``load`` returns ``None`` for a missing,
    oversized or malformed file instead of raising; ``anchor_alive`` is true only for a regular
    file inside the project root.
    """

    def store_bytes(self) -> int:
        """Total size of the memory store files (the regeneration guard)."""
        ...

    def anchor_alive(self, file: str) -> bool:
        """Whether an outcome anchor still names a file of the project."""
        ...

    def write(self, json_text: str, markdown: str) -> tuple[str, str]:
        """Replace both lesson files; returns their paths (JSON, Markdown)."""
        ...

    def load(self) -> dict[str, Any] | None:
        """``lessons.json`` as a dict, or ``None``."""
        ...

"""The ``local-jsonl`` storage provider: append-only JSON-lines files in one directory.

Files (one JSON object per line, UTF-8):

* ``memories.jsonl``       every written version of a record (stored form, with provenance)
* ``proposals.jsonl``      every written version of a proposal
* ``audit.jsonl``          audit events, and recall usage as ``recall`` lines with a ``usage``
* ``outcome-events.jsonl`` outcome events
* ``reward-events.jsonl``  learning reward events

On open the files are replayed and the last valid row of each id wins. A line that is not
JSON or does not parse as its type is listed in :attr:`JsonlStore.load_report` (file, line
number, error); it never stops the store from opening and is never silently skipped. Merge
relations are rebuilt from the applied merge proposals of the ledger.

Writes are buffered per transaction and appended at commit, then flushed and fsynced, so a
rolled-back transaction leaves the files untouched. A hard delete rewrites the affected file
atomically (temporary file, fsync, rename). The store assumes one writing process.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from swarmmem.adapters.storage.memory import (
    InMemoryStore,
    _event_line,
    _record_line,
    _usage_line,
)
from swarmmem.core.model.codec import (
    outcome_event_from_dict,
    outcome_event_to_dict,
    proposal_from_dict,
    proposal_to_dict,
    recall_usage_from_dict,
    record_from_dict,
    reward_event_from_dict,
    reward_event_to_dict,
)
from swarmmem.core.model.errors import MemoryValidationError, StorageError
from swarmmem.core.model.events import RewardEvent
from swarmmem.core.model.records import MemoryProposal, MemoryRecord
from swarmmem.core.model.semantics import dumps, merge_pairs
from swarmmem.ports.clock import Clock
from swarmmem.ports.storage import StoredEvent

if TYPE_CHECKING:
    from swarmmem.core.config import MemoryConfig

DEFAULT_DIRECTORY = Path(".swarm") / "memory"
FILES = (
    "memories.jsonl",
    "proposals.jsonl",
    "audit.jsonl",
    "outcome-events.jsonl",
    "reward-events.jsonl",
)


MAX_ROW_DEPTH = 64
"""Rows nested deeper than this are refused (no stored shape comes near it)."""


def read_jsonl(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    """Yield ``(line_number, parsed_or_None, error_or_None)`` for each non-blank line; a line
    nested deeper than :data:`MAX_ROW_DEPTH` is an error of its own (the other rows stay)."""
    with path.open("rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                parsed = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                yield number, None, f"invalid JSON: {exc}"
                continue
            except RecursionError:
                parsed = None
            if (parsed is None and raw.strip() != b"null") or _depth(parsed) > MAX_ROW_DEPTH:
                yield number, None, f"JSON nested deeper than {MAX_ROW_DEPTH} levels"
                continue
            yield number, parsed, None


def _depth(value: Any) -> int:
    """How deeply ``value`` nests lists and objects (iteratively: any depth is safe)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, level)
            if level > MAX_ROW_DEPTH:
                return level
            stack.extend((child, level + 1) for child in item)
    return deepest


def atomic_write_lines(path: Path, lines: list[str]) -> None:
    """Write ``lines`` (each ending in a newline) to ``path`` through a new private temporary
    file (0600) and a rename."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)  # no link
    try:
        with os.fdopen(os.open(tmp, flags, 0o600), "w", encoding="utf-8", newline="\n") as fh:
            fh.writelines(lines)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    _fsync_dir(path.parent)


def append_text(path: str, text: str, *, sync: bool) -> None:
    """Append ``text`` to ``path`` (created 0600 if missing, never through a link) as UTF-8,
    unchanged (no newline translation); ``sync`` waits for the disk."""
    data = memoryview(text.encode("utf-8"))
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags | getattr(os, "O_BINARY", 0), 0o600)
    try:
        while data:
            data = data[os.write(fd, data) :]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


_T = TypeVar("_T")


def _stamped_reward(obj: Any) -> RewardEvent:
    """A reward event line (it must carry its timestamp)."""
    reward = reward_event_from_dict(obj)
    if reward.timestamp is None:
        raise MemoryValidationError("reward event: timestamp is required")
    return reward


class JsonlStore(InMemoryStore):
    """A :class:`~swarmmem.ports.storage.StorageProvider` over append-only JSONL files."""

    name = "local-jsonl"

    def __init__(
        self, directory: str | os.PathLike[str] = DEFAULT_DIRECTORY, clock: Clock | None = None
    ):
        super().__init__(clock=clock)
        self.directory = Path(directory)
        self._pending: list[tuple[str, str]] = []
        #: how many pending lines must reach the disk (all but recall usage)
        self._durable = 0
        self._rewrites: set[str] = set()
        self._needs_newline: dict[str, bool] = {}
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._load()
        except OSError as exc:
            raise StorageError(f"cannot open JSONL store at {self.directory}: {exc}") from exc
        self._undo.clear()

    @classmethod
    def from_config(cls, tree: MemoryConfig, *, clock: Clock | None, **_parts: Any) -> JsonlStore:
        """The store of ``memory.storageDir``."""
        return cls(tree.storage_dir, clock=clock)

    # -- loading -------------------------------------------------------------------------

    def _problem(self, file: str, line: int, error: str) -> None:
        self.load_report.append({"file": file, "line": line, "error": error})

    def _lines(self, file: str) -> Iterator[tuple[int, Any]]:
        path = self.directory / file
        if not path.exists():
            return
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            if fh.tell() > 0:
                fh.seek(-1, os.SEEK_END)
                self._needs_newline[file] = fh.read(1) != b"\n"
        for number, obj, error in read_jsonl(path):
            if error is not None:
                self._problem(file, number, error)
            elif not isinstance(obj, dict):
                self._problem(file, number, "line is not a JSON object")
            else:
                yield number, obj

    def _parsed(self, file: str, parse: Callable[[Any], _T]) -> Iterator[_T]:
        """Each line of ``file`` that ``parse`` accepts (the others are reported)."""
        for number, obj in self._lines(file):
            try:
                parsed = parse(obj)
            except MemoryValidationError as exc:
                self._problem(file, number, str(exc))
                continue
            yield parsed

    def _load(self) -> None:
        for record in self._parsed("memories.jsonl", record_from_dict):
            self._records[record.id] = record
        for proposal in self._parsed("proposals.jsonl", proposal_from_dict):
            self._proposals[proposal.id] = proposal
        for number, obj in self._lines("audit.jsonl"):
            try:
                self._load_audit_line(obj)
            except (KeyError, TypeError, ValueError) as exc:
                self._problem("audit.jsonl", number, f"invalid audit line: {exc}")
        for event in self._parsed("outcome-events.jsonl", outcome_event_from_dict):
            previous = self._outcomes.get(event.id)
            if previous is not None:
                self._outcomes_by_memory[previous.memory_id].pop(event.id, None)
            self._outcomes[event.id] = event
            self._outcomes_by_memory.setdefault(event.memory_id, {})[event.id] = event
        for reward in self._parsed("reward-events.jsonl", _stamped_reward):
            self._rewards.append(reward)
        self._rebuild_relations()

    def _load_audit_line(self, obj: Mapping[str, Any]) -> None:
        if "usage" in obj:
            self._usage.append(recall_usage_from_dict(obj["usage"], str(obj["timestamp"])))
            return
        for key in ("id", "operation", "targetId", "timestamp"):
            if not isinstance(obj[key], str):
                raise TypeError(f"{key} must be a string")
        for key in ("reason", "eventJson"):
            if obj.get(key) is not None and not isinstance(obj[key], str):
                raise TypeError(f"{key} must be a string")
        self._events.append(
            StoredEvent(
                id=obj["id"],
                operation=obj["operation"],
                target_id=obj["targetId"],
                timestamp=obj["timestamp"],
                reason=obj.get("reason"),
                event_json=obj.get("eventJson"),
            )
        )

    def _rebuild_relations(self) -> None:
        self._relations.clear()
        for proposal in self.list_proposals("applied"):
            for source, target in merge_pairs(proposal):
                if source in self._records and target in self._records:
                    bucket = self._relations.setdefault(source, {})
                    bucket.setdefault(target, proposal.id)

    # -- persistence hooks ---------------------------------------------------------------

    def _journal(self, file: str, line: Mapping[str, Any], *, durable: bool = True) -> None:
        self._append(self._pending, (file, dumps(line) + "\n"))
        if durable:
            self._durable += 1
            self._undo.append(self._undo_durable)

    def _undo_durable(self) -> None:
        self._durable -= 1

    def _rewrite(self, file: str) -> None:
        if file not in self._rewrites:
            self._rewrites.add(file)
            self._undo.append(lambda: self._rewrites.discard(file))

    def _commit(self) -> None:
        try:
            self._flush()
        except OSError as exc:
            raise StorageError(f"cannot write JSONL store at {self.directory}: {exc}") from exc
        self._pending.clear()
        self._rewrites.clear()
        self._durable = 0

    def _flush(self) -> None:
        for file in sorted(self._rewrites):
            atomic_write_lines(self.directory / file, self._snapshot_lines(file))
            self._needs_newline[file] = False
        by_file: dict[str, list[str]] = {}
        for file, line in self._pending:
            if file not in self._rewrites:
                by_file.setdefault(file, []).append(line)
        for file, lines in by_file.items():
            if self._needs_newline.get(file):
                lines.insert(0, "\n")
            path = os.path.join(self.directory, file)
            # a commit of recall usage alone is not synced
            append_text(path, "".join(lines), sync=bool(self._durable))
            self._needs_newline[file] = False

    def _snapshot_lines(self, file: str) -> list[str]:
        if file == "memories.jsonl":
            records: list[MemoryRecord] = sorted(
                self._records.values(), key=lambda r: (r.updated_at, r.id)
            )
            return [dumps(_record_line(r)) + "\n" for r in records]
        if file == "proposals.jsonl":
            proposals: list[MemoryProposal] = self.list_proposals()
            return [dumps(proposal_to_dict(p)) + "\n" for p in proposals]
        if file == "outcome-events.jsonl":
            return [dumps(outcome_event_to_dict(e)) + "\n" for e in self._outcomes.values()]
        if file == "reward-events.jsonl":
            return [dumps(reward_event_to_dict(e)) + "\n" for e in self._rewards]
        lines = [dumps(_event_line(e)) + "\n" for e in self._events]
        return lines + [dumps(_usage_line(u)) + "\n" for u in self._usage]

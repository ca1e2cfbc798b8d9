"""Bulk import screens many rows for secrets at once: it refuses exactly what a row-by-row
check refuses, with the same reasons, whatever the chunk a row falls in."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from factories import REPO_SCOPE

from swarmmem.adapters.detectors.regex_secrets import RegexSecretDetector
from swarmmem.adapters.storage.export_import import import_jsonl
from swarmmem.adapters.storage.memory import InMemoryStore
from swarmmem.adapters.storage.sql.records import uuid4_strings
from swarmmem.core.model.codec import record_to_dict
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.writes.importing import SCREEN_ROWS, complete_record, import_records

NOW = dt.datetime(2026, 2, 1, tzinfo=dt.timezone.utc)
OPENAI = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2"
GITHUB = "ghp_" + "A" * 36
AWS_ID = "AKIA" + "ABCDEFGHIJKLMNOP"


class RowByRowDetector:
    """The default patterns without the many-text screen (every string is checked alone)."""

    def __init__(self) -> None:
        self._inner = RegexSecretDetector()

    def contains_secret(self, text: str) -> bool:
        return self._inner.contains_secret(text)

    def find(self, text: str) -> Any:
        return self._inner.find(text)

    def redact(self, text: str) -> str:
        return self._inner.redact(text)


def rows() -> list[Any]:
    out: list[Any] = [
        {
            "kind": "project_fact",
            "source": {"type": "file", "filePath": f"src/mod{i % 7}.py"},
            "tags": ["retry"],
            "text": f"fact {i}: uploads retry three times",
        }
        for i in range(2 * SCREEN_ROWS + 40)
    ]
    out[5]["text"] = f"the key is {OPENAI} for now"  # first chunk
    out[SCREEN_ROWS + 3]["tags"] = ["ok", GITHUB]  # second chunk, in a list
    out[-1]["metadata"] = {AWS_ID: "x"}  # last chunk, in a key
    # two strings that only match once joined: the screen fires, no row holds a secret
    out[SCREEN_ROWS + 9]["tags"] = ["Authorization:", "Bearer abcdefghijklmnop"]
    out[7] = "not an object"
    out[8]["text"] = "lone \ud800 surrogate"
    out[9]["scope"] = {"type": "repository", "repoId": "bench", "extra": "x"}
    return out


def one_by_one(given: list[Any], detector: Any) -> tuple[list[str], list[tuple[int, str]]]:
    written, refused = [], []
    for index, raw in enumerate(given):
        try:
            record = complete_record(
                raw,
                now=NOW,
                repo_scope=REPO_SCOPE,
                secrets=detector,
                reject_durable_secrets=True,
            )
        except (MemoryValidationError, TypeError, ValueError) as exc:
            refused.append((index, str(exc)))
        else:
            written.append(record.id)
    return written, refused


@pytest.mark.parametrize("detector", [RegexSecretDetector(), RowByRowDetector()])
def test_screened_import_refuses_what_row_by_row_checks_refuse(detector: Any) -> None:
    given = rows()
    store = InMemoryStore()
    result, written = import_records(
        store,
        iter(given),
        now=NOW,
        repo_scope=REPO_SCOPE,
        secrets=detector,
        reject_durable_secrets=True,
    )
    expected_written, expected_refused = one_by_one(given, detector)
    assert [r.id for r in written] == expected_written
    assert list(result.refused) == expected_refused
    assert [index for index, _ in expected_refused] == [5, 7, 8, 9, SCREEN_ROWS + 3, len(given) - 1]
    reasons = dict(expected_refused)
    assert reasons[5] == "record.text contains a likely secret"
    assert reasons[SCREEN_ROWS + 3] == "record.tags[1] contains a likely secret"
    assert reasons[len(given) - 1] == "record.metadata key contains a likely secret"
    assert store.count() == len(given) - 6


def test_jsonl_import_refuses_secret_rows_in_any_chunk(tmp_path: Path) -> None:
    exported = [
        record_to_dict(
            complete_record(
                {
                    "kind": "project_fact",
                    "text": f"fact {i}",
                    "source": {"type": "file", "filePath": "a.py"},
                },
                now=NOW,
                repo_scope=REPO_SCOPE,
                secrets=RegexSecretDetector(),
                reject_durable_secrets=True,
            )
        )
        for i in range(2 * SCREEN_ROWS + 40)
    ]
    exported[5]["text"] = f"the key is {OPENAI}"
    exported[SCREEN_ROWS + 3]["tags"] = ["ok", GITHUB]
    exported[-1]["metadata"] = {AWS_ID: "x"}
    exported[SCREEN_ROWS + 9]["tags"] = ["Authorization:", "Bearer abcdefghijklmnop"]
    lines = "".join(json.dumps(row) + "\n" for row in exported)
    (tmp_path / "memories.jsonl").write_text(lines, encoding="utf-8")
    report = import_jsonl(InMemoryStore(), tmp_path, secrets=RegexSecretDetector())
    assert [(row["line"], row["reason"]) for row in report["invalidRows"]] == [
        (6, "row.text contains a likely secret"),
        (SCREEN_ROWS + 4, "row.tags[1] contains a likely secret"),
        (len(exported), "row.metadata key contains a likely secret"),
    ]
    assert report["importedMemories"] == len(exported) - 3


def test_uuid4_strings_are_random_version_4_uuids() -> None:
    made = uuid4_strings(500)
    assert len(set(made)) == 500
    for text in made:
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
    assert uuid4_strings(0) == []

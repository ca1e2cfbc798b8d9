"""Over-long input is refused before any detector reads it (hostile: a 400 KB proposal once
ran the secret and PII detectors over all of it before "must be 1..2000 characters")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import swarmmem
from swarmmem.adapters.detectors.regex_secrets import RegexSecretDetector
from swarmmem.core.model.errors import MemoryValidationError


class SpyDetector(RegexSecretDetector):
    """The regex detector, counting how many characters it was asked to read."""

    def __init__(self) -> None:
        super().__init__()
        self.read = 0

    def find(self, text: str) -> Any:
        self.read += len(text)
        return super().find(text)

    def contains_secret(self, text: str) -> bool:
        self.read += len(text)
        return super().contains_secret(text)

    def redact(self, text: str) -> str:
        self.read += len(text)
        return super().redact(text)


@pytest.mark.parametrize(
    ("field", "message"),
    [
        ("text", "text must be at most 2000 characters; got 400000"),
        ("rationale", "rationale must be at most 2000 characters; got 400000"),
        ("evidence_refs", "each evidence ref must be at most 500 characters"),
        ("tags", "at most 64 tags; got 100000"),
    ],
)
def test_over_long_proposals_are_refused_before_any_detector_runs(
    tmp_path: Path, field: str, message: str
) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    spy = SpyDetector()
    fields: dict[str, Any] = {
        "operation": "add",
        "kind": "project_fact",
        "text": "Deploys run nightly.",
        "rationale": "r",
        "evidence_refs": ["a.py"],
    }
    fields[field] = {
        "text": "a" * 400_000,
        "rationale": "a" * 400_000,
        "evidence_refs": ["a.py", "b" * 400_000],
        "tags": ["t"] * 100_000,
    }[field]
    with swarmmem.open(tmp_path, config={"enabled": True}, secrets=spy) as mem:
        spy.read = 0
        with pytest.raises(MemoryValidationError, match=message):
            mem.propose(**fields)
        assert spy.read == 0
        assert mem.store.list_proposals() == []

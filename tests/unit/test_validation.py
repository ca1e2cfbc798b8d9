"""Every rule of the write funnel rejects a failing input with its message."""

from __future__ import annotations

import attrs
import pytest
from factories import make_memory

from swarmmem.adapters.detectors.regex_secrets import RegexSecretDetector
from swarmmem.core.model.codec import record_from_dict, record_to_dict
from swarmmem.core.model.errors import MemoryPiiRejectedError, MemoryValidationError
from swarmmem.core.model.ids import content_hash, memory_id
from swarmmem.core.model.records import MemoryScope, MemorySource, OutcomeEntry
from swarmmem.core.writes.validation import validate_promotable, validate_record
from swarmmem.ports.detectors import PiiFindings

SECRETS = RegexSecretDetector()


def rebuilt(record, **changes):
    """The record with changes applied and id/hash recomputed from scope, kind and text."""
    record = attrs.evolve(record, **changes)
    scope = record.scope.as_dict()
    return attrs.evolve(
        record,
        id=memory_id(scope, record.kind, record.text),
        content_hash=content_hash(scope, record.kind, record.text),
    )


def test_valid_record_passes() -> None:
    """A sourced durable fact in repository scope is accepted unchanged."""
    record = make_memory()
    assert validate_record(record, secrets=SECRETS) is record


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"text": "see ## Retrieved Swarm Memory above"}, "recall sentinel header"),
        ({"text": "marker bundle_20260101000000_abcdef12"}, "bundle marker prefix"),
        (
            {"scope": MemoryScope(type="run", run_id="r1")},
            "durable memories cannot use run or agent scope",
        ),
        (
            {"scope": MemoryScope(type="agent", agent_id="a")},
            "durable memories cannot use run or agent scope",
        ),
        ({"source": MemorySource(type="agent")}, "require source evidence"),
        (
            {"text": "token sk-abcdefghijklmnopqrstuvwxyz123456 leaked"},
            "durable memory contains a likely secret",
        ),
    ],
)
def test_rule_messages(changes: dict, message: str) -> None:
    """Each rule fails with the reference message."""
    with pytest.raises(MemoryValidationError, match=message):
        validate_record(rebuilt(make_memory(), **changes), secrets=SECRETS)


def test_evidence_kinds_need_source_at_any_stability() -> None:
    """api_finding/evidence/security_note need evidence even when not durable."""
    record = rebuilt(
        make_memory(kind="api_finding"), stability="session", source=MemorySource(type="agent")
    )
    with pytest.raises(MemoryValidationError, match="api_finding memories require source evidence"):
        validate_record(record, secrets=SECRETS)


def test_content_hash_and_id_must_match() -> None:
    """Tampered hashes or ids are refused."""
    record = make_memory()
    with pytest.raises(MemoryValidationError, match="contentHash does not match"):
        validate_record(attrs.evolve(record, content_hash="0" * 64))
    with pytest.raises(MemoryValidationError, match="id does not match memory content"):
        validate_record(attrs.evolve(record, id="mem_0000000000000000"))


def test_scratch_must_expire_within_seven_days() -> None:
    """Scratch without expiry or with a longer one is refused."""
    record = make_memory(kind="scratch")
    assert validate_record(record)
    with pytest.raises(MemoryValidationError, match="scratch memories must expire within 7 days"):
        validate_record(attrs.evolve(record, expires_at=None))
    with pytest.raises(MemoryValidationError, match="scratch memories must expire within 7 days"):
        validate_record(attrs.evolve(record, expires_at="2026-01-09T00:00:00.000Z"))


def test_secret_in_correction_is_refused() -> None:
    """Outcome corrections of durable memories are checked for secrets too."""
    record = attrs.evolve(
        make_memory(),
        outcomes=(
            OutcomeEntry(
                outcome="corrected",
                at="2026-01-02T00:00:00.000Z",
                correction="use ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            ),
        ),
        metadata={"outcomeEventIds": ["e1"]},
    )
    with pytest.raises(MemoryValidationError, match="likely secret"):
        validate_record(record, secrets=SECRETS)


def test_secret_check_can_be_disabled() -> None:
    """rejectDurableSecrets=false lets the record through."""
    record = rebuilt(make_memory(), text="token sk-abcdefghijklmnopqrstuvwxyz123456 leaked")
    assert validate_record(record, secrets=SECRETS, reject_durable_secrets=False)


def test_pii_threshold_is_strict() -> None:
    """Only a score strictly above the threshold rejects, with types in the message."""
    record = make_memory()
    at_threshold = PiiFindings(score=0.7, counts_by_type={"phone": 1})
    above = PiiFindings(score=0.9, counts_by_type={"email": 1})
    assert validate_record(record, pii=at_threshold, reject_durable_pii=True)
    with pytest.raises(
        MemoryPiiRejectedError, match=r"score 0\.90 \(types: emailx1\) exceeded threshold 0\.70"
    ):
        validate_record(record, pii=above, reject_durable_pii=True)


def test_outcome_metadata_alignment() -> None:
    """outcomeEventIds must align with outcomes; outcomeGeneration must be a short string."""
    with pytest.raises(MemoryValidationError, match="outcomeEventIds must align"):
        validate_record(make_memory(metadata={"outcomeEventIds": ["x"]}))
    with pytest.raises(MemoryValidationError, match="outcomeGeneration"):
        validate_record(make_memory(metadata={"outcomeGeneration": ""}))


def test_promotion_rules() -> None:
    """Curator promotions must be durable, of a durable kind and under 500 characters."""
    with pytest.raises(MemoryValidationError, match="must be durable facts"):
        validate_promotable(make_memory(kind="scratch"))
    with pytest.raises(MemoryValidationError, match="durable fact kinds"):
        validate_promotable(make_memory(kind="evidence"))
    with pytest.raises(MemoryValidationError, match="under 500 characters"):
        validate_promotable(make_memory(text="x " * 300))


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"kind": "nonsense"}, "kind: must be one of"),
        ({"confidence": 1.5}, "confidence: must be a number between 0 and 1"),
        ({"stability": "forever"}, "stability: must be one of"),
        ({"tags": ["x" * 65]}, "tags: items must be strings of 1..64"),
        ({"text": ""}, "text: must be a string of 1..2000"),
        ({"createdAt": "yesterday"}, "created_at: must be an ISO-8601 datetime"),
        ({"surprise": 1}, "unknown key"),
    ],
)
def test_schema_rejects_bad_fields(patch: dict, message: str) -> None:
    """Strict parsing names the offending field."""
    data = record_to_dict(make_memory())
    data.update(patch)
    with pytest.raises(MemoryValidationError, match=message):
        record_from_dict(data)


def test_codec_roundtrip() -> None:
    """A record survives dict conversion unchanged."""
    record = make_memory(metadata={"files": ["src/a.py"]})
    assert record_from_dict(record_to_dict(record)) == record

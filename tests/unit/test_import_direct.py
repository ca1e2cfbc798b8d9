"""The direct path of a bulk import (a plain row written in its stored form without building
its record) accepts only rows that the full completion accepts, and gives exactly what it
gives: the stored JSON (byte for byte), the scope key, the provenance columns and, when read,
the record itself. Every other row falls back to the full completion, which refuses it with
the same reason as before."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

import pytest
from factories import REPO_SCOPE, at
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import any_text

from swarmmem.adapters.detectors.regex_secrets import RegexSecretDetector
from swarmmem.adapters.storage.memory import InMemoryStore
from swarmmem.core.model.codec import record_to_dict
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.ids import content_hash, memory_id
from swarmmem.core.model.records import MemoryScope
from swarmmem.core.model.semantics import dumps, stored_form, stored_row
from swarmmem.core.writes.importing import _Completer, complete_record, import_records

NOW = dt.datetime(2026, 2, 1, tzinfo=dt.timezone.utc)
SECRETS = RegexSecretDetector()
OTHER_SCOPE = {"type": "workspace", "workspaceId": "team"}
REFUSED = (MemoryValidationError, TypeError, ValueError)


def completer(allowed: frozenset[str] | None = None) -> _Completer:
    return _Completer(now=NOW, repo_scope=REPO_SCOPE, secrets=SECRETS, allowed_keys=allowed)


def full(fact: str = "retries back off twice", **changes: Any) -> dict[str, Any]:
    """A complete, valid row of the text ``fact`` in the reference shape (with ``changes``
    applied; ``None`` removes a key)."""
    scope = REPO_SCOPE.as_dict()
    text = fact
    row: dict[str, Any] = {
        "id": memory_id(scope, "project_fact", text),
        "scope": scope,
        "kind": "project_fact",
        "text": text,
        "tags": ["retry"],
        "confidence": 0.8,
        "stability": "durable",
        "source": {"type": "file", "filePath": "src/retry.py"},
        "createdAt": at(0),
        "updatedAt": at(5),
        "contentHash": content_hash(scope, "project_fact", text),
        "metadata": {},
    }
    for key, value in changes.items():
        if value is None:
            row.pop(key, None)
        else:
            row[key] = value
    return row


def rows() -> list[Any]:
    """Valid rows of every shape the direct path takes, and rows that differ from them in
    one way each (valid or not)."""
    out: list[Any] = [
        full(),
        full(id=None, contentHash=None),  # derived
        full(createdAt=None, updatedAt=None, confidence=None, stability=None, tags=None),
        full(source=None),  # manual source, ref "import"
        full(scope=None),  # the repository scope
        {"kind": "project_fact", "text": "minimal row", "source": {"type": "file", "ref": "x"}},
        full(confidence=1),
        full(confidence=0),
        full(confidence=True),
        full(confidence=float("nan")),
        full(confidence=1.5),
        full(confidence="0.5"),
        full(tags=("a", "b")),
        full(tags=[]),
        full(tags=["x" * 64]),
        full(tags=["x" * 65]),
        full(tags=[""]),
        full(tags=["t"] * 32),
        full(tags=["t"] * 33),
        full(tags="retry"),
        full(tags=[1]),
        full('quotes " and \\ and \n newline, tab\t, \x01 control, \u2028 separator'),
        full("non-ASCII: caf\u00e9, \u4e2d\u6587, emoji \U0001f600, zero\u200bwidth"),
        full("  spaced   out \t text  "),
        full("x" * 2000),
        full("x" * 2001),
        full("## Retrieved Swarm Memory in the text"),
        full("mentions bundle_20260101 marker"),
        full(tags=["caf\u00e9", 'q"uote', "back\\slash", "\U0001f600"]),
        full(metadata={"symbol": "retry_loop", "files": ["a.py"], "nested": {"k": [1, 2.5]}}),
        full(metadata={"deleted": True, "qValue": 0.9}),
        full(metadata={"qValue": 7}),
        full(metadata={"outcomeEventIds": []}),
        full(metadata={"outcomeGeneration": "g1"}),
        full(metadata=None),
        full(metadata=[1]),
        full(metadata={"not JSON": {1, 2}}),  # taken by the full path (its write fails)
        full(lastAccessedAt=at(9), expiresAt=at(60), qValue=0.25, supersededBy="mem_x"),
        full(lastAccessedAt="yesterday"),
        full(expiresAt=None),
        full(qValue=1.5),
        full(qValue=1),
        full(supersededBy=""),
        full(supersededBy=3),
        full(
            cohortId="c1",
            producerSessionId="s1",
            producerAgentRole="reviewer",
            redactionPolicyVersion=2,
            schemaVersion=1.5,
            providerVersion="p",
            sourceRevision="abc",
        ),
        full(schemaVersion=True, redactionPolicyVersion=float("inf")),
        full(schemaVersion=[1]),
        full(producerAgentRole=5),
        full(sourceTaskId="", embeddingModelVersion=""),
        full(sourceTaskId="task-1", embeddingModelVersion="m1", supersedesReason="why"),
        full(validFrom=at(1)),
        full(validFrom="not a time"),
        full(sourceTaskId=4),
        full(supersedesReason=["x"]),
        full(lastAccessedAt=None, expiresAt=None, qValue=None, supersededBy=None),
        {**full(), "lastAccessedAt": None, "qValue": None, "cohortId": None},
        full(kind="scratch", stability=None, id=None, contentHash=None, source=None),
        full(kind="scratch", id=None, contentHash=None, expiresAt=at(days=3)),
        full(kind="scratch", id=None, contentHash=None, expiresAt=at(days=8)),
        full(kind="scratch", id=None, contentHash=None, createdAt=at(0)),
        full(kind="todo", id=None, contentHash=None, source={"type": "manual"}),
        full(kind="api_finding", id=None, contentHash=None, source={"type": "manual"}),
        full(kind="security_note", id=None, contentHash=None, stability="session"),
        full(kind="evidence", id=None, contentHash=None, source={"type": "web", "url": "u"}),
        full(kind="nonsense", id=None, contentHash=None),
        full(kind=5),
        full(text=None),
        full(text=""),
        full(stability="forever"),
        full(stability="session"),
        full(scope={"type": "run", "runId": "r1"}, id=None, contentHash=None),
        full(scope={"type": "run", "runId": "r1"}, id=None, contentHash=None, stability="session"),
        full(scope=OTHER_SCOPE, id=None, contentHash=None),
        full(scope={"type": "repository", "repoId": "swarmmem-tests", "extra": "x"}),
        full(scope={"type": "galaxy"}),
        full(scope={"repoId": "x"}),
        full(scope="repository"),
        full(scope={"type": "repository", "repoId": 5}),
        full(source={"type": "file", "filePath": "a.py", "commitSha": "abc", "createdBy": "me"}),
        full(source={"type": "teleport"}),
        full(source={"type": "file", "oops": "x"}),
        full(source={"type": "file", "ref": 3}),
        full(source=["file"]),
        full(id="mem_0000000000000000"),
        full(id=5),
        full(contentHash="0" * 64),
        full(contentHash=None, id="mem_0000000000000000"),
        full(createdAt="2026-13-01T00:00:00Z"),
        full(createdAt="2026-01-01T00:00:00+02:00", updatedAt="2026-01-01T00:00:00.5Z"),
        full(createdAt=None, updatedAt=at(3)),
        full(updatedAt=17),
        full(anchors=[{"file": "a.py"}]),
        full(outcomes=[]),
        full(supersedes=["mem_1"]),
        full(relations=[]),
        full(unknownKey=1),
        {**full(), 3: "non-string key"},
        "not an object",
        ["a", "list"],
    ]
    return out


def checked_direct(comp: _Completer, raw: Any) -> Any:
    """What the import does with a row after its text and secret checks: the direct row,
    or ``None``; raises what the text check raises."""
    comp.check_texts(raw)
    return comp.direct(raw)


def assert_same_as_full(comp: _Completer, raw: Any) -> bool:
    """The direct row (if any) equals what the full completion stores; True when the row
    went the direct way."""
    try:
        direct = checked_direct(comp, raw)
    except REFUSED:
        return False
    try:
        record = comp.finish(copy.deepcopy(raw))
    except REFUSED:
        assert direct is None, raw  # never accept what the full path refuses
        return False
    if direct is None:
        return False
    expected = stored_row(stored_form(record, None))
    assert direct.id == expected.id
    assert direct.scope_key == expected.scope_key
    assert direct.data == expected.data
    assert list(direct.data) == list(expected.data)  # the stored key order
    assert direct.json == dumps(expected.data)  # byte for byte
    provenance = ("source_task_id", "embedding_model_version", "valid_from", "supersedes_reason")
    for name in provenance:
        assert getattr(direct, name) == getattr(expected, name), name
    # by repr: a NaN field (a float where text belongs) is never == itself
    assert direct.record == record or repr(direct.record) == repr(record)
    return True


def test_direct_rows_equal_the_full_completion() -> None:
    comp = completer()
    given = rows()
    went = [assert_same_as_full(comp, raw) for raw in given]
    # the plain shapes go direct; the checks did not just refuse everything
    assert went[:6] == [True] * 6
    assert 30 <= sum(went) < len(given) - 30


def test_a_scope_outside_the_allowed_ones_goes_to_the_full_path() -> None:
    comp = completer(frozenset({REPO_SCOPE.key}))
    assert checked_direct(comp, full(scope=OTHER_SCOPE, id=None, contentHash=None)) is None
    assert checked_direct(comp, full()) is not None


@pytest.mark.parametrize("detector", [SECRETS, None])
def test_import_of_varied_rows_refuses_and_writes_what_row_by_row_completion_does(
    detector: Any,
) -> None:
    secrets = detector or RegexSecretDetector()
    given = rows()
    store = InMemoryStore()
    result, written = import_records(
        store, given, now=NOW, repo_scope=REPO_SCOPE, secrets=secrets, reject_durable_secrets=True
    )
    expected_written, expected_refused = [], []
    for index, raw in enumerate(given):
        try:
            record = complete_record(
                raw, now=NOW, repo_scope=REPO_SCOPE, secrets=secrets, reject_durable_secrets=True
            )
        except REFUSED as exc:
            expected_refused.append((index, str(exc)))
        else:
            expected_written.append(record)
    assert list(result.refused) == expected_refused
    assert list(written) == expected_written
    assert written[-1] == expected_written[-1] and written[:2] == expected_written[:2]
    ids = {r.id for r in expected_written}
    assert store.count() == len(ids) and set(store.get_many(sorted(ids))) == ids


_TEXT = any_text(max_size=30)
_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=True, allow_infinity=True),
    _TEXT,
    st.sampled_from([at(0), at(7), "2026-01-01T00:00:00+01:00", "mem_1", "durable", "session"]),
    st.lists(_TEXT, max_size=3),
    st.dictionaries(_TEXT, _TEXT, max_size=2),
)
_KEYS = st.sampled_from(
    [
        "confidence",
        "stability",
        "tags",
        "createdAt",
        "updatedAt",
        "expiresAt",
        "lastAccessedAt",
        "qValue",
        "supersededBy",
        "metadata",
        "cohortId",
        "schemaVersion",
        "producerAgentRole",
        "sourceTaskId",
        "embeddingModelVersion",
        "validFrom",
        "supersedesReason",
        "text",
        "kind",
        "id",
        "contentHash",
    ]
)


@settings(max_examples=600, deadline=None)
@given(
    changes=st.dictionaries(_KEYS, _VALUES, max_size=4),
    text=_TEXT.filter(lambda t: t.strip() != ""),
    kind=st.sampled_from(["project_fact", "scratch", "todo", "evidence", "api_finding"]),
    scope=st.sampled_from([None, REPO_SCOPE, MemoryScope(type="run", run_id="r")]),
)
def test_direct_rows_equal_the_full_completion_for_generated_rows(
    changes: dict[str, Any], text: str, kind: str, scope: MemoryScope | None
) -> None:
    raw: dict[str, Any] = {"kind": kind, "text": text, "source": {"type": "file", "ref": "r"}}
    if scope is not None:
        raw["scope"] = scope.as_dict()
    raw.update(changes)
    assert_same_as_full(completer(), raw)
    # the same row as the full completion writes it (every key present) goes direct
    try:
        record = complete_record(
            raw, now=NOW, repo_scope=REPO_SCOPE, secrets=SECRETS, reject_durable_secrets=True
        )
    except REFUSED:
        return
    again = record_to_dict(record)
    went = assert_same_as_full(completer(), again)
    plain = all(type(again.get(key)) in (str, type(None)) for key in _UNCHECKED)
    assert (
        went or not plain or bool({"outcomeEventIds", "outcomeGeneration"} & set(record.metadata))
    )


#: record keys without a validator of their own, which the direct path takes as text only
_UNCHECKED = (
    "cohortId",
    "schemaVersion",
    "producerAgentRole",
    "sourceTaskId",
    "embeddingModelVersion",
    "supersedesReason",
)

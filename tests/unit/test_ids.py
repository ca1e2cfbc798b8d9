"""Ids, hashes, normalisation and timestamps match the reference definitions."""

from __future__ import annotations

import datetime as dt
import hashlib

import pytest

from swarmmem.core.model.formatting import to_fixed
from swarmmem.core.model.ids import (
    bundle_id,
    content_hash,
    estimate_tokens,
    memory_id,
    normalize_text,
    parse_iso,
    proposal_id,
    stable_id,
    stable_scope_key,
    to_iso,
)

REPO = {"type": "repository", "repoId": "opencode-swarm", "repoRoot": "/x/y"}


def test_scope_key_for_repository_ignores_root() -> None:
    """Repository scope keys use only repoId, so two checkouts share memories."""
    assert stable_scope_key(REPO) == '{"type":"repository","repoId":"opencode-swarm"}'


def test_scope_key_generic_order_and_truthiness() -> None:
    """Generic scopes keep the documented key order and drop empty values."""
    scope = {"agentId": "coder", "type": "agent", "runId": "r1", "userId": ""}
    assert stable_scope_key(scope) == '{"type":"agent","runId":"r1","agentId":"coder"}'


def test_scope_key_cohort_uses_only_cohort_id() -> None:
    """Cohort scope keys carry the cohort id alone."""
    assert stable_scope_key({"type": "cohort", "cohortId": "c", "repoId": "r"}) == (
        '{"type":"cohort","cohortId":"c"}'
    )


def test_content_hash_matches_definition() -> None:
    """The hash covers scope key, kind and lower-cased normalised text."""
    expected = hashlib.sha256(
        b'{"type":"repository","repoId":"opencode-swarm"}\nrepo_convention\nuse bun for tests.'
    ).hexdigest()
    assert content_hash(REPO, "repo_convention", "  Use   BUN for\ttests. ") == expected
    assert memory_id(REPO, "repo_convention", "use bun for tests.") == "mem_" + expected[:16]


def test_same_fact_is_same_memory() -> None:
    """Case and whitespace do not change a memory's identity."""
    assert memory_id(REPO, "project_fact", "A  b") == memory_id(REPO, "project_fact", "a b")
    assert memory_id(REPO, "project_fact", "a b") != memory_id(REPO, "code_pattern", "a b")


def test_proposal_id_definition() -> None:
    """prop_ + 16 hex of sha256(createdAt, proposer, normalised text)."""
    digest = hashlib.sha256(b"2026-05-26T12:00:00.000Z\ncoder\nsome text").hexdigest()
    assert (
        proposal_id("2026-05-26T12:00:00.000Z", "coder", " some   text ") == "prop_" + digest[:16]
    )


def test_bundle_id_shape() -> None:
    """bundle_<14 digits>_<8 hex> derived from the timestamp and query."""
    stamp = "2026-05-26T12:00:00.000Z"
    digest = hashlib.sha256(f"{stamp}\nquery".encode()).hexdigest()
    assert bundle_id("query", stamp) == f"bundle_20260526120000_{digest[:8]}"


def test_stable_id_is_case_insensitive() -> None:
    """Workspace and repository ids ignore case."""
    assert stable_id("Repo") == stable_id("repo") == hashlib.sha256(b"repo").hexdigest()[:16]


def test_iso_roundtrip_like_javascript() -> None:
    """Timestamps have millisecond precision and a Z suffix."""
    moment = dt.datetime(2026, 5, 26, 12, 0, 0, 123456, tzinfo=dt.timezone.utc)
    assert to_iso(moment) == "2026-05-26T12:00:00.123Z"
    assert parse_iso("2026-05-26T12:00:00.123Z") == moment.replace(microsecond=123000)
    assert parse_iso("not a date") is None


def test_normalize_text() -> None:
    """Whitespace runs collapse to one space; ends are trimmed."""
    assert normalize_text("\n a \t b  ") == "a b"


@pytest.mark.parametrize(
    ("text", "tokens"), [("", 0), ("abc", 1), ("a" * 100, 33), ("a" * 101, 34), ("😀", 1)]
)
def test_estimate_tokens(text: str, tokens: int) -> None:
    """ceil(UTF-16 length * 0.33), as the reference estimates."""
    assert estimate_tokens(text) == tokens


@pytest.mark.parametrize(
    ("value", "digits", "text"),
    [(0.125, 2, "0.13"), (0.375, 2, "0.38"), (1.005, 2, "1.00"), (0.5, 0, "1"), (-0.0, 2, "0.00")],
)
def test_to_fixed_rounds_like_javascript(value: float, digits: int, text: str) -> None:
    """Half-way cases on the exact binary value round away from zero."""
    assert to_fixed(value, digits) == text

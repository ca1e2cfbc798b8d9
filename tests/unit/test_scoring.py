"""The nine-factor scorer, FTS query building, prompt block and recall slicing."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from factories import OTHER_SCOPE, REPO_SCOPE, make_memory

from swarmmem.adapters.storage.memory import InMemoryStore
from swarmmem.core.model.records import MemorySource, RecallItem, RecallRequest
from swarmmem.core.model.roles import normalize_role, profile_for
from swarmmem.core.recall.fts import FTS_BONUS, build_fts_query, fts_terms
from swarmmem.core.recall.lexical import slice_items
from swarmmem.core.recall.pipeline import run_recall
from swarmmem.core.recall.prompt import already_injected, build_prompt_block, header
from swarmmem.core.recall.scoring import LearningPolicy, rank_records

NOW = "2026-01-05T00:00:00.000Z"
NOW_MS = 1767571200000.0


def score_records(
    request: RecallRequest, records: list[Any], **options: Any
) -> tuple[list[RecallItem], dict[str, int]]:
    """The kept items (best first) and the counts of ``rank_records``, every item built."""
    ranking = rank_records(request, records, **options)
    return ranking.items(), ranking.diagnostics


def request(**kw):
    """A manual request in the repository scope."""
    base = {"query": "pytest fixtures", "scopes": (REPO_SCOPE,), "min_score": 0.0}
    base.update(kw)
    return RecallRequest(**base)


def test_weights_and_boosts_give_the_documented_sum() -> None:
    """A full-overlap record scores the weighted sum of its factors exactly."""
    record = make_memory(
        "pytest fixtures",
        kind="test_pattern",
        tags=("pytest", "fixtures"),
        confidence=1.0,
        source=MemorySource(type="file", file_path="pytest/fixtures.py"),
        metadata={"symbols": ["pytest", "fixtures"]},
    )
    items, _ = score_records(
        request(task="pytest fixtures", agent_role="qa", kinds=("test_pattern",)),
        [record],
        now_ms=NOW_MS,
    )
    expected = 0.38 + 0.16 + 0.12 + 0.08 + 0.08 + 0.12 * 0.8 + 0.06 + 0.05 + 0.08
    assert items[0].score == pytest.approx(expected, abs=1e-12)


def test_prefilters_count_and_exclude() -> None:
    """Expired, superseded, deleted, out-of-scope and wrong-kind records are filtered."""
    records = [
        make_memory("pytest a", expires_at="2026-01-02T00:00:00.000Z"),
        attrs.evolve(make_memory("pytest b"), superseded_by="mem_0000000000000000"),
        make_memory("pytest c", metadata={"deleted": True}),
        make_memory("pytest d", scope=OTHER_SCOPE),
        make_memory("pytest e", kind="code_pattern"),
        make_memory("pytest f"),
    ]
    items, diag = score_records(request(kinds=("project_fact",)), records, now_ms=NOW_MS)
    assert [it.record.text for it in items] == ["pytest f"]
    assert diag["preScoredFilteredCount"] == 5


def test_low_q_is_suppressed_unless_asked() -> None:
    """Q below the suppression threshold hides a memory unless include_low_q."""
    low = make_memory("pytest low", metadata={"qValue": 0.1})
    items, diag = score_records(request(), [low], now_ms=NOW_MS)
    assert items == [] and diag["suppressedLowQCount"] == 1
    items, _ = score_records(request(include_low_q=True), [low], now_ms=NOW_MS)
    assert len(items) == 1


def test_q_boost_changes_score_not_threshold() -> None:
    """The Q term moves the score but min_score applies to the base score."""
    high = make_memory("pytest fixtures", metadata={"qValue": 1.0})
    items, _ = score_records(request(), [high], now_ms=NOW_MS)
    assert items[0].score == pytest.approx(items[0].base_score + 0.05)
    assert "qvalue=1.00" in items[0].reason
    items, diag = score_records(
        request(min_score=items[0].base_score + 0.01), [high], now_ms=NOW_MS
    )
    assert items == [] and diag["belowThresholdCount"] == 1


def test_injection_requires_a_query_signal() -> None:
    """In injection mode a record with no overlap is dropped as no_signal."""
    unrelated = make_memory("database migrations are numbered")
    items, diag = score_records(
        request(mode="injection", require_query_signal=True), [unrelated], now_ms=NOW_MS
    )
    assert items == [] and diag["noSignalCount"] == 1
    items, _ = score_records(request(mode="manual"), [unrelated], now_ms=NOW_MS)
    assert len(items) == 1


def test_sort_is_score_then_id() -> None:
    """Equal scores are ordered by id ascending."""
    a, b = make_memory("alpha"), make_memory("beta")
    items, _ = score_records(request(query="zzz"), [b, a], now_ms=NOW_MS)
    assert [it.record.id for it in items] == sorted([a.id, b.id])


def test_role_normalisation() -> None:
    """Aliases and prefixes resolve; unknown roles recall like a coder."""
    assert normalize_role("reviewer") == "qa"
    assert normalize_role("critic_drift_verifier") == "security"
    assert normalize_role("myswarm_curator_phase") == "curator"
    assert normalize_role("docs") == "sme"
    assert normalize_role("security-engineer") == "coder"
    assert normalize_role(None) == "architect"
    assert profile_for("curator").max_items == 20


def test_fts_query_building() -> None:
    """Stop words and short terms drop, digits stay, terms are quoted and capped at 40."""
    assert fts_terms("How is the API v2 at 42?", None, "manual") == ["api", "42"]
    assert build_fts_query("foo-bar baz", None, "manual") == '"foo" OR "bar" OR "baz"'
    assert build_fts_query("a an the", None, "manual") is None
    many = " ".join(f"term{i}" for i in range(60))
    assert len(fts_terms(many, None, "manual")) == 40
    assert fts_terms("query words", "deploy steps", "injection")[:2] == ["deploy", "steps"]


def test_fts_bonus_and_reason() -> None:
    """BM25 order adds up to 0.08 and notes the rank."""
    a, b = make_memory("pytest one"), make_memory("pytest two")
    ranking = rank_records(request(), [a, b], now_ms=NOW_MS)
    ranking.add_fts_bonus({b.id: 0, a.id: 1}, FTS_BONUS)
    ranked = ranking.items()
    assert ranked[0].record.id == b.id
    assert ranked[0].reason.endswith("fts_rank=1")


def test_prompt_block_budget_stops_at_first_overflow() -> None:
    """Items are added in order and the first that does not fit ends the block (no skipping)."""
    records = [make_memory("short fact"), make_memory("long " * 300), make_memory("tiny")]
    items, _ = score_records(request(query="fact long tiny"), records, now_ms=NOW_MS)
    by_text = {it.record.text.split()[0]: it for it in items}
    block, tokens, included = build_prompt_block(
        "bundle_20260105000000_abcdef12",
        [by_text["tiny"], by_text["long"], by_text["short"]],
        generated_at=NOW,
        token_budget=200,
        redact=lambda t: t,
    )
    assert [it.record.text for it in included] == ["tiny"]
    _, _, all_items = build_prompt_block(
        "bundle_20260105000000_abcdef12",
        [by_text["tiny"], by_text["short"]],
        generated_at=NOW,
        token_budget=200,
        redact=lambda t: t,
    )
    assert len(all_items) == 2
    assert block.startswith(header("bundle_20260105000000_abcdef12"))
    assert "- [" in block and "Source: file src/app/main.py" in block
    assert tokens <= 150
    assert already_injected(block)


def test_prompt_block_redacts_secrets() -> None:
    """Recall output passes memory text through the redactor."""
    items, _ = score_records(request(), [make_memory("pytest fixtures")], now_ms=NOW_MS)
    block, _, _ = build_prompt_block(
        "bundle_20260105000000_abcdef12",
        items,
        generated_at=NOW,
        token_budget=1000,
        redact=lambda t: t.replace("pytest", "[R]"),
    )
    assert "[R] fixtures" in block


def test_slice_keeps_explored_items_additive() -> None:
    """Exploration adds beyond max_items."""
    items, _ = score_records(
        request(), [make_memory(f"pytest {i}") for i in range(5)], now_ms=NOW_MS
    )
    explored = attrs.evolve(items[-1], explored=True)
    sliced = slice_items([*items[:4], explored], 2)
    assert len(sliced) == 3 and sliced[-1].explored


def test_exploration_is_off_by_default_and_injectable() -> None:
    """With rate 0 nothing is explored; with rate 1 the best suppressed item is added."""
    low = make_memory("pytest low", metadata={"qValue": 0.05})
    items, diag = score_records(request(), [low], now_ms=NOW_MS)
    assert items == [] and diag["exploredCount"] == 0
    items, diag = score_records(
        request(),
        [low],
        now_ms=NOW_MS,
        policy=LearningPolicy(exploration_rate=1.0),
        rng=lambda: 0.5,
    )
    assert diag["exploredCount"] == 1 and items[0].explored


def test_provider_recall_related_expansion() -> None:
    """Merged memories fill unused slots, marked with their relation."""
    store = InMemoryStore()
    a, b = (
        make_memory("pytest fixtures live in conftest"),
        make_memory("database url comes from env"),
    )
    store.upsert(a)
    store.upsert(b)
    store.related_ids = lambda mid: [b.id] if mid == a.id else []  # type: ignore[method-assign]
    result = run_recall(
        store,
        request(mode="injection", require_query_signal=True, min_score=0.25, max_items=3),
        now=NOW,
    )[0]
    ids = [it.record.id for it in result.items]
    assert ids == [a.id, b.id]
    assert result.items[1].related_from == a.id
    assert "related_from=" in result.items[1].reason


def test_the_named_reference_path_scores_as_the_kernel_where_its_rule_changes_nothing() -> None:
    """A query naming files or symbols scores its candidates in Python (the rule reads their
    records); a row the rule leaves alone gets exactly the kernel's base and score."""
    from swarmmem.core.recall.scoring import _BatchScorer, derived

    records = [
        make_memory(
            f"pytest fixtures note {n}",
            tags=("pytest",) if n % 2 else (),
            source=MemorySource(type="file", file_path=f"tests/test_{n}.py"),
            updated_at=f"2026-01-0{1 + n % 4}T00:00:00.000Z",
        )
        for n in range(6)
    ]
    fields = [derived(r) for r in records]
    relevance = {f.id: 0.1 * n for n, f in enumerate(fields[:5])}
    scorer = _BatchScorer(
        request(query="pytest fixtures notes"), LearningPolicy(), None, None, relevance
    )
    times = [f.updated_ms for f in fields]
    scorer.recency = (max(times) + 3 * 86_400_000.0, 2 * 86_400_000.0)  # now, half-life
    assert scorer.named is not None and not scorer.named.active
    assert scorer.recency is not None
    for recent in (True, False):
        recency = scorer.recency if recent else None
        by_kernel = scorer.score(fields, recent=recent)
        in_python = scorer._with_named(fields, scorer._rows(fields), scorer.named, recency)
        assert by_kernel == in_python
        assert len({s.base for s in by_kernel}) > 1


def _equal_matches(*ages_days: float) -> list[Any]:
    """Memories with the same words, each last written ``ages_days`` before ``NOW``."""
    import datetime as dt

    now = dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)
    out = []
    for n, age in enumerate(ages_days):
        at = (now - dt.timedelta(days=age)).isoformat(timespec="milliseconds")
        out.append(make_memory(f"pytest fixtures rule {n}", updated_at=at.replace("+00:00", "Z")))
    return out


def test_recency_is_read_from_age_with_the_configured_half_life() -> None:
    """The recency feature is ``0.5 ** (age / half-life)`` of each memory's own age, shown in
    its reason; memories written 75 seconds apart get (nearly) the same recency, whatever
    the other candidates' ages."""
    fresh, month, year = _equal_matches(0, 30, 365)
    relevance = {r.id: 0.5 for r in (fresh, month, year)}
    ranking = rank_records(request(), [fresh, month, year], now_ms=NOW_MS, text_relevance=relevance)
    reasons = {item.record.id: item.reason for item in ranking.items()}
    assert [item.record.id for item in ranking.items()] == [fresh.id, month.id, year.id]
    assert reasons[fresh.id].endswith("recency=1.00")
    assert reasons[month.id].endswith("recency=0.50")  # the default half-life: 30 days
    assert reasons[year.id].endswith("recency=0.00")
    half = request(recency_half_life_days=365.0)
    ranking = rank_records(half, [fresh, year], now_ms=NOW_MS, text_relevance=relevance)
    assert ranking.items()[1].reason.endswith("recency=0.50")

    a, b = _equal_matches(2, 2 + 75 / 86_400)
    relevance = {a.id: 0.5, b.id: 0.5}
    scores = {
        i.record.id: i.score
        for i in rank_records(request(), [a, b], now_ms=NOW_MS, text_relevance=relevance).items()
    }
    assert 0 < scores[a.id] - scores[b.id] < 1e-5  # the later first, by a hair


def test_the_reference_path_has_no_recency() -> None:
    """Without a text relevance (the reference profile's raw sum) recency neither moves the
    score nor shows in the reason."""
    old, new = _equal_matches(365, 0)
    items = rank_records(request(), [old, new], now_ms=NOW_MS).items()
    assert {i.score for i in items} == {items[0].score}
    assert not any("recency" in i.reason for i in items)

"""Admission: relevance evidence decides what is returned, the ranking only orders it."""

from __future__ import annotations

import pytest
from factories import REPO_SCOPE, make_memory

from swarmmem.core.model.records import RecallRequest
from swarmmem.core.recall.admission import (
    MODEL,
    SURE,
    Candidate,
    DenseRule,
    QueryEvidence,
    admit,
    relevance,
    term_weight,
)
from swarmmem.core.recall.bm25 import record_fields
from swarmmem.core.recall.hybrid import CosineProfile

ANSI = "FORCE_COLOR set to an empty string disables ANSI colour codes in the console output."
USE = "Use the run command to get a test report you can add to the release notes."
OTHER = "Database migrations are managed with alembic; run alembic upgrade head after pulling."


def candidates(*texts: str, named: tuple[bool, ...] = ()) -> list[Candidate]:
    records = [make_memory(text) for text in texts]
    flags = named or (False,) * len(records)
    return [Candidate(r.id, record_fields(r), flag) for r, flag in zip(records, flags, strict=True)]


def request(query: str, mode: str = "manual") -> RecallRequest:
    task = query if mode == "injection" else None
    return RecallRequest(query=query, task=task, mode=mode, scopes=(REPO_SCOPE,))


def test_common_words_weigh_little_and_unknown_ones_most() -> None:
    common = [term_weight(stem) for stem in ("us", "run", "get", "test", "add")]
    rare = [term_weight(stem) for stem in ("ansi", "alembic", "frozen")]
    assert max(common) < 0.5 < min(rare)
    assert term_weight("zzzunheardof") == 1.0
    assert all(0.0 < w <= 1.0 for w in common + rare)


def test_a_common_word_match_is_not_admitted_and_a_specific_one_is() -> None:
    pool = candidates(ANSI, USE, OTHER)
    query = QueryEvidence.of(request("why is ANSI colour missing when FORCE_COLOR is empty?"))
    verdicts = admit(pool, query, threshold=0.15, drop_off=0.7)
    assert [v.admitted for v in verdicts] == [True, False, False]
    assert verdicts[0].relevance > 0.5 > verdicts[1].relevance
    assert verdicts[0].evidence.coverage > 0.5 and verdicts[0].evidence.lead > 0


def test_a_question_about_nothing_stored_admits_nothing() -> None:
    pool = candidates(ANSI, USE, OTHER)
    query = QueryEvidence.of(request("how do I use docker to run a test database?", "injection"))
    assert not any(v.admitted for v in admit(pool, query, threshold=0.15, drop_off=0.7))


def test_threshold_zero_admits_all_and_drop_off_keeps_those_close_to_the_best() -> None:
    pool = candidates(ANSI, USE, OTHER)
    query = QueryEvidence.of(request("ANSI colour output of the run"))
    assert all(v.admitted for v in admit(pool, query, threshold=0.0, drop_off=0.0))
    verdicts = admit(pool, query, threshold=0.0, drop_off=0.7)
    best = max(v.relevance for v in verdicts)
    assert [v.admitted for v in verdicts] == [v.relevance >= 0.7 * best for v in verdicts]
    assert sum(v.admitted for v in verdicts) == 1


def test_a_lead_reads_the_rivals_past_the_judged_candidates() -> None:
    """Which memories are judged (the ranking's first few, near ties included) never moves a
    lead: a better match ranked past them still counts as the runner-up."""
    ansi, close, other = candidates(
        ANSI, "FORCE_COLOR empty disables ANSI colour in console output.", OTHER
    )
    query = QueryEvidence.of(request("ANSI colour with FORCE_COLOR empty"))
    together = query.judge([ansi, close, other])
    judged_first = query.judge([ansi, other], rivals=[close])
    assert judged_first[0].lead == together[0].lead
    assert judged_first[0].lead < query.judge([ansi, other])[0].lead  # the rival is a match
    verdicts = admit([ansi, other], query, threshold=0.0, drop_off=0.0, rivals=[close])
    assert [v.memory_id for v in verdicts] == [ansi.id, other.id]  # rivals get no verdict


def test_a_named_file_raises_relevance() -> None:
    plain, named = candidates(USE, USE + " ", named=(False, True))
    query = QueryEvidence.of(request("run the report"))
    first, second = admit([plain, named], query, threshold=0.0, drop_off=0.0)
    assert second.relevance > first.relevance
    assert MODEL[2] > 0  # the named coefficient


def dense_query(
    req: RecallRequest, cosines: dict[str, float], background: float = 0.1
) -> QueryEvidence:
    profile = CosineProfile(best=max(cosines.values()), background=background, spread=0.05, last=0)
    return QueryEvidence.of(req, cosines=cosines, profile=profile)


def injected(prompt: str, cosine_of: tuple[float, float], floor: float | None) -> list[bool]:
    """Which of ANSI and OTHER an injection for ``prompt`` admits, their cosines given, with
    the dense floor ``floor`` (gate 0.2)."""
    pool = candidates(ANSI, OTHER)
    cosines = {pool[0].id: cosine_of[0], pool[1].id: cosine_of[1]}
    rule = DenseRule(floor=floor, gate=0.2, injection=True)
    query = dense_query(request(prompt, "injection"), cosines)
    return [v.admitted for v in admit(pool, query, threshold=0.15, drop_off=0.7, dense=rule)]


def test_injection_takes_the_nearest_paraphrase_only_when_it_clears_the_floor() -> None:
    prompt = "why did the terminal go monochrome"
    assert injected(prompt, (0.55, 0.12), floor=0.4) == [True, False]
    assert injected(prompt, (0.55, 0.12), floor=0.6) == [False, False]
    assert injected(prompt, (0.55, 0.12), floor=None) == [False, False]


def test_injection_takes_no_paraphrase_when_a_word_match_is_admitted() -> None:
    assert injected("alembic upgrade head after pulling", (0.2, 0.7), floor=0.4) == [False, True]


@pytest.mark.parametrize(("stands", "admitted"), [(0.6, True), (0.4, False)])
def test_manual_recall_admits_dense_hits_standing_above_the_background(
    stands: float, admitted: bool
) -> None:
    pool = candidates(ANSI)
    cosine = 0.1 + stands * 0.05  # background 0.1, spread 0.05
    req = request("why did the terminal go monochrome")
    query = dense_query(req, {pool[0].id: cosine})
    rule = DenseRule(floor=0.0, gate=0.5, injection=False)
    (verdict,) = admit(pool, query, threshold=0.02, drop_off=0.0, dense=rule)
    assert verdict.admitted is admitted
    assert verdict.evidence.stands == pytest.approx(stands)


def test_relevance_is_the_logistic_model_of_the_features() -> None:
    pool = candidates(ANSI)
    (evidence,) = QueryEvidence.of(request("ANSI colour")).judge(pool)
    z = MODEL[0] + sum(w * f for w, f in zip(MODEL[1:], evidence.features(), strict=True))
    assert relevance(evidence) == pytest.approx(1.0 / (1.0 + 2.718281828459045**-z))


def test_injection_takes_the_nearest_weak_word_match_only_at_the_supported_cosine() -> None:
    """A memory the prompt's words reach too weakly to admit is injected when it is the
    prompt's nearest memory at the ``supported`` cosine or more."""
    pool = candidates(USE, OTHER)
    req = request("how do I use the tooling for a quick report", "injection")
    assert not any(
        v.admitted for v in admit(pool, QueryEvidence.of(req), threshold=0.15, drop_off=0.7)
    )
    for nearest, admitted in ((0.55, [True, False]), (0.45, [False, False])):
        query = dense_query(req, {pool[0].id: nearest, pool[1].id: 0.2})
        rule = DenseRule(floor=0.4, gate=0.2, injection=True, supported=0.5)
        verdicts = admit(pool, query, threshold=0.15, drop_off=0.7, dense=rule)
        assert [v.admitted for v in verdicts] == admitted, nearest
    off = DenseRule(floor=0.4, gate=0.2, injection=True, supported=None)
    query = dense_query(req, {pool[0].id: 0.9, pool[1].id: 0.2})
    assert not any(v.admitted for v in admit(pool, query, threshold=0.15, drop_off=0.7, dense=off))


@pytest.mark.parametrize(
    ("prompt", "both"),
    [
        ("console colour codes and a quick report", True),  # the word match: relevance 0.34
        ("ANSI colour codes in the console use a report", False),  # 0.77: sure
    ],
)
def test_the_nearest_weak_word_match_joins_a_word_match_that_is_not_sure(
    prompt: str, both: bool
) -> None:
    """Beside a memory admitted on its words, the prompt's nearest memory its words reach too
    weakly is injected at the ``supported`` cosine, unless the admitted one's relevance
    reaches ``SURE`` (more likely than not the one asked about)."""
    pool = candidates(ANSI, USE)
    req = request(prompt, "injection")
    words = admit(pool, QueryEvidence.of(req), threshold=0.15, drop_off=0.7)
    assert [v.admitted for v in words] == [True, False]
    assert (words[0].relevance < SURE) is both
    query = dense_query(req, {pool[0].id: 0.3, pool[1].id: 0.55})
    rule = DenseRule(floor=0.4, gate=0.2, injection=True, supported=0.5)
    verdicts = admit(pool, query, threshold=0.15, drop_off=0.7, dense=rule)
    assert [v.admitted for v in verdicts] == [True, both]


def test_an_injection_left_out_by_admission_says_below_threshold() -> None:
    """The run log's reason when candidates matched but none was admitted."""
    from swarmmem.adapters.storage.memory import InMemoryStore
    from swarmmem.core.recall.pipeline import PipelineSettings, run_recall
    from swarmmem.core.recall.service import injection_skip_reason

    store = InMemoryStore()
    store.upsert_many([make_memory(USE), make_memory(OTHER)])
    req = RecallRequest(
        query="how do I use docker to run a test database?",
        task="how do I use docker to run a test database?",
        mode="injection",
        scopes=(REPO_SCOPE,),
        min_relevance=1.0,  # no relevance reaches it
    )
    result, trace = run_recall(
        store, req, now="2026-01-05T00:00:00.000Z", config=PipelineSettings()
    )
    assert result.items == () and trace.admission and not any(v.admitted for v in trace.admission)
    assert result.diagnostics["notAdmittedCount"] == len(trace.admission)
    assert injection_skip_reason(result.diagnostics) == "below_threshold"
    assert injection_skip_reason({"candidateCount": 0, "returnedCount": 0}) == "no_results"

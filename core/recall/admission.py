"""Admission: whether a ranked memory is returned (or injected) at all.

Ranking orders memories by text relevance and by what is not relevance (scope, kind,
confidence, role, learned value, recency); one common word shared with a question is enough
for a memory to rank. Admission answers another question, "is this memory about what was
asked?", from relevance evidence alone (:class:`Evidence`):

* what the shared words say: each stemmed term of the question is weighed by how rare it is in
  writing about code in general (:func:`term_weight`, a background table of document
  frequencies over the standard library's docstrings, :mod:`.background_table`), so "use",
  "run" or "test" weigh little and "ansi" or "validator" much, whatever the store's size;
  ``coverage`` is the weighed share of the question's terms the memory holds, and ``lead`` how
  far it is ahead of (or behind) the best other candidate of the whole ranking on that share
  (not only of those judged, so near ties in the ranking never move it);
* the store's own statistics: the stemmed BM25 channel's text relevance (``text``);
* the files and symbols the question names that the memory cites (``named``).

A logistic model of these (:data:`MODEL`, fitted by ``benchmarks/quality/fit_admission.py``
on the code-memory dev sets, leave one set out) gives each candidate a relevance in ``[0, 1]``
that means the same in a store of 50 memories and of 1,650. A memory is admitted when its
relevance reaches the request's threshold (``recall.injection.minRelevance`` for an injection,
``recall.minRelevance`` for a manual recall) and at least the drop-off share of the best
candidate's; the admitted keep the ranking's order. Memories only the dense channel finds are
admitted by the :class:`DenseRule` on their cosine read against the question's own cosines
(the MiniLM cosine of a paraphrase is no stronger than that of an unrelated question in these
sets, so an injection takes at most the nearest, and only when nothing else qualifies).
An injection also takes the nearest memory by cosine when the question's words reach it,
too weakly to admit it, its cosine reaches ``supportedCosine`` and no memory was admitted with
a relevance of :data:`SURE` or more.
Nothing admitted is a normal answer: the question is about nothing stored.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import attrs

from swarmmem.core.model.records import RecallItem, RecallRequest
from swarmmem.core.recall import background_table
from swarmmem.core.recall.bm25 import document, match_terms, record_fields, stemmed_query
from swarmmem.core.recall.hybrid import CosineProfile, stands_out

#: the relevance from which an admitted memory is more likely than not the one asked about:
#: an injection then takes no other memory on its cosine alone
SURE = 0.5

#: the relevance model: intercept, then one coefficient per :meth:`Evidence.features`
#: (fitted by ``benchmarks/quality/fit_admission.py``)
MODEL: tuple[float, ...] = (-5.913, 4.391, 1.0, 5.827, 3.618)


@functools.cache
def background() -> tuple[int, Mapping[str, int]]:
    """The background table: how many documents, and each stem's document frequency."""
    words = background_table.FREQUENCIES.split()
    return background_table.DOCUMENTS, {
        stem: int(count) for stem, count in zip(words[::2], words[1::2], strict=True)
    }


def term_weight(stem: str) -> float:
    """How much a stemmed term says, in ``(0, 1]``: its inverse document frequency in the
    background table over that of a term the table lacks."""
    documents, frequencies = background()
    top = math.log(documents + 1.0)
    return math.log((documents + 1.0) / (frequencies.get(stem, 0) + 1.0)) / top


@attrs.frozen
class QueryEvidence:
    """What admission reads of a question: its weighed stemmed terms and, with a dense
    channel, its cosines over the store."""

    weights: Mapping[str, float]
    #: the stemmed BM25 channel's text relevance in ``[0, 1]`` per candidate id
    lexical: Mapping[str, float] = attrs.field(factory=dict)
    cosines: Mapping[str, float] = attrs.field(factory=dict)
    profile: CosineProfile | None = None

    @classmethod
    def of(
        cls,
        request: RecallRequest,
        lexical: Mapping[str, float] | None = None,
        cosines: Mapping[str, float] | None = None,
        profile: CosineProfile | None = None,
    ) -> QueryEvidence:
        """The evidence of ``request``'s words (an injection's task, the person's prompt,
        else its query) and of its dense hits."""
        text = request.task if request.mode == "injection" and request.task else request.query
        terms = {t for phrase in match_terms(stemmed_query(text, None, "manual")) for t in phrase}
        return cls(
            weights={t: term_weight(t) for t in sorted(terms)},
            lexical=lexical or {},
            cosines=cosines or {},
            profile=profile,
        )

    @property
    def dense(self) -> bool:
        """True when a dense channel answered."""
        return self.profile is not None

    @functools.cached_property
    def _total(self) -> float:
        return math.fsum(self.weights.values())

    def coverage(self, candidate: Candidate) -> float:
        """The weighed share of the question's terms ``candidate`` holds."""
        if self._total <= 0:
            return 0.0
        counts = document(candidate.columns).counts
        return math.fsum(w for term, w in self.weights.items() if term in counts) / self._total

    def judge(
        self, candidates: Sequence[Candidate], rivals: Sequence[Candidate] = ()
    ) -> list[Evidence]:
        """Each candidate's evidence; its ``lead`` reads the others' and the ``rivals'``
        (the ranking's candidates past those judged, so that which memories are judged,
        near ties of the ranking, never moves a lead)."""
        coverages = [self.coverage(candidate) for candidate in candidates]
        field = coverages + [self.coverage(rival) for rival in rivals]
        top = sorted(field, reverse=True)[:2]
        out = []
        for candidate, coverage in zip(candidates, coverages, strict=True):
            runner_up = top[1] if len(top) > 1 and coverage == top[0] else top[0]
            cosine = self.cosines.get(candidate.id)
            profile = self.profile
            out.append(
                Evidence(
                    coverage=coverage,
                    lead=coverage - runner_up if len(top) > 1 else coverage,
                    text=self.lexical.get(candidate.id, 0.0),
                    named=candidate.named,
                    cosine=cosine,
                    stands=None
                    if profile is None or cosine is None
                    else (cosine - profile.background) / profile.spread,
                )
            )
        return out


class Candidate(NamedTuple):
    """What admission reads of a ranked memory: its id, its full-text columns
    (:func:`~swarmmem.core.recall.bm25.record_fields`) and whether the question names a file
    or symbol it cites."""

    id: str
    columns: tuple[str, ...]
    named: bool

    @classmethod
    def of_item(cls, item: RecallItem) -> Candidate:
        """The candidate of a recall item."""
        signals = item.signals
        named = signals.file_overlap > 0 or signals.symbol_overlap > 0
        return cls(item.record.id, record_fields(item.record), named)


@attrs.frozen
class Evidence:
    """One candidate's relevance evidence (see the module's docstring)."""

    #: the weighed share of the question's terms the memory holds
    coverage: float
    #: ``coverage`` less the best coverage among the other candidates
    lead: float
    #: the stemmed BM25 channel's text relevance in ``[0, 1]`` (0: it did not find the memory)
    text: float
    #: the question names a file or symbol the memory cites
    named: bool
    #: the cosine (``None``: no dense channel, or the memory is not among its hits)
    cosine: float | None = None
    #: how many spreads ``cosine`` stands above the question's cosine background
    stands: float | None = None

    @property
    def lexical(self) -> bool:
        """True when the question's words or references reach the memory."""
        return self.coverage > 0 or self.named

    def features(self) -> tuple[float, ...]:
        """What :data:`MODEL` reads: coverage, named (0 or 1), lead, text relevance."""
        return (self.coverage, float(self.named), self.lead, self.text)


def logistic(model: Sequence[float], features: Sequence[float]) -> float:
    """``sigmoid(model[0] + sum(model[i + 1] * features[i]))``."""
    z = model[0] + math.fsum(w * f for w, f in zip(model[1:], features, strict=True))
    return 1.0 / (1.0 + math.exp(-z)) if z > -60 else 0.0


def relevance(evidence: Evidence) -> float:
    """The candidate's relevance in ``[0, 1]`` (:data:`MODEL`)."""
    return logistic(MODEL, evidence.features())


@attrs.frozen(kw_only=True)
class DenseRule:
    """When the dense channel's evidence admits a memory the words alone do not (see
    :func:`admit`)."""

    #: the lowest cosine (for an injection: of a memory the question's words do not reach;
    #: ``None``: never)
    floor: float | None
    #: injection: how far the nearest hit's cosine must exceed the mean of the next hits
    #: (:func:`~swarmmem.core.recall.hybrid.stands_out`); manual recall: how many spreads it
    #: must stand above the question's background
    gate: float
    injection: bool
    #: injection: the lowest cosine of the nearest hit when the question's words reach it
    #: but too weakly to admit it (``None``: never)
    supported: float | None = None


@attrs.frozen
class Verdict:
    """Admission's answer for one candidate (recorded in the recall trace)."""

    memory_id: str
    relevance: float
    admitted: bool
    evidence: Evidence


def admit(
    candidates: Sequence[Candidate],
    query: QueryEvidence,
    *,
    threshold: float,
    drop_off: float,
    dense: DenseRule | None = None,
    rivals: Sequence[Candidate] = (),
) -> list[Verdict]:
    """A verdict for every candidate (in their order).

    A candidate is admitted when its :func:`relevance` reaches ``threshold`` and at least
    ``drop_off`` times the best relevance among the candidates. With a ``dense`` rule and a
    dense channel, the cosine admits more: for an injection, the nearest hit when the
    question's words reach it (too weakly), its cosine reaches ``supported`` and no admitted
    candidate's relevance reaches :data:`SURE`, or, only when nothing else is admitted, when
    the words do not reach it, its cosine reaches the floor and it stands out from the next
    hits by the gate; for a manual recall, each hit whose cosine reaches the floor and stands
    the gate's spreads above the question's background.
    """
    evidence = query.judge(candidates, rivals)
    values = [relevance(ev) for ev in evidence]
    bar = max(threshold, drop_off * max(values, default=0.0))
    admitted = [value >= bar for value in values]
    if dense is not None and query.dense:
        sure = any(ok and value >= SURE for ok, value in zip(admitted, values, strict=True))
        admitted = _dense_admitted(evidence, admitted, query, dense, sure=sure)
    return [
        Verdict(memory_id=candidate.id, relevance=value, admitted=ok, evidence=ev)
        for candidate, ev, value, ok in zip(candidates, evidence, values, admitted, strict=True)
    ]


def _dense_admitted(
    evidence: Sequence[Evidence],
    admitted: list[bool],
    query: QueryEvidence,
    rule: DenseRule,
    *,
    sure: bool,
) -> list[bool]:
    floor = rule.floor

    def unsupported(ev: Evidence) -> bool:
        return floor is not None and not ev.lexical and ev.cosine is not None and ev.cosine >= floor

    if not rule.injection:  # the cosine is evidence of its own, words or not
        return [
            ok
            or (
                floor is not None
                and ev.cosine is not None
                and ev.cosine >= floor
                and ev.stands is not None
                and ev.stands >= rule.gate
            )
            for ev, ok in zip(evidence, admitted, strict=True)
        ]
    if not query.cosines:
        return admitted
    nearest = max(query.cosines.values())
    supported = rule.supported
    anything = any(admitted)
    out = []
    for ev, ok in zip(evidence, admitted, strict=True):
        if ok or ev.cosine != nearest:
            out.append(ok)
        elif ev.lexical:
            out.append(not sure and supported is not None and ev.cosine >= supported)
        else:
            out.append(
                not anything
                and unsupported(ev)
                and stands_out(sorted(query.cosines.values(), reverse=True), rule.gate)
            )
    return out

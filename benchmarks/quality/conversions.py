"""Public memory benchmarks as ``swarmmem dataset`` collections, with the retrieval labels
each one lacks derived by a stated rule.

Everything here is a pure conversion of already parsed rows (no download, no file read):
:mod:`benchmarks.quality.convert` reads the files :mod:`benchmarks.quality.fetch` extracted
from the pinned packages and hands the rows to these functions; :mod:`benchmarks.quality.run`
writes each :class:`Collection` with :func:`write_collection` and scores it.

One collection is one store:

* MemoryAgentBench fact consolidation (:func:`convert_fact_consolidation`): one collection per
  context (a numbered list of short facts); queries are its questions. Labels come from
  :func:`fact_labels` (rule in its docstring).
* LongMemEval-S as shipped by memory-arena (:func:`convert_longmemeval`): one collection per
  question, holding the turns of that question's sessions; relevant = turns with
  ``has_answer``.
* memoryeval scenarios (:func:`convert_memoryeval`): one collection per scenario, holding its
  memory writes and messages; relevant = memories containing an expected string.

Corpus ids are opaque (``f00042``, ``t0007``, ``m003``): the dataset runner indexes the id as
the memory's source ref, so an id such as ``answer_..._turn_2`` would leak the label.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

# ------------------------------------------------------------------------------ collections


@attrs.frozen(kw_only=True)
class Collection:
    """One store's documents, queries and judgements (``qrels[query][doc] = relevance``);
    ``unlabelled`` maps each query left without judgements to the reason."""

    name: str
    corpus: tuple[Mapping[str, str], ...]
    queries: tuple[Mapping[str, str], ...]
    qrels: Mapping[str, Mapping[str, float]]
    unlabelled: Mapping[str, str] = attrs.field(factory=dict)

    @property
    def labelled(self) -> int:
        """How many queries have at least one relevant document."""
        return sum(1 for q in self.queries if self.qrels.get(q["id"]))


def write_collection(collection: Collection, folder: Path) -> tuple[Path, Path, Path]:
    """Write ``corpus.jsonl``, ``queries.jsonl`` and ``qrels.tsv`` (the ``swarmmem dataset``
    format) into ``folder``; return the three paths."""
    folder.mkdir(parents=True, exist_ok=True)
    corpus = folder / "corpus.jsonl"
    queries = folder / "queries.jsonl"
    qrels = folder / "qrels.tsv"
    corpus.write_text(
        "".join(json.dumps(dict(d), ensure_ascii=False) + "\n" for d in collection.corpus),
        encoding="utf-8",
    )
    queries.write_text(
        "".join(json.dumps(dict(q), ensure_ascii=False) + "\n" for q in collection.queries),
        encoding="utf-8",
    )
    lines = ["query-id\tcorpus-id\tscore"]
    for qid, docs in collection.qrels.items():
        lines.extend(f"{qid}\t{doc}\t{rel:g}" for doc, rel in docs.items())
    qrels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return corpus, queries, qrels


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def _mentions(text: str, phrase: str) -> bool:
    """Whether normalised ``phrase`` occurs in normalised ``text`` as whole words."""
    if not phrase or phrase not in text:
        return False
    return re.search(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", text) is not None


# ------------------------------------------------------------- MemoryAgentBench fact lists

# The sentence shapes of the fact lists (read off the 18,332-fact context, which contains the
# smaller ones' shapes): "{s}" is the subject, "{o}" the object. The first matching shape wins,
# so the catch-all office-holder shape ("The Mayor of London is Sadiq Khan.") comes last.
FACT_TEMPLATES: tuple[str, ...] = (
    "The author of {s} is {o}.",
    "The type of music that {s} plays is {o}.",
    "The headquarters of {s} is located in the city of {o}.",
    "The univeristy where {s} was educated is {o}.",  # sic
    "The company that produced {s} is {o}.",
    "The origianl broadcaster of {s} is {o}.",  # sic
    "The name of the current head of state in {s} is {o}.",
    "The name of the current head of the {s} government is {o}.",
    "The official language of {s} is {o}.",
    "The capital of {s} is {o}.",
    "The chairperson of {s} is {o}.",
    "The head coach of {s} is {o}.",
    "The chief executive officer of {s} is {o}.",
    "The director of {s} is {o}.",
    "The original language of {s} is {o}.",
    "{s} is a citizen of {o}.",
    "{s} is associated with the sport of {o}.",
    "{s} is affiliated with the religion of {o}.",
    "{s} speaks the language of {o}.",
    "{s} was created in the country of {o}.",
    "{s} was developed by {o}.",
    "{s} plays the position of {o}.",
    "{s} works in the field of {o}.",
    "{s} is located in the continent of {o}.",
    "{s} was written in the language of {o}.",
    "{s} died in the city of {o}.",
    "{s} worked in the city of {o}.",
    "{s} was born in the city of {o}.",
    "{s} was performed by {o}.",
    "{s} is employed by {o}.",
    "{s} was created by {o}.",
    "{s} is married to {o}.",
    "{s} was founded in the city of {o}.",
    "{s} was founded by {o}.",
    "{s} is famous for {o}.",
    "{s}'s child is {o}.",
    "The {s} is {o}.",
)


def _template_regex(template: str) -> re.Pattern[str]:
    pattern = re.escape(template)
    pattern = pattern.replace(re.escape("{s}"), "(?P<s>.+?)", 1)
    pattern = pattern.replace(re.escape("{o}"), "(?P<o>.+)", 1)
    return re.compile("^" + pattern + "$")


_TEMPLATES = tuple((t, _template_regex(t)) for t in FACT_TEMPLATES)
_FACT_LINE = re.compile(r"^\s*(\d+)\.\s+(.*\S)\s*$")


@attrs.frozen(kw_only=True)
class Fact:
    """One numbered fact; ``relation``/``subject``/``object`` are ``None`` when no template of
    :data:`FACT_TEMPLATES` matches it."""

    number: int
    text: str
    relation: str | None = None
    subject: str | None = None
    object: str | None = None


def parse_fact(number: int, text: str) -> Fact:
    """Split a fact sentence into relation (its template), subject and object."""
    for template, regex in _TEMPLATES:
        match = regex.match(text)
        if match:
            return Fact(
                number=number,
                text=text,
                relation=template,
                subject=match["s"].strip(),
                object=match["o"].strip(),
            )
    return Fact(number=number, text=text)


def parse_fact_list(context: str) -> list[Fact]:
    """The numbered facts of a context (``"12. The capital of X is Y."`` lines), in order;
    other lines (the "Here is a list of facts:" header) are skipped."""
    out = []
    for line in context.splitlines():
        match = _FACT_LINE.match(line)
        if match:
            out.append(parse_fact(int(match[1]), match[2]))
    return out


def current_facts(facts: Sequence[Fact]) -> dict[tuple[str, str], int]:
    """For every (relation, subject) pair, the position in ``facts`` of its last fact: a later
    fact about the same subject and relation overrides an earlier one."""
    last: dict[tuple[str, str], int] = {}
    for i, fact in enumerate(facts):
        if fact.relation is not None and fact.subject is not None:
            last[(fact.relation, _norm(fact.subject))] = i
    return last


class FactIndex:
    """The current facts of a context, indexed for :func:`fact_labels`."""

    def __init__(self, facts: Sequence[Fact]) -> None:
        self.facts = list(facts)
        self.current = set(current_facts(self.facts).values())
        self.by_subject: dict[str, list[int]] = {}
        for i in sorted(self.current):
            self.by_subject.setdefault(_norm(self.facts[i].subject or ""), []).append(i)
        self._stale_by_subject: dict[str, list[int]] = {}
        for i, fact in enumerate(self.facts):
            if i not in self.current and fact.subject is not None:
                self._stale_by_subject.setdefault(_norm(fact.subject), []).append(i)

    def subjects_in(self, question: str) -> list[str]:
        """Normalised subjects of current facts that the question mentions (whole words),
        without those contained in a longer mentioned subject ("Born This Way" inside "Born
        This Way Ball")."""
        text = _norm(question)
        found = [s for s in self.by_subject if _mentions(text, s)]
        return [s for s in found if not any(s != t and _mentions(t, s) for t in found)]

    def stale_match(self, question: str, answers: Iterable[str]) -> bool:
        """Whether an overridden fact about a mentioned subject holds the answer."""
        wanted = {_norm(a) for a in answers}
        text = _norm(question)
        return any(
            _mentions(text, subject) and _norm(self.facts[i].object or "") in wanted
            for subject, positions in self._stale_by_subject.items()
            for i in positions
        )


def fact_labels(
    index: FactIndex,
    question: str,
    answers: Iterable[str],
    *,
    min_hops: int = 1,
    max_hops: int = 1,
    max_paths: int = 200_000,
) -> tuple[list[int], str | None]:
    """The positions of the facts a question needs, or ``([], reason)``.

    Rule: only *current* facts count (the last fact of each (relation, subject) pair, see
    :func:`current_facts`). Starting from the current facts whose subject the question
    mentions (:meth:`FactIndex.subjects_in`), follow chains of current facts (the object of
    one is the subject of the next) of ``min_hops`` to ``max_hops`` facts; the relevant facts
    are those of the shortest chain whose last object equals one of ``answers`` (case and
    spacing ignored). Single-hop questions use chains of one fact: the fact holding the
    question's subject and the answer. Several shortest chains leave the question unlabelled
    (ambiguous), as does an answer reached only through an overridden fact (the data's answer
    then contradicts the later-fact-wins rule).
    """
    wanted = {_norm(a) for a in answers}
    starts = index.subjects_in(question)
    paths = [[i] for s in starts for i in index.by_subject[s]]
    for hops in range(1, max_hops + 1):
        if hops >= min_hops:
            done = [p for p in paths if _norm(index.facts[p[-1]].object or "") in wanted]
            if len(done) == 1:
                return done[0], None
            if len(done) > 1:
                if max_hops == 1:  # one fact per subject and relation: all are the answer
                    return sorted({p[0] for p in done}), None
                return [], f"{len(done)} chains of {hops} facts reach the answer"
        if hops == max_hops:
            break
        grown: list[list[int]] = []
        for path in paths:
            nxt = index.by_subject.get(_norm(index.facts[path[-1]].object or ""), [])
            grown.extend([*path, j] for j in nxt if j not in path)
            if len(grown) > max_paths:
                return [], "too many chains to search"
        paths = grown
    if index.stale_match(question, answers):
        return [], "the answer is held only by an overridden fact"
    if not starts:
        return [], "the question mentions no subject of a current fact"
    return [], f"no chain of {min_hops}-{max_hops} current facts reaches the answer"


def convert_fact_consolidation(
    name: str,
    context: str,
    questions: Sequence[str],
    answers: Sequence[Sequence[str]],
    *,
    multi_hop: bool,
) -> Collection:
    """One fact-consolidation context as a collection: every fact a document (``f<number>``,
    numbering prefix dropped), every question a query (``q<position>``), labels by
    :func:`fact_labels` (single-hop: one fact; multi-hop: chains of 2 to 4 facts)."""
    facts = parse_fact_list(context)
    index = FactIndex(facts)
    width = max(len(str(f.number)) for f in facts) if facts else 1
    doc_id = [f"f{f.number:0{width}d}" for f in facts]
    corpus = tuple({"id": doc_id[i], "text": f.text} for i, f in enumerate(facts))
    queries = []
    qrels: dict[str, dict[str, float]] = {}
    unlabelled: dict[str, str] = {}
    hops = (2, 4) if multi_hop else (1, 1)
    for n, (question, answer) in enumerate(zip(questions, answers, strict=True)):
        qid = f"q{n:03d}"
        queries.append({"id": qid, "text": question})
        positions, reason = fact_labels(
            index, question, list(answer), min_hops=hops[0], max_hops=hops[1]
        )
        if positions:
            qrels[qid] = {doc_id[i]: 1.0 for i in positions}
        else:
            unlabelled[qid] = reason or "no label"
    return Collection(
        name=name, corpus=corpus, queries=tuple(queries), qrels=qrels, unlabelled=unlabelled
    )


# --------------------------------------------------------------------- LongMemEval-S

_ARENA_TIME = re.compile(r"(\d{4})/(\d{2})/(\d{2}) \(\w+\) (\d{2}):(\d{2})")


def _arena_time(value: Any) -> str:
    """memory-arena's ``2023/05/20 (Sat) 02:21`` as ISO 8601 (UTC).

    Raises:
        ValueError: another form.
    """
    match = _ARENA_TIME.fullmatch(str(value))
    if match is None:
        raise ValueError(f"unexpected time {value!r}")
    year, month, day, hour, minute = match.groups()
    return f"{year}-{month}-{day}T{hour}:{minute}:00.000Z"


def convert_longmemeval(
    questions: Sequence[Mapping[str, Any]], sessions: Sequence[Mapping[str, Any]]
) -> list[Collection]:
    """One collection per question of memory-arena's LongMemEval-S files.

    The sessions file lists, question after question, each question's haystack sessions and
    then its supporting (``answer_*``) sessions; a question's store is the block of sessions
    from the end of the previous question's block up to its last supporting session. Every
    non-empty turn is a document (``t<n>``, numbered across the file); relevant = turns whose
    ``metadata.has_answer`` is true. Each turn is written at its own time (its session's when
    it has none) and the question asked at its ``valid_as_of`` (the files' times, such as
    ``2023/05/20 (Sat) 02:21``, read as UTC): the sessions are not in time order in the file.

    Raises:
        ValueError: a question's supporting sessions are not in the sessions after the
            previous block (the files are not in the expected order).
    """
    order = [str(s["id"]) for s in sessions]
    turn_number: dict[str, int] = {}
    for session in sessions:
        for turn in session.get("turns") or []:
            turn_number.setdefault(str(turn["id"]), len(turn_number))
    width = len(str(max(len(turn_number) - 1, 0)))
    out = []
    cursor = 0
    for question in questions:
        qid = str(question["id"])
        supporting = [str(s) for s in question["ground_truth"]["supporting_session_ids"]]
        rest = order[cursor:]
        missing = [s for s in supporting if s not in rest]
        if missing:
            raise ValueError(
                f"question {qid}: supporting sessions {missing} are not after position {cursor}"
            )
        end = cursor + max(rest.index(s) for s in supporting) + 1
        corpus = []
        relevant: dict[str, float] = {}
        for session in sessions[cursor:end]:
            for turn in session.get("turns") or []:
                text = str(turn.get("content") or "")
                if not text.strip():
                    continue
                doc = f"t{turn_number[str(turn['id'])]:0{width}d}"
                written = _arena_time(turn.get("timestamp") or session.get("timestamp"))
                corpus.append({"id": doc, "text": text, "written": written})
                if (turn.get("metadata") or {}).get("has_answer"):
                    relevant[doc] = 1.0
        cursor = end
        out.append(
            Collection(
                name=qid,
                corpus=tuple(corpus),
                queries=(
                    {
                        "id": qid,
                        "text": str(question["question"]),
                        "asked": _arena_time(question["ground_truth"]["valid_as_of"]),
                    },
                ),
                qrels={qid: relevant} if relevant else {},
                unlabelled={} if relevant else {qid: "no turn of its sessions has has_answer"},
            )
        )
    return out


# --------------------------------------------------------------------------- memoryeval

_FILTER_FIELDS = ("user_id", "session_id", "agent_id", "memory_type")


@attrs.frozen(kw_only=True)
class _Memory:
    doc: str
    text: str
    attrs: Mapping[str, str]


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(value)] if isinstance(value, str) else [str(v) for v in value]


def convert_memoryeval(name: str, scenario: Mapping[str, Any]) -> Collection:
    """One memoryeval scenario as a collection, by replaying its ``setup`` and ``steps``.

    * ``write`` stores a memory (a later write with the same ``key`` replaces it); its
      ``metadata`` gives ``user_id``/``agent_id``, ``memory_type`` defaults to semantic.
    * ``add_message`` stores the message content as a memory of its session (``session_id``,
      the session's ``user_id`` from ``create_session``, memory type episodic).
    * ``delete`` removes the write with that key; ``consolidate`` replaces its source keys by
      one memory joining their contents with newlines (as memoryeval's in-memory adapter does).
    * every ``assert_search`` and ``assert_context`` is a query; ``assert_read`` (a read by
      key) is not.

    The corpus is every memory alive at one query or more. Relevant for a query = the memories
    alive at that query that contain one of its ``expected_contains`` strings (case-insensitive
    substring, memoryeval's own check), restricted to the query's ``filters`` (search) or to
    its session's messages (context). Queries with only ``expected_not_contains`` have no
    relevant memory and stay unlabelled.
    """
    replay = _Replay()
    for step in [*(scenario.get("setup") or []), *(scenario.get("steps") or [])]:
        ((op, arg),) = step.items()
        replay.step(op, arg or {})
    corpus = tuple(
        {"id": m.doc, "text": m.text} for m in sorted(replay.seen.values(), key=lambda m: m.doc)
    )
    return Collection(
        name=name,
        corpus=corpus,
        queries=tuple(replay.queries),
        qrels=replay.qrels,
        unlabelled=replay.unlabelled,
    )


class _Replay:
    """A memoryeval scenario's memories as its steps leave them, and the queries asked of
    them with their judgements (the rules are :func:`convert_memoryeval`'s)."""

    def __init__(self) -> None:
        self.alive: dict[str, _Memory] = {}  # key (or generated key) -> memory
        self.sessions: dict[str, str | None] = {}
        self.seen: dict[str, _Memory] = {}  # every memory alive at one query or more
        self.queries: list[dict[str, str]] = []
        self.qrels: dict[str, dict[str, float]] = {}
        self.unlabelled: dict[str, str] = {}
        self.stored = 0

    def step(self, op: str, arg: Mapping[str, Any]) -> None:
        """Apply one step; operations that neither write nor search (``assert_read``) are
        skipped."""
        if op == "write":
            self._write(arg)
        elif op == "create_session":
            self.sessions[str(arg["session_id"])] = arg.get("user_id")
        elif op == "add_message":
            self._add_message(arg)
        elif op == "delete":
            self.alive.pop(str(arg["key"]), None)
        elif op == "consolidate":
            self._consolidate(arg)
        elif op in ("assert_search", "assert_context"):
            self._ask(op, arg)

    def _store(self, key: str | None, text: str, fields: Mapping[str, str]) -> None:
        doc = f"m{self.stored:03d}"
        self.stored += 1
        self.alive[key if key is not None else f"\0{doc}"] = _Memory(
            doc=doc, text=text, attrs=fields
        )

    def _write(self, arg: Mapping[str, Any]) -> None:
        meta = arg.get("metadata") or {}
        fields = {f: str(meta[f]) for f in _FILTER_FIELDS if meta.get(f) is not None}
        fields["memory_type"] = str(arg.get("memory_type") or "semantic")
        self._store(arg.get("key"), str(arg["content"]), fields)

    def _add_message(self, arg: Mapping[str, Any]) -> None:
        sid = str(arg["session_id"])
        fields = {"session_id": sid, "memory_type": "episodic"}
        if self.sessions.get(sid):
            fields["user_id"] = str(self.sessions[sid])
        self._store(None, str(arg["content"]), fields)

    def _consolidate(self, arg: Mapping[str, Any]) -> None:
        keys = [str(k) for k in arg.get("source_keys") or []]
        parts = [self.alive.pop(k) for k in keys if k in self.alive]
        if parts:
            self._store(None, "\n".join(p.text for p in parts), parts[0].attrs)

    def _ask(self, op: str, arg: Mapping[str, Any]) -> None:
        qid = f"q{len(self.queries):02d}"
        self.queries.append({"id": qid, "text": str(arg["query"])})
        for memory in self.alive.values():
            self.seen.setdefault(memory.doc, memory)
        if op == "assert_context":
            scope = {"session_id": str(arg.get("session_id") or "default")}
        else:
            scope = {k: str(v) for k, v in (arg.get("filters") or {}).items()}
        expected = [e.casefold() for e in _as_list(arg.get("expected_contains"))]
        relevant = {
            m.doc: 1.0
            for m in self.alive.values()
            if all(m.attrs.get(k) == v for k, v in scope.items())
            and any(e in m.text.casefold() for e in expected)
        }
        if relevant:
            self.qrels[qid] = relevant
        elif expected:
            self.unlabelled[qid] = "no stored memory contains an expected string"
        else:
            self.unlabelled[qid] = "no expected string (only expected_not_contains)"

"""The viewer's pages: each parses the request, makes one or a few calls on the
:class:`~swarmmem.memory.Memory` facade and renders a template (house rule 12).

- Memories (``/``): search through the real recall (score, reason and evidence of each
  result, and what was left out and why), the list with kind and state filters, a memory's
  page (``/memory/ID``) and a proposal's (``/proposal/ID``).
- Review (``/review``): the pending queue and its decisions, in :mod:`swarmmem.ui.review`.
- Sessions (``/sessions``): each session's timeline from its run log.
- Health (``/health``): what ``swarmmem status`` reports, memories whose evidence changed or
  is gone, and the audit chain verified on demand.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from swarmmem.core.maintenance.management import MEMORY_STATES
from swarmmem.core.model.errors import MemoryValidationError
from swarmmem.core.model.ids import is_iso_datetime, with_time
from swarmmem.core.model.records import MEMORY_KINDS, MemoryRecord
from swarmmem.core.model.reports import MemoryDetails, ProposalDetails
from swarmmem.memory import Memory
from swarmmem.results import redact_secrets
from swarmmem.ui import charts
from swarmmem.ui.viewer import Refused, app_viewer, path_id, viewer_of

PAGE_SIZE = 50
MAX_OFFSET = 1_000_000
MAX_QUERY = 1000
SESSIONS_LIMIT = 100
HISTORY_LIMIT = 50
_SESSION = re.compile(r"^[A-Za-z0-9._-]{1,80}$")
EVIDENCE_STATES = ("fresh", "changed", "missing", "unverified")
"""What a memory's cited files say now (the list filters by it)."""
VALUE_BANDS = {"low": (0.0, 0.35), "middle": (0.35, 0.65), "high": (0.65, 1.0)}
"""Bands of the learned value Q the list filters by (inclusive bounds)."""
SCAN_LIMIT = 5000
"""The most memories the list reads to filter by evidence or learned value."""
SCAN_BATCH = 500
LIST_SCOPES = ("repository", "workspace")
"""The scope types the memories list filters by (those of the project's own context)."""


def _memory_row(mem: Memory, record: MemoryRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "kind": record.kind,
        "state": mem.state_of(record),
        "updated_at": record.updated_at,
        "q": record.q,
        "text": record.text,
    }


# --------------------------------------------------------------------------- memories
async def memories(request: Request) -> Response:
    """Search (``q``) and the filtered list (``kind``, ``state``, ``scope``, ``file``,
    ``since``: updated since a date or time, ``offset``)."""
    viewer = viewer_of(request)
    mem = viewer.mem
    params = request.query_params
    query = params.get("q", "").strip()[:MAX_QUERY]
    kind = params.get("kind") if params.get("kind") in MEMORY_KINDS else None
    state = params.get("state") or "active"
    state = state if state in MEMORY_STATES else "active"
    scope = params.get("scope") if params.get("scope") in LIST_SCOPES else None
    file = params.get("file", "").strip()[:MAX_QUERY] or None
    since_text = params.get("since", "").strip()[:40]
    since = with_time(since_text) if since_text else None
    if since is not None and not is_iso_datetime(since):
        raise Refused(400, "since: give a date (2026-01-31) or an ISO-8601 time")
    evidence = params.get("evidence") if params.get("evidence") in EVIDENCE_STATES else None
    value = params.get("value") if params.get("value") in VALUE_BANDS else None
    offset_text = params.get("offset", "0")
    offset = min(int(offset_text), MAX_OFFSET) if offset_text.isdigit() else 0
    search = _search(mem, query) if query else None
    listed: dict[str, Any] = {
        "kind": kind,
        "scope": scope,
        "file": file,
        "updated_since": since,
        "state": state,
    }
    scanned = None
    if evidence is None and value is None:
        records = mem.list(**listed, limit=PAGE_SIZE + 1, offset=offset)
    else:

        def keep(record: MemoryRecord) -> bool:
            low, high = VALUE_BANDS[value] if value else (0.0, 1.0)
            if not low <= record.q <= high:
                return False
            return evidence is None or mem.freshness_of(record) == evidence

        records, scanned = _scan(mem, listed, keep, offset)
    rows = [_memory_row(mem, r) for r in records[:PAGE_SIZE]]
    filters = {
        "kind": kind,
        "state": state,
        "scope": scope,
        "file": file,
        "since": since_text,
        "evidence": evidence,
        "value": value,
    }

    def link(new_offset: int) -> str:
        args = {k: v for k, v in (*filters.items(), ("q", query)) if v}
        return f"{viewer.base}/?" + urlencode({**args, "offset": new_offset})

    return viewer.render(
        "memories.html",
        title="Memories",
        search=search,
        rows=rows,
        kinds=sorted(MEMORY_KINDS),
        states=MEMORY_STATES,
        kind=kind,
        state=state,
        scopes=LIST_SCOPES,
        scope=scope,
        evidence_states=EVIDENCE_STATES,
        evidence=evidence,
        value_bands=list(VALUE_BANDS),
        value=value,
        scanned=scanned,
        file=file or "",
        since=since_text,
        offset=offset,
        previous=link(max(0, offset - PAGE_SIZE)) if offset else None,
        next=link(offset + PAGE_SIZE) if len(records) > PAGE_SIZE else None,
    )


def _scan(
    mem: Memory, listed: Mapping[str, Any], keep: Callable[[MemoryRecord], bool], offset: int
) -> tuple[list[MemoryRecord], int]:
    """The page of the listed memories ``keep`` accepts (from ``offset`` among them, one more
    than a page), reading the list in batches, at most :data:`SCAN_LIMIT` memories; and how
    many were read."""
    found: list[MemoryRecord] = []
    read = 0
    while len(found) < offset + PAGE_SIZE + 1 and read < SCAN_LIMIT:
        batch = mem.list(**listed, limit=SCAN_BATCH, offset=read)
        if not batch:
            break
        read += len(batch)
        found.extend(r for r in batch if keep(r))
    return found[offset : offset + PAGE_SIZE + 1], read


def _search(mem: Memory, query: str) -> dict[str, Any]:
    """The recall of ``query`` as the page shows it: each admitted memory with its score,
    reason and evidence status, and the counts of what was left out."""
    try:
        bundle = mem.recall(query)
    except MemoryValidationError as exc:
        return {"query": query, "error": redact_secrets(str(exc)), "items": []}
    diag = bundle.diagnostics

    def count(key: str) -> int:
        value = diag.get(key)
        return int(value) if isinstance(value, int | float) else 0

    return {
        "query": query,
        "error": None,
        "items": [
            {
                "id": item.record.id,
                "kind": item.record.kind,
                "text": item.record.text,
                "score": item.score,
                "reason": item.reason,
                "evidence": item.evidence_status,
                "related_from": item.related_from,
            }
            for item in bundle.items
        ],
        "candidates": count("candidateCount"),
        "left_out": {
            "without a match of the query": count("noSignalCount"),
            "below the relevance threshold": count("belowThresholdCount"),
            "hidden for a low learned value": count("suppressedLowQCount"),
        },
        "tokens": bundle.token_estimate,
    }


async def memory(request: Request) -> Response:
    """One memory: text, kind, scope, evidence with freshness, outcomes, learned value,
    relations, proposals and audit events."""
    viewer = viewer_of(request)
    mem = viewer.mem
    memory_id = path_id(request.path_params["memory_id"])
    details = mem.inspect(memory_id)
    if not isinstance(details, MemoryDetails):
        raise Refused(404, "no such memory")
    freshness = mem.evidence_freshness(memory_id)
    history = mem.memory_history(memory_id, limit=HISTORY_LIMIT)
    return viewer.render(
        "memory.html",
        title=memory_id,
        details=details,
        record=details.record,
        freshness=freshness,
        history=history,
        value_chart=charts.value_chart(value_points(details.q_history)),
    )


def value_points(rewards: list[dict[str, Any]]) -> list[tuple[str, float]]:
    """The learned value over time from a memory's reward events (oldest first): the value
    before the first, then the value after each."""
    points: list[tuple[str, float]] = []
    for event in rewards:
        at = event.get("timestamp")
        before, after = event.get("qBefore"), event.get("qAfter")
        if not isinstance(at, str) or _number(after) is None:
            continue
        first = _number(before)
        if not points and first is not None:
            points.append((at, first))
        points.append((at, _number(after) or 0.0))
    return points


def _number(value: object) -> float | None:
    """``value`` as a float when it is a number (not a bool), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


async def proposal(request: Request) -> Response:
    """One proposal: what it proposes, who proposed it when, its decision and events."""
    viewer = viewer_of(request)
    proposal_id = path_id(request.path_params["proposal_id"], prefix="prop_")
    details = viewer.mem.inspect(proposal_id)
    if not isinstance(details, ProposalDetails):
        raise Refused(404, "no such proposal")
    return viewer.render(
        "proposal.html",
        title=proposal_id,
        details=details,
        prop=details.proposal,
        record=details.proposal.get("proposedRecord") or {},
    )


# --------------------------------------------------------------------------- sessions
async def sessions(request: Request) -> Response:
    """Every session with a run log, newest first, and the tokens injected per day."""
    viewer = viewer_of(request)
    listing = viewer.mem.sessions(SESSIONS_LIMIT)
    chart = charts.bar_chart(tokens_per_day(listing.sessions))
    return viewer.render("sessions.html", title="Sessions", listing=listing, tokens_chart=chart)


def tokens_per_day(summaries: Sequence[Mapping[str, Any]]) -> list[tuple[str, int]]:
    """The tokens injected (briefs and prompts) per day, oldest day first, each session's
    counted on the day of its last event."""
    days: dict[str, int] = {}
    for summary in summaries:
        day = str(summary.get("last_at") or "")[:10]
        tokens = summary.get("tokens_injected")
        if len(day) == 10 and isinstance(tokens, int):
            days[day] = days.get(day, 0) + tokens
    return sorted(days.items())


async def session(request: Request) -> Response:
    """One session's timeline: brief, injections (ids, scores, tokens) or why not, proposals."""
    viewer = viewer_of(request)
    session_id = request.path_params["session_id"]
    if not _SESSION.match(session_id):
        raise Refused(404, "no such session")
    timeline = viewer.mem.session(session_id)
    return viewer.render(
        "session.html", title=f"Session {session_id}", timeline=timeline, s=timeline.summary
    )


# ----------------------------------------------------------------------------- health
_DSN_PASSWORD = re.compile(r"(://[^:/@\s]*:)[^@\s]*(@)|(password\s*=\s*)('[^']*'|\S+)", re.I)


def _hide_password(text: str) -> str:
    """``text`` with a connection string's password replaced by ``***``."""
    return _DSN_PASSWORD.sub(lambda m: f"{m[1]}***{m[2]}" if m[1] else f"{m[3]}***", text)


def config_rows(config: Any, prefix: str = "") -> list[tuple[str, str]]:
    """The configuration in force as ``(dotted key, value)`` rows, JSON values; a string is
    shown with a connection string's password hidden and every likely secret redacted."""
    if isinstance(config, dict) and config:
        rows: list[tuple[str, str]] = []
        for key, value in config.items():
            rows += config_rows(value, f"{prefix}.{key}" if prefix else str(key))
        return rows
    if isinstance(config, str):
        return [(prefix, json.dumps(redact_secrets(_hide_password(config)), ensure_ascii=False))]
    return [(prefix, redact_secrets(json.dumps(config, ensure_ascii=False, default=str)))]


def _health_page(
    request: Request,
    *,
    audit: dict[str, Any] | None = None,
    evidence: dict[str, Any] | None = None,
    evidence_error: str | None = None,
) -> Response:
    viewer = viewer_of(request)
    mem = viewer.mem
    status = mem.status()
    return viewer.render(
        "health.html",
        title="Health",
        store=status,
        embeddings=status.get("embeddings") or {},
        evidence=evidence,
        evidence_error=evidence_error,
        audit=audit,
        config=config_rows(mem.config),
    )


async def health(request: Request) -> Response:
    """Store, counts, embeddings coverage, the configuration in force, and the buttons that
    check the evidence and the audit chain (each reads every memory or event: on demand)."""
    return _health_page(request)


async def audit(request: Request, form: dict[str, str]) -> Response:
    """Verify the audit chain now (reads only) and show the result on the health page."""
    return _health_page(request, audit=viewer_of(request).mem.verify_audit_chain())


def _evidence(request: Request, *, propose: bool) -> Response:
    try:
        report = viewer_of(request).mem.verify(propose=propose).to_json()
    except MemoryValidationError as exc:  # evidence checks are off
        return _health_page(request, evidence_error=redact_secrets(str(exc)))
    return _health_page(request, evidence=report)


async def evidence(request: Request, form: dict[str, str]) -> Response:
    """Check now which memories' cited files changed or are gone (reads only)."""
    return _evidence(request, propose=False)


async def propose_updates(request: Request, form: dict[str, str]) -> Response:
    """``swarmmem verify --propose``: an update (changed) or delete (gone) proposal for each
    such memory that no pending proposal targets yet, left for review; memory itself is not
    changed."""
    return _evidence(request, propose=True)


# --------------------------------------------------------------------------- projects
async def projects(request: Request) -> Response:
    """The projects the store serves to this role: those the viewer opened (linked) and
    those it could not, with the reason (no checkout here, a folder that is another
    project now)."""
    viewer = viewer_of(request)
    found = app_viewer(request).projects
    listed = found.listed if found is not None else []
    return viewer.render("projects.html", title="Projects", listed=listed)


async def switch(request: Request) -> Response:
    """The picker's answer: the memories page of the chosen project (the one the viewer
    started in: ``/``; another: ``/p/<id>/``); a project not opened here: 404."""
    chosen = request.query_params.get("project", "")[:40]
    found = app_viewer(request).projects
    if found is None or found.memory(chosen) is None:
        raise Refused(404, "no such project (or this database role may not see it)")
    target = "/" if chosen == found.home_id else f"/p/{chosen}/"
    return RedirectResponse(target, status_code=303)

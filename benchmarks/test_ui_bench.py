"""The web viewer (``swarmmem ui``) on a large store: the server time of each page.

Each page is asked through the viewer's ASGI application in this process (the
:class:`~swarmmem.ui.guard.Guard` with its token cookie, the pages, the templates), without a
client or a socket: what is measured is what the server spends on one request, from the
request to the last byte of the rendered page. The goal (issue 50): every page under 300 ms on a
store of 100,000 memories. The two buttons of the health page that read every memory citing a
file (the evidence check) or every audit row (the chain's verification) are measured too: they
run only when asked.

The size comes from ``SWARMMEM_BENCH_UI_SIZE`` (default ``2000``, the smoke run of CI; the
table in README.md used ``100000``). The project's SQLite store holds that many memories
(kinds in turn, every tenth citing a file of the project, 1% tombstones and 1% superseded,
learned values spread over [0, 1], one in 200 of another repository, which no page may
show), one applied ``add`` proposal per 10 memories with its audit event, 150 pending
proposals (each naming similar memories), outcomes and reward events on the first 2,000
memories (the benchmarked memory has 40 rewards and a supersede chain), 3,000 recall usage rows,
and 200 sessions' run logs of 30 events each.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

pytest.importorskip("starlette", reason="the ui extra is not installed")
pytest.importorskip("jinja2", reason="the ui extra is not installed")

import swarmmem
from swarmmem.core.model.events import OutcomeEvent, RecallUsage, RewardEvent
from swarmmem.core.model.ids import content_hash, memory_id_for_hash
from swarmmem.core.model.records import (
    MEMORY_KINDS,
    MemoryProposal,
    MemoryRecord,
    MemoryScope,
    MemorySource,
    OutcomeEntry,
)

SIZE = int(os.environ.get("SWARMMEM_BENCH_UI_SIZE", "2000"))
PORT = 48999
TOKEN = "bench-token-" + "t" * 32
CSRF = "bench-csrf-" + "c" * 32
HOST = f"127.0.0.1:{PORT}"
STAMP = "2026-05-01T00:00:00.000Z"
OTHER = MemoryScope(type="repository", repo_id="another-repository")
KINDS = sorted(k for k in MEMORY_KINDS if k not in ("scratch", "question"))
WORDS = [
    "cache", "sqlite", "pytest", "ruff", "schema", "index", "token", "vector", "parser",
    "deploy", "retry", "config", "migration", "fixture", "handler", "server", "client",
    "request", "session", "budget", "prompt", "recall", "kernel", "fusion",
]  # fmt: skip
SESSIONS = 200
EVENTS_PER_SESSION = 30


def _stamp(i: int) -> str:
    """A time in the first half of 2026 that grows with ``i``."""
    day, rest = divmod(i, 1000)
    month, date = 1 + (day // 28) % 6, 1 + day % 28
    return f"2026-{month:02d}-{date:02d}T{(rest // 60) % 24:02d}:{rest % 60:02d}:00.000Z"


def _memory(scope: MemoryScope, i: int, **changes: Any) -> MemoryRecord:
    kind = KINDS[i % len(KINDS)]
    words = " ".join(WORDS[(i * k) % len(WORDS)] for k in (1, 3, 7, 11))
    text = f"memory {i}: the {words} path of module {i % 997} keeps its contract"
    digest = content_hash(scope.as_dict(), kind, text)
    cited = i % 10 == 0
    record = MemoryRecord(
        id=memory_id_for_hash(digest),
        scope=scope,
        kind=kind,
        text=text,
        tags=(WORDS[i % len(WORDS)],),
        confidence=0.8,
        stability="durable",
        source=MemorySource(type="file", file_path=f"src/mod{i % 50}.py")
        if cited
        else MemorySource(type="manual"),
        created_at=_stamp(i),
        updated_at=_stamp(i),
        content_hash=digest,
        metadata={"qValue": round((i % 101) / 100, 2)},
    )
    return attrs.evolve(record, **changes)


def _fill(mem: Any, n: int) -> dict[str, str]:
    """The store described in the module docstring; returns the ids the pages ask for."""
    from swarmmem.adapters.files.runlog import append_run_event

    scope = mem.runtime.allowed_scopes[1]
    store = mem.store
    records = [_memory(OTHER if i % 200 == 7 else scope, i) for i in range(n)]
    for i in range(0, n, 100):  # 1% tombstones, 1% superseded by their neighbour
        records[i] = attrs.evolve(records[i], metadata={"deleted": True, "qValue": 0.5})
        records[i + 1] = attrs.evolve(
            records[i + 1], superseded_by=records[i + 2].id, metadata={"validTo": _stamp(i + 2)}
        )
    store.upsert_many(records)
    ours = [r for r in records if r.scope == scope]
    focus = ours[5]  # the memory page measured: rewards, outcomes, proposals, a predecessor
    with store.transaction():
        for i in range(0, len(ours), 10):
            r = ours[i]
            prop = MemoryProposal(
                id=f"prop_{i:016x}",
                operation="add",
                status="applied",
                created_at=r.created_at,
                proposed_record=r,
                rationale="seen while working on the module",
                evidence_refs=("src/mod1.py",) if r.source.file_path else (),
                reviewer="curator_agent",
                reviewed_at=r.created_at,
                metadata={"curatorDecision": {"action": "add", "memoryId": r.id}},
            )
            store.create_proposal(prop)
            store.append_event("curator_decision", prop.id, event={"memoryId": r.id})
        for k in range(150):
            proposed = _memory(scope, n + k)
            near = (ours[(k * 37 + j) % len(ours)] for j in (1, 2))
            similar = [{"memoryId": r.id, "score": 0.5} for r in near]
            store.create_proposal(
                MemoryProposal(
                    id=f"prop_p{k:015x}",
                    operation="add",
                    status="pending",
                    created_at=_stamp(k),
                    proposed_record=proposed,
                    rationale="the agent saw this twice",
                    metadata={"similar": similar},
                )
            )
        for k in range(min(2000, len(ours))):
            target = focus if k % 50 == 0 else ours[k]
            store.append_outcome(
                OutcomeEvent(
                    id=f"outcome-{k}",
                    memory_id=target.id,
                    generation="g1",
                    outcome=OutcomeEntry(outcome=("useful", "dead_end")[k % 2], at=_stamp(k)),
                )
            )
            store.append_reward_event(
                RewardEvent(
                    id=f"reward-{k}",
                    memory_id=target.id,
                    verdict="APPROVE",
                    reward=1.0,
                    q_before=0.5,
                    q_after=0.55,
                    timestamp=_stamp(k),
                )
            )
        for k in range(3000):
            recalled = [focus.id, *(ours[(k * 13 + j) % len(ours)].id for j in range(5))]
            store.record_recall_usage(
                RecallUsage(
                    bundle_id=f"bundle-{k}",
                    timestamp=_stamp(k),
                    memory_ids=tuple(recalled),
                    scores=tuple(0.5 for _ in recalled),
                    scopes=(scope,),
                    agent_role="coder",
                )
            )
    for s in range(SESSIONS):
        session = f"sess-{s:04d}"
        for e in range(EVENTS_PER_SESSION):
            ids = [ours[(s * 31 + e + j) % len(ours)].id for j in range(3)]
            event: dict[str, Any] = (
                {"type": "prompt_injected", "memoryIds": ids, "scores": [0.9, 0.7, 0.5],
                 "tokens": 120, "dense": False, "queryTerms": ["cache", "sqlite"]}
                if e % 3
                else {"type": "prompt_injection_skipped", "reason": "below_threshold"}
            )  # fmt: skip
            append_run_event(mem.root, session, event, _stamp(s * 40 + e))
    return {"memory": focus.id, "session": "sess-0007", "proposal": f"prop_p{3:015x}"}


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, dict[str, str]]]:
    """The viewer's application, started, on a project holding ``SIZE`` memories."""
    from swarmmem.ui.app import create_app

    root: Path = tmp_path_factory.mktemp(f"ui{SIZE}")
    (root / ".opencode").mkdir()
    (root / ".opencode" / "opencode-swarm.json").write_text(
        json.dumps({"memory": {"enabled": True, "projectId": "ui-bench"}})
    )
    (root / "src").mkdir()
    for m in range(50):
        (root / "src" / f"mod{m}.py").write_text(f"VALUE = {m}\n")
    with swarmmem.open(root) as mem:
        ids = _fill(mem, SIZE)
    app = create_app(lambda: swarmmem.open(root), port=PORT, token=TOKEN, csrf=CSRF)
    inner = app.app.state.viewer  # what the lifespan does at startup, on this thread
    inner.start()
    try:
        yield app, ids
    finally:
        inner.stop()


def request(app: Any, path: str) -> tuple[int, str]:
    """``GET path`` (``POST path`` with the CSRF token for ``POST /...``) through the
    application, signed in as the browser is: the status and the page."""
    method, _, path = path.rpartition(" ")
    target, _, query = path.partition("?")
    body = f"csrf={CSRF}".encode() if method == "POST" else b""
    headers = [(b"host", HOST.encode()), (b"cookie", f"swarmmem_ui_{PORT}={TOKEN}".encode())]
    if body:
        headers += [(b"origin", f"http://{HOST}".encode()),
                    (b"content-type", b"application/x-www-form-urlencoded"),
                    (b"content-length", str(len(body)).encode())]  # fmt: skip
    scope = {
        "type": "http", "method": method or "GET", "path": target, "raw_path": target.encode(),
        "query_string": query.encode(), "scheme": "http", "http_version": "1.1",
        "server": ("127.0.0.1", PORT), "client": ("127.0.0.1", 50000), "root_path": "",
        "headers": headers,
    }  # fmt: skip
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    status = sent[0]["status"]
    return status, b"".join(m.get("body", b"") for m in sent[1:]).decode()


PAGES = {
    "list": "/",
    "list-kind-page-20": "/?kind=project_fact&offset=1000",
    "list-all-states": "/?state=all",
    "list-deleted": "/?state=deleted",
    "search": "/?q=how+does+the+sqlite+cache+keep+its+contract",
    "search-kind": "/?q=sqlite+cache+contract&kind=project_fact",
    "memory": "/memory/{memory}",
    "proposal": "/proposal/{proposal}",
    "review": "/review",
    "sessions": "/sessions",
    "session": "/sessions/{session}",
    "health": "/health",
    # on demand, from the health page (each reads every memory citing a file, or every row)
    "action-check-evidence": "POST /health/evidence",
    "action-verify-audit-chain": "POST /health/audit",
}


@pytest.mark.benchmark(group="ui")
@pytest.mark.parametrize("page", PAGES)
def test_page(benchmark: Any, viewer: tuple[Any, dict[str, str]], page: str) -> None:
    """One page of the viewer, server side."""
    app, ids = viewer
    path = PAGES[page].format(**ids)
    status, body = benchmark(request, app, path)
    assert status == 200, body[:2000]
    assert "another-repository" not in body
    if page == "memory":
        assert ids["memory"] in body
    if page == "review":
        assert 'id="pending-count">150<' in body

"""``swarmmem hook <host> <event>`` as hosts run it: a new process per event, on a real SQLite
store, from a folder of the project; the brief, the prompt recall and its per-session
dedupe, proposals filed from the transcript, the run log, failures that never block, hooks
running at once, and the project's helper process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from factories import cite, curate_fact, wait_for, write_memory_config

import swarmmem
from swarmmem.hooks import client, daemon

SWARMMEM = [sys.executable, "-m", "swarmmem"]
ALEMBIC = "Database migrations are managed with alembic; run alembic upgrade head after pulling."
PYTEST = "Run the unit tests with pytest -q tests/unit before pushing; CI runs the same command."


def make_project(tmp_path: Path, memories: tuple[str, ...] = (ALEMBIC, PYTEST)) -> Path:
    """A git project with memory on, a source tree and curated memories."""
    root = tmp_path / "app"
    (root / "src" / "app").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "src" / "app" / "db.py").write_text("ENGINE = None\n", encoding="utf-8")
    write_memory_config(root, {"enabled": True, "projectId": "proj_00000000000000aa"})
    with swarmmem.open(root, context={"session_id": "setup", "agent_role": "coder"}) as mem:
        for text in memories:
            curate_fact(
                mem, text, kind="repo_convention", evidence="src/app/db.py", rationale="team rule"
            )
    return root


def memory_ids(root: Path) -> dict[str, str]:
    with swarmmem.open(root) as mem:
        return {record.text: record.id for record in mem.list()}


def env(**extra: str) -> dict[str, str]:
    keep = ("PATH", "SWARMMEM_NO_EXTENSIONS", "PYTHONPATH", "HOME")
    base = {key: os.environ[key] for key in keep if key in os.environ}
    return {**base, "SWARMMEM_HOOK_HELPER": "0", **extra}


def hook(
    host: str, event: str, payload: dict[str, Any] | str, *, cwd: Path, **extra: str
) -> subprocess.CompletedProcess[str]:
    raw = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        [*SWARMMEM, "hook", host, event],
        input=raw,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env(**extra),
        timeout=120,
    )


def context_of(out: str) -> str:
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""


def run_log(root: Path, session: str) -> list[dict[str, Any]]:
    path = root / ".swarm" / "runs" / session / "memory.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_session_from_a_subfolder_brief_recall_dedupe_and_run_log(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    ids = memory_ids(root)
    sub = root / "src" / "app"
    base = {"session_id": "s1", "cwd": str(sub), "transcript_path": ""}

    prompt = "how should I apply the database migrations after I pull?"
    first = hook("claude-code", "UserPromptSubmit", {**base, "prompt": prompt}, cwd=sub)
    assert first.returncode == 0, first.stderr
    injected = context_of(first.stdout)
    assert ids[ALEMBIC] in injected and ids[PYTEST] not in injected

    again = hook("claude-code", "UserPromptSubmit", {**base, "prompt": prompt}, cwd=sub)
    assert (again.returncode, again.stdout) == (0, "")  # the same call twice (two configs)
    other = "which tool handles our database migrations?"
    known = hook("claude-code", "UserPromptSubmit", {**base, "prompt": other}, cwd=sub)
    assert (known.returncode, known.stdout) == (0, "")  # already in this context

    for text in ("ok", "thanks!", "/compact", "what is a good name for a cat?"):
        quiet = hook("claude-code", "UserPromptSubmit", {**base, "prompt": text}, cwd=sub)
        assert (quiet.returncode, quiet.stdout) == (0, ""), text

    # a compacted context has lost what was injected: the brief gives both memories again,
    # and a prompt then repeats none of them; a resumed session keeps its brief
    start = hook("claude-code", "SessionStart", {**base, "source": "compact"}, cwd=sub)
    assert start.returncode == 0, start.stderr
    brief = context_of(start.stdout)
    assert ids[ALEMBIC] in brief and ids[PYTEST] in brief
    assert brief.startswith("## Retrieved Swarm Memory")
    after = hook("claude-code", "UserPromptSubmit", {**base, "prompt": prompt}, cwd=sub)
    assert (after.returncode, after.stdout) == (0, "")
    resumed = hook("claude-code", "SessionStart", {**base, "source": "resume"}, cwd=sub)
    assert (resumed.returncode, resumed.stdout) == (0, "")

    events = run_log(root, "s1")
    kinds = [(e["type"], e.get("reason")) for e in events]
    assert kinds == [
        ("prompt_injected", None),
        ("hook_skipped", "duplicate"),
        ("prompt_injection_skipped", "deduped"),
        ("prompt_injection_skipped", "trivial_prompt"),
        ("prompt_injection_skipped", "trivial_prompt"),
        ("prompt_injection_skipped", "trivial_prompt"),
        ("prompt_injection_skipped", "no_results"),
        ("session_brief", None),
        ("prompt_injection_skipped", "deduped"),
        ("session_brief_skipped", "already_briefed"),
    ]
    assert events[2]["memoryIds"] == [ids[ALEMBIC]]
    assert events[8]["memoryIds"] == [ids[ALEMBIC]]
    injected_event = events[0]
    assert injected_event["memoryIds"] == [ids[ALEMBIC]]
    assert injected_event["tokens"] > 0 and injected_event["scores"][0] > 0
    assert "database" in injected_event["queryTerms"]
    log_text = (root / ".swarm" / "runs" / "s1" / "memory.jsonl").read_text(encoding="utf-8")
    assert prompt not in log_text and "good name for a cat" not in log_text


def test_the_brief_says_what_the_cited_files_say_and_leaves_out_gone_ones(tmp_path: Path) -> None:
    """Each briefed memory says whether its evidence still matches the code, as a prompt's
    recall does; one whose cited file is gone is left out of the brief, as out of an
    injection (``evidence.injectMissing`` is off)."""
    facts = {
        "kept.py": "Configuration is loaded once by load_settings() in kept.py at start-up.",
        "edited.py": "Request retries are capped at three attempts by edited.py's policy.",
        "gone.py": "Feature flags are read from gone.py's FLAGS mapping on every request.",
    }
    root = make_project(tmp_path, memories=())
    with swarmmem.open(root, context={"session_id": "setup", "agent_role": "coder"}) as mem:
        ids = {
            name: curate_fact(mem, text, kind="repo_convention", evidence=f"src/app/{name}")
            for name, text in facts.items()
        }
    (root / "src" / "app" / "edited.py").write_text("RETRIES = 5\n", encoding="utf-8")
    (root / "src" / "app" / "gone.py").unlink()
    base = {"session_id": "s1", "cwd": str(root), "transcript_path": "", "source": "startup"}
    start = hook("claude-code", "SessionStart", base, cwd=root)
    assert start.returncode == 0, start.stderr
    brief = context_of(start.stdout)
    assert ids["kept.py"] in brief and ids["edited.py"] in brief and ids["gone.py"] not in brief
    assert "src/app/kept.py (evidence fresh)" in brief
    assert "src/app/edited.py (evidence changed)" in brief
    (event,) = [e for e in run_log(root, "s1") if e["type"] == "session_brief"]
    assert sorted(event["memoryIds"]) == sorted([ids["kept.py"], ids["edited.py"]])


@pytest.mark.parametrize(
    ("host", "event", "empty"),
    [
        ("claude-code", "UserPromptSubmit", ""),
        ("codex", "UserPromptSubmit", ""),
        ("gemini", "BeforeAgent", "{}"),
        ("cursor", "beforeSubmitPrompt", '{"continue": true}'),
        ("opencode", "user-prompt-submit", "{}"),
    ],
)
def test_every_host_gets_its_own_shape(tmp_path: Path, host: str, event: str, empty: str) -> None:
    root = make_project(tmp_path)
    payload = {
        "session_id": "h1",
        "conversation_id": "h1",
        "cwd": str(root),
        "workspace_roots": [str(root)],
        "prompt": "which tool manages database migrations here?",
    }
    done = hook(host, event, payload, cwd=root)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    if host == "cursor":
        assert answer["continue"] is True
        context = answer["additional_context"]
    elif host == "opencode":
        context = answer["additionalContext"]
    else:
        context = answer["hookSpecificOutput"]["additionalContext"]
    assert "alembic" in context
    quiet = hook(host, event, {**payload, "prompt": "ok"}, cwd=root)
    assert (quiet.returncode, quiet.stdout) == (0, empty)


def test_disabled_memory_answers_empty_and_writes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / ".git").mkdir(parents=True)
    payload = {"session_id": "d1", "cwd": str(root), "prompt": "how are tests run?"}
    calls = (("claude-code", "UserPromptSubmit", ""), ("gemini", "BeforeAgent", "{}"))
    for host, event, empty in calls:
        done = hook(host, event, payload, cwd=root)
        assert (done.returncode, done.stdout) == (0, empty)
    assert sorted(p.name for p in root.iterdir()) == [".git"]


def test_a_broken_store_never_blocks_the_prompt(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    db = root / ".swarm" / "memory" / "memory.db"
    db.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    payload = {"session_id": "e1", "cwd": str(root), "prompt": "how do migrations work?"}
    done = hook("claude-code", "UserPromptSubmit", payload, cwd=root)
    assert (done.returncode, done.stdout) == (0, "")
    assert "swarmmem hook claude-code UserPromptSubmit" in done.stderr
    gemini = hook("gemini", "BeforeAgent", payload, cwd=root)
    assert (gemini.returncode, gemini.stdout) == (0, "{}")


def test_unknown_host_or_event_is_a_non_blocking_error(tmp_path: Path) -> None:
    done = hook("claude-code", "Teleport", {}, cwd=tmp_path)
    assert done.returncode == 1  # never 2: exit 2 would block the person's prompt
    assert "unknown claude-code event" in done.stderr


FILED_ONE = "swarmmem memoryProposals: filed 1 for review."


def _transcript_row(text: str) -> str:
    message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    return json.dumps({"type": "assistant", "message": message}) + "\n"


def test_memory_proposals_from_the_transcript_are_filed_once(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    transcript = tmp_path / "transcript.jsonl"
    block = {
        "memoryProposals": [
            {
                "operation": "add",
                "kind": "repo_convention",
                "text": "Format code with ruff format before committing.",
                "rationale": "review asked for it",
                "evidenceRefs": ["src/app/db.py"],
            },
            {"operation": "add", "kind": "no_such_kind", "text": "x", "rationale": "y"},
        ],
        "curatorMemoryDecisions": [{"proposalId": "prop_0000000000000000", "action": "add"}],
    }
    reply = "Done.\n```json\n" + json.dumps(block) + "\n```\n"
    transcript.write_text(
        json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}})
        + "\n"
        + _transcript_row(reply),
        encoding="utf-8",
    )
    base = {"session_id": "p1", "cwd": str(root), "transcript_path": str(transcript)}
    stop = hook("claude-code", "Stop", {**base, "last_assistant_message": reply}, cwd=root)
    assert stop.returncode == 0
    # the person sees what became of the block: one filed, two refused with their reasons
    notice = json.loads(stop.stdout)["systemMessage"]
    assert notice.startswith("swarmmem memoryProposals: filed 1 for review, refused 2: ")
    assert "no_such_kind" in notice and "curatorMemoryDecisions" in notice
    end = hook("claude-code", "SessionEnd", {**base, "reason": "other"}, cwd=root)
    assert end.returncode == 0
    with swarmmem.open(root) as mem:
        pending = mem.store.list_proposals("pending")
    assert [p.proposed_record.text for p in pending if p.proposed_record] == [
        "Format code with ruff format before committing."
    ]
    filed = [e for e in run_log(root, "p1") if e["type"].startswith("proposals")]
    assert [e["type"] for e in filed] == ["proposals_filed", "proposals_none"]
    assert len(filed[0]["proposalIds"]) == 1
    assert any("curatorMemoryDecisions" in r for r in filed[0]["rejected"])
    assert len(filed[0]["rejected"]) == 2  # the bad kind, and the decisions of a non-curator

    # the next turn appends to the transcript: only the new block is read and filed
    second = {**block, "memoryProposals": [{**block["memoryProposals"][0], "text": "Use uv."}]}
    with transcript.open("a", encoding="utf-8") as out:
        out.write(_transcript_row(json.dumps(second)))
    hook("claude-code", "Stop", base, cwd=root)
    with swarmmem.open(root) as mem:
        texts = sorted(p.proposed_record.text for p in mem.store.list_proposals("pending"))
    assert texts == ["Format code with ruff format before committing.", "Use uv."]


def _proposal_reply(text: str) -> str:
    entry = {
        "operation": "add",
        "kind": "repo_convention",
        "text": text,
        "rationale": "r",
        "evidenceRefs": ["src/app/db.py"],
    }
    return json.dumps({"memoryProposals": [entry]})


def test_hooks_running_at_once_wait_for_each_other(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    calls = []
    for i in range(6):
        if i % 2:
            event, extra = "UserPromptSubmit", {"prompt": "how do I run the database migrations?"}
        else:
            event, extra = "Stop", {"last_assistant_message": _proposal_reply(f"Rule {i}.")}
        payload = json.dumps({"session_id": f"c{i % 3}", "cwd": str(root), **extra})
        proc = subprocess.Popen(
            [*SWARMMEM, "hook", "claude-code", event],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=root,
            env=env(),
        )
        calls.append((proc, payload))
    for proc, payload in calls:  # every process has its input before any is waited for
        assert proc.stdin is not None
        proc.stdin.write(payload)
        proc.stdin.close()
    results = []
    for proc, _ in calls:
        assert proc.stdout is not None and proc.stderr is not None
        out, err = proc.stdout.read(), proc.stderr.read()  # small: no pipe fills up
        proc.stdout.close()
        proc.stderr.close()
        results.append((out, err, proc.wait(timeout=120)))
    for _out, err, code in results:
        assert code == 0 and err == "", err
    assert all("alembic" in context_of(out) for out, _, _ in results[1::2])
    with swarmmem.open(root) as mem:
        assert len(mem.store.list_proposals("pending")) == 3


# ------------------------------------------------------------------ the helper process
def _wait_for(predicate: Any, timeout: float = 60.0) -> bool:
    """Whether ``predicate()`` comes true within ``timeout`` seconds (asked every 0.1 s)."""
    return wait_for(predicate, timeout, interval=0.1)


@pytest.mark.slow
def test_the_helper_answers_like_the_hook_and_sees_new_memories(tmp_path: Path) -> None:
    root = make_project(tmp_path, memories=(PYTEST,))
    helper = subprocess.Popen(
        [sys.executable, "-m", "swarmmem.hooks.daemon", str(root)],
        env=env(SWARMMEM_HOOK_HELPER_IDLE="30"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        sock = client.socket_path(root)
        assert _wait_for(sock.exists), helper.stderr.read() if helper.stderr else ""
        assert (sock.stat().st_mode & 0o777) == 0o600
        # a second helper for the same project leaves at once
        second = subprocess.run(
            [sys.executable, "-m", "swarmmem.hooks.daemon", str(root)], env=env(), timeout=60
        )
        assert second.returncode == 1

        # a memory curated by another process after the helper started is served
        with swarmmem.open(root, context={"session_id": "late"}) as mem:
            curate_fact(mem, ALEMBIC, kind="repo_convention", evidence="src/app/db.py")
        payload = json.dumps(
            {"session_id": "w1", "cwd": str(root), "prompt": "how are database migrations run?"}
        )
        request = client.helper_request(root, "claude-code", "UserPromptSubmit", payload)
        via_helper = client.ask_helper(root, request)
        assert via_helper is not None and "alembic" in context_of(via_helper)
        # the same call through the command line (helper on) answers from the helper
        done = hook(
            "claude-code",
            "UserPromptSubmit",
            payload.replace("w1", "w2"),
            cwd=root,
            SWARMMEM_HOOK_HELPER="1",
        )
        assert done.returncode == 0 and "alembic" in context_of(done.stdout)

        # another project's request, or another library version, is refused
        assert client.ask_helper(root, {**request, "root": str(tmp_path)}) is None
        assert daemon.answer(root, {**request, "root": str(tmp_path)})["ok"] is False
        assert client.ask_helper(root, {**request, "version": "0.0.0"}) is None
        assert helper.wait(timeout=30) == 0  # a new library version ends the helper
        assert not sock.exists()
    finally:
        if helper.poll() is None:
            helper.kill()
            helper.wait()
        if helper.stderr:
            helper.stderr.close()


def test_a_busy_helper_sends_another_sessions_hook_away_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The helper answers one request at a time: a request that came while a slow one was
    being answered waited its turn (up to the hook's 25 s). Now it is refused at once as
    busy, and its hook answers by itself; the slow request still gets its answer."""
    import threading
    import time

    root = make_project(tmp_path, memories=(PYTEST,))
    release, started = threading.Event(), threading.Event()
    real_answer = daemon.answer

    def slow(project: Path, request: dict[str, Any] | None) -> dict[str, Any]:
        if request and json.loads(request["payload"])["session_id"] == "slow":
            started.set()
            release.wait(30)
        return real_answer(project, request)

    def request(session: str) -> dict[str, Any]:
        payload = {"session_id": session, "cwd": str(root), "prompt": "how do I run the tests?"}
        return client.helper_request(root, "claude-code", "UserPromptSubmit", json.dumps(payload))

    monkeypatch.setattr(daemon, "answer", slow)
    monkeypatch.setenv("SWARMMEM_HOOK_HELPER_IDLE", "1")
    helper = threading.Thread(target=daemon.serve, args=(root,), daemon=True)
    helper.start()
    assert _wait_for(client.socket_path(root).exists)
    answers: list[str | None] = []
    first = threading.Thread(
        target=lambda: answers.append(client.ask_helper(root, request("slow")))
    )
    first.start()
    assert started.wait(30)
    began = time.monotonic()
    assert client.ask_helper(root, request("other")) is None  # busy: the hook answers itself
    assert time.monotonic() - began < 5
    release.set()
    first.join(30)
    assert answers and answers[0] is not None and PYTEST in context_of(answers[0])
    helper.join(30)  # idle: it leaves
    assert not helper.is_alive() and not client.socket_path(root).exists()


def test_the_helper_is_free_again_before_its_reply_arrives(tmp_path: Path) -> None:
    """A hook that sends its next request as soon as it reads an answer never finds the
    helper busy: the worker frees itself before the reply goes out (it was freed after the
    reply was sent, and a version-upgrade request that came at once was refused as busy)."""
    import socket

    root = make_project(tmp_path, memories=(PYTEST,))
    worker = daemon._Worker(root)
    seen_busy: list[bool] = []

    class Reporting(socket.socket):
        """The helper's end: records whether the worker is still busy as its reply goes."""

        def sendall(self, data: Any, flags: int = 0) -> None:
            seen_busy.append(worker.busy.locked())
            super().sendall(data, flags)

    helper_end, hook_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    conn = Reporting(socket.AF_UNIX, socket.SOCK_STREAM, fileno=helper_end.detach())
    with hook_end:
        hook_end.sendall(json.dumps({"version": "0.0.0"}).encode("utf-8"))
        hook_end.shutdown(socket.SHUT_WR)
        worker.take(conn)
        reply = json.loads(hook_end.recv(65536))
    worker.finish()
    assert reply == {"ok": False, "reason": "version"}
    assert seen_busy == [False]  # free before the reply went out
    assert worker.upgraded


@pytest.mark.slow
def test_the_helper_leaves_when_the_project_state_goes(tmp_path: Path) -> None:
    root = make_project(tmp_path, memories=(PYTEST,))
    payload = {"session_id": "g1", "cwd": str(root), "source": "startup"}
    done = hook(
        "claude-code",
        "SessionStart",
        payload,
        cwd=root,
        SWARMMEM_HOOK_HELPER="1",
        SWARMMEM_HOOK_HELPER_IDLE="60",
    )
    assert done.returncode == 0 and PYTEST in context_of(done.stdout)
    sock = client.socket_path(root)
    assert _wait_for(sock.exists)  # the session start started the helper
    lock = root / ".swarm" / "hookd.lock"

    assert _helper_running(root)
    shutil.rmtree(root / ".swarm")
    # the helper notices within a few polls and leaves nothing behind
    assert _wait_for(lambda: not _helper_running(root), timeout=30)
    assert not sock.exists() and not lock.exists()


def test_the_helper_serves_every_hook_of_a_session(tmp_path: Path) -> None:
    """A stop hook with no helper running starts one (as a session start does), and the
    helper then files the next stop's proposals itself."""
    root = make_project(tmp_path, memories=(PYTEST,))
    base = {"session_id": "h1", "cwd": str(root), "transcript_path": ""}
    first = _proposal_reply("Seed data is loaded by src/app/db.py after migrations.")
    done = hook(
        "claude-code",
        "Stop",
        {**base, "last_assistant_message": first},
        cwd=root,
        SWARMMEM_HOOK_HELPER="1",
        SWARMMEM_HOOK_HELPER_IDLE="30",
    )
    assert done.returncode == 0
    assert json.loads(done.stdout) == {"systemMessage": FILED_ONE}
    sock = client.socket_path(root)
    try:
        assert _wait_for(sock.exists)  # the stop hook started the helper
        second = _proposal_reply("Migrations must be reversible; write a downgrade step.")
        payload = json.dumps({**base, "last_assistant_message": second})
        request = client.helper_request(root, "claude-code", "Stop", payload)
        answered = client.ask_helper(root, request)  # answered by the helper
        assert json.loads(answered) == {"systemMessage": FILED_ONE}
        with swarmmem.open(root) as mem:
            texts = sorted(
                p.proposed_record.text
                for p in mem.store.list_proposals("pending")
                if p.proposed_record is not None
            )
        assert texts == [
            "Migrations must be reversible; write a downgrade step.",
            "Seed data is loaded by src/app/db.py after migrations.",
        ]
    finally:
        shutil.rmtree(root / ".swarm" / "runs", ignore_errors=True)
        shutil.rmtree(root / ".swarm", ignore_errors=True)  # the helper leaves
        _wait_for(lambda: not _helper_running(root), timeout=30)


def _helper_running(root: Path) -> bool:
    probe = subprocess.run(
        ["pgrep", "-f", f"swarmmem.hooks.daemon {root}$"], capture_output=True, text=True
    )
    return bool(probe.stdout.strip())


def test_the_session_start_carries_the_reflection_lessons_when_reflection_is_on(
    tmp_path: Path,
) -> None:
    root = make_project(tmp_path, memories=(ALEMBIC,))
    config = root / ".opencode" / "opencode-swarm.json"
    section = json.loads(config.read_text(encoding="utf-8"))
    section["memory"]["reflection"] = {"enabled": True}
    config.write_text(json.dumps(section), encoding="utf-8")
    with swarmmem.open(root, context={"session_id": "work", "agent_role": "coder"}) as mem:
        memory_id = mem.list()[0].id
        for _ in range(2):
            mem.record_outcome(
                memory_id=memory_id, outcome="useful", anchors=[{"file": "src/app/db.py"}]
            )
    start = hook("claude-code", "SessionStart", {"session_id": "r1", "cwd": str(root)}, cwd=root)
    brief = context_of(start.stdout)
    assert brief.startswith("## Retrieved Swarm Memory")
    assert "\n\n[SWARM MEMORY REFLECTION — UNTRUSTED BACKGROUND]" in brief
    (event,) = run_log(root, "r1")
    assert event["type"] == "session_brief" and event["lessons"] is True
    # a prompt never regenerates or repeats the lessons
    prompt = hook(
        "claude-code",
        "UserPromptSubmit",
        {"session_id": "r1", "cwd": str(root), "prompt": "how are database migrations run?"},
        cwd=root,
    )
    assert "REFLECTION" not in context_of(prompt.stdout)


@pytest.mark.parametrize("run_id", ["..", ".", "...", "../..", "/..", "a/../../.."])
def test_a_run_id_never_leaves_the_runs_folder(tmp_path: Path, run_id: str) -> None:
    """Hostile: a run id of dots once named ``.swarm/runs/..`` and the run log landed in
    ``.swarm/memory.jsonl``. Such a context is refused at open, and the run log's folder of
    any id stays inside ``.swarm/runs`` (defence in depth)."""
    from swarmmem.adapters.files.runlog import run_log_path
    from swarmmem.core.model.errors import MemoryValidationError

    root = make_project(tmp_path, memories=(PYTEST,))
    with pytest.raises(MemoryValidationError, match="context run_id must be an identifier"):
        swarmmem.open(root, context={"session_id": "s", "run_id": run_id})
    runs = (root / ".swarm" / "runs").resolve()
    assert run_log_path(root, run_id).resolve().parent.parent == runs


# ------------------------------------------------------- how an agent learns to propose
def test_the_instruction_files_example_is_filed_by_the_real_stop_hook(tmp_path: Path) -> None:
    """The block ``init --agent`` writes into CLAUDE.md, copied by an agent into its reply,
    becomes a pending proposal through the Stop hook: the documented shape is the one read."""
    root = make_project(tmp_path)
    done = subprocess.run(
        [*SWARMMEM, "init", "--agent", "claude-code"],
        capture_output=True, text=True, cwd=root, env=env(), timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = (root / "CLAUDE.md").read_text(encoding="utf-8")
    section = text[text.index("<!-- BEGIN swarmmem") : text.index("<!-- END swarmmem -->")]
    block = section[section.index("```json\n") : section.rindex("```") + 3]
    (entry,) = json.loads(block.removeprefix("```json\n").removesuffix("```"))["memoryProposals"]
    cite(root, *entry["evidenceRefs"])  # the example cites files; this project has them

    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text(_transcript_row(f"Fixed the fixture.\n\n{block}\n"), encoding="utf-8")
    payload = {"session_id": "doc1", "cwd": str(root), "transcript_path": str(transcript)}
    stop = hook("claude-code", "Stop", payload, cwd=root)
    assert stop.returncode == 0
    assert json.loads(stop.stdout) == {"systemMessage": FILED_ONE}
    with swarmmem.open(root) as mem:
        (pending,) = mem.store.list_proposals("pending")
    assert pending.proposed_record is not None
    assert pending.proposed_record.text == entry["text"]
    assert pending.proposed_record.kind == entry["kind"]
    assert pending.evidence_refs == tuple(entry["evidenceRefs"])
    (filed,) = [e for e in run_log(root, "doc1") if e["type"] == "proposals_filed"]
    assert filed["proposalIds"] == [pending.id] and filed["rejected"] == []


def test_a_brief_ends_with_how_to_propose_and_the_mcp_instructions_name_both_ways(
    tmp_path: Path,
) -> None:
    from swarmmem.core.writes.service import json_objects
    from swarmmem.hooks.instructions import EXAMPLE_PROPOSAL, PROPOSE_LINE
    from swarmmem.mcp.descriptions import INSTRUCTIONS

    root = make_project(tmp_path)
    start = hook("claude-code", "SessionStart", {"session_id": "b1", "cwd": str(root)}, cwd=root)
    brief = context_of(start.stdout)
    assert brief.startswith("## Retrieved Swarm Memory") and ALEMBIC in brief
    assert brief.endswith("\n\n" + PROPOSE_LINE)
    assert "memoryProposals" in PROPOSE_LINE and "swarm_memory_propose" in PROPOSE_LINE

    empty = make_project(tmp_path / "empty", memories=())
    nothing = hook(
        "claude-code", "SessionStart", {"session_id": "b2", "cwd": str(empty)}, cwd=empty
    )
    assert (nothing.returncode, nothing.stdout) == (0, "")  # no brief, no line

    assert "swarm_memory_propose" in INSTRUCTIONS
    (block,) = json_objects(INSTRUCTIONS)
    assert block == {"memoryProposals": [EXAMPLE_PROPOSAL]}


# ------------------------------------------------- a bad configuration or input is said
def _break_config(root: Path, text: str | None = None) -> None:
    """Replace the project's configuration: ``text``, else the memory section with the typo
    ``embedings`` for ``embeddings``."""
    config = root / ".opencode" / "opencode-swarm.json"
    if text is None:
        data = json.loads(config.read_text(encoding="utf-8"))
        data["memory"]["embedings"] = {"enabled": True}
        text = json.dumps(data)
    config.write_text(text, encoding="utf-8")


def test_a_bad_configuration_is_said_once_per_session_where_the_person_is(
    tmp_path: Path,
) -> None:
    root = make_project(tmp_path)
    _break_config(root)
    prompt = {"session_id": "k1", "cwd": str(root), "prompt": "how are migrations run?"}
    first = hook("claude-code", "UserPromptSubmit", prompt, cwd=root)
    assert first.returncode == 0
    message = json.loads(first.stdout)["systemMessage"]  # what Claude Code shows the person
    assert "memory.embedings" in message and "did you mean memory.embeddings" in message
    assert str(root / ".opencode" / "opencode-swarm.json") in message
    assert "hookSpecificOutput" not in first.stdout  # nothing for the agent
    assert message in first.stderr
    # the rest of the session: the host's "nothing to add", and no more notes
    again = hook(
        "claude-code", "UserPromptSubmit", {**prompt, "prompt": "and the tests?"}, cwd=root
    )
    stop = hook("claude-code", "Stop", {"session_id": "k1", "cwd": str(root)}, cwd=root)
    for quiet in (again, stop):
        assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    events = run_log(root, "k1")
    assert [(e["type"], e["reason"], e["notified"]) for e in events] == [
        ("hook_skipped", "bad_config", True),
        ("hook_skipped", "bad_config", False),
        ("hook_skipped", "bad_config", False),
    ]
    assert events[0]["error"] == message and events[2]["event"] == "Stop"

    # another session is told again; hosts without a message field get stderr only
    gemini = hook("gemini", "BeforeAgent", {**prompt, "session_id": "k2"}, cwd=root)
    assert json.loads(gemini.stdout) == {"systemMessage": message}
    cursor = hook("cursor", "beforeSubmitPrompt", {**prompt, "session_id": "k3"}, cwd=root)
    assert cursor.stdout == '{"continue": true}' and message in cursor.stderr

    # a configuration that is not JSON is said the same way (it once read as "memory off")
    _break_config(root, '{"memory": {"enabled": true,')
    broken = hook("claude-code", "UserPromptSubmit", prompt, cwd=root)
    assert broken.returncode == 0
    assert "cannot read configuration" in json.loads(broken.stdout)["systemMessage"]
    assert run_log(root, "k1")[-1]["notified"] is True  # a new error is news


def test_stdin_that_is_not_json_is_logged_as_bad_input(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    for raw in ("how are migrations run?", "", "[1, 2]"):
        done = hook("claude-code", "UserPromptSubmit", raw, cwd=root)
        assert (done.returncode, done.stdout) == (0, ""), raw
    events = run_log(root, "unknown")
    assert [(e["type"], e["reason"]) for e in events] == [("hook_skipped", "bad_input")] * 3


@pytest.mark.slow
def test_a_configuration_broken_while_the_helper_is_warm_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_project(tmp_path, memories=(PYTEST,))
    start = hook(
        "claude-code",
        "SessionStart",
        {"session_id": "h0", "cwd": str(root), "source": "startup"},
        cwd=root,
        SWARMMEM_HOOK_HELPER="1",
        SWARMMEM_HOOK_HELPER_IDLE="60",
    )
    assert start.returncode == 0 and PYTEST in context_of(start.stdout)
    assert _wait_for(client.socket_path(root).exists)  # the helper is up, its library loaded
    try:
        _break_config(root)
        payload = json.dumps({"session_id": "h1", "cwd": str(root), "prompt": "run tests?"})
        request = client.helper_request(root, "claude-code", "UserPromptSubmit", payload)
        answer = client.ask_helper(root, request)  # the helper itself answers
        assert answer is not None
        message = json.loads(answer)["systemMessage"]
        assert "memory.embedings" in message
        assert message in capsys.readouterr().err  # the helper's note, printed by the hook
        # through the command line, for another session: the same, whether the helper or
        # the hook itself answers; then not JSON at all
        for session, text in (("h2", None), ("h3", '{"memory": ')):
            if text is not None:
                _break_config(root, text)
            done = hook(
                "claude-code",
                "UserPromptSubmit",
                payload.replace("h1", session),
                cwd=root,
                SWARMMEM_HOOK_HELPER="1",
            )
            assert done.returncode == 0
            note = json.loads(done.stdout)["systemMessage"]
            assert note in done.stderr and str(root) in note
        assert "cannot read configuration" in note
        assert [e["reason"] for s in ("h1", "h2", "h3") for e in run_log(root, s)] == [
            "bad_config"
        ] * 3
        assert _helper_running(root)  # a bad configuration never ends the helper
    finally:
        shutil.rmtree(root / ".swarm")  # the helper leaves when its project state goes
        assert _wait_for(lambda: not _helper_running(root), timeout=30)


def _actions_row(*tools: str) -> str:
    """A Claude Code transcript line: an assistant message calling ``tools``."""
    content = [
        {"type": "tool_use", "id": f"t{n}", "name": t, "input": {}} for n, t in enumerate(tools)
    ]
    return (
        json.dumps({"type": "assistant", "message": {"role": "assistant", "content": content}})
        + "\n"
    )


def test_a_session_that_worked_and_proposed_nothing_is_asked_once(tmp_path: Path) -> None:
    """The Stop hook of a session that edited files and ran commands and proposed nothing asks
    the agent once (``decision: block``) to propose what it learned, with the propose line;
    never while the agent is already going on because of it, never twice in a session."""
    from swarmmem.core.recall.session import NUDGE_LINE
    from swarmmem.hooks.instructions import PROPOSE_LINE

    root = make_project(tmp_path)
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text(
        _actions_row("Read", "Edit") + _actions_row("Bash") + _transcript_row("Fixed it."),
        encoding="utf-8",
    )
    base = {"session_id": "n1", "cwd": str(root), "transcript_path": str(transcript)}
    stop = hook("claude-code", "Stop", {**base, "stop_hook_active": False}, cwd=root)
    assert stop.returncode == 0
    assert json.loads(stop.stdout) == {
        "decision": "block",
        "reason": f"{NUDGE_LINE} {PROPOSE_LINE}",
    }
    # the agent answers "nothing to keep": its stop hook runs again with stop_hook_active
    with transcript.open("a", encoding="utf-8") as out:
        out.write(_actions_row("Edit", "Bash") + _transcript_row("Nothing durable to keep."))
    again = hook("claude-code", "Stop", {**base, "stop_hook_active": True}, cwd=root)
    assert (again.returncode, again.stdout) == (0, "")
    # later work in the same session: it was asked once already
    with transcript.open("a", encoding="utf-8") as out:
        out.write(_actions_row("Write", "Bash", "Bash"))
    later = hook("claude-code", "Stop", {**base, "stop_hook_active": False}, cwd=root)
    assert (later.returncode, later.stdout) == (0, "")
    stops = [e for e in run_log(root, "n1") if e["type"].startswith("proposals")]
    assert [e.get("nudged", False) for e in stops] == [True, False, False]


NO_NUDGE = {"proposeNudge": False}


@pytest.mark.parametrize(
    ("case", "rows", "host", "event", "memory"),
    [
        # one command and reads only: a trivial session is never asked
        ("trivial", ["Read", "Grep", "Bash"], "claude-code", "Stop", {}),
        # the person turned it off
        ("off", ["Edit", "Bash"], "claude-code", "Stop", {"recall": {"sessionBrief": NO_NUDGE}}),
        # Gemini CLI's AfterAgent cannot keep the agent going
        ("gemini", ["Edit", "Bash"], "gemini", "AfterAgent", {}),
    ],
)  # fmt: skip
def test_no_nudge_for_a_trivial_session_when_off_or_where_the_host_cannot(
    tmp_path: Path, case: str, rows: list[str], host: str, event: str, memory: dict[str, Any]
) -> None:
    root = make_project(tmp_path)
    write_memory_config(root, {"enabled": True, "projectId": "proj_00000000000000aa", **memory})
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text("".join(_actions_row(r) for r in rows), encoding="utf-8")
    base = {"session_id": case, "cwd": str(root), "transcript_path": str(transcript)}
    stop = hook(host, event, base, cwd=root)
    assert stop.returncode == 0, stop.stderr
    assert "decision" not in stop.stdout and "propose" not in stop.stdout
    (filed,) = [e for e in run_log(root, case) if e["type"].startswith("proposals")]
    assert filed["type"] == "proposals_none" and "nudged" not in filed


def test_the_agent_hears_what_became_of_its_proposals_in_its_next_context(
    tmp_path: Path,
) -> None:
    """What the Stop hook filed, found already known or refused is said once in front of the
    next prompt's context; a duplicate is never logged as filed."""
    root = make_project(tmp_path)
    base = {"session_id": "f1", "cwd": str(root), "transcript_path": ""}
    reply = _proposal_reply("Seed data is loaded by src/app/db.py after migrations.")
    stop = hook("claude-code", "Stop", {**base, "last_assistant_message": reply}, cwd=root)
    assert json.loads(stop.stdout) == {"systemMessage": FILED_ONE}
    prompt = {**base, "prompt": "how do I run the alembic migrations?"}
    first = hook("claude-code", "UserPromptSubmit", prompt, cwd=root)
    context = json.loads(first.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith(FILED_ONE + "\n\n") and ALEMBIC in context
    second = hook("claude-code", "UserPromptSubmit", {**prompt, "prompt": "and pytest?"}, cwd=root)
    assert FILED_ONE not in second.stdout  # said once

    # another session proposes the same fact: closed at once as a duplicate, never "filed"
    (pending,) = [e for e in run_log(root, "f1") if e["type"] == "proposals_filed"]
    other = {**base, "session_id": "f2", "last_assistant_message": reply}
    dup = hook("claude-code", "Stop", other, cwd=root)
    original = pending["proposalIds"][0]
    assert json.loads(dup.stdout) == {
        "systemMessage": f"swarmmem memoryProposals: 1 already known ({original})."
    }
    (refused,) = [e for e in run_log(root, "f2") if e["type"].startswith("proposals")]
    assert refused["type"] == "proposals_refused" and refused["proposalIds"] == []
    assert [d["duplicateOf"] for d in refused["duplicates"]] == [original]

"""Trusted memory management: list, get, inspect (show), forget (and purge), and the curator's
delete decision, through the Python API and the command line.

Scope isolation is checked on two repositories sharing one SQLite file; a purge is checked
on the bytes of the SQLite database (and its write-ahead log) and of the JSONL files.
"""

from __future__ import annotations

import datetime as dt
import inspect
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from factories import BASE_TIME, cli, curate_fact, propose_fact

import swarmmem
from swarmmem.core.maintenance.management import MEMORY_STATES
from swarmmem.core.model.errors import (
    ConflictError,
    MemoryDisabledError,
    MemoryValidationError,
    NotFoundError,
    ScopeError,
)
from swarmmem.core.model.ids import to_iso
from swarmmem.core.model.records import CURATOR_ACTIONS
from swarmmem.ports.clock import FixedClock

# a fact whose words appear nowhere else, so its bytes can be searched for after a purge
SECRET = "Zanzibarquux tokens rotate every Tuesday at noon"
TOKEN = b"zanzibarquux"
UNKNOWN = "mem_0000000000000000"
NOW = BASE_TIME + dt.timedelta(days=30)


def at(days: float) -> str:
    """An ISO time ``days`` after 2026-01-01 (the clock of these tests stands at day 30)."""
    return to_iso(BASE_TIME + dt.timedelta(days=days))


def make_project(parent: Path, name: str, **memory: Any) -> Path:
    """A project folder whose configuration turns memory on with project id ``name``."""
    root = parent / name
    (root / ".opencode").mkdir(parents=True)
    config = {"memory": {"enabled": True, "projectId": name, **memory}}
    (root / ".opencode" / "opencode-swarm.json").write_text(json.dumps(config), "utf-8")
    return root


def open_memory(root: Path, **context: Any) -> Any:
    """The project's memory on a clock stopped at :data:`NOW`."""
    return swarmmem.open(root, context=context or None, clock=FixedClock(NOW))


def cli_json(root: Path, *args: str) -> Any:
    result = cli(root, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def ids(records: Any) -> list[str]:
    return [r.id for r in records]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path, "shop")


@pytest.fixture
def mem(project: Path) -> Iterator[Any]:
    with open_memory(project) as opened:
        yield opened


def imported(mem: Any, *rows: dict[str, Any]) -> list[str]:
    """Write ``rows`` with the trusted import (ids derived) and return their ids in order."""
    result = mem.import_records(
        {"kind": "project_fact", "createdAt": at(1), "updatedAt": at(1), **row} for row in rows
    )
    assert result.refused == ()
    listed = mem.list(state="all", limit=500)
    by_text = {r.text: r.id for r in listed}
    return [by_text[row["text"]] for row in rows]


# ----------------------------------------------------------------------------- list
class TestList:
    def test_newest_update_first_then_id_and_paged(self, mem: Any) -> None:
        """Records come newest update first (ties by id); limit and offset page through."""
        rows = [{"text": f"fact number {i}", "updatedAt": at(1 + i % 4)} for i in range(7)]
        imported(mem, *rows)
        listed = mem.list()
        keys = [(r.updated_at, r.id) for r in listed]
        assert keys == sorted(keys, key=lambda k: (-_ms(k[0]), k[1]))
        assert len(listed) == 7
        pages = [mem.list(limit=3, offset=o) for o in (0, 3, 6, 9)]
        assert [len(p) for p in pages] == [3, 3, 1, 0]
        assert [r.id for page in pages for r in page] == ids(listed)

    @pytest.mark.parametrize(
        ("options", "message"),
        [
            ({"limit": 0}, "limit must be an integer from 1 to 500; got 0"),
            ({"limit": 501}, "limit must be an integer from 1 to 500; got 501"),
            ({"limit": True}, "limit must be an integer from 1 to 500; got True"),
            ({"limit": "5"}, "limit must be an integer from 1 to 500; got '5'"),
            ({"offset": -1}, "offset must be an integer of at least 0; got -1"),
            ({"state": "gone"}, "state must be one of active, suppressed, .*; got 'gone'"),
            ({"kind": "fact"}, "kind must be one of .*; got 'fact'"),
            ({"scope": "galaxy"}, "scope must be one of .*; got 'galaxy'"),
            ({"tag": " "}, "tag must be a non-empty string"),
            ({"created_since": "yesterday"}, "created_since must be an ISO-8601 datetime"),
            ({"updated_since": "2026-13-01"}, "updated_since must be an ISO-8601 datetime"),
        ],
    )
    def test_bad_filters_and_paging_are_named(
        self, mem: Any, options: dict[str, Any], message: str
    ) -> None:
        with pytest.raises(MemoryValidationError, match=message):
            mem.list(**options)

    def test_each_state_selects_exactly_its_memories(self, mem: Any) -> None:
        """active, suppressed (Q below the threshold), superseded, deleted, expired, all."""
        active, low, old, gone, stale = imported(
            mem,
            {"text": "an active fact"},
            {"text": "a fact that learned a low value", "metadata": {"qValue": 0.05}},
            {"text": "a fact replaced later", "supersededBy": "mem_1111111111111111"},
            {"text": "a fact deleted", "metadata": {"deleted": True, "deleteReason": "x"}},
            {
                "text": "a scratch note",
                "kind": "scratch",
                "createdAt": at(18),
                "updatedAt": at(18),
                "expiresAt": at(20),
            },
        )
        expected = {
            "active": [active],
            "suppressed": [low],
            "superseded": [old],
            "deleted": [gone],
            "expired": [stale],
        }
        for state, wanted in expected.items():
            assert ids(mem.list(state=state)) == wanted, state
        assert sorted(ids(mem.list(state="all"))) == sorted([active, low, old, gone, stale])
        assert set(expected) | {"all"} == set(MEMORY_STATES)
        assert mem.runtime.management.state_of(mem.get(low)) == "suppressed"

    def test_filters_by_kind_tag_file_and_time(self, mem: Any) -> None:
        """kind, tag (any case), anchored file (metadata.files, source file or anchor, with or
        without ./), created and updated since an ISO time."""
        lint, test, anchored, recent = imported(
            mem,
            {"text": "lint with ruff", "kind": "repo_convention", "tags": ["lint"]},
            {
                "text": "tests use pytest",
                "kind": "test_pattern",
                "metadata": {"files": ["tests/conftest.py"]},
            },
            {"text": "the api client retries", "anchors": [{"file": "src/api/client.py"}]},
            {
                "text": "config is validated at load",
                "source": {"type": "file", "filePath": "src/config.py"},
                "createdAt": at(10),
                "updatedAt": at(12),
            },
        )
        assert ids(mem.list(kind="repo_convention")) == [lint]
        assert ids(mem.list(tag="LINT")) == [lint]
        assert ids(mem.list(file="./tests/conftest.py")) == [test]
        assert ids(mem.list(file="src/api/client.py")) == [anchored]
        assert ids(mem.list(file="src/config.py")) == [recent]
        assert ids(mem.list(file="src/other.py")) == []
        assert ids(mem.list(created_since=at(5))) == [recent]
        assert ids(mem.list(updated_since=at(11))) == [recent]
        assert ids(mem.list(updated_since=at(13))) == []
        assert set(ids(mem.list(kind="project_fact", created_since=at(0)))) == {anchored, recent}

    def test_scope_filter_stays_within_the_context(self, tmp_path: Path) -> None:
        """A scope type selects the memories of that scope of this context; a type the
        context does not have is refused, naming the ones it has."""
        project = make_project(tmp_path, "shop", workspace={"shared": True})
        with open_memory(project, agent_role="coder") as mem:
            workspace = mem.runtime.allowed_scopes[0].as_dict()
            repo_fact, shared_fact = imported(
                mem, {"text": "a repository fact"}, {"text": "a shared fact", "scope": workspace}
            )
            assert ids(mem.list(scope="repository")) == [repo_fact]
            assert ids(mem.list(scope="workspace")) == [shared_fact]
            assert ids(mem.list(scope="agent")) == []
            with pytest.raises(ScopeError, match=r"scope run is not one of .*\(workspace, "):
                mem.list(scope="run")


def _ms(iso: str) -> float:
    return dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


# ---------------------------------------------------------------------- get, inspect
class TestGetAndInspect:
    def test_get_reads_any_state_and_refuses_unknown_ids(self, mem: Any) -> None:
        (gone,) = imported(mem, {"text": "a fact deleted", "metadata": {"deleted": True}})
        assert mem.get(gone).deleted
        with pytest.raises(NotFoundError, match=f"^memory {UNKNOWN} was not found$"):
            mem.get(UNKNOWN)
        with pytest.raises(NotFoundError, match=r"^memory not-an-id was not found$"):
            mem.get("not-an-id")

    def test_inspect_gathers_what_is_known_about_a_memory(self, project: Path) -> None:
        """Provenance, outcomes, Q history, relations, proposals and audit events."""
        with open_memory(project, session_id="s-1", agent_role="coder") as mem:
            first = curate_fact(mem, "the cache is warmed at boot")
            second = curate_fact(mem, "the cache warmer runs hourly")
            mem.record_outcome(memory_id=first, outcome="useful")
            mem.recall("when is the cache warmed")
            mem.record_verdict("APPROVE", swarm_id="sw", task_or_phase="t1", round_number=1)
            merge = mem.propose(
                operation="merge", rationale="same topic", related_memory_ids=[first, second]
            )
            mem.curate(merge.id, "merge")
            details = mem.inspect(first)
        assert details.memory_id == first and details.state == "active"
        assert details.record["text"] == "the cache is warmed at boot"
        prov = details.provenance
        assert prov["producer_session_id"] == "s-1" and prov["producer_agent_role"] == "coder"
        assert prov["source"] == {"type": "file", "filePath": "pyproject.toml"}
        assert len(prov["content_hash"]) == 64
        assert [o["outcome"]["outcome"] for o in details.outcomes] == ["useful"]
        assert [e["verdict"] for e in details.q_history] == ["OUTCOME:useful", "APPROVE"]
        assert details.q_value == details.q_history[-1]["qAfter"]
        assert details.relations == [second]
        assert merge.id in details.proposals and len(details.proposals) == 2
        operations = [e["operation"] for e in details.audit]
        assert {"proposal", "upsert", "curator_decision"} <= set(operations)
        assert all(
            e["target_id"] in {first, *details.proposals} or first in json.dumps(e["event"])
            for e in details.audit
        )


# ----------------------------------------------------------------------------- forget
class TestForget:
    def test_forget_tombstones_with_a_redacted_audited_reason(self, mem: Any) -> None:
        memory_id = curate_fact(mem, "the build uses make")
        result = mem.forget(memory_id, reason="wrong; key AKIAABCDEFGHIJKLMNOP leaked")
        assert result.purged is False and result.to_json()["success"]
        assert "AKIAABCDEFGHIJKLMNOP" not in result.reason
        tomb = mem.get(memory_id)
        assert tomb.deleted and tomb.metadata["deleteReason"] == result.reason
        assert mem.list() == [] and ids(mem.list(state="deleted")) == [memory_id]
        delete = [e for e in mem.store.list_events() if e.operation == "delete"]
        assert [(e.target_id, e.reason) for e in delete] == [(memory_id, result.reason)]
        assert mem.recall("how is the project built").items == ()
        with pytest.raises(ConflictError, match="already forgotten"):
            mem.forget(memory_id, reason="again")

    @pytest.mark.parametrize("reason", ["", "   ", None, "x" * 2001])
    def test_a_reason_is_required(self, mem: Any, reason: Any) -> None:
        memory_id = curate_fact(mem, "the build uses make")
        with pytest.raises(MemoryValidationError, match="reason"):
            mem.forget(memory_id, reason=reason)
        assert not mem.get(memory_id).deleted

    def test_unknown_ids_are_not_found(self, mem: Any) -> None:
        for purge in (False, True):
            with pytest.raises(NotFoundError, match=f"^memory {UNKNOWN} was not found$"):
                mem.forget(UNKNOWN, reason="x", purge=purge)

    def test_purge_erases_the_text_from_the_sqlite_file_and_its_log(self, project: Path) -> None:
        """After a purge the fact is in neither the database file nor its -wal: not in the
        record, the full-text index, the proposal, a quoting correction or a quoting query;
        the audit chain still verifies and records the purge without the text."""
        with open_memory(project, session_id="s-1") as mem:
            memory_id = curate_fact(mem, SECRET, rationale=f"as in: {SECRET}")
            mem.forget(memory_id, reason="first a tombstone")  # then the purge of a tombstone
            other = curate_fact(mem, "tokens are issued by the auth service")
            mem.record_outcome(memory_id=other, outcome="corrected", correction=f"no, {SECRET}")
            mem.recall(f"is it true that {SECRET.lower()}?")
            mem.recall("who issues tokens")
            result = mem.forget(memory_id, reason="leaked a rotation schedule", purge=True)
            # the fact's own proposal and the proposal the quoting correction filed
            assert result.scrubbed == {"proposals": 2, "outcomes": 1, "recallUsage": 1}
            with pytest.raises(NotFoundError):
                mem.get(memory_id)
            assert memory_id not in ids(mem.list(state="all"))
            assert mem.get(other).outcomes[0].correction == "[PURGED]"
            purge = [e for e in mem.store.list_events() if e.operation == "purge"]
            assert len(purge) == 1 and purge[0].target_id == memory_id
            assert json.loads(purge[0].event_json)["memoryId"] == memory_id
            db = mem.runtime.sqlite_path
            wal = db.with_name(db.name + "-wal")
            assert wal.exists()  # the store is still open: its log is there, and clean
            for path in (db, wal):
                assert TOKEN not in path.read_bytes().lower(), path
        for path in (db, wal):
            if path.exists():
                assert TOKEN not in path.read_bytes().lower(), path
        assert db.stat().st_size > 0
        verified = cli_json(project, "audit-verify")
        assert verified["verified"] is True and verified["headMatch"] is True

    def test_purge_erases_the_text_from_every_jsonl_file(self, tmp_path: Path) -> None:
        """The JSONL provider rewrites its files: no line of any file keeps the fact."""
        project = make_project(tmp_path, "shop", provider="local-jsonl")
        with open_memory(project) as mem:
            memory_id = curate_fact(mem, SECRET)
            mem.recall(SECRET)
            mem.forget(memory_id, reason="leaked", purge=True)
            directory = mem.storage_dir
        files = sorted(directory.glob("*.jsonl"))
        assert {f.name for f in files} >= {"memories.jsonl", "proposals.jsonl", "audit.jsonl"}
        for path in files:
            assert TOKEN not in path.read_bytes().lower(), path
        with open_memory(project) as mem:
            assert mem.list(state="all") == []
            assert mem.store.load_report == []

    def test_a_reason_quoting_the_text_is_not_kept(self, mem: Any) -> None:
        """The audit log keeps reasons, so a purge reason quoting the fact becomes [PURGED]."""
        memory_id = curate_fact(mem, SECRET)
        result = mem.forget(memory_id, reason=f"remove '{SECRET}' now", purge=True)
        assert result.reason == "[PURGED]"
        assert all("zanzibarquux" not in (e.reason or "").lower() for e in mem.store.list_events())

    def test_purge_drops_the_vector(self, tmp_path: Path) -> None:
        """With embeddings on, the purged memory's vector leaves the index too."""
        embeddings = {"enabled": True, "provider": "hashing", "dimension": 64}
        project = make_project(tmp_path, "shop", embeddings=embeddings)
        with open_memory(project) as mem:
            memory_id = curate_fact(mem, SECRET)
            index = mem.runtime.write_dense().index
            assert memory_id in index.ids()
            mem.forget(memory_id, reason="leaked", purge=True)
            assert memory_id not in index.ids()

    def test_disabled_memory_manages_nothing(self, tmp_path: Path) -> None:
        project = make_project(tmp_path, "shop", enabled=False)
        with open_memory(project) as mem:
            for call in (
                lambda: mem.list(),
                lambda: mem.get(UNKNOWN),
                lambda: mem.inspect(UNKNOWN),
                lambda: mem.forget(UNKNOWN, reason="x"),
            ):
                with pytest.raises(MemoryDisabledError):
                    call()
        result = cli(project, "list")
        assert result.exit_code == 1

    def test_disabled_memory_decides_nothing_and_injects_nothing(self, tmp_path: Path) -> None:
        """The facade methods that are a service's method check that memory is on at each
        call: a decision or a verdict is refused, an injection is skipped."""
        project = make_project(tmp_path, "shop", enabled=False)
        with open_memory(project) as mem:
            curate, verdict = mem.curate, mem.record_verdict  # taken, not called
            with pytest.raises(MemoryDisabledError):
                curate("prop_missing", "add")
            with pytest.raises(MemoryDisabledError):
                verdict("APPROVE", swarm_id="s", task_or_phase="t", round_number=1)
            assert mem.inject(agent_task="deploy the shop") is None
            assert mem.inject_blocks(agent_task="deploy the shop") == []

    def test_service_methods_keep_their_signature_and_docstring(self, tmp_path: Path) -> None:
        """``help()`` on the facade shows the service method's parameters (without ``self``)
        and its docstring."""
        with open_memory(make_project(tmp_path, "shop")) as mem:
            for name in ("curate", "inject", "record_verdict"):
                method = getattr(mem, name)
                service_method = getattr(type(mem), name).__wrapped__
                shown = inspect.signature(method)
                assert "self" not in shown.parameters
                assert (
                    list(shown.parameters) == list(inspect.signature(service_method).parameters)[1:]
                )
                assert method.__doc__ and method.__doc__ == service_method.__doc__


# ------------------------------------------------------------------ scope isolation
@pytest.fixture
def two_repos(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Repositories ``a`` and ``b`` sharing one SQLite file (placed by the environment), each
    with one memory."""
    monkeypatch.setenv("SWARMMEM_SQLITE_PATH", str(tmp_path / "shared" / "memory.db"))
    roots = {name: make_project(tmp_path / name, name) for name in ("a", "b")}
    facts = {}
    for name, root in roots.items():
        with open_memory(root) as mem:
            facts[name] = curate_fact(mem, f"repository {name} deploys with {name}-tool")
    return {"roots": roots, "facts": facts}


class TestScopeIsolation:
    def test_the_library_never_sees_or_touches_the_other_repository(
        self, two_repos: dict[str, Any]
    ) -> None:
        a, b = two_repos["roots"]["a"], two_repos["roots"]["b"]
        mine, theirs = two_repos["facts"]["a"], two_repos["facts"]["b"]
        with open_memory(a) as mem:
            assert mem.store.count() == 2  # one file holds both repositories
            assert ids(mem.list(state="all")) == [mine]
            for call in (
                lambda i: mem.get(i),
                lambda i: mem.inspect(i),
                lambda i: mem.forget(i, reason="not mine"),
                lambda i: mem.forget(i, reason="not mine", purge=True),
            ):
                errors = []
                for memory_id in (theirs, UNKNOWN):
                    with pytest.raises(NotFoundError) as caught:
                        call(memory_id)
                    errors.append(str(caught.value).replace(memory_id, "<id>"))
                assert errors[0] == errors[1] == "memory <id> was not found"
            proposal = mem.propose(operation="delete", target_memory_id=theirs, rationale="x")
            with pytest.raises(NotFoundError, match="target memory was not found"):
                mem.curate(proposal.id, "delete", reason="not mine")
        with open_memory(b) as mem:
            record = mem.get(theirs)
            assert record.active and ids(mem.list()) == [theirs]
            assert [e.operation for e in mem.store.list_events() if e.target_id == theirs] == [
                "upsert"
            ]

    def test_a_decision_of_the_other_repository_cannot_be_undone(
        self, two_repos: dict[str, Any]
    ) -> None:
        """Undo reads the proposal through this repository's view: another's decision is not
        found, exactly like an unknown id, and its memory stays."""
        a, b = two_repos["roots"]["a"], two_repos["roots"]["b"]
        theirs = two_repos["facts"]["b"]
        with open_memory(b) as mem:
            (decided,) = [p for p in mem.proposals(None) if p.status == "applied"]
        with open_memory(a) as mem:
            pending = len(mem.store.list_proposals("pending"))
            for proposal_id in (decided.id, "prop_0000000000000000"):
                with pytest.raises(NotFoundError, match=f"proposal {proposal_id} was not found"):
                    mem.undo_decision(proposal_id)
            assert len(mem.store.list_proposals("pending")) == pending
        with open_memory(b) as mem:
            assert mem.get(theirs).active
            assert "undoneBy" not in mem.proposal(decided.id).metadata

    def test_the_command_line_never_sees_or_touches_the_other_repository(
        self, two_repos: dict[str, Any]
    ) -> None:
        a, b = two_repos["roots"]["a"], two_repos["roots"]["b"]
        mine, theirs = two_repos["facts"]["a"], two_repos["facts"]["b"]
        listed = cli_json(a, "list", "--state", "all")
        assert [m["memory_id"] for m in listed["memories"]] == [mine]
        for args in (
            ("show",),
            ("forget", "--reason", "not mine"),
            ("forget", "--reason", "not mine", "--purge"),
        ):
            outputs = []
            for memory_id in (theirs, UNKNOWN):
                result = cli(a, *args[:1], memory_id, *args[1:], "--json")
                assert result.exit_code == 2, result.output
                outputs.append(result.stdout.replace(memory_id, "<id>"))
            assert outputs[0] == outputs[1]
            assert json.loads(outputs[0])["error"] == "not_found"
        assert cli_json(b, "show", theirs)["state"] == "active"
        assert cli_json(a, "audit-verify")["verified"] is True


# ---------------------------------------------------------------- the delete decision
class TestDeleteDecision:
    def test_curate_delete_tombstones_the_target(self, mem: Any) -> None:
        memory_id = curate_fact(mem, "the build uses make")
        proposal = mem.propose(operation="delete", target_memory_id=memory_id, rationale="moved")
        change = mem.curate(proposal.id, "delete", reason="the build moved to just")
        assert (change.action, change.target_memory_id) == ("delete", memory_id)
        tomb = mem.get(memory_id)
        assert tomb.deleted and tomb.metadata["deleteReason"] == "the build moved to just"
        assert mem.store.get_proposal(proposal.id).status == "applied"
        operations = [(e.operation, e.target_id) for e in mem.store.list_events()][-3:]
        assert operations == [
            ("delete", memory_id),
            ("proposal", proposal.id),
            ("curator_decision", proposal.id),
        ]

    def test_curate_delete_from_the_command_line(self, project: Path) -> None:
        assert "delete" in CURATOR_ACTIONS
        with open_memory(project) as mem:
            memory_id = curate_fact(mem, "the build uses make")
            proposal = mem.propose(operation="delete", target_memory_id=memory_id, rationale="x")
        result = cli(project, "curate", proposal.id, "delete", "--reason", "obsolete")
        assert result.exit_code == 0, result.output
        assert result.stdout.strip() == f"Applied delete to {proposal.id} -> {memory_id}"
        assert cli_json(project, "show", memory_id)["state"] == "deleted"
        again = cli(project, "curate", proposal.id, "delete", "--reason", "obsolete")
        assert again.exit_code == 2 and "not pending" in again.stderr


# ------------------------------------------------------------------------ command line
class TestCommandLine:
    def test_list_prints_one_line_per_memory(self, project: Path) -> None:
        long_text = "The release checklist " + "covers every step " * 8
        with open_memory(project) as mem:
            short = curate_fact(mem, "the build uses make", kind="repo_convention")
            long = curate_fact(mem, long_text.strip())
            updated = {r.id: r.updated_at for r in mem.list()}
        lines = cli(project, "list").stdout.splitlines()
        assert len(lines) == 2
        first = next(line for line in lines if line.startswith(short))
        assert first.split() == [
            short,
            "repo_convention",
            "active",
            updated[short],
            "the",
            "build",
            "uses",
            "make",
        ]
        second = next(line for line in lines if line.startswith(long))
        assert second.endswith("…") and long_text[:79] in second
        assert len(second.split("  ")[-1]) == 80
        data = cli_json(project, "list", "--kind", "repo_convention")
        assert [m["memory_id"] for m in data["memories"]] == [short]
        assert data["memories"][0]["state"] == "active" and data["count"] == 1
        paged = cli(project, "list", "--limit", "1")
        assert "(more may follow: --offset 1)" in paged.stdout
        assert cli(project, "list", "--state", "deleted").stdout.strip() == (
            "No deleted memories match."
        )

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            (("list", "--limit", "0"), "0 is not in the range 1<=x<=500"),
            (("list", "--limit", "501"), "501 is not in the range 1<=x<=500"),
            (("list", "--offset", "-1"), "-1 is not in the range x>=0"),
            (("list", "--state", "gone"), "'gone' is not one of"),
            (("list", "--since", "yesterday"), "'yesterday' is not an ISO-8601 time"),
            (("list", "--updated-since", "soon"), "'soon' is not an ISO-8601 time"),
            (("list", "--scope", "run"), "scope run is not one of this context's scopes"),
            (("forget", UNKNOWN), "Missing option '--reason'"),
            (("forget", UNKNOWN, "--reason", " "), "reason is required"),
            (("show", UNKNOWN), f"memory {UNKNOWN} was not found"),
        ],
    )
    def test_bad_input_exits_2_naming_the_problem(
        self, project: Path, args: tuple[str, ...], message: str
    ) -> None:
        result = cli(project, *args)
        assert result.exit_code == 2
        assert message in result.output

    def test_show_and_forget(self, project: Path) -> None:
        with open_memory(project, agent_role="coder") as mem:
            memory_id = curate_fact(mem, SECRET)
            mem.record_outcome(memory_id=memory_id, outcome="useful")
        shown = cli(project, "show", memory_id)
        assert shown.exit_code == 0
        text = shown.stdout
        assert text.splitlines()[:2] == [f"{memory_id}  project_fact  active", SECRET]
        for part in (
            "- Source: file pyproject.toml",
            "- Producer: role coder",
            "- Content hash: ",
            "Q value 0.550 (1 reward)",
            "Outcomes (1)",
            "useful",
            "Audit events (",
            "curator_decision",
        ):
            assert part in text, part
        details = cli_json(project, "show", memory_id)
        assert set(details) >= {"record", "provenance", "outcomes", "q_history", "audit"}

        forgot = cli(project, "forget", memory_id, "--reason", "stale")
        assert forgot.exit_code == 0
        assert forgot.stdout.startswith(f"Forgot {memory_id}: it is a tombstone now")
        assert cli_json(project, "list", "--state", "deleted")["count"] == 1
        assert cli_json(project, "audit-verify")["verified"] is True
        purged = cli_json(project, "forget", memory_id, "--reason", "leaked", "--purge")
        assert purged["purged"] is True
        assert purged["scrubbed"] == {"proposals": 1, "outcomes": 0, "recallUsage": 0}
        assert cli(project, "show", memory_id).exit_code == 2
        assert cli_json(project, "audit-verify")["verified"] is True
        assert cli(project, "list", "--state", "all").stdout.strip() == "No memories match."

    def test_purge_text(self, project: Path) -> None:
        with open_memory(project) as mem:
            memory_id = curate_fact(mem, SECRET)
            proposal = propose_fact(mem, "Another fact", rationale=f"see {SECRET}")
        result = cli(project, "forget", memory_id, "--reason", "leaked", "--purge")
        assert result.exit_code == 0
        assert result.stdout.strip() == (
            f"Purged {memory_id}: the record is erased and its text scrubbed from 2 proposals, "
            "0 outcome events and 0 recall usage rows. The audit log records the purge by id "
            "and counts, without the text."
        )
        with open_memory(project) as mem:
            assert mem.store.get_proposal(proposal.id).rationale == "[PURGED]"

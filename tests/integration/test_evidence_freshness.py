"""Evidence checked at propose time and kept true at recall time, on every provider: a bad
file, line, symbol or commit ref is refused naming it (nothing stored); a memory's cited files
are fingerprinted when it is written, and every recall item says whether they still match."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from factories import enabled_config

import swarmmem
from swarmmem.adapters.files import sources as source_files
from swarmmem.adapters.files.sources import RepositorySources, parse_file_ref
from swarmmem.core.model.errors import MemoryValidationError

PROVIDERS = ["memory", "local-jsonl", "sqlite", "postgres"]
RETRY = "def retry(call, times=3):\n    return call()\n\n\ndef backoff():\n    return 2\n"


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "retry.py").write_text(RETRY, encoding="utf-8")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("x = 1\n", encoding="utf-8")
    (root / ".gitignore").write_text("build/\n.swarm/\n", encoding="utf-8")
    (tmp_path / "outside.py").write_text("secret = 1\n", encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    return root


@pytest.fixture(params=PROVIDERS)
def config(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    return enabled_config(request.param, tmp_path)


@pytest.fixture
def mem(repo: Path, config: dict[str, Any]) -> Iterator[Any]:
    with swarmmem.open(repo, config, context={"session_id": "s1", "agent_role": "coder"}) as m:
        yield m


def propose(mem: Any, *refs: str, text: str = "retry() retries a call three times.") -> Any:
    return mem.propose(
        operation="add",
        kind="code_pattern",
        text=text,
        rationale="read the code",
        evidence_refs=list(refs),
    )


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("does/not/exist.py", "names no file of the repository"),
        ("src/retry.py:99", "cites line 99, but src/retry.py has 6 lines"),
        ("src/retry.py:2-40", "cites lines 2-40"),
        ("src/retry.py#teleport", "teleport does not occur in it"),
        ("build/out.py", "is a file git ignores"),
        ("../outside.py", "must be a path relative to the project root, inside it"),
        ("/etc/passwd", "must be a path relative to the project root, inside it"),
        ("src", "is not a regular file"),
        ("0123456789abcdef0123456789abcdef01234567", "is not a commit of this repository"),
        ("house rule", "names no file of the repository"),
    ],
)
def test_a_bad_reference_is_refused_naming_it(mem: Any, ref: str, message: str) -> None:
    with pytest.raises(MemoryValidationError, match=message) as caught:
        propose(mem, "src/retry.py", ref)
    assert repr(ref) in str(caught.value)
    assert mem.store.list_proposals() == []  # nothing stored


def test_good_references_of_every_form_pass(mem: Any, repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    prop = propose(
        mem,
        "src/retry.py",
        "src/retry.py:1",
        "src/retry.py:1-2",
        "src/retry.py#retry",
        "src/retry.py:5#backoff",
        head,
        head[:10],
        "https://example.com/retry",
        "manual:agreed in standup",
    )
    assert prop.status == "pending"


def test_a_symlink_out_of_the_project_is_refused(mem: Any, repo: Path) -> None:
    (repo / "src" / "escape.py").symlink_to(repo.parent / "outside.py")
    with pytest.raises(MemoryValidationError, match="inside it"):
        propose(mem, "src/escape.py")


def status_of(mem: Any, query: str = "how many times does retry retry a call") -> dict[str, str]:
    bundle = mem.recall(query)
    return {item.record.id: item.evidence_status for item in bundle.items}


def test_recall_says_whether_the_cited_files_still_match(mem: Any, repo: Path) -> None:
    whole = mem.curate(propose(mem, "src/retry.py").id, "add").memory_id
    symbol = mem.curate(
        propose(
            mem, "src/retry.py#backoff", text="backoff() in retry waits two seconds a call."
        ).id,
        "add",
    ).memory_id
    fingerprints = mem.get(whole).metadata["evidenceFingerprints"]
    assert [fp["path"] for fp in fingerprints] == ["src/retry.py"]
    assert status_of(mem) == {whole: "fresh", symbol: "fresh"}

    # an edit elsewhere in the file changes the file, not the cited symbol's lines
    path = repo / "src" / "retry.py"
    path.write_text(RETRY.replace("times=3", "times=5"), encoding="utf-8")
    assert status_of(mem) == {whole: "changed", symbol: "fresh"}
    block = mem.recall("how many times does retry retry a call").prompt_block
    assert "Source: file src/retry.py (evidence changed)" in block

    path.write_text(RETRY.replace("return 2", "return 3"), encoding="utf-8")
    assert status_of(mem)[symbol] == "changed"

    # a file that went missing: out of injection, last in manual recall
    path.unlink()
    assert set(status_of(mem).values()) == {"missing"}
    injected = mem.recall("how many times does retry retry a call", mode="injection")
    assert injected.items == ()
    assert "## Retrieved Swarm Memory" not in injected.prompt_block or not injected.items


def test_memories_without_fingerprints_are_unverified_and_reference_is_unchanged(
    mem: Any, repo: Path
) -> None:
    mem.import_records(
        [{"kind": "code_pattern", "text": "retry() retries a call three times at most."}]
    )
    assert set(status_of(mem).values()) == {"unverified"}
    reference = mem.recall("how many times does retry retry a call", profile="reference")
    assert all(item.evidence_status is None for item in reference.items)
    assert "(evidence" not in reference.prompt_block


def test_missing_comes_last_in_manual_recall(mem: Any, repo: Path) -> None:
    (repo / "src" / "other.py").write_text("def retry_twice(): ...\n", encoding="utf-8")
    gone = mem.curate(
        propose(mem, "src/other.py", text="retry retries a call three times, see other.").id,
        "add",
    ).memory_id
    kept = mem.curate(propose(mem, "src/retry.py").id, "add").memory_id
    (repo / "src" / "other.py").unlink()
    order = [item.record.id for item in mem.recall("retry retries a call three times").items]
    assert order == [kept, gone]


def test_recall_json_items_carry_their_evidence_status(repo: Path) -> None:
    (repo / ".opencode").mkdir()
    (repo / ".opencode" / "opencode-swarm.json").write_text(
        json.dumps({"memory": {"enabled": True}}), encoding="utf-8"
    )
    with swarmmem.open(repo, context={"agent_role": "coder"}) as mem:
        mem.curate(propose(mem, "src/retry.py").id, "add")
    done = subprocess.run(
        ["swarmmem", "--json", "recall", "how many times does retry retry"],
        cwd=repo / "src",
        capture_output=True,
        text=True,
        check=True,
    )
    (item,) = json.loads(done.stdout)["items"]
    assert item["memory_id"].startswith("mem_") and item["evidence"] == {"status": "fresh"}


def test_the_checker_reads_a_file_only_when_its_stat_moved(repo: Path) -> None:
    settled = (repo / "src" / "retry.py").stat().st_mtime_ns - 10**10
    os.utime(repo / "src" / "retry.py", ns=(settled, settled))  # not racily recent
    sources = RepositorySources(repo)
    (fp,) = sources.fingerprints(["src/retry.py"])
    calls = []
    original = source_files._digest

    def counting(data: bytes | str) -> str:
        calls.append(data)
        return original(data)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(source_files, "_digest", counting)
        assert [sources.status([fp]) for _ in range(5)] == ["fresh"] * 5
        assert calls == []  # same size and time: no read
        (repo / "src" / "retry.py").write_text(RETRY + "# more\n", encoding="utf-8")
        assert sources.status([fp]) == "changed"
        assert len(calls) == 1


def test_ref_parsing() -> None:
    parsed = parse_file_ref("src/a.py:3-9#Klass.method")
    assert parsed is not None
    assert (parsed.path, parsed.start, parsed.end, parsed.symbol) == (
        "src/a.py",
        3,
        9,
        "Klass.method",
    )
    for other in ("https://x.org/a.py", "manual:note", "evidence-cache:evd_0", "abc1234"):
        assert parse_file_ref(other) is None


def test_verify_lists_and_proposes_but_never_writes_memory(mem: Any, repo: Path) -> None:
    (repo / "src" / "gone.py").write_text("def gone(): ...\n", encoding="utf-8")
    changed = mem.curate(propose(mem, "src/retry.py").id, "add").memory_id
    gone = mem.curate(
        propose(mem, "src/gone.py", text="gone() in src/gone.py does nothing at all.").id, "add"
    ).memory_id
    assert mem.verify().checked == 2
    assert mem.verify().changed_count == mem.verify().missing_count == 0
    (repo / "src" / "retry.py").write_text(RETRY + "# edited\n", encoding="utf-8")
    (repo / "src" / "gone.py").unlink()
    before = {r.id: r for r in mem.list()}
    report = mem.verify()
    assert [e["id"] for e in report.changed] == [changed]
    assert [e["id"] for e in report.missing] == [gone]
    assert report.proposals == []
    stale = mem.stale()
    assert (stale.evidence_changed_count, stale.evidence_missing_count) == (1, 1)

    filed = mem.verify(propose=True).proposals
    assert {(p["operation"], p["memory_id"]) for p in filed} == {
        ("update", changed),
        ("delete", gone),
    }
    assert {r.id: r for r in mem.list()} == before  # memory itself unchanged
    assert mem.verify(propose=True).proposals == []  # already pending: not filed twice
    update = next(p for p in filed if p["operation"] == "update")
    mem.curate(update["proposal_id"], "update", reason="still true")
    assert status_of(mem)[changed] == "fresh"  # approving re-fingerprints the file


def test_a_cited_line_range_is_fingerprinted_and_found_again_when_it_moves(repo: Path) -> None:
    """``path:START-END`` and ``path:LINE`` fingerprint those lines, not the whole file: an
    edit elsewhere leaves the memory fresh, lines added above move the cited lines (found
    again by their content), an edit inside them is a change."""
    path = repo / "src" / "retry.py"
    sources = RepositorySources(repo)
    (span,) = sources.fingerprints(["src/retry.py:1-2"])
    (line,) = sources.fingerprints(["src/retry.py:5"])
    assert (span["lines"], line["lines"]) == ([1, 2], [5, 5])
    fresh = ["fresh", "fresh"]
    path.write_text(RETRY + "\n# a comment far below\n", encoding="utf-8")
    assert [sources.status([fp]) for fp in (span, line)] == fresh
    path.write_text("import time\n\n\n" + RETRY, encoding="utf-8")  # three lines above
    assert [sources.status([fp]) for fp in (span, line)] == fresh
    path.write_text(RETRY.replace("times=3", "times=5"), encoding="utf-8")
    assert [sources.status([fp]) for fp in (span, line)] == ["changed", "fresh"]


def test_verify_propose_keeps_each_refs_precision(mem: Any, repo: Path) -> None:
    """The update proposal of a changed memory cites what the memory cited (a symbol, a line
    range), not the bare file path once per ref."""
    refs = ["src/retry.py#backoff", "src/retry.py:1-2"]
    written = mem.curate(propose(mem, *refs).id, "add").memory_id
    (repo / "src" / "retry.py").write_text(RETRY.replace("return 2", "return 3"), "utf-8")
    (entry,) = mem.verify().changed  # it names the ref that changed, not every cited file
    assert entry["moved"] == ["src/retry.py#backoff changed"]
    (filed,) = mem.verify(propose=True).proposals
    assert (filed["operation"], filed["memory_id"]) == ("update", written)
    assert list(mem.proposal(filed["proposal_id"]).evidence_refs) == refs


def test_a_file_swapped_for_a_link_after_its_check_is_never_read(
    repo: Path, tmp_path: Path
) -> None:
    """Fingerprinting resolves a cited file, then reads it: a file replaced by a link to a file
    outside the project in between was read through the link (the outside file's hash
    recorded); the read now opens the resolved path without following a link."""
    outside = tmp_path / "outside.py"
    sources = RepositorySources(repo)
    path = repo / "src" / "retry.py"
    resolve = sources._resolve

    def swapped(name: str) -> Path | None:
        full = resolve(name)  # checked: inside the project, a regular file
        if full is not None and not full.is_symlink():
            full.unlink()
            full.symlink_to(outside)  # ... then swapped before the read
        return full

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sources, "_resolve", swapped)
        assert sources.fingerprints(["src/retry.py"]) == []
        assert sources.status([{"path": "src/retry.py", "sha256": "x"}]) == "missing"
    assert path.is_symlink()


def test_verify_shows_what_changed_in_the_cited_lines(mem: Any, repo: Path) -> None:
    """``verify`` names the changed ref and shows what changed in its cited lines (a symbol's
    or a line range's, kept with the fingerprint, secrets redacted); a whole-file ref has no
    lines kept, so it gets no diff."""
    from swarmmem.cli.render.review import verify_text

    refs = ["src/retry.py#backoff", "src/retry.py:1-2"]
    mem.curate(propose(mem, *refs).id, "add")
    stored = mem.list()[0].metadata["evidenceFingerprints"]
    assert [fp.get("cited") for fp in stored] == [
        "def backoff():\n    return 2",
        "def retry(call, times=3):\n    return call()",
    ]
    key = "AKIA" + "Q3EGRXKZP7V2NL5M"
    changed = RETRY.replace("times=3", "times=5").replace("return 2", f"return 3  # key {key}")
    (repo / "src" / "retry.py").write_text(changed, "utf-8")
    (entry,) = mem.verify().changed
    assert entry["moved"] == ["src/retry.py#backoff changed", "src/retry.py:1-2 changed"]
    diff = entry["diff"]
    assert diff["src/retry.py:1-2"] == [
        "-def retry(call, times=3):",
        "+def retry(call, times=5):",
    ]
    (removed, added) = diff["src/retry.py#backoff"]
    assert removed == "-    return 2" and added.startswith("+    return 3  # key [REDACTED")
    assert key not in verify_text(mem.verify().to_json())
    assert "    +def retry(call, times=5):" in verify_text(mem.verify().to_json())


def test_a_long_diff_is_cut_and_counted() -> None:
    from swarmmem.core.maintenance.evidence import DIFF_LINES, short_diff

    before = "\n".join(f"line {n}" for n in range(40))
    after = "\n".join(f"line {n} edited" for n in range(40))
    shown = short_diff(before, after)
    assert len(shown) == DIFF_LINES + 1 and shown[-1] == f"... {80 - DIFF_LINES} more changed lines"
    assert short_diff("same", "same") == []

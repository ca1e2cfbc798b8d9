"""Everyday use from the shell: ``init``, errors that name the real problem, stdin text,
import exit codes, recall limits and the demo's explanations."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from factories import as_json, cite, cli, propose_fact

import swarmmem
from swarmmem.cli import main
from swarmmem.cli.setup import remote_key
from swarmmem.core.model.errors import ConfigError, MemoryValidationError
from swarmmem.memory import DISABLED_MESSAGE

CONFIG = Path(".opencode") / "opencode-swarm.json"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An initialised project (memory on, random project id, .swarm/ ignored)."""
    root = tmp_path / "shop"
    root.mkdir()
    assert cli(root, "init").exit_code == 0
    cite(root, "pyproject.toml")
    return root


# ----------------------------------------------------------------------------- init
def test_init_turns_memory_on_once_and_keeps_what_was_there(tmp_path: Path) -> None:
    """init writes the config with a project id (random: no remote) and ignores .swarm/; a
    second run changes nothing; other configuration sections and .gitignore lines are kept."""
    root = tmp_path / "repo"
    (root / ".opencode").mkdir(parents=True)
    (root / CONFIG).write_text(json.dumps({"agents": {"coder": {"model": "x"}}}), "utf-8")
    (root / ".gitignore").write_text("node_modules", encoding="utf-8")

    first = cli(root, "init", "--json")
    assert first.exit_code == 0, first.output
    data = as_json(first)
    assert data["changed"] is True and data["project_id"].startswith("proj_")
    written = json.loads((root / CONFIG).read_text("utf-8"))
    assert written["agents"] == {"coder": {"model": "x"}}
    assert written["memory"] == {"enabled": True, "projectId": data["project_id"]}
    assert (root / ".gitignore").read_text("utf-8").splitlines()[0] == "node_modules"
    assert ".swarm/" in (root / ".gitignore").read_text("utf-8").splitlines()

    again = cli(root, "init")
    assert again.exit_code == 0
    assert "nothing changed" in again.stdout
    assert json.loads((root / CONFIG).read_text("utf-8")) == written
    assert (root / ".gitignore").read_text("utf-8").count(".swarm/") == 1
    with swarmmem.open(root) as mem:
        assert mem.enabled and mem.config["projectId"] == data["project_id"]


def test_two_initialised_checkouts_with_one_name_do_not_share_a_scope(tmp_path: Path) -> None:
    """The random project id, not the folder name, identifies an initialised repository."""
    scopes = []
    for parent in ("a", "b"):
        root = tmp_path / parent / "api"
        root.mkdir(parents=True)
        assert cli(root, "init").exit_code == 0
        with swarmmem.open(root) as mem:
            scopes.append(mem.runtime.allowed_scopes[1].key)
    assert scopes[0] != scopes[1]


def test_clones_of_one_remote_get_one_project_id_from_init(tmp_path: Path) -> None:
    """A teammate's clone that runs init is the same project (the id derives from the origin
    remote, however it is spelt); another remote, or none, is another project."""

    def clone(name: str, remote: str | None) -> str:
        root = tmp_path / name
        root.mkdir()
        subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=60)
        if remote is not None:
            subprocess.run(
                ["git", "-C", str(root), "remote", "add", "origin", remote], check=True, timeout=60
            )
        result = cli(root, "init", "--json")
        assert result.exit_code == 0, result.output
        data = as_json(result)
        if remote is not None:
            assert f"from the origin remote {remote_key(remote)}:" in " ".join(data["actions"])
        return str(data["project_id"])

    mine = clone("mine", "https://github.com/Acme/Shop.git")
    theirs = clone("theirs", "git@github.com:acme/shop")
    assert mine == theirs and mine.startswith("proj_") and len(mine) == len("proj_") + 16
    assert clone("fork", "https://github.com/someone/shop.git") != mine
    assert clone("local", None) not in (mine, clone("local2", None))


def test_init_keeps_the_identity_of_memories_already_stored(tmp_path: Path) -> None:
    """A project with stored memories keeps its repository identity (no project id added),
    so those memories stay visible."""
    root = tmp_path / "old"
    (root / ".opencode").mkdir(parents=True)
    (root / CONFIG).write_text(json.dumps({"memory": {"enabled": True}}), "utf-8")
    with swarmmem.open(root) as mem:
        mem.import_records([{"kind": "repo_convention", "text": "Releases are cut on Fridays."}])
    result = cli(root, "init", "--json")
    assert result.exit_code == 0, result.output
    assert as_json(result)["project_id"] is None
    with swarmmem.open(root) as mem:
        assert [i.record.text for i in mem.recall("when are releases cut").items] == [
            "Releases are cut on Fridays."
        ]


# --------------------------------------------------------------------- real problems
@pytest.mark.parametrize("args", [("status",), ("recall", "how are tests run"), ("init",)])
def test_a_missing_root_exits_2_and_creates_nothing(tmp_path: Path, args: tuple[str, ...]) -> None:
    missing = tmp_path / "typo"
    result = cli(missing, *args)
    assert result.exit_code == 2
    assert "does not exist" in result.output
    assert not missing.exists()


def test_the_library_refuses_a_missing_root(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        swarmmem.open(tmp_path / "nowhere", config={"enabled": True})
    assert not (tmp_path / "nowhere").exists()


def test_disabled_memory_says_which_file_and_key(tmp_path: Path) -> None:
    result = cli(tmp_path, "recall", "how are tests run")
    assert result.exit_code == 1
    assert ".opencode/opencode-swarm.json" in DISABLED_MESSAGE
    assert '"enabled": true' in DISABLED_MESSAGE and "swarmmem init" in DISABLED_MESSAGE
    assert DISABLED_MESSAGE in result.output


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"enabled": True, "foo": 1}, "unknown configuration key memory.foo"),
        ({"memory": {"enabled": True}, "enabled": True}, 'inside the "memory" section'),
    ],
)
def test_memory_keys_outside_the_section_are_errors(
    tmp_path: Path, document: dict[str, Any], message: str
) -> None:
    """A top-level typo no longer leaves memory silently disabled."""
    (tmp_path / ".opencode").mkdir()
    (tmp_path / CONFIG).write_text(json.dumps(document), "utf-8")
    result = cli(tmp_path, "status")
    assert result.exit_code == 2
    assert message in result.output


def test_other_sections_of_the_file_are_left_alone(tmp_path: Path) -> None:
    (tmp_path / ".opencode").mkdir()
    (tmp_path / CONFIG).write_text(json.dumps({"agents": {}}), "utf-8")
    result = cli(tmp_path, "status", "--json")
    assert result.exit_code == 0
    assert as_json(result)["enabled"] is False


@pytest.mark.parametrize(
    ("option", "value", "allowed"),
    [
        ("--max-items", "0", "1<=x<=20"),
        ("--max-items", "-5", "1<=x<=20"),
        ("--max-items", "500", "1<=x<=20"),
        ("--token-budget", "50", "100<=x<=5000"),
    ],
)
def test_recall_limits_out_of_range_exit_2_with_the_range(
    project: Path, option: str, value: str, allowed: str
) -> None:
    result = cli(project, "recall", "how are tests run", option, value)
    assert result.exit_code == 2
    assert allowed in result.output


# ------------------------------------------------------------------------- stdin
def test_text_and_query_read_stdin_with_a_dash(project: Path) -> None:
    proposed = cli(
        project,
        "propose", "--kind", "repo_convention", "--text", "-", "--rationale", "house style",
        "--evidence", "pyproject.toml", "--json",
        stdin="Use ruff for lint.\n",
    )  # fmt: skip
    assert proposed.exit_code == 0, proposed.output
    data = as_json(proposed)
    assert cli(project, "curate", data["proposal_id"], "add").exit_code == 0
    recalled = cli(project, "recall", "-", "--json", stdin="which tool does lint\n")
    assert recalled.exit_code == 0, recalled.output
    assert [item["text"] for item in as_json(recalled)["items"]] == ["Use ruff for lint."]


def test_an_empty_stdin_is_refused(project: Path) -> None:
    result = cli(project, "recall", "-", stdin="\n")
    assert result.exit_code == 2
    assert "standard input was empty" in result.output


# ------------------------------------------------------------------------ import
def test_import_without_any_file_exits_2(project: Path, tmp_path: Path) -> None:
    result = cli(project, "import", "--dir", str(tmp_path / "empty"))
    assert result.exit_code == 2
    assert "no memories.jsonl" in result.output


def test_import_dir_is_the_folder_export_dir_was_given(project: Path, tmp_path: Path) -> None:
    """``export --dir D`` writes ``D/export/*.jsonl``; ``import --dir D`` reads them back (as
    does ``import --dir D/export``)."""
    with swarmmem.open(project) as mem:
        proposal = propose_fact(mem, "Orders are archived after 90 days by a nightly job.")
        mem.curate(proposal.id, decision="add")
    dump = tmp_path / "dump"
    assert cli(project, "export", "--dir", str(dump)).exit_code == 0
    assert (dump / "export" / "memories.jsonl").is_file()
    for given in (dump, dump / "export"):
        data = as_json(cli(project, "import", "--dir", str(given), "--json"))
        assert data["success"] is True and data["invalidCount"] == 0, data
        assert data["directory"] == str(dump / "export")
        assert data["importedMemories"] == 1


def test_import_with_only_invalid_rows_exits_1_and_lists_them(
    project: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "dump"
    folder.mkdir()
    (folder / "memories.jsonl").write_text('{"bad": 1}\nnot json\n', encoding="utf-8")
    text = cli(project, "import", "--dir", str(folder))
    assert text.exit_code == 1
    assert text.stdout.startswith("Imported 0 memories, 0 proposals and 0 outcome events")
    assert "Refused 2 of 2 rows; why:" in text.stdout
    assert "- 1 x row has no string id" in text.stdout
    assert "memories.jsonl line 1:" in text.stdout
    data = as_json(cli(project, "import", "--dir", str(folder), "--json"))
    assert data["success"] is False and data["invalidCount"] == 2
    assert data["partial"] is False and "hint" not in data
    assert sum(r["count"] for r in data["refusedReasons"]) == 2


# -------------------------------------------------------------------------- demo
def test_the_demo_shows_its_query_and_what_good_numbers_are() -> None:
    result = CliRunner().invoke(main, ["demo"], catch_exceptions=False)
    assert result.exit_code == 0
    assert 'Query: "why does the upload test time out"' in result.stdout
    assert "What good looks like" in result.stdout
    assert "must be 0" in result.stdout


# ---------------------------------------------------------------------- evidence
def test_evidence_add_show_list_and_cite_through_the_cli(project: Path, tmp_path: Path) -> None:
    """A stored document's ref can be cited; show and list find it; secrets are redacted."""
    doc = tmp_path / "limits.md"
    doc.write_text("Uploads above 10 MB get HTTP 413. token AKIAABCDEFGHIJKLMNOP\n", "utf-8")
    added = cli(project, "evidence", "add", str(doc), "--json")
    assert added.exit_code == 0, added.output
    ref = as_json(added)["ref"]
    assert ref.startswith("evidence-cache:evd_")
    shown = as_json(cli(project, "evidence", "show", ref, "--json"))
    assert "AKIAABCDEFGHIJKLMNOP" not in shown["text"] and "413" in shown["text"]
    listed = as_json(cli(project, "evidence", "list", "--json"))
    assert [d["ref"] for d in listed["documents"]] == [ref]
    again = cli(project, "evidence", "add", "-", "--source", "pasted", stdin=doc.read_text("utf-8"))
    assert again.stdout.splitlines()[0] == ref  # same text, same ref, nothing new stored
    cited = cli(
        project, "propose", "--kind", "project_fact", "--text", "Uploads above 10 MB get 413.",
        "--rationale", "api limits", "--evidence", ref, "--json",
    )  # fmt: skip
    assert cited.exit_code == 0, cited.output
    assert as_json(cited)["status"] == "pending"


def test_a_proposal_citing_an_unknown_evidence_ref_is_refused(project: Path) -> None:
    result = cli(
        project, "propose", "--kind", "project_fact", "--text", "Uploads above 10 MB get 413.",
        "--rationale", "api limits", "--evidence", "evidence-cache:evd_0000000000000000",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "evidence cache does not hold" in result.output
    assert cli(project, "evidence", "show", "evidence-cache:evd_0000000000000000").exit_code == 2


def test_the_library_evidence_cache_follows_the_retention_keys(tmp_path: Path) -> None:
    config = {"enabled": True, "evidence": {"cacheMaxRecords": 2}}
    with swarmmem.open(tmp_path, config=config) as mem:
        refs = [mem.evidence.add(f"document number {n}", f"doc-{n}") for n in range(3)]
        assert [d.ref for d in mem.evidence] == refs[1:]
        assert refs[0] not in mem.evidence and mem.evidence.get(refs[2]).source == "doc-2"
        with pytest.raises(MemoryValidationError, match="evidence cache does not hold"):
            propose_fact(mem, "Document zero was dropped.", evidence=refs[0])


# ---------------------------------------------------------------------- learning
def test_an_outcome_from_the_shell_shows_up_in_the_value_log(project: Path) -> None:
    """``outcome --outcome useful`` takes a memory from 0.5 to 0.55; ``value-log --json`` lists
    the reward with source ``outcome`` and the text report its label; a dead end then takes
    it to 0.9 * 0.55 - 0.1 = 0.395."""
    with swarmmem.open(project) as mem:
        mem.import_records([{"kind": "repo_convention", "text": "Releases are cut on Fridays."}])
        (memory_id,) = [i.record.id for i in mem.recall("when are releases cut").items]
    assert as_json(cli(project, "value-log", "--json"))["memories"] == []

    recorded = cli(project, "outcome", "--memory-id", memory_id, "--outcome", "useful", "--json")
    assert recorded.exit_code == 0, recorded.output
    (entry,) = as_json(cli(project, "value-log", "--json"))["memories"]
    assert entry["id"] == memory_id and entry["q"] == pytest.approx(0.55)
    (reward,) = entry["recent"]
    assert reward["source"] == "outcome" and reward["verdict"] == "OUTCOME:useful"
    assert (reward["reward"], reward["q_before"]) == (1.0, 0.5)
    assert "OUTCOME:useful reward=1.00 (q 0.50→0.55)" in cli(project, "value-log").stdout

    assert cli(project, "outcome", "--memory-id", memory_id, "--outcome", "dead_end").exit_code == 0
    (entry,) = as_json(cli(project, "value-log", "--json"))["memories"]
    assert entry["q"] == pytest.approx(0.395) and entry["rewards"] == 2


def test_an_approved_update_keeps_the_history_and_show_names_what_it_wrote(
    project: Path,
) -> None:
    """The old memory is superseded by the new one (not deleted), both point at each other,
    and ``show`` of the applied proposal names the memory it wrote with the applied text."""

    def propose(text: str, *extra: str) -> dict[str, Any]:
        args = ("--kind", "repo_convention", "--text", text, "--evidence", "pyproject.toml")
        return as_json(cli(project, "propose", *args, "--rationale", "seen", *extra, "--json"))

    first = propose("Run the tests with pytest -q.")
    # approve: the decision that accepts the proposal's operation (an add here)
    approved = as_json(cli(project, "curate", first["proposal_id"], "approve", "--json"))
    assert approved["action"] == "add"
    old_id = approved["memory_id"]
    # a date alone is its midnight UTC
    since = as_json(cli(project, "list", "--since", "2000-01-31", "--json"))
    assert since["query"]["created_since"] == "2000-01-31T00:00:00.000Z"
    assert [m["memory_id"] for m in since["memories"]] == [old_id]
    # no --kind: an update keeps its target's
    update_args = ("--operation", "update", "--target", old_id, "--rationale", "changed")
    text = ("--text", "Run the tests with pytest -q -x.", "--evidence", "pyproject.toml")
    update = as_json(cli(project, "propose", *update_args, *text, "--json"))
    assert update["proposal"]["proposedRecord"]["kind"] == "repo_convention"
    applied = cli(project, "curate", update["proposal_id"], "update", "--json")
    new_id = as_json(applied)["memory_id"]
    listed = {
        m["memory_id"]: m["state"]
        for m in as_json(cli(project, "list", "--state", "all", "--json"))["memories"]
    }
    assert listed == {old_id: "superseded", new_id: "active"}
    with swarmmem.open(project) as mem:
        old, new = mem.get(old_id), mem.get(new_id)
    assert old.superseded_by == new_id and new.supersedes == (old_id,)
    shown = cli(project, "show", update["proposal_id"])
    assert f"- Wrote memory `{new_id}` (active)" in shown.stdout
    data = as_json(cli(project, "show", update["proposal_id"], "--json"))
    assert data["written"] == {
        "memory_id": new_id,
        "state": "active",
        "text": "Run the tests with pytest -q -x.",
    }

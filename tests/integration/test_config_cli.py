"""``swarmmem config set / get / show`` as a person runs them (real processes, a real SQLite
store): one key changes, every other key stays (the project id above all, so no memory is
hidden), and a key or value the configuration does not accept leaves the file as it was."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from factories import run_swarmmem

FACT = "Format Python code with ruff format before every commit."


def sm(root: Path, *args: str) -> Any:
    """``swarmmem --json ARGS`` in ``root``: the JSON it printed (it must succeed)."""
    done = run_swarmmem(root, "--json", *args, env={"HOME": str(root.parent / "home")})
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def refused(root: Path, *args: str) -> str:
    """``swarmmem ARGS`` in ``root`` must exit 2 (bad input); what it said on stderr."""
    done = run_swarmmem(root, *args, env={"HOME": str(root.parent / "home")})
    assert done.returncode == 2, done.stdout + done.stderr
    return done.stderr


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An initialised git project with one curated memory, under another tool's section."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'demo'\n", encoding="utf-8")
    sm(root, "init")
    config = root / ".opencode" / "opencode-swarm.json"
    data = json.loads(config.read_text(encoding="utf-8"))
    config.write_text(json.dumps({"swarm": {"agents": 3}, **data}, indent=2), encoding="utf-8")
    proposal = sm(
        root, "propose", "--kind", "repo_convention", "--text", FACT,
        "--rationale", "team rule", "--evidence", "pyproject.toml",
    )  # fmt: skip
    sm(root, "curate", proposal["proposal_id"], "add")
    return root


def config_of(root: Path) -> dict[str, Any]:
    path = root / ".opencode" / "opencode-swarm.json"
    return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_set_changes_one_key_and_keeps_every_other(project: Path) -> None:
    before = config_of(project)
    (project / ".opencode" / "opencode-swarm.json").chmod(0o640)
    done = sm(project, "config", "set", "recall.injection.minRelevance", "0.3")
    assert (done["key"], done["value"], done["changed"]) == (
        "recall.injection.minRelevance",
        0.3,
        True,
    )
    assert done["was_set"] is False
    after = config_of(project)
    assert after["swarm"] == {"agents": 3}
    assert after["memory"]["projectId"] == before["memory"]["projectId"]
    assert after["memory"]["enabled"] is True
    assert after["memory"]["recall"] == {"injection": {"minRelevance": 0.3}}
    assert (project / ".opencode" / "opencode-swarm.json").stat().st_mode & 0o777 == 0o640
    # the identity stayed: the memory is still there (a pasted snippet once hid every one)
    assert sm(project, "status")["memory_count"] == 1
    assert [m["text"] for m in sm(project, "list")["memories"]] == [FACT]

    again = sm(project, "config", "set", "recall.injection.minRelevance", "0.3")
    assert again["changed"] is False and again["previous"] == 0.3
    assert config_of(project) == after
    assert not list(project.rglob("*swarmmem-tmp*"))  # written by rename, nothing left over


def test_values_are_json_where_they_parse_else_text(project: Path) -> None:
    sm(project, "config", "set", "embeddings.provider", "hashing")  # not JSON: text
    sm(project, "config", "set", "embeddings.model", '"hashing-ngram-v1"')  # a JSON string
    sm(project, "config", "set", "embeddings.enabled", "true")
    sm(project, "config", "set", "embeddings.cacheSize", "64")
    sm(project, "config", "set", "learning.outcomeRewards.deadEnd", "-0.5")  # not an option
    assert config_of(project)["memory"]["learning"] == {"outcomeRewards": {"deadEnd": -0.5}}
    embeddings = config_of(project)["memory"]["embeddings"]
    assert embeddings == {
        "provider": "hashing",
        "model": "hashing-ngram-v1",
        "enabled": True,
        "cacheSize": 64,
    }
    got = sm(project, "config", "get", "embeddings.enabled")
    assert (got["value"], got["set_in_file"]) == (True, True)
    default = sm(project, "config", "get", "recall.injection.dropOff")
    assert (default["value"], default["set_in_file"]) == (0.7, False)
    section = sm(project, "config", "get", "embeddings")["value"]
    assert section["enabled"] is True and section["dimension"] == 384
    text = run_swarmmem(project, "config", "get", "recall.injection.dropOff")
    assert text.stdout == "0.7 (default)\n"
    assert sm(project, "status")["memory_count"] == 1


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("embedings.enabled", "true", "did you mean memory.embeddings.enabled"),
        ("embeddings.enabled", "maybe", "memory.embeddings.enabled must be true or false"),
        ("recall.injection.minRelevance", "1.5", "memory.recall.injection.minRelevance must"),
        ("embeddings", "true", "memory.embeddings is a section; name one of its keys"),
        ("projectId", "PROJ_A", "memory.projectId must be"),
        ("learning.outcomeRewards.dead_end", "-1", "now spelled memory.learning.outcomeRewards"),
    ],
)
def test_an_invalid_key_or_value_is_refused_and_the_file_untouched(
    project: Path, key: str, value: str, message: str
) -> None:
    path = project / ".opencode" / "opencode-swarm.json"
    before, inode = path.read_bytes(), path.stat().st_ino
    assert message in refused(project, "config", "set", key, value)
    assert path.read_bytes() == before and path.stat().st_ino == inode
    done = run_swarmmem(project, "--json", "config", "set", key, value)
    assert done.returncode == 2 and json.loads(done.stdout)["error"] == "config_error"
    assert path.read_bytes() == before


def test_show_checks_the_file_and_get_names_a_misspelt_key(project: Path) -> None:
    shown = sm(project, "config", "show")
    assert shown["valid"] is True and shown["memory"]["enabled"] is True
    assert shown["effective"]["recall"]["injection"]["maxItems"] == 6
    text = run_swarmmem(project, "config", "show").stdout
    assert text.startswith(f"{project / '.opencode' / 'opencode-swarm.json'}: valid.")
    assert "did you mean memory.embeddings" in refused(project, "config", "get", "embedings")

    path = project / ".opencode" / "opencode-swarm.json"
    data = config_of(project)
    data["memory"]["embedings"] = {"enabled": True}  # what a hand edit gets wrong
    path.write_text(json.dumps(data), encoding="utf-8")
    assert "unknown configuration key memory.embedings" in refused(project, "config", "show")
    # set cannot make it worse, nor hide it: the file stays as it is
    assert "memory.embedings" in refused(project, "config", "set", "enabled", "true")


def test_a_key_may_be_written_as_messages_write_it(project: Path) -> None:
    """The messages and the reference name keys from the ``memory`` section down
    (``memory.embeddings.enabled``); written that way a key is the same key, and a misspelt one
    is named once, not ``memory.memory.``."""
    done = sm(project, "config", "set", "memory.recall.injection.maxItems", "3")
    assert (done["key"], done["value"]) == ("recall.injection.maxItems", 3)
    assert config_of(project)["memory"]["recall"]["injection"]["maxItems"] == 3
    assert sm(project, "config", "get", "memory.recall.injection.maxItems")["value"] == 3
    said = refused(project, "config", "get", "memory.recall.injection.maxItem")
    assert "unknown configuration key memory.recall.injection.maxItem " in said
    assert "memory.memory." not in said


def test_the_file_is_never_written_through_a_link(project: Path, tmp_path: Path) -> None:
    path = project / ".opencode" / "opencode-swarm.json"
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(elsewhere)
    before = elsewhere.read_bytes()
    done = run_swarmmem(project, "config", "set", "enabled", "false")
    assert done.returncode != 0 and "symbolic link" in done.stderr
    assert elsewhere.read_bytes() == before and path.is_symlink()


def test_a_missing_file_is_refused_and_config_edits_the_one_named(tmp_path: Path) -> None:
    root = tmp_path / "bare"
    root.mkdir()
    assert "swarmmem init" in refused(root, "config", "set", "enabled", "true")
    assert not (root / ".opencode").exists()
    own = tmp_path / "mine.json"
    own.write_text('{"memory": {"enabled": true}}', encoding="utf-8")
    done = sm(root, "--config", str(own), "config", "set", "recall.sessionBrief.maxItems", "4")
    assert done["config_path"] == str(own)
    assert json.loads(own.read_text(encoding="utf-8")) == {
        "memory": {"enabled": True, "recall": {"sessionBrief": {"maxItems": 4}}}
    }
    assert (
        sm(root, "--config", str(own), "config", "get", "recall.sessionBrief.maxItems")["value"]
        == 4
    )
    assert os.listdir(root) == []


DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("page", ["dense.md", "postgresql.md"])
def test_the_docs_config_commands_give_the_file_they_show(tmp_path: Path, page: str) -> None:
    """The docs tell people to run `swarmmem config set` (pasting a snippet as the file once
    dropped the project id): the page's commands give exactly the file it shows next."""
    text = (DOCS / page).read_text(encoding="utf-8")
    part = text[: text.index("\n## ")] if "\n## " in text else text
    commands = [
        line.split()
        for block in re.findall(r"```bash\n(.*?)```", part, re.S)
        for line in block.splitlines()
        if line.startswith("swarmmem config set ")
    ]
    (shown,) = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", part, re.S)]
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    project_id = sm(root, "init")["project_id"]
    assert commands
    for command in commands:
        sm(root, *command[1:])
    assert config_of(root) == {"memory": {**shown["memory"], "projectId": project_id}}
    assert list(config_of(root)["memory"]) == list(shown["memory"])  # the same order, too

"""Finding the project from a subfolder, ``init`` inside a project, ``init --agent`` for each
host (merged with what is there, idempotent, ``--dry-run``), and ``recall --mode injection``
on the command line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from swarmmem.hooks.install import merge_toml_section
from swarmmem.project import find_root

SWARMMEM = [sys.executable, "-m", "swarmmem"]
SCRIPT = str(Path(sys.executable).parent / "swarmmem")
"""The console script of the swarmmem under test."""


def path_without_swarmmem() -> str:
    """This process's ``PATH`` without relative entries and folders holding a ``swarmmem``."""
    entries = os.environ.get("PATH", os.defpath).split(os.pathsep)
    return os.pathsep.join(
        e for e in entries if os.path.isabs(e) and shutil.which("swarmmem", path=e) is None
    )


ON_PATH = os.pathsep.join([str(Path(SCRIPT).parent), path_without_swarmmem()])


def run(
    *args: str,
    cwd: Path,
    home: Path | None = None,
    path: str = ON_PATH,
    venv: str | None = None,
) -> subprocess.CompletedProcess[str]:
    keep = ("SWARMMEM_NO_EXTENSIONS", "PYTHONPATH")
    env = {key: os.environ[key] for key in keep if key in os.environ}
    env["PATH"] = path
    if venv is not None:
        env["VIRTUAL_ENV"] = venv
    env["HOME"] = str(home or cwd.parent / "home")
    env["SWARMMEM_HOOK_HELPER"] = "0"
    return subprocess.run(
        [*SWARMMEM, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120
    )


def run_json(
    *args: str, cwd: Path, home: Path | None = None, path: str = ON_PATH
) -> dict[str, Any]:
    done = run("--json", *args, cwd=cwd, home=home, path=path)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def curate_convention(text: str, *, cwd: Path, why: str = "r") -> None:
    """On the command line from ``cwd``: propose ``text`` as a repo convention citing
    src/pkg/db.py (rationale ``why``), then curate it with ``add``."""
    prop = run_json(
        "propose", "--kind", "repo_convention", "--text", text,
        "--rationale", why, "--evidence", "src/pkg/db.py", cwd=cwd,
    )  # fmt: skip
    run_json("curate", prop["proposal_id"], "add", cwd=cwd)


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "src" / "pkg" / "db.py").write_text("x = 1\n", encoding="utf-8")
    return root


def test_find_root_prefers_the_configured_folder_then_git_then_here(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    inner = outer / "packages" / "inner"
    (inner / "deep").mkdir(parents=True)
    (outer / ".git").mkdir()
    assert find_root(inner / "deep") == outer  # git top level
    (inner / ".opencode").mkdir()
    (inner / ".opencode" / "opencode-swarm.json").write_text("{}", encoding="utf-8")
    assert find_root(inner / "deep") == inner  # the nearest configured folder wins
    lone = tmp_path / "lone"
    lone.mkdir()
    assert find_root(lone) == lone


def test_commands_from_a_subfolder_use_the_project(repo: Path) -> None:
    run_json("init", cwd=repo)
    sub = repo / "src" / "pkg"
    curate_convention(
        "Database migrations run with alembic upgrade head.", cwd=sub, why="team rule"
    )
    status = run_json("status", cwd=sub)
    assert status["enabled"] is True and status["memory_count"] == 1
    assert status["storage_dir"] == str(repo / ".swarm" / "memory")
    assert not (sub / ".swarm").exists() and not (sub / ".opencode").exists()


def test_init_inside_a_project_names_it_and_changes_nothing(repo: Path) -> None:
    first = run_json("init", cwd=repo)
    sub = repo / "src"
    before = sorted(p.name for p in sub.iterdir())
    again = run_json("--root", str(sub), "init", cwd=sub)
    assert again["changed"] is False
    assert again["project_root"] == str(repo) and again["project_id"] == first["project_id"]
    assert "is inside the project at" in again["actions"][0]
    assert sorted(p.name for p in sub.iterdir()) == before
    text = run("--root", str(sub), "init", cwd=sub)
    assert f"Project id: {first['project_id']}.\nProject root: {repo}." in text.stdout
    separate = run_json("--root", str(sub), "init", "--here", cwd=sub)
    assert separate["changed"] is True and separate["project_root"] == str(sub)
    assert separate["project_id"] != first["project_id"]


ALL_AGENTS = ["claude-code", "codex", "gemini", "cursor", "opencode"]


def _agent_args() -> list[str]:
    return [arg for agent in ALL_AGENTS for arg in ("--agent", agent)]


def project_texts(repo: Path) -> dict[str, str]:
    return {
        str(p.relative_to(repo)): p.read_text(encoding="utf-8")
        for p in repo.rglob("*")
        if p.is_file() and ".swarm" not in p.parts and ".git" not in p.parts
    }


@pytest.mark.parametrize("on_path", [True, False], ids=["on-path", "off-path"])
def test_init_agent_writes_every_host_and_is_idempotent(repo: Path, on_path: bool) -> None:
    """On PATH every project file calls ``swarmmem`` by name (the same for every teammate);
    off PATH the files that name the install by its path are said in a note."""
    path = ON_PATH if on_path else path_without_swarmmem()
    data = run_json("init", *_agent_args(), cwd=repo, path=path)
    command = "swarmmem" if on_path else SCRIPT
    home = repo.parent / "home"
    mcp = read(repo / ".mcp.json")["mcpServers"]["swarmmem"]
    # .mcp.json names swarmmem by name either way (off PATH, the local scope names the path)
    assert mcp == {"type": "stdio", "command": "swarmmem", "args": ["mcp"]}
    notes = "\n".join(data["notes"])
    if on_path:
        assert SCRIPT not in "".join(project_texts(repo).values())
        assert not (home / ".claude.json").exists()
        assert "not on PATH" not in notes
        assert "settings.local" not in (repo / ".gitignore").read_text(encoding="utf-8")
        claude = read(repo / ".claude" / "settings.json")["hooks"]
    else:
        assert not (repo / ".claude" / "settings.json").exists()
        claude = read(repo / ".claude" / "settings.local.json")["hooks"]
        local = read(home / ".claude.json")["projects"][str(repo)]["mcpServers"]
        assert local == {"swarmmem": {"type": "stdio", "command": SCRIPT, "args": ["mcp"]}}
        pinned = sorted(f for f, text in project_texts(repo).items() if SCRIPT in text)
        assert pinned == [
            ".claude/settings.local.json",
            ".codex/hooks.json",
            ".cursor/hooks.json",
            ".cursor/mcp.json",
            ".gemini/settings.json",
            ".opencode/plugins/swarmmem.js",
            "opencode.json",
        ]
        assert "~/.claude.json and .claude/settings.local.json (per-user" in notes
        # the per-user file in the project is kept out of git
        ignored = (repo / ".gitignore").read_text(encoding="utf-8").splitlines()
        assert ".claude/settings.local.json" in ignored
        for file in pinned[1:]:
            assert file in notes.split("keep them out of commits")[0]
    assert sorted(claude) == sorted(
        ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd", "PreCompact"]
    )
    assert claude["UserPromptSubmit"][0]["hooks"][0]["command"] == (
        f"{command} hook claude-code UserPromptSubmit"
    )
    codex = read(repo / ".codex" / "hooks.json")["hooks"]
    assert codex["Stop"][0]["hooks"][0]["command"].endswith("hook codex Stop")
    # Codex clamps SessionEnd to 3 s (and warns on every run when asked for more)
    assert codex["SessionEnd"][0]["hooks"][0]["timeout"] == 3
    assert codex["Stop"][0]["hooks"][0]["timeout"] == 30
    # the trust steps are the person's: said, never written
    assert "/hooks" in notes and "trust each swarmmem hook" in notes
    assert "trustedFolders.json" in notes
    assert not (repo.parent / "home" / ".gemini").exists()
    gemini = read(repo / ".gemini" / "settings.json")
    assert gemini["mcpServers"]["swarmmem"]["args"] == ["mcp"]
    assert gemini["hooks"]["BeforeAgent"][0]["hooks"][0]["timeout"] == 30000
    cursor = read(repo / ".cursor" / "hooks.json")
    assert cursor["version"] == 1
    assert cursor["hooks"]["beforeSubmitPrompt"] == [
        {"command": f"{command} hook cursor beforeSubmitPrompt", "timeout": 30}
    ]
    assert read(repo / ".cursor" / "mcp.json")["mcpServers"]["swarmmem"]["command"] == command
    assert read(repo / "opencode.json")["mcp"]["swarmmem"]["command"] == [command, "mcp"]
    plugin = (repo / ".opencode" / "plugins" / "swarmmem.js").read_text(encoding="utf-8")
    assert f"const SWARMMEM_COMMAND = {json.dumps([command])};" in plugin
    assert "__SWARMMEM_COMMAND__" not in plugin
    assert "[mcp_servers.swarmmem]" in data["notes"][0]  # Codex's MCP entry is printed
    assert not (repo.parent / "home" / ".codex").exists()

    snapshot = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    again = run_json("init", *_agent_args(), cwd=repo, path=path)
    assert again["changed"] is False
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()} == snapshot


def test_put_on_path_init_moves_the_per_user_entries_back_to_the_project(repo: Path) -> None:
    home = repo.parent / "home"
    home.mkdir()
    (home / ".claude.json").write_text('{"theme": "dark"}', encoding="utf-8")
    run_json("init", "--agent", "claude-code", cwd=repo, path=path_without_swarmmem())
    assert "swarmmem" in read(home / ".claude.json")["projects"][str(repo)]["mcpServers"]
    run_json("init", "--agent", "claude-code", cwd=repo)
    hooks = read(repo / ".claude" / "settings.json")["hooks"]
    assert hooks["Stop"][0]["hooks"][0]["command"] == "swarmmem hook claude-code Stop"
    assert read(repo / ".claude" / "settings.local.json") == {"hooks": {}}
    kept = read(home / ".claude.json")
    assert kept["theme"] == "dark" and "mcpServers" not in kept["projects"][str(repo)]
    removed = run_json("init", "--remove", "--agent", "claude-code", cwd=repo)
    assert removed["changed"] is True
    assert "swarmmem" not in (repo / ".claude" / "settings.json").read_text(encoding="utf-8")


def test_on_path_through_an_activated_environment_says_what_other_hosts_will_miss(
    repo: Path,
) -> None:
    """An activated virtual environment puts swarmmem on PATH only where it is activated:
    init writes the by-name files and says so (not when swarmmem is on PATH for good)."""
    activated = run(
        "--json", "init", "--agent", "codex", cwd=repo, venv=sys.prefix
    )  # the venv under test, activated
    assert activated.returncode == 0, activated.stderr
    notes = "\n".join(json.loads(activated.stdout)["notes"])
    assert f"through the activated environment {Path(sys.prefix).resolve()}" in notes
    hooks = read(repo / ".codex" / "hooks.json")["hooks"]
    assert hooks["Stop"][0]["hooks"][0]["command"] == "swarmmem hook codex Stop"
    plain = run_json("init", "--agent", "codex", cwd=repo)
    assert "activated environment" not in "\n".join(plain["notes"])


@pytest.mark.parametrize("lead", [".", "", "bin"])
def test_a_relative_path_entry_before_swarmmem_keeps_the_absolute_path(
    repo: Path, lead: str
) -> None:
    """A host looks a relative ``PATH`` entry up in the project it runs in, where a checkout
    could ship its own ``swarmmem``: init then never writes the bare name."""
    planted = repo / lead / "swarmmem"
    planted.parent.mkdir(exist_ok=True)
    planted.write_text("#!/bin/sh\necho planted\n", encoding="utf-8")
    planted.chmod(0o755)
    run_json("init", "--agent", "codex", cwd=repo, path=os.pathsep.join([lead, ON_PATH]))
    hooks = read(repo / ".codex" / "hooks.json")["hooks"]
    assert hooks["Stop"][0]["hooks"][0]["command"] == f"{SCRIPT} hook codex Stop"
    # after the install's own folder, a relative entry is never reached
    run_json("init", "--agent", "codex", cwd=repo, path=os.pathsep.join([ON_PATH, lead]))
    hooks = read(repo / ".codex" / "hooks.json")["hooks"]
    assert hooks["Stop"][0]["hooks"][0]["command"] == "swarmmem hook codex Stop"


def test_init_agent_merges_with_existing_configuration(repo: Path) -> None:
    (repo / ".claude").mkdir()
    settings = {
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "./lint-prompt.sh"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "x"}]}],
        },
    }
    (repo / ".claude" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    (repo / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"github": {"command": "gh-mcp"}}}), encoding="utf-8"
    )
    (repo / ".cursor").mkdir()
    (repo / ".cursor" / "hooks.json").write_text(
        json.dumps({"version": 1, "hooks": {"stop": [{"command": "./notify.sh"}]}}),
        encoding="utf-8",
    )
    run_json("init", "--agent", "claude-code", "--agent", "cursor", cwd=repo)
    merged = read(repo / ".claude" / "settings.json")
    assert merged["permissions"] == settings["permissions"]
    assert merged["hooks"]["PreToolUse"] == settings["hooks"]["PreToolUse"]
    prompt_hooks = [h["command"] for g in merged["hooks"]["UserPromptSubmit"] for h in g["hooks"]]
    assert prompt_hooks[0] == "./lint-prompt.sh" and prompt_hooks[1].endswith(
        "hook claude-code UserPromptSubmit"
    )
    assert sorted(read(repo / ".mcp.json")["mcpServers"]) == ["github", "swarmmem"]
    stop = read(repo / ".cursor" / "hooks.json")["hooks"]["stop"]
    assert stop[0] == {"command": "./notify.sh"} and stop[1]["command"].endswith("cursor stop")


def test_init_agent_dry_run_writes_nothing(repo: Path) -> None:
    before = sorted(str(p) for p in repo.rglob("*"))
    data = run_json("init", "--dry-run", *_agent_args(), cwd=repo)
    assert data["dry_run"] is True and data["changed"] is False
    assert any(a == "(dry run) Wrote .claude/settings.json." for a in data["actions"])
    assert sorted(str(p) for p in repo.rglob("*")) == before


def test_init_agent_refuses_a_broken_file_and_keeps_it(repo: Path) -> None:
    (repo / ".mcp.json").write_text("{ not json", encoding="utf-8")
    done = run("init", "--agent", "claude-code", cwd=repo)
    assert done.returncode == 2
    assert ".mcp.json is not valid JSON" in done.stderr
    assert (repo / ".mcp.json").read_text(encoding="utf-8") == "{ not json"
    assert not (repo / ".claude").exists()


def test_codex_user_config_is_edited_only_with_user(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    config = home / ".codex" / "config.toml"
    config.write_text('model = "o5"\n\n[mcp_servers.other]\ncommand = "x"\n', encoding="utf-8")
    run_json("init", "--agent", "codex", cwd=repo, home=home)
    assert "swarmmem" not in config.read_text(encoding="utf-8")
    run_json("init", "--agent", "codex", "--user", cwd=repo, home=home)
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    parsed = tomllib.loads(config.read_text(encoding="utf-8"))
    assert parsed["model"] == "o5" and parsed["mcp_servers"]["other"] == {"command": "x"}
    assert parsed["mcp_servers"]["swarmmem"]["args"] == ["mcp"]
    text = config.read_text(encoding="utf-8")
    run_json("init", "--agent", "codex", "--user", cwd=repo, home=home)
    assert config.read_text(encoding="utf-8") == text


def test_claude_code_user_hooks_replace_the_project_ones(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_json("init", "--agent", "claude-code", cwd=repo, home=home)
    assert "UserPromptSubmit" in read(repo / ".claude" / "settings.json")["hooks"]
    data = run_json("init", "--agent", "claude-code", "--user", cwd=repo, home=home)
    user = read(home / ".claude" / "settings.json")["hooks"]
    assert user["SessionStart"][0]["hooks"][0]["command"].endswith("hook claude-code SessionStart")
    assert read(repo / ".claude" / "settings.json") == {"hooks": {}}  # ours moved, none twice
    assert str(home / ".claude" / "settings.json") in " ".join(data["actions"])
    assert "swarmmem" in read(repo / ".mcp.json")["mcpServers"]


def test_merge_toml_section_replaces_only_its_table() -> None:
    text = '[a]\nx = 1\n\n[mcp_servers.swarmmem]\ncommand = "old"\n\n[b]\ny = 2\n'
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    section = '[mcp_servers.swarmmem]\ncommand = "new"\n'
    merged = merge_toml_section(text, "mcp_servers.swarmmem", section)
    assert tomllib.loads(merged) == {
        "a": {"x": 1},
        "mcp_servers": {"swarmmem": {"command": "new"}},
        "b": {"y": 2},
    }


def test_recall_in_injection_mode_follows_the_injection_rules(repo: Path) -> None:
    run_json("init", cwd=repo)
    for i in range(10):
        text = f"Database rule {i}: migrations for table t{i} run with alembic upgrade head."
        curate_convention(text, cwd=repo)
    manual = run_json("recall", "database migrations alembic", cwd=repo)
    injected = run_json("recall", "--mode", "injection", "database migrations alembic", cwd=repo)
    assert manual["total"] == 8 and injected["total"] == 6
    for trivial in ("ok", "/clear"):
        done = run("recall", "--mode", "injection", trivial, cwd=repo)
        assert (done.returncode, done.stdout) == (0, "")
    nothing = run("recall", "--mode", "injection", "weather forecast for paris", cwd=repo)
    assert (nothing.returncode, nothing.stdout) == (0, "")
    assert run_json("recall", "--mode", "injection", "ok", cwd=repo)["skipped"] == "trivial_prompt"


# ------------------------------------------------------------ the agents' instruction files
BEGIN, END = "<!-- BEGIN swarmmem", "<!-- END swarmmem -->"


def test_init_agent_adds_one_instruction_section_and_remove_takes_out_exactly_it(
    repo: Path,
) -> None:
    mine = "# Team notes\n\nRun make before pushing.\n"
    (repo / "CLAUDE.md").write_text(mine, encoding="utf-8")
    (repo / "CLAUDE.md").chmod(0o640)
    data = run_json("init", "--agent", "claude-code", cwd=repo)
    assert "Updated CLAUDE.md." in data["actions"]
    text = (repo / "CLAUDE.md").read_text(encoding="utf-8")
    assert text.startswith(mine + "\n" + BEGIN + " -->\n") and text.endswith(END + "\n")
    assert text.count(BEGIN) == 1 and '"memoryProposals"' in text
    assert (repo / "CLAUDE.md").stat().st_mode & 0o777 == 0o640  # the person's file keeps it
    assert not (repo / "AGENTS.md").exists() and not (repo / "GEMINI.md").exists()

    again = run_json("init", "--agent", "claude-code", cwd=repo)
    assert again["changed"] is False
    assert (repo / "CLAUDE.md").read_text(encoding="utf-8") == text

    # the person edits around the section: a later init replaces only the section's text
    (repo / "CLAUDE.md").write_text(text + "\nMore notes.\n", encoding="utf-8")
    run_json("init", "--agent", "claude-code", cwd=repo)
    assert (repo / "CLAUDE.md").read_text(encoding="utf-8") == text + "\nMore notes.\n"

    removed = run_json("init", "--remove", "--agent", "claude-code", cwd=repo)
    assert removed["changed"] is True
    assert (repo / "CLAUDE.md").read_text(encoding="utf-8") == mine + "\nMore notes.\n"
    assert (repo / "CLAUDE.md").stat().st_mode & 0o777 == 0o640
    assert "swarmmem" not in read(repo / ".mcp.json").get("mcpServers", {})
    assert read(repo / ".claude" / "settings.json") == {"hooks": {}}
    assert read(repo / ".opencode" / "opencode-swarm.json")["memory"]["enabled"] is True
    nothing = run_json("init", "--remove", "--agent", "claude-code", cwd=repo)
    assert nothing["changed"] is False


def test_instruction_files_init_created_go_with_their_section(repo: Path) -> None:
    run_json("init", *_agent_args(), cwd=repo)
    rule = (repo / ".cursor" / "rules" / "swarmmem.mdc").read_text(encoding="utf-8")
    assert rule.startswith("---\ndescription: ") and "alwaysApply: true\n---\n" in rule
    for name in ("CLAUDE.md", "AGENTS.md", "GEMINI.md"):
        text = (repo / name).read_text(encoding="utf-8")
        assert text.startswith("<!-- BEGIN swarmmem (file created by swarmmem) -->\n"), name
        assert text.count(BEGIN) == 1  # codex and opencode share AGENTS.md: one section

    # AGENTS.md stays while opencode, which reads it too, is still wired
    run_json("init", "--remove", "--agent", "codex", cwd=repo)
    assert BEGIN in (repo / "AGENTS.md").read_text(encoding="utf-8")
    assert read(repo / ".codex" / "hooks.json") == {"hooks": {}}
    run_json("init", "--remove", "--agent", "opencode", cwd=repo)
    assert not (repo / "AGENTS.md").exists()
    assert not (repo / ".opencode" / "plugins" / "swarmmem.js").exists()
    assert "swarmmem" not in read(repo / "opencode.json").get("mcp", {})

    data = run_json("init", "--remove", "--agent", "gemini", "--agent", "cursor", cwd=repo)
    assert "Removed GEMINI.md." in data["actions"]
    assert not (repo / "GEMINI.md").exists()
    assert not (repo / ".cursor" / "rules" / "swarmmem.mdc").exists()
    assert read(repo / ".cursor" / "hooks.json") == {"version": 1, "hooks": {}}
    gemini = read(repo / ".gemini" / "settings.json")
    assert "mcpServers" not in gemini and gemini["hooks"] == {}
    assert BEGIN in (repo / "CLAUDE.md").read_text(encoding="utf-8")  # not asked: kept


def test_no_instructions_leaves_the_instruction_file_alone(repo: Path) -> None:
    data = run_json("init", "--agent", "claude-code", "--no-instructions", cwd=repo)
    assert not (repo / "CLAUDE.md").exists()
    assert not any("CLAUDE.md" in action for action in data["actions"])
    assert (repo / ".claude" / "settings.json").is_file()


def test_remove_needs_an_agent(repo: Path) -> None:
    done = run("init", "--remove", cwd=repo)
    assert done.returncode == 2 and "--remove needs --agent" in done.stderr
    assert not (repo / ".opencode").exists()

"""The README's examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

from factories import run_python

README = Path(__file__).resolve().parents[2] / "README.md"


def test_python_example_runs(tmp_path: Path) -> None:
    """The "Using it from Python" block runs in a fresh project (one with the pyproject.toml
    it cites) and prints a prompt block."""
    block = re.search(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert block is not None
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n", encoding="utf-8")
    result = run_python(block.group(1), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "## Retrieved Swarm Memory" in result.stdout
    assert "Run focused tests with pytest -k <name>." in result.stdout
    assert "'lexical': 'compiled'" in result.stdout or "'lexical': 'python'" in result.stdout


def test_readme_configuration_snippets_are_valid(tmp_path: Path) -> None:
    """Every JSON configuration snippet in the README and the docs passes config validation."""
    import json

    from swarmmem import config

    pages = [README, *sorted((README.parent / "docs").glob("*.md"))]
    text = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    snippets = re.findall(r"```json\n(.*?)```", text, re.S)
    checked = 0
    for snippet in snippets:
        data = json.loads(snippet)
        if "memory" in data:
            config.validate(data["memory"])
            checked += 1
    assert checked >= 2


def _links(page: Path) -> list[str]:
    return re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8"))


def test_the_readme_is_short_and_its_links_and_contents_hold() -> None:
    """A newcomer's README: at most 250 lines, a table of contents whose anchors are its own
    headings, and every relative link of it and of ``docs/`` names a file that exists."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    anchors = {
        re.sub(r"[^a-z0-9 -]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        for line in text.splitlines()
        if line.startswith("## ")
    }
    contents = next(line for line in text.splitlines() if line.startswith("Contents:"))
    named = re.findall(r"\(#([^)]+)\)", text[text.index(contents) : text.index("## Quick start")])
    assert len(named) >= 6 and set(named) <= anchors
    for page in [README, *sorted((README.parent / "docs").glob("*.md"))]:
        for link in _links(page):
            if "://" in link:
                continue
            assert (page.parent / link).exists(), f"{page.name} links {link}"


def test_the_readme_shell_commands_exist_with_their_options() -> None:
    """Every command of the README's shell examples is a real command, and every option it
    uses is one that command takes (read from its --help)."""
    import shlex

    from click.testing import CliRunner

    from swarmmem.cli.app import main

    text = README.read_text(encoding="utf-8")
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        lines += [line.split("#", 1)[0] for line in block.replace("\\\n", " ").splitlines()]
    checked = 0
    for line in lines:
        for part in line.split("&&"):
            words = shlex.split(part)
            if not words or words[0] != "swarmmem":
                continue
            words = words[1:]
            while words and words[0].startswith("--"):  # the group's own options
                words = words[2:] if words[0] in ("--root", "--role", "--config") else words[1:]
            command = [words[0]]
            if words[0] in ("config", "evidence", "audit-key") and len(words) > 1:
                command.append(words[1])
            shown = CliRunner().invoke(main, [*command, "--help"])
            assert shown.exit_code == 0, (line, shown.output)
            for option in (w.split("=", 1)[0] for w in words if w.startswith("--")):
                assert option in shown.output, f"{' '.join(command)} has no {option}: {line}"
            checked += 1
    assert checked >= 15

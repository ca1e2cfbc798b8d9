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

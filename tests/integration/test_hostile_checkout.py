"""A cloned repository and a shared machine are hostile: code shipped in a checkout is never
imported by the hook, its helper or the commands ``init`` writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from factories import curate_fact, wait_for, write_memory_config

import swarmmem
from swarmmem.hooks import client, install

ALEMBIC = "Database migrations are managed with alembic; run alembic upgrade head after pulling."
PROMPT = "how do I run the database migrations?"


def make_project(root: Path) -> Path:
    """A git project at ``root`` with memory on and one curated memory."""
    (root / ".git").mkdir(parents=True)
    (root / "db.py").write_text("ENGINE = None\n", encoding="utf-8")
    write_memory_config(root, {"enabled": True, "projectId": "proj_00000000000000bb"})
    with swarmmem.open(root, context={"session_id": "setup"}) as mem:
        curate_fact(mem, ALEMBIC, kind="repo_convention", evidence="db.py", rationale="rule")
    return root


def plant_code(folder: Path, marker: Path, shape: str) -> None:
    """A ``swarmmem`` module or package in ``folder`` that writes ``marker`` when imported."""
    code = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
    if shape == "module":
        (folder / "swarmmem.py").write_text(code, encoding="utf-8")
    else:
        (folder / "swarmmem").mkdir()
        (folder / "swarmmem" / "__init__.py").write_text(code, encoding="utf-8")


def env(**extra: str) -> dict[str, str]:
    keep = ("PATH", "SWARMMEM_NO_EXTENSIONS", "HOME")
    return {**{k: os.environ[k] for k in keep if k in os.environ}, **extra}


def prompt_payload(root: Path, session: str = "s1") -> str:
    return json.dumps({"session_id": session, "cwd": str(root), "prompt": PROMPT})


def context_of(out: str) -> str:
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out else ""


def run_shell(
    line: str, *, cwd: Path, stdin: str, **extra: str
) -> subprocess.CompletedProcess[str]:
    """``line`` run by the shell in ``cwd`` (as a host runs a hook command)."""
    return subprocess.run(
        line, shell=True, input=stdin, capture_output=True, text=True, cwd=cwd,
        env=env(**extra), timeout=120,
    )  # fmt: skip


# ------------------------------------------------------- nothing of the checkout is imported
@pytest.mark.slow
@pytest.mark.parametrize("shape", ["module", "package"])
def test_the_helper_never_imports_code_shipped_in_the_checkout(tmp_path: Path, shape: str) -> None:
    root = make_project(tmp_path / "repo")
    marker = tmp_path / "marker"
    plant_code(root, marker, shape)
    sock = client.socket_path(root)
    done = run_shell(
        install.hook_line("claude-code", "UserPromptSubmit"),
        cwd=root,
        stdin=prompt_payload(root),
        SWARMMEM_HOOK_HELPER="1",
        SWARMMEM_HOOK_HELPER_IDLE="1",
    )
    assert done.returncode == 0 and "alembic" in context_of(done.stdout), done.stderr
    # the hook started the helper in the project: it comes up (or the planted code ran)
    assert wait_for(lambda: sock.exists() or marker.exists(), timeout=60)
    assert not marker.exists()
    assert wait_for(lambda: not sock.exists(), timeout=60)  # idle: the helper leaves


@pytest.mark.parametrize("shape", ["module", "package"])
def test_the_fallback_command_init_writes_never_imports_the_checkout(
    tmp_path: Path, shape: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a console script beside the interpreter, ``init`` writes ``python ... -m
    swarmmem``: run in the project by the host, it must not import the project's code."""
    root = make_project(tmp_path / "repo")
    marker = tmp_path / "marker"
    plant_code(root, marker, shape)
    wrapper = tmp_path / "bin" / "python"  # an interpreter with no console script beside it
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(wrapper))
    line = install.hook_line("claude-code", "UserPromptSubmit")
    assert line.startswith(str(wrapper))
    done = run_shell(line, cwd=root, stdin=prompt_payload(root), SWARMMEM_HOOK_HELPER="0")
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert "alembic" in context_of(done.stdout)

"""Dense retrieval through the public facade: write-time embedding, hybrid recall, fallback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from factories import curate_fact, propose_fact, run_python

import swarmmem
from swarmmem.adapters.models.hashing_embedder import HashingEmbedder

DENSE = {"enabled": True, "embeddings": {"enabled": True, "provider": "hashing", "dimension": 64}}


def _add(mem, text: str, kind: str = "repo_convention") -> str:
    return curate_fact(mem, text, kind=kind, evidence="README.md")


def test_curated_memories_are_embedded_and_recalled(tmp_path: Path) -> None:
    """Curating writes a vector in sqlite-vec; recall then runs the fused path."""
    with swarmmem.open(tmp_path, config=DENSE, context={"agent_role": "coder"}) as mem:
        first = _add(mem, "Feature flags are read from the flags.yaml file at startup.")
        parts = mem.runtime.dense_parts()
        assert parts is not None, mem.runtime.dense_unavailable_reason
        assert first in parts.index.ids()
        bundle = mem.recall("where do feature flags come from")
        assert bundle.items[0].record.id == first
        assert bundle.diagnostics.get("fusionActive") is True


def test_embeddings_off_is_the_lexical_path(tmp_path: Path) -> None:
    """With embeddings disabled the bundle has no fusion marker and scores are raw sums."""
    with swarmmem.open(tmp_path, config={"enabled": True}) as mem:
        _add(mem, "Feature flags are read from the flags.yaml file at startup.")
        bundle = mem.recall("where do feature flags come from")
        assert "fusionActive" not in bundle.diagnostics
        assert "rrf_fused" not in bundle.items[0].reason


def test_rebuild_advances_the_model_version(tmp_path: Path) -> None:
    """A store embedded with another model refuses dense recall until rebuilt."""
    with swarmmem.open(tmp_path, config=DENSE) as mem:
        memory_id = _add(mem, "Release tags are signed with the team key.")
        mem.runtime.dense_parts().index.set_model_version("older-model:64")
        before = mem.recall("how are release tags signed")
        assert "fusionActive" not in before.diagnostics  # version mismatch -> lexical
        result = mem.rebuild_embedding_index()
        assert result.to_json() == {
            "rebuilt": 1,
            "failed": 0,
            "advanced": True,
            "model_version": "hashing-ngram-v1:64",
            "missing_before": 0,
            "stale_removed": 0,
            "outdated_model": True,
        }
        after = mem.recall("how are release tags signed")
        assert after.diagnostics.get("fusionActive") is True
        assert after.items[0].record.id == memory_id


class _Unavailable(HashingEmbedder):
    """An embedder whose model is missing."""

    @property
    def available(self) -> bool:
        return False


def test_missing_model_degrades_with_a_reason(tmp_path: Path) -> None:
    """When the embedder is unavailable recall stays lexical and says why."""
    with swarmmem.open(tmp_path, config=DENSE, embedder=_Unavailable(dimension=64)) as mem:
        memory_id = _add(mem, "Logs are shipped to the central collector.")
        bundle = mem.recall("where are logs shipped")
        assert [it.record.id for it in bundle.items] == [memory_id]
        assert "fusionActive" not in bundle.diagnostics
        assert "not available" in mem.runtime.dense_unavailable_reason


@pytest.mark.slow
def test_real_model_end_to_end(tmp_path: Path) -> None:
    """With the MiniLM extra installed, a paraphrase with no shared word is still recalled."""
    pytest.importorskip("onnxruntime")
    config = {"enabled": True, "embeddings": {"enabled": True}}
    with swarmmem.open(tmp_path, config=config) as mem:
        if mem.runtime.dense_parts() is None:
            pytest.skip(mem.runtime.dense_unavailable_reason or "dense retrieval unavailable")
        target = _add(
            mem, "Rotate credentials quarterly and revoke unused keys.", kind="security_note"
        )
        _add(mem, "The changelog lists every public API change.")
        bundle = mem.recall("how often should secrets be replaced", max_items=2)
        assert target in [it.record.id for it in bundle.items]


PROBE_LOADS = """
import json, sys, threading
import swarmmem
config = {"enabled": True, "embeddings": {"enabled": True}}
memory_id, proposal_id = sys.argv[1:3]
seen = {}
with swarmmem.open(".", config=config) as mem:
    parts = mem.runtime.dense_parts()
    mem.status()
    mem.record_outcome(memory_id=memory_id, outcome="useful")
    mem.curate(proposal_id, "reject", reason="no")
    # loaded, or loading on the background thread the dense parts may start
    loading = any(t.name == "swarmmem-model-load" for t in threading.enumerate())
    seen["before recall"] = parts.embedder.loaded or loading
    mem.recall("where are API changes listed")
    seen["after recall"] = parts.embedder.loaded
print(json.dumps(seen))
"""


def test_only_what_computes_a_vector_loads_the_model(tmp_path: Path) -> None:
    """Status, an outcome and a rejection never load the MiniLM model (with embeddings on
    they took 1.5-2 s and 300 MB); a recall does (in a fresh interpreter: the model is
    shared by the process once loaded)."""
    pytest.importorskip("onnxruntime")
    with swarmmem.open(tmp_path, config={"enabled": True}) as mem:  # embeddings off
        memory_id = _add(mem, "The changelog lists every public API change.")
        rejected = propose_fact(mem, "Release notes are written by hand.", evidence="README.md")
    done = run_python(PROBE_LOADS.replace("sys.argv[1:3]", repr([memory_id, rejected.id])),
                      cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "before recall": False,
        "after recall": True,
    }


def test_status_reports_coverage_and_rebuild_names_what_it_fixed(tmp_path: Path) -> None:
    """Turning embeddings on over an existing store: status counts the memories without a
    vector and says what to run; rebuild-embeddings fixes exactly those."""
    from click.testing import CliRunner

    from swarmmem.cli import main

    with swarmmem.open(tmp_path, config={"enabled": True}) as mem:
        mem.import_records(
            [{"kind": "repo_convention", "text": f"Convention number {n}."} for n in range(3)]
        )
    (tmp_path / ".opencode").mkdir()
    (tmp_path / ".opencode" / "opencode-swarm.json").write_text(
        json.dumps({"memory": DENSE}), encoding="utf-8"
    )

    def run(*args: str) -> Any:
        return CliRunner().invoke(main, ["--root", str(tmp_path), *args], catch_exceptions=False)

    status = json.loads(run("status", "--json").stdout)["embeddings"]
    assert status["enabled"] is True and status["available"] is True
    assert (status["embedded"], status["total"], status["missing"]) == (0, 3, 3)
    assert status["needs_rebuild"] is True
    assert "3 memories have no vector; run `swarmmem rebuild-embeddings`" in run("status").stdout
    rebuilt = run("rebuild-embeddings")
    assert "Re-embedded 3 memories (0 failed): 3 memories had no vector." in rebuilt.stdout
    after = json.loads(run("status", "--json").stdout)["embeddings"]
    assert (after["embedded"], after["missing"], after["needs_rebuild"]) == (3, 0, False)
    assert "Warning" not in run("status").stdout

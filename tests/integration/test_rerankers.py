"""Cross-encoder, MaxSim and identity rerankers.

No cross-encoder weights exist on PyPI, so the cross-encoder tests build tiny deterministic
ONNX graphs with the ``onnx`` package (not rankers, but models whose outputs reveal exactly
what the adapter fed them) next to a MiniLM ``tokenizer.json`` written from the vocabulary of
the installed dense extra.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from swarmmem.adapters.models import onnx_embedder as oe
from swarmmem.adapters.models.rerankers import (
    CrossEncoderReranker,
    IdentityReranker,
    MaxSimReranker,
)
from swarmmem.core.model.errors import RerankError
from swarmmem.ports.reranker import Reranker

VOCAB_MODULE = oe.installed_package_file(oe.TOKENIZER_PACKAGE, *oe.TOKENIZER_FILE_IN_PACKAGE)
DENSE_REASON = oe.OnnxMiniLmEmbedder().unavailable_reason
PAIR_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def require_dense() -> None:
    if DENSE_REASON is not None:
        pytest.skip(f"dense extra not usable: {DENSE_REASON}")


def write_tokenizer_json(path: Path) -> None:
    """Save the MiniLM fast tokenizer built from the installed vocabulary as ``path``."""
    assert VOCAB_MODULE is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    oe.wordpiece_tokenizer(oe.read_vocab_module(VOCAB_MODULE)).save(str(path))


# ----------------------------------------------------------------------------- fixtures


def save_graph(path: Path, nodes: list, inputs: tuple[str, ...], out_dim: int, inits=()) -> None:
    """Write a small opset-17 ONNX model with int64 (B, T) inputs and a float (B, out) output."""
    onnx = pytest.importorskip("onnx", reason="building test models needs the onnx package")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        nodes,
        "swarmmem_test_model",
        [helper.make_tensor_value_info(n, TensorProto.INT64, ["B", "T"]) for n in inputs],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["B", out_dim])],
        initializer=list(inits),
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))


def counting_nodes() -> tuple[list, list]:
    """logits = 100 * (# attended segment-1 tokens) + (# attended tokens) + 0 * sum(ids)."""
    from onnx import TensorProto, helper, numpy_helper

    consts = [
        numpy_helper.from_array(np.array([1], np.int64), "axis1"),
        numpy_helper.from_array(np.array(100.0, np.float32), "hundred"),
        numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
    ]
    node = helper.make_node
    nodes = [
        node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        node("Cast", ["token_type_ids"], ["type_f"], to=TensorProto.FLOAT),
        node("Cast", ["input_ids"], ["ids_f"], to=TensorProto.FLOAT),
        node("Mul", ["mask_f", "type_f"], ["seg1"]),
        node("ReduceSum", ["seg1", "axis1"], ["n_seg1"], keepdims=1),
        node("ReduceSum", ["mask_f", "axis1"], ["n_tok"], keepdims=1),
        node("ReduceSum", ["ids_f", "axis1"], ["id_sum"], keepdims=1),
        node("Mul", ["id_sum", "zero"], ["nothing"]),
        node("Mul", ["n_seg1", "hundred"], ["scaled"]),
        node("Add", ["scaled", "n_tok"], ["partial"]),
        node("Add", ["partial", "nothing"], ["logits"]),
    ]
    return nodes, consts


def embedding_nodes(out_dim: int, seed: int = 7) -> tuple[list, list]:
    """logits = sum_t mask_t * (1 + type_t) * E[id_t] @ W with small random E and W."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    consts = [
        numpy_helper.from_array(rng.standard_normal((30522, 4)).astype(np.float32), "E"),
        numpy_helper.from_array(rng.standard_normal((4, out_dim)).astype(np.float32), "W"),
        numpy_helper.from_array(np.array([1], np.int64), "axis1"),
        numpy_helper.from_array(np.array([2], np.int64), "axis2"),
        numpy_helper.from_array(np.array(1.0, np.float32), "one"),
    ]
    node = helper.make_node
    nodes = [
        node("Gather", ["E", "input_ids"], ["tok"]),
        node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        node("Cast", ["token_type_ids"], ["type_f"], to=TensorProto.FLOAT),
        node("Add", ["type_f", "one"], ["seg_w"]),
        node("Mul", ["mask_f", "seg_w"], ["w"]),
        node("Unsqueeze", ["w", "axis2"], ["w3"]),
        node("Mul", ["tok", "w3"], ["weighted"]),
        node("ReduceSum", ["weighted", "axis1"], ["pooled"], keepdims=0),
        node("MatMul", ["pooled", "W"], ["logits"]),
    ]
    return nodes, consts


def model_dir(tmp_path: Path, kind: str, *, out_dim: int = 1, layout: str = "model.onnx") -> Path:
    """A cross-encoder directory: the requested test graph + the MiniLM tokenizer.json."""
    require_dense()
    pytest.importorskip("onnx", reason="building test models needs the onnx package")
    directory = tmp_path / f"{kind}-{out_dim}"
    nodes, consts = counting_nodes() if kind == "counting" else embedding_nodes(out_dim)
    save_graph(directory / layout, nodes, PAIR_INPUTS, out_dim, consts)
    write_tokenizer_json(directory / "tokenizer.json")
    return directory


# ----------------------------------------------------------------------------- identity


def test_identity_keeps_order() -> None:
    """Identity scores descend strictly with input position and need nothing."""
    reranker = IdentityReranker()
    assert isinstance(reranker, Reranker)
    assert (reranker.name, reranker.available) == ("identity", True)
    scores = reranker.rerank("q", ["c", "a", "b"])
    assert scores == [3.0, 2.0, 1.0]
    assert sorted(range(3), key=lambda i: -scores[i]) == [0, 1, 2]
    assert reranker.rerank("q", []) == []
    with pytest.raises(TypeError):
        reranker.rerank("q", "abc")


# ----------------------------------------------------------------------------- cross-encoder


def test_cross_encoder_feeds_pairs_with_segments(tmp_path: Path) -> None:
    """Pairs are [CLS] q [SEP] p [SEP]; segment 1 = passage + final [SEP]; padding unmasked."""
    reranker = CrossEncoderReranker(model_dir(tmp_path, "counting"))
    assert isinstance(reranker, Reranker) and reranker.name == "cross-encoder"
    scores = reranker.rerank("hi", ["hello world", "x", "one two three four five"])
    # [CLS] hi [SEP] hello world [SEP]: 6 tokens, 3 in segment 1 -> 306; padding adds nothing.
    assert scores == [306.0, 205.0, 609.0]


def test_cross_encoder_truncates_only_the_passage(tmp_path: Path) -> None:
    """With max_length 16 the query stays whole and the passage is cut to fit."""
    reranker = CrossEncoderReranker(model_dir(tmp_path, "counting"), max_length=16)
    long_passage = " ".join(["word"] * 40)
    (score,) = reranker.rerank("hello world", [long_passage])
    # 16 tokens: [CLS] hello world [SEP] (segment 0) + 11 words + [SEP] (segment 1).
    assert score == 100 * 12 + 16


def test_cross_encoder_survives_an_overlong_query(tmp_path: Path) -> None:
    """A query longer than max_length is cut as well instead of failing."""
    reranker = CrossEncoderReranker(model_dir(tmp_path, "counting"), max_length=16)
    (score,) = reranker.rerank(" ".join(["query"] * 40), ["short passage"])
    assert score % 100 == 16
    assert score >= 100


def test_cross_encoder_scores_align_across_batches(tmp_path: Path) -> None:
    """Scores are deterministic and aligned with the texts across several batches."""
    reranker = CrossEncoderReranker(model_dir(tmp_path, "embedding"), batch_size=8)
    texts = [f"passage number {i} " + "about tests " * (i % 5) for i in range(20)]
    scores = reranker.rerank("how are tests run", texts)
    assert len(scores) == 20 and all(isinstance(s, float) for s in scores)
    assert len(set(scores)) > 10
    assert reranker.rerank("how are tests run", texts) == scores
    singles = [reranker.rerank("how are tests run", [t])[0] for t in texts[:5]]
    np.testing.assert_allclose(singles, scores[:5], rtol=1e-5)
    np.testing.assert_allclose(
        reranker.rerank("how are tests run", texts[::-1]), scores[::-1], rtol=1e-5
    )


def test_cross_encoder_two_logit_head_uses_positive_class(tmp_path: Path) -> None:
    """A (B, 2) head scores with its second logit."""
    two = CrossEncoderReranker(model_dir(tmp_path, "embedding", out_dim=2))
    scores = two.rerank("q", ["a b", "c"])
    assert len(scores) == 2 and scores[0] != scores[1]


def test_cross_encoder_rejects_wide_outputs(tmp_path: Path) -> None:
    """A head with more than two logits raises RerankError naming the shape."""
    wide = CrossEncoderReranker(model_dir(tmp_path, "embedding", out_dim=3))
    with pytest.raises(RerankError, match=r"\(2, 3\)"):
        wide.rerank("q", ["a", "b"])


def test_cross_encoder_finds_optimum_layout(tmp_path: Path) -> None:
    """A model stored as onnx/model.onnx (the Xenova layout) is found."""
    directory = model_dir(tmp_path, "counting", layout="onnx/model.onnx")
    assert not (directory / "model.onnx").exists()
    assert CrossEncoderReranker(directory).rerank("hi", ["x"]) == [205.0]


def test_cross_encoder_loads_lazily(tmp_path: Path) -> None:
    """Construction, `available` and an empty rerank load nothing."""
    reranker = CrossEncoderReranker(model_dir(tmp_path, "counting"))
    assert reranker.available is True
    assert reranker.rerank("q", []) == []
    assert reranker.loaded is False
    reranker.rerank("q", ["x"])
    assert reranker.loaded is True


def test_cross_encoder_missing_directory(tmp_path: Path) -> None:
    """A missing model directory is unavailable and rerank raises RerankError."""
    reranker = CrossEncoderReranker(tmp_path / "no-such-model")
    assert reranker.available is False
    assert "no-such-model" in (reranker.unavailable_reason or "")
    with pytest.raises(RerankError, match="no-such-model"):
        reranker.rerank("q", ["a"])


def test_cross_encoder_missing_tokenizer(tmp_path: Path) -> None:
    """A directory without tokenizer.json is unavailable."""
    directory = model_dir(tmp_path, "counting")
    (directory / "tokenizer.json").unlink()
    reranker = CrossEncoderReranker(directory)
    assert reranker.available is False
    with pytest.raises(RerankError, match=r"tokenizer\.json"):
        reranker.rerank("q", ["a"])


def test_cross_encoder_corrupt_model(tmp_path: Path) -> None:
    """A file that is not ONNX fails on first use and stays unavailable."""
    directory = model_dir(tmp_path, "counting")
    (directory / "model.onnx").write_bytes(b"definitely not onnx")
    reranker = CrossEncoderReranker(directory)
    assert reranker.available is True
    with pytest.raises(RerankError, match="loading failed"):
        reranker.rerank("q", ["a"])
    assert reranker.available is False
    with pytest.raises(RerankError):
        reranker.rerank("q", ["a"])


def test_cross_encoder_unsupported_inputs(tmp_path: Path) -> None:
    """A model wanting inputs other than ids/mask/segments is refused at load."""
    require_dense()
    pytest.importorskip("onnx", reason="building test models needs the onnx package")
    nodes, consts = counting_nodes()
    directory = tmp_path / "odd"
    save_graph(directory / "model.onnx", nodes, (*PAIR_INPUTS, "position_ids"), 1, consts)
    write_tokenizer_json(directory / "tokenizer.json")
    reranker = CrossEncoderReranker(directory)
    with pytest.raises(RerankError, match="position_ids"):
        reranker.rerank("q", ["a"])
    assert reranker.available is False


def test_cross_encoder_without_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without onnxruntime the reranker is unavailable and names the extra."""
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    (tmp_path / "model.onnx").write_bytes(b"placeholder")
    (tmp_path / "tokenizer.json").write_text("{}")
    reranker = CrossEncoderReranker(tmp_path)
    assert reranker.available is False
    with pytest.raises(RerankError, match=r"swarmmem\[dense\]"):
        reranker.rerank("q", ["a"])


def test_cross_encoder_rejects_bad_arguments(tmp_path: Path) -> None:
    """Bad settings and non-str inputs raise errors naming the value."""
    with pytest.raises(ValueError, match="batch_size"):
        CrossEncoderReranker(tmp_path, batch_size=0)
    with pytest.raises(ValueError, match="max_length"):
        CrossEncoderReranker(tmp_path, max_length=3)
    with pytest.raises(TypeError, match="index 1"):
        CrossEncoderReranker(tmp_path).rerank("q", ["a", None])  # type: ignore[list-item]


# ----------------------------------------------------------------------------- maxsim


@pytest.fixture(scope="module")
def maxsim() -> MaxSimReranker:
    """One MaxSim reranker over the installed MiniLM (skips without the dense extra)."""
    require_dense()
    return MaxSimReranker()


def test_maxsim_prefers_the_relevant_passage(maxsim: MaxSimReranker) -> None:
    """A passage answering the query outranks unrelated ones."""
    assert isinstance(maxsim, Reranker) and maxsim.name == "maxsim"
    passages = [
        "The cafeteria serves lunch at noon on weekdays.",
        "Run the unit tests with pytest -q from the repository root.",
        "Use black to format Python code.",
    ]
    scores = maxsim.rerank("how are the unit tests run", passages)
    assert len(scores) == 3
    assert max(range(3), key=lambda i: scores[i]) == 1
    assert scores[1] > scores[0] + 0.2
    db = maxsim.rerank(
        "which database stores memories",
        ["The sky is blue today.", "Memories are stored in a SQLite database."],
    )
    assert db[1] > db[0] + 0.2


def test_maxsim_score_range(maxsim: MaxSimReranker) -> None:
    """The query itself scores ~1, an empty passage 0, everything in [-1, 1]."""
    query = "how are the unit tests run"
    same, empty, other = maxsim.rerank(query, [query, "", "completely different words"])
    assert same == pytest.approx(1.0, abs=1e-3)
    assert empty == 0.0
    assert -1.0 <= other < same
    assert maxsim.rerank("", ["anything"]) == [0.0]


def test_maxsim_shares_an_embedder() -> None:
    """A MaxSim reranker built on an embedder uses (and loads) that embedder."""
    require_dense()
    embedder = oe.OnnxMiniLmEmbedder()
    reranker = MaxSimReranker(embedder)
    assert reranker.loaded is False and reranker.available is True
    assert reranker.rerank("q", []) == []
    assert embedder.loaded is False
    reranker.rerank("unit tests", ["tests"])
    assert embedder.loaded is True
    with pytest.raises(ValueError, match="either"):
        MaxSimReranker(embedder, model_path="x.onnx")


def test_maxsim_unavailable(tmp_path: Path) -> None:
    """A missing model file makes MaxSim unavailable; rerank raises RerankError."""
    reranker = MaxSimReranker(model_path=tmp_path / "missing.onnx")
    assert reranker.available is False
    with pytest.raises(RerankError, match=r"missing\.onnx"):
        reranker.rerank("q", ["a"])

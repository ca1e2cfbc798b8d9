"""all-MiniLM-L6-v2 from the user's own ONNX export (``model_path``), next to the packaged one.

The "user exports" are built in a temporary directory from the files of the installed dense
extra: its ``model.onnx`` copied into the layouts users have (an ``optimum-cli`` output, a
Hugging Face repository, a hub cache snapshot of symlinks) with the tokenizer files written
as those layouts hold them.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from factories import curate_fact

import swarmmem
from swarmmem.adapters.models import onnx_embedder as oe
from swarmmem.adapters.models._model_files import file_sha256
from swarmmem.adapters.models.onnx_embedder import OnnxMiniLmEmbedder
from swarmmem.core.model.errors import EmbeddingUnavailableError

DENSE_REASON = OnnxMiniLmEmbedder().unavailable_reason
PACKAGED_MODEL = oe.installed_package_file(oe.MODEL_PACKAGE, *oe.MODEL_FILE_IN_PACKAGE)
VOCAB_MODULE = oe.installed_package_file(oe.TOKENIZER_PACKAGE, *oe.TOKENIZER_FILE_IN_PACKAGE)
USER_LABEL = f"all-MiniLM-L6-v2@sha256:{oe.MODEL_SHA256[:16]}:384"
TEXTS = [
    "",
    "A man is eating food.",
    "Run the unit tests with `pytest -q` before pushing to CI!",
    "café naïve Straße façade 日本語のテキスト emoji 😀 [CLS] [MASK]",
    " ".join(f"word{i}" for i in range(400)),
    *[f"memory recall fact number {n} about scoped conventions" for n in range(28)],
]  # 33 texts: two batches, the longest text alone in the second

pytestmark = pytest.mark.skipif(
    DENSE_REASON is not None, reason=f"dense extra not usable: {DENSE_REASON}"
)


@pytest.fixture(scope="module")
def packaged() -> OnnxMiniLmEmbedder:
    """The embedder over the packaged weights (the reference vectors)."""
    return OnnxMiniLmEmbedder()


@pytest.fixture(scope="module")
def reference(packaged: OnnxMiniLmEmbedder) -> np.ndarray:
    """The packaged model's vectors of :data:`TEXTS`."""
    return packaged.embed_batch(TEXTS)


def write_tokenizer_files(directory: Path, *, tokenizer_json: bool, vocab_txt: bool) -> None:
    """The tokenizer files of an all-MiniLM-L6-v2 export: ``tokenizer.json`` (saved with the
    fixed 128-token truncation and padding the published file carries), ``vocab.txt`` and
    the three small JSON configs."""
    assert VOCAB_MODULE is not None
    vocab = oe.read_vocab_module(VOCAB_MODULE)
    directory.mkdir(parents=True, exist_ok=True)
    if tokenizer_json:
        tokenizer = oe.wordpiece_tokenizer(vocab)
        tokenizer.enable_truncation(max_length=128)
        tokenizer.enable_padding(length=128, pad_id=0, pad_token="[PAD]")
        tokenizer.save(str(directory / "tokenizer.json"))
    if vocab_txt:
        (directory / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    configs = {
        "tokenizer_config.json": {"do_lower_case": True, "model_max_length": 512},
        "special_tokens_map.json": {"cls_token": "[CLS]", "sep_token": "[SEP]"},
        "config.json": {"model_type": "bert", "hidden_size": 384, "num_hidden_layers": 6},
    }
    for name, content in configs.items():
        (directory / name).write_text(json.dumps(content), encoding="utf-8")


def hub_layout(root: Path) -> Path:
    """A Hugging Face repository: ``onnx/model.onnx``, tokenizer files at the top."""
    assert PACKAGED_MODEL is not None
    (root / "onnx").mkdir(parents=True)
    shutil.copyfile(PACKAGED_MODEL, root / "onnx" / "model.onnx")
    write_tokenizer_files(root, tokenizer_json=True, vocab_txt=True)
    return root


def optimum_layout(root: Path) -> Path:
    """An ``optimum-cli export onnx`` output with only a ``vocab.txt`` for a tokenizer."""
    assert PACKAGED_MODEL is not None
    root.mkdir(parents=True)
    shutil.copyfile(PACKAGED_MODEL, root / "model.onnx")
    write_tokenizer_files(root, tokenizer_json=False, vocab_txt=True)
    return root


def tiny_model(path: Path, width: int) -> Path:
    """A real ONNX graph with MiniLM's inputs whose hidden states are ``width`` wide."""
    onnx = pytest.importorskip("onnx")
    helper, tensor = onnx.helper, onnx.TensorProto
    nodes = [
        helper.make_node("Add", ["input_ids", "attention_mask"], ["summed"]),
        helper.make_node("Cast", ["summed"], ["as_float"], to=tensor.FLOAT),
        helper.make_node("Unsqueeze", ["as_float", "last_axis"], ["column"]),
        helper.make_node("Mul", ["column", "spread"], ["last_hidden_state"]),
    ]
    initializers = [
        onnx.numpy_helper.from_array(np.array([2], np.int64), "last_axis"),
        onnx.numpy_helper.from_array(np.linspace(1, 2, width, dtype=np.float32), "spread"),
    ]
    inputs = [
        helper.make_tensor_value_info(name, tensor.INT64, ["batch", "tokens"])
        for name in ("input_ids", "attention_mask")
    ]
    output = helper.make_tensor_value_info(
        "last_hidden_state", tensor.FLOAT, ["batch", "tokens", width]
    )
    graph = helper.make_graph(nodes, "tiny", inputs, [output], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(model.SerializeToString())
    return path


# ----------------------------------------------------------------------------- same vectors


@pytest.mark.parametrize("layout", ["hub directory", "optimum directory", "onnx file"])
def test_a_user_export_gives_the_packaged_vectors(
    tmp_path: Path, packaged: OnnxMiniLmEmbedder, reference: np.ndarray, layout: str
) -> None:
    """The same weights from a user's directory or .onnx file embed exactly like the
    packaged model, token vectors included; only the version label differs."""
    if layout == "optimum directory":
        path = optimum_layout(tmp_path / "export")
    else:
        root = hub_layout(tmp_path / "all-MiniLM-L6-v2")
        path = root / "onnx" / "model.onnx" if layout == "onnx file" else root
    user = OnnxMiniLmEmbedder(model_path=path)
    assert user.available is True, user.unavailable_reason
    assert user.dimension == 384
    assert user.model_version == USER_LABEL != packaged.model_version
    assert np.array_equal(user.embed_batch(TEXTS), reference)
    assert np.array_equal(user.embed(TEXTS[2]), packaged.embed(TEXTS[2]))
    mine, theirs = user.token_vectors(TEXTS[:4]), packaged.token_vectors(TEXTS[:4])
    assert all(np.array_equal(a, b) for a, b in zip(mine, theirs, strict=True))


def test_a_hub_cache_snapshot_of_symlinks_is_followed(
    tmp_path: Path, reference: np.ndarray
) -> None:
    """A hub cache snapshot (files are symlinks into ``blobs/``) works like a copy; the label
    is the content's, not the link's."""
    source = hub_layout(tmp_path / "source")
    cache = tmp_path / "models--sentence-transformers--all-MiniLM-L6-v2"
    snapshot = cache / "snapshots" / "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"
    (cache / "blobs").mkdir(parents=True)
    for relative in ("onnx/model.onnx", "tokenizer.json"):
        blob = cache / "blobs" / file_sha256(source / relative)
        shutil.copyfile(source / relative, blob)
        link = snapshot / relative
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    user = OnnxMiniLmEmbedder(model_path=snapshot)
    assert user.model_version == USER_LABEL
    assert np.array_equal(user.embed_batch(TEXTS[:4]), reference[:4])


def test_a_maxsim_reranker_takes_the_user_model(tmp_path: Path) -> None:
    """The reranker built from a model directory scores with that model."""
    from swarmmem.adapters.models.rerankers import MaxSimReranker

    reranker = MaxSimReranker(model_path=hub_layout(tmp_path / "export"))
    same, other = reranker.rerank("unit tests", ["unit tests", "lunch at noon"])
    assert same == pytest.approx(1.0, abs=1e-3) and other < same


# ----------------------------------------------------------------------------- version label


def test_the_version_label_follows_the_model_bytes(tmp_path: Path) -> None:
    """Exports of one file share a label; other bytes get another; an explicit name or
    version is used as given; the label is known without loading the model."""
    first = OnnxMiniLmEmbedder(model_path=hub_layout(tmp_path / "a"))
    second = OnnxMiniLmEmbedder(model_path=optimum_layout(tmp_path / "b"))
    assert first.model_version == second.model_version == USER_LABEL
    assert first.loaded is False
    other = optimum_layout(tmp_path / "c")
    with (other / "model.onnx").open("ab") as handle:
        handle.write(b"\0")  # trailing bytes: another file (onnx would not even parse it)
    changed = OnnxMiniLmEmbedder(model_path=other)
    assert changed.model_version.startswith("all-MiniLM-L6-v2@sha256:")
    assert changed.model_version != USER_LABEL
    assert changed.model_version.endswith(":384")
    named = OnnxMiniLmEmbedder(model_path=tmp_path / "a", model_name="sentence-transformers/m")
    assert named.model_version == f"sentence-transformers/m@sha256:{oe.MODEL_SHA256[:16]}:384"
    assert OnnxMiniLmEmbedder(model_path=tmp_path / "a", version="v7").model_version == "v7"
    assert OnnxMiniLmEmbedder(model_path=tmp_path / "gone").model_version.endswith(
        "@sha256:unknown:384"
    )


def test_a_model_file_replaced_after_its_label_was_taken_is_refused(tmp_path: Path) -> None:
    """The label handed to the store names the bytes; a load that finds others fails."""
    root = optimum_layout(tmp_path / "export")
    user = OnnxMiniLmEmbedder(model_path=root)
    assert user.model_version == USER_LABEL
    tiny_model(root / "model.onnx", 384)
    with pytest.raises(EmbeddingUnavailableError, match="changed after its version was taken"):
        user.embed("x")
    assert OnnxMiniLmEmbedder(model_path=root).model_version != USER_LABEL


def test_shared_embedders_of_a_replaced_file_load_it_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long-running server that opens its memory per call: the same file shares one
    session; a replaced file gets its own (and its own label)."""
    monkeypatch.setattr(oe, "_SHARED_RUNTIMES", {})
    root = optimum_layout(tmp_path / "export")
    first = OnnxMiniLmEmbedder(model_path=root, shared=True)
    first.embed("warm")
    assert OnnxMiniLmEmbedder(model_path=root, shared=True).loaded is True
    tiny_model(root / "model.onnx", 384)
    replaced = OnnxMiniLmEmbedder(model_path=root, shared=True)
    assert replaced.loaded is False
    assert replaced.model_version != first.model_version
    assert replaced.embed("x").shape == (384,)


def test_a_store_keeps_the_model_it_was_built_with(
    tmp_path: Path, packaged: OnnxMiniLmEmbedder
) -> None:
    """Vectors of the packaged model and of a user's model are never mixed: switching
    either way leaves recall lexical and asks for a rebuild, which then adopts the new one."""
    user = OnnxMiniLmEmbedder(model_path=hub_layout(tmp_path / "export"))
    config = {"enabled": True, "embeddings": {"enabled": True}}
    project = tmp_path / "project"
    project.mkdir()
    text = "Rotate credentials quarterly and revoke unused keys."
    question = "how often should secrets be replaced"
    with swarmmem.open(project, config=config, embedder=packaged) as mem:
        if mem.runtime.dense_parts() is None:
            pytest.skip(mem.runtime.dense_unavailable_reason or "dense retrieval unavailable")
        curate_fact(mem, text, kind="security_note", evidence="README.md")
        assert mem.recall(question).diagnostics.get("fusionActive") is True
    for embedder in (user, packaged):
        with swarmmem.open(project, config=config, embedder=embedder) as mem:
            coverage = mem.runtime.embeddings.coverage()
            assert coverage["needs_rebuild"] is True
            assert coverage["model_version"] == embedder.model_version
            assert coverage["stored_model_version"] != embedder.model_version
            assert "fusionActive" not in mem.recall(question).diagnostics
            result = mem.rebuild_embedding_index()
            assert result.advanced and result.outdated_model
            assert result.model_version == embedder.model_version
            assert mem.recall(question).diagnostics.get("fusionActive") is True


# ----------------------------------------------------------------------------- bad paths


def test_a_missing_path_is_unavailable_with_its_name(tmp_path: Path) -> None:
    """Nothing at the path: unavailable before any load, the path in the reason."""
    missing = tmp_path / "no-such-export"
    broken = OnnxMiniLmEmbedder(model_path=missing)
    assert broken.available is False
    assert broken.unavailable_reason == f"model path not found: {missing}"
    with pytest.raises(EmbeddingUnavailableError, match="model path not found"):
        broken.embed("x")
    assert broken.loaded is False


def test_a_directory_without_a_model_names_the_files_it_wants(tmp_path: Path) -> None:
    """A directory holding only tokenizer files (or safetensors weights) is refused."""
    write_tokenizer_files(tmp_path / "weights", tokenizer_json=True, vocab_txt=False)
    (tmp_path / "weights" / "model.safetensors").write_bytes(b"weights")
    broken = OnnxMiniLmEmbedder(model_path=tmp_path / "weights")
    assert "holds no model.onnx or onnx/model.onnx" in (broken.unavailable_reason or "")
    not_onnx = OnnxMiniLmEmbedder(model_path=tmp_path / "weights" / "model.safetensors")
    assert "is not an ONNX export (.onnx)" in (not_onnx.unavailable_reason or "")


def test_a_model_without_its_tokenizer_is_unavailable(tmp_path: Path) -> None:
    """No tokenizer.json or vocab.txt beside the model: unavailable, both places named;
    the packaged vocabulary is not taken in its stead. An explicit tokenizer_path helps."""
    assert PACKAGED_MODEL is not None
    root = tmp_path / "export"
    (root / "onnx").mkdir(parents=True)
    shutil.copyfile(PACKAGED_MODEL, root / "onnx" / "model.onnx")
    broken = OnnxMiniLmEmbedder(model_path=root)
    reason = broken.unavailable_reason or ""
    assert "no tokenizer file (tokenizer.json or vocab.txt)" in reason
    assert str(root / "onnx") in reason and str(root) in reason
    with pytest.raises(EmbeddingUnavailableError, match="no tokenizer file"):
        broken.embed("x")
    assert broken.model_version == USER_LABEL  # the model itself is readable
    write_tokenizer_files(tmp_path / "tok", tokenizer_json=False, vocab_txt=True)
    helped = OnnxMiniLmEmbedder(model_path=root, tokenizer_path=tmp_path / "tok" / "vocab.txt")
    assert helped.available is True
    assert helped.embed("x").shape == (384,)


def test_a_corrupt_model_fails_its_load(tmp_path: Path) -> None:
    """An .onnx file that is not a graph: available until loaded, then failed for good."""
    root = optimum_layout(tmp_path / "export")
    (root / "model.onnx").write_bytes(b"\x08\x07garbage that is no protobuf graph")
    broken = OnnxMiniLmEmbedder(model_path=root)
    assert broken.available is True
    with pytest.raises(EmbeddingUnavailableError, match="loading failed"):
        broken.embed("x")
    assert broken.available is False


def test_a_model_of_another_width_is_refused(tmp_path: Path) -> None:
    """A model whose hidden states are not the configured (store's) width fails its load
    naming both widths; configured to its width it runs."""
    root = tmp_path / "export"
    tiny_model(root / "model.onnx", 8)
    write_tokenizer_files(root, tokenizer_json=True, vocab_txt=False)
    wrong = OnnxMiniLmEmbedder(model_path=root)
    with pytest.raises(EmbeddingUnavailableError, match=r"width 8 differs .* dimension 384"):
        wrong.embed("x")
    assert wrong.available is False
    narrow = OnnxMiniLmEmbedder(model_path=root, dimension=8)
    assert narrow.model_version.endswith(":8")
    vector = narrow.embed("hello world")
    assert vector.shape == (8,) and float(np.linalg.norm(vector)) == pytest.approx(1.0)


def test_a_sentence_embedding_only_export_is_refused(tmp_path: Path) -> None:
    """An export whose output is already pooled (batch, 384) is not token hidden states."""
    onnx = pytest.importorskip("onnx")
    root = tmp_path / "export"
    tiny_model(root / "model.onnx", 384)
    model = onnx.load(str(root / "model.onnx"))
    reduce = onnx.helper.make_node("ReduceMean", ["last_hidden_state"], ["pooled"], axes=[1])
    model.graph.node.append(reduce)
    del model.graph.output[:]
    model.graph.output.append(
        onnx.helper.make_tensor_value_info("pooled", onnx.TensorProto.FLOAT, ["batch", 384])
    )
    model.opset_import[0].version = 13
    (root / "model.onnx").write_bytes(model.SerializeToString())
    write_tokenizer_files(root, tokenizer_json=True, vocab_txt=False)
    with pytest.raises(EmbeddingUnavailableError, match="expected token hidden states"):
        OnnxMiniLmEmbedder(model_path=root).embed("x")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_model_is_unavailable(tmp_path: Path) -> None:
    """A model file the process may not read: unavailable, and a label matching nothing."""
    root = optimum_layout(tmp_path / "export")
    (root / "model.onnx").chmod(0)
    broken = OnnxMiniLmEmbedder(model_path=root)
    assert broken.unavailable_reason == f"model file is not readable: {root / 'model.onnx'}"
    assert broken.model_version.endswith("@sha256:unknown:384")


# ----------------------------------------------------------------------------- packaged pin


def test_the_packaged_model_is_checked_by_sha256(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The packaged weights load only with the pinned digest: an installed model package
    whose file differs (here one shadowing the real one on sys.path) is refused."""
    assert PACKAGED_MODEL is not None
    assert file_sha256(PACKAGED_MODEL) == oe.MODEL_SHA256
    package = tmp_path / "site" / oe.MODEL_PACKAGE
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    tampered = package / "model.onnx"
    shutil.copyfile(PACKAGED_MODEL, tampered)
    with tampered.open("ab") as handle:
        handle.write(b"\0")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    broken = OnnxMiniLmEmbedder()
    assert oe.installed_package_file(oe.MODEL_PACKAGE, "model.onnx") == tampered
    assert broken.available is True
    assert broken.model_version == "Xenova/all-MiniLM-L6-v2:384"
    with pytest.raises(EmbeddingUnavailableError, match="differs from the pinned"):
        broken.embed("x")

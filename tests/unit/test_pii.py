"""PII detectors: the regex default (reference vectors, evasions) and the optional NER model."""

from __future__ import annotations

import importlib.util
import json
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from factories import run_threads

from swarmmem.adapters.detectors import ner_pii
from swarmmem.adapters.detectors.ner_pii import NerPiiDetector
from swarmmem.adapters.detectors.regex_pii import (
    PII_CONFIDENCE,
    RegexPiiDetector,
    luhn_valid,
    normalize_for_detection,
)
from swarmmem.core.model.errors import DetectorError, MemoryPiiDetectorError
from swarmmem.ports.detectors import PiiDetector, PiiFindings


@pytest.fixture
def regex() -> RegexPiiDetector:
    """The default PII detector."""
    return RegexPiiDetector()


# -- regex detector: reference vectors ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("contact brett.jordan@example-corp.com today", "email"),
        ("card 4111 1111 1111 1111 on file", "credit_card"),
        ("card 4111-1111-1111-1111", "credit_card"),
        ("card 4111111111111111", "credit_card"),
        ("call +1 (555) 123-4567", "phone"),
        ("ssn 123-45-6789", "ssn"),
        ("host 192.168.1.42 is up", "ip_address"),
    ],
)
def test_reference_positive_vectors(regex: RegexPiiDetector, text: str, kind: str) -> None:
    """Each upstream positive vector is found with its type and confidence."""
    findings = regex.detect(text)
    assert findings.counts_by_type.get(kind, 0) >= 1
    assert findings.score >= PII_CONFIDENCE[kind]


@pytest.mark.parametrize(
    "text",
    [
        "@router handles requests in src/router.ts",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "id 12345678901234",
        "version 1.2.3456",
        "release on 2026-08-22",
        "addr 999.999.1.1",
        "",
    ],
)
def test_reference_negative_vectors(regex: RegexPiiDetector, text: str) -> None:
    """Upstream non-PII vectors produce an empty summary with score 0."""
    assert regex.detect(text) == PiiFindings(score=0.0, counts_by_type={})


def test_luhn_invalid_card_is_not_a_card(regex: RegexPiiDetector) -> None:
    """`4111 1111 1111 1112` fails Luhn (its leading groups still look like a phone)."""
    findings = regex.detect("4111 1111 1111 1112")
    assert "credit_card" not in findings.counts_by_type
    assert findings.score < PII_CONFIDENCE["credit_card"]


def test_hex_sha_and_long_number_are_not_phones(regex: RegexPiiDetector) -> None:
    """A commit hash and a digit run without separators are no phone numbers."""
    assert "phone" not in regex.detect("3f786850e387550fdab836ed7e6dc881de23001b").counts_by_type
    assert "phone" not in regex.detect("12345678901234").counts_by_type


def test_two_ips_stay_at_or_below_the_default_threshold(regex: RegexPiiDetector) -> None:
    """`10.0.0.5 and 8.8.8.8` counts two IPs and scores 0.5 (never rejects at 0.7)."""
    findings = regex.detect("10.0.0.5 and 8.8.8.8")
    assert findings.counts_by_type == {"ip_address": 2}
    assert findings.score == 0.5
    assert findings.score <= 0.7


def test_phone_alone_scores_exactly_the_threshold(regex: RegexPiiDetector) -> None:
    """A phone number alone scores 0.7, which a strict `>` 0.7 rule never rejects."""
    findings = regex.detect("call +1 (555) 123-4567")
    assert findings.counts_by_type == {"phone": 1}
    assert findings.score == 0.7


def test_counts_follow_finding_order_and_score_is_the_max(regex: RegexPiiDetector) -> None:
    """Types appear card, email, phone, ssn, ip; the score is the highest confidence."""
    text = (
        "ip 10.1.2.3, ssn 123-45-6789, mail a.b@example.org and c@example.net, "
        "card 4111 1111 1111 1111"
    )
    findings = regex.detect(text)
    assert list(findings.counts_by_type) == ["credit_card", "email", "phone", "ssn", "ip_address"]
    assert findings.counts_by_type["email"] == 2
    assert findings.counts_by_type["ssn"] == 1
    assert findings.counts_by_type["ip_address"] == 1
    assert findings.score == 0.95
    assert findings.found


def test_summary_never_holds_matched_text(regex: RegexPiiDetector) -> None:
    """The result carries types, counts and a score only."""
    findings = regex.detect("mail brett.jordan@example-corp.com ssn 123-45-6789")
    assert "brett" not in repr(findings)
    assert "6789" not in repr(findings)
    assert all(isinstance(v, int) for v in findings.counts_by_type.values())


def test_regex_detector_satisfies_the_port(regex: RegexPiiDetector) -> None:
    """The regex detector is a PiiDetector."""
    assert isinstance(regex, PiiDetector)


# -- regex detector: evasions -----------------------------------------------------------


def test_fullwidth_digits_are_folded(regex: RegexPiiDetector) -> None:
    """Fullwidth card digits and SSN are detected after NFKC."""
    assert "credit_card" in regex.detect("４１１１ １１１１ １１１１ １１１１").counts_by_type
    assert regex.detect("ｓｓｎ １２３－４５－６７８９").counts_by_type.get("ssn") == 1


def test_fullwidth_at_sign_email_is_folded(regex: RegexPiiDetector) -> None:
    """A FULLWIDTH COMMERCIAL AT does not hide an email address."""
    assert regex.detect("brett＠example.com").counts_by_type == {"email": 1}


@pytest.mark.parametrize("invisible", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"])
def test_invisible_characters_are_removed(regex: RegexPiiDetector, invisible: str) -> None:
    """Zero-width characters, the word joiner, BOM and soft hyphen do not split PII."""
    ssn = invisible.join("123-45-6789")
    email = f"brett{invisible}.jordan@exa{invisible}mple.com"
    card = invisible.join("4111111111111111")
    findings = regex.detect(f"{ssn} {email} {card}")
    assert findings.counts_by_type.get("ssn") == 1
    assert findings.counts_by_type.get("email") == 1
    assert findings.counts_by_type.get("credit_card") == 1


def test_bidi_marks_are_removed(regex: RegexPiiDetector) -> None:
    """LRM and RLM inside an SSN are removed before matching."""
    assert regex.detect("123\u200e-45\u200f-6789").counts_by_type.get("ssn") == 1


def test_stored_text_is_not_changed(regex: RegexPiiDetector) -> None:
    """Detection works on a copy: the caller's string is left as it was."""
    text = "１２３-45-6789\u200b"
    regex.detect(text)
    assert text == "１２３-45-6789\u200b"
    assert normalize_for_detection(text) == "123-45-6789"


def test_non_latin_digits_that_nfkc_keeps_are_not_digits(regex: RegexPiiDetector) -> None:
    """Arabic-Indic digits are not folded by NFKC and, as in JavaScript, are not `\\d`."""
    assert regex.detect("١٢٣-٤٥-٦٧٨٩").counts_by_type == {}


# -- regex detector: helpers ------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "valid"),
    [
        ("4111111111111111", True),
        ("4111 1111 1111 1111", True),
        ("5500-0000-0000-0004", True),
        ("378282246310005", True),
        ("4111111111111112", False),
        ("411111111111", False),
        ("41111111111111111111", False),
        ("", False),
    ],
)
def test_luhn(number: str, valid: bool) -> None:
    """Luhn accepts the classic test numbers and rejects bad checksums and lengths."""
    assert luhn_valid(number) is valid


def test_ipv4_octets_are_range_checked(regex: RegexPiiDetector) -> None:
    """255 is a valid octet, 256 is not (dotted quads may also look like phones)."""
    assert regex.detect("255.255.255.255").counts_by_type.get("ip_address") == 1
    assert "ip_address" not in regex.detect("256.1.1.1").counts_by_type
    assert regex.detect("256.1.1.1").counts_by_type == {}


# -- NER detector: fail closed -------------------------------------------------------------


def test_ner_without_model_fails_closed_with_instructions() -> None:
    """No model directory: a typed error saying what to install and configure."""
    with pytest.raises(MemoryPiiDetectorError) as info:
        NerPiiDetector()
    message = str(info.value)
    assert "no local model directory" in message
    assert "pip install 'swarmmem[dense]'" in message
    assert "model_dir" in message
    assert "token-classification" in message
    assert "tokenizer.json" in message
    assert 'piiDetector to "regex"' in message
    assert isinstance(info.value, DetectorError)


def test_ner_with_missing_directory_fails_closed(tmp_path: Path) -> None:
    """A directory that does not exist is named in the error."""
    missing = tmp_path / "nope"
    with pytest.raises(MemoryPiiDetectorError, match="does not exist"):
        NerPiiDetector(missing)


def test_ner_with_incomplete_directory_fails_closed(tmp_path: Path) -> None:
    """Each missing file is named: the model, then tokenizer.json, then config.json."""
    with pytest.raises(MemoryPiiDetectorError, match=r"no model\.onnx"):
        NerPiiDetector(tmp_path)
    (tmp_path / "model.onnx").write_bytes(b"")
    with pytest.raises(MemoryPiiDetectorError, match=r"tokenizer\.json is missing"):
        NerPiiDetector(tmp_path)
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(MemoryPiiDetectorError, match=r"config\.json is missing"):
        NerPiiDetector(tmp_path)


def test_ner_without_runtime_packages_fails_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """onnxruntime / tokenizers absent: the error names them and the extra to install."""
    for name in ("model.onnx", "tokenizer.json", "config.json"):
        (tmp_path / name).write_text("{}")
    real_find_spec = importlib.util.find_spec

    def fake_find_spec(name: str, *args: Any) -> Any:
        if name in ("onnxruntime", "tokenizers"):
            return None
        return real_find_spec(name, *args)

    monkeypatch.setattr(ner_pii.importlib.util, "find_spec", fake_find_spec)
    with pytest.raises(MemoryPiiDetectorError) as info:
        NerPiiDetector(tmp_path)
    assert "onnxruntime and tokenizers not installed" in str(info.value)
    assert "swarmmem[dense]" in str(info.value)


def test_ner_with_broken_model_fails_closed_on_first_use(tmp_path: Path) -> None:
    """Files that exist but cannot load raise on detect, never return an empty summary."""
    (tmp_path / "model.onnx").write_bytes(b"not an onnx model")
    (tmp_path / "tokenizer.json").write_text("{}")
    (tmp_path / "config.json").write_text(json.dumps({"id2label": {"0": "O"}}))
    detector = NerPiiDetector(tmp_path)
    with pytest.raises(MemoryPiiDetectorError, match="loading the model failed"):
        detector.detect("Alice Smith")
    assert not detector.loaded


def test_ner_without_id2label_fails_closed(tmp_path: Path) -> None:
    """A config.json without id2label is reported as such."""
    (tmp_path / "model.onnx").write_bytes(b"x")
    (tmp_path / "tokenizer.json").write_text("{}")
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(MemoryPiiDetectorError, match="id2label"):
        NerPiiDetector(tmp_path).detect("Alice")


def test_ner_rejects_a_silly_window(tmp_path: Path) -> None:
    """max_length below 3 cannot hold a token between two special tokens."""
    for name in ("model.onnx", "tokenizer.json", "config.json"):
        (tmp_path / name).write_text("{}")
    with pytest.raises(MemoryPiiDetectorError, match="max_length"):
        NerPiiDetector(tmp_path, max_length=2)


# -- NER detector: a tiny model built here ----------------------------------------------

LABELS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "alice",
    "smith",
    "works",
    "at",
    "acme",
    "corp",
    "in",
    "paris",
    "bob",
    "python",
]
# token -> (label, logit); every other label gets logit 0.
TOKEN_LABELS = {
    "alice": ("B-PER", 6.0),
    "smith": ("I-PER", 2.0),
    "bob": ("B-PER", 4.0),
    "acme": ("B-ORG", 5.0),
    "corp": ("I-ORG", 5.0),
    "paris": ("B-LOC", 3.0),
    "python": ("B-MISC", 6.0),
}


def _probability(logit: float) -> float:
    """Softmax probability of the winning label when all others have logit 0."""
    return float(np.exp(logit) / (np.exp(logit) + len(LABELS) - 1))


def build_tiny_ner_model(directory: Path) -> Path:
    """Write a word-level tokenizer, config.json and a Gather-based ONNX tagger."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {token: i for i, token in enumerate(VOCAB)}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(directory / "tokenizer.json"))
    config = {"id2label": {str(i): label for i, label in enumerate(LABELS)}}
    (directory / "config.json").write_text(json.dumps(config))

    table = np.zeros((len(VOCAB), len(LABELS)), dtype=np.float32)
    table[:, 0] = 3.0  # "O" wins for every token not listed
    for token, (label, logit) in TOKEN_LABELS.items():
        table[vocab[token], 0] = 0.0
        table[vocab[token], LABELS.index(label)] = logit
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["scores"]),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask", "last_axis"], ["mask3"]),
        helper.make_node("Mul", ["scores", "mask3"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes,
        "tiny_ner",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["B", "T"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["B", "T"]),
        ],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["B", "T", len(LABELS)])],
        initializer=[
            numpy_helper.from_array(table, "table"),
            numpy_helper.from_array(np.array([2], dtype=np.int64), "last_axis"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(directory / "model.onnx"))
    return directory


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny NER model directory, built once per module."""
    return build_tiny_ner_model(tmp_path_factory.mktemp("ner") / "model")


def test_ner_loads_lazily(tiny_model_dir: Path) -> None:
    """Constructing the detector loads nothing; the first detect does."""
    detector = NerPiiDetector(tiny_model_dir, threads=1)
    assert not detector.loaded
    detector.detect("hello")
    assert detector.loaded


def test_ner_maps_bio_labels_and_merges_entities(tiny_model_dir: Path) -> None:
    """PER/ORG/LOC become person/organization/location; MISC and O are ignored."""
    detector = NerPiiDetector(tiny_model_dir, threads=1)
    findings = detector.detect("Alice Smith works at ACME Corp in Paris with Python")
    assert findings.counts_by_type == {"person": 1, "organization": 1, "location": 1}
    assert list(findings.counts_by_type) == ["person", "organization", "location"]
    assert findings.score == pytest.approx(_probability(5.0))


def test_ner_entity_confidence_is_the_lowest_token_score(tiny_model_dir: Path) -> None:
    """`Alice Smith` scores as its weaker token, `Smith`."""
    detector = NerPiiDetector(tiny_model_dir, threads=1)
    findings = detector.detect("Alice Smith")
    assert findings.counts_by_type == {"person": 1}
    assert findings.score == pytest.approx(_probability(2.0))
    assert _probability(2.0) < _probability(6.0)


def test_ner_consecutive_same_type_tokens_merge_separated_ones_do_not(
    tiny_model_dir: Path,
) -> None:
    """Adjacent person tokens form one entity; an O token in between splits them."""
    detector = NerPiiDetector(tiny_model_dir, threads=1)
    assert detector.detect("Alice Bob").counts_by_type == {"person": 1}
    assert detector.detect("Alice works Bob").counts_by_type == {"person": 2}


def test_ner_without_entities_scores_zero(tiny_model_dir: Path) -> None:
    """Text with only O and MISC tokens yields an empty summary."""
    detector = NerPiiDetector(tiny_model_dir, threads=1)
    assert detector.detect("works at python") == PiiFindings()
    assert detector.detect("   ") == PiiFindings()


def test_ner_long_text_is_windowed_and_entities_span_windows(tiny_model_dir: Path) -> None:
    """Windows of two tokens still see every entity, and `Alice | Smith` stays one."""
    detector = NerPiiDetector(tiny_model_dir, max_length=4, threads=1)
    findings = detector.detect("works Alice Smith at ACME in Paris works works Bob")
    assert findings.counts_by_type == {"person": 2, "organization": 1, "location": 1}


def test_ner_normalises_before_tokenising(tiny_model_dir: Path) -> None:
    """A zero-width space inside a name does not hide it."""
    detector = NerPiiDetector(tiny_model_dir, threads=1)
    assert detector.detect("Ali\u200bce").counts_by_type == {"person": 1}


def test_ner_label_count_mismatch_fails_closed(tiny_model_dir: Path, tmp_path: Path) -> None:
    """A config naming fewer labels than the model emits is an error, not a guess."""
    for name in ("model.onnx", "tokenizer.json"):
        (tmp_path / name).write_bytes((tiny_model_dir / name).read_bytes())
    (tmp_path / "config.json").write_text(json.dumps({"id2label": {"0": "O", "1": "B-PER"}}))
    with pytest.raises(MemoryPiiDetectorError, match="labels"):
        NerPiiDetector(tmp_path, threads=1).detect("Alice")


def test_ner_concurrent_first_calls_share_one_load(
    tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight threads calling detect at once trigger exactly one model load."""
    detector = NerPiiDetector(tiny_model_dir, threads=1)
    calls = []
    real_build = NerPiiDetector._build

    def slow_build(self: NerPiiDetector) -> Any:
        calls.append(1)
        time.sleep(0.05)
        return real_build(self)

    monkeypatch.setattr(NerPiiDetector, "_build", slow_build)
    barrier = threading.Barrier(8)
    results: list[PiiFindings] = []
    lock = threading.Lock()

    def worker(_n: int) -> None:
        barrier.wait()
        found = detector.detect("Alice Smith in Paris")
        with lock:
            results.append(found)

    run_threads(worker, 8)
    assert len(calls) == 1
    assert len(results) == 8
    assert all(r.counts_by_type == {"person": 1, "location": 1} for r in results)


def test_ner_detector_satisfies_the_port(tiny_model_dir: Path) -> None:
    """The NER detector is a PiiDetector."""
    assert isinstance(NerPiiDetector(tiny_model_dir), PiiDetector)


def test_importing_the_ner_module_loads_no_runtime() -> None:
    """Importing the adapter imports neither onnxruntime nor tokenizers."""
    import subprocess
    import sys

    code = (
        "import sys, swarmmem.adapters.detectors.ner_pii; "
        "print(sorted(m for m in ('onnxruntime', 'tokenizers') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"

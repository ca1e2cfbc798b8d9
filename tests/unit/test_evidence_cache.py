"""Evidence cache: refs, redaction before storage, retention, and damaged lines."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import threading
from pathlib import Path

import pytest
from factories import run_threads

from swarmmem.adapters.files.evidence_cache import DEFAULT_RELATIVE_PATH, EvidenceCache
from swarmmem.core.model.errors import ConfigError, MemoryValidationError
from swarmmem.core.model.evidence import EvidenceRetention, evidence_id, parse_evidence_ref
from swarmmem.ports.clock import FixedClock
from swarmmem.ports.evidence import EvidenceStore

GITHUB_TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123"
MOMENT = dt.datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=dt.timezone.utc)


def make_cache(tmp_path: Path, **kwargs: int | None) -> EvidenceCache:
    """A cache under ``tmp_path`` with a fixed clock."""
    return EvidenceCache.for_root(tmp_path, clock=FixedClock(MOMENT), **kwargs)


def lines(cache: EvidenceCache) -> list[str]:
    """The raw lines of the cache file."""
    return cache.path.read_text(encoding="utf-8").splitlines()


def test_for_root_uses_the_documented_location(tmp_path: Path) -> None:
    """The file is `.swarm/evidence-cache/documents.jsonl` under the root."""
    cache = EvidenceCache.for_root(tmp_path)
    assert cache.path == tmp_path / ".swarm" / "evidence-cache" / "documents.jsonl"
    assert Path(".swarm/evidence-cache/documents.jsonl") == DEFAULT_RELATIVE_PATH


def test_the_cache_is_an_evidence_store_with_its_retention(tmp_path: Path) -> None:
    """The adapter implements the port and exposes the bounds it was given."""
    cache = make_cache(tmp_path, max_records=3)
    assert isinstance(cache, EvidenceStore)
    assert cache.retention == EvidenceRetention(max_records=3)
    assert make_cache(tmp_path).retention == EvidenceRetention()


def test_retention_keeps_the_newest_entries_within_both_bounds() -> None:
    """The policy counts entries from the newest end and stops at the first bound."""
    sizes = [50, 40, 30, 20, 10]
    assert EvidenceRetention().keep_newest(sizes) == 5
    assert EvidenceRetention(max_records=2).keep_newest(sizes) == 2
    assert EvidenceRetention(max_bytes=60).keep_newest(sizes) == 3
    assert EvidenceRetention(max_bytes=60, max_records=2).keep_newest(sizes) == 2
    assert EvidenceRetention(max_bytes=5).keep_newest(sizes) == 0
    assert not EvidenceRetention().exceeded(10**6, 10**9)
    assert EvidenceRetention(max_records=2).exceeded(3, 0)
    assert not EvidenceRetention(max_records=2).exceeded(2, 10**9)
    assert EvidenceRetention(max_bytes=100).exceeded(1, 101)
    assert EvidenceRetention(max_bytes=100).fits(100)
    assert not EvidenceRetention(max_bytes=100).fits(101)


def test_constructing_touches_nothing(tmp_path: Path) -> None:
    """No directory or file exists until the first write."""
    cache = make_cache(tmp_path)
    assert not (tmp_path / ".swarm").exists()
    assert len(cache) == 0
    assert cache.get("evidence-cache:evd_0123456789abcdef") is None
    assert not (tmp_path / ".swarm").exists()


def test_add_returns_a_content_derived_ref(tmp_path: Path) -> None:
    """The ref is `evidence-cache:evd_` + 16 hex of SHA-256 of the normalised text."""
    cache = make_cache(tmp_path)
    text = "  Vitest runs   the frontend\nunit tests. "
    ref = cache.add(text, "https://vitest.dev/guide/")
    digest = hashlib.sha256(b"Vitest runs the frontend unit tests.").hexdigest()
    assert ref == "evidence-cache:evd_" + digest[:16]
    assert evidence_id(text) == ("evd_" + digest[:16], digest)


def test_get_returns_the_stored_document(tmp_path: Path) -> None:
    """`get` accepts the ref or the bare id and returns text, source and metadata."""
    cache = make_cache(tmp_path)
    ref = cache.add("raw API page\nwith two lines", "https://example.com/api")
    doc = cache.get(ref)
    assert doc is not None
    assert doc.text == "raw API page\nwith two lines"
    assert doc.source == "https://example.com/api"
    assert doc.ref == ref
    assert doc.created_at == "2026-01-02T03:04:05.678Z"
    assert doc.content_hash == hashlib.sha256(b"raw API page with two lines").hexdigest()
    assert cache.get(doc.id) == doc
    assert ref in cache


def test_file_format_is_one_json_object_per_line(tmp_path: Path) -> None:
    """Each line holds id, source, text, contentHash and createdAt."""
    cache = make_cache(tmp_path)
    cache.add("first", "a")
    cache.add("second", "b")
    records = [json.loads(line) for line in lines(cache)]
    assert [r["text"] for r in records] == ["first", "second"]
    assert set(records[0]) == {"id", "source", "text", "contentHash", "createdAt"}
    assert records[0]["id"] == "evd_" + records[0]["contentHash"][:16]


def test_same_content_is_stored_once(tmp_path: Path) -> None:
    """Adding text that normalises the same returns the same ref and appends nothing."""
    cache = make_cache(tmp_path)
    first = cache.add("the same   document", "a")
    second = cache.add("the same document\n", "b")
    assert first == second
    assert len(lines(cache)) == 1
    doc = cache.get(first)
    assert doc is not None
    assert doc.source == "a"


def test_secrets_are_redacted_before_storing(tmp_path: Path) -> None:
    """Neither the text nor the source of a document keeps a token on disk."""
    cache = make_cache(tmp_path)
    ref = cache.add(
        f"clone with {GITHUB_TOKEN} please", f"https://x.test/?API_TOKEN={GITHUB_TOKEN}"
    )
    raw = cache.path.read_text(encoding="utf-8")
    assert GITHUB_TOKEN not in raw
    doc = cache.get(ref)
    assert doc is not None
    assert doc.text == "clone with [REDACTED:github_token] please"
    assert doc.source == "https://x.test/?[REDACTED:env_secret]"
    assert ref == "evidence-cache:" + evidence_id(doc.text)[0]


def test_append_only_by_default(tmp_path: Path) -> None:
    """Without bounds every document stays and earlier bytes are never rewritten."""
    cache = make_cache(tmp_path)
    refs = [cache.add(f"document number {i}", "s") for i in range(50)]
    snapshot = cache.path.read_bytes()
    cache.add("one more", "s")
    assert cache.path.read_bytes().startswith(snapshot)
    assert len(cache) == 51
    assert all(cache.get(ref) is not None for ref in refs)


def test_max_records_drops_the_oldest(tmp_path: Path) -> None:
    """With max_records=3 only the three newest documents remain."""
    cache = make_cache(tmp_path, max_records=3)
    refs = [cache.add(f"document number {i}", "s") for i in range(6)]
    assert len(lines(cache)) == 3
    assert [cache.get(ref) is not None for ref in refs] == [False] * 3 + [True] * 3
    assert [d.text for d in cache] == [f"document number {i}" for i in (3, 4, 5)]


def test_max_bytes_bounds_the_file(tmp_path: Path) -> None:
    """With max_bytes the file never exceeds the bound and keeps the newest documents."""
    cache = make_cache(tmp_path, max_bytes=600)
    refs = [cache.add(f"document number {i} " + "x" * 40, "s") for i in range(20)]
    assert cache.path.stat().st_size <= 600
    kept = [cache.get(ref) is not None for ref in refs]
    assert kept[-1]
    assert not kept[0]
    assert kept == sorted(kept)  # a run of dropped ones, then a run of kept ones
    assert cache.check().healthy


def test_document_larger_than_max_bytes_is_refused(tmp_path: Path) -> None:
    """A single oversized document raises and leaves the file untouched."""
    cache = make_cache(tmp_path, max_bytes=300)
    cache.add("small", "s")
    before = cache.path.read_bytes()
    with pytest.raises(MemoryValidationError, match=r"exceeds evidence\.cacheMaxBytes=300"):
        cache.add("y" * 400, "s")
    assert cache.path.read_bytes() == before


@pytest.mark.parametrize("bad", [0, -1, 1.5, "10", True])
def test_bounds_must_be_positive_integers(tmp_path: Path, bad: object) -> None:
    """Bad bounds raise a ConfigError naming the setting and value."""
    with pytest.raises(ConfigError, match=r"evidence\.cacheMaxBytes"):
        EvidenceCache(tmp_path / "d.jsonl", max_bytes=bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"evidence\.cacheMaxRecords"):
        EvidenceCache(tmp_path / "d.jsonl", max_records=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(("text", "source"), [("", "s"), ("   ", "s"), ("t", ""), ("t", " ")])
def test_empty_text_or_source_is_refused(tmp_path: Path, text: str, source: str) -> None:
    """Blank text or source is a validation error and writes nothing."""
    cache = make_cache(tmp_path)
    with pytest.raises(MemoryValidationError):
        cache.add(text, source)
    assert not cache.path.exists()


@pytest.mark.parametrize(
    "ref", ["evd_123", "evidence-cache:evd_XYZ0123456789abc", "mem_0123456789abcdef", "", 7]
)
def test_malformed_refs_are_rejected(tmp_path: Path, ref: object) -> None:
    """A string that is not an evidence ref raises, naming the value."""
    with pytest.raises(MemoryValidationError, match="evidence"):
        make_cache(tmp_path).get(ref)  # type: ignore[arg-type]
    assert ref not in make_cache(tmp_path)


def test_parse_evidence_ref_accepts_both_spellings() -> None:
    """The prefixed ref and the bare id give the same id."""
    assert parse_evidence_ref("evidence-cache:evd_0123456789abcdef") == "evd_0123456789abcdef"
    assert parse_evidence_ref("evd_0123456789abcdef") == "evd_0123456789abcdef"


def test_damaged_lines_are_reported_not_fatal(tmp_path: Path) -> None:
    """Bad JSON, wrong shapes and tampered text are skipped and listed by line number."""
    cache = make_cache(tmp_path)
    good = cache.add("good document", "s")
    tampered = json.loads(lines(cache)[0])
    tampered["text"] = "edited afterwards"
    with cache.path.open("a", encoding="utf-8") as handle:
        handle.write("{not json\n")
        handle.write("[1, 2, 3]\n")
        handle.write(json.dumps({"id": "evd_x", "text": 3, "source": "s"}) + "\n")
        handle.write(json.dumps(tampered) + "\n")
        handle.write("\n")
    with cache.path.open("ab") as handle:
        handle.write(b"\xff\xfe broken utf-8\n")
    later = cache.add("later document", "s")
    report = cache.check()
    assert report.corrupt_lines == (2, 3, 4, 5, 6)
    assert report.records == 2
    assert not report.healthy
    assert report.bytes == cache.path.stat().st_size
    good_doc = cache.get(good)
    assert good_doc is not None
    assert good_doc.text == "good document"
    assert cache.get(later) is not None
    assert [d.text for d in cache] == ["good document", "later document"]


def test_half_written_last_line_is_reported_and_next_add_starts_fresh(tmp_path: Path) -> None:
    """A crash mid-line is reported; the next record is written on its own line."""
    cache = make_cache(tmp_path)
    cache.add("before the crash", "s")
    with cache.path.open("ab") as handle:
        handle.write(b'{"id": "evd_01')
    assert cache.check().corrupt_lines == (2,)
    ref = cache.add("after the crash", "s")
    doc = cache.get(ref)
    assert doc is not None
    assert doc.text == "after the crash"
    assert len(lines(cache)) == 3
    assert cache.check().corrupt_lines == (2,)


def test_a_line_completed_later_is_indexed(tmp_path: Path) -> None:
    """A line seen half-written is read again once its writer finishes it."""
    writer = make_cache(tmp_path)
    reader = make_cache(tmp_path)
    writer.add("first", "s")
    assert len(reader) == 1
    record = json.dumps(
        {"id": evidence_id("second")[0], "source": "s", "text": "second", "createdAt": ""}
    )
    with writer.path.open("ab") as handle:
        handle.write(record[:10].encode())
    assert len(reader) == 1
    with writer.path.open("ab") as handle:
        handle.write(record[10:].encode() + b"\n")
    assert len(reader) == 2
    assert reader.get(evidence_id("second")[0]) is not None


def test_two_instances_see_each_other(tmp_path: Path) -> None:
    """Documents appended by one instance are found by another on the same file."""
    one = make_cache(tmp_path, max_records=2)
    two = make_cache(tmp_path, max_records=2)
    a = one.add("alpha", "s")
    b = two.add("beta", "s")
    assert one.get(b) is not None
    c = one.add("gamma", "s")
    assert two.get(a) is None
    assert two.get(c) is not None
    assert len(two) == 2


def test_concurrent_adds_from_threads_all_land(tmp_path: Path) -> None:
    """Eight threads adding distinct documents lose none of them."""
    cache = make_cache(tmp_path)
    refs: list[str] = []
    lock = threading.Lock()

    def worker(n: int) -> None:
        for i in range(25):
            ref = cache.add(f"thread {n} document {i}", "s")
            with lock:
                refs.append(ref)

    run_threads(worker, 8)
    assert len(set(refs)) == 200
    assert len(lines(cache)) == 200
    assert cache.check().healthy
    assert all(cache.get(ref) is not None for ref in refs)

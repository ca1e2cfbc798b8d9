"""Held-out retrieval corpus: manifest validation, limits and its evaluation fixtures.

A held-out corpus is a directory with ``manifest.json`` and small source files. Each case
names one source file and a *paraphrase*: a description of what the file does that shares
no word with it. Evaluating a case asks for the paraphrase among every source of the corpus
and expects the case's own file at rank 1 (``k = maxItems = 1``), which measures paraphrase
retrieval, the part the lexical path cannot do by construction.

This module is pure: it validates the decoded manifest and the bytes the caller read, and
builds fixture dictionaries in the golden-fixture format. Finding and reading files (with the
path-containment checks) lives in :mod:`swarmmem.evaluation`.

Limits: manifest at most 1 MiB, each source at most 1 MiB, all sources together at most
4 MiB, at most 256 cases; ids and source paths unique; ``content_hash`` is the SHA-256 of the
UTF-8 text with CRLF and CR turned into LF, compared case-insensitively.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from swarmmem.core.evaluation.metrics import Fixture, parse_fixture
from swarmmem.core.model.errors import EvaluationError
from swarmmem.core.model.ids import canonical_json, sha256_hex
from swarmmem.ports.detectors import SecretDetector

MANIFEST_NAME = "manifest.json"
MAX_MANIFEST_BYTES = 1024 * 1024
MAX_SOURCE_BYTES = 1024 * 1024
MAX_TOTAL_SOURCE_BYTES = 4 * 1024 * 1024
MAX_CASES = 256
HELDOUT_REPO_ID = "heldout-retrieval-corpus"
HELDOUT_KIND = "code_pattern"
HELDOUT_TOKEN_BUDGET = 512
SOURCE_TEXT_LIMIT = 2000
DIRECT_SOURCE = "direct-source"

_MANIFEST_REQUIRED = ("corpus_id", "split", "version", "cases")
_MANIFEST_KEYS = {
    *_MANIFEST_REQUIRED,
    "supported_languages",
    "thresholds",
    "analyzer_extensions",
    "os_gates",
}
_CASE_REQUIRED = ("language", "source_path", "content_hash", "paraphrase")
_CASE_KEYS = {
    *_CASE_REQUIRED,
    "id",
    "expected_symbols",
    "expected_edges",
    "known_misses",
    "spurious_edges",
    "analyzer_id",
}
_RATIO_THRESHOLDS = ("precision_at_k", "recall_at_k")
_COUNT_THRESHOLDS = ("max_spurious_edges", "max_known_misses", "direct_source_positive_hits")
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")
_NEWLINES = re.compile(r"\r\n?")


@attrs.frozen(kw_only=True)
class HeldoutCase:
    """One held-out case: a source file and the paraphrase that must retrieve it."""

    id: str
    language: str
    source_path: str
    content_hash: str  # lower-case hex
    paraphrase: str
    analyzer_id: str | None = None
    expected_symbols: tuple[str, ...] = ()
    expected_edges: tuple[str, ...] = ()  # "from -> to"
    known_misses: tuple[str, ...] = ()
    spurious_edges: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class HeldoutManifest:
    """A validated held-out manifest."""

    corpus_id: str
    split: str
    version: str
    supported_languages: tuple[str, ...]
    thresholds: dict[str, float] = attrs.field(hash=False)
    cases: tuple[HeldoutCase, ...]


def _err(source: str, message: str) -> EvaluationError:
    return EvaluationError(f"{source}: {message}")


def _check_object(
    raw: Any,
    keys: set[str],
    required: Sequence[str],
    *,
    source: str,
    messages: tuple[str, str, str],
) -> None:
    """Check that ``raw`` is an object with no key outside ``keys`` and every ``required`` one.

    ``messages``: what to say when it is not an object, and the prefixes of the lists of
    unknown and of missing keys.
    """
    not_object, unknown_prefix, missing_prefix = messages
    if not isinstance(raw, dict):
        raise _err(source, not_object)
    unknown = sorted(set(raw) - keys)
    if unknown:
        raise _err(source, f"{unknown_prefix} {', '.join(unknown)}")
    missing = [key for key in required if key not in raw]
    if missing:
        raise _err(source, f"{missing_prefix} {', '.join(missing)}")


def normalize_newlines(text: str) -> str:
    """``text`` with CRLF and lone CR turned into LF."""
    return _NEWLINES.sub("\n", text)


def source_content_hash(text: str) -> str:
    """The manifest ``content_hash`` of a source text (lower-case hex)."""
    return hashlib.sha256(normalize_newlines(text).encode("utf-8")).hexdigest()


def check_source_path(value: Any, *, field: str, source: str = MANIFEST_NAME) -> str:
    """Validate a case ``source_path`` lexically and return it normalised.

    The path must be relative, use ``/`` separators and stay inside the corpus root without
    ``..`` segments. (Symlinks are checked by the caller after resolving the real path.)

    Raises:
        EvaluationError: naming ``field`` and the offending value.
    """
    if not isinstance(value, str) or not value.strip():
        raise _err(source, f"{field} must be a non-empty relative path")
    if "\\" in value or "\x00" in value or value.startswith("/") or re.match(r"[A-Za-z]:", value):
        raise _err(source, f"{field} {value!r} must be a relative POSIX path")
    if any(part == ".." for part in value.split("/")):
        raise _err(source, f"{field} {value!r} escapes the corpus root")
    normalised = posixpath.normpath(value)
    if normalised in (".", "") or normalised.startswith("../"):
        raise _err(source, f"{field} {value!r} does not name a file inside the corpus root")
    return normalised


def _string_list(value: Any, *, field: str, source: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _err(source, f"{field} must be an array of non-empty strings")
    return tuple(value)


def _edge_list(value: Any, *, field: str, source: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _err(source, f"{field} must be an array")
    edges: list[str] = []
    for i, edge in enumerate(value):
        if isinstance(edge, dict) and set(edge) == {"from", "to"}:
            a, b = edge["from"], edge["to"]
        elif isinstance(edge, str) and edge.count("->") == 1:
            a, b = (part.strip() for part in edge.split("->"))
        else:
            raise _err(source, f'{field}[{i}] must be "from -> to" or {{"from", "to"}}')
        if not isinstance(a, str) or not isinstance(b, str) or not a.strip() or not b.strip():
            raise _err(source, f"{field}[{i}] needs non-empty endpoints")
        edges.append(f"{a.strip()} -> {b.strip()}")
    return tuple(edges)


def _thresholds(value: Any, *, source: str) -> dict[str, float]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _err(source, "thresholds must be an object")
    unknown = sorted(set(value) - {*_RATIO_THRESHOLDS, *_COUNT_THRESHOLDS})
    if unknown:
        raise _err(source, f"unknown threshold(s): {', '.join(unknown)}")
    out: dict[str, float] = {}
    for key, number in value.items():
        if not isinstance(number, (int, float)) or isinstance(number, bool) or number < 0:
            raise _err(source, f"thresholds.{key} must be a non-negative number")
        if key in _RATIO_THRESHOLDS and number > 1:
            raise _err(source, f"thresholds.{key} must be at most 1")
        if key in _COUNT_THRESHOLDS and int(number) != number:
            raise _err(source, f"thresholds.{key} must be a whole number")
        out[key] = float(number)
    return out


def _case(raw: Any, index: int, *, languages: tuple[str, ...], source: str) -> HeldoutCase:
    where = f"cases[{index}]"
    messages = (f"{where} must be an object", f"{where} has unknown key(s):", f"{where} is missing")
    _check_object(raw, _CASE_KEYS, _CASE_REQUIRED, source=source, messages=messages)
    language = raw["language"]
    if not isinstance(language, str) or not language:
        raise _err(source, f"{where}.language must be a non-empty string")
    if languages and language not in languages:
        raise _err(source, f"{where}.language {language!r} is not in supported_languages")
    case_id = raw.get("id", f"{language}-{index + 1}")
    if not isinstance(case_id, str) or not case_id.strip():
        raise _err(source, f"{where}.id must be a non-empty string")
    digest = raw["content_hash"]
    if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
        raise _err(source, f"{where}.content_hash must be 64 hexadecimal characters")
    paraphrase = raw["paraphrase"]
    if not isinstance(paraphrase, str) or len(paraphrase.strip()) < 3:
        raise _err(source, f"{where}.paraphrase must be at least 3 characters")
    analyzer = raw.get("analyzer_id")
    if analyzer is not None and (not isinstance(analyzer, str) or not analyzer):
        raise _err(source, f"{where}.analyzer_id must be a non-empty string")
    return HeldoutCase(
        id=case_id,
        language=language,
        source_path=check_source_path(
            raw["source_path"], field=f"{where}.source_path", source=source
        ),
        content_hash=digest.lower(),
        paraphrase=paraphrase,
        analyzer_id=analyzer,
        expected_symbols=_string_list(
            raw.get("expected_symbols"), field=f"{where}.expected_symbols", source=source
        ),
        expected_edges=_edge_list(
            raw.get("expected_edges"), field=f"{where}.expected_edges", source=source
        ),
        known_misses=_string_list(
            raw.get("known_misses"), field=f"{where}.known_misses", source=source
        ),
        spurious_edges=_edge_list(
            raw.get("spurious_edges"), field=f"{where}.spurious_edges", source=source
        ),
    )


def parse_manifest(data: Any, *, source: str = MANIFEST_NAME) -> HeldoutManifest:
    """Validate a decoded manifest object.

    Raises:
        EvaluationError: naming ``source`` and the offending field.
    """
    messages = (
        "the manifest must be a JSON object",
        "unknown manifest key(s):",
        "manifest is missing",
    )
    _check_object(data, _MANIFEST_KEYS, _MANIFEST_REQUIRED, source=source, messages=messages)
    for key in ("corpus_id", "split", "version"):
        if not isinstance(data[key], str) or not data[key].strip():
            raise _err(source, f"{key} must be a non-empty string")
    if data["split"] != "heldout":
        raise _err(source, f"split must be 'heldout', got {data['split']!r}")
    languages = _string_list(
        data.get("supported_languages"), field="supported_languages", source=source
    )
    thresholds = _thresholds(data.get("thresholds"), source=source)
    raw_cases = data["cases"]
    if not isinstance(raw_cases, list) or not raw_cases:
        raise _err(source, "cases must be a non-empty array")
    if len(raw_cases) > MAX_CASES:
        raise _err(source, f"{len(raw_cases)} cases exceed the limit of {MAX_CASES}")
    cases = [_case(raw, i, languages=languages, source=source) for i, raw in enumerate(raw_cases)]
    seen_ids: dict[str, int] = {}
    seen_paths: dict[str, int] = {}
    for i, case in enumerate(cases):
        if case.id in seen_ids:
            raise _err(source, f"cases[{i}].id {case.id!r} repeats cases[{seen_ids[case.id]}]")
        seen_ids[case.id] = i
        if case.source_path in seen_paths:
            raise _err(
                source,
                f"cases[{i}].source_path {case.source_path!r} repeats "
                f"cases[{seen_paths[case.source_path]}]",
            )
        seen_paths[case.source_path] = i
        for field, limit_key in (
            ("known_misses", "max_known_misses"),
            ("spurious_edges", "max_spurious_edges"),
        ):
            count = len(getattr(case, field))
            limit = thresholds.get(limit_key)
            if limit is not None and count > limit:
                raise _err(
                    source,
                    f"cases[{i}].{field} has {count} entries, above thresholds.{limit_key} "
                    f"{int(limit)}",
                )
    return HeldoutManifest(
        corpus_id=data["corpus_id"],
        split=data["split"],
        version=data["version"],
        supported_languages=languages,
        thresholds=thresholds,
        cases=tuple(cases),
    )


def parse_manifest_bytes(raw: bytes, *, source: str = MANIFEST_NAME) -> HeldoutManifest:
    """Decode and validate manifest bytes (at most 1 MiB of UTF-8 JSON).

    Raises:
        EvaluationError: too large, not UTF-8 JSON, or invalid.
    """
    if len(raw) > MAX_MANIFEST_BYTES:
        raise _err(source, f"manifest is {len(raw)} bytes, above the {MAX_MANIFEST_BYTES} limit")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _err(source, f"manifest is not valid UTF-8 JSON: {exc}") from exc
    return parse_manifest(data, source=source)


class SourceBudget:
    """Running byte count of the sources read for one manifest (per-file and total caps)."""

    def __init__(self) -> None:
        self.total = 0

    def admit(self, case: HeldoutCase, size: int, *, source: str = MANIFEST_NAME) -> None:
        """Account for ``size`` bytes of ``case``'s file before reading it.

        Raises:
            EvaluationError: the file or the running total exceeds its cap.
        """
        if size > MAX_SOURCE_BYTES:
            raise _err(
                source,
                f"{case.source_path} is {size} bytes, above the {MAX_SOURCE_BYTES} limit",
            )
        if self.total + size > MAX_TOTAL_SOURCE_BYTES:
            raise _err(
                source,
                f"sources exceed {MAX_TOTAL_SOURCE_BYTES} bytes in total at {case.source_path}",
            )
        self.total += size


def decode_source(case: HeldoutCase, raw: bytes, *, source: str = MANIFEST_NAME) -> str:
    """Decode a source file, check its hash and return the LF-normalised text.

    Raises:
        EvaluationError: not UTF-8, or the hash differs from ``content_hash``.
    """
    if len(raw) > MAX_SOURCE_BYTES:
        raise _err(source, f"{case.source_path} is above the {MAX_SOURCE_BYTES} byte limit")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _err(source, f"{case.source_path} is not UTF-8: {exc}") from exc
    actual = source_content_hash(text)
    if actual != case.content_hash.lower():
        raise _err(
            source,
            f"content_hash of case {case.id!r} does not match {case.source_path} "
            f"(manifest {case.content_hash}, file {actual})",
        )
    return normalize_newlines(text)


def heldout_fixture_data(
    manifest: HeldoutManifest, texts: Mapping[str, str]
) -> list[dict[str, Any]]:
    """One golden-fixture object per case; every source of the corpus is a record.

    ``texts`` maps each ``source_path`` to its (LF-normalised) text.

    Raises:
        EvaluationError: a source text is missing, or two sources have the same text.
    """
    scope = {"type": "repository", "repoId": HELDOUT_REPO_ID}
    records: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for case in manifest.cases:
        if case.source_path not in texts:
            raise EvaluationError(f"no text was read for {case.source_path}")
        text = texts[case.source_path][:SOURCE_TEXT_LIMIT]
        if text in seen:
            raise EvaluationError(f"cases {seen[text]!r} and {case.id!r} have the same source text")
        seen[text] = case.id
        records.append(
            {
                "label": case.id,
                "scope": scope,
                "kind": HELDOUT_KIND,
                "text": text,
                "tags": [case.language, case.analyzer_id or DIRECT_SOURCE],
                "confidence": 1,
                "source": {"type": "file", "filePath": case.source_path},
                "metadata": {"sourceHash": case.content_hash},
            }
        )
    return [
        {
            "name": f"heldout:{case.id}",
            "query": case.paraphrase,
            "task": case.paraphrase,
            "scopes": [scope],
            "kinds": [HELDOUT_KIND],
            "k": 1,
            "maxItems": 1,
            "tokenBudget": HELDOUT_TOKEN_BUDGET,
            "expectedLabels": [case.id],
            "records": records,
        }
        for case in manifest.cases
    ]


def heldout_fixtures(
    manifest: HeldoutManifest,
    texts: Mapping[str, str],
    *,
    secrets: SecretDetector | None = None,
    source: str = MANIFEST_NAME,
) -> list[Fixture]:
    """The parsed fixtures of every case (see :func:`heldout_fixture_data`)."""
    return [
        parse_fixture(data, source=f"{source}#{case.id}", secrets=secrets)
        for case, data in zip(manifest.cases, heldout_fixture_data(manifest, texts), strict=True)
    ]


def corpus_hash(manifest: HeldoutManifest) -> str:
    """A digest of the corpus identity, its paraphrases and its source hashes."""
    return sha256_hex(
        canonical_json(
            {
                "corpus_id": manifest.corpus_id,
                "version": manifest.version,
                "cases": [
                    [c.id, c.source_path, c.content_hash, c.paraphrase] for c in manifest.cases
                ],
            }
        )
    )


GATED_METRICS = ("precision@k", "recall@k", "fixture_count", "run_count", "passed_run_count")


def profile_metrics(report: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The gated metrics of every profile of a held-out report."""
    return {
        name: {key: summary[key] for key in GATED_METRICS}
        for name, summary in report["profile_summaries"].items()
    }


def heldout_baseline_document(
    report: Mapping[str, Any], manifest: HeldoutManifest, generated_at: str
) -> str:
    """The held-out baseline file text written by ``--gate --update``."""
    doc = {
        "schema_version": 1,
        "corpus_id": manifest.corpus_id,
        "corpus_version": manifest.version,
        "corpus_hash": corpus_hash(manifest),
        "embedding_model_version": report.get("embedding_model_version"),
        "tolerance": 0.05,
        "profiles": profile_metrics(report),
        "generated_at": generated_at,
    }
    return json.dumps(doc, indent=2) + "\n"


def check_heldout_regression(
    first: Mapping[str, Any],
    second: Mapping[str, Any],
    baseline: Mapping[str, Any],
    manifest: HeldoutManifest,
) -> list[str]:
    """Problems found by the held-out gate (empty when it passes).

    * the two runs agree exactly on every profile's gated metrics (determinism);
    * no profile run was degraded (a dense profile that fell back to lexical is not measured);
    * per profile of the baseline, precision@k and recall@k drop at most the tolerance;
    * the non-lexical profiles reach the manifest's ``precision_at_k``/``recall_at_k``
      thresholds and recall at least as much as the lexical profile.
    """
    problems: list[str] = []
    a, b = profile_metrics(first), profile_metrics(second)
    if canonical_json(a) != canonical_json(b):
        problems.append(f"held-out evaluation is not deterministic: {a} != {b}")
    degraded = sorted(
        {
            f"{run['profile']} ({run['degradation_reason']})"
            for run in first["runs"]
            if run["status"] == "degraded"
        }
    )
    if degraded:
        problems.append(f"degraded profile runs: {', '.join(degraded)}")
    if baseline.get("corpus_id") not in (None, manifest.corpus_id):
        problems.append(
            f"baseline is for corpus {baseline.get('corpus_id')!r}, not {manifest.corpus_id!r}"
        )
    tolerance = baseline.get("tolerance")
    if not isinstance(tolerance, (int, float)) or isinstance(tolerance, bool) or tolerance < 0:
        tolerance = 0.05
    base_profiles = baseline.get("profiles")
    if not isinstance(base_profiles, dict) or not base_profiles:
        problems.append("baseline has no profiles")
        base_profiles = {}
    for name, base in sorted(base_profiles.items()):
        current = a.get(name)
        if current is None:
            problems.append(f"profile {name} of the baseline was not evaluated")
            continue
        for key in ("precision@k", "recall@k"):
            pinned = base.get(key) if isinstance(base, dict) else None
            if not isinstance(pinned, (int, float)):
                problems.append(f"baseline profile {name} has no numeric {key}")
            elif pinned - current[key] > tolerance:
                problems.append(
                    f"{name} {key} dropped from {pinned} to {current[key]} (tolerance {tolerance})"
                )
    lexical = a.get("lexical")
    for name, current in sorted(a.items()):
        if name == "lexical":
            continue
        for key, threshold_key in (("precision@k", "precision_at_k"), ("recall@k", "recall_at_k")):
            threshold = manifest.thresholds.get(threshold_key)
            if threshold is not None and current[key] < threshold:
                problems.append(f"{name} {key} {current[key]} is below the threshold {threshold}")
        if lexical is not None and current["recall@k"] < lexical["recall@k"]:
            problems.append(
                f"{name} recall@k {current['recall@k']} is below lexical {lexical['recall@k']}"
            )
    return problems


def summarize_cases(cases: Sequence[HeldoutCase]) -> dict[str, int]:
    """Counts of cases and their declared symbols, edges, misses and spurious edges."""
    return {
        "cases": len(cases),
        "expected_symbols": sum(len(c.expected_symbols) for c in cases),
        "expected_edges": sum(len(c.expected_edges) for c in cases),
        "known_misses": sum(len(c.known_misses) for c in cases),
        "spurious_edges": sum(len(c.spurious_edges) for c in cases),
    }

"""Offline recall evaluation on golden fixtures (the reference's schema-v1 report).

A fixture is one JSON object: a query, scopes, kinds, expected labels and labelled records.
Each fixture runs against every provider and recall mode in a fresh store; metrics per run
are precision@k, recall@k and counts of injected, noisy, cross-scope and stale items.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from swarmmem.core.model.codec import scope_from_dict, source_from_dict
from swarmmem.core.model.errors import EvaluationError, MemoryValidationError
from swarmmem.core.model.ids import (
    canonical_json,
    content_hash,
    iso_to_ms,
    memory_id_for_hash,
    sha256_hex,
)
from swarmmem.core.model.records import MemoryRecord, RecallItem, RecallRequest, identified_record
from swarmmem.core.writes.validation import validate_record
from swarmmem.ports.detectors import SecretDetector
from swarmmem.ports.storage import StorageProvider

FIXTURE_TIMESTAMP = "2026-05-26T12:00:00.000Z"
MODES: tuple[str, ...] = ("manual", "injection", "curator")
PROVIDERS: tuple[str, ...] = ("local-jsonl", "sqlite")
_FIXTURE_KEYS = {
    "name",
    "query",
    "task",
    "agentRole",
    "scopes",
    "kinds",
    "maxItems",
    "tokenBudget",
    "k",
    "expectedLabels",
    "records",
    "description",
}
_RECORD_KEYS = {
    "label",
    "scope",
    "kind",
    "text",
    "tags",
    "confidence",
    "stability",
    "source",
    "metadata",
    "state",
}

RecallFn = Callable[[StorageProvider, RecallRequest, str], Sequence[RecallItem]]


@attrs.frozen(kw_only=True)
class Fixture:
    """A parsed golden fixture with its materialised records."""

    name: str
    data: dict[str, Any] = attrs.field(hash=False)
    records: tuple[MemoryRecord, ...]
    labels: dict[str, str] = attrs.field(hash=False)  # memory id -> label
    expected_ids: tuple[str, ...]


def _err(source: str, message: str) -> EvaluationError:
    return EvaluationError(f"{source}: {message}")


def parse_fixture(data: Any, *, source: str, secrets: SecretDetector | None = None) -> Fixture:
    """Validate and materialise one fixture object.

    Raises:
        EvaluationError: naming the file and the offending field.
    """
    if not isinstance(data, dict):
        raise _err(source, "a fixture must be a JSON object")
    unknown = sorted(set(data) - _FIXTURE_KEYS)
    if unknown:
        raise _err(source, f"unknown fixture key(s): {', '.join(unknown)}")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise _err(source, "name must be a non-empty string")
    query = data.get("query")
    if not isinstance(query, str) or len(query.strip()) < 3:
        raise _err(source, "query must be at least 3 characters")
    scopes = data.get("scopes")
    if not isinstance(scopes, list) or not scopes:
        raise _err(source, "scopes must be a non-empty array")
    try:
        for scope in scopes:
            scope_from_dict(scope)
    except MemoryValidationError as exc:
        raise _err(source, f"invalid scope: {exc}") from exc
    expected = data.get("expectedLabels")
    if (
        not isinstance(expected, list)
        or not expected
        or not all(isinstance(x, str) and x for x in expected)
    ):
        raise _err(source, "expectedLabels must be a non-empty array of strings")
    raw_records = data.get("records")
    if not isinstance(raw_records, list):
        raise _err(source, "records must be an array")
    for key in ("maxItems", "tokenBudget", "k"):
        if key in data and (
            not isinstance(data[key], int) or isinstance(data[key], bool) or data[key] < 1
        ):
            raise _err(source, f"{key} must be a positive integer")
    ids_by_label: dict[str, str] = {}
    for i, raw in enumerate(raw_records):
        if not isinstance(raw, dict) or not isinstance(raw.get("label"), str):
            raise _err(source, f"records[{i}] needs a string label")
        try:
            scope = scope_from_dict(raw.get("scope"))
            digest = content_hash(scope.as_dict(), str(raw.get("kind")), str(raw.get("text", "")))
        except MemoryValidationError as exc:
            raise _err(source, f"records[{i}]: {exc}") from exc
        if raw["label"] in ids_by_label:
            raise _err(source, f"duplicate record label {raw['label']!r}")
        ids_by_label[raw["label"]] = memory_id_for_hash(digest)
    missing = [label for label in expected if label not in ids_by_label]
    if missing:
        raise _err(source, f"expectedLabels not found among records: {', '.join(missing)}")
    records: list[MemoryRecord] = []
    for i, raw in enumerate(raw_records):
        unknown = sorted(set(raw) - _RECORD_KEYS)
        if unknown:
            raise _err(source, f"records[{i}] has unknown key(s): {', '.join(unknown)}")
        try:
            records.append(_materialise(raw, name, ids_by_label, secrets))
        except MemoryValidationError as exc:
            raise _err(source, f"records[{i}] ({raw['label']}): {exc}") from exc
    return Fixture(
        name=name,
        data=data,
        records=tuple(records),
        labels={v: k for k, v in ids_by_label.items()},
        expected_ids=tuple(ids_by_label[label] for label in expected),
    )


def _materialise(
    raw: Mapping[str, Any],
    fixture_name: str,
    ids_by_label: Mapping[str, str],
    secrets: SecretDetector | None,
) -> MemoryRecord:
    scope = scope_from_dict(raw.get("scope"))
    kind = raw.get("kind")
    text = raw.get("text")
    if not isinstance(text, str) or not isinstance(kind, str):
        raise MemoryValidationError("kind and text must be strings")
    state = raw.get("state") or {}
    if not isinstance(state, dict) or set(state) - {"deleted", "supersededByLabel", "expiresAt"}:
        raise MemoryValidationError("state may hold only deleted, supersededByLabel, expiresAt")
    metadata = dict(raw.get("metadata") or {})
    metadata["fixture"] = fixture_name
    metadata["fixtureLabel"] = raw["label"]
    if state.get("deleted"):
        metadata["deleted"] = True
    superseded_by = None
    if "supersededByLabel" in state:
        superseded_by = ids_by_label.get(state["supersededByLabel"])
        if superseded_by is None:
            raise MemoryValidationError(f"unknown supersededByLabel {state['supersededByLabel']!r}")
    source = raw.get("source") or {"type": "manual", "ref": fixture_name}
    record = identified_record(
        scope=scope,
        kind=kind,
        text=text,
        tags=tuple(raw.get("tags") or ()),
        confidence=raw.get("confidence", 0.8),
        stability=raw.get("stability", "durable"),
        source=source_from_dict(source),
        created_at=FIXTURE_TIMESTAMP,
        updated_at=FIXTURE_TIMESTAMP,
        expires_at=state.get("expiresAt"),
        superseded_by=superseded_by,
        metadata=metadata,
    )
    return validate_record(record, secrets=secrets, reject_durable_secrets=True)


def fixture_request(
    fixture: Fixture, mode: str, *, candidate_cap: int | None = None
) -> tuple[RecallRequest, int]:
    """The provider-level request of a fixture run and its ``k``."""
    data = fixture.data
    max_items = min(candidate_cap or 5, data.get("maxItems", data.get("k", 5)))
    request = RecallRequest(
        query=data["query"],
        task=data.get("task"),
        agent_role="curator" if mode == "curator" else data.get("agentRole"),
        mode=mode,
        scopes=tuple(scope_from_dict(s) for s in data["scopes"]),
        kinds=tuple(data["kinds"]) if data.get("kinds") else None,
        max_items=max_items,
        token_budget=min(1000, data.get("tokenBudget", 1000)),
        min_score=0.25 if mode == "injection" else 0.0,
        require_query_signal=mode == "injection",
        candidate_cap=candidate_cap,
    )
    return request, data.get("k", max_items)


def run_metrics(
    fixture: Fixture, retrieved: Sequence[str], k: int, mode: str, now: str
) -> dict[str, Any]:
    """The per-run metrics of section "Metric definitions"."""
    now_ms = iso_to_ms(now) or 0.0
    scope_keys = {scope_from_dict(s).key for s in fixture.data["scopes"]}
    stale: set[str] = set()
    cross: set[str] = set()
    for record in fixture.records:
        expires = iso_to_ms(record.expires_at)
        if record.deleted or record.superseded_by or (expires is not None and expires <= now_ms):
            stale.add(record.id)
        if record.scope.key not in scope_keys:
            cross.add(record.id)
    expected = set(fixture.expected_ids)
    noise = {
        r.id
        for r in fixture.records
        if r.scope.key in scope_keys and r.id not in expected and r.id not in stale
    }
    got = list(retrieved)
    relevant = len(set(got[:k]) & expected)
    precision = relevant / max(k, 1)
    recall = relevant / max(len(expected), 1)
    noisy = len(set(got) & noise) if mode == "injection" else 0
    metrics = {
        "precision@k": precision,
        "recall@k": recall,
        "injection_count": len(got) if mode == "injection" else 0,
        "noisy_injection_count": noisy,
        "same_scope_noise_count": len(set(got) & noise),
        "cross_scope_leak_count": len(set(got) & cross),
        "stale_memory_count": len(set(got) & stale),
    }
    metrics["passed"] = (
        recall >= 1
        and noisy == 0
        and metrics["cross_scope_leak_count"] == 0
        and metrics["stale_memory_count"] == 0
    )
    return metrics


SUMMED = (
    "injection_count",
    "noisy_injection_count",
    "same_scope_noise_count",
    "cross_scope_leak_count",
    "stale_memory_count",
)


def summarize(runs: Sequence[Mapping[str, Any]], fixture_count: int) -> dict[str, Any]:
    """Means of precision/recall and sums of the counts over runs."""
    n = len(runs)
    summary: dict[str, Any] = {
        "fixture_count": fixture_count,
        "run_count": n,
        "passed_run_count": sum(1 for r in runs if r["passed"]),
        "precision@k": (sum(r["metrics"]["precision@k"] for r in runs) / n) if n else 0.0,
        "recall@k": (sum(r["metrics"]["recall@k"] for r in runs) / n) if n else 0.0,
    }
    for key in SUMMED:
        summary[key] = sum(r["metrics"][key] for r in runs)
    return summary


def evaluate_fixtures(
    fixtures: Sequence[Fixture],
    store_factory: Callable[[str], StorageProvider],
    recall: RecallFn,
    *,
    now: str,
    providers: Iterable[str] = PROVIDERS,
    modes: Iterable[str] = MODES,
    fixture_directory: str = "",
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Run every fixture x provider x mode and return the schema-v1 report."""
    providers = tuple(providers)
    modes = tuple(modes)
    runs: list[dict[str, Any]] = []
    total = len(fixtures) * len(providers) * len(modes)
    for fixture in fixtures:
        for provider in providers:
            store = store_factory(provider)
            try:
                with store.transaction():
                    for record in fixture.records:
                        store.upsert(record)
                for mode in modes:
                    request, k = fixture_request(fixture, mode)
                    items = recall(store, request, now)
                    ids = [item.record.id for item in items]
                    metrics = run_metrics(fixture, ids, k, mode, now)
                    passed = metrics.pop("passed")
                    runs.append(
                        {
                            "fixture": fixture.name,
                            "provider": provider,
                            "mode": mode,
                            "k": k,
                            "query": request.query,
                            "expected_labels": list(fixture.data["expectedLabels"]),
                            "expected_ids": list(fixture.expected_ids),
                            "retrieved_labels": [fixture.labels.get(i, i) for i in ids],
                            "retrieved_ids": ids,
                            "scores": [round(item.score, 4) for item in items],
                            "metrics": metrics,
                            "passed": passed,
                        }
                    )
                    if progress is not None:
                        progress(len(runs), total)
            finally:
                store.close()
    return {
        "schema_version": 1,
        "generated_at": now,
        "fixture_directory": fixture_directory,
        "providers": list(providers),
        "modes": list(modes),
        "summary": summarize(runs, len(fixtures)),
        "runs": runs,
        "manifest": {
            "version": "1.0.0",
            "source_id": "fixtures:" + sha256_hex(canonical_json([f.data for f in fixtures])),
            "provider_id": "providers:" + ",".join(providers),
            "sample_counts": {"total": len(runs)},
            "metric_definitions": {"precision": "precision@k", "recall": "recall@k"},
            "uncertainty": {
                "method": "deterministic-fixture",
                "confidence": 0.95,
                "sample_count": len(runs),
            },
        },
    }


GATED_METRICS = ("precision@k", "recall@k", "fixture_count", "run_count", "passed_run_count")


def gate_metrics(report: Mapping[str, Any]) -> dict[str, Any]:
    """The metrics the regression gate compares."""
    return {key: report["summary"][key] for key in GATED_METRICS}


def check_regression(
    first: Mapping[str, Any], second: Mapping[str, Any], baseline: Mapping[str, Any]
) -> list[str]:
    """Problems found by the regression gate (empty when it passes).

    The two runs must agree exactly (determinism) and precision@k may not drop more than the
    baseline tolerance (0.05 when absent or invalid).
    """
    problems: list[str] = []
    a, b = gate_metrics(first), gate_metrics(second)
    if canonical_json(a) != canonical_json(b):
        problems.append(f"evaluation is not deterministic: {a} != {b}")
    tolerance = baseline.get("tolerance")
    if not isinstance(tolerance, (int, float)) or isinstance(tolerance, bool) or tolerance < 0:
        tolerance = 0.05
    base_metrics = baseline.get("metrics", {})
    base_p = base_metrics.get("precision@k")
    if not isinstance(base_p, (int, float)):
        problems.append("baseline has no numeric metrics.precision@k")
    elif base_p - a["precision@k"] > tolerance:
        problems.append(
            f"precision@k dropped from {base_p} to {a['precision@k']} (tolerance {tolerance})"
        )
    return problems


def baseline_document(report: Mapping[str, Any], generated_at: str) -> str:
    """The baseline file text written by ``--update``."""
    doc = {
        "schema_version": 1,
        "embedding_model_version": "lexical-default-v1",
        "tolerance": 0.05,
        "metrics": gate_metrics(report),
        "generated_at": generated_at,
    }
    return json.dumps(doc, indent=2) + "\n"

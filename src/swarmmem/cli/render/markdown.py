"""The Markdown text of the maintenance reports (``pending``, ``recall-log``, ``value-log``,
``stale``, ``compact``), made from their JSON form (``to_json()``, what ``--json`` prints);
the reports themselves are built in :mod:`swarmmem.core.maintenance.reports`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from swarmmem.core.maintenance.reports import COMPACTION_LABELS, STALE_SECTIONS
from swarmmem.core.model.formatting import to_fixed

#: The label of each count a report summarises under its title.
_SUMMARY_LABELS: dict[str, str] = {
    "pending_count": "Pending proposals",
    "rejected_count": "Rejected proposals",
    "promotion_candidate_count": "Promotion candidates",
    "events_scanned": "Recall events scanned",
    "recalled_memory_count": "Recalled memories",
    "never_recalled_count": "Never-recalled memories",
    "active_count": "Active memories",
    **{f"{key}_count": label for key, label, _ in STALE_SECTIONS},
}


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _memory_line(entry: Mapping[str, Any]) -> str:
    return (
        f"- `{entry['id']}` {entry['kind']} confidence={to_fixed(entry['confidence'], 2)} "
        f"updated={entry['updated_at']} - {_clip(entry['text'], 100)}"
    )


def _heading(title: str, report: Mapping[str, Any], keys: Iterable[str]) -> list[str]:
    """``## <title>``, a blank line and ``- <label>: <value>`` for each count in ``keys``."""
    return [f"## {title}", "", *(f"- {_SUMMARY_LABELS[key]}: {report[key]}" for key in keys)]


def _text(lines: Iterable[str]) -> str:
    return "\n".join(lines) + "\n"


def _section(title: str, lines: Sequence[str], total: int | None = None) -> list[str]:
    out = ["", f"### {title}", ""]
    out.extend(lines or ["- None."])
    if total is not None and total > len(lines):
        out.append(f"- ... {total - len(lines)} more")
    return out


def _proposal_line(entry: Mapping[str, Any]) -> str:
    line = f"- `{entry['id']}` {entry['operation']} {entry['target']} ({entry['status']})"
    if entry.get("reason"):
        line += f" - {_clip(entry['reason'], 200)}"
    pii = entry.get("pii")
    if pii:
        summary = ", ".join(f"{k}x{v}" for k, v in pii["counts_by_type"].items())
        line += f" pii-score={to_fixed(pii['score'], 2)}"
        if summary:
            line += f" ({summary})"
    return line


def _candidate_line(entry: Mapping[str, Any]) -> str:
    q, text = to_fixed(entry["q"], 3), _clip(entry["text"], 80)
    return f"- `{entry['id']}` q={q} recalls={entry['recalls']} - {text}"


def render_pending(report: Mapping[str, Any]) -> str:
    """The Markdown text of ``pending``."""
    counts = ("pending_count", "rejected_count", "promotion_candidate_count")
    lines = _heading("Swarm Memory Pending", report, counts)
    pending, rejected, candidates = (report[key] for key in counts)
    lines += _section("Pending proposals", [_proposal_line(e) for e in report["pending"]], pending)
    rejections = [_proposal_line(e) for e in report["rejected"]]
    lines += _section("Rejected proposal reasons", rejections, rejected)
    if report.get("policy_decided"):
        lines += _section(
            "Approved by the curation policy (undo with `swarmmem undo <proposal_id>`)",
            [_proposal_line(e) for e in report["policy_decided"]],
            report["policy_decided_count"],
        )
    lines += _section(
        "Promotion candidates (high learned utility, frequently recalled)",
        [_candidate_line(e) for e in report["promotion_candidates"]],
        candidates,
    )
    return _text(lines)


def render_recall_log(report: Mapping[str, Any]) -> str:
    """The Markdown text of ``recall-log``."""
    counts = ("events_scanned", "recalled_memory_count", "never_recalled_count")
    lines = _heading("Swarm Memory Recall Log", report, counts)
    by_role = [
        f"- `{e['role']}`: {e['events']} recall event(s), {e['memory_ids']} memory ID(s)"
        for e in report["by_role"]
    ]
    lines += _section("Recall by agent role", by_role)
    most = [
        f"- `{e['id']}`: {e['hits']} hit(s), last={e['last']}, "
        f"avgScore={to_fixed(e['avg_score'], 3)}"
        for e in report["most_recalled"]
    ]
    lines += _section("Most-recalled memories", most, report["recalled_memory_count"])
    never = [_memory_line(e) for e in report["never_recalled"]]
    return _text(lines + _section("Never-recalled memories", never, report["never_recalled_count"]))


def _num(value: Any, digits: int) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return to_fixed(float(value), digits)
    return "n/a"


def render_value_log(report: Mapping[str, Any]) -> str:
    """The Markdown text of ``value-log``."""
    lines = ["## Swarm Memory Value Log", ""]
    if not report["memories"]:
        return _text([*lines, "- No reward history recorded yet."])
    for entry in report["memories"]:
        text = f" - {_clip(entry['text'], 80)}" if entry["text"] else ""
        lines.append(
            f"- `{entry['id']}` q={to_fixed(entry['q'], 3)} [{entry['status']}] "
            f"rewards={entry['rewards']}{text}"
        )
        for event in entry["recent"]:
            lines.append(
                f"    - {event['timestamp']} {event['verdict']} reward={_num(event['reward'], 2)} "
                f"(q {_num(event['q_before'], 2)}→{_num(event['q_after'], 2)})"
            )
    return _text(lines)


def _chain_line(chain: Mapping[str, Any]) -> str:
    reason = f" - {chain['reason']}" if chain["reason"] else ""
    return f"- `{chain['id']}` -> `{chain['superseded_by']}`{reason}"


def render_stale(report: Mapping[str, Any]) -> str:
    """The Markdown text of ``stale``."""
    counts = ["active_count", *(f"{key}_count" for key, _, _ in STALE_SECTIONS)]
    lines = _heading("Swarm Memory Stale Report", report, counts)
    for key, label, note in STALE_SECTIONS:
        line = _chain_line if key == "superseded_chains" else _memory_line
        lines += _section(label + note, [line(e) for e in report[key]], report[f"{key}_count"])
    return _text(lines)


def render_compaction(report: Mapping[str, Any], *, command: str = "swarmmem compact") -> str:
    """The Markdown text of ``compact``."""
    counts = report["counts"]
    lines = [
        "## Swarm Memory Compaction",
        "",
        f"- Mode: `{report['mode']}`",
        *(f"- {label}: {counts[name]}" for name, label in COMPACTION_LABELS.items()),
        f"- Remaining memories: {report['remaining_memories']}",
    ]
    if report["mode"] != "confirmed":
        lines += [
            "",
            f"No records were removed. Run `{command} --confirm` to apply this compaction.",
        ]
    else:
        lines.append(f"- Removed records: {report['removed']}")
    return _text(lines)

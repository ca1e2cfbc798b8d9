"""Secret redaction over structured values (proposal fields, evidence refs).

Pure helpers around a :class:`~swarmmem.ports.detectors.SecretDetector`: they never choose a
detector themselves and never import an adapter. The gateway uses :func:`redact_fields` on a
proposal and, when anything changed, auto-rejects it with :func:`redaction_rejection_reason`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeAlias

import attrs

from swarmmem.core.model.text import json_strings
from swarmmem.ports.detectors import SecretDetector, SecretScreen

__all__ = [
    "PROPOSAL_REDACTION_FIELDS",
    "FieldValue",
    "RedactedFields",
    "redact_fields",
    "redact_value",
    "redaction_rejection_reason",
    "screened_clean",
]

#: A redactable field: absent, one string, or a list of strings.
FieldValue: TypeAlias = str | Sequence[str] | None

#: Proposal fields checked for secrets, in the order their names are reported.
PROPOSAL_REDACTION_FIELDS: tuple[str, ...] = (
    "rationale",
    "evidenceRefs",
    "targetMemoryId",
    "relatedMemoryIds",
    "text",
)

_REJECTION_PREFIX = "proposal field(s) contained a likely secret and were redacted: "


@attrs.frozen(kw_only=True)
class RedactedFields:
    """The outcome of :func:`redact_fields`.

    Attributes:
        values: every input field, redacted (lists come back as lists, ``None`` stays ``None``).
        changed: names of the fields whose value changed, in input order.
    """

    values: dict[str, str | list[str] | None] = attrs.field(hash=False)
    changed: tuple[str, ...] = ()

    @property
    def any_changed(self) -> bool:
        """True when at least one field held a likely secret."""
        return bool(self.changed)


def redact_value(
    detector: SecretDetector, value: FieldValue
) -> tuple[str | list[str] | None, bool]:
    """Redact one field value; ``(redacted, changed)``.

    Raises:
        TypeError: ``value`` is neither ``None``, a string nor a sequence of strings.
    """
    if value is None:
        return None, False
    if isinstance(value, str):
        redacted = detector.redact(value)
        return redacted, redacted != value
    if not isinstance(value, Sequence):
        raise TypeError(f"cannot redact a value of type {type(value).__name__}: {value!r}")
    out: list[str] = []
    changed = False
    for item in value:
        if not isinstance(item, str):
            raise TypeError(f"cannot redact a list item of type {type(item).__name__}: {item!r}")
        redacted = detector.redact(item)
        changed = changed or redacted != item
        out.append(redacted)
    return out, changed


def redact_fields(detector: SecretDetector, fields: Mapping[str, FieldValue]) -> RedactedFields:
    """Redact every field of ``fields`` and report which ones changed, in mapping order."""
    values: dict[str, str | list[str] | None] = {}
    changed: list[str] = []
    for name, value in fields.items():
        values[name], was_changed = redact_value(detector, value)
        if was_changed:
            changed.append(name)
    return RedactedFields(values=values, changed=tuple(changed))


def redaction_rejection_reason(changed: Sequence[str]) -> str:
    """The auto-policy rejection reason naming the redacted fields (reference wording)."""
    return _REJECTION_PREFIX + ", ".join(changed)


def secret_field(
    detector: SecretDetector, value: object, name: str, *, strings: list[str] | None = None
) -> str | None:
    """The path of the first string (key or value) inside a JSON-shaped ``value`` holding a
    likely secret, else ``None``.

    A detector with ``may_contain_secret`` (a screen of many texts whose False is final)
    screens every string at once first (``strings``: those of ``value`` when the caller
    already has them); only when it may find something is each one checked.
    """
    if isinstance(detector, SecretScreen) and not isinstance(value, str):
        if strings is None:
            strings = json_strings(value)
        if strings is not None and not detector.may_contain_secret(strings):
            return None
    return _secret_field(detector, value, name)


def screened_clean(detector: SecretDetector, rows: Iterable[Sequence[str]]) -> bool:
    """True when a detector with ``may_contain_secret`` clears the strings of many rows in one
    screen (its False is final, so :func:`secret_field` would find nothing in any of them);
    each distinct string is screened once (keys and shared values repeat from row to row).
    False for a detector without that screen."""
    if not isinstance(detector, SecretScreen):
        return False
    return not detector.may_contain_secret(list(dict.fromkeys(t for row in rows for t in row)))


def _secret_field(detector: SecretDetector, value: object, name: str) -> str | None:
    if isinstance(value, str):
        return name if detector.contains_secret(value) else None
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = _secret_field(detector, key, f"{name} key") or _secret_field(
                detector, item, f"{name}.{key}"
            )
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = _secret_field(detector, item, f"{name}[{index}]")
            if found is not None:
                return found
    return None

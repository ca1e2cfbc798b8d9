"""Secret and PII detector ports."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import attrs


@attrs.frozen(kw_only=True)
class SecretFinding:
    """One detected secret: its pattern type and the character span it covers."""

    type: str
    start: int
    end: int


@attrs.frozen(kw_only=True)
class PiiFindings:
    """A PII summary: counts per type and the maximum confidence (never the matched text)."""

    score: float = 0.0
    counts_by_type: dict[str, int] = attrs.field(factory=dict, hash=False)

    @property
    def found(self) -> bool:
        """True when anything was detected."""
        return bool(self.counts_by_type)


@runtime_checkable
class SecretDetector(Protocol):
    """**Protocol:** find and redact likely secrets.

    Obligations: pure and thread-safe; never raises on any ``str`` input (arbitrary Unicode
    included); ``redact`` must leave no detected secret behind, whatever the pattern order.
    """

    def find(self, text: str) -> list[SecretFinding]:
        """Every detected secret, in pattern order."""
        ...

    def contains_secret(self, text: str) -> bool:
        """True when ``find`` would return anything."""
        ...

    def redact(self, text: str) -> str:
        """``text`` with every detected secret replaced by ``[REDACTED:<type>]``."""
        ...


@runtime_checkable
class PiiDetector(Protocol):
    """**Protocol:** summarise personal data in a text.

    Obligations: returns counts and a score only; a detector that cannot run raises
    :class:`~swarmmem.core.model.errors.MemoryPiiDetectorError` (fail closed).
    """

    def detect(self, text: str) -> PiiFindings:
        """The PII summary of ``text``."""
        ...


@runtime_checkable
class SecretScreen(Protocol):
    """**Optional capability:** one screen over many texts whose ``False`` is final (no
    text holds a secret the detector would find), so a clean batch skips the per-text scan."""

    def may_contain_secret(self, texts: Sequence[str]) -> bool:
        """False only when none of ``texts`` can hold a secret this detector finds."""
        ...

"""Regex PII detector: email, phone, Luhn-checked card number, SSN and IPv4, counts only.

The five expressions and confidences are the reference ones, compiled with :data:`re.ASCII`
(JavaScript's ``\\d`` and ``\\b`` are ASCII-only); the ``\\s`` of the phone expression is
spelled as JavaScript's whitespace class. Detection runs on a normalised copy of the text:
NFKC folds fullwidth and other compatibility digits to ASCII, then zero-width characters,
bidi marks, the word joiner, the BOM and soft hyphens are deleted, so ``４１１１...`` or
``123\\u200b-45-6789`` cannot slip past. The caller's text is never changed and no matched
text is kept: the result is a score and per-type counts.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

from swarmmem.adapters.detectors.runs import AnchoredRunPattern
from swarmmem.ports.detectors import PiiFindings

if TYPE_CHECKING:
    from swarmmem.core.config import RedactionConfig

__all__ = ["PII_CONFIDENCE", "RegexPiiDetector", "luhn_valid", "normalize_for_detection"]

# JavaScript's [\s.-]: ECMAScript whitespace and line terminators, dot, hyphen.
_SEP = r"[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff.-]"

_CREDIT_CARD = re.compile(r"\b(?:\d[ -]?){13,19}\b", re.ASCII)
# searched from each "@" (a long run of local-part characters made the plain scan quadratic)
_LOCAL = "[A-Za-z0-9._%+-]"
_EMAIL = AnchoredRunPattern(
    rf"\b{_LOCAL}+@[A-Za-z0-9.-]+\.[A-Za-z]{{2,}}\b", re.ASCII, run=_LOCAL, anchor="@", start=r"\b"
)
_PHONE = re.compile(
    rf"(?:\+\d{{1,3}}{_SEP}?)?(?:\(\d{{2,4}}\)|\d{{2,4}}){_SEP}\d{{3,4}}{_SEP}\d{{3,4}}\b",
    re.ASCII,
)
_SSN = re.compile(r"\b\d{3}-\d{2}-\d{4}\b", re.ASCII)
_IPV4 = re.compile(r"\b(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\b", re.ASCII)

# Removed after NFKC: ZERO WIDTH SPACE .. RIGHT-TO-LEFT MARK, WORD JOINER, BOM, SOFT HYPHEN.
_INVISIBLE = re.compile("[\u200b-\u200f\u2060\ufeff\u00ad]")
_NON_DIGIT = re.compile(r"[^0-9]")

#: Confidence per PII type, in the order findings are reported.
PII_CONFIDENCE: dict[str, float] = {
    "credit_card": 0.95,
    "email": 0.9,
    "phone": 0.7,
    "ssn": 0.85,
    "ip_address": 0.5,
}


def normalize_for_detection(text: str) -> str:
    """NFKC-fold ``text`` and drop the invisible characters used to split identifiers."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))


def luhn_valid(candidate: str) -> bool:
    """Luhn checksum over the ASCII digits of ``candidate`` (13 to 19 digits, else False)."""
    digits = _NON_DIGIT.sub("", candidate)
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if position % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def _valid_ipv4(match: re.Match[str]) -> bool:
    return all(int(octet) <= 255 for octet in match.groups())


class RegexPiiDetector:
    """The default :class:`~swarmmem.ports.detectors.PiiDetector` (stateless, thread-safe)."""

    @classmethod
    def from_config(cls, section: RedactionConfig) -> RegexPiiDetector:
        """The regex detector (nothing of the configuration applies)."""
        return cls()

    def detect(self, text: str) -> PiiFindings:
        """Score (highest confidence found, 0 when none) and counts per type."""
        normalized = normalize_for_detection(text)
        counts: dict[str, int] = {}

        def tally(kind: str, found: int) -> None:
            if found:
                counts[kind] = found

        tally(
            "credit_card",
            sum(1 for m in _CREDIT_CARD.finditer(normalized) if luhn_valid(m.group())),
        )
        tally("email", sum(1 for _ in _EMAIL.finditer(normalized)))
        tally("phone", sum(1 for _ in _PHONE.finditer(normalized)))
        tally("ssn", sum(1 for _ in _SSN.finditer(normalized)))
        tally("ip_address", sum(1 for m in _IPV4.finditer(normalized) if _valid_ipv4(m)))
        score = max((PII_CONFIDENCE[kind] for kind in counts), default=0.0)
        return PiiFindings(score=score, counts_by_type=counts)

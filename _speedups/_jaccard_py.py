"""Jaccard token-overlap kernel, pure-Python twin of ``_jaccard_c``.

``jaccard(A, B) = |A ∩ B| / |A ∪ B|`` over lexical token sets (0 when both are empty), used
by learning propagation to find near-duplicate memories. Tokens are the runs of
``[a-z0-9_-]`` in the lower-cased text.

Two levels share that contract:

- :func:`jaccard_many` takes texts;
- :func:`token_keys` turns a text into its token set as a sorted, duplicate-free
  ``array('Q')`` of 64-bit keys, and :func:`jaccard_keys` compares such arrays (the kernel
  proper: the compiled twin merge-intersects them without a Python object per token). Key
  arrays are made once per text and can be reused across many comparisons.

A token of up to 7 characters is its own key (its ASCII bytes read as a big-endian number,
below 2**56); a longer token's key is its 64-bit FNV-1a hash with the top bit set. So two
different tokens share a key only when both are longer than 7 characters and their 63-bit
hashes collide, which is far too rare to matter for a similarity threshold. Both twins
compute the same keys.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Sequence

_TOKEN = re.compile(r"[a-z0-9_-]+")
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK = (1 << 64) - 1
_LONG = 1 << 63


def _tokens(text: str) -> frozenset[str]:
    return frozenset(_TOKEN.findall(text.lower())) if text else frozenset()


def token_key(token: str) -> int:
    """The 64-bit key of one token (see the module docstring)."""
    data = token.encode("ascii")
    if len(data) <= 7:
        return int.from_bytes(data, "big")
    h = _FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * _FNV_PRIME) & _MASK
    return h | _LONG


def token_keys(text: str) -> array[int]:
    """The sorted, duplicate-free keys of ``text``'s tokens."""
    return array("Q", sorted({token_key(token) for token in _tokens(text)}))


def jaccard_keys(source: Sequence[int], candidates: Sequence[Sequence[int]]) -> array[float]:
    """Jaccard similarity of key set ``source`` with each candidate key set.

    Every argument must be sorted and duplicate-free, as :func:`token_keys` returns them.
    """
    a = set(source)
    na = len(a)
    out: list[float] = []
    for keys in candidates:
        inter = len(a.intersection(keys))
        union = na + len(keys) - inter
        out.append(inter / union if union else 0.0)
    return array("d", out)


def jaccard_many(source: str, candidates: Sequence[str]) -> list[float]:
    """Jaccard similarity of ``source``'s tokens with each candidate's tokens."""
    a = _tokens(source)
    out: list[float] = []
    for text in candidates:
        b = _tokens(text)
        union = len(a | b)
        out.append(len(a & b) / union if union else 0.0)
    return out

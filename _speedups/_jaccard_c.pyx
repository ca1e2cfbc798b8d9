# cython: language_level=3
"""Jaccard token-overlap kernel, compiled twin of ``_jaccard_py``."""

import re

cdef object _TOKEN = re.compile(r"[a-z0-9_-]+")


cdef frozenset _tokens(str text):
    return frozenset(_TOKEN.findall(text.lower())) if text else frozenset()


def jaccard_many(str source, candidates):
    """Jaccard similarity of ``source``'s tokens with each candidate's tokens."""
    cdef frozenset a = _tokens(source)
    cdef frozenset b
    cdef Py_ssize_t inter, union_, na = len(a)
    cdef list out = []
    for text in candidates:
        b = _tokens(text)
        inter = 0
        if na <= len(b):
            for tok in a:
                if tok in b:
                    inter += 1
        else:
            for tok in b:
                if tok in a:
                    inter += 1
        union_ = na + len(b) - inter
        out.append(inter / <double>union_ if union_ else 0.0)
    return out

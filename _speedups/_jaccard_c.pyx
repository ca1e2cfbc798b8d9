# cython: language_level=3
"""Jaccard token-overlap kernel, compiled twin of ``_jaccard_py`` (same keys, same floats).

Tokens are scanned straight from the string's code points (ASCII text is lower-cased on the
fly; other text goes through ``str.lower`` first), turned into 64-bit keys in the same pass,
sorted and de-duplicated in a C buffer; two key sets are compared with a branch-free merge.
"""

from cpython.array cimport array, clone
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc, qsort, realloc

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object o)
    int PyUnicode_KIND(object o)
    void* PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    unsigned int PyUnicode_READ(int kind, void* data, Py_ssize_t index) nogil

cdef array _KEYS = array("Q")
cdef array _FLOATS = array("d")

cdef uint64_t _FNV_OFFSET = 0xCBF29CE484222325ULL
cdef uint64_t _FNV_PRIME = 0x100000001B3ULL
cdef uint64_t _LONG = 1ULL << 63


cdef struct KeyBuf:
    uint64_t* keys
    Py_ssize_t n
    Py_ssize_t cap


cdef int _cmp_u64(const void* a, const void* b) noexcept nogil:
    cdef uint64_t x = (<const uint64_t*>a)[0], y = (<const uint64_t*>b)[0]
    return (x > y) - (x < y)


cdef int _reserve(KeyBuf* buf, Py_ssize_t cap) except -1:
    cdef uint64_t* grown
    if cap <= buf.cap:
        return 0
    grown = <uint64_t*>realloc(buf.keys, cap * sizeof(uint64_t))
    if grown == NULL:
        raise MemoryError()
    buf.keys = grown
    buf.cap = cap
    return 0


cdef inline bint _is_token_char(unsigned int ch) noexcept nogil:
    return (
        (ch >= 97 and ch <= 122) or (ch >= 48 and ch <= 57) or ch == 95 or ch == 45
    )


cdef int _scan(str text, KeyBuf* buf) except -1:
    """Fill ``buf`` with the sorted, duplicate-free token keys of ``text``."""
    cdef str lowered = text
    cdef bint ascii = PyUnicode_IS_ASCII(text)
    if not ascii:
        lowered = text.lower()
    cdef Py_ssize_t length = PyUnicode_GET_LENGTH(lowered), i, j, n = 0, run = 0
    cdef int kind = PyUnicode_KIND(lowered)
    cdef void* data = PyUnicode_DATA(lowered)
    cdef unsigned int ch
    cdef uint64_t packed = 0, h = _FNV_OFFSET, key
    _reserve(buf, length // 2 + 1)
    cdef uint64_t* keys = buf.keys
    for i in range(length + 1):
        ch = PyUnicode_READ(kind, data, i) if i < length else 32
        if ascii and ch >= 65 and ch <= 90:
            ch += 32
        if _is_token_char(ch):
            packed = (packed << 8) | ch
            h = (h ^ ch) * _FNV_PRIME
            run += 1
        elif run:
            keys[n] = packed if run <= 7 else (h | _LONG)
            n += 1
            packed = 0
            h = _FNV_OFFSET
            run = 0
    if n > 16:
        qsort(keys, n, sizeof(uint64_t), _cmp_u64)
    else:
        for i in range(1, n):
            key = keys[i]
            j = i
            while j > 0 and keys[j - 1] > key:
                keys[j] = keys[j - 1]
                j -= 1
            keys[j] = key
    j = 0
    for i in range(n):
        if j == 0 or keys[i] != keys[j - 1]:
            keys[j] = keys[i]
            j += 1
    buf.n = j
    return 0


cdef inline double _jaccard(
    const uint64_t* a, Py_ssize_t na, const uint64_t* b, Py_ssize_t nb
) noexcept nogil:
    cdef Py_ssize_t i = 0, j = 0, inter = 0, union_
    cdef uint64_t x, y
    while i < na and j < nb:
        x = a[i]
        y = b[j]
        inter += x == y
        i += x <= y
        j += y <= x
    union_ = na + nb - inter
    return inter / <double>union_ if union_ else 0.0


cdef array _as_keys(obj):
    if isinstance(obj, array) and (<array>obj).ob_descr.typecode == b"Q":
        return <array>obj
    return array("Q", obj)


def token_keys(str text):
    """The sorted, duplicate-free keys of ``text``'s tokens."""
    cdef KeyBuf buf = KeyBuf(NULL, 0, 0)
    cdef array out
    try:
        _scan(text, &buf)
        out = clone(_KEYS, buf.n, False)
        for i in range(buf.n):
            out.data.as_ulonglongs[i] = buf.keys[i]
        return out
    finally:
        free(buf.keys)


def jaccard_keys(source, candidates):
    """Jaccard similarity of key set ``source`` with each candidate key set.

    Every argument must be sorted and duplicate-free, as :func:`token_keys` returns them.
    """
    cdef array a = _as_keys(source), b
    cdef Py_ssize_t na = len(a), c = 0
    cdef array out = clone(_FLOATS, len(candidates), False)
    for keys in candidates:
        b = _as_keys(keys)
        out.data.as_doubles[c] = _jaccard(
            <const uint64_t*>a.data.as_ulonglongs, na,
            <const uint64_t*>b.data.as_ulonglongs, len(b),
        )
        c += 1
    return out


def jaccard_many(str source, candidates):
    """Jaccard similarity of ``source``'s tokens with each candidate's tokens."""
    cdef KeyBuf a = KeyBuf(NULL, 0, 0)
    cdef KeyBuf b = KeyBuf(NULL, 0, 0)
    cdef list out = []
    try:
        _scan(source, &a)
        for text in candidates:
            _scan(<str?>text, &b)
            out.append(_jaccard(a.keys, a.n, b.keys, b.n))
        return out
    finally:
        free(a.keys)
        free(b.keys)

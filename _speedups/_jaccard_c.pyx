# cython: language_level=3
"""Jaccard token-overlap kernel, compiled twin of ``_jaccard_py`` (same keys, same floats).

Tokens are scanned straight from the string's bytes through a table that lower-cases and
classifies each (text of wider code points goes through ``str.lower`` first) and turned into
64-bit keys as each ends. ``token_keys`` sorts and de-duplicates them in a C buffer and
``jaccard_keys`` compares two such sets with a branch-free merge; ``jaccard_many`` counts
through two small hash sets instead.
"""

from cpython.array cimport array, clone
from cpython.float cimport PyFloat_FromDouble
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.sequence cimport PySequence_Fast
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc, qsort, realloc
from libc.string cimport memset

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object o)
    int PyUnicode_KIND(object o)
    void* PyUnicode_DATA(object o)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    Py_ssize_t PySequence_Fast_GET_SIZE(object o)
    PyObject** PySequence_Fast_ITEMS(object o)
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
    unsigned char* copy  # a wide text's code points as bytes (``cap * 2`` >= its length)


cdef int _cmp_u64(const void* a, const void* b) noexcept nogil:
    cdef uint64_t x = (<const uint64_t*>a)[0], y = (<const uint64_t*>b)[0]
    return (x > y) - (x < y)


cdef int _reserve(KeyBuf* buf, Py_ssize_t cap) except -1:
    cdef uint64_t* grown
    cdef unsigned char* copy
    if cap <= buf.cap:
        return 0
    grown = <uint64_t*>realloc(buf.keys, cap * sizeof(uint64_t))
    if grown == NULL:
        raise MemoryError()
    buf.keys = grown
    copy = <unsigned char*>realloc(buf.copy, cap * 2)
    if copy == NULL:
        raise MemoryError()
    buf.copy = copy
    buf.cap = cap
    return 0


cdef void _release(KeyBuf* buf) noexcept:
    free(buf.keys)
    free(buf.copy)


cdef unsigned char _TOKEN_BYTE[256]


cdef void _init_token_bytes() noexcept:
    """``_TOKEN_BYTE[c]``: the lower-cased token character of code point ``c`` < 256, 0 for
    a separator (tokens are runs of ``[a-z0-9_-]``; ``A-Z`` are their lower case)."""
    cdef int c
    for c in range(256):
        _TOKEN_BYTE[c] = 0
    for c in range(97, 123):
        _TOKEN_BYTE[c] = c
        _TOKEN_BYTE[c - 32] = c
    for c in range(48, 58):
        _TOKEN_BYTE[c] = c
    _TOKEN_BYTE[95] = 95
    _TOKEN_BYTE[45] = 45


_init_token_bytes()


cdef void _sort_unique(KeyBuf* buf, Py_ssize_t n) noexcept nogil:
    """Sort the first ``n`` keys of ``buf`` and drop repeats; ``buf.n`` is the count kept."""
    cdef uint64_t* keys = buf.keys
    cdef uint64_t key
    cdef Py_ssize_t i, j
    if n > 32:
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


cdef int _scan(str text, KeyBuf* buf) except -1:
    """Fill ``buf`` with the sorted, duplicate-free token keys of ``text``."""
    _sort_unique(buf, _scan_unsorted(text, buf))
    return 0


cdef Py_ssize_t _scan_unsorted(str text, KeyBuf* buf) except -1:
    """Write the key of each token of ``text`` to ``buf``, in text order and with repeats;
    return how many.

    Text of one byte per code point (ASCII, Latin-1) is read in place through
    ``_TOKEN_BYTE``: lower-casing such text never turns a non-ASCII character into a token
    character, so this equals scanning ``text.lower()``. Other text is lower-cased by
    ``str.lower`` first (which may, e.g., turn the Kelvin sign into ``k``) and copied into
    a byte buffer, every non-ASCII code point a separator.
    """
    cdef str lowered = text if PyUnicode_KIND(text) == 1 else text.lower()
    cdef Py_ssize_t length = PyUnicode_GET_LENGTH(lowered), i
    cdef int kind = PyUnicode_KIND(lowered)
    cdef void* data = PyUnicode_DATA(lowered)
    cdef unsigned int ch
    cdef unsigned char* copy
    _reserve(buf, length // 2 + 1)
    if kind == 1:
        return _scan_bytes(<const unsigned char*>data, length, buf.keys)
    copy = buf.copy
    for i in range(length):
        ch = PyUnicode_READ(kind, data, i)
        copy[i] = ch if ch < 128 else 32
    return _scan_bytes(copy, length, buf.keys)


cdef Py_ssize_t _scan_bytes(
    const unsigned char* chars, Py_ssize_t length, uint64_t* keys
) noexcept nogil:
    """The keys of the tokens of ``length`` bytes, in order (``keys`` has room for them)."""
    cdef Py_ssize_t i, start = 0, run, n = 0, j
    cdef unsigned char c
    cdef uint64_t packed = 0, h
    for i in range(length + 1):
        c = _TOKEN_BYTE[chars[i]] if i < length else 0
        if c:
            packed = (packed << 8) | c
            continue
        run = i - start
        if run:
            if run <= 7:
                keys[n] = packed
            else:  # a long token: hash its lower-cased bytes
                h = _FNV_OFFSET
                for j in range(start, i):
                    h = (h ^ _TOKEN_BYTE[chars[j]]) * _FNV_PRIME
                keys[n] = h | _LONG
            n += 1
            packed = 0
        start = i + 1
    return n


cdef struct KeySet:
    uint64_t* slots  # open addressing, 0 marks a free slot (no token has key 0)
    Py_ssize_t mask
    int shift


cdef int _keyset_reset(KeySet* table, Py_ssize_t n) except -1:
    """Empty ``table`` and make room for ``n`` keys (at most half the slots used)."""
    cdef Py_ssize_t size = 16
    cdef int bits = 4
    cdef uint64_t* grown
    while size < 2 * n:
        size <<= 1
        bits += 1
    if size - 1 > table.mask:
        grown = <uint64_t*>realloc(table.slots, size * sizeof(uint64_t))
        if grown == NULL:
            raise MemoryError()
        table.slots = grown
    table.mask = size - 1
    table.shift = 64 - bits
    memset(table.slots, 0, size * sizeof(uint64_t))
    return 0


cdef inline bint _keyset_add(KeySet* table, uint64_t key) noexcept nogil:
    """Add ``key``; true when it was not there yet."""
    cdef Py_ssize_t i = <Py_ssize_t>((key * 0x9E3779B97F4A7C15ULL) >> table.shift)
    while table.slots[i]:
        if table.slots[i] == key:
            return False
        i = (i + 1) & table.mask
    table.slots[i] = key
    return True


cdef inline bint _keyset_has(const KeySet* table, uint64_t key) noexcept nogil:
    cdef Py_ssize_t i = <Py_ssize_t>((key * 0x9E3779B97F4A7C15ULL) >> table.shift)
    while table.slots[i]:
        if table.slots[i] == key:
            return True
        i = (i + 1) & table.mask
    return False


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
    cdef KeyBuf buf = KeyBuf(NULL, 0, 0, NULL)
    cdef array out
    try:
        _scan(text, &buf)
        out = clone(_KEYS, buf.n, False)
        for i in range(buf.n):
            out.data.as_ulonglongs[i] = buf.keys[i]
        return out
    finally:
        _release(&buf)


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
    """Jaccard similarity of ``source``'s tokens with each candidate's tokens.

    The source's keys go into one hash set; each candidate's keys are counted through a
    second (its distinct keys, and how many of them the source holds), so no key set is
    sorted here. The floats equal those of sorted key sets merged (same counts, same
    division).
    """
    cdef KeyBuf b = KeyBuf(NULL, 0, 0, NULL)
    cdef KeySet a_set = KeySet(NULL, -1, 0)
    cdef KeySet b_set = KeySet(NULL, -1, 0)
    cdef Py_ssize_t na = 0, nb, inter, union_, i, n, c
    cdef uint64_t key
    cdef object texts = PySequence_Fast(candidates, "jaccard_many: candidates must be a sequence")
    cdef Py_ssize_t count = PySequence_Fast_GET_SIZE(texts)
    cdef PyObject** items = PySequence_Fast_ITEMS(texts)
    cdef list out = PyList_New(count)
    try:
        n = _scan_unsorted(source, &b)
        _keyset_reset(&a_set, n)
        for i in range(n):
            na += _keyset_add(&a_set, b.keys[i])
        for c in range(count):
            n = _scan_unsorted(<str?><object>items[c], &b)
            _keyset_reset(&b_set, n)
            nb = 0
            inter = 0
            for i in range(n):
                key = b.keys[i]
                if _keyset_add(&b_set, key):
                    nb += 1
                    inter += _keyset_has(&a_set, key)
            union_ = na + nb - inter
            similarity = PyFloat_FromDouble(inter / <double>union_ if union_ else 0.0)
            Py_INCREF(similarity)
            PyList_SET_ITEM(out, c, similarity)
        return out
    finally:
        _release(&b)
        free(a_set.slots)
        free(b_set.slots)

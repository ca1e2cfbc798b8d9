# cython: language_level=3
"""Jaccard token-overlap kernel, compiled twin of ``_jaccard_py`` (same keys, same floats).

Tokens are found in the string's bytes 64 at a time: a table lower-cases and classifies each
byte (text of wider code points goes through ``str.lower`` first), and the starts and ends of
tokens are read off a bit mask of token bytes, so token boundaries cost no branch per byte.
Each token then becomes a 64-bit key. ``token_keys`` sorts and de-duplicates the keys in a C
buffer and ``jaccard_keys`` compares two such sets with a branch-free merge; ``jaccard_many``
counts each candidate's keys through one hash table that holds the source's keys instead.
"""

from cpython.array cimport array, clone
from cpython.float cimport PyFloat_FromDouble
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.sequence cimport PySequence_Fast
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, qsort, realloc
from libc.string cimport memset

cdef extern from "Python.h":
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


cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <intrin.h>
    static __inline int swarmmem_ctz64(unsigned long long x) {
        unsigned long i;
        _BitScanForward64(&i, x);
        return (int)i;
    }
    #else
    #define swarmmem_ctz64(x) __builtin_ctzll(x)
    #endif
    """
    int _ctz64 "swarmmem_ctz64"(uint64_t x) noexcept nogil


cdef struct KeyBuf:
    uint64_t* keys
    Py_ssize_t* starts  # where each scanned token starts (then scratch space for jaccard_many)
    Py_ssize_t* ends  # where each scanned token ends
    Py_ssize_t n
    Py_ssize_t cap  # room for this many tokens
    unsigned char* chars  # the text's token bytes (0 for a separator), 8 bytes of padding after


cdef int _cmp_u64(const void* a, const void* b) noexcept nogil:
    cdef uint64_t x = (<const uint64_t*>a)[0], y = (<const uint64_t*>b)[0]
    return (x > y) - (x < y)


cdef inline void* _grown(void* block, size_t size) except NULL:
    """``block`` reallocated to ``size`` bytes; MemoryError when that fails (``block`` is
    then still valid, for the caller to free)."""
    cdef void* grown = realloc(block, size)
    if grown == NULL:
        raise MemoryError()
    return grown


cdef int _reserve(KeyBuf* buf, Py_ssize_t length) except -1:
    """Make room in ``buf`` for the tokens of a text of ``length`` code points."""
    cdef Py_ssize_t cap = length // 2 + 1
    if cap <= buf.cap:
        return 0
    buf.keys = <uint64_t*>_grown(buf.keys, cap * sizeof(uint64_t))
    buf.starts = <Py_ssize_t*>_grown(buf.starts, cap * sizeof(Py_ssize_t))
    buf.ends = <Py_ssize_t*>_grown(buf.ends, cap * sizeof(Py_ssize_t))
    buf.chars = <unsigned char*>_grown(buf.chars, 2 * cap + 8)
    buf.cap = cap
    return 0


cdef void _release(KeyBuf* buf) noexcept:
    free(buf.keys)
    free(buf.starts)
    free(buf.ends)
    free(buf.chars)


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
    _reserve(buf, length)
    if kind == 1:
        return _scan_bytes(<const unsigned char*>data, length, buf)
    copy = buf.chars
    for i in range(length):
        ch = PyUnicode_READ(kind, data, i)
        copy[i] = ch if ch < 128 else 32
    return _scan_bytes(copy, length, buf)


cdef inline uint64_t _big_endian(const unsigned char* b) noexcept nogil:
    """The 8 bytes at ``b`` read as a big-endian number (compilers make this one load)."""
    return (
        (<uint64_t>b[0] << 56) | (<uint64_t>b[1] << 48) | (<uint64_t>b[2] << 40)
        | (<uint64_t>b[3] << 32) | (<uint64_t>b[4] << 24) | (<uint64_t>b[5] << 16)
        | (<uint64_t>b[6] << 8) | <uint64_t>b[7]
    )


cdef Py_ssize_t _scan_bytes(
    const unsigned char* text, Py_ssize_t length, KeyBuf* buf
) noexcept nogil:
    """The keys of the tokens of ``length`` bytes, in order (``buf`` has room for them).

    Token boundaries are found without a branch per byte: each block of 64 bytes is turned
    into its token bytes (``buf.chars``, which ``text`` may be) and a bit mask of them, and
    the starts and ends of tokens are read off the mask's edges bit by bit. A token of up
    to 7 bytes is then one 8-byte load cut to length; a longer one is hashed.
    """
    cdef unsigned char* chars = buf.chars
    cdef uint64_t* keys = buf.keys
    cdef Py_ssize_t* starts = buf.starts
    cdef Py_ssize_t* ends = buf.ends
    cdef Py_ssize_t base, i, j, stop, run, ns = 0, ne = 0
    cdef uint64_t c, mask, edges, carry = 0, h
    for base in range(0, length, 64):
        stop = min(64, length - base)
        mask = 0
        for i in range(stop):
            c = _TOKEN_BYTE[text[base + i]]
            chars[base + i] = <unsigned char>c
            mask |= <uint64_t>(c != 0) << i
        edges = mask & ~((mask << 1) | carry)  # token starts
        while edges:
            starts[ns] = base + _ctz64(edges)
            ns += 1
            edges &= edges - 1
        edges = ~mask & ((mask << 1) | carry)  # token ends (bit ``stop`` past a block's end)
        while edges:
            ends[ne] = base + _ctz64(edges)
            ne += 1
            edges &= edges - 1
        carry = mask >> 63
    if ne < ns:  # the text ends inside a token at a block's end
        ends[ne] = length
    memset(chars + length, 0, 8)
    for i in range(ns):
        run = ends[i] - starts[i]
        if run <= 7:
            keys[i] = _big_endian(chars + starts[i]) >> (64 - 8 * run)
        else:  # a long token: hash its bytes
            h = _FNV_OFFSET
            for j in range(starts[i], ends[i]):
                h = (h ^ chars[j]) * _FNV_PRIME
            keys[i] = h | _LONG
    return ns


cdef struct KeyTable:
    uint64_t* slots  # open addressing, 0 marks a free slot (no token has key 0)
    uint64_t* marks  # per slot: the last candidate that held the key (times 2), plus 1 for a source key
    Py_ssize_t mask
    int shift


cdef int _table_reset(KeyTable* table, Py_ssize_t n) except -1:
    """Empty ``table`` and make room for ``n`` keys (at most half the slots used)."""
    cdef Py_ssize_t size = 16
    cdef int bits = 4
    while size < 2 * n:
        size <<= 1
        bits += 1
    if size - 1 > table.mask:
        table.slots = <uint64_t*>_grown(table.slots, size * sizeof(uint64_t))
        table.marks = <uint64_t*>_grown(table.marks, size * sizeof(uint64_t))
    table.mask = size - 1
    table.shift = 64 - bits
    memset(table.slots, 0, size * sizeof(uint64_t))
    return 0


cdef inline Py_ssize_t _slot(const KeyTable* table, uint64_t key) noexcept nogil:
    """The slot that holds ``key``, or the free slot where it would go."""
    cdef Py_ssize_t i = <Py_ssize_t>((key * 0x9E3779B97F4A7C15ULL) >> table.shift)
    cdef uint64_t held = table.slots[i]
    while held != key and held != 0:
        i = (i + 1) & table.mask
        held = table.slots[i]
    return i


cdef Py_ssize_t _source_table(KeyTable* table, const uint64_t* keys, Py_ssize_t n, Py_ssize_t room) except -1:
    """Fill ``table`` with the source's ``n`` keys, with room for ``room`` more; return how
    many distinct keys the source has."""
    cdef Py_ssize_t i, slot, distinct = 0
    _table_reset(table, n + room)
    for i in range(n):
        slot = _slot(table, keys[i])
        if table.slots[slot] == 0:
            table.slots[slot] = keys[i]
            table.marks[slot] = 1
            distinct += 1
    return distinct


cdef inline void _count_candidate(
    KeyTable* table, const uint64_t* keys, Py_ssize_t n, uint64_t stamp, Py_ssize_t* added,
    Py_ssize_t* distinct, Py_ssize_t* shared,
) noexcept nogil:
    """Count a candidate's distinct keys and those the source holds.

    Each key is looked up once in the table that holds the source's keys: a key met for the
    first time in this candidate gets the candidate's ``stamp``; a key the table lacks is
    added and its slot listed in ``added``, and the table is put back afterwards by emptying
    those slots in reverse order (which undoes linear-probing inserts exactly).
    """
    cdef Py_ssize_t i, slot, nb = 0, inter = 0, fresh = 0
    cdef uint64_t key, mark
    for i in range(n):
        key = keys[i]
        slot = _slot(table, key)
        if table.slots[slot] == 0:
            table.slots[slot] = key
            table.marks[slot] = stamp
            added[fresh] = slot
            fresh += 1
            nb += 1
            continue
        mark = table.marks[slot]
        if (mark | 1) != (stamp | 1):
            table.marks[slot] = stamp | (mark & 1)
            nb += 1
            inter += <Py_ssize_t>(mark & 1)
    for i in range(fresh - 1, -1, -1):
        table.slots[added[i]] = 0
    distinct[0] = nb
    shared[0] = inter


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
    cdef KeyBuf buf = KeyBuf(NULL, NULL, NULL, 0, 0, NULL)
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

    The source's keys go into one hash table; each candidate's keys are counted through it
    (its distinct keys, and how many of them the source holds), so no key set is sorted
    here. The floats equal those of sorted key sets merged (same counts, same division).
    """
    cdef KeyBuf a = KeyBuf(NULL, NULL, NULL, 0, 0, NULL)
    cdef KeyBuf b = KeyBuf(NULL, NULL, NULL, 0, 0, NULL)
    cdef KeyTable table = KeyTable(NULL, NULL, -1, 0)
    cdef Py_ssize_t na, nb, inter, union_, n, c, room = 64
    cdef uint64_t stamp = 0
    cdef object texts = PySequence_Fast(candidates, "jaccard_many: candidates must be a sequence")
    cdef Py_ssize_t count = PySequence_Fast_GET_SIZE(texts)
    cdef PyObject** items = PySequence_Fast_ITEMS(texts)
    cdef list out = PyList_New(count)
    try:
        a.n = _scan_unsorted(source, &a)
        na = _source_table(&table, a.keys, a.n, room)
        for c in range(count):
            n = _scan_unsorted(<str?><object>items[c], &b)
            if n > room:  # more keys than the table has room for: rebuild it larger
                room = n
                _source_table(&table, a.keys, a.n, room)
            stamp += 2
            _count_candidate(&table, b.keys, n, stamp, b.starts, &nb, &inter)
            union_ = na + nb - inter
            similarity = PyFloat_FromDouble(inter / <double>union_ if union_ else 0.0)
            Py_INCREF(similarity)
            PyList_SET_ITEM(out, c, similarity)
        return out
    finally:
        _release(&a)
        _release(&b)
        free(table.slots)
        free(table.marks)

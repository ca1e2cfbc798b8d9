# cython: language_level=3
"""Reciprocal rank fusion, compiled twin of ``_fusion_py`` (same contract, same floats).

Both entry points run one C core over integer ids: a score array, a per-id stamp of the last
channel that ranked it (so a repeated id counts once, at its first rank) and a stable radix
sort on the score over the ids taken in ascending order (so ties stay in id order).
:func:`rrf_fuse` first interns its string ids in a C hash table and re-sorts each run of
tied scores by comparing the strings themselves.
"""

from cpython.array cimport array, clone
from cpython.float cimport PyFloat_FromDouble
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.object cimport PyObject, PyObject_Hash
from cpython.ref cimport Py_INCREF
from cpython.sequence cimport PySequence_Fast
from cpython.unicode cimport PyUnicode_Compare
from libc.stdlib cimport calloc, free, malloc
from libc.stdint cimport uint64_t
from libc.string cimport memcpy, memset

from swarmmem._speedups import _fusion_py

cdef extern from "Python.h":
    Py_ssize_t PySequence_Fast_GET_SIZE(object o)
    PyObject** PySequence_Fast_ITEMS(object o)
    bint PyUnicode_CheckExact(PyObject* o)

cdef array _IDS = array("q")
cdef array _SCORES = array("d")


cdef struct Entry:
    double score
    Py_ssize_t id


cdef inline bint _before(const Entry* a, const Entry* b, PyObject** names) noexcept:
    """True when ``a`` goes strictly before ``b``: higher score, then smaller id (or name)."""
    if a.score > b.score:
        return True
    if a.score < b.score:
        return False
    if names == NULL:
        return a.id < b.id
    return PyUnicode_Compare(<object>names[a.id], <object>names[b.id]) < 0


cdef void _sort(Entry* a, Entry* tmp, Py_ssize_t n, PyObject** names) noexcept:
    """Stable bottom-up merge sort (insertion-sorted runs of 16) by ``_before``."""
    cdef Py_ssize_t run = 16, lo, hi, mid, i, j, o, width
    cdef Entry x
    cdef Entry* src = a
    cdef Entry* dst = tmp
    cdef Entry* swap
    for lo in range(0, n, run):
        hi = lo + run if lo + run < n else n
        for i in range(lo + 1, hi):
            x = a[i]
            j = i
            while j > lo and _before(&x, &a[j - 1], names):
                a[j] = a[j - 1]
                j -= 1
            a[j] = x
    width = run
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = lo + width if lo + width < n else n
            hi = lo + 2 * width if lo + 2 * width < n else n
            i, j, o = lo, mid, lo
            while i < mid and j < hi:
                if _before(&src[j], &src[i], names):
                    dst[o] = src[j]
                    j += 1
                else:
                    dst[o] = src[i]
                    i += 1
                o += 1
            while i < mid:
                dst[o] = src[i]
                i += 1
                o += 1
            while j < hi:
                dst[o] = src[j]
                j += 1
                o += 1
        swap = src
        src = dst
        dst = swap
        width *= 2
    if src != a:
        memcpy(a, src, n * sizeof(Entry))


cdef double _check(Py_ssize_t n_rankings, Py_ssize_t n_weights, double k) except? -1.0:
    if n_rankings != n_weights:
        raise ValueError(f"rrf_fuse: got {n_rankings} rankings but {n_weights} weights")
    if not k >= 0:
        raise ValueError(f"rrf_fuse: k must be >= 0, got {k!r}")
    return k


cdef inline uint64_t _descending_key(double score) noexcept nogil:
    """A key whose ascending order is the score's descending order (no NaN; -0.0 is 0.0)."""
    cdef uint64_t bits
    if score == 0.0:
        score = 0.0
    memcpy(&bits, &score, sizeof(double))
    bits = ~bits if bits >> 63 else bits | (1ULL << 63)
    return ~bits


cdef void _radix_sort(uint64_t* keys, Py_ssize_t* ids, uint64_t* tkeys, Py_ssize_t* tids,
                      Py_ssize_t n) noexcept nogil:
    """Stable LSD radix sort of ``ids`` by ``keys`` (8-bit digits, constant digits skipped)."""
    cdef Py_ssize_t counts[8][256]
    cdef Py_ssize_t b, i, total, c
    cdef uint64_t* sk = keys
    cdef Py_ssize_t* si = ids
    cdef uint64_t* dk = tkeys
    cdef Py_ssize_t* di = tids
    cdef uint64_t* swap_k
    cdef Py_ssize_t* swap_i
    if n < 2:
        return
    memset(counts, 0, sizeof(counts))
    for i in range(n):
        for b in range(8):
            counts[b][(keys[i] >> (8 * b)) & 255] += 1
    for b in range(8):
        if counts[b][(keys[0] >> (8 * b)) & 255] == n:
            continue
        total = 0
        for i in range(256):
            c = counts[b][i]
            counts[b][i] = total
            total += c
        for i in range(n):
            c = (sk[i] >> (8 * b)) & 255
            dk[counts[b][c]] = sk[i]
            di[counts[b][c]] = si[i]
            counts[b][c] += 1
        swap_k = sk
        sk = dk
        dk = swap_k
        swap_i = si
        si = di
        di = swap_i
    if sk != keys:
        memcpy(keys, sk, n * sizeof(uint64_t))
        memcpy(ids, si, n * sizeof(Py_ssize_t))


cdef Py_ssize_t _fuse(
    const Py_ssize_t* flat, const Py_ssize_t* bounds, const double* weights,
    Py_ssize_t n_channels, double k, Py_ssize_t n_ids, PyObject** names, Entry** out,
) except -1:
    """Fuse channel ``c`` = ``flat[bounds[c]:bounds[c + 1]]``; ``*out`` gets the sorted
    entries (caller frees); return how many.

    Ids are collected in ascending order and radix-sorted stably on the score, so ties stay
    in id order; with ``names`` each run of tied scores is then re-sorted by name.
    """
    cdef double* scores = <double*>malloc((n_ids + 1) * sizeof(double))
    cdef Py_ssize_t* last = <Py_ssize_t*>malloc((2 * n_ids + 1) * sizeof(Py_ssize_t))
    cdef uint64_t* keys = <uint64_t*>malloc((2 * n_ids + 1) * sizeof(uint64_t))
    cdef Entry* entries = <Entry*>malloc((2 * n_ids + 1) * sizeof(Entry))
    cdef Py_ssize_t c, p, doc, rank, n = 0, start
    cdef Py_ssize_t* ids
    cdef double weight
    if scores == NULL or last == NULL or keys == NULL or entries == NULL:
        free(scores)
        free(last)
        free(keys)
        free(entries)
        raise MemoryError()
    for doc in range(n_ids):
        scores[doc] = 0.0
        last[doc] = -1
    for c in range(n_channels):
        weight = weights[c]
        rank = 0
        for p in range(bounds[c], bounds[c + 1]):
            doc = flat[p]
            if last[doc] == c:
                continue
            last[doc] = c
            rank += 1
            scores[doc] = scores[doc] + weight / (k + rank)
    ids = last + n_ids  # the second half of ``last`` holds the touched ids
    for doc in range(n_ids):
        if last[doc] >= 0:
            ids[n] = doc
            keys[n] = _descending_key(scores[doc])
            n += 1
    _radix_sort(keys, ids, keys + n_ids, last, n)
    for p in range(n):
        entries[p].id = ids[p]
        entries[p].score = scores[ids[p]]
    if names != NULL:
        start = 0
        for p in range(1, n + 1):
            if p == n or keys[p] != keys[start]:
                if p - start > 1:
                    _sort(entries + start, entries + n_ids, p - start, names)
                start = p
    free(scores)
    free(last)
    free(keys)
    out[0] = entries
    return n


cdef void* _allocated(size_t count, size_t size, bint zeroed=False) except NULL:
    """``count`` items of ``size`` bytes (zeroed if asked; the caller frees them)."""
    cdef void* memory = calloc(count, size) if zeroed else malloc(count * size)
    if memory == NULL:
        raise MemoryError()
    return memory


cdef double* _weights(weights, Py_ssize_t n) except NULL:
    cdef double* w = <double*>_allocated(n + 1, sizeof(double))
    cdef Py_ssize_t c
    try:
        for c in range(n):
            w[c] = weights[c]
    except BaseException:
        free(w)
        raise
    return w


cdef struct Slot:
    PyObject* name  # borrowed from the caller's rankings; NULL marks a free slot
    Py_ssize_t doc


cdef Py_ssize_t _intern(
    PyObject* name, Slot* slots, Py_ssize_t mask, PyObject** names, Py_ssize_t* n_names
) except -2:
    """The integer id of string ``name`` (a new one, recorded in ``names``, on first
    sight); -1 when ``name`` is not an exact ``str``. Two names are one id when they are
    the same object or equal strings."""
    cdef Py_hash_t h
    cdef Py_ssize_t i
    cdef Slot* slot
    if not PyUnicode_CheckExact(name):
        return -1
    h = PyObject_Hash(<object>name)  # a string caches its hash
    i = <Py_ssize_t>(<size_t>h & <size_t>mask)
    while True:
        slot = &slots[i]
        if slot.name == NULL:
            slot.name = name
            slot.doc = n_names[0]
            names[n_names[0]] = name
            n_names[0] += 1
            return slot.doc
        if slot.name == name or (
            PyObject_Hash(<object>slot.name) == h
            and PyUnicode_Compare(<object>slot.name, <object>name) == 0
        ):
            return slot.doc
        i = (i + 1) & mask


def rrf_fuse(rankings, weights, double k):
    """Fuse best-first id lists; return ``(ids, scores)`` best first.

    The string ids are interned in a C hash table (open addressing over the strings'
    cached hashes), so no Python object is made per id before the result lists.
    """
    cdef Py_ssize_t n_channels = len(rankings)
    _check(n_channels, len(weights), k)
    cdef list fast = [PySequence_Fast(r, "rrf_fuse: a ranking must be a sequence") for r in rankings]
    cdef Py_ssize_t total = 0, c, i, m, doc, n, n_names = 0, size = 16
    cdef PyObject** items
    for seq in fast:
        total += PySequence_Fast_GET_SIZE(seq)
    while 3 * size < 4 * total:  # at most three quarters of the slots in use
        size <<= 1
    cdef Py_ssize_t* flat = NULL
    cdef Py_ssize_t* bounds = NULL
    cdef PyObject** names = NULL
    cdef Slot* slots = NULL
    cdef double* w = NULL
    cdef Entry* entries = NULL
    cdef list out_ids, out_scores
    try:
        flat = <Py_ssize_t*>_allocated(total + 1, sizeof(Py_ssize_t))
        bounds = <Py_ssize_t*>_allocated(n_channels + 1, sizeof(Py_ssize_t))
        names = <PyObject**>_allocated(total + 1, sizeof(PyObject*))
        slots = <Slot*>_allocated(size, sizeof(Slot), zeroed=True)
        w = _weights(weights, n_channels)
        total = 0
        for c in range(n_channels):
            seq = fast[c]
            bounds[c] = total
            m = PySequence_Fast_GET_SIZE(seq)
            items = PySequence_Fast_ITEMS(seq)
            for i in range(m):
                doc = _intern(items[i], slots, size - 1, names, &n_names)
                if doc < 0:  # ids that are not plain strings: the twin defines their order
                    return _fusion_py.rrf_fuse(rankings, weights, k)
                flat[total] = doc
                total += 1
        bounds[n_channels] = total
        n = _fuse(flat, bounds, w, n_channels, k, n_names, names, &entries)
        out_ids = PyList_New(n)
        out_scores = PyList_New(n)
        for i in range(n):
            name = <object>names[entries[i].id]
            Py_INCREF(name)
            PyList_SET_ITEM(out_ids, i, name)
            score = PyFloat_FromDouble(entries[i].score)
            Py_INCREF(score)
            PyList_SET_ITEM(out_scores, i, score)
        return out_ids, out_scores
    finally:
        free(flat)
        free(bounds)
        free(names)
        free(slots)
        free(w)
        free(entries)


def rrf_fuse_ids(rankings, weights, double k, Py_ssize_t n_ids):
    """Fuse best-first lists of ids in ``range(n_ids)``; return ``(ids, scores)`` arrays."""
    cdef Py_ssize_t n_channels = len(rankings)
    _check(n_channels, len(weights), k)
    if n_ids < 0:
        raise ValueError(f"rrf_fuse_ids: n_ids must be >= 0, got {n_ids}")
    cdef list channels = []
    cdef Py_ssize_t total = 0, c, i, p, n
    cdef array arr
    for ranking in rankings:
        if isinstance(ranking, array) and (<array>ranking).ob_descr.typecode == b"q":
            arr = ranking
        else:
            arr = array("q", ranking)
        channels.append(arr)
        total += len(arr)
    cdef Py_ssize_t* flat = NULL
    cdef Py_ssize_t* bounds = NULL
    cdef double* w = NULL
    cdef Entry* entries = NULL
    cdef long long doc
    try:
        flat = <Py_ssize_t*>_allocated(total + 1, sizeof(Py_ssize_t))
        bounds = <Py_ssize_t*>_allocated(n_channels + 1, sizeof(Py_ssize_t))
        w = _weights(weights, n_channels)
        total = 0
        for c in range(n_channels):
            arr = channels[c]
            bounds[c] = total
            for i in range(len(arr)):
                doc = arr.data.as_longlongs[i]
                if doc < 0 or doc >= n_ids:
                    raise ValueError(f"rrf_fuse_ids: id {doc} is outside range({n_ids})")
                flat[total] = <Py_ssize_t>doc
                total += 1
        bounds[n_channels] = total
        n = _fuse(flat, bounds, w, n_channels, k, n_ids, NULL, &entries)
        ids = clone(_IDS, n, False)
        scores = clone(_SCORES, n, False)
        for i in range(n):
            ids.data.as_longlongs[i] = entries[i].id
            scores.data.as_doubles[i] = entries[i].score
        return ids, scores
    finally:
        free(flat)
        free(bounds)
        free(w)
        free(entries)

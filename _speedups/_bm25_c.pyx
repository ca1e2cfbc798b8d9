# cython: language_level=3
"""BM25 scan kernel, compiled twin of ``_bm25_py`` (same rows, same floats).

One pass marks the rows the query searches (live, in an allowed scope and kind) and sums their
lengths; a second reads the postings of each query term (``(row, version, count)`` triples,
stale ones skipped), giving each matched row its counts and each term its document
frequency; a third scores the matched rows, summing in query order; a quickselect finds the
``limit``-th best score. Only the postings of the query's terms are read, not every row's
terms.

``text_relevance`` reads each candidate tuple once, keeping its BM25, length and held terms in
C arrays; the IDF weights are computed once per distinct set of held terms (with
``math.fsum``, as the twin), then each candidate's text factor with libm's ``pow`` and
``sqrt``, which Python's float operations call too.
"""

from math import fsum

cimport cython
from cpython.array cimport array, clone
from cpython.float cimport PyFloat_FromDouble
from cpython.list cimport PyList_GET_ITEM, PyList_New, PyList_SET_ITEM
from cpython.object cimport PyObject
from cpython.sequence cimport PySequence_Fast, PySequence_Fast_ITEMS
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_Check, PyTuple_GET_ITEM, PyTuple_GET_SIZE
from cpython.unicode cimport PyUnicode_CheckExact, PyUnicode_Compare, PyUnicode_GET_LENGTH
from libc.math cimport log, pow, sqrt
from libc.stdlib cimport calloc, free, malloc

include "_best_first.pxi"

cdef array _INTS = array("i")


cdef double _select(double* values, Py_ssize_t n, Py_ssize_t k) noexcept nogil:
    """The ``k``-th largest of ``values[:n]`` (0-based; reorders ``values``)."""
    cdef Py_ssize_t lo = 0, hi = n - 1, i, j
    cdef double pivot, tmp
    while lo < hi:
        pivot = values[lo + (hi - lo) // 2]
        i = lo
        j = hi
        while i <= j:
            while values[i] > pivot:
                i += 1
            while values[j] < pivot:
                j -= 1
            if i <= j:
                tmp = values[i]
                values[i] = values[j]
                values[j] = tmp
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return values[k]
    return values[k]


def bm25_top(
    const int[::1] versions,
    const int[::1] lengths,
    const unsigned char[::1] live,
    const int[::1] scopes,
    const unsigned char[::1] allowed_scopes,
    const int[::1] kinds,
    allowed_kinds,
    postings,
    phrases,
    double k1,
    double b,
    Py_ssize_t limit,
    ids,
):
    cdef Py_ssize_t n_rows = live.shape[0]
    cdef Py_ssize_t n_query = len(postings)
    cdef Py_ssize_t n_phrases = 0
    cdef Py_ssize_t i, j, e, q, r, size, n = 0, n_matched = 0
    cdef long long total = 0
    cdef int s, f
    cdef const unsigned char[::1] kind_ok
    cdef bint check_kinds = allowed_kinds is not None
    cdef Py_ssize_t n_scopes = allowed_scopes.shape[0], n_kinds = 0
    cdef const int[::1] listed
    cdef const int* entries
    cdef int* column
    cdef double avgdl, norm, score, value, floor = 0.0
    if check_kinds:
        kind_ok = allowed_kinds
        n_kinds = kind_ok.shape[0]
    for listed_or_none in postings:
        if listed_or_none is None:
            n_phrases += 1
    if len(phrases) != n_phrases:
        raise ValueError("bm25_top: one phrase column per phrase entry of the query")
    if versions.shape[0] < n_rows:
        raise ValueError("bm25_top: one version per row")
    cdef object id_seq = PySequence_Fast(ids, "bm25_top: ids must be a sequence")
    if len(id_seq) < n_rows:
        raise ValueError("bm25_top: one id per row")
    cdef PyObject** id_items = PySequence_Fast_ITEMS(id_seq)
    cdef object key, row_obj, value_obj
    if n_rows == 0 or n_query == 0:
        return [], []
    cdef const int** lists = <const int**>malloc((n_query + 1) * sizeof(int*))
    cdef Py_ssize_t* sizes = <Py_ssize_t*>malloc((n_query + 1) * sizeof(Py_ssize_t))
    cdef int** cols = <int**>malloc((n_query + 1) * sizeof(int*))
    cdef long long* hits = <long long*>malloc((n_query + 1) * sizeof(long long))
    cdef unsigned char* ok = <unsigned char*>malloc(n_rows + 1)
    cdef int* row_of = <int*>malloc((n_rows + 1) * sizeof(int))
    cdef int* freq = <int*>malloc(((n_rows + 1) * n_query + 1) * sizeof(int))
    cdef int* matched = <int*>malloc((n_rows + 1) * sizeof(int))
    cdef double* scores = <double*>malloc((n_rows + 1) * sizeof(double))
    cdef double* scratch = <double*>malloc((n_rows + 1) * sizeof(double))
    cdef double* idf = <double*>malloc((n_query + 1) * sizeof(double))
    cdef PyObject** keys = <PyObject**>malloc((n_rows + 1) * sizeof(PyObject*))
    cdef Py_ssize_t* positions = <Py_ssize_t*>malloc(2 * (n_rows + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t* order
    keep_alive = []
    try:
        if (lists == NULL or sizes == NULL or cols == NULL or hits == NULL or ok == NULL
                or row_of == NULL or freq == NULL or matched == NULL or scores == NULL
                or scratch == NULL or idf == NULL or keys == NULL or positions == NULL):
            raise MemoryError()
        q = 0
        for j in range(n_query):
            hits[j] = 0
            cols[j] = NULL
            lists[j] = NULL
            sizes[j] = 0
            item = postings[j]
            if item is None:
                listed = phrases[q]
                if listed.shape[0] < n_rows:
                    raise ValueError("bm25_top: a phrase column is shorter than the rows")
                keep_alive.append(listed)
                cols[j] = <int*>&listed[0]
                q += 1
            else:
                listed = item
                if listed.shape[0] % 3:
                    raise ValueError("bm25_top: postings hold (row, version, count) triples")
                keep_alive.append(listed)
                sizes[j] = listed.shape[0]
                if sizes[j]:
                    lists[j] = &listed[0]
        with nogil:
            for i in range(n_rows):
                row_of[i] = -1
                ok[i] = 0
                if not live[i]:
                    continue
                s = scopes[i]
                if s < 0 or s >= n_scopes or not allowed_scopes[s]:
                    continue
                if check_kinds:
                    s = kinds[i]
                    if s < 0 or s >= n_kinds or not kind_ok[s]:
                        continue
                ok[i] = 1
                n += 1
                total += lengths[i]
            # each matched row gets the next slot of ``freq`` (zeroed then), in the order the
            # rows are met
            for j in range(n_query):
                if cols[j] != NULL:
                    for i in range(n_rows):
                        f = cols[j][i]
                        if not f or not ok[i]:
                            continue
                        r = row_of[i]
                        if r < 0:
                            r = row_of[i] = <int>n_matched
                            matched[n_matched] = <int>i
                            n_matched += 1
                            for q in range(n_query):
                                freq[r * n_query + q] = 0
                        freq[r * n_query + j] = f
                        hits[j] += 1
                    continue
                entries = lists[j]
                size = sizes[j]
                for e in range(0, size, 3):
                    i = entries[e]
                    if i < 0 or i >= n_rows or not ok[i] or entries[e + 1] != versions[i]:
                        continue  # a stale entry, or a row the query does not search
                    r = row_of[i]
                    if r < 0:
                        r = row_of[i] = <int>n_matched
                        matched[n_matched] = <int>i
                        n_matched += 1
                        for q in range(n_query):
                            freq[r * n_query + q] = 0
                    elif freq[r * n_query + j]:
                        continue
                    freq[r * n_query + j] = entries[e + 2]
                    hits[j] += 1
        if n == 0:
            return [], []
        avgdl = (<double>total) / n
        if avgdl == 0.0:
            avgdl = 1.0
        for j in range(n_query):
            value = log((n - hits[j] + 0.5) / (hits[j] + 0.5))
            idf[j] = value if value > 0.0 else 1e-6
        with nogil:
            for q in range(n_matched):
                i = matched[q]
                norm = k1 * (1 - b + b * lengths[i] / avgdl)
                score = 0.0
                for j in range(n_query):
                    f = freq[q * n_query + j]
                    if f:
                        score += idf[j] * (f * (k1 + 1.0)) / (f + norm)
                scores[q] = score
        if limit <= 0:
            return [], []
        if n_matched > limit:  # keep the rows that reach the limit-th best score
            for q in range(n_matched):
                scratch[q] = scores[q]
            floor = _select(scratch, n_matched, limit - 1)
            size = 0
            for q in range(n_matched):
                if scores[q] >= floor:
                    matched[size] = matched[q]
                    scores[size] = scores[q]
                    size += 1
            n_matched = size
        for q in range(n_matched):
            key = <object>id_items[matched[q]]
            if not PyUnicode_CheckExact(key):
                raise TypeError("bm25_top: the id of a matched row must be a str")
            keys[q] = id_items[matched[q]]
        order = _merge_order(scores, keys, n_matched, positions, positions + n_matched)
        size = min(n_matched, limit)
        out_rows = PyList_New(size)
        out_scores = PyList_New(size)
        for q in range(size):
            row_obj = matched[order[q]]
            Py_INCREF(row_obj)
            PyList_SET_ITEM(out_rows, q, row_obj)
            value_obj = PyFloat_FromDouble(scores[order[q]])
            Py_INCREF(value_obj)
            PyList_SET_ITEM(out_scores, q, value_obj)
        return out_rows, out_scores
    finally:
        free(keys)
        free(positions)
        free(lists)
        free(sizes)
        free(cols)
        free(hits)
        free(ok)
        free(row_of)
        free(freq)
        free(matched)
        free(scores)
        free(scratch)
        free(idf)


def having_all(
    const long long[::1] starts,
    const long long[::1] ends,
    const int[::1] terms,
    const unsigned char[::1] live,
    ids,
):
    cdef Py_ssize_t n_rows = live.shape[0], n_ids = len(ids), i, j, p, hi
    cdef int* wanted = <int*>malloc((n_ids + 1) * sizeof(int))
    if wanted == NULL:
        raise MemoryError()
    out = []
    try:
        for j in range(n_ids):
            wanted[j] = ids[j]
        for i in range(n_rows):
            if not live[i]:
                continue
            for j in range(n_ids):
                p = starts[i]
                hi = ends[i]
                while p < hi and terms[p] < wanted[j]:
                    p += 1
                if p >= hi or terms[p] != wanted[j]:
                    break
            else:
                out.append(i)
        return out
    finally:
        free(wanted)


def term_marks(
    const long long[::1] starts,
    const long long[::1] ends,
    const int[::1] terms,
    const unsigned char[::1] marks,
    rows,
    query,
):
    cdef Py_ssize_t n_query = len(query), j, p, hi
    cdef int t, s, top = -1
    cdef long long i
    cdef unsigned long long text_bits
    for t in query:
        if t > top:
            top = t
    cdef int* position = <int*>malloc((top + 2) * sizeof(int))
    if position == NULL:
        raise MemoryError()
    texts = []
    try:
        for t in range(top + 1):
            position[t] = -1
        for j in range(n_query):
            t = query[j]
            if t >= 0 and j < 64:
                position[t] = <int>j
        for i in rows:
            text_bits = 0
            hi = ends[i]
            for p in range(starts[i], hi):
                t = terms[p]
                if t > top:
                    break
                s = position[t]
                if s >= 0 and marks[p]:
                    text_bits |= (<unsigned long long>1) << s
            texts.append(text_bits)
        return texts
    finally:
        free(position)


def postings(
    const long long[::1] starts,
    const long long[::1] ends,
    const int[::1] terms,
    const int[::1] tfs,
    const int[::1] versions,
    Py_ssize_t n_terms,
):
    cdef Py_ssize_t n_rows = starts.shape[0], i, p, t
    cdef array listed
    cdef int* fill
    if ends.shape[0] != n_rows or versions.shape[0] < n_rows:
        raise ValueError("postings: one start, end and version per row")
    for i in range(n_rows):
        if starts[i] < 0 or ends[i] > terms.shape[0] or ends[i] > tfs.shape[0]:
            raise ValueError("postings: a row's terms lie outside the arrays")
        for p in range(starts[i], ends[i]):
            if terms[p] < 0 or terms[p] >= n_terms:
                raise ValueError("postings: a term id is outside the vocabulary")
    cdef Py_ssize_t* counts = <Py_ssize_t*>calloc(n_terms + 1, sizeof(Py_ssize_t))
    cdef int** heads = <int**>malloc((n_terms + 1) * sizeof(int*))
    if counts == NULL or heads == NULL:
        free(counts)
        free(heads)
        raise MemoryError()
    out = []
    try:
        for i in range(n_rows):
            for p in range(starts[i], ends[i]):
                counts[terms[p]] += 1
        for t in range(n_terms):
            listed = clone(_INTS, 3 * counts[t], False)
            heads[t] = listed.data.as_ints
            out.append(listed)
        for i in range(n_rows):
            for p in range(starts[i], ends[i]):
                fill = heads[terms[p]]
                fill[0] = <int>i
                fill[1] = versions[i]
                fill[2] = tfs[p]
                heads[terms[p]] = fill + 3
        return out
    finally:
        free(counts)
        free(heads)



cdef extern from *:
    """
    #include <math.h>
    /* The correctly rounded sum of xs[0..n) (finite values), as math.fsum computes it:
       Shewchuk's non-overlapping partials, then a sum from the largest partial that stops
       once it is inexact, with the half-even correction across partials. `scratch` holds
       n + 1 doubles. */
    static double swarmmem_fsum(const double* xs, Py_ssize_t n, double* scratch) {
        double* p = scratch;
        Py_ssize_t used = 0, i, j, k;
        double x, y, t, hi, lo = 0.0, yr;
        for (i = 0; i < n; i++) {
            x = xs[i];
            for (j = k = 0; j < used; j++) {
                y = p[j];
                if (fabs(x) < fabs(y)) { t = x; x = y; y = t; }
                hi = x + y;
                yr = hi - x;
                lo = y - yr;
                if (lo != 0.0) p[k++] = lo;
                x = hi;
            }
            used = k;
            if (x != 0.0) p[used++] = x;
        }
        hi = 0.0;
        if (used > 0) {
            hi = p[--used];
            while (used > 0) {
                x = hi;
                y = p[--used];
                hi = x + y;
                yr = hi - x;
                lo = y - yr;
                if (lo != 0.0) break;
            }
            if (used > 0 && ((lo < 0.0 && p[used - 1] < 0.0) || (lo > 0.0 && p[used - 1] > 0.0))) {
                y = lo * 2.0;
                x = hi + y;
                yr = x - hi;
                if (y == yr) hi = x;
            }
        }
        return hi;
    }
    """
    double _fsum "swarmmem_fsum" (const double* xs, Py_ssize_t n, double* scratch) noexcept


cdef extern from *:
    """
    static inline int swarmmem_lowest_bit(unsigned long long m) { return __builtin_ctzll(m); }
    static inline int swarmmem_width(unsigned long long m) { return m ? 64 - __builtin_clzll(m) : 0; }
    """
    int _lowest_bit "swarmmem_lowest_bit" (unsigned long long m) noexcept nogil
    int _width "swarmmem_width" (unsigned long long m) noexcept nogil


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def text_relevance(list candidates, Py_ssize_t text_at, scores, marks, Py_ssize_t n_terms,
                   free_chars, double exponent, double half_share):
    """Per candidate, the stemmed channel's text relevance (see the twin)."""
    cdef Py_ssize_t n = len(candidates), i, j, slot, cap, length, longest = 0, size, width = 0
    if len(scores) != n or len(marks) != n:
        raise ValueError("text_relevance: one score and one mask per candidate")
    if n_terms < 0:
        raise ValueError("text_relevance: n_terms must not be negative")
    if n == 0:
        return []
    if text_at < 0:
        raise IndexError("text_relevance: text position must not be negative")
    cdef double* values = <double*>malloc(n * sizeof(double))
    cdef unsigned long long* masks = <unsigned long long*>malloc(n * sizeof(unsigned long long))
    cdef Py_ssize_t* lengths = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
    cdef Py_ssize_t* groups = NULL  # open addressing: the candidate holding each distinct mask
    cdef double* weights = NULL
    cdef Py_ssize_t* held = NULL
    cdef double* idf = NULL
    cdef double* picked = NULL
    cdef double* scratch = NULL
    cdef unsigned long long m
    cdef long long total_length = 0
    cdef double best, total, limit, cover, share, keep, value
    cdef bint scaled
    cdef PyObject* row
    cdef PyObject* text
    cdef list out
    # the scores and masks as lists or tuples, read through their item arrays
    cdef object fast_scores = PySequence_Fast(scores, "text_relevance: scores is no sequence")
    cdef object fast_marks = PySequence_Fast(marks, "text_relevance: marks is no sequence")
    cdef PyObject** score_items = PySequence_Fast_ITEMS(fast_scores)
    cdef PyObject** mark_items = PySequence_Fast_ITEMS(fast_marks)
    try:
        if values == NULL or masks == NULL or lengths == NULL:
            raise MemoryError()
        for i in range(n):
            try:
                masks[i] = <object>mark_items[i]
            except OverflowError:  # a negative mask, or one wider than 64 terms
                from swarmmem._speedups import _bm25_py
                return _bm25_py.text_relevance(candidates, text_at, scores, marks, n_terms,
                                               free_chars, exponent, half_share)
            row = PyList_GET_ITEM(candidates, i)  # borrowed: the list holds it
            if not PyTuple_Check(<object>row) or PyTuple_GET_SIZE(<object>row) <= text_at:
                raise TypeError("text_relevance: every candidate must be a tuple holding its text")
            text = PyTuple_GET_ITEM(<object>row, text_at)
            if PyUnicode_CheckExact(<object>text):
                length = PyUnicode_GET_LENGTH(<object>text)
            else:
                length = len(<object>text)
            values[i] = <object>score_items[i]
            lengths[i] = length
            total_length += length
            if length > longest:
                longest = length
            if _width(masks[i]) > width:
                width = _width(masks[i])
        if width > n_terms:
            raise ValueError("text_relevance: a mask names a term beyond n_terms")
        cap = 16
        while cap < 2 * n:
            cap *= 2
        groups = <Py_ssize_t*>malloc(cap * sizeof(Py_ssize_t))
        weights = <double*>malloc(n * sizeof(double))
        held = <Py_ssize_t*>calloc(n_terms + 1, sizeof(Py_ssize_t))
        idf = <double*>malloc((n_terms + 1) * sizeof(double))
        picked = <double*>malloc(65 * sizeof(double))
        scratch = <double*>malloc((n_terms + 2) * sizeof(double))
        if (groups == NULL or weights == NULL or held == NULL or idf == NULL or picked == NULL
                or scratch == NULL):
            raise MemoryError()
        # each candidate's terms counted; best BM25
        best = values[0]
        for i in range(n):
            if values[i] > best:
                best = values[i]
            m = masks[i]
            while m:
                held[_lowest_bit(m)] += 1
                m &= m - 1
        if best == 0.0:
            best = 1.0
        for j in range(n_terms):
            size = held[j] if held[j] > 1 else 1
            idf[j] = log(1.0 + (n - size + 0.5) / (size + 0.5))
        total = _fsum(idf, n_terms, scratch)
        # each distinct mask weighed once: its group's first candidate keeps the weight
        for slot in range(cap):
            groups[slot] = -1
        for i in range(n):
            slot = <Py_ssize_t>((masks[i] * 0x9E3779B97F4A7C15ULL) >> 40) & (cap - 1)
            while groups[slot] != -1 and masks[groups[slot]] != masks[i]:
                slot = (slot + 1) & (cap - 1)
            if groups[slot] == -1:
                groups[slot] = i
                size = 0
                m = masks[i]
                while m:
                    picked[size] = idf[_lowest_bit(m)]
                    size += 1
                    m &= m - 1
                weights[i] = _fsum(picked, size, scratch) / total if total != 0.0 else 0.0
            else:
                weights[i] = weights[groups[slot]]
        limit = <double>total_length / n
        if not limit > free_chars:
            limit = free_chars
        scaled = exponent != 0.0 and longest > limit
        share = n / (n + half_share)
        keep = 1.0 - share
        out = PyList_New(n)
        for i in range(n):
            cover = weights[i]
            if scaled and lengths[i] > limit:
                cover = cover * pow(limit / lengths[i], exponent)
            if cover <= 0.0:
                value = 0.0
            else:
                value = sqrt(cover) * (keep + share * (values[i] / best if best > 0 else 0.0))
            item = PyFloat_FromDouble(value)
            Py_INCREF(item)
            PyList_SET_ITEM(out, i, item)
        return out
    finally:
        free(values)
        free(masks)
        free(lengths)
        free(groups)
        free(weights)
        free(held)
        free(idf)
        free(picked)
        free(scratch)

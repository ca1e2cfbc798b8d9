# cython: language_level=3
"""BM25 scan kernel, compiled twin of ``_bm25_py`` (same rows, same floats).

One pass filters the rows and counts document frequencies while it reads each row's sorted
term ids up to the largest query term id, looking each up in a table from term id to query
position; a second pass scores the matched rows, summing in query order; a quickselect finds
the ``limit``-th best score.
"""

from libc.math cimport log
from libc.stdlib cimport free, malloc


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
    const long long[::1] starts,
    const long long[::1] ends,
    const int[::1] terms,
    const int[::1] tfs,
    const int[::1] lengths,
    const unsigned char[::1] live,
    const int[::1] scopes,
    const unsigned char[::1] allowed_scopes,
    const int[::1] kinds,
    allowed_kinds,
    query,
    phrases,
    double k1,
    double b,
    Py_ssize_t limit,
):
    cdef Py_ssize_t n_rows = live.shape[0]
    cdef Py_ssize_t n_query = len(query)
    cdef Py_ssize_t n_phrases = 0
    cdef Py_ssize_t i, j, p, hi, q, n = 0, n_matched = 0
    cdef long long total = 0
    cdef int s, t, top = -1
    cdef bint found
    cdef int* row
    cdef const unsigned char[::1] kind_ok
    cdef bint check_kinds = allowed_kinds is not None
    cdef Py_ssize_t n_scopes = allowed_scopes.shape[0], n_kinds = 0
    cdef const int[::1] column
    cdef double avgdl, norm, score, f, value, floor
    if check_kinds:
        kind_ok = allowed_kinds
        n_kinds = kind_ok.shape[0]
    for t in query:
        if t < 0:
            n_phrases += 1
        elif t > top:
            top = t
    if len(phrases) != n_phrases:
        raise ValueError("bm25_top: one phrase column per phrase entry of the query")
    if n_rows == 0 or n_query == 0:
        return [], []
    cdef int* position = <int*>malloc((top + 2) * sizeof(int))
    cdef int** cols = <int**>malloc((n_query + 1) * sizeof(int*))
    cdef long long* hits = <long long*>malloc((n_query + 1) * sizeof(long long))
    cdef int* freq = <int*>malloc(((n_rows + 1) * n_query + 1) * sizeof(int))
    cdef int* matched = <int*>malloc((n_rows + 1) * sizeof(int))
    cdef double* scores = <double*>malloc((n_rows + 1) * sizeof(double))
    cdef double* scratch = <double*>malloc((n_rows + 1) * sizeof(double))
    cdef double* idf = <double*>malloc((n_query + 1) * sizeof(double))
    keep_alive = []
    try:
        if (position == NULL or cols == NULL or hits == NULL or freq == NULL or matched == NULL
                or scores == NULL or scratch == NULL or idf == NULL):
            raise MemoryError()
        for t in range(top + 1):
            position[t] = -1
        p = 0
        for j in range(n_query):
            t = query[j]
            hits[j] = 0
            cols[j] = NULL
            if t < 0:
                column = phrases[p]
                if column.shape[0] < n_rows:
                    raise ValueError("bm25_top: a phrase column is shorter than the rows")
                keep_alive.append(column)
                cols[j] = <int*>&column[0] if n_rows else NULL
                p += 1
            else:
                position[t] = <int>j
        with nogil:
            # a row's counts go to the next free slot of ``freq``, which only advances when
            # the row matched, so a slot is zeroed once, when it becomes the next one
            row = freq
            for j in range(n_query):
                row[j] = 0
            for i in range(n_rows):
                if not live[i]:
                    continue
                s = scopes[i]
                if s < 0 or s >= n_scopes or not allowed_scopes[s]:
                    continue
                if check_kinds:
                    s = kinds[i]
                    if s < 0 or s >= n_kinds or not kind_ok[s]:
                        continue
                n += 1
                total += lengths[i]
                found = 0
                hi = ends[i]
                for p in range(starts[i], hi):
                    t = terms[p]
                    if t > top:
                        break
                    s = position[t]
                    if s >= 0:
                        row[s] = tfs[p]
                        found = 1
                if n_phrases:
                    for j in range(n_query):
                        if cols[j] != NULL and cols[j][i]:
                            row[j] = cols[j][i]
                            found = 1
                if found:
                    for j in range(n_query):
                        if row[j]:
                            hits[j] += 1
                    matched[n_matched] = <int>i
                    n_matched += 1
                    row = freq + n_matched * n_query
                    for j in range(n_query):
                        row[j] = 0
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
                    if freq[q * n_query + j]:
                        f = freq[q * n_query + j]
                        score += idf[j] * (f * (k1 + 1.0)) / (f + norm)
                scores[q] = score
        if n_matched <= limit:
            return [matched[q] for q in range(n_matched)], [scores[q] for q in range(n_matched)]
        if limit <= 0:
            return [], []
        for q in range(n_matched):
            scratch[q] = scores[q]
        floor = _select(scratch, n_matched, limit - 1)
        out_rows = []
        out_scores = []
        for q in range(n_matched):
            if scores[q] >= floor:
                out_rows.append(matched[q])
                out_scores.append(scores[q])
        return out_rows, out_scores
    finally:
        free(position)
        free(cols)
        free(hits)
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
    cdef unsigned char beyond, mark
    for t in query:
        if t > top:
            top = t
    cdef int* position = <int*>malloc((top + 2) * sizeof(int))
    if position == NULL:
        raise MemoryError()
    texts = []
    beyonds = []
    try:
        for t in range(top + 1):
            position[t] = -1
        for j in range(n_query):
            t = query[j]
            if t >= 0 and j < 64:
                position[t] = <int>j
        for i in rows:
            text_bits = 0
            beyond = 0
            hi = ends[i]
            for p in range(starts[i], hi):
                t = terms[p]
                if t > top:
                    break
                s = position[t]
                if s >= 0:
                    mark = marks[p]
                    if mark & 1:
                        text_bits |= (<unsigned long long>1) << s
                    beyond |= mark & 2
            texts.append(text_bits)
            beyonds.append(beyond != 0)
        return texts, beyonds
    finally:
        free(position)

# cython: language_level=3
"""BM25 scan kernel, compiled twin of ``_bm25_py`` (same rows, same floats).

One pass marks the rows the query searches (live, in an allowed scope and kind) and sums their
lengths; a second reads the postings of each query term (``(row, version, count)`` triples,
stale ones skipped), giving each matched row its counts and each term its document
frequency; a third scores the matched rows, summing in query order; a quickselect finds the
``limit``-th best score. Only the postings of the query's terms are read, not every row's
terms.
"""

from cpython.array cimport array, clone
from libc.math cimport log
from libc.stdlib cimport calloc, free, malloc

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
):
    cdef Py_ssize_t n_rows = live.shape[0]
    cdef Py_ssize_t n_query = len(postings)
    cdef Py_ssize_t n_phrases = 0
    cdef Py_ssize_t i, j, e, q, r, size, n = 0, n_matched = 0
    cdef long long total = 0
    cdef int s, f
    cdef bint every
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
    keep_alive = []
    try:
        if (lists == NULL or sizes == NULL or cols == NULL or hits == NULL or ok == NULL
                or row_of == NULL or freq == NULL or matched == NULL or scores == NULL
                or scratch == NULL or idf == NULL):
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
        every = n_matched <= limit
        if not every:
            if limit <= 0:
                return [], []
            for q in range(n_matched):
                scratch[q] = scores[q]
            floor = _select(scratch, n_matched, limit - 1)
        out_rows = []
        out_scores = []
        for q in range(n_matched):
            if every or scores[q] >= floor:
                out_rows.append(matched[q])
                out_scores.append(scores[q])
        return out_rows, out_scores
    finally:
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

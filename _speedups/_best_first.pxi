# Included by the compiled kernels that rank entries best first (the including module
# cimports PyObject and PyUnicode_Compare).


cdef inline bint _before(const double* scores, PyObject** ids, Py_ssize_t a,
                         Py_ssize_t b) noexcept:
    """True when entry ``a`` ranks strictly before ``b``: a higher score, or the same score
    and a smaller id (every id an exact ``str``, so the comparison cannot fail)."""
    if scores[a] != scores[b]:
        return scores[a] > scores[b]
    return PyUnicode_Compare(<object>ids[a], <object>ids[b]) < 0


cdef Py_ssize_t* _merge_order(const double* scores, PyObject** ids, Py_ssize_t n,
                              Py_ssize_t* order, Py_ssize_t* spare) noexcept:
    """Sort positions ``0..n-1`` best first (see ``_before``), stably, with a bottom-up merge
    sort through two buffers of ``n``; return the buffer that holds the result."""
    cdef Py_ssize_t width = 1, lo, mid, hi, i, j, k
    cdef Py_ssize_t* swap
    for i in range(n):
        order[i] = i
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if _before(scores, ids, order[j], order[i]):
                    spare[k] = order[j]
                    j += 1
                else:
                    spare[k] = order[i]
                    i += 1
                k += 1
            while i < mid:
                spare[k] = order[i]
                i += 1
                k += 1
            while j < hi:
                spare[k] = order[j]
                j += 1
                k += 1
            lo = hi
        swap = order
        order = spare
        spare = swap
        width *= 2
    return order

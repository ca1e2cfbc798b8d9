# cython: language_level=3
"""Lexical overlap kernel, compiled twin of ``_lexical_py`` (same contract, same floats).

Candidate fields are scanned once, character by character, without building token objects:
each token's FNV-1a hash is looked up in a small open-addressing table of the query (and task)
tokens, and a byte comparison confirms the match, so results are exact.
"""

import re

from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp

cdef object _TOKEN = re.compile(r"[a-z0-9_-]+")
WEIGHTS = (0.38, 0.16, 0.12, 0.08, 0.08, 0.12, 0.06, 0.05, 0.08)

cdef uint64_t FNV_OFFSET = 14695981039346656037ULL
cdef uint64_t FNV_PRIME = 1099511628211ULL


def tokenize(text):
    """The set of lexical tokens of ``text``."""
    return frozenset(_TOKEN.findall(text.lower())) if text else frozenset()


cdef class _Table:
    """Distinct tokens with a hash index and per-token 'seen' generations."""
    cdef Py_ssize_t n, cap
    cdef uint64_t* hashes
    cdef Py_ssize_t* slots
    cdef Py_ssize_t* offs
    cdef Py_ssize_t* lens
    cdef long* seen
    cdef char* buf
    cdef object _keep

    def __cinit__(self, tokens):
        cdef list toks = sorted(tokens)
        cdef bytes joined = "".join(toks).encode("ascii")
        cdef Py_ssize_t i, j, pos = 0, slot
        cdef uint64_t h
        self.n = len(toks)
        self.cap = 8
        while self.cap < 2 * self.n + 2:
            self.cap *= 2
        self.hashes = <uint64_t*>malloc(self.cap * sizeof(uint64_t))
        self.slots = <Py_ssize_t*>malloc(self.cap * sizeof(Py_ssize_t))
        self.offs = <Py_ssize_t*>malloc((self.n + 1) * sizeof(Py_ssize_t))
        self.lens = <Py_ssize_t*>malloc((self.n + 1) * sizeof(Py_ssize_t))
        self.seen = <long*>malloc((self.n + 1) * sizeof(long))
        if not self.hashes or not self.slots or not self.offs or not self.lens or not self.seen:
            raise MemoryError()
        self._keep = joined
        self.buf = joined
        for i in range(self.cap):
            self.slots[i] = -1
        for i in range(self.n):
            self.offs[i] = pos
            self.lens[i] = len(toks[i])
            self.seen[i] = -1
            h = FNV_OFFSET
            for j in range(pos, pos + self.lens[i]):
                h = (h ^ <unsigned char>self.buf[j]) * FNV_PRIME
            pos += self.lens[i]
            slot = <Py_ssize_t>(h & <uint64_t>(self.cap - 1))
            while self.slots[slot] != -1:
                slot = (slot + 1) & (self.cap - 1)
            self.slots[slot] = i
            self.hashes[slot] = h

    def __dealloc__(self):
        free(self.hashes)
        free(self.slots)
        free(self.offs)
        free(self.lens)
        free(self.seen)

    cdef inline Py_ssize_t find(self, uint64_t h, const char* tok, Py_ssize_t length) noexcept:
        cdef Py_ssize_t slot = <Py_ssize_t>(h & <uint64_t>(self.cap - 1))
        cdef Py_ssize_t idx
        while True:
            idx = self.slots[slot]
            if idx == -1:
                return -1
            if self.hashes[slot] == h and self.lens[idx] == length and \
                    memcmp(self.buf + self.offs[idx], tok, length) == 0:
                return idx
            slot = (slot + 1) & (self.cap - 1)


cdef struct _Scratch:
    char* buf
    Py_ssize_t cap


cdef int _grow(_Scratch* sc, Py_ssize_t need) except -1:
    cdef char* nb
    if need <= sc.cap:
        return 0
    nb = <char*>realloc(sc.buf, need)
    if nb == NULL:
        raise MemoryError()
    sc.buf = nb
    sc.cap = need
    return 0


cdef inline void _finish(_Table q, _Table t, long gen_q, long gen_t, const char* tok,
                         Py_ssize_t length, uint64_t h, Py_ssize_t* hit_q,
                         Py_ssize_t* hit_t) noexcept:
    cdef Py_ssize_t idx
    if q is not None:
        idx = q.find(h, tok, length)
        if idx >= 0 and q.seen[idx] != gen_q:
            q.seen[idx] = gen_q
            hit_q[0] += 1
    if t is not None:
        idx = t.find(h, tok, length)
        if idx >= 0 and t.seen[idx] != gen_t:
            t.seen[idx] = gen_t
            hit_t[0] += 1


cdef int _scan(str s, _Table q, _Table t, long gen_q, long gen_t, _Scratch* sc,
               Py_ssize_t* hit_q, Py_ssize_t* hit_t, bint* any_tok) except -1:
    """Scan ``s``; count distinct query/task tokens found (generation-marked)."""
    cdef Py_UCS4 ch
    cdef Py_ssize_t length = 0
    cdef uint64_t h = FNV_OFFSET
    cdef unsigned char c
    _grow(sc, len(s) + 2)
    for ch in s:
        if ch < 128:
            c = <unsigned char>ch
            if 65 <= c <= 90:
                c += 32
            if (97 <= c <= 122) or (48 <= c <= 57) or c == 95 or c == 45:
                sc.buf[length] = <char>c
                length += 1
                h = (h ^ c) * FNV_PRIME
                continue
        elif ch == 0x212A:  # KELVIN SIGN lower-cases to 'k'
            sc.buf[length] = b'k'
            length += 1
            h = (h ^ 107) * FNV_PRIME
            continue
        elif ch == 0x130:  # 'İ' lower-cases to 'i' + COMBINING DOT (a separator)
            sc.buf[length] = b'i'
            length += 1
            h = (h ^ 105) * FNV_PRIME
        if length:
            any_tok[0] = True
            _finish(q, t, gen_q, gen_t, sc.buf, length, h, hit_q, hit_t)
            length = 0
            h = FNV_OFFSET
    if length:
        any_tok[0] = True
        _finish(q, t, gen_q, gen_t, sc.buf, length, h, hit_q, hit_t)
    return 0


def score_lexical(str query, task, bint task_as_query, list texts, list tags, list files,
                  list symbols, list kinds, list refs, scope_boost, kind_boost, role_boost,
                  confidence):
    """Per candidate: ``(text, tag, file, symbol, kind_query, task_term, base)``."""
    cdef Py_ssize_t n = len(texts), i, f
    if not (len(tags) == len(files) == len(symbols) == len(kinds) == len(refs) == n
            and len(scope_boost) == len(kind_boost) == len(role_boost) == len(confidence) == n):
        raise ValueError("score_lexical: every candidate column must have the same length")
    task_tokens = tokenize(task) if task is not None else None
    q_tokens = task_tokens if (task_as_query and task_tokens is not None) else tokenize(query)
    cdef _Table qt = _Table(q_tokens)
    cdef _Table tt = _Table(task_tokens) if task_tokens is not None else None
    cdef double nq = qt.n, nt = tt.n if tt is not None else 0
    cdef long gen_q = 0, gen_t = 0
    cdef Py_ssize_t hit_q, hit_t
    cdef bint any_tok
    cdef double sig[6]
    cdef double base
    cdef _Scratch sc
    cdef list out = []
    cdef str field
    cdef tuple fields
    sc.buf = NULL
    sc.cap = 0
    cdef double w0 = 0.38, w1 = 0.16, w2 = 0.12, w3 = 0.08, w4 = 0.08
    cdef double w5 = 0.12, w6 = 0.06, w7 = 0.05, w8 = 0.08
    try:
        for i in range(n):
            hit_t = 0
            gen_t += 1
            fields = (texts[i], tags[i], files[i], symbols[i], kinds[i], refs[i])
            for f in range(6):
                field = fields[f]
                hit_q = 0
                gen_q += 1
                any_tok = False
                _scan(field, qt if f < 5 else None, tt, gen_q, gen_t, &sc, &hit_q, &hit_t,
                      &any_tok)
                if f < 5:
                    sig[f] = (hit_q / nq) if (nq > 0 and any_tok) else 0.0
            sig[5] = (hit_t / nt) if nt > 0 else 0.0
            base = (w0 * sig[0] + w1 * sig[1] + w2 * sig[2] + w3 * sig[3] + w4 * sig[5]
                    + w5 * <double>scope_boost[i] + w6 * <double>kind_boost[i]
                    + w7 * <double>role_boost[i] + w8 * <double>confidence[i])
            out.append((sig[0], sig[1], sig[2], sig[3], sig[4], sig[5], base))
    finally:
        free(sc.buf)
    return out

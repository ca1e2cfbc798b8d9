# cython: language_level=3
# distutils: extra_compile_args = -ffp-contract=off
"""Lexical overlap kernel, compiled twin of ``_lexical_py`` (same contract, same floats).

Candidate fields are scanned once, straight from the string's code units (1, 2 or 4 bytes
wide), without building token objects: ASCII token characters are folded through a 256-entry
table into a scratch buffer while the token's last eight bytes build up in a register. At each
token end that register and the length are hashed; a 1024-bit Bloom filter rejects most tokens
at once, the rest are looked up in a small open-addressing table of the query and task tokens,
and a byte comparison confirms a match, so results are exact. The only non-ASCII characters
that lower-case into token characters are the KELVIN SIGN (``k``) and ``İ`` (``i`` followed by
a combining dot, which separates).

Each row is a ``LexicalRow`` (the twin's named tuple) filled in place: one allocation per row,
as a plain tuple would take.

``-ffp-contract=off`` keeps the compiler from fusing the weighted sum into multiply-adds, so
``base`` rounds exactly as the twin's left-to-right Python sum does.
"""

import re

cimport cython
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_GET_ITEM
from cpython.unicode cimport (
    PyUnicode_1BYTE_KIND,
    PyUnicode_CheckExact,
    PyUnicode_Compare,
    PyUnicode_2BYTE_KIND,
    PyUnicode_DATA,
    PyUnicode_GET_LENGTH,
    PyUnicode_KIND,
)
from libc.math cimport pow
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp

from swarmmem._speedups._lexical_py import LexicalRow, Ranked, RankRules, Scored

cdef extern from *:
    """
    /* A row of `n` floats as an instance of the tuple subclass `type`, allocated once. */
    static PyObject* swarmmem_lexical_row(PyObject* type, const double* values, Py_ssize_t n) {
        PyTypeObject* tp = (PyTypeObject*)type;
        PyObject* row = tp->tp_alloc(tp, n);
        if (row == NULL) return NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject* value = PyFloat_FromDouble(values[i]);
            if (value == NULL) { Py_DECREF(row); return NULL; }
            PyTuple_SET_ITEM(row, i, value);
        }
        return row;
    }

    /* A `Scored` (the tuple subclass `type`): the candidate, its row, base, score, relevance
       (None unless `has_relevance`) and no BM25 position. */
    static PyObject* swarmmem_scored(PyObject* type, PyObject* fields, PyObject* row,
                                     double base, double score, int has_relevance,
                                     double relevance) {
        PyTypeObject* tp = (PyTypeObject*)type;
        PyObject* values[3];
        PyObject* out = tp->tp_alloc(tp, 6);
        if (out == NULL) return NULL;
        values[0] = PyFloat_FromDouble(base);
        values[1] = PyFloat_FromDouble(score);
        if (has_relevance) {
            values[2] = PyFloat_FromDouble(relevance);
        } else {
            Py_INCREF(Py_None);
            values[2] = Py_None;
        }
        if (values[0] == NULL || values[1] == NULL || values[2] == NULL) {
            Py_XDECREF(values[0]);
            Py_XDECREF(values[1]);
            Py_XDECREF(values[2]);
            Py_DECREF(out);
            return NULL;
        }
        Py_INCREF(fields);
        PyTuple_SET_ITEM(out, 0, fields);
        Py_INCREF(row);
        PyTuple_SET_ITEM(out, 1, row);
        PyTuple_SET_ITEM(out, 2, values[0]);
        PyTuple_SET_ITEM(out, 3, values[1]);
        PyTuple_SET_ITEM(out, 4, values[2]);
        Py_INCREF(Py_None);
        PyTuple_SET_ITEM(out, 5, Py_None);
        return out;
    }
    """
    object _new_row "swarmmem_lexical_row" (type row_type, const double* values, Py_ssize_t n)
    object _new_scored "swarmmem_scored" (type scored_type, object fields, object row,
                                          double base, double score, int has_relevance,
                                          double relevance)

cdef type _ROW = LexicalRow
if not issubclass(_ROW, tuple) or len(_ROW._fields) != 7:
    raise ImportError("_lexical_c: LexicalRow must be a tuple of seven fields")
cdef type _SCORED = Scored
if not issubclass(_SCORED, tuple) or len(_SCORED._fields) != 6:
    raise ImportError("_lexical_c: Scored must be a tuple of six fields")

cdef object _TOKEN = re.compile(r"[a-z0-9_-]+")
WEIGHTS = (0.38, 0.16, 0.12, 0.08, 0.08, 0.12, 0.06, 0.05, 0.08)

ctypedef fused unit_t:  # the code unit of a 1-, 2- or 4-byte kind str
    uint8_t
    uint16_t
    uint32_t

# _FOLD[c] is the lower-cased token byte for an ASCII token character c, else 0.
cdef unsigned char _FOLD[256]


cdef void _init_fold() noexcept:
    cdef int c
    for c in range(256):
        _FOLD[c] = 0
    for c in range(ord("a"), ord("z") + 1):
        _FOLD[c] = c
        _FOLD[c - 32] = c
    for c in range(ord("0"), ord("9") + 1):
        _FOLD[c] = c
    _FOLD[ord("_")] = ord("_")
    _FOLD[ord("-")] = ord("-")


_init_fold()


def tokenize(text):
    """The set of lexical tokens of ``text``."""
    return frozenset(_TOKEN.findall(text.lower())) if text else frozenset()


cdef inline uint64_t _hash(uint64_t tail, Py_ssize_t length) noexcept nogil:
    """Mix a token's last eight bytes and its length into a table hash.

    Tokens that share both collide harmlessly: a match is always confirmed byte by byte.
    """
    cdef uint64_t h = tail * 0x9E3779B97F4A7C15ULL
    h ^= <uint64_t>length * 0x165667B19E3779F9ULL
    h ^= h >> 29
    h *= 0xBF58476D1CE4E5B9ULL
    return h ^ (h >> 32)


cdef enum:
    BLOOM_WORDS = 16  # a 1024-bit prefilter: most field tokens are rejected by one bit test


@cython.final
cdef class _Vocab:
    """The distinct query and task tokens: a hash index, a Bloom prefilter, membership flags
    and per-token 'seen' generations (so each token counts once per field or candidate)."""
    cdef Py_ssize_t n, mask
    cdef uint64_t bloom[BLOOM_WORDS]
    cdef uint64_t* hashes
    cdef Py_ssize_t* slots
    cdef Py_ssize_t* offs
    cdef Py_ssize_t* lens
    cdef unsigned char* in_query
    cdef unsigned char* in_task
    cdef long* seen_q
    cdef long* seen_t
    cdef const char* buf
    cdef bytes _keep

    def __cinit__(self, frozenset query_tokens, frozenset task_tokens):
        cdef list toks = sorted(query_tokens | task_tokens)
        cdef Py_ssize_t i, j, pos = 0, slot, cap = 8, n = len(toks)
        cdef uint64_t tail, h
        self.n = n
        while cap < 2 * n + 2:
            cap *= 2
        self.mask = cap - 1
        self.hashes = <uint64_t*>malloc(cap * sizeof(uint64_t))
        self.slots = <Py_ssize_t*>malloc(cap * sizeof(Py_ssize_t))
        self.offs = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        self.lens = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
        self.in_query = <unsigned char*>malloc(n + 1)
        self.in_task = <unsigned char*>malloc(n + 1)
        self.seen_q = <long*>malloc((n + 1) * sizeof(long))
        self.seen_t = <long*>malloc((n + 1) * sizeof(long))
        if not (self.hashes and self.slots and self.offs and self.lens and self.in_query
                and self.in_task and self.seen_q and self.seen_t):
            raise MemoryError()
        self._keep = "".join(toks).encode("ascii")
        self.buf = self._keep
        for i in range(BLOOM_WORDS):
            self.bloom[i] = 0
        for i in range(cap):
            self.slots[i] = -1
        for i in range(n):
            self.offs[i] = pos
            self.lens[i] = len(toks[i])
            self.in_query[i] = toks[i] in query_tokens
            self.in_task[i] = toks[i] in task_tokens
            self.seen_q[i] = -1
            self.seen_t[i] = -1
            tail = 0
            for j in range(self.lens[i]):  # the same accumulation as in _scan_units
                tail = (tail << 8) | <unsigned char>self.buf[pos + j]
            pos += self.lens[i]
            h = _hash(tail, self.lens[i])
            self.bloom[(h >> 60) & (BLOOM_WORDS - 1)] |= (<uint64_t>1) << ((h >> 54) & 63)
            slot = <Py_ssize_t>(h & <uint64_t>self.mask)
            while self.slots[slot] != -1:
                slot = (slot + 1) & self.mask
            self.slots[slot] = i
            self.hashes[slot] = h

    def __dealloc__(self):
        free(self.hashes)
        free(self.slots)
        free(self.offs)
        free(self.lens)
        free(self.in_query)
        free(self.in_task)
        free(self.seen_q)
        free(self.seen_t)

    cdef inline bint maybe(self, uint64_t h) noexcept:
        """False when the token is certainly not in the vocabulary."""
        return (self.bloom[(h >> 60) & (BLOOM_WORDS - 1)] >> ((h >> 54) & 63)) & 1

    cdef Py_ssize_t find(self, uint64_t h, const char* tok, Py_ssize_t length) noexcept:
        """The index of the token, or -1."""
        cdef Py_ssize_t slot = <Py_ssize_t>(h & <uint64_t>self.mask)
        cdef Py_ssize_t idx
        while True:
            idx = self.slots[slot]
            if idx == -1:
                return -1
            if self.hashes[slot] == h and self.lens[idx] == length and \
                    memcmp(self.buf + self.offs[idx], tok, length) == 0:
                return idx
            slot = (slot + 1) & self.mask


cdef struct _Scan:
    long gen_q  # generation of the current field (query-side counts are per field)
    long gen_t  # generation of the current candidate (the task term spans all its fields)
    bint count_q  # False for the ref field, which feeds only the task term
    Py_ssize_t hit_q  # distinct query tokens found in the current field
    Py_ssize_t hit_t  # distinct task tokens found in the current candidate
    char* buf  # the folded token being scanned (capacity >= field length)
    Py_ssize_t cap


cdef int _reserve(_Scan* sc, Py_ssize_t need) except -1:
    cdef char* grown
    if need <= sc.cap:
        return 0
    grown = <char*>realloc(sc.buf, need)
    if grown == NULL:
        raise MemoryError()
    sc.buf = grown
    sc.cap = need
    return 0


cdef inline void _token(_Vocab v, _Scan* sc, Py_ssize_t length, uint64_t tail) noexcept:
    cdef uint64_t h = _hash(tail, length)
    if v.maybe(h):
        _count(v, sc, h, length)


cdef void _count(_Vocab v, _Scan* sc, uint64_t h, Py_ssize_t length) noexcept:
    """Count the token in ``sc.buf`` if it is a query or task token not yet seen."""
    cdef Py_ssize_t idx = v.find(h, sc.buf, length)
    if idx < 0:
        return
    if sc.count_q and v.in_query[idx] and v.seen_q[idx] != sc.gen_q:
        v.seen_q[idx] = sc.gen_q
        sc.hit_q += 1
    if v.in_task[idx] and v.seen_t[idx] != sc.gen_t:
        v.seen_t[idx] = sc.gen_t
        sc.hit_t += 1


cdef void _scan_units(const unit_t* units, Py_ssize_t n, _Vocab v, _Scan* sc) noexcept:
    cdef Py_ssize_t i, length = 0
    cdef uint64_t tail = 0
    cdef Py_UCS4 ch
    cdef unsigned char c
    cdef bint ends
    cdef char* buf = sc.buf
    for i in range(n):
        ch = units[i]
        ends = False
        if ch < 256:
            c = _FOLD[ch]
        elif ch == 0x212A:  # KELVIN SIGN lower-cases to 'k'
            c = b"k"
        elif ch == 0x130:  # 'İ' lower-cases to 'i' + COMBINING DOT ABOVE (a separator)
            c = b"i"
            ends = True
        else:
            c = 0
        if c:
            tail = (tail << 8) | c  # the token's last eight bytes, kept in a register
            buf[length] = <char>c
            length += 1
            if not ends:
                continue
        if length:
            _token(v, sc, length, tail)
            length = 0
            tail = 0
    if length:
        _token(v, sc, length, tail)


cdef int _scan(object field, _Vocab v, _Scan* sc) except -1:
    """Count the distinct query/task tokens of ``field`` not yet seen in this generation."""
    if field is None:
        return 0
    if not isinstance(field, str):
        raise TypeError(f"score_lexical: fields must be str, got {type(field).__name__}")
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(field)
    if n == 0:
        return 0
    _reserve(sc, n)
    cdef int kind = PyUnicode_KIND(field)
    cdef void* data = PyUnicode_DATA(field)
    if kind == PyUnicode_1BYTE_KIND:
        _scan_units(<const uint8_t*>data, n, v, sc)
    elif kind == PyUnicode_2BYTE_KIND:
        _scan_units(<const uint16_t*>data, n, v, sc)
    else:
        _scan_units(<const uint32_t*>data, n, v, sc)
    return 0


cdef double W0 = 0.38, W1 = 0.16, W2 = 0.12, W3 = 0.08, W4 = 0.08
cdef double W5 = 0.12, W6 = 0.06, W7 = 0.05, W8 = 0.08


@cython.final
cdef class _Scorer:
    """The query side of a scoring call and the scan state its rows share."""
    cdef _Vocab vocab
    cdef double nq, nt
    cdef _Scan sc

    def __cinit__(self, str query, task, bint task_as_query):
        cdef frozenset task_tokens = tokenize(task) if task is not None else None
        cdef frozenset q_tokens = (
            task_tokens if (task_as_query and task_tokens is not None) else tokenize(query)
        )
        self.vocab = _Vocab(q_tokens, task_tokens if task_tokens is not None else frozenset())
        self.nq = len(q_tokens)
        self.nt = len(task_tokens) if task_tokens is not None else 0
        self.sc.buf = NULL
        self.sc.cap = 0
        self.sc.gen_q = 0
        self.sc.gen_t = 0

    def __dealloc__(self):
        free(self.sc.buf)

    cdef double overlap(self, object field) except -1:
        """The query-normalised overlap of one field (a new field generation)."""
        self.sc.gen_q += 1
        self.sc.hit_q = 0
        if self.vocab.n:
            _scan(field, self.vocab, &self.sc)
        return self.sc.hit_q / self.nq if self.sc.hit_q else 0.0

    cdef object row(self, object text, object tags, object files, object symbols, object kinds,
                    object ref, double scope, double kind, double role, double confidence):
        """One candidate's ``LexicalRow``."""
        cdef double sig[7]  # the row: five field overlaps, the task term, the base score
        return self.fill(text, tags, files, symbols, kinds, ref, scope, kind, role, confidence,
                         sig)

    cdef object fill(self, object text, object tags, object files, object symbols, object kinds,
                     object ref, double scope, double kind, double role, double confidence,
                     double* sig):
        """One candidate's ``LexicalRow``, its values also left in ``sig``."""
        self.sc.gen_t += 1
        self.sc.hit_t = 0
        self.sc.count_q = True
        sig[0] = self.overlap(text)
        sig[1] = self.overlap(tags)
        sig[2] = self.overlap(files)
        sig[3] = self.overlap(symbols)
        sig[4] = self.overlap(kinds)
        if self.nt:
            self.sc.count_q = False
            _scan(ref, self.vocab, &self.sc)
        sig[5] = self.sc.hit_t / self.nt if self.sc.hit_t else 0.0
        sig[6] = (W0 * sig[0] + W1 * sig[1] + W2 * sig[2] + W3 * sig[3] + W4 * sig[5]
                  + W5 * scope + W6 * kind + W7 * role + W8 * confidence)
        return _new_row(_ROW, sig, 7)


def score_lexical(str query, task, bint task_as_query, list texts, list tags, list files,
                  list symbols, list kinds, list refs, scope_boost, kind_boost, role_boost,
                  confidence):
    """Per candidate, a ``LexicalRow``: ``(text, tag, file, symbol, kind_query, task_term,
    base)``."""
    cdef Py_ssize_t n = len(texts), i
    if not (len(tags) == len(files) == len(symbols) == len(kinds) == len(refs) == n
            and len(scope_boost) == len(kind_boost) == len(role_boost) == len(confidence) == n):
        raise ValueError("score_lexical: every candidate column must have the same length")
    cdef _Scorer scorer = _Scorer(query, task, task_as_query)
    cdef list out = []
    for i in range(n):
        out.append(scorer.row(texts[i], tags[i], files[i], symbols[i], kinds[i], refs[i],
                              scope_boost[i], kind_boost[i], role_boost[i], confidence[i]))
    return out


CANDIDATE_FIELDS = (
    "text", "tags", "files", "symbols", "kind_words", "ref", "specificity", "kind", "confidence"
)


cdef struct _Positions:
    # where each of CANDIDATE_FIELDS sits in a candidate tuple, and the length it needs
    Py_ssize_t text, tags, files, symbols, kinds, ref, scope, kind, conf, need


cdef int _read_positions(tuple fields, _Positions* at, str caller) except -1:
    """Read the first nine of ``fields`` (the positions of ``CANDIDATE_FIELDS``) into ``at``."""
    if min(fields) < 0:
        raise ValueError(f"{caller}: field positions must not be negative")
    at.text, at.tags, at.files, at.symbols, at.kinds, at.ref, at.scope, at.kind, at.conf = (
        fields[:9]
    )
    at.need = max(fields) + 1
    return 0


cdef object _candidate_row(_Scorer scorer, object candidate, const _Positions* at, kinds,
                           role_kinds, double* sig, str caller):
    """One candidate tuple's ``LexicalRow``, its values also left in ``sig``."""
    if not isinstance(candidate, tuple) or len(<tuple>candidate) < at.need:
        raise TypeError(f"{caller}: every candidate must be a tuple holding the fields")
    cdef tuple c = <tuple>candidate
    cdef object kind = c[at.kind]
    cdef double kind_boost = 0.5 if kinds is None else (1.0 if kind in kinds else 0.0)
    cdef double role_boost = 1.0 if role_kinds is not None and kind in role_kinds else 0.0
    return scorer.fill(c[at.text], c[at.tags], c[at.files], c[at.symbols], c[at.kinds],
                       c[at.ref], c[at.scope], kind_boost, role_boost, c[at.conf], sig)


def score_candidates(str query, task, bint task_as_query, list candidates, tuple fields,
                     kinds, role_kinds):
    """``score_lexical`` of candidate tuples read in place (see the twin)."""
    if len(fields) != len(CANDIDATE_FIELDS):
        raise ValueError("score_candidates: fields must give a position per CANDIDATE_FIELDS")
    cdef _Positions at
    _read_positions(fields, &at, "score_candidates")
    cdef _Scorer scorer = _Scorer(query, task, task_as_query)
    cdef list out = []
    cdef double sig[7]
    for candidate in candidates:
        out.append(_candidate_row(scorer, candidate, &at, kinds, role_kinds, sig,
                                  "score_candidates"))
    return out


SCORED_FIELDS = (*CANDIDATE_FIELDS, "id", "q", "updated_ms")


def scored_candidates(str query, task, bint task_as_query, list candidates, tuple fields,
                      kinds, role_kinds, relevance, recency, double recency_weight,
                      double q_weight):
    """Per candidate, its ``Scored`` (see the twin)."""
    if len(fields) != len(SCORED_FIELDS):
        raise ValueError("scored_candidates: fields must give a position per SCORED_FIELDS")
    cdef _Positions at
    _read_positions(fields, &at, "scored_candidates")
    cdef double now_ms = 0.0, half_life = 0.0
    if recency is not None:
        now_ms, half_life = recency
    cdef Py_ssize_t no_signal = 0, below = 0
    return _scored_batch(
        _Scorer(query, task, task_as_query), candidates, &at, fields[9], fields[10],
        fields[11], kinds, role_kinds, relevance, now_ms, half_life, recency_weight,
        q_weight, False, False, 0.0, &no_signal, &below, "scored_candidates",
    )


def freshness(double updated_ms, double now_ms, double half_life_ms):
    """``freshness`` of the twin."""
    return _freshness(updated_ms, now_ms, half_life_ms) if half_life_ms > 0.0 else 0.0


def staleness(double updated_ms, double now_ms, double half_life_ms):
    """``staleness`` of the twin."""
    return _staleness(updated_ms, now_ms, half_life_ms)


cdef inline double _freshness(double updated, double now_ms, double half_life):
    """0.5 ** (age / half_life) (1 for an update at or after ``now_ms``)."""
    cdef double age = now_ms - updated
    return 1.0 if age <= 0.0 else pow(0.5, age / half_life)


cdef inline double _staleness(double updated, double now_ms, double half_life):
    """``1 - _freshness`` (0 without a positive half-life)."""
    if not half_life > 0.0:
        return 0.0
    return 1.0 - _freshness(updated, now_ms, half_life)


cdef list _scored_batch(
    _Scorer scorer, list candidates, const _Positions* at, Py_ssize_t f_id, Py_ssize_t f_q,
    Py_ssize_t f_updated, kinds, role_kinds, relevance, double now_ms,
    double half_life,
    double recency_weight, double q_weight, bint require_signal, bint check_min,
    double min_base, Py_ssize_t* no_signal, Py_ssize_t* below, str caller,
):
    """The ``Scored`` of ``candidates`` best first, less those the signal rule
    (``require_signal``) and the base-score rule (``check_min``) drop (counted)."""
    cdef dict rel_map = None
    if relevance is not None:
        rel_map = relevance if type(relevance) is dict else dict(relevance)
    cdef list out = []
    cdef tuple c
    cdef object row, key, found, updated
    cdef double value = 0.0, stale, base, score
    cdef double sig[7]
    cdef Py_ssize_t k = 0
    cdef double* scores = <double*>malloc((len(candidates) + 1) * sizeof(double))
    if scores == NULL:
        raise MemoryError()
    try:
        for candidate in candidates:
            row = _candidate_row(scorer, candidate, at, kinds, role_kinds, sig, caller)
            c = <tuple>candidate
            if rel_map is None:
                base = sig[6]
            else:
                key = c[f_id]
                found = rel_map.get(key)
                value = 0.0 if found is None else <double>found
                updated = c[f_updated]
                stale = 0.0 if updated is None else _staleness(<double>updated, now_ms, half_life)
                base = sig[6] + (W0 * (value - sig[0]) - recency_weight * stale * value)
            score = base + (<double>c[f_q] - 0.5) * q_weight
            if require_signal and not (rel_map is not None and value != 0.0) and not (
                sig[0] > 0.0 or sig[1] > 0.0 or sig[2] > 0.0 or sig[3] > 0.0 or sig[4] > 0.0
            ):
                no_signal[0] += 1
                continue
            if check_min and not base >= min_base:
                below[0] += 1
                continue
            out.append(_new_scored(_SCORED, c, row, base, score, rel_map is not None, value))
            scores[k] = score
            k += 1
        return _best_first(out, scores, f_id)
    finally:
        free(scores)


RANKED_FIELDS = (*SCORED_FIELDS, "expires_ms", "inactive", "scope_key")


def ranked_candidates(str query, task, bint task_as_query, list candidates, tuple fields,
                      kinds, role_kinds, relevance, double recency_weight,
                      double q_weight, rules):
    """One ranking of a batch: filters, scores, signal and base-score rules (see the twin)."""
    if len(fields) != len(RANKED_FIELDS):
        raise ValueError("ranked_candidates: fields must give a position per RANKED_FIELDS")
    if len(rules) != 8:
        raise ValueError("ranked_candidates: rules must hold every field of RankRules")
    cdef _Positions at
    _read_positions(fields, &at, "ranked_candidates")
    (scope_keys, now_obj, check_expiry_obj, check_q_obj, threshold_obj, signal_obj, min_obj,
     half_life_obj) = rules
    cdef double now_ms = now_obj, threshold = threshold_obj, min_base = 0.0
    cdef double half_life = half_life_obj
    cdef bint check_expiry = check_expiry_obj, check_q = check_q_obj
    cdef bint require_signal = signal_obj, check_min = min_obj is not None
    if check_min:
        min_base = min_obj
    cdef Py_ssize_t f_q = fields[10], f_updated = fields[11]
    cdef Py_ssize_t f_expires = fields[12], f_inactive = fields[13], f_scope = fields[14]
    cdef list eligible = [], held = []
    cdef Py_ssize_t dropped = 0, no_signal = 0, below = 0
    cdef bint timed = relevance is not None and half_life > 0.0
    cdef tuple c
    cdef object expires
    for candidate in candidates:
        if not isinstance(candidate, tuple) or len(<tuple>candidate) < at.need:
            raise TypeError("ranked_candidates: every candidate must be a tuple holding the fields")
        c = <tuple>candidate
        expires = c[f_expires]
        if (
            (check_expiry and expires is not None and <double>expires <= now_ms)
            or c[f_inactive]
            or c[f_scope] not in scope_keys
            or (kinds is not None and c[at.kind] not in kinds)
        ):
            dropped += 1
            continue
        if check_q and <double>c[f_q] < threshold:
            held.append(c)
            continue
        eligible.append(c)
    recency = (now_obj, half_life_obj) if timed else None
    kept = _scored_batch(
        _Scorer(query, task, task_as_query), eligible, &at, fields[9], f_q, f_updated, kinds,
        role_kinds, relevance, now_ms, half_life if timed else 0.0, recency_weight, q_weight,
        require_signal, check_min, min_base, &no_signal, &below,
        "ranked_candidates",
    )
    return Ranked(kept, held, dropped, no_signal, below, recency)


include "_best_first.pxi"


cdef list _best_first(list scored, const double* scores, Py_ssize_t f_id):
    """``scored`` by score, highest first, ties by id (a stable merge sort of positions)."""
    cdef Py_ssize_t n = len(scored), i
    cdef Py_ssize_t* buffers = <Py_ssize_t*>malloc((2 * n + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t* order
    cdef PyObject** ids = <PyObject**>malloc((n + 1) * sizeof(PyObject*))
    cdef object item
    cdef list out
    try:
        if buffers == NULL or ids == NULL:
            raise MemoryError()
        for i in range(n):
            # borrowed: each id is held by its candidate tuple, held by ``scored``
            ids[i] = PyTuple_GET_ITEM(<object>PyTuple_GET_ITEM(scored[i], 0), f_id)
            if not PyUnicode_CheckExact(<object>ids[i]):
                raise TypeError("scored_candidates: candidate ids must be str")
        order = _merge_order(scores, ids, n, buffers, buffers + n)
        out = PyList_New(n)
        for i in range(n):
            item = scored[order[i]]
            Py_INCREF(item)
            PyList_SET_ITEM(out, i, item)
        return out
    finally:
        free(buffers)
        free(ids)


/* Launch detection's bracket pass in C: `launches._structure_python` (musify/frontend/launches.py)
 * is the reference, and tests/test_claunch_equivalence.py proves both give the same structure on
 * generated inputs. A module of its own (not part of `_cscan`) so that either builds without the
 * other; launches.py falls back to the Python pass when this one was not built.
 *
 * structure(text, spans) -> (closer, semicolon, config_end): one pass over the tokens
 * `<<<`, `>>>`, brackets and `;` of `text` that start in code (not inside one of `spans`, the
 * scanner's (start, end, ...) comment and literal spans in order). */
/* Split by responsibility: _claunch_structure.c (structure, launches), _claunch_kernel.c
 * (kernel_start, count_kernels), _claunch_defs.c (definitions, qualifier_spans, pairs), with
 * _claunch_shape.c, _claunch_literals.c and _claunch_warp.c; this file keeps the helpers they share
 * (declared in _claunch.h) and the method table. */
#include "_claunch.h"

int grow(void **buf, Py_ssize_t *cap, Py_ssize_t need, size_t size) {
    if (need <= *cap) return 0;
    Py_ssize_t n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    void *p = PyMem_Realloc(*buf, (size_t)n * size);
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    *buf = p;
    *cap = n;
    return 0;
}

/* the spans' starts and ends as two arrays (each item a sequence whose first two are ints); on
 * failure both are freed and NULL, so that no caller's error path can leak them */
Py_ssize_t read_spans(PyObject *spans, Py_ssize_t **starts, Py_ssize_t **ends) {
    PyObject *seq = PySequence_Fast(spans, "structure: spans must be a sequence");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    *starts = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Py_ssize_t));
    *ends = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Py_ssize_t));
    if (!*starts || !*ends) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, k);
        PyObject *s, *e;
        if (PyTuple_Check(item) && PyTuple_GET_SIZE(item) >= 2) {
            s = Py_NewRef(PyTuple_GET_ITEM(item, 0));
            e = Py_NewRef(PyTuple_GET_ITEM(item, 1));
        } else {
            s = PySequence_GetItem(item, 0);
            e = s ? PySequence_GetItem(item, 1) : NULL;
        }
        (*starts)[k] = s ? PyLong_AsSsize_t(s) : -1;
        (*ends)[k] = e ? PyLong_AsSsize_t(e) : -1;
        Py_XDECREF(s);
        Py_XDECREF(e);
        if (PyErr_Occurred()) goto fail;
    }
    Py_DECREF(seq);
    return n;
fail:
    Py_DECREF(seq);
    PyMem_Free(*starts);
    PyMem_Free(*ends);
    *starts = *ends = NULL;
    return -1;
}

/* appends the tuple (a, b, c, d, e) to the list `out`; -1 on failure */
int append_row5(PyObject *out, Py_ssize_t a, Py_ssize_t b, Py_ssize_t c, Py_ssize_t d, Py_ssize_t e) {
    PyObject *row = Py_BuildValue("(nnnnn)", a, b, c, d, e);
    int r = row ? PyList_Append(out, row) : -1;
    Py_XDECREF(row);
    return r;
}

/* the span holding `pos`, or -1 (spans sorted and disjoint) */
Py_ssize_t span_at(const Py_ssize_t *starts, const Py_ssize_t *ends, Py_ssize_t nspans, Py_ssize_t pos) {
    Py_ssize_t lo = 0, hi = nspans;  /* bisect_right(starts, pos) */
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (starts[mid] <= pos) lo = mid + 1;
        else hi = mid;
    }
    return (lo > 0 && pos < ends[lo - 1]) ? lo - 1 : -1;
}

static PyMethodDef methods[] = {
    {"structure", claunch_structure, METH_VARARGS,
     "structure(text, spans) -> (closer, semicolon, config_end): launches._structure_python in C"},
    {"launches", claunch_launches, METH_VARARGS,
     "launches(text, spans) -> [(kernel start, '<<<', '>>>', '(', ')')]: launches.launch_spans_python in C"},
    {"structure_counts", claunch_structure_counts, METH_VARARGS,
     "structure_counts(text, spans, word, not_names, reserved) -> (kernels, launches): count_kernels, and\n"
     "launches' rows or, when launch_shape reads every one, their number; launches.structure_counts_python in C"},
    {"definitions", claunch_definitions, METH_VARARGS,
     "definitions(text, spans, candidates[, kernel_words]) -> [(start, end, paren, brace, close)], or with\n"
     "kernel_words the function list's flat rows (start, body, end, name start, name end, is-kernel);\n"
     "candidates: the qualifiers' spans, or a tuple of the qualifier words in the pattern's order"},
    {"qualifier_spans", claunch_qualifier_spans, METH_VARARGS,
     "qualifier_spans(text, words) -> [(start, end)]: the qualifier candidates definitions finds for a tuple of\n"
     "words (hazards/common.py's pattern search and filter in C)"},
    {"count_kernels", claunch_count_kernels, METH_VARARGS,
     "count_kernels(text, spans, word, not_names) -> int: launches.count_kernel_defs in C"},
    {"pairs", claunch_pairs, METH_VARARGS,
     "pairs(text, spans, opener) -> (openers, closers): every code bracket of one kind paired, as\n"
     "native 64-bit integers (closer -1: never closed); CodeMap.closing's answers for the whole text"},
    {"launch_shape", musify_claunch_launch_shape, METH_VARARGS,
     "launch_shape(text, start, end, reserved) -> bool: launch_shape.well_formed_python in C"},
    {"literals_in", musify_claunch_literals_in, METH_VARARGS,
     "literals_in(text, words[, simd]) -> int | None: bit i set when words[i] occurs in text (None: text not one byte\n"
     "a character); literals.holds for every registered word in one pass"},
    {"warp_marks", musify_claunch_warp_marks, METH_VARARGS,
     "warp_marks(text, start, end) -> int: 1 when the warp-size triggers match in text[start:end], else 2 when a\n"
     "standalone 16 does, else 0; warp_precheck.marks_python in C"},
    {"warp_loops", musify_claunch_warp_loops, METH_VARARGS,
     "warp_loops(text, start, end) -> [offset]: the `for` loops of text[start:end] whose parentheses may hold a 16 or 32"},
    {"warp_bodies", musify_claunch_warp_bodies, METH_VARARGS,
     "warp_bodies(text, rows, shuffles, results) -> [k]: the device functions (rows: their array, six integers a\n"
     "function) whose body the warp-size pass looks at; warp_precheck.bodies_python in C"},
    {"warp_literals", musify_claunch_warp_literals, METH_VARARGS,
     "warp_literals(text, low, high, spellings, values) -> [(start, end, value)] | None: the integer literals\n"
     "warp_tree.literal_tokens_python finds, on ASCII text (None: other text); in order"},
    {"kernel_start", claunch_kernel_start, METH_VARARGS,
     "kernel_start(text, lt) -> int: launches._kernel_start in C"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_claunch", "Launch detection's bracket pass in C.", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__claunch(void) { return PyModule_Create(&module); }

/* The scanner's hot path in C: the same two passes as musify/frontend/scanner.py (`_lex` and
 * `_label_identifiers`), character for character, returning the same Python objects.
 *
 * Why C: the pure-Python scanner spends its time in per-token interpreter work (a regex call per
 * comment, literal and directive, a loop iteration per candidate identifier). Here each
 * character of the file is looked at a bounded number of times in a plain loop; in an all-ASCII
 * text (nearly every source file) the candidate identifiers are found 16 or 32 bytes at a time
 * with the CPU's vector instructions (`label_ascii`), the code between them costing next to nothing.
 *
 * The semantics are those of the Python code, including its regular expressions' Unicode rules
 * (`\w` is Py_UNICODE_ISALNUM or '_', `\s` is Py_UNICODE_ISSPACE); a property test
 * (tests/test_cscan_equivalence.py) checks both give identical scans on generated inputs.
 * It knows no CUDA name: the candidate prefixes are an argument.
 *
 * Built by setup.py as an optional extension: without a compiler the Python path runs.
 */
#include "_cscan.h"

/* Types and constants bound once from Python (`bind`). */
static PyObject *IdentType, *IncludeType, *DirectiveType, *ProblemType;
static PyObject *CTX[8];
static PyObject *S_COMMENT, *S_STRING_LIT, *S_CHAR_LIT, *S_RAW_LIT, *S_EMPTY;

enum { C_CODE, C_COMMENT, C_STRING, C_CHAR, C_INCLUDE, C_DIRECTIVE, C_MACRO, C_MACRO_NAME };
enum { K_OTHER, K_INCLUDE, K_DEFINE, K_NAMED, K_MESSAGE };

/* the two passes, inlined per string kind by `scan_kind` below */
#include "_cscan_lex.h"
#include "_cscan_label.h"

static ALWAYS_INLINE int scan_kind(const Text *src, int kind, const Prefixes *p, Out *o) {
    Text t = *src;
    t.kind = kind;
    return lex(&t, o) == 0 && label_identifiers(&t, p, o) == 0 ? 0 : -1;
}

static int scan_text(const Text *t, const Prefixes *p, Out *o) {
    switch (t->kind) {
    case PyUnicode_1BYTE_KIND: return scan_kind(t, PyUnicode_1BYTE_KIND, p, o);
    case PyUnicode_2BYTE_KIND: return scan_kind(t, PyUnicode_2BYTE_KIND, p, o);
    default: return scan_kind(t, PyUnicode_4BYTE_KIND, p, o);
    }
}

/* scan(text, prefixes) -> (ident rows, row item size, names, includes, directives, spans,
 * problems, the rows' contexts as bits, header tests), or None when the prefixes are not plain
 * ASCII words (the Python scanner handles those). The ident rows are the bytes of an
 * `IdentList`'s array (4 or 8 bytes a value); bit c of the contexts is set when some row's
 * context is c; header tests: how many `#if`/`#elif` lines hold the word include. */
static PyObject *cscan_scan(PyObject *Py_UNUSED(self), PyObject *const *args, Py_ssize_t nargs) {
    /* (METH_FASTCALL, its arguments checked here: a call per file, argument parsing was a tenth
     * of a small file's scan) */
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "scan() takes exactly 2 arguments (%zd given)", nargs);
        return NULL;
    }
    PyObject *text = args[0], *prefixes = args[1];
    if (!PyUnicode_Check(text) || !PyTuple_Check(prefixes)) {
        PyErr_SetString(PyExc_TypeError, "scan: expected (str, tuple)");
        return NULL;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) return NULL;
#endif
    if (!IdentType) {
        PyErr_SetString(PyExc_RuntimeError, "_cscan.bind() was not called");
        return NULL;
    }
    /* compiled once per prefixes tuple (a run has one): compiling cleared 50 kB each call, as
     * many instructions as the scan of a small file and the whole first-level data cache */
    static Prefixes p;
    static PyObject *compiled = NULL; /* the tuple `p` was compiled from (a reference kept) */
    if (prefixes != compiled) {
        Py_CLEAR(compiled);
        if (compile_prefixes(prefixes, &p) < 0) Py_RETURN_NONE;
        compiled = Py_NewRef(prefixes);
    }
    Text t = {PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), text};
    Out o = {PyList_New(0), PyList_New(0), PyList_New(0), PyList_New(0), NULL, 0, 0, NULL, 0, 0,
             {NULL, 0, 0, rows_itemsize(t.n)}, PyList_New(0), NULL, 0, 0, 0};
    PyObject *result = NULL;
    if (o.includes && o.directives && o.spans && o.problems && o.names && scan_text(&t, &p, &o) == 0) {
        PyObject *items[9] = {rows_bytes(&o.idents), PyLong_FromLong(o.idents.itemsize), Py_NewRef(o.names),
                              Py_NewRef(o.includes), Py_NewRef(o.directives), Py_NewRef(o.spans),
                              Py_NewRef(o.problems), PyLong_FromUnsignedLong(o.contexts),
                              PyLong_FromSsize_t(o.header_tests)};
        result = make_tuple(NULL, items, 9);
    }
    rows_free(&o.idents);
    Py_XDECREF(o.names);
    if (o.slots != o.small) PyMem_Free(o.slots);
    Py_XDECREF(o.includes);
    Py_XDECREF(o.directives);
    Py_XDECREF(o.spans);
    Py_XDECREF(o.problems);
    PyMem_Free(o.sp);
    PyMem_Free(o.dr);
    return result;
}

/* the best path of `label_ascii` this CPU runs */
static int cpu_simd_level(void) {
#ifdef HEAD_STARTS
    return __builtin_cpu_supports("avx2") ? 2 : __builtin_cpu_supports("ssse3") ? 1 : 0;
#else
    return 0;
#endif
}

/* _simd(level) -> the level before: the path `label_ascii` takes, at most the CPU's best (the
 * tests compare each path with the Python scanner; nothing else calls it) */
static PyObject *cscan_simd(PyObject *Py_UNUSED(self), PyObject *arg) {
    long level = PyLong_AsLong(arg);
    if (level == -1 && PyErr_Occurred()) return NULL;
    int was = simd_level, best = cpu_simd_level();
    simd_level = level < 0 ? 0 : level > best ? best : (int)level;
    return PyLong_FromLong(was);
}

PyObject *musify_cscan_ident_type(void) { return IdentType; }
PyObject *musify_cscan_ctx(Py_ssize_t ctx) { return CTX[ctx]; }

/* bind(Ident, Include, Directive, Problem, ctx_members): the Python types the results are made of */
static PyObject *cscan_bind(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *ident, *include, *dir, *problem, *ctx;
    if (!PyArg_ParseTuple(args, "O!O!O!OO!:bind", &PyType_Type, &ident, &PyType_Type, &include,
                          &PyType_Type, &dir, &problem, &PyTuple_Type, &ctx))
        return NULL;
    if (PyTuple_GET_SIZE(ctx) != 8) {
        PyErr_SetString(PyExc_ValueError, "bind: expected the 8 Ctx members");
        return NULL;
    }
    PyTypeObject *types[3] = {(PyTypeObject *)ident, (PyTypeObject *)include, (PyTypeObject *)dir};
    for (int i = 0; i < 3; i++) {
        if (!PyType_IsSubtype(types[i], &PyTuple_Type)) {
            PyErr_SetString(PyExc_TypeError, "bind: Ident, Include and Directive must be tuple types");
            return NULL;
        }
    }
    Py_XSETREF(IdentType, Py_NewRef(ident));
    Py_XSETREF(IncludeType, Py_NewRef(include));
    Py_XSETREF(DirectiveType, Py_NewRef(dir));
    Py_XSETREF(ProblemType, Py_NewRef(problem));
    for (int i = 0; i < 8; i++) Py_XSETREF(CTX[i], Py_NewRef(PyTuple_GET_ITEM(ctx, i)));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"scan", (PyCFunction)(void (*)(void))cscan_scan, METH_FASTCALL, "scan(text, prefixes) -> (idents, includes, directives, spans, problems, contexts)"},
    {"renames", musify_cscan_renames, METH_VARARGS,
     "renames(ident rows, names, fast, skip, migrated_mask[, text, unknown, decided_mask, declared, declaring_mask"
     "[, first[, qualified]]]) -> (edit rows, item size, fields, rest, uses): the identifier pass's loop; "
     "`qualified` (name -> (unrecognised, ((qualifiers, fields)...))) decides each use of its names by the "
     "qualifiers before it"},
    {"previous_token", musify_cscan_previous_token, METH_VARARGS, "previous_token(text, start) -> (token, start)"},
    {"line_starts", musify_cscan_line_starts, METH_O, "line_starts(text) -> offsets where lines start"},
    {"named_positions", musify_cscan_named_positions, METH_VARARGS,
     "named_positions(text, [(offset, name)...]) -> [(name, line, column)...] or None: LineIndex.named_positions"},
    {"unknown_use", musify_cscan_unknown_use, METH_VARARGS,
     "unknown_use(text, start) -> 0 declared, 1 member, 2 use, 3 undecided: identifiers.unknown_use_python in C"},
    {"walk_ast", musify_cscan_walk_ast, METH_VARARGS,
     "walk_ast(root, ast.AST, leaves) -> the nodes of ast.walk(root) in its order, less the classes in leaves"},
    {"nodes_of", musify_cscan_nodes_of, METH_VARARGS, "nodes_of(nodes, classes) -> the nodes whose type is in classes"},
    {"_simd", cscan_simd, METH_O, "_simd(level) -> the level before: the scanner's vector path (2, 1, 0), for the tests"},
    {"bind", cscan_bind, METH_VARARGS, "bind(Ident, Include, Directive, Problem, ctx_members)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cscan", "The scanner's hot path in C.", -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__cscan(void) {
#ifdef HEAD_STARTS
    simd_level = cpu_simd_level();
    for (int c = 0; c < 128; c++)
        if (ASCII_WORD[c]) WORD_LO[c & 15] |= (unsigned char)(1u << (c >> 4));
#endif
    for (int c = 0; c < 256; c++) LATIN1_WORD[c] = c < 128 ? ASCII_WORD[c] : Py_UNICODE_ISALNUM((Py_UCS4)c) ? 2 : 0;
    S_COMMENT = PyUnicode_InternFromString("comment");
    S_STRING_LIT = PyUnicode_InternFromString("string literal");
    S_CHAR_LIT = PyUnicode_InternFromString("character literal");
    S_RAW_LIT = PyUnicode_InternFromString("raw string literal");
    S_EMPTY = PyUnicode_InternFromString("");
    if (!S_COMMENT || !S_STRING_LIT || !S_CHAR_LIT || !S_RAW_LIT || !S_EMPTY || make_keywords() < 0) return NULL;
    return PyModule_Create(&module);
}

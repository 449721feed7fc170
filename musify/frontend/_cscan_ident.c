/* The identifier pass's helpers in C (musify/passes/identifiers.py has each one in Python too):
 * the plain-rename loop, the "previous token" look-back of the unknown-name checks and the
 * qualifier look-back of qualified names (musify/passes/qualified.py); the line table of
 * `LineIndex` is `_cscan_lines.c`. Part of the `_cscan` extension (`_cscan.c` defines the module). */
#include "_cscan.h"

/* the token ending before `start` (identifiers.previous_token): its span [*ts, *te), none when
 * *ts == *te (only blanks before) */
static void token_before(const Text *t, Py_ssize_t start, Py_ssize_t *ts, Py_ssize_t *te) {
    Py_ssize_t j = start - 1;
    while (j >= 0) {
        Py_UCS4 c = CH(t, j);
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\\') break;
        j--;
    }
    if (j < 0) {
        *ts = *te = 0;
        return;
    }
    *te = j + 1;
    if (ascii_word(CH(t, j))) {
        while (j > 0 && ascii_word(CH(t, j - 1))) j--;
        *ts = j;
    } else if (j >= 1 && ((CH(t, j - 1) == ':' && CH(t, j) == ':') || (CH(t, j - 1) == '-' && CH(t, j) == '>'))) {
        *ts = j - 1;
    } else {
        *ts = j;
    }
}

/* the text and offset of a `name(text, start)` call, `format` being "Un:name" (the name in the
 * messages): 0, or -1 with an error raised (an offset past the text's end: IndexError) */
static int text_and_offset(PyObject *args, const char *format, Text *t, Py_ssize_t *start) {
    PyObject *text;
    if (!PyArg_ParseTuple(args, format, &text, start)) return -1;
    *t = (Text){PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), text};
    if (*start > t->n) {
        PyErr_Format(PyExc_IndexError, "%s: offset past the end of the text", format + 3);
        return -1;
    }
    return 0;
}

/* previous_token(text, start) -> (token, its start): identifiers.previous_token in C */
PyObject *musify_cscan_previous_token(PyObject *Py_UNUSED(self), PyObject *args) {
    Text t;
    Py_ssize_t start;
    if (text_and_offset(args, "Un:previous_token", &t, &start) < 0) return NULL;
    Py_ssize_t ts, te;
    token_before(&t, start, &ts, &te);
    if (te == ts) return Py_BuildValue("(si)", "", 0);
    PyObject *tok = PyUnicode_Substring(t.text, ts, te);
    return tok ? Py_BuildValue("(Nn)", tok, ts) : NULL;
}

static ALWAYS_INLINE int token_is(const Text *t, Py_ssize_t ts, Py_ssize_t te, const char *s) {  /* (strlen of a literal: folded) */
    Py_ssize_t n = (Py_ssize_t)strlen(s);
    if (te - ts != n) return 0;
    for (Py_ssize_t k = 0; k < n; k++)
        if (CH(t, ts + k) != (Py_UCS4)(unsigned char)s[k]) return 0;
    return 1;
}

/* identifiers._USE_KEYWORDS */
static const char *const USE_KEYWORDS[] = {
    "return", "else", "case", "goto", "throw", "new", "delete", "sizeof", "alignof", "co_return", "co_yield",
    "co_await", "typeid", "decltype", "and", "or", "not", "if", "while", "do", "defined", NULL};

/* identifiers._type_word of the token (no keyword is longer than 9 characters) */
static int type_word(const Text *t, Py_ssize_t ts, Py_ssize_t te) {
    if (te <= ts) return 0;
    Py_UCS4 c = CH(t, ts);
    if (!ascii_word(c) || (c >= '0' && c <= '9')) return 0;
    if (te - ts > 9) return 1;
    for (int k = 0; USE_KEYWORDS[k]; k++)
        if ((Py_UCS4)(unsigned char)USE_KEYWORDS[k][0] == c && token_is(t, ts, te, USE_KEYWORDS[k])) return 0;
    return 1;
}

/* what the unknown-name check makes of the name at `start`, from the tokens before it
 * (identifiers.unknown_use_python is the reference): 0 declared here, 1 a member, 2 a use to
 * report, 3 not decided here (after '>', '{' or ','). */
static int unknown_use_at(const Text *t, Py_ssize_t start) {
    Py_ssize_t ts, te;
    token_before(t, start, &ts, &te);
    int declares;
    if (token_is(t, ts, te, "*") || token_is(t, ts, te, "&")) {
        Py_ssize_t us, ue;
        token_before(t, ts, &us, &ue);
        if (token_is(t, us, ue, ">")) return 3;
        declares = type_word(t, us, ue);
    } else if (token_is(t, ts, te, ">")) {
        return 3;
    } else {
        declares = type_word(t, ts, te) || token_is(t, ts, te, "~");
    }
    if (declares) return 0;
    if (token_is(t, ts, te, "{") || token_is(t, ts, te, ",")) return 3;
    return token_is(t, ts, te, ".") || token_is(t, ts, te, "->") ? 1 : 2;
}

/* unknown_use(text, start) -> unknown_use_at's answer */
PyObject *musify_cscan_unknown_use(PyObject *Py_UNUSED(self), PyObject *args) {
    Text t;
    Py_ssize_t start;
    if (text_and_offset(args, "Un:unknown_use", &t, &start) < 0) return NULL;
    return PyLong_FromLong(unknown_use_at(&t, start));
}

/* whether "namespace" stands within the `window` characters before `start` (identifiers.
 * `_namespace_near`): only then can the name follow a nested namespace's head */
static int namespace_near(const Text *t, Py_ssize_t start, Py_ssize_t window) {
    static const char word[] = "namespace";
    const Py_ssize_t len = (Py_ssize_t)sizeof word - 1;
    if (t->kind == PyUnicode_1BYTE_KIND) {  /* found by memchr: the loop below read the whole window */
        Py_ssize_t lo = start - window > 0 ? start - window : 0, hi = start - len + 1;  /* where it may start */
        if (hi <= lo) return 0;
        /* its 'p' (word[5]) looked for, not its 'n': a rarer letter in code, fewer calls and compares */
        const unsigned char *p = (const unsigned char *)t->data + lo + 5, *end = (const unsigned char *)t->data + hi + 5;
        while (p < end && (p = memchr(p, 'p', (size_t)(end - p))) != NULL) {
            if (memcmp(p - 5, word, (size_t)len) == 0) return 1;
            p++;
        }
        return 0;
    }
    for (Py_ssize_t i = start - len; i >= 0 && i >= start - window; i--) {
        Py_ssize_t k = 0;
        while (k < len && CH(t, i + k) == (Py_UCS4)word[k]) k++;
        if (k == len) return 1;
    }
    return 0;
}

/* whether the name at [start, end) follows '{' or ',' and is followed (past blanks) by something
 * other than '=', ',' or '}' (identifiers.`_opens_a_list_item`): then it is no enumerator being
 * declared, and `_unknown` reports it as a use */
static int opens_a_list_item(const Text *t, Py_ssize_t start, Py_ssize_t end) {
    Py_ssize_t ts, te;
    token_before(t, start, &ts, &te);
    if (!token_is(t, ts, te, "{") && !token_is(t, ts, te, ",")) return 0;
    Py_ssize_t j = end;
    while (j < t->n && (CH(t, j) == ' ' || CH(t, j) == '\t' || CH(t, j) == '\r' || CH(t, j) == '\n')) j++;
    return j < t->n && CH(t, j) != '=' && CH(t, j) != ',' && CH(t, j) != '}';
}

/* whether a `)` or `,` follows the name ending at `end`, past blanks and line continuations
 * (macro_pastes.`ends_an_argument`): a call's whole argument, which a macro of the run may paste
 * (musify/passes/macro_pastes.py), is left to the Python pass, which notes where it stands */
static int ends_an_argument(const Text *t, Py_ssize_t end) {
    Py_ssize_t j = end;
    while (j < t->n && (CH(t, j) == ' ' || CH(t, j) == '\t' || CH(t, j) == '\r' || CH(t, j) == '\n' || CH(t, j) == '\\')) j++;
    return j < t->n && (CH(t, j) == ')' || CH(t, j) == ',');
}

/* whether text[from:to) spells the str `s` */
static int spells(const Text *t, Py_ssize_t from, Py_ssize_t to, PyObject *s) {
    if (PyUnicode_GET_LENGTH(s) != to - from) return 0;
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    for (Py_ssize_t k = 0; k < to - from; k++)
        if (CH(t, from + k) != PyUnicode_READ(kind, data, k)) return 0;
    return 1;
}

/* the name of `name ::` just before `pos`, within the 200 characters before it
 * (qualified.qualifier_before, the reference: `str.isspace` is Py_UNICODE_ISSPACE, `str.isalnum`
 * Py_UNICODE_ISALNUM): 1 with its span in [*from, *to), else 0 */
static int qualifier_before(const Text *t, Py_ssize_t pos, Py_ssize_t *from, Py_ssize_t *to) {
    Py_ssize_t low = pos > 200 ? pos - 200 : 0, j = pos;
    while (j > low && Py_UNICODE_ISSPACE(CH(t, j - 1))) j--;
    if (j - 2 < low || CH(t, j - 2) != ':' || CH(t, j - 1) != ':') return 0;
    j -= 2;
    while (j > low && Py_UNICODE_ISSPACE(CH(t, j - 1))) j--;
    Py_ssize_t k = j;
    while (k > low && re_word(CH(t, k - 1))) k--;
    while (k < j && !ident_start(CH(t, k))) k++;  /* the name starts at its first ASCII letter or '_' */
    *from = k, *to = j;
    return k < j;
}

/* what a use at `start` of a name of the qualified-renames table makes, its entry being
 * (unrecognised, ((qualifiers, fields)...)) with the longest qualifiers first
 * (qualified.qualified_use is the reference): the fields of the first entry whose qualifiers
 * precede the name (borrowed), else Py_True for a vendor-looking name (unrecognised), Py_None
 * for any other; NULL with an error raised for an entry of another shape */
static PyObject *qualified_use(const Text *t, Py_ssize_t start, PyObject *entry) {
    if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 2 || !PyTuple_CheckExact(PyTuple_GET_ITEM(entry, 1)))
        goto bad;
    PyObject *entries = PyTuple_GET_ITEM(entry, 1);
    Py_ssize_t ks, ke;
    int found = qualifier_before(t, start, &ks, &ke);
    for (Py_ssize_t i = 0; found && i < PyTuple_GET_SIZE(entries); i++) {
        PyObject *e = PyTuple_GET_ITEM(entries, i), *quals;
        if (!PyTuple_CheckExact(e) || PyTuple_GET_SIZE(e) != 2 || !PyTuple_CheckExact(quals = PyTuple_GET_ITEM(e, 0))
            || PyTuple_GET_SIZE(quals) < 1 || !PyTuple_Check(PyTuple_GET_ITEM(e, 1)))
            goto bad;
        Py_ssize_t nq = PyTuple_GET_SIZE(quals), pos = ks, a = ks, b = ke;
        int ok = 1;
        for (Py_ssize_t q = nq - 1; ok && q >= 0; q--) {  /* each qualifier read back from the one after it */
            PyObject *want = PyTuple_GET_ITEM(quals, q);
            if (!PyUnicode_Check(want)) goto bad;
            if (q < nq - 1 && !qualifier_before(t, pos, &a, &b)) ok = 0;
            else if (!spells(t, a, b, want)) ok = 0;
            else pos = a;
        }
        if (ok) return PyTuple_GET_ITEM(e, 1);
    }
    return PyTuple_GET_ITEM(entry, 0) == Py_True ? Py_True : Py_None;
bad:
    PyErr_SetString(PyExc_TypeError, "renames: a qualified entry must be (flag, ((qualifiers, fields)...))");
    return NULL;
}

/* the index of `f` in the list `fields` (by identity), appended when not there; -1 on error */
static Py_ssize_t field_index(PyObject *fields, PyObject *f) {
    Py_ssize_t n = PyList_GET_SIZE(fields);
    for (Py_ssize_t k = 0; k < n; k++)
        if (PyList_GET_ITEM(fields, k) == f) return k;
    return PyList_Append(fields, f) < 0 ? -1 : n;
}

/* renames()' arguments as the pass passes them (5, 10, 11 or 12 of exactly the types its format
 * names, the masks small ints), read straight from the tuple: 1 when they were, else 0 and
 * PyArg_ParseTuple reads them (and says what is wrong). The format's parsing was an eighth of
 * the call on a file's few identifiers. */
static int renames_args(PyObject *args, PyObject **rows, PyObject **names, PyObject **fast, PyObject **skip,
                        long *mask, PyObject **text, PyObject **unknown, long *decided, PyObject **declared,
                        long *declaring, PyObject **first, PyObject **qualified) {
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n != 5 && n != 10 && n != 11 && n != 12) return 0;
    PyObject *const *a = ((PyTupleObject *)args)->ob_item;
    if (!PyList_CheckExact(a[1]) || !PyDict_CheckExact(a[2]) || !PySet_CheckExact(a[3]) || !PyLong_CheckExact(a[4]))
        return 0;
    if (n >= 10 && (!PyUnicode_CheckExact(a[5]) || !PySet_CheckExact(a[6]) || !PyLong_CheckExact(a[7])
                    || !PySet_CheckExact(a[8]) || !PyLong_CheckExact(a[9])))
        return 0;
    if (n >= 11 && (!PyDict_CheckExact(a[10]) || (n == 12 && !PyDict_CheckExact(a[11])))) return 0;
    long m = PyLong_AsLong(a[4]), dc = n >= 10 ? PyLong_AsLong(a[7]) : 0, dg = n >= 10 ? PyLong_AsLong(a[9]) : 0;
    if ((m == -1 || dc == -1 || dg == -1) && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    *rows = a[0], *names = a[1], *fast = a[2], *skip = a[3], *mask = m;
    if (n >= 10) *text = a[5], *unknown = a[6], *decided = dc, *declared = a[8], *declaring = dg;
    if (n >= 11) *first = a[10];
    if (n == 12) *qualified = a[11];
    return 1;
}

/* renames(ident rows, names, fast, skip, migrated_mask[, text, unknown, decided_mask, declared,
 * declaring_mask[, first[, qualified]]]) -> (edit rows, item size, fields, rest, uses): the identifier pass's hot loop
 * over an `IdentList` (its array and its names). For each identifier whose context bit is in
 * `migrated_mask`: when `fast` (name -> the Edit's fields after its span) has its name, an edit
 * row (start, end, index into `fields`); when `skip` (a set) has it, nothing (the pass would do
 * nothing with it); when `unknown` (a set: names no rule knows that look like a vendor's) has
 * it, what `_unknown` would decide: in a context of `declaring_mask` (a `#define`'s name) the
 * name added to `declared` (a set); in one of `decided_mask`, from the tokens around it, the
 * name added to `declared` for a declaration, nothing for a member, (start, name) in `uses` for
 * a use to report (no "namespace" within 256 characters before it). Everything else goes to
 * `rest` as an `Ident`, in order, for the Python pass (rules with diagnostics, qualified names,
 * template arguments, enumerators). When `first` (a dict, like `fast`: the inferred renames,
 * whose first use in a file also raises a diagnostic) has the name, its first identifier goes to
 * `rest` and every later one is an edit row with those fields. Each distinct name is looked up
 * once. When `qualified` (a dict: the qualified-renames table, `qualified.qualified_renames`)
 * has the name (which `fast`, `first` and `skip` never have), each use is decided by the
 * qualifiers before it: an edit row with the fields of the entry they match; else nothing, or
 * for a vendor-looking name what is done for a name in `unknown`. Identifiers in other contexts
 * are dropped. */
PyObject *musify_cscan_renames(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *rows, *names, *fast, *skip, *text = NULL, *unknown = NULL, *declared = NULL, *first = NULL,
             *qualified = NULL;
    long mask, decided = 0, declaring = 0;
    if (!renames_args(args, &rows, &names, &fast, &skip, &mask, &text, &unknown, &decided, &declared, &declaring,
                      &first, &qualified)
        && !PyArg_ParseTuple(args, "OO!O!O!l|UO!lO!lO!O!:renames", &rows, &PyList_Type, &names, &PyDict_Type, &fast,
                             &PySet_Type, &skip, &mask, &text, &PySet_Type, &unknown, &decided, &PySet_Type, &declared,
                             &declaring, &PyDict_Type, &first, &PyDict_Type, &qualified))
        return NULL;
    if ((unknown || qualified) && (!text || !declared || !unknown)) {
        PyErr_SetString(PyExc_TypeError, "renames: `unknown` needs the text and the declared set");
        return NULL;
    }
    Text t = {0};
    if (text) t = (Text){PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), text};
    Py_buffer view;
    if (PyObject_GetBuffer(rows, &view, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    PyObject *result = NULL, *fields = PyList_New(0), *rest = PyList_New(0), *uses = PyList_New(0);
    Py_ssize_t nnames = PyList_GET_SIZE(names);
    Py_ssize_t *decision = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(nnames ? nnames : 1));
    Rows out = {NULL, 0, 0, (int)view.itemsize};
    if (!decision) PyErr_NoMemory(); /* PyMem_Malloc sets no exception */
    if (!fields || !rest || !uses || !decision) goto done;
    if (view.itemsize != 4 && view.itemsize != 8) {
        PyErr_SetString(PyExc_TypeError, "renames: rows must hold 4- or 8-byte integers");
        goto done;
    }
    enum { UNKNOWN = -1, SKIP = -2, REST = -3, UNRECOGNISED = -4, QUALIFIED = -5 };
    for (Py_ssize_t k = 0; k < nnames; k++) decision[k] = UNKNOWN;
    Py_ssize_t n = view.len / view.itemsize / 4;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t ctx = rows_get(view.buf, out.itemsize, 4 * i + 3);
        if (ctx < 0 || ctx >= 8 || !(mask & (1L << ctx))) continue;
        Py_ssize_t name = rows_get(view.buf, out.itemsize, 4 * i + 2);
        if (name < 0 || name >= nnames) {
            PyErr_SetString(PyExc_IndexError, "renames: a row names no entry of the name table");
            goto done;
        }
        int first_use = 0;  /* this identifier is the first of a name in `first`: to `rest` */
        if (decision[name] == UNKNOWN) {
            PyObject *key = PyList_GET_ITEM(names, name);
            PyObject *f = PyDict_GetItemWithError(fast, key);
            if (!f && !PyErr_Occurred() && first) first_use = (f = PyDict_GetItemWithError(first, key)) != NULL;
            if (f) {
                if (!PyTuple_Check(f)) {
                    PyErr_SetString(PyExc_TypeError, "renames: each fast entry must be a tuple of Edit fields");
                    goto done;
                }
                decision[name] = PyList_GET_SIZE(fields);
                if (PyList_Append(fields, f) < 0) goto done;
            } else if (PyErr_Occurred()) goto done;
            else if (qualified && PyDict_GetItemWithError(qualified, key)) decision[name] = QUALIFIED;
            else if (PyErr_Occurred()) goto done;
            else {
                int skipped = PySet_Contains(skip, key), unrecognised = 0;
                if (skipped < 0) goto done;
                if (!skipped && unknown && (unrecognised = PySet_Contains(unknown, key)) < 0) goto done;
                decision[name] = skipped ? SKIP : unrecognised ? UNRECOGNISED : REST;
            }
        }
        Py_ssize_t d = first_use ? REST : decision[name];
        if (d == QUALIFIED) {  /* decided at each use, by the qualifiers before it */
            Py_ssize_t start = rows_get(view.buf, out.itemsize, 4 * i);
            if (start < 0 || start > t.n) {
                PyErr_SetString(PyExc_IndexError, "renames: an identifier starts past the end of the text");
                goto done;
            }
            PyObject *f = qualified_use(&t, start, PyDict_GetItem(qualified, PyList_GET_ITEM(names, name)));
            if (!f || (f != Py_True && f != Py_None && (d = field_index(fields, f)) < 0)) goto done;
            if (f == Py_None) continue;
            if (f == Py_True) d = UNRECOGNISED;
        }
        if (d == UNRECOGNISED && (declaring & (1L << ctx))) {
            if (PySet_Add(declared, PyList_GET_ITEM(names, name)) < 0) goto done;
            continue;
        }
        if (d == UNRECOGNISED && (decided & (1L << ctx))) {
            Py_ssize_t start = rows_get(view.buf, out.itemsize, 4 * i), end = rows_get(view.buf, out.itemsize, 4 * i + 1);
            if (start < 0 || end < start || end > t.n) {
                PyErr_SetString(PyExc_IndexError, "renames: an identifier ends past the end of the text");
                goto done;
            }
            int use = unknown_use_at(&t, start);
            if (use == 3 && opens_a_list_item(&t, start, end)) use = 2;
            if (use == 0) {  /* declared here */
                if (PySet_Add(declared, PyList_GET_ITEM(names, name)) < 0) goto done;
                continue;
            }
            if (use == 1) continue;  /* a member: nothing to report */
            if (use == 2 && !namespace_near(&t, start, 256) && !ends_an_argument(&t, end)) {
                PyObject *items[2] = {PyLong_FromSsize_t(start), Py_NewRef(PyList_GET_ITEM(names, name))};
                if (append_steal(uses, make_tuple(NULL, items, 2)) < 0) goto done;
                continue;
            }
            d = REST;  /* declared, undecided, or perhaps a nested namespace's name: the Python pass */
        }
        if (d >= 0) {
            Py_ssize_t row[3] = {rows_get(view.buf, out.itemsize, 4 * i), rows_get(view.buf, out.itemsize, 4 * i + 1), d};
            if (rows_push(&out, row, 3) < 0) goto done;
        } else if (d == REST || d == UNRECOGNISED) {
            PyObject *items[4] = {PyLong_FromSsize_t(rows_get(view.buf, out.itemsize, 4 * i)),
                                  PyLong_FromSsize_t(rows_get(view.buf, out.itemsize, 4 * i + 1)),
                                  Py_NewRef(PyList_GET_ITEM(names, name)), Py_NewRef(musify_cscan_ctx(ctx))};
            if (append_steal(rest, make_tuple(musify_cscan_ident_type(), items, 4)) < 0) goto done;
        }
    }
    PyObject *data = rows_bytes(&out);
    PyObject *itemsize = data ? PyLong_FromSsize_t((Py_ssize_t)out.itemsize) : NULL;
    if (itemsize) result = PyTuple_Pack(5, data, itemsize, fields, rest, uses);
    Py_XDECREF(data);
    Py_XDECREF(itemsize);
done:
    PyBuffer_Release(&view);
    PyMem_Free(decision);
    rows_free(&out);
    Py_XDECREF(fields);
    Py_XDECREF(rest);
    Py_XDECREF(uses);
    return result;
}

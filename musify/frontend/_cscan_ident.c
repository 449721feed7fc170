/* The identifier pass's helpers in C (musify/passes/identifiers.py has each one in Python too):
 * the plain-rename loop, the "previous token" look-back of the unknown-name checks, and the line
 * table of `LineIndex`. Part of the `_cscan` extension (`_cscan.c` defines the module). */
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
    if (t->kind == PyUnicode_1BYTE_KIND) {  /* its 'n's found by memchr: the loop below read the whole window */
        Py_ssize_t lo = start - window > 0 ? start - window : 0, hi = start - len + 1;  /* where it may start */
        if (hi <= lo) return 0;
        const unsigned char *p = (const unsigned char *)t->data + lo, *end = (const unsigned char *)t->data + hi;
        while (p < end && (p = memchr(p, 'n', (size_t)(end - p))) != NULL) {
            if (memcmp(p, word, (size_t)len) == 0) return 1;
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

/* renames()' arguments as the pass passes them (5, 10 or 11 of exactly the types its format
 * names, the masks small ints), read straight from the tuple: 1 when they were, else 0 and
 * PyArg_ParseTuple reads them (and says what is wrong). The format's parsing was an eighth of
 * the call on a file's few identifiers. */
static int renames_args(PyObject *args, PyObject **rows, PyObject **names, PyObject **fast, PyObject **skip,
                        long *mask, PyObject **text, PyObject **unknown, long *decided, PyObject **declared,
                        long *declaring, PyObject **first) {
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n != 5 && n != 10 && n != 11) return 0;
    PyObject *const *a = ((PyTupleObject *)args)->ob_item;
    if (!PyList_CheckExact(a[1]) || !PyDict_CheckExact(a[2]) || !PySet_CheckExact(a[3]) || !PyLong_CheckExact(a[4]))
        return 0;
    if (n >= 10 && (!PyUnicode_CheckExact(a[5]) || !PySet_CheckExact(a[6]) || !PyLong_CheckExact(a[7])
                    || !PySet_CheckExact(a[8]) || !PyLong_CheckExact(a[9])))
        return 0;
    if (n == 11 && !PyDict_CheckExact(a[10])) return 0;
    long m = PyLong_AsLong(a[4]), dc = n >= 10 ? PyLong_AsLong(a[7]) : 0, dg = n >= 10 ? PyLong_AsLong(a[9]) : 0;
    if ((m == -1 || dc == -1 || dg == -1) && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    *rows = a[0], *names = a[1], *fast = a[2], *skip = a[3], *mask = m;
    if (n >= 10) *text = a[5], *unknown = a[6], *decided = dc, *declared = a[8], *declaring = dg;
    if (n == 11) *first = a[10];
    return 1;
}

/* renames(ident rows, names, fast, skip, migrated_mask[, text, unknown, decided_mask, declared,
 * declaring_mask]) -> (edit rows, item size, fields, rest, uses): the identifier pass's hot loop
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
 * once. Identifiers in other contexts are dropped. */
PyObject *musify_cscan_renames(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *rows, *names, *fast, *skip, *text = NULL, *unknown = NULL, *declared = NULL, *first = NULL;
    long mask, decided = 0, declaring = 0;
    if (!renames_args(args, &rows, &names, &fast, &skip, &mask, &text, &unknown, &decided, &declared, &declaring,
                      &first)
        && !PyArg_ParseTuple(args, "OO!O!O!l|UO!lO!lO!:renames", &rows, &PyList_Type, &names, &PyDict_Type, &fast,
                             &PySet_Type, &skip, &mask, &text, &PySet_Type, &unknown, &decided, &PySet_Type, &declared,
                             &declaring, &PyDict_Type, &first))
        return NULL;
    if (unknown && (!text || !declared)) {
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
    enum { UNKNOWN = -1, SKIP = -2, REST = -3, UNRECOGNISED = -4 };
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
            else {
                int skipped = PySet_Contains(skip, key), unrecognised = 0;
                if (skipped < 0) goto done;
                if (!skipped && unknown && (unrecognised = PySet_Contains(unknown, key)) < 0) goto done;
                decision[name] = skipped ? SKIP : unrecognised ? UNRECOGNISED : REST;
            }
        }
        Py_ssize_t d = first_use ? REST : decision[name];
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
            if (use == 2 && !namespace_near(&t, start, 256)) {
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

/* line_starts(text) -> [0, offset after each newline...]: LineIndex's table */
PyObject *musify_cscan_line_starts(PyObject *Py_UNUSED(self), PyObject *arg) {
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "line_starts: expected str");
        return NULL;
    }
    int kind = PyUnicode_KIND(arg);
    const void *data = PyUnicode_DATA(arg);
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg), count = 1;
    if (kind == PyUnicode_1BYTE_KIND) {
        const char *c = data, *end = c + n;
        while ((c = memchr(c, '\n', (size_t)(end - c))) != NULL) { count++; c++; }
    } else {
        for (Py_ssize_t i = 0; i < n; i++) count += PyUnicode_READ(kind, data, i) == '\n';
    }
    PyObject *out = PyList_New(count);
    if (!out) return NULL;
    Py_ssize_t k = 0;
    PyObject *zero = PyLong_FromLong(0);
    if (!zero) { Py_DECREF(out); return NULL; }
    PyList_SET_ITEM(out, k++, zero);
    if (kind == PyUnicode_1BYTE_KIND) {
        const char *start = data, *c = start, *end = c + n;
        while (k < count && (c = memchr(c, '\n', (size_t)(end - c))) != NULL) {
            PyObject *v = PyLong_FromSsize_t(++c - start);
            if (!v) { Py_DECREF(out); return NULL; }
            PyList_SET_ITEM(out, k++, v);
        }
        return out;
    }
    for (Py_ssize_t i = 0; i < n && k < count; i++) {
        if (PyUnicode_READ(kind, data, i) != '\n') continue;
        PyObject *v = PyLong_FromSsize_t(i + 1);
        if (!v) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, k++, v);
    }
    return out;
}


/* the newlines in [from, to) of the text */
static Py_ssize_t newlines(const Text *t, Py_ssize_t from, Py_ssize_t to, Py_ssize_t *last) {
    Py_ssize_t count = 0;
    if (t->kind == PyUnicode_1BYTE_KIND) {
        const char *base = t->data, *c = base + from, *end = base + to;
        while (c < end && (c = memchr(c, '\n', (size_t)(end - c))) != NULL) {
            count++;
            *last = c - base;
            c++;
        }
        return count;
    }
    for (Py_ssize_t i = from; i < to; i++)
        if (CH(t, i) == '\n') {
            count++;
            *last = i;
        }
    return count;
}

/* named_positions(text, named) -> [(name, line, column)...] for each (offset, name) of `named`, a
 * list (LineIndex.named_positions, whose bisection over the line starts is the reference): the
 * newlines counted from one offset to the next, so the file's line table is not needed (offsets
 * in order, as the identifier pass hands them; one before the last starts the count again from
 * the top). None, for the caller's Python, for anything else than a 2-tuple of a non-negative int
 * and any object. */
PyObject *musify_cscan_named_positions(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *named;
    if (!PyArg_ParseTuple(args, "UO!:named_positions", &text, &PyList_Type, &named)) return NULL;
    Text t = {PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), text};
    Py_ssize_t n = PyList_GET_SIZE(named);
    PyObject *out = PyList_New(n);
    if (!out) return NULL;
    Py_ssize_t at = 0, line = 1, nl = -1;  /* the text before `at` read: `line` lines, the last newline at `nl` */
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *item = PyList_GET_ITEM(named, k);
        if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 2 || !PyLong_CheckExact(PyTuple_GET_ITEM(item, 0))) {
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
        Py_ssize_t offset = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 0));
        if (offset < 0) {
            Py_DECREF(out);
            if (PyErr_Occurred()) PyErr_Clear();  /* too big for a Py_ssize_t: Python's answer */
            Py_RETURN_NONE;
        }
        Py_ssize_t to = offset < t.n ? offset : t.n;
        if (to < at) {
            at = 0;
            line = 1;
            nl = -1;
        }
        line += newlines(&t, at, to, &nl);
        at = to;
        PyObject *items[3] = {Py_NewRef(PyTuple_GET_ITEM(item, 1)), PyLong_FromSsize_t(line),
                              PyLong_FromSsize_t(offset - nl)};
        PyObject *row = make_tuple(NULL, items, 3);
        if (!row) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, k, row);
    }
    return out;
}

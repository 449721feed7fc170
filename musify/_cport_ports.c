/* The -j1 writer thread's queued ports, written by one call (musify/writers.py `write_queued`;
 * `writers.write_stated` is the reference, and `write_stated_many` what this replaces).
 *
 * put_ports(out_dir, temp, queued, start, made, given) -> (stop, odd)
 *   `queued`: a list of (index, rel, data, source, st) as the writer thread queues them. From
 *   queued[start] on, each port whose folder this run made or has not met (`made`, writers'
 *   `_MADE`: folder -> whether this run made it) and whose mode and owner are known for its
 *   source's stat (`given`, writers' `_GIVEN`, by (st_mode, st_uid, st_gid), None for no stat) is
 *   written as `put_batch` writes it: the folder made first where it is new, the port through
 *   its temporary, all with the interpreter's lock given away once. It stops at the first port
 *   this cannot write as `write_stated` would (no new bytes, a folder that was there before, a
 *   stat whose mode and owner are not known yet, a path that is not plain): `stop` is its index
 *   (len(queued) when none), and the caller writes it through Python. The folders made are
 *   added to `made` as True. `odd`: for each port written here whose answer is not -1, (k,
 *   answer, tmp, dst) with `put_batch`'s answer (an int, or (errno, path) for a failure).
 *
 * Why: with the ports written by `write_stated_many`, the writer thread held the interpreter's
 * lock about 6 us a port (joining the paths, looking up the folder and the mode, building the
 * batch, reading the answers), 25-30 ms of a 10 MB run during which the migrating thread waited;
 * here that is about a microsecond. */
#include "_cport.h"
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    char *folder, *tmp, *dst; /* one malloc'ed block: folder\0tmp\0dst\0 */
    const char *buf;
    Py_ssize_t len;
    int ensure, folder_state, first_mode, mode, answer, err;
    long uid, gid;
    const char *failed;
} Queued;

/* a + b + c as one new C string in *out (NULL on no memory) */
static char *joined3(const char *a, size_t na, const char *b, size_t nb, const char *c, size_t nc) {
    char *s = malloc(na + nb + nc + 1);
    if (!s) return NULL;
    memcpy(s, a, na);
    memcpy(s + na, b, nb);
    memcpy(s + na + nb, c, nc);
    s[na + nb + nc] = '\0';
    return s;
}

/* `rel`'s folder in the tree `out` (writers._place: join_rel(out, head), or `out` itself), as a new
 * C string, with *name pointing at the name in `rel`; NULL (nothing made) where the path is not
 * plain enough to be sure of joining it as `join_rel` does. */
static char *folder_of(const char *out, size_t n_out, const char *rel, size_t n_rel, const char **name) {
    if (n_out == 0 || n_rel == 0 || rel[0] == '/' || strstr(rel, "//") || memchr(rel, '\0', n_rel)) return NULL;
    const char *slash = strrchr(rel, '/');
    if (!slash) {
        *name = rel;
        return joined3(out, n_out, "", 0, "", 0);
    }
    *name = slash + 1;
    if (!**name) return NULL;
    int sep = out[n_out - 1] != '/';
    return joined3(out, n_out, sep ? "/" : "", (size_t)sep, rel, (size_t)(slash - rel));
}

/* `_inside(folder, name)`: folder + name where it ends with '/', else folder/name */
static char *inside(const char *folder, const char *name) {
    size_t n = strlen(folder);
    int sep = n == 0 || folder[n - 1] != '/';
    return joined3(folder, n, sep ? "/" : "", (size_t)sep, name, strlen(name));
}

static void free_queued(Queued *q, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        free(q[i].folder);
        free(q[i].tmp);
        free(q[i].dst);
    }
    PyMem_Free(q);
}

/* The (first mode, mode, uid, gid) `given` holds for `st` (None or an os.stat_result): 1 found,
 * 0 not known, -1 error. The last key asked is remembered in *last (mode, uid, gid, has). */
static int given_for(PyObject *given, PyObject *st, long last[4], long out[4]) {
    long key[3] = {0, 0, 0};
    int none = st == Py_None;
    if (!none) {
        if (!PyTuple_Check(st) || PyTuple_GET_SIZE(st) < 6) return 0;
        for (int k = 0; k < 3; k++) {
            key[k] = PyLong_AsLong(PyTuple_GET_ITEM(st, k == 0 ? 0 : k + 3));
            if (key[k] == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                return 0;
            }
        }
    }
    if (last[3] == (none ? 2 : 1) && (none || (last[0] == key[0] && last[1] == key[1] && last[2] == key[2])))
        return 1; /* out[] still holds its answer */
    PyObject *k = none ? Py_NewRef(Py_None) : Py_BuildValue("(lll)", key[0], key[1], key[2]);
    if (!k) return -1;
    PyObject *v = PyDict_GetItemWithError(given, k);
    Py_DECREF(k);
    if (!v) return PyErr_Occurred() ? -1 : 0;
    if (!PyTuple_Check(v) || PyTuple_GET_SIZE(v) != 4) return 0;
    for (int j = 0; j < 4; j++) {
        out[j] = PyLong_AsLong(PyTuple_GET_ITEM(v, j));
        if (out[j] == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
    }
    last[0] = key[0], last[1] = key[1], last[2] = key[2], last[3] = none ? 2 : 1;
    return 1;
}

/* `made.get(folder)`: 1 True (made by this run), 0 missing (not met), -2 anything else (False:
 * there before), -1 error. */
static int made_state(PyObject *made, const char *folder) {
    PyObject *key = PyUnicode_DecodeFSDefault(folder);
    if (!key) return -1;
    PyObject *v = PyDict_GetItemWithError(made, key);
    Py_DECREF(key);
    if (!v) return PyErr_Occurred() ? -1 : 0;
    return v == Py_True ? 1 : -2;
}

PyObject *musify_cport_put_ports(PyObject *self, PyObject *args) {
    PyObject *out_obj, *temp_obj, *queued, *made, *given;
    Py_ssize_t start;
    (void)self;
    if (!PyArg_ParseTuple(args, "O&O&O!nO!O!", PyUnicode_FSConverter, &out_obj, PyUnicode_FSConverter, &temp_obj,
                          &PyList_Type, &queued, &start, &PyDict_Type, &made, &PyDict_Type, &given))
        return NULL;
    const char *out = PyBytes_AS_STRING(out_obj), *temp = PyBytes_AS_STRING(temp_obj);
    size_t n_out = (size_t)PyBytes_GET_SIZE(out_obj);
    Py_ssize_t n = PyList_GET_SIZE(queued), count = 0, stop = start;
    Queued *q = PyMem_Calloc(n > start ? (size_t)(n - start) : 1, sizeof(Queued));
    int max_made = (int)((n > start ? n - start : 0) * 4 + 16), n_made = 0;
    char **made_now = PyMem_Calloc((size_t)max_made, sizeof(char *));
    PyObject *odd = NULL, *result = NULL;
    long last[4] = {0, 0, 0, 0}, modes[4] = {0, 0, 0, 0};
    int last_state = 0;
    const char *last_folder = NULL;
    if (!q || !made_now) {
        PyErr_NoMemory();
        goto done;
    }
    for (; stop < n; stop++) { /* with the lock: what each port is, or where Python must take over */
        PyObject *item = PyList_GET_ITEM(queued, stop);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 5) break;
        PyObject *rel = PyTuple_GET_ITEM(item, 1), *data = PyTuple_GET_ITEM(item, 2);
        if (!PyUnicode_Check(rel) || !PyBytes_Check(data)) break;
        int known = given_for(given, PyTuple_GET_ITEM(item, 4), last, modes);
        if (known < 0) goto done;
        if (!known) break;
        PyObject *rel_fs = PyUnicode_EncodeFSDefault(rel);
        if (!rel_fs) goto done;
        const char *name = NULL;
        char *folder = folder_of(out, n_out, PyBytes_AS_STRING(rel_fs), (size_t)PyBytes_GET_SIZE(rel_fs), &name);
        char *dst = folder ? inside(folder, name) : NULL, *tmp = folder ? inside(folder, temp) : NULL;
        Py_DECREF(rel_fs);
        if (!folder || !dst || !tmp) {
            free(folder), free(dst), free(tmp);
            break; /* (no memory here is only a port left to Python) */
        }
        Queued *p = &q[count];
        p->folder = folder, p->dst = dst, p->tmp = tmp;
        count++;
        int state = last_folder && strcmp(last_folder, folder) == 0 ? last_state : made_state(made, folder);
        if (state == -1) goto done;
        if (state == -2) {
            count--;
            free(folder), free(dst), free(tmp);
            break; /* a folder that was there before: its files are looked at first (write_stated) */
        }
        last_folder = folder, last_state = state;
        p->ensure = state == 0;
        p->buf = PyBytes_AS_STRING(data);
        p->len = PyBytes_GET_SIZE(data);
        p->first_mode = (int)modes[0], p->mode = (int)modes[1], p->uid = modes[2], p->gid = modes[3];
    }
    /* (every `data` stays alive: `queued` holds it, and the caller holds `queued`) */
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < count; i++) {
        Queued *p = &q[i];
        if (p->ensure) { /* as an earlier port of this call found its folder, or asked now */
            for (Py_ssize_t j = i - 1; j >= 0 && !p->folder_state; j--) {
                if (q[j].folder_state && strcmp(q[j].folder, p->folder) == 0) p->folder_state = q[j].folder_state;
            }
            if (!p->folder_state) {
                int got = musify_cport_make_folder(p->folder, made_now, &n_made, max_made);
                p->folder_state = got > 0 ? FOLDER_MADE : got == 0 ? FOLDER_THERE : FOLDER_FAILED;
            }
            if (p->folder_state != FOLDER_MADE) { /* the caller looks (and reports a failure) itself */
                p->answer = -3;
                continue;
            }
        }
        p->answer = musify_cport_port_calls(p->tmp, p->dst, p->buf, p->len, p->first_mode, p->mode, p->uid, p->gid,
                                            &p->err, &p->failed);
        if (p->answer == -3) p->answer = -4;
    }
    Py_END_ALLOW_THREADS
    for (int k = 0; k < n_made; k++) {
        PyObject *key = PyUnicode_DecodeFSDefault(made_now[k]);
        if (!key || PyDict_SetItem(made, key, Py_True) < 0) {
            Py_XDECREF(key);
            goto done;
        }
        Py_DECREF(key);
    }
    odd = PyList_New(0);
    if (!odd) goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        Queued *p = &q[i];
        if (p->answer == -1) continue;
        PyObject *answer = p->answer == -4 ? Py_BuildValue("(iy)", p->err, p->failed) : PyLong_FromLong(p->answer);
        PyObject *entry = answer ? Py_BuildValue("(nNO&O&)", start + i, answer, PyUnicode_DecodeFSDefault, p->tmp,
                                                 PyUnicode_DecodeFSDefault, p->dst) : NULL;
        if (!entry || PyList_Append(odd, entry) < 0) {
            Py_XDECREF(entry);
            goto done;
        }
        Py_DECREF(entry);
    }
    result = Py_BuildValue("(nO)", stop, odd);
done:
    Py_XDECREF(odd);
    if (q) free_queued(q, count);
    if (made_now) {
        for (int k = 0; k < n_made; k++) free(made_now[k]);
        PyMem_Free(made_now);
    }
    Py_DECREF(out_obj);
    Py_DECREF(temp_obj);
    return result;
}

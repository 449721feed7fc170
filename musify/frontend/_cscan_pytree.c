/* The Python front end's node lists in C: `walk_ast` is musify/frontend/python.py's `walk` (the
 * reference: the nodes of `ast.walk` in its order, less the context and operator leaves), and
 * `nodes_of` its `PythonTree.of` filter. On vLLM's Python package the two were a fifth of the
 * Python pass's time in the interpreter: a `getattr` and an `isinstance` for every field of every
 * node, and a list comprehension over every node for each set of classes a pass asks for. */
#include "_cscan.h"

/* Append `item` to `out` when it is a node (an instance of `node_class`) whose class is not one of
 * `leaves`; 0, or -1 with an exception set. */
static int keep(PyObject *out, PyObject *item, PyTypeObject *node_class, PyObject *leaves) {
    if (!PyObject_TypeCheck(item, node_class)) return 0;
    int leaf = PySet_Contains(leaves, (PyObject *)Py_TYPE(item));
    if (leaf < 0) return -1;
    return leaf ? 0 : PyList_Append(out, item);
}

static PyObject *s_fields;  /* "_fields", interned */

/* walk_ast(root, node_class, leaves) -> [root, ...]: breadth first, the list its own queue; a
 * field a node lacks (`getattr(node, name, None)`) is skipped, as the reference skips None. */
PyObject *musify_cscan_walk_ast(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *root, *node_class, *leaves;
    if (!PyArg_ParseTuple(args, "OO!O!:walk_ast", &root, &PyType_Type, &node_class, &PyFrozenSet_Type, &leaves))
        return NULL;
    if (!s_fields && !(s_fields = PyUnicode_InternFromString("_fields"))) return NULL;
    PyObject *fields_of = PyDict_New();
    PyObject *out = PyList_New(0);
    if (!fields_of || !out || PyList_Append(out, root) < 0) goto fail;
    PyTypeObject *cls = (PyTypeObject *)node_class;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(out); i++) {
        PyObject *node = PyList_GET_ITEM(out, i);
        /* each class's `_fields`, as a tuple, looked up once a class (a walk meets some 60) */
        PyObject *seq = PyDict_GetItemWithError(fields_of, (PyObject *)Py_TYPE(node));
        if (seq) {
            Py_INCREF(seq);
        } else {
            if (PyErr_Occurred()) goto fail;
            PyObject *fields = PyObject_GetAttr(node, s_fields);
            if (!fields) goto fail;
            seq = PySequence_Tuple(fields);
            Py_DECREF(fields);
            if (!seq || PyDict_SetItem(fields_of, (PyObject *)Py_TYPE(node), seq) < 0) {
                Py_XDECREF(seq);
                goto fail;
            }
        }
        /* the parser sets every field in the node's instance dictionary: read there, the attribute
         * protocol (a look-up along the class's MRO first) only for a field that is not in it */
        PyObject *dict = Py_TYPE(node)->tp_dictoffset ? PyObject_GenericGetDict(node, NULL) : NULL;
        if (!dict) PyErr_Clear();  /* (no dictionary: every field through the attribute protocol) */
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(seq); k++) {
            PyObject *name = PyTuple_GET_ITEM(seq, k);
            PyObject *value = dict && PyDict_CheckExact(dict) ? PyDict_GetItemWithError(dict, name) : NULL;
            if (value) {
                Py_INCREF(value);
            } else if (PyErr_Occurred()) {
                Py_DECREF(seq);
                Py_XDECREF(dict);
                goto fail;
            } else {
                value = PyObject_GetAttr(node, name);
            }
            if (!value) {
                if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
                    Py_DECREF(seq);
                    Py_XDECREF(dict);
                    goto fail;
                }
                PyErr_Clear();
                continue;
            }
            int bad = 0;
            if (PyList_CheckExact(value)) {
                for (Py_ssize_t j = 0; j < PyList_GET_SIZE(value) && !bad; j++)
                    bad = keep(out, PyList_GET_ITEM(value, j), cls, leaves) < 0;
            } else {
                bad = keep(out, value, cls, leaves) < 0;
            }
            Py_DECREF(value);
            if (bad) {
                Py_DECREF(seq);
                Py_XDECREF(dict);
                goto fail;
            }
        }
        Py_DECREF(seq);
        Py_XDECREF(dict);
    }
    Py_DECREF(fields_of);
    return out;
fail:
    Py_XDECREF(fields_of);
    Py_XDECREF(out);
    return NULL;
}

/* nodes_of(nodes, classes) -> [node for node in nodes if type(node) in classes] */
PyObject *musify_cscan_nodes_of(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *nodes, *classes;
    if (!PyArg_ParseTuple(args, "O!O!:nodes_of", &PyList_Type, &nodes, &PyFrozenSet_Type, &classes)) return NULL;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(nodes); i++) {
        PyObject *node = PyList_GET_ITEM(nodes, i);
        int hit = PySet_Contains(classes, (PyObject *)Py_TYPE(node));
        if (hit < 0 || (hit && PyList_Append(out, node) < 0)) {
            Py_DECREF(out);
            return NULL;
        }
    }
    return out;
}

"""The Cython front end (`.pyx`, `.pxd`, `.pxi`): Python's comments and strings, and the headers
of `cdef extern from` blocks.

A Cython module binds the CUDA C API in `cdef extern from "cuda_runtime.h"` blocks and calls it
(CuPy's `cupy_backends/cuda`, NVIDIA's `cuda-bindings`); those files were copied unchanged,
without a word, while the C they bind to was ported. Their port is the C names the blocks declare
(`musify/passes/cython_extern.py`, which says why the Cython names stay) and the headers the
blocks name, which are includes here (`"cuda_runtime.h"`, `"<cuda_fp16.h>"`, a project's
`'dist.cuh'`), renamed by the include pass. Comments and strings are Python's
(`python.regex_spans`).
"""

from __future__ import annotations

from musify.frontend.python import regex_spans
from musify.frontend.scanner import Include, Scan
from musify.patterns import lazy_pattern

# `cdef extern from "header.h"` (or `cdef extern from "<header.h>"`, Cython's system header)
_EXTERN_FROM = lazy_pattern(globals(), "_EXTERN_FROM", r"\bextern[ \t]+from[ \t]+(['\"])([^'\"\r\n]+)\1")


def scan_cython(text: str, _ruleset: object = None) -> Scan:
    """The comment and string spans, and the headers the `extern from` blocks name."""
    made = Scan(spans=regex_spans(text))
    code = made.code_map()
    for m in _EXTERN_FROM.finditer(text):
        if not code.is_code(m.start()):
            continue  # in a comment or a string
        s, e = m.span(2)
        path = m.group(2)
        angled = len(path) > 2 and path[0] == "<" and path[-1] == ">"
        if angled:
            s, e, path = s + 1, e - 1, path[1:-1]
        made.includes.append(Include(s, e, path, angled, m.start()))
    return made

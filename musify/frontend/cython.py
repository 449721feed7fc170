"""The Cython front end (`.pyx`, `.pxd`, `.pxi`): Python's comments and strings, C's names.

A Cython module binds the CUDA C API by name and calls it as C does: CuPy's
`cupy_backends/cuda/api/runtime.pyx` declares `cdef extern from '../../cupy_backend_runtime.h'`
blocks of `cudaMalloc`, `cudaMemcpy`, ... and calls `status = cudaMalloc(&ptr, size)`; RAPIDS
and NVIDIA's `cuda-python` are written the same way. Those files were copied unchanged, without
a word, while the C they bind to was ported. Here their names are found as the C scanner finds
them (every word outside comments and strings that starts with one of the rules' prefixes, in
code), so the identifier pass renames them and reports those MUSA lacks, and the header an
`extern from` block names is an include, which the include pass renames (`"cuda_runtime.h"`,
a project's `.cuh`).

Comments (`#`) and strings are Python's (`python.regex_spans`): a name in them is left alone.
The Python-level code of a module (`torch.cuda.synchronize()`, device strings) is not read, as
`ast` cannot parse Cython; a file's own `def` functions rarely hold any.
"""

from __future__ import annotations

import bisect
import re
from functools import lru_cache

from musify.frontend.python import regex_spans
from musify.frontend.scanner import Ctx, IdentList, Include, Scan
from musify.patterns import lazy_pattern

# `cdef extern from "header.h"` (or `cdef extern from "<header.h>"`, Cython's system header)
_EXTERN_FROM = lazy_pattern(globals(), "_EXTERN_FROM", r"\bextern[ \t]+from[ \t]+(['\"])([^'\"\r\n]+)\1")


def scan_cython(text: str, ruleset) -> Scan:
    """The comment and string spans, the candidate identifiers (all in code) and the headers the
    `extern from` blocks name."""
    from musify.passes.languages import scanner_prefixes

    spans = regex_spans(text)
    starts = [s for s, _, _ in spans]
    idents = IdentList()
    for m in _words(scanner_prefixes(ruleset)).finditer(text):
        if not _inside(spans, starts, m.start()):
            idents.add(m.start(), m.end(), m.group(), Ctx.CODE)
    includes = []
    for m in _EXTERN_FROM.finditer(text):
        if _inside(spans, starts, m.start()):
            continue  # in a comment or a string
        s, e = m.span(2)
        path = m.group(2)
        angled = len(path) > 2 and path[0] == "<" and path[-1] == ">"
        if angled:
            s, e, path = s + 1, e - 1, path[1:-1]
        includes.append(Include(s, e, path, angled, m.start()))
    return Scan(idents, includes, [], spans, [])


def _inside(spans: list, starts: list[int], offset: int) -> bool:
    """`offset` lies in a comment or a string."""
    i = bisect.bisect_right(starts, offset) - 1
    return i >= 0 and spans[i][1] > offset


@lru_cache(maxsize=4)
def _words(prefixes: tuple[str, ...]) -> re.Pattern[str]:
    """Whole words that start with one of `prefixes` (the C scanner's candidates)."""
    alternatives = "|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True))
    return re.compile(rf"(?<![\w$])(?:{alternatives})\w*(?![\w$])")

"""The names a Cython file declares in Python's ways, so that their uses are not MU1001.

The identifier pass decides whether a vendor-looking name no rule knows is declared by C's
lexical cues (a type before it). A Cython module also declares names as Python does: CuPy's
`nccl.pyx` defines `NCCL_UINT8 = ncclUint8`, its fusion code passes `cuda_params` from one
`def` to the next, and each use was reported as an unknown CUDA name. This pass adds to the
file's declared names (which the run's end reads for every file: `finalise`) each name that
stands as an assignment's target at the start of a statement, last in a `cdef` declaration,
alone on its line (an enumerator), after `def`, `cpdef`, `class`, `struct`, `enum` (or `enum:`),
`for`, `as`, `import` or `global`, or among a function's parameters. It makes no edit.
"""

from __future__ import annotations

from musify.engine.edits import Edit
from musify.passes._base import PassContext
from musify.patterns import lazy_pattern

# a statement's assignment target, with `cdef`/`cpdef` and a type before it or an annotation after it
_ASSIGNED = lazy_pattern(globals(), "_ASSIGNED", r"(?m)^[ \t]*(?:c?p?def[ \t]+(?:[\w.\[\]]+[ \t*&]+)+)?"
                                                 r"\**([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)")
# a `cdef` declaration without a value: the last word of the line (`cdef vector.vector[ncclComm_t] ncclComms`)
_CDEF = lazy_pattern(globals(), "_CDEF", r"(?m)^[ \t]*c?p?def[ \t]+[^=(\n:#]*?[ \t*&\]](\w+)[ \t]*(?:#[^\n]*)?$")
# a line of one name: an enumerator of a `cdef enum` block (cuda-bindings' `cyruntime.pxd`)
_ENUMERATOR = lazy_pattern(globals(), "_ENUMERATOR", r"(?m)^[ \t]+([A-Za-z_]\w*)[ \t]*,?[ \t]*(?:#[^\n]*)?$")
_AFTER_KEYWORD = lazy_pattern(globals(), "_AFTER_KEYWORD", r"\b(?:(?:def|cpdef|class|struct|union|enum|for|as|import|"
                                                           r"global|nonlocal)[ \t]+|enum[ \t]*:[ \t]*)\**([A-Za-z_]\w*)")
_PARAMETERS = lazy_pattern(globals(), "_PARAMETERS", r"\b(?:c?p?def)[ \t][^(\n]*\(([^)]*)\)")
_PARAMETER_NAME = lazy_pattern(globals(), "_PARAMETER_NAME", r"([A-Za-z_]\w*)[ \t]*(?:[:=].*)?$")


def run(ctx: PassContext) -> list[Edit]:
    text, declared, code = ctx.text, ctx.declared, ctx.scan.code_map()
    for pattern in (_ASSIGNED, _CDEF, _ENUMERATOR, _AFTER_KEYWORD):
        for m in pattern.finditer(text):
            if code.span_end(m.start(1)) is None:
                declared.add(m.group(1))
    for m in _PARAMETERS.finditer(text):
        if code.span_end(m.start()) is not None:
            continue
        for parameter in m.group(1).split(","):
            name = _PARAMETER_NAME.search(parameter.strip().split("=", 1)[0].strip())
            if name is not None:
                declared.add(name.group(1))
    return []

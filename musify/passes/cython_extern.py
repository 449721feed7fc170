"""The C names a Cython module binds, ported by their Cython "cname": `int cudaMalloc(...)` in a
`cdef extern from` block becomes `int cudaMalloc "musaMalloc"(...)`.

A Cython name is two names: the one Cython and Python code use, and the C name the generated C
calls, which is the same unless a string after the declared name gives another one (cuda-bindings
writes `ctypedef CUstream_st* cudaStream_t 'cudaStream_t'`, CuPy `ctypedef void* Stream
'cudaStream_t'`). Porting the C name alone is the whole port of a binding: the generated C calls
`musaMalloc` and uses `musaStream_t`, while every Cython and Python name stays as it was. That
matters because a binding's names are its Python API: CuPy's `cupy/linalg` reads
`cublas.CUBLAS_OP_N`, its tests `runtime.cudaChannelFormatKindFloat`, the users of `cuda-bindings`
call `runtime.cudaMalloc`; renaming the Cython names would have broken each of them.

So, in each `cdef extern from` block (by indentation), the name each declaration declares is
looked up in the rules: the word before a function's parameters, or inside a function pointer's
`(*name)`; else the last word, before a `= value`, an array's `[size]`, a `:` and a cname; each
name of a comma list. Where a cname string follows it, the string is renamed by the rules (its
content is a C name); else a rule that renames the name adds the MUSA name as its cname. What a
rule says besides (MU1002 for a name MUSA lacks, MU1004 for an inferred name) is reported at the
declaration. Code outside the blocks is left as written.
"""

from __future__ import annotations

from musify.engine.edits import Edit, EditList
from musify.passes._base import PassContext
from musify.passes.identifiers import _use_rule  # (a rule's edit and diagnostics, as at any use)
from musify.patterns import lazy_pattern

_EXTERN = lazy_pattern(globals(), "_EXTERN", r"[ \t]*(?:cdef[ \t]+)?extern[ \t]+from\b[^\n]*:[ \t]*(?:#[^\n]*)?$")
_WORD = lazy_pattern(globals(), "_WORD", r"[A-Za-z_]\w*")
_MARK = lazy_pattern(globals(), "_MARK", r"[(:,=\[]")
_POINTER_NAME = lazy_pattern(globals(), "_POINTER_NAME", r"\([ \t]*\*[ \t]*([A-Za-z_]\w*)")
_STRING = lazy_pattern(globals(), "_STRING", r"""[ \t]*(['"])([^'"\n]*)\1""")
_SKIP = frozenset({"pass", "const", "struct", "union", "enum", "cdef", "ctypedef", "cpdef", "packed", "nogil",
                   "except", "noexcept", "with", "gil", "public", "readonly", "inline", "unsigned", "signed"})


def run(ctx: PassContext) -> list[Edit]:
    text = ctx.text
    code = ctx.scan.code_map()
    edits = EditList()
    seen: set[str] = set()
    for start, end in _declarations(text, code):
        for name_start, name_end in _declared_names(text, code, start, end):
            _port(ctx, name_start, name_end, edits, seen)
    return edits


def _declarations(text: str, code) -> list[tuple[int, int]]:
    """(start, end) of each declaration in a `cdef extern from` block: a line more indented than
    the block's own, with the lines its open parentheses carry on."""
    out = []
    pos, n = 0, len(text)
    block = None  # the block's indentation, while in one
    while pos < n:
        nl = text.find("\n", pos)
        end = n if nl < 0 else nl
        line = text[pos:end]
        body = line.lstrip(" \t")
        indent = len(line) - len(body)
        if body and not body.startswith("#") and code.is_code(pos + indent):
            if block is not None and indent <= block:
                block = None
            if _EXTERN.match(line):
                block = indent
            elif block is not None:
                end = _carried(text, code, pos)
                out.append((pos + indent, end))
        pos = end + 1
    return out


def _carried(text: str, code, start: int) -> int:
    """Where the declaration starting at `start` ends: the first newline outside every
    parenthesis it opens (a function's parameters may take several lines)."""
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c == "\n" and depth <= 0:
            return i
        if (c == "(" or c == ")") and code.is_code(i):
            depth += 1 if c == "(" else -1
    return len(text)


def _declared_names(text: str, code, start: int, end: int) -> list[tuple[int, int]]:
    """The spans of the names a declaration declares (see the module's docstring), read off the
    marks in its code: the first `(` (a function), else `,` between names, `=` or `[` after one
    (`= 128`, `internal[NCCL_UNIQUE_ID_BYTES]`) and the `:` that opens a block."""
    marks = [(m.start(), m.group()) for m in _MARK.finditer(text, start, end) if code.is_code(m.start())]
    paren = next((at for at, mark in marks if mark == "("), -1)
    if paren >= 0:
        pointer = _POINTER_NAME.match(text, paren)
        if pointer is not None:  # `ctypedef void (*cudaHostFn_t)(void* data)`: the name inside
            return [pointer.span(1)]
        name = _last_word(text, code, start, paren)
        return [name] if name else []
    names = []
    piece, cut = start, -1  # where the piece starts; where its name ends (-1: at the piece's end)
    for at, mark in [*marks, (end, ":")]:
        if mark in "=[":
            cut = at if cut < 0 else cut
            continue
        name = _last_word(text, code, piece, at if cut < 0 else cut)
        if name:
            names.append(name)
        if mark == ":":
            break
        piece, cut = at + 1, -1
    return names


def _last_word(text: str, code, start: int, end: int) -> tuple[int, int] | None:
    """The span of the last word in code in text[start:end], unless it is a keyword (`_SKIP`)."""
    words = [m for m in _WORD.finditer(text, start, end) if code.is_code(m.start())]
    return words[-1].span() if words and words[-1].group() not in _SKIP else None


def _port(ctx: PassContext, start: int, end: int, edits: EditList, seen: set[str]) -> None:
    """The declared name at text[start:end]: its cname string renamed, or a cname added."""
    text = ctx.text
    names = ctx.ruleset.names
    cname = _STRING.match(text, end)
    if cname is not None:
        rule = names.get(cname.group(2))
        if rule is not None:
            _use_rule(ctx, rule, cname.start(2), cname.end(2), edits, seen)
        return
    rule = names.get(text[start:end])
    if rule is None:
        return
    made = EditList()
    _use_rule(ctx, rule, start, end, made, seen)  # (its diagnostics, and the new name)
    for edit in made:
        edits.append(Edit(end, end, f' "{edit.replacement}"', edit.rule, edit.library, edit.kind, edit.inferred,
                          edit.category))


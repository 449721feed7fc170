"""The unknown-name check decided from the tokens before a name (`identifiers.unknown_use`,
compiled) records what the full check, token by token, records."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from musify.frontend.idents import IdentList
from musify.frontend.scanner import Ctx, LineIndex, Scan, scan
from musify.options import Options
from musify.passes import identifiers
from musify.passes._base import PassContext, ProjectInfo
from musify.passes.identifiers import _declares, _enumerator, previous_token
from musify.passes.unknown_names import _macro_parameter


def _unknown_reference(ctx: PassContext, start: int, name: str, where: Ctx, position) -> None:
    """`_unknown` as it was before `unknown_use`: every question asked in Python."""
    if where == Ctx.MACRO_NAME:
        ctx.declared.add(name)
        return
    if where == Ctx.MACRO and _macro_parameter(ctx, start, name):
        return
    before = previous_token(ctx.text, start)
    if _declares(ctx.text, before) or (before[0] in ("{", ",") and _enumerator(ctx, start, start + len(name))):
        ctx.declared.add(name)
        return
    if before[0] in (".", "->"):
        return
    if _nested_namespace_head(ctx.text, start):
        ctx.declared.add(name)
        return
    ctx.found.pending_unknown.append((name, *position(start)))


def _nested_namespace_head(text: str, start: int) -> bool:
    """The tokens before `start` are `namespace [inline] a :: [inline] b ::` (C++17/20), read
    token by token backwards."""
    tok, at = previous_token(text, start)
    if tok != "::":
        return False
    while True:
        name, at = previous_token(text, at)
        if not name.isidentifier():
            return False
        tok, at = previous_token(text, at)
        if tok == "inline":
            tok, at = previous_token(text, at)
        if tok == "namespace":
            return True
        if tok != "::":
            return False


BEFORE = ["int ", "const ", "*", "&", " ", "\n", "\\\n", "vector<int> ", "map<K, V> ", "a < b > ", "x > ", "~",
          "return ", "sizeof ", "x.", "p->", "a::", "{ ", "f(a, ", "enum E { A, ", "enum class F : int { ",
          "= ", "(", "9 ", "new ", "_x ", "é ", "a && b > ", "}", ";", "template <typename T> ",
          "namespace ", "namespace at::", "inline ", "b :: "]
AFTER = [",", " = 2", "}", ";", ")", " ", "\n", "(x)", " x;", ""]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(BEFORE), max_size=6).map("".join), st.sampled_from(AFTER),
       st.sampled_from([Ctx.CODE, Ctx.MACRO, Ctx.MACRO_NAME, Ctx.DIRECTIVE]))
@example("enum E { A, ", ",", Ctx.CODE)
@example("vector<int> ", ";", Ctx.CODE)
def test_unknown_names_are_recorded_as_the_full_check_records_them(before: str, after: str, where: Ctx) -> None:
    name = "cudaZ"
    text = before + name + after
    results = []
    for check in (identifiers._unknown, _unknown_reference):
        ctx = PassContext("a.cu", text, scan(text), None, Options(), ProjectInfo(), LineIndex(text))
        check(ctx, len(before), name, where, ctx.lines.position)
        results.append((sorted(ctx.declared), ctx.pending_unknown))
    assert results[0] == results[1], text
    # what `renames` decides before `_unknown` is asked: declared, reported or dropped, as it would
    if [i.start for i in scan(text).idents] == [len(before)]:
        idents = IdentList()
        idents.add(len(before), len(before) + len(name), name, where)
        declared: set[str] = set()
        _, rest, uses = identifiers.renames_python(idents, {}, set(), text, {name}, declared)
        if not rest:
            pending = [(name, *LineIndex(text).position(start)) for start, _ in uses]
            assert (sorted(declared), pending) == results[0], text


def test_a_name_declared_by_a_nested_namespace_definition_is_not_reported(tmp_path) -> None:
    """PyTorch's `namespace at::native::cuda_utils {` (block_reduce.cuh) declares `cuda_utils`:
    its uses in the other files of the project are not MU1001."""
    from musify.api import migrate

    (tmp_path / "block_reduce.cuh").write_text("namespace at::native::cuda_utils {\nint f();\n}\n")
    (tmp_path / "norm.cu").write_text('#include "block_reduce.cuh"\nint g() { return at::native::cuda_utils::f(); }\n')
    record, _ = migrate([str(tmp_path)])
    assert not [d for f in record.files for d in f.diagnostics if d.id == "MU1001"]


def test_an_empty_scan_context_is_accepted() -> None:
    ctx = PassContext("a.cu", "cudaZ", Scan(), None, Options(), ProjectInfo(), LineIndex("cudaZ"))
    identifiers._unknown(ctx, 0, "cudaZ", Ctx.CODE, ctx.lines.position)
    assert ctx.pending_unknown == [("cudaZ", 1, 1)]


WORDISH = ["enum", "enum ", "xenum", "enumx", " class E", "{", "}", ";", "(", "namespace", "namespace ", "xnamespace",
           "inline ", "a", "::", " ", "\n", "\\\n", "é", "cudaZ", "1", "_", " " * 200]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(WORDISH), max_size=24).map("".join), st.integers(0, 300))
@example("enum {xenum E {} enum class F {", 0)
@example("namespace a::namespace b::inline c::", 0)
def test_the_word_first_searches_find_what_the_regex_searches_found(text: str, at: int) -> None:
    """`_next_enum_open` and `_in_nested_namespace_head` try their regex only where its word
    stands: what searching the regex from each character found."""
    from musify.passes import unknown_names as un

    pos = min(at, len(text))
    got, want = un._next_enum_open(text, pos), un._ENUM_OPEN.search(text, pos)
    assert (got and got.span()) == (want and want.span())
    for start in range(len(text) + 1):
        assert un._in_nested_namespace_head(text, start) == \
            (un._NESTED_NAMESPACE.search(text, max(0, start - 256), start) is not None), (text, start)


def test_a_macro_parameter_is_not_an_unknown_name():
    """CUTLASS's `#define Return_Status(cudaError_t_status) if (cudaError_t_status != cudaSuccess) ...`
    got MU1001 at each use of its own parameter; a CUDA-looking name the macro only uses still does."""
    from musify.rules import load_ruleset
    from musify.runner import migrate_text

    text = ("#define Return_Status(cudaError_t_status) \\\n"
            "  if (cudaError_t_status != cudaSuccess) { return cudaError_t_status; }\n"
            "#define CALL(x, \\\n cuArg) cuUnknownThing(x, cuArg)\n"
            "int f() { Return_Status(cudaGetLastError()); return 0; }\n")
    _new, ctx, _ = migrate_text(text, "k.cu", load_ruleset(), Options())
    assert [p[0] for p in ctx.found.pending_unknown] == ["cuUnknownThing"]


def test_a_macro_argument_in_an_if_is_not_an_unknown_name(tmp_path):
    """CCCL's `#if !_CCCL_COMPILER(NVRTC)` pastes its argument into `_CCCL_COMPILER_NVRTC`: `NVRTC`
    names nothing, and the CUDA 13 headers reported it MU1001 125 times. Every use of it as a
    function-like macro's argument in an `#if`/`#elif` is passed over, in the file that first
    meets the name and in a later one (where the compiled rename loop decides its uses); the same
    name under `defined(...)`, in code, or a vendor-looking name the macro does not take is reported."""
    from musify import api

    src = tmp_path / "in"
    src.mkdir()
    first = ("#if !_CCCL_COMPILER(NVRTC)\n#include <cstdio>\n#endif\n"
             "#elif _CCCL_CUDA_COMPILER(NVCC, >=, 12) || _CCCL_COMPILER( NVRTC )\n#endif\n")
    (src / "a.cuh").write_text(first)
    (src / "b.cu").write_text(first + "#if defined(NVRTC)\n#endif\nvoid f() { g(NVRTC); }\n")
    record, _ = api.migrate([str(src)], Options(cache=False), "out", str(tmp_path / "out"))
    found = [(f.path.rsplit("/", 1)[1], d.id, d.name, d.line) for f in record.files for d in f.diagnostics
             if d.id == "MU1001"]
    assert found == [("b.cu", "MU1001", "NVRTC", 6), ("b.cu", "MU1001", "NVRTC", 8)]

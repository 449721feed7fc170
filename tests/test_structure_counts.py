"""The structure pass's one compiled call gives what the searches it replaces give.

`launches.structure_counts` (`_claunch.structure_counts`: the kernel count, the launch rows, and
whether `launch_shape` reads every launch as a plain one) must answer exactly as its Python
reference `structure_counts_python` (`count_kernel_defs_python`, `launch_spans_python`,
`well_formed_python`), and the structure pass must give the same facts and diagnostics on the
compiled path as on the pure-Python one (MUSIFY_PURE_PYTHON=1), on generated and mutated texts:
plain launches, launches the subset leaves to the parser, kernels, near misses in comments,
strings and macro bodies, unclosed brackets, non-ASCII text.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from musify.frontend import launches
from musify.frontend.launch_shape import reserved_words
from musify.frontend.scanner import CodeMap, LineIndex, scan_python
from musify.options import Options
from musify.passes import structure
from musify.passes._base import PassContext, ProjectInfo
from musify.passes.languages import scan_c
from musify.rules import load_ruleset

needs_native = pytest.mark.skipif(not launches.NATIVE_COUNTS, reason="the compiled launch pass is not built")
_RULES = load_ruleset()

FRAGMENTS = [
    "k<<<1, 2>>>(a, b);", "ns::k<float, 4><<<g, b, 0, s>>>(p[0], q->r);", "k<<<(n + 1) / 2, 32>>>(x.y(1), -n);",
    "k<<<1>>>([=] __device__ (int i) { return i; });", "k<<<1>>>(\"s\");", "k<<<1>>>(a ? b : c);",
    "k<<<1>>>(09);", "k<<<1>>>((int)x);", "k <<< 1 >>> /* c */ (x);", "k<<<a>>>(b;c)", "f<<<g, b>>>  \\\n (x)",
    "#define L(k) k<<<1, 1>>>(0)\n", "#define M(x) k<<<#x, 1>>>(a ## b)\n", "__global__ void k(int *a) {}\n",
    "template <typename T> __global__ void k(T x);\n", "__global__ __launch_bounds__(256) void k(int a) {}\n",
    "// k<<<1>>>(x); __global__ void c();\n", "/* __global__ void c() k<<<1>>>(x) */", '"__global__ k<<<1>>>(x)"',
    "x__global__ void y();", "__global__x void y();", "<<<", ">>>", "(", ")", "{", "}", "[", "]", ";", ",", " ",
    "\n", "\\\n", "é", "😀", "k", "::", "<", ">", "/* never closed", "if (a<<<b) {",
]
pieces = st.one_of(st.sampled_from(FRAGMENTS), st.sampled_from(FRAGMENTS),
                   st.text(alphabet="<>()[]{};, \\\n/*\"'kx:#_", max_size=8), st.text(max_size=3))
texts = st.lists(pieces, max_size=40).map("".join)


@needs_native
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
@example("k<<<1, 2>>>(a, b); __global__ void k(int a) {}")
@example("k<<<1>>>(\"s\"); k<<<1>>>(x);")  # a launch left to the parser: the rows
@example("__global__ void k();")  # kernels, no launch: no bracket pass, no rows
@example("😀 k<<<1>>>(x); __global__ void k(int a);")  # a text of wider characters
@example("k<<<1>>>(x); " + "a<<<(b " * 6 + "k<<<2>>>(y)")  # reads past the text's length: the whole pass
def test_compiled_counts_are_the_python_searches(text: str) -> None:
    spans = scan_python(text).spans
    reserved_words()  # made: the compiled call tests each launch's shape
    assert launches.structure_counts(text, spans) == launches.structure_counts_python(text, CodeMap(spans))


@needs_native
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_without_the_reserved_words_every_launch_is_a_row(text: str) -> None:
    """Before the reserved words are made, the call answers with the rows (the caller tests them)."""
    spans = scan_python(text).spans
    from musify.frontend import _claunch

    kernels, rows = _claunch.structure_counts(text, spans, launches.KERNEL_WORD, launches._NOT_NAME_LIST, None)
    expected = list(launches.launch_spans_python(text, CodeMap(spans)))
    assert kernels == launches.count_kernel_defs_python(text, CodeMap(spans))
    assert rows == (expected if expected else 0)


@needs_native
def test_the_call_refuses_what_is_not_a_set() -> None:
    from musify.frontend import _claunch

    with pytest.raises(TypeError):
        _claunch.structure_counts("k<<<1>>>(x);", [], "__global__", (), ["k"])


def _facts_and_findings(text: str) -> tuple:
    ctx = PassContext("k.cu", text, scan_c(text, _RULES), _RULES, Options(), ProjectInfo(), LineIndex(text))
    ctx.found.current_pass = "structure"
    structure.run(ctx)
    return dict(ctx.facts), list(ctx.diagnostics)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
@example("k<<<1>>>([=] __device__ (int i) { return i; }); k<<<1>>>(x); __global__ void k();")
@example("#define M(x) k<<<#x, 1>>>(a ## b)\n k<<<1>>>(x, ;")
def test_the_pass_gives_the_same_facts_and_findings_on_both_paths(text: str) -> None:
    compiled = _facts_and_findings(text)
    saved = structure.NATIVE_COUNTS
    structure.NATIVE_COUNTS = False
    try:
        python = _facts_and_findings(text)
    finally:
        structure.NATIVE_COUNTS = saved
    assert compiled == python


@needs_native
@pytest.mark.parametrize("filler", ["x", "_", " ", "é"])
def test_the_bracket_pass_sees_each_token_at_every_offset(filler: str) -> None:
    """The compiled bracket pass skips 16 bytes at a time to the next token character: each
    token at each offset of texts of several lengths (in a block, across a block's edge, in the
    bytes after the last block) gives the Python pass's structure."""
    from musify.frontend import _claunch

    for token in ("(", ")", "[", "]", "{", "}", ";", "<<<", ">>>", "k<<<1>>>(x);"):
        for length in (15, 16, 17, 31, 32, 33, 47):
            for at in range(max(0, length - len(token) + 1)):
                middle = filler * at + token + filler * (length - at - len(token))
                for text in ("k<<<1>>>(" + middle + ")", "k<<<" + middle + ">>>(a)"):  # inside what is asked
                    spans = scan_python(text).spans
                    shape = launches._structure_python(text, CodeMap(spans))
                    assert _claunch.structure(text, spans) == (shape.closer, shape.semicolon, shape.config_end), text

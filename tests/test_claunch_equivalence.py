"""The compiled bracket pass of launch detection (`_claunch`) and the Python one agree.

Launch counts, the structure pass's rewrites and the emulator's launch rewriting all rest on
`launches._structure`: the compiled path is only allowed to be faster, so on generated inputs
(launches, brackets, `;`, comments and literals in any mix, closed or not) both must give the
same structure, and launch detection the same launches.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from musify.frontend import launches, scanner
from musify.frontend.scanner import CodeMap, scan_python

try:
    from musify.frontend import _claunch
except ImportError:  # no compiler at install time: test_cscan_equivalence's build check says so
    _claunch = None

needs_claunch = pytest.mark.skipif(_claunch is None, reason="the compiled launch pass is not built")

FRAGMENTS = [
    "<<<", ">>>", "<<<<", ">>>>", "<<", ">>", "<", ">", "(", ")", "[", "]", "{", "}", ";", ",",
    " ", "\t", "\n", "\\\n", "\r\n", "k", "ns::k", "::k", "k<float, 4>", "k<T>", "x", "1", "é",
    "kern<<<grid, block>>>(a, b);", "kern<<<1, 32, 0, s>>>(d);", "f<<<g, b>>>  \\\n (x)",
    "k<<<a>>>(b;c)", "k<<<(n + 1) / 2, 32>>>(p[0], q{1})", "k <<< 1 >>> /* c */ (x);",
    "// line <<< comment\n", "/* block ( >>> */", "/* never closed", '"str <<< ( ;"', "'('", "';'",
    'R"(raw >>> ( )"', '"unterminated\n', "#define L(k) k<<<1, 1>>>(0)\n", "__global__ void k(int *a) {}",
    "if (a<<<b) {", "template <typename T> __global__ void k(T x);", "}}}", "(((",
]

pieces = st.one_of(st.sampled_from(FRAGMENTS), st.sampled_from(FRAGMENTS),
                   st.text(alphabet="<>()[]{};, \\\n/*\"'kx:", max_size=10), st.text(max_size=4))
texts = st.lists(pieces, max_size=50).map("".join)


def _python(text: str) -> tuple:
    shape = launches._structure_python(text, CodeMap(scan_python(text).spans))
    return shape.closer, shape.semicolon, shape.config_end


@needs_claunch
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
@example("k<<<1, 2>>>(a, b);")
@example("k<<<1>>>(a; b) x<<<2>>> (c) <<< ((( ;")
@example("<<<<<< >>>>>> (")
def test_compiled_and_python_structures_are_identical(text: str) -> None:
    spans = scan_python(text).spans
    assert _claunch.structure(text, spans) == _python(text)


@needs_claunch
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_compiled_and_python_launches_are_identical(text: str) -> None:
    compiled = launches.find_launches(text)
    saved, launches._NATIVE = launches._NATIVE, None
    try:
        python = launches.find_launches(text)
    finally:
        launches._NATIVE = saved
    assert compiled == python


@needs_claunch
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
@example("k<<<1, 2>>>(a, b); j <<<3>>> (c) <<<<<< x<<<1>>>(y; z) // w<<<1>>>(q)\n")
@example("#define L(k) k<<<1, 1>>>(0)\nns::f<T><<<(n + 1) / 2, 32>>>(p[0]) ::g<<<1>>>(x)")
@example("a < b << c <<<< k<<<1>>>(x); <<")  # '<' found one at a time (memchr) up to the text's end
@example("😀 k<<<1>>>(x); <<<<<<k<<<2>>>(y)<<")  # a text of wider characters: the plain loop
# launches read forward, then '<<<' never ended: the reads outgrow the text, the whole pass answers the rest
@example("k<<<1>>>(x); " + "a<<<(b " * 6 + "k<<<2>>>(y) j<<<3>>>(z;)")
@example("é k<<<1>>>(x); " + "a<<<(b " * 6 + "k<<<2>>>(y)")
def test_compiled_and_python_launch_spans_are_identical(text: str) -> None:
    codemap = CodeMap(scan_python(text).spans)
    assert list(launches.launch_spans(text, codemap)) == list(launches.launch_spans_python(text, codemap))


def test_the_compiled_pass_is_built_and_in_use() -> None:
    """Where the scanner's extension was built, this one must be too (the same build step), and it
    must be used: the Python pass cost a tenth of a migration on small files."""
    if os.environ.get("MUSIFY_PURE_PYTHON", "") not in ("", "0"):
        pytest.skip("MUSIFY_PURE_PYTHON selects the Python pass")
    if scanner.SCANNER != "c":
        pytest.skip("no compiled extension was built here (test_cscan_equivalence says why)")
    assert _claunch is not None, "musify/frontend/_claunch.c was not built: run `python setup.py build_ext --inplace`"
    assert launches._NATIVE is _claunch
    shape = launches._structure("k<<<1, 2>>>(a, b);", CodeMap([]))
    assert shape.config_end == {1: 8} and shape.closer == {11: 16} and shape.semicolon == set()


@needs_claunch
def test_spans_of_any_sequence_type_and_bad_spans() -> None:
    text = "k<<<1>>>(a /* ) */ );"
    spans = scan_python(text).spans
    assert _claunch.structure(text, [list(s) for s in spans]) == _python(text)
    with pytest.raises(TypeError):
        _claunch.structure(text, [("a", "b")])


# --- device_functions: `_claunch.definitions` against the Python search ---------------------

DEF_FRAGMENTS = [
    "__global__", "__device__", "__host__ __device__", "__global__ void k(int *a) {", "__device__ int f(",
    "__device__ float x = 1;", "__device__ int arr[4];", "__global__ void k();", "void", " k", "f", "(", ")",
    "{", "}", ";", "=", "[", "]", " ", "\n", "a", "x__device__", "__device__x", "template <int N>",
    "__device__ T g<N>(T v) const {", ") -> int {", ") : m(0) {", "/* __device__ f() { */", "// (\n",
    '"{"', "'}'", 'R"(})"', "/* never closed", "__launch_bounds__(256)", "é", "return 32;",
    "k<float, 4>", "<", ">", " <T> ", "x1", "ß", "\u00a0", "\u2003", "\t", "\n(", "__global__ void ké<T>\n(",
]
def_texts = st.lists(st.one_of(st.sampled_from(DEF_FRAGMENTS), st.text(alphabet="(){};=[] \n/*\"'_a", max_size=8)),
                     max_size=40).map("".join)


@needs_claunch
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(def_texts)
@example("__global__ void k(int *a) { if (a) { a[0] = 1; } }\n__device__ int f(int x) { return x; }")
@example("__device__ void a() { __device__ void b() {} ( { } __global__ void c() {}")
@example("__device__ int f(( { }")
@example("__global__ void k\t(int a) {}\n__device__ T g <N>\n(T v) {}\n__global__ void ké<T>\u00a0(int) {}")
def test_compiled_and_python_device_functions_are_identical(text: str) -> None:
    from musify.passes.hazards import common

    kernel, device = frozenset({"__global__"}), frozenset({"__device__"})
    codemap = CodeMap(scan_python(text).spans)
    compiled = list(common.device_functions(text, codemap, kernel, device))
    assert compiled == list(common.device_functions_python(text, CodeMap(scan_python(text).spans), kernel, device))


DIRECTIVE_FRAGMENTS = ["#define Q __device__\n", "#if !defined(X)\n", "#if defined(A) && B(1)\n", "#endif\n",
                       "#define M(x) (x)\n", "#define L __device__ \\\n int f(int a) { return a; }\n", "\n#", "#",
                       "extern \"C\" {\n", "#else\n", "# if defined(Y) \\\n  || Z(2)\n"]
directive_texts = st.lists(st.one_of(st.sampled_from(DIRECTIVE_FRAGMENTS), st.sampled_from(DEF_FRAGMENTS)),
                           max_size=40).map("".join)


@needs_claunch
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(directive_texts)
@example("#define CUDART_DEVICE __device__\n#if !defined(RTC)\nextern \"C\" {\n"
         "__device__ void a() {}\n#define Q __device__\n#if defined(X)\n__device__ int b(int x) { return x; }\n}\n")
def test_compiled_and_python_device_functions_agree_with_directives(text: str) -> None:
    """Rows whose parameters would open in a later directive are dropped and searched past in
    the compiled path as the Python reference skips them, and the directive filter is the only
    difference from the search without directives."""
    from musify.passes.hazards import common

    kernel, device = frozenset({"__global__"}), frozenset({"__device__"})
    found = scan_python(text)
    compiled = list(common.device_functions(text, found.code_map(), kernel, device, found.directives))
    reference = list(common.device_functions_python(text, CodeMap(found.spans), kernel, device, found.directives))
    assert compiled == reference
    plain = list(common.device_functions_python(text, CodeMap(found.spans), kernel, device))
    codemap = CodeMap(found.spans)
    qualifier = common._qualifier_pattern(kernel | device)
    params = [codemap.search(common._STOP_OR_PAREN, text, qualifier.match(text, f.start).end()).start() for f in plain]
    if not any(common.params_in_directive(found.directives, f.start, at) for f, at in zip(plain, params)):
        assert reference == plain


def test_a_qualifier_in_a_macro_does_not_define_the_next_condition() -> None:
    """cuda_runtime_api.h's shape: the '(' after `#define CUDART_DEVICE __device__` is a
    condition's, and the real functions the false one hid are found."""
    from musify.passes.hazards import common

    text = ("#define CUDART_DEVICE __device__\n#if !defined(RTC)\nextern \"C\" {\n"
            "static __device__ int f(int x) { return x; }\n}\n#endif\n")
    found = scan_python(text)
    kernel, device = frozenset({"__global__"}), frozenset({"__device__"})
    for search in (common.device_functions, common.device_functions_python):
        assert [f.name for f in search(text, found.code_map(), kernel, device)] == ["defined"]
        assert [f.name for f in search(text, CodeMap(found.spans), kernel, device, found.directives)] == ["f"]


QUALIFIER_WORDS = ["__global__", "__device__", "__dev", "__device__x", "__host__", "_g", "g__", "é", "__"]


@needs_claunch
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from([*QUALIFIER_WORDS, "x", "_", " ", "1", "ß", "\n", "(", "__device__ void f() {}"]),
                max_size=30).map("".join),
       st.sets(st.sampled_from(QUALIFIER_WORDS), min_size=1, max_size=4))
@example("x__global____device__ __device__x __global__x", {"__global__", "__device__"})
@example("__device__x__devicé", {"__device__", "__dev", "__device__x"})
def test_compiled_qualifier_search_is_the_pattern(text: str, words: set[str]) -> None:
    """The qualifiers `definitions` finds from the words (in the pattern's order) are the
    pattern's matches less those after a word character, as hazards/common.py made them: the
    look-ahead binding to the last word only, a match passed over still consuming its text."""
    from musify.passes.hazards import common

    pattern = common._qualifier_pattern(frozenset(words))
    want = [m.span() for m in pattern.finditer(text)
            if not (m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_"))]
    assert _claunch.qualifier_spans(text, common._pattern_order(frozenset(words))) == want
    kernel = ("__global__",)
    spans = scan_python(text).spans
    assert _claunch.definitions(text, spans, common._pattern_order(frozenset(words)), kernel) == \
        _claunch.definitions(text, spans, want, kernel)


@needs_claunch
@pytest.mark.parametrize("seed", range(40))
def test_compiled_qualifier_search_across_blocks(seed: int) -> None:
    """The word search tests sixteen places at once on two bytes of the word (`find_bytes`):
    long texts dense in those bytes, a word at every place of a block and at the very end."""
    from musify.passes.hazards import common

    rng = random.Random(seed)
    pieces = ["_", "__", "l", "g", "__global__", "__host__", " ", "x", "__globa", "lobal__"]
    text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 120))) + rng.choice(["", "__global__", "__host__"])
    words = frozenset(rng.sample(["__global__", "__host__", "__", "_g", "l__"], rng.randint(1, 3)))
    pattern = common._qualifier_pattern(words)
    want = [m.span() for m in pattern.finditer(text)
            if not (m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_"))]
    assert _claunch.qualifier_spans(text, common._pattern_order(words)) == want


@needs_claunch
def test_compiled_qualifier_search_refuses_an_empty_word() -> None:
    with pytest.raises(ValueError):
        _claunch.qualifier_spans("x", ("a", ""))
    with pytest.raises(ValueError):
        _claunch.definitions("x", [], ("a", 1), ())


# --- bracket pairing: `CodeMap.closer` (from `_claunch.pairs`) against `CodeMap.closing` ----

@needs_claunch
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
@example("asm volatile (\"mov %0, 1;\" : \"=r\"(x)); f(a, (b), \")\" /* ) */ [1] {{ }")
@example("( [ ) ] { ( } ) ((( ] ")
def test_compiled_and_python_bracket_closers_are_identical(text: str) -> None:
    from musify.passes.hazards import common

    for opener in "({[":
        fast, slow = CodeMap(scan_python(text).spans), CodeMap(scan_python(text).spans)
        pattern = common._BRACKETS[opener]
        for i, c in enumerate(text):  # every opener, in code or not (those not in code: `closing`)
            if c == opener:
                assert fast.closer(pattern, text, i, _claunch.pairs) == slow.closing(pattern, text, i), (text, i)


@needs_claunch
def test_pairs_refuses_what_is_not_an_opener() -> None:
    with pytest.raises(ValueError):
        _claunch.pairs("(a)", [], ")")
    assert _claunch.pairs("", [], "(") == (b"", b"")


# --- launch detection's kernel start: `_claunch.kernel_start` against the Python one --------

START_FRAGMENTS = [
    "<<<", "k", "ns::k", "::k", " :: ", "::", "k<float, 4>", "k<T<U>>", "<", ">", ">>", "(", ")", ";", "{", "}",
    " ", "\t", "\n", "\\\n", "\r\n", "é", "ß", "x1", "1x", "_", "a.b", "p->", "obj.template f<int>",
    "(*fp)", "arr[0]", "\u00a0", "k_c0", "__global__", "<" * 3 + "x", "x" * 300,
]
start_texts = st.lists(st.one_of(st.sampled_from(START_FRAGMENTS), st.text(max_size=4)), max_size=30).map("".join)


@needs_claunch
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start_texts)
@example("> <<<")
@example("<T>::k<<<")  # a name after template arguments at the very start: Python reads text[-1]
@example("<T>::k<<<)")
@example("a::>k<<<")
@example("x" * 300 + " k<<<")
def test_compiled_and_python_kernel_starts_are_identical(text: str) -> None:
    for lt in range(len(text) + 1):  # every offset, not only those of a '<<<'
        assert _claunch.kernel_start(text, lt) == launches._kernel_start_python(text, lt), (text, lt)


# --- kernel definitions counted: `_claunch.count_kernels` against the Python count ----------

KERNEL_FRAGMENTS = [
    "__global__", "__global____global__", "x__global__", "__global__x", " void ", "k", "ké", "(", ")", "<", ">",
    "<T>", "<int, 4>", "<a;b>", " <T> ", "\n", "\t", "\u00a0", ";", "{", "}", "__launch_bounds__(256)",
    "__attribute__((x))", "alignas(8)", "__align__(4)", "/* __global__ void c( */", "// __global__ k(\n",
    '"__global__ s("', "template <typename T>", "__global__ void k(int *a) {}", "1x(", "_(", "x" * 390,
]
kernel_texts = st.lists(st.one_of(st.sampled_from(KERNEL_FRAGMENTS), st.text(alphabet="_g(<>) \n;{", max_size=6)),
                        max_size=30).map("".join)


@needs_claunch
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kernel_texts)
@example("__global__ __launch_bounds__(256) void k(int a) {}")
@example("__global__ void k<T, 4>\n(int a);")
@example("__global__ void k<a{b>(int a);")
@example("__global__ void k<a;b>(int a); __global__ void " + "x" * 400 + "(")
def test_compiled_and_python_kernel_counts_are_identical(text: str) -> None:
    codemap = CodeMap(scan_python(text).spans)
    assert launches.count_kernel_defs(text, codemap) == launches.count_kernel_defs_python(text, codemap)


# --- bad arguments: raised, never a crash, a leak or an answer the Python would not give ----

BAD_SPANS = [(i, i + 1, None) for i in range(0, 20000, 2)] + [("bad", 1, None)]  # 10,000 good, then one bad


@needs_claunch
@pytest.mark.parametrize("call", ["structure", "definitions", "count_kernels", "pairs", "launches"])
def test_bad_spans_raise_and_leak_nothing(call: str) -> None:
    """`count_kernels` kept the two span arrays it had read (16 bytes a span) when a later span
    was bad: 160 kB a call here."""
    import tracemalloc

    text = "__global__ void k() {}"
    args = {"structure": (text, BAD_SPANS), "definitions": (text, BAD_SPANS, [(0, 10)]),
            "count_kernels": (text, BAD_SPANS, "__global__", ()), "pairs": (text, BAD_SPANS, "("),
            "launches": (text, BAD_SPANS)}[call]
    fn = getattr(_claunch, call)
    with pytest.raises(TypeError):
        fn(*args)
    tracemalloc.start()
    try:
        for _ in range(20):
            with pytest.raises(TypeError):
                fn(*args)
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert kept < 100_000, f"{call} kept {kept} bytes after 20 failed calls"


@needs_claunch
def test_kernel_start_outside_the_text_answers_as_the_python() -> None:
    """Before the text the Python finds no kernel (-1); the compiled one raised IndexError."""
    for lt in (-1, -5, -(1 << 62)):
        assert _claunch.kernel_start("k<<<", lt) == launches._kernel_start_python("k<<<", lt) == -1
    for lt in (5, 1 << 40):
        with pytest.raises(IndexError):
            launches._kernel_start_python("k<<<", lt)
        with pytest.raises(IndexError):
            _claunch.kernel_start("k<<<", lt)


@needs_claunch
@pytest.mark.parametrize("span", [(0, -3), (-1, 5), (5, 3), (0, 99)])
def test_definitions_refuses_a_candidate_outside_the_text(span: tuple[int, int]) -> None:
    """The text is read from a candidate's end on: an end before the text read memory before it
    (here an answer made of that memory)."""
    with pytest.raises(IndexError):
        _claunch.definitions("x f() {}", [], [span], ())


@needs_claunch
@needs_claunch
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=6), def_texts, st.sampled_from(["(", "{", "f() {", "f() { (", "g(); "]))
@example(6, "__device__ int f(int x) { return x; }", "(")  # six unclosed: more than twice the text read, then paired
@example(2, "__global__ void k() { { }", "f() {")
def test_definitions_read_on_or_paired_give_the_same_closers(unclosed: int, text: str, opener: str) -> None:
    """`definitions` reads on from each opener to its closer until it has read twice the text,
    then pairs every bracket: qualifiers whose '(' or '{' never closes each read to the end, so
    a few of them before a text switch it to the pairing part way (each way against Python)."""
    from musify.passes.hazards import common

    text = ("__device__ " + opener) * unclosed + text
    kernel, device = frozenset({"__global__"}), frozenset({"__device__"})
    compiled = list(common.device_functions(text, CodeMap(scan_python(text).spans), kernel, device))
    assert compiled == list(common.device_functions_python(text, CodeMap(scan_python(text).spans), kernel, device))


def test_definitions_far_outside_the_text_does_not_crash() -> None:
    """An end far below the text was a read of unmapped memory: the interpreter died (SIGSEGV)."""
    code = ("from musify.frontend import _claunch\n"
            "try:\n    _claunch.definitions('x f() {}', [], [(0, -(1 << 40))], ())\n"
            "except IndexError:\n    print('refused')\n")
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60,
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert done.returncode == 0 and done.stdout.strip() == "refused", (done.returncode, done.stderr[-500:])


@needs_claunch
@pytest.mark.parametrize("nth", [3000, 5000, 7000])
def test_definitions_out_of_memory_keeps_nothing(nth: int) -> None:
    """The bracket pairing grows its closer array on every '(': when that realloc failed the old
    array was dropped (`p->close = realloc(p->close, ...)`), 16 to 64 kB here. Three qualifiers
    before the unclosed '(' each read on to the end of the text, more than the reading may
    (`scan_closer`'s budget), so the text is paired."""
    import tracemalloc

    testcapi = pytest.importorskip("_testcapi")
    text = "__device__ " * 3 + "void f" + "(" * 10000 + ")"
    tracemalloc.start()
    testcapi.set_nomemory(nth, nth + 1)  # the nth allocation from here fails, the others succeed
    try:
        with pytest.raises(MemoryError):
            _claunch.definitions(text, [], [(0, 10), (11, 21), (22, 32)])
    finally:
        testcapi.remove_mem_hooks()
    kept, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert kept < 8000, f"{kept} bytes kept after a failed allocation"


@pytest.mark.parametrize("pure", [False, True])
def test_a_function_is_named_past_its_attributes(pure: bool, monkeypatch) -> None:
    """`__launch_bounds__(...)` (or `__attribute__((...))`) between the qualifier and the name is
    not the function's name, on the compiled search and on the reference: FlashInfer's kernels
    were all reported "in __launch_bounds__()"."""
    from musify.passes.hazards import common

    if pure:
        monkeypatch.setattr(common, "_NATIVE", None)
    text = ("__global__ __launch_bounds__(256) void k(int a) { }\n"
            "template <int N> __global__ void __launch_bounds__(256, 2) scale(float* a) {}\n"
            "__device__ __attribute__((noinline)) __attribute__((x)) int f(int x) { return x; }\n"
            "__global__ void __launch_bounds__(256) /* ( */ g(int a) {}\n"
            "__global__ void plain(int a) {}\n")
    found = scan_python(text)
    names = [f.name for f in common.device_functions(text, found.code_map(), frozenset({"__global__"}),
                                                     frozenset({"__device__"}), found.directives)]
    assert names == ["k", "scale", "f", "g", "plain"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(def_texts)
@example("__global__ void k(int *a) { if (a) { a[0] = 1; } }\n__device__ int f(int x) { return x; }")
def test_the_function_holding_an_offset_is_the_first_whose_body_holds_it(text: str) -> None:
    """`FunctionList.holding` (a bisection of the body starts) answers as a scan of every function
    for every offset, the question inline assembly and the features pass ask of each use."""
    from musify.passes.hazards import common

    found = scan_python(text)
    functions = common.device_functions(text, found.code_map(), frozenset({"__global__"}), frozenset({"__device__"}),
                                        found.directives)
    for offset in range(len(text) + 1):
        scanned = next((k for k, f in enumerate(functions) if f.body_start < offset < f.end), -1)
        assert functions.holding(offset) == scanned, (text, offset)

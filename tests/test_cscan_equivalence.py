"""The compiled scanner (`_cscan`) and the pure-Python one give identical scans.

Migration output depends on every field of a scan (which identifiers, in which context, where
comments and literals are, which problems), so the compiled path is only allowed to be faster:
a generated input where any field differs is a bug in one of them.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import sysconfig

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from musify.engine.edits import Edit
from musify.frontend import scanner
from musify.frontend.scanner import VENDOR_PREFIXES, Scan, line_starts_python, scan_python
from musify.passes.identifiers import (
    USE,
    _in_nested_namespace_head,
    _opens_a_list_item,
    previous_token_python,
    renames,
    renames_python,
    unknown_use_python,
)

try:
    from musify.frontend import _cscan

    # bound here too: under MUSIFY_PURE_PYTHON=1 the scanner module leaves the compiled one alone
    _cscan.bind(scanner.Ident, scanner.Include, scanner.Directive, scanner.Problem, tuple(scanner.Ctx))
except ImportError:  # no compiler at install time: the build-check test below says so
    _cscan = None

needs_cscan = pytest.mark.skipif(_cscan is None, reason="the compiled scanner is not built")

# pieces of C, C++ and CUDA text the scanner treats specially, and some it must not
FRAGMENTS = [
    "cudaMalloc", "cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);", "__nv_bfloat16", "CUBLAS_STATUS_SUCCESS",
    "cuInit", "ncclComm_t", "thrust::cuda::par", "__cudaFoo", "xcudaMalloc", "cuda_x", "cu", "CU",
    "// comment cudaFree\n", "// continued \\\n cudaFree\n", "// crlf continued \\\r\ncudaX\r\n",
    "/* block cudaMemset */", "/* never closed", "*/", "/", "/*", "//",
    '"cudaMalloc in a string"', '"escaped \\" quote"', '"line \\\n continued"', '"unterminated\n',
    '"\\', "'c'", "'\\''", "'x", "1'000'000", "u8'a'", "L'b'", "u'c'", "U'd'", "x'e'",
    'R"(raw cudaFree)"', 'R"delim(raw )" cuda)delim"', 'u8R"(x)"', 'LR"(y)"', 'R"(never closed',
    'xR"(not raw)"', 'R"toolongdelimiter1234(x)toolongdelimiter1234"', 'R"a b(x)a b"', 'R"',
    'R"""(q "cudaFree" )"" )"""', 'R""(x)""', 'R"x"(y)x""',
    "#include <cuda_runtime.h>\n", '#include "kernel.cuh"\n', "#include <unclosed\n", "# include_next <x.h>\n",
    "#import <y>\n", "#define CUDA_CHECK(x) cudaCheck(x)\n", "#define cudaAlias cudaMalloc\n",
    "#define X \\\n cudaFree\n", "#undef cudaX\n", "#ifdef __CUDACC__\n", "#ifndef CUDART_VERSION\n",
    "#if CUDA_VERSION >= 11000\n", "#elif defined(__CUDA_ARCH__)\n", "#endif\n", "#error no cudaFoo\n",
    "#warning don't\n", "#pragma unroll\n", "#\n", "  #  define  cuA 1\n", "\ufeff#define cuB\n",
    "a # b", "#x", "#define S(x) #x\n", "#define P(a, b) a ## b\n", "\n", "\r\n", "\\\n", " ", "\t",
    "é", "ücudaX", "Ωnv", "cudaé", "\udc80", "\udcffcuda", "𝔘", "𝔘cuda", "\u00a0", "\u3000",
    "__global__ void k(int *a) { a[threadIdx.x] = 0; }", "k<<<1, 32>>>(d);", "0xffffffff", "x.cudaY",
]

names = st.sampled_from(FRAGMENTS)
pieces = st.one_of(names, names, names, st.text(max_size=8),
                   st.text(alphabet="/*\"'#\\\nR()u8LxcuCU_ \r", max_size=12))
texts = st.lists(pieces, max_size=40).map("".join)
PREFIX_SETS = [VENDOR_PREFIXES, ("cu",), ("cu", "cud", "cuda", "CU_", "thr", "__n", "x"), ("c", "_", "R", "u8")]


def _fields(s: Scan) -> tuple:
    return (s.idents, s.includes, s.directives, s.spans, s.problems)


def _compiled(text: str, prefixes: tuple[str, ...]) -> tuple:
    found = _cscan.scan(text, prefixes)
    assert found is not None
    rows, itemsize, names = found[:3]
    assert itemsize == 4 and len(rows) % 16 == 0  # four 4-byte integers a row below 2 GB
    idents = scanner.native_idents(rows, itemsize, names, found[7])
    # the contexts' bits answer `holds_context` as the rows do (its reference)
    assert [idents.holds_context(c) for c in scanner.Ctx] == [c in idents.data[3::4] for c in scanner.Ctx]
    return (idents, *found[3:7])


@needs_cscan
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, st.sampled_from(PREFIX_SETS))
@example('R"(x)"L', VENDOR_PREFIXES)
@example("écudaX 𝔘cuda ücuda_y cudaé", VENDOR_PREFIXES)
@example("#define cuA cuB\n#define\\\n cuC cuD\n", VENDOR_PREFIXES)
def test_compiled_and_python_scans_are_identical(text: str, prefixes: tuple[str, ...]) -> None:
    assert _compiled(text, prefixes) == _fields(scan_python(text, prefixes))


@needs_cscan
@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=300))
@example(b"a\x00b /* c\x00 */ \x00\"s\x00\" // x\x00y\n#define cuA \x00 cuB\n'\x00'")
@example(b"\x00\x00 cuX\x00 /")
def test_identical_on_random_bytes(data: bytes) -> None:
    text = data.decode("utf-8", "surrogateescape")
    assert _compiled(text, VENDOR_PREFIXES) == _fields(scan_python(text, VENDOR_PREFIXES))


@needs_cscan
def test_result_objects_are_the_scanners_own_types() -> None:
    s = scanner.scan('#include <a.h>\n#define cuX 1\n/* c */ "s" cudaY;\n#error x\n"open', ("cu",))
    assert s == scan_python('#include <a.h>\n#define cuX 1\n/* c */ "s" cudaY;\n#error x\n"open', ("cu",))
    assert type(s.idents[0]) is scanner.Ident and s.idents[0].ctx is scanner.Ctx.MACRO_NAME
    assert type(s.includes[0]) is scanner.Include and type(s.directives[0]) is scanner.Directive
    assert type(s.problems[0]) is scanner.Problem and s.spans[0][2] is scanner.Ctx.INCLUDE


@needs_cscan
def test_prefixes_the_compiled_scanner_cannot_take_fall_back_to_python() -> None:
    assert _cscan.scan("écu", ("é",)) is None  # not ASCII
    assert _cscan.scan("a::b", ("a::",)) is None  # not a word
    assert scanner.scan("x écu", ("é",)).idents == scan_python("x écu", ("é",)).idents


@needs_cscan
def test_many_distinct_names_keep_their_first_use_order() -> None:
    """The compiled scanner keeps its table of names itself (growing as names come): hundreds of
    them, met again in another order, in each string width, give the Python scanner's table."""
    names = [f"cu{i}x" for i in range(700)] + ["cuÿ", "cuĀ", "cu𐀀", "cué", "cué"]
    for tail in ("", "é", "Ā", "𐀀"):
        text = " ".join(names) + " " + " ".join(reversed(names)) + " " + tail
        assert _compiled(text, ("cu",)) == _fields(scan_python(text, ("cu",)))


@needs_cscan
def test_compiled_prefixes_follow_each_call() -> None:
    """The compiled scanner keeps the last prefixes it compiled: a call with other prefixes (an
    equal tuple too, a refused one in between) scans with its own."""
    text = "cudaX cuY thrZ __nvW xQ"
    for prefixes in (("cu",), ("thr", "x"), tuple(["cu", "x"][:1]), ("é",), ("cu", "__n"), ("thr", "x")):
        assert scanner.scan(text, prefixes).idents == scan_python(text, prefixes).idents, prefixes


# name -> the Edit fields after its span, as `identifiers.fast_renames` makes them
FAST = {name: Edit(0, 0, *fields)[2:] for name, fields in {
    "cudaMalloc": ("musaMalloc", "cudaMalloc", "runtime", "function", False),
    "cuInit": ("muInit", "cuInit", "driver", "function", False),
    "CUBLAS_STATUS_SUCCESS": ("MUBLAS_STATUS_SUCCESS", "CUBLAS_STATUS_SUCCESS", "cublas", "enum", True)}.items()}
SKIP = {"cuda_x", "cudaMemcpyHostToDevice", "cu"}
FIRST = {"cudaMemcpy": Edit(0, 0, "musaMemcpy", "cudaMemcpy", "runtime", "function", True)[2:],
         "cuda_x": FAST["cuInit"]}  # (a name in SKIP too: `first` is asked first)


@needs_cscan
@settings(max_examples=200, deadline=None)
@given(texts)
def test_compiled_renames_and_line_starts_match_python(text: str) -> None:
    idents = scan_python(text, VENDOR_PREFIXES).idents
    edits, rest, uses = renames(idents, FAST, SKIP, _cscan)
    assert (edits, rest, uses) == renames_python(idents, FAST, SKIP) and uses == []
    assert all(type(e) is Edit for e in edits) and all(type(i) is scanner.Ident for i in rest)
    unknown = {ident.name for ident in idents if ident.name not in FAST and ident.name not in SKIP}
    for some in (unknown, set(sorted(unknown)[::2]), set()):  # every unrecognised name, half of them, none
        compiled, python = set(), set()  # the names each finds declared
        assert renames(idents, FAST, SKIP, _cscan, text, some, compiled) == \
            renames_python(idents, FAST, SKIP, text, some, python)
        assert compiled == python
    # inferred renames: the first use of each name left to the pass, the others renamed
    for first in (FIRST, {name: FAST["cuInit"] for name in sorted(unknown)[::2]}):
        compiled, python = set(), set()
        assert renames(idents, FAST, SKIP, _cscan, text, unknown, compiled, first) == \
            renames_python(idents, FAST, SKIP, text, unknown, python, first)
        assert compiled == python
    assert _cscan.line_starts(text) == line_starts_python(text)
    for at in range(0, len(text) + 1, max(1, len(text) // 12)):
        assert _cscan.previous_token(text, at) == previous_token_python(text, at)


DECLARING = ["int ", "const cudaX *", "T& ", "vector<int> ", "map<K, V> *", "a < b > ", "~", "return ", "sizeof ",
             "x.", "p->", "a::", "{ ", "f(a, ", "enum E { A, ", "= ", "* ", "& ", "(", "9 ", "\\\n", " \t\r\n",
             "new ", "defined ", "_x ", "é "]


@needs_cscan
@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(DECLARING), st.text(alphabet="*&<>~{},.:-( \nax_1", max_size=4)),
                max_size=6).map("".join))
@example("")
def test_compiled_unknown_use_matches_python(before: str) -> None:
    text = before + "cudaZ;"
    for at in range(len(text) + 1):
        assert _cscan.unknown_use(text, at) == unknown_use_python(text, at), (text, at)


# what may stand before an unrecognised name: a declaration, a member access, a use, a nested namespace
BEFORE_UNKNOWN = [*DECLARING, "do { ", "enum { ", ", x", "namespace a::", "namespace a::inline b::", "namespace x { ", "using namespace std; ",
                  "#define ", "CUDA_CHECK(", "x = ", "\n", "// namespace\n", " " * 250]


@needs_cscan
@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(BEFORE_UNKNOWN), st.sampled_from(["cudaZ", "CUDA_CHECK", "cuQ", " = 1", "(x);", "}"]),
                          st.text(alphabet="*&<>~{},.:-( \nax_1", max_size=4)), max_size=12).map("".join))
@example("namespace a::cudaZ { cudaZ; } x.cudaZ; " + " " * 250 + "cudaZ")
def test_compiled_unknown_uses_match_python(text: str) -> None:
    """`renames` decides the uses of unrecognised names (declared, reported, member, left to the
    pass) as its Python reference does, and as the pass's own `_unknown` would."""
    idents = scan_python(text, VENDOR_PREFIXES).idents
    unknown = {"cudaZ", "CUDA_CHECK", "cuQ"}
    compiled, python = set(), set()
    got = renames(idents, FAST, SKIP, _cscan, text, unknown, compiled)
    assert got == renames_python(idents, FAST, SKIP, text, unknown, python) and compiled == python
    for start, name in got[2]:
        reported = unknown_use_python(text, start) == USE or _opens_a_list_item(text, start, start + len(name))
        assert reported and not _in_nested_namespace_head(text, start), (text, start)


def _c_compiler() -> str | None:
    cc = sysconfig.get_config_var("CC") or "cc"
    return shutil.which(shlex.split(cc)[0]) if cc.strip() else None


def test_compiled_scanner_is_built_where_a_compiler_exists() -> None:
    """A silent fallback would cost users several times the run time: where the build could have
    compiled `_cscan.c`, the compiled scanner must be the one in use."""
    if os.environ.get("MUSIFY_PURE_PYTHON", "") not in ("", "0"):
        pytest.skip("MUSIFY_PURE_PYTHON selects the Python scanner")
    if _c_compiler() is None:
        pytest.skip("no C compiler: the pure-Python scanner is the expected one")
    assert scanner.SCANNER == "c", (
        "musify/frontend/_cscan.c was not built although a C compiler exists: reinstall with "
        "`pip install -e .` (or `python setup.py build_ext --inplace`) and check the build log")


def test_environment_variable_selects_the_python_scanner() -> None:
    code = "from musify.frontend import scanner; print(scanner.SCANNER)"
    env = dict(os.environ, MUSIFY_PURE_PYTHON="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "python"


@needs_cscan
def test_renames_out_of_memory_raises_memory_error() -> None:
    """Any allocation of `renames` failing gives MemoryError: when its per-name decision array
    could not be had it returned NULL with no exception set (a SystemError)."""
    testcapi = pytest.importorskip("_testcapi")
    idents = scan_python("cudaMalloc(p); cuInit(0); cuda_x; cudaFree(p);", VENDOR_PREFIXES).idents
    want = _cscan.renames(idents.data, idents.names, FAST, SKIP, 0xff)
    for nth in range(40):
        testcapi.set_nomemory(nth, nth + 1)  # the nth allocation from here fails, the others succeed
        try:
            got = _cscan.renames(idents.data, idents.names, FAST, SKIP, 0xff)
        except MemoryError:
            continue
        finally:
            testcapi.remove_mem_hooks()
        assert got == want


@needs_cscan
@pytest.mark.parametrize("gap", [*range(4), *range(240, 252), 300])
@pytest.mark.parametrize("word", ["namespace", "namespac", "nnamespace", "namespacé"])
def test_namespace_near_the_window_edge(gap: int, word: str) -> None:
    """A use of an unrecognised name is left to the pass when "namespace" stands within the 256
    characters before it (`_namespace_near`): at and around the window's edge, in one-byte text
    (the compiled look-up by `memchr`) and in wider text, as the Python reference decides."""
    for tail in ("", "Ā"):
        text = f"x {word}{' ' * gap}= CUDA_CHECK(x);{tail}"
        idents = scan_python(text, VENDOR_PREFIXES).idents
        compiled, python = set(), set()
        assert renames(idents, FAST, SKIP, _cscan, text, {"CUDA_CHECK"}, compiled) == \
            renames_python(idents, FAST, SKIP, text, {"CUDA_CHECK"}, python)


@needs_cscan
def test_every_one_byte_character_around_names() -> None:
    """In a one-byte text the compiled scanner reads a character's word class from a table
    (`LATIN1_WORD`): each of the 256, before, inside and after candidate names, gives what the
    Python scanner's `\\w` gives."""
    for c in map(chr, range(256)):
        text = f"cu{c}x {c}cudaX cudaX{c} x{c}cuY {c}{c}cuZ{c}é"
        for prefixes in (VENDOR_PREFIXES, ("cu",)):
            assert _compiled(text, prefixes) == _fields(scan_python(text, prefixes)), repr(c)


@pytest.fixture(params=[2, 1, 0], ids=["avx2", "ssse3", "sse2"])
def simd_path(request):
    """Each of the paths the compiled scanner takes over ASCII text (`label_ascii`), as far as this
    CPU runs it (a level it lacks runs the best it has): a path the CPU picks must not be the only
    one tested."""
    if _cscan is None:
        pytest.skip("the compiled scanner is not built")
    was = _cscan._simd(request.param)
    yield request.param
    _cscan._simd(was)


ASCII_FRAGMENTS = [f for f in FRAGMENTS if f.isascii()]
ascii_texts = st.lists(st.one_of(st.sampled_from(ASCII_FRAGMENTS), st.sampled_from(ASCII_FRAGMENTS),
                                 st.text(alphabet=[chr(c) for c in range(128)], max_size=20)),
                       max_size=60).map("".join)
# prefixes sharing their first two characters (one list to compare), a one-character one, digits
PREFIX_SETS_ASCII = [*PREFIX_SETS, ("cud", "cub", "cuda", "cu_", "c1", "__nv", "__n", "__c", "9x", "Q")]


@needs_cscan
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(ascii_texts, st.sampled_from(PREFIX_SETS_ASCII), st.integers(0, 40))
@example("cudaX", VENDOR_PREFIXES, 0)
def test_ascii_texts_on_every_vector_path(simd_path, text: str, prefixes: tuple[str, ...], pad: int) -> None:
    """All-ASCII text, where the compiled scanner finds candidates 16 or 32 bytes at a time: the
    padding moves each piece across the blocks' boundaries."""
    text = "x" * pad + " " + text
    assert _compiled(text, prefixes) == _fields(scan_python(text, prefixes))


@needs_cscan
def test_names_across_blocks_and_windows(simd_path) -> None:
    """Names that start or end at each offset around a 16-byte block's edge and around the 4096
    bytes whose blocks the compiled scanner reads at a time (`WINDOW`), one longer than a window,
    a name at the text's very end, words running into candidates (not candidates)."""
    long_name = "cuda" + "X" * 5000
    for edge in (16, 32, 4096, 8192):
        for pad in range(edge - 20, edge + 4):
            for piece in ("cudaMalloc(", "xcudaY cuZ", "_cu", "cu", long_name, "__nv_x9 9cuda a_cuB"):
                for text in ("a" * pad + " " + piece, "a" * pad + piece):
                    for prefixes in (VENDOR_PREFIXES, ("cu", "c", "__nv")):
                        assert _compiled(text, prefixes) == _fields(scan_python(text, prefixes)), (edge, pad, piece)
                text = "/" * pad + piece + " // cuC\n#define cuD cuE\n"
                assert _compiled(text, VENDOR_PREFIXES) == _fields(scan_python(text, VENDOR_PREFIXES)), (edge, pad, piece)

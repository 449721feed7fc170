"""The warp-size pass's parse precheck (`warp_size.may_report`) never hides a finding.

A function is parsed only when `may_report` says some check could fire; these tests run the pass
on generated device functions with the precheck and with it forced to say yes, and require the
same diagnostics (positions, messages, sites) both ways. The fragments are the pieces each check
looks for and their near misses (a 32 that is a tile size, a shuffle method of a tile, a mask
passed on), so both answers of the precheck are exercised.
"""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from musify.options import Options
from musify.passes.hazards import warp_size
from musify.rules import load_ruleset
from musify.runner import edit_text

FRAGMENTS = [
    "int lane = threadIdx.x & 31;", "int w = threadIdx.x >> 5;", "int w = tid / 32;", "int l = tid % 0x20;",
    "if (threadIdx.x < 32) s = 1;", "if (lane_id >= 32) return;", "if (warpSize == 32) s = 2;",
    "s = __shfl_down_sync(0xffffffff, s, 16);", "s = __shfl_xor_sync(m, s, 1, 32);",
    "for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(m, s, o);",
    "for (int o = 1; o < 32; o <<= 1) s += __shfl_xor(s, o);", "s += tile32.shfl_down(s, o);",
    "unsigned m = __ballot_sync(~0u, p);", "int c = __popc(m);", "if (m == 0xFFFFFFFF) s = 3;",
    "unsigned int full_mask = 0xffffffffu;", "unsigned mask = __activemask();", "s = helper(s, mask);",
    "__syncwarp(0xFFFFFFFF);", "__syncwarp(4294967295u);", "cg::thread_block_tile<32> tile32;",
    "int k = i / 32;", "int r = v % 31;", "x >>= 5;", "int t = blockDim.x * 2;", "s += 0x1F;",
    "int tile_id = i / 16;", "a[i] = 10;", "s = ~s;", "float f = 32.0f;", "int q = 020;",
    "// lane & 31 in a comment\n", "/* __shfl_sync(0xffffffff, v, 0, 32) */", "#define W 32\n",
    "unsigned b = __ballot(p);", "int c = __popc(b);", "uint32_t bits = __ballot(p > 0); s = bits & 1;",
    "s = v >> 5;", "s = __shfl_xor(s, 16);", "int v = lane;", "int warp_id = threadIdx.x / warpSize;", "if (tx < 32) s = 4;", "s++;",
    # beyond ASCII: punctuation and spaces the precheck reads past, letters and digits it parses for
    "/* tile — ’32’ */", "int k = i\xa0/ 32;", "s = v\u2003>> 5;", "int tıd = threadIdx.x; s = tıd & 31;",
    "int w = tid / ٣٢;", "s = __shfl_xor(s, ١٦);", "int maſk = __activemask();", "s = é;", "unsigned u = 0xFFFFFFFF\xa0;",
    # where the number stands: a bare right operand of the checked operator, or anything else
    "__shared__ float part[32];", "s = part[31];", "s = f(tid, 32);", "int t = 32;", "s = tid & (31);",
    "s = tid & -31;", "s = tid &= 31;", "s = tid&031u;", "s = tid >> 0x5;", "s = tid <= 31;", "s = tid > 0x1F;",
    "s = tid >= 32;", "s = tid & /* [ */ 31;", "s = tid & // [\n 31;", "s = tid &\\\n 31;", "s = tid %\xa032;",
    "s = tid ^ 32;", "s = tid && 31;", "s = tid == 32;", "s = (unsigned)32 & tid;", "s = tid % 32.0f;",
    "s = tid &\n#if 1\n 31\n#endif\n;", "s = tid / 32ull;", "s = 32 > tid;",
    # 31 spelled `32 - 1` (the lane-mask idiom with the warp size written out), and near misses
    "s = tid & (32 - 1);", "s = tid & 32 - 1;", "s = tid <= (0x20 - 1);", "s = tid & (32 - lane);",
    "s = (32 - 1) & tid;", "s = tid & ((32) - 1);", "s = tid & (32 - 2);",
    # a lane mask kept: passed on whole, or read as bits
    "unsigned am = __activemask();", "s = g(am);", "s = g(v, am);", "s = g(am, v);", "s = am & 1;", "s = g((am));",
    "s = g(v + am);", "if (am) s = 1;", "s = h<int>(am);", "s = g(&am);", "s = o.g(am);", "s = am;", "am = 0;",
    "unsigned am2 = g([&] { return 1; }(), __activemask()); s = am2 >> 1;", "unsigned am3{__activemask()};",
    "unsigned am4(__activemask());", "s = g(__activemask());", "s = __activemask() & 1;", "s = g((v, am));",
    "unsigned am5 = (v = 1, __activemask());", "s = g(am /* kept */);", "if (__activemask()) s = 1;",
    "int buf[2] = {v, am};", "s = f(v, g(am), 1);", "s = f(v, (am), 1);", "unsigned long am6 = __activemask() | 1;",
    "s += __shfl_down_sync(__activemask(), s, o);", "unsigned am7 = [&]() { return __activemask(); }(); s = am7 & 1;",
    "unsigned am8 = {__activemask()}; s = am8 & 1;", "s = f({__activemask()});", "T* am9(__activemask()); s = am9 & 1;",
    "if (v) { s = 1; } s = v * g(__activemask());", "do { s |= __activemask(); } while (0);",
    "unsigned am10 = [&] { return 1; }() + __activemask(); s = am10 >> 1;", "s = sizeof(__activemask());",
    # the warp size compared with 32, or 32 beside it otherwise
    "if (32 == warpSize) s = 1;", "if (warpSize >= 32) s = 1;", "s = part[32] + warpSize;", "int nw = 32 / warpSize;",
    "s = warpSize != /* c */ 32;", "s = warpSize == 0x20u;", "s = f(warpSize, 32);",
]
PARAMS = ["int n", "int tid", "const float* x, int n", "unsigned lane"]

_RULES = load_ruleset()


def _diagnostics(text: str, precheck: bool) -> list:
    real = warp_size.may_report
    if not precheck:
        warp_size.may_report = lambda snippet, names, in_code=None: True
    try:
        ctx, _ = edit_text(text, "k.cu", _RULES, Options())
    finally:
        warp_size.may_report = real
    return [d for d in ctx.diagnostics if d.origin == "pass:warp_size"]


SEEN = {"skipped": 0, "reported": 0}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# one function for each reason the precheck gives to parse, with nothing else that would do
@example("int n", ["unsigned b = __ballot(p);", "int c = __popc(b);", "int k = i / 32;"])  # MU2041
@example("int n", ["if (warpSize == 32) s = 2;"])  # MU2025
@example("int n", ["unsigned int full_mask = 0xffffffffu;"])  # MU2020, a mask variable
@example("int n", ["s = v >> 5;", "s = __shfl_xor(s, 16);"])  # MU2023, an offset of 16
@example("unsigned lane", ["int k = lane / 32;"])  # MU2021, a tid-like parameter
@example("int n", ["int l = threadIdx.x % 0x20;"])  # MU2021, a thread index
@given(st.sampled_from(PARAMS), st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=5))
def test_precheck_keeps_every_finding(params: str, body: list[str]) -> None:
    text = f"__global__ void k({params})\n{{\n    int s = 0, i = 0, p = 1, v = 0;\n    " + \
        "\n    ".join(body) + "\n}\n"
    with_check = _diagnostics(text, True)
    assert with_check == _diagnostics(text, False), text
    fn_start = text.index("__global__")
    SEEN["skipped" if not warp_size.may_report(text[fn_start:], warp_size._names_of(_RULES)) else "reported"] += 1


def test_both_answers_seen() -> None:
    """The property above saw functions the precheck skips and functions it parses (run after it)."""
    if SEEN["skipped"] + SEEN["reported"] == 0:
        for body in (["int k = i / 32;"], ["int lane = threadIdx.x & 31;"]):
            test_precheck_keeps_every_finding.hypothesis.inner_test("int n", body)
    assert SEEN["skipped"] > 0 and SEEN["reported"] > 0, SEEN


def test_tile_size_is_not_parsed() -> None:
    """A 32 that is a tile size, with no thread index, shuffle or mask: the parse is skipped."""
    names = warp_size._names_of(_RULES)
    assert not warp_size.may_report("__global__ void k(int n) { cg::thread_block_tile<32> t; int k = n / 32; }",
                                    names)
    assert warp_size.may_report("__global__ void k(int n) { int lane = threadIdx.x & 31; }", names)
    assert warp_size.may_report("__global__ void k(int n) { /* é */ int k = n / 32; }", names)  # a letter beyond ASCII
    assert warp_size.may_report("__global__ void k(int n) { int tıd = 0; int k = n / 32; }", names)
    assert warp_size.may_report("__global__ void k(int n) { int k = n / ٣٢; }", names)
    # a 32 that sizes or indexes an array, or is an argument, beside a thread index
    assert not warp_size.may_report("__global__ void k(int n) { __shared__ float p[32]; p[threadIdx.x] = f(n, 32); }",
                                    names)
    assert warp_size.may_report("__global__ void k(int n) { __shared__ float p[32]; p[threadIdx.x % 32] = 0; }", names)
    assert warp_size.may_report("__global__ void k(int n) { int w = threadIdx.x >> /* lanes */ 5; }", names)
    # punctuation and spaces beyond ASCII: read past as on ASCII text
    assert not warp_size.may_report("__global__ void k(int n) { /* — ’ */ int k = n\xa0/ 32; }", names)


def test_32_minus_1_is_31() -> None:
    """A lane computed as `& (32 - 1)` (torch_scatter's segment_coo_cuda.cu) is the lane arithmetic
    of `& 31`, and a first-warp test against `32 - 1` is one against 31; a 32 minus anything else,
    or on the left of the `&`, is not."""
    kernel = "__global__ void k(int* x, int n)\n{\n    int row = blockIdx.x * blockDim.x + threadIdx.x;\n" \
             "    int lane = row & (32 - 1);\n    if (threadIdx.x <= 32 - 1) x[0] = lane;\n" \
             "    x[1] = row & (32 - 2);\n    x[2] = n & (32 - 1);\n    x[3] = (32 - 1) & row;\n}\n"
    found = [(d.id, d.line, d.args["expr"]) for d in _diagnostics(kernel, True)]
    assert found == [("MU2021", 4, "row & (32 - 1)"), ("MU2024", 5, "threadIdx.x <= 32 - 1")]


def test_a_kept_name_is_a_trigger() -> None:
    """A function whose only trigger is a shuffle or a lane-mask result (names MUSA keeps, so no
    candidate of the scan) is checked: an offset loop from 16 with a mask variable, a ballot
    counted with __popc."""
    loop = "__global__ void k(unsigned m, float* x)\n{\n    float s = x[0];\n" \
           "    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(m, s, o);\n    x[0] = s;\n}\n"
    counted = "__global__ void k(int* x)\n{\n    unsigned b = __ballot(x[0] > 0);\n    x[1] = __popc(b);\n}\n"
    assert [d.id for d in _diagnostics(loop, True)] == ["MU2023"]
    assert [d.id for d in _diagnostics(counted, True)] == ["MU2041"]


def _every_function_checked(text: str) -> list:
    """The pass's diagnostics with none of its gates: every device function parsed and checked."""
    saved = warp_size.may_report, warp_size.file_may_report, warp_size.bodies
    warp_size.may_report = lambda snippet, names, in_code=None: True
    warp_size.file_may_report = lambda text, shuffles, results: True
    warp_size.bodies = lambda text, functions, shuffles, results: list(range(len(functions)))
    try:
        ctx, _ = edit_text(text, "k.cu", _RULES, Options())
    finally:
        warp_size.may_report, warp_size.file_may_report, warp_size.bodies = saved
    return [d for d in ctx.diagnostics if d.origin == "pass:warp_size"]


HEADS = ["__global__ void k(int n)", "__device__ int d(int tid)", "void host(int n)", "static int h(unsigned lane)"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example([("__device__ int d(int tid)", ["s = tid & 0x1f;"])])
@example([("__global__ void k(int n)", ["for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(m, s, o);"])])
@given(st.lists(st.tuples(st.sampled_from(HEADS), st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=5)),
                min_size=1, max_size=3))
def test_every_gate_keeps_every_finding(functions: list[tuple[str, list[str]]]) -> None:
    """The file's trigger test, the pick of bodies and the precheck together find what checking
    every device function finds."""
    text = "".join(f"{head}\n{{\n    int s = 0, i = 0, p = 1, v = 0, o = 1; unsigned m = 0;\n    "
                   + "\n    ".join(body) + "\n    return s;\n}\n" for head, body in functions)
    assert _diagnostics(text, True) == _every_function_checked(text), text

"""File-level shortcuts of the passes that find nothing in most files never hide a finding.

Each shortcut answers "this file cannot produce anything" (or "this launch needs no parse")
before the pass looks; each test runs the pass on generated files with the shortcut and with it
forced to say "look", and requires the same diagnostics, facts and edits both ways. The pieces
are what each pass looks for and their near misses (in device and host functions, comments,
macro bodies, strings, non-ASCII text), so both answers of each shortcut are exercised.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from musify.frontend.scanner import LineIndex
from musify.options import Options
from musify.passes import structure
from musify.passes._base import PassContext, ProjectInfo
from musify.passes.hazards import features, inline_asm, self_defines, warp_precheck, warp_size
from musify.passes.hazards.file_facts import device_functions_of, directive_at, without_comments
from musify.passes.languages import scan_c
from musify.rules import load_ruleset
from musify.runner import edit_text

_RULES = load_ruleset()
ROOT = Path(__file__).resolve().parents[1]


def _all_diagnostics(text: str) -> list:
    ctx, edits = edit_text(text, "k.cu", _RULES, Options())
    return [*ctx.diagnostics, sorted(ctx.facts.items()), list(edits)]


def _without_shortcut(module, name: str, answer: bool, text: str) -> list:
    """`_all_diagnostics` with the module's shortcut test `name` always giving `answer` (look)."""
    real = getattr(module, name)
    setattr(module, name, lambda *args: answer)
    try:
        return _all_diagnostics(text)
    finally:
        setattr(module, name, real)


def _context(text: str) -> PassContext:
    return PassContext("k.cu", text, scan_c(text, _RULES), _RULES, Options(), ProjectInfo(), LineIndex(text))


# --- the warp-size pass: `warp_precheck.file_may_report` -------------------------------------------

WARP_PIECES = [
    "int lane = threadIdx.x & 31;", "int w = threadIdx.x >> 5;", "int w = tid / 32;", "int l = tid % 0x20;",
    "if (threadIdx.x < 32) s = 1;", "if (warpSize == 32) s = 2;", "s = __shfl_down_sync(0xffffffff, s, 16);",
    "s = __shfl_xor_sync(m, s, 1, 32);", "for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(m, s, o);",
    "s += __shfl_xor(s, o);", "unsigned m = __ballot_sync(~0u, p);", "int c = __popc(m);",
    "if (m == 0xFFFFFFFF) s = 3;", "unsigned int full_mask = 0xffffffffu;", "unsigned mask = __activemask();",
    "__syncwarp(0xFFFFFFFF);", "__syncwarp(4294967295u);", "int k = i / 32;", "x >>= 5;", "s += 0x1F;",
    "s = ~s;", "float f = 32.0f;", "int q = 020;", "// lane & 31 in a comment\n", "/* __shfl_sync(~0, v, 0, 32) */",
    "const char* t = \"tid & 31\";", "int tile_id = i / 16;", "s = v.x32;", "s = a1f;", "/* é */", "s = 1;",
    "int v = lane;", "k<<<1, 32>>>(s);",
]
FUNCTION_HEADS = ["__global__ void k(int n)", "__device__ int d(int tid)", "void host(int n)",
                  "__device__ __forceinline__ unsigned f(unsigned lane)", "static int h(int tid)"]


def _warp_diagnostics(text: str, gate: bool) -> list:
    return _all_diagnostics(text) if gate else _without_shortcut(warp_size, "file_may_report", True, text)


WARP_SEEN = {"skipped": 0, "looked": 0}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example([("void host(int n)", ["int lane = threadIdx.x & 31;"]), ("__global__ void k(int n)", ["s = 1;"])])
@example([("__global__ void k(int n)", ["// lane & 31 in a comment\n"])])
@example([("__global__ void k(int n)", ["int k = i / 32;"])])  # a tile size: skipped
@example([("__device__ int d(int tid)", ["int w = tid / 32;"])])  # MU2021
@example([("__global__ void k(int n)", ["s += __shfl_xor(s, o);", "int tile_id = i / 16;"])])
@example([("__global__ void k(int n)", ["unsigned mask = __activemask();"])])
@given(st.lists(st.tuples(st.sampled_from(FUNCTION_HEADS), st.lists(st.sampled_from(WARP_PIECES), max_size=4)),
                min_size=1, max_size=3))
def test_warp_size_file_gate_keeps_every_finding(functions: list[tuple[str, list[str]]]) -> None:
    text = "".join(f"{head}\n{{\n    int s = 0, i = 0, p = 1, v = 0, o = 1; unsigned m = 0;\n    "
                   + "\n    ".join(body) + "\n    return s;\n}\n" for head, body in functions)
    assert _warp_diagnostics(text, True) == _warp_diagnostics(text, False), text
    ctx = _context(text)
    names = warp_size._names_of(_RULES)
    shuffles, results = _code_uses(ctx, names.shuffle), _code_uses(ctx, names.mask_result)
    WARP_SEEN["looked" if warp_precheck.file_may_report(text, shuffles, results) else "skipped"] += 1
    # the pass's one search for both sets, and its compiled pick of the bodies, against a search
    # for each name and the loop over the functions they replaced
    assert warp_precheck.trigger_uses(ctx) == (shuffles, results), text
    functions = device_functions_of(ctx)
    assert warp_precheck.bodies(text, functions, shuffles, results) == \
        warp_precheck.bodies_python(text, functions, shuffles, results), text


def _code_uses(ctx: PassContext, names: frozenset[str]) -> list[int]:
    """The offsets of the whole-word uses of `names` in code, in order (the reference)."""
    code = ctx.scan.code_map()
    return sorted(m.start() for name in names for m in re.finditer(rf"(?<![\w$]){re.escape(name)}(?![\w$])", ctx.text)
                  if code.is_code(m.start()))


def test_warp_size_file_gate_saw_both_answers() -> None:
    """The property above saw files the gate skips and files it lets through (run after it)."""
    if WARP_SEEN["skipped"] + WARP_SEEN["looked"] == 0:
        for body in (["int k = i / 32;"], ["int lane = threadIdx.x & 31;"]):
            test_warp_size_file_gate_keeps_every_finding.hypothesis.inner_test([("__global__ void k(int n)", body)])
    assert WARP_SEEN["skipped"] > 0 and WARP_SEEN["looked"] > 0, WARP_SEEN


def test_warp_size_file_gate_on_the_corpora() -> None:
    """Every file of corpora/ gives the same warp-size findings with the gate and without it."""
    for path in sorted((ROOT / "corpora").rglob("*")):
        if path.suffix in (".cu", ".cuh", ".h", ".cpp", ".hpp", ".mu"):
            text = path.read_bytes().decode("utf-8", "surrogateescape")
            assert _warp_diagnostics(text, True) == _warp_diagnostics(text, False), path


# --- the features pass: no launch and no device-wide sync, no device functions looked for ----------

FEATURE_PIECES = ["k<<<1, 2>>>(x);", "a <<<< b;", "\"<<<\" <<< 1;", "cudaDeviceSynchronize();", "// k<<<1, 2>>>(x);", "/* cudaDeviceSynchronize() */",
                  "const char* s = \"<<<\";", "int a = b << 3;", "s = 1;", "#define L k<<<1, 1>>>(0)\n"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example([("__global__ void k(int n)", ["k<<<1, 2>>>(x);"])])
@example([("__device__ int d(int tid)", ["cudaDeviceSynchronize();"])])
@given(st.lists(st.tuples(st.sampled_from(FUNCTION_HEADS), st.lists(st.sampled_from(FEATURE_PIECES), max_size=3)),
                min_size=1, max_size=3))
def test_features_gate_keeps_every_finding(functions: list[tuple[str, list[str]]]) -> None:
    text = "".join(f"{head}\n{{\n    " + "\n    ".join(body) + "\n    return 0;\n}\n" for head, body in functions)
    gated, known, reference = _context(text), _context(text), _context(text)
    assert features.run(gated) == []
    device_functions_of(known)  # found already (by the warp-size pass): no test for a launch in code
    assert features.run(known) == []
    syncs = reference.scan.idents.select(_RULES.tagged("device-sync"), (features.Ctx.CODE,))
    assert features.report(reference, syncs) == []
    assert gated.diagnostics == known.diagnostics == reference.diagnostics, text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example([("__global__ void k(int n)", ["s = 1;"]), ("void h(int n)", ["k<<<1, 2>>>(x);"])])
@example([("void h(int n)", ["k<<<1, 2>>>(x);"]), ("__device__ int d(int tid)", ["k<<<1, 2>>>(x);"])])
@given(st.lists(st.tuples(st.sampled_from(FUNCTION_HEADS), st.lists(st.sampled_from(FEATURE_PIECES), max_size=3)),
                min_size=1, max_size=4))
def test_features_launch_window_holds_every_body_launch(functions: list[tuple[str, list[str]]]) -> None:
    """`features.report` looks for launches in the bodies only where a '<<<' lies between the
    first body and the last end: never where some body holds one."""
    text = "".join(f"{head}\n{{\n    " + "\n    ".join(body) + "\n    return 0;\n}\n" for head, body in functions)
    found = device_functions_of(_context(text))
    rows = found.rows()
    in_a_body = any(text.find("<<<", fn.body_start, fn.end) >= 0 for fn in found)
    assert not in_a_body or text.find("<<<", min(rows[1::6]), max(rows[2::6])) >= 0, text


# --- the structure pass: plain launches in macro bodies are not parsed ---------------------------

LAUNCH_ARGS = ["", "a", "a, b", "__VA_ARGS__", "x.y, p->q[1]", "n * 2, f(n)", "Square{}", "(float)x", "#x",
               "a ## b", "\"s\"", "[=] __device__ (int i) { return i; }", "a \\\n, b", "sizeof(int)", "a b", "1 2",
               "x ?: y", "int"]
LAUNCH_CONFIGS = ["grid, block", "grid, block, 0, stream", "n / 256, 256", "1, 2 \\\n", "static_cast<int>(n), 1",
                  "dim3(1, 2), 32", "#g, 1", "g ## 1, 1"]
KERNEL_NAMES = ["kernel", "ns::kern<float, 4>", "k", "kern ## _t", "::k"]


def _structure_findings(text: str, shortcut: bool) -> list:
    return _all_diagnostics(text) if shortcut else _without_shortcut(structure, "well_formed", False, text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example([(True, "kernel", "grid, block", "__VA_ARGS__")])
@example([(True, "kernel", "grid, block, 0, stream", "__VA_ARGS__"), (False, "k", "n / 256, 256", "a")])
@example([(True, "k", "1, 2 \\\n", "a")])
@example([(True, "k", "#g, 1", "a ## b")])
@example([(True, "k", "1, 2", "a b")])
@given(st.lists(st.tuples(st.booleans(), st.sampled_from(KERNEL_NAMES), st.sampled_from(LAUNCH_CONFIGS),
                          st.sampled_from(LAUNCH_ARGS)), min_size=1, max_size=4))
def test_structure_shortcut_in_macro_bodies_keeps_every_finding(launches: list[tuple[bool, str, str, str]]) -> None:
    lines = ["__global__ void kernel(int a) {}"]
    for i, (in_macro, kernel, config, args) in enumerate(launches):
        launch = f"{kernel}<<<{config}>>>({args})"
        lines.append(f"#define LAUNCH{i}(...) {launch}" if in_macro else f"void f{i}() {{ {launch}; }}")
    text = "\n".join(lines) + "\n"
    assert _structure_findings(text, True) == _structure_findings(text, False), text


def test_structure_shortcut_on_the_corpora() -> None:
    """Every file of corpora/ gives the same launch counts and MU0007s with the shortcut and without."""
    for path in sorted((ROOT / "corpora").rglob("*")):
        if path.suffix in (".cu", ".cuh", ".h", ".cpp", ".hpp", ".mu"):
            text = path.read_bytes().decode("utf-8", "surrogateescape")
            if "<<<" in text:
                assert _structure_findings(text, True) == _structure_findings(text, False), path


def test_structure_facts_without_launches_or_kernels() -> None:
    """A file with neither `<<<` nor `__global__` gets the three counts, zero, in the usual order."""
    ctx = _context("int x;\n")
    assert structure.run(ctx) == []
    assert list(ctx.facts.items()) == [("kernels", 0), ("launches", 0), ("launches_parsed", 0)]


# --- the self-defines pass: a macro body without '/' is read as written ----------------------------

DEFINE_NAMES = ["cudaMalloc", "musaMalloc", "cudaFree", "CUDA_X", "cudaStream_t", "musaStream_t", "x"]
DEFINE_BODIES = [" ", "\t", " \\\n ", "/* c */", "// c", "/", "\"/*\"", "'/'", "(a)", "1", "a / b", "/**/",
                 "/* a\n b */", "é", "\r"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example([("cudaMalloc", ["musaMalloc"])])
@example([("cudaMalloc", [" ", "/* c */", "musaMalloc", "// c"])])
@given(st.lists(st.tuples(st.sampled_from(DEFINE_NAMES),
                          st.lists(st.sampled_from([*DEFINE_NAMES, *DEFINE_BODIES]), max_size=5)),
                min_size=1, max_size=4))
def test_self_defines_bodies_without_a_slash_as_written(defines: list[tuple[str, list[str]]]) -> None:
    text = "".join(f"#define {name} {''.join(body)}\nint {name}_use = 0; /* {name} */\n" for name, body in defines)
    ctx = _context(text)
    for ident in ctx.scan.idents.select(contexts=(self_defines.Ctx.MACRO_NAME,)):
        directive = directive_at(ctx, ident.start)
        if directive is not None:
            after = text[ident.end:directive.end]
            assert self_defines._body(ctx, ident.end, directive.end, after) == \
                without_comments(ctx, ident.end, directive.end), text
    real = self_defines._body
    self_defines._body = lambda ctx, start, end, after: without_comments(ctx, start, end)
    try:
        reference = _all_diagnostics(text)
    finally:
        self_defines._body = real
    assert _all_diagnostics(text) == reference, text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example([("cudaMalloc", ["1"]), ("cudaFree", []), ("x", ["(a)"])], " ")
@given(st.lists(st.tuples(st.sampled_from(DEFINE_NAMES),
                          st.lists(st.sampled_from([*DEFINE_NAMES, *DEFINE_BODIES, "0x1", "-", "\"", "_x", "\f"]),
                                   max_size=5)),
                min_size=1, max_size=4), st.sampled_from(["", " ", "\t", "("]))
def test_self_defines_bodies_passed_over_are_never_one_name(defines: list[tuple[str, list[str]]], gap: str) -> None:
    """A define `run` passes over for the character after its name (`_FIRST_AFTER`,
    `_NEVER_FIRST`, or a '(') has a body `_BODY_TOKEN` does not match: it could not be reported."""
    text = "".join(f"#define {name}{gap}{''.join(body)}\n" for name, body in defines)
    ctx = _context(text)
    for ident in ctx.scan.idents.select(contexts=(self_defines.Ctx.MACRO_NAME,)):
        directive = directive_at(ctx, ident.start)
        passed_over = text.startswith("(", ident.end) or \
            self_defines._FIRST_AFTER.match(text, ident.end).group(1) in self_defines._NEVER_FIRST
        if directive is not None and passed_over:
            assert self_defines._BODY_TOKEN.fullmatch(without_comments(ctx, ident.end, directive.end)) is None, text


# --- the inline-assembly pass: the Hopper searches only in a template holding one of their literals --

ASM_TEMPLATES = ["wgmma.mma_async.sync", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", "mma.", ".e5m2.e5m2",
                 ".e4m3.e4m3", "mov.u32 %0, %%laneid;", "wgmma", "mma", "e4m3", ".e5m2", "xmma.", " ", "\\n"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(["wgmma.mma_async.sync"])
@given(st.lists(st.lists(st.sampled_from(ASM_TEMPLATES), max_size=4).map("".join), min_size=1, max_size=3))
def test_inline_asm_hopper_gate_keeps_every_finding(templates: list[str]) -> None:
    text = "__device__ void f() {\n" + "".join(f'    asm volatile("{t}");\n' for t in templates) + "}\n"
    real = inline_asm._HOPPER_LITERALS
    inline_asm._HOPPER_LITERALS = ("",)  # every template passes the gate
    try:
        reference = _all_diagnostics(text)
    finally:
        inline_asm._HOPPER_LITERALS = real
    assert _all_diagnostics(text) == reference, text

"""A pass the runner skips for its trigger words (`triggers`, `literals.file_bits`) would have
found nothing on that file.

The runner does not call a pass whose declared words the file's text holds none of. On generated
files made of the passes' words, their near misses and ordinary code, the run must give the same
edits, diagnostics, facts and protections as a run that calls every pass; and each skipped pass,
called directly, must find nothing.
"""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from musify import runner
from musify.discover import classify
from musify.frontend.scanner import LineIndex
from musify.options import Options
from musify.passes import languages, literals
from musify.passes._base import PassContext, ProjectInfo
from musify.passes.languages import scan_c
from musify.rules import load_ruleset

RULES = load_ruleset()
PIECES = [
    "MUSIFY_EXCL_LINE", "// MUSIFY_EXCL_START\n", "MUSIFY_EXCL_STOP\n", "MUSIFY_EXCL", "asm volatile(\"mov.u32 %0, 1;\" : \"=r\"(x));",
    "__asm__(\"nop\");", "basm", "#define cudaMalloc musaMalloc\n", "#define musaFree cudaFree\n", "#define X 1\n",
    "#  define cudaStream_t cudaStream_t\n", "#undef X\n", "#de\\\nfine cudaFree musaFree\n", "predefined",
    "k<<<1, 2>>>(a);", "<<", "cudaDeviceSynchronize();", "cudaDeviceSynchronizeX", "x.is_cuda()", "is_cuda",
    "TORCH_LIBRARY_IMPL(ns, CUDA, m) {}", "switch (d) { case c10::DeviceType::CUDA: break; case PrivateUse1: break; }",
    "case", "__global__ void k(int *a) {", "__device__ int d() {", "}", "void h() {", "int x = 1;", "\n", " ",
    "/* asm */", '"define"', "é", "😀", "__shfl_xor_sync(0xffffffff, v, 16, 32);", "int lane = threadIdx.x & 31;",
    "if (threadIdx.x < 32) {", "#define Q __device__\n", "__device__", "__global__", "/* __global__ */", "Q void q() {",
    "__host__ __device__ float f(float v) {", "unsigned m = __ballot_sync(0xffffffff, v);",
]
texts = st.lists(st.sampled_from(PIECES), max_size=20).map("".join)


def _result(ctx: PassContext, edits) -> tuple:
    f = ctx.found
    return ([tuple(e) for e in edits], [d.to_json() for d in f.diagnostics], sorted(f.declared),
            f.pending_unknown, sorted(f.unconverted.items()), list(f.facts.items()), f.protected)  # facts in order


def _no_triggers(language, ruleset, options):
    """The run's plan with every pass's trigger bits dropped: each pass is called."""
    made = languages.plan(language, ruleset, options)
    return languages.Plan(tuple((name, run, needs, 0, None) for name, run, needs, *_ in made.passes), made.prefixes)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts, st.sampled_from(["k.cu", "k.h", "k.cpp"]))
@example("#define musaFree cudaFree\n", "k.h")
@example("__global__ void k(int *a) {cudaDeviceSynchronize();}", "k.cu")
@example("void h() {asm volatile(\"mov.u32 %0, 1;\" : \"=r\"(x));}", "k.cpp")
@example("😀 MUSIFY_EXCL_LINE asm k<<<1, 2>>>(a);", "k.cu")  # wider characters: no bits, every pass runs
@example("__device__ int d() {int lane = threadIdx.x & 31;}", "k.cu")
@example("#define Q __device__\nQ void q() {cudaDeviceSynchronize();}", "k.cu")
@example("void h() {k<<<1, 2>>>(a);}", "k.cpp")
def test_skipping_by_triggers_changes_nothing(text: str, path: str) -> None:
    gated = _result(*runner.edit_text(text, path, RULES, Options()))
    front = runner._FRONT  # the runner's own reference to `plan`, made by the first file
    saved = front[3]
    front[3] = _no_triggers
    try:
        every = _result(*runner.edit_text(text, path, RULES, Options()))
    finally:
        front[3] = saved
    assert gated == every


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_a_pass_without_its_trigger_words_finds_nothing(text: str) -> None:
    plan = languages.plan(languages.language_for(classify("k.cu")), RULES, Options())
    ctx = PassContext("k.cu", text, scan_c(text, RULES), RULES, Options(), ProjectInfo(), LineIndex(text))
    bits = literals.file_bits(ctx)
    for name, run, _, mask, idle in plan.passes:
        if mask and not bits & mask:
            ctx.found.current_pass = name
            facts = dict(ctx.found.facts)
            assert not run(ctx) and not ctx.diagnostics and not ctx.protected, name
            assert ctx.found.facts == {**facts, **(idle or {})}, name  # the facts the runner writes for it


def test_the_gated_passes_and_their_words() -> None:
    plan = languages.plan(languages.language_for(classify("k.cu")), RULES, Options())
    gated = {name for name, _, _, mask, _ in plan.passes if mask}
    assert {"exclusions", "inline_asm", "torch_cpp", "structure", "warp_size", "features"} <= gated
    # structure's words and the qualifier words (warp_size, features) are asked of every file
    # anyway; a word of its own for self_defines ("define") costs the compiled pass over every
    # file more than skipping the pass saves
    assert "self_defines" not in gated


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
@example("#define cudaMalloc musaMalloc\n")
@example("#define X 1\n")
def test_self_defines_opening_test_is_the_selection(text: str) -> None:
    """`self_defines.run` returns at once when no row of the scan is a defined name: exactly when
    the selection it would loop over is empty (the compiled scanner's bits and the pure-Python
    scanner's rows alike)."""
    from musify.frontend.scanner import Ctx, scan_python
    from musify.passes.hazards import self_defines
    from musify.passes.languages import scanner_prefixes

    for idents in (scan_c(text, RULES).idents, scan_python(text, scanner_prefixes(RULES)).idents):
        assert idents.holds_context(self_defines._MACRO_NAME) == bool(idents.select(contexts=(Ctx.MACRO_NAME,)))

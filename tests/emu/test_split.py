"""The region split (musify/emu/split.py): kernels of each eligible shape print, bit for bit, what
they print on fibers; kernels outside the shapes it can prove are left exactly as they were; the
race check, which needs the fibers, still sees races in kernels the split would take."""

from __future__ import annotations

import pytest
from emu_support import PROGRAMS, requires_cxx

from musify.emu.build import BuildOptions, build, build_many, splits
from musify.emu.rewrite import rewrite
from musify.emu.run import run
from musify.emu.split import MARKER

SHAPES = PROGRAMS / "split_shapes.cu"


def _split(text: str) -> str:
    return rewrite(text, "k.cu", split=True)


def _kernel(body: str, params: str = "float* a, int n", head: str = "") -> str:
    return f"{head}\n__global__ void k({params}) {{\n{body}\n}}\n"


ELIGIBLE = {
    "straight": "__shared__ float s[32]; float x = a[threadIdx.x]; s[threadIdx.x] = x; __syncthreads();"
                " a[threadIdx.x] = s[31 - threadIdx.x] + x;",
    "uniform loop": "__shared__ float s[32]; float acc = 0; for (int i = 0; i < n; i += 4) {"
                    " s[threadIdx.x] = a[i]; __syncthreads(); acc += s[0]; __syncthreads(); } a[0] = acc;",
    "extern shared": "extern __shared__ float dyn[]; dyn[threadIdx.x] = 1; __syncthreads(); a[0] = dyn[1];",
    "early return": "if (threadIdx.x >= n) return; a[threadIdx.x] = 1; __syncthreads(); a[0] += 1;",
    "halving loop": "__shared__ float s[64]; s[threadIdx.x] = a[threadIdx.x]; __syncthreads();"
                    " for (int d = blockDim.x / 2; d > 0; d >>= 1) { if (threadIdx.x < d)"
                    " s[threadIdx.x] += s[threadIdx.x + d]; __syncthreads(); } a[blockIdx.x] = s[0];",
}

INELIGIBLE = {
    "return with a lambda": "if (n > 0) { [&]() { a[0] = 1; return; }(); } __syncthreads(); a[1] = 2;",
    "return with a value": "if (n < 0) return (void)0; __syncthreads();",
    "barrier in if": "if (n > 2) { __syncthreads(); } a[0] = 1;",
    "barrier in while": "int i = 0; while (i < n) { __syncthreads(); ++i; }",
    "thread-dependent loop": "for (int i = threadIdx.x; i < n; ++i) { __syncthreads(); }",
    "loop bound read from memory": "for (int i = 0; i < a[0]; ++i) { __syncthreads(); }",
    "loop variable assigned": "for (int i = 0; i < n; ++i) { __syncthreads(); i += 1; }",
    "parameter assigned": "n = n + 1; __syncthreads(); a[0] = n;",
    "break leaves a region": "for (int i = 0; i < n; ++i) { if (a[i] > 0) break; __syncthreads(); }",
    "warp collective": "float v = __shfl_down_sync(0xffffffff, a[0], 1); __syncthreads(); a[0] = v;",
    "barrier with a count": "int c = __syncthreads_count(a[0] > 0); a[0] = c;",
    "address of a crossing variable": "float x = 1; float* p = &x; __syncthreads(); a[0] = *p;",
    "unknown function": "helper_from_a_header(a); __syncthreads(); a[0] = 1;",
    "function with a barrier": "sync_inside(); __syncthreads();",
    "template function with a barrier": "tsync<2>(); __syncthreads();",
    "member call": "int v = h.get(); __syncthreads(); a[0] = v;",
    "goto": "int i = 0; again: __syncthreads(); if (++i < n) goto again;",
    "extern shared inside a stretch": "a[0] = 1; extern __shared__ float dyn[]; dyn[threadIdx.x] = 1;"
                                      " __syncthreads(); a[0] = dyn[1];",
    "conditional compilation": "#if 1\n__syncthreads();\n#endif\n a[0] = 1;",
    "lone macro statement": "MAYBE_SYNC; __syncthreads();",
    "struct variable": "Pair p = {1, 2}; __syncthreads(); a[0] = p.x;",
    "trap": "if (n < 0) __trap(); __syncthreads();",
    "big local array": "float big[2048]; big[threadIdx.x] = 1; __syncthreads(); a[0] = big[0];",
}
HEAD = ("__device__ void sync_inside() { __syncthreads(); }\nstruct Pair { int x, y; };\n"
        "template <int N> __device__ void tsync() { __syncthreads(); }")


@pytest.mark.parametrize("name", sorted(ELIGIBLE))
def test_eligible_shapes_are_split(name):
    out = _split(_kernel(ELIGIBLE[name]))
    assert out.count(MARKER) == 1
    assert "__syncthreads" not in out


@pytest.mark.parametrize("name", sorted(INELIGIBLE))
def test_other_kernels_are_left_exactly_as_they_were(name):
    text = _kernel(INELIGIBLE[name], head=HEAD)
    assert _split(text) == rewrite(text, "k.cu")


def test_a_kernel_defined_by_a_macro_is_left_alone():
    text = "#define KERNEL(name) __global__ void name(float* a) { a[threadIdx.x] = 1; __syncthreads(); }\nKERNEL(k)\n"
    assert _split(text) == rewrite(text, "k.cu")


def test_the_split_keeps_line_numbers():
    text = _kernel(ELIGIBLE["uniform loop"].replace("; ", ";\n"))
    assert _split(text).count("\n") == rewrite(text, "k.cu").count("\n")


def test_existing_programs_with_divergent_barriers_or_races_are_not_split():
    for name in ("divergent.cu", "racecheck.cu", "warps.cu", "transpose8x8.cu"):
        text = (PROGRAMS / name).read_text()
        assert rewrite(text, name, split=True) == rewrite(text, name)


def test_race_check_and_sanitizer_builds_never_split(monkeypatch):
    monkeypatch.delenv("MUSIFY_EMU_SPLIT", raising=False)
    assert splits(BuildOptions())
    assert not splits(BuildOptions(racecheck=True))
    assert not splits(BuildOptions(sanitize=True))
    assert not splits(BuildOptions(split=False))
    monkeypatch.setenv("MUSIFY_EMU_SPLIT", "0")
    assert not splits(BuildOptions())


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    kept = tmp_path_factory.mktemp("kept")
    with pytest.MonkeyPatch.context() as patch:  # the split on, whatever the caller's environment says
        patch.delenv("MUSIFY_EMU_SPLIT", raising=False)
        return _build_all(kept)


def _build_all(kept):
    fibers, race = build_many([([SHAPES], BuildOptions(optimize=2, split=False)),
                               ([PROGRAMS / "split_race.cu"], BuildOptions(optimize=1, racecheck=True))], workers=2)
    split = build([SHAPES], BuildOptions(optimize=2), keep_dir=kept)
    assert (kept / SHAPES.name).read_text().count(MARKER) == 7  # compiled split (no fallback)
    return split, fibers, race


@requires_cxx
def test_every_eligible_shape_prints_bit_for_bit_what_the_fibers_print(built, monkeypatch):
    monkeypatch.setenv("EMU_THREADS", "1")  # blocks in a fixed order: the log of who ran when is exact
    split, fibers = (run(b.executable, [], timeout=60) for b in built[:2])
    assert fibers.returncode == 0, fibers.stdout + fibers.stderr
    assert split.returncode == 0, split.stdout + split.stderr
    assert split.stdout == fibers.stdout
    assert split.stdout.count("\n") > 20 and "log:" in split.stdout


@requires_cxx
def test_race_check_still_reports_a_race_in_a_kernel_the_split_accepts(built):
    assert MARKER in _split((PROGRAMS / "split_race.cu").read_text())
    result = run(built[2].executable, [], timeout=60)
    assert result.returncode == 86, result.stdout + result.stderr
    assert "shared-memory race" in result.stderr


@requires_cxx
def test_a_split_that_does_not_compile_falls_back_to_the_fibers(tmp_path, monkeypatch):
    monkeypatch.delenv("MUSIFY_EMU_SPLIT", raising=False)
    # `threadIdx` is a const copy in a region loop: passing it to a function taking a reference
    # does not compile, so the build goes on without the split (and the program still runs).
    source = tmp_path / "ref.cu"
    source.write_text("#include <cstdio>\n__device__ int first(uint3& t) { return t.x; }\n"
                      "__global__ void k(int* out) { __shared__ int s[8]; s[threadIdx.x] = first(threadIdx);"
                      " __syncthreads(); out[threadIdx.x] = s[7 - threadIdx.x]; }\n"
                      "int main() { int* o; cudaMallocManaged(&o, 32); k<<<1, 8>>>(o); cudaDeviceSynchronize();"
                      " std::printf(\"%d %d\\n\", o[0], o[7]); }\n")
    assert MARKER in _split(source.read_text())
    program = build([source], BuildOptions(optimize=1), keep_dir=tmp_path / "kept")
    assert MARKER not in (tmp_path / "kept" / "ref.cu").read_text()  # what was compiled in the end
    result = run(program.executable, [], timeout=60)
    assert result.stdout == "7 0\n", result.stdout + result.stderr

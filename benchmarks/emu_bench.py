"""Emulator benchmark (not a test): how much the execution model costs over plain C++.

1. Vector add over 2^24 floats, as a kernel on the emulator and as a plain C++ loop built with
   the same flags (target: the emulator at most 2x the loop).
2. A 512x512 shared-memory tiled SGEMM (16x16 tiles: 2 barriers per tile step), reported as
   nanoseconds per thread per barrier (target: at most 25 ns). For scale, the same work as a plain
   loop (every thread's loads of a tile step, then every thread's multiply-adds, in the order the
   barriers impose) and a kernel that does nothing but barriers. Built twice: with the region split
   (the default: both kernels are loops over threads between barriers, musify/emu/split.py) and
   with fibers (`BuildOptions(split=False)`, what MUSIFY_EMU_SPLIT=0 gives), run alternately.

3. The build of a small corpus program (corpora/vector_add), as `musify emu-run` makes it:
   cold (an empty build cache: the precompiled face header is built too), warm (the cache holds
   the precompiled header, the program is new: what every edit costs; target: under 1.5 s), a
   cache hit (unchanged program), the warm build through the CLI in a fresh process, and the
   program's run.

Each program is run with EMU_THREADS=1 and with EMU_THREADS=2 (OS threads running blocks); the
load average is printed because other processes on the machine skew every figure.
Run from the repository root: `python benchmarks/emu_bench.py` (`--builds-only`: part 3 only).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from musify.emu.build import BuildOptions, build
from musify.emu.run import run

VECTOR_ADD = r"""
#include <chrono>
#include <cstdio>
__global__ void add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
static void loop(const float* a, const float* b, float* c, int n) {
    for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
int main() {
    const int n = 1 << 24;
    float *a, *b, *c;
    cudaMallocManaged(&a, n * 4); cudaMallocManaged(&b, n * 4); cudaMallocManaged(&c, n * 4);
    for (int i = 0; i < n; ++i) { a[i] = i; b[i] = 2 * i; }
    double best_emu = 1e9, best_loop = 1e9;
    for (int rep = 0; rep < 5; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        add<<<(n + 255) / 256, 256>>>(a, b, c, n);
        cudaDeviceSynchronize();
        auto t1 = std::chrono::steady_clock::now();
        loop(a, b, c, n);
        auto t2 = std::chrono::steady_clock::now();
        best_emu = std::min(best_emu, std::chrono::duration<double>(t1 - t0).count());
        best_loop = std::min(best_loop, std::chrono::duration<double>(t2 - t1).count());
    }
    for (int i = 0; i < n; ++i) if (c[i] != 3.0f * i) { std::printf("wrong\n"); return 1; }
    std::printf("emu_s=%.6f loop_s=%.6f\n", best_emu, best_loop);
}
"""

SGEMM = r"""
#include <chrono>
#include <cstdio>
#define T 16
__global__ void sgemm(const float* A, const float* B, float* C, int n) {
    __shared__ float As[T][T], Bs[T][T];
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float acc = 0;
    for (int k0 = 0; k0 < n; k0 += T) {
        As[threadIdx.y][threadIdx.x] = A[row * n + k0 + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < T; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * n + col] = acc;
}
// The kernel's work without the emulator, one block after the other on one core.
static void plain(const float* A, const float* B, float* C, int n) {
    static float As[T][T], Bs[T][T];
    float acc[T][T];
    for (int by = 0; by < n / T; ++by)
        for (int bx = 0; bx < n / T; ++bx) {
            for (int ty = 0; ty < T; ++ty) for (int tx = 0; tx < T; ++tx) acc[ty][tx] = 0;
            for (int k0 = 0; k0 < n; k0 += T) {
                for (int ty = 0; ty < T; ++ty) for (int tx = 0; tx < T; ++tx) {
                    As[ty][tx] = A[(by * T + ty) * n + k0 + tx];
                    Bs[ty][tx] = B[(k0 + ty) * n + bx * T + tx];
                }
                for (int ty = 0; ty < T; ++ty) for (int tx = 0; tx < T; ++tx) {
                    float a = acc[ty][tx];
                    for (int k = 0; k < T; ++k) a += As[ty][k] * Bs[k][tx];
                    acc[ty][tx] = a;
                    asm volatile("" ::: "memory");  // threads one at a time, as emulated
                }
            }
            for (int ty = 0; ty < T; ++ty) for (int tx = 0; tx < T; ++tx) C[(by * T + ty) * n + bx * T + tx] = acc[ty][tx];
        }
}
__global__ void barriers_only(int* out, int count) {
    int acc = 0;
    for (int i = 0; i < count; ++i) { acc += i; __syncthreads(); }
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
int main() {
    const int n = 512;
    float *A, *B, *C;
    cudaMallocManaged(&A, n * n * 4); cudaMallocManaged(&B, n * n * 4); cudaMallocManaged(&C, n * n * 4);
    for (int i = 0; i < n * n; ++i) { A[i] = (i % 7) * 0.5f; B[i] = (i % 5) * 0.25f; }
    double best = 1e9, best_plain = 1e9, best_bar = 1e9;
    for (int rep = 0; rep < 5; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        plain(A, B, C, n);
        auto t1 = std::chrono::steady_clock::now();
        barriers_only<<<(n / T) * (n / T), T * T>>>((int*)C, 2 * n / T);
        cudaDeviceSynchronize();
        auto t2 = std::chrono::steady_clock::now();
        sgemm<<<dim3(n / T, n / T), dim3(T, T)>>>(A, B, C, n);
        cudaDeviceSynchronize();
        auto t3 = std::chrono::steady_clock::now();
        best_plain = std::min(best_plain, std::chrono::duration<double>(t1 - t0).count());
        best_bar = std::min(best_bar, std::chrono::duration<double>(t2 - t1).count());
        best = std::min(best, std::chrono::duration<double>(t3 - t2).count());
    }
    for (int r = 0; r < n; r += 97) for (int c = 0; c < n; c += 89) {
        float s = 0; for (int k = 0; k < n; ++k) s += A[r * n + k] * B[k * n + c];
        if (s != C[r * n + c] && (s - C[r * n + c]) * (s - C[r * n + c]) > 1e-6f * s * s) { std::printf("wrong\n"); return 1; }
    }
    double barriers = (double)n * n * (2.0 * n / T);  // thread-barrier crossings
    std::printf("sgemm_s=%.6f ns_per_thread_barrier=%.2f plain_ns=%.2f barrier_only_ns=%.2f\n", best,
                best * 1e9 / barriers, best_plain * 1e9 / barriers, best_bar * 1e9 / barriers);
}
"""


def measure(exe: Path, threads: int) -> dict[str, float]:
    os.environ["EMU_THREADS"] = str(threads)
    result = run(exe, timeout=600)
    if result.returncode != 0:
        raise SystemExit(f"{exe} failed:\n{result.stdout}{result.stderr}")
    return {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", result.stdout)}


REPO = Path(__file__).resolve().parents[1]
CORPUS_PROGRAM = REPO / "corpora" / "vector_add"


def _timed(fn) -> tuple[float, object]:
    """(wall seconds, result); also adds the CPU seconds of the compiler processes to CPU_SECONDS."""
    start, before = time.perf_counter(), os.times()
    value = fn()
    after = os.times()
    CPU_SECONDS.append(after.children_user - before.children_user + after.children_system - before.children_system)
    return time.perf_counter() - start, value


CPU_SECONDS: list[float] = []


def build_figures() -> None:
    """Cold, warm and cached builds of a corpus program in a private build cache, and its run."""
    with tempfile.TemporaryDirectory() as tmp:
        saved = os.environ.get("MUSIFY_CACHE_DIR")
        os.environ["MUSIFY_CACHE_DIR"] = str(Path(tmp) / "cache")
        try:
            work = Path(tmp) / "prog"
            work.mkdir()
            for path in CORPUS_PROGRAM.glob("*.cu*"):
                (work / path.name).write_text(path.read_text())
            main_source = work / "vector_add.cu"
            cold, built = _timed(lambda: build([main_source]))
            main_source.write_text(main_source.read_text() + "// edited\n")
            warm, _ = _timed(lambda: build([main_source]))
            hit, _ = _timed(lambda: build([main_source]))
            main_source.write_text(main_source.read_text() + "// edited again\n")
            env = {**os.environ, "PYTHONPATH": str(REPO)}
            cli, proc = _timed(lambda: subprocess.run([sys.executable, "-m", "musify", "emu-run", str(main_source)],
                                                      capture_output=True, text=True, env=env, check=False))
            if proc.returncode != 0 or "PASS" not in proc.stdout:
                raise SystemExit(f"emu-run failed:\n{proc.stdout}{proc.stderr}")
            ran, result = _timed(lambda: run(built.executable, timeout=600))
        finally:
            if saved is None:
                os.environ.pop("MUSIFY_CACHE_DIR", None)
            else:
                os.environ["MUSIFY_CACHE_DIR"] = saved
    cpu = CPU_SECONDS[-5:]
    print(f"corpora/vector_add build (-O2), wall (compiler CPU): cold {cold:.2f} s ({cpu[0]:.2f}), warm {warm:.2f} s "
          f"({cpu[1]:.2f}; target < 1.5), cache hit {hit * 1e3:.0f} ms; warm through `musify emu-run` in a fresh "
          f"process, build and run {cli:.2f} s ({cpu[3]:.2f}); run {ran:.2f} s (exit {result.returncode})")


def main() -> None:
    if "--builds-only" in sys.argv:
        build_figures()
        return
    build_figures()
    with tempfile.TemporaryDirectory() as tmp:
        exes = {}
        for name, source in (("vector_add.cu", VECTOR_ADD), ("sgemm.cu", SGEMM)):
            (Path(tmp) / name).write_text(source)
            exes[name] = build([Path(tmp) / name]).executable
        exes["fibers"] = build([Path(tmp) / "sgemm.cu"], BuildOptions(split=False)).executable
        print(f"load average before: {os.getloadavg()[0]:.2f}")
        for threads in (1, 2):
            add = measure(exes["vector_add.cu"], threads)
            runs: dict[str, list[dict[str, float]]] = {"sgemm.cu": [], "fibers": []}
            for _ in range(2):  # alternated: the machine's load drifts
                for name, results in runs.items():
                    results.append(measure(exes[name], threads))
            print(f"EMU_THREADS={threads}: vector add 2^24 floats: emulator {add['emu_s'] * 1e3:.1f} ms, plain loop "
                  f"{add['loop_s'] * 1e3:.1f} ms, ratio {add['emu_s'] / add['loop_s']:.2f} (target <= 2)")
            for name, label in (("sgemm.cu", "region split"), ("fibers", "fibers (split off)")):
                gemm = {k: min(r[k] for r in runs[name]) for k in runs[name][0]}
                print(f"  512x512 tiled sgemm, {label}: {gemm['sgemm_s'] * 1e3:.1f} ms, "
                      f"{gemm['ns_per_thread_barrier']:.1f} ns per thread per barrier (target <= 25; plain loop "
                      f"{gemm['plain_ns']:.1f}, barriers-only kernel {gemm['barrier_only_ns']:.1f})")
        print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

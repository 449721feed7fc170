"""Emulator benchmark (not a test): how much the execution model costs over plain C++.

1. Vector add over 2^24 floats, as a kernel on the emulator and as a plain C++ loop built with
   the same flags (target: the emulator at most 3x the loop).
2. A 512x512 shared-memory tiled SGEMM (16x16 tiles: 2 barriers per tile step), reported as
   nanoseconds per thread per barrier (target: at most 25 ns).

Run from the repository root: `python benchmarks/emu_bench.py` (EMU_THREADS=1 for one core).
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from musify.emu.build import build
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
int main() {
    const int n = 512;
    float *A, *B, *C;
    cudaMallocManaged(&A, n * n * 4); cudaMallocManaged(&B, n * n * 4); cudaMallocManaged(&C, n * n * 4);
    for (int i = 0; i < n * n; ++i) { A[i] = (i % 7) * 0.5f; B[i] = (i % 5) * 0.25f; }
    double best = 1e9;
    for (int rep = 0; rep < 3; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        sgemm<<<dim3(n / T, n / T), dim3(T, T)>>>(A, B, C, n);
        cudaDeviceSynchronize();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    for (int r = 0; r < n; r += 97) for (int c = 0; c < n; c += 89) {
        float s = 0; for (int k = 0; k < n; ++k) s += A[r * n + k] * B[k * n + c];
        if (s != C[r * n + c] && (s - C[r * n + c]) * (s - C[r * n + c]) > 1e-6f * s * s) { std::printf("wrong\n"); return 1; }
    }
    double barriers = (double)n * n * (2.0 * n / T);  // thread-barrier crossings
    std::printf("sgemm_s=%.6f ns_per_thread_barrier=%.2f\n", best, best * 1e9 / barriers);
}
"""


def measure(source: str, name: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_text(source)
        result = run(build([path]).executable, timeout=600)
    if result.returncode != 0:
        raise SystemExit(f"{name} failed:\n{result.stdout}{result.stderr}")
    return {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", result.stdout)}


def main() -> None:
    add = measure(VECTOR_ADD, "vector_add.cu")
    ratio = add["emu_s"] / add["loop_s"]
    print(f"vector add 2^24 floats: emulator {add['emu_s'] * 1e3:.1f} ms, plain loop {add['loop_s'] * 1e3:.1f} ms, "
          f"ratio {ratio:.2f} (target <= 3)")
    gemm = measure(SGEMM, "sgemm.cu")
    print(f"512x512 tiled sgemm: {gemm['sgemm_s'] * 1e3:.1f} ms, {gemm['ns_per_thread_barrier']:.1f} ns per thread "
          f"per barrier (target <= 25)")


if __name__ == "__main__":
    main()

// matmul_tiled: C = A * B (row-major, M x K times K x N) with the classic shared-memory tiling:
// each block loads one tile of A and one of B per step, synchronises, and accumulates. The
// sizes are not multiples of the tile, so the edge tiles are padded with zeros.
#include <cstdio>
#include <vector>

#include "cuda_check.muh"

#define TILE 16

__global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];  // padded: a common bank-conflict trick, harmless here
    const int row = blockIdx.y * TILE + threadIdx.y;
    const int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        const int a_col = t * TILE + threadIdx.x;
        const int b_row = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && a_col < K) ? A[row * K + a_col] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (b_row < K && col < N) ? B[b_row * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) {
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        C[row * N + col] = acc;
    }
}

int main()
{
    const int M = 100, K = 70, N = 130;
    std::vector<float> A(M * K), B(K * N), C(M * N, 0.0f);
    for (int i = 0; i < M * K; ++i) A[i] = static_cast<float>((i * 37) % 7 - 3);  // small integers:
    for (int i = 0; i < K * N; ++i) B[i] = static_cast<float>((i * 11) % 5 - 2);  // exact products

    float *dA = nullptr, *dB = nullptr, *dC = nullptr;
    CUDA_CHECK(musaMalloc(&dA, A.size() * sizeof(float)));
    CUDA_CHECK(musaMalloc(&dB, B.size() * sizeof(float)));
    CUDA_CHECK(musaMalloc(&dC, C.size() * sizeof(float)));
    CUDA_CHECK(musaMemcpy(dA, A.data(), A.size() * sizeof(float), musaMemcpyHostToDevice));
    CUDA_CHECK(musaMemcpy(dB, B.data(), B.size() * sizeof(float), musaMemcpyHostToDevice));

    const dim3 block(TILE, TILE);
    const dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    matmul<<<grid, block>>>(dA, dB, dC, M, N, K);
    CUDA_CHECK_KERNEL();
    CUDA_CHECK(musaMemcpy(C.data(), dC, C.size() * sizeof(float), musaMemcpyDeviceToHost));

    int bad = 0;
    for (int r = 0; r < M; ++r) {
        for (int c = 0; c < N; ++c) {
            float want = 0.0f;
            for (int k = 0; k < K; ++k) want += A[r * K + k] * B[k * N + c];
            bad += C[r * N + c] != want ? 1 : 0;
        }
    }
    CUDA_CHECK(musaFree(dA));
    CUDA_CHECK(musaFree(dB));
    CUDA_CHECK(musaFree(dC));
    std::printf("%s matmul_tiled M=%d N=%d K=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", M, N, K, bad);
    return bad == 0 ? 0 : 1;
}

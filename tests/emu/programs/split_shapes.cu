// Kernels of every shape the region split (musify/emu/split.py) accepts; the program prints every
// result bit for bit and the order in which the threads ran, so a run with the split and a run
// with fibers (MUSIFY_EMU_SPLIT=0) must print the same text.
#include <cstdio>
#include <cstring>
#define TILE 8

__global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
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
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}

__global__ void tree_sum(const float* in, float* out, int n) {
    __shared__ float s[64];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    s[tid] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

// Order-sensitive: float atomics into one place, a log of who ran when, printf between barriers.
__global__ void ordered(float* acc, int* log, int* pos) {
    __shared__ int turn;
    float mine = 1.0f / (threadIdx.x + 1 + 3 * threadIdx.y);
    if (threadIdx.x == 0 && threadIdx.y == 0) turn = 7;
    __syncthreads();
    atomicAdd(acc, mine * 1e7f);
    log[atomicAdd(pos, 1)] = threadIdx.x + 100 * threadIdx.y + 10000 * blockIdx.x;
    __syncthreads();
    for (int r = 0; r < 3; ++r) {
        float v = mine * r + turn;
        if (threadIdx.x % 5 == 0) printf("b%u t%u,%u r%d\n", blockIdx.x, threadIdx.x, threadIdx.y, r);
        __syncthreads();
        atomicAdd(acc + 1, v - 0.1f * turn);
        log[atomicAdd(pos, 1)] = -(threadIdx.x + 100 * threadIdx.y + 10000 * blockIdx.x + 1000000 * r);
        __syncthreads();
    }
}

__device__ int linear() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }

__global__ void cube(int* out) {
    __shared__ int s[64];
    const int N = 4 * 16;
    int* mine = out + blockIdx.x * N;
    s[linear()] = linear() * 3 + blockIdx.x;
    __syncthreads();
    mine[linear()] = s[N - 1 - linear()] + threadIdx.z;
}

template <int STEPS>
__global__ void steps(float* data) {
    __shared__ float s[32];
    float x = data[blockIdx.x * blockDim.x + threadIdx.x];
    for (int k = 0; k < STEPS; ++k) {
        s[threadIdx.x] = x;
        __syncthreads();
        x = 0.5f * x + s[(threadIdx.x + 1) % blockDim.x] * 0.25f + sqrtf((float)k);
        __syncthreads();
    }
    data[blockIdx.x * blockDim.x + threadIdx.x] = x;
}

// Threads that return: before the first barrier, inside a loop with barriers, after the last one.
__global__ void leavers(float* out, int* log, int* pos, int live) {
    __shared__ float s[48];
    int me = threadIdx.x;
    if (me >= live) return;
    s[me] = me * 0.5f;
    __syncthreads();
    for (int r = 0; r < 4; ++r) {
        float v = s[(me + r) % live];
        for (int k = 0; k < 3; ++k)
            if (me == 5 * r + k) return;
        log[atomicAdd(pos, 1)] = me + 100 * r + 10000 * blockIdx.x;
        __syncthreads();
        s[me] += v;
        __syncthreads();
    }
    if (me % 3 == 0) return;
    out[blockIdx.x * 48 + me] = s[me];
}

// Dynamic shared memory, declared at the top and again between two stretches.
__global__ void dynamic(const double* in, double* out) {
    extern __shared__ double dyn[];
    dyn[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x] * 1.5;
    __syncthreads();
    __shared__ extern double again[];
    out[blockIdx.x * blockDim.x + threadIdx.x] = again[blockDim.x - 1 - threadIdx.x] / 3.0 + dyn[0];
}

static void dump(const char* name, const void* p, int bytes) {
    const unsigned char* b = static_cast<const unsigned char*>(p);
    std::printf("%s:", name);
    for (int i = 0; i < bytes; ++i) std::printf("%02x", b[i]);
    std::printf("\n");
}

int main() {
    const int M = 19, N = 13, K = 21;
    float *A, *B, *C, *in, *sums, *acc, *data;
    int *log, *pos, *cubes;
    cudaMallocManaged(&A, M * K * 4); cudaMallocManaged(&B, K * N * 4); cudaMallocManaged(&C, M * N * 4);
    for (int i = 0; i < M * K; ++i) A[i] = 1.0f / (i + 3);
    for (int i = 0; i < K * N; ++i) B[i] = (i % 11) * 0.37f - 1.5f;
    matmul<<<dim3((N + TILE - 1) / TILE, (M + TILE - 1) / TILE), dim3(TILE, TILE)>>>(A, B, C, M, N, K);
    cudaDeviceSynchronize();
    dump("matmul", C, M * N * 4);

    const int n = 300;
    cudaMallocManaged(&in, n * 4); cudaMallocManaged(&sums, 5 * 4);
    for (int i = 0; i < n; ++i) in[i] = 1.0f / (i + 1) - 0.001f * i;
    tree_sum<<<5, 64>>>(in, sums, n);
    cudaDeviceSynchronize();
    dump("tree_sum", sums, 5 * 4);

    cudaMallocManaged(&acc, 2 * 4); cudaMallocManaged(&log, 4000 * 4); cudaMallocManaged(&pos, 4);
    acc[0] = acc[1] = 0; *pos = 0;
    ordered<<<3, dim3(12, 3)>>>(acc, log, pos);
    cudaDeviceSynchronize();
    dump("ordered", acc, 2 * 4);
    dump("log", log, *pos * 4);

    cudaMallocManaged(&cubes, 2 * 64 * 4);
    cube<<<2, dim3(4, 4, 4)>>>(cubes);
    cudaDeviceSynchronize();
    dump("cube", cubes, 2 * 64 * 4);

    cudaMallocManaged(&data, 3 * 32 * 4);
    for (int i = 0; i < 96; ++i) data[i] = i * 0.125f - 3.0f;
    steps<5><<<3, 32>>>(data);
    cudaDeviceSynchronize();
    dump("steps", data, 96 * 4);

    float* left;
    cudaMallocManaged(&left, 2 * 48 * 4);
    for (int i = 0; i < 96; ++i) left[i] = -1.0f;
    *pos = 0;
    leavers<<<2, 48>>>(left, log, pos, 41);
    cudaDeviceSynchronize();
    dump("leavers", left, 96 * 4);
    dump("leavers_log", log, *pos * 4);

    double *din, *dout;
    cudaMallocManaged(&din, 3 * 20 * 8); cudaMallocManaged(&dout, 3 * 20 * 8);
    for (int i = 0; i < 60; ++i) din[i] = 1.0 / (i + 7);
    dynamic<<<3, 20, 20 * 8>>>(din, dout);
    cudaDeviceSynchronize();
    dump("dynamic", dout, 60 * 8);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

// Execution-model and runtime features of the emulator, each checked; prints PASS when all hold.
#include <cstdio>
#include <cstring>

static int failures = 0;
#define CHECK(cond)                                                   \
    do {                                                              \
        if (!(cond)) {                                                \
            std::printf("FAIL line %d: %s\n", __LINE__, #cond);       \
            ++failures;                                               \
        }                                                             \
    } while (0)

__constant__ float coeff[4];
__device__ int counter;

// Threads that return before the barrier count as arrived.
__global__ void early_return(int* out, int live) {
    __shared__ int tile[128];
    if (threadIdx.x >= live) return;
    tile[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = tile[(threadIdx.x + 1) % live];
}

__global__ void votes(int* out) {
    int odd = threadIdx.x & 1;
    int c = __syncthreads_count(odd);
    int a = __syncthreads_and(threadIdx.x < 1000);
    int o = __syncthreads_or(threadIdx.x == 7);
    if (threadIdx.x == 0) {
        out[0] = c;
        out[1] = a;
        out[2] = o;
    }
}

__global__ void contention(unsigned* sum, float* fsum, unsigned* wrap, int* mx, unsigned long long* big) {
    atomicAdd(sum, 1u);
    atomicAdd(fsum, 0.5f);
    atomicInc(wrap, 9u);
    atomicMax(mx, (int)(blockIdx.x * blockDim.x + threadIdx.x));
    atomicAdd(big, 1ull << 33);
    atomicAdd(&counter, 1);
}

__global__ void dynamic_tile(float* out) {
    extern __shared__ float buf[];
    buf[threadIdx.x] = threadIdx.x * coeff[1];
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x];
}

__global__ void say(int v) { if (threadIdx.x == 0) printf("kernel says %d\n", v); }

__global__ void scale2d(float* p, size_t pitch, int w, int h) {
    int x = threadIdx.x, y = blockIdx.x;
    if (x < w && y < h) ((float*)((char*)p + y * pitch))[x] *= 2.0f;
}

__global__ void traps() { if (threadIdx.x == 3) __trap(); }

int main() {
    int* d;
    cudaMalloc(&d, 128 * sizeof(int));
    early_return<<<1, 128>>>(d, 37);
    int h[128];
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 37; ++i) CHECK(h[i] == (i + 1) % 37);
    CHECK((unsigned)h[40] == 0xffffffffu);  // fresh allocations are poisoned

    votes<<<1, 100>>>(d);
    cudaMemcpy(h, d, 3 * sizeof(int), cudaMemcpyDeviceToHost);
    CHECK(h[0] == 50 && h[1] == 1 && h[2] == 1);

    unsigned *sum, *wrap;
    float* fsum;
    int* mx;
    unsigned long long* big;
    cudaMallocManaged(&sum, 4);
    cudaMallocManaged(&wrap, 4);
    cudaMallocManaged(&fsum, 4);
    cudaMallocManaged(&mx, 4);
    cudaMallocManaged(&big, 8);
    *sum = 0; *wrap = 0; *fsum = 0; *mx = -1; *big = 0;
    int zero = 0;
    cudaMemcpyToSymbol(counter, &zero, sizeof zero);
    contention<<<64, 256>>>(sum, fsum, wrap, mx, big);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(*sum == 64u * 256u);
    CHECK(*fsum == 8192.0f);
    CHECK(*wrap == (64u * 256u) % 10u);
    CHECK(*mx == 64 * 256 - 1);
    CHECK(*big == (64ull * 256ull) << 33);
    int seen = 0;
    CHECK(cudaMemcpyFromSymbol(&seen, counter, sizeof seen) == cudaSuccess && seen == 64 * 256);
    CHECK(cudaMemcpyToSymbol(counter, &zero, 8) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaSuccess);

    float c[4] = {0, 3, 0, 0};
    cudaMemcpyToSymbol(coeff, c, sizeof c);
    float* f;
    cudaMalloc(&f, 2 * 64 * sizeof(float));
    dynamic_tile<<<2, 64, 64 * sizeof(float)>>>(f);
    float hf[128];
    cudaMemcpy(hf, f, sizeof hf, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 128; ++i) CHECK(hf[i] == 3.0f * (63 - i % 64));

    say<<<1, 32>>>(42);
    cudaDeviceSynchronize();
    std::fflush(stdout);

    // Pitched 2D allocation and copies.
    float* p;
    size_t pitch = 0;
    CHECK(cudaMallocPitch(&p, &pitch, 10 * sizeof(float), 5) == cudaSuccess && pitch >= 40 && pitch % 256 == 0);
    float host2d[5][10];
    for (int y = 0; y < 5; ++y)
        for (int x = 0; x < 10; ++x) host2d[y][x] = y * 10 + x;
    cudaMemcpy2D(p, pitch, host2d, 40, 40, 5, cudaMemcpyHostToDevice);
    scale2d<<<5, 16>>>(p, pitch, 10, 5);
    float back[5][10];
    cudaMemcpy2D(back, 40, p, pitch, 40, 5, cudaMemcpyDeviceToHost);
    for (int y = 0; y < 5; ++y)
        for (int x = 0; x < 10; ++x) CHECK(back[y][x] == 2.0f * (y * 10 + x));
    CHECK(cudaMemcpy2D(back, 20, p, pitch, 40, 5, cudaMemcpyDeviceToHost) == cudaErrorInvalidPitchValue);
    cudaGetLastError();

    // Launch configuration errors are returned, not crashes, and are not sticky.
    say<<<1, 2048>>>(0);
    CHECK(cudaPeekAtLastError() == cudaErrorInvalidConfiguration);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    CHECK(cudaGetLastError() == cudaSuccess);
    say<<<dim3(1, 70000), 1>>>(0);
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    CHECK(cudaFree((void*)0x1234) == cudaErrorInvalidValue);
    cudaGetLastError();
    CHECK(std::strcmp(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation") == 0);
    void* huge;
    CHECK(cudaMalloc(&huge, (size_t)1 << 50) == cudaErrorMemoryAllocation);
    cudaGetLastError();

    // Streams and events: synchronous streams, real elapsed time.
    cudaStream_t s;
    cudaEvent_t a, b;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a, s);
    contention<<<256, 256, 0, s>>>(sum, fsum, wrap, mx, big);
    cudaEventRecord(b, s);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess && cudaEventSynchronize(b) == cudaSuccess);
    float ms = -1;
    CHECK(cudaEventElapsedTime(&ms, a, b) == cudaSuccess && ms > 0.0f && ms < 60000.0f);
    CHECK(cudaStreamQuery(s) == cudaSuccess);
    CHECK(cudaStreamDestroy(s) == cudaSuccess);
    CHECK(cudaStreamDestroy(s) == cudaErrorInvalidResourceHandle);
    cudaGetLastError();
    cudaEventDestroy(a);
    cudaEventDestroy(b);

    // Device properties and occupancy follow the build's warp size.
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    CHECK(prop.warpSize == warpSize && prop.maxThreadsPerBlock == 1024 && prop.multiProcessorCount > 0);
    int n = 0, minGrid = 0, block = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, say, 256, 0) == cudaSuccess && n > 0);
    CHECK(cudaOccupancyMaxPotentialBlockSize(&minGrid, &block, say) == cudaSuccess && block % warpSize == 0 &&
          minGrid > 0);

    // A trap fails the launch with a sticky error.
    traps<<<2, 8>>>();
    CHECK(cudaDeviceSynchronize() == cudaErrorLaunchFailure);
    CHECK(cudaMalloc(&huge, 16) == cudaErrorLaunchFailure);
    CHECK(cudaGetLastError() == cudaErrorLaunchFailure);
    cudaDeviceReset();
    CHECK(cudaGetLastError() == cudaSuccess);

    std::printf(failures ? "FAILED %d\n" : "PASS\n", failures);
    return failures != 0;
}

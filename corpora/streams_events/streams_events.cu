// streams_events: split an array into chunks, and for each chunk issue an async host-to-device
// copy, a kernel and an async device-to-host copy on its own stream. Events bracket the whole
// pipeline and time it; the answer is checked against the CPU.
#include <cstdio>

#include "cuda_check.cuh"

constexpr int kStreams = 4;

__global__ void polynomial(const float* x, float* y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float v = x[i];
        y[i] = (2.0f * v - 3.0f) * v + 1.0f;
    }
}

int main()
{
    const int n = 1 << 18;
    const int chunk = n / kStreams;
    float* h_x = nullptr;
    float* h_y = nullptr;
    CUDA_CHECK(cudaMallocHost(&h_x, n * sizeof(float)));
    CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&h_y), n * sizeof(float), cudaHostAllocDefault));
    for (int i = 0; i < n; ++i) {
        h_x[i] = static_cast<float>(i % 64) * 0.25f;
        h_y[i] = -1.0f;
    }

    float *d_x = nullptr, *d_y = nullptr;
    CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_y, n * sizeof(float)));

    cudaStream_t streams[kStreams];
    for (int s = 0; s < kStreams; ++s) {
        CUDA_CHECK(cudaStreamCreate(&streams[s]));
    }
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));

    CUDA_CHECK(cudaEventRecord(start, 0));
    for (int s = 0; s < kStreams; ++s) {
        const int off = s * chunk;
        CUDA_CHECK(cudaMemcpyAsync(d_x + off, h_x + off, chunk * sizeof(float), cudaMemcpyHostToDevice,
                                   streams[s]));
        polynomial<<<32, 256, 0, streams[s]>>>(d_x + off, d_y + off, chunk);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemcpyAsync(h_y + off, d_y + off, chunk * sizeof(float), cudaMemcpyDeviceToHost,
                                   streams[s]));
    }
    for (int s = 0; s < kStreams; ++s) {
        CUDA_CHECK(cudaStreamSynchronize(streams[s]));
    }
    CUDA_CHECK(cudaEventRecord(stop, 0));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = -1.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));

    int bad = 0;
    for (int i = 0; i < n; ++i) {
        const float v = h_x[i];
        const float want = (2.0f * v - 3.0f) * v + 1.0f;  // exact: v is a multiple of 1/4 below 16
        if (h_y[i] != want) {
            ++bad;
        }
    }
    const bool timing_ok = ms >= 0.0f;

    for (int s = 0; s < kStreams; ++s) {
        CUDA_CHECK(cudaStreamDestroy(streams[s]));
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFreeHost(h_x));
    CUDA_CHECK(cudaFreeHost(h_y));
    const bool ok = bad == 0 && timing_ok;
    std::printf("%s streams_events n=%d streams=%d mismatches=%d elapsed_ok=%d\n", ok ? "PASS" : "FAIL", n,
                kStreams, bad, timing_ok ? 1 : 0);
    return ok ? 0 : 1;
}

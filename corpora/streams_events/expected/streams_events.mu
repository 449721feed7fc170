// streams_events: split an array into chunks, and for each chunk issue an async host-to-device
// copy, a kernel and an async device-to-host copy on its own stream. Events bracket the whole
// pipeline and time it; the answer is checked against the CPU.
#include <cstdio>

#include "cuda_check.muh"

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
    CUDA_CHECK(musaMallocHost(&h_x, n * sizeof(float)));
    CUDA_CHECK(musaHostAlloc(reinterpret_cast<void**>(&h_y), n * sizeof(float), musaHostAllocDefault));
    for (int i = 0; i < n; ++i) {
        h_x[i] = static_cast<float>(i % 64) * 0.25f;
        h_y[i] = -1.0f;
    }

    float *d_x = nullptr, *d_y = nullptr;
    CUDA_CHECK(musaMalloc(&d_x, n * sizeof(float)));
    CUDA_CHECK(musaMalloc(&d_y, n * sizeof(float)));

    musaStream_t streams[kStreams];
    for (int s = 0; s < kStreams; ++s) {
        CUDA_CHECK(musaStreamCreate(&streams[s]));
    }
    musaEvent_t start, stop;
    CUDA_CHECK(musaEventCreate(&start));
    CUDA_CHECK(musaEventCreate(&stop));

    CUDA_CHECK(musaEventRecord(start, 0));
    for (int s = 0; s < kStreams; ++s) {
        const int off = s * chunk;
        CUDA_CHECK(musaMemcpyAsync(d_x + off, h_x + off, chunk * sizeof(float), musaMemcpyHostToDevice,
                                   streams[s]));
        polynomial<<<32, 256, 0, streams[s]>>>(d_x + off, d_y + off, chunk);
        CUDA_CHECK(musaGetLastError());
        CUDA_CHECK(musaMemcpyAsync(h_y + off, d_y + off, chunk * sizeof(float), musaMemcpyDeviceToHost,
                                   streams[s]));
    }
    for (int s = 0; s < kStreams; ++s) {
        CUDA_CHECK(musaStreamSynchronize(streams[s]));
    }
    CUDA_CHECK(musaEventRecord(stop, 0));
    CUDA_CHECK(musaEventSynchronize(stop));
    float ms = -1.0f;
    CUDA_CHECK(musaEventElapsedTime(&ms, start, stop));

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
        CUDA_CHECK(musaStreamDestroy(streams[s]));
    }
    CUDA_CHECK(musaEventDestroy(start));
    CUDA_CHECK(musaEventDestroy(stop));
    CUDA_CHECK(musaFree(d_x));
    CUDA_CHECK(musaFree(d_y));
    CUDA_CHECK(musaFreeHost(h_x));
    CUDA_CHECK(musaFreeHost(h_y));
    const bool ok = bad == 0 && timing_ok;
    std::printf("%s streams_events n=%d streams=%d mismatches=%d elapsed_ok=%d\n", ok ? "PASS" : "FAIL", n,
                kStreams, bad, timing_ok ? 1 : 0);
    return ok ? 0 : 1;
}

// pitched_2d: a 300 x 100 float image in pitched device memory. Rows are addressed through the
// pitch in bytes, never through the width; the copies in and out use cudaMemcpy2D with a
// tightly packed host image, and a device-to-device cudaMemcpy2D extracts a sub-rectangle.
#include <cstdio>
#include <vector>

#include "cuda_check.muh"

__global__ void transform_rows(float* image, size_t pitch, int width, int height)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        float* row = reinterpret_cast<float*>(reinterpret_cast<char*>(image) + y * pitch);
        row[x] = 2.0f * row[x] + static_cast<float>(y);
    }
}

int main()
{
    const int width = 300, height = 100;
    const size_t row_bytes = width * sizeof(float);
    std::vector<float> host(width * height), back(width * height);
    for (int i = 0; i < width * height; ++i) host[i] = static_cast<float>(i % 1000);

    float* d_image = nullptr;
    size_t pitch = 0;
    CUDA_CHECK(musaMallocPitch(reinterpret_cast<void**>(&d_image), &pitch, row_bytes, height));
    CUDA_CHECK(musaMemcpy2D(d_image, pitch, host.data(), row_bytes, row_bytes, height, musaMemcpyHostToDevice));
    const dim3 block(32, 8);
    const dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
    transform_rows<<<grid, block>>>(d_image, pitch, width, height);
    CUDA_CHECK_KERNEL();
    CUDA_CHECK(musaMemcpy2D(back.data(), row_bytes, d_image, pitch, row_bytes, height, musaMemcpyDeviceToHost));

    // Columns 10..59 of rows 20..39 into a packed 50 x 20 device buffer, then to the host.
    const int sub_w = 50, sub_h = 20, x0 = 10, y0 = 20;
    float* d_sub = nullptr;
    CUDA_CHECK(musaMalloc(&d_sub, sub_w * sub_h * sizeof(float)));
    const char* src = reinterpret_cast<const char*>(d_image) + y0 * pitch + x0 * sizeof(float);
    CUDA_CHECK(musaMemcpy2D(d_sub, sub_w * sizeof(float), src, pitch, sub_w * sizeof(float), sub_h,
                            musaMemcpyDeviceToDevice));
    std::vector<float> sub(sub_w * sub_h);
    CUDA_CHECK(musaMemcpy(sub.data(), d_sub, sub.size() * sizeof(float), musaMemcpyDeviceToHost));

    int bad = pitch >= row_bytes ? 0 : 1;
    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            bad += back[y * width + x] != 2.0f * host[y * width + x] + static_cast<float>(y) ? 1 : 0;
        }
    }
    for (int y = 0; y < sub_h; ++y) {
        for (int x = 0; x < sub_w; ++x) bad += sub[y * sub_w + x] != back[(y0 + y) * width + x0 + x] ? 1 : 0;
    }
    CUDA_CHECK(musaFree(d_image));
    CUDA_CHECK(musaFree(d_sub));
    std::printf("%s pitched_2d %dx%d pitch_ok=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", width, height,
                pitch >= row_bytes ? 1 : 0, bad);
    return bad == 0 ? 0 : 1;
}

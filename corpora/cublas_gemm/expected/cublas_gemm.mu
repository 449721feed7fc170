// cublas_gemm: C = alpha * A^T * B + beta * C with cublasSgemm on column-major matrices, checked
// against a plain CPU loop; then y = a * x + y (cublasSaxpy), x . y (cublasSdot) and ||x||
// (cublasSnrm2), with results returned to host pointers.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <mublas.h>

#include "cuda_check.muh"

#define CUBLAS_CHECK(call)                                                                  \
    do {                                                                                    \
        const mublasStatus_t st = (call);                                                   \
        if (st != MUBLAS_STATUS_SUCCESS) {                                                  \
            std::printf("FAIL cublas_gemm: %s returned status %d\n", #call, static_cast<int>(st)); \
            std::exit(1);                                                                   \
        }                                                                                   \
    } while (0)

// Column-major element (row r, column c) of a matrix with leading dimension ld.
static inline int at(int r, int c, int ld) { return r + c * ld; }

int main()
{
    const int m = 64, n = 48, k = 40;
    const float alpha = 0.5f, beta = -2.0f;
    // op(A) = A^T is m x k, so A is stored k x m (lda = k); B is k x n; C is m x n.
    std::vector<float> A(k * m), B(k * n), C(m * n);
    for (int i = 0; i < k * m; ++i) A[i] = static_cast<float>(i % 7 - 3);
    for (int i = 0; i < k * n; ++i) B[i] = static_cast<float>(i % 5 - 2) * 0.5f;
    for (int i = 0; i < m * n; ++i) C[i] = static_cast<float>(i % 3);

    std::vector<float> want(C);
    for (int r = 0; r < m; ++r) {
        for (int c = 0; c < n; ++c) {
            float acc = 0.0f;
            for (int p = 0; p < k; ++p) acc += A[at(p, r, k)] * B[at(p, c, k)];
            want[at(r, c, m)] = alpha * acc + beta * C[at(r, c, m)];
        }
    }

    float *dA, *dB, *dC;
    CUDA_CHECK(musaMalloc(&dA, A.size() * sizeof(float)));
    CUDA_CHECK(musaMalloc(&dB, B.size() * sizeof(float)));
    CUDA_CHECK(musaMalloc(&dC, C.size() * sizeof(float)));
    CUDA_CHECK(musaMemcpy(dA, A.data(), A.size() * sizeof(float), musaMemcpyHostToDevice));
    CUDA_CHECK(musaMemcpy(dB, B.data(), B.size() * sizeof(float), musaMemcpyHostToDevice));
    CUDA_CHECK(musaMemcpy(dC, C.data(), C.size() * sizeof(float), musaMemcpyHostToDevice));

    mublasHandle_t handle;
    CUBLAS_CHECK(mublasCreate(&handle));
    CUBLAS_CHECK(mublasSgemm(handle, MUBLAS_OP_T, MUBLAS_OP_N, m, n, k, &alpha, dA, k, dB, k, &beta, dC, m));
    std::vector<float> got(m * n);
    CUDA_CHECK(musaMemcpy(got.data(), dC, got.size() * sizeof(float), musaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < m * n; ++i) {
        bad += std::fabs(got[i] - want[i]) > 1e-4f * (1.0f + std::fabs(want[i])) ? 1 : 0;
    }

    // Level 1 on vectors of length 1000.
    const int len = 1000;
    const float a = 2.0f;
    std::vector<float> x(len), y(len);
    for (int i = 0; i < len; ++i) {
        x[i] = static_cast<float>(i % 10) * 0.25f;
        y[i] = static_cast<float>(i % 4);
    }
    float *dx, *dy;
    CUDA_CHECK(musaMalloc(&dx, len * sizeof(float)));
    CUDA_CHECK(musaMalloc(&dy, len * sizeof(float)));
    CUDA_CHECK(musaMemcpy(dx, x.data(), len * sizeof(float), musaMemcpyHostToDevice));
    CUDA_CHECK(musaMemcpy(dy, y.data(), len * sizeof(float), musaMemcpyHostToDevice));
    CUBLAS_CHECK(mublasSaxpy(handle, len, &a, dx, 1, dy, 1));
    float dot = 0.0f, norm = 0.0f;
    CUBLAS_CHECK(mublasSdot(handle, len, dx, 1, dy, 1, &dot));
    CUBLAS_CHECK(mublasSnrm2(handle, len, dx, 1, &norm));
    std::vector<float> y_out(len);
    CUDA_CHECK(musaMemcpy(y_out.data(), dy, len * sizeof(float), musaMemcpyDeviceToHost));

    double want_dot = 0.0, want_norm2 = 0.0;
    for (int i = 0; i < len; ++i) {
        const float yi = a * x[i] + y[i];  // exact: quarters below 10
        bad += y_out[i] != yi ? 1 : 0;
        want_dot += static_cast<double>(x[i]) * yi;
        want_norm2 += static_cast<double>(x[i]) * x[i];
    }
    bad += std::fabs(dot - want_dot) > 1e-4 * std::fabs(want_dot) ? 1 : 0;
    bad += std::fabs(norm - std::sqrt(want_norm2)) > 1e-4 * std::sqrt(want_norm2) ? 1 : 0;

    CUBLAS_CHECK(mublasDestroy(handle));
    CUDA_CHECK(musaFree(dA));
    CUDA_CHECK(musaFree(dB));
    CUDA_CHECK(musaFree(dC));
    CUDA_CHECK(musaFree(dx));
    CUDA_CHECK(musaFree(dy));
    std::printf("%s cublas_gemm m=%d n=%d k=%d dot=%.2f mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", m, n, k, dot,
                bad);
    return bad == 0 ? 0 : 1;
}

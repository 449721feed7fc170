// A reference cuBLAS subset: column-major storage, op(A) transposes, host or device scalars.
//
// Device memory is host memory and streams are synchronous, so every routine computes in place on the
// calling thread.  Readings (docs/emulator-numerics.md): products are accumulated in double (float and
// double routines; half inputs of Hgemm are widened exactly) and rounded once to the output type, which is
// at least as accurate as cuBLAS; beta == 0 never reads C or y (BLAS semantics: NaNs there do not
// propagate); argument checks and their status codes follow cuBLAS's documentation.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

#include "half.hpp"

namespace emu::blas {

enum Status {
    STATUS_SUCCESS = 0,
    STATUS_NOT_INITIALIZED = 1,
    STATUS_ALLOC_FAILED = 3,
    STATUS_INVALID_VALUE = 7,
    STATUS_ARCH_MISMATCH = 8,
    STATUS_MAPPING_ERROR = 11,
    STATUS_EXECUTION_FAILED = 13,
    STATUS_INTERNAL_ERROR = 14,
    STATUS_NOT_SUPPORTED = 15,
    STATUS_LICENSE_ERROR = 16,
    // muBLAS's own statuses (its enum is rocBLAS-shaped: rules/cublas/overrides.yaml lists the
    // fourteen torch_musa's Blas.cpp names). Only the MUSA face spells them; the emulator never
    // returns them, and answers the rest with the cuBLAS values its MUSA names stand for.
    STATUS_INVALID_POINTER = 17,
    STATUS_INVALID_SIZE = 18,
    STATUS_PERF_DEGRADED = 19,
    STATUS_SIZE_QUERY_MISMATCH = 20,
    STATUS_SIZE_INCREASED = 21,
    STATUS_SIZE_UNCHANGED = 22,
    STATUS_CONTINUE = 23,
    STATUS_CHECK_NUMERICS_FAIL = 24,
};
enum Operation { OP_N = 0, OP_T = 1, OP_C = 2, OP_HERMITAN = 2, OP_CONJG = 3 };
enum PointerMode { POINTER_MODE_HOST = 0, POINTER_MODE_DEVICE = 1 };
enum FillMode { FILL_MODE_LOWER = 0, FILL_MODE_UPPER = 1, FILL_MODE_FULL = 2 };
enum DiagType { DIAG_NON_UNIT = 0, DIAG_UNIT = 1 };
enum SideMode { SIDE_LEFT = 0, SIDE_RIGHT = 1 };
enum AtomicsMode { ATOMICS_NOT_ALLOWED = 0, ATOMICS_ALLOWED = 1 };
enum Math {
    DEFAULT_MATH = 0,
    TENSOR_OP_MATH = 1,
    PEDANTIC_MATH = 2,
    TF32_TENSOR_OP_MATH = 3,
    MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16,
};

struct Context {
    void* stream = nullptr;
    PointerMode pointer_mode = POINTER_MODE_HOST;
    Math math_mode = DEFAULT_MATH;
    AtomicsMode atomics_mode = ATOMICS_NOT_ALLOWED;
};
using Handle = Context*;

inline const char* status_suffix(int s) {
    switch (s) {
        case STATUS_SUCCESS: return "STATUS_SUCCESS";
        case STATUS_NOT_INITIALIZED: return "STATUS_NOT_INITIALIZED";
        case STATUS_ALLOC_FAILED: return "STATUS_ALLOC_FAILED";
        case STATUS_INVALID_VALUE: return "STATUS_INVALID_VALUE";
        case STATUS_ARCH_MISMATCH: return "STATUS_ARCH_MISMATCH";
        case STATUS_MAPPING_ERROR: return "STATUS_MAPPING_ERROR";
        case STATUS_EXECUTION_FAILED: return "STATUS_EXECUTION_FAILED";
        case STATUS_INTERNAL_ERROR: return "STATUS_INTERNAL_ERROR";
        case STATUS_NOT_SUPPORTED: return "STATUS_NOT_SUPPORTED";
        case STATUS_LICENSE_ERROR: return "STATUS_LICENSE_ERROR";
        default: return "STATUS_UNKNOWN";
    }
}
// the MUSA face's names: the cuBLAS values under muBLAS's spellings, then muBLAS's own
inline const char* mublas_status_suffix(int s) {
    switch (s) {
        case STATUS_NOT_INITIALIZED: return "STATUS_INVALID_HANDLE";
        case STATUS_ALLOC_FAILED: return "STATUS_MEMORY_ERROR";
        case STATUS_NOT_SUPPORTED: return "STATUS_NOT_IMPLEMENTED";
        case STATUS_INVALID_POINTER: return "STATUS_INVALID_POINTER";
        case STATUS_INVALID_SIZE: return "STATUS_INVALID_SIZE";
        case STATUS_PERF_DEGRADED: return "STATUS_PERF_DEGRADED";
        case STATUS_SIZE_QUERY_MISMATCH: return "STATUS_SIZE_QUERY_MISMATCH";
        case STATUS_SIZE_INCREASED: return "STATUS_SIZE_INCREASED";
        case STATUS_SIZE_UNCHANGED: return "STATUS_SIZE_UNCHANGED";
        case STATUS_CONTINUE: return "STATUS_CONTINUE";
        case STATUS_CHECK_NUMERICS_FAIL: return "STATUS_CHECK_NUMERICS_FAIL";
        default: return status_suffix(s);
    }
}
inline const char* status_string(int s) {
    switch (s) {
        case STATUS_SUCCESS: return "success";
        case STATUS_NOT_INITIALIZED: return "the library was not initialized";
        case STATUS_ALLOC_FAILED: return "the resource allocation failed";
        case STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
        case STATUS_ARCH_MISMATCH: return "an absent device architectural feature is required";
        case STATUS_MAPPING_ERROR: return "an access to GPU memory space failed";
        case STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
        case STATUS_INTERNAL_ERROR: return "an internal operation failed";
        case STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
        case STATUS_LICENSE_ERROR: return "license error";
        default: return "unknown error";
    }
}

inline Status create(Handle* h) {
    if (h == nullptr) return STATUS_INVALID_VALUE;
    *h = new Context();
    return STATUS_SUCCESS;
}
inline Status destroy(Handle h) {
    if (h == nullptr) return STATUS_NOT_INITIALIZED;
    delete h;
    return STATUS_SUCCESS;
}

// The accumulator for an element type: double for float and double, float-exact widening for half.
template <class T>
inline double widen(T v) { return static_cast<double>(static_cast<float>(v)); }
inline double widen(double v) { return v; }
template <class T>
inline T narrow_to(double v) {
    if constexpr (std::is_same_v<T, __half>) return __double2half(v);
    else return static_cast<T>(v);
}

inline bool valid_op(int op) { return op == OP_N || op == OP_T || op == OP_C || op == OP_CONJG; }
inline bool transposed(int op) { return op == OP_T || op == OP_C; }

// C = alpha op(A) op(B) + beta C for one matrix; arguments already checked.
template <class T, class S>
inline void gemm_one(int ta, int tb, int m, int n, int k, S alpha, const T* A, int lda, const T* B, int ldb, S beta,
                     T* C, int ldc) {
    // op(A) row by row and op(B) column by column, so the inner product runs over contiguous memory.
    std::vector<double> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(k));
    for (int i = 0; i < m; ++i) {
        for (int l = 0; l < k; ++l) {
            a[static_cast<std::size_t>(i) * k + l] =
                widen(transposed(ta) ? A[l + static_cast<std::size_t>(i) * lda] : A[i + static_cast<std::size_t>(l) * lda]);
        }
    }
    const double al = widen(alpha), be = widen(beta);
    for (int j = 0; j < n; ++j) {
        for (int l = 0; l < k; ++l) {
            b[l] = widen(transposed(tb) ? B[j + static_cast<std::size_t>(l) * ldb] : B[l + static_cast<std::size_t>(j) * ldb]);
        }
        for (int i = 0; i < m; ++i) {
            double acc = 0;
            const double* row = &a[static_cast<std::size_t>(i) * k];
            for (int l = 0; l < k; ++l) acc += row[l] * b[l];
            T& c = C[i + static_cast<std::size_t>(j) * ldc];
            c = narrow_to<T>(be == 0 ? al * acc : al * acc + be * widen(c));
        }
    }
}

inline Status check_gemm(Handle h, int ta, int tb, int m, int n, int k, int lda, int ldb, int ldc) {
    if (h == nullptr) return STATUS_NOT_INITIALIZED;
    if (!valid_op(ta) || !valid_op(tb) || m < 0 || n < 0 || k < 0) return STATUS_INVALID_VALUE;
    const int rows_a = transposed(ta) ? k : m, rows_b = transposed(tb) ? n : k;
    if (lda < (rows_a > 1 ? rows_a : 1) || ldb < (rows_b > 1 ? rows_b : 1) || ldc < (m > 1 ? m : 1)) {
        return STATUS_INVALID_VALUE;
    }
    return STATUS_SUCCESS;
}

// Strided batches (strides in elements); a batch of one with zero strides is plain gemm.
template <class T, class S>
inline Status gemm(Handle h, int ta, int tb, int m, int n, int k, const S* alpha, const T* A, int lda, long long sa,
                   const T* B, int ldb, long long sb, const S* beta, T* C, int ldc, long long sc, int batch) {
    const Status st = check_gemm(h, ta, tb, m, n, k, lda, ldb, ldc);
    if (st != STATUS_SUCCESS) return st;
    if (batch < 0 || alpha == nullptr || beta == nullptr) return STATUS_INVALID_VALUE;
    for (int i = 0; i < batch && m > 0 && n > 0; ++i) {
        gemm_one(ta, tb, m, n, k, *alpha, A + i * sa, lda, B + i * sb, ldb, *beta, C + i * sc, ldc);
    }
    return STATUS_SUCCESS;
}
// Batches given as arrays of matrix pointers.
template <class T, class S>
inline Status gemm_batched(Handle h, int ta, int tb, int m, int n, int k, const S* alpha, const T* const A[], int lda,
                           const T* const B[], int ldb, const S* beta, T* const C[], int ldc, int batch) {
    const Status st = check_gemm(h, ta, tb, m, n, k, lda, ldb, ldc);
    if (st != STATUS_SUCCESS) return st;
    if (batch < 0 || alpha == nullptr || beta == nullptr) return STATUS_INVALID_VALUE;
    for (int i = 0; i < batch && m > 0 && n > 0; ++i) gemm_one(ta, tb, m, n, k, *alpha, A[i], lda, B[i], ldb, *beta, C[i], ldc);
    return STATUS_SUCCESS;
}

// Element i of a strided vector of n elements; a negative increment walks it backwards (BLAS convention).
template <class T>
inline T& at(T* x, int n, int inc, int i) {
    return inc >= 0 ? x[static_cast<std::ptrdiff_t>(i) * inc] : x[static_cast<std::ptrdiff_t>(n - 1 - i) * -inc];
}

// y = alpha op(A) x + beta y
template <class T>
inline Status gemv(Handle h, int trans, int m, int n, const T* alpha, const T* A, int lda, const T* x, int incx,
                   const T* beta, T* y, int incy) {
    if (h == nullptr) return STATUS_NOT_INITIALIZED;
    if (!valid_op(trans) || m < 0 || n < 0 || lda < (m > 1 ? m : 1) || incx == 0 || incy == 0) return STATUS_INVALID_VALUE;
    if (alpha == nullptr || beta == nullptr) return STATUS_INVALID_VALUE;
    const int rows = transposed(trans) ? n : m, cols = transposed(trans) ? m : n;
    for (int i = 0; i < rows; ++i) {
        double acc = 0;
        for (int j = 0; j < cols; ++j) {
            const T a = transposed(trans) ? A[j + static_cast<std::size_t>(i) * lda] : A[i + static_cast<std::size_t>(j) * lda];
            acc += widen(a) * widen(at(x, cols, incx, j));
        }
        T& yi = at(y, rows, incy, i);
        yi = static_cast<T>(*beta == 0 ? widen(*alpha) * acc : widen(*alpha) * acc + widen(*beta) * widen(yi));
    }
    return STATUS_SUCCESS;
}

template <class T>
inline Status axpy(Handle h, int n, const T* alpha, const T* x, int incx, T* y, int incy) {
    if (h == nullptr) return STATUS_NOT_INITIALIZED;
    if (alpha == nullptr) return STATUS_INVALID_VALUE;
    for (int i = 0; i < n; ++i) at(y, n, incy, i) = static_cast<T>(widen(*alpha) * widen(at(x, n, incx, i)) + widen(at(y, n, incy, i)));
    return STATUS_SUCCESS;
}
template <class T>
inline Status scal(Handle h, int n, const T* alpha, T* x, int incx) {
    if (h == nullptr) return STATUS_NOT_INITIALIZED;
    if (alpha == nullptr) return STATUS_INVALID_VALUE;
    for (int i = 0; incx > 0 && i < n; ++i) x[static_cast<std::ptrdiff_t>(i) * incx] *= *alpha;
    return STATUS_SUCCESS;
}
template <class T>
inline Status copy(Handle h, int n, const T* x, int incx, T* y, int incy) {
    if (h == nullptr) return STATUS_NOT_INITIALIZED;
    for (int i = 0; i < n; ++i) at(y, n, incy, i) = at(x, n, incx, i);
    return STATUS_SUCCESS;
}
template <class T>
inline Status swap(Handle h, int n, T* x, int incx, T* y, int incy) {
    if (h == nullptr) return STATUS_NOT_INITIALIZED;
    for (int i = 0; i < n; ++i) std::swap(at(x, n, incx, i), at(y, n, incy, i));
    return STATUS_SUCCESS;
}
template <class T>
inline Status dot(Handle h, int n, const T* x, int incx, const T* y, int incy, T* result) {
    if (h == nullptr) return STATUS_NOT_INITIALIZED;
    if (result == nullptr) return STATUS_INVALID_VALUE;
    double acc = 0;
    for (int i = 0; i < n; ++i) acc += widen(at(x, n, incx, i)) * widen(at(y, n, incy, i));
    *result = static_cast<T>(acc);
    return STATUS_SUCCESS;
}
// Euclidean norm, scaled so that neither overflow nor underflow loses it; 0 for n <= 0 or incx <= 0.
template <class T>
inline Status nrm2(Handle h, int n, const T* x, int incx, T* result) {
    if (h == nullptr) return STATUS_NOT_INITIALIZED;
    if (result == nullptr) return STATUS_INVALID_VALUE;
    long double scale = 0, ssq = 1;
    for (int i = 0; incx > 0 && i < n; ++i) {
        const long double v = std::fabs(static_cast<long double>(x[static_cast<std::ptrdiff_t>(i) * incx]));
        if (v == 0) continue;
        if (scale < v) {
            ssq = 1 + ssq * (scale / v) * (scale / v);
            scale = v;
        } else {
            ssq += (v / scale) * (v / scale);
        }
    }
    *result = static_cast<T>(scale * std::sqrt(ssq));
    return STATUS_SUCCESS;
}
template <class T>
inline Status asum(Handle h, int n, const T* x, int incx, T* result) {
    if (h == nullptr) return STATUS_NOT_INITIALIZED;
    if (result == nullptr) return STATUS_INVALID_VALUE;
    double acc = 0;
    for (int i = 0; incx > 0 && i < n; ++i) acc += std::fabs(widen(x[static_cast<std::ptrdiff_t>(i) * incx]));
    *result = static_cast<T>(acc);
    return STATUS_SUCCESS;
}
// 1-based index of the first element of largest (is_max) or smallest magnitude; 0 for n <= 0 or incx <= 0.
template <class T>
inline Status iamax(Handle h, int n, const T* x, int incx, int* result, bool is_max) {
    if (h == nullptr) return STATUS_NOT_INITIALIZED;
    if (result == nullptr) return STATUS_INVALID_VALUE;
    *result = 0;
    double best = 0;
    for (int i = 0; incx > 0 && i < n; ++i) {
        const double v = std::fabs(widen(x[static_cast<std::ptrdiff_t>(i) * incx]));
        if (i == 0 || (is_max ? v > best : v < best)) {
            best = v;
            *result = i + 1;
        }
    }
    return STATUS_SUCCESS;
}

// cublasSetVector/GetVector/SetMatrix/GetMatrix: strided copies between host and "device" memory.
inline Status copy_matrix(int rows, int cols, int elem_size, const void* src, int lds, void* dst, int ldd) {
    if (rows < 0 || cols < 0 || elem_size <= 0 || lds < rows || ldd < rows || lds <= 0 || ldd <= 0) return STATUS_INVALID_VALUE;
    for (int j = 0; j < cols; ++j) {
        for (int i = 0; i < rows; ++i) {
            std::memcpy(static_cast<char*>(dst) + (static_cast<std::size_t>(j) * ldd + i) * elem_size,
                        static_cast<const char*>(src) + (static_cast<std::size_t>(j) * lds + i) * elem_size, elem_size);
        }
    }
    return STATUS_SUCCESS;
}
inline Status copy_vector(int n, int elem_size, const void* x, int incx, void* y, int incy) {
    if (n < 0 || elem_size <= 0 || incx <= 0 || incy <= 0) return STATUS_INVALID_VALUE;
    for (int i = 0; i < n; ++i) {
        std::memcpy(static_cast<char*>(y) + static_cast<std::size_t>(i) * incy * elem_size,
                    static_cast<const char*>(x) + static_cast<std::size_t>(i) * incx * elem_size, elem_size);
    }
    return STATUS_SUCCESS;
}

}  // namespace emu::blas

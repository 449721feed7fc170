// library_tour: one translation unit that touches a few names from each CUDA library, for the
// migration tests only. It is never compiled or run by the corpus tests (migrate_only = true in
// program.toml) and does not check anything; it exists so that the golden port shows how each
// library's headers, types, functions and enumerators are rewritten or reported.
#include <cuda_runtime.h>
#include <cuComplex.h>
#include <cooperative_groups.h>

#include <cublas_v2.h>
#include <cublasLt.h>
#include <curand.h>
#include <cufft.h>
#include <cusparse.h>
#include <cusolverDn.h>
#include <nccl.h>
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>
#include <nvrtc.h>
#include <cudnn.h>
#include <npp.h>

#include <cub/cub.cuh>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>
#include <cutlass/gemm/device/gemm.h>

namespace cg = cooperative_groups;

// CUTLASS: a single-precision, column-major GEMM type.
using ColumnMajor = cutlass::layout::ColumnMajor;
typedef cutlass::gemm::device::Gemm<float, ColumnMajor, float, ColumnMajor, float, ColumnMajor> SgemmCutlass;

// libdevice and cooperative groups in device code.
__global__ void exp_tiles(float* data, int n)
{
    cg::thread_block block = cg::this_thread_block();
    const int i = static_cast<int>(block.group_index().x * block.size() + block.thread_rank());
    if (i < n) data[i] = __nv_expf(data[i]);
    block.sync();
}

static void blas_tour(float* d_a, float* d_b, float* d_c, int n)
{
    cublasHandle_t handle;
    cublasCreate(&handle);
    const float one = 1.0f, zero = 0.0f;
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, d_a, n, d_b, n, &zero, d_c, n);
    cublasDestroy(handle);

    cublasLtHandle_t lt;
    cublasLtCreate(&lt);
    cublasLtMatmulDesc_t desc;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatmulDescDestroy(desc);
    cublasLtDestroy(lt);
}

static void rand_fft_tour(float* d_x, cufftComplex* d_freq, int n)
{
    curandGenerator_t gen;
    curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10);
    curandGenerateUniform(gen, d_x, n);
    curandDestroyGenerator(gen);

    cufftHandle plan;
    cufftPlan1d(&plan, n, CUFFT_R2C, 1);
    cufftExecR2C(plan, d_x, d_freq);
    cufftDestroy(plan);
}

static void sparse_solver_tour(int n)
{
    cusparseHandle_t sparse;
    cusparseCreate(&sparse);
    cusparseSpMatDescr_t mat;
    cusparseCreateCsr(&mat, n, n, 0, nullptr, nullptr, nullptr, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                      CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
    cusparseDestroySpMat(mat);
    cusparseDestroy(sparse);

    cusolverDnHandle_t solver;
    cusolverDnCreate(&solver);
    int lwork = 0;
    cusolverDnSgetrf_bufferSize(solver, n, n, nullptr, n, &lwork);
    cusolverDnDestroy(solver);
}

static void comm_profile_tour(float* d_x, int n)
{
    ncclComm_t comm;
    ncclUniqueId id;
    ncclGetUniqueId(&id);
    ncclCommInitRank(&comm, 1, id, 0);
    ncclAllReduce(d_x, d_x, n, ncclFloat, ncclSum, comm, 0);
    ncclCommDestroy(comm);

    nvtxRangePushA("library_tour");
    uint64_t timestamp = 0;
    cuptiGetTimestamp(&timestamp);
    nvtxRangePop();

    nvrtcProgram prog;
    nvrtcCreateProgram(&prog, "__global__ void k() {}", "k.cu", 0, nullptr, nullptr);
    nvrtcCompileProgram(prog, 0, nullptr);
    nvrtcDestroyProgram(&prog);
}

static void dnn_npp_tour(const Npp8u* src, Npp8u* dst, int width, int height)
{
    cudnnHandle_t dnn;
    cudnnCreate(&dnn);
    cudnnDestroy(dnn);

    const NppiSize roi = {width, height};
    nppiAdd_8u_C1RSfs(src, width, src, width, dst, width, roi, 0);
}

static float cub_thrust_tour(const float* d_in, float* d_out, int n)
{
    void* temp = nullptr;
    size_t temp_bytes = 0;
    cub::DeviceReduce::Sum(temp, temp_bytes, d_in, d_out, n);
    cudaMalloc(&temp, temp_bytes);
    cub::DeviceReduce::Sum(temp, temp_bytes, d_in, d_out, n);
    cudaFree(temp);

    thrust::device_vector<float> v(d_in, d_in + n);
    return thrust::reduce(thrust::cuda::par, v.begin(), v.end(), 0.0f);
}

int main()
{
    const int n = 64;
    float *d_a, *d_b, *d_c;
    cudaMalloc(&d_a, n * n * sizeof(float));
    cudaMalloc(&d_b, n * n * sizeof(float));
    cudaMalloc(&d_c, n * n * sizeof(float));
    cufftComplex* d_freq;
    cudaMalloc(&d_freq, (n / 2 + 1) * sizeof(cufftComplex));
    cuFloatComplex z = make_cuFloatComplex(1.0f, 2.0f);
    z = cuCmulf(z, cuConjf(z));

    exp_tiles<<<1, n>>>(d_a, n);
    blas_tour(d_a, d_b, d_c, n);
    rand_fft_tour(d_a, d_freq, n);
    sparse_solver_tour(n);
    comm_profile_tour(d_a, n);
    dnn_npp_tour(reinterpret_cast<const Npp8u*>(d_a), reinterpret_cast<Npp8u*>(d_b), 16, 16);
    const float total = cub_thrust_tour(d_a, d_c, n);
    SgemmCutlass gemm_op;
    (void)gemm_op;

    cudaFree(d_a);
    cudaFree(d_b);
    cudaFree(d_c);
    cudaFree(d_freq);
    return (total >= 0.0f && cuCrealf(z) > 0.0f) ? 0 : 1;
}

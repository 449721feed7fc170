// library_tour: one translation unit that touches a few names from each CUDA library, for the
// migration tests only. It is never compiled or run by the corpus tests (migrate_only = true in
// program.toml) and does not check anything; it exists so that the golden port shows how each
// library's headers, types, functions and enumerators are rewritten or reported.
#include <musa_runtime.h>
#include <muComplex.h>
#include <cooperative_groups.h>

#include <mublas.h>
#include <mublasLt.h>
#include <murand.h>
#include <mufft.h>
#include <musparse.h>
#include <musolverDn.h>
#include <mccl.h>
#include <mupti.h>
#include <mttx3/mtToolsExt.h>
#include <mtrtc.h>
#include <cudnn.h>
#include <mtpp.h>

#include <cub/cub.cuh>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/reduce.h>
#include <mutlass/gemm/device/gemm.h>

namespace cg = cooperative_groups;

// CUTLASS: a single-precision, column-major GEMM type.
using ColumnMajor = mutlass::layout::ColumnMajor;
typedef mutlass::gemm::device::Gemm<float, ColumnMajor, float, ColumnMajor, float, ColumnMajor> SgemmCutlass;

// libdevice and cooperative groups in device code.
__global__ void exp_tiles(float* data, int n)
{
    cg::thread_block block = cg::this_thread_block();
    const int i = static_cast<int>(block.group_index().x * block.size() + block.thread_rank());
    if (i < n) data[i] = __mt_expf(data[i]);
    block.sync();
}

static void blas_tour(float* d_a, float* d_b, float* d_c, int n)
{
    mublasHandle_t handle;
    mublasCreate(&handle);
    const float one = 1.0f, zero = 0.0f;
    mublasSgemm(handle, MUBLAS_OP_N, MUBLAS_OP_N, n, n, n, &one, d_a, n, d_b, n, &zero, d_c, n);
    mublasDestroy(handle);

    mublasLtHandle_t lt;
    mublasLtCreate(&lt);
    mublasLtMatmulDesc_t desc;
    mublasLtMatmulDescCreate(&desc, MUBLAS_COMPUTE_32F, MUSA_R_32F);
    mublasLtMatmulDescDestroy(desc);
    mublasLtDestroy(lt);
}

static void rand_fft_tour(float* d_x, mufftComplex* d_freq, int n)
{
    murandGenerator_t gen;
    murandCreateGenerator(&gen, MURAND_RNG_PSEUDO_PHILOX4_32_10);
    murandGenerateUniform(gen, d_x, n);
    murandDestroyGenerator(gen);

    mufftHandle plan;
    mufftPlan1d(&plan, n, MUFFT_R2C, 1);
    mufftExecR2C(plan, d_x, d_freq);
    mufftDestroy(plan);
}

static void sparse_solver_tour(int n)
{
    musparseHandle_t sparse;
    musparseCreate(&sparse);
    musparseSpMatDescr_t mat;
    musparseCreateCsr(&mat, n, n, 0, nullptr, nullptr, nullptr, MUSPARSE_INDEX_32I, MUSPARSE_INDEX_32I,
                      MUSPARSE_INDEX_BASE_ZERO, MUSA_R_32F);
    musparseDestroySpMat(mat);
    musparseDestroy(sparse);

    musolverDnHandle_t solver;
    musolverDnCreate(&solver);
    int lwork = 0;
    musolverDnSgetrf_bufferSize(solver, n, n, nullptr, n, &lwork);
    musolverDnDestroy(solver);
}

static void comm_profile_tour(float* d_x, int n)
{
    mcclComm_t comm;
    mcclUniqueId id;
    mcclGetUniqueId(&id);
    mcclCommInitRank(&comm, 1, id, 0);
    mcclAllReduce(d_x, d_x, n, mcclFloat, mcclSum, comm, 0);
    mcclCommDestroy(comm);

    mttxRangePushA("library_tour");
    uint64_t timestamp = 0;
    muptiGetTimestamp(&timestamp);
    mttxRangePop();

    mtrtcProgram prog;
    mtrtcCreateProgram(&prog, "__global__ void k() {}", "k.cu", 0, nullptr, nullptr);
    mtrtcCompileProgram(prog, 0, nullptr);
    mtrtcDestroyProgram(&prog);
}

static void dnn_npp_tour(const Npp8u* src, Npp8u* dst, int width, int height)
{
    cudnnHandle_t dnn;
    cudnnCreate(&dnn);
    cudnnDestroy(dnn);

    const NppiSize roi = {width, height};
    mtppiAdd_8u_C1RSfs(src, width, src, width, dst, width, roi, 0);
}

static float cub_thrust_tour(const float* d_in, float* d_out, int n)
{
    void* temp = nullptr;
    size_t temp_bytes = 0;
    cub::DeviceReduce::Sum(temp, temp_bytes, d_in, d_out, n);
    musaMalloc(&temp, temp_bytes);
    cub::DeviceReduce::Sum(temp, temp_bytes, d_in, d_out, n);
    musaFree(temp);

    thrust::device_vector<float> v(d_in, d_in + n);
    return thrust::reduce(thrust::musa::par, v.begin(), v.end(), 0.0f);
}

int main()
{
    const int n = 64;
    float *d_a, *d_b, *d_c;
    musaMalloc(&d_a, n * n * sizeof(float));
    musaMalloc(&d_b, n * n * sizeof(float));
    musaMalloc(&d_c, n * n * sizeof(float));
    mufftComplex* d_freq;
    musaMalloc(&d_freq, (n / 2 + 1) * sizeof(mufftComplex));
    muFloatComplex z = make_muFloatComplex(1.0f, 2.0f);
    z = muCmulf(z, muConjf(z));

    exp_tiles<<<1, n>>>(d_a, n);
    blas_tour(d_a, d_b, d_c, n);
    rand_fft_tour(d_a, d_freq, n);
    sparse_solver_tour(n);
    comm_profile_tour(d_a, n);
    dnn_npp_tour(reinterpret_cast<const Npp8u*>(d_a), reinterpret_cast<Npp8u*>(d_b), 16, 16);
    const float total = cub_thrust_tour(d_a, d_c, n);
    SgemmCutlass gemm_op;
    (void)gemm_op;

    musaFree(d_a);
    musaFree(d_b);
    musaFree(d_c);
    musaFree(d_freq);
    return (total >= 0.0f && muCrealf(z) > 0.0f) ? 0 : 1;
}

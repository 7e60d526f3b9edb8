// wmma.cu - CUDA's warp matrix API (nvcuda::wmma), as tutorials and older kernels write tensor-core
// code: nvcc turns it into wmma.load / wmma.mma / wmma.store.  One warp per block, one tile per block
// (tile b at offset b of each array); strides padded past the tile's width; small integer values, so
// every result is exact whatever the accumulation order.  Element-wise arithmetic on a fragment
// (acc.x[i]) does not depend on which lane holds which element.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

// D (col-major, ldd 16) = 2 (A B + C) + 1: m16n16k16, A f16 row-major (lda 24), B f16 col-major (ldb 24),
// C f32 row-major (ldc 20).
extern "C" __global__ void wmma_f16_f32(const __half *A, const __half *B, const float *C, float *D) {
    const __half *a = A + blockIdx.x * 16 * 24, *b = B + blockIdx.x * 16 * 24;
    const float *c = C + blockIdx.x * 16 * 20;
    float *d = D + blockIdx.x * 256;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::load_matrix_sync(fa, a, 24);
    wmma::load_matrix_sync(fb, b, 24);
    wmma::load_matrix_sync(acc, c, 20, wmma::mem_row_major);
    wmma::mma_sync(acc, fa, fb, acc);
    for (int i = 0; i < acc.num_elements; i++) acc.x[i] = 2.0f * acc.x[i] + 1.0f;
    wmma::store_matrix_sync(d, acc, 16, wmma::mem_col_major);
}

// D (row-major, ldd 8) = A B + 0.5 in f16: m32n8k16, A f16 col-major (lda 32), B f16 row-major (ldb 8),
// an f16 accumulator filled with 0.5.
extern "C" __global__ void wmma_f16_f16(const __half *A, const __half *B, __half *D) {
    const __half *a = A + blockIdx.x * 16 * 32, *b = B + blockIdx.x * 16 * 8;
    __half *d = D + blockIdx.x * 32 * 8;
    wmma::fragment<wmma::matrix_a, 32, 8, 16, __half, wmma::col_major> fa;
    wmma::fragment<wmma::matrix_b, 32, 8, 16, __half, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 32, 8, 16, __half> acc;
    wmma::fill_fragment(acc, __float2half(0.5f));
    wmma::load_matrix_sync(fa, a, 32);
    wmma::load_matrix_sync(fb, b, 8);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(d, acc, 8, wmma::mem_row_major);
}

// D (row-major, ldd 32) = A B, two K steps (K = 32): m8n32k16, bf16, A row-major (lda 40), B row-major
// (ldb 40), in shared memory first.
extern "C" __global__ void wmma_bf16(const __nv_bfloat16 *A, const __nv_bfloat16 *B, float *D) {
    __shared__ __align__(32) __nv_bfloat16 as[8 * 40], bs[32 * 40];
    const __nv_bfloat16 *a = A + blockIdx.x * 8 * 40, *b = B + blockIdx.x * 32 * 40;
    for (int i = threadIdx.x; i < 8 * 40; i += 32) as[i] = a[i];
    for (int i = threadIdx.x; i < 32 * 40; i += 32) bs[i] = b[i];
    __syncwarp();
    wmma::fragment<wmma::matrix_a, 8, 32, 16, __nv_bfloat16, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 8, 32, 16, __nv_bfloat16, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 8, 32, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k = 0; k < 32; k += 16) {
        wmma::load_matrix_sync(fa, as + k, 40);
        wmma::load_matrix_sync(fb, bs + k * 40, 40);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(D + blockIdx.x * 8 * 32, acc, 32, wmma::mem_row_major);
}

// D (row-major, ldd 16) = A B: m16n16k8, tf32 (A row-major lda 8, B col-major ldb 12, rounded with
// __float_to_tf32 per element of the fragment).
extern "C" __global__ void wmma_tf32(const float *A, const float *B, float *D) {
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
    wmma::load_matrix_sync(fa, A + blockIdx.x * 16 * 8, 8);
    wmma::load_matrix_sync(fb, B + blockIdx.x * 16 * 12, 12);
    for (int i = 0; i < fa.num_elements; i++) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
    for (int i = 0; i < fb.num_elements; i++) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
    wmma::fill_fragment(acc, 0.0f);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(D + blockIdx.x * 256, acc, 16, wmma::mem_row_major);
}

// D (row-major, ldd 16) = A B + C, saturating: m16n16k16, s8 (A row-major lda 16, B col-major ldb 32),
// C s32 col-major (ldc 16).
extern "C" __global__ void wmma_s8(const signed char *A, const signed char *B, const int *C, int *D) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, int> acc;
    wmma::load_matrix_sync(fa, A + blockIdx.x * 256, 16);
    wmma::load_matrix_sync(fb, B + blockIdx.x * 16 * 32, 32);
    wmma::load_matrix_sync(acc, C + blockIdx.x * 256, 16, wmma::mem_col_major);
    wmma::mma_sync(acc, fa, fb, acc, true);
    wmma::store_matrix_sync(D + blockIdx.x * 256, acc, 16, wmma::mem_row_major);
}

// D (row-major, ldd 8) = A B + C: m8n8k4, f64 (A row-major lda 4, B row-major ldb 8, C row-major ldc 8).
extern "C" __global__ void wmma_f64(const double *A, const double *B, const double *C, double *D) {
    wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 8, 8, 4, double> acc;
    wmma::load_matrix_sync(fa, A + blockIdx.x * 32, 4);
    wmma::load_matrix_sync(fb, B + blockIdx.x * 32, 8);
    wmma::load_matrix_sync(acc, C + blockIdx.x * 64, 8, wmma::mem_row_major);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(D + blockIdx.x * 64, acc, 8, wmma::mem_row_major);
}

// subbyte.cu - the sub-byte and single-bit tensor-core forms as nvcc writes them; tests/emu/regen.sh turns
// it into subbyte.ptx (nvcc -arch=sm_80 -ptx), which test_emu_subbyte.c runs on the emulator against a
// reference computed on the host.
//   wmma_s4, wmma_u4, bmma_xor, bmma_and: CUDA's nvcuda::wmma::experimental API (precision::s4, u4, b1;
//     bmma_sync with bmmaBitOpXOR / bmmaBitOpAND): wmma.load.{a,b,c}, wmma.mma, wmma.store.d on m8n8k32
//     and m8n8k128.  One warp per block, tile b at offset b of each array; padded strides; C and D in
//     both layouts; A and B through shared memory in wmma_u4.
//   mma_<shape>_<op>: inline-asm mma.sync.aligned.{m8n8k128,m16n8k128,m16n8k256}.row.col.s32.b1.b1.s32
//     .{xor,and}.popc, each lane's fragment registers read from and D written to global memory (lane x of
//     the grid: A at 4x, B at 2x, C and D at 4x).
#include <mma.h>

using namespace nvcuda;
namespace wx = nvcuda::wmma::experimental;

// D (row-major, ldd 8) = A B + C, saturating: A s4 row-major (lda 64: 32 bytes a row), B s4 col-major (ldb
// 32), C col-major (ldc 8).
extern "C" __global__ void wmma_s4(const unsigned char *A, const unsigned char *B, const int *C, int *D) {
    wmma::fragment<wmma::matrix_a, 8, 8, 32, wx::precision::s4, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 8, 8, 32, wx::precision::s4, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 8, 8, 32, int> acc;
    wmma::load_matrix_sync(fa, A + blockIdx.x * 8 * 32, 64);
    wmma::load_matrix_sync(fb, B + blockIdx.x * 8 * 16, 32);
    wmma::load_matrix_sync(acc, C + blockIdx.x * 64, 8, wmma::mem_col_major);
    wmma::mma_sync(acc, fa, fb, acc, true);
    wmma::store_matrix_sync(D + blockIdx.x * 64, acc, 8, wmma::mem_row_major);
}

// D (col-major, ldd 8) = A B + C, wrapping: u4, A row-major (lda 32) and B col-major (ldb 64: 32 bytes a
// column) copied to shared memory first, C row-major (ldc 16).
extern "C" __global__ void wmma_u4(const unsigned char *A, const unsigned char *B, const int *C, int *D) {
    __shared__ __align__(32) unsigned char as[8 * 16], bs[8 * 32];
    for (int i = threadIdx.x; i < 8 * 16; i += 32) as[i] = A[blockIdx.x * 8 * 16 + i];
    for (int i = threadIdx.x; i < 8 * 32; i += 32) bs[i] = B[blockIdx.x * 8 * 32 + i];
    __syncwarp();
    wmma::fragment<wmma::matrix_a, 8, 8, 32, wx::precision::u4, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 8, 8, 32, wx::precision::u4, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 8, 8, 32, int> acc;
    wmma::load_matrix_sync(fa, as, 32);
    wmma::load_matrix_sync(fb, bs, 64);
    wmma::load_matrix_sync(acc, C + blockIdx.x * 8 * 16, 16, wmma::mem_row_major);
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(D + blockIdx.x * 64, acc, 8, wmma::mem_col_major);
}

// D (row-major, ldd 8) = 3 (C + popc(A xor B)) - 7: b1, A row-major (lda 128: 16 bytes a row), B col-major
// (ldb 256: 32 bytes a column), C row-major (ldc 8); element-wise arithmetic on the accumulator.
extern "C" __global__ void bmma_xor(const unsigned char *A, const unsigned char *B, const int *C, int *D) {
    wmma::fragment<wmma::matrix_a, 8, 8, 128, wx::precision::b1, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 8, 8, 128, wx::precision::b1, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 8, 8, 128, int> acc;
    wmma::load_matrix_sync(fa, A + blockIdx.x * 8 * 16, 128);
    wmma::load_matrix_sync(fb, B + blockIdx.x * 8 * 32, 256);
    wmma::load_matrix_sync(acc, C + blockIdx.x * 64, 8, wmma::mem_row_major);
    wmma::bmma_sync(acc, fa, fb, acc, wx::bmmaBitOpXOR);
    for (int i = 0; i < acc.num_elements; i++) acc.x[i] = 3 * acc.x[i] - 7;
    wmma::store_matrix_sync(D + blockIdx.x * 64, acc, 8, wmma::mem_row_major);
}

// D (col-major, ldd 16) = C + popc(A and B): b1, A row-major (lda 256), B col-major (ldb 128), C col-major
// (ldc 8).
extern "C" __global__ void bmma_and(const unsigned char *A, const unsigned char *B, const int *C, int *D) {
    wmma::fragment<wmma::matrix_a, 8, 8, 128, wx::precision::b1, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 8, 8, 128, wx::precision::b1, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 8, 8, 128, int> acc;
    wmma::load_matrix_sync(fa, A + blockIdx.x * 8 * 32, 256);
    wmma::load_matrix_sync(fb, B + blockIdx.x * 8 * 16, 128);
    wmma::load_matrix_sync(acc, C + blockIdx.x * 64, 8, wmma::mem_col_major);
    wmma::bmma_sync(acc, fa, fb, acc, wx::bmmaBitOpAND);
    wmma::store_matrix_sync(D + blockIdx.x * 8 * 16, acc, 16, wmma::mem_col_major);
}

#define MMA_M8N8K128(op)                                                                                         \
    extern "C" __global__ void mma_m8n8k128_##op(const unsigned *A, const unsigned *B, const int *C, int *D) { \
        unsigned x = blockIdx.x * 32 + threadIdx.x;                                                            \
        int d0, d1;                                                                                            \
        asm("mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32." #op ".popc {%0, %1}, {%2}, {%3}, {%4, %5};"     \
            : "=r"(d0), "=r"(d1)                                                                               \
            : "r"(A[4 * x]), "r"(B[2 * x]), "r"(C[4 * x]), "r"(C[4 * x + 1]));                                 \
        D[4 * x] = d0, D[4 * x + 1] = d1;                                                                      \
    }
#define MMA_M16N8K128(op)                                                                                         \
    extern "C" __global__ void mma_m16n8k128_##op(const unsigned *A, const unsigned *B, const int *C, int *D) { \
        unsigned x = blockIdx.x * 32 + threadIdx.x;                                                             \
        int d0, d1, d2, d3;                                                                                     \
        asm("mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32." #op ".popc {%0, %1, %2, %3}, {%4, %5}, {%6}, " \
            "{%7, %8, %9, %10};"                                                                                \
            : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)                                                            \
            : "r"(A[4 * x]), "r"(A[4 * x + 1]), "r"(B[2 * x]), "r"(C[4 * x]), "r"(C[4 * x + 1]),                \
              "r"(C[4 * x + 2]), "r"(C[4 * x + 3]));                                                            \
        D[4 * x] = d0, D[4 * x + 1] = d1, D[4 * x + 2] = d2, D[4 * x + 3] = d3;                                 \
    }
#define MMA_M16N8K256(op)                                                                                         \
    extern "C" __global__ void mma_m16n8k256_##op(const unsigned *A, const unsigned *B, const int *C, int *D) { \
        unsigned x = blockIdx.x * 32 + threadIdx.x;                                                             \
        int d0, d1, d2, d3;                                                                                     \
        asm("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32." #op ".popc {%0, %1, %2, %3}, "                 \
            "{%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"                                                 \
            : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)                                                            \
            : "r"(A[4 * x]), "r"(A[4 * x + 1]), "r"(A[4 * x + 2]), "r"(A[4 * x + 3]), "r"(B[2 * x]),            \
              "r"(B[2 * x + 1]), "r"(C[4 * x]), "r"(C[4 * x + 1]), "r"(C[4 * x + 2]), "r"(C[4 * x + 3]));       \
        D[4 * x] = d0, D[4 * x + 1] = d1, D[4 * x + 2] = d2, D[4 * x + 3] = d3;                                 \
    }
MMA_M8N8K128(xor)
MMA_M8N8K128(and)
MMA_M16N8K128(xor)
MMA_M16N8K128(and)
MMA_M16N8K256(xor)
MMA_M16N8K256(and)

// hopper.cu - sm_90a code as hand-written Hopper kernels (CUTLASS's style of inline PTX) and CUDA's own
// headers write it: tensor maps passed as __grid_constant__ parameters, TMA loads into a two-stage ring
// with full/empty mbarriers (the waits as CUTLASS writes them: a label loop inside a { } block, inlined
// several times into one function), a producer warpgroup (elect.sync, setmaxnreg.dec) and a consumer
// warpgroup (setmaxnreg.inc, wgmma.mma_async from 128B-swizzled shared memory through matrix descriptors),
// a TMA store; wgmma with A from registers and B from unswizzled memory; stmatrix; bulk copies through
// cuda::ptx and cuda::barrier / cuda::memcpy_async; a one-CTA cluster through cooperative groups; clusters
// of 4 (a histogram in distributed shared memory) and of 2 (a TMA load multicast to both CTAs).
// Small integer values make every float result exact.
#include <cooperative_groups.h>
#include <cuda.h>
#include <cuda/barrier>
#include <cuda/ptx>
#include <cuda_fp16.h>
#include <stdint.h>

namespace cg = cooperative_groups;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void bar_init(uint64_t *bar, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
}

__device__ __forceinline__ void bar_wait(uint64_t *bar, int phase) {
    asm volatile("{\n\t"
                 ".reg .pred P1;\n\t"
                 "LAB_WAIT:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1, %2;\n\t"
                 "@P1 bra DONE;\n\t"
                 "bra LAB_WAIT;\n\t"
                 "DONE:\n\t"
                 "}\n" ::"r"(smem_u32(bar)),
                 "r"(phase), "r"(0x989680));
}

__device__ __forceinline__ void bar_arrive(uint64_t *bar) {
    asm volatile("{\n\t"
                 ".reg .b64 state;\n\t"
                 "mbarrier.arrive.shared::cta.b64 state, [%0];\n\t"
                 "}\n" ::"r"(smem_u32(bar)));
}

__device__ __forceinline__ void bar_arrive_tx(uint64_t *bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes));
}

__device__ __forceinline__ void tma_load_2d(void *dst, const CUtensorMap *map, uint64_t *bar, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
                     smem_u32(dst)),
                 "l"((uint64_t)map), "r"(smem_u32(bar)), "r"(c0), "r"(c1)
                 : "memory");
}

__device__ __forceinline__ uint32_t elect_one() {
    uint32_t pred = 0, laneid = 0;
    asm volatile("{\n\t"
                 ".reg .b32 %%rx;\n\t"
                 ".reg .pred %%px;\n\t"
                 "elect.sync %%rx|%%px, %2;\n\t"
                 "@%%px mov.s32 %1, 1;\n\t"
                 "mov.s32 %0, %%rx;\n\t"
                 "}\n"
                 : "+r"(laneid), "+r"(pred)
                 : "r"(0xFFFFFFFF));
    return pred;
}

// A wgmma matrix descriptor: start >> 4, leading and stride byte offsets >> 4, the swizzle (1: 128B).
__device__ __forceinline__ uint64_t make_desc(const void *p, uint32_t lbo, uint32_t sbo, uint32_t swizzle) {
    return (uint64_t)((smem_u32(p) & 0x3FFFF) >> 4) | (uint64_t)((lbo & 0x3FFFF) >> 4) << 16 |
           (uint64_t)((sbo & 0x3FFFF) >> 4) << 32 | (uint64_t)swizzle << 62;
}

#define ACC32(a)                                                                                                     \
    "+f"(a[0]), "+f"(a[1]), "+f"(a[2]), "+f"(a[3]), "+f"(a[4]), "+f"(a[5]), "+f"(a[6]), "+f"(a[7]), "+f"(a[8]),      \
        "+f"(a[9]), "+f"(a[10]), "+f"(a[11]), "+f"(a[12]), "+f"(a[13]), "+f"(a[14]), "+f"(a[15]), "+f"(a[16]),       \
        "+f"(a[17]), "+f"(a[18]), "+f"(a[19]), "+f"(a[20]), "+f"(a[21]), "+f"(a[22]), "+f"(a[23]), "+f"(a[24]),      \
        "+f"(a[25]), "+f"(a[26]), "+f"(a[27]), "+f"(a[28]), "+f"(a[29]), "+f"(a[30]), "+f"(a[31])
#define D32                                                                                                          \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, " \
    "%24, %25, %26, %27, %28, %29, %30, %31}"

// D[64x64] (+)= A[64x16] B[16x64], both K-major in shared memory; scale_d 0 starts from zero.
__device__ __forceinline__ void wgmma_ss_64x64x16(float (&d)[32], uint64_t da, uint64_t db, int scale_d) {
    asm volatile("{\n\t"
                 ".reg .pred p;\n\t"
                 "setp.ne.b32 p, %34, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " D32 ", %32, %33, p, 1, 1, 0, 0;\n\t"
                 "}\n"
                 : ACC32(d)
                 : "l"(da), "l"(db), "r"(scale_d));
}

// D[64x64] (+)= A[64x16] (registers, f16x2) B[16x64] (descriptor), bf16 here.
__device__ __forceinline__ void wgmma_rs_bf16_64x64x16(float (&d)[32], const uint32_t (&a)[4], uint64_t db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " D32
                 ", {%32, %33, %34, %35}, %36, 1, 1, 1, 1;\n"
                 : ACC32(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
template <int R> __device__ __forceinline__ void reg_dealloc() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R)); }
template <int R> __device__ __forceinline__ void reg_alloc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R)); }

// The D fragment of m64nN: register r of thread t of the warpgroup.
__device__ __forceinline__ int frag_row(int t, int r) { return 16 * (t / 32) + (t % 32) / 4 + 8 * ((r >> 1) & 1); }
__device__ __forceinline__ int frag_col(int t, int r) { return 8 * (r >> 2) + 2 * (t % 4) + (r & 1); }
#endif

// C[M, N] = A[M, K] B[N, K]^T (f16, K-major both, through tensor maps with 128B swizzle, boxes 64 x 64),
// f32 out; one 64x64 tile per block; 256 threads: warpgroup 0 produces, warpgroup 1 consumes.
// The ring has two stages: full[s] completes with the TMA bytes, empty[s] with the consumers' 128 arrivals.
extern "C" __global__ void __launch_bounds__(256) tma_wgmma_gemm(const __grid_constant__ CUtensorMap ta,
                                                                 const __grid_constant__ CUtensorMap tb, float *C, int M,
                                                                 int N, int K) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    unsigned char *smem = (unsigned char *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    __half *As = (__half *)smem;                    // 2 stages x 64 x 64
    __half *Bs = (__half *)(smem + 2 * 64 * 64 * 2); // 2 stages x 64 x 64
    __shared__ uint64_t full[2], empty[2];
    int tid = threadIdx.x, wg = tid / 128;
    int m0 = blockIdx.x * 64, n0 = blockIdx.y * 64, ktiles = (K + 63) / 64;
    if (tid == 0) {
        for (int s = 0; s < 2; s++) bar_init(&full[s], 1), bar_init(&empty[s], 128);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (wg == 0) {
        reg_dealloc<40>();
        if (tid / 32 == 0 && elect_one()) {
            for (int kt = 0; kt < ktiles; kt++) {
                int s = kt % 2, phase = (kt / 2) & 1;
                bar_wait(&empty[s], phase ^ 1);
                bar_arrive_tx(&full[s], 2 * 64 * 64 * 2);
                tma_load_2d(As + s * 64 * 64, &ta, &full[s], kt * 64, m0);
                tma_load_2d(Bs + s * 64 * 64, &tb, &full[s], kt * 64, n0);
            }
        }
    } else {
        reg_alloc<232>();
        int t = tid - 128;
        float acc[32];
        for (int i = 0; i < 32; i++) acc[i] = 0.f;
        for (int kt = 0; kt < ktiles; kt++) {
            int s = kt % 2, phase = (kt / 2) & 1;
            bar_wait(&full[s], phase);
            wgmma_fence();
            for (int kk = 0; kk < 4; kk++) {
                // 16 elements of k are 32 bytes along the 128-byte swizzled rows; 8 rows repeat every 1024 bytes
                uint64_t da = make_desc(As + s * 64 * 64 + kk * 16, 16, 1024, 1);
                uint64_t db = make_desc(Bs + s * 64 * 64 + kk * 16, 16, 1024, 1);
                wgmma_ss_64x64x16(acc, da, db, kt > 0 || kk > 0);
            }
            wgmma_commit();
            wgmma_wait<0>();
            bar_arrive(&empty[s]);
        }
        for (int r = 0; r < 32; r++) {
            int row = m0 + frag_row(t, r), col = n0 + frag_col(t, r);
            if (row < M && col < N) C[(size_t)row * N + col] = acc[r];
        }
    }
#endif
}

// C[64, 64] = A[64, 16] B[16, 64] in bf16: A from registers (each warp loads its 16 rows' fragment from
// global memory), B in shared memory without swizzle, MN-major (n contiguous: imm-trans-b 1), as 8x8 core
// matrices: element (k, n) at (n % 8) * 2 + (n / 8) * SBO + (k % 8) * 16 + (k / 8) * LBO with SBO 128,
// LBO 1024 (the ISA's canonical MN-major layout without swizzle, ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))).  Then the tile goes out through stmatrix (f16
// rounding of the exact values) into shared memory and back to global memory row by row.
extern "C" __global__ void wgmma_rs_stmatrix(const __nv_bfloat16 *A, const __nv_bfloat16 *B, __half *C) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ __align__(128) __nv_bfloat16 Bs[16 * 64];
    __shared__ __align__(128) __half Cs[64 * 64];
    int t = threadIdx.x, w = t / 32, l = t % 32;
    for (int i = t; i < 16 * 64; i += 128) {
        int k = i / 64, n = i % 64;
        Bs[(n % 8) + (n / 8) * 64 + (k % 8) * 8 + (k / 8) * 512] = B[k * 64 + n];
    }
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    // A fragment (as mma.m16n8k16's A): a[i] holds (row l/4 + 8 (i & 1), cols 2 (l % 4) + 8 (i >> 1) + {0, 1})
    uint32_t a[4];
    for (int i = 0; i < 4; i++) {
        int row = 16 * w + l / 4 + 8 * (i & 1), col = 2 * (l % 4) + 8 * (i >> 1);
        const unsigned short *p = (const unsigned short *)(A + row * 16 + col);
        a[i] = (uint32_t)p[0] | (uint32_t)p[1] << 16;
    }
    float acc[32];
    for (int i = 0; i < 32; i++) acc[i] = 0.f;
    wgmma_fence();
    wgmma_rs_bf16_64x64x16(acc, a, make_desc(Bs, 1024, 128, 0));
    wgmma_commit();
    wgmma_wait<0>();
    // stmatrix x4: matrix j of the warp's 16 rows x 8 columns block: pairs (acc[4 nb + 2 h], acc[4 nb + 2 h + 1])
    for (int nb = 0; nb < 8; nb += 1) {
        // two 8x8 matrices per 8-column block (rows 0-7 and 8-15 of the warp); x2 here, two blocks per x4
        if (nb % 2) continue;
        uint32_t r[4];
        for (int q = 0; q < 4; q++) {
            int b = nb + q / 2, h = q % 2;
            __half2 v = __floats2half2_rn(acc[4 * b + 2 * h], acc[4 * b + 2 * h + 1]);
            r[q] = *(uint32_t *)&v;
        }
        // lanes 8j..8j+7 address the rows of matrix j: j = 2 (block) + (upper half)
        int j = l / 8, row = 16 * w + (l % 8) + 8 * (j % 2), col = 8 * (nb + j / 2);
        asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(smem_u32(Cs + row * 64 + col)),
                     "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                     : "memory");
    }
    __syncthreads();
    for (int i = t; i < 64 * 64; i += 128) C[i] = Cs[i];
#endif
}

// out[i] = 2 in[i] + 1 through shared memory with bulk copies, written with CUDA's headers: cuda::barrier
// and cuda::memcpy_async in (cp.async.bulk with an mbarrier's transaction count on sm_90), cuda::ptx's
// fence and bulk store out (a bulk group, waited for with .read).  n floats per block, n a multiple of 4.
extern "C" __global__ void bulk_scale(const float *in, float *out, int n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using barrier = cuda::barrier<cuda::thread_scope_block>;
    __shared__ alignas(16) float buf[1024];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ barrier bar;
    const float *src = in + (size_t)blockIdx.x * n;
    float *dst = out + (size_t)blockIdx.x * n;
    if (threadIdx.x == 0) init(&bar, blockDim.x);
    __syncthreads();
    if (threadIdx.x == 0) cuda::memcpy_async(buf, src, cuda::aligned_size_t<16>(sizeof(float) * n), bar);
    barrier::arrival_token token = bar.arrive();
    bar.wait(std::move(token));
    for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = 2.f * buf[i] + 1.f;
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    __syncthreads();
    if (threadIdx.x == 0) {
        cuda::ptx::cp_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, dst, buf, sizeof(float) * n);
        cuda::ptx::cp_async_bulk_commit_group();
        cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>());
    }
#endif
}

// A tile through a tensor map in and out with cuda::ptx (TMA load with an mbarrier's expect_tx, TMA store
// clipped at the tensor's edge): out = in + 1 over a [rows, cols] f32 tensor, boxes of 8 rows x 32 columns.
extern "C" __global__ void tma_add_one(const __grid_constant__ CUtensorMap tin, const __grid_constant__ CUtensorMap tout) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ alignas(128) float tile[8][32];
    __shared__ uint64_t bar;
    int c0 = blockIdx.x * 32, c1 = blockIdx.y * 8;
    if (threadIdx.x == 0) {
        cuda::ptx::mbarrier_init(&bar, 1);
        cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int32_t coords[2] = {c0, c1};
        cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, &tile[0][0], &tin, coords, &bar);
        cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared, &bar,
                                             sizeof tile);
    }
    while (!cuda::ptx::mbarrier_try_wait_parity(&bar, 0)) {
    }
    for (int i = threadIdx.x; i < 8 * 32; i += blockDim.x) tile[i / 32][i % 32] += 1.f;
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    __syncthreads();
    if (threadIdx.x == 0) {
        int32_t coords[2] = {c0, c1};
        cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared, &tout, coords, &tile[0][0]);
        cuda::ptx::cp_async_bulk_commit_group();
        cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>());
    }
#endif
}

// A one-CTA cluster through cooperative groups: its rank and size, the address of its own shared memory
// through map_shared_rank (mapa) read with a generic load, and cluster.sync() (barrier.cluster); then
// cuda::ptx's st.async and red.async (.add, .max) into the cluster's shared memory (rank 0: this CTA),
// each completing its bytes on an mbarrier that expects them.
extern "C" __global__ void __cluster_dims__(1, 1, 1) cluster_one(int *out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ int v[64];
    __shared__ alignas(8) int w[64], x[64], y[64];
    __shared__ uint64_t bar;
    cg::cluster_group cluster = cg::this_cluster();
    v[threadIdx.x] = (int)threadIdx.x * 3 + (int)blockIdx.x;
    w[threadIdx.x] = 1000, x[threadIdx.x] = 1000, y[threadIdx.x] = (int)threadIdx.x;
    if (threadIdx.x == 0) {
        cuda::ptx::mbarrier_init(&bar, 1);
        cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
    }
    cluster.sync();
    int *peer = cluster.map_shared_rank(v, 0);
    int *o = out + blockIdx.x * 64 * 5;
    o[threadIdx.x] = peer[63 - threadIdx.x];
    o[64 + threadIdx.x] = (int)cluster.block_rank();
    o[128 + threadIdx.x] = (int)cluster.num_blocks();
    o[192 + threadIdx.x] = (int)cluster.block_index().x;
    cluster.sync();
    int *wr = cluster.map_shared_rank(w, 0), *xr = cluster.map_shared_rank(x, 0), *yr = cluster.map_shared_rank(y, 0);
    uint64_t *br = cluster.map_shared_rank(&bar, 0);
    if (threadIdx.x == 0)
        cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cluster, cuda::ptx::space_shared, &bar,
                                             3 * 64 * 4);
    cluster.sync();
    cuda::ptx::st_async(wr + (63 - threadIdx.x), (int)threadIdx.x, br);
    cuda::ptx::red_async(cuda::ptx::op_add, (uint32_t *)xr + threadIdx.x, (uint32_t)blockIdx.x, br);
    cuda::ptx::red_async(cuda::ptx::op_max, yr + threadIdx.x, 40, br);
    while (!cuda::ptx::mbarrier_try_wait_parity(&bar, 0)) {
    }
    o[256 + threadIdx.x] = w[threadIdx.x] + 100 * x[threadIdx.x] + 1000000 * y[threadIdx.x];
#endif
}

// Clusters of 4 through cooperative groups, as the CUDA programming guide's distributed shared memory
// histogram: each CTA owns 16 of the 64 bins, every thread adds its values' bins into whichever CTA owns
// them (atomicAdd through map_shared_rank), cluster.sync() on both sides; each thread also reads its right
// neighbour CTA's array.  Then each CTA adds its bins into the cluster's row of the global histogram.
extern "C" __global__ void __cluster_dims__(4, 1, 1) cluster_hist(const int *in, int n, int *bins, int *peer) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ int h[16];
    __shared__ int mine[64];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    for (int i = threadIdx.x; i < 16; i += blockDim.x) h[i] = 0;
    mine[threadIdx.x] = (int)blockIdx.x * 100 + (int)threadIdx.x;
    cluster.sync();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int v = in[i] & 63;
        int *dst = cluster.map_shared_rank(h, v / 16);
        atomicAdd(dst + v % 16, 1);
    }
    const int *right = cluster.map_shared_rank(mine, (rank + 1) % cluster.num_blocks());
    peer[blockIdx.x * 64 + threadIdx.x] = right[63 - threadIdx.x];
    cluster.sync();
    for (int i = threadIdx.x; i < 16; i += blockDim.x) atomicAdd(&bins[blockIdx.x / 4 * 64 + rank * 16 + i], h[i]);
#endif
}

// A CUTLASS-style multicast in clusters of 2: every CTA initialises its "full" mbarrier and expects the
// tile's bytes on it; rank 0 issues one TMA load with .multicast::cluster (ctaMask 0b11) that lands in both
// CTAs' shared memory and completes the bytes on both mbarriers.  Each CTA then releases the tile with a
// remote arrive on rank 0's "empty" mbarrier (mapa + mbarrier.arrive.shared::cluster, as CUTLASS's
// ClusterBarrier::arrive(cta_id) writes it), which rank 0 waits on before it exits.
extern "C" __global__ void __cluster_dims__(2, 1, 1) tma_multicast(const __grid_constant__ CUtensorMap tin, float *out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ alignas(128) float tile[8][32];
    __shared__ uint64_t full, empty;
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    if (threadIdx.x == 0) {
        bar_init(&full, 1);
        bar_init(&empty, 2);
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    cluster.sync();
    if (threadIdx.x == 0) bar_arrive_tx(&full, sizeof tile);
    if (rank == 0 && threadIdx.x == 0) {
        uint16_t mask = 3;
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                     " [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(smem_u32(&tile[0][0])),
                     "l"((uint64_t)&tin), "r"(smem_u32(&full)), "r"(0), "r"((int)(blockIdx.x / 2 * 8)), "h"(mask)
                     : "memory");
    }
    bar_wait(&full, 0);
    for (int i = threadIdx.x; i < 256; i += blockDim.x) out[blockIdx.x * 256 + i] = tile[i / 32][i % 32] + (float)rank;
    __syncthreads();
    if (threadIdx.x == 0)
        asm volatile("{\n\t.reg .b32 remAddr32;\n\t"
                     "mapa.shared::cluster.u32  remAddr32, %0, %1;\n\t"
                     "mbarrier.arrive.shared::cluster.b64  _, [remAddr32];\n\t}" ::"r"(smem_u32(&empty)),
                     "r"(0));
    if (rank == 0) bar_wait(&empty, 0);
#endif
}

// Split-K style reductions with cuda::ptx: block b adds its tile (in + b) into `acc` through a TMA reduce
// (cp.reduce.async.bulk.tensor .add, f32 map, 8 rows x 32 columns, clipped at the tensor's edge), and
// into a flat f32 vector with cp.reduce.async.bulk .add; the i32 vector takes .min of (in - b).  The
// loads come in through cp.async.bulk with an L2 cache hint (CUTLASS's evict-normal policy), which the
// emulator reads and ignores.
extern "C" __global__ void bulk_reduce(const __grid_constant__ CUtensorMap tacc, const float *in, float *flat, int *imin) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __shared__ alignas(128) float tile[8][32];
    __shared__ alignas(16) int itile[256];
    __shared__ uint64_t bar;
    float bias = (float)blockIdx.x;
    if (threadIdx.x == 0) {
        cuda::ptx::mbarrier_init(&bar, 1);
        cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        uint64_t policy = 0x1000000000000000ull;
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;\n" ::"r"(
                         smem_u32(&tile[0][0])),
                     "l"(in), "r"((uint32_t)sizeof tile), "r"(smem_u32(&bar)), "l"(policy)
                     : "memory");
        cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared, &bar,
                                             sizeof tile);
    }
    while (!cuda::ptx::mbarrier_try_wait_parity(&bar, 0)) {
    }
    for (int i = threadIdx.x; i < 256; i += blockDim.x) {
        itile[i] = (int)tile[i / 32][i % 32] - (int)blockIdx.x;
        tile[i / 32][i % 32] += bias;
    }
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    __syncthreads();
    if (threadIdx.x == 0) {
        int32_t coords[2] = {0, 0};
        cuda::ptx::cp_reduce_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared, cuda::ptx::op_add, &tacc, coords,
                                               &tile[0][0]);
        cuda::ptx::cp_reduce_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, cuda::ptx::op_add, flat, &tile[0][0],
                                        (uint32_t)sizeof tile);
        cuda::ptx::cp_reduce_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared, cuda::ptx::op_min, imin, itile,
                                        (uint32_t)sizeof itile);
        cuda::ptx::cp_async_bulk_commit_group();
        cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>());
    }
#endif
}

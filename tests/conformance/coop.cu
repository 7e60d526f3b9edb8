// coop.cu - CUDA's asynchronous-copy and cooperative-groups libraries, as application code uses them:
// a two-stage cuda::pipeline fed by cuda::memcpy_async (cp.async on sm_80+), the __pipeline_* primitives,
// cooperative_groups::memcpy_async / wait, reductions over 32-thread tiles (shuffles, redux) and over
// 64-thread tiles (multi-warp tiles keep their scratch in the block's reserved shared memory on sm_80+:
// %reserved_smem_offset_1), and this_grid() outside a cooperative launch (-G reads %envreg); grid.sync() in a
// cooperative launch.
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <cuda/pipeline>
#include <cuda_pipeline.h>

namespace cg = cooperative_groups;

// 128 threads, 1024 floats in per block; out: 128 + 128 + 128 + 4 + 2 values per block
extern "C" __global__ void coop(const float *in, float *out, unsigned *grid_size) {
    __shared__ alignas(16) float stage[2][256];
    __shared__ alignas(16) float prim[128];
    __shared__ alignas(16) float whole[256];
    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 2> state;
    auto block = cg::this_thread_block();
    const float *src = in + blockIdx.x * 1024;
    float *o = out + blockIdx.x * 390;
    auto pipe = cuda::make_pipeline(block, &state);
    for (int s = 0; s < 2; s++) {
        pipe.producer_acquire();
        cuda::memcpy_async(block, stage[s], src + s * 256, sizeof(float) * 256, pipe);
        pipe.producer_commit();
    }
    float acc = 0;
    for (int s = 0; s < 2; s++) {
        pipe.consumer_wait();
        acc += stage[s][threadIdx.x] * (s + 1) + stage[s][255 - threadIdx.x];
        pipe.consumer_release();
    }
    o[threadIdx.x] = acc;
    __pipeline_memcpy_async(&prim[threadIdx.x], &src[512 + threadIdx.x], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    o[128 + threadIdx.x] = prim[127 - threadIdx.x];
    cg::memcpy_async(block, whole, src + 768, sizeof(float) * 256);
    cg::wait(block);
    o[256 + threadIdx.x] = whole[threadIdx.x] - whole[255 - threadIdx.x];
    auto warp = cg::tiled_partition<32>(block);
    float wsum = cg::reduce(warp, whole[threadIdx.x], cg::plus<float>());
    if (warp.thread_rank() == 0) o[384 + warp.meta_group_rank()] = wsum;
    auto pair = cg::tiled_partition<64>(block);
    float pmax = cg::reduce(pair, whole[threadIdx.x + 128], cg::greater<float>());
    pair.sync();
    if (pair.thread_rank() == 0) o[388 + pair.meta_group_rank()] = pmax;
    if (blockIdx.x == 0 && threadIdx.x == 0) *grid_size = (unsigned)cg::this_grid().size();
}

// A cooperative launch: grid.sync() between phases (cooperative groups keeps its grid barrier in the
// workspace the launch provides, read from %envreg1:%envreg2).  Each block writes its partial sum, the grid
// syncs, block 0 adds the partials, the grid syncs again and every block reads the total.
extern "C" __global__ void grid_sum(const int *in, int *partial, int *out) {
    cg::grid_group grid = cg::this_grid();
    auto block = cg::this_thread_block();
    auto warp = cg::tiled_partition<32>(block);
    __shared__ int wsum[32];
    int v = in[grid.thread_rank()];
    int s = cg::reduce(warp, v, cg::plus<int>());
    if (warp.thread_rank() == 0) wsum[warp.meta_group_rank()] = s;
    block.sync();
    if (threadIdx.x == 0) {
        int t = 0;
        for (unsigned w = 0; w < warp.meta_group_size(); w++) t += wsum[w];
        partial[blockIdx.x] = t;
    }
    grid.sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        int t = 0;
        for (unsigned b = 0; b < gridDim.x; b++) t += partial[b];
        partial[gridDim.x] = t;
    }
    grid.sync();
    out[grid.thread_rank()] = partial[gridDim.x] + (int)grid.is_valid() * 1000000 + (int)blockIdx.x;
}

// Cooperative groups' partitions: coalesced_threads() in divergent code (reduce, inclusive_scan, thread_rank),
// exclusive_scan over 8-thread tiles (meta_group_rank), labeled_partition and binary_partition of a warp
// (match.any, fns), invoke_one on 16-thread tiles.
extern "C" __global__ void partitions(const int *in, int *out, int n) {
    cg::thread_block b = cg::this_thread_block();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    int o0 = 0, o1 = 0, o5 = 0;
    if (v & 1) {
        cg::coalesced_group g = cg::coalesced_threads();
        o0 = cg::reduce(g, v, cg::plus<int>()) * 1000 + (int)g.thread_rank();
        o1 = cg::inclusive_scan(g, v, cg::plus<int>());
    }
    cg::thread_block_tile<8> t8 = cg::tiled_partition<8>(b);
    int o2 = cg::exclusive_scan(t8, v, cg::plus<int>()) + (int)t8.meta_group_rank() * 100000;
    cg::coalesced_group lp = cg::labeled_partition(cg::tiled_partition<32>(b), v % 3);
    int o3 = cg::reduce(lp, v, cg::greater<int>()) * 64 + (int)lp.size();
    cg::coalesced_group bp = cg::binary_partition(cg::tiled_partition<32>(b), v > 50);
    int o4 = cg::reduce(bp, v, cg::bit_xor<int>()) + (int)bp.num_threads() * 1000000;
    cg::invoke_one(cg::tiled_partition<16>(b), [&] { o5 = 7; });
    if (i < n) {
        int *o = out + i * 6;
        o[0] = o0, o[1] = o1, o[2] = o2, o[3] = o3, o[4] = o4, o[5] = o5;
    }
}

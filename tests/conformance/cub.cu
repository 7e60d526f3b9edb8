// cub.cu - CUB's block and warp collectives, as CUDA libraries use them: BlockLoad (transposing through
// shared memory), BlockReduce, BlockScan, BlockRadixSort (bit-field extraction with bmsk/bfe, shuffles,
// ranking in shared memory) and WarpReduce with cuda::maximum.  One block of 128 threads per 512 keys.
#include <cub/cub.cuh>

extern "C" __global__ void cub_block(const int *in, int *out, float *warp_max) {
    using Reduce = cub::BlockReduce<int, 128>;
    using Scan = cub::BlockScan<int, 128>;
    using Sort = cub::BlockRadixSort<int, 128, 4>;
    using WarpRed = cub::WarpReduce<float>;
    using Load = cub::BlockLoad<int, 128, 4, cub::BLOCK_LOAD_TRANSPOSE>;
    __shared__ typename Reduce::TempStorage reduce;
    __shared__ typename Scan::TempStorage scan;
    __shared__ typename Sort::TempStorage sort;
    __shared__ typename WarpRed::TempStorage warp[4];
    __shared__ typename Load::TempStorage load;
    const int *blk = in + blockIdx.x * 512;
    int *o = out + blockIdx.x * 1024;
    int x = blk[threadIdx.x];
    int sum = Reduce(reduce).Sum(x);
    int prefix;
    Scan(scan).ExclusiveSum(x, prefix);
    int keys[4];
    Load(load).Load(blk, keys);
    Sort(sort).Sort(keys);
    float w = WarpRed(warp[threadIdx.x / 32]).Reduce((float)x, ::cuda::maximum<>{});
    o[threadIdx.x] = prefix;
    for (int i = 0; i < 4; i++) o[128 + threadIdx.x * 4 + i] = keys[i]; // blocked arrangement: sorted across the block
    if (threadIdx.x == 0) o[1000] = sum;
    if (threadIdx.x % 32 == 0) warp_max[blockIdx.x * 4 + threadIdx.x / 32] = w;
}

// warp.cu - warp-level intrinsics: every __shfl*_sync kind with widths,
// 64-bit and float shuffles, votes, __activemask in divergent code,
// __match_any/all_sync, __reduce_*_sync (sm_80 redux.sync), partial masks.
// Blocks of 64 threads (two full warps); the host checks every lane exactly.
#define NW 32
extern "C" __global__ void warp_ops(const int *in, int *out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
    const unsigned full = 0xffffffffu;
    int v = in[tid];
    int *o = out + tid * NW;
    o[0] = __shfl_sync(full, v, (lane * 7 + 3) & 31);
    o[1] = __shfl_up_sync(full, v, 3);
    o[2] = __shfl_down_sync(full, v, 5);
    o[3] = __shfl_xor_sync(full, v, 9);
    o[4] = __shfl_sync(full, v, 2, 8);          // width 8: lane 2 of each group of 8
    o[5] = __shfl_up_sync(full, v, 1, 16);
    o[6] = __shfl_down_sync(full, v, 3, 4);
    o[7] = __shfl_xor_sync(full, v, 1, 2);
    float f = (float)v * 0.5f;
    o[8] = __float_as_int(__shfl_sync(full, f, lane ^ 31));
    long long w = ((long long)v << 32) | (unsigned)(v * 3);
    long long ws = __shfl_down_sync(full, w, 1);
    o[9] = (int)ws;
    o[10] = (int)(ws >> 32);
    double d = (double)v + 0.25;
    o[11] = (int)(__shfl_xor_sync(full, d, 16) * 4);
    o[12] = (int)__ballot_sync(full, v & 1);
    o[13] = __all_sync(full, v > -1000);
    o[14] = __any_sync(full, v == 7);
    o[15] = __all_sync(full, v & 1);
    int am = 0;
    if (lane < 20) am = (int)__activemask();   // the lanes that took the branch
    o[16] = am;
    o[17] = (int)__match_any_sync(full, v & 3);
    int pred = 0;
    o[18] = (int)__match_all_sync(full, v >> 8, &pred);
    o[19] = pred;
    o[20] = (int)__reduce_add_sync(full, (unsigned)v);
    o[21] = __reduce_min_sync(full, v);
    o[22] = __reduce_max_sync(full, v);
    o[23] = (int)__reduce_and_sync(full, (unsigned)v | 0x100);
    o[24] = (int)__reduce_or_sync(full, (unsigned)v & 0xF0F);
    o[25] = (int)__reduce_xor_sync(full, (unsigned)v);
    o[26] = (int)__reduce_max_sync(full, (unsigned)v);
    int part = -1;
    if (lane < 16) part = (int)__ballot_sync(0x0000ffffu, v & 2);  // half-warp mask
    o[27] = part;
    int sh = -1;
    if (lane >= 16) sh = __shfl_sync(0xffff0000u, v, 31);
    o[28] = sh;
    __syncwarp();
    o[29] = (int)__match_any_sync(full, (long long)(v & 1) << 40);
    unsigned m = __match_any_sync(full, v % 5);
    o[30] = __popc(m);
    o[31] = __reduce_add_sync(__activemask(), 1);
}

// Shuffles over partial masks in a row, as cooperative groups' tiled_partition<8> then <16> write
// them: lanes 0-7 reach the 16-lane shuffles while 8-15 still wait at their 8-lane one, which the
// 16-lane ones must wait for (the PTX ISA: every lane of the mask at a shfl.sync of the same mask);
// then a 16-lane inclusive scan (shfl.up) and a 4-lane reduction.
extern "C" __global__ void warp_tiles(const int *in, int *out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane = threadIdx.x & 31;
    int v = in[tid];
    unsigned m8 = 0xffu << (lane & ~7u), m16 = 0xffffu << (lane & ~15u), m4 = 0xfu << (lane & ~3u);
    v += __shfl_xor_sync(m8, v, 1, 8);
    v += 100 * __shfl_xor_sync(m16, v, 8, 16);
    for (int d = 1; d < 16; d *= 2) {
        int u = __shfl_up_sync(m16, v, d, 16);
        if ((int)(lane & 15) >= d) v += u;
    }
    for (int d = 2; d > 0; d /= 2) v += __shfl_down_sync(m4, v, d, 4) * 3;
    out[tid] = v;
}

// __activemask after shuffles over half-warp masks (as a 16-lane tile writes them), no __syncwarp between: both
// halves are on the same path again, so the lanes that take the branch are all the odd ones of the warp.  The
// emulator answered 0xaaaa in one half and 0xaaaa0000 in the other (the other half still at its own shuffle).
extern "C" __global__ void warp_activemask_after_halves(const int *in, int *out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane = threadIdx.x & 31;
    int v = in[tid];
    unsigned half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
    v += __shfl_xor_sync(half, v, 1, 16);
    int m = -1;
    if (lane & 1) m = (int)__activemask();
    out[2 * tid] = m;
    out[2 * tid + 1] = (int)__reduce_add_sync(__activemask(), 1) * 1000 + (v & 0xff);
}

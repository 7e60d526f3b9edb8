// atomics.cu - atomics of every type and scope on global and shared memory.
// Every result is independent of the order the threads run in: sums of
// exactly representable values, min/max, and/or/xor, counters, and the set
// of old values an exchange or compare-and-swap chain hands out.
#include <cuda_fp16.h>

struct Counters {
    int i32[8];                  // add, min, max, and, or, xor, exch, cas-increment
    unsigned u32[4];             // inc (wraps at 100), dec, add_block, add_system
    unsigned long long u64[4];   // add, min, max, cas
    long long s64[2];            // min, max
    float f32[2];                // add, add_block
    double f64[2];               // add, add_system
    __half2 h2;                  // add
    unsigned short u16;          // cas-increment (16-bit CAS)
    unsigned short pad;
};

extern "C" __global__ void atomics(Counters *c, int *old_exch, int *old_cas, int *shared_out) {
    __shared__ int s[4];
    __shared__ unsigned long long s64;
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) { s[0] = 0; s[1] = 0x7fffffff; s[2] = 0; s[3] = 0; s64 = 0; }
    __syncthreads();
    int v = (tid * 7919) % 1000 - 500;
    atomicAdd(&c->i32[0], v);
    atomicMin(&c->i32[1], v);
    atomicMax(&c->i32[2], v);
    atomicAnd(&c->i32[3], ~(1 << (tid % 31)));
    atomicOr(&c->i32[4], 1 << (tid % 29));
    atomicXor(&c->i32[5], tid * 0x9E3779B1);
    old_exch[tid] = atomicExch(&c->i32[6], tid);
    int seen = c->i32[7], prev;
    while ((prev = atomicCAS(&c->i32[7], seen, seen + 1)) != seen) seen = prev;
    old_cas[tid] = seen;                       // each thread got a distinct value
    atomicInc(&c->u32[0], 99u);
    atomicDec(&c->u32[1], 1000u);
    atomicAdd_block(&c->u32[2], 3u);
    atomicAdd_system(&c->u32[3], 5u);
    atomicAdd(&c->u64[0], (unsigned long long)tid << 33);
    atomicMin(&c->u64[1], 0x100000000ull + (unsigned long long)((tid * 31) % 97));
    atomicMax(&c->u64[2], (unsigned long long)tid * 0x10000000000ull);
    unsigned long long s64old = c->u64[3], p64;
    while ((p64 = atomicCAS(&c->u64[3], s64old, s64old + 2)) != s64old) s64old = p64;
    atomicMin(&c->s64[0], (long long)v * 1000000000ll);
    atomicMax(&c->s64[1], (long long)v * 1000000000ll);
    atomicAdd(&c->f32[0], 0.5f);
    atomicAdd_block(&c->f32[1], (float)(tid % 4));
    atomicAdd(&c->f64[0], 0.25);
    atomicAdd_system(&c->f64[1], (double)tid);
    atomicAdd(&c->h2, __floats2half2_rn(1.0f, 0.5f));
    unsigned short s16 = c->u16, p16;
    while ((p16 = atomicCAS(&c->u16, s16, (unsigned short)(s16 + 1))) != s16) s16 = p16;
    // shared memory
    atomicAdd(&s[0], 1);
    atomicMin(&s[1], v);
    atomicOr(&s[2], 1 << (threadIdx.x % 32));
    atomicCAS(&s[3], 0, tid + 1);             // the first to get there wins
    atomicAdd(&s64, (unsigned long long)threadIdx.x);
    __syncthreads();
    if (threadIdx.x == 0) {
        shared_out[blockIdx.x * 6 + 0] = s[0];
        shared_out[blockIdx.x * 6 + 1] = s[1];
        shared_out[blockIdx.x * 6 + 2] = s[2];
        shared_out[blockIdx.x * 6 + 3] = s[3];
        shared_out[blockIdx.x * 6 + 4] = (int)s64;
        shared_out[blockIdx.x * 6 + 5] = (int)(s64 >> 32);
    }
}

// control.cu - control flow and the runtime services CUDA code in the wild leans on: calls through
// function pointers and virtual functions, recursion (a real call stack), a dense switch (nvcc 13 makes
// compares of it, not a brx.idx table), assert that holds and one that fails, __trap, cuda::atomic_ref with
// each memory order and scope, fences, __nanosleep, clock64, clock and %globaltimer, the cache-hinted loads
// and stores (__ldca/__ldcg/__ldcs/__ldlu/__ldcv, __stwb/__stcg/__stcs/__stwt), block votes
// (__syncthreads_count/_and/_or), address-space predicates, L2 cache policies (annotated_ptr,
// access_property, discard_memory), bf16/f16 and 16-/8-bit atomics, memcpy/memset of a local struct,
// independent thread scheduling (lanes of one warp waiting on each other, a spin lock within a warp).
#include <cassert>
#include <cuda/atomic>

typedef int (*binop)(int, int);
__device__ __noinline__ int op_add(int a, int b) { return a + b; }
__device__ __noinline__ int op_sub(int a, int b) { return a - b; }
__device__ __noinline__ int op_mul(int a, int b) { return a * b; }
__device__ __noinline__ int op_xor(int a, int b) { return (a ^ b) + 3; }
__device__ binop ops_table[4] = {op_add, op_sub, op_mul, op_xor};

// out[i] = ops[in[i] & 3](in[i], i) through a table of device function pointers, then once more through a
// pointer chosen by a select (a call through a register).
extern "C" __global__ void fnptr(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i];
    binop f = ops_table[v & 3];
    int r = f(v, i);
    binop g = (v & 4) ? op_mul : op_sub;
    out[i] = g(r, 7);
}

struct Shape {
    __device__ virtual int area(int s) const = 0;
    __device__ virtual int sides() const { return 0; }
};
struct Square : Shape {
    __device__ int area(int s) const override { return s * s; }
    __device__ int sides() const override { return 4; }
};
struct Tri : Shape {
    __device__ int area(int s) const override { return s * s / 2; }
    __device__ int sides() const override { return 3; }
};

// Virtual calls: objects made on the device (their vtables in global memory), dispatched per thread.
extern "C" __global__ void virt(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Square sq;
    Tri tr;
    const Shape *s = (in[i] & 1) ? (const Shape *)&sq : (const Shape *)&tr;
    out[i] = s->area(in[i] % 1000) * 10 + s->sides();
}

// Recursion: a true recursive call (not a loop nvcc can make of it), with locals kept across the calls.
__device__ __noinline__ int ack_sum(int depth, int x) {
    if (depth == 0) return x & 0xff;
    int a = ack_sum(depth - 1, x * 3 + 1);
    int b = ack_sum(depth - 1, x ^ (depth * 17));
    return a + b * 2 - depth;
}
extern "C" __global__ void recurse(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = ack_sum(in[i] % 7 + 1, in[i]);
}

// A dense switch with a default case for the values out of range.
__device__ __noinline__ int sw(int k, int x) {
    switch (k) {
    case 0: return x + 11;
    case 1: return x * 13;
    case 2: return x - 17;
    case 3: return x ^ 0x1234;
    case 4: return x << 3;
    case 5: return x >> 2;
    case 6: return ~x;
    case 7: return x * x;
    case 8: return x | 0x40;
    case 9: return x & 0xf0f;
    case 10: return -x;
    case 11: return x + 1000000;
    default: return 99;
    }
}
extern "C" __global__ void jump_table(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = sw(in[i] % 14, i);
}

// assert that holds (an __assertfail call on the branch that is never taken).
extern "C" __global__ void asserts(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i];
    assert(v >= 0 && v < 1000000);
    out[i] = v + 1;
}

// assert that fails in one thread: the launch ends with the failed condition, file, line and function.
extern "C" __global__ void assert_fails(const int *in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) assert(in[i] != 4242);
}

// cuda::atomic_ref: a message passed from thread 0 of each block to the threads of its other warps by a
// release store and acquire loads (no barrier between them), counters at each scope with each memory order, a
// compare-exchange loop for a maximum, and fences.
extern "C" __global__ void atomic_refs(int *data, int *flags, unsigned *counters, int *mx, int *out, int n) {
    int b = blockIdx.x, t = threadIdx.x;
    if (t == 0) {
        data[b] = b * 1000 + 7;
        cuda::atomic_ref<int, cuda::thread_scope_device> f(flags[b]);
        f.store(1, cuda::memory_order_release);
    } else if (t >= 32) {
        cuda::atomic_ref<int, cuda::thread_scope_device> f(flags[b]);
        while (f.load(cuda::memory_order_acquire) == 0)
            __nanosleep(32);
        out[b * blockDim.x + t] = data[b] + t;
    }
    int i = b * blockDim.x + t;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> c0(counters[0]);
    cuda::atomic_ref<unsigned, cuda::thread_scope_system> c1(counters[1]);
    cuda::atomic_ref<unsigned, cuda::thread_scope_block> c2(counters[2]);
    c0.fetch_add(1, cuda::memory_order_relaxed);
    c1.fetch_add(2, cuda::memory_order_acq_rel);
    c2.fetch_add(3, cuda::memory_order_seq_cst);
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> c3(counters[3]);
    c3.fetch_or(1u << (i % 32), cuda::memory_order_release);
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> c4(counters[4]);
    c4.fetch_xor(i * 2654435761u, cuda::memory_order_acquire);
    cuda::atomic_ref<int, cuda::thread_scope_device> m(*mx);
    int want = (i * 7919) % 10007, cur = m.load(cuda::memory_order_relaxed);
    while (cur < want && !m.compare_exchange_weak(cur, want, cuda::memory_order_acq_rel, cuda::memory_order_relaxed)) {
    }
    cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_system);
    cuda::atomic_thread_fence(cuda::memory_order_acq_rel, cuda::thread_scope_block);
    (void)n;
}

// Time: clock64, clock() and %globaltimer never go back across a __nanosleep; %globaltimer is Unix time in ns.
extern "C" __global__ void timers(long long *out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    long long c0 = clock64();
    unsigned long long g0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
    unsigned k0 = clock();
    __nanosleep(1000);
    long long c1 = clock64();
    unsigned long long g1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
    unsigned k1 = clock();
    out[t * 4 + 0] = c1 - c0;
    out[t * 4 + 1] = (long long)(g1 - g0);
    out[t * 4 + 2] = (int)(k1 - k0);
    out[t * 4 + 3] = (long long)g0;
}

// Every cache-hinted load and store intrinsic, on f32, int4 and double.
extern "C" __global__ void cache_hints(const float *a, const int4 *b, const double *c, float *oa, int4 *ob, double *oc,
                                       int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = __ldca(&a[i]) + __ldcg(&a[(i + 1) % n]) * 2.0f + __ldcs(&a[(i + 2) % n]) * 4.0f +
              __ldlu(&a[(i + 3) % n]) * 8.0f + __ldcv(&a[(i + 4) % n]) * 16.0f + __ldg(&a[(i + 5) % n]) * 32.0f;
    int4 y = __ldcs(&b[i]), z = __ldcg(&b[n - 1 - i]);
    double w = __ldlu(&c[i]) - __ldca(&c[(i + 1) % n]);
    switch (i & 3) {
    case 0: __stwb(&oa[i], x); __stwb(&ob[i], make_int4(y.x + z.w, y.y, y.z, y.w)); __stwb(&oc[i], w); break;
    case 1: __stcg(&oa[i], x); __stcg(&ob[i], make_int4(y.x + z.w, y.y, y.z, y.w)); __stcg(&oc[i], w); break;
    case 2: __stcs(&oa[i], x); __stcs(&ob[i], make_int4(y.x + z.w, y.y, y.z, y.w)); __stcs(&oc[i], w); break;
    default: __stwt(&oa[i], x); __stwt(&ob[i], make_int4(y.x + z.w, y.y, y.z, y.w)); __stwt(&oc[i], w); break;
    }
}

// Block-wide votes: __syncthreads_count/_and/_or (bar.red.popc, .and, .or).
extern "C" __global__ void votes(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? in[i] : 0;
    int c = __syncthreads_count(v & 1);
    int a = __syncthreads_and(v >= 0);
    int o = __syncthreads_or(v == 7);
    if (i < n) out[i] = c * 4 + a * 2 + o;
}

// Address-space predicates (isspacep) on generic pointers to global, shared, local, __device__ and __constant__ data.
__device__ int gvar[4];
__constant__ int cvar[4] = {1, 2, 3, 4};
extern "C" __global__ void spaces(int *out, const int *g) {
    __shared__ int s[32];
    int l[4];
    int t = threadIdx.x;
    l[t & 3] = t;
    s[t] = t;
    const void *ps[5] = {g, s, l, gvar, cvar};
    const void *p = ps[(t + g[0]) % 5];
    out[t] = __isGlobal(p) | __isShared(p) << 1 | __isLocal(p) << 2 | __isConstant(p) << 3 | (l[(t + 1) & 3] & 0) | (s[t] & 0);
}

// L2 cache policies: cuda::annotated_ptr (createpolicy, ld/st with .L2::cache_hint), an access_property over a
// range, cuda::discard_memory (discard.global.L2) and apply_access_property (prefetch / applypriority).
#include <cuda/annotated_ptr>
extern "C" __global__ void policies(const float *a, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cuda::annotated_ptr<const float, cuda::access_property::persisting> pa(a);
    cuda::annotated_ptr<float, cuda::access_property::streaming> po(out);
    if (i < n) po[i] = pa[i] * 2.0f + pa[(i + 1) % n];
    cuda::access_property ap((void *)a, n * sizeof(float), n * sizeof(float), cuda::access_property::persisting{},
                             cuda::access_property::streaming{});
    cuda::annotated_ptr<const float, cuda::access_property> pb(a, ap);
    if (i < n) out[n + i] = pb[i] + 1.0f;
    if (i == 0) cuda::discard_memory(out + 2 * n, 256);
    cuda::apply_access_property(a, n * sizeof(float), cuda::access_property::normal{});
}

// Atomics on 16- and 8-bit data: bf16 and f16 adds, a 16-bit CAS, atomic_ref on unsigned short and char.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
extern "C" __global__ void narrow_atomics(__nv_bfloat16 *b, __half *h, unsigned short *us, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(&b[i % 3], __float2bfloat16((float)(i % 4)));
    atomicAdd(&h[i % 3], __float2half((float)(i % 4)));
    atomicCAS(&us[i % 5], (unsigned short)0, (unsigned short)(i + 1));
    cuda::atomic_ref<unsigned short, cuda::thread_scope_device> r(us[5]);
    r.fetch_add(1, cuda::memory_order_relaxed);
    cuda::atomic_ref<unsigned char, cuda::thread_scope_device> r8(((unsigned char *)us)[14]);
    r8.fetch_or((unsigned char)(1 << (i % 8)));
}

// memcpy and memset of a struct in local memory, __fdividef.
struct Big { int a[37]; };
extern "C" __global__ void memops(const Big *in, Big *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Big b;
    memcpy(&b, &in[i], sizeof b);
    memset(&b.a[5], i & 0xff, 7 * sizeof(int));
    b.a[0] += __fdividef(b.a[1], 3.0f);
    out[i] = b;
}

// __trap in one thread: the launch fails.
extern "C" __global__ void traps(const int *in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] == 4242) __trap();
}

// Independent thread scheduling (Volta on): lane 1 spins on a flag that lane 0 of its own warp sets.
extern "C" __global__ void intra_warp_flag(int *data, int *flag, int *out) {
    int lane = threadIdx.x & 31;
    if (lane == 1) {
        while (atomicAdd(&flag[blockIdx.x], 0) == 0) {
        }
        __threadfence();
        out[blockIdx.x] = data[blockIdx.x];
    } else if (lane == 0) {
        data[blockIdx.x] = 42 + blockIdx.x;
        __threadfence();
        atomicExch(&flag[blockIdx.x], 1);
    }
}

// A spin lock every thread takes in turn, the lanes of one warp among them (a deadlock before Volta).
extern "C" __global__ void warp_lock(int *lock, int *counter, int *log) {
    bool done = false;
    while (!done) {
        if (atomicCAS(lock, 0, 1) == 0) {
            __threadfence();
            int c = *(volatile int *)counter;
            log[c] = blockIdx.x * blockDim.x + threadIdx.x;
            *(volatile int *)counter = c + 1;
            __threadfence();
            atomicExch(lock, 0);
            done = true;
        }
    }
}

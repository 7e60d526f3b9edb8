// abi.cu - the calling convention and data layouts nvcc writes, in the build variants users ship (-lineinfo,
// -rdc=true: .visible and .weak functions, .loc/.file): structs passed and returned by value through
// __noinline__ functions (.param .align N .b8 arrays, padding), a template instantiated twice (.weak under
// -rdc), recursion, __constant__ tables and a __device__ variable with initialisers, a __grid_constant__ struct
// parameter indexed at run time (its address taken: cvta.param), __launch_bounds__, and cuda_fp16.h /
// cuda_bf16.h intrinsics on packed pairs (inline PTX asm in the headers).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

struct Vec3 {
    float x, y, z;
};
struct Big { // 8-aligned, with padding after c and after i[4]
    char c;
    double d;
    int i[5];
};
struct Pair {
    long long a;
    int b;
};
struct Params {
    int n;
    float scale;
    int offs[5];
};

__constant__ float coeffs[7] = {1.5f, -2.25f, 0.125f, 3.0f, -0.5f, 7.75f, 0.0625f};
__constant__ Pair ctable[3] = {{1LL << 40, 7}, {-5, -9}, {123456789012LL, 42}};
__device__ int dev_init = 17;

__device__ __noinline__ Vec3 cross(Vec3 a, Vec3 b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }

__device__ __noinline__ Big make_big(int seed, Vec3 v) {
    Big g;
    g.c = (char)(seed * 37);
    g.d = (double)v.x * 0.5 + (double)v.y * 0.25 - (double)v.z;
    for (int k = 0; k < 5; k++) g.i[k] = seed * (k + 3) - k;
    return g;
}

__device__ __noinline__ double fold_big(Big g) {
    double s = g.d + g.c;
    for (int k = 0; k < 5; k++) s += g.i[k] * (k + 1);
    return s;
}

// Horner with the __constant__ table: ((c0 x + c1) x + ...), fmaf per step
__device__ __noinline__ float horner(float x) {
    float r = 0.0f;
    for (int k = 0; k < 7; k++) r = fmaf(r, x, coeffs[k]);
    return r;
}

__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

template <typename T> __device__ __noinline__ T twice_plus(T a, T b) { return a + a + b; }

// out[i] = fold_big(make_big(i, cross(a, b))) + horner(in[i]) + twice_plus<double>(in[i], i) (a = in[3i..], b = in[3i+1..])
extern "C" __global__ void __launch_bounds__(128, 2) structs(const float *in, double *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Vec3 a = {in[3 * i], in[3 * i + 1], in[3 * i + 2]};
    Vec3 b = {in[3 * i + 1], in[3 * i + 2], in[3 * i + 3]};
    Vec3 c = cross(a, b);
    out[i] = fold_big(make_big(i, c)) + (double)horner(in[i]) + twice_plus<double>((double)in[i], (double)i);
}

// out[i] = in[i] * p.offs[in[i] mod 5] + (int)(p.scale * i) + ctable[i % 3].b + (int)(ctable[i % 3].a >> 20) + fib(i % 13)
//          + dev_init + twice_plus<int>(i, 1)
extern "C" __global__ void grid_const(const __grid_constant__ Params p, const int *in, int *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= p.n) return;
    int v = in[i];
    const int *q = &p.offs[(v % 5 + 5) % 5];
    out[i] = v * *q + (int)(p.scale * (float)i) + ctable[i % 3].b + (int)(ctable[i % 3].a >> 20) + fib(i % 13) + dev_init +
             twice_plus<int>(i, 1);
}

// o1 = fma(a, b, max(a, b)) in f16x2; o2 = fma(c, d, min(c, d)) in bf16x2;
// o3 = float(lo(a) + hi(b)) (f16 add) + float(lo(c) * hi(d)) (bf16 mul)
extern "C" __global__ void halfs(const __half2 *a, const __half2 *b, __half2 *o1, const __nv_bfloat162 *c,
                                 const __nv_bfloat162 *d, __nv_bfloat162 *o2, float *o3, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    o1[i] = __hfma2(a[i], b[i], __hmax2(a[i], b[i]));
    o2[i] = __hfma2(c[i], d[i], __hmin2(c[i], d[i]));
    o3[i] = __half2float(__hadd(__low2half(a[i]), __high2half(b[i]))) +
            __bfloat162float(__hmul(__low2bfloat16(c[i]), __high2bfloat16(d[i])));
}

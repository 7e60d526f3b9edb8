// memory.cu - shared memory (static and dynamic), local arrays, grid-stride
// loops, 64-bit indexing, vector loads and stores, and printf.
#include <cstdio>

// Block sum with a static shared tree (blockDim.x == 256).
extern "C" __global__ void block_sum(const float *in, float *out, int n) {
    __shared__ float buf[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = buf[0];
}

// Reverses each block's slice through dynamic shared memory, with a
// second extern array view of the same memory as doubles.
extern "C" __global__ void reverse_dyn(const int *in, int *out, int n) {
    extern __shared__ int dsm[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    dsm[threadIdx.x] = i < n ? in[i] : -1;
    __syncthreads();
    int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - threadIdx.x);
    if (j < n) out[j] = dsm[threadIdx.x] * 2 + (int)(blockDim.x);
}

// A local array indexed with run-time values (it stays in local memory),
// and a sort of it.
extern "C" __global__ void local_array(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a[24];
    for (int k = 0; k < 24; k++) a[k] = in[(i * 24 + k * 7) % (n * 24) / 24 + 0] * (k + 1) - k * in[i];
    int idx = in[i] & 15;
    a[idx] += 1000;
    for (int x = 1; x < 24; x++) {              // insertion sort
        int v = a[x], y = x - 1;
        while (y >= 0 && a[y] > v) { a[y + 1] = a[y]; y--; }
        a[y + 1] = v;
    }
    int sum = 0;
    for (int k = 0; k < 24; k++) sum += a[k] * (k + 1);
    out[i] = sum + a[in[i] % 24 < 0 ? 0 : in[i] % 24];
}

// Grid-stride loop over 64-bit indices: out[i] = in[(i * stride) % n] + i.
extern "C" __global__ void grid_stride(const long long *in, long long *out, long long n, long long stride) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) {
        long long j = (i * stride) % n;
        const long long *p = in + j;
        out[i] = p[0] + i - (long long)(p - in) + j;   // = in[j] + i
    }
}

// Vector loads and stores: float4, int2, double2, with __ldg and __ldcs.
extern "C" __global__ void vectors(const float4 *a, const int2 *b, const double2 *c, float4 *oa, int2 *ob, double2 *oc, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 x = __ldg(&a[i]);
    int2 y = b[i];
    double2 z = __ldcs(&c[i]);
    oa[i] = make_float4(x.w, x.z * 2.0f, x.y + 1.0f, x.x - x.y);
    ob[n - 1 - i] = make_int2(y.y ^ 0x5555, y.x + y.y);
    oc[i] = make_double2(z.x * z.y, z.x - z.y);
}

// printf: every conversion the host checks, from the first thread of each block.
extern "C" __global__ void print(int n, const char *word) {
    if (threadIdx.x != 0) return;
    int b = blockIdx.x;
    printf("block %d of %d: %5.2f|%-6d|%x|%X|%o|%u|%lld|%llu|%c|%s|%e|%g|%+d|%08.3f|%*d|%.3s|%%\n", b, n, b * 1.5, -b, 255 + b,
           0xABCu, 8, 3000000000u, -123456789012345ll, 18446744073709551615ull, 'A' + b, word, 12345.678, 0.0001, b,
           3.14159, 6, b * 11, word);
}

// Device malloc/free and new/delete[] (the emulator's heap): each thread takes a buffer of its own length,
// fills and sums it; a struct made with new; pointers freed in the other order.
struct Node2 { long long v; Node2 *next; };
extern "C" __global__ void heap(const int *in, long long *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int m = in[i] % 11 + 1;
    int *buf = (int *)malloc(m * sizeof(int));
    long long *w = new long long[m];
    if (!buf || !w) { out[i] = -1; return; }
    for (int k = 0; k < m; k++) buf[k] = in[i] + k, w[k] = (long long)buf[k] * buf[k];
    Node2 *a = new Node2{0, nullptr}, *b = new Node2{0, a};
    for (int k = 0; k < m; k++) a->v += buf[k], b->v += w[k];
    out[i] = b->v * 1000 + b->next->v + ((((unsigned long long)buf | (unsigned long long)w) & 15) ? 1000000000000ll : 0);
    delete[] w;
    free(buf);
    delete b;
    delete a;
}

// alloca (a stack array of a run-time size in the thread's local memory), with a call after it whose own
// local array must not overlap it.
__device__ __noinline__ int fill_and_sum(int *p, int m, int seed) {
    int mine[5];
    for (int k = 0; k < 5; k++) mine[k] = seed * k;
    int s = 0;
    for (int k = 0; k < m; k++) s += p[k] + mine[k % 5];
    return s;
}
extern "C" __global__ void stack_alloca(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int m = in[i] % 13 + 1;
    int *buf = (int *)alloca(m * sizeof(int));
    for (int k = 0; k < m; k++) buf[k] = in[i] * (k + 1);
    out[i] = fill_and_sum(buf, m, in[i] & 7) + buf[m - 1];
}

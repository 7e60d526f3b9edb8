/* test_conformance_abi.c - the emulator runs what nvcc emits in the build variants users ship: -lineinfo (.file,
 * .loc on every line), -rdc=true (separate compilation: .visible and .weak functions, each callee kept), -G, on
 * sm_80 and sm_90a (how the suite works: test_conformance.h).
 *   abi.cu  structs passed and returned by value through __noinline__ functions (12-byte, and 40-byte with
 *           padding), a template instantiated for int and double (.weak under -rdc), recursion (fib), __constant__
 *           tables of floats and of structs and a __device__ int with initialisers, a __grid_constant__ struct
 *           indexed at run time (its address taken), __launch_bounds__, and cuda_fp16.h / cuda_bf16.h intrinsics
 *           on packed pairs (__hfma2, __hmax2, __hmin2, __hadd, __hmul): exact (small integer inputs; the f16 and
 *           bf16 results rounded once from the exact value)
 * The other topics' -rdc=true -lineinfo runs: test_conformance.c (warp, coop) and test_conformance_mem.c (memory,
 * control).  Racecheck is on; without nvcc every test is skipped, and says so. */
#include "test_conformance.h"

enum { N = 300 }; /* not a multiple of the 128-thread block */

typedef struct Vec3 { float x, y, z; } Vec3;

static Vec3 cross3(Vec3 a, Vec3 b) { return (Vec3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }

static const float coeffs[7] = {1.5f, -2.25f, 0.125f, 3.0f, -0.5f, 7.75f, 0.0625f};
static const struct { long long a; int b; } ctable[3] = {{1LL << 40, 7}, {-5, -9}, {123456789012LL, 42}};

static double ref_structs(const float *in, int i) {
    Vec3 a = {in[3 * i], in[3 * i + 1], in[3 * i + 2]}, b = {in[3 * i + 1], in[3 * i + 2], in[3 * i + 3]};
    Vec3 c = cross3(a, b);
    double d = (double)c.x * 0.5 + (double)c.y * 0.25 - (double)c.z, s = d + (signed char)(i * 37);
    for (int k = 0; k < 5; k++) s += (i * (k + 3) - k) * (k + 1);
    float r = 0.0f;
    for (int k = 0; k < 7; k++) r = fmaf(r, in[i], coeffs[k]);
    return s + (double)r + ((double)in[i] + (double)in[i] + (double)i);
}

static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

typedef struct Params {
    int32_t n;
    float scale;
    int32_t offs[5];
} Params;

static int32_t ref_grid_const(const Params *p, const int32_t *in, int i) {
    int32_t v = in[i];
    return v * p->offs[(v % 5 + 5) % 5] + (int32_t)(p->scale * (float)i) + ctable[i % 3].b + (int32_t)(ctable[i % 3].a >> 20) +
           fib(i % 13) + 17 + (2 * i + 1);
}

/* f16 and bf16 bits, rounded to nearest even from an exact double (normal range: the inputs keep it there) */
static uint16_t rne16(double v, int mant) {
    int e;
    double m = frexp(v, &e);                             /* v = m 2^e, 0.5 <= |m| < 1 */
    double q = ldexp(nearbyint(ldexp(m, mant + 1)), e - mant - 1); /* mant + 1 significant bits */
    if (mant == 7) return (uint16_t)(f2u((float)q) >> 16);
    _Float16 h = (_Float16)q; /* exact: q has 11 significant bits */
    uint16_t u;
    memcpy(&u, &h, 2);
    return u;
}
static double f16d(uint16_t u) { _Float16 h; memcpy(&h, &u, 2); return (double)h; }
static double bf16d(uint16_t u) { return (double)u2f((uint32_t)u << 16); }

static void check_abi(Conf *c) {
    Rng r = rng_seed(0xab1);
    /* structs: small integers, so the products are exact whether or not nvcc contracts them into fma */
    float fin[3 * N + 1];
    for (int k = 0; k < 3 * N + 1; k++) fin[k] = (float)((int)(rng_next(&r) % 17) - 8);
    tile_devptr din = dev_in(c, fin, sizeof fin), dout = dev_in(c, NULL, N * sizeof(double));
    int n = N;
    run(c, "structs", (N + 127) / 128, 128, 0, (void *[]){&din, &dout, &n});
    double got[N];
    dev_out(c, got, dout, sizeof got);
    for (int i = 0; i < N; i++)
        cr_assert_eq(d2u(got[i]), d2u(ref_structs(fin, i)), "[%s] structs %d: got %.17g, want %.17g", c->name, i, got[i],
                     ref_structs(fin, i));

    /* __grid_constant__: the struct by value, its offs[] indexed by the data */
    Params p = {N - 7, 0.37f, {3, -11, 5, 1000, -2}};
    int32_t iin[N], iout[N];
    for (int k = 0; k < N; k++) iin[k] = (int32_t)(rng_next(&r) % 2001) - 1000;
    tile_devptr gin = dev_in(c, iin, sizeof iin), gout = dev_in(c, NULL, sizeof iout);
    run(c, "grid_const", (N + 127) / 128, 128, 0, (void *[]){&p, &gin, &gout});
    dev_out(c, iout, gout, sizeof iout);
    for (int i = 0; i < N; i++) {
        int32_t want = i < p.n ? ref_grid_const(&p, iin, i) : (int32_t)0xCDCDCDCD; /* past p.n: untouched (poisoned) */
        cr_assert_eq(iout[i], want, "[%s] grid_const %d: got %d, want %d", c->name, i, iout[i], want);
    }

    /* f16x2 and bf16x2: nonzero k/64 (f16) and k/16 (bf16) values, so a*b + c is exact in double */
    uint16_t a[2 * N], b[2 * N], cc[2 * N], d[2 * N], o1[2 * N], o2[2 * N];
    float o3[N];
    for (int k = 0; k < 2 * N; k++) {
        int ka = (int)(rng_next(&r) % 512) - 256, kb = (int)(rng_next(&r) % 512) - 256;
        int kc = (int)(rng_next(&r) % 254) - 127, kd = (int)(rng_next(&r) % 254) - 127;
        a[k] = rne16((ka ? ka : 1) / 64.0, 10);
        b[k] = rne16((kb ? kb : -3) / 64.0, 10);
        cc[k] = rne16((kc ? kc : 5) / 16.0, 7);
        d[k] = rne16((kd ? kd : -1) / 16.0, 7);
    }
    tile_devptr pa = dev_in(c, a, sizeof a), pb = dev_in(c, b, sizeof b), pc = dev_in(c, cc, sizeof cc), pd = dev_in(c, d, sizeof d);
    tile_devptr p1 = dev_in(c, NULL, sizeof o1), p2 = dev_in(c, NULL, sizeof o2), p3 = dev_in(c, NULL, sizeof o3);
    run(c, "halfs", (N + 127) / 128, 128, 0, (void *[]){&pa, &pb, &p1, &pc, &pd, &p2, &p3, &n});
    dev_out(c, o1, p1, sizeof o1);
    dev_out(c, o2, p2, sizeof o2);
    dev_out(c, o3, p3, sizeof o3);
    for (int k = 0; k < 2 * N; k++) {
        double x = f16d(a[k]), y = f16d(b[k]), u = bf16d(cc[k]), w = bf16d(d[k]);
        uint16_t w1 = rne16(x * y + (x > y ? x : y), 10), w2 = rne16(u * w + (u < w ? u : w), 7);
        cr_assert_eq(o1[k], w1, "[%s] halfs f16 fma %d: got 0x%04x, want 0x%04x", c->name, k, o1[k], w1);
        cr_assert_eq(o2[k], w2, "[%s] halfs bf16 fma %d: got 0x%04x, want 0x%04x", c->name, k, o2[k], w2);
    }
    for (int i = 0; i < N; i++) {
        float h = (float)f16d(rne16(f16d(a[2 * i]) + f16d(b[2 * i + 1]), 10));
        float m = (float)bf16d(rne16(bf16d(cc[2 * i]) * bf16d(d[2 * i + 1]), 7));
        float want = h + m;
        cr_assert_eq(f2u(o3[i]), f2u(want), "[%s] halfs o3 %d: got %a, want %a", c->name, i, o3[i], want);
    }
}

static const Variant A80L = {"sm_80", false, "-lineinfo"}, A90RL = {"sm_90a", false, "-rdc=true -lineinfo"},
                     A80GR = {"sm_80", true, "-rdc=true"}, A90G = {"sm_90a", true, NULL};

static void abi_run(const Variant *v) {
    Conf c;
    conf_open(&c, "abi", v);
    check_abi(&c);
    conf_close(&c);
}

Test(abi, sm_80_O3_lineinfo) { abi_run(&A80L); }
Test(abi, sm_90a_O3_rdc_lineinfo) { abi_run(&A90RL); }
Test(abi, sm_80_G_rdc) { abi_run(&A80GR); }
Test(abi, sm_90a_G) { abi_run(&A90G); }

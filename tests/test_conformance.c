/* test_conformance.c - the emulator runs what nvcc emits.
 *
 * The kernels of tests/conformance/ (one .cu file per topic) are compiled
 * by nvcc -ptx at test time, each for sm_80 and sm_90a, optimised (-O3) and for debugging (-G:
 * calls with the param-space ABI, local stack frames, .loc), loaded
 * unmodified through the public API (tile_module_load_ptx, tile_launch_raw)
 * and checked against references computed here on the host:
 *   int.cu      integer, 64-bit and 128-bit integer arithmetic (128-bit division), bit operations: exact
 *   float.cu    f32/f64 arithmetic with every rounding mode, conversions
 *               between integers, f64, f32, f16 and bf16 with every
 *               rounding mode, f16/bf16/f16x2 arithmetic, cuda_fp16.h's NaN-propagating,
 *               relu, saturating, rounding, classifying and comparing forms: exact (bits)
 *   math.cu     the CUDA math library (libdevice, inlined into the PTX):
 *               within the maximum ulp errors the CUDA Programming Guide
 *               documents for each function (table below), plus the fast
 *               intrinsics within their documented absolute errors
 *   warp.cu     __shfl*_sync (every kind, widths), __ballot/__all/__any_sync,
 *               __activemask, __match_any/all_sync, __reduce_*_sync: exact
 *   atomics.cu  atomicAdd (i32, u64, f32, f64, f16x2), CAS, Exch, Min/Max,
 *               And/Or/Xor, Inc/Dec, on global and shared memory, _block and
 *               _system scopes: exact (order-independent results)
 *   wmma.cu     nvcuda::wmma (wmma.load/mma/store) in every shape and type
 *               (f16 into f32 and f16, bf16, tf32, s8 saturating, f64), row
 *               and column major, padded strides: exact (the sub-byte and
 *               single-bit forms: test_emu_subbyte.c, from checked-in PTX)
 *   memory.cu, mma.cu, control.cu, cub.cu, coop.cu: in test_conformance_mem.c
 *   fp8.cu      cuda_fp8.h's conversions (float, float2, half2, bfloat162 to
 *               E4M3/E5M2, saturating or not, FP8 pairs to half2, the
 *               __nv_fp8_* types), cuda_fp4.h / cuda_fp6.h's E2M1, E2M3 and
 *               E3M2 of finite floats: exact, NaNs as NaNs
 *   hopper.cu   sm_90a only: in test_conformance_hopper.c
 * Every topic runs with the emulator's racecheck.
 * Without nvcc ($TILE_NVCC, /usr/local/cuda/bin/nvcc, $CUDA_HOME/bin or
 * PATH) every test is skipped, and says so (ctest shows the program as
 * skipped, never passed).  TILE_TEST_DEVICE=cuda runs the same checks
 * on a GPU. */
#include "test_conformance.h"

/* ==== int.cu ==== */
enum { NI = 62, NL = 20 };

/* __fns as the CUDA Math API describes it: the offset-th set bit of mask counting from base (inclusive),
 * upward for offset > 0, downward for offset < 0; offset 0: base when that bit is set; else 0xffffffff */
static uint32_t ref_fns(uint32_t mask, uint32_t base, int offset) {
    if (offset == 0) return (mask >> base & 1) ? base : 0xFFFFFFFFu;
    int seen = 0, want = offset > 0 ? offset : -offset;
    for (int p = (int)base; p >= 0 && p < 32; p += offset > 0 ? 1 : -1)
        if ((mask >> p & 1) && ++seen == want) return (uint32_t)p;
    return 0xFFFFFFFFu;
}

static void ref_int(uint32_t x, uint32_t y, uint32_t o[NI]) {
    int32_t sx = (int32_t)x, sy = (int32_t)y;
    bool sdiv = sy != 0 && !(sx == INT32_MIN && sy == -1);
    o[0] = x + y;
    o[1] = x - y;
    o[2] = x * y;
    o[3] = (uint32_t)(((uint64_t)x * y) >> 32);
    o[4] = (uint32_t)(((int64_t)sx * sy) >> 32);
    o[5] = y ? x / y : 0;
    o[6] = y ? x % y : 0;
    o[7] = sdiv ? (uint32_t)(sx / sy) : 0;
    o[8] = sdiv ? (uint32_t)(sx % sy) : 0;
    o[9] = x << (y & 31);
    o[10] = x >> (y & 31);
    o[11] = (uint32_t)(sx >> (y & 31));
    o[12] = x & y;
    o[13] = x | y;
    o[14] = x ^ ~y;
    o[15] = (uint32_t)__builtin_popcount(x);
    o[16] = x ? (uint32_t)__builtin_clz(x) : 32;
    uint32_t r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1) << (31 - i);
    o[17] = r;
    o[18] = x ? (uint32_t)__builtin_ctz(x) + 1 : 0;
    uint64_t bytes = ((uint64_t)y << 32) | x;
    uint32_t sel = y & 0x7777, p = 0;
    for (int i = 0; i < 4; i++) p |= (uint32_t)((bytes >> (8 * ((sel >> (4 * i)) & 7))) & 0xFF) << (8 * i);
    o[19] = p;
    uint64_t fs = ((uint64_t)y << 32) | x;
    o[20] = (uint32_t)((fs << (y & 31)) >> 32);
    o[21] = (uint32_t)(fs >> (y & 31));
    uint32_t cs = y > 32 ? 32 : y;
    o[22] = (uint32_t)((fs << cs) >> 32);
    o[23] = (uint32_t)(fs >> cs);
    o[24] = (uint32_t)(sx < sy ? sx : sy);
    o[25] = x > y ? x : y;
    o[26] = sx < 0 ? 0u - x : x;
    o[27] = (uint32_t)(sx > sy ? (int64_t)sx - sy : (int64_t)sy - sx) + x;
    o[28] = (x > y ? x - y : y - x) + 7u;
    o[29] = (uint32_t)(int32_t)(((int64_t)sx + sy) >> 1);
    o[30] = (uint32_t)(int32_t)(((int64_t)sx + sy + 1) >> 1);
    o[31] = (uint32_t)(((uint64_t)x + y) >> 1);
    o[32] = (uint32_t)(int32_t)(int16_t)x * (uint32_t)(int32_t)(int16_t)y;
    o[33] = (uint32_t)(uint8_t)x + (uint8_t)y;
    int32_t x24 = (int32_t)(x << 8) >> 8, y24 = (int32_t)(y << 8) >> 8;
    o[34] = (uint32_t)((int64_t)x24 * y24);
    o[35] = (uint32_t)((uint64_t)(x & 0xFFFFFF) * (y & 0xFFFFFF));
    o[36] = x > y;
    o[37] = sx < sy;
    o[38] = (x & 1) ? x * 3 + 1 : x / 2;
    o[39] = (uint32_t)(int32_t)(int8_t)x;
    int64_t s4 = sx, u4 = 7, s2 = 5, u2 = y; /* wrapped to 32 bits at the end */
    for (int i = 0; i < 4; i++) {
        s4 += (int8_t)(x >> (8 * i)) * (int8_t)(y >> (8 * i));
        u4 += ((x >> (8 * i)) & 0xFF) * ((y >> (8 * i)) & 0xFF);
    }
    for (int i = 0; i < 2; i++) {
        s2 += (int16_t)(x >> (16 * i)) * (int8_t)(y >> (8 * i));
        u2 += ((x >> (16 * i)) & 0xFFFF) * ((y >> (8 * (2 + i))) & 0xFF);
    }
    o[40] = (uint32_t)s4;
    o[41] = (uint32_t)u4;
    o[42] = (uint32_t)s2;
    o[43] = (uint32_t)u2;
    /* SIMD within a word: lane i of width w */
#define LANE(v, w, i) (((v) >> ((w) * (i))) & ((1u << (w)) - 1))
#define SLANE(v, w, i) ((int32_t)(LANE(v, w, i) << (32 - (w))) >> (32 - (w)))
    uint32_t v44 = 0, v45 = 0, v46 = 0, v47 = 0, v48 = 0, v49 = 0, v50 = 0, v51 = 0, v52 = 0, v53 = 0, v54 = 0, v55 = 0, v59a = 0, v59b = 0;
    uint32_t ym = y | 0x00FF00FFu;
    for (int i = 0; i < 2; i++) {
        uint32_t a = LANE(x, 16, i), bb = LANE(y, 16, i);
        int32_t sa2 = SLANE(x, 16, i), sb2 = SLANE(y, 16, i);
        v44 |= ((a + bb) & 0xFFFF) << 16 * i;
        v46 |= ((uint32_t)(sa2 > sb2 ? sa2 : sb2) & 0xFFFF) << 16 * i;
        v47 |= (a < bb ? a : bb) << 16 * i;
        v51 += (uint32_t)(sa2 > sb2 ? sa2 - sb2 : sb2 - sa2);
        v54 |= ((a + bb) >> 1) << 16 * i;
        v55 |= (sa2 > sb2 ? 0xFFFFu : 0u) << 16 * i;
        v59a |= (a > bb ? a - bb : bb - a) << 16 * i;
        v59b |= (a > bb ? a : bb) << 16 * i;
    }
    for (int i = 0; i < 4; i++) {
        uint32_t a = LANE(x, 8, i), bb = LANE(y, 8, i);
        int32_t sa4 = SLANE(x, 8, i), sb4 = SLANE(y, 8, i);
        v45 |= ((a - bb) & 0xFF) << 8 * i;
        v48 |= (a > bb ? a - bb : bb - a) << 8 * i;
        v49 |= ((uint32_t)(sa4 > sb4 ? sa4 - sb4 : sb4 - sa4) & 0xFF) << 8 * i;
        v50 += a > bb ? a - bb : bb - a;
        v52 |= (a == LANE(ym, 8, i) ? 0xFFu : 0u) << 8 * i;
        v53 |= ((a + bb + 1) >> 1) << 8 * i;
    }
#undef LANE
#undef SLANE
    o[44] = v44, o[45] = v45, o[46] = v46, o[47] = v47, o[48] = v48, o[49] = v49, o[50] = v50, o[51] = v51;
    o[52] = v52, o[53] = v53, o[54] = v54, o[55] = v55;
    uint32_t z7 = x * 7u;
    o[56] = x ^ y ^ z7;
    o[57] = (x & y) | (x & z7) | (y & z7);
    o[58] = x ^ (y | z7);
    o[59] = v59a + v59b;
    o[60] = ref_fns(x, y & 31, (int)(y >> 27) - 16);
    o[61] = ref_fns(x | 1u, 0, 0) + ref_fns(x, 31, -(int)(y & 7) - 1);
}

static void ref_int64(uint64_t x, uint64_t y, uint64_t o[NL]) {
    int64_t sx = (int64_t)x, sy = (int64_t)y;
    bool sdiv = sy != 0 && !(sx == INT64_MIN && sy == -1);
    o[0] = x + y;
    o[1] = x - y;
    o[2] = x * y;
    o[3] = (uint64_t)(((unsigned __int128)x * y) >> 64);
    o[4] = (uint64_t)(((__int128)sx * sy) >> 64);
    o[5] = y ? x / y : 0;
    o[6] = y ? x % y : 0;
    o[7] = sdiv ? (uint64_t)(sx / sy) : 0;
    o[8] = sdiv ? (uint64_t)(sx % sy) : 0;
    o[9] = x << (y & 63);
    o[10] = x >> (y & 63);
    o[11] = (uint64_t)(sx >> (y & 63));
    o[12] = (uint64_t)__builtin_popcountll(x);
    o[13] = x ? (uint64_t)__builtin_clzll(x) : 64;
    uint64_t r = 0;
    for (int i = 0; i < 64; i++) r |= ((x >> i) & 1) << (63 - i);
    o[14] = r;
    o[15] = x ? (uint64_t)__builtin_ctzll(x) + 1 : 0;
    o[16] = (uint64_t)(uint32_t)x * (uint32_t)y;
    o[17] = (uint64_t)((int64_t)(int32_t)x * (int32_t)y);
    o[18] = (uint64_t)(sx < sy ? sx : sy);
    o[19] = x > y ? x : y;
}

/* Special values first (all pairs), then random ones. */
static const uint32_t special32[] = {0, 1, 2, 3, 7, 31, 32, 33, 63, 64, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFF,
                                     0xFFFFFFFE, 0x12345678, 0xDEADBEEF, 0x00FFFFFF, 0x01000000, 0xFFFF8000};

CONFORMANCE(int)
static void check_int(Conf *c) {
    const size_t ns = ARRAY_LEN(special32), n = ns * ns + 600;
    uint32_t *a = malloc(n * 4), *b = malloc(n * 4), *o = malloc(n * NI * 4);
    uint64_t *a64 = malloc(n * 8), *b64 = malloc(n * 8), *o64 = malloc(n * NL * 8);
    Rng rng = rng_seed(11);
    for (size_t i = 0; i < n; i++) {
        a[i] = i < ns * ns ? special32[i / ns] : (uint32_t)rng_next(&rng);
        b[i] = i < ns * ns ? special32[i % ns] : (i % 3 ? (uint32_t)rng_next(&rng) : (uint32_t)rng_next(&rng) % 40);
        a64[i] = i < ns * ns ? (uint64_t)(int64_t)(int32_t)a[i] : rng_next(&rng);
        b64[i] = i < ns * ns ? ((uint64_t)b[i] << (i % 2 ? 32 : 0)) | b[i] : (i % 3 ? rng_next(&rng) : rng_next(&rng) % 70);
    }
    tile_devptr da = dev_in(c, a, n * 4), db = dev_in(c, b, n * 4), dout = dev_in(c, NULL, n * NI * 4);
    int nn = (int)n;
    run(c, "int_ops", 4, 128, 0, (void *[]){&da, &db, &dout, &nn}); /* fewer threads than elements: grid-stride */
    dev_out(c, o, dout, n * NI * 4);
    for (size_t i = 0; i < n; i++) {
        uint32_t want[NI];
        ref_int(a[i], b[i], want);
        for (int k = 0; k < NI; k++)
            cr_assert_eq(o[i * NI + k], want[k], "[%s] int_ops result %d for a=%#x b=%#x: got %#x, want %#x", c->name, k, a[i],
                         b[i], o[i * NI + k], want[k]);
    }
    tile_devptr da64 = dev_in(c, a64, n * 8), db64 = dev_in(c, b64, n * 8), dout64 = dev_in(c, NULL, n * NL * 8);
    run(c, "int64_ops", (unsigned)(n + 127) / 128, 128, 0, (void *[]){&da64, &db64, &dout64, &nn});
    dev_out(c, o64, dout64, n * NL * 8);
    for (size_t i = 0; i < n; i++) {
        uint64_t want[NL];
        ref_int64(a64[i], b64[i], want);
        for (int k = 0; k < NL; k++)
            cr_assert_eq(o64[i * NL + k], want[k], "[%s] int64_ops result %d for a=%#llx b=%#llx: got %#llx, want %#llx", c->name,
                         k, (unsigned long long)a64[i], (unsigned long long)b64[i], (unsigned long long)o64[i * NL + k],
                         (unsigned long long)want[k]);
    }
    /* 128-bit division: (hi, lo) built from the 64-bit inputs, small and large divisors */
    uint64_t *a128 = malloc(n * 16), *b128 = malloc(n * 16), *o128 = malloc(n * 64);
    for (size_t i = 0; i < n; i++) {
        a128[2 * i] = a64[i], a128[2 * i + 1] = i % 4 == 0 ? 0 : i % 4 == 1 ? ~0ull : rng_next(&rng);
        b128[2 * i] = b64[i], b128[2 * i + 1] = i % 5 < 2 ? 0 : i % 5 == 2 ? ~0ull : rng_next(&rng) >> (i % 64);
    }
    tile_devptr da128 = dev_in(c, a128, n * 16), db128 = dev_in(c, b128, n * 16), dout128 = dev_in(c, NULL, n * 64);
    run(c, "int128_ops", (unsigned)(n + 127) / 128, 128, 0, (void *[]){&da128, &db128, &dout128, &nn});
    dev_out(c, o128, dout128, n * 64);
    for (size_t i = 0; i < n; i++) {
        unsigned __int128 x = (unsigned __int128)a128[2 * i + 1] << 64 | a128[2 * i], y = (unsigned __int128)b128[2 * i + 1] << 64 | b128[2 * i];
        __int128 sx = (__int128)x, sy = (__int128)y;
        bool sdiv = sy != 0 && !(sy == -1 && x == (unsigned __int128)1 << 127);
        unsigned __int128 want[4] = {y ? x / y : 0, y ? x % y : 0, sdiv ? (unsigned __int128)(sx / sy) : 0,
                                     sdiv ? (unsigned __int128)(sx % sy) : 0};
        for (int k = 0; k < 4; k++) {
            unsigned __int128 got = (unsigned __int128)o128[8 * i + 2 * k + 1] << 64 | o128[8 * i + 2 * k];
            cr_assert(got == want[k], "[%s] int128_ops result %d for x=%#llx:%016llx y=%#llx:%016llx: got %#llx:%016llx, want %#llx:%016llx",
                      c->name, k, (unsigned long long)(x >> 64), (unsigned long long)x, (unsigned long long)(y >> 64),
                      (unsigned long long)y, (unsigned long long)(got >> 64), (unsigned long long)got,
                      (unsigned long long)(want[k] >> 64), (unsigned long long)want[k]);
        }
    }
    free(a128); free(b128); free(o128);
    free(a); free(b); free(o); free(a64); free(b64); free(o64);
}

/* ==== float.cu ==== */
enum { NF = 44, ND = 28, NC = 56, NH = 22 };
enum { RN, RZ, RU, RD };
static const int host_mode[] = {FE_TONEAREST, FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};

/* One f32 or f64 operation in a host rounding mode (volatile: no folding across fesetround). */
__attribute__((noinline)) static double host_op(char op, bool dbl, double a, double b, double c, int mode) {
    fesetround(host_mode[mode]);
    volatile double r;
    if (dbl) {
        volatile double x = a, y = b, z = c;
        switch (op) {
        case '+': r = x + y; break;
        case '-': r = x - y; break;
        case '*': r = x * y; break;
        case '/': r = x / y; break;
        case 'r': r = 1.0 / x; break;
        case 's': r = sqrt(x); break;
        default: r = fma(x, y, z); break;
        }
    } else {
        volatile float x = (float)a, y = (float)b, z = (float)c, v;
        switch (op) {
        case '+': v = x + y; break;
        case '-': v = x - y; break;
        case '*': v = x * y; break;
        case '/': v = x / y; break;
        case 'r': v = 1.0f / x; break;
        case 's': v = sqrtf(x); break;
        case 'd': v = (float)a; break; /* double -> float in the mode */
        default: v = fmaf(x, y, z); break;
        }
        r = v;
    }
    fesetround(FE_TONEAREST);
    return r;
}

/* An integer converted to float/double in a host rounding mode. */
__attribute__((noinline)) static uint64_t host_int2f(int64_t v, bool is_unsigned, bool dbl, int mode) {
    fesetround(host_mode[mode]);
    volatile int64_t x = v;
    volatile uint64_t u = (uint64_t)v;
    uint64_t bits;
    if (dbl) bits = d2u(is_unsigned ? (double)u : (double)x);
    else bits = f2u(is_unsigned ? (float)u : (float)x);
    fesetround(FE_TONEAREST);
    return bits;
}

/* x correctly rounded to a binary format with `man` fraction bits, exponent
 * bias `bias` (f16: 10, 15; bf16: 7, 127), in mode; NaN gives 0x7fff. */
static uint32_t ref_round(double x, int man, int bias, int mode) {
    if (isnan(x)) return 0x7FFF;
    uint32_t sign = signbit(x) ? 1u << (man + (bias == 15 ? 5 : 8)) : 0;
    int ebits = bias == 15 ? 5 : 8, emin = 1 - bias, emax = bias;
    uint32_t inf = ((1u << ebits) - 1) << man, maxf = inf - 1;
    double a = fabs(x);
    if (isinf(a)) return sign | inf;
    if (a == 0) return sign;
    int e;
    frexp(a, &e);
    e -= 1; /* a in [2^e, 2^(e+1)) */
    double quantum = ldexp(1.0, (e < emin ? emin : e) - man), q = a / quantum, qi;
    bool neg = sign != 0;
    switch (mode) {
    case RZ: qi = floor(q); break;
    case RU: qi = neg ? floor(q) : ceil(q); break;
    case RD: qi = neg ? ceil(q) : floor(q); break;
    default: qi = nearbyint(q); break;
    }
    double r = qi * quantum;
    if (r >= ldexp(1.0, emax + 1)) { /* overflow: inf, or the largest finite toward zero */
        bool to_inf = mode == RN || (mode == RU && !neg) || (mode == RD && neg);
        return sign | (to_inf ? inf : maxf);
    }
    if (r < ldexp(1.0, emin)) return sign | (uint32_t)(r / ldexp(1.0, emin - man)); /* subnormal (or zero) */
    int e2;
    frexp(r, &e2);
    e2 -= 1;
    uint32_t mant = (uint32_t)(r / ldexp(1.0, e2 - man)) - (1u << man);
    return sign | ((uint32_t)(e2 + bias) << man) | mant;
}
static uint32_t to_f16(double x, int mode) { return ref_round(x, 10, 15, mode); }
static uint32_t to_bf16(double x, int mode) { return ref_round(x, 7, 127, mode); }
static double from_f16(uint32_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}
static double from_bf16(uint32_t h) { return u2f((h & 0xFFFF) << 16); }
/* a*b+c of f16/bf16 values (the product exact in double) rounded to odd in double: fma toward zero, then the
 * last bit set when it was inexact; the one rounding into the 8- or 11-bit format after it is then the fused
 * one (fma(a, b, c) rounded to nearest first could land on a tie a tiny c had broken) */
static double fma_odd(double a, double b, double c) {
    int old = fegetround();
    feclearexcept(FE_INEXACT);
    fesetround(FE_TOWARDZERO);
    volatile double x = a, y = b, z = c, r = fma(x, y, z);
    bool inexact = fetestexcept(FE_INEXACT);
    fesetround(old);
    if (!inexact || !isfinite(r)) return r;
    uint64_t u;
    memcpy(&u, (const void *)&r, 8);
    u |= 1;
    double v;
    memcpy(&v, &u, 8);
    return v;
}

/* float -> integer as PTX cvt: rounded in the mode, saturated; a NaN gives 0, or with wide_nan (an f64 source
 * or a 64-bit destination) 1 << (width - 1), as the ISA's cvt says. */
static int64_t ref_f2i(double x, int mode, double lo, double hi, bool wide_nan) {
    if (isnan(x)) return wide_nan ? (int64_t)lo : 0;
    double r = mode == RN ? nearbyint(x) : mode == RZ ? trunc(x) : mode == RU ? ceil(x) : floor(x);
    if (r <= lo) return (int64_t)lo;
    if (r >= hi) return hi >= 0x1p63 ? INT64_MAX : (int64_t)hi;
    return (int64_t)r;
}
static uint64_t ref_f2u(double x, int mode, double hi, bool wide_nan) {
    if (isnan(x)) return wide_nan ? (uint64_t)((hi + 1) / 2) : 0;
    double r = mode == RN ? nearbyint(x) : mode == RZ ? trunc(x) : mode == RU ? ceil(x) : floor(x);
    if (r <= 0) return 0;
    if (r >= hi) return hi >= 0x1p64 ? UINT64_MAX : (uint64_t)hi;
    return (uint64_t)r;
}

/* min/max as PTX: a NaN operand loses, -0 < +0. */
static double ref_minmax(double a, double b, bool mx) {
    if (isnan(a)) return b;
    if (isnan(b)) return a;
    if (a == b && a == 0) return (signbit(a) != mx) ? a : b;
    return mx ? (a > b ? a : b) : (a < b ? a : b);
}

static bool same32(uint32_t got, uint32_t want) { return got == want || (isnan(u2f(got)) && isnan(u2f(want))); }
static bool same64(uint64_t got, uint64_t want) { return got == want || (isnan(u2d(got)) && isnan(u2d(want))); }
static bool same16(uint32_t got, uint32_t want, bool bf) {
    bool gn = bf ? isnan(from_bf16(got)) : isnan(from_f16(got)), wn = bf ? isnan(from_bf16(want)) : isnan(from_f16(want));
    return (got & 0xFFFF) == (want & 0xFFFF) || (gn && wn);
}

static const uint32_t specialf[] = {
    0x00000000, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x00000001, 0x80000001,
    0x00800000, 0x007FFFFF, 0x7F7FFFFF, 0x3F000000, 0x3FC00000, 0x40200000, 0xC0200000, 0x40490FDB, 0x4B000001,
    0x4EFFFFFF, 0x4F000000, 0xCF000000, 0x5F000000, 0x477FE000, 0x477FF000, 0x387FC000, 0x33800000, 0x3F7FFFFF,
    0x3F800001, 0x42F60000, 0xC2F70000, 0x34000000, 0x3FFFFFFF,
};

static float rand_float(Rng *r) {
    switch (rng_next(r) % 4) {
    case 0: return (float)rng_uniform(r, -4, 4);
    case 1: return (float)ldexp(rng_uniform(r, -1, 1), (int)(rng_next(r) % 60) - 30);
    case 2: return (float)rng_uniform(r, -70000, 70000);
    default: return u2f((uint32_t)rng_next(r)); /* any bits: subnormals, huge, NaN */
    }
}

static void check_f32(Conf *c, Rng *rng) {
    const size_t ns = ARRAY_LEN(specialf), n = ns * ns + 2000;
    float *a = malloc(n * 4), *b = malloc(n * 4), *cc = malloc(n * 4);
    uint32_t *o = malloc(n * NF * 4);
    for (size_t i = 0; i < n; i++) {
        a[i] = i < ns * ns ? u2f(specialf[i / ns]) : rand_float(rng);
        b[i] = i < ns * ns ? u2f(specialf[i % ns]) : rand_float(rng);
        cc[i] = i % 7 ? rand_float(rng) : -a[i] * b[i];
    }
    tile_devptr da = dev_in(c, a, n * 4), db = dev_in(c, b, n * 4), dc = dev_in(c, cc, n * 4), dout = dev_in(c, NULL, n * NF * 4);
    int nn = (int)n;
    run(c, "f32_ops", (unsigned)(n + 127) / 128, 128, 0, (void *[]){&da, &db, &dc, &dout, &nn});
    dev_out(c, o, dout, n * NF * 4);
    static const char ops[] = {'+', '-', '*', 'f', '/', 'r', 's'};
    for (size_t i = 0; i < n; i++) {
        float x = a[i], y = b[i], z = cc[i];
        uint32_t want[NF];
        for (int k = 0; k < 7; k++)
            for (int m = 0; m < 4; m++) want[k * 4 + m] = f2u((float)host_op(ops[k], false, x, y, z, m));
        want[28] = f2u(x / y);
        want[29] = f2u(sqrtf(x));
        want[30] = f2u((float)ref_minmax(x, y, false));
        want[31] = f2u((float)ref_minmax(x, y, true));
        want[32] = f2u(x) & 0x7FFFFFFF;
        want[33] = (f2u(x) & 0x7FFFFFFF) | (f2u(y) & 0x80000000);
        want[34] = f2u(floorf(x));
        want[35] = f2u(ceilf(x));
        want[36] = f2u(truncf(x));
        want[37] = f2u(rintf(x));
        want[38] = f2u(roundf(x));
        want[39] = f2u(!(x > 0) ? 0.0f : x > 1 ? 1.0f : x); /* NaN and -0 give +0 (an H200: bench/gpu/hw_facts.cu) */
        volatile float prod = x * y; /* -G does not contract x * y + z into an fma */
        want[40] = c->v->debug ? f2u(prod + z) : f2u(fmaf(x, y, z));
        want[41] = f2u(fmodf(x, y));
        want[42] = f2u(x) ^ 0x80000000;
        want[43] = f2u(isnan(x) || isnan(y) ? NAN : x > y ? x - y : 0.0f);
        for (int k = 0; k < NF; k++) {
            uint32_t got = o[i * NF + k];
            bool ok = (k == 32 || k == 33 || k == 42) && !isnan(x) ? got == want[k] : same32(got, want[k]);
            cr_assert(ok, "[%s] f32_ops result %d for a=%#x (%g) b=%#x (%g) c=%#x: got %#x (%g), want %#x (%g)", c->name, k,
                      f2u(x), x, f2u(y), y, f2u(z), got, u2f(got), want[k], u2f(want[k]));
        }
    }
    free(a); free(b); free(cc); free(o);
}

static void check_f64(Conf *c, Rng *rng) {
    const size_t ns = ARRAY_LEN(specialf), n = ns * ns + 2000;
    double *a = malloc(n * 8), *b = malloc(n * 8), *cc = malloc(n * 8);
    uint64_t *o = malloc(n * ND * 8);
    for (size_t i = 0; i < n; i++) {
        a[i] = i < ns * ns ? (double)u2f(specialf[i / ns]) : (i % 5 ? (double)rand_float(rng) * (1 + 0x1p-40 * (double)(i % 1000)) : u2d(rng_next(rng)));
        b[i] = i < ns * ns ? (double)u2f(specialf[i % ns]) : (i % 5 ? (double)rand_float(rng) * 1.000000001 : u2d(rng_next(rng)));
        cc[i] = i % 7 ? (double)rand_float(rng) / 3.0 : -a[i] * b[i];
        if (i >= ns * ns && i % 11 == 0) a[i] = ldexp(rng_uniform(rng, -1, 1), -1060); /* double subnormals */
    }
    tile_devptr da = dev_in(c, a, n * 8), db = dev_in(c, b, n * 8), dc = dev_in(c, cc, n * 8), dout = dev_in(c, NULL, n * ND * 8);
    int nn = (int)n;
    run(c, "f64_ops", (unsigned)(n + 127) / 128, 128, 0, (void *[]){&da, &db, &dc, &dout, &nn});
    dev_out(c, o, dout, n * ND * 8);
    static const char ops[] = {'+', '-', '*', 'f', '/', 'r', 's'};
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < ND; k++) {
            uint64_t want = d2u(host_op(ops[k / 4], true, a[i], b[i], cc[i], k % 4)), got = o[i * ND + k];
            cr_assert(same64(got, want), "[%s] f64_ops result %d for a=%a b=%a c=%a: got %a, want %a", c->name, k, a[i], b[i],
                      cc[i], u2d(got), u2d(want));
        }
    free(a); free(b); free(cc); free(o);
}

static void check_cvt(Conf *c, Rng *rng) {
    const size_t ns = ARRAY_LEN(specialf), n = ns * 8 + 3000;
    float *a = malloc(n * 4);
    double *b = malloc(n * 8);
    int64_t *l = malloc(n * 8);
    uint64_t *o = malloc(n * NC * 8);
    static const int64_t speciall[] = {0, 1, -1, 16777217, -16777217, 2147483647, -2147483647 - 1, 9007199254740993LL,
                                       INT64_MAX, INT64_MIN, 0x7FFFFFC000000001LL, 65504, 65520, -65520, 0x1FFFF};
    for (size_t i = 0; i < n; i++) {
        a[i] = i < ns * 8 ? u2f(specialf[i / 8]) * (i % 8 < 4 ? 1.0f : 4097.3f) : rand_float(rng);
        if (i >= ns * 8 && i % 4 == 0) a[i] = (float)rng_uniform(rng, -3e9, 5e9);
        if (i >= ns * 8 && i % 4 == 1) a[i] = (float)ldexp(rng_uniform(rng, -1, 1), (int)(rng_next(rng) % 70));
        b[i] = i % 3 == 0 ? (double)a[i] * (1 + 0x1p-30) : i % 3 == 1 ? (double)a[i] : u2d(rng_next(rng));
        if (i % 9 == 2) b[i] = ldexp(rng_uniform(rng, -1, 1), -(int)(rng_next(rng) % 150) - 120); /* tiny: f32/f16 subnormals */
        l[i] = i < ARRAY_LEN(speciall) ? speciall[i] : (int64_t)(rng_next(rng) >> (rng_next(rng) % 64));
        if (i % 2) l[i] = (int64_t)(0 - (uint64_t)l[i]);
    }
    tile_devptr da = dev_in(c, a, n * 4), db = dev_in(c, b, n * 8), dl = dev_in(c, l, n * 8), dout = dev_in(c, NULL, n * NC * 8);
    int nn = (int)n;
    run(c, "cvt_ops", (unsigned)(n + 63) / 64, 64, 0, (void *[]){&da, &db, &dl, &dout, &nn});
    dev_out(c, o, dout, n * NC * 8);
    for (size_t i = 0; i < n; i++) {
        float x = a[i];
        double d = b[i];
        int64_t v = l[i];
        int32_t s = (int32_t)v;
        uint64_t w[NC];
        for (int m = 0; m < 4; m++) {
            w[0 + m] = (uint32_t)ref_f2i(x, m, -0x1p31, 0x1p31 - 1, false);
            w[4 + m] = (uint32_t)ref_f2u(x, m, 0x1p32 - 1, false);
            w[8 + m] = (uint64_t)ref_f2i(x, m, -0x1p63, 0x1p63, true);
            w[14 + m] = (uint32_t)ref_f2i(d, m, -0x1p31, 0x1p31 - 1, true);
            w[20 + m] = host_int2f(s, false, false, m);
            w[26 + m] = host_int2f(v, false, false, m);
            w[31 + m] = host_int2f(v, false, true, m);
            w[35 + m] = f2u((float)host_op('d', false, d, 0, 0, m));
            w[40 + m] = to_f16(x, m);
            w[46 + m] = to_bf16(x, m);
        }
        w[12] = ref_f2u(x, RN, 0x1p64, true);
        w[13] = ref_f2u(x, RZ, 0x1p64, true);
        w[18] = (uint64_t)ref_f2i(d, RN, -0x1p63, 0x1p63, true);
        w[19] = ref_f2u(d, RZ, 0x1p64, true);
        w[24] = host_int2f((uint32_t)s, true, false, RN);
        w[25] = host_int2f((uint32_t)s, true, false, RZ);
        w[30] = host_int2f(v, true, false, RN);
        w[39] = d2u((double)x);
        w[44] = f2u((float)from_f16((uint16_t)s));
        w[45] = to_f16(d, RN);
        w[50] = f2u((float)from_bf16((uint16_t)s));
        w[51] = to_f16((double)(s % 70000), RN);
        double h = from_f16(to_f16(x, RN));
        w[52] = (uint32_t)(int32_t)ref_f2i(h, RZ, -32768, 32767, false);
        w[53] = to_bf16(d, RN);
        w[54] = (uint32_t)ref_f2i(x, RZ, -0x1p31, 0x1p31 - 1, false);
        w[55] = host_int2f(v, false, false, RN);
        for (int k = 0; k < NC; k++) {
            uint64_t got = o[i * NC + k];
            bool ok;
            if ((k >= 20 && k <= 30) || (k >= 35 && k <= 38) || k == 44 || k == 50 || k == 55) ok = same32((uint32_t)got, (uint32_t)w[k]) && got >> 32 == 0;
            else if ((k >= 31 && k <= 34) || k == 39) ok = same64(got, w[k]);
            else if ((k >= 40 && k <= 43) || k == 45 || k == 51) ok = same16((uint32_t)got, (uint32_t)w[k], false) && got >> 16 == 0;
            else if ((k >= 46 && k <= 49) || k == 53) ok = same16((uint32_t)got, (uint32_t)w[k], true) && got >> 16 == 0;
            else ok = got == w[k];
            cr_assert(ok, "[%s] cvt_ops result %d for f32 %a (%#x), f64 %a, int %lld: got %#llx, want %#llx", c->name, k, x, f2u(x),
                      d, (long long)v, (unsigned long long)got, (unsigned long long)w[k]);
        }
    }
    free(a); free(b); free(l); free(o);
}

static const uint16_t specialh[] = {0x0000, 0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0x0001, 0x8001, 0x0400,
                                    0x03FF, 0x7BFF, 0xFBFF, 0x3800, 0x3E00, 0x4100, 0x3555, 0x5BFF, 0x1400, 0x3BFF};

static void check_half(Conf *c, Rng *rng) {
    const size_t ns = ARRAY_LEN(specialh), n = ns * ns + 3000;
    uint32_t *a = malloc(n * 4), *b = malloc(n * 4), *cc = malloc(n * 4), *o = malloc(n * NH * 4);
    for (size_t i = 0; i < n; i++) {
        uint32_t x = i < ns * ns ? specialh[i / ns] : (uint16_t)rng_next(rng), y = i < ns * ns ? specialh[i % ns] : (uint16_t)rng_next(rng);
        if (i >= ns * ns && i % 2) { /* values in a common range: products and sums neither overflow nor flush */
            x = to_f16(rng_uniform(rng, -8, 8), RN);
            y = to_f16(rng_uniform(rng, -8, 8), RN);
        }
        a[i] = x | (uint32_t)(uint16_t)rng_next(rng) << 16;
        b[i] = y | (uint32_t)(uint16_t)rng_next(rng) << 16;
        cc[i] = (uint32_t)rng_next(rng);
        if (i % 3 == 0) cc[i] = to_f16(rng_uniform(rng, -8, 8), RN) | to_f16(rng_uniform(rng, -8, 8), RN) << 16;
    }
    tile_devptr da = dev_in(c, a, n * 4), db = dev_in(c, b, n * 4), dc = dev_in(c, cc, n * 4), dout = dev_in(c, NULL, n * NH * 4);
    int nn = (int)n;
    run(c, "half_ops", (unsigned)(n + 127) / 128, 128, 0, (void *[]){&da, &db, &dc, &dout, &nn});
    dev_out(c, o, dout, n * NH * 4);
    for (size_t i = 0; i < n; i++) {
        uint32_t w[NH];
        double x = from_f16(a[i] & 0xFFFF), y = from_f16(b[i] & 0xFFFF), z = from_f16(cc[i] & 0xFFFF);
        double xb = from_bf16(a[i]), yb = from_bf16(b[i]), zb = from_bf16(cc[i]);
        w[0] = to_f16(x + y, RN);
        w[1] = to_f16(x - y, RN);
        w[2] = to_f16(x * y, RN);
        w[3] = to_f16(fma_odd(x, y, z), RN);
        w[4] = to_f16(ref_minmax(x, y, true), RN);
        w[5] = to_f16(ref_minmax(x, y, false), RN);
        w[6] = (a[i] & 0xFFFF) ^ 0x8000;
        w[7] = a[i] & 0x7FFF;
        w[8] = x < y;
        double sat = x + y;
        w[9] = to_f16(!(sat > 0) ? 0 : sat > 1 ? 1 : sat, RN); /* NaN and -0 give +0 (seen on an H200: -0 + -0 is +0) */
        uint32_t lanes[3] = {0, 0, 0};
        for (int h = 0; h < 2; h++) {
            double p = from_f16((a[i] >> (16 * h)) & 0xFFFF), q = from_f16((b[i] >> (16 * h)) & 0xFFFF),
                   r = from_f16((cc[i] >> (16 * h)) & 0xFFFF);
            lanes[0] |= to_f16(p + q, RN) << (16 * h);
            lanes[1] |= to_f16(p * q, RN) << (16 * h);
            lanes[2] |= to_f16(fma_odd(p, q, r), RN) << (16 * h);
        }
        w[10] = lanes[0], w[11] = lanes[1], w[12] = lanes[2];
        w[13] = to_bf16(xb + yb, RN);
        w[14] = to_bf16(xb - yb, RN);
        w[15] = to_bf16(xb * yb, RN);
        w[16] = to_bf16(fma_odd(xb, yb, zb), RN);
        w[17] = to_bf16(ref_minmax(xb, yb, true), RN);
        uint32_t bl[2] = {0, 0};
        for (int h = 0; h < 2; h++) {
            double p = from_bf16(a[i] >> (16 * h)), q = from_bf16(b[i] >> (16 * h)), r = from_bf16(cc[i] >> (16 * h));
            bl[0] |= to_bf16(p + q, RN) << (16 * h);
            bl[1] |= to_bf16(fma_odd(p, q, r), RN) << (16 * h);
        }
        w[18] = bl[0], w[19] = bl[1];
        w[20] = to_f16(x * 0.5, RN);
        w[21] = to_f16(x / y, RN);
        for (int k = 0; k < NH; k++) {
            uint32_t got = o[i * NH + k];
            bool bf = k >= 13 && k <= 19, packed = k == 10 || k == 11 || k == 12 || k == 18 || k == 19;
            bool ok = packed ? same16(got, w[k], bf) && same16(got >> 16, w[k] >> 16, bf)
                    : k == 8 ? got == w[k] : same16(got, w[k], bf) && got >> 16 == 0;
            if ((k == 6 || k == 7) && isnan(x)) ok = isnan(from_f16(got));
            cr_assert(ok, "[%s] half_ops result %d for a=%#x b=%#x c=%#x: got %#x, want %#x", c->name, k, a[i], b[i], cc[i], got, w[k]);
        }
    }
    free(a); free(b); free(cc); free(o);
}

/* half_more: each half of a packed result, or the low one; NaNs as NaNs (the NaN-propagating forms give one) */
enum { NHM = 16 };
static double h_of(uint32_t w, int h, bool bf) { return bf ? from_bf16(w >> (16 * h)) : from_f16((w >> (16 * h)) & 0xFFFF); }
static uint32_t h_to(double v, bool bf) { return bf ? to_bf16(v, RN) : to_f16(v, RN); }
static double relu_ref(double v) { return isnan(v) ? v : signbit(v) ? 0.0 : v; }
static double sat_ref(double v) { return !(v > 0) ? 0.0 : v > 1 ? 1.0 : v; } /* NaN and -0 give +0 */
static double maxnan_ref(double x, double y, bool mx) { return isnan(x) || isnan(y) ? NAN : ref_minmax(x, y, mx); }

static void check_half_more(Conf *c, Rng *rng) {
    const size_t ns = ARRAY_LEN(specialh), n = ns * ns + 1500;
    uint32_t *a = malloc(n * 4), *b = malloc(n * 4), *cc = malloc(n * 4), *o = malloc(n * NHM * 4);
    for (size_t i = 0; i < n; i++) {
        uint32_t x = i < ns * ns ? specialh[i / ns] : to_f16(rng_uniform(rng, -4, 4), RN);
        uint32_t y = i < ns * ns ? specialh[i % ns] : to_f16(rng_uniform(rng, -4, 4), RN);
        uint32_t hi = i % 4 ? (uint32_t)to_f16(rng_uniform(rng, -3, 3), RN) : (uint16_t)rng_next(rng);
        a[i] = x | hi << 16;
        b[i] = y | (i % 5 ? hi ^ (uint32_t)(rng_next(rng) & 3) : (uint16_t)rng_next(rng)) << 16; /* equal-ish pairs too */
        cc[i] = (uint32_t)to_f16(rng_uniform(rng, -4, 4), RN) | (uint32_t)to_f16(rng_uniform(rng, -4, 4), RN) << 16;
        if (i % 7 == 0) cc[i] = a[i]; /* the comparisons' equal case */
    }
    tile_devptr da = dev_in(c, a, n * 4), db = dev_in(c, b, n * 4), dc = dev_in(c, cc, n * 4), dout = dev_in(c, NULL, n * NHM * 4);
    int nn = (int)n;
    run(c, "half_more", (unsigned)(n + 127) / 128, 128, 0, (void *[]){&da, &db, &dc, &dout, &nn});
    dev_out(c, o, dout, n * NHM * 4);
    for (size_t i = 0; i < n; i++) {
        uint32_t w[NHM] = {0};
        double x = from_f16(a[i] & 0xFFFF), y = from_f16(b[i] & 0xFFFF), z = from_f16(cc[i] & 0xFFFF);
        bool packed[NHM] = {[0] = true, [1] = true, [10] = true, [11] = true, [12] = true, [13] = true, [14] = true, [15] = true};
        bool bf[NHM] = {[13] = true, [15] = true};
        bool all[5] = {true, true, true, true, true};
        for (int h = 0; h < 2; h++) {
            double p = h_of(a[i], h, false), q = h_of(b[i], h, false), r = h_of(cc[i], h, false);
            double pb = h_of(a[i], h, true), qb = h_of(b[i], h, true), rb = h_of(cc[i], h, true);
            bool un = isnan(p) || isnan(q), unc = isnan(p) || isnan(r);
            w[0] |= h_to(maxnan_ref(p, q, true), false) << (16 * h);
            w[1] |= h_to(relu_ref(fma_odd(p, q, r)), false) << (16 * h);
            w[10] |= ((a[i] >> (16 * h)) & 0x7FFF) << (16 * h);
            w[11] |= h_to(sat_ref(p - q), false) << (16 * h);
            w[12] |= h_to((double)u2f(h ? b[i] : a[i]), false) << (16 * h);
            w[13] |= h_to(maxnan_ref(pb, qb, true), true) << (16 * h);
            w[14] |= h_to(p * q, false) << (16 * h);
            w[15] |= h_to(relu_ref(fma_odd(pb, qb, rb)), true) << (16 * h);
            all[0] &= !un && p == q;
            all[1] &= un || p > q;
            all[2] &= !unc && p <= r;
            all[3] &= un || p == q;
            all[4] &= unc || p != r;
        }
        w[2] = to_f16(maxnan_ref(x, y, false), RN);
        w[3] = to_f16(sat_ref(fma_odd(x, y, z)), RN);
        w[4] = to_f16(ceil(x), RN);
        w[5] = to_f16(nearbyint(x), RN);
        w[6] = to_f16(trunc(x), RN);
        w[7] = to_f16(floor(x), RN);
        w[8] = (uint32_t)((isinf(x) ? (x > 0 ? 1 : -1) : 0) + 2) | (uint32_t)!!isnan(y) << 4;
        w[9] = (uint32_t)all[0] | (uint32_t)all[1] << 1 | (uint32_t)all[2] << 2 | (uint32_t)all[3] << 3 | (uint32_t)all[4] << 4;
        for (int k = 0; k < NHM; k++) {
            uint32_t got = o[i * NHM + k];
            bool ok = k == 8 || k == 9 ? got == w[k]
                    : packed[k]       ? same16(got, w[k], bf[k]) && same16(got >> 16, w[k] >> 16, bf[k])
                                      : same16(got, w[k], false) && got >> 16 == 0;
            cr_assert(ok, "[%s] half_more result %d for a=%#x b=%#x c=%#x: got %#x, want %#x", c->name, k, a[i], b[i], cc[i], got, w[k]);
        }
    }
    free(a); free(b); free(cc); free(o);
}

CONFORMANCE(float)
static void check_float(Conf *c) {
    Rng rng = rng_seed(22);
    check_f32(c, &rng);
    check_f64(c, &rng);
    check_cvt(c, &rng);
    check_half(c, &rng);
    check_half_more(c, &rng);
}

/* ==== fp8.cu ====
 * The conversions as CUDA documents them: round to nearest even into E4M3 (bias 7, no infinities,
 * 0x7F/0xFF NaN, largest 448) or E5M2 (bias 15, IEEE-like, largest 57344); a magnitude that rounds
 * past the largest finite value (ties to even: 464 stays 448, 61440 goes up) is the largest finite
 * value with __NV_SATFINITE (infinities too), else NaN for E4M3 and infinity for E5M2. */
static double f8_value(uint32_t code, bool e5) {
    int e = e5 ? (code >> 2) & 31 : (code >> 3) & 15, m = e5 ? code & 3 : code & 7, mb = e5 ? 2 : 3, bias = e5 ? 15 : 7;
    double v = e == 0 ? ldexp(m, 1 - bias - mb) : ldexp(m + (1 << mb), e - bias - mb);
    if (e5 && e == 31) v = m ? NAN : INFINITY;
    if (!e5 && e == 15 && m == 7) v = NAN;
    return (code & 0x80) ? -v : v;
}
static bool f8_nan(uint32_t code, bool e5) { return isnan(f8_value(code & 0xFF, e5)); }
static uint32_t ref_f8(double x, bool e5, bool sat) {
    uint32_t sign = signbit(x) ? 0x80 : 0, top = e5 ? 0x7B : 0x7E; /* the largest finite code */
    if (isnan(x)) return 0x7F;
    double a = fabs(x), maxv = f8_value(top, e5), ulp = maxv - f8_value(top - 1, e5);
    bool over = isinf(a) || a > maxv + ulp / 2 || (a == maxv + ulp / 2 && (top & 1));
    if (over) return sign | (sat ? top : e5 ? 0x7C : 0x7F);
    uint32_t best = 0;
    for (uint32_t c = 1; c <= top; c++) { /* values grow with the code: the nearest, ties to the even code */
        double d = fabs(f8_value(c, e5) - a), db = fabs(f8_value(best, e5) - a);
        if (d < db || (d == db && !(c & 1))) best = c;
    }
    return sign | best;
}
enum { NO8 = 14, N8 = 2048 };
/* x to a format of e exponent and m mantissa bits with the bias, no infinities or NaNs (FP4 E2M1, FP6 E2M3/E3M2):
 * nearest, ties to the even code, saturating at the largest value; the value of the result */
static double ref_small_float(double x, int e, int m, int bias) {
    double top = ldexp(2 - 1.0 / (1 << m), (1 << e) - 1 - bias), best = 0, bd = INFINITY, a = fmin(fabs(x), top);
    for (int code = 0; code < 1 << (e + m); code++) {
        int ex = code >> m, mant = code & ((1 << m) - 1);
        double v = ex ? ldexp(1 + (double)mant / (1 << m), ex - bias) : ldexp((double)mant / (1 << m), 1 - bias);
        double d = fabs(v - a);
        if (d < bd || (d == bd && !(code & 1))) best = v, bd = d; /* codes ascend: a tie keeps the even one */
    }
    return signbit(x) ? -best : best;
}

CONFORMANCE(fp8)
static void check_fp8(Conf *c) {
    Rng rng = rng_seed(88);
    static float x[N8], y[N8];
    static uint32_t h2[N8], b2[N8], o[N8 * NO8];
    static uint16_t q[N8];
    /* specials, values at and between the formats' steps (ties), near the largest values, subnormals, then
     * log-uniform magnitudes of both signs */
    static const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 448.0f, 464.0f, 464.0001f, 465.0f, 480.0f, 57344.0f,
                                    61439.9f, 61440.0f, 65536.0f, 1.0625f, 1.1875f, 0x1p-9f, 0x1p-10f, 0x1.8p-10f, 0x1p-16f, 0x1p-17f,
                                    0x1.8p-17f, 1e-30f, 3.0e38f};
    int ns = (int)(sizeof special / sizeof *special);
    for (int i = 0; i < N8; i++) {
        double mag = ldexp(1.0, (int)(rng_next(&rng) % 44) - 22) * rng_uniform(&rng, 1, 2);
        x[i] = i < ns ? special[i] : i < 2 * ns ? -special[i - ns] : (float)((rng_next(&rng) & 1) ? -mag : mag);
        if (i >= 2 * ns && i % 5 == 0) { /* exactly between two E4M3 or E5M2 neighbours: a tie */
            bool e5 = i % 10 == 0;
            uint32_t cd = (uint32_t)(rng_next(&rng) % (e5 ? 0x7B : 0x7E));
            x[i] = (float)((f8_value(cd, e5) + f8_value(cd + 1, e5)) / 2);
        }
        y[i] = i < ns ? special[(i + 7) % ns] : (float)(rng_uniform(&rng, -70000, 70000) * ldexp(1.0, -(int)(rng_next(&rng) % 24)));
        h2[i] = (uint32_t)rng_next(&rng);
        b2[i] = (uint32_t)rng_next(&rng);
        q[i] = (uint16_t)rng_next(&rng);
    }
    tile_devptr dx = dev_in(c, x, sizeof x), dy = dev_in(c, y, sizeof y), dh = dev_in(c, h2, sizeof h2), db = dev_in(c, b2, sizeof b2);
    tile_devptr dq = dev_in(c, q, sizeof q), dout = dev_in(c, NULL, sizeof o);
    int n = N8;
    run(c, "fp8_cvt", N8 / 128, 128, 0, (void *[]){&dx, &dy, &dh, &db, &dq, &dout, &n});
    dev_out(c, o, dout, sizeof o);
    for (int i = 0; i < N8; i++) {
        const uint32_t *g = o + (size_t)i * NO8;
        double hx = from_f16(h2[i] & 0xFFFF), hy = from_f16(h2[i] >> 16), bx = from_bf16(b2[i] & 0xFFFF), by = from_bf16(b2[i] >> 16);
        /* (result, low input, high input or NAN for one byte, E5M2, saturating) */
        const struct { double lo, hi; bool pair, e5, sat; } want[10] = {
            {x[i], 0, false, false, true}, {x[i], 0, false, false, false}, {x[i], 0, false, true, true}, {x[i], 0, false, true, false},
            {x[i], y[i], true, false, true}, {x[i], y[i], true, true, true}, {hx, hy, true, false, true}, {hx, hy, true, true, true},
            {bx, by, true, false, true}, {bx, by, true, true, true}};
        for (int k = 0; k < 10; k++) {
            uint32_t w = ref_f8(want[k].lo, want[k].e5, want[k].sat) | (want[k].pair ? ref_f8(want[k].hi, want[k].e5, want[k].sat) << 8 : 0);
            uint32_t got = g[k];
            bool ok = (got >> (want[k].pair ? 16 : 8)) == 0;
            for (int byte = 0; byte < (want[k].pair ? 2 : 1) && ok; byte++) {
                uint32_t gb = got >> (8 * byte) & 0xFF, wb = w >> (8 * byte) & 0xFF;
                ok = f8_nan(wb, want[k].e5) ? f8_nan(gb, want[k].e5) : gb == wb;
            }
            cr_assert(ok, "[%s] fp8 result %d for %a, %a: got %#x, want %#x", c->name, k, want[k].lo, want[k].hi, got, w);
        }
        for (int k = 0; k < 2; k++) { /* FP8 pairs to half2: exact */
            bool e5 = k == 1;
            for (int h = 0; h < 2; h++) {
                uint32_t code = q[i] >> (8 * h) & 0xFF, got = g[10 + k] >> (16 * h) & 0xFFFF;
                double v = f8_value(code, e5);
                bool ok = isnan(v) ? isnan(from_f16(got)) : got == to_f16(v, RN);
                cr_assert(ok, "[%s] fp8x2 %s %#x half %d: got %#x, want %g", c->name, e5 ? "e5m2" : "e4m3", q[i], h, got, v);
            }
        }
        for (int k = 0; k < 2; k++) { /* the types: saturating conversions, back to float exactly */
            bool e5 = k == 1;
            double in = e5 ? y[i] : x[i], v = f8_value(ref_f8(in, e5, true), e5);
            float got = u2f(g[12 + k]);
            cr_assert(isnan(v) ? isnan(got) : got == (float)v, "[%s] __nv_fp8_%s(%a): got %a, want %a", c->name, e5 ? "e5m2" : "e4m3", in,
                      got, v);
        }
    }
    /* FP4 / FP6 of the finite inputs above */
    static float o46[N8][3];
    tile_devptr d46 = dev_in(c, NULL, sizeof o46);
    run(c, "fp46_cvt", N8 / 128, 128, 0, (void *[]){&dx, &d46, &n});
    dev_out(c, o46, d46, sizeof o46);
    static const struct { const char *name; int e, m, bias; } f46[3] = {{"fp4 e2m1", 2, 1, 1}, {"fp6 e2m3", 2, 3, 1}, {"fp6 e3m2", 3, 2, 3}};
    for (int i = 0; i < N8; i++)
        for (int k = 0; k < 3 && isfinite(x[i]); k++) {
            double want = ref_small_float(x[i], f46[k].e, f46[k].m, f46[k].bias);
            cr_assert_eq(o46[i][k], (float)want, "[%s] %s(%a): got %a, want %a", c->name, f46[k].name, x[i], o46[i][k], want);
        }
}

/* ==== math.cu ====
 * Maximum ulp errors, CUDA C++ Programming Guide, "Mathematical Functions"
 * (single and double precision, full range).  The reference is the host's
 * libm in double (for f32) or long double (for f64) precision; the error of
 * a result is |got - reference| in units of the last place of the
 * reference, and a bound of N ulps (N ulps from the correctly rounded
 * result; 0: correctly rounded) allows N + 0.5.  Fast intrinsics: __sinf 2^-21.41 absolute on [-pi, pi],
 * __expf 2 + floor(|1.173 x|) ulp, __logf 2^-21.41 absolute on [0.5, 2],
 * else 3 ulp. */
enum { MF = 26, MD = 12 };
#define FAST_ABS_ERR 3.5801e-7 /* 2^-21.41 */
typedef struct MathFn { const char *name; double ulps; } MathFn;
static const MathFn math_f32_fns[MF] = {
    {"sinf", 2}, {"cosf", 2}, {"tanf", 4}, {"expf", 2}, {"exp2f", 2}, {"exp10f", 2}, {"logf", 1}, {"log2f", 1},
    {"log10f", 2}, {"powf", 4}, {"erff", 2}, {"erfcf", 4}, {"sqrtf", 0}, {"rsqrtf", 2}, {"cbrtf", 1}, {"atanf", 2},
    {"atan2f", 3}, {"sinhf", 3}, {"tanhf", 2}, {"asinf", 2}, {"acosf", 2}, {"expm1f", 1}, {"log1pf", 1},
    {"__sinf", -1}, {"__expf", -1}, {"__logf", -1}, /* bounds computed per input */
};
static const MathFn math_f64_fns[MD] = {
    {"sin", 2}, {"cos", 2}, {"tan", 2}, {"exp", 1}, {"log", 1}, {"pow", 2}, {"erf", 2}, {"sqrt", 0},
    {"atan2", 2}, {"tanh", 1}, {"cbrt", 1}, {"log1p", 1},
};

static double ref_f32_fn(int k, double x, double y) {
    switch (k) {
    case 0: case 23: return sin(x);
    case 1: return cos(x);
    case 2: return tan(x);
    case 3: case 24: return exp(x);
    case 4: return exp2(x);
    case 5: return pow(10.0, x);
    case 6: case 25: return log(x);
    case 7: return log2(x);
    case 8: return log10(x);
    case 9: return pow(x, y);
    case 10: return erf(x);
    case 11: return erfc(x);
    case 12: return sqrt(x);
    case 13: return 1.0 / sqrt(x);
    case 14: return cbrt(x);
    case 15: return atan(x);
    case 16: return atan2(x, y);
    case 17: return sinh(x);
    case 18: return tanh(x);
    case 19: return asin(x);
    case 20: return acos(x);
    case 21: return expm1(x);
    default: return log1p(x);
    }
}
static long double ref_f64_fn(int k, long double x, long double y) {
    switch (k) {
    case 0: return sinl(x);
    case 1: return cosl(x);
    case 2: return tanl(x);
    case 3: return expl(x);
    case 4: return logl(x);
    case 5: return powl(x, y);
    case 6: return erfl(x);
    case 7: return sqrtl(x);
    case 8: return atan2l(x, y);
    case 9: return tanhl(x);
    case 10: return cbrtl(x);
    default: return log1pl(x);
    }
}

/* |got - ref| in ulps of ref in a format with `man` fraction bits and minimum exponent emin. */
static double ulp_error(long double got, long double ref, int man, int emin) {
    if (isnan(ref) || isnan(got)) return isnan(ref) && isnan(got) ? 0 : INFINITY;
    if (isinf(ref) || isinf(got)) return got == ref ? 0 : INFINITY;
    int e;
    frexpl(ref, &e);
    e -= 1;
    if (e < emin) e = emin;
    return (double)(fabsl(got - ref) / ldexpl(1.0L, e - man));
}

static const float specialm[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 2.0f, 10.0f, -10.0f, 3.14159265f, 1e-8f, 1e-40f, 88.0f,
                                 -87.0f, 100.0f, -104.0f, 1e5f, 123456.7f, -1e10f, 1e30f, 0.9999f, -0.9999f, 1.0001f, 4.0f,
                                 INFINITY, -INFINITY, NAN, 0.7853982f, 1.5707964f, 38.5f, -38.5f};

CONFORMANCE(math)
static void check_math(Conf *c) {
    Rng rng = rng_seed(33);
    const size_t ns = ARRAY_LEN(specialm), n = ns * 4 + 1500;
    float *a = malloc(n * 4), *b = malloc(n * 4), *o = malloc(n * MF * 4);
    for (size_t i = 0; i < n; i++) {
        if (i < ns * 4) {
            a[i] = specialm[i / 4];
            static const float ys[4] = {2.0f, -0.5f, 3.0f, 0.33f};
            b[i] = ys[i % 4];
            continue;
        }
        switch (i % 4) {
        case 0: a[i] = (float)rng_uniform(&rng, -10, 10); break;
        case 1: a[i] = (float)ldexp(rng_uniform(&rng, 0.5, 1), (int)(rng_next(&rng) % 60) - 30); break;
        case 2: a[i] = (float)rng_uniform(&rng, -1.1, 1.1); break;
        default: a[i] = (float)rng_uniform(&rng, -90, 90); break;
        }
        b[i] = i % 3 ? (float)rng_uniform(&rng, -8, 8) : (float)(int)rng_uniform(&rng, -6, 6);
    }
    tile_devptr da = dev_in(c, a, n * 4), db = dev_in(c, b, n * 4), dout = dev_in(c, NULL, n * MF * 4);
    int nn = (int)n;
    run(c, "math_f32", (unsigned)(n + 127) / 128, 128, 0, (void *[]){&da, &db, &dout, &nn});
    dev_out(c, o, dout, n * MF * 4);
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < MF; k++) {
            double x = a[i], y = b[i], got = o[i * MF + k], ref = ref_f32_fn(k, x, y);
            if (fabs(ref) >= 0x1.ffffffp127) ref = copysign(INFINITY, ref); /* overflows f32 */
            double err = ulp_error(got, ref, 23, -126);
            double bound = math_f32_fns[k].ulps + 0.5;
            bool ok = err <= bound;
            if (k == 23) /* __sinf */
                ok = !isfinite(x) ? isnan(got) : fabs(x) <= 3.14159265 ? fabs(got - ref) <= FAST_ABS_ERR : isfinite(got);
            if (k == 24) /* __expf */
                ok = isnan(x) ? isnan(got) : err <= 2.5 + floor(fabs(1.173 * x)) || (ref < 0x1p-126 && got < 0x1p-125);
            if (k == 25) /* __logf */
                ok = isnan(x) || x < 0 ? isnan(got) : x >= 0.5 && x <= 2 ? fabs(got - ref) <= FAST_ABS_ERR : err <= 3.5;
            cr_assert(ok, "[%s] %s(%a%s%a) = %a, reference %a: %.2f ulp (at most %g)", c->name, math_f32_fns[k].name, x,
                      k == 9 || k == 16 ? ", " : " /", y, got, ref, err, bound);
        }
    free(a); free(b); free(o);

    const size_t nd = ns * 4 + 1000;
    double *ad = malloc(nd * 8), *bd = malloc(nd * 8), *od = malloc(nd * MD * 8);
    for (size_t i = 0; i < nd; i++) {
        if (i < ns * 4) {
            ad[i] = (double)specialm[i / 4];
            static const double ys[4] = {2.0, -0.5, 3.0, 0.33};
            bd[i] = ys[i % 4];
            continue;
        }
        switch (i % 4) {
        case 0: ad[i] = rng_uniform(&rng, -10, 10); break;
        case 1: ad[i] = ldexp(rng_uniform(&rng, 0.5, 1), (int)(rng_next(&rng) % 200) - 100); break;
        case 2: ad[i] = rng_uniform(&rng, -1.1, 1.1); break;
        default: ad[i] = rng_uniform(&rng, -700, 700); break;
        }
        bd[i] = i % 3 ? rng_uniform(&rng, -8, 8) : (double)(int)rng_uniform(&rng, -6, 6);
    }
    tile_devptr dad = dev_in(c, ad, nd * 8), dbd = dev_in(c, bd, nd * 8), doutd = dev_in(c, NULL, nd * MD * 8);
    nn = (int)nd;
    run(c, "math_f64", (unsigned)(nd + 127) / 128, 128, 0, (void *[]){&dad, &dbd, &doutd, &nn});
    dev_out(c, od, doutd, nd * MD * 8);
    for (size_t i = 0; i < nd; i++)
        for (int k = 0; k < MD; k++) {
            long double x = ad[i], y = bd[i], ref = ref_f64_fn(k, x, y);
            if (fabsl(ref) >= 0x1.fffffffffffff8p1023L) ref = copysignl(INFINITY, ref); /* overflows f64 */
            double got = od[i * MD + k], err = ulp_error(got, ref, 52, -1022);
            cr_assert(err <= math_f64_fns[k].ulps + 0.5, "[%s] %s(%a%s%a) = %a, reference %La: %.2f ulp (at most %g + 0.5)",
                      c->name, math_f64_fns[k].name, (double)x, k == 5 || k == 8 ? ", " : " /", (double)y, got, ref, err,
                      math_f64_fns[k].ulps);
        }
    free(ad); free(bd); free(od);
}

/* ==== warp.cu ==== */
enum { NW = 32 };

static void ref_warp(const int32_t *v, int32_t o[32][NW]) {
    uint32_t ballot1 = 0, ballot7 = 0, ball2lo = 0;
    int64_t sum = 0;
    int32_t mn = v[0], mx = v[0];
    uint32_t andv = ~0u, orv = 0, xorv = 0, umax = 0;
    bool all1 = true, allbig = true, same8 = true;
    for (int l = 0; l < 32; l++) {
        ballot1 |= (uint32_t)(v[l] & 1) << l;
        ballot7 |= (uint32_t)(v[l] == 7) << l;
        if (l < 16) ball2lo |= (uint32_t)((v[l] & 2) != 0) << l;
        sum += (uint32_t)v[l];
        mn = v[l] < mn ? v[l] : mn;
        mx = v[l] > mx ? v[l] : mx;
        andv &= (uint32_t)v[l] | 0x100;
        orv |= (uint32_t)v[l] & 0xF0F;
        xorv ^= (uint32_t)v[l];
        umax = (uint32_t)v[l] > umax ? (uint32_t)v[l] : umax;
        all1 = all1 && (v[l] & 1);
        allbig = allbig && v[l] > -1000;
        same8 = same8 && (v[l] >> 8) == (v[0] >> 8);
    }
    for (int l = 0; l < 32; l++) {
        int32_t *r = o[l];
        r[0] = v[(l * 7 + 3) & 31];
        r[1] = l >= 3 ? v[l - 3] : v[l];
        r[2] = l + 5 <= 31 ? v[l + 5] : v[l];
        r[3] = v[l ^ 9];
        r[4] = v[(l & ~7) | 2];
        r[5] = (l % 16) >= 1 ? v[l - 1] : v[l];
        r[6] = (l % 4) + 3 < 4 ? v[l + 3] : v[l];
        r[7] = v[l ^ 1];
        r[8] = (int32_t)f2u((float)v[l ^ 31] * 0.5f);
        int32_t dn = v[l < 31 ? l + 1 : l];
        r[9] = (int32_t)((uint32_t)dn * 3u);
        r[10] = dn;
        r[11] = (int32_t)ref_f2i(((double)v[l ^ 16] + 0.25) * 4, RZ, -0x1p31, 0x1p31 - 1, false); /* cvt saturates */
        r[12] = (int32_t)ballot1;
        r[13] = allbig;
        r[14] = ballot7 != 0;
        r[15] = all1;
        r[16] = l < 20 ? 0x000FFFFF : 0;
        uint32_t m3 = 0, m1 = 0, m5 = 0;
        for (int j = 0; j < 32; j++) {
            m3 |= (uint32_t)((v[j] & 3) == (v[l] & 3)) << j;
            m1 |= (uint32_t)((v[j] & 1) == (v[l] & 1)) << j;
            m5 |= (uint32_t)((v[j] % 5) == (v[l] % 5)) << j;
        }
        r[17] = (int32_t)m3;
        r[18] = same8 ? -1 : 0;
        r[19] = same8;
        r[20] = (int32_t)(uint32_t)sum;
        r[21] = mn;
        r[22] = mx;
        r[23] = (int32_t)andv;
        r[24] = (int32_t)orv;
        r[25] = (int32_t)xorv;
        r[26] = (int32_t)umax;
        r[27] = l < 16 ? (int32_t)ball2lo : -1;
        r[28] = l >= 16 ? v[31] : -1;
        r[29] = (int32_t)m1;
        r[30] = __builtin_popcount(m5);
        r[31] = 32;
    }
}

/* warp_activemask_after_halves: lanes that shuffled in two halves are one path again at __activemask */
static void activemask_after_halves(Conf *c, const int32_t *in, int nt) {
    int32_t *out = malloc(sizeof(int32_t) * 2 * (size_t)nt);
    cr_assert(out);
    tile_devptr din = dev_in(c, in, sizeof(int32_t) * (size_t)nt), dout = dev_in(c, NULL, sizeof(int32_t) * 2 * (size_t)nt);
    run(c, "warp_activemask_after_halves", (unsigned)nt / 64, 64, 0, (void *[]){&din, &dout});
    dev_out(c, out, dout, sizeof(int32_t) * 2 * (size_t)nt);
    for (int t = 0; t < nt; t++) {
        int l = t % 32;
        int32_t want_m = l & 1 ? (int32_t)0xaaaaaaaau : -1, want_r = 32 * 1000 + (int32_t)(((uint32_t)in[t] + (uint32_t)in[t ^ 1]) & 0xff);
        cr_assert_eq(out[2 * t], want_m, "[%s] lane %d: activemask %#x, want %#x", c->name, l, (unsigned)out[2 * t], (unsigned)want_m);
        cr_assert_eq(out[2 * t + 1], want_r, "[%s] lane %d: %d, want %d", c->name, l, out[2 * t + 1], want_r);
    }
    free(out);
}

CONFORMANCE(warp)
Test(warp, sm_90a_O3_rdc_lineinfo) { warp_run(&V90RL); } /* separate compilation, .loc lines */
static void check_warp(Conf *c) {
    enum { NT = 128 };
    Rng rng = rng_seed(44);
    int32_t in[NT], out[NT][NW];
    for (int t = 0; t < NT; t++) {
        int l = t & 31;
        switch (t / 32) {
        case 0: in[t] = (l * 37 + 11) % 200; break;
        case 1: in[t] = l * 1000 - 15000; break;
        case 2: in[t] = (int32_t)rng_next(&rng); break;
        default: in[t] = l % 3 == 0 ? 7 : -l; break;
        }
    }
    tile_devptr din = dev_in(c, in, sizeof in), dout = dev_in(c, NULL, sizeof out);
    run(c, "warp_ops", NT / 64, 64, 0, (void *[]){&din, &dout});
    dev_out(c, out, dout, sizeof out);
    for (int w = 0; w < NT / 32; w++) {
        int32_t want[32][NW];
        ref_warp(in + 32 * w, want);
        for (int l = 0; l < 32; l++)
            for (int k = 0; k < NW; k++)
                cr_assert_eq(out[32 * w + l][k], want[l][k], "[%s] warp %d lane %d result %d: got %#x, want %#x", c->name, w, l,
                             k, (unsigned)out[32 * w + l][k], (unsigned)want[l][k]);
    }
    /* warp_tiles: shuffles over 8-, 16- and 4-lane masks in a row */
    int32_t tout[NT];
    tile_devptr dt = dev_in(c, NULL, sizeof tout);
    run(c, "warp_tiles", NT / 64, 64, 0, (void *[]){&din, &dt});
    dev_out(c, tout, dt, sizeof tout);
    for (int w = 0; w < NT / 32; w++) {
        uint32_t v[32], u[32];
        for (int l = 0; l < 32; l++) v[l] = (uint32_t)in[32 * w + l];
        for (int l = 0; l < 32; l++) u[l] = v[l] + v[l ^ 1];
        for (int l = 0; l < 32; l++) v[l] = u[l] + 100u * u[l ^ 8];
        for (int d = 1; d < 16; d *= 2) {
            for (int l = 0; l < 32; l++) u[l] = (l & 15) >= d ? v[l - d] : v[l];
            for (int l = 0; l < 32; l++) v[l] += (l & 15) >= d ? u[l] : 0;
        }
        for (int d = 2; d > 0; d /= 2) {
            for (int l = 0; l < 32; l++) u[l] = (l & 3) + d < 4 ? v[l + d] : v[l];
            for (int l = 0; l < 32; l++) v[l] += u[l] * 3u;
        }
        for (int l = 0; l < 32; l++)
            cr_assert_eq((uint32_t)tout[32 * w + l], v[l], "[%s] warp_tiles: warp %d lane %d: got %#x, want %#x", c->name, w, l,
                         (unsigned)tout[32 * w + l], v[l]);
    }
    activemask_after_halves(c, in, NT);
}

/* ==== atomics.cu ==== */
typedef struct Counters {
    int32_t i32[8];
    uint32_t u32[4];
    uint64_t u64[4];
    int64_t s64[2];
    float f32[2];
    double f64[2];
    uint32_t h2;
    uint16_t u16, pad;
} Counters;

CONFORMANCE(atomics)
static void check_atomics(Conf *c) {
    enum { BLOCKS = 6, BS = 96, NT = BLOCKS * BS };
    Counters init = {.i32 = {0, INT32_MAX, INT32_MIN, -1, 0, 0, -1, 0}, .u32 = {0, 0, 0, 0},
                     .u64 = {0, UINT64_MAX, 0, 0}, .s64 = {INT64_MAX, INT64_MIN}};
    tile_devptr dc = dev_in(c, &init, sizeof init), dex = dev_in(c, NULL, NT * 4), dcas = dev_in(c, NULL, NT * 4),
                dsh = dev_in(c, NULL, BLOCKS * 6 * 4);
    run(c, "atomics", BLOCKS, BS, 0, (void *[]){&dc, &dex, &dcas, &dsh});
    Counters got;
    int32_t ex[NT], cas[NT], sh[BLOCKS][6];
    dev_out(c, &got, dc, sizeof got);
    dev_out(c, ex, dex, sizeof ex);
    dev_out(c, cas, dcas, sizeof cas);
    dev_out(c, sh, dsh, sizeof sh);
    Counters w = init;
    uint32_t inc = 0, dec = 0;
    for (int t = 0; t < NT; t++) {
        int32_t v = (int32_t)(((int64_t)t * 7919) % 1000) - 500;
        w.i32[0] += v;
        w.i32[1] = v < w.i32[1] ? v : w.i32[1];
        w.i32[2] = v > w.i32[2] ? v : w.i32[2];
        w.i32[3] &= ~(1 << (t % 31));
        w.i32[4] |= 1 << (t % 29);
        w.i32[5] ^= (int32_t)((uint32_t)t * 0x9E3779B1u);
        inc = inc >= 99 ? 0 : inc + 1;
        dec = (dec == 0 || dec > 1000) ? 1000 : dec - 1;
        w.u32[2] += 3;
        w.u32[3] += 5;
        w.u64[0] += (uint64_t)t << 33;
        uint64_t m = 0x100000000ull + (uint64_t)((t * 31) % 97);
        w.u64[1] = m < w.u64[1] ? m : w.u64[1];
        w.u64[2] = (uint64_t)t * 0x10000000000ull > w.u64[2] ? (uint64_t)t * 0x10000000000ull : w.u64[2];
        w.u64[3] += 2;
        int64_t sv = (int64_t)v * 1000000000ll;
        w.s64[0] = sv < w.s64[0] ? sv : w.s64[0];
        w.s64[1] = sv > w.s64[1] ? sv : w.s64[1];
        w.f32[0] += 0.5f;
        w.f32[1] += (float)(t % 4);
        w.f64[0] += 0.25;
        w.f64[1] += t;
    }
    w.u32[0] = inc;
    w.u32[1] = dec;
    for (int k = 0; k < 6; k++) cr_assert_eq(got.i32[k], w.i32[k], "[%s] i32 counter %d: got %d, want %d", c->name, k, got.i32[k], w.i32[k]);
    cr_assert_eq(got.i32[7], NT, "[%s] CAS increments: %d", c->name, got.i32[7]);
    for (int k = 0; k < 4; k++) cr_assert_eq(got.u32[k], w.u32[k], "[%s] u32 counter %d: got %u, want %u", c->name, k, got.u32[k], w.u32[k]);
    for (int k = 0; k < 4; k++)
        cr_assert_eq(got.u64[k], w.u64[k], "[%s] u64 counter %d: got %#llx, want %#llx", c->name, k, (unsigned long long)got.u64[k],
                     (unsigned long long)w.u64[k]);
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(got.s64[k], w.s64[k], "[%s] s64 counter %d", c->name, k);
        cr_assert_eq(got.f32[k], w.f32[k], "[%s] f32 sum %d: got %g, want %g", c->name, k, got.f32[k], w.f32[k]);
        cr_assert_eq(got.f64[k], w.f64[k], "[%s] f64 sum %d: got %g, want %g", c->name, k, got.f64[k], w.f64[k]);
    }
    /* f16x2: NT additions of (1, 0.5), exact while the sums are integers/halves below 2048 */
    cr_assert_eq(got.h2, to_f16(NT * 1.0, RN) | to_f16(NT * 0.5, RN) << 16, "[%s] f16x2 sum %#x", c->name, got.h2);
    cr_assert_eq(got.u16, NT, "[%s] 16-bit CAS increments: %u", c->name, got.u16);
    /* exchange: the old values are -1 and every thread id but one (the last to exchange) */
    bool seen[NT + 1] = {0};
    int none = 0;
    for (int t = 0; t < NT; t++) {
        cr_assert(ex[t] >= -1 && ex[t] < NT && !seen[ex[t] + 1], "[%s] exchange handed out %d twice", c->name, ex[t]);
        seen[ex[t] + 1] = true;
    }
    for (int t = 0; t < NT; t++) none += !seen[t + 1];
    cr_assert(seen[0] && none == 1, "[%s] exchange chain broken", c->name);
    bool seen_cas[NT] = {0};
    for (int t = 0; t < NT; t++) {
        cr_assert(cas[t] >= 0 && cas[t] < NT && !seen_cas[cas[t]], "[%s] CAS handed out %d twice", c->name, cas[t]);
        seen_cas[cas[t]] = true;
    }
    for (int bl = 0; bl < BLOCKS; bl++) {
        int32_t mn = INT32_MAX;
        for (int t = bl * BS; t < (bl + 1) * BS; t++) {
            int32_t v = (int32_t)(((int64_t)t * 7919) % 1000) - 500;
            mn = v < mn ? v : mn;
        }
        cr_assert_eq(sh[bl][0], BS, "[%s] shared add", c->name);
        cr_assert_eq(sh[bl][1], mn, "[%s] shared min", c->name);
        cr_assert_eq(sh[bl][2], -1, "[%s] shared or", c->name);
        cr_assert(sh[bl][3] > bl * BS && sh[bl][3] <= (bl + 1) * BS, "[%s] shared CAS winner %d", c->name, sh[bl][3]);
        cr_assert_eq((uint32_t)sh[bl][4], (uint32_t)(BS * (BS - 1) / 2), "[%s] shared u64 add", c->name);
        cr_assert_eq(sh[bl][5], 0, "[%s] shared u64 add (high)", c->name);
    }
}

/* ==== wmma.cu ==== */
/* Small integers (exact in every input type and in every sum), two tiles a kernel; each output element
 * against a reference computed here from the tiles as stored (strides, row or column major). */
CONFORMANCE(wmma)
static int small(Rng *r, int range) { return (int)(rng_next(r) % (uint64_t)(2 * range + 1)) - range; }
static void check_wmma(Conf *c) {
    enum { T = 2 };
    Rng rng = rng_seed(99);
    { /* m16n16k16 f16 -> f32: A row (lda 24), B col (ldb 24), C row (ldc 20), D col = 2 (A B + C) + 1 */
        static uint16_t A[T][16 * 24], B[T][16 * 24];
        static float C[T][16 * 20], D[T][256];
        static int ai[T][16][16], bi[T][16][16];
        for (int t = 0; t < T; t++) {
            for (int i = 0; i < 16 * 24; i++) A[t][i] = B[t][i] = 0x7E00; /* NaN in the padding: never read */
            for (int m = 0; m < 16; m++)
                for (int k = 0; k < 16; k++) ai[t][m][k] = small(&rng, 6), A[t][m * 24 + k] = (uint16_t)to_f16(ai[t][m][k], RN);
            for (int k = 0; k < 16; k++)
                for (int n = 0; n < 16; n++) bi[t][k][n] = small(&rng, 6), B[t][n * 24 + k] = (uint16_t)to_f16(bi[t][k][n], RN);
            for (int i = 0; i < 16 * 20; i++) C[t][i] = (float)small(&rng, 100);
        }
        tile_devptr dA = dev_in(c, A, sizeof A), dB = dev_in(c, B, sizeof B), dC = dev_in(c, C, sizeof C), dD = dev_in(c, NULL, sizeof D);
        run(c, "wmma_f16_f32", T, 32, 0, (void *[]){&dA, &dB, &dC, &dD});
        dev_out(c, D, dD, sizeof D);
        for (int t = 0; t < T; t++)
            for (int m = 0; m < 16; m++)
                for (int n = 0; n < 16; n++) {
                    int want = (int)C[t][m * 20 + n];
                    for (int k = 0; k < 16; k++) want += ai[t][m][k] * bi[t][k][n];
                    cr_assert_eq(D[t][n * 16 + m], (float)(2 * want + 1), "[%s] f16->f32 tile %d D[%d][%d]: got %g, want %d", c->name, t,
                                 m, n, D[t][n * 16 + m], 2 * want + 1);
                }
    }
    { /* m32n8k16 f16 -> f16: A col (lda 32), B row (ldb 8), D row = A B + 0.5 */
        static uint16_t A[T][16 * 32], B[T][16 * 8], D[T][32 * 8];
        static int ai[T][32][16], bi[T][16][8];
        for (int t = 0; t < T; t++) {
            for (int m = 0; m < 32; m++)
                for (int k = 0; k < 16; k++) ai[t][m][k] = small(&rng, 3), A[t][k * 32 + m] = (uint16_t)to_f16(ai[t][m][k], RN);
            for (int k = 0; k < 16; k++)
                for (int n = 0; n < 8; n++) bi[t][k][n] = small(&rng, 3), B[t][k * 8 + n] = (uint16_t)to_f16(bi[t][k][n], RN);
        }
        tile_devptr dA = dev_in(c, A, sizeof A), dB = dev_in(c, B, sizeof B), dD = dev_in(c, NULL, sizeof D);
        run(c, "wmma_f16_f16", T, 32, 0, (void *[]){&dA, &dB, &dD});
        dev_out(c, D, dD, sizeof D);
        for (int t = 0; t < T; t++)
            for (int m = 0; m < 32; m++)
                for (int n = 0; n < 8; n++) {
                    int want = 0;
                    for (int k = 0; k < 16; k++) want += ai[t][m][k] * bi[t][k][n];
                    uint32_t w = to_f16(want + 0.5, RN);
                    cr_assert_eq(D[t][m * 8 + n], w, "[%s] f16->f16 tile %d D[%d][%d]: got 0x%04x, want 0x%04x (%g)", c->name, t, m, n,
                                 D[t][m * 8 + n], w, want + 0.5);
                }
    }
    { /* m8n32k16 bf16, K 32 in two steps: A row (lda 40), B row (ldb 40), through shared memory */
        static uint16_t A[T][8 * 40], B[T][32 * 40];
        static float D[T][8 * 32];
        static int ai[T][8][32], bi[T][32][32];
        for (int t = 0; t < T; t++) {
            for (int m = 0; m < 8; m++)
                for (int k = 0; k < 32; k++) ai[t][m][k] = small(&rng, 5), A[t][m * 40 + k] = (uint16_t)to_bf16(ai[t][m][k], RN);
            for (int k = 0; k < 32; k++)
                for (int n = 0; n < 32; n++) bi[t][k][n] = small(&rng, 5), B[t][k * 40 + n] = (uint16_t)to_bf16(bi[t][k][n], RN);
        }
        tile_devptr dA = dev_in(c, A, sizeof A), dB = dev_in(c, B, sizeof B), dD = dev_in(c, NULL, sizeof D);
        run(c, "wmma_bf16", T, 32, 0, (void *[]){&dA, &dB, &dD});
        dev_out(c, D, dD, sizeof D);
        for (int t = 0; t < T; t++)
            for (int m = 0; m < 8; m++)
                for (int n = 0; n < 32; n++) {
                    int want = 0;
                    for (int k = 0; k < 32; k++) want += ai[t][m][k] * bi[t][k][n];
                    cr_assert_eq(D[t][m * 32 + n], (float)want, "[%s] bf16 tile %d D[%d][%d]: got %g, want %d", c->name, t, m, n,
                                 D[t][m * 32 + n], want);
                }
    }
    { /* m16n16k8 tf32: A row (lda 8), B col (ldb 12); inputs with low mantissa bits that tf32 drops */
        static float A[T][16 * 8], B[T][16 * 12], D[T][256];
        static int ai[T][16][8], bi[T][8][16];
        for (int t = 0; t < T; t++) {
            for (int m = 0; m < 16; m++)
                for (int k = 0; k < 8; k++) ai[t][m][k] = small(&rng, 20), A[t][m * 8 + k] = u2f(f2u((float)ai[t][m][k]) | (ai[t][m][k] ? 0x3FF : 0));
            for (int i = 0; i < 16 * 12; i++) B[t][i] = NAN;
            for (int k = 0; k < 8; k++)
                for (int n = 0; n < 16; n++) bi[t][k][n] = small(&rng, 20), B[t][n * 12 + k] = (float)bi[t][k][n];
        }
        tile_devptr dA = dev_in(c, A, sizeof A), dB = dev_in(c, B, sizeof B), dD = dev_in(c, NULL, sizeof D);
        run(c, "wmma_tf32", T, 32, 0, (void *[]){&dA, &dB, &dD});
        dev_out(c, D, dD, sizeof D);
        for (int t = 0; t < T; t++)
            for (int m = 0; m < 16; m++)
                for (int n = 0; n < 16; n++) {
                    int want = 0;
                    for (int k = 0; k < 8; k++) want += ai[t][m][k] * bi[t][k][n];
                    cr_assert_eq(D[t][m * 16 + n], (float)want, "[%s] tf32 tile %d D[%d][%d]: got %g, want %d", c->name, t, m, n,
                                 D[t][m * 16 + n], want);
                }
    }
    { /* m16n16k16 s8, saturating: A row (lda 16), B col (ldb 32), C col (ldc 16), D row */
        static int8_t A[T][256], B[T][16 * 32];
        static int32_t C[T][256], D[T][256];
        for (int t = 0; t < T; t++) {
            for (int i = 0; i < 256; i++) A[t][i] = (int8_t)(rng_next(&rng) & 0xFF);
            for (int i = 0; i < 16 * 32; i++) B[t][i] = (int8_t)(rng_next(&rng) & 0xFF);
            for (int i = 0; i < 256; i++) C[t][i] = (int32_t)(rng_next(&rng) % 2001) - 1000;
            C[t][3] = INT32_MAX - 5, C[t][20] = INT32_MIN + 7; /* saturation both ways */
        }
        tile_devptr dA = dev_in(c, A, sizeof A), dB = dev_in(c, B, sizeof B), dC = dev_in(c, C, sizeof C), dD = dev_in(c, NULL, sizeof D);
        run(c, "wmma_s8", T, 32, 0, (void *[]){&dA, &dB, &dC, &dD});
        dev_out(c, D, dD, sizeof D);
        for (int t = 0; t < T; t++)
            for (int m = 0; m < 16; m++)
                for (int n = 0; n < 16; n++) {
                    int64_t want = C[t][n * 16 + m];
                    for (int k = 0; k < 16; k++) want += A[t][m * 16 + k] * B[t][n * 32 + k];
                    want = want > INT32_MAX ? INT32_MAX : want < INT32_MIN ? INT32_MIN : want;
                    cr_assert_eq(D[t][m * 16 + n], (int32_t)want, "[%s] s8 tile %d D[%d][%d]: got %d, want %lld", c->name, t, m, n,
                                 D[t][m * 16 + n], (long long)want);
                }
    }
    { /* m8n8k4 f64: A row (lda 4), B row (ldb 8), C row (ldc 8) */
        static double A[T][32], B[T][32], C[T][64], D[T][64];
        for (int t = 0; t < T; t++) {
            for (int i = 0; i < 32; i++) A[t][i] = small(&rng, 1000) / 8.0, B[t][i] = small(&rng, 1000) / 16.0;
            for (int i = 0; i < 64; i++) C[t][i] = small(&rng, 100000) / 4.0;
        }
        tile_devptr dA = dev_in(c, A, sizeof A), dB = dev_in(c, B, sizeof B), dC = dev_in(c, C, sizeof C), dD = dev_in(c, NULL, sizeof D);
        run(c, "wmma_f64", T, 32, 0, (void *[]){&dA, &dB, &dC, &dD});
        dev_out(c, D, dD, sizeof D);
        for (int t = 0; t < T; t++)
            for (int m = 0; m < 8; m++)
                for (int n = 0; n < 8; n++) {
                    double want = C[t][m * 8 + n]; /* every product and sum exact in f64 */
                    for (int k = 0; k < 4; k++) want += A[t][m * 4 + k] * B[t][k * 8 + n];
                    cr_assert_eq(D[t][m * 8 + n], want, "[%s] f64 tile %d D[%d][%d]: got %.17g, want %.17g", c->name, t, m, n,
                                 D[t][m * 8 + n], want);
                }
    }
}

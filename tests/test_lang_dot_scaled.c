/* test_lang_dot_scaled.c - Triton's dot_scaled (microscaling operands, an e8m0 scale per 32 along K):
 * e4m3/e5m2 codes with scales, bf16 beside a scaled side, packed e2m1 along K and along M/N, on sm_80 and
 * emu:sm_90a, against float64; its located errors (split from test_lang_run.c). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "support/hostfloat.h"

#include "tests/lang_run.h"

/* ---- dot_scaled: microscaling operands (e8m0 scale per 32 along K) ---- */

/* e4m3 lhs [32, 64] and e5m2 rhs [64, 32] with random scales around 2^0 (and the edge scales 0,
 * the subnormal 2^-127, and 200) against float64: every product is exact in the bf16 operands,
 * the f32 accumulation within 2^-20 of the sum of |products|.  Then bf16 x scaled e4m3, and
 * None scales. */
Test(lang_run, dot_scaled_mx) {
    K k;
    load_src(&k,
             "@num_warps(4)\n"
             "kernel k(a: *f8e4m3, sa: *u8, b: *f8e5m2, sb: *u8, c: *bf16, out: *f32, out2: *f32, out3: *f32,\n"
             "         const M: i32 = 32, const N: i32 = 32, const K: i32 = 64) {\n"
             "    let rm = arange(0, M);\n    let rn = arange(0, N);\n    let rk = arange(0, K);\n    let rs = arange(0, K / 32);\n"
             "    let ta = load(a + rm[:, None] * K + rk[None, :]);\n"
             "    let tsa = load(sa + rm[:, None] * (K / 32) + rs[None, :]);\n"
             "    let tb = load(b + rk[:, None] * N + rn[None, :]);\n"
             "    let tsb = load(sb + rn[:, None] * (K / 32) + rs[None, :]);\n"
             "    let o = rm[:, None] * N + rn[None, :];\n"
             "    store(out + o, dot_scaled(ta, tsa, \"e4m3\", tb, tsb, \"e5m2\"));\n"
             "    let tc = load(c + rm[:, None] * K + rk[None, :]);\n"
             "    store(out2 + o, dot_scaled(tc, None, \"bf16\", tb, tsb, \"e5m2\", acc=zeros([M, N], f32) + 1.0));\n"
             "    store(out3 + o, dot_scaled(ta, None, \"e4m3\", tb, None, \"e5m2\"));\n"
             "}\n",
             "k");
    enum { M = 32, N = 32, KK = 64, KB = KK / 32 };
    static uint8_t a[M * KK], b[KK * N], sa[M * KB], sb[N * KB];
    static uint16_t cbits[M * KK];
    static float out[M * N], out2[M * N], out3[M * N];
    unsigned x = 12345;
#define RND() (x = x * 1103515245u + 12345u, (x >> 16) & 0x7fff)
    for (int i = 0; i < M * KK; i++) {
        do a[i] = (uint8_t)RND(); while ((a[i] & 0x7f) == 0x7f); /* no NaN codes */
        float v = (float)((int)(RND() % 200) - 100) / 16.0f;
        uint32_t u;
        memcpy(&u, &v, 4);
        cbits[i] = (uint16_t)(u >> 16); /* exact in bf16 */
    }
    for (int i = 0; i < KK * N; i++)
        do b[i] = (uint8_t)RND(); while ((b[i] & 0x7c) == 0x7c); /* no inf/NaN codes */
    for (int i = 0; i < M * KB; i++) sa[i] = (uint8_t)(120 + RND() % 15);
    for (int i = 0; i < N * KB; i++) sb[i] = (uint8_t)(120 + RND() % 15);
    sa[0] = 0, sa[3] = 200, sb[1] = 0; /* the subnormal 2^-127 and a large 2^73 (sums stay within f32) */
    for (int i = 0; i < M * N; i++) out[i] = out2[i] = out3[i] = NAN;
    uint64_t da = upload(&k, a, sizeof a), dsa = upload(&k, sa, sizeof sa), db = upload(&k, b, sizeof b), dsb = upload(&k, sb, sizeof sb);
    uint64_t dc = upload(&k, cbits, sizeof cbits), dout = upload(&k, out, sizeof out), dout2 = upload(&k, out2, sizeof out2),
             dout3 = upload(&k, out3, sizeof out3);
    void *params[] = {&da, &dsa, &db, &dsb, &dc, &dout, &dout2, &dout3};
    launch(&k, 1, params);
    download(&k, out, dout, sizeof out);
    download(&k, out2, dout2, sizeof out2);
    download(&k, out3, dout3, sizeof out3);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s1 = 0, m1 = 0, s2 = 1, m2 = 1, s3 = 0, m3 = 0;
            for (int q = 0; q < KK; q++) {
                double av = f8e4m3_to_d(a[i * KK + q]), bv = f8e5m2_to_d(b[q * N + j]);
                double as = ldexp(1.0, sa[i * KB + q / 32] - 127), bs = ldexp(1.0, sb[j * KB + q / 32] - 127);
                uint32_t u = (uint32_t)cbits[i * KK + q] << 16;
                float cv;
                memcpy(&cv, &u, 4);
                double p1 = av * as * bv * bs, p2 = cv * bv * bs, p3 = av * bv;
                s1 += p1, m1 += fabs(p1), s2 += p2, m2 += fabs(p2), s3 += p3, m3 += fabs(p3);
            }
            double got[3] = {out[i * N + j], out2[i * N + j], out3[i * N + j]}, want[3] = {s1, s2, s3}, mag[3] = {m1, m2, m3};
            for (int t = 0; t < 3; t++) {
                if (!isfinite(want[t]) && !isfinite(got[t])) continue; /* 2^127 blocks may overflow in both */
                cr_assert(fabs(got[t] - want[t]) <= 0x1p-20 * mag[t] + 1e-30, "form %d (%d, %d): %.9g, want %.9g", t, i, j, got[t], want[t]);
            }
        }
#undef RND
    unload(&k);
}

/* The e2m1 code's value (OCP fp4: sign, two exponent bits, one mantissa bit). */
static double e2m1_to_d(unsigned c) {
    static const double mag[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    return (c & 8 ? -1 : 1) * mag[c & 7];
}

/* Packed e2m1 (fp4, two codes a byte, the first in the low nibble) as Triton's dot_scaled takes it:
 * packed along K (lhs [M, K/2], rhs [K/2, N]) with scales; packed along M and N (lhs_k_pack=false,
 * rhs_k_pack=false: lhs [M/2, K], rhs [K, N/2], the rhs in i8) with a None scale; e4m3 codes in u8
 * beside a scaled e2m1 rhs with fast_math and an accumulator; out_dtype as the eighth positional
 * argument.  Every byte value occurs; against float64 (the products are exact).  sm_80 (mma.sync) and
 * sm_90a (wgmma) on the emulator. */
static void dot_scaled_e2m1_on(const char *arch, const char *device) {
    K k;
    load_src_on(&k,
             "@num_warps(4)\n"
             "kernel k(a: *u8, sa: *u8, b: *u8, sb: *u8, a2: *u8, b2: *i8, e: *u8, out: *f32, out2: *f32, out3: *f32,\n"
             "         out4: *f32, const M: i32 = 32, const N: i32 = 32, const K: i32 = 64) {\n"
             "    let rm = arange(0, M);\n    let rn = arange(0, N);\n    let rk = arange(0, K);\n    let rs = arange(0, K / 32);\n"
             "    let ta = load(a + rm[:, None] * (K / 2) + arange(0, K / 2)[None, :]);\n"
             "    let tb = load(b + arange(0, K / 2)[:, None] * N + rn[None, :]);\n"
             "    let tsa = load(sa + rm[:, None] * (K / 32) + rs[None, :]);\n"
             "    let tsb = load(sb + rn[:, None] * (K / 32) + rs[None, :]);\n"
             "    let o = rm[:, None] * N + rn[None, :];\n"
             "    store(out + o, dot_scaled(ta, tsa, \"e2m1\", tb, tsb, \"e2m1\"));\n"
             "    let ta2 = load(a2 + arange(0, M / 2)[:, None] * K + rk[None, :]);\n"
             "    let tb2 = load(b2 + rk[:, None] * (N / 2) + arange(0, N / 2)[None, :]);\n"
             "    store(out2 + o, dot_scaled(ta2, tsa, \"e2m1\", tb2, None, \"e2m1\", lhs_k_pack=false, rhs_k_pack=false));\n"
             "    let te = load(e + rm[:, None] * K + rk[None, :]);\n"
             "    store(out3 + o, dot_scaled(te, None, \"e4m3\", tb, tsb, \"e2m1\", acc=zeros([M, N], f32) - 2.0, fast_math=true));\n"
             "    store(out4 + o, dot_scaled(ta, None, \"e2m1\", tb, None, \"e2m1\", None, f32));\n"
             "}\n",
             "k", arch, device);
    enum { M = 32, N = 32, KK = 64, KB = KK / 32 };
    static uint8_t a[M * KK / 2], b[KK / 2 * N], a2[M / 2 * KK], b2[KK * N / 2], e[M * KK], sa[M * KB], sb[N * KB];
    static float out[4][M * N];
    unsigned x = 777;
#define RND() (x = x * 1103515245u + 12345u, (x >> 16) & 0x7fff)
    for (int i = 0; i < (int)sizeof a; i++) a[i] = (uint8_t)(i & 255), b[i] = (uint8_t)RND(); /* a: every byte */
    for (int i = 0; i < (int)sizeof a2; i++) a2[i] = (uint8_t)RND(), b2[i] = (uint8_t)(255 - (i & 255));
    for (int i = 0; i < M * KK; i++)
        do e[i] = (uint8_t)RND(); while ((e[i] & 0x7f) == 0x7f); /* no NaN codes */
    for (int i = 0; i < M * KB; i++) sa[i] = (uint8_t)(120 + RND() % 15);
    for (int i = 0; i < N * KB; i++) sb[i] = (uint8_t)(120 + RND() % 15);
    sa[5] = 0, sb[2] = 200;
    for (int t = 0; t < 4; t++)
        for (int i = 0; i < M * N; i++) out[t][i] = NAN;
    uint64_t da = upload(&k, a, sizeof a), dsa = upload(&k, sa, sizeof sa), db = upload(&k, b, sizeof b), dsb = upload(&k, sb, sizeof sb);
    uint64_t da2 = upload(&k, a2, sizeof a2), db2 = upload(&k, b2, sizeof b2), de = upload(&k, e, sizeof e);
    uint64_t dout[4];
    for (int t = 0; t < 4; t++) dout[t] = upload(&k, out[t], sizeof out[t]);
    void *params[] = {&da, &dsa, &db, &dsb, &da2, &db2, &de, &dout[0], &dout[1], &dout[2], &dout[3]};
    launch(&k, 1, params);
    for (int t = 0; t < 4; t++) download(&k, out[t], dout[t], sizeof out[t]);
    /* element (r, q) of a tensor packed along K (two to a byte along q) and along the other dim */
#define NIB(byte, hi) (((byte) >> ((hi) ? 4 : 0)) & 15)
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double want[4] = {0, 0, -2, 0}, mag[4] = {0, 0, 2, 0};
            for (int q = 0; q < KK; q++) {
                double as = ldexp(1.0, sa[i * KB + q / 32] - 127), bs = ldexp(1.0, sb[j * KB + q / 32] - 127);
                double av = e2m1_to_d(NIB(a[i * (KK / 2) + q / 2], q & 1)), bv = e2m1_to_d(NIB(b[q / 2 * N + j], q & 1));
                double av2 = e2m1_to_d(NIB(a2[i / 2 * KK + q], i & 1)), bv2 = e2m1_to_d(NIB(b2[q * (N / 2) + j / 2], j & 1));
                double ev = f8e4m3_to_d(e[i * KK + q]);
                double p[4] = {av * as * bv * bs, av2 * as * bv2, ev * bv * bs, av * bv};
                for (int t = 0; t < 4; t++) want[t] += p[t], mag[t] += fabs(p[t]);
            }
            for (int t = 0; t < 4; t++)
                cr_assert(fabs(out[t][i * N + j] - want[t]) <= 0x1p-20 * mag[t] + 1e-30, "%s form %d (%d, %d): %.9g, want %.9g", arch,
                          t, i, j, out[t][i * N + j], want[t]);
        }
#undef NIB
#undef RND
    unload(&k);
}

Test(lang_run, dot_scaled_e2m1) {
    dot_scaled_e2m1_on("sm_80", "emu");
    dot_scaled_e2m1_on("sm_90a", "emu:sm_90a");
}

/* dot_scaled's located errors: an unknown or mismatched format, a scale of the wrong shape, a
 * scale on a bf16 operand. */
Test(lang_run, dot_scaled_errors) {
    static const struct {
        const char *body, *msg;
    } cases[] = {
        {"dot_scaled(a, s, \"e2m1\", b, t, \"e5m2\")", "lhs of 'dot_scaled' must be a 2-D tensor of 8-bit integers (two codes a byte)"},
        {"dot_scaled(a, s, \"e4m3\", b, t, \"e5m2\", lhs_k_pack=r)", "lhs_k_pack of 'dot_scaled' must be a compile-time bool"},
        {"dot_scaled(a, s, \"fp4\", b, t, \"e5m2\")", "unknown lhs_format \"fp4\""},
        {"dot_scaled(a, s, \"e5m2\", b, t, \"e5m2\")", "must be a 2-D tensor of f8e5m2"},
        {"dot_scaled(a, t, \"e4m3\", b, t, \"e5m2\")", "lhs_scale of 'dot_scaled' must be an [32, 2] tensor"},
        {"dot_scaled(c, s, \"bf16\", b, t, \"e5m2\")", "lhs_scale of 'dot_scaled' must be None for format \"bf16\""},
        {"dot_scaled(a, s, e4m3, b, t, \"e5m2\")", "lhs_format of 'dot_scaled' must be a string literal"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char src[1024];
        snprintf(src, sizeof src,
                 "kernel k(pa: *f8e4m3, pb: *f8e5m2, pc: *bf16, ps: *u8, out: *f32) {\n"
                 "    let r = arange(0, 32);\n    let q = arange(0, 64);\n    let h = arange(0, 2);\n"
                 "    let a = load(pa + r[:, None] * 64 + q[None, :]);\n    let c = load(pc + r[:, None] * 64 + q[None, :]);\n"
                 "    let b = load(pb + q[:, None] * 16 + arange(0, 16)[None, :]);\n"
                 "    let s = load(ps + r[:, None] * 2 + h[None, :]);\n    let t = load(ps + arange(0, 16)[:, None] * 2 + h[None, :]);\n"
                 "    let d = %s;\n}\n", cases[i].body);
        tile_compile_options o = {0};
        tile_compiled c;
        cr_assert_eq(tile_compile_source("t.tile", src, &o, &c), TILE_ERROR_COMPILE, "case %zu compiled:\n%s", i, src);
        cr_expect(strstr(c.diagnostics, cases[i].msg), "case %zu: diagnostics lack '%s':\n%s", i, cases[i].msg, c.diagnostics);
        cr_expect(strstr(c.diagnostics, "t.tile:"), "case %zu: no location:\n%s", i, c.diagnostics);
        tile_compiled_free(&c);
    }
}

/* test_emu_mma_fast.c - the emulator's fast tensor-core paths against its general ones (docs/emulator.md,
 * "Testing and speed"): f32 to bf16/f16 rounding by bits against emu_round_f64, the scalar cvt fast forms against
 * emu_exec_cvt, the f16/bf16 arithmetic fast form against emu_exec_float, the host-fma and vector-add
 * sums against one fmaf per product on edge operands, and the specialised mma.sync m16n8k{8,16} executor
 * against the general executor (EmuOptions.general_tensor_ops), the f16 results of the other mma.sync, mma.sp and
 * wmma.mma executors rounded by bits against emu_round_f64, and wgmma's f32 C and D moved by fours against element by
 * element (sm_90a).  Split from test_emu_mma.c, whose section 1
 * checks the mma forms themselves against the PTX ISA's fragment layouts. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/exec.h"
#include "runtime/device.h"
#include "support/support.h"
#include "test_ptxas.h"
#include "test_emu_mma.h"

/* emu_f32_to_bf16_rn / emu_f32_to_f16_rn (cvt.rn.{bf16,f16}x2.f32's fast form, f16 accumulators) against
 * emu_round_f64 of the same f32: every sign, exponent and kept significand with the bits rounded off at zero,
 * one, just under half, half (ties, even and odd), just over half and all ones, and random; f16's results below
 * 2^-14, where the rounding position moves, at every exponent with the same remainders there; NaNs of every
 * kind, infinities, zeros, f32 subnormals, the overflow threshold 65520 and its neighbours. */
Test(mma, fast_round_f32_to_bf16_and_f16) {
    unsigned long checked = 0;
    for (int fmt = 0; fmt < 2; fmt++) { /* 0: bf16, 1: f16 */
        unsigned drop = fmt ? 13 : 16, top = 32 - drop;
        uint32_t half = 1u << (drop - 1), full = (1u << drop) - 1;
        for (uint32_t hi = 0; hi < 1u << top; hi++) {
            uint32_t lows[] = {0, 1, half - 1, half, half + 1, full, (uint32_t)rnd64() & full};
            for (unsigned i = 0; i < sizeof lows / sizeof *lows; i++) {
                float x = u2f(hi << drop | lows[i]);
                uint32_t got = fmt ? emu_f32_to_f16_rn(x) : emu_f32_to_bf16_rn(x);
                uint32_t want = (uint32_t)emu_round_f64((double)x, fmt ? EMU_FMT_F16 : EMU_FMT_BF16, EMU_RND_RN);
                cr_assert_eq(got, want, "%s of %#x (%a): got %#x, want %#x", fmt ? "f16" : "bf16", f2u(x), (double)x, got, want);
                checked++;
            }
        }
    }
    for (unsigned e = 90; e < 113; e++) /* f16 subnormal results: |x| < 2^-14, the rounding position at bit 126 - e */
        for (uint32_t n = 0; n < 64; n++)
            for (unsigned k = 0; k < 6; k++) {
                unsigned shift = 126 - e > 23 ? 23 : 126 - e;
                uint32_t h = 1u << (shift - 1), rems[] = {0, 1, h - 1, h, h + 1, (1u << shift) - 1};
                uint32_t mant = ((n << shift) | rems[k]) & 0x7FFFFFu;
                for (uint32_t sg = 0; sg < 2; sg++) {
                    float x = u2f(sg << 31 | e << 23 | mant);
                    uint32_t got = emu_f32_to_f16_rn(x), want = (uint32_t)emu_round_f64((double)x, EMU_FMT_F16, EMU_RND_RN);
                    cr_assert_eq(got, want, "f16 of %#x (%a): got %#x, want %#x", f2u(x), (double)x, got, want);
                }
            }
    const uint32_t special[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FBFFFFFu, 0x7F800000u, 0xFF800000u, 0, 0x80000000u,
                                1, 0x80000001u, 0x007FFFFFu, 0x477FF000u, 0x477FEFFFu, 0x477FF001u, 0xC77FF000u, 0x47800000u,
                                0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F7F8000u, 0x7F7F7FFFu, 0x33000000u, 0x33000001u, 0xB3000000u, 0x387FE000u, 0x387FF000u};
    for (unsigned i = 0; i < sizeof special / sizeof *special; i++) {
        float x = u2f(special[i]);
        cr_assert_eq(emu_f32_to_bf16_rn(x), (uint32_t)emu_round_f64((double)x, EMU_FMT_BF16, EMU_RND_RN), "bf16 of %#x", special[i]);
        cr_assert_eq(emu_f32_to_f16_rn(x), (uint32_t)emu_round_f64((double)x, EMU_FMT_F16, EMU_RND_RN), "f16 of %#x", special[i]);
    }
    cr_assert_gt(checked, 4000000ul);
}

/* The scalar cvt fast forms (emu_cvt_* in emu/exec.h, the interpreter's handlers) against emu_exec_cvt, the general
 * executor, on the same instruction: cvt.f32.{bf16,f16} over every 16-bit code (garbage above it), cvt.rn.{bf16,f16}.f32
 * and cvt.{rni,rzi,rmi,rpi}[.ftz].{s32,u32}.f32 over NaNs of every kind, infinities, +-0, subnormals, the integer
 * ranges' edges and their neighbours, every exponent with edge and random significands, and random bits;
 * cvt.{rni,rzi,rmi,rpi}.f32.f32 over the same; cvt.rn.f32.{s32,u32,s64,u64} and every pair of integer types over
 * the ranges' edges, values just past 2^24 (ties) and random bits.  Each form is checked to be one emu_fast_select
 * gives a fast form. */
typedef uint64_t (*CvtFast)(const EmuIns *in, uint64_t x);
static void cvt_case(unsigned dty, unsigned sty, unsigned rnd, uint32_t flags, CvtFast fast, const uint64_t *xs, size_t n) {
    EmuIns in = {.op = EMU_OP_CVT, .ty = (uint8_t)dty, .ty2 = (uint8_t)sty, .rnd = (uint8_t)rnd, .flags = flags, .nops = 2,
                 .guard = EMU_SLOT_TRUE, .o = {0, 1}, .ok = {EMU_OK_REG, EMU_OK_REG}};
    cr_assert_neq(emu_fast_select(&in, true), 0, "cvt .%s.%s (rnd %u, flags %#x) has no fast form", emu_type_name(dty),
                  emu_type_name(sty), rnd, flags);
    uint64_t regs[2];
    EmuThread t = {.r = regs};
    for (size_t i = 0; i < n; i++) {
        regs[0] = 0xDEADBEEFDEADBEEFull, regs[1] = xs[i];
        cr_assert(emu_exec_cvt(NULL, &t, &in));
        uint64_t want = regs[0], got = fast(&in, xs[i]);
        cr_assert_eq(got, want, "cvt .%s.%s (rnd %u, flags %#x) of %#llx: fast %#llx, general %#llx", emu_type_name(dty),
                     emu_type_name(sty), rnd, flags, (unsigned long long)xs[i], (unsigned long long)got, (unsigned long long)want);
    }
}

Test(fast, cvt_forms_match_general) {
    enum { N16 = 65536, NF = 40000 };
    static uint64_t xs[N16 + NF];
    for (uint32_t h = 0; h < N16; h++) xs[h] = (rnd64() << 16) | h; /* every 16-bit code, garbage above */
    cvt_case(EMU_T_F32, EMU_T_BF16, EMU_RND_NONE, 0, emu_cvt_f32_half, xs, N16);
    cvt_case(EMU_T_F32, EMU_T_F16, EMU_RND_NONE, 0, emu_cvt_f32_half, xs, N16);
    cvt_case(EMU_T_F32, EMU_T_F16, EMU_RND_RN, 0, emu_cvt_f32_half, xs, N16);
    /* f32 sources */
    static const uint32_t special[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FBFFFFFu, 0x7FFFFFFFu, 0x7F800000u,
                                       0xFF800000u, 0, 0x80000000u, 1, 0x80000001u, 0x007FFFFFu, 0x807FFFFFu, 0x00800000u,
                                       0x3F000000u, 0xBF000000u, 0x3FC00000u, 0xBFC00000u, 0x40200000u, 0xC0200000u, 0x3F7FFFFFu,
                                       0x4F000000u, 0x4EFFFFFFu, 0xCF000000u, 0xCF000001u, 0x4F800000u, 0x4F7FFFFFu, 0x477FF000u,
                                       0x477FEFFFu, 0xC77FF000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F7F8000u, 0x33000000u, 0x33000001u,
                                       0x387FE000u, 0x387FF000u, 0xB3800001u};
    size_t n = 0;
    for (size_t i = 0; i < sizeof special / sizeof *special; i++) xs[n++] = (rnd64() << 32) | special[i];
    for (uint32_t e = 0; e < 256; e++) /* every exponent, either sign: significands 0, 1, half, half +- 1, all ones, random */
        for (uint32_t sg = 0; sg < 2; sg++) {
            uint32_t ms[] = {0, 1, 0x400000u, 0x3FFFFFu, 0x400001u, 0x7FFFFFu, 0x1000u, 0xFFFu, 0x1001u, 0x8000u, 0x7FFFu, (uint32_t)rnd64() & 0x7FFFFFu};
            for (size_t k = 0; k < sizeof ms / sizeof *ms; k++) xs[n++] = sg << 31 | e << 23 | ms[k];
        }
    while (n < NF) { /* random bits, and values near the integer ranges (exponents 120..160) */
        uint64_t r = rnd64();
        xs[n] = n & 1 ? (uint32_t)r : (uint32_t)(r & 0x807FFFFFu) | (uint32_t)(120 + (r >> 40) % 41) << 23;
        n++;
    }
    cvt_case(EMU_T_BF16, EMU_T_F32, EMU_RND_RN, 0, emu_cvt_half_f32, xs, n);
    cvt_case(EMU_T_F16, EMU_T_F32, EMU_RND_RN, 0, emu_cvt_half_f32, xs, n);
    static const unsigned irnd[] = {EMU_RND_RNI, EMU_RND_RZI, EMU_RND_RMI, EMU_RND_RPI};
    for (unsigned k = 0; k < 4; k++)
        for (unsigned ftz = 0; ftz < 2; ftz++) {
            cvt_case(EMU_T_S32, EMU_T_F32, irnd[k], ftz ? EMU_F(FTZ) : 0, emu_cvt_i32_f32, xs, n);
            cvt_case(EMU_T_U32, EMU_T_F32, irnd[k], ftz ? EMU_F(FTZ) : 0, emu_cvt_i32_f32, xs, n);
        }
    for (unsigned k = 0; k < 4; k++) cvt_case(EMU_T_F32, EMU_T_F32, irnd[k], 0, emu_cvt_f32_f32i, xs, n);
    /* integer sources */
    static const uint64_t ispecial[] = {0, 1, 0xFFFFFFFFull, 0x7FFFFFFFull, 0x80000000ull, 0x80000001ull, 0xFFFFFF80ull, 0x1000001ull,
                                        0x1000003ull, 0x2000005ull, 0xFEFFFFFFull, 0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull,
                                        0xFFFFFFFFFFFFFFFFull, 0x8000008000000000ull, 0x0000010000008000ull, 0xFFFFFEFFFFFF7FFFull};
    n = 0;
    for (size_t i = 0; i < sizeof ispecial / sizeof *ispecial; i++) xs[n++] = ispecial[i];
    while (n < NF) {
        uint64_t r = rnd64();
        xs[n] = n % 3 == 0 ? r : n % 3 == 1 ? r >> (r & 63) : (uint32_t)r >> ((r >> 32) & 31);
        n++;
    }
    static const unsigned isrc[] = {EMU_T_S32, EMU_T_U32, EMU_T_S64, EMU_T_U64};
    for (unsigned k = 0; k < 4; k++) cvt_case(EMU_T_F32, isrc[k], EMU_RND_RN, 0, emu_cvt_f32_int, xs, n);
    static const unsigned ity[] = {EMU_T_U8, EMU_T_S8, EMU_T_U16, EMU_T_S16, EMU_T_U32, EMU_T_S32, EMU_T_U64, EMU_T_S64};
    for (unsigned d = 0; d < 8; d++)
        for (unsigned k = 0; k < 8; k++) cvt_case(ity[d], ity[k], EMU_RND_NONE, 0, emu_cvt_int_int, xs, 4000);
}

/* The f16/bf16 arithmetic fast form (emu_half_arith, the interpreter's handler) against emu_exec_float, the general
 * executor, on the same instruction: {add,sub,mul,fma}[.rn].{f16,bf16,f16x2,bf16x2} over pairs of 16-bit codes drawn
 * from every exponent with edge significands (zero, one, all ones, random), NaNs, infinities, +-0, subnormals and the
 * largest finite values (sums and products that overflow, cancel or fall below the smallest subnormal, fma's tiny
 * addends that decide a tie), garbage above the 16 or 32 bits; each form checked to be one emu_fast_select gives the
 * fast form. */
static uint16_t half_edge(void) {
    uint64_t r = rnd64();
    uint16_t sg = (uint16_t)(r & 0x8000), ms[] = {0, 1, 0x7F, 0x40, 0x3FF, 0x200, (uint16_t)(r >> 16)};
    switch ((r >> 32) % 8) {
    case 0: return (uint16_t)r; /* any code: either format */
    case 1: return sg | 0x7C00 | (uint16_t)((r >> 40) & 3); /* f16 infinity, NaNs; bf16 large */
    case 2: return sg | 0x7F80 | (uint16_t)((r >> 40) & 3); /* bf16 infinity, NaNs */
    default: { /* an exponent and an edge significand, in either format's layout */
        uint16_t e = (uint16_t)((r >> 40) % 32), m = ms[(r >> 48) % 7];
        return (r >> 60) & 1 ? sg | (uint16_t)(e << 10) | (m & 0x3FF) : sg | (uint16_t)(((r >> 50) % 256) << 7) | (m & 0x7F);
    }
    }
}
Test(fast, half_arith_matches_general) {
    static const unsigned ops[] = {EMU_OP_ADD, EMU_OP_SUB, EMU_OP_MUL, EMU_OP_FMA};
    static const unsigned tys[] = {EMU_T_F16, EMU_T_BF16, EMU_T_F16X2, EMU_T_BF16X2};
    EmuOptions opt = {0};
    EmuLaunch L = {.opt = &opt};
    EmuBlock blk = {.L = &L};
    uint64_t regs[4];
    EmuThread t = {.r = regs};
    for (unsigned o = 0; o < 4; o++)
        for (unsigned k = 0; k < 4; k++)
            for (unsigned rn = 0; rn < 2; rn++) {
                EmuIns in = {.op = (uint8_t)ops[o], .ty = (uint8_t)tys[k], .rnd = (uint8_t)(rn ? EMU_RND_RN : EMU_RND_NONE),
                             .nops = (uint8_t)(ops[o] == EMU_OP_FMA ? 4 : 3), .guard = EMU_SLOT_TRUE, .o = {0, 1, 2, 3},
                             .ok = {EMU_OK_REG, EMU_OK_REG, EMU_OK_REG, EMU_OK_REG}};
                cr_assert_neq(emu_fast_select(&in, true), 0, "%s.%s has no fast form", emu_op_name(in.op), emu_type_name(in.ty));
                for (unsigned i = 0; i < 12000; i++) {
                    uint64_t a = rnd64() << 32 | (uint32_t)half_edge() << 16 | half_edge();
                    uint64_t b = rnd64() << 32 | (uint32_t)half_edge() << 16 | half_edge();
                    uint64_t c = rnd64() << 32 | (uint32_t)half_edge() << 16 | half_edge();
                    regs[0] = 0xDEADBEEFDEADBEEFull, regs[1] = a, regs[2] = b, regs[3] = c;
                    cr_assert(emu_exec_float(&blk, &t, &in));
                    uint64_t want = regs[0], got = emu_half_arith(&in, a, b, c);
                    cr_assert_eq(got, want, "%s.%s of %#llx, %#llx, %#llx: fast %#llx, general %#llx", emu_op_name(in.op),
                                 emu_type_name(in.ty), (unsigned long long)a, (unsigned long long)b, (unsigned long long)c,
                                 (unsigned long long)got, (unsigned long long)want);
                }
            }
}

/* An element for the sums below: f32 values of a bf16 or f16 (bits16: each drawn as a 16-bit code), else any f32.
 * Mostly values near 1 (sums with carries and cancellation), with NaN, infinities, -0, subnormals, the largest
 * finite values (sums that overflow), tiny values (bf16 products below f32's normal range: not exact in f32) and
 * random bits. */
static uint32_t edge_code(unsigned kind, bool f16) {
    uint64_t r = rnd64();
    unsigned pick = (unsigned)(r >> 56) % 16;
    if (f16) {
        static const uint16_t sp[] = {0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x0001, 0x83FF, 0x7BFF, 0xFBFF, 0x0400};
        if (kind == 0 || pick < 10) return (uint32_t)(r & 0x8000) | (uint32_t)(13 + (r >> 20) % 4) << 10 | (uint32_t)(r & 0x3FF);
        if (pick < 14) return sp[(r >> 8) % (sizeof sp / sizeof *sp)];
        return (uint32_t)(r & 0xFFFF);
    }
    static const uint16_t sp[] = {0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x0001, 0x807F, 0x0080, 0x7F7F, 0xFF7F, 0x0C00, 0x8C35, 0x7000, 0xF0AB};
    if (kind == 1 && pick < 13) return (uint32_t)(r & 0x8000) | (uint32_t)(40 + (r >> 20) % 20) << 7 | (uint32_t)(r & 0x7F); /* 2^-87..2^-68 */
    if (kind == 2 && pick < 12) return (uint32_t)(r & 0x8000) | (uint32_t)(190 + (r >> 20) % 60) << 7 | (uint32_t)(r & 0x7F); /* to 2^122 */
    if (kind == 0 || pick < 9) return (uint32_t)(r & 0x8000) | (uint32_t)(125 + (r >> 20) % 4) << 7 | (uint32_t)(r & 0x7F);
    if (pick < 14) return sp[(r >> 8) % (sizeof sp / sizeof *sp)];
    return (uint32_t)(r & 0xFFFF);
}
static float edge_f32(unsigned kind, bool f16) {
    uint32_t c = edge_code(kind, f16);
    return f16 ? emu_f16_to_f32((uint16_t)c) : u2f(c << 16);
}
static bool same_float(float a, float b) { return (a != a && b != b) || f2u(a) == f2u(b); }

/* emu_mma_f32's paths against its reference (one fmaf per element and k ascending), bit for bit (NaN as NaN):
 * the host's fma on every kind of operand, bf16 values whose products leave f32's normal range among them; the
 * vector adds on f16 values (exact products); mma.sync's 16 x 8 x 16 and wgmma's 64 x N x 16 (N 8 to 256). */
Test(mma, fast_sum_paths_match_fmaf) {
    enum { MAXN = 256 };
    static float A[64 * 16], B[16 * MAXN], D0[64 * MAXN], D1[64 * MAXN], C[64 * MAXN];
    bool have_fma = true;
    unsigned compared = 0;
    for (unsigned rep = 0; rep < 120; rep++) {
        unsigned M = rep % 2 ? 64 : 16, N = rep % 2 ? 8u << (rep / 2 % 6) : 8, K = rep % 3 ? 16 : 8, kind = rep % 4;
        bool f16 = rep % 5 == 0; /* else bf16 codes */
        for (unsigned i = 0; i < M * K; i++) A[i] = edge_f32(kind, f16);
        for (unsigned i = 0; i < K * N; i++) B[i] = edge_f32(kind, f16);
        for (unsigned i = 0; i < M * N; i++) { /* C: any f32, subnormals and -0 among them, or a bf16 as the rest */
            uint64_t r = rnd64();
            C[i] = r % 4 == 0 ? u2f((uint32_t)(r >> 32)) : r % 4 == 1 ? u2f((uint32_t)(r >> 40) & 0x807FFFFFu) : edge_f32(kind, f16);
        }
        memcpy(D0, C, M * N * sizeof *C);
        cr_assert(emu_mma_f32_by(A, K, B, N, D0, N, M, N, K, EMU_MMA_FMAF));
        memcpy(D1, C, M * N * sizeof *C);
        if (!emu_mma_f32_by(A, K, B, N, D1, N, M, N, K, EMU_MMA_HOST_FMA)) {
            have_fma = false;
        } else {
            for (unsigned i = 0; i < M * N; i++)
                cr_assert(same_float(D0[i], D1[i]), "host fma, %ux%ux%u, kind %u, element %u: %a, want %a", M, N, K, kind, i, (double)D1[i],
                          (double)D0[i]);
            compared++;
        }
        if (f16) { /* exact products: the vector adds */
            memcpy(D1, C, M * N * sizeof *C);
            cr_assert(emu_mma_f32_by(A, K, B, N, D1, N, M, N, K, EMU_MMA_ADD));
            for (unsigned i = 0; i < M * N; i++)
                cr_assert(same_float(D0[i], D1[i]), "adds, %ux%ux%u, element %u: %a, want %a", M, N, K, i, (double)D1[i], (double)D0[i]);
        }
    }
    if (!have_fma) cr_log_warn("this host has no FMA3: the host-fma path was not compared (emu_mma_f32 does not take it)");
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) cr_assert_eq(compared, 120u);
#endif
}

/* mma.sync m16n8k{8,16} .f32.{f16,bf16}.{f16,bf16}.f32 by its specialised executor and by the general one
 * (EmuOptions.general_tensor_ops, whose sums are one fmaf per product): 8 warps, each lane's A, B and C registers
 * from memory (D aliasing C), operands near 1, tiny (bf16 products below f32's normal range), huge (sums that
 * overflow), NaN, infinities, -0 and subnormals: every D register the same bits. */
Test(mma, fast_executor_matches_general) {
    enum { WARPS = 8, T = WARPS * 32 };
    static const char *forms[][2] = {
        {"f16", "{%r0,%r1,%r2,%r3}, {%r4,%r5}"}, {"bf16", "{%r0,%r1,%r2,%r3}, {%r4,%r5}"},
        {"f16", "{%r0,%r1}, {%r4}"}, {"bf16", "{%r0,%r1}, {%r4}"}};
    for (unsigned fi = 0; fi < 4; fi++) {
        bool f16 = !strcmp(forms[fi][0], "f16"), k16 = fi < 2;
        char ptx[2048];
        snprintf(ptx, sizeof ptx,
                 PTX_HEAD ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
                 " .reg .b32 %%r<12>;\n .reg .f32 %%f<4>;\n .reg .b64 %%rd<6>;\n"
                 " mov.u32 %%r10, %%tid.x;\n mov.u32 %%r11, %%ctaid.x;\n mov.u32 %%r9, %%ntid.x;\n mad.lo.s32 %%r10, %%r11, %%r9, %%r10;\n"
                 " mul.wide.u32 %%rd1, %%r10, 40;\n ld.param.u64 %%rd2, [pin];\n add.s64 %%rd2, %%rd2, %%rd1;\n"
                 " ld.global.u32 %%r0, [%%rd2];\n ld.global.u32 %%r1, [%%rd2+4];\n ld.global.u32 %%r2, [%%rd2+8];\n"
                 " ld.global.u32 %%r3, [%%rd2+12];\n ld.global.u32 %%r4, [%%rd2+16];\n ld.global.u32 %%r5, [%%rd2+20];\n"
                 " ld.global.f32 %%f0, [%%rd2+24];\n ld.global.f32 %%f1, [%%rd2+28];\n ld.global.f32 %%f2, [%%rd2+32];\n"
                 " ld.global.f32 %%f3, [%%rd2+36];\n"
                 " mma.sync.aligned.m16n8k%s.row.col.f32.%s.%s.f32 {%%f0,%%f1,%%f2,%%f3}, %s, {%%f0,%%f1,%%f2,%%f3};\n"
                 " mul.wide.u32 %%rd3, %%r10, 16;\n ld.param.u64 %%rd4, [pout];\n add.s64 %%rd4, %%rd4, %%rd3;\n"
                 " st.global.v4.f32 [%%rd4], {%%f0,%%f1,%%f2,%%f3};\n ret;\n}\n",
                 k16 ? "16" : "8", forms[fi][0], forms[fi][0], forms[fi][1]);
        check_ptxas(ptx);
        EmuMem mem;
        emu_mem_init(&mem);
        char *err = NULL;
        EmuModule *m = emu_module_parse(ptx, &mem, &err);
        cr_assert(m && emu_module_finalize(m, &mem, &err), "%s", err ? err : "");
        uint64_t in, out;
        cr_assert(emu_mem_alloc(&mem, T * 40, false, &in) && emu_mem_alloc(&mem, T * 16, false, &out));
        uint32_t *iv = (uint32_t *)emu_mem_host(&mem, in, T * 40);
        for (unsigned t = 0; t < T; t++) {
            unsigned kind = t / 32 % 4; /* warps 0-3: near 1, tiny, huge, specials; 4-7 again */
            for (unsigned j = 0; j < 6; j++) iv[t * 10 + j] = edge_code(kind, f16) | edge_code(kind, f16) << 16;
            for (unsigned e = 0; e < 4; e++) {
                uint64_t r = rnd64();
                iv[t * 10 + 6 + e] = r % 5 == 0 ? (uint32_t)(r >> 32) : r % 5 == 1 ? (uint32_t)(r >> 40) & 0x807FFFFFu
                                                                                    : f2u(edge_f32(kind, f16));
            }
        }
        uint32_t got[3][T * 4]; /* the specialised executor, the general one, the specialised one without F16C */
        for (int general = 0; general < 3; general++) {
            memset(emu_mem_host(&mem, out, T * 16), 0xA5, T * 16); /* poisoned */
            EmuOptions o = {.host_threads = 2, .timeout_seconds = 60, .general_tensor_ops = general == 1, .portable_tensor_ops = general == 2};
            cr_assert(emu_launch(m, emu_module_find(m, "k"), (unsigned[]){2, 1, 1}, (unsigned[]){T / 2, 1, 1}, 0, (void *[]){&in, &out}, &o,
                                 NULL, &err),
                      "%s", err ? err : "");
            memcpy(got[general], emu_mem_host(&mem, out, T * 16), T * 16);
        }
        unsigned nan = 0, inf = 0, sub = 0, other = 0;
        for (unsigned i = 0; i < T * 4; i++) {
            cr_assert_eq(got[0][i], got[1][i], "m16n8k%s %s, thread %u, D element %u: fast %#x, general %#x", k16 ? "16" : "8",
                         forms[fi][0], i / 4, i % 4, got[0][i], got[1][i]);
            cr_assert_eq(got[2][i], got[1][i], "m16n8k%s %s, thread %u, D element %u: fast without F16C %#x, general %#x",
                         k16 ? "16" : "8", forms[fi][0], i / 4, i % 4, got[2][i], got[1][i]);
            uint32_t a = got[0][i] & 0x7FFFFFFFu;
            if (a > 0x7F800000u) nan++;
            else if (a == 0x7F800000u) inf++;
            else if (a && a < 0x00800000u) sub++;
            else other++;
        }
        /* the inputs reached what they were drawn for */
        cr_assert(nan && inf && other > T, "%s: %u NaN, %u infinite, %u subnormal, %u other", forms[fi][0], nan, inf, sub, other);
        cr_assert(f16 || sub, "bf16: no subnormal results");
        emu_module_free(m);
        emu_mem_destroy(&mem);
    }
}

/* An f16 code for the f16-result forms below, by kind: 0 near 1 (2^-2..2^1), 1 tiny (2^-14..2^-9: sums below f16's
 * normal range, subnormal results), 2 huge (2^12..2^15: sums past 65504, infinite results), 3 the special codes and
 * random bits (NaN, infinities, -0, subnormals). */
static uint32_t f16_code(unsigned kind) {
    uint64_t r = rnd64();
    uint32_t sign = (uint32_t)(r & 0x8000), man = (uint32_t)(r >> 16) & 0x3FF;
    if (kind == 0) return sign | (uint32_t)(13 + (r >> 32) % 4) << 10 | man;
    if (kind == 1) return sign | (uint32_t)(1 + (r >> 32) % 6) << 10 | man;
    if (kind == 2) return sign | (uint32_t)(27 + (r >> 32) % 4) << 10 | man;
    return edge_code(3, true);
}

/* One tensor-core instruction (ins) run by 8 warps with its EmuOptions.general_tensor_ops off and on: each thread
 * loads the registers `ins` reads from memory (kinds, one letter a register: 'h' an f16x2 %rN, 'm' sparsity
 * metadata %rN, each nibble two distinct indices, 'f' an f32 %fN; numbered from %r0 and %f0 in order), then stores
 * its nout f16x2 results %r20..: every result the same bits (any NaN is 0x7fff in both), the f16 halves reaching NaN,
 * infinity and subnormal values.  Each warp draws its operands of one kind (f16_code). */
static void f16_results_match_general(const char *head, const char *ins, const char *kinds, unsigned nout) {
    enum { WARPS = 8, T = WARPS * 32 };
    unsigned nin = (unsigned)strlen(kinds), nr = 0, nf = 0;
    char ptx[4096];
    int len = snprintf(ptx, sizeof ptx,
                       "%s.visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
                       " .reg .b32 %%r<32>;\n .reg .f32 %%f<16>;\n .reg .b32 %%t<4>;\n .reg .b64 %%rd<6>;\n"
                       " mov.u32 %%t0, %%tid.x;\n mov.u32 %%t1, %%ctaid.x;\n mov.u32 %%t2, %%ntid.x;\n mad.lo.s32 %%t0, %%t1, %%t2, %%t0;\n"
                       " mul.wide.u32 %%rd1, %%t0, %u;\n ld.param.u64 %%rd2, [pin];\n add.s64 %%rd2, %%rd2, %%rd1;\n",
                       head, 4 * nin);
    for (unsigned i = 0; i < nin; i++) {
        if (kinds[i] == 'f') len += snprintf(ptx + len, sizeof ptx - len, " ld.global.f32 %%f%u, [%%rd2+%u];\n", nf++, 4 * i);
        else len += snprintf(ptx + len, sizeof ptx - len, " ld.global.u32 %%r%u, [%%rd2+%u];\n", nr++, 4 * i);
    }
    len += snprintf(ptx + len, sizeof ptx - len, " %s\n mul.wide.u32 %%rd3, %%t0, %u;\n ld.param.u64 %%rd4, [pout];\n add.s64 %%rd4, %%rd4, %%rd3;\n",
                    ins, 4 * nout);
    for (unsigned i = 0; i < nout; i++) len += snprintf(ptx + len, sizeof ptx - len, " st.global.u32 [%%rd4+%u], %%r%u;\n", 4 * i, 20 + i);
    snprintf(ptx + len, sizeof ptx - len, " ret;\n}\n");
    check_ptxas(ptx);
    EmuMem mem;
    emu_mem_init(&mem);
    char *err = NULL;
    EmuModule *m = emu_module_parse(ptx, &mem, &err);
    cr_assert(m && emu_module_finalize(m, &mem, &err), "%s\n%s", err ? err : "", ptx);
    uint64_t in, out;
    cr_assert(emu_mem_alloc(&mem, T * 4 * nin, false, &in) && emu_mem_alloc(&mem, T * 4 * nout, false, &out));
    uint32_t *iv = (uint32_t *)emu_mem_host(&mem, in, T * 4 * nin);
    static const uint32_t nibs[] = {0x4, 0x8, 0xC, 0x9, 0xD, 0xE}; /* (i0, i1) with i0 < i1 */
    for (unsigned t = 0; t < T; t++) {
        unsigned kind = t / 32 % 4;
        for (unsigned i = 0; i < nin; i++) {
            uint32_t *v = &iv[t * nin + i];
            if (kinds[i] == 'h') *v = f16_code(kind) | f16_code(kind) << 16;
            else if (kinds[i] == 'f') *v = f2u(emu_f16_to_f32((uint16_t)f16_code(kind))) ^ ((uint32_t)rnd64() & 0x1FFF); /* not an f16 */
            else {
                *v = 0;
                for (unsigned q = 0; q < 8; q++) *v |= nibs[rnd64() % 6] << (4 * q);
            }
        }
    }
    uint32_t *got[2];
    for (int general = 0; general < 2; general++) {
        memset(emu_mem_host(&mem, out, T * 4 * nout), 0xA5, T * 4 * nout); /* poisoned */
        EmuOptions o = {.host_threads = 2, .timeout_seconds = 60, .general_tensor_ops = general};
        cr_assert(emu_launch(m, emu_module_find(m, "k"), (unsigned[]){2, 1, 1}, (unsigned[]){T / 2, 1, 1}, 0, (void *[]){&in, &out}, &o, NULL,
                             &err),
                  "%s", err ? err : "");
        got[general] = malloc(T * 4 * nout);
        memcpy(got[general], emu_mem_host(&mem, out, T * 4 * nout), T * 4 * nout);
    }
    unsigned nan = 0, inf = 0, sub = 0, other = 0;
    for (unsigned i = 0; i < T * nout; i++) {
        cr_assert_eq(got[0][i], got[1][i], "%s: thread %u, D register %u: fast %#x, general %#x", ins, i / nout, i % nout, got[0][i], got[1][i]);
        for (unsigned h = 0; h < 2; h++) {
            uint32_t a = got[0][i] >> (16 * h) & 0x7FFF;
            if (a > 0x7C00) nan++;
            else if (a == 0x7C00) inf++;
            else if (a && a < 0x400) sub++;
            else other++;
        }
    }
    cr_assert(nan && inf && sub && other > T, "%s: %u NaN, %u infinite, %u subnormal, %u other halves", ins, nan, inf, sub, other);
    free(got[0]), free(got[1]);
    emu_module_free(m);
    emu_mem_destroy(&mem);
}

/* The f16 results of the executors other than mma_m16n8_f32 (the general mma.sync, m8n8k4, mma.sp and wmma.mma) are
 * rounded by their bits (emu_f32_to_f16_rn); general_tensor_ops rounds them through emu_round_f64. */
Test(mma, f16_results_match_general) {
    f16_results_match_general(PTX_HEAD, "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r20,%r21}, {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%r6,%r7};",
                              "hhhhhhhh", 2);
    f16_results_match_general(PTX_HEAD, "mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%r20,%r21}, {%r0,%r1}, {%r2}, {%r3,%r4};", "hhhhh", 2);
    f16_results_match_general(PTX_HEAD, "mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16 {%r20,%r21,%r22,%r23}, {%r0,%r1}, {%r2,%r3}, {%r4,%r5,%r6,%r7};",
                              "hhhhhhhh", 4);
    f16_results_match_general(PTX_HEAD,
                              "mma.sync.aligned.m8n8k4.col.row.f16.f16.f16.f16 {%r20,%r21,%r22,%r23}, {%r0,%r1}, {%r2,%r3}, {%r4,%r5,%r6,%r7};",
                              "hhhhhhhh", 4);
    f16_results_match_general(PTX_HEAD, "mma.sp.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r20,%r21}, {%r0,%r1}, {%r2,%r3}, {%r4,%r5}, %r6, 1;",
                              "hhhhhhm", 2);
    f16_results_match_general(PTX_HEAD,
                              "mma.sp.sync.aligned.m16n8k32.row.col.f16.f16.f16.f16 {%r20,%r21}, {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%r8,%r9}, %r10, 0;",
                              "hhhhhhhhhhm", 2);
    f16_results_match_general(PTX_HEAD,
                              "wmma.mma.sync.aligned.row.col.m16n16k16.f16.f16 {%r20,%r21,%r22,%r23}, {%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7}, "
                              "{%r8,%r9,%r10,%r11,%r12,%r13,%r14,%r15}, {%r16,%r17,%r18,%r19};",
                              "hhhhhhhhhhhhhhhhhhhh", 4);
    f16_results_match_general(PTX_HEAD,
                              "wmma.mma.sync.aligned.col.row.m16n16k16.f16.f32 {%r20,%r21,%r22,%r23}, {%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7}, "
                              "{%r8,%r9,%r10,%r11,%r12,%r13,%r14,%r15}, {%f0,%f1,%f2,%f3,%f4,%f5,%f6,%f7};",
                              "hhhhhhhhhhhhhhhhffffffff", 4);
}

/* wgmma m64nNk16 .f32.{f16,bf16} from shared-memory descriptors (no swizzle, K-major: any bytes are operands, so the
 * image is random codes) with its general_tensor_ops off and on: the f32 C read and D written by fours (rows g and
 * g + 8 of the thread's quad) against element by element and one fmaf per product, with C from the registers (the
 * first wgmma) and C in flight (the second, chained in one group, -A times B 32 bytes on), scale-d true and false; 4 warpgroups, each with
 * operands of one kind (near 1, tiny, huge, specials), every D register the same bits. */
Test(wgmma, fast_f32_accumulators_match_general) {
    static const unsigned ns[] = {8, 64, 256};
    for (unsigned fi = 0; fi < 6; fi++) {
        bool f16 = fi % 2 == 0;
        unsigned N = ns[fi / 2], nd = N / 2, img = 2048 + 32 * N + 32; /* A: 64 x 16 at 0; B: N x 16 at 2048, and 32 bytes on */
        Str s = {0};
        str_printf(&s, ".version 8.0\n.target sm_90a\n.address_size 64\n"
                       ".visible .entry k(.param .u64 pimg, .param .u64 pc, .param .u64 pout, .param .u64 da, .param .u64 db, .param .u32 scaled)\n{\n"
                       " .reg .pred %%p<2>;\n .reg .b32 %%r<16>;\n .reg .b64 %%rd<16>;\n .reg .f32 %%d<%u>;\n"
                       " .shared .align 1024 .b8 smem[%u];\n"
                       " mov.u32 %%r1, %%tid.x;\n mov.u32 %%r11, %%ctaid.x;\n ld.param.u64 %%rd0, [pimg];\n mul.wide.u32 %%rd1, %%r11, %u;\n"
                       " add.u64 %%rd0, %%rd0, %%rd1;\n mov.u32 %%r2, smem;\n shl.b32 %%r3, %%r1, 4;\n"
                       "$CP:\n setp.ge.u32 %%p0, %%r3, %u;\n @%%p0 bra $CPD;\n cvt.u64.u32 %%rd1, %%r3;\n add.u64 %%rd2, %%rd0, %%rd1;\n"
                       " ld.global.v4.b32 {%%r4, %%r5, %%r6, %%r7}, [%%rd2];\n add.u32 %%r8, %%r2, %%r3;\n"
                       " st.shared.v4.b32 [%%r8], {%%r4, %%r5, %%r6, %%r7};\n add.u32 %%r3, %%r3, 2048;\n bra $CP;\n"
                       "$CPD:\n bar.sync 0;\n fence.proxy.async.shared::cta;\n"
                       " ld.param.u64 %%rd3, [da];\n ld.param.u64 %%rd4, [db];\n shr.u32 %%r9, %%r2, 4;\n cvt.u64.u32 %%rd5, %%r9;\n"
                       " add.u64 %%rd3, %%rd3, %%rd5;\n add.u64 %%rd4, %%rd4, %%rd5;\n"
                       " mad.lo.u32 %%r12, %%r11, 128, %%r1;\n mul.wide.u32 %%rd9, %%r12, %u;\n ld.param.u64 %%rd8, [pc];\n add.u64 %%rd8, %%rd8, %%rd9;\n",
                   nd, img, img, img, 4 * nd);
        for (unsigned r = 0; r < nd; r++) str_printf(&s, " ld.global.f32 %%d%u, [%%rd8+%u];\n", r, 4 * r);
        str_printf(&s, " ld.param.u32 %%r10, [scaled];\n setp.ne.u32 %%p1, %%r10, 0;\n wgmma.fence.sync.aligned;\n");
        Str dv = {0};
        for (unsigned r = 0; r < nd; r++) str_printf(&dv, "%s%%d%u", r ? ", " : "", r);
        const char *ty = f16 ? "f16" : "bf16";
        str_printf(&s, " wgmma.mma_async.sync.aligned.m64n%uk16.f32.%s.%s {%s}, %%rd3, %%rd4, %%p1, 1, 1, 0, 0;\n", N, ty, ty, dv.buf ? dv.buf : "");
        str_printf(&s, " add.u64 %%rd4, %%rd4, 2;\n"); /* B 32 bytes on: other products */
        str_printf(&s, " wgmma.mma_async.sync.aligned.m64n%uk16.f32.%s.%s {%s}, %%rd3, %%rd4, 1, -1, 1, 0, 0;\n", N, ty, ty, dv.buf ? dv.buf : "");
        str_printf(&s, " wgmma.commit_group.sync.aligned;\n wgmma.wait_group.sync.aligned 0;\n ld.param.u64 %%rd10, [pout];\n"
                       " add.u64 %%rd10, %%rd10, %%rd9;\n");
        for (unsigned r = 0; r < nd; r++) str_printf(&s, " st.global.f32 [%%rd10+%u], %%d%u;\n", 4 * r, r);
        str_printf(&s, " ret;\n}\n");
        str_free(&dv);
        char *ptx = str_take(&s);
        check_ptxas_arch(ptx, "sm_90a");
        EmuMem mem;
        emu_mem_init(&mem);
        char *err = NULL;
        EmuModule *m = emu_module_parse(ptx, &mem, &err);
        cr_assert(m && emu_module_finalize(m, &mem, &err), "%s\n%s", err ? err : "", ptx);
        enum { CTAS = 4, T = CTAS * 128 };
        uint64_t dimg, dc, dout;
        cr_assert(emu_mem_alloc(&mem, CTAS * img, false, &dimg) && emu_mem_alloc(&mem, T * 4 * nd, false, &dc) &&
                  emu_mem_alloc(&mem, T * 4 * nd, false, &dout));
        uint32_t *iv = (uint32_t *)emu_mem_host(&mem, dimg, CTAS * img), *cv = (uint32_t *)emu_mem_host(&mem, dc, T * 4 * nd);
        for (unsigned i = 0; i < CTAS * img / 4; i++) { /* CTA c's operands of kind c */
            unsigned kind = i / (img / 4);
            for (unsigned h = 0; h < 2; h++) { /* bf16: edge_code's, the tiny ones (2^-87..2^-68) always tiny */
                uint64_t r = rnd64();
                uint32_t c = f16 ? f16_code(kind) : kind == 1 ? (uint32_t)(r & 0x8000) | (uint32_t)(40 + (r >> 20) % 20) << 7 | (uint32_t)(r & 0x7F)
                                                              : edge_code(kind, false);
                iv[i] = h ? iv[i] | c << 16 : c;
            }
        }
        for (unsigned i = 0; i < T * nd; i++) { /* C: any f32, subnormals and -0 among them, or an operand value */
            uint64_t r = rnd64();
            cv[i] = r % 4 == 0 ? (uint32_t)(r >> 32) : r % 4 == 1 ? (uint32_t)(r >> 40) & 0x807FFFFFu : f2u(edge_f32(i / (128 * nd), f16));
        }
        uint64_t da = (uint64_t)(1024 >> 4) << 16 | (uint64_t)(128 >> 4) << 32; /* start 0, LBO (64 / 8) 128, SBO 128 */
        uint64_t db = (uint64_t)(2048 >> 4) | (uint64_t)((N / 8 * 128) >> 4) << 16 | (uint64_t)(128 >> 4) << 32;
        uint32_t *got[2][3]; /* the specialised executor, the general one, the specialised one without F16C */
        for (unsigned scaled = 0; scaled < 2; scaled++)
            for (int general = 0; general < 3; general++) {
                memset(emu_mem_host(&mem, dout, T * 4 * nd), 0xA5, T * 4 * nd); /* poisoned */
                EmuOptions o = {.host_threads = 2, .timeout_seconds = 60, .general_tensor_ops = general == 1,
                                .portable_tensor_ops = general == 2};
                cr_assert(emu_launch(m, emu_module_find(m, "k"), (unsigned[]){CTAS, 1, 1}, (unsigned[]){128, 1, 1}, 0,
                                     (void *[]){&dimg, &dc, &dout, &da, &db, &scaled}, &o, NULL, &err),
                          "%s", err ? err : "");
                got[scaled][general] = malloc(T * 4 * nd);
                memcpy(got[scaled][general], emu_mem_host(&mem, dout, T * 4 * nd), T * 4 * nd);
            }
        unsigned nan = 0, inf = 0, sub = 0, other = 0;
        for (unsigned scaled = 0; scaled < 2; scaled++)
            for (unsigned i = 0; i < T * nd; i++) {
                uint32_t a = got[scaled][0][i], g = got[scaled][1][i];
                cr_assert_eq(a, g, "m64n%uk16 %s, scale-d %u, thread %u, D register %u: fast %#x, general %#x", N, ty, scaled, i / nd, i % nd, a, g);
                cr_assert_eq(got[scaled][2][i], g, "m64n%uk16 %s, scale-d %u, thread %u, D register %u: fast without F16C %#x, general %#x",
                             N, ty, scaled, i / nd, i % nd, got[scaled][2][i], g);
                a &= 0x7FFFFFFFu;
                if (a > 0x7F800000u) nan++;
                else if (a == 0x7F800000u) inf++;
                else if (a && a < 0x00800000u) sub++;
                else other++;
            }
        cr_assert(nan && inf && other > T, "m64n%u %s: %u NaN, %u infinite, %u subnormal, %u other", N, ty, nan, inf, sub, other);
        cr_assert(f16 || sub, "bf16: no subnormal results");
        for (unsigned i = 0; i < 6; i++) free(got[i / 3][i % 3]);
        free(ptx);
        emu_module_free(m);
        emu_mem_destroy(&mem);
    }
}

/* test_emu_instr.c - hand-written PTX, one instruction per case: each runs over special and random
 * operands (garbage in the upper halves of 32-bit operands) and is checked against an independent C
 * reference, exact bits or an error bound for .approx.  At the end: named barriers between warps with
 * roles, bar.red, votes, a 3-D block's special registers, module variables' initializers and local memory. */
#include "test_emu_util.h"
#include "support/hostfloat.h"
#include "tests/test_ptxas.h"

/* Inputs a, b, c are u64 arrays loaded into %rd1..3 and their low halves
 * %r1..3; the case's PTX leaves its result in %r4 (zero-extended) or, for
 * 64-bit results, %rd4. */
static const char *harness_fmt =
    ".version 8.1\n.target sm_90a\n.address_size 64\n"
    ".visible .entry k(.param .u64 k_a, .param .u64 k_b, .param .u64 k_c, .param .u64 k_d, .param .u32 k_n)\n{\n"
    " .reg .pred %%p<8>;\n .reg .b16 %%rs<8>;\n .reg .b32 %%r<16>;\n .reg .b64 %%rd<16>;\n"
    " mov.u32 %%r10, %%tid.x;\n mov.u32 %%r11, %%ctaid.x;\n mov.u32 %%r12, %%ntid.x;\n"
    " mad.lo.s32 %%r10, %%r11, %%r12, %%r10;\n ld.param.u32 %%r11, [k_n];\n"
    " setp.ge.u32 %%p7, %%r10, %%r11;\n @%%p7 bra $DONE;\n mul.wide.u32 %%rd10, %%r10, 8;\n"
    " ld.param.u64 %%rd11, [k_a];\n add.s64 %%rd11, %%rd11, %%rd10;\n ld.global.u64 %%rd1, [%%rd11];\n"
    " ld.param.u64 %%rd11, [k_b];\n add.s64 %%rd11, %%rd11, %%rd10;\n ld.global.u64 %%rd2, [%%rd11];\n"
    " ld.param.u64 %%rd11, [k_c];\n add.s64 %%rd11, %%rd11, %%rd10;\n ld.global.u64 %%rd3, [%%rd11];\n"
    " cvt.u32.u64 %%r1, %%rd1;\n cvt.u32.u64 %%r2, %%rd2;\n cvt.u32.u64 %%r3, %%rd3;\n"
    " mov.b32 %%r4, 0;\n mov.b64 %%rd4, 0;\n"
    " %s\n"
    " ld.param.u64 %%rd11, [k_d];\n add.s64 %%rd11, %%rd11, %%rd10;\n"
    " %s\n"
    "$DONE:\n ret;\n}\n";

enum { CMP_EXACT, CMP_FLOAT, CMP_ULP32, CMP_ABS32 };
typedef struct Case {
    const char *ptx;
    bool out64;
    uint64_t (*ref)(uint64_t a, uint64_t b, uint64_t c);
    int cmp;        /* CMP_FLOAT: same bits or both NaN (f32 in low half, or f64 when out64) */
    double tol;     /* CMP_ULP32: relative error bound; CMP_ABS32: absolute */
} Case;

#define F(x) u2f((uint32_t)(x))
#define D(x) u2d(x)
#define S32(x) ((int32_t)(uint32_t)(x))
#define U32(x) ((uint32_t)(x))
static uint64_t r_add_s32(uint64_t a, uint64_t b, uint64_t c) { (void)c; return U32(a + b); }
static uint64_t r_add_sat(uint64_t a, uint64_t b, uint64_t c) {
    (void)c; int64_t v = (int64_t)S32(a) + S32(b);
    return U32(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v);
}
static uint64_t r_mul_hi_s32(uint64_t a, uint64_t b, uint64_t c) { (void)c; return U32(((int64_t)S32(a) * S32(b)) >> 32); }
static uint64_t r_mul_hi_u32(uint64_t a, uint64_t b, uint64_t c) { (void)c; return U32(((uint64_t)U32(a) * U32(b)) >> 32); }
static uint64_t r_mad_lo(uint64_t a, uint64_t b, uint64_t c) { return U32(U32(a) * U32(b) + U32(c)); }
static uint64_t r_mul_wide_s32(uint64_t a, uint64_t b, uint64_t c) { (void)c; return (uint64_t)((int64_t)S32(a) * S32(b)); }
static uint64_t r_div_s32(uint64_t a, uint64_t b, uint64_t c) {
    (void)c; int32_t x = S32(a), y = S32(b);
    if (y == 0) return 0xFFFFFFFFu;
    if (x == INT32_MIN && y == -1) return U32(x);
    return U32(x / y);
}
static uint64_t r_rem_u32(uint64_t a, uint64_t b, uint64_t c) { (void)c; return U32(b) ? U32(a) % U32(b) : U32(a); }
static uint64_t r_min_u32(uint64_t a, uint64_t b, uint64_t c) { (void)c; return U32(a) < U32(b) ? U32(a) : U32(b); }
static uint64_t r_max_s32(uint64_t a, uint64_t b, uint64_t c) { (void)c; return U32(S32(a) > S32(b) ? S32(a) : S32(b)); }
static uint64_t r_abs_s32(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return U32(S32(a) < 0 ? 0u - U32(a) : U32(a)); }
static uint64_t r_shl(uint64_t a, uint64_t b, uint64_t c) { (void)c; return (b & 0xFFFFFFFF) > 31 ? 0 : U32(U32(a) << U32(b)); }
static uint64_t r_shr_s(uint64_t a, uint64_t b, uint64_t c) { (void)c; uint32_t s = U32(b) > 31 ? 31 : U32(b); return U32(S32(a) >> s); }
static uint64_t r_shr_u64(uint64_t a, uint64_t b, uint64_t c) { (void)c; return U32(b) > 63 ? 0 : a >> U32(b); }
static uint64_t r_popc(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; unsigned n = 0; for (uint32_t v = U32(a); v; v &= v - 1) n++; return n; }
static uint64_t r_clz(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; unsigned n = 0; for (int i = 31; i >= 0 && !((U32(a) >> i) & 1); i--) n++; return n; }
static uint64_t r_brev(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; uint32_t v = 0; for (int i = 0; i < 32; i++) if ((U32(a) >> i) & 1) v |= 1u << (31 - i); return v; }
static uint64_t r_bfe_u(uint64_t a, uint64_t b, uint64_t c) {
    unsigned pos = U32(b) & 0xFF, len = U32(c) & 0xFF; uint32_t v = 0;
    for (unsigned i = 0; i < len && i < 32; i++) if (pos + i < 32 && ((U32(a) >> (pos + i)) & 1)) v |= 1u << i;
    return v;
}
static uint64_t r_bfe_s(uint64_t a, uint64_t b, uint64_t c) {
    unsigned pos = U32(b) & 0xFF, len = U32(c) & 0xFF;
    if (len == 0) return 0;
    unsigned top = pos + len - 1 > 31 ? 31 : pos + len - 1;
    uint32_t sbit = (U32(a) >> top) & 1, v = 0;
    for (unsigned i = 0; i < 32; i++) {
        uint32_t bit = (i < len && pos + i < 32) ? (U32(a) >> (pos + i)) & 1 : sbit;
        v |= bit << i;
    }
    return v;
}
static uint64_t r_prmt(uint64_t a, uint64_t b, uint64_t c) {
    uint8_t bytes[8];
    for (int i = 0; i < 4; i++) { bytes[i] = (uint8_t)(U32(a) >> (8 * i)); bytes[4 + i] = (uint8_t)(U32(b) >> (8 * i)); }
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned s = (U32(c) >> (4 * i)) & 0xF;
        uint32_t by = bytes[s & 7];
        if (s & 8) by = (by & 0x80) ? 0xFF : 0;
        v |= by << (8 * i);
    }
    return v;
}
/* prmt's modes, from the PTX ISA's table: for c[1:0] = 0..3, the source bytes of d.b3 d.b2 d.b1 d.b0 */
static uint64_t prmt_mode(const char *const tab[4], uint64_t a, uint64_t b, uint64_t c) {
    uint8_t bytes[8];
    for (int i = 0; i < 4; i++) { bytes[i] = (uint8_t)(U32(a) >> (8 * i)); bytes[4 + i] = (uint8_t)(U32(b) >> (8 * i)); }
    const char *pat = tab[U32(c) & 3];
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)bytes[pat[3 - i] - '0'] << (8 * i);
    return v;
}
#define PRMT_REF(NAME, T0, T1, T2, T3)                                              \
    static uint64_t r_prmt_##NAME(uint64_t a, uint64_t b, uint64_t c) {             \
        static const char *const tab[4] = {T0, T1, T2, T3};                         \
        return prmt_mode(tab, a, b, c);                                             \
    }
PRMT_REF(f4e, "3210", "4321", "5432", "6543")
PRMT_REF(b4e, "5670", "6701", "7012", "0123")
PRMT_REF(rc8, "0000", "1111", "2222", "3333")
PRMT_REF(ecl, "3210", "3211", "3222", "3333")
PRMT_REF(ecr, "0000", "1110", "2210", "3210")
PRMT_REF(rc16, "1010", "3232", "1010", "3232")
static uint64_t r_setp_lt_s32(uint64_t a, uint64_t b, uint64_t c) { (void)c; return S32(a) < S32(b) ? 7 : 9; }
static uint64_t r_setp_hs_u64(uint64_t a, uint64_t b, uint64_t c) { (void)c; return a >= b; }
/* and/or/xor.pred of the operands' low bits (a third case: the second operand negated), as a selp of 7 or 9 */
static uint64_t r_and_pred(uint64_t a, uint64_t b, uint64_t c) { (void)c; return (a & b & 1) ? 7 : 9; }
static uint64_t r_or_pred(uint64_t a, uint64_t b, uint64_t c) { (void)c; return ((a | b) & 1) ? 7 : 9; }
static uint64_t r_xor_not_pred(uint64_t a, uint64_t b, uint64_t c) { (void)c; return ((a ^ ~b) & 1) ? 7 : 9; }
/* setp.f32 (ordered comparisons false on a NaN, unordered true), neg.f32 and abs.f32 (cases below),
 * integer cvt between 32 and 64 bits, 64-bit min/max and mov.b16: the interpreter's fast forms, each beside a form
 * of the same instruction that the general executor takes (a second predicate, .ftz, .sat, a 16-bit cvt) */
static uint64_t r_setp_lt_f32(uint64_t a, uint64_t b, uint64_t c) { (void)c; return F(a) < F(b) ? 7 : 9; }
static uint64_t r_setp_geu_f32(uint64_t a, uint64_t b, uint64_t c) { (void)c; return !(F(a) < F(b)) ? 7 : 9; }
static uint64_t r_setp_ne_f32(uint64_t a, uint64_t b, uint64_t c) { (void)c; return F(a) == F(a) && F(b) == F(b) && F(a) != F(b) ? 7 : 9; }
static uint64_t r_setp_nan_f32(uint64_t a, uint64_t b, uint64_t c) { (void)c; return isnan(F(a)) || isnan(F(b)) ? 7 : 9; }
static uint64_t r_setp_le_not_f32(uint64_t a, uint64_t b, uint64_t c) { (void)c; return !(F(a) <= F(b)) ? 7 : 9; }
static uint64_t r_fneg_ftz(uint64_t a, uint64_t b, uint64_t c) {
    (void)b; (void)c;
    return fabsf(F(a)) < 0x1p-126f && F(a) != 0 ? (U32(a) & 0x80000000u) ^ 0x80000000u : U32(a) ^ 0x80000000u;
}
static uint64_t r_cvt_s64_s32(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return (uint64_t)(int64_t)S32(a); }
static uint64_t r_cvt_u64_u32(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return U32(a); }
static uint64_t r_cvt_s64(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return a; }
static uint64_t r_cvt_sat_s32_s64(uint64_t a, uint64_t b, uint64_t c) {
    (void)b; (void)c; int64_t v = (int64_t)a;
    return U32(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v);
}
static uint64_t r_cvt_u64_u32_hi0(uint64_t a, uint64_t b, uint64_t c) { (void)a; (void)b; (void)c; return 0; }
static uint64_t r_cvt_s32_u64_hi(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return U32(U32(a) >> 31 ? 0xFFFFFFFFu : 0); }
static uint64_t r_min_s64(uint64_t a, uint64_t b, uint64_t c) { (void)c; return (int64_t)a < (int64_t)b ? a : b; }
static uint64_t r_max_s64(uint64_t a, uint64_t b, uint64_t c) { (void)c; return (int64_t)a > (int64_t)b ? a : b; }
static uint64_t r_min_u64(uint64_t a, uint64_t b, uint64_t c) { (void)c; return a < b ? a : b; }
static uint64_t r_max_u64(uint64_t a, uint64_t b, uint64_t c) { (void)c; return a > b ? a : b; }
static uint64_t r_mov_b16(uint64_t a, uint64_t b, uint64_t c) { (void)c; return U32(b) << 16 | (U32(a) >> 16); }
static uint64_t r_swap_halves(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return U32((U32(a) >> 16) | (U32(a) << 16)); }
static uint64_t r_fadd(uint64_t a, uint64_t b, uint64_t c) { (void)c; return f2u(F(a) + F(b)); }
static uint64_t r_fmul(uint64_t a, uint64_t b, uint64_t c) { (void)c; return f2u(F(a) * F(b)); }
static uint64_t r_ffma(uint64_t a, uint64_t b, uint64_t c) { return f2u(fmaf(F(a), F(b), F(c))); }
static uint64_t r_fdiv(uint64_t a, uint64_t b, uint64_t c) { (void)c; return f2u(F(a) / F(b)); }
static uint64_t r_fsqrt(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return f2u(sqrtf(F(a))); }
static uint64_t r_frcp(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return f2u(1.0f / F(a)); }
static float ftz(float x) { return (x != 0 && fabsf(x) < 0x1p-126f) ? copysignf(0.0f, x) : x; }
static uint64_t r_fadd_ftz(uint64_t a, uint64_t b, uint64_t c) { (void)c; return f2u(ftz(ftz(F(a)) + ftz(F(b)))); }
static uint64_t r_fmul_sat(uint64_t a, uint64_t b, uint64_t c) {
    (void)c; float v = F(a) * F(b);
    return f2u(!(v > 0) ? 0.0f : v > 1 ? 1.0f : v); /* NaN and -0 give +0, as an H200 does (bench/gpu/hw_facts.cu) */
}
static uint64_t r_fmin(uint64_t a, uint64_t b, uint64_t c) {
    (void)c; float x = F(a), y = F(b);
    if (isnan(x)) return f2u(y);
    if (isnan(y)) return f2u(x);
    if (x == 0 && y == 0) return f2u(signbit(x) ? x : y);
    return f2u(x < y ? x : y);
}
static uint64_t r_fmax(uint64_t a, uint64_t b, uint64_t c) {
    (void)c; float x = F(a), y = F(b);
    if (isnan(x)) return f2u(y);
    if (isnan(y)) return f2u(x);
    if (x == 0 && y == 0) return f2u(signbit(x) ? y : x);
    return f2u(x > y ? x : y);
}
/* .NaN: a NaN operand gives the canonical NaN 0x7fffffff */
static uint64_t r_fmin_nan(uint64_t a, uint64_t b, uint64_t c) { return isnan(F(a)) || isnan(F(b)) ? 0x7FFFFFFFu : r_fmin(a, b, c); }
static uint64_t r_fmax_nan(uint64_t a, uint64_t b, uint64_t c) { return isnan(F(a)) || isnan(F(b)) ? 0x7FFFFFFFu : r_fmax(a, b, c); }
static uint64_t r_fabs(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return U32(a) & 0x7FFFFFFFu; }
static uint64_t r_fneg(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return U32(a) ^ 0x80000000u; }
static uint64_t r_cvt_rni_s32(uint64_t a, uint64_t b, uint64_t c) {
    (void)b; (void)c; float x = F(a);
    if (isnan(x)) return 0;
    double r = nearbyint((double)x);
    return U32(r >= 2147483647.0 ? INT32_MAX : r <= -2147483648.0 ? INT32_MIN : (int32_t)r);
}
static uint64_t r_cvt_rmi_u32(uint64_t a, uint64_t b, uint64_t c) {
    (void)b; (void)c; float x = F(a);
    if (isnan(x) || x <= 0) return 0;
    double r = floor((double)x);
    return r >= 4294967295.0 ? 0xFFFFFFFFu : (uint32_t)r;
}
static uint64_t r_cvt_f32_s32(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return f2u((float)S32(a)); }
static uint64_t r_cvt_rz_f32_u32(uint64_t a, uint64_t b, uint64_t c) {
    (void)b; (void)c; double v = (double)U32(a); float f = (float)v;
    if ((double)f > v) f = nextafterf(f, 0.0f);
    return f2u(f);
}
static uint64_t r_cvt_f16(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return ref_f16(F(a)); }
static uint64_t r_cvt_f16_to_f32(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return f2u(ref_from_f16((uint16_t)a)); }
static uint64_t r_cvt_bf16(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return ref_bf16(F(a)); }
static uint64_t r_cvt_f16x2(uint64_t a, uint64_t b, uint64_t c) { (void)c; return ((uint32_t)ref_f16(F(a)) << 16) | ref_f16(F(b)); }
static uint64_t r_cvt_bf16x2(uint64_t a, uint64_t b, uint64_t c) { (void)c; return ((uint32_t)ref_bf16(F(a)) << 16) | ref_bf16(F(b)); }
static uint64_t r_add_f16x2(uint64_t a, uint64_t b, uint64_t c) {
    (void)c; uint32_t v = 0;
    for (int k = 0; k < 2; k++) {
        _Float16 x, y, s;
        uint16_t ux = (uint16_t)(a >> (16 * k)), uy = (uint16_t)(b >> (16 * k)), us;
        memcpy(&x, &ux, 2); memcpy(&y, &uy, 2);
        s = x + y;
        memcpy(&us, &s, 2);
        if (s != s) us = 0x7FFF;
        v |= (uint32_t)us << (16 * k);
    }
    return v;
}
static uint64_t r_setp_nan(uint64_t a, uint64_t b, uint64_t c) { (void)c; return isnan(F(a)) || isnan(F(b)); }
static uint64_t r_setp_geu(uint64_t a, uint64_t b, uint64_t c) { (void)c; return isnan(F(a)) || isnan(F(b)) || F(a) >= F(b); }
static uint64_t r_testp_sub(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return F(a) != 0 && fabsf(F(a)) < 0x1p-126f; }
static uint64_t r_ex2(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return f2u((float)exp2((double)F(a))); }
/* .ftz: a subnormal input is 0 (2^0 = 1), a subnormal result is 0 */
static uint64_t r_ex2_ftz(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return f2u(ftz((float)exp2((double)ftz(F(a))))); }
static uint64_t r_lg2(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return f2u((float)log2((double)F(a))); }
static uint64_t r_tanh(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return f2u((float)tanh((double)F(a))); }
static uint64_t r_cos(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return f2u((float)cos((double)F(a))); }
static uint64_t r_rsqrt(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return f2u((float)(1.0 / sqrt((double)F(a)))); }
static uint64_t r_dadd(uint64_t a, uint64_t b, uint64_t c) { (void)c; return d2u(D(a) + D(b)); }
static uint64_t r_dfma(uint64_t a, uint64_t b, uint64_t c) { return d2u(fma(D(a), D(b), D(c))); }
static uint64_t r_ddiv(uint64_t a, uint64_t b, uint64_t c) { (void)c; return d2u(D(a) / D(b)); }
static uint64_t r_cvt_f32_f64(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return f2u((float)D(a)); }
static uint64_t r_cvt_f64_f32(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return d2u((double)F(a)); }
static uint64_t r_cvt_f16_f64(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; _Float16 h = (_Float16)D(a); uint16_t u; memcpy(&u, &h, 2); return isnan(D(a)) ? 0x7FFF : u; }
static uint64_t r_cvt_rzi_s64_f64(uint64_t a, uint64_t b, uint64_t c) {
    (void)b; (void)c; double x = D(a);
    if (isnan(x)) return (uint64_t)INT64_MIN; /* the ISA: an f64 NaN to an integer gives 1 << (width - 1) */
    if (x >= 0x1p63) return (uint64_t)INT64_MAX;
    if (x <= -0x1p63) return (uint64_t)INT64_MIN;
    return (uint64_t)(int64_t)x;
}
static uint64_t r_mul_hi_u64(uint64_t a, uint64_t b, uint64_t c) { (void)c; return (uint64_t)(((unsigned __int128)a * b) >> 64); }
static uint64_t r_cvt_s8_sat(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; int32_t v = S32(a); return U32(v > 127 ? 127 : v < -128 ? -128 : v); }

/* carry chains: CC.CF after sub.cc is a carry (1: no borrow), as nvcc's 128-bit division reads it */
static uint64_t r_subcc_flag(uint64_t a, uint64_t b, uint64_t c) { (void)c; return U32(a) >= U32(b); }
static uint64_t r_subc_chain(uint64_t a, uint64_t b, uint64_t c) { return U32(U32(c) - U32(b) - (U32(a) < U32(b))); }
static uint64_t r_sub64_flag(uint64_t a, uint64_t b, uint64_t c) { /* (c:a) - (0:b) does not borrow */
    return ((uint64_t)U32(c) << 32 | U32(a)) >= U32(b);
}
static uint64_t r_addcc_after_sub(uint64_t a, uint64_t b, uint64_t c) { /* add.cc resets: its own carry */
    (void)b; return ((uint64_t)U32(a) + U32(c)) >> 32;
}
/* f16 fma rounded once (NaN: the canonical 0x7fff); relu: a negative result, or -0, is +0 */
static uint16_t f16_fma(uint16_t ua, uint16_t ub, uint16_t uc, bool relu) {
    _Float16 x, y, z;
    memcpy(&x, &ua, 2), memcpy(&y, &ub, 2), memcpy(&z, &uc, 2);
    double v = fma((double)x, (double)y, (double)z);
    if (isnan(v)) return 0x7FFF;
    _Float16 h = (_Float16)v;
    uint16_t u;
    if (relu && signbit((double)h)) h = 0;
    memcpy(&u, &h, 2);
    return u;
}
static uint16_t f16_fma_relu(uint16_t ua, uint16_t ub, uint16_t uc) { return f16_fma(ua, ub, uc, true); }
static uint64_t r_fma_relu_f16x2(uint64_t a, uint64_t b, uint64_t c) {
    return (uint32_t)f16_fma_relu((uint16_t)(a >> 16), (uint16_t)(b >> 16), (uint16_t)(c >> 16)) << 16 |
           f16_fma_relu((uint16_t)a, (uint16_t)b, (uint16_t)c);
}
/* fma.rn.oob: an operand that is the OOB-NaN of a tensor copy's NaN fill (0x7fff) gives +0, other NaNs stay NaN */
static uint16_t f16_fma_oob(uint16_t ua, uint16_t ub, uint16_t uc, bool relu) {
    if (ua == 0x7FFF || ub == 0x7FFF || uc == 0x7FFF) return 0;
    return f16_fma(ua, ub, uc, relu);
}
static uint64_t r_fma_oob_f16x2(uint64_t a, uint64_t b, uint64_t c) {
    return (uint32_t)f16_fma_oob((uint16_t)(a >> 16), (uint16_t)(b >> 16), (uint16_t)(c >> 16), false) << 16 |
           f16_fma_oob((uint16_t)a, (uint16_t)b, (uint16_t)c, false);
}
static uint64_t r_fma_oob_relu_f16(uint64_t a, uint64_t b, uint64_t c) {
    return f16_fma_oob((uint16_t)a, (uint16_t)b, (uint16_t)c, true);
}
static uint64_t r_cvt_relu_f16(uint64_t a, uint64_t b, uint64_t c) {
    (void)c; (void)b;
    uint16_t h = ref_f16(F(a));
    return h & 0x8000 ? 0 : h; /* a negative result, or -0: +0 (NaN is 0x7fff) */
}
static uint64_t r_cvt_satfinite_f16x2(uint64_t a, uint64_t b, uint64_t c) {
    (void)c;
    uint16_t hi = ref_f16(F(a)), lo = ref_f16(F(b));
    if ((hi & 0x7FFF) == 0x7C00) hi = (hi & 0x8000) | 0x7BFF;
    if ((lo & 0x7FFF) == 0x7C00) lo = (lo & 0x8000) | 0x7BFF;
    return (uint32_t)hi << 16 | lo;
}
static uint64_t r_cvt_satfinite_bf16(uint64_t a, uint64_t b, uint64_t c) {
    (void)b; (void)c;
    uint16_t h = ref_bf16(F(a));
    if ((h & 0x7FFF) == 0x7F80) h = (h & 0x8000) | 0x7F7F;
    return h;
}
static uint64_t r_cvt_relu_e4m3x2(uint64_t a, uint64_t b, uint64_t c) {
    (void)c;
    uint8_t hi, lo;
    float x = F(a), y = F(b);
    if (signbit(x) && !isnan(x)) x = 0;
    if (signbit(y) && !isnan(y)) y = 0;
    hi = d_to_f8((double)x, 0), lo = d_to_f8((double)y, 0);
    return (uint32_t)hi << 8 | lo;
}
/* cvt.pack.sat: a and b saturated to n bits, a above b; c's low bits above both (n < 16) */
static uint32_t pack_sat(uint64_t a, uint64_t b, uint64_t c, unsigned n, bool sg) {
    int64_t lo = sg ? -(1ll << (n - 1)) : 0, hi = sg ? (1ll << (n - 1)) - 1 : (1ll << n) - 1;
    int64_t x = S32(a), y = S32(b);
    x = x < lo ? lo : x > hi ? hi : x;
    y = y < lo ? lo : y > hi ? hi : y;
    uint32_t m = (uint32_t)((1ull << n) - 1);
    uint32_t d = ((uint32_t)x & m) << n | ((uint32_t)y & m);
    return n < 16 ? d | U32(c) << (2 * n) : d;
}
static uint64_t r_pack_s8(uint64_t a, uint64_t b, uint64_t c) { return pack_sat(a, b, c, 8, true); }
static uint64_t r_pack_u16(uint64_t a, uint64_t b, uint64_t c) { return pack_sat(a, b, c, 16, false); }
static uint64_t r_pack_s4(uint64_t a, uint64_t b, uint64_t c) { return pack_sat(a, b, c, 4, true); }
static uint64_t r_pack_u2(uint64_t a, uint64_t b, uint64_t c) { return pack_sat(a, b, c, 2, false); }
/* SIMD video instructions: op per lane of 8 (lanes 4) or 16 bits; 'a' add, 's' sub, 'v' average (the ISA's vavrg:
 * (s + 1) >> 1 for a sum s >= 0, else s >> 1), 'n' min, 'x' max, 'l' set.lt; as/bs: lanes signed; ds/sat: saturate
 * to the signed or unsigned lane range; add: c + the lanes' sum (test_emu_video.c has the selectors and masks) */
static uint64_t ref_video(char op, unsigned lanes, bool as, bool bs, bool ds, bool sat, bool add, uint64_t a, uint64_t b,
                          uint64_t c) {
    unsigned w = 32 / lanes;
    uint32_t m = lanes == 4 ? 0xFF : 0xFFFF, r = 0;
    int64_t lo = ds ? -(int64_t)(m / 2) - 1 : 0, hi = ds ? (int64_t)(m / 2) : (int64_t)m, sum = 0;
    for (unsigned i = 0; i < lanes; i++) {
        uint32_t ra = (U32(a) >> (w * i)) & m, rb = (U32(b) >> (w * i)) & m;
        int64_t x = as ? (lanes == 4 ? (int8_t)ra : (int16_t)ra) : (int64_t)ra;
        int64_t y = bs ? (lanes == 4 ? (int8_t)rb : (int16_t)rb) : (int64_t)rb;
        int64_t v = op == 'a' ? x + y : op == 's' ? x - y : op == 'v' ? (x + y >= 0 ? (x + y + 1) >> 1 : (x + y) >> 1)
                  : op == 'n' ? (x < y ? x : y) : op == 'x' ? (x > y ? x : y) : (x < y);
        sum += v;
        if (sat) v = v < lo ? lo : v > hi ? hi : v;
        r |= ((uint32_t)v & m) << (w * i);
    }
    return add ? U32((uint64_t)sum + U32(c)) : r;
}
static uint64_t r_vadd2_sat(uint64_t a, uint64_t b, uint64_t c) { return ref_video('a', 2, true, true, true, true, false, a, b, c); }
static uint64_t r_vsub4_u(uint64_t a, uint64_t b, uint64_t c) { return ref_video('s', 4, false, false, false, false, false, a, b, c); }
static uint64_t r_vavrg2_s(uint64_t a, uint64_t b, uint64_t c) { return ref_video('v', 2, true, true, true, false, false, a, b, c); }
static uint64_t r_vmax4_s(uint64_t a, uint64_t b, uint64_t c) { return ref_video('x', 4, true, true, true, false, false, a, b, c); }
static uint64_t r_vmin2_mixed_sat(uint64_t a, uint64_t b, uint64_t c) { return ref_video('n', 2, false, true, false, true, false, a, b, c); }
static uint64_t r_vset4_lt(uint64_t a, uint64_t b, uint64_t c) { return ref_video('l', 4, true, false, false, false, false, a, b, c); }
static uint64_t r_vadd4_add(uint64_t a, uint64_t b, uint64_t c) { return ref_video('a', 4, false, false, false, false, true, a, b, c); }
static uint64_t r_min_xorsign(uint64_t a, uint64_t b, uint64_t c) {
    (void)c;
    float x = F(a), y = F(b);
    if (isnan(x) && isnan(y)) return 0x7FFFFFFFu;
    /* one NaN: the other's magnitude, still with the XOR of the signs (fminf may return a signalling NaN) */
    float m = isnan(x) ? fabsf(y) : isnan(y) ? fabsf(x) : fminf(fabsf(x), fabsf(y));
    return f2u(signbit(x) != signbit(y) ? -m : m);
}
static uint64_t r_div_approx(uint64_t a, uint64_t b, uint64_t c) {
    (void)c;
    float x = F(a), y = F(b);
    if (fabsf(y) > 0x1p126f && isfinite(y)) return isinf(x) ? 0x7FFFFFFFu : f2u(copysignf(0.0f, x) * copysignf(1.0f, y));
    return f2u(x / y);
}

/* Forms compilers write that the cases above lacked: funnel shifts (rotates), bfind, lop3 truth tables,
 * sad, the .wide/.hi/24-bit multiplies, slct, copysign, testp, the 16-bit forms of .b16 registers (clang's i8
 * and i16 arithmetic) and 64-bit bit operations; each from the PTX ISA's definition. */
static uint64_t funnel(uint64_t a, uint64_t b) { return (uint64_t)U32(b) << 32 | U32(a); }
static uint32_t amount(uint64_t c, bool wrap) { uint32_t n = U32(c) & 63; return wrap ? n & 31 : n > 32 ? 32 : n; }
static uint64_t r_shf_l_wrap(uint64_t a, uint64_t b, uint64_t c) { return U32((funnel(a, b) << amount(c, true)) >> 32); }
static uint64_t r_shf_l_clamp(uint64_t a, uint64_t b, uint64_t c) { return U32((funnel(a, b) << amount(c, false)) >> 32); }
static uint64_t r_shf_r_wrap(uint64_t a, uint64_t b, uint64_t c) { return U32(funnel(a, b) >> amount(c, true)); }
static uint64_t r_shf_r_clamp(uint64_t a, uint64_t b, uint64_t c) { return U32(funnel(a, b) >> amount(c, false)); }
/* bfind: the position of the most significant non-sign bit, 0xffffffff if none; .shiftamt: the left shift that
 * makes it the top bit */
static uint64_t bfind_ref(uint64_t v, unsigned bits, bool sgn, bool shiftamt) {
    if (sgn && (v >> (bits - 1) & 1)) v = ~v;
    if (bits < 64) v &= (1ull << bits) - 1;
    if (!v) return 0xFFFFFFFFu;
    unsigned pos = bits - 1;
    while (!(v >> pos & 1)) pos--;
    return shiftamt ? bits - 1 - pos : pos;
}
static uint64_t r_bfind_u32(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return bfind_ref(a, 32, false, false); }
static uint64_t r_bfind_shiftamt_s32(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return bfind_ref(a, 32, true, true); }
static uint64_t r_bfind_s64(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return bfind_ref(a, 64, true, false); }
static uint64_t r_bfind_shiftamt_u64(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return bfind_ref(a, 64, false, true); }
/* lop3: bit i of d is bit (a_i b_i c_i, as a 3-bit number) of the table */
static uint64_t lop3_ref(uint32_t lut, uint32_t a, uint32_t b, uint32_t c) {
    uint32_t d = 0;
    for (unsigned i = 0; i < 32; i++) d |= (lut >> ((a >> i & 1) << 2 | (b >> i & 1) << 1 | (c >> i & 1)) & 1) << i;
    return d;
}
static uint64_t r_lop3_96(uint64_t a, uint64_t b, uint64_t c) { return lop3_ref(0x96, U32(a), U32(b), U32(c)); }
static uint64_t r_lop3_e8(uint64_t a, uint64_t b, uint64_t c) { return lop3_ref(0xE8, U32(a), U32(b), U32(c)); }
static uint64_t r_lop3_imm_6a(uint64_t a, uint64_t b, uint64_t c) { (void)b; return lop3_ref(0x6A, U32(a), 0x0F0F0F0Fu, U32(c)); }
static uint64_t r_sad_u32(uint64_t a, uint64_t b, uint64_t c) { return U32((U32(a) > U32(b) ? U32(a) - U32(b) : U32(b) - U32(a)) + U32(c)); }
static uint64_t r_sad_s32(uint64_t a, uint64_t b, uint64_t c) { int64_t d = (int64_t)S32(a) - S32(b); return U32((uint64_t)(d < 0 ? -d : d) + U32(c)); }
static uint64_t r_mad_wide_u32(uint64_t a, uint64_t b, uint64_t c) { return (uint64_t)U32(a) * U32(b) + c; }
static uint64_t r_mad_wide_s32(uint64_t a, uint64_t b, uint64_t c) { return (uint64_t)((int64_t)S32(a) * S32(b)) + c; }
static uint64_t r_mad_hi_u32(uint64_t a, uint64_t b, uint64_t c) { return U32(((uint64_t)U32(a) * U32(b) >> 32) + U32(c)); }
static uint64_t r_mad_hi_sat_s32(uint64_t a, uint64_t b, uint64_t c) {
    int64_t v = (((int64_t)S32(a) * S32(b)) >> 32) + S32(c);
    return U32(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v);
}
static int64_t s24(uint64_t x) { return (int64_t)((int32_t)(U32(x) << 8) >> 8); }
static uint64_t r_mul24_hi_u32(uint64_t a, uint64_t b, uint64_t c) { (void)c; return U32(((uint64_t)(U32(a) & 0xFFFFFF) * (U32(b) & 0xFFFFFF)) >> 16); }
static uint64_t r_mul24_hi_s32(uint64_t a, uint64_t b, uint64_t c) { (void)c; return U32((uint64_t)((s24(a) * s24(b)) >> 16)); }
static uint64_t r_mad24_lo_s32(uint64_t a, uint64_t b, uint64_t c) { return U32((uint64_t)(s24(a) * s24(b)) + U32(c)); }
static uint64_t r_mad24_hi_sat_s32(uint64_t a, uint64_t b, uint64_t c) {
    int64_t v = ((s24(a) * s24(b)) >> 16) + S32(c);
    return U32(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v);
}
static uint64_t r_slct_s32(uint64_t a, uint64_t b, uint64_t c) { return S32(c) >= 0 ? U32(a) : U32(b); }
static uint64_t r_slct_f32(uint64_t a, uint64_t b, uint64_t c) { return F(c) >= 0.0f ? U32(a) : U32(b); } /* a NaN c: b */
static uint64_t r_slct_ftz_f32(uint64_t a, uint64_t b, uint64_t c) {
    bool sub = (U32(c) & 0x7F800000u) == 0; /* a subnormal (or zero) c reads as a zero, which is >= 0 */
    return sub || F(c) >= 0.0f ? U32(a) : U32(b);
}
static uint64_t r_copysign_f32(uint64_t a, uint64_t b, uint64_t c) { (void)c; return (U32(b) & 0x7FFFFFFFu) | (U32(a) & 0x80000000u); }
static uint64_t r_copysign_f64(uint64_t a, uint64_t b, uint64_t c) { (void)c; return (b & ~(1ull << 63)) | (a & (1ull << 63)); }
static uint64_t r_testp_finite(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return isfinite(F(a)) != 0; }
static uint64_t r_testp_infinite(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return isinf(F(a)) != 0; }
static uint64_t r_testp_number(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return !isnan(F(a)); }
static uint64_t r_testp_notanumber(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return isnan(F(a)) != 0; }
static uint64_t r_testp_normal_f64(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return isnormal(D(a)) || D(a) == 0.0; }
/* .b16 registers: %rs1/%rs2 the halves of a, %rs3/%rs4 those of b */
#define U16(x) ((uint16_t)(x))
#define S16(x) ((int16_t)(uint16_t)(x))
static uint64_t r_mul_wide_u16(uint64_t a, uint64_t b, uint64_t c) { (void)c; return (uint32_t)U16(a) * U16(b); }
static uint64_t r_mul_wide_s16(uint64_t a, uint64_t b, uint64_t c) { (void)c; return U32((int32_t)S16(a >> 16) * S16(b >> 16)); }
static uint64_t r_mul_hi_s16(uint64_t a, uint64_t b, uint64_t c) { (void)c; return U16(((int32_t)S16(a) * S16(b)) >> 16); }
static uint64_t r_div_s16(uint64_t a, uint64_t b, uint64_t c) { (void)c; int32_t y = S16(U16(b) | 1); return U16(S16(a) / y); } /* -32768 / -1: 0x8000 */
static uint64_t r_rem_u16(uint64_t a, uint64_t b, uint64_t c) { (void)c; return U16(a) % (U16(b) | 1); }
static uint64_t r_shr_s16(uint64_t a, uint64_t b, uint64_t c) { (void)c; uint32_t s = U32(b) & 31; return U16(S16(a) >> (s > 15 ? 15 : s)); }
static uint64_t r_sad_s16(uint64_t a, uint64_t b, uint64_t c) { (void)c; int32_t d = S16(a) - S16(b); return U16((uint32_t)(d < 0 ? -d : d) + U16(a >> 16)); }
static uint64_t r_mad_lo_s16(uint64_t a, uint64_t b, uint64_t c) { (void)c; return U16((uint32_t)(S16(a) * S16(b)) + U16(a >> 16)); }
static uint64_t r_abs_s16(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return U16(S16(a) < 0 ? 0u - U16(a) : U16(a)); }
/* 64-bit bit operations and multiplies */
static uint64_t r_brev_b64(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; uint64_t v = 0; for (int i = 0; i < 64; i++) v |= (a >> i & 1) << (63 - i); return v; }
static uint64_t r_popc_b64(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; unsigned n = 0; for (; a; a &= a - 1) n++; return n; }
static uint64_t r_clz_b64(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; unsigned n = 0; for (int i = 63; i >= 0 && !(a >> i & 1); i--) n++; return n; }
static uint64_t r_bfe_s64(uint64_t a, uint64_t b, uint64_t c) {
    unsigned pos = U32(b) & 0xFF, len = U32(c) & 0xFF;
    if (len == 0) return 0;
    unsigned top = pos + len - 1 > 63 ? 63 : pos + len - 1;
    uint64_t sbit = a >> top & 1, v = 0;
    for (unsigned i = 0; i < 64; i++) v |= ((i < len && pos + i < 64) ? a >> (pos + i) & 1 : sbit) << i;
    return v;
}
static uint64_t r_bfi_b64(uint64_t a, uint64_t b, uint64_t c) {
    unsigned pos = U32(c) & 127, len = (U32(c) >> 8) & 127;
    uint64_t v = b;
    for (unsigned i = 0; i < len && pos + i < 64; i++) v = (v & ~(1ull << (pos + i))) | (a >> i & 1) << (pos + i);
    return v;
}
static uint64_t r_mul_hi_s64(uint64_t a, uint64_t b, uint64_t c) { (void)c; return (uint64_t)(((__int128)(int64_t)a * (int64_t)b) >> 64); }
static uint64_t r_mad_hi_s64(uint64_t a, uint64_t b, uint64_t c) { return (uint64_t)(((__int128)(int64_t)a * (int64_t)b) >> 64) + c; }
static uint64_t r_sad_u64(uint64_t a, uint64_t b, uint64_t c) { return (a > b ? a - b : b - a) + c; }
static uint64_t r_rem_s64(uint64_t a, uint64_t b, uint64_t c) {
    (void)c; int64_t x = (int64_t)a, y = (int64_t)(b | 1);
    return y == -1 ? 0 : (uint64_t)(x % y);
}
static uint64_t r_div_u64(uint64_t a, uint64_t b, uint64_t c) { (void)c; return a / (b | 1); }
/* packed half min/max: -0 below +0; .NaN: a NaN operand gives the canonical NaN, else a NaN loses to a number */
static uint16_t half_minmax(uint16_t x, uint16_t y, bool mx, bool nan, bool bf) {
    double dx = bf ? bf16_to_d(x) : f16_to_d(x), dy = bf ? bf16_to_d(y) : f16_to_d(y);
    if (isnan(dx) || isnan(dy)) return (nan || (isnan(dx) && isnan(dy))) ? 0x7FFF : isnan(dx) ? y : x;
    if (dx == dy) return (uint16_t)(mx ? (x & y) : (x | y)); /* +-0: the sign bits' and (max) or or (min) */
    return (mx ? dx > dy : dx < dy) ? x : y;
}
static uint64_t r_max_nan_f16x2(uint64_t a, uint64_t b, uint64_t c) {
    (void)c; return (uint32_t)half_minmax(U16(a >> 16), U16(b >> 16), true, true, false) << 16 | half_minmax(U16(a), U16(b), true, true, false);
}
static uint64_t r_min_bf16x2(uint64_t a, uint64_t b, uint64_t c) {
    (void)c; return (uint32_t)half_minmax(U16(a >> 16), U16(b >> 16), false, false, true) << 16 | half_minmax(U16(a), U16(b), false, false, true);
}
/* The f16/bf16 arithmetic fast form (add, sub, mul, fma without .ftz/.sat/.relu/.oob): a lane's sum, difference or
 * product, exact in double, rounded once to nearest even; f16 by the host's conversion, bf16 by scaling to its last
 * place (8 significant bits, the smallest quantum 2^-133); a NaN the canonical 0x7fff.  fma: f16_fma above. */
static uint16_t ref_round_bf16(double v) {
    if (isnan(v)) return 0x7FFF;
    int e;
    (void)frexp(v, &e);
    double q = v == 0 || isinf(v) ? 0x1p-133 : ldexp(1.0, e - 8);
    if (q < 0x1p-133) q = 0x1p-133;
    double r = isinf(v) ? v : nearbyint(v / q) * q;
    if (fabs(r) >= 0x1p128) r = copysign(INFINITY, r);
    return (uint16_t)(f2u((float)r) >> 16);
}
static uint16_t ref_half_op(char op, bool bf, uint16_t ua, uint16_t ub, uint16_t uc) {
    if (op == 'f') return f16_fma(ua, ub, uc, false);
    double a, b;
    if (bf) a = (double)u2f((uint32_t)ua << 16), b = (double)u2f((uint32_t)ub << 16);
    else {
        _Float16 x, y;
        memcpy(&x, &ua, 2), memcpy(&y, &ub, 2);
        a = x, b = y;
    }
    double v = op == '+' ? a + b : op == '-' ? a - b : a * b;
    if (bf) return ref_round_bf16(v);
    if (isnan(v)) return 0x7FFF;
    _Float16 h = (_Float16)v;
    uint16_t u;
    memcpy(&u, &h, 2);
    return u;
}
static uint64_t ref_half_pair(char op, bool bf, uint64_t a, uint64_t b, uint64_t c) {
    return (uint32_t)ref_half_op(op, bf, U16(a >> 16), U16(b >> 16), U16(c >> 16)) << 16 | ref_half_op(op, bf, U16(a), U16(b), U16(c));
}
static uint64_t r_fma_f16x2(uint64_t a, uint64_t b, uint64_t c) { return ref_half_pair('f', false, a, b, c); }
static uint64_t r_mul_bf16x2(uint64_t a, uint64_t b, uint64_t c) { return ref_half_pair('*', true, a, b, c); }
static uint64_t r_add_bf16x2(uint64_t a, uint64_t b, uint64_t c) { return ref_half_pair('+', true, a, b, c); }
static uint64_t r_sub_mul_f16(uint64_t a, uint64_t b, uint64_t c) { /* sub.f16 of the low halves above mul.f16 of the high */
    (void)c; return (uint32_t)ref_half_op('*', false, U16(a >> 16), U16(b >> 16), 0) << 16 | ref_half_op('-', false, U16(a), U16(b), 0);
}
/* and.b16 of the low halves above xor.b16 of them; or.b16 */
static uint64_t r_and_xor_b16(uint64_t a, uint64_t b, uint64_t c) { (void)c; return (uint32_t)U16(a & b) << 16 | U16(a ^ b); }
static uint64_t r_or_b16(uint64_t a, uint64_t b, uint64_t c) { (void)c; return U16(a | b); }
static uint64_t r_max_u32(uint64_t a, uint64_t b, uint64_t c) { (void)c; return U32(a) > U32(b) ? U32(a) : U32(b); }
/* st.global.b16 of a's low half into c's bytes 2..3, read back with ld.global.u16 and, with c's bytes 6..7,
 * ld.global.b16 into a 32-bit register */
static uint64_t r_ldst_b16(uint64_t a, uint64_t b, uint64_t c) { (void)b; return (uint32_t)U16(c >> 48) << 16 | U16(a); }
static uint64_t r_cnot_b32(uint64_t a, uint64_t b, uint64_t c) { (void)b; (void)c; return U32(a) == 0; }

static const Case cases[] = {
    {"add.s32 %r4, %r1, %r2;", false, r_add_s32, CMP_EXACT, 0},
    {"add.sat.s32 %r4, %r1, %r2;", false, r_add_sat, CMP_EXACT, 0},
    {"mul.hi.s32 %r4, %r1, %r2;", false, r_mul_hi_s32, CMP_EXACT, 0},
    {"mul.hi.u32 %r4, %r1, %r2;", false, r_mul_hi_u32, CMP_EXACT, 0},
    {"mad.lo.s32 %r4, %r1, %r2, %r3;", false, r_mad_lo, CMP_EXACT, 0},
    {"mul.wide.s32 %rd4, %r1, %r2;", true, r_mul_wide_s32, CMP_EXACT, 0},
    {"div.s32 %r4, %r1, %r2;", false, r_div_s32, CMP_EXACT, 0},
    {"rem.u32 %r4, %r1, %r2;", false, r_rem_u32, CMP_EXACT, 0},
    {"min.u32 %r4, %r1, %r2;", false, r_min_u32, CMP_EXACT, 0},
    {"max.s32 %r4, %r1, %r2;", false, r_max_s32, CMP_EXACT, 0},
    {"abs.s32 %r4, %r1;", false, r_abs_s32, CMP_EXACT, 0},
    {"shl.b32 %r4, %r1, %r2;", false, r_shl, CMP_EXACT, 0},
    {"shr.s32 %r4, %r1, %r2;", false, r_shr_s, CMP_EXACT, 0},
    {"shr.u64 %rd4, %rd1, %r2;", true, r_shr_u64, CMP_EXACT, 0},
    {"popc.b32 %r4, %r1;", false, r_popc, CMP_EXACT, 0},
    {"clz.b32 %r4, %r1;", false, r_clz, CMP_EXACT, 0},
    {"brev.b32 %r4, %r1;", false, r_brev, CMP_EXACT, 0},
    {"bfe.u32 %r4, %r1, %r2, %r3;", false, r_bfe_u, CMP_EXACT, 0},
    {"bfe.s32 %r4, %r1, %r2, %r3;", false, r_bfe_s, CMP_EXACT, 0},
    {"prmt.b32 %r4, %r1, %r2, %r3;", false, r_prmt, CMP_EXACT, 0},
    {"prmt.b32.f4e %r4, %r1, %r2, %r3;", false, r_prmt_f4e, CMP_EXACT, 0},
    {"prmt.b32.b4e %r4, %r1, %r2, %r3;", false, r_prmt_b4e, CMP_EXACT, 0},
    {"prmt.b32.rc8 %r4, %r1, %r2, %r3;", false, r_prmt_rc8, CMP_EXACT, 0},
    {"prmt.b32.ecl %r4, %r1, %r2, %r3;", false, r_prmt_ecl, CMP_EXACT, 0},
    {"prmt.b32.ecr %r4, %r1, %r2, %r3;", false, r_prmt_ecr, CMP_EXACT, 0},
    {"prmt.b32.rc16 %r4, %r1, %r2, %r3;", false, r_prmt_rc16, CMP_EXACT, 0},
    {"setp.lt.s32 %p1, %r1, %r2;\n selp.b32 %r4, 7, 9, %p1;", false, r_setp_lt_s32, CMP_EXACT, 0},
    {"setp.lt.u64 %p1|%p2, %rd1, %rd2;\n selp.b32 %r4, 1, 0, %p2;", false, r_setp_hs_u64, CMP_EXACT, 0},
    {"mov.b32 {%rs1, %rs2}, %r1;\n mov.b32 %r4, {%rs2, %rs1};", false, r_swap_halves, CMP_EXACT, 0},
#define PRED2 "and.b32 %r5, %r1, 1;\n setp.ne.u32 %p1, %r5, 0;\n and.b32 %r6, %r2, 1;\n setp.ne.u32 %p2, %r6, 0;\n "
    {PRED2 "and.pred %p3, %p1, %p2;\n selp.b32 %r4, 7, 9, %p3;", false, r_and_pred, CMP_EXACT, 0},
    {PRED2 "or.pred %p3, %p1, %p2;\n selp.b32 %r4, 7, 9, %p3;", false, r_or_pred, CMP_EXACT, 0},
    {PRED2 "xor.pred %p3, %p1, !%p2;\n selp.b32 %r4, 7, 9, %p3;", false, r_xor_not_pred, CMP_EXACT, 0},
#undef PRED2
    {"setp.lt.f32 %p1, %r1, %r2;\n selp.b32 %r4, 7, 9, %p1;", false, r_setp_lt_f32, CMP_EXACT, 0},
    {"setp.geu.f32 %p1, %r1, %r2;\n selp.b32 %r4, 7, 9, %p1;", false, r_setp_geu_f32, CMP_EXACT, 0},
    {"setp.ne.f32 %p1, %r1, %r2;\n selp.b32 %r4, 7, 9, %p1;", false, r_setp_ne_f32, CMP_EXACT, 0},
    {"setp.nan.f32 %p1, %r1, %r2;\n selp.b32 %r4, 7, 9, %p1;", false, r_setp_nan_f32, CMP_EXACT, 0},
    {"setp.le.f32 %p1|%p2, %r1, %r2;\n selp.b32 %r4, 7, 9, %p2;", false, r_setp_le_not_f32, CMP_EXACT, 0},
    {"neg.ftz.f32 %r4, %r1;", false, r_fneg_ftz, CMP_EXACT, 0},
    {"cvt.s64.s32 %rd4, %r1;", true, r_cvt_s64_s32, CMP_EXACT, 0},
    {"cvt.u64.u32 %rd4, %r1;", true, r_cvt_u64_u32, CMP_EXACT, 0},
    {"cvt.u64.s32 %rd4, %r1;", true, r_cvt_s64_s32, CMP_EXACT, 0},
    {"cvt.s64.u32 %rd4, %r1;", true, r_cvt_u64_u32, CMP_EXACT, 0},
    {"cvt.s64.u64 %rd4, %rd1;", true, r_cvt_s64, CMP_EXACT, 0},
    {"cvt.s32.u64 %r5, %rd1;\n cvt.u64.u32 %rd5, %r5;\n shr.u64 %rd5, %rd5, 32;\n cvt.u32.u64 %r4, %rd5;", false, r_cvt_u64_u32_hi0, CMP_EXACT, 0},
    {"cvt.s32.u64 %r5, %rd1;\n cvt.s64.s32 %rd5, %r5;\n shr.u64 %rd5, %rd5, 32;\n cvt.u32.u64 %r4, %rd5;", false, r_cvt_s32_u64_hi, CMP_EXACT, 0},
    {"cvt.sat.s32.s64 %r4, %rd1;", false, r_cvt_sat_s32_s64, CMP_EXACT, 0},
    {"min.s64 %rd4, %rd1, %rd2;", true, r_min_s64, CMP_EXACT, 0},
    {"max.s64 %rd4, %rd1, %rd2;", true, r_max_s64, CMP_EXACT, 0},
    {"min.u64 %rd4, %rd1, %rd2;", true, r_min_u64, CMP_EXACT, 0},
    {"max.u64 %rd4, %rd1, %rd2;", true, r_max_u64, CMP_EXACT, 0},
    /* ld.shared.v2.b16 (its fast form): each thread's 8 bytes, the word read back as two halves */
    {"{ .shared .align 8 .b8 sm[2048];\n mov.u32 %r5, %tid.x;\n shl.b32 %r5, %r5, 3;\n mov.u32 %r6, sm;\n add.u32 %r5, %r5, %r6;\n"
     " st.shared.u32 [%r5], %r1;\n st.shared.u32 [%r5+4], 0;\n ld.shared.v2.b16 {%rs1, %rs2}, [%r5];\n mov.b32 %r4, {%rs2, %rs1}; }",
     false, r_swap_halves, CMP_EXACT, 0},
    {"mov.b32 {%rs1, %rs2}, %r1;\n mov.b32 {%rs3, %rs4}, %r2;\n mov.b16 %rs5, %rs2;\n mov.b16 %rs6, %rs3;\n mov.b32 %r4, {%rs5, %rs6};",
     false, r_mov_b16, CMP_EXACT, 0},
    {"add.rn.f32 %r4, %r1, %r2;", false, r_fadd, CMP_FLOAT, 0},
    {"add.f32 %r4, %r1, 0f00000000;\n mul.rn.f32 %r4, %r1, %r2;", false, r_fmul, CMP_FLOAT, 0},
    {"fma.rn.f32 %r4, %r1, %r2, %r3;", false, r_ffma, CMP_FLOAT, 0},
    {"div.rn.f32 %r4, %r1, %r2;", false, r_fdiv, CMP_FLOAT, 0},
    {"div.full.f32 %r4, %r1, %r2;", false, r_fdiv, CMP_ULP32, 0x1p-22},
    {"sqrt.rn.f32 %r4, %r1;", false, r_fsqrt, CMP_FLOAT, 0},
    {"rcp.rn.f32 %r4, %r1;", false, r_frcp, CMP_FLOAT, 0},
    {"add.ftz.f32 %r4, %r1, %r2;", false, r_fadd_ftz, CMP_FLOAT, 0},
    {"mul.sat.f32 %r4, %r1, %r2;", false, r_fmul_sat, CMP_FLOAT, 0},
    {"min.f32 %r4, %r1, %r2;", false, r_fmin, CMP_FLOAT, 0},
    {"max.f32 %r4, %r1, %r2;", false, r_fmax, CMP_FLOAT, 0},
    {"min.NaN.f32 %r4, %r1, %r2;", false, r_fmin_nan, CMP_EXACT, 0},
    {"max.NaN.f32 %r4, %r1, %r2;", false, r_fmax_nan, CMP_EXACT, 0},
    {"abs.f32 %r4, %r1;", false, r_fabs, CMP_EXACT, 0}, /* the sign bit: a NaN keeps its payload */
    {"neg.f32 %r4, %r1;", false, r_fneg, CMP_EXACT, 0},
    {"cvt.rni.s32.f32 %r4, %r1;", false, r_cvt_rni_s32, CMP_EXACT, 0},
    {"cvt.rmi.u32.f32 %r4, %r1;", false, r_cvt_rmi_u32, CMP_EXACT, 0},
    {"cvt.rn.f32.s32 %r4, %r1;", false, r_cvt_f32_s32, CMP_FLOAT, 0},
    {"cvt.rz.f32.u32 %r4, %r1;", false, r_cvt_rz_f32_u32, CMP_FLOAT, 0},
    {"cvt.rn.f16.f32 %rs1, %r1;\n cvt.u32.u16 %r4, %rs1;", false, r_cvt_f16, CMP_EXACT, 0},
    {"cvt.u16.u32 %rs1, %r1;\n cvt.f32.f16 %r4, %rs1;", false, r_cvt_f16_to_f32, CMP_FLOAT, 0},
    {"cvt.rn.bf16.f32 %rs1, %r1;\n mov.b16 %rs2, %rs1;\n cvt.u32.u16 %r4, %rs2;", false, r_cvt_bf16, CMP_EXACT, 0},
    {"cvt.rn.f16x2.f32 %r4, %r1, %r2;", false, r_cvt_f16x2, CMP_EXACT, 0},
    {"cvt.rn.bf16x2.f32 %r4, %r1, %r2;", false, r_cvt_bf16x2, CMP_EXACT, 0},
    {"add.rn.f16x2 %r4, %r1, %r2;", false, r_add_f16x2, CMP_EXACT, 0},
    {"setp.nan.f32 %p1, %r1, %r2;\n selp.u32 %r4, 1, 0, %p1;", false, r_setp_nan, CMP_EXACT, 0},
    {"setp.geu.f32 %p1, %r1, %r2;\n selp.u32 %r4, 1, 0, %p1;", false, r_setp_geu, CMP_EXACT, 0},
    {"testp.subnormal.f32 %p1, %r1;\n @%p1 mov.b32 %r4, 1;", false, r_testp_sub, CMP_EXACT, 0},
    {"ex2.approx.f32 %r4, %r1;", false, r_ex2, CMP_ULP32, 0x1p-22},
    {"ex2.approx.ftz.f32 %r4, %r1;", false, r_ex2_ftz, CMP_FLOAT, 0}, /* exact compare: checks the flush */
    {"lg2.approx.f32 %r4, %r1;", false, r_lg2, CMP_ABS32, 0x1p-21},
    {"tanh.approx.f32 %r4, %r1;", false, r_tanh, CMP_ABS32, 0x1p-10},
    {"cos.approx.f32 %r4, %r1;", false, r_cos, CMP_ABS32, 0x1p-20},
    {"rsqrt.approx.f32 %r4, %r1;", false, r_rsqrt, CMP_ULP32, 0x1p-22},
    {"add.rn.f64 %rd4, %rd1, %rd2;", true, r_dadd, CMP_FLOAT, 0},
    {"fma.rn.f64 %rd4, %rd1, %rd2, %rd3;", true, r_dfma, CMP_FLOAT, 0},
    {"div.rn.f64 %rd4, %rd1, %rd2;", true, r_ddiv, CMP_FLOAT, 0},
    {"cvt.rn.f32.f64 %r4, %rd1;", false, r_cvt_f32_f64, CMP_FLOAT, 0},
    {"cvt.f64.f32 %rd4, %r1;", true, r_cvt_f64_f32, CMP_FLOAT, 0},
    {"cvt.rn.f16.f64 %rs1, %rd1;\n cvt.u32.u16 %r4, %rs1;", false, r_cvt_f16_f64, CMP_EXACT, 0},
    {"cvt.rzi.s64.f64 %rd4, %rd1;", true, r_cvt_rzi_s64_f64, CMP_EXACT, 0},
    {"mul.hi.u64 %rd4, %rd1, %rd2;", true, r_mul_hi_u64, CMP_EXACT, 0},
    {"cvt.sat.s8.s32 %r4, %r1;\n and.b32 %r4, %r4, 0xFFFFFFFF;", false, r_cvt_s8_sat, CMP_EXACT, 0},
    {"sub.cc.u32 %r5, %r1, %r2;\n addc.u32 %r4, 0, 0;", false, r_subcc_flag, CMP_EXACT, 0},
    {"sub.cc.u32 %r5, %r1, %r2;\n subc.u32 %r4, %r3, %r2;", false, r_subc_chain, CMP_EXACT, 0},
    {"sub.cc.u32 %r5, %r1, %r2;\n subc.cc.u32 %r6, %r3, 0;\n addc.u32 %r4, 0, 0;", false, r_sub64_flag, CMP_EXACT, 0},
    {"sub.cc.u32 %r5, %r1, %r2;\n add.cc.u32 %r6, %r1, %r3;\n addc.u32 %r4, 0, 0;", false, r_addcc_after_sub, CMP_EXACT, 0},
    {"fma.rn.relu.f16x2 %r4, %r1, %r2, %r3;", false, r_fma_relu_f16x2, CMP_EXACT, 0},
    {"cvt.rn.relu.f16.f32 %rs1, %r1;\n cvt.u32.u16 %r4, %rs1;", false, r_cvt_relu_f16, CMP_EXACT, 0},
    {"cvt.rn.satfinite.f16x2.f32 %r4, %r1, %r2;", false, r_cvt_satfinite_f16x2, CMP_EXACT, 0},
    {"cvt.rn.satfinite.bf16.f32 %rs1, %r1;\n cvt.u32.u16 %r4, %rs1;", false, r_cvt_satfinite_bf16, CMP_EXACT, 0},
    {"min.xorsign.abs.f32 %r4, %r1, %r2;", false, r_min_xorsign, CMP_FLOAT, 0},
    {"cvt.pack.sat.s8.s32.b32 %r4, %r1, %r2, %r3;", false, r_pack_s8, CMP_EXACT, 0},
    {"vadd2.s32.s32.s32.sat %r4, %r1, %r2, %r3;", false, r_vadd2_sat, CMP_EXACT, 0},
    {"vsub4.u32.u32.u32 %r4, %r1, %r2, %r3;", false, r_vsub4_u, CMP_EXACT, 0},
    {"vavrg2.s32.s32.s32 %r4, %r1, %r2, %r3;", false, r_vavrg2_s, CMP_EXACT, 0},
    {"vmax4.s32.s32.s32 %r4, %r1, %r2, %r3;", false, r_vmax4_s, CMP_EXACT, 0},
    {"vmin2.u32.u32.s32.sat %r4, %r1, %r2, %r3;", false, r_vmin2_mixed_sat, CMP_EXACT, 0},
    {"vset4.s32.u32.lt %r4, %r1, %r2, %r3;", false, r_vset4_lt, CMP_EXACT, 0},
    {"vadd4.u32.u32.u32.add %r4, %r1, %r2, %r3;", false, r_vadd4_add, CMP_EXACT, 0},
    {"cvt.pack.sat.u16.s32 %r4, %r1, %r2;", false, r_pack_u16, CMP_EXACT, 0},
    {"cvt.pack.sat.s4.s32.b32 %r4, %r1, %r2, %r3;", false, r_pack_s4, CMP_EXACT, 0},
    {"cvt.pack.sat.u2.s32.b32 %r4, %r1, %r2, %r3;", false, r_pack_u2, CMP_EXACT, 0},
    {"cvt.rn.satfinite.relu.e4m3x2.f32 %rs1, %r1, %r2;\n cvt.u32.u16 %r4, %rs1;", false, r_cvt_relu_e4m3x2, CMP_EXACT, 0},
    {"div.approx.f32 %r4, %r1, %r2;", false, r_div_approx, CMP_ULP32, 0x1p-21},
    {"fma.rn.oob.f16x2 %r4, %r1, %r2, %r3;", false, r_fma_oob_f16x2, CMP_EXACT, 0},
    {"mov.b32 {%rs1, %rs2}, %r1;\n mov.b32 {%rs3, %rs4}, %r2;\n mov.b32 {%rs5, %rs6}, %r3;\n"
     " fma.rn.oob.relu.f16 %rs7, %rs1, %rs3, %rs5;\n cvt.u32.u16 %r4, %rs7;", false, r_fma_oob_relu_f16, CMP_EXACT, 0},
#define AMT "and.b32 %r5, %r3, 63;\n "
    {AMT "shf.l.wrap.b32 %r4, %r1, %r2, %r5;", false, r_shf_l_wrap, CMP_EXACT, 0},
    {AMT "shf.l.clamp.b32 %r4, %r1, %r2, %r5;", false, r_shf_l_clamp, CMP_EXACT, 0},
    {AMT "shf.r.wrap.b32 %r4, %r1, %r2, %r5;", false, r_shf_r_wrap, CMP_EXACT, 0},
    {AMT "shf.r.clamp.b32 %r4, %r1, %r2, %r5;", false, r_shf_r_clamp, CMP_EXACT, 0},
#undef AMT
    {"bfind.u32 %r4, %r1;", false, r_bfind_u32, CMP_EXACT, 0},
    {"bfind.shiftamt.s32 %r4, %r1;", false, r_bfind_shiftamt_s32, CMP_EXACT, 0},
    {"bfind.s64 %r4, %rd1;", false, r_bfind_s64, CMP_EXACT, 0},
    {"bfind.shiftamt.u64 %r4, %rd1;", false, r_bfind_shiftamt_u64, CMP_EXACT, 0},
    {"lop3.b32 %r4, %r1, %r2, %r3, 0x96;", false, r_lop3_96, CMP_EXACT, 0},
    {"lop3.b32 %r4, %r1, %r2, %r3, 0xE8;", false, r_lop3_e8, CMP_EXACT, 0},
    {"lop3.b32 %r4, %r1, 0x0F0F0F0F, %r3, 0x6A;", false, r_lop3_imm_6a, CMP_EXACT, 0},
    {"sad.u32 %r4, %r1, %r2, %r3;", false, r_sad_u32, CMP_EXACT, 0},
    {"sad.s32 %r4, %r1, %r2, %r3;", false, r_sad_s32, CMP_EXACT, 0},
    {"mad.wide.u32 %rd4, %r1, %r2, %rd3;", true, r_mad_wide_u32, CMP_EXACT, 0},
    {"mad.wide.s32 %rd4, %r1, %r2, %rd3;", true, r_mad_wide_s32, CMP_EXACT, 0},
    {"mad.hi.u32 %r4, %r1, %r2, %r3;", false, r_mad_hi_u32, CMP_EXACT, 0},
    {"mad.hi.sat.s32 %r4, %r1, %r2, %r3;", false, r_mad_hi_sat_s32, CMP_EXACT, 0},
    {"mul24.hi.u32 %r4, %r1, %r2;", false, r_mul24_hi_u32, CMP_EXACT, 0},
    {"mul24.hi.s32 %r4, %r1, %r2;", false, r_mul24_hi_s32, CMP_EXACT, 0},
    {"mad24.lo.s32 %r4, %r1, %r2, %r3;", false, r_mad24_lo_s32, CMP_EXACT, 0},
    {"mad24.hi.sat.s32 %r4, %r1, %r2, %r3;", false, r_mad24_hi_sat_s32, CMP_EXACT, 0},
    {"slct.u32.s32 %r4, %r1, %r2, %r3;", false, r_slct_s32, CMP_EXACT, 0},
    {"slct.u32.f32 %r4, %r1, %r2, %r3;", false, r_slct_f32, CMP_EXACT, 0},
    {"slct.ftz.b32.f32 %r4, %r1, %r2, %r3;", false, r_slct_ftz_f32, CMP_EXACT, 0},
    {"copysign.f32 %r4, %r1, %r2;", false, r_copysign_f32, CMP_EXACT, 0},
    {"copysign.f64 %rd4, %rd1, %rd2;", true, r_copysign_f64, CMP_EXACT, 0},
    {"testp.finite.f32 %p1, %r1;\n selp.u32 %r4, 1, 0, %p1;", false, r_testp_finite, CMP_EXACT, 0},
    {"testp.infinite.f32 %p1, %r1;\n selp.u32 %r4, 1, 0, %p1;", false, r_testp_infinite, CMP_EXACT, 0},
    {"testp.number.f32 %p1, %r1;\n selp.u32 %r4, 1, 0, %p1;", false, r_testp_number, CMP_EXACT, 0},
    {"testp.notanumber.f32 %p1, %r1;\n selp.u32 %r4, 1, 0, %p1;", false, r_testp_notanumber, CMP_EXACT, 0},
    {"testp.normal.f64 %p1, %rd1;\n selp.u32 %r4, 1, 0, %p1;", false, r_testp_normal_f64, CMP_EXACT, 0},
#define H2 "mov.b32 {%rs1, %rs2}, %r1;\n mov.b32 {%rs3, %rs4}, %r2;\n "
    {H2 "mul.wide.u16 %r4, %rs1, %rs3;", false, r_mul_wide_u16, CMP_EXACT, 0},
    {H2 "mul.wide.s16 %r4, %rs2, %rs4;", false, r_mul_wide_s16, CMP_EXACT, 0},
    {H2 "mul.hi.s16 %rs5, %rs1, %rs3;\n cvt.u32.u16 %r4, %rs5;", false, r_mul_hi_s16, CMP_EXACT, 0},
    {H2 "or.b16 %rs6, %rs3, 1;\n div.s16 %rs5, %rs1, %rs6;\n cvt.u32.u16 %r4, %rs5;", false, r_div_s16, CMP_EXACT, 0},
    {H2 "or.b16 %rs6, %rs3, 1;\n rem.u16 %rs5, %rs1, %rs6;\n cvt.u32.u16 %r4, %rs5;", false, r_rem_u16, CMP_EXACT, 0},
    {H2 "and.b32 %r5, %r2, 31;\n shr.s16 %rs5, %rs1, %r5;\n cvt.u32.u16 %r4, %rs5;", false, r_shr_s16, CMP_EXACT, 0},
    {H2 "sad.s16 %rs5, %rs1, %rs3, %rs2;\n cvt.u32.u16 %r4, %rs5;", false, r_sad_s16, CMP_EXACT, 0},
    {H2 "mad.lo.s16 %rs5, %rs1, %rs3, %rs2;\n cvt.u32.u16 %r4, %rs5;", false, r_mad_lo_s16, CMP_EXACT, 0},
    {H2 "abs.s16 %rs5, %rs1;\n cvt.u32.u16 %r4, %rs5;", false, r_abs_s16, CMP_EXACT, 0},
#undef H2
    {"brev.b64 %rd4, %rd1;", true, r_brev_b64, CMP_EXACT, 0},
    {"popc.b64 %r4, %rd1;", false, r_popc_b64, CMP_EXACT, 0},
    {"clz.b64 %r4, %rd1;", false, r_clz_b64, CMP_EXACT, 0},
    {"bfe.s64 %rd4, %rd1, %r2, %r3;", true, r_bfe_s64, CMP_EXACT, 0},
    {"and.b32 %r5, %r3, 127;\n shr.u32 %r6, %r3, 8;\n and.b32 %r6, %r6, 127;\n bfi.b64 %rd4, %rd1, %rd2, %r5, %r6;", true, r_bfi_b64, CMP_EXACT, 0},
    {"mul.hi.s64 %rd4, %rd1, %rd2;", true, r_mul_hi_s64, CMP_EXACT, 0},
    {"mad.hi.s64 %rd4, %rd1, %rd2, %rd3;", true, r_mad_hi_s64, CMP_EXACT, 0},
    {"sad.u64 %rd4, %rd1, %rd2, %rd3;", true, r_sad_u64, CMP_EXACT, 0},
    {"or.b64 %rd5, %rd2, 1;\n rem.s64 %rd4, %rd1, %rd5;", true, r_rem_s64, CMP_EXACT, 0},
    {"or.b64 %rd5, %rd2, 1;\n div.u64 %rd4, %rd1, %rd5;", true, r_div_u64, CMP_EXACT, 0},
    {"max.NaN.f16x2 %r4, %r1, %r2;", false, r_max_nan_f16x2, CMP_EXACT, 0},
    {"min.bf16x2 %r4, %r1, %r2;", false, r_min_bf16x2, CMP_EXACT, 0},
    {"cnot.b32 %r4, %r1;", false, r_cnot_b32, CMP_EXACT, 0},
    /* the fast forms of f16/bf16 arithmetic (fma.rn.bf16 against the general path: test_emu_mma_fast), min/max.u32,
     * the b16 logic ops and 16-bit global accesses (bfe.u32 and min.u32 above take theirs too) */
    {"fma.rn.f16x2 %r4, %r1, %r2, %r3;", false, r_fma_f16x2, CMP_EXACT, 0},
    {"mul.rn.bf16x2 %r4, %r1, %r2;", false, r_mul_bf16x2, CMP_EXACT, 0},
    {"add.rn.bf16x2 %r4, %r1, %r2;", false, r_add_bf16x2, CMP_EXACT, 0},
    {"mov.b32 {%rs1, %rs2}, %r1;\n mov.b32 {%rs3, %rs4}, %r2;\n sub.f16 %rs5, %rs1, %rs3;\n mul.rn.f16 %rs6, %rs2, %rs4;\n"
     " mov.b32 %r4, {%rs5, %rs6};", false, r_sub_mul_f16, CMP_EXACT, 0},
    {"max.u32 %r4, %r1, %r2;", false, r_max_u32, CMP_EXACT, 0},
    {"mov.b32 {%rs1, %rs2}, %r1;\n mov.b32 {%rs3, %rs4}, %r2;\n and.b16 %rs5, %rs1, %rs3;\n xor.b16 %rs6, %rs1, %rs3;\n"
     " mov.b32 %r4, {%rs6, %rs5};", false, r_and_xor_b16, CMP_EXACT, 0},
    {"mov.b32 {%rs1, %rs2}, %r1;\n mov.b32 {%rs3, %rs4}, %r2;\n or.b16 %rs5, %rs1, %rs3;\n cvt.u32.u16 %r4, %rs5;", false, r_or_b16,
     CMP_EXACT, 0},
    {"ld.param.u64 %rd5, [k_c];\n mul.wide.u32 %rd6, %r10, 8;\n add.s64 %rd5, %rd5, %rd6;\n st.global.b16 [%rd5+2], %r1;\n"
     " ld.global.u16 %rs1, [%rd5+2];\n ld.global.b16 %r5, [%rd5+6];\n cvt.u32.u16 %r6, %rs1;\n shl.b32 %r5, %r5, 16;\n"
     " or.b32 %r4, %r5, %r6;", false, r_ldst_b16, CMP_EXACT, 0},
};

static const uint32_t special32[] = {
    0, 1, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000,
    0xC3020000, /* -130.0: ex2 of it is subnormal */
    0x00000001, 0x80000001, 0x00800000, 0x007FFFFF, 0x7F7FFFFF, 0x3FC00000, 0x40490FDB, 0x4B000000, 0x3F000000,
    0x3F400000, 0xC0200000, 31, 32, 33, 255, 0x12345678, 0x477FE000, 0x477FF000, 0x33800000, 0x387FC000, 0x4F800000,
    0x3C007FFF, 0x7FFE3C00, /* f16 pairs: 1.0 and the OOB-NaN a tensor copy fills in; another NaN and 1.0 */
};

static void run_case(TileDevice *d, const Case *c, size_t ci) {
    char ptx[4096];
    snprintf(ptx, sizeof ptx, harness_fmt, c->ptx, c->out64 ? "st.global.u64 [%rd11], %rd4;" : "cvt.u64.u32 %rd12, %r4;\n st.global.u64 [%rd11], %rd12;");
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    size_t ns = ARRAY_LEN(special32), n = ns * ns + 3000;
    uint64_t *a = malloc(n * 8), *b = malloc(n * 8), *cc = malloc(n * 8), *out = malloc(n * 8);
    bool is64 = strstr(c->ptx, "%rd1") != NULL && !strstr(c->ptx, ".u64 %rd4, %rd1, %r2");
    for (size_t i = 0; i < n; i++) {
        uint64_t x, y;
        if (i < ns * ns) { x = special32[i / ns]; y = special32[i % ns]; }
        else if (i % 3 == 0) { x = rnd64(); y = rnd64(); }
        else { x = f2u(rndf(-1000, 1000)); y = f2u(rndf(-10, 10)); }
        if (is64) {
            a[i] = i < ns * ns ? d2u((double)u2f((uint32_t)x)) : (i % 3 ? d2u((double)u2f((uint32_t)x) * 1.000000123) : rnd64());
            b[i] = i < ns * ns ? d2u((double)u2f((uint32_t)y)) : (i % 3 ? d2u((double)u2f((uint32_t)y)) : rnd64());
            cc[i] = d2u((double)rndf(-5, 5));
        } else {
            a[i] = (uint32_t)x | (rnd64() << 32); /* garbage upper halves must not matter */
            b[i] = (uint32_t)y | (rnd64() << 32);
            cc[i] = (uint32_t)(i % 5 ? rnd64() : f2u(rndf(-3, 3))) | (rnd64() << 32);
        }
        if (strstr(c->ptx, "shr.u64") || strstr(c->ptx, "shl") || strstr(c->ptx, "shr.s32")) b[i] &= 0x3F | (rnd64() & 0x40);
        if (strstr(c->ptx, "bfe")) { b[i] = rnd64() & 0x3F; cc[i] = rnd64() & 0x3F; }
    }
    uint64_t da = upload(d, a, n * 8), db = upload(d, b, n * 8), dc = upload(d, cc, n * 8), dd = poisoned(d, n * 8);
    uint32_t nn = (uint32_t)n;
    void *params[] = {&da, &db, &dc, &dd, &nn};
    cr_assert_eq(dev_launch(f, (unsigned)(n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params), DEV_OK, "case %zu '%s': %s", ci,
                 c->ptx, dev_last_error(d));
    download(d, out, dd, n * 8);
    for (size_t i = 0; i < n; i++) {
        uint64_t want = c->ref(a[i], b[i], cc[i]), got = out[i];
        bool ok;
        switch (c->cmp) {
        case CMP_FLOAT:
            ok = c->out64 ? (got == want || (isnan(D(got)) && isnan(D(want)))) : (got == want || (isnan(F(got)) && isnan(F(want))));
            break;
        case CMP_ULP32: {
            float g = F(got), w = F(want);
            ok = got == want || (isnan(g) && isnan(w)) || fabs((double)g - w) <= c->tol * fabs((double)w) || (fabs(w) < 0x1p-100 && fabs(g) < 0x1p-100);
            break;
        }
        case CMP_ABS32: {
            float g = F(got), w = F(want);
            ok = got == want || (isnan(g) && isnan(w)) || fabs((double)g - w) <= c->tol * fmax(1.0, fabs(w)) ||
                 fabs(F(a[i])) > 1e4f; /* sin/cos.approx: argument reduction error grows with |x| */
            break;
        }
        default: ok = got == want; break;
        }
        cr_assert(ok, "case '%s', input %zu: a=%#llx b=%#llx c=%#llx: got %#llx, want %#llx", c->ptx, i,
                  (unsigned long long)a[i], (unsigned long long)b[i], (unsigned long long)cc[i], (unsigned long long)got,
                  (unsigned long long)want);
    }
    free(a); free(b); free(cc); free(out);
    dev_module_unload(m);
}

Test(ptx, instructions) {
    TileDevice *d = open_emu(false);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) run_case(d, &cases[i], i);
    dev_close(d);
}

/* ---- barriers, votes, special registers and module variables (whole kernels, not one instruction) ---- */
#define PTX_HEAD ".version 7.8\n.target sm_80\n.address_size 64\n"

/* Named barriers between warps with different roles, as warp-specialized kernels use them: warp 0
 * fills a shared buffer, warp 1 reads it; bar.arrive signals without waiting ("full" at barrier 1,
 * "empty" at barrier 2, which the consumer arrives at once before its loop: the buffer starts empty). */
static const char *named_bar_ptx = PTX_HEAD
    ".visible .entry pc(.param .u64 out, .param .u32 n, .param .u32 prearrive)\n{\n"
    " .reg .pred %p<4>;\n .reg .b32 %r<12>;\n .reg .b64 %rd<4>;\n .shared .align 4 .b8 buf[128];\n"
    " ld.param.u64 %rd1, [out];\n ld.param.u32 %r1, [n];\n ld.param.u32 %r9, [prearrive];\n"
    " mov.u32 %r2, %tid.x;\n and.b32 %r3, %r2, 31;\n shl.b32 %r4, %r3, 2;\n mov.u32 %r5, buf;\n add.u32 %r5, %r5, %r4;\n"
    " mov.u32 %r6, 0;\n setp.ge.u32 %p1, %r2, 32;\n @%p1 bra $CONS;\n"
    "$PROD:\n setp.ge.u32 %p2, %r6, %r1;\n @%p2 bra $END;\n bar.sync 2, 64;\n"
    " mad.lo.u32 %r7, %r6, 1000, %r3;\n st.shared.u32 [%r5], %r7;\n barrier.cta.arrive.aligned 1, 64;\n"
    " add.u32 %r6, %r6, 1;\n bra $PROD;\n"
    "$CONS:\n setp.ne.u32 %p3, %r9, 0;\n @%p3 bar.arrive 2, 64;\n"
    "$CLOOP:\n setp.ge.u32 %p2, %r6, %r1;\n @%p2 bra $END;\n barrier.sync 1, 64;\n ld.shared.u32 %r7, [%r5];\n"
    " bar.arrive 2, 64;\n mul.lo.u32 %r7, %r7, 3;\n mad.lo.u32 %r8, %r6, 32, %r3;\n mul.wide.u32 %rd2, %r8, 4;\n"
    " add.s64 %rd3, %rd1, %rd2;\n st.global.u32 [%rd3], %r7;\n add.u32 %r6, %r6, 1;\n bra $CLOOP;\n"
    "$END:\n ret;\n}\n";

Test(ptx, named_barrier_arrive) {
    TileDevice *d = open_emu(true); /* racecheck: the barriers order the buffer's writes and reads */
    TileDevModule *m;
    TileDevFunction *f = load(d, named_bar_ptx, "pc", &m);
    enum { N = 7 };
    uint32_t host[N * 32];
    for (int i = 0; i < N * 32; i++) host[i] = 0xdeadbeef;
    uint64_t out = upload(d, host, sizeof host);
    uint32_t n = N, pre = 1;
    void *params[] = {&out, &n, &pre};
    for (int blocks = 1; blocks <= 2; blocks++) { /* a second block starts with fresh barriers */
        cr_assert_eq(dev_launch(f, blocks, 1, 1, 64, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
        download(d, host, out, sizeof host);
        for (uint32_t i = 0; i < N; i++)
            for (uint32_t l = 0; l < 32; l++) cr_assert_eq(host[i * 32 + l], (i * 1000 + l) * 3, "round %u lane %u", i, l);
    }
    /* without the consumer's first arrival the producer waits for an empty buffer forever */
    pre = 0;
    cr_assert_eq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, params), DEV_ERR_LAUNCH);
    cr_assert(strstr(dev_last_error(d), "deadlock") && strstr(dev_last_error(d), "bar.sync 2, 64"), "%s", dev_last_error(d));
    dev_free(d, out);
    dev_module_unload(m);
    dev_close(d);
}

/* Arrivals for one count and a wait for another at the same barrier: reported, with both counts. */
Test(ptx, named_barrier_count_mismatch) {
    static const char *ptx = PTX_HEAD
        ".visible .entry k()\n{\n .reg .pred %p<2>;\n .reg .b32 %r<4>;\n"
        " mov.u32 %r1, %tid.x;\n setp.lt.u32 %p1, %r1, 32;\n @%p1 bra $W;\n bar.arrive 3, 96;\n ret;\n"
        "$W:\n bar.sync 3, 64;\n ret;\n}\n";
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    cr_assert_eq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, NULL), DEV_ERR_LAUNCH);
    cr_assert(strstr(dev_last_error(d), "thread counts disagree") && strstr(dev_last_error(d), "for 64 threads") &&
                  strstr(dev_last_error(d), "were for 96"),
              "%s", dev_last_error(d));
    dev_module_unload(m);
    dev_close(d);
}

/* bar.red: popc, and, or (with a negated source) over the whole block, and popc over a counted
 * barrier that two of the three warps take; every participant gets the result. */
Test(ptx, bar_red) {
    static const char *ptx = PTX_HEAD
        ".visible .entry red(.param .u64 out)\n{\n .reg .pred %p<8>;\n .reg .b32 %r<12>;\n .reg .b64 %rd<4>;\n"
        " ld.param.u64 %rd1, [out];\n mov.u32 %r1, %tid.x;\n rem.u32 %r2, %r1, 3;\n setp.eq.u32 %p1, %r2, 0;\n"
        " mul.wide.u32 %rd2, %r1, 24;\n add.s64 %rd1, %rd1, %rd2;\n"
        " bar.red.popc.u32 %r3, 0, %p1;\n st.global.u32 [%rd1], %r3;\n"
        " setp.lt.u32 %p2, %r1, 96;\n barrier.cta.red.and.aligned.pred %p3, 0, %p2;\n selp.u32 %r4, 1, 0, %p3;\n"
        " st.global.u32 [%rd1+4], %r4;\n"
        " bar.red.and.pred %p3, 0, !%p1;\n selp.u32 %r4, 1, 0, %p3;\n st.global.u32 [%rd1+8], %r4;\n"
        " setp.eq.u32 %p4, %r1, 95;\n bar.red.or.pred %p5, 0, %p4;\n selp.u32 %r4, 1, 0, %p5;\n st.global.u32 [%rd1+12], %r4;\n"
        " bar.red.or.pred %p5, 0, !%p2;\n selp.u32 %r4, 1, 0, %p5;\n st.global.u32 [%rd1+16], %r4;\n"
        " setp.ge.u32 %p6, %r1, 64;\n @%p6 bra $END;\n bar.red.popc.u32 %r5, 1, 64, %p1;\n st.global.u32 [%rd1+20], %r5;\n"
        "$END:\n ret;\n}\n";
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "red", &m);
    uint32_t host[96 * 6];
    for (int i = 0; i < 96 * 6; i++) host[i] = 0xdeadbeef;
    uint64_t out = upload(d, host, sizeof host);
    void *params[] = {&out};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 96, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
    download(d, host, out, sizeof host);
    for (uint32_t t = 0; t < 96; t++) {
        const uint32_t *o = host + t * 6;
        cr_assert_eq(o[0], 32u, "thread %u: popc", t);
        cr_assert_eq(o[1], 1u, "thread %u: and of all true", t);
        cr_assert_eq(o[2], 0u, "thread %u: and of !p", t);
        cr_assert_eq(o[3], 1u, "thread %u: or of one true", t);
        cr_assert_eq(o[4], 0u, "thread %u: or of all false", t);
        cr_assert_eq(o[5], t < 64 ? 22u : 0xdeadbeefu, "thread %u: popc over 64 threads", t);
    }
    dev_free(d, out);
    dev_module_unload(m);
    dev_close(d);
}

/* Each thread's own special registers in a 3-D block of 5 x 3 x 3 (45 threads: a second warp of 13) over
 * a 2 x 2 grid, read back per thread: %tid (x fastest), %laneid, %warpid, the lane masks, %ctaid, and the
 * block-wide %ntid and %nwarpid, against the thread's place computed here. */
Test(ptx, thread_special_registers_of_a_3d_block) {
    static const char *ptx = PTX_HEAD
        ".visible .entry s(.param .u64 out)\n{\n .reg .b32 %r<20>;\n .reg .b64 %rd<4>;\n"
        " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %tid.y;\n mov.u32 %r3, %tid.z;\n"
        " mov.u32 %r4, %ntid.x;\n mov.u32 %r5, %ntid.y;\n"
        " mad.lo.u32 %r6, %r3, %r5, %r2;\n mad.lo.u32 %r6, %r6, %r4, %r1;\n" /* linear thread id in the block */
        " mov.u32 %r7, %ctaid.x;\n mov.u32 %r8, %ctaid.y;\n mov.u32 %r9, %nctaid.x;\n"
        " mad.lo.u32 %r10, %r8, %r9, %r7;\n mad.lo.u32 %r10, %r10, 45, %r6;\n" /* global slot */
        " mul.wide.u32 %rd1, %r10, 48;\n ld.param.u64 %rd2, [out];\n add.s64 %rd3, %rd2, %rd1;\n"
        " st.global.v4.u32 [%rd3], {%r1, %r2, %r3, %r7};\n"
        " mov.u32 %r11, %laneid;\n mov.u32 %r12, %warpid;\n mov.u32 %r13, %lanemask_lt;\n mov.u32 %r14, %lanemask_ge;\n"
        " st.global.v4.u32 [%rd3+16], {%r11, %r12, %r13, %r14};\n"
        " mov.u32 %r15, %ntid.z;\n mov.u32 %r16, %nwarpid;\n mov.u32 %r17, %lanemask_eq;\n"
        " st.global.v4.u32 [%rd3+32], {%r8, %r15, %r16, %r17};\n ret;\n}\n";
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "s", &m);
    enum { T = 45, B = 4 };
    uint64_t out = poisoned(d, B * T * 48);
    void *params[] = {&out};
    cr_assert_eq(dev_launch(f, 2, 2, 1, 5, 3, 3, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
    uint32_t o[B * T][12];
    download(d, o, out, sizeof o);
    for (uint32_t blk = 0; blk < B; blk++)
        for (uint32_t i = 0; i < T; i++) {
            const uint32_t *v = o[blk * T + i];
            uint32_t lane = i % 32;
            uint32_t want[12] = {i % 5, i / 5 % 3, i / 15, blk % 2, lane, i / 32, (1u << lane) - 1, ~((1u << lane) - 1),
                                 blk / 2, 3, 2, 1u << lane};
            for (int k = 0; k < 12; k++)
                cr_assert_eq(v[k], want[k], "block %u thread %u, value %d: %u, want %u", blk, i, k, v[k], want[k]);
        }
    dev_free(d, out);
    dev_module_unload(m);
    dev_close(d);
}

Test(ptx, vote_and_warp_sync) {
    static const char *ptx = PTX_HEAD
        ".visible .entry v(.param .u64 out)\n{\n .reg .pred %p<4>;\n .reg .b32 %r<10>;\n .reg .b64 %rd<4>;\n"
        " mov.u32 %r1, %laneid;\n and.b32 %r2, %r1, 1;\n setp.ne.u32 %p1, %r2, 0;\n"
        " vote.sync.ballot.b32 %r3, %p1, 0xffffffff;\n"
        " vote.sync.any.pred %p2, %p1, 0xffffffff;\n selp.u32 %r4, 1, 0, %p2;\n"
        " @!%p1 vote.sync.all.pred %p3, !%p1, 0x55555555;\n"
        " @!%p1 selp.u32 %r5, 1, 0, %p3;\n @%p1 mov.u32 %r5, 7;\n"
        " bar.warp.sync 0xffffffff;\n"
        " activemask.b32 %r6;\n"
        " mov.u32 %r7, %tid.x;\n mul.wide.u32 %rd1, %r7, 16;\n ld.param.u64 %rd2, [out];\n add.s64 %rd3, %rd2, %rd1;\n"
        " st.global.v4.u32 [%rd3], {%r3, %r4, %r5, %r6};\n ret;\n}\n";
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "v", &m);
    uint64_t out = poisoned(d, 64 * 16);
    void *params[] = {&out};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 48, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
    uint32_t o[48][4];
    download(d, o, out, sizeof o);
    for (int i = 0; i < 48; i++) {
        uint32_t full = i < 32 ? 0xFFFFFFFFu : 0xFFFFu; /* the second warp has 16 lanes */
        cr_assert_eq(o[i][0], 0xAAAAAAAAu & full, "ballot %d: %x", i, o[i][0]);
        cr_assert_eq(o[i][1], 1u);
        cr_assert_eq(o[i][2], i % 2 ? 7u : 1u, "all %d", i);
        cr_assert_eq(o[i][3], full, "activemask %d", i);
    }
    dev_module_unload(m);
    dev_close(d);
}

Test(ptx, globals_initializers_and_local) {
    static const char *ptx = PTX_HEAD
        ".global .align 4 .u32 table[4] = {10, 20, 30, 40};\n"
        ".const .align 4 .f32 scale = 0f40000000;\n"
        ".global .align 4 .u32 counter = 5;\n"
        ".visible .entry g(.param .u64 out)\n{\n .reg .b32 %r<10>;\n .reg .b64 %rd<8>;\n"
        " .local .align 4 .b8 depot[16];\n"
        " mov.u32 %r1, %tid.x;\n mul.wide.u32 %rd1, %r1, 4;\n mov.u64 %rd2, table;\n add.s64 %rd3, %rd2, %rd1;\n"
        " ld.global.u32 %r2, [%rd3];\n ld.const.f32 %r3, [scale];\n cvt.rn.f32.u32 %r4, %r2;\n mul.rn.f32 %r5, %r4, %r3;\n"
        " mov.u64 %rd4, depot;\n cvta.local.u64 %rd5, %rd4;\n st.u32 [%rd5+8], %r5;\n ld.local.u32 %r6, [depot+8];\n"
        " ld.param.u64 %rd6, [out];\n add.s64 %rd7, %rd6, %rd1;\n st.global.u32 [%rd7], %r6;\n"
        " atom.global.add.u32 %r7, [counter], 1;\n st.global.u32 [%rd7+16], %r7;\n ret;\n}\n";
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "g", &m);
    uint64_t out = poisoned(d, 32);
    void *params[] = {&out};
    for (uint32_t launch = 0; launch < 2; launch++) {
        cr_assert_eq(dev_launch(f, 1, 1, 1, 4, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
        float o[4];
        uint32_t old[4], seen = 0;
        download(d, o, out, sizeof o);
        download(d, old, out + 16, sizeof old);
        for (int i = 0; i < 4; i++) cr_assert_eq(o[i], 20.0f * (i + 1));
        /* the module's counter keeps its value across launches: 5..8, then 9..12 */
        for (int i = 0; i < 4; i++) {
            cr_assert(old[i] >= 5 + 4 * launch && old[i] < 9 + 4 * launch, "old %u", old[i]);
            seen |= 1u << (old[i] - 5 - 4 * launch);
        }
        cr_assert_eq(seen, 0xFu);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* A pointer in a packed struct: LLVM writes the aggregate as bytes and each byte of the address under a mask
 * (PTX 7.1, `0xFF00(generic(g)+8)`: mask 0xFF << 8k selects byte k), in a .u32 array too.  Before: refused as
 * "unbalanced braces in initializer".  The kernel rebuilds the pointer from its bytes and reads through it; the
 * masks ptxas refuses (another value, or before .version 7.1) are refused with the line. */
Test(ptx, masked_address_bytes_in_initializers) {
    static const char *ptx =
        ".version 7.1\n.target sm_80\n.address_size 64\n"
        ".visible .global .align 4 .b8 g[16] = {5, 0, 0, 0, 6, 0, 0, 0, 7, 0, 0, 0, 8};\n"
        ".visible .global .align 1 .u8 pk[11] = {3, 0xFF(generic(g)+8), 0xFF00(generic(g)+8), 0xFF0000(generic(g)+8), "
        "0xFF000000(generic(g)+8), 0xFF00000000(generic(g)+8), 0xFF0000000000(generic(g)+8), 0xFF000000000000(generic(g)+8), "
        "0xFF00000000000000(generic(g)+8), 9, 0};\n"
        ".visible .global .align 4 .u32 w[3] = {0xFF(g+4), 0xFF000000(g+4), 0xFF00000000(g+4)};\n"
        ".visible .entry k(.param .u64 out)\n{\n .reg .pred %p<2>;\n .reg .b32 %r<8>;\n .reg .b64 %rd<16>;\n"
        " mov.u64 %rd1, 0;\n mov.u32 %r1, 8;\n"
        "$L_byte:\n add.s32 %r1, %r1, -1;\n cvt.u64.u32 %rd2, %r1;\n mov.u64 %rd3, pk;\n add.s64 %rd3, %rd3, %rd2;\n"
        " ld.global.u8 %rd4, [%rd3+1];\n shl.b64 %rd1, %rd1, 8;\n or.b64 %rd1, %rd1, %rd4;\n"
        " setp.ne.s32 %p1, %r1, 0;\n @%p1 bra $L_byte;\n"
        " ld.u32 %r2, [%rd1];\n ld.global.u8 %r3, [pk];\n ld.global.u8 %r4, [pk+9];\n"
        " ld.param.u64 %rd5, [out];\n st.global.v2.u32 [%rd5], {%r2, %r3};\n st.global.u32 [%rd5+8], %r4;\n"
        " mov.u64 %rd6, g;\n st.global.u64 [%rd5+16], %rd1;\n st.global.u64 [%rd5+24], %rd6;\n"
        " ld.global.v2.u32 {%r5, %r6}, [w];\n ld.global.u32 %r7, [w+8];\n st.global.v2.u32 [%rd5+32], {%r5, %r6};\n"
        " st.global.u32 [%rd5+40], %r7;\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out = poisoned(d, 48);
    void *params[] = {&out};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
    uint32_t o[12];
    download(d, o, out, sizeof o);
    uint64_t p = o[4] | (uint64_t)o[5] << 32, g = o[6] | (uint64_t)o[7] << 32;
    cr_assert_eq(p, g + 8, "pointer rebuilt from its bytes %#llx, &g[2] %#llx", (unsigned long long)p, (unsigned long long)(g + 8));
    cr_assert_eq(o[0], 7u, "*pk.p");
    cr_assert_eq(o[1], 3u);
    cr_assert_eq(o[2], 9u);
    cr_assert_eq(o[8], (uint32_t)((g + 4) & 0xFF));
    cr_assert_eq(o[9], (uint32_t)((g + 4) >> 24 & 0xFF));
    cr_assert_eq(o[10], (uint32_t)((g + 4) >> 32 & 0xFF));
    dev_module_unload(m);
    TileDevModule *bad = NULL;
    const char *refused[][2] = {
        {".version 7.1\n.target sm_80\n.address_size 64\n.global .u32 g;\n.global .u8 b[2] = {1, 0xFF0(g)};\n", "ptx:5: invalid mask"},
        {".version 7.0\n.target sm_80\n.address_size 64\n.global .u32 g;\n.global .u8 b[2] = {1, 0xFF(g)};\n",
         "ptx:5: a mask in the initializer of 'b' needs .version 7.1"},
    };
    for (size_t i = 0; i < ARRAY_LEN(refused); i++) {
        cr_assert_eq(dev_module_load_ptx(d, refused[i][0], &bad), DEV_ERR_PTX, "loaded: %s", refused[i][0]);
        cr_assert(strstr(dev_last_error(d), refused[i][1]), "message '%s' lacks '%s'", dev_last_error(d), refused[i][1]);
    }
    dev_close(d);
}

/* sm_100's packed f32 arithmetic (LLVM 22 writes fma.rn.f32x2 in .b64 registers for float2 math on sm_100) and its
 * FP4/FP6 conversion types are not supported: refused at the line, by name ("unsupported modifier '.f32x2'" before). */
Test(ptx, sm100_types_refused_by_name) {
    static const char *const bodies[] = {" fma.rn.f32x2 %rd1, %rd2, %rd3, %rd2;", " add.rn.f32x2 %rd1, %rd2, %rd3;",
                                         " cvt.rn.satfinite.e2m1x2.f32 %rs1, %f1, %f2;"};
    TileDevice *d = open_emu(false);
    for (size_t i = 0; i < ARRAY_LEN(bodies); i++) {
        char ptx[512];
        snprintf(ptx, sizeof ptx,
                 ".version 8.8\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{\n .reg .b16 %%rs<2>;\n .reg .f32 %%f<3>;\n"
                 " .reg .b64 %%rd<4>;\n%s\n ret;\n}\n", bodies[i]);
        TileDevModule *m = NULL;
        cr_assert_eq(dev_module_load_ptx(d, ptx, &m), DEV_ERR_PTX, "loaded: %s", ptx);
        cr_assert(strstr(dev_last_error(d), "ptx:9: '") && strstr(dev_last_error(d), "is a type of sm_100's instructions"),
                  "%s", dev_last_error(d));
    }
    dev_close(d);
}

/* Variable attributes as ptxas takes them: .unified(N, N) from .version 8.0 on sm_90, .managed, on .global variables
 * only (they were skipped whatever they said, wherever they stood). */
Test(ptx, variable_attributes_ptxas_refuses) {
    static const char *const cases[][2] = {
        {".global .attribute(.unified(19, 95)) .align 4 .u32 ug;\n", "ptx:4: .attribute(.unified) needs .version 8.0 and .target sm_90"},
        {".shared .attribute(.managed) .align 4 .u32 s;\n", "ptx:4: 's': .attribute is for .global variables"},
        {".global .attribute(.pinned) .align 4 .u32 g;\n", "ptx:4: unknown variable attribute '.pinned'"},
        {".global .attribute(.managed(1, 2)) .align 4 .u32 g;\n", "ptx:4: expected ')'"},
        {".visible .entry k(.param .attribute(.managed) .u64 p)\n{\n ret;\n}\n", "ptx:4: parameter 'p': .attribute is for .global"},
    };
    TileDevice *d = open_emu(false);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char ptx[512];
        snprintf(ptx, sizeof ptx, ".version 8.0\n.target sm_80\n.address_size 64\n%s", cases[i][0]);
        TileDevModule *m = NULL;
        cr_assert_eq(dev_module_load_ptx(d, ptx, &m), DEV_ERR_PTX, "loaded: %s", ptx);
        cr_assert(strstr(dev_last_error(d), cases[i][1]), "message '%s' lacks '%s'", dev_last_error(d), cases[i][1]);
    }
    TileDevModule *m = NULL; /* both, on sm_90 */
    cr_assert_eq(dev_module_load_ptx(d, ".version 8.0\n.target sm_90\n.address_size 64\n"
                                        ".global .attribute(.managed, .unified(1, 2)) .align 4 .u32 g = 3;\n", &m), DEV_OK, "%s",
                 dev_last_error(d));
    dev_module_unload(m);
    dev_close(d);
}

/* cp.async of 16 bytes, each form the interpreter's fast path takes or hands to the checked one: the three-operand
 * form, src-size 16 (the whole source), 0 (zeros) and 1..15 (that many bytes, zeros after), into shared memory
 * poisoned first; each thread reads back its neighbour's 64 bytes (the last 16 through st.global.v2.b32, another fast
 * form, as is the ld.global.v2.b32 of two source words).  The same results with racecheck (the checked
 * path only).  Then the memcheck reports the fast path must leave to the checked one: a misaligned source or
 * destination, a source past the end of its allocation, a destination past the shared memory, a freed source, a
 * misaligned v2 load and a v2 store running past the end of its buffer (each
 * after the source's allocation is in the inline cache: every thread's source of the misaligned one lies inside it).
 * A fast path that copied the wrong bytes, skipped the zero fill or took a bad address fails here. */
Test(ptx, cp_async_16_byte_forms_and_reports) {
    static const char *ptx = PTX_HEAD
        ".visible .entry k(.param .u64 out, .param .u64 src, .param .u32 mode)\n{\n"
        " .reg .pred %p<6>;\n .reg .b32 %r<24>;\n .reg .b64 %rd<8>;\n .shared .align 16 .b8 s[4096];\n"
        " ld.param.u64 %rd1, [out];\n ld.param.u64 %rd2, [src];\n ld.param.u32 %r1, [mode];\n mov.u32 %r2, %tid.x;\n"
        " shl.b32 %r3, %r2, 6;\n mov.u32 %r4, s;\n add.u32 %r5, %r4, %r3;\n mov.u32 %r6, 0xEEEEEEEE;\n"
        " st.shared.v4.b32 [%r5], {%r6, %r6, %r6, %r6};\n st.shared.v4.b32 [%r5+16], {%r6, %r6, %r6, %r6};\n"
        " st.shared.v4.b32 [%r5+32], {%r6, %r6, %r6, %r6};\n st.shared.v4.b32 [%r5+48], {%r6, %r6, %r6, %r6};\n"
        " bar.sync 0;\n"
        " mul.wide.u32 %rd3, %r2, 16;\n add.s64 %rd4, %rd2, %rd3;\n"           /* src + 16 t */
        " add.u32 %r7, %r2, 5;\n and.b32 %r7, %r7, 63;\n mul.wide.u32 %rd5, %r7, 16;\n add.s64 %rd5, %rd2, %rd5;\n"
        " cp.async.cg.shared.global [%r5], [%rd4], 16;\n"
        " mov.u32 %r8, 16;\n cp.async.cg.shared.global [%r5+16], [%rd5], 16, %r8;\n"
        " mov.u32 %r9, 0;\n cp.async.cg.shared.global [%r5+32], [%rd5], 16, %r9;\n"
        " and.b32 %r10, %r2, 15;\n cp.async.ca.shared.global [%r5+48], [%rd4], 16, %r10;\n"
        " setp.eq.u32 %p1, %r1, 1;\n @%p1 cp.async.cg.shared.global [%r5], [%rd2+8], 16;\n"
        " setp.eq.u32 %p2, %r1, 2;\n @%p2 cp.async.cg.shared.global [%r5], [%rd4+1024], 16;\n"
        " setp.eq.u32 %p3, %r1, 3;\n @%p3 cp.async.cg.shared.global [%r5+4096], [%rd4], 16;\n"
        " setp.eq.u32 %p4, %r1, 4;\n @%p4 cp.async.cg.shared.global [%r5+4], [%rd4], 16;\n"
        " cp.async.commit_group;\n cp.async.wait_all;\n bar.sync 0;\n"
        " add.u32 %r11, %r2, 1;\n and.b32 %r11, %r11, 63;\n shl.b32 %r11, %r11, 6;\n add.u32 %r11, %r4, %r11;\n"
        " mul.wide.u32 %rd6, %r2, 64;\n add.s64 %rd6, %rd1, %rd6;\n"
        " ld.shared.v4.b32 {%r12, %r13, %r14, %r15}, [%r11];\n st.global.v4.b32 [%rd6], {%r12, %r13, %r14, %r15};\n"
        " ld.shared.v4.b32 {%r12, %r13, %r14, %r15}, [%r11+16];\n st.global.v4.b32 [%rd6+16], {%r12, %r13, %r14, %r15};\n"
        " ld.shared.v4.b32 {%r12, %r13, %r14, %r15}, [%r11+32];\n st.global.v4.b32 [%rd6+32], {%r12, %r13, %r14, %r15};\n"
        " ld.shared.v4.b32 {%r12, %r13, %r14, %r15}, [%r11+48];\n"
        " st.global.v2.b32 [%rd6+48], {%r12, %r13};\n st.global.v2.b32 [%rd6+56], {%r14, %r15};\n"
        " ld.global.v2.b32 {%r16, %r17}, [%rd4+8];\n mul.wide.u32 %rd7, %r2, 8;\n add.s64 %rd7, %rd1, %rd7;\n"
        " st.global.v2.b32 [%rd7+4096], {%r17, %r16};\n"                /* out[4096 + 8 t]: src words 4t+3, 4t+2 */
        " setp.eq.u32 %p5, %r1, 5;\n @%p5 ld.global.v2.b32 {%r16, %r17}, [%rd2+4];\n"
        " setp.eq.u32 %p5, %r1, 6;\n @%p5 st.global.v2.b32 [%rd1+4608], {%r16, %r17};\n"
        " ret;\n}\n";
    uint8_t in[64 * 16];
    for (size_t i = 0; i < sizeof in; i++) in[i] = (uint8_t)rnd64();
    for (int racecheck = 0; racecheck < 2; racecheck++) {
        TileDevice *d = open_emu(racecheck);
        TileDevModule *m;
        TileDevFunction *f = load(d, ptx, "k", &m);
        uint64_t src = upload(d, in, sizeof in), out = poisoned(d, 64 * 72 + 4); /* the v2 store of mode 6 straddles its end */
        uint32_t mode = 0;
        void *params[] = {&out, &src, &mode};
        cr_assert_eq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
        uint8_t got[64 * 72];
        download(d, got, out, sizeof got);
        for (uint32_t t = 0; t < 64; t++) {
            uint32_t n = (t + 1) & 63, keep = n & 15;
            uint8_t want[64] = {0};
            memcpy(want, in + n * 16, 16);
            memcpy(want + 16, in + ((n + 5) & 63) * 16, 16);
            memcpy(want + 48, in + n * 16, keep);
            for (int k = 0; k < 64; k++)
                cr_assert_eq(got[t * 64 + k], want[k], "racecheck %d, thread %u, byte %d: %#x, want %#x", racecheck, t, k,
                             got[t * 64 + k], want[k]);
            cr_assert(!memcmp(got + 4096 + t * 8, in + t * 16 + 12, 4) && !memcmp(got + 4100 + t * 8, in + t * 16 + 8, 4),
                      "racecheck %d, thread %u: ld/st.global.v2.b32", racecheck, t);
        }
        static const char *const report[] = {"", "misaligned __global__ read", "after the end", "invalid __shared__ write",
                                             "misaligned __shared__ write", "misaligned __global__ read",
                                             "the access runs 4 bytes past its end"};
        for (mode = 1; mode <= 6; mode++) {
            cr_assert_neq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, params), DEV_OK, "mode %u ran", mode);
            cr_expect(strstr(dev_last_error(d), report[mode]), "mode %u: %s", mode, dev_last_error(d));
        }
        mode = 0;
        cr_assert_eq(dev_free(d, src), DEV_OK);
        cr_assert_neq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, params), DEV_OK, "a freed source was read");
        cr_expect(strstr(dev_last_error(d), "freed allocation"), "%s", dev_last_error(d));
        dev_module_unload(m);
        dev_close(d);
    }
}

/* Global fast forms whose instructions alternate between allocations (each remembers the allocation it hit last,
 * emu_global): 4 blocks of 96 threads on two host threads, thread g = 96 ctaid + tid reading through one pointer,
 * a in even warps (g / 32) and b in odd ones, element i = 32 (g / 64) + g % 32: a v4 load of bytes [16 i, 16 i + 16),
 * a u32 load at 16 i + 4 and a u64 at 16 i + 8, the v4 stored back 4096 bytes further on (its own allocation) and
 * the scalars to out.  a and b are 7176 bytes (not a multiple of 16), so with offsets (rd, wr) that move the last
 * element's access 8 bytes past the end, the read or write of block 3's thread 63 (in a) straddles it: reported
 * as before, while the instruction's hint holds a from the lanes before it.  Then b freed (the freed pointer
 * reported), and a new allocation in its place. */
Test(ptx, global_fast_forms_alternate_allocations) {
    static const char *ptx = PTX_HEAD
        ".visible .entry k(.param .u64 a, .param .u64 b, .param .u64 out, .param .u32 rd, .param .u32 wr)\n{\n"
        " .reg .pred %p<2>;\n .reg .b32 %r<16>;\n .reg .b64 %rd<16>;\n"
        " ld.param.u64 %rd1, [a];\n ld.param.u64 %rd2, [b];\n ld.param.u64 %rd3, [out];\n ld.param.u32 %r1, [rd];\n"
        " ld.param.u32 %r2, [wr];\n mov.u32 %r3, %ctaid.x;\n mov.u32 %r4, %tid.x;\n mad.lo.u32 %r5, %r3, 96, %r4;\n"
        " shr.u32 %r6, %r5, 5;\n and.b32 %r6, %r6, 1;\n setp.ne.u32 %p1, %r6, 0;\n selp.b64 %rd4, %rd2, %rd1, %p1;\n"
        " shr.u32 %r7, %r5, 6;\n shl.b32 %r7, %r7, 5;\n and.b32 %r13, %r5, 31;\n add.u32 %r7, %r7, %r13;\n"
        " mul.wide.u32 %rd5, %r7, 16;\n add.s64 %rd6, %rd4, %rd5;\n"
        " cvt.u64.u32 %rd7, %r1;\n add.s64 %rd8, %rd6, %rd7;\n cvt.u64.u32 %rd9, %r2;\n add.s64 %rd10, %rd6, %rd9;\n"
        " ld.global.v4.u32 {%r8, %r9, %r10, %r11}, [%rd8];\n ld.global.u32 %r12, [%rd6+4];\n ld.global.u64 %rd11, [%rd6+8];\n"
        " st.global.v4.u32 [%rd10+4096], {%r8, %r9, %r10, %r11};\n"
        " mul.wide.u32 %rd12, %r5, 4;\n add.s64 %rd12, %rd3, %rd12;\n st.global.u32 [%rd12], %r12;\n"
        " mul.wide.u32 %rd13, %r5, 8;\n add.s64 %rd13, %rd3, %rd13;\n st.global.u64 [%rd13+1536], %rd11;\n"
        " ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    enum { N = 7176, G = 384 };
    static uint8_t in[2][N], got[N], out[G * 12];
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t buf[2], o = poisoned(d, sizeof out);
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < N; i++) in[k][i] = (uint8_t)rnd64();
        buf[k] = upload(d, in[k], N);
    }
    uint32_t rd = 0, wr = 0;
    void *params[] = {&buf[0], &buf[1], &o, &rd, &wr};
    for (int round = 0; round < 2; round++) { /* round 1: b freed, then a new allocation in its place */
        cr_assert_eq(dev_launch(f, 4, 1, 1, 96, 1, 1, 0, NULL, params), DEV_OK, "round %d: %s", round, dev_last_error(d));
        download(d, out, o, sizeof out);
        for (uint32_t g = 0; g < G; g++) {
            const uint8_t *src = in[g >> 5 & 1] + 16 * ((g >> 6) * 32 + (g & 31));
            cr_assert(!memcmp(out + 4 * g, src + 4, 4) && !memcmp(out + 1536 + 8 * g, src + 8, 8), "round %d, thread %u", round, g);
        }
        for (int k = 0; k < 2; k++) {
            download(d, got, buf[k], N);
            for (uint32_t i = 0; i < G / 2; i++)
                cr_assert(!memcmp(got + 4096 + 16 * i, in[k] + 16 * i, 16), "round %d, %s[%u]", round, k ? "b" : "a", i);
        }
        if (round) break;
        static const struct { uint32_t rd, wr; const char *what, *why; } bad[] = {
            {4096 + 16, 0, "invalid __global__ read of size 16 bytes", "the access runs 8 bytes past its end"},
            {0, 16, "invalid __global__ write of size 16 bytes", "the access runs 8 bytes past its end"},
        };
        for (size_t c = 0; c < 2; c++) {
            rd = bad[c].rd, wr = bad[c].wr;
            cr_assert_eq(dev_launch(f, 4, 1, 1, 96, 1, 1, 0, NULL, params), DEV_ERR_MEMCHECK, "case %zu ran", c);
            const char *e = dev_last_error(d);
            cr_assert(strstr(e, bad[c].what) && strstr(e, bad[c].why) && strstr(e, "by thread (63,0,0) in block (3,0,0)"), "%s", e);
        }
        rd = wr = 0;
        cr_assert_eq(dev_free(d, buf[1]), DEV_OK);
        cr_assert_eq(dev_launch(f, 4, 1, 1, 96, 1, 1, 0, NULL, params), DEV_ERR_MEMCHECK, "a freed b was read");
        cr_assert(strstr(dev_last_error(d), "invalid __global__ read of size 16 bytes") &&
                      strstr(dev_last_error(d), "inside a freed allocation of 7176 bytes"),
                  "%s", dev_last_error(d));
        for (size_t i = 0; i < N; i++) in[1][i] = (uint8_t)rnd64();
        buf[1] = upload(d, in[1], N);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* test_emu_isa_cvt.c - the emulator's cvt (and cvt.pack) against references written in C from the PTX
 * ISA's cvt page (not from emu/), at edge values: every integer pair, float<->int in every rounding,
 * f16/bf16/tf32/e4m3/e5m2 with .relu/.satfinite and the pairs' order, .sat on float destinations, one
 * rounding where two would differ (the harness: emu_isa_family.h; the arithmetic: test_emu_isa2.c). */
#include "emu_isa_family.h"

/* ---------------------------------------------------------------------------------------------
 * cvt: float->int in the four integer roundings (NaN as the ISA's Integer Notes say, out of range
 * saturates), float->float roundings, .sat/.ftz, f16/bf16/tf32 with .relu/.satfinite, the x2 packing
 * order, int->float in the four roundings, integer narrowing with and without .sat, sign/zero
 * extension, cvt.pack.sat. */
static uint16_t cvt_h(float f, int mode, bool relu, bool satfinite) {
    if (isnan(f)) return 0x7FFF;
    double r = overflow(round_fmt(f, 10, -14, mode), HMAX, mode);
    if (satfinite && fabs(r) > HMAX) r = copysign(HMAX, r);
    if (relu && signbit(r)) r = 0; /* -0 too */
    return enc_h(r);
}
static uint16_t cvt_b(float f, int mode, bool relu) {
    if (isnan(f)) return 0x7FFF;
    double r = overflow(round_fmt(f, 7, -126, mode), BMAX, mode);
    if (relu && signbit(r)) r = 0;
    return enc_b(r);
}

static float d2f(double d, int mode) {
    volatile double vd = d;
    volatile float r;
    fesetround(RND[mode]);
    r = (float)vd;
    fesetround(FE_TONEAREST);
    return r;
}
static float i2f(int64_t s, uint64_t u, bool sign, int mode) {
    volatile int64_t vs = s;
    volatile uint64_t vu = u;
    volatile float r;
    fesetround(RND[mode]);
    r = sign ? (float)vs : (float)vu;
    fesetround(FE_TONEAREST);
    return r;
}
static double i2d(int64_t s, uint64_t u, bool sign, int mode) {
    volatile int64_t vs = s;
    volatile uint64_t vu = u;
    volatile double r;
    fesetround(RND[mode]);
    r = sign ? (double)vs : (double)vu;
    fesetround(FE_TONEAREST);
    return r;
}
static void gen_cvt(uint64_t *x, int i, int n) {
    (void)n;
    x[0] = rnd_f32();
    if (i % 3 == 1) x[0] = (uint32_t)(rnd() & 0x80FFFFFF) | (uint32_t)(0x7F + rnd() % 70) << 23; /* 1 .. 2^70: the integer ranges */
    if (i % 7 == 3) x[0] = fbits((float)(int)(rnd() % 2001 - 1000) + (float)(rnd() % 4) * 0.25f);   /* halfway points */
    x[1] = rnd_f64();
    if (i % 3 == 1) x[1] = (rnd() & 0x800FFFFFFFFFFFFFull) | (uint64_t)(0x3FF + rnd() % 70) << 52;
    if (i % 7 == 3) x[1] = dbits((double)(int)(rnd() % 2001 - 1000) + (double)(rnd() % 4) * 0.25);
    x[2] = rnd() & 1 ? PICK(EI) : rnd();
    if (i % 5 == 2) x[2] = (uint64_t)(int64_t)(int32_t)(rnd() % 70000 - 35000);
    if (i % 5 == 4) x[2] = rnd_f32() | (uint64_t)rnd_f32() << 32;
}

static void ref_cvt(const uint64_t *x, uint64_t *r) {
    float f = bitsf((uint32_t)x[0]), f2 = bitsf((uint32_t)(x[2] >> 32));
    double d = bitsd(x[1]);
    uint32_t c = (uint32_t)x[2];
    int32_t sc = (int32_t)c;
    int64_t s64 = (int64_t)x[2];
    for (int m = 0; m < 4; m++) r[m] = (uint32_t)f2i(f, m, -0x1p31, 0x1p31 - 1, true);
    r[4] = (uint32_t)f2i(f, 0, 0, 0x1p32 - 1, false);
    r[5] = f2i_nan(f, 1, -0x1p63, 0x1p63, true, true);
    r[6] = f2i_nan(f, 1, 0, 0x1p64, false, true);
    r[7] = (uint16_t)f2i(f, 1, -32768, 32767, true);
    r[8] = (uint8_t)f2i(f, 1, 0, 255, false);
    r[9] = (uint8_t)f2i(f, 1, -128, 127, true);
    for (int m = 0; m < 4; m++) r[10 + m] = (uint32_t)f2i_nan(d, m, -0x1p31, 0x1p31 - 1, true, true);
    r[14] = f2i_nan(d, 0, 0, 0x1p64, false, true);
    r[15] = f2i_nan(d, 1, -0x1p63, 0x1p63, true, true);
    r[16] = (uint32_t)f2i_nan(d, 1, 0, 0x1p32 - 1, false, true);
    for (int m = 0; m < 4; m++) r[17 + m] = fbits(f32_round(f, m, true));
    for (int m = 0; m < 4; m++) r[21 + m] = dbits(f64_round(d, m));
    for (int m = 0; m < 4; m++) r[25 + m] = fbits(d2f(d, m));
    r[29] = dbits((double)f);
    r[30] = dbits((double)ftz32(f));
    r[31] = fbits(sat32f(f));
    r[32] = fbits(ftz32(f));
    for (int m = 0; m < 4; m++) r[33 + m] = cvt_h(f, m, false, false);
    r[37] = fbits((float)h2d((uint16_t)x[0]));
    r[38] = cvt_h(f, 0, true, false);
    r[39] = cvt_h(f, 0, false, true);
    r[40] = cvt_b(f, 0, false);
    r[41] = cvt_b(f, 1, false);
    r[42] = cvt_b(f, 0, true);
    r[43] = isnan(f) ? 0x7FFFFFFF : fbits((float)overflow(round_fmt(f, 10, -126, 4), 0x1.FFCp127, 4));
    r[44] = (uint32_t)cvt_h(f, 0, false, false) << 16 | cvt_h(f2, 0, false, false);
    r[45] = (uint32_t)cvt_b(f, 0, true) << 16 | cvt_b(f2, 0, true);
    for (int m = 0; m < 4; m++) r[46 + m] = fbits(i2f(sc, 0, true, m));
    r[50] = fbits(i2f(0, c, false, 0));
    r[51] = fbits(i2f(s64, 0, true, 1));
    r[52] = fbits(i2f(0, x[2], false, 3));
    r[53] = dbits(i2d(s64, 0, true, 2));
    r[54] = dbits(i2d(0, x[2], false, 0));
    r[55] = dbits(i2d(0, x[2], false, 1));
    r[56] = (uint8_t)clampi(sc, -128, 127);
    r[57] = (uint8_t)c;
    r[58] = (uint8_t)clampi(sc, 0, 255);
    r[59] = (uint16_t)clampi(sc, 0, 65535);
    r[60] = (uint16_t)(c > 32767 ? 32767 : c);
    r[61] = (uint32_t)clampi(sc, 0, INT32_MAX);
    r[62] = c > INT32_MAX ? INT32_MAX : c;
    r[63] = (uint32_t)clampi(s64, INT32_MIN, INT32_MAX);
    r[64] = (uint32_t)clampi(s64, 0, UINT32_MAX);
    r[65] = (uint64_t)(int64_t)sc;
    r[66] = (uint64_t)(int64_t)sc;
    r[67] = c;
    r[68] = (uint32_t)(int32_t)(int16_t)c;
    r[69] = (uint32_t)(int32_t)(int8_t)c;
    r[70] = (uint8_t)c;
    int32_t sb = (int32_t)x[0]; /* cvt.pack: a = c.lo, b = the f32 operand's bits as an s32 */
    r[71] = (uint32_t)(uint16_t)clampi(sc, -32768, 32767) << 16 | (uint16_t)clampi(sb, -32768, 32767);
    r[72] = (uint32_t)(uint16_t)clampi(sc, 0, 65535) << 16 | (uint16_t)clampi(sb, 0, 65535);
    uint32_t cc = (uint32_t)(x[2] >> 32);
    r[73] = cc << 16 | (uint32_t)(uint8_t)clampi(sc, -128, 127) << 8 | (uint8_t)clampi(sb, -128, 127);
    r[74] = cc << 16 | (uint32_t)(uint8_t)clampi(sc, 0, 255) << 8 | (uint8_t)clampi(sb, 0, 255);
    r[75] = cc << 8 | (uint32_t)clampi(sc, 0, 15) << 4 | (uint32_t)clampi(sb, 0, 15);
    r[76] = cc << 4 | (uint32_t)(clampi(sc, -2, 1) & 3) << 2 | (uint32_t)(clampi(sb, -2, 1) & 3);
    r[77] = isnan(d) ? 0x7FFF : enc_h(overflow(round_fmt(d, 10, -14, 0), HMAX, 0));
    r[78] = dbits(h2d((uint16_t)x[0]));
    r[79] = (uint32_t)f2i(h2d((uint16_t)x[0]), 0, -0x1p31, 0x1p31 - 1, true);
}

static const Family CVT = {
    "cvt", false, 80, "xxxxxxxxxxxxxxxxxffffddddffffddffhhhhfhhbbbfHBfffffffdddxxxxxxxxxxxxxxxxxxxxxhdx",
    " cvt.rni.s32.f32 %r30, %f10;\n" O32(0, "%r30") " cvt.rzi.s32.f32 %r30, %f10;\n" O32(1, "%r30")
    " cvt.rmi.s32.f32 %r30, %f10;\n" O32(2, "%r30") " cvt.rpi.s32.f32 %r30, %f10;\n" O32(3, "%r30")
    " cvt.rni.u32.f32 %r30, %f10;\n" O32(4, "%r30")
    " cvt.rzi.s64.f32 %rd30, %f10;\n" O64(5, "%rd30")
    " cvt.rzi.u64.f32 %rd30, %f10;\n" O64(6, "%rd30")
    " cvt.rzi.s16.f32 %h20, %f10;\n" O16(7, "%h20")
    " cvt.rzi.u8.f32 %h20, %f10;\n and.b16 %h20, %h20, 0xFF;\n" O16(8, "%h20")
    " cvt.rzi.s8.f32 %h20, %f10;\n and.b16 %h20, %h20, 0xFF;\n" O16(9, "%h20")
    " cvt.rni.s32.f64 %r30, %fd11;\n" O32(10, "%r30") " cvt.rzi.s32.f64 %r30, %fd11;\n" O32(11, "%r30")
    " cvt.rmi.s32.f64 %r30, %fd11;\n" O32(12, "%r30") " cvt.rpi.s32.f64 %r30, %fd11;\n" O32(13, "%r30")
    " cvt.rni.u64.f64 %rd30, %fd11;\n" O64(14, "%rd30")
    " cvt.rzi.s64.f64 %rd30, %fd11;\n" O64(15, "%rd30")
    " cvt.rzi.u32.f64 %r30, %fd11;\n" O32(16, "%r30")
    " cvt.rni.f32.f32 %f20, %f10;\n" OF(17, "%f20") " cvt.rzi.f32.f32 %f20, %f10;\n" OF(18, "%f20")
    " cvt.rmi.f32.f32 %f20, %f10;\n" OF(19, "%f20") " cvt.rpi.f32.f32 %f20, %f10;\n" OF(20, "%f20")
    " cvt.rni.f64.f64 %fd20, %fd11;\n" O64(21, "%fd20") " cvt.rzi.f64.f64 %fd20, %fd11;\n" O64(22, "%fd20")
    " cvt.rmi.f64.f64 %fd20, %fd11;\n" O64(23, "%fd20") " cvt.rpi.f64.f64 %fd20, %fd11;\n" O64(24, "%fd20")
    " cvt.rn.f32.f64 %f20, %fd11;\n" OF(25, "%f20") " cvt.rz.f32.f64 %f20, %fd11;\n" OF(26, "%f20")
    " cvt.rm.f32.f64 %f20, %fd11;\n" OF(27, "%f20") " cvt.rp.f32.f64 %f20, %fd11;\n" OF(28, "%f20")
    " cvt.f64.f32 %fd20, %f10;\n" O64(29, "%fd20")
    " cvt.ftz.f64.f32 %fd20, %f10;\n" O64(30, "%fd20")
    " cvt.sat.f32.f32 %f20, %f10;\n" OF(31, "%f20")
    " cvt.ftz.f32.f32 %f20, %f10;\n" OF(32, "%f20")
    " cvt.rn.f16.f32 %h20, %f10;\n" O16(33, "%h20") " cvt.rz.f16.f32 %h20, %f10;\n" O16(34, "%h20")
    " cvt.rm.f16.f32 %h20, %f10;\n" O16(35, "%h20") " cvt.rp.f16.f32 %h20, %f10;\n" O16(36, "%h20")
    " cvt.f32.f16 %f20, %h10;\n" OF(37, "%f20")
    " cvt.rn.relu.f16.f32 %h20, %f10;\n" O16(38, "%h20")
    " cvt.rn.satfinite.f16.f32 %h20, %f10;\n" O16(39, "%h20")
    " cvt.rn.bf16.f32 %h20, %f10;\n" O16(40, "%h20")
    " cvt.rz.bf16.f32 %h20, %f10;\n" O16(41, "%h20")
    " cvt.rn.relu.bf16.f32 %h20, %f10;\n" O16(42, "%h20")
    " cvt.rna.tf32.f32 %r30, %f10;\n" O32(43, "%r30")
    " mov.b32 %f21, %r13;\n cvt.rn.f16x2.f32 %r30, %f10, %f21;\n" O32(44, "%r30")
    " cvt.rn.relu.bf16x2.f32 %r30, %f10, %f21;\n" O32(45, "%r30")
    " cvt.rn.f32.s32 %f20, %r12;\n" OF(46, "%f20") " cvt.rz.f32.s32 %f20, %r12;\n" OF(47, "%f20")
    " cvt.rm.f32.s32 %f20, %r12;\n" OF(48, "%f20") " cvt.rp.f32.s32 %f20, %r12;\n" OF(49, "%f20")
    " cvt.rn.f32.u32 %f20, %r12;\n" OF(50, "%f20")
    " cvt.rz.f32.s64 %f20, %rd12;\n" OF(51, "%f20")
    " cvt.rp.f32.u64 %f20, %rd12;\n" OF(52, "%f20")
    " cvt.rm.f64.s64 %fd20, %rd12;\n" O64(53, "%fd20")
    " cvt.rn.f64.u64 %fd20, %rd12;\n" O64(54, "%fd20")
    " cvt.rz.f64.u64 %fd20, %rd12;\n" O64(55, "%fd20")
    " cvt.sat.s8.s32 %h20, %r12;\n and.b16 %h20, %h20, 0xFF;\n" O16(56, "%h20")
    " cvt.s8.s32 %h20, %r12;\n and.b16 %h20, %h20, 0xFF;\n" O16(57, "%h20")
    " cvt.sat.u8.s32 %h20, %r12;\n and.b16 %h20, %h20, 0xFF;\n" O16(58, "%h20")
    " cvt.sat.u16.s32 %h20, %r12;\n" O16(59, "%h20")
    " cvt.sat.s16.u32 %h20, %r12;\n" O16(60, "%h20")
    " cvt.sat.u32.s32 %r30, %r12;\n" O32(61, "%r30")
    " cvt.sat.s32.u32 %r30, %r12;\n" O32(62, "%r30")
    " cvt.sat.s32.s64 %r30, %rd12;\n" O32(63, "%r30")
    " cvt.sat.u32.s64 %r30, %rd12;\n" O32(64, "%r30")
    " cvt.s64.s32 %rd30, %r12;\n" O64(65, "%rd30")
    " cvt.u64.s32 %rd30, %r12;\n" O64(66, "%rd30")
    " cvt.s64.u32 %rd30, %r12;\n" O64(67, "%rd30")
    " cvt.s32.s16 %r30, %h12;\n" O32(68, "%r30")
    " cvt.u32.s8 %r30, %h12;\n" O32(69, "%r30")
    " cvt.s32.u8 %r30, %h12;\n" O32(70, "%r30")
    " cvt.pack.sat.s16.s32 %r30, %r12, %r10;\n" O32(71, "%r30")
    " cvt.pack.sat.u16.s32 %r30, %r12, %r10;\n" O32(72, "%r30")
    " cvt.pack.sat.s8.s32.b32 %r30, %r12, %r10, %r13;\n" O32(73, "%r30")
    " cvt.pack.sat.u8.s32.b32 %r30, %r12, %r10, %r13;\n" O32(74, "%r30")
    " cvt.pack.sat.u4.s32.b32 %r30, %r12, %r10, %r13;\n" O32(75, "%r30")
    " cvt.pack.sat.s2.s32.b32 %r30, %r12, %r10, %r13;\n" O32(76, "%r30")
    " cvt.rn.f16.f64 %h20, %fd11;\n" O16(77, "%h20")
    " cvt.f64.f16 %fd20, %h10;\n" O64(78, "%fd20")
    " cvt.rni.s32.f16 %r30, %h10;\n" O32(79, "%r30"),
    gen_cvt, ref_cvt, 3000};

Test(isa_cvt, cvt) { run_family(&CVT); }

/* ---------------------------------------------------------------------------------------------
 * sm_89/sm_90 forms: f8 (e4m3x2, e5m2x2) from f32 pairs and f16x2 and back, bf16 conversions in the
 * four roundings and from integers, min/max .xorsign.abs, ex2/lg2 without .ftz on subnormals. */

/* e4m3 (bias 7, 3 fraction bits, max 448, no infinities) or e5m2 (bias 15, 2 bits, max 57344) */
static uint8_t cvt_f8(double v, bool e4m3, bool relu) {
    int mb = e4m3 ? 3 : 2, emin = e4m3 ? -6 : -14, bias = e4m3 ? 7 : 15;
    double max = e4m3 ? 448.0 : 57344.0;
    if (isnan(v)) return 0x7F;
    double r = isinf(v) ? v : round_fmt(v, mb, emin, 0);
    if (fabs(r) > max) r = copysign(max, r); /* .satfinite */
    if (relu && signbit(r)) r = 0;
    uint8_t s = signbit(r) ? 0x80 : 0;
    double a = fabs(r);
    if (a == 0) return s;
    int e = ilogb(a);
    if (e < emin) return s | (uint8_t)ldexp(a, mb - emin);
    return s | (uint8_t)((e + bias) << mb | (int)(ldexp(a, mb - e) - (1 << mb)));
}
static double dec_f8(uint8_t u, bool e4m3) {
    int mb = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15, eb = e4m3 ? 4 : 5;
    int e = u >> mb & ((1 << eb) - 1), m = u & ((1 << mb) - 1);
    double s = u & 0x80 ? -1 : 1;
    if (e4m3 && (u & 0x7F) == 0x7F) return NAN;
    if (!e4m3 && e == 31) return m ? NAN : s * INFINITY;
    return e ? s * ldexp(1 + ldexp(m, -mb), e - bias) : s * ldexp(m, 1 - bias - mb);
}
static uint32_t f8_to_h2(uint16_t v, bool e4m3, bool relu) {
    uint32_t d = 0;
    for (int k = 0; k < 2; k++) {
        double x = dec_f8((uint8_t)(v >> 8 * k), e4m3);
        if (relu && signbit(x) && !isnan(x)) x = 0;
        d |= (uint32_t)enc_h(x) << 16 * k;
    }
    return d;
}

static void gen_f8(uint64_t *x, int i, int n) {
    gen_f32(x, i, n);
    if (i % 3 == 0) x[0] = fbits(bitsf((uint32_t)x[0]) * 0x1p-120f * (float)(1 << (rnd() % 31))); /* the f8 ranges */
    if (i % 3 == 1) x[1] = fbits(ldexpf(1.0f + (float)(rnd() % 64) / 64.0f, (int)(rnd() % 40) - 24) * (rnd() & 1 ? -1 : 1));
    x[2] = rnd() % 2 ? rnd() : rnd_half(false) | (uint32_t)rnd_half(i & 1) << 16;
    x[0] |= (uint64_t)(rnd() & 1 ? (uint32_t)rnd() : rnd_half(true) | (uint32_t)rnd_half(true) << 16) << 32;
    x[1] |= (uint64_t)(rnd_half(true) | (uint32_t)rnd_half(true) << 16) << 32;
}

static uint64_t xsabs(uint32_t a, uint32_t b, bool max, bool nan) {
    float fa = fabsf(bitsf(a)), fb = fabsf(bitsf(b));
    uint32_t s = (a ^ b) & 0x80000000u;
    if (isnan(fa) || isnan(fb)) {
        if (nan || (isnan(fa) && isnan(fb))) return 0x7FFFFFFF;
        return (fbits(isnan(fa) ? fb : fa) & 0x7FFFFFFF) | s;
    }
    return (fbits(max ? (fa > fb ? fa : fb) : (fa < fb ? fa : fb)) & 0x7FFFFFFF) | s;
}

static void ref_sm90(const uint64_t *x, uint64_t *r) {
    float a = bitsf((uint32_t)x[0]), b = bitsf((uint32_t)x[1]);
    uint32_t c = (uint32_t)x[2];
    uint16_t cl = (uint16_t)c, ch = (uint16_t)(c >> 16);
    r[0] = (uint32_t)cvt_f8(a, true, false) << 8 | cvt_f8(b, true, false);
    r[1] = (uint32_t)cvt_f8(a, false, false) << 8 | cvt_f8(b, false, false);
    r[2] = (uint32_t)cvt_f8(a, true, true) << 8 | cvt_f8(b, true, true);
    r[3] = (uint32_t)cvt_f8(h2d(ch), true, false) << 8 | cvt_f8(h2d(cl), true, false);
    r[4] = (uint32_t)cvt_f8(h2d(ch), false, true) << 8 | cvt_f8(h2d(cl), false, true);
    r[5] = f8_to_h2(cl, true, false);
    r[6] = f8_to_h2(cl, false, false);
    r[7] = f8_to_h2(cl, true, true);
    uint16_t bh = (uint16_t)(x[0] >> 32);
    r[8] = fbits(bitsf((uint32_t)bh << 16));
    r[9] = cvt_b(a, 2, false);
    r[10] = cvt_b(a, 3, false);
    r[11] = (uint32_t)f2i(b2d(bh), 1, -0x1p31, 0x1p31 - 1, true);
    r[12] = isnan(b2d(bh)) ? 0x7FFF : enc_h(overflow(round_fmt(b2d(bh), 10, -14, 0), HMAX, 0));
    double vi = (double)(int32_t)c; /* exact in double */
    r[13] = enc_b(overflow(round_fmt(vi, 7, -126, 0), BMAX, 0));
    r[14] = dbits(b2d(bh));
    r[15] = xsabs((uint32_t)x[0], (uint32_t)x[1], false, false);
    r[16] = xsabs((uint32_t)x[0], (uint32_t)x[1], true, true);
    float e = exp2f(a);
    r[17] = fbits(e);
    r[18] = fpclassify(a) == FP_SUBNORMAL && a < 0 ? SKIP : a < 0 ? 0x7FFFFFFF : fbits(log2f(a)); /* -subnormal: the ISA's table says -Inf, its text that subnormals are kept */
    r[19] = cvt_b(a, 1, true);
}
static const Family SM90 = {
    "sm90_cvt", true, 20, "xxxxxHHHfbbxhbdffaab",
    " cvt.rn.satfinite.e4m3x2.f32 %h20, %f10, %f11;\n" O16(0, "%h20")
    " cvt.rn.satfinite.e5m2x2.f32 %h20, %f10, %f11;\n" O16(1, "%h20")
    " cvt.rn.satfinite.relu.e4m3x2.f32 %h20, %f10, %f11;\n" O16(2, "%h20")
    " cvt.rn.satfinite.e4m3x2.f16x2 %h20, %r12;\n" O16(3, "%h20")
    " cvt.rn.satfinite.relu.e5m2x2.f16x2 %h20, %r12;\n" O16(4, "%h20")
    " cvt.rn.f16x2.e4m3x2 %r30, %h12;\n" O32(5, "%r30")
    " cvt.rn.f16x2.e5m2x2 %r30, %h12;\n" O32(6, "%r30")
    " cvt.rn.relu.f16x2.e4m3x2 %r30, %h12;\n" O32(7, "%r30")
    " cvt.u16.u32 %h25, %r20;\n cvt.f32.bf16 %f20, %h25;\n" OF(8, "%f20")
    " cvt.rm.bf16.f32 %h20, %f10;\n" O16(9, "%h20")
    " cvt.rp.bf16.f32 %h20, %f10;\n" O16(10, "%h20")
    " cvt.rzi.s32.bf16 %r30, %h25;\n" O32(11, "%r30")
    " cvt.rn.f16.bf16 %h20, %h25;\n" O16(12, "%h20")
    " cvt.rn.bf16.s32 %h20, %r12;\n" O16(13, "%h20")
    " cvt.f64.bf16 %fd20, %h25;\n" O64(14, "%fd20")
    " min.xorsign.abs.f32 %f20, %f10, %f11;\n" OF(15, "%f20")
    " max.NaN.xorsign.abs.f32 %f20, %f10, %f11;\n" OF(16, "%f20")
    " ex2.approx.f32 %f20, %f10;\n" OF(17, "%f20")
    " lg2.approx.f32 %f20, %f10;\n" OF(18, "%f20")
    " cvt.rz.relu.bf16.f32 %h20, %f10;\n" O16(19, "%h20"),
    gen_f8, ref_sm90, 2048};

Test(isa_cvt, sm90_cvt) { run_family(&SM90); }

/* ---------------------------------------------------------------------------------------------
 * cvt between every pair of integer types, with and without .sat (generated): the source register is
 * cut to the source type and sign- or zero-extended by its signedness; .sat clamps to the destination's
 * range, else the value is cut to its width; an 8-bit result in a 16-bit register is extended by the
 * destination's signedness.  And float->int for every integer type from f32, f64 and f16 in the four
 * integer roundings, int->float for f16, f32 and f64 in the four roundings. */

typedef struct { const char *name; int bits; bool sign; } IntTy;
static const IntTy ITY[8] = {{"u8", 8, false}, {"s8", 8, true}, {"u16", 16, false}, {"s16", 16, true},
                             {"u32", 32, false}, {"s32", 32, true}, {"u64", 64, false}, {"s64", 64, true}};
static const char *ireg(int bits) { return bits <= 16 ? "%h12" : bits == 32 ? "%r12" : "%rd12"; }
static const char *idst(int bits) { return bits <= 16 ? "%h20" : bits == 32 ? "%r30" : "%rd30"; }
static const char *istore(int bits) { return bits <= 16 ? "cvt.u64.u16" : bits == 32 ? "cvt.u64.u32" : "mov.b64"; }
static int64_t ext(uint64_t v, int bits, bool sign) {
    if (bits == 64) return (int64_t)v;
    uint64_t m = (1ull << bits) - 1;
    v &= m;
    return sign && (v >> (bits - 1) & 1) ? (int64_t)(v | ~m) : (int64_t)v;
}
static uint64_t regbits(int64_t v, int bits, bool sign) { /* the destination register's content */
    int rb = bits <= 16 ? 16 : bits;
    uint64_t u = (uint64_t)ext((uint64_t)v, bits, sign);
    return rb == 64 ? u : u & ((1ull << rb) - 1);
}

static int icvt_pairs[112][3], n_icvt; /* dst, src, sat */
static void ref_icvt(const uint64_t *x, uint64_t *r) {
    for (int k = 0; k < n_icvt; k++) {
        const IntTy *d = &ITY[icvt_pairs[k][0]], *s = &ITY[icvt_pairs[k][1]];
        int64_t v = ext(x[2], s->bits, s->sign);
        bool vneg = s->sign && v < 0; /* an unsigned 64-bit source above INT64_MAX reads as a negative int64_t */
        if (icvt_pairs[k][2]) {
            if (d->sign) {
                int64_t lo = d->bits == 64 ? INT64_MIN : -(1ll << (d->bits - 1)), hi = d->bits == 64 ? INT64_MAX : (1ll << (d->bits - 1)) - 1;
                if (!s->sign && s->bits == 64 && (uint64_t)v > (uint64_t)hi) v = hi;
                else v = v < lo ? lo : v > hi ? hi : v;
            } else {
                uint64_t hi = d->bits == 64 ? UINT64_MAX : (1ull << d->bits) - 1;
                if (vneg) v = 0;
                else if ((uint64_t)v > hi) v = (int64_t)hi;
            }
        }
        r[k] = regbits(v, d->bits, d->sign);
    }
}
static void gen_icvt(uint64_t *x, int i, int n) {
    gen_int(x, i, n);
    if (i % 3 == 0) x[2] = (uint64_t)(int64_t)(int16_t)rnd();
    if (i % 3 == 1) x[2] = rnd() >> (rnd() % 64);
}

Test(isa_cvt, cvt_int_matrix) {
    static char body[40000];
    size_t len = 0;
    n_icvt = 0;
    for (int di = 0; di < 8; di++)
        for (int si = 0; si < 8; si++)
            for (int sat = 0; sat < 2; sat++) {
                const IntTy *d = &ITY[di], *so = &ITY[si];
                bool fits = so->sign == d->sign ? d->bits >= so->bits : !so->sign && d->bits > so->bits;
                if (di == si || (sat && fits)) continue; /* ptxas refuses a .sat that cannot clamp */
                icvt_pairs[n_icvt][0] = di, icvt_pairs[n_icvt][1] = si, icvt_pairs[n_icvt][2] = sat;
                len += (size_t)snprintf(body + len, sizeof body - len, " cvt%s.%s.%s %s, %s;\n %s %%o%d, %s;\n", sat ? ".sat" : "", ITY[di].name,
                                        ITY[si].name, idst(ITY[di].bits), ireg(ITY[si].bits), istore(ITY[di].bits), n_icvt, idst(ITY[di].bits));
                n_icvt++;
            }
    static char kinds[113];
    memset(kinds, 'x', (size_t)n_icvt);
    kinds[n_icvt] = 0;
    Family f = {"cvt_int_matrix", false, n_icvt, kinds, body, gen_icvt, ref_icvt, 512};
    run_family(&f);
}

/* float -> every integer type, four roundings, from f32 (%f10), f64 (%fd11), f16 (%h12) */
static int fcvt_list[96][3], n_fcvt; /* dst int type, src (0 f32, 1 f64, 2 f16), rounding */
static void ref_fcvt(const uint64_t *x, uint64_t *r) {
    for (int k = 0; k < n_fcvt; k++) {
        const IntTy *d = &ITY[fcvt_list[k][0]];
        int src = fcvt_list[k][1];
        double v = src == 0 ? bitsf((uint32_t)x[0]) : src == 1 ? bitsd(x[1]) : h2d((uint16_t)x[2]);
        double lo = d->sign ? -ldexp(1, d->bits - 1) : 0, hi = d->sign ? ldexp(1, d->bits - 1) - 1 : ldexp(1, d->bits) - 1;
        if (d->bits == 64) hi = d->sign ? 0x1p63 : 0x1p64;
        uint64_t u = f2i_nan(v, fcvt_list[k][2], lo, hi, d->sign, src == 1 || d->bits == 64);
        r[k] = regbits((int64_t)u, d->bits, d->sign);
    }
}
static void gen_fcvt(uint64_t *x, int i, int n) {
    gen_cvt(x, i, n);
    x[2] = rnd_half(false);
    if (i % 4 == 0) x[0] = fbits((float)((int64_t)(rnd() % 140000) - 70000) + 0.5f * (float)(rnd() % 3));
    if (i % 4 == 2) x[1] = dbits((double)(int64_t)rnd() * (rnd() & 1 ? 1.0 : 0.25));
}

Test(isa_cvt, cvt_float_int_matrix) {
    static const char *rn[4] = {"rni", "rzi", "rmi", "rpi"}, *sty[3] = {"f32", "f64", "f16"}, *sreg[3] = {"%f10", "%fd11", "%h12"};
    static char body[40000];
    size_t len = 0;
    n_fcvt = 0;
    for (int di = 0; di < 8; di++)
        for (int s = 0; s < 3; s++)
            for (int m = 0; m < 4; m++) {
                fcvt_list[n_fcvt][0] = di, fcvt_list[n_fcvt][1] = s, fcvt_list[n_fcvt][2] = m;
                len += (size_t)snprintf(body + len, sizeof body - len, " cvt.%s.%s.%s %s, %s;\n %s %%o%d, %s;\n", rn[m], ITY[di].name, sty[s],
                                        idst(ITY[di].bits), sreg[s], istore(ITY[di].bits), n_fcvt, idst(ITY[di].bits));
                n_fcvt++;
            }
    static char kinds[97];
    memset(kinds, 'x', (size_t)n_fcvt);
    kinds[n_fcvt] = 0;
    Family f = {"cvt_float_int_matrix", false, n_fcvt, kinds, body, gen_fcvt, ref_fcvt, 1024};
    run_family(&f);
}

/* every integer type -> f16, f32, f64 in .rn .rz .rm .rp */
static int ifcvt_list[96][3], n_ifcvt; /* dst (0 f16, 1 f32, 2 f64), src int type, rounding */
static void ref_ifcvt(const uint64_t *x, uint64_t *r) {
    for (int k = 0; k < n_ifcvt; k++) {
        const IntTy *s = &ITY[ifcvt_list[k][1]];
        int m = ifcvt_list[k][2];
        int64_t v = ext(x[2], s->bits, s->sign);
        switch (ifcvt_list[k][0]) {
        case 0: { /* through |v| rounded to odd at 53 bits (a 64-bit integer is not always exact in double) */
            bool neg = s->sign && v < 0;
            uint64_t u = neg ? 0 - (uint64_t)v : (uint64_t)v;
            double dv = (double)u;
            if (u >= 1ull << 53) {
                int sh = 64 - __builtin_clzll(u) - 53;
                uint64_t t = u >> sh | ((u & ((1ull << sh) - 1)) != 0);
                dv = ldexp((double)t, sh);
            }
            r[k] = enc_h(overflow(round_fmt(neg ? -dv : dv, 10, -14, m), HMAX, m));
            break;
        }
        case 1: r[k] = fbits(i2f(v, (uint64_t)v, s->sign, m)); break;
        default: r[k] = dbits(i2d(v, (uint64_t)v, s->sign, m)); break;
        }
    }
}
Test(isa_cvt, cvt_int_float_matrix) {
    static const char *rn[4] = {"rn", "rz", "rm", "rp"}, *dty[3] = {"f16", "f32", "f64"}, *dreg[3] = {"%h20", "%f20", "%fd20"},
                      *dst[3] = {"cvt.u64.u16 %%o%d, %%h20", "mov.b32 %%rt, %%f20;\n cvt.u64.u32 %%o%d, %%rt", "mov.b64 %%o%d, %%fd20"};
    static char body[40000];
    size_t len = 0;
    n_ifcvt = 0;
    for (int di = 0; di < 3; di++)
        for (int s = 0; s < 8; s++)
            for (int m = 0; m < 4; m++) {
                ifcvt_list[n_ifcvt][0] = di, ifcvt_list[n_ifcvt][1] = s, ifcvt_list[n_ifcvt][2] = m;
                len += (size_t)snprintf(body + len, sizeof body - len, " cvt.%s.%s.%s %s, %s;\n ", rn[m], dty[di], ITY[s].name, dreg[di],
                                        ireg(ITY[s].bits));
                len += (size_t)snprintf(body + len, sizeof body - len, dst[di], n_ifcvt);
                len += (size_t)snprintf(body + len, sizeof body - len, ";\n");
                n_ifcvt++;
            }
    static char kinds[97];
    for (int k = 0; k < n_ifcvt; k++) kinds[k] = "hfd"[ifcvt_list[k][0]];
    kinds[n_ifcvt] = 0;
    Family f = {"cvt_int_float_matrix", false, n_ifcvt, kinds, body, gen_icvt, ref_ifcvt, 512};
    run_family(&f);
}

/* ---------------------------------------------------------------------------------------------
 * .sat on float destinations of cvt (clamped to [0, 1] after the rounding; NaN and -0 give +0), from
 * floats and from integers. */

static void ref_cvtsat(const uint64_t *x, uint64_t *r) {
    float f = bitsf((uint32_t)x[0]);
    double d = bitsd(x[1]);
    int32_t i = (int32_t)x[2];
    double hs = isnan(f) ? 0 : round_fmt(f, 10, -14, 0);
    hs = isnan(hs) || hs <= 0 ? 0 : hs > 1 ? 1 : hs;
    r[0] = enc_h(hs);
    r[1] = F(sat32f(d2f(d, 1)));
    double fr = isnan(d) ? 0 : f64_round(d, 0);
    r[2] = dbits(isnan(fr) || fr <= 0 ? 0 : fr > 1 ? 1 : fr);
    r[3] = F(sat32f(i2f(i, 0, true, 0)));
    r[4] = dbits(ftz32(f) <= 0 || isnan(f) ? 0.0 : ftz32(f) > 1 ? 1.0 : (double)f);
    r[5] = F(sat32f(ftz32(f)));
}
static const Family CVTSAT = {
    "cvt_sat", false, 6, "hfdfdf",
    " cvt.rn.sat.f16.f32 %h20, %f10;\n" O16(0, "%h20")
    " cvt.rz.sat.f32.f64 %f20, %fd11;\n" OF(1, "%f20")
    " cvt.rni.sat.f64.f64 %fd20, %fd11;\n" O64(2, "%fd20")
    " cvt.rn.sat.f32.s32 %f20, %r12;\n" OF(3, "%f20")
    " cvt.ftz.sat.f64.f32 %fd20, %f10;\n" O64(4, "%fd20")
    " cvt.ftz.sat.f32.f32 %f20, %f10;\n" OF(5, "%f20"),
    gen_cvt, ref_cvtsat, 1024};

Test(isa_cvt, cvt_sat) { run_family(&CVTSAT); }

/* ---------------------------------------------------------------------------------------------
 * One rounding, not two: 64-bit integers and f64 values just past a tie of the narrow format (the
 * bits that break the tie sit below f64's or f32's precision), converted in every rounding. */

static void gen_tie(uint64_t *x, int i, int n) {
    (void)n;
    /* 2^(62-k) + high bits + 2^(38-k) (f32's half ulp there) + a low bit below f64's precision */
    int k = (int)(rnd() % 9);
    uint64_t u = 1ull << (62 - k) | (rnd() & ((1ull << (62 - k)) - 1) & ~((1ull << (39 - k)) - 1)) | 1ull << (38 - k);
    switch (i % 4) {
    case 0: u |= 1; break; /* just past the tie */
    case 1: break;         /* the tie */
    case 2: u -= 1; break; /* just below it */
    default: u = rnd(); break;
    }
    x[2] = rnd() & 1 ? u : 0 - u;
    /* f64 past an f16 tie: 1 + k 2^-10 + 2^-11 + tiny, or the same at other exponents */
    double base = ldexp(1.0 + (double)(rnd() % 1024) / 1024.0 + ldexp(1.0, -11), (int)(rnd() % 30) - 14);
    double tiny = ldexp(base, -(int)(30 + rnd() % 20));
    x[1] = dbits((rnd() & 1 ? 1 : -1) * (i % 3 == 0 ? base + tiny : i % 3 == 1 ? base - tiny : base));
    /* f64 past a bf16 tie */
    double bb = ldexp(1.0 + (double)(rnd() % 128) / 128.0 + ldexp(1.0, -8), (int)(rnd() % 200) - 100);
    x[0] = dbits((rnd() & 1 ? 1 : -1) * (i % 5 < 2 ? bb + ldexp(bb, -40) : i % 5 < 4 ? bb - ldexp(bb, -40) : bb));
}
static void ref_tie(const uint64_t *x, uint64_t *r) {
    int64_t s = (int64_t)x[2];
    for (int m = 0; m < 4; m++) {
        r[m] = fbits(i2f(s, 0, true, m));
        r[4 + m] = fbits(i2f(0, x[2], false, m));
        double d = bitsd(x[1]);
        r[8 + m] = enc_h(overflow(round_fmt(d, 10, -14, m), HMAX, m));
    }
    double bd = bitsd(x[0]);
    r[12] = enc_b(overflow(round_fmt(bd, 7, -126, 0), BMAX, 0));
    r[13] = enc_b(overflow(round_fmt(bd, 7, -126, 1), BMAX, 1));
}
static const Family TIE = {
    "one_rounding", true, 14, "ffffffffhhhhbb",
    " cvt.rn.f32.s64 %f20, %rd12;\n" OF(0, "%f20") " cvt.rz.f32.s64 %f20, %rd12;\n" OF(1, "%f20")
    " cvt.rm.f32.s64 %f20, %rd12;\n" OF(2, "%f20") " cvt.rp.f32.s64 %f20, %rd12;\n" OF(3, "%f20")
    " cvt.rn.f32.u64 %f20, %rd12;\n" OF(4, "%f20") " cvt.rz.f32.u64 %f20, %rd12;\n" OF(5, "%f20")
    " cvt.rm.f32.u64 %f20, %rd12;\n" OF(6, "%f20") " cvt.rp.f32.u64 %f20, %rd12;\n" OF(7, "%f20")
    " cvt.rn.f16.f64 %h20, %fd11;\n" O16(8, "%h20") " cvt.rz.f16.f64 %h20, %fd11;\n" O16(9, "%h20")
    " cvt.rm.f16.f64 %h20, %fd11;\n" O16(10, "%h20") " cvt.rp.f16.f64 %h20, %fd11;\n" O16(11, "%h20")
    " cvt.rn.bf16.f64 %h20, %fd10;\n" O16(12, "%h20") " cvt.rz.bf16.f64 %h20, %fd10;\n" O16(13, "%h20"),
    gen_tie, ref_tie, 1024};

Test(isa_cvt, one_rounding) { run_family(&TIE); }

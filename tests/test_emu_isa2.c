/* test_emu_isa2.c - the emulator's integer, bit and floating-point instructions against references
 * written in C from the PTX ISA's instruction pages (not from emu/), at edge values (the harness and
 * the rules of the comparison: emu_isa_family.h; the conversions: test_emu_isa_cvt.c). */
#include "emu_isa_family.h"

/* ---------------------------------------------------------------------------------------------
 * Bit instructions, 32-bit: prmt (generic and the six modes), bfe, bfi, shf, shl/shr, bmsk, szext,
 * brev, popc, clz, bfind, fns, cnot, lop3. */

static const uint64_t E32[] = {0, 1, 2, 0x7F, 0x80, 0xFF, 0x8000, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFF, 0xFFFFFFFE, 0x00FF00FF, 0xF0F0F0F0};
static const uint64_t SMALL[] = {0, 1, 2, 7, 8, 15, 16, 17, 24, 30, 31, 32, 33, 40, 48, 63, 64, 65, 100, 127, 128, 200, 255, 256, 257, 287, 0x80000000, 0xFFFFFFFF,
                                 0xFFFFFFFE, 0xFFFFFFF0, 0xFFFFFFE0, 0xFFFFFFDF, 0x100000020ull};

static void gen_bits(uint64_t *x, int i, int n) {
    (void)i, (void)n;
    x[0] = rnd() & 1 ? PICK(E32) | (rnd() & 1 ? 0 : rnd() << 32) : rnd();
    x[1] = rnd() % 3 ? (rnd() & 1 ? PICK(SMALL) : rnd()) : PICK(E32);
    x[2] = rnd() % 4 ? PICK(SMALL) | (uint64_t)PICK(SMALL) << 32 : rnd();
}

static uint32_t ref_prmt(uint32_t a, uint32_t b, uint32_t c, int mode) {
    uint64_t t = (uint64_t)b << 32 | a;
    /* modes: for c[1:0] = 0..3, the source byte of each destination byte, d.b0 first */
    static const uint8_t tab[6][4][4] = {
        {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}}, /* f4e: forward 4 extract */
        {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}}, /* b4e: backward 4 extract */
        {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}}, /* rc8: replicate 8 */
        {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}}, /* ecl: edge clamp left */
        {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}}, /* ecr: edge clamp right */
        {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}}, /* rc16: replicate 16 */
    };
    uint32_t d = 0;
    for (int k = 0; k < 4; k++) {
        uint32_t byte;
        if (mode < 0) {
            unsigned sel = c >> (4 * k) & 0xF;
            byte = (uint32_t)(t >> (8 * (sel & 7))) & 0xFF;
            if (sel & 8) byte = byte & 0x80 ? 0xFF : 0;
        } else {
            byte = (uint32_t)(t >> (8 * tab[mode][c & 3][k])) & 0xFF;
        }
        d |= byte << (8 * k);
    }
    return d;
}

static uint64_t ref_bfe(uint64_t a, uint32_t pos, uint32_t len, int bits, bool sign) {
    int msb = bits - 1;
    pos &= 0xFF, len &= 0xFF;
    int sbit = 0;
    if (sign && len) {
        int top = (int)(pos + len - 1) < msb ? (int)(pos + len - 1) : msb;
        sbit = (int)(a >> top & 1);
    }
    uint64_t d = 0;
    for (int i = 0; i <= msb; i++) {
        int v = (uint32_t)i < len && pos + (uint32_t)i <= (uint32_t)msb ? (int)(a >> (pos + i) & 1) : sbit;
        d |= (uint64_t)v << i;
    }
    return d;
}

static uint64_t ref_bfi(uint64_t a, uint64_t b, uint32_t pos, uint32_t len, int bits) {
    pos &= 0xFF, len &= 0xFF;
    uint64_t f = b;
    for (uint32_t i = 0; i < len && pos + i <= (uint32_t)bits - 1; i++) f = (f & ~(1ull << (pos + i))) | (a >> i & 1) << (pos + i);
    return f;
}

static uint32_t ref_bmsk(uint32_t a, uint32_t b, bool clamp) {
    uint32_t a1 = a & 31, b1 = b & 31, sum = a1 + b1;
    uint32_t mask0 = ~0u << a1, mask1 = sum >= 32 ? 0 : ~0u << sum;
    bool over = sum >= 32;
    if (clamp) {
        if (a >= 32) mask0 = 0, over = true;
        if (b >= 32) over = true;
    }
    if (over) mask1 = 0;
    else if (b1 == 0) mask1 = ~0u;
    return mask0 & ~mask1;
}

static uint32_t ref_szext(uint32_t a, uint32_t b, bool clamp, bool sign) {
    uint32_t b1 = b & 31;
    bool too_large = b >= 32 && clamp;
    uint32_t mask = too_large ? 0 : ~0u << b1;
    bool sbit = b1 && !too_large && sign && (a >> ((b1 - 1) & 31) & 1);
    return (a & ~mask) | (sbit ? mask : 0);
}

static uint32_t ref_bfind(uint64_t a, int bits, bool sign, bool shiftamt) {
    int msb = bits - 1;
    if (sign && (a >> msb & 1)) a = ~a;
    uint32_t d = 0xFFFFFFFF;
    for (int i = msb; i >= 0; i--)
        if (a >> i & 1) { d = (uint32_t)i; break; }
    if (shiftamt && d != 0xFFFFFFFF) d = (uint32_t)msb - d;
    return d;
}

static uint32_t ref_fns(uint32_t mask, uint32_t base, int32_t offset) {
    if (offset == 0) return mask >> base & 1 ? base : 0xFFFFFFFF;
    int pos = (int)base, inc = offset > 0 ? 1 : -1;
    int64_t count = llabs((long long)offset) - 1;
    for (; pos >= 0 && pos < 32; pos += inc)
        if (mask >> pos & 1) {
            if (count == 0) return (uint32_t)pos;
            count--;
        }
    return 0xFFFFFFFF;
}

static uint32_t ref_lop3(uint32_t a, uint32_t b, uint32_t c, unsigned lut) {
    uint32_t d = 0;
    for (int i = 0; i < 32; i++) {
        unsigned idx = (a >> i & 1) << 2 | (b >> i & 1) << 1 | (c >> i & 1);
        d |= (uint32_t)(lut >> idx & 1) << i;
    }
    return d;
}

static uint32_t shf(uint32_t a, uint32_t b, uint32_t c, bool left, bool clamp) {
    uint32_t n = clamp ? (c < 32 ? c : 32) : c & 31;
    uint64_t t = (uint64_t)b << 32 | a;
    return left ? (uint32_t)((t << n) >> 32) : (uint32_t)(t >> n);
}

static void ref_bits32(const uint64_t *x, uint64_t *r) {
    uint32_t a = (uint32_t)x[0], b = (uint32_t)x[1], c = (uint32_t)x[2], ch = (uint32_t)(x[2] >> 32);
    r[0] = ref_prmt(a, b, c, -1);
    for (int m = 0; m < 6; m++) r[1 + m] = ref_prmt(a, b, c, m);
    r[7] = ref_bfe(a, b, c, 32, false);
    r[8] = (uint32_t)ref_bfe(a, b, c, 32, true);
    r[9] = ref_bfi(a, b, c, ch, 32);
    r[10] = shf(a, b, c, true, true);
    r[11] = shf(a, b, c, true, false);
    r[12] = shf(a, b, c, false, true);
    r[13] = shf(a, b, c, false, false);
    r[14] = c >= 32 ? 0 : a << c;
    r[15] = c >= 32 ? 0 : a >> c;
    r[16] = (uint32_t)(c >= 32 ? ((int32_t)a < 0 ? -1 : 0) : (int32_t)a >> c);
    r[17] = ref_bmsk(b, c, true);
    r[18] = ref_bmsk(b, c, false);
    r[19] = ref_szext(a, c, true, true);
    r[20] = ref_szext(a, c, false, true);
    r[21] = ref_szext(a, c, true, false);
    r[22] = ref_szext(a, c, false, false);
    uint32_t br = 0;
    for (int i = 0; i < 32; i++) br |= (a >> i & 1) << (31 - i);
    r[23] = br;
    r[24] = (uint32_t)__builtin_popcount(a);
    r[25] = a ? (uint32_t)__builtin_clz(a) : 32;
    r[26] = ref_bfind(a, 32, false, false);
    r[27] = ref_bfind(a, 32, true, false);
    r[28] = ref_bfind(a, 32, false, true);
    r[29] = ref_bfind(a, 32, true, true);
    r[30] = ref_fns(a, b & 31, (int32_t)c);
    r[31] = a == 0;
    r[32] = ref_lop3(a, b, c, 0x96);
    r[33] = ref_lop3(a, b, c, 0xE8);
    r[34] = ref_lop3(a, b, c, 0x1B);
    r[35] = ref_lop3(a, b, c, 0x00);
    r[36] = ref_lop3(a, b, c, 0xFF);
    r[37] = ref_lop3(a, b, c, 0x6A);
    r[38] = ~a;
    r[39] = 0u - a;
}

static const Family BITS32 = {
    "bits32", false, 40, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    " prmt.b32 %r30, %r10, %r11, %r12;\n" O32(0, "%r30")
    " prmt.b32.f4e %r30, %r10, %r11, %r12;\n" O32(1, "%r30")
    " prmt.b32.b4e %r30, %r10, %r11, %r12;\n" O32(2, "%r30")
    " prmt.b32.rc8 %r30, %r10, %r11, %r12;\n" O32(3, "%r30")
    " prmt.b32.ecl %r30, %r10, %r11, %r12;\n" O32(4, "%r30")
    " prmt.b32.ecr %r30, %r10, %r11, %r12;\n" O32(5, "%r30")
    " prmt.b32.rc16 %r30, %r10, %r11, %r12;\n" O32(6, "%r30")
    " bfe.u32 %r30, %r10, %r11, %r12;\n" O32(7, "%r30")
    " bfe.s32 %r30, %r10, %r11, %r12;\n" O32(8, "%r30")
    " bfi.b32 %r30, %r10, %r11, %r12, %r13;\n" O32(9, "%r30")
    " shf.l.clamp.b32 %r30, %r10, %r11, %r12;\n" O32(10, "%r30")
    " shf.l.wrap.b32 %r30, %r10, %r11, %r12;\n" O32(11, "%r30")
    " shf.r.clamp.b32 %r30, %r10, %r11, %r12;\n" O32(12, "%r30")
    " shf.r.wrap.b32 %r30, %r10, %r11, %r12;\n" O32(13, "%r30")
    " shl.b32 %r30, %r10, %r12;\n" O32(14, "%r30")
    " shr.u32 %r30, %r10, %r12;\n" O32(15, "%r30")
    " shr.s32 %r30, %r10, %r12;\n" O32(16, "%r30")
    " bmsk.clamp.b32 %r30, %r11, %r12;\n" O32(17, "%r30")
    " bmsk.wrap.b32 %r30, %r11, %r12;\n" O32(18, "%r30")
    " szext.clamp.s32 %r30, %r10, %r12;\n" O32(19, "%r30")
    " szext.wrap.s32 %r30, %r10, %r12;\n" O32(20, "%r30")
    " szext.clamp.u32 %r30, %r10, %r12;\n" O32(21, "%r30")
    " szext.wrap.u32 %r30, %r10, %r12;\n" O32(22, "%r30")
    " brev.b32 %r30, %r10;\n" O32(23, "%r30")
    " popc.b32 %r30, %r10;\n" O32(24, "%r30")
    " clz.b32 %r30, %r10;\n" O32(25, "%r30")
    " bfind.u32 %r30, %r10;\n" O32(26, "%r30")
    " bfind.s32 %r30, %r10;\n" O32(27, "%r30")
    " bfind.shiftamt.u32 %r30, %r10;\n" O32(28, "%r30")
    " bfind.shiftamt.s32 %r30, %r10;\n" O32(29, "%r30")
    " and.b32 %r31, %r11, 31;\n fns.b32 %r30, %r10, %r31, %r12;\n" O32(30, "%r30")
    " cnot.b32 %r30, %r10;\n" O32(31, "%r30")
    " lop3.b32 %r30, %r10, %r11, %r12, 0x96;\n" O32(32, "%r30")
    " lop3.b32 %r30, %r10, %r11, %r12, 0xE8;\n" O32(33, "%r30")
    " lop3.b32 %r30, %r10, %r11, %r12, 0x1B;\n" O32(34, "%r30")
    " lop3.b32 %r30, %r10, %r11, %r12, 0x00;\n" O32(35, "%r30")
    " lop3.b32 %r30, %r10, %r11, %r12, 0xFF;\n" O32(36, "%r30")
    " lop3.b32 %r30, %r10, %r11, %r12, 0x6A;\n" O32(37, "%r30")
    " not.b32 %r30, %r10;\n" O32(38, "%r30")
    " neg.s32 %r30, %r10;\n" O32(39, "%r30"),
    gen_bits, ref_bits32, 1024};

Test(isa2, bits32) { run_family(&BITS32); }

/* 64-bit and 16-bit forms, and predicate logic. */
static void ref_bits64(const uint64_t *x, uint64_t *r) {
    uint64_t a = x[0], b = x[1];
    uint32_t c = (uint32_t)x[2], ch = (uint32_t)(x[2] >> 32);
    uint16_t ah = (uint16_t)a;
    r[0] = ref_bfe(a, (uint32_t)b, c, 64, false);
    r[1] = ref_bfe(a, (uint32_t)b, c, 64, true);
    r[2] = ref_bfi(a, b, c, ch, 64);
    r[3] = c >= 64 ? 0 : a << c;
    r[4] = c >= 64 ? 0 : a >> c;
    r[5] = (uint64_t)(c >= 64 ? ((int64_t)a < 0 ? -1 : 0) : (int64_t)a >> c);
    uint64_t br = 0;
    for (int i = 0; i < 64; i++) br |= (a >> i & 1) << (63 - i);
    r[6] = br;
    r[7] = (uint32_t)__builtin_popcountll(a);
    r[8] = a ? (uint32_t)__builtin_clzll(a) : 64;
    r[9] = ref_bfind(a, 64, false, false);
    r[10] = ref_bfind(a, 64, true, false);
    r[11] = ref_bfind(a, 64, true, true);
    r[12] = a == 0;
    r[13] = (uint16_t)(c >= 16 ? 0 : ah << c);
    r[14] = (uint16_t)(c >= 16 ? ((int16_t)ah < 0 ? 0xFFFF : 0) : (int16_t)ah >> c);
    r[15] = (uint16_t)(c >= 16 ? 0 : ah >> c);
    r[16] = ah == 0;
    bool p = (a & 1) != 0, q = (b & 1) != 0;
    r[17] = !p;
    r[18] = (p && q) | (p ^ q) << 1 | (p || q) << 2 | (!p) << 3;
    r[19] = (uint16_t)__builtin_popcount(ah);
}

static const Family BITS64 = {
    "bits64", false, 20, "xxxxxxxxxxxxxxxxxxxx",
    " bfe.u64 %rd30, %rd10, %r11, %r12;\n" O64(0, "%rd30")
    " bfe.s64 %rd30, %rd10, %r11, %r12;\n" O64(1, "%rd30")
    " bfi.b64 %rd30, %rd10, %rd11, %r12, %r13;\n" O64(2, "%rd30")
    " shl.b64 %rd30, %rd10, %r12;\n" O64(3, "%rd30")
    " shr.u64 %rd30, %rd10, %r12;\n" O64(4, "%rd30")
    " shr.s64 %rd30, %rd10, %r12;\n" O64(5, "%rd30")
    " brev.b64 %rd30, %rd10;\n" O64(6, "%rd30")
    " popc.b64 %r30, %rd10;\n" O32(7, "%r30")
    " clz.b64 %r30, %rd10;\n" O32(8, "%r30")
    " bfind.u64 %r30, %rd10;\n" O32(9, "%r30")
    " bfind.s64 %r30, %rd10;\n" O32(10, "%r30")
    " bfind.shiftamt.s64 %r30, %rd10;\n" O32(11, "%r30")
    " cnot.b64 %rd30, %rd10;\n" O64(12, "%rd30")
    " shl.b16 %h20, %h10, %r12;\n" O16(13, "%h20")
    " shr.s16 %h20, %h10, %r12;\n" O16(14, "%h20")
    " shr.u16 %h20, %h10, %r12;\n" O16(15, "%h20")
    " cnot.b16 %h20, %h10;\n" O16(16, "%h20")
    " and.b32 %r30, %r10, 1;\n setp.ne.u32 %p1, %r30, 0;\n and.b32 %r30, %r11, 1;\n setp.ne.u32 %p2, %r30, 0;\n"
    " not.pred %p3, %p1;\n" OP(17, "%p3")
    " and.pred %p4, %p1, %p2;\n xor.pred %p5, %p1, %p2;\n or.pred %p6, %p1, %p2;\n"
    " selp.u32 %r31, 1, 0, %p4;\n selp.u32 %r32, 2, 0, %p5;\n selp.u32 %r33, 4, 0, %p6;\n selp.u32 %r34, 8, 0, !%p1;\n"
    " or.b32 %r31, %r31, %r32;\n or.b32 %r31, %r31, %r33;\n or.b32 %r31, %r31, %r34;\n" O32(18, "%r31")
    " popc.b32 %r30, %r10;\n and.b32 %r30, %r30, 0;\n cvt.u32.u16 %r35, %h10;\n popc.b32 %r30, %r35;\n" O32(19, "%r30"),
    gen_bits, ref_bits64, 1024};

Test(isa2, bits64) { run_family(&BITS64); }

/* ---------------------------------------------------------------------------------------------
 * Integer arithmetic: .sat, .hi/.wide/.lo, mul24/mad24, sad, abs/neg, min/max, dp4a/dp2a, div/rem
 * (division by zero and INT_MIN / -1: the ISA leaves the value open), the carry chains. */
static int64_t sat32(int64_t v) { return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v; }
static int64_t sx24(uint32_t v) { return (int64_t)((int32_t)(v << 8) >> 8); }

static uint32_t ref_dp(uint32_t a, uint32_t b, uint32_t c, bool as, bool bs, int two, int hi) {
    int64_t d = (int32_t)c;
    for (int i = 0; i < (two ? 2 : 4); i++) {
        int64_t va = two ? (as ? (int16_t)(a >> 16 * i) : (uint16_t)(a >> 16 * i)) : (as ? (int8_t)(a >> 8 * i) : (uint8_t)(a >> 8 * i));
        int bi = two ? 2 * hi + i : i;
        int64_t vb = bs ? (int8_t)(b >> 8 * bi) : (uint8_t)(b >> 8 * bi);
        d += va * vb;
    }
    return (uint32_t)d;
}

static void ref_int32(const uint64_t *x, uint64_t *r) {
    uint32_t a = (uint32_t)x[0], b = (uint32_t)x[1], c = (uint32_t)x[2];
    int32_t sa = (int32_t)a, sb = (int32_t)b, sc = (int32_t)c;
    r[0] = (uint32_t)sat32((int64_t)sa + sb);
    r[1] = (uint32_t)sat32((int64_t)sa - sb);
    r[2] = a * b;
    r[3] = (uint32_t)((int64_t)sa * sb >> 32);
    r[4] = (uint32_t)((uint64_t)a * b >> 32);
    r[5] = (uint64_t)((int64_t)sa * sb);
    r[6] = (uint64_t)a * b;
    r[7] = a * b + c;
    r[8] = (uint32_t)(((int64_t)sa * sb >> 32) + sc);
    r[9] = (uint32_t)sat32(((int64_t)sa * sb >> 32) + sc);
    r[10] = (uint64_t)((int64_t)sa * sb) + x[2];
    r[11] = (uint64_t)a * b + x[2];
    r[12] = (uint32_t)(sx24(a) * sx24(b));
    r[13] = (uint32_t)((uint64_t)(a & 0xFFFFFF) * (b & 0xFFFFFF));
    r[14] = (uint32_t)(sx24(a) * sx24(b) >> 16);
    r[15] = (uint32_t)((uint64_t)(a & 0xFFFFFF) * (b & 0xFFFFFF) >> 16);
    r[16] = (uint32_t)((uint64_t)(a & 0xFFFFFF) * (b & 0xFFFFFF)) + c;
    r[17] = (uint32_t)((sx24(a) * sx24(b) >> 16) + sc);
    r[18] = (uint32_t)sat32((sx24(a) * sx24(b) >> 16) + sc);
    r[19] = (uint32_t)(c + (uint32_t)(sa > sb ? (int64_t)sa - sb : (int64_t)sb - sa));
    r[20] = c + (a > b ? a - b : b - a);
    r[21] = sa == INT32_MIN ? a : (uint32_t)(sa < 0 ? -sa : sa);
    r[22] = sa < sb ? a : b;
    r[23] = a < b ? a : b;
    r[24] = sa > sb ? a : b;
    r[25] = a > b ? a : b;
    for (int k = 0; k < 4; k++) r[26 + k] = ref_dp(a, b, c, k & 2, k & 1, 0, 0);
    for (int k = 0; k < 8; k++) r[30 + k] = ref_dp(a, b, c, k & 2, k & 1, 1, k >> 2);
    r[38] = b == 0 || (sa == INT32_MIN && sb == -1) ? SKIP : (uint32_t)(sa / sb);
    r[39] = b == 0 || (sa == INT32_MIN && sb == -1) ? SKIP : (uint32_t)(sa % sb);
    r[40] = b == 0 ? SKIP : a / b;
    r[41] = b == 0 ? SKIP : a % b;
    r[42] = (uint16_t)((int16_t)a < (int16_t)b ? a : b);
    r[43] = (uint16_t)((uint16_t)a > (uint16_t)b ? a : b);
    r[44] = (uint16_t)(a * b);
    r[45] = (uint16_t)((int32_t)(int16_t)a * (int16_t)b >> 16);
    r[46] = (uint32_t)((int16_t)a * (int16_t)b);
    r[47] = (uint16_t)((int16_t)a == INT16_MIN ? a : (uint16_t)((int16_t)a < 0 ? -(int16_t)a : (int16_t)a));
}

static const Family INT32 = {
    "int32", false, 48, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    " add.sat.s32 %r30, %r10, %r11;\n" O32(0, "%r30")
    " sub.sat.s32 %r30, %r10, %r11;\n" O32(1, "%r30")
    " mul.lo.s32 %r30, %r10, %r11;\n" O32(2, "%r30")
    " mul.hi.s32 %r30, %r10, %r11;\n" O32(3, "%r30")
    " mul.hi.u32 %r30, %r10, %r11;\n" O32(4, "%r30")
    " mul.wide.s32 %rd30, %r10, %r11;\n" O64(5, "%rd30")
    " mul.wide.u32 %rd30, %r10, %r11;\n" O64(6, "%rd30")
    " mad.lo.u32 %r30, %r10, %r11, %r12;\n" O32(7, "%r30")
    " mad.hi.s32 %r30, %r10, %r11, %r12;\n" O32(8, "%r30")
    " mad.hi.sat.s32 %r30, %r10, %r11, %r12;\n" O32(9, "%r30")
    " mad.wide.s32 %rd30, %r10, %r11, %rd12;\n" O64(10, "%rd30")
    " mad.wide.u32 %rd30, %r10, %r11, %rd12;\n" O64(11, "%rd30")
    " mul24.lo.s32 %r30, %r10, %r11;\n" O32(12, "%r30")
    " mul24.lo.u32 %r30, %r10, %r11;\n" O32(13, "%r30")
    " mul24.hi.s32 %r30, %r10, %r11;\n" O32(14, "%r30")
    " mul24.hi.u32 %r30, %r10, %r11;\n" O32(15, "%r30")
    " mad24.lo.u32 %r30, %r10, %r11, %r12;\n" O32(16, "%r30")
    " mad24.hi.s32 %r30, %r10, %r11, %r12;\n" O32(17, "%r30")
    " mad24.hi.sat.s32 %r30, %r10, %r11, %r12;\n" O32(18, "%r30")
    " sad.s32 %r30, %r10, %r11, %r12;\n" O32(19, "%r30")
    " sad.u32 %r30, %r10, %r11, %r12;\n" O32(20, "%r30")
    " abs.s32 %r30, %r10;\n" O32(21, "%r30")
    " min.s32 %r30, %r10, %r11;\n" O32(22, "%r30")
    " min.u32 %r30, %r10, %r11;\n" O32(23, "%r30")
    " max.s32 %r30, %r10, %r11;\n" O32(24, "%r30")
    " max.u32 %r30, %r10, %r11;\n" O32(25, "%r30")
    " dp4a.u32.u32 %r30, %r10, %r11, %r12;\n" O32(26, "%r30")
    " dp4a.u32.s32 %r30, %r10, %r11, %r12;\n" O32(27, "%r30")
    " dp4a.s32.u32 %r30, %r10, %r11, %r12;\n" O32(28, "%r30")
    " dp4a.s32.s32 %r30, %r10, %r11, %r12;\n" O32(29, "%r30")
    " dp2a.lo.u32.u32 %r30, %r10, %r11, %r12;\n" O32(30, "%r30")
    " dp2a.lo.u32.s32 %r30, %r10, %r11, %r12;\n" O32(31, "%r30")
    " dp2a.lo.s32.u32 %r30, %r10, %r11, %r12;\n" O32(32, "%r30")
    " dp2a.lo.s32.s32 %r30, %r10, %r11, %r12;\n" O32(33, "%r30")
    " dp2a.hi.u32.u32 %r30, %r10, %r11, %r12;\n" O32(34, "%r30")
    " dp2a.hi.u32.s32 %r30, %r10, %r11, %r12;\n" O32(35, "%r30")
    " dp2a.hi.s32.u32 %r30, %r10, %r11, %r12;\n" O32(36, "%r30")
    " dp2a.hi.s32.s32 %r30, %r10, %r11, %r12;\n" O32(37, "%r30")
    " div.s32 %r30, %r10, %r11;\n" O32(38, "%r30")
    " rem.s32 %r30, %r10, %r11;\n" O32(39, "%r30")
    " div.u32 %r30, %r10, %r11;\n" O32(40, "%r30")
    " rem.u32 %r30, %r10, %r11;\n" O32(41, "%r30")
    " min.s16 %h20, %h10, %h11;\n" O16(42, "%h20")
    " max.u16 %h20, %h10, %h11;\n" O16(43, "%h20")
    " mul.lo.u16 %h20, %h10, %h11;\n" O16(44, "%h20")
    " mul.hi.s16 %h20, %h10, %h11;\n" O16(45, "%h20")
    " mul.wide.s16 %r30, %h10, %h11;\n" O32(46, "%r30")
    " abs.s16 %h20, %h10;\n" O16(47, "%h20"),
    gen_int, ref_int32, 1024};

Test(isa2, int32) { run_family(&INT32); }

static void ref_int64(const uint64_t *x, uint64_t *r) {
    uint64_t a = x[0], b = x[1], c = x[2];
    int64_t sa = (int64_t)a, sb = (int64_t)b;
    r[0] = a * b;
    r[1] = (uint64_t)((__int128)sa * sb >> 64);
    r[2] = (uint64_t)((unsigned __int128)a * b >> 64);
    r[3] = a * b + c;
    r[4] = (uint64_t)((unsigned __int128)a * b >> 64) + c;
    r[5] = b == 0 || (sa == INT64_MIN && sb == -1) ? SKIP : (uint64_t)(sa / sb);
    r[6] = b == 0 || (sa == INT64_MIN && sb == -1) ? SKIP : (uint64_t)(sa % sb);
    r[7] = b == 0 ? SKIP : a / b;
    r[8] = b == 0 ? SKIP : a % b;
    r[9] = c + (sa > sb ? a - b : b - a);
    r[10] = c + (a > b ? a - b : b - a);
    r[11] = sa < 0 ? 0 - a : a;
    r[12] = 0 - a;
    r[13] = sa < sb ? a : b;
    r[14] = a > b ? a : b;
    /* carry chains: 96-bit {c.lo, a.hi, a.lo} + {c.hi, b.hi, b.lo}, the same difference, 128-bit {b, a} + {a, c} */
    unsigned __int128 X = (unsigned __int128)(uint32_t)c << 64 | a, Y = (unsigned __int128)(c >> 32) << 64 | b;
    unsigned __int128 S = X + Y, D = X - Y;
    r[15] = (uint64_t)S;
    r[16] = (uint32_t)(S >> 64);
    r[17] = (uint64_t)D;
    r[18] = (uint32_t)(D >> 64);
    unsigned __int128 P = ((unsigned __int128)b << 64 | a) + ((unsigned __int128)a << 64 | c);
    r[19] = (uint64_t)P;
    r[20] = (uint64_t)(P >> 64);
    /* mad.lo.cc + madc.hi: a.lo * b.lo + c as 64 bits through the carry, plus the carry out of madc.hi.cc */
    uint32_t al = (uint32_t)a, bl = (uint32_t)b, cl = (uint32_t)c, chh = (uint32_t)(c >> 32);
    uint64_t lo = (uint64_t)(uint32_t)(al * bl) + cl;
    uint64_t hi = ((uint64_t)al * bl >> 32) + chh + (lo >> 32);
    r[21] = (uint32_t)lo | (uint64_t)(uint32_t)hi << 32;
    r[22] = hi >> 32;
    r[23] = (uint64_t)(sa < 0 ? -(uint64_t)sa : (uint64_t)sa) == a ? 1 : 0;
}

static const Family INT64 = {
    "int64", false, 24, "xxxxxxxxxxxxxxxxxxxxxxxx",
    " mul.lo.u64 %rd30, %rd10, %rd11;\n" O64(0, "%rd30")
    " mul.hi.s64 %rd30, %rd10, %rd11;\n" O64(1, "%rd30")
    " mul.hi.u64 %rd30, %rd10, %rd11;\n" O64(2, "%rd30")
    " mad.lo.s64 %rd30, %rd10, %rd11, %rd12;\n" O64(3, "%rd30")
    " mad.hi.u64 %rd30, %rd10, %rd11, %rd12;\n" O64(4, "%rd30")
    " div.s64 %rd30, %rd10, %rd11;\n" O64(5, "%rd30")
    " rem.s64 %rd30, %rd10, %rd11;\n" O64(6, "%rd30")
    " div.u64 %rd30, %rd10, %rd11;\n" O64(7, "%rd30")
    " rem.u64 %rd30, %rd10, %rd11;\n" O64(8, "%rd30")
    " sad.s64 %rd30, %rd10, %rd11, %rd12;\n" O64(9, "%rd30")
    " sad.u64 %rd30, %rd10, %rd11, %rd12;\n" O64(10, "%rd30")
    " abs.s64 %rd30, %rd10;\n" O64(11, "%rd30")
    " neg.s64 %rd30, %rd10;\n" O64(12, "%rd30")
    " min.s64 %rd30, %rd10, %rd11;\n" O64(13, "%rd30")
    " max.u64 %rd30, %rd10, %rd11;\n" O64(14, "%rd30")
    " add.cc.u32 %r30, %r10, %r11;\n addc.cc.u32 %r31, %r20, %r21;\n addc.u32 %r32, %r12, %r13;\n"
    " mov.b64 %rd30, {%r30, %r31};\n" O64(15, "%rd30") O32(16, "%r32")
    " sub.cc.u32 %r30, %r10, %r11;\n subc.cc.u32 %r31, %r20, %r21;\n subc.u32 %r32, %r12, %r13;\n"
    " mov.b64 %rd30, {%r30, %r31};\n" O64(17, "%rd30") O32(18, "%r32")
    " add.cc.u64 %rd30, %rd10, %rd12;\n addc.u64 %rd31, %rd11, %rd10;\n" O64(19, "%rd30") O64(20, "%rd31")
    " mad.lo.cc.u32 %r30, %r10, %r11, %r12;\n madc.hi.cc.u32 %r31, %r10, %r11, %r13;\n addc.u32 %r32, 0, 0;\n"
    " mov.b64 %rd30, {%r30, %r31};\n" O64(21, "%rd30") O32(22, "%r32")
    " abs.s64 %rd31, %rd10;\n setp.eq.u64 %p1, %rd31, %rd10;\n" OP(23, "%p1"),
    gen_int, ref_int64, 1024};

Test(isa2, int64) { run_family(&INT64); }

/* min/max .relu (sm_90): negative results become 0. */
static void ref_relu(const uint64_t *x, uint64_t *r) {
    int32_t a = (int32_t)x[0], b = (int32_t)x[1];
    int32_t mn = a < b ? a : b, mx = a > b ? a : b;
    r[0] = (uint32_t)(mn < 0 ? 0 : mn);
    r[1] = (uint32_t)(mx < 0 ? 0 : mx);
    uint32_t d = 0;
    for (int h = 0; h < 2; h++) {
        int16_t ah = (int16_t)(x[0] >> 16 * h), bh = (int16_t)(x[1] >> 16 * h);
        int16_t m = ah < bh ? ah : bh;
        d |= (uint32_t)(uint16_t)(m < 0 ? 0 : m) << 16 * h;
    }
    r[2] = d;
    uint32_t mn2 = 0, mx2 = 0;
    for (int k = 0; k < 2; k++) {
        uint16_t p = (uint16_t)(x[0] >> 16 * k), q = (uint16_t)(x[1] >> 16 * k);
        mn2 |= (uint32_t)(p < q ? p : q) << 16 * k;
        mx2 |= (uint32_t)(uint16_t)((int16_t)p > (int16_t)q ? p : q) << 16 * k;
    }
    r[3] = mn2;
    r[4] = mx2;
}
static const Family RELU = {
    "minmax_relu", true, 5, "xxxxx",
    " min.relu.s32 %r30, %r10, %r11;\n" O32(0, "%r30")
    " max.relu.s32 %r30, %r10, %r11;\n" O32(1, "%r30")
    " min.relu.s16x2 %r30, %r10, %r11;\n" O32(2, "%r30")
    " min.u16x2 %r30, %r10, %r11;\n" O32(3, "%r30")
    " max.s16x2 %r30, %r10, %r11;\n" O32(4, "%r30"),
    gen_int, ref_relu, 512};

Test(isa2, minmax_relu) { run_family(&RELU); }

/* ---------------------------------------------------------------------------------------------
 * f32 and f64 arithmetic in the four IEEE roundings (.rn .rz .rm .rp), .ftz and .sat, the IEEE
 * div/rcp/sqrt, min/max with NaNs, abs/neg/copysign, testp, and the special values of ex2/lg2. */
static void ref_f32(const uint64_t *x, uint64_t *r) {
    float a = bitsf((uint32_t)x[0]), b = bitsf((uint32_t)x[1]), c = bitsf((uint32_t)x[2]);
    for (int op = 0; op < 7; op++)
        for (int m = 0; m < 4; m++) r[4 * op + m] = F(host_f32(op, a, b, c, m));
    float fa = ftz32(a), fb = ftz32(b), fc = ftz32(c);
    r[28] = F(ftz32(host_f32(0, fa, fb, 0, 0)));
    r[29] = F(ftz32(host_f32(2, fa, fb, 0, 1)));
    r[30] = F(ftz32(host_f32(3, fa, fb, fc, 0)));
    r[31] = F(sat32f(host_f32(0, a, b, 0, 0)));
    r[32] = F(sat32f(host_f32(3, a, b, c, 0)));
    r[33] = F(sat32f(ftz32(host_f32(2, fa, fb, 0, 3))));
    r[34] = F(ftz32(host_f32(4, fa, fb, 0, 0)));
    r[35] = F(ftz32(host_f32(6, fa, 0, 0, 0)));
    r[36] = F(ftz32(host_f32(5, fa, 0, 0, 2)));
    /* min/max: one NaN gives the other operand, two give NaN; .NaN: any NaN gives NaN */
    float mn = isnan(a) ? b : isnan(b) ? a : a < b ? a : b, mx = isnan(a) ? b : isnan(b) ? a : a > b ? a : b;
    bool zeros = a == 0 && b == 0 && signbit(a) != signbit(b); /* the ISA does not order -0 and +0 */
    r[37] = zeros ? SKIP : F(mn);
    r[38] = zeros ? SKIP : F(mx);
    r[39] = isnan(a) || isnan(b) ? 0x7FFFFFFF : zeros ? SKIP : F(mn);
    r[40] = isnan(a) || isnan(b) ? 0x7FFFFFFF : zeros ? SKIP : F(mx);
    r[41] = F(fabsf(a));
    r[42] = F(-a);
    r[43] = (x[1] & 0x7FFFFFFF) | (x[0] & 0x80000000); /* copysign d, a, b: b's magnitude, a's sign */
    int cls = fpclassify(a);
    r[44] = isfinite(a) != 0;
    r[45] = isinf(a) != 0;
    r[46] = !isnan(a);
    r[47] = isnan(a) != 0;
    r[48] = cls == FP_NORMAL || cls == FP_ZERO; /* zeros count as normal */
    r[49] = cls == FP_SUBNORMAL;
    float e = exp2f(fa), l = log2f(fa);
    r[50] = F(ftz32(e));
    r[51] = fa < 0 ? 0x7FFFFFFF : F(l);
    r[52] = isnan(a) ? x[0] & 0x7FFFFFFF : F(ftz32(fabsf(a)));
    r[53] = F(-fa);
    /* abs/neg/copysign of a NaN: the ISA leaves the NaN open; docs/emulator.md promises the payload kept (abs clears
     * the sign, neg flips it), which slots 41-43, 52 and 53 check bit for bit */
}

static const Family F32 = {
    "f32", false, 54, "fffffffffffffffffffffffffffffffffffffffffxxxxxxxxxaaxx",
    " add.rn.f32 %f20, %f10, %f11;\n" OF(0, "%f20") " add.rz.f32 %f20, %f10, %f11;\n" OF(1, "%f20")
    " add.rm.f32 %f20, %f10, %f11;\n" OF(2, "%f20") " add.rp.f32 %f20, %f10, %f11;\n" OF(3, "%f20")
    " sub.rn.f32 %f20, %f10, %f11;\n" OF(4, "%f20") " sub.rz.f32 %f20, %f10, %f11;\n" OF(5, "%f20")
    " sub.rm.f32 %f20, %f10, %f11;\n" OF(6, "%f20") " sub.rp.f32 %f20, %f10, %f11;\n" OF(7, "%f20")
    " mul.rn.f32 %f20, %f10, %f11;\n" OF(8, "%f20") " mul.rz.f32 %f20, %f10, %f11;\n" OF(9, "%f20")
    " mul.rm.f32 %f20, %f10, %f11;\n" OF(10, "%f20") " mul.rp.f32 %f20, %f10, %f11;\n" OF(11, "%f20")
    " fma.rn.f32 %f20, %f10, %f11, %f12;\n" OF(12, "%f20") " fma.rz.f32 %f20, %f10, %f11, %f12;\n" OF(13, "%f20")
    " fma.rm.f32 %f20, %f10, %f11, %f12;\n" OF(14, "%f20") " fma.rp.f32 %f20, %f10, %f11, %f12;\n" OF(15, "%f20")
    " div.rn.f32 %f20, %f10, %f11;\n" OF(16, "%f20") " div.rz.f32 %f20, %f10, %f11;\n" OF(17, "%f20")
    " div.rm.f32 %f20, %f10, %f11;\n" OF(18, "%f20") " div.rp.f32 %f20, %f10, %f11;\n" OF(19, "%f20")
    " rcp.rn.f32 %f20, %f10;\n" OF(20, "%f20") " rcp.rz.f32 %f20, %f10;\n" OF(21, "%f20")
    " rcp.rm.f32 %f20, %f10;\n" OF(22, "%f20") " rcp.rp.f32 %f20, %f10;\n" OF(23, "%f20")
    " sqrt.rn.f32 %f20, %f10;\n" OF(24, "%f20") " sqrt.rz.f32 %f20, %f10;\n" OF(25, "%f20")
    " sqrt.rm.f32 %f20, %f10;\n" OF(26, "%f20") " sqrt.rp.f32 %f20, %f10;\n" OF(27, "%f20")
    " add.rn.ftz.f32 %f20, %f10, %f11;\n" OF(28, "%f20")
    " mul.rz.ftz.f32 %f20, %f10, %f11;\n" OF(29, "%f20")
    " fma.rn.ftz.f32 %f20, %f10, %f11, %f12;\n" OF(30, "%f20")
    " add.rn.sat.f32 %f20, %f10, %f11;\n" OF(31, "%f20")
    " fma.rn.sat.f32 %f20, %f10, %f11, %f12;\n" OF(32, "%f20")
    " mul.rp.ftz.sat.f32 %f20, %f10, %f11;\n" OF(33, "%f20")
    " div.rn.ftz.f32 %f20, %f10, %f11;\n" OF(34, "%f20")
    " sqrt.rn.ftz.f32 %f20, %f10;\n" OF(35, "%f20")
    " rcp.rm.ftz.f32 %f20, %f10;\n" OF(36, "%f20")
    " min.f32 %f20, %f10, %f11;\n" OF(37, "%f20")
    " max.f32 %f20, %f10, %f11;\n" OF(38, "%f20")
    " min.NaN.f32 %f20, %f10, %f11;\n" OF(39, "%f20")
    " max.NaN.f32 %f20, %f10, %f11;\n" OF(40, "%f20")
    " abs.f32 %f20, %f10;\n" OF(41, "%f20")
    " neg.f32 %f20, %f10;\n" OF(42, "%f20")
    " copysign.f32 %f20, %f10, %f11;\n" OF(43, "%f20")
    " testp.finite.f32 %p1, %f10;\n" OP(44, "%p1")
    " testp.infinite.f32 %p1, %f10;\n" OP(45, "%p1")
    " testp.number.f32 %p1, %f10;\n" OP(46, "%p1")
    " testp.notanumber.f32 %p1, %f10;\n" OP(47, "%p1")
    " testp.normal.f32 %p1, %f10;\n" OP(48, "%p1")
    " testp.subnormal.f32 %p1, %f10;\n" OP(49, "%p1")
    " ex2.approx.ftz.f32 %f20, %f10;\n" OF(50, "%f20")
    " lg2.approx.ftz.f32 %f20, %f10;\n" OF(51, "%f20")
    " abs.ftz.f32 %f20, %f10;\n" OF(52, "%f20")
    " neg.ftz.f32 %f20, %f10;\n" OF(53, "%f20"),
    gen_f32, ref_f32, 2048};

Test(isa2, f32) { run_family(&F32); }

static void gen_f64(uint64_t *x, int i, int n) {
    (void)i, (void)n;
    for (int k = 0; k < 3; k++) x[k] = rnd_f64();
    if (rnd() % 4 == 0) x[1] = x[0] ^ 0x8000000000000000ull ^ (rnd() & 1);
}
static double host_f64(int op, double a, double b, double c, int mode) {
    volatile double va = a, vb = b, vc = c, r;
    fesetround(RND[mode]);
    switch (op) {
    case 0: r = va + vb; break;
    case 1: r = va * vb; break;
    case 2: r = fma(va, vb, vc); break;
    case 3: r = va / vb; break;
    case 4: r = 1.0 / va; break;
    default: r = sqrt(va); break;
    }
    fesetround(FE_TONEAREST);
    return r;
}
static void ref_f64(const uint64_t *x, uint64_t *r) {
    double a = bitsd(x[0]), b = bitsd(x[1]), c = bitsd(x[2]);
    for (int op = 0; op < 6; op++)
        for (int m = 0; m < 4; m++) r[4 * op + m] = dbits(host_f64(op, a, b, c, m));
    double mn = isnan(a) ? b : isnan(b) ? a : a < b ? a : b, mx = isnan(a) ? b : isnan(b) ? a : a > b ? a : b;
    bool zeros = a == 0 && b == 0 && signbit(a) != signbit(b);
    r[24] = zeros ? SKIP : dbits(mn);
    r[25] = zeros ? SKIP : dbits(mx);
    r[26] = isnan(a) ? x[0] : dbits(fabs(a)); /* abs.f64 passes a NaN through, its sign too */
    r[27] = dbits(-a);
    r[28] = (x[1] & 0x7FFFFFFFFFFFFFFFull) | (x[0] & 0x8000000000000000ull);
    int cls = fpclassify(a);
    r[29] = cls == FP_NORMAL || cls == FP_ZERO;
    r[30] = cls == FP_SUBNORMAL;
    r[31] = isinf(a) != 0;
    r[32] = !isnan(a);
    r[33] = isfinite(a) != 0;
    r[34] = isnan(a) != 0;
}
static const Family F64 = {
    "f64", false, 35, "ddddddddddddddddddddddddddxxxxxxxxx",
    " add.rn.f64 %fd20, %fd10, %fd11;\n" O64(0, "%fd20") " add.rz.f64 %fd20, %fd10, %fd11;\n" O64(1, "%fd20")
    " add.rm.f64 %fd20, %fd10, %fd11;\n" O64(2, "%fd20") " add.rp.f64 %fd20, %fd10, %fd11;\n" O64(3, "%fd20")
    " mul.rn.f64 %fd20, %fd10, %fd11;\n" O64(4, "%fd20") " mul.rz.f64 %fd20, %fd10, %fd11;\n" O64(5, "%fd20")
    " mul.rm.f64 %fd20, %fd10, %fd11;\n" O64(6, "%fd20") " mul.rp.f64 %fd20, %fd10, %fd11;\n" O64(7, "%fd20")
    " fma.rn.f64 %fd20, %fd10, %fd11, %fd12;\n" O64(8, "%fd20") " fma.rz.f64 %fd20, %fd10, %fd11, %fd12;\n" O64(9, "%fd20")
    " fma.rm.f64 %fd20, %fd10, %fd11, %fd12;\n" O64(10, "%fd20") " fma.rp.f64 %fd20, %fd10, %fd11, %fd12;\n" O64(11, "%fd20")
    " div.rn.f64 %fd20, %fd10, %fd11;\n" O64(12, "%fd20") " div.rz.f64 %fd20, %fd10, %fd11;\n" O64(13, "%fd20")
    " div.rm.f64 %fd20, %fd10, %fd11;\n" O64(14, "%fd20") " div.rp.f64 %fd20, %fd10, %fd11;\n" O64(15, "%fd20")
    " rcp.rn.f64 %fd20, %fd10;\n" O64(16, "%fd20") " rcp.rz.f64 %fd20, %fd10;\n" O64(17, "%fd20")
    " rcp.rm.f64 %fd20, %fd10;\n" O64(18, "%fd20") " rcp.rp.f64 %fd20, %fd10;\n" O64(19, "%fd20")
    " sqrt.rn.f64 %fd20, %fd10;\n" O64(20, "%fd20") " sqrt.rz.f64 %fd20, %fd10;\n" O64(21, "%fd20")
    " sqrt.rm.f64 %fd20, %fd10;\n" O64(22, "%fd20") " sqrt.rp.f64 %fd20, %fd10;\n" O64(23, "%fd20")
    " min.f64 %fd20, %fd10, %fd11;\n" O64(24, "%fd20")
    " max.f64 %fd20, %fd10, %fd11;\n" O64(25, "%fd20")
    " abs.f64 %fd20, %fd10;\n" O64(26, "%fd20")
    " neg.f64 %fd20, %fd10;\n" O64(27, "%fd20")
    " copysign.f64 %fd20, %fd10, %fd11;\n" O64(28, "%fd20")
    " testp.normal.f64 %p1, %fd10;\n" OP(29, "%p1")
    " testp.subnormal.f64 %p1, %fd10;\n" OP(30, "%p1")
    " testp.infinite.f64 %p1, %fd10;\n" OP(31, "%p1")
    " testp.number.f64 %p1, %fd10;\n" OP(32, "%p1")
    " testp.finite.f64 %p1, %fd10;\n" OP(33, "%p1")
    " testp.notanumber.f64 %p1, %fd10;\n" OP(34, "%p1"),
    gen_f64, ref_f64, 2048};

Test(isa2, f64) { run_family(&F64); }

/* ---------------------------------------------------------------------------------------------
 * f16 / bf16 / f16x2 / bf16x2: one rounding (.rn) of the exact result, .ftz, .sat, .relu, min/max.
 * The host rounds the exact result to odd in double (53 bits), then once to the 11- or 8-bit format. */
static void gen_half(uint64_t *x, int i, int n) {
    (void)n;
    bool bf = i & 1; /* odd lanes: bf16 operands (the bf16 slots of even lanes see f16 bit patterns: any bits are fine) */
    for (int k = 0; k < 3; k++) x[k] = rnd_half(bf) | (uint32_t)rnd_half(bf) << 16;
    if (rnd() % 4 == 0) x[1] ^= 0x80008000u;
}

static bool h_sub(uint16_t h) { return (h & 0x7C00) == 0 && (h & 0x3FF); }
static bool b_sub(uint16_t h) { return (h & 0x7F80) == 0 && (h & 0x7F); }

/* a*b+c (op 3), a+b (0), a-b (1), a*b (2) in double, rounded to odd */
static double odd_op(int op, double a, double b, double c) {
    volatile double va = a, vb = b, vc = c, r;
    feclearexcept(FE_INEXACT);
    fesetround(FE_TOWARDZERO);
    r = op == 0 ? va + vb : op == 1 ? va - vb : op == 2 ? va * vb : fma(va, vb, vc);
    bool inexact = fetestexcept(FE_INEXACT);
    fesetround(FE_TONEAREST);
    double d = r;
    if (inexact && isfinite(d)) {
        uint64_t u = dbits(d) | 1;
        d = bitsd(u);
    }
    return d;
}
static uint16_t d2h(double d) {
    if (isnan(d)) return 0x7FFF;
    _Float16 h = (_Float16)d;
    uint16_t u;
    memcpy(&u, &h, 2);
    return u;
}
static uint16_t d2b(double d) {
    if (isnan(d)) return 0x7FFF;
    volatile double vd = d;
    feclearexcept(FE_INEXACT);
    fesetround(FE_TOWARDZERO);
    volatile float f = (float)vd;
    bool inexact = fetestexcept(FE_INEXACT);
    fesetround(FE_TONEAREST);
    uint32_t u = fbits(f) | (inexact && isfinite(f) ? 1 : 0);
    if (isinf(vd) && !isinf(f)) u = fbits((float)vd); /* past FLT_MAX: the nearest-even step below gives inf */
    return (uint16_t)((u + 0x7FFF + (u >> 16 & 1)) >> 16);
}

/* One f16 (bf = false) or bf16 result: op on the halves a, b, c with the given modifiers. */
static uint16_t half_op(int op, uint16_t a, uint16_t b, uint16_t c, bool bf, bool ftz, bool sat, bool relu) {
    bool (*sub)(uint16_t) = bf ? b_sub : h_sub;
    if (ftz) {
        if (sub(a)) a &= 0x8000;
        if (sub(b)) b &= 0x8000;
        if (sub(c)) c &= 0x8000;
    }
    double (*dec)(uint16_t) = bf ? b2d : h2d;
    double r = odd_op(op, dec(a), dec(b), dec(c));
    uint16_t h = bf ? d2b(r) : d2h(r);
    if (ftz && sub(h)) h &= 0x8000;
    if (sat) {
        double v = dec(h);
        h = isnan(v) || v <= 0 ? 0 : v >= 1 ? (bf ? 0x3F80 : 0x3C00) : h;
    }
    if (relu) {
        if (isnan(r)) return 0x7FFF;
        if ((h & 0x7FFF) == 0) return (uint16_t)SKIP; /* the sign of a zero: the ISA does not say */
        if (h & 0x8000) h = 0;
    }
    return h;
}
static uint64_t pair(int op, uint32_t a, uint32_t b, uint32_t c, bool bf, bool ftz) {
    return half_op(op, (uint16_t)a, (uint16_t)b, (uint16_t)c, bf, ftz, false, false) |
           (uint32_t)half_op(op, (uint16_t)(a >> 16), (uint16_t)(b >> 16), (uint16_t)(c >> 16), bf, ftz, false, false) << 16;
}
static uint64_t hm(uint16_t v) { return v == (uint16_t)SKIP ? SKIP : v; }
static uint64_t half_minmax(uint16_t a, uint16_t b, bool bf, bool max, bool nan) {
    double (*dec)(uint16_t) = bf ? b2d : h2d;
    double x = dec(a), y = dec(b);
    if (isnan(x) || isnan(y)) return nan || (isnan(x) && isnan(y)) ? 0x7FFF : isnan(x) ? b : a;
    if (x == 0 && y == 0 && (a ^ b)) return SKIP;
    return (max ? x > y : x < y) ? a : b;
}

static void ref_half(const uint64_t *x, uint64_t *r) {
    uint32_t a = (uint32_t)x[0], b = (uint32_t)x[1], c = (uint32_t)x[2];
    uint16_t ha = (uint16_t)a, hb = (uint16_t)b, hc = (uint16_t)c;
    r[0] = half_op(0, ha, hb, 0, false, false, false, false);
    r[1] = half_op(1, ha, hb, 0, false, false, false, false);
    r[2] = half_op(2, ha, hb, 0, false, false, false, false);
    r[3] = half_op(3, ha, hb, hc, false, false, false, false);
    r[4] = half_op(0, ha, hb, 0, false, true, false, false);
    r[5] = half_op(3, ha, hb, hc, false, true, false, false);
    r[6] = half_op(3, ha, hb, hc, false, false, true, false);
    r[7] = half_op(2, ha, hb, 0, false, true, true, false);
    r[8] = hm(half_op(3, ha, hb, hc, false, false, false, true));
    r[9] = pair(3, a, b, c, false, false);
    r[10] = pair(0, a, b, c, false, false);
    r[11] = pair(2, a, b, c, false, true);
    r[12] = half_op(3, ha, hb, hc, true, false, false, false);
    r[13] = hm(half_op(3, ha, hb, hc, true, false, false, true));
    r[14] = pair(3, a, b, c, true, false);
    r[15] = half_minmax(ha, hb, false, false, false);
    r[16] = half_minmax(ha, hb, false, true, true);
    r[17] = half_minmax(ha, hb, true, false, false);
    r[18] = half_minmax(ha, hb, true, true, true);
    r[19] = (uint16_t)(ha ^ 0x8000);
    r[20] = (uint16_t)(ha & 0x7FFF);
}
static const Family HALF = {
    "half", false, 21, "hhhhhhhhhHHHbbBhxbxxx",
    " add.f16 %h20, %h10, %h11;\n" O16(0, "%h20")
    " sub.f16 %h20, %h10, %h11;\n" O16(1, "%h20")
    " mul.f16 %h20, %h10, %h11;\n" O16(2, "%h20")
    " fma.rn.f16 %h20, %h10, %h11, %h12;\n" O16(3, "%h20")
    " add.ftz.f16 %h20, %h10, %h11;\n" O16(4, "%h20")
    " fma.rn.ftz.f16 %h20, %h10, %h11, %h12;\n" O16(5, "%h20")
    " fma.rn.sat.f16 %h20, %h10, %h11, %h12;\n" O16(6, "%h20")
    " mul.rn.ftz.sat.f16 %h20, %h10, %h11;\n" O16(7, "%h20")
    " fma.rn.relu.f16 %h20, %h10, %h11, %h12;\n" O16(8, "%h20")
    " fma.rn.f16x2 %r30, %r10, %r11, %r12;\n" O32(9, "%r30")
    " add.rn.f16x2 %r30, %r10, %r11;\n" O32(10, "%r30")
    " mul.ftz.f16x2 %r30, %r10, %r11;\n" O32(11, "%r30")
    " fma.rn.bf16 %h20, %h10, %h11, %h12;\n" O16(12, "%h20")
    " fma.rn.relu.bf16 %h20, %h10, %h11, %h12;\n" O16(13, "%h20")
    " fma.rn.bf16x2 %r30, %r10, %r11, %r12;\n" O32(14, "%r30")
    " min.f16 %h20, %h10, %h11;\n" O16(15, "%h20")
    " max.NaN.f16 %h20, %h10, %h11;\n" O16(16, "%h20")
    " min.bf16 %h20, %h10, %h11;\n" O16(17, "%h20")
    " max.NaN.bf16 %h20, %h10, %h11;\n" O16(18, "%h20")
    " neg.f16 %h20, %h10;\n" O16(19, "%h20")
    " abs.f16 %h20, %h10;\n" O16(20, "%h20"),
    gen_half, ref_half, 2048};

Test(isa2, half) { run_family(&HALF); }

/* bf16 add/sub/mul (sm_90), one rounding. */
static void ref_bf16_90(const uint64_t *x, uint64_t *r) {
    uint32_t a = (uint32_t)x[0], b = (uint32_t)x[1], c = (uint32_t)x[2];
    uint16_t ha = (uint16_t)a, hb = (uint16_t)b;
    r[0] = half_op(0, ha, hb, 0, true, false, false, false);
    r[1] = half_op(1, ha, hb, 0, true, false, false, false);
    r[2] = half_op(2, ha, hb, 0, true, false, false, false);
    r[3] = pair(0, a, b, c, true, false);
    r[4] = pair(2, a, b, c, true, false);
    r[5] = (uint16_t)(ha ^ 0x8000);
}
static const Family BF16_90 = {
    "bf16_sm90", true, 6, "bbbBBx",
    " add.rn.bf16 %h20, %h10, %h11;\n" O16(0, "%h20")
    " sub.rn.bf16 %h20, %h10, %h11;\n" O16(1, "%h20")
    " mul.rn.bf16 %h20, %h10, %h11;\n" O16(2, "%h20")
    " add.rn.bf16x2 %r30, %r10, %r11;\n" O32(3, "%r30")
    " mul.rn.bf16x2 %r30, %r10, %r11;\n" O32(4, "%r30")
    " neg.bf16 %h20, %h10;\n" O16(5, "%h20"),
    gen_half, ref_bf16_90, 1024};

Test(isa2, bf16_sm90) { run_family(&BF16_90); }

/* ---------------------------------------------------------------------------------------------
 * set/setp with every comparison (ordered ones false on NaN, ne included; unordered ones true), the
 * p|q pair and a BoolOp, f16/f16x2 (two predicates: p the low half, q the high), selp and slct. */

#define CMPBIT(op, ty, a, b, bit) " setp." op "." ty " %p1, " a ", " b ";\n selp.b32 %r40, " #bit ", 0, %p1;\n or.b32 %r41, %r41, %r40;\n"
#define CMPALL(ty, a, b)                                                                                                          \
    " mov.b32 %r41, 0;\n" CMPBIT("eq", ty, a, b, 1) CMPBIT("ne", ty, a, b, 2) CMPBIT("lt", ty, a, b, 4) CMPBIT("le", ty, a, b, 8) \
        CMPBIT("gt", ty, a, b, 16) CMPBIT("ge", ty, a, b, 32) CMPBIT("equ", ty, a, b, 64) CMPBIT("neu", ty, a, b, 128)              \
            CMPBIT("ltu", ty, a, b, 256) CMPBIT("leu", ty, a, b, 512) CMPBIT("gtu", ty, a, b, 1024) CMPBIT("geu", ty, a, b, 2048)  \
                CMPBIT("num", ty, a, b, 4096) CMPBIT("nan", ty, a, b, 8192)

static uint32_t cmp_mask(double a, double b) {
    bool un = isnan(a) || isnan(b);
    bool t[14] = {!un && a == b, !un && a != b, !un && a < b, !un && a <= b, !un && a > b, !un && a >= b,
                  un || a == b,  un || a != b,  un || a < b,  un || a <= b,  un || a > b,  un || a >= b, !un, un};
    uint32_t m = 0;
    for (int k = 0; k < 14; k++) m |= (uint32_t)t[k] << k;
    return m;
}
static void gen_cmp(uint64_t *x, int i, int n) {
    (void)n;
    if (i % 2) {
        gen_f32(x, i, n);
        if (rnd() % 3 == 0) x[1] = x[0];
        x[2] = rnd_f32() | (uint64_t)rnd_half(false) << 32 | (uint64_t)rnd_half(false) << 48;
        x[0] |= (uint64_t)rnd_half(false) << 32 | (uint64_t)rnd_half(false) << 48;
        x[1] |= (uint64_t)(rnd() % 3 == 0 ? (uint32_t)(x[0] >> 32) : rnd_half(false) | (uint32_t)rnd_half(false) << 16) << 32;
    } else {
        gen_int(x, i, n);
        if (rnd() % 3 == 0) x[1] = x[0];
    }
}
static void ref_cmp(const uint64_t *x, uint64_t *r) {
    float a = bitsf((uint32_t)x[0]), b = bitsf((uint32_t)x[1]), c = bitsf((uint32_t)x[2]);
    uint32_t ua = (uint32_t)x[0], ub = (uint32_t)x[1];
    int32_t sa = (int32_t)ua, sb = (int32_t)ub;
    uint32_t ha = (uint32_t)(x[0] >> 32), hb = (uint32_t)(x[1] >> 32);
    bool pc = x[2] & 1;
    r[0] = cmp_mask(a, b);
    r[1] = cmp_mask(ftz32(a), ftz32(b));
    r[2] = (uint32_t)(ua == ub) | (uint32_t)(ua != ub) << 1 | (uint32_t)(sa < sb) << 2 | (uint32_t)(sa <= sb) << 3 | (uint32_t)(sa > sb) << 4 |
           (uint32_t)(sa >= sb) << 5 | (uint32_t)(ua < ub) << 6 | (uint32_t)(ua <= ub) << 7 | (uint32_t)(ua > ub) << 8 | (uint32_t)(ua >= ub) << 9;
    bool t = !isnan(a) && !isnan(b) && a < b;
    r[3] = (uint32_t)(t && pc) | (uint32_t)(!t && pc) << 1 | (uint32_t)(t ^ pc) << 2 | (uint32_t)(!t ^ pc) << 3 | (uint32_t)(t || !pc) << 4;
    r[4] = cmp_mask(h2d((uint16_t)ha), h2d((uint16_t)hb));
    /* setp.ltu.f16x2 p|q: p from the low halves, q from the high */
    double l0 = h2d((uint16_t)ha), l1 = h2d((uint16_t)(ha >> 16)), m0 = h2d((uint16_t)hb), m1 = h2d((uint16_t)(hb >> 16));
    r[5] = (uint32_t)(isnan(l0) || isnan(m0) || l0 < m0) | (uint32_t)(isnan(l1) || isnan(m1) || l1 < m1) << 1;
    r[6] = (uint32_t)(!isnan(l0) && !isnan(m0) && l0 != m0) | (uint32_t)(!isnan(l1) && !isnan(m1) && l1 != m1) << 1;
    r[7] = !isnan(a) && !isnan(b) && a != b ? 0xFFFFFFFF : 0;
    r[8] = isnan(a) || isnan(b) || a > b ? 0x3F800000 : 0;
    r[9] = (isnan(a) || isnan(b) || a >= b) && pc ? 0xFFFFFFFF : 0;
    r[10] = (uint32_t)(!isnan(l0) && !isnan(m0) && l0 < m0 ? 0x3C00 : 0) | (uint32_t)(!isnan(l1) && !isnan(m1) && l1 < m1 ? 0x3C00 : 0) << 16;
    r[11] = (uint32_t)(isnan(l0) || isnan(m0) || l0 <= m0 ? 0xFFFF : 0) | (uint32_t)(isnan(l1) || isnan(m1) || l1 <= m1 ? 0xFFFF : 0) << 16;
    r[12] = pc ? ua : ub;
    r[13] = (int32_t)x[2] >= 0 ? ua : ub;
    r[14] = c >= 0 ? ua : ub; /* -0 >= 0; NaN fails */
    r[15] = ftz32(c) >= 0 ? ua : ub;
    r[16] = pc ? x[0] : x[1];
    r[17] = (int32_t)x[2] >= 0 ? x[0] : x[1];
}
static const Family CMP = {
    "setp", false, 18, "xxxxxxxxxxxxxxxxxx",
    CMPALL("f32", "%f10", "%f11") O32(0, "%r41")
    CMPALL("ftz.f32", "%f10", "%f11") O32(1, "%r41")
    " mov.b32 %r41, 0;\n" CMPBIT("eq", "b32", "%r10", "%r11", 1) CMPBIT("ne", "b32", "%r10", "%r11", 2) CMPBIT("lt", "s32", "%r10", "%r11", 4)
    CMPBIT("le", "s32", "%r10", "%r11", 8) CMPBIT("gt", "s32", "%r10", "%r11", 16) CMPBIT("ge", "s32", "%r10", "%r11", 32)
    CMPBIT("lo", "u32", "%r10", "%r11", 64) CMPBIT("ls", "u32", "%r10", "%r11", 128) CMPBIT("hi", "u32", "%r10", "%r11", 256)
    CMPBIT("hs", "u32", "%r10", "%r11", 512) O32(2, "%r41")
    " and.b32 %r42, %r12, 1;\n setp.ne.u32 %p2, %r42, 0;\n"
    " setp.lt.and.f32 %p3|%p4, %f10, %f11, %p2;\n selp.b32 %r43, 1, 0, %p3;\n selp.b32 %r44, 2, 0, %p4;\n or.b32 %r43, %r43, %r44;\n"
    " setp.lt.xor.f32 %p3|%p4, %f10, %f11, %p2;\n selp.b32 %r44, 4, 0, %p3;\n or.b32 %r43, %r43, %r44;\n selp.b32 %r44, 8, 0, %p4;\n or.b32 %r43, %r43, %r44;\n"
    " setp.lt.or.f32 %p3, %f10, %f11, !%p2;\n selp.b32 %r44, 16, 0, %p3;\n or.b32 %r43, %r43, %r44;\n" O32(3, "%r43")
    " mov.b32 {%h21, %h22}, %r20;\n mov.b32 {%h23, %h24}, %r21;\n"
    CMPALL("f16", "%h21", "%h23") O32(4, "%r41")
    " setp.ltu.f16x2 %p5|%p6, %r20, %r21;\n selp.b32 %r43, 1, 0, %p5;\n selp.b32 %r44, 2, 0, %p6;\n or.b32 %r43, %r43, %r44;\n" O32(5, "%r43")
    " setp.ne.f16x2 %p5|%p6, %r20, %r21;\n selp.b32 %r43, 1, 0, %p5;\n selp.b32 %r44, 2, 0, %p6;\n or.b32 %r43, %r43, %r44;\n" O32(6, "%r43")
    " set.ne.u32.f32 %r30, %f10, %f11;\n" O32(7, "%r30")
    " set.gtu.f32.f32 %f20, %f10, %f11;\n" OF(8, "%f20")
    " set.geu.and.s32.f32 %r30, %f10, %f11, %p2;\n" O32(9, "%r30")
    " set.lt.f16x2.f16x2 %r30, %r20, %r21;\n" O32(10, "%r30")
    " set.leu.u32.f16x2 %r30, %r20, %r21;\n" O32(11, "%r30")
    " selp.b32 %r30, %r10, %r11, %p2;\n" O32(12, "%r30")
    " slct.b32.s32 %r30, %r10, %r11, %r12;\n" O32(13, "%r30")
    " slct.b32.f32 %r30, %r10, %r11, %f12;\n" O32(14, "%r30")
    " slct.ftz.u32.f32 %r30, %r10, %r11, %f12;\n" O32(15, "%r30")
    " selp.b64 %rd30, %rd10, %rd11, %p2;\n" O64(16, "%rd30")
    " slct.b64.s32 %rd30, %rd10, %rd11, %r12;\n" O64(17, "%rd30"),
    gen_cmp, ref_cmp, 2048};

Test(isa2, setp) { run_family(&CMP); }

/* ---------------------------------------------------------------------------------------------
 * Immediate operands (shift counts and field positions past the width), 16- and 64-bit forms, int->f16
 * in the four roundings, rounding of f16 to integers, the x2 min/max, compares of 16- and 64-bit values. */

static uint16_t i2h(double v, int mode) { return enc_h(overflow(round_fmt(v, 10, -14, mode), HMAX, mode)); }
static void ref_misc(const uint64_t *x, uint64_t *r) {
    uint32_t a = (uint32_t)x[0], b = (uint32_t)x[1];
    int32_t sa = (int32_t)a;
    uint16_t ha = (uint16_t)a, hb = (uint16_t)b;
    int16_t sha = (int16_t)ha, shb = (int16_t)hb;
    r[0] = 0;                                   /* shl.b32 a, 33 */
    r[1] = (uint32_t)(sa < 0 ? -1 : 0);         /* shr.s32 a, 32 */
    r[2] = ref_bfe(a, 28, 8, 32, false);
    r[3] = (uint32_t)ref_bfe(a, 28, 8, 32, true);
    r[4] = shf(a, b, 40, true, false);
    r[5] = shf(a, b, 40, false, true);
    r[6] = ref_prmt(a, b, 0x8880, -1);
    r[7] = ref_prmt(a, b, 0x7531, -1);
    r[8] = ref_bfi(a, b, 30, 8, 32);
    r[9] = (uint32_t)sat32((int64_t)sa + 0x7FFFFFF0);
    r[10] = (uint64_t)(x[0] >> 63 ? -1 : 0);    /* shr.s64 a, 64 */
    r[11] = (uint16_t)(ha >> 15);
    for (int m = 0; m < 4; m++) r[12 + m] = i2h((double)sa, m);
    r[16] = i2h((double)x[1], 1);
    r[17] = i2h((double)(int16_t)hb, 0);
    double hv = h2d(ha);
    for (int m = 0; m < 4; m++) r[18 + m] = isnan(hv) ? 0x7FFF : enc_h(f64_round(hv, m));
    r[22] = (uint16_t)f2i(hv, 1, 0, 65535, false);
    r[23] = (uint32_t)(sa < -5 ? sa : -5);
    r[24] = a > 0xFFFFFFF0u ? a : 0xFFFFFFF0u;
    int64_t la = (int64_t)x[0], lb = (int64_t)x[1];
    r[25] = (uint32_t)(la < lb) | (uint32_t)(x[0] < x[1]) << 1 | (uint32_t)(la >= lb) << 2 | (uint32_t)(x[0] >= x[1]) << 3 |
            (uint32_t)(sha < shb) << 4 | (uint32_t)(ha < hb) << 5 | (uint32_t)(sha >= shb) << 6 | (uint32_t)(ha == hb) << 7;
    r[26] = x[0] == x[1] ? 0xFFFFFFFF : 0;
    r[27] = hb == 0 || (sha == INT16_MIN && shb == -1) ? SKIP : (uint16_t)(sha % shb);
    r[28] = hb == 0 ? SKIP : (uint16_t)(ha / hb);
    r[29] = (uint32_t)ha * hb;
    r[30] = (uint32_t)((int32_t)sha * shb + (int32_t)(int16_t)x[2]);
    r[31] = (uint16_t)((uint16_t)x[2] + (ha > hb ? ha - hb : hb - ha));
    r[32] = (uint16_t)(ha * hb + (uint16_t)x[2]);
}
static const Family MISC = {
    "misc", false, 33, "xxxxxxxxxxxxhhhhhhhhhhxxxxxxxxxxx",
    " shl.b32 %r30, %r10, 33;\n" O32(0, "%r30")
    " shr.s32 %r30, %r10, 32;\n" O32(1, "%r30")
    " bfe.u32 %r30, %r10, 28, 8;\n" O32(2, "%r30")
    " bfe.s32 %r30, %r10, 28, 8;\n" O32(3, "%r30")
    " shf.l.wrap.b32 %r30, %r10, %r11, 40;\n" O32(4, "%r30")
    " shf.r.clamp.b32 %r30, %r10, %r11, 40;\n" O32(5, "%r30")
    " prmt.b32 %r30, %r10, %r11, 0x8880;\n" O32(6, "%r30")
    " prmt.b32 %r30, %r10, %r11, 0x7531;\n" O32(7, "%r30")
    " bfi.b32 %r30, %r10, %r11, 30, 8;\n" O32(8, "%r30")
    " add.sat.s32 %r30, %r10, 0x7FFFFFF0;\n" O32(9, "%r30")
    " shr.s64 %rd30, %rd10, 64;\n" O64(10, "%rd30")
    " shr.u16 %h20, %h10, 15;\n" O16(11, "%h20")
    " cvt.rn.f16.s32 %h20, %r10;\n" O16(12, "%h20") " cvt.rz.f16.s32 %h20, %r10;\n" O16(13, "%h20")
    " cvt.rm.f16.s32 %h20, %r10;\n" O16(14, "%h20") " cvt.rp.f16.s32 %h20, %r10;\n" O16(15, "%h20")
    " cvt.rz.f16.u64 %h20, %rd11;\n" O16(16, "%h20")
    " cvt.rn.f16.s16 %h20, %h11;\n" O16(17, "%h20")
    " cvt.rni.f16.f16 %h20, %h10;\n" O16(18, "%h20") " cvt.rzi.f16.f16 %h20, %h10;\n" O16(19, "%h20")
    " cvt.rmi.f16.f16 %h20, %h10;\n" O16(20, "%h20") " cvt.rpi.f16.f16 %h20, %h10;\n" O16(21, "%h20")
    " cvt.rzi.u16.f16 %h20, %h10;\n" O16(22, "%h20")
    " min.s32 %r30, %r10, -5;\n" O32(23, "%r30")
    " max.u32 %r30, %r10, 0xFFFFFFF0;\n" O32(24, "%r30")
    " mov.b32 %r41, 0;\n" CMPBIT("lt", "s64", "%rd10", "%rd11", 1) CMPBIT("lo", "u64", "%rd10", "%rd11", 2)
    CMPBIT("ge", "s64", "%rd10", "%rd11", 4) CMPBIT("hs", "u64", "%rd10", "%rd11", 8) CMPBIT("lt", "s16", "%h10", "%h11", 16)
    CMPBIT("lo", "u16", "%h10", "%h11", 32) CMPBIT("ge", "s16", "%h10", "%h11", 64) CMPBIT("eq", "b16", "%h10", "%h11", 128) O32(25, "%r41")
    " set.eq.u32.u64 %r30, %rd10, %rd11;\n" O32(26, "%r30")
    " rem.s16 %h20, %h10, %h11;\n" O16(27, "%h20")
    " div.u16 %h20, %h10, %h11;\n" O16(28, "%h20")
    " mul.wide.u16 %r30, %h10, %h11;\n" O32(29, "%r30")
    " cvt.s32.s16 %r31, %h12;\n mad.wide.s16 %r30, %h10, %h11, %r31;\n" O32(30, "%r30")
    " sad.u16 %h20, %h10, %h11, %h12;\n" O16(31, "%h20")
    " mad.lo.u16 %h20, %h10, %h11, %h12;\n" O16(32, "%h20"),
    gen_int, ref_misc, 1024};

Test(isa2, misc) { run_family(&MISC); }

/* ---------------------------------------------------------------------------------------------
 * Operand sizes past the instruction type (ISA, "Operand Size Exceeding Instruction-Type Size"): an
 * 8- or 16-bit cvt result in a wider register is sign-extended for a signed type, zero-extended for an
 * unsigned one; a wider source register is cut to the type first.  mad.f32 (no rounding) fuses as
 * fma.rn; f16x2 .sat/.relu pairs; .ftz on min; the f32 float->float integer roundings with .ftz/.sat. */

static void ref_sizes(const uint64_t *x, uint64_t *r) {
    uint32_t c = (uint32_t)x[2];
    int32_t sc = (int32_t)c;
    float f = bitsf((uint32_t)x[0]), g = bitsf((uint32_t)x[1]), h = bitsf((uint32_t)x[2]);
    r[0] = (uint32_t)(int32_t)(int8_t)c;
    r[1] = (uint8_t)c;
    r[2] = (uint32_t)(int32_t)(int8_t)clampi(sc, -128, 127);
    r[3] = (uint32_t)(int32_t)(int16_t)c;
    r[4] = (uint8_t)clampi(sc, 0, 255);
    r[5] = (uint32_t)(int32_t)(int8_t)f2i(f, 1, -128, 127, true);
    r[6] = (uint16_t)(int16_t)(int8_t)f2i(f, 1, -128, 127, true);
    r[7] = (uint32_t)(int32_t)(int8_t)c;
    r[8] = (uint8_t)c;
    r[9] = (uint64_t)(int64_t)(int16_t)c;
    r[10] = F(host_f32(3, f, g, h, 0));
    r[11] = F(sat32f(host_f32(3, f, g, h, 0)));
    uint32_t a = (uint32_t)x[0], b = (uint32_t)x[1];
    r[12] = half_op(3, (uint16_t)a, (uint16_t)b, (uint16_t)c, false, false, true, false) |
            (uint32_t)half_op(3, (uint16_t)(a >> 16), (uint16_t)(b >> 16), (uint16_t)(c >> 16), false, false, true, false) << 16;
    uint16_t lo = half_op(3, (uint16_t)a, (uint16_t)b, (uint16_t)c, false, true, false, true),
             hi = half_op(3, (uint16_t)(a >> 16), (uint16_t)(b >> 16), (uint16_t)(c >> 16), false, true, false, true);
    r[13] = lo == (uint16_t)SKIP || hi == (uint16_t)SKIP ? SKIP : lo | (uint32_t)hi << 16;
    lo = half_op(3, (uint16_t)a, (uint16_t)b, (uint16_t)c, true, false, false, true);
    hi = half_op(3, (uint16_t)(a >> 16), (uint16_t)(b >> 16), (uint16_t)(c >> 16), true, false, false, true);
    r[14] = lo == (uint16_t)SKIP || hi == (uint16_t)SKIP ? SKIP : lo | (uint32_t)hi << 16;
    float fa = ftz32(f), fb = ftz32(g);
    bool zeros = fa == 0 && fb == 0 && signbit(fa) != signbit(fb);
    r[15] = zeros ? SKIP : F(isnan(fa) ? fb : isnan(fb) ? fa : fa < fb ? fa : fb);
    r[16] = F(ftz32(f32_round(ftz32(f), 0, true)));
    r[17] = F(sat32f(f32_round(f, 0, true)));
    r[18] = F(sat32f(f32_round(f, 3, true)));
    uint64_t mn = 0;
    for (int k = 0; k < 2; k++) {
        uint16_t p = (uint16_t)(a >> 16 * k), q = (uint16_t)(b >> 16 * k);
        uint64_t m = half_minmax(p, q, false, false, true);
        if (m == SKIP) { mn = SKIP; break; }
        mn |= m << 16 * k;
    }
    r[19] = mn;
}
static void gen_sizes(uint64_t *x, int i, int n) {
    gen_half(x, i, n);
    if (i % 2) {
        uint64_t y[3];
        gen_f32(y, i, n);
        x[0] = y[0], x[1] = y[1];
        x[2] = rnd() & 1 ? y[2] : PICK(EI);
        if (i % 4 == 1) x[2] = (uint64_t)(int64_t)(int32_t)(rnd() % 1000 - 500);
    }
}
static const Family SIZES = {
    "sizes", false, 20, "xxxxxxxxxxffHHBffffH",
    " cvt.s8.s32 %r30, %r12;\n" O32(0, "%r30")
    " cvt.u8.s32 %r30, %r12;\n" O32(1, "%r30")
    " cvt.sat.s8.s32 %r30, %r12;\n" O32(2, "%r30")
    " cvt.s16.s32 %r30, %r12;\n" O32(3, "%r30")
    " cvt.sat.u8.s32 %r30, %r12;\n" O32(4, "%r30")
    " cvt.rzi.s8.f32 %r30, %f10;\n" O32(5, "%r30")
    " cvt.rzi.s8.f32 %h20, %f10;\n" O16(6, "%h20")
    " cvt.s32.s8 %r30, %r12;\n" O32(7, "%r30")
    " cvt.u32.u8 %r30, %r12;\n" O32(8, "%r30")
    " cvt.s64.s16 %rd30, %r12;\n" O64(9, "%rd30")
    " mad.rn.f32 %f20, %f10, %f11, %f12;\n" OF(10, "%f20")
    " mad.rn.sat.f32 %f20, %f10, %f11, %f12;\n" OF(11, "%f20")
    " fma.rn.sat.f16x2 %r30, %r10, %r11, %r12;\n" O32(12, "%r30")
    " fma.rn.ftz.relu.f16x2 %r30, %r10, %r11, %r12;\n" O32(13, "%r30")
    " fma.rn.relu.bf16x2 %r30, %r10, %r11, %r12;\n" O32(14, "%r30")
    " min.ftz.f32 %f20, %f10, %f11;\n" OF(15, "%f20")
    " cvt.rni.ftz.f32.f32 %f20, %f10;\n" OF(16, "%f20")
    " cvt.rni.sat.f32.f32 %f20, %f10;\n" OF(17, "%f20")
    " cvt.rpi.sat.f32.f32 %f20, %f10;\n" OF(18, "%f20")
    " min.NaN.f16x2 %r30, %r10, %r11;\n" O32(19, "%r30"),
    gen_sizes, ref_sizes, 2048};

Test(isa2, sizes) { run_family(&SIZES); }

/* ---------------------------------------------------------------------------------------------
 * The special values of the .approx instructions (the tables on their ISA pages): zeros, infinities,
 * NaN, negative operands; finite results within 2^-21 of the exact value (the emulator's default
 * approx=exact mode).  Subnormal operands only under .ftz, where they are zeros. */

static uint64_t sp(float v, bool finite_ok) { return finite_ok || !isfinite(v) || v == 0 ? F(v) : SKIP; }
static void ref_approx(const uint64_t *x, uint64_t *r) {
    float a = bitsf((uint32_t)x[0]), b = bitsf((uint32_t)x[1]);
    bool sub = fpclassify(a) == FP_SUBNORMAL;
    float fa = ftz32(a);
    r[0] = sub ? SKIP : sp(1.0f / a, true);                                      /* rcp.approx.f32 */
    r[1] = sp(ftz32(1.0f / fa), true);                                           /* rcp.approx.ftz.f32: a subnormal result flushes */
    r[2] = sub ? SKIP : a < 0 ? 0x7FFFFFFF : sp(sqrtf(a), true);                 /* sqrt.approx.f32: sqrt(-0) = -0 */
    if (a == 0) r[2] = F(a);
    r[3] = fa == 0 ? F(fa) : fa < 0 ? 0x7FFFFFFF : sp(sqrtf(fa), true);          /* sqrt.approx.ftz.f32 */
    r[4] = fa == 0 ? F(copysignf(INFINITY, fa)) : fa < 0 || isnan(fa) ? 0x7FFFFFFF : sp((float)(1.0 / sqrt((double)fa)), true); /* rsqrt.approx.ftz */
    r[5] = isnan(fa) ? 0x7FFFFFFF : isinf(fa) ? 0x7FFFFFFF : fa == 0 ? F(fa) : SKIP; /* sin.approx.ftz: inf gives NaN, -0 stays -0 */
    r[6] = isnan(fa) || isinf(fa) ? 0x7FFFFFFF : fa == 0 ? F(1.0f) : SKIP;       /* cos.approx.ftz */
    r[7] = isnan(a) ? 0x7FFFFFFF : isinf(a) ? F(copysignf(1.0f, a)) : a == 0 ? F(a) : SKIP; /* tanh.approx.f32 */
    r[8] = fa == 0 ? F(-INFINITY) : fa < 0 ? 0x7FFFFFFF : sp(log2f(fa), true);  /* lg2.approx.ftz */
    r[9] = isnan(fa) ? 0x7FFFFFFF : sp(ftz32(exp2f(fa)), true);                 /* ex2.approx.ftz: a subnormal result flushes */
    float fb = ftz32(b);
    r[10] = fabsf(fb) > 0x1p126f && isfinite(fb) && isfinite(fa) ? F(copysignf(0.0f, fa) * (fb < 0 ? -1.0f : 1.0f)) : SKIP; /* div.approx.ftz, |b| past 2^126 */
    r[11] = isnan(fa) || isnan(fb) || (fa == 0 && fb == 0) || (isinf(fa) && isinf(fb)) ? 0x7FFFFFFF
            : fb == 0 || isinf(fa) ? F(copysignf(INFINITY, fa) * (signbit(fb) ? -1.0f : 1.0f))
            : fa == 0 || isinf(fb) ? F(copysignf(0.0f, fa) * (signbit(fb) ? -1.0f : 1.0f)) : SKIP; /* div.full.ftz specials */
    uint16_t h = (uint16_t)x[2];
    double hv = h2d(h);
    r[12] = isnan(hv) ? 0x7FFF : isinf(hv) ? (hv > 0 ? 0x7C00 : 0) : hv == 0 ? 0x3C00 : SKIP; /* ex2.approx.f16 */
}
static void gen_approx(uint64_t *x, int i, int n) {
    gen_f32(x, i, n);
    if (i % 4 == 1) x[1] = fbits(ldexpf(1.0f + (float)(rnd() % 100) / 128.0f, 126 + (int)(rnd() % 2))) ^ (rnd() & 1 ? 0x80000000u : 0);
    x[2] = rnd_half(false);
}
static const Family APPROX = {
    "approx", false, 13, "aaaaafffaaffh",
    " rcp.approx.f32 %f20, %f10;\n" OF(0, "%f20")
    " rcp.approx.ftz.f32 %f20, %f10;\n" OF(1, "%f20")
    " sqrt.approx.f32 %f20, %f10;\n" OF(2, "%f20")
    " sqrt.approx.ftz.f32 %f20, %f10;\n" OF(3, "%f20")
    " rsqrt.approx.ftz.f32 %f20, %f10;\n" OF(4, "%f20")
    " sin.approx.ftz.f32 %f20, %f10;\n" OF(5, "%f20")
    " cos.approx.ftz.f32 %f20, %f10;\n" OF(6, "%f20")
    " tanh.approx.f32 %f20, %f10;\n" OF(7, "%f20")
    " lg2.approx.ftz.f32 %f20, %f10;\n" OF(8, "%f20")
    " ex2.approx.ftz.f32 %f20, %f10;\n" OF(9, "%f20")
    " div.approx.ftz.f32 %f20, %f10, %f11;\n" OF(10, "%f20")
    " div.full.ftz.f32 %f20, %f10, %f11;\n" OF(11, "%f20")
    " ex2.approx.f16 %h20, %h12;\n" O16(12, "%h20"),
    gen_approx, ref_approx, 2048};

Test(isa2, approx) { run_family(&APPROX); }

/* ---------------------------------------------------------------------------------------------
 * Immediate operands take the instruction's type (ISA, "Constants"): an integer literal is cut to the
 * type's width and read by its signedness (0xFFFFFFFF is -1 in .s32 but 4294967295 in .s64/.u64); a
 * floating-point literal (decimal, 0f or 0d) becomes the instruction's float type, rounded to nearest. */

static void ref_imm(const uint64_t *x, uint64_t *r) {
    uint64_t a = x[0];
    uint32_t al = (uint32_t)a;
    int32_t sal = (int32_t)al;
    r[0] = a + 0xFFFFFFFFull;
    r[1] = a - 1;
    r[2] = (uint64_t)((int64_t)sal * -4);
    r[3] = (uint64_t)al * 0xFFFFFFFFull;
    r[4] = (uint64_t)((int64_t)sal * -1);
    r[5] = (int64_t)a < 0xFFFFFFFFll;
    r[6] = sal < -1;
    r[7] = a * 0x80000000ull;
    r[8] = a & 0xFFFFFFFFull;
    r[9] = a > 0xFFFFFFFFull ? a : 0xFFFFFFFFull;
    r[10] = (int64_t)a < -5 ? a : (uint64_t)-5;
    r[11] = (a & 1) ? 0xFFFFFFFFFFFFFFFFull : 0xFFFFFFFFull;
    r[12] = (uint16_t)((uint16_t)a + 0xFFFF);
    r[13] = (uint64_t)((int64_t)sal * -3) + x[2];
    r[14] = (uint32_t)(sal / -7);
    r[15] = a % 0xFFFFFFFFull;
    float f = bitsf(al);
    r[16] = F(host_f32(2, f, (float)0.1, 0, 0));
    r[17] = F(host_f32(0, f, 1.0f, 0, 0));
    r[18] = dbits(bitsd(x[1]) + 1.5);
    r[19] = dbits(bitsd(x[1]) * (double)0.1f);
    r[20] = F(1.0f);
    r[21] = 0 - a;
    r[22] = (uint64_t)(0x8000000000000000ull >> (a & 63));
    r[23] = (uint32_t)(sal < -2 ? sal : -2);
    r[24] = (uint16_t)((int16_t)(uint16_t)a < -1 ? 1 : 0);
}
static const Family IMM = {
    "immediates", false, 25, "xxxxxxxxxxxxxxxxffddfxxxx",
    " add.s64 %rd30, %rd10, 0xFFFFFFFF;\n" O64(0, "%rd30")
    " add.s64 %rd30, %rd10, -1;\n" O64(1, "%rd30")
    " mul.wide.s32 %rd30, %r10, -4;\n" O64(2, "%rd30")
    " mul.wide.u32 %rd30, %r10, 0xFFFFFFFF;\n" O64(3, "%rd30")
    " mul.wide.s32 %rd30, %r10, 0xFFFFFFFF;\n" O64(4, "%rd30")
    " setp.lt.s64 %p1, %rd10, 0xFFFFFFFF;\n" OP(5, "%p1")
    " setp.lt.s32 %p1, %r10, 0xFFFFFFFF;\n" OP(6, "%p1")
    " mul.lo.u64 %rd30, %rd10, 0x80000000;\n" O64(7, "%rd30")
    " and.b64 %rd30, %rd10, 0xFFFFFFFF;\n" O64(8, "%rd30")
    " max.u64 %rd30, %rd10, 0xFFFFFFFF;\n" O64(9, "%rd30")
    " min.s64 %rd30, %rd10, -5;\n" O64(10, "%rd30")
    " and.b32 %r31, %r10, 1;\n setp.ne.u32 %p2, %r31, 0;\n selp.b64 %rd30, -1, 0xFFFFFFFF, %p2;\n" O64(11, "%rd30")
    " add.u16 %h20, %h10, 0xFFFF;\n" O16(12, "%h20")
    " mad.wide.s32 %rd30, %r10, -3, %rd12;\n" O64(13, "%rd30")
    " div.s32 %r30, %r10, -7;\n" O32(14, "%r30")
    " rem.u64 %rd30, %rd10, 0xFFFFFFFF;\n" O64(15, "%rd30")
    " mul.f32 %f20, %f10, 0.1;\n" OF(16, "%f20")
    " add.f32 %f20, %f10, 0f3F800000;\n" OF(17, "%f20")
    " add.f64 %fd20, %fd11, 0d3FF8000000000000;\n" O64(18, "%fd20")
    " mul.f64 %fd20, %fd11, 0f3DCCCCCD;\n" O64(19, "%fd20")
    " mov.f32 %f20, 0d3FF0000000000000;\n" OF(20, "%f20")
    " sub.s64 %rd30, 0, %rd10;\n" O64(21, "%rd30")
    " and.b32 %r31, %r10, 63;\n shr.u64 %rd30, 0x8000000000000000, %r31;\n" O64(22, "%rd30")
    " min.s32 %r30, %r10, 0xFFFFFFFE;\n" O32(23, "%r30")
    " setp.lt.s16 %p1, %h10, 0xFFFF;\n" OP(24, "%p1"),
    gen_int, ref_imm, 512};

Test(isa2, immediates) { run_family(&IMM); }

/* ---------------------------------------------------------------------------------------------
 * Generated matrices: f32 add/sub/mul/fma/div/sqrt/rcp in every rounding with and without .ftz and
 * .sat; f16/f16x2 add/sub/mul/fma with and without .ftz and .sat; lop3 with all 256 immLut values. */

static int f32m[128][4], n_f32m; /* op, rounding, ftz, sat */
static void ref_f32m(const uint64_t *x, uint64_t *r) {
    float a = bitsf((uint32_t)x[0]), b = bitsf((uint32_t)x[1]), c = bitsf((uint32_t)x[2]);
    static const int hop[7] = {0, 1, 2, 3, 4, 6, 5}; /* add sub mul fma div sqrt rcp -> host_f32's op */
    for (int k = 0; k < n_f32m; k++) {
        bool ftz = f32m[k][2], sat = f32m[k][3];
        float fa = ftz ? ftz32(a) : a, fb = ftz ? ftz32(b) : b, fc = ftz ? ftz32(c) : c;
        float v = host_f32(hop[f32m[k][0]], fa, fb, fc, f32m[k][1]);
        if (ftz) v = ftz32(v);
        if (sat) v = sat32f(v);
        r[k] = F(v);
    }
}
Test(isa2, f32_matrix) {
    static const char *op[7] = {"add", "sub", "mul", "fma", "div", "sqrt", "rcp"}, *rn[4] = {"rn", "rz", "rm", "rp"};
    static const char *args[7] = {"%f10, %f11", "%f10, %f11", "%f10, %f11", "%f10, %f11, %f12", "%f10, %f11", "%f10", "%f10"};
    static char body[60000];
    size_t len = 0;
    n_f32m = 0;
    for (int o = 0; o < 7; o++)
        for (int m = 0; m < 4; m++)
            for (int ftz = 0; ftz < 2; ftz++)
                for (int sat = 0; sat < 2; sat++) {
                    if (sat && o >= 4) continue; /* div, sqrt and rcp have no .sat */
                    f32m[n_f32m][0] = o, f32m[n_f32m][1] = m, f32m[n_f32m][2] = ftz, f32m[n_f32m][3] = sat;
                    len += (size_t)snprintf(body + len, sizeof body - len, " %s.%s%s%s.f32 %%f20, %s;\n mov.b32 %%rt, %%f20;\n cvt.u64.u32 %%o%d, %%rt;\n",
                                            op[o], rn[m], ftz ? ".ftz" : "", sat ? ".sat" : "", args[o], n_f32m);
                    n_f32m++;
                }
    static char kinds[129];
    memset(kinds, 'f', (size_t)n_f32m);
    kinds[n_f32m] = 0;
    Family f = {"f32_matrix", false, n_f32m, kinds, body, gen_f32, ref_f32m, 1024};
    run_family(&f);
}

static int hm_list[64][4], n_hm; /* op, ftz, sat, x2 */
static void ref_hm(const uint64_t *x, uint64_t *r) {
    uint32_t a = (uint32_t)x[0], b = (uint32_t)x[1], c = (uint32_t)x[2];
    for (int k = 0; k < n_hm; k++) {
        int o = hm_list[k][0];
        bool ftz = hm_list[k][1], sat = hm_list[k][2];
        uint32_t v = half_op(o, (uint16_t)a, (uint16_t)b, (uint16_t)c, false, ftz, sat, false);
        if (hm_list[k][3]) v |= (uint32_t)half_op(o, (uint16_t)(a >> 16), (uint16_t)(b >> 16), (uint16_t)(c >> 16), false, ftz, sat, false) << 16;
        r[k] = v;
    }
}
Test(isa2, f16_matrix) {
    static const char *op[4] = {"add.rn", "sub.rn", "mul.rn", "fma.rn"};
    static char body[30000];
    size_t len = 0;
    n_hm = 0;
    for (int o = 0; o < 4; o++)
        for (int ftz = 0; ftz < 2; ftz++)
            for (int sat = 0; sat < 2; sat++)
                for (int x2 = 0; x2 < 2; x2++) {
                    hm_list[n_hm][0] = o, hm_list[n_hm][1] = ftz, hm_list[n_hm][2] = sat, hm_list[n_hm][3] = x2;
                    const char *ops = x2 ? (o == 3 ? "%r10, %r11, %r12" : "%r10, %r11") : (o == 3 ? "%h10, %h11, %h12" : "%h10, %h11");
                    len += (size_t)snprintf(body + len, sizeof body - len, " %s%s%s.%s %s, %s;\n %s %%o%d, %s;\n", op[o], ftz ? ".ftz" : "",
                                            sat ? ".sat" : "", x2 ? "f16x2" : "f16", x2 ? "%r30" : "%h20", ops, x2 ? "cvt.u64.u32" : "cvt.u64.u16",
                                            n_hm, x2 ? "%r30" : "%h20");
                    n_hm++;
                }
    static char kinds[65];
    for (int k = 0; k < n_hm; k++) kinds[k] = hm_list[k][3] ? 'H' : 'h';
    kinds[n_hm] = 0;
    Family f = {"f16_matrix", false, n_hm, kinds, body, gen_half, ref_hm, 1024};
    run_family(&f);
}

static void ref_lop3all(const uint64_t *x, uint64_t *r) {
    for (unsigned k = 0; k < 256; k++) r[k] = ref_lop3((uint32_t)x[0], (uint32_t)x[1], (uint32_t)x[2], k);
}
Test(isa2, lop3_all) {
    static char body[40000];
    size_t len = 0;
    for (int k = 0; k < 256; k++)
        len += (size_t)snprintf(body + len, sizeof body - len, " lop3.b32 %%r30, %%r10, %%r11, %%r12, %d;\n cvt.u64.u32 %%o%d, %%r30;\n", k, k);
    static char kinds[257];
    memset(kinds, 'x', 256);
    kinds[256] = 0;
    Family f = {"lop3_all", false, 256, kinds, body, gen_bits, ref_lop3all, 64};
    run_family(&f);
}

/* ---------------------------------------------------------------------------------------------
 * Immediate positions, lengths, widths and selectors past the width (ptxas takes 0..255 for bfe/bfi),
 * clamped or wrapped for shf/bmsk/szext, c[1:0] for the prmt modes); f16/bf16 abs/neg forms. */

static void ref_bitsimm(const uint64_t *x, uint64_t *r) {
    uint32_t a = (uint32_t)x[0], b = (uint32_t)x[1];
    r[0] = ref_bfe(a, 40, 8, 32, false);
    r[1] = (uint32_t)ref_bfe(a, 4, 0xFF, 32, true);
    r[2] = ref_bfi(a, b, 20, 200, 32);
    r[3] = shf(a, b, 0xFFFFFFFF, true, true);
    r[4] = shf(a, b, 0xFFFFFFFF, false, false);
    r[5] = ref_bmsk(35, 4, true);
    r[6] = ref_bmsk(35, 4, false);
    r[7] = ref_szext(a, 40, true, true);
    r[8] = ref_szext(a, 40, false, true);
    r[9] = ref_prmt(a, b, 0xFFFE, 0);
    r[10] = ref_prmt(a, b, 0x7, 1);
    r[11] = ref_fns(a, 31, -3);
    r[12] = ref_bfe(x[0], 60, 10, 64, false);
    r[13] = ref_bfe(x[0], 60, 10, 64, true);
    uint16_t h = (uint16_t)x[2];
    r[14] = h_sub(h) ? (uint16_t)0 : (uint16_t)(h & 0x7FFF);
    r[15] = h_sub(h) ? (uint16_t)((h ^ 0x8000) & 0x8000) : (uint16_t)(h ^ 0x8000);
    uint32_t c = (uint32_t)x[2];
    r[16] = (c & 0x7FFF7FFF);
    r[17] = (c ^ 0x80008000);
}
static void gen_bitsimm(uint64_t *x, int i, int n) {
    gen_bits(x, i, n);
    x[2] = rnd_half(false) | (uint32_t)rnd_half(false) << 16;
}
static const Family BITSIMM = {
    "bits_immediates", false, 18, "xxxxxxxxxxxxxxxxxx",
    " bfe.u32 %r30, %r10, 40, 8;\n" O32(0, "%r30")
    " bfe.s32 %r30, %r10, 4, 0xFF;\n" O32(1, "%r30")
    " bfi.b32 %r30, %r10, %r11, 20, 200;\n" O32(2, "%r30")
    " shf.l.clamp.b32 %r30, %r10, %r11, 0xFFFFFFFF;\n" O32(3, "%r30")
    " shf.r.wrap.b32 %r30, %r10, %r11, 0xFFFFFFFF;\n" O32(4, "%r30")
    " bmsk.clamp.b32 %r30, 35, 4;\n" O32(5, "%r30")
    " bmsk.wrap.b32 %r30, 35, 4;\n" O32(6, "%r30")
    " szext.clamp.s32 %r30, %r10, 40;\n" O32(7, "%r30")
    " szext.wrap.s32 %r30, %r10, 40;\n" O32(8, "%r30")
    " prmt.b32.f4e %r30, %r10, %r11, 0xFFFE;\n" O32(9, "%r30")
    " prmt.b32.b4e %r30, %r10, %r11, 7;\n" O32(10, "%r30")
    " fns.b32 %r30, %r10, 31, -3;\n" O32(11, "%r30")
    " bfe.u64 %rd30, %rd10, 60, 10;\n" O64(12, "%rd30")
    " bfe.s64 %rd30, %rd10, 60, 10;\n" O64(13, "%rd30")
    " abs.ftz.f16 %h20, %h12;\n" O16(14, "%h20")
    " neg.ftz.f16 %h20, %h12;\n" O16(15, "%h20")
    " abs.f16x2 %r30, %r12;\n" O32(16, "%r30")
    " neg.f16x2 %r30, %r12;\n" O32(17, "%r30"),
    gen_bitsimm, ref_bitsimm, 512};

Test(isa2, bits_immediates) { run_family(&BITSIMM); }

/* ---------------------------------------------------------------------------------------------
 * Half-precision min/max with .ftz, .NaN and .xorsign.abs, bf16 comparisons (sm_90), vector mov order. */

static uint64_t hmm(uint16_t a, uint16_t b, bool bf, bool max, bool nan, bool ftz) {
    if (ftz) {
        if (h_sub(a)) a &= 0x8000;
        if (h_sub(b)) b &= 0x8000;
    }
    return half_minmax(a, b, bf, max, nan);
}
static uint64_t hpair(uint32_t a, uint32_t b, bool bf, bool max, bool nan, bool ftz) {
    uint64_t lo = hmm((uint16_t)a, (uint16_t)b, bf, max, nan, ftz), hi = hmm((uint16_t)(a >> 16), (uint16_t)(b >> 16), bf, max, nan, ftz);
    return lo == SKIP || hi == SKIP ? SKIP : lo | hi << 16;
}
static void ref_half90(const uint64_t *x, uint64_t *r) {
    uint32_t a = (uint32_t)x[0], b = (uint32_t)x[1];
    uint16_t ha = (uint16_t)a, hb = (uint16_t)b;
    r[0] = hmm(ha, hb, false, false, false, true);
    r[1] = hpair(a, b, false, true, true, true);
    r[2] = hpair(a, b, true, false, false, false);
    r[3] = hpair(a, b, true, true, true, false);
    /* xorsign.abs: min of the magnitudes, the sign the xor of the operands' signs */
    double ma = fabs(h2d(ha)), mb = fabs(h2d(hb));
    uint16_t sgn = (uint16_t)((ha ^ hb) & 0x8000);
    r[4] = isnan(ma) && isnan(mb) ? 0x7FFF : ((isnan(ma) ? hb : isnan(mb) ? ha : ma < mb ? ha : hb) & 0x7FFF) | sgn;
    if (!isnan(ma) && !isnan(mb) && ma == mb) r[4] = (ha & 0x7FFF) | sgn;
    double l0 = b2d(ha), l1 = b2d((uint16_t)(a >> 16)), m0 = b2d(hb), m1 = b2d((uint16_t)(b >> 16));
    r[5] = cmp_mask(l0, m0);
    r[6] = (uint32_t)(isnan(l0) || isnan(m0) || l0 < m0) | (uint32_t)(isnan(l1) || isnan(m1) || l1 < m1) << 1;
    r[7] = (uint32_t)(!isnan(l0) && !isnan(m0) && l0 > m0 ? 0x3F80 : 0) | (uint32_t)(!isnan(l1) && !isnan(m1) && l1 > m1 ? 0x3F80 : 0) << 16;
    r[8] = (uint64_t)(uint16_t)x[1] << 48 | (uint64_t)(uint16_t)x[0] << 32 | (uint64_t)(uint16_t)(x[0] >> 16) << 16 | (uint16_t)x[2];
}
static const Family HALF90 = {
    "half_minmax_sm90", true, 9, "hHBBhxxxx",
    " min.ftz.f16 %h20, %h10, %h11;\n" O16(0, "%h20")
    " max.ftz.NaN.f16x2 %r30, %r10, %r11;\n" O32(1, "%r30")
    " min.bf16x2 %r30, %r10, %r11;\n" O32(2, "%r30")
    " max.NaN.bf16x2 %r30, %r10, %r11;\n" O32(3, "%r30")
    " min.xorsign.abs.f16 %h20, %h10, %h11;\n" O16(4, "%h20")
    " mov.b32 %r41, 0;\n" CMPBIT("eq", "bf16", "%h10", "%h11", 1) CMPBIT("ne", "bf16", "%h10", "%h11", 2) CMPBIT("lt", "bf16", "%h10", "%h11", 4)
    CMPBIT("le", "bf16", "%h10", "%h11", 8) CMPBIT("gt", "bf16", "%h10", "%h11", 16) CMPBIT("ge", "bf16", "%h10", "%h11", 32)
    CMPBIT("equ", "bf16", "%h10", "%h11", 64) CMPBIT("neu", "bf16", "%h10", "%h11", 128) CMPBIT("ltu", "bf16", "%h10", "%h11", 256)
    CMPBIT("leu", "bf16", "%h10", "%h11", 512) CMPBIT("gtu", "bf16", "%h10", "%h11", 1024) CMPBIT("geu", "bf16", "%h10", "%h11", 2048)
    CMPBIT("num", "bf16", "%h10", "%h11", 4096) CMPBIT("nan", "bf16", "%h10", "%h11", 8192) O32(5, "%r41")
    " setp.ltu.bf16x2 %p5|%p6, %r10, %r11;\n selp.b32 %r43, 1, 0, %p5;\n selp.b32 %r44, 2, 0, %p6;\n or.b32 %r43, %r43, %r44;\n" O32(6, "%r43")
    " set.gt.bf16x2.bf16x2 %r30, %r10, %r11;\n" O32(7, "%r30")
    " mov.b32 {%h21, %h22}, %r10;\n mov.b64 %rd30, {%h12, %h22, %h21, %h11};\n" O64(8, "%rd30"),
    gen_half, ref_half90, 1024};

Test(isa2, half_minmax_sm90) { run_family(&HALF90); }

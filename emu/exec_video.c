/* exec_video.c - the video instructions, as the PTX ISA's pseudo-code has them ("Scalar Video Instructions",
 * "SIMD Video Instructions").  The parser (parse_mods.c, parse_check.c) has decoded the operand selectors into
 * EmuIns.vsel and refused every form the ISA does not define.
 *
 * Scalar vadd vsub vabsdiff vmin vmax vshl vshr vset:
 *   1. a and b are the byte, half or word their selectors pick (the word without one), sign- or zero-extended by
 *      .atype/.btype to 33 bits (vshl/vshr's b is unsigned);
 *   2. the operation, exact: the ISA's 34-bit result (vshl keeps the low 34 bits of its shift, sign-extended);
 *      vset's is 1 or 0;
 *   3. .sat clamps it to the dtype's range, that of d's byte or half when d has a selector;
 *   4. .add/.min/.max with c (sign- or zero-extended by the dtype; vset's c is unsigned), or, with a selector on
 *      d, its low byte or half merged into c at that place; d is the low 32 bits.
 * vmad: a * b (selected and extended as above) in 128 bits, negated as ~p + 1 when one of -a and -b is given, plus c
 *   (~c + 1 for -c) extended by the final sign (signed unless a, b and the product are unsigned and c is not negated),
 *   plus 1 for .po; shifted right arithmetically by .shr7/.shr15; .sat to the 32-bit range of the final sign.
 * SIMD vop2/vop4: lane i of a and of b is the half or byte of {b, a} its selector names (identity without one),
 *   extended by the type; the operation per lane (vavrg: (s + 1) >> 1 for a sum s >= 0, else s >> 1: halves away
 *   from zero); .sat to the dtype's lane range; .add: d = c + the results of the lanes in d's mask, else those lanes
 *   of d are the results and the others c's. */
#include "emu/exec.h"

/* partSelectSignExtend: the byte, half or word of x that sel (EMU_VSEL_*) picks, sign-extended when sg. */
static int64_t part(uint32_t x, unsigned sel, bool sg) {
    if (sel >= EMU_VSEL_B0 && sel <= EMU_VSEL_B3) {
        uint32_t v = x >> 8 * (sel - EMU_VSEL_B0) & 0xFFu;
        return sg ? (int64_t)(int8_t)v : (int64_t)v;
    }
    if (sel == EMU_VSEL_H0 || sel == EMU_VSEL_H1) {
        uint32_t v = x >> 16 * (sel - EMU_VSEL_H0) & 0xFFFFu;
        return sg ? (int64_t)(int16_t)v : (int64_t)v;
    }
    return sg ? (int64_t)(int32_t)x : (int64_t)x;
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The range of a signed or unsigned integer of `bits` bits, into lo and hi. */
static void range(unsigned bits, bool sg, int64_t *lo, int64_t *hi) {
    *lo = sg ? -(INT64_C(1) << (bits - 1)) : 0;
    *hi = sg ? (INT64_C(1) << (bits - 1)) - 1 : (INT64_C(1) << bits) - 1;
}

static uint32_t exec_vmad(const EmuIns *in, uint32_t a, uint32_t b, uint32_t c) {
    bool as = in->ty2 == EMU_T_S32, bs = in->ty3 == EMU_T_S32;
    bool negp = in->vsel.neg & EMU_VNEG_PRODUCT, negc = in->vsel.neg & EMU_VNEG_C;
    bool sf = as || bs || negp || negc; /* signedFinal; the dtype plays no part */
    __int128 tmp = (__int128)part(a, in->vsel.asel, as) * part(b, in->vsel.bsel, bs);
    unsigned lsb = 0;
    if (in->vsel.po) lsb = 1;
    else if (negp) tmp = ~tmp, lsb = 1;
    else if (negc) c = ~c, lsb = 1;
    tmp += (sf ? (__int128)(int32_t)c : (__int128)c) + lsb;
    tmp >>= in->vsel.scale; /* the ISA then keeps 64 bits, which hold any shifted result */
    if (in->flags & EMU_F(SAT)) {
        __int128 lo = sf ? INT32_MIN : 0, hi = sf ? INT32_MAX : UINT32_MAX;
        tmp = tmp < lo ? lo : tmp > hi ? hi : tmp;
    }
    return (uint32_t)tmp;
}

static uint32_t exec_scalar(const EmuIns *in, uint32_t a, uint32_t b, uint32_t c) {
    bool set = in->op == EMU_OP_VSET;
    /* vset's types are .atype.btype, the others' .dtype.atype.btype; vset's result and c are unsigned */
    bool as = (set ? in->ty : in->ty2) == EMU_T_S32, bs = (set ? in->ty2 : in->ty3) == EMU_T_S32, ds = !set && in->ty == EMU_T_S32;
    int64_t x = part(a, in->vsel.asel, as), y = part(b, in->vsel.bsel, bs), v;
    switch (in->op) {
    case EMU_OP_VADD: v = x + y; break;
    case EMU_OP_VSUB: v = x - y; break;
    case EMU_OP_VABSDIFF: v = x > y ? x - y : y - x; break;
    case EMU_OP_VMIN: v = x < y ? x : y; break;
    case EMU_OP_VMAX: v = x > y ? x : y; break;
    case EMU_OP_VSHL: case EMU_OP_VSHR: {
        unsigned n = (in->flags & EMU_F(WRAP)) ? (unsigned)(y & 31) : y > 32 ? 32u : (unsigned)y;
        if (in->op == EMU_OP_VSHR) v = x >> n; /* x is 33 bits: arithmetic for a signed a, zeros for an unsigned one */
        else v = (int64_t)((uint64_t)x << n << 30) >> 30; /* the low 34 bits, sign-extended */
        break;
    }
    default: v = emu_cmp_s(in->cmp, x, y); break; /* vset */
    }
    unsigned dsel = in->vsel.dsel, bits = dsel >= EMU_VSEL_H0 ? 16 : dsel ? 8 : 32;
    if (in->flags & EMU_F(SAT)) {
        int64_t lo, hi;
        range(bits, ds, &lo, &hi);
        v = clamp(v, lo, hi);
    }
    int64_t cx = ds ? (int64_t)(int32_t)c : (int64_t)c;
    switch (in->mode) {
    case EMU_MODE_AADD: v += cx; break;
    case EMU_MODE_AMIN: v = v < cx ? v : cx; break;
    case EMU_MODE_AMAX: v = v > cx ? v : cx; break;
    }
    if (!dsel) return (uint32_t)v;
    unsigned at = dsel >= EMU_VSEL_H0 ? 16 * (dsel - EMU_VSEL_H0) : 8 * (dsel - EMU_VSEL_B0);
    uint32_t m = (bits == 16 ? 0xFFFFu : 0xFFu) << at;
    return ((uint32_t)v << at & m) | (c & ~m);
}

static uint32_t exec_simd(const EmuIns *in, uint32_t a, uint32_t b, uint32_t c) {
    bool set = EMU_IS_VSET(in->op);
    bool as = (set ? in->ty : in->ty2) == EMU_T_S32, bs = (set ? in->ty2 : in->ty3) == EMU_T_S32, ds = !set && in->ty == EMU_T_S32;
    unsigned lanes = EMU_VIDEO_LANES(in->op), w = 32 / lanes, sbits = lanes == 4 ? 3 : 2;
    uint64_t ba = (uint64_t)b << 32 | a; /* the halves or bytes the selectors pick from: a's first */
    uint32_t lmask = lanes == 4 ? 0xFFu : 0xFFFFu, r = 0;
    int64_t lo, hi, sum = 0;
    range(w, ds, &lo, &hi);
    for (unsigned i = 0; i < lanes; i++) {
        unsigned ka = in->vsel.asel >> sbits * i & ((1u << sbits) - 1), kb = in->vsel.bsel >> sbits * i & ((1u << sbits) - 1);
        uint32_t ra = (uint32_t)(ba >> w * ka) & lmask, rb = (uint32_t)(ba >> w * kb) & lmask;
        int64_t x = as ? (lanes == 4 ? (int64_t)(int8_t)ra : (int64_t)(int16_t)ra) : (int64_t)ra;
        int64_t y = bs ? (lanes == 4 ? (int64_t)(int8_t)rb : (int64_t)(int16_t)rb) : (int64_t)rb;
        int64_t v;
        switch (in->op) {
        case EMU_OP_VADD2: case EMU_OP_VADD4: v = x + y; break;
        case EMU_OP_VSUB2: case EMU_OP_VSUB4: v = x - y; break;
        case EMU_OP_VAVRG2: case EMU_OP_VAVRG4: v = x + y >= 0 ? (x + y + 1) >> 1 : (x + y) >> 1; break;
        case EMU_OP_VMIN2: case EMU_OP_VMIN4: v = x < y ? x : y; break;
        case EMU_OP_VMAX2: case EMU_OP_VMAX4: v = x > y ? x : y; break;
        case EMU_OP_VSET2: case EMU_OP_VSET4: v = emu_cmp_s(in->cmp, x, y); break;
        default: v = x > y ? x - y : y - x; break; /* vabsdiff */
        }
        if ((in->flags & EMU_F(SAT))) v = clamp(v, lo, hi);
        bool on = in->vsel.dsel >> i & 1;
        if (on) sum += v;
        r |= ((on ? (uint32_t)v : c >> w * i) & lmask) << w * i;
    }
    return in->mode == EMU_MODE_AADD ? (uint32_t)((uint64_t)sum + c) : r;
}

bool emu_exec_video(EmuBlock *b, EmuThread *t, const EmuIns *in) {
    (void)b;
    uint32_t x = (uint32_t)EMU_R(t, in, 1), y = (uint32_t)EMU_R(t, in, 2), c = in->nops > 3 ? (uint32_t)EMU_R(t, in, 3) : 0;
    EMU_R(t, in, 0) = in->op == EMU_OP_VMAD ? exec_vmad(in, x, y, c) : EMU_IS_VIDEO_SIMD(in->op) ? exec_simd(in, x, y, c)
                                                                                                 : exec_scalar(in, x, y, c);
    return true;
}

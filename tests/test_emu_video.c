/* test_emu_video.c - the PTX video instructions on the emulator, against a reference written here from the PTX
 * ISA's pseudo-code ("Scalar Video Instructions", "SIMD Video Instructions"), not from the emulator's code:
 *   1. forms: every scalar instruction (vadd vsub vabsdiff vmin vmax vshl vshr vmad vset) with every type
 *      combination, .sat, each secondary operation (.add .min .max) and each merge selector on d (.b0-.b3 .h0
 *      .h1), random selectors on a and b; vshl/vshr with .clamp and .wrap; vmad with .po, .shr7, .shr15 and every
 *      negation ptxas takes; some immediate operands and d aliasing c; the SIMD ones (vadd2 .. vset4) with
 *      random lane selectors on a and b and masks on d.  They make one module (kernels of FORMS_PER_KERNEL
 *      forms), which ptxas must assemble too (sm_80), run over special and random operands;
 *   2. forms the ISA does not define fail to load with a message naming them, and ptxas refuses each as well.
 * The reference is the ISA's; the code ptxas writes for sm_80 (what a GPU runs) computes something else in some
 * corner cases of the scalar forms (docs/emulator.md lists them). */
#include "test_emu_util.h"
#include "tests/test_ptxas.h"

#include <stdint.h>

/* ---- the reference (the ISA's pseudo-code) ---- */
enum { OP_VADD, OP_VSUB, OP_VABSDIFF, OP_VMIN, OP_VMAX, OP_VSHL, OP_VSHR, OP_VMAD, OP_VSET, /* scalar */
       OP_VADD2, OP_VSUB2, OP_VAVRG2, OP_VABSDIFF2, OP_VMIN2, OP_VMAX2, OP_VSET2 /* SIMD (4 lanes: .four) */ };
static const char *const op_names[] = {"vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad", "vset",
                                       "vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax", "vset"};
static const char *const cmp_names[] = {"eq", "ne", "lt", "le", "gt", "ge"};
static const char *const sel_names[] = {"", "b0", "b1", "b2", "b3", "h0", "h1"}; /* scalar selectors; 0: none */
static const char *const secop_names[] = {"", "add", "min", "max"};

typedef struct Form {
    int op;
    bool four;              /* SIMD: 4 byte lanes, else 2 half lanes */
    bool ds, as, bs;        /* .s32 dtype, atype, btype (vset: no dtype) */
    bool sat, clamp;        /* vshl/vshr: .clamp, else .wrap */
    int secop;              /* 1 .add, 2 .min, 3 .max */
    int cmp;                /* vset */
    int asel, bsel, dsel;   /* scalar: sel_names; SIMD: asel/bsel lane sources, lane 0 lowest (4 bits a lane); dsel a mask */
    bool sel_given[3];      /* SIMD: d's, a's, b's selector written out (else the default) */
    bool c_operand;         /* scalar, no secop or merge: c given anyway (ptxas takes it; it is unused) */
    bool alias_c;           /* d is c's register (mov d, c first) */
    bool po, nega, negb, negc;
    int scale;              /* vmad: 0, 7 or 15 */
    int imm;                /* 1, 2, 3: operand a, b or c is the immediate immv */
    uint32_t immv;
} Form;

/* partSelectSignExtend: sign- or zero-extend the byte, half or word sel picks (33 bits) */
static int64_t ref_part(uint32_t x, bool sg, int sel) {
    unsigned pos = sel == 0 ? 0 : sel <= 4 ? 8 * (unsigned)(sel - 1) : 16 * (unsigned)(sel - 5);
    unsigned width = sel == 0 ? 32 : sel <= 4 ? 8 : 16;
    uint64_t f = ((uint64_t)x >> pos) & ((1ull << width) - 1);
    return sg && (f >> (width - 1)) ? (int64_t)f - (int64_t)(1ull << width) : (int64_t)f;
}

static int64_t ref_clamp(int64_t v, int64_t hi, int64_t lo) { return v > hi ? hi : v < lo ? lo : v; }

/* optSaturate(tmp, sat, sign, dsel) */
static int64_t ref_sat(int64_t tmp, bool sat, bool sign, int dsel) {
    if (!sat) return tmp;
    if (dsel >= 1 && dsel <= 4) return sign ? ref_clamp(tmp, INT8_MAX, INT8_MIN) : ref_clamp(tmp, UINT8_MAX, 0);
    if (dsel >= 5) return sign ? ref_clamp(tmp, INT16_MAX, INT16_MIN) : ref_clamp(tmp, UINT16_MAX, 0);
    return sign ? ref_clamp(tmp, INT32_MAX, INT32_MIN) : ref_clamp(tmp, UINT32_MAX, 0);
}

/* optMerge(dsel, tmp, c) */
static uint32_t ref_merge(int dsel, int64_t tmp, uint32_t c) {
    uint32_t t = (uint32_t)tmp;
    switch (dsel) {
    case 5: return (t & 0xffff) | (0xffff0000 & c);
    case 6: return ((t & 0xffff) << 16) | (0x0000ffff & c);
    case 1: return (t & 0xff) | (0xffffff00 & c);
    case 2: return ((t & 0xff) << 8) | (0xffff00ff & c);
    case 3: return ((t & 0xff) << 16) | (0xff00ffff & c);
    case 4: return ((t & 0xff) << 24) | (0x00ffffff & c);
    default: return t;
    }
}

/* A value as the ISA's signed 34-bit intermediate: its low 34 bits, two's complement. */
static int64_t s34(__int128 v) {
    uint64_t low = (uint64_t)v & ((1ull << 34) - 1);
    return low >> 33 ? (int64_t)low - (INT64_C(1) << 34) : (int64_t)low;
}

static bool ref_compare(int cmp, int64_t x, int64_t y) {
    switch (cmp) {
    case 0: return x == y;
    case 1: return x != y;
    case 2: return x < y;
    case 3: return x <= y;
    case 4: return x > y;
    default: return x >= y;
    }
}

static uint32_t ref_vmad(const Form *f, uint32_t a, uint32_t b, uint32_t c) {
    int64_t ta = ref_part(a, f->as, f->asel), tb = ref_part(b, f->bs, f->bsel);
    bool negp = f->nega != f->negb;
    bool signed_final = f->as || f->bs || negp || f->negc;
    unsigned __int128 tmp = (unsigned __int128)((__int128)ta * tb); /* tmp[127:0] */
    unsigned lsb = 0;
    if (f->po) lsb = 1;
    else if (negp) { tmp = ~tmp; lsb = 1; }
    else if (f->negc) { c = ~c; lsb = 1; }
    unsigned __int128 c128 = signed_final ? (unsigned __int128)(__int128)(int32_t)c : (unsigned __int128)c;
    tmp = tmp + c128 + lsb;
    if (f->scale) { /* result = (tmp >> scale) & 0xffffffffffffffff */
        uint64_t result = (uint64_t)(tmp >> f->scale);
        if (f->sat && signed_final) return (uint32_t)ref_clamp((int64_t)result, INT32_MAX, INT32_MIN);
        if (f->sat) return result > UINT32_MAX ? UINT32_MAX : (uint32_t)result;
        return (uint32_t)result;
    }
    if (f->sat && signed_final) {
        __int128 s = (__int128)tmp;
        return (uint32_t)(s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : s);
    }
    if (f->sat) return tmp > UINT32_MAX ? UINT32_MAX : (uint32_t)tmp;
    return (uint32_t)tmp;
}

static uint32_t ref_scalar(const Form *f, uint32_t a, uint32_t b, uint32_t c) {
    if (f->op == OP_VMAD) return ref_vmad(f, a, b, c);
    bool set = f->op == OP_VSET, shift = f->op == OP_VSHL || f->op == OP_VSHR;
    int64_t ta = ref_part(a, f->as, f->asel), tb = ref_part(b, shift ? false : f->bs, f->bsel), tmp;
    switch (f->op) {
    case OP_VADD: tmp = ta + tb; break;
    case OP_VSUB: tmp = ta - tb; break;
    case OP_VABSDIFF: tmp = ta - tb < 0 ? tb - ta : ta - tb; break;
    case OP_VMIN: tmp = ta < tb ? ta : tb; break;
    case OP_VMAX: tmp = ta > tb ? ta : tb; break;
    case OP_VSHL: case OP_VSHR:
        if (f->clamp && tb > 32) tb = 32;
        if (!f->clamp) tb = tb & 0x1f;
        if (f->op == OP_VSHL) tmp = s34((__int128)ta * ((__int128)1 << tb));
        else tmp = s34(ta / (INT64_C(1) << tb) - (ta < 0 && ta % (INT64_C(1) << tb) ? 1 : 0)); /* floor(ta / 2^tb) */
        break;
    default: tmp = ref_compare(f->cmp, ta, tb) ? 1 : 0; break;
    }
    bool sign = !set && f->ds; /* vset: "the intermediate result ... is always unsigned" */
    tmp = ref_sat(tmp, f->sat, sign, f->dsel);
    int64_t c33 = sign ? (int64_t)(int32_t)c : (int64_t)c; /* the third operand's sign: the dtype's */
    switch (f->secop) {
    case 1: tmp = tmp + c33; break;
    case 2: tmp = tmp < c33 ? tmp : c33; break;
    case 3: tmp = tmp > c33 ? tmp : c33; break;
    }
    return ref_merge(f->dsel, tmp, c);
}

/* extractAndSignExt: lane i of the halves or bytes of {b, a} that sel names */
static int64_t ref_lane(uint32_t a, uint32_t b, int sel, int i, bool four, bool sg) {
    unsigned src = (unsigned)(sel >> (4 * i)) & 0xF, w = four ? 8 : 16;
    uint64_t ba = ((uint64_t)b << 32) | a, v = (ba >> (w * src)) & ((1ull << w) - 1);
    return sg && (v >> (w - 1)) ? (int64_t)v - (int64_t)(1ull << w) : (int64_t)v;
}

static uint32_t ref_simd(const Form *f, uint32_t a, uint32_t b, uint32_t c) {
    int lanes = f->four ? 4 : 2;
    unsigned w = f->four ? 8 : 16;
    bool set = f->op == OP_VSET2;
    int64_t t[4];
    for (int i = 0; i < lanes; i++) {
        int64_t va = ref_lane(a, b, f->asel, i, f->four, f->as), vb = ref_lane(a, b, f->bsel, i, f->four, f->bs);
        switch (f->op) {
        case OP_VADD2: t[i] = va + vb; break;
        case OP_VSUB2: t[i] = va - vb; break;
        case OP_VAVRG2: t[i] = va + vb >= 0 ? (va + vb + 1) >> 1 : (va + vb) >> 1; break;
        case OP_VABSDIFF2: t[i] = va > vb ? va - vb : vb - va; break;
        case OP_VMIN2: t[i] = va < vb ? va : vb; break;
        case OP_VMAX2: t[i] = va > vb ? va : vb; break;
        default: t[i] = ref_compare(f->cmp, va, vb) ? 1 : 0; break;
        }
        if (f->sat && !set) {
            int64_t hi = f->ds ? (1 << (w - 1)) - 1 : (1 << w) - 1, lo = f->ds ? -(1 << (w - 1)) : 0;
            t[i] = ref_clamp(t[i], hi, lo);
        }
    }
    uint32_t d;
    if (f->secop == 1) {
        d = c;
        for (int i = 0; i < lanes; i++) d += (f->dsel >> i & 1) ? (uint32_t)t[i] : 0;
    } else {
        d = 0;
        for (int i = 0; i < lanes; i++) {
            uint32_t lane = (f->dsel >> i & 1) ? (uint32_t)t[i] : c >> (w * i);
            d |= (lane & ((1u << w) - 1)) << (w * i);
        }
    }
    return d;
}

static bool is_simd(const Form *f) { return f->op >= OP_VADD2; }
static uint32_t ref_form(const Form *f, uint32_t a, uint32_t b, uint32_t c) {
    if (f->imm == 1) a = f->immv;
    if (f->imm == 2) b = f->immv;
    if (f->imm == 3) c = f->immv;
    return is_simd(f) ? ref_simd(f, a, b, c) : ref_scalar(f, a, b, c);
}

/* ---- the forms as PTX ---- */
static const char *ty(bool s) { return s ? ".s32" : ".u32"; }

/* A SIMD selector or mask as text: ".h10", ".b7654", ".b320" */
static void simd_sel(char *buf, const Form *f, int which) {
    int lanes = f->four ? 4 : 2;
    char *p = buf;
    *p++ = '.';
    *p++ = f->four ? 'b' : 'h';
    if (which == 0) {
        for (int i = lanes - 1; i >= 0; i--)
            if (f->dsel >> i & 1) *p++ = (char)('0' + i);
    } else {
        int sel = which == 1 ? f->asel : f->bsel;
        for (int i = lanes - 1; i >= 0; i--) *p++ = (char)('0' + (sel >> (4 * i) & 0xF));
    }
    *p = 0;
}

/* The instruction of form f, writing %r4 from %r1, %r2, %r3 (or immediates). */
static void form_ptx(char *buf, size_t cap, const Form *f) {
    char opc[96], dsel[8] = "", asel[8] = "", bsel[8] = "", a[24], b[24], c[24];
    bool simd = is_simd(f), set = f->op == OP_VSET || f->op == OP_VSET2;
    if (simd) {
        snprintf(opc, sizeof opc, "%s%c%s%s%s%s%s%s%s", op_names[f->op], f->four ? '4' : '2', set ? "" : ty(f->ds), ty(f->as), ty(f->bs),
                 set ? "." : "", set ? cmp_names[f->cmp] : "", f->sat ? ".sat" : "", f->secop ? ".add" : "");
        if (f->sel_given[0]) simd_sel(dsel, f, 0);
        if (f->sel_given[1]) simd_sel(asel, f, 1);
        if (f->sel_given[2]) simd_sel(bsel, f, 2);
    } else {
        snprintf(opc, sizeof opc, "%s%s%s%s%s%s%s%s%s%s%s%s", op_names[f->op], set ? "" : ty(f->ds), ty(f->as), ty(f->bs),
                 f->po ? ".po" : "", set ? "." : "", set ? cmp_names[f->cmp] : "", f->sat ? ".sat" : "",
                 f->op == OP_VSHL || f->op == OP_VSHR ? (f->clamp ? ".clamp" : ".wrap") : "",
                 f->scale == 7 ? ".shr7" : f->scale == 15 ? ".shr15" : "", f->secop ? "." : "", secop_names[f->secop]);
        if (f->dsel) snprintf(dsel, sizeof dsel, ".%s", sel_names[f->dsel]);
        if (f->asel) snprintf(asel, sizeof asel, ".%s", sel_names[f->asel]);
        if (f->bsel) snprintf(bsel, sizeof bsel, ".%s", sel_names[f->bsel]);
    }
    /* d aliasing c: c's value moved into d's register first; else d starts as garbage the instruction overwrites */
    const char *creg = f->alias_c ? "%r4" : "%r3";
    if (f->imm == 1) snprintf(a, sizeof a, "%u", f->immv); else snprintf(a, sizeof a, "%s%%r1%s", f->nega ? "-" : "", asel);
    if (f->imm == 2) snprintf(b, sizeof b, "%u", f->immv); else snprintf(b, sizeof b, "%s%%r2%s", f->negb ? "-" : "", bsel);
    if (f->imm == 3) snprintf(c, sizeof c, "%u", f->immv); else snprintf(c, sizeof c, "%s%s", f->negc ? "-" : "", creg);
    bool has_c = simd || f->op == OP_VMAD || f->secop || f->dsel || f->c_operand;
    snprintf(buf, cap, " %s\n %s %%r4%s, %s, %s%s%s;\n", f->alias_c ? "mov.b32 %r4, %r3;" : "mov.b32 %r4, 0x5a5a5a5a;", opc, dsel, a, b,
             has_c ? ", " : "", has_c ? c : "");
}

/* ---- 1. forms ---- */
enum { FORMS_PER_KERNEL = 32 };

static const uint32_t specials[] = {
    0, 1, 2, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x80, 0x7F, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 31, 32, 33, 255,
    0x1F1F1F1F, 0x20202020, 0x21212121, 0xFFFFFF80, 0x80808080, 0x7F7F7F7F, 0x00FF00FF, 0xFF00FF00, 0x8000FFFF, 0x12345678,
    0xDEADBEEF, 0x0000FFFE, 0xFFFF8000, 0x7FFF7FFF, 0x0021001F, 0x00200000,
};

/* d's merge selector, the secondary operation or a c operand that is not used, by tail number 0..10 */
static void set_tail(Form *f, int tail) {
    f->c_operand = tail == 1;
    f->secop = tail >= 2 && tail <= 4 ? tail - 1 : 0;
    f->dsel = tail >= 5 ? tail - 4 : 0;
}

/* An immediate for one of the operands now and then (not for a negated one, nor for c aliasing d; none takes a selector). */
static void maybe_imm(Form *f, bool has_c) {
    if (rnd64() % 6) return;
    int k = 1 + (int)(rnd64() % (has_c && !f->alias_c ? 3 : 2));
    if ((k == 1 && f->nega) || (k == 2 && f->negb) || (k == 3 && f->negc)) return;
    f->imm = k;
    f->immv = specials[rnd64() % ARRAY_LEN(specials)];
    if (k == 1) f->asel = 0;
    if (k == 2) f->bsel = 0;
}

/* A selector on a or b: the whole word as often as each of b0 .. h1 together (the overflows are there) */
static int scalar_sel(void) { return rnd64() % 2 ? 0 : 1 + (int)(rnd64() % 6); }

static void scalar_sels(Form *f) {
    f->asel = scalar_sel();
    f->bsel = scalar_sel();
    f->alias_c = (f->secop || f->dsel) && rnd64() % 4 == 0;
}

static size_t gen_forms(Form *fs) {
    size_t n = 0;
    for (int op = OP_VADD; op <= OP_VSHR; op++) { /* the arithmetic ones and the shifts */
        bool shift = op == OP_VSHL || op == OP_VSHR;
        for (int types = 0; types < 8; types++)
            for (int sat = 0; sat < 2; sat++)
                for (int clamp = 0; clamp < (shift ? 2 : 1); clamp++)
                    for (int tail = 0; tail <= 10; tail++) {
                        if (shift && (types & 1)) continue; /* b is .u32 */
                        Form *f = &fs[n++];
                        *f = (Form){.op = op, .bs = types & 1, .as = types >> 1 & 1, .ds = types >> 2 & 1, .sat = sat, .clamp = clamp};
                        set_tail(f, tail);
                        scalar_sels(f);
                        maybe_imm(f, f->secop || f->dsel || f->c_operand);
                    }
    }
    for (int types = 0; types < 4; types++)
        for (int cmp = 0; cmp < 6; cmp++)
            for (int tail = 0; tail <= 10; tail++) {
                Form *f = &fs[n++];
                *f = (Form){.op = OP_VSET, .bs = types & 1, .as = types >> 1 & 1, .cmp = cmp};
                set_tail(f, tail);
                scalar_sels(f);
                maybe_imm(f, f->secop || f->dsel || f->c_operand);
            }
    /* vmad: negations none, .po, -a, -b, -a -b, -c, -a -b -c */
    static const bool negs[7][4] = {{0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 1, 1, 0}, {0, 0, 0, 1}, {0, 1, 1, 1}};
    for (int types = 0; types < 8; types++)
        for (int sat = 0; sat < 2; sat++)
            for (int scale = 0; scale < 3; scale++)
                for (int ng = 0; ng < 7; ng++) {
                    Form *f = &fs[n++];
                    *f = (Form){.op = OP_VMAD, .bs = types & 1, .as = types >> 1 & 1, .ds = types >> 2 & 1, .sat = sat,
                                .scale = scale == 1 ? 7 : scale == 2 ? 15 : 0, .po = negs[ng][0], .nega = negs[ng][1],
                                .negb = negs[ng][2], .negc = negs[ng][3]};
                    f->asel = scalar_sel();
                    f->bsel = scalar_sel();
                    maybe_imm(f, true);
                }
    /* SIMD: random lane selectors and masks, each written out or left to its default */
    for (int op = OP_VADD2; op <= OP_VSET2; op++)
        for (int four = 0; four < 2; four++)
            for (int types = 0; types < 8; types++)
                for (int tail = 0; tail < 3; tail++) {
                    bool set = op == OP_VSET2;
                    if (set && (types >= 4 || tail == 2)) continue; /* vset: no dtype, no .sat */
                    int cmps = set ? 6 : 1;
                    for (int cmp = 0; cmp < cmps; cmp++) {
                        Form *f = &fs[n++];
                        int lanes = four ? 4 : 2;
                        *f = (Form){.op = op, .four = four, .bs = types & 1, .as = types >> 1 & 1, .ds = types >> 2 & 1,
                                    .secop = tail == 1, .sat = tail == 2, .cmp = cmp};
                        for (int k = 0; k < 3; k++) f->sel_given[k] = rnd64() % 3 != 0;
                        f->dsel = f->sel_given[0] ? (int)(1 + rnd64() % ((1u << lanes) - 1)) : (1 << lanes) - 1;
                        for (int i = 0; i < lanes; i++) {
                            f->asel |= (f->sel_given[1] ? (int)(rnd64() % (2 * (unsigned)lanes)) : i) << (4 * i);
                            f->bsel |= (f->sel_given[2] ? (int)(rnd64() % (2 * (unsigned)lanes)) : lanes + i) << (4 * i);
                        }
                        f->alias_c = rnd64() % 4 == 0;
                    }
                }
    return n;
}

static const char *kernel_head =
    ".visible .entry k%zu(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd, .param .u32 pn)\n{\n"
    " .reg .pred %%p<2>;\n .reg .b32 %%r<8>;\n .reg .b64 %%rd<8>;\n"
    " mov.u32 %%r5, %%tid.x;\n mov.u32 %%r6, %%ctaid.x;\n mov.u32 %%r7, %%ntid.x;\n mad.lo.s32 %%r5, %%r6, %%r7, %%r5;\n"
    " ld.param.u32 %%r6, [pn];\n setp.ge.u32 %%p1, %%r5, %%r6;\n @%%p1 bra $DONE;\n mul.wide.u32 %%rd1, %%r5, 4;\n"
    " ld.param.u64 %%rd2, [pa];\n add.s64 %%rd2, %%rd2, %%rd1;\n ld.global.u32 %%r1, [%%rd2];\n"
    " ld.param.u64 %%rd2, [pb];\n add.s64 %%rd2, %%rd2, %%rd1;\n ld.global.u32 %%r2, [%%rd2];\n"
    " ld.param.u64 %%rd2, [pc];\n add.s64 %%rd2, %%rd2, %%rd1;\n ld.global.u32 %%r3, [%%rd2];\n"
    " ld.param.u64 %%rd3, [pd];\n add.s64 %%rd3, %%rd3, %%rd1;\n mul.wide.u32 %%rd4, %%r6, 4;\n";

Test(video, forms) {
    static Form fs[4096];
    size_t nf = gen_forms(fs), nk = (nf + FORMS_PER_KERNEL - 1) / FORMS_PER_KERNEL;
    cr_assert(nf <= ARRAY_LEN(fs));
    size_t cap = nf * 192 + nk * 1536 + 64, len = 0;
    char *ptx = malloc(cap);
    len += (size_t)snprintf(ptx + len, cap - len, ".version 7.0\n.target sm_80\n.address_size 64\n");
    for (size_t k = 0; k < nk; k++) {
        len += (size_t)snprintf(ptx + len, cap - len, kernel_head, k);
        for (size_t j = k * FORMS_PER_KERNEL; j < nf && j < (k + 1) * FORMS_PER_KERNEL; j++) {
            form_ptx(ptx + len, cap - len, &fs[j]);
            len += strlen(ptx + len);
            len += (size_t)snprintf(ptx + len, cap - len, " st.global.u32 [%%rd3], %%r4;\n add.s64 %%rd3, %%rd3, %%rd4;\n");
        }
        len += (size_t)snprintf(ptx + len, cap - len, "$DONE:\n ret;\n}\n");
        cr_assert(len < cap - 1);
    }
    check_ptxas_arch(ptx, "sm_80");

    size_t ns = ARRAY_LEN(specials), n = ns * ns + 1500;
    uint32_t *a = malloc(n * 4), *b = malloc(n * 4), *c = malloc(n * 4), *out = malloc(n * 4 * FORMS_PER_KERNEL);
    for (size_t i = 0; i < n; i++) {
        if (i < ns * ns) a[i] = specials[i / ns], b[i] = specials[i % ns], c[i] = specials[(i * 7 + i / ns) % ns];
        else if (i % 2) a[i] = (uint32_t)rnd64(), b[i] = (uint32_t)rnd64(), c[i] = (uint32_t)rnd64();
        else a[i] = (uint32_t)rnd64() & 0x80FF80FF, b[i] = (uint32_t)rnd64() & 0x3F3F803F, c[i] = specials[rnd64() % ns];
    }
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    cr_assert_eq(dev_module_load_ptx(d, ptx, &m), DEV_OK, "load: %s", dev_last_error(d));
    uint64_t da = upload(d, a, n * 4), db = upload(d, b, n * 4), dc = upload(d, c, n * 4), dd = poisoned(d, n * 4 * FORMS_PER_KERNEL);
    uint32_t nn = (uint32_t)n;
    size_t bad = 0;
    for (size_t k = 0; k < nk; k++) {
        char name[32];
        snprintf(name, sizeof name, "k%zu", k);
        TileDevFunction *fn;
        cr_assert_eq(dev_module_get_function(m, name, &fn), DEV_OK);
        void *params[] = {&da, &db, &dc, &dd, &nn};
        cr_assert_eq(dev_launch(fn, (unsigned)(n + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
        download(d, out, dd, n * 4 * FORMS_PER_KERNEL);
        for (size_t j = k * FORMS_PER_KERNEL; j < nf && j < (k + 1) * FORMS_PER_KERNEL; j++)
            for (size_t i = 0; i < n; i++) {
                uint32_t got = out[(j - k * FORMS_PER_KERNEL) * n + i], want = ref_form(&fs[j], a[i], b[i], c[i]);
                if (got == want) continue;
                char text[256];
                form_ptx(text, sizeof text, &fs[j]);
                if (bad++ < 20)
                    cr_log_error("form %zu:\n%s  a=%#x b=%#x c=%#x: got %#x, want %#x", j, text, a[i], b[i], c[i], got, want);
                break;
            }
    }
    cr_assert_eq(bad, 0, "%zu of %zu forms differ from the reference", bad, nf);
    dev_module_unload(m);
    dev_close(d);
    free(a), free(b), free(c), free(out), free(ptx);
}

/* ---- 2. forms the ISA does not define ---- */

Test(video, bad_forms) {
    static const struct { const char *ins, *needle; } bad[] = {
        /* scalar */
        {"vadd.u32.u32.u32 %r4.h1, %r1, %r2;", "takes 4 operands"},
        {"vadd.u32.u32.u32.add %r4, %r1, %r2;", "takes 4 operands"},
        {"vadd.u32.u32.u32.min %r4.h1, %r1, %r2, %r3;", "exclude each other"},
        {"vadd.u32.u32 %r4, %r1, %r2;", "needs .dtype.atype.btype"},
        {"vadd.u32.u32.u32.u32 %r4, %r1, %r2;", "needs .dtype.atype.btype"},
        {"vadd.b32.u32.u32 %r4, %r1, %r2;", "needs .dtype.atype.btype"},
        {"vsub.u32.u32.u32 %r4, %r1.b4, %r2;", "no selector '.b4' on operand 2"},
        {"vmin.u32.u32.u32 %r4, %r1.h2, %r2;", "no selector '.h2' on operand 2"},
        {"vmax.u32.u32.u32 %r4, %r1, %r2.h10;", "no selector '.h10' on operand 3"},
        {"vadd.u32.u32.u32 %r4.b10, %r1, %r2, %r3;", "no selector '.b10' on operand 1"},
        {"vadd.u32.u32.u32 %r4, -%r1, %r2;", "'-' on operand 2"},
        {"vadd.u32.u32.u32.add %r4, %r1, %r2, %r3.b0;", "no selector '.b0' on operand 4"},
        {"vabsdiff.u32.u32.u32 %r4.h0, %r1, %r2, %r3.h0;", "on operand 4"},
        {"vadd.u32.u32.u32.and %r4, %r1, %r2, %r3;", "unsupported modifier '.and'"},
        {"vadd.u32.u32.u32.eq %r4, %r1, %r2;", "unsupported modifier '.eq'"},
        {"vadd.u32.u32.u32.clamp %r4, %r1, %r2;", "unsupported modifier in"},
        {"vadd.u32.u32.u32.shr7 %r4, %r1, %r2;", "unsupported modifier '.shr7'"},
        {"vadd.u32.u32.u32.po %r4, %r1, %r2;", "unsupported modifier '.po'"},
        {"vadd.u32.u32.u32.add.min %r4, %r1, %r2, %r3;", "two secondary operations"},
        {"vadd.u32.u32.u32 %r4, [%rd1], %r2;", "operand 2 must be a .b32 register"},
        {"vshl.s32.u32.u32 %r4, %r1, %r2;", "one of .clamp and .wrap"},
        {"vshl.u32.s32.u32.clamp.wrap %r4, %r1, %r2;", "one of .clamp and .wrap"},
        {"vshr.u32.u32.s32.wrap %r4, %r1, %r2;", ".dtype.atype.u32"},
        {"vshl.u32.s32.clamp %r4, %r1, %r2;", ".dtype.atype.u32"},
        {"vmad.u32.u32.u32 %r4, %r1, %r2;", "takes 4 operands"},
        {"vmad.s32.u32.u32 %r4, -%r1, %r2, -%r3;", "negates either a * b"},
        {"vmad.s32.u32.u32.po %r4, %r1, %r2, -%r3;", ".po (plus one) takes no negated operand"},
        {"vmad.s32.u32.u32 %r4.h0, %r1, %r2, %r3;", "no selector '.h0' on operand 1"},
        {"vmad.s32.u32.u32.add %r4, %r1, %r2, %r3;", "unsupported modifier '.add'"},
        {"vmad.s32.u32.u32.shr7.shr15 %r4, %r1, %r2, %r3;", "two scales"},
        {"vmad.s32.s32.s32.clamp %r4, %r1, %r2, %r3;", "unsupported modifier in"},
        {"vmad.s32.s32.s32 %r4, %r1, %r2, %r3.b1;", "on operand 4"},
        {"vset.u32.u32.ne.sat %r4, %r1, %r2;", "unsupported modifier in"},
        {"vset.u32.u32.lo %r4, %r1, %r2;", "a comparison (.eq .ne .lt .le .gt .ge)"},
        {"vset.s32.s32.equ %r4, %r1, %r2;", "a comparison (.eq .ne .lt .le .gt .ge)"},
        {"vset.u32.u32.u32.ne %r4, %r1, %r2;", "needs .atype.btype"},
        {"vset.u32.u32 %r4, %r1, %r2;", "a comparison"},
        /* SIMD */
        {"vadd2.u32.u32.u32 %r4, %r1, %r2;", "takes 4 operands"},
        {"vadd2.u32.u32.u32.add.sat %r4, %r1, %r2, %r3;", ".sat and .add exclude each other"},
        {"vadd2.u32.u32.u32.min %r4, %r1, %r2, %r3;", "unsupported modifier '.min'"},
        {"vset4.u32.u32.ne.max %r4, %r1, %r2, %r3;", "unsupported modifier '.max'"},
        {"vadd2.u32.u32.u32 %r4.h01, %r1, %r2, %r3;", "no selector '.h01' on operand 1"},
        {"vadd2.u32.u32.u32 %r4, %r1.h0, %r2, %r3;", "no selector '.h0' on operand 2"},
        {"vadd2.u32.u32.u32 %r4, %r1.h40, %r2, %r3;", "no selector '.h40'"},
        {"vadd2.u32.u32.u32 %r4, %r1, %r2, %r3.h10;", "on operand 4"},
        {"vadd2.u32.u32.u32 %r4.b1, %r1, %r2, %r3;", "no selector '.b1' on operand 1"},
        {"vadd4.u32.u32.u32 %r4, %r1.b76, %r2, %r3;", "no selector '.b76'"},
        {"vadd4.u32.u32.u32 %r4.b23, %r1, %r2, %r3;", "no selector '.b23'"},
        {"vadd4.u32.u32.u32 %r4.b0, %r1.b8888, %r2, %r3;", "no selector '.b8888'"},
        {"vadd4.u32.u32.u32 %r4.h10, %r1, %r2, %r3;", "no selector '.h10'"},
        {"vadd4.u32.u32.u32 %r4, 5, %r2, %r3;", "take no immediates"},
        {"vavrg2.u32.u32.u32 %r4, %r1, %r2, 7;", "take no immediates"},
        /* not video instructions */
        {"add.u32 %r4, %r1.b0, %r2;", "takes no operand selector"},
        {"add.s32 %r4, -%r1, %r2;", "'-' on operand 2"},
    };
    TileDevice *d = open_emu(false);
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        char ptx[512];
        snprintf(ptx, sizeof ptx,
                 ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n .reg .b32 %%r<8>;\n .reg .b64 %%rd<4>;\n"
                 " %s\n ret;\n}\n", bad[i].ins);
        TileDevModule *m = NULL;
        cr_assert_eq(dev_module_load_ptx(d, ptx, &m), DEV_ERR_PTX, "'%s' loaded", bad[i].ins);
        const char *e = dev_last_error(d);
        cr_assert(strstr(e, bad[i].needle) && strstr(e, "ptx:8:"), "'%s': the message '%s' lacks '%s' or the line", bad[i].ins, e,
                  bad[i].needle);
        cr_assert(ptxas_refuses(ptx, "sm_80"), "ptxas takes '%s', which the emulator refuses", bad[i].ins);
    }
    dev_close(d);
}

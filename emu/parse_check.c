/* parse_check.c - the checks of one decoded instruction that need no run time: operand counts and
 * kinds, destinations that are registers, immediate limits (barrier ids and counts, group counts,
 * register budgets), writes to read-only state spaces, the forms of the tensor-core and sm_90
 * instructions and the .target they need.  Called by parse.c for every instruction. */
#include "emu/exec.h"
#include "emu/parse_int.h"
#include "support/target.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Whether the opcode text s has the modifier .m (a whole one). */
bool emu_has_mod(const char *s, uint32_t len, const char *m) {
    size_t n = strlen(m);
    for (uint32_t i = 0; i + n < len; i++)
        if (s[i] == '.' && !memcmp(s + i + 1, m, n) && (i + 1 + n == len || s[i + 1 + n] == '.')) return true;
    return false;
}


/* Checks that need no run time: barrier ids and counts given as
 * immediates, writes to read-only state spaces. */
/* Whether an instruction writes its first operand (a register or a vector of them). */
bool emu_writes_first(const EmuIns *in) {
    return in->nops > 0 && in->op != EMU_OP_ST && in->op != EMU_OP_RED && in->op != EMU_OP_BRA &&
           !((in->op == EMU_OP_BAR || in->op == EMU_OP_BARRIER) && !(in->flags & EMU_F(REDOP))) && in->op != EMU_OP_BAR_WARP &&
           in->op != EMU_OP_CP_ASYNC && in->op != EMU_OP_CP_ASYNC_WAIT && in->op != EMU_OP_CALL &&
           in->op != EMU_OP_PREFETCH && in->op != EMU_OP_PREFETCHU && in->op != EMU_OP_PMEVENT && in->op != EMU_OP_NANOSLEEP &&
           in->op != EMU_OP_FENCE &&
           in->op != EMU_OP_STMATRIX && in->op != EMU_OP_WMMA_STORE && in->op != EMU_OP_SETMAXNREG && in->op != EMU_OP_CP_BULK &&
           in->op != EMU_OP_CP_BULK_TENSOR && in->op != EMU_OP_CP_RED_BULK && in->op != EMU_OP_CP_RED_BULK_TENSOR &&
           in->op != EMU_OP_ST_ASYNC && in->op != EMU_OP_RED_ASYNC &&
           in->op != EMU_OP_CP_BULK_WAIT && in->op != EMU_OP_WGMMA_WAIT &&
           in->op != EMU_OP_TENSORMAP_REPLACE && in->op != EMU_OP_TENSORMAP_CP && in->op != EMU_OP_CLUSTER_BAR &&
           in->op != EMU_OP_GRIDDEP && in->op != EMU_OP_CP_BULK_PREFETCH && in->op != EMU_OP_CP_ASYNC_MBAR &&
           in->op != EMU_OP_DISCARD && in->op != EMU_OP_APPLYPRIORITY &&
           !(in->op == EMU_OP_MBARRIER && (in->mode == EMU_MODE_MB_INIT || in->mode == EMU_MODE_MB_EXPECT_TX ||
                                           in->mode == EMU_MODE_MB_COMPLETE_TX || in->mode == EMU_MODE_MB_INVAL));
}

bool emu_check_limits(Parser *ps, EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    uint64_t v;
    if ((in->op == EMU_OP_SETP || in->op == EMU_OP_SET) && in->cmp == EMU_CMP_NONE) /* it compared as .eq */
        return perr(ps, line, "'%.*s' needs a comparison: .eq, .ne, .lt, .le, .gt, .ge (.lo .ls .hi .hs unsigned; .equ .neu "
                    ".ltu .leu .gtu .geu .num .nan floats)", (int)len, s);
    bool bar = in->op == EMU_OP_BAR || in->op == EMU_OP_BARRIER;
    unsigned b0 = bar && (in->flags & EMU_F(REDOP)) ? 1 : 0; /* bar.red: d, a [, b], c */
    unsigned bn = bar ? in->nops - b0 - b0 : 0;             /* a and b present */
    if (bar && bn >= 1 && const_value(ps, in->o[b0], &v) && v > EMU_MAX_BAR_ID)
        return perr(ps, line, "barrier number %" PRIu64 " in '%.*s' is out of range: 0..%d", v, (int)len, s, EMU_MAX_BAR_ID);
    if (bar && bn >= 2 && const_value(ps, in->o[b0 + 1], &v) && (v == 0 || v % 32 || v > EMU_MAX_BLOCK_THREADS))
        return perr(ps, line, "barrier thread count %" PRIu64 " in '%.*s' is not a multiple of 32 in 32..%u", v, (int)len, s,
                    EMU_MAX_BLOCK_THREADS);
    bool write = in->op == EMU_OP_ST || in->op == EMU_OP_ATOM || in->op == EMU_OP_RED;
    /* the spaces ptxas refuses ("State space incorrect", "Modifier '.nc' requires .global space"); they loaded */
    if ((in->op == EMU_OP_ATOM || in->op == EMU_OP_RED) && in->space == EMU_SP_LOCAL)
        return perr(ps, line, "'%.*s': atom and red take .global, .shared or generic addresses, not .local", (int)len, s);
    if (in->op == EMU_OP_LDU && in->space != EMU_SP_GLOBAL && in->space != EMU_SP_GENERIC)
        return perr(ps, line, "'%.*s': ldu reads .global or generic addresses, not .%s", (int)len, s, emu_space_name(in->space));
    if (in->op == EMU_OP_LD && (in->flags & EMU_F(NC)) && in->space != EMU_SP_GLOBAL)
        return perr(ps, line, "'%.*s': .nc is for ld.global (ld.global.nc), not %s%s", (int)len, s, in->space == EMU_SP_GENERIC ? "generic addresses" : ".",
                    in->space == EMU_SP_GENERIC ? "" : emu_space_name(in->space));
    if (write && in->space == EMU_SP_CONST)
        return perr(ps, line, "'%.*s' writes to the .const state space, which is read-only", (int)len, s);
    if (write && in->space == EMU_SP_PARAM) {
        unsigned ai = in->op == EMU_OP_ATOM ? 1 : 0;
        int32_t sym = in->ok[ai] == EMU_OK_ADDR ? const_sym(ps, in->o[ai]) : -1;
        if (in->op != EMU_OP_ST || (ps->fn && ps->fn->is_entry && sym >= 0 && ps->m->syms[sym].space == EMU_SP_PARAM &&
                                      ps->m->syms[sym].addr < EMU_PARAM_FRAME))
            return perr(ps, line, "'%.*s' writes to a kernel parameter: the .param space of an entry is read-only", (int)len, s);
    }
    return true;
}

/* The video instructions' types and modifiers (PTX ISA, video instructions; what ptxas takes):
 *   vadd vsub vabsdiff vmin vmax: .dtype.atype.btype [.sat] [.add|.min|.max];
 *   vshl vshr: .dtype.atype.u32 [.sat] (.clamp|.wrap) [.add|.min|.max];
 *   vmad: [.po] .dtype.atype.btype [.sat] [.shr7|.shr15];
 *   vset: .atype.btype.cmp [.add|.min|.max] (cmp .eq .ne .lt .le .gt .ge);
 *   vop2, vop4: .dtype.atype.btype [.sat] [.add], not .sat with .add; vset2, vset4: .atype.btype.cmp [.add];
 * every type .u32 or .s32.  The secondary operations are decoded (parse_mods.c) for the ops that take them.  SIMD
 * selectors not given are the identity: a's lanes from a (.h10, .b3210), b's from b (.h32, .b7654), every lane of d. */
static bool check_video_mods(Parser *ps, EmuIns *in, unsigned ntypes, uint32_t line, const char *s, uint32_t len) {
    bool set = EMU_IS_VSET(in->op), simd = EMU_IS_VIDEO_SIMD(in->op), shift = in->op == EMU_OP_VSHL || in->op == EMU_OP_VSHR;
    bool ok = set ? ntypes == 2 && in->cmp >= EMU_CMP_EQ && in->cmp <= EMU_CMP_GE
                  : ntypes == 3 && (in->ty3 == EMU_T_U32 || (in->ty3 == EMU_T_S32 && !shift));
    ok = ok && (in->ty == EMU_T_U32 || in->ty == EMU_T_S32) && (in->ty2 == EMU_T_U32 || in->ty2 == EMU_T_S32);
    if (!ok)
        return perr(ps, line, "'%.*s' needs %s, each .u32 or .s32", (int)len, s,
                    set ? ".atype.btype and a comparison (.eq .ne .lt .le .gt .ge)"
                    : shift ? ".dtype.atype.u32 (b is unsigned)" : ".dtype.atype.btype");
    uint32_t flags = in->flags, allowed = set ? 0 : EMU_F(SAT);
    if (shift) {
        if (!(flags & (EMU_F(CLAMP) | EMU_F(WRAP))) || (flags & EMU_F(CLAMP) && flags & EMU_F(WRAP)))
            return perr(ps, line, "'%.*s' needs one of .clamp and .wrap (what happens to shifts past 32)", (int)len, s);
        allowed |= EMU_F(CLAMP) | EMU_F(WRAP);
    }
    if ((flags & ~allowed) || in->rnd || in->space)
        return perr(ps, line, "unsupported modifier in '%.*s' (%s)", (int)len, s,
                    set ? "vset takes .atype.btype.cmp and .add, .min or .max" : shift ? ".sat, .clamp/.wrap, .add/.min/.max"
                    : in->op == EMU_OP_VMAD ? ".po, .sat, .shr7/.shr15" : simd ? ".sat or .add" : ".sat, .add/.min/.max");
    if (simd && (flags & EMU_F(SAT)) && in->mode == EMU_MODE_AADD)
        return perr(ps, line, "'%.*s': .sat and .add exclude each other (the lanes' sum is not saturated)", (int)len, s);
    if (simd) {
        bool four = EMU_VIDEO_LANES(in->op) == 4;
        in->vsel.asel = four ? 0 | 1 << 3 | 2 << 6 | 3 << 9 : 0 | 1 << 2;
        in->vsel.bsel = four ? 4 | 5 << 3 | 6 << 6 | 7 << 9 : 2 | 3 << 2;
        in->vsel.dsel = four ? 0xF : 0x3;
    }
    return true;
}

/* ---- the types an opcode takes ----
 * Of the 16- to 64-bit scalar types and .pred (the types checked: f16, bf16, the packed and the 8-bit ones have
 * their own checks where they have any), those ptxas of CUDA 13 takes for each opcode, tried type by type (the ISA
 * lists the same).  add.b32, min.b32, setp.lt.b32, shl.u32, popc.u16, mul.lo.f32 or add.pred loaded before, and
 * ran as the signedness or the operation the emulator chose. */
#define TB(w) (UINT64_C(1) << EMU_T_B##w)
#define TU(w) (UINT64_C(1) << EMU_T_U##w)
#define TS(w) (UINT64_C(1) << EMU_T_S##w)
#define T_B (TB(16) | TB(32) | TB(64))
#define T_U (TU(16) | TU(32) | TU(64))
#define T_S (TS(16) | TS(32) | TS(64))
#define T_F ((UINT64_C(1) << EMU_T_F32) | (UINT64_C(1) << EMU_T_F64))
#define T_P (UINT64_C(1) << EMU_T_PRED)
#define T_CHECKED (T_B | T_U | T_S | T_F | T_P)

/* The checked types opcode in takes (with its modifiers: mul and mad's .lo/.hi/.wide, setp's comparison). */
static uint64_t op_types(const EmuIns *in) {
    bool intmul = in->flags & (EMU_F(LO) | EMU_F(HI) | EMU_F(WIDE));
    switch (in->op) {
    case EMU_OP_ADD: case EMU_OP_SUB: case EMU_OP_MIN: case EMU_OP_MAX: return T_U | T_S | T_F;
    case EMU_OP_MUL: case EMU_OP_MAD: return intmul ? T_U | T_S : T_F; /* an integer mul/mad names its half: .lo .hi .wide */
    case EMU_OP_ABS: case EMU_OP_NEG: return T_S | T_F;
    case EMU_OP_DIV: return T_U | T_S | T_F;
    case EMU_OP_REM: return T_U | T_S;
    case EMU_OP_AND: case EMU_OP_OR: case EMU_OP_XOR: case EMU_OP_NOT: return T_B | T_P;
    case EMU_OP_CNOT: case EMU_OP_SHL: return T_B;
    case EMU_OP_SHR: return T_B | T_U | T_S;
    case EMU_OP_SELP: return T_B | T_U | T_S | T_F;
    case EMU_OP_MOV: return T_CHECKED;
    case EMU_OP_POPC: case EMU_OP_CLZ: case EMU_OP_BREV: return TB(32) | TB(64);
    case EMU_OP_BFE: return TU(32) | TU(64) | TS(32) | TS(64);
    case EMU_OP_BFI: return TB(32) | TB(64);
    case EMU_OP_PRMT: case EMU_OP_SHF: return TB(32);
    case EMU_OP_MUL24: case EMU_OP_MAD24: return TU(32) | TS(32);
    case EMU_OP_SAD: return T_U | T_S;
    case EMU_OP_BFIND: return TU(32) | TU(64) | TS(32) | TS(64);
    case EMU_OP_FMA: case EMU_OP_SQRT: case EMU_OP_RCP: case EMU_OP_RSQRT: case EMU_OP_COPYSIGN: case EMU_OP_TESTP: return T_F;
    case EMU_OP_EX2: case EMU_OP_LG2: case EMU_OP_SIN: case EMU_OP_COS: case EMU_OP_TANH: return UINT64_C(1) << EMU_T_F32;
    case EMU_OP_NANOSLEEP: return TU(32);
    case EMU_OP_ACTIVEMASK: return TB(32); /* activemask.s16: "Unexpected instruction types" (it loaded) */
    case EMU_OP_SETP:
        switch (in->cmp) {
        case EMU_CMP_NONE: return T_CHECKED; /* emu_check_limits: a comparison is needed */
        case EMU_CMP_EQ: case EMU_CMP_NE: return T_B | T_U | T_S | T_F;
        case EMU_CMP_LT: case EMU_CMP_LE: case EMU_CMP_GT: case EMU_CMP_GE: return T_U | T_S | T_F;
        case EMU_CMP_LO: case EMU_CMP_LS: case EMU_CMP_HI: case EMU_CMP_HS: return T_U;
        default: return T_F; /* equ .. geu, num, nan */
        }
    default: return T_CHECKED;
    }
}

static bool check_op_type(Parser *ps, const EmuIns *in, unsigned ntypes, uint32_t line, const char *s, uint32_t len) {
    uint64_t ok = op_types(in);
    /* an opcode of integer and bit types only takes none of the others either (clz.f16, and.bf16x2: ptxas's
     * "Unexpected instruction types specified"; clz.f16 loaded and counted the register's bits) */
    bool intonly = ok != T_CHECKED && !(ok & T_F) && emu_type_size(in->ty) >= 2 && emu_type_size(in->ty) <= 8 &&
                   in->op != EMU_OP_SETP &&
                   in->op != EMU_OP_MUL && in->op != EMU_OP_MAD; /* fp8, .b128, setp's and mul's half types: their own checks */
    if (ntypes != 1 || in->ty >= 64 || (!(T_CHECKED >> in->ty & 1) && !intonly)) return true;
    if (ok >> in->ty & 1) return true;
    char list[160] = "";
    size_t n = 0;
    for (unsigned t = 0; t < 64 && t < EMU_T_COUNT && n < sizeof list - 12; t++)
        if (ok >> t & 1) n += (size_t)snprintf(list + n, sizeof list - n, "%s.%s", n ? " " : "", emu_type_name(t));
    return perr(ps, line, "'%.*s': %s takes %s here, not .%s", (int)len, s, emu_op_name(in->op), list, emu_type_name(in->ty));
}

/* The arithmetic on .f16 .bf16 and their pairs (ptxas of CUDA 13, each of add sub mul fma mad min max neg abs div rcp sqrt
 * rsqrt sin cos lg2 ex2 tanh copysign tried with each rounding, .ftz, .sat, .relu, .oob, .NaN, .xorsign.abs; the ISA's
 * half precision instructions say the same): add sub mul round .rn or not at all; fma rounds .rn (and .rz for .bf16);
 * .ftz and .sat are .f16's, not .bf16's (ex2.approx.bf16 needs .ftz); mad, div, rcp, sqrt, rsqrt, sin, cos, lg2,
 * copysign and testp take none of these types.  sqrt.rn.f16, add.rz.f16 and fma.rn.sat.bf16 loaded and ran. */
static bool check_half_type(Parser *ps, const EmuIns *in, unsigned ntypes, uint32_t line, const char *s, uint32_t len) {
    unsigned t = in->ty;
    /* .cc is of 32- and 64-bit integers ("Modifier '.cc' applies only to add integer types": add.cc.u16, addc.cc.u16,
     * mad.lo.cc.u16 and add.cc.u16x2 loaded); .wide of 16- and 32-bit ones (mul.wide.u64 loaded) */
    if ((in->flags & EMU_F(CC)) && emu_type_size(t) != 4 && emu_type_size(t) != 8)
        return perr(ps, line, "'%.*s': .cc is for 32- and 64-bit integer types, not .%s", (int)len, s, emu_type_name(t));
    if ((in->flags & EMU_F(WIDE)) && (in->op == EMU_OP_MUL || in->op == EMU_OP_MAD) && emu_type_size(t) == 8)
        return perr(ps, line, "'%.*s': .wide is for 16- and 32-bit types (the product of two .%s has no wider type)", (int)len, s,
                    emu_type_name(t));
    /* the packed 16-bit integers are add's, min's and max's (ptxas: "Unexpected instruction types specified" for sub,
     * mul, mad, abs, neg and setp on them); sub.u16x2 loaded and ran */
    if ((t == EMU_T_U16X2 || t == EMU_T_S16X2) && !(in->flags & EMU_F(SAT)) && in->op != EMU_OP_ADD && in->op != EMU_OP_MIN &&
        in->op != EMU_OP_MAX) /* .sat: the integer .sat rule (check_flag_ops) says which forms take it */
        return perr(ps, line, "'%.*s': %s takes no .%s (add, min and max take it)", (int)len, s, emu_op_name(in->op), emu_type_name(t));
    if (ntypes != 1 || (t != EMU_T_F16 && t != EMU_T_F16X2 && t != EMU_T_BF16 && t != EMU_T_BF16X2)) return true;
    bool bf = t == EMU_T_BF16 || t == EMU_T_BF16X2, ftz = in->flags & EMU_F(FTZ), sat = in->flags & EMU_F(SAT);
    const char *why = NULL;
    switch (in->op) {
    case EMU_OP_MAD: case EMU_OP_DIV: case EMU_OP_RCP: case EMU_OP_SQRT: case EMU_OP_RSQRT: case EMU_OP_SIN: case EMU_OP_COS:
    case EMU_OP_LG2: case EMU_OP_COPYSIGN: case EMU_OP_TESTP:
        why = "takes no .f16, .bf16 or pair type (.f32 and .f64 do it)";
        break;
    case EMU_OP_ADD: case EMU_OP_SUB: case EMU_OP_MUL:
        if (in->rnd && in->rnd != EMU_RND_RN) why = "rounds .rn (or takes no rounding) on these types";
        else if (bf && (ftz || sat)) why = "takes no .ftz or .sat on .bf16 types";
        break;
    case EMU_OP_FMA:
        if (in->rnd != EMU_RND_RN && !(bf && in->rnd == EMU_RND_RZ)) why = "rounds .rn (.bf16 types: .rn or .rz)";
        else if (bf && (ftz || sat)) why = "takes no .ftz or .sat on .bf16 types";
        break;
    case EMU_OP_MIN: case EMU_OP_MAX: case EMU_OP_NEG: case EMU_OP_ABS:
        if (bf && ftz) why = "takes no .ftz on .bf16 types";
        break;
    case EMU_OP_EX2:
        if (bf && !ftz) why = "needs .approx.ftz on .bf16 types";
        break;
    default: break;
    }
    return !why || perr(ps, line, "'%.*s': %s %s", (int)len, s, emu_op_name(in->op), why);
}

/* barrier.cluster.arrive[.release|.relaxed][.aligned] and barrier.cluster.wait[.acquire][.aligned], each modifier once
 * (ptxas: "Illegal modifier '.acquire' for instruction 'barrier.cluster.arrive'", "Duplicate .release modifier"); any
 * other modifier loaded and was ignored (barrier.cluster.wait.relaxed waited with acquire semantics). */
static bool check_cluster_bar(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    bool arrive = in->mode == EMU_MODE_MB_ARRIVE, sem = false, aligned = false;
    Mod m[EMU_MAX_MODS];
    unsigned nm = split_mods(s, len, m, EMU_MAX_MODS);
    for (unsigned k = 1; k < nm; k++) { /* after "cluster" */
        const char *w = m[k].p;
        uint32_t n = m[k].n;
        bool is_sem = arrive ? (n == 7 && (!memcmp(w, "release", 7) || !memcmp(w, "relaxed", 7))) : (n == 7 && !memcmp(w, "acquire", 7));
        bool is_op = n == (arrive ? 6u : 4u) && !memcmp(w, arrive ? "arrive" : "wait", n);
        if (is_sem && !sem) sem = true;
        else if (n == 7 && !memcmp(w, "aligned", 7) && !aligned) aligned = true;
        else if (!is_op)
            return perr(ps, line, "'%.*s': barrier.cluster.%s takes %s and .aligned, each at most once, not .%.*s", (int)len, s,
                        arrive ? "arrive" : "wait", arrive ? ".release or .relaxed" : ".acquire", (int)n, w);
    }
    return true;
}

/* cvt's rounding between the scalar integer and float types (ptxas of CUDA 13, tried pair by pair; the ISA's cvt
 * page says the same): a float to an integer needs an integer rounding (.rni .rzi .rmi .rpi), an integer to a float and
 * a float to a narrower float a float rounding (.rn .rz .rm .rp), a float to the same float takes an integer rounding
 * or none, bf16 to a wider float a float rounding or none (ptxas takes it), and the rest (integers to integers,
 * floats to wider floats) none.  Without the rounding it needs the
 * emulator rounded as it chose (cvt.u32.f32 truncated, cvt.f32.f64 rounded to nearest). */
static bool cvt_scalar(unsigned t) {
    return (t >= EMU_T_U8 && t <= EMU_T_S64) || t == EMU_T_F16 || t == EMU_T_BF16 || t == EMU_T_F32 || t == EMU_T_F64;
}

/* cvt with a .tf32, f8 or pair type takes these forms only (ptxas of CUDA 13, every pair of .f32 .f16 .bf16 .f64 .tf32
 * .e4m3 .e5m2 .e4m3x2 .e5m2x2 .f16x2 .bf16x2 .u8 .s32 tried with each rounding, .relu and .satfinite):
 *   cvt.rna[.satfinite].tf32.f32, cvt.rn|rz[.relu][.satfinite].tf32.f32 (sm_90, .satfinite sm_100: the target gate's);
 *   cvt.rn.satfinite[.relu].e4m3x2|e5m2x2.f32 d, a, b and .f16x2 d, a;  cvt.rn[.relu].f16x2.e4m3x2|e5m2x2;
 *   cvt.rn|rz[.relu][.satfinite].f16x2|bf16x2.f32 d, a, b (and the rest of those pairs' checks above).
 * The scalar .e4m3/.e5m2, a .tf32 source and the other pairs ("Unexpected instruction types specified for 'cvt'"),
 * cvt.tf32.f32 without a rounding ("Rounding modifier required") and cvt.rz.satfinite.e4m3x2.f32 ("Illegal rounding
 * modifier") loaded; cvt.f32.e4m3 and cvt.f16.tf32 ran as conversions of their bits. */
static bool check_cvt_packed(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    unsigned d = in->ty, a = in->ty2;
    bool relu = in->flags & EMU_F(RELU), satf = in->flags & EMU_F(SATFINITE), rn_rz = in->rnd == EMU_RND_RN || in->rnd == EMU_RND_RZ;
    bool f8x2_d = d == EMU_T_E4M3X2 || d == EMU_T_E5M2X2, f8x2_a = a == EMU_T_E4M3X2 || a == EMU_T_E5M2X2, ok;
    if (d == EMU_T_TF32 && a == EMU_T_F32) ok = (in->rnd == EMU_RND_RNA && !relu) || rn_rz;
    else if (f8x2_d && (a == EMU_T_F32 || a == EMU_T_F16X2)) ok = in->rnd == EMU_RND_RN && satf;
    else if (d == EMU_T_F16X2 && f8x2_a) ok = in->rnd == EMU_RND_RN && !satf;
    else ok = (d == EMU_T_F16X2 || d == EMU_T_BF16X2) && a == EMU_T_F32;
    if (!ok)
        return perr(ps, line, "'%.*s': not a form of cvt (with .tf32, f8 and pair types: cvt.rna[.satfinite].tf32.f32, "
                    "cvt.rn|rz[.relu][.satfinite].tf32.f32, cvt.rn.satfinite[.relu].e4m3x2|e5m2x2.f32|f16x2, "
                    "cvt.rn[.relu].f16x2.e4m3x2|e5m2x2, cvt.rn|rz[.relu][.satfinite].f16x2|bf16x2.f32)", (int)len, s);
    return true;
}

static bool check_cvt_rounding(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    unsigned d = in->ty, a = in->ty2;
    if (in->rnd == EMU_RND_RNA && d != EMU_T_TF32)
        return perr(ps, line, "'%.*s': .rna is cvt.rna.tf32.f32's rounding only", (int)len, s);
    /* .ftz is the scalar conversions' (cvt.rn.ftz.f16x2.f32, cvt.rna.ftz.tf32.f32: "Illegal modifier '.ftz'") */
    if ((in->flags & EMU_F(FTZ)) && (!cvt_scalar(d) || !cvt_scalar(a)))
        return perr(ps, line, "'%.*s': .ftz is for scalar conversions to or from .f32, not .%s from .%s", (int)len, s,
                    emu_type_name(d), emu_type_name(a));
    bool df = emu_type_kind(d) == EMU_K_F, af = emu_type_kind(a) == EMU_K_F;
    /* .relu clamps a float result (cvt.rzi.relu.s32.f32: "Unexpected instruction types"; it loaded) */
    if ((in->flags & EMU_F(RELU)) && !df)
        return perr(ps, line, "'%.*s': .relu is for conversions to a float type (.f16, .bf16, their pairs, fp8 pairs), not .%s",
                    (int)len, s, emu_type_name(d));
    /* .relu and .satfinite between these types are the f32 to f16 or bf16 (or pair) conversions', rounded .rn or .rz
     * (ptxas: "Unexpected instruction types", "Illegal rounding modifier", "'.satfinite' cannot be combined"); the
     * pairs from f32 round .rn or .rz; .sat is not bf16's ("Illegal modifier '.sat'").  They ran: cvt.relu.f32.f16
     * clamped at zero, cvt.rm.f16x2.f32 rounded down. */
    bool pair = d == EMU_T_F16X2 || d == EMU_T_BF16X2;
    if (cvt_scalar(a) && af && (pair || (cvt_scalar(d) && df))) {
        bool rn_rz = in->rnd == EMU_RND_RN || in->rnd == EMU_RND_RZ;
        bool to_half = a == EMU_T_F32 && (pair || d == EMU_T_F16 || d == EMU_T_BF16);
        if ((in->flags & (EMU_F(RELU) | EMU_F(SATFINITE))) && !(to_half && rn_rz))
            return perr(ps, line, "'%.*s': .relu and .satfinite are for .rn or .rz conversions of .f32 to .f16, .bf16 or their pairs",
                        (int)len, s);
        if (pair && a == EMU_T_F32 && !rn_rz)
            return perr(ps, line, "'%.*s': a pair is made from .f32 rounded .rn or .rz", (int)len, s);
    }
    if ((in->flags & EMU_F(SAT)) && (d == EMU_T_BF16 || a == EMU_T_BF16))
        return perr(ps, line, "'%.*s': .sat is not for conversions to or from .bf16", (int)len, s);
    if (!cvt_scalar(d) || !cvt_scalar(a)) return check_cvt_packed(ps, in, line, s, len); /* tf32, fp8, packed pairs */
    /* .ftz: where an f32 is converted or made (ptxas: "Modifier '.ftz' does not apply to this type of convert") */
    if ((in->flags & EMU_F(FTZ)) && d != EMU_T_F32 && a != EMU_T_F32)
        return perr(ps, line, "'%.*s': .ftz needs a .f32 source or destination", (int)len, s);
    /* integer .sat: only where the destination's range does not hold the source's (cvt.sat.u64.u32 is refused) */
    if ((in->flags & EMU_F(SAT)) && !df && !af) {
        bool ds = emu_type_kind(d) == EMU_K_S, as = emu_type_kind(a) == EMU_K_S;
        unsigned dsz = emu_type_size(d), asz = emu_type_size(a);
        bool holds = ds == as ? dsz >= asz : ds && dsz > asz;
        if (holds) return perr(ps, line, "'%.*s': .sat where .%s holds every .%s (nothing to saturate)", (int)len, s,
                               emu_type_name(d), emu_type_name(a));
    }
    bool irnd = in->rnd >= EMU_RND_RNI, frnd = in->rnd && !irnd;
    const char *need = NULL; /* what it needs, when it lacks it */
    if (df && af && d != a && emu_type_size(d) == emu_type_size(a)) /* f16 <-> bf16: a float rounding or none */
        return !irnd || perr(ps, line, "'%.*s' needs a float rounding (.rn .rz .rm .rp) or none: .f16 and .bf16 are floats", (int)len, s);
    if (af && !df) need = irnd ? NULL : "an integer rounding (.rni .rzi .rmi .rpi): a float to an integer";
    else if (!af && df) need = frnd ? NULL : "a float rounding (.rn .rz .rm .rp): an integer to a float";
    else if (af && df && emu_type_size(d) < emu_type_size(a)) need = frnd ? NULL : "a float rounding (.rn .rz .rm .rp): a float to a narrower one";
    else if (af && df && d == a) need = frnd ? "no float rounding (.rni .rzi .rmi .rpi round to an integral value, or none)" : NULL;
    else if (a == EMU_T_BF16 && df) need = in->rnd && !frnd ? "a float rounding (.rn .rz .rm .rp) or none" : NULL; /* ptxas takes one */
    else need = in->rnd ? "no rounding: nothing to round" : NULL; /* integers, and a float to a wider one */
    return !need || perr(ps, line, "'%.*s' needs %s", (int)len, s, need);
}

/* Rounding, .approx/.full, .ftz, .sat and .NaN on the scalar arithmetic of the integer types, .f32 and .f64 (ptxas of
 * CUDA 13, tried form by form; the f16 and bf16 forms have rules of their own and are not checked here).  Without the
 * rounding an opcode needs the emulator rounded as it chose (div.f32 and fma.f32 to nearest, sqrt.f64 on the host), and
 * a modifier the type does not take (add.rn.u32, add.sat.f64, fma.rn.ftz.f64, max.NaN.f64) did nothing. */
static bool check_float_mods(Parser *ps, const EmuIns *in, unsigned ntypes, uint32_t line, const char *s, uint32_t len) {
    unsigned op = in->op, t = in->ty;
    bool arith = op == EMU_OP_ADD || op == EMU_OP_SUB || op == EMU_OP_MUL || op == EMU_OP_MAD || op == EMU_OP_FMA ||
                 op == EMU_OP_DIV || op == EMU_OP_REM || op == EMU_OP_MIN || op == EMU_OP_MAX || op == EMU_OP_ABS ||
                 op == EMU_OP_NEG || op == EMU_OP_SQRT || op == EMU_OP_RCP || op == EMU_OP_RSQRT || op == EMU_OP_EX2 ||
                 op == EMU_OP_LG2 || op == EMU_OP_SIN || op == EMU_OP_COS || op == EMU_OP_TANH || op == EMU_OP_COPYSIGN ||
                 op == EMU_OP_TESTP || op == EMU_OP_SAD || op == EMU_OP_SETP || op == EMU_OP_MUL24 || op == EMU_OP_MAD24;
    if (!arith || ntypes != 1 || t >= 64 || !(T_CHECKED >> t & 1) || t == EMU_T_PRED) return true;
    bool f32 = t == EMU_T_F32, f64 = t == EMU_T_F64, fl = f32 || f64;
    uint32_t fl_ = in->flags;
    bool rnd = in->rnd != EMU_RND_NONE, frnd = in->rnd >= EMU_RND_RN && in->rnd <= EMU_RND_RP;
    bool approx = fl_ & EMU_F(APPROX), full = fl_ & EMU_F(FULL), ftz = fl_ & EMU_F(FTZ);
    bool takes_rnd = fl && (op == EMU_OP_ADD || op == EMU_OP_SUB || op == EMU_OP_MUL || op == EMU_OP_MAD || op == EMU_OP_FMA ||
                            op == EMU_OP_DIV || op == EMU_OP_SQRT || op == EMU_OP_RCP);
    if (rnd && !takes_rnd)
        return perr(ps, line, "'%.*s': %s takes no rounding modifier%s", (int)len, s, emu_op_name(op),
                    fl ? "" : " (rounding is for floating-point types)");
    if (rnd && !frnd) return perr(ps, line, "'%.*s': the rounding of %s is .rn, .rz, .rm or .rp", (int)len, s, emu_op_name(op));
    bool approx_ok = f32 ? op == EMU_OP_DIV || op == EMU_OP_SQRT || op == EMU_OP_RCP || op == EMU_OP_RSQRT || op == EMU_OP_EX2 ||
                               op == EMU_OP_LG2 || op == EMU_OP_SIN || op == EMU_OP_COS || op == EMU_OP_TANH
                         : f64 && (op == EMU_OP_RSQRT || (op == EMU_OP_RCP && ftz));
    bool approx_only = op == EMU_OP_RSQRT || op == EMU_OP_EX2 || op == EMU_OP_LG2 || op == EMU_OP_SIN || op == EMU_OP_COS ||
                       op == EMU_OP_TANH;
    if ((approx && !approx_ok) || (full && !(f32 && op == EMU_OP_DIV)))
        return perr(ps, line, "'%.*s': %s.%s is not an instruction%s", (int)len, s, emu_op_name(op), approx ? "approx" : "full",
                    op == EMU_OP_RCP && f64 ? " (rcp.approx.f64 needs .ftz)" : "");
    if (approx_only && !approx) return perr(ps, line, "'%.*s' needs .approx", (int)len, s);
    bool needs_rnd = fl && (op == EMU_OP_FMA || (op == EMU_OP_MAD && !(fl_ & (EMU_F(LO) | EMU_F(HI) | EMU_F(WIDE)))) ||
                            op == EMU_OP_DIV || op == EMU_OP_SQRT || op == EMU_OP_RCP);
    if (needs_rnd && (int)rnd + (int)approx + (int)full != 1)
        return perr(ps, line, "'%.*s' needs %s", (int)len, s,
                    (op == EMU_OP_DIV && f32) ? "one of a rounding (.rn .rz .rm .rp), .approx and .full"
                    : approx_ok ? "one of a rounding (.rn .rz .rm .rp) and .approx" : "a rounding modifier (.rn .rz .rm .rp)");
    /* .ftz: f32 only (and rcp.f64, rsqrt.approx.f64); never on copysign, testp */
    bool ftz_ok = (f32 && op != EMU_OP_COPYSIGN && op != EMU_OP_TESTP) || (f64 && (op == EMU_OP_RCP || op == EMU_OP_RSQRT));
    if (ftz && !ftz_ok) return perr(ps, line, "'%.*s': %s takes no .ftz with .%s", (int)len, s, emu_op_name(op), emu_type_name(t));
    if ((fl_ & EMU_F(SAT)) && f64) return perr(ps, line, "'%.*s': .sat is not allowed on .f64", (int)len, s);
    if ((fl_ & (EMU_F(NANP) | EMU_F(XORSIGN))) && f64)
        return perr(ps, line, "'%.*s': .NaN and .xorsign are not allowed on .f64", (int)len, s);
    return true;
}

/* Rounding, .ftz, .sat, .NaN, .xorsign and .relu on the opcodes that take none of them (ptxas: "Illegal rounding
 * modifier", "Illegal modifier"): mov.rn, selp.ftz, ld.ftz, and.sat, min.sat.f32, div.rn.sat, max.NaN.s32, add.relu,
 * min.relu.f16 loaded and ran as if the modifier were absent. */
static bool check_flag_ops(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    unsigned op = in->op, t = in->ty;
    uint32_t fl = in->flags;
    bool half = t == EMU_T_F16 || t == EMU_T_F16X2 || t == EMU_T_BF16 || t == EMU_T_BF16X2;
    bool rnd_op = op == EMU_OP_ADD || op == EMU_OP_SUB || op == EMU_OP_MUL || op == EMU_OP_MAD || op == EMU_OP_FMA ||
                  op == EMU_OP_DIV || op == EMU_OP_RCP || op == EMU_OP_SQRT || op == EMU_OP_CVT;
    /* the f64 tensor-core forms take a rounding too (wmma.mma...m8n8k4.f64.f64.f64.f64.rn: nvcc's) */
    if (in->rnd && !rnd_op && op != EMU_OP_MMA && op != EMU_OP_WMMA_MMA) return perr(ps, line, "'%.*s': %s takes no rounding modifier", (int)len, s, emu_op_name(op));
    bool ftz_op = rnd_op || op == EMU_OP_RSQRT || op == EMU_OP_LG2 || op == EMU_OP_SIN || op == EMU_OP_COS || op == EMU_OP_MIN ||
                  op == EMU_OP_MAX || op == EMU_OP_ABS || op == EMU_OP_NEG || op == EMU_OP_SETP || op == EMU_OP_SET ||
                  op == EMU_OP_SLCT || (op == EMU_OP_EX2 && t != EMU_T_F16 && t != EMU_T_F16X2);
    if ((fl & EMU_F(FTZ)) && !ftz_op) return perr(ps, line, "'%.*s': %s takes no .ftz here", (int)len, s, emu_op_name(op));
    bool sat_op = op == EMU_OP_ADD || op == EMU_OP_SUB || op == EMU_OP_MUL || op == EMU_OP_MAD || op == EMU_OP_FMA ||
                  op == EMU_OP_CVT || op == EMU_OP_CVT_PACK || op == EMU_OP_MUL24 || op == EMU_OP_MAD24 || EMU_IS_VIDEO(op);
    if ((fl & EMU_F(SAT)) && !sat_op) return perr(ps, line, "'%.*s': %s takes no .sat", (int)len, s, emu_op_name(op));
    bool minmax = op == EMU_OP_MIN || op == EMU_OP_MAX;
    if ((fl & (EMU_F(NANP) | EMU_F(XORSIGN))) && (!minmax || emu_type_kind(t) != EMU_K_F))
        return perr(ps, line, "'%.*s': .NaN and .xorsign are for min and max on floating-point types", (int)len, s);
    /* .relu: min/max on .s32 and .s16x2, fma on the f16 and bf16 types, cvt (checked with cvt's forms) */
    bool relu_ok = (minmax && (t == EMU_T_S32 || t == EMU_T_S16X2)) || (op == EMU_OP_FMA && half) || op == EMU_OP_CVT;
    if ((fl & EMU_F(RELU)) && !relu_ok)
        return perr(ps, line, "'%.*s': .relu is min/max.relu on .s32 and .s16x2, fma.relu on .f16 and .bf16 (and pairs), and cvt",
                    (int)len, s);
    /* .nc is ld.global.nc's (atom.global.nc.add.u32 loaded and ran as atom: ptxas "Illegal modifier '.nc'") */
    if ((fl & EMU_F(NC)) && op != EMU_OP_LD) return perr(ps, line, "'%.*s': .nc is ld.global.nc's, %s takes none", (int)len, s, emu_op_name(op));
    return true;
}

/* The types of slct, set, ld, ldu and st, the modifiers shf, mul24 and mad24 need, and atom/red's .noftz (ptxas of
 * CUDA 13, form by form).  The emulator ran slct.b32.u32 as signed, set.lt.u32.b32 as unsigned, ld.global.f16 as a
 * .b16 load, shf.l without .clamp as .clamp, mul24 without .lo as .lo, and atom.add.f16 without .noftz as with it. */
static bool check_more_types(Parser *ps, const EmuIns *in, unsigned ntypes, uint32_t line, const char *s, uint32_t len) {
    unsigned op = in->op;
    bool ftz = in->flags & EMU_F(FTZ);
    /* mov's float types are .f32 and .f64: mov.f16, .bf16, their pairs, .tf32 and the fp8 ones loaded as .b moves
     * (ptxas: "Unexpected instruction types specified for 'mov'") */
    if (op == EMU_OP_MOV && emu_type_kind(in->ty) == EMU_K_F && in->ty != EMU_T_F32 && in->ty != EMU_T_F64)
        return perr(ps, line, "'%.*s': mov takes no .%s (its float types are .f32 and .f64; mov.b%u moves the bits)", (int)len, s,
                    emu_type_name(in->ty), emu_type_size(in->ty) * 8);
    if (op == EMU_OP_SLCT) { /* slct.dtype.s32, slct[.ftz].dtype.f32: dtype .b/.u/.s 16..64, .f32, .f64 */
        bool d_ok = in->ty < 64 && ((T_B | T_U | T_S | T_F) >> in->ty & 1);
        if (ntypes != 2 || !d_ok || (in->ty2 != EMU_T_S32 && in->ty2 != EMU_T_F32))
            return perr(ps, line, "'%.*s': slct takes .dtype.s32 or .dtype.f32 (dtype a 16- to 64-bit .b, .u or .s, .f32 or .f64)",
                        (int)len, s);
        if (ftz && in->ty2 != EMU_T_F32) return perr(ps, line, "'%.*s': .ftz needs a .f32 selector", (int)len, s);
    }
    if (op == EMU_OP_SET && ntypes == 2 && in->ty2 < 64 && (T_CHECKED >> in->ty2 & 1)) {
        /* set.cmp.dtype.stype of a 16- to 64-bit stype: dtype .u32 .s32 .f32 (or .f16, .bf16 and their pairs); stype as
         * setp's.  The f16 and bf16 stypes (set.lt.u16.f16) have rules of their own, not checked here. */
        if (in->ty < 64 && (T_CHECKED >> in->ty & 1) && in->ty != EMU_T_U32 && in->ty != EMU_T_S32 && in->ty != EMU_T_F32)
            return perr(ps, line, "'%.*s': set's destination type is .u32, .s32 or .f32, not .%s", (int)len, s, emu_type_name(in->ty));
        EmuIns cmp = *in; /* the source type against the comparison, as setp's */
        cmp.op = EMU_OP_SETP;
        cmp.ty = in->ty2;
        if (!(op_types(&cmp) >> in->ty2 & 1))
            return perr(ps, line, "'%.*s': .%s does not take this comparison (set compares as setp does)", (int)len, s,
                        emu_type_name(in->ty2));
        if (ftz && in->ty2 != EMU_T_F32) return perr(ps, line, "'%.*s': .ftz needs .f32 operands", (int)len, s);
    }
    if (op == EMU_OP_SET && ntypes == 2) {
        /* the half-precision sources: .f16 and .bf16 give .u16 .s16 .u32 .s32 or their own type (an .f16 source also
         * a .bf16), the pairs .u32 .s32 or their own type (set.lt.f32.f16, set.lt.f16.bf16, set.lt.u16.f16x2 are refused) */
        unsigned d = in->ty, a = in->ty2;
        bool pair = a == EMU_T_F16X2 || a == EMU_T_BF16X2;
        if (a == EMU_T_F16 || a == EMU_T_BF16 || pair) {
            bool ok = d == a || d == EMU_T_U32 || d == EMU_T_S32 ||
                      (!pair && (d == EMU_T_U16 || d == EMU_T_S16 || (a == EMU_T_F16 && d == EMU_T_BF16)));
            if (!ok)
                return perr(ps, line, "'%.*s': set of .%s gives %s, not .%s", (int)len, s, emu_type_name(a),
                            pair ? (a == EMU_T_F16X2 ? ".f16x2, .u32 or .s32" : ".bf16x2, .u32 or .s32")
                                 : (a == EMU_T_F16 ? ".u16, .s16, .u32, .s32, .f16 or .bf16" : ".u16, .s16, .u32, .s32 or .bf16"),
                            emu_type_name(d));
        }
    }
    if (op == EMU_OP_LD || op == EMU_OP_LDU || op == EMU_OP_ST) { /* .b8-.b128, .u8-.u64, .s8-.s64, .f32, .f64 */
        unsigned t = in->ty;
        bool ok = (t >= EMU_T_B8 && t <= EMU_T_S64) || t == EMU_T_F32 || t == EMU_T_F64;
        if (ntypes == 1 && !ok)
            return perr(ps, line, "'%.*s': %s takes .b8-.b128, .u8-.u64, .s8-.s64, .f32 and .f64, not .%s (move a .%s as "
                        "its bits, e.g. .b%u)", (int)len, s, emu_op_name(op), emu_type_name(t), emu_type_name(t),
                        8 * (emu_type_size(t) ? emu_type_size(t) : 1));
    }
    if (op == EMU_OP_SHF && !(in->flags & (EMU_F(CLAMP) | EMU_F(WRAP))))
        return perr(ps, line, "'%.*s' needs .clamp or .wrap", (int)len, s);
    if ((op == EMU_OP_MUL24 || op == EMU_OP_MAD24) && !(in->flags & (EMU_F(LO) | EMU_F(HI))))
        return perr(ps, line, "'%.*s' needs .lo or .hi", (int)len, s);
    if (op == EMU_OP_ATOM || op == EMU_OP_RED) {
        bool half = in->ty == EMU_T_F16 || in->ty == EMU_T_BF16 || in->ty == EMU_T_F16X2 || in->ty == EMU_T_BF16X2;
        bool need = half && (in->mode == EMU_MODE_AADD || in->mode == EMU_MODE_AMIN || in->mode == EMU_MODE_AMAX);
        bool has = in->xflags & EMU_XF_NOFTZ;
        if (need != has)
            return perr(ps, line, need ? "'%.*s' needs .noftz (atom and red on .f16 and .bf16 do not flush subnormals)"
                                       : "'%.*s': .noftz is for the .f16 and .bf16 add, min and max only", (int)len, s);
    }
    return true;
}

/* ld and st's cache operators and eviction priorities, as ptxas of CUDA 13 takes them (tried form by form over the
 * memory orders and state spaces): ld's operators are .ca .cg .cs .lu .cv (.global.nc: .ca .cg .cs), st's .wb .cg
 * .cs .wt; an operator is for a weak access only (not with .volatile, .relaxed, .acquire, .release) and not with an
 * .L1:: eviction priority ("Modifier '.evict_first' cannot be combined with modifier '.cg'"); the .L1:: priorities,
 * .L2::cache_hint and ld's .L2:: prefetch sizes are for .global or generic addresses, and .volatile takes only the
 * prefetch size of them; ld.global.nc takes no memory order (.weak either), and .local and .const no strong one.
 * All were hints the emulator skipped: Triton writes ld.global.cg.L1::evict_first for
 * tl.load(cache_modifier=".cg", eviction_policy="evict_first"), which ptxas refuses. */
static bool check_cache_mods(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    if (in->op != EMU_OP_LD && in->op != EMU_OP_ST) return true;
    bool ld = in->op == EMU_OP_LD, vol = false, order = false, weak = false, nc = in->flags & EMU_F(NC);
    const char *cache = NULL, *l1 = NULL, *l2 = NULL; /* the parts, for messages */
    uint32_t ncache = 0, nl1 = 0, nl2 = 0;
    Mod m[EMU_MAX_MODS];
    unsigned nm = split_mods(s, len, m, EMU_MAX_MODS);
    for (unsigned k = 0; k < nm; k++) { /* the words after "ld" or "st" */
        const char *w = m[k].p;
        uint32_t n = m[k].n;
        if (n == 2 && (!memcmp(w, "ca", 2) || !memcmp(w, "cg", 2) || !memcmp(w, "cs", 2) || !memcmp(w, "lu", 2) ||
                       !memcmp(w, "cv", 2) || !memcmp(w, "wb", 2) || !memcmp(w, "wt", 2)))
            cache = w, ncache = n;
        else if (n > 4 && !memcmp(w, "L1::", 4)) l1 = w, nl1 = n;
        else if (n > 4 && !memcmp(w, "L2::", 4) && !(n == 14 && !memcmp(w, "L2::cache_hint", 14))) l2 = w, nl2 = n;
        else if (n == 8 && !memcmp(w, "volatile", 8)) vol = true;
        else if (n == 4 && !memcmp(w, "weak", 4)) weak = true;
        else if (n == 7 && (!memcmp(w, "relaxed", 7) || !memcmp(w, "acquire", 7) || !memcmp(w, "release", 7) || !memcmp(w, "acq_rel", 7))) {
            order = true;
            if (memcmp(w, "relaxed", 7) && memcmp(w, ld ? "acquire" : "release", 7))
                return perr(ps, line, "'%.*s': %s takes .relaxed or .%s, not .%.*s", (int)len, s, ld ? "ld" : "st", ld ? "acquire" : "release", (int)n, w);
        }
    }
    bool hint = in->flags & EMU_F(CACHE_HINT);
    if (nc && (weak || vol || order))
        return perr(ps, line, "'%.*s': ld.global.nc takes no memory order (.weak, .volatile, .relaxed, .acquire)", (int)len, s);
    if ((vol || order) && (in->space == EMU_SP_LOCAL || in->space == EMU_SP_CONST))
        return perr(ps, line, "'%.*s': .volatile, .relaxed, .acquire and .release are not for .%s memory", (int)len, s, emu_space_name(in->space));
    if (cache) {
        bool ok = ld ? (nc ? memcmp(cache, "ca", 2) == 0 || memcmp(cache, "cg", 2) == 0 || memcmp(cache, "cs", 2) == 0
                           : memcmp(cache, "wb", 2) != 0 && memcmp(cache, "wt", 2) != 0)
                     : memcmp(cache, "wb", 2) == 0 || memcmp(cache, "cg", 2) == 0 || memcmp(cache, "cs", 2) == 0 ||
                           memcmp(cache, "wt", 2) == 0;
        if (!ok)
            return perr(ps, line, "'%.*s': .%.*s is no cache operator of %s (%s)", (int)len, s, (int)ncache, cache, ld ? (nc ? "ld.global.nc" : "ld") : "st",
                        ld ? (nc ? ".ca .cg .cs" : ".ca .cg .cs .lu .cv") : ".wb .cg .cs .wt");
        if (vol || order)
            return perr(ps, line, "'%.*s': a cache operator (.%.*s) is for weak accesses, not with .volatile, .relaxed, .acquire or .release",
                        (int)len, s, (int)ncache, cache);
        if (l1)
            return perr(ps, line, "'%.*s': the cache operator .%.*s cannot be combined with the eviction priority .%.*s", (int)len, s,
                        (int)ncache, cache, (int)nl1, l1);
    }
    if (!ld && l2)
        return perr(ps, line, "'%.*s': .%.*s is for ld (a prefetch size), not st", (int)len, s, (int)nl2, l2);
    /* ptxas: "Instruction 'ld' requires '.v8.b32/.v4.b64' type with '.L2::evict_last' modifier" */
    if (l2 && nl2 > 10 && !memcmp(l2, "L2::evict_", 10) && in->vec * emu_type_size(in->ty) != 32)
        return perr(ps, line, "'%.*s': ld's .%.*s is for 32-byte vectors only (.v8.b32, .v4.b64)", (int)len, s, (int)nl2, l2);
    if ((l1 || hint || l2) && in->space != EMU_SP_GLOBAL && in->space != EMU_SP_GENERIC)
        return perr(ps, line, "'%.*s': .L1:: eviction priorities, .L2::cache_hint and prefetch sizes are for .global or generic addresses",
                    (int)len, s);
    if (vol && (l1 || hint))
        return perr(ps, line, "'%.*s': .volatile takes no eviction priority nor .L2::cache_hint", (int)len, s);
    return true;
}

/* The modifiers an opcode needs, once all are decoded (decode_mods in parse.c): how many types, which
 * operation of a family, which combinations (Mod, split_mods, mod_is, mod_find: parse_int.h). */

/* fence and membar as ptxas of CUDA 13 takes them (tried modifier by modifier; the emulator skipped any modifier):
 *   fence[.sc|.acq_rel|.acquire|.release].scope, one scope of .cta .cluster .gpu .sys (no .relaxed);
 *   fence.acquire.sync_restrict::shared::cluster.cluster, fence.release.sync_restrict::shared::cta.cluster;
 *   fence.mbarrier_init.release.cluster (its words in any order: fence.release.mbarrier_init.cluster);
 *   fence.proxy.alias, fence.proxy.async[.global|.shared::cta|.shared::cluster] (no scope; not .shared nor .local);
 *   membar.cta|.gl|.sys, membar.proxy.alias.
 * The other proxy fences (tensormap::generic, async::generic) are left to their own checks. */
static bool check_fence(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    static const char *const scopes[] = {"cta", "cluster", "gpu", "sys"}, *const sems[] = {"sc", "acq_rel", "acquire", "release"};
    Mod m[12];
    unsigned n = split_mods(s, len, m, 12), nscope, nsem, nx;
    int scope = mod_find(m, n, scopes, 4, &nscope), sem = mod_find(m, n, sems, 4, &nsem);
    for (unsigned i = 0; i < n; i++) /* fence.proxy.u32.async: "Unexpected instruction types specified" (it loaded) */
        if (emu_type_find(m[i].p, m[i].n))
            return perr(ps, line, "'%.*s': %s takes no type (.%.*s)", (int)len, s, in->op == EMU_OP_MEMBAR ? "membar" : "fence",
                        (int)m[i].n, m[i].p);
    if (in->op == EMU_OP_MEMBAR) {
        static const char *const levels[] = {"cta", "gl", "sys"};
        bool ok = n == 2 && mod_is(&m[0], "proxy") && mod_is(&m[1], "alias");
        ok = ok || (n == 1 && mod_find(m, n, levels, 3, &nx) >= 0);
        return ok || perr(ps, line, "'%.*s': membar takes one level, .cta, .gl or .sys (or is membar.proxy.alias)", (int)len, s);
    }
    if (n && mod_is(&m[0], "proxy")) {
        if (n < 2 || (!mod_is(&m[1], "alias") && !mod_is(&m[1], "async"))) return true;
        static const char *const spaces[] = {"global", "shared::cta", "shared::cluster"};
        mod_find(m, n, spaces, 3, &nx);
        bool ok = n == 2 || (mod_is(&m[1], "async") && n == 3 && nx == 1);
        return ok || perr(ps, line, "'%.*s': fence.proxy.alias takes nothing more, fence.proxy.async at most one state space "
                          "(.global, .shared::cta, .shared::cluster) and no scope", (int)len, s);
    }
    static const char *const mbinit[] = {"mbarrier_init"};
    if (mod_find(m, n, mbinit, 1, &nx) >= 0) { /* its three words in any order, as ptxas reads them */
        bool ok = n == 3 && nx == 1 && nscope == 1 && scope == 1 && nsem == 1 && sem == 3;
        return ok || perr(ps, line, "'%.*s': the form is fence.mbarrier_init.release.cluster", (int)len, s);
    }
    unsigned nr = 0;
    int restrict_cluster = -1; /* sync_restrict::shared::cluster (1) or ::cta (0) */
    for (unsigned i = 0; i < n; i++) {
        if (mod_is(&m[i], "sync_restrict::shared::cluster")) restrict_cluster = 1, nr++;
        else if (mod_is(&m[i], "sync_restrict::shared::cta")) restrict_cluster = 0, nr++;
    }
    if (nscope != 1 || nsem > 1 || nr > 1 || n != nscope + nsem + nr)
        return perr(ps, line, "'%.*s': fence takes one scope (.cta .cluster .gpu .sys) after at most one of .sc, .acq_rel, .acquire, "
                    ".release (and .sync_restrict::shared::cluster or ::cta)", (int)len, s);
    if (restrict_cluster >= 0 && (scope != 1 || sem != (restrict_cluster ? 2 : 3)))
        return perr(ps, line, "'%.*s': the forms are fence.acquire.sync_restrict::shared::cluster.cluster and "
                    "fence.release.sync_restrict::shared::cta.cluster", (int)len, s);
    return true;
}

/* prefetch{.space}.level [a] as ptxas takes it: one level of .L1, .L2, .L2::evict_last, .L2::evict_normal (the two
 * priorities of the generic or .global space only) in the generic, .global or .local space; .tensormap of a generic,
 * .const or .param address.  prefetch.global.L2::evict_first, a prefetch without a level or of .shared loaded. */
static bool check_prefetch(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    static const char *const levels[] = {"L1", "L2", "L2::evict_last", "L2::evict_normal", "tensormap"};
    Mod m[8];
    unsigned n = split_mods(s, len, m, 8), nl;
    int level = mod_find(m, n, levels, 5, &nl);
    bool space_named = in->space != EMU_SP_GENERIC;
    if (nl != 1 || n != nl + space_named)
        return perr(ps, line, "'%.*s': prefetch takes one level: .L1, .L2, .L2::evict_last, .L2::evict_normal or .tensormap", (int)len, s);
    bool ok = level == 4 ? in->space == EMU_SP_GENERIC || in->space == EMU_SP_CONST || in->space == EMU_SP_PARAM
            : level >= 2 ? in->space == EMU_SP_GENERIC || in->space == EMU_SP_GLOBAL
                         : in->space == EMU_SP_GENERIC || in->space == EMU_SP_GLOBAL || in->space == EMU_SP_LOCAL;
    return ok || perr(ps, line, "'%.*s': prefetch%s is for %s addresses", (int)len, s, level == 4 ? ".tensormap" : level >= 2 ? " with an eviction priority" : "",
                      level == 4 ? "generic, .const or .param" : level >= 2 ? "generic or .global" : "generic, .global or .local");
}

/* ld and st's memory orders (ptxas of CUDA 13, tried modifier by modifier; each was a hint the emulator skipped): at
 * most one of .weak .volatile .relaxed .acquire (ld) .release (st); .relaxed, .acquire and .release take one scope
 * (.cta .cluster .gpu .sys), .weak and .volatile none; .mmio is .mmio.relaxed.sys of a generic or .global address; the
 * strong orders are for generic, .global and .shared addresses. */
static bool check_mem_order(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    static const char *const orders[] = {"weak", "volatile", "relaxed", "acquire", "release"};
    static const char *const scopes[] = {"cta", "cluster", "gpu", "sys"};
    Mod m[16];
    unsigned n = split_mods(s, len, m, 16), norder, nscope, nmmio = 0;
    int order = mod_find(m, n, orders, 5, &norder), scope = mod_find(m, n, scopes, 4, &nscope);
    for (unsigned i = 0; i < n; i++) nmmio += mod_is(&m[i], "mmio");
    if (!norder && !nscope && !nmmio) return true;
    if (norder > 1 || nscope > 1 || nmmio > 1)
        return perr(ps, line, "'%.*s': at most one memory order (.weak .volatile .relaxed .acquire .release) and one scope", (int)len, s);
    bool strong = order >= 2;
    if (strong && nscope != 1) return perr(ps, line, "'%.*s': .%s needs a scope (.cta .cluster .gpu .sys)", (int)len, s, orders[order]);
    if (!strong && nscope)
        return perr(ps, line, "'%.*s': a load or store without .relaxed, .acquire or .release takes no scope", (int)len, s);
    if (nmmio && (order != 2 || scope != 3 || (in->space != EMU_SP_GENERIC && in->space != EMU_SP_GLOBAL)))
        return perr(ps, line, "'%.*s': the form is .mmio.relaxed.sys, of a generic or .global address", (int)len, s);
    bool level = false; /* .L1:: and .L2:: words: eviction priorities, prefetch sizes, .L2::cache_hint */
    for (unsigned i = 0; i < n; i++) level = level || (m[i].n > 4 && (!memcmp(m[i].p, "L1::", 4) || !memcmp(m[i].p, "L2::", 4)));
    if (nmmio && (in->vec > 1 || level)) /* ptxas: "Modifier '.mmio' cannot be combined with modifier '.v2'" (they loaded) */
        return perr(ps, line, "'%.*s': .mmio accesses one scalar, with no vector, .L1::/.L2:: word or .L2::cache_hint", (int)len, s);
    if ((strong || order == 1) && in->space != EMU_SP_GENERIC && in->space != EMU_SP_GLOBAL && in->space != EMU_SP_SHARED)
        return perr(ps, line, "'%.*s': .%s is for generic, .global and .shared addresses", (int)len, s, orders[order]);
    return true;
}

/* The half-precision forms of selp and setp/set: selp takes no .f16, .bf16 nor their pairs ("Unexpected instruction
 * types"; selp.b16 or .b32 selects them), and the unsigned comparisons .lo .ls .hi .hs are the integers' ("Mismatch
 * between instruction type and comparison qualifier"); each loaded. */
static bool check_half_cmp(Parser *ps, const EmuIns *in, unsigned ntypes, uint32_t line, const char *s, uint32_t len) {
    unsigned t = in->op == EMU_OP_SET && ntypes == 2 ? in->ty2 : in->ty;
    bool half = t == EMU_T_F16 || t == EMU_T_BF16 || t == EMU_T_F16X2 || t == EMU_T_BF16X2;
    if (!half) return true;
    if (in->op == EMU_OP_SELP)
        return perr(ps, line, "'%.*s': selp takes no .%s (selp.b%u selects its bits)", (int)len, s, emu_type_name(t), emu_type_size(t) * 8);
    if ((in->op == EMU_OP_SETP || in->op == EMU_OP_SET) && in->cmp >= EMU_CMP_LO && in->cmp <= EMU_CMP_HS)
        return perr(ps, line, "'%.*s': .lo .ls .hi .hs compare integers, not .%s", (int)len, s, emu_type_name(t));
    return true;
}

/* The instructions that name the type of their operands and would otherwise run with none (0-byte operands: add
 * computed nothing, setp compared zeros, mov and ld moved no bytes, shifts by 64 in the sign extension): ptxas
 * wants a type on each ("Unexpected instruction types specified" or a syntax error).  Those with their own check
 * of the types (cvt, set, atom, lop3, ...) are not listed. */
static const char *type_needed(const EmuIns *in) {
    switch (in->op) {
    case EMU_OP_MOV: case EMU_OP_LD: case EMU_OP_LDU: case EMU_OP_ST: return "the type of the value it moves (.b32, .u64, .f32, ...)";
    case EMU_OP_SHFL: case EMU_OP_FNS: case EMU_OP_ACTIVEMASK: return ".b32";
    case EMU_OP_VOTE: return ".pred (.all, .any, .uni) or .b32 (.ballot)";
    case EMU_OP_MATCH: return ".b32 or .b64";
    case EMU_OP_REDUX: return ".u32, .s32 or .b32";
    case EMU_OP_NANOSLEEP: return ".u32"; /* nanosleep 100 ran; ptxas: "Unexpected instruction types specified" */
    case EMU_OP_ALLOCA: case EMU_OP_STACKSAVE: case EMU_OP_STACKRESTORE: return ".u32 or .u64";
    case EMU_OP_ADDC: case EMU_OP_SUBC: case EMU_OP_MADC: return ".u32, .s32, .u64 or .s64";
    default: break;
    }
    return op_types(in) != T_CHECKED || in->op == EMU_OP_SETP ? "one (its operands' type)" : NULL;
}

bool emu_check_mods(Parser *ps, EmuIns *in, unsigned ntypes, uint32_t line, const char *s, uint32_t len) {
    const char *need = ntypes ? NULL : type_needed(in);
    if (need) {
        uint64_t ok = op_types(in);
        char list[160] = "";
        size_t n = 0;
        for (unsigned t = 0; ok != T_CHECKED && t < 64 && t < EMU_T_COUNT && n < sizeof list - 12; t++)
            if (ok >> t & 1) n += (size_t)snprintf(list + n, sizeof list - n, "%s.%s", n ? " " : "", emu_type_name(t));
        return perr(ps, line, "'%.*s' needs a type: %s", (int)len, s, n ? list : need);
    }
    if (!check_op_type(ps, in, ntypes, line, s, len) || !check_half_type(ps, in, ntypes, line, s, len)) return false;
    if (in->op == EMU_OP_ISSPACEP && in->space == EMU_SP_GENERIC) /* ptxas: "State space modifier required" (it answered
                                                                    * for .global) */
        return perr(ps, line, "'%.*s' needs the state space it tests: isspacep.global, .shared, .shared::cluster, .local, "
                    ".const or .param", (int)len, s);
    if (!check_flag_ops(ps, in, line, s, len)) return false;
    if (!check_float_mods(ps, in, ntypes, line, s, len)) return false;
    if (!check_more_types(ps, in, ntypes, line, s, len)) return false;
    if (!check_cache_mods(ps, in, line, s, len)) return false;
    if ((in->op == EMU_OP_FENCE || in->op == EMU_OP_MEMBAR) && !check_fence(ps, in, line, s, len)) return false;
    if (in->op == EMU_OP_PREFETCH && !check_prefetch(ps, in, line, s, len)) return false;
    if ((in->op == EMU_OP_LD || in->op == EMU_OP_ST) && !check_mem_order(ps, in, line, s, len)) return false;
    if ((in->op == EMU_OP_SELP || in->op == EMU_OP_SETP || in->op == EMU_OP_SET) && !check_half_cmp(ps, in, ntypes, line, s, len)) return false;
    if ((in->op == EMU_OP_BAR || in->op == EMU_OP_BAR_WARP) && (in->flags & EMU_F(ALIGNED))) /* bar.sync.aligned loaded */
        return perr(ps, line, "'%.*s': bar takes no .aligned (barrier.sync.aligned is the aligned form)", (int)len, s);
    if (in->op == EMU_OP_CVT && ntypes != 2) return perr(ps, line, "cvt needs two types in '%.*s'", (int)len, s);
    if (in->op == EMU_OP_CVT && !check_cvt_rounding(ps, in, line, s, len)) return false;
    if (in->op == EMU_OP_SET && ntypes != 2) return perr(ps, line, "set needs two types in '%.*s'", (int)len, s);
    if (in->op == EMU_OP_CVT_PACK) {
        bool wide = in->ty == EMU_T_U16 || in->ty == EMU_T_S16;
        bool narrow = in->ty == EMU_T_U8 || in->ty == EMU_T_S8 || in->ty == EMU_T_U4 || in->ty == EMU_T_S4 || in->ty == EMU_T_U2 ||
                      in->ty == EMU_T_S2;
        if (!(in->flags & EMU_F(SAT)) || in->ty2 != EMU_T_S32 || !(wide ? ntypes == 2 : narrow && ntypes == 3 && in->ty3 == EMU_T_B32))
            return perr(ps, line, "'%.*s': cvt.pack.sat takes .u16/.s16.s32, or .u8/.s8/.u4/.s4/.u2/.s2.s32.b32", (int)len, s);
    }
    if (EMU_IS_VIDEO(in->op) && !check_video_mods(ps, in, ntypes, line, s, len)) return false;
    if ((in->flags & EMU_F(SAT)) && (in->op == EMU_OP_ADD || in->op == EMU_OP_SUB || in->op == EMU_OP_MUL || in->op == EMU_OP_MAD ||
                                     in->op == EMU_OP_MUL24 || in->op == EMU_OP_MAD24) && emu_type_kind(in->ty) != EMU_K_F) {
        /* the ISA's integer .sat: add.sat.s32, sub.sat.s32, mad.hi.sat.s32 and mad24.hi.sat.s32 only (ptxas refuses the rest) */
        bool hi_form = in->op == EMU_OP_MAD || in->op == EMU_OP_MAD24;
        if (in->ty != EMU_T_S32 || in->op == EMU_OP_MUL || in->op == EMU_OP_MUL24 || (hi_form && !(in->flags & EMU_F(HI))))
            return perr(ps, line, "'%.*s': integer .sat is add.sat.s32, sub.sat.s32, mad.hi.sat.s32 and mad24.hi.sat.s32 only", (int)len, s);
    }
    if (in->op == EMU_OP_LOP3 && in->ty != EMU_T_B32) return perr(ps, line, "'%.*s' needs .b32", (int)len, s);
    if ((in->op == EMU_OP_BMSK || in->op == EMU_OP_SZEXT) &&
        (!(in->flags & (EMU_F(CLAMP) | EMU_F(WRAP))) ||
         (in->op == EMU_OP_BMSK ? in->ty != EMU_T_B32 : (in->ty != EMU_T_U32 && in->ty != EMU_T_S32))))
        return perr(ps, line, "'%.*s' needs .clamp or .wrap and %s", (int)len, s, in->op == EMU_OP_BMSK ? ".b32" : ".u32 or .s32");
    if ((in->op == EMU_OP_DP4A || in->op == EMU_OP_DP2A) &&
        (ntypes != 2 || (in->ty != EMU_T_U32 && in->ty != EMU_T_S32) || (in->ty2 != EMU_T_U32 && in->ty2 != EMU_T_S32) ||
         (in->op == EMU_OP_DP2A && !(in->flags & (EMU_F(LO) | EMU_F(HI))))))
        return perr(ps, line, "'%.*s' needs %s.atype.btype, each .u32 or .s32", (int)len, s, in->op == EMU_OP_DP2A ? ".lo or .hi, then " : "");
    if (in->op == EMU_OP_MMA && ntypes != 4)
        return perr(ps, line, "mma needs .dtype.atype.btype.ctype in '%.*s'", (int)len, s);
    bool tc = in->op == EMU_OP_MMA || in->op == EMU_OP_WMMA_LOAD || in->op == EMU_OP_WMMA_STORE || in->op == EMU_OP_WMMA_MMA ||
              (in->op == EMU_OP_WGMMA && in->ty2 == EMU_T_B1 && in->ty3 == EMU_T_B1);
    if (!tc && in->op != EMU_OP_CVT_PACK && (emu_is_packed(in->ty) || emu_is_packed(in->ty2) || emu_is_packed(in->ty3) || emu_is_packed(in->ty4)))
        return perr(ps, line, "'%.*s': .s4, .u4 and .b1 are supported as mma and wmma operand types only (and .b1 as wgmma's)", (int)len, s);
    /* .u2 and .s2 have no size (emu_type_size 0): any other instruction would run on 0-byte operands */
    unsigned ntys = in->op == EMU_OP_SETP || in->op == EMU_OP_SET ? 3 : 4; /* their ty4 is the combining op */
    for (unsigned k = 0; k < ntys && in->op != EMU_OP_CVT_PACK; k++) {
        unsigned ty = k == 0 ? in->ty : k == 1 ? in->ty2 : k == 2 ? in->ty3 : in->ty4;
        if (ty == EMU_T_U2 || ty == EMU_T_S2)
            return perr(ps, line, "'%.*s': .u2 and .s2 are cvt.pack.sat's destination types only", (int)len, s);
    }
    if (in->op == EMU_OP_WGMMA && (ntypes != 3 || !in->space2))
        return perr(ps, line, "wgmma.mma_async needs .m64nNkK.dtype.atype.btype in '%.*s'", (int)len, s);
    if (in->op == EMU_OP_MBARRIER && !in->mode)
        return perr(ps, line, "'%.*s': which mbarrier operation (init, arrive, expect_tx, complete_tx, test_wait, try_wait, inval, ...)?", (int)len, s);
    if (in->op == EMU_OP_CP_BULK_TENSOR && !in->mode) return perr(ps, line, "'%.*s' needs a dimension .1d to .5d", (int)len, s);
    if (in->op == EMU_OP_CP_RED_BULK_TENSOR && in->vec < 1) return perr(ps, line, "'%.*s' needs a dimension .1d to .5d", (int)len, s);
    if ((in->op == EMU_OP_CP_RED_BULK || in->op == EMU_OP_CP_RED_BULK_TENSOR) && !in->mode)
        return perr(ps, line, "'%.*s': which reduction (.add, .min, .max, .inc, .dec, .and, .or, .xor)?", (int)len, s);
    if (in->op == EMU_OP_SETMAXNREG && !in->mode) return perr(ps, line, "'%.*s' needs .inc or .dec", (int)len, s);
    if (in->op == EMU_OP_CLUSTER_BAR && !in->mode) return perr(ps, line, "'%.*s' needs .arrive or .wait", (int)len, s);
    if (in->op == EMU_OP_CLUSTER_BAR && !check_cluster_bar(ps, in, line, s, len)) return false;
    if (in->op == EMU_OP_GRIDDEP && !in->mode) return perr(ps, line, "'%.*s' needs .wait or .launch_dependents", (int)len, s);
    if (in->op == EMU_OP_TENSORMAP_REPLACE && !in->mode)
        return perr(ps, line, "'%.*s': which tensor-map field (global_address, rank, box_dim, global_dim, global_stride, element_stride, "
                    "elemtype, interleave_layout, swizzle_mode, swizzle_atomicity, fill_mode)?", (int)len, s);
    if (in->op == EMU_OP_MOVMATRIX &&
        (in->ty != EMU_T_B16 || ntypes != 1 || (in->flags & (EMU_F(SYNC) | EMU_F(ALIGNED) | EMU_F(TRANS))) !=
                                                    (EMU_F(SYNC) | EMU_F(ALIGNED) | EMU_F(TRANS))))
        return perr(ps, line, "unsupported movmatrix form '%.*s' (movmatrix.sync.aligned.m8n8.trans.b16)", (int)len, s);
    if (in->op == EMU_OP_PREFETCHU && (!in->mode || in->space || ntypes))
        return perr(ps, line, "'%.*s': prefetchu takes .L1 and a generic address only", (int)len, s);
    if ((in->op == EMU_OP_PMEVENT || in->op == EMU_OP_BRKPT) && (ntypes || in->space))
        return perr(ps, line, "unsupported modifier in '%.*s'", (int)len, s);
    if (in->op == EMU_OP_BAR || in->op == EMU_OP_BARRIER) {
        bool red = in->flags & EMU_F(REDOP), arrive = in->flags & EMU_F(ARRIVE);
        if (red && arrive) return perr(ps, line, "'%.*s': arrive or red, not both", (int)len, s);
        if (red != (in->mode != 0)) return perr(ps, line, red ? "'%.*s' needs .popc, .and or .or" : "'%.*s': a reduction without .red", (int)len, s);
        if (red && (in->mode == EMU_MODE_BPOPC ? in->ty != EMU_T_U32 : in->ty != EMU_T_PRED))
            return perr(ps, line, "'%.*s': .popc reduces into a .u32, .and and .or into a .pred", (int)len, s);
    }
    return true;
}

/* The operands of a video instruction: registers (scalar forms: immediates too); a merge into c (d.b0 .. d.h1) or a
 * secondary operation, not both; vmad negates a * b (-a xor -b) or c, not both, and neither with .po. */
static bool check_video_operands(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    for (unsigned i = 0; i < in->nops; i++) {
        bool imm = emu_const_at(ps, in->o[i]) >= 0;
        if (in->ok[i] != EMU_OK_REG || (imm && EMU_IS_VIDEO_SIMD(in->op)))
            return perr(ps, line, "'%.*s': operand %u must be a .b32 register%s", (int)len, s, i + 1,
                        EMU_IS_VIDEO_SIMD(in->op) ? " (the SIMD video instructions take no immediates)" : " or an immediate");
    }
    if (!EMU_IS_VIDEO_SIMD(in->op) && in->vsel.dsel && in->mode)
        return perr(ps, line, "'%.*s': a merge into c (a selector on d) and a secondary operation (.%s) exclude each other", (int)len,
                    s, emu_mode_name(in->mode));
    if (in->op == EMU_OP_VMAD && in->vsel.neg == (EMU_VNEG_PRODUCT | EMU_VNEG_C))
        return perr(ps, line, "'%.*s' negates either a * b (one of -a and -b) or c, not both", (int)len, s);
    if (in->op == EMU_OP_VMAD && in->vsel.neg && in->vsel.po)
        return perr(ps, line, "'%.*s': .po (plus one) takes no negated operand", (int)len, s);
    return true;
}

/* Checks operand count and destination kinds, per op. */
/* The types a scalar atom or red takes for its operation (ptxas of CUDA 13 at sm_80 and sm_90; the ISA lists the
 * same): atom.add.b16 and atom.exch.u32 loaded and ran as the bits or integers the emulator chose. */
static bool atom_type_ok(const Parser *ps, const EmuIns *in) {
    unsigned t = in->ty;
    const Target *tg = ps->m->target;
    if (t == EMU_T_B128) return true; /* check_wide (parse.c): .cas and .exch only, on sm_90 */
    switch (in->mode) {
    case EMU_MODE_AADD:
        return t == EMU_T_U32 || t == EMU_T_S32 || t == EMU_T_U64 || t == EMU_T_F32 || t == EMU_T_F64 || t == EMU_T_F16 ||
               t == EMU_T_F16X2 || ((t == EMU_T_BF16 || t == EMU_T_BF16X2) && !(tg && tg->sm < 90));
    case EMU_MODE_AAND: case EMU_MODE_AOR: case EMU_MODE_AXOR: return t == EMU_T_B32 || t == EMU_T_B64;
    case EMU_MODE_AMIN: case EMU_MODE_AMAX: return t == EMU_T_U32 || t == EMU_T_S32 || t == EMU_T_U64 || t == EMU_T_S64;
    case EMU_MODE_AINC: case EMU_MODE_ADEC: return t == EMU_T_U32;
    case EMU_MODE_AEXCH: return in->op == EMU_OP_ATOM && (t == EMU_T_B32 || t == EMU_T_B64);
    case EMU_MODE_ACAS: return in->op == EMU_OP_ATOM && (t == EMU_T_B16 || t == EMU_T_B32 || t == EMU_T_B64);
    }
    return true; /* no operation: emu_check_mods says so */
}

bool emu_check_ins(Parser *ps, EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    int want = -1, want_max = -1;
    if (in->op == EMU_OP_FMA && (in->xflags & EMU_XF_OOB) &&
        ((in->ty != EMU_T_F16 && in->ty != EMU_T_F16X2 && in->ty != EMU_T_BF16 && in->ty != EMU_T_BF16X2) ||
         (in->flags & (EMU_F(FTZ) | EMU_F(SAT))) || in->rnd != EMU_RND_RN))
        return perr(ps, line, "'%.*s': fma.rn.oob takes .f16, .f16x2, .bf16 or .bf16x2 (with .relu at most)", (int)len, s);
    switch (in->op) {
    case EMU_OP_ADD: case EMU_OP_SUB: case EMU_OP_MUL: case EMU_OP_DIV: case EMU_OP_REM: case EMU_OP_MIN:
    case EMU_OP_MAX: case EMU_OP_AND: case EMU_OP_OR: case EMU_OP_XOR: case EMU_OP_SHL: case EMU_OP_SHR:
    case EMU_OP_MUL24: case EMU_OP_COPYSIGN: case EMU_OP_ADDC: case EMU_OP_SUBC:
        want = 3; break;
    case EMU_OP_MAD: case EMU_OP_MAD24: case EMU_OP_FMA: case EMU_OP_SELP: case EMU_OP_SLCT: case EMU_OP_BFE:
    case EMU_OP_PRMT: case EMU_OP_SAD: case EMU_OP_SHF: case EMU_OP_MADC: case EMU_OP_DP4A: case EMU_OP_DP2A:
        want = 4; break;
    case EMU_OP_VADD: case EMU_OP_VSUB: case EMU_OP_VABSDIFF: case EMU_OP_VMIN: case EMU_OP_VMAX: case EMU_OP_VSHL:
    case EMU_OP_VSHR: case EMU_OP_VSET:
        want = in->mode || in->vsel.dsel ? 4 : 3; want_max = 4; break; /* c: the secondary operation's or the merge's */
    case EMU_OP_VMAD: case EMU_OP_VABSDIFF2: case EMU_OP_VABSDIFF4: case EMU_OP_VADD2: case EMU_OP_VADD4: case EMU_OP_VSUB2:
    case EMU_OP_VSUB4: case EMU_OP_VAVRG2: case EMU_OP_VAVRG4: case EMU_OP_VMIN2: case EMU_OP_VMIN4: case EMU_OP_VMAX2:
    case EMU_OP_VMAX4: case EMU_OP_VSET2: case EMU_OP_VSET4:
        want = 4; break;
    case EMU_OP_BFI: want = 5; break;
    case EMU_OP_LOP3: want = in->boolop ? 6 : 5; break; /* lop3.BoolOp's q */
    case EMU_OP_FNS: want = 4; break;
    case EMU_OP_BMSK: case EMU_OP_SZEXT: want = 3; break;
    case EMU_OP_ABS: case EMU_OP_NEG: case EMU_OP_NOT: case EMU_OP_CNOT: case EMU_OP_RCP: case EMU_OP_SQRT:
    case EMU_OP_RSQRT: case EMU_OP_EX2: case EMU_OP_LG2: case EMU_OP_SIN: case EMU_OP_COS: case EMU_OP_TANH:
    case EMU_OP_POPC: case EMU_OP_CLZ: case EMU_OP_BREV: case EMU_OP_BFIND: case EMU_OP_TESTP:
    case EMU_OP_CVTA: case EMU_OP_LD: case EMU_OP_LDU: case EMU_OP_ST: case EMU_OP_ISSPACEP:
        want = 2; break;
    case EMU_OP_MOV: want = 2; break;
    case EMU_OP_CVT: want = 2; want_max = 3; break;
    case EMU_OP_CVT_PACK: want = in->ty == EMU_T_U16 || in->ty == EMU_T_S16 ? 3 : 4; break;
    case EMU_OP_SETP: want = 3; want_max = 5; break;
    case EMU_OP_SET: want = 3; want_max = 4; break;
    case EMU_OP_SHFL: want = 5; break;
    case EMU_OP_MATCH: case EMU_OP_REDUX: want = 3; break;
    case EMU_OP_VOTE: want = 3; break;
    case EMU_OP_ACTIVEMASK: want = 1; break;
    case EMU_OP_ATOM: want = in->mode == EMU_MODE_ACAS ? 4 : 3; break;
    case EMU_OP_RED: want = 2; break;
    case EMU_OP_BRA: want = 1; break;
    case EMU_OP_BRX: want = 2; break;
    case EMU_OP_BAR: case EMU_OP_BARRIER:
        if (in->flags & EMU_F(REDOP)) want = 3, want_max = 4; /* d, a [, b], {!}c */
        else if (in->flags & EMU_F(ARRIVE)) want = 2;         /* a, b: the count is required */
        else want = 0, want_max = 2;
        break;
    case EMU_OP_BAR_WARP: want = 1; break;
    case EMU_OP_RET: case EMU_OP_EXIT: case EMU_OP_TRAP: case EMU_OP_BRKPT: case EMU_OP_MEMBAR:
    case EMU_OP_CP_ASYNC_COMMIT: case EMU_OP_CP_ASYNC_WAIT_ALL:
        want = 0; break;
    case EMU_OP_CP_ASYNC_WAIT: case EMU_OP_NANOSLEEP: case EMU_OP_CP_ASYNC_MBAR: want = 1; break;
    case EMU_OP_ALLOCA: want = 2; want_max = 3; break;
    case EMU_OP_STACKSAVE: case EMU_OP_STACKRESTORE: want = 1; break;
    case EMU_OP_PREFETCH: case EMU_OP_PREFETCHU: case EMU_OP_PMEVENT: want = 1; break;
    case EMU_OP_MOVMATRIX: want = 2; break;
    case EMU_OP_CREATEPOLICY: want = 1; want_max = 4; break;
    case EMU_OP_DISCARD: case EMU_OP_APPLYPRIORITY: want = 2; break;
    case EMU_OP_CP_ASYNC: want = 3; want_max = 5; break;
    case EMU_OP_LDMATRIX: want = 2; break;
    case EMU_OP_MMA: case EMU_OP_WMMA_MMA: want = in->xflags & EMU_XF_MMA_SP && in->op == EMU_OP_MMA ? 6 : 4; break;
    case EMU_OP_WMMA_LOAD: case EMU_OP_WMMA_STORE: want = 2; want_max = 3; break; /* d, [p] [, stride] / [p], d [, stride] */
    case EMU_OP_CALL: want = 1; want_max = 3; break;
    case EMU_OP_STMATRIX: want = 2; break;
    case EMU_OP_ELECT: want = 2; break;
    case EMU_OP_SETMAXNREG: want = 1; break;
    case EMU_OP_CP_BULK_COMMIT: case EMU_OP_WGMMA_FENCE: case EMU_OP_WGMMA_COMMIT: want = 0; break;
    case EMU_OP_CP_BULK_WAIT: case EMU_OP_WGMMA_WAIT: want = 1; break;
    /* [d], [s], size [, [mbar]] [, ctaMask] */
    case EMU_OP_CP_BULK: case EMU_OP_CP_RED_BULK: want = 3; want_max = 4 + !!(in->xflags & EMU_XF_MULTICAST); break;
    /* [d], [tmap], {c}, [mbar] [, ctaMask] | [tmap], {c}, [s] */
    case EMU_OP_CP_BULK_TENSOR: want = 3; want_max = 4 + !!(in->xflags & EMU_XF_MULTICAST) + !!(in->xflags & EMU_XF_IM2COL); break;
    case EMU_OP_CP_RED_BULK_TENSOR: want = 3; break;               /* [tmap], {c}, [s] */
    case EMU_OP_ST_ASYNC: case EMU_OP_RED_ASYNC: want = 3; break;  /* [a], b, [mbar] */
    case EMU_OP_WGMMA: want = 4; want_max = in->xflags & EMU_XF_MMA_SP ? 10 : 8; break; /* the form's own count: below */
    case EMU_OP_MBARRIER:
        switch (in->mode) {
        case EMU_MODE_MB_INIT: case EMU_MODE_MB_EXPECT_TX: case EMU_MODE_MB_COMPLETE_TX: want = 2; break;
        case EMU_MODE_MB_INVAL: want = 1; break;
        case EMU_MODE_MB_ARRIVE: case EMU_MODE_MB_ARRIVE_DROP: want = 2; want_max = 3; break;
        case EMU_MODE_MB_ARRIVE_EXPECT_TX: case EMU_MODE_MB_ARRIVE_DROP_EXPECT_TX: want = 3; break;
        case EMU_MODE_MB_TEST_WAIT: case EMU_MODE_MB_TRY_WAIT: want = 3; want_max = 4; break;
        case EMU_MODE_MB_PENDING: want = 2; break;
        }
        break;
    case EMU_OP_FENCE: want = 0; want_max = 2; break; /* fence.proxy.tensormap::generic.acquire [a], 128 */
    case EMU_OP_TENSORMAP_REPLACE:
        want = in->mode == EMU_MODE_TM_BOX || in->mode == EMU_MODE_TM_GDIM || in->mode == EMU_MODE_TM_GSTRIDE ||
                       in->mode == EMU_MODE_TM_ESTRIDE ? 3 : 2;
        break;
    case EMU_OP_TENSORMAP_CP: want = 3; break;
    case EMU_OP_CLUSTER_BAR: case EMU_OP_GRIDDEP: want = 0; break;
    case EMU_OP_CP_BULK_PREFETCH: want = 1; want_max = 3; break; /* [a], size | [tmap, {c}] [, {offsets}] [, cache-policy] */
    case EMU_OP_MAPA: want = 3; break;
    case EMU_OP_GETCTARANK: want = 2; break;
    }
    if (want_max < 0) want_max = want;
    /* the .global forms (no mbarrier) are sm_100's (ptxas: "Feature 'st.async/red.async with .global state space'
     * requires .target sm_100 or higher"); said before the operand count, which they miss by one */
    if ((in->op == EMU_OP_ST_ASYNC || in->op == EMU_OP_RED_ASYNC) && in->space == EMU_SP_GLOBAL)
        return perr(ps, line, "'%.*s': st.async and red.async on .global need .target sm_100 or later (the emulator runs up to "
                    "sm_90a: [.shared::cluster addr], value, [mbar])", (int)len, s);
    if (want_max < 0) want_max = want;
    if (want >= 0 && (in->nops < want || in->nops > want_max))
        return perr(ps, line, "'%.*s' takes %d operand%s, found %u", (int)len, s, want, want == 1 ? "" : "s", in->nops);
    if (EMU_IS_VIDEO(in->op) && !check_video_operands(ps, in, line, s, len)) return false;
    uint64_t lut;
    if (in->op == EMU_OP_LOP3 && (!const_value(ps, in->o[4], &lut) || lut > 255))
        return perr(ps, line, "'%.*s': the truth table is an immediate in 0..255", (int)len, s);
    bool dest = emu_writes_first(in);
    if (dest) {
        bool regdest = in->ok[0] == EMU_OK_VEC ||
                       (in->ok[0] == EMU_OK_REG && (in->o[0] < EMU_SLOT_SREG || in->o[0] >= EMU_SLOT_SREG + EMU_SREG_COUNT) &&
                        in->o[0] != EMU_SLOT_ZERO && in->o[0] != EMU_SLOT_TRUE);
        /* a destination must be a declared register (constant slots are never destinations) */
        if (regdest && in->ok[0] == EMU_OK_REG && emu_const_at(ps, in->o[0]) >= 0) regdest = false;
        for (uint32_t e = 0; e < in->on[0] && regdest && in->ok[0] == EMU_OK_VEC; e++)
            if (emu_const_at(ps, ps->vec[in->o[0] + e]) >= 0) regdest = false;
        if (!regdest) return perr(ps, line, "destination of '%.*s' is not a register", (int)len, s);
    }
    if (in->op == EMU_OP_MMA) {
        EmuMmaForm fm;
        const char *why;
        if (!emu_mma_form(in, &fm, &why)) return perr(ps, line, "unsupported mma form '%.*s': %s", (int)len, s, why);
        const Target *tg = ps->m->target;
        if (tg && tg->sm < 89 && (in->ty2 == EMU_T_E4M3 || in->ty2 == EMU_T_E5M2))
            return perr(ps, line, "'%.*s' needs .target sm_89 or later (the module is for %s)", (int)len, s, tg->name);
        if (tg && tg->sm < 90 && in->ty2 == EMU_T_F64 && in->mode != EMU_MODE_M8N8K4)
            return perr(ps, line, "'%.*s' needs .target sm_90 or later (the module is for %s)", (int)len, s, tg->name);
        const uint8_t want_regs[4] = {fm.nd, fm.na, fm.nb, fm.nc};
        static const char *const what[4] = {"D", "A", "B", "C"};
        for (unsigned k = 0; k < 4; k++)
            if (!(in->ok[k] == EMU_OK_VEC && in->on[k] == want_regs[k]) && !(in->ok[k] == EMU_OK_REG && want_regs[k] == 1))
                return perr(ps, line, "'%.*s' needs %u %s register%s {..}", (int)len, s, want_regs[k], what[k],
                            want_regs[k] == 1 ? "" : "s");
        if (fm.sparse) { /* e: the metadata, a register (ptxas: "Arguments mismatch" for an immediate); f: the selector */
            uint64_t sel;
            bool ereg = (in->ok[4] == EMU_OK_REG || (in->ok[4] == EMU_OK_VEC && in->on[4] == 1)) &&
                        emu_const_at(ps, in->ok[4] == EMU_OK_VEC ? ps->vec[in->o[4]] : in->o[4]) < 0;
            if (!ereg) return perr(ps, line, "'%.*s': the sparsity metadata (operand 5) is a register", (int)len, s);
            if (in->ok[5] != EMU_OK_REG || !const_value(ps, in->o[5], &sel))
                return perr(ps, line, "'%.*s': the sparsity selector (operand 6) is an immediate", (int)len, s);
            if (sel > fm.selmax)
                return perr(ps, line, "'%.*s': sparsity selector %llu (this form takes 0..%u)", (int)len, s, (unsigned long long)sel,
                            fm.selmax);
        }
    }
    if (in->op == EMU_OP_WMMA_LOAD || in->op == EMU_OP_WMMA_STORE || in->op == EMU_OP_WMMA_MMA) {
        EmuWmmaForm fm;
        const char *why;
        if (!emu_wmma_form(in, &fm, &why)) return perr(ps, line, "unsupported wmma form '%.*s': %s", (int)len, s, why);
        unsigned aop = in->op == EMU_OP_WMMA_STORE ? 0 : in->op == EMU_OP_WMMA_LOAD ? 1 : 4;
        if (aop < 4 && in->ok[aop] != EMU_OK_ADDR) return perr(ps, line, "'%.*s' needs an address operand [..]", (int)len, s);
        /* ptxas: "State space incorrect" for .const .local .param .shared::cluster (wmma.store.const loaded and ran) */
        if (aop < 4 && ((in->space != EMU_SP_GENERIC && in->space != EMU_SP_GLOBAL && in->space != EMU_SP_SHARED) ||
                        emu_has_mod(s, len, "shared::cluster")))
            return perr(ps, line, "'%.*s': wmma.load and wmma.store take a generic, .global or .shared[::cta] address", (int)len, s);
        static const char *const what[4] = {"D", "A", "B", "C"};
        for (unsigned k = 0; k < (in->op == EMU_OP_WMMA_MMA ? 4u : 1u); k++) {
            unsigned op = in->op == EMU_OP_WMMA_STORE ? 1 : k, want_regs = fm.regs[k];
            if (!(in->ok[op] == EMU_OK_VEC && in->on[op] == want_regs) && !(in->ok[op] == EMU_OK_REG && want_regs == 1))
                return perr(ps, line, "'%.*s' needs %u %s register%s {..}", (int)len, s, want_regs,
                            in->op == EMU_OP_WMMA_MMA ? what[k] : "fragment", want_regs == 1 ? "" : "s");
            /* each register of a fragment 64 bits for .f64, else 32 (a list of mixed sizes, {%r1, .., %rd1}: ptxas's
             * "Incompatible elements" or "Arguments mismatch"; it loaded and ran on the registers' low bits) */
            unsigned esz = emu_has_mod(s, len, "f64") ? 8 : 4;
            for (unsigned e = 0; e < want_regs; e++) {
                const struct RegRange *r = slot_range(ps, in->ok[op] == EMU_OK_VEC ? ps->vec[in->o[op] + e] : in->o[op]);
                if (r && emu_type_size(r->ty) != esz)
                    return perr(ps, line, "'%.*s': the registers of %s are %u-bit, not .%s (element %u)", (int)len, s,
                                in->op == EMU_OP_WMMA_MMA ? what[k] : "the fragment", esz * 8, emu_type_name(r->ty), e + 1);
            }
        }
    }
    if (in->op == EMU_OP_LDMATRIX) {
        unsigned nmat = in->mode == EMU_MODE_X4 ? 4 : in->mode == EMU_MODE_X2 ? 2 : in->mode == EMU_MODE_X1 ? 1 : 0;
        if (!nmat || in->ty != EMU_T_B16 || (in->space != EMU_SP_SHARED && in->space != EMU_SP_GENERIC))
            return perr(ps, line, "unsupported ldmatrix form '%.*s' (m8n8 .x1/.x2/.x4 [.trans] .shared .b16)", (int)len, s);
        if (!(in->ok[0] == EMU_OK_VEC && in->on[0] == nmat) && !(in->ok[0] == EMU_OK_REG && nmat == 1))
            return perr(ps, line, "'%.*s' needs %u destination register%s {..}", (int)len, s, nmat, nmat == 1 ? "" : "s");
        if (in->ok[1] != EMU_OK_ADDR) return perr(ps, line, "'%.*s' needs an address operand [..]", (int)len, s);
    }
    if (in->op >= EMU_OP_STMATRIX && !emu_check_hopper(ps, in, line, s, len)) return false;
    if (in->op == EMU_OP_CP_ASYNC_MBAR && emu_has_mod(s, len, "shared::cluster")) /* ptxas: "Illegal modifier '::cluster'" */
        return perr(ps, line, "'%.*s': cp.async.mbarrier.arrive takes an mbarrier of this CTA (.shared[::cta] or generic)", (int)len, s);
    uint64_t tmsize; /* fence.proxy.tensormap::generic.acquire.scope [a], 128: ptxas "unexpected value '64', expected to be 128" */
    if (in->op == EMU_OP_FENCE && in->nops == 2 && emu_has_mod(s, len, "tensormap::generic") &&
        (!const_value(ps, in->o[1], &tmsize) || tmsize != 128))
        return perr(ps, line, "'%.*s': the size is the immediate 128 (a tensor map's)", (int)len, s);
    bool need_addr = in->op == EMU_OP_LD || in->op == EMU_OP_LDU || in->op == EMU_OP_ATOM;
    if (need_addr && in->ok[1] != EMU_OK_ADDR) return perr(ps, line, "'%.*s' needs an address operand [..]", (int)len, s);
    if ((in->op == EMU_OP_ST || in->op == EMU_OP_RED) && in->ok[0] != EMU_OK_ADDR)
        return perr(ps, line, "'%.*s' needs an address operand [..]", (int)len, s);
    if (in->op == EMU_OP_BRA && in->ok[0] != EMU_OK_LABEL) return perr(ps, line, "bra needs a label");
    if ((in->op == EMU_OP_PREFETCH || in->op == EMU_OP_PREFETCHU) && in->ok[0] != EMU_OK_ADDR)
        return perr(ps, line, "'%.*s' needs an address operand [..]", (int)len, s);
    if (in->op == EMU_OP_MOVMATRIX) {
        if (in->ok[0] != EMU_OK_REG || in->ok[1] != EMU_OK_REG)
            return perr(ps, line, "'%.*s' takes two .b32 registers, d and a", (int)len, s);
        const Target *tg = ps->m->target;
        if (tg && tg->sm < 75) return perr(ps, line, "'%.*s' needs .target sm_75 or later (the module is for %s)", (int)len, s, tg->name);
    }
    if (in->op == EMU_OP_PMEVENT) { /* an event number 0..15, or a mask of the 16 events */
        uint64_t ev;
        bool mask = in->xflags & EMU_XF_PM_MASK;
        if (in->ok[0] != EMU_OK_REG || !const_value(ps, in->o[0], &ev) || ev > (mask ? 0xFFFFu : 15u))
            return perr(ps, line, "'%.*s' takes an immediate %s", (int)len, s, mask ? "16-bit mask" : "event number in 0..15");
    }
    if ((in->op == EMU_OP_LD || in->op == EMU_OP_LDU) && (in->xflags & EMU_XF_UNIFIED)) {
        /* ISA, ld: `[a].unified` is "only supported for .global state space and for generic addressing where the
         * address points to the .global state space" (run time: exec_mem.c).  The ISA's syntax shows it on weak
         * loads only; ptxas takes it on .volatile, .relaxed, .acquire, .mmio and ldu too, and so does this. */
        if (in->space != EMU_SP_GLOBAL && in->space != EMU_SP_GENERIC)
            return perr(ps, line, "'%.*s': .unified is allowed on .global or generic addresses only", (int)len, s);
    }
    if ((in->op == EMU_OP_LD || in->op == EMU_OP_ST) && in->vec > 1) {
        unsigned vi = in->op == EMU_OP_LD ? 0 : 1;
        if (in->ok[vi] != EMU_OK_VEC || in->on[vi] != in->vec)
            return perr(ps, line, "'%.*s' needs a vector operand of %u registers", (int)len, s, in->vec);
    }
    bool atomic = in->op == EMU_OP_ATOM || in->op == EMU_OP_RED;
    bool fminmax = atomic && (in->mode == EMU_MODE_AMIN || in->mode == EMU_MODE_AMAX) && emu_type_kind(in->ty) == EMU_K_F;
    if (fminmax && in->vec < 2) /* ISA, atom / red: .min and .max on floats are vector forms only */
        return perr(ps, line, "'%.*s': floating-point atom/red .min/.max take a vector (.v2/.v4/.v8 of .f16, .bf16; .v2/.v4 of "
                    ".f16x2, .bf16x2)", (int)len, s);
    if (atomic && in->vec <= 1 && !atom_type_ok(ps, in))
        return perr(ps, line, "unsupported atomic '%.*s': .add takes .u32 .s32 .u64 .f32 .f64 .f16 .f16x2 (.bf16 .bf16x2 on sm_90); "
                    ".and .or .xor .b32 .b64; .min .max .u32 .s32 .u64 .s64; .inc .dec .u32; .exch .b32 .b64; .cas .b16 .b32 .b64",
                    (int)len, s);
    if (atomic && in->vec > 1) { /* sm_90's vector atomics: ISA, atom, the table of vector qualifiers, types and operations */
        bool half = in->ty == EMU_T_F16 || in->ty == EMU_T_BF16;
        bool pair = in->ty == EMU_T_F16X2 || in->ty == EMU_T_BF16X2;
        bool op_ok = in->mode == EMU_MODE_AADD || ((half || pair) && (in->mode == EMU_MODE_AMIN || in->mode == EMU_MODE_AMAX));
        if (!(half || ((pair || in->ty == EMU_T_F32) && in->vec <= 4)) || !op_ok)
            return perr(ps, line, "unsupported vector atomic '%.*s' (.add, .min, .max on .v2/.v4/.v8 of .f16, .bf16 and .v2/.v4 of "
                        ".f16x2, .bf16x2; .add on .v2/.v4 of .f32)", (int)len, s);
        if (in->space != EMU_SP_GLOBAL && in->space != EMU_SP_GENERIC)
            return perr(ps, line, "'%.*s': vector atomics are on .global (or generic) addresses only", (int)len, s);
        const Target *tg = ps->m->target;
        if (tg && tg->sm < 90) return perr(ps, line, "'%.*s' needs .target sm_90 or later (the module is for %s)", (int)len, s, tg->name);
        for (unsigned vi = in->op == EMU_OP_ATOM ? 0 : 1; vi <= (in->op == EMU_OP_ATOM ? 2u : 1u); vi += in->op == EMU_OP_ATOM ? 2 : 1)
            if (in->ok[vi] != EMU_OK_VEC || in->on[vi] != in->vec)
                return perr(ps, line, "'%.*s' needs vector operands of %u registers", (int)len, s, in->vec);
    }
    return true;
}

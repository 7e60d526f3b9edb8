/* parse_types.c - an instruction's operands checked as ptxas of CUDA 13 checks them, after parse.c has decoded
 * it and parse_check.c has checked its form: each register's declared type against the instruction's (ISA,
 * "Operand Type Information"), the sm_90 operands' sizes and kinds (mbarrier states, wgmma's register lists,
 * bulk sizes, elect's and mapa's 32-bit integers), addresses, cp.async's src-size and createpolicy's fractions.
 * Each refusal names the instruction and its line, as ptxas's "Arguments mismatch" would. */
#include "emu/parse_int.h"

#include <inttypes.h>

/* ---- operand types (ISA, "Operand Type Information"; what ptxas 13 takes, tried form by form) ----
 * A register operand of an instruction of type T is declared with a type of T's size: any for a .bN instruction;
 * .bN, .uN, .sN for an integer one; .bN or a float type for a float one (ptxas takes .f16x2 registers
 * everywhere, and so does this).  ld, ldu, st and cvt relax the size: a register at least as wide as T. */
static bool type_fits(unsigned t, unsigned r, bool relaxed) {
    if (!t || !r || r == EMU_T_F16X2 || emu_type_kind(t) == EMU_K_NONE) return true;
    if ((t == EMU_T_PRED) != (r == EMU_T_PRED)) return false;
    if (t == EMU_T_PRED) return true;
    unsigned ts = emu_type_size(t), rs = emu_type_size(r), tk = emu_type_kind(t), rk = emu_type_kind(r);
    if (!ts || ts > 8 || !rs || rs > 8) return true; /* sub-byte and .b128 operands: their own checks */
    if (relaxed ? rs < ts : rs != ts) return false;
    /* a float type's float register is of its size even where the size is relaxed (ld.global.f32 %fd1, cvt.rn.f16.f32
     * %f1, cvt.f64.f32 %fd1, %fd2: "Arguments mismatch"; they loaded); a .bN one may be wider (ld.global.f32 %rd1) */
    if (relaxed && tk == EMU_K_F && rk == EMU_K_F && rs != ts) return false;
    if (tk == EMU_K_U || tk == EMU_K_S) return rk != EMU_K_F;
    if (tk == EMU_K_F) return rk != EMU_K_U && rk != EMU_K_S;
    return true;
}

/* The standard scalar types ld/st/cvt's relaxed rule is known for (tf32, fp8, packed pairs: their own checks). */
static bool type_plain(unsigned t) {
    return (t >= EMU_T_B8 && t <= EMU_T_B64) || (t >= EMU_T_U8 && t <= EMU_T_S64) || t == EMU_T_F16 || t == EMU_T_BF16 ||
           t == EMU_T_F32 || t == EMU_T_F64 || t == EMU_T_PRED;
}

/* The register's name in messages: '%r3', or a scalar register's own name. */
static void slot_name(Parser *ps, uint32_t slot, char *buf, size_t cap) {
    const struct RegRange *r = slot_range(ps, slot);
    if (!r) snprintf(buf, cap, "?");
    else if (r->count < 0) snprintf(buf, cap, "%.*s", (int)r->plen, r->prefix);
    else snprintf(buf, cap, "%.*s%u", (int)r->plen, r->prefix, (slot - r->base) / (r->wide ? 2 : 1));
}

static bool check_operand_type(Parser *ps, const EmuIns *in, unsigned i, unsigned t, bool relaxed, uint32_t line, const char *s,
                               uint32_t len) {
    unsigned n = in->ok[i] == EMU_OK_VEC ? in->on[i] : in->ok[i] == EMU_OK_REG ? 1 : 0;
    for (unsigned k = 0; k < n; k++) {
        uint32_t slot = in->ok[i] == EMU_OK_VEC ? ps->vec[in->o[i] + k] : in->o[i];
        const struct RegRange *r = slot_range(ps, slot);
        /* ptxas takes .pred elements in ld/st vectors (ld.global.v2.b32 {%p, %r}) */
        if (!r || type_fits(t, r->ty, relaxed) || (in->ok[i] == EMU_OK_VEC && r->ty == EMU_T_PRED)) continue;
        char name[64];
        slot_name(ps, slot, name, sizeof name);
        return perr(ps, line, "'%.*s': operand %u, register '%s' of type .%s, does not fit .%s (%s)", (int)len, s, i + 1, name,
                    emu_type_name(r->ty), emu_type_name(t),
                    relaxed ? "a register at least as wide, not a float for an integer type nor an integer for a float one, a float "
                              "register of a float type's size"
                            : "a register of the same size, .b or of the same kind");
    }
    return true;
}

/* A 32-bit integer operand (elect's member mask and lane id, mapa's CTA id, a bulk prefetch's size): a .b32, .u32
 * or .s32 register or an immediate; ptxas: "Arguments mismatch" for .f32, .f16x2, .b16 and .b64 ones (each loaded
 * and ran on the register's bits). */
static bool check_int32_operand(Parser *ps, const EmuIns *in, unsigned i, uint32_t line, const char *s, uint32_t len) {
    const struct RegRange *r = in->ok[i] == EMU_OK_REG ? slot_range(ps, in->o[i]) : NULL;
    if (r && r->ty == EMU_T_F16X2) { /* (type_fits takes a packed pair anywhere) */
        char name[64];
        slot_name(ps, in->o[i], name, sizeof name);
        return perr(ps, line, "'%.*s': operand %u, register '%s' of type .f16x2, does not fit .u32 (a 32-bit integer or bit "
                    "register)", (int)len, s, i + 1, name);
    }
    return in->ok[i] != EMU_OK_REG || check_operand_type(ps, in, i, EMU_T_U32, false, line, s, len);
}

/* wgmma.mma_async's register lists (D, and A from registers) as ptxas of CUDA 13 types them: a list with a .b32
 * register among its elements takes any 32-bit ones (.pred too); one without holds one kind ("Vector with elements of
 * different types": .u32 and .s32 are one), and that kind must be the operand's: D of .f32 .f32, of .f16 .f16x2, of
 * .s32 .u32/.s32; A of .f16 .bf16 .tf32 .e4m3 .e5m2 .f16x2 ("Arguments mismatch", "Unexpected instruction types");
 * A of .s8 .u8 .b1 any (.pred included).  Each of these loaded and ran on the registers' bits. */
enum { WGR_P = 1, WGR_I = 2, WGR_F = 4, WGR_H = 8 };
static bool check_wgmma_list(Parser *ps, const EmuIns *in, unsigned i, unsigned allowed, const char *want, uint32_t line,
                             const char *s, uint32_t len) {
    unsigned n = in->ok[i] == EMU_OK_VEC ? in->on[i] : in->ok[i] == EMU_OK_REG ? 1 : 0, seen = 0, first = 0;
    uint32_t at = 0;
    for (unsigned k = 0; k < n; k++) {
        uint32_t slot = in->ok[i] == EMU_OK_VEC ? ps->vec[in->o[i] + k] : in->o[i];
        const struct RegRange *r = slot_range(ps, slot);
        if (!r) continue;
        unsigned kind = emu_type_kind(r->ty);
        if (kind == EMU_K_B) return true;
        unsigned c = kind == EMU_K_PRED ? WGR_P : kind == EMU_K_U || kind == EMU_K_S ? WGR_I : r->ty == EMU_T_F16X2 ? WGR_H : WGR_F;
        if (!seen) first = r->ty, at = slot;
        if (seen && !(seen & c)) {
            char a[64], b[64];
            slot_name(ps, at, a, sizeof a), slot_name(ps, slot, b, sizeof b);
            return perr(ps, line, "'%.*s': operand %u mixes register types ('%s' .%s, '%s' .%s): one type, or a .b32 "
                        "register among them", (int)len, s, i + 1, a, emu_type_name(first), b, emu_type_name(r->ty));
        }
        seen |= c;
    }
    if (seen && !(seen & allowed)) {
        char a[64];
        slot_name(ps, at, a, sizeof a);
        return perr(ps, line, "'%.*s': operand %u, register '%s' of type .%s, does not fit (%s)", (int)len, s, i + 1, a,
                    emu_type_name(first), want);
    }
    return true;
}

/* Address operands as ptxas takes them: an immediate address ([16]) is for .local only ("Immediate addresses allowed
 * only for .local state space"), a register address is an integer or bit register (not [%f1]), and with .address_size
 * 64 (the only size loaded) ld, ldu, st, atom, red and prefetch of the generic or .global space take no 32-bit register
 * and cvta no .u32 ("Program uses 32-bit address ...": "32-Bit compilation is no longer supported").  Each loaded and
 * ran: [16] of .shared read shared byte 16, a 32-bit generic address reached no allocation. */
static bool check_addresses(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    if (in->op == EMU_OP_CVTA && emu_type_size(in->ty) != 8)
        return perr(ps, line, "'%.*s': cvta converts 64-bit addresses (.u64): .address_size 64 takes no 32-bit ones", (int)len, s);
    unsigned na = 0; /* address operands so far */
    for (unsigned i = 0; i < in->nops; i++) {
        if (in->ok[i] != EMU_OK_ADDR) continue;
        bool primary = na++ == 0;
        if (in->o[i] == EMU_SLOT_ZERO) {
            if (primary && in->space == EMU_SP_LOCAL) continue;
            return perr(ps, line, "'%.*s': an immediate address ([%" PRId64 "]) is for the .local state space only", (int)len, s,
                        na <= 3 ? in->off[na - 1] : 0);
        }
        const struct RegRange *r = slot_range(ps, in->o[i]);
        unsigned kind = r ? emu_type_kind(r->ty) : EMU_K_NONE;
        if (kind == EMU_K_F || kind == EMU_K_PRED)
            return perr(ps, line, "'%.*s': register '%.*s' of type .%s as an address: an address is an integer or bit register",
                        (int)len, s, (int)r->plen, r->prefix, emu_type_name(r->ty));
        bool mem = in->op == EMU_OP_LD || in->op == EMU_OP_LDU || in->op == EMU_OP_ST || in->op == EMU_OP_ATOM ||
                   in->op == EMU_OP_RED || in->op == EMU_OP_PREFETCH;
        if (r && primary && mem && emu_type_size(r->ty) == 4 && (in->space == EMU_SP_GENERIC || in->space == EMU_SP_GLOBAL))
            return perr(ps, line, "'%.*s': a 32-bit register as a %s address: .address_size 64 takes 64-bit ones (32-bit "
                        "addresses are for .shared, .local, .const and .param)", (int)len, s,
                        in->space == EMU_SP_GLOBAL ? ".global" : "generic");
    }
    return true;
}

/* cp.async's sizes as ptxas takes them: cp-size an immediate 4, 8 or 16 (16 only for .cg), then a src-size (an
 * immediate up to cp-size or a 32-bit register) or an ignore-src predicate, not both ("Arguments mismatch"; a 64-bit
 * src-size without .L2::cache_hint, cp-size 12 or both loaded and ran). */
static bool check_cp_async(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    uint64_t cp = 0, src;
    bool cg = emu_has_mod(s, len, "cg");
    if (in->nops > 4)
        return perr(ps, line, "'%.*s': src-size and ignore-src exclude each other ([dst], [src], cp-size[, src-size | ignore-src])",
                    (int)len, s);
    if (in->ok[2] != EMU_OK_REG || !const_value(ps, in->o[2], &cp) || (cg ? cp != 16 : cp != 4 && cp != 8 && cp != 16))
        return perr(ps, line, "'%.*s': cp-size is an immediate %s", (int)len, s, cg ? "16 (.cg copies 16 bytes)" : "4, 8 or 16");
    if (in->nops < 4 || in->ok[3] != EMU_OK_REG || slot_is_pred(ps, in->o[3])) return true;
    if (const_value(ps, in->o[3], &src)) {
        if (src > cp) return perr(ps, line, "'%.*s': src-size %" PRIu64 " is past cp-size %" PRIu64, (int)len, s, src, cp);
        return true;
    }
    const struct RegRange *r = slot_range(ps, in->o[3]);
    unsigned k = r ? emu_type_kind(r->ty) : EMU_K_B;
    if (r && (emu_type_size(r->ty) != 4 || k == EMU_K_F))
        return perr(ps, line, "'%.*s': src-size is a 32-bit integer register, not .%s", (int)len, s, emu_type_name(r->ty));
    return true;
}

/* createpolicy as ptxas takes it (the emulator's policy is an opaque value, so each of these loaded):
 *   createpolicy.fractional.L2::primary[.L2::secondary].b64 d[, fraction]: primary evict_last, evict_normal, evict_first
 *     or evict_unchanged, secondary evict_first or evict_unchanged, an immediate fraction in (0, 1];
 *   createpolicy.range[.global].L2::primary[.L2::secondary].b64 d, [a], primary-size, total-size (32-bit sizes);
 *   createpolicy.cvt.L2.b64 d, a (a 64-bit a). */
static bool check_createpolicy(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    static const char *const prim[] = {"L2::evict_last", "L2::evict_normal", "L2::evict_first", "L2::evict_unchanged"};
    bool cvt = emu_has_mod(s, len, "cvt"), range = emu_has_mod(s, len, "range");
    if (in->ty != EMU_T_B64) return perr(ps, line, "'%.*s': createpolicy makes a .b64 policy", (int)len, s);
    if (cvt) {
        if (!emu_has_mod(s, len, "L2")) return perr(ps, line, "'%.*s': the form is createpolicy.cvt.L2.b64 d, a", (int)len, s);
        const struct RegRange *r = in->nops > 1 && in->ok[1] == EMU_OK_REG ? slot_range(ps, in->o[1]) : NULL;
        if (r && emu_type_size(r->ty) != 8)
            return perr(ps, line, "'%.*s': the policy converted is a 64-bit register, not .%s", (int)len, s, emu_type_name(r->ty));
        return true;
    }
    /* the priorities in the order written: the first any of prim, a second evict_first or evict_unchanged */
    int first = -1, second = -1, n = 0;
    for (uint32_t i = 0; i < len; i++) {
        if (s[i] != '.') continue;
        for (unsigned k = 0; k < 4; k++) {
            size_t m = strlen(prim[k]);
            if (i + 1 + m <= len && !memcmp(s + i + 1, prim[k], m) && (i + 1 + m == len || s[i + 1 + m] == '.')) {
                if (!n++) first = (int)k;
                else second = (int)k;
            }
        }
    }
    if (first < 0 || (second >= 0 && second != 2 && second != 3) || n > 2)
        return perr(ps, line, "'%.*s': createpolicy needs an eviction priority .L2::evict_last, _normal, _first or _unchanged, "
                    "then at most .L2::evict_first or .L2::evict_unchanged", (int)len, s);
    if (range) {
        for (unsigned i = 2; i < in->nops && i < 4; i++) {
            const struct RegRange *r = in->ok[i] == EMU_OK_REG ? slot_range(ps, in->o[i]) : NULL;
            if (r && emu_type_size(r->ty) != 4)
                return perr(ps, line, "'%.*s': the sizes are 32-bit, not .%s", (int)len, s, emu_type_name(r->ty));
        }
        return true;
    }
    uint64_t v;
    if (in->nops > 1 && in->ok[1] == EMU_OK_REG && const_value(ps, in->o[1], &v)) {
        float f;
        uint32_t b = (uint32_t)v;
        memcpy(&f, &b, 4);
        if (!(f > 0.0f && f <= 1.0f)) return perr(ps, line, "'%.*s': the fraction %g is not in (0, 1]", (int)len, s, (double)f);
    }
    return true;
}

/* The operands that have the instruction's type, checked against their registers' declared types. */
static bool check_types(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    unsigned mask = 0; /* operands of type in->ty, strictly */
    switch (in->op) {
    case EMU_OP_ADD: case EMU_OP_SUB: case EMU_OP_MIN: case EMU_OP_MAX: case EMU_OP_ABS: case EMU_OP_NEG: case EMU_OP_AND:
    case EMU_OP_OR: case EMU_OP_XOR: case EMU_OP_NOT: case EMU_OP_CNOT: case EMU_OP_DIV: case EMU_OP_REM: case EMU_OP_RCP:
    case EMU_OP_SQRT: case EMU_OP_RSQRT: case EMU_OP_EX2: case EMU_OP_LG2: case EMU_OP_SIN: case EMU_OP_COS: case EMU_OP_TANH:
    case EMU_OP_COPYSIGN: case EMU_OP_FMA: case EMU_OP_MOV: mask = 0xF; break;
    case EMU_OP_MUL: case EMU_OP_MAD: mask = in->flags & EMU_F(WIDE) ? 0x6 : 0xF; break; /* .wide: d (and c) twice as wide */
    case EMU_OP_MUL24: case EMU_OP_MAD24: mask = 0xF; break; /* mul24.lo.u32 %rd1: "Arguments mismatch" (it loaded) */
    case EMU_OP_SELP: mask = 0x7; break;
    case EMU_OP_SETP: /* d is a predicate (setp.ge.f32 %r1: "Arguments mismatch"; it loaded and wrote 0 or 1) */
        if (in->ok[0] == EMU_OK_REG && !check_operand_type(ps, in, 0, EMU_T_PRED, false, line, s, len)) return false;
        mask = 0x6;
        break;
    /* found by scripts/ptx_diff.py, each "Arguments mismatch" (they loaded and ran on the registers' bits): the carry
     * chain's operands, an atomic's d, b and c and a reduction's b of the type (atom.global.add.u32 %rd1, ..), vote's
     * d a predicate (.ballot: .b32) */
    case EMU_OP_ADDC: case EMU_OP_SUBC: mask = 0x7; break;
    case EMU_OP_MADC: mask = 0xF; break;
    case EMU_OP_ATOM: mask = 0xD; break;
    case EMU_OP_RED: mask = 0x2; break;
    case EMU_OP_REDUX: mask = in->ty == EMU_T_PRED ? 0 : 0x3; break; /* .pred: parse_words.c's message */ /* redux.sync.min.s32 %rd3, %r2, ..: "Arguments mismatch" (it loaded) */
    case EMU_OP_VOTE: /* its source a predicate and its member mask a 32-bit register (vote.sync.all.pred %p1, %rd3, ..;
                       * vote.sync.any.pred %p1, %p2, %p3) */
        return (in->ok[0] != EMU_OK_REG ||
                check_operand_type(ps, in, 0, in->mode == EMU_MODE_BALLOT ? EMU_T_B32 : EMU_T_PRED, false, line, s, len)) &&
               (in->nops < 2 || in->ok[1] != EMU_OK_REG || check_operand_type(ps, in, 1, EMU_T_PRED, false, line, s, len)) &&
               (in->nops < 3 || in->ok[2] != EMU_OK_REG || check_operand_type(ps, in, 2, EMU_T_B32, false, line, s, len));
    case EMU_OP_MATCH: /* d and the member mask 32 bits, the value of the type (match.any.sync.b32 %r1, %rd2, ..:
                        * "Arguments mismatch"; it loaded and compared the register's bits) */
        return (in->ok[0] != EMU_OK_REG || check_operand_type(ps, in, 0, EMU_T_B32, false, line, s, len)) &&
               (in->nops < 2 || in->ok[1] != EMU_OK_REG || check_operand_type(ps, in, 1, in->ty, false, line, s, len)) &&
               (in->nops < 3 || in->ok[2] != EMU_OK_REG || check_operand_type(ps, in, 2, EMU_T_B32, false, line, s, len));
    case EMU_OP_SHL: case EMU_OP_SHR: mask = 0x3; break;
    case EMU_OP_CVTA: mask = 0x3; break; /* cvta.to.shared.u64 %rd1, %r2: "Arguments mismatch" */
    case EMU_OP_MAPA: /* ptxas: "Arguments mismatch" for mapa.u32 of a 64-bit address (it was cut to 32 bits) */
        if (in->nops > 2 && !check_int32_operand(ps, in, 2, line, s, len)) return false; /* the CTA id */
        mask = 0x3;
        break;
    case EMU_OP_GETCTARANK: /* d is 32 bits whatever the address's type */
        return check_operand_type(ps, in, 0, EMU_T_U32, false, line, s, len) &&
               (in->ok[1] != EMU_OK_REG || check_operand_type(ps, in, 1, in->ty, false, line, s, len));
    /* sm_90's: elect's lane id and stmatrix's sources are 32-bit registers, red.async's value has its type, a tensor
     * copy's coordinates are .s32 (ptxas: "Arguments mismatch"; each loaded and ran on the register's low bits) */
    case EMU_OP_ELECT: /* d and the member mask 32-bit integers */
        return (in->o[0] == EMU_SLOT_SINK || check_int32_operand(ps, in, 0, line, s, len)) && check_int32_operand(ps, in, 1, line, s, len);
    case EMU_OP_STMATRIX: return check_operand_type(ps, in, 1, EMU_T_B32, false, line, s, len);
    case EMU_OP_RED_ASYNC: return check_operand_type(ps, in, 1, in->ty, false, line, s, len);
    case EMU_OP_MBARRIER: { /* states are 64 bits; counts, tx bytes, parities, time hints and pending_count's d 32-bit
                           * integers (ptxas: "Arguments mismatch" for an .f32 one, which loaded and ran on its bits) */
        bool state_first = in->mode != EMU_MODE_MB_INIT && in->mode != EMU_MODE_MB_INVAL && in->mode != EMU_MODE_MB_EXPECT_TX &&
                           in->mode != EMU_MODE_MB_COMPLETE_TX && in->mode != EMU_MODE_MB_TEST_WAIT && in->mode != EMU_MODE_MB_TRY_WAIT;
        bool wait = in->mode == EMU_MODE_MB_TEST_WAIT || in->mode == EMU_MODE_MB_TRY_WAIT;
        for (unsigned i = 0; i < in->nops; i++) {
            if (in->ok[i] != EMU_OK_REG || in->o[i] == EMU_SLOT_SINK || (i == 0 && wait)) continue; /* a wait's predicate */
            bool wide = i == 0 ? state_first && in->mode != EMU_MODE_MB_PENDING
                               : i == 1 ? in->mode == EMU_MODE_MB_PENDING : i == 2 && wait && !(in->flags & EMU_F(PARITY));
            if (!check_operand_type(ps, in, i, wide ? EMU_T_B64 : EMU_T_U32, false, line, s, len)) return false;
        }
        return true;
    }
    case EMU_OP_WGMMA: { /* D of its type (f16: packed pairs), A's registers 32 bits, descriptors 64, scale-d a predicate
                          * or an immediate 0 or 1 (ptxas: "Arguments mismatch", "expected to be 0 or 1"; each loaded) */
        unsigned dt = in->ty == EMU_T_F16 ? EMU_T_F16X2 : in->ty, sc = (in->xflags & EMU_XF_MMA_SP) ? 5 : 3;
        bool int_a = in->ty2 == EMU_T_S8 || in->ty2 == EMU_T_U8 || in->ty2 == EMU_T_B1;
        if (!check_operand_type(ps, in, 0, EMU_T_B32, false, line, s, len) ||
            !check_wgmma_list(ps, in, 0, dt == EMU_T_F32 ? WGR_F : dt == EMU_T_F16X2 ? WGR_H : WGR_I,
                              dt == EMU_T_F32 ? "D of .f32: .f32 or .b32 registers"
                                              : dt == EMU_T_F16X2 ? "D of .f16: .f16x2 or .b32 registers" : "D of .s32: .s32, .u32 or .b32 registers",
                              line, s, len) ||
            !check_operand_type(ps, in, 1, in->ok[1] == EMU_OK_VEC ? EMU_T_B32 : EMU_T_B64, false, line, s, len) ||
            (in->ok[1] == EMU_OK_VEC &&
             !check_wgmma_list(ps, in, 1, int_a ? WGR_P | WGR_I | WGR_F | WGR_H : WGR_H,
                               "A of a floating-point type: .f16x2 or .b32 registers", line, s, len)) ||
            !check_operand_type(ps, in, 2, EMU_T_B64, false, line, s, len))
            return false;
        /* a vector width ptxas takes (warning "Vector Type not specified properly") when it is D's register count and
         * D holds at most 128 bits: .v4 of m64n8's f32 or s32 D, .v2 of m64n8's f16 D, .v4 of m64n16's; it changes
         * nothing.  ptxas refuses any other ("Argument vector size mismatch", "Vector type too large, exceeds 128
         * bit limit", "Multiple vector modifiers specified"). */
        unsigned nv = 0, vw = 0, nd = in->ok[0] == EMU_OK_VEC ? in->on[0] : 1;
        for (uint32_t k = 0; k + 2 < len; k++)
            if (s[k] == '.' && s[k + 1] == 'v' && (s[k + 2] == '2' || s[k + 2] == '4' || s[k + 2] == '8') &&
                (k + 3 == len || s[k + 3] == '.'))
                nv++, vw = (unsigned)(s[k + 2] - '0');
        if (nv > 1)
            return perr(ps, line, "'%.*s': wgmma.mma_async takes one vector width (ptxas: multiple vector modifiers)", (int)len, s);
        if (nv && (vw != nd || vw * 32 > 128))
            return perr(ps, line, "'%.*s': wgmma.mma_async's .v%u is not D's register count (%u registers, at most 128 bits: "
                        "ptxas takes .v%u only where D is %u registers)", (int)len, s, vw, nd, vw, vw);
        uint64_t v;
        if (in->nops > sc && in->ok[sc] == EMU_OK_REG &&
            (const_value(ps, in->o[sc], &v) ? v > 1 : !slot_is_pred(ps, in->o[sc])))
            return perr(ps, line, "'%.*s': scale-d (operand %u) is a predicate or an immediate 0 or 1", (int)len, s, sc + 1);
        return true;
    }
    case EMU_OP_CP_BULK: case EMU_OP_CP_RED_BULK: /* size a 32-bit integer, ctaMask a 16-bit one (an .f32 size or .f16
                                                   * mask: "Arguments mismatch"; they loaded and ran on the bits) */
        return (in->nops < 3 || in->ok[2] != EMU_OK_REG || check_int32_operand(ps, in, 2, line, s, len)) &&
               (in->nops < 5 || in->ok[4] != EMU_OK_REG || check_operand_type(ps, in, 4, EMU_T_U16, false, line, s, len));
    case EMU_OP_CP_BULK_TENSOR: case EMU_OP_CP_RED_BULK_TENSOR: case EMU_OP_CP_BULK_PREFETCH: { /* and ctaMask 16 bits */
        /* the coordinates 32 bits; .im2col's offsets 16 (ptxas: "Incompatible elements of vector expression") */
        unsigned xo = in->xflags & EMU_XF_IM2COL && in->op != EMU_OP_CP_RED_BULK_TENSOR ? in->op == EMU_OP_CP_BULK_PREFETCH ? 2 : 4 : 0;
        for (unsigned i = 0; i < in->nops; i++)
            if (in->ok[i] == EMU_OK_VEC && !check_operand_type(ps, in, i, xo && i == xo ? EMU_T_B16 : EMU_T_B32, false, line, s, len))
                return false;
        if (in->op == EMU_OP_CP_BULK_PREFETCH && in->nops > 1 && in->ok[1] == EMU_OK_REG && !check_int32_operand(ps, in, 1, line, s, len))
            return false; /* [a], size */
        unsigned mask = xo == 4 ? 5 : 4;
        return in->op != EMU_OP_CP_BULK_TENSOR || in->nops <= mask || in->ok[mask] != EMU_OK_REG ||
               check_operand_type(ps, in, mask, EMU_T_B16, false, line, s, len);
    }
    case EMU_OP_LD: case EMU_OP_LDU:
        return !type_plain(in->ty) || check_operand_type(ps, in, 0, in->ty, true, line, s, len);
    case EMU_OP_ST: return !type_plain(in->ty) || check_operand_type(ps, in, 1, in->ty, true, line, s, len);
    case EMU_OP_CVT: {
        /* a conversion from or to .bf16 takes registers of its types' sizes, not the wider ones the relaxed rule takes
         * ("Arguments mismatch for instruction 'cvt'"): the byte of .u8/.s8 in an 8-bit register (.b8 .u8 .s8; sm_90),
         * the .bf16, .f16 or .u16 in a 16-bit one (cvt.rn.bf16.u8 of a .b16, cvt.f16.bf16 %r1 and cvt.f32.bf16 %f1, %r1
         * loaded and ran; cvt.rn.f16.f32 %r1 ptxas takes) */
        bool strict_d = in->ty == EMU_T_BF16 || in->ty2 == EMU_T_BF16, strict_a = strict_d;
        return (!type_plain(in->ty) || check_operand_type(ps, in, 0, in->ty, !strict_d, line, s, len)) &&
               (!type_plain(in->ty2) || in->nops < 2 || check_operand_type(ps, in, 1, in->ty2, !strict_a, line, s, len));
    }
    default: return true;
    }
    /* the packed pairs too: 32-bit registers (max.u16x2 %rd1, ..: "Arguments mismatch"; it loaded) */
    bool pair = in->ty == EMU_T_F16X2 || in->ty == EMU_T_BF16X2 || in->ty == EMU_T_U16X2 || in->ty == EMU_T_S16X2;
    if (in->ty2 || !(type_plain(in->ty) || pair) || (in->op == EMU_OP_MOV && in->nops != 2)) return true; /* mixed types: not these rules */
    for (unsigned i = 0; i < in->nops && i < 4; i++)
        if ((mask >> i & 1) && in->ok[i] == EMU_OK_REG && !check_operand_type(ps, in, i, in->ty, false, line, s, len)) return false;
    if ((in->op == EMU_OP_MUL || in->op == EMU_OP_MAD) && (in->flags & EMU_F(WIDE))) {
        /* d (and mad's c) are twice as wide as a and b: mul.wide.u32 %r1 or mad.wide.s32 .., %r1 ("Arguments mismatch")
         * loaded and kept the product's low half */
        unsigned w = in->ty == EMU_T_U16 ? EMU_T_U32 : in->ty == EMU_T_S16 ? EMU_T_S32 : in->ty == EMU_T_U32 ? EMU_T_U64
                   : in->ty == EMU_T_S32 ? EMU_T_S64 : 0;
        for (unsigned i = 0; w && i < in->nops && i < 4; i += 3)
            if (in->ok[i] == EMU_OK_REG && !check_operand_type(ps, in, i, w, false, line, s, len)) return false;
    }
    return true;
}

/* An immediate operand of type ty (emu_imm_type) of the kind ptxas 13 takes there (its "Arguments mismatch", tried
 * type by type; the emulator read 1 as 1.0 and 1.0 as 1): a float type (.f32 .f64 .tf32) takes a float literal
 * (1.0, 1e3, 0f3F800000, 0d3FF0000000000000), not an integer one (`add.f32 %f, %f, 1`, `setp.nan.f32 %p, 1, %f`,
 * `cvt.rzi.s32.f32 %r, 1`); an integer type an integer; a .bN type an integer or the hex float of its size
 * (`mov.b32 %r, 0f3F800000`, not 1.0 nor a 0d one); .pred an integer; the half and packed types
 * (.f16 .bf16 .f16x2 .u16x2 ...) no immediate at all. */
bool emu_check_imm_kind(Parser *ps, const EmuIns *in, unsigned i, const Imm *im, uint32_t line, const char *s, uint32_t len) {
    unsigned ty = emu_imm_type(in, i), kind = emu_type_kind(ty), size = emu_type_size(ty);
    const char *why = NULL;
    bool packed = ty == EMU_T_F16X2 || ty == EMU_T_BF16X2 || ty == EMU_T_U16X2 || ty == EMU_T_S16X2 || ty == EMU_T_E4M3X2 ||
                  ty == EMU_T_E5M2X2;
    if (packed || (kind == EMU_K_F && size < 4)) why = "takes no immediate (give it a register: mov.b16 %h, 0x3C00 is 1.0 in .f16)";
    else if (kind == EMU_K_F && im->kind == IMM_INT) why = "takes a float immediate, not an integer one (1.0 or 0f3F800000 for 1)";
    else if ((kind == EMU_K_U || kind == EMU_K_S || kind == EMU_K_PRED) && im->kind != IMM_INT)
        why = "takes an integer immediate, not a float one";
    else if (kind == EMU_K_B && size <= 8 &&
             (im->kind == IMM_FLOAT || (im->kind == IMM_F32BITS && size != 4) || (im->kind == IMM_F64BITS && size != 8)))
        why = "takes an integer immediate or the hex float of its size (0fXXXXXXXX for 32 bits, 0dXXXXXXXXXXXXXXXX for 64)";
    if (!why) return true;
    return perr(ps, line, "'%.*s': operand %u is .%s, which %s", (int)len, s, i + 1, emu_type_name(ty), why);
}

/* Every check of this file, in order: addresses, cp.async's and createpolicy's own forms, then the register types. */
bool emu_check_operands(Parser *ps, const EmuIns *in, uint32_t line, const char *s, uint32_t len) {
    return check_addresses(ps, in, line, s, len) && (in->op != EMU_OP_CP_ASYNC || check_cp_async(ps, in, line, s, len)) &&
           (in->op != EMU_OP_CREATEPOLICY || check_createpolicy(ps, in, line, s, len)) && check_types(ps, in, line, s, len);
}

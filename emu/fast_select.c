/* fast_select.c - which fast form (fast.h) runs an instruction: emu_fast_select, at load time, looks at the opcode,
 * type, modifiers and operand kinds, and returns FAST_NONE for anything the family executors must run (a guard, a
 * modifier the handler does not implement, an operand that is no register).  emu_fast_dispatch and emu_fast_global
 * are the interpreter's and the global-access hint's questions about the choice. */
#include "emu/exec.h"
#include "emu/fast.h"

uint8_t emu_fast_dispatch(const EmuIns *in) { return in->guard == EMU_SLOT_TRUE && !in->gneg ? (uint8_t)(1 + in->fast) : 0; }

bool emu_fast_global(uint8_t fast) {
    switch (fast) {
    case FAST_LDG32: case FAST_LDG64: case FAST_LDG128: case FAST_LDG_V2:
    case FAST_STG32: case FAST_STG64: case FAST_STG128: case FAST_STG_V2: case FAST_CPA16: case FAST_LDG16: case FAST_STG16: return true;
    }
    return false;
}

uint8_t emu_fast_select(const EmuIns *in, bool entry) {
    unsigned sz = emu_type_size(in->ty), kind = emu_type_kind(in->ty);
    bool isint = (kind == EMU_K_B || kind == EMU_K_U || kind == EMU_K_S) && in->ty != EMU_T_U16X2 && in->ty != EMU_T_S16X2;
    bool plainf = in->ty == EMU_T_F32 && (in->rnd == EMU_RND_NONE || in->rnd == EMU_RND_RN) &&
                  !(in->flags & (EMU_F(FTZ) | EMU_F(SAT)));
    bool plaind = in->ty == EMU_T_F64 && (in->rnd == EMU_RND_NONE || in->rnd == EMU_RND_RN) && !in->flags;
    bool regs = true;
    for (unsigned i = 0; i < in->nops; i++) regs = regs && in->ok[i] == EMU_OK_REG;
    /* {add,sub,mul,fma}[.rn].{f16,bf16,f16x2,bf16x2} without .ftz/.sat/.relu/.oob (emu_half_arith) */
    bool plainh = (in->ty == EMU_T_F16 || in->ty == EMU_T_BF16 || in->ty == EMU_T_F16X2 || in->ty == EMU_T_BF16X2) &&
                  (in->rnd == EMU_RND_NONE || in->rnd == EMU_RND_RN) && !in->flags && !in->xflags && regs &&
                  in->nops >= 3;
    switch (in->op) {
    case EMU_OP_MOV: /* not of %clock, %globaltimer and the like: exec_mov reads the clock */
        /* mov.b32 {a, b}, r and mov.b32 r, {a, b} (the bf16 and f16 halves of the element-wise kernels): the low half first */
        if (sz == 4 && in->ty != EMU_T_PRED && in->nops == 2 && in->ok[0] == EMU_OK_VEC && in->on[0] == 2 && in->ok[1] == EMU_OK_REG &&
            !emu_sreg_is_clock(in->o[1]))
            return FAST_UNPACK_H2;
        if (sz == 4 && in->ty != EMU_T_PRED && in->nops == 2 && in->ok[0] == EMU_OK_REG && in->ok[1] == EMU_OK_VEC && in->on[1] == 2)
            return FAST_PACK_H2;
        if (!regs || in->nops != 2 || emu_sreg_is_clock(in->o[1])) return FAST_NONE;
        return sz == 8 ? FAST_MOV64 : sz == 4 ? FAST_MOV32 : sz == 2 ? FAST_MOV16 : FAST_NONE;
    case EMU_OP_ADD: case EMU_OP_SUB:
        if (isint && !(in->flags & (EMU_F(SAT) | EMU_F(CC))) && (sz == 4 || sz == 8))
            return in->op == EMU_OP_ADD ? (sz == 4 ? FAST_ADD32 : FAST_ADD64) : (sz == 4 ? FAST_SUB32 : FAST_SUB64);
        if (plainf) return in->op == EMU_OP_ADD ? FAST_FADD : FAST_FSUB;
        if (plaind) return in->op == EMU_OP_ADD ? FAST_DADD : FAST_DSUB;
        return plainh ? FAST_HARITH : FAST_NONE;
    case EMU_OP_MUL:
        if (isint && (in->flags & EMU_F(LO)) && (sz == 4 || sz == 8)) return sz == 4 ? FAST_MULLO32 : FAST_MULLO64;
        if (isint && (in->flags & EMU_F(WIDE)) && sz == 4) return kind == EMU_K_S ? FAST_MULWIDE_S32 : FAST_MULWIDE_U32;
        if (plainf) return FAST_FMUL;
        if (plaind) return FAST_DMUL;
        return plainh ? FAST_HARITH : FAST_NONE;
    case EMU_OP_MAD:
        if (isint && (in->flags & EMU_F(LO)) && !(in->flags & (EMU_F(SAT) | EMU_F(CC))) && (sz == 4 || sz == 8))
            return sz == 4 ? FAST_MADLO32 : FAST_MADLO64;
        if (plainf && in->rnd == EMU_RND_RN) return FAST_FFMA;
        if (plaind && in->rnd == EMU_RND_RN) return FAST_DFMA;
        return FAST_NONE;
    case EMU_OP_FMA: return plainf ? FAST_FFMA : plaind ? FAST_DFMA : plainh && in->nops == 4 ? FAST_HARITH : FAST_NONE;
    case EMU_OP_SHL: return isint ? (sz == 4 ? FAST_SHL32 : sz == 8 ? FAST_SHL64 : FAST_NONE) : FAST_NONE;
    case EMU_OP_SHR:
        if (!isint) return FAST_NONE;
        if (sz == 4) return kind == EMU_K_S ? FAST_SHRS32 : FAST_SHRU32;
        if (sz == 8) return kind == EMU_K_S ? FAST_SHRS64 : FAST_SHRU64;
        return FAST_NONE;
    case EMU_OP_AND: case EMU_OP_OR: case EMU_OP_XOR:
        if (in->ty == EMU_T_PRED) { /* predicates hold 0 or 1 (a `!p` operand is the checked path's) */
            if (!regs || in->nops != 3 || in->on[1] || in->on[2]) return FAST_NONE;
            return in->op == EMU_OP_AND ? FAST_PAND : in->op == EMU_OP_OR ? FAST_POR : FAST_PXOR;
        }
        if (!isint || (sz != 2 && sz < 4)) return FAST_NONE;
        if (sz == 2) return in->op == EMU_OP_AND ? FAST_AND16 : in->op == EMU_OP_OR ? FAST_OR16 : FAST_XOR16;
        if (in->op == EMU_OP_AND) return sz == 4 ? FAST_AND32 : FAST_AND64;
        if (in->op == EMU_OP_OR) return sz == 4 ? FAST_OR32 : FAST_OR64;
        return sz == 4 ? FAST_XOR32 : FAST_XOR64;
    case EMU_OP_SETP:
        /* setp.cmp.f32 p, a, b (the attention kernels' masks and running maxima; not .ftz) */
        if (in->ty == EMU_T_F32 && !in->flags && !in->xflags && in->boolop == EMU_MODE_AAND && in->o[3] == EMU_SLOT_TRUE &&
            in->o[4] == EMU_SLOT_SINK && !in->on[1] && !in->on[2] && !in->on[3])
            return FAST_FSETP;
        if (!isint || in->boolop != EMU_MODE_AAND || in->o[3] != EMU_SLOT_TRUE || in->o[4] != EMU_SLOT_SINK) return FAST_NONE;
        if (in->on[1] || in->on[2] || in->on[3]) return FAST_NONE;
        if (sz == 4) return kind == EMU_K_S ? FAST_SETP_S32 : FAST_SETP_U32;
        if (sz == 8) return kind == EMU_K_S ? FAST_SETP_S64 : FAST_SETP_U64;
        return FAST_NONE;
    case EMU_OP_SELP: return in->on[3] ? FAST_NONE : FAST_SELP;
    case EMU_OP_MIN: case EMU_OP_MAX:
        if (in->ty == EMU_T_S32 && !in->flags) return in->op == EMU_OP_MIN ? FAST_MIN_S32 : FAST_MAX_S32;
        if (in->ty == EMU_T_U32 && !in->flags) return in->op == EMU_OP_MIN ? FAST_MIN_U32 : FAST_MAX_U32;
        if (in->ty == EMU_T_S64 && !in->flags) return in->op == EMU_OP_MIN ? FAST_MIN_S64 : FAST_MAX_S64;
        if (in->ty == EMU_T_U64 && !in->flags) return in->op == EMU_OP_MIN ? FAST_MIN_U64 : FAST_MAX_U64;
        if (in->ty == EMU_T_F32 && !in->flags && !in->xflags && in->rnd == EMU_RND_NONE && regs) return in->op == EMU_OP_MIN ? FAST_FMIN : FAST_FMAX;
        /* min/max.NaN.f32 (the attention kernels' running row maximum): a NaN operand gives the canonical NaN */
        if (in->ty == EMU_T_F32 && in->flags == EMU_F(NANP) && !in->xflags && in->rnd == EMU_RND_NONE && regs)
            return in->op == EMU_OP_MIN ? FAST_FMIN_NAN : FAST_FMAX_NAN;
        return FAST_NONE;
    case EMU_OP_NEG: case EMU_OP_ABS: /* neg/abs.f32 without .ftz: the sign bit (a NaN keeps its payload, exec_float.c) */
        if (in->ty == EMU_T_F32 && !in->flags && !in->xflags && in->rnd == EMU_RND_NONE && in->nops == 2 && regs)
            return in->op == EMU_OP_NEG ? FAST_FNEG : FAST_FABS;
        return FAST_NONE;
    case EMU_OP_EX2: /* ex2.approx[.ftz].f32 (softmax): the host's exp2 in double, rounded once to f32 */
        if (in->ty == EMU_T_F32 && (in->flags == EMU_F(APPROX) || in->flags == (EMU_F(APPROX) | EMU_F(FTZ))) && !in->xflags &&
            in->rnd == EMU_RND_NONE && in->nops == 2 && regs)
            return FAST_EX2;
        return FAST_NONE;
    case EMU_OP_CVT: /* cvt.rn.{f16x2,bf16x2}.f32 d, a, b (packing P for the second mma): a to the upper half */
        if ((in->ty == EMU_T_F16X2 || in->ty == EMU_T_BF16X2) && in->ty2 == EMU_T_F32 && in->rnd == EMU_RND_RN && !in->flags &&
            !in->xflags && in->nops == 3 && regs)
            return FAST_CVT_H2;
        /* integer to integer of 32 and 64 bits without .sat (index arithmetic): a 32-bit result, or a 32-bit source
         * widened, is the low word sign- or zero-extended as the destination's (or the source's) type says */
        if ((kind == EMU_K_U || kind == EMU_K_S) && (emu_type_kind(in->ty2) == EMU_K_U || emu_type_kind(in->ty2) == EMU_K_S) &&
            (sz == 4 || sz == 8) && (emu_type_size(in->ty2) == 4 || emu_type_size(in->ty2) == 8) && !in->flags && !in->xflags &&
            in->rnd == EMU_RND_NONE && in->nops == 2 && regs) {
            unsigned sk = sz == 4 ? kind : emu_type_size(in->ty2) == 4 ? emu_type_kind(in->ty2) : 0;
            return !sk ? FAST_MOV64 : sk == EMU_K_S ? FAST_CVT_SX32 : FAST_CVT_ZX32;
        }
        /* the element-wise kernels' conversions (emu_cvt_* in exec.h): the other integer ones without .sat (cvt.u32.u16),
         * cvt.{rni,rzi,rmi,rpi}.f32.f32, cvt.f32.{bf16,f16} (exact), cvt.rn.{bf16,f16}.f32,
         * cvt.{rni,rzi,rmi,rpi}[.ftz].{s32,u32}.f32 and cvt.rn.f32.{s32,u32,s64,u64} (the host's conversion, to nearest) */
        if (in->xflags || in->nops != 2 || !regs) return FAST_NONE;
        if (!in->flags && (kind == EMU_K_U || kind == EMU_K_S) && (emu_type_kind(in->ty2) == EMU_K_U || emu_type_kind(in->ty2) == EMU_K_S) &&
            in->rnd == EMU_RND_NONE)
            return FAST_CVT_II;
        if (!in->flags && in->ty == EMU_T_F32 && in->ty2 == EMU_T_F32 && in->rnd >= EMU_RND_RNI) return FAST_CVT_F32_F32I;
        if (!in->flags && in->ty == EMU_T_F32 && (in->ty2 == EMU_T_BF16 || in->ty2 == EMU_T_F16) &&
            (in->rnd == EMU_RND_NONE || in->rnd == EMU_RND_RN))
            return FAST_CVT_F32_H;
        if (!in->flags && (in->ty == EMU_T_BF16 || in->ty == EMU_T_F16) && in->ty2 == EMU_T_F32 && in->rnd == EMU_RND_RN)
            return FAST_CVT_H_F32;
        if (!(in->flags & ~EMU_F(FTZ)) && (in->ty == EMU_T_S32 || in->ty == EMU_T_U32) && in->ty2 == EMU_T_F32 && in->rnd >= EMU_RND_RNI)
            return FAST_CVT_I32_F32;
        if (!in->flags && in->ty == EMU_T_F32 && in->rnd == EMU_RND_RN &&
            (in->ty2 == EMU_T_S32 || in->ty2 == EMU_T_U32 || in->ty2 == EMU_T_S64 || in->ty2 == EMU_T_U64))
            return FAST_CVT_F32_I;
        return FAST_NONE;
    case EMU_OP_BFE: /* bfe.u32 d, a, pos, len (the low bytes of pos and len) */
        return in->ty == EMU_T_U32 && !in->flags && !in->xflags && in->nops == 4 && regs ? FAST_BFE_U32 : FAST_NONE;
    case EMU_OP_DIV: /* div.rn.f32: IEEE division (not .approx, .full, .ftz, .sat) */
        if (in->ty == EMU_T_F32 && (in->rnd == EMU_RND_NONE || in->rnd == EMU_RND_RN) && !in->flags && !in->xflags && regs)
            return FAST_FDIV;
        return FAST_NONE;
    case EMU_OP_LD: case EMU_OP_LDU: case EMU_OP_ST: {
        /* the value operand: one register, or a vector of in->vec registers */
        unsigned ai = in->op == EMU_OP_ST ? 0 : 1, vi = 1 - ai;
        if (in->nops != 2 || in->ok[ai] != EMU_OK_ADDR) return FAST_NONE;
        if (in->xflags & (EMU_XF_ACQUIRE | EMU_XF_RELEASE)) return FAST_NONE; /* racecheck follows them (exec_mem.c) */
        /* strong global accesses are host atomics there (other blocks run on other host threads) */
        if ((in->xflags & EMU_XF_STRONG) && in->space != EMU_SP_SHARED) return FAST_NONE;
        bool scalar = in->vec == 1 && in->ok[vi] == EMU_OK_REG;
        bool vec4 = in->vec == 4 && in->ok[vi] == EMU_OK_VEC && in->on[vi] == 4;
        bool vec2 = in->vec == 2 && in->ok[vi] == EMU_OK_VEC && in->on[vi] == 2;
        bool ld = in->op != EMU_OP_ST;
        /* ld.s32 into a 64-bit register sign-extends (LLVM folds sext(load i32) into ld.param.s32 %rd,
         * ld.global.s32 %rd): the checked path extends by the type, these copy bits */
        if (ld && sz == 4 && emu_type_kind(in->ty) == EMU_K_S) return FAST_NONE;
        if (in->space == EMU_SP_GLOBAL || in->op == EMU_OP_LDU) {
            if (scalar && sz == 4) return ld ? FAST_LDG32 : FAST_STG32;
            if (scalar && sz == 8) return ld ? FAST_LDG64 : FAST_STG64;
            if (vec4 && sz == 4) return ld ? FAST_LDG128 : FAST_STG128;
            if (vec2 && sz == 4) return ld ? FAST_LDG_V2 : FAST_STG_V2; /* the mma tiles' epilogue: a row pair of C */
            /* 16-bit elements (f16 and bf16 tensors), not sign-extending */
            if (scalar && sz == 2 && (emu_type_kind(in->ty) == EMU_K_B || emu_type_kind(in->ty) == EMU_K_U)) return ld ? FAST_LDG16 : FAST_STG16;
        }
        if (in->space == EMU_SP_SHARED && scalar && sz == 4) return ld ? FAST_LDS32 : FAST_STS32;
        /* 16-bit (not sign-extending) and 16-byte shared accesses: the plain case only, anything else (racecheck,
         * wgmma or bulk reads in flight, out of bounds, misaligned, another CTA's) the checked path */
        if (in->space == EMU_SP_SHARED && scalar && sz == 2 && (emu_type_kind(in->ty) == EMU_K_B || emu_type_kind(in->ty) == EMU_K_U))
            return ld ? FAST_LDS16 : FAST_STS16;
        if (in->space == EMU_SP_SHARED && vec4 && sz == 4) return ld ? FAST_LDS128 : FAST_STS128;
        /* ld.shared.v2.b16 (sm_90a attention's P and V halves) */
        if (in->space == EMU_SP_SHARED && ld && vec2 && sz == 2 && (emu_type_kind(in->ty) == EMU_K_B || emu_type_kind(in->ty) == EMU_K_U))
            return FAST_LDS_V2H;
        /* the kernel's parameters (a .func's own are in its frame: emu_param) */
        if (in->space == EMU_SP_PARAM && entry && ld && scalar && (sz == 4 || sz == 8)) return sz == 4 ? FAST_LDP32 : FAST_LDP64;
        return FAST_NONE; /* param, local, const and generic addresses go through the checked path */
    }
    case EMU_OP_CVTA:
        return in->space == EMU_SP_GLOBAL ? FAST_CVTA_ID : FAST_NONE;
    case EMU_OP_CP_ASYNC: /* cp.async [d], [s], cp-size[, src-size]: the handler takes a 16-byte copy of all or none of
                           * the source (not the ignore-src predicate form) */
        if (in->ok[0] != EMU_OK_ADDR || in->ok[1] != EMU_OK_ADDR || in->ok[2] != EMU_OK_REG || (in->xflags & EMU_XF_IGNORE_SRC))
            return FAST_NONE;
        return in->nops == 3 || (in->nops == 4 && in->ok[3] == EMU_OK_REG) ? FAST_CPA16 : FAST_NONE;
    case EMU_OP_CP_ASYNC_COMMIT: case EMU_OP_CP_ASYNC_WAIT: case EMU_OP_CP_ASYNC_WAIT_ALL:
        return FAST_CPA_GROUP; /* the copies are done at issue: only racecheck has work here */
    case EMU_OP_BRA: return FAST_BRA; /* the interpreter's own: a jump, a look at the clock in loops */
    }
    return FAST_NONE;
}

/* fast.h - the interpreter's fast forms: one handler each in exec_loop.h, chosen per instruction at load time by
 * emu_fast_select (fast_select.c) for the common forms whose operands and modifiers it can run without the family
 * executors' checks (32/64-bit integer arithmetic, f32/f64 arithmetic, f16/bf16 add/sub/mul/fma, global and shared memory, kernel
 * parameters, the element-wise kernels' conversions, bra).  Included by exec.c (exec_loop.h's table) and
 * fast_select.c. */
#ifndef TILE_EMU_FAST_H
#define TILE_EMU_FAST_H

#define EMU_FASTS(X) \
    X(MOV32) X(MOV64) X(ADD32) X(ADD64) X(SUB32) X(SUB64) X(MULLO32) X(MULLO64) X(MADLO32) X(MADLO64) \
    X(MULWIDE_S32) X(MULWIDE_U32) X(SHL32) X(SHL64) X(SHRU32) X(SHRS32) X(SHRU64) X(SHRS64) \
    X(AND32) X(OR32) X(XOR32) X(AND64) X(OR64) X(XOR64) X(SETP_S32) X(SETP_U32) X(SETP_S64) X(SETP_U64) \
    X(SELP) X(FADD) X(FSUB) X(FMUL) X(FFMA) X(DADD) X(DSUB) X(DMUL) X(DFMA) X(LDG32) X(LDG64) X(LDG128) X(STG32) X(STG64) X(STG128) \
    X(LDS32) X(STS32) X(LDP32) X(LDP64) X(CVTA_ID) X(MIN_S32) X(MAX_S32) X(BRA) \
    X(LDS16) X(STS16) X(LDS128) X(STS128) X(FDIV) X(FMIN) X(FMAX) X(FMIN_NAN) X(FMAX_NAN) X(EX2) X(CVT_H2) \
    X(CPA16) X(LDG_V2) X(STG_V2) X(PAND) X(POR) X(PXOR) \
    X(MOV16) X(FSETP) X(FNEG) X(FABS) X(CVT_SX32) X(CVT_ZX32) X(MIN_S64) X(MAX_S64) X(MIN_U64) X(MAX_U64) X(LDS_V2H) X(CPA_GROUP) \
    X(CVT_F32_H) X(CVT_H_F32) X(CVT_I32_F32) X(CVT_F32_I) X(CVT_F32_F32I) X(CVT_II) X(UNPACK_H2) X(PACK_H2) \
    X(MIN_U32) X(MAX_U32) X(AND16) X(OR16) X(XOR16) X(BFE_U32) X(LDG16) X(STG16) X(HARITH)
enum {
    FAST_NONE,
#define X(e) FAST_##e,
    EMU_FASTS(X)
#undef X
};

#endif

/* exec_mma.c - tensor-core instructions: mma.sync, ldmatrix and movmatrix.
 *
 * All are warp-collective (.aligned): the scheduler (exec.c) calls them
 * once all 32 lanes of the warp wait at the same instruction.
 *
 * mma.sync.aligned.mMn8kK.row.col.dtype.atype.btype.ctype d, a, b, c (M 16; 8 for the integer m8n8k16/k32
 * and m8n8k128), and on .b1 mma.sync.aligned.mMn8kK.row.col.s32.b1.b1.s32.{and,xor}.popc (K 128 or 256):
 *   1. emu_mma_form() checks the shape/type combination and derives the
 *      fragment geometry (once, at load: EmuIns.mma): E elements per 32-bit A/B register (tf32: 1,
 *      f16/bf16: 2, s8/u8/e4m3/e5m2: 4; e4m3 and e5m2 mix; s4/u4: 8, the lowest nibble first; b1: 32,
 *      bit 0 first), M*K/(32E) A registers, K/(4E) B registers, M/4 accumulator elements per lane (f32/s32
 *      registers, or f16x2).
 *   2. Every lane's A, B and C registers are read into whole matrices
 *      (before any D is written: D often aliases C).  With
 *      g = lane / 4, t = lane % 4, the PTX ISA's layouts for all the
 *      m16n8k{4,8,16,32,64,128,256} and m8n8k{16,32,128} forms are one formula (m8n8: j and e stay
 *      below 2; m16n8k256's A table reads "(t*32) + i for i < 64", where i & 0x1F, as in m16n8k128's
 *      table, is the reading under which every element has exactly one holder):
 *        A register j, element i: row g + 8*(j & 1), col t*E + (j >> 1)*4E + i
 *        B register j, element i: row (k) t*E + j*4E + i, col (n) g
 *        C/D element e (0..3):    row g + 8*(e >> 1), col 2t + (e & 1)
 *      (an f16 accumulator holds elements 2j, 2j+1 in register j, low half first).
 *   3. Float forms: each D[m][n] starts from C[m][n] (as f32) and takes one
 *      fmaf(A[m][k], B[k][n], acc) per k in ascending order: every product is
 *      exact, every step rounds once to f32.  An f16 D is the f32 result
 *      rounded once (RN).  NaN results are the canonical NaN.  tf32 inputs
 *      are the f32 bit patterns with the low 13 mantissa bits ignored.
 *      Integer forms: exact sum in 64 bits, wrapped to s32 (.satfinite:
 *      clamped).  .b1: D[m][n] = C[m][n] + popc(row m of A and/xor column n
 *      of B), wrapped (no .satfinite).  The hardware's internal accumulation order is not
 *      documented, so float results may differ from a GPU in the last bits.
 *
 * mma.sp[::ordered_metadata].sync.aligned.m16n8kK.row.col.dtype.atype.btype.ctype d, a, b, c, e, f (sparse A):
 * emu_mma_form's sparse_form checks the form; A holds K/2 values a row in the dense m16n8k(K/2) form's registers
 * and layout, B, C and D are the dense m16n8kK form's, so the gathering above reads them; sparse_product places
 * each stored value at the column its metadata nibble names (the layout of e across the lanes is written there).
 *
 * mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 d, a, b, c and sm_90's m16n8k{4,8,16} on f64: exec_dmma
 * below (the formula above with E = 1 on 64-bit registers).  m8n8k4 on f16 (every layout): exec_hmma884.
 * The other shapes are .row.col only, as ptxas has them.
 *
 * ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16 d, [a]:
 *   lane 8i + r (r = 0..7) supplies the address of row r of matrix i
 *   (N = 1, 2, 4 matrices; other lanes' addresses are ignored).  Each row is
 *   16 bytes and must be 16-byte aligned inside shared memory; each row read
 *   is checked (memcheck, racecheck) as a read by the lane that supplied it.
 *   Lane l receives in d[i] the elements (row l/4, cols 2(l%4), 2(l%4)+1) of
 *   matrix i, low half first; with .trans, of the transposed matrix. */
#include "emu/exec.h"

#include <float.h>
#include <math.h>

static unsigned elems_per_reg(unsigned ty) {
    switch (ty) {
    case EMU_T_TF32: return 1;
    case EMU_T_F16: case EMU_T_BF16: return 2;
    case EMU_T_S8: case EMU_T_U8: case EMU_T_E4M3: case EMU_T_E5M2: return 4;
    case EMU_T_S4: case EMU_T_U4: return 8;
    case EMU_T_B1: return 32;
    }
    return 0;
}

/* mma.sp / mma.sp::ordered_metadata: the shapes and types the PTX ISA lists and ptxas takes (sm_80; e4m3/e5m2 on
 * sm_89, into f32 only: ptxas refuses the f16 accumulator on every target up to sm_90a), .row.col only. */
static bool sparse_form(const EmuIns *in, EmuMmaForm *f, const char **why) {
    unsigned d = in->ty, a = in->ty2, bt = in->ty3, c = in->ty4, k = f->k;
    bool i8 = a == EMU_T_S8 || a == EMU_T_U8, i4 = a == EMU_T_S4 || a == EMU_T_U4, f8 = a == EMU_T_E4M3 || a == EMU_T_E5M2;
    if (f->rows != 16 || in->mode == EMU_MODE_M8N8K4) { *why = "sparse mma is m16n8kK"; return false; }
    if ((in->xflags & EMU_XF_WM_COL) || !(in->xflags & EMU_XF_WM_COL_B)) { *why = "sparse mma is .row.col only"; return false; }
    if (in->xflags & (EMU_XF_MMA_AND | EMU_XF_MMA_XOR)) { *why = "sparse mma has no .b1 form"; return false; }
    bool ok;
    if (a == EMU_T_F16) ok = bt == a && (k == 16 || k == 32) && d == c && (d == EMU_T_F32 || d == EMU_T_F16);
    else if (a == EMU_T_BF16) ok = bt == a && (k == 16 || k == 32) && d == EMU_T_F32 && c == d;
    else if (a == EMU_T_TF32) ok = bt == a && (k == 8 || k == 16) && d == EMU_T_F32 && c == d;
    else if (f8) ok = (bt == EMU_T_E4M3 || bt == EMU_T_E5M2) && k == 64 && d == EMU_T_F32 && c == d;
    else if (i8) ok = (bt == EMU_T_S8 || bt == EMU_T_U8) && (k == 32 || k == 64) && d == EMU_T_S32 && c == d;
    else if (i4) ok = (bt == EMU_T_S4 || bt == EMU_T_U4) && (k == 64 || k == 128) && d == EMU_T_S32 && c == d;
    else ok = false;
    if (!ok) {
        *why = "sparse mma is m16n8k16/k32 .f32.f16.f16.f32, .f16.f16.f16.f16 or .f32.bf16.bf16.f32; m16n8k8/k16 "
               ".f32.tf32.tf32.f32; m16n8k32/k64 .s32.{s8,u8}.{s8,u8}.s32; m16n8k64/k128 .s32.{s4,u4}.{s4,u4}.s32; "
               "m16n8k64 .f32.{e4m3,e5m2}.{e4m3,e5m2}.f32";
        return false;
    }
    if ((in->flags & EMU_F(SATFINITE)) && !i8 && !i4) { *why = ".satfinite is for integer mma"; return false; }
    f->sparse = true;
    f->epr = (uint8_t)elems_per_reg(a);
    f->na = f->nb = (uint8_t)(k / (4 * f->epr)); /* A: 16 x K/2 values; B: K x 8 */
    f->nc = f->nd = c == EMU_T_F16 ? 2 : 4;
    f->cw = a == EMU_T_TF32 ? 2 : i4 ? 8 : 4;
    f->mthreads = (uint8_t)(k / f->cw / 4); /* a lane's 32 bits: 4 nibbles of each of its group's two rows */
    f->selmax = a == EMU_T_F16 && k == 32 && d == EMU_T_F32 ? 3 : (uint8_t)(4 / f->mthreads - 1); /* ptxas takes 2 and 3 there */
    return true;
}

bool emu_mma_form(const EmuIns *in, EmuMmaForm *f, const char **why) {
    unsigned d = in->ty, a = in->ty2, bt = in->ty3, c = in->ty4;
    memset(f, 0, sizeof *f);
    *why = NULL;
    switch (in->mode) {
    case EMU_MODE_M16N8K4: f->k = 4; break;
    case EMU_MODE_M16N8K8: f->k = 8; break;
    case EMU_MODE_M16N8K16: f->k = 16; break;
    case EMU_MODE_M16N8K32: f->k = 32; break;
    case EMU_MODE_M8N8K4: f->k = 4; break;
    case EMU_MODE_M8N8K16: f->k = 16, f->rows = 8; break;
    case EMU_MODE_M8N8K32: f->k = 32, f->rows = 8; break;
    case EMU_MODE_M16N8K64: f->k = 64; break;
    case EMU_MODE_M8N8K128: f->k = 128, f->rows = 8; break;
    case EMU_MODE_M16N8K128: f->k = 128; break;
    case EMU_MODE_M16N8K256: f->k = 256; break;
    default:
        *why = "only the m16n8k4/8/16/32/64/128/256, m8n8k16/32/128 (integer, .b1) and m8n8k4 (f64, f16) shapes are supported";
        return false;
    }
    if (!f->rows) f->rows = 16;
    if (!d || !a || !bt || !c) { *why = "mma needs four types: .dtype.atype.btype.ctype"; return false; }
    if (in->xflags & EMU_XF_MMA_SP) return sparse_form(in, f, why);
    if ((a == EMU_T_B1) != ((in->xflags & (EMU_XF_MMA_AND | EMU_XF_MMA_XOR)) != 0)) {
        *why = a == EMU_T_B1 ? ".b1 mma needs .and.popc or .xor.popc" : ".and.popc and .xor.popc are for .b1 mma";
        return false;
    }
    if (in->mode == EMU_MODE_M8N8K4 && a == EMU_T_F16) { /* Volta's quad-pair form: every layout, f16 or f32 D and C */
        if (bt != EMU_T_F16 || (d != EMU_T_F16 && d != EMU_T_F32) || (c != EMU_T_F16 && c != EMU_T_F32) || (c == EMU_T_F32 && d != c)) {
            *why = "m8n8k4 on f16 is .f16.f16 inputs with D and C .f16.f16, .f32.f16 or .f32.f32";
            return false;
        }
        if (in->flags & EMU_F(SATFINITE)) { *why = ".satfinite is for integer mma"; return false; }
        f->epr = 2, f->na = 2, f->nb = 2;
        f->nc = c == EMU_T_F16 ? 4 : 8;
        f->nd = d == EMU_T_F16 ? 4 : 8;
        return true;
    }
    if ((in->xflags & EMU_XF_WM_COL) || !(in->xflags & EMU_XF_WM_COL_B)) {
        *why = "this shape is .row.col only (A row-major, B column-major)";
        return false;
    }
    if (in->mode == EMU_MODE_M8N8K4 || a == EMU_T_F64) { /* DMMA, all f64 */
        if (d != EMU_T_F64 || a != d || bt != d || c != d || f->k > 16) {
            *why = "f64 mma is m8n8k4, m16n8k4, m16n8k8 or m16n8k16 .row.col.f64.f64.f64.f64";
            return false;
        }
        if (in->flags & EMU_F(SATFINITE)) { *why = ".satfinite is for integer mma"; return false; }
        f->epr = 1;
        if (in->mode == EMU_MODE_M8N8K4) f->na = 1, f->nb = 1, f->nc = 2, f->nd = 2; /* one A and one B register, two C/D */
        else f->na = (uint8_t)(f->k / 2), f->nb = (uint8_t)(f->k / 4), f->nc = 4, f->nd = 4; /* sm_90's m16n8k4/8/16 */
        return true;
    }
    bool isint = a == EMU_T_S8 || a == EMU_T_U8 || emu_is_sub_byte(a);
    if (a == EMU_T_B1) { /* D = C + popc(A row op B column) */
        if (bt != a || d != EMU_T_S32 || c != EMU_T_S32 || (f->rows == 8 ? f->k != 128 : f->k != 128 && f->k != 256)) {
            *why = ".b1 mma is m8n8k128, m16n8k128 or m16n8k256 .row.col.s32.b1.b1.s32";
            return false;
        }
        if (in->flags & EMU_F(SATFINITE)) { *why = ".satfinite is not for .b1 mma"; return false; }
    } else if (isint) {
        bool nib = emu_is_sub_byte(a);
        if (nib ? !emu_is_sub_byte(bt) : bt != EMU_T_S8 && bt != EMU_T_U8) {
            *why = nib ? "an s4/u4 A needs an s4/u4 B" : "an s8/u8 A needs an s8/u8 B";
            return false;
        }
        if (d != EMU_T_S32 || c != EMU_T_S32) { *why = "integer mma accumulates in .s32"; return false; }
        bool ok = nib ? (f->rows == 8 ? f->k == 32 : f->k == 32 || f->k == 64) : (f->rows == 8 ? f->k == 16 : f->k == 16 || f->k == 32);
        if (!ok) { *why = nib ? "s4/u4 mma needs m8n8k32, m16n8k32 or m16n8k64" : "s8/u8 mma needs m8n8k16, m16n8k16 or m16n8k32"; return false; }
    } else {
        if (f->rows == 8 || f->k >= 64) { *why = "m8n8k16, m8n8k32, m16n8k64 and the k128/k256 shapes are integer or .b1 shapes"; return false; }
        bool f8 = (a == EMU_T_E4M3 || a == EMU_T_E5M2) && (bt == EMU_T_E4M3 || bt == EMU_T_E5M2); /* mixed too */
        if (a != bt && !f8) { *why = "A and B must have the same floating-point type (e4m3 and e5m2 mix)"; return false; }
        if (in->flags & EMU_F(SATFINITE)) { *why = ".satfinite is for integer mma"; return false; }
        if (a == EMU_T_TF32) {
            if (f->k != 4 && f->k != 8) { *why = "tf32 mma needs m16n8k4 or m16n8k8"; return false; }
        } else if (a == EMU_T_F16 || a == EMU_T_BF16) {
            if (f->k != 8 && f->k != 16) { *why = "f16/bf16 mma needs m16n8k8 or m16n8k16"; return false; }
        } else if (f8) {
            if (f->k != 16 && f->k != 32) { *why = "e4m3/e5m2 mma needs m16n8k16 or m16n8k32"; return false; }
        } else {
            *why = "A/B types other than f16, bf16, tf32, e4m3, e5m2, s8, u8 are not supported";
            return false;
        }
        /* as ptxas: D and C agree (f16 accumulators only with f16 or f8 inputs) */
        if (d != c || !(d == EMU_T_F32 || ((a == EMU_T_F16 || f8) && d == EMU_T_F16))) {
            *why = "D and C must both be .f32 (or both .f16 with f16, e4m3 or e5m2 inputs)";
            return false;
        }
    }
    f->epr = (uint8_t)elems_per_reg(a);
    f->na = (uint8_t)(f->k * f->rows / (32 * f->epr)); /* rows x K elements over 32 lanes */
    f->nb = (uint8_t)(f->k / (4 * f->epr));
    f->nc = (uint8_t)((c == EMU_T_F16 ? 2 : 4) * f->rows / 16);
    f->nd = (uint8_t)((d == EMU_T_F16 ? 2 : 4) * f->rows / 16);
    return true;
}

/* Element i of an A/B register as a float (tf32: low 13 bits dropped). */
static inline float elem_f(unsigned ty, uint32_t reg, unsigned i) {
    switch (ty) {
    case EMU_T_F16: return emu_f16_to_f32((uint16_t)(reg >> (16 * i)));
    case EMU_T_BF16: return emu_f32((uint32_t)(reg >> (16 * i)) << 16);
    case EMU_T_E4M3: case EMU_T_E5M2: return (float)emu_f8_to_f64((uint8_t)(reg >> (8 * i)), ty == EMU_T_E5M2);
    default: return emu_f32(reg & 0xFFFFE000u);
    }
}

static int32_t elem_i(unsigned ty, uint32_t reg, unsigned i) {
    if (ty == EMU_T_B1) return (int32_t)(reg >> i & 1); /* bit i */
    if (emu_is_sub_byte(ty)) { /* nibble i, the lowest first */
        uint32_t v = (reg >> (4 * i)) & 0xF;
        return ty == EMU_T_S4 && (v & 8) ? (int32_t)v - 16 : (int32_t)v;
    }
    uint8_t v = (uint8_t)(reg >> (8 * i));
    return ty == EMU_T_S8 ? (int32_t)(int8_t)v : (int32_t)v;
}

bool emu_full_warp(EmuBlock *b, EmuThread **g, unsigned n, EmuThread *lane[32]) {
    const EmuFunc *f = g[0]->fn;
    const EmuIns *in = &f->code[g[0]->pc];
    if (n != 32)
        return emu_fault(b, g[0], in, "invalid warp-synchronous instruction",
                         "'%s' needs all 32 lanes of the warp; %u take part (partial warp or exited lanes)",
                         emu_op_name(in->op), n);
    /* the common case in one pass without branches: every lane at the same instruction */
    uint32_t pc0 = g[0]->pc;
    bool same = true;
    for (unsigned i = 0; i < 32; i++) {
        EmuThread *x = g[i];
        same &= (x->pc == pc0) & (x->fn == f);
        lane[x->lane] = x;
    }
    if (same) return true;
    for (unsigned i = 0; i < 32; i++) {
        if (g[i]->pc != g[0]->pc || g[i]->fn != f) {
            const EmuIns *other = &g[i]->fn->code[g[i]->pc];
            char w1[600], w0[600];
            return emu_fault(b, g[i], other, "divergent warp-synchronous instructions", "'%s' is .aligned: lane %u is at %s, lane %u at %s",
                             emu_op_name(in->op), g[i]->lane, emu_module_where(b->L->m, other->line, w1, sizeof w1), g[0]->lane,
                             emu_module_where(b->L->m, in->line, w0, sizeof w0));
        }
        lane[g[i]->lane] = g[i];
    }
    return true;
}

static inline uint64_t vreg(const EmuThread *t, const EmuFunc *f, const EmuIns *in, unsigned op, unsigned k) {
    return t->r[in->ok[op] == EMU_OK_VEC ? f->vec[in->o[op] + k] : in->o[op]];
}
static inline void vset(EmuThread *t, const EmuFunc *f, const EmuIns *in, unsigned op, unsigned k, uint64_t v) {
    t->r[in->ok[op] == EMU_OK_VEC ? f->vec[in->o[op] + k] : in->o[op]] = v;
}
/* An f16 D element from its f32 sum, rounded once to nearest even (NaN the canonical 0x7fff): by its bits, or through
 * emu_round_f64 under EmuOptions.general_tensor_ops (the reference test_emu_mma_fast compares them with). */
static inline uint32_t d_f16(float acc, bool general) {
    return general ? (uint32_t)emu_round_f64((double)acc, EMU_FMT_F16, EMU_RND_RN) : emu_f32_to_f16_rn(acc);
}

/* f64 mma (DMMA): mma.sync.aligned.m8n8k4 and sm_90's m16n8k{4,8,16} .row.col.f64.f64.f64.f64, the PTX ISA's
 * fragments for them: the general formula above with one element a register, each a 64-bit register: with
 * g = lane / 4, t = lane % 4, A register j holds A[g + 8 (j & 1)][t + 4 (j >> 1)], B register j holds
 * B[t + 4j][g], C/D register e holds C[g + 8 (e >> 1)][2t + (e & 1)] (m8n8k4: one A and one B register, two
 * C/D: rows g only); each D element starts from C and takes one fma per k ascending. */
static void exec_dmma(EmuThread *lane[32], const EmuFunc *f, const EmuIns *in, const EmuMmaForm *fm) {
    double A[16][16], B[16][8], C[16][8];
    for (unsigned l = 0; l < 32; l++) {
        unsigned g = l >> 2, t = l & 3;
        for (unsigned j = 0; j < fm->na; j++) A[g + 8 * (j & 1)][t + 4 * (j >> 1)] = emu_f64(vreg(lane[l], f, in, 1, j));
        for (unsigned j = 0; j < fm->nb; j++) B[t + 4 * j][g] = emu_f64(vreg(lane[l], f, in, 2, j));
        for (unsigned e = 0; e < fm->nc; e++) C[g + 8 * (e >> 1)][2 * t + (e & 1)] = emu_f64(vreg(lane[l], f, in, 3, e));
    }
    for (unsigned l = 0; l < 32; l++) {
        unsigned g = l >> 2, t = l & 3;
        for (unsigned e = 0; e < fm->nd; e++) {
            unsigned m = g + 8 * (e >> 1), nn = 2 * t + (e & 1);
            double acc = C[m][nn];
            for (unsigned k = 0; k < fm->k; k++) acc = fma(A[m][k], B[k][nn], acc);
            uint64_t bits;
            memcpy(&bits, &acc, 8);
            vset(lane[l], f, in, 0, e, acc != acc ? 0x7FF8000000000000ull : bits);
        }
    }
}

/* mma.sync.aligned.m8n8k4.alayout.blayout.dtype.f16.f16.ctype (sm_70's HMMA.884; D.C f16.f16, f32.f16 or
 * f32.f32): four independent 8x8x4
 * products, one per quad pair q (lanes 4q..4q+3, the low half, and 16+4q..16+4q+3, the high half).  The PTX
 * ISA's fragments, with h = 1 for the high half and p = lane % 4 + 4h the lane's place in its pair: A (two
 * f16x2 registers, elements a0..a3) row-major A[p][i], column-major A[i + 4h][lane % 4]; B (two registers)
 * column-major B[i][p], row-major B[lane % 4][i + 4h]; an f16 C/D (four registers, c0..c7) C[p][i]; an f32
 * C/D (eight) C[(lane & 1) + (i & 2) + 4h][(i & 1) + (lane & 2) + (i & 4)].  Each D element as the other float
 * forms: from C as f32, one fmaf per k ascending, an f16 D rounded once. */
static void exec_hmma884(EmuThread *lane[32], const EmuFunc *f, const EmuIns *in, const EmuMmaForm *fm, bool general) {
    float A[4][8][4], B[4][4][8], C[4][8][8];
    bool acol = in->xflags & EMU_XF_WM_COL, bcol = in->xflags & EMU_XF_WM_COL_B;
    for (unsigned l = 0; l < 32; l++) {
        unsigned q = (l & 15) >> 2, h = l >> 4, p = (l & 3) + 4 * h;
        for (unsigned i = 0; i < 4; i++) {
            float a = (float)emu_f16_to_f64((uint16_t)(vreg(lane[l], f, in, 1, i >> 1) >> (16 * (i & 1))));
            float bv = (float)emu_f16_to_f64((uint16_t)(vreg(lane[l], f, in, 2, i >> 1) >> (16 * (i & 1))));
            if (acol) A[q][i + 4 * h][l & 3] = a;
            else A[q][p][i] = a;
            if (bcol) B[q][i][p] = bv;
            else B[q][l & 3][i + 4 * h] = bv;
        }
        for (unsigned i = 0; i < 8; i++) {
            if (in->ty4 == EMU_T_F16) C[q][p][i] = (float)emu_f16_to_f64((uint16_t)(vreg(lane[l], f, in, 3, i >> 1) >> (16 * (i & 1))));
            else C[q][(l & 1) + (i & 2) + 4 * h][(i & 1) + (l & 2) + (i & 4)] = emu_f32((uint32_t)vreg(lane[l], f, in, 3, i));
        }
    }
    for (unsigned l = 0; l < 32; l++) {
        unsigned q = (l & 15) >> 2, h = l >> 4, p = (l & 3) + 4 * h;
        uint32_t half[8];
        for (unsigned i = 0; i < 8; i++) {
            bool f16 = in->ty == EMU_T_F16;
            unsigned m = f16 ? p : (l & 1) + (i & 2) + 4 * h, nn = f16 ? i : (i & 1) + (l & 2) + (i & 4);
            float acc = C[q][m][nn];
            for (unsigned k = 0; k < 4; k++) acc = fmaf(A[q][m][k], B[q][k][nn], acc);
            if (f16) half[i] = d_f16(acc, general);
            else vset(lane[l], f, in, 0, i, acc != acc ? 0x7FFFFFFFu : (uint32_t)emu_bits32(acc));
        }
        for (unsigned j = 0; in->ty == EMU_T_F16 && j < fm->nd; j++) vset(lane[l], f, in, 0, j, (half[2 * j] & 0xFFFFu) | half[2 * j + 1] << 16);
    }
}

bool emu_mma_exact_type(unsigned ty) { return ty == EMU_T_F16 || ty == EMU_T_E4M3 || ty == EMU_T_E5M2; }

/* The least and the greatest magnitude of the finite nonzero elements of the rows x cols matrix x (row stride
 * ld); lo > hi when there are none. */
static void mag_range(const float *x, unsigned ld, unsigned rows, unsigned cols, float *lo, float *hi) {
    float l = INFINITY, h = 0;
    if (cols % 4 == 0) { /* four at a time, without branches: zeros, infinities and NaNs count as neither */
        const emu_v4u absm = {0x7FFFFFFFu, 0x7FFFFFFFu, 0x7FFFFFFFu, 0x7FFFFFFFu};
        const emu_v4f inf = {INFINITY, INFINITY, INFINITY, INFINITY};
        emu_v4f vl = inf, vh = {0, 0, 0, 0};
        for (unsigned i = 0; i < rows; i++)
            for (unsigned j = 0; j < cols; j += 4) {
                emu_v4f v;
                memcpy(&v, x + (size_t)i * ld + j, sizeof v);
                v = (emu_v4f)((emu_v4u)v & absm);
                emu_v4u in = (emu_v4u)(v != 0) & (emu_v4u)(v < inf); /* NaN fails the second test */
                emu_v4f fl = (emu_v4f)(((emu_v4u)v & in) | ((emu_v4u)inf & ~in)), fh = (emu_v4f)((emu_v4u)v & in);
                vl = (emu_v4f)(((emu_v4u)fl & (emu_v4u)(fl < vl)) | ((emu_v4u)vl & ~(emu_v4u)(fl < vl)));
                vh = (emu_v4f)(((emu_v4u)fh & (emu_v4u)(fh > vh)) | ((emu_v4u)vh & ~(emu_v4u)(fh > vh)));
            }
        for (unsigned k = 0; k < 4; k++) {
            l = vl[k] < l ? vl[k] : l;
            h = vh[k] > h ? vh[k] : h;
        }
        *lo = l, *hi = h;
        return;
    }
    for (unsigned i = 0; i < rows; i++)
        for (unsigned j = 0; j < cols; j++) {
            float v = fabsf(x[(size_t)i * ld + j]);
            if (v != 0 && v < INFINITY) { /* NaN fails the second test */
                l = v < l ? v : l;
                h = v > h ? v : h;
            }
        }
    *lo = l, *hi = h;
}

bool emu_mma_products_exact(const float *A, unsigned lda, const float *B, unsigned ldb, unsigned M, unsigned N, unsigned K) {
    float alo, ahi, blo, bhi;
    mag_range(A, lda, M, K, &alo, &ahi);
    mag_range(B, ldb, K, N, &blo, &bhi);
    if (alo > ahi || blo > bhi) return true; /* every product is of a zero, an infinity or a NaN */
    /* the products of 11-bit (tf32) or 8-bit (bf16) significands have at most 22 bits: exact in f64, and in f32
     * when their size is in f32's normal range */
    return (double)alo * blo >= FLT_MIN && (double)ahi * bhi <= FLT_MAX;
}

/* The reference: one fmaf per element and k, k ascending (the definition every other path must match bit for bit) */
static void mma_fmaf(const float *A, unsigned lda, const float *B, unsigned ldb, float *D, unsigned ldd, unsigned M, unsigned N,
                     unsigned K) {
    for (unsigned m = 0; m < M; m++) {
        float *d = D + (size_t)m * ldd;
        for (unsigned k = 0; k < K; k++) {
            float a = A[(size_t)m * lda + k];
            const float *bk = B + (size_t)k * ldb;
            for (unsigned n = 0; n < N; n++) d[n] = fmaf(a, bk[n], d[n]);
        }
    }
}

/* Exact products (checked by the caller): acc + a*b rounds once, as fmaf does.  Blocks of 4 rows by 8 columns
 * kept in registers over the whole k loop: 8 independent sums, each element's still one add per k ascending. */
static void mma_add(const float *A, unsigned lda, const float *B, unsigned ldb, float *D, unsigned ldd, unsigned M, unsigned N,
                    unsigned K) {
    for (unsigned m0 = 0; m0 < M; m0 += 4)
        for (unsigned n0 = 0; n0 < N; n0 += 8) {
            emu_v4f c[4][2];
            for (unsigned r = 0; r < 4; r++) memcpy(c[r], D + (size_t)(m0 + r) * ldd + n0, 32);
            const float *a = A + (size_t)m0 * lda;
            for (unsigned k = 0; k < K; k++) {
                emu_v4f b[2];
                memcpy(b, B + (size_t)k * ldb + n0, 32);
                for (unsigned r = 0; r < 4; r++) {
                    float av = a[(size_t)r * lda + k];
                    emu_v4f ar = {av, av, av, av};
                    c[r][0] += ar * b[0];
                    c[r][1] += ar * b[1];
                }
            }
            for (unsigned r = 0; r < 4; r++) memcpy(D + (size_t)(m0 + r) * ldd + n0, c[r], 32);
        }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#include <stdatomic.h>
/* The host's fused multiply-add (x86-64 with FMA3: one rounding of a*b + acc, IEEE's fusedMultiplyAdd, which is
 * fmaf's definition, in any operands: no exactness check needed).  Blocks of 4 rows by 16 columns in eight 256-bit
 * registers (one load of B's row and one broadcast of A's element serve two of them), then by 8 columns in four
 * where 16 do not fit; each element one fma per k ascending. */
__attribute__((target("avx2,fma"))) static void mma_host_fma(const float *A, unsigned lda, const float *B, unsigned ldb, float *D,
                                                             unsigned ldd, unsigned M, unsigned N, unsigned K) {
    for (unsigned m0 = 0; m0 < M; m0 += 4) {
        unsigned n0 = 0;
        for (; n0 + 16 <= N; n0 += 16) {
            float *d = D + (size_t)m0 * ldd + n0;
            const float *a = A + (size_t)m0 * lda;
            __m256 c0 = _mm256_loadu_ps(d), c1 = _mm256_loadu_ps(d + ldd), c2 = _mm256_loadu_ps(d + 2 * (size_t)ldd),
                   c3 = _mm256_loadu_ps(d + 3 * (size_t)ldd), e0 = _mm256_loadu_ps(d + 8), e1 = _mm256_loadu_ps(d + ldd + 8),
                   e2 = _mm256_loadu_ps(d + 2 * (size_t)ldd + 8), e3 = _mm256_loadu_ps(d + 3 * (size_t)ldd + 8);
            for (unsigned k = 0; k < K; k++) {
                const float *bk = B + (size_t)k * ldb + n0;
                __m256 b = _mm256_loadu_ps(bk), bh = _mm256_loadu_ps(bk + 8), x;
                x = _mm256_set1_ps(a[k]), c0 = _mm256_fmadd_ps(x, b, c0), e0 = _mm256_fmadd_ps(x, bh, e0);
                x = _mm256_set1_ps(a[lda + k]), c1 = _mm256_fmadd_ps(x, b, c1), e1 = _mm256_fmadd_ps(x, bh, e1);
                x = _mm256_set1_ps(a[2 * (size_t)lda + k]), c2 = _mm256_fmadd_ps(x, b, c2), e2 = _mm256_fmadd_ps(x, bh, e2);
                x = _mm256_set1_ps(a[3 * (size_t)lda + k]), c3 = _mm256_fmadd_ps(x, b, c3), e3 = _mm256_fmadd_ps(x, bh, e3);
            }
            _mm256_storeu_ps(d, c0), _mm256_storeu_ps(d + ldd, c1), _mm256_storeu_ps(d + 2 * (size_t)ldd, c2);
            _mm256_storeu_ps(d + 3 * (size_t)ldd, c3), _mm256_storeu_ps(d + 8, e0), _mm256_storeu_ps(d + ldd + 8, e1);
            _mm256_storeu_ps(d + 2 * (size_t)ldd + 8, e2), _mm256_storeu_ps(d + 3 * (size_t)ldd + 8, e3);
        }
        for (; n0 < N; n0 += 8) {
            float *d = D + (size_t)m0 * ldd + n0;
            const float *a = A + (size_t)m0 * lda;
            __m256 c0 = _mm256_loadu_ps(d), c1 = _mm256_loadu_ps(d + ldd), c2 = _mm256_loadu_ps(d + 2 * (size_t)ldd),
                   c3 = _mm256_loadu_ps(d + 3 * (size_t)ldd);
            for (unsigned k = 0; k < K; k++) {
                __m256 b = _mm256_loadu_ps(B + (size_t)k * ldb + n0);
                c0 = _mm256_fmadd_ps(_mm256_set1_ps(a[k]), b, c0);
                c1 = _mm256_fmadd_ps(_mm256_set1_ps(a[lda + k]), b, c1);
                c2 = _mm256_fmadd_ps(_mm256_set1_ps(a[2 * (size_t)lda + k]), b, c2);
                c3 = _mm256_fmadd_ps(_mm256_set1_ps(a[3 * (size_t)lda + k]), b, c3);
            }
            _mm256_storeu_ps(d, c0), _mm256_storeu_ps(d + ldd, c1), _mm256_storeu_ps(d + 2 * (size_t)ldd, c2);
            _mm256_storeu_ps(d + 3 * (size_t)ldd, c3);
        }
    }
}
__attribute__((target("avx,f16c"))) void emu_f16x8_to_f32_host(const uint8_t *p, float *v, float neg, size_t stride) {
    __m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
    x = _mm256_blendv_ps(x, _mm256_set1_ps(NAN), _mm256_cmp_ps(x, x, _CMP_UNORD_Q)); /* any NaN the canonical one */
    x = _mm256_mul_ps(x, _mm256_set1_ps(neg));
    if (stride == 1) {
        _mm256_storeu_ps(v, x);
        return;
    }
    float t[8];
    _mm256_storeu_ps(t, x);
    for (unsigned j = 0; j < 8; j++) v[j * stride] = t[j];
}
static bool host_has_fma(void) { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
/* F16C (CPUID leaf 1, ECX bit 29: not a name every compiler's __builtin_cpu_supports knows), asked of the CPU once:
 * its answer is the same for every caller */
static bool host_has_f16c(void) {
    static _Atomic int known; /* 0: not asked yet, 1: no, 2: yes */
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (!k) {
        unsigned a, b, c, d;
        k = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) ? 2 : 1;
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k == 2;
}
bool emu_host_f16c(void) { return __builtin_cpu_supports("avx") && host_has_f16c(); }

/* mma_m16n8_f32 (below) on a host with AVX2, FMA3 and F16C, in one pass over the lanes with the shape constant:
 * each lane's A pairs decoded by vcvtph2ps (f16) or two shifts (bf16) straight to their places in A (16 x K) and
 * its B pairs into B (K x 8) transposed, C read beside them (every register is read before D is written: D may
 * alias); then D = C + A B by mma_host_fma's fma per element and k ascending, in two blocks of 8 rows whose 8 sums
 * stay in registers, and D's NaNs made canonical 8 at a time.  vcvtph2ps gives every f16 code emu_f16_to_f32's bits
 * but a NaN's (a quiet NaN with the code's payload, where emu_f16_to_f32 gives the canonical one): a NaN operand
 * makes every sum it enters NaN, and D's NaNs are canonical, so D is the same bits. */
static inline __attribute__((always_inline, target("avx2,fma,f16c"))) void m16n8_host_body(EmuThread *lane[32], const uint32_t *sl,
                                                                                         const uint32_t *sc, const uint32_t *sd,
                                                                                         bool bf16, unsigned K) {
    const unsigned na = K / 4; /* A registers a lane (B: K / 8) */
    float af[16][16] __attribute__((aligned(32))), bf[16][8] __attribute__((aligned(32))), cf[16][8] __attribute__((aligned(32)));
    const uint32_t sc0 = sc[0], sc1 = sc[1], sc2 = sc[2], sc3 = sc[3];
    for (unsigned l = 0; l < 32; l++) {
        const uint64_t *r = lane[l]->r;
        unsigned gr = l >> 2, tg = l & 3;
        __m128i wa = na == 4 ? _mm_setr_epi32((int)r[sl[0]], (int)r[sl[1]], (int)r[sl[2]], (int)r[sl[3]])
                             : _mm_setr_epi32((int)r[sl[0]], (int)r[sl[1]], 0, 0);
        __m128i wb = K == 16 ? _mm_setr_epi32((int)r[sl[na]], (int)r[sl[na + 1]], 0, 0) : _mm_setr_epi32((int)r[sl[na]], 0, 0, 0);
        __m128 a01, a23, b4; /* registers 0 and 1 (2 and 3) of A, low half first; B's */
        if (bf16) {
            const __m128i top = _mm_set1_epi32((int)0xFFFF0000u);
            __m128i lo = _mm_slli_epi32(wa, 16), hi = _mm_and_si128(wa, top);
            a01 = _mm_castsi128_ps(_mm_unpacklo_epi32(lo, hi)), a23 = _mm_castsi128_ps(_mm_unpackhi_epi32(lo, hi));
            b4 = _mm_castsi128_ps(_mm_unpacklo_epi32(_mm_slli_epi32(wb, 16), _mm_and_si128(wb, top)));
        } else {
            a01 = _mm_cvtph_ps(wa), a23 = _mm_cvtph_ps(_mm_unpackhi_epi64(wa, wa)), b4 = _mm_cvtph_ps(wb);
        }
        _mm_storel_pi((__m64 *)&af[gr][tg * 2], a01), _mm_storeh_pi((__m64 *)&af[gr + 8][tg * 2], a01);
        if (na == 4) _mm_storel_pi((__m64 *)&af[gr][tg * 2 + 8], a23), _mm_storeh_pi((__m64 *)&af[gr + 8][tg * 2 + 8], a23);
        float bv[4];
        _mm_storeu_ps(bv, b4);
        bf[tg * 2][gr] = bv[0], bf[tg * 2 + 1][gr] = bv[1];
        if (K == 16) bf[tg * 2 + 8][gr] = bv[2], bf[tg * 2 + 9][gr] = bv[3];
        /* C's elements (rows gr and gr + 8, columns 2 tg and 2 tg + 1) are the 64-bit pairs l and 32 + l of cf */
        uint64_t c01 = (uint32_t)r[sc0] | (uint64_t)(uint32_t)r[sc1] << 32, c23 = (uint32_t)r[sc2] | (uint64_t)(uint32_t)r[sc3] << 32;
        memcpy(&cf[0][0] + 2 * l, &c01, 8), memcpy(&cf[8][0] + 2 * l, &c23, 8);
    }
    uint32_t d[16][8] __attribute__((aligned(32))); /* D's bits, NaN the canonical one */
    const __m256i absm = _mm256_set1_epi32(0x7FFFFFFF), inf = _mm256_set1_epi32(0x7F800000), canon = _mm256_set1_epi32(0x7FFFFFFF);
#pragma GCC unroll 2
    for (unsigned m0 = 0; m0 < 16; m0 += 8) {
        __m256 c[8];
#pragma GCC unroll 8
        for (unsigned i = 0; i < 8; i++) c[i] = _mm256_load_ps(cf[m0 + i]);
#pragma GCC unroll 16
        for (unsigned k = 0; k < K; k++) {
            __m256 b = _mm256_load_ps(bf[k]);
#pragma GCC unroll 8
            for (unsigned i = 0; i < 8; i++) c[i] = _mm256_fmadd_ps(_mm256_broadcast_ss(&af[m0 + i][k]), b, c[i]);
        }
#pragma GCC unroll 8
        for (unsigned i = 0; i < 8; i++) {
            __m256i u = _mm256_castps_si256(c[i]);
            __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, absm), inf);
            _mm256_store_si256((__m256i *)d[m0 + i], _mm256_blendv_epi8(u, canon, nan));
        }
    }
    const uint32_t sd0 = sd[0], sd1 = sd[1], sd2 = sd[2], sd3 = sd[3];
    for (unsigned l = 0; l < 32; l++) { /* D's elements as C's above, in the order the general executor writes them */
        uint64_t *r = lane[l]->r, x, y;
        memcpy(&x, &d[0][0] + 2 * l, 8), memcpy(&y, &d[8][0] + 2 * l, 8);
        r[sd0] = (uint32_t)x, r[sd1] = x >> 32, r[sd2] = (uint32_t)y, r[sd3] = y >> 32;
    }
}
__attribute__((target("avx2,fma,f16c"))) static void mma_m16n8_host(EmuThread *lane[32], const uint32_t *sl, const uint32_t *sc,
                                                                   const uint32_t *sd, bool bf16, unsigned K) {
    if (K == 16 && bf16) m16n8_host_body(lane, sl, sc, sd, true, 16);
    else if (K == 16) m16n8_host_body(lane, sl, sc, sd, false, 16);
    else if (bf16) m16n8_host_body(lane, sl, sc, sd, true, 8);
    else m16n8_host_body(lane, sl, sc, sd, false, 8);
}
static bool host_has_m16n8(void) { return host_has_fma() && host_has_f16c(); }
#else
static void mma_host_fma(const float *A, unsigned lda, const float *B, unsigned ldb, float *D, unsigned ldd, unsigned M, unsigned N,
                         unsigned K) {
    mma_fmaf(A, lda, B, ldb, D, ldd, M, N, K);
}
static bool host_has_fma(void) { return false; }
bool emu_host_f16c(void) { return false; }
void emu_f16x8_to_f32_host(const uint8_t *p, float *v, float neg, size_t stride) { (void)p, (void)v, (void)neg, (void)stride; }
static void mma_m16n8_host(EmuThread *lane[32], const uint32_t *sl, const uint32_t *sc, const uint32_t *sd, bool bf16, unsigned K) {
    (void)lane, (void)sl, (void)sc, (void)sd, (void)bf16, (void)K;
}
static bool host_has_m16n8(void) { return false; }
#endif

bool emu_mma_f32_by(const float *A, unsigned lda, const float *B, unsigned ldb, float *D, unsigned ldd, unsigned M, unsigned N,
                    unsigned K, EmuMmaPath path) {
    switch (path) {
    case EMU_MMA_FMAF: mma_fmaf(A, lda, B, ldb, D, ldd, M, N, K); return true;
    case EMU_MMA_ADD: mma_add(A, lda, B, ldb, D, ldd, M, N, K); return true;
    case EMU_MMA_HOST_FMA:
        if (!host_has_fma()) return false;
        mma_host_fma(A, lda, B, ldb, D, ldd, M, N, K);
        return true;
    }
    return false;
}

void emu_mma_f32(const float *A, unsigned lda, const float *B, unsigned ldb, float *D, unsigned ldd, unsigned M, unsigned N,
                 unsigned K, bool exact_types) {
    if (host_has_fma()) mma_host_fma(A, lda, B, ldb, D, ldd, M, N, K);
    else if (exact_types || emu_mma_products_exact(A, lda, B, ldb, M, N, K)) mma_add(A, lda, B, ldb, D, ldd, M, N, K);
    else mma_fmaf(A, lda, B, ldb, D, ldd, M, N, K);
}

/* A float A/B register's E elements, the lowest first */
static inline __attribute__((always_inline)) void unpack_f(unsigned ty, uint32_t r, float *v) {
    switch (ty) {
    case EMU_T_F16: v[0] = emu_f16_to_f32((uint16_t)r), v[1] = emu_f16_to_f32((uint16_t)(r >> 16)); return;
    case EMU_T_BF16: v[0] = emu_f32(r << 16), v[1] = emu_f32(r & 0xFFFF0000u); return;
    case EMU_T_E4M3: case EMU_T_E5M2:
        for (unsigned i = 0; i < 4; i++) v[i] = elem_f(ty, r, i);
        return;
    default: v[0] = elem_f(ty, r, 0); return;
    }
}

/* Every lane's float A and B fragments into af (R x K) and bf (K x 8), by the layouts above; inlined for each
 * type (constant ta, tb, E): each register is read and decoded once. */
static inline __attribute__((always_inline)) void gather_ab_f(EmuThread *lane[32], const EmuFunc *f, const EmuIns *in,
                                                              const EmuMmaForm *fm, unsigned ta, unsigned tb, unsigned E,
                                                              float af[16][64], float bf[64][8]) {
    uint32_t sa[16], sb[8]; /* the register slots, one instruction for the whole warp */
    for (unsigned j = 0; j < fm->na; j++) sa[j] = in->ok[1] == EMU_OK_VEC ? f->vec[in->o[1] + j] : in->o[1];
    for (unsigned j = 0; j < fm->nb; j++) sb[j] = in->ok[2] == EMU_OK_VEC ? f->vec[in->o[2] + j] : in->o[2];
    for (unsigned l = 0; l < 32; l++) {
        const uint64_t *r = lane[l]->r;
        unsigned gr = l >> 2, tg = l & 3;
        for (unsigned j = 0; j < fm->na; j++) {
            float v[4];
            unpack_f(ta, (uint32_t)r[sa[j]], v);
            float *d = &af[gr + 8 * (j & 1)][tg * E + (j >> 1) * 4 * E];
            for (unsigned i = 0; i < E; i++) d[i] = v[i];
        }
        for (unsigned j = 0; j < fm->nb; j++) {
            float v[4];
            unpack_f(tb, (uint32_t)r[sb[j]], v);
            for (unsigned i = 0; i < E; i++) bf[tg * E + j * 4 * E + i][gr] = v[i];
        }
    }
}

/* gather_ab_f of f16 A and B: the warp's registers read first, then decoded four at a time (emu_f16x4_to_f32),
 * then placed as gather_ab_f places them */
static void gather_f16(EmuThread *lane[32], const EmuFunc *f, const EmuIns *in, const EmuMmaForm *fm, float af[16][64],
                       float bf[64][8]) {
    uint32_t sl[24];
    unsigned na = fm->na, nr = fm->na + fm->nb;
    for (unsigned j = 0; j < na; j++) sl[j] = in->ok[1] == EMU_OK_VEC ? f->vec[in->o[1] + j] : in->o[1];
    for (unsigned j = na; j < nr; j++) sl[j] = in->ok[2] == EMU_OK_VEC ? f->vec[in->o[2] + j - na] : in->o[2];
    unsigned nv = (32 * nr + 3) / 4;
    emu_v4u raw[(32 * 24 + 3) / 4];
    uint32_t *rw = (uint32_t *)raw;
    raw[nv - 1] = (emu_v4u){0, 0, 0, 0}; /* the last vector's lanes past total */
    for (unsigned l = 0; l < 32; l++) {
        const uint64_t *r = lane[l]->r;
        for (unsigned j = 0; j < nr; j++) rw[l * nr + j] = (uint32_t)r[sl[j]];
    }
    emu_v4f lo[(32 * 24 + 3) / 4], hi[(32 * 24 + 3) / 4]; /* the low and the high half of each register */
    for (unsigned k = 0; k < nv; k++) {
        lo[k] = emu_f16x4_to_f32(raw[k] & 0xFFFFu);
        hi[k] = emu_f16x4_to_f32(raw[k] >> 16);
    }
    const float *fl = (const float *)lo, *fh = (const float *)hi;
    for (unsigned l = 0; l < 32; l++) {
        unsigned gr = l >> 2, tg = l & 3;
        for (unsigned j = 0; j < na; j++) {
            float *d = &af[gr + 8 * (j & 1)][tg * 2 + (j >> 1) * 8];
            d[0] = fl[l * nr + j], d[1] = fh[l * nr + j];
        }
        for (unsigned j = 0; j < fm->nb; j++) {
            bf[tg * 2 + j * 8][gr] = fl[l * nr + na + j];
            bf[tg * 2 + j * 8 + 1][gr] = fh[l * nr + na + j];
        }
    }
}

static void gather_f(EmuThread *lane[32], const EmuFunc *f, const EmuIns *in, const EmuMmaForm *fm, float af[16][64], float bf[64][8]) {
    unsigned ta = in->ty2, tb = in->ty3;
    if (ta == EMU_T_F16 && tb == ta && fm->na + fm->nb <= 24) gather_f16(lane, f, in, fm, af, bf);
    else if (ta == EMU_T_F16 && tb == ta) gather_ab_f(lane, f, in, fm, EMU_T_F16, EMU_T_F16, 2, af, bf);
    else if (ta == EMU_T_BF16 && tb == ta) gather_ab_f(lane, f, in, fm, EMU_T_BF16, EMU_T_BF16, 2, af, bf);
    else if (ta == EMU_T_TF32 && tb == ta) gather_ab_f(lane, f, in, fm, EMU_T_TF32, EMU_T_TF32, 1, af, bf);
    else gather_ab_f(lane, f, in, fm, ta, tb, fm->epr, af, bf); /* f8: e4m3 and e5m2 mix */
}

/* mma.sp's product, from the compressed A (16 x K/2: af or ai), B (K x 8: bf or bi) and C (cf or ci) gathered by
 * the dense fragment layouts, into dv.  The metadata: in each group of 4 lanes (g = lane / 4), the mthreads lanes
 * from 4g + selector * mthreads each hold 32 bits, lane j of them the nibbles of chunks 4j..4j+3 (cw elements
 * each along K) of row g in bits 0..15 and of row g + 8 in bits 16..31, chunk 4j + i at bits 4i..4i+3.  A
 * nibble's two 2-bit indices (low bits first) place the chunk's stored values: value s of a chunk of 4 (f16,
 * bf16, s8, u8, e4m3, e5m2; 2 stored) at column 4c + index s; of a chunk of 8 (s4, u4; 2 pairs, 4 stored) value s
 * at 8c + 2 index(s / 2) + s % 2; tf32's one value of a chunk of 2 at 2c + (index 0) / 2 (0b0100: the first,
 * 0b1110: the second).  Each stored value multiplies the B row its column names (a value whose column repeats
 * another's, which the ISA leaves undefined, adds its own product there too); each D element starts from C and
 * takes one fmaf per stored value in their order (integers: exact, wrapped, or clamped with .satfinite). */
static bool sparse_product(EmuBlock *b, EmuThread *lane[32], const EmuFunc *f, const EmuIns *in, const EmuMmaForm *fm,
                           float af[16][64], float bf[64][8], float cf[16][8], int32_t ai[16][256], int32_t bi[256][8],
                           int32_t ci[16][8], uint32_t dv[16][8]) {
    uint32_t sel = (uint32_t)vreg(lane[0], f, in, 5, 0);
    if (sel > 4u / fm->mthreads - 1)
        return emu_fault(b, lane[0], in, "undefined sparsity selector",
                         "sparsity selector %u: with %u metadata lane%s in each group of 4 the PTX ISA defines 0..%u", sel,
                         fm->mthreads, fm->mthreads == 1 ? "" : "s", 4u / fm->mthreads - 1);
    unsigned P = fm->k / 2, cw = fm->cw, vpc = cw / 2; /* stored values a row, a chunk */
    bool isint = in->ty == EMU_T_S32;
    for (unsigned m = 0; m < 16; m++) {
        unsigned col[128]; /* the column of each stored value of row m */
        for (unsigned p = 0; p < P; p++) {
            unsigned c = p / vpc, s = p % vpc, j = c / 4;
            uint32_t meta = (uint32_t)vreg(lane[4 * (m % 8) + sel * fm->mthreads + j], f, in, 4, 0);
            unsigned nib = meta >> (4 * (c % 4) + 16 * (m / 8)) & 0xF, i0 = nib & 3, i1 = nib >> 2;
            col[p] = vpc == 1 ? 2 * c + i0 / 2 : vpc == 2 ? 4 * c + (s ? i1 : i0) : 8 * c + 2 * (s / 2 ? i1 : i0) + s % 2;
        }
        for (unsigned nn = 0; nn < 8; nn++) {
            if (isint) {
                int64_t acc = ci[m][nn];
                for (unsigned p = 0; p < P; p++) acc += (int64_t)ai[m][p] * bi[col[p]][nn];
                if (in->flags & EMU_F(SATFINITE)) acc = acc > INT32_MAX ? INT32_MAX : acc < INT32_MIN ? INT32_MIN : acc;
                dv[m][nn] = (uint32_t)acc;
            } else {
                float acc = cf[m][nn];
                for (unsigned p = 0; p < P; p++) acc = fmaf(af[m][p], bf[col[p]][nn], acc);
                dv[m][nn] = in->ty == EMU_T_F16 ? d_f16(acc, b->L->opt->general_tensor_ops)
                            : acc != acc ? 0x7FFFFFFFu : (uint32_t)emu_bits32(acc);
            }
        }
    }
    return true;
}

/* mma.sync.aligned.m16n8k{8,16}.row.col.f32.{f16,bf16}.{f16,bf16}.f32 (the tensor-core instruction the compiler's
 * kernels emit): emu_exec_mma's general path below with the shape and type constant.  Each lane's A, B and C
 * registers are read in one pass over the lanes (each lane's registers are their own cache lines) before any D is
 * written (D may alias them), the f16 codes then decoded four at a time (emu_f16x4_to_f32; bf16 is an f32's top
 * half), the product summed by emu_mma_f32 (the same fmaf per k ascending) and D written with NaN canonical.  The
 * same bits as the general path: test_emu_mma's mma/fast_* tests run both (EmuOptions.general_tensor_ops). */
static inline __attribute__((always_inline)) void mma_m16n8_f32(EmuThread *lane[32], const EmuFunc *f, const EmuIns *in, bool bf16,
                                                                unsigned K, bool host) {
    const unsigned na = K / 4, nb = K / 8, nab = na + nb; /* A and B registers a lane */
    uint32_t sl[6], sc[4], sd[4];
    for (unsigned j = 0; j < na; j++) sl[j] = in->ok[1] == EMU_OK_VEC ? f->vec[in->o[1] + j] : in->o[1];
    for (unsigned j = 0; j < nb; j++) sl[na + j] = in->ok[2] == EMU_OK_VEC ? f->vec[in->o[2] + j] : in->o[2];
    for (unsigned e = 0; e < 4; e++) sc[e] = in->ok[3] == EMU_OK_VEC ? f->vec[in->o[3] + e] : in->o[3];
    for (unsigned e = 0; e < 4; e++) sd[e] = in->ok[0] == EMU_OK_VEC ? f->vec[in->o[0] + e] : in->o[0];
    if (host && host_has_m16n8()) {
        mma_m16n8_host(lane, sl, sc, sd, bf16, K);
        return;
    }
    uint32_t ab[32 * 6] __attribute__((aligned(16))); /* lane l's A and B registers at l * nab */
    float af[16][16], bf[16][8], cf[16][8] __attribute__((aligned(32)));
    float *c = &cf[0][0]; /* lane l's C/D elements: rows l / 4 and l / 4 + 8, columns 2 (l % 4) and + 1, at 2l, 2l + 1,
                           * 2l + 64 and 2l + 65 */
    for (unsigned l = 0; l < 32; l++) {
        const uint64_t *r = lane[l]->r;
#pragma GCC unroll 6
        for (unsigned j = 0; j < nab; j++) ab[l * nab + j] = (uint32_t)r[sl[j]];
        c[2 * l] = emu_f32(r[sc[0]]), c[2 * l + 1] = emu_f32(r[sc[1]]), c[2 * l + 64] = emu_f32(r[sc[2]]), c[2 * l + 65] = emu_f32(r[sc[3]]);
    }
    float lo[32 * 6] __attribute__((aligned(16))), hi[32 * 6] __attribute__((aligned(16))); /* each register's halves */
    for (unsigned q = 0; q < 32 * nab; q += 4) {
        emu_v4u v;
        memcpy(&v, ab + q, sizeof v);
        emu_v4f vl = bf16 ? (emu_v4f)(v << 16) : emu_f16x4_to_f32(v & 0xFFFFu);
        emu_v4f vh = bf16 ? (emu_v4f)(v & 0xFFFF0000u) : emu_f16x4_to_f32(v >> 16);
        memcpy(lo + q, &vl, sizeof vl), memcpy(hi + q, &vh, sizeof vh);
    }
    for (unsigned l = 0; l < 32; l++) {
        unsigned gr = l >> 2, tg = l & 3;
        const float *vl = lo + l * nab, *vh = hi + l * nab;
#pragma GCC unroll 4
        for (unsigned j = 0; j < na; j++) {
            float *d = &af[gr + 8 * (j & 1)][tg * 2 + (j >> 1) * 8];
            d[0] = vl[j], d[1] = vh[j];
        }
#pragma GCC unroll 2
        for (unsigned j = 0; j < nb; j++) bf[tg * 2 + j * 8][gr] = vl[na + j], bf[tg * 2 + j * 8 + 1][gr] = vh[na + j];
    }
    emu_mma_f32(&af[0][0], 16, &bf[0][0], 8, &cf[0][0], 8, 16, 8, K, !bf16);
    uint32_t d[128] __attribute__((aligned(32))); /* D's bits, NaN the canonical one */
    for (unsigned i = 0; i < 128; i++) {
        uint32_t u;
        memcpy(&u, c + i, 4);
        d[i] = (u & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FFFFFFFu : u;
    }
    for (unsigned l = 0; l < 32; l++) {
        uint64_t *r = lane[l]->r;
        r[sd[0]] = d[2 * l], r[sd[1]] = d[2 * l + 1], r[sd[2]] = d[2 * l + 64], r[sd[3]] = d[2 * l + 65];
    }
}

/* The forms mma_m16n8_f32 takes: false for the rest, which go the general way.  host: its F16C body where the host
 * has one (EmuOptions.portable_tensor_ops off) */
static bool mma_fast(EmuThread *lane[32], const EmuFunc *f, const EmuIns *in, const EmuMmaForm *fm, bool host) {
    if (fm->sparse || fm->rows != 16 || in->ty != EMU_T_F32 || in->ty4 != EMU_T_F32 || in->ty2 != in->ty3 ||
        (in->ty2 != EMU_T_F16 && in->ty2 != EMU_T_BF16) || in->mode == EMU_MODE_M8N8K4)
        return false;
    bool bf16 = in->ty2 == EMU_T_BF16;
    if (fm->k == 16 && bf16) mma_m16n8_f32(lane, f, in, true, 16, host);
    else if (fm->k == 16) mma_m16n8_f32(lane, f, in, false, 16, host);
    else if (bf16) mma_m16n8_f32(lane, f, in, true, 8, host);
    else mma_m16n8_f32(lane, f, in, false, 8, host);
    return true;
}

bool emu_exec_mma(EmuBlock *b, EmuThread **lane, const EmuIns *in) {
    const EmuFunc *f = lane[0]->fn;
    EmuMmaForm fm = in->mma; /* decoded at load (emu_module_finalize); k 0: not, or not valid */
    const char *why;
    if (!fm.k && !emu_mma_form(in, &fm, &why)) return emu_fault(b, lane[0], in, "unsupported instruction", "%s", why);
    if (in->ty2 == EMU_T_F64) {
        exec_dmma(lane, f, in, &fm);
        return true;
    }
    bool general = b->L->opt->general_tensor_ops;
    if (in->mode == EMU_MODE_M8N8K4) {
        exec_hmma884(lane, f, in, &fm, general);
        return true;
    }
    if (!general && mma_fast(lane, f, in, &fm, !b->L->opt->portable_tensor_ops)) return true;
    unsigned K = fm.k, E = fm.epr, R = fm.rows, NE = R / 4; /* NE: C/D elements per lane */
    bool isint = in->ty == EMU_T_S32;
    unsigned bop = in->xflags & (EMU_XF_MMA_AND | EMU_XF_MMA_XOR); /* .b1: each product a bit operation */
    /* gather A (R x K), B (K x 8), C (R x 8) from the fragments */
    float af[16][64], bf[64][8], cf[16][8];
    int32_t ai[16][256], bi[256][8], ci[16][8];
    if (!isint) gather_f(lane, f, in, &fm, af, bf);
    uint32_t sc[8], sd[8]; /* C's and D's register slots, one instruction for the whole warp */
    for (unsigned e = 0; e < fm.nc && e < 8; e++) sc[e] = in->ok[3] == EMU_OK_VEC ? f->vec[in->o[3] + e] : in->o[3];
    for (unsigned e = 0; e < fm.nd && e < 8; e++) sd[e] = in->ok[0] == EMU_OK_VEC ? f->vec[in->o[0] + e] : in->o[0];
    for (unsigned l = 0; l < 32; l++) {
        const EmuThread *t = lane[l];
        unsigned gr = l >> 2, tg = l & 3;
        for (unsigned j = 0; j < fm.na && isint; j++) {
            uint32_t r = (uint32_t)vreg(t, f, in, 1, j);
            for (unsigned i = 0; i < E; i++) ai[gr + 8 * (j & 1)][tg * E + (j >> 1) * 4 * E + i] = elem_i(in->ty2, r, i);
        }
        for (unsigned j = 0; j < fm.nb && isint; j++) {
            uint32_t r = (uint32_t)vreg(t, f, in, 2, j);
            for (unsigned i = 0; i < E; i++) bi[tg * E + j * 4 * E + i][gr] = elem_i(in->ty3, r, i);
        }
        for (unsigned e = 0; e < NE; e++) {
            unsigned row = gr + 8 * (e >> 1), col = 2 * tg + (e & 1);
            if (in->ty4 == EMU_T_F16) {
                uint32_t r = (uint32_t)t->r[sc[e >> 1]];
                cf[row][col] = emu_f16_to_f32((uint16_t)(r >> (16 * (e & 1))));
            } else {
                uint32_t r = (uint32_t)t->r[sc[e]];
                if (isint) ci[row][col] = (int32_t)r;
                else cf[row][col] = emu_f32(r);
            }
        }
    }
    /* D = A * B + C, then scatter D */
    uint32_t dv[16][8];
    if (fm.sparse) {
        if (!sparse_product(b, lane, f, in, &fm, af, bf, cf, ai, bi, ci, dv)) return false;
    } else {
    for (unsigned m = 0; m < R && isint; m++)
        for (unsigned nn = 0; nn < 8; nn++) {
            int64_t acc = ci[m][nn];
            for (unsigned k = 0; k < K; k++)
                acc += bop == EMU_XF_MMA_AND ? ai[m][k] & bi[k][nn] : bop ? ai[m][k] ^ bi[k][nn] : (int64_t)ai[m][k] * bi[k][nn];
            if (in->flags & EMU_F(SATFINITE)) acc = acc > INT32_MAX ? INT32_MAX : acc < INT32_MIN ? INT32_MIN : acc;
            dv[m][nn] = (uint32_t)acc;
        }
    if (!isint) {
        float (*acc)[8] = cf; /* D = C + A B in place */
        bool exact = emu_mma_exact_type(in->ty2) && emu_mma_exact_type(in->ty3);
        if (general) emu_mma_f32_by(&af[0][0], 64, &bf[0][0], 8, &acc[0][0], 8, R, 8, K, EMU_MMA_FMAF); /* the reference */
        else emu_mma_f32(&af[0][0], 64, &bf[0][0], 8, &acc[0][0], 8, R, 8, K, exact);
        for (unsigned m = 0; m < R; m++)
            for (unsigned nn = 0; nn < 8; nn++)
                dv[m][nn] = in->ty == EMU_T_F16 ? d_f16(acc[m][nn], general)
                            : acc[m][nn] != acc[m][nn] ? 0x7FFFFFFFu : (uint32_t)emu_bits32(acc[m][nn]);
    }
    }
    for (unsigned l = 0; l < 32; l++) {
        EmuThread *t = lane[l];
        unsigned gr = l >> 2, tg = l & 3;
        for (unsigned e = 0; e < NE; e++) {
            uint32_t v = dv[gr + 8 * (e >> 1)][2 * tg + (e & 1)];
            if (in->ty == EMU_T_F16) {
                if (e & 1) continue;
                uint32_t hi = dv[gr + 8 * (e >> 1)][2 * tg + 1];
                t->r[sd[e >> 1]] = (v & 0xFFFFu) | (hi << 16);
            } else {
                t->r[sd[e]] = v;
            }
        }
    }
    return true;
}

bool emu_exec_ldmatrix(EmuBlock *b, EmuThread **lane, const EmuIns *in) {
    const EmuFunc *f = lane[0]->fn;
    unsigned nmat = in->mode == EMU_MODE_X4 ? 4 : in->mode == EMU_MODE_X2 ? 2 : 1;
    uint16_t mat[4][8][8];
    for (unsigned i = 0; i < nmat; i++)
        for (unsigned r = 0; r < 8; r++) {
            EmuThread *t = lane[8 * i + r];
            uint64_t a = EMU_R(t, in, 1) + (uint64_t)in->off[0];
            if (in->space == EMU_SP_GENERIC) {
                if (a - EMU_SHARED_WINDOW >= EMU_WINDOW_SIZE)
                    return emu_fault(b, t, in, "memcheck: invalid ldmatrix address",
                                     "generic address 0x%llx (row %u of matrix %u) is not in shared memory",
                                     (unsigned long long)a, r, i);
                a -= EMU_SHARED_WINDOW;
            } else {
                a &= 0xFFFFFFFFu;
            }
            const uint8_t *p; /* without racecheck an aligned row inside the CTA's shared memory needs no check (as ld.shared's fast form) */
            if (!b->shadow && a + 16 <= b->shared_size && !(a & 15)) p = emu_cta_smem(b, t) + a;
            else if (!(p = emu_access(b, t, in, EMU_SP_SHARED, a, 16, 16, false))) return false;
            memcpy(mat[i][r], p, 16);
        }
    bool trans = in->flags & EMU_F(TRANS);
    uint32_t sd[4]; /* the destination registers' slots, one instruction for the whole warp */
    for (unsigned i = 0; i < nmat; i++) sd[i] = in->ok[0] == EMU_OK_VEC ? f->vec[in->o[0] + i] : in->o[0];
    for (unsigned l = 0; l < 32; l++) {
        unsigned row = l >> 2, col = 2 * (l & 3);
        uint64_t *r = lane[l]->r;
        for (unsigned i = 0; i < nmat; i++) {
            uint32_t lo = trans ? mat[i][col][row] : mat[i][row][col];
            uint32_t hi = trans ? mat[i][col + 1][row] : mat[i][row][col + 1];
            r[sd[i]] = lo | hi << 16;
        }
    }
    return true;
}

/* movmatrix.sync.aligned.m8n8.trans.b16 d, a: the ISA's figures give the source fragments as ldmatrix's (lane l
 * holds row l/4, columns 2(l%4) and 2(l%4)+1 of the 8x8 matrix, the lower column in the low half) and d the same
 * fragment of the transposed matrix: what ldmatrix.trans would give from the matrix in memory. */
bool emu_exec_movmatrix(EmuBlock *b, EmuThread **lane, const EmuIns *in) {
    (void)b;
    uint16_t mat[8][8];
    for (unsigned l = 0; l < 32; l++) { /* every a is read before any d is written (d may be a) */
        uint32_t a = (uint32_t)EMU_R(lane[l], in, 1);
        mat[l >> 2][2 * (l & 3)] = (uint16_t)a;
        mat[l >> 2][2 * (l & 3) + 1] = (uint16_t)(a >> 16);
    }
    for (unsigned l = 0; l < 32; l++) {
        unsigned row = l >> 2, col = 2 * (l & 3);
        EMU_R(lane[l], in, 0) = (uint32_t)mat[col][row] | (uint32_t)mat[col + 1][row] << 16;
    }
    return true;
}

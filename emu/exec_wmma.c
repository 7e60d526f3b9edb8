/* exec_wmma.c - the warp-level matrix instructions nvcc writes for CUDA's nvcuda::wmma API:
 * wmma.load, wmma.mma and wmma.store (warp-collective, .sync.aligned, all 32 lanes).
 *
 * Forms (shape: matrices A M x K, B K x N, C and D M x N):
 *   m16n16k16, m32n8k16, m8n32k16: A, B f16 (C, D f16 or f32), bf16 (f32), s8/u8 (s32, .satfinite);
 *   m16n16k8: tf32 (f32);  m8n8k4: f64;
 *   m8n8k32: s4.s4 or u4.u4 (s32, .satfinite);  m8n8k128: b1.b1 (s32) with .xor.popc or .and.popc,
 *   D = C + popc(row of A xor/and column of B).  The sub-byte and single-bit A is .row only, B .col only
 *   (load and mma; C and D either layout): CUDA's nvcuda::wmma::experimental fragments.
 * Registers per lane (the PTX ISA's fragment sizes): f16 A and B 8 (f16x2), f16 C/D 4 (f16x2), f32 and
 * s32 C/D 8, bf16 and s8/u8 A and B the matrix's elements / 32 (2 and 4 to a register), tf32 4, f64 A
 * and B 1, C/D 2; s4/u4 and b1 A and B 1 (8 nibbles, 32 bits to the register, the lowest first), C/D 2.
 *
 * Which element a fragment slot holds is not specified by the ISA (code must not depend on it; element-
 * wise arithmetic on a fragment is fine).  Here slot s of lane l (E slots a lane: registers x elements
 * per register) holds element (l E + s) mod (rows x cols) of the matrix in row-major order, so every
 * element is held by the same number of slots (two or four for f16 A and B, whose fragments have more
 * slots than the matrix has elements; one elsewhere).  mma reads each element from its first holder and
 * writes D to every holder; store writes each element once, from its first holder.  The sub-byte and
 * single-bit fragments hold each element once: lane l's A register holds elements 8l..8l+7 (s4/u4, its
 * element i at bit 4i) or 32l..32l+31 (b1, at bit i), a quarter of row l/4; its B register the same
 * elements of B in B's row-major order (K x 8: row l, or rows 4l..4l+3, whatever the .col in memory); its
 * two C/D registers elements 2l and 2l+1.
 *
 * Memory: element (r, c) of a .row matrix is element r stride + c from p, of a .col one element
 * c stride + r; stride (elements, also for s4/u4 and b1) defaults to the matrix's width (row: cols, col:
 * rows).  Element i of a type of `bits` bits is at bit i bits of the bytes from p: an s4/u4 or b1 element
 * sits at bit (i bits) mod 8 of byte i bits / 8, the lowest element in the lowest bits, as in a register
 * (and in CUTLASS's int4b_t / uint1b_t arrays).  p must be a multiple of the fragment's size in bytes (the
 * PTX ISA's rule: 32 for f16 A and B and f32 C, 8 for a u8 m16n16k16 A, ...), stride x bits a multiple of
 * 16 bytes (s4/u4: 32 elements, b1: 128; CUDA's load_matrix_sync rule), and p and stride the same in
 * every lane.  Each element is checked (memcheck, racecheck) as an access of
 * the lane that reads or writes it (the whole byte, for a narrower element).
 *
 * Numerics as mma.sync (exec_mma.c): a float D element starts from C and takes one f32 fmaf per k
 * ascending (f64: one fma in double); an f16 D is that result rounded once; NaN results are canonical;
 * integers are exact, wrapped (.satfinite: clamped; b1 has none); tf32 inputs ignore the low 13 bits. */
#include "emu/exec.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

enum { SH_M16N16K16 = 1, SH_M32N8K16, SH_M8N32K16, SH_M16N16K8, SH_M8N8K4, SH_M8N8K32, SH_M8N8K128 };
static const struct { const char *name; uint8_t m, n, k; } shapes[] = {
    {NULL, 0, 0, 0}, {"m16n16k16", 16, 16, 16}, {"m32n8k16", 32, 8, 16}, {"m8n32k16", 8, 32, 16},
    {"m16n16k8", 16, 16, 8}, {"m8n8k4", 8, 8, 4}, {"m8n8k32", 8, 8, 32}, {"m8n8k128", 8, 8, 128},
};

int emu_wmma_shape(const char *p, uint32_t l) {
    for (int i = 1; i < (int)(sizeof shapes / sizeof shapes[0]); i++)
        if (strlen(shapes[i].name) == l && memcmp(shapes[i].name, p, l) == 0) return i;
    return 0;
}

static unsigned per_reg(unsigned ty) {
    switch (ty) {
    case EMU_T_F16: case EMU_T_BF16: return 2;
    case EMU_T_S8: case EMU_T_U8: return 4;
    case EMU_T_S4: case EMU_T_U4: return 8;
    case EMU_T_B1: return 32;
    default: return 1;
    }
}

static unsigned elem_bits(unsigned ty) { return ty == EMU_T_F64 ? 64 : 32 / per_reg(ty); }

/* Rows and columns of matrix `which` (EMU_MODE_WM_A..D) of a shape. */
static void dims(unsigned shape, unsigned which, unsigned *rows, unsigned *cols) {
    unsigned m = shapes[shape].m, n = shapes[shape].n, k = shapes[shape].k;
    *rows = which == EMU_MODE_WM_B ? k : m;
    *cols = which == EMU_MODE_WM_A ? k : n;
}

/* Registers a lane holds of matrix `which` in type ty, 0 when the shape has no such fragment. */
static unsigned frag_regs(unsigned shape, unsigned which, unsigned ty) {
    bool ab = which == EMU_MODE_WM_A || which == EMU_MODE_WM_B;
    unsigned rows, cols;
    dims(shape, which, &rows, &cols);
    if (shape == SH_M8N8K32 || shape == SH_M8N8K128)
        return ab ? (shape == SH_M8N8K32 ? emu_is_sub_byte(ty) : ty == EMU_T_B1) : ty == EMU_T_S32 ? 2 : 0;
    if (shape == SH_M8N8K4) return ty != EMU_T_F64 ? 0 : ab ? 1 : 2;
    if (shape == SH_M16N16K8) return ab ? (ty == EMU_T_TF32 ? 4 : 0) : ty == EMU_T_F32 ? 8 : 0;
    if (!ab) return ty == EMU_T_F16 ? 4 : ty == EMU_T_F32 || ty == EMU_T_S32 ? 8 : 0;
    if (ty == EMU_T_F16) return 8;
    if (ty == EMU_T_BF16 || ty == EMU_T_S8 || ty == EMU_T_U8) return rows * cols / 32 / per_reg(ty);
    return 0;
}

bool emu_wmma_form(const EmuIns *in, EmuWmmaForm *f, const char **why) {
    memset(f, 0, sizeof *f);
    *why = NULL;
    unsigned sh = in->space2;
    if (!sh || sh >= sizeof shapes / sizeof shapes[0]) { *why = "no shape"; return false; }
    if (in->op == EMU_OP_WMMA_LOAD || in->op == EMU_OP_WMMA_STORE) {
        unsigned which = in->op == EMU_OP_WMMA_STORE ? EMU_MODE_WM_D : in->mode;
        if (!which) { *why = "which matrix: .a, .b or .c"; return false; }
        if (!in->ty || in->ty2) { *why = "one element type"; return false; }
        f->regs[0] = (uint8_t)frag_regs(sh, which, in->ty);
        if (!f->regs[0] && (sh == SH_M8N8K32 || sh == SH_M8N8K128) && which != EMU_MODE_WM_A && which != EMU_MODE_WM_B &&
            in->ty == EMU_T_F32) { /* ptxas takes it; the ISA defines no such fragment */
            *why = "not supported by the emulator: a .f32 C or D of the sub-byte and single-bit shapes, which ptxas takes and "
                   "the PTX ISA does not define (their C and D are .s32)";
            return false;
        }
        if (!f->regs[0]) { *why = "no such fragment: that type of that matrix in that shape"; return false; }
        bool col = in->xflags & EMU_XF_WM_COL;
        if (emu_is_packed(in->ty) && ((which == EMU_MODE_WM_A && col) || (which == EMU_MODE_WM_B && !col))) {
            *why = "a sub-byte or single-bit A is .row only, B .col only";
            return false;
        }
        return true;
    }
    /* wmma.mma: .dtype.ctype (f16 A and B) or .dtype.atype.btype.ctype */
    unsigned d = in->ty, a, bt, c;
    if (in->ty4) a = in->ty2, bt = in->ty3, c = in->ty4;
    else if (in->ty2 && !in->ty3) a = bt = EMU_T_F16, c = in->ty2;
    else { *why = "wmma.mma needs .dtype.ctype (f16 inputs) or .dtype.atype.btype.ctype"; return false; }
    bool isint = a == EMU_T_S8 || a == EMU_T_U8, packed = emu_is_packed(a);
    bool ok;
    if (packed) ok = bt == a && d == EMU_T_S32 && c == EMU_T_S32; /* s4.s4, u4.u4 or b1.b1, as the ISA and ptxas have it */
    else if (a == EMU_T_F16) ok = !in->ty4 && (d == EMU_T_F16 || d == EMU_T_F32) && (c == EMU_T_F16 || c == EMU_T_F32);
    else if (a == EMU_T_BF16 || a == EMU_T_TF32) ok = bt == a && d == EMU_T_F32 && c == EMU_T_F32;
    else if (isint) ok = (bt == EMU_T_S8 || bt == EMU_T_U8) && d == EMU_T_S32 && c == EMU_T_S32;
    else ok = a == EMU_T_F64 && bt == a && d == a && c == a;
    if (!ok) { *why = "unsupported type combination"; return false; }
    if ((in->flags & EMU_F(SATFINITE)) && !isint && !emu_is_sub_byte(a)) { *why = ".satfinite is for s8, u8, s4 and u4 wmma"; return false; }
    if ((a == EMU_T_B1) != ((in->xflags & (EMU_XF_MMA_AND | EMU_XF_MMA_XOR)) != 0)) {
        *why = a == EMU_T_B1 ? ".b1 wmma.mma needs .xor.popc or .and.popc" : ".xor.popc and .and.popc are for .b1 wmma.mma";
        return false;
    }
    if (packed && ((in->xflags & EMU_XF_WM_COL) || !(in->xflags & EMU_XF_WM_COL_B))) {
        *why = "sub-byte and single-bit wmma.mma is .row.col only";
        return false;
    }
    f->regs[0] = (uint8_t)frag_regs(sh, EMU_MODE_WM_D, d);
    f->regs[1] = (uint8_t)frag_regs(sh, EMU_MODE_WM_A, a);
    f->regs[2] = (uint8_t)frag_regs(sh, EMU_MODE_WM_B, bt);
    f->regs[3] = (uint8_t)frag_regs(sh, EMU_MODE_WM_C, c);
    if (!f->regs[0] || !f->regs[1] || !f->regs[2] || !f->regs[3]) { *why = "these types do not come in that shape"; return false; }
    f->a = (uint8_t)a, f->b = (uint8_t)bt, f->c = (uint8_t)c;
    return true;
}

/* ---- fragments ---- */
static inline uint32_t slot_of(const EmuThread *t, const EmuIns *in, unsigned op, unsigned k) {
    return in->ok[op] == EMU_OK_VEC ? t->fn->vec[in->o[op] + k] : in->o[op];
}

/* Element i (0-based, low bits first) of a register holding elements of ty. */
static uint64_t part(uint64_t reg, unsigned ty, unsigned i) {
    unsigned bits = ty == EMU_T_F64 ? 64 : 32 / per_reg(ty);
    return bits == 64 ? reg : (reg >> (bits * i)) & ((1ull << bits) - 1);
}
static uint64_t put_part(uint64_t reg, unsigned ty, unsigned i, uint64_t v) {
    unsigned bits = ty == EMU_T_F64 ? 64 : 32 / per_reg(ty);
    if (bits == 64) return v;
    uint64_t mask = ((1ull << bits) - 1) << (bits * i);
    return (reg & ~mask) | ((v << (bits * i)) & mask);
}

/* The element (row-major index e) of a matrix held in operand op: its first holder's slot. */
static uint64_t gather(EmuThread *lane[32], const EmuIns *in, unsigned op, unsigned ty, unsigned nregs, unsigned e) {
    unsigned E = nregs * per_reg(ty), l = e / E, s = e % E;
    return part(lane[l]->r[slot_of(lane[l], in, op, s / per_reg(ty))], ty, s % per_reg(ty));
}

/* ---- memory ---- */
typedef struct Mem {
    unsigned space, rows, cols, ebits;
    uint64_t p, stride;
    bool col;
} Mem;

/* The PTX ISA's alignment: each row (column) of the matrix in memory starts at a multiple of the fragment's
 * size in bytes (a lane's registers of it: 32 for an f16 A, 8 for a u8 m16n16k16 A, 16 for an f16 C), so p
 * must be.  CUDA's load_matrix_sync asks 32 bytes of every pointer, which NVIDIA's own 8-bit samples do not
 * give (immaTensorCoreGemm steps k by 16 bytes); PTX is what runs, so the fragment size is the rule. */
static bool mem_setup(EmuBlock *b, EmuThread *lane[32], const EmuIns *in, unsigned which, unsigned ty, unsigned regs, Mem *m) {
    unsigned aop = in->op == EMU_OP_WMMA_STORE ? 0 : 1;
    dims(in->space2, which, &m->rows, &m->cols);
    m->col = in->xflags & EMU_XF_WM_COL;
    m->ebits = elem_bits(ty);
    m->space = in->space;
    for (unsigned l = 0; l < 32; l++) {
        uint64_t p = EMU_R(lane[l], in, aop) + (uint64_t)in->off[0];
        if (m->space == EMU_SP_SHARED) p &= 0xFFFFFFFFu;
        uint64_t stride = in->nops > 2 ? (uint32_t)EMU_R(lane[l], in, 2) : m->col ? m->rows : m->cols;
        if (l == 0) m->p = p, m->stride = stride;
        else if (p != m->p || stride != m->stride)
            return emu_fault(b, lane[l], in, "invalid wmma", "lane %u gives address 0x%" PRIx64 " and stride %" PRIu64
                             ", lane 0 0x%" PRIx64 " and %" PRIu64 ": both must be the same in every lane", l, p, stride, m->p, m->stride);
    }
    unsigned align = regs * (ty == EMU_T_F64 ? 8 : 4);
    if (m->p % align)
        return emu_fault(b, lane[0], in, "memcheck: misaligned wmma address",
                         "address 0x%" PRIx64 " is not aligned to %u bytes (a wmma matrix starts at a multiple of its fragment's size)",
                         m->p, align);
    if (m->stride * m->ebits % 128)
        return emu_fault(b, lane[0], in, "invalid wmma", "a stride of %" PRIu64 " elements of %u %s is not a multiple of 16 bytes",
                         m->stride, m->ebits < 8 ? m->ebits : m->ebits / 8, m->ebits == 1 ? "bit" : m->ebits < 8 ? "bits" : "bytes");
    if (m->stride < (m->col ? m->rows : m->cols))
        return emu_fault(b, lane[0], in, "invalid wmma", "a stride of %" PRIu64 " elements is less than the matrix's %u %s", m->stride,
                         m->col ? m->rows : m->cols, m->col ? "rows" : "columns");
    return true;
}

/* The bytes of element e (row-major index) as an access of lane t; *shift: the element's bit offset in them (0
 * unless it is narrower than a byte). */
static uint8_t *elem_at(EmuBlock *b, EmuThread *t, const EmuIns *in, const Mem *m, unsigned e, bool write, unsigned *shift) {
    uint64_t r = e / m->cols, c = e % m->cols;
    uint64_t bit = (m->col ? c * m->stride + r : r * m->stride + c) * m->ebits;
    unsigned size = m->ebits < 8 ? 1 : m->ebits / 8;
    *shift = (unsigned)(bit % 8);
    return emu_access(b, t, in, m->space, m->p + bit / 8, size, size, write);
}

static uint64_t load_bits(const uint8_t *p, unsigned size) {
    uint64_t v = 0;
    memcpy(&v, p, size); /* little-endian host */
    return v;
}

static bool exec_load(EmuBlock *b, EmuThread *lane[32], const EmuIns *in, const EmuWmmaForm *fm) {
    Mem m;
    if (!mem_setup(b, lane, in, in->mode, in->ty, fm->regs[0], &m)) return false;
    unsigned epr = per_reg(in->ty), E = fm->regs[0] * epr, T = m.rows * m.cols;
    uint64_t regs[32][8];
    for (unsigned l = 0; l < 32; l++)
        for (unsigned j = 0; j < fm->regs[0]; j++) {
            regs[l][j] = 0;
            for (unsigned i = 0; i < epr; i++) {
                unsigned shift;
                const uint8_t *p = elem_at(b, lane[l], in, &m, (l * E + j * epr + i) % T, false, &shift);
                if (!p) return false;
                regs[l][j] = put_part(regs[l][j], in->ty, i, load_bits(p, m.ebits < 8 ? 1 : m.ebits / 8) >> shift);
            }
        }
    for (unsigned l = 0; l < 32; l++)
        for (unsigned j = 0; j < fm->regs[0]; j++) lane[l]->r[slot_of(lane[l], in, 0, j)] = regs[l][j];
    return true;
}

static bool exec_store(EmuBlock *b, EmuThread *lane[32], const EmuIns *in, const EmuWmmaForm *fm) {
    Mem m;
    if (!mem_setup(b, lane, in, EMU_MODE_WM_D, in->ty, fm->regs[0], &m)) return false;
    unsigned E = fm->regs[0] * per_reg(in->ty), T = m.rows * m.cols;
    for (unsigned e = 0; e < T; e++) { /* D is f16, f32, s32 or f64: whole bytes */
        uint64_t v = gather(lane, in, 1, in->ty, fm->regs[0], e);
        unsigned shift;
        uint8_t *p = elem_at(b, lane[e / E], in, &m, e, true, &shift);
        if (!p) return false;
        memcpy(p, &v, m.ebits / 8);
    }
    return true;
}

static bool exec_mma(EmuBlock *b, EmuThread *lane[32], const EmuIns *in, const EmuWmmaForm *fm) {
    bool general = b->L->opt->general_tensor_ops;
    unsigned M = shapes[in->space2].m, N = shapes[in->space2].n, K = shapes[in->space2].k, d = in->ty;
    bool isint = d == EMU_T_S32, f64 = d == EMU_T_F64;
    unsigned bop = in->xflags & (EMU_XF_MMA_AND | EMU_XF_MMA_XOR); /* b1: each product a bit operation */
    enum { MAXE = 8 * 128 }; /* m8n8k128's A and B */
    double A[MAXE], B[MAXE], C[MAXE];
    for (unsigned e = 0; e < M * K; e++) A[e] = emu_elem_value(fm->a, gather(lane, in, 1, fm->a, fm->regs[1], e));
    for (unsigned e = 0; e < K * N; e++) B[e] = emu_elem_value(fm->b, gather(lane, in, 2, fm->b, fm->regs[2], e));
    for (unsigned e = 0; e < M * N; e++) C[e] = emu_elem_value(fm->c, gather(lane, in, 3, fm->c, fm->regs[3], e));
    uint64_t D[MAXE];
    for (unsigned i = 0; i < M; i++)
        for (unsigned j = 0; j < N; j++) {
            uint64_t out;
            if (isint) {
                int64_t acc = (int64_t)C[i * N + j];
                for (unsigned k = 0; k < K; k++) {
                    int64_t x = (int64_t)A[i * K + k], y = (int64_t)B[k * N + j];
                    acc += bop == EMU_XF_MMA_AND ? x & y : bop ? x ^ y : x * y;
                }
                if (in->flags & EMU_F(SATFINITE)) acc = acc > INT32_MAX ? INT32_MAX : acc < INT32_MIN ? INT32_MIN : acc;
                out = (uint32_t)acc;
            } else if (f64) {
                double acc = C[i * N + j];
                for (unsigned k = 0; k < K; k++) acc = fma(A[i * K + k], B[k * N + j], acc);
                uint64_t bits;
                memcpy(&bits, &acc, 8);
                out = acc != acc ? 0x7FF8000000000000ull : bits;
            } else {
                float acc = (float)C[i * N + j];
                for (unsigned k = 0; k < K; k++) acc = fmaf((float)A[i * K + k], (float)B[k * N + j], acc);
                if (d == EMU_T_F16) /* by its bits; the reference (general_tensor_ops) through emu_round_f64 */
                    out = general ? (acc != acc ? 0x7FFF : emu_round_f64(acc, EMU_FMT_F16, EMU_RND_RN)) : emu_f32_to_f16_rn(acc);
                else out = acc != acc ? 0x7FFFFFFFu : emu_bits32(acc);
            }
            D[i * N + j] = out;
        }
    /* D to every holder (after every read: D may be the registers of A, B or C) */
    unsigned epr = per_reg(d), E = fm->regs[0] * epr, T = M * N;
    for (unsigned l = 0; l < 32; l++)
        for (unsigned j = 0; j < fm->regs[0]; j++) {
            uint64_t reg = 0;
            for (unsigned i = 0; i < epr; i++) reg = put_part(reg, d, i, D[(l * E + j * epr + i) % T]);
            lane[l]->r[slot_of(lane[l], in, 0, j)] = reg;
        }
    return true;
}

bool emu_exec_wmma(EmuBlock *b, EmuThread **lane, const EmuIns *in) {
    EmuWmmaForm fm;
    const char *why;
    if (!emu_wmma_form(in, &fm, &why)) return emu_fault(b, lane[0], in, "unsupported instruction", "%s", why);
    switch (in->op) {
    case EMU_OP_WMMA_LOAD: return exec_load(b, lane, in, &fm);
    case EMU_OP_WMMA_STORE: return exec_store(b, lane, in, &fm);
    default: return exec_mma(b, lane, in, &fm);
    }
}

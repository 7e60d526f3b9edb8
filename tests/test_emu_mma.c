/* test_emu_mma.c - tensor-core instructions and cp.async in the PTX emulator.
 *
 *   1. mma.sync: for each shape and type, a hand-written kernel in which each
 *      lane loads its A, B, C fragment registers from global memory, runs the
 *      mma and stores D.  The host packs and unpacks the fragments with the
 *      PTX ISA's per-shape formulas written out here (not the emulator's
 *      generic one), on random inputs with poisoned outputs, for several warps
 *      at once, and compares with a C matrix product in the documented order
 *      (D = C, then one fmaf per k ascending; integers exact, wrapped).
 *   2. ldmatrix .x1/.x2/.x4 with and without .trans: shared memory filled with
 *      known values, rows at permuted addresses, unused lanes' addresses
 *      invalid; registers compared with the documented mapping.
 *   3. An mma fed by ldmatrix from shared memory filled by cp.async, hand
 *      written and as LLVM's NVPTX backend emits it (tests/emu/mma.ll).
 *   4. cp.async sizes and src-size zero fill, commit/wait, racecheck of its
 *      writes; mma/ldmatrix errors (partial warp, misaligned row, bad forms).
 * wmma's alignment and address rules: test_emu_subbyte.c. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/exec.h"
#include "runtime/device.h"
#include "support/support.h"
#include "test_ptxas.h"
#include "test_emu_mma.h"

/* ---- 1. mma.sync ---- */
enum { T_F16, T_BF16, T_TF32, T_S8, T_U8, T_F32, T_S32, T_E4M3, T_E5M2 };
static const char *const tname[] = {"f16", "bf16", "tf32", "s8", "u8", "f32", "s32", "e4m3", "e5m2"};
static bool is_f8(unsigned ty) { return ty == T_E4M3 || ty == T_E5M2; }

typedef struct MmaForm {
    unsigned k, d, a, b, c;
    bool satfinite, alias_dc; /* alias_dc: D and C are the same registers */
} MmaForm;

static unsigned elems(unsigned ty) { return ty == T_TF32 ? 1 : (ty == T_F16 || ty == T_BF16) ? 2 : 4; }
static unsigned n_a(const MmaForm *f) { return 16 * f->k / 32 / elems(f->a); }
static unsigned n_b(const MmaForm *f) { return 8 * f->k / 32 / elems(f->b); }
static unsigned n_acc(unsigned ty) { return ty == T_F16 ? 2 : 4; }

/* The PTX ISA's fragment formulas ("Matrix Fragments for mma.m16n8kK"), one
 * case per table: element i of the lane's fragment is at (row, col). */
static void frag_a(const MmaForm *f, unsigned lane, unsigned i, unsigned *row, unsigned *col) {
    unsigned g = lane >> 2, t = lane % 4;
    if (f->a == T_F16 || f->a == T_BF16) {
        if (f->k == 16) {
            *row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
            *col = i < 4 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8;
        } else { /* k8 */
            *row = i < 2 ? g : g + 8;
            *col = t * 2 + (i & 1);
        }
    } else if (f->a == T_TF32) {
        if (f->k == 8) {
            *row = (i == 0 || i == 2) ? g : g + 8;
            *col = i < 2 ? t : t + 4;
        } else { /* k4 */
            *row = i == 0 ? g : g + 8;
            *col = t;
        }
    } else { /* s8/u8/e4m3/e5m2 (one table in the PTX ISA) */
        if (f->k == 32) {
            *row = (i < 4 || (i >= 8 && i < 12)) ? g : g + 8;
            *col = i < 8 ? t * 4 + (i & 3) : t * 4 + (i & 3) + 16;
        } else { /* k16 */
            *row = i < 4 ? g : g + 8;
            *col = t * 4 + (i & 3);
        }
    }
}

static void frag_b(const MmaForm *f, unsigned lane, unsigned i, unsigned *row, unsigned *col) {
    unsigned g = lane >> 2, t = lane % 4;
    *col = g;
    if (f->b == T_F16 || f->b == T_BF16) *row = f->k == 16 ? (i < 2 ? t * 2 + (i & 1) : t * 2 + (i & 1) + 8) : t * 2 + i;
    else if (f->b == T_TF32) *row = f->k == 8 ? (i == 0 ? t : t + 4) : t;
    else *row = f->k == 32 ? (i < 4 ? t * 4 + (i & 3) : t * 4 + (i & 3) + 16) : t * 4 + i;
}

static void frag_c(unsigned lane, unsigned i, unsigned *row, unsigned *col) {
    unsigned g = lane >> 2, t = lane % 4;
    *row = i < 2 ? g : g + 8;
    *col = t * 2 + (i & 1);
}

/* Random element bits of a type (f16: some subnormals; tf32: garbage low bits). */
static uint32_t rnd_elem(unsigned ty) {
    switch (ty) {
    case T_F16: return rnd64() % 16 == 0 ? (uint32_t)(rnd64() & 0x83FF) : f16_bits(rndf(-4, 4));
    case T_BF16: return f2u(rndf(-4, 4)) >> 16;
    case T_TF32: return f2u(rndf(-4, 4)) ^ (uint32_t)(rnd64() & 0x1FFF);
    case T_F32: return f2u(rndf(-100, 100));
    case T_E4M3: case T_E5M2: { /* any finite code; NaN and infinity where a test puts them */
        uint32_t v;
        do v = (uint32_t)(rnd64() & 0xFF);
        while (ty == T_E4M3 ? (v & 0x7F) == 0x7F : (v & 0x7C) == 0x7C);
        return v;
    }
    default: return (uint32_t)rnd64(); /* s8/u8: low byte used; s32: all */
    }
}

/* f8 codes by the OCP FP8 definitions (E4M3FN: bias 7, S.1111.111 the only NaN; E5M2: bias 15, IEEE-like),
 * written here from the format, not taken from the emulator */
static float f8_val(unsigned ty, uint32_t v) {
    unsigned s = v >> 7 & 1, e4 = ty == T_E4M3, ebits = e4 ? 4 : 5, mbits = 7 - ebits, bias = e4 ? 7 : 15;
    unsigned e = (v & 0x7F) >> mbits, m = v & ((1u << mbits) - 1);
    float x;
    if (e4 && e == 15 && m == 7) x = NAN;
    else if (!e4 && e == 31) x = m ? NAN : INFINITY;
    else x = e ? ldexpf(1.0f + (float)m / (float)(1u << mbits), (int)e - (int)bias) : ldexpf((float)m / (float)(1u << mbits), 1 - (int)bias);
    return s ? -x : x;
}
static float elem_float(unsigned ty, uint32_t v) {
    switch (ty) {
    case T_F16: return f16_val((uint16_t)v);
    case T_BF16: return bf16_val((uint16_t)v);
    case T_TF32: return u2f(v & 0xFFFFE000u);
    case T_E4M3: case T_E5M2: return f8_val(ty, v);
    default: return u2f(v);
    }
}
static int64_t elem_int(unsigned ty, uint32_t v) { return ty == T_S8 ? (int8_t)v : ty == T_U8 ? (uint8_t)v : (int32_t)v; }

static char *mma_ptx(const MmaForm *f) {
    Str s = {0};
    unsigned na = n_a(f), nb = n_b(f), nc = n_acc(f->c), nd = n_acc(f->d);
    /* f8 forms: sm_89; PTX 8.7 for m16n8k16 and the f16 accumulator, 8.4 for the rest */
    bool f8 = is_f8(f->a), ptx87 = f8 && (f->k == 16 || f->d == T_F16);
    str_printf(&s, "%s.visible .entry mma(", !f8 ? PTX_HEAD : ptx87 ? ".version 8.7\n.target sm_89\n.address_size 64\n"
                                                                   : ".version 8.4\n.target sm_89\n.address_size 64\n");
    str_printf(&s, ".param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{\n"
                   " .reg .b32 %%a<4>;\n .reg .b32 %%b<4>;\n .reg .b32 %%c<4>;\n .reg .b32 %%d<4>;\n"
                   " .reg .b32 %%r<4>;\n .reg .b64 %%rd<12>;\n"
                   " mov.u32 %%r1, %%tid.x;\n mov.u32 %%r2, %%ctaid.x;\n mov.u32 %%r3, %%ntid.x;\n mad.lo.s32 %%r1, %%r2, %%r3, %%r1;\n"
                   " mul.wide.u32 %%rd1, %%r1, 16;\n");
    const char *pn[4] = {"pa", "pb", "pc", "pd"};
    for (int p = 0; p < 4; p++)
        str_printf(&s, " ld.param.u64 %%rd%d, [%s];\n add.s64 %%rd%d, %%rd%d, %%rd1;\n", 2 + p, pn[p], 2 + p, 2 + p);
    for (unsigned j = 0; j < na; j++) str_printf(&s, " ld.global.b32 %%a%u, [%%rd2+%u];\n", j, 4 * j);
    for (unsigned j = 0; j < nb; j++) str_printf(&s, " ld.global.b32 %%b%u, [%%rd3+%u];\n", j, 4 * j);
    for (unsigned j = 0; j < nc; j++) str_printf(&s, " ld.global.b32 %%c%u, [%%rd4+%u];\n", j, 4 * j);
    str_printf(&s, " mma.sync.aligned.m16n8k%u.row.col%s.%s.%s.%s.%s ", f->k, f->satfinite ? ".satfinite" : "", tname[f->d],
               tname[f->a], tname[f->b], tname[f->c]);
    const char *dr = f->alias_dc ? "c" : "d";
    str_puts(&s, "{");
    for (unsigned j = 0; j < nd; j++) str_printf(&s, "%s%%%s%u", j ? ", " : "", dr, j);
    str_puts(&s, "}, {");
    for (unsigned j = 0; j < na; j++) str_printf(&s, "%s%%a%u", j ? ", " : "", j);
    str_puts(&s, "}, {");
    for (unsigned j = 0; j < nb; j++) str_printf(&s, "%s%%b%u", j ? ", " : "", j);
    str_puts(&s, "}, {");
    for (unsigned j = 0; j < nc; j++) str_printf(&s, "%s%%c%u", j ? ", " : "", j);
    str_puts(&s, "};\n");
    for (unsigned j = 0; j < nd; j++) str_printf(&s, " st.global.b32 [%%rd5+%u], %%%s%u;\n", 4 * j, dr, j);
    str_puts(&s, " ret;\n}\n");
    return str_take(&s);
}

/* One warp's problem: matrices as element bits. */
typedef struct Problem { uint32_t a[16][32], b[32][8], c[16][8]; } Problem;

static void run_mma_form(TileDevice *d, const MmaForm *f) {
    enum { WARPS = 6 };
    char *ptx = mma_ptx(f);
    TileDevModule *m;
    TileDevFunction *fn = load(d, ptx, "mma", &m);
    static Problem pr[WARPS];
    static uint32_t fa[WARPS * 32][4], fb[WARPS * 32][4], fc[WARPS * 32][4], fd[WARPS * 32][4];
    memset(fa, 0xEE, sizeof fa);
    memset(fb, 0xEE, sizeof fb);
    memset(fc, 0xEE, sizeof fc);
    unsigned ea = elems(f->a), eb = elems(f->b), bits_a = 32 / ea, bits_b = 32 / eb;
    for (unsigned w = 0; w < WARPS; w++) {
        Problem *p = &pr[w];
        for (unsigned i = 0; i < 16; i++)
            for (unsigned k = 0; k < f->k; k++) p->a[i][k] = rnd_elem(f->a) & (bits_a == 32 ? ~0u : (1u << bits_a) - 1);
        for (unsigned k = 0; k < f->k; k++)
            for (unsigned j = 0; j < 8; j++) p->b[k][j] = rnd_elem(f->b) & (bits_b == 32 ? ~0u : (1u << bits_b) - 1);
        for (unsigned i = 0; i < 16; i++)
            for (unsigned j = 0; j < 8; j++) p->c[i][j] = f->c == T_F16 ? f16_bits(rndf(-8, 8)) : rnd_elem(f->c);
        if (w == 1 && f->c == T_S32) /* near the s32 limits: wraparound / saturation */
            for (unsigned i = 0; i < 16; i++)
                for (unsigned j = 0; j < 8; j++) p->c[i][j] = (i + j) % 2 ? 0x7FFFFF00u + (uint32_t)(rnd64() % 200) : 0x80000000u + (uint32_t)(rnd64() % 200);
        if (w == 2 && f->c != T_S32) { /* NaN and infinity propagate; NaN results are canonical */
            p->c[3][5] = f->c == T_F16 ? 0x7E01 : 0x7FC00001u;
            p->a[7][1] = f->a == T_F16 ? 0x7C00 : f->a == T_BF16 ? 0x7F80 : is_f8(f->a) ? 0x7F : 0x7F800000u; /* e4m3: NaN */
            if (f->b == T_E5M2) p->b[2][6] = 0xFC; /* -infinity */
        }
        if ((w == 4 || w == 5) && (f->a == T_BF16 || f->a == T_TF32)) {
            /* products that are not exact in f32, so D is each fmaf's single rounding and not a sum of rounded
             * products: below f32's normal range (warp 4, products of about 2^-144, C about 2^-142), and past
             * its largest value (warp 5: one product of 2^128 to 1.96 2^128 a row, C -2^127 to -2^128) */
            unsigned sh = f->a == T_BF16 ? 16 : 0;
            for (unsigned i = 0; i < 16; i++)
                for (unsigned k = 0; k < f->k; k++)
                    p->a[i][k] = w == 4 ? f2u(ldexpf(rndf(-2, 2), -72)) >> sh : k == i % f->k ? f2u(ldexpf(rndf(1, 1.4f), 64)) >> sh : 0;
            for (unsigned k = 0; k < f->k; k++)
                for (unsigned j = 0; j < 8; j++) p->b[k][j] = f2u(w == 4 ? ldexpf(rndf(-2, 2), -72) : ldexpf(rndf(1, 1.4f), 64)) >> sh;
            for (unsigned i = 0; i < 16; i++)
                for (unsigned j = 0; j < 8; j++) p->c[i][j] = f2u(w == 4 ? ldexpf(rndf(-2, 2), -142) : -ldexpf(rndf(1, 2), 127));
        }
        if (w == 3 && is_f8(f->a)) /* the extremes: 448 (e4m3) and 57344 (e5m2), subnormals */
            for (unsigned k = 0; k < f->k; k++) p->a[k % 16][k] = f->a == T_E4M3 ? (k % 2 ? 0x7E : 0x01) : (k % 2 ? 0xFB : 0x81);
        for (unsigned l = 0; l < 32; l++) {
            uint32_t *ra = fa[w * 32 + l], *rb = fb[w * 32 + l], *rc = fc[w * 32 + l];
            for (unsigned j = 0; j < n_a(f); j++) ra[j] = 0;
            for (unsigned j = 0; j < n_b(f); j++) rb[j] = 0;
            for (unsigned i = 0; i < n_a(f) * ea; i++) {
                unsigned row, col;
                frag_a(f, l, i, &row, &col);
                if (ea == 1) ra[i] = p->a[row][col];
                else ra[i / ea] |= p->a[row][col] << (bits_a * (i % ea));
            }
            for (unsigned i = 0; i < n_b(f) * eb; i++) {
                unsigned row, col;
                frag_b(f, l, i, &row, &col);
                if (eb == 1) rb[i] = p->b[row][col];
                else rb[i / eb] |= p->b[row][col] << (bits_b * (i % eb));
            }
            if (f->c == T_F16) rc[0] = rc[1] = 0;
            for (unsigned i = 0; i < 4; i++) {
                unsigned row, col;
                frag_c(l, i, &row, &col);
                if (f->c == T_F16) rc[i / 2] |= p->c[row][col] << (16 * (i % 2));
                else rc[i] = p->c[row][col];
            }
        }
    }
    uint64_t da = upload(d, fa, sizeof fa), db = upload(d, fb, sizeof fb), dc = upload(d, fc, sizeof fc);
    uint64_t dd = poisoned(d, sizeof fd);
    void *params[] = {&da, &db, &dc, &dd};
    cr_assert_eq(dev_launch(fn, WARPS / 2, 1, 1, 64, 1, 1, 0, NULL, params), DEV_OK, "%s\n%s", dev_last_error(d), ptx);
    download(d, fd, dd, sizeof fd);
    for (unsigned w = 0; w < WARPS; w++) {
        const Problem *p = &pr[w];
        uint32_t want[16][8];
        for (unsigned i = 0; i < 16; i++)
            for (unsigned j = 0; j < 8; j++) {
                if (f->d == T_S32) {
                    int64_t acc = (int32_t)p->c[i][j];
                    for (unsigned k = 0; k < f->k; k++) acc += elem_int(f->a, p->a[i][k]) * elem_int(f->b, p->b[k][j]);
                    if (f->satfinite) acc = acc > INT32_MAX ? INT32_MAX : acc < INT32_MIN ? INT32_MIN : acc;
                    want[i][j] = (uint32_t)acc;
                } else {
                    float acc = f->c == T_F16 ? f16_val((uint16_t)p->c[i][j]) : u2f(p->c[i][j]);
                    for (unsigned k = 0; k < f->k; k++) acc = fmaf(elem_float(f->a, p->a[i][k]), elem_float(f->b, p->b[k][j]), acc);
                    if (f->d == T_F16) want[i][j] = isnan(acc) ? 0x7FFF : f16_bits(acc);
                    else want[i][j] = isnan(acc) ? 0x7FFFFFFFu : f2u(acc);
                }
            }
        for (unsigned l = 0; l < 32; l++)
            for (unsigned i = 0; i < 4; i++) {
                unsigned row, col;
                frag_c(l, i, &row, &col);
                const uint32_t *rd = fd[w * 32 + l];
                uint32_t got = f->d == T_F16 ? (rd[i / 2] >> (16 * (i % 2))) & 0xFFFF : rd[i];
                cr_assert_eq(got, want[row][col], "m16n8k%u %s.%s.%s.%s warp %u lane %u D[%u][%u]: got %#x, want %#x", f->k,
                             tname[f->d], tname[f->a], tname[f->b], tname[f->c], w, l, row, col, got, want[row][col]);
            }
        if (f->d == T_F16) /* unused halves of a 2-register D stay as stored: check the slots past D */
            for (unsigned l = 0; l < 32; l++) cr_assert_eq(fd[w * 32 + l][2], 0xFFFFFFFFu);
        /* a sanity check of the reference itself: close to the double-precision product */
        if (f->d == T_F32 && w == 0)
            for (unsigned i = 0; i < 16; i++)
                for (unsigned j = 0; j < 8; j++) {
                    double s = f->c == T_F16 ? f16_val((uint16_t)p->c[i][j]) : u2f(p->c[i][j]), mag = fabs(s);
                    for (unsigned k = 0; k < f->k; k++) {
                        double t = (double)elem_float(f->a, p->a[i][k]) * elem_float(f->b, p->b[k][j]);
                        s += t;
                        mag += fabs(t);
                    }
                    cr_assert(fabs(s - u2f(want[i][j])) <= mag * 0x1p-20, "reference far from the exact product");
                }
    }
    dev_module_unload(m);
    free(ptx);
}

static const MmaForm mma_forms[] = {
    {16, T_F32, T_F16, T_F16, T_F32, false, false},
    {16, T_F32, T_F16, T_F16, T_F32, false, true},
    {16, T_F32, T_BF16, T_BF16, T_F32, false, false},
    {8, T_F32, T_F16, T_F16, T_F32, false, false},
    {8, T_F32, T_BF16, T_BF16, T_F32, false, true},
    {16, T_F16, T_F16, T_F16, T_F16, false, true},
    {8, T_F16, T_F16, T_F16, T_F16, false, false},
    {8, T_F32, T_TF32, T_TF32, T_F32, false, false},
    {4, T_F32, T_TF32, T_TF32, T_F32, false, true},
    {32, T_S32, T_S8, T_S8, T_S32, false, false},
    {32, T_S32, T_S8, T_S8, T_S32, true, true},
    {32, T_S32, T_U8, T_S8, T_S32, false, false},
    {32, T_S32, T_U8, T_U8, T_S32, true, false},
    {16, T_S32, T_S8, T_U8, T_S32, false, false},
    {16, T_S32, T_S8, T_S8, T_S32, false, false},
};

/* sm_89's f8 forms (PTX 8.4: m16n8k32 into f32; 8.7: m16n8k16 and f16 accumulators); e4m3 and e5m2 mix */
static const MmaForm mma_f8_forms[] = {
    {32, T_F32, T_E4M3, T_E4M3, T_F32, false, false},
    {32, T_F32, T_E4M3, T_E5M2, T_F32, false, true},
    {32, T_F32, T_E5M2, T_E4M3, T_F32, false, false},
    {32, T_F32, T_E5M2, T_E5M2, T_F32, false, false},
    {16, T_F32, T_E4M3, T_E4M3, T_F32, false, false},
    {16, T_F32, T_E5M2, T_E4M3, T_F32, false, true},
    {32, T_F16, T_E4M3, T_E5M2, T_F16, false, true},
    {16, T_F16, T_E5M2, T_E5M2, T_F16, false, false},
};

Test(mma, every_form_against_c_reference) {
    TileDevice *d = open_emu(false);
    for (size_t i = 0; i < ARRAY_LEN(mma_forms); i++) run_mma_form(d, &mma_forms[i]);
    dev_close(d);
    d = open_emu_as("emu:sm_89", false);
    for (size_t i = 0; i < ARRAY_LEN(mma_f8_forms); i++) run_mma_form(d, &mma_f8_forms[i]);
    dev_close(d);
}

/* ---- 2. mma.sp / mma.sp::ordered_metadata (sparse A) ----
 * Written from the PTX ISA's "Sparse matrix storage" and "Matrix fragments for multiply-accumulate operation with
 * sparse matrix A" (independently of the emulator's code):
 *   - each row of the dense 16 x K matrix A is cut into chunks of 4 elements (tf32: 2; s4/u4: 8); a chunk keeps 2
 *     values (tf32: 1; s4/u4: 2 pairs of adjacent elements, 4 values) and a 4-bit nibble of two 2-bit indices
 *     (the low one first) says where: value s of a 4-chunk at index s, pair s of an 8-chunk at 2 index(s),
 *     tf32's value at the first element for 0b0100, at the second for 0b1110;
 *   - the compressed A (16 x K/2) is held as the tables give it (row g or g + 8, a thread's chunks from column
 *     4t, 2t or 16t of the dense row: the dense m16n8k(K/2) fragment of the compressed matrix); B and C/D as for mma;
 *   - the metadata: in each group of 4 threads, the 1, 2 or 4 the selector names (1: thread `sel`; 2: threads
 *     2 sel, 2 sel + 1; 4: all, sel 0) hold the group's rows g and g + 8: thread j of them the nibbles of chunks
 *     4j..4j+3, row g in bits 0-15, row g + 8 in bits 16-31 (the figures' "Tk: [m..n]" cells).
 * Each form runs with every selector the ISA defines; the other lanes' metadata registers hold garbage; metadata
 * is random (.sp: the two indices in either order; ::ordered_metadata ascending), and one warp puts an infinity
 * (e4m3: NaN) in B, which only the rows whose metadata picks that element may see. */
enum { T_S4 = T_E5M2 + 1, T_U4 };
typedef struct SpForm {
    unsigned k, d, a, b;
    bool sat, ordered;
} SpForm;
static const char *sp_tname(unsigned ty) { return ty == T_S4 ? "s4" : ty == T_U4 ? "u4" : tname[ty]; }
static unsigned sp_elems(unsigned ty) { return ty == T_S4 || ty == T_U4 ? 8 : elems(ty); }
static int64_t sp_int(unsigned ty, uint32_t v) {
    return ty == T_S4 ? (int64_t)(v & 7) - (int64_t)(v & 8) : ty == T_U4 ? (int64_t)(v & 15) : elem_int(ty, v);
}

static void sp_frag_a(const SpForm *f, unsigned lane, unsigned i, unsigned *row, unsigned *ccol) {
    unsigned g = lane >> 2, t = lane % 4, E = sp_elems(f->a);
    if (f->a == T_TF32) { /* a0 a2 row g, a1 a3 row g + 8; dense columns 2t (a0, a1), 2t + 8 (a2, a3) */
        *row = i % 2 ? g + 8 : g;
        *ccol = t + (i >= 2 ? 4 : 0);
        return;
    }
    /* registers alternate rows g, g + 8; the second pair of registers (k32 f16, k64 8-bit, k128 4-bit) from
     * dense column 16, 32 or 64 on: compressed 8, 16, 32 */
    unsigned r = i / E;
    *row = r % 2 ? g + 8 : g;
    *ccol = t * E + i % E + (r >= 2 ? 4 * E : 0);
}
static unsigned sp_frag_b_row(const SpForm *f, unsigned lane, unsigned i) { /* column: lane / 4 */
    unsigned t = lane % 4, E = sp_elems(f->b);
    return t * E + i % E + 4 * E * (i / E); /* register j from row 4E j (the tables' "rows 0-15, 16-31, ..." figures) */
}

static uint32_t sp_rnd(unsigned ty) {
    if (ty == T_S4 || ty == T_U4) return (uint32_t)(rnd64() & 15);
    uint32_t v = rnd_elem(ty);
    return sp_elems(ty) == 1 ? v : v & ((1u << (32 / sp_elems(ty))) - 1);
}

static char *sp_ptx(const SpForm *f, unsigned sel) {
    Str s = {0};
    unsigned n = f->k / (4 * sp_elems(f->a)), nacc = f->d == T_F16 ? 2 : 4;
    bool f8 = is_f8(f->a);
    str_printf(&s, ".version %s\n.target %s\n.address_size 64\n", f->ordered ? "8.5" : f8 ? "8.4" : "7.1", f8 ? "sm_89" : "sm_80");
    str_puts(&s, ".visible .entry mma(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd, .param .u64 pe)\n{\n"
                 " .reg .b32 %a<4>;\n .reg .b32 %b<4>;\n .reg .b32 %c<4>;\n .reg .b32 %d<4>;\n .reg .b32 %e;\n"
                 " .reg .b32 %r<4>;\n .reg .b64 %rd<12>;\n"
                 " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %ntid.x;\n mad.lo.s32 %r1, %r2, %r3, %r1;\n"
                 " mul.wide.u32 %rd1, %r1, 16;\n mul.wide.u32 %rd7, %r1, 4;\n");
    const char *pn[5] = {"pa", "pb", "pc", "pd", "pe"};
    for (int p = 0; p < 5; p++)
        str_printf(&s, " ld.param.u64 %%rd%d, [%s];\n add.s64 %%rd%d, %%rd%d, %%rd%d;\n", 2 + p, pn[p], 2 + p, 2 + p, p == 4 ? 7 : 1);
    for (unsigned j = 0; j < n; j++) str_printf(&s, " ld.global.b32 %%a%u, [%%rd2+%u];\n ld.global.b32 %%b%u, [%%rd3+%u];\n", j, 4 * j, j, 4 * j);
    for (unsigned j = 0; j < nacc; j++) str_printf(&s, " ld.global.b32 %%c%u, [%%rd4+%u];\n", j, 4 * j);
    str_puts(&s, " ld.global.b32 %e, [%rd6];\n");
    str_printf(&s, " mma.%s.sync.aligned.m16n8k%u.row.col%s.%s.%s.%s.%s {", f->ordered ? "sp::ordered_metadata" : "sp", f->k,
               f->sat ? ".satfinite" : "", sp_tname(f->d), sp_tname(f->a), sp_tname(f->b), sp_tname(f->d));
    for (unsigned j = 0; j < nacc; j++) str_printf(&s, "%s%%d%u", j ? ", " : "", j);
    str_puts(&s, "}, {");
    for (unsigned j = 0; j < n; j++) str_printf(&s, "%s%%a%u", j ? ", " : "", j);
    str_puts(&s, "}, {");
    for (unsigned j = 0; j < n; j++) str_printf(&s, "%s%%b%u", j ? ", " : "", j);
    str_puts(&s, "}, {");
    for (unsigned j = 0; j < nacc; j++) str_printf(&s, "%s%%c%u", j ? ", " : "", j);
    str_printf(&s, "}, %%e, %u;\n", sel);
    for (unsigned j = 0; j < nacc; j++) str_printf(&s, " st.global.b32 [%%rd5+%u], %%d%u;\n", 4 * j, j);
    str_puts(&s, " ret;\n}\n");
    return str_take(&s);
}

static void run_sparse_form(TileDevice *d, const SpForm *f, unsigned sel) {
    enum { WARPS = 4 };
    char *ptx = sp_ptx(f, sel);
    TileDevModule *m;
    TileDevFunction *fn = load(d, ptx, "mma", &m);
    unsigned cw = f->a == T_TF32 ? 2 : sp_elems(f->a) == 8 ? 8 : 4, vpc = cw / 2, P = f->k / 2, nch = f->k / cw;
    unsigned mthreads = nch / 4, E = sp_elems(f->a), n = f->k / (4 * E), bits = 32 / E;
    static uint32_t va[WARPS][16][64], b[WARPS][128][8], c[WARPS][16][8], nib[WARPS][16][32];
    static uint32_t fa[WARPS * 32][4], fb[WARPS * 32][4], fc[WARPS * 32][4], fd[WARPS * 32][4], fe[WARPS * 32];
    for (unsigned w = 0; w < WARPS; w++) {
        for (unsigned i = 0; i < 16; i++) {
            for (unsigned p = 0; p < P; p++) va[w][i][p] = sp_rnd(f->a);
            for (unsigned ch = 0; ch < nch; ch++) {
                if (f->a == T_TF32) {
                    nib[w][i][ch] = rnd64() % 2 ? 0xE : 0x4;
                    continue;
                }
                unsigned i0 = (unsigned)(rnd64() % 4), i1 = (i0 + 1 + (unsigned)(rnd64() % 3)) % 4;
                if (f->ordered && i0 > i1) { unsigned x = i0; i0 = i1; i1 = x; }
                nib[w][i][ch] = i0 | i1 << 2;
            }
            for (unsigned j = 0; j < 8; j++) c[w][i][j] = f->d == T_F16 ? f16_bits(rndf(-8, 8)) : f->d == T_S32 ? (uint32_t)rnd64() : rnd_elem(T_F32);
        }
        for (unsigned k = 0; k < f->k; k++)
            for (unsigned j = 0; j < 8; j++) b[w][k][j] = sp_rnd(f->b);
        if (w == 1 && f->d == T_S32) /* near the s32 limits: wraparound / saturation */
            for (unsigned i = 0; i < 16; i++)
                for (unsigned j = 0; j < 8; j++) c[w][i][j] = (i + j) % 2 ? 0x7FFFFF00u + (uint32_t)(rnd64() % 200) : 0x80000000u + (uint32_t)(rnd64() % 200);
        if (w == 2 && f->d != T_S32) /* an infinity (e4m3: NaN) in B, at row 1 column 3 */
            b[w][1][3] = f->b == T_F16 ? 0x7C00 : f->b == T_BF16 ? 0x7F80 : f->b == T_TF32 ? 0x7F800000u : f->b == T_E4M3 ? 0x7F : 0x7C;
        for (unsigned l = 0; l < 32; l++) {
            uint32_t *ra = fa[w * 32 + l], *rb = fb[w * 32 + l], *rc = fc[w * 32 + l];
            memset(ra, 0, 16), memset(rb, 0, 16), memset(rc, 0, 16);
            for (unsigned i = 0; i < n * E; i++) {
                unsigned row, ccol;
                sp_frag_a(f, l, i, &row, &ccol);
                ra[i / E] |= E == 1 ? va[w][row][ccol] : va[w][row][ccol] << (bits * (i % E));
                uint32_t bv = b[w][sp_frag_b_row(f, l, i)][l / 4];
                rb[i / E] |= E == 1 ? bv : bv << (bits * (i % E));
            }
            for (unsigned i = 0; i < 4; i++) {
                unsigned row, col;
                frag_c(l, i, &row, &col);
                if (f->d == T_F16) rc[i / 2] |= c[w][row][col] << (16 * (i % 2));
                else rc[i] = c[w][row][col];
            }
            /* the metadata: lanes that give none hold garbage */
            unsigned g = l / 4, t = l % 4;
            fe[w * 32 + l] = (uint32_t)rnd64();
            if (t >= sel * mthreads && t < (sel + 1) * mthreads) {
                unsigned j = t - sel * mthreads;
                uint32_t e = 0;
                for (unsigned q = 0; q < 4; q++) e |= nib[w][g][4 * j + q] << (4 * q) | nib[w][g + 8][4 * j + q] << (16 + 4 * q);
                fe[w * 32 + l] = e;
            }
        }
    }
    uint64_t da = upload(d, fa, sizeof fa), db = upload(d, fb, sizeof fb), dc = upload(d, fc, sizeof fc), de = upload(d, fe, sizeof fe);
    uint64_t dd = poisoned(d, sizeof fd);
    void *params[] = {&da, &db, &dc, &dd, &de};
    cr_assert_eq(dev_launch(fn, WARPS / 2, 1, 1, 64, 1, 1, 0, NULL, params), DEV_OK, "%s\n%s", dev_last_error(d), ptx);
    download(d, fd, dd, sizeof fd);
    for (unsigned w = 0; w < WARPS; w++) {
        uint32_t want[16][8];
        for (unsigned i = 0; i < 16; i++) {
            unsigned col[64]; /* the dense column of each stored value of row i */
            for (unsigned p = 0; p < P; p++) {
                unsigned ch = p / vpc, s = p % vpc, x = nib[w][i][ch], i0 = x & 3, i1 = x >> 2;
                col[p] = f->a == T_TF32 ? 2 * ch + (x == 0xE) : cw == 4 ? 4 * ch + (s ? i1 : i0) : 8 * ch + 2 * (s < 2 ? i0 : i1) + s % 2;
            }
            for (unsigned j = 0; j < 8; j++) {
                if (f->d == T_S32) {
                    int64_t acc = (int32_t)c[w][i][j];
                    for (unsigned p = 0; p < P; p++) acc += sp_int(f->a, va[w][i][p]) * sp_int(f->b, b[w][col[p]][j]);
                    if (f->sat) acc = acc > INT32_MAX ? INT32_MAX : acc < INT32_MIN ? INT32_MIN : acc;
                    want[i][j] = (uint32_t)acc;
                } else {
                    float acc = f->d == T_F16 ? f16_val((uint16_t)c[w][i][j]) : u2f(c[w][i][j]);
                    for (unsigned p = 0; p < P; p++) acc = fmaf(elem_float(f->a, va[w][i][p]), elem_float(f->b, b[w][col[p]][j]), acc);
                    want[i][j] = f->d == T_F16 ? (isnan(acc) ? 0x7FFF : f16_bits(acc)) : isnan(acc) ? 0x7FFFFFFFu : f2u(acc);
                }
            }
        }
        for (unsigned l = 0; l < 32; l++)
            for (unsigned i = 0; i < 4; i++) {
                unsigned row, col;
                frag_c(l, i, &row, &col);
                const uint32_t *rd = fd[w * 32 + l];
                uint32_t got = f->d == T_F16 ? (rd[i / 2] >> (16 * (i % 2))) & 0xFFFF : rd[i];
                cr_assert_eq(got, want[row][col], "mma.%s m16n8k%u %s.%s.%s selector %u warp %u lane %u D[%u][%u]: got %#x, want %#x",
                             f->ordered ? "sp::ordered_metadata" : "sp", f->k, sp_tname(f->d), sp_tname(f->a), sp_tname(f->b), sel,
                             w, l, row, col, got, want[row][col]);
            }
    }
    dev_module_unload(m);
    free(ptx);
}

static const SpForm sp_forms[] = {
    {16, T_F32, T_F16, T_F16, false, false}, {16, T_F16, T_F16, T_F16, false, true}, {32, T_F32, T_F16, T_F16, false, false},
    {32, T_F16, T_F16, T_F16, false, false}, {16, T_F32, T_BF16, T_BF16, false, false}, {32, T_F32, T_BF16, T_BF16, false, true},
    {8, T_F32, T_TF32, T_TF32, false, false}, {16, T_F32, T_TF32, T_TF32, false, false},
    {32, T_S32, T_S8, T_S8, false, false}, {32, T_S32, T_U8, T_S8, true, true}, {64, T_S32, T_S8, T_U8, true, false},
    {64, T_S32, T_U8, T_U8, false, false}, {64, T_S32, T_S4, T_S4, false, false}, {64, T_S32, T_U4, T_S4, true, true},
    {128, T_S32, T_S4, T_U4, true, false}, {128, T_S32, T_U4, T_U4, false, false},
};
static const SpForm sp_f8_forms[] = {
    {64, T_F32, T_E4M3, T_E4M3, false, false}, {64, T_F32, T_E5M2, T_E4M3, false, true}, {64, T_F32, T_E4M3, T_E5M2, false, false},
};

Test(mma, sparse_every_form_and_selector_against_isa_reference) {
    TileDevice *d = open_emu(false);
    for (size_t i = 0; i < ARRAY_LEN(sp_forms); i++) {
        const SpForm *f = &sp_forms[i];
        unsigned cw = f->a == T_TF32 ? 2 : sp_elems(f->a) == 8 ? 8 : 4, mthreads = f->k / cw / 4;
        for (unsigned sel = 0; sel < 4 / mthreads; sel++) run_sparse_form(d, f, sel);
    }
    dev_close(d);
    d = open_emu_as("emu:sm_89", false);
    for (size_t i = 0; i < ARRAY_LEN(sp_f8_forms); i++) run_sparse_form(d, &sp_f8_forms[i], 0);
    dev_close(d);
}

/* mma.sp's forms ptxas refuses are refused at load, at the line (each checked against ptxas when installed); a
 * selector ptxas takes but the ISA leaves undefined (2 or 3 on m16n8k32 .f32.f16.f16.f32, whose metadata is a
 * thread pair's; ptxas refuses them on the bf16 and f16-accumulator forms) loads and stops the launch when it runs. */
Test(mma, sparse_errors) {
    static const struct { const char *head, *arch, *ins, *msg; } bad[] = {
        {".version 7.1\n.target sm_75\n", "sm_75", "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1}, {%r2,%r3}, {%f0,%f1,%f2,%f3}, %r4, 0;", "sm_80"},
        {".version 7.0\n.target sm_80\n", "sm_80", "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1}, {%r2,%r3}, {%f0,%f1,%f2,%f3}, %r4, 0;", "7.1"},
        {".version 8.4\n.target sm_80\n", "sm_80", "mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1}, {%r2,%r3}, {%f0,%f1,%f2,%f3}, %r4, 0;", "8.5"},
        {".version 7.1\n.target sm_80\n", "sm_80", "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1}, {%r2,%r3}, {%f0,%f1,%f2,%f3}, %r4, 4;", "selector 4 (this form takes 0..3)"},
        {".version 7.1\n.target sm_80\n", "sm_80", "mma.sp.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%f0,%f1,%f2,%f3}, %r4, 2;", "selector 2 (this form takes 0..1)"},
        {".version 7.1\n.target sm_80\n", "sm_80", "mma.sp.sync.aligned.m16n8k32.row.col.f16.f16.f16.f16 {%r0,%r1}, {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%r0,%r1}, %r4, 3;", "selector 3 (this form takes 0..1)"},
        {".version 7.1\n.target sm_80\n", "sm_80", "mma.sp.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%f0,%f1,%f2,%f3}, %r4, 2;", "selector 2 (this form takes 0..1)"},
        {".version 7.1\n.target sm_80\n", "sm_80", "mma.sp.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r0,%r1,%r2,%r3}, {%r0,%r1}, {%r2,%r3}, {%r0,%r1,%r2,%r3}, %r4, 2;", "selector 2 (this form takes 0..1)"},
        {".version 7.1\n.target sm_80\n", "sm_80", "mma.sp.sync.aligned.m16n8k64.row.col.s32.s8.s8.s32 {%r0,%r1,%r2,%r3}, {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%r0,%r1,%r2,%r3}, %r4, 1;", "selector 1 (this form takes 0..0)"},
        {".version 7.1\n.target sm_80\n", "sm_80", "mma.sp.sync.aligned.m16n8k128.row.col.s32.u4.u4.s32 {%r0,%r1,%r2,%r3}, {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%r0,%r1,%r2,%r3}, %r4, 1;", "selector 1 (this form takes 0..0)"},
        {".version 7.1\n.target sm_80\n", "sm_80", "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1}, {%r2,%r3}, {%f0,%f1,%f2,%f3}, %r4, %r5;", "selector (operand 6) is an immediate"},
        {".version 7.1\n.target sm_80\n", "sm_80", "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1}, {%r2,%r3}, {%f0,%f1,%f2,%f3}, 5, 0;", "metadata (operand 5) is a register"},
        {".version 7.1\n.target sm_80\n", "sm_80", "mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1}, {%r2,%r3}, {%f0,%f1,%f2,%f3}, %r4;", "takes 6 operands"},
        {".version 7.1\n.target sm_80\n", "sm_80", "mma.sp.sync.aligned.m16n8k16.col.row.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1}, {%r2,%r3}, {%f0,%f1,%f2,%f3}, %r4, 0;", ".row.col only"},
        {".version 7.1\n.target sm_80\n", "sm_80", "mma.sp.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r0}, {%r2}, {%f0,%f1,%f2,%f3}, %r4, 0;", "sparse mma is m16n8k16/k32"},
        {".version 7.1\n.target sm_80\n", "sm_80", "mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f16 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%r0,%r1}, %r4, 0;", "sparse mma is m16n8k16/k32"},
        {".version 7.1\n.target sm_80\n", "sm_80", "mma.sp.sync.aligned.m16n8k16.row.col.f16.bf16.bf16.f16 {%r0,%r1}, {%r0,%r1}, {%r2,%r3}, {%r0,%r1}, %r4, 0;", "sparse mma is m16n8k16/k32"},
        {".version 7.1\n.target sm_80\n", "sm_80", "mma.sp.sync.aligned.m16n8k16.row.col.satfinite.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1}, {%r2,%r3}, {%f0,%f1,%f2,%f3}, %r4, 0;", ".satfinite is for integer mma"},
        {".version 7.1\n.target sm_80\n", "sm_80", "mma.sp.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%r0,%r1,%r2,%r3}, {%r0,%r1}, {%r2,%r3,%r4,%r5}, {%r0,%r1,%r2,%r3}, %r4, 0;", "needs 2 B registers"},
        {".version 8.4\n.target sm_80\n", "sm_80", "mma.sp.sync.aligned.m16n8k64.row.col.f32.e4m3.e4m3.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%f0,%f1,%f2,%f3}, %r4, 0;", "sm_89"},
        {".version 8.3\n.target sm_89\n", "sm_89", "mma.sp.sync.aligned.m16n8k64.row.col.f32.e4m3.e4m3.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%f0,%f1,%f2,%f3}, %r4, 0;", "8.4"},
        {".version 8.7\n.target sm_89\n", "sm_89", "mma.sp.sync.aligned.m16n8k64.row.col.f16.e4m3.e4m3.f16 {%r0,%r1}, {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%r0,%r1}, %r4, 0;", "sparse mma is m16n8k16/k32"},
        {".version 8.4\n.target sm_89\n", "sm_89", "mma.sp.sync.aligned.m16n8k64.row.col.f32.e4m3.e4m3.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%f0,%f1,%f2,%f3}, %r4, 1;", "selector 1 (this form takes 0..0)"},
        {".version 7.1\n.target sm_80\n", "sm_80", "mma.sp.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32.and.popc {%r0,%r1,%r2,%r3}, {%r0,%r1,%r2,%r3}, {%r4,%r5,%r6,%r7}, {%r0,%r1,%r2,%r3}, %r4, 0;", "no .b1 form"},
    };
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        char ptx[1024];
        snprintf(ptx, sizeof ptx, "%s.address_size 64\n.visible .entry k()\n{\n .reg .b32 %%r<8>;\n .reg .f32 %%f<4>;\n %s\n ret;\n}\n",
                 bad[i].head, bad[i].ins);
        cr_assert(ptxas_refuses(ptx, bad[i].arch), "ptxas takes %s", bad[i].ins);
        cr_assert_eq(dev_module_load_ptx(d, ptx, &m), DEV_ERR_PTX, "accepted: %s", bad[i].ins);
        cr_assert(strstr(dev_last_error(d), "ptx:8:") && strstr(dev_last_error(d), bad[i].msg), "%s: %s", bad[i].ins, dev_last_error(d));
    }
    /* selectors 2 and 3 of m16n8k32 .f32.f16.f16.f32: ptxas takes them, the ISA leaves them undefined */
    for (unsigned sel = 0; sel < 4; sel++) {
        char ptx[1024];
        snprintf(ptx, sizeof ptx, ".version 7.1\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n .reg .b32 %%r<8>;\n"
                 " .reg .f32 %%f<4>;\n mov.b32 %%r4, 0x44444444;\n mma.sp.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 "
                 "{%%f0,%%f1,%%f2,%%f3}, {%%r0,%%r1,%%r2,%%r3}, {%%r4,%%r5,%%r6,%%r7}, {%%f0,%%f1,%%f2,%%f3}, %%r4, %u;\n ret;\n}\n", sel);
        TileDevFunction *fn = load(d, ptx, "k", &m);
        int rc = dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL);
        if (sel < 2) cr_assert_eq(rc, DEV_OK, "%s", dev_last_error(d));
        else cr_assert(rc != DEV_OK && strstr(dev_last_error(d), "undefined sparsity selector") &&
                       strstr(dev_last_error(d), "the PTX ISA defines 0..1"), "selector %u: %s", sel, dev_last_error(d));
        dev_module_unload(m);
    }
    dev_close(d);
}

/* The tensor-core instructions decode f16 by its bits (emu_f16_to_f32): every one of the 65536 codes is the
 * f32 the f64 conversion gives (subnormals normalized, +-0, infinities, NaN as the canonical NaN). */
Test(mma, f16_decode_every_code) {
    for (uint32_t h = 0; h < 0x10000; h++) {
        float got = emu_f16_to_f32((uint16_t)h), want = (float)emu_f16_to_f64((uint16_t)h);
        cr_assert_eq(f2u(got), f2u(want), "f16 %#x: got %#x, want %#x", h, f2u(got), f2u(want));
    }
}

/* mma.sync with f16 A and B decodes four codes at once (emu_f16x4_to_f32, no branches): every code, in every
 * vector lane, the same bits as emu_f16_to_f32 (the high 16 bits of a lane's input are ignored: a register's other half). */
Test(mma, f16_decode_four_at_once_every_code) {
    for (uint32_t h = 0; h < 0x10000; h += 4) {
        emu_v4u in = {h | 0xABCD0000u, (h + 1) | 0x12340000u, h + 2, (h + 3) | 0xFFFF0000u};
        emu_v4f got = emu_f16x4_to_f32(in);
        for (unsigned k = 0; k < 4; k++) {
            float want = emu_f16_to_f32((uint16_t)(h + k));
            cr_assert_eq(f2u(got[k]), f2u(want), "f16 %#x: got %#x, want %#x", h + k, f2u(got[k]), f2u(want));
        }
    }
}

/* Round to nearest even into f16, bf16 and f32 (the mma results, cvt.rn): emu_round_f64 takes the bits of a
 * normal double (round_rn_bits), emu_round_f64_ftz without ftz always the long-double path; the two agree on
 * ties (even and odd quotients), values a bit above and below them, the largest finite values and the halfway
 * points past them, every subnormal boundary, and random doubles of every size from 2^-200 to 2^200. */
Test(mma, round_to_nearest_even_by_bits) {
    static const int fmts[] = {EMU_FMT_F16, EMU_FMT_BF16, EMU_FMT_F32};
    static const int p[] = {11, 8, 24}, emin[] = {-14, -126, -126}, emax[] = {15, 127, 127};
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    for (unsigned fi = 0; fi < 3; fi++) {
        int fmt = fmts[fi];
        double xs[4096];
        unsigned nx = 0;
        /* n + 1/2 quanta (ties), and a quarter quantum off, at every exponent from below the subnormals to past the top */
        for (int e = emin[fi] - p[fi] - 3; e <= emax[fi] + 2 && nx + 16 < 4096; e++)
            for (int n = 0; n < 3; n++) {
                double q = ldexp(1.0, e - (p[fi] - 1)), m = ldexp(1.0, p[fi] - 1) + n;
                if (e < emin[fi]) q = ldexp(1.0, emin[fi] - (p[fi] - 1)), m = ldexp(1.0, e - emin[fi] + p[fi] - 1) + n;
                xs[nx++] = (m + 0.5) * q, xs[nx++] = (m + 0.25) * q, xs[nx++] = (m + 0.75) * q, xs[nx++] = m * q;
            }
        double maxf = ldexp(ldexp(1.0, p[fi]) - 1, emax[fi] - (p[fi] - 1)), halfq = ldexp(1.0, emax[fi] - p[fi]);
        xs[nx++] = maxf, xs[nx++] = maxf + halfq, xs[nx++] = nextafter(maxf + halfq, 0), xs[nx++] = nextafter(maxf + halfq, INFINITY);
        for (unsigned i = 0; i < nx; i++)
            for (int sg = 0; sg < 2; sg++) {
                double x = sg ? -xs[i] : xs[i];
                uint64_t got = emu_round_f64(x, fmt, EMU_RND_RN), want = emu_round_f64_ftz(x, fmt, EMU_RND_RN, false);
                cr_assert_eq(got, want, "fmt %d of %a: got %#llx, want %#llx", fmt, x, (unsigned long long)got, (unsigned long long)want);
            }
        for (unsigned i = 0; i < 200000; i++) {
            rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
            /* random sign and mantissa, exponent in [-200, 200]; the low mantissa bits often zero (ties) */
            uint64_t bits = (rng & 0x800FFFFFFFFFFFFFull) | (uint64_t)(1023 - 200 + (rng >> 52 & 0x7FF) % 401) << 52;
            if (i & 1) bits &= ~((1ull << (rng >> 40 & 63)) - 1) | 0xFFF0000000000000ull;
            double x = emu_f64(bits);
            uint64_t got = emu_round_f64(x, fmt, EMU_RND_RN), want = emu_round_f64_ftz(x, fmt, EMU_RND_RN, false);
            cr_assert_eq(got, want, "fmt %d of %a: got %#llx, want %#llx", fmt, x, (unsigned long long)got, (unsigned long long)want);
        }
    }
}

/* f64 (DMMA): mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64, the fragments packed here by the PTX ISA's
 * table for m8n8k4 .f64 (lane = 4 g + t holds A[g][t], B[t][g], C/D[g][2t], C/D[g][2t + 1]); the reference
 * takes one fma per k ascending, on random reals (and a NaN and an infinity in the third warp). */
Test(mma, f64_m8n8k4_against_c_reference) {
    enum { WARPS = 3 };
    static const char *ptx = PTX_HEAD ".visible .entry dmma(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{\n"
        " .reg .f64 %a, %b, %c<2>, %d<2>;\n .reg .b32 %r<4>;\n .reg .b64 %rd<12>;\n"
        " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %ntid.x;\n mad.lo.s32 %r1, %r2, %r3, %r1;\n"
        " mul.wide.u32 %rd1, %r1, 8;\n mul.wide.u32 %rd6, %r1, 16;\n"
        " ld.param.u64 %rd2, [pa];\n add.s64 %rd2, %rd2, %rd1;\n ld.param.u64 %rd3, [pb];\n add.s64 %rd3, %rd3, %rd1;\n"
        " ld.param.u64 %rd4, [pc];\n add.s64 %rd4, %rd4, %rd6;\n ld.param.u64 %rd5, [pd];\n add.s64 %rd5, %rd5, %rd6;\n"
        " ld.global.f64 %a, [%rd2];\n ld.global.f64 %b, [%rd3];\n ld.global.v2.f64 {%c0, %c1}, [%rd4];\n"
        " mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%d0, %d1}, {%a}, {%b}, {%c0, %c1};\n"
        " st.global.v2.f64 [%rd5], {%d0, %d1};\n ret;\n}\n";
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *fn = load(d, ptx, "dmma", &m);
    static double A[WARPS][8][4], B[WARPS][4][8], C[WARPS][8][8];
    static double fa[WARPS * 32], fb[WARPS * 32], fc[WARPS * 32][2], fd[WARPS * 32][2];
    for (unsigned w = 0; w < WARPS; w++) {
        for (unsigned i = 0; i < 8; i++)
            for (unsigned k = 0; k < 4; k++) A[w][i][k] = rndf(-10, 10) * (1 + (double)(rnd64() >> 40) / (1 << 24));
        for (unsigned k = 0; k < 4; k++)
            for (unsigned j = 0; j < 8; j++) B[w][k][j] = rndf(-10, 10) / 3.0;
        for (unsigned i = 0; i < 8; i++)
            for (unsigned j = 0; j < 8; j++) C[w][i][j] = rndf(-100, 100) / 7.0;
    }
    A[2][5][1] = NAN, C[2][3][6] = INFINITY;
    for (unsigned w = 0; w < WARPS; w++)
        for (unsigned l = 0; l < 32; l++) {
            unsigned g = l / 4, t = l % 4;
            fa[w * 32 + l] = A[w][g][t];
            fb[w * 32 + l] = B[w][t][g];
            fc[w * 32 + l][0] = C[w][g][2 * t], fc[w * 32 + l][1] = C[w][g][2 * t + 1];
        }
    uint64_t da = upload(d, fa, sizeof fa), db = upload(d, fb, sizeof fb), dc = upload(d, fc, sizeof fc), dd = poisoned(d, sizeof fd);
    void *params[] = {&da, &db, &dc, &dd};
    cr_assert_eq(dev_launch(fn, WARPS, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
    download(d, fd, dd, sizeof fd);
    for (unsigned w = 0; w < WARPS; w++)
        for (unsigned l = 0; l < 32; l++)
            for (unsigned i = 0; i < 2; i++) {
                unsigned g = l / 4, col = 2 * (l % 4) + i;
                double want = C[w][g][col];
                for (unsigned k = 0; k < 4; k++) want = fma(A[w][g][k], B[w][k][col], want);
                double got = fd[w * 32 + l][i];
                cr_assert(isnan(want) ? isnan(got) : memcmp(&got, &want, 8) == 0, "warp %u D[%u][%u]: got %.17g, want %.17g", w, g, col, got,
                          want);
            }
    cr_assert(isnan(fd[2 * 32 + 5 * 4][0]) && isinf(fd[2 * 32 + 3 * 4 + 3][0]), "NaN row 5 and infinity at (3, 6) propagate");
    dev_module_unload(m);
    /* m8n8k4 on f16 takes f16/f32 accumulators in any layouts; f64 takes .row.col m8n8k4 and (sm_90) m16n8k4/8/16,
     * with their register counts */
    static const struct {
        const char *ins, *err;
    } bad[] = {
        {"mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f64 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, {%r0, %r1}, "
         "{%r0, %r1}, {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7};", "m8n8k4 on f16 is .f16.f16 inputs with D and C .f16.f16, .f32.f16"},
        {"mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f32 {%r0, %r1, %r0, %r1}, {%r0, %r1}, "
         "{%r0, %r1}, {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7};", "m8n8k4 on f16 is .f16.f16 inputs with D and C .f16.f16, .f32.f16"},
        {"mma.sync.aligned.m8n8k4.col.col.f64.f64.f64.f64 {%d0, %d1}, {%a}, {%b}, {%d0, %d1};", "this shape is .row.col only"},
        {"mma.sync.aligned.m8n8k4.row.f64.f64.f64.f64 {%d0, %d1}, {%a}, {%b}, {%d0, %d1};", "needs A's and B's layouts (.row.col)"},
        {"mma.sync.aligned.m16n8k32.row.col.f64.f64.f64.f64 {%d0, %d1, %d2, %d3}, {%a, %a}, {%b}, {%d0, %d1, %d2, %d3};",
         "f64 mma is m8n8k4, m16n8k4, m16n8k8 or m16n8k16"},
        {"mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%d0, %d1, %d2, %d3}, {%a, %a, %a, %a}, {%b, %b}, {%d0, %d1, %d2, %d3};",
         "needs .target sm_90 or later"},
        {"mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%d0, %d1}, {%a, %a, %a, %a}, {%b, %b}, {%d0, %d1};", "needs 4 D registers"},
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        char text[1024];
        snprintf(text, sizeof text, "%s.visible .entry k()\n{\n .reg .f64 %%a, %%b, %%d<4>;\n .reg .b32 %%r<2>;\n .reg .f32 %%f<8>;\n %s\n"
                 " ret;\n}\n", i == 5 ? PTX_HEAD : ".version 7.8\n.target sm_90\n.address_size 64\n", bad[i].ins);
        cr_assert_eq(dev_module_load_ptx(d, text, &m), DEV_ERR_PTX, "accepted: %s", bad[i].ins);
        cr_assert(strstr(dev_last_error(d), bad[i].err), "%s: %s", bad[i].ins, dev_last_error(d));
    }
    dev_close(d);
}

/* The integer shapes beside m16n8k16/k32 on s8: m8n8k16 (s8/u8), m8n8k32, m16n8k32 and m16n8k64 (s4/u4, eight
 * nibbles to a register, the lowest first), packed here by the PTX ISA's tables: with g = lane / 4, t = lane % 4,
 * E elements a register (4 or 8) and A register j, element i: row g (m8n8; m16n8: + 8 for odd j), column
 * t E + i (+ 4E for j >= 2); B register j, element i: row t E + i + 4E j, column g; C/D element e: row g
 * (+ 8 for e >= 2), column 2t + (e & 1).  Exact s32 sums (wrapping, or clamped with .satfinite). */
typedef struct IntForm {
    unsigned rows, k;
    const char *a, *b;
    bool satfinite;
} IntForm;

static int32_t int_elem(const char *ty, uint32_t reg, unsigned i) {
    bool nib = ty[1] == '4', sgn = ty[0] == 's';
    uint32_t v = nib ? (reg >> (4 * i)) & 0xF : (reg >> (8 * i)) & 0xFF;
    if (sgn && v >> (nib ? 3 : 7)) return (int32_t)v - (nib ? 16 : 256);
    return (int32_t)v;
}

Test(mma, integer_m8n8_and_s4_shapes) {
    static const IntForm forms[] = {
        {8, 16, "s8", "s8", false}, {8, 16, "u8", "s8", true}, {8, 32, "s4", "s4", false}, {8, 32, "u4", "s4", false},
        {16, 32, "s4", "u4", false}, {16, 64, "s4", "s4", true}, {16, 64, "u4", "u4", false},
    };
    TileDevice *d = open_emu(false);
    for (size_t fi = 0; fi < ARRAY_LEN(forms); fi++) {
        const IntForm *fm = &forms[fi];
        unsigned E = fm->a[1] == '4' ? 8 : 4, na = fm->rows * fm->k / (32 * E), nb = fm->k / (4 * E), nc = fm->rows / 4;
        Str p = {0};
        str_printf(&p, PTX_HEAD ".visible .entry im(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{\n"
                       " .reg .b32 %%a<4>, %%b<2>, %%c<4>, %%d<4>, %%r<4>;\n .reg .b64 %%rd<12>;\n"
                       " mov.u32 %%r1, %%tid.x;\n mov.u32 %%r2, %%ctaid.x;\n mad.lo.s32 %%r1, %%r2, 32, %%r1;\n"
                       " mul.wide.u32 %%rd1, %%r1, 16;\n"
                       " ld.param.u64 %%rd2, [pa];\n add.s64 %%rd2, %%rd2, %%rd1;\n ld.param.u64 %%rd3, [pb];\n add.s64 %%rd3, %%rd3, %%rd1;\n"
                       " ld.param.u64 %%rd4, [pc];\n add.s64 %%rd4, %%rd4, %%rd1;\n ld.param.u64 %%rd5, [pd];\n add.s64 %%rd5, %%rd5, %%rd1;\n"
                       " ld.global.v4.b32 {%%a0, %%a1, %%a2, %%a3}, [%%rd2];\n ld.global.v2.b32 {%%b0, %%b1}, [%%rd3];\n"
                       " ld.global.v4.b32 {%%c0, %%c1, %%c2, %%c3}, [%%rd4];\n");
        str_printf(&p, " mma.sync.aligned.m%un8k%u.row.col%s.s32.%s.%s.s32 {", fm->rows, fm->k, fm->satfinite ? ".satfinite" : "", fm->a, fm->b);
        for (unsigned j = 0; j < nc; j++) str_printf(&p, "%s%%d%u", j ? ", " : "", j);
        str_puts(&p, "}, {");
        for (unsigned j = 0; j < na; j++) str_printf(&p, "%s%%a%u", j ? ", " : "", j);
        str_puts(&p, "}, {");
        for (unsigned j = 0; j < nb; j++) str_printf(&p, "%s%%b%u", j ? ", " : "", j);
        str_puts(&p, "}, {");
        for (unsigned j = 0; j < nc; j++) str_printf(&p, "%s%%c%u", j ? ", " : "", j);
        str_puts(&p, "};\n");
        for (unsigned j = 0; j < 4; j++) str_printf(&p, " st.global.b32 [%%rd5+%u], %s%u;\n", 4 * j, j < nc ? "%d" : "%c", j);
        str_puts(&p, " ret;\n}\n");
        TileDevModule *m;
        TileDevFunction *fn = load(d, p.buf, "im", &m);
        enum { WARPS = 2 };
        static uint32_t fa[WARPS * 32][4], fb[WARPS * 32][4], fc[WARPS * 32][4], fd[WARPS * 32][4];
        for (unsigned x = 0; x < WARPS * 32; x++)
            for (unsigned j = 0; j < 4; j++) {
                fa[x][j] = (uint32_t)rnd64(), fb[x][j] = (uint32_t)rnd64();
                /* C near the s32 limits in the saturating forms, so that clamping is exercised */
                fc[x][j] = fm->satfinite && (rnd64() & 1) ? (uint32_t)(rnd64() & 1 ? INT32_MAX - 3000 : INT32_MIN + 3000)
                                                           : (uint32_t)(int32_t)((int)(rnd64() % 20001) - 10000);
            }
        uint64_t da = upload(d, fa, sizeof fa), db = upload(d, fb, sizeof fb), dc = upload(d, fc, sizeof fc), dd = poisoned(d, sizeof fd);
        void *params[] = {&da, &db, &dc, &dd};
        cr_assert_eq(dev_launch(fn, WARPS, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
        download(d, fd, dd, sizeof fd);
        for (unsigned w = 0; w < WARPS; w++) {
            static int32_t A[16][64], B[64][8], C[16][8];
            for (unsigned l = 0; l < 32; l++) {
                unsigned g = l / 4, t = l % 4, x = w * 32 + l;
                for (unsigned j = 0; j < na; j++)
                    for (unsigned i = 0; i < E; i++) A[g + (fm->rows == 16 ? 8 * (j & 1) : 0)][t * E + i + 4 * E * (j >> 1)] = int_elem(fm->a, fa[x][j], i);
                for (unsigned j = 0; j < nb; j++)
                    for (unsigned i = 0; i < E; i++) B[t * E + i + 4 * E * j][g] = int_elem(fm->b, fb[x][j], i);
                for (unsigned e = 0; e < nc; e++) C[g + 8 * (e >> 1)][2 * t + (e & 1)] = (int32_t)fc[x][e];
            }
            for (unsigned l = 0; l < 32; l++)
                for (unsigned e = 0; e < 4; e++) {
                    unsigned g = l / 4, t = l % 4, row = g + 8 * (e >> 1), col = 2 * t + (e & 1);
                    int32_t want = (int32_t)fc[w * 32 + l][e]; /* the registers past the D count are C's */
                    if (e < nc) {
                        int64_t acc = C[row][col];
                        for (unsigned k = 0; k < fm->k; k++) acc += (int64_t)A[row][k] * B[k][col];
                        if (fm->satfinite) acc = acc > INT32_MAX ? INT32_MAX : acc < INT32_MIN ? INT32_MIN : acc;
                        want = (int32_t)(uint32_t)(uint64_t)acc;
                    }
                    cr_assert_eq((int32_t)fd[w * 32 + l][e], want, "m%un8k%u %s.%s%s warp %u lane %u element %u: %d, want %d", fm->rows, fm->k,
                                 fm->a, fm->b, fm->satfinite ? " satfinite" : "", w, l, e, (int32_t)fd[w * 32 + l][e], want);
                }
        }
        dev_module_unload(m);
        str_free(&p);
    }
    dev_close(d);
}

/* Volta's mma.sync.aligned.m8n8k4.alayout.blayout.dtype.f16.f16.ctype: four 8x8x4 products per warp, one per
 * quad pair (lanes 4q..4q+3 and 16+4q..16+4q+3), packed here by the PTX ISA's fragment tables (h = 1 for lanes
 * 16..31, p = lane % 4 + 4h): A row-major (p, i), column-major (i + 4h, lane % 4); B row-major
 * (lane % 4, i + 4h), column-major (i, p); f16 C/D (p, i); f32 C/D ((lane % 2) + (i & 2) + 4h,
 * (i & 1) + (lane & 2) + (i & 4)) (CuTe's SM70 traits give the same).  Every layout pair with D.C f16.f16,
 * f32.f16 and f32.f32, small integers (exact in f16 and f32), two warps. */
static void m884_coord(char op, bool col, bool f32, unsigned lane, unsigned i, unsigned *r, unsigned *c) {
    unsigned h = lane >> 4, p = (lane & 3) + 4 * h;
    switch (op) {
    case 'A': *r = col ? i + 4 * h : p, *c = col ? lane & 3 : i; break;
    case 'B': *r = col ? i : lane & 3, *c = col ? p : i + 4 * h; break;
    default:
        if (f32) *r = (lane & 1) + (i & 2) + 4 * h, *c = (i & 1) + (lane & 2) + (i & 4);
        else *r = p, *c = i;
    }
}

Test(mma, f16_m8n8k4_every_layout) {
    enum { WARPS = 2 };
    TileDevice *d = open_emu(false);
    for (unsigned form = 0; form < 16; form++) {
        bool acol = form & 1, bcol = form & 2, d32 = form & 4, c32 = form & 8;
        if (c32 && !d32) continue; /* an f32 C needs an f32 D (ptxas) */
        unsigned nc = c32 ? 8 : 4, nd = d32 ? 8 : 4;
        Str p = {0};
        str_printf(&p, PTX_HEAD ".visible .entry h884(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{\n"
                       " .reg .b32 %%a<2>, %%b<2>, %%c<8>, %%d<8>, %%r<4>;\n .reg .f32 %%fc<8>, %%fd<8>;\n .reg .b64 %%rd<12>;\n"
                       " mov.u32 %%r1, %%tid.x;\n mov.u32 %%r2, %%ctaid.x;\n mad.lo.s32 %%r1, %%r2, 32, %%r1;\n"
                       " mul.wide.u32 %%rd1, %%r1, 8;\n mul.wide.u32 %%rd7, %%r1, 32;\n"
                       " ld.param.u64 %%rd2, [pa];\n add.s64 %%rd2, %%rd2, %%rd1;\n ld.param.u64 %%rd3, [pb];\n add.s64 %%rd3, %%rd3, %%rd1;\n"
                       " ld.param.u64 %%rd4, [pc];\n add.s64 %%rd4, %%rd4, %%rd7;\n ld.param.u64 %%rd5, [pd];\n add.s64 %%rd5, %%rd5, %%rd7;\n"
                       " ld.global.v2.b32 {%%a0, %%a1}, [%%rd2];\n ld.global.v2.b32 {%%b0, %%b1}, [%%rd3];\n");
        const char *cr = c32 ? "%fc" : "%c", *dr = d32 ? "%fd" : "%d", *ct = c32 ? "f32" : "b32", *dt = d32 ? "f32" : "b32";
        for (unsigned j = 0; j < nc; j += 4)
            str_printf(&p, " ld.global.v4.%s {%s%u, %s%u, %s%u, %s%u}, [%%rd4+%u];\n", ct, cr, j, cr, j + 1, cr, j + 2, cr, j + 3, 4 * j);
        str_printf(&p, " mma.sync.aligned.m8n8k4.%s.%s.%s.f16.f16.%s {", acol ? "col" : "row", bcol ? "col" : "row", d32 ? "f32" : "f16",
                   c32 ? "f32" : "f16");
        for (unsigned j = 0; j < nd; j++) str_printf(&p, "%s%s%u", j ? ", " : "", dr, j);
        str_puts(&p, "}, {%a0, %a1}, {%b0, %b1}, {");
        for (unsigned j = 0; j < nc; j++) str_printf(&p, "%s%s%u", j ? ", " : "", cr, j);
        str_puts(&p, "};\n");
        for (unsigned j = 0; j < nd; j += 4)
            str_printf(&p, " st.global.v4.%s [%%rd5+%u], {%s%u, %s%u, %s%u, %s%u};\n", dt, 4 * j, dr, j, dr, j + 1, dr, j + 2, dr, j + 3);
        str_puts(&p, " ret;\n}\n");
        TileDevModule *m;
        TileDevFunction *fn = load(d, p.buf, "h884", &m);
        static float A[WARPS][4][8][4], B[WARPS][4][4][8], C[WARPS][4][8][8];
        static uint16_t fa[WARPS * 32][4], fb[WARPS * 32][4];
        static uint32_t fc[WARPS * 32][8], fd[WARPS * 32][8];
        for (unsigned w = 0; w < WARPS; w++)
            for (unsigned q = 0; q < 4; q++)
                for (unsigned r = 0; r < 8; r++)
                    for (unsigned c = 0; c < 8; c++) {
                        if (c < 4) A[w][q][r][c] = (float)((int)(rnd64() % 17) - 8);
                        if (r < 4) B[w][q][r][c] = (float)((int)(rnd64() % 17) - 8);
                        C[w][q][r][c] = (float)((int)(rnd64() % 65) - 32) / 2;
                    }
        memset(fc, 0, sizeof fc);
        for (unsigned w = 0; w < WARPS; w++)
            for (unsigned l = 0; l < 32; l++) {
                unsigned x = w * 32 + l, q = (l & 15) >> 2, r, c;
                for (unsigned i = 0; i < 4; i++) {
                    m884_coord('A', acol, false, l, i, &r, &c);
                    fa[x][i] = f16_bits(A[w][q][r][c]);
                    m884_coord('B', bcol, false, l, i, &r, &c);
                    fb[x][i] = f16_bits(B[w][q][r][c]);
                }
                for (unsigned i = 0; i < 8; i++) {
                    m884_coord('C', false, c32, l, i, &r, &c);
                    if (c32) fc[x][i] = f2u(C[w][q][r][c]);
                    else fc[x][i / 2] |= (uint32_t)f16_bits(C[w][q][r][c]) << (16 * (i & 1));
                }
            }
        uint64_t da = upload(d, fa, sizeof fa), db = upload(d, fb, sizeof fb), dc = upload(d, fc, sizeof fc), dd = poisoned(d, sizeof fd);
        void *params[] = {&da, &db, &dc, &dd};
        cr_assert_eq(dev_launch(fn, WARPS, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
        download(d, fd, dd, sizeof fd);
        for (unsigned w = 0; w < WARPS; w++)
            for (unsigned l = 0; l < 32; l++)
                for (unsigned i = 0; i < 8; i++) {
                    unsigned q = (l & 15) >> 2, r, c;
                    m884_coord('D', false, d32, l, i, &r, &c);
                    float want = C[w][q][r][c];
                    for (unsigned k = 0; k < 4; k++) want += A[w][q][r][k] * B[w][q][k][c];
                    uint32_t bits = fd[w * 32 + l][d32 ? i : i / 2];
                    float got = d32 ? u2f(bits) : f16_val((uint16_t)(bits >> (16 * (i & 1))));
                    cr_assert_eq(got, want, "%s.%s d %s c %s: warp %u pair %u D[%u][%u] = %g, want %g", acol ? "col" : "row",
                                 bcol ? "col" : "row", d32 ? "f32" : "f16", c32 ? "f32" : "f16", w, q, r, c, got, want);
                }
        dev_module_unload(m);
        str_free(&p);
    }
    dev_close(d);
}

/* sm_90's f64 shapes, mma.sync.aligned.m16n8k{4,8,16}.row.col.f64.f64.f64.f64, with the fragments packed
 * here by the PTX ISA's tables for these shapes (lane = 4 g + t; A register j at the row and column offsets
 * below from (g, t), B register j at (t + 4 j, g), C/D register e at (g + 8 (e >> 1), 2 t + (e & 1))),
 * against one fma per k ascending on random reals (a NaN and an infinity in the second warp). */
Test(mma, f64_m16n8k_sm90_against_c_reference) {
    enum { WARPS = 2 };
    static const unsigned a_off[3][8][2] = {
        {{0, 0}, {8, 0}},                                                           /* k4: a0 a1 */
        {{0, 0}, {8, 0}, {0, 4}, {8, 4}},                                           /* k8: a0..a3 */
        {{0, 0}, {8, 0}, {0, 4}, {8, 4}, {0, 8}, {8, 8}, {0, 12}, {8, 12}}};        /* k16: a0..a7 */
    TileDevice *d = open_emu_as("emu:sm_90a", false);
    for (unsigned s = 0; s < 3; s++) {
        unsigned K = 4u << s, na = K / 2, nb = K / 4;
        /* each lane loads its na A, nb B and 4 C registers from consecutive f64s and stores its 4 D */
        Str p = {0};
        str_printf(&p, ".version 7.8\n.target sm_90\n.address_size 64\n"
                       ".visible .entry dmma(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{\n"
                       " .reg .f64 %%a<8>, %%b<4>, %%c<4>, %%d<4>;\n .reg .b32 %%r<4>;\n .reg .b64 %%rd<12>;\n"
                       " mov.u32 %%r1, %%tid.x;\n mov.u32 %%r2, %%ctaid.x;\n mov.u32 %%r3, %%ntid.x;\n mad.lo.s32 %%r1, %%r2, %%r3, %%r1;\n"
                       " mul.wide.u32 %%rd1, %%r1, %u;\n mul.wide.u32 %%rd6, %%r1, %u;\n mul.wide.u32 %%rd7, %%r1, 32;\n"
                       " ld.param.u64 %%rd2, [pa];\n add.s64 %%rd2, %%rd2, %%rd1;\n ld.param.u64 %%rd3, [pb];\n add.s64 %%rd3, %%rd3, %%rd6;\n"
                       " ld.param.u64 %%rd4, [pc];\n add.s64 %%rd4, %%rd4, %%rd7;\n ld.param.u64 %%rd5, [pd];\n add.s64 %%rd5, %%rd5, %%rd7;\n",
                   na * 8, nb * 8);
        for (unsigned j = 0; j < na; j++) str_printf(&p, " ld.global.f64 %%a%u, [%%rd2+%u];\n", j, 8 * j);
        for (unsigned j = 0; j < nb; j++) str_printf(&p, " ld.global.f64 %%b%u, [%%rd3+%u];\n", j, 8 * j);
        str_puts(&p, " ld.global.v2.f64 {%c0, %c1}, [%rd4];\n ld.global.v2.f64 {%c2, %c3}, [%rd4+16];\n");
        str_printf(&p, " mma.sync.aligned.m16n8k%u.row.col.f64.f64.f64.f64 {%%d0, %%d1, %%d2, %%d3}, {", K);
        for (unsigned j = 0; j < na; j++) str_printf(&p, "%s%%a%u", j ? ", " : "", j);
        str_puts(&p, "}, {");
        for (unsigned j = 0; j < nb; j++) str_printf(&p, "%s%%b%u", j ? ", " : "", j);
        str_puts(&p, "}, {%c0, %c1, %c2, %c3};\n st.global.v2.f64 [%rd5], {%d0, %d1};\n st.global.v2.f64 [%rd5+16], {%d2, %d3};\n"
                     " ret;\n}\n");
        TileDevModule *m;
        TileDevFunction *fn = load(d, p.buf, "dmma", &m);
        static double A[WARPS][16][16], B[WARPS][16][8], C[WARPS][16][8];
        static double fa[WARPS * 32][8], fb[WARPS * 32][4], fc[WARPS * 32][4], fd[WARPS * 32][4];
        for (unsigned w = 0; w < WARPS; w++) {
            for (unsigned i = 0; i < 16; i++)
                for (unsigned k = 0; k < K; k++) A[w][i][k] = rndf(-10, 10) * (1 + (double)(rnd64() >> 40) / (1 << 24));
            for (unsigned k = 0; k < K; k++)
                for (unsigned j = 0; j < 8; j++) B[w][k][j] = rndf(-10, 10) / 3.0;
            for (unsigned i = 0; i < 16; i++)
                for (unsigned j = 0; j < 8; j++) C[w][i][j] = rndf(-100, 100) / 7.0;
        }
        A[1][13][K - 1] = NAN, C[1][3][6] = INFINITY;
        for (unsigned w = 0; w < WARPS; w++)
            for (unsigned l = 0; l < 32; l++) {
                unsigned g = l / 4, t = l % 4, x = w * 32 + l;
                for (unsigned j = 0; j < na; j++) fa[x][j] = A[w][g + a_off[s][j][0]][t + a_off[s][j][1]];
                for (unsigned j = 0; j < nb; j++) fb[x][j] = B[w][t + 4 * j][g];
                for (unsigned e = 0; e < 4; e++) fc[x][e] = C[w][g + 8 * (e >> 1)][2 * t + (e & 1)];
            }
        /* packed densely: lane x's A registers at fa + x * na (the kernel's stride), likewise B */
        static double pa[WARPS * 32 * 8], pb[WARPS * 32 * 4];
        for (unsigned x = 0; x < WARPS * 32; x++) {
            for (unsigned j = 0; j < na; j++) pa[x * na + j] = fa[x][j];
            for (unsigned j = 0; j < nb; j++) pb[x * nb + j] = fb[x][j];
        }
        uint64_t da = upload(d, pa, sizeof pa), db = upload(d, pb, sizeof pb), dc = upload(d, fc, sizeof fc), dd = poisoned(d, sizeof fd);
        void *params[] = {&da, &db, &dc, &dd};
        cr_assert_eq(dev_launch(fn, WARPS, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
        download(d, fd, dd, sizeof fd);
        for (unsigned w = 0; w < WARPS; w++)
            for (unsigned l = 0; l < 32; l++)
                for (unsigned e = 0; e < 4; e++) {
                    unsigned row = l / 4 + 8 * (e >> 1), col = 2 * (l % 4) + (e & 1);
                    double want = C[w][row][col];
                    for (unsigned k = 0; k < K; k++) want = fma(A[w][row][k], B[w][k][col], want);
                    double got = fd[w * 32 + l][e];
                    cr_assert(isnan(want) ? isnan(got) : memcmp(&got, &want, 8) == 0, "k%u warp %u D[%u][%u]: got %.17g, want %.17g", K, w,
                              row, col, got, want);
                }
        cr_assert(isnan(fd[32 + 5 * 4][2]) && isinf(fd[32 + 3 * 4 + 3][0]), "k%u: NaN row 13 and infinity at (3, 6) propagate", K);
        dev_module_unload(m);
        str_free(&p);
    }
    dev_close(d);
}

/* ---- 2. ldmatrix ---- */
/* 32 rows of 16 bytes at row slots perm[0..31] of a 33-slot shared buffer
 * (filled from global); lane l gives slot perm[l] (lanes past 8*N give a
 * misaligned out-of-bounds address, which must be ignored), runs ldmatrix,
 * and stores its N registers. */
static char *ldmatrix_ptx(unsigned nmat, bool trans) {
    Str s = {0};
    str_printf(&s, PTX_HEAD ".visible .entry ldm(.param .u64 pin, .param .u64 pperm, .param .u64 pout)\n{\n"
                   " .reg .pred %%p<2>;\n .reg .b32 %%r<16>;\n .reg .b64 %%rd<12>;\n"
                   " .shared .align 16 .b8 buf[528];\n"
                   " mov.u32 %%r1, %%tid.x;\n ld.param.u64 %%rd1, [pin];\n"
                   " mul.wide.u32 %%rd2, %%r1, 16;\n add.s64 %%rd3, %%rd1, %%rd2;\n ld.global.v4.b32 {%%r4, %%r5, %%r6, %%r7}, [%%rd3];\n"
                   " mov.u32 %%r2, buf;\n shl.b32 %%r3, %%r1, 4;\n add.s32 %%r3, %%r2, %%r3;\n"
                   " st.shared.v4.b32 [%%r3], {%%r4, %%r5, %%r6, %%r7};\n"
                   " setp.eq.u32 %%p1, %%r1, 0;\n @%%p1 ld.global.v4.b32 {%%r4, %%r5, %%r6, %%r7}, [%%rd1+512];\n"
                   " @%%p1 st.shared.v4.b32 [buf+512], {%%r4, %%r5, %%r6, %%r7};\n"
                   " bar.sync 0;\n"
                   " ld.param.u64 %%rd4, [pperm];\n mul.wide.u32 %%rd5, %%r1, 4;\n add.s64 %%rd6, %%rd4, %%rd5;\n"
                   " ld.global.u32 %%r8, [%%rd6];\n add.s32 %%r8, %%r2, %%r8;\n"
                   " ldmatrix.sync.aligned.m8n8.x%u%s.shared.b16 {",
               nmat, trans ? ".trans" : "");
    for (unsigned i = 0; i < nmat; i++) str_printf(&s, "%s%%r%u", i ? ", " : "", 10 + i);
    str_puts(&s, "}, [%r8];\n ld.param.u64 %rd7, [pout];\n add.s64 %rd8, %rd7, %rd2;\n");
    for (unsigned i = 0; i < nmat; i++) str_printf(&s, " st.global.b32 [%%rd8+%u], %%r%u;\n", 4 * i, 10 + i);
    str_puts(&s, " ret;\n}\n");
    return str_take(&s);
}

/* with racecheck every row read is checked; without, an aligned row inside shared memory is read directly (the
 * fast path), the rest checked: the same registers either way */
static void ldmatrix_mapping(bool racecheck) {
    TileDevice *d = open_emu(racecheck);
    uint16_t mem[33 * 8];
    for (unsigned i = 0; i < 33 * 8; i++) mem[i] = (uint16_t)(0x1000 + i * 7 + (rnd64() & 0xF000));
    uint32_t perm[32];
    for (unsigned i = 0; i < 32; i++) perm[i] = i + 1; /* slot 0 unused */
    for (unsigned i = 31; i > 0; i--) {
        unsigned j = (unsigned)(rnd64() % (i + 1));
        uint32_t t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    uint64_t din = upload(d, mem, sizeof mem);
    for (unsigned nm = 1; nm <= 4; nm *= 2)
        for (int trans = 0; trans < 2; trans++) {
            uint32_t addr[32];
            for (unsigned l = 0; l < 32; l++) addr[l] = l < 8 * nm ? 16 * perm[l] : 0x7FFFFFF3u;
            uint64_t dperm = upload(d, addr, sizeof addr), dout = poisoned(d, 32 * 16);
            char *ptx = ldmatrix_ptx(nm, trans);
            TileDevModule *m;
            TileDevFunction *fn = load(d, ptx, "ldm", &m);
            void *params[] = {&din, &dperm, &dout};
            cr_assert_eq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK, "x%u trans %d: %s", nm, trans,
                         dev_last_error(d));
            uint32_t out[32][4];
            download(d, out, dout, sizeof out);
            for (unsigned l = 0; l < 32; l++)
                for (unsigned i = 0; i < 4; i++) {
                    if (i >= nm) { cr_assert_eq(out[l][i], 0xFFFFFFFFu); continue; }
                    /* matrix i, row r = the 16 bytes at slot perm[8i + r] */
                    #define M(r, c) mem[perm[8 * i + (r)] * 8 + (c)]
                    unsigned row = l / 4, col = 2 * (l % 4);
                    uint32_t want = trans ? (uint32_t)M(col, row) | (uint32_t)M(col + 1, row) << 16
                                          : (uint32_t)M(row, col) | (uint32_t)M(row, col + 1) << 16;
                    #undef M
                    cr_assert_eq(out[l][i], want, "x%u%s lane %u reg %u: got %#x, want %#x", nm, trans ? ".trans" : "", l, i,
                                 out[l][i], want);
                }
            dev_module_unload(m);
            free(ptx);
        }
    dev_close(d);
}
Test(ldmatrix, x1_x2_x4_trans_against_documented_mapping) { ldmatrix_mapping(true); }
Test(ldmatrix, x1_x2_x4_trans_without_racecheck) { ldmatrix_mapping(false); }

/* ---- 3. cp.async -> shared -> ldmatrix -> mma ---- */
/* A (16x16 f16, row-major) and B (16x8 f16, row-major [k][n]) are copied to
 * shared with cp.async.cg (48 16-byte chunks), A is loaded with ldmatrix.x4,
 * B with ldmatrix.x2.trans, then D = A*B (C = 0). */
static const char *pipeline_ptx = PTX_HEAD
    ".visible .entry pipe(.param .u64 pa, .param .u64 pb, .param .u64 pd)\n{\n"
    " .reg .pred %p<2>;\n .reg .b32 %r<32>;\n .reg .f32 %f<8>;\n .reg .b64 %rd<16>;\n"
    " .shared .align 16 .b8 sa[512];\n .shared .align 16 .b8 sb[256];\n"
    " mov.u32 %r1, %tid.x;\n ld.param.u64 %rd1, [pa];\n ld.param.u64 %rd2, [pb];\n"
    " mul.wide.u32 %rd3, %r1, 16;\n shl.b32 %r2, %r1, 4;\n mov.u32 %r3, sa;\n mov.u32 %r4, sb;\n"
    " add.s64 %rd4, %rd1, %rd3;\n add.s32 %r5, %r3, %r2;\n"
    " cp.async.cg.shared.global [%r5], [%rd4], 16;\n"                 /* A chunks 0..31 */
    " setp.lt.u32 %p1, %r1, 16;\n add.s64 %rd5, %rd2, %rd3;\n add.s32 %r6, %r4, %r2;\n"
    " @%p1 cp.async.cg.shared.global [%r6], [%rd5], 16;\n"           /* B chunks 0..15 */
    " cp.async.commit_group;\n cp.async.wait_group 0;\n bar.sync 0;\n"
    /* A: lane l -> matrix i = l/8, row r = l%8: A row r + 8*(i&1), k 8*(i>>1) */
    " shr.u32 %r7, %r1, 3;\n and.b32 %r8, %r1, 7;\n and.b32 %r9, %r7, 1;\n shl.b32 %r9, %r9, 3;\n add.s32 %r9, %r9, %r8;\n"
    " shl.b32 %r9, %r9, 5;\n shr.u32 %r10, %r7, 1;\n shl.b32 %r10, %r10, 4;\n add.s32 %r9, %r9, %r10;\n add.s32 %r9, %r3, %r9;\n"
    " ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r11, %r12, %r13, %r14}, [%r9];\n"
    /* B: lane l < 16 gives row k = l (16 bytes each); others ignored */
    " and.b32 %r15, %r1, 15;\n shl.b32 %r15, %r15, 4;\n add.s32 %r15, %r4, %r15;\n"
    " ldmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16 {%r16, %r17}, [%r15];\n"
    " mov.f32 %f0, 0f00000000;\n mov.f32 %f1, 0f00000000;\n mov.f32 %f2, 0f00000000;\n mov.f32 %f3, 0f00000000;\n"
    " mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0, %f1, %f2, %f3}, {%r11, %r12, %r13, %r14}, {%r16, %r17}, {%f0, %f1, %f2, %f3};\n"
    " ld.param.u64 %rd6, [pd];\n add.s64 %rd7, %rd6, %rd3;\n st.global.v4.f32 [%rd7], {%f0, %f1, %f2, %f3};\n"
    " ret;\n}\n";

Test(mma, fed_by_ldmatrix_and_cp_async) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *fn = load(d, pipeline_ptx, "pipe", &m);
    uint16_t a[16][16], b[16][8];
    for (int i = 0; i < 16; i++)
        for (int k = 0; k < 16; k++) a[i][k] = f16_bits(rndf(-2, 2));
    for (int k = 0; k < 16; k++)
        for (int j = 0; j < 8; j++) b[k][j] = f16_bits(rndf(-2, 2));
    uint64_t da = upload(d, a, sizeof a), db = upload(d, b, sizeof b), dd = poisoned(d, 32 * 16);
    void *params[] = {&da, &db, &dd};
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
    float out[32][4];
    download(d, out, dd, sizeof out);
    for (unsigned l = 0; l < 32; l++)
        for (unsigned e = 0; e < 4; e++) {
            unsigned row, col;
            frag_c(l, e, &row, &col);
            float acc = 0;
            for (int k = 0; k < 16; k++) acc = fmaf(f16_val(a[row][k]), f16_val(b[k][col]), acc);
            cr_assert_eq(f2u(out[l][e]), f2u(acc), "lane %u D[%u][%u]: %a vs %a", l, row, col, out[l][e], acc);
        }
    dev_module_unload(m);
    dev_close(d);
}

/* Two mma.sync back to back: after the first fires, every lane stands at the second, which fires at once
 * (emu_fire_warp's fire_aligned) when every lane's guard holds; D = C + 16 (all ones) then + 32 (B all twos),
 * C distinct per lane.  With the second's guard false on one lane that lane runs on to its end and the
 * other 31 are stopped at the second mma ("needs all 32 lanes"): the guard is looked at before firing. */
Test(mma, back_to_back_fired_at_once) {
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    static const char *ptx = PTX_HEAD ".visible .entry twice(.param .u64 out, .param .u32 skip)\n{\n"
        " .reg .b32 %r<10>;\n .reg .f32 %f<4>;\n .reg .pred %p;\n .reg .b64 %rd<3>;\n"
        " ld.param.u64 %rd0, [out];\n ld.param.u32 %r8, [skip];\n mov.u32 %r9, %laneid;\n setp.ne.u32 %p, %r9, %r8;\n"
        " cvt.rn.f32.u32 %f0, %r9;\n add.f32 %f1, %f0, 0f3F000000;\n add.f32 %f2, %f0, 0f3F800000;\n add.f32 %f3, %f0, 0f40000000;\n"
        " mov.b32 %r0, 0x3F803F80;\n mov.b32 %r1, 0x3F803F80;\n mov.b32 %r2, 0x3F803F80;\n mov.b32 %r3, 0x3F803F80;\n"
        " mov.b32 %r4, 0x3F803F80;\n mov.b32 %r5, 0x3F803F80;\n mov.b32 %r6, 0x40004000;\n mov.b32 %r7, 0x40004000;\n"
        " mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%f0,%f1,%f2,%f3};\n"
        " @%p mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r6,%r7}, {%f0,%f1,%f2,%f3};\n"
        " mul.wide.u32 %rd1, %r9, 16;\n add.s64 %rd2, %rd0, %rd1;\n st.global.v4.f32 [%rd2], {%f0,%f1,%f2,%f3};\n ret;\n}\n";
    TileDevFunction *fn = load(d, ptx, "twice", &m);
    uint64_t dd = poisoned(d, 32 * 16);
    uint32_t skip = 32;
    void *params[] = {&dd, &skip};
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
    float out[32][4];
    download(d, out, dd, sizeof out);
    static const float add[4] = {0, 0.5f, 1, 2};
    for (unsigned l = 0; l < 32; l++)
        for (unsigned e = 0; e < 4; e++)
            cr_assert_eq(out[l][e], (float)l + add[e] + 48, "lane %u element %u: %g", l, e, out[l][e]);
    skip = 5;
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_ERR_LAUNCH);
    cr_assert(strstr(dev_last_error(d), "needs all 32 lanes of the warp; 31 take part") &&
              strstr(dev_last_error(d), "PTX line 27"), "%s", dev_last_error(d));
    dev_module_unload(m);
    dev_close(d);
}

/* The same pipeline as LLVM 22's NVPTX backend emits it from nvvm intrinsics
 * (tests/emu/mma.ll -> mma.ptx): two warps, each with its own A, B and C. */
Test(llvm, mma_pipeline_from_intrinsics) {
    char path[512];
    snprintf(path, sizeof path, "%s/tests/emu/mma.ptx", TILE_SOURCE_DIR);
    size_t len;
    char *ptx = read_file(path, &len);
    cr_assert(ptx, "cannot read %s", path);
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *fn = load(d, ptx, "mma_pipe", &m);
    uint16_t a[2][16][16], b[2][16][8];
    float c[64][4];
    for (int w = 0; w < 2; w++) {
        for (int i = 0; i < 16; i++)
            for (int k = 0; k < 16; k++) a[w][i][k] = f16_bits(rndf(-2, 2));
        for (int k = 0; k < 16; k++)
            for (int j = 0; j < 8; j++) b[w][k][j] = f16_bits(rndf(-2, 2));
    }
    for (int t = 0; t < 64; t++)
        for (int e = 0; e < 4; e++) c[t][e] = rndf(-10, 10);
    uint64_t da = upload(d, a, sizeof a), db = upload(d, b, sizeof b), dc = upload(d, c, sizeof c), dd = poisoned(d, sizeof c);
    void *params[] = {&da, &db, &dc, &dd};
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 64, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
    float out[64][4];
    download(d, out, dd, sizeof out);
    for (unsigned t = 0; t < 64; t++)
        for (unsigned e = 0; e < 4; e++) {
            unsigned w = t / 32, row, col;
            frag_c(t % 32, e, &row, &col);
            float acc = c[t][e];
            for (int k = 0; k < 16; k++) acc = fmaf(f16_val(a[w][row][k]), f16_val(b[w][k][col]), acc);
            cr_assert_eq(f2u(out[t][e]), f2u(acc), "thread %u D[%u][%u]: %a vs %a", t, row, col, out[t][e], acc);
        }
    dev_module_unload(m);
    dev_close(d);
    free(ptx);
}

/* ---- 4. cp.async forms, racecheck, errors ---- */
/* Thread t copies `size` bytes (4, 8 or 16, by t%3) with src-size t%17
 * clamped to size from src[16t] to shared slot t, then after wait_all and a
 * barrier thread t reads slot 31-t back.  Thread 31 then copies 16 bytes from src[0] over its slot in a second
 * group (after waiting for the first: two copies to one place land in either order until then). */
static const char *cpasync_ptx = PTX_HEAD
    ".visible .entry cpa(.param .u64 src, .param .u64 out, .param .u32 sync)\n{\n"
    " .reg .pred %p<8>;\n .reg .b32 %r<32>;\n .reg .b64 %rd<16>;\n"
    " .shared .align 16 .b8 buf[512];\n"
    " mov.u32 %r1, %tid.x;\n ld.param.u64 %rd1, [src];\n mul.wide.u32 %rd2, %r1, 16;\n add.s64 %rd3, %rd1, %rd2;\n"
    " mov.u32 %r2, buf;\n shl.b32 %r3, %r1, 4;\n add.s32 %r4, %r2, %r3;\n"
    " rem.u32 %r5, %r1, 3;\n rem.u32 %r6, %r1, 17;\n"
    " setp.eq.u32 %p1, %r5, 0;\n setp.eq.u32 %p2, %r5, 1;\n setp.eq.u32 %p3, %r5, 2;\n"
    " min.u32 %r7, %r6, 4;\n min.u32 %r8, %r6, 8;\n"
    " @%p1 cp.async.ca.shared.global [%r4], [%rd3], 4, %r7;\n"
    " @%p2 cp.async.ca.shared.global [%r4], [%rd3], 8, %r8;\n"
    " @%p3 cp.async.cg.shared.global [%r4], [%rd3], 16, %r6;\n"
    " cp.async.commit_group;\n cp.async.wait_group 0;\n" /* two copies to one place are unordered until the first is waited for */
    " setp.eq.u32 %p4, %r1, 31;\n @%p4 cp.async.cg.shared.global [buf+496], [%rd1], 16;\n" /* a second group, full size */
    " cp.async.commit_group;\n cp.async.wait_group 1;\n cp.async.wait_all;\n"
    " ld.param.u32 %r9, [sync];\n setp.ne.u32 %p5, %r9, 0;\n @%p5 bar.sync 0;\n"
    " mov.u32 %r10, 31;\n sub.u32 %r10, %r10, %r1;\n shl.b32 %r10, %r10, 4;\n add.s32 %r10, %r2, %r10;\n"
    " ld.shared.v4.b32 {%r11, %r12, %r13, %r14}, [%r10];\n"
    " ld.param.u64 %rd4, [out];\n mov.u32 %r15, 31;\n sub.u32 %r15, %r15, %r1;\n mul.wide.u32 %rd5, %r15, 16;\n"
    " add.s64 %rd6, %rd4, %rd5;\n st.global.v4.b32 [%rd6], {%r11, %r12, %r13, %r14};\n ret;\n}\n";

Test(cp_async, sizes_zero_fill_groups_and_racecheck) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *fn = load(d, cpasync_ptx, "cpa", &m);
    uint8_t src[512];
    for (int i = 0; i < 512; i++) src[i] = (uint8_t)(rnd64() | 1); /* never 0: zero fill is visible */
    uint64_t ds = upload(d, src, sizeof src), dout = poisoned(d, 512);
    uint32_t sync = 1;
    void *params[] = {&ds, &dout, &sync};
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
    uint8_t out[512];
    download(d, out, dout, sizeof out);
    for (unsigned t = 0; t < 32; t++) {
        unsigned size = t % 3 == 0 ? 4 : t % 3 == 1 ? 8 : 16, srcsz = t % 17 < size ? t % 17 : size;
        for (unsigned k = 0; k < 16; k++) {
            uint8_t want = t == 31 ? src[k] : k < srcsz ? src[16 * t + k] : 0; /* shared starts zeroed */
            cr_assert_eq(out[16 * t + k], want, "thread %u byte %u (size %u, src-size %u): %#x vs %#x", t, k, size, srcsz,
                         out[16 * t + k], want);
        }
    }
    /* without the barrier, another thread's read of a cp.async destination is a hazard */
    sync = 0;
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_ERR_MEMCHECK);
    const char *e = dev_last_error(d);
    cr_assert(strstr(e, "racecheck: shared-memory hazard (write after read)") && strstr(e, "cp.async"), "%s", e);
    dev_module_unload(m);
    dev_close(d);
}

Test(mma, errors) {
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    /* a 16-thread block: mma needs the whole warp */
    static const char *mma16 = PTX_HEAD ".visible .entry k()\n{\n .reg .b32 %r<8>;\n .reg .f32 %f<4>;\n"
        " mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%f0,%f1,%f2,%f3};\n"
        " ret;\n}\n";
    TileDevFunction *fn = load(d, mma16, "k", &m);
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL), DEV_OK, "%s", dev_last_error(d));
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 16, 1, 1, 0, NULL, NULL), DEV_ERR_LAUNCH);
    cr_assert(strstr(dev_last_error(d), "needs all 32 lanes of the warp; 16 take part") &&
              strstr(dev_last_error(d), "PTX line 8"), "%s", dev_last_error(d));
    dev_module_unload(m);
    /* the lanes at two different mma instructions: the high half at line 12, the low half at line 15 */
    static const char *mma2 = PTX_HEAD ".visible .entry k()\n{\n .reg .b32 %r<8>;\n .reg .f32 %f<4>;\n .reg .pred %p<2>;\n"
        " mov.u32 %r0, %laneid;\n setp.lt.u32 %p0, %r0, 16;\n @%p0 bra $L;\n"
        " mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%f0,%f1,%f2,%f3};\n"
        " ret;\n$L:\n"
        " mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%f0,%f1,%f2,%f3};\n"
        " ret;\n}\n";
    fn = load(d, mma2, "k", &m);
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL), DEV_ERR_LAUNCH);
    cr_assert(strstr(dev_last_error(d), "divergent warp-synchronous instructions") &&
              strstr(dev_last_error(d), "'mma' is .aligned: lane 16 is at PTX line 12, lane 0 at PTX line 15") &&
              strstr(dev_last_error(d), "by thread (16,0,0)"), "%s", dev_last_error(d));
    dev_module_unload(m);
    /* ldmatrix rows: 16-byte aligned, inside shared memory */
    static const char *ldm = PTX_HEAD ".visible .entry k(.param .u32 off)\n{\n .reg .b32 %r<8>;\n"
        " .shared .align 16 .b8 s[256];\n ld.param.u32 %r1, [off];\n mov.u32 %r2, %laneid;\n shl.b32 %r2, %r2, 4;\n"
        " add.s32 %r2, %r2, %r1;\n ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r3,%r4,%r5,%r6}, [%r2+0];\n ret;\n}\n";
    fn = load(d, ldm, "k", &m);
    uint32_t off = 0;
    void *params[] = {&off};
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_ERR_MEMCHECK);
    cr_assert(strstr(dev_last_error(d), "invalid __shared__ read of size 16 bytes") &&
              strstr(dev_last_error(d), "thread (16,0,0)"), "%s", dev_last_error(d));
    off = 8;
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_ERR_MEMCHECK);
    cr_assert(strstr(dev_last_error(d), "misaligned __shared__ read of size 16 bytes"), "%s", dev_last_error(d));
    dev_module_unload(m);
    /* the same ldmatrix right after an mma, which the warp fires in one run with it (fire_aligned): its fault names
     * its own line */
    static const char *chain = PTX_HEAD ".visible .entry k(.param .u32 off)\n{\n .reg .b32 %r<8>;\n .reg .f32 %f<4>;\n"
        " .shared .align 16 .b8 s[512];\n ld.param.u32 %r1, [off];\n mov.u32 %r2, %laneid;\n shl.b32 %r2, %r2, 4;\n"
        " add.s32 %r2, %r2, %r1;\n"
        " mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%f0,%f1,%f2,%f3};\n"
        " ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r3,%r4,%r5,%r6}, [%r2+0];\n ret;\n}\n";
    fn = load(d, chain, "k", &m);
    off = 0;
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
    off = 8;
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_ERR_MEMCHECK);
    cr_assert(strstr(dev_last_error(d), "misaligned __shared__ read of size 16 bytes") &&
              strstr(dev_last_error(d), "PTX line 14"), "%s", dev_last_error(d));
    dev_module_unload(m);
    /* forms the emulator does not know fail at load time */
    static const char *bad[][2] = {
        {"mma.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%f0,%f1,%f2,%f3};",
         "tf32 mma needs m16n8k4 or m16n8k8"},
        {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2}, {%r4,%r5}, {%f0,%f1,%f2,%f3};",
         "needs 4 A registers"},
        {"mma.sync.aligned.m16n8k16.row.col.f16.bf16.bf16.f32 {%r0,%r1}, {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%f0,%f1,%f2,%f3};",
         "D and C must both be .f32"},
        {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f16 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%r6,%r7};",
         "D and C must both be .f32"},
        {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16 {%f0,%f1,%f2,%f3}, {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%f0,%f1,%f2,%f3};",
         "mma needs .dtype.atype.btype.ctype"},
        {"ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r0}, [%r1];", "needs 2 destination registers"},
        {"ldmatrix.sync.aligned.m8n8.x4.shared.b32 {%r0,%r1,%r2,%r3}, [%r1];", "unsupported ldmatrix form"},
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        char ptx[1024];
        snprintf(ptx, sizeof ptx, PTX_HEAD ".visible .entry k()\n{\n .reg .b32 %%r<8>;\n .reg .f32 %%f<4>;\n %s\n ret;\n}\n",
                 bad[i][0]);
        cr_assert_eq(dev_module_load_ptx(d, ptx, &m), DEV_ERR_PTX, "accepted: %s", bad[i][0]);
        cr_assert(strstr(dev_last_error(d), "ptx:8:") && strstr(dev_last_error(d), bad[i][1]), "%s: %s", bad[i][0],
                  dev_last_error(d));
    }
    dev_close(d);
}

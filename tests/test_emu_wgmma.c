/* test_emu_wgmma.c - the emulator's wgmma on emu:sm_90a: every swizzle mode,
 * A from shared memory and from registers, f16/bf16/tf32/e4m3/e5m2/s8/u8,
 * the async group rules (accumulators and operands in flight, groups ending
 * at call and ret), negated scale-d; and sm_90's vector atomics.  The other
 * Hopper instructions: test_emu_hopper.c.  Descriptors with a base offset (a tile past its swizzle
 * repeat boundary) are read as the pattern starting there.
 *
 * Every hand-written kernel is checked by ptxas -arch=sm_90a when it is
 * installed.  Shared-memory placements are computed here from the PTX ISA's
 * description of the swizzle atoms (a 16-byte chunk index XORed with the row
 * within the 8-row repeat), written independently of the emulator's
 * descriptor arithmetic; results are compared with matrix products computed
 * here in double precision on random inputs, outputs poisoned first. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "support/support.h"
#include "support/hostfloat.h"
#include "support/target.h"
#include "test_emu_sm90.h"
#include "test_rng.h"

enum { SW_NONE, SW_128, SW_64, SW_32 }; /* the descriptor's swizzle field */
static const unsigned sw_width[4] = {0, 128, 64, 32};

typedef struct WgCase {
    const char *atype, *dtype; /* "f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8"; "f32", "f16", "s32" */
    const char *btype;         /* NULL: atype */
    unsigned n, swz;
    bool areg, trans_a, trans_b, neg_a, chain; /* chain: two k-steps in one group (K-major, swizzled) */
    int exp;       /* A and B scaled by 2^exp, C by 2^(2 exp + 2): products outside f32's normal range (-72: below it,
                    * 64: past FLT_MAX), checked against one fmaf per k ascending instead of the exact sum */
    unsigned b_at; /* B's tile (and its swizzle pattern) starts this many bytes past a 1024-byte boundary: the
                    * descriptor's base offset says (start >> 7) & 7 (a second pipeline stage at +512, say) */
    bool sparse;   /* wgmma.mma_async.sp: K twice the dense form's, A holding half of each row (sparse_meta) */
    unsigned sel;  /* its sp-sel */
} WgCase;

#define WG(a, d, n_, s, ...) {.atype = a, .dtype = d, .n = n_, .swz = s, __VA_ARGS__}

static unsigned esize_of(const char *t) { return !strcmp(t, "tf32") ? 4 : (!strcmp(t, "f16") || !strcmp(t, "bf16")) ? 2 : 1; }

/* A random element: its bits and its exact value.  Values are chosen so every product and every sum of
 * a few dozen of them is exact in f32 (k/8 with |k| <= 16; e4m3 codes of exponents 2^-2..2^2). */
static uint32_t rand_elem(const char *t, double *v) {
    if (!strcmp(t, "b1")) { int x = irand(2); *v = x; return (uint32_t)x; }
    if (!strcmp(t, "s8")) { int x = irand(256) - 128; *v = x; return (uint8_t)x; }
    if (!strcmp(t, "u8")) { int x = irand(256); *v = x; return (uint32_t)x; }
    if (!strcmp(t, "e4m3")) {
        uint8_t c = (uint8_t)((irand(2) << 7) | ((5 + irand(5)) << 3) | irand(8));
        *v = f8e4m3_to_d(c);
        return c;
    }
    if (!strcmp(t, "e5m2")) { /* exponents 2^-2..2^2, as e4m3's */
        uint8_t c = (uint8_t)((irand(2) << 7) | ((13 + irand(5)) << 2) | irand(4));
        *v = f8e5m2_to_d(c);
        return c;
    }
    float f = (float)(irand(33) - 16) / 8;
    *v = f;
    if (!strcmp(t, "f16")) return f32_to_f16(f);
    if (!strcmp(t, "bf16")) return f32_to_bf16(f);
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* Byte offset of element (mn, k) of an R x K operand in the layouts this test builds, from the ISA's
 * pictures of the swizzle atoms: 8 rows of W bytes, the 16-byte chunk c of row r stored at chunk
 * c ^ (r >> s) with s = 0 (128B), 1 (64B), 2 (32B), rows (K-major: mn; MN-major: k) within an atom;
 * atoms along MN LBO apart (MN-major) or SBO apart (K-major); interleaved: 8x16-byte core matrices.
 * *lbo and *sbo receive what the descriptor must say. */
static uint32_t place(unsigned swz, bool mn_major, unsigned R, unsigned K, unsigned es, unsigned mn, unsigned k, uint32_t *lbo,
                      uint32_t *sbo, uint32_t *size) {
    unsigned T = 16 / es;
    if (swz == SW_NONE) {
        if (!mn_major) {
            *sbo = 128, *lbo = (R / 8) * 128, *size = R * K * es;
            return (mn / 8) * 128 + (k / T) * *lbo + (mn % 8) * 16 + (k % T) * es;
        }
        *sbo = 128, *lbo = ((R + T - 1) / T) * 128, *size = *lbo * (K / 8);
        return (mn / T) * 128 + (k / 8) * *lbo + (k % 8) * 16 + (mn % T) * es;
    }
    unsigned W = sw_width[swz], s = swz == SW_128 ? 0 : swz == SW_64 ? 1 : 2;
    unsigned row, byte;
    uint32_t atom;
    if (!mn_major) {
        *sbo = 8 * W, *lbo = 16, *size = ((R + 7) / 8) * 8 * W;
        row = mn % 8, byte = k * es, atom = (mn / 8) * *sbo;
    } else {
        unsigned per = W / es, natoms = (R + per - 1) / per;
        *lbo = 8 * W, *sbo = natoms * 8 * W, *size = *sbo * (K / 8);
        row = k % 8, byte = (mn % per) * es, atom = (mn / per) * *lbo + (k / 8) * *sbo;
    }
    unsigned chunk = (byte / 16) ^ (row >> s);
    return atom + row * W + chunk * 16 + byte % 16;
}

static uint64_t make_desc(uint32_t start, uint32_t lbo, uint32_t sbo, unsigned swz) {
    return (uint64_t)((start >> 4) & 0x3FFF) | (uint64_t)((lbo >> 4) & 0x3FFF) << 16 | (uint64_t)((sbo >> 4) & 0x3FFF) << 32 |
           (uint64_t)swz << 62;
}

static void put_elem(uint8_t *p, uint32_t bits, unsigned es) { memcpy(p, &bits, es); }

static char *wg_ptx(const WgCase *c, unsigned nd, unsigned smem) {
    bool f32 = !strcmp(c->dtype, "f32");
    bool notrans = !strcmp(c->atype, "tf32") || !strcmp(c->atype, "e4m3") || esize_of(c->atype) == 1;
    bool integer = !strcmp(c->dtype, "s32");
    bool b1 = !strcmp(c->atype, "b1");
    unsigned k = b1 ? 256 : (esize_of(c->atype) == 2 ? 16 : esize_of(c->atype) == 4 ? 8 : 32) * (c->sparse ? 2 : 1);
    Str s = {0};
    str_printf(&s, PTX_HEAD ".visible .entry wg(.param .u64 img, .param .u32 nbytes, .param .u64 descA, .param .u64 descB,"
                            " .param .u64 areg, .param .u64 cmat, .param .u64 dout, .param .u32 scaled%s)\n{\n"
                            "  .reg .pred %%p<4>;\n  .reg .b32 %%r<16>;\n  .reg .b64 %%rd<16>;\n  .reg .%s %%d<%u>;\n  .reg .b32 %%a<8>;\n"
                            "  .shared .align 1024 .b8 smem[%u];\n",
               c->sparse ? ", .param .u64 meta" : "", f32 ? "f32" : "b32", nd, smem);
    str_printf(&s, "  ld.param.u64 %%rd0, [img];\n  ld.param.u32 %%r0, [nbytes];\n  mov.u32 %%r1, %%tid.x;\n  mov.u32 %%r2, smem;\n"
                   "  shl.b32 %%r3, %%r1, 4;\n$CP:\n  setp.ge.u32 %%p0, %%r3, %%r0;\n  @%%p0 bra $CPD;\n  cvt.u64.u32 %%rd1, %%r3;\n"
                   "  add.u64 %%rd2, %%rd0, %%rd1;\n  ld.global.v4.b32 {%%r4, %%r5, %%r6, %%r7}, [%%rd2];\n  add.u32 %%r8, %%r2, %%r3;\n"
                   "  st.shared.v4.b32 [%%r8], {%%r4, %%r5, %%r6, %%r7};\n  add.u32 %%r3, %%r3, 2048;\n  bra $CP;\n$CPD:\n  bar.sync 0;\n"
                   "  fence.proxy.async.shared::cta;\n"
                   "  ld.param.u64 %%rd3, [descA];\n  ld.param.u64 %%rd4, [descB];\n  shr.u32 %%r9, %%r2, 4;\n  cvt.u64.u32 %%rd5, %%r9;\n"
                   "  add.u64 %%rd3, %%rd3, %%rd5;\n  add.u64 %%rd4, %%rd4, %%rd5;\n"
                   "  ld.param.u64 %%rd6, [areg];\n  mul.wide.u32 %%rd7, %%r1, 32;\n  add.u64 %%rd6, %%rd6, %%rd7;\n"
                   "  ld.global.v4.b32 {%%a0, %%a1, %%a2, %%a3}, [%%rd6];\n  ld.global.v4.b32 {%%a4, %%a5, %%a6, %%a7}, [%%rd6+16];\n"
                   "  ld.param.u64 %%rd8, [cmat];\n  mul.wide.u32 %%rd9, %%r1, %u;\n  add.u64 %%rd8, %%rd8, %%rd9;\n", nd * 4);
    for (unsigned r = 0; r < nd; r++) str_printf(&s, "  ld.global.%s %%d%u, [%%rd8+%u];\n", f32 ? "f32" : "b32", r, 4 * r);
    str_printf(&s, "  ld.param.u32 %%r10, [scaled];\n  setp.ne.u32 %%p1, %%r10, 0;\n");
    if (c->sparse) /* each thread's sp-meta */
        str_printf(&s, "  ld.param.u64 %%rd11, [meta];\n  mul.wide.u32 %%rd12, %%r1, 4;\n  add.u64 %%rd11, %%rd11, %%rd12;\n"
                       "  ld.global.b32 %%r11, [%%rd11];\n");
    str_printf(&s, "  wgmma.fence.sync.aligned;\n");
    Str dv = {0};
    str_putc(&dv, '{');
    for (unsigned r = 0; r < nd; r++) str_printf(&dv, "%s%%d%u", r ? ", " : "", r);
    str_putc(&dv, '}');
    for (unsigned step = 0; step < (c->chain ? 2u : 1u); step++) {
        char a[64], tail[64];
        if (c->areg) snprintf(a, sizeof a, "{%%a%u, %%a%u, %%a%u, %%a%u}", 4 * step, 4 * step + 1, 4 * step + 2, 4 * step + 3);
        else snprintf(a, sizeof a, "%%rd3");
        const char *sa = c->neg_a ? "-1" : "1";
        if (integer) snprintf(tail, sizeof tail, "%s", step ? "1" : "%p1");
        else if (notrans) snprintf(tail, sizeof tail, "%s, %s, 1", step ? "1" : "%p1", sa);
        else if (c->areg) snprintf(tail, sizeof tail, "%s, %s, 1, %d", step ? "1" : "%p1", sa, c->trans_b);
        else snprintf(tail, sizeof tail, "%s, %s, 1, %d, %d", step ? "1" : "%p1", sa, c->trans_a, c->trans_b);
        if (step) str_printf(&s, "  add.u64 %%rd3, %%rd3, 2;\n  add.u64 %%rd4, %%rd4, 2;\n"); /* 32 bytes further along K */
        char spops[32] = "";
        if (c->sparse) snprintf(spops, sizeof spops, ", %%r11, %u", c->sel);
        str_printf(&s, "  wgmma.mma_async%s.sync.aligned.m64n%uk%u.%s.%s.%s%s %s, %s, %%rd4%s, %s;\n", c->sparse ? ".sp" : "", c->n, k,
                   c->dtype, c->atype, c->btype ? c->btype : c->atype, b1 ? ".and.popc" : "", dv.buf, a, spops, tail);
    }
    str_free(&dv);
    str_printf(&s, "  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n"
                   "  ld.param.u64 %%rd10, [dout];\n  add.u64 %%rd10, %%rd10, %%rd9;\n");
    for (unsigned r = 0; r < nd; r++) str_printf(&s, "  st.global.%s [%%rd10+%u], %%d%u;\n", f32 ? "f32" : "b32", 4 * r, r);
    str_printf(&s, "  ret;\n}\n");
    return str_take(&s);
}

/* The D element (row, col) that thread i's register r holds (the ISA's wgmma D fragment): warp w = i/32 has
 * rows 16w..16w+15; lane l has rows l/4 and l/4 + 8, columns 2(l%4), 2(l%4)+1 of every 8-column block. */
static void d_coord(unsigned i, unsigned e, unsigned *row, unsigned *col) {
    unsigned w = i / 32, l = i % 32;
    *row = 16 * w + l / 4 + ((e / 2) % 2) * 8;
    *col = (e / 4) * 8 + (l % 4) * 2 + e % 2;
}

/* wgmma.mma_async.sp's metadata, written from the PTX ISA ("Sparse matrix storage", the metadata figures of
 * sparse wgmma, the same as mma.sp's m16n8k32 f16, m16n8k16 tf32 and m16n8k64 8-bit ones): each row of the dense
 * 64 x KB matrix A keeps 2 of every 4 elements (tf32: 1 of 2), a 4-bit nibble a chunk giving their places (two
 * 2-bit indices, the low one first; tf32: 0b0100 the first element, 0b1110 the second); warp w gives rows
 * 16w..16w+15: in each group of 4 lanes (rows 16w + g and 16w + g + 8, g = lane / 4) the lanes sp-sel names (a pair:
 * lanes 2 sel, 2 sel + 1; 8-bit: all four) hold chunks 4j..4j+3 (the j-th of them), the first row's in bits 0-15,
 * the second's in 16-31.  Random indices in either order; the lanes that give none hold garbage.  colmap: the
 * dense column of each kept value. */
static void sparse_meta(const WgCase *c, unsigned KB, uint32_t *meta, unsigned *colmap) {
    bool tf32 = !strcmp(c->atype, "tf32");
    unsigned cw = tf32 ? 2 : 4, nch = KB / cw, mthreads = nch / 4, KA = KB / 2;
    unsigned nib[64][16];
    for (unsigned m = 0; m < 64; m++)
        for (unsigned ch = 0; ch < nch; ch++) {
            unsigned i0 = (unsigned)irand(4), i1 = (i0 + 1 + (unsigned)irand(3)) % 4;
            nib[m][ch] = tf32 ? (irand(2) ? 0xE : 0x4) : i0 | i1 << 2;
            for (unsigned s = 0; s < cw / 2; s++)
                colmap[m * KA + ch * (cw / 2) + s] = tf32 ? 2 * ch + (nib[m][ch] == 0xE) : 4 * ch + (s ? i1 : i0);
        }
    for (unsigned i = 0; i < 128; i++) {
        unsigned w = i / 32, l = i % 32, g = l / 4, t = l % 4;
        meta[i] = (uint32_t)irand(1 << 30) * 4 + (uint32_t)irand(4);
        if (t < c->sel * mthreads || t >= (c->sel + 1) * mthreads) continue;
        unsigned j = t - c->sel * mthreads;
        meta[i] = 0;
        for (unsigned q = 0; q < 4; q++) meta[i] |= nib[16 * w + g][4 * j + q] << (4 * q) | nib[16 * w + g + 8][4 * j + q] << (16 + 4 * q);
    }
}

static void run_wgmma_case(TileDevice *d, const WgCase *c) {
    /* K: A's columns (.sp: the kept values of a row); KB: B's (.sp: twice A's) */
    /* b1: 8 elements a byte, the lowest bit first: laid out as bytes (es 1, K / 8 of them a row) */
    bool b1 = !strcmp(c->atype, "b1");
    unsigned es = esize_of(c->atype), K1 = b1 ? 256 : es == 2 ? 16 : es == 4 ? 8 : 32, K = c->chain ? 2 * K1 : K1, M = 64, N = c->n;
    unsigned bpe = b1 ? 8 : 1; /* elements a placed unit */
    unsigned KB = c->sparse ? 2 * K : K;
    bool f16acc = !strcmp(c->dtype, "f16"), integer = !strcmp(c->dtype, "s32");
    unsigned nd = f16acc ? N / 4 : N / 2;
    double *A = calloc(M * K, sizeof *A), *B = calloc(N * KB, sizeof *B), *C = calloc(M * N, sizeof *C);
    uint32_t *abits = calloc(M * K, 4), *bbits = calloc(N * KB, 4);
    for (unsigned i = 0; i < M * K; i++) abits[i] = rand_elem(c->atype, &A[i]);
    for (unsigned i = 0; i < N * KB; i++) bbits[i] = rand_elem(c->btype ? c->btype : c->atype, &B[i]); /* B[n][k] */
    uint32_t *meta = NULL;
    unsigned *colmap = NULL;
    if (c->sparse) {
        meta = calloc(128, 4), colmap = calloc(M * K, sizeof *colmap);
        sparse_meta(c, KB, meta, colmap);
        if (!strcmp(c->dtype, "f32") && es >= 2) { /* an infinity in B (n 3, k 1): only the rows that keep column 1 see it */
            B[3 * KB + 1] = INFINITY;
            bbits[3 * KB + 1] = es == 4 ? 0x7F800000u : !strcmp(c->atype, "bf16") ? 0x7F80 : 0x7C00;
        }
    }
    if (c->exp) { /* bf16 or tf32: the bits of the scaled value, exact in both */
        bool bf = !strcmp(c->atype, "bf16");
        for (unsigned i = 0; i < M * K + N * K; i++) {
            double *v = i < M * K ? &A[i] : &B[i - M * K];
            uint32_t *bits = i < M * K ? &abits[i] : &bbits[i - M * K];
            float f = ldexpf((float)*v, c->exp);
            *v = f;
            uint32_t u;
            memcpy(&u, &f, 4);
            *bits = bf ? f32_to_bf16(f) : u;
        }
    }
    /* shared memory image: A at 0 (unless in registers), B at the next 1024-byte boundary */
    uint32_t alb = 0, asb = 0, asz = 0, blb = 0, bsb = 0, bsz = 0;
    place(c->swz, c->trans_a, M, K / bpe, es, 0, 0, &alb, &asb, &asz);
    place(c->swz, c->trans_b, N, KB / bpe, es, 0, 0, &blb, &bsb, &bsz);
    uint32_t boff = (c->areg ? 0 : (asz + 1023) / 1024 * 1024) + c->b_at, total = (boff + bsz + 15) / 16 * 16;
    uint8_t *img = calloc(total, 1);
    for (unsigned m = 0; m < M && !c->areg; m++)
        for (unsigned k = 0; k < K; k++) {
            uint8_t *at = img + place(c->swz, c->trans_a, M, K / bpe, es, m, k / bpe, &alb, &asb, &asz);
            if (b1) *at |= (uint8_t)(abits[m * K + k] << (k % 8));
            else put_elem(at, abits[m * K + k], es);
        }
    for (unsigned n = 0; n < N; n++)
        for (unsigned k = 0; k < KB; k++) {
            uint8_t *at = img + boff + place(c->swz, c->trans_b, N, KB / bpe, es, n, k / bpe, &blb, &bsb, &bsz);
            if (b1) *at |= (uint8_t)(bbits[n * KB + k] << (k % 8));
            else put_elem(at, bbits[n * KB + k], es);
        }
    uint64_t da = make_desc(0, alb, asb, c->swz), db = make_desc(boff, blb, bsb, c->swz) | (uint64_t)((boff >> 7) & 7) << 49;
    /* A in registers (the mma.m16n8kK A fragment per warp): register j of lane l holds row l/4 + 8(j%2), columns
     * (l%4)*E + (j/2)*4E .. + E-1, E = 4 / es elements per register; a second k-step in registers 4..7 */
    uint32_t *afrag = calloc(128 * 8, 4);
    unsigned E = b1 ? 32 : 4 / es; /* b1: 32 a register, bit e element e (mma.m16n8k256's A) */
    for (unsigned i = 0; i < 128 && c->areg; i++)
        for (unsigned j = 0; j < (c->chain ? 8u : 4u); j++) {
            unsigned row = 16 * (i / 32) + (i % 32) / 4 + 8 * (j % 2), step = j / 4;
            for (unsigned e = 0; e < E; e++) {
                unsigned col = step * K1 + (i % 4) * E + ((j % 4) / 2) * 4 * E + e;
                afrag[i * 8 + j] |= abits[row * K + col] << (b1 ? e : 8 * es * e);
            }
        }
    /* C, as registers per thread, and the reference */
    uint32_t *cregs = calloc(128 * nd, 4);
    for (unsigned i = 0; i < 128; i++)
        for (unsigned e = 0; e < (f16acc ? 2 * nd : nd); e++) {
            unsigned row, col;
            d_coord(i, e, &row, &col);
            double v;
            if (integer) { int x = irand(2001) - 1000; v = x; cregs[i * nd + e] = (uint32_t)x; }
            else {
                float f = ldexpf((float)(irand(33) - 16) / 4, c->exp ? 2 * c->exp + 2 : 0);
                v = f;
                if (f16acc) cregs[i * nd + e / 2] |= (uint32_t)f32_to_f16(f) << (16 * (e % 2));
                else memcpy(&cregs[i * nd + e], &f, 4);
            }
            C[row * N + col] = v;
        }
    char *ptx = wg_ptx(c, nd, total < 16 ? 16 : total);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "wg", &m);
    uint64_t dimg = upload(d, img, total), dareg = upload(d, afrag, 128 * 8 * 4), dc = upload(d, cregs, 128 * nd * 4);
    uint64_t dout = poisoned(d, 128 * nd * 4), dmeta = c->sparse ? upload(d, meta, 128 * 4) : 0;
    for (unsigned scaled = 0; scaled < 2; scaled++) {
        void *args[] = {&dimg, &total, &da, &db, &dareg, &dc, &dout, &scaled, &dmeta};
        cr_assert_eq(dev_launch(f, 1, 1, 1, 128, 1, 1, 0, NULL, args), DEV_OK, "%s\n%s", dev_last_error(d), ptx);
        uint32_t *out = calloc(128 * nd, 4);
        dev_memcpy_dtoh(d, out, dout, 128 * nd * 4);
        for (unsigned i = 0; i < 128; i++)
            for (unsigned e = 0; e < (f16acc ? 2 * nd : nd); e++) {
                unsigned row, col;
                d_coord(i, e, &row, &col);
                double ref = scaled || (c->chain) ? C[row * N + col] : 0;
                if (c->chain && !scaled) ref = 0; /* the first step's scale-d is the parameter; the second accumulates */
                for (unsigned k = 0; k < K; k++)
                    ref += (c->neg_a ? -1 : 1) * A[row * K + k] * B[col * KB + (c->sparse ? colmap[row * K + k] : k)];
                if (c->exp) { /* products not exact in f32: each step one fmaf */
                    float acc = (float)(scaled ? C[row * N + col] : 0);
                    for (unsigned k = 0; k < K; k++) acc = fmaf((float)((c->neg_a ? -1 : 1) * A[row * K + k]), (float)B[col * K + k], acc);
                    ref = acc;
                }
                if (integer) {
                    cr_assert_eq((int32_t)out[i * nd + e], (int32_t)(int64_t)ref, "%s.%s n%u swz%u: D[%u][%u] = %d, want %.0f", c->dtype,
                                 c->atype, N, c->swz, row, col, (int32_t)out[i * nd + e], ref);
                } else if (f16acc) {
                    uint16_t got = (uint16_t)(out[i * nd + e / 2] >> (16 * (e % 2)));
                    cr_assert_eq(got, f32_to_f16((float)ref), "%s.%s n%u swz%u: D[%u][%u] = %g, want %g", c->dtype, c->atype, N, c->swz,
                                 row, col, f16_to_d(got), ref);
                } else {
                    float got;
                    memcpy(&got, &out[i * nd + e], 4);
                    if (isnan(ref)) { /* inf - inf past FLT_MAX (.exp): the canonical NaN */
                        cr_assert_eq(out[i * nd + e], 0x7FFFFFFFu, "D[%u][%u] = %g, want NaN", row, col, got);
                        continue;
                    }
                    cr_assert_eq(got, (float)ref, "%s.%s n%u swz%u areg%d trans%d%d: D[%u][%u] = %g, want %g", c->dtype, c->atype, N, c->swz,
                                 c->areg, c->trans_a, c->trans_b, row, col, got, ref);
                }
            }
        free(out);
    }
    dev_module_unload(m);
    free(ptx), free(A), free(B), free(C), free(abits), free(bbits), free(img), free(afrag), free(cregs), free(meta), free(colmap);
}

static void run_cases(const WgCase *cases, size_t n) {
    seed_rng();
    TileDevice *d = open_emu(true); /* racecheck on: the operands are written, fenced and published by a barrier */
    for (size_t i = 0; i < n; i++) run_wgmma_case(d, &cases[i]);
    dev_close(d);
}

Test(wgmma, f16_bf16_every_swizzle, .timeout = 300) {
    static const WgCase cases[] = {
        WG("f16", "f32", 64, SW_128), WG("f16", "f32", 8, SW_64), WG("f16", "f32", 256, SW_32), WG("f16", "f32", 64, SW_NONE),
        WG("bf16", "f32", 64, SW_128, .trans_a = true, .trans_b = true), WG("bf16", "f32", 8, SW_64, .trans_a = true, .trans_b = true),
        WG("bf16", "f32", 256, SW_32, .trans_b = true), WG("f16", "f32", 64, SW_NONE, .trans_a = true, .trans_b = true),
        WG("f16", "f16", 64, SW_64), WG("f16", "f32", 64, SW_128, .neg_a = true), WG("bf16", "f32", 128, SW_128, .chain = true),
    };
    run_cases(cases, ARRAY_LEN(cases));
}

/* bf16 and tf32 products below f32's normal range and past its largest value: each D element is one fmaf per k
 * (its single rounding), not a sum of rounded products */
Test(wgmma, bf16_tf32_inexact_products, .timeout = 300) {
    static const WgCase cases[] = {
        WG("bf16", "f32", 64, SW_128, .exp = -72), WG("bf16", "f32", 32, SW_64, .exp = 64, .trans_b = true),
        WG("tf32", "f32", 64, SW_32, .exp = -72, .areg = true), WG("tf32", "f32", 16, SW_128, .exp = 64),
    };
    run_cases(cases, ARRAY_LEN(cases));
}

/* B's pattern starting past its swizzle's repeat boundary, the descriptor's base offset saying where: a 128B
 * tile at +512 (a second stage in a 1024-byte-aligned buffer), 64B at +256, 32B at +128 and +384, K- and N-major.
 * The tile is laid out from its own start (place), so a base offset ignored reads every row's chunks in another
 * order.  Before, a non-zero base offset was refused. */
Test(wgmma, base_offset, .timeout = 300) {
    static const WgCase cases[] = {
        WG("f16", "f32", 64, SW_128, .b_at = 512), WG("bf16", "f32", 64, SW_128, .trans_b = true, .b_at = 512),
        WG("f16", "f32", 32, SW_64, .b_at = 256), WG("f16", "f32", 16, SW_64, .trans_b = true, .b_at = 768),
        WG("f16", "f32", 16, SW_32, .b_at = 128), WG("f16", "f32", 16, SW_32, .trans_b = true, .b_at = 384),
        WG("e4m3", "f32", 32, SW_128, .b_at = 512, .areg = true),
    };
    run_cases(cases, ARRAY_LEN(cases));
}

/* A base offset where the ISA leaves the arithmetic open (a 128B pattern starting 128 bytes past its boundary) is
 * refused at the wgmma, naming the descriptor and the offset. */
Test(wgmma, base_offset_unknown_refused) {
    char *ptx = wg_ptx(&(WgCase)WG("f16", "f32", 8, SW_128), 4, 16384);
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "wg", &m);
    uint64_t img = poisoned(d, 16), areg = poisoned(d, 128 * 32), cm = poisoned(d, 128 * 16), out = poisoned(d, 128 * 16);
    uint32_t total = 16, scaled = 0;
    uint64_t da = make_desc(0, 16, 1024, SW_128), db = make_desc(8192 + 128, 16, 1024, SW_128) | (uint64_t)1 << 49;
    void *args[] = {&img, &total, &da, &db, &areg, &cm, &out, &scaled};
    DevStatus st = dev_launch(f, 1, 1, 1, 128, 1, 1, 0, NULL, args);
    const char *e = dev_last_error(d);
    cr_assert_neq(st, DEV_OK, "ran");
    cr_expect(strstr(e, "unsupported wgmma descriptor") && strstr(e, "has base offset 1 with 128B swizzle: its pattern starts 128 bytes past a "
                                                                       "1024-byte boundary"), "%s", e);
    dev_module_unload(m);
    dev_close(d);
    free(ptx);
}

Test(wgmma, a_from_registers, .timeout = 300) {
    static const WgCase cases[] = {
        WG("bf16", "f32", 256, SW_128, .areg = true), WG("f16", "f32", 8, SW_NONE, .areg = true, .trans_b = true),
        WG("tf32", "f32", 64, SW_32, .areg = true), WG("e4m3", "f32", 8, SW_64, .areg = true), WG("s8", "s32", 64, SW_128, .areg = true),
    };
    run_cases(cases, ARRAY_LEN(cases));
}

Test(wgmma, tf32_e4m3_s8, .timeout = 300) {
    static const WgCase cases[] = {
        WG("tf32", "f32", 64, SW_128), WG("tf32", "f32", 8, SW_NONE), WG("e4m3", "f32", 256, SW_128), WG("e4m3", "f16", 64, SW_NONE),
        WG("s8", "s32", 64, SW_64), WG("s8", "s32", 256, SW_32), WG("u8", "s32", 8, SW_128),
        WG("e4m3", "f32", 64, SW_64, .btype = "e5m2"), WG("e5m2", "f16", 8, SW_32), WG("u8", "s32", 64, SW_NONE, .btype = "s8"),
    };
    run_cases(cases, ARRAY_LEN(cases));
}

/* wgmma on .b1 (m64nNk256.s32.b1.b1.and.popc): D = C + popc(row of A and column of B), random bits, A from shared
 * memory and from registers (32 bits a register, as mma.m16n8k256's A fragment), N 8, 24, 64, 256. */
Test(wgmma, b1_and_popc, .timeout = 300) {
    static const WgCase cases[] = {
        WG("b1", "s32", 8, SW_128), WG("b1", "s32", 24, SW_NONE, .areg = true), WG("b1", "s32", 64, SW_64), WG("b1", "s32", 256, SW_32, .areg = true),
    };
    run_cases(cases, ARRAY_LEN(cases));
}

/* wgmma.mma_async.sp on every type, both sp-sel values where a lane pair gives the metadata, A from shared memory
 * (K- and MN-major) and from registers, every swizzle: the kept values of A laid out as the dense m64nN(K/2) form's
 * A, B as the dense m64nNK form's, against the product of the kept values with the B rows their metadata names (an
 * infinity in B at a column some rows drop shows only in the rows that keep it).  B's K-major rows are 64 bytes
 * here, past a 32-byte swizzle atom (one k-step of a dense wgmma is 32): 32B-swizzled B is MN-major. */
Test(wgmma, sparse_every_type_and_selector, .timeout = 300) {
    static const WgCase cases[] = {
        WG("f16", "f32", 64, SW_128, .sparse = true), WG("f16", "f32", 8, SW_64, .sparse = true, .sel = 1, .trans_a = true, .trans_b = true),
        WG("f16", "f16", 16, SW_32, .sparse = true, .sel = 1, .trans_b = true), WG("f16", "f16", 16, SW_64, .sparse = true, .sel = 1, .areg = true),
        WG("bf16", "f32", 256, SW_NONE, .sparse = true, .trans_b = true),
        WG("bf16", "f32", 24, SW_128, .sparse = true, .sel = 1, .areg = true, .neg_a = true),
        WG("tf32", "f32", 64, SW_128, .sparse = true), WG("tf32", "f32", 8, SW_NONE, .sparse = true, .sel = 1, .areg = true),
        WG("e4m3", "f32", 64, SW_64, .sparse = true), WG("e5m2", "f16", 32, SW_128, .sparse = true, .areg = true, .btype = "e4m3"),
        WG("s8", "s32", 64, SW_128, .sparse = true), WG("u8", "s32", 24, SW_NONE, .sparse = true, .areg = true, .btype = "s8"),
        WG("s8", "s32", 256, SW_64, .sparse = true),
    };
    run_cases(cases, ARRAY_LEN(cases));
}

/* wgmma.mma_async.sp's and .b1 wgmma's forms ptxas refuses are refused at load, at the line. */
Test(wgmma, sparse_and_b1_refused_forms) {
    static const char *const bad[][2] = {
        {"wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {%f0,%f1,%f2,%f3}, %rd1, %rd2, %r1, 2, 1, 1, 1, 0, 0;", "sp-sel (operand 5) must be an immediate 0 or 1"},
        {"wgmma.mma_async.sp.sync.aligned.m64n8k64.s32.s8.s8 {%r0,%r1,%r2,%r3}, %rd1, %rd2, %r1, 1, 1;", "sp-sel (operand 5) must be an immediate 0"},
        {"wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {%f0,%f1,%f2,%f3}, %rd1, %rd2, %r1, %r2, 1, 1, 1, 0, 0;", "sp-sel (operand 5) must be an immediate"},
        {"wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {%f0,%f1,%f2,%f3}, %rd1, %rd2, 7, 0, 1, 1, 1, 0, 0;", "sp-meta (operand 4) is a register"},
        {"wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {%f0,%f1,%f2,%f3}, %rd1, %rd2, %r1, 0, 1, 1, 1, 0;", "takes 10 operands here"},
        {"wgmma.mma_async.sp.sync.aligned.m64n8k16.f32.tf32.tf32 {%f0,%f1,%f2,%f3}, %rd1, %rd2, %r1, 1, 1, 1, 1, 0, 0;", "takes 8 operands here"},
        {"wgmma.mma_async.sp.sync.aligned.m64n8k16.f32.f16.f16 {%f0,%f1,%f2,%f3}, %rd1, %rd2, %r1, 0, 1, 1, 1, 0, 0;", "sparse f16/bf16 wgmma is m64nNk32"},
        {"wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.e4m3.e4m3 {%f0,%f1,%f2,%f3}, %rd1, %rd2, %r1, 0, 1, 1, 1;", "sparse e4m3/e5m2 wgmma is m64nNk64"},
        {"wgmma.mma_async.sp.sync.aligned.m64n40k64.s32.s8.s8 {%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7,%r8,%r9,%r10,%r11,%r12,%r13,%r14,%r15,%r16,%r17,%r18,%r19}, %rd1, %rd2, %r1, 0, 1;",
         "N is 8, 16, 24 or a multiple of 16"},
        {"wgmma.mma_async.sync.aligned.m64n8k64.f32.e4m3.e4m3 {%f0,%f1,%f2,%f3}, %rd1, %rd2, 1, 1, 1;", "e4m3/e5m2 wgmma is m64nNk32"},
        {"wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.xor.popc {%r0,%r1,%r2,%r3}, %rd1, %rd2, 1;", ".b1 wgmma is .and.popc (no .xor)"},
        {"wgmma.mma_async.sync.aligned.m64n8k256.satfinite.s32.b1.b1.and.popc {%r0,%r1,%r2,%r3}, %rd1, %rd2, 1;", ".satfinite is not for .b1 wgmma"},
        {"wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1 {%r0,%r1,%r2,%r3}, %rd1, %rd2, 1;", ".b1 wgmma is .and.popc"},
        {"wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8.and.popc {%r0,%r1,%r2,%r3}, %rd1, %rd2, 1;", ".and.popc is for .b1 wgmma"},
        {"wgmma.mma_async.sync.aligned.m64n40k256.s32.b1.b1.and.popc {%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7,%r8,%r9,%r10,%r11,%r12,%r13,%r14,%r15,%r16,%r17,%r18,%r19}, %rd1, %rd2, 1;",
         "N is 8, 16, 24 or a multiple of 16"},
        {"wgmma.mma_async.sp.sync.aligned.m64n8k256.s32.b1.b1.and.popc {%r0,%r1,%r2,%r3}, %rd1, %rd2, %r1, 0, 1;", ".b1 wgmma is m64nNk256"},
    };
    TileDevice *d = open_emu(false);
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        char ptx[1024];
        snprintf(ptx, sizeof ptx, PTX_HEAD ".visible .entry k()\n{\n .reg .b32 %%r<20>;\n .reg .b64 %%rd<4>;\n .reg .f32 %%f<4>;\n %s\n ret;\n}\n",
                 bad[i][0]);
        cr_assert(ptxas_refuses(ptx, "sm_90a"), "ptxas takes %s", bad[i][0]);
        TileDevModule *m = NULL;
        cr_assert_eq(dev_module_load_ptx(d, ptx, &m), DEV_ERR_PTX, "accepted: %s", bad[i][0]);
        cr_assert(strstr(dev_last_error(d), "ptx:9:") && strstr(dev_last_error(d), bad[i][1]), "%s: %s", bad[i][0], dev_last_error(d));
    }
    dev_close(d);
}

/* In-flight accumulators.  wait_group 1 retires all but the newest group.  An instruction that reads or
 * writes an accumulator before the wait that retires it (undefined in the PTX ISA) runs as ptxas compiles
 * it: ptxas injects a wait there (info C7517; nvcc -G code and Triton's f16-accumulator dot do this), so
 * the read sees the wgmma's result and the write is not undone by the later wait.  A and B are all 1.0,
 * the accumulators start at 5.0 (scale-d 1): every D element is 5 + 16 = 21. */
static const char *wg_async_ptx = PTX_HEAD
    ".visible .entry k(.param .u64 out, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .reg .f32 %x<4>;\n"
    "  .reg .f32 %y<4>;\n"
    "  .shared .align 1024 .b8 smem[4096];\n"
    "  ld.param.u64 %rd0, [out];\n"
    "  ld.param.u32 %r0, [mode];\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  mov.u32 %r2, smem;\n"
    "  shl.b32 %r4, %r1, 5;\n"
    "  add.u32 %r4, %r4, %r2;\n"
    "  mov.b32 %r5, 0x3C003C00;\n"                 /* two f16 1.0 */
    "  st.shared.v4.b32 [%r4], {%r5, %r5, %r5, %r5};\n"
    "  st.shared.v4.b32 [%r4+16], {%r5, %r5, %r5, %r5};\n"
    "  shr.u32 %r3, %r2, 4;\n"
    "  cvt.u64.u32 %rd1, %r3;\n"
    "  or.b64 %rd2, %rd1, 0x0000000800010000;\n" /* LBO 16 (unused), SBO 128, no swizzle: A at 0 */
    "  add.u64 %rd3, %rd2, 64;\n"                /* B 1024 bytes further */
    "  mov.f32 %x0, 0f40A00000;\n  mov.f32 %x1, 0f40A00000;\n  mov.f32 %x2, 0f40A00000;\n  mov.f32 %x3, 0f40A00000;\n"
    "  mov.f32 %y0, 0f40A00000;\n  mov.f32 %y1, 0f40A00000;\n  mov.f32 %y2, 0f40A00000;\n  mov.f32 %y3, 0f40A00000;\n"
    "  mul.wide.u32 %rd4, %r1, 4;\n"
    "  add.u64 %rd5, %rd0, %rd4;\n"
    "  bar.sync 0;\n"
    "  wgmma.fence.sync.aligned;\n"
    "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%x0, %x1, %x2, %x3}, %rd2, %rd3, 1, 1, 1, 0, 0;\n"
    "  setp.eq.u32 %p3, %r0, 3;\n"
    "  @%p3 bra $OPEN;\n"
    "  setp.eq.u32 %p0, %r0, 4;\n"
    "  @%p0 bra $MIX;\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%y0, %y1, %y2, %y3}, %rd2, %rd3, 1, 1, 1, 0, 0;\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  setp.eq.u32 %p1, %r0, 0;\n"
    "  @%p1 bra $EARLY;\n"
    "  wgmma.wait_group.sync.aligned 1;\n"
    "  setp.eq.u32 %p2, %r0, 1;\n"
    "  @%p2 bra $X;\n"
    "  mov.f32 %y0, 0f3F800000;\n"   /* mode 2: writes an accumulator of the newer group, still in flight */
    "$X:\n"
    "  st.global.f32 [%rd5], %x1;\n"
    "  wgmma.wait_group.sync.aligned 0;\n"
    "  st.global.f32 [%rd5+512], %y1;\n"
    "  st.global.f32 [%rd5+1024], %y0;\n"
    "  ret;\n"
    "$OPEN:\n"                        /* mode 3: reads them before the group is even committed (Triton's fp8 */
    "  add.f32 %x2, %x2, %x3;\n"      /* dot with max_num_imprecise_acc) */
    "  st.global.f32 [%rd5], %x2;\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  wgmma.wait_group.sync.aligned 0;\n"
    "  st.global.f32 [%rd5+512], %y1;\n"
    "  st.global.f32 [%rd5+1024], %y0;\n"
    "  ret;\n"
    "$MIX:\n"                         /* mode 4: a wgmma whose D is x0, x1 of the group in flight and y2, y3 */
    "  wgmma.commit_group.sync.aligned;\n"  /* (not in flight, y2 now 2): C is the pending x, the registers' y */
    "  mov.f32 %y2, 0f40000000;\n"
    "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%x0, %x1, %y2, %y3}, %rd2, %rd3, 1, 1, 1, 0, 0;\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  wgmma.wait_group.sync.aligned 0;\n"
    "  st.global.f32 [%rd5], %x1;\n"
    "  st.global.f32 [%rd5+512], %y2;\n"
    "  st.global.f32 [%rd5+1024], %y0;\n"
    "  ret;\n"
    "$EARLY:\n"
    "  add.f32 %x2, %x2, %x3;\n"      /* mode 0: reads accumulators before any wait */
    "  st.global.f32 [%rd5], %x2;\n"
    "  wgmma.wait_group.sync.aligned 0;\n"
    "  st.global.f32 [%rd5+512], %y1;\n"
    "  st.global.f32 [%rd5+1024], %y0;\n"
    "  ret;\n"
    "}\n";

/* Two CTAs of a cluster whose shared memory (4104 bytes) is not a multiple of 16: rank 1's wgmma reads
 * its first 16 bytes while rank 0 writes its own last 8, which lie in the same 16 bytes of the cluster's
 * shared memory laid end to end.  No conflict (different CTAs' bytes): it was reported as "shared memory
 * written while a wgmma reads it" (Triton's num_ctas=2 persistent matmul, 90136 bytes a CTA). */
static const char *wg_cluster_ptx = PTX_HEAD
    ".visible .entry k(.param .u64 out)\n"
    ".reqnctapercluster 2, 1, 1\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .reg .f32 %x<4>;\n"
    "  .shared .align 1024 .b8 smem[4104];\n"
    "  ld.param.u64 %rd0, [out];\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  mov.u32 %r2, smem;\n"
    "  shl.b32 %r4, %r1, 5;\n"
    "  add.u32 %r4, %r4, %r2;\n"
    "  mov.b32 %r5, 0x3C003C00;\n"
    "  st.shared.v4.b32 [%r4], {%r5, %r5, %r5, %r5};\n"
    "  st.shared.v4.b32 [%r4+16], {%r5, %r5, %r5, %r5};\n"
    "  shr.u32 %r3, %r2, 4;\n"
    "  cvt.u64.u32 %rd1, %r3;\n"
    "  or.b64 %rd2, %rd1, 0x0000000800010000;\n"
    "  add.u64 %rd3, %rd2, 64;\n"
    "  mov.f32 %x0, 0f00000000;\n  mov.f32 %x1, 0f00000000;\n  mov.f32 %x2, 0f00000000;\n  mov.f32 %x3, 0f00000000;\n"
    "  bar.sync 0;\n"
    "  fence.proxy.async.shared::cta;\n"
    "  bar.sync 0;\n"
    "  wgmma.fence.sync.aligned;\n"
    "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%x0, %x1, %x2, %x3}, %rd2, %rd3, 0, 1, 1, 0, 0;\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  barrier.cluster.arrive.aligned;\n"   /* both CTAs' wgmmas are in flight past here */
    "  barrier.cluster.wait.aligned;\n"
    "  setp.eq.u32 %p1, %r1, 0;\n"
    "  @%p1 st.shared.u32 [smem+4096], %r5;\n" /* the CTA's own last 8 bytes, which no wgmma reads */
    "  @%p1 st.shared.u32 [smem+4100], %r5;\n"
    "  wgmma.wait_group.sync.aligned 0;\n"
    "  mov.u32 %r6, %ctaid.x;\n"
    "  mad.lo.u32 %r7, %r6, 128, %r1;\n"
    "  mul.wide.u32 %rd4, %r7, 4;\n"
    "  add.u64 %rd5, %rd0, %rd4;\n"
    "  st.global.f32 [%rd5], %x1;\n"
    "  ret;\n"
    "}\n";

Test(wgmma, cluster_shared_not_a_multiple_of_16) {
    for (int race = 0; race < 2; race++) {
        TileDevice *d = open_emu(race);
        TileDevModule *m;
        TileDevFunction *f = load(d, wg_cluster_ptx, "k", &m);
        uint64_t out = poisoned(d, 2 * 128 * 4);
        void *args[] = {&out};
        cr_assert_eq(dev_launch(f, 2, 1, 1, 128, 1, 1, 0, NULL, args), DEV_OK, "racecheck %d: %s", race, dev_last_error(d));
        float h[256];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        for (unsigned i = 0; i < 256; i++) cr_assert_eq(h[i], 16.0f, "racecheck %d, thread %u: %g", race, i, h[i]);
        dev_module_unload(m);
        dev_close(d);
    }
}

/* A descriptor whose 16-byte chunk straddles the end of shared memory (4104 bytes, not a multiple of 16):
 * B's chunk (n 0, k 8..15) starts at byte 4096, its elements k 8..11 are inside and k 12 is not.  The
 * memcheck error names that element and its address (the operands are read a chunk at a time). */
static const char *wg_oob_ptx = PTX_HEAD
    ".visible .entry k(.param .u64 out)\n"
    "{\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  .reg .f32 %x<4>;\n"
    "  .shared .align 1024 .b8 smem[4104];\n"
    "  mov.u32 %r2, smem;\n"
    "  shr.u32 %r3, %r2, 4;\n"
    "  cvt.u64.u32 %rd1, %r3;\n"
    "  or.b64 %rd2, %rd1, 0x0000001000080000;\n" /* A: start smem, LBO 128, SBO 256 */
    "  add.u64 %rd3, %rd2, 248;\n"                 /* B: start smem + 3968 */
    "  mov.f32 %x0, 0f00000000;\n  mov.f32 %x1, 0f00000000;\n  mov.f32 %x2, 0f00000000;\n  mov.f32 %x3, 0f00000000;\n"
    "  wgmma.fence.sync.aligned;\n"
    "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%x0, %x1, %x2, %x3}, %rd2, %rd3, 0, 1, 1, 0, 0;\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  wgmma.wait_group.sync.aligned 0;\n"
    "  ret;\n"
    "}\n";

Test(wgmma, operand_past_shared_memory_names_the_element) {
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, wg_oob_ptx, "k", &m);
    uint64_t out = 0;
    void *args[] = {&out};
    cr_assert_neq(dev_launch(f, 1, 1, 1, 128, 1, 1, 0, NULL, args), DEV_OK);
    const char *e = dev_last_error(d);
    cr_assert(strstr(e, "invalid __shared__ read by wgmma") && strstr(e, "element (0, 12) of B at shared address 0x1008"), "%s", e);
    dev_module_unload(m);
    dev_close(d);
}

/* The PTX line (1-based) of the first `what` after `after` in ptx. */
static unsigned line_of(const char *ptx, const char *after, const char *what) {
    const char *p = strstr(strstr(ptx, after), what);
    unsigned line = 1;
    for (const char *q = ptx; q < p; q++) line += *q == '\n';
    return line;
}

/* The standard error written while f runs in `mode`, stderr redirected to a file (NUL-terminated, malloc'd). */
static char *stderr_of_grid(TileDevice *d, TileDevFunction *f, uint64_t out, unsigned mode, unsigned blocks) {
    fflush(stderr);
    FILE *tmp = tmpfile();
    cr_assert(tmp);
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    void *args[] = {&out, &mode};
    DevStatus st = dev_launch(f, blocks, 1, 1, 128, 1, 1, 0, NULL, args);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    cr_assert_eq(st, DEV_OK, "mode %u: %s", mode, dev_last_error(d));
    long n = ftell(tmp);
    char *text = calloc(1, (size_t)n + 1);
    rewind(tmp);
    cr_assert_eq(fread(text, 1, (size_t)n, tmp), (size_t)n);
    fclose(tmp);
    return text;
}

static char *stderr_of(TileDevice *d, TileDevFunction *f, uint64_t out, unsigned mode) {
    return stderr_of_grid(d, f, out, mode, 1);
}

/* Such an access runs, and is noted on standard error once a module, with its line: ptxas serializes the
 * wgmmas there, which the PTX's author may not know. */
Test(wgmma, early_accumulator_use_is_noted_once) {
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, wg_async_ptx, "k", &m);
    uint64_t out = poisoned(d, 3 * 128 * 4);
    char *e = stderr_of(d, f, out, 1);
    cr_expect_str_empty(e, "mode 1 waits before every use, yet: %s", e);
    free(e);
    e = stderr_of(d, f, out, 0);
    char want[64];
    snprintf(want, sizeof want, "PTX line %u: uses an accumulator", line_of(wg_async_ptx, "$EARLY:", "add.f32"));
    cr_expect(strstr(e, "emu: note: kernel 'k'") && strstr(e, want) && strstr(e, "C7517"), "mode 0: want \"%s\" in: %s", want, e);
    free(e);
    for (unsigned mode = 0; mode < 4; mode++) {
        e = stderr_of(d, f, out, mode);
        cr_expect_str_empty(e, "mode %u, noted already: %s", mode, e);
        free(e);
    }
    dev_module_unload(m);
    f = load(d, wg_async_ptx, "k", &m); /* a module of its own: noted again, at its own first such access */
    e = stderr_of(d, f, out, 2);
    snprintf(want, sizeof want, "PTX line %u: uses an accumulator", line_of(wg_async_ptx, "@%p2 bra $X;", "mov.f32 %y0"));
    cr_expect(strstr(e, want), "mode 2: want \"%s\" in: %s", want, e);
    free(e);
    dev_module_unload(m);
    dev_close(d);
}

/* The in-flight check in every block a worker runs, and at the edges of the registers in flight: block
 * `mode & 255` reads x0..x3 before the wait (the others after it), through instructions whose other registers
 * lie below x0 (w) or above x3 (z), declared so, the one or (mode >> 8) the other first (the first read ends
 * the group, so the second finds nothing in flight).  Accumulators start at the block's index c, A and B are 1.0:
 * w0 = 1 + x0 = c + 17 and z0 = x3 + 0 = c + 16 in every block (c + 1 and c had the read missed the result). */
static const char *wg_blocks_ptx = PTX_HEAD
    ".visible .entry kb(.param .u64 out, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<10>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .reg .f32 %w<2>;\n"
    "  .reg .f32 %x<4>;\n"
    "  .reg .f32 %z<2>;\n"
    "  .shared .align 1024 .b8 smem[4096];\n"
    "  ld.param.u64 %rd0, [out];\n"
    "  ld.param.u32 %r8, [mode];\n"
    "  and.b32 %r0, %r8, 255;\n"
    "  shr.u32 %r9, %r8, 8;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  mov.u32 %r6, %ctaid.x;\n"
    "  mov.u32 %r2, smem;\n"
    "  shl.b32 %r4, %r1, 5;\n"
    "  add.u32 %r4, %r4, %r2;\n"
    "  mov.b32 %r5, 0x3C003C00;\n"                 /* two f16 1.0 */
    "  st.shared.v4.b32 [%r4], {%r5, %r5, %r5, %r5};\n"
    "  st.shared.v4.b32 [%r4+16], {%r5, %r5, %r5, %r5};\n"
    "  shr.u32 %r3, %r2, 4;\n"
    "  cvt.u64.u32 %rd1, %r3;\n"
    "  or.b64 %rd2, %rd1, 0x0000000800010000;\n" /* LBO 16 (unused), SBO 128, no swizzle: A at 0 */
    "  add.u64 %rd3, %rd2, 64;\n"                /* B 1024 bytes further */
    "  cvt.rn.f32.u32 %x0, %r6;\n"
    "  mov.f32 %x1, %x0;\n  mov.f32 %x2, %x0;\n  mov.f32 %x3, %x0;\n"
    "  mov.f32 %w1, 0f3F800000;\n"
    "  mov.f32 %z1, 0f00000000;\n"
    "  mad.lo.u32 %r7, %r6, 128, %r1;\n"
    "  mul.wide.u32 %rd4, %r7, 8;\n"
    "  add.u64 %rd5, %rd0, %rd4;\n"
    "  bar.sync 0;\n"
    "  wgmma.fence.sync.aligned;\n"
    "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%x0, %x1, %x2, %x3}, %rd2, %rd3, 1, 1, 1, 0, 0;\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  setp.eq.u32 %p0, %r6, %r0;\n"
    "  @%p0 bra $EARLY;\n"
    "  wgmma.wait_group.sync.aligned 0;\n"
    "$EARLY:\n"
    "  setp.ne.u32 %p1, %r9, 0;\n"
    "  @%p1 bra $HI;\n"
    "  add.f32 %w0, %w1, %x0;\n"     /* x0 the highest register it names */
    "  add.f32 %z0, %x3, %z1;\n"
    "  bra $DONE;\n"
    "$HI:\n"
    "  add.f32 %z0, %x3, %z1;\n"     /* x3 the lowest */
    "  add.f32 %w0, %w1, %x0;\n"
    "$DONE:\n"
    "  wgmma.wait_group.sync.aligned 0;\n"
    "  st.global.v2.f32 [%rd5], {%w0, %z0};\n"
    "  ret;\n"
    "}\n";

Test(wgmma, in_flight_reads_in_every_block_of_a_worker) {
    TileDevice *d = NULL;
    char *err = NULL;
    DevOptions o = {.emu_host_threads = 1, .emu_timeout_seconds = 60}; /* one worker runs the blocks in turn */
    cr_assert_eq(dev_open("emu:sm_90a", &o, &d, &err), DEV_OK, "dev_open: %s", err ? err : "");
    enum { BLOCKS = 4 };
    for (unsigned mode = 0; mode < 2 * 256; mode += mode % 256 == BLOCKS ? 256 - BLOCKS : 1) {
        unsigned early = mode % 256; /* BLOCKS: every block waits first */
        uint64_t out = poisoned(d, BLOCKS * 128 * 8);
        TileDevModule *m;
        TileDevFunction *f = load(d, wg_blocks_ptx, "kb", &m); /* a module each: the note is once a module */
        char *e = stderr_of_grid(d, f, out, mode, BLOCKS);
        if (early < BLOCKS) {
            char want[64];
            snprintf(want, sizeof want, "PTX line %u: uses an accumulator", line_of(wg_blocks_ptx, mode >> 8 ? "$HI:" : "$EARLY:", "add.f32"));
            cr_expect(strstr(e, want), "mode %#x: want \"%s\" in: %s", mode, want, e);
        } else {
            cr_expect_str_empty(e, "no block reads early, yet: %s", e);
        }
        free(e);
        float h[BLOCKS * 128 * 2];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        for (unsigned c = 0; c < BLOCKS; c++)
            for (unsigned i = 0; i < 128; i++) {
                cr_assert_eq(h[2 * (c * 128 + i)], (float)c + 17, "mode %#x block %u thread %u: w0 %g", mode, c, i, h[2 * (c * 128 + i)]);
                cr_assert_eq(h[2 * (c * 128 + i) + 1], (float)c + 16, "mode %#x block %u thread %u: z0 %g", mode, c, i,
                             h[2 * (c * 128 + i) + 1]);
            }
        dev_module_unload(m);
    }
    dev_close(d);
}

Test(wgmma, async_accumulator_checks) {
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, wg_async_ptx, "k", &m);
    uint64_t out = poisoned(d, 3 * 128 * 4);
    static const struct { unsigned mode; float first, y1, y0; } want[] = {
        {1, 21, 21, 21}, /* wait_group 1 retired the first group, wait_group 0 the second */
        {0, 42, 21, 21}, /* x2 + x3 read before any wait: the results, as after ptxas's injected wait */
        {2, 21, 21, 1},  /* y0 written in flight: the write stands, the wait does not undo it */
        {3, 42, 5, 5},   /* read in the open group: the result too (the second wgmma never runs) */
        {4, 37, 18, 5},  /* D partly in flight: 21 + 16 from the pending x1, 2 + 16 from the register y2 */
    };
    for (unsigned c = 0; c < ARRAY_LEN(want); c++) {
        unsigned mode = want[c].mode;
        void *args[] = {&out, &mode};
        cr_assert_eq(dev_launch(f, 1, 1, 1, 128, 1, 1, 0, NULL, args), DEV_OK, "mode %u: %s", mode, dev_last_error(d));
        float h[3 * 128];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        for (unsigned i = 0; i < 128; i++) {
            cr_assert_eq(h[i], want[c].first, "mode %u thread %u: %g", mode, i, h[i]);
            cr_assert_eq(h[128 + i], want[c].y1, "mode %u thread %u: y1 %g", mode, i, h[128 + i]);
            cr_assert_eq(h[256 + i], want[c].y0, "mode %u thread %u: y0 %g", mode, i, h[256 + i]);
        }
    }
    unsigned mode = 1;
    void *args[] = {&out, &mode};
    mode = 1;
    expect_launch_error(d, f, 64, args, "warpgroup", "the block has 64 threads", NULL);
    dev_module_unload(m);
    /* parse-time form checks */
    expect_load_error(d, PTX_HEAD ".visible .entry k()\n{\n  .reg .f32 %f<4>;\n  .reg .b64 %rd<2>;\n"
                         "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1}, %rd0, %rd1, 1, 1, 1, 0, 0;\n  ret;\n}\n",
                      "needs 4 D registers");
    expect_load_error(d, PTX_HEAD ".visible .entry k()\n{\n  .reg .f32 %f<4>;\n  .reg .b64 %rd<2>;\n"
                         "  wgmma.mma_async.sync.aligned.m64n12k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd0, %rd1, 1, 1, 1, 0, 0;\n  ret;\n}\n",
                      "unsupported wgmma shape");
    dev_close(d);
}

/* wgmma groups in flight at a call or a ret (probeP F1).  Results are register slots of the frame that
 * issued the wgmma; ptxas serializes wgmma at function boundaries (info C7510: it injects a warpgroup.wait
 * in the callee), so the groups end at the boundary, into the frame that issued them.  The callee declares
 * its registers like the caller so that the slot numbers of one frame are live registers of the other: the
 * callee's results, retired later by the caller's wait, overwrote the caller's %tid.x in %r0.
 *   mode 0: mm issues and commits, rets without reading; the caller waits: its registers are untouched.
 *   mode 1: mm reads %d0 after the commit and returns it: the result (16), as for any read in flight.
 *   mode 2: mm issues and reads %d0 before any commit (nvcc -G's shape); the caller commits and waits.
 *   mode 3: the caller's group is in flight across a call to w0, which waits: w0's own %f0 (5) stays,
 *           the caller's %f0 gets the result. */
static const char *wg_call_ptx = PTX_HEAD
    ".func (.param .b32 rv) mm(.param .b64 dbp, .param .b32 mp)\n"
    "{\n"
    "  .reg .f32 %d<4>;\n"
    "  .reg .b32 %a<2>;\n"
    "  .reg .b64 %db;\n"
    "  .reg .pred %p<2>;\n"
    "  ld.param.b64 %db, [dbp];\n"
    "  ld.param.b32 %a1, [mp];\n"
    "  mov.b32 %a0, 0x3C003C00;\n"
    "  setp.eq.u32 %p0, %a1, 2;\n"
    "  setp.eq.u32 %p1, %a1, 1;\n"
    "  wgmma.fence.sync.aligned;\n"
    "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%d0, %d1, %d2, %d3}, {%a0, %a0, %a0, %a0}, %db, 0, 1, 1, 0;\n"
    "  @%p0 bra $READ;\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  @%p1 bra $READ;\n"
    "  mov.b32 %a1, 0;\n"
    "  st.param.b32 [rv], %a1;\n"
    "  ret;\n"
    "$READ:\n"
    "  st.param.f32 [rv], %d0;\n"
    "  ret;\n"
    "}\n"
    ".func (.param .b32 rv) w0()\n"
    "{\n"
    "  .reg .b32 %r<20>;\n"
    "  .reg .b64 %rd<10>;\n"
    "  .reg .b64 %db;\n"
    "  .reg .pred %p<3>;\n"
    "  .reg .f32 %f<4>;\n"
    "  mov.f32 %f0, 0f40A00000;\n"
    "  wgmma.wait_group.sync.aligned 0;\n"
    "  st.param.f32 [rv], %f0;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry k(.param .u64 out, .param .u32 mode)\n"
    "{\n"
    "  .reg .b32 %r<20>;\n"
    "  .reg .b64 %rd<10>;\n"
    "  .reg .b64 %db;\n"
    "  .reg .pred %p<3>;\n"
    "  .reg .f32 %f<4>;\n"
    "  .shared .align 1024 .b8 buf[1024];\n"
    "  mov.u32 %r0, %tid.x;\n"
    "  ld.param.u32 %r9, [mode];\n"
    "  mov.u32 %r1, buf;\n"
    "  shl.b32 %r2, %r0, 2;\n"
    "  add.u32 %r3, %r1, %r2;\n"
    "  mov.b32 %r5, 0x3C003C00;\n"
    "  setp.lt.u32 %p1, %r0, 64;\n"
    "  @%p1 st.shared.b32 [%r3], %r5;\n"          /* B: 16 x 8 ones */
    "  fence.proxy.async.shared::cta;\n"
    "  bar.sync 0;\n"
    "  shr.u32 %r4, %r1, 4;\n"
    "  cvt.u64.u32 %db, %r4;\n"
    "  or.b64 %db, %db, 0x0000001000080000;\n"
    "  mov.u32 %r10, 77;\n  mov.u32 %r11, 88;\n  mov.u32 %r12, 99;\n  mov.u32 %r13, 111;\n"
    "  mov.u32 %r14, 0;\n  mov.u32 %r15, 0;\n"
    "  ld.param.u64 %rd0, [out];\n"
    "  mul.wide.u32 %rd1, %r0, 32;\n"
    "  add.u64 %rd1, %rd1, %rd0;\n"
    "  setp.eq.u32 %p2, %r9, 3;\n"
    "  @%p2 bra $CALLER;\n"
    "  {\n"
    "  .param .b64 pa;\n  .param .b32 pm;\n  .param .b32 rv;\n"
    "  st.param.b64 [pa], %db;\n"
    "  st.param.b32 [pm], %r9;\n"
    "  call.uni (rv), mm, (pa, pm);\n"
    "  ld.param.b32 %r14, [rv];\n"
    "  }\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  wgmma.wait_group.sync.aligned 0;\n"
    "  bra $OUT;\n"
    "$CALLER:\n"
    "  wgmma.fence.sync.aligned;\n"
    "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, {%r5, %r5, %r5, %r5}, %db, 0, 1, 1, 0;\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  {\n"
    "  .param .b32 rv;\n"
    "  call.uni (rv), w0, ();\n"
    "  ld.param.b32 %r14, [rv];\n"
    "  }\n"
    "  mov.b32 %r15, %f0;\n"
    "$OUT:\n"
    "  st.global.v4.u32 [%rd1], {%r0, %r10, %r11, %r12};\n"
    "  st.global.v4.u32 [%rd1+16], {%r13, %r14, %r15, %r9};\n"
    "  ret;\n"
    "}\n";

Test(wgmma, groups_end_at_call_and_ret) {
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, wg_call_ptx, "k", &m);
    uint64_t out = poisoned(d, 128 * 32);
    static const uint32_t want[][2] = {{0, 0}, {0x41800000, 0}, {0x41800000, 0}, {0x40A00000, 0x41800000}}; /* r14, r15 */
    for (unsigned mode = 0; mode < ARRAY_LEN(want); mode++) {
        void *args[] = {&out, &mode};
        cr_assert_eq(dev_launch(f, 1, 1, 1, 128, 1, 1, 0, NULL, args), DEV_OK, "mode %u: %s", mode, dev_last_error(d));
        uint32_t h[128 * 8];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        for (unsigned i = 0; i < 128; i++) {
            const uint32_t *r = &h[i * 8], w[8] = {i, 77, 88, 99, 111, want[mode][0], want[mode][1], mode};
            for (unsigned k = 0; k < 8; k++)
                cr_assert_eq(r[k], w[k], "mode %u thread %u word %u: 0x%x, want 0x%x", mode, i, k, r[k], w[k]);
        }
    }
    dev_module_unload(m);
    dev_close(d);
}

/* Shared memory a wgmma reads, until the wait that retires its group: writing it is an error naming the
 * address and the wgmma (a store of the issuing warpgroup, a cp.async, a store of another warpgroup released
 * by a barrier before the wait); writes elsewhere or after the wait are not. */
static const char *wg_smem_ptx = PTX_HEAD
    ".visible .entry w(.param .u64 src, .param .u64 out, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<8>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .reg .f32 %x<4>;\n"
    "  .shared .align 1024 .b8 smem[4096];\n"
    "  ld.param.u64 %rd0, [src];\n"
    "  ld.param.u64 %rd6, [out];\n"
    "  ld.param.u32 %r0, [mode];\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  mov.u32 %r2, smem;\n"
    "  shr.u32 %r3, %r2, 4;\n"
    "  cvt.u64.u32 %rd1, %r3;\n"
    "  or.b64 %rd2, %rd1, 0x0000000800010000;\n" /* A: 64 rows of 16 bytes at [0, 1024) (SBO 128) */
    "  add.u64 %rd3, %rd2, 64;\n"                /* B: 8 rows at [1024, 1152) */
    "  mov.f32 %x0, 0f00000000;\n  mov.f32 %x1, 0f00000000;\n  mov.f32 %x2, 0f00000000;\n  mov.f32 %x3, 0f00000000;\n"
    "  setp.ge.u32 %p0, %r1, 128;\n"
    "  @%p0 bra $OTHER;\n"
    "  wgmma.fence.sync.aligned;\n"
    "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%x0, %x1, %x2, %x3}, %rd2, %rd3, 0, 1, 1, 0, 0;\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  setp.eq.u32 %p1, %r0, 1;\n"
    "  @%p1 st.shared.u32 [%r2+1028], %r1;\n"   /* mode 1: into B, in flight */
    "  setp.eq.u32 %p2, %r0, 2;\n"
    "  @%p2 st.shared.u32 [%r2+2048], %r1;\n"   /* mode 2: past both: fine */
    "  setp.eq.u32 %p3, %r0, 3;\n"
    "  @%p3 cp.async.ca.shared.global [%r2+1040], [%rd0], 16;\n" /* mode 3: a copy into B, in flight */
    "  setp.eq.u32 %p4, %r0, 4;\n"
    "  @%p4 bar.arrive 1, 256;\n"               /* mode 4: lets the other warpgroup write A */
    "  wgmma.wait_group.sync.aligned 0;\n"
    "  setp.eq.u32 %p5, %r0, 5;\n"
    "  @%p5 st.shared.u32 [%r2+1028], %r1;\n"   /* mode 5: into B after the wait: fine */
    "  mul.wide.u32 %rd4, %r1, 4;\n"
    "  add.u64 %rd5, %rd6, %rd4;\n"
    "  st.global.f32 [%rd5], %x1;\n"
    "  ret;\n"
    "$OTHER:\n"
    "  bar.sync 1, 256;\n"
    "  st.shared.u32 [%r2+16], %r1;\n"
    "  ret;\n"
    "}\n";

Test(wgmma, shared_operands_in_flight) {
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, wg_smem_ptx, "w", &m);
    uint64_t src = poisoned(d, 64), out = poisoned(d, 128 * 4);
    unsigned mode = 2;
    void *args[] = {&src, &out, &mode};
    for (mode = 2; mode <= 5; mode += 3) {
        cr_assert_eq(dev_launch(f, 1, 1, 1, 128, 1, 1, 0, NULL, args), DEV_OK, "mode %u: %s", mode, dev_last_error(d));
        float h[128];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        for (unsigned i = 0; i < 128; i++) cr_assert_eq(h[i], 0.0f, "mode %u, thread %u", mode, i);
    }
    mode = 1;
    expect_launch_error(d, f, 128, args, "shared memory written while a wgmma reads it", "st.shared.u32", "shared address 0x404",
                        "wgmma.mma_async at PTX line 27", "no wgmma.wait_group has retired yet", NULL);
    mode = 3;
    expect_launch_error(d, f, 128, args, "shared memory written while a wgmma reads it", "cp.async.ca", "shared address 0x410", NULL);
    mode = 4;
    expect_launch_error(d, f, 256, args, "shared memory written while a wgmma reads it", "thread (128,0,0)", "shared address 0x10",
                        "issued by the warpgroup of thread (0,0,0)", NULL);
    dev_module_unload(m);
    dev_close(d);
}

/* A from registers: its registers must keep their values until the wait that retires the wgmma; one
 * written before is reported at that wait, naming the register and the wgmma; after it, it is free. */
static const char *wg_areg_ptx = PTX_HEAD
    ".visible .entry a(.param .u64 out, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .b32 %a<4>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .reg .f32 %x<4>;\n"
    "  .shared .align 1024 .b8 smem[2048];\n"
    "  ld.param.u64 %rd0, [out];\n"
    "  ld.param.u32 %r0, [mode];\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  mov.u32 %r2, smem;\n"
    "  shr.u32 %r3, %r2, 4;\n"
    "  cvt.u64.u32 %rd1, %r3;\n"
    "  or.b64 %rd2, %rd1, 0x0000000800010000;\n" /* B: 8 rows at smem, zero */
    "  mov.b32 %a0, 0x3C003C00;\n  mov.b32 %a1, 0x3C003C00;\n  mov.b32 %a2, 0x3C003C00;\n  mov.b32 %a3, 0x3C003C00;\n"
    "  mov.f32 %x0, 0f00000000;\n  mov.f32 %x1, 0f00000000;\n  mov.f32 %x2, 0f00000000;\n  mov.f32 %x3, 0f00000000;\n"
    "  wgmma.fence.sync.aligned;\n"
    "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%x0, %x1, %x2, %x3}, {%a0, %a1, %a2, %a3}, %rd2, 0, 1, 1, 0;\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  setp.eq.u32 %p1, %r0, 1;\n"
    "  @%p1 mov.b32 %a2, 0;\n"                    /* mode 1: A changed in flight */
    "  setp.eq.u32 %p2, %r0, 2;\n"
    "  @%p2 mov.b32 %a2, 0x3C003C00;\n"           /* mode 2: written with the value it has: unchanged */
    "  wgmma.wait_group.sync.aligned 0;\n"
    "  mov.b32 %a2, 0;\n"                         /* after the wait: free */
    "  mul.wide.u32 %rd4, %r1, 4;\n"
    "  add.u64 %rd5, %rd0, %rd4;\n"
    "  st.global.f32 [%rd5], %x1;\n"
    "  ret;\n"
    "}\n";

Test(wgmma, a_registers_in_flight) {
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, wg_areg_ptx, "a", &m);
    uint64_t out = poisoned(d, 128 * 4);
    unsigned mode = 0;
    void *args[] = {&out, &mode};
    for (mode = 0; mode <= 2; mode += 2) {
        cr_assert_eq(dev_launch(f, 1, 1, 1, 128, 1, 1, 0, NULL, args), DEV_OK, "mode %u: %s", mode, dev_last_error(d));
        float h[128];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        for (unsigned i = 0; i < 128; i++) cr_assert_eq(h[i], 0.0f, "mode %u, thread %u", mode, i); /* B is zero */
    }
    mode = 1;
    /* the write is named too: the one at line 31, not the one after it whose predicate is off */
    expect_launch_error(d, f, 128, args, "wgmma A operand modified while in flight", "register %a2", "wgmma.wait_group",
                        "wgmma.mma_async at PTX line 28", "written at PTX line 31 (@%p1 mov.b32 %a2, 0;)", NULL);
    dev_module_unload(m);
    dev_close(d);
}

/* ISA, wgmma.mma_async: "The input predicate operand scale-d specifies ... D = A*B+D if scale-d is true, D = A*B
 * otherwise"; a predicate source may be negated (`!%p`, ptxas takes it).  C = 1, A = B = 1, K = 16: 17 with
 * scale-d true, 16 with false.  Before: `!%p2` was read as `%p2` (16 where 17 was due and the other way round;
 * probeP F5). */
static const char *wg_negated_scale_ptx = PTX_HEAD
    ".visible .entry sd(.param .u64 out, .param .u32 mode)\n"
    "{\n"
    "  .reg .pred %p<3>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .b32 %a<2>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .reg .f32 %x<4>;\n"
    "  .reg .f32 %y<4>;\n"
    "  .shared .align 1024 .b8 smem[1024];\n"
    "  ld.param.u64 %rd0, [out];\n"
    "  ld.param.u32 %r0, [mode];\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  mov.u32 %r2, smem;\n"
    "  shl.b32 %r3, %r1, 2;\n"
    "  add.u32 %r4, %r2, %r3;\n"
    "  setp.lt.u32 %p1, %r1, 64;\n"
    "  @%p1 st.shared.b32 [%r4], 0x3C003C00;\n"
    "  fence.proxy.async.shared::cta;\n"
    "  bar.sync 0;\n"
    "  shr.u32 %r5, %r2, 4;\n"
    "  cvt.u64.u32 %rd1, %r5;\n"
    "  or.b64 %rd2, %rd1, 0x0000001000080000;\n"
    "  mov.b32 %a0, 0x3C003C00;\n"
    "  mov.f32 %x0, 0f3F800000;  mov.f32 %x1, 0f3F800000;  mov.f32 %x2, 0f3F800000;  mov.f32 %x3, 0f3F800000;\n"
    "  mov.f32 %y0, 0f3F800000;  mov.f32 %y1, 0f3F800000;  mov.f32 %y2, 0f3F800000;  mov.f32 %y3, 0f3F800000;\n"
    "  setp.eq.u32 %p2, %r0, 1;\n"
    "  wgmma.fence.sync.aligned;\n"
    "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%x0, %x1, %x2, %x3}, {%a0, %a0, %a0, %a0}, %rd2, !%p2, 1, 1, 0;\n"
    "  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%y0, %y1, %y2, %y3}, {%a0, %a0, %a0, %a0}, %rd2, %p2, 1, 1, 0;\n"
    "  wgmma.commit_group.sync.aligned;\n"
    "  wgmma.wait_group.sync.aligned 0;\n"
    "  mul.wide.u32 %rd4, %r1, 32;\n"
    "  add.u64 %rd5, %rd0, %rd4;\n"
    "  st.global.v4.f32 [%rd5], {%x0, %x1, %x2, %x3};\n"
    "  st.global.v4.f32 [%rd5+16], {%y0, %y1, %y2, %y3};\n"
    "  ret;\n"
    "}\n";

Test(wgmma, negated_scale_d) {
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, wg_negated_scale_ptx, "sd", &m);
    uint64_t out = poisoned(d, 128 * 32);
    unsigned mode = 0;
    void *args[] = {&out, &mode};
    for (mode = 0; mode <= 1; mode++) {
        cr_assert_eq(dev_launch(f, 1, 1, 1, 128, 1, 1, 0, NULL, args), DEV_OK, "mode %u: %s", mode, dev_last_error(d));
        float h[128 * 8];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        float neg = mode ? 16.0f : 17.0f, pos = mode ? 17.0f : 16.0f; /* %p2 is mode == 1 */
        for (unsigned i = 0; i < 128 * 8; i++)
            cr_assert_eq(h[i], i % 8 < 4 ? neg : pos, "mode %u, thread %u, element %u (%s): %g", mode, i / 8, i % 8,
                         i % 8 < 4 ? "!%p2" : "%p2", h[i]);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* Vector atomics (sm_90; nvcc writes them for atomicAdd on float2 / float4): each element is its own atomic
 * add, the old values come back per element; 64 threads add (1, 2, 3, 4) + lane-dependent parts to one
 * vector, so the sums check every element; f16x2 and bf16 vectors too; a vector not aligned to its size
 * is a memcheck error. */
static const char *vec_atom_ptx = PTX_HEAD
    ".visible .entry va(.param .u64 buf, .param .u64 old, .param .u32 misalign)\n"
    "{\n"
    "  .reg .b32 %r<16>;\n"
    "  .reg .f32 %f<16>;\n"
    "  .reg .b16 %h<8>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  ld.param.u64 %rd0, [buf];\n"
    "  ld.param.u64 %rd1, [old];\n"
    "  ld.param.u32 %r0, [misalign];\n"
    "  cvt.u64.u32 %rd2, %r0;\n"
    "  add.u64 %rd0, %rd0, %rd2;\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  cvt.rn.f32.u32 %f0, %r1;\n"
    "  mov.f32 %f1, 0f40000000;\n"
    "  atom.global.add.v2.f32 {%f2, %f3}, [%rd0], {%f0, %f1};\n"       /* buf[0..1] += (tid, 2) */
    "  mov.f32 %f4, 0f3F800000;\n  mov.f32 %f5, 0f40400000;\n  mov.f32 %f6, 0f40800000;\n"
    "  red.global.add.v4.f32 [%rd0+16], {%f4, %f1, %f5, %f6};\n"      /* buf[4..7] += (1, 2, 3, 4) */
    "  mov.b32 %r2, 0x3C003C00;\n"
    "  atom.global.add.noftz.v2.f16x2 {%r3, %r4}, [%rd0+32], {%r2, %r2};\n" /* four f16 += 1 */
    "  mov.b16 %h0, 0x3F80;\n"
    "  red.global.add.noftz.v8.bf16 [%rd0+48], {%h0, %h0, %h0, %h0, %h0, %h0, %h0, %h0};\n" /* eight bf16 += 1 */
    "  mul.wide.u32 %rd3, %r1, 8;\n"
    "  add.u64 %rd4, %rd1, %rd3;\n"
    "  st.global.v2.f32 [%rd4], {%f2, %f3};\n"
    "  ret;\n"
    "}\n";

Test(atom, vector_atomics) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, vec_atom_ptx, "va", &m);
    uint64_t buf, old = poisoned(d, 64 * 8);
    cr_assert_eq(dev_malloc(d, 128, &buf), DEV_OK);
    cr_assert_eq(dev_memset_d8(d, buf, 0, 128), DEV_OK);
    unsigned mis = 0;
    void *args[] = {&buf, &old, &mis};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
    float h[16];
    dev_memcpy_dtoh(d, h, buf, sizeof h);
    cr_assert(h[0] == 2016 && h[1] == 128, "v2: %g %g, want 2016 128", h[0], h[1]); /* sum of 0..63, 64 x 2 */
    cr_assert(h[4] == 64 && h[5] == 128 && h[6] == 192 && h[7] == 256, "v4: %g %g %g %g", h[4], h[5], h[6], h[7]);
    uint16_t hh[16];
    dev_memcpy_dtoh(d, hh, buf + 32, sizeof hh);
    for (int i = 0; i < 4; i++) cr_assert_eq(hh[i], 0x5400, "f16x2 element %d: 0x%04x, want 64 (0x5400)", i, hh[i]);
    for (int i = 8; i < 16; i++) cr_assert_eq(hh[i], 0x4280, "bf16 element %d: 0x%04x, want 64 (0x4280)", i - 8, hh[i]);
    /* the old values: every thread saw a distinct prefix of the adds, so the second elements are distinct multiples of 2 */
    float o[64][2];
    dev_memcpy_dtoh(d, o, old, sizeof o);
    bool seen[64] = {false};
    for (int t = 0; t < 64; t++) {
        int k = (int)o[t][1] / 2;
        cr_assert(o[t][1] == 2.0f * k && k >= 0 && k < 64 && !seen[k], "thread %d: old second element %g", t, o[t][1]);
        seen[k] = true;
    }
    mis = 8;
    cr_assert_eq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, args), DEV_ERR_MEMCHECK);
    cr_assert(strstr(dev_last_error(d), "misaligned") && strstr(dev_last_error(d), "not aligned to 16 bytes"), "%s", dev_last_error(d));
    dev_module_unload(m);
    dev_close(d);
}


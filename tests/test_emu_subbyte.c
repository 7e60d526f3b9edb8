/* test_emu_subbyte.c - the sub-byte and single-bit tensor-core forms in the PTX emulator: wmma on m8n8k32
 * (s4, u4) and m8n8k128 (b1, .xor.popc and .and.popc), mma.sync on .b1 (m8n8k128, m16n8k128, m16n8k256,
 * .xor.popc and .and.popc).  Every input is random bits, so a wrong element order, layout or bit operation
 * shows in the results.
 *   1. nvcc's PTX for CUDA code (tests/emu/subbyte.cu -> subbyte.ptx, checked in: no nvcc needed):
 *      nvcuda::wmma::experimental (precision::s4/u4/b1, bmma_sync with bmmaBitOpXOR/AND) with padded
 *      strides, both accumulator layouts, shared memory, and inline-asm mma.sync .b1.  The host reads
 *      the matrices out of the buffers as CUDA stores them (a sub-byte element at bit (index x bits) mod
 *      8 of its byte, the lowest first) and mma.sync's fragments by the PTX ISA's tables, written out here
 *      per shape.
 *   2. Hand-written PTX: wmma with default strides and generic addresses, D in C's registers.
 *   3. Forms the ISA refuses fail at load time (ptxas refuses them too, where installed); a sub-byte
 *      stride that is not whole 16 bytes faults at run time.
 *   4. wmma's rules for every type: a matrix aligned to its fragment's size (u8: 8 bytes), the address and
 *      stride every lane gives agreeing, whole 16-byte strides, the forms and register counts refused. */
#include "test_emu_util.h"
#include "test_ptxas.h"

#define PTX_HEAD ".version 7.8\n.target sm_80\n.address_size 64\n"

/* Element (r, c) of a matrix of `bits`-bit elements stored from p: .row, ld elements a row, or .col. */
static unsigned mat_elem(const uint8_t *p, unsigned bits, bool col, unsigned ld, unsigned r, unsigned c) {
    uint64_t bit = (uint64_t)(col ? c * ld + r : r * ld + c) * bits;
    return (p[bit / 8] >> (bit % 8)) & ((1u << bits) - 1);
}

static int32_t clamp32(int64_t v) { return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v; }

/* Accumulator values: small, or (every third) near the s32 limits, so that .satfinite clamps and the others wrap. */
static int32_t rnd_acc(void) {
    uint64_t r = rnd64();
    if (r % 3) return (int32_t)(r >> 32) % 5000;
    return r & 8 ? INT32_MAX - (int32_t)(r >> 40 & 1023) : INT32_MIN + (int32_t)(r >> 40 & 1023);
}

static void fill_rand(void *p, size_t n) {
    for (size_t i = 0; i < n; i++) ((uint8_t *)p)[i] = (uint8_t)(rnd64() >> 24);
}

/* ---- 1. nvcc's wmma ---- */
typedef struct WmmaCase {
    const char *kernel;
    unsigned bits, k;        /* element bits (4 or 1); K (32 or 128) */
    bool sgn, sat, xor_, and_; /* s4; .satfinite; b1's bit operation */
    unsigned lda, ldb, ldc, ldd, abytes, bbytes, cints, dints; /* strides in elements; each block's share of each buffer */
    bool ccol, dcol;
    int32_t scale, bias; /* D = scale (C + A B) + bias */
} WmmaCase;

static const WmmaCase wmma_cases[] = {
    {"wmma_s4", 4, 32, true, true, false, false, 64, 32, 8, 8, 256, 128, 64, 64, true, false, 1, 0},
    {"wmma_u4", 4, 32, false, false, false, false, 32, 64, 16, 8, 128, 256, 128, 64, false, true, 1, 0},
    {"bmma_xor", 1, 128, false, false, true, false, 128, 256, 8, 8, 128, 256, 64, 64, false, false, 3, -7},
    {"bmma_and", 1, 128, false, false, false, true, 256, 128, 8, 16, 256, 128, 64, 128, true, true, 1, 0},
};

Test(subbyte, nvcc_wmma_against_host_reference) {
    enum { BLOCKS = 3 };
    TileDevice *d = open_emu(true);
    char *ptx = fixture("subbyte.ptx");
    TileDevModule *m;
    cr_assert_eq(dev_module_load_ptx(d, ptx, &m), DEV_OK, "%s", dev_last_error(d));
    for (size_t ci = 0; ci < ARRAY_LEN(wmma_cases); ci++) {
        const WmmaCase *w = &wmma_cases[ci];
        TileDevFunction *fn;
        cr_assert_eq(dev_module_get_function(m, w->kernel, &fn), DEV_OK);
        static uint8_t A[BLOCKS * 256], B[BLOCKS * 256];
        static int32_t C[BLOCKS * 128], D[BLOCKS * 128];
        fill_rand(A, sizeof A);
        fill_rand(B, sizeof B);
        for (size_t i = 0; i < ARRAY_LEN(C); i++) C[i] = rnd_acc();
        uint64_t da = upload(d, A, sizeof A), db = upload(d, B, sizeof B), dc = upload(d, C, sizeof C), dd = poisoned(d, sizeof D);
        void *params[] = {&da, &db, &dc, &dd};
        cr_assert_eq(dev_launch(fn, BLOCKS, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK, "%s: %s", w->kernel, dev_last_error(d));
        download(d, D, dd, sizeof D);
        unsigned held = 0; /* D elements written, to check the rest stays poisoned */
        for (unsigned blk = 0; blk < BLOCKS; blk++) {
            const uint8_t *a = A + blk * w->abytes, *bm = B + blk * w->bbytes;
            const int32_t *c = C + blk * w->cints;
            for (unsigned i = 0; i < 8; i++)
                for (unsigned j = 0; j < 8; j++) {
                    int64_t acc = w->ccol ? c[j * w->ldc + i] : c[i * w->ldc + j];
                    for (unsigned k = 0; k < w->k; k++) {
                        int32_t x = (int32_t)mat_elem(a, w->bits, false, w->lda, i, k), y = (int32_t)mat_elem(bm, w->bits, true, w->ldb, k, j);
                        if (w->sgn) x = x >= 8 ? x - 16 : x, y = y >= 8 ? y - 16 : y;
                        acc += w->xor_ ? x ^ y : w->and_ ? x & y : x * y;
                    }
                    int32_t want = w->sat ? clamp32(acc) : (int32_t)(uint32_t)(uint64_t)acc;
                    want = (int32_t)((uint32_t)want * (uint32_t)w->scale + (uint32_t)w->bias);
                    unsigned at = blk * w->dints + (w->dcol ? j * w->ldd + i : i * w->ldd + j);
                    cr_assert_eq(D[at], want, "%s block %u D[%u][%u]: %d, want %d", w->kernel, blk, i, j, D[at], want);
                    held++;
                }
        }
        unsigned poison = 0;
        for (size_t i = 0; i < ARRAY_LEN(D); i++) poison += D[i] == -1;
        cr_assert_geq(poison, ARRAY_LEN(D) - held, "%s wrote outside its D tiles", w->kernel);
    }
    dev_module_unload(m);
    free(ptx);
    dev_close(d);
}

/* ---- 1. nvcc's inline-asm mma.sync .b1: the PTX ISA's "Matrix Fragments for mma.m8n8k128 / m16n8k128 /
 * m16n8k256" tables, element i of the lane's fragment (register i / 32, bit i % 32) at (row, col); g = lane / 4,
 * t = lane % 4.  m16n8k256's A table reads col "(t * 32) + i for ai where i < 64", which would give two holders
 * to some elements and none to others; "(t * 32) + (i & 0x1F)", as in m16n8k128's table, is taken here, and the
 * test checks that every element then has exactly one holder. ---- */
typedef struct B1Form { const char *name; unsigned rows, k; bool xor_; } B1Form;

static void b1_frag_a(const B1Form *f, unsigned lane, unsigned i, unsigned *row, unsigned *col) {
    unsigned g = lane >> 2, t = lane & 3;
    if (f->rows == 8) *row = g, *col = t * 32 + i; /* m8n8k128 */
    else if (f->k == 128) *row = i < 32 ? g : g + 8, *col = t * 32 + (i & 0x1F);
    else *row = i < 32 || (i >= 64 && i < 96) ? g : g + 8, *col = t * 32 + (i & 0x1F) + (i >= 64 ? 128 : 0);
}
static void b1_frag_b(const B1Form *f, unsigned lane, unsigned i, unsigned *row, unsigned *col) {
    unsigned g = lane >> 2, t = lane & 3;
    *col = g;
    *row = f->k == 256 ? t * 32 + (i & 0x1F) + (i >= 32 ? 128 : 0) : t * 32 + i;
}
static void b1_frag_c(unsigned lane, unsigned i, unsigned *row, unsigned *col) {
    unsigned g = lane >> 2, t = lane & 3;
    *row = i < 2 ? g : g + 8;
    *col = t * 2 + (i & 1);
}

static const B1Form b1_forms[] = {
    {"mma_m8n8k128_xor", 8, 128, true}, {"mma_m8n8k128_and", 8, 128, false}, {"mma_m16n8k128_xor", 16, 128, true},
    {"mma_m16n8k128_and", 16, 128, false}, {"mma_m16n8k256_xor", 16, 256, true}, {"mma_m16n8k256_and", 16, 256, false},
};

Test(subbyte, nvcc_mma_b1_against_isa_fragments) {
    enum { WARPS = 2 };
    TileDevice *d = open_emu(false);
    char *ptx = fixture("subbyte.ptx");
    TileDevModule *m;
    cr_assert_eq(dev_module_load_ptx(d, ptx, &m), DEV_OK, "%s", dev_last_error(d));
    for (size_t fi = 0; fi < ARRAY_LEN(b1_forms); fi++) {
        const B1Form *f = &b1_forms[fi];
        unsigned na = f->rows * f->k / 1024, nb = f->k / 128, nc = f->rows / 4;
        static uint8_t A[WARPS][16][256], B[WARPS][256][8];
        static int32_t C[WARPS][16][8];
        static uint32_t fa[WARPS * 32][4], fb[WARPS * 32][2];
        static int32_t fc[WARPS * 32][4], fd[WARPS * 32][4];
        memset(fa, 0, sizeof fa), memset(fb, 0, sizeof fb), memset(fc, 0, sizeof fc);
        static uint8_t seen_a[16][256], seen_b[256][8];
        memset(seen_a, 0, sizeof seen_a), memset(seen_b, 0, sizeof seen_b);
        for (unsigned w = 0; w < WARPS; w++) {
            for (unsigned r = 0; r < 16; r++)
                for (unsigned k = 0; k < 256; k++) A[w][r][k] = rnd64() >> 63;
            for (unsigned k = 0; k < 256; k++)
                for (unsigned n = 0; n < 8; n++) B[w][k][n] = rnd64() >> 63;
            for (unsigned r = 0; r < 16; r++)
                for (unsigned n = 0; n < 8; n++) C[w][r][n] = rnd_acc();
            for (unsigned l = 0; l < 32; l++) {
                unsigned x = w * 32 + l, row, col;
                for (unsigned i = 0; i < 32 * na; i++) {
                    b1_frag_a(f, l, i, &row, &col);
                    fa[x][i / 32] |= (uint32_t)A[w][row][col] << (i % 32);
                    seen_a[row][col] += w == 0;
                }
                for (unsigned i = 0; i < 32 * nb; i++) {
                    b1_frag_b(f, l, i, &row, &col);
                    fb[x][i / 32] |= (uint32_t)B[w][row][col] << (i % 32);
                    seen_b[row][col] += w == 0;
                }
                for (unsigned i = 0; i < nc; i++) {
                    b1_frag_c(l, i, &row, &col);
                    fc[x][i] = C[w][row][col];
                }
            }
        }
        for (unsigned r = 0; r < f->rows; r++)
            for (unsigned k = 0; k < f->k; k++) cr_assert_eq(seen_a[r][k], 1, "%s: A[%u][%u] held %u times", f->name, r, k, seen_a[r][k]);
        for (unsigned k = 0; k < f->k; k++)
            for (unsigned n = 0; n < 8; n++) cr_assert_eq(seen_b[k][n], 1, "%s: B[%u][%u] held %u times", f->name, k, n, seen_b[k][n]);
        TileDevFunction *fn;
        cr_assert_eq(dev_module_get_function(m, f->name, &fn), DEV_OK);
        uint64_t da = upload(d, fa, sizeof fa), db = upload(d, fb, sizeof fb), dc = upload(d, fc, sizeof fc), dd = poisoned(d, sizeof fd);
        void *params[] = {&da, &db, &dc, &dd};
        cr_assert_eq(dev_launch(fn, WARPS, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK, "%s: %s", f->name, dev_last_error(d));
        download(d, fd, dd, sizeof fd);
        for (unsigned w = 0; w < WARPS; w++)
            for (unsigned l = 0; l < 32; l++)
                for (unsigned i = 0; i < 4; i++) {
                    unsigned row, col;
                    b1_frag_c(l, i, &row, &col);
                    int32_t want = -1; /* past the D count: untouched */
                    if (i < nc) {
                        int64_t acc = C[w][row][col];
                        for (unsigned k = 0; k < f->k; k++) acc += f->xor_ ? A[w][row][k] ^ B[w][k][col] : A[w][row][k] & B[w][k][col];
                        want = (int32_t)(uint32_t)(uint64_t)acc;
                    }
                    cr_assert_eq(fd[w * 32 + l][i], want, "%s warp %u lane %u d%u (D[%u][%u]): %d, want %d", f->name, w, l, i, row, col,
                                 fd[w * 32 + l][i], want);
                }
    }
    dev_module_unload(m);
    free(ptx);
    dev_close(d);
}

/* ---- 2. hand-written wmma: no stride operand (the default: the matrix's width), generic addresses, D in C's
 * registers; s4 A and B, and b1 with .xor.popc, C row-major, D column-major ---- */
Test(subbyte, handwritten_wmma_default_strides) {
    static const struct { const char *ty, *shape, *bitop; unsigned bits, k; } forms[] = {
        {"s4", "m8n8k32", "", 4, 32}, {"u4", "m8n8k32", "", 4, 32}, {"b1", "m8n8k128", ".xor.popc", 1, 128}, {"b1", "m8n8k128", ".and.popc", 1, 128},
    };
    TileDevice *d = open_emu(true);
    for (size_t fi = 0; fi < ARRAY_LEN(forms); fi++) {
        char ptx[2048];
        snprintf(ptx, sizeof ptx, PTX_HEAD ".visible .entry w(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{\n"
                 " .reg .b32 %%a, %%b, %%c<2>;\n .reg .b64 %%rd<5>;\n"
                 " ld.param.u64 %%rd1, [pa];\n ld.param.u64 %%rd2, [pb];\n ld.param.u64 %%rd3, [pc];\n ld.param.u64 %%rd4, [pd];\n"
                 " wmma.load.a.sync.aligned.row.%s.%s {%%a}, [%%rd1];\n"
                 " wmma.load.b.sync.aligned.col.%s.%s {%%b}, [%%rd2];\n"
                 " wmma.load.c.sync.aligned.row.%s.s32 {%%c0, %%c1}, [%%rd3];\n"
                 " wmma.mma%s.sync.aligned.row.col.%s.s32.%s.%s.s32 {%%c0, %%c1}, {%%a}, {%%b}, {%%c0, %%c1};\n"
                 " wmma.store.d.sync.aligned.col.%s.s32 [%%rd4], {%%c0, %%c1};\n ret;\n}\n",
                 forms[fi].shape, forms[fi].ty, forms[fi].shape, forms[fi].ty, forms[fi].shape, forms[fi].bitop, forms[fi].shape,
                 forms[fi].ty, forms[fi].ty, forms[fi].shape);
        check_ptxas_arch(ptx, "sm_80");
        TileDevModule *m;
        TileDevFunction *fn = load(d, ptx, "w", &m);
        uint8_t A[128], B[128];
        int32_t C[64], D[64];
        fill_rand(A, sizeof A);
        fill_rand(B, sizeof B);
        for (unsigned i = 0; i < 64; i++) C[i] = rnd_acc();
        uint64_t da = upload(d, A, sizeof A), db = upload(d, B, sizeof B), dc = upload(d, C, sizeof C), dd = poisoned(d, sizeof D);
        void *params[] = {&da, &db, &dc, &dd};
        cr_assert_eq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
        download(d, D, dd, sizeof D);
        unsigned K = forms[fi].k, bits = forms[fi].bits;
        bool sgn = forms[fi].ty[0] == 's', xor_ = strstr(forms[fi].bitop, "xor"), and_ = strstr(forms[fi].bitop, "and");
        for (unsigned i = 0; i < 8; i++)
            for (unsigned j = 0; j < 8; j++) {
                int64_t acc = C[i * 8 + j];
                for (unsigned k = 0; k < K; k++) {
                    int32_t x = (int32_t)mat_elem(A, bits, false, K, i, k), y = (int32_t)mat_elem(B, bits, true, K, k, j);
                    if (sgn) x = x >= 8 ? x - 16 : x, y = y >= 8 ? y - 16 : y;
                    acc += xor_ ? x ^ y : and_ ? x & y : x * y;
                }
                int32_t want = (int32_t)(uint32_t)(uint64_t)acc;
                cr_assert_eq(D[j * 8 + i], want, "%s %s%s D[%u][%u]: %d, want %d", forms[fi].shape, forms[fi].ty, forms[fi].bitop, i, j,
                             D[j * 8 + i], want);
            }
        dev_module_unload(m);
    }
    dev_close(d);
}

/* ---- 3. errors ---- */
Test(subbyte, errors) {
    TileDevice *d = open_emu(false);
    /* the stride is in elements: 48 s4 elements are 24 bytes, not whole 16-byte units */
    static const char *strided = PTX_HEAD ".visible .entry w(.param .u64 p, .param .u32 ld)\n{\n .reg .b32 %r<4>;\n .reg .b64 %rd<2>;\n"
        " ld.param.u64 %rd1, [p];\n ld.param.u32 %r1, [ld];\n wmma.load.a.sync.aligned.row.m8n8k32.global.s4 {%r2}, [%rd1], %r1;\n ret;\n}\n";
    check_ptxas_arch(strided, "sm_80");
    TileDevModule *m;
    TileDevFunction *fn = load(d, strided, "w", &m);
    uint64_t buf;
    cr_assert_eq(dev_malloc(d, 4096, &buf), DEV_OK);
    uint32_t ld = 96;
    void *params[] = {&buf, &ld};
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
    ld = 48;
    cr_assert_neq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK);
    cr_assert(strstr(dev_last_error(d), "stride of 48 elements of 4 bits is not a multiple of 16 bytes"), "%s", dev_last_error(d));
    ld = 0;
    cr_assert_neq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK);
    cr_assert(strstr(dev_last_error(d), "less than the matrix's 32 columns"), "%s", dev_last_error(d));
    dev_module_unload(m);
    /* ptxas refuses all of them but one: a bit operation on s4 (ptxas 13.0 takes .xor.popc on m16n8k64 .s4, a form
     * the ISA does not have) */
    static const struct { const char *ins, *err; } bad[] = {
        {"wmma.load.a.sync.aligned.col.m8n8k32.global.s4 {%r0}, [%rd1];", "sub-byte or single-bit A is .row only"},
        {"wmma.load.b.sync.aligned.row.m8n8k128.global.b1 {%r0}, [%rd1];", "B .col only"},
        {"wmma.load.a.sync.aligned.row.m8n8k32.global.b1 {%r0}, [%rd1];", "no such fragment"},
        {"wmma.load.a.sync.aligned.row.m16n16k16.global.s4 {%r0}, [%rd1];", "no such fragment"},
        {"wmma.load.c.sync.aligned.row.m8n8k32.global.s32 {%r0, %r1, %r2, %r3}, [%rd1];", "needs 2 fragment registers"},
        {"wmma.mma.sync.aligned.row.col.m8n8k32.s32.s4.u4.s32 {%r0, %r1}, {%r2}, {%r3}, {%r0, %r1};", "unsupported type combination"},
        {"wmma.mma.sync.aligned.col.col.m8n8k32.s32.s4.s4.s32 {%r0, %r1}, {%r2}, {%r3}, {%r0, %r1};", "is .row.col only"},
        {"wmma.mma.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%r0, %r1}, {%r2}, {%r3}, {%r0, %r1};", "needs .xor.popc or .and.popc"},
        {"wmma.mma.xor.popc.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32.satfinite {%r0, %r1}, {%r2}, {%r3}, {%r0, %r1};",
         ".satfinite is for s8, u8, s4 and u4"},
        {"wmma.mma.xor.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%r0, %r1}, {%r2}, {%r3}, {%r0, %r1};", "needs .popc"},
        {"wmma.mma.popc.xor.sync.aligned.row.col.m8n8k128.s32.b1.b1.s32 {%r0, %r1}, {%r2}, {%r3}, {%r0, %r1};", "one bit operation, then .popc"},
        {"wmma.mma.xor.popc.sync.aligned.row.col.m8n8k32.s32.s4.s4.s32 {%r0, %r1}, {%r2}, {%r3}, {%r0, %r1};", "are for .b1 wmma.mma"},
        {"mma.sync.aligned.m16n8k128.row.col.s32.b1.b1.s32 {%r0, %r1, %r2, %r3}, {%r0, %r1}, {%r2}, {%r0, %r1, %r2, %r3};",
         ".b1 mma needs .and.popc or .xor.popc"},
        {"mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32.xor.popc {%r0, %r1, %r2, %r3}, {%r0, %r1, %r2, %r3}, {%r0, %r1}, "
         "{%r0, %r1, %r2, %r3};", "are for .b1 mma"},
        {"mma.sync.aligned.m8n8k256.row.col.s32.b1.b1.s32.xor.popc {%r0, %r1}, {%r0}, {%r1}, {%r0, %r1};", "unsupported modifier"},
        {"mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.and.popc {%r0, %r1, %r2, %r3}, {%r0}, {%r1}, {%r0, %r1, %r2, %r3};",
         "needs 2 D registers"},
        {"mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc {%r0, %r1, %r2, %r3}, {%r0, %r1}, {%r2}, {%r0, %r1, %r2, %r3};",
         "needs 4 A registers"},
        {"mma.sync.aligned.m16n8k128.row.col.satfinite.s32.b1.b1.s32.xor.popc {%r0, %r1, %r2, %r3}, {%r0, %r1}, {%r2}, "
         "{%r0, %r1, %r2, %r3};", ".satfinite is not for .b1 mma"},
        {"mma.sync.aligned.m16n8k32.row.col.s32.b1.b1.s32.xor.popc {%r0, %r1, %r2, %r3}, {%r0, %r1}, {%r2}, {%r0, %r1, %r2, %r3};",
         ".b1 mma is m8n8k128, m16n8k128 or m16n8k256"},
        {"add.b1 %r0, %r1, %r2;", "supported as mma and wmma operand types only"},
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        char text[1024];
        snprintf(text, sizeof text, PTX_HEAD ".visible .entry k()\n{\n .reg .b32 %%r<4>;\n .reg .b64 %%rd<2>;\n %s\n ret;\n}\n", bad[i].ins);
        cr_assert_eq(dev_module_load_ptx(d, text, &m), DEV_ERR_PTX, "accepted: %s", bad[i].ins);
        cr_assert(strstr(dev_last_error(d), "ptx:8:") && strstr(dev_last_error(d), bad[i].err), "%s: %s", bad[i].ins, dev_last_error(d));
        if (!strstr(bad[i].ins, "s4.s4.s32.xor")) cr_assert(ptxas_refuses(text, "sm_80"), "ptxas takes '%s', which the emulator refuses", bad[i].ins);
    }
    dev_close(d);
}

/* ---- 4. wmma's addresses and forms, every type ---- */

/* The PTX ISA aligns a wmma matrix to its fragment's size, not to 32 bytes: a u8 m16n16k16 A is two registers,
 * so 8 bytes (NVIDIA's immaTensorCoreGemm sample steps k by 16 bytes).  Lane l's register j byte i holds
 * element 8l + 4j + i in row-major order (the slot order docs/emulator.md gives). */
Test(wmma, u8_alignment_is_the_fragment_size) {
    TileDevice *d = open_emu(false);
    static const char *ptx = PTX_HEAD ".visible .entry w(.param .u64 p, .param .u64 o, .param .u32 off)\n{\n"
        " .reg .b32 %r<8>;\n .reg .b64 %rd<8>;\n ld.param.u64 %rd1, [p];\n ld.param.u64 %rd2, [o];\n ld.param.u32 %r1, [off];\n"
        " cvt.u64.u32 %rd3, %r1;\n add.u64 %rd1, %rd1, %rd3;\n mov.u32 %r2, 32;\n"
        " wmma.load.a.sync.aligned.row.m16n16k16.global.u8 {%r4, %r5}, [%rd1], %r2;\n"
        " mov.u32 %r3, %laneid;\n mul.wide.u32 %rd4, %r3, 8;\n add.u64 %rd2, %rd2, %rd4;\n st.global.v2.b32 [%rd2], {%r4, %r5};\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    TileDevModule *m;
    TileDevFunction *fn = load(d, ptx, "w", &m);
    uint8_t src[16 + 16 * 32], out[256];
    for (size_t i = 0; i < sizeof src; i++) src[i] = (uint8_t)(i * 37 + 11);
    uint64_t buf = upload(d, src, sizeof src), ob;
    cr_assert_eq(dev_malloc(d, sizeof out, &ob), DEV_OK);
    static const uint32_t offs[] = {16, 8};
    for (size_t k = 0; k < ARRAY_LEN(offs); k++) {
        uint32_t off = offs[k];
        void *params[] = {&buf, &ob, &off};
        cr_assert_eq(dev_memset_d8(d, ob, 0xCD, sizeof out), DEV_OK);
        cr_assert_eq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK, "offset %u: %s", off, dev_last_error(d));
        download(d, out, ob, sizeof out);
        for (unsigned e = 0; e < 256; e++)
            cr_assert_eq(out[e], src[off + (e / 16) * 32 + e % 16], "offset %u element %u", off, e);
    }
    uint32_t off = 4;
    void *params[] = {&buf, &ob, &off};
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_ERR_MEMCHECK);
    cr_assert(strstr(dev_last_error(d), "misaligned wmma address") && strstr(dev_last_error(d), "not aligned to 8 bytes"), "%s",
              dev_last_error(d));
    dev_module_unload(m);
    dev_close(d);
}

/* wmma (the numbers: test_conformance's wmma.cu, as nvcc writes it): the address and stride every lane gives
 * must agree, the matrix start at 32 bytes, the stride be whole 16-byte units; unknown forms and wrong
 * register counts fail at load time. */
Test(wmma, errors) {
    TileDevice *d = open_emu(false);
    static const char *ptx = PTX_HEAD ".visible .entry w(.param .u64 p, .param .u32 off, .param .u32 lanestep, .param .u32 ld)\n{\n"
        " .reg .b32 %r<16>;\n .reg .b64 %rd<4>;\n ld.param.u64 %rd1, [p];\n ld.param.u32 %r1, [off];\n ld.param.u32 %r2, [lanestep];\n"
        " ld.param.u32 %r10, [ld];\n mov.u32 %r3, %laneid;\n mad.lo.u32 %r1, %r3, %r2, %r1;\n cvt.u64.u32 %rd2, %r1;\n add.u64 %rd1, %rd1, %rd2;\n"
        " wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r4, %r5, %r6, %r7, %r8, %r9, %r11, %r12}, [%rd1], %r10;\n ret;\n}\n";
    check_ptxas_arch(ptx, "sm_80");
    TileDevModule *m;
    TileDevFunction *fn = load(d, ptx, "w", &m);
    uint64_t buf;
    cr_assert_eq(dev_malloc(d, 4096, &buf), DEV_OK);
    uint32_t off = 0, step = 0, ld = 16;
    void *params[] = {&buf, &off, &step, &ld};
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(d));
    off = 16;
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_ERR_MEMCHECK);
    cr_assert(strstr(dev_last_error(d), "misaligned wmma address") && strstr(dev_last_error(d), "not aligned to 32 bytes"), "%s",
              dev_last_error(d));
    off = 0, step = 32;
    cr_assert_neq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK);
    cr_assert(strstr(dev_last_error(d), "lane 1 gives address") && strstr(dev_last_error(d), "same in every lane"), "%s",
              dev_last_error(d));
    step = 0, ld = 12; /* 24 bytes */
    cr_assert_neq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK);
    cr_assert(strstr(dev_last_error(d), "stride of 12 elements of 2 bytes is not a multiple of 16 bytes"), "%s", dev_last_error(d));
    ld = 8;
    cr_assert_neq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK);
    cr_assert(strstr(dev_last_error(d), "less than the matrix's 16 columns"), "%s", dev_last_error(d));
    ld = 4096; /* rows past the allocation */
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params), DEV_ERR_MEMCHECK);
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 16, 1, 1, 0, NULL, params), DEV_ERR_LAUNCH);
    cr_assert(strstr(dev_last_error(d), "needs all 32 lanes"), "%s", dev_last_error(d));
    dev_module_unload(m);
    static const char *bad[][2] = {
        {"wmma.load.a.sync.aligned.row.m16n16k16.global.f32 {%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7}, [%rd1];", "no such fragment"},
        {"wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r0,%r1,%r2,%r3}, [%rd1];", "needs 8 fragment registers"},
        {"wmma.load.a.sync.aligned.m16n16k16.global.f16 {%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7}, [%rd1];", "needs a layout"},
        {"wmma.mma.sync.aligned.row.col.m16n16k8.f32.f16.f16.f32 {%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7}, {%r0,%r1,%r2,%r3}, {%r0,%r1,%r2,%r3}, "
         "{%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7};", "unsupported wmma form"},
        {"wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7}, {%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7}, "
         "{%r0,%r1,%r2,%r3,%r4,%r5,%r6,%r7}, {%r0,%r1,%r2,%r3};", "needs 8 C registers"},
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        char text[1024];
        snprintf(text, sizeof text, PTX_HEAD ".visible .entry k()\n{\n .reg .b32 %%r<8>;\n .reg .b64 %%rd<2>;\n %s\n ret;\n}\n", bad[i][0]);
        cr_assert_eq(dev_module_load_ptx(d, text, &m), DEV_ERR_PTX, "accepted: %s", bad[i][0]);
        cr_assert(strstr(dev_last_error(d), "ptx:8:") && strstr(dev_last_error(d), bad[i][1]), "%s: %s", bad[i][0], dev_last_error(d));
    }
    dev_close(d);
}

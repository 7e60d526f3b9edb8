/* test_emu_hopper_isa.c - emu:sm_90a against forms written from the PTX ISA pages alone, for what the
 * other Hopper test programs (test_emu_hopper.c, test_emu_wgmma.c, test_emu_tma.c, test_emu_cluster.c)
 * leave out: integer wgmma's .satfinite against its wrap-around, descriptors whose leading and stride byte
 * offsets are not the dense ones (gaps between core matrices), an f16 accumulator with A in registers, a
 * negated B (imm-scale-b -1) and a false scale-d predicate over a poisoned C, elect.sync's leader and lane
 * id under partial masks, 4-D / 5-D tensor copies with traversal strides and out-of-bounds fill, and every N of
 * m64nNk16 (8 to 256) in one kernel, A M-major and B under the 64B swizzle.
 *
 * Every placement and fragment here is written from the ISA's text (the canonical layouts
 * ((8,m),(T,2k)):((1T,SBO),(1,LBO)) for K-major and ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)) for MN-major without
 * swizzling; the m64nNk16 / m64nNk32 register fragments), not from the emulator's code; every kernel is
 * checked by ptxas -arch=sm_90a when it is installed.  Expected values are computed here in 64-bit integers or
 * exactly representable floats, the outputs poisoned first. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "support/hostfloat.h"
#include "support/support.h"
#include "test_emu_sm90.h"
#include "test_rng.h"

/* A shared-memory matrix descriptor (the ISA's "Matrix Descriptor Format"): start address >> 4 in bits 0-13,
 * LBO >> 4 in 16-29, SBO >> 4 in 32-45, no swizzle (bits 62-63 zero).  The kernel adds its shared base. */
static uint64_t desc_noswz(uint32_t start, uint32_t lbo, uint32_t sbo) {
    return (uint64_t)((start >> 4) & 0x3FFF) | (uint64_t)((lbo >> 4) & 0x3FFF) << 16 | (uint64_t)((sbo >> 4) & 0x3FFF) << 32;
}

/* K-major, no swizzle: ((8,m),(T,2k)):((1T,SBO),(1,LBO)) in elements of es bytes, T = 16 / es. */
static uint32_t kmajor_off(unsigned mn, unsigned k, unsigned es, uint32_t lbo, uint32_t sbo) {
    unsigned T = 16 / es;
    return (mn % 8) * 16 + (mn / 8) * sbo + (k % T) * es + (k / T) * lbo;
}

/* MN-major, no swizzle: ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)). */
static uint32_t mnmajor_off(unsigned mn, unsigned k, unsigned es, uint32_t lbo, uint32_t sbo) {
    unsigned T = 16 / es;
    return (mn % T) * es + (mn / T) * sbo + (k % 8) * 16 + (k / 8) * lbo;
}

/* The D fragment of m64nNk*: thread i's element e (register e for .f32/.s32; .f16: the e-th half, low first) is
 * row 16w + l/4 + 8((e/2)%2), column 8(e/4) + 2(l%4) + e%2, w = i/32, l = i%32. */
static void d_rc(unsigned i, unsigned e, unsigned *row, unsigned *col) {
    unsigned w = i / 32, l = i % 32;
    *row = 16 * w + l / 4 + 8 * ((e / 2) % 2);
    *col = 8 * (e / 4) + 2 * (l % 4) + e % 2;
}

/* The kernel's head: copies `bytes` (a multiple of 512) of img into shared memory at smem (1024-aligned),
 * fences them for the async proxy, and loads thread i's nd C registers %r<100+r> from c. */
static void wg_head(Str *s, unsigned bytes, unsigned nd) {
    str_printf(s, PTX_HEAD ".visible .entry k(.param .u64 img, .param .u64 c, .param .u64 out, .param .u64 da, .param .u64 db,"
                          " .param .u64 areg, .param .u32 flag)\n{\n"
                          "  .reg .pred %%p<4>;\n  .reg .b32 %%r<200>;\n  .reg .b64 %%rd<16>;\n"
                          "  .shared .align 1024 .b8 smem[%u];\n"
                          "  mov.u32 %%r0, %%tid.x;\n  ld.param.u64 %%rd1, [img];\n  mov.u32 %%r1, smem;\n"
                          "  shl.b32 %%r2, %%r0, 2;\n  cvt.u64.u32 %%rd2, %%r2;\n  add.u64 %%rd2, %%rd1, %%rd2;\n  add.u32 %%r3, %%r1, %%r2;\n",
               bytes);
    for (unsigned off = 0; off < bytes; off += 512)
        str_printf(s, "  ld.global.u32 %%r4, [%%rd2+%u];\n  st.shared.u32 [%%r3+%u], %%r4;\n", off, off);
    str_printf(s, "  fence.proxy.async.shared::cta;\n  bar.sync 0;\n"
                  "  shr.u32 %%r5, %%r1, 4;\n  cvt.u64.u32 %%rd3, %%r5;\n"
                  "  ld.param.u64 %%rd4, [da];\n  add.u64 %%rd4, %%rd4, %%rd3;\n  ld.param.u64 %%rd5, [db];\n  add.u64 %%rd5, %%rd5, %%rd3;\n"
                  "  mul.wide.u32 %%rd6, %%r0, %u;\n  ld.param.u64 %%rd7, [c];\n  add.u64 %%rd7, %%rd7, %%rd6;\n"
                  "  ld.param.u64 %%rd8, [out];\n  add.u64 %%rd8, %%rd8, %%rd6;\n",
               4 * nd);
    for (unsigned r = 0; r < nd; r++) str_printf(s, "  ld.global.u32 %%r%u, [%%rd7+%u];\n", 100 + r, 4 * r);
}

static void wg_tail(Str *s, unsigned nd) {
    str_printf(s, "  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n");
    for (unsigned r = 0; r < nd; r++) str_printf(s, "  st.global.u32 [%%rd8+%u], %%r%u;\n", 4 * r, 100 + r);
    str_printf(s, "  ret;\n}\n");
}

static void dlist(Str *s, unsigned nd) {
    str_printf(s, "{");
    for (unsigned r = 0; r < nd; r++) str_printf(s, "%s%%r%u", r ? ", " : "", 100 + r);
    str_printf(s, "}");
}

/* ==== integer wgmma: .satfinite clamps the accumulated value to [INT32_MIN, INT32_MAX], without it the value
 * wraps (the ISA, wgmma.mma_async "Integer operations").  m64n16k32, A and B from descriptors (K-major, no
 * swizzle) whose LBO and SBO leave gaps.  Each row of A (s8 A: by row) or column of B (s8 B: by column) has one
 * sign, so every partial sum moves one way and the result does not depend on where a clamp is applied; C starts
 * within 2^21 of the bound its products head for, so some elements overflow and some do not. ==== */
static void run_satfinite(const char *at, const char *bt, bool sat) {
    seed_rng();
    TileDevice *d = open_emu(false);
    enum { M = 64, N = 16, K = 32, ND = N / 2 };
    const uint32_t alb = 128, asb = 384, blb = 512, bsb = 128, boff = 3072, bytes = 4096; /* A: 3072 bytes, B: 768 */
    bool as8 = !strcmp(at, "s8");
    int A[M][K], B[N][K];
    uint8_t *img = calloc(bytes, 1);
    for (unsigned m = 0; m < M; m++)
        for (unsigned k = 0; k < K; k++) {
            A[m][k] = as8 ? (m % 2 ? -(100 + irand(29)) : 100 + irand(28)) : 128 + irand(128);
            img[kmajor_off(m, k, 1, alb, asb)] = (uint8_t)A[m][k];
        }
    for (unsigned n = 0; n < N; n++)
        for (unsigned k = 0; k < K; k++) {
            B[n][k] = as8 ? 128 + irand(128) : (n % 2 ? -(100 + irand(29)) : 100 + irand(28));
            img[boff + kmajor_off(n, k, 1, blb, bsb)] = (uint8_t)B[n][k];
        }
    int32_t *C = malloc(128 * ND * 4);
    int64_t want_sum[128][ND];
    for (unsigned i = 0; i < 128; i++)
        for (unsigned e = 0; e < ND; e++) {
            unsigned row, col;
            d_rc(i, e, &row, &col);
            int64_t sum = 0;
            for (unsigned k = 0; k < K; k++) sum += (int64_t)A[row][k] * B[col][k];
            int64_t room = irand(1 << 21);
            C[i * ND + e] = sum > 0 ? (int32_t)(INT32_MAX - room) : (int32_t)(INT32_MIN + room);
            want_sum[i][e] = (int64_t)C[i * ND + e] + sum;
        }
    Str s = {0};
    wg_head(&s, bytes, ND);
    str_printf(&s, "  wgmma.fence.sync.aligned;\n  wgmma.mma_async.sync.aligned.m64n16k32%s.s32.%s.%s ", sat ? ".satfinite" : "", at, bt);
    dlist(&s, ND);
    str_printf(&s, ", %%rd4, %%rd5, 1;\n");
    wg_tail(&s, ND);
    char *ptx = str_take(&s);
    TileDevModule *mod;
    TileDevFunction *f = load(d, ptx, "k", &mod);
    uint64_t dimg = upload(d, img, bytes), dc = upload(d, C, 128 * ND * 4), dout = poisoned(d, 128 * ND * 4), zero = 0;
    uint64_t da = desc_noswz(0, alb, asb), db = desc_noswz(boff, blb, bsb);
    uint32_t flag = 0;
    void *args[] = {&dimg, &dc, &dout, &da, &db, &zero, &flag};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 128, 1, 1, 0, NULL, args), DEV_OK, "%s\n%s", dev_last_error(d), ptx);
    int32_t *out = malloc(128 * ND * 4);
    download(d, out, dout, 128 * ND * 4);
    unsigned over = 0;
    for (unsigned i = 0; i < 128; i++)
        for (unsigned e = 0; e < ND; e++) {
            int64_t w = want_sum[i][e];
            bool o = w > INT32_MAX || w < INT32_MIN;
            over += o;
            int32_t want = sat ? (int32_t)(w > INT32_MAX ? INT32_MAX : w < INT32_MIN ? INT32_MIN : w) : (int32_t)(uint32_t)(uint64_t)w;
            unsigned row, col;
            d_rc(i, e, &row, &col);
            cr_assert_eq(out[i * ND + e], want, "%s.%s%s D[%u][%u] = %d, want %d (C + A*B = %lld)", at, bt, sat ? " .satfinite" : "", row,
                         col, out[i * ND + e], want, (long long)w);
        }
    cr_assert(over > 100 && over < 128 * ND - 100, "%u of %u elements overflow: the inputs do not test both sides", over, 128 * ND);
    free(out), free(ptx), free(C), free(img);
    dev_module_unload(mod);
    dev_close(d);
}

Test(wgmma_isa, satfinite_clamps_s8_u8) { run_satfinite("s8", "u8", true); }
Test(wgmma_isa, no_satfinite_wraps_s8_u8) { run_satfinite("s8", "u8", false); }
Test(wgmma_isa, satfinite_clamps_u8_s8) { run_satfinite("u8", "s8", true); }
Test(wgmma_isa, no_satfinite_wraps_u8_s8) { run_satfinite("u8", "s8", false); }

/* ==== every N of m64nNk16 (8 to 256 in steps of 8) in one kernel: f16 A from a descriptor, M-major (imm-trans-a 1)
 * without swizzle (LBO 128 between the two 8-column k groups, SBO 256 between 8-row m groups), B K-major with the
 * 64B swizzle (rows of 64 bytes, 8-row groups 512 apart: the 16-byte chunk c of row n at chunk c ^ ((n / 2) % 4),
 * the address bits [4,6) XORed with [7,9)), one B tile of 256 rows whose first N rows each wgmma reads; an f32 D
 * from a fresh C for each N.  Inputs are multiples of 1/4 in [-4, 4]: every sum is exact. ==== */
Test(wgmma_isa, every_n_one_kernel) {
    seed_rng();
    TileDevice *d = open_emu(false);
    enum { M = 64, NMAX = 256, K = 16, BOFF = 2048, BYTES = BOFF + NMAX / 8 * 512 };
    float A[M][K], B[NMAX][K];
    uint8_t *img = calloc(BYTES, 1);
    for (unsigned m = 0; m < M; m++)
        for (unsigned k = 0; k < K; k++) {
            A[m][k] = (float)(irand(33) - 16) / 4;
            uint16_t h = f32_to_f16(A[m][k]);
            memcpy(img + mnmajor_off(m, k, 2, 128, 256), &h, 2);
        }
    for (unsigned n = 0; n < NMAX; n++)
        for (unsigned k = 0; k < K; k++) {
            B[n][k] = (float)(irand(33) - 16) / 4;
            uint16_t h = f32_to_f16(B[n][k]);
            uint32_t a = BOFF + (n % 8) * 64 + (n / 8) * 512 + (k / 8) * 16 + (k % 8) * 2;
            a ^= ((a >> 7) & 3) << 4;
            memcpy(img + a, &h, 2);
        }
    size_t total = 0; /* C and D: for each N, 128 threads x N/2 floats */
    for (unsigned N = 8; N <= NMAX; N += 8) total += 128 * N / 2;
    float *C = malloc(total * 4), *out = malloc(total * 4);
    for (size_t i = 0; i < total; i++) C[i] = (float)(irand(65) - 32) / 2;
    Str s = {0};
    str_printf(&s, PTX_HEAD ".visible .entry k(.param .u64 img, .param .u64 c, .param .u64 out, .param .u64 da, .param .u64 db)\n{\n"
                          "  .reg .pred %%p<2>;\n  .reg .b32 %%r<8>;\n  .reg .f32 %%f<128>;\n  .reg .b64 %%rd<16>;\n"
                          "  .shared .align 1024 .b8 smem[%u];\n"
                          "  mov.u32 %%r0, %%tid.x;\n  ld.param.u64 %%rd1, [img];\n  mov.u32 %%r1, smem;\n  shl.b32 %%r2, %%r0, 2;\n"
                          "COPY:\n  setp.ge.u32 %%p1, %%r2, %u;\n  @%%p1 bra DONE;\n  cvt.u64.u32 %%rd2, %%r2;\n  add.u64 %%rd2, %%rd1, %%rd2;\n"
                          "  ld.global.u32 %%r4, [%%rd2];\n  add.u32 %%r3, %%r1, %%r2;\n  st.shared.u32 [%%r3], %%r4;\n"
                          "  add.u32 %%r2, %%r2, 512;\n  bra COPY;\nDONE:\n  fence.proxy.async.shared::cta;\n  bar.sync 0;\n"
                          "  shr.u32 %%r5, %%r1, 4;\n  cvt.u64.u32 %%rd3, %%r5;\n"
                          "  ld.param.u64 %%rd4, [da];\n  add.u64 %%rd4, %%rd4, %%rd3;\n  ld.param.u64 %%rd5, [db];\n  add.u64 %%rd5, %%rd5, %%rd3;\n"
                          "  ld.param.u64 %%rd7, [c];\n  ld.param.u64 %%rd8, [out];\n  cvt.u64.u32 %%rd6, %%r0;\n",
               BYTES, BYTES);
    size_t at = 0;
    for (unsigned N = 8; N <= NMAX; N += 8) {
        unsigned nd = N / 2;
        str_printf(&s, "  mad.lo.u64 %%rd9, %%rd6, %u, %zu;\n  add.u64 %%rd10, %%rd7, %%rd9;\n  add.u64 %%rd11, %%rd8, %%rd9;\n", 4 * nd, 4 * at);
        for (unsigned r = 0; r < nd; r++) str_printf(&s, "  ld.global.f32 %%f%u, [%%rd10+%u];\n", r, 4 * r);
        str_printf(&s, "  wgmma.fence.sync.aligned;\n  wgmma.mma_async.sync.aligned.m64n%uk16.f32.f16.f16 {", N);
        for (unsigned r = 0; r < nd; r++) str_printf(&s, "%s%%f%u", r ? ", " : "", r);
        str_printf(&s, "}, %%rd4, %%rd5, 1, 1, 1, 1, 0;\n  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n");
        for (unsigned r = 0; r < nd; r++) str_printf(&s, "  st.global.f32 [%%rd11+%u], %%f%u;\n", 4 * r, r);
        at += 128 * nd;
    }
    str_printf(&s, "  ret;\n}\n");
    char *ptx = str_take(&s);
    TileDevModule *mod;
    TileDevFunction *f = load(d, ptx, "k", &mod);
    uint64_t dimg = upload(d, img, BYTES), dc = upload(d, C, total * 4), dout = poisoned(d, total * 4);
    uint64_t da = desc_noswz(0, 128, 256), db = desc_noswz(BOFF, 16, 512) | 2ull << 62; /* 64B swizzle (LBO unused) */
    void *args[] = {&dimg, &dc, &dout, &da, &db};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 128, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
    download(d, out, dout, total * 4);
    at = 0;
    for (unsigned N = 8; N <= NMAX; N += 8) {
        unsigned nd = N / 2;
        for (unsigned i = 0; i < 128; i++)
            for (unsigned e = 0; e < nd; e++) {
                unsigned row, col;
                d_rc(i, e, &row, &col);
                double want = C[at + i * nd + e];
                for (unsigned k = 0; k < K; k++) want += (double)A[row][k] * B[col][k];
                cr_assert_eq(out[at + i * nd + e], (float)want, "m64n%uk16: D[%u][%u] = %g, want %g", N, row, col, out[at + i * nd + e], want);
            }
        at += 128 * nd;
    }
    free(out), free(C), free(ptx), free(img);
    dev_module_unload(mod);
    dev_close(d);
}

/* ==== m64n16k16.f16.f16.f16 with A in registers (the m64nNk16 A fragment: register j of lane l holds row
 * 16w + l/4 + 8(j%2), columns 2(l%4) + 8(j/2), +1, low half first) and B MN-major (imm-trans-b 1) without
 * swizzle, LBO and SBO with gaps.  The first wgmma has imm-scale-b -1 and a false scale-d predicate over a C of
 * NaNs (D = -A*B: C is not read), the second accumulates with imm-scale-a -1 (D = -2 A*B); an f16 D, its
 * registers packed pairs (element e of the D fragment in half e%2 of register e/2). ==== */
Test(wgmma_isa, f16_acc_a_registers_negated_scale_d_false) {
    seed_rng();
    TileDevice *d = open_emu(false);
    enum { M = 64, N = 16, K = 16, ND = N / 4 };
    const uint32_t blb = 512, bsb = 256, bytes = 1024; /* B: n-groups 256 apart, k-groups 512 apart */
    int A[M][K], B[N][K];
    uint8_t *img = calloc(bytes, 1);
    for (unsigned m = 0; m < M; m++)
        for (unsigned k = 0; k < K; k++) A[m][k] = irand(7) - 3;
    for (unsigned n = 0; n < N; n++)
        for (unsigned k = 0; k < K; k++) {
            B[n][k] = irand(9) - 4;
            uint16_t h = f32_to_f16((float)B[n][k]);
            memcpy(img + mnmajor_off(n, k, 2, blb, bsb), &h, 2);
        }
    uint32_t *afrag = calloc(128 * 4, 4);
    for (unsigned i = 0; i < 128; i++)
        for (unsigned j = 0; j < 4; j++)
            for (unsigned h = 0; h < 2; h++) {
                unsigned row = 16 * (i / 32) + (i % 32) / 4 + 8 * (j % 2), col = 2 * (i % 4) + 8 * (j / 2) + h;
                afrag[i * 4 + j] |= (uint32_t)f32_to_f16((float)A[row][col]) << (16 * h);
            }
    uint32_t *C = malloc(128 * ND * 4);
    memset(C, 0xFF, 128 * ND * 4); /* NaN pairs: a D that read them would be NaN */
    Str s = {0};
    wg_head(&s, bytes, ND);
    str_printf(&s, "  ld.param.u64 %%rd9, [areg];\n  shl.b32 %%r6, %%r0, 4;\n  cvt.u64.u32 %%rd10, %%r6;\n  add.u64 %%rd9, %%rd9, %%rd10;\n"
                   "  ld.global.v4.u32 {%%r10, %%r11, %%r12, %%r13}, [%%rd9];\n"
                   "  ld.param.u32 %%r7, [flag];\n  setp.ne.u32 %%p1, %%r7, 0;\n  wgmma.fence.sync.aligned;\n"
                   "  wgmma.mma_async.sync.aligned.m64n16k16.f16.f16.f16 ");
    dlist(&s, ND);
    str_printf(&s, ", {%%r10, %%r11, %%r12, %%r13}, %%rd5, %%p1, 1, -1, 1;\n  wgmma.mma_async.sync.aligned.m64n16k16.f16.f16.f16 ");
    dlist(&s, ND);
    str_printf(&s, ", {%%r10, %%r11, %%r12, %%r13}, %%rd5, 1, -1, 1, 1;\n");
    wg_tail(&s, ND);
    char *ptx = str_take(&s);
    TileDevModule *mod;
    TileDevFunction *f = load(d, ptx, "k", &mod);
    uint64_t dimg = upload(d, img, bytes), dc = upload(d, C, 128 * ND * 4), dout = poisoned(d, 128 * ND * 4);
    uint64_t dareg = upload(d, afrag, 128 * 4 * 4), da = 0, db = desc_noswz(0, blb, bsb);
    uint32_t flag = 0;
    void *args[] = {&dimg, &dc, &dout, &da, &db, &dareg, &flag};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 128, 1, 1, 0, NULL, args), DEV_OK, "%s\n%s", dev_last_error(d), ptx);
    uint32_t *out = malloc(128 * ND * 4);
    download(d, out, dout, 128 * ND * 4);
    for (unsigned i = 0; i < 128; i++)
        for (unsigned e = 0; e < 2 * ND; e++) {
            unsigned row, col;
            d_rc(i, e, &row, &col);
            int sum = 0;
            for (unsigned k = 0; k < K; k++) sum += A[row][k] * B[col][k];
            float got = (float)f16_to_d((uint16_t)(out[i * ND + e / 2] >> (16 * (e % 2))));
            cr_assert_eq(got, (float)(-2 * sum), "D[%u][%u] = %g, want %d", row, col, got, -2 * sum);
        }
    free(out), free(ptx), free(C), free(afrag), free(img);
    dev_module_unload(mod);
    dev_close(d);
}

/* ==== elect.sync d|p, membermask: d is the elected lane's %laneid in every thread of the mask, p true in that
 * lane only; the same mask elects the same lane (the ISA, elect.sync).  Masks that leave out lane 0, a single
 * lane, and threads outside the mask skipping the instruction by a guard; `_` for d. ==== */
Test(elect_isa, leader_and_lane_id_under_partial_masks) {
    TileDevice *d = open_emu(false);
    static const uint32_t masks[] = {0xFFFFFFFFu, 0xF0F0F0F0u, 0x80000000u, 0x00010100u, 0xAAAAAAA8u};
    const char *ptx = PTX_HEAD ".visible .entry e(.param .u64 out, .param .u32 mask)\n{\n"
                               "  .reg .pred %p<4>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<4>;\n"
                               "  mov.u32 %r0, %tid.x;\n  mov.u32 %r9, %laneid;\n  ld.param.u32 %r1, [mask];\n"
                               "  mov.u32 %r2, 77;\n  mov.u32 %r3, 9;\n  mov.u32 %r5, 9;\n"
                               "  shr.u32 %r4, %r1, %r9;\n  and.b32 %r4, %r4, 1;\n  setp.ne.u32 %p1, %r4, 0;\n"
                               "  @%p1 elect.sync %r2|%p2, %r1;\n  @%p1 selp.u32 %r3, 1, 0, %p2;\n"
                               "  @%p1 elect.sync _|%p3, %r1;\n  @%p1 selp.u32 %r5, 1, 0, %p3;\n"
                               "  ld.param.u64 %rd1, [out];\n  mul.wide.u32 %rd2, %r0, 12;\n  add.u64 %rd1, %rd1, %rd2;\n"
                               "  st.global.u32 [%rd1], %r2;\n  st.global.u32 [%rd1+4], %r3;\n  st.global.u32 [%rd1+8], %r5;\n  ret;\n}\n";
    TileDevModule *mod;
    TileDevFunction *f = load(d, ptx, "e", &mod);
    uint64_t dout = poisoned(d, 64 * 12);
    for (unsigned mi = 0; mi < sizeof masks / sizeof *masks; mi++) {
        uint32_t mask = masks[mi], out[64 * 3];
        void *args[] = {&dout, &mask};
        cr_assert_eq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
        download(d, out, dout, sizeof out);
        unsigned leader = (unsigned)__builtin_ctz(mask);
        for (unsigned i = 0; i < 64; i++) {
            unsigned lane = i % 32;
            bool in = mask >> lane & 1;
            cr_assert_eq(out[3 * i], in ? leader : 77u, "mask 0x%08x thread %u: d = %u", mask, i, out[3 * i]);
            cr_assert_eq(out[3 * i + 1], in ? (unsigned)(lane == leader) : 9u, "mask 0x%08x thread %u: p = %u", mask, i, out[3 * i + 1]);
            cr_assert_eq(out[3 * i + 2], in ? (unsigned)(lane == leader) : 9u, "mask 0x%08x thread %u: p (d _) = %u", mask, i, out[3 * i + 2]);
        }
    }
    dev_module_unload(mod);
    dev_close(d);
}

/* ==== 5-D tensor copies (tile mode): the bounding box at signed coordinates, traversal strides in the outer
 * dimensions (box element i of dimension d at coordinate c[d] + i * stride[d], ceil(box / stride) of them),
 * out-of-bounds elements zero on a load (zero fill: the tensor map's default) and skipped on a store, the box
 * dense in shared memory with dimension 0 fastest (no swizzle).  A u16 tensor of 10 x 5 x 4 x 3 x 3 elements
 * whose rows are 16 elements apart in memory; the box crosses the tensor's edge in every dimension. ==== */
static const char *tma5_ptx =
    PTX_HEAD ".visible .entry t(.param .align 64 .b8 tmap[128], .param .u32 c0, .param .u32 c1, .param .u32 c2, .param .u32 c3,"
             " .param .u32 c4, .param .u32 nbytes, .param .u64 io, .param .u32 store)\n{\n"
             "  .reg .pred %p<8>;\n  .reg .b32 %r<24>;\n  .reg .b64 %rd<8>;\n"
             "  .shared .align 1024 .b8 smem[1024];\n  .shared .align 8 .b64 bar;\n"
             "  mov.u32 %r0, %tid.x;\n  ld.param.u32 %r1, [c0];\n  ld.param.u32 %r2, [c1];\n  ld.param.u32 %r3, [c2];\n"
             "  ld.param.u32 %r4, [c3];\n  ld.param.u32 %r5, [c4];\n  ld.param.u32 %r6, [nbytes];\n  ld.param.u64 %rd0, [io];\n"
             "  ld.param.u32 %r7, [store];\n  setp.ne.u32 %p5, %r7, 0;\n"
             "  mov.u32 %r10, smem;\n  mov.u32 %r11, bar;\n  mov.u64 %rd1, tmap;\n  setp.ne.u32 %p0, %r0, 0;\n"
             "  shl.b32 %r12, %r0, 2;\n  add.u32 %r13, %r10, %r12;\n  cvt.u64.u32 %rd2, %r12;\n  add.u64 %rd2, %rd0, %rd2;\n"
             "  setp.lt.u32 %p2, %r12, %r6;\n"
             "  @!%p5 bra $LOAD;\n"
             /* store: io -> shared memory (4 bytes a thread), then the tensor store */
             "  @%p2 ld.global.u32 %r14, [%rd2];\n  @%p2 st.shared.u32 [%r13], %r14;\n"
             "  fence.proxy.async.shared::cta;\n  bar.sync 0;\n  @%p0 bra $END;\n"
             "  cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group [%rd1, {%r1, %r2, %r3, %r4, %r5}], [%r10];\n"
             "  cp.async.bulk.commit_group;\n  cp.async.bulk.wait_group 0;\n  bra $END;\n"
             "$LOAD:\n  @%p0 bra $S;\n  mbarrier.init.shared::cta.b64 [%r11], 1;\n  fence.mbarrier_init.release.cluster;\n$S:\n"
             "  bar.sync 0;\n  @%p0 bra $W;\n  mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [%r11], %r6;\n"
             "  cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r10], [%rd1, {%r1, %r2, %r3, %r4, %r5}], [%r11];\n"
             "$W:\n  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r11], 0;\n  @!%p1 bra $W;\n"
             "  @%p2 ld.shared.u32 %r14, [%r13];\n  @%p2 st.global.u32 [%rd2], %r14;\n"
             "$END:\n  ret;\n}\n";

Test(tma_isa, five_d_box_traversal_strides_out_of_bounds) {
    seed_rng();
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu:sm_90a", &ctx), TILE_OK);
    const uint64_t dims[5] = {10, 5, 4, 3, 3};
    const uint64_t strides[4] = {32, 32 * 5, 32 * 5 * 4, 32 * 5 * 4 * 3}; /* bytes, of dimensions 1..4 */
    const uint32_t box[5] = {8, 4, 3, 2, 3}, estr[5] = {1, 2, 2, 1, 2};
    const size_t gbytes = strides[3] * dims[4];
    uint32_t n[5], nel = 1;
    for (int k = 0; k < 5; k++) n[k] = (box[k] + estr[k] - 1) / estr[k], nel *= n[k];
    uint32_t nbytes = nel * 2;
    cr_assert_eq(nbytes, 256);
    uint8_t *g = malloc(gbytes), *io = malloc(nbytes), *got = malloc(gbytes), *want = malloc(gbytes);
    for (size_t i = 0; i < gbytes; i++) g[i] = (uint8_t)irand(256);
    tile_devptr dg, dio;
    cr_assert_eq(tile_malloc(ctx, gbytes, &dg), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, nbytes, &dio), TILE_OK);
    _Alignas(64) uint8_t map[128];
    cr_assert_eq(tile_tensor_map_encode(ctx, map, TILE_U16, 5, dg, dims, strides, box, estr, TILE_SWIZZLE_NONE), TILE_OK, "%s",
                 tile_last_error(ctx));
    check_ptxas(tma5_ptx);
    tile_module *m;
    cr_assert_eq(tile_module_load_ptx(ctx, tma5_ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "t", &k), TILE_OK);
    static const int32_t coords[][5] = {{-3, 1, 2, 2, -1}, {4, -3, -1, 1, 2}, {0, 0, 0, 0, 0}, {9, 4, 3, 2, 2}, {-8, 0, 0, 0, 0}};
    for (unsigned ci = 0; ci < sizeof coords / sizeof *coords; ci++) {
        const int32_t *c = coords[ci];
        for (uint32_t store = 0; store < 2; store++) {
            cr_assert_eq(tile_memcpy_htod(ctx, dg, g, gbytes), TILE_OK);
            for (unsigned i = 0; i < nbytes; i++) io[i] = (uint8_t)irand(256);
            if (store) cr_assert_eq(tile_memcpy_htod(ctx, dio, io, nbytes), TILE_OK);
            else cr_assert_eq(tile_memset(ctx, dio, 0xFF, nbytes), TILE_OK);
            void *args[] = {map, (void *)&c[0], (void *)&c[1], (void *)&c[2], (void *)&c[3], (void *)&c[4], &nbytes, &dio, &store};
            cr_assert_eq(tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){128, 1, 1}, 0, args, NULL), TILE_OK, "%s",
                         tile_last_error(ctx));
            memcpy(want, g, gbytes);
            uint8_t *box_got = malloc(nbytes);
            if (store) cr_assert_eq(tile_memcpy_dtoh(ctx, got, dg, gbytes), TILE_OK);
            else cr_assert_eq(tile_memcpy_dtoh(ctx, box_got, dio, nbytes), TILE_OK);
            unsigned e = 0;
            for (unsigned i4 = 0; i4 < n[4]; i4++)
                for (unsigned i3 = 0; i3 < n[3]; i3++)
                    for (unsigned i2 = 0; i2 < n[2]; i2++)
                        for (unsigned i1 = 0; i1 < n[1]; i1++)
                            for (unsigned i0 = 0; i0 < n[0]; i0++, e++) {
                                const unsigned ii[5] = {i0, i1, i2, i3, i4};
                                int64_t x[5];
                                bool inside = true;
                                size_t go = 0;
                                for (int dd = 0; dd < 5; dd++) {
                                    x[dd] = c[dd] + (int64_t)ii[dd] * estr[dd];
                                    inside = inside && x[dd] >= 0 && (uint64_t)x[dd] < dims[dd];
                                    go += dd ? (size_t)x[dd] * strides[dd - 1] : (size_t)x[dd] * 2;
                                }
                                if (store) {
                                    if (inside) memcpy(want + go, io + 2 * e, 2);
                                } else {
                                    uint16_t gv, wv = 0;
                                    memcpy(&gv, box_got + 2 * e, 2);
                                    if (inside) memcpy(&wv, g + go, 2);
                                    cr_assert_eq(gv, wv, "load at {%d,%d,%d,%d,%d}: box element (%u,%u,%u,%u,%u) = 0x%04x, want 0x%04x", c[0],
                                                 c[1], c[2], c[3], c[4], i0, i1, i2, i3, i4, gv, wv);
                                }
                            }
            if (store)
                for (size_t i = 0; i < gbytes; i++)
                    cr_assert_eq(got[i], want[i], "store at {%d,%d,%d,%d,%d}: global byte %zu = 0x%02x, want 0x%02x", c[0], c[1], c[2], c[3],
                                 c[4], i, got[i], want[i]);
            free(box_got);
        }
    }
    tile_module_unload(m);
    tile_free(ctx, dg);
    tile_free(ctx, dio);
    tile_context_destroy(ctx);
    free(g), free(io), free(got), free(want);
}

/* ==== mbarrier.pending_count: "the pending count of the mbarrier object prior to the arrive-on operation from
 * which the state register was obtained" (the ISA, mbarrier.pending_count), for states of
 * mbarrier.arrive.noComplete and mbarrier.arrive_drop.noComplete; arrive_drop lowers the expected count of the
 * phases after it, so the next phase starts with one arrival fewer pending. ==== */
Test(mbarrier_isa, pending_count_before_the_arrival) {
    TileDevice *d = open_emu(false);
    const char *ptx = PTX_HEAD ".visible .entry k(.param .u64 out)\n{\n"
                               "  .reg .pred %p<8>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<12>;\n  .shared .align 8 .b64 bar;\n"
                               "  ld.param.u64 %rd0, [out];\n"
                               "  mbarrier.init.shared::cta.b64 [bar], 5;\n"
                               "  mbarrier.arrive.noComplete.shared::cta.b64 %rd1, [bar], 2;\n"      /* 5 pending before */
                               "  mbarrier.arrive.noComplete.shared::cta.b64 %rd2, [bar], 1;\n"      /* 3 */
                               "  mbarrier.arrive_drop.noComplete.shared::cta.b64 %rd3, [bar], 1;\n" /* 2; the next phases expect 4 */
                               "  mbarrier.test_wait.parity.shared::cta.b64 %p1, [bar], 0;\n"        /* 1 pending: not complete */
                               "  mbarrier.arrive.shared::cta.b64 %rd4, [bar];\n"                    /* completes phase 0 */
                               "  mbarrier.test_wait.parity.shared::cta.b64 %p2, [bar], 0;\n"
                               "  mbarrier.arrive.noComplete.shared::cta.b64 %rd5, [bar], 3;\n"      /* phase 1: 4 pending before */
                               "  mbarrier.pending_count.b64 %r1, %rd1;\n  mbarrier.pending_count.b64 %r2, %rd2;\n"
                               "  mbarrier.pending_count.b64 %r3, %rd3;\n  mbarrier.pending_count.b64 %r4, %rd5;\n"
                               "  selp.u32 %r5, 1, 0, %p1;\n  selp.u32 %r6, 1, 0, %p2;\n"
                               "  st.global.v4.u32 [%rd0], {%r1, %r2, %r3, %r4};\n  st.global.v2.u32 [%rd0+16], {%r5, %r6};\n  ret;\n}\n";
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out = poisoned(d, 6 * 4);
    void *args[] = {&out};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
    uint32_t h[6];
    download(d, h, out, sizeof h);
    const uint32_t want[6] = {5, 3, 2, 4, 0, 1};
    for (unsigned i = 0; i < 6; i++) cr_assert_eq(h[i], want[i], "answer %u is %u, want %u", i, h[i], want[i]);
    dev_module_unload(m);
    dev_close(d);
}

/* ==== the optional operands of the tensor and bulk copies in the ISA's order: [dst], [tmap, {c}], [mbar]
 * {, ctaMask} {, cache-policy} (.multicast::cluster before .L2::cache_hint), a store's [tmap, {c}], [src]
 * {, cache-policy}, cp.async.bulk's [dst], [src], size, [mbar] {, cache-policy}, and the L2 prefetches: the
 * data lands as without them.  A u32 tensor of 20 x 7 (rows 24 elements apart), an 8 x 4 box at (14, 5) that
 * crosses two edges, copied in, bulk-copied, and stored back at (2, 1); one CTA, a one-CTA cluster mask. ==== */
static const char *hint_ptx =
    PTX_HEAD ".visible .entry h(.param .align 64 .b8 tmap[128], .param .u64 src, .param .u64 out)\n{\n"
             "  .reg .pred %p<4>;\n  .reg .b16 %rs<2>;\n  .reg .b32 %r<24>;\n  .reg .b64 %rd<12>;\n"
             "  .shared .align 128 .b8 sa[128];\n  .shared .align 128 .b8 sb[128];\n  .shared .align 128 .b8 sc[128];\n"
             "  .shared .align 8 .b64 bar;\n"
             "  mov.u32 %r0, %tid.x;\n  setp.ne.u32 %p0, %r0, 0;\n  mov.u64 %rd1, tmap;\n  ld.param.u64 %rd2, [src];\n"
             "  ld.param.u64 %rd3, [out];\n  mov.u32 %r1, sa;\n  mov.u32 %r2, sb;\n  mov.u32 %r3, sc;\n  mov.u32 %r4, bar;\n"
             "  mov.u32 %r5, 14;\n  mov.u32 %r6, 5;\n  mov.u16 %rs1, 1;\n"
             "  createpolicy.fractional.L2::evict_last.b64 %rd4, 1.0;\n"
             "  @%p0 bra $WAIT;\n  mbarrier.init.shared::cta.b64 [%r4], 1;\n  fence.mbarrier_init.release.cluster;\n"
             "  cp.async.bulk.prefetch.tensor.2d.L2.global.tile.L2::cache_hint [%rd1, {%r5, %r6}], %rd4;\n"
             "  cp.async.bulk.prefetch.L2.global.L2::cache_hint [%rd2], 128, %rd4;\n"
             "  mbarrier.arrive.expect_tx.shared::cta.b64 %rd5, [%r4], 384;\n"
             "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
             " [%r1], [%rd1, {%r5, %r6}], [%r4], %rd4;\n"
             "  cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint"
             " [%r2], [%rd1, {%r5, %r6}], [%r4], %rs1, %rd4;\n"
             "  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%r3], [%rd2], 128, [%r4], %rd4;\n"
             "$WAIT:\n  bar.sync 0;\n"
             "$W:\n  mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r4], 0;\n  @!%p1 bra $W;\n"
             /* out[0..383]: the three buffers as they landed */
             "  setp.lt.u32 %p2, %r0, 96;\n  @!%p2 bra $ST;\n  shl.b32 %r7, %r0, 2;\n  add.u32 %r8, %r1, %r7;\n"
             "  ld.shared.u32 %r9, [%r8];\n  cvt.u64.u32 %rd6, %r7;\n  add.u64 %rd7, %rd3, %rd6;\n  st.global.u32 [%rd7], %r9;\n"
             "$ST:\n  bar.sync 0;\n  @%p0 bra $END;\n  mov.u32 %r10, 2;\n  mov.u32 %r11, 1;\n"
             "  cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group.L2::cache_hint [%rd1, {%r10, %r11}], [%r3], %rd4;\n"
             "  cp.async.bulk.commit_group;\n  cp.async.bulk.wait_group 0;\n$END:\n  ret;\n}\n";

Test(tma_isa, cache_hint_multicast_and_prefetch_operands) {
    seed_rng();
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu:sm_90a", &ctx), TILE_OK);
    const uint64_t dims[2] = {20, 7}, strides[1] = {96};
    const uint32_t box[2] = {8, 4}, estr[2] = {1, 1};
    const size_t gbytes = 96 * 7;
    uint32_t *g = malloc(gbytes), src[32], out[96], *got = malloc(gbytes);
    for (size_t i = 0; i < gbytes / 4; i++) g[i] = (uint32_t)irand(1 << 30);
    for (unsigned i = 0; i < 32; i++) src[i] = (uint32_t)irand(1 << 30);
    tile_devptr dg, dsrc, dout;
    cr_assert_eq(tile_malloc(ctx, gbytes, &dg), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dg, g, gbytes), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof src, &dsrc), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dsrc, src, sizeof src), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof out, &dout), TILE_OK);
    cr_assert_eq(tile_memset(ctx, dout, 0xFF, sizeof out), TILE_OK);
    _Alignas(64) uint8_t map[128];
    cr_assert_eq(tile_tensor_map_encode(ctx, map, TILE_U32, 2, dg, dims, strides, box, estr, TILE_SWIZZLE_NONE), TILE_OK, "%s",
                 tile_last_error(ctx));
    check_ptxas(hint_ptx);
    tile_module *m;
    cr_assert_eq(tile_module_load_ptx(ctx, hint_ptx, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "h", &k), TILE_OK);
    void *args[] = {map, &dsrc, &dout};
    cr_assert_eq(tile_launch_raw(k, (tile_dim3){1, 1, 1}, (tile_dim3){128, 1, 1}, 0, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dout, sizeof out), TILE_OK);
    cr_assert_eq(tile_memcpy_dtoh(ctx, got, dg, gbytes), TILE_OK);
    for (unsigned b = 0; b < 2; b++) /* the box, twice: out-of-bounds elements zero */
        for (unsigned r = 0; r < 4; r++)
            for (unsigned c = 0; c < 8; c++) {
                unsigned x = 14 + c, y = 5 + r;
                uint32_t want = x < 20 && y < 7 ? g[y * 24 + x] : 0;
                cr_assert_eq(out[32 * b + 8 * r + c], want, "copy %u, box (%u, %u): 0x%x, want 0x%x", b, c, r, out[32 * b + 8 * r + c], want);
            }
    for (unsigned i = 0; i < 32; i++) cr_assert_eq(out[64 + i], src[i], "bulk copy word %u", i);
    for (unsigned y = 0; y < 7; y++) /* the store of sc at (2, 1): src's words in the box, the rest untouched */
        for (unsigned x = 0; x < 24; x++) {
            bool in = x >= 2 && x < 10 && y >= 1 && y < 5;
            uint32_t want = in ? src[(y - 1) * 8 + (x - 2)] : g[y * 24 + x];
            cr_assert_eq(got[y * 24 + x], want, "stored tensor (%u, %u): 0x%x, want 0x%x", x, y, got[y * 24 + x], want);
        }
    tile_module_unload(m);
    tile_free(ctx, dg), tile_free(ctx, dsrc), tile_free(ctx, dout);
    tile_context_destroy(ctx);
    free(g), free(got);
}

/* ==== tf32: "wgmma.mma_async operation involving type .tf32 will truncate lower 13 bits of the 32-bit input
 * data before multiplication is issued" (the ISA, wgmma.mma_async).  f32 inputs with all 23 mantissa bits set
 * at random, A in registers (m64nNk8's A fragment: register j of lane l holds row 16w + l/4 + 8(j%2), column
 * l%4 + 4(j/2)) and B K-major without swizzle (LBO 256: a gap between the two core matrices along K); the
 * product of the truncated values, accumulated in f32, within 1e-5 of the sum of |products|: inputs rounded to
 * nearest instead, or not truncated at all, miss by about 1e-3. ==== */
Test(wgmma_isa, tf32_inputs_truncated) {
    seed_rng();
    TileDevice *d = open_emu(false);
    enum { M = 64, N = 8, K = 8, ND = N / 2 };
    const uint32_t blb = 256, bsb = 1024, bytes = 512;
    float A[M][K], B[N][K];
    uint8_t *img = calloc(bytes, 1);
    for (unsigned m = 0; m < M; m++)
        for (unsigned k = 0; k < K; k++) A[m][k] = (float)(urand() * 2);
    for (unsigned n = 0; n < N; n++)
        for (unsigned k = 0; k < K; k++) {
            B[n][k] = (float)(urand() * 2);
            memcpy(img + kmajor_off(n, k, 4, blb, bsb), &B[n][k], 4);
        }
    uint32_t *afrag = calloc(128 * 4, 4);
    for (unsigned i = 0; i < 128; i++)
        for (unsigned j = 0; j < 4; j++) memcpy(&afrag[i * 4 + j], &A[16 * (i / 32) + (i % 32) / 4 + 8 * (j % 2)][i % 4 + 4 * (j / 2)], 4);
    uint32_t *C = malloc(128 * ND * 4);
    memset(C, 0xFF, 128 * ND * 4);
    Str s = {0};
    wg_head(&s, bytes, ND);
    str_printf(&s, "  ld.param.u64 %%rd9, [areg];\n  shl.b32 %%r6, %%r0, 4;\n  cvt.u64.u32 %%rd10, %%r6;\n  add.u64 %%rd9, %%rd9, %%rd10;\n"
                   "  ld.global.v4.u32 {%%r10, %%r11, %%r12, %%r13}, [%%rd9];\n"
                   "  ld.param.u32 %%r7, [flag];\n  setp.ne.u32 %%p1, %%r7, 0;\n  wgmma.fence.sync.aligned;\n"
                   "  wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 ");
    dlist(&s, ND);
    str_printf(&s, ", {%%r10, %%r11, %%r12, %%r13}, %%rd5, %%p1, 1, 1;\n");
    wg_tail(&s, ND);
    char *ptx = str_take(&s);
    TileDevModule *mod;
    TileDevFunction *f = load(d, ptx, "k", &mod);
    uint64_t dimg = upload(d, img, bytes), dc = upload(d, C, 128 * ND * 4), dout = poisoned(d, 128 * ND * 4);
    uint64_t dareg = upload(d, afrag, 128 * 4 * 4), da = 0, db = desc_noswz(0, blb, bsb);
    uint32_t flag = 0;
    void *args[] = {&dimg, &dc, &dout, &da, &db, &dareg, &flag};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 128, 1, 1, 0, NULL, args), DEV_OK, "%s\n%s", dev_last_error(d), ptx);
    float *out = malloc(128 * ND * 4);
    download(d, out, dout, 128 * ND * 4);
    for (unsigned i = 0; i < 128; i++)
        for (unsigned e = 0; e < ND; e++) {
            unsigned row, col;
            d_rc(i, e, &row, &col);
            double want = 0, mag = 0;
            for (unsigned k = 0; k < K; k++) {
                uint32_t ab, bb;
                memcpy(&ab, &A[row][k], 4), memcpy(&bb, &B[col][k], 4);
                ab &= 0xFFFFE000u, bb &= 0xFFFFE000u;
                float at, bt;
                memcpy(&at, &ab, 4), memcpy(&bt, &bb, 4);
                want += (double)at * bt, mag += fabs((double)at * bt);
            }
            cr_assert(fabs(out[i * ND + e] - want) <= 1e-5 * mag, "D[%u][%u] = %.9g, want %.9g (sum of |products| %g)", row, col,
                      out[i * ND + e], want, mag);
        }
    free(out), free(ptx), free(C), free(afrag), free(img);
    dev_module_unload(mod);
    dev_close(d);
}

/* ==== sparse wgmma's metadata register is read at issue: the ISA names only the accumulator and A's registers as
 * ones a wgmma may still read (wgmma.fence: "Only the accumulator register and the input registers containing the
 * fragments of matrix A require this ordering"; wgmma.wait_group: accessing them before the wait is undefined), so
 * sp-meta may be rewritten as soon as the wgmma is issued.  m64n8k32.f32.f16.f16 with A in registers (the
 * m64nNk16 fragment of the 16 values a row keeps) and sp-sel 0: lanes 4g and 4g + 1 give chunks 0-3 and 4-7 of
 * rows 16w + g (bits 0-15) and 16w + g + 8 (bits 16-31), a nibble a chunk of 4 columns, its two 2-bit indices low
 * first.  Every chunk keeps columns 1 and 3 (0b1101); the metadata register then becomes 0b0100 (columns 0 and 1)
 * before the wait: the result is the first metadata's, and the launch reports nothing. ==== */
Test(wgmma_isa, sparse_metadata_read_at_issue) {
    seed_rng();
    TileDevice *d = open_emu(false);
    enum { M = 64, N = 8, KA = 16, KB = 32, ND = N / 2 };
    const uint32_t blb = 128, bsb = 1024, bytes = 512;
    int A[M][KA], B[N][KB];
    uint8_t *img = calloc(bytes, 1);
    for (unsigned m = 0; m < M; m++)
        for (unsigned k = 0; k < KA; k++) A[m][k] = irand(7) - 3;
    for (unsigned n = 0; n < N; n++)
        for (unsigned k = 0; k < KB; k++) {
            B[n][k] = irand(9) - 4;
            uint16_t h = f32_to_f16((float)B[n][k]);
            memcpy(img + kmajor_off(n, k, 2, blb, bsb), &h, 2);
        }
    uint32_t *afrag = calloc(128 * 4, 4);
    for (unsigned i = 0; i < 128; i++)
        for (unsigned j = 0; j < 4; j++)
            for (unsigned h = 0; h < 2; h++) {
                unsigned row = 16 * (i / 32) + (i % 32) / 4 + 8 * (j % 2), col = 2 * (i % 4) + 8 * (j / 2) + h;
                afrag[i * 4 + j] |= (uint32_t)f32_to_f16((float)A[row][col]) << (16 * h);
            }
    uint32_t *C = calloc(128 * ND, 4);
    Str s = {0};
    wg_head(&s, bytes, ND);
    str_printf(&s, "  ld.param.u64 %%rd9, [areg];\n  shl.b32 %%r6, %%r0, 4;\n  cvt.u64.u32 %%rd10, %%r6;\n  add.u64 %%rd9, %%rd9, %%rd10;\n"
                   "  ld.global.v4.u32 {%%r10, %%r11, %%r12, %%r13}, [%%rd9];\n  mov.u32 %%r14, 0xDDDDDDDD;\n"
                   "  wgmma.fence.sync.aligned;\n  wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 ");
    dlist(&s, ND);
    str_printf(&s, ", {%%r10, %%r11, %%r12, %%r13}, %%rd5, %%r14, 0, 0, 1, 1, 0;\n  mov.u32 %%r14, 0x44444444;\n");
    wg_tail(&s, ND);
    char *ptx = str_take(&s);
    TileDevModule *mod;
    TileDevFunction *f = load(d, ptx, "k", &mod);
    uint64_t dimg = upload(d, img, bytes), dc = upload(d, C, 128 * ND * 4), dout = poisoned(d, 128 * ND * 4);
    uint64_t dareg = upload(d, afrag, 128 * 4 * 4), da = 0, db = desc_noswz(0, blb, bsb);
    uint32_t flag = 0;
    void *args[] = {&dimg, &dc, &dout, &da, &db, &dareg, &flag};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 128, 1, 1, 0, NULL, args), DEV_OK, "%s\n%s", dev_last_error(d), ptx);
    float *out = malloc(128 * ND * 4);
    download(d, out, dout, 128 * ND * 4);
    for (unsigned i = 0; i < 128; i++)
        for (unsigned e = 0; e < ND; e++) {
            unsigned row, col;
            d_rc(i, e, &row, &col);
            int sum = 0;
            for (unsigned j = 0; j < KA; j++) sum += A[row][j] * B[col][4 * (j / 2) + (j % 2 ? 3 : 1)];
            cr_assert_eq(out[i * ND + e], (float)sum, "D[%u][%u] = %g, want %d", row, col, out[i * ND + e], sum);
        }
    free(out), free(ptx), free(C), free(afrag), free(img);
    dev_module_unload(mod);
    dev_close(d);
}

/* ==== mbarrier forms outside the ISA's syntax, which ptxas of CUDA 13 refuses: refused at load with their line
 * (each of them loaded and ran before, its modifiers ignored), next to the forms it takes (PTX 8.7: .relaxed on
 * arrivals and waits needs 8.6, test_emu_refuse checks that). ==== */
static char *mbar_form_ptx(const char *line) {
    Str s = {0};
    str_printf(&s, ".version 8.7\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n .reg .pred %%p<4>;\n .reg .b32 %%r<8>;\n .reg .b64 %%rd<8>;\n"
                            " .shared .align 8 .b64 bar;\n mov.u32 %%r1, bar;\n cvta.shared.u64 %%rd2, bar;\n"
                            " mbarrier.init.shared::cta.b64 [%%r1], 4;\n mbarrier.arrive.shared::cta.b64 %%rd1, [%%r1];\n %s\n ret;\n}\n",
               line);
    return str_take(&s); /* the line under test is line 14 */
}

Test(mbarrier_isa, forms_outside_the_isa_refused) {
    TileDevice *d = open_emu(false);
    static const struct { const char *line, *why; } bad[] = {
        {"mbarrier.try_wait.parity.shared::cluster.b64 %p1, [%r1], 0;", "takes .shared::cluster only on arrive"},
        {"mbarrier.test_wait.shared::cluster.b64 %p1, [%r1], %rd1;", "takes .shared::cluster only on arrive"},
        {"mbarrier.init.shared::cluster.b64 [%r1], 1;", "takes .shared::cluster only on arrive"},
        {"mbarrier.inval.shared::cluster.b64 [%r1];", "takes .shared::cluster only on arrive"},
        {"mbarrier.arrive.shared::cluster.b64 %rd1, [%r1];", "its destination is the sink '_'"},
        {"mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 %rd1, [%r1], 16;", "its destination is the sink '_'"},
        {"mbarrier.arrive.noComplete.shared::cluster.b64 _, [%r1], 1;", "no .noComplete with .shared::cluster"},
        {"mbarrier.arrive.expect_tx.noComplete.shared::cta.b64 %rd1, [%r1], 1;", ".noComplete only on arrive and arrive_drop"},
        {"mbarrier.arrive.noComplete.release.cluster.shared::cta.b64 %rd1, [%r1], 1;", "no semantics or .release.cta only"},
        {"mbarrier.arrive_drop.noComplete.relaxed.cta.shared::cta.b64 %rd1, [%r1], 1;", "no semantics or .release.cta only"},
        {"mbarrier.try_wait.acquire.shared::cta.b64 %p1, [%r1], %rd1;", "a semantics only with a scope"},
        {"mbarrier.arrive.release.shared::cta.b64 %rd1, [%r1];", "a semantics only with a scope"},
        {"mbarrier.arrive.cta.shared::cta.b64 %rd1, [%r1];", "a scope (.cta, .cluster) only after a semantics"},
        {"mbarrier.try_wait.parity.cluster.shared::cta.b64 %p1, [%r1], 0;", "a scope (.cta, .cluster) only after a semantics"},
        {"mbarrier.expect_tx.release.cta.shared::cta.b64 [%r1], 16;", "takes .relaxed"},
        {"mbarrier.arrive.acquire.cta.shared::cta.b64 %rd1, [%r1];", "takes .release or .relaxed"},
        {"mbarrier.try_wait.release.cta.shared::cta.b64 %p1, [%r1], %rd1;", "takes .acquire or .relaxed"},
        {"mbarrier.init.relaxed.cta.shared::cta.b64 [%r1], 1;", "takes no semantics"},
        {"mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], 2;", "the phase parity is 0 or 1, not 2"},
        {"mbarrier.arrive.shared::cta.b64 %rd1, [%r1], 0;", "the arrival count is positive, not 0"},
        /* a 32-bit register for a state, a 64-bit one for a count, a parity or pending_count's result */
        {"mbarrier.arrive.shared::cta.b64 %r3, [%r1];", "operand 1, register '%r3' of type .b32, does not fit .b64"},
        {"mbarrier.test_wait.parity.shared::cta.b64 %p1, [%r1], %rd1;", "operand 3, register '%rd1' of type .b64, does not fit .u32"},
        {"mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r1], %rd1;", "operand 2, register '%rd1' of type .b64, does not fit .u32"},
        {"mbarrier.pending_count.b64 %rd3, %rd1;", "operand 1, register '%rd3' of type .b64, does not fit .u32"},
        {"cp.async.mbarrier.arrive.noinc.shared::cluster.b64 [%r1];", "an mbarrier of this CTA"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *ptx = mbar_form_ptx(bad[i].line), want[160];
        char log[512];
        cr_assert_neq(ptxas_run(ptx, "sm_90a", log, sizeof log), 0, "ptxas takes '%s'", bad[i].line);
        snprintf(want, sizeof want, "ptx:14: '%.*s'", (int)strcspn(bad[i].line, " "), bad[i].line);
        expect_load_error(d, ptx, want);
        expect_load_error(d, ptx, bad[i].why);
        free(ptx);
    }
    static const char *const good[] = {
        "mbarrier.arrive_drop.expect_tx.release.cluster.shared::cluster.b64 _, [%r1], 8;",
        "mbarrier.arrive.noComplete.release.cta.shared::cta.b64 %rd1, [%r1], 1;",
        "mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%r1], 2;",
        "mbarrier.expect_tx.relaxed.cluster.shared::cluster.b64 [%r1], 16;",
        "mbarrier.complete_tx.shared::cluster.b64 [%r1], 0;",
        "mbarrier.try_wait.parity.acquire.cta.b64 %p1, [%rd2], 1;",
        "mbarrier.test_wait.relaxed.cluster.shared::cta.b64 %p1, [%r1], %rd1;",
        "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 0;",
        "mbarrier.arrive_drop.noComplete.shared::cta.b64 %rd1, [%r1], 1;",
        /* forms other compilers write (Triton 3.9, CUTLASS): a sink state on this CTA's mbarrier, a wait with a time
         * hint, a generic address with a semantics and scope */
        "mbarrier.arrive.shared::cta.b64 _, [%r1], 1;",
        "mbarrier.arrive_drop.shared::cta.b64 _, [%r1];",
        "mbarrier.try_wait.parity.relaxed.cta.shared::cta.b64 %p1, [%r1], 0, 100;",
        "mbarrier.try_wait.shared::cta.b64 %p1, [%r1], %rd1, 1000;",
        "mbarrier.arrive.release.cluster.b64 _, [%rd2];",
        "mbarrier.arrive.noComplete.release.cta.shared.b64 %rd1, [%r1], 1;",
        /* and mapa / getctarank of .s32 (the ISA writes .u32; ptxas takes both), refused before */
        "mapa.shared::cluster.s32 %r2, %r1, 0;",
        "getctarank.shared::cluster.s32 %r2, %r1;",
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        char *ptx = mbar_form_ptx(good[i]);
        TileDevModule *m;
        TileDevFunction *f = load(d, ptx, "k", &m); /* ptxas takes it too (check_ptxas) */
        cr_assert_eq(dev_launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL), DEV_OK, "'%s': %s", good[i], dev_last_error(d));
        dev_module_unload(m);
        free(ptx);
    }
    dev_close(d);
}

/* The line under test is line 15, after registers of each kind, a .global tensor map gtm and a .param one tmap. */
static char *sm90_form_ptx(const char *line) {
    Str s = {0};
    str_printf(&s, ".version 8.7\n.target sm_90a\n.address_size 64\n"
                   ".visible .entry k(.param .u64 out, .param .align 64 .b8 tmap[128])\n{\n"
                   " .reg .pred %%p<2>;\n .reg .b32 %%r<8>; .reg .u32 %%u<8>; .reg .s32 %%s<8>; .reg .f32 %%f<8>; .reg .f16x2 %%x<4>;"
                   " .reg .b16 %%h<4>;\n .reg .b64 %%rd<8>;\n .shared .align 8 .b64 bar;\n"
                   " .shared .align 128 .b8 buf[1024]; .global .align 64 .b8 gtm[128];\n"
                   " mov.u32 %%r1, bar;\n mov.u32 %%r2, buf;\n mov.u64 %%rd3, tmap;\n ld.param.u64 %%rd4, [out];\n %s\n ret;\n}\n",
               line);
    return str_take(&s);
}

/* ==== bulk and tensor copy forms, and those of the other sm_90 instructions (wgmma's group instructions, elect,
 * setmaxnreg, stmatrix, mapa, getctarank, griddepcontrol, the tensor-map fences, copies and replacements), outside
 * the ISA's syntax (ptxas of CUDA 13 refuses each: "State space incorrect", ".completion_mechanism modifier
 * required", ".level modifier required", ".sync modifier required", "Illegal modifier", "Predicate output
 * expected", "Argument vector size mismatch", "Integer constant expression expected"): refused at load with their
 * line; each loaded before and ran as the nearest form the emulator knew. ==== */
Test(forms_isa, bulk_and_other_sm90_forms_outside_the_isa_refused) {
    TileDevice *d = open_emu(false);
    static const struct { const char *line, *why; } bad[] = {
        {"cp.async.bulk.shared::cluster.global [%r2], [%rd4], 16, [%r1];", "needs .mbarrier::complete_tx::bytes"},
        {"cp.async.bulk.global.shared::cluster.bulk_group [%rd4], [%r2], 16;", "a shared source is .shared::cta"},
        {"cp.async.bulk.shared::cta.shared::cta.mbarrier::complete_tx::bytes [%r2], [%r2+512], 16, [%r1];",
         "a shared destination of one .shared::cluster"},
        {"cp.reduce.async.bulk.shared::cta.shared::cta.mbarrier::complete_tx::bytes.add.u32 [%r2], [%r2+512], 16, [%r1];",
         "a shared destination of one .shared::cluster"},
        {"cp.async.bulk.commit_group.sync;", "takes no modifiers"},
        {"cp.async.bulk.wait_group.sync 0;", "takes no modifier but .read"},
        {"cp.async.bulk.prefetch.L2.global [%rd4], 16, %rd4;", "a cache policy only with .L2::cache_hint"},
        {"cp.async.bulk.prefetch.global [%rd4], 16;", "needs .L2.global"},
        {"cp.async.bulk.prefetch.L2 [%rd4], 16;", "needs .L2.global"},
        {"cp.async.bulk.prefetch.tensor.1d.global.tile [%rd3, {%r3}];", "needs .L2.global"},
        {"cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%rd3, {%r3}];", "with as many coordinates"},
        {"cp.async.bulk.tensor.1d.shared::cluster.global.tile [%r2], [%rd3, {%r3}], [%r1];", "needs .mbarrier::complete_tx::bytes"},
        {"cp.async.bulk.tensor.1d.global.shared::cluster.tile.bulk_group [%rd3, {%r3}], [%r2];", "a tensor store's source is .shared::cta"},
        /* the other sm_90 instructions' required and forbidden modifiers */
        {"wgmma.fence;", "is written wgmma.fence.sync.aligned"},
        {"wgmma.fence.sync.aligned.cta;", "is written wgmma.fence.sync.aligned"},
        {"wgmma.wait_group.sync.aligned.cta 0;", "is written wgmma.wait_group.sync.aligned"},
        {"elect.sync %r3, 0xffffffff;", "needs a predicate destination"},
        {"elect.sync.aligned %r3|%p1, 0xffffffff;", "is written elect.sync"},
        {"setmaxnreg.inc.sync.u32 240;", "is written setmaxnreg.inc.sync.aligned.u32"},
        {"setmaxnreg.dec.sync.aligned.b32 40;", "is written setmaxnreg.inc.sync.aligned.u32"},
        {"stmatrix.sync.aligned.m8n8.x1.shared::cluster.b16 [%r2], {%r3};", "stores into .shared::cta"},
        {"stmatrix.sync.m8n8.x1.shared.b16 [%r2], {%r3};", "needs .sync.aligned.m8n8"},
        {"stmatrix.sync.aligned.x1.shared.b16 [%r2], {%r3};", "needs .sync.aligned.m8n8"},
        {"mapa.shared::cta.u32 %r3, %r2, 1;", "not .shared::cta"},
        {"getctarank.shared::cta.u32 %r3, %r2;", "not .shared::cta"},
        {"griddepcontrol.wait.sync;", "is written griddepcontrol.wait"},
        {"fence.proxy.tensormap::generic.acquire.gpu [%rd4], 64;", "the size is the immediate 128"},
        {"tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu [%rd4], [%r2], 128;", "needs .tensormap::generic and .sync.aligned"},
        {"tensormap.cp_fenceproxy.global.shared::cta.release.gpu.sync.aligned [%rd4], [%r2], 128;", "needs .tensormap::generic and .sync.aligned"},
        {"tensormap.replace.tile.swizzle_mode.shared::cta.b1024.b32 [%r2], %r3;", "the new value of this field is an immediate"},
        {"tensormap.replace.tile.fill_mode.shared::cta.b1024.b32 [%r2], %r3;", "the new value of this field is an immediate"},
        {"tensormap.replace.tile.global_address.shared::cluster.b1024.b64 [%r2], %rd4;", "in .shared::cta or .global memory"},
        /* 64-bit registers where the operand is 32 bits ("Arguments mismatch") */
        {"elect.sync %rd1|%p1, 0xffffffff;", "operand 1, register '%rd1' of type .b64, does not fit .u32"},
        {"stmatrix.sync.aligned.m8n8.x2.shared.b16 [%r2], {%rd1, %rd2};", "operand 2, register '%rd1' of type .b64, does not fit .b32"},
        {"red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r2], %rd1, [%r1];",
         "operand 2, register '%rd1' of type .b64, does not fit .u32"},
        {"cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r2], [%rd3, {%rd4}], [%r1];",
         "register '%rd4' of type .b64, does not fit .b32"},
        {"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r2], [%rd4], %rd1, [%r1];",
         "operand 3, register '%rd1' of type .b64, does not fit .u32"},
        {"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r2], [%rd4], 16, [%r1], %r3;",
         "operand 5, register '%r3' of type .b32, does not fit .u16"},
        {"wgmma.mma_async.aligned.m64n8k16.f32.f16.f16 {%r1, %r2, %r3, %r4}, %rd1, %rd2, %p1, 1, 1, 0, 0;", "needs .sync"},
        {"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r1, %r2, %r3, %r4}, %rd1, %rd2, 2, 1, 1, 0, 0;",
         "scale-d (operand 4) is a predicate or an immediate 0 or 1"},
        {"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r1, %r2, %r3, %r4}, %rd1, %rd2, %r5, 1, 1, 0, 0;",
         "scale-d (operand 4) is a predicate or an immediate 0 or 1"},
        {"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r1, %r2, %r3, %r4}, %r1, %rd2, %p1, 1, 1, 0, 0;",
         "operand 2, register '%r1' of type .b32, does not fit .b64"},
        {"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r1, %r2, %r3, %r4}, {%rd1, %rd2, %rd3, %rd4}, %rd2, %p1, 1, 1, 0;",
         "operand 2, register '%rd1' of type .b64, does not fit .b32"},
        {"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%rd1, %rd2, %rd3, %rd4}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
         "operand 1, register '%rd1' of type .b64, does not fit .b32"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *ptx = sm90_form_ptx(bad[i].line), want[160], log[512];
        cr_assert_neq(ptxas_run(ptx, "sm_90a", log, sizeof log), 0, "ptxas takes '%s'", bad[i].line);
        snprintf(want, sizeof want, "ptx:15: '%.*s'", (int)strcspn(bad[i].line, " ;"), bad[i].line);
        expect_load_error(d, ptx, want);
        expect_load_error(d, ptx, bad[i].why);
        free(ptx);
    }
    dev_close(d);
}

/* ==== operand registers ptxas of CUDA 13 refuses on sm_90's instructions ("Arguments mismatch", "Unexpected
 * instruction types", "Vector with elements of different types", "Vector of size 1 is expected", "State space
 * mismatch", "Illegal modifier"): refused at load with their line (each loaded and ran on the registers' bits),
 * next to the neighbours ptxas takes, which load. ==== */
Test(forms_isa, sm90_operand_registers_ptxas_refuses) {
    TileDevice *d = open_emu(false);
    static const struct { const char *line, *why; } bad[] = {
        {"elect.sync %r3|%p1, %rd1;", "operand 2, register '%rd1' of type .b64, does not fit .u32"},
        {"elect.sync %f1|%p1, 0xffffffff;", "operand 1, register '%f1' of type .f32, does not fit .u32"},
        {"elect.sync %x1|%p1, %r4;", "operand 1, register '%x1' of type .f16x2, does not fit .u32"},
        {"elect.sync _|%p1, %h1;", "operand 2, register '%h1' of type .b16, does not fit .u32"},
        {"cp.async.bulk.prefetch.L2.global [%rd4], %rd1;", "operand 2, register '%rd1' of type .b64, does not fit .u32"},
        {"cp.async.bulk.prefetch.L2.global [%rd4], %f1;", "operand 2, register '%f1' of type .f32, does not fit .u32"},
        {"mapa.shared::cluster.u32 %r3, %r2, %rd1;", "operand 3, register '%rd1' of type .b64, does not fit .u32"},
        {"mapa.shared::cluster.u64 %rd5, %rd4, %h1;", "operand 3, register '%h1' of type .b16, does not fit .u32"},
        {"mapa.shared::cluster.u32 %r3, %r2, %f1;", "operand 3, register '%f1' of type .f32, does not fit .u32"},
        {"cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r2], [tmap, {%r3}], [%r1];",
         "the tensor map 'tmap' is a .param variable"},
        {"cp.async.bulk.tensor.1d.global.shared::cta.tile.bulk_group [tmap, {%r3}], [%r2];", "the tensor map 'tmap' is a .param variable"},
        {"cp.async.bulk.prefetch.tensor.1d.L2.global.tile [tmap, {%r3}];", "the tensor map 'tmap' is a .param variable"},
        {"cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r2], [buf, {%r3}], [%r1];",
         "the tensor map 'buf' is a .shared variable"},
        {"stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r2], %r3;", "a register list, {%r3} for .x1"},
        /* a float register as a bulk copy's size, an mbarrier's count or tx bytes, a multicast mask or a cache policy */
        {"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r2], [%rd4], %f1, [%r1];",
         "operand 3, register '%f1' of type .f32, does not fit .u32"},
        {"cp.async.bulk.global.shared::cta.bulk_group [%rd4], [%r2], %f1;", "operand 3, register '%f1' of type .f32, does not fit .u32"},
        {"cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r2], [%r3], %x1, [%r1];",
         "operand 3, register '%x1' of type .f16x2, does not fit .u32"},
        {"cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd4], [%r2], %f1;", "operand 3, register '%f1' of type .f32"},
        {"cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%rd4], [%r2], 16, %f1;", "the cache policy is a 64-bit integer register"},
        {"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%r2], [%rd4], 16, [%r1], %r3;",
         "the cache policy is a 64-bit integer register (.b64, .u64, .s64), not .b32"},
        {"mbarrier.init.shared::cta.b64 [%r1], %f1;", "operand 2, register '%f1' of type .f32, does not fit .u32"},
        {"mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r1], %f1;", "operand 2, register '%f1' of type .f32"},
        {"mbarrier.complete_tx.shared::cta.b64 [%r1], %f1;", "operand 2, register '%f1' of type .f32"},
        {"mbarrier.arrive.expect_tx.shared::cta.b64 %rd1, [%r1], %f1;", "operand 3, register '%f1' of type .f32"},
        {"mbarrier.arrive.shared::cta.b64 %rd1, [%r1], %f1;", "operand 3, register '%f1' of type .f32"},
        {"mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r1], %f1;", "operand 3, register '%f1' of type .f32"},
        {"mbarrier.pending_count.b64 %f1, %rd1;", "operand 1, register '%f1' of type .f32"},
        /* a variable of another state space than the instruction's ("State space mismatch between instruction and
         * address"): a .local one as a tensor map to replace, .shared as .global, .param as .const */
        {"tensormap.replace.tile.global_address.global.b1024.b64 [buf], %rd4;", "'buf' is a .shared variable, not one of the instruction's .global space"},
        {"tensormap.replace.tile.global_address.shared::cta.b1024.b64 [gtm], %rd4;", "'gtm' is a .global variable"},
        {"prefetch.const.tensormap [tmap];", "'tmap' is a .param variable, not one of the instruction's .const space"},
        {"ld.global.u32 %r3, [buf];", "'buf' is a .shared variable"},
        {"st.shared.u32 [gtm], %r3;", "'gtm' is a .global variable"},
        {"atom.global.add.u32 %r3, [bar], 1;", "'bar' is a .shared variable"},
        {"prefetch.tensormap [tmap];", "'tmap' is a .param variable, which a generic address does not name"},
        {"ld.u64 %rd5, [out];", "'out' is a .param variable, which a generic address does not name"},
        /* modifiers wgmma.mma_async does not take: ptxas's "Illegal modifier" (they loaded and ran as if absent) */
        {"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16.acq_rel {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1, 0, 0;", "takes no .acq_rel"},
        {"wgmma.mma_async.sync.aligned.volatile.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1, 0, 0;", "takes no .volatile"},
        {"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16.cg {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1, 0, 0;", "takes no .cg"},
        {"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16.trans {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1, 0, 0;", "takes no .trans"},
        {"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16.wide {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1, 0, 0;", "takes no .wide"},
        {"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16.mbarrier::complete_tx::bytes {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
         "takes no .mbarrier::complete_tx::bytes"},
        {"wgmma.mma_async.sync.aligned.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1, 0, 0;", "takes no .aligned twice"},
        /* other instructions' modifiers on the asynchronous and cluster instructions ("Illegal modifier") */
        {"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.acq_rel [%r2], [%rd4], 16, [%r1];", "takes no .acq_rel"},
        {"cp.async.bulk.global.shared::cta.bulk_group.relaxed [%rd4], [%r2], 16;", "takes no .relaxed"},
        {"cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32.cg [%rd4], [%r2], 16;", "takes no .cg"},
        {"cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta [%r2], [%rd3, {%r3}], [%r1];", "takes no .cta"},
        {"mbarrier.arrive.shared::cta.b64.volatile %rd1, [%r1];", "takes no .volatile"},
        {"mbarrier.try_wait.parity.shared::cta.b64.L1::no_allocate %p1, [%r1], 0;", "takes no .L1::no_allocate"},
        {"stmatrix.sync.aligned.m8n8.x1.shared.b16.relaxed [%r2], {%r3};", "takes no .relaxed"},
        {"mapa.shared::cluster.u32.wide %r3, %r2, 0;", "takes no .wide"},
        {"getctarank.shared::cluster.u32.trans %r3, %r2;", "takes no .trans"},
        {"red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32.noftz [%r2], %r3, [%r1];", "takes no .noftz"},
        /* wgmma's D and A lists: of the operand's type, or with a .b32 among them */
        {"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%u1, %u2, %u3, %u4}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
         "operand 1, register '%u1' of type .u32, does not fit (D of .f32"},
        {"wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16 {%f1, %f2}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
         "operand 1, register '%f1' of type .f32, does not fit (D of .f16"},
        {"wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1;",
         "operand 1, register '%f1' of type .f32, does not fit (D of .s32"},
        {"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, {%u1, %u2, %u3, %u4}, %rd2, %p1, 1, 1, 0;",
         "operand 2, register '%u1' of type .u32, does not fit (A of a floating-point type"},
        {"wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%f1, %f2, %f3, %f4}, {%f1, %f2, %f3, %f4}, %rd2, %p1, 1, 1;",
         "operand 2, register '%f1' of type .f32, does not fit (A of a floating-point type"},
        {"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %p1}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
         "operand 1 mixes register types ('%f1' .f32, '%p1' .pred)"},
        {"wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%p1, %p1, %p1, %p1}, %rd1, %rd2, %p1;",
         "operand 1, register '%p1' of type .pred, does not fit (D of .s32"},
        {"wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%r1, %r2, %r3, %r4}, {%s1, %s2, %s3, %f4}, %rd2, %p1;",
         "operand 2 mixes register types ('%s1' .s32, '%f4' .f32)"},
        {"wgmma.mma_async.sync.aligned.cta.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1, 0, 0;", "takes no .cta"},
        {"wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16.rn {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1, 0, 0;", "takes no rounding modifier"},
        {"wgmma.mma_async.sync.aligned.shared.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
         "takes no .shared"},
        {"wgmma.mma_async.sync.aligned.ftz.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1, 0, 0;", "takes no .ftz"},
        {"wgmma.mma_async.sync.aligned.relaxed.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
         "takes no .relaxed"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *ptx = sm90_form_ptx(bad[i].line), want[160], log[512];
        cr_assert_neq(ptxas_run(ptx, "sm_90a", log, sizeof log), 0, "ptxas takes '%s'", bad[i].line);
        snprintf(want, sizeof want, "ptx:15: '%.*s'", (int)strcspn(bad[i].line, " ;"), bad[i].line);
        expect_load_error(d, ptx, want);
        expect_load_error(d, ptx, bad[i].why);
        free(ptx);
    }
    static const char *const good[] = { /* ptxas takes each (load() asks it) */
        "elect.sync %s3|%p1, %s4;",
        "elect.sync %u3|%p1, %r4;",
        "cp.async.bulk.prefetch.L2.global [%rd4], %u3;",
        "mapa.shared::cluster.u64 %rd5, %rd4, %s1;",
        "mapa.shared::cluster.u32 %r3, %r2, %u4;",
        "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r2], [gtm, {%r3}], [%r1];",
        "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r2], [%rd3, {%r3}], [%r1];",
        "stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r2], {%f3};",
        "stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r2], {%u3};",
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%r1, %r2, %r3, %r4}, {%x1, %x2, %x3, %x0}, %rd2, %p1, 1, 1, 0;",
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %r4}, {%u1, %u2, %u3, %r4}, %rd2, %p1, 1, 1, 0;",
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, {%p1, %r2, %r3, %r4}, %rd2, %p1, 1, 1, 0;",
        "wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16 {%x1, %x2}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
        "wgmma.mma_async.sync.aligned.m64n8k16.f16.f16.f16 {%r1, %f2}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
        "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%f1, %f2, %f3, %f4}, {%x1, %x2, %x3, %x0}, %rd2, %p1, 1, 1;",
        "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%s1, %s2, %s3, %u4}, %rd1, %rd2, %p1;",
        "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%r1, %r2, %r3, %p1}, {%f1, %f2, %f3, %f4}, %rd2, %p1;",
        "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%u1, %u2, %u3, %u4}, {%p1, %p1, %p1, %p1}, %rd2, %p1;",
        "wgmma.mma_async.sync.aligned.row.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
        "wgmma.mma_async.sync.aligned.col.m64n8k16.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %p1, 1, 1, 0, 0;",
        "wgmma.mma_async.sp.sync.aligned.m64n8k32.f32.f16.f16 {%f1, %f2, %f3, %f4}, %rd1, %rd2, %r3, 0, %p1, 1, 1, 0, 0;",
        "wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.u8.satfinite {%s1, %s2, %s3, %s4}, %rd1, %rd2, %p1;",
        "wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc {%s1, %s2, %s3, %s4}, %rd1, %rd2, %p1;",
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r2], [%rd4], %u3, [%r1];",
        "cp.async.bulk.global.shared::cta.bulk_group.L2::cache_hint [%rd4], [%r2], %s3, %rd5;",
        "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r1], %s3;",
        "tensormap.replace.tile.global_address.shared::cta.b1024.b64 [buf], %rd4;",
        "tensormap.replace.tile.global_address.global.b1024.b64 [gtm], %rd4;",
        "prefetch.param.tensormap [tmap];",
        "ld.u32 %r3, [buf];", /* generic: any variable's generic address */
        "cp.async.bulk.global.shared::cta.bulk_group.cta [%rd4], [%r2], 16;", /* ptxas takes .cta here */
        "stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%r2], {%r3};",
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        char *ptx = sm90_form_ptx(good[i]);
        TileDevModule *m;
        load(d, ptx, "k", &m);
        dev_module_unload(m);
        free(ptx);
    }
    dev_close(d);
}

/* test_emu_hopper.c - the emulator as an sm_90a device: emu:<target> device
 * strings, mbarrier, bulk copies, elect.sync, setmaxnreg, wgmma (every
 * swizzle mode, A from shared memory and registers, f16/bf16/tf32/e4m3/s8),
 * stmatrix.  Tensor copies through tensor maps and the pipelined GEMM that
 * puts everything together: test_emu_tma.c; racecheck's async-proxy rules:
 * test_emu_race.c.
 *
 * Every hand-written kernel is checked by ptxas -arch=sm_90a when it is
 * installed.  Shared-memory placements in the wgmma and TMA tests are
 * computed here from the PTX ISA's description of the swizzle atoms (a 16-byte
 * chunk index XORed with the row within the 8-row repeat), written
 * independently of the emulator's descriptor arithmetic; results are compared
 * with matrix products computed here in double precision on random inputs,
 * outputs poisoned first. */
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

/* ==== 1. emu:<target> ==== */
Test(device, emu_target_strings) {
    DevSpec s;
    char *err = NULL;
    cr_assert_eq(dev_parse_spec("emu:sm_90a", &s, &err), DEV_OK);
    cr_assert(s.backend == DEV_BACKEND_EMU && s.target && !strcmp(s.target->name, "sm_90a"));
    cr_assert_eq(dev_parse_spec("emu:sm_86", &s, &err), DEV_OK);
    cr_assert(s.target == target_find("sm_86"));
    cr_assert_eq(dev_parse_spec("emu", &s, &err), DEV_OK);
    cr_assert_null(s.target);
    const char *bad[] = {"emu:sm_99", "emu:", "emu:sm_90", "emu:SM_90A"};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        cr_assert_eq(dev_parse_spec(bad[i], &s, &err), DEV_ERR_INVALID, "'%s' accepted", bad[i]);
        cr_assert(err && strstr(err, bad[i]) && strstr(err, "sm_80, sm_86, sm_89 or sm_90a"), "%s", err);
        free(err);
    }
    TileDevice *d = NULL;
    cr_assert_eq(dev_open("emu:sm_89", NULL, &d, &err), DEV_OK);
    cr_assert_eq(dev_target(d), target_find("sm_89"));
    /* PTX for a newer GPU does not load; for an older one it does */
    TileDevModule *m = NULL;
    cr_assert_eq(dev_module_load_ptx(d, PTX_HEAD ".visible .entry k()\n{\n  ret;\n}\n", &m), DEV_ERR_PTX);
    cr_assert(strstr(dev_last_error(d), "emu:sm_89 cannot load PTX for .target sm_90a"), "%s", dev_last_error(d));
    cr_assert_eq(dev_module_load_ptx(d, ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n  ret;\n}\n", &m), DEV_OK,
                 "%s", dev_last_error(d));
    dev_module_unload(m);
    dev_close(d);
}

static void check_arch(const char *device, const char *env, const char *want) {
    if (env) setenv("TILE_DEVICE", env, 1);
    tile_context *ctx = NULL;
    cr_assert_eq(tile_context_create(device, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    tile_device_properties p;
    cr_assert_eq(tile_context_get_properties(ctx, &p), TILE_OK);
    cr_assert_str_eq(p.arch, want);
    cr_assert(p.is_emulator);
    char key[64];
    cr_assert_eq(tile_context_device_key(ctx, key, sizeof key), TILE_OK);
    char wantkey[64];
    snprintf(wantkey, sizeof wantkey, "emu/%s", want);
    cr_assert_str_eq(key, wantkey);
    tile_context_destroy(ctx);
    if (env) unsetenv("TILE_DEVICE");
}

Test(device, context_arch_from_device) {
    check_arch("emu:sm_90a", NULL, "sm_90a");
    check_arch("emu:sm_86", NULL, "sm_86");
    check_arch("emu", NULL, tile_target_default());
    check_arch(NULL, "emu:sm_90a", "sm_90a");
    /* an explicit arch must agree with the device's */
    tile_context *ctx = NULL;
    tile_context_options o = {.size = sizeof o, .device = "emu:sm_90a", .arch = "sm_80"};
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(NULL), "sm_80") && strstr(tile_last_error(NULL), "sm_90a"), "%s", tile_last_error(NULL));
    o.arch = "sm_90a";
    cr_assert_eq(tile_context_create_ex(&o, &ctx), TILE_OK, "%s", tile_last_error(NULL));
    tile_context_destroy(ctx);
    cr_assert_eq(tile_context_create("emu:sm_77", &ctx), TILE_ERROR_INVALID_VALUE);
    cr_assert(strstr(tile_last_error(NULL), "sm_90a"), "%s", tile_last_error(NULL));
}

/* A kernel compiled by tile for the context's arch runs on the emulated sm_90a. */
Test(device, compiled_kernel_runs_on_sm90a) {
    tile_context *ctx = NULL;
    cr_assert_eq(tile_context_create("emu:sm_90a", &ctx), TILE_OK, "%s", tile_last_error(NULL));
    tile_module *m = NULL;
    const char *src = "kernel axpy(x: *f32, y: *f32, n: i32, const BLOCK: i32 = 128) {\n"
                      "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
                      "    let mask = offs < n;\n"
                      "    store(y + offs, 3.0 * load(x + offs, mask, 0.0) + load(y + offs, mask, 0.0), mask);\n"
                      "}\n";
    cr_assert_eq(tile_module_load_source(ctx, src, NULL, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k = NULL;
    cr_assert_eq(tile_module_get_kernel(m, "axpy", &k), TILE_OK);
    enum { N = 300 };
    float x[N], y[N], out[N];
    seed_rng();
    for (int i = 0; i < N; i++) x[i] = (float)urand() * 2, y[i] = (float)urand() * 2;
    tile_devptr dx, dy;
    cr_assert_eq(tile_malloc(ctx, sizeof x, &dx), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof y, &dy), TILE_OK);
    tile_memcpy_htod(ctx, dx, x, sizeof x);
    tile_memcpy_htod(ctx, dy, y, sizeof y);
    int n = N;
    void *args[] = {&dx, &dy, &n};
    cr_assert_eq(tile_launch(k, (tile_dim3){(N + 127) / 128, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, out, dy, sizeof out), TILE_OK);
    for (int i = 0; i < N; i++) cr_assert_float_eq(out[i], 3.0f * x[i] + y[i], 1e-5, "%d", i);
    tile_context_destroy(ctx);
}

/* ==== 2. mbarrier, elect.sync, bulk copies ==== */

/* Each of 64 threads stores a value, arrives (returning a state) and waits on it; then reads
 * its neighbour's value.  A second phase is waited on by parity with test_wait in a spin loop.
 * elect.sync's leader stores the pending count it saw. */
static const char *mbar_basic_ptx = PTX_HEAD
    ".visible .entry k(.param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<8>;\n"
    "  .reg .b32 %r<20>;\n"
    "  .reg .b64 %rd<12>;\n"
    "  .shared .align 8 .b64 bar;\n"
    "  .shared .align 4 .b32 vals[64];\n"
    "  ld.param.u64 %rd0, [out];\n"
    "  mov.u32 %r0, %tid.x;\n"
    "  setp.ne.u32 %p0, %r0, 0;\n"
    "  @%p0 bra $SKIP;\n"
    "  mbarrier.init.shared::cta.b64 [bar], 64;\n"
    "  fence.mbarrier_init.release.cluster;\n"
    "$SKIP:\n"
    "  bar.sync 0;\n"
    "  mov.u32 %r1, vals;\n"
    "  mad.lo.u32 %r2, %r0, 4, %r1;\n"
    "  mad.lo.u32 %r3, %r0, 3, 11;\n"
    "  st.shared.u32 [%r2], %r3;\n"
    "  mbarrier.arrive.shared::cta.b64 %rd1, [bar];\n"
    "$W1:\n"
    "  mbarrier.try_wait.shared::cta.b64 %p1, [bar], %rd1;\n"
    "  @!%p1 bra $W1;\n"
    "  add.u32 %r4, %r0, 1;\n"
    "  and.b32 %r4, %r4, 63;\n"
    "  mad.lo.u32 %r5, %r4, 4, %r1;\n"
    "  ld.shared.u32 %r6, [%r5];\n"
    "  mul.wide.u32 %rd2, %r0, 4;\n"
    "  add.u64 %rd3, %rd0, %rd2;\n"
    "  st.global.u32 [%rd3], %r6;\n"
    /* phase 1: lanes arrive two at a time from the even threads (count 2) */
    "  and.b32 %r7, %r0, 1;\n"
    "  setp.eq.u32 %p2, %r7, 0;\n"
    "  @%p2 mbarrier.arrive.shared::cta.b64 %rd4, [bar], 2;\n"
    "$W2:\n"
    "  mbarrier.test_wait.parity.shared::cta.b64 %p3, [bar], 1;\n"
    "  @!%p3 bra $W2;\n"
    "  elect.sync %r8|%p4, 0xffffffff;\n"
    "  @!%p4 bra $END;\n"
    "  mbarrier.pending_count.b64 %r9, %rd1;\n"
    "  shr.u32 %r10, %r0, 5;\n"
    "  mad.lo.u32 %r11, %r10, 2, 64;\n"
    "  mul.wide.u32 %rd5, %r11, 4;\n"
    "  add.u64 %rd6, %rd0, %rd5;\n"
    "  st.global.u32 [%rd6], %r8;\n"
    "  st.global.u32 [%rd6+4], %r9;\n"
    "$END:\n"
    "  ret;\n"
    "}\n";

Test(mbarrier, arrive_wait_phases) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, mbar_basic_ptx, "k", &m);
    uint64_t out = poisoned(d, 68 * 4);
    void *args[] = {&out};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
    uint32_t h[68];
    dev_memcpy_dtoh(d, h, out, sizeof h);
    for (unsigned i = 0; i < 64; i++) cr_assert_eq(h[i], ((i + 1) & 63) * 3 + 11, "thread %u read %u", i, h[i]);
    /* the leader of each warp is lane 0; thread 0 arrived first (63 still pending), thread 32 arrived
     * after the 32 threads of warp 0 (31 pending) */
    cr_assert_eq(h[64], 0);
    cr_assert_eq(h[65], 63);
    cr_assert_eq(h[66], 0);
    cr_assert_eq(h[67], 31);
    dev_module_unload(m);
    dev_close(d);
}

/* A 3-stage ring: warp 0 (its elected lane) copies chunk i of 32 floats into stage i % 3 with
 * cp.async.bulk, completing tx bytes on full[s]; warp 1 waits for full[s], writes 2 x + i, arrives on
 * empty[s] (32 arrivals); the producer waits on empty[s] before it reuses a stage.  Then the
 * consumer's results go back to global memory with a bulk store. */
static const char *ring_ptx = PTX_HEAD
    ".visible .entry ring(.param .u64 src, .param .u64 dst, .param .u32 nchunks, .param .u64 back)\n"
    "{\n"
    "  .reg .pred %p<8>;\n"
    "  .reg .b32 %r<40>;\n"
    "  .reg .b64 %rd<20>;\n"
    "  .reg .f32 %f<4>;\n"
    "  .shared .align 128 .b8 stage[384];\n"
    "  .shared .align 128 .b8 outbuf[128];\n"
    "  .shared .align 8 .b64 full[3];\n"
    "  .shared .align 8 .b64 empty[3];\n"
    "  mov.u32 %r0, %tid.x;\n"
    "  ld.param.u64 %rd0, [src];\n"
    "  ld.param.u64 %rd1, [dst];\n"
    "  ld.param.u32 %r1, [nchunks];\n"
    "  ld.param.u64 %rd10, [back];\n"
    "  setp.ne.u32 %p0, %r0, 0;\n"
    "  @%p0 bra $INIT_DONE;\n"
    "  mbarrier.init.shared::cta.b64 [full], 1;\n"
    "  mbarrier.init.shared::cta.b64 [full+8], 1;\n"
    "  mbarrier.init.shared::cta.b64 [full+16], 1;\n"
    "  mbarrier.init.shared::cta.b64 [empty], 32;\n"
    "  mbarrier.init.shared::cta.b64 [empty+8], 32;\n"
    "  mbarrier.init.shared::cta.b64 [empty+16], 32;\n"
    "  fence.mbarrier_init.release.cluster;\n"
    "$INIT_DONE:\n"
    "  bar.sync 0;\n"
    "  shr.u32 %r2, %r0, 5;\n"
    "  and.b32 %r3, %r0, 31;\n"
    "  mov.u32 %r10, 0;\n"
    "  setp.ne.u32 %p1, %r2, 0;\n"
    "  @%p1 bra $CONSUMER;\n"
    "  elect.sync %r4|%p2, 0xffffffff;\n"
    "$PLOOP:\n"
    "  setp.ge.u32 %p3, %r10, %r1;\n"
    "  @%p3 bra $PDONE;\n"
    "  rem.u32 %r5, %r10, 3;\n"
    "  div.u32 %r6, %r10, 3;\n"
    "  setp.eq.u32 %p4, %r6, 0;\n"
    "  @%p4 bra $PISSUE;\n"
    "  add.u32 %r7, %r6, 1;\n"
    "  and.b32 %r7, %r7, 1;\n"
    "  mov.u32 %r8, empty;\n"
    "  mad.lo.u32 %r8, %r5, 8, %r8;\n"
    "$PWAIT:\n"
    "  mbarrier.try_wait.parity.shared::cta.b64 %p5, [%r8], %r7;\n"
    "  @!%p5 bra $PWAIT;\n"
    "$PISSUE:\n"
    "  @!%p2 bra $PNEXT;\n"
    "  mov.u32 %r9, full;\n"
    "  mad.lo.u32 %r9, %r5, 8, %r9;\n"
    "  mbarrier.arrive.expect_tx.shared::cta.b64 %rd9, [%r9], 128;\n"
    "  mov.u32 %r11, stage;\n"
    "  mad.lo.u32 %r11, %r5, 128, %r11;\n"
    "  mul.wide.u32 %rd2, %r10, 128;\n"
    "  add.u64 %rd3, %rd0, %rd2;\n"
    "  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r11], [%rd3], 128, [%r9];\n"
    "$PNEXT:\n"
    "  add.u32 %r10, %r10, 1;\n"
    "  bra $PLOOP;\n"
    "$PDONE:\n"
    "  ret;\n"
    "$CONSUMER:\n"
    "  setp.ge.u32 %p3, %r10, %r1;\n"
    "  @%p3 bra $CDONE;\n"
    "  rem.u32 %r5, %r10, 3;\n"
    "  div.u32 %r6, %r10, 3;\n"
    "  and.b32 %r7, %r6, 1;\n"
    "  mov.u32 %r9, full;\n"
    "  mad.lo.u32 %r9, %r5, 8, %r9;\n"
    "$CWAIT:\n"
    "  mbarrier.try_wait.parity.shared::cta.b64 %p5, [%r9], %r7;\n"
    "  @!%p5 bra $CWAIT;\n"
    "  mov.u32 %r11, stage;\n"
    "  mad.lo.u32 %r11, %r5, 128, %r11;\n"
    "  mad.lo.u32 %r12, %r3, 4, %r11;\n"
    "  ld.shared.f32 %f0, [%r12];\n"
    "  cvt.rn.f32.u32 %f1, %r10;\n"
    "  fma.rn.f32 %f2, %f0, 0f40000000, %f1;\n"
    "  mad.lo.u32 %r13, %r10, 32, %r3;\n"
    "  mul.wide.u32 %rd4, %r13, 4;\n"
    "  add.u64 %rd5, %rd1, %rd4;\n"
    "  st.global.f32 [%rd5], %f2;\n"
    "  mov.u32 %r14, empty;\n"
    "  mad.lo.u32 %r14, %r5, 8, %r14;\n"
    "  mbarrier.arrive.shared::cta.b64 %rd6, [%r14];\n"
    "  add.u32 %r10, %r10, 1;\n"
    "  bra $CONSUMER;\n"
    "$CDONE:\n"
    /* the last chunk's results, through shared memory, back with one bulk store */
    "  mov.u32 %r15, outbuf;\n"
    "  mad.lo.u32 %r16, %r3, 4, %r15;\n"
    "  st.shared.f32 [%r16], %f2;\n"
    "  fence.proxy.async.shared::cta;\n"
    "  bar.warp.sync 0xffffffff;\n"
    "  setp.ne.u32 %p6, %r3, 0;\n"
    "  @%p6 bra $END;\n"
    "  cp.async.bulk.global.shared::cta.bulk_group [%rd10], [%r15], 128;\n"
    "  cp.async.bulk.commit_group;\n"
    "  cp.async.bulk.wait_group.read 0;\n"
    "$END:\n"
    "  ret;\n"
    "}\n";

/* ring_ptx with `pad` more mbarriers initialized between the "full" and the "empty" ones (so the "empty"
 * ones get later racecheck slots); without the producer's wait on "empty" when broken. */
static char *ring_padded(unsigned pad, bool broken) {
    const char *decl = "  .shared .align 8 .b64 empty[3];\n", *init = "  mbarrier.init.shared::cta.b64 [full+16], 1;\n";
    const char *wait = "  mbarrier.try_wait.parity.shared::cta.b64 %p5, [%r8], %r7;\n";
    const char *d = strstr(ring_ptx, decl), *i = strstr(ring_ptx, init), *w = strstr(ring_ptx, wait);
    cr_assert(d && i && w && d < i && i < w, "the ring's declarations, inits and wait");
    Str s = {0};
    str_printf(&s, "%.*s%s  .shared .align 8 .b64 pad[%u];\n", (int)(d - ring_ptx), ring_ptx, decl, pad);
    str_printf(&s, "%.*s%s", (int)(i - (d + strlen(decl))), d + strlen(decl), init);
    for (unsigned k = 0; k < pad; k++) str_printf(&s, "  mbarrier.init.shared::cta.b64 [pad+%u], 1;\n", 8 * k);
    str_printf(&s, "%.*s%s", (int)(w - (i + strlen(init))), i + strlen(init), broken ? "  mov.pred %p5, 1;\n" : wait);
    str_puts(&s, w + strlen(wait));
    return s.buf;
}

/* Racecheck with many mbarriers (Triton's warp-specialized attention has 40): the consumers' release of a
 * stage through an mbarrier initialized 40 after the stage's own orders the refill (it was reported as two
 * unordered copies when only 32 were tracked: the edge through the 36th was lost), and without the wait
 * the race is still found; past 64, the checks that could depend on the others are off (no false report). */
Test(mbarrier, many_mbarriers_racecheck) {
    TileDevice *d = open_emu(true);
    static const struct { unsigned pad; bool broken, reported; } cs[] = {
        {40, false, false}, {40, true, true}, {70, false, false},
    };
    for (size_t c = 0; c < ARRAY_LEN(cs); c++) {
        char *ptx = ring_padded(cs[c].pad, cs[c].broken);
        TileDevModule *m;
        TileDevFunction *f = load(d, ptx, "ring", &m);
        unsigned nch = 8;
        float src[8 * 32], out[8 * 32];
        for (unsigned i = 0; i < nch * 32; i++) src[i] = (float)i;
        uint64_t ds = upload(d, src, sizeof src), dd = poisoned(d, sizeof out), db = poisoned(d, 128);
        void *args[] = {&ds, &dd, &nch, &db};
        DevStatus st = dev_launch(f, 2, 1, 1, 64, 1, 1, 0, NULL, args);
        if (cs[c].reported) {
            cr_assert_neq(st, DEV_OK, "pad %u: the unordered refill went unreported", cs[c].pad);
            cr_assert(strstr(dev_last_error(d), "two bulk copies write the same shared memory"), "%s", dev_last_error(d));
        } else {
            cr_assert_eq(st, DEV_OK, "pad %u%s: %s", cs[c].pad, cs[c].broken ? " (broken)" : "", dev_last_error(d));
            if (!cs[c].broken) {
                dev_memcpy_dtoh(d, out, dd, sizeof out);
                for (unsigned i = 0; i < nch * 32; i++) cr_assert_eq(out[i], fmaf(src[i], 2.0f, (float)(i / 32)), "pad %u element %u", cs[c].pad, i);
            }
        }
        dev_module_unload(m);
        free(ptx);
    }
    dev_close(d);
}

Test(mbarrier, producer_consumer_ring) {
    TileDevice *d = open_emu(true);
    TileDevModule *m;
    TileDevFunction *f = load(d, ring_ptx, "ring", &m);
    for (unsigned nch = 1; nch <= 8; nch += 7) {
        float *src = malloc(nch * 32 * sizeof *src), *out = malloc(nch * 32 * sizeof *out), back[32];
        seed_rng();
        for (unsigned i = 0; i < nch * 32; i++) src[i] = (float)urand() * 4;
        uint64_t ds = upload(d, src, nch * 32 * 4), dd = poisoned(d, nch * 32 * 4), db = poisoned(d, 128);
        void *args[] = {&ds, &dd, &nch, &db};
        cr_assert_eq(dev_launch(f, 2, 1, 1, 64, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
        dev_memcpy_dtoh(d, out, dd, nch * 32 * 4);
        dev_memcpy_dtoh(d, back, db, 128);
        for (unsigned i = 0; i < nch * 32; i++) cr_assert_eq(out[i], fmaf(src[i], 2.0f, (float)(i / 32)), "element %u", i);
        for (unsigned l = 0; l < 32; l++) cr_assert_eq(back[l], out[(nch - 1) * 32 + l], "bulk store lane %u", l);
        free(src);
        free(out);
    }
    dev_module_unload(m);
    /* the producer refilling a stage without waiting on its "empty" mbarrier: its copy is not ordered after the
     * copy before it (the consumers' release of the stage would have told it that one had landed) */
    const char *wait = "  mbarrier.try_wait.parity.shared::cta.b64 %p5, [%r8], %r7;\n", *at = strstr(ring_ptx, wait);
    cr_assert(at, "the producer's wait is in the ring");
    Str bs = {0};
    str_printf(&bs, "%.*s  mov.pred %%p5, 1;\n%s", (int)(at - ring_ptx), ring_ptx, at + strlen(wait));
    char *broken = bs.buf;
    f = load(d, broken, "ring", &m);
    unsigned nch = 8;
    uint64_t ds = poisoned(d, nch * 32 * 4), dd = poisoned(d, nch * 32 * 4), db = poisoned(d, 128);
    void *args[] = {&ds, &dd, &nch, &db};
    expect_launch_error(d, f, 64, args, "racecheck: two bulk copies write the same shared memory with nothing ordering them",
                        "by thread (0,0,0)", "issued by thread (0,0,0) (this thread)", "in its phase 0",
                        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes", NULL);
    dev_module_unload(m);
    free(broken);
    dev_close(d);
}

/* Bulk stores to global memory land asynchronously: until the issuing thread's cp.async.bulk.wait_group
 * (without .read) retires their group, any access to those bytes is reported.  Thread 0 stores two
 * 128-byte groups; then (mode) waits for both, waits .read (not enough), waits for all but the newest group,
 * or does not wait; after a barrier every thread reads (or writes) the float at byte rd + 4 tid. */
static const char *bulk_pending_ptx = PTX_HEAD
    ".visible .entry bs(.param .u64 out, .param .u32 mode, .param .u32 rd, .param .u32 wr)\n"
    "{\n"
    "  .reg .pred %p<8>;\n"
    "  .reg .b32 %r<16>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .reg .f32 %f<4>;\n"
    "  .shared .align 128 .b8 buf[256];\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u32 %r1, [mode];\n"
    "  ld.param.u32 %r6, [rd];\n"
    "  ld.param.u32 %r7, [wr];\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  mov.u32 %r3, buf;\n"
    "  mad.lo.u32 %r4, %r2, 8, %r3;\n"
    "  cvt.rn.f32.u32 %f1, %r2;\n"
    "  st.shared.v2.f32 [%r4], {%f1, %f1};\n"
    "  fence.proxy.async.shared::cta;\n"
    "  bar.sync 0;\n"
    "  setp.ne.u32 %p1, %r2, 0;\n"
    "  @%p1 bra $AFTER;\n"
    "  cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r3], 128;\n"
    "  cp.async.bulk.commit_group;\n"
    "  add.u64 %rd2, %rd1, 128;\n"
    "  add.u32 %r5, %r3, 128;\n"
    "  cp.async.bulk.global.shared::cta.bulk_group [%rd2], [%r5], 128;\n"
    "  cp.async.bulk.commit_group;\n"
    "  setp.eq.u32 %p2, %r1, 0;\n"
    "  @%p2 cp.async.bulk.wait_group 0;\n"
    "  setp.eq.u32 %p3, %r1, 1;\n"
    "  @%p3 cp.async.bulk.wait_group.read 0;\n"
    "  setp.eq.u32 %p4, %r1, 2;\n"
    "  @%p4 cp.async.bulk.wait_group 1;\n"
    "$AFTER:\n"
    "  bar.sync 0;\n"
    "  mad.lo.u32 %r8, %r2, 4, %r6;\n"
    "  cvt.u64.u32 %rd3, %r8;\n"
    "  add.u64 %rd4, %rd1, %rd3;\n"
    "  setp.ne.u32 %p5, %r7, 0;\n"
    "  @%p5 st.global.f32 [%rd4], %f1;\n"
    "  @!%p5 ld.global.f32 %f2, [%rd4];\n"
    "  @!%p5 add.f32 %f2, %f2, 0f3F800000;\n"
    "  @!%p5 st.global.f32 [%rd4+256], %f2;\n"
    "  ret;\n"
    "}\n";

Test(bulk, stores_pending_until_waited) {
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, bulk_pending_ptx, "bs", &m);
    static const struct {
        uint32_t mode, rd, wr;
        bool ok;
    } cs[] = {
        {0, 0, 0, true}, {0, 128, 0, true}, {0, 64, 1, true}, /* both groups waited for */
        {1, 0, 0, false},                                    /* .read: the writes may still land */
        {2, 0, 0, true}, {2, 128, 0, false},                 /* the older group retired, the newer pending */
        {3, 64, 0, false}, {3, 192, 1, false},               /* no wait: reads and writes both reported */
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        uint64_t out = poisoned(d, 512);
        uint32_t mode = cs[i].mode, rd = cs[i].rd, wr = cs[i].wr;
        void *args[] = {&out, &mode, &rd, &wr};
        if (!cs[i].ok) {
            expect_launch_error(d, f, 32, args, wr ? "racecheck: global memory written before a bulk store to it completed"
                                                   : "racecheck: global memory read before a bulk store to it completed",
                                "issued by thread (0,0,0)", "cp.async.bulk.wait_group (without .read", "PTX line", NULL);
            continue;
        }
        cr_assert_eq(dev_launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, args), DEV_OK, "case %zu: %s", i, dev_last_error(d));
        float h[128];
        dev_memcpy_dtoh(d, h, out, sizeof h);
        for (unsigned k = 0; k < 64; k++) {
            bool over = wr && k >= rd / 4 && k < rd / 4 + 32; /* the threads' own stores */
            float want = over ? (float)(k - rd / 4) : (float)(k / 2);
            cr_assert_eq(h[k], want, "case %zu: out[%u] = %g, want %g", i, k, h[k], want);
        }
        for (unsigned t = 0; t < 32 && !wr; t++)
            cr_assert_eq(h[64 + rd / 4 + t], (float)((rd / 4 + t) / 2) + 1, "case %zu: thread %u read %g", i, t, h[64 + rd / 4 + t] - 1);
    }
    dev_module_unload(m);
    /* a bulk load (the async proxy) of bytes a bulk store has not finished writing: reported as well */
    static const char *reload_ptx = PTX_HEAD
        ".visible .entry bl(.param .u64 out, .param .u32 wait)\n"
        "{\n"
        "  .reg .pred %p<4>;\n"
        "  .reg .b32 %r<8>;\n"
        "  .reg .b64 %rd<8>;\n"
        "  .shared .align 128 .b8 buf[256];\n"
        "  .shared .align 8 .b64 bar;\n"
        "  ld.param.u64 %rd1, [out];\n"
        "  ld.param.u32 %r1, [wait];\n"
        "  mov.u32 %r2, buf;\n"
        "  mbarrier.init.shared::cta.b64 [bar], 1;\n"
        "  fence.mbarrier_init.release.cluster;\n"
        "  fence.proxy.async.shared::cta;\n"
        "  cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r2], 128;\n"
        "  cp.async.bulk.commit_group;\n"
        "  setp.ne.u32 %p1, %r1, 0;\n"
        "  @%p1 cp.async.bulk.wait_group 0;\n"
        "  add.u32 %r3, %r2, 128;\n"
        "  mbarrier.arrive.expect_tx.shared::cta.b64 %rd2, [bar], 128;\n"
        "  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1], 128, [bar];\n"
        "$W:\n"
        "  mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;\n"
        "  @!%p2 bra $W;\n"
        "  ret;\n"
        "}\n";
    f = load(d, reload_ptx, "bl", &m);
    for (uint32_t wait = 0; wait < 2; wait++) {
        uint64_t out = poisoned(d, 128);
        void *args[] = {&out, &wait};
        if (wait) cr_assert_eq(dev_launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
        else expect_launch_error(d, f, 1, args, "racecheck: global memory read before a bulk store to it completed", "PTX line 23", "PTX line 17", NULL);
    }
    dev_module_unload(m);
    dev_close(d);
}

/* Deadlocks are reported, not hung on: a try_wait on a phase one of two arrivals never completes,
 * and a test_wait spin loop that nothing ends. */
Test(mbarrier, deadlocks_reported) {
    TileDevice *d = open_emu(false);
    static const char *wait_ptx = PTX_HEAD
        ".visible .entry k()\n"
        "{\n"
        "  .reg .pred %p<4>;\n"
        "  .reg .b64 %rd<4>;\n"
        "  .shared .align 8 .b64 bar;\n"
        "  mbarrier.init.shared::cta.b64 [bar], 2;\n"
        "  mbarrier.arrive.shared::cta.b64 %rd1, [bar];\n"
        "$W:\n"
        "  mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], 0;\n"
        "  @!%p1 bra $W;\n"
        "  ret;\n"
        "}\n";
    TileDevModule *m;
    TileDevFunction *f = load(d, wait_ptx, "k", &m);
    expect_launch_error(d, f, 1, NULL, "deadlock", "mbarrier", "waiting for an mbarrier phase", "PTX line 12", NULL);
    dev_module_unload(m);
    static const char *spin_ptx = PTX_HEAD
        ".visible .entry k()\n"
        "{\n"
        "  .reg .pred %p<4>;\n"
        "  .reg .b32 %r<4>;\n"
        "  .shared .align 8 .b64 bar;\n"
        "  mov.u32 %r1, 0;\n"
        "  mbarrier.init.shared::cta.b64 [bar], 1;\n"
        "$W:\n"
        "  add.u32 %r1, %r1, 1;\n"
        "  mbarrier.test_wait.parity.shared::cta.b64 %p1, [bar], 0;\n"
        "  @!%p1 bra $W;\n"
        "  ret;\n"
        "}\n";
    f = load(d, spin_ptx, "k", &m);
    expect_launch_error(d, f, 32, NULL, "deadlock", "spinning on an mbarrier", NULL);
    dev_module_unload(m);
    dev_close(d);
}

/* ISA, mbarrier.test_wait/try_wait: "try_wait is a potentially blocking instruction which tests for the completion
 * of the phase.  If the phase is not complete, the executing thread may be suspended ... until the specified phase
 * completes or the suspend time limit expires", and then it returns false.  Loops that do other work when it
 * answers false must go on: `counted` arrives itself after its first false answer (1 on a GPU); in `handshake`,
 * thread 0 waits on bar0 and, on a false answer, arrives on bar1, which thread 32 waits for before it completes
 * bar0.  Before: both were reported as deadlocks (probeP F3).  A loop that only spins on try_wait is still a
 * deadlock (mbarrier/deadlocks_reported). */
static const char *try_wait_timeout_ptx = PTX_HEAD
    ".visible .entry counted(.param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .b64 %rd<2>;\n"
    "  .shared .align 8 .b64 bar;\n"
    "  ld.param.u64 %rd0, [out];\n"
    "  mov.u32 %r2, 0;\n"
    "  mbarrier.init.shared::cta.b64 [bar], 1;\n"
    "$L:\n"
    "  mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], 0, 1000;\n"
    "  @%p1 bra $DONE;\n"
    "  add.u32 %r2, %r2, 1;\n"
    "  mbarrier.arrive.shared::cta.b64 _, [bar];\n"
    "  bra $L;\n"
    "$DONE:\n"
    "  st.global.u32 [%rd0], %r2;\n"
    "  ret;\n"
    "}\n"
    ".visible .entry handshake(.param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .b64 %rd<4>;\n"
    "  .shared .align 8 .b64 bar0;\n"
    "  .shared .align 8 .b64 bar1;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  setp.ne.u32 %p1, %r1, 0;\n"
    "  @%p1 bra $INIT_DONE;\n"
    "  mbarrier.init.shared::cta.b64 [bar0], 1;\n"
    "  mbarrier.init.shared::cta.b64 [bar1], 1;\n"
    "$INIT_DONE:\n"
    "  bar.sync 0;\n"
    "  setp.eq.u32 %p1, %r1, 0;\n"
    "  @%p1 bra $PRODUCER;\n"
    "  setp.eq.u32 %p1, %r1, 32;\n"
    "  @%p1 bra $CONSUMER;\n"
    "  ret;\n"
    "$PRODUCER:\n"
    "  mov.u32 %r2, 0;\n"
    "$L0:\n"
    "  mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar0], 0, 1000;\n"
    "  @%p2 bra $D0;\n"
    "  setp.eq.u32 %p3, %r2, 0;\n"
    "  @%p3 mbarrier.arrive.shared::cta.b64 _, [bar1];\n"
    "  add.u32 %r2, %r2, 1;\n"
    "  bra $L0;\n"
    "$D0:\n"
    "  min.u32 %r2, %r2, 1;\n"
    "  st.global.u32 [%rd1], %r2;\n"
    "  ret;\n"
    "$CONSUMER:\n"
    "  mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar1], 0;\n"
    "  @!%p2 bra $CONSUMER;\n"
    "  mbarrier.arrive.shared::cta.b64 _, [bar0];\n"
    "  st.global.u32 [%rd1+4], 7;\n"
    "  ret;\n"
    "}\n";

Test(mbarrier, try_wait_times_out) {
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, try_wait_timeout_ptx, "counted", &m);
    uint64_t out = poisoned(d, 8);
    void *args[] = {&out};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, args), DEV_OK, "counted: %s", dev_last_error(d));
    uint32_t h[2];
    dev_memcpy_dtoh(d, h, out, 4);
    cr_assert_eq(h[0], 1, "counted: %u false answers, want 1", h[0]);
    cr_assert_eq(dev_module_get_function(m, "handshake", &f), DEV_OK);
    cr_assert_eq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, args), DEV_OK, "handshake: %s", dev_last_error(d));
    dev_memcpy_dtoh(d, h, out, 8);
    cr_assert(h[0] == 1 && h[1] == 7, "handshake: %u %u, want 1 7", h[0], h[1]);
    dev_module_unload(m);
    dev_close(d);
}

/* Misuse stops the launch with a message saying what is wrong. */
Test(mbarrier, misuse_errors) {
    TileDevice *d = open_emu(false);
    struct { const char *body, *want; unsigned threads; } cases[] = {
        {"  mbarrier.arrive.shared::cta.b64 %rd1, [bar];\n", "not initialised", 1},
        {"  mbarrier.init.shared::cta.b64 [bar], 1;\n  mbarrier.arrive.shared::cta.b64 %rd1, [bar], 2;\n", "2 arrivals", 1},
        {"  mov.u32 %r1, 0;\n  mbarrier.init.shared::cta.b64 [bar], %r1;\n", "count 0", 1},
        {"  mov.u32 %r1, bar;\n  add.u32 %r1, %r1, 4;\n  mbarrier.init.shared::cta.b64 [%r1], 1;\n", "not 8-byte aligned", 1},
        {"  mbarrier.init.shared::cta.b64 [bar], 1;\n  mbarrier.inval.shared::cta.b64 [bar];\n"
         "  mbarrier.arrive.shared::cta.b64 %rd1, [bar];\n", "not initialised", 1},
        {"  mbarrier.init.shared::cta.b64 [bar], 1;\n  mov.u64 %rd2, 12345;\n"
         "  mbarrier.test_wait.shared::cta.b64 %p1, [bar], %rd2;\n", "was not returned by mbarrier.arrive", 1},
        {"  mbarrier.init.shared::cta.b64 [bar], 1;\n  mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], 1048576;\n",
         "tx-count", 1},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char ptx[2048];
        snprintf(ptx, sizeof ptx,
                 PTX_HEAD ".visible .entry k()\n{\n  .reg .pred %%p<4>;\n  .reg .b32 %%r<4>;\n  .reg .b64 %%rd<4>;\n"
                          "  .shared .align 8 .b64 bar[2];\n%s  ret;\n}\n",
                 cases[i].body);
        TileDevModule *m;
        TileDevFunction *f = load(d, ptx, "k", &m);
        expect_launch_error(d, f, cases[i].threads, NULL, "mbarrier", cases[i].want, NULL);
        dev_module_unload(m);
    }
    /* instructions of a later target are refused at load time */
    expect_load_error(d, ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n"
                         "  .reg .pred %p<2>;\n  .shared .align 8 .b64 bar;\n"
                         "  mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], 0;\n  ret;\n}\n",
                      "needs .target sm_90");
    expect_load_error(d, ".version 8.0\n.target sm_89\n.address_size 64\n.visible .entry k()\n{\n  wgmma.fence.sync.aligned;\n  ret;\n}\n",
                      "needs .target sm_90a");
    /* and sm_90a's own under sm_90 (ptxas: "Instruction 'wgmma.fence' not supported on .target 'sm_90'"; before: loaded, probeP F-low3) */
    expect_load_error(d, ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n  wgmma.fence.sync.aligned;\n  ret;\n}\n",
                      "needs .target sm_90a (the module's .target is sm_90");
    expect_load_error(d, ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n  wgmma.commit_group.sync.aligned;\n"
                         "  ret;\n}\n", "needs .target sm_90a");
    expect_load_error(d, ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n  setmaxnreg.dec.sync.aligned.u32 40;\n"
                         "  ret;\n}\n", "needs .target sm_90a");
    expect_load_error(d, PTX_HEAD ".visible .entry k()\n{\n  setmaxnreg.inc.sync.aligned.u32 20;\n  ret;\n}\n", "multiple of 8 in 24..256");
    dev_close(d);
}

/* setmaxnreg is warpgroup-collective: all four warps, or the launch fails. */
/* ==== clusters of one CTA: the special registers, barrier.cluster, mapa / getctarank and shared::cluster ==== */
static const char *cluster_ptx = PTX_HEAD
    ".visible .entry k(.param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<32>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .shared .align 4 .b32 sm[64];\n"
    "  ld.param.u64 %rd0, [out];\n"
    "  mov.u32 %r0, %tid.x;\n"
    /* block b writes 12 words: cluster ids and ranks, then what it read back through the cluster barrier */
    "  mov.u32 %r1, %ctaid.x;\n  mov.u32 %r2, %ctaid.y;\n  mov.u32 %r3, %nctaid.x;\n"
    "  mad.lo.u32 %r4, %r2, %r3, %r1;\n  mul.lo.u32 %r4, %r4, 12;\n  mul.wide.u32 %rd1, %r4, 4;\n  add.u64 %rd1, %rd0, %rd1;\n"
    "  setp.ne.u32 %p0, %r0, 0;\n"
    "  @%p0 bra $SKIP;\n"
    "  mov.u32 %r5, %cluster_ctaid.x;\n  st.global.u32 [%rd1], %r5;\n"
    "  mov.u32 %r5, %cluster_ctaid.y;\n  st.global.u32 [%rd1+4], %r5;\n"
    "  mov.u32 %r5, %cluster_nctaid.x;\n  st.global.u32 [%rd1+8], %r5;\n"
    "  mov.u32 %r5, %cluster_nctaid.z;\n  st.global.u32 [%rd1+12], %r5;\n"
    "  mov.u32 %r5, %clusterid.x;\n  st.global.u32 [%rd1+16], %r5;\n"
    "  mov.u32 %r5, %clusterid.y;\n  st.global.u32 [%rd1+20], %r5;\n"
    "  mov.u32 %r5, %nclusterid.x;\n  st.global.u32 [%rd1+24], %r5;\n"
    "  mov.u32 %r5, %cluster_ctarank;\n  st.global.u32 [%rd1+28], %r5;\n"
    "  mov.u32 %r5, %cluster_nctarank;\n  st.global.u32 [%rd1+32], %r5;\n"
    "  mov.pred %p1, %is_explicit_cluster;\n  selp.u32 %r5, 1, 0, %p1;\n  st.global.u32 [%rd1+36], %r5;\n"
    "$SKIP:\n"
    /* every thread writes its word of shared memory (through its shared::cluster address), arrives, works, waits,
     * then reads its neighbour's: racecheck finds a race if the barrier did not order them */
    "  mov.u32 %r6, sm;\n  shl.b32 %r7, %r0, 2;\n  add.u32 %r8, %r6, %r7;\n"
    "  mapa.shared::cluster.u32 %r9, %r8, 0;\n"
    "  getctarank.shared::cluster.u32 %r10, %r9;\n"
    "  add.u32 %r11, %r0, 100;\n  add.u32 %r11, %r11, %r10;\n"
    "  st.shared::cluster.u32 [%r9], %r11;\n"
    "  barrier.cluster.arrive.release.aligned;\n"
    "  mul.lo.u32 %r12, %r0, 3;\n"
    "  barrier.cluster.wait.acquire.aligned;\n"
    "  add.u32 %r13, %r0, 1;\n  and.b32 %r13, %r13, 63;\n  shl.b32 %r13, %r13, 2;\n  add.u32 %r13, %r6, %r13;\n"
    "  ld.shared::cluster.u32 %r14, [%r13];\n"
    "  @%p0 bra $END;\n"
    "  st.global.u32 [%rd1+40], %r14;\n"
    "  st.global.u32 [%rd1+44], %r10;\n"
    "$END:\n"
    "  ret;\n"
    "}\n";

Test(cluster, one_cta_clusters) {
    check_ptxas(cluster_ptx);
    TileDevice *d = open_emu(true); /* racecheck on */
    TileDevModule *m;
    TileDevFunction *f = load(d, cluster_ptx, "k", &m);
    uint64_t out = poisoned(d, 6 * 12 * 4);
    void *args[] = {&out};
    cr_assert_eq(dev_launch(f, 3, 2, 1, 64, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
    uint32_t got[6 * 12];
    cr_assert_eq(dev_memcpy_dtoh(d, got, out, sizeof got), DEV_OK);
    for (unsigned y = 0; y < 2; y++)
        for (unsigned x = 0; x < 3; x++) {
            const uint32_t *g = &got[(y * 3 + x) * 12];
            const uint32_t want[12] = {0, 0, 1, 1, x, y, 3, 0, 1, 0, 101, 0}; /* thread 0 reads thread 1's 100 + 1 */
            for (int k = 0; k < 12; k++) cr_expect_eq(g[k], want[k], "block (%u, %u) word %d: %u, want %u", x, y, k, g[k], want[k]);
        }
    dev_module_unload(m);
    /* misuse: a wait with no arrive, two arrives, a rank other than 0, a warp that never arrives (it waits
     * elsewhere: an exited thread would count as arrived) */
    static const struct { const char *body, *want; } bad[] = {
        {"  barrier.cluster.wait.aligned;\n", "barrier.cluster.wait without a barrier.cluster.arrive"},
        {"  barrier.cluster.arrive.aligned;\n  barrier.cluster.arrive.aligned;\n", "arrive twice"},
        {"  mov.u32 %r1, sm;\n  mapa.shared::cluster.u32 %r2, %r1, 1;\n", "mapa to CTA rank 1"},
        {"  mov.u32 %r0, %tid.x;\n  setp.ge.u32 %p0, %r0, 32;\n  @%p0 bra $X;\n  barrier.cluster.arrive.aligned;\n"
         "  barrier.cluster.wait.aligned;\n  ret;\n$X:\n  bar.sync 1, 64;\n", "waiting at the cluster barrier"},
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        char ptx[1024];
        snprintf(ptx, sizeof ptx, PTX_HEAD ".visible .entry k()\n{\n  .reg .pred %%p<2>;\n  .reg .b32 %%r<4>;\n  .shared .align 4 .b32 sm[4];\n%s  ret;\n}\n",
                 bad[i].body);
        check_ptxas(ptx);
        TileDevFunction *bf = load(d, ptx, "k", &m);
        expect_launch_error(d, bf, 64, NULL, bad[i].want, NULL);
        dev_module_unload(m);
    }
    expect_load_error(d, PTX_HEAD ".visible .entry k()\n{\n  barrier.cluster.aligned;\n  ret;\n}\n", "needs .arrive or .wait");
    expect_load_error(d, ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n  barrier.cluster.arrive;\n  ret;\n}\n",
                      "needs .target sm_90");
    dev_close(d);
}

/* Hints other compilers emit around their pipelines (CUTLASS, Triton's programmatic dependent launch): accepted,
 * no effect, the kernel runs to its end; ptxas takes every form. */
Test(cluster, hints_without_effect) {
    static const char *ptx = PTX_HEAD
        ".visible .entry k(.param .u64 p, .param .align 64 .b8 tmap[128])\n{\n"
        "  .reg .b64 %rd<4>;\n  .reg .b32 %r<4>;\n"
        "  ld.param.u64 %rd0, [p];\n  mov.u64 %rd1, tmap;\n"
        "  griddepcontrol.wait;\n  prefetch.tensormap [%rd1];\n  prefetch.param.tensormap [tmap];\n"
        "  fence.proxy.async.global;\n  fence.acq_rel.cluster;\n  mov.u32 %r0, 0;\n"
        "  cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%rd1, {%r0, %r0}];\n"
        "  cp.async.bulk.prefetch.L2.global [%rd0], 16;\n"
        "  griddepcontrol.launch_dependents;\n"
        "  mov.u32 %r1, 7;\n  st.global.u32 [%rd0], %r1;\n  ret;\n}\n";
    check_ptxas(ptx);
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out = poisoned(d, 16);
    uint8_t map[128] = {0};
    void *args[] = {&out, map};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
    uint32_t got = 0;
    cr_assert_eq(dev_memcpy_dtoh(d, &got, out, 4), DEV_OK);
    cr_assert_eq(got, 7u);
    dev_module_unload(m);
    expect_load_error(d, PTX_HEAD ".visible .entry k()\n{\n  griddepcontrol;\n  ret;\n}\n", "needs .wait or .launch_dependents");
    dev_close(d);
}

Test(mbarrier, setmaxnreg_warpgroup) {
    TileDevice *d = open_emu(false);
    static const char *ptx = PTX_HEAD
        ".visible .entry k(.param .u64 out)\n"
        "{\n"
        "  .reg .b32 %r<4>;\n"
        "  .reg .b64 %rd<4>;\n"
        "  setmaxnreg.dec.sync.aligned.u32 40;\n"
        "  setmaxnreg.inc.sync.aligned.u32 232;\n"
        "  ld.param.u64 %rd0, [out];\n"
        "  mov.u32 %r0, %tid.x;\n"
        "  mul.wide.u32 %rd1, %r0, 4;\n"
        "  add.u64 %rd2, %rd0, %rd1;\n"
        "  st.global.u32 [%rd2], %r0;\n"
        "  ret;\n"
        "}\n";
    TileDevModule *m;
    TileDevFunction *f = load(d, ptx, "k", &m);
    uint64_t out = poisoned(d, 256 * 4);
    void *args[] = {&out};
    cr_assert_eq(dev_launch(f, 1, 1, 1, 256, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
    uint32_t h[256];
    dev_memcpy_dtoh(d, h, out, sizeof h);
    for (unsigned i = 0; i < 256; i++) cr_assert_eq(h[i], i);
    expect_launch_error(d, f, 96, args, "warpgroup", "the block has 96 threads", NULL);
    dev_module_unload(m);
    /* warps of one warpgroup at different setmaxnreg instructions */
    static const char *div_ptx = PTX_HEAD
        ".visible .entry k()\n"
        "{\n"
        "  .reg .pred %p<2>;\n"
        "  .reg .b32 %r<4>;\n"
        "  mov.u32 %r0, %tid.x;\n"
        "  setp.lt.u32 %p0, %r0, 64;\n"
        "  @%p0 bra $A;\n"
        "  setmaxnreg.dec.sync.aligned.u32 40;\n"
        "  ret;\n"
        "$A:\n"
        "  setmaxnreg.dec.sync.aligned.u32 40;\n"
        "  ret;\n"
        "}\n";
    f = load(d, div_ptx, "k", &m);
    expect_launch_error(d, f, 128, NULL, "divergent warpgroup instructions", NULL);
    dev_module_unload(m);
    dev_close(d);
}

/* tile run --device emu:<target>: accepted (a shipped kernel compiled for sm_90a, checked against its
 * reference), an unknown target refused with the valid device strings. */
static int run_cli(const char *args, char *out, size_t cap) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", TILE_CLI, args);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    int rc = pclose(p);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

Test(device, cli_device_option) {
    char buf[8192];
    cr_assert_eq(run_cli("run norm --json --tokens 3 --hidden 300 --device emu:sm_90a --reps 1", buf, sizeof buf), 0, "%s", buf);
    cr_assert(strstr(buf, "\"arch\":\"sm_90a\"") && strstr(buf, "\"ok\":true"), "%s", buf);
    cr_assert_eq(run_cli("run norm --tokens 3 --hidden 300 --device emu:sm_99", buf, sizeof buf), 2, "%s", buf);
    cr_assert(strstr(buf, "emu:sm_99") && strstr(buf, "sm_90a"), "%s", buf);
    /* the runtime's grammar: options after the target, racecheck among them; its message for a bad one */
    cr_assert_eq(run_cli("run norm --json --tokens 3 --hidden 300 --device emu:sm_90a:sms=8:racecheck --reps 1", buf, sizeof buf), 0, "%s", buf);
    cr_assert(strstr(buf, "\"ok\":true"), "%s", buf);
    cr_assert_eq(run_cli("run norm --tokens 3 --hidden 300 --device emu:racecheck=1", buf, sizeof buf), 2, "%s", buf);
    cr_assert(strstr(buf, "unknown emulator target or option 'racecheck=1'") && strstr(buf, "sms=132 and racecheck"), "%s", buf);
}

/* ==== 3. wgmma ==== */
enum { SW_NONE, SW_128, SW_64, SW_32 }; /* the descriptor's swizzle field */
static const unsigned sw_width[4] = {0, 128, 64, 32};

typedef struct WgCase {
    const char *atype, *dtype; /* "f16", "bf16", "tf32", "e4m3", "e5m2", "s8", "u8"; "f32", "f16", "s32" */
    const char *btype;         /* NULL: atype */
    unsigned n, swz;
    bool areg, trans_a, trans_b, neg_a, chain; /* chain: two k-steps in one group (K-major, swizzled) */
} WgCase;

#define WG(a, d, n_, s, ...) {.atype = a, .dtype = d, .n = n_, .swz = s, __VA_ARGS__}

static unsigned esize_of(const char *t) { return !strcmp(t, "tf32") ? 4 : (!strcmp(t, "f16") || !strcmp(t, "bf16")) ? 2 : 1; }

/* A random element: its bits and its exact value.  Values are chosen so every product and every sum of
 * a few dozen of them is exact in f32 (k/8 with |k| <= 16; e4m3 codes of exponents 2^-2..2^2). */
static uint32_t rand_elem(const char *t, double *v) {
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
    unsigned k = esize_of(c->atype) == 2 ? 16 : esize_of(c->atype) == 4 ? 8 : 32;
    Str s = {0};
    str_printf(&s, PTX_HEAD ".visible .entry wg(.param .u64 img, .param .u32 nbytes, .param .u64 descA, .param .u64 descB,"
                            " .param .u64 areg, .param .u64 cmat, .param .u64 dout, .param .u32 scaled)\n{\n"
                            "  .reg .pred %%p<4>;\n  .reg .b32 %%r<16>;\n  .reg .b64 %%rd<16>;\n  .reg .%s %%d<%u>;\n  .reg .b32 %%a<8>;\n"
                            "  .shared .align 1024 .b8 smem[%u];\n",
               f32 ? "f32" : "b32", nd, smem);
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
    str_printf(&s, "  ld.param.u32 %%r10, [scaled];\n  setp.ne.u32 %%p1, %%r10, 0;\n  wgmma.fence.sync.aligned;\n");
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
        str_printf(&s, "  wgmma.mma_async.sync.aligned.m64n%uk%u.%s.%s.%s %s, %s, %%rd4, %s;\n", c->n, k, c->dtype, c->atype,
                   c->btype ? c->btype : c->atype, dv.buf, a, tail);
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

static void run_wgmma_case(TileDevice *d, const WgCase *c) {
    unsigned es = esize_of(c->atype), K1 = es == 2 ? 16 : es == 4 ? 8 : 32, K = c->chain ? 2 * K1 : K1, M = 64, N = c->n;
    bool f16acc = !strcmp(c->dtype, "f16"), integer = !strcmp(c->dtype, "s32");
    unsigned nd = f16acc ? N / 4 : N / 2;
    double *A = calloc(M * K, sizeof *A), *B = calloc(N * K, sizeof *B), *C = calloc(M * N, sizeof *C);
    uint32_t *abits = calloc(M * K, 4), *bbits = calloc(N * K, 4);
    for (unsigned i = 0; i < M * K; i++) abits[i] = rand_elem(c->atype, &A[i]);
    for (unsigned i = 0; i < N * K; i++) bbits[i] = rand_elem(c->btype ? c->btype : c->atype, &B[i]); /* B[n][k] */
    /* shared memory image: A at 0 (unless in registers), B at the next 1024-byte boundary */
    uint32_t alb = 0, asb = 0, asz = 0, blb = 0, bsb = 0, bsz = 0;
    place(c->swz, c->trans_a, M, K, es, 0, 0, &alb, &asb, &asz);
    place(c->swz, c->trans_b, N, K, es, 0, 0, &blb, &bsb, &bsz);
    uint32_t boff = c->areg ? 0 : (asz + 1023) / 1024 * 1024, total = (boff + bsz + 15) / 16 * 16;
    uint8_t *img = calloc(total, 1);
    for (unsigned m = 0; m < M && !c->areg; m++)
        for (unsigned k = 0; k < K; k++) put_elem(img + place(c->swz, c->trans_a, M, K, es, m, k, &alb, &asb, &asz), abits[m * K + k], es);
    for (unsigned n = 0; n < N; n++)
        for (unsigned k = 0; k < K; k++) put_elem(img + boff + place(c->swz, c->trans_b, N, K, es, n, k, &blb, &bsb, &bsz), bbits[n * K + k], es);
    uint64_t da = make_desc(0, alb, asb, c->swz), db = make_desc(boff, blb, bsb, c->swz);
    /* A in registers (the mma.m16n8kK A fragment per warp): register j of lane l holds row l/4 + 8(j%2), columns
     * (l%4)*E + (j/2)*4E .. + E-1, E = 4 / es elements per register; a second k-step in registers 4..7 */
    uint32_t *afrag = calloc(128 * 8, 4);
    unsigned E = 4 / es;
    for (unsigned i = 0; i < 128 && c->areg; i++)
        for (unsigned j = 0; j < (c->chain ? 8u : 4u); j++) {
            unsigned row = 16 * (i / 32) + (i % 32) / 4 + 8 * (j % 2), step = j / 4;
            for (unsigned e = 0; e < E; e++) {
                unsigned col = step * K1 + (i % 4) * E + ((j % 4) / 2) * 4 * E + e;
                afrag[i * 8 + j] |= abits[row * K + col] << (8 * es * e);
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
                float f = (float)(irand(33) - 16) / 4;
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
    uint64_t dout = poisoned(d, 128 * nd * 4);
    for (unsigned scaled = 0; scaled < 2; scaled++) {
        void *args[] = {&dimg, &total, &da, &db, &dareg, &dc, &dout, &scaled};
        cr_assert_eq(dev_launch(f, 1, 1, 1, 128, 1, 1, 0, NULL, args), DEV_OK, "%s\n%s", dev_last_error(d), ptx);
        uint32_t *out = calloc(128 * nd, 4);
        dev_memcpy_dtoh(d, out, dout, 128 * nd * 4);
        for (unsigned i = 0; i < 128; i++)
            for (unsigned e = 0; e < (f16acc ? 2 * nd : nd); e++) {
                unsigned row, col;
                d_coord(i, e, &row, &col);
                double ref = scaled || (c->chain) ? C[row * N + col] : 0;
                if (c->chain && !scaled) ref = 0; /* the first step's scale-d is the parameter; the second accumulates */
                for (unsigned k = 0; k < K; k++) ref += (c->neg_a ? -1 : 1) * A[row * K + k] * B[col * K + k];
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
                    cr_assert_eq(got, (float)ref, "%s.%s n%u swz%u areg%d trans%d%d: D[%u][%u] = %g, want %g", c->dtype, c->atype, N, c->swz,
                                 c->areg, c->trans_a, c->trans_b, row, col, got, ref);
                }
            }
        free(out);
    }
    dev_module_unload(m);
    free(ptx), free(A), free(B), free(C), free(abits), free(bbits), free(img), free(afrag), free(cregs);
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

/* ==== 5. stmatrix ==== */
static char *stmatrix_ptx(unsigned nmat, bool trans) {
    Str s = {0};
    str_printf(&s, PTX_HEAD ".visible .entry st(.param .u64 in, .param .u64 out)\n{\n"
                            "  .reg .pred %%p<2>;\n  .reg .b32 %%r<16>;\n  .reg .b64 %%rd<8>;\n  .shared .align 16 .b8 smem[512];\n"
                            "  ld.param.u64 %%rd0, [in];\n  ld.param.u64 %%rd1, [out];\n  mov.u32 %%r0, %%laneid;\n"
                            "  mul.wide.u32 %%rd2, %%r0, 16;\n  add.u64 %%rd3, %%rd0, %%rd2;\n"
                            "  ld.global.v4.b32 {%%r1, %%r2, %%r3, %%r4}, [%%rd3];\n"
                            /* lane 8i + r gives row r of matrix i, stored as row 8i + (3r mod 8); lanes past the matrices an
                             * address far outside shared memory, which must be ignored */
                            "  shr.u32 %%r5, %%r0, 3;\n  and.b32 %%r6, %%r0, 7;\n  mul.lo.u32 %%r6, %%r6, 3;\n  and.b32 %%r6, %%r6, 7;\n"
                            "  mad.lo.u32 %%r7, %%r5, 8, %%r6;\n  mov.u32 %%r8, smem;\n  mad.lo.u32 %%r9, %%r7, 16, %%r8;\n"
                            "  setp.ge.u32 %%p0, %%r5, %u;\n  @%%p0 mov.u32 %%r9, 0x7ffff0;\n", nmat);
    const char *regs = nmat == 1 ? "{%r1}" : nmat == 2 ? "{%r1, %r2}" : "{%r1, %r2, %r3, %r4}";
    str_printf(&s, "  stmatrix.sync.aligned.m8n8.x%u%s.shared.b16 [%%r9], %s;\n  bar.sync 0;\n"
                   "  mul.wide.u32 %%rd4, %%r0, 16;\n  add.u64 %%rd5, %%rd1, %%rd4;\n  mad.lo.u32 %%r10, %%r0, 16, %%r8;\n"
                   "  ld.shared.v4.b32 {%%r1, %%r2, %%r3, %%r4}, [%%r10];\n  st.global.v4.b32 [%%rd5], {%%r1, %%r2, %%r3, %%r4};\n"
                   "  ret;\n}\n", nmat, trans ? ".trans" : "", regs);
    return str_take(&s);
}

Test(stmatrix, x1_x2_x4_trans) {
    seed_rng();
    TileDevice *d = open_emu(true);
    for (unsigned nmat = 1; nmat <= 4; nmat *= 2)
        for (int trans = 0; trans < 2; trans++) {
            char *ptx = stmatrix_ptx(nmat, trans);
            TileDevModule *m;
            TileDevFunction *f = load(d, ptx, "st", &m);
            uint16_t in[32][8], out[32][8]; /* in[lane]: 4 registers of 2 halves */
            for (unsigned l = 0; l < 32; l++)
                for (unsigned k = 0; k < 8; k++) in[l][k] = (uint16_t)rnext();
            uint64_t din = upload(d, in, sizeof in), dout = poisoned(d, sizeof out);
            void *args[] = {&din, &dout};
            cr_assert_eq(dev_launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
            dev_memcpy_dtoh(d, out, dout, sizeof out);
            /* element (r, c) of matrix i: register i of lane 4r + c/2, half c%2; .trans: of lane 4c + r/2, half r%2 */
            for (unsigned i = 0; i < nmat; i++)
                for (unsigned r = 0; r < 8; r++)
                    for (unsigned c = 0; c < 8; c++) {
                        unsigned lane = trans ? 4 * c + r / 2 : 4 * r + c / 2, half = trans ? r % 2 : c % 2;
                        unsigned slot = 8 * i + (3 * r) % 8;
                        cr_assert_eq(out[slot][c], in[lane][2 * i + half], "x%u%s matrix %u (%u,%u)", nmat, trans ? ".trans" : "", i, r, c);
                    }
            dev_module_unload(m);
            free(ptx);
        }
    dev_close(d);
}

/* An immediate source (`{7}` or `7`) of stmatrix .x1 is refused at load, as ptxas refuses it ("Arguments mismatch for
 * instruction 'stmatrix'"); before: loaded and ran (probeP F-low2). */
Test(stmatrix, immediate_source_refused) {
    TileDevice *d = open_emu(false);
    expect_load_error(d, PTX_HEAD ".visible .entry k()\n{\n  .reg .b32 %r<4>;\n  .shared .align 16 .b8 s[256];\n  mov.u32 %r3, s;\n"
                         "  stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r3], {7};\n  ret;\n}\n", "not an immediate");
    expect_load_error(d, PTX_HEAD ".visible .entry k()\n{\n  .reg .b32 %r<4>;\n  .shared .align 16 .b8 s[256];\n  mov.u32 %r3, s;\n"
                         "  stmatrix.sync.aligned.m8n8.x1.shared.b16 [%r3], 7;\n  ret;\n}\n", "not an immediate");
    dev_close(d);
}

static const char *mbar_tx_ptx = PTX_HEAD
    ".visible .entry k(.param .u64 out)\n"
    "{\n"
    "  .reg .pred %p<12>;\n"
    "  .reg .b32 %r<16>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  .shared .align 8 .b64 bar[2];\n"
    "  ld.param.u64 %rd0, [out];\n"
    "  mov.u32 %r0, bar;\n"
    "  mbarrier.init.shared::cta.b64 [%r0], 1;\n"
    "  mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r0], 64;\n"
    "  mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%r0], 32;\n"
    "  mbarrier.test_wait.parity.shared::cta.b64 %p1, [%r0], 0;\n"
    "  mbarrier.arrive.shared::cta.b64 %rd1, [%r0];\n"
    "  mbarrier.test_wait.parity.shared::cta.b64 %p2, [%r0], 0;\n"
    "  mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%r0], 32;\n"
    "  mbarrier.test_wait.parity.shared::cta.b64 %p3, [%r0], 0;\n"
    "  mbarrier.test_wait.parity.shared::cta.b64 %p4, [%r0], 1;\n"
    "  mbarrier.test_wait.shared::cta.b64 %p5, [%r0], %rd1;\n"
    "  add.u32 %r1, %r0, 8;\n"
    "  mbarrier.init.shared::cta.b64 [%r1], 3;\n"
    "  mbarrier.arrive_drop.shared::cta.b64 %rd2, [%r1];\n"
    "  mbarrier.arrive.noComplete.shared::cta.b64 %rd3, [%r1], 1;\n"      /* 2 of 3: not complete yet */
    "  mbarrier.test_wait.parity.shared::cta.b64 %p6, [%r1], 0;\n"
    "  mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r1];\n"     /* 3 of 3 */
    "  mbarrier.test_wait.parity.shared::cta.b64 %p7, [%r1], 0;\n"
    "  mbarrier.arrive.shared::cta.b64 %rd4, [%r1], 2;\n"                 /* the next phase expects 2 (one dropped) */
    "  mbarrier.test_wait.parity.shared::cta.b64 %p8, [%r1], 1;\n"
    "  mbarrier.pending_count.b64 %r2, %rd3;\n"
    "  selp.u32 %r3, 1, 0, %p1;\n  st.global.u32 [%rd0], %r3;\n"
    "  selp.u32 %r3, 1, 0, %p2;\n  st.global.u32 [%rd0+4], %r3;\n"
    "  selp.u32 %r3, 1, 0, %p3;\n  st.global.u32 [%rd0+8], %r3;\n"
    "  selp.u32 %r3, 1, 0, %p4;\n  st.global.u32 [%rd0+12], %r3;\n"
    "  selp.u32 %r3, 1, 0, %p5;\n  st.global.u32 [%rd0+16], %r3;\n"
    "  selp.u32 %r3, 1, 0, %p6;\n  st.global.u32 [%rd0+20], %r3;\n"
    "  selp.u32 %r3, 1, 0, %p7;\n  st.global.u32 [%rd0+24], %r3;\n"
    "  selp.u32 %r3, 1, 0, %p8;\n  st.global.u32 [%rd0+28], %r3;\n"
    "  st.global.u32 [%rd0+32], %r2;\n"
    "  mbarrier.arrive.noComplete.shared::cta.b64 %rd5, [%r1], 2;\n"      /* completes phase 2: an error */
    "  ret;\n"
    "}\n";

Test(mbarrier, tx_counts_drop_nocomplete) {
    TileDevice *d = open_emu(false);
    TileDevModule *m;
    TileDevFunction *f = load(d, mbar_tx_ptx, "k", &m);
    uint64_t out = poisoned(d, 9 * 4);
    void *args[] = {&out};
    expect_launch_error(d, f, 1, args, "noComplete completes the phase", "PTX line 49", NULL);
    uint32_t h[9];
    dev_memcpy_dtoh(d, h, out, sizeof h);
    const uint32_t want[9] = {0, 0, 1, 0, 1, 0, 1, 1, 1};
    for (unsigned i = 0; i < 9; i++) cr_assert_eq(h[i], want[i], "answer %u is %u", i, h[i]);
    dev_module_unload(m);
    dev_close(d);
}

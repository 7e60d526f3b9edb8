/* test_emu_hopper.c - the emulator as an sm_90a device: emu:<target> device
 * strings, mbarrier, bulk copies, elect.sync, setmaxnreg, clusters of one
 * CTA, stmatrix.  wgmma: test_emu_wgmma.c; tensor copies through tensor maps
 * and the pipelined GEMM that puts everything together: test_emu_tma.c;
 * racecheck's async-proxy rules: test_emu_race_async.c.
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
    /* a .target that support/target.h does not list is placed by its SM number all the same: an older one
     * (sm_75) loads, a newer one (sm_90, sm_100a) does not (sm_100a loaded on emu:sm_90a before) */
    cr_assert_eq(dev_module_load_ptx(d, ".version 7.0\n.target sm_75\n.address_size 64\n.visible .entry k()\n{\n  ret;\n}\n", &m), DEV_OK,
                 "%s", dev_last_error(d));
    dev_module_unload(m);
    cr_assert_eq(dev_module_load_ptx(d, ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n  ret;\n}\n", &m), DEV_ERR_PTX);
    cr_assert(strstr(dev_last_error(d), "emu:sm_89 cannot load PTX for .target sm_90 (a newer GPU's)"), "%s", dev_last_error(d));
    cr_assert_eq(dev_module_load_ptx(d, ".version 7.8\n.target compute_90\n.address_size 64\n.visible .entry k()\n{\n  ret;\n}\n", &m),
                 DEV_ERR_PTX, "emu:sm_89 loaded compute_90 PTX");
    cr_assert(strstr(dev_last_error(d), "cannot load PTX for .target compute_90 (a newer GPU's)"), "%s", dev_last_error(d));
    cr_assert_eq(dev_module_load_ptx(d, ".version 7.0\n.target compute_80\n.address_size 64\n.visible .entry k()\n{\n  ret;\n}\n", &m),
                 DEV_OK, "%s", dev_last_error(d));
    dev_module_unload(m);
    dev_close(d);
    cr_assert_eq(dev_open("emu:sm_90a", NULL, &d, &err), DEV_OK);
    const char *sm100 = ".version 8.6\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{\n  ret;\n}\n";
    cr_assert_eq(dev_module_load_ptx(d, sm100, &m), DEV_ERR_PTX, "emu:sm_90a loaded sm_100a PTX");
    cr_assert(strstr(dev_last_error(d), "emu:sm_90a cannot load PTX for .target sm_100a (a newer GPU's)"), "%s", dev_last_error(d));
    cr_assert_eq(dev_module_load_ptx(d, ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n  ret;\n}\n", &m), DEV_OK,
                 "%s", dev_last_error(d));
    dev_module_unload(m);
    dev_close(d);
    /* plain emu loads any target's PTX */
    cr_assert_eq(dev_open("emu", NULL, &d, &err), DEV_OK);
    cr_assert_eq(dev_module_load_ptx(d, sm100, &m), DEV_OK, "%s", dev_last_error(d));
    dev_module_unload(m);
    dev_close(d);
}

/* A GPU's context compiles for the GPU's own target when none is named (an H100/H200 gets sm_90a, not
 * the sm_80 default: an H200 ran sm_80 code before), and a named one must run there (sm_90a code runs
 * on 9.0 only); the emulator's is what its device string names. */
Test(device, target_of_a_gpu_by_compute_capability) {
    struct { int cc; const char *want; } own[] = {{80, "sm_80"}, {86, "sm_86"}, {87, "sm_86"}, {89, "sm_89"}, {90, "sm_90a"},
                                                  {100, "sm_89"}, {120, "sm_89"}, {75, NULL}, {70, NULL}};
    for (size_t i = 0; i < ARRAY_LEN(own); i++) {
        const Target *t = target_for_cc(own[i].cc);
        if (!own[i].want) cr_expect_null(t, "cc %d: %s", own[i].cc, t ? t->name : "");
        else cr_expect(t && !strcmp(t->name, own[i].want), "cc %d: %s, want %s", own[i].cc, t ? t->name : "none", own[i].want);
    }
    struct { const char *arch; int cc; bool runs; } named[] = {
        {"sm_80", 80, true}, {"sm_80", 90, true}, {"sm_80", 100, true}, {"sm_86", 80, false}, {"sm_89", 86, false},
        {"sm_89", 90, true}, {"sm_90a", 90, true}, {"sm_90a", 89, false}, {"sm_90a", 100, false}, {"sm_90a", 120, false}};
    for (size_t i = 0; i < ARRAY_LEN(named); i++)
        cr_expect_eq(target_runs_on(target_find(named[i].arch), named[i].cc), named[i].runs, "%s on cc %d", named[i].arch, named[i].cc);
    cr_expect(!target_runs_on(NULL, 90));
    /* a context's target: emulated, GPU by compute capability, named, default; the refusals' messages */
    const Target *s80 = target_find("sm_80"), *s89 = target_find("sm_89"), *s90 = target_find("sm_90a");
    char err[224] = "";
    bool older = true;
    cr_expect_eq(target_for_context(NULL, s90, 0, err, sizeof err, &older), s90);
    cr_expect(!older);
    cr_expect_eq(target_for_context(s90, s90, 0, err, sizeof err, &older), s90);
    cr_expect_null(target_for_context(s80, s90, 0, err, sizeof err, &older));
    cr_expect(!older && !strcmp(err, "opt->arch sm_80 differs from the device's sm_90a"), "%s", err);
    cr_expect_eq(target_for_context(NULL, NULL, 0, err, sizeof err, &older), target_default());
    cr_expect_eq(target_for_context(s89, NULL, 0, err, sizeof err, &older), s89);
    cr_expect_eq(target_for_context(NULL, NULL, 90, err, sizeof err, &older), s90);
    cr_expect_eq(target_for_context(s80, NULL, 90, err, sizeof err, &older), s80);
    cr_expect_eq(target_for_context(NULL, NULL, 89, err, sizeof err, &older), s89);
    cr_expect_null(target_for_context(s90, NULL, 89, err, sizeof err, &older));
    cr_expect(!older && !strcmp(err, "opt->arch sm_90a does not run on this GPU (compute capability 8.9); its target is sm_89"), "%s",
              err);
    cr_expect_null(target_for_context(NULL, NULL, 75, err, sizeof err, &older));
    cr_expect(older && strstr(err, "compute capability 7.5 is older than every target (sm_80, sm_86, sm_89 or sm_90a)"), "%s", err);
    cr_expect_null(target_for_context(s80, NULL, 75, err, sizeof err, &older));
    cr_expect(!older && strstr(err, "does not run on this GPU (compute capability 7.5)") && !strstr(err, "its target"), "%s", err);
    /* through the API: the emulator named sm_90a, the options another arch */
    tile_context *ctx = NULL;
    tile_context_options o = {.size = sizeof o, .device = "emu:sm_90a", .arch = "sm_80"};
    cr_expect_eq(tile_context_create_ex(&o, &ctx), TILE_ERROR_INVALID_VALUE);
    cr_expect_str_eq(tile_last_error(NULL), "tile_context_create_ex: opt->arch sm_80 differs from the device's sm_90a");
    cr_expect_null(ctx);
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
    /* the leader of each warp is lane 0; pending_count gives the count before the arrival (the PTX ISA):
     * thread 0 arrived first (64 pending), thread 32 after the 32 threads of warp 0 (32 pending) */
    cr_assert_eq(h[64], 0);
    cr_assert_eq(h[65], 64);
    cr_assert_eq(h[66], 0);
    cr_assert_eq(h[67], 32);
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
    /* a plain load that read the bytes before the bulk store was issued, and reads them again while it is pending:
     * reported, though the load's instruction last hit that allocation (its hint is dropped with the cache's
     * entries when the pending bytes meet them); after the wait, the stored value */
    static const char *again_ptx = PTX_HEAD
        ".visible .entry ag(.param .u64 out, .param .u32 wait)\n"
        "{\n"
        "  .reg .pred %p<4>;\n"
        "  .reg .b32 %r<8>;\n"
        "  .reg .b64 %rd<4>;\n"
        "  .reg .f32 %f<4>;\n"
        "  .shared .align 128 .b8 buf[128];\n"
        "  ld.param.u64 %rd1, [out];\n"
        "  ld.param.u32 %r1, [wait];\n"
        "  mov.u32 %r2, buf;\n"
        "  st.shared.f32 [%r2+64], 0f40490FDB;\n"
        "  fence.proxy.async.shared::cta;\n"
        "  mov.u32 %r3, 0;\n"
        "$L:\n"
        "  ld.global.f32 %f1, [%rd1+64];\n"
        "  setp.ne.u32 %p1, %r3, 0;\n"
        "  @%p1 bra $END;\n"
        "  cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r2], 128;\n"
        "  cp.async.bulk.commit_group;\n"
        "  setp.ne.u32 %p2, %r1, 0;\n"
        "  @%p2 cp.async.bulk.wait_group 0;\n"
        "  add.u32 %r3, %r3, 1;\n"
        "  bra $L;\n"
        "$END:\n"
        "  st.global.f32 [%rd1+256], %f1;\n"
        "  ret;\n"
        "}\n";
    f = load(d, again_ptx, "ag", &m);
    for (uint32_t wait = 0; wait < 2; wait++) {
        uint64_t out = poisoned(d, 512);
        void *args[] = {&out, &wait};
        if (!wait) {
            expect_launch_error(d, f, 1, args, "racecheck: global memory read before a bulk store to it completed", "PTX line 18",
                                "bulk copy at PTX line 21", NULL);
            continue;
        }
        cr_assert_eq(dev_launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, args), DEV_OK, "%s", dev_last_error(d));
        float got;
        dev_memcpy_dtoh(d, &got, out + 256, 4);
        cr_assert_eq(got, 3.14159274f, "the load after the wait read %g", got);
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
    /* warps of one warpgroup at two copies of one setmaxnreg (Triton's warp specialization: each partition has
     * its own) run; copies that differ in action or count are divergent */
    static const char *const second[] = {"setmaxnreg.dec.sync.aligned.u32 40;", "setmaxnreg.dec.sync.aligned.u32 48;",
                                         "setmaxnreg.inc.sync.aligned.u32 40;"};
    for (int k = 0; k < 3; k++) {
        char div_ptx[1024];
        snprintf(div_ptx, sizeof div_ptx,
                 PTX_HEAD ".visible .entry k()\n"
                          "{\n"
                          "  .reg .pred %%p<2>;\n"
                          "  .reg .b32 %%r<4>;\n"
                          "  mov.u32 %%r0, %%tid.x;\n"
                          "  setp.lt.u32 %%p0, %%r0, 64;\n"
                          "  @%%p0 bra $A;\n"
                          "  setmaxnreg.dec.sync.aligned.u32 40;\n"
                          "  ret;\n"
                          "$A:\n"
                          "  %s\n"
                          "  ret;\n"
                          "}\n",
                 second[k]);
        f = load(d, div_ptx, "k", &m);
        if (k == 0) cr_expect_eq(dev_launch(f, 1, 1, 1, 128, 1, 1, 0, NULL, NULL), DEV_OK, "%s", dev_last_error(d));
        else expect_launch_error(d, f, 128, NULL, "divergent warpgroup instructions", NULL);
        dev_module_unload(m);
    }
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
    /* Triton's and nvcc's name for Hopper, sm_90, is sm_90a here: the message says so, as --arch's does */
    cr_assert_eq(run_cli("run norm --tokens 3 --hidden 300 --device emu:sm_90", buf, sizeof buf), 2, "%s", buf);
    cr_assert(strstr(buf, "option 'sm_90'; did you mean 'sm_90a'?"), "%s", buf);
    cr_assert_eq(run_cli("run norm --tokens 3 --hidden 300 --device emu:sm_99", buf, sizeof buf), 2, "%s", buf);
    cr_assert(!strstr(buf, "did you mean"), "%s", buf);
}

/* ==== 3. stmatrix ==== */
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

/* Racecheck: two warps storing the same matrix (a layout that replicates elements across warps, as Triton's
 * stores through stmatrix) are no hazard, as for st.shared; a lane storing another value is one (probeY F2:
 * the same-bytes exemption was st's only). */
Test(stmatrix, replicated_store_racecheck) {
    TileDevice *d = open_emu(true);
    for (int differ = 0; differ < 2; differ++) {
        char ptx[1024];
        snprintf(ptx, sizeof ptx,
                 PTX_HEAD ".visible .entry k()\n{\n  .reg .b32 %%r<8>;\n  .shared .align 16 .b8 s[256];\n"
                          "  mov.u32 %%r0, %%laneid;\n  mov.u32 %%r1, %%tid.x;\n  shr.u32 %%r2, %%r1, 5;\n"
                          "  mul.lo.u32 %%r3, %%r2, %d;\n  add.u32 %%r4, %%r0, %%r3;\n" /* the value: lane (+ warp when differ) */
                          "  and.b32 %%r5, %%r0, 7;\n  mov.u32 %%r6, s;\n  mad.lo.u32 %%r6, %%r5, 16, %%r6;\n"
                          "  stmatrix.sync.aligned.m8n8.x1.shared.b16 [%%r6], {%%r4};\n  ret;\n}\n",
                 differ);
        TileDevModule *m;
        TileDevFunction *f = load(d, ptx, "k", &m);
        if (!differ) cr_expect_eq(dev_launch(f, 1, 1, 1, 64, 1, 1, 0, NULL, NULL), DEV_OK, "%s", dev_last_error(d));
        else expect_launch_error(d, f, 64, NULL, "write after write", NULL);
        dev_module_unload(m);
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
    const uint32_t want[9] = {0, 0, 1, 0, 1, 0, 1, 1, 2}; /* the last: 2 pending before the noComplete arrival */
    for (unsigned i = 0; i < 9; i++) cr_assert_eq(h[i], want[i], "answer %u is %u", i, h[i]);
    dev_module_unload(m);
    dev_close(d);
}

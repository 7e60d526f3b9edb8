/* test_emu_hopper.c - the emulator as an sm_90a device: emu:<target> device
 * strings, mbarrier, bulk copies, elect.sync, setmaxnreg, wgmma (every
 * swizzle mode, A from shared memory and registers, f16/bf16/tf32/e4m3/s8),
 * tensor copies through tensor maps, stmatrix.
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
#include "support/target.h"
#include "test_rng.h"

#define PTX_HEAD ".version 8.0\n.target sm_90a\n.address_size 64\n"

static TileDevice *open_emu(bool racecheck) {
    TileDevice *d = NULL;
    char *err = NULL;
    DevOptions o = {.emu_racecheck = racecheck, .emu_host_threads = 2, .emu_timeout_seconds = 60};
    cr_assert_eq(dev_open("emu:sm_90a", &o, &d, &err), DEV_OK, "dev_open(emu:sm_90a): %s", err ? err : "");
    return d;
}

/* ptxas (when installed) must accept every kernel here. */
static void check_ptxas(const char *ptx) {
    static int have = -1;
    if (have < 0) have = access("/usr/local/cuda/bin/ptxas", X_OK) == 0 ? 1 : system("command -v ptxas >/dev/null 2>&1") == 0 ? 2 : 0;
    if (!have) return;
    char path[] = "/tmp/tile_emu_hopper_XXXXXX.ptx";
    int fd = mkstemps(path, 4);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(ptx, f);
    fclose(f);
    char cmd[600], log[8192] = "";
    snprintf(cmd, sizeof cmd, "%s -arch=sm_90a %s -o /dev/null 2>&1", have == 1 ? "/usr/local/cuda/bin/ptxas" : "ptxas", path);
    FILE *pp = popen(cmd, "r");
    cr_assert(pp);
    size_t n = fread(log, 1, sizeof log - 1, pp);
    log[n] = 0;
    int rc = pclose(pp);
    unlink(path);
    cr_assert_eq(rc, 0, "ptxas rejects the PTX:\n%s\n%s", log, ptx);
}

static TileDevFunction *load(TileDevice *d, const char *ptx, const char *name, TileDevModule **mod) {
    check_ptxas(ptx);
    cr_assert_eq(dev_module_load_ptx(d, ptx, mod), DEV_OK, "load: %s\n%s", dev_last_error(d), ptx);
    TileDevFunction *f = NULL;
    cr_assert_eq(dev_module_get_function(*mod, name, &f), DEV_OK, "get_function: %s", dev_last_error(d));
    return f;
}

static uint64_t upload(TileDevice *d, const void *p, size_t n) {
    uint64_t a;
    cr_assert_eq(dev_malloc(d, n, &a), DEV_OK);
    cr_assert_eq(dev_memcpy_htod(d, a, p, n), DEV_OK, "%s", dev_last_error(d));
    return a;
}

static uint64_t poisoned(TileDevice *d, size_t n) {
    uint64_t a;
    cr_assert_eq(dev_malloc(d, n, &a), DEV_OK);
    cr_assert_eq(dev_memset_d8(d, a, 0xFF, n), DEV_OK);
    return a;
}

/* A launch that must fail: its message must contain every one of the NULL-terminated strings. */
static void expect_launch_error(TileDevice *d, TileDevFunction *f, unsigned threads, void **args, ...) {
    DevStatus st = dev_launch(f, 1, 1, 1, threads, 1, 1, 0, NULL, args);
    cr_assert_neq(st, DEV_OK, "the launch succeeded");
    const char *msg = dev_last_error(d);
    va_list ap;
    va_start(ap, args);
    for (const char *s; (s = va_arg(ap, const char *));) cr_assert(strstr(msg, s), "'%s' not in:\n%s", s, msg);
    va_end(ap);
}

static void expect_load_error(TileDevice *d, const char *ptx, const char *what) {
    TileDevModule *m = NULL;
    cr_assert_neq(dev_module_load_ptx(d, ptx, &m), DEV_OK, "loaded:\n%s", ptx);
    cr_assert(strstr(dev_last_error(d), what), "'%s' not in: %s", what, dev_last_error(d));
}

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
    "  bar.warp.sync 0xffffffff;\n"
    "  fence.proxy.async.shared::cta;\n"
    "  setp.ne.u32 %p6, %r3, 0;\n"
    "  @%p6 bra $END;\n"
    "  cp.async.bulk.global.shared::cta.bulk_group [%rd10], [%r15], 128;\n"
    "  cp.async.bulk.commit_group;\n"
    "  cp.async.bulk.wait_group.read 0;\n"
    "$END:\n"
    "  ret;\n"
    "}\n";

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
    expect_load_error(d, PTX_HEAD ".visible .entry k()\n{\n  setmaxnreg.inc.sync.aligned.u32 20;\n  ret;\n}\n", "multiple of 8 in 24..256");
    dev_close(d);
}

/* setmaxnreg is warpgroup-collective: all four warps, or the launch fails. */
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
    cr_assert(strstr(buf, "emu:sm_99") && strstr(buf, "emu:sm_90a"), "%s", buf);
}

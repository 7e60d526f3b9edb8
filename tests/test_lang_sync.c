/* test_lang_sync.c - waits across programs and launches, Triton's: atomic_poll (Triton 3.9) and
 * expect_zero, and programmatic dependent launch's gdc_wait / gdc_launch_dependents, compiled from
 * inline sources and run on the emulator (split from test_lang_triton.c). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "support/hostfloat.h"
#include "tests/lang_run.h"
#include "tests/test_ptxas.h"

/* atomic_poll (Triton 3.9's): program 0 waits, with a scalar poll of an i32 flag and a tensor poll of
 * 16 i64 flags, for program 1, which writes data, then releases the flags (a barrier ahead of each
 * release, as the docs say); program 0 then reads the data.  The polls' results are true, and
 * program 0 read what program 1 wrote before its releases. */
Test(lang_triton, atomic_poll_waits_for_another_program) {
    K k;
    load_src(&k,
             "@num_warps(2)\n"
             "kernel k(flag: *i32, flags: *i64, data: *i32, out: *i32, n: i32) {\n"
             "    let o = arange(0, 64);\n"
             "    let f = arange(0, 16);\n"
             "    if program_id(0) == 0 {\n"
             "        let s = atomic_poll(flag, 1);\n"
             "        store(out + o, load(data + o, o < n) * 3 + 1, o < n);\n"
             "        let t = atomic_poll(flags + f, (f * 7 + 1) as i64, timeout_ns=10000000000);\n"
             "        store(out + 64 + f, load(data + 64 + f) + (t as i32) * 1000 + (s as i32) * 2000);\n"
             "    } else {\n"
             "        store(data + o, o * o + 5, o < n);\n"
             "        debug_barrier();\n"
             "        atomic_store(flag, 1);\n"
             "        store(data + 64 + f, f + 100);\n"
             "        debug_barrier();\n"
             "        atomic_store(flags + f, (f * 7 + 1) as i64);\n"
             "    }\n"
             "}\n",
             "k");
    int32_t flag = 0, data[80], out[80], n = 45;
    int64_t flags[16] = {0};
    for (int i = 0; i < 80; i++) data[i] = -1000, out[i] = -7;
    uint64_t df = upload(&k, &flag, 4), dfs = upload(&k, flags, sizeof flags), dd = upload(&k, data, sizeof data),
             d_o = upload(&k, out, sizeof out);
    void *params[] = {&df, &dfs, &dd, &d_o, &n};
    launch(&k, 2, params);
    download(&k, out, d_o, sizeof out);
    for (int i = 0; i < 64; i++) {
        int32_t want = i < n ? (i * i + 5) * 3 + 1 : -7;
        cr_expect_eq(out[i], want, "out[%d] = %d, want %d", i, out[i], want);
    }
    for (int i = 0; i < 16; i++) cr_expect_eq(out[64 + i], 100 + i + 3000, "out[%d] = %d, want %d", 64 + i, out[64 + i], 100 + i + 3000);
    unload(&k);
}

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Timeouts: nobody sets the flags, some of which hold the expected value from the start.  Elements
 * never set are false after the budget (2 ms, or one from a run-time argument), those already equal
 * are true, also with a zero timeout (each element is loaded once); a scalar poll that times out is
 * false in every thread.  i16 and u64 flags; the launches end in bounded time. */
Test(lang_triton, atomic_poll_timeout) {
    K k;
    load_src(&k,
             "@num_warps(1)\n"
             "kernel k(h: *i16, w: *u64, s: *i32, out: *i32, t: i64) {\n"
             "    let o = arange(0, 32);\n"
             "    let a = atomic_poll(h + o, 5 as i16, timeout_ns=2000000);\n"
             "    let b = atomic_poll(w + o, 9, sem=\"relaxed\", timeout_ns=0);\n"
             "    let c = atomic_poll(w + o, 9, scope=\"cta\", timeout_ns=t);\n"
             "    let d = atomic_poll(s, 1, scope=\"sys\", timeout_ns=t);\n"
             "    store(out + o, (a as i32) + (b as i32) * 2 + (c as i32) * 4 + (d as i32) * 8 + (sum(d as i32 + o * 0) == 32) as i32 * 16);\n"
             "}\n",
             "k");
    int16_t h[32];
    uint64_t w[32];
    int32_t s = 0, out[32];
    for (int i = 0; i < 32; i++) h[i] = (int16_t)(i % 3 == 0 ? 5 : 4), w[i] = i % 4 == 1 ? 9 : 0x100000009ull, out[i] = -1;
    uint64_t dh = upload(&k, h, sizeof h), dw = upload(&k, w, sizeof w), ds = upload(&k, &s, 4), d_o = upload(&k, out, sizeof out);
    int64_t t = 1000000;
    void *params[] = {&dh, &dw, &ds, &d_o, &t};
    double t0 = seconds_now();
    launch(&k, 3, params);
    double took = seconds_now() - t0;
    download(&k, out, d_o, sizeof out);
    for (int i = 0; i < 32; i++) {
        int want = (i % 3 == 0) + (i % 4 == 1) * 6;
        cr_expect_eq(out[i], want, "out[%d] = %d, want %d", i, out[i], want);
    }
    cr_expect(took < 10.0, "the launch took %.2f s", took);
    unload(&k);
}

/* The PTX: one ld.SEM.SCOPE.global loop per element with the width of the flags, %globaltimer only
 * with a timeout, and the program's barrier after the polls. */
Test(lang_triton, atomic_poll_ptx) {
    char *ptx = compile_ptx("kernel k(p: *i32, h: *u16, w: *i64, out: *i32) {\n"
                            "    let o = arange(0, 128);\n"
                            "    let a = atomic_poll(p + o, 1);\n"
                            "    let b = atomic_poll(h + o, 2, sem=\"relaxed\", scope=\"cta\");\n"
                            "    let c = atomic_poll(w + o, 3, scope=\"sys\");\n"
                            "    store(out + o, (a & b & c) as i32);\n"
                            "}\n",
                            "sm_80");
    static const char *const want[] = {"ld.acquire.gpu.global.b32", "ld.relaxed.cta.global.b16", "ld.acquire.sys.global.b64", "bar.sync"};
    for (int i = 0; i < 4; i++) cr_expect_not_null(strstr(ptx, want[i]), "no %s in\n%s", want[i], ptx);
    cr_expect_null(strstr(ptx, "%globaltimer"), "no timeout, no timer:\n%s", ptx);
    free(ptx);
    ptx = compile_ptx("kernel k(p: *i32, out: *i32, t: u32) { store(out, atomic_poll(p, 1, timeout_ns=t) as i32); }\n", "sm_90a");
    cr_expect_not_null(strstr(ptx, "mov.u64 %t, %globaltimer"), "the timer read in the loop:\n%s", ptx);
    cr_expect_not_null(strstr(ptx, "ld.acquire.gpu.global.b32"), "%s", ptx);
    free(ptx);
}

/* atomic_poll's and expect_zero's errors, located at the argument. */
Test(lang_triton, atomic_poll_expect_zero_errors) {
    static const BadSource bad[] = {
        {"kernel k(p: *f32) {\n    let a = atomic_poll(p, 0);\n}\n", "t.tile:2:25: error: 'atomic_poll' polls 16-, 32- or 64-bit integers, got 'ptr<f32>'"},
        {"kernel k(p: *i8) {\n    let a = atomic_poll(p, 0);\n}\n", "t.tile:2:25: error: 'atomic_poll' polls 16-, 32- or 64-bit integers, got 'ptr<i8>'"},
        {"kernel k(p: *i32) {\n    let a = atomic_poll(p, 0, sem=\"release\");\n}\n",
         "t.tile:2:35: error: unknown memory ordering \"release\" of 'atomic_poll': expected \"acquire\" or \"relaxed\""},
        {"kernel k(p: *i32) {\n    let a = atomic_poll(p, 0, scope=\"block\");\n}\n",
         "t.tile:2:37: error: unknown memory scope \"block\" of 'atomic_poll': expected \"gpu\", \"cta\" or \"sys\""},
        {"kernel k(p: *i32) {\n    let a = atomic_poll(p, 0, timeout_ns=1.5);\n}\n",
         "t.tile:2:42: error: timeout_ns of 'atomic_poll' must be a scalar integer (nanoseconds), got 'f32'"},
        {"kernel k(p: *i32) {\n    let a = atomic_poll(p, 0, timeout_ns=-1);\n}\n",
         "t.tile:2:42: error: timeout_ns of 'atomic_poll' must be non-negative, got -1"},
        {"kernel k(p: *i32) {\n    let a = atomic_poll(p, 0, timeout_ns=arange(0, 4));\n}\n",
         "t.tile:2:42: error: timeout_ns of 'atomic_poll' must be a scalar integer (nanoseconds), got 'tensor<4xi32>'"},
        {"kernel k(p: *i32, q: *i32) {\n    let a = atomic_poll(p, q);\n}\n", "t.tile:2:28: error: 'atomic_poll' through pointers to 'i32' takes a number as its value, not the pointer 'ptr<i32>'"},
        {"kernel k(p: *i32) {\n    let a = expect_zero(p, true);\n}\n", "t.tile:2:25: error: 'expect_zero' expects numbers, got 'ptr<i32>'"},
        {"kernel k(p: *f32) {\n    let a = expect_zero(load(p), 1.0);\n}\n", "t.tile:2:34: error: mask of 'expect_zero' must be i1, got 'f32'"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* expect_zero(x, mask), Triton's: x itself; with the debug option a device_assert with Triton's
 * message that fails where mask is true and x is not zero. */
static DevStatus run_expect_zero(int debug, float nonzero_at, float *y, char **msg) {
    tile_compile_options o = {.size = sizeof o, .debug = debug};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("ez.tile",
                                     "kernel k(x: *f32, y: *f32) {\n"
                                     "    let o = arange(0, 64);\n"
                                     "    let v = load(x + o);\n"
                                     "    store(y + o, expect_zero(v, o >= 32) * 2.0 + 1.0);\n"
                                     "}\n",
                                     &o, &c),
                 TILE_OK, "%s", c.diagnostics);
    K k;
    char *err = NULL;
    cr_assert_eq(dev_open("emu", NULL, &k.dev, &err), DEV_OK);
    cr_assert_eq(dev_module_load_ptx(k.dev, c.ptx, &k.mod), DEV_OK, "%s", dev_last_error(k.dev));
    cr_assert_eq(dev_module_get_function(k.mod, "k", &k.fn), DEV_OK);
    tile_compiled_free(&c);
    float x[64];
    for (int i = 0; i < 64; i++) x[i] = i < 32 ? (float)i + 0.5f : 0.0f;
    if (nonzero_at >= 0) x[(int)nonzero_at] = 3.0f;
    uint64_t dx = upload(&k, x, sizeof x), dy = poisoned(&k, sizeof x);
    void *params[] = {&dx, &dy};
    DevStatus s = dev_launch(k.fn, 1, 1, 1, 128, 1, 1, 0, NULL, params);
    if (s == DEV_OK) s = dev_synchronize(k.dev);
    *msg = strdup(s == DEV_OK ? "" : dev_last_error(k.dev));
    if (s == DEV_OK) download(&k, y, dy, sizeof x);
    unload(&k);
    return s;
}

Test(lang_triton, expect_zero) {
    float y[64];
    char *msg;
    /* without -g it is x, checked or not (x[40] = 3 is not zero where the mask is true) */
    for (int debug = 0; debug <= 1; debug++) {
        cr_assert_eq(run_expect_zero(debug, debug ? -1 : 40, y, &msg), DEV_OK, "%s", msg);
        for (int i = 0; i < 64; i++) {
            float want = (i < 32 ? (float)i + 0.5f : i == 40 && !debug ? 3.0f : 0.0f) * 2.0f + 1.0f;
            cr_expect_eq(y[i], want, "debug %d: y[%d] = %g, want %g", debug, i, y[i], want);
        }
        free(msg);
    }
    /* with -g the element that is not zero where the mask is true fails, with Triton's message */
    cr_assert_neq(run_expect_zero(1, 40, y, &msg), DEV_OK);
    cr_expect(strstr(msg, "expect_zero expected x == 0 where mask is true") && strstr(msg, "ez.tile:4"), "assert message: %s", msg);
    free(msg);
}

/* ---- programmatic dependent launch: gdc_wait() and gdc_launch_dependents() (Triton's
 * triton.language.extra.cuda.gdc_*) ---- */

/* A producer that lets its dependents launch early (as Triton's tutorial 11), and consumers that wait
 * for it before reading what it wrote: an element-wise one, and a GEMM whose K loop is software-pipelined
 * (tensor maps on sm_90a, a producer warpgroup with @warp_specialize) reading the producer's A. */
static const char gdc_src[] =
    "kernel produce(x: *f32, y: *f32, a: *f16, len: i32, na: i32) {\n"
    "    gdc_launch_dependents();\n"
    "    let o = program_id(0) * 256 + arange(0, 256);\n"
    "    store(y + o, load(x + o, o < len, 0.0) * 2.0 - 1.0, o < len);\n"
    "    store(a + o, (o % 7 - 3) as f16, o < na);\n"
    "}\n"
    "kernel consume(y: *f32, z: *f32, len: i32) {\n"
    "    gdc_wait();\n"
    "    let o = program_id(0) * 256 + arange(0, 256);\n"
    "    store(z + o, load(y + o, o < len, 0.0) * 3.0 + 1.0, o < len);\n"
    "}\n"
    "kernel mm(a: *f16, b: *f16, c: *f32, m: i32, n: i32, k: i32, const BM: i32 = 64, const BN: i32 = 64, const BK: i32 = 32) {\n"
    "    gdc_wait();\n"
    "    let tn = (n + BN - 1) / BN;\n"
    "    let rm = program_id(0) / tn * BM + arange(0, BM);\n"
    "    let rn = program_id(0) % tn * BN + arange(0, BN);\n"
    "    let acc = zeros([BM, BN], f32);\n"
    "    for k0 in range(0, k, BK) {\n"
    "        let kk = k0 + arange(0, BK);\n"
    "        let ta = load(a + rm[:, None] * k + kk[None, :], (rm[:, None] < m) && (kk[None, :] < k), 0);\n"
    "        let tb = load(b + kk[:, None] * n + rn[None, :], (kk[:, None] < k) && (rn[None, :] < n), 0);\n"
    "        acc = dot(ta, tb, acc);\n"
    "    }\n"
    "    gdc_launch_dependents();\n"
    "    store(c + rm[:, None] * n + rn[None, :], acc, (rm[:, None] < m) && (rn[None, :] < n));\n"
    "}\n";
/* k and n multiples of 16 (not of BK): the loop's tiles can be pipelined, and described by tensor maps */
static const char *const gdc_specs[] = {"k=16", "n=16", NULL};

/* gdc_src, with @warp_specialize on mm when ws */
static void gdc_source(char *out, size_t n, bool ws) {
    const char *mm = strstr(gdc_src, "kernel mm(");
    snprintf(out, n, "%.*s%s%s", (int)(mm - gdc_src), gdc_src, ws ? "@warp_specialize(1)\n" : "", mm);
}

static char *gdc_ptx(const char *arch, bool no_tma, bool ws) {
    char src[sizeof gdc_src + 32];
    gdc_source(src, sizeof src, ws);
    tile_compile_options o = {.size = sizeof o, .arch = arch, .specialize = gdc_specs, .no_tma = no_tma};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("gdc.tile", src, &o, &c), TILE_OK, "%s", c.diagnostics);
    char *ptx = strdup(c.ptx);
    tile_compiled_free(&c);
    return ptx;
}

/* The PTX of one entry of a module (up to the next .entry). */
static char *ptx_entry(const char *ptx, const char *name) {
    char key[64];
    snprintf(key, sizeof key, ".entry %s(", name);
    const char *s = strstr(ptx, key);
    cr_assert_not_null(s, "no entry %s", name);
    const char *e = strstr(s + 1, ".entry ");
    return strndup(s, e ? (size_t)(e - s) : strlen(s));
}

static int count_of(const char *s, const char *what) {
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

/* Where the first global memory access of an entry's text is (ld/st.global, cp.async of any kind), or NULL. */
static const char *first_global_access(const char *e) {
    static const char *const ops[] = {"ld.global", "st.global", "cp.async"};
    const char *first = NULL;
    for (int i = 0; i < 3; i++) {
        const char *p = strstr(e, ops[i]);
        if (p && (!first || p < first)) first = p;
    }
    return first;
}

/* On sm_90a both become griddepcontrol (PTX 7.8: the module's .version is 8.0), the wait before every global
 * access of the consumers, also when their loop is pipelined (cp.async, tensor maps, a producer warpgroup,
 * which waits itself: two waits); on sm_80/86/89 neither is there (no programmatic dependent launch: a launch
 * waits for the previous one anyway); ptxas takes the PTX. */
Test(lang_triton, gdc_ptx) {
    static const struct {
        const char *arch, *copy;
        bool no_tma, ws;
    } runs[] = {{"sm_90a", "cp.async.bulk.tensor.2d.shared::cluster.global", false, false},
                {"sm_90a", "cp.async.cg.shared.global", true, false},
                {"sm_90a", "cp.async.bulk.tensor.2d.shared::cluster.global", false, true}};
    for (size_t r = 0; r < sizeof runs / sizeof *runs; r++) {
        char *ptx = gdc_ptx(runs[r].arch, runs[r].no_tma, runs[r].ws);
        int major = 0, minor = 0;
        const char *v = strstr(ptx, ".version ");
        cr_assert(v && sscanf(v, ".version %d.%d", &major, &minor) == 2);
        cr_expect_geq(major * 10 + minor, 78, "griddepcontrol needs PTX 7.8: .version %d.%d", major, minor);
        char *prod = ptx_entry(ptx, "produce"), *cons = ptx_entry(ptx, "consume"), *mm = ptx_entry(ptx, "mm");
        cr_expect_eq(count_of(prod, "griddepcontrol.launch_dependents;"), 1, "%s", prod);
        cr_expect_eq(count_of(prod, "griddepcontrol.wait;"), 0, "%s", prod);
        cr_expect_eq(count_of(cons, "griddepcontrol.wait;"), 1, "%s", cons);
        cr_expect_eq(count_of(mm, "griddepcontrol.wait;"), runs[r].ws ? 2 : 1, "run %zu: the waits in\n%s", r, mm);
        cr_expect_eq(count_of(mm, "griddepcontrol.launch_dependents;"), 1, "%s", mm);
        cr_expect(strstr(mm, runs[r].copy), "run %zu: the loop is pipelined (%s):\n%s", r, runs[r].copy, mm);
        if (runs[r].ws) cr_expect(strstr(mm, "setmaxnreg") || strstr(mm, "bar.sync \t1, 128;"), "a producer warpgroup:\n%s", mm);
        const char *cons_first = first_global_access(cons), *mm_first = first_global_access(mm);
        cr_expect(cons_first && strstr(cons, "griddepcontrol.wait;") < cons_first, "the wait first:\n%s", cons);
        cr_expect(mm_first && strstr(mm, "griddepcontrol.wait;") < mm_first, "run %zu: the wait before every access:\n%s", r, mm);
        /* the launch_dependents after the loop: after its last copy */
        const char *ld = strstr(mm, "griddepcontrol.launch_dependents;"), *copy = strstr(mm, runs[r].copy), *last = NULL;
        for (; copy; copy = strstr(copy + 1, runs[r].copy)) last = copy;
        cr_expect(ld && last && ld > last, "run %zu: launch_dependents after the loop's copies:\n%s", r, mm);
        check_ptxas_arch(ptx, "sm_90a");
        free(prod), free(cons), free(mm), free(ptx);
    }
    static const char *const old[] = {"sm_80", "sm_86", "sm_89"};
    for (int i = 0; i < 3; i++) {
        char *ptx = gdc_ptx(old[i], false, false);
        cr_expect_null(strstr(ptx, "griddepcontrol"), "%s: no griddepcontrol before sm_90:\n%s", old[i], ptx);
        cr_expect(strstr(ptx, "cp.async.cg.shared.global"), "%s: the loop still pipelined", old[i]);
        check_ptxas_arch(ptx, old[i]);
        free(ptx);
    }
}

/* A wait inside the loop is one per iteration: nothing of a later iteration may be loaded before it, so the
 * loop is not pipelined (its loads stay in the body, after the wait). */
Test(lang_triton, gdc_wait_in_a_loop_is_not_pipelined_across) {
    char src[sizeof gdc_src];
    snprintf(src, sizeof src, "%s", gdc_src);
    char *at = strstr(src, "        let kk = k0");
    cr_assert(at);
    char with[sizeof gdc_src + 32];
    snprintf(with, sizeof with, "%.*s        gdc_wait();\n%s", (int)(at - src), src, at);
    tile_compile_options o = {.size = sizeof o, .arch = "sm_90a", .specialize = gdc_specs};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("gdc.tile", with, &o, &c), TILE_OK, "%s", c.diagnostics);
    char *mm = ptx_entry(c.ptx, "mm");
    cr_expect_null(strstr(mm, "cp.async"), "no copies issued ahead of a later iteration's wait:\n%s", mm);
    /* the kernel's wait, and one in each loop: peel splits the K loop into its unmasked steady state and the rest */
    cr_expect_eq(count_of(mm, "griddepcontrol.wait;"), 3, "%s", mm);
    check_ptxas_arch(c.ptx, "sm_90a");
    free(mm);
    tile_compiled_free(&c);
}

/* Launched as tutorial 11 launches them, on one stream, the consumers with programmatic_dependent_launch = 1:
 * they read what the producer wrote (outputs poisoned first; sizes that end mid-block).  On the emulator
 * launches run in order, so this checks that the kernels with griddepcontrol run and compute (sm_90a: the
 * instructions are there; sm_80: they are not), not the overlap a GPU gives. */
static void gdc_run(const char *device, bool ws) {
    tile_context_options co = {.device = device, .no_disk_cache = 1, .emu_racecheck = 1};
    tile_context *ctx;
    cr_assert_eq(tile_context_create_ex(&co, &ctx), TILE_OK);
    char src[sizeof gdc_src + 32];
    gdc_source(src, sizeof src, ws);
    tile_compile_options o = {.size = sizeof o, .specialize = gdc_specs};
    tile_module *mod;
    cr_assert_eq(tile_module_load_source_ex(ctx, "gdc.tile", src, &o, &mod), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *kp, *kc, *km;
    cr_assert_eq(tile_module_get_kernel(mod, "produce", &kp), TILE_OK);
    cr_assert_eq(tile_module_get_kernel(mod, "consume", &kc), TILE_OK);
    cr_assert_eq(tile_module_get_kernel(mod, "mm", &km), TILE_OK);
    enum { N = 1001, M = 70, NN = 48, K = 80 };
    static float x[N], z[N], cm[M * NN];
    static uint16_t b[K * NN];
    for (int i = 0; i < N; i++) x[i] = (float)((i * 37) % 101) - 50.0f;
    for (int i = 0; i < K * NN; i++) b[i] = f32_to_f16((float)((i * 5) % 9 - 4));
    tile_devptr dx, dy, dz, da, db, dc;
    cr_assert_eq(tile_malloc(ctx, sizeof x, &dx), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof x, &dy), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof z, &dz), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, M * K * 2, &da), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof b, &db), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, sizeof cm, &dc), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, dx, x, sizeof x), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, db, b, sizeof b), TILE_OK);
    /* y, z, a and c poisoned: NaN, and in a NaN f16 that no product turns into a number */
    cr_assert_eq(tile_memset(ctx, dy, 0xff, sizeof x), TILE_OK);
    cr_assert_eq(tile_memset(ctx, dz, 0xff, sizeof z), TILE_OK);
    cr_assert_eq(tile_memset(ctx, da, 0xff, M * K * 2), TILE_OK);
    cr_assert_eq(tile_memset(ctx, dc, 0xff, sizeof cm), TILE_OK);
    tile_stream s;
    cr_assert_eq(tile_stream_create(ctx, &s), TILE_OK);
    int32_t n = N, na = M * K, m = M, nn = NN, k = K;
    void *pa[] = {&dx, &dy, &da, &n, &na}, *ca[] = {&dy, &dz, &n}, *ma[] = {&da, &db, &dc, &m, &nn, &k};
    tile_launch_options pdl = {.size = sizeof pdl, .programmatic_dependent_launch = 1};
    cr_assert_eq(tile_launch_ex(kp, (tile_dim3){(M * K + 255) / 256, 1, 1}, pa, s, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_launch_ex(kc, (tile_dim3){(N + 255) / 256, 1, 1}, ca, s, &pdl), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_launch_ex(km, (tile_dim3){(M + 63) / 64 * ((NN + 63) / 64), 1, 1}, ma, s, &pdl), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_stream_synchronize(ctx, s), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, z, dz, sizeof z), TILE_OK);
    cr_assert_eq(tile_memcpy_dtoh(ctx, cm, dc, sizeof cm), TILE_OK);
    for (int i = 0; i < N; i++) cr_assert_eq(z[i], (x[i] * 2.0f - 1.0f) * 3.0f + 1.0f, "%s: z[%d] = %g", device, i, z[i]);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < NN; j++) {
            double want = 0;
            for (int q = 0; q < K; q++) want += (double)((i * K + q) % 7 - 3) * f16_to_d(b[q * NN + j]);
            cr_assert_eq(cm[i * NN + j], want, "%s%s: c[%d][%d] = %g, want %g", device, ws ? " ws" : "", i, j, cm[i * NN + j], want);
        }
    tile_stream_destroy(ctx, s);
    tile_module_unload(mod);
    tile_context_destroy(ctx);
}

Test(lang_triton, gdc_wait_reads_the_producers_values_sm90a) { gdc_run("emu:sm_90a", false); }
Test(lang_triton, gdc_wait_reads_the_producers_values_warp_specialized) { gdc_run("emu:sm_90a", true); }
Test(lang_triton, gdc_wait_reads_the_producers_values_sm80) { gdc_run("emu", false); }

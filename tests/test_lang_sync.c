/* test_lang_sync.c - atomics and waits across programs and launches, compiled from inline sources and
 * run on the emulator: Triton's atomic_poll (Triton 3.9) and expect_zero, programmatic dependent
 * launch's gdc_wait / gdc_launch_dependents (split from test_lang_triton.c); atomics' old values in
 * every thread that holds the element, atomic_cas on floats and under a mask, atomic and/or/xor,
 * orderings and scopes (PTX text), `red` where no old value is read, f16/bf16 atomic_add (split from
 * test_lang_run.c). */
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

/* ---- atomics: the old value reaches every thread that holds the element ---- */

/* One program of 4 warps adds 5 to c[0] through a one-element tensor (held by all 128
 * threads) and every thread stores the sum of the old values. */
Test(lang_run, atomic_old_value_one_element) {
    K k;
    load_src(&k,
             "@num_warps(4)\n"
             "kernel k(c: *i32, out: *i32) {\n"
             "    let s = sum(atomic_add(c + arange(0, 1), 5));\n"
             "    store(out + arange(0, 128), s + zeros([128], i32));\n"
             "}\n",
             "k");
    int32_t c0 = 37, out[128];
    memset(out, 0xff, sizeof out);
    uint64_t dc = upload(&k, &c0, 4), dout = upload(&k, out, sizeof out);
    void *params[] = {&dc, &dout};
    launch(&k, 1, params);
    download(&k, out, dout, sizeof out);
    download(&k, &c0, dc, 4);
    cr_expect_eq(c0, 42, "the atomic ran %d times", (c0 - 37) / 5);
    for (int t = 0; t < 128; t++) cr_expect_eq(out[t], 37, "out[%d] = %d", t, out[t]);
    unload(&k);
}

/* A [32] tensor over 4 warps is held by every warp: each thread sums the 32 old values. */
Test(lang_run, atomic_old_value_replicated_tensor) {
    K k;
    load_src(&k,
             "@num_warps(4)\n"
             "kernel k(c: *i32, out: *i32, elems: *i32) {\n"
             "    let i = arange(0, 32);\n"
             "    let old = atomic_add(c + i, 1);\n"
             "    store(out + arange(0, 128), sum(old) + zeros([128], i32));\n"
             "    store(elems + i, old);\n"
             "}\n",
             "k");
    int32_t c[32], out[128], elems[32];
    int want = 0;
    for (int i = 0; i < 32; i++) c[i] = 3 * i + 1, want += c[i];
    memset(out, 0xff, sizeof out);
    uint64_t dc = upload(&k, c, sizeof c), dout = upload(&k, out, sizeof out), de = upload(&k, elems, sizeof elems);
    void *params[] = {&dc, &dout, &de};
    launch(&k, 1, params);
    download(&k, out, dout, sizeof out);
    download(&k, elems, de, sizeof elems);
    download(&k, c, dc, sizeof c);
    for (int i = 0; i < 32; i++) {
        cr_expect_eq(c[i], 3 * i + 2, "c[%d] = %d: the atomic ran more or less than once", i, c[i]);
        cr_expect_eq(elems[i], 3 * i + 1, "elems[%d] = %d", i, elems[i]);
    }
    for (int t = 0; t < 128; t++) cr_expect_eq(out[t], want, "out[%d] = %d, want %d", t, out[t], want);
    unload(&k);
}

/* ---- atomic_cas on floats (bitwise compare) and under a mask ---- */

Test(lang_run, atomic_cas_float_and_masked) {
    K k;
    load_src(&k,
             "@num_warps(4)\n"
             "kernel k(p: *f32, pm: *f32, q: *i32, oldf: *f32, oldm: *f32, oldi: *i32) {\n"
             "    let i = arange(0, 64);\n"
             "    let m = i % 2 == 0;\n"
             "    store(oldf + i, atomic_cas(p + i, 0.0, i as f32 + 0.5));\n"
             "    store(oldm + i, atomic_cas(pm + i, 1.5, i as f32, m));\n"
             "    store(oldi + i, atomic_cas(q + i, 7, i, mask=m));\n"
             "}\n",
             "k");
    float p[64], pm[64], of[64], om[64];
    int32_t q[64], oi[64];
    for (int i = 0; i < 64; i++) {
        p[i] = i % 3 == 0 ? 0.0f : i % 3 == 1 ? -0.0f : 2.0f; /* -0.0 == 0.0 but not bitwise */
        pm[i] = i % 4 < 2 ? 1.5f : 2.5f;
        q[i] = i % 4 < 2 ? 7 : 9;
    }
    float p0[64], pm0[64];
    int32_t q0[64];
    memcpy(p0, p, sizeof p), memcpy(pm0, pm, sizeof pm), memcpy(q0, q, sizeof q);
    uint64_t dp = upload(&k, p, sizeof p), dpm = upload(&k, pm, sizeof pm), dq = upload(&k, q, sizeof q);
    uint64_t dof = upload(&k, of, sizeof of), dom = upload(&k, om, sizeof om), doi = upload(&k, oi, sizeof oi);
    void *params[] = {&dp, &dpm, &dq, &dof, &dom, &doi};
    launch(&k, 1, params);
    download(&k, p, dp, sizeof p), download(&k, pm, dpm, sizeof pm), download(&k, q, dq, sizeof q);
    download(&k, of, dof, sizeof of), download(&k, om, dom, sizeof om), download(&k, oi, doi, sizeof oi);
    for (int i = 0; i < 64; i++) {
        cr_expect(!memcmp(&of[i], &p0[i], 4), "old p[%d] = %g, want %g", i, of[i], p0[i]);
        float wp = i % 3 == 0 ? (float)i + 0.5f : p0[i];
        cr_expect(!memcmp(&p[i], &wp, 4), "p[%d] = %g, want %g", i, p[i], wp);
        bool on = i % 2 == 0;
        cr_expect_eq(om[i], on ? pm0[i] : 0.0f, "old pm[%d] = %g", i, om[i]);
        cr_expect_eq(pm[i], on && pm0[i] == 1.5f ? (float)i : pm0[i], "pm[%d] = %g", i, pm[i]);
        cr_expect_eq(oi[i], on ? q0[i] : 0, "old q[%d] = %d", i, oi[i]);
        cr_expect_eq(q[i], on && q0[i] == 7 ? i : q0[i], "q[%d] = %d", i, q[i]);
    }
    unload(&k);
}

/* A scalar atomic is issued by thread 0 of each program; all 128 threads get its old value. */
Test(lang_run, atomic_old_value_scalar) {
    K k;
    load_src(&k,
             "@num_warps(4)\n"
             "kernel k(c: *i32, out: *i32) {\n"
             "    let old = atomic_add(c, 5);\n"
             "    store(out + program_id(0) * 128 + arange(0, 128), old + zeros([128], i32));\n"
             "}\n",
             "k");
    enum { P = 6 };
    int32_t c0 = 37, out[P * 128];
    memset(out, 0xff, sizeof out);
    uint64_t dc = upload(&k, &c0, 4), dout = upload(&k, out, sizeof out);
    void *params[] = {&dc, &dout};
    launch(&k, P, params);
    download(&k, out, dout, sizeof out);
    download(&k, &c0, dc, 4);
    cr_expect_eq(c0, 37 + 5 * P, "c = %d", c0);
    bool seen[P] = {0};
    for (int p = 0; p < P; p++) {
        int v = out[p * 128];
        cr_assert(v >= 37 && v < 37 + 5 * P && (v - 37) % 5 == 0 && !seen[(v - 37) / 5], "program %d saw %d", p, v);
        seen[(v - 37) / 5] = true;
        for (int t = 1; t < 128; t++) cr_expect_eq(out[p * 128 + t], v, "program %d thread %d: %d, thread 0: %d", p, t, out[p * 128 + t], v);
    }
    unload(&k);
}

/* ---- atomics: and/or/xor, orderings and scopes, f16/bf16 add ---- */


static const char *bitwise_src =
    "@num_warps(4)\n"
    "kernel k(a: *i32, b: *i32, c: *i64, v: *i32, olds: *i32, acc: *i32, n: i32) {\n"
    "    let offs = program_id(0) * 256 + arange(0, 256);\n"
    "    let m = offs < n;\n"
    "    let x = load(v + offs, m, 0);\n"
    "    let o1 = atomic_and(a + offs, x, m, sem=\"relaxed\", scope=\"cta\");\n"
    "    let o2 = atomic_or(b + offs, x, mask=m, sem=\"acquire\");\n"
    "    let o3 = atomic_xor(c + offs, x as i64, m, scope=\"sys\", sem=\"release\");\n"
    "    store(olds + offs, o1 + o2 + (o3 as i32), m);\n"
    "    atomic_xor(acc + zeros([256], i32), x, m);\n"
    "    atomic_or(acc + 1 + zeros([256], i32), 1 << (offs % 31), m);\n"
    "}\n";

/* Odd size, several programs of 4 warps, a mask: per-element and/or/xor return the old
 * values; every element xors into acc[0] (contended) and ors one bit into acc[1] (scalar). */
Test(lang_run, atomic_and_or_xor) {
    enum { N = 1001 };
    K k;
    load_src(&k, bitwise_src, "k");
    static int32_t a[N], b[N], v[N], olds[N], a1[N], b1[N];
    static int64_t c[N], c1[N];
    int32_t acc[2] = {0x1234, 0};
    uint32_t s = 12345;
    for (int i = 0; i < N; i++) {
        s = s * 1664525u + 1013904223u, a[i] = (int32_t)s;
        s = s * 1664525u + 1013904223u, b[i] = (int32_t)s;
        s = s * 1664525u + 1013904223u, c[i] = (int64_t)s << 17 | 5;
        s = s * 1664525u + 1013904223u, v[i] = (int32_t)s;
    }
    uint64_t da = upload(&k, a, sizeof a), db = upload(&k, b, sizeof b), dc = upload(&k, c, sizeof c), dv = upload(&k, v, sizeof v);
    uint64_t dolds = upload(&k, olds, sizeof olds), dacc = upload(&k, acc, sizeof acc);
    int32_t n = N;
    void *params[] = {&da, &db, &dc, &dv, &dolds, &dacc, &n};
    launch(&k, (N + 255) / 256, params);
    download(&k, a1, da, sizeof a1);
    download(&k, b1, db, sizeof b1);
    download(&k, c1, dc, sizeof c1);
    download(&k, olds, dolds, sizeof olds);
    download(&k, acc, dacc, sizeof acc);
    int32_t x = 0x1234, bits = 0;
    for (int i = 0; i < N; i++) {
        cr_expect_eq(a1[i], a[i] & v[i], "a[%d]", i);
        cr_expect_eq(b1[i], b[i] | v[i], "b[%d]", i);
        cr_expect_eq(c1[i], c[i] ^ (int64_t)v[i], "c[%d]", i);
        int32_t want = (int32_t)((uint32_t)a[i] + (uint32_t)b[i] + (uint32_t)(int32_t)c[i]);
        cr_expect_eq(olds[i], want, "olds[%d] = %d, want %d", i, olds[i], want);
        x ^= v[i];
        bits |= 1 << (i % 31);
    }
    cr_expect_eq(acc[0], x, "contended xor: %#x, want %#x", acc[0], x);
    cr_expect_eq(acc[1], bits, "scalar or: %#x, want %#x", acc[1], bits);
    unload(&k);
}

/* The PTX names each ordering and scope (acq_rel at gpu scope by default, as Triton); an atomic whose old
 * values nothing reads is `red` where PTX has that ordering. */
Test(lang_run, atomic_sem_scope_ptx) {
    char *ptx = compile_ptx(bitwise_src, NULL);
    const char *want[] = {"atom.relaxed.cta.global.and.b32", "atom.acquire.gpu.global.or.b32", "atom.release.sys.global.xor.b64",
                          "atom.acq_rel.gpu.global.xor.b32", "atom.acq_rel.gpu.global.or.b32"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) cr_expect_not_null(strstr(ptx, want[i]), "no %s in\n%s", want[i], ptx);
    free(ptx);
    ptx = compile_ptx("kernel k(p: *f32, q: *i64, r: *u32) {\n"
                      "    atomic_add(p, 1.0);\n"
                      "    atomic_max(q, 3 as i64, sem=\"relaxed\");\n"
                      "    atomic_cas(r, 1 as u32, 2 as u32, sem=\"acquire\", scope=\"cta\");\n"
                      "    atomic_xchg(p, 2.0, scope=\"sys\");\n"
                      "}\n",
                      NULL);
    /* old values unread: relaxed (and release) ones are `red`; acq_rel and acquire keep `atom`, as does an exchange */
    const char *want2[] = {"atom.acq_rel.gpu.global.add.f32", "red.relaxed.gpu.global.max.s64", "atom.acquire.cta.global.cas.b32",
                           "atom.acq_rel.sys.global.exch.b32"};
    for (size_t i = 0; i < sizeof want2 / sizeof *want2; i++) cr_expect_not_null(strstr(ptx, want2[i]), "no %s in\n%s", want2[i], ptx);
    free(ptx);
}

/* Accumulations whose old values nothing reads (`red`): contended f32 adds, s32 max and u32 or into 8
 * bins, relaxed and release, and per-element f16 adds, at an odd size over 3 programs; exact values
 * (small integers). */
Test(lang_run, red_without_old_values) {
    enum { N = 700, B = 8 };
    const char *src = "@num_warps(2)\n"
                      "kernel k(f: *f32, mx: *i32, bits: *u32, h: *f16, v: *i32, n: i32) {\n"
                      "    let offs = program_id(0) * 256 + arange(0, 256);\n"
                      "    let m = offs < n;\n"
                      "    let x = load(v + offs, m, 0);\n"
                      "    atomic_add(f + offs % 8, x as f32, m, sem=\"relaxed\");\n"
                      "    atomic_max(mx + offs % 8, x, m, sem=\"release\", scope=\"gpu\");\n"
                      "    atomic_or(bits + offs % 8, (1 << (x & 31)) as u32, m, sem=\"relaxed\", scope=\"cta\");\n"
                      "    atomic_add(h + offs, x as f16, m, sem=\"relaxed\");\n"
                      "}\n";
    char *ptx = compile_ptx(src, NULL);
    const char *want[] = {"red.relaxed.gpu.global.add.f32", "red.release.gpu.global.max.s32", "red.relaxed.cta.global.or.b32",
                          "red.relaxed.gpu.global.add.noftz.f16"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) cr_expect_not_null(strstr(ptx, want[i]), "no %s in\n%s", want[i], ptx);
    cr_expect_null(strstr(ptx, "\tatom."), "an atom left");
    free(ptx);
    K k;
    load_src(&k, src, "k");
    static int32_t v[N], mx[B], mx0[B];
    static float f[B];
    static uint32_t bits[B];
    static uint16_t h[N];
    uint32_t s = 777;
    for (int i = 0; i < N; i++) s = s * 1664525u + 1013904223u, v[i] = (int32_t)(s >> 8) % 1000 - 500;
    for (int b = 0; b < B; b++) f[b] = (float)b, mx[b] = mx0[b] = -400 + 100 * b, bits[b] = 1u << b;
    for (int i = 0; i < N; i++) h[i] = 0x3c00; /* 1.0 */
    uint64_t df = upload(&k, f, sizeof f), dm = upload(&k, mx, sizeof mx), db = upload(&k, bits, sizeof bits), dh = upload(&k, h, sizeof h),
             dv = upload(&k, v, sizeof v);
    int32_t n = N - 5; /* the last 5 elements are masked off */
    void *params[] = {&df, &dm, &db, &dh, &dv, &n};
    launch(&k, 3, params);
    download(&k, f, df, sizeof f);
    download(&k, mx, dm, sizeof mx);
    download(&k, bits, db, sizeof bits);
    download(&k, h, dh, sizeof h);
    for (int b = 0; b < B; b++) {
        double sum = b;
        int32_t want_mx = mx0[b];
        uint32_t want_bits = 1u << b;
        for (int i = b; i < n; i += B) sum += v[i], want_mx = v[i] > want_mx ? v[i] : want_mx, want_bits |= 1u << (v[i] & 31);
        cr_expect_eq(f[b], (float)sum, "f[%d] = %g, want %g", b, f[b], sum);
        cr_expect_eq(mx[b], want_mx, "mx[%d] = %d, want %d", b, mx[b], want_mx);
        cr_expect_eq(bits[b], want_bits, "bits[%d] = %#x, want %#x", b, bits[b], want_bits);
    }
    for (int i = 0; i < N; i++) {
        double want = i < n ? 1.0 + v[i] : 1.0;
        cr_expect_eq(f16_to_d(h[i]), want, "h[%d] = %g, want %g", i, f16_to_d(h[i]), want);
    }
    unload(&k);
}

/* f16 and bf16 atomic_add: a histogram of small integers (exact in both) and the old values
 * of uncontended adds; bf16 is a CAS loop before sm_90 and atom.add.noftz.bf16 on sm_90a;
 * pairs under a uniform mask are packed f16x2/bf16x2 adds. */
static void half_add_case(const char *dt, const char *arch, int N, uint16_t (*from_f)(float), float (*to_f)(uint16_t)) {
    enum { BINS = 8, NMAX = 784 };
    char src[1024];
    snprintf(src, sizeof src,
             "@num_warps(2)\n"
             "kernel k(h: *%s, a: *%s, v: *%s, olds: *%s, n: i32) {\n"
             "    let offs = program_id(0) * 128 + arange(0, 128);\n"
             "    let m = offs < n;\n"
             "    atomic_add(h + offs %% 8, 1.0 as %s, m);\n"
             "    store(olds + offs, atomic_add(a + offs, load(v + offs, m), m), m);\n"
             "}\n",
             dt, dt, dt, dt, dt);
    /* n a multiple of 16 (specialized): the mask is uniform over pairs, so adds are packed */
    const char *spec[] = {"n=16", NULL};
    bool pairs = N % 16 == 0;
    tile_compile_options o = {.arch = arch, .specialize = pairs ? spec : NULL};
    tile_compiled c;
    tile_status st = tile_compile_source("t.tile", src, &o, &c);
    cr_assert_eq(st, TILE_OK, "%s\n%s", tile_status_string(st), c.diagnostics);
    bool packed_ok = !strcmp(dt, "f16") || (arch && !strcmp(arch, "sm_90a"));
    bool packed = strstr(c.ptx, !strcmp(dt, "f16") ? "add.noftz.f16x2" : "add.noftz.bf16x2") != NULL;
    cr_expect(packed == (pairs && packed_ok), "%s on %s, n=%d: packed %d", dt, arch ? arch : "default", N, packed);
    K k;
    char *err = NULL;
    DevOptions dopt = racecheck_options();
    cr_assert_eq(dev_open("emu", &dopt, &k.dev, &err), DEV_OK, "%s", err ? err : "?");
    cr_assert_eq(dev_module_load_ptx(k.dev, c.ptx, &k.mod), DEV_OK, "%s", dev_last_error(k.dev));
    cr_assert_eq(dev_module_get_function(k.mod, "k", &k.fn), DEV_OK, "%s", dev_last_error(k.dev));
    k.threads = 64, k.dyn_smem = 0;
    bool native = strstr(c.ptx, !strcmp(dt, "f16") ? "global.add.noftz.f16" : "global.add.noftz.bf16") != NULL;
    cr_expect(native == packed_ok, "%s on %s: native add %d", dt, arch ? arch : "default", native);
    tile_compiled_free(&c);
    static uint16_t h[BINS], a[NMAX], v[NMAX], olds[NMAX], a1[NMAX];
    for (int i = 0; i < BINS; i++) h[i] = from_f(0.0f);
    for (int i = 0; i < N; i++) a[i] = from_f((float)(i % 50) * 0.25f), v[i] = from_f((float)(i % 7) - 3.0f), olds[i] = 0;
    size_t nb = sizeof(uint16_t) * (size_t)N;
    uint64_t dh = upload(&k, h, sizeof h), da = upload(&k, a, nb), dv = upload(&k, v, nb), dolds = upload(&k, olds, nb);
    int32_t n = N;
    void *params[] = {&dh, &da, &dv, &dolds, &n};
    launch(&k, (N + 127) / 128, params);
    download(&k, h, dh, sizeof h);
    download(&k, a1, da, nb);
    download(&k, olds, dolds, nb);
    for (int b = 0; b < BINS; b++) cr_expect_eq(to_f(h[b]), (float)((N - b + BINS - 1) / BINS), "%s bin %d = %g", dt, b, to_f(h[b]));
    for (int i = 0; i < N; i++) {
        cr_expect_eq(olds[i], a[i], "%s old[%d]", dt, i);
        cr_expect_eq(to_f(a1[i]), to_f(a[i]) + to_f(v[i]), "%s a[%d] = %g", dt, i, to_f(a1[i]));
    }
    unload(&k);
}

Test(lang_run, atomic_add_f16_bf16) {
    for (int N = 777; N <= 784; N += 7) { /* odd: one element at a time; 784 = 49*16: packed pairs */
        half_add_case("f16", NULL, N, f16_from, f16_to);
        half_add_case("bf16", NULL, N, bf16_from, bf16_to);
        half_add_case("bf16", "sm_90a", N, bf16_from, bf16_to);
    }
}

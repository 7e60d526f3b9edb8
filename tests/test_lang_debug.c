/* test_lang_debug.c - device_print and device_assert (Triton's mask= and hex= too, Python's assert statement), num_sms() (its default, the
 * compile option, the context's count), TILE_DEBUG=assert through the runtime and `tile compile -g`,
 * compiled from inline sources and run on the PTX emulator. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "include/tile/tile.h"
#include "runtime/device.h"
#include "support/support.h"

#include "tests/lang_run.h"

/* ---- device_print, device_assert, num_sms ---- */
static const char *debug_src =
    "kernel k(x: *f32, y: *f32, n: i32) {\n"
    "    static_assert(num_sms() >= 1, \"at least one SM\");\n"
    "    let o = program_id(0) * 8 + arange(0, 8);\n"
    "    let v = load(x + o, o < n, 0.0);\n"
    "    device_print(\"v=\", v, o, n);\n"
    "    device_assert(v < 100.0, \"v is too big\");\n"
    "    device_print(\"s=\", program_id(0), n);\n"
    "    store(y + o, v + num_sms() as f32, o < n);\n"
    "}\n";

/* Compile debug_src with the given options and run it on 2 programs of x[i] = 10 i, n = 12 (y = x + num_sms());
 * returns the launch's status, its message in *msg and what the kernel printed in *out. */
static DevStatus run_debug_src(const char *src, int debug, int num_sms, float *x, char **msg, char **out) {
    tile_compile_options o = {.size = sizeof o, .debug = debug, .num_sms = num_sms};
    tile_compiled c;
    tile_status st = tile_compile_source("dbg.tile", src, &o, &c);
    cr_assert_eq(st, TILE_OK, "%s", c.diagnostics);
    TileDevice *dev;
    TileDevModule *mod;
    TileDevFunction *fn;
    char *err = NULL;
    cr_assert_eq(dev_open("emu", NULL, &dev, &err), DEV_OK);
    cr_assert_eq(dev_module_load_ptx(dev, c.ptx, &mod), DEV_OK, "%s", dev_last_error(dev));
    cr_assert_eq(dev_module_get_function(mod, "k", &fn), DEV_OK);
    tile_compiled_free(&c);
    for (int i = 0; i < 16; i++) x[i] = 10.0f * (float)i;
    uint64_t dx, dy;
    cr_assert_eq(dev_malloc(dev, 16 * sizeof(float), &dx), DEV_OK);
    cr_assert_eq(dev_malloc(dev, 16 * sizeof(float), &dy), DEV_OK);
    cr_assert_eq(dev_memcpy_htod(dev, dx, x, 16 * sizeof(float)), DEV_OK);
    cr_assert_eq(dev_memcpy_htod(dev, dy, x, 16 * sizeof(float)), DEV_OK);
    int32_t n = 12;
    void *params[] = {&dx, &dy, &n};
    /* the emulator prints on the process's standard output: catch it in a file */
    fflush(stdout);
    FILE *tmp = tmpfile();
    cr_assert_not_null(tmp);
    int saved = dup(1);
    dup2(fileno(tmp), 1);
    DevStatus ls = dev_launch(fn, 2, 1, 1, 128, 1, 1, 0, NULL, params);
    DevStatus ss = dev_synchronize(dev);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    DevStatus s = ls != DEV_OK ? ls : ss;
    *msg = strdup(s == DEV_OK ? "" : dev_last_error(dev));
    long len = ftell(tmp);
    rewind(tmp);
    *out = calloc(1, (size_t)len + 1);
    cr_assert_eq(fread(*out, 1, (size_t)len, tmp), (size_t)len);
    fclose(tmp);
    if (s == DEV_OK) cr_assert_eq(dev_memcpy_dtoh(dev, x, dy, 16 * sizeof(float)), DEV_OK);
    dev_module_unload(mod);
    dev_close(dev);
    return s;
}

static DevStatus run_debug(int debug, int num_sms, float *x, char **msg, char **out) {
    return run_debug_src(debug_src, debug, num_sms, x, msg, out);
}

/* Triton's keywords: device_assert(cond, msg=, mask=) checks only where mask is true; device_print(..., hex=true)
 * prints an integer's bits in its width's hex digits (an i1 one digit) and a float as %a.  x[i] = 10 i, n = 12: v = 100 and 110 at
 * elements 10 and 11, which the mask leaves out or checks. */
Test(lang_debug, device_assert_mask_print_hex) {
    const char *src = "kernel k(x: *f32, y: *f32, n: i32) {\n"
                      "    let o = program_id(0) * 8 + arange(0, 8);\n"
                      "    let v = load(x + o, o < n, 0.0);\n"
                      "    device_assert(v < 100.0, msg=\"v is too big\", mask=o < MASK_END);\n"
                      "    device_print(\"h=\", o - 3, (o as i8) - 3, v * 0.75, o < 5, hex=true);\n"
                      "    store(y + o, v + 1.0, o < n);\n"
                      "}\n";
    float x[16];
    char *msg, *out, s[512];
    snprintf(s, sizeof s, "const MASK_END = 10;\n%s", src);
    cr_assert_eq(run_debug_src(s, 1, 0, x, &msg, &out), DEV_OK, "masked off, yet: %s", msg);
    for (int i = 0; i < 16; i++) cr_expect_eq(x[i], i < 12 ? 10.0f * (float)i + 1 : 10.0f * (float)i, "x[%d] = %g", i, x[i]);
    for (int i = 0; i < 16; i++) {
        char line[128];
        snprintf(line, sizeof line, "pid (%d, 0, 0) idx (%d) h= 0x%08x 0x%02x %a 0x%d\n", i / 8, i % 8, (uint32_t)(i - 3),
                 (uint8_t)(i - 3), i < 12 ? 7.5 * i : 0.0, i < 5);
        cr_expect(strstr(out, line), "missing line '%s' in:\n%s", line, out);
    }
    free(msg), free(out);
    snprintf(s, sizeof s, "const MASK_END = 11;\n%s", src);
    cr_assert_neq(run_debug_src(s, 1, 0, x, &msg, &out), DEV_OK);
    cr_expect(strstr(msg, "dbg.tile:5: k:") && strstr(msg, "v is too big") && strstr(msg, "block (1,0,0)"), "assert message: %s", msg);
    free(msg), free(out);
    static const BadSource bad[] = {
        {"kernel k(x: *f32) { device_assert(load(x) > 0.0, mask=load(x)); }\n",
         "t.tile:1:55: error: mask= of 'device_assert' must be i1, got 'f32'"},
        {"kernel k(x: *f32) { device_print(\"x\", load(x), hex=load(x) > 0.0); }\n",
         "t.tile:1:52: error: hex= of 'device_print' must be true or false at compile time, got a run-time 'i1'"},
        {"kernel k(x: *f32) { device_assert(load(x) > 0.0, \"m\", msg=\"n\"); }\n",
         "t.tile:1:59: error: 'device_assert' has its message twice"},
        {"kernel k(x: *f32) { device_print(\"x\", load(x), mask=true); }\n",
         "t.tile:1:53: error: 'device_print' takes no keyword argument 'mask' (it takes hex=)"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* Python's `assert cond, "msg"` in a kernel, which Triton compiles as device_assert(cond, msg), and `pass;`: with -g
 * the failing element stops the launch with the message; without it nothing is checked.  x[i] = 10 i, n = 12. */
Test(lang_debug, python_assert_and_pass) {
    const char *src = "kernel k(x: *f32, y: *f32, n: i32) {\n"
                      "    let o = program_id(0) * 8 + arange(0, 8);\n"
                      "    let v = load(x + o, o < n, 0.0);\n"
                      "    if n > 100 { pass; }\n"
                      "    assert v < 100.0, \"v is too big\";\n"
                      "    assert (n > 0);\n"
                      "    store(y + o, v + 1.0, o < n);\n"
                      "}\n";
    float x[16];
    char *msg, *out;
    cr_assert_eq(run_debug_src(src, 0, 0, x, &msg, &out), DEV_OK, "without -g: %s", msg);
    for (int i = 0; i < 16; i++) cr_expect_eq(x[i], i < 12 ? 10.0f * (float)i + 1 : 10.0f * (float)i, "x[%d] = %g", i, x[i]);
    free(msg), free(out);
    cr_assert_neq(run_debug_src(src, 1, 0, x, &msg, &out), DEV_OK);
    cr_expect(strstr(msg, "dbg.tile:5: k:") && strstr(msg, "v is too big") && strstr(msg, "block (1,0,0)"), "assert message: %s", msg);
    free(msg), free(out);
}

/* A float condition of device_assert and assert is true when non-zero, a NaN too, as an `if`'s, `where`'s and
 * Triton's (it was "condition of 'device_assert' must be i1 or an integer, got 'f32'").  x[i] = 10 i, n = 12:
 * v - 100 is 0 at element 10 of program 1; (v - v) / (v - v) is a NaN everywhere. */
Test(lang_debug, float_assert_conditions) {
    const char *src = "kernel k(x: *f32, y: *f32, n: i32) {\n"
                      "    let o = program_id(0) * 8 + arange(0, 8);\n"
                      "    let v = load(x + o, o < n, 0.0);\n"
                      "    device_assert(v - 100.0, \"hit 100\", mask=o < LIMIT);\n"
                      "    assert (v - v) / (v - v), \"a NaN is true\";\n"
                      "    device_assert(n as f32 - 0.5);\n"
                      "    store(y + o, v + 1.0, o < n);\n"
                      "}\n";
    float x[16];
    char *msg, *out, s[512];
    snprintf(s, sizeof s, "const LIMIT = 10;\n%s", src);
    cr_assert_eq(run_debug_src(s, 1, 0, x, &msg, &out), DEV_OK, "failed: %s", msg);
    for (int i = 0; i < 16; i++) cr_expect_eq(x[i], i < 12 ? 10.0f * (float)i + 1 : 10.0f * (float)i, "x[%d] = %g", i, x[i]);
    free(msg), free(out);
    snprintf(s, sizeof s, "const LIMIT = 11;\n%s", src);
    cr_assert_neq(run_debug_src(s, 1, 0, x, &msg, &out), DEV_OK);
    cr_expect(strstr(msg, "dbg.tile:5: k:") && strstr(msg, "hit 100") && strstr(msg, "block (1,0,0)"), "assert message: %s", msg);
    free(msg), free(out);
    static const BadSource bad[] = {
        {"kernel k(x: *f32) { device_assert(x); }\n", "t.tile:1:35: error: condition of 'device_assert' must be i1, an integer or a float, got 'ptr<f32>'"},
    };
    expect_compile_errors(bad, sizeof bad / sizeof *bad);
}

/* A ternary on a run-time scalar runs only the side it picks, so a device_print in a fn on the other side prints
 * nothing (it printed in every program when both sides ran).  x[i] = 10 i, n = 12: program 1 sums 80 .. 110. */
Test(lang_debug, ternary_prints_only_its_side) {
    const char *src = "fn say(v) { device_print(\"side \", v); return v; }\n"
                      "kernel k(x: *f32, y: *f32, n: i32) {\n"
                      "    let o = program_id(0) * 8 + arange(0, 8);\n"
                      "    let v = load(x + o, o < n, 0.0);\n"
                      "    let s = say(sum(v)) if program_id(0) == 1 else -1.0;\n"
                      "    store(y + o, v + s, o < n);\n"
                      "}\n";
    float x[16];
    char *msg, *out;
    cr_assert_eq(run_debug_src(src, 0, 0, x, &msg, &out), DEV_OK, "failed: %s", msg);
    for (int i = 0; i < 16; i++) {
        float want = i < 12 ? 10.0f * (float)i + (i < 8 ? -1.0f : 380.0f) : 10.0f * (float)i;
        cr_expect_eq(x[i], want, "y[%d] = %g, want %g", i, x[i], want);
    }
    const char *first = strstr(out, "side ");
    cr_expect(first && !strstr(first + 1, "side ") && strstr(out, "pid (1, 0, 0)") && !strstr(out, "pid (0, 0, 0)"),
              "want one line, from program 1:\n%s", out);
    free(msg), free(out);
}

Test(lang_debug, device_print_assert_num_sms) {
    float x[16];
    char *msg, *out;
    /* without -g: no check; every element printed once, num_sms() = 7 added */
    cr_assert_eq(run_debug(0, 7, x, &msg, &out), DEV_OK, "%s", msg);
    for (int i = 0; i < 16; i++) cr_expect_eq(x[i], i < 12 ? 10.0f * (float)i + 7 : 10.0f * (float)i, "x[%d] = %g", i, x[i]);
    for (int i = 0; i < 16; i++) {
        char line[96];
        snprintf(line, sizeof line, "pid (%d, 0, 0) idx (%d) v= %g %d 12\n", i / 8, i % 8, i < 12 ? 10.0 * i : 0.0, i);
        cr_expect(strstr(out, line), "missing line '%s' in:\n%s", line, out);
    }
    /* scalars only: once per program (every thread holds them; it was once per thread) */
    cr_expect(strstr(out, "pid (0, 0, 0) s= 0 12\n") && strstr(out, "pid (1, 0, 0) s= 1 12\n"), "scalar lines missing:\n%s", out);
    int lines = 0;
    for (char *p = out; (p = strchr(p, '\n')); p++) lines++;
    cr_expect_eq(lines, 18, "printed %d lines (replicas must stay silent):\n%s", lines, out);
    free(msg), free(out);
    /* with -g: element 10 (v = 100) fails in program 1; the message names the file, line, program, thread */
    cr_assert_neq(run_debug(1, 0, x, &msg, &out), DEV_OK);
    cr_expect(strstr(msg, "dbg.tile:6: k:") && strstr(msg, "v is too big") && strstr(msg, "block (1,0,0)") && strstr(msg, "thread ("),
              "assert message: %s", msg);
    free(msg), free(out);
}

/* Python's print in a Triton kernel runs at run time as tl.device_print (Triton's code generator maps the builtin
 * to it): the same lines, hex= included, and without a string first no prefix; it was an unknown name ("did you
 * mean 'rint'?"). */
Test(lang_debug, python_print_is_device_print) {
    float x[16];
    char *msg, *out;
    const char *src = "kernel k(x: *f32, y: *f32, n: i32) {\n"
                      "    let o = program_id(0) * 8 + arange(0, 8);\n"
                      "    let v = load(x + o, o < n, 0.0);\n"
                      "    print(\"v=\", v, o, n);\n"
                      "    print(\"h=\", o, hex=true);\n"
                      "    print(o * 3, n);\n"
                      "    store(y + o, v + 1.0, o < n);\n"
                      "}\n";
    cr_assert_eq(run_debug_src(src, 0, 0, x, &msg, &out), DEV_OK, "%s", msg);
    for (int i = 0; i < 16; i++) {
        char line[96];
        snprintf(line, sizeof line, "pid (%d, 0, 0) idx (%d) v= %g %d 12\n", i / 8, i % 8, i < 12 ? 10.0 * i : 0.0, i);
        cr_expect(strstr(out, line), "missing line '%s' in:\n%s", line, out);
        snprintf(line, sizeof line, "pid (%d, 0, 0) idx (%d) h= 0x%08x\n", i / 8, i % 8, i);
        cr_expect(strstr(out, line), "missing line '%s' in:\n%s", line, out);
        snprintf(line, sizeof line, "pid (%d, 0, 0) idx (%d) %d 12\n", i / 8, i % 8, 3 * i); /* print(x, ...): no prefix */
        cr_expect(strstr(out, line), "missing line '%s' in:\n%s", line, out);
        cr_expect_eq(x[i], i < 12 ? 10.0f * (float)i + 1 : 10.0f * (float)i, "x[%d] = %g", i, x[i]);
    }
    free(msg), free(out);
}

Test(lang_debug, num_sms_default_and_option) {
    tile_compiled c;
    tile_compile_options o = {.size = sizeof o};
    cr_assert_eq(tile_compile_source("s.tile", "kernel k(x: *i32) { store(x, num_sms()); }\n", &o, &c), TILE_OK);
    cr_expect(strstr(c.ptx, "132;"), "default num_sms 132:\n%s", c.ptx);
    tile_compiled_free(&c);
    o.num_sms = 114;
    cr_assert_eq(tile_compile_source("s.tile", "kernel k(x: *i32) { store(x, num_sms()); }\n", &o, &c), TILE_OK);
    cr_expect(strstr(c.ptx, "114;"), "num_sms 114:\n%s", c.ptx);
    tile_compiled_free(&c);
}

/* num_sms() of a module the runtime compiles: the context's count, "emu:sms=N" on the emulator;
 * tile_context_get_properties (tile.h's macro) and tile_context_get_properties_ex report it, the exported
 * tile_context_get_properties (what a program built against the first layout calls) does not write it */
Test(lang_debug, num_sms_from_the_context) {
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu:sms=7", &ctx), TILE_OK);
    tile_device_properties p;
    memset(&p, 0x5a, sizeof p);
    cr_assert_eq((tile_context_get_properties)(ctx, &p), TILE_OK);
    cr_expect_eq(p.multiprocessor_count, 0x5a5a5a5a, "the first layout's call wrote past max_shared_per_block");
    cr_expect_eq(p.max_threads_per_block, 1024);
    cr_assert_eq(tile_context_get_properties(ctx, &p), TILE_OK);
    cr_expect_eq(p.multiprocessor_count, 7);
    memset(&p, 0x5a, sizeof p);
    cr_assert_eq(tile_context_get_properties_ex(ctx, &p, sizeof p), TILE_OK);
    cr_expect_eq(p.multiprocessor_count, 7);
    cr_expect(p.is_emulator);
    tile_module *m;
    tile_compile_options o = {.size = sizeof o};
    cr_assert_eq(tile_module_load_source_ex(ctx, "s.tile", "kernel k(x: *i32) { store(x + program_id(0), num_sms() * 10 + program_id(0)); }\n", &o,
                                            &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
    tile_devptr d;
    cr_assert_eq(tile_malloc(ctx, 3 * sizeof(int32_t), &d), TILE_OK);
    void *args[] = {&d};
    cr_assert_eq(tile_launch(k, (tile_dim3){3, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    int32_t h[3] = {-1, -1, -1};
    cr_assert_eq(tile_memcpy_dtoh(ctx, h, d, sizeof h), TILE_OK);
    for (int i = 0; i < 3; i++) cr_expect_eq(h[i], 70 + i);
    /* without options too (a NULL tile_compile_options) */
    cr_assert_eq(tile_module_load_source_ex(ctx, "s2.tile", "kernel k(x: *i32) { store(x, num_sms() + 1); }\n", NULL, &m), TILE_OK,
                 "%s", tile_last_error(ctx));
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
    cr_assert_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_memcpy_dtoh(ctx, h, d, sizeof h), TILE_OK);
    cr_expect_eq(h[0], 8);
    tile_context_destroy(ctx);
    cr_assert_eq(tile_context_create("emu", &ctx), TILE_OK);
    cr_assert_eq(tile_context_get_properties_ex(ctx, &p, sizeof p), TILE_OK);
    cr_expect_eq(p.multiprocessor_count, 132);
    tile_context_destroy(ctx);
    /* a target and options compose: "emu:sm_90a:sms=9" */
    cr_assert_eq(tile_context_create("emu:sm_90a:sms=9", &ctx), TILE_OK, "%s", tile_last_error(NULL));
    cr_assert_eq(tile_context_get_properties_ex(ctx, &p, sizeof p), TILE_OK);
    cr_expect_eq(p.multiprocessor_count, 9);
    tile_context_destroy(ctx);
    const char *bad[] = {"emu:sms=0", "emu:sms=", "emu:sms=x", "emu:foo", "emu:sms=70000", "emu:sms=8:", "emu:sm_90a:sm_80"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_expect_neq(tile_context_create(bad[i], &ctx), TILE_OK, "'%s' accepted", bad[i]);
    }
}

/* TILE_DEBUG=assert: modules a context loads compile device_assert; a failing one makes the
 * launch (or the synchronization after it) fail with TILE_ERROR_LAUNCH naming the file and line.
 * (Criterion runs each test in its own process, so the variable is read here first.) */
Test(lang_debug, tile_debug_assert_through_the_runtime) {
    setenv("TILE_DEBUG", "assert", 1);
    tile_context *ctx;
    cr_assert_eq(tile_context_create("emu", &ctx), TILE_OK);
    tile_module *m;
    const char *src = "kernel k(x: *i32, n: i32) {\n"
                      "    let o = arange(0, 32);\n"
                      "    device_assert(load(x + o, o < n) < 30, \"too large\");\n"
                      "}\n";
    cr_assert_eq(tile_module_load_source_ex(ctx, "chk.tile", src, NULL, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
    int32_t h[32];
    for (int i = 0; i < 32; i++) h[i] = i;
    tile_devptr d;
    cr_assert_eq(tile_malloc(ctx, sizeof h, &d), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, d, h, sizeof h), TILE_OK);
    int32_t n = 20; /* every checked element is below 30: passes */
    void *args[] = {&d, &n};
    cr_assert_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_synchronize(ctx), TILE_OK, "%s", tile_last_error(ctx));
    n = 31; /* element 30 fails */
    tile_status st = tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL);
    char *msg = strdup(tile_last_error(ctx));
    if (st == TILE_OK) st = tile_synchronize(ctx), free(msg), msg = strdup(tile_last_error(ctx));
    cr_expect_eq(st, TILE_ERROR_LAUNCH, "%s", tile_status_string(st));
    cr_expect(msg && strstr(msg, "chk.tile:3") && strstr(msg, "too large") && strstr(msg, "block (0,0,0)"), "message: [%s]", msg ? msg : "");
    free(msg);
    tile_context_destroy(ctx);
}

/* the CLI's -g and --num-sms */
Test(lang_debug, cli_debug_and_num_sms) {
    char path[256], cmd[1024];
    snprintf(path, sizeof path, "/tmp/tile_lang_cli_%d.tile", (int)getpid());
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("kernel k(x: *i32) { device_assert(load(x) > 0, \"positive\"); store(x, num_sms()); }\n", f);
    fclose(f);
    const char *flags[] = {"", "-g --num-sms 77"};
    for (int v = 0; v < 2; v++) {
        snprintf(cmd, sizeof cmd, "%s/tile compile %s %s --no-cache --emit ptx -o -", TILE_BINARY_DIR, path, flags[v]);
        FILE *p = popen(cmd, "r");
        cr_assert_not_null(p);
        static char out[1 << 16];
        size_t len = fread(out, 1, sizeof out - 1, p);
        out[len] = 0;
        cr_assert_eq(pclose(p), 0, "%s", cmd);
        cr_expect(!strstr(out, "__assertfail") == !v, "%s: __assertfail %s", cmd, v ? "missing" : "present");
        cr_expect(strstr(out, v ? "77;" : "132;"), "%s: num_sms", cmd);
    }
    remove(path);
}

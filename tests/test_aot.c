/* test_aot.c - `tile aot` exports kernels/add.tile (a generic build and an
 * n=16 variant), the system cc builds a program from the output against
 * libtile_rt only (ldd shows no LLVM, no xxHash, no libtile), and the
 * program runs both variants on the emulator.  Then: the refusals of names
 * the C could not declare; the variants' conditions (None, misaligned
 * pointers); parameters and kernels named as C/C++ keywords, C library
 * functions and the standard headers' macros (built as C and C++); paths
 * that would break the files' comments; many and reserved parameters.  Each
 * export goes through export_read, which returns the generated .c. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "include/tile/tile.h"

static const char *prog =
    "#include \"add_aot.h\"\n#include <stdio.h>\n#include <string.h>\n"
    "int main(void) {\n"
    "    tile_context *ctx;\n"
    "    if (tile_context_create(\"emu\", &ctx)) return 10;\n"
    "    for (int n = 1000; n <= 1024; n += 24) {\n"
    "        float hx[1024], hy[1024], ho[1024];\n"
    "        for (int i = 0; i < n; i++) hx[i] = (float)i, hy[i] = 0.5f * (float)i;\n"
    "        tile_devptr x, y, o;\n"
    "        tile_malloc(ctx, 4096, &x), tile_malloc(ctx, 4096, &y), tile_malloc(ctx, 4096, &o);\n"
    "        tile_memcpy_htod(ctx, x, hx, 4u * n), tile_memcpy_htod(ctx, y, hy, 4u * n);\n"
    "        tile_status st = add(ctx, (tile_dim3){(n + 1023) / 1024, 1, 1}, x, y, o, n, NULL);\n"
    "        if (st) { fprintf(stderr, \"%s\\n\", tile_last_error(ctx)); return 11; }\n"
    "        tile_memcpy_dtoh(ctx, ho, o, 4u * n);\n"
    "        for (int i = 0; i < n; i++) if (ho[i] != 1.5f * (float)i) return 12;\n"
    "    }\n"
    "    /* no context: a message naming the launcher called (it named tile_module_load_ptx; an empty slot matched a NULL ctx) */\n"
    "    if (add(NULL, (tile_dim3){1, 1, 1}, 0, 0, 0, 1, NULL) == TILE_OK || !strstr(tile_last_error(NULL), \"add: the tile_context is NULL\")) {\n"
    "        fprintf(stderr, \"NULL ctx: %s\\n\", tile_last_error(NULL));\n        return 13;\n    }\n"
    "    add_aot_unload(ctx);\n    tile_context_destroy(ctx);\n"
    "    /* twenty contexts at once (the table grows), then contexts destroyed without add_aot_unload, each new one\n"
    "     * likely at the last one's address (its slot is taken for dead by its tile_context_id, not for the new one) */\n"
    "    tile_context *many[20];\n    uint64_t ids[20];\n"
    "    for (int c = 0; c < 40; c++) {\n"
    "        tile_context *cx;\n"
    "        if (tile_context_create(\"emu\", &cx)) return 14;\n"
    "        uint64_t id = tile_context_id(cx);\n"
    "        for (int j = 0; j < (c < 20 ? c : 20); j++) if (!id || ids[j] == id) return 15;\n"
    "        tile_devptr x;\n        float one = 1, two;\n"
    "        if (tile_malloc(cx, 4, &x) || tile_memcpy_htod(cx, x, &one, 4)) return 16;\n"
    "        tile_status st = add(cx, (tile_dim3){1, 1, 1}, x, x, x, 1, NULL);\n"
    "        if (st) { fprintf(stderr, \"context %d: %s\\n\", c, tile_last_error(cx)); return 17; }\n"
    "        if (tile_memcpy_dtoh(cx, &two, x, 4) || two != 2) return 18;\n"
    "        if (c < 20) many[c] = cx, ids[c] = id;\n"
    "        else {\n            tile_context_destroy(cx);\n            if (tile_context_id(cx)) return 19;\n        }\n"
    "    }\n"
    "    for (int c = 0; c < 20; c++) add_aot_unload(many[c]), tile_context_destroy(many[c]);\n"
    "    puts(\"aot ok\");\n    return 0;\n}\n";

/* dir/name holding text */
static void write_file(const char *dir, const char *name, const char *text) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* Builds dir/main.c (main_src) with dir/STEM.c against libtile_rt into dir/prog; compiler output to dir/log. */
static void build_prog(const char *dir, const char *main_src, const char *stem) {
    write_file(dir, "main.c", main_src);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cc -std=c17 -Wall -Wextra -Wpedantic -Werror %s -I%s/include -I%s %s/main.c %s/%s.c -L%s -ltile_rt -Wl,-rpath,%s -o %s/prog >> %s/log 2>&1",
             TILE_TEST_CFLAGS, TILE_SOURCE_DIR, dir, dir, dir, stem, TILE_BINARY_DIR, TILE_BINARY_DIR, dir, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* Runs dir/prog; on failure prints dir/log; removes dir. */
static void run_prog(const char *dir) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s/prog >> %s/log 2>&1", dir, dir);
    int rc = system(cmd);
    snprintf(cmd, sizeof cmd, "%s%s/log; rm -rf %s", rc ? "cat " : "true ", dir, dir);
    cr_expect_eq(system(cmd), 0);
    cr_assert_eq(rc, 0, "the exported program failed");
}

/* Exports kernels of the .tile file dir/tile_name (written from src first, unless src is NULL: then tile_name is
 * a path) as dir/STEM.h and dir/STEM.c, asserts it succeeded, and returns the text of STEM.c (malloc'd). */
static char *export_read(const char *dir, const char *tile_name, const char *src, const char *const *kernels,
                         const char *const *variants, const char *stem) {
    char path[1200], out[1200];
    if (src) {
        write_file(dir, tile_name, src);
        snprintf(path, sizeof path, "%s/%s", dir, tile_name);
    } else snprintf(path, sizeof path, "%s", tile_name);
    snprintf(out, sizeof out, "%s/%s", dir, stem);
    char *msg = NULL;
    cr_assert_eq(tile_aot_export(path, NULL, kernels, variants, out, &msg), TILE_OK, "%s", msg ? msg : "");
    free(msg);
    snprintf(path, sizeof path, "%s/%s.c", dir, stem);
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s", path);
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    rewind(f);
    char *gen = malloc((size_t)len + 1);
    cr_assert(gen && fread(gen, 1, (size_t)len, f) == (size_t)len);
    gen[len] = 0;
    fclose(f);
    return gen;
}

Test(aot, export_build_run, .timeout = 120) {
    char dir[] = "/tmp/tile-test-aot-XXXXXX";
    cr_assert(mkdtemp(dir));
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "TILE_CACHE_DIR=%s/cache %s aot %s/kernels/add.tile --kernel add --variant n=16 -o %s/add_aot > %s/log 2>&1",
             dir, TILE_CLI, TILE_SOURCE_DIR, dir, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    build_prog(dir, prog, "add_aot");
    /* the exported program carries no compiler: libtile_rt only, no LLVM, no xxHash */
    snprintf(cmd, sizeof cmd, "ldd %s/prog | grep -E 'libLLVM|libxxhash|libtile\\.so' >> %s/log 2>&1", dir, dir);
    cr_expect_neq(system(cmd), 0, "the AOT program loads a compiler library (see ldd)");
    snprintf(cmd, sizeof cmd, "ldd %s/prog | grep -q 'libtile_rt\\.so'", dir);
    cr_expect_eq(system(cmd), 0, "the AOT program does not load libtile_rt");
    run_prog(dir);
}

/* What the generated C could not declare is refused before anything is written, with a message. */
/* An exported launcher's first calls from six threads at once (released by a barrier): two share one
 * context, four have their own, each launching both variants (n a multiple of 16 and not) twenty times
 * and checking every result; the tables' state is made once and the slots grow while others look up. */
static const char *threads_prog =
    "#define _POSIX_C_SOURCE 200809L /* pthread_barrier_t under -std=c17 */\n#include \"add_aot.h\"\n#include <pthread.h>\n#include <stdio.h>\n"
    "typedef struct Job { tile_context *ctx; int id, rc; } Job;\n"
    "static pthread_barrier_t start;\n"
    "static void *run(void *p) {\n"
    "    Job *j = p;\n"
    "    pthread_barrier_wait(&start);\n"
    "    for (int r = 0; r < 20 && !j->rc; r++) {\n"
    "        int n = r % 2 ? 256 : 257 + j->id;\n"
    "        float hx[300], ho[300];\n"
    "        for (int i = 0; i < n; i++) hx[i] = (float)(i * (j->id + 1) + r), ho[i] = -1;\n"
    "        tile_devptr x, o;\n"
    "        if (tile_malloc(j->ctx, 4 * 300, &x) || tile_malloc(j->ctx, 4 * 300, &o) || tile_memcpy_htod(j->ctx, x, hx, 4u * n)) j->rc = 20;\n"
    "        else if (add(j->ctx, (tile_dim3){1, 1, 1}, x, x, o, n, NULL)) j->rc = 21, fprintf(stderr, \"%s\\n\", tile_last_error(j->ctx));\n"
    "        else if (tile_memcpy_dtoh(j->ctx, ho, o, 4u * n)) j->rc = 22;\n"
    "        for (int i = 0; i < n && !j->rc; i++) if (ho[i] != 2 * hx[i]) j->rc = 23;\n"
    "        tile_free(j->ctx, x), tile_free(j->ctx, o);\n"
    "    }\n"
    "    return NULL;\n"
    "}\n"
    "int main(void) {\n"
    "    enum { T = 6 };\n"
    "    tile_context *ctx[T];\n    pthread_t th[T];\n    Job job[T];\n"
    "    pthread_barrier_init(&start, NULL, T);\n"
    "    for (int i = 0; i < T; i++) {\n"
    "        if (i != 1 && tile_context_create(\"emu:sm_80\", &ctx[i])) return 10;\n"
    "        if (i == 1) ctx[1] = ctx[0];\n"
    "        job[i] = (Job){ctx[i], i, 0};\n"
    "    }\n"
    "    for (int i = 0; i < T; i++) if (pthread_create(&th[i], NULL, run, &job[i])) return 11;\n"
    "    int rc = 0;\n"
    "    for (int i = 0; i < T; i++) pthread_join(th[i], NULL), rc = rc ? rc : job[i].rc;\n"
    "    for (int i = 0; i < T; i++) if (i != 1) add_aot_unload(ctx[i]), tile_context_destroy(ctx[i]);\n"
    "    if (!rc) puts(\"aot ok\");\n"
    "    return rc;\n"
    "}\n";

Test(aot, first_calls_from_threads_at_once, .timeout = 240) {
    char dir[] = "/tmp/tile-test-aot-XXXXXX";
    cr_assert(mkdtemp(dir));
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "TILE_CACHE_DIR=%s/cache %s aot %s/kernels/add.tile --kernel add --variant n=16 -o %s/add_aot > %s/log 2>&1",
             dir, TILE_CLI, TILE_SOURCE_DIR, dir, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    build_prog(dir, threads_prog, "add_aot");
    run_prog(dir);
}

Test(aot, refusals) {
    char dir[] = "/tmp/tile-test-aot-XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[512], out[600];
    snprintf(path, sizeof path, "%s/k.tile", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("kernel add(x: *f32) { store(x, 1.0); }\nkernel int(x: *f32) { store(x, 2.0); }\n"
          "kernel tile_malloc(x: *f32) { store(x, 3.0); }\nkernel add_aot_unload(x: *f32) { store(x, 4.0); }\n"
          "kernel main(x: *f32) { store(x, 5.0); }\nkernel add_ptx_0(x: *f32) { store(x, 6.0); }\n"
          "kernel class(x: *f32) { store(x, 7.0); }\n", f);
    fclose(f);
    snprintf(out, sizeof out, "%s/gen", dir);
    static const struct {
        const char *kernels[4], *out, *want;
    } cases[] = {
        {{"add", "add", NULL}, NULL, "kernel 'add' is named twice"},
        {{"int", NULL}, NULL, "kernel 'int': its launch function would be named 'int', which is a C or C++ keyword"},
        {{"tile_malloc", NULL}, NULL, "kernel 'tile_malloc': its launch function would be named 'tile_malloc', which is in tile.h's name space"},
        {{"main", NULL}, NULL, "kernel 'main': its launch function would be named 'main', which is the program's main"},
        /* the header is included from C++ too */
        {{"class", NULL}, NULL, "kernel 'class': its launch function would be named 'class', which is a C or C++ keyword; export it under "
                                "another C name: --kernel class=CNAME or --prefix P"},
        /* symbols of the C library: the program's definition would take their place (libm's too) */
        {{"free", NULL}, NULL, "kernel 'free': its launch function would be named 'free', which is a symbol of the C library (libc"},
        {{"select", NULL}, NULL, "'select', which is a symbol of the C library"},
        {{"index", NULL}, NULL, "'index', which is a symbol of the C library"},
        {{"sqrtf", NULL}, NULL, "'sqrtf', which is a symbol of the C library"},
        {{"add=rand", NULL}, NULL, "kernel 'add': its launch function would be named 'rand', which is a symbol of the C library"},
        /* macros and types of the standard headers, GNU C's predefined macros, C++'s std */
        {{"errno", NULL}, NULL, "'errno', which is a type or macro name of the C or C++ standard headers"},
        {{"assert", NULL}, NULL, "'assert', which is a type or macro name"},
        {{"INT32_MAX", NULL}, NULL, "'INT32_MAX', which is a type or macro name"},
        {{"E2BIG", NULL}, NULL, "'E2BIG', which is a type or macro name"},
        {{"linux", NULL}, NULL, "'linux', which is a type or macro name"},
        {{"size_t", NULL}, NULL, "'size_t', which is a type or macro name"},
        {{"std", NULL}, NULL, "'std', which is a type or macro name"},
        {{"_Exit2", NULL}, NULL, "which is reserved to the C implementation"},
        {{"add=1x", NULL}, NULL, "'1x', which is not a C identifier"},
        {{"a-b", NULL}, NULL, "kernel 'a-b': not a kernel name"},
        {{"add=k", "class=k", NULL}, NULL, "kernels 'add' and 'class' would both be the C function 'k'"},
        /* names the generated C declares for another kernel: it did not compile ("conflicting types") */
        {{"add", "add_aot_unload", NULL}, NULL, "kernel 'add_aot_unload': its C name 'add_aot_unload' is one the generated C declares for kernel 'add'"},
        {{"add_ptx_0", "add", NULL}, NULL, "kernel 'add_ptx_0': its C name 'add_ptx_0' is one the generated C declares"},
        {{"add_cubin_1", "add", NULL}, NULL, "kernel 'add_cubin_1': its C name 'add_cubin_1' is one the generated C declares"},
        {{"add", "class=k_aot_unload", "int=k", NULL}, NULL, "kernel 'class': its C name 'k_aot_unload' is one the generated C declares for kernel 'int'"},
        /* the tables of a launcher with dynamic shared memory */
        {{"add", "class=add_smem", NULL}, NULL, "kernel 'class': its C name 'add_smem' is one the generated C declares for kernel 'add' "
                                                "(add_aot_unload, add_slots, add_block, add_smem, add_ptx_N, add_cubin_N)"},
        {{"add=k_block", "int=k", NULL}, NULL, "kernel 'add': its C name 'k_block' is one the generated C declares for kernel 'int'"},
        {{"add", NULL}, "", "names no file"},
        {{"add", NULL}, "a\"b", "may not hold quotes"},
        {{"add", NULL}, "a?\?=b", "or \"??\" (a trigraph in C99)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *msg = NULL, o[700];
        snprintf(o, sizeof o, "%s/%s", dir, cases[i].out ? cases[i].out : "gen");
        cr_expect_eq(tile_aot_export(path, NULL, cases[i].kernels, NULL, o, &msg), TILE_ERROR_INVALID_VALUE, "case %zu", i);
        cr_expect(msg && strstr(msg, cases[i].want), "case %zu: %s", i, msg ? msg : "(no message)");
        cr_expect(msg && !strncmp(msg, "tile_aot_export: ", 17), "case %zu: the message does not name tile_aot_export: %s", i,
                  msg ? msg : "(no message)");
        free(msg);
    }
    char *msg = NULL;
    const char *none[] = {NULL};
    cr_expect_eq(tile_aot_export(path, NULL, none, NULL, out, &msg), TILE_ERROR_INVALID_VALUE);
    cr_expect(msg && !strncmp(msg, "tile_aot_export: no kernel named", 32), "%s", msg ? msg : "(no message)");
    free(msg);
    const char *add[] = {"add", NULL};
    tile_compile_options bad = {.size = 3}; /* ends inside a field */
    cr_expect_eq(tile_aot_export(path, &bad, add, NULL, out, &msg), TILE_ERROR_INVALID_VALUE);
    cr_expect(msg && !strncmp(msg, "tile_aot_export: opt->size = 3", 30), "%s", msg ? msg : "(no message)");
    free(msg);
    snprintf(out, sizeof out, "rm -rf %s", dir);
    cr_expect_eq(system(out), 0);
}

/* An export for a target the device cannot run (sm_90a on emu:sm_80, as on an sm_80 GPU): the launcher's first
 * call is TILE_ERROR_COMPILE with the device's reason, the table keeps nothing for that context, and the same
 * table serves a device that runs it (docs/runtime.md, "Ahead-of-time export").  In process, through
 * tile_aot_table_kernel, the call the generated launcher makes. */
Test(aot, mismatched_arch) {
    char path[512];
    snprintf(path, sizeof path, "%s/kernels/add.tile", TILE_SOURCE_DIR);
    tile_compiled c = {0};
    tile_compile_options o = {.size = sizeof o, .arch = "sm_90a", .kernel = "add"};
    cr_assert_eq(tile_compile_file(path, &o, &c), TILE_OK, "%s", c.diagnostics);
    static tile_aot_table table;
    tile_context *old, *h;
    cr_assert_eq(tile_context_create("emu:sm_80", &old), TILE_OK);
    cr_assert_eq(tile_context_create("emu:sm_90a", &h), TILE_OK);
    tile_kernel *k = NULL;
    /* no live context: the message names `name` (the launcher), not tile_module_load_ptx */
    cr_assert_eq(tile_aot_table_kernel(&table, c.ptx, "add", NULL, &k), TILE_ERROR_INVALID_VALUE);
    cr_expect_str_eq(tile_last_error(NULL), "add: the tile_context is NULL");
    for (int twice = 0; twice < 2; twice++) { /* a failed load is not kept: the second call fails as the first */
        cr_assert_eq(tile_aot_table_kernel(&table, c.ptx, "add", old, &k), TILE_ERROR_COMPILE);
        cr_expect(strstr(tile_last_error(old), "emu:sm_80 cannot load PTX for .target sm_90a"), "%s", tile_last_error(old));
    }
    cr_assert_eq(tile_aot_table_kernel(&table, c.ptx, "add", h, &k), TILE_OK, "%s", tile_last_error(h));
    float hx[100], hy[100], ho[100];
    for (int i = 0; i < 100; i++) hx[i] = (float)i * 0.25f, hy[i] = 3.0f - (float)i, ho[i] = -1;
    tile_devptr x, y, out;
    int n = 100;
    cr_assert_eq(tile_malloc(h, 400, &x) | tile_malloc(h, 400, &y) | tile_malloc(h, 400, &out), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(h, x, hx, 400) | tile_memcpy_htod(h, y, hy, 400) | tile_memset(h, out, 0xff, 400), TILE_OK);
    void *args[] = {&x, &y, &out, &n};
    cr_assert_eq(tile_launch(k, (tile_dim3){1, 1, 1}, args, NULL), TILE_OK, "%s", tile_last_error(h));
    cr_assert_eq(tile_memcpy_dtoh(h, ho, out, 400), TILE_OK);
    for (int i = 0; i < 100; i++) cr_assert_eq(ho[i], hx[i] + hy[i], "out[%d] = %g", i, (double)ho[i]);
    tile_aot_table_release(&table, old);
    tile_aot_table_release(&table, h);
    tile_context_destroy(old);
    tile_context_destroy(h);
    tile_compiled_free(&c);
}

/* A "b=None" variant: the dispatcher takes it when b is 0 (the kernel compiled with b None), the generic
 * build otherwise; "=any" adds no condition (it assumes nothing), while the pointers a variant compiled as
 * aligned must be.  Both run on the emulator. */
static const char *bias_src = "kernel bias(x: *f32, b: *f32, out: *f32, n: i32) {\n"
                              "    let o = program_id(0) * 256 + arange(0, 256);\n"
                              "    let v = load(x + o, o < n, 0.0);\n"
                              "    if b is not None {\n"
                              "        v = v + load(b + o, o < n, 0.0);\n"
                              "    }\n"
                              "    store(out + o, v, o < n);\n"
                              "}\n";

static const char *bias_prog =
    "#include \"bias_aot.h\"\n#include <stdio.h>\n"
    "int main(void) {\n"
    "    tile_context *ctx;\n"
    "    if (tile_context_create(\"emu\", &ctx)) return 10;\n"
    "    enum { N = 300 };\n"
    "    float hx[N], hb[N], ho[N];\n"
    "    for (int i = 0; i < N; i++) hx[i] = (float)i, hb[i] = 0.25f * (float)i;\n"
    "    tile_devptr x, b, o;\n"
    "    tile_malloc(ctx, sizeof hx, &x), tile_malloc(ctx, sizeof hb, &b), tile_malloc(ctx, sizeof ho, &o);\n"
    "    tile_memcpy_htod(ctx, x, hx, sizeof hx), tile_memcpy_htod(ctx, b, hb, sizeof hb);\n"
    "    for (int with = 0; with < 2; with++) {\n"
    "        tile_memset(ctx, o, 0xff, sizeof ho);\n"
    "        tile_status st = bias(ctx, (tile_dim3){2, 1, 1}, x, with ? b : 0, o, N, NULL);\n"
    "        if (st) { fprintf(stderr, \"%s\\n\", tile_last_error(ctx)); return 11; }\n"
    "        tile_memcpy_dtoh(ctx, ho, o, sizeof ho);\n"
    "        for (int i = 0; i < N; i++) if (ho[i] != hx[i] + (with ? hb[i] : 0)) return 12 + with;\n"
    "    }\n"
    "    bias_aot_unload(ctx);\n    tile_context_destroy(ctx);\n    puts(\"aot ok\");\n    return 0;\n}\n";

Test(aot, none_variant, .timeout = 120) {
    char dir[] = "/tmp/tile-test-aot-XXXXXX";
    cr_assert(mkdtemp(dir));
    const char *kernels[] = {"bias", NULL}, *variants[] = {"b=None n=16", "b=None x=any", NULL};
    char *gen = export_read(dir, "bias.tile", bias_src, kernels, variants, "bias_aot");
    /* each variant's conditions are what its signature assumes: x=any drops x's alignment, out stays aligned */
    cr_expect(strstr(gen, "if (b == 0 && out % 16 == 0) v = 1;"), "no condition for b=None x=any:\n%.2000s",
              strstr(gen, "int v =") ? strstr(gen, "int v =") : gen);
    cr_expect(strstr(gen, "if (x % 16 == 0 && b == 0 && out % 16 == 0 && n % 16 == 0) v = 0;"), "no condition for b=None n=16");
    free(gen);
    build_prog(dir, bias_prog, "bias_aot");
    run_prog(dir);
}

/* Parameters named after C++ keywords (this, new, class), a <stdint.h> type (int32_t), NULL, the launch
 * function's own ctx (and a ctx_ beside it): the generated prototype renames them (appending '_' until free
 * and unique) so that OUT.h works from C++ as well as C, and a variant names them by their .tile names.
 * The .c builds with -Wpedantic (the PTX is past C's 4095-character string literals), the header and the
 * .c with c++ -Wpedantic when a C++ compiler is installed, and the program runs both builds on the emulator. */
static const char *kw_src = "kernel scale(this: *f32, new: *f32, class: f32, int32_t: i32, NULL: i32, ctx: i32, ctx_: i32) {\n"
                            "    let o = program_id(0) * 128 + arange(0, 128);\n"
                            "    let m = o < int32_t;\n"
                            "    store(new + o, load(this + o, m, 0.0) * class + (NULL * 100 + ctx * 10 + ctx_) as f32, m);\n"
                            "}\n";

static const char *kw_prog =
    "#include \"kw_aot.h\"\n#include <stdio.h>\n"
    "int main(void) {\n"
    "    tile_context *ctx;\n"
    "    if (tile_context_create(\"emu\", &ctx)) return 10;\n"
    "    enum { N = 300 };\n"
    "    float hx[N], ho[N];\n"
    "    for (int i = 0; i < N; i++) hx[i] = (float)i;\n"
    "    tile_devptr x, o;\n"
    "    tile_malloc(ctx, sizeof hx, &x), tile_malloc(ctx, sizeof ho, &o);\n"
    "    tile_memcpy_htod(ctx, x, hx, sizeof hx);\n"
    "    for (int n = 288; n <= 290; n += 2) {\n"
    "        for (int one = 0; one < 2; one++) {\n"
    "            tile_memset(ctx, o, 0xff, sizeof ho);\n"
    "            int ctx_ = one ? 1 : 2;\n"
    "            if (scale(ctx, (tile_dim3){3, 1, 1}, x, o, 0.5f, n, 4, 3, ctx_, NULL)) {\n"
    "                fprintf(stderr, \"%s\\n\", tile_last_error(ctx));\n                return 11;\n            }\n"
    "            tile_memcpy_dtoh(ctx, ho, o, sizeof ho);\n"
    "            for (int i = 0; i < N; i++) {\n"
    "                float want = 0.5f * (float)i + (float)(430 + ctx_);\n"
    "                if (i < n ? ho[i] != want : ho[i] == ho[i]) { fprintf(stderr, \"n %d [%d] = %g\\n\", n, i, ho[i]); return 12; }\n"
    "            }\n"
    "        }\n"
    "    }\n"
    "    scale_aot_unload(ctx);\n    tile_context_destroy(ctx);\n    puts(\"aot ok\");\n    return 0;\n}\n";

static const char *kw_cpp = "#include \"kw_aot.h\"\n"
                            "int main() {\n"
                            "    tile_status (*launch)(tile_context *, tile_dim3, tile_devptr, tile_devptr, float, int32_t, int32_t, int32_t,\n"
                            "                          int32_t, tile_stream) = scale;\n"
                            "    return launch == nullptr;\n}\n";

Test(aot, cpp_keyword_params, .timeout = 120) {
    char dir[] = "/tmp/tile-test-aot-XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[600], cmd[4096];
    const char *kernels[] = {"scale", NULL}, *variants[] = {"int32_t=16 ctx_=1", NULL};
    char *gen = export_read(dir, "kw.tile", kw_src, kernels, variants, "kw_aot");
    cr_expect(strstr(gen, "tile_devptr this_, tile_devptr new_, float class_, int32_t int32_t_, int32_t NULL_, int32_t ctx_, int32_t ctx__,"),
              "parameters not renamed:\n%.600s", strstr(gen, "tile_status scale(") ? strstr(gen, "tile_status scale(") : gen);
    cr_expect(strstr(gen, "if (this_ % 16 == 0 && new_ % 16 == 0 && int32_t_ % 16 == 0 && ctx__ == 1) v = 0;"),
              "the variant does not test the renamed parameters:\n%.600s", strstr(gen, "int v =") ? strstr(gen, "int v =") : gen);
    free(gen);
    build_prog(dir, kw_prog, "kw_aot");
    bool cxx = system("command -v c++ > /dev/null 2>&1") == 0;
    if (cxx) {
        write_file(dir, "kw.cpp", kw_cpp);
        for (int std = 11; std <= 20; std += 3) {
            snprintf(cmd, sizeof cmd, "c++ -std=c++%d -Wall -Wextra -Wpedantic -Werror -I%s/include -I%s -c %s/kw.cpp -o %s/kw.o >> %s/log 2>&1",
                     std, TILE_SOURCE_DIR, dir, dir, dir, dir);
            int rc = system(cmd);
            if (rc) {
                snprintf(path, sizeof path, "cat %s/log", dir);
                cr_expect_eq(system(path), 0);
            }
            cr_expect_eq(rc, 0, "the generated header does not compile as C++: %s", cmd);
            /* the .c too, for a C++-only build (CMake's project(x CXX) with the file marked CXX) */
            snprintf(cmd, sizeof cmd, "c++ -x c++ -std=c++%d -Wall -Wextra -Wpedantic -Werror -I%s/include -I%s -c %s/kw_aot.c -o %s/kw_aot.o >> %s/log 2>&1",
                     std, TILE_SOURCE_DIR, dir, dir, dir, dir);
            rc = system(cmd);
            if (rc) {
                snprintf(path, sizeof path, "cat %s/log", dir);
                cr_expect_eq(system(path), 0);
            }
            cr_expect_eq(rc, 0, "the generated .c does not compile as C++: %s", cmd);
        }
    }
    run_prog(dir);
    if (!cxx) cr_skip_test("no c++ compiler: the generated header was not compiled as C++");
}

/* A variant is taken only when the values meet every assumption of its build, pointer alignment included:
 * with "n=16" before "x=any y=any out=any", n = 1024 and x 4 bytes past a 16-byte boundary go to the second
 * variant (before, the first was taken and its launch refused the misaligned x), aligned ones to the first;
 * n = 1000 with aligned pointers to the second as well.  Outputs poisoned first, checked exactly. */
static const char *misaligned_prog =
    "#include \"add_aot.h\"\n#include <math.h>\n#include <stdio.h>\n"
    "int main(void) {\n"
    "    tile_context *ctx;\n"
    "    if (tile_context_create(\"emu\", &ctx)) return 10;\n"
    "    enum { N = 1024 };\n"
    "    float hx[N + 4], hy[N], ho[N];\n"
    "    for (int i = 0; i < N + 4; i++) hx[i] = 0.75f * (float)i;\n"
    "    for (int i = 0; i < N; i++) hy[i] = (float)(i % 13) - 6.0f;\n"
    "    tile_devptr x, y, o;\n"
    "    if (tile_malloc(ctx, sizeof hx, &x) || tile_malloc(ctx, sizeof hy, &y) || tile_malloc(ctx, sizeof ho, &o)) return 11;\n"
    "    tile_memcpy_htod(ctx, x, hx, sizeof hx), tile_memcpy_htod(ctx, y, hy, sizeof hy);\n"
    "    for (int c = 0; c < 3; c++) {\n"
    "        int shift = c == 1, n = c == 2 ? 1000 : N;\n"
    "        for (int i = 0; i < N; i++) ho[i] = NAN;\n"
    "        tile_memcpy_htod(ctx, o, ho, sizeof ho);\n"
    "        if (add(ctx, (tile_dim3){1, 1, 1}, x + 4u * (unsigned)shift, y, o, n, NULL)) {\n"
    "            fprintf(stderr, \"case %d: %s\\n\", c, tile_last_error(ctx));\n            return 12;\n        }\n"
    "        tile_memcpy_dtoh(ctx, ho, o, sizeof ho);\n"
    "        for (int i = 0; i < N; i++)\n"
    "            if (i < n ? (double)ho[i] != (double)hx[i + shift] + (double)hy[i] : !isnan(ho[i])) {\n"
    "                fprintf(stderr, \"case %d: out[%d] = %g\\n\", c, i, (double)ho[i]);\n                return 13;\n            }\n"
    "    }\n"
    "    add_aot_unload(ctx);\n    tile_context_destroy(ctx);\n    puts(\"aot ok\");\n    return 0;\n}\n";

Test(aot, misaligned_pointer_takes_an_any_variant, .timeout = 120) {
    char dir[] = "/tmp/tile-test-aot-XXXXXX";
    cr_assert(mkdtemp(dir));
    const char *kernels[] = {"add", NULL}, *variants[] = {"n=16", "x=any y=any out=any", NULL};
    free(export_read(dir, TILE_SOURCE_DIR "/kernels/add.tile", NULL, kernels, variants, "add_aot"));
    build_prog(dir, misaligned_prog, "add_aot");
    run_prog(dir);
}

/* Kernels named as C library functions (free, clock) with parameters named as the standard headers' macros
 * (errno, stdin, assert, I, complex, EOF, INT32_MAX), GNU C's predefined ones (unix, linux) and C++'s std.  The
 * generated C includes no system header, so it compiles whatever the names; `tile aot` refuses a launch
 * function that would take a C library symbol's place (a program defining free would have libc's own calls
 * reach it) and exports them under other C names (--kernel free=release_rows, --prefix k_ for clock).  The
 * parameters are renamed (errno_, ...).  A program that includes those headers and calls libc's free and
 * clock besides builds with -Wpedantic -Werror as C99, C11, C17 and GNU C17 (unix, linux are macros there),
 * as C++11 to C++20 with the .c compiled as C++ too, and runs both kernels on the emulator: checked against
 * a double reference on 300 elements (grid of 128-element tiles), the tail past n poisoned and left alone. */
static const char *libc_src = "kernel free(x: *f32, out: *f32, n: i32) {\n"
                              "    let o = program_id(0) * 128 + arange(0, 128);\n"
                              "    store(out + o, load(x + o, o < n, 0.0) * 2.0 + 1.0, o < n);\n"
                              "}\n"
                              "kernel clock(errno: *f32, stdin: *f32, assert: f32, I: i32, complex: i32, unix: i32, linux: i32,\n"
                              "             EOF: i32, INT32_MAX: i32, std: i32) {\n"
                              "    let o = program_id(0) * 128 + arange(0, 128);\n"
                              "    let m = o < I;\n"
                              "    let c = complex * 100000 + unix * 10000 + linux * 1000 + EOF * 100 + INT32_MAX * 10 + std;\n"
                              "    store(stdin + o, load(errno + o, m, 0.0) * assert + c as f32, m);\n"
                              "}\n";

static const char *libc_prog =
    "#include <assert.h>\n#include <errno.h>\n#include <limits.h>\n#include <math.h>\n#include <stdint.h>\n"
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <time.h>\n"
    "#ifndef __cplusplus\n#include <complex.h>\n#endif\n"
    "#include \"libc_aot.h\"\n"
    "int main(void) {\n"
    "    clock_t start = clock(); /* the C library's */\n"
    "    float *hx = (float *)malloc(384 * sizeof *hx), *ho = (float *)malloc(384 * sizeof *ho);\n"
    "    if (!hx || !ho || start == (clock_t)-1) return 9;\n"
    "    tile_context *ctx;\n"
    "    if (tile_context_create(\"emu\", &ctx)) return 10;\n"
    "    for (int i = 0; i < 384; i++) hx[i] = (float)((i * 37) % 101) - 50.25f;\n"
    "    tile_devptr x, o;\n"
    "    if (tile_malloc(ctx, 384 * 4, &x) || tile_malloc(ctx, 384 * 4, &o) || tile_memcpy_htod(ctx, x, hx, 384 * 4)) return 11;\n"
    "    for (int which = 0; which < 2; which++) {\n"
    "        int n = 300;\n"
    "        for (int i = 0; i < 384; i++) ho[i] = NAN;\n"
    "        tile_memcpy_htod(ctx, o, ho, 384 * 4);\n"
    "        tile_dim3 grid = {3, 1, 1};\n"
    "        tile_status st = which ? k_clock(ctx, grid, x, o, 0.5f, n, 1, 2, 3, 4, 5, 6, NULL) : release_rows(ctx, grid, x, o, n, NULL);\n"
    "        if (st) { fprintf(stderr, \"%s\\n\", tile_last_error(ctx)); return 12; }\n"
    "        tile_memcpy_dtoh(ctx, ho, o, 384 * 4);\n"
    "        for (int i = 0; i < 384; i++) {\n"
    "            double want = which ? (double)hx[i] * 0.5 + 123456.0 : (double)hx[i] * 2.0 + 1.0;\n"
    "            if (i < n ? (double)ho[i] != want : !isnan(ho[i])) {\n"
    "                fprintf(stderr, \"kernel %d: out[%d] = %g, want %g\\n\", which, i, (double)ho[i], i < n ? want : NAN);\n"
    "                return 13;\n"
    "            }\n"
    "        }\n"
    "    }\n"
    "    /* no context: the message names the launcher called, under its C name (not the kernel's) */\n"
    "    tile_dim3 one = {1, 1, 1};\n"
    "    if (release_rows(NULL, one, x, o, 1, NULL) == TILE_OK ||\n"
    "        !strstr(tile_last_error(NULL), \"release_rows: the tile_context is NULL\")) {\n"
    "        fprintf(stderr, \"NULL ctx: %s\\n\", tile_last_error(NULL));\n        return 14;\n    }\n"
    "    release_rows_aot_unload(ctx);\n    k_clock_aot_unload(ctx);\n    tile_context_destroy(ctx);\n"
    "    free(hx);\n    free(ho);\n"
    "    errno = 0;\n    assert(clock() >= start);\n"
    "    puts(\"aot ok\");\n    return 0;\n}\n";

Test(aot, libc_names, .timeout = 240) {
    char dir[] = "/tmp/tile-test-aot-XXXXXX";
    cr_assert(mkdtemp(dir));
    char cmd[4096];
    write_file(dir, "libc.tile", libc_src);
    /* under its own name, free is refused before anything is written, naming the way out */
    snprintf(cmd, sizeof cmd, "TILE_CACHE_DIR=%s/cache %s aot %s/libc.tile --kernel free -o %s/libc_aot > %s/refused 2>&1", dir, TILE_CLI, dir,
             dir, dir);
    int rc = system(cmd);
    cr_expect(WIFEXITED(rc) && WEXITSTATUS(rc) == 2, "tile aot --kernel free: status %d", rc);
    snprintf(cmd, sizeof cmd,
             "grep -q \"kernel 'free': its launch function would be named 'free', which is a symbol of the C library\" %s/refused && "
             "grep -q -- '--kernel free=CNAME or --prefix P' %s/refused && ! test -e %s/libc_aot.c",
             dir, dir, dir);
    cr_expect_eq(system(cmd), 0, "no refusal naming the C library:");
    snprintf(cmd, sizeof cmd, "TILE_CACHE_DIR=%s/cache %s aot %s/libc.tile --kernel free=release_rows --kernel clock --prefix k_ -o %s/libc_aot >> %s/log 2>&1",
             dir, TILE_CLI, dir, dir, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    char path[700];
    snprintf(path, sizeof path, "%s/libc_aot.c", dir);
    FILE *f = fopen(path, "r");
    cr_assert(f);
    static char gen[1 << 20];
    gen[fread(gen, 1, sizeof gen - 1, f)] = 0;
    fclose(f);
    cr_expect(!strstr(gen, "#include <"), "the generated C includes a system header");
    cr_expect(strstr(gen, "tile_status k_clock(tile_context *ctx, tile_dim3 grid, tile_devptr errno_, tile_devptr stdin_, float assert_, "
                          "int32_t I_, int32_t complex_, int32_t unix_, int32_t linux_, int32_t EOF_, int32_t INT32_MAX_, int32_t std_, "
                          "tile_stream stream)"),
              "parameters not renamed:\n%.700s", strstr(gen, "tile_status k_clock(") ? strstr(gen, "tile_status k_clock(") : gen);
    cr_expect(strstr(gen, "\"free\", ctx, &k)") && strstr(gen, "\"clock\", ctx, &k)"), "the launchers do not load the .tile kernels");
    write_file(dir, "main.c", libc_prog);
    bool ok = true;
    static const char *const cstds[] = {"c99", "c11", "c17", "gnu17"};
    for (size_t i = 0; i < sizeof cstds / sizeof *cstds; i++) {
        snprintf(cmd, sizeof cmd,
                 "cc -std=%s -Wall -Wextra -Wpedantic -Werror %s -I%s/include -I%s %s/main.c %s/libc_aot.c -L%s -ltile_rt -Wl,-rpath,%s -lm "
                 "-o %s/prog-%s >> %s/log 2>&1 && %s/prog-%s >> %s/log 2>&1",
                 cstds[i], TILE_TEST_CFLAGS, TILE_SOURCE_DIR, dir, dir, dir, TILE_BINARY_DIR, TILE_BINARY_DIR, dir, cstds[i], dir, dir, cstds[i], dir);
        rc = system(cmd);
        ok = ok && !rc;
        cr_expect_eq(rc, 0, "%s", cmd);
    }
    bool cxx = system("command -v c++ > /dev/null 2>&1") == 0;
    for (int std = 11; cxx && std <= 20; std += 3) {
        snprintf(cmd, sizeof cmd,
                 "c++ -x c++ -std=c++%d -Wall -Wextra -Wpedantic -Werror %s -I%s/include -I%s %s/main.c %s/libc_aot.c -x none -L%s -ltile_rt "
                 "-Wl,-rpath,%s -o %s/prog-cxx >> %s/log 2>&1 && %s/prog-cxx >> %s/log 2>&1",
                 std, TILE_TEST_CFLAGS, TILE_SOURCE_DIR, dir, dir, dir, TILE_BINARY_DIR, TILE_BINARY_DIR, dir, dir, dir, dir);
        rc = system(cmd);
        ok = ok && !rc;
        cr_expect_eq(rc, 0, "%s", cmd);
    }
    snprintf(cmd, sizeof cmd, "%s %s/log; rm -rf %s", ok ? "true" : "cat", dir, dir);
    cr_expect_eq(system(cmd), 0);
    if (!cxx) cr_skip_test("no c++ compiler: the export was not compiled as C++");
}

/* The paths the files' first comments echo may hold anything a folder name can: "x*" then "*y" ("*" "/" ends a
 * C comment, "/" "*" opens one, which -Wcomment warns of), "??/" (a trigraph in C99, a backslash) and a newline.
 * Both files compile with -Wall -Wextra -Wpedantic -Werror as C99 and C17 and the program runs; the comment
 * shows the path escaped.  A failed write leaves the files as they were.  File names that differ in a
 * character that is no letter or digit get two include guards. */
Test(aot, odd_paths, .timeout = 120) {
    char dir[] = "/tmp/tile-test-aot-XXXXXX";
    cr_assert(mkdtemp(dir));
    char sub[600], cmd[4096];
    snprintf(sub, sizeof sub, "%s/x*", dir);
    cr_assert_eq(mkdir(sub, 0700), 0);
    snprintf(sub, sizeof sub, "%s/x*/*y?\?", dir);
    cr_assert_eq(mkdir(sub, 0700), 0);
    snprintf(sub, sizeof sub, "%s/x*/*y?\?/new\nline", dir);
    cr_assert_eq(mkdir(sub, 0700), 0);
    snprintf(cmd, sizeof cmd, "cp %s/kernels/add.tile '%s/add.tile'", TILE_SOURCE_DIR, sub);
    cr_assert_eq(system(cmd), 0);
    const char *kernels[] = {"add", NULL};
    char tile_path[700];
    snprintf(tile_path, sizeof tile_path, "%s/add.tile", sub);
    char *gen = export_read(sub, tile_path, NULL, kernels, NULL, "add_aot");
    cr_expect(strstr(gen, "/x*\\/\\*y?\\?/new\\x0aline/add.tile: do not edit."), "the path is not escaped:\n%.300s", gen);
    free(gen);
    for (int std = 99; std <= 117; std += 18) {
        snprintf(cmd, sizeof cmd, "cc -std=c%d -Wall -Wextra -Wpedantic -Werror -I%s/include -I'%s' -c '%s/add_aot.c' -o %s/add_aot.o >> %s/log 2>&1",
                 std % 100, TILE_SOURCE_DIR, sub, sub, dir, dir);
        cr_expect_eq(system(cmd), 0, "%s", cmd);
    }
    snprintf(cmd, sizeof cmd, "cp '%s/add_aot.h' '%s/add_aot.c' %s/", sub, sub, dir);
    cr_assert_eq(system(cmd), 0);
    build_prog(dir, prog, "add_aot");
    /* a write that fails leaves the files as they were, and no temporary beside them: pair.c is a folder, so the
     * export of add as add3 cannot land, and pair.h still declares add (it was rewritten before the .c failed) */
    const char *plain[] = {"add", NULL}, *as_add3[] = {"add=add3", NULL};
    free(export_read(dir, TILE_SOURCE_DIR "/kernels/add.tile", NULL, plain, NULL, "pair"));
    snprintf(cmd, sizeof cmd, "rm %s/pair.c && mkdir %s/pair.c", dir, dir);
    cr_assert_eq(system(cmd), 0);
    char stem[700], *msg = NULL;
    snprintf(stem, sizeof stem, "%s/pair", dir);
    cr_expect_eq(tile_aot_export(TILE_SOURCE_DIR "/kernels/add.tile", NULL, as_add3, NULL, stem, &msg), TILE_ERROR_IO);
    cr_expect(msg && strstr(msg, "pair.c: Is a directory"), "%s", msg ? msg : "(no message)");
    free(msg);
    snprintf(cmd, sizeof cmd, "grep -q 'tile_status add(' %s/pair.h && ! grep -q add3 %s/pair.h && ! ls %s | grep -q tmp", dir, dir, dir);
    cr_expect_eq(system(cmd), 0, "the failed export changed pair.h or left a temporary file");
    /* add-aot.h beside add_aot.h (their include guards were both TILE_AOT_ADD_AOT_H: the second was empty), the
     * kernel exported as add2 ("NAME=CNAME"); a program includes both and runs both */
    const char *renamed[] = {"add=add2", NULL};
    free(export_read(dir, TILE_SOURCE_DIR "/kernels/add.tile", NULL, renamed, NULL, "add-aot"));
    write_file(dir, "both.c",
               "#include \"add_aot.h\"\n#include \"add-aot.h\"\n#include <math.h>\n"
               "int main(void) {\n    tile_context *ctx;\n    if (tile_context_create(\"emu\", &ctx)) return 10;\n"
               "    float h[1100];\n    for (int i = 0; i < 1100; i++) h[i] = (float)i;\n    tile_devptr x, o;\n"
               "    if (tile_malloc(ctx, sizeof h, &x) || tile_malloc(ctx, sizeof h, &o) || tile_memcpy_htod(ctx, x, h, sizeof h)) return 11;\n"
               "    for (int w = 0; w < 2; w++) {\n        tile_memset(ctx, o, 0xff, sizeof h);\n"
               "        if ((w ? add2 : add)(ctx, (tile_dim3){2, 1, 1}, x, x, o, 1037, NULL)) return 12;\n"
               "        tile_memcpy_dtoh(ctx, h, o, sizeof h);\n"
               "        for (int i = 0; i < 1100; i++) if (i < 1037 ? h[i] != 2.0f * (float)i : !isnan(h[i])) return 13;\n"
               "    }\n    add_aot_unload(ctx), add2_aot_unload(ctx);\n    tile_context_destroy(ctx);\n    return 0;\n}\n");
    snprintf(cmd, sizeof cmd,
             "cc -std=c99 -Wall -Wextra -Wpedantic -Werror %s -I%s/include -I%s %s/both.c %s/add_aot.c %s/add-aot.c -L%s -ltile_rt -Wl,-rpath,%s "
             "-lm -o %s/both >> %s/log 2>&1 && %s/both >> %s/log 2>&1",
             TILE_TEST_CFLAGS, TILE_SOURCE_DIR, dir, dir, dir, dir, TILE_BINARY_DIR, TILE_BINARY_DIR, dir, dir, dir, dir);
    cr_expect_eq(system(cmd), 0, "%s", cmd);
    run_prog(dir);
}

/* Parameters the renaming could not free by appending '_' (tile_x, __y, _Zed stay reserved however long they
 * grow, K_ptx_0_ is no table of K's) or past 63 characters failed the export ("cannot read the parameters"),
 * and a kernel of over 128 parameters got a launch function with the first 128 only.  Exported with 140 more
 * after those, one variant, the C builds with -Wpedantic -Werror, and the program passes every value:
 * out[i] = sum of the parameters (all distinct), checked on 200 elements with the 56 after n poisoned. */
Test(aot, many_and_reserved_params, .timeout = 120) {
    char dir[] = "/tmp/tile-test-aot-XXXXXX";
    cr_assert(mkdtemp(dir));
    enum { NP = 140 };
    static char src[16384], prog_src[16384];
    const char *odd[] = {"tile_x", "__y", "_Zed", "many_ptx_0", "an_unusually_long_parameter_name_that_runs_on_past_sixty_four_chars"};
    size_t len = (size_t)snprintf(src, sizeof src, "kernel many(out: *f32, n: i32");
    for (int i = 0; i < 5; i++) len += (size_t)snprintf(src + len, sizeof src - len, ", %s: i32", odd[i]);
    for (int i = 0; i < NP; i++) len += (size_t)snprintf(src + len, sizeof src - len, ", p%d: i32", i);
    len += (size_t)snprintf(src + len, sizeof src - len, ") {\n    let o = program_id(0) * 64 + arange(0, 64);\n    let s = %s", odd[0]);
    for (int i = 1; i < 5; i++) len += (size_t)snprintf(src + len, sizeof src - len, " + %s", odd[i]);
    for (int i = 0; i < NP; i++) len += (size_t)snprintf(src + len, sizeof src - len, " + p%d", i);
    snprintf(src + len, sizeof src - len, ";\n    store(out + o, s as f32 + zeros([64], f32), o < n);\n}\n");
    const char *kernels[] = {"many", NULL}, *variants[] = {"n=16", NULL};
    char *gen = export_read(dir, "many.tile", src, kernels, variants, "many_aot");
    cr_expect(strstr(gen, "int32_t p_tile_x, int32_t p___y, int32_t p__Zed, int32_t many_ptx_0_, int32_t an_unusually_long"),
              "reserved parameters not renamed:\n%.400s", strstr(gen, "tile_status many(") ? strstr(gen, "tile_status many(") : gen);
    cr_expect(strstr(gen, "int32_t p139, tile_stream stream)"), "parameters left out of the launch function");
    free(gen);
    /* values 1000 * (k + 1) for the five, k + 1 for p_k: sum = 15000 + NP (NP + 1) / 2 */
    len = (size_t)snprintf(prog_src, sizeof prog_src,
                           "#include \"many_aot.h\"\n#include <math.h>\n#include <stdio.h>\n"
                           "int main(void) {\n    tile_context *ctx;\n    if (tile_context_create(\"emu\", &ctx)) return 10;\n"
                           "    float h[256];\n    for (int i = 0; i < 256; i++) h[i] = NAN;\n    tile_devptr o;\n"
                           "    if (tile_malloc(ctx, sizeof h, &o) || tile_memcpy_htod(ctx, o, h, sizeof h)) return 11;\n"
                           "    int n = 200;\n    if (many(ctx, (tile_dim3){4, 1, 1}, o, n, 1000, 2000, 3000, 4000, 5000");
    for (int i = 0; i < NP; i++) len += (size_t)snprintf(prog_src + len, sizeof prog_src - len, ", %d", i + 1);
    snprintf(prog_src + len, sizeof prog_src - len,
             ", NULL)) { fprintf(stderr, \"%%s\\n\", tile_last_error(ctx)); return 12; }\n"
             "    tile_memcpy_dtoh(ctx, h, o, sizeof h);\n"
             "    for (int i = 0; i < 256; i++)\n"
             "        if (i < n ? (double)h[i] != %d.0 : !isnan(h[i])) { fprintf(stderr, \"out[%%d] = %%g\\n\", i, (double)h[i]); return 13; }\n"
             "    many_aot_unload(ctx);\n    tile_context_destroy(ctx);\n    return 0;\n}\n",
             15000 + NP * (NP + 1) / 2);
    build_prog(dir, prog_src, "many_aot");
    run_prog(dir);
}

/* A kernel past the 48 KiB of static shared memory gets it as dynamic shared memory, which raw PTX does not
 * declare the size of: the launcher passes it (it launched with none, so the emulator's memcheck stopped the
 * first shared store, and a GPU would have faulted).  kernels/transpose.tile with 128 x 128 tiles on 8 warps
 * stages 64 KiB; exported generic and with the strides specialized, the header names each cubin's block and
 * dynamic shared memory, and both variants run on the emulator (150 x 70 with odd strides, and 128 x 144)
 * against the input with the output poisoned, its padding left alone. */
static const char *dyn_smem_prog =
    "#include \"tr_aot.h\"\n#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
    "int main(void) {\n"
    "    tile_context *ctx;\n"
    "    if (tile_context_create(\"emu\", &ctx)) return 10;\n"
    "    static const int shapes[2][4] = {{150, 70, 73, 151}, {128, 144, 144, 128}}; /* m, n, in_stride, out_stride */\n"
    "    for (int s = 0; s < 2; s++) {\n"
    "        int m = shapes[s][0], n = shapes[s][1], is = shapes[s][2], os = shapes[s][3];\n"
    "        size_t in_len = (size_t)m * is, out_len = (size_t)n * os;\n"
    "        float *in = malloc(sizeof *in * in_len), *out = malloc(sizeof *out * out_len);\n"
    "        if (!in || !out) return 11;\n"
    "        for (size_t i = 0; i < in_len; i++) in[i] = (float)(i % 1000) * 0.25f - 7.0f;\n"
    "        for (size_t i = 0; i < out_len; i++) out[i] = NAN;\n"
    "        tile_devptr din, dout;\n"
    "        if (tile_malloc(ctx, sizeof *in * in_len, &din) || tile_malloc(ctx, sizeof *out * out_len, &dout) ||\n"
    "            tile_memcpy_htod(ctx, din, in, sizeof *in * in_len) || tile_memcpy_htod(ctx, dout, out, sizeof *out * out_len))\n"
    "            return 12;\n"
    "        tile_dim3 grid = {(unsigned)(m + 127) / 128, (unsigned)(n + 127) / 128, 1};\n"
    "        if (transpose(ctx, grid, dout, din, m, n, is, os, NULL)) { fprintf(stderr, \"%s\\n\", tile_last_error(ctx)); return 13; }\n"
    "        if (tile_memcpy_dtoh(ctx, out, dout, sizeof *out * out_len)) return 14;\n"
    "        for (int j = 0; j < n; j++)\n"
    "            for (int i = 0; i < os; i++) {\n"
    "                float got = out[(size_t)j * os + i];\n"
    "                if (i < m ? got != in[(size_t)i * is + j] : !isnan(got)) {\n"
    "                    fprintf(stderr, \"%dx%d: out[%d][%d] = %g\\n\", m, n, j, i, (double)got);\n"
    "                    return 15;\n"
    "                }\n"
    "            }\n"
    "        tile_free(ctx, din), tile_free(ctx, dout);\n"
    "        free(in), free(out);\n"
    "    }\n"
    "    transpose_aot_unload(ctx);\n    tile_context_destroy(ctx);\n"
    "    puts(\"aot ok\");\n    return 0;\n}\n";

Test(aot, dynamic_shared_memory, .timeout = 240) {
    char dir[] = "/tmp/tile-test-aot-XXXXXX";
    cr_assert(mkdtemp(dir));
    const char *kernels[] = {"transpose", NULL}, *variants[] = {"in_stride=16 out_stride=16", NULL};
    const char *defines[] = {"BLOCK_M=128", "BLOCK_N=128", "num_warps=8", NULL};
    /* without the defines (32 x 32 tiles, 4 KiB, static): a plain tile_launch, and no tables */
    char *gen = export_read(dir, TILE_SOURCE_DIR "/kernels/transpose.tile", NULL, kernels, variants, "tr_aot");
    cr_expect(strstr(gen, "return tile_launch(k, grid, args, stream);") && !strstr(gen, "transpose_smem"));
    free(gen);
    tile_compile_options o = {.size = sizeof o, .defines = defines};
    char out[600], *msg = NULL;
    snprintf(out, sizeof out, "%s/tr_aot", dir);
    cr_assert_eq(tile_aot_export(TILE_SOURCE_DIR "/kernels/transpose.tile", &o, kernels, variants, out, &msg), TILE_OK, "%s",
                 msg ? msg : "");
    free(msg);
    char path[700];
    snprintf(path, sizeof path, "%s/tr_aot.c", dir);
    FILE *f = fopen(path, "r");
    cr_assert(f);
    cr_assert_eq(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    rewind(f);
    gen = malloc((size_t)len + 1);
    cr_assert(gen && fread(gen, 1, (size_t)len, f) == (size_t)len);
    gen[len] = 0;
    fclose(f);
    cr_expect(strstr(gen, "static const unsigned transpose_smem[2] = {65536u, 65536u};"), "no dynamic shared memory table");
    cr_expect(strstr(gen, "static const tile_dim3 transpose_block[2] = {{256u, 1u, 1u}, {256u, 1u, 1u}};"), "no block table");
    cr_expect(strstr(gen, "return tile_launch_raw(k, grid, transpose_block[v], transpose_smem[v], args, stream);"));
    free(gen);
    build_prog(dir, dyn_smem_prog, "tr_aot");
    run_prog(dir);
}

/* A parameter is renamed only where it would shadow an array declared before the launch function: k_slots,
 * the k_ptx_V of its variants (0 .. 1 here), k_cubin_V where ptxas made one, and k_block / k_smem only in an
 * export that has them (dynamic shared memory, as aot.dynamic_shared_memory's transpose); k_ptx_2, k_cubin_2
 * and k_aot_unload (defined after it) are none.  The .c then compiles with -Wshadow -Werror. */
Test(aot, params_renamed_only_where_they_clash, .timeout = 120) {
    char dir[] = "/tmp/tile-test-aot-XXXXXX";
    cr_assert(mkdtemp(dir));
    const char *src = "kernel k(x: *f32, n: i32, k_smem: i32, k_block: i32, k_slots: i32, k_ptx_0: i32, k_ptx_1: i32, k_ptx_2: i32,\n"
                      "         k_aot_unload: i32, k_cubin_0: i32, k_cubin_2: i32) {\n"
                      "    let o = arange(0, 64);\n"
                      "    store(x + o, (k_smem + k_block + k_slots + k_ptx_0 + k_ptx_1 + k_ptx_2 + k_aot_unload + k_cubin_0 + k_cubin_2) as f32, o < n);\n"
                      "}\n";
    const char *kernels[] = {"k", NULL}, *variants[] = {"n=16", NULL};
    char *gen = export_read(dir, "clash.tile", src, kernels, variants, "clash_aot");
    const char *proto = strstr(gen, "tile_status k(");
    bool cubin = strstr(gen, "const unsigned char k_cubin_0[") != NULL; /* ptxas installed */
    char want[512];
    snprintf(want, sizeof want, "int32_t n, int32_t k_smem, int32_t k_block, int32_t k_slots_, int32_t k_ptx_0_, int32_t k_ptx_1_, "
             "int32_t k_ptx_2, int32_t k_aot_unload, int32_t k_cubin_0%s, int32_t k_cubin_2, tile_stream stream)", cubin ? "_" : "");
    cr_expect(strstr(gen, want), "renamed where nothing clashes, or kept where something does: want\n%s\n%.500s", want, proto ? proto : gen);
    cr_expect(!strstr(gen, "k_smem[") && strstr(gen, "void *args[] = {&x, &n, &k_smem, &k_block, &k_slots_, &k_ptx_0_,"), "%.900s",
              proto ? proto : gen);
    free(gen);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cc -std=c17 -Wall -Wextra -Wshadow -Werror %s -I%s/include -I%s -c %s/clash_aot.c -o %s/clash_aot.o",
             TILE_TEST_CFLAGS, TILE_SOURCE_DIR, dir, dir, dir);
    cr_expect_eq(system(cmd), 0, "%s", cmd);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    system(cmd);
}

/* A program that links libtile_rt before libtile (`pkg-config --libs tile-rt tile`) has the runtime's names bound
 * to libtile_rt, so a context it makes is unknown to libtile's tile_module_load_source, which fails with its
 * message where tile_last_error does not read it: an empty message.  libtile says so when it is loaded (one
 * warning naming both files); linked alone, or first, it says nothing and the same program works. */
static const char *both_prog =
    "#include <tile/tile.h>\n#include <stdio.h>\n"
    "int main(void) {\n"
    "    tile_context *ctx;\n    tile_module *m;\n"
    "    if (tile_context_create(\"emu\", &ctx)) return 10;\n"
    "    tile_status st = tile_module_load_source(ctx, \"kernel z(x: *f32) { store(x + arange(0, 32), zeros([32], f32)); }\", NULL, &m);\n"
    "    printf(\"load: %d\\n\", (int)st);\n"
    "    if (st == TILE_OK) tile_module_unload(m);\n"
    "    tile_context_destroy(ctx);\n"
    "    return 0;\n}\n";

Test(aot, both_libraries_warn, .timeout = 120) {
    char dir[] = "/tmp/tile-test-aot-XXXXXX";
    cr_assert(mkdtemp(dir));
    write_file(dir, "main.c", both_prog);
    const char *links[] = {"-ltile_rt -ltile", "-ltile"};
    for (int i = 0; i < 2; i++) {
        char cmd[4096], err[1024] = "";
        snprintf(cmd, sizeof cmd,
                 "cc -std=c17 %s -I%s/include %s/main.c -L%s %s -Wl,-rpath,%s -o %s/prog%d >> %s/log 2>&1 && "
                 "TILE_CACHE_DIR=%s/cache %s/prog%d > %s/out%d 2> %s/err%d",
                 TILE_TEST_CFLAGS, TILE_SOURCE_DIR, dir, TILE_BINARY_DIR, links[i], TILE_BINARY_DIR, dir, i, dir, dir, dir, i, dir, i,
                 dir, i);
        cr_assert_eq(system(cmd), 0, "%s", cmd);
        snprintf(cmd, sizeof cmd, "%s/err%d", dir, i);
        FILE *f = fopen(cmd, "r");
        cr_assert(f);
        size_t n = fread(err, 1, sizeof err - 1, f);
        err[n] = 0;
        fclose(f);
        if (i == 0)
            cr_expect(strstr(err, "tile: warning: ") && strstr(err, "libtile_rt.so") && strstr(err, "libtile.so") &&
                      strstr(err, "link libtile alone"),
                      "no warning with %s: '%s'", links[i], err);
        else cr_expect_str_eq(err, "", "a warning with %s alone", links[i]);
        snprintf(cmd, sizeof cmd, "grep -q 'load: %d' %s/out%d", i == 0 ? TILE_ERROR_INVALID_VALUE : TILE_OK, dir, i);
        cr_expect_eq(system(cmd), 0, "%s", cmd);
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

/* ---- a program with libtile_rt alone reads the compile cache and checks images (tests/rt_only/load_entry.c) ---- */
static const char axpy_tile[] =
    "// out[i] = a * x[i] + y[i] for i < n\n@num_warps(4)\n"
    "kernel axpy(x: *f32, y: *f32, out: *f32, a: f32, n: i32, const BLOCK: i32 = 128) {\n"
    "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
    "    let mask = offs < n;\n"
    "    store(out + offs, a * load(x + offs, mask, 0.0) + load(y + offs, mask, 0.0), mask);\n"
    "}\n";

static void on_key(void *user, const tile_cache_entry_info *e) {
    if (!strcmp(e->arch, "sm_80")) snprintf(user, 33, "%s", e->key);
}

/* Builds tests/rt_only/load_entry.c against libtile_rt alone into dir/prog (ldd: no compiler library). */
static void build_load_entry(const char *dir) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cc -std=c17 -Wall -Wextra -Wpedantic -Werror %s -I%s/include %s/tests/rt_only/load_entry.c -L%s -ltile_rt -Wl,-rpath,%s -lm "
             "-o %s/prog >> %s/log 2>&1",
             TILE_TEST_CFLAGS, TILE_SOURCE_DIR, TILE_SOURCE_DIR, TILE_BINARY_DIR, TILE_BINARY_DIR, dir, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(cmd, sizeof cmd, "ldd %s/prog | grep -E 'libLLVM|libxxhash|libtile\\.so' >> %s/log 2>&1", dir, dir);
    cr_expect_neq(system(cmd), 0, "the program loads a compiler library (see ldd)");
}

/* The compiler stores axpy.tile for sm_80 (with its cubin) and sm_90a; a program linked to libtile_rt alone
 * finds the entries with tile_cache_list_ex, loads the sm_80 one by its key on emu:sm_80 and checks it
 * against float64, and is refused a damaged entry (one payload byte changed), a planted one (the entry under
 * another key's name), the sm_90a entry, bad keys, the cubin (the emulator runs no machine code), and
 * truncated or damaged images.  libtile_rt exports the calls, and needs no compiler library. */
Test(aot, cache_entry_and_cubin_without_the_compiler, .timeout = 180) {
    char dir[] = "/tmp/tile-test-aot-XXXXXX";
    cr_assert(mkdtemp(dir));
    char cmd[4096], path[700], cache[700], key[33] = "";
    write_file(dir, "axpy.tile", axpy_tile);
    snprintf(path, sizeof path, "%s/axpy.tile", dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    const char *arches[] = {"sm_80", "sm_90a"};
    for (int i = 0; i < 2; i++) {
        tile_compile_options o = {.size = sizeof o, .arch = arches[i], .want_cubin = i == 0};
        tile_compiled c;
        int from = 1;
        cr_assert_eq(tile_cache_compile_file(cache, path, &o, &c, &from), TILE_OK, "%s", c.diagnostics);
        cr_assert_eq(from, 0);
        if (i == 0) {
            cr_assert(c.cubin && !c.ptxas_missing, "no cubin (ptxas: %s)", c.ptxas_log ? c.ptxas_log : "missing");
            snprintf(cmd, sizeof cmd, "%s/axpy.cubin", dir);
            FILE *f = fopen(cmd, "wb");
            cr_assert(f && fwrite(c.cubin, 1, c.cubin_size, f) == c.cubin_size);
            fclose(f);
        }
        tile_compiled_free(&c);
    }
    cr_assert_eq(tile_cache_list_ex(cache, on_key, key), TILE_OK);
    cr_assert_eq(strlen(key), 32);
    /* damaged: the entry's last byte changed; planted: the entry under another key (its last digit changed) */
    char other[33];
    memcpy(other, key, 33);
    other[31] = other[31] == '0' ? '1' : '0';
    snprintf(cmd, sizeof cmd,
             "cp -r %s/cache %s/damaged && cp -r %s/cache %s/planted && "
             "printf 'Z' | dd of=%s/damaged/v1/%.2s/%s bs=1 seek=$(($(stat -c %%s %s/damaged/v1/%.2s/%s) - 1)) conv=notrunc 2>/dev/null && "
             "mv %s/planted/v1/%.2s/%s %s/planted/v1/%.2s/%s",
             dir, dir, dir, dir, dir, key, key + 2, dir, key, key + 2, dir, key, key + 2, dir, other, other + 2);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    build_load_entry(dir);
    snprintf(cmd, sizeof cmd, "%s/prog %s/cache %s/damaged %s/planted %s/axpy.cubin >> %s/log 2>&1", dir, dir, dir, dir, dir, dir);
    int rc = system(cmd);
    snprintf(cmd, sizeof cmd, "%s %s/log", rc ? "cat" : "true", dir);
    cr_expect_eq(system(cmd), 0);
    cr_expect_eq(rc, 0, "the program linked to libtile_rt alone failed (its output is above)");
    snprintf(cmd, sizeof cmd, "grep -q '^load_entry ok$' %s/log", dir);
    cr_expect_eq(system(cmd), 0, "the program did not finish its checks");
    /* the entry is still in the cache the program read, unchanged (a reader removes nothing) */
    int from = 0;
    tile_compiled c;
    tile_compile_options o = {.size = sizeof o, .arch = "sm_80", .want_cubin = 1};
    cr_expect_eq(tile_cache_compile_file(cache, path, &o, &c, &from), TILE_OK);
    cr_expect_eq(from, 1, "the entry the program loaded is gone");
    tile_compiled_free(&c);
    /* libtile_rt exports them */
    const char *names[] = {"tile_module_load_cubin", "tile_module_load_cache_entry", "tile_cache_list_ex", "tile_cache_list",
                           "tile_cache_default_dir"};
    for (int i = 0; i < 5; i++) {
        snprintf(cmd, sizeof cmd, "nm -D --defined-only %s/libtile_rt.so | grep -qw %s", TILE_BINARY_DIR, names[i]);
        cr_expect_eq(system(cmd), 0, "libtile_rt.so does not export %s", names[i]);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

/* A fatbin nvcc made with uncompressed PTX (--no-compress) runs on the emulator from its PTX (float64-checked);
 * nvcc's default, compressed PTX, is refused saying so; damaged containers are refused.  Needs nvcc. */
Test(aot, fatbin_ptx_on_the_emulator, .timeout = 180) {
    const char *nvcc = "/usr/local/cuda/bin/nvcc";
    if (access(nvcc, X_OK)) cr_skip_test("no %s: the fatbin test needs nvcc", nvcc);
    char dir[] = "/tmp/tile-test-aot-XXXXXX";
    cr_assert(mkdtemp(dir));
    write_file(dir, "axpy.cu",
               "extern \"C\" __global__ void axpy(double *y, const double *x, double a, int n) {\n"
               "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = a * x[i] + y[i];\n}\n");
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "%s -fatbin -arch=sm_80 --no-compress %s/axpy.cu -o %s/plain.fatbin >> %s/log 2>&1 && "
             "%s -fatbin -arch=sm_80 %s/axpy.cu -o %s/comp.fatbin >> %s/log 2>&1",
             nvcc, dir, dir, dir, nvcc, dir, dir, dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    build_load_entry(dir);
    snprintf(cmd, sizeof cmd, "%s/prog fatbin %s/plain.fatbin %s/comp.fatbin >> %s/log 2>&1", dir, dir, dir, dir);
    int rc = system(cmd);
    snprintf(cmd, sizeof cmd, "%s %s/log; grep -q '^load_entry fatbin ok$' %s/log", rc ? "cat" : "true", dir, dir);
    cr_expect_eq(system(cmd), 0, "the program did not finish its checks");
    cr_expect_eq(rc, 0, "the fatbin checks failed (output above)");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_expect_eq(system(cmd), 0);
}

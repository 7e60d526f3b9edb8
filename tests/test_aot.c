/* test_aot.c - `tile aot` exports kernels/add.tile (a generic build and an
 * n=16 variant), the system cc builds a program from the output against
 * libtile_rt only (ldd shows no LLVM, no xxHash, no libtile), and the
 * program runs both variants on the emulator. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    "    /* no context: the library's message for it (an empty slot matched a NULL ctx) */\n"
    "    if (add(NULL, (tile_dim3){1, 1, 1}, 0, 0, 0, 1, NULL) == TILE_OK || !strstr(tile_last_error(NULL), \"tile_context\")) return 13;\n"
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
             "cc -std=c17 -Wall -Wextra -Wpedantic -Werror %s -I%s/include -I%s %s/main.c %s/%s.c -L%s -ltile_rt -Wl,-rpath,%s -lpthread -o %s/prog >> %s/log 2>&1",
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
        const char *kernels[3], *out, *want;
    } cases[] = {
        {{"add", "add", NULL}, NULL, "kernel 'add' is named twice"},
        {{"int", NULL}, NULL, "kernel 'int': the launch function is named after the kernel"},
        {{"tile_malloc", NULL}, NULL, "kernel 'tile_malloc': the launch function"},
        {{"main", NULL}, NULL, "kernel 'main': the launch function"},
        /* the header is included from C++ too */
        {{"class", NULL}, NULL, "kernel 'class': the launch function is named after the kernel, so its name must be a C identifier that is not a C or C++ keyword"},
        /* names the generated C declares for another kernel: it did not compile ("conflicting types") */
        {{"add", "add_aot_unload", NULL}, NULL, "kernel 'add_aot_unload' has the name of a function or table the generated C declares for kernel 'add'"},
        {{"add_ptx_0", "add", NULL}, NULL, "kernel 'add_ptx_0' has the name of a function or table"},
        {{"add", NULL}, "", "names no file"},
        {{"add", NULL}, "a\"b", "may not hold quotes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *msg = NULL, o[700];
        snprintf(o, sizeof o, "%s/%s", dir, cases[i].out ? cases[i].out : "gen");
        cr_expect_eq(tile_aot_export(path, NULL, cases[i].kernels, NULL, o, &msg), TILE_ERROR_INVALID_VALUE, "case %zu", i);
        cr_expect(msg && strstr(msg, cases[i].want), "case %zu: %s", i, msg ? msg : "(no message)");
        free(msg);
    }
    char *msg = NULL;
    const char *none[] = {NULL};
    cr_expect_eq(tile_aot_export(path, NULL, none, NULL, out, &msg), TILE_ERROR_INVALID_VALUE);
    cr_expect(msg && strstr(msg, "no kernel named"), "%s", msg ? msg : "(no message)");
    free(msg);
    snprintf(out, sizeof out, "rm -rf %s", dir);
    cr_expect_eq(system(out), 0);
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
    char stem[600], path[600];
    write_file(dir, "bias.tile", bias_src);
    snprintf(path, sizeof path, "%s/bias.tile", dir);
    snprintf(stem, sizeof stem, "%s/bias_aot", dir);
    const char *kernels[] = {"bias", NULL}, *variants[] = {"b=None n=16", "b=None x=any", NULL};
    char *msg = NULL;
    cr_assert_eq(tile_aot_export(path, NULL, kernels, variants, stem, &msg), TILE_OK, "%s", msg ? msg : "");
    free(msg);
    snprintf(path, sizeof path, "%s/bias_aot.c", dir);
    FILE *f = fopen(path, "r");
    cr_assert(f);
    static char gen[1 << 20];
    size_t len = fread(gen, 1, sizeof gen - 1, f);
    gen[len] = 0;
    fclose(f);
    /* each variant's conditions are what its signature assumes: x=any drops x's alignment, out stays aligned */
    cr_expect(strstr(gen, "if (b == 0 && out % 16 == 0) v = 1;"), "no condition for b=None x=any:\n%.2000s",
              strstr(gen, "int v =") ? strstr(gen, "int v =") : gen);
    cr_expect(strstr(gen, "if (x % 16 == 0 && b == 0 && out % 16 == 0 && n % 16 == 0) v = 0;"), "no condition for b=None n=16");
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
    char stem[600], path[600], cmd[4096];
    write_file(dir, "kw.tile", kw_src);
    snprintf(path, sizeof path, "%s/kw.tile", dir);
    snprintf(stem, sizeof stem, "%s/kw_aot", dir);
    const char *kernels[] = {"scale", NULL}, *variants[] = {"int32_t=16 ctx_=1", NULL};
    char *msg = NULL;
    cr_assert_eq(tile_aot_export(path, NULL, kernels, variants, stem, &msg), TILE_OK, "%s", msg ? msg : "");
    free(msg);
    snprintf(path, sizeof path, "%s/kw_aot.c", dir);
    FILE *f = fopen(path, "r");
    cr_assert(f);
    static char gen[1 << 20];
    size_t len = fread(gen, 1, sizeof gen - 1, f);
    gen[len] = 0;
    fclose(f);
    cr_expect(strstr(gen, "tile_devptr this_, tile_devptr new_, float class_, int32_t int32_t_, int32_t NULL_, int32_t ctx_, int32_t ctx__,"),
              "parameters not renamed:\n%.600s", strstr(gen, "tile_status scale(") ? strstr(gen, "tile_status scale(") : gen);
    cr_expect(strstr(gen, "if (this_ % 16 == 0 && new_ % 16 == 0 && int32_t_ % 16 == 0 && ctx__ == 1) v = 0;"),
              "the variant does not test the renamed parameters:\n%.600s", strstr(gen, "int v =") ? strstr(gen, "int v =") : gen);
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
    char stem[600], path[600];
    snprintf(path, sizeof path, "%s/kernels/add.tile", TILE_SOURCE_DIR);
    snprintf(stem, sizeof stem, "%s/add_aot", dir);
    const char *kernels[] = {"add", NULL}, *variants[] = {"n=16", "x=any y=any out=any", NULL};
    char *msg = NULL;
    cr_assert_eq(tile_aot_export(path, NULL, kernels, variants, stem, &msg), TILE_OK, "%s", msg ? msg : "");
    free(msg);
    build_prog(dir, misaligned_prog, "add_aot");
    run_prog(dir);
}

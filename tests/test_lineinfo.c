/* test_lineinfo.c - `.file`/`.loc` line info, from the compiler to the
 * emulator's reports.
 *
 *   1. The PTX of a small kernel names its .tile file, and the most recent
 *      `.loc` before every global load and store is the load's call and the
 *      store's statement (line and column); ptxas accepts it for sm_80 and
 *      sm_90a (skipped, and said so, only when ptxas is absent).
 *   2. no_line_info: the same PTX without the directives (nothing else moves).
 *   3. Kernels lowered by several workers (their PTX joined) share one
 *      `.file` table: every kernel's locations, resolved to names, are those
 *      of a single-module lowering, an inlined `fn` of an imported file
 *      included.
 *   4. On the emulator, a .tile kernel's out-of-bounds store and load, a
 *      misaligned vector load, a store to freed memory, a race (a barrier
 *      taken out of the Tile IR, as a compiler bug would) and a failing
 *      device_assert report the statement's file:line:col.
 *   5. Hand-written PTX with nvcc's forms (`.file N "name", time, size`,
 *      `.loc F L C, function_name ..., inlined_at F L C`, a .debug section)
 *      parses and runs; its faults, traps and deadlocks name the
 *      file:line:col; so does PTX nvcc writes (when nvcc is installed); bad
 *      directives are located errors. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "include/tile/tile.h"
#include "lang/lang.h"
#include "lower/llvm.h"
#include "lower/passes.h"
#include "runtime/device.h"

/* ---- reading PTX text ---- */

/* The file number and the rest of a `.loc` line, else 0. */
static int loc_of(const char *line, int *l, int *c) {
    int f;
    while (*line == ' ' || *line == '\t') line++;
    if (strncmp(line, ".loc", 4) || (line[4] != ' ' && line[4] != '\t')) return 0;
    if (sscanf(line + 5, "%d %d %d", &f, l, c) != 3) return 0;
    return f;
}

/* Checks every line of ptx holding `needle` against the last `.loc` before it: file 1, line want_line,
 * column want_col.  Returns how many such lines there are. */
static int check_locs(const char *ptx, const char *needle, int want_line, int want_col) {
    int count = 0, f = 0, l = 0, c = 0;
    for (const char *p = ptx; *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
        int ll, cc, ff = loc_of(line, &ll, &cc);
        if (ff) f = ff, l = ll, c = cc;
        else if (strstr(line, needle)) {
            count++;
            cr_expect(f == 1 && l == want_line && c == want_col, "'%s' is at .loc %d %d %d, expected 1 %d %d", line, f, l, c,
                      want_line, want_col);
        }
        p += n + (eol ? 1 : 0);
    }
    return count;
}

static int count_lines(const char *ptx, const char *prefix) {
    int n = 0;
    size_t len = strlen(prefix);
    for (const char *p = ptx; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        while (*p == ' ' || *p == '\t') p++;
        if (!strncmp(p, prefix, len)) n++;
    }
    return n;
}

/* ptx without the line-info lines: .loc, .file, the empty .debug_macinfo section, the labels $L__tmp and $L__func. */
static char *strip_line_info(const char *ptx) {
    Str s = {0};
    for (const char *p = ptx; *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) + 1 : strlen(p);
        const char *q = p;
        while (*q == ' ' || *q == '\t') q++;
        bool drop = !strncmp(q, ".loc\t", 5) || !strncmp(q, ".file\t", 6) || !strncmp(q, ".section\t.debug_macinfo", 23) ||
                    !strncmp(q, "$L__tmp", 7) || !strncmp(q, "$L__func", 8);
        if (!drop) str_putn(&s, p, n);
        p += n;
    }
    return str_take(&s);
}

/* ---- 1, 2: one kernel ---- */
static const char *copy_src = "// line info: the load and the store are found by line and column\n" /* 1 */
                              "kernel k(x: *f32, y: *f32, n: i32) {\n"                          /* 2 */
                              "    let o = program_id(0) * 64 + arange(0, 64);\n"                /* 3 */
                              "    let v = load(x + o, o < n, 0.0);\n"                           /* 4: load at col 13 */
                              "    store(y + o, v * 2.0, o < n);\n"                              /* 5: store at col 5 */
                              "}\n";

Test(lineinfo, ptx_names_the_load_and_store) {
    const char *archs[] = {"sm_80", "sm_90a"};
    for (int a = 0; a < 2; a++) {
        tile_compile_options o = {.size = sizeof o, .arch = archs[a]};
        tile_compiled c;
        cr_assert_eq(tile_compile_source("copy.tile", copy_src, &o, &c), TILE_OK, "%s", c.diagnostics);
        cr_expect_eq(count_lines(c.ptx, ".file"), 1, "%s", c.ptx);
        cr_expect(strstr(c.ptx, "\t.file\t1 \"copy.tile\"\n"), "%s", c.ptx);
        cr_expect_geq(check_locs(c.ptx, "ld.global", 4, 13), 1, "no ld.global in\n%s", c.ptx);
        cr_expect_geq(check_locs(c.ptx, "st.global", 5, 5), 1, "no st.global in\n%s", c.ptx);
        cr_expect(strstr(c.ptx, "\t.loc\t1 2 0\n"), "the kernel's first .loc is its line:\n%s", c.ptx);
        tile_compiled_free(&c);
    }
}

Test(lineinfo, off_drops_only_the_directives) {
    tile_compile_options on = {.size = sizeof on}, off = {.size = sizeof off, .no_line_info = 1};
    tile_compiled a, b;
    cr_assert_eq(tile_compile_source("copy.tile", copy_src, &on, &a), TILE_OK, "%s", a.diagnostics);
    cr_assert_eq(tile_compile_source("copy.tile", copy_src, &off, &b), TILE_OK, "%s", b.diagnostics);
    cr_expect_eq(count_lines(b.ptx, ".file"), 0, "%s", b.ptx);
    cr_expect_eq(count_lines(b.ptx, ".loc"), 0, "%s", b.ptx);
    cr_expect_gt(count_lines(a.ptx, ".loc"), 5, "%s", a.ptx);
    char *stripped = strip_line_info(a.ptx);
    cr_expect_str_eq(stripped, b.ptx, "line info changed the code");
    free(stripped);
    tile_compiled_free(&a);
    tile_compiled_free(&b);
}

/* the compile cache keeps the two apart (the option is part of the key) */
Test(lineinfo, cache_keys_the_option) {
    char dir[] = "/tmp/tile_lineinfo_cacheXXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    tile_compile_options on = {.size = sizeof on}, off = {.size = sizeof off, .no_line_info = 1};
    tile_compiled a, b, c;
    cr_assert_eq(tile_cache_compile_source(dir, "copy.tile", copy_src, &on, &a, NULL), TILE_OK);
    cr_assert_eq(tile_cache_compile_source(dir, "copy.tile", copy_src, &off, &b, NULL), TILE_OK);
    /* the same text under another name: its own .file name, not the first one's */
    cr_assert_eq(tile_cache_compile_source(dir, "other.tile", copy_src, &on, &c, NULL), TILE_OK);
    cr_expect_gt(count_lines(a.ptx, ".loc"), 0);
    cr_expect_eq(count_lines(b.ptx, ".loc"), 0);
    cr_expect(strstr(c.ptx, "\"other.tile\"") && !strstr(c.ptx, "\"copy.tile\""), "%s", c.ptx);
    tile_compiled_free(&a);
    tile_compiled_free(&b);
    tile_compiled_free(&c);
    tile_cache_clear(dir, 1);
    rmdir(dir);
}

/* ---- 3: several workers, an import ---- */
static const char *helper_src = "// a helper in another file\n"
                                "fn twice_plus_one(v) {\n"
                                "    return v * 2.0 + 1.0;\n" /* 3 */
                                "}\n";
static const char *helper2_src = "fn halve(v) {\n"
                                 "    return v * 0.5;\n" /* 2 */
                                 "}\n";
/* Four kernels for three workers (a and d together): a uses helper.tile first, b helper2.tile first,
 * so their modules number the two files differently and the join must renumber. */
static const char *multi_src = "import \"helper.tile\";\n"
                               "import \"helper2.tile\";\n"
                               "kernel a(x: *f32, y: *f32, n: i32) {\n"
                               "    let o = program_id(0) * 64 + arange(0, 64);\n"
                               "    store(y + o, halve(twice_plus_one(load(x + o, o < n, 0.0))), o < n);\n"
                               "}\n"
                               "kernel b(x: *f32, y: *f32, n: i32) {\n"
                               "    let o = program_id(0) * 32 + arange(0, 32);\n"
                               "    let v = load(x + o, o < n, 0.0);\n"
                               "    store(y + o, twice_plus_one(halve(v)) * 3.0, o < n);\n"
                               "}\n"
                               "kernel c(x: *f32, n: i32) {\n"
                               "    let o = arange(0, 16);\n"
                               "    store(x + o, twice_plus_one(o as f32), o < n);\n"
                               "}\n"
                               "kernel d(x: *i32) {\n"
                               "    store(x + arange(0, 32), arange(0, 32));\n"
                               "}\n";

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* Per kernel, its .loc lines resolved through the .file table: "kernel|name:line:col|name:line:col...". */
static char *resolved(const char *ptx) {
    char names[16][512];
    memset(names, 0, sizeof names);
    int nnames = 0;
    /* the table: numbers must be unique */
    for (const char *p = ptx; *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        int num;
        char name[512];
        if (sscanf(p, "\t.file\t%d \"%511[^\"]\"", &num, name) == 2) {
            cr_assert(num >= 1 && num < 16, ".file %d", num);
            cr_assert_eq(names[num][0], 0, ".file %d declared twice:\n%s", num, ptx);
            for (int k = 1; k <= nnames; k++) cr_assert(strcmp(names[k], name), "\"%s\" declared twice:\n%s", name, ptx);
            while (nnames < num) names[++nnames][0] = 0;
            snprintf(names[num], sizeof names[num], "%s", name);
        }
        p += n + (eol ? 1 : 0);
    }
    Str s = {0};
    for (const char *p = ptx; *p;) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        char line[512], kname[128];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
        int l, c, f = loc_of(line, &l, &c);
        if (sscanf(line, ".visible .entry %127[a-z_0-9]", kname) == 1) str_printf(&s, "\n%s", kname);
        if (f) {
            cr_assert(f <= nnames && names[f][0], ".loc names file %d, which no .file declares:\n%s", f, ptx);
            const char *base = strrchr(names[f], '/');
            str_printf(&s, "|%s:%d:%d", base ? base + 1 : names[f], l, c);
        }
        p += n + (eol ? 1 : 0);
    }
    return str_take(&s);
}

/* the kernels' lines of `all` sorted, so the order the workers joined them in does not matter */
static char *sorted_kernels(char *all) {
    char *lines[16];
    int n = 0;
    for (char *p = strtok(all, "\n"); p && n < 16; p = strtok(NULL, "\n")) lines[n++] = p;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (strcmp(lines[j], lines[i]) < 0) {
                char *t = lines[i];
                lines[i] = lines[j];
                lines[j] = t;
            }
    Str s = {0};
    for (int i = 0; i < n; i++) str_printf(&s, "%s\n", lines[i]);
    return str_take(&s);
}

Test(lineinfo, joined_workers_share_one_file_table) {
    char dir[] = "/tmp/tile_lineinfo_joinXXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char hpath[256], mpath[256];
    snprintf(hpath, sizeof hpath, "%s/helper.tile", dir);
    snprintf(mpath, sizeof mpath, "%s/multi.tile", dir);
    write_file(hpath, helper_src);
    write_file(mpath, multi_src);
    char h2path[256];
    snprintf(h2path, sizeof h2path, "%s/helper2.tile", dir);
    write_file(h2path, helper2_src);
    Arena *a = arena_new();
    Diag d;
    diag_init(&d);
    SrcFile src = {mpath, multi_src, strlen(multi_src)};
    LangOptions lo = {.num_sms = 132};
    Module *m = lang_compile(a, &src, &lo, &d);
    Str e = {0};
    diag_render(&d, &e);
    cr_assert(m && !d.nerrors, "%s", e.buf ? e.buf : "");
    str_free(&e);
    m->arch = "sm_80";
    PipelineOptions po = {.verify = true};
    cr_assert(tir_run_pipeline(m, &po, &d));
    char *text[2];
    for (int w = 0; w < 2; w++) {
        /* one module, then three workers for four kernels (joined) */
        LlvmOptions o = {.arch = "sm_80", .run_o3 = true, .line_info = true, .threads = w ? 3 : 1};
        LlvmResult r = {0};
        cr_assert(llvm_lower_module(m, &o, &r, &d));
        text[w] = r.ptx;
    }
    cr_expect_eq(count_lines(text[1], ".file"), 3, "%s", text[1]);
    cr_expect_eq(count_lines(text[1], ".section"), 1, "%s", text[1]);
    cr_expect_eq(count_lines(text[1], ".version"), 1, "%s", text[1]);
    char *r0 = resolved(text[0]), *r1 = resolved(text[1]);
    char *s0 = sorted_kernels(r0), *s1 = sorted_kernels(r1);
    cr_expect_str_eq(s1, s0, "joined:\n%s\nsingle module:\n%s", text[1], text[0]);
    /* the inlined fns' code is at their statements in helper.tile (in a, b, c) and helper2.tile (in a, b) */
    int helper = 0, helper2 = 0;
    for (char *p = s1; (p = strstr(p, "|helper.tile:3:")); p++) helper++;
    for (char *p = s1; (p = strstr(p, "|helper2.tile:2:")); p++) helper2++;
    cr_expect_geq(helper, 3, "%s", s1);
    cr_expect_geq(helper2, 2, "%s", s1);
    cr_expect(strstr(s1, "d|multi.tile:16:0"), "%s", s1);
    free(r0), free(r1), free(s0), free(s1);
    /* ptxas takes the joined text */
    char ppath[256], cmd[1024];
    snprintf(ppath, sizeof ppath, "%s/joined.ptx", dir);
    write_file(ppath, text[1]);
    const char *ptxas = access("/usr/local/cuda/bin/ptxas", X_OK) == 0 ? "/usr/local/cuda/bin/ptxas"
                        : system("command -v ptxas >/dev/null 2>&1") == 0 ? "ptxas" : NULL;
    if (ptxas) {
        snprintf(cmd, sizeof cmd, "%s -arch=sm_80 %s -o /dev/null 2>&1", ptxas, ppath);
        cr_expect_eq(system(cmd), 0, "ptxas rejects the joined PTX:\n%s", text[1]);
    }
    free(text[0]), free(text[1]);
    diag_free(&d);
    arena_free(a);
    unlink(hpath), unlink(h2path), unlink(mpath), unlink(ppath);
    rmdir(dir);
    if (!ptxas) cr_skip("ptxas not found: the joined PTX was checked but NOT assembled");
}

/* ptxas assembles line info for both targets (a multi-kernel file with an import: the joined text) */
Test(lineinfo, ptxas_accepts_line_info) {
    char dir[] = "/tmp/tile_lineinfo_ptxasXXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char hpath[256], mpath[256];
    snprintf(hpath, sizeof hpath, "%s/helper.tile", dir);
    snprintf(mpath, sizeof mpath, "%s/multi.tile", dir);
    write_file(hpath, helper_src);
    write_file(mpath, multi_src);
    char h2path[256];
    snprintf(h2path, sizeof h2path, "%s/helper2.tile", dir);
    write_file(h2path, helper2_src);
    const char *archs[] = {"sm_80", "sm_90a"};
    bool missing = false;
    for (int k = 0; k < 2; k++) {
        tile_compile_options o = {.size = sizeof o, .arch = archs[k], .want_cubin = 1};
        tile_compiled c;
        tile_status st = tile_compile_file(mpath, &o, &c);
        cr_expect_eq(st, TILE_OK, "%s: %s", archs[k], c.diagnostics);
        cr_expect_gt(count_lines(c.ptx, ".loc"), 10);
        if (c.ptxas_missing) missing = true;
        else cr_expect(c.cubin && c.cubin_size > 0, "%s: no cubin", archs[k]);
        tile_compiled_free(&c);
    }
    unlink(hpath), unlink(h2path), unlink(mpath);
    rmdir(dir);
    if (missing) cr_skip("ptxas not found: line info was NOT assembled");
}

/* ---- 4: reports of .tile kernels on the emulator ---- */
static const char *oob_src = "// out of bounds on purpose\n"
                             "kernel st(y: *f32) {\n"
                             "    let o = program_id(0) * 64 + arange(0, 64);\n"
                             "    store(y + o, o as f32);\n" /* 4:5: no mask */
                             "}\n"
                             "kernel ld(x: *f32, y: *f32, n: i32) {\n"
                             "    let o = arange(0, 64);\n"
                             "    let v = load(x + o);\n" /* 8:13: no mask */
                             "    store(y + o, v + 1.0, o < n);\n" /* v used as a float: the load keeps its location (a bare copy
                                                                  becomes an integer load InstCombine makes at the store) */
                             "}\n"
                             "@num_warps(1)\n"
                             "kernel st2(y: *f32) {\n"
                             "    let o = program_id(0) * 64 + arange(0, 64);\n"
                             "    store(y + o, o as f32);\n" /* 14:5: no mask, two elements a thread */
                             "}\n";

static tile_status launch(tile_context *ctx, tile_kernel *k, unsigned grid, void **args) {
    tile_status st = tile_launch(k, (tile_dim3){grid, 1, 1}, args, NULL);
    return st != TILE_OK ? st : tile_stream_synchronize(ctx, NULL);
}

Test(lineinfo, memcheck_names_the_statement) {
    tile_context *ctx;
    tile_context_options co = {.size = sizeof co, .device = "emu", .no_disk_cache = 1, .emu_host_threads = 1};
    cr_assert_eq(tile_context_create_ex(&co, &ctx), TILE_OK);
    tile_module *m;
    cr_assert_eq(tile_module_load_source_ex(ctx, "oob.tile", oob_src, NULL, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *kst, *kld;
    cr_assert_eq(tile_module_get_kernel(m, "st", &kst), TILE_OK);
    cr_assert_eq(tile_module_get_kernel(m, "ld", &kld), TILE_OK);
    /* 100 floats; two programs of 64 write 128 */
    tile_devptr x, y;
    cr_assert_eq(tile_malloc(ctx, 100 * 4, &x), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 100 * 4, &y), TILE_OK);
    void *a1[] = {&y};
    cr_assert_eq(launch(ctx, kst, 2, a1), TILE_ERROR_LAUNCH);
    const char *e = tile_last_error(ctx);
    cr_expect(strstr(e, "memcheck: invalid __global__ write of size"), "%s", e);
    cr_expect(strstr(e, "at oob.tile:4:5 in kernel 'st', PTX line "), "%s", e);
    cr_expect(strstr(e, "st.global"), "%s", e);
    /* 127 floats: only the last element of the last thread's vector of two lies past the end (an access that
     * starts inside the allocation and runs 4 bytes past it); reported as well (it was taken for the tail word
     * LLVM's sub-word atomics use) */
    tile_devptr z;
    tile_kernel *kst2;
    cr_assert_eq(tile_module_get_kernel(m, "st2", &kst2), TILE_OK);
    cr_assert_eq(tile_malloc(ctx, 127 * 4, &z), TILE_OK);
    void *a3[] = {&z};
    cr_assert_eq(launch(ctx, kst2, 2, a3), TILE_ERROR_LAUNCH);
    e = tile_last_error(ctx);
    cr_expect(strstr(e, "memcheck: invalid __global__ write of size 8") && strstr(e, "at oob.tile:14:5"), "%s", e);
    /* the load of the second kernel: 64 floats from a 100-float buffer shifted by 40 */
    tile_devptr xs = x + 40 * 4;
    int n = 64;
    void *a2[] = {&xs, &y, &n};
    cr_assert_eq(launch(ctx, kld, 1, a2), TILE_ERROR_LAUNCH);
    e = tile_last_error(ctx);
    cr_expect(strstr(e, "memcheck: invalid __global__ read of size"), "%s", e);
    cr_expect(strstr(e, "at oob.tile:8:13 in kernel 'ld', PTX line "), "%s", e);
    tile_module_unload(m);
    /* without line info the report is as before: kernel and PTX line */
    tile_compile_options off = {.size = sizeof off, .no_line_info = 1};
    cr_assert_eq(tile_module_load_source_ex(ctx, "oob.tile", oob_src, &off, &m), TILE_OK, "%s", tile_last_error(ctx));
    cr_assert_eq(tile_module_get_kernel(m, "st", &kst), TILE_OK);
    cr_assert_eq(launch(ctx, kst, 2, a1), TILE_ERROR_LAUNCH);
    e = tile_last_error(ctx);
    cr_expect(strstr(e, "    at kernel 'st', PTX line ") && !strstr(e, "oob.tile"), "%s", e);
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

/* Source names with a quote, a backslash, a space and non-ASCII bytes: the PTX assembles (a quote was written
 * `\"`, which ends ptxas's string: "a bug in tile") and the emulator's reports name the file as it was given
 * (they showed LLVM's escapes, `jos\303\251` for `josé`, `b\\s` for `b\s`). */
Test(lineinfo, file_names_with_quotes_and_utf8) {
    static const char *const names[] = {"q\"x.tile", "b\\s.tile", "/home/jos\xc3\xa9/my k\xc3\xa9rnel.tile", "t\"a\\b\".tile"};
    tile_context *ctx;
    tile_context_options co = {.size = sizeof co, .device = "emu", .no_disk_cache = 1, .emu_host_threads = 1};
    cr_assert_eq(tile_context_create_ex(&co, &ctx), TILE_OK);
    tile_devptr y;
    cr_assert_eq(tile_malloc(ctx, 100 * 4, &y), TILE_OK);
    bool missing = false;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        tile_module *m;
        cr_assert_eq(tile_module_load_source_ex(ctx, names[i], oob_src, NULL, &m), TILE_OK, "%s: %s", names[i], tile_last_error(ctx));
        tile_kernel *k;
        cr_assert_eq(tile_module_get_kernel(m, "st", &k), TILE_OK);
        void *a[] = {&y};
        cr_assert_eq(launch(ctx, k, 2, a), TILE_ERROR_LAUNCH);
        char want[256];
        snprintf(want, sizeof want, "    at %s:4:5 in kernel 'st', PTX line ", names[i]);
        cr_expect(strstr(tile_last_error(ctx), want), "want '%s' in:\n%s", want, tile_last_error(ctx));
        tile_module_unload(m);
        tile_compile_options o = {.size = sizeof o, .arch = i % 2 ? "sm_90a" : "sm_80", .want_cubin = 1};
        tile_compiled c;
        cr_expect_eq(tile_compile_source(names[i], oob_src, &o, &c), TILE_OK, "%s: %s", names[i], c.diagnostics);
        if (c.ptxas_missing) missing = true;
        tile_compiled_free(&c);
    }
    tile_context_destroy(ctx);
    if (missing) cr_skip("ptxas not found: the names were checked on the emulator but NOT assembled");
}

/* A cross-warp sum then a cross-warp max: both go through the same scratch, so the barrier pass puts a
 * barrier between the sum's reads and the max's writes.  Taken out (as a compiler bug would), the
 * racecheck report names both statements. */
static const char *race_src = "kernel k(x: *f32, y: *f32) {\n"
                              "    let v = load(x + arange(0, 128));\n"
                              "    let s = sum(v, 0);\n" /* 3:13 */
                              "    let m = max(v, 0);\n" /* 4:13 */
                              "    store(y, s + m);\n"
                              "}\n";

static int remove_barriers(Block *b) {
    int n = 0;
    for (Inst *i = b->first, *next; i; i = next) {
        next = i->next;
        for (int r = 0; r < i->nregions; r++) n += remove_barriers(i->regions[r]);
        if (i->op == OP_BARRIER) tir_inst_remove(i), n++;
    }
    return n;
}

/* race_src through the pipeline and LLVM, with (or without) the barrier pass's barriers */
static char *race_ptx(bool barriers) {
    Arena *a = arena_new();
    Diag d;
    diag_init(&d);
    SrcFile src = {"race.tile", race_src, strlen(race_src)};
    LangOptions lo = {.num_sms = 132};
    Module *m = lang_compile(a, &src, &lo, &d);
    cr_assert(m && !d.nerrors);
    m->arch = "sm_80";
    PipelineOptions po = {.verify = true};
    cr_assert(tir_run_pipeline(m, &po, &d));
    if (!barriers) cr_assert_geq(remove_barriers(m->funcs[0]->body), 1, "the barrier pass put no barrier in");
    LlvmOptions o = {.arch = "sm_80", .run_o3 = true, .line_info = true};
    LlvmResult r = {0};
    cr_assert(llvm_lower_module(m, &o, &r, &d));
    diag_free(&d);
    arena_free(a);
    return r.ptx;
}

static DevStatus run_race(const char *ptx, float *out, char **msg) {
    TileDevice *dev;
    DevOptions o = {.emu_racecheck = true, .emu_host_threads = 1};
    char *err = NULL;
    cr_assert_eq(dev_open("emu", &o, &dev, &err), DEV_OK, "%s", err ? err : "");
    TileDevModule *mod;
    TileDevFunction *fn;
    cr_assert_eq(dev_module_load_ptx(dev, ptx, &mod), DEV_OK, "%s", dev_last_error(dev));
    cr_assert_eq(dev_module_get_function(mod, "k", &fn), DEV_OK);
    float x[128];
    for (int i = 0; i < 128; i++) x[i] = (float)((i * 37) % 101) - 50.0f;
    uint64_t dx, dy;
    cr_assert_eq(dev_malloc(dev, sizeof x, &dx), DEV_OK);
    cr_assert_eq(dev_malloc(dev, 4, &dy), DEV_OK);
    cr_assert_eq(dev_memcpy_htod(dev, dx, x, sizeof x), DEV_OK);
    cr_assert_eq(dev_memset_d8(dev, dy, 0xff, 4), DEV_OK);
    void *params[] = {&dx, &dy};
    DevStatus s = dev_launch(fn, 1, 1, 1, 128, 1, 1, 0, NULL, params);
    if (s == DEV_OK) s = dev_synchronize(dev);
    *msg = strdup(s == DEV_OK ? "" : dev_last_error(dev));
    if (s == DEV_OK) cr_assert_eq(dev_memcpy_dtoh(dev, out, dy, 4), DEV_OK);
    dev_module_unload(mod);
    dev_close(dev);
    return s;
}

Test(lineinfo, racecheck_names_both_statements) {
    /* with its barriers the kernel is right: sum + max of the inputs */
    char *ptx = race_ptx(true), *msg;
    float got = 0;
    cr_assert_eq(run_race(ptx, &got, &msg), DEV_OK, "%s", msg);
    double s = 0, mx = -1e30;
    for (int i = 0; i < 128; i++) {
        double v = (double)((i * 37) % 101) - 50.0;
        s += v;
        if (v > mx) mx = v;
    }
    cr_expect_eq((double)got, s + mx, "got %g, expected %g", got, s + mx);
    free(msg);
    free(ptx);
    /* without: max's writes race with sum's reads */
    ptx = race_ptx(false);
    cr_assert_neq(run_race(ptx, &got, &msg), DEV_OK);
    cr_expect(strstr(msg, "racecheck: shared-memory hazard (write after read)"), "%s", msg);
    cr_expect(strstr(msg, "at race.tile:4:13 in kernel 'k', PTX line "), "%s", msg);
    cr_expect(strstr(msg, "conflicts with ") && strstr(msg, " at race.tile:3:13, PTX line "), "%s", msg);
    free(msg);
    free(ptx);
}

static const char *assert_src = "kernel k(x: *i32, n: i32) {\n"
                                "    let o = program_id(0) * 32 + arange(0, 32);\n"
                                "    let v = load(x + o, o < n, 0);\n"
                                "    device_assert(v != 7, \"no sevens\");\n" /* 4:5 */
                                "    store(x + o, v + 1, o < n);\n"
                                "}\n";

Test(lineinfo, device_assert_names_the_statement) {
    tile_context *ctx;
    tile_context_options co = {.size = sizeof co, .device = "emu", .no_disk_cache = 1, .emu_host_threads = 1};
    cr_assert_eq(tile_context_create_ex(&co, &ctx), TILE_OK);
    tile_compile_options o = {.size = sizeof o, .debug = 1};
    tile_module *m;
    cr_assert_eq(tile_module_load_source_ex(ctx, "assert.tile", assert_src, &o, &m), TILE_OK, "%s", tile_last_error(ctx));
    tile_kernel *k;
    cr_assert_eq(tile_module_get_kernel(m, "k", &k), TILE_OK);
    int n = 50, h[64];
    for (int i = 0; i < 64; i++) h[i] = i == 39 ? 7 : 100 + i;
    tile_devptr x;
    cr_assert_eq(tile_malloc(ctx, sizeof h, &x), TILE_OK);
    cr_assert_eq(tile_memcpy_htod(ctx, x, h, sizeof h), TILE_OK);
    void *args[] = {&x, &n};
    cr_assert_eq(launch(ctx, k, 2, args), TILE_ERROR_LAUNCH);
    const char *e = tile_last_error(ctx);
    cr_expect(strstr(e, "assertion failed"), "%s", e);
    cr_expect(strstr(e, "at assert.tile:4:5 in kernel 'k', PTX line "), "%s", e);
    cr_expect(strstr(e, "assert.tile:4: k: Assertion `no sevens` failed."), "%s", e);
    cr_expect(strstr(e, "by thread (7,0,0) in block (1,0,0)"), "%s", e); /* element 39 */
    tile_module_unload(m);
    tile_context_destroy(ctx);
}

/* ---- 5: hand-written PTX in nvcc's style ---- */
static const char *nvcc_ptx =
    "//\n"
    "// Generated by NVIDIA NVVM Compiler (hand-written in its style)\n"
    "//\n"
    ".version 8.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry scale(\n"
    "\t.param .u64 scale_param_0,\n"
    "\t.param .u32 scale_param_1\n"
    ")\n"
    "{\n"
    "\t.reg .pred %p<2>;\n"
    "\t.reg .b32 %r<6>;\n"
    "\t.reg .f32 %f<3>;\n"
    "\t.reg .b64 %rd<4>;\n"
    "$L__func_begin0:\n"
    "\t.loc\t1 10 0\n"
    "\tld.param.u64 %rd1, [scale_param_0];\n"
    "\tld.param.u32 %r2, [scale_param_1];\n"
    "\t.loc\t1 12 13, function_name $L__info_string0, inlined_at 1 10 0\n"
    "\tmov.u32 %r3, %tid.x;\n"
    "\tsetp.eq.s32 %p1, %r3, 13;\n"
    "\t.loc\t1 13 3\n"
    "\t@%p1 trap;\n"
    "\tmul.wide.u32 %rd2, %r3, 4;\n"
    "\tadd.s64 %rd3, %rd1, %rd2;\n"
    "\t.loc\t2 7 21\n"
    "\tld.global.f32 %f1, [%rd3];\n"
    "\tmul.f32 %f2, %f1, 0f40400000;\n"
    "\t.loc 2 8 9\n"
    "\tst.global.f32 [%rd3], %f2;\n"
    "\t.loc\t1 0 0\n"
    "\tret;\n"
    "$L__func_end0:\n"
    "}\n"
    "\t.file\t1 \"/home/user/scale.cu\", 1700000000, 812\n"
    "\t.file\t2 \"/home/user/scale.cuh\"\n"
    "\t.section\t.debug_str\n"
    "\t{\n"
    "$L__info_string0:\n"
    "\t.b8 95,90,53,115,99,97,108,101,0\n"
    "\t}\n";

/* nvcc_ptx with `from` replaced by `to` (malloc'd) */
static char *edited(const char *from, const char *to) {
    const char *p = strstr(nvcc_ptx, from);
    cr_assert_not_null(p, "%s", from);
    Str s = {0};
    str_putn(&s, nvcc_ptx, (size_t)(p - nvcc_ptx));
    str_puts(&s, to);
    str_puts(&s, p + strlen(from));
    return str_take(&s);
}

Test(lineinfo, nvcc_style_loc_parses_runs_and_reports) {
    TileDevice *dev;
    char *err = NULL;
    cr_assert_eq(dev_open("emu", NULL, &dev, &err), DEV_OK, "%s", err ? err : "");
    TileDevModule *mod;
    TileDevFunction *fn;
    cr_assert_eq(dev_module_load_ptx(dev, nvcc_ptx, &mod), DEV_OK, "%s", dev_last_error(dev));
    cr_assert_eq(dev_module_get_function(mod, "scale", &fn), DEV_OK);
    /* 13 threads: x *= 3 for each (thread 13 would trap) */
    float h[16];
    for (int i = 0; i < 16; i++) h[i] = 0.5f * (float)i - 2.0f;
    uint64_t dx;
    cr_assert_eq(dev_malloc(dev, sizeof h, &dx), DEV_OK);
    cr_assert_eq(dev_memcpy_htod(dev, dx, h, sizeof h), DEV_OK);
    int n = 0;
    void *params[] = {&dx, &n};
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 13, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(dev));
    float got[16];
    cr_assert_eq(dev_memcpy_dtoh(dev, got, dx, sizeof got), DEV_OK);
    for (int i = 0; i < 16; i++)
        cr_expect_eq(got[i], i < 13 ? 3.0f * h[i] : h[i], "x[%d] = %g", i, got[i]);
    /* thread 13 traps: the report names scale.cu:13:3 */
    cr_assert_neq(dev_launch(fn, 1, 1, 1, 14, 1, 1, 0, NULL, params), DEV_OK);
    const char *e = dev_last_error(dev);
    cr_expect(strstr(e, "trap") && strstr(e, "at /home/user/scale.cu:13:3 in kernel 'scale', PTX line 25: @%p1 trap;"), "%s", e);
    /* an out-of-bounds load: scale.cuh:7:21 (the second file) */
    uint64_t shifted = dx + 4 * 8;
    void *p2[] = {&shifted, &n};
    cr_assert_neq(dev_launch(fn, 1, 1, 1, 12, 1, 1, 0, NULL, p2), DEV_OK);
    e = dev_last_error(dev);
    cr_expect(strstr(e, "memcheck: invalid __global__ read") && strstr(e, "at /home/user/scale.cuh:7:21 in kernel 'scale', PTX line 29"),
              "%s", e);
    dev_module_unload(mod);

    /* bad directives are located errors */
    struct { const char *from, *to, *want; } bad[] = {
        {"\t.loc\t2 7 21\n", "\t.loc\t2\n", "ptx:28: bad .loc directive: expected a file number, a line and a column"},
        {"\t.loc\t2 7 21\n", "\t.loc\t2 x 21\n", "ptx:28: bad .loc directive: expected a file number, a line and a column"},
        {"\t.file\t2 \"/home/user/scale.cuh\"\n", "\t.file\t2 scale.cuh\n", "ptx:38: bad .file directive: expected the file name in quotes"},
        {"\t.file\t2 \"/home/user/scale.cuh\"\n", "\t.file\t1 \"/elsewhere.cu\"\n", "ptx:38: .file 1 declared twice"},
        {"\t.file\t2 \"/home/user/scale.cuh\"\n", "\t.file\t\"x.cu\"\n", "ptx:38: bad .file directive: expected a file number"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char *ptx = edited(bad[k].from, bad[k].to);
        cr_expect_neq(dev_module_load_ptx(dev, ptx, &mod), DEV_OK, "accepted:\n%s", ptx);
        cr_expect(strstr(dev_last_error(dev), bad[k].want), "'%s' for:\n%s", dev_last_error(dev), bad[k].to);
        free(ptx);
    }
    /* a .loc whose file no .file declares loads, as ptxas takes it (it was a load error): reports give the file's
     * number */
    char *ptx3 = edited("\t.loc\t2 7 21\n", "\t.loc\t3 7 21\n");
    cr_assert_eq(dev_module_load_ptx(dev, ptx3, &mod), DEV_OK, "%s", dev_last_error(dev));
    cr_assert_eq(dev_module_get_function(mod, "scale", &fn), DEV_OK);
    cr_assert_neq(dev_launch(fn, 1, 1, 1, 12, 1, 1, 0, NULL, p2), DEV_OK);
    e = dev_last_error(dev);
    cr_expect(strstr(e, "memcheck: invalid __global__ read") && strstr(e, "at <file 3>:7:21 in kernel 'scale', PTX line 29"), "%s", e);
    dev_module_unload(mod);
    free(ptx3);
    dev_close(dev);
}

/* Two instructions on one PTX line, each after its own .loc: each report names its instruction's location (the
 * location was kept per PTX line, and both named the last .loc of the line, scale.cuh:7:21); a third with the
 * second's location shares it, and an instruction after `.loc 1 0 0` on the line has none. */
Test(lineinfo, one_line_two_locs_each_reports_its_own) {
    TileDevice *dev;
    char *err = NULL;
    cr_assert_eq(dev_open("emu", NULL, &dev, &err), DEV_OK, "%s", err ? err : "");
    static const char *from = "\t.loc\t1 13 3\n\t@%p1 trap;\n\tmul.wide.u32 %rd2, %r3, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n"
                              "\t.loc\t2 7 21\n\tld.global.f32 %f1, [%rd3];\n\tmul.f32 %f2, %f1, 0f40400000;\n";
    static const char *to = "\t.loc\t1 13 3\n\tmul.wide.u32 %rd2, %r3, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n"
                            "\t@%p1 trap; .loc 2 7 21 ld.global.f32 %f1, [%rd3]; mul.f32 %f2, %f1, 0f40400000; .loc 1 0 0 "
                            "ld.global.f32 %f1, [%rd3+-16];\n\n";
    char *ptx = edited(from, to);
    TileDevModule *mod;
    TileDevFunction *fn;
    cr_assert_eq(dev_module_load_ptx(dev, ptx, &mod), DEV_OK, "%s", dev_last_error(dev));
    cr_assert_eq(dev_module_get_function(mod, "scale", &fn), DEV_OK);
    /* 32 floats; thread i reads [base + 4i] (scale.cuh:7:21), then [base + 4i - 16] (no location) */
    uint64_t dx, base = 0;
    cr_assert_eq(dev_malloc(dev, 32 * 4, &dx), DEV_OK);
    cr_assert_eq(dev_memset_d8(dev, dx, 0, 32 * 4), DEV_OK);
    int n = 0;
    void *params[] = {&base, &n};
    base = dx + 16; /* every access in bounds: thread 13 traps */
    cr_assert_neq(dev_launch(fn, 1, 1, 1, 14, 1, 1, 0, NULL, params), DEV_OK);
    const char *e = dev_last_error(dev);
    cr_expect(strstr(e, "trap") && strstr(e, "at /home/user/scale.cu:13:3 in kernel 'scale', PTX line 27: @%p1 trap; .loc"), "%s", e);
    base = dx + 80; /* thread 12's first load reads [dx + 128]: out of bounds */
    cr_assert_neq(dev_launch(fn, 1, 1, 1, 13, 1, 1, 0, NULL, params), DEV_OK);
    e = dev_last_error(dev);
    cr_expect(strstr(e, "memcheck: invalid __global__ read") && strstr(e, "at /home/user/scale.cuh:7:21 in kernel 'scale', PTX line 27"),
              "%s", e);
    base = dx; /* thread 0's second load reads [dx - 16]: out of bounds, after .loc 1 0 0 */
    cr_assert_neq(dev_launch(fn, 1, 1, 1, 13, 1, 1, 0, NULL, params), DEV_OK);
    e = dev_last_error(dev);
    cr_expect(strstr(e, "memcheck: invalid __global__ read") && strstr(e, "at kernel 'scale', PTX line 27"), "%s", e);
    dev_module_unload(mod);
    dev_free(dev, dx);
    free(ptx);
    dev_close(dev);
}

/* tile compile: line info by default, --no-line-info without */
static char *cli_output(const char *args) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' compile --no-cache %s 2>&1", TILE_CLI, args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    Str s = {0};
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) str_putn(&s, buf, n);
    cr_assert_eq(pclose(p), 0, "%s: %s", cmd, s.buf ? s.buf : "");
    return str_take(&s);
}

Test(lineinfo, cli_no_line_info) {
    char *on = cli_output(TILE_SOURCE_DIR "/kernels/add.tile"), *off = cli_output("--no-line-info " TILE_SOURCE_DIR "/kernels/add.tile");
    cr_expect(strstr(on, "\t.file\t1 \"" TILE_SOURCE_DIR "/kernels/add.tile\"\n"), "%s", on);
    cr_expect_gt(count_lines(on, ".loc"), 5, "%s", on);
    cr_expect_eq(count_lines(off, ".loc") + count_lines(off, ".file"), 0, "%s", off);
    char *stripped = strip_line_info(on);
    cr_expect_str_eq(stripped, off);
    free(stripped), free(on), free(off);
}

/* PTX that nvcc writes with line info (-lineinfo -O3, and -G) loads, runs, and its memcheck report names
 * the .cu file:line:col.  Skipped, and said so, without nvcc. */
static const char *cuda_src = "__device__ __forceinline__ float twice(float v) {\n"
                              "    return v * 2.0f;\n"
                              "}\n"
                              "extern \"C\" __global__ void scale(float *x, int n) {\n"
                              "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                              "    if (i < n)\n"
                              "        x[i] = twice(x[i]) + 1.0f;\n" /* 7:9 */
                              "}\n";

Test(lineinfo, nvcc_lineinfo_ptx_runs_and_reports) {
    const char *nvcc = access("/usr/local/cuda/bin/nvcc", X_OK) == 0 ? "/usr/local/cuda/bin/nvcc"
                       : system("command -v nvcc >/dev/null 2>&1") == 0 ? "nvcc" : NULL;
    if (!nvcc) cr_skip_test("nvcc not found: nvcc's line info NOT checked (the hand-written nvcc-style test still runs)");
    char dir[] = "/tmp/tile_lineinfo_nvccXXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char cu[256], ptx[256], cmd[1024];
    snprintf(cu, sizeof cu, "%s/scale.cu", dir);
    snprintf(ptx, sizeof ptx, "%s/scale.ptx", dir);
    write_file(cu, cuda_src);
    const char *flags[] = {"-lineinfo -O3", "-G"};
    for (int v = 0; v < 2; v++) {
        snprintf(cmd, sizeof cmd, "'%s' -ptx -arch=sm_80 %s '%s' -o '%s' 2>&1", nvcc, flags[v], cu, ptx);
        cr_assert_eq(system(cmd), 0, "%s", cmd);
        FILE *f = fopen(ptx, "r");
        cr_assert_not_null(f);
        Str text = {0};
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0) str_putn(&text, buf, n);
        fclose(f);
        cr_expect_gt(count_lines(text.buf, ".loc"), 3, "%s", text.buf);
        TileDevice *dev;
        char *err = NULL;
        cr_assert_eq(dev_open("emu", NULL, &dev, &err), DEV_OK, "%s", err ? err : "");
        TileDevModule *mod;
        TileDevFunction *fn;
        cr_assert_eq(dev_module_load_ptx(dev, text.buf, &mod), DEV_OK, "%s: %s", flags[v], dev_last_error(dev));
        cr_assert_eq(dev_module_get_function(mod, "scale", &fn), DEV_OK);
        float h[40], got[40];
        for (int i = 0; i < 40; i++) h[i] = 0.25f * (float)i - 3.0f;
        uint64_t dx;
        cr_assert_eq(dev_malloc(dev, sizeof h, &dx), DEV_OK);
        cr_assert_eq(dev_memcpy_htod(dev, dx, h, sizeof h), DEV_OK);
        int cnt = 37;
        void *params[] = {&dx, &cnt};
        cr_assert_eq(dev_launch(fn, 2, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(dev));
        cr_assert_eq(dev_memcpy_dtoh(dev, got, dx, sizeof got), DEV_OK);
        for (int i = 0; i < 40; i++) cr_expect_eq(got[i], i < 37 ? 2.0f * h[i] + 1.0f : h[i], "%s: x[%d] = %g", flags[v], i, got[i]);
        cnt = 64; /* past the 40 floats */
        cr_assert_neq(dev_launch(fn, 2, 1, 1, 32, 1, 1, 0, NULL, params), DEV_OK);
        const char *e = dev_last_error(dev);
        char want[512];
        snprintf(want, sizeof want, "at %s:7:9 in kernel 'scale', PTX line ", cu);
        cr_expect(strstr(e, "memcheck: invalid __global__ read") && strstr(e, want), "%s: %s", flags[v], e);
        dev_module_unload(mod);
        dev_close(dev);
        str_free(&text);
    }
    unlink(cu), unlink(ptx);
    rmdir(dir);
}

/* A lowering that fails half-way (an op LLVM lowering refuses) with line info on: a located error,
 * and the debug-info builder is finalized and freed on the cleanup path (no leak, no crash). */
Test(lineinfo, failed_lowering_cleans_up) {
    const char *text = "kernel @k(%p: ptr<i16> #div16) num_warps=1 num_stages=1 {\n"
                       "  %0 = const {value=1} : i16\n"
                       "  %1 = atomic_rmw %p, %0 {kind=add} : i16\n"
                       "  return\n"
                       "}\n";
    Arena *a = arena_new();
    Diag d;
    diag_init(&d);
    SrcFile src = {"bad.tir", text, strlen(text)};
    Module *m = tir_parse(a, &src, &d);
    cr_assert_not_null(m);
    m->arch = "sm_80";
    for (int threads = 1; threads <= 2; threads++) {
        LlvmOptions o = {.arch = "sm_80", .run_o3 = true, .line_info = true, .threads = threads};
        LlvmResult r = {0};
        cr_assert_not(llvm_lower_module(m, &o, &r, &d));
        cr_assert_null(r.ptx);
    }
    Str e = {0};
    diag_render(&d, &e);
    cr_expect(strstr(e.buf, "bad.tir:3:") && strstr(e.buf, "atomics on i16 are not supported"), "%s", e.buf);
    str_free(&e);
    diag_free(&d);
    arena_free(a);
}

/* Misaligned and use-after-free accesses name the statement too (through the device layer, which does
 * not check the alignment the kernel was specialized for, as tile_launch does). */
static const char *vec_src = "kernel v(x: *f32, y: *f32) {\n"
                             "    let o = arange(0, 512);\n"
                             "    let a = load(x + o);\n"          /* 3:13: 16-byte vector loads */
                             "    store(y + o, a * 3.0 + 1.0);\n" /* 4:5 */
                             "}\n";

Test(lineinfo, misaligned_and_freed_name_the_statement) {
    tile_compile_options o = {.size = sizeof o};
    tile_compiled c;
    cr_assert_eq(tile_compile_source("vec.tile", vec_src, &o, &c), TILE_OK, "%s", c.diagnostics);
    cr_assert(strstr(c.ptx, "ld.global.v4"), "expected vector loads:\n%s", c.ptx);
    TileDevice *dev;
    char *err = NULL;
    cr_assert_eq(dev_open("emu", NULL, &dev, &err), DEV_OK, "%s", err ? err : "");
    TileDevModule *mod;
    TileDevFunction *fn;
    cr_assert_eq(dev_module_load_ptx(dev, c.ptx, &mod), DEV_OK, "%s", dev_last_error(dev));
    cr_assert_eq(dev_module_get_function(mod, "v", &fn), DEV_OK);
    tile_compiled_free(&c);
    uint64_t dx, dy;
    cr_assert_eq(dev_malloc(dev, 520 * 4, &dx), DEV_OK);
    cr_assert_eq(dev_malloc(dev, 512 * 4, &dy), DEV_OK);
    /* aligned: y = 3x + 1 */
    float h[520], got[512];
    for (int i = 0; i < 520; i++) h[i] = (float)(i % 37) - 18.0f;
    cr_assert_eq(dev_memcpy_htod(dev, dx, h, sizeof h), DEV_OK);
    void *params[] = {&dx, &dy};
    cr_assert_eq(dev_launch(fn, 1, 1, 1, 128, 1, 1, 0, NULL, params), DEV_OK, "%s", dev_last_error(dev));
    cr_assert_eq(dev_memcpy_dtoh(dev, got, dy, sizeof got), DEV_OK);
    for (int i = 0; i < 512; i++) cr_expect_eq(got[i], 3.0f * h[i] + 1.0f, "y[%d] = %g", i, got[i]);
    /* x + 1 element: the 16-byte loads are misaligned */
    uint64_t xs = dx + 4;
    void *p2[] = {&xs, &dy};
    cr_assert_neq(dev_launch(fn, 1, 1, 1, 128, 1, 1, 0, NULL, p2), DEV_OK);
    const char *e = dev_last_error(dev);
    cr_expect(strstr(e, "memcheck: misaligned __global__ read of size 16 bytes") && strstr(e, "at vec.tile:3:13 in kernel 'v', PTX line "),
              "%s", e);
    /* y freed: the store is a use after free */
    cr_assert_eq(dev_free(dev, dy), DEV_OK);
    cr_assert_neq(dev_launch(fn, 1, 1, 1, 128, 1, 1, 0, NULL, params), DEV_OK);
    e = dev_last_error(dev);
    cr_expect(strstr(e, "freed allocation") && strstr(e, "at vec.tile:4:5 in kernel 'v', PTX line "), "%s", e);
    dev_module_unload(mod);
    dev_close(dev);
}

/* A deadlock's list of where the threads wait names their source lines too. */
Test(lineinfo, deadlock_lists_source_lines) {
    static const char *div = ".version 8.0\n.target sm_80\n.address_size 64\n" /* 1-3 */
                             ".file 1 \"div.cu\"\n"                                  /* 4 */
                             ".visible .entry div()\n{\n .reg .pred %p<2>;\n .reg .b32 %r<2>;\n"
                             " .loc 1 3 5\n"                                         /* 9 */
                             " mov.u32 %r1, %tid.x;\n setp.lt.u32 %p1, %r1, 32;\n"
                             " .loc 1 5 9\n"                                         /* 12 */
                             " @%p1 bar.sync 1;\n"                                   /* 13 */
                             " .loc 1 7 9, function_name $L__info_string0, inlined_at 1 5 9\n" /* 14 */
                             " @!%p1 bar.sync 2;\n"                                  /* 15 */
                             " ret;\n}\n"
                             ".section .debug_str\n{\n$L__info_string0:\n.b8 100,0\n}\n";
    TileDevice *dev;
    char *err = NULL;
    cr_assert_eq(dev_open("emu", NULL, &dev, &err), DEV_OK, "%s", err ? err : "");
    TileDevModule *mod;
    TileDevFunction *fn;
    cr_assert_eq(dev_module_load_ptx(dev, div, &mod), DEV_OK, "%s", dev_last_error(dev));
    cr_assert_eq(dev_module_get_function(mod, "div", &fn), DEV_OK);
    cr_assert_neq(dev_launch(fn, 1, 1, 1, 64, 1, 1, 0, NULL, NULL), DEV_OK);
    const char *e = dev_last_error(dev);
    cr_expect(strstr(e, "deadlock"), "%s", e);
    cr_expect(strstr(e, "32 threads (linear index 0-31) waiting at a barrier at div.cu:5:9, PTX line 13: @%p1 bar.sync 1;"), "%s", e);
    cr_expect(strstr(e, "32 threads (linear index 32-63) waiting at a barrier at div.cu:7:9, PTX line 15: @!%p1 bar.sync 2;"), "%s", e);
    dev_module_unload(mod);
    dev_close(dev);
}

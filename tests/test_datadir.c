/* test_datadir.c - where the library finds stdlib/ and kernels/
 * (runtime/datadir.c, docs/runtime.md "Installing and moving").
 *
 * These programs link the static library, which is never an installed copy:
 * without TILE_DATA_DIR the one data folder is the source tree.  With
 * TILE_DATA_DIR pointing at a folder whose stdlib/math.tile has a marker
 * function, an import of math.tile resolves to that copy (in process and
 * through the `tile` command, i.e. the build tree's shared libtile); a
 * shipped kernel missing from that folder still comes from the source tree.
 * Each Criterion test runs in its own process, so each reads the
 * environment afresh (the options are read once per process). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "include/tile/tile.h"
#include "runtime/rt.h"

/* A kernel that compiles only when math.tile is the marked copy. */
static const char *marked_kernel = "import \"math.tile\";\n"
                                   "kernel k(x: *f32) { store(x + arange(0, 128), datadir_marker(zeros([128], f32))); }\n";

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    cr_assert(f, "cannot read %s", path);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    return text;
}

static void write_file(const char *path, const char *a, const char *b) {
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fputs(a, f);
    if (b) fputs(b, f);
    fclose(f);
}

/* dir/stdlib/math.tile: the real one plus datadir_marker; dir/k.tile: marked_kernel. */
static void make_data_dir(char *dir) {
    cr_assert(mkdtemp(dir));
    char path[512];
    snprintf(path, sizeof path, "%s/stdlib", dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/stdlib/math.tile", dir);
    write_file(path, slurp(TILE_SOURCE_DIR "/stdlib/math.tile"), "\nfn datadir_marker(x) {\n    return x + 1.0;\n}\n");
    snprintf(path, sizeof path, "%s/k.tile", dir);
    write_file(path, marked_kernel, NULL);
}

static void remove_dir(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

Test(datadir, source_tree_when_not_installed) {
    unsetenv("TILE_DATA_DIR");
    const RtDataDirs *d = rt_data_dirs();
    cr_assert_eq(d->n, 1);
    cr_expect_str_eq(d->root[0], TILE_SOURCE_DIR);
    cr_expect_str_eq(d->stdlib[0], TILE_SOURCE_DIR "/stdlib");
    cr_expect_null(d->stdlib[1]);
    cr_expect_not(d->installed);
    cr_expect_str_eq(tile_gemm_source_path(), TILE_SOURCE_DIR "/kernels/gemm/gemm.tile");
    /* the source tree's math.tile has no marker */
    tile_compile_options o = {0};
    tile_compiled c;
    cr_expect_eq(tile_compile_source("/nonexistent/k.tile", marked_kernel, &o, &c), TILE_ERROR_COMPILE);
    cr_expect(c.diagnostics && strstr(c.diagnostics, "datadir_marker"), "%s", c.diagnostics ? c.diagnostics : "");
    tile_compiled_free(&c);
}

Test(datadir, env_overrides_imports) {
    char dir[] = "/tmp/tile-test-datadir-XXXXXX";
    make_data_dir(dir);
    cr_assert_eq(setenv("TILE_DATA_DIR", dir, 1), 0);
    const RtDataDirs *d = rt_data_dirs();
    cr_assert_eq(d->n, 2);
    cr_expect_str_eq(d->root[0], dir);
    cr_expect_str_eq(d->root[1], TILE_SOURCE_DIR);
    tile_compile_options o = {0};
    tile_compiled c;
    /* a name outside both folders: math.tile cannot come from the importing file's folder */
    tile_status st = tile_compile_source("/nonexistent/k.tile", marked_kernel, &o, &c);
    cr_expect_eq(st, TILE_OK, "%s", c.diagnostics ? c.diagnostics : "");
    cr_expect(c.ptx && strstr(c.ptx, ".entry k"));
    tile_compiled_free(&c);
    /* no kernels/ there: the shipped kernels still come from the source tree */
    cr_expect_str_eq(tile_gemm_source_path(), TILE_SOURCE_DIR "/kernels/gemm/gemm.tile");
    remove_dir(dir);
}

Test(datadir, env_overrides_shipped_kernels) {
    char dir[] = "/tmp/tile-test-datadir-XXXXXX";
    make_data_dir(dir);
    char path[512];
    snprintf(path, sizeof path, "%s/kernels", dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/kernels/gemm", dir);
    cr_assert_eq(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/kernels/gemm/gemm.tile", dir);
    write_file(path, slurp(TILE_SOURCE_DIR "/kernels/gemm/gemm.tile"), NULL);
    cr_assert_eq(setenv("TILE_DATA_DIR", dir, 1), 0);
    cr_expect_str_eq(tile_gemm_source_path(), path);
    remove_dir(dir);
}

/* The `tile` command links the build tree's libtile.so: the same rule, reached through dladdr. */
Test(datadir, cli_honours_env) {
    char dir[] = "/tmp/tile-test-datadir-XXXXXX";
    make_data_dir(dir);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd / && TILE_DATA_DIR='%s' '%s' compile '%s/k.tile' -o /dev/null 2>&1", dir, TILE_CLI, dir);
    cr_expect_eq(system(cmd), 0, "%s", cmd);
    /* without it the source tree's math.tile is used: no marker */
    snprintf(cmd, sizeof cmd, "cd / && env -u TILE_DATA_DIR '%s' compile '%s/k.tile' -o /dev/null 2>/dev/null", TILE_CLI, dir);
    int st = system(cmd);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) != 0, "%s succeeded", cmd);
    remove_dir(dir);
}

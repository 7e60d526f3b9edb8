/* test_cli.c - the `tile` command: exit codes, help of every command, strict
 * option values, emitted forms, -o -, diagnostics on stderr. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "include/tile/tile.h"

static int run(const char *args, char *out, size_t outsz) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", TILE_CLI, args);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(out, 1, outsz - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char buf[1 << 20];

Test(cli, help) {
    cr_expect_eq(run("--help", buf, sizeof buf), 0);
    cr_expect(strstr(buf, "compile"));
    cr_expect_eq(run("compile --help", buf, sizeof buf), 0);
    cr_expect(strstr(buf, "--dump-after"));
}

Test(cli, usage_errors_exit_2) {
    cr_expect_eq(run("", buf, sizeof buf), 2);
    cr_expect_eq(run("frobnicate", buf, sizeof buf), 2);
    cr_expect_eq(run("compile", buf, sizeof buf), 2);
    cr_expect(strstr(buf, "no input file"), "%s", buf);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile --emit bogus", buf, sizeof buf), 2);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile --arch sm_70", buf, sizeof buf), 2);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile -D", buf, sizeof buf), 2);
}

Test(cli, emits_each_form) {
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile --emit ptx", buf, sizeof buf), 0, "%s", buf);
    cr_expect(strstr(buf, ".visible .entry"), "%s", buf);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile --emit tir", buf, sizeof buf), 0, "%s", buf);
    cr_expect(strstr(buf, "kernel @"), "%s", buf);
    cr_expect(strstr(buf, "blocked<"), "layouts missing from final Tile IR: %s", buf);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile --emit llvm", buf, sizeof buf), 0, "%s", buf);
    cr_expect(strstr(buf, "ptx_kernel"), "%s", buf);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile --arch sm_90a", buf, sizeof buf), 0, "%s", buf);
    cr_expect(strstr(buf, ".target sm_90a"), "%s", buf);
}

Test(cli, dump_and_time) {
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/softmax.tile --dump-after all --time-passes -o /dev/null", buf, sizeof buf), 0,
                 "%s", buf);
    cr_expect(strstr(buf, "IR after assign_layout"), "%s", buf);
    cr_expect(strstr(buf, "IR after barrier"), "%s", buf);
    cr_expect(strstr(buf, "source to ptx"), "%s", buf);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/softmax.tile --dump-after nosuchpass -o /dev/null", buf, sizeof buf), 2,
                 "%s", buf);
}

Test(cli, source_error_exits_1_with_location) {
    FILE *f = fopen("cli_bad.tile", "w");
    fputs("kernel k(x: *f32) {\n  let y = undefined_name + 1;\n}\n", f);
    fclose(f);
    cr_expect_eq(run("compile cli_bad.tile", buf, sizeof buf), 1, "%s", buf);
    cr_expect(strstr(buf, "cli_bad.tile:2:"), "diagnostic without location: %s", buf);
    cr_expect(strstr(buf, "^"), "no caret: %s", buf);
    remove("cli_bad.tile");
    cr_expect_eq(run("compile /nonexistent/file.tile", buf, sizeof buf), 2, "%s", buf);
}

/* stdout alone (stderr discarded), for commands whose stdout is checked */
static int run_stdout(const char *args, char *out, size_t outsz) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>/dev/null", TILE_CLI, args);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(out, 1, outsz - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(cli, version) {
    cr_expect_eq(run_stdout("--version", buf, sizeof buf), 0);
    cr_expect(strstr(buf, tile_version()), "no version in: %s", buf);
    for (int i = 0; tile_target_name(i); i++) cr_expect(strstr(buf, tile_target_name(i)), "target %s missing: %s", tile_target_name(i), buf);
}

/* every command and subcommand answers --help (and -h) on stdout with exit 0 */
Test(cli, every_command_has_help) {
    static const char *const cmds[] = {"run gemm",    "run attention", "run decode", "run paged-attention", "run moe",
                                       "tune gemm",   "tune",          "cache stats", "cache list",         "cache clear",
                                       "compile",     "aot",           "run",         "cache",              "tune k.tile"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char args[128];
        snprintf(args, sizeof args, "%s --help", cmds[i]);
        cr_expect_eq(run_stdout(args, buf, sizeof buf), 0, "tile %s", args);
        cr_expect(strstr(buf, "usage: tile"), "tile %s: %s", args, buf);
        snprintf(args, sizeof args, "%s -h", cmds[i]);
        cr_expect_eq(run_stdout(args, buf, sizeof buf), 0, "tile %s", args);
        cr_expect(strstr(buf, "usage: tile"), "tile %s: %s", args, buf);
    }
    cr_expect_eq(run_stdout("help run gemm", buf, sizeof buf), 0);
    cr_expect(strstr(buf, "--trans-a"), "%s", buf);
}

Test(cli, numbers_parse_strictly) {
    cr_expect_eq(run("run gemm --m 64x", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--m"), "the message names the option: %s", buf);
    cr_expect_eq(run("run gemm --n 6.4e1", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--n"), "%s", buf);
    cr_expect_eq(run("run gemm --k 0", buf, sizeof buf), 2, "%s", buf);
    cr_expect_eq(run("run gemm --m", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "missing value for --m"), "%s", buf);
    cr_expect_eq(run("run attention --heads ''", buf, sizeof buf), 2, "%s", buf);
    cr_expect_eq(run("run moe --tokens ' 7'", buf, sizeof buf), 2, "%s", buf);
    cr_expect_eq(run("tune gemm --timeout 1s", buf, sizeof buf), 2, "%s", buf);
    cr_expect_eq(run("run gemm --bogus", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--bogus"), "%s", buf);
}

Test(cli, output_dash_is_stdout) {
    char dir[] = "/tmp/tile-test-cli-XXXXXX";
    cr_assert(mkdtemp(dir));
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' compile " TILE_SOURCE_DIR "/kernels/add.tile -o - --emit ptx 2>/dev/null", dir, TILE_CLI);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    buf[n] = 0;
    int st = pclose(p);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", cmd);
    cr_expect(strstr(buf, ".visible .entry add"), "no PTX on standard output: %s", buf);
    cr_expect_eq(rmdir(dir), 0, "-o - wrote a file in %s", dir); /* fails unless the folder is empty */
    /* aot's -o is a path stem: '-' is refused */
    cr_expect_eq(run("aot " TILE_SOURCE_DIR "/kernels/add.tile --kernel add -o -", buf, sizeof buf), 2, "%s", buf);
}

Test(cli, unknown_define_lists_the_valid_names) {
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile -D NOPE=3", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "NOPE"), "%s", buf);
    cr_expect(strstr(buf, "BLOCK"), "the valid names are listed: %s", buf);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile -DBLOCK=256 -D num_warps=8 -o /dev/null", buf, sizeof buf), 0, "%s", buf);
}

Test(cli, unknown_device_and_arch) {
    cr_expect_eq(run("run gemm --device bogus", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "bogus"), "%s", buf);
    cr_expect_eq(run("run attention --device cuda:x", buf, sizeof buf), 2, "%s", buf);
    cr_expect_eq(run("tune gemm --device emu0", buf, sizeof buf), 2, "%s", buf);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile --arch sm_70", buf, sizeof buf), 2, "%s", buf);
    for (int i = 0; tile_target_name(i); i++) cr_expect(strstr(buf, tile_target_name(i)), "the targets are listed: %s", buf);
    cr_expect_eq(run("aot " TILE_SOURCE_DIR "/kernels/add.tile --kernel add --arch sm_70 -o x", buf, sizeof buf), 2, "%s", buf);
}

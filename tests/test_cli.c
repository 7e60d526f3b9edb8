/* test_cli.c - the `tile` command: exit codes, help, emitted forms, diagnostics on stderr. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

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

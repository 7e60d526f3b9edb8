/* test_cli.c - the `tile` command: exit codes, help of every command, strict
 * option values, emitted forms, -o -, diagnostics on stderr. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "include/tile/tile.h"
#include "lower/passes.h"
#include "ref/ref.h"
#include "support/hostfloat.h"
#include "tests/test_rng.h"
#include "tools/run_check.h"

#include <math.h>

/* A shell command's standard output in out (cut to outsz - 1 bytes), and its exit status (-1: killed) */
static int shell(const char *cmd, char *out, size_t outsz) {
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(out, 1, outsz - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run(const char *args, char *out, size_t outsz) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", TILE_CLI, args);
    return shell(cmd, out, outsz);
}

static char buf[1 << 20];

Test(cli, help) {
    cr_expect_eq(run("--help", buf, sizeof buf), 0);
    cr_expect(strstr(buf, "compile"));
    cr_expect_eq(run("compile --help", buf, sizeof buf), 0);
    cr_expect(strstr(buf, "--dump-after"));
    /* the pass list it prints is the pipeline's */
    const char *p = strstr(buf, "passes, in order:");
    cr_assert(p, "%s", buf);
    p += strlen("passes, in order:");
    for (int i = 0; i < tir_pipeline_len; i++) {
        while (*p == ' ' || *p == '\n') p++;
        size_t n = strlen(tir_pipeline_order[i]);
        cr_assert(strncmp(p, tir_pipeline_order[i], n) == 0 && (p[n] == ' ' || p[n] == '\n'), "pass %d: want %s at '%.40s'", i,
                  tir_pipeline_order[i], p);
        p += n;
    }
    cr_expect(strncmp(p, "\nexit status", 12) == 0, "after the passes: '%.40s'", p);
}

Test(cli, usage_errors_exit_2) {
    cr_expect_eq(run("", buf, sizeof buf), 2);
    cr_expect_eq(run("frobnicate", buf, sizeof buf), 2);
    /* a typo of a command, subcommand or long option names the one meant */
    cr_expect_eq(run("comple", buf, sizeof buf), 2);
    cr_expect(strstr(buf, "unknown command 'comple'; did you mean 'compile'?"), "%s", buf);
    cr_expect_eq(run("cache stat", buf, sizeof buf), 2);
    cr_expect(strstr(buf, "unknown subcommand 'tile cache stat'; did you mean 'stats'?"), "%s", buf);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile --kernal add", buf, sizeof buf), 2);
    cr_expect(strstr(buf, "unknown option --kernal; did you mean '--kernel'?"), "%s", buf);
    cr_expect_eq(run("compile", buf, sizeof buf), 2);
    cr_expect(strstr(buf, "no input file"), "%s", buf);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile --emit bogus", buf, sizeof buf), 2);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile --arch sm_70", buf, sizeof buf), 2);
    /* nvcc's and Triton's name for Hopper, and another case, say which target is meant */
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile --arch sm_90", buf, sizeof buf), 2);
    cr_expect(strstr(buf, "unknown --arch 'sm_90'; did you mean 'sm_90a'? (targets: sm_80"), "%s", buf);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile --arch SM_80", buf, sizeof buf), 2);
    cr_expect(strstr(buf, "did you mean 'sm_80'?"), "%s", buf);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile --arch sm86", buf, sizeof buf), 2);
    cr_expect(strstr(buf, "unknown --arch 'sm86'; did you mean 'sm_86'?"), "%s", buf);
    /* a const parameter is no run-time argument: the message lists those and says how a const is set */
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile --emit tir --specialize BLOCK=16", buf, sizeof buf), 2);
    cr_expect(strstr(buf, "cannot specialize 'BLOCK': no run-time argument has that name (the run-time arguments: x, y, out, n; a "
                          "const parameter is set with -D BLOCK=VALUE)"), "%s", buf);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile -D", buf, sizeof buf), 2);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile -D 'BLOCK = 256'", buf, sizeof buf), 2);
    cr_expect(strstr(buf, "tile: -D 'BLOCK ': NAME must be an identifier"), "%s", buf);
    /* values the options give that the library refuses are usage errors too (they exited 3, as a mismatch) */
    cr_expect_eq(run("run attention --device emu --head-dim 17", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "tile_attention_fwd failed"), "%s", buf);
    cr_expect_eq(run("run gemm --device emu --m 3 --n 3 --k 3 --config BM=banana", buf, sizeof buf), 2, "%s", buf);
    /* a kernel without @config: nothing to tune, the command's error naming the file (exit 1 without a location) */
    cr_expect_eq(run("tune " TILE_SOURCE_DIR "/kernels/add.tile --kernel add --grid 1 --arg n=8 --device emu", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "kernel 'add' of " TILE_SOURCE_DIR "/kernels/add.tile has no @config"), "%s", buf);
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
    /* an empty arch is the default target, as tile_compile_options.arch = "" is (it was: unknown --arch '') */
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile --arch ''", buf, sizeof buf), 0, "%s", buf);
    char want[64];
    snprintf(want, sizeof want, ".target %s\n", tile_target_default());
    cr_expect(strstr(buf, want), "want %s: %s", want, buf);
    cr_expect_eq(run("aot " TILE_SOURCE_DIR "/kernels/add.tile --kernel add --arch '' -o cli_arch_empty", buf, sizeof buf), 0, "%s", buf);
    remove("cli_arch_empty.c"), remove("cli_arch_empty.h");
}

Test(cli, dump_and_time) {
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/softmax.tile --dump-after all --time-passes -o /dev/null", buf, sizeof buf), 0,
                 "%s", buf);
    cr_expect(strstr(buf, "IR after assign_layout"), "%s", buf);
    cr_expect(strstr(buf, "IR after barrier"), "%s", buf);
    cr_expect(strstr(buf, "source to ptx"), "%s", buf);
    /* --time-passes' times line up: every " ms" at the end of a line in the same column (software_pipeline,
     * the longest name, pushed its time one column right) */
    int col = -1, lines = 0;
    for (const char *p = buf; (p = strstr(p, " ms\n")) != NULL; p += 4) {
        const char *bol = p;
        while (bol > buf && bol[-1] != '\n') bol--;
        if (col < 0) col = (int)(p - bol);
        cr_expect_eq((int)(p - bol), col, "--time-passes: '%.*s' is not aligned with the lines above", (int)(p + 3 - bol), bol);
        lines++;
    }
    cr_expect_geq(lines, 20, "%s", buf);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/softmax.tile --dump-after nosuchpass -o /dev/null", buf, sizeof buf), 2,
                 "%s", buf);
    /* a wrong pass name is answered with the names it takes, each pass with its summary from TIR_PASSES */
    cr_expect(strstr(buf, "unknown pass 'nosuchpass' for --dump-after (it takes frontend, all or a pass below)"), "%s", buf);
    for (int i = 0; i < tir_npasses; i++) {
        char want[512];
        snprintf(want, sizeof want, "note: %s: %s\n", tir_passes[i].name, tir_passes[i].summary);
        cr_expect(strstr(buf, want), "no '%s' in: %s", want, buf);
    }
    /* --emit tir times what it runs, the front end and the passes (it printed nothing at all) */
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/softmax.tile --emit tir --time-passes -o /dev/null", buf, sizeof buf), 0,
                 "%s", buf);
    cr_expect(strstr(buf, "frontend "), "%s", buf);
    cr_expect(strstr(buf, "\nassign_layout "), "%s", buf);
    cr_expect(strstr(buf, "\npasses total "), "%s", buf);
    cr_expect(strstr(buf, "\nsource to tir "), "%s", buf);
    cr_expect_not(strstr(buf, "llvm"), "no LLVM stage runs for --emit tir: %s", buf);
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
    return shell(cmd, out, outsz);
}

Test(cli, version) {
    cr_expect_eq(run_stdout("--version", buf, sizeof buf), 0);
    cr_expect(strstr(buf, tile_version()), "no version in: %s", buf);
    for (int i = 0; tile_target_name(i); i++) cr_expect(strstr(buf, tile_target_name(i)), "target %s missing: %s", tile_target_name(i), buf);
    /* an argument after --version is refused, as every command refuses one it does not take */
    cr_expect_eq(run("--version extra", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "unexpected argument 'extra' after --version"), "%s", buf);
    cr_expect_eq(run("-V compile", buf, sizeof buf), 2, "%s", buf);
}

/* tile --help COMMAND [SUB] is tile help COMMAND [SUB]: that command's options, exit 0; an unknown one exits 2 */
Test(cli, help_with_a_command) {
    cr_expect_eq(run_stdout("--help compile", buf, sizeof buf), 0);
    cr_expect(strstr(buf, "usage: tile compile FILE.tile"), "%s", buf);
    cr_expect_eq(run_stdout("-h run gemm", buf, sizeof buf), 0);
    cr_expect(strstr(buf, "--m"), "%s", buf);
    cr_expect_eq(run("--help frobnicate", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "unknown command 'frobnicate'"), "%s", buf);
}

/* every command and subcommand answers --help (and -h) on stdout with exit 0 */
Test(cli, every_command_has_help) {
    static const char *const cmds[] = {"run gemm",    "run attention", "run decode", "run paged-attention", "run moe",
                                       "run norm",    "run act",
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
    cr_expect_eq(run_stdout("help help", buf, sizeof buf), 0, "%s", buf); /* it was: unknown command 'help' */
    cr_expect(strstr(buf, "tile help COMMAND [SUBCOMMAND]"), "%s", buf);
    cr_expect_eq(run_stdout("help run gemm", buf, sizeof buf), 0);
    cr_expect(strstr(buf, "--trans-a"), "%s", buf);
    /* run gemm refuses tune gemm's --warmup and --timeout, so its help does not offer them */
    cr_expect(!strstr(buf, "--warmup") && !strstr(buf, "--timeout"), "%s", buf);
    cr_expect_eq(run("run gemm --warmup 1", buf, sizeof buf), 2, "%s", buf);
    cr_expect_eq(run_stdout("tune gemm --help", buf, sizeof buf), 0);
    cr_expect(strstr(buf, "  --warmup W") && strstr(buf, "  --timeout S") && strstr(buf, "  --trans-a"), "%s", buf);
}

/* Sizes 0 where the API takes them (tokens 0: a call with nothing to compute): the commands run it and check
 * nothing, TILE_OK; a negative size stays a usage error.  (tile run attention's 0 sizes: test_attention_api,
 * cli_run.) */
Test(cli, zero_tokens_as_the_api_takes_them, .timeout = 60) {
    static const char *const cmds[][2] = {
        {"run moe --device emu --tokens 0 --hidden 64 --inter 32 --experts 4 --topk 2 --reps 1 --json", "\"checked_tokens\":0,"},
        {"run norm --device emu --tokens 0 --hidden 256 --reps 1 --json", "\"checked_rows\":0,"},
        {"run norm --device emu --tokens 0 --hidden 256 --quant i8 --reps 1 --json", "\"checked_rows\":0,"},
        {"run act --device emu --tokens 0 --d 256 --reps 1 --json", "\"checked_rows\":0,"},
        {"run rope --device emu --tokens 0 --heads-q 2 --heads-kv 1 --head-dim 64 --reps 1 --json", "\"checked_tokens\":0,"}};
    /* --batch 0: num_seqs / batch 0, as the API takes it (decode's cache still holds the one block the API asks for) */
    static const char *const batch0[] = {"run decode --device emu --batch 0 --heads 2 --heads-kv 1 --head-dim 16 --context 40 --reps 1 --json",
                                         "run decode --device emu --batch 0 --tokens 3 --tree --heads 2 --heads-kv 1 --head-dim 16 --context 40 --reps 1 --json",
                                         "run sample --device emu --batch 0 --vocab 100 --probs --reps 1 --json",
                                         "run spec --device emu --batch 0 --vocab 100 --reps 1 --json"};
    for (size_t i = 0; i < sizeof batch0 / sizeof *batch0; i++) {
        cr_expect_eq(run(batch0[i], buf, sizeof buf), 0, "%s: %s", batch0[i], buf);
        cr_expect(strstr(buf, "\"batch\":0,") && strstr(buf, "\"checked_rows\":0,") && strstr(buf, "\"ok\":true"), "%s: %s", batch0[i], buf);
    }
    cr_expect_eq(run("run decode --device emu --batch -1", buf, sizeof buf), 2, "%s", buf);
    cr_expect_eq(run("run rope --device emu --tokens -1", buf, sizeof buf), 2, "%s", buf);
    /* run gemm: m or n 0 (nothing to compute) and k 0 (C = 0, checked over C poisoned with NaN) */
    static const char *const gemm[] = {"--m 0 --n 24 --k 16", "--m 40 --n 0 --k 16", "--m 40 --n 24 --k 0",
                                       "--m 40 --n 24 --k 0 --trans-a --trans-b", "--m 40 --n 24 --k 0 --dtype i8"};
    for (size_t i = 0; i < sizeof gemm / sizeof *gemm; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "run gemm --device emu --reps 1 --json %s", gemm[i]);
        cr_expect_eq(run(cmd, buf, sizeof buf), 0, "%s: %s", cmd, buf);
        cr_expect(strstr(buf, "\"ok\":true"), "%s: %s", cmd, buf);
        /* nothing launched at m or n 0: no kernel, configuration or grid (they were uninitialized memory) */
        if (i < 2) cr_expect(strstr(buf, "\"kernel\":null,\"config\":null,") && strstr(buf, "\"grid\":[0,0,0],\"block\":0,"), "%s: %s", cmd, buf);
    }
    cr_expect_eq(run("run gemm --device emu --m 0 --n 24 --k 16 --reps 1", buf, sizeof buf), 0, "%s", buf);
    cr_expect(strstr(buf, "kernel      (none: C is empty, nothing was launched)\n  check       nothing to compare: ok\n"), "%s", buf);
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        cr_expect_eq(run(cmds[i][0], buf, sizeof buf), 0, "%s: %s", cmds[i][0], buf);
        cr_expect(strstr(buf, "\"tokens\":0,") && strstr(buf, cmds[i][1]) && strstr(buf, "\"ok\":true"), "%s: %s", cmds[i][0], buf);
    }
    cr_expect_eq(run("run moe --device emu --tokens -1", buf, sizeof buf), 2, "%s", buf);
    cr_expect_eq(run("run norm --device emu --tokens -1", buf, sizeof buf), 2, "%s", buf);
}

Test(cli, numbers_parse_strictly) {
    cr_expect_eq(run("run gemm --m 64x", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--m"), "the message names the option: %s", buf);
    cr_expect_eq(run("run gemm --n 6.4e1", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--n"), "%s", buf);
    cr_expect_eq(run("run gemm --k -1", buf, sizeof buf), 2, "%s", buf);
    cr_expect_eq(run("tune gemm --k 0", buf, sizeof buf), 2, "tuning times nothing at k = 0: %s", buf);
    cr_expect_eq(run("run gemm --m", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "missing value for --m"), "%s", buf);
    cr_expect_eq(run("run attention --heads ''", buf, sizeof buf), 2, "%s", buf);
    cr_expect_eq(run("run moe --tokens ' 7'", buf, sizeof buf), 2, "%s", buf);
    cr_expect_eq(run("run norm --hidden 65537", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--hidden"), "%s", buf);
    cr_expect_eq(run("run norm --quant f8e5m2", buf, sizeof buf), 2, "%s", buf);
    cr_expect_eq(run("run act --act relu", buf, sizeof buf), 2, "%s", buf);
    cr_expect_eq(run("run act --d 0", buf, sizeof buf), 2, "%s", buf);
    cr_expect_eq(run("run act --quant i8 --group 48", buf, sizeof buf), 2, "%s", buf);
    cr_expect_eq(run("run norm --group 128", buf, sizeof buf), 2, "--group without --quant: %s", buf);
    cr_expect_eq(run("tune gemm --timeout 1s", buf, sizeof buf), 2, "%s", buf);
    cr_expect_eq(run("run gemm --bogus", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--bogus"), "%s", buf);
    /* a flag given a value, and the start of two options, say so (both were "unknown option") */
    cr_expect_eq(run("run gemm --trans-a=1", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "tile: --trans-a takes no value, got '1'"), "%s", buf);
    cr_expect_eq(run("run gemm --tr", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "tile: ambiguous option --tr: the start of 2 options"), "%s", buf);
}

Test(cli, output_dash_is_stdout) {
    char dir[] = "/tmp/tile-test-cli-XXXXXX";
    cr_assert(mkdtemp(dir));
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' compile " TILE_SOURCE_DIR "/kernels/add.tile -o - --emit ptx 2>/dev/null", dir, TILE_CLI);
    cr_expect_eq(shell(cmd, buf, sizeof buf), 0, "%s", cmd);
    cr_expect(strstr(buf, ".visible .entry add"), "no PTX on standard output: %s", buf);
    cr_expect_eq(rmdir(dir), 0, "-o - wrote a file in %s", dir); /* fails unless the folder is empty */
    /* aot's -o is a path stem: '-' is refused */
    cr_expect_eq(run("aot " TILE_SOURCE_DIR "/kernels/add.tile --kernel add -o -", buf, sizeof buf), 2, "%s", buf);
    /* nor a stem whose OUT.h or OUT.c is the input (it was replaced by the output), as compile's -o naming the input */
    char src[] = "/tmp/tile-test-cli-XXXXXX";
    cr_assert(mkdtemp(src));
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "cp " TILE_SOURCE_DIR "/kernels/add.tile %s/k.%s && cd %s && '%s' aot k.%s --kernel add -o ./k 2>&1; echo \" rc=$?\"; cmp k.%s " TILE_SOURCE_DIR "/kernels/add.tile && rm k.%s",
                 src, i ? "c" : "h", src, TILE_CLI, i ? "c" : "h", i ? "c" : "h", i ? "c" : "h");
        shell(cmd, buf, sizeof buf);
        cr_expect(strstr(buf, i ? "tile: -o ./k writes ./k.c, the input file" : "tile: -o ./k writes ./k.h, the input file") && strstr(buf, " rc=2\n"), "%s", buf);
    }
    cr_expect_eq(rmdir(src), 0, "left files in %s", src);
    /* which of the three is missing */
    cr_expect_eq(run("aot " TILE_SOURCE_DIR "/kernels/add.tile --kernel add", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "(missing: -o OUT)"), "%s", buf);
}

/* `tile compile -` reads the source from standard input: the same PTX as the file gives, diagnostics named
 * <stdin> with line and column, imports from the working folder, a NUL byte located, no stdin a usage error */
Test(cli, compile_reads_standard_input) {
    char dir[] = "/tmp/tile-test-cli-XXXXXX";
    cr_assert(mkdtemp(dir));
    char cmd[1024], *file_ptx = malloc(sizeof buf);
    cr_assert(file_ptx);
    cr_expect_eq(run_stdout("compile --no-cache " TILE_SOURCE_DIR "/kernels/add.tile", file_ptx, sizeof buf), 0);
    cr_expect(strstr(file_ptx, ".visible .entry add"), "%s", file_ptx);
    snprintf(cmd, sizeof cmd, "compile --no-cache - --no-line-info < " TILE_SOURCE_DIR "/kernels/add.tile");
    cr_expect_eq(run_stdout(cmd, buf, sizeof buf), 0);
    cr_expect(strstr(buf, ".visible .entry add"), "no PTX from standard input: %s", buf);
    snprintf(cmd, sizeof cmd, "compile --no-cache --no-line-info " TILE_SOURCE_DIR "/kernels/add.tile");
    cr_expect_eq(run_stdout(cmd, file_ptx, sizeof buf), 0);
    cr_expect_str_eq(buf, file_ptx, "standard input and the file compile differently");
    free(file_ptx);
    /* a source error: located in <stdin>, exit 1; a NUL byte is one too */
    cr_expect_eq(run("--version >/dev/null; printf 'kernel k(x: *f32) {\\n  store(x, 1.0)\\n}\\n' | '" TILE_CLI "' compile -", buf,
                     sizeof buf), 1, "%s", buf);
    cr_expect(strstr(buf, "<stdin>:2:16: error: expected ';'"), "%s", buf);
    cr_expect_eq(run("compile - < /dev/null", buf, sizeof buf), 1, "%s", buf);
    cr_expect(strstr(buf, "<stdin>"), "%s", buf);
    cr_expect_eq(run("--version >/dev/null; printf 'kernel k(x: *f32) {\\n  \\0 }' | '" TILE_CLI "' compile -", buf, sizeof buf), 1, "%s", buf);
    cr_expect(strstr(buf, "<stdin>:2:3: error: unexpected byte 0x00"), "%s", buf);
    /* imports: from the working folder */
    snprintf(cmd, sizeof cmd, "cd '%s' && printf 'fn twice(x) { return x * 2.0; }\\n' > twice.tile && "
             "printf 'import \"twice.tile\";\\nkernel k(x: *f32) { store(x, twice(load(x))); }\\n' | '%s' compile --no-cache -",
             dir, TILE_CLI);
    cr_expect_eq(shell(cmd, buf, sizeof buf), 0, "%s", cmd);
    cr_expect(strstr(buf, ".visible .entry k"), "no kernel from an import of the working folder: %s", buf);
    snprintf(cmd, sizeof cmd, "%s/twice.tile", dir);
    remove(cmd);
    rmdir(dir);
    /* standard input closed: an unreadable input, a usage error */
    cr_expect_eq(run("compile - <&-", buf, sizeof buf), 2, "%s", buf);
}

Test(cli, unknown_define_lists_the_valid_names) {
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile -D NOPE=3", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "NOPE"), "%s", buf);
    cr_expect(strstr(buf, "BLOCK"), "the valid names are listed: %s", buf);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile -DBLOCK=256 -D num_warps=8 -o /dev/null", buf, sizeof buf), 0, "%s", buf);
    /* a name given twice is a usage error, as tune's --arg n given twice (the last one won, silently) */
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile -D BLOCK=64 -D BLOCK=32 -o /dev/null", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "-D BLOCK is given twice ('BLOCK=64', then 'BLOCK=32')"), "%s", buf);
    cr_expect_eq(run("run gemm --m 16 --n 16 --k 16 --config BM=64,BM=128", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--config: BM is given twice ('BM=64', then 'BM=128')"), "%s", buf);
}

/* A -D value that does not parse is the one error (the kernels no longer go on to report what follows from a
 * 0 in its place), and --kernel naming no kernel is a usage error, as a define naming nothing is. */
Test(cli, bad_define_value_and_kernel_name_are_usage_errors) {
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile -D BLOCK=99999999999999999999 -o /dev/null", buf, sizeof buf), 2,
                 "%s", buf);
    cr_expect(strstr(buf, "<-D BLOCK>:1:1: error: integer literal"), "%s", buf);
    cr_expect(!strstr(buf, "add.tile"), "an error that follows from the define: %s", buf);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/add.tile --kernel nope -o /dev/null", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "no kernel named 'nope'"), "%s", buf);
}

/* A -D value that reads as no name, number or type is a string, quoted for the define as Python's tile.compile quotes
 * one: -D W=.cg is Triton's cache_modifier=".cg" (the PTX loads with ld.global.cg), a value with spaces, quotes and
 * backslashes keeps each; a name, a number and a quoted string read as themselves, and an empty value stays an error. */
Test(cli, define_strings_are_quoted) {
    char path[] = "/tmp/tile-test-cli-XXXXXX", cmd[1024];
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    cr_assert(f);
    fputs("kernel k(x: *f32, const W = None, const A = \"none\", const N = 0.0) {\n"
          "    static_assert(A == \"say \\\"hi\\\" \\\\o/\" || A == \"relu\" || A == \"leaky relu\", \"A\");\n"
          "    static_assert(N == -1.5e-3 || N == 2.0, \"N\");\n"
          "    store(x, load(x, cache_modifier=W) * N);\n"
          "}\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "compile --no-cache --emit ptx %s -D W=.cg -D 'A=leaky relu' -D N=-1.5e-3 -o -", path);
    cr_expect_eq(run(cmd, buf, sizeof buf), 0, "%s", buf);
    cr_expect(strstr(buf, "ld.global.cg"), "-D W=.cg is cache_modifier=\".cg\": %s", buf);
    snprintf(cmd, sizeof cmd, "compile --no-cache %s -D 'A=say \"hi\" \\o/' -D N=2 -o /dev/null", path);
    cr_expect_eq(run(cmd, buf, sizeof buf), 0, "quotes and a backslash kept: %s", buf);
    snprintf(cmd, sizeof cmd, "compile --no-cache %s -D A=relu -D 'W=\".cg\"' -D N=2 -o /dev/null", path);
    cr_expect_eq(run(cmd, buf, sizeof buf), 0, "a name and a quoted string as themselves: %s", buf);
    snprintf(cmd, sizeof cmd, "compile --no-cache %s -D A=-relu -o /dev/null", path);
    cr_expect_eq(run(cmd, buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "<-D A>:1:1: error: invalid value '-relu'"), "a bare minus name is no string: %s", buf);
    snprintf(cmd, sizeof cmd, "compile --no-cache %s -D A= -o /dev/null", path);
    cr_expect_eq(run(cmd, buf, sizeof buf), 2, "an empty value: %s", buf);
    remove(path);
}

/* A file that starts with a UTF-8 byte-order mark compiles (positions count from after it), and so does a
 * long flat expression, which is not a deep one. */
Test(cli, byte_order_mark_and_long_flat_expressions) {
    FILE *f = fopen("cli_bom.tile", "w");
    fputs("\xEF\xBB\xBFkernel k(x: *f32) {\n  store(x, 1.0 +);\n}\n", f);
    fclose(f);
    cr_expect_eq(run("compile cli_bom.tile -o /dev/null", buf, sizeof buf), 1, "%s", buf);
    cr_expect(strstr(buf, "cli_bom.tile:2:17: error:"), "%s", buf);
    f = fopen("cli_bom.tile", "w");
    fputs("\xEF\xBB\xBFkernel k(x: *f32, n: f32) {\n  store(x, n", f);
    for (int i = 0; i < 5000; i++) fputs(" + n", f);
    fputs(");\n}\n", f);
    fclose(f);
    cr_expect_eq(run("compile cli_bom.tile -o /dev/null", buf, sizeof buf), 0, "%s", buf);
    remove("cli_bom.tile");
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

/* ---- --json: every line of stdout is one valid JSON object ---- */
/* value = object | array | string | number | "true" | "false" | "null" (RFC 8259), whitespace allowed around */
static const char *js_value(const char *p, int depth);
static const char *js_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\r') p++;
    return p;
}
static const char *js_string(const char *p) {
    if (*p++ != '"') return NULL;
    for (; *p != '"'; p++) {
        if (!*p || (unsigned char)*p < 0x20) return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i]) return NULL;
                p += 4;
            } else if (!*p || !strchr("\"\\/bfnrt", *p)) return NULL;
        }
    }
    return p + 1;
}
static const char *js_digits(const char *p) {
    if (*p < '0' || *p > '9') return NULL;
    while (*p >= '0' && *p <= '9') p++;
    return p;
}
static const char *js_number(const char *p) {
    if (*p == '-') p++;
    if (*p == '0') p++;
    else if (!(p = js_digits(p))) return NULL;
    if (*p == '.' && !(p = js_digits(p + 1))) return NULL;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(p = js_digits(p))) return NULL;
    }
    return p;
}
/* members or elements between open and close */
static const char *js_seq(const char *p, char close, bool members, int depth) {
    p = js_ws(p + 1);
    if (*p == close) return p + 1;
    for (;;) {
        if (members) {
            if (!(p = js_string(js_ws(p)))) return NULL;
            p = js_ws(p);
            if (*p++ != ':') return NULL;
        }
        if (!(p = js_value(p, depth + 1))) return NULL;
        p = js_ws(p);
        if (*p == close) return p + 1;
        if (*p++ != ',') return NULL;
    }
}
static const char *js_value(const char *p, int depth) {
    if (depth > 64) return NULL;
    p = js_ws(p);
    if (*p == '{') return js_seq(p, '}', true, depth);
    if (*p == '[') return js_seq(p, ']', false, depth);
    if (*p == '"') return js_string(p);
    if (!strncmp(p, "true", 4)) return p + 4;
    if (!strncmp(p, "false", 5)) return p + 5;
    if (!strncmp(p, "null", 4)) return p + 4;
    return js_number(p);
}
/* The number of lines of text, each one JSON object; -1 when a line is not. */
static int json_lines(char *text) {
    int n = 0;
    for (char *line = text, *next; *line; line = next) {
        next = strchr(line, '\n');
        if (!next) return -1; /* every object ends its line */
        *next++ = 0;
        const char *end = *js_ws(line) == '{' ? js_value(line, 0) : NULL;
        if (!end || *js_ws(end)) return -1;
        next[-1] = '\n';
        n++;
    }
    return n;
}

Test(cli, json_checker_itself) {
    char good[] = "{\"a\":[1,-2.5e-3,true,null,{\"b\":\"x\\\"\\u00e9\"}],\"c\":{}}\n{}\n";
    cr_expect_eq(json_lines(good), 2);
    const char *bad[] = {"{\"a\":1,}\n", "{\"a\":01}\n", "{\"a\":\"\x01\"}\n", "{a:1}\n", "{\"a\":nan}\n", "{\"a\":1}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char b[64];
        snprintf(b, sizeof b, "%s", bad[i]);
        cr_expect_eq(json_lines(b), -1, "accepted: %s", bad[i]);
    }
}

/* Each size in range, their product past what a buffer can hold: a usage error naming the options, before anything
 * is allocated.  65536^4 elements wrapped to 0 in int64: "tile_malloc: size is 0", exit 3; 2^31 x 2^30 a
 * float64 copy of 2^64 bytes that wrapped. */
Test(cli, sizes_whose_product_overflows) {
    cr_expect_eq(run("run attention --device emu --batch 65536 --seq 65536 --heads 65536 --head-dim 65536", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--batch * --seq * --heads * --head-dim is more than 2^48 elements"), "%s", buf);
    cr_expect_eq(run("run attention --device emu --seq-k 2147483647 --heads-kv 1 --heads 2 --head-dim 2147483647", buf, sizeof buf), 2,
                 "%s", buf);
    cr_expect(strstr(buf, "--seq-k * --heads-kv"), "%s", buf);
    cr_expect_eq(run("run decode --device emu --batch 2147483647 --context 2000 --block-size 16 --tokens 1", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--batch * --context"), "%s", buf);
    cr_expect_eq(run("run gemm --device emu --m 2147483647 --k 1073741825 --n 1", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--m * --k"), "%s", buf);
    cr_expect_eq(run("tune gemm --device emu --m 1 --k 2147483647 --n 2147483647", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--k * --n"), "%s", buf);
    cr_expect_eq(run("run moe --device emu --tokens 2147483647 --hidden 2147483647", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--tokens * --hidden"), "%s", buf);
    cr_expect_eq(run("run moe --device emu --experts 2147483647 --inter 2147483647 --topk 1", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--experts * 2 --inter * --hidden"), "%s", buf);
    /* values the kernels do not take, named by their flags before anything runs (the library's field names, after
     * the header line) */
    cr_expect_eq(run("run decode --device emu --batch 1 --context 33 --block-size 48", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "tile: --block-size must be 16, 32 or 64, got 48") && !strstr(buf, "decode batch"), "%s", buf);
    cr_expect_eq(run("run attention --device emu --heads 4 --heads-kv 3", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "tile: --heads (4) must be a multiple of --heads-kv (3)") && !strstr(buf, "attention batch"), "%s", buf);
    cr_expect_eq(run("run decode --device emu --heads 4 --heads-kv 8", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--heads (4) must be a multiple of --heads-kv (8)"), "%s", buf);
    cr_expect_eq(run("run decode --device emu --context 20 --tokens 9", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "tile: --tokens must be between 1 and 8, got 9") && !strstr(buf, "decode batch"), "%s", buf);
    cr_expect_eq(run("run rope --device emu --head-dim 17", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "tile: --head-dim 17 is odd: rotating all of it (--rot-dim 0)") && !strstr(buf, "rope neox"), "%s", buf);
}

static char cache_env[160];
static void json_setup(void) {
    char dir[] = "/tmp/tile-test-json-XXXXXX";
    cr_assert(mkdtemp(dir));
    snprintf(cache_env, sizeof cache_env, "TILE_CACHE_DIR=%s/cache", dir);
}
static void json_teardown(void) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%.*s'", (int)(strlen(cache_env) - strlen("TILE_CACHE_DIR=") - 6), cache_env + strlen("TILE_CACHE_DIR="));
    system(cmd);
}

/* stdout alone of `tile ARGS` with the test's cache folder */
static int run_env(const char *args, char *out, size_t outsz) {
    char a[2048];
    snprintf(a, sizeof a, "%s", args);
    char cmd[2600];
    snprintf(cmd, sizeof cmd, "%s '%s' %s 2>/dev/null", cache_env, TILE_CLI, a);
    return shell(cmd, out, outsz);
}

/* The author's loop through the cache (docs/runtime.md): -v says miss, then hit; a one-character edit is a
 * miss; --no-cache says nothing of the cache; --emit tir, --emit llvm, --dump-after and --time-passes are
 * compiled anew each time and -v says the cache was not used (it said "miss" every time). */
Test(cli, compile_verbose_cache_states, .init = json_setup, .fini = json_teardown) {
    char dir[160], src[256], cmd[2600];
    snprintf(dir, sizeof dir, "%.*s", (int)(strlen(cache_env) - strlen("TILE_CACHE_DIR=") - 6), cache_env + strlen("TILE_CACHE_DIR="));
    snprintf(src, sizeof src, "%s/k.tile", dir);
    FILE *f = fopen(src, "w");
    cr_assert(f);
    fputs("kernel k(x: *f32, n: i32) {\n    let o = arange(0, 64);\n    store(x + o, 1.0, o < n);\n}\n", f);
    fclose(f);
    static const struct {
        const char *opts, *want;
    } steps[] = {
        {"", "cache: miss\n"},
        {"", "cache: hit\n"},
        {"--emit tir", "cache: not used ("},
        {"--emit tir", "cache: not used ("},
        {"--emit llvm", "cache: not used ("},
        {"--dump-after contract", "cache: not used ("},
        {"--time-passes", "cache: not used ("},
        {"--no-cache", NULL},
        {"", "cache: hit\n"},
    };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        snprintf(cmd, sizeof cmd, "%s '%s' compile '%s' -v %s -o /dev/null 2>&1", cache_env, TILE_CLI, src, steps[i].opts);
        cr_assert_eq(shell(cmd, buf, sizeof buf), 0, "%s", buf);
        if (steps[i].want) cr_expect(strstr(buf, steps[i].want), "step %zu (%s): want '%s' in:\n%s", i, steps[i].opts, steps[i].want, buf);
        else cr_expect(!strstr(buf, "cache:"), "step %zu (%s): %s", i, steps[i].opts, buf);
    }
    f = fopen(src, "w"); /* one character changed: a miss, then a hit */
    fputs("kernel k(x: *f32, n: i32) {\n    let o = arange(0, 64);\n    store(x + o, 2.0, o < n);\n}\n", f);
    fclose(f);
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "%s '%s' compile '%s' -v -o /dev/null 2>&1", cache_env, TILE_CLI, src);
        cr_assert_eq(shell(cmd, buf, sizeof buf), 0, "%s", buf);
        cr_expect(strstr(buf, i ? "cache: hit\n" : "cache: miss\n"), "after the edit, run %d: %s", i, buf);
    }
}

/* `tile tune FILE` on a kernel whose store mask is wrong (`<=`): each configuration is skipped with the
 * emulator's whole report, the .tile line and column, the thread and block and the address (the reason was
 * cut at 180 bytes, inside "by thread (4,0,0)", which read as "by thread (4,)"). */
Test(cli, tune_file_skip_reason_is_whole, .init = json_setup, .fini = json_teardown, .timeout = 120) {
    char dir[160], src[256], cmd[2600];
    snprintf(dir, sizeof dir, "%.*s", (int)(strlen(cache_env) - strlen("TILE_CACHE_DIR=") - 6), cache_env + strlen("TILE_CACHE_DIR="));
    snprintf(src, sizeof src, "%s/oob.tile", dir);
    FILE *f = fopen(src, "w");
    cr_assert(f);
    fputs("@config(BLOCK=64, num_warps=1)\n"
          "kernel scale(x: *f32, out: *f32, n: i32, const BLOCK: i32 = 64) {\n"
          "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
          "    let v = load(x + offs, offs < n, 0.0);\n"
          "    store(out + offs, v * 2.0, offs <= n);\n"
          "}\n",
          f);
    fclose(f);
    /* n = 100 f32 in 400-byte buffers (--elems 50 of 8 bytes): out[100] is element 36 of block 1,
     * which thread 4 holds (32 threads, two elements each) */
    snprintf(cmd, sizeof cmd, "%s '%s' tune '%s' --kernel scale --grid 'cdiv(n, BLOCK)' --arg n=100 --elems 50 --device emu --warmup 0 --reps 1 2>&1",
             cache_env, TILE_CLI, src);
    cr_assert_eq(shell(cmd, buf, sizeof buf), 3, "%s", buf);
    cr_expect(strstr(buf, "(skipped: launch of 'scale': emu: memcheck: invalid __global__ write of size 4 bytes"), "%s", buf);
    cr_expect(strstr(buf, "oob.tile:5:5 in kernel 'scale'"), "%s", buf);
    cr_expect(strstr(buf, "by thread (4,0,0) in block (1,0,0)"), "%s", buf);
    cr_expect(strstr(buf, "0 bytes after the end of the 400-byte allocation"), "%s", buf);
    /* --json: the skipped configuration, then a last object saying nothing was stored and why (there was none,
     * stdout ended after the configurations), exit 3 all the same */
    snprintf(cmd, sizeof cmd, "%s '%s' tune '%s' --kernel scale --grid 'cdiv(n, BLOCK)' --arg n=100 --elems 50 --device emu --warmup 0 --reps 1 --json 2>/dev/null",
             cache_env, TILE_CLI, src);
    cr_assert_eq(shell(cmd, buf, sizeof buf), 3, "%s", buf);
    char *last = strstr(buf, "{\"stored\":false,\"kernel\":\"scale\",\"bucket\":\"any\",\"reason\":\"no configuration ran");
    cr_expect(last && strstr(buf, "\"status\":\"skipped\"") < last, "%s", buf);
    cr_expect_eq(json_lines(buf), 2, "the skipped configuration and the last object: %s", buf);
    /* --timeout bounds a configuration's warm-up and timed runs together (it was read during the warm-up only,
     * so a million timed runs of a configuration whose warm-up fits ran them all): skipped as timed out */
    f = fopen(src, "w");
    cr_assert(f);
    fputs("@config(BLOCK=64, num_warps=1)\n"
          "kernel scale(x: *f32, out: *f32, n: i32, const BLOCK: i32 = 64) {\n"
          "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
          "    store(out + offs, load(x + offs, offs < n, 0.0) * 2.0, offs < n);\n"
          "}\n",
          f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s '%s' tune '%s' --kernel scale --grid 'cdiv(n, BLOCK)' --arg n=100 --elems 50 --device emu --warmup 0 "
             "--reps 1000000 --timeout 0.3 2>&1", cache_env, TILE_CLI, src);
    cr_assert_eq(shell(cmd, buf, sizeof buf), 3, "%s", buf);
    cr_expect(strstr(buf, "(skipped: time-out: its warm-up and timed runs took over --timeout 0.3 s)"), "%s", buf);
    /* a timed run that fails skips its configuration as a failed warm-up does (its status was dropped: the warm-up
     * passed, so the configuration was timed, reported and stored): here the warm-up leaves 7.0 in out, which sends
     * the first timed run's store n elements past it */
    f = fopen(src, "w");
    cr_assert(f);
    fputs("@config(BLOCK=64, num_warps=1)\n"
          "kernel scale(x: *f32, out: *f32, n: i32, const BLOCK: i32 = 64) {\n"
          "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
          "    let again = load(out + offs, offs < n, 0.0) == 7.0;\n"
          "    store(out + offs + where(again, n, 0), 7.0, offs < n);\n"
          "}\n",
          f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s '%s' tune '%s' --kernel scale --grid 'cdiv(n, BLOCK)' --arg n=100 --elems 50 --device emu --warmup 0 "
             "--reps 3 2>&1", cache_env, TILE_CLI, src);
    cr_assert_eq(shell(cmd, buf, sizeof buf), 3, "%s", buf);
    cr_expect(strstr(buf, "(skipped: launch of 'scale': emu: memcheck: invalid __global__ write of size 4 bytes"), "%s", buf);
    cr_expect(strstr(buf, "oob.tile:5:5 in kernel 'scale'"), "%s", buf);
}

static const char tuned_kernel[] = "@config(BLOCK=128)\n@config(BLOCK=256)\n@tune_key(n)\n"
                                   "kernel add(x: *f32, y: *f32, out: *f32, n: i32, const BLOCK: i32 = 1024) {\n"
                                   "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
                                   "    let mask = offs < n;\n"
                                   "    store(out + offs, load(x + offs, mask, 0.0) + load(y + offs, mask, 0.0), mask);\n}\n";

Test(cli, json_outputs, .init = json_setup, .fini = json_teardown, .timeout = 240) {
    cr_expect_eq(run_env("cache stats --json", buf, sizeof buf), 0);
    cr_expect_eq(json_lines(buf), 1, "%s", buf);
    cr_expect(strstr(buf, "\"entries\":0"), "%s", buf);

    cr_expect_eq(run_env("run gemm --json --m 40 --n 33 --k 20 --device emu", buf, sizeof buf), 0, "%s", buf);
    cr_expect_eq(json_lines(buf), 1, "not one JSON object: %s", buf);
    cr_expect(strstr(buf, "\"command\":\"gemm\"") && strstr(buf, "\"ok\":true"), "%s", buf);

    cr_expect_eq(run_env("cache list --json", buf, sizeof buf), 0);
    cr_expect_geq(json_lines(buf), 1, "%s", buf);
    cr_expect(strstr(buf, "\"kernels\":\"gemm_f16_f32\"") && strstr(buf, "\"arch\":\"sm_80\"") && strstr(buf, "\"specialize\":\"sak=1 sbn=1\""),
              "%s", buf);
    cr_expect_eq(run_env("cache list", buf, sizeof buf), 0);
    cr_expect(strstr(buf, "KEY") && strstr(buf, "ARCH") && strstr(buf, "DEFINES | SPECIALIZE") && strstr(buf, "LAST USE"), "%s", buf);

    char path[200];
    /* a source whose name has a newline and a tab: one row of the table each, the characters escaped (the
     * newline broke the row in two); --json has the name exactly */
    snprintf(path, sizeof path, "%.*s/odd\nna\tme.tile", (int)(strlen(cache_env) - strlen("TILE_CACHE_DIR=") - 6),
             cache_env + strlen("TILE_CACHE_DIR="));
    FILE *odd = fopen(path, "w");
    cr_assert(odd);
    fputs("kernel odd(x: *f32) { store(x, 1.0); }\n", odd);
    fclose(odd);
    char oddcmd[400];
    snprintf(oddcmd, sizeof oddcmd, "compile '%s' -o /dev/null", path);
    cr_expect_eq(run_env(oddcmd, buf, sizeof buf), 0);
    cr_expect_eq(run_env("cache list", buf, sizeof buf), 0);
    cr_expect(strstr(buf, "/odd\\nna\\tme.tile\n"), "%s", buf);
    cr_expect(!strstr(buf, "\nna\tme.tile"), "a row broken in two: %s", buf);
    cr_expect_eq(run_env("cache list --json", buf, sizeof buf), 0);
    cr_expect(strstr(buf, "/odd\\nna\\tme.tile\""), "%s", buf);
    remove(path);

    snprintf(path, sizeof path, "%.*s/k.tile", (int)(strlen(cache_env) - strlen("TILE_CACHE_DIR=") - 6), cache_env + strlen("TILE_CACHE_DIR="));
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(tuned_kernel, f);
    fclose(f);
    char args[512];
    /* without a grid: exit 2, nothing timed or stored */
    snprintf(args, sizeof args, "tune %s --kernel add --arg n=1000 --reps 1 --warmup 0 --device emu --json", path);
    cr_expect_eq(run_env(args, buf, sizeof buf), 2, "%s", buf);
    cr_expect_eq(buf[0], 0, "stdout: %s", buf);
    cr_expect_eq(run_env("cache stats --json", buf, sizeof buf), 0);
    cr_expect(strstr(buf, "\"tuning_records\":0"), "%s", buf);
    /* a grid that cannot be evaluated: exit 2 before anything is timed, the reason and its column named; with a
     * misspelled --arg, that is named first (it was the grid's unknown name, which the --arg was meant to be) */
    snprintf(args, sizeof args, "tune %s --kernel add --arg n=1000 --grid 'cdiv(q, BLOCK)' --reps 1 --warmup 0 --device emu", path);
    cr_expect_eq(run(args, buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "column 6: unknown name 'q'") && !strstr(buf, "tuning add"), "%s", buf);
    snprintf(args, sizeof args, "tune %s --kernel add --arg m=1000 --grid 'cdiv(n, BLOCK)' --reps 1 --warmup 0 --device emu", path);
    cr_expect_eq(run(args, buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--arg m: kernel 'add' has no run-time scalar parameter m (its scalars: n)") && !strstr(buf, "unknown name"),
              "%s", buf);
    snprintf(args, sizeof args, "tune %s --kernel add --arg n=1000 --grid 'n / (BLOCK - BLOCK)' --device emu", path);
    cr_expect_eq(run(args, buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "division by zero"), "%s", buf);
    /* nesting is bounded (the evaluator recurses: a deep one overflowed the stack), numbers fit in 64 bits
     * (strtoll's saturated value was taken), cdiv is the ceiling without overflow or rounding up a negative
     * quotient's truncation: cdiv(0-4, 2) is -2, so the grid is 0 */
    char deep[160] = "";
    for (int i = 0; i < 65; i++) strcat(deep, "(");
    strcat(deep, "4");
    for (int i = 0; i < 65; i++) strcat(deep, ")");
    snprintf(args, sizeof args, "tune %s --kernel add --arg n=1000 --grid '%s' --device emu", path, deep);
    cr_expect_eq(run(args, buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "column 65: parentheses nested more than 64 deep"), "%s", buf);
    snprintf(args, sizeof args, "tune %s --kernel add --arg n=1000 --grid '18446744073709551617' --device emu", path);
    cr_expect_eq(run(args, buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "column 1: the number does not fit in 64 bits"), "%s", buf);
    snprintf(args, sizeof args, "tune %s --kernel add --arg n=1000 --grid 'cdiv(9223372036854775807, 2)' --device emu", path);
    cr_expect_eq(run(args, buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "the grid's x is 4611686018427387904"), "%s", buf);
    snprintf(args, sizeof args, "tune %s --kernel add --arg n=1000 --grid 'cdiv(0 - 4, 2) + 2' --device emu", path);
    cr_expect_eq(run(args, buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "the grid's x is 0"), "%s", buf);
    /* y and z are at most 65535 (a launch's limit): a usage error before anything is timed (each config was skipped, exit 3) */
    snprintf(args, sizeof args, "tune %s --kernel add --arg n=1000 --grid '1, 65536' --device emu", path);
    cr_expect_eq(run(args, buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "the grid's y is 65536: x is 1 to 2^31-1, y and z 1 to 65535") && !strstr(buf, "skipped"), "%s", buf);
    /* an empty grid is no grid (it ran on a default one); a float --arg is a number for a float parameter only */
    snprintf(args, sizeof args, "tune %s --kernel add --arg n=1000 --grid ' ' --device emu", path);
    cr_expect_eq(run(args, buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--grid is empty"), "%s", buf);
    snprintf(args, sizeof args, "tune %s --kernel add --arg n=1000.5 --grid 'cdiv(1000, BLOCK)' --reps 1 --warmup 0 --device emu", path);
    cr_expect_eq(run(args, buf, sizeof buf), 2, "%s", buf); /* refused before timing (every configuration was skipped: 3) */
    cr_expect(strstr(buf, "--arg n=1000.5 is not an integer, but the scalar is i32"), "%s", buf);
    /* the value as written, and why (it said "--arg n=16 is not an integer" of 0x10, strtod's 16, and "n=1e+20 is not an
     * integer" of a 20-digit one) */
    snprintf(args, sizeof args, "tune %s --kernel add --arg n=0x10 --grid '1' --device emu", path);
    cr_expect_eq(run(args, buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--arg n=0x10 is not a decimal integer (no hexadecimal), but the scalar is i32"), "%s", buf);
    snprintf(args, sizeof args, "tune %s --kernel add --arg n=99999999999999999999 --grid '1' --device emu", path);
    cr_expect_eq(run(args, buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--arg n=99999999999999999999 is past the 64-bit integers, and the scalar is i32"), "%s", buf);
    snprintf(args, sizeof args, "tune %s --kernel add --arg n=banana --grid '1' --device emu", path);
    cr_expect_eq(run(args, buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--arg n expects a number, got 'banana'"), "%s", buf);
    /* --arg binds by name: a name the kernel has no scalar of, a scalar left out, one given twice: exit 2 */
    snprintf(args, sizeof args, "tune %s --kernel add --arg m=1000 --grid 'cdiv(m, BLOCK)' --reps 1 --warmup 0 --device emu", path);
    cr_expect_eq(run(args, buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--arg m: kernel 'add' has no run-time scalar parameter m (its scalars: n)"), "%s", buf);
    snprintf(args, sizeof args, "tune %s --kernel add --grid '4' --reps 1 --warmup 0 --device emu", path);
    cr_expect_eq(run(args, buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "kernel 'add' takes the run-time scalar n: give it with --arg n=VALUE"), "%s", buf);
    snprintf(args, sizeof args, "tune %s --kernel add --arg n=1 --arg n=2 --grid '4' --reps 1 --warmup 0 --device emu", path);
    cr_expect_eq(run(args, buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--arg n is given twice"), "%s", buf);
    /* a value out of the scalar's type's range: exit 2 (it ran truncated and stored the key of the whole value) */
    snprintf(args, sizeof args, "tune %s --kernel add --arg n=4294967297 --grid 'cdiv(n, BLOCK)' --reps 1 --warmup 0 --device emu", path);
    cr_expect_eq(run(args, buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--arg n=4294967297 is out of range for its type i32 (-2147483648 to 2147483647)"), "%s", buf);
    /* by name, not in order: n=1000 reaches n though m comes first on the command line (the kernel asserts it) */
    char path2[220];
    snprintf(path2, sizeof path2, "%s2.tile", path);
    f = fopen(path2, "w");
    cr_assert(f);
    fputs("@config(BLOCK=128)\n@tune_key(n)\nkernel two(x: *f32, m: i32, n: i32, const BLOCK: i32 = 128) {\n"
          "    device_assert(n == 1000 && m == 7, \"the scalars went in order\");\n"
          "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n    store(x + offs, 1.0, offs < n);\n}\n", f);
    fclose(f);
    snprintf(args, sizeof args, "tune %s --kernel two --arg n=1000 --arg m=7 --grid 'cdiv(n, BLOCK)' --reps 1 --warmup 0 --device emu --json",
             path2);
    setenv("TILE_DEBUG", "assert", 1);
    cr_expect_eq(run_env(args, buf, sizeof buf), 0, "%s", buf);
    unsetenv("TILE_DEBUG");
    cr_expect(strstr(buf, "\"stored\":true") && strstr(buf, "n=1024"), "%s", buf);
    remove(path2);
    snprintf(args, sizeof args, "tune %s --kernel add --arg n=1000 --grid 'cdiv(n, BLOCK)' --reps 1 --warmup 0 --device emu --json", path);
    cr_expect_eq(run_env(args, buf, sizeof buf), 0, "%s", buf);
    cr_expect_eq(json_lines(buf), 3, "two configurations and the record: %s", buf);
    cr_expect(strstr(buf, "\"stored\":true") && strstr(buf, "\"pct_of_best\":100"), "%s", buf);
    cr_expect_eq(run_env(args, buf, sizeof buf), 0, "%s", buf);
    cr_expect_eq(run_env("cache stats --json", buf, sizeof buf), 0);
    /* the key keeps its fastest configurations: one, or both when the two tunings crowned different ones (and
     * kernel two's one record) */
    cr_expect(strstr(buf, "\"tuning_records\":2") || strstr(buf, "\"tuning_records\":3"), "tuning twice keeps a record per configuration: %s", buf);
    cr_expect_eq(run("cache stats --dir /tmp/a --dir /tmp/b", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "tile: --dir is given twice ('/tmp/a', then '/tmp/b')"), "%s", buf);
    /* cache clear --json: one object (it printed the text line) */
    cr_expect_eq(run_env("cache clear --tuning --json", buf, sizeof buf), 0, "%s", buf);
    cr_expect(json_lines(buf) == 1 && strstr(buf, "\"tuning\":true}\n") && !strstr(buf, "cleared"), "%s", buf);
    cr_expect_eq(run_env("cache stats --json", buf, sizeof buf), 0);
    cr_expect(strstr(buf, "\"entries\":0,") && strstr(buf, "\"tuning_records\":0}"), "%s", buf);
    /* a cache folder that is a file: the tuning runs, the record cannot be stored: exit 3 (a failure: an output that
     * cannot be written) saying so (it said nothing) */
    char blocked[600];
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "TILE_CACHE_DIR='%s' '%s' tune '%s' --kernel add --arg n=1000 --grid 'cdiv(n, BLOCK)' --reps 1 --warmup 0 "
             "--device emu 2>&1", path, TILE_CLI, path);
    cr_expect_eq(shell(cmd, buf, sizeof buf), 3, "%s", buf);
    snprintf(blocked, sizeof blocked, "was not stored: the tuning database %s/tune.db refused it: tile_tune_record: cannot use the cache folder %s: Not a directory", path, path);
    cr_expect(strstr(buf, blocked), "%s", buf);
    /* --json: the two configurations, then "stored": false with the same reason (stdout had no last object) */
    snprintf(cmd, sizeof cmd, "TILE_CACHE_DIR='%s' '%s' tune '%s' --kernel add --arg n=1000 --grid 'cdiv(n, BLOCK)' --reps 1 --warmup 0 "
             "--device emu --json 2>/dev/null", path, TILE_CLI, path);
    cr_expect_eq(shell(cmd, buf, sizeof buf), 3, "%s", buf);
    char last[900];
    snprintf(last, sizeof last, "\"stored\":false,\"kernel\":\"add\",\"bucket\":\"n=1024\",\"reason\":\"the tuning database %s/tune.db refused it: tile_tune_record: cannot use the cache folder %s: Not a directory\"", path, path);
    cr_expect(strstr(buf, last), "%s", buf);
    cr_expect_eq(json_lines(buf), 3, "two configurations and the last object: %s", buf);
}

/* tile run norm / act: checked on the emulator, one JSON object each */
Test(cli, json_norm_and_act, .init = json_setup, .fini = json_teardown, .timeout = 240) {
    static const char *const cmds[] = {
        "run norm --json --tokens 5 --hidden 1000 --dtype f16 --device emu --reps 1",
        "run norm --json --tokens 3 --hidden 300 --quant i8 --no-residual --device emu --reps 1",
        "run norm --json --tokens 4 --hidden 700 --layernorm --quant f8e4m3 --device emu --reps 1",
        "run act --json --tokens 5 --d 500 --act gelu-tanh --quant f8e4m3 --device emu --reps 1",
        "run norm --json --tokens 3 --hidden 1000 --quant f8e4m3 --group 128 --device emu --reps 1",
        "run act --json --tokens 2 --d 300 --quant i8 --group 64 --device emu --reps 1",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        cr_expect_eq(run_env(cmds[i], buf, sizeof buf), 0, "%s: %s", cmds[i], buf);
        cr_expect_eq(json_lines(buf), 1, "not one JSON object: %s", buf);
        cr_expect(strstr(buf, "\"ok\":true"), "%s", buf);
    }
}

/* tile run sample / spec: --help, strict options, and checked on the emulator, one JSON object each */
Test(cli, json_sample_and_spec, .init = json_setup, .fini = json_teardown, .timeout = 240) {
    cr_expect_eq(run_stdout("run sample --help", buf, sizeof buf), 0);
    cr_expect(strstr(buf, "usage: tile run sample") && strstr(buf, "--top-p"), "%s", buf);
    cr_expect_eq(run_stdout("run spec -h", buf, sizeof buf), 0);
    cr_expect(strstr(buf, "usage: tile run spec") && strstr(buf, "--drafts"), "%s", buf);
    cr_expect_eq(run("run sample --top-p 1.5", buf, sizeof buf), 2, "%s", buf);
    cr_expect(strstr(buf, "--top-p"), "%s", buf);
    cr_expect_eq(run("run spec --drafts 0", buf, sizeof buf), 2, "%s", buf);
    static const char *const cmds[] = {
        "run sample --json --batch 5 --vocab 1000 --top-k 20 --top-p 0.8 --min-p 0.01 --probs --device emu --reps 1",
        "run sample --json --batch 3 --vocab 300 --dtype bf16 --temperature 0 --device emu --reps 1",
        "run spec --json --batch 6 --drafts 3 --vocab 500 --device emu --reps 1",
        "run spec --json --batch 4 --drafts 2 --vocab 77 --greedy --device emu --reps 1",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        cr_expect_eq(run_env(cmds[i], buf, sizeof buf), 0, "%s: %s", cmds[i], buf);
        cr_expect_eq(json_lines(buf), 1, "not one JSON object: %s", buf);
        cr_expect(strstr(buf, "\"ok\":true") && strstr(buf, "\"mismatches\":0"), "%s", buf);
    }
}

/* ---- the benchmarks' --json (build/bench/<name>, smallest settings): every
 * line of stdout is one JSON object naming its benchmark, and each prints its
 * rows (headers go to stderr) ---- */
static int run_bench(const char *name, const char *args, char *out, size_t outsz) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s/bench/%s' %s 2>/dev/null", TILE_SOURCE_DIR, TILE_BINARY_DIR, name, args);
    return shell(cmd, out, outsz);
}

static int count_str(const char *s, const char *what) {
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

static bool have_ptxas(void);

Test(cli, bench_json, .timeout = 120) {
    static const struct {
        const char *name, *args;
        int rows; /* lines expected; 0: at least one */
    } benches[] = {
        {"launch_overhead", "--json --iters 2000", 2},
        {"emu_speed", "--json --threads 4096", 6},
        {"cache", "--json --reps 1000", 4},
        {"compile_time", "--json --reps 1 kernels/add.tile", 2}, /* the kernel and the closing note */
        {"gemm_report", "--json --quick --no-triton", 0},
        {"gemm_gpu", "--json --device emu --sizes 64 --samples 1", 2},
        {"attention_gpu", "--json --device emu --prefill 1:32:1:64:1 --decode 1:40:2:1:64:16 --samples 1 --check-rows 4", 3},
        {"moe_gpu", "--json --device emu --models t:4:2:32:32 --tokens 2 --samples 1 --check-tokens 1", 3},
    };
    for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++) {
        cr_expect_eq(run_bench(benches[i].name, benches[i].args, buf, sizeof buf), 0, "%s %s: %s", benches[i].name, benches[i].args, buf);
        char want[64];
        snprintf(want, sizeof want, "{\"bench\":\"%s\"", benches[i].name);
        int objects = count_str(buf, want); /* before json_lines, which cuts the text at each line */
        int n = json_lines(buf);
        cr_expect_gt(n, 0, "%s: not JSON Lines: %s", benches[i].name, buf);
        cr_expect_eq(objects, n, "%s: every object begins with its bench: %s", benches[i].name, buf);
        if (benches[i].rows) cr_expect_eq(n, benches[i].rows, "%s: %d rows, %d expected", benches[i].name, n, benches[i].rows);
    }
    /* emu_speed --reps: each row the medians of that many launches, and says so */
    cr_expect_eq(run_bench("emu_speed", "--json --threads 4096 --only vadd --reps 3", buf, sizeof buf), 0, "%s", buf);
    cr_expect_eq(count_str(buf, "\"reps\":3"), 2, "%s", buf);
    cr_expect_neq(run_bench("emu_speed", "--reps 0", buf, sizeof buf), 0, "%s", buf);
    /* compile_time also gives the CPU time of the compile (this process, every thread) and of its ptxas child */
    cr_expect_eq(run_bench("compile_time", "--json --reps 1 kernels/add.tile", buf, sizeof buf), 0, "%s", buf);
    const char *cpu = strstr(buf, "\"src_to_ptx_cpu_ms\":");
    cr_expect(cpu && atof(cpu + strlen("\"src_to_ptx_cpu_ms\":")) > 0, "%s", buf);
    if (have_ptxas()) {
        const char *px = strstr(buf, "\"ptxas_cpu_ms\":");
        cr_expect(px && atof(px + strlen("\"ptxas_cpu_ms\":")) > 0, "%s", buf);
        cr_expect(strstr(buf, "\"cpu_ratio\":") && strstr(buf, "\"faster_than_ptxas_cpu\":"), "%s", buf);
    }
}

/* compile_time with no files measures every shipped .tile file, those of folders below kernels/' families
 * too (sampling/, examples/ were missed by a fixed list of folders): --list names them, one a line. */
Test(cli, compile_time_lists_every_kernel_file) {
    cr_expect_eq(run_bench("compile_time", "--list", buf, sizeof buf), 0, "%s", buf);
    char want[64];
    static char found[1 << 14];
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && find kernels -name '*.tile' | sort", TILE_SOURCE_DIR);
    cr_assert_eq(shell(cmd, found, sizeof found), 0);
    int n = 0;
    char *save = NULL;
    for (char *line = strtok_r(found, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
        snprintf(want, sizeof want, "/%s\n", line);
        cr_expect(strstr(buf, want), "compile_time --list lacks %s:\n%s", line, buf);
    }
    cr_expect_geq(n, 21, "kernels/ holds %d .tile files", n);
    cr_expect_eq(count_str(buf, ".tile\n"), n, "compile_time --list names %d files, kernels/ holds %d:\n%s", count_str(buf, ".tile\n"), n, buf);
    cr_expect(strstr(buf, "/kernels/sampling/sampling.tile\n") && strstr(buf, "/kernels/examples/grouped_gemm.tile\n"), "%s", buf);
}

/* tile_gemm says why it takes the scalar configuration (TILE_DEBUG=launch), and `tile run gemm` shows it:
 * m = 40 is not a multiple of 16, so A and B are read element by element (kernels/gemm/gemm.c). */
Test(cli, gemm_scalar_configuration_logged, .timeout = 240) {
    char dir[] = "/tmp/tile-cli-gemm-XXXXXX";
    cr_assert(mkdtemp(dir));
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "TILE_CACHE_DIR=%s TILE_DEBUG=launch '%s' run gemm --m 40 --n 32 --k 32 --reps 1 --device emu 2>&1", dir, TILE_CLI);
    cr_expect_eq(shell(cmd, buf, sizeof buf), 0, "%s", buf);
    cr_expect(strstr(buf, "tile_gemm: gemm_f16_f32: m = 40 is not a multiple of 16, so A and B are read element by element: "
                          "the scalar configuration BM=128 BN=128 BK=32 num_warps=8"),
              "%s", buf);
    cr_expect(strstr(buf, "config      BM=128 BN=128 BK=32 num_warps=8 num_stages=3"), "%s", buf);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* `tile run gemm` on f8 operands (values rounded to e4m3/e5m2 on the host, checked against float64) and with
 * --config (split-K through tile_gemm_with_config, on the emulated Hopper), and --config's usage errors. */
Test(cli, gemm_f8_and_config, .init = json_setup, .fini = json_teardown, .timeout = 240) {
    cr_expect_eq(run_env("run gemm --json --dtype f8e4m3 --m 40 --n 48 --k 70 --reps 1 --device emu", buf, sizeof buf), 0, "%s", buf);
    cr_expect(strstr(buf, "\"kernel\":\"gemm_e4m3_f32\"") && strstr(buf, "\"ok\":true"), "%s", buf);
    cr_expect_eq(run_env("run gemm --json --dtype f8e5m2 --m 33 --n 32 --k 64 --reps 1 --device emu:sm_89", buf, sizeof buf), 0, "%s", buf);
    cr_expect(strstr(buf, "\"kernel\":\"gemm_e5m2_f32\"") && strstr(buf, "\"ok\":true"), "%s", buf);
    cr_expect_eq(run_env("run gemm --json --m 70 --n 64 --k 200 --reps 1 --device emu:sm_90a --config 'BM=64,BN=64 BK=32 num_warps=4 SPLIT_K=3'",
                         buf, sizeof buf), 0, "%s", buf);
    cr_expect(strstr(buf, "SPLIT_K=3") && strstr(buf, "\"grid\":[2,3,1]") && strstr(buf, "\"ok\":true"), "%s", buf);
    static const char *const bad[][2] = {{"run gemm --config 'BM'", "'BM' is not NAME=VALUE"},
                                         {"run gemm --config ' , '", "no NAME=VALUE given"},
                                         {"run gemm --config '1x=2'", "'1x=2' is not NAME=VALUE"},
                                         {"tune gemm --m 16 --n 16 --k 16 --dtype f16 --config BM=64", "--config is for 'tile run gemm'"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(run(bad[i][0], buf, sizeof buf), 2, "%s: %s", bad[i][0], buf);
        cr_expect(strstr(buf, bad[i][1]), "%s: %s", bad[i][0], buf);
    }
}

static bool have_ptxas(void) {
    if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0) return true;
    return system("command -v ptxas >/dev/null 2>&1") == 0;
}

/* `tile compile --emit cubin -v` reports ptxas's registers and, for a kernel that spills, says so and what its C API
 * launches instead (tools/cmd_compile.c launchers[]); for a kernel no launcher takes, what might fit.
 * The shipped kernels' const defaults spill nowhere (test_kernels ptxas_sm*): gemm on 4 warps does
 * (128 x 128 with every element's address live); a 32768-element tile held across a reduction does. */
Test(cli, compile_verbose_says_why_a_configuration_spills, .timeout = 120) {
    if (!have_ptxas()) cr_skip("ptxas not found: tile compile -v's registers and spill notes NOT checked");
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/gemm/gemm.tile --kernel gemm_f16_f32 --emit cubin -o /dev/null -v --no-cache",
                     buf, sizeof buf), 0, "%s", buf);
    cr_expect(strstr(buf, "registers=") && strstr(buf, "spill_bytes=0"), "the const defaults: %s", buf);
    cr_expect(!strstr(buf, "spills "), "the const defaults do not spill: %s", buf);
    cr_expect_eq(run("compile " TILE_SOURCE_DIR "/kernels/gemm/gemm.tile --kernel gemm_f16_f32 -D num_warps=4 --emit cubin -o /dev/null -v "
                     "--no-cache", buf, sizeof buf), 0, "%s", buf);
    const char *line = strstr(buf, "  gemm_f16_f32: spills ");
    cr_assert(line, "no spill note: %s", buf);
    int bytes = atoi(line + strlen("  gemm_f16_f32: spills "));
    char want[64];
    snprintf(want, sizeof want, "spill_bytes=%d\n", bytes);
    cr_expect(bytes > 0 && strstr(buf, want), "the note's %d B is ptxas's: %s", bytes, buf);
    cr_expect(strstr(line, "tile_gemm does not launch this configuration; it takes the kernel's first @config"), "%s", buf);

    char dir[] = "/tmp/tile-cli-spill-XXXXXX", path[64], args[256];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/spilly.tile", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs("kernel spilly(x: *f32, y: *f32) {\n    let r = arange(0, 32768);\n    let v = load(x + r);\n"
          "    store(y + r, v * v + sum(v, axis=0));\n}\n", f);
    fclose(f);
    snprintf(args, sizeof args, "compile %s --emit cubin -o /dev/null -v --no-cache", path);
    cr_expect_eq(run(args, buf, sizeof buf), 0, "%s", buf);
    cr_expect(strstr(buf, "  spilly: spills ") &&
                  strstr(buf, "at the const defaults, nothing specialized: more registers than a thread has"), "%s", buf);
    cr_expect(!strstr(buf, "does not launch"), "no C API launches this file: %s", buf);
    remove(path);
    rmdir(dir);
}

/* An argument may be 128 KiB long: a -D name or value, or any option's value, that long is cut in the message to
 * its first 120 and last 40 bytes around "...(N bytes cut)..." (a 100000-byte -D name gave a 200 KB message). */
Test(cli, long_names_are_cut_in_messages) {
    enum { L = 100000 };
    char *a = malloc(L + 1);
    cr_assert(a);
    memset(a, 'A', L);
    a[L] = 0;
    a[0] = 'X', a[L - 1] = 'Z'; /* the ends are what stays */
    cr_assert_eq(setenv("TILE_TEST_LONG", a, 1), 0);
    char head[128], tail[64]; /* the word kept may begin or end with a quote */
    snprintf(head, sizeof head, "X%.110s", a + 1);
    snprintf(tail, sizeof tail, "%.30sZ", a + 1);
    const char *cases[][2] = {
        {"-D \"$TILE_TEST_LONG=3\"", ": no kernel of add.tile has a const parameter X"},
        {"-D \"$TILE_TEST_LONG=3\" -D \"$TILE_TEST_LONG=4\"", " is given twice ('X"},
        {"-D \"BLOCK=\\\"$TILE_TEST_LONG\\\"\"", "<-D BLOCK>:1:1: error: 'BLOCK' is i32, but its value is the string \"X"},
        {"--emit \"$TILE_TEST_LONG\"", "tile: unknown --emit 'X"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char args[256];
        snprintf(args, sizeof args, "compile " TILE_SOURCE_DIR "/kernels/add.tile %s -o /dev/null", cases[i][0]);
        cr_expect_eq(run(args, buf, sizeof buf), 2, "%s: %.3000s", cases[i][0], buf);
        cr_expect(strstr(buf, cases[i][1]), "%s: %.3000s", cases[i][0], buf);
        const char *h = strstr(buf, head), *cut = h ? strstr(h, " bytes cut)...") : NULL;
        cr_expect(h && cut && strstr(cut, tail), "%s: %.3000s", cases[i][0], buf);
        cr_expect_lt(strlen(buf), 2000, "%s: %zu bytes", cases[i][0], strlen(buf));
    }
    unsetenv("TILE_TEST_LONG");
    free(a);
}

/* ---- the row check of `tile run norm` and `tile run act` (tools/run_check.c), given made-up outputs ---- */
enum { ROW_MAX = 300 };
static double row_x[2 * ROW_MAX], row_y[ROW_MAX];
static unsigned char row_out[2 * ROW_MAX];
static float row_scale[1];

/* One row of n of act(gate) * up (silu, gates in [-4, 4), ups in [-1, 1)); row_y its float64 values. */
static void row_draw(int n) {
    for (int i = 0; i < n; i++) row_x[i] = 4 * urand(), row_x[n + i] = urand(), row_y[i] = ref_gated(TILE_GATED_SILU, row_x[i], row_x[n + i]);
}

/* out as a correct kernel makes it: y in f32 off by a few ulps (2^-22 relative), divided by the f32 scale,
 * rounded once to the nearest output value (ties to even). */
static double row_check(const CheckRows *c) {
    double amax = 0;
    for (int i = 0; i < c->n; i++) amax = fmax(amax, fabs(row_y[i]));
    row_scale[0] = (float)ref_quant_scale(amax, c->quant == TILE_I8 ? 127 : 448);
    for (int i = 0; i < c->n; i++) {
        float a = (float)(row_y[i] * (1 + 0x1p-22 * urand()));
        if (c->quant == TILE_I8) ((int8_t *)row_out)[i] = (int8_t)fmax(-127, fmin(127, rintf(a / row_scale[0])));
        else if (c->quant == TILE_F8E4M3) row_out[i] = d_to_f8(a / row_scale[0], 0);
        else ((uint16_t *)row_out)[i] = c->dtype == TILE_F16 ? f32_to_f16(a) : f32_to_bf16(a);
    }
    return check_gated(c, TILE_GATED_SILU, row_x, row_out, row_scale);
}

/* The measure is the error past the output's own rounding, as a fraction of the f32 arithmetic's allowance
 * (1e-4 |y| + 2e-6): a correctly rounded output, i8 codes of y / scale at a half included, uses almost none of
 * it (the measure that counted the half step reached 0.9999 of its tolerance there), and one step more fails. */
Test(cli, row_check_measures_past_the_rounding) {
    seed_rng();
    const tile_dtype quants[] = {TILE_I8, TILE_F8E4M3, TILE_F32, TILE_F32};
    const int sizes[] = {1, 7, 300};
    for (int rep = 0; rep < 3; rep++)
        for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
            for (int q = 0; q < 4; q++) {
                CheckRows c = {.tokens = 1, .n = sizes[z], .dtype = q == 3 ? TILE_F16 : TILE_BF16, .quant = quants[q]};
                row_draw(c.n);
                double e = row_check(&c);
                cr_expect(e <= 0.05, "quant %d dtype %d n %d: %g of the allowance (seed %llu)", q, c.dtype, c.n, e, (unsigned long long)seed);
            }
    /* i8 at a half step: y / scale = 1.5 and -0.5 (to a double's rounding), either neighbour exact */
    CheckRows c = {.tokens = 1, .n = 3, .dtype = TILE_BF16, .quant = TILE_I8};
    row_draw(3);
    row_x[0] = 4, row_x[3] = 1, row_y[0] = ref_gated(TILE_GATED_SILU, 4, 1); /* the row's amax, so the scale stays */
    double s0 = row_check(&c), s = row_scale[0];
    cr_expect(s0 <= 0.05, "%g (seed %llu)", s0, (unsigned long long)seed);
    const double half[2] = {1.5, -0.5};
    for (int j = 0; j < 2; j++) {
        int i = 1 + j;
        row_x[i] = 2, row_x[3 + i] = half[j] * s / ref_gated(TILE_GATED_SILU, 2, 1), row_y[i] = ref_gated(TILE_GATED_SILU, 2, row_x[3 + i]);
        for (int code = (int)floor(half[j]); code <= (int)ceil(half[j]); code++) {
            ((int8_t *)row_out)[i] = (int8_t)code;
            double e = check_gated(&c, TILE_GATED_SILU, row_x, row_out, row_scale);
            cr_expect(e <= 0.05, "y / scale %g as %d: %g of the allowance (seed %llu)", half[j], code, e, (unsigned long long)seed);
        }
        ((int8_t *)row_out)[i] = (int8_t)(half[j] > 0 ? ceil(half[j]) + 1 : floor(half[j]) - 1); /* a step past */
        double e = check_gated(&c, TILE_GATED_SILU, row_x, row_out, row_scale);
        cr_expect(e > 1, "y / scale %g as %d: %g passes (seed %llu)", half[j], ((int8_t *)row_out)[i], e, (unsigned long long)seed);
        ((int8_t *)row_out)[i] = (int8_t)rint(half[j]);
    }
    /* bf16, unquantized: y = 1.9915 lies in [1, 2), whose half ulp 2^-8 bounds the rounding (not 2^-8 |y|, twice
     * that near 2): its nearest bf16 is 1.9921875; the other neighbour, 1.984375, is 0.0071 off, within
     * 2^-8 |y| + 1e-4 |y| but not within the half ulp and the allowance */
    c = (CheckRows){.tokens = 1, .n = 1, .dtype = TILE_BF16, .quant = TILE_F32};
    row_x[0] = 2, row_x[1] = 1.9915 / ref_gated(TILE_GATED_SILU, 2, 1), row_y[0] = ref_gated(TILE_GATED_SILU, 2, row_x[1]);
    ((uint16_t *)row_out)[0] = f32_to_bf16((float)row_y[0]);
    cr_expect_eq(bf16_to_d(((uint16_t *)row_out)[0]), 1.9921875);
    cr_expect(check_gated(&c, TILE_GATED_SILU, row_x, row_out, NULL) <= 0.05);
    ((uint16_t *)row_out)[0]--;
    double e = check_gated(&c, TILE_GATED_SILU, row_x, row_out, NULL);
    cr_expect(e > 1, "bf16 %g for %g: %g passes", bf16_to_d(((uint16_t *)row_out)[0]), row_y[0], e);
    ((uint16_t *)row_out)[0] = 0x7fc0; /* NaN */
    e = check_gated(&c, TILE_GATED_SILU, row_x, row_out, NULL);
    cr_expect(!(e <= 1), "NaN passes: %g", e);
}

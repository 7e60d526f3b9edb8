/* test_cli_exit.c - the `tile` command's one exit-status table (README.md, CLI_EXIT_HELP in tools/cli.h),
 * checked for each command on the same failures: an unknown option, a bad option value, no input, an input
 * that cannot be read, an error in the source, an output that cannot be written, and success; and -o's file
 * written whole: a write that fails, or a process killed halfway, leaves the file as it was. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];   /* this test's folder: inputs, outputs and the cache */
static char out[1 << 16];

static void setup(void) {
    snprintf(dir, sizeof dir, "/tmp/tile-test-exit-XXXXXX");
    cr_assert(mkdtemp(dir));
}

static void teardown(void) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "chmod -R u+w '%s'; rm -rf '%s'", dir, dir);
    system(cmd);
}

/* `sh -c SCRIPT` in the test's folder, with its own cache and `$T` the command; stdout and stderr in out.
 * The exit status, or 128 + the signal that ended it. */
__attribute__((format(printf, 1, 2))) static int sh(const char *fmt, ...) {
    char script[2048], cmd[3072];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(script, sizeof script, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "cd '%s' && T='%s' TILE_CACHE_DIR='%s/cache' sh -c '%s' 2>&1", dir, TILE_CLI, dir, script);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void put(const char *name, const char *text) {
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

static const char good[] = "@config(BLOCK=32)\n@config(BLOCK=64)\n"
                           "kernel add(x: *f32, out: *f32, n: i32, const BLOCK: i32 = 64) {\n"
                           "    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n"
                           "    store(out + offs, load(x + offs, offs < n, 0.0) + 1.0, offs < n);\n}\n";
static const char bad[] = "kernel add(x: *f32) {\n    let y = undefined_name + 1;\n}\n";

#define EXPECT_EXIT(want, ...)                                                                                      \
    do {                                                                                                            \
        int got_ = sh(__VA_ARGS__);                                                                                 \
        cr_expect_eq(got_, want, "exit %d, not %d: %s\n%s", got_, want, #__VA_ARGS__, out);                       \
    } while (0)

TestSuite(cli_exit, .init = setup, .fini = teardown, .timeout = 240);

Test(cli_exit, compile) {
    put("good.tile", good), put("bad.tile", bad);
    EXPECT_EXIT(2, "$T compile good.tile --bogus");
    EXPECT_EXIT(2, "$T compile good.tile --num-sms 0");
    EXPECT_EXIT(2, "$T compile");
    EXPECT_EXIT(2, "$T compile missing.tile");
    EXPECT_EXIT(2, "mkdir -p adir && $T compile adir"); /* a folder: opens, does not read */
    EXPECT_EXIT(1, "$T compile bad.tile -o bad.ptx");
    cr_expect_neq(access("bad.ptx", F_OK), 0, "a failed compile wrote its output");
    EXPECT_EXIT(3, "$T compile good.tile -o no/such/folder.ptx");
    cr_expect(strstr(out, "cannot write no/such/folder.ptx"), "%s", out);
    EXPECT_EXIT(3, "mkdir -p d.ptx && $T compile good.tile -o d.ptx");
    EXPECT_EXIT(3, "$T compile good.tile > /dev/full");
    const char *said = strstr(out, "cannot write standard output");
    cr_expect(said && !strstr(said + 1, "cannot write standard output"), "said once: %s", out);
    EXPECT_EXIT(3, "$T compile good.tile -o /dev/full");
    EXPECT_EXIT(0, "$T compile good.tile -o good.ptx && grep -q \".visible .entry add\" good.ptx");
    EXPECT_EXIT(0, "$T compile good.tile -o /dev/null");
    /* a single-valued option given twice with two values: which was meant? (the last won, silently) */
    EXPECT_EXIT(2, "$T compile good.tile -o a.ptx -o b.ptx");
    cr_expect(strstr(out, "-o is given twice ('a.ptx', then 'b.ptx')"), "%s", out);
    EXPECT_EXIT(2, "$T compile good.tile --kernel add --kernel other");
    EXPECT_EXIT(2, "$T aot good.tile --kernel add -o a -o b");
    EXPECT_EXIT(2, "$T tune good.tile --kernel add --kernel x --grid 1");
    EXPECT_EXIT(0, "$T compile good.tile --kernel add --kernel add -o /dev/null");
    /* every single-valued option, not only the file, kernel and grid ones: refused by the option parser, before
     * the value is checked or anything compiles; the repeatable ones (-D, -I, --specialize) stay repeatable */
    EXPECT_EXIT(2, "$T compile good.tile -D BLOCK=32 -D X=1 -I . -I .. --specialize n=16 --specialize x=16 --emit tir --emit ptx");
    cr_expect(strstr(out, "tile: --emit is given twice ('tir', then 'ptx')"), "%s", out);
    EXPECT_EXIT(2, "$T compile good.tile --arch sm_80 --arch=sm_90a");
    cr_expect(strstr(out, "tile: --arch is given twice ('sm_80', then 'sm_90a')"), "%s", out);
    EXPECT_EXIT(2, "$T compile good.tile --num-sms 8 --num-sms 9");
    /* one number in two spellings is one value where the option is a number; not where it is a name (two files) */
    EXPECT_EXIT(0, "$T compile good.tile --num-sms 8 --num-sms 08 --num-sms +8 -o /dev/null");
    EXPECT_EXIT(2, "$T compile good.tile --num-sms 8 --num-sms 8.0");
    cr_expect(strstr(out, "tile: --num-sms expects an integer, got '8.0'"), "%s", out);
    EXPECT_EXIT(2, "$T compile good.tile -o 064 -o 64");
    cr_expect(strstr(out, "tile: -o is given twice ('064', then '64')"), "%s", out);
    EXPECT_EXIT(2, "$T compile good.tile -o 064 -o 64 --emit ptx");
    cr_expect(strstr(out, "tile: -o is given twice ('064', then '64')"), "%s", out);
    EXPECT_EXIT(1, "test -e 064 || test -e 64"); /* a refused command wrote no output */
    EXPECT_EXIT(2, "$T aot good.tile --kernel add --kernel sub --variant n=16 --variant n=1 --prefix p_ --prefix q_ -o k");
    cr_expect(strstr(out, "tile: --prefix is given twice ('p_', then 'q_')"), "%s", out);
    EXPECT_EXIT(2, "$T tune good.tile --arg n=1 --arg x=2 --kernel add --grid 1 --elems 64 --elems 65");
    cr_expect(strstr(out, "tile: --elems is given twice ('64', then '65')"), "%s", out);
    EXPECT_EXIT(2, "$T run gemm --m 64 --n 32 --m 128");
    cr_expect(strstr(out, "tile: --m is given twice ('64', then '128')"), "%s", out);
    EXPECT_EXIT(2, "$T tune gemm --dtype f16 --dtype bf16");
    cr_expect(strstr(out, "tile: --dtype is given twice ('f16', then 'bf16')"), "%s", out);
    static const char *const runs[] = {"run gemm", "run attention", "run decode", "run moe", "run norm", "run act", "run rope",
                                       "run layer", "run sample", "run spec", "tune gemm", "tune good.tile --kernel add --grid 1"};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        EXPECT_EXIT(2, "$T %s --device emu --json --json --device cuda", runs[i]);
        cr_expect(strstr(out, "tile: --device is given twice ('emu', then 'cuda')"), "%s: %s", runs[i], out);
    }
    /* the same value again (a flag twice, a repeated default) is accepted */
    EXPECT_EXIT(0, "$T compile good.tile --emit tir --emit tir --no-cache --no-cache --arch sm_80 --arch sm_80 -o /dev/null");
    /* the input as the output (a slip for good.ptx) replaced the source with its PTX; an empty -o said
     * "cannot write : No such file or directory" */
    EXPECT_EXIT(2, "ln -f good.tile same.tile && $T compile good.tile -o ./same.tile");
    cr_expect(strstr(out, "-o ./same.tile is the input file"), "%s", out);
    EXPECT_EXIT(0, "grep -q \"^kernel add\" good.tile");
    EXPECT_EXIT(2, "$T compile good.tile -o \"\"");
    cr_expect(strstr(out, "-o '' names no file"), "%s", out);
}

/* A pipe or character device named as the input (`tile compile <(generate)`, /dev/stdin on a pipe, a FIFO,
 * /dev/null) is read as `-` is, named by its path: it exited 2, "not a regular file", where compilers take it */
Test(cli_exit, compile_reads_a_pipe_by_name) {
    put("good.tile", good), put("bad.tile", bad), put("twice.tile", "fn twice(x) { return x * 2.0; }\n");
    put("imp.tile", "import \"twice.tile\";\nkernel k(x: *f32) { store(x, twice(load(x))); }\n");
    EXPECT_EXIT(0, "cat good.tile | $T compile /dev/stdin --no-cache --no-line-info > a.ptx && "
                   "$T compile good.tile --no-cache --no-line-info > b.ptx && cmp a.ptx b.ptx && grep -q \"entry add\" a.ptx");
    EXPECT_EXIT(1, "cat bad.tile | $T compile /dev/stdin");
    cr_expect(strstr(out, "/dev/stdin:2:13: error: unknown name"), "%s", out);
    EXPECT_EXIT(0, "cat imp.tile | $T compile --no-cache /dev/stdin --emit tir | grep -q \"kernel @k\""); /* the working folder */
    EXPECT_EXIT(0, "mkfifo p && (timeout 60 cat good.tile > p 2>/dev/null &) && $T compile p --kernel add -o p.ptx && grep -q \"entry add\" p.ptx");
    EXPECT_EXIT(1, "$T compile /dev/null");
    cr_expect(strstr(out, "/dev/null contains no kernel"), "%s", out);
    /* a source file's limit, 16 MiB, holds for streams too (up to 32 MiB were compiled): one byte past it is
     * refused as an unreadable input, and exactly 16 MiB, the kernel after blanks, compiles */
    EXPECT_EXIT(2, "(head -c 16777216 /dev/zero | tr \"\\0\" \" \"; cat good.tile) | $T compile - --emit tir -o /dev/null");
    cr_expect(strstr(out, "<stdin>: error: the source is longer than 16 MiB"), "%s", out);
    EXPECT_EXIT(0, "(head -c $((16777216 - $(wc -c < good.tile))) /dev/zero | tr \"\\0\" \" \"; cat good.tile) | "
                   "$T compile /dev/stdin --emit tir -o /dev/null");
}

Test(cli_exit, aot) {
    put("good.tile", good), put("bad.tile", bad);
    EXPECT_EXIT(2, "$T aot good.tile --kernel add -o k --bogus");
    EXPECT_EXIT(2, "$T aot good.tile --kernel add -o k --arch sm_1");
    EXPECT_EXIT(2, "$T aot --kernel add -o k");
    EXPECT_EXIT(2, "$T aot missing.tile --kernel add -o k");
    cr_expect(strstr(out, "missing.tile"), "%s", out);
    EXPECT_EXIT(1, "$T aot bad.tile --kernel add -o k");
    /* --kernel naming no kernel is the command line's error, as in tile compile (it exited 1, a source error) */
    EXPECT_EXIT(2, "$T aot good.tile --kernel add --kernel nope -o k");
    cr_expect(strstr(out, "no kernel named 'nope'"), "%s", out);
    EXPECT_EXIT(2, "$T compile good.tile --kernel nope");
    /* exited 2 (TILE_ERROR_IO read as a usage error) while `tile compile -o` exited 3 */
    EXPECT_EXIT(3, "$T aot good.tile --kernel add -o no/such/k");
    EXPECT_EXIT(0, "$T aot good.tile --kernel add -o k && test -s k.c && test -s k.h");
    EXPECT_EXIT(2, "mkdir -p adir && $T aot adir --kernel add -o k");
    /* a pipe is no input file the library reads (it exited as if the output could not be written) */
    EXPECT_EXIT(2, "cat good.tile | $T aot /dev/stdin --kernel add -o piped");
    cr_expect(strstr(out, "cannot read '/dev/stdin': not a regular file"), "%s", out);
    /* '-' is standard input to tile compile; tile aot says it takes none (it said "cannot read '-'") */
    EXPECT_EXIT(2, "cat good.tile | $T aot - --kernel add -o k");
    cr_expect(strstr(out, "tile aot reads FILE.tile by its path: '-' (standard input) is not supported"), "%s", out);
}

Test(cli_exit, tune) {
    put("good.tile", good), put("bad.tile", bad);
    EXPECT_EXIT(2, "$T tune good.tile --kernel add --grid 1 --bogus");
    EXPECT_EXIT(2, "$T tune good.tile --kernel add --grid 1 --reps 0");
    EXPECT_EXIT(2, "$T tune --kernel add --grid 1");
    EXPECT_EXIT(2, "$T tune missing.tile --kernel add --grid 1");
    cr_expect(strstr(out, "tile: cannot read 'missing.tile'"), "%s", out);
    /* the file first: it asked for --kernel (then --grid) of a file that does not exist */
    EXPECT_EXIT(2, "$T tune missing.tile");
    cr_expect(strstr(out, "tile: cannot read 'missing.tile': No such file or directory") && !strstr(out, "--kernel"), "%s", out);
    EXPECT_EXIT(2, "$T tune good.tile");
    cr_expect(strstr(out, "needs --kernel NAME"), "%s", out);
    EXPECT_EXIT(1, "$T tune bad.tile --kernel add --grid 1");
    cr_expect(strstr(out, "bad.tile:2:13: error: unknown name 'undefined_name'"), "%s", out); /* not 'has no @config' */
    EXPECT_EXIT(2, "$T tune good.tile --kernel add --grid 1 --arg \"n =64\" --device emu");
    cr_expect(strstr(out, "tile: --arg 'n ': NAME must be an identifier"), "%s", out);
    /* the command line's errors, found before anything is timed: they exited 1 (a source error) and 3 (every
     * configuration skipped, "no configuration ran") */
    EXPECT_EXIT(2, "$T tune good.tile --kernel nope --grid 1 --device emu");
    cr_expect(strstr(out, "no kernel named 'nope'"), "%s", out);
    EXPECT_EXIT(2, "$T tune good.tile --kernel add --grid 1 --arg n=1.5 --device emu");
    cr_expect(strstr(out, "--arg n=1.5 is not an integer, but the scalar is i32"), "%s", out);
    /* the tuning database cannot be written: its folder is a file */
    EXPECT_EXIT(3, "echo x > notdir && TILE_CACHE_DIR=notdir $T tune good.tile --kernel add --grid 1 --arg n=64 --reps 1 --warmup 0 "
                   "--device emu --elems 64");
    EXPECT_EXIT(0, "$T tune good.tile --kernel add --grid 1 --arg n=64 --reps 1 --warmup 0 --device emu --elems 64");
}

Test(cli_exit, run_cache_and_standard_output) {
    EXPECT_EXIT(2, "$T run gemm --bogus");
    EXPECT_EXIT(2, "$T run gemm --m -3");
    EXPECT_EXIT(2, "$T run gemm extra");
    EXPECT_EXIT(2, "$T run nosuch");
    EXPECT_EXIT(2, "$T run norm --device gpu");
    /* a --dtype/--out-dtype pair no kernel takes: exited 3 after the library's refusal (tune gemm said 2) */
    EXPECT_EXIT(2, "$T run gemm --device emu --m 9 --n 7 --k 5 --out-dtype i32");
    cr_expect(strstr(out, "no gemm kernel for --dtype f16 with --out-dtype i32 (pairs: ") && strstr(out, "i8->i32"), "%s", out);
    EXPECT_EXIT(2, "$T tune gemm --device emu --dtype i8 --out-dtype f32");
    /* option values the attention kernels do not take (the library's TILE_ERROR_UNSUPPORTED): usage errors like
     * gemm's pair above (they exited 3, after allocating the inputs); a driver too old for the PTX stays 3 */
    EXPECT_EXIT(2, "$T run decode --device emu --batch 1 --context 16 --heads 64 --heads-kv 1 --head-dim 16 --tokens 2");
    cr_expect(strstr(out, "--heads / --heads-kv * --tokens is 128 query rows per KV head: decode takes at most 64"), "%s", out);
    cr_expect(strstr(out, "run decode --help"), "%s", out);
    EXPECT_EXIT(2, "$T run attention --device emu --batch 2 --seq 1 --heads 40000 --head-dim 16");
    cr_expect(strstr(out, "--batch * --heads is 80000: at most 65535 (the launch grid)"), "%s", out);
    /* tune's options given to run, and run's to tune: refused alike (run gemm took --warmup and --timeout, silently) */
    EXPECT_EXIT(2, "$T run gemm --device emu --warmup 3");
    cr_expect(strstr(out, "--warmup is for 'tile tune gemm'"), "%s", out);
    EXPECT_EXIT(2, "$T run gemm --device emu --timeout 5");
    EXPECT_EXIT(2, "$T tune gemm --device emu --config BM=64");
    EXPECT_EXIT(0, "$T run norm --device emu --tokens 3 --hidden 40 --reps 1");
    /* what a command prints lost to a full disk: exited 0 */
    EXPECT_EXIT(3, "$T run norm --device emu --tokens 3 --hidden 40 --reps 1 > /dev/full");
    cr_expect(strstr(out, "cannot write standard output"), "%s", out);
    EXPECT_EXIT(3, "$T --version > /dev/full");
    EXPECT_EXIT(3, "$T cache stats > /dev/full");
    EXPECT_EXIT(2, "$T cache stats --bogus");
    EXPECT_EXIT(2, "$T cache list extra");
    EXPECT_EXIT(3, "echo x > f && $T cache stats --dir f");
    EXPECT_EXIT(0, "$T cache stats && $T cache list --json && $T cache clear");
    /* --dir '' is the default folder, named (it printed "cache " and an empty name) */
    EXPECT_EXIT(0, "$T cache stats --dir \"\"");
    char want[128];
    snprintf(want, sizeof want, "cache %s/cache\n", dir);
    cr_expect(strstr(out, want), "%s", out);
    /* a device that cannot be opened: the status names TILE_DEVICE's value (it said 'default') */
    EXPECT_EXIT(3, "TILE_DEVICE=cuda:99 $T run norm --tokens 2 --hidden 16");
    cr_expect(strstr(out, "cannot open device 'cuda:99' (TILE_DEVICE)"), "%s", out);
    /* ... and the library's reason (it printed only "no such device"): no driver here, or no GPU 99 */
    cr_expect(strstr(out, "cannot load the CUDA driver") || strstr(out, "device 99 requested"), "%s", out);
    /* every --help ends with the one table */
    static const char *const helps[] = {"compile", "aot", "tune", "tune gemm", "tune k.tile", "run gemm", "run attention", "run decode",
                                        "run moe", "run norm", "run act", "run rope", "run sample", "run spec", "run layer",
                                        "cache stats", "cache list", "cache clear"};
    for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++) {
        EXPECT_EXIT(0, "$T %s --help", helps[i]);
        cr_expect(strstr(out, "exit status: 0 ok, 1 error in the source, 2 usage error") && strstr(out, "an output that cannot be written)"),
                  "tile %s --help: %s", helps[i], out);
    }
}

/* A file size limit stops the write halfway: ignored, the write fails (EFBIG); not ignored, SIGXFSZ kills
 * the process mid-write.  Either way the old file stays whole (it was truncated to the limit: fopen "wb"). */
Test(cli_exit, output_written_whole) {
    put("good.tile", good);
    put("old.ptx", "the old file\n");
    EXPECT_EXIT(3, "trap \"\" XFSZ; ulimit -f 1 && $T compile good.tile --no-cache -o old.ptx");
    cr_expect(strstr(out, "cannot write old.ptx"), "%s", out);
    EXPECT_EXIT(0, "test \"$(cat old.ptx)\" = \"the old file\"");
    EXPECT_EXIT(0, "test -z \"$(ls | grep tmp-)\""); /* the file beside it removed */
    int st = sh("ulimit -f 1 && exec $T compile good.tile --no-cache -o old.ptx");
    cr_expect_neq(st, 0, "%s", out);
    EXPECT_EXIT(0, "test \"$(cat old.ptx)\" = \"the old file\"");
    EXPECT_EXIT(0, "test -z \"$(ls | grep tmp-)\""); /* the signal removed the file beside it (it was left behind) */
    /* written whole: replaced, the mode kept; through a symbolic link the target is replaced and the link kept */
    EXPECT_EXIT(0, "chmod 600 old.ptx && $T compile good.tile -o old.ptx && grep -q \".entry add\" old.ptx && "
                   "test \"$(stat -c %%a old.ptx)\" = 600");
    EXPECT_EXIT(0, "echo x > target.ptx && ln -s target.ptx link.ptx && $T compile good.tile -o link.ptx && test -L link.ptx && "
                   "grep -q \".entry add\" target.ptx");
    EXPECT_EXIT(0, "ln -s made.ptx dangling.ptx && $T compile good.tile -o dangling.ptx && test -L dangling.ptx && "
                   "grep -q \".entry add\" made.ptx");
    EXPECT_EXIT(0, "$T compile good.tile -o \"with space.ptx\" && grep -q \".entry add\" \"with space.ptx\"");
    /* tile aot's OUT.c and OUT.h too (a symbolic link was replaced by a regular file) */
    EXPECT_EXIT(0, "echo x > real.c && ln -s real.c ka.c && $T aot good.tile --kernel add -o ka && test -L ka.c && "
                   "grep -q add_aot_unload real.c && test -f ka.h && test ! -L ka.h");
    /* -o /dev/stdout appends where standard output appends (reopened "wb", the log was truncated) */
    EXPECT_EXIT(0, "echo first line > log && $T compile good.tile -o /dev/stdout >> log && head -1 log | grep -q \"first line\" && "
                   "grep -q \".entry add\" log");
}
